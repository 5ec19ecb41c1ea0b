"""Sliding-window kernels of the convolution and pooling layers (NOTE [Convolution
design] in ``numbagrad/nn/_conv.py``).

Every kernel works on a 3-D spatial layout ``(B, C, D, H, W)``: 1-D and 2-D inputs come
with size-1 leading spatial dims and a window of 1 there, so one kernel serves all ranks.
``B`` is every leading dim folded together (the batch, and any ``vmap`` dims).

- ``im2col``: the columns of a convolution, ``(C, kd, kh, kw, B, L)`` with ``L`` the
  output positions in C order (PyTorch's ``unfold`` layout with the batch moved after the
  column index, so that a convolution's product is one GEMM over ``B * L``); positions in
  the zero padding read 0.
- ``col2im``: its adjoint, the columns summed back into a ``(B, C, D, H, W)`` image
  (PyTorch's ``fold``); a column entry in the padding is dropped.
- ``max_pool_indices`` / ``adaptive_max_indices``: for each output position the flat
  index (into the unpadded ``D*H*W`` plane) of the maximum of its window, as PyTorch's
  CPU kernels choose it (``val > max || isnan(val)`` from ``-inf``).
- ``gather_rows`` / ``scatter_add_rows``: the pooled values at those indices, and the
  adjoint that adds a gradient back at them (one row per plane); ``put_rows`` writes
  values at such indices (``max_unpool``).

Arguments are C-contiguous arrays whose shapes the caller checked; nothing is checked
here (Numba does no bounds checks): the caller passes windows whose every in-bounds tap
lies inside the arrays. Parallel over ``B * C`` planes (``prange``), each plane written by
one thread only.
"""

import numpy as np
from numba import prange

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "adaptive_max_indices",
    "col2im",
    "gather_rows",
    "im2col",
    "max_pool_indices",
    "max_pool_indices_inside",
    "put_rows",
    "scatter_add_rows",
]


@njit(cache=True, nogil=True)
def _valid_span(x0, s, n, o):
    """``(lo, hi)``: the outputs ``t`` in ``[0, o)`` whose tap ``x0 + t * s`` lies in
    ``[0, n)`` form the range ``[lo, hi)`` (``s > 0``); the others read the padding."""
    lo = 0 if x0 >= 0 else (s - 1 - x0) // s
    hi = (n - 1 - x0) // s + 1 if n - 1 - x0 >= 0 else 0
    hi = min(hi, o)
    return min(lo, hi), hi


@njit(cache=True, parallel=True, nogil=True)
def im2col(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, out):
    """``out[c, i, j, k, b, (z, y, x)] = x[b, c, z*sd - pd + i*dd, y*sh - ph + j*dh,
    x*sw - pw + k*dw]`` (0 outside ``x``); ``x`` is ``(B, C, D, H, W)``, ``out``
    ``(C, kd, kh, kw, B, od*oh*ow)``. Each output row splits into a zero run, a copy
    (contiguous at stride 1) and a zero run, found once per tap (``_valid_span``)."""
    nb, nc, nd, nh, nw = x.shape
    for bc in prange(nb * nc):
        b = bc // nc
        c = bc % nc
        for i in range(kd):
            for j in range(kh):
                for k in range(kw):
                    col = out[c, i, j, k, b]
                    ix0 = k * dw - pw
                    lo, hi = _valid_span(ix0, sw, nw, ow)
                    for z in range(od):
                        iz = z * sd - pd + i * dd
                        base_z = z * oh * ow
                        if iz < 0 or iz >= nd:
                            for t in range(oh * ow):
                                col[base_z + t] = 0
                            continue
                        for y in range(oh):
                            iy = y * sh - ph + j * dh
                            base = base_z + y * ow
                            if iy < 0 or iy >= nh:
                                for xx in range(ow):
                                    col[base + xx] = 0
                                continue
                            row = x[b, c, iz, iy]
                            for xx in range(lo):
                                col[base + xx] = 0
                            if sw == 1:
                                src = row[ix0 + lo : ix0 + hi]
                                dst = col[base + lo : base + hi]
                                for t in range(hi - lo):
                                    dst[t] = src[t]
                            else:
                                for xx in range(lo, hi):
                                    col[base + xx] = row[ix0 + xx * sw]
                            for xx in range(hi, ow):
                                col[base + xx] = 0


@njit(cache=True, parallel=True, nogil=True)
def col2im(cols, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, out):
    """The adjoint of ``im2col``: ``out`` (``(B, C, D, H, W)``, zero-filled) gets each
    column entry ``cols[c, i, j, k, b, (z, y, x)]`` added at the position ``im2col`` read
    it from; entries in the padding are dropped."""
    nb, nc, nd, nh, nw = out.shape
    for bc in prange(nb * nc):
        b = bc // nc
        c = bc % nc
        for i in range(kd):
            for j in range(kh):
                for k in range(kw):
                    col = cols[c, i, j, k, b]
                    ix0 = k * dw - pw
                    lo, hi = _valid_span(ix0, sw, nw, ow)
                    for z in range(od):
                        iz = z * sd - pd + i * dd
                        if iz < 0 or iz >= nd:
                            continue
                        base_z = z * oh * ow
                        for y in range(oh):
                            iy = y * sh - ph + j * dh
                            if iy < 0 or iy >= nh:
                                continue
                            row = out[b, c, iz, iy]
                            base = base_z + y * ow
                            if sw == 1:
                                src = col[base + lo : base + hi]
                                dst = row[ix0 + lo : ix0 + hi]
                                for t in range(hi - lo):
                                    dst[t] += src[t]
                            else:
                                for xx in range(lo, hi):
                                    row[ix0 + xx * sw] += col[base + xx]


