"""``@cuda.jit`` elementwise kernels: maps, binary ops with broadcasting, fused unary
gradients, strided copies, fills and in-place accumulation.

NOTE [CUDA elementwise kernels]
Arrays reach a kernel as the flat device buffer of their storage plus an element offset and
a shape and strides tuple (in elements; a broadcast dimension has stride 0), so views,
transposes and broadcasts need no copy and no device array other than the flat buffer is
ever made (the simulator cannot handle non-contiguous device arrays). Shapes and strides
are tuples, not device arrays: passing them costs no host->device copy. Every kernel is a
grid-stride loop over the (contiguous) output (NOTE [CUDA launches]). Per-element math is in
device functions selected by an op code (one kernel per family, not one per op: no kernel
factories); floating results are computed in float64 and rounded once on store.
"""

from __future__ import annotations

import math

from numba import float64

from numbagrad.kernels.cuda._driver import cuda as _cuda

cuda = _cuda()

__all__ = [
    "BINARY",
    "UNARY",
    "UNARY_GRAD",
    "accumulate_kernel",
    "binary_kernel",
    "binary_scalar_kernel",
    "copy_kernel",
    "fill_kernel",
    "first_out_of_range_kernel",
    "map_kernel",
    "nan_to_num_kernel",
    "unary_grad_kernel",
    "where_kernel",
]

# op codes of ``_unary`` (the names are the backend's ``map`` names)
UNARY = {
    name: i
    for i, name in enumerate(
        (
            "negative abs sign exp expm1 log log1p log2 log10 sqrt square reciprocal sin cos tan "
            "tanh sigmoid relu softplus rsqrt floor ceil trunc sinh cosh arcsin arccos arctan "
            "arcsinh arccosh arctanh exp2 erf isfinite isnan isinf logical_not round signbit"
        ).split()
    )
}

# op codes of ``_binary``
BINARY = {
    name: i
    for i, name in enumerate(
        (
            "add subtract multiply true_divide power maximum minimum arctan2 hypot copysign "
            "equal not_equal less less_equal greater greater_equal logical_and logical_or "
            "fmax fmin logical_xor fmod logaddexp logaddexp2 floor_divide"
        ).split()
    )
}

# op codes of ``_unary_grad``: the fused ``g * derivative`` kernels the CPU backend has
UNARY_GRAD = {
    name: i
    for i, name in enumerate(
        (
            "tanh_backward sigmoid_backward sin_backward cos_backward tan_backward "
            "softplus_backward erf_backward relu_backward"
        ).split()
    )
}

_C_ERF = 2.0 / math.sqrt(math.pi)


@cuda.jit(device=True)
def _offset(i, shape, st, off):
    """Element offset of linear index ``i`` (row-major over ``shape``) in a strided array."""
    if len(shape) == 1:  # (decided at compile time) 0 <= i < shape[0]: no division
        return off + i * st[0]
    for k in range(len(shape) - 1, -1, -1):
        s = shape[k]
        off += (i % s) * st[k]
        i //= s
    return off


@cuda.jit(device=True)
def _sigmoid(v):
    if v >= 0.0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


_LN2 = math.log(2.0)
_LOG2E = 1.0 / math.log(2.0)


@cuda.jit(device=True)
def _round_half_even(v):
    """``np.round``/``torch.round``: to the nearest integer, ties to even (NaN, inf kept)."""
    if math.isinf(v) or v != v:
        return v
    r = math.floor(v)
    d = v - r
    if d > 0.5 or (d == 0.5 and r - 2.0 * math.floor(r / 2.0) != 0.0):
        r += 1.0
    return math.copysign(0.0, v) if r == 0 else r  # round(-0.4) is -0.0


@cuda.jit(device=True)
def _floor_divide(a, b):
    """``np.floor_divide`` of two floats, as NumPy's ``npy_divmod`` computes it (so the
    quotient is exact where ``floor(a / b)`` would round the wrong way)."""
    if b == 0:  # a / b
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    if a != a or b != b or math.isinf(a):
        return math.nan
    mod = a if math.isinf(b) else math.fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div -= 1.0
    if div == 0:
        return math.copysign(0.0, a / b)
    if math.isinf(div):
        return div
    fl = math.floor(div)
    if div - fl > 0.5:
        fl += 1.0
    return fl


