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

# NOTE [CUDA op codes]: each family's kernel takes an op code, and its device function
# branches on it by name (``op == _U_EXP``), never by a bare number; the tables below are
# the one place a name gets its code. tests/test_cuda_op_codes.py checks them against
# the declarations: the codes of a table are 0..n-1, every name has exactly one branch in
# its device function, and the names are the CPU backend's (``map``'s, the ufuncs', the
# fused gradient kernels').
#
# op codes of ``_unary`` (the names are the backend's ``map`` names)
UNARY = {
    "negative": 0,
    "abs": 1,
    "sign": 2,
    "exp": 3,
    "expm1": 4,
    "log": 5,
    "log1p": 6,
    "log2": 7,
    "log10": 8,
    "sqrt": 9,
    "square": 10,
    "reciprocal": 11,
    "sin": 12,
    "cos": 13,
    "tan": 14,
    "tanh": 15,
    "sigmoid": 16,
    "relu": 17,
    "softplus": 18,
    "rsqrt": 19,
    "floor": 20,
    "ceil": 21,
    "trunc": 22,
    "sinh": 23,
    "cosh": 24,
    "arcsin": 25,
    "arccos": 26,
    "arctan": 27,
    "arcsinh": 28,
    "arccosh": 29,
    "arctanh": 30,
    "exp2": 31,
    "erf": 32,
    "isfinite": 33,
    "isnan": 34,
    "isinf": 35,
    "logical_not": 36,
    "round": 37,
    "signbit": 38,
    "gelu": 39,
    "gelu_tanh": 40,
}
# the codes as the device functions compare them (numba freezes module-level ints)
_U_NEGATIVE = UNARY["negative"]
_U_ABS = UNARY["abs"]
_U_SIGN = UNARY["sign"]
_U_EXP = UNARY["exp"]
_U_EXPM1 = UNARY["expm1"]
_U_LOG = UNARY["log"]
_U_LOG1P = UNARY["log1p"]
_U_LOG2 = UNARY["log2"]
_U_LOG10 = UNARY["log10"]
_U_SQRT = UNARY["sqrt"]
_U_SQUARE = UNARY["square"]
_U_RECIPROCAL = UNARY["reciprocal"]
_U_SIN = UNARY["sin"]
_U_COS = UNARY["cos"]
_U_TAN = UNARY["tan"]
_U_TANH = UNARY["tanh"]
_U_SIGMOID = UNARY["sigmoid"]
_U_RELU = UNARY["relu"]
_U_SOFTPLUS = UNARY["softplus"]
_U_RSQRT = UNARY["rsqrt"]
_U_FLOOR = UNARY["floor"]
_U_CEIL = UNARY["ceil"]
_U_TRUNC = UNARY["trunc"]
_U_SINH = UNARY["sinh"]
_U_COSH = UNARY["cosh"]
_U_ARCSIN = UNARY["arcsin"]
_U_ARCCOS = UNARY["arccos"]
_U_ARCTAN = UNARY["arctan"]
_U_ARCSINH = UNARY["arcsinh"]
_U_ARCCOSH = UNARY["arccosh"]
_U_ARCTANH = UNARY["arctanh"]
_U_EXP2 = UNARY["exp2"]
_U_ERF = UNARY["erf"]
_U_GELU = UNARY["gelu"]
_U_GELU_TANH = UNARY["gelu_tanh"]
_U_ISFINITE = UNARY["isfinite"]
_U_ISNAN = UNARY["isnan"]
_U_ISINF = UNARY["isinf"]
_U_LOGICAL_NOT = UNARY["logical_not"]
_U_ROUND = UNARY["round"]
_U_SIGNBIT = UNARY["signbit"]

# op codes of ``_binary`` (the names are the backend's ufunc names)
BINARY = {
    "add": 0,
    "subtract": 1,
    "multiply": 2,
    "true_divide": 3,
    "power": 4,
    "maximum": 5,
    "minimum": 6,
    "arctan2": 7,
    "hypot": 8,
    "copysign": 9,
    "equal": 10,
    "not_equal": 11,
    "less": 12,
    "less_equal": 13,
    "greater": 14,
    "greater_equal": 15,
    "logical_and": 16,
    "logical_or": 17,
    "fmax": 18,
    "fmin": 19,
    "logical_xor": 20,
    "fmod": 21,
    "logaddexp": 22,
    "logaddexp2": 23,
    "floor_divide": 24,
}
# the codes as the device functions compare them (numba freezes module-level ints)
_B_ADD = BINARY["add"]
_B_SUBTRACT = BINARY["subtract"]
_B_MULTIPLY = BINARY["multiply"]
_B_TRUE_DIVIDE = BINARY["true_divide"]
_B_POWER = BINARY["power"]
_B_MAXIMUM = BINARY["maximum"]
_B_MINIMUM = BINARY["minimum"]
_B_ARCTAN2 = BINARY["arctan2"]
_B_HYPOT = BINARY["hypot"]
_B_COPYSIGN = BINARY["copysign"]
_B_EQUAL = BINARY["equal"]
_B_NOT_EQUAL = BINARY["not_equal"]
_B_LESS = BINARY["less"]
_B_LESS_EQUAL = BINARY["less_equal"]
_B_GREATER = BINARY["greater"]
_B_GREATER_EQUAL = BINARY["greater_equal"]
_B_LOGICAL_AND = BINARY["logical_and"]
_B_LOGICAL_OR = BINARY["logical_or"]
_B_FMAX = BINARY["fmax"]
_B_FMIN = BINARY["fmin"]
_B_LOGICAL_XOR = BINARY["logical_xor"]
_B_FMOD = BINARY["fmod"]
_B_LOGADDEXP = BINARY["logaddexp"]
_B_LOGADDEXP2 = BINARY["logaddexp2"]
_B_FLOOR_DIVIDE = BINARY["floor_divide"]

