"""Kernels of ``grid_sample`` (NOTE [Grid sampling] in ``numbagrad/nn/_grid.py``).

- ``grid_sample_2d`` / ``grid_sample_3d``: the input ``(N, C, H, W)`` (or ``(N, C, D, H,
  W)``) sampled at the grid ``(N, Ho, Wo, 2)`` (or ``(N, Do, Ho, Wo, 3)``) of normalised
  coordinates ``(x, y[, z])`` in ``[-1, 1]``, as PyTorch's CPU ``grid_sampler_2d``/``3d``:
  ``mode`` 0 bilinear, 1 nearest, 2 bicubic (2-D only); ``padding`` 0 zeros, 1 border,
  2 reflection; ``align`` PyTorch's ``align_corners``.
- ``grid_sample_2d_backward`` / ``grid_sample_3d_backward``: the gradients of the input
  (added into ``gi`` when ``need_input``) and of the grid (written to ``gg``) for the
  output gradient ``g``, as PyTorch's ``grid_sampler_*_backward``.

The coordinate helpers return the source coordinate and its derivative with respect to the
grid value (the unnormalising scale times the padding's 0 or +-1), so that the forward and
the backward share one formula. Every tap is bounds-checked here (``_index``): a grid value
that is NaN, infinite or far outside lands out of bounds and reads 0, never past the array.
Arrays are C-contiguous float32/float64 of the shapes the caller checked; parallel over the
batch (``prange``), each image's gradient written by one thread only.
"""

import math

import numpy as np
from numba import prange

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "grid_sample_2d",
    "grid_sample_2d_backward",
    "grid_sample_3d",
    "grid_sample_3d_backward",
]

_CUBIC_A = -0.75  # PyTorch's bicubic constant (as OpenCV's)


@njit(cache=True, nogil=True)
def _unnormalize(g, size, align):
    """Grid value ``g`` in ``[-1, 1]`` to a pixel coordinate, and ``d coord / d g``."""
    if align:
        return (g + 1.0) * 0.5 * (size - 1), 0.5 * (size - 1)
    return ((g + 1.0) * size - 1.0) * 0.5, 0.5 * size


@njit(cache=True, nogil=True)
def _clip(x, size):
    """``x`` clipped to ``[0, size - 1]`` and its derivative (0 where clipped)."""
    if x < 0.0:
        return 0.0, 0.0
    if x > size - 1:
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
def grid_sample_2d(x, grid, mode, padding, align, out):
    n_img, n_ch, h_in, w_in = x.shape
    h_out, w_out = grid.shape[1], grid.shape[2]
    for n in prange(n_img):
        for h in range(h_out):
            for w in range(w_out):
                gx = grid[n, h, w, 0]
                gy = grid[n, h, w, 1]
                if mode == 2:
                    ix, _ = _unnormalize(gx, w_in, align)
                    iy, _ = _unnormalize(gy, h_in, align)
                    fx = math.floor(ix)
                    fy = math.floor(iy)
                    wx = _cubic(ix - fx)
                    wy = _cubic(iy - fy)
                    for c in range(n_ch):
                        acc = 0.0
                        for i in range(4):
                            yy = _cubic_tap(fy - 1.0 + i, h_in, padding, align)
                            row = 0.0
                            if yy >= 0:
                                for j in range(4):
                                    xx = _cubic_tap(fx - 1.0 + j, w_in, padding, align)
                                    if xx >= 0:
                                        row += wx[j] * x[n, c, yy, xx]
                            acc += wy[i] * row
                        out[n, c, h, w] = acc
                elif mode == 1:
                    ix, _ = _source(gx, w_in, padding, align)
                    iy, _ = _source(gy, h_in, padding, align)
                    xx = _index(np.rint(ix), w_in)
                    yy = _index(np.rint(iy), h_in)
                    for c in range(n_ch):
                        out[n, c, h, w] = x[n, c, yy, xx] if xx >= 0 and yy >= 0 else 0.0
                else:
                    ix, _ = _source(gx, w_in, padding, align)
                    iy, _ = _source(gy, h_in, padding, align)
                    fx = math.floor(ix)
                    fy = math.floor(iy)
                    tx = ix - fx
                    ty = iy - fy
                    x0 = _index(fx, w_in)
                    x1 = _index(fx + 1.0, w_in)
                    y0 = _index(fy, h_in)
                    y1 = _index(fy + 1.0, h_in)
                    for c in range(n_ch):
                        acc = 0.0
                        if y0 >= 0 and x0 >= 0:
                            acc += (1.0 - tx) * (1.0 - ty) * x[n, c, y0, x0]
                        if y0 >= 0 and x1 >= 0:
                            acc += tx * (1.0 - ty) * x[n, c, y0, x1]
                        if y1 >= 0 and x0 >= 0:
                            acc += (1.0 - tx) * ty * x[n, c, y1, x0]
                        if y1 >= 0 and x1 >= 0:
                            acc += tx * ty * x[n, c, y1, x1]
                        out[n, c, h, w] = acc


