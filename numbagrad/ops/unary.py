"""Elementwise unary ops.

Each op states its local derivative once, as ``derivative(m, s)`` in terms of the saved
input or output ``s`` and a namespace ``m`` of math functions: with ``m`` the op namespace
it gives the differentiable VJP ``g * d`` (and, when the transforms land, the JVP
``t * d``); with ``m`` the backend's array math it gives the fused first-order backward.
Where a one-pass kernel computes ``g * d`` faster, the op names it (``kernel``); the backend
uses it for large arrays, and the op database checks it against the composite rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from numbagrad import ops as F
from numbagrad._creation import const_zeros_like as zeros_like
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import (
    both_ways,
    bound_both_ways,
    conj_all,
    elementwise_batch,
    unary_batch,
)
from numbagrad.ops._util import default_float

__all__ = ["unary_batch"]


class Unary(Primitive, register=False):
    """An elementwise map of one tensor: ``fn`` names the backend's map; float-only ops
    cast integer and bool inputs to the default float dtype first (as PyTorch does)."""

    fn = ""
    float_only = True
    kernel: Any = None  # the backend's fused ``g * derivative`` kernel, if any
    # ``divisor(m, s)``, optional: the rule is ``g / divisor`` (the derivative is its
    # reciprocal), as PyTorch writes the log family's (``grad / (self * ln(10))``), so the
    # rounding, and the second derivative's, is PyTorch's
    divisor: Any = None

    @staticmethod
    def derivative(m, s):
        """The local derivative from the saved input or output ``s`` (see module doc)."""
        raise NotImplementedError("a Unary op must define derivative(m, s)")

    @classmethod
    def impl(cls, be, x):
        if cls.float_only and x.dtype.kind not in "fc":
            x = x.astype(default_float())
        return be.map(cls.fn, x)

    # (complex inputs: the VJP conjugates the local derivative, NOTE [Complex autograd])
    @classmethod
    def scalar(cls, m, x, **params):
        fn = getattr(m, cls.fn, None) if cls.fn else None
        return None if fn is None or params else fn(x)

    @classmethod
    def vjp(cls, ctx, g):
        if cls.divisor is not None:
            return g / F.conj(cls.divisor(F, ctx.saved()[0]))
        return g * F.conj(cls.derivative(F, ctx.saved()[0]))

    # by hand (NOTE [Hand-written fused rules]): the backend's one-pass ``unary_backward`` kernel
    # (no derivative array)
    @classmethod
    def fused_vjp(cls, ctx, g):
        s = ctx.saved_arrays()[0]
        if s.dtype.kind == "c":
            m = ctx.be.math
            if cls.divisor is not None:
                return g / m.conj(cls.divisor(m, s))
            return g * m.conj(cls.derivative(m, s))
        if cls.divisor is not None:
            return g / cls.divisor(ctx.be.math, s)
        return ctx.be.unary_backward(cls.kernel, g, s, cls.derivative)

    @classmethod
    def jvp(cls, primals, tangents, out):
        s = primals[0] if cls.saves_inputs else out
        if cls.divisor is not None:
            return tangents[0] / cls.divisor(F, s)
        return tangents[0] * cls.derivative(F, s)

    batch = classmethod(unary_batch)


def _negate(ctx, g):
    return -g  # on tensors and on arrays alike


# -- linear / piecewise ----------------------------------------------------------------
class Neg(Unary):
    linearity = "linear"
    float_only = False
    fn = "negative"
    vjp = fused_vjp = staticmethod(_negate)

    @classmethod
    def impl(cls, be, x):
        if x.dtype.kind == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` "
                "operator instead."
            )
        return be.map("negative", x)


def _not_for_bool(name, x):
    """PyTorch's error for an elementwise kernel it has no bool version of."""
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _sign_array(be, x):
    """``sign(x)`` of an array as PyTorch's: 0 (not NaN) at NaN, a copy for bools."""
    if x.dtype.kind == "b":
        return x.copy()
    s = be.xp.asarray(be.map("sign", x))  # (a 0-d input gives a NumPy scalar)
    if x.dtype.kind == "f":
        be.xp.nan_to_num(s, copy=False, nan=0.0)
    return s


