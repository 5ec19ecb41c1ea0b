"""Elementwise binary ops with broadcasting, comparisons, ``where`` and ``clamp``.

Operands are tensors or Python scalars (kept as scalars: no tensor is made for ``x * 2``).
``_prep`` applies PyTorch's promotion (NOTE [Type promotion]); NumPy then computes in that
dtype. Rules return gradients in the broadcast shape and the engine reduces them.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import const_zeros_like as _zeros_like
from numbagrad._creation import tensor
from numbagrad._tensor import Tensor
from numbagrad.kernels.meta import no_data
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import bilinear_jvp, both_ways, broadcast_batch, conj_all, unary_batch

__all__: list = []

_SCALARS = (int, float, bool)


def _prep(a, b):
    """Cast operands to the promoted dtype; returns ``(a, b, dtype)`` as arrays/scalars."""
    ta, tb = type(a), type(b)
    if ta is np.ndarray and tb is np.ndarray:
        if a.dtype is b.dtype or a.dtype == b.dtype:
            return a, b, a.dtype
    elif ta is np.ndarray and tb in _SCALARS:
        if a.dtype.kind == "f":
            return a, b, a.dtype
    elif tb is np.ndarray and ta in _SCALARS:
        if b.dtype.kind == "f":
            return a, b, b.dtype
    if getattr(a, "_numbagrad_device", False) or getattr(b, "_numbagrad_device", False):
        return _prep_device(a, b)  # CUDA operands (NOTE [CUDA tensors] in _device.py)
    if getattr(a, "_numbagrad_meta", False) or getattr(b, "_numbagrad_meta", False):
        raise no_data("an arithmetic op on a meta tensor")  # (NOTE [Meta tensors])
    dt = D.result_type(_View(a), _View(b)).np
    return _cast(a, dt), _cast(b, dt), dt


def _prep_device(a, b):
    """``_prep`` for operands of which one is a CUDA array (a ``CudaArray``)."""
    views = [
        _View.of(x.dtype, x.ndim) if getattr(x, "_numbagrad_device", False) else _View(x)
        for x in (a, b)
    ]
    dt = D.result_type(*views).np
    a, b = (
        x.astype(dt, copy=False) if getattr(x, "_numbagrad_device", False) else _cast(x, dt)
        for x in (a, b)
    )
    return a, b, dt


class _View:
    """Gives ``result_type`` the dtype/ndim of an array operand (scalars pass through)."""

    __slots__ = ("dtype", "ndim")

    def __new__(cls, x):
        if type(x) is not np.ndarray:
            return x.item() if isinstance(x, (np.generic,)) else x
        return cls.of(x.dtype, x.ndim)

    @classmethod
    def of(cls, dt, ndim):
        v = object.__new__(cls)
        v.dtype = D._FROM_NP[dt]
        v.ndim = ndim
        return v


def _cast(x, dt):
    if type(x) is np.ndarray:
        if x.dtype == dt:
            return x
        if dt != np.float16:
            return x.astype(dt)
    elif hasattr(x, "astype"):  # a device array (CUDA)
        return x.astype(dt, copy=False)
    elif dt != np.float16:
        return dt.type(x)
    with np.errstate(over="ignore"):  # float16: beyond 65504 is inf, silently as PyTorch
        return x.astype(dt) if type(x) is np.ndarray else dt.type(x)


def _check_nonzero(xp, b, a):
    """PyTorch's error for an integer division or remainder by zero (NumPy returns 0); an
    empty result divides nothing and does not raise, as in PyTorch (fuzz seed 902096)."""
    if 0 in np.broadcast_shapes(np.shape(a), np.shape(b)):
        return
    if xp.any(xp.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _check_shapes(name, a, b):
    sa = a.shape if type(a) is np.ndarray else ()
    sb = b.shape if type(b) is np.ndarray else ()
    if sa != sb:
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            raise RuntimeError(
                f"{name}: the size of tensor a ({list(sa)}) must match the size of tensor b "
                f"({list(sb)}): shapes {list(sa)} and {list(sb)} are not broadcastable"
            ) from None


class Binary(Primitive, register=False):
    """A broadcasting elementwise op of two operands; ``fn`` is the NumPy-named ufunc the
    backend applies."""

    fn = ""
    batch = classmethod(broadcast_batch)
    promotes = True

    @classmethod
    def impl(cls, be, a, b):
        if not (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype):
            a, b, _ = _prep(a, b)
        try:
            return be.binary(cls.fn, a, b)
        except ValueError:
            _check_shapes(cls.__name__.lower(), a, b)
            raise

    @classmethod
    def scalar(cls, m, a, b, **params):
        fn = getattr(m, cls.fn, None)
        return None if fn is None or any(v is not None for v in params.values()) else fn(a, b)


def _both(ctx, g):
    return g, g


class Add(Binary):
    linearity = "linear"
    fn = "add"
    vjp = fused_vjp = staticmethod(_both)


def _is_bool(x):
    return x.dtype.kind == "b" if type(x) is np.ndarray else isinstance(x, (bool, np.bool_))


def _sub_rule(ctx, g):
    return g, (-g if ctx.needs_input_grad(1) else None)


class Sub(Binary):
    linearity = "linear"
    fn = "subtract"
    vjp = fused_vjp = staticmethod(_sub_rule)

    @classmethod
    def impl(cls, be, a, b):
        if _is_bool(a) or _is_bool(b):
            raise RuntimeError(
                "Subtraction, the `-` operator, with a bool tensor is not "
                "supported. If you are trying to invert a mask, use the `~` or "
                "`logical_not()` operator instead."
            )
        return super().impl(be, a, b)


class Mul(Binary):
    linearity = "bilinear"
    fn = "multiply"
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's

    @staticmethod
    def vjp(ctx, g):
        a, b = conj_all(ctx.saved())  # (complex: g * conj(b), NOTE [Complex autograd])
        return (
            (g * b if ctx.needs_input_grad(0) else None),
            (g * a if ctx.needs_input_grad(1) else None),
        )

    # by hand (NOTE [Hand-written fused rules]): the backend's one-pass ``mul_backward`` (no
    # temporaries)
    @staticmethod
    def fused_vjp(ctx, g):
        a, b = conj_all(ctx.saved_arrays())
        return ctx.be.mul_backward(g, a, b, ctx.needs_input_grad(0), ctx.needs_input_grad(1))


def _div_rule(ctx, g, a, b, zeros_like, rounding_mode):
    """PyTorch's ``div_tensor_self_backward`` / ``div_tensor_other_backward``: ``g / b`` and
    ``-g * ((a / b) / b)`` (from the inputs, not the output, so that changing the output in
    place stays legal, as in PyTorch); zeros for a rounded division (not ``g * 0``: an
    infinite ``g`` gives 0)."""
    if rounding_mode is not None:  # piecewise constant: zero gradient
        return tuple(zeros_like(g) if ctx.needs_input_grad(i) else None for i in (0, 1))
    return (
        (g / b if ctx.needs_input_grad(0) else None),
        (-g * ((a / b) / b) if ctx.needs_input_grad(1) else None),
    )


class ScaledMul(Binary):
    """``a * (scale * b)`` for a Python number ``scale``, grouped so: PyTorch's
    ``pow_backward`` for a number exponent, ``g * (c * x ** (c - 1))``, as one op instead of
    a scaling and a product (one fewer op for every transform to run through in the backward
    of each ``x ** 2``), with the same rounding, overflow and ``inf * 0`` pattern.
    Internal: ``Pow``'s rules bind it; its node is PyTorch's ``MulBackward0``."""

    grad_fn = "MulBackward0"
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's

    @staticmethod
    def scalar(m, a, b, scale):
        return m.multiply(a, m.multiply(b, m.const(scale)))

    @classmethod
    def impl(cls, be, a, b, scale):
        if not (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype):
            a, b, _ = _prep(a, b)
        return be.binary("multiply", a, be.binary("multiply", b, scale))

    @staticmethod
    def vjp(ctx, g, scale):
        a, b = conj_all(ctx.saved())
        scale = scale.conjugate() if type(scale) is complex else scale
        return (
            (bind(ScaledMul, (g, b), {"scale": scale}) if ctx.needs_input_grad(0) else None),
            (bind(ScaledMul, (g, a), {"scale": scale}) if ctx.needs_input_grad(1) else None),
        )

    # by hand (NOTE [Hand-written fused rules]): two gradients; the tensor form is one ``ScaledMul``
    # node each
    @staticmethod
    def fused_vjp(ctx, g, scale):
        a, b = conj_all(ctx.saved_arrays())
        scale = scale.conjugate() if type(scale) is complex else scale
        be = ctx.be
        return (
            (be.multiply(g, be.multiply(b, scale)) if ctx.needs_input_grad(0) else None),
            (be.multiply(g, be.multiply(a, scale)) if ctx.needs_input_grad(1) else None),
        )

    # the product rule, as the ops flagged bilinear get it (not flagged itself: the flag's
    # check reaches backward-only primitives only when they are linear)
    jvp = classmethod(bilinear_jvp)


class Div(Binary):
    fn = "true_divide"
    saves_inputs = (0, 1)  # what PyTorch saves: the inputs, never the output
    saved_for = ((1,), (0, 1))  # a is needed only for b's gradient, b for both

    @staticmethod
    def vjp(ctx, g, rounding_mode=None):
        a, b = conj_all(ctx.saved())
        return _div_rule(ctx, g, a, b, _zeros_like, rounding_mode)

    # by hand (NOTE [Hand-written fused rules]): one formula, ``_div_rule``, but the array math has
    # no ``zeros_like``
    @staticmethod
    def fused_vjp(ctx, g, rounding_mode=None):
        a, b = conj_all(ctx.saved_arrays())
        return _div_rule(ctx, g, a, b, ctx.be.xp.zeros_like, rounding_mode)

    @staticmethod
    def jvp(primals, tangents, out, rounding_mode=None):
        """``(ta - tb * y) / b``; rounded division is piecewise constant (zero)."""
        if rounding_mode is not None:
            return None
        b = primals[1]
        ta, tb = tangents
        if tb is None:
            return ta / b
        num = tb * out
        return (ta - num if ta is not None else -num) / b

    @staticmethod
    def impl(be, a, b, rounding_mode=None):
        xp = be.xp
        a, b, dt = _prep(a, b)
        _check_shapes("div", a, b)
        if rounding_mode is None:
            if dt.kind not in "fc":  # true division of integers gives the default float dtype
                dt = D.get_default_dtype().np
                a, b = _cast(a, dt), _cast(b, dt)
            return be.binary("true_divide", a, b)
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(
                f"div expected rounding_mode to be one of None, 'trunc', or "
                f"'floor' but found '{rounding_mode}'"
            )
        if dt.kind == "b":
            raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
        if dt.kind in "iu":
            _check_nonzero(xp, b, a)
            q = xp.floor_divide(a, b)  # exact in integers (no float round trip)
            if rounding_mode == "trunc":  # toward zero: one up where a / b < 0 is inexact
                neg = (xp.asarray(a) < 0) != (xp.asarray(b) < 0)
                q = q + ((xp.remainder(a, b) != 0) & neg)
            return _cast(xp.asarray(q), dt)
        if rounding_mode == "trunc":
            return _cast(xp.trunc(xp.true_divide(a, b)), dt)
        return xp.floor_divide(a, b)


class Pow(Binary):
    fn = "power"
    saves_inputs = (0, 1)
    saves_output = True  # for a tensor exponent's gradient only (see ``_record``)

    @classmethod
    def _record(cls, args, params, outs, *rest):
        node = super()._record(args, params, outs, *rest)
        if not isinstance(args[1], Tensor):
            # ``x ** c`` with a Python exponent: PyTorch saves only the base (no rule reads
            # the output), so changing the output in place stays legal
            node._saved[-1] = None
        return node

    @staticmethod
    def impl(be, a, b):
        xp = be.xp
        scalar_exponent = type(b) is not np.ndarray
        a, b, dt = _prep(a, b)
        if dt.kind == "b":  # PyTorch: x ** True is x, x ** False is ones; no bool kernel
            if not scalar_exponent or type(a) is not np.ndarray:
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
            return a.copy() if b else xp.ones(a.shape, a.dtype)
        if dt.kind in "iu":
            if scalar_exponent:
                if b < 0:
                    raise RuntimeError("Integers to negative integer powers are not allowed.")
            elif xp.any(xp.asarray(b) < 0):
                return _int_pow(xp, a, b, dt)
        elif scalar_exponent and type(a) is np.ndarray and dt.kind == "f":
            special = _POW_SPECIAL.get(float(b))
            if special is not None:  # PyTorch's kernels for these exponents (sqrt, ...)
                return special(be, a)
        return be.binary("power", a, b)

    @staticmethod
    def vjp(ctx, g):
        a, b, y = conj_all(ctx.saved())  # (complex: the real rule on conjugates)
        ga = gb = None
        if ctx.needs_input_grad(0):
            ga = _pow_grad_base(g, a, b)
            if ga is None:  # x ** 0: zeros (not g * 0: an infinite g gives 0, as PyTorch)
                ga = _zeros_like(g)
        if ctx.needs_input_grad(1):
            gb = _pow_grad_exponent(g, a, b, y)
        return ga, gb

    @staticmethod
    def jvp(primals, tangents, out):
        """``ta * b * a**(b-1) + tb * y * log(a)``, with the VJP's conventions."""
        a, b = primals
        ta, tb = tangents
        t = None if ta is None else _pow_grad_base(ta, a, b)
        if tb is not None:
            tb = _pow_grad_exponent(tb, a, b, out)
            t = tb if t is None else t + tb
        return t


