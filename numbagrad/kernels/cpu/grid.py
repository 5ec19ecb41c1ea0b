"""Kernels of ``grid_sample`` (NOTE [Grid sampling] in ``numbagrad/nn/_grid.py``).

Sampling the input ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at the grid ``(N, Ho, Wo, 2)``
(or ``(N, Do, Ho, Wo, 3)``) of normalised coordinates ``(x, y[, z])`` in ``[-1, 1]``, as
PyTorch's CPU ``grid_sampler_2d``/``3d`` (``mode`` 0 bilinear, 1 nearest, 2 bicubic, 2-D
only; ``padding`` 0 zeros, 1 border, 2 reflection; ``align`` PyTorch's ``align_corners``),
runs in two passes:

- ``grid_taps_2d`` / ``grid_taps_3d``: per grid point ``p`` its taps ``k`` (4 or 8 corners,
  1 nearest pixel, 16 bicubic taps): the flat index into the spatial plane (``S``, the plane
  size, for a tap
  outside: one past the plane, where the caller's planes hold a 0 and the weight is 0), the
  weight and, when ``need_grad``, the weight's derivative with
  respect to each grid coordinate; ``(N, P, K)`` arrays, parallel over points;
- ``apply_taps``: the output plane by plane (``x`` is ``(N, C, S + 1)``, its last entry 0,
  so that the inner loop has no branch), ``out[n, c, p] = sum_k w * x[n, c, idx]``,
  and ``apply_taps_backward``: the input gradient (a scatter-add into each plane) and the
  per-channel grid gradient ``sum_k g x[idx] dw`` (summed over channels by the caller);
  parallel over the ``N * C`` planes, each written by one thread only.

Computing the taps once per point (not per channel), walking each plane with contiguous
reads of the output and of the gradient, branch-free inner loops and register accumulators
took the 2-D bilinear case (8 x 16 x 64 x 64, float32, the shared 2-core machine) from 9 to
1.3 ms forward and from about 45 to 5 ms forward and backward; PyTorch's CPU kernels took 0.9
and 2.7 ms in the same runs (``asv_bench/benchmarks/bench_grid.py``).

The coordinate helpers return the source coordinate and its derivative with respect to the
grid value (the unnormalising scale times the padding's 0 or +-1), so that the forward and
the backward share one formula. Every tap is bounds-checked here (``_index``): a grid value
that is NaN, infinite or far outside lands out of bounds and reads 0, never past the array.
Arrays are C-contiguous float32/float64 of the shapes the caller checked; parallel
(``prange``) over the grid points for the taps and over the ``N * C`` planes for the rest,
each plane's gradient written by one thread only.
"""

import math

import numpy as np
from numba import prange

from numbagrad.kernels.cpu._jit import njit

__all__ = ["apply_taps", "apply_taps_backward", "grid_taps_2d", "grid_taps_3d"]

_CUBIC_A = -0.75  # PyTorch's bicubic constant (as OpenCV's)


@njit(cache=True, nogil=True)
def _unnormalize(g, size, align):
    """Grid value ``g`` in ``[-1, 1]`` to a pixel coordinate, and ``d coord / d g``."""
    if align:
        return (g + 1.0) * 0.5 * (size - 1), 0.5 * (size - 1)
    return ((g + 1.0) * size - 1.0) * 0.5, 0.5 * size


@njit(cache=True, nogil=True)
def _clip(x, size):
    """``x`` clipped to ``[0, size - 1]`` and its derivative: 0 where clipped and on the
    borders themselves, which PyTorch's ``clip_coordinates_set_grad`` counts as out of
    bounds (a grid value of exactly +-1 under ``align_corners=True`` gets no gradient)."""
    if x <= 0.0:
        return 0.0, 0.0
    if x >= size - 1:
        return float(size - 1), 0.0
    return x, 1.0