class Abs(Unary):
    """``|x|``; its gradient is ``g * sign(x)``, 0 at 0 and at NaN (PyTorch's ``sgn``)."""

    float_only = False
    fn = "abs"
    saves_inputs = (0,)

    @classmethod
    def impl(cls, be, x):
        _not_for_bool("abs_cpu", x)
        return be.map("abs", x)

    @staticmethod
    def derivative(m, x):
        # sgn(x) built from comparisons, so it is a constant of the graph: PyTorch's sgn has
        # an (efficient) zero-tensor derivative that contributes nothing, where sign's
        # zeros would give 0 * inf = NaN upstream (``abs(log(x))`` twice at x = 0)
        return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)

    # by hand (NOTE [Hand-written fused rules]): the sign as an array, one multiply (no comparisons'
    # temporaries)
    @staticmethod
    def fused_vjp(ctx, g):
        be = ctx.be
        x = ctx.saved_arrays()[0]
        if x.dtype.kind == "c":  # g * sgn(z) (NOTE [Complex autograd])
            return be.binary("multiply", g, F.cplx.Sgn.impl(be, x))
        return be.binary("multiply", g, _sign_array(be, x))

    @classmethod
    def vjp(cls, ctx, g):
        (x,) = ctx.saved()
        if x.dtype.is_complex:
            return g * F.sgn(x)
        return g * cls.derivative(F, x)

    @classmethod
    def jvp(cls, primals, tangents, out):
        (x,), (t,) = primals, tangents
        if x.dtype.is_complex:  # Re(conj(sgn z) t)
            return F.real(F.conj(F.sgn(x)) * t)
        return t * cls.derivative(F, x)


class _PiecewiseConstant(Unary, register=False):
    """``sign``, ``floor``, ``ceil``, ``round``: the gradient is zeros, not ``g * 0`` (NaN
    where ``g`` is infinite), and nothing is saved (PyTorch's ``zeros_like(grad)``; changing
    the input in place afterwards is legal)."""

    float_only = False

    @classmethod
    def impl(cls, be, x):
        _not_for_bool(f"{cls.fn}_vml_cpu", x)
        return be.map(cls.fn, x)

    @staticmethod
    def vjp(ctx, g):
        return zeros_like(g)

    # by hand (NOTE [Hand-written fused rules]): zeros made without reading ``g`` (no ``g * 0``)
    @staticmethod
    def fused_vjp(ctx, g):
        return ctx.be.zeros(g.shape, g.dtype)

    @staticmethod
    def jvp(primals, tangents, out):
        return None  # piecewise constant: a zero tangent


class Sign(_PiecewiseConstant):
    """-1, 0 or 1 (0 at NaN, as PyTorch); bools are their own sign."""

    fn = "sign"

    @classmethod
    def impl(cls, be, x):
        return _sign_array(be, x)


class Floor(_PiecewiseConstant):
    fn = "floor"


class Ceil(_PiecewiseConstant):
    fn = "ceil"


class Round(_PiecewiseConstant):
    fn = "round"  # half to even, as torch.round


class Relu(Unary):
    """``max(x, 0)``. Its backward MASKS, as PyTorch's ``threshold_backward``
    (``where(result <= 0, 0, grad)``): 0 where the result is 0, even where the gradient
    is infinite (``sqrt(relu(x))`` at ``x <= 0``), and the gradient itself where the result
    is NaN; the fused kernel (large arrays) masks too."""

    float_only = False
    fn = "relu"
    saves_output = True
    kernel = "relu_backward"

    @staticmethod
    def impl(be, x):
        if x.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        # clamp_min(x, 0) as PyTorch: -0.0 stays -0.0 (NumPy's maximum returns its second
        # operand on a tie, whatever the size), NaN propagates
        return be.xp.maximum(x.dtype.type(0), x)

    @staticmethod
    def derivative(m, y):
        return y > 0

    @staticmethod
    def vjp(ctx, g):
        (y,) = ctx.saved()
        # ``y - y`` (+0 where y is +-0) keeps the zero derivative in the result, as PyTorch's
        # threshold_backward has one: a second derivative is zeros, not "does not require
        # grad"
        return F.where(y <= 0, y - y, g)

    # by hand (NOTE [Hand-written fused rules]): the one-pass kernel above ``KERNEL_MIN`` elements
    @classmethod
    def fused_vjp(cls, ctx, g):
        (y,) = ctx.saved_arrays()
        be = ctx.be
        if y.size >= be.KERNEL_MIN:  # the one-pass kernel: ``g if y > 0 else 0``
            return be.unary_backward(cls.kernel, g, y, cls.derivative)
        return be.xp.where(y <= 0, 0, g)

    @staticmethod
    def jvp(primals, tangents, out):
        return F.where(out <= 0, 0, tangents[0])