@njit(cache=True, parallel=True, nogil=True)
def grid_sample_2d_backward(g, x, grid, mode, padding, align, need_input, gi, gg):
    n_img, n_ch, h_in, w_in = x.shape
    h_out, w_out = grid.shape[1], grid.shape[2]
    for n in prange(n_img):
        for h in range(h_out):
            for w in range(w_out):
                gx = grid[n, h, w, 0]
                gy = grid[n, h, w, 1]
                dx = 0.0
                dy = 0.0
                if mode == 2:
                    ix, sx = _unnormalize(gx, w_in, align)
                    iy, sy = _unnormalize(gy, h_in, align)
                    fx = math.floor(ix)
                    fy = math.floor(iy)
                    wx = _cubic(ix - fx)
                    wy = _cubic(iy - fy)
                    dwx = _cubic_grad(ix - fx)
                    dwy = _cubic_grad(iy - fy)
                    for i in range(4):
                        yy = _cubic_tap(fy - 1.0 + i, h_in, padding, align)
                        if yy < 0:
                            continue
                        for j in range(4):
                            xx = _cubic_tap(fx - 1.0 + j, w_in, padding, align)
                            if xx < 0:
                                continue
                            for c in range(n_ch):
                                go = g[n, c, h, w]
                                if need_input:
                                    gi[n, c, yy, xx] += wy[i] * wx[j] * go
                                v = x[n, c, yy, xx] * go
                                dx += v * dwx[j] * wy[i]
                                dy += v * wx[j] * dwy[i]
                    gg[n, h, w, 0] = dx * sx
                    gg[n, h, w, 1] = dy * sy
                elif mode == 1:
                    gg[n, h, w, 0] = 0.0
                    gg[n, h, w, 1] = 0.0
                    if need_input:
                        ix, _ = _source(gx, w_in, padding, align)
                        iy, _ = _source(gy, h_in, padding, align)
                        xx = _index(np.rint(ix), w_in)
                        yy = _index(np.rint(iy), h_in)
                        if xx >= 0 and yy >= 0:
                            for c in range(n_ch):
                                gi[n, c, yy, xx] += g[n, c, h, w]
                else:
                    ix, sx = _source(gx, w_in, padding, align)
                    iy, sy = _source(gy, h_in, padding, align)
                    fx = math.floor(ix)
                    fy = math.floor(iy)
                    tx = ix - fx
                    ty = iy - fy
                    for corner in range(4):
                        bx = corner & 1
                        by = corner >> 1
                        xx = _index(fx + bx, w_in)
                        yy = _index(fy + by, h_in)
                        if xx < 0 or yy < 0:
                            continue
                        ax = tx if bx else 1.0 - tx
                        ay = ty if by else 1.0 - ty
                        sgx = 1.0 if bx else -1.0
                        sgy = 1.0 if by else -1.0
                        for c in range(n_ch):
                            go = g[n, c, h, w]
                            if need_input:
                                gi[n, c, yy, xx] += ax * ay * go
                            v = x[n, c, yy, xx] * go
                            dx += v * sgx * ay
                            dy += v * ax * sgy
                    gg[n, h, w, 0] = dx * sx
                    gg[n, h, w, 1] = dy * sy


