"""Special functions (``numbagrad.special``, and the ones PyTorch also has at the top level).

The elementwise special functions NumPy has no ufunc for are primitives whose forward runs
the ``@njit`` kernels of ``numbagrad/kernels/cpu/special.py`` (NOTE [Special-function
kernels]: float64 in, float32 results rounded once); each states its local derivative once,
in numbagrad ops, as PyTorch's ``derivatives.yaml`` does, so the VJP ``g * d`` and the JVP
``t * d`` are themselves differentiable (``polygamma(n)``'s derivative is ``polygamma(n+1)``,
``lgamma``'s is ``digamma``, ...). ``sinc`` and ``logit`` are primitives too (NumPy
forwards), so that their rules can be written as PyTorch's ``sinc_backward`` and
``infinitely_differentiable_logit_backward`` (same NaN/inf patterns, first and second
order). The rest are composites of existing ops (``multigammaln``, ``xlogy``'s masks),
which get every rule for free.

NOTE [Special-function gradients]
As in PyTorch: ``bessel_j0``/``bessel_j1`` are not differentiable (their outputs do not
require grad); ``gammainc``/``gammaincc``/``zeta`` are differentiable in their second
argument only, and asking for the first argument's gradient raises ``NotImplementedError``
("the derivative for 'igamma: input' is not implemented.") when the backward (or forward-mode
rule) runs, as PyTorch does.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import tensor
from numbagrad._tensor import Tensor
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import broadcast_batch
from numbagrad.ops._util import default_float
from numbagrad.ops.binary import _check_shapes, _prep
from numbagrad.ops.unary import unary_batch

_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


# -- forward helpers --------------------------------------------------------------------------
def _out_dtype(dt):
    """Integer and bool inputs give the default float dtype (as PyTorch's special ops)."""
    return dt if dt.kind == "f" else default_float()


def _unary_map(be, name, x, n=None):
    """The backend's special-function map ``name`` of array ``x`` (computed in float64,
    NOTE [Special-function kernels]); ``n`` is polygamma's order."""
    return be.special_unary(name, x, _out_dtype(x.dtype), n)


def _round(out, dt):
    """The float64 result ``out`` as ``dt``; float16 overflows to inf silently, as in
    PyTorch (NOTE [Half precision] in ``kernels/cpu/backend.py``)."""
    if dt == np.float16:
        with np.errstate(over="ignore"):
            return out.astype(dt)
    return out.astype(dt, copy=False)


def _binary_map(be, name, a, b):
    """The backend's two-operand function ``name`` (gammainc, gammaincc, zeta, xlogy,
    xlog1py), broadcasting, in the promoted floating dtype (integers: the default float)."""
    a, b, dt = _prep(a, b)
    _check_shapes(name, a, b)
    return be.special_binary(name, a, b, _out_dtype(np.dtype(dt)))


# -- elementwise unary primitives -------------------------------------------------------------
class _SpecialUnary(Primitive, register=False):
    """An elementwise special function: the kernel formula ``kernel`` and its local
    derivative ``derivative(x, y)`` from the input ``x`` and/or output ``y`` (whichever
    ``saves_inputs``/``saves_output`` keep; the other is None)."""

    kernel = ""

    @classmethod
    def impl(cls, be, x):
        return _unary_map(be, cls.kernel, x)

    @staticmethod
    def derivative(x, y):
        raise NotImplementedError("a special unary op must define derivative(x, y)")

    @classmethod
    def vjp(cls, ctx, g):
        saved = ctx.saved()
        x = saved[0] if cls.saves_inputs else None
        y = saved[-1] if cls.saves_output else None
        return g * cls.derivative(x, y)

    @classmethod
    def jvp(cls, primals, tangents, out):
        return tangents[0] * cls.derivative(primals[0], out)

    batch = classmethod(unary_batch)


class Erfc(_SpecialUnary):
    kernel = "erfc"
    saves_inputs = (0,)

    @staticmethod
    def derivative(x, y):
        return F.exp(-(x * x)) * -_TWO_OVER_SQRT_PI


class Erfcx(_SpecialUnary):
    kernel = "erfcx"
    grad_fn = "SpecialErfcxBackward0"
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def derivative(x, y):
        if x.dtype is not D.float64:
            # 2 x erfcx(x) - 2/sqrt(pi) cancels for large x (to 1 / (sqrt(pi) x^2)): from the
            # float32-rounded output it keeps ~1e-3 relative accuracy there, so recompute
            # erfcx in float64 and round the derivative once
            x64 = F.to(x, D.float64)
            return F.to(x64 * erfcx(x64) * 2 - _TWO_OVER_SQRT_PI, x.dtype)
        return x * y * 2 - _TWO_OVER_SQRT_PI


class Erfinv(_SpecialUnary):
    kernel = "erfinv"
    saves_output = True

    @staticmethod
    def derivative(x, y):
        return F.exp(y * y) * (math.sqrt(math.pi) / 2)


class Lgamma(_SpecialUnary):
    kernel = "lgamma"
    saves_inputs = (0,)

    @staticmethod
    def derivative(x, y):
        return digamma(x)


class Digamma(_SpecialUnary):
    kernel = "digamma"
    saves_inputs = (0,)

    @staticmethod
    def derivative(x, y):
        return polygamma(1, x)


class Polygamma(Primitive):
    """``polygamma(n, x)``, the ``n``-th derivative of digamma (``n`` a param)."""

    saves_inputs = (0,)

    @staticmethod
    def impl(be, x, *, n):
        return _unary_map(be, "polygamma", x, n)

    @staticmethod
    def vjp(ctx, g, *, n):
        return g * polygamma(n + 1, ctx.saved()[0])

    @staticmethod
    def jvp(primals, tangents, out, *, n):
        return tangents[0] * polygamma(n + 1, primals[0])

    batch = classmethod(unary_batch)


class I0(_SpecialUnary):
    kernel = "i0"
    saves_inputs = (0,)

    @staticmethod
    def derivative(x, y):
        return i1(x)


class I0e(_SpecialUnary):
    kernel = "i0e"
    grad_fn = "SpecialI0eBackward0"
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def derivative(x, y):
        if x.dtype is not D.float64:
            # i1e(x) - sgn(x) i0e(x) cancels for large |x| (to about -sgn(x) i0e(x) / (2 |x|)):
            # in float32 no digit is left at 1e6, so compute it in float64 and round once
            x64 = F.to(x, D.float64)
            return F.to(i1e(x64) - _sgn(x64) * i0e(x64), x.dtype)
        return i1e(x) - _sgn(x) * y  # PyTorch's: i1e(x) - sgn(x) * result


def _sgn(x):
    """``sgn(x)`` (0 at 0 and NaN) as a constant of the graph: PyTorch's ``sgn`` has a zero
    derivative that contributes nothing (``sign``'s zeros would turn an infinite factor
    upstream into NaN)."""
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


def _tiny_split(x):
    """PyTorch's ``i1_backward``/``i1e_backward`` guard: where ``|x|`` is above the dtype's
    epsilon (False at NaN), and ``x`` with the others replaced by epsilon."""
    eps = float(np.finfo(x.dtype.np).eps)
    not_tiny = F.abs(x) > eps
    return not_tiny, F.where(not_tiny, x, eps)


class I1(_SpecialUnary):
    kernel = "i1"
    grad_fn = "SpecialI1Backward0"
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def derivative(x, y):
        # PyTorch's i1_backward: i0(x) - i1(x) / x where |x| > eps, else its limit 1/2 (also
        # at NaN, as PyTorch's)
        not_tiny, safe = _tiny_split(x)
        return F.where(not_tiny, i0(safe) - y * F.reciprocal(safe), 0.5)


class I1e(_SpecialUnary):
    kernel = "i1e"
    grad_fn = "SpecialI1eBackward0"
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def derivative(x, y):
        # PyTorch's i1e_backward: i0e(x) - i1e(x) (sgn(x) + 1/x) where |x| > eps, else 1/2
        not_tiny, safe = _tiny_split(x)
        if x.dtype is not D.float64:
            # it cancels for large |x| (as i0e's): in float64, rounded once
            s64 = F.to(safe, D.float64)
            d = i0e(s64) - i1e(s64) * (_sgn(s64) + F.reciprocal(s64))
            return F.where(not_tiny, F.to(d, x.dtype), 0.5)
        return F.where(not_tiny, i0e(safe) - y * (_sgn(safe) + F.reciprocal(safe)), 0.5)


def _no_tangent(primals, tangents, out):
    return None  # a non-differentiable op: its output has no tangent


class BesselJ0(_SpecialUnary):
    """Not differentiable, as in PyTorch (NOTE [Special-function gradients])."""

    kernel = "bessel_j0"
    differentiable = False
    vjp = None  # type: ignore[assignment]  # (no rule: not differentiable)
    jvp = staticmethod(_no_tangent)


class BesselJ1(BesselJ0):
    """Not differentiable, as in PyTorch (NOTE [Special-function gradients])."""

    kernel = "bessel_j1"


class Ndtr(_SpecialUnary):
    kernel = "ndtr"
    grad_fn = "SpecialNdtrBackward0"
    saves_inputs = (0,)

    @staticmethod
    def derivative(x, y):
        return F.exp(x * x * -0.5) * (1 / _SQRT_2PI)


class Ndtri(_SpecialUnary):
    kernel = "ndtri"
    grad_fn = "SpecialNdtriBackward0"
    saves_output = True

    @staticmethod
    def derivative(x, y):
        return F.exp(y * y * 0.5) * _SQRT_2PI


class LogNdtr(_SpecialUnary):
    kernel = "log_ndtr"
    grad_fn = "SpecialLogNdtrBackward0"
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def derivative(x, y):
        # pdf(x) / ndtr(x) = exp(-(log_ndtr(x) + x^2/2)) / sqrt(2 pi): no underflowing
        # ratio in the left tail. The sum cancels there (to -log(-x sqrt(2 pi))), so a
        # float32 output's rounding (ulp(x^2/2)) would cost up to ~1e-3 relative: below
        # float64, recompute in float64 and round the derivative once
        if x.dtype is not D.float64:
            x64 = F.to(x, D.float64)
            return F.to(F.exp(-(log_ndtr(x64) + x64 * x64 * 0.5)) * (1 / _SQRT_2PI), x.dtype)
        return F.exp(-(y + x * x * 0.5)) * (1 / _SQRT_2PI)


class Entr(_SpecialUnary):
    kernel = "entr"
    grad_fn = "SpecialEntrBackward0"
    saves_inputs = (0,)

    @staticmethod
    def derivative(x, y):
        return -(F.log(x) + 1)


def _in_float(be, x, fn, opmath=True):
    """``fn(v, c)`` of ``x`` as a float array ``v`` (integers: the default float dtype;
    float16 computed in float32 and rounded once when ``opmath``, as PyTorch's kernels that
    use opmath do, else op by op in float16), ``c`` the scalar type computed in, with
    NumPy's warnings silenced (NaN and inf are results here). ``fn`` uses only the backend's
    maps, ufuncs and ``xp.where``, so any device computes it."""
    dt = _out_dtype(x.dtype)
    work = np.dtype(np.float32) if dt == np.float16 and opmath else dt
    v = x if x.dtype == work else x.astype(work)
    with np.errstate(all="ignore"):
        out = be.xp.asarray(fn(v, work.type))
    return _round(out, dt)


def _sinc_rule(g, x):
    # PyTorch's sinc_backward: grad * ((pi x cos(pi x) - sin(pi x)) / (pi x^2)), 0 where
    # pi x^2 is 0 (also where it underflows: no cancellation next to 0), written the same
    # way so that its second derivative (NaN at 0) is PyTorch's too; the derivative before
    # the product, so that a large float32 grad does not overflow (3e37 at x = 100)
    px = x * math.pi
    pxx = x * x * math.pi
    # sin before cos, the order PyTorch's compiled formula records them in: the engine
    # then sums the second derivative's terms in PyTorch's order (next to 0 they cancel)
    sin = F.sin(px)
    return F.where(pxx == 0.0, 0.0, g * ((px * F.cos(px) - sin) / pxx))


class Sinc(Primitive):
    """``sin(pi x) / (pi x)``, 1 at 0; the gradient is PyTorch's ``sinc_backward``."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        def f(v, c):  # PyTorch's kernel: 1 at 0, else sin(pi x) / (pi x)
            px = be.binary("multiply", v, c(math.pi))
            ratio = be.binary("true_divide", be.map("sin", px), px)
            return be.xp.where(be.binary("equal", v, c(0)), c(1), ratio)

        return _in_float(be, x, f)

    @staticmethod
    def vjp(ctx, g):
        return _sinc_rule(g, ctx.saved()[0])

    @staticmethod
    def jvp(primals, tangents, out):
        return _sinc_rule(tangents[0], primals[0])


def _logit_rule(g, x, eps):
    # PyTorch's infinitely_differentiable_logit_backward: grad / (x (1 - x)) inside
    # [eps, 1 - eps] (NaN: outside), else 0 (NaN outside [0, 1] without eps). It is also
    # what PyTorch's vectorised logit_backward kernel computes (its scalar tail differs at
    # -0.0 and NaN), and its second derivative is PyTorch's (NaN where x (1 - x) is 0)
    lo = 0.0 if eps is None else eps
    inside = (x >= lo) & (x <= 1.0 - lo)
    return F.where(inside, g / (x * (1.0 - x)), math.nan if eps is None else 0.0)


class Logit(Primitive):
    """``log(x / (1 - x))``, ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps`` is
    given (a param: a float or None); the gradient is PyTorch's."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, *, eps):
        def f(v, c):
            if eps is not None:
                # as PyTorch's kernel: x < lo gives lo, else x > hi gives hi (not clamp():
                # with eps > 0.5 the two orders differ); NaN stays NaN
                lo = c(eps)
                hi = c(1) - lo
                v = be.xp.where(
                    be.binary("less", v, lo),
                    lo,
                    be.xp.where(be.binary("greater", v, hi), hi, v),
                )
            return be.map("log", be.binary("true_divide", v, be.binary("subtract", c(1), v)))

        return _in_float(be, x, f, opmath=False)  # PyTorch's logit kernel has no opmath

    @staticmethod
    def vjp(ctx, g, *, eps):
        return _logit_rule(g, ctx.saved()[0], eps)

    @staticmethod
    def jvp(primals, tangents, out, *, eps):
        return _logit_rule(tangents[0], primals[0], eps)


# -- two-operand primitives -------------------------------------------------------------------
def _not_implemented(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


class _SpecialBinary(Primitive, register=False):
    """``f(a, x)`` broadcasting; differentiable in ``x`` only (NOTE [Special-function
    gradients]); ``derivative(a, x)`` is ``df/dx``, ``first`` names ``a``'s missing
    derivative as PyTorch does."""

    kernel = ""
    first = ""
    saves_inputs = (0, 1)
    batch = classmethod(broadcast_batch)

    @classmethod
    def impl(cls, be, a, x):
        return _binary_map(be, cls.kernel, a, x)

    @classmethod
    def vjp(cls, ctx, g):
        if ctx.needs_input_grad(0):
            raise _not_implemented(cls.first)
        a, x = ctx.saved()
        return None, g * cls.derivative(a, x)

    @classmethod
    def jvp(cls, primals, tangents, out):
        if tangents[0] is not None:
            raise _not_implemented(cls.first)
        return tangents[1] * cls.derivative(*primals)


def _gammainc_dx(a, x):
    """``d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)``."""
    return F.exp((a - 1) * F.log(x) - x - lgamma(a))


class Gammainc(_SpecialBinary):
    kernel = "gammainc"
    first = "igamma: input"
    grad_fn = "IgammaBackward0"

    @staticmethod
    def derivative(a, x):
        return _gammainc_dx(a, x)


class Gammaincc(_SpecialBinary):
    kernel = "gammaincc"
    first = "igammac: input"
    grad_fn = "IgammacBackward0"

    @staticmethod
    def derivative(a, x):
        return -_gammainc_dx(a, x)


class Zeta(_SpecialBinary):
    kernel = "zeta"
    first = "zeta"
    grad_fn = "SpecialZetaBackward0"

    @staticmethod
    def derivative(s, q):
        return -s * zeta(s + 1, q)


class Xlogy(Primitive):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""

    saves_inputs = (0, 1)
    batch = classmethod(broadcast_batch)
    _pole = 0.0  # where log(y) is -inf or NaN

    @classmethod
    def impl(cls, be, a, b):
        return _binary_map(be, cls.__name__.lower(), a, b)

    @classmethod
    def _rule(cls, x, y, tx, ty):
        """``tx * log(y)`` masked to 0 where ``x == 0 and y <= pole`` (PyTorch masks only
        there), plus ``ty * x / (y - pole)``; a None tangent contributes nothing."""
        out = None
        if tx is not None:
            # x is a tensor here (a number has no tangent); y may be a number
            out = F.where(
                (x == 0) & (y <= cls._pole), 0.0, (xlogy if cls is Xlogy else xlog1py)(tx, y)
            )
        if ty is not None:
            d = ty * x / (y - cls._pole)
            out = d if out is None else out + d
        return out

    @classmethod
    def vjp(cls, ctx, g):
        x, y = ctx.saved()
        gx = cls._rule(x, y, g, None) if ctx.needs_input_grad(0) else None
        gy = cls._rule(x, y, None, g) if ctx.needs_input_grad(1) else None
        return gx, gy

    @classmethod
    def jvp(cls, primals, tangents, out):
        return cls._rule(primals[0], primals[1], tangents[0], tangents[1])


class Xlog1py(Xlogy):
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""

    grad_fn = "SpecialXlog1pyBackward0"
    _pole = -1.0


# -- public functions -----------------------------------------------------------------------------
def _tensor_arg(x, fname, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return x


def _number_or_tensor(x, fname, arg):
    """A Tensor, or a Python number left as it is (the op promotes it as PyTorch's wrapped
    scalars: it does not widen a tensor's float dtype, and keeps its float64 value)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.number):
        return x.item()
    if isinstance(x, (bool, int, float)):
        return x
    raise TypeError(f"{fname}(): argument '{arg}' must be Tensor or Number, not {type(x).__name__}")


def _apply(op, input, fname):
    return bind(op, (_tensor_arg(input, fname),), NO_PARAMS)


def _apply2(op, input, other, fname, names=("input", "other")):
    a = _number_or_tensor(input, fname, names[0])
    b = _number_or_tensor(other, fname, names[1])
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = tensor(a)
    return bind(op, (a, b), NO_PARAMS)


def _as_float(x):
    """``x`` itself if floating, else cast to the default float dtype."""
    return x if x.is_floating_point() or x.is_complex() else F.to(x, default_float())


@public(also=("special",), inplace=True)
def erfc(input):
    """The complementary error function ``1 - erf(x)``, accurate where ``erf(x)`` is near 1.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor
        Integer inputs give the default float dtype.

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.erfc(torch.tensor(3.0, dtype=torch.float64))), 8))
    2.209e-05
    """
    return _apply(Erfc, input, "erfc")


@public(namespace="special")
def erfcx(input):
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, without overflow.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.erfcx(torch.tensor(100.0))), 6))
    0.005642
    """
    return _apply(Erfcx, input, "special_erfcx")