# op codes of ``_unary_grad``: the fused ``g * derivative`` kernels the CPU backend has
UNARY_GRAD = {
    "tanh_backward": 0,
    "sigmoid_backward": 1,
    "sin_backward": 2,
    "cos_backward": 3,
    "tan_backward": 4,
    "softplus_backward": 5,
    "erf_backward": 6,
    "relu_backward": 7,
}
# the codes as the device functions compare them (numba freezes module-level ints)
_G_TANH_BACKWARD = UNARY_GRAD["tanh_backward"]
_G_SIGMOID_BACKWARD = UNARY_GRAD["sigmoid_backward"]
_G_SIN_BACKWARD = UNARY_GRAD["sin_backward"]
_G_COS_BACKWARD = UNARY_GRAD["cos_backward"]
_G_TAN_BACKWARD = UNARY_GRAD["tan_backward"]
_G_SOFTPLUS_BACKWARD = UNARY_GRAD["softplus_backward"]
_G_ERF_BACKWARD = UNARY_GRAD["erf_backward"]
_G_RELU_BACKWARD = UNARY_GRAD["relu_backward"]

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
    if op == _U_NEGATIVE:
        return -v
    if op == _U_ABS:
        return abs(v)
    if op == _U_SIGN:
        return 1.0 if v > 0 else (-1.0 if v < 0 else v)  # sign(nan) = nan, sign(-0) = -0
    if op == _U_EXP:
        return math.exp(v)
    if op == _U_EXPM1:
        return math.expm1(v)
    if op == _U_LOG:
        return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)
    if op == _U_LOG1P:
        return math.log1p(v) if v > -1 else (-math.inf if v == -1 else math.nan)
    if op == _U_LOG2:
        return math.log2(v) if v > 0 else (-math.inf if v == 0 else math.nan)
    if op == _U_LOG10:
        return math.log10(v) if v > 0 else (-math.inf if v == 0 else math.nan)
    if op == _U_SQRT:
        return math.sqrt(v) if v >= 0 else math.nan
    if op == _U_SQUARE:
        return v * v
    if op == _U_RECIPROCAL:
        return 1.0 / v if v != 0 else math.copysign(math.inf, v)
    if op == _U_SIN:
        return math.sin(v)
    if op == _U_COS:
        return math.cos(v)
    if op == _U_TAN:
        return math.tan(v)
    if op == _U_TANH:
        return math.tanh(v)
    if op == _U_SIGMOID:
        return _sigmoid(v)
    if op == _U_RELU:
        return v if v > 0 or v != v else 0.0  # relu keeps NaN, as torch
    if op == _U_SOFTPLUS:
        return max(v, 0.0) + math.log1p(math.exp(-abs(v)))
    if op == _U_RSQRT:
        return 1.0 / math.sqrt(v) if v > 0 else (math.inf if v == 0 else math.nan)
    if op == _U_FLOOR:
        return math.floor(v)
    if op == _U_CEIL:
        return math.ceil(v)
    if op == _U_TRUNC:
        return math.trunc(v)
    if op == _U_SINH:
        return math.sinh(v)
    if op == _U_COSH:
        return math.cosh(v)
    if op == _U_ARCSIN:
        return math.asin(v) if -1 <= v <= 1 else math.nan
    if op == _U_ARCCOS:
        return math.acos(v) if -1 <= v <= 1 else math.nan
    if op == _U_ARCTAN:
        return math.atan(v)
    if op == _U_ARCSINH:
        return math.asinh(v)
    if op == _U_ARCCOSH:
        return math.acosh(v) if v >= 1 else math.nan
    if op == _U_ARCTANH:
        return (
            math.atanh(v)
            if -1 < v < 1
            else (math.copysign(math.inf, v) if abs(v) == 1 else math.nan)
        )
    if op == _U_EXP2:
        return 2.0**v
    if op == _U_ERF:
        return math.erf(v)
    if op == _U_GELU:  # PyTorch's order of operations
        return v * 0.5 * (1.0 + math.erf(v * 0.7071067811865476))
    if op == _U_GELU_TANH:
        return 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * (v * v * v))))
    if op == _U_ISFINITE:
        return 1.0 if not (math.isinf(v) or math.isnan(v)) else 0.0
    if op == _U_ISNAN:
        return 1.0 if math.isnan(v) else 0.0
    if op == _U_ISINF:
        return 1.0 if math.isinf(v) else 0.0
    if op == _U_LOGICAL_NOT:
        return 1.0 if v == 0 else 0.0  # logical_not
    if op == _U_ROUND:
        return _round_half_even(v)
    if op == _U_SIGNBIT:  # (of -0.0 and -nan too)
        return 1.0 if math.copysign(1.0, v) < 0 else 0.0
    return math.nan  # no such code (the backend looks names up in the table)


