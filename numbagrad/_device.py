"""Devices: ``cpu`` and ``cuda[:N]`` (``numbagrad.device``).

NOTE [CUDA tensors]
A CUDA tensor is a Tensor whose ``_data`` is a ``kernels.cuda.array.CudaArray`` (a strided
view of a flat device array, NOTE [CUDA storage]) instead of a NumPy array; everything else
(storage list, version counter, autograd fields) is the same. Ops pick the CUDA backend from
the array type (``kernels.backend_of``), so no op branches on the device. Creation functions
from data build their values on the host and copy them once (``to_cuda``); fills (``zeros``,
``ones``, ``full``, ``empty`` and their ``*_like``) are filled on the device, and random
tensors drawn there (NOTE [CUDA random numbers]); ``.to(device)`` is a
differentiable copy (``ops.inplace.ToDevice``, whose kernel is ``copy_array``).
``numba.cuda`` is imported only when a CUDA tensor is first made (NOTE [CUDA driver]).
"""

from __future__ import annotations

import numpy as np

from numbagrad.kernels import backend
from numbagrad.kernels.cuda import _driver

__all__ = ["device"]


class device:
    """Where a tensor's storage lives (``numbagrad.device('cpu')``, ``device('cuda:0')``).

    Parameters
    ----------
    type : str or device
        ``'cpu'`` (``'cpu:0'`` is accepted too), ``'cuda'`` or ``'cuda:N'``, or ``'meta'``
        (tensors with a shape and no data, NOTE [Meta tensors] in ``kernels/meta.py``).
    index : int, optional
        The device index (``device('cuda', 0)``).

    Raises
    ------
    RuntimeError
        For an unknown device type or a malformed index. A CUDA device can be named where
        CUDA is not available (as with ``torch.device``); making a tensor on it raises
        RuntimeError saying what is missing (numba-cuda, or a GPU) and how to install it.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.device("cpu")
    device(type='cpu')
    >>> str(numbagrad.device("cpu"))
    'cpu'
    >>> numbagrad.device("cuda:0")  # a value, with or without a GPU
    device(type='cuda', index=0)
    """

    __slots__ = ("index", "type")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if isinstance(type, int) and not isinstance(type, bool):  # torch.device(0) is cuda:0
            if not _driver.is_available():  # an accelerator's index: PyTorch's CPU build
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        name, _, idx = str(type).partition(":")
        if name not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta device type at start of device string: {type}"
            )
        if idx and index is not None:
            raise RuntimeError(
                f"type (string) must not include an index because index was "
                f"passed explicitly: {type}"
            )
        if idx:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and int(index) < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        # NOTE [CUDA tensors]: as torch.device, a CUDA device can be named where CUDA is
        # unavailable (scripts build ``device('cuda' if ... else 'cpu')`` up front); putting a
        # tensor there fails (``_driver.require``), and so do the places that only validate a
        # device without making a tensor (``load``'s map_location, ``set_default_device``)
        self.type = name
        self.index = None if index is None else int(index)

    def __repr__(self) -> str:
        if self.type == "cuda" and self.index is not None:
            return f"device(type='cuda', index={self.index})"
        return f"device(type='{self.type}')"

    def __str__(self) -> str:
        if self.type == "cuda" and self.index is not None:
            return f"cuda:{self.index}"
        return self.type

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        if not isinstance(other, device) or other.type != self.type:
            return False
        return self.type == "cpu" or other.index == self.index

    def __hash__(self) -> int:
        return hash((self.type, self.index if self.type == "cuda" else None))


CPU = device("cpu")
META = device("meta")  # tensors with a shape and no data (NOTE [Meta tensors])
_CUDA_DEVICES: dict = {}


def cuda_device(index: int = 0) -> device:
    """The (cached) ``device(type='cuda', index=index)`` that CUDA tensors report."""
    d = _CUDA_DEVICES.get(index)
    if d is None:
        d = _CUDA_DEVICES[index] = device("cuda", index)
    return d


