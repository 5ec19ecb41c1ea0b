"""The resampling primitives of ``interpolate``: ``Upsample`` and its adjoint.

NOTE [Resampling]
``interpolate``'s modes ``nearest``, ``nearest-exact``, ``linear``/``bilinear``/
``trilinear`` and ``bicubic`` (without ``antialias``) are separable linear maps: along
each spatial axis, output ``o`` is ``sum_t x[idx[t, o]] * w[t, o]`` over 1, 2 or 4 taps.
``axis_table`` computes the taps of one axis as PyTorch's CPU kernels do
(``aten/src/ATen/native/UpSample.h``: ``area_pixel_compute_scale``,
``area_pixel_compute_source_index``, ``guard_index_and_lambda``, ``nearest_idx``,
``nearest_exact_idx``, the cubic convolution coefficients with ``A = -0.75``), in the
arithmetic of the input's dtype (float32 for float32 and float16 input), so the weights
agree with PyTorch's to an ulp or so (its build contracts some of these products and sums
into FMAs, which plain NumPy and Numba code does not; emulating that is not done) and the
nearest indices exactly, with their quirks:

- a linear axis whose output size equals its input size copies, each output reading its
  input twice with weights 1 and 0 (so an ``inf`` there gives ``nan``, as in PyTorch);
- ``nearest`` copies an axis of equal size and takes ``o >> 1`` for an axis of twice the
  size, whatever the scale; otherwise the index is ``floor(o * scale)`` in float32
  (``nearest-exact``: ``floor((o + 0.5) * scale)``, the product in float64 rounded to
  float32 first);
- taps of weight 0 are kept (the second tap at an integer source position, the cubic
  taps clamped at the edges): PyTorch's kernels read them, and ``0 * inf`` is ``nan``.

``Upsample`` applies the tables (``numbagrad/kernels/cpu/resample.py``: per plane, the last
axis first, each output reading only its taps, PyTorch's nesting of the sums); its VJP is
``UpsampleBackward``, the adjoint (gathers with the transposed tables, plane by plane, so
no atomics), whose VJP is ``Upsample`` again: both are linear, so double backward, forward
mode (``linearity``) and ``vmap`` (the ``vmap`` dim joins the leading planes) come from
these two rules. The tables are cached per axis (``axis_table``, ``_transposed``).

Before, ``interpolate`` was a chain of ``index_select``, products and sums per axis (which
had replaced a dense matrix product's ``0 * inf``). Bilinear by 2 on 32 x 64 x 32 x 32
float32, forward and backward, each library alone in its process on the shared 2-core
machine (load average 18-24): that chain took 1830 ms, the kernels 49-66 ms, PyTorch
690-740 ms (much of it page faults on its fresh 33 MB output; in one thread's CPU time,
13 ms against PyTorch's 133 ms, bicubic 27 against 272, trilinear 4 x 16 x 16^3 3.3
against 23). The antialiased modes and ``area`` still gather with ops (their tables are
wider and made per call). CUDA tensors take that composite path too (``interpolate``,
with the same tables); the primitives are CPU-only and raise ``NotImplementedError``
naming the op on a CUDA array.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from numbagrad.kernels import module as kernel_module
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import bound_both_ways, front

__all__ = ["Upsample", "UpsampleBackward", "axis_table"]

_KERNELS = kernel_module("resample")  # imported on first use (NOTE [Lazy kernels])

MODES = ("nearest", "nearest-exact", "linear", "cubic")
_A = -0.75  # the cubic convolution's parameter (PyTorch's and OpenCV's)


def _work_dtype(dt):
    # float64 stays; float32, float16 (and any narrower float) run in float32, as
    # PyTorch's opmath
    return np.dtype(np.float64) if np.dtype(dt) == np.float64 else np.dtype(np.float32)


def _area_scale(n_in, n_out, align, scale, ft):
    """PyTorch's ``area_pixel_compute_scale`` in the arithmetic ``ft``."""
    if align:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _source(n_in, n_out, align, scale, ft, cubic):
    """``area_pixel_compute_source_index`` of every output, and its floor as PyTorch's
    ``guard_index_and_lambda`` takes it (``floorf``, so through float32) with the
    fraction clamped to ``[0, 1]``."""
    s = _area_scale(n_in, n_out, align, scale, ft)
    d = np.arange(n_out).astype(ft)
    if align:
        real = s * d
    else:
        real = s * (d + ft(0.5)) - ft(0.5)
        if not cubic:
            real = np.where(real < ft(0), ft(0), real).astype(ft)
    i0 = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), n_in - 1)
    lam = np.minimum(np.maximum(real - i0.astype(ft), ft(0)), ft(1)).astype(ft)
    return i0, lam