# -- exponentials and logarithms ---------------------------------------------------------
class Exp(Unary):
    fn = "exp"
    saves_output = True

    @staticmethod
    def derivative(m, y):
        return y


class Expm1(Unary):
    fn = "expm1"
    saves_output = True

    @staticmethod
    def derivative(m, y):
        return y + 1


class Log(Unary):
    fn = "log"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(x)

    @staticmethod
    def divisor(m, x):
        return x


class Log1p(Unary):
    fn = "log1p"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(x + 1)

    @staticmethod
    def divisor(m, x):
        return x + 1


class Log2(Unary):
    fn = "log2"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(x * math.log(2.0))

    @staticmethod
    def divisor(m, x):
        return x * math.log(2.0)


class Sqrt(Unary):
    fn = "sqrt"
    saves_output = True

    @staticmethod
    def derivative(m, y):
        return 0.5 / y

    # grad / (2 * result), as PyTorch writes it: for a complex result 0 the quotient is
    # +-inf in each part (complex division by 0), where g * (0.5 / 0) is NaN
    @staticmethod
    def divisor(m, y):
        return y * 2


def _safe_sqrt_rule(m, y, g):
    # (grad / (result * 2)).masked_fill_(result == 0, 0), as PyTorch's std_backward: masked,
    # so an infinite ``g`` gives 0 there too; the division by 0 stays in the unselected
    # branch, as in PyTorch, so the second derivative there is NaN as PyTorch's
    return m.where(y == 0, 0, g / (y * 2))


def _safe_sqrt_vjp(m, ctx, saved, g):
    return _safe_sqrt_rule(m, saved[0], g)


class SafeSqrt(Sqrt):
    """``sqrt`` whose gradient is 0 (not inf) where the result is 0 (used by ``std``)."""

    grad_fn = "SqrtBackward0"

    @staticmethod
    def derivative(m, y):
        zero = y == 0
        return m.where(zero, 0, 0.5 / m.where(zero, 1, y))

    vjp, fused_vjp = both_ways(_safe_sqrt_vjp)

    @staticmethod
    def jvp(primals, tangents, out):
        return _safe_sqrt_rule(F, out, tangents[0])


def _rsqrt_vjp(m, ctx, saved, g):
    # -0.5 * grad * conj(result ** 3), in PyTorch's order: the constant scales the cotangent,
    # not the cube; a complex cube that overflowed, times -0.5 (a complex -0.5 + 0j), meets
    # inf * 0 = NaN in both parts where PyTorch's product keeps an infinite one
    y = saved[0]
    (cube,) = conj_all((y * y * y,))  # (real values pass through: no conj on every backend)
    return (g * -0.5) * cube


class Rsqrt(Unary):
    fn = "rsqrt"
    saves_output = True

    @classmethod
    def impl(cls, be, x):
        if x.dtype.kind not in "fc":
            x = x.astype(default_float())
        try:
            return be.map("rsqrt", x)
        except ZeroDivisionError:
            # the large-array kernel raises at 0 under numba's Python error model; 1/sqrt(0)
            # is inf (and 1/sqrt(-0.0) -inf), as in PyTorch
            with np.errstate(divide="ignore", invalid="ignore"):
                return 1 / be.xp.sqrt(x)

    @staticmethod
    def derivative(m, y):
        return y * y * y * -0.5

    vjp, fused_vjp = both_ways(_rsqrt_vjp)

    @staticmethod
    def jvp(primals, tangents, out):
        return tangents[0] * -0.5 * (out * out * out)