def resolve(dev) -> device:
    """``dev`` as a device, with a CUDA device's index filled in (the current device)."""
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda" and d.index is None:
        return cuda_device(_driver.current_device())
    return d


def to_cuda(arr, dev):
    """A NumPy array copied to the CUDA device ``dev`` (NOTE [CUDA tensors])."""
    if np.asarray(arr).dtype.kind == "c":  # (docs/gpu.rst)
        raise NotImplementedError(
            "complex tensors on CUDA: numbagrad's CUDA kernels are real-valued; keep "
            "complex64/complex128 tensors (and numbagrad.fft) on the CPU"
        )
    _driver.require()
    return on_device(np.asarray(arr), dev)


def on_device(arr, dev):
    """The host array ``arr`` as an array of device ``dev`` (its backend's ``from_host``:
    the CPU's keeps it; a device's copies it once, to the current device, NOTE [CUDA
    tensors]). The factories' one way onto a device (``_creation.py``)."""
    d = resolve(dev)
    return backend(d.type).from_host(arr, d.index)


def empty_on(shape, dtype, dev):
    """An uninitialised array of device ``dev`` (its backend's ``empty_on``)."""
    d = resolve(dev)
    return backend(d.type).empty_on(shape, dtype, d.index)


def is_device_array(obj) -> bool:
    """Whether ``obj`` is another library's device array (``as_tensor`` wraps it)."""
    return _driver.is_device_array(obj)


def copy_array(data, dev):
    """``data`` (a NumPy or CUDA array) copied to device ``dev`` (one counted copy)."""
    import numpy as np

    dev = resolve(dev)
    if dev.type == "cpu":
        return data.to_host()
    if type(data) is np.ndarray:
        return to_cuda(data, dev)
    if data.device_index != dev.index:
        raise RuntimeError(
            f"copying between CUDA devices (cuda:{data.device_index} -> {dev}) "
            "is not implemented yet; go through .cpu()"
        )
    return data.copy()


def from_device_array(obj, dtype=None, device=None):
    """A ``CudaArray`` sharing the memory of device array ``obj`` (``as_tensor``)."""
    if device is not None and resolve(device).type != "cuda":
        raise RuntimeError(
            "as_tensor(device array, device='cpu') would copy; call .cpu() on the result instead"
        )
    arr = backend("cuda").from_device_array(obj, _driver.current_device())
    if dtype is not None and dtype != arr.dtype:
        raise TypeError(
            f"as_tensor(device array, dtype={dtype}): the array is {arr.dtype}; a "
            "zero-copy view cannot change the dtype (call .to(dtype) after)"
        )
    return arr


def _cuda_unavailable(what):
    why = (
        "numba-cuda sees no CUDA GPU (set NUMBA_ENABLE_CUDASIM=1 for the simulator)"
        if _driver.installed()
        else "the numba-cuda package is not installed"
    )
    return RuntimeError(
        f"{what}: CUDA is not available: {why}; numbagrad.cuda.is_available() "
        'is False (install the CUDA extra with pip install "numbagrad[cuda]")'
    )


_DEFAULT_DEVICE = [CPU]


def set_default_device(device_):
    """Set the device new tensors are created on (``torch.set_default_device``).

    Parameters
    ----------
    device_ : str, device or None
        ``'cpu'``, ``'cuda'``/``'cuda:N'`` (when CUDA is available), or None to reset.

    Raises
    ------
    RuntimeError
        For ``'cuda'`` when CUDA is not available.

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
    d = device(device_)
    if d.type == "cuda":
        if not _driver.is_available():
            raise _cuda_unavailable(f"set_default_device({device_!r})")
        d = resolve(d)
    _DEFAULT_DEVICE[0] = d


def get_default_device():
    """The device new tensors are created on (``device(type='cpu')`` by default)."""
    return _DEFAULT_DEVICE[0]