@njit(cache=True, nogil=True)
def _reflect(x, twice_low, twice_high):
    """``x`` reflected into ``[twice_low / 2, twice_high / 2]`` and its derivative (+-1)."""
    if twice_low == twice_high:
        return 0.0, 0.0
    lo = twice_low / 2.0
    span = (twice_high - twice_low) / 2.0
    x = x - lo
    m = 1.0
    if x < 0.0:
        m = -1.0
        x = -x
    extra = np.fmod(x, span)
    flips = math.floor(x / span)
    if flips % 2.0 == 0.0:
        return extra + lo, m
    return span - extra + lo, -m


@njit(cache=True, nogil=True)
def _pad(x, size, padding, align):
    """A pixel coordinate under the padding mode, and its derivative."""
    if padding == 1:
        return _clip(x, size)
    if padding == 2:
        if align:
            r, m = _reflect(x, 0.0, 2.0 * (size - 1))
        else:
            r, m = _reflect(x, -1.0, 2.0 * size - 1.0)
        c, m2 = _clip(r, size)
        return c, m * m2
    return x, 1.0


@njit(cache=True, nogil=True)
def _source(g, size, padding, align):
    """Grid value to the padded source coordinate and ``d coord / d g``."""
    x, s = _unnormalize(g, size, align)
    x, m = _pad(x, size, padding, align)
    return x, s * m


@njit(cache=True, nogil=True)
def _index(f, size):
    """The integral coordinate ``f`` as an index into ``[0, size)``, or -1 outside (NaN too)."""
    if f >= 0.0 and f < size:
        return int(f)
    return -1


@njit(cache=True, nogil=True)
def _cubic(t):
    """The four bicubic weights of fraction ``t`` (taps at -1, 0, 1, 2)."""
    a = _CUBIC_A
    x0 = t + 1.0
    x1 = t
    x2 = 1.0 - t
    x3 = 2.0 - t
    w0 = ((a * x0 - 5.0 * a) * x0 + 8.0 * a) * x0 - 4.0 * a
    w1 = ((a + 2.0) * x1 - (a + 3.0)) * x1 * x1 + 1.0
    w2 = ((a + 2.0) * x2 - (a + 3.0)) * x2 * x2 + 1.0
    w3 = ((a * x3 - 5.0 * a) * x3 + 8.0 * a) * x3 - 4.0 * a
    return w0, w1, w2, w3


@njit(cache=True, nogil=True)
def _cubic_grad(t):
    """The derivatives of ``_cubic``'s weights with respect to ``t``."""
    a = _CUBIC_A
    x = -1.0 - t
    d0 = (-3.0 * a * x - 10.0 * a) * x - 8.0 * a
    x = -t
    d1 = (-3.0 * (a + 2.0) * x - 2.0 * (a + 3.0)) * x
    x = 1.0 - t
    d2 = (3.0 * (a + 2.0) * x - 2.0 * (a + 3.0)) * x
    x = 2.0 - t
    d3 = (3.0 * a * x - 10.0 * a) * x + 8.0 * a
    # (PyTorch's get_cubic_coefficients_grad gives these negated and subtracts them)
    return -d0, -d1, -d2, -d3


@njit(cache=True, nogil=True)
def _cubic_tap(f, size, padding, align):
    """The index of bicubic tap coordinate ``f`` (padded as PyTorch's ``get_value_bounded``)."""
    c, _ = _pad(f, size, padding, align)
    return _index(c, size)


