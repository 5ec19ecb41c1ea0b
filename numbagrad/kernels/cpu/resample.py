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
every sum, and each output reads only its taps: an ``inf`` or ``nan`` input reaches the
outputs whose taps hold it (a tap of weight 0 included: ``0 * inf`` is ``nan``, as in
PyTorch), no others.

The backward is the adjoint, axis by axis in the reverse order, each axis a gather again
with the transposed table (``transpose_table``: for each input position the outputs that
read it, padded with an out-of-range index and weight 0): whole rows along the first axes
(``_combine_rows_t``, which stops at the padding), single entries along the last one,
whose padding reads a zero column that the scratch rows carry. Each gradient entry is then
one sum (in a register, or one pass over a row) instead of a chain of scatter-adds into
the same few entries. The maps of different axes commute, so
every entry still gets exactly the products ``w_d * w_h * w_w * g`` of the outputs that
read it (a non-finite ``g`` reaches exactly those inputs, as in PyTorch). Each plane's
gradient is written by one thread, so there are no atomics. (1-D input copies each row of
its gradient into a scratch row with the zero column; scattering into the input gradient
instead, a chain of read-modify-writes of the same few entries, took twice as long.)

The row gathers are written out for 1, 2 and 4 taps (the tables' widths; a transposed
table's first 4 entries, the rest added after) with the tables' rows hoisted: with a
generic loop over the taps, or a view of the tables made per row (each an atomic
reference count), the last-axis pass of a 2-D bilinear upsampling by 2 (2048 planes of
32 x 32, float32, one thread) took 11.5-12 ms against 7.6 ms.

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
def _gather_rows(src, s0, dst, d0, rows, lo, hi, idx, w):
    """``dst[d0 + r, o] = sum_t src[s0 + r, idx[t, o]] * w[t, o]`` for ``r`` in
    ``rows[lo:hi]``, the first tap's product first."""
    n_taps, n_out = idx.shape
    if n_taps == 1:
        i0, w0 = idx[0], w[0]
        for k in range(lo, hi):
            s, d = s0 + rows[k], d0 + rows[k]
            for o in range(n_out):
                dst[d, o] = src[s, i0[o]] * w0[o]
    elif n_taps == 2:
        i0, i1, w0, w1 = idx[0], idx[1], w[0], w[1]
        for k in range(lo, hi):
            s, d = s0 + rows[k], d0 + rows[k]
            for o in range(n_out):
                dst[d, o] = src[s, i0[o]] * w0[o] + src[s, i1[o]] * w1[o]
    elif n_taps >= 4:  # (4 taps; a transposed table: 4 in one pass, the rest added)
        i0, i1, i2, i3 = idx[0], idx[1], idx[2], idx[3]
        w0, w1, w2, w3 = w[0], w[1], w[2], w[3]
        for k in range(lo, hi):
            s, d = s0 + rows[k], d0 + rows[k]
            for o in range(n_out):
                acc = src[s, i0[o]] * w0[o] + src[s, i1[o]] * w1[o]
                acc += src[s, i2[o]] * w2[o]
                dst[d, o] = acc + src[s, i3[o]] * w3[o]
            for t in range(4, n_taps):
                for o in range(n_out):
                    dst[d, o] += src[s, idx[t, o]] * w[t, o]
    else:  # (3 taps: a transposed table)
        for k in range(lo, hi):
            s, d = s0 + rows[k], d0 + rows[k]
            for o in range(n_out):
                dst[d, o] = src[s, idx[0, o]] * w[0, o]
            for t in range(1, n_taps):
                for o in range(n_out):
                    dst[d, o] += src[s, idx[t, o]] * w[t, o]


@njit(cache=True, nogil=True)
def _combine_rows(src, idx, w, dst):
    """``dst[o, :] = sum_t src[idx[t, o], :] * w[t, o]`` for ``src`` ``(N, L)``, ``dst``
    ``(O, L)``, the first tap's product first."""
    n_taps, n_out = idx.shape
    n = src.shape[1]
    if n_taps == 1:
        for o in range(n_out):
            i0, w0 = idx[0, o], w[0, o]
            for j in range(n):
                dst[o, j] = src[i0, j] * w0
        return
    if n_taps == 2:
        for o in range(n_out):
            i0, i1, w0, w1 = idx[0, o], idx[1, o], w[0, o], w[1, o]
            for j in range(n):
                dst[o, j] = src[i0, j] * w0 + src[i1, j] * w1
        return
    if n_taps == 4:
        for o in range(n_out):
            i0, i1, i2, i3 = idx[0, o], idx[1, o], idx[2, o], idx[3, o]
            w0, w1, w2, w3 = w[0, o], w[1, o], w[2, o], w[3, o]
            for j in range(n):
                acc = src[i0, j] * w0 + src[i1, j] * w1
                acc += src[i2, j] * w2
                dst[o, j] = acc + src[i3, j] * w3
        return
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
def _combine_rows_t(src, idx_t, w_t, dst):
    """The adjoint of ``_combine_rows`` with its transposed table (``transpose_table``):
    ``dst[i, :L] = sum_k src[idx_t[k, i], :] * w_t[k, i]`` over the entries of ``i`` that
    are not padding (``L`` the width of ``src``; 0 for a row no output reads), one pass
    over each row."""
    width, n_dst = idx_t.shape
    n_src, n = src.shape
    for i in range(n_dst):
        cnt = 0
        while cnt < width and idx_t[cnt, i] != n_src:
            cnt += 1
        if cnt == 0:
            for j in range(n):
                dst[i, j] = 0.0
        elif cnt == 1:
            a, u = idx_t[0, i], w_t[0, i]
            for j in range(n):
                dst[i, j] = src[a, j] * u
        elif cnt == 2:
            a, b, u, v = idx_t[0, i], idx_t[1, i], w_t[0, i], w_t[1, i]
            for j in range(n):
                dst[i, j] = src[a, j] * u + src[b, j] * v
        elif cnt == 4:
            a, b, c, d = idx_t[0, i], idx_t[1, i], idx_t[2, i], idx_t[3, i]
            u, v, y, z = w_t[0, i], w_t[1, i], w_t[2, i], w_t[3, i]
            for j in range(n):
                acc = src[a, j] * u + src[b, j] * v
                acc += src[c, j] * y
                dst[i, j] = acc + src[d, j] * z
        else:
            a, u = idx_t[0, i], w_t[0, i]
            for j in range(n):
                dst[i, j] = src[a, j] * u
            for k in range(1, cnt):
                a, u = idx_t[k, i], w_t[k, i]
                for j in range(n):
                    dst[i, j] += src[a, j] * u


# -- 1 spatial dim ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def resample_1d_planes(x, iw, ww, out, lo, hi, planes):
    """Planes ``[lo, hi)`` of ``out`` ``(B, OW)`` from ``x`` ``(B, W)`` (``planes`` is
    ``arange(B)``)."""
    _gather_rows(x, 0, out, 0, planes, lo, hi, iw, ww)


@njit(cache=True, parallel=True, nogil=True)
def resample_1d(x, iw, ww, out, planes, chunks):
    """``resample_1d_planes`` over all planes, in ``chunks`` chunks in parallel."""
    nb = x.shape[0]
    for c in prange(chunks):
        _gather_rows(x, 0, out, 0, planes, c * nb // chunks, (c + 1) * nb // chunks, iw, ww)


@njit(cache=True, nogil=True)
def resample_1d_backward_planes(g, iw_t, ww_t, gin, lo, hi, tmp, row0):
    """Planes ``[lo, hi)`` of the input gradient ``gin`` ``(B, W)`` from ``g``
    ``(B, OW)`` with the transposed table: each row of ``g`` copied into the ``(1, OW +
    1)`` scratch ``tmp`` (its last entry the zero the padding reads) and gathered;
    ``row0`` is ``[0]``."""
    ow = g.shape[1]
    for p in range(lo, hi):
        for j in range(ow):
            tmp[0, j] = g[p, j]
        _gather_rows(tmp, 0, gin, p, row0, 0, 1, iw_t, ww_t)


@njit(cache=True, parallel=True, nogil=True)
def resample_1d_backward(g, iw_t, ww_t, gin, tmp, row0):
    """``resample_1d_backward_planes`` over all planes, in ``tmp.shape[0]`` chunks in
    parallel."""
    nb = g.shape[0]
    chunks = tmp.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_1d_backward_planes(g, iw_t, ww_t, gin, lo, hi, tmp[c], row0)


# -- 2 spatial dims --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def resample_2d_planes(x, ih, wh, rows_h, iw, ww, out, lo, hi, tmp):
    """Planes ``[lo, hi)`` of ``out`` ``(B, OH, OW)`` from ``x`` ``(B, H, W)``; ``rows_h``
    the input rows that ``ih`` names, ``tmp`` an ``(H, OW)`` scratch."""
    nh = x.shape[1]
    x2 = x.reshape((x.shape[0] * nh, x.shape[2]))
    for p in range(lo, hi):
        _gather_rows(x2, p * nh, tmp, 0, rows_h, 0, rows_h.size, iw, ww)
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
def resample_2d_backward_planes(g, ih_t, wh_t, rows_h, iw_t, ww_t, gin, lo, hi, tmp):
    """Planes ``[lo, hi)`` of the input gradient ``gin`` ``(B, H, W)`` from ``g``
    ``(B, OH, OW)``, with the transposed tables; ``tmp`` an ``(H, OW + 1)`` scratch (its
    last column the zero the padding of ``iw_t`` reads)."""
    nh = gin.shape[1]
    gin2 = gin.reshape((gin.shape[0] * nh, gin.shape[2]))
    for p in range(lo, hi):
        _combine_rows_t(g[p], ih_t, wh_t, tmp)
        if rows_h.size < nh:
            gin[p] = 0.0
        _gather_rows(tmp, 0, gin2, p * nh, rows_h, 0, rows_h.size, iw_t, ww_t)


@njit(cache=True, parallel=True, nogil=True)
def resample_2d_backward(g, ih_t, wh_t, rows_h, iw_t, ww_t, gin, tmp):
    """``resample_2d_backward_planes`` over all planes, in ``tmp.shape[0]`` chunks in
    parallel."""
    nb = g.shape[0]
    chunks = tmp.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_2d_backward_planes(g, ih_t, wh_t, rows_h, iw_t, ww_t, gin, lo, hi, tmp[c])


# -- 3 spatial dims --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def resample_3d_planes(x, id_, wd, rows_d, ih, wh, rows_h, iw, ww, out, lo, hi, tmp_w, tmp_h):
    """Planes ``[lo, hi)`` of ``out`` ``(B, OD, OH, OW)`` from ``x`` ``(B, D, H, W)``;
    scratch ``tmp_w`` ``(H, OW)`` and ``tmp_h`` ``(D, OH * OW)``."""
    nd, nh = x.shape[1], x.shape[2]
    od, oh, ow = out.shape[1], out.shape[2], out.shape[3]
    x2 = x.reshape((x.shape[0] * nd * nh, x.shape[3]))
    for p in range(lo, hi):
        for rd in range(rows_d.size):
            d = rows_d[rd]
            _gather_rows(x2, (p * nd + d) * nh, tmp_w, 0, rows_h, 0, rows_h.size, iw, ww)
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
    g, id_t, wd_t, rows_d, ih_t, wh_t, rows_h, iw_t, ww_t, gin, lo, hi, tmp_d, tmp_h
):
    """Planes ``[lo, hi)`` of the input gradient ``gin`` ``(B, D, H, W)`` from ``g``
    ``(B, OD, OH, OW)``; scratch ``tmp_d`` ``(D, OH * OW)`` and ``tmp_h`` ``(H, OW + 1)``
    (its last column the zero the padding of the transposed table reads)."""
    nd, nh = gin.shape[1], gin.shape[2]
    od, oh, ow = g.shape[1], g.shape[2], g.shape[3]
    gin2 = gin.reshape((gin.shape[0] * nd * nh, gin.shape[3]))
    for p in range(lo, hi):
        _combine_rows_t(g[p].reshape((od, oh * ow)), id_t, wd_t, tmp_d)
        if rows_d.size < nd or rows_h.size < nh:
            gin[p] = 0.0
        for rd in range(rows_d.size):
            d = rows_d[rd]
            _combine_rows_t(tmp_d[d].reshape((oh, ow)), ih_t, wh_t, tmp_h)
            _gather_rows(tmp_h, 0, gin2, (p * nd + d) * nh, rows_h, 0, rows_h.size, iw_t, ww_t)


@njit(cache=True, parallel=True, nogil=True)
def resample_3d_backward(g, id_t, wd_t, rows_d, ih_t, wh_t, rows_h, iw_t, ww_t, gin, tmp_d, tmp_h):
    """``resample_3d_backward_planes`` over all planes, in ``tmp_d.shape[0]`` chunks in
    parallel."""
    nb = g.shape[0]
    chunks = tmp_d.shape[0]
    for c in prange(chunks):
        lo, hi = c * nb // chunks, (c + 1) * nb // chunks
        resample_3d_backward_planes(
            g, id_t, wd_t, rows_d, ih_t, wh_t, rows_h, iw_t, ww_t, gin, lo, hi, tmp_d[c], tmp_h[c]
        )


# -- entry points ------------------------------------------------------------------------------
def transpose_table(idx, w, n_in):
    """The transposed table of one axis: ``(idx_t, w_t)``, ``(T', n_in)``, for each input
    position the outputs whose taps read it (in increasing order, a repeated tap once per
    reading) with their weights, padded with the index ``n_out`` (a zero column) and weight
    0 to ``T'``, the largest count (4 for 3: ``_gather_rows`` has a loop for 4)."""
    n_taps, n_out = idx.shape
    flat = idx.T.ravel()  # (output, tap) order
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=n_in)
    width = max(int(counts.max()) if counts.size else 1, 1)
    width = 4 if width == 3 else width
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(flat.size) - np.repeat(starts, counts)
    src = flat[order]
    idx_t = np.full((width, n_in), n_out, np.int64)
    w_t = np.zeros((width, n_in), w.dtype)
    idx_t[slot, src] = order // n_taps
    w_t[slot, src] = w.T.ravel()[order]
    return idx_t, w_t