def _cubic_near(x):  # |x| <= 1
    return ((_A + 2) * x - (_A + 3)) * x * x + 1


def _cubic_far(x):  # 1 < |x| < 2
    return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A


@functools.lru_cache(maxsize=256)
def axis_table(mode, align, n_in, n_out, scale, dtype):
    """The taps of one axis: ``(idx, w, rows)``, ``idx`` and ``w`` ``(T, n_out)`` arrays
    (int64 and ``dtype``), ``rows`` the sorted input positions that some tap reads (NOTE
    [Resampling]). Cached: the same arrays for the same arguments (never written to)."""
    ft = np.dtype(dtype).type
    o = np.arange(n_out, dtype=np.int64)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and n_out == n_in:
            src = o
        elif mode == "nearest" and n_out == 2 * n_in:
            src = o >> 1
        else:
            if scale is not None and scale > 0:
                s = np.float32(1.0 / scale)
            else:
                s = np.float32(n_in) / np.float32(n_out)
            if mode == "nearest":
                pos = o.astype(np.float32) * s
            else:
                pos = ((o + 0.5) * np.float64(s)).astype(np.float32)
            src = np.minimum(np.floor(pos).astype(np.int64), n_in - 1)
        idx = src.reshape(1, n_out)
        w = np.ones((1, n_out), dtype)
    elif mode == "linear":
        if n_out == n_in:  # PyTorch's copy: weights 1 and 0 on the same input
            idx = np.stack([o, o])
            w = np.stack([np.ones(n_out, dtype), np.zeros(n_out, dtype)])
        else:
            i0, lam1 = _source(n_in, n_out, align, scale, ft, False)
            i1 = i0 + (i0 < n_in - 1)
            idx = np.stack([i0, i1])
            w = np.stack([ft(1) - lam1, lam1]).astype(dtype)
    elif mode == "cubic":
        i0, t = _source(n_in, n_out, align, scale, ft, True)
        x2 = (ft(1) - t).astype(ft)
        w = np.stack(
            [_cubic_far(t + ft(1)), _cubic_near(t), _cubic_near(x2), _cubic_far(x2 + ft(1))]
        ).astype(dtype)
        idx = np.stack([np.clip(i0 - 1 + j, 0, n_in - 1) for j in range(4)])
    else:
        raise ValueError(f"unknown resampling mode {mode!r}")
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=dtype)
    return idx, w, np.unique(idx)


@functools.lru_cache(maxsize=256)
def _transposed(mode, align, n_in, n_out, scale, dtype):
    """An axis's table transposed for the backward's gathers (cached as
    ``axis_table``)."""
    idx, w, _ = axis_table(mode, align, n_in, n_out, scale, dtype)
    return _KERNELS.transpose_table(idx, w, n_in)


_NAMES = {
    "nearest": "Nearest",
    "nearest-exact": "NearestExact",
    "linear": ("Linear1D", "Bilinear2D", "Trilinear3D"),
    "cubic": ("Cubic1D", "Bicubic2D", "Tricubic3D"),
}


def _kind(mode, k):
    name = _NAMES[mode]
    return f"{name}{k}D" if isinstance(name, str) else name[k - 1]


def _cpu_only(op, mode, k, a):
    if not isinstance(a, np.ndarray):
        raise NotImplementedError(
            f"{op}{_kind(mode, k).lower()} (the Upsample primitive) is not implemented for "
            "CUDA tensors; interpolate runs its composite form there"
        )


