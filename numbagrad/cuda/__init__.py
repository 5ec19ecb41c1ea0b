"""``numbagrad.cuda``: CUDA devices, streams and zero-copy device views, through numba-cuda.

CUDA support needs the ``numba-cuda`` package (``pip install "numbagrad[cuda]"``) and a GPU;
under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` set before the first CUDA use) numba
pretends one device, which is how CI tests the CUDA path without a GPU. Without CUDA this
module answers as ``torch.cuda`` does in a CPU-only build: :func:`is_available` is False,
:func:`device_count` 0, seeding and :func:`empty_cache` do nothing, the memory statistics
read 0, and calls that need a
device (:func:`synchronize`, :func:`current_device`, :func:`get_device_name`,
:func:`initial_seed`, :func:`get_rng_state`, :func:`set_rng_state`, :func:`set_device`)
raise AssertionError saying what is missing.
``numba.cuda`` is imported on the first call that needs it, never at ``import numbagrad``.

Examples
--------
>>> import numbagrad
>>> isinstance(numbagrad.cuda.is_available(), bool)
True
"""

from __future__ import annotations

import contextlib
from typing import cast

from numbagrad._creation import _cuda_default_generator, _seed_cuda
from numbagrad._device import device as _device
from numbagrad._device import resolve as _resolve
from numbagrad.cuda._interop import as_cuda_array as _as
from numbagrad.cuda._legacy import (
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
)
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda import memory as _memory
from numbagrad.kernels.cuda.launch import STREAMS as _STREAMS

__all__ = [
    "BoolTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "Stream",
    "as_cuda_array",
    "current_device",
    "current_stream",
    "device_count",
    "empty_cache",
    "get_device_name",
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "stream",
    "synchronize",
]


def _no_cuda():
    # PyTorch's CPU build raises AssertionError (``_lazy_init``); say which part is missing
    why = (
        "numba-cuda sees no CUDA GPU (set NUMBA_ENABLE_CUDASIM=1 for the simulator)"
        if _driver.installed()
        else "the numba-cuda package is not installed"
    )
    return AssertionError(
        f"CUDA is not available: {why} (numbagrad.cuda.is_available() is "
        'False); install the CUDA extra with pip install "numbagrad[cuda]" '
        "or run on 'cpu'"
    )


def _require():
    if not _driver.is_available():
        raise _no_cuda()


def is_available() -> bool:
    """Whether CUDA tensors can be made: numba-cuda is installed and sees a GPU (or is the
    simulator)."""
    return _driver.is_available()


def is_initialized() -> bool:
    """Whether numba.cuda has been imported and sees a device."""
    return "cuda" in _driver._state and _driver.is_available()


def device_count() -> int:
    """The number of CUDA devices (0 without CUDA)."""
    return _driver.device_count()


def current_device() -> int:
    """The index of the current CUDA device.

    Raises
    ------
    AssertionError
        Without CUDA.
    """
    _require()
    return _driver.current_device()


def set_device(device) -> None:
    """Make ``device`` (an index, ``'cuda:N'`` or a ``numbagrad.device``) current.

    Raises
    ------
    AssertionError
        Without CUDA.
    """
    _require()

    if not isinstance(device, int):
        device = _device(device).index or 0
    _driver.set_device(device)


def get_device_name(device=None) -> str:
    """The name of a CUDA device (the current one by default).

    Raises
    ------
    AssertionError
        Without CUDA.
    """
    _require()
    if device is not None and not isinstance(device, int):
        device = _device(device).index
    return _driver.device_name(device)


def synchronize(device=None) -> None:
    """Wait until all work queued on the current CUDA device has finished.

    Raises
    ------
    AssertionError
        Without CUDA.
    """
    _require()
    _driver.synchronize()


# The CUDA generators (NOTE [CUDA random numbers] in numbagrad/kernels/cuda/random.py):
# one counter-based Philox generator per device, drawn from on the device. As in PyTorch,
# ``numbagrad.manual_seed`` seeds them too; the functions here seed and read only them, and
# the seeding ones do nothing where CUDA is unavailable (PyTorch ignores them there).
def _index(device) -> int:
    """The device index of ``device`` (an int, ``'cuda'``, ``'cuda:N'`` or a device)."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device

    d = _resolve(device)
    if d.type != "cuda":
        raise ValueError(f"expected a CUDA device, got {d}")
    return d.index


def _generator(device="cuda"):
    _require()
    return _cuda_default_generator(_index(device))


def manual_seed(seed: int) -> None:
    """Seed the current device's CUDA generator (the one CUDA random tensors are drawn
    from); does nothing without CUDA.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.cuda.manual_seed(0)  # reproducible CUDA draws from here on
    """
    seed = int(seed)
    if _driver.is_available():
        _generator().manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed the CUDA generators of every device (including those not used yet)."""
    _seed_cuda(int(seed) % 2**64)


def seed() -> None:
    """Seed the current device's CUDA generator from OS entropy (nothing without CUDA)."""
    if _driver.is_available():
        _generator().seed()


