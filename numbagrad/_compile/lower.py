"""Lowering a graph to code: fused ``@njit`` loop nests plus direct array calls.

NOTE [Lowering]
Each primitive says how it runs on scalars in its own declaration: ``scalar(m, *xs,
**params)`` builds its result from operand expressions ``xs`` with the functions of a
namespace ``m`` named as NumPy's ufuncs (``m.exp(x)``, ``m.add(a, b)``). Elementwise
families state it once (``Unary``: ``getattr(m, fn)(x)``; ``Binary``: ``getattr(m, fn)(a,
b)``), and the code generator passes ``SCALAR``, whose functions return Numba source text.
It returns None where the op has no scalar form for these params (the op then runs as an
array call). ``Expand`` lowers as broadcasting and ``Sum``/``SumTo`` as accumulation.

The generator walks the equations in order and groups runs of lowerable equations that
share an iteration shape into one loop nest (an elementwise chain, its broadcasting and
the sums that end it: one pass, no temporaries). A value leaves a loop nest as an array
only where something outside it reads it (a later group, an array call, an output, the
backward). Every other equation becomes a direct call of the primitive's ``impl`` on
arrays: no Tensor, no node, no interpreter. Loop nests take their sizes as arguments,
so their source depends on ranks, dtypes and which dims broadcast, not on sizes (under
``compile(dynamic=False)`` the sizes are literals instead: NOTE [Size variants]).

Rounding: each operation's result is cast to its traced dtype (float32 stays float32),
so compiled and eager results agree to rounding (NumPy's SIMD transcendental functions
and sums in another order differ in the last bits); sums accumulate in float64.
"""

from __future__ import annotations

import re

import numpy as np

from numbagrad._compile.graph import Var

