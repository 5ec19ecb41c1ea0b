"""``numbagrad.cuda``: the CUDA surface scripts query, as PyTorch's CPU-only build answers it.

numbagrad has no CUDA backend yet, so this behaves like ``torch.cuda`` in a build without
CUDA: :func:`is_available` is False and :func:`device_count` 0; seeding
(:func:`manual_seed`, :func:`manual_seed_all`, :func:`seed`, :func:`seed_all`) and
:func:`empty_cache` silently do nothing (so ``torch.cuda.manual_seed_all(0)`` in a CPU run
keeps working); calls that need a device (:func:`synchronize`, :func:`current_device`,
:func:`get_device_name`, :func:`initial_seed`, :func:`set_device`) raise.

Examples
--------
>>> import numbagrad
>>> numbagrad.cuda.is_available(), numbagrad.cuda.device_count()
(False, 0)
"""

from __future__ import annotations

__all__ = [
    "current_device", "device_count", "empty_cache", "get_device_name", "initial_seed",
    "is_available", "is_initialized", "manual_seed", "manual_seed_all", "memory_allocated",
    "seed", "seed_all", "set_device", "synchronize",
]


def _no_cuda():
    # PyTorch's CPU build raises AssertionError with this message (``_lazy_init``)
    return AssertionError("numbagrad was built without CUDA support: CUDA is not available "
                          "(numbagrad.cuda.is_available() is False); run on 'cpu'")


def is_available() -> bool:
    """False: this build of numbagrad runs on the CPU only."""
    return False


def is_initialized() -> bool:
    """False: CUDA is never initialised without a CUDA backend."""
    return False


def device_count() -> int:
    """The number of CUDA devices: 0."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the CUDA generator: does nothing without CUDA (as PyTorch's CPU build)."""
    int(seed)  # still refuses a non-integer seed


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA generator: does nothing without CUDA (as PyTorch's CPU build)."""
    int(seed)


def seed() -> None:
    """Seed the CUDA generator randomly: does nothing without CUDA."""


def seed_all() -> None:
    """Seed every CUDA generator randomly: does nothing without CUDA."""


def empty_cache() -> None:
    """Free cached CUDA memory: nothing to free without CUDA."""


def memory_allocated(device=None) -> int:
    """Bytes of CUDA memory held by tensors: 0."""
    return 0


def synchronize(device=None):
    """Wait for CUDA work: raises AssertionError, as PyTorch's CPU build does."""
    raise _no_cuda()


def current_device() -> int:
    """The current CUDA device: raises AssertionError (no CUDA)."""
    raise _no_cuda()


def set_device(device) -> None:
    """Select a CUDA device: raises AssertionError (no CUDA)."""
    raise _no_cuda()


def get_device_name(device=None) -> str:
    """A CUDA device's name: raises AssertionError (no CUDA)."""
    raise _no_cuda()


def initial_seed() -> int:
    """The CUDA generator's seed: raises AssertionError (no CUDA)."""
    raise _no_cuda()
