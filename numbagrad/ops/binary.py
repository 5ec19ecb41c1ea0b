"""Elementwise binary ops with broadcasting, comparisons, ``where`` and ``clamp``.

Operands are tensors or Python scalars (kept as scalars: no tensor is made for ``x * 2``).
``_prep`` applies PyTorch's promotion (NOTE [Type promotion]); NumPy then computes in that
dtype. Rules return gradients in the broadcast shape and the engine reduces them.
"""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad import kernels
from numbagrad._tensor import Tensor
from numbagrad.kernels import PARALLEL_MIN
from numbagrad.kernels.cpu import alloc, threads
from numbagrad.kernels.cpu.threads import THREAD_MIN
from numbagrad.ops._op import NO_PARAMS, Op, bind
from numbagrad.ops._util import flat, flat_g

K = kernels.module("elementwise")

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
    dt = D.result_type(_View(a), _View(b)).np
    return _cast(a, dt), _cast(b, dt), dt


class _View:
    """Gives ``result_type`` the dtype/ndim of an array operand (scalars pass through)."""

    __slots__ = ("dtype", "ndim")

    def __new__(cls, x):
        if type(x) is not np.ndarray:
            return x.item() if isinstance(x, (np.generic,)) else x
        v = object.__new__(cls)
        v.dtype = D._FROM_NP[x.dtype]
        v.ndim = x.ndim
        return v


def _cast(x, dt):
    if type(x) is np.ndarray:
        return x if x.dtype == dt else x.astype(dt)
    return dt.type(x)


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


class Binary(Op):
    """A broadcasting elementwise op of two operands; ``fn`` is the NumPy ufunc."""

    @classmethod
    def forward(cls, a, b):
        if not (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype):
            a, b, _ = _prep(a, b)
        try:
            if (type(a) is np.ndarray and a.size >= THREAD_MIN) or (
                    type(b) is np.ndarray and b.size >= THREAD_MIN):
                return threads.call(cls.fn, a, b)  # NOTE [Threaded ufuncs]
            return cls.fn(a, b)
        except ValueError:
            _check_shapes(cls.__name__.lower(), a, b)
            raise

    def _needs(self, i):
        return self._next[i] is not None


class Add(Binary):
    fn = staticmethod(np.add)

    def vjp(self, g):
        return g, g

    def fused_vjp(self, g):
        return g, g


def _is_bool(x):
    return x.dtype.kind == "b" if type(x) is np.ndarray else isinstance(x, (bool, np.bool_))


class Sub(Binary):
    fn = staticmethod(np.subtract)

    @classmethod
    def forward(cls, a, b):
        if _is_bool(a) or _is_bool(b):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return super().forward(a, b)

    def vjp(self, g):
        return g, (-g if self._needs(1) else None)

    def fused_vjp(self, g):
        return g, (np.negative(g) if self._needs(1) else None)


class Mul(Binary):
    fn = staticmethod(np.multiply)
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's

    def vjp(self, g):
        a, b = self.saved_tensors()
        return (g * b if self._needs(0) else None), (g * a if self._needs(1) else None)

    def fused_vjp(self, g):
        a, b = self.saved_arrays()
        ea, eb = self._next
        if (ea is not None and eb is not None and type(a) is np.ndarray
                and a.size >= PARALLEL_MIN and type(b) is np.ndarray
                and a.shape == b.shape == g.shape and a.dtype == b.dtype == g.dtype):
            # large: both products in one parallel pass over g
            ga = alloc.empty(a.shape, a.dtype)
            gb = alloc.empty(a.shape, a.dtype)
            K.mul_backward_par(flat_g(g), flat(a), flat(b), ga.reshape(-1), gb.reshape(-1))
            return ga, gb
        if g.size < THREAD_MIN:
            return (g * b if ea is not None else None), (g * a if eb is not None else None)
        return ((threads.call(np.multiply, g, b) if ea is not None else None),
                (threads.call(np.multiply, g, a) if eb is not None else None))