@njit(cache=True, parallel=True, nogil=True)
def grid_taps_2d(grid, h_in, w_in, mode, padding, align, need_grad, idx, wts, dws):
    n_img, h_out, w_out = grid.shape[0], grid.shape[1], grid.shape[2]
    n_pts = h_out * w_out
    for q in prange(n_img * n_pts):
        n = q // n_pts
        p = q - n * n_pts
        gx = grid[n, p // w_out, p % w_out, 0]
        gy = grid[n, p // w_out, p % w_out, 1]
        if mode == 2:
            ix, sx = _unnormalize(gx, w_in, align)
            iy, sy = _unnormalize(gy, h_in, align)
            fx = math.floor(ix)
            fy = math.floor(iy)
            wx = _cubic(ix - fx)
            wy = _cubic(iy - fy)
            dwx = _cubic_grad(ix - fx)
            dwy = _cubic_grad(iy - fy)
            xs = (
                _cubic_tap(fx - 1.0, w_in, padding, align),
                _cubic_tap(fx, w_in, padding, align),
                _cubic_tap(fx + 1.0, w_in, padding, align),
                _cubic_tap(fx + 2.0, w_in, padding, align),
            )
            for i in range(4):
                yy = _cubic_tap(fy - 1.0 + i, h_in, padding, align)
                for j in range(4):
                    k = 4 * i + j
                    xx = xs[j]
                    if xx < 0 or yy < 0:
                        idx[n, p, k] = h_in * w_in
                        wts[n, p, k] = 0.0
                        if need_grad:
                            dws[n, p, k, 0] = 0.0
                            dws[n, p, k, 1] = 0.0
                        continue
                    idx[n, p, k] = yy * w_in + xx
                    wts[n, p, k] = wy[i] * wx[j]
                    if need_grad:
                        dws[n, p, k, 0] = dwx[j] * wy[i] * sx
                        dws[n, p, k, 1] = wx[j] * dwy[i] * sy
        elif mode == 1:
            ix, _ = _source(gx, w_in, padding, align)
            iy, _ = _source(gy, h_in, padding, align)
            xx = _index(np.rint(ix), w_in)
            yy = _index(np.rint(iy), h_in)
            ok = xx >= 0 and yy >= 0
            idx[n, p, 0] = yy * w_in + xx if ok else h_in * w_in
            wts[n, p, 0] = 1.0 if ok else 0.0
            if need_grad:
                dws[n, p, 0, 0] = 0.0
                dws[n, p, 0, 1] = 0.0
        else:
            ix, sx = _source(gx, w_in, padding, align)
            iy, sy = _source(gy, h_in, padding, align)
            fx = math.floor(ix)
            fy = math.floor(iy)
            tx = ix - fx
            ty = iy - fy
            for k in range(4):
                bx = k & 1
                by = k >> 1
                xx = _index(fx + bx, w_in)
                yy = _index(fy + by, h_in)
                if xx < 0 or yy < 0:
                    idx[n, p, k] = h_in * w_in
                    wts[n, p, k] = 0.0
                    if need_grad:
                        dws[n, p, k, 0] = 0.0
                        dws[n, p, k, 1] = 0.0
                    continue
                ax = tx if bx else 1.0 - tx
                ay = ty if by else 1.0 - ty
                idx[n, p, k] = yy * w_in + xx
                wts[n, p, k] = ax * ay
                if need_grad:
                    dws[n, p, k, 0] = (1.0 if bx else -1.0) * ay * sx
                    dws[n, p, k, 1] = ax * (1.0 if by else -1.0) * sy


@njit(cache=True, parallel=True, nogil=True)
def grid_taps_3d(grid, d_in, h_in, w_in, mode, padding, align, need_grad, idx, wts, dws):
    n_img, d_out, h_out, w_out = grid.shape[0], grid.shape[1], grid.shape[2], grid.shape[3]
    plane = h_out * w_out
    n_pts = d_out * plane
    for q in prange(n_img * n_pts):
        n = q // n_pts
        p = q - n * n_pts
        d = p // plane
        h = (p - d * plane) // w_out
        w = p % w_out
        ix, sx = _source(grid[n, d, h, w, 0], w_in, padding, align)
        iy, sy = _source(grid[n, d, h, w, 1], h_in, padding, align)
        iz, sz = _source(grid[n, d, h, w, 2], d_in, padding, align)
        if mode == 1:
            xx = _index(np.rint(ix), w_in)
            yy = _index(np.rint(iy), h_in)
            zz = _index(np.rint(iz), d_in)
            ok = xx >= 0 and yy >= 0 and zz >= 0
            idx[n, p, 0] = (zz * h_in + yy) * w_in + xx if ok else d_in * h_in * w_in
            wts[n, p, 0] = 1.0 if ok else 0.0
            if need_grad:
                for j in range(3):
                    dws[n, p, 0, j] = 0.0
            continue
        fx = math.floor(ix)
        fy = math.floor(iy)
        fz = math.floor(iz)
        tx = ix - fx
        ty = iy - fy
        tz = iz - fz
        for k in range(8):
            bx = k & 1
            by = (k >> 1) & 1
            bz = k >> 2
            xx = _index(fx + bx, w_in)
            yy = _index(fy + by, h_in)
            zz = _index(fz + bz, d_in)
            if xx < 0 or yy < 0 or zz < 0:
                idx[n, p, k] = d_in * h_in * w_in
                wts[n, p, k] = 0.0
                if need_grad:
                    for j in range(3):
                        dws[n, p, k, j] = 0.0
                continue
            ax = tx if bx else 1.0 - tx
            ay = ty if by else 1.0 - ty
            az = tz if bz else 1.0 - tz
            idx[n, p, k] = (zz * h_in + yy) * w_in + xx
            wts[n, p, k] = ax * ay * az
            if need_grad:
                dws[n, p, k, 0] = (1.0 if bx else -1.0) * ay * az * sx
                dws[n, p, k, 1] = ax * (1.0 if by else -1.0) * az * sy
                dws[n, p, k, 2] = ax * ay * (1.0 if bz else -1.0) * sz


@njit(cache=True, parallel=True, nogil=True)
def apply_taps(x, idx, wts, out):
    n_img, n_ch = x.shape[0], x.shape[1]
    n_pts, n_taps = idx.shape[1], idx.shape[2]
    for q in prange(n_img * n_ch):
        n = q // n_ch
        c = q - n * n_ch
        for p in range(n_pts):
            acc = 0.0
            for k in range(n_taps):
                acc += wts[n, p, k] * x[n, c, idx[n, p, k]]
            out[n, c, p] = acc


@njit(cache=True, parallel=True, nogil=True)
def apply_taps_backward(g, x, idx, wts, dws, need_input, need_grid, gi, gtmp):
    n_img, n_ch = x.shape[0], x.shape[1]
    n_pts, n_taps = idx.shape[1], idx.shape[2]
    three = dws.shape[3] == 3
    for q in prange(n_img * n_ch):
        n = q // n_ch
        c = q - n * n_ch
        if need_input:
            for p in range(n_pts):
                go = g[n, c, p]
                for k in range(n_taps):
                    gi[n, c, idx[n, p, k]] += wts[n, p, k] * go
        if need_grid and not three:
            for p in range(n_pts):
                go = g[n, c, p]
                a0 = 0.0
                a1 = 0.0
                for k in range(n_taps):
                    v = x[n, c, idx[n, p, k]]
                    a0 += v * dws[n, p, k, 0]
                    a1 += v * dws[n, p, k, 1]
                gtmp[n, c, p, 0] = a0 * go
                gtmp[n, c, p, 1] = a1 * go
        elif need_grid:
            for p in range(n_pts):
                go = g[n, c, p]
                a0 = 0.0
                a1 = 0.0
                a2 = 0.0
                for k in range(n_taps):
                    v = x[n, c, idx[n, p, k]]
                    a0 += v * dws[n, p, k, 0]
                    a1 += v * dws[n, p, k, 1]
                    a2 += v * dws[n, p, k, 2]
                gtmp[n, c, p, 0] = a0 * go
                gtmp[n, c, p, 1] = a1 * go
                gtmp[n, c, p, 2] = a2 * go
