"""The sliding-window kernels (``numbagrad/kernels/cpu/conv.py``) against NumPy loops:
``im2col``/``col2im`` over strides, padding and dilation (each row's in-bounds span), and
the max pooling kernel without bounds tests against the general one (NaN, -inf, ties)."""

import numpy as np
import pytest

from numbagrad.kernels.cpu import conv as K

rng = np.random.default_rng(5)


def _ref_im2col(x, kernel, stride, pad, dil, osz):
    nb, nc = x.shape[:2]
    out = np.zeros((nc, *kernel, nb, int(np.prod(osz))), x.dtype)
    for c in range(nc):
        for i, j, k in np.ndindex(*kernel):
            for b in range(nb):
                col = out[c, i, j, k, b].reshape(osz)
                for z, y, xx in np.ndindex(*osz):
                    iz = z * stride[0] - pad[0] + i * dil[0]
                    iy = y * stride[1] - pad[1] + j * dil[1]
                    ix = xx * stride[2] - pad[2] + k * dil[2]
                    if 0 <= iz < x.shape[2] and 0 <= iy < x.shape[3] and 0 <= ix < x.shape[4]:
                        col[z, y, xx] = x[b, c, iz, iy, ix]
    return out


@pytest.mark.parametrize("trial", range(12))
def test_im2col_and_col2im_match_loops(trial):
    r = np.random.default_rng(trial)
    size = tuple(int(v) for v in r.integers(1, 7, 3))
    kernel = tuple(int(v) for v in r.integers(1, 4, 3))
    stride = tuple(int(v) for v in r.integers(1, 4, 3))
    dil = tuple(int(v) for v in r.integers(1, 3, 3))
    pad = tuple(int(r.integers(0, k + 2)) for k in kernel)  # padding wider than half a window too
    osz = tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(size, kernel, stride, pad, dil)
    )
    if min(osz) <= 0:
        osz = (1, 1, 1)
        pad = tuple(k * d for k, d in zip(kernel, dil))  # every window partly in the padding
    x = r.standard_normal((2, 3, *size)).astype(np.float32)
    cols = np.full((3, *kernel, 2, int(np.prod(osz))), 7.0, np.float32)
    K.im2col(x, *kernel, *stride, *pad, *dil, *osz, cols)
    np.testing.assert_array_equal(cols, _ref_im2col(x, kernel, stride, pad, dil, osz))
    # col2im is im2col's adjoint: <im2col(x), g> == <x, col2im(g)>
    g = r.standard_normal(cols.shape).astype(np.float64)
    back = np.zeros(x.shape, np.float64)
    K.col2im(g, *kernel, *stride, *pad, *dil, *osz, back)
    lhs = float((_ref_im2col(x.astype(np.float64), kernel, stride, pad, dil, osz) * g).sum())
    assert lhs == pytest.approx(float((x * back).sum()), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("trial", range(20))
def test_max_pool_inside_matches_the_general_kernel(trial):
    r = np.random.default_rng(100 + trial)
    h, w = (int(v) for v in r.integers(1, 9, 2))
    kh, kw = (int(r.integers(1, n + 1)) for n in (h, w))
    sh, sw, dh, dw = (int(v) for v in r.integers(1, 3, 4))
    while (kh - 1) * dh >= h:
        dh, kh = 1, min(kh, h)
    while (kw - 1) * dw >= w:
        dw, kw = 1, min(kw, w)
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    values = np.array([0.0, 1.0, 1.0, -np.inf, np.nan, 2.0, -1.0], np.float32)
    x = r.choice(values, size=(5, h, w)).astype(np.float32)
    general = np.empty((5, 1, oh, ow), np.int64)
    K.max_pool_indices(x.reshape(5, 1, h, w), 1, kh, kw, 1, sh, sw, 0, 0, 0, 1, dh, dw, general)
    inside = np.empty((5, oh, ow), np.int64)
    K.max_pool_indices_inside(x, kh, kw, sh, sw, dh, dw, inside)
    np.testing.assert_array_equal(inside, general.reshape(5, oh, ow))