@cuda.jit(device=True)
def _unary(op, x):
    """The map ``op`` (``UNARY``) of one element, in float64."""
    v = float64(x)
    if op == 0:
        return -v
    if op == 1:
        return abs(v)
    if op == 2:
        return 1.0 if v > 0 else (-1.0 if v < 0 else v)  # sign(nan) = nan, sign(-0) = -0
    if op == 3:
        return math.exp(v)
    if op == 4:
        return math.expm1(v)
    if op == 5:
        return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)
    if op == 6:
        return math.log1p(v) if v > -1 else (-math.inf if v == -1 else math.nan)
    if op == 7:
        return math.log2(v) if v > 0 else (-math.inf if v == 0 else math.nan)
    if op == 8:
        return math.log10(v) if v > 0 else (-math.inf if v == 0 else math.nan)
    if op == 9:
        return math.sqrt(v) if v >= 0 else math.nan
    if op == 10:
        return v * v
    if op == 11:
        return 1.0 / v if v != 0 else math.copysign(math.inf, v)
    if op == 12:
        return math.sin(v)
    if op == 13:
        return math.cos(v)
    if op == 14:
        return math.tan(v)
    if op == 15:
        return math.tanh(v)
    if op == 16:
        return _sigmoid(v)
    if op == 17:
        return v if v > 0 or v != v else 0.0  # relu keeps NaN, as torch
    if op == 18:
        return max(v, 0.0) + math.log1p(math.exp(-abs(v)))
    if op == 19:
        return 1.0 / math.sqrt(v) if v > 0 else (math.inf if v == 0 else math.nan)
    if op == 20:
        return math.floor(v)
    if op == 21:
        return math.ceil(v)
    if op == 22:
        return math.trunc(v)
    if op == 23:
        return math.sinh(v)
    if op == 24:
        return math.cosh(v)
    if op == 25:
        return math.asin(v) if -1 <= v <= 1 else math.nan
    if op == 26:
        return math.acos(v) if -1 <= v <= 1 else math.nan
    if op == 27:
        return math.atan(v)
    if op == 28:
        return math.asinh(v)
    if op == 29:
        return math.acosh(v) if v >= 1 else math.nan
    if op == 30:
        return (
            math.atanh(v)
            if -1 < v < 1
            else (math.copysign(math.inf, v) if abs(v) == 1 else math.nan)
        )
    if op == 31:
        return 2.0**v
    if op == 32:
        return math.erf(v)
    if op == 33:
        return 1.0 if not (math.isinf(v) or math.isnan(v)) else 0.0
    if op == 34:
        return 1.0 if math.isnan(v) else 0.0
    if op == 35:
        return 1.0 if math.isinf(v) else 0.0
    if op == 36:
        return 1.0 if v == 0 else 0.0  # logical_not
    if op == 37:
        return _round_half_even(v)
    return 1.0 if math.copysign(1.0, v) < 0 else 0.0  # signbit (of -0.0 and -nan too)


@cuda.jit(device=True)
def _binary(op, x, y):
    """The binary op ``op`` (``BINARY``) of two elements, in float64 (comparisons 1 or 0)."""
    a = float64(x)
    b = float64(y)
    if op == 0:
        return a + b
    if op == 1:
        return a - b
    if op == 2:
        return a * b
    if op == 3:
        if b == 0:
            return (
                math.nan
                if a == 0 or a != a
                else math.copysign(math.inf, a) * (math.copysign(1.0, b))
            )
        return a / b
    if op == 4:
        return a**b
    if op == 5:
        return a if a >= b or a != a else b  # maximum propagates NaN
    if op == 6:
        return a if a <= b or a != a else b
    if op == 7:
        return math.atan2(a, b)
    if op == 8:
        return math.hypot(a, b)
    if op == 9:
        return math.copysign(a, b)
    if op == 10:
        return 1.0 if a == b else 0.0
    if op == 11:
        return 1.0 if a != b else 0.0
    if op == 12:
        return 1.0 if a < b else 0.0
    if op == 13:
        return 1.0 if a <= b else 0.0
    if op == 14:
        return 1.0 if a > b else 0.0
    if op == 15:
        return 1.0 if a >= b else 0.0
    if op == 16:
        return 1.0 if a != 0 and b != 0 else 0.0
    if op == 17:
        return 1.0 if a != 0 or b != 0 else 0.0
    if op == 18:
        return a if a >= b or b != b else b  # fmax ignores NaN
    if op == 19:
        return a if a <= b or b != b else b
    if op == 20:
        return 1.0 if (a != 0) != (b != 0) else 0.0  # logical_xor
    if op == 21:  # fmod: the sign of the dividend; NaN for a zero divisor or an infinite a
        if a != a or b != b or b == 0 or math.isinf(a):
            return math.nan
        return a if math.isinf(b) else math.fmod(a, b)
    if op == 22:  # logaddexp, as NumPy's npy_logaddexp
        if a == b:
            return a + _LN2  # infinities of one sign included
        d = a - b
        if d > 0:
            return a + math.log1p(math.exp(-d))
        if d <= 0:
            return b + math.log1p(math.exp(d))
        return d  # NaN
    if op == 23:
        if a == b:  # logaddexp2, as NumPy's npy_logaddexp2
            return a + 1.0
        d = a - b
        if d > 0:
            return a + _LOG2E * math.log1p(2.0**-d)
        if d <= 0:
            return b + _LOG2E * math.log1p(2.0**d)
        return d
    return _floor_divide(a, b)


