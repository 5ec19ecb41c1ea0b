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