@njit(cache=True, parallel=True, nogil=True)
def max_pool_indices(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, out):
    """``out[p, z, y, x]``: the flat index ``(iz * H + iy) * W + ix`` into plane ``p`` of
    ``x`` (``(P, D, H, W)``) of the first maximum (NaN first) of the window at ``(z, y,
    x)``; taps in the padding are skipped, and a window with no tap inside (possible with
    dilation) gets -1, which the caller masks."""
    npl, nd, nh, nw = x.shape
    _, od, oh, ow = out.shape
    for p in prange(npl):
        xp = x[p]
        for z in range(od):
            z0 = z * sd - pd
            for y in range(oh):
                y0 = y * sh - ph
                for xx in range(ow):
                    x0 = xx * sw - pw
                    best = -1
                    first = -1
                    bv = -np.inf
                    for i in range(kd):
                        iz = z0 + i * dd
                        if iz < 0 or iz >= nd:
                            continue
                        for j in range(kh):
                            iy = y0 + j * dh
                            if iy < 0 or iy >= nh:
                                continue
                            for k in range(kw):
                                ix = x0 + k * dw
                                if ix < 0 or ix >= nw:
                                    continue
                                if first < 0:
                                    first = (iz * nh + iy) * nw + ix
                                v = xp[iz, iy, ix]
                                if v > bv or np.isnan(v):
                                    bv = v
                                    best = (iz * nh + iy) * nw + ix
                    out[p, z, y, xx] = best if best >= 0 else first


@njit(cache=True, parallel=True, nogil=True)
def max_pool_indices_inside(x, kh, kw, sh, sw, dh, dw, out):
    """``max_pool_indices`` of ``x`` (``(P, H, W)``) without padding, for windows that all
    lie inside the planes (the caller checks ``(o - 1) * s + (k - 1) * d < n`` in each dim):
    no tap to skip, so no bounds test in the loop; the same indices (first maximum, NaN
    wins, the first tap when all are -inf)."""
    npl, _, nw = x.shape
    _, oh, ow = out.shape
    for p in prange(npl):
        for y in range(oh):
            y0 = y * sh
            for xx in range(ow):
                x0 = xx * sw
                best = y0 * nw + x0
                bv = -np.inf
                for j in range(kh):
                    iy = y0 + j * dh
                    for k in range(kw):
                        ix = x0 + k * dw
                        v = x[p, iy, ix]
                        if v > bv or np.isnan(v):
                            bv = v
                            best = iy * nw + ix
                out[p, y, xx] = best


@njit(cache=True, parallel=True, nogil=True)
def adaptive_max_indices(x, out):
    """``adaptive_max_pool``'s argmax (first maximum, NaN first) of each window: output
    ``(z, y, x)`` of ``out`` (``(P, od, oh, ow)``) covers ``[floor(z D / od), ceil((z + 1)
    D / od))`` and likewise in ``H`` and ``W``; flat indices into ``x``'s ``(D, H, W)``
    planes."""
    npl, nd, nh, nw = x.shape
    _, od, oh, ow = out.shape
    for p in prange(npl):
        xp = x[p]
        for z in range(od):
            z0 = (z * nd) // od
            z1 = ((z + 1) * nd + od - 1) // od
            for y in range(oh):
                y0 = (y * nh) // oh
                y1 = ((y + 1) * nh + oh - 1) // oh
                for xx in range(ow):
                    x0 = (xx * nw) // ow
                    x1 = ((xx + 1) * nw + ow - 1) // ow
                    best = (z0 * nh + y0) * nw + x0
                    bv = -np.inf
                    for iz in range(z0, z1):
                        for iy in range(y0, y1):
                            for ix in range(x0, x1):
                                v = xp[iz, iy, ix]
                                if v > bv or np.isnan(v):
                                    bv = v
                                    best = (iz * nh + iy) * nw + ix
                    out[p, z, y, xx] = best


@njit(cache=True, parallel=True, nogil=True)
def gather_rows(x, idx, out):
    """``out[r, q] = x[r, idx[r, q]]`` for ``x`` ``(R, P)`` and ``idx``/``out`` ``(R, Q)``
    (every index in ``[0, P)``: the pooling kernels' own output)."""
    for r in prange(x.shape[0]):
        for q in range(idx.shape[1]):
            out[r, q] = x[r, idx[r, q]]


@njit(cache=True, parallel=True, nogil=True)
def scatter_add_rows(g, idx, out):
    """``out[r, idx[r, q]] += g[r, q]`` (``out`` ``(R, P)`` zero-filled; indices in ``[0,
    P)``); each row is one thread's, so there are no races."""
    for r in prange(g.shape[0]):
        for q in range(idx.shape[1]):
            out[r, idx[r, q]] += g[r, q]


@njit(cache=True, parallel=True, nogil=True)
def put_rows(g, idx, out):
    """``out[r, idx[r, q]] = g[r, q]`` in order of ``q`` (the last of repeated indices
    wins); ``out`` zero-filled, indices in range (checked by the caller)."""
    for r in prange(g.shape[0]):
        for q in range(idx.shape[1]):
            out[r, idx[r, q]] = g[r, q]