def _int_pow(xp, a, b, dt):
    """Integer powers with negative exponents as PyTorch computes them (no error for a
    tensor exponent): 1 for a base 1, +-1 for -1, else 0."""
    a, b = xp.asarray(a), xp.asarray(b)
    neg = b < 0
    out = xp.power(a, xp.where(neg, 0, b)).astype(dt, copy=False)
    at_neg = xp.where(a == 1, 1, xp.where(a == -1, 1 - 2 * (b % 2 != 0), 0))
    return xp.where(neg, at_neg, out).astype(dt, copy=False)


def _quietly(f):
    """``f`` with NumPy's divide-by-zero and invalid-value errors off (a user's
    ``np.seterr(all="raise")`` must not turn ``x ** -1`` at 0 into an exception)."""

    def g(be, a):
        with np.errstate(divide="ignore", invalid="ignore"):
            return f(be, a)

    return g


# PyTorch's CPU kernels for a float tensor to these Python exponents (at special values they
# differ from ``pow``: ``(-inf) ** 0.5`` is NaN, ``(-0.) ** -0.5`` is -inf). Squares and
# cubes cannot divide by zero or make an invalid value: they skip the errstate (a context
# manager costs a microsecond, and ``x ** 2`` is in most losses).
_POW_SPECIAL = {
    0.5: _quietly(lambda be, a: be.map("sqrt", a)),
    2.0: lambda be, a: be.map("square", a),
    3.0: lambda be, a: be.binary("multiply", be.map("square", a), a),
    -0.5: _quietly(lambda be, a: be.map("reciprocal", be.map("sqrt", a))),
    -1.0: _quietly(lambda be, a: be.map("reciprocal", a)),
    -2.0: _quietly(lambda be, a: be.map("reciprocal", be.map("square", a))),
}