class Div(Binary):
    fn = staticmethod(np.true_divide)
    saves_inputs = (1,)
    saves_output = True

    @classmethod
    def forward(cls, a, b, rounding_mode=None):
        a, b, dt = _prep(a, b)
        _check_shapes("div", a, b)
        if rounding_mode is None:
            if dt.kind != "f":  # true division of integers gives the default float dtype
                dt = D.get_default_dtype().np
                a, b = _cast(a, dt), _cast(b, dt)
            return np.true_divide(a, b)
        if rounding_mode == "trunc":
            return _cast(np.trunc(np.true_divide(a, b)), dt)
        if rounding_mode == "floor":
            return np.floor_divide(a, b)
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")

    def vjp(self, g):
        b, y = self.saved_tensors()
        if self.rounding_mode is not None:
            return (g * 0 if self._needs(0) else None), (g * 0 if self._needs(1) else None)
        return ((g / b if self._needs(0) else None),
                (-(g * y) / b if self._needs(1) else None))

    def fused_vjp(self, g):
        if self.rounding_mode is not None:  # piecewise constant: zero gradient
            return tuple(np.zeros_like(g) if self._needs(i) else None for i in (0, 1))
        b, y = self.saved_arrays()
        return ((np.divide(g, b) if self._needs(0) else None),
                (np.negative(g * y / b) if self._needs(1) else None))


