"""Kernels of ``interpolate`` (NOTE [Resampling] in ``numbagrad/nn/_resample.py``).

Every interpolating mode of ``interpolate`` but the antialiased ones is separable: along
each spatial axis, output ``o`` is ``sum_t x[idx[t, o]] * w[t, o]`` over ``T`` taps (1 for
nearest, 2 linear, 4 cubic), the same tables for every plane. The caller computes the
tables once per axis (``(T, O)`` arrays, index and weight, of PyTorch's formulas); here
each plane (one of the ``B`` leading planes: batch times channels, and any ``vmap`` dims)
is resampled axis by axis, the last axis first: the last axis's taps gathered for each
input row that some output reads (``rows_h``, ``rows_d``: the rows the next axis's tables
name), then whole rows of that result combined along the next axis (a contiguous,
vectorised inner loop), then whole planes along the first. That is PyTorch's own nesting,
``sum_d w_d * (sum_h w_h * (sum_w w_w * x))`` with the first tap's product as the start of
every sum, so a float32 forward rounds as PyTorch's ``upsample_*`` kernels do, and each
output reads only its taps: an ``inf`` or ``nan`` input reaches the outputs whose taps
hold it (a tap of weight 0 included: ``0 * inf`` is ``nan``, as in PyTorch), no others.

The backward kernels are the adjoint, axis by axis in the reverse order (the first axis's
taps scatter whole rows, the last axis's scatter single values): each plane's gradient is
written by one thread, so there are no atomics.

``resample`` and ``resample_backward`` are the entry points: they pick the kernel of the
rank, allocate the per-chunk scratch and run ``*_planes`` (planes ``[lo, hi)`` on the
calling thread) for small work, or its ``prange`` twin over contiguous chunks of planes,
one per thread, from ``PARALLEL_MIN`` elements (a thread hand-off costs more than a small
resampling). Arrays are C-contiguous, float32 or float64 (tables in the same dtype),
indices int64 in range: the caller built every table for these shapes, and nothing is
checked in the kernels (Numba does no bounds checks).
"""

import numpy as np
from numba import prange

from numbagrad.kernels import PARALLEL_MIN
from numbagrad.kernels.cpu import threads
from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "resample",
    "resample_1d",
    "resample_1d_backward",
    "resample_1d_backward_planes",
    "resample_1d_planes",
    "resample_2d",
    "resample_2d_backward",
    "resample_2d_backward_planes",
    "resample_2d_planes",
    "resample_3d",
    "resample_3d_backward",
    "resample_3d_backward_planes",
    "resample_3d_planes",
    "resample_backward",
]


# -- one axis ------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _gather_row(src, idx, w, dst):
    """``dst[o] = sum_t src[idx[t, o]] * w[t, o]`` (the first tap's product first)."""
    n_taps, n_out = idx.shape
    for o in range(n_out):
        dst[o] = src[idx[0, o]] * w[0, o]
    for t in range(1, n_taps):
        for o in range(n_out):
            dst[o] += src[idx[t, o]] * w[t, o]


@njit(cache=True, nogil=True)
def _scatter_row(g, idx, w, dst):
    """The adjoint of ``_gather_row``: ``dst[idx[t, o]] += g[o] * w[t, o]``."""
    n_taps, n_out = idx.shape
    for o in range(n_out):
        v = g[o]
        for t in range(n_taps):
            dst[idx[t, o]] += v * w[t, o]


@njit(cache=True, nogil=True)
def _combine_rows(src, idx, w, dst):
    """``dst[o, :] = sum_t src[idx[t, o], :] * w[t, o]`` for ``src`` ``(N, L)``, ``dst``
    ``(O, L)``."""
    n_taps, n_out = idx.shape
    n = src.shape[1]
    for o in range(n_out):
        i = idx[0, o]
        wt = w[0, o]
        for j in range(n):
            dst[o, j] = src[i, j] * wt
        for t in range(1, n_taps):
            i = idx[t, o]
            wt = w[t, o]
            for j in range(n):
                dst[o, j] += src[i, j] * wt


@njit(cache=True, nogil=True)
def _spread_rows(g, idx, w, dst):
    """The adjoint of ``_combine_rows``: ``dst[idx[t, o], :] += g[o, :] * w[t, o]``."""
    n_taps, n_out = idx.shape
    n = g.shape[1]
    for o in range(n_out):
        for t in range(n_taps):
            i = idx[t, o]
            wt = w[t, o]
            for j in range(n):
                dst[i, j] += g[o, j] * wt


# -- 1 spatial dim ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def resample_1d_planes(x, iw, ww, out, lo, hi):
    """Planes ``[lo, hi)`` of ``out`` ``(B, OW)`` from ``x`` ``(B, W)``."""
    for p in range(lo, hi):
        _gather_row(x[p], iw, ww, out[p])