@cuda.jit(device=True)
def _unary_grad(op, g, s):
    """``g * derivative`` of the fused gradient ``op`` (``UNARY_GRAD``); ``s`` is what the op
    saved (its output for tanh, sigmoid, tan and relu; its input for the others)."""
    gv = float64(g)
    v = float64(s)
    if op == 0:
        return gv * (1.0 - v * v)
    if op == 1:
        return gv * v * (1.0 - v)
    if op == 2:
        return gv * math.cos(v)
    if op == 3:
        return -gv * math.sin(v)
    if op == 4:
        return gv * (1.0 + v * v)
    if op == 5:
        return gv * _sigmoid(v)
    if op == 6:
        return gv * _C_ERF * math.exp(-v * v)
    return gv if v > 0 else 0.0


@cuda.jit
def map_kernel(op, n, x, xoff, shape, xst, out):
    """``out[i] = op(x[...])`` over the contiguous ``out`` (``UNARY`` codes)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = _unary(op, x[_offset(i, shape, xst, xoff)])


@cuda.jit
def binary_kernel(op, n, a, aoff, ast, b, boff, bst, shape, out):
    """``out[i] = op(a[...], b[...])`` with broadcasting through stride-0 dims."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = _binary(op, a[_offset(i, shape, ast, aoff)], b[_offset(i, shape, bst, boff)])


@cuda.jit
def binary_scalar_kernel(op, n, a, aoff, ast, s, right, shape, out):
    """``op(a, s)`` (``right``) or ``op(s, a)`` for an array and a scalar."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = a[_offset(i, shape, ast, aoff)]
        out[i] = _binary(op, v, s) if right else _binary(op, s, v)


@cuda.jit
def unary_grad_kernel(op, n, g, goff, gst, s, soff, sst, shape, out):
    """The fused ``g * derivative(s)`` of a unary op in one pass (``UNARY_GRAD`` codes)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = _unary_grad(op, g[_offset(i, shape, gst, goff)], s[_offset(i, shape, sst, soff)])


@cuda.jit
def copy_kernel(n, src, soff, sst, shape, dst, doff, dst_st):
    """``dst[...] = src[...]`` between two strided arrays (casting on store)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        dst[_offset(i, shape, dst_st, doff)] = src[_offset(i, shape, sst, soff)]


@cuda.jit
def fill_kernel(n, dst, doff, shape, dst_st, value):
    """``dst[...] = value`` over a strided array."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        dst[_offset(i, shape, dst_st, doff)] = value


@cuda.jit
def accumulate_kernel(n, dst, doff, dst_st, src, soff, sst, shape):
    """``dst[...] += src[...]`` in place (a leaf's ``.grad``, an engine-owned buffer); each
    element is written by one thread, so no atomics are needed."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        d = _offset(i, shape, dst_st, doff)
        dst[d] += src[_offset(i, shape, sst, soff)]


@cuda.jit
def first_out_of_range_kernel(n, idx, ioff, shape, ist, size, out):
    """``out[0]`` = the smallest position of an index outside ``[0, size)`` (``n`` if none)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = idx[_offset(i, shape, ist, ioff)]
        if v < 0 or v >= size:
            cuda.atomic.min(out, 0, i)


@cuda.jit
def where_kernel(n, c, coff, cst, a, aoff, ast, b, boff, bst, shape, out):
    """``out[i] = a[...] if c[...] else b[...]`` with broadcasting."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        if c[_offset(i, shape, cst, coff)]:
            out[i] = a[_offset(i, shape, ast, aoff)]
        else:
            out[i] = b[_offset(i, shape, bst, boff)]


@cuda.jit
def nan_to_num_kernel(n, x, xoff, shape, xst, nan, posinf, neginf, out, ooff, ost):
    """``nan_to_num`` (NaN, +inf and -inf replaced) from a strided ``x`` into a strided
    ``out`` (which may be ``x`` itself)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = x[_offset(i, shape, xst, xoff)]
        if v != v:
            v = nan
        elif v == math.inf:
            v = posinf
        elif v == -math.inf:
            v = neginf
        out[_offset(i, shape, ost, ooff)] = v
