"""Devices. ``cpu`` is the only device until the CUDA backend lands."""

from __future__ import annotations

__all__ = ["device"]


class device:
    """Where a tensor's storage lives (``numbagrad.device('cpu')``).

    Parameters
    ----------
    type : str or device
        ``'cpu'`` (``'cpu:0'`` is accepted too).

    Raises
    ------
    RuntimeError
        For a device this build of numbagrad cannot use.
    """

    __slots__ = ("index", "type")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        name, _, idx = str(type).partition(":")
        if name != "cpu":
            raise RuntimeError(
                f"device {type!r} is not available: numbagrad currently runs on 'cpu' only"
            )
        self.type = name
        self.index = int(idx) if idx else index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"

    def __str__(self) -> str:
        return self.type

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)


CPU = device("cpu")


def _cuda_unavailable(what):
    return RuntimeError(f"{what}: CUDA is not available (this build of numbagrad runs on "
                        "'cpu' only; numbagrad.cuda.is_available() is False)")


_DEFAULT_DEVICE = [CPU]


def set_default_device(device_):
    """Set the device new tensors are created on (``torch.set_default_device``).

    Only ``'cpu'`` (or None, which resets it) is accepted until a CUDA backend exists.

    Raises
    ------
    RuntimeError
        For ``'cuda'`` (CUDA is not available) or any other device.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.set_default_device("cpu")
    >>> numbagrad.get_default_device()
    device(type='cpu')
    """
    if device_ is None:
        _DEFAULT_DEVICE[0] = CPU
        return
    name = device_.type if isinstance(device_, device) else str(device_)
    if name.partition(":")[0] == "cuda":
        raise _cuda_unavailable(f"set_default_device({device_!r})")
    _DEFAULT_DEVICE[0] = device(name)


def get_default_device():
    """The device new tensors are created on (``device(type='cpu')``)."""
    return _DEFAULT_DEVICE[0]