def seed_all() -> None:
    """Seed every device's CUDA generator with one seed from OS entropy."""
    import numpy as np

    manual_seed_all(int(cast(int, np.random.SeedSequence().entropy) % (2**63)))


def initial_seed() -> int:
    """The seed the current device's CUDA generator was last seeded with.

    Raises
    ------
    AssertionError
        Without CUDA.
    """
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    """The state of ``device``'s CUDA generator: an int64 CPU tensor of its seed and its
    Philox offset (:meth:`numbagrad.Generator.get_state`).

    Raises
    ------
    AssertionError
        Without CUDA.

    Examples
    --------
    >>> import numbagrad
    >>> if numbagrad.cuda.is_available():
    ...     state = numbagrad.cuda.get_rng_state()
    ...     a = numbagrad.rand(3, device="cuda")
    ...     numbagrad.cuda.set_rng_state(state)  # the same draws again
    ...     assert (numbagrad.rand(3, device="cuda") == a).all()
    """
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda") -> None:
    """Restore ``device``'s CUDA generator from :func:`get_rng_state`.

    Raises
    ------
    AssertionError
        Without CUDA.
    RuntimeError
        For a tensor that is not such a state.
    """
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    """The states of every device's CUDA generator (a list, one per device)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore every device's CUDA generator from :func:`get_rng_state_all`."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def __getattr__(name):
    if name == "default_generators":  # made on first use (naming a device needs CUDA)
        if not _driver.is_available():
            return ()

        return tuple(_cuda_default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'numbagrad.cuda' has no attribute {name!r}")


def _memory_stats() -> dict:
    return _memory.stats()


def empty_cache() -> None:
    """Free the device memory that numbagrad's caching allocator keeps for reuse (blocks of
    tensors that were collected); memory in use stays. Does nothing without CUDA. See
    NOTE [CUDA memory pool] in ``numbagrad/kernels/cuda/memory.py``."""
    if _driver.installed() and "cuda" in _driver._state:
        _memory.empty_cache()


def memory_allocated(device=None) -> int:
    """Bytes of device memory in blocks that tensors (or any numba device array) use now,
    counted by numbagrad's caching allocator, in its size classes (0 without CUDA, under
    the simulator, or when the allocator is off: ``NUMBAGRAD_CUDA_CACHING_ALLOCATOR=0``)."""
    return _memory_stats()["allocated"] if "cuda" in _driver._state else 0


def memory_reserved(device=None) -> int:
    """Bytes of device memory the caching allocator holds: in use plus cached (0 where
    :func:`memory_allocated` is 0)."""
    return _memory_stats()["reserved"] if "cuda" in _driver._state else 0


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` since the start or the last
    :func:`reset_peak_memory_stats`."""
    return _memory_stats()["peak_allocated"] if "cuda" in _driver._state else 0


def reset_peak_memory_stats(device=None) -> None:
    """Make :func:`max_memory_allocated` start again from the memory in use now."""
    if "cuda" in _driver._state:
        _memory.reset_peak()


class Stream:
    """A CUDA stream (a queue of kernels that run in order), wrapping a numba stream.

    Use it with :func:`stream` to launch numbagrad's kernels on it.

    Raises
    ------
    AssertionError
        Without CUDA.
    """

    def __init__(self, device=None, priority=0):
        _require()
        self._numba = _driver.new_stream()

    @classmethod
    def _wrap(cls, numba_stream):
        s = object.__new__(cls)
        s._numba = numba_stream
        return s

    def synchronize(self) -> None:
        """Wait until all work queued on this stream has finished."""
        self._numba.synchronize()

    @property
    def numba_stream(self):
        """The numba stream, to launch your own kernels on (``kernel[grid, block, s]``)."""
        return self._numba

    def __repr__(self):
        return f"<numbagrad.cuda.Stream {self._numba!r}>"


def current_stream(device=None) -> Stream:
    """The stream numbagrad's kernels are launched on now (the default stream unless inside
    a :func:`stream` block).

    Raises
    ------
    AssertionError
        Without CUDA.
    """
    _require()

    return Stream._wrap(_STREAMS[-1] if _STREAMS else _driver.default_stream())


@contextlib.contextmanager
def stream(s):
    """A context in which numbagrad launches its kernels on stream ``s`` (None: no change).

    Raises
    ------
    TypeError
        If ``s`` is not a :class:`Stream`.
    """
    if s is None:
        yield
        return
    if not isinstance(s, Stream):
        raise TypeError(f"stream() expects a numbagrad.cuda.Stream, got {type(s).__name__}")

    _STREAMS.append(s._numba)
    try:
        yield s
    finally:
        _STREAMS.pop()


def as_cuda_array(t):
    """A numba device array viewing the memory of CUDA tensor ``t`` (zero copy); see
    :func:`numbagrad.cuda._interop.as_cuda_array`. Works on a GPU and under the simulator,
    so user ``@cuda.jit`` kernels can read and write tensors in either.

    Raises
    ------
    TypeError
        For a CPU tensor.
    """
    return _as(t)