@njit(cache=True, parallel=True, nogil=True)
def resample_1d(x, iw, ww, out, chunks):
    """``resample_1d_planes`` over all planes, in ``chunks`` chunks in parallel."""
    nb = x.shape[0]
    for c in prange(chunks):
        resample_1d_planes(x, iw, ww, out, c * nb // chunks, (c + 1) * nb // chunks)


@njit(cache=True, nogil=True)
def resample_1d_backward_planes(g, iw, ww, gin, lo, hi):
    """Planes ``[lo, hi)`` of the input gradient ``gin`` ``(B, W)`` from ``g``
    ``(B, OW)``."""
    for p in range(lo, hi):
        gin[p, :] = 0.0
        _scatter_row(g[p], iw, ww, gin[p])


@njit(cache=True, parallel=True, nogil=True)
def resample_1d_backward(g, iw, ww, gin, chunks):
    """``resample_1d_backward_planes`` over all planes, in ``chunks`` chunks in parallel."""
    nb = g.shape[0]
    for c in prange(chunks):
        resample_1d_backward_planes(g, iw, ww, gin, c * nb // chunks, (c + 1) * nb // chunks)


# -- 2 spatial dims --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def resample_2d_planes(x, ih, wh, rows_h, iw, ww, out, lo, hi, tmp):
    """Planes ``[lo, hi)`` of ``out`` ``(B, OH, OW)`` from ``x`` ``(B, H, W)``; ``rows_h``
    the input rows that ``ih`` names, ``tmp`` an ``(H, OW)`` scratch."""
    for p in range(lo, hi):
        xp = x[p]
        for r in range(rows_h.size):
            h = rows_h[r]
            _gather_row(xp[h], iw, ww, tmp[h])
        _combine_rows(tmp, ih, wh, out[p])


@njit(cache=True, parallel=True, nogil=True)
def resample_2d(x, ih, wh, rows_h, iw, ww, out, tmp):
    """``resample_2d_planes`` over all planes, in ``tmp.shape[0]`` chunks of planes in
    parallel (``tmp`` ``(chunks, H, OW)``)."""
    nb = x.shape[0]
    chunks = tmp.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_2d_planes(x, ih, wh, rows_h, iw, ww, out, lo, hi, tmp[c])


@njit(cache=True, nogil=True)
def resample_2d_backward_planes(g, ih, wh, rows_h, iw, ww, gin, lo, hi, tmp):
    """Planes ``[lo, hi)`` of the input gradient ``gin`` ``(B, H, W)`` from ``g``
    ``(B, OH, OW)``; ``tmp`` an ``(H, OW)`` scratch."""
    for p in range(lo, hi):
        for r in range(rows_h.size):
            tmp[rows_h[r], :] = 0.0
        _spread_rows(g[p], ih, wh, tmp)
        gp = gin[p]
        gp[:, :] = 0.0
        for r in range(rows_h.size):
            h = rows_h[r]
            _scatter_row(tmp[h], iw, ww, gp[h])


@njit(cache=True, parallel=True, nogil=True)
def resample_2d_backward(g, ih, wh, rows_h, iw, ww, gin, tmp):
    """``resample_2d_backward_planes`` over all planes, in ``tmp.shape[0]`` chunks in
    parallel."""
    nb = g.shape[0]
    chunks = tmp.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_2d_backward_planes(g, ih, wh, rows_h, iw, ww, gin, lo, hi, tmp[c])


# -- 3 spatial dims --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def resample_3d_planes(x, id_, wd, rows_d, ih, wh, rows_h, iw, ww, out, lo, hi, tmp_w, tmp_h):
    """Planes ``[lo, hi)`` of ``out`` ``(B, OD, OH, OW)`` from ``x`` ``(B, D, H, W)``;
    scratch ``tmp_w`` ``(H, OW)`` and ``tmp_h`` ``(D, OH * OW)``."""
    od, oh, ow = out.shape[1], out.shape[2], out.shape[3]
    for p in range(lo, hi):
        xp = x[p]
        for rd in range(rows_d.size):
            d = rows_d[rd]
            for rh in range(rows_h.size):
                h = rows_h[rh]
                _gather_row(xp[d, h], iw, ww, tmp_w[h])
            _combine_rows(tmp_w, ih, wh, tmp_h[d].reshape((oh, ow)))
        _combine_rows(tmp_h, id_, wd, out[p].reshape((od, oh * ow)))


@njit(cache=True, parallel=True, nogil=True)
def resample_3d(x, id_, wd, rows_d, ih, wh, rows_h, iw, ww, out, tmp_w, tmp_h):
    """``resample_3d_planes`` over all planes, in ``tmp_w.shape[0]`` chunks in parallel."""
    nb = x.shape[0]
    chunks = tmp_w.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_3d_planes(
            x, id_, wd, rows_d, ih, wh, rows_h, iw, ww, out, lo, hi, tmp_w[c], tmp_h[c]
        )


@njit(cache=True, nogil=True)
def resample_3d_backward_planes(
    g, id_, wd, rows_d, ih, wh, rows_h, iw, ww, gin, lo, hi, tmp_d, tmp_h
):
    """Planes ``[lo, hi)`` of the input gradient ``gin`` ``(B, D, H, W)`` from ``g``
    ``(B, OD, OH, OW)``; scratch ``tmp_d`` ``(D, OH * OW)`` and ``tmp_h`` ``(H, OW)``."""
    od, oh, ow = g.shape[1], g.shape[2], g.shape[3]
    for p in range(lo, hi):
        for rd in range(rows_d.size):
            tmp_d[rows_d[rd], :] = 0.0
        _spread_rows(g[p].reshape((od, oh * ow)), id_, wd, tmp_d)
        gp = gin[p]
        gp[:, :, :] = 0.0
        for rd in range(rows_d.size):
            d = rows_d[rd]
            for rh in range(rows_h.size):
                tmp_h[rows_h[rh], :] = 0.0
            _spread_rows(tmp_d[d].reshape((oh, ow)), ih, wh, tmp_h)
            for rh in range(rows_h.size):
                h = rows_h[rh]
                _scatter_row(tmp_h[h], iw, ww, gp[d, h])


@njit(cache=True, parallel=True, nogil=True)
def resample_3d_backward(g, id_, wd, rows_d, ih, wh, rows_h, iw, ww, gin, tmp_d, tmp_h):
    """``resample_3d_backward_planes`` over all planes, in ``tmp_d.shape[0]`` chunks in
    parallel."""
    nb = g.shape[0]
    chunks = tmp_d.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_3d_backward_planes(
            g, id_, wd, rows_d, ih, wh, rows_h, iw, ww, gin, lo, hi, tmp_d[c], tmp_h[c]
        )


# -- entry points ------------------------------------------------------------------------------
def _chunks(planes, work):
    if work < PARALLEL_MIN or planes < 2:
        return 0
    return min(planes, threads.get_num_threads())


def _table_args(tables):
    """The kernels' table arguments: ``idx, w, rows`` per axis, no ``rows`` for the last."""
    args = []
    for j, (idx, w, rows) in enumerate(tables):
        args += [idx, w] if j == len(tables) - 1 else [idx, w, rows]
    return args


def resample(x, tables, out):
    """``out`` ``(B, *size)`` from ``x`` ``(B, *in_size)`` (1 to 3 spatial dims) with one
    ``(idx, w, rows)`` table per axis."""
    k = x.ndim - 1
    args = _table_args(tables)
    chunks = _chunks(x.shape[0], x.size + out.size)
    n = max(chunks, 1)
    if k == 1:
        if chunks:
            resample_1d(x, *args, out, chunks)
        else:
            resample_1d_planes(x, *args, out, 0, x.shape[0])
        return
    if k == 2:
        scratch = [np.empty((n, x.shape[1], out.shape[2]), x.dtype)]
    else:
        scratch = [
            np.empty((n, x.shape[2], out.shape[3]), x.dtype),
            np.empty((n, x.shape[1], out.shape[2] * out.shape[3]), x.dtype),
        ]
    if chunks:
        (resample_2d if k == 2 else resample_3d)(x, *args, out, *scratch)
    else:
        planes = resample_2d_planes if k == 2 else resample_3d_planes
        planes(x, *args, out, 0, x.shape[0], *[t[0] for t in scratch])


def resample_backward(g, tables, gin):
    """The adjoint of ``resample``: the input gradient ``gin`` ``(B, *in_size)`` from ``g``
    ``(B, *size)``, with the forward's tables."""
    k = g.ndim - 1
    args = _table_args(tables)
    chunks = _chunks(g.shape[0], g.size + gin.size)
    n = max(chunks, 1)
    if k == 1:
        if chunks:
            resample_1d_backward(g, *args, gin, chunks)
        else:
            resample_1d_backward_planes(g, *args, gin, 0, g.shape[0])
        return
    if k == 2:
        scratch = [np.empty((n, gin.shape[1], g.shape[2]), g.dtype)]
    else:
        scratch = [
            np.empty((n, gin.shape[1], g.shape[2] * g.shape[3]), g.dtype),
            np.empty((n, gin.shape[2], g.shape[3]), g.dtype),
        ]
    if chunks:
        (resample_2d_backward if k == 2 else resample_3d_backward)(g, *args, gin, *scratch)
    else:
        planes = resample_2d_backward_planes if k == 2 else resample_3d_backward_planes
        planes(g, *args, gin, 0, g.shape[0], *[t[0] for t in scratch])