class Square(Unary):
    float_only = False
    fn = "square"
    saves_inputs = (0,)

    @staticmethod
    def impl(be, x):
        if x.dtype.kind == "b":  # pow(x, 2) as PyTorch: bools square in int64
            x = x.astype(np.int64)
        return be.map("square", x)

    @staticmethod
    def derivative(m, x):
        return x * 2


class Reciprocal(Unary):
    fn = "reciprocal"
    saves_output = True

    @staticmethod
    def derivative(m, y):
        return -(y * y)


# -- trigonometric and activations -------------------------------------------------------
class Sin(Unary):
    fn = "sin"
    saves_inputs = (0,)
    kernel = "sin_backward"

    @staticmethod
    def derivative(m, x):
        return m.cos(x)


class Cos(Unary):
    fn = "cos"
    saves_inputs = (0,)
    kernel = "cos_backward"

    @staticmethod
    def derivative(m, x):
        return -m.sin(x)


class Tan(Unary):
    fn = "tan"
    saves_output = True
    kernel = "tan_backward"

    @staticmethod
    def derivative(m, y):
        return y * y + 1


class Tanh(Unary):
    fn = "tanh"  # NumPy's SIMD tanh beats a scalar-libm njit loop
    saves_output = True
    kernel = "tanh_backward"

    @staticmethod
    def derivative(m, y):
        return 1 - y * y


def _sigmoid_rule(cls, ctx, saved, g):
    return SigmoidBackward, (g, *conj_all(saved)), NO_PARAMS  # (saved: the output)


class Sigmoid(Unary):
    """The logistic function; its VJP is the ``SigmoidBackward`` primitive (PyTorch's
    ``sigmoid_backward``), whose own VJP is PyTorch's."""

    fn = "sigmoid"
    saves_output = True
    kernel = "sigmoid_backward"

    @staticmethod
    def derivative(m, y):
        return y * (1 - y)

    vjp, fused_vjp = bound_both_ways(_sigmoid_rule)

    @staticmethod
    def jvp(primals, tangents, out):
        return bind(SigmoidBackward, (tangents[0], out), NO_PARAMS)


class SigmoidBackward(Primitive):
    """``g * (1 - y) * y``, sigmoid's VJP from its output ``y`` (PyTorch's
    ``sigmoid_backward``, grouped as its kernel). A primitive so that its own VJP is
    PyTorch's (derivatives.yaml): ``sigmoid_backward(gg, y)`` for ``g`` and the single term
    ``gg * g * (1 - 2 y)`` for ``y``, where differentiating the product would give
    ``inf - inf = NaN`` for an infinite ``g``."""

    saves_inputs = (0, 1)

    @staticmethod
    def scalar(m, g, y):
        return m.multiply(m.multiply(g, m.subtract("1.0", y)), y)

    @staticmethod
    def impl(be, g, y):
        if np.shape(g) == np.shape(y) and y.size >= be.KERNEL_MIN:
            # the fused one-pass kernel (threaded from PARALLEL_MIN elements)
            return be.unary_backward("sigmoid_backward", g, y, Sigmoid.derivative)
        return be.binary("multiply", be.binary("multiply", g, be.binary("subtract", 1, y)), y)

    @staticmethod
    def vjp(ctx, gg):
        g, y = conj_all(ctx.saved())
        gg_g = bind(SigmoidBackward, (gg, y), NO_PARAMS) if ctx.needs_input_grad(0) else None
        gy = gg * g * (y * -2 + 1) if ctx.needs_input_grad(1) else None
        return gg_g, gy

    @staticmethod
    def jvp(primals, tangents, out):
        g, y = primals
        tg, ty = tangents
        t = None if tg is None else bind(SigmoidBackward, (tg, y), NO_PARAMS)
        if ty is not None:
            d = ty * g * (y * -2 + 1)
            t = d if t is None else t + d
        return t

    @staticmethod
    def batch(args, dims):
        return elementwise_batch(SigmoidBackward, args, dims)


def _softplus_rule(cls, ctx, saved, g, beta, threshold):
    return SoftplusBackward, (g, saved[0]), {"beta": beta, "threshold": threshold}


