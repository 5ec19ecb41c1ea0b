"""Elementwise unary ops.

Each op states its local derivative once (``derivative``, in numbagrad ops): the VJP is
``g * d`` (and the JVP, when the transforms land, ``t * d``). Where a fused kernel does
``g * d`` in one pass it is given as ``kernel``; it is used only when no backward graph is
recorded, and the op database tests it against the composite rule.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import kernels
from numbagrad.autograd.graph import saved_value
from numbagrad.kernels import KERNEL_MIN, PARALLEL_MIN
from numbagrad.kernels.cpu import alloc, threads
from numbagrad.kernels.cpu.threads import THREAD_MIN
from numbagrad.ops._op import NO_PARAMS, Op, bind
from numbagrad.ops._util import default_float, flat, flat_g

K = kernels.module("elementwise")


class Unary(Op):
    """An elementwise map of one tensor. ``fn`` is the array function; float-only ops cast
    integer and bool inputs to the default float dtype first (as PyTorch does)."""

    float_only = True
    kernel = None  # name of a fused ``(g, saved, out)`` backward kernel in ``K``

    @classmethod
    def forward(cls, x):
        if cls.float_only and x.dtype.kind != "f":
            x = x.astype(default_float())
        if x.size >= THREAD_MIN and type(cls.fn) is np.ufunc:
            return threads.call(cls.fn, x)  # NOTE [Threaded ufuncs]
        return cls.fn(x)

    def derivative(self, s):
        """The local derivative ``d`` (a tensor) from the saved input or output ``s``."""
        raise NotImplementedError(f"{type(self).__name__} must define derivative()")

    def vjp(self, g):
        return g * self.derivative(self.saved_tensors()[0])

    @staticmethod
    def np_derivative(s):
        """``derivative`` on arrays (the same formula, with NumPy)."""
        raise NotImplementedError("a Unary op must define np_derivative()")

    def fused_vjp(self, g):
        s = saved_value(self, 0, True)
        kernel = self.kernel
        if kernel is None or s.size < KERNEL_MIN:
            d = self.np_derivative(s)
            return threads.call(np.multiply, g, d) if s.size >= THREAD_MIN else g * d
        out = alloc.empty(s.shape, s.dtype if g.dtype is s.dtype else np.result_type(g, s))
        getattr(K, kernel)(flat_g(g), s.reshape(-1), out.reshape(-1))
        return out


def _np_sigmoid(x):
    """A numerically stable logistic function on arrays."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _njit_map(kernel, small=None):
    """Forward through the flat ``(x, out)`` kernel named ``kernel``; arrays under
    ``KERNEL_MIN`` elements use the NumPy formula ``small`` when one is given."""
    def fn(x):
        if small is not None and x.size < KERNEL_MIN:
            return small(x)
        out = alloc.empty(x.shape, x.dtype)
        getattr(K, kernel)(flat(x), out.reshape(-1))
        return out
    return staticmethod(fn)


