"""``numbagrad.accelerator``: PyTorch's device-neutral ``torch.accelerator`` API.

numbagrad's one accelerator is CUDA (:mod:`numbagrad.cuda`, through numba-cuda). Where CUDA
is available (:func:`numbagrad.cuda.is_available`, the simulator included) these functions
act on the current CUDA device; where it is not, they answer as ``torch.accelerator`` does in
PyTorch's CPU-only build: :func:`current_accelerator` is None, :func:`is_available` False,
:func:`device_count` 0, and the calls that need a device raise RuntimeError ("Cannot access
accelerator device when none is available.").

The idiom of the PyTorch examples picks the device with it:

>>> import numbagrad as torch
>>> device = (
...     torch.accelerator.current_accelerator().type
...     if torch.accelerator.is_available()
...     else "cpu"
... )
>>> torch.ones(2, device=device).device.type in ("cpu", "cuda")
True

Not here yet (``tests/data/missing_names.json`` lists them): ``Graph``, ``set_stream``,
``get_device_capability``, ``get_memory_info``, ``memory_stats``, ``max_memory_reserved``,
``reset_accumulated_memory_stats`` and ``empty_host_cache``.
"""

from __future__ import annotations

import warnings

from numbagrad import cuda as _cuda
from numbagrad._device import device as _device

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "synchronize",
]

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def _accelerator():
    """``device(type='cuda')`` where CUDA is available, else None (a CPU-only build)."""
    return _device("cuda") if _cuda.is_available() else None


def _require():
    if _accelerator() is None:
        raise RuntimeError(_NONE_AVAILABLE)


def _device_index(device, optional):
    """The device index ``device`` names (PyTorch's ``torch.accelerator._utils``): an int as
    it is; a string or device must be of the accelerator's type; None (or a device without
    an index) is the current index where ``optional``."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        acc = _accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    elif device is not None:
        raise TypeError(
            f"expected a device index (int), a device string or a numbagrad.device, got "
            f"{type(device).__name__}"
        )
    if index is None:
        if not optional:
            raise ValueError(
                f"Expected a torch.device with a specified index or an integer, but got:{device}"
            )
        return current_device_index()
    return index


def is_available() -> bool:
    """Whether the accelerator (CUDA) can be used now: numba-cuda is installed and sees a
    GPU, or runs as the simulator.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.accelerator.is_available() == numbagrad.cuda.is_available()
    True
    """
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, ``device(type='cuda')``, or None where there is none.

    Parameters
    ----------
    check_available : bool, default False
        Also check :func:`is_available` at run time, as PyTorch's. numbagrad decides which
        accelerator it has at run time (CUDA where it is available), so both answers
        agree; a PyTorch CUDA build on a machine without a GPU answers ``device('cuda')``
        unless this is True.

    Returns
    -------
    numbagrad.device or None
        A device without an index (:func:`current_device_index` gives the index in use).

    Examples
    --------
    >>> import numbagrad
    >>> acc = numbagrad.accelerator.current_accelerator()
    >>> acc is None or acc.type == "cuda"
    True
    """
    acc = _accelerator()
    if acc is not None and (not check_available or is_available()):
        return acc
    return None


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return 0 if _accelerator() is None else _cuda.device_count()


def current_device_index() -> int:
    """The index of the current accelerator device.

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    _require()
    return _cuda.current_device()


def current_device_idx() -> int:
    """Deprecated alias of :func:`current_device_index` (a FutureWarning, as PyTorch)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    """Make ``device`` (an index, ``'cuda:N'`` or a ``numbagrad.device`` with an index) the
    current accelerator device; a negative index does nothing, as in PyTorch.

    Raises
    ------
    RuntimeError
        Without an accelerator ("Accelerator expected" for a device or string).
    ValueError
        For a device of another type, or one without an index.
    """
    index = _device_index(device, optional=False)
    if index < 0:
        return
    _require()
    _cuda.set_device(index)


def set_device_idx(device, /) -> None:
    """Deprecated alias of :func:`set_device_index` (a FutureWarning, as PyTorch)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """A context in which ``device`` (an index; None changes nothing) is the current
    accelerator device; the previous one is current again on exit.

    Raises
    ------
    RuntimeError
        On entry, for an index, without an accelerator.

    Examples
    --------
    >>> import numbagrad
    >>> with numbagrad.accelerator.device_index(None):  # no device switching
    ...     pass
    """

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _require()
            self.prev_idx = _cuda.current_device()
            if self.idx != self.prev_idx:
                _cuda.set_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None and self.prev_idx >= 0 and self.idx != self.prev_idx:
            _cuda.set_device(self.prev_idx)


def synchronize(device=None, /) -> None:
    """Wait until all work queued on the accelerator device ``device`` (the current one by
    default) has finished.

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    index = _device_index(device, optional=True)
    _require()
    with device_index(index):
        _cuda.synchronize()


def current_stream(device=None, /):
    """The stream numbagrad launches its kernels on for ``device`` (the current one by
    default): a :class:`numbagrad.cuda.Stream`.

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    index = _device_index(device, optional=True)
    _require()
    with device_index(index):
        return _cuda.current_stream()


def empty_cache() -> None:
    """Free the accelerator memory cached for reuse (:func:`numbagrad.cuda.empty_cache`).

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    _require()
    _cuda.empty_cache()


def memory_allocated(device_index=None, /) -> int:
    """Bytes of accelerator memory in use by tensors (:func:`numbagrad.cuda.memory_allocated`).

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    index = _device_index(device_index, optional=True)
    _require()
    return _cuda.memory_allocated(index)


def max_memory_allocated(device_index=None, /) -> int:
    """The peak of :func:`memory_allocated` (:func:`numbagrad.cuda.max_memory_allocated`).

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    index = _device_index(device_index, optional=True)
    _require()
    return _cuda.max_memory_allocated(index)


def memory_reserved(device_index=None, /) -> int:
    """Bytes of accelerator memory the caching allocator holds
    (:func:`numbagrad.cuda.memory_reserved`).

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    index = _device_index(device_index, optional=True)
    _require()
    return _cuda.memory_reserved(index)


def reset_peak_memory_stats(device_index=None, /) -> None:
    """Make :func:`max_memory_allocated` start again from the memory in use now.

    Raises
    ------
    RuntimeError
        Without an accelerator.
    """
    index = _device_index(device_index, optional=True)
    _require()
    _cuda.reset_peak_memory_stats(index)