def _pow_grad_base(t, a, b):
    """``t * (b * a**(b-1))`` (``t`` times d(a**b)/da; written without y/a so a = 0 stays
    finite), 0 where a tensor exponent is 0 (as PyTorch); None for a Python exponent 0.
    The product is grouped as PyTorch's ``pow_backward``, so overflow and inf * 0 give its
    inf/NaN pattern."""
    if isinstance(b, Tensor):
        return F.where(b == 0, 0, t * (b * a ** (b - 1)))
    if b == 0:
        return None
    scale = b.item() if isinstance(b, np.generic) else b  # (a number, as PyTorch's)
    return bind(ScaledMul, (t, a if b == 2 else a ** (b - 1)), {"scale": scale})


def _pow_grad_exponent(t, a, b, y):
    """``t * y * log(a)`` (``t`` times d(a**b)/db), with ``y * log(a)`` taken as 0 where
    a == 0 and b >= 0 (PyTorch's ``pow_backward_exponent``)."""
    if isinstance(a, Tensor):
        # (a complex exponent: its real part, as PyTorch's pow_backward_exponent)
        zero_base = (a == 0) & ((F.real(b) if b.dtype.is_complex else b) >= 0)
        if a.dtype is not y.dtype:  # an integer base with a float exponent
            a = a.to(y.dtype)
        return t * F.where(zero_base, 0, y * F.log(a))
    if a == 0:  # a Python zero base
        return t * F.where(b >= 0, 0, y * -math.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_a = np.log(a)
        return t * (y * (complex(log_a) if np.iscomplexobj(log_a) else float(log_a)))


class Maximum(Binary):
    fn = "maximum"
    saves_inputs = (0, 1)

    @staticmethod
    def wins(a, b):
        """Where ``a`` is the one chosen."""
        return a > b

    @classmethod
    def weight(cls, a, b):
        """The share of ``a`` in the result: 1 where it wins, 1/2 at ties, else 0."""
        return F.where(a == b, 0.5, cls.wins(a, b))

    @classmethod
    def vjp(cls, ctx, g):
        """PyTorch's rule: ``where(a == b, g / 2, g)`` masked to 0 where the other side
        wins; ties split the gradient equally and at a NaN both sides get all of it."""
        a, b = ctx.saved()
        ga = gb = None
        if ctx.needs_input_grad(0) or ctx.needs_input_grad(1):
            share = F.where(a == b, g / 2, g)
            if ctx.needs_input_grad(0):
                ga = F.where(cls.wins(b, a), 0, share)
            if ctx.needs_input_grad(1):
                gb = F.where(cls.wins(a, b), 0, share)
        return ga, gb

    @classmethod
    def jvp(cls, primals, tangents, out):
        """``tb + wa * (ta - tb)``: the mean of the tangents at ties (as PyTorch)."""
        a, b = primals
        ta, tb = tangents
        wa = cls.weight(a, b)
        if tb is None:
            return ta * wa
        if ta is None:
            return tb - tb * wa
        return tb + (ta - tb) * wa


class Minimum(Maximum):
    fn = "minimum"

    @staticmethod
    def wins(a, b):
        return a < b


def _atan2_rule(m, ctx, saved, g):
    """PyTorch's ``atan2_backward``: ``g * b * r`` and ``g * -a * r`` with ``r`` the
    reciprocal of ``a**2 + b**2`` taken as 0 where that is 0 (so the origin gets 0)."""
    a, b = saved
    d = a * a + b * b
    r = m.where(d == 0, 0, m.reciprocal(d))
    return (
        (g * b * r if ctx.needs_input_grad(0) else None),
        (g * -a * r if ctx.needs_input_grad(1) else None),
    )


class Atan2(Binary):
    fn = "arctan2"
    saves_inputs = (0, 1)
    vjp, _fused = both_ways(_atan2_rule)

    # by hand (NOTE [Hand-written fused rules]): ``both_ways`` under ``np.errstate`` (a masked 1 / 0
    # at the origin)
    @staticmethod
    def fused_vjp(ctx, g):
        with np.errstate(divide="ignore"):  # 1 / 0 at the origin, masked out
            return Atan2._fused(ctx, g)

    @staticmethod
    def jvp(primals, tangents, out):
        """``(ta * b - tb * a) / (a**2 + b**2)``."""
        a, b = primals
        ta, tb = tangents
        if tb is None:
            num = ta * b
        elif ta is None:
            num = -(tb * a)
        else:
            num = ta * b - tb * a
        return num / (a * a + b * b)

    @staticmethod
    def impl(be, a, b):
        a, b, dt = _prep(a, b)
        if dt.kind != "f":
            dt = D.get_default_dtype().np
            a, b = _cast(a, dt), _cast(b, dt)
        return be.binary("arctan2", a, b)


class Fmod(Binary):
    fn = "fmod"  # sign of the dividend, as torch.fmod
    saves_inputs = (0, 1)
    saved_for = ((1,), (1,))  # only b's gradient reads them (a's is g)
    rounding = "trunc"  # fmod(a, b) = a - b * trunc(a / b)

    @classmethod
    def impl(cls, be, a, b):
        a, b, dt = _prep(a, b)
        _check_shapes(cls.__name__.lower(), a, b)
        if dt.kind in "iu":
            _check_nonzero(be.xp, b, a)  # PyTorch raises; NumPy would give 0
        elif dt.kind == "b":
            raise NotImplementedError(f"\"{cls.fn}_cpu\" not implemented for 'Bool'")
        elif cls.rounding == "floor":
            # PyTorch's float remainder: fmod, then + b where the signs differ; a zero keeps
            # the dividend's sign (NumPy's remainder gives it the divisor's)
            xp = be.xp
            with np.errstate(invalid="ignore"):
                mod = xp.asarray(xp.fmod(a, b))
                fix = (mod != 0) & ((xp.asarray(b) < 0) != (mod < 0))
                return xp.where(fix, mod + b, mod).astype(dt, copy=False)
        return be.binary(cls.fn, a, b)

    @classmethod
    def vjp(cls, ctx, g):
        a, b = ctx.saved()
        gb = None
        if ctx.needs_input_grad(1):
            gb = -g * F.div(a, b, rounding_mode=cls.rounding)
        return g, gb

    @classmethod
    def jvp(cls, primals, tangents, out):
        """``ta - tb * q`` with the rounded quotient ``q`` (as PyTorch)."""
        ta, tb = tangents
        if tb is None:
            return ta
        t = tb * F.div(primals[0], primals[1], rounding_mode=cls.rounding)
        return -t if ta is None else ta - t


class Remainder(Fmod):
    fn = "remainder"  # sign of the divisor, as torch.remainder
    rounding = "floor"  # remainder(a, b) = a - b * floor(a / b)


# -- hypot, logaddexp, copysign, fmax/fmin, heaviside, nextafter ---------------------------------
_TORCH_KIND = {
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


class FloatBinary(Binary, register=False):
    """A broadcasting op PyTorch has floating kernels for only (``hypot``, ``logaddexp``,
    ``nextafter``): integer and bool operands raise its error."""

    @classmethod
    def impl(cls, be, a, b):
        a, b, dt = _prep(a, b)
        if dt.kind != "f":
            raise NotImplementedError(
                f'"{cls.__name__.lower()}_cpu" not implemented for '
                f"'{_TORCH_KIND.get(dt.name, dt.name)}'"
            )
        _check_shapes(cls.__name__.lower(), a, b)
        return be.binary(cls.fn, a, b)


class Hypot(FloatBinary):
    """``sqrt(a**2 + b**2)`` without overflow; gradients ``g * a / y`` and ``g * b / y``
    (PyTorch's: NaN at the origin)."""

    fn = "hypot"
    saves_inputs = (0, 1)
    saves_output = True

    @staticmethod
    def vjp(ctx, g):
        a, b, y = ctx.saved()
        return (
            (g * a / y if ctx.needs_input_grad(0) else None),
            (g * b / y if ctx.needs_input_grad(1) else None),
        )

    @staticmethod
    def jvp(primals, tangents, out):
        a, b = primals
        ta, tb = tangents
        num = ta * a if tb is None else (tb * b if ta is None else ta * a + tb * b)
        return num / out


class Logaddexp(FloatBinary):
    """``log(exp(a) + exp(b))`` computed stably; gradients PyTorch's
    ``g / (1 + exp(b - a))`` and ``g / (1 + exp(a - b))`` (NaN where both are the same
    infinity, as there)."""

    fn = "logaddexp"
    saves_inputs = (0, 1)

    @staticmethod
    def _base(x):
        return F.exp(x)

    @classmethod
    def vjp(cls, ctx, g):
        a, b = ctx.saved()
        return (
            (g / (1 + cls._base(b - a)) if ctx.needs_input_grad(0) else None),
            (g / (1 + cls._base(a - b)) if ctx.needs_input_grad(1) else None),
        )

    @classmethod
    def jvp(cls, primals, tangents, out):
        a, b = primals
        ta, tb = tangents
        t = None if ta is None else ta / (1 + cls._base(b - a))
        if tb is not None:
            tb = tb / (1 + cls._base(a - b))
            t = tb if t is None else t + tb
        return t


class Logaddexp2(Logaddexp):
    """``log2(2**a + 2**b)``; gradients ``g / (1 + 2**(b - a))`` and the mirror."""

    fn = "logaddexp2"

    @staticmethod
    def _base(x):
        return F.exp2(x)


class Nextafter(FloatBinary):
    """The next floating value after ``a`` toward ``b`` (no gradient, as in PyTorch)."""

    fn = "nextafter"
    differentiable = False


def _copysign_ratio(m, a, y):
    # d copysign(a, b) / da = y / a, taken as 0 where a == 0, written as PyTorch's
    # copysign_tensor_self_backward (``(result / self).masked_fill_(self == 0, 0)``): the
    # 0/0 stays in the unselected branch, so the second derivative at a == 0 is NaN, as
    # PyTorch's
    return m.where(a == 0, 0, y / a)


class Copysign(Binary):
    """``|a|`` with the sign of ``b``; integers promote to the default float dtype. The
    gradient to ``a`` is ``g * y / a`` (0 at ``a == 0``), to ``b`` zeros, as PyTorch."""

    fn = "copysign"
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def impl(be, a, b):
        a, b, dt = _prep(a, b)
        if dt.kind != "f":
            dt = D.get_default_dtype().np
            a, b = _cast(a, dt), _cast(b, dt)
        _check_shapes("copysign", a, b)
        return be.binary("copysign", a, b)

    @staticmethod
    def vjp(ctx, g):
        a, y = ctx.saved()
        return (
            (g * _copysign_ratio(F, a, y) if ctx.needs_input_grad(0) else None),
            (_zeros_like(g) if ctx.needs_input_grad(1) else None),
        )

    @staticmethod
    def jvp(primals, tangents, out):
        ta = tangents[0]
        return None if ta is None else ta * _copysign_ratio(F, primals[0], out)


class Fmax(Binary):
    """The maximum ignoring NaN (NaN only where both are); the gradient goes to ``a`` where
    ``a >= b`` or ``b`` is NaN, else to ``b`` (PyTorch's rule: ties to ``a``)."""

    fn = "fmax"
    saves_inputs = (0, 1)

    @staticmethod
    def to_a(a, b):
        return (a >= b) | F.isnan(b)

    @classmethod
    def impl(cls, be, a, b):
        a, b, _ = _prep(a, b)  # bools too: PyTorch 2.13 computes fmax/fmin of bools
        _check_shapes(cls.fn, a, b)
        return be.binary(cls.fn, a, b)

    @classmethod
    def vjp(cls, ctx, g):
        a, b = ctx.saved()
        mask = cls.to_a(a, b)
        return (
            (F.where(mask, g, 0) if ctx.needs_input_grad(0) else None),
            (F.where(mask, 0, g) if ctx.needs_input_grad(1) else None),
        )

    @classmethod
    def jvp(cls, primals, tangents, out):
        ta, tb = tangents
        return F.where(cls.to_a(*primals), 0 if ta is None else ta, 0 if tb is None else tb)


class Fmin(Fmax):
    fn = "fmin"

    @staticmethod
    def to_a(a, b):
        return (a <= b) | F.isnan(b)


class Heaviside(Binary):
    """The step function: ``values`` where ``input == 0``, 1 where it is positive, else 0
    (NaN gives 0, as PyTorch's kernel). No gradient."""

    differentiable = False

    @staticmethod
    def impl(be, a, b):
        ta = a.dtype if type(a) is np.ndarray else None
        tb = b.dtype if type(b) is np.ndarray else None
        if ta is not None and tb is not None and ta != tb:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
        a, b, dt = _prep(a, b)
        _check_shapes("heaviside", a, b)
        xp = be.xp
        return xp.asarray(xp.where(a == 0, b, xp.asarray(a > 0).astype(dt))).astype(dt, copy=False)


class Compare(Binary, register=False):
    differentiable = False

    @classmethod
    def impl(cls, be, a, b):
        a, b, _ = _prep(a, b)
        try:
            return be.binary(cls.fn, a, b)
        except ValueError:
            _check_shapes(cls.__name__.lower(), a, b)
            raise


class Eq(Compare):
    fn = "equal"


class Ne(Compare):
    fn = "not_equal"


class Lt(Compare):
    fn = "less"


class Le(Compare):
    fn = "less_equal"


class Gt(Compare):
    fn = "greater"


class Ge(Compare):
    fn = "greater_equal"


class LogicalAnd(Compare):
    fn = "logical_and"


class LogicalOr(Compare):
    fn = "logical_or"


class LogicalXor(Compare):
    fn = "logical_xor"


class BitwiseAnd(Compare):
    fn = "bitwise_and"


class BitwiseOr(Compare):
    fn = "bitwise_or"


class BitwiseXor(Compare):
    fn = "bitwise_xor"


class LogicalNot(Primitive):
    """``logical_not`` (bool result, any dtype) or, with ``bitwise``, ``bitwise_not`` / ``~``
    (integer and bool tensors)."""

    differentiable = False
    batch = classmethod(unary_batch)

    @staticmethod
    def scalar(m, x, bitwise=False):
        return m.logical_not(x)

    @staticmethod
    def impl(be, x, bitwise=False):
        if x.dtype.kind == "b" or not bitwise:
            return be.map("logical_not", x)
        if x.dtype.kind in "iu":
            return be.map("invert", x)
        kind = {"float32": "Float", "float64": "Double"}.get(x.dtype.name, x.dtype.name)
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{kind}'")


def _where_rule(m, ctx, saved, g, node=None):
    (c,) = saved
    return (
        None,
        m.where(c, g, 0) if ctx.needs_input_grad(1) else None,
        m.where(c, 0, g) if ctx.needs_input_grad(2) else None,
    )


class Where(Primitive):
    """``where(cond, a, b)``: the boolean ``cond`` is a data operand (no gradient)."""

    linearity = "linear"
    data_operands = (0,)
    saves_inputs = (0,)
    vjp, fused_vjp = both_ways(_where_rule)
    batch = classmethod(broadcast_batch)  # the condition may be batched too

    @classmethod
    def node_name(cls, params) -> str:
        """``WhereBackward0``, or the name of the op that binds it (``node`` param:
        ``masked_fill``'s ``MaskedFillBackward0``/``1``)."""
        return params.get("node") or cls.grad_fn

    @staticmethod
    def jvp(primals, tangents, out, node=None):
        """``where(cond, ta, tb)``, a missing tangent a scalar zero (no zeros tensor)."""
        _, ta, tb = tangents
        return F.where(primals[0], 0 if ta is None else ta, 0 if tb is None else tb)

    @staticmethod
    def scalar(m, cond, a, b, node=None):
        return m.where(cond, a, b)

    @staticmethod
    def impl(be, cond, a, b, node=None):
        a, b, _ = _prep(a, b)
        try:
            return be.xp.where(cond, a, b)
        except ValueError:
            sa = a.shape if type(a) is np.ndarray else ()
            sb = b.shape if type(b) is np.ndarray else ()
            raise RuntimeError(
                f"where: condition {list(cond.shape)}, input {list(sa)} and "
                f"other {list(sb)} are not broadcastable"
            ) from None


def _clamp_rule(m, ctx, saved, g, min=None, max=None):
    (x,) = saved
    inside = None
    if min is not None:
        inside = x >= min
    if max is not None:
        inside = (x <= max) if inside is None else inside & (x <= max)
    return g if inside is None else m.where(inside, g, 0)


class Clamp(Primitive):
    """``clamp(x, min, max)`` with scalar bounds (``None`` for no bound)."""

    grad_fn = "ClampBackward1"  # PyTorch's name for clamp (Scalar bounds)
    saves_inputs = (0,)
    vjp, fused_vjp = both_ways(_clamp_rule)
    batch = classmethod(unary_batch)

    @staticmethod
    def jvp(primals, tangents, out, min=None, max=None):
        """The tangent where ``min <= x <= max``, else 0 (the VJP's mask)."""
        return _clamp_rule(F, None, primals, tangents[0], min=min, max=max)

    @staticmethod
    def impl(be, x, min=None, max=None):
        dt = x.dtype  # PyTorch's promotion with the bounds (int64 with 0.5 is float32)
        for bound in (min, max):
            if bound is not None:
                dt = D.result_type(_View.of(dt, x.ndim), bound).np
        if dt != x.dtype:
            x = x.astype(dt)
        if min is not None and max is not None and min > max:  # max, but NaN stays NaN
            full = be.xp.full(x.shape, max, dt)
            return be.xp.where(x != x, x, full) if dt.kind == "f" else full
        return be.xp.clip(x, min, max)


def _clamp_tensor_rule(m, ctx, saved, g, has_min, has_max):
    """PyTorch's ``clamp_backward`` and ``clamp_backward_min_max`` (derivatives.yaml): masks,
    never ``g * mask``, so a NaN or infinite ``g`` reaches only the operand that gets it."""
    x, lo, hi = saved
    if has_min and has_max:
        px, plo, phi = (x >= lo) & (x <= hi), (x < lo) & (lo < hi), (x > hi) | (hi < lo)
    elif has_min:
        px, plo, phi = x >= lo, x < lo, None
    else:
        px, plo, phi = x <= hi, None, x > hi
    return tuple(
        m.where(p, g, 0) if p is not None and ctx.needs_input_grad(i) else None
        for i, p in enumerate((px, plo, phi))
    )


class ClampTensor(Primitive):
    """``clamp(x, min, max)`` with tensor bounds, operands ``(x, min, max)`` of one dtype; a
    missing bound is a placeholder number (``has_min``/``has_max`` say which are real).
    NaN in any operand gives NaN; with ``min > max`` the result is ``max``."""

    grad_fn = "ClampBackward0"  # PyTorch's name for clamp.Tensor
    saves_inputs = (0, 1, 2)
    vjp, fused_vjp = both_ways(_clamp_tensor_rule)
    batch = classmethod(broadcast_batch)

    @staticmethod
    def jvp(primals, tangents, out, has_min, has_max):
        """The VJP's masks applied to the tangents (a missing tangent is a zero)."""
        x, lo, hi = primals
        if has_min and has_max:
            masks = ((x >= lo) & (x <= hi), (x < lo) & (lo < hi), (x > hi) | (hi < lo))
        elif has_min:
            masks = (x >= lo, x < lo, None)
        else:
            masks = (x <= hi, None, x > hi)
        terms = [
            F.where(p, t, 0) for p, t in zip(masks, tangents) if p is not None and t is not None
        ]
        if not terms:
            return None
        out_t = terms[0]
        for t in terms[1:]:
            out_t = out_t + t
        return out_t

    @staticmethod
    def impl(be, x, lo, hi, has_min, has_max):
        xp = be.xp
        out = xp.maximum(x, lo) if has_min else x  # maximum/minimum propagate NaN
        out = xp.minimum(out, hi) if has_max else out
        return (
            out
            if type(out) is np.ndarray and out.dtype == x.dtype
            else xp.asarray(out, dtype=x.dtype)
        )


# -- public functions ------------------------------------------------------------------------
def _check_operand(x, name):
    if not isinstance(x, (Tensor, int, float, bool, complex)):
        if isinstance(x, (np.generic,)):
            return x.item()
        if isinstance(x, (np.ndarray, list, tuple)):
            return tensor(x)
        raise TypeError(
            f"{name}(): operand must be a Tensor or a Python number, got {type(x).__name__}"
        )
    return x


def _binary(op, doc):
    name = op.__name__.lower()

    def f(input, other):
        # (tensors, tracers included, and Python numbers need no check: no call for them)
        if not isinstance(input, Tensor) and type(input) is not float and type(input) is not int:
            input = _check_operand(input, name)
        if not isinstance(other, Tensor) and type(other) is not float and type(other) is not int:
            other = _check_operand(other, name)
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            input = tensor(input)
        return bind(op, (input, other), NO_PARAMS)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Parameters
    ----------
    input, other : Tensor or Python number
        Broadcast together; the result dtype follows PyTorch's promotion rules.

    Returns
    -------
    Tensor
    """
    return f


_add = _binary(Add, "Elementwise ``input + other``.")
_sub = _binary(Sub, "Elementwise ``input - other``.")
mul = public(_binary(Mul, "Elementwise ``input * other``."), aliases=("multiply",))
pow = public(_binary(Pow, "Elementwise ``input ** exponent`` (tensor or scalar exponent)."))
maximum = public(_binary(Maximum, "Elementwise maximum (ties split the gradient equally)."))
minimum = public(_binary(Minimum, "Elementwise minimum (ties split the gradient equally)."))
atan2 = public(
    _binary(Atan2, "Elementwise ``atan(input / other)`` with the quadrant of the signs.")
)
fmod = public(_binary(Fmod, "C-style remainder (sign of the dividend)."))
remainder = public(_binary(Remainder, "Python-style remainder (sign of the divisor)."))
eq = public(_binary(Eq, "Elementwise ``input == other`` (bool, no gradient)."))
ne = public(
    _binary(Ne, "Elementwise ``input != other`` (bool, no gradient)."), aliases=("not_equal",)
)
lt = public(_binary(Lt, "Elementwise ``input < other`` (bool, no gradient)."), aliases=("less",))
le = public(
    _binary(Le, "Elementwise ``input <= other`` (bool, no gradient)."), aliases=("less_equal",)
)
gt = public(_binary(Gt, "Elementwise ``input > other`` (bool, no gradient)."), aliases=("greater",))
ge = public(
    _binary(Ge, "Elementwise ``input >= other`` (bool, no gradient)."), aliases=("greater_equal",)
)
logical_and = public(_binary(LogicalAnd, "Elementwise logical and (bool)."), name="logical_and")
logical_or = public(_binary(LogicalOr, "Elementwise logical or (bool)."), name="logical_or")
logical_xor = public(_binary(LogicalXor, "Elementwise logical xor (bool)."), name="logical_xor")
bitwise_and = public(
    _binary(BitwiseAnd, "Elementwise bitwise and (integer and bool tensors)."), name="bitwise_and"
)
bitwise_or = public(
    _binary(BitwiseOr, "Elementwise bitwise or (integer and bool tensors)."), name="bitwise_or"
)
bitwise_xor = public(
    _binary(BitwiseXor, "Elementwise bitwise xor (integer and bool tensors)."), name="bitwise_xor"
)
hypot = public(
    _binary(Hypot, "Elementwise ``sqrt(input**2 + other**2)`` (no overflow; floats only)."),
    inplace=True,
)
logaddexp = public(
    _binary(Logaddexp, "``log(exp(input) + exp(other))``, computed stably (floats only).")
)
logaddexp2 = public(
    _binary(Logaddexp2, "``log2(2**input + 2**other)``, computed stably (floats only).")
)
copysign = public(
    _binary(
        Copysign,
        "``|input|`` with the sign of ``other`` (integers promote to the default float dtype).",
    ),
    inplace=True,
)
fmax = public(_binary(Fmax, "Elementwise maximum that ignores NaN (NaN only where both are)."))
fmin = public(_binary(Fmin, "Elementwise minimum that ignores NaN (NaN only where both are)."))
nextafter = public(
    _binary(Nextafter, "The next representable value after ``input`` toward ``other``."),
    inplace=True,
)
_heaviside = _binary(Heaviside, "Heaviside step (see ``heaviside``).")
hypot.__doc__ += """
    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.hypot(numbagrad.tensor([3.0, 5.0]), numbagrad.tensor([4.0, 12.0]))
    tensor([ 5., 13.])
    """
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne
multiply = mul


def check_alpha(dtype, alpha):
    """PyTorch's checks of an ``alpha`` (or ``beta``) scaling a result of ``dtype``."""
    if isinstance(alpha, (bool, np.bool_)):
        if dtype is not D.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (complex, np.complexfloating)):
        if not dtype.is_complex:
            raise RuntimeError(
                "For non-complex input tensors, argument alpha must not be a complex number."
            )
    elif not isinstance(alpha, (int, np.integer)) and not (
        dtype.is_floating_point or dtype.is_complex
    ):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )


