"""``njit`` for numbagrad's kernels: ``numba.njit(cache=True)`` that survives an unwritable
compile cache.

NOTE [Compile cache fallback]
Numba caches a compiled kernel next to its source (``__pycache__``) or, when that is not
writable, in the user's cache directory. In a container or on a shared cluster both can be
read-only (site-packages owned by root, no writable ``HOME``), and Numba then refuses the
decorator itself: ``RuntimeError: cannot cache function '...': no locator available``,
which would break ``import``/the first op. Here that error sends the cache to a fresh
temporary directory for this process, with one warning saying how to keep compiled
kernels between runs (``NUMBA_CACHE_DIR``); should even that fail, the kernel compiles
without a disk cache. A user's own ``NUMBA_CACHE_DIR`` is never overridden.

NOTE [Bounds-check mode]
Numba does no bounds checks: a kernel handed arrays shorter than it assumes reads or
writes past their end silently (or crashes). With the environment variable
``NUMBAGRAD_BOUNDSCHECK=1`` (read once, when the first kernel module is imported) ``njit``
compiles every kernel with ``boundscheck=True``, so such an access raises ``IndexError``
instead; CI runs the kernel and op tests and the fuzz suite that way (``.ci/run``). The
kernels are then compiled in every process and never cached: Numba's cache key ignores
``boundscheck``, so a cached kernel of a normal run would be loaded unchecked, and a
checked one would be left behind to slow down normal runs. ``0`` or unset is the normal
mode; it is for debugging and costs speed and compile time.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any

import numba

__all__ = ["BOUNDSCHECK", "CompileCacheWarning", "njit"]


def _boundscheck_from_env(environ=os.environ) -> bool:
    """NOTE [Bounds-check mode]: ``NUMBAGRAD_BOUNDSCHECK`` is ``1`` (on), ``0`` or unset."""
    value = environ.get("NUMBAGRAD_BOUNDSCHECK", "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(
            f"NUMBAGRAD_BOUNDSCHECK must be 1 (compile kernels with bounds "
            f"checks) or 0, got {value!r}"
        )
    return value == "1"


BOUNDSCHECK = _boundscheck_from_env()

_state: dict[str, Any] = {"fallback_dir": None, "uncached_warned": False}


class CompileCacheWarning(UserWarning):
    """Numba's compile cache is not writable; kernels are cached in a temporary
    directory for this process only."""


def _use_temporary_cache(error) -> bool:
    """Point Numba's cache at a temporary directory (once); False if the user already chose
    a directory (``NUMBA_CACHE_DIR``), which then is not writable either."""
    if _state["fallback_dir"] is not None:
        return True
    if numba.config.CACHE_DIR:
        return False
    path = tempfile.mkdtemp(prefix="numbagrad-numba-cache-")
    numba.config.CACHE_DIR = path
    _state["fallback_dir"] = path
    warnings.warn(
        f"numbagrad: Numba cannot write its compile cache next to numbagrad or in your home "
        f"directory ({error}); compiled kernels are cached in {path} for this process only. "
        "Set the environment variable NUMBA_CACHE_DIR to a writable directory to keep them "
        "between runs.",
        CompileCacheWarning,
        stacklevel=4,
    )
    return True


def _compile(fn, options):
    try:
        return numba.njit(**options)(fn)
    except RuntimeError as e:
        if not options.get("cache") or "cannot cache" not in str(e):
            raise
        if _use_temporary_cache(e):
            try:
                return numba.njit(**options)(fn)
            except RuntimeError as again:
                if "cannot cache" not in str(again):
                    raise
                e = again
        if not _state["uncached_warned"]:
            _state["uncached_warned"] = True
            warnings.warn(
                f"numbagrad: Numba cannot write its compile cache ({e}); kernels are compiled "
                f"without a disk cache (NUMBA_CACHE_DIR={numba.config.CACHE_DIR!r}). Point "
                "NUMBA_CACHE_DIR at a writable directory to cache them.",
                CompileCacheWarning,
                stacklevel=3,
            )
        return numba.njit(**dict(options, cache=False))(fn)


def njit(fn=None, **options):
    """``numba.njit`` with ``cache=True`` by default and the fallback of NOTE [Compile cache
    fallback]; used bare (``@njit``) or with options (``@njit(parallel=True)``). Under
    ``NUMBAGRAD_BOUNDSCHECK=1`` every kernel is compiled with ``boundscheck=True`` and no
    disk cache (NOTE [Bounds-check mode])."""
    options.setdefault("cache", True)
    if BOUNDSCHECK:
        options.update(boundscheck=True, cache=False)
    if fn is not None:
        return _compile(fn, options)
    return lambda f: _compile(f, options)