class Softplus(Primitive):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``: one
    node (``SoftplusBackward0``) that saves its input, as PyTorch's ``softplus``, whose VJP
    is PyTorch's ``softplus_backward`` (``SoftplusBackward``), so its second derivative is
    PyTorch's too."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, beta, threshold):
        bx = x if beta == 1.0 else be.binary("multiply", x, beta)
        y = be.map("softplus", bx)  # computed stably: max(v, 0) + log1p(exp(-|v|))
        if beta != 1.0:
            y = be.binary("true_divide", y, beta)
        return be.xp.where(be.binary("greater", bx, threshold), x, y)

    vjp, fused_vjp = bound_both_ways(_softplus_rule)

    @staticmethod
    def jvp(primals, tangents, out, beta, threshold):
        p = {"beta": beta, "threshold": threshold}
        return bind(SoftplusBackward, (tangents[0], primals[0]), p)


class StableSoftplus(Unary):
    """``log(1 + exp(x))`` with the derivative ``sigmoid(x)``, stable for every ``x`` (no
    threshold): what ``logsigmoid`` and ``binary_cross_entropy_with_logits`` are built from,
    whose PyTorch kernels are stable where ``softplus_backward``'s ``z / (z + 1)`` is NaN
    (``z = exp(x) = inf``)."""

    fn = "softplus"
    saves_inputs = (0,)
    kernel = "softplus_backward"

    @staticmethod
    def derivative(m, x):
        return m.sigmoid(x)


def _softplus_double(gg, x, beta, threshold):
    """PyTorch's ``softplus_double_backward(gg, x, beta, threshold)``: the derivative of
    ``softplus_backward`` with respect to ``x``, a product with the mask ``beta x <
    threshold`` (so a NaN ``gg`` stays NaN above it, as in PyTorch)."""
    bx = x * beta
    s = sigmoid(bx)
    return bind(SigmoidBackward, (gg, s), NO_PARAMS) * (bx < threshold) * beta


class SoftplusBackward(Primitive):
    """``softplus``'s VJP from its input ``x`` (PyTorch's ``softplus_backward``): ``g``
    where ``beta x > threshold``, else ``g z / (z + 1)`` with ``z = exp(beta x)``, written
    as PyTorch's kernel writes it so the rounding is the same."""

    saves_inputs = (0, 1)

    @staticmethod
    def impl(be, g, x, beta, threshold):
        if x.dtype == np.float16:  # in float32, rounded once (NOTE [Half precision])
            f = np.float32
            out = SoftplusBackward.impl(be, g.astype(f), x.astype(f), beta, threshold)
            return out.astype(np.float16)
        bx = x if beta == 1.0 else be.binary("multiply", x, beta)
        z = be.map("exp", bx)  # inf above ~709: that branch is not selected
        d = be.binary("true_divide", be.binary("multiply", g, z), be.binary("add", z, 1))
        return be.xp.where(be.binary("greater", bx, threshold), g, d)

    @staticmethod
    def vjp(ctx, gg, beta, threshold):
        g, x = ctx.saved()
        p = {"beta": beta, "threshold": threshold}
        d_g = bind(SoftplusBackward, (gg, x), p) if ctx.needs_input_grad(0) else None
        d_x = _softplus_double(gg * g, x, beta, threshold) if ctx.needs_input_grad(1) else None
        return d_g, d_x

    @staticmethod
    def jvp(primals, tangents, out, beta, threshold):
        (g, x), (tg, tx) = primals, tangents
        p = {"beta": beta, "threshold": threshold}
        acc = None if tg is None else bind(SoftplusBackward, (tg, x), p)
        if tx is not None:
            term = _softplus_double(tx * g, x, beta, threshold)
            acc = term if acc is None else acc + term
        return acc

    @staticmethod
    def batch(args, dims, beta, threshold):
        return elementwise_batch(SoftplusBackward, args, dims, beta=beta, threshold=threshold)


class Erf(Unary):
    fn = "erf"
    saves_inputs = (0,)
    kernel = "erf_backward"

    @staticmethod
    def derivative(m, x):
        return m.exp(-(x * x)) * (2 / math.sqrt(math.pi))