# -- linear / piecewise ----------------------------------------------------------------
class Neg(Unary):
    float_only = False
    fn = staticmethod(np.negative)

    def vjp(self, g):
        return -g

    def fused_vjp(self, g):
        return np.negative(g)

    @classmethod
    def forward(cls, x):
        if x.dtype.kind == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` "
                "operator instead."
            )
        return np.negative(x)


class Abs(Unary):
    float_only = False
    fn = staticmethod(np.abs)
    saves_inputs = (0,)

    def derivative(self, x):
        return sign(x)

    @staticmethod
    def np_derivative(x):
        return np.sign(x)


class Sign(Unary):
    float_only = False
    fn = staticmethod(np.sign)
    saves_inputs = (0,)

    def derivative(self, x):
        return x * 0

    @staticmethod
    def np_derivative(x):
        return np.zeros_like(x)


class Floor(Sign):
    fn = staticmethod(np.floor)


class Ceil(Sign):
    fn = staticmethod(np.ceil)


class Round(Sign):
    fn = staticmethod(np.round)  # half to even, as torch.round


class Relu(Unary):
    float_only = False
    saves_output = True
    kernel = "relu_backward"

    @staticmethod
    def fn(x):
        return np.maximum(x, x.dtype.type(0))  # one SIMD pass; NaN propagates as in torch

    def derivative(self, y):
        return (y > 0).to(y.dtype)

    @staticmethod
    def np_derivative(y):
        return (y > 0).astype(y.dtype)


# -- exponentials and logarithms ---------------------------------------------------------
class Exp(Unary):
    fn = staticmethod(np.exp)
    saves_output = True

    def derivative(self, y):
        return y

    def fused_vjp(self, g):
        y = saved_value(self, 0, True)
        return threads.call(np.multiply, g, y) if y.size >= THREAD_MIN else g * y

    @staticmethod
    def np_derivative(y):
        return y


class Expm1(Unary):
    fn = staticmethod(np.expm1)
    saves_output = True

    def derivative(self, y):
        return y + 1

    @staticmethod
    def np_derivative(y):
        return y + 1


class Log(Unary):
    fn = staticmethod(np.log)
    saves_inputs = (0,)

    def derivative(self, x):
        return x.reciprocal()

    def vjp(self, g):
        return g / self.saved_tensors()[0]

    def fused_vjp(self, g):
        x = saved_value(self, 0, True)
        return threads.call(np.divide, g, x) if x.size >= THREAD_MIN else g / x

    @staticmethod
    def np_derivative(x):
        return 1 / x


class Log1p(Unary):
    fn = staticmethod(np.log1p)
    saves_inputs = (0,)

    def derivative(self, x):
        return (x + 1).reciprocal()

    @staticmethod
    def np_derivative(x):
        return 1 / (x + 1)


class Log2(Unary):
    fn = staticmethod(np.log2)
    saves_inputs = (0,)

    def derivative(self, x):
        return (x * math.log(2.0)).reciprocal()

    @staticmethod
    def np_derivative(x):
        return 1 / (x * math.log(2.0))


class Sqrt(Unary):
    fn = staticmethod(np.sqrt)
    saves_output = True

    def derivative(self, y):
        return (y * 2).reciprocal()

    @staticmethod
    def np_derivative(y):
        return 0.5 / y


class SafeSqrt(Sqrt):
    """``sqrt`` whose gradient is 0 (not inf) where the result is 0 (used by ``std``)."""

    def name(self):
        return "SqrtBackward0"

    def derivative(self, y):
        from numbagrad.ops.binary import where

        return where(y == 0, y * 0, (y * 2).reciprocal())

    @staticmethod
    def np_derivative(y):
        with np.errstate(divide="ignore"):
            return np.where(y == 0, 0.0, 0.5 / y).astype(y.dtype, copy=False)


class Rsqrt(Unary):
    fn = _njit_map("rsqrt_forward", lambda x: 1 / np.sqrt(x))
    saves_output = True

    def derivative(self, y):
        return y * y * y * -0.5

    @staticmethod
    def np_derivative(y):
        return -0.5 * y * y * y


class Square(Unary):
    float_only = False
    fn = staticmethod(np.square)
    saves_inputs = (0,)

    def derivative(self, x):
        return x * 2

    @staticmethod
    def np_derivative(x):
        return 2 * x


class Reciprocal(Unary):
    fn = staticmethod(np.reciprocal)
    saves_output = True

    def derivative(self, y):
        return -(y * y)

    @staticmethod
    def np_derivative(y):
        return -(y * y)


# -- trigonometric and activations -------------------------------------------------------
class Sin(Unary):
    fn = staticmethod(np.sin)
    saves_inputs = (0,)
    kernel = "sin_backward"

    def derivative(self, x):
        return cos(x)

    @staticmethod
    def np_derivative(x):
        return np.cos(x)


class Cos(Unary):
    fn = staticmethod(np.cos)
    saves_inputs = (0,)
    kernel = "cos_backward"

    def derivative(self, x):
        return -sin(x)

    @staticmethod
    def np_derivative(x):
        return -np.sin(x)


class Tan(Unary):
    fn = staticmethod(np.tan)
    saves_output = True
    kernel = "tan_backward"

    def derivative(self, y):
        return y * y + 1

    @staticmethod
    def np_derivative(y):
        return 1 + y * y


class Tanh(Unary):
    fn = staticmethod(np.tanh)  # NumPy's SIMD tanh beats a scalar-libm njit loop
    saves_output = True

    def derivative(self, y):
        return 1 - y * y

    def fused_vjp(self, g):
        y = saved_value(self, 0, True)
        if y.size < KERNEL_MIN:
            return np.multiply(g, self.np_derivative(y))
        out = alloc.empty(y.shape, y.dtype)
        k = K.tanh_backward_par if y.size >= PARALLEL_MIN else K.tanh_backward
        k(flat_g(g), y.reshape(-1), out.reshape(-1))
        return out

    @staticmethod
    def np_derivative(y):
        return 1 - y * y


def _sigmoid_block(out, x):
    # 1 / (1 + e^-x): for x << 0, e^-x overflows to inf and the result is 0, correctly
    np.negative(x, out=out)
    with np.errstate(over="ignore"):  # per thread: errstate is thread-local
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _sigmoid_fn(x):
    if x.size < KERNEL_MIN:
        return _np_sigmoid(x).astype(x.dtype, copy=False)
    # NumPy's SIMD exp on cache-sized blocks, on every core: about twice as fast as a
    # scalar-exp njit loop on two threads (measured on 10M float64)
    x = np.ascontiguousarray(x)
    return threads.blocked(_sigmoid_block, alloc.empty(x.shape, x.dtype), x)


class Sigmoid(Unary):
    fn = staticmethod(_sigmoid_fn)
    saves_output = True

    def derivative(self, y):
        return y * (1 - y)

    def fused_vjp(self, g):
        y = saved_value(self, 0, True)
        if y.size < KERNEL_MIN:
            return np.multiply(g, self.np_derivative(y))
        out = alloc.empty(y.shape, y.dtype)
        k = K.sigmoid_backward_par if y.size >= PARALLEL_MIN else K.sigmoid_backward
        k(flat_g(g), y.reshape(-1), out.reshape(-1))
        return out

    @staticmethod
    def np_derivative(y):
        return y * (1 - y)


class Softplus(Unary):
    fn = _njit_map("softplus_forward",
                   lambda x: np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))))
    saves_inputs = (0,)
    kernel = "softplus_backward"

    def derivative(self, x):
        return sigmoid(x)

    @staticmethod
    def np_derivative(x):
        return _np_sigmoid(x)


class Erf(Unary):
    fn = _njit_map("erf_forward")
    saves_inputs = (0,)
    kernel = "erf_backward"

    def derivative(self, x):
        return exp(-(x * x)) * (2 / math.sqrt(math.pi))

    @staticmethod
    def np_derivative(x):
        return (2 / math.sqrt(math.pi)) * np.exp(-(x * x))


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


neg = _unary(Neg, "Elementwise negation ``-input``.")
abs = _unary(Abs, "Elementwise absolute value.")
sign = _unary(Sign, "Elementwise sign (-1, 0 or 1); its gradient is zero.")
floor = _unary(Floor, "Elementwise floor; its gradient is zero.")
ceil = _unary(Ceil, "Elementwise ceiling; its gradient is zero.")
round = _unary(Round, "Round half to even; its gradient is zero.")
relu = _unary(Relu, "Rectified linear unit ``max(input, 0)``.")
exp = _unary(Exp, "Elementwise exponential.")
expm1 = _unary(Expm1, "``exp(input) - 1``, accurate near zero.")
log = _unary(Log, "Natural logarithm.")
log1p = _unary(Log1p, "``log(1 + input)``, accurate near zero.")
log2 = _unary(Log2, "Base-2 logarithm.")
sqrt = _unary(Sqrt, "Square root.")
rsqrt = _unary(Rsqrt, "Reciprocal square root ``1 / sqrt(input)`` (one fused pass).")
square = _unary(Square, "Elementwise square.")
reciprocal = _unary(Reciprocal, "Elementwise ``1 / input``.")
sin = _unary(Sin, "Elementwise sine.")
cos = _unary(Cos, "Elementwise cosine.")
tan = _unary(Tan, "Elementwise tangent.")
tanh = _unary(Tanh, "Hyperbolic tangent.")
sigmoid = _unary(Sigmoid, "Logistic sigmoid ``1 / (1 + exp(-input))``, computed stably.")
softplus_ = _unary(Softplus, "``log(1 + exp(input))``, computed stably.")
erf = _unary(Erf, "The error function.")


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, linear above ``threshold`` (as PyTorch).

    Parameters
    ----------
    input : Tensor
    beta : float, default 1
    threshold : float, default 20
        Where ``beta * input`` exceeds it, the result is ``input`` itself.
    """
    from numbagrad.ops.binary import where

    if beta == 1.0:
        y = softplus_(input)
    else:
        y = softplus_(input * beta) / beta
    return where(input * beta > threshold, input, y)


ALL = ("neg abs sign floor ceil round relu exp expm1 log log1p log2 sqrt rsqrt square "
       "reciprocal sin cos tan tanh sigmoid softplus erf").split()