class Pow(Binary):
    fn = staticmethod(np.power)
    saves_inputs = (0, 1)
    saves_output = True

    @classmethod
    def forward(cls, a, b):
        a, b, dt = _prep(a, b)
        if dt.kind in "iu" and np.any(np.asarray(b) < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return np.power(a, b)

    def vjp(self, g):
        a, b, y = self.saved_tensors()
        ga = gb = None
        if self._needs(0):
            # d/da a**b = b * a**(b-1); written without y/a so a = 0 stays finite
            ga = g * b * a ** (b - 1) if isinstance(b, Tensor) or b != 0 else g * 0
        if self._needs(1):
            # d/db a**b = a**b * log(a); defined as 0 where a == 0 and b >= 0 (as PyTorch)
            from numbagrad.ops.unary import log

            safe = where((a == 0) & (b >= 0), a * 0 + 1, a) if isinstance(a, Tensor) else a
            if isinstance(a, Tensor):
                gb = where((a == 0) & (b >= 0), g * 0, g * y * log(safe))
            elif a == 0:  # a Python zero base: 0 where b >= 0, as PyTorch masks it
                with np.errstate(divide="ignore"):
                    gb = where(b >= 0, g * 0, g * y * float(np.log(0.0)))
            else:
                gb = g * y * float(np.log(a))
        return ga, gb


class Maximum(Binary):
    fn = staticmethod(np.maximum)
    saves_inputs = (0, 1)
    wins = staticmethod(np.greater)  # where ``a`` is the one chosen

    def vjp(self, g):
        a, b = self.saved_tensors()
        # ties split the gradient equally, as PyTorch does
        wa = Tensor._make(self.wins(a._data, b._data)).to(g.dtype) + (a == b).to(g.dtype) * 0.5
        return (g * wa if self._needs(0) else None), (g * (1 - wa) if self._needs(1) else None)


class Minimum(Maximum):
    fn = staticmethod(np.minimum)
    wins = staticmethod(np.less)


class Atan2(Binary):
    fn = staticmethod(np.arctan2)
    saves_inputs = (0, 1)

    @classmethod
    def forward(cls, a, b):
        a, b, dt = _prep(a, b)
        if dt.kind != "f":
            dt = D.get_default_dtype().np
            a, b = _cast(a, dt), _cast(b, dt)
        return np.arctan2(a, b)

    def vjp(self, g):
        a, b = self.saved_tensors()
        r = a * a + b * b
        return (g * b / r if self._needs(0) else None), (-(g * a) / r if self._needs(1) else None)


class Fmod(Binary):
    fn = staticmethod(np.fmod)  # sign of the dividend, as torch.fmod
    saves_inputs = (0, 1)
    rounding = "trunc"  # fmod(a, b) = a - b * trunc(a / b)

    def vjp(self, g):
        a, b = self.saved_tensors()
        gb = None
        if self._needs(1):
            gb = -g * div(a, b, rounding_mode=self.rounding)
        return g, gb


class Remainder(Fmod):
    fn = staticmethod(np.remainder)  # sign of the divisor, as torch.remainder
    rounding = "floor"  # remainder(a, b) = a - b * floor(a / b)


class Compare(Binary):
    differentiable = False

    @classmethod
    def forward(cls, a, b):
        a, b, _ = _prep(a, b)
        try:
            return cls.fn(a, b)
        except ValueError:
            _check_shapes(cls.__name__.lower(), a, b)
            raise


class Eq(Compare):
    fn = staticmethod(np.equal)


class Ne(Compare):
    fn = staticmethod(np.not_equal)


class Lt(Compare):
    fn = staticmethod(np.less)


class Le(Compare):
    fn = staticmethod(np.less_equal)


class Gt(Compare):
    fn = staticmethod(np.greater)


class Ge(Compare):
    fn = staticmethod(np.greater_equal)


class LogicalAnd(Compare):
    fn = staticmethod(np.logical_and)


class LogicalOr(Compare):
    fn = staticmethod(np.logical_or)


class LogicalXor(Compare):
    fn = staticmethod(np.logical_xor)


class BitwiseAnd(Compare):
    fn = staticmethod(np.bitwise_and)


class BitwiseOr(Compare):
    fn = staticmethod(np.bitwise_or)


class BitwiseXor(Compare):
    fn = staticmethod(np.bitwise_xor)


class LogicalNot(Op):
    differentiable = False

    @staticmethod
    def forward(x):
        if x.dtype.kind == "b":
            return np.logical_not(x)
        if x.dtype.kind in "iu":
            return np.invert(x)
        raise TypeError("~ (bitwise_not) is only defined for integer and bool tensors")


class Where(Op):
    """``where(cond, a, b)``: ``cond`` is a static boolean array (no gradient)."""

    @staticmethod
    def forward(a, b, cond):
        a, b, _ = _prep(a, b)
        try:
            return np.where(cond, a, b)
        except ValueError:
            sa = a.shape if type(a) is np.ndarray else ()
            sb = b.shape if type(b) is np.ndarray else ()
            raise RuntimeError(f"where: condition {list(cond.shape)}, input {list(sa)} and "
                               f"other {list(sb)} are not broadcastable") from None

    def vjp(self, g):
        c = self.cond
        zero = g * 0
        ct = Tensor._make(c)
        return (where(ct, g, zero) if self._next[0] is not None else None,
                where(ct, zero, g) if self._next[1] is not None else None)

    def fused_vjp(self, g):
        c = self.cond
        return (np.where(c, g, 0) if self._next[0] is not None else None,
                np.where(c, 0, g) if self._next[1] is not None else None)


class Clamp(Op):
    """``clamp(x, min, max)`` with scalar bounds (``None`` for no bound)."""

    saves_inputs = (0,)

    @staticmethod
    def forward(x, min=None, max=None):
        if min is not None and max is not None and min > max:
            return np.full(x.shape, max, x.dtype if x.dtype.kind == "f" or
                           isinstance(max, int) else D.get_default_dtype().np)
        dt = x.dtype
        if dt.kind != "f" and (isinstance(min, float) or isinstance(max, float)):
            x = x.astype(D.get_default_dtype().np)
        return np.clip(x, min, max)

    def _mask(self, x):
        lo, hi = self.min, self.max
        m = None
        if lo is not None:
            m = x >= lo
        if hi is not None:
            m = (x <= hi) if m is None else m & (x <= hi)
        return m

    def vjp(self, g):
        (x,) = self.saved_tensors()
        m = self._mask(x)
        return g if m is None else g * m.to(g.dtype)

    def fused_vjp(self, g):
        (x,) = self.saved_arrays()
        m = self._mask(x)
        return g if m is None else g * m


# -- public functions ------------------------------------------------------------------------
def _check_operand(x, name):
    if not isinstance(x, (Tensor, int, float, bool)):
        if isinstance(x, (np.generic,)):
            return x.item()
        if isinstance(x, (np.ndarray, list, tuple)):
            from numbagrad._creation import tensor

            return tensor(x)
        raise TypeError(f"{name}(): operand must be a Tensor or a Python number, "
                        f"got {type(x).__name__}")
    return x


def _binary(op, doc):
    name = op.__name__.lower()

    def f(input, other):
        if type(input) is not Tensor:
            input = _check_operand(input, name)
        if type(other) is not Tensor:
            other = _check_operand(other, name)
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            from numbagrad._creation import tensor

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


add_ = _binary(Add, "Elementwise ``input + other``.")
sub_ = _binary(Sub, "Elementwise ``input - other``.")
mul = _binary(Mul, "Elementwise ``input * other``.")
pow = _binary(Pow, "Elementwise ``input ** exponent`` (tensor or scalar exponent).")
maximum = _binary(Maximum, "Elementwise maximum (ties split the gradient equally).")
minimum = _binary(Minimum, "Elementwise minimum (ties split the gradient equally).")
atan2 = _binary(Atan2, "Elementwise ``atan(input / other)`` with the quadrant of the signs.")
fmod = _binary(Fmod, "C-style remainder (sign of the dividend).")
remainder = _binary(Remainder, "Python-style remainder (sign of the divisor).")
eq = _binary(Eq, "Elementwise ``input == other`` (bool, no gradient).")
ne = _binary(Ne, "Elementwise ``input != other`` (bool, no gradient).")
lt = _binary(Lt, "Elementwise ``input < other`` (bool, no gradient).")
le = _binary(Le, "Elementwise ``input <= other`` (bool, no gradient).")
gt = _binary(Gt, "Elementwise ``input > other`` (bool, no gradient).")
ge = _binary(Ge, "Elementwise ``input >= other`` (bool, no gradient).")
logical_and = _binary(LogicalAnd, "Elementwise logical and (bool).")
logical_or = _binary(LogicalOr, "Elementwise logical or (bool).")
logical_xor = _binary(LogicalXor, "Elementwise logical xor (bool).")
bitwise_and = _binary(BitwiseAnd, "Elementwise bitwise and (integer and bool tensors).")
bitwise_or = _binary(BitwiseOr, "Elementwise bitwise or (integer and bool tensors).")
bitwise_xor = _binary(BitwiseXor, "Elementwise bitwise xor (integer and bool tensors).")
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne
multiply = mul


def add(input, other, *, alpha=1):
    """Elementwise ``input + alpha * other``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.add(numbagrad.tensor([1.0, 2.0]), 1.5)
    tensor([2.5000, 3.5000])
    """
    return add_(input, other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1):
    """Elementwise ``input - alpha * other``."""
    return sub_(input, other if alpha == 1 else other * alpha)


subtract = sub


def div(input, other, *, rounding_mode=None):
    """Elementwise division; ``rounding_mode`` None (true division), 'trunc' or 'floor'.

    Integer inputs with true division give the default float dtype, as in PyTorch.
    """
    input = _check_operand(input, "div")
    other = _check_operand(other, "div")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from numbagrad._creation import tensor

        input = tensor(input)
    return bind(Div, (input, other), {"rounding_mode": rounding_mode})


divide = true_divide = div


def floor_divide(input, other):
    """``div(input, other, rounding_mode='floor')``."""
    return div(input, other, rounding_mode="floor")


def logical_not(input):
    """Elementwise logical not (bool)."""
    return bind(LogicalNot, (input,), {})


bitwise_not = logical_not


def where(condition, input=None, other=None):
    """Choose ``input`` where ``condition`` holds, else ``other`` (broadcasting).

    With only ``condition``, returns the indices where it is true (as ``nonzero``).
    """
    if input is None and other is None:
        from numbagrad.ops.shape import nonzero

        return nonzero(condition, as_tuple=True)
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {cond.dtype}")
    input = _check_operand(input, "where")
    other = _check_operand(other, "where")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from numbagrad._creation import tensor

        input = tensor(input)
    return bind(Where, (input, other), {"cond": cond})


def clamp(input, min=None, max=None):
    """Clamp to ``[min, max]``; bounds may be numbers or tensors (``None`` = unbounded).

    The gradient passes where ``min <= input <= max``.
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input
        if min is not None:
            out = where(out < min, min, out) if not isinstance(min, Tensor) else \
                where(out >= min, out, min.to(out.dtype) if out.dtype.is_floating_point else min)
        if max is not None:
            out = where(out > max, max, out) if not isinstance(max, Tensor) else \
                where(out <= max, out, max)
        return out
    return bind(Clamp, (input,), {"min": min, "max": max})


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


ALL = ("add sub mul div pow maximum minimum atan2 fmod remainder eq ne lt le gt ge "
       "logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor "
       "bitwise_not where clamp clip clamp_min clamp_max floor_divide true_divide divide "
       "multiply subtract greater less greater_equal less_equal not_equal").split()
