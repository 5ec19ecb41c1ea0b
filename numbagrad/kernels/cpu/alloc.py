"""A small caching allocator for large result arrays.

NOTE [Buffer cache]
A fresh 80 MB array costs about as much again as the pass that fills it: the kernel
faults in and zeroes every page. On a VM a page fault costs 2-3 us, so even a fresh
512 KB result (an outer product of a batch, 128 pages) costs 0.3 ms on top of a 0.1 ms
multiply (measured on the 2-core machine). ``empty`` keeps the large arrays it hands out in a short
list and hands one out again once nothing else refers to it: its reference count is down
to the cache's own (a view, a tensor or any other holder keeps it above that). The
cache holds at most ``LIMIT_BYTES`` (1 GiB; the environment variable
``NUMBAGRAD_BUFFER_CACHE_MB`` sets it, 0 turns the cache off) in at most ``MAX_ENTRIES``
arrays (the search is a linear scan) and only arrays of at least ``MIN_BYTES``; small
arrays come from ``np.empty`` as usual. ``clear()`` (``numbagrad.empty_cache()``) drops
everything: free cached arrays go back to the system at once.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

__all__ = ["LIMIT_BYTES", "MAX_ENTRIES", "MIN_BYTES", "clear", "empty"]

MIN_BYTES = 1 << 18
MAX_ENTRIES = 64


def _limit_from_env(environ=os.environ) -> int:
    value = environ.get("NUMBAGRAD_BUFFER_CACHE_MB", "").strip()
    if not value:
        return 1 << 30
    try:
        mb = float(value)
    except ValueError:
        raise ValueError(
            f"NUMBAGRAD_BUFFER_CACHE_MB must be a number of megabytes "
            f"(0 turns the buffer cache off), got {value!r}"
        ) from None
    if mb < 0:
        raise ValueError(f"NUMBAGRAD_BUFFER_CACHE_MB must not be negative, got {value!r}")
    return int(mb * (1 << 20))


LIMIT_BYTES = _limit_from_env()

_cache: list = []  # arrays handed out, oldest first
_held = [0]
_lock = threading.Lock()  # two threads must never be handed the same free array


def _refs(a) -> int:
    return sys.getrefcount(a)


def _baseline() -> int:
    """References to a cached array that nobody else holds, seen from the loops below
    (``a = cache[i]``): the list, ``a``, ``_refs``'s parameter and getrefcount's argument;
    measured, not assumed, so it holds across Python versions."""
    probe = [np.empty(1)]
    a = probe[0]
    return _refs(a)


_FREE_REFS = _baseline()


def empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, reusing a cached array that nothing refers to any more."""
    dtype = np.dtype(dtype)
    n = dtype.itemsize
    for s in shape:
        n *= s
    if n < MIN_BYTES:
        return np.empty(shape, dtype)
    shape = tuple(shape)
    with _lock:
        return _take(shape, dtype, n)


def _take(shape, dtype, n):
    for i in range(len(_cache)):
        a = _cache[i]
        if a.shape == shape and a.dtype == dtype and _refs(a) <= _FREE_REFS:
            del _cache[i]
            _cache.append(a)  # most recently used last
            return a
    a = None
    out = np.empty(shape, dtype)
    if n <= LIMIT_BYTES:
        # evict free arrays, oldest first, until the new one fits
        i = 0
        while (_held[0] + n > LIMIT_BYTES or len(_cache) >= MAX_ENTRIES) and i < len(_cache):
            a = _cache[i]
            if _refs(a) <= _FREE_REFS:
                _held[0] -= a.nbytes
                del _cache[i]
            else:
                i += 1
        if _held[0] + n <= LIMIT_BYTES and len(_cache) < MAX_ENTRIES:
            _cache.append(out)
            _held[0] += n
    return out


def clear() -> None:
    """Drop every cached array (memory returns to the system once nothing holds it)."""
    with _lock:
        _cache.clear()
        _held[0] = 0