def _times_alpha(input, other, alpha, name):
    """``alpha * other`` as PyTorch's add/sub compute it: in the result dtype of ``input``
    and ``other`` (``alpha`` checked against it; for bool results ``alpha`` is a bool), so
    that the product promotes with ``input`` as ``other`` itself would."""
    if not isinstance(input, Tensor):
        input = _check_operand(input, name)
    if not isinstance(other, Tensor):
        other = _check_operand(other, name)
    if name == "sub" and (_is_bool_operand(input) or _is_bool_operand(other)):
        return other  # Sub raises PyTorch's error for it, before alpha is looked at
    dt = D.result_type(input, other)
    check_alpha(dt, alpha)
    if dt is D.bool:  # alpha * other is True * other, or False
        if alpha:
            return other
        return F.logical_and(other, False) if isinstance(other, Tensor) else False
    if isinstance(other, Tensor) and other.dtype is not dt:
        other = F.to(other, dt)  # (an int64 other times a float alpha stays float64)
    return other * alpha


def _is_bool_operand(x):
    return x.dtype is D.bool if isinstance(x, Tensor) else isinstance(x, bool)


@public
def add(input, other, *, alpha=1):
    """Elementwise ``input + alpha * other``.

    ``alpha`` is checked and applied as PyTorch does: a bool ``alpha`` only for bool
    results, a float ``alpha`` not for integer results, and for bool results ``alpha * other``
    is ``other`` or False (``add(a, b, alpha=2)`` of bool tensors stays bool).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.add(numbagrad.tensor([1.0, 2.0]), 1.5)
    tensor([2.5000, 3.5000])
    """
    if type(alpha) is int and alpha == 1:
        return _add(input, other)
    return _add(input, _times_alpha(input, other, alpha, "add"))