@njit(cache=True, parallel=True, nogil=True)
def grid_sample_3d(x, grid, mode, padding, align, out):
    n_img, n_ch, d_in, h_in, w_in = x.shape
    d_out, h_out, w_out = grid.shape[1], grid.shape[2], grid.shape[3]
    for n in prange(n_img):
        for d in range(d_out):
            for h in range(h_out):
                for w in range(w_out):
                    ix, _ = _source(grid[n, d, h, w, 0], w_in, padding, align)
                    iy, _ = _source(grid[n, d, h, w, 1], h_in, padding, align)
                    iz, _ = _source(grid[n, d, h, w, 2], d_in, padding, align)
                    if mode == 1:
                        xx = _index(np.rint(ix), w_in)
                        yy = _index(np.rint(iy), h_in)
                        zz = _index(np.rint(iz), d_in)
                        for c in range(n_ch):
                            ok = xx >= 0 and yy >= 0 and zz >= 0
                            out[n, c, d, h, w] = x[n, c, zz, yy, xx] if ok else 0.0
                        continue
                    fx = math.floor(ix)
                    fy = math.floor(iy)
                    fz = math.floor(iz)
                    tx = ix - fx
                    ty = iy - fy
                    tz = iz - fz
                    for c in range(n_ch):
                        out[n, c, d, h, w] = 0.0
                    for corner in range(8):
                        bx = corner & 1
                        by = (corner >> 1) & 1
                        bz = corner >> 2
                        xx = _index(fx + bx, w_in)
                        yy = _index(fy + by, h_in)
                        zz = _index(fz + bz, d_in)
                        if xx < 0 or yy < 0 or zz < 0:
                            continue
                        wgt = (tx if bx else 1.0 - tx) * (ty if by else 1.0 - ty)
                        wgt *= tz if bz else 1.0 - tz
                        for c in range(n_ch):
                            out[n, c, d, h, w] += wgt * x[n, c, zz, yy, xx]


@njit(cache=True, parallel=True, nogil=True)
def grid_sample_3d_backward(g, x, grid, mode, padding, align, need_input, gi, gg):
    n_img, n_ch, d_in, h_in, w_in = x.shape
    d_out, h_out, w_out = grid.shape[1], grid.shape[2], grid.shape[3]
    for n in prange(n_img):
        for d in range(d_out):
            for h in range(h_out):
                for w in range(w_out):
                    ix, sx = _source(grid[n, d, h, w, 0], w_in, padding, align)
                    iy, sy = _source(grid[n, d, h, w, 1], h_in, padding, align)
                    iz, sz = _source(grid[n, d, h, w, 2], d_in, padding, align)
                    gg[n, d, h, w, 0] = 0.0
                    gg[n, d, h, w, 1] = 0.0
                    gg[n, d, h, w, 2] = 0.0
                    if mode == 1:
                        if need_input:
                            xx = _index(np.rint(ix), w_in)
                            yy = _index(np.rint(iy), h_in)
                            zz = _index(np.rint(iz), d_in)
                            if xx >= 0 and yy >= 0 and zz >= 0:
                                for c in range(n_ch):
                                    gi[n, c, zz, yy, xx] += g[n, c, d, h, w]
                        continue
                    fx = math.floor(ix)
                    fy = math.floor(iy)
                    fz = math.floor(iz)
                    tx = ix - fx
                    ty = iy - fy
                    tz = iz - fz
                    dx = 0.0
                    dy = 0.0
                    dz = 0.0
                    for corner in range(8):
                        bx = corner & 1
                        by = (corner >> 1) & 1
                        bz = corner >> 2
                        xx = _index(fx + bx, w_in)
                        yy = _index(fy + by, h_in)
                        zz = _index(fz + bz, d_in)
                        if xx < 0 or yy < 0 or zz < 0:
                            continue
                        ax = tx if bx else 1.0 - tx
                        ay = ty if by else 1.0 - ty
                        az = tz if bz else 1.0 - tz
                        sgx = 1.0 if bx else -1.0
                        sgy = 1.0 if by else -1.0
                        sgz = 1.0 if bz else -1.0
                        for c in range(n_ch):
                            go = g[n, c, d, h, w]
                            if need_input:
                                gi[n, c, zz, yy, xx] += ax * ay * az * go
                            v = x[n, c, zz, yy, xx] * go
                            dx += v * sgx * ay * az
                            dy += v * ax * sgy * az
                            dz += v * ax * ay * sgz
                    gg[n, d, h, w, 0] = dx * sx
                    gg[n, d, h, w, 1] = dy * sy
                    gg[n, d, h, w, 2] = dz * sz
