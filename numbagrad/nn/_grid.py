"""``grid_sample`` (a primitive) and ``affine_grid`` (a composite).

NOTE [Grid sampling]
``GridSample`` samples ``input`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``) at the grid's
normalised coordinates, as PyTorch's ``grid_sampler_2d``/``3d``. Its forward and its fused
first-order backward are ``@njit`` kernels (``numbagrad/kernels/cpu/grid.py``: the taps of
each grid point once, then each input plane). The
differentiable rules are written with numbagrad ops on the same formula, stated once in
``_taps``: the output is ``sum_k w_k(grid) * input[idx_k(grid)]`` over the interpolation
taps ``k`` (4 or 8 corners, 1 nearest pixel, 16 bicubic taps), each with an index into the
flattened spatial plane, a weight (0 for a tap outside the input) and the weight's
derivative along each grid coordinate. Then

- the input's gradient is a ``scatter_add`` of ``g * w_k`` at ``idx_k``;
- the grid's gradient is ``sum_c g * input[idx_k] * dw_k``;
- the JVP is ``GridSample(t_input, grid) + sum_k input[idx_k] * (dw_k . t_grid)``;

so double backward (PyTorch 2.x supports it with respect to the input, the grid and the
output gradient), forward mode and ``vmap`` of the rules all come from the ops. The
weights are polynomials of the fraction ``t = coord - floor(coord)``; the coordinate is the
unnormalised grid value under the padding mode (clip, reflect: piecewise linear, slopes 0
or +-scale, as PyTorch's ``*_set_grad`` helpers), so the ops' own derivative of ``t`` is the
slope and the second derivatives (the bilinear cross term, the bicubic polynomials) follow.
Nearest sampling has a zero grid gradient, as PyTorch's. The batching rule folds the
``vmap`` dimension into ``N``. CUDA arrays raise ``NotImplementedError`` (docs/gpu.rst).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from numbagrad import _creation as _C
from numbagrad import ops as F
from numbagrad._tensor import Tensor
from numbagrad.kernels import module as kernel_module
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import front

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
    "GridSample",
    "affine_grid",
    "grid_sample",
]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_GRID_KERNELS = kernel_module("grid")  # imported on first use (NOTE [Lazy kernels])
_CUBIC_A = -0.75


def _work_dtype(dt):
    return np.dtype(np.float32) if dt == np.float16 else dt


def _cpu_only(*arrays):
    for a in arrays:
        if not isinstance(a, np.ndarray):
            raise NotImplementedError(
                "grid_sample is not implemented for CUDA tensors yet; move the tensors to "
                "the CPU with .cpu()"
            )


def _planes(x, dt):
    """``x`` as ``(N, C, S + 1)`` planes of the kernels' dtype, a 0 after each plane (where
    the taps outside the input point)."""
    n, c = x.shape[0], x.shape[1]
    s = math.prod(x.shape[2:])
    out = np.empty((n, c, s + 1), dt)
    out[:, :, :s] = x.reshape((n, c, s))
    out[:, :, s] = 0.0
    return out


def _kernel_taps(shape, grid, mode, padding, align, nd, need_grad, dt):
    """The kernels' taps of every grid point: ``(idx, wts, dws)``, ``(N, P, K)`` arrays
    (``dws`` ``(N, P, K, nd)`` when ``need_grad``; NOTE [Grid sampling])."""
    n = grid.shape[0]
    n_pts = math.prod(grid.shape[1:-1])
    k = 1 if mode == 1 else (16 if mode == 2 else 2**nd)
    idx = np.empty((n, n_pts, k), np.int64)
    wts = np.empty((n, n_pts, k), dt)
    dws = np.empty((n, n_pts, k, nd) if need_grad else (1, 1, 1, nd), dt)
    if idx.size:
        gc = np.ascontiguousarray(grid, dtype=dt)
        if nd == 2:
            _GRID_KERNELS.grid_taps_2d(
                gc, shape[2], shape[3], mode, padding, align, need_grad, idx, wts, dws
            )
        else:
            _GRID_KERNELS.grid_taps_3d(
                gc, shape[2], shape[3], shape[4], mode, padding, align, need_grad, idx, wts, dws
            )
    return idx, wts, dws


# -- the taps, in numbagrad ops (NOTE [Grid sampling]) -------------------------------------------
def _unnormalize(g, size, align):
    if align:
        return (g + 1.0) * ((size - 1) / 2.0), (size - 1) / 2.0
    return ((g + 1.0) * size - 1.0) / 2.0, size / 2.0


def _as(mask, like):
    return mask.to(like.dtype)


def _clip(x, size):
    """Clipped to ``[0, size - 1]``, and the slope (0 outside and on the borders
    themselves, as PyTorch's ``clip_coordinates_set_grad``)."""
    inside = _as((x > 0.0) & (x < size - 1.0), x)
    return F.clamp(x, 0.0, size - 1.0), inside


def _reflect(x, twice_low, twice_high):
    if twice_low == twice_high:
        return x * 0.0, x * 0.0
    lo = twice_low / 2.0
    span = (twice_high - twice_low) / 2.0
    d = x - lo
    neg = _as(d < 0.0, x)
    a = F.abs(d)
    extra = F.fmod(a, span)
    odd = _as(F.fmod(F.floor(a / span), 2.0) == 1.0, x)
    out = extra + odd * (span - 2.0 * extra) + lo
    return out, (1.0 - 2.0 * neg) * (1.0 - 2.0 * odd)


def _pad(x, size, padding, align):
    """The coordinate under the padding mode, and the slope it multiplies by (None: 1)."""
    if padding == 1:
        return _clip(x, size)
    if padding == 2:
        if align:
            r, m = _reflect(x, 0.0, 2.0 * (size - 1))
        else:
            r, m = _reflect(x, -1.0, 2.0 * size - 1.0)
        c, m2 = _clip(r, size)
        return c, m * m2
    return x, None


def _cubic(t):
    a = _CUBIC_A
    x0, x2, x3 = t + 1.0, 1.0 - t, 2.0 - t
    return (
        ((a * x0 - 5.0 * a) * x0 + 8.0 * a) * x0 - 4.0 * a,
        ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0,
        ((a + 2.0) * x2 - (a + 3.0)) * x2 * x2 + 1.0,
        ((a * x3 - 5.0 * a) * x3 + 8.0 * a) * x3 - 4.0 * a,
    )


def _cubic_grad(t):
    """``d _cubic(t) / dt``."""
    a = _CUBIC_A
    u, v, s = t + 1.0, 1.0 - t, 2.0 - t
    return (
        (3.0 * a * u - 10.0 * a) * u + 8.0 * a,
        (3.0 * (a + 2.0) * t - 2.0 * (a + 3.0)) * t,
        -((3.0 * (a + 2.0) * v - 2.0 * (a + 3.0)) * v),
        -((3.0 * a * s - 10.0 * a) * s + 8.0 * a),
    )


def _taps(grid, sizes, mode, padding, align):
    """``[(idx, w, dws)]``: per tap, the flat spatial index ``(N, P)`` (int64, 0 where the
    tap is outside), the weight ``(N, P)`` (0 outside) and its derivatives along each grid
    coordinate (None for nearest). ``sizes`` is ``(W, H[, D])``, the grid's coordinate
    order."""
    k = len(sizes)
    n = grid.shape[0]
    g = F.reshape(grid, (n, -1, k))
    strides = [math.prod(sizes[:j]) for j in range(k)]  # x fastest
    per_coord = []  # per coordinate: [(coordinate value, valid mask, weight, dweight)]
    for j in range(k):
        size = sizes[j]
        x, scale = _unnormalize(g[:, :, j], size, align)
        if mode == 2:
            f = F.floor(x)
            t = x - f
            ws, dws = _cubic(t), _cubic_grad(t)
            opts = []
            for i in range(4):
                c, _ = _pad(f + (i - 1.0), size, padding, align)
                opts.append((c, ws[i], dws[i] * scale))
            per_coord.append(opts)
            continue
        x, m = _pad(x, size, padding, align)
        slope = scale if m is None else m * scale
        if mode == 1:
            per_coord.append([(F.round(x), None, None)])
            continue
        f = F.floor(x)
        t = x - f
        per_coord.append([(f, 1.0 - t, -1.0 * slope), (f + 1.0, t, slope)])
    taps = []
    for combo in _product([range(len(p)) for p in per_coord]):
        idx = None
        valid = None
        parts = [per_coord[j][combo[j]] for j in range(k)]
        for j, (c, _, _) in enumerate(parts):
            ok = (c >= 0.0) & (c <= sizes[j] - 1.0)
            valid = ok if valid is None else valid & ok
        vf = _as(valid, g)
        for j, (c, _, _) in enumerate(parts):
            cj = F.where(valid, c, 0.0).to(np.int64) * strides[j]
            idx = cj if idx is None else idx + cj
        if mode == 1:
            taps.append((idx, vf, None))
            continue
        w = vf
        for _, a, _ in parts:
            w = w * a
        dws = []
        for j in range(k):
            d = vf * parts[j][2]
            for i in range(k):
                if i != j:
                    d = d * parts[i][1]
            dws.append(d)
        taps.append((idx, w, dws))
    return taps


def _product(ranges):
    out = [()]
    for r in ranges:
        out = [(*p, i) for p in out for i in r]
    return out


def _spatial(shape, nd):
    """The grid's coordinate order ``(W, H[, D])`` of an input shape."""
    return tuple(reversed(shape[2 : 2 + nd]))


def _flat_index(idx, n, c):
    return F.reshape(idx, (n, 1, -1)).expand(n, c, idx.shape[1])


class GridSample(Primitive):
    """PyTorch's ``grid_sampler``: ``input`` sampled at ``grid`` (NOTE [Grid sampling]);
    ``mode`` and ``padding`` are PyTorch's enums, ``nd`` the number of spatial dims."""

    saves_inputs = (0, 1)

    @classmethod
    def node_name(cls, params) -> str:
        return f"GridSampler{params['nd']}DBackward0"

    @staticmethod
    def impl(be, x, grid, *, mode, padding, align, nd):
        _cpu_only(x, grid)
        dt = _work_dtype(x.dtype)
        idx, wts, _ = _kernel_taps(x.shape, grid, mode, padding, align, nd, False, dt)
        n, c = x.shape[0], x.shape[1]
        out = be.empty((n, c, idx.shape[1]), dt)
        if out.size:
            _GRID_KERNELS.apply_taps(_planes(x, dt), idx, wts, out)
        return out.reshape((n, c, *grid.shape[1:-1])).astype(x.dtype, copy=False)

    @staticmethod
    def fused_vjp(ctx, g, *, mode, padding, align, nd):
        x, grid = ctx.saved_arrays()
        _cpu_only(g, x, grid)
        dt = _work_dtype(x.dtype)
        need_input = ctx.needs_input_grad(0)
        need_grid = ctx.needs_input_grad(1) and mode != 1  # (nearest: a zero gradient)
        idx, wts, dws = _kernel_taps(x.shape, grid, mode, padding, align, nd, need_grid, dt)
        n, c, n_pts = x.shape[0], x.shape[1], idx.shape[1]
        n_sp = math.prod(x.shape[2:])
        gi = np.zeros((n, c, n_sp + 1) if need_input else (1, 1, 1), dt)
        gtmp = np.empty((n, c, n_pts, nd) if need_grid else (1, 1, 1, nd), dt)
        if g.size and (need_input or need_grid):
            g3 = np.ascontiguousarray(g, dtype=dt).reshape((n, c, n_pts))
            _GRID_KERNELS.apply_taps_backward(
                g3, _planes(x, dt), idx, wts, dws, need_input, need_grid, gi, gtmp
            )
        elif need_grid:
            gtmp[...] = 0.0
        gx = None
        if need_input:  # (the last entry of each plane took the taps outside)
            gx = gi[:, :, :n_sp].reshape(x.shape).astype(x.dtype)
        gg = None
        if need_grid:
            gg = gtmp.sum(axis=1).reshape(grid.shape).astype(grid.dtype, copy=False)
        elif ctx.needs_input_grad(1):
            gg = np.zeros(grid.shape, grid.dtype)
        return gx, gg

    @staticmethod
    def vjp(ctx, g, *, mode, padding, align, nd):
        x, grid = ctx.saved()
        n, c = x.shape[0], x.shape[1]
        taps = _taps(grid, _spatial(x.shape, nd), mode, padding, align)
        gf = F.reshape(g, (n, c, -1))
        xf = F.reshape(x, (n, c, -1))
        gi = gg = None
        if ctx.needs_input_grad(0):
            acc = _C.const_zeros_like(xf)
            for idx, w, _ in taps:
                acc = F.scatter_add(acc, 2, _flat_index(idx, n, c), gf * F.unsqueeze(w, 1))
            gi = F.reshape(acc, x.shape)
        if ctx.needs_input_grad(1):
            if mode == 1:
                gg = _C.const_zeros_like(grid)
            else:
                comps = [None] * nd
                for idx, _, dws in taps:
                    gv = (gf * F.gather(xf, 2, _flat_index(idx, n, c))).sum(1)
                    for j in range(nd):
                        term = gv * dws[j]
                        comps[j] = term if comps[j] is None else comps[j] + term
                gg = F.reshape(F.stack(comps, -1), grid.shape)
        return gi, gg

    @staticmethod
    def jvp(primals, tangents, out, *, mode, padding, align, nd):
        x, grid = primals
        tx, tg = tangents
        params = {"mode": mode, "padding": padding, "align": align, "nd": nd}
        res = None if tx is None else bind(GridSample, (tx, grid), params)
        if tg is not None and mode != 1:
            n, c = x.shape[0], x.shape[1]
            tgf = F.reshape(tg, (n, -1, nd))
            xf = F.reshape(x, (n, c, -1))
            for idx, _, dws in _taps(grid, _spatial(x.shape, nd), mode, padding, align):
                slope = dws[0] * tgf[:, :, 0]
                for j in range(1, nd):
                    slope = slope + dws[j] * tgf[:, :, j]
                term = F.gather(xf, 2, _flat_index(idx, n, c)) * F.unsqueeze(slope, 1)
                term = F.reshape(term, out.shape)
                res = term if res is None else res + term
        if res is None:
            res = _C.const_zeros_like(out)
        return res

    @staticmethod
    def batch(args, dims, *, mode, padding, align, nd):
        x, grid = args
        dx, dg = dims
        b = x.shape[dx] if dx is not None else grid.shape[dg]
        x = front(x, dx) if dx is not None else F.unsqueeze(x, 0).expand(b, *x.shape)
        grid = front(grid, dg) if dg is not None else F.unsqueeze(grid, 0).expand(b, *grid.shape)
        xs, gs = tuple(x.shape), tuple(grid.shape)
        xm = F.reshape(x, (b * xs[1], *xs[2:]))
        gm = F.reshape(grid, (b * gs[1], *gs[2:]))
        params = {"mode": mode, "padding": padding, "align": align, "nd": nd}
        out = bind(GridSample, (xm, gm), params)
        return F.reshape(out, (b, xs[1], *tuple(out.shape[1:]))), 0


# -- the functions ------------------------------------------------------------------------------
_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the normalised coordinates of ``grid`` (PyTorch's ``grid_sample``).

    ``input`` is ``(N, C, H_in, W_in)`` with ``grid`` ``(N, H_out, W_out, 2)``, or ``(N, C,
    D_in, H_in, W_in)`` with ``grid`` ``(N, D_out, H_out, W_out, 3)``; the grid's last dim
    holds ``(x, y[, z])`` in ``[-1, 1]`` (``-1`` the left/top edge: the first pixel's centre
    with ``align_corners=True``, its outer edge otherwise). ``mode`` is ``'bilinear'``,
    ``'nearest'`` or ``'bicubic'`` (4-D input only); ``padding_mode`` is ``'zeros'``,
    ``'border'`` or ``'reflection'``. Differentiable with respect to ``input`` and ``grid``
    (twice, forward mode, ``vmap``); CPU tensors only.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.arange(4.0).reshape(1, 1, 2, 2)
    >>> g = numbagrad.tensor([[[[0.0, 0.0], [-1.0, -1.0]]]])
    >>> F.grid_sample(x, g, align_corners=True)
    tensor([[[[1.5000, 0.0000]]]])
    """
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise TypeError("grid_sample(): expected input and grid to be Tensors")
    if input.device != grid.device:
        raise RuntimeError(
            "grid_sampler(): expected input and grid to be on same device, but input is on "
            f"{input.device} and grid is on {grid.device}"
        )
    if input.dtype != grid.dtype:
        raise RuntimeError(
            "grid_sampler(): expected input and grid to have same dtype, but input has "
            f"{input.dtype} and grid has {grid.dtype}"
        )
    if not input.dtype.is_floating_point or input.dtype.is_complex:
        raise RuntimeError(f"grid_sampler(): expected a floating point input, got {input.dtype}")
    xs, gs = list(input.shape), list(grid.shape)
    if input.ndim not in (4, 5) or input.ndim != grid.ndim:
        raise RuntimeError(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
            f"but got input with sizes {xs} and grid with sizes {gs}"
        )
    if xs[0] != gs[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {xs} and grid with sizes {gs}"
        )
    nd = input.ndim - 2
    if gs[-1] != nd:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid "
            f"with sizes {gs}"
        )
    for i in range(2, input.ndim):
        if xs[i] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {xs} with dimension {i} being empty"
            )
    if mode == "bicubic" and nd == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    params = {
        "mode": GRID_SAMPLE_INTERPOLATION_MODES[mode],
        "padding": GRID_SAMPLE_PADDING_MODES[padding_mode],
        "align": bool(align_corners),
        "nd": nd,
    }
    return bind(GridSample, (input, grid), params)


def _base_coords(n, align, like):
    """PyTorch's ``linspace_from_neg_one``: ``n`` points over ``[-1, 1]`` (pixel centres
    when not ``align``), ``[0]`` for ``n <= 1``."""
    if n <= 1:
        return _C.zeros(1, dtype=like.dtype, device=like.device)
    r = _C.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return r if align else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine transforms (PyTorch's ``affine_grid``).

    ``theta`` is ``(N, 2, 3)`` for ``size`` ``(N, C, H, W)`` (the grid is ``(N, H, W,
    2)``) or ``(N, 3, 4)`` for ``(N, C, D, H, W)`` (the grid ``(N, D, H, W, 3)``): each
    output point's normalised coordinates ``(x, y[, z], 1)`` times ``theta^T``. Use with
    :func:`grid_sample`. A composite of ops: differentiable with respect to ``theta``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> theta = numbagrad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
    tensor([[[[-1., -1.],
              [ 1., -1.]],
    <BLANKLINE>
             [[-1.,  1.],
              [ 1.,  1.]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{size}. Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{size}. Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(
            f"affine_grid: expected theta's batch size {theta.shape[0]} to match size[0] = "
            f"{size[0]}"
        )
    nd = len(spatial)
    # the base grid (*spatial, nd + 1): x varies along the last dim, then y, then z
    axes = []
    for j in range(nd):
        n_j = spatial[nd - 1 - j]  # coordinate j (x, y, z) runs along spatial dim nd-1-j
        v = _base_coords(n_j, align_corners, theta)
        shape = [1] * nd
        shape[nd - 1 - j] = v.shape[0]
        axes.append(F.reshape(v, tuple(shape)).expand(*spatial))
    axes.append(_C.ones(tuple(spatial), dtype=theta.dtype, device=theta.device))
    base = F.reshape(F.stack(axes, -1), (1, -1, nd + 1))
    grid = F.matmul(base, theta.transpose(1, 2))
    return F.reshape(grid, (size[0], *spatial, nd))