@public(aliases=("subtract",))
def sub(input, other, *, alpha=1):
    """Elementwise ``input - alpha * other`` (``alpha`` as in :func:`add`)."""
    if type(alpha) is int and alpha == 1:
        return _sub(input, other)
    return _sub(input, _times_alpha(input, other, alpha, "sub"))


subtract = sub


@public(aliases=("true_divide", "divide"))
def div(input, other, *, rounding_mode=None):
    """Elementwise division; ``rounding_mode`` None (true division), 'trunc' or 'floor'.

    Integer inputs with true division give the default float dtype, as in PyTorch.
    """
    input = _check_operand(input, "div")
    other = _check_operand(other, "div")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = tensor(input)
    return bind(Div, (input, other), {"rounding_mode": rounding_mode})


divide = true_divide = div


@public(inplace=True)
def floor_divide(input, other):
    """``div(input, other, rounding_mode='floor')``."""
    return div(input, other, rounding_mode="floor")


@public
def logical_not(input):
    """Elementwise logical not: True where ``input`` is zero (a bool result, any dtype)."""
    return bind(LogicalNot, (input,), NO_PARAMS)


@public
def bitwise_not(input):
    """Elementwise bitwise not (``~``) of an integer or bool tensor."""
    return bind(LogicalNot, (input,), {"bitwise": True})


