"""A caching device-memory allocator for numba-cuda (an EMM plugin).

NOTE [CUDA memory pool]
numba-cuda's own memory manager calls ``cuMemAlloc`` for every device array and
``cuMemFree`` (batched) when arrays are collected. On an H100 those calls cost more than
the kernels of an eager op: the 10M-element forward+backward of ``bench_gpu`` spent most of
its 25 ms in them (docs/gpu.rst, "Measured on hardware"). PyTorch keeps freed blocks in a
cache; so does this plugin:

- a request is rounded up to a size class (``round_size``: 512-byte steps below 1 MiB, then
  four classes per power of two, so at most 25 % is wasted), and served from the blocks of
  that class freed earlier on the same stream, else by ``cuMemAlloc``;
- a block comes back to its class's free list when numba would have freed it (the
  pointer's finalizer, after the last view of it is collected);
- kernels on one stream run in order, so a block freed on a stream can be reused by later
  work on that stream at once. A block is only reused on the stream that was current when
  it was allocated (numbagrad's :func:`numbagrad.cuda.stream`); memory that one stream
  allocates and another still uses must be kept alive by the caller, as with PyTorch's
  ``record_stream``;
- when ``cuMemAlloc`` runs out of memory the cache is released (``empty_cache``) and the
  allocation tried once more, so the cache never causes an out-of-memory error that the
  plain allocator would not.

:func:`install` makes it numba's memory manager; ``numbagrad`` calls it when it first
imports ``numba.cuda``, before any CUDA context exists. A program that made its context
earlier (its own numba kernels first), or that chose another manager through
``NUMBA_CUDA_MEMORY_MANAGER``, keeps numba's manager: the statistics then read 0.
``NUMBAGRAD_CUDA_CACHING_ALLOCATOR=0`` turns the cache off. The simulator has no device
memory and no EMM: there the statistics read 0 too.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref

from numbagrad.kernels.cuda.launch import STREAMS

__all__ = ["empty_cache", "install", "installed_manager", "round_size", "stats"]

_SMALL = 1 << 20  # below: 512-byte steps
_STEP = 512


def round_size(n: int) -> int:
    """The size class of a request of ``n`` bytes (at least 512)."""
    n = max(int(n), 1)
    if n < _SMALL:
        return -(-n // _STEP) * _STEP
    q = 1 << (n.bit_length() - 3)  # a quarter of the power of two below n
    return -(-n // q) * q


_state: dict = {"manager": None}


def installed_manager():
    """The pool manager of the current context, or None when the pool is not in use."""
    return _state["manager"]


def stats() -> dict:
    """``allocated`` (bytes in live blocks), ``reserved`` (live + cached),
    ``peak_allocated``, as PyTorch's memory statistics name them (0 without the pool)."""
    m = _state["manager"]
    if m is None:
        return {"allocated": 0, "reserved": 0, "peak_allocated": 0}
    return {"allocated": m.allocated, "reserved": m.reserved, "peak_allocated": m.peak}


def reset_peak() -> None:
    m = _state["manager"]
    if m is not None:
        m.peak = m.allocated


def empty_cache() -> None:
    """Free every cached (unused) block."""
    m = _state["manager"]
    if m is not None:
        m.release_cached()


def _stream_key() -> int:
    if not STREAMS:
        return 0
    s = STREAMS[-1]
    return int(s.handle) if s else 0


def _make_manager_class(driver_mod):
    base = driver_mod.NumbaCUDAMemoryManager
    auto_free_pointer = driver_mod.AutoFreePointer
    drv = driver_mod.driver

    class CachingMemoryManager(base):
        """numba's manager with freed blocks kept for reuse (NOTE [CUDA memory pool])."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._free: dict = {}  # (stream, size class) -> [device pointer]
            self._live: dict = {}  # device address -> AutoFreePointer handed out
            self._lock = threading.Lock()
            self.allocated = self.reserved = self.peak = 0

        def initialize(self):
            super().initialize()
            _state["manager"] = self

        def memalloc(self, size):
            key = (_stream_key(), round_size(size))
            with self._lock:
                blocks = self._free.get(key)
                ptr = blocks.pop() if blocks else None
            if ptr is None:
                ptr = self._fresh(key[1])
            with self._lock:
                self.allocated += key[1]
                self.peak = max(self.peak, self.allocated)
            mem = auto_free_pointer(
                weakref.proxy(self.context),
                ptr,
                size,
                finalizer=functools.partial(self._give_back, key, ptr),
            )
            # the pointer lives while any view of it does (its reference count, as numba's
            # own manager keeps it in ``allocations``)
            self._live[int(ptr)] = mem
            return mem.own()

        def _fresh(self, nbytes):
            try:
                ptr = self._attempt_allocation(lambda: drv.cuMemAlloc(nbytes))
            except Exception as exc:  # out of memory: release the cache, try once more
                if "OUT_OF_MEMORY" not in str(exc) and "out of memory" not in str(exc):
                    raise
                self.release_cached()
                ptr = self._attempt_allocation(lambda: drv.cuMemAlloc(nbytes))
            with self._lock:
                self.reserved += nbytes
            return ptr

        def _give_back(self, key, ptr):
            with self._lock:
                self._live.pop(int(ptr), None)
                self._free.setdefault(key, []).append(ptr)
                self.allocated -= key[1]

        def release_cached(self):
            with self._lock:
                free, self._free = self._free, {}
            for (_, nbytes), ptrs in free.items():
                for ptr in ptrs:
                    self.deallocations.add_item(drv.cuMemFree, ptr, nbytes)
                    with self._lock:
                        self.reserved -= nbytes
            self.deallocations.clear()

        def reset(self):  # the context is reset: every block goes, as numba's own do
            with self._lock:
                live, self._live = self._live, {}
            del live  # their finalizers put the blocks in the free lists
            self.release_cached()
            super().reset()

    return CachingMemoryManager


def install(cuda_mod) -> bool:
    """Make the pool numba's memory manager for contexts made from now on; False (numba's
    own manager stays) under the simulator, when turned off, when another manager was
    chosen, or when a context already exists."""
    if os.environ.get("NUMBAGRAD_CUDA_CACHING_ALLOCATOR", "1") == "0":
        return False
    try:
        from numba.cuda.core import config
        from numba.cuda.cudadrv import driver as driver_mod
    except ImportError:  # another numba-cuda layout (or the simulator): numba's manager
        return False
    if config.ENABLE_CUDASIM or getattr(config, "CUDA_MEMORY_MANAGER", "") != "default":
        return False
    made = getattr(driver_mod.driver, "__dict__", {}).get("devices", {})
    if any(getattr(dev, "primary_context", None) is not None for dev in made.values()):
        return False  # a context exists: its manager is fixed
    cuda_mod.set_memory_manager(_make_manager_class(driver_mod))
    return True