def _tables(mode, align, in_size, size, scales, dt):
    return [axis_table(mode, align, n, o, s, dt.str) for n, o, s in zip(in_size, size, scales)]


def _upsample_rule(cls, ctx, saved, g, *, mode, align, size, scales):
    """The VJP of ``Upsample``: ``UpsampleBackward`` of ``g`` onto the input's size."""
    shape = ctx.input_shape(0)
    in_size = tuple(shape[len(shape) - len(size) :])
    params = {"mode": mode, "align": align, "size": size, "scales": scales}
    return UpsampleBackward, (g,), dict(params, in_size=in_size)


def _upsample_backward_rule(cls, ctx, saved, gg, *, mode, align, size, scales, in_size):
    """The VJP of ``UpsampleBackward``: ``Upsample`` of ``gg`` (the adjoint's adjoint)."""
    return Upsample, (gg,), {"mode": mode, "align": align, "size": size, "scales": scales}


class Upsample(Primitive):
    """``x`` (``(*lead, *spatial)``, 1 to 3 spatial dims) resampled to ``size`` along its
    last ``len(size)`` dims (NOTE [Resampling]): ``mode`` one of ``MODES``, ``align``
    PyTorch's ``align_corners``, ``scales`` the scale factor of each dim (None: from the
    sizes). Linear; its adjoint is ``UpsampleBackward``."""

    linearity = "linear"

    @classmethod
    def node_name(cls, params) -> str:
        return f"Upsample{_kind(params['mode'], len(params['size']))}Backward0"

    @staticmethod
    def impl(be, x, *, mode, align, size, scales):
        k = len(size)
        _cpu_only("upsample_", mode, k, x)
        sp = tuple(x.shape[x.ndim - k :])
        lead = tuple(x.shape[: x.ndim - k])
        dt = _work_dtype(x.dtype)
        b = math.prod(lead)
        xc = np.ascontiguousarray(x.reshape((b, *sp)), dtype=dt)
        out = be.empty((b, *size), dt)
        if out.size:
            _KERNELS.resample(xc, _tables(mode, align, sp, size, scales, dt), out)
        return out.reshape(lead + tuple(size)).astype(x.dtype, copy=False)

    vjp, fused_vjp = bound_both_ways(_upsample_rule)

    @staticmethod
    def batch(args, dims, **params):
        (x,), (d,) = args, dims
        return bind(Upsample, (front(x, d),), params), 0


class UpsampleBackward(Primitive):
    """The adjoint of ``Upsample``: ``g`` (``(*lead, *size)``) scattered back onto
    ``(*lead, *in_size)`` with the same taps (PyTorch's ``upsample_*_backward``)."""

    linearity = "linear"

    @classmethod
    def node_name(cls, params) -> str:
        return f"Upsample{_kind(params['mode'], len(params['size']))}BackwardBackward0"

    @staticmethod
    def impl(be, g, *, mode, align, size, scales, in_size):
        k = len(size)
        _cpu_only("upsample_", mode, k, g)
        lead = tuple(g.shape[: g.ndim - k])
        dt = _work_dtype(g.dtype)
        b = math.prod(lead)
        gc = np.ascontiguousarray(g.reshape((b, *size)), dtype=dt)
        gin = be.empty((b, *in_size), dt)
        if gin.size:
            tabs = _tables(mode, align, in_size, size, scales, dt)
            trans = [
                _transposed(mode, align, n, o, s, dt.str) for n, o, s in zip(in_size, size, scales)
            ]
            _KERNELS.resample_backward(gc, tabs, gin, trans)
        return gin.reshape(lead + tuple(in_size)).astype(g.dtype, copy=False)

    vjp, fused_vjp = bound_both_ways(_upsample_backward_rule)

    @staticmethod
    def batch(args, dims, **params):
        (g,), (d,) = args, dims
        return bind(UpsampleBackward, (front(g, d),), params), 0