# -- inverse trigonometric, hyperbolic, log10, exp2 -------------------------------------------
# The derivatives are PyTorch's (derivatives.yaml), so values at the domain edges match: acos'
# and asin' are -inf/inf at +-1, acosh' inf at 1, atanh' inf at +-1, NaN outside the domain.
class Acos(Unary):
    fn = "arccos"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return -m.reciprocal(m.sqrt(1 - x * x))


class Asin(Unary):
    fn = "arcsin"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(m.sqrt(1 - x * x))


class Atan(Unary):
    fn = "arctan"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(x * x + 1)

    @staticmethod
    def divisor(m, x):
        return x * x + 1


class Sinh(Unary):
    fn = "sinh"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.cosh(x)


class Cosh(Unary):
    fn = "cosh"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.sinh(x)


class Asinh(Unary):
    fn = "arcsinh"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(m.sqrt(x * x + 1))


class Acosh(Unary):
    fn = "arccosh"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        if getattr(x.dtype, "kind", None) == "c" or getattr(x.dtype, "is_complex", False):
            # complex: sqrt(x - 1) sqrt(x + 1), the branch of acosh's own cut (PyTorch's)
            return m.reciprocal(m.sqrt(x - 1) * m.sqrt(x + 1))
        return m.reciprocal(m.sqrt(x * x - 1))


class Atanh(Unary):
    fn = "arctanh"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(1 - x * x)

    @staticmethod
    def divisor(m, x):
        return 1 - x * x  # PyTorch's grad * 1 / (1 - self.pow(2)), a division


_LN10 = 2.3025850929940456  # ln(10) as PyTorch's log10 rule writes it (1 ulp below math.log(10))


class Log10(Unary):
    fn = "log10"
    saves_inputs = (0,)

    @staticmethod
    def derivative(m, x):
        return m.reciprocal(x * _LN10)

    @staticmethod
    def divisor(m, x):
        return x * _LN10


class Exp2(Unary):
    fn = "exp2"
    saves_output = True

    @staticmethod
    def derivative(m, y):
        return y * math.log(2.0)


class Trunc(_PiecewiseConstant):
    fn = "trunc"  # integer inputs keep their dtype (NumPy 2's trunc does too)


class Predicate(Primitive, register=False):
    """An elementwise test of floating values (bool, no gradient); integer and bool inputs
    are finite and never nan or inf."""

    differentiable = False
    fn = ""
    default = True  # the answer for integer and bool inputs
    batch = classmethod(unary_batch)

    @classmethod
    def impl(cls, be, x):
        if x.dtype.kind == "f":
            return be.map(cls.fn, x)
        return be.xp.full(x.shape, cls.default, bool)


class IsFinite(Predicate):
    fn = "isfinite"
    default = True


class IsNan(Predicate):
    fn = "isnan"
    default = False


class IsInf(Predicate):
    fn = "isinf"
    default = False


class Signbit(Predicate):
    """True where the sign bit is set (``-0.0`` and ``-nan`` included); for integers
    ``x < 0``, for bools never."""

    fn = "signbit"

    @classmethod
    def impl(cls, be, x):
        if x.dtype.kind == "f":
            return be.map("signbit", x)
        if x.dtype.kind == "b":
            return be.xp.zeros(x.shape, bool)
        return be.xp.asarray(x < 0)


@public
def isfinite(input):
    """True where the element is neither inf nor nan."""
    return bind(IsFinite, (input,), NO_PARAMS)


@public
def isnan(input):
    """True where the element is nan."""
    return bind(IsNan, (input,), NO_PARAMS)


@public
def isinf(input):
    """True where the element is +inf or -inf."""
    return bind(IsInf, (input,), NO_PARAMS)