def _chunks(planes, work):
    if work < PARALLEL_MIN or planes < 2:
        return 0
    return min(planes, threads.get_num_threads())


def resample(x, tables, out):
    """``out`` ``(B, *size)`` from ``x`` ``(B, *in_size)`` (1 to 3 spatial dims) with one
    ``(idx, w, rows)`` table per axis."""
    k = x.ndim - 1
    args = []
    for j, (idx, w, rows) in enumerate(tables):
        args += [idx, w] if j == k - 1 else [idx, w, rows]
    chunks = _chunks(x.shape[0], x.size + out.size)
    n = max(chunks, 1)
    if k == 1:
        planes = np.arange(x.shape[0])
        if chunks:
            resample_1d(x, *args, out, planes, chunks)
        else:
            resample_1d_planes(x, *args, out, 0, x.shape[0], planes)
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
        run = resample_2d_planes if k == 2 else resample_3d_planes
        run(x, *args, out, 0, x.shape[0], *[t[0] for t in scratch])


def resample_backward(g, tables, gin, transposed):
    """The adjoint of ``resample``: the input gradient ``gin`` ``(B, *in_size)`` from
    ``g`` ``(B, *size)``, with the forward's tables and each axis's transposed table
    (``transpose_table``)."""
    k = g.ndim - 1
    chunks = _chunks(g.shape[0], g.size + gin.size)
    n = max(chunks, 1)
    ow = g.shape[-1]
    tmp_h = np.empty((n, 1 if k == 1 else gin.shape[-2], ow + 1), g.dtype)
    tmp_h[:, :, ow] = 0.0
    if k == 1:
        row0 = np.zeros(1, np.int64)
        if chunks:
            resample_1d_backward(g, *transposed[0], gin, tmp_h, row0)
        else:
            resample_1d_backward_planes(g, *transposed[0], gin, 0, g.shape[0], tmp_h[0], row0)
        return
    args = []
    for (_, _, rows), (idx_t, w_t) in zip(tables[:-1], transposed[:-1]):
        args += [idx_t, w_t, rows]
    args += list(transposed[-1])
    if k == 2:
        if chunks:
            resample_2d_backward(g, *args, gin, tmp_h)
        else:
            resample_2d_backward_planes(g, *args, gin, 0, g.shape[0], tmp_h[0])
        return
    tmp_d = np.empty((n, gin.shape[1], g.shape[2] * g.shape[3]), g.dtype)
    if chunks:
        resample_3d_backward(g, *args, gin, tmp_d, tmp_h)
    else:
        resample_3d_backward_planes(g, *args, gin, 0, g.shape[0], tmp_d[0], tmp_h[0])
