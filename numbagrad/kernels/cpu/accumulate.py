"""Gradient accumulation: ``dst += src`` in place, one pass (the engine's leaf path).

None of the assumptions in the docstrings is checked; see NOTE [Elementwise kernel
conventions] in ``elementwise.py`` and NOTE [Bounds-check mode] in ``_jit.py``.
"""

from numba import prange

from numbagrad.kernels.cpu._jit import njit

__all__ = ["accumulate", "accumulate_par", "add_into_new_par"]


@njit(cache=True)
def accumulate(dst, src):
    """Add flat ``src`` (same length as ``dst``, or length 1) into flat ``dst``.

    Assumes: ``dst`` and ``src`` 1-D, ``len(src)`` equal to ``len(dst)`` or 1, ``dst``
    writable and the caller's own memory (a contiguous array's ``reshape(-1)`` view, never a
    copy: the sum would be lost); any real dtypes (``src`` is cast on store); contiguous
    for the cached specialisation."""
    if src.size == 1:
        s = src[0]
        for i in range(dst.size):
            dst[i] += s
    else:
        for i in range(dst.size):
            dst[i] += src[i]


@njit(cache=True, parallel=True)
def accumulate_par(dst, src):
    """``accumulate`` over all threads (``prange``), for large arrays.

    Assumes: as ``accumulate``, but ``len(src) == len(dst)`` (no length-1 ``src``)."""
    for i in prange(dst.size):
        dst[i] += src[i]


@njit(cache=True, parallel=True)
def add_into_new_par(a, b, out):
    """``out = a + b`` over all threads (``prange``), for large gradient sums.

    Assumes: ``a``, ``b`` and ``out`` 1-D (flat) of one length and dtype, ``out`` the
    caller's own memory; contiguous for the cached specialisation."""
    for i in prange(out.size):
        out[i] = a[i] + b[i]