@public(inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace nan/inf by finite numbers (gradient passes where the input was finite).

    Integer and bool tensors (never nan or inf) give a copy of the same dtype; the
    replacement values are cast to the input's dtype as PyTorch does (``nan=1e300`` in
    float32 gives inf).
    """
    if not input.is_floating_point():
        return F.clone(input)
    npd = input.dtype.np
    fin = np.finfo(npd)

    def cast(v):
        with np.errstate(over="ignore"):
            return float(np.asarray(v, dtype=npd))

    big = fin.max if posinf is None else cast(posinf)
    small = fin.min if neginf is None else cast(neginf)
    return bind(
        NanToNum, (input,), {"nan": cast(nan), "posinf": float(big), "neginf": float(small)}
    )


class NanToNum(Unary):
    """``nan_to_num`` of a float tensor; params are the replacement values, already cast to
    the input's dtype. The gradient is PyTorch's ``grad * isfinite(self)`` (a product, not
    a mask: an infinite gradient at a replaced entry gives NaN, as in PyTorch), and only
    the input is saved."""

    float_only = False
    saves_inputs = (0,)

    @staticmethod
    def impl(be, x, *, nan, posinf, neginf):
        with np.errstate(over="ignore"):
            return be.xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def derivative(m, x):
        return m.isfinite(x)

    @classmethod
    def vjp(cls, ctx, g, **params):
        return g * F.isfinite(ctx.saved()[0])

    # by hand (NOTE [Hand-written fused rules]): the ``isfinite`` mask as an array (not in the array
    # math)
    @classmethod
    def fused_vjp(cls, ctx, g, **params):
        x = ctx.saved_arrays()[0]
        return ctx.be.binary("multiply", g, ctx.be.xp.isfinite(x).astype(g.dtype))

    @classmethod
    def jvp(cls, primals, tangents, out, **params):
        return tangents[0] * F.isfinite(primals[0])


# -- public functions ------------------------------------------------------------------------
def _unary(op, doc):
    def f(input):
        return bind(op, (input,), NO_PARAMS)

    name = op.__name__.lower()
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor
        Elementwise result; integer inputs give the default float dtype where PyTorch does.
    """
    return f


neg = public(_unary(Neg, "Elementwise negation ``-input``."), aliases=("negative",), inplace=True)
abs = public(_unary(Abs, "Elementwise absolute value."), aliases=("absolute",), inplace=True)
sign = public(_unary(Sign, "Elementwise sign (-1, 0 or 1); its gradient is zero."), inplace=True)
floor = public(_unary(Floor, "Elementwise floor; its gradient is zero."), inplace=True)
ceil = public(_unary(Ceil, "Elementwise ceiling; its gradient is zero."), inplace=True)
round = public(_unary(Round, "Round half to even; its gradient is zero."), inplace=True)
relu = public(_unary(Relu, "Rectified linear unit ``max(input, 0)``."), inplace=True)
exp = public(_unary(Exp, "Elementwise exponential."), inplace=True)
expm1 = public(_unary(Expm1, "``exp(input) - 1``, accurate near zero."), inplace=True)
log = public(_unary(Log, "Natural logarithm."), inplace=True)
log1p = public(_unary(Log1p, "``log(1 + input)``, accurate near zero."), inplace=True)
log2 = public(_unary(Log2, "Base-2 logarithm."), inplace=True)
sqrt = public(_unary(Sqrt, "Square root."), inplace=True)
rsqrt = public(
    _unary(Rsqrt, "Reciprocal square root ``1 / sqrt(input)`` (one fused pass)."), inplace=True
)
square = public(_unary(Square, "Elementwise square."), inplace=True)
reciprocal = public(_unary(Reciprocal, "Elementwise ``1 / input``."), inplace=True)
sin = public(_unary(Sin, "Elementwise sine."), inplace=True)
cos = public(_unary(Cos, "Elementwise cosine."), inplace=True)
tan = public(_unary(Tan, "Elementwise tangent."), inplace=True)
tanh = public(_unary(Tanh, "Hyperbolic tangent."), inplace=True)
stable_softplus = _unary(StableSoftplus, "``log(1 + exp(input))`` for any input (internal).")
sigmoid = public(
    _unary(Sigmoid, "Logistic sigmoid ``1 / (1 + exp(-input))``, computed stably."), inplace=True
)
erf = public(_unary(Erf, "The error function."), inplace=True)