@public(also=("special",), inplace=True)
def erfinv(input):
    """The inverse error function on ``[-1, 1]`` (``+-inf`` at ``+-1``, NaN outside).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.erfinv(torch.tensor(0.5, dtype=torch.float64))), 6))
    0.476936
    """
    return _apply(Erfinv, input, "erfinv")


@public(inplace=True)
def lgamma(input):
    """``log|Gamma(x)|`` (``inf`` at the poles ``0, -1, -2, ...``).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.lgamma(torch.tensor(10.0, dtype=torch.float64))), 6))
    12.801827
    """
    return _apply(Lgamma, input, "lgamma")


@public(also=("special",), inplace=True)
def digamma(input):
    """The digamma function ``d/dx log Gamma(x)``: ``-inf`` at ``+0``, ``inf`` at ``-0``,
    NaN at the negative integers (as PyTorch).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.digamma(torch.tensor(1.0, dtype=torch.float64))), 6))
    -0.577216
    """
    return _apply(Digamma, input, "digamma")


@public(also=("special",))
def polygamma(n, input):
    """The ``n``-th derivative of the digamma function.

    ``x.polygamma(n)`` (the Tensor method) is the same as ``polygamma(n, x)``.

    Parameters
    ----------
    n : int
        The order, ``n >= 0`` (``polygamma(0, x)`` is ``digamma(x)``).
    input : Tensor

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If ``n`` is not an int.
    RuntimeError
        If ``n`` is negative.

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor(1.0, dtype=torch.float64)
    >>> print(round(float(torch.polygamma(1, x)), 6))  # pi**2 / 6
    1.644934
    """
    if isinstance(n, Tensor) and not isinstance(input, Tensor):  # the method x.polygamma(n)
        n, input = input, n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(
            f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return bind(Polygamma, (_tensor_arg(input, "polygamma"),), {"n": int(n)})


@public(also=("special",), inplace=True)
def i0(input):
    """The modified Bessel function of the first kind of order 0.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.i0(torch.tensor(1.0, dtype=torch.float64))), 6))
    1.266066
    """
    return _apply(I0, input, "i0")


@public(namespace="special")
def i0e(input):
    """The exponentially scaled modified Bessel function ``exp(-|x|) * i0(x)``.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.i0e(torch.tensor(1000.0, dtype=torch.float64))), 6))
    0.012617
    """
    return _apply(I0e, input, "special_i0e")


@public(namespace="special")
def i1(input):
    """The modified Bessel function of the first kind of order 1.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.i1(torch.tensor(1.0, dtype=torch.float64))), 6))
    0.565159
    """
    return _apply(I1, input, "special_i1")


@public(namespace="special")
def i1e(input):
    """The exponentially scaled modified Bessel function ``exp(-|x|) * i1(x)``.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.i1e(torch.tensor(1.0, dtype=torch.float64))), 6))
    0.20791
    """
    return _apply(I1e, input, "special_i1e")


@public(namespace="special")
def bessel_j0(input):
    """The Bessel function of the first kind of order 0 (not differentiable, as in PyTorch).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor(2.404825557695773, dtype=torch.float64)  # the first zero
    >>> print(abs(float(torch.special.bessel_j0(x))) < 1e-15)
    True
    """
    return _apply(BesselJ0, input, "special_bessel_j0")


@public(namespace="special")
def bessel_j1(input):
    """The Bessel function of the first kind of order 1 (not differentiable, as in PyTorch).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.bessel_j1(torch.tensor(1.0, dtype=torch.float64))), 6))
    0.440051
    """
    return _apply(BesselJ1, input, "special_bessel_j1")


@public(namespace="special")
def ndtr(input):
    """The standard normal cumulative distribution function.

    Computed as ``erfc(-x / sqrt(2)) / 2``, which keeps its relative accuracy in the left
    tail (PyTorch's ``(1 + erf(x / sqrt(2))) / 2`` gives 0 below about -8.3).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.ndtr(torch.tensor(1.0, dtype=torch.float64))), 6))
    0.841345
    """
    return _apply(Ndtr, input, "special_ndtr")


@public(namespace="special")
def ndtri(input):
    """The inverse of :func:`ndtr`: ``-inf`` at 0, ``inf`` at 1, NaN outside ``[0, 1]``.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.ndtri(torch.tensor(0.975, dtype=torch.float64))), 6))
    1.959964
    """
    return _apply(Ndtri, input, "special_ndtri")


@public(namespace="special")
def log_ndtr(input):
    """``log(ndtr(x))``, accurate far into the left tail.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor(-40.0, dtype=torch.float64)
    >>> print(round(float(torch.special.log_ndtr(x)), 4))
    -804.6084
    """
    return _apply(LogNdtr, input, "special_log_ndtr")


@public(namespace="special")
def entr(input):
    """The elementwise entropy ``-x * log(x)``: 0 at 0, ``-inf`` for ``x < 0``.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(round(float(torch.special.entr(torch.tensor(0.5, dtype=torch.float64))), 6))
    0.346574
    """
    return _apply(Entr, input, "special_entr")


@public(namespace="special")
def gammainc(input, other):
    """The regularized lower incomplete gamma function ``P(a, x)``.

    Differentiable in ``other`` only; the gradient with respect to ``input`` raises
    ``NotImplementedError`` when computed, as in PyTorch.

    Parameters
    ----------
    input : Tensor
        ``a >= 0``.
    other : Tensor
        ``x >= 0``; broadcast with ``input``.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> a = torch.tensor(1.0, dtype=torch.float64)
    >>> x = torch.tensor(2.0, dtype=torch.float64)
    >>> print(round(float(torch.special.gammainc(a, x)), 6))  # 1 - e^-2
    0.864665
    """
    fname = "special_gammainc"
    return bind(
        Gammainc, (_tensor_arg(input, fname), _tensor_arg(other, fname, "other")), NO_PARAMS
    )


@public(namespace="special")
def gammaincc(input, other):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    Differentiable in ``other`` only (see :func:`gammainc`).

    Parameters
    ----------
    input : Tensor
        ``a >= 0``.
    other : Tensor
        ``x >= 0``; broadcast with ``input``.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> a = torch.tensor(1.0, dtype=torch.float64)
    >>> x = torch.tensor(2.0, dtype=torch.float64)
    >>> print(round(float(torch.special.gammaincc(a, x)), 6))  # e^-2
    0.135335
    """
    fname = "special_gammaincc"
    return bind(
        Gammaincc, (_tensor_arg(input, fname), _tensor_arg(other, fname, "other")), NO_PARAMS
    )


@public(namespace="special")
def zeta(input, other):
    """The Hurwitz zeta function ``sum_k (k + q)^-x`` of ``x = input`` and ``q = other``.

    Differentiable in ``other`` only; the gradient with respect to ``input`` raises
    ``NotImplementedError``, as in PyTorch.

    Parameters
    ----------
    input : Tensor or Number
    other : Tensor or Number
        Broadcast with ``input``.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor(2.0, dtype=torch.float64)
    >>> print(round(float(torch.special.zeta(x, 1.0)), 6))  # pi**2 / 6
    1.644934
    """
    return _apply2(Zeta, input, other, "special_zeta", ("self", "other"))


@public(also=("special",), inplace=True)
def xlogy(input, other):
    """``input * log(other)``, with 0 where ``input == 0`` (unless ``other`` is NaN).

    Parameters
    ----------
    input : Tensor or Number
    other : Tensor or Number
        Broadcast with ``input``.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor([0.0, 2.0], dtype=torch.float64)
    >>> print(torch.xlogy(x, torch.tensor([0.0, 1.0], dtype=torch.float64)).tolist())
    [0.0, 0.0]
    """
    return _apply2(Xlogy, input, other, "xlogy", ("self", "other"))


@public(namespace="special")
def xlog1py(input, other):
    """``input * log1p(other)``, with 0 where ``input == 0`` (unless ``other`` is NaN).

    Parameters
    ----------
    input : Tensor or Number
    other : Tensor or Number
        Broadcast with ``input``.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor([0.0, 2.0], dtype=torch.float64)
    >>> print(torch.special.xlog1py(x, torch.tensor([-1.0, 0.0], dtype=torch.float64)).tolist())
    [0.0, 0.0]
    """
    return _apply2(Xlog1py, input, other, "special_xlog1py", ("self", "other"))


@public(also=("special",), inplace=True)
def sinc(input):
    """The normalized sinc function ``sin(pi x) / (pi x)``, 1 at 0.

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(torch.sinc(torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64)).tolist()[0])
    1.0
    """
    return _apply(Sinc, input, "sinc")


@public(also=("special",), inplace=True)
def logit(input, eps=None):
    """The log-odds ``log(p / (1 - p))``.

    Parameters
    ----------
    input : Tensor
    eps : float, optional
        When given, ``input`` is clamped to ``[eps, 1 - eps]`` first (and the gradient is 0
        outside that interval); otherwise values outside ``[0, 1]`` give NaN.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> p = torch.tensor([0.5, 0.1], dtype=torch.float64)
    >>> print([round(v, 6) for v in torch.logit(p).tolist()])
    [0.0, -2.197225]
    >>> print(round(torch.logit(p, eps=0.25).tolist()[1], 6))  # logit(0.25)
    -1.098612
    """
    x = _tensor_arg(input, "logit")
    return bind(Logit, (x,), {"eps": None if eps is None else float(eps)})


@public(inplace=True)
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``:
    ``sum_{j<p} lgamma(x - j/2) + p (p - 1)/4 log(pi)``.

    Parameters
    ----------
    input : Tensor
    p : int
        The dimension, ``p >= 1``.

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If ``p`` is not an int.
    RuntimeError
        If ``p < 1``.

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor(2.5, dtype=torch.float64)
    >>> print(round(float(torch.mvlgamma(x, 1)), 6))  # lgamma(2.5)
    0.284683
    """
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(
            f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}"
        )
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if isinstance(input, Tensor) and input.dtype.np.kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    x = _as_float(_tensor_arg(input, "mvlgamma"))
    # PyTorch's arange(-p/2 + 1/2, 1/2, 1/2) + x: the offsets in that order, the last +0.0
    # (so x = -0.0 gives lgamma(+0.0), whose gradient digamma(+0.0) is -inf, as PyTorch's)
    offsets = tensor((np.arange(p, dtype=x.dtype.np) - (p - 1)) * 0.5, device=x.device)
    terms = lgamma(F.unsqueeze(x, -1) + offsets)
    return F.sum(terms, -1) + p * (p - 1) / 4 * math.log(math.pi)


# (the ops are public through ``@public``: NOTE [Public ops] in ``ops/_public.py``)
__all__: list = []