@cuda.jit(device=True)
def _binary(op, x, y):
    """The binary op ``op`` (``BINARY``) of two elements, in float64 (comparisons 1 or 0)."""
    a = float64(x)
    b = float64(y)
    if op == _B_ADD:
        return a + b
    if op == _B_SUBTRACT:
        return a - b
    if op == _B_MULTIPLY:
        return a * b
    if op == _B_TRUE_DIVIDE:
        if b == 0:
            return (
                math.nan
                if a == 0 or a != a
                else math.copysign(math.inf, a) * (math.copysign(1.0, b))
            )
        return a / b
    if op == _B_POWER:
        return a**b
    if op == _B_MAXIMUM:
        return a if a >= b or a != a else b  # maximum propagates NaN
    if op == _B_MINIMUM:
        return a if a <= b or a != a else b
    if op == _B_ARCTAN2:
        return math.atan2(a, b)
    if op == _B_HYPOT:
        return math.hypot(a, b)
    if op == _B_COPYSIGN:
        return math.copysign(a, b)
    if op == _B_EQUAL:
        return 1.0 if a == b else 0.0
    if op == _B_NOT_EQUAL:
        return 1.0 if a != b else 0.0
    if op == _B_LESS:
        return 1.0 if a < b else 0.0
    if op == _B_LESS_EQUAL:
        return 1.0 if a <= b else 0.0
    if op == _B_GREATER:
        return 1.0 if a > b else 0.0
    if op == _B_GREATER_EQUAL:
        return 1.0 if a >= b else 0.0
    if op == _B_LOGICAL_AND:
        return 1.0 if a != 0 and b != 0 else 0.0
    if op == _B_LOGICAL_OR:
        return 1.0 if a != 0 or b != 0 else 0.0
    if op == _B_FMAX:
        return a if a >= b or b != b else b  # fmax ignores NaN
    if op == _B_FMIN:
        return a if a <= b or b != b else b
    if op == _B_LOGICAL_XOR:
        return 1.0 if (a != 0) != (b != 0) else 0.0  # logical_xor
    if op == _B_FMOD:  # fmod: the sign of the dividend; NaN for a zero divisor or an infinite a
        if a != a or b != b or b == 0 or math.isinf(a):
            return math.nan
        return a if math.isinf(b) else math.fmod(a, b)
    if op == _B_LOGADDEXP:  # logaddexp, as NumPy's npy_logaddexp
        if a == b:
            return a + _LN2  # infinities of one sign included
        d = a - b
        if d > 0:
            return a + math.log1p(math.exp(-d))
        if d <= 0:
            return b + math.log1p(math.exp(d))
        return d  # NaN
    if op == _B_LOGADDEXP2:
        if a == b:  # logaddexp2, as NumPy's npy_logaddexp2
            return a + 1.0
        d = a - b
        if d > 0:
            return a + _LOG2E * math.log1p(2.0**-d)
        if d <= 0:
            return b + _LOG2E * math.log1p(2.0**d)
        return d
    if op == _B_FLOOR_DIVIDE:
        return _floor_divide(a, b)
    return math.nan  # no such code (the backend looks names up in the table)


@cuda.jit(device=True)
def _unary_grad(op, g, s):
    """``g * derivative`` of the fused gradient ``op`` (``UNARY_GRAD``); ``s`` is what the op
    saved (its output for tanh, sigmoid, tan and relu; its input for the others)."""
    gv = float64(g)
    v = float64(s)
    if op == _G_TANH_BACKWARD:
        return gv * (1.0 - v * v)
    if op == _G_SIGMOID_BACKWARD:
        return gv * v * (1.0 - v)
    if op == _G_SIN_BACKWARD:
        return gv * math.cos(v)
    if op == _G_COS_BACKWARD:
        return -gv * math.sin(v)
    if op == _G_TAN_BACKWARD:
        return gv * (1.0 + v * v)
    if op == _G_SOFTPLUS_BACKWARD:
        return gv * _sigmoid(v)
    if op == _G_ERF_BACKWARD:
        return gv * _C_ERF * math.exp(-v * v)
    if op == _G_RELU_BACKWARD:
        return gv if v > 0 else 0.0
    return math.nan  # no such code (the backend looks names up in the table)


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