acos = public(
    _unary(Acos, "Elementwise inverse cosine (radians)."), aliases=("arccos",), inplace=True
)
asin = public(
    _unary(Asin, "Elementwise inverse sine (radians)."), aliases=("arcsin",), inplace=True
)
atan = public(
    _unary(Atan, "Elementwise inverse tangent (radians)."), aliases=("arctan",), inplace=True
)
sinh = public(_unary(Sinh, "Hyperbolic sine."), inplace=True)
cosh = public(_unary(Cosh, "Hyperbolic cosine."), inplace=True)
asinh = public(_unary(Asinh, "Inverse hyperbolic sine."), aliases=("arcsinh",), inplace=True)
acosh = public(
    _unary(Acosh, "Inverse hyperbolic cosine (NaN below 1)."), aliases=("arccosh",), inplace=True
)
atanh = public(
    _unary(Atanh, "Inverse hyperbolic tangent (+-inf at +-1, NaN outside)."),
    aliases=("arctanh",),
    inplace=True,
)
log10 = public(_unary(Log10, "Base-10 logarithm."), inplace=True)
exp2 = public(_unary(Exp2, "Elementwise ``2 ** input``."), inplace=True)
trunc = public(
    _unary(Trunc, "Round toward zero; integer inputs keep their dtype; zero gradient."),
    aliases=("fix",),
    inplace=True,
)
arccos, arcsin, arctan = acos, asin, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh
fix = trunc
absolute = abs
negative = neg
acos.__doc__ += """
    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.acos(numbagrad.tensor([1.0, 0.0, -1.0]))
    tensor([0.0000, 1.5708, 3.1416])
    """


@public
def signbit(input):
    """True where the sign bit of ``input`` is set (``-0.0`` included; never for bools).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor
        bool, no gradient.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.signbit(numbagrad.tensor([-1.0, -0.0, 0.0, 2.0]))
    tensor([ True,  True, False, False])
    """
    return bind(Signbit, (input,), NO_PARAMS)


@public(inplace=True)
def sgn(input):
    """The sign of ``input``; for real tensors the same as :func:`sign`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.sgn(numbagrad.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    if input.dtype.is_complex:  # z / |z|
        return F.cplx.sgn_complex(input)
    return sign(input)


@public(inplace=True)
def frac(input):
    """The fractional part ``input - trunc(input)`` (sign of ``input``); gradient 1.

    Floating tensors only, as in PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.frac(numbagrad.tensor([1.25, -1.5]))
    tensor([ 0.2500, -0.5000])
    """
    if not input.is_floating_point():
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_torch_name(input)}'")
    return input - trunc(input)


def _torch_name(t):
    return {
        "int64": "Long",
        "int32": "Int",
        "bool": "Bool",
        "float32": "Float",
        "float64": "Double",
    }.get(str(t.dtype).split(".")[-1], str(t.dtype))


def _scaled(input, c):
    if input.is_complex():
        raise RuntimeError("deg2rad and rad2deg are not supported for complex tensors.")
    if not input.is_floating_point():
        input = input.to(default_float())
    return input * c


@public(inplace=True)
def deg2rad(input):
    """Degrees to radians, ``input * pi / 180`` (integers give the default float dtype).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.deg2rad(numbagrad.tensor([180.0, 90.0]))
    tensor([3.1416, 1.5708])
    """
    return _scaled(input, math.pi / 180.0)


@public(inplace=True)
def rad2deg(input):
    """Radians to degrees, ``input * 180 / pi`` (integers give the default float dtype).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.rad2deg(numbagrad.tensor([3.141592653589793]))
    tensor([180.])
    """
    return _scaled(input, 180.0 / math.pi)


@public
def positive(input):
    """``input`` itself (``+input``); bool tensors raise, as in PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([1.0, -2.0])
    >>> numbagrad.positive(x) is x
    True
    """
    if input.dtype.np.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@public
def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, linear above ``threshold`` (as PyTorch).

    Parameters
    ----------
    input : Tensor
    beta : float, default 1
    threshold : float, default 20
        Where ``beta * input`` exceeds it, the result is ``input`` itself.
    """
    if not input.is_floating_point():
        name = {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(
            str(input.dtype).split(".")[-1], str(input.dtype)
        )
        raise NotImplementedError(f"\"softplus_cpu\" not implemented for '{name}'")
    return bind(Softplus, (input,), {"beta": float(beta), "threshold": float(threshold)})
