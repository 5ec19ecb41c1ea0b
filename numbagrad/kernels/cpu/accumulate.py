"""Gradient accumulation: ``dst += src`` in place, one pass (the engine's leaf path)."""

from numba import prange

from numbagrad.kernels.cpu._jit import njit

__all__ = ["accumulate", "accumulate_par", "add_into_new_par"]


@njit(cache=True)
def accumulate(dst, src):
    """Add flat ``src`` (same length as ``dst``, or length 1) into flat ``dst``."""
    if src.size == 1:
        s = src[0]
        for i in range(dst.size):
            dst[i] += s
    else:
        for i in range(dst.size):
            dst[i] += src[i]


@njit(cache=True, parallel=True)
def accumulate_par(dst, src):
    """``accumulate`` over both cores, for large arrays (src as long as dst)."""
    for i in prange(dst.size):
        dst[i] += src[i]


@njit(cache=True, parallel=True)
def add_into_new_par(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] + b[i]