__all__ = ["FUSE_MAX", "FUSE_MAX_MATH", "PARALLEL_MIN", "SCALAR", "Group", "plan"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BOOL = np.dtype(np.bool_)
_CAST = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", _BOOL: "b1"}


_WHOLE = re.compile(r"^(f32|f64)\((-?[1-4]\.0)\)$")


class _Scalar:
    """NumPy-named scalar functions that emit Numba source (NOTE [Lowering])."""

    @staticmethod
    def const(x):
        """Source of Python number ``x`` (float64; infinities and NaN spelled out)."""
        x = float(x)
        if x != x:
            return "np.nan"
        if x in (float("inf"), float("-inf")):
            return "np.inf" if x > 0 else "(-np.inf)"
        return repr(x)

    # arithmetic
    @staticmethod
    def add(a, b):
        return f"({a} + {b})"

    @staticmethod
    def subtract(a, b):
        return f"({a} - {b})"

    @staticmethod
    def multiply(a, b):
        return f"({a} * {b})"

    @staticmethod
    def true_divide(a, b):
        return f"({a} / {b})"

    @staticmethod
    def power(a, b):
        # a small whole exponent (a literal: "f64(3.0)") as products, as NumPy's fast
        # paths do for 2 and -1: ``pow`` costs a transcendental call per element
        m = _WHOLE.match(b)
        if m is not None:
            n = int(float(m.group(2)))
            if n == 0:
                return f"({a} * 0 + 1)"  # (NaN ** 0 is 1 in NumPy, and here)
            prod = " * ".join([a] * abs(n))
            return f"({prod})" if n > 0 else f"(1.0 / ({prod}))"
        return f"({a} ** {b})"

    @staticmethod
    def negative(a):
        return f"(-{a})"

    @staticmethod
    def square(a):
        return f"({a} * {a})"

    @staticmethod
    def reciprocal(a):
        return f"(1.0 / {a})"

    @staticmethod
    def rsqrt(a):
        return f"(1.0 / np.sqrt({a}))"

    @staticmethod
    def maximum(a, b):
        return f"_maximum({a}, {b})"

    @staticmethod
    def minimum(a, b):
        return f"_minimum({a}, {b})"

    @staticmethod
    def relu(a):
        return f"_relu({a})"

    @staticmethod
    def sigmoid(a):
        return f"_sigmoid({a})"

    @staticmethod
    def softplus(a):
        return f"_softplus({a})"

    @staticmethod
    def sign(a):
        return f"_sign({a})"

    @staticmethod
    def erf(a):
        return f"math.erf({a})"

    @staticmethod
    def where(c, a, b):
        return f"({a} if {c} else {b})"

    # comparisons and logic (operands already cast to a common dtype)
    @staticmethod
    def equal(a, b):
        return f"({a} == {b})"

    @staticmethod
    def not_equal(a, b):
        return f"({a} != {b})"

    @staticmethod
    def less(a, b):
        return f"({a} < {b})"

    @staticmethod
    def less_equal(a, b):
        return f"({a} <= {b})"

    @staticmethod
    def greater(a, b):
        return f"({a} > {b})"

    @staticmethod
    def greater_equal(a, b):
        return f"({a} >= {b})"

    @staticmethod
    def logical_and(a, b):
        return f"(b1({a}) and b1({b}))"

    @staticmethod
    def logical_or(a, b):
        return f"(b1({a}) or b1({b}))"

    @staticmethod
    def logical_not(a):
        return f"(not b1({a}))"


# one-argument maps that are NumPy's own scalar functions inside Numba
for _name in (
    "exp expm1 log log1p log2 log10 exp2 sqrt sin cos tan tanh arcsin arccos arctan sinh "
    "cosh arcsinh arccosh arctanh floor ceil trunc abs"
).split():
    setattr(_Scalar, _name, staticmethod(lambda a, _n=_name: f"np.{_n}({a})"))
for _name in ("arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "fmod"):
    setattr(_Scalar, _name, staticmethod(lambda a, b, _n=_name: f"np.{_n}({a}, {b})"))

SCALAR = _Scalar()

# The scalar helpers every generated module starts with (its own copy: NOTE [Kernels] in
# docs/developer.rst, a cached kernel must not depend on another file's source)
PRELUDE = """\
import math

import numpy as np
from numba import njit, prange
from numpy import bool_ as b1
from numpy import float32 as f32
from numpy import float64 as f64


@njit(inline="always", error_model="numpy")
def _maximum(a, b):
    return a if (a >= b or a != a) else b


@njit(inline="always", error_model="numpy")
def _minimum(a, b):
    return a if (a <= b or a != a) else b


@njit(inline="always", error_model="numpy")
def _relu(a):
    return a if not (a <= 0) else a * 0


@njit(inline="always", error_model="numpy")
def _sign(a):
    return (a > 0) - (a < 0) if a == a else a


@njit(inline="always", error_model="numpy")
def _sigmoid(a):
    # 1 / (1 + e^-a), as the eager kernel: 0 where e^-a overflows
    return 1.0 / (1.0 + math.exp(-a))


@njit(inline="always", error_model="numpy")
def _softplus(a):
    return max(a, 0.0) + math.log1p(math.exp(-abs(a)))
"""


# -- planning ---------------------------------------------------------------------------------
class Group:
    """A loop nest: ``eqns`` over iteration shape ``shape``; ``kind`` per eqn."""

    __slots__ = ("eqns", "kinds", "reduced", "shape")

    def __init__(self, shape):
        self.shape = shape
        self.eqns = []
        self.kinds = []
        self.reduced = set()  # ids of vars that are sums (complete only after the loop)


def _lowering(eqn):
    """``(kind, iteration shape)`` of a lowerable equation, or None."""
    prim, outs = eqn.prim, eqn.outs
    if len(outs) != 1:
        return None
    out = outs[0]
    name = prim.__name__
    ins = [a for a in eqn.ins if type(a) is Var]
    if any(v.dtype not in _FLOATS and v.dtype != _BOOL for v in ins):
        return None
    if name == "Expand":
        return ("expand", out.shape) if out.dtype in _FLOATS else None
    if name in ("Sum", "SumTo"):
        x = eqn.ins[0]
        if type(x) is not Var or out.dtype not in _FLOATS or x.dtype != out.dtype:
            return None
        if name == "Sum" and eqn.params.get("dtype") not in (None, out.dtype):
            return None
        return ("sum", x.shape) if _sum_axes(eqn) is not None else None
    scalar = getattr(prim, "scalar", None)
    if scalar is None or out.dtype not in (*_FLOATS, _BOOL):
        return None
    if any(not isinstance(a, (Var, bool, int, float)) for a in eqn.ins):
        return None
    expr = scalar(SCALAR, *[f"x{i}" for i in range(len(eqn.ins))], **eqn.params)
    if expr is None:
        return None
    return ("map", out.shape)


def _transcendental(eqn):
    """Whether an equation's scalar form calls a transcendental function."""
    if eqn.prim.scalar is None:
        return False
    expr = eqn.prim.scalar(SCALAR, *["x"] * len(eqn.ins), **eqn.params)
    return any(f in expr for f in ("np.", "math.", "_sigmoid", "_softplus"))


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _sum_axes(eqn):
    """The reduced axes of a ``Sum``/``SumTo`` in its input's rank, or None."""
    x, out = eqn.ins[0], eqn.outs[0]
    nd = len(x.shape)
    if eqn.prim.__name__ == "SumTo":
        shape = tuple(eqn.params["shape"])
        lead = nd - len(shape)
        if lead < 0:
            return None
        return tuple(k for k in range(nd) if k < lead or (shape[k - lead] == 1 and x.shape[k] != 1))
    dims = eqn.params.get("dims")
    if dims is None:
        axes = tuple(range(nd))
    else:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        axes = tuple(sorted({d % nd if nd else 0 for d in dims})) if nd else ()
    keep = eqn.params.get("keepdim", False)
    want = tuple((1 if k in axes else x.shape[k]) for k in range(nd) if keep or k not in axes)
    return axes if want == out.shape else None


# NOTE [Loop nest size]: PyPI's llvmlite has no SVML, so Numba's scalar exp/tanh/log cost
# 10-40 ns per element where NumPy's SIMD ufuncs cost about 1: above ``FUSE_MAX_MATH``
# iterations a transcendental map runs as the eager array call (NumPy's ufunc), and the
# arithmetic around it stays fused (one pass instead of several) up to ``FUSE_MAX``.
# Measured with asv_bench/run_compile.py's size sweep (tanh(x*w+b)*sigmoid(x), forward and
# backward): fused 33 us vs eager 62 us at 256 elements, 150 us vs 96 us at 4096.
FUSE_MAX_MATH = 1024
FUSE_MAX = 1 << 24
# from this many iterations a loop nest would run its outer loop on every core (prange);
# None: never. Off because Numba's parallel loops stall for milliseconds when the other
# core of a small machine is busy (the threading layer's wait policy), while the eager
# kernels use numbagrad's own thread pool; measured on the 2-core machine with a test
# suite running beside: a 512x512 bias+relu loop nest 14 ms threaded, against 0.3 ms serial
PARALLEL_MIN = None


def plan(eqns, limits=True):
    """Split ``eqns`` (in order) into a list of steps: ``Group``s and single eqns run as
    array calls (NOTE [Lowering]). ``limits``: apply NOTE [Loop nest size]'s CPU size
    limits (a CUDA program fuses every size: NOTE [Compiled CUDA programs])."""
    steps = []
    group = None
    in_group = {}  # id(var) -> the open group producing it

    def close():
        nonlocal group
        if group is not None:
            steps.append(group)
        group = None

    for e in eqns:
        low = _lowering(e)
        if low is not None and limits:
            n = _size(low[1])
            if n > FUSE_MAX or (n > FUSE_MAX_MATH and _transcendental(e)):
                low = None
        reads = [a for a in e.ins if type(a) is Var]
        if low is None:
            if group is not None and any(
                id(v) in group.reduced or in_group.get(id(v)) is group for v in reads
            ):
                close()
            steps.append(e)
            continue
        kind, shape = low
        if group is not None and (
            group.shape != shape or any(id(v) in group.reduced for v in reads)
        ):
            close()
        if group is None:
            group = Group(shape)
        group.eqns.append(e)
        group.kinds.append(kind)
        for o in e.outs:
            in_group[id(o)] = group
            if kind == "sum":
                group.reduced.add(id(o))
    close()
    return steps