@public(method=False)
def where(condition, input=None, other=None):
    """Choose ``input`` where ``condition`` holds, else ``other`` (broadcasting).

    With only ``condition``, returns the indices where it is true (as ``nonzero``).
    """
    if input is None and other is None:
        return F.nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        condition = tensor(np.asarray(condition))
    if condition.dtype is not D.bool:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {condition.dtype.np}"
        )
    input = _check_operand(input, "where")
    other = _check_operand(other, "where")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = tensor(input)
    return bind(Where, (condition, input, other), NO_PARAMS)


def _max_nan(x, lo):
    """``max(x, lo)``, NaN where either is (PyTorch's clamp), from comparisons and ``where``
    only: the gradient goes to ``x`` where ``x >= lo`` (ties to ``x``), else to ``lo``, and
    to neither at a NaN ``x``."""
    return where(x >= lo, x, where(x <= x, lo, x.detach()))  # ``x <= x``: False for NaN


def _min_nan(x, hi):
    """``min(x, hi)``, NaN where either is, ties to ``x`` (see ``_max_nan``)."""
    return where(x <= hi, x, where(x <= x, hi, x.detach()))


@public(aliases=("clip",), inplace=True)
def clamp(input, min=None, max=None):
    """Clamp to ``[min, max]``; bounds may be numbers or tensors (``None`` = unbounded).

    The gradient passes where ``min <= input <= max``; with ``min > max`` the result is
    ``max``. Tensor bounds promote with ``input`` and propagate NaN, as in PyTorch, and get
    its gradients: ``min`` where ``input < min < max``, ``max`` where ``input > max`` or
    ``max < min``; none at a NaN input.
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        dt = input.dtype  # promotion with the bounds, numbers as wrapped scalars
        for b in (min, max):
            if b is not None:
                dt = D.result_type(
                    _View.of(dt.np, input.ndim),
                    _View.of(b.dtype.np, b.ndim) if isinstance(b, Tensor) else b,
                )
        shapes = [tuple(t.shape) for t in (input, min, max) if isinstance(t, Tensor)]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise RuntimeError(
                f"clamp: the shapes {[list(s) for s in shapes]} of the input "
                "and the bounds are not broadcastable"
            ) from None
        ops = [input if input.dtype is dt else input.to(dt)]
        for b, fill in ((min, -math.inf), (max, math.inf)):
            if b is None:
                b = fill if dt.is_floating_point else 0
            b = b if isinstance(b, Tensor) else tensor(b, dtype=dt)
            ops.append(b if b.dtype is dt else b.to(dt))
        return bind(
            ClampTensor, tuple(ops), {"has_min": min is not None, "has_max": max is not None}
        )
    return bind(Clamp, (input,), {"min": min, "max": max})


clip = clamp


@public(inplace=True)
def heaviside(input, values):
    """The Heaviside step: ``values`` where ``input == 0``, 1 where it is positive, else 0
    (NaN included, as PyTorch's kernel).

    Parameters
    ----------
    input, values : Tensor
        Of one dtype, broadcast together.

    Returns
    -------
    Tensor
        No gradient.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.heaviside(numbagrad.tensor([-1.0, 0.0, 2.0]), numbagrad.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _heaviside(input, values)


@public
def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (the result is always float64).

    Parameters
    ----------
    input, exponent : Tensor or Python number

    Returns
    -------
    Tensor
        float64; gradients flow back in each operand's own dtype.

    Examples
    --------
    >>> import numbagrad
    >>> y = numbagrad.float_power(numbagrad.tensor([2, 3]), 2)
    >>> y.tolist(), y.dtype == numbagrad.float64
    ([4.0, 9.0], True)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        input = tensor(input)
    if isinstance(input, Tensor) and input.dtype is not D.float64:
        input = input.to(D.float64)
    if isinstance(exponent, Tensor):
        if exponent.dtype is not D.float64:
            exponent = exponent.to(D.float64)
    elif isinstance(exponent, (int, bool)):
        exponent = float(exponent)
    if not isinstance(input, Tensor):
        input = float(input)
    return pow(input, exponent)


@public(inplace=True)
def clamp_min(input, min):
    return clamp(input, min=min)


@public(inplace=True)
def clamp_max(input, max):
    return clamp(input, max=max)
