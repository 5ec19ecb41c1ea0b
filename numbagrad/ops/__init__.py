"""The op library: one declaration per primitive (see NOTE [Ops and interpreters]) and the
composites built on them. This module also gives ``Tensor`` its methods and operators."""

from __future__ import annotations

import numpy as np

from numbagrad import _tensor
from numbagrad._tensor import Tensor
from numbagrad.ops import binary, inplace, linalg, reduce, shape, unary
from numbagrad.ops._op import bind
from numbagrad.ops.binary import *  # noqa: F403
from numbagrad.ops.inplace import clone, contiguous, to
from numbagrad.ops.linalg import *  # noqa: F403
from numbagrad.ops.reduce import *  # noqa: F403
from numbagrad.ops.shape import *  # noqa: F403
from numbagrad.ops.unary import *  # noqa: F403

__all__ = [*unary.ALL, *binary.ALL, *reduce.ALL, *shape.ALL, *linalg.ALL, "clone",
           "contiguous", "isfinite", "isinf", "isnan", "nan_to_num", "to"]


class _Predicate(binary.Op):
    differentiable = False

    @classmethod
    def forward(cls, x):
        return cls.fn(x) if x.dtype.kind == "f" else cls.default(x)


class IsFinite(_Predicate):
    fn = staticmethod(np.isfinite)
    default = staticmethod(lambda x: np.ones(x.shape, np.bool_))


class IsNan(_Predicate):
    fn = staticmethod(np.isnan)
    default = staticmethod(lambda x: np.zeros(x.shape, np.bool_))


class IsInf(_Predicate):
    fn = staticmethod(np.isinf)
    default = staticmethod(lambda x: np.zeros(x.shape, np.bool_))


def isfinite(input):
    """True where the element is neither inf nor nan."""
    return bind(IsFinite, (input,), {})


def isnan(input):
    """True where the element is nan."""
    return bind(IsNan, (input,), {})


def isinf(input):
    """True where the element is +inf or -inf."""
    return bind(IsInf, (input,), {})


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace nan/inf by finite numbers (gradient passes where the input was finite)."""
    fin = np.finfo(input._data.dtype) if input.is_floating_point() else None
    out = where(isnan(input), nan, input)  # noqa: F405
    if fin is not None:
        out = where(out == float("inf"), fin.max if posinf is None else posinf, out)  # noqa: F405
        out = where(out == float("-inf"), fin.min if neginf is None else neginf, out)  # noqa: F405
    return out


# -- Tensor methods and operators -------------------------------------------------------------
_g = globals()
_METHODS = [n for n in __all__ if n not in {"cat", "concat", "concatenate", "stack",
                                            "where", "einsum", "isfinite"}]
for _name in _METHODS:
    setattr(Tensor, _name, _g[_name])
Tensor.isfinite = isfinite
Tensor.where = lambda self, condition, other: where(condition, self, other)  # noqa: F405
Tensor.__getitem__ = getitem  # noqa: F405
Tensor.mT = property(lambda self: transpose(self, -2, -1))  # noqa: F405
Tensor.T = property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1))))  # noqa: F405
Tensor.float = lambda self: to(self, np.float32)
Tensor.double = lambda self: to(self, np.float64)
Tensor.long = lambda self: to(self, np.int64)
Tensor.int = lambda self: to(self, np.int32)
Tensor.bool = lambda self: to(self, np.bool_)
Tensor.type_as = lambda self, other: to(self, other.dtype)
Tensor.view_as = lambda self, other: view(self, tuple(other.shape))  # noqa: F405
Tensor.reshape_as = lambda self, other: reshape(self, tuple(other.shape))  # noqa: F405
Tensor.new_zeros = lambda self, *size, dtype=None: _new(np.zeros, self, size, dtype)
Tensor.new_ones = lambda self, *size, dtype=None: _new(np.ones, self, size, dtype)
Tensor.new_empty = lambda self, *size, dtype=None: _new(np.empty, self, size, dtype)
Tensor.new_full = lambda self, size, fill_value, dtype=None: Tensor._make(
    np.full(tuple(size), fill_value, self._data.dtype if dtype is None else _np_dtype(dtype)))
Tensor.new_tensor = lambda self, data, dtype=None: _tensor_like(self, data, dtype)


def _np_dtype(dtype):
    from numbagrad._dtype import as_dtype

    return as_dtype(dtype).np


def _new(fn, self, size, dtype):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return Tensor._make(fn(size, self._data.dtype if dtype is None else _np_dtype(dtype)))


def _tensor_like(self, data, dtype):
    from numbagrad._creation import tensor

    return tensor(data, dtype=self.dtype if dtype is None else dtype)


def _rsub(self, other):
    return sub(other, self)  # noqa: F405


def _rdiv(self, other):
    return div(other, self)  # noqa: F405


def _rpow(self, other):
    return pow(other, self)


def _rmatmul(self, other):
    return matmul(other, self)  # noqa: F405


def _rfloordiv(self, other):
    return floor_divide(other, self)  # noqa: F405


def _rmod(self, other):
    return remainder(other, self)  # noqa: F405


_OPERATORS = {
    "__add__": add_, "__radd__": add_, "__sub__": sub_, "__rsub__": _rsub,  # noqa: F405
    "__mul__": mul, "__rmul__": mul, "__truediv__": div, "__rtruediv__": _rdiv,  # noqa: F405
    "__pow__": pow, "__rpow__": _rpow, "__matmul__": matmul,  # noqa: F405
    "__rmatmul__": _rmatmul, "__neg__": neg, "__abs__": abs, "__pos__": lambda s: s,  # noqa: F405
    "__floordiv__": floor_divide, "__rfloordiv__": _rfloordiv,  # noqa: F405
    "__mod__": remainder, "__rmod__": _rmod,  # noqa: F405
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt,  # noqa: F405
    "__ge__": ge, "__and__": bitwise_and, "__or__": bitwise_or,  # noqa: F405
    "__xor__": bitwise_xor, "__invert__": logical_not,  # noqa: F405
    "__rand__": bitwise_and, "__ror__": bitwise_or, "__rxor__": bitwise_xor,  # noqa: F405
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)
Tensor.__hash__ = lambda self: id(self)


# -- in-place methods ---------------------------------------------------------------------------
def _ufunc_fast(ufunc):
    def fast(data, other):
        try:
            ufunc(data, other, out=data, casting="same_kind")
        except ValueError:
            so = list(other.shape) if isinstance(other, np.ndarray) else []
            raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the "
                               f"broadcast shape of {list(data.shape)} and {so}") from None
        except TypeError as e:  # numpy's casting error
            raise RuntimeError(f"result type can't be cast to the desired output type "
                               f"{data.dtype}: {e}") from None
    return fast


def _binary_inplace(fn, ufunc=None):
    fast = _ufunc_fast(ufunc) if ufunc is not None else None

    def method(self, other, **kwargs):
        if kwargs.get("alpha", 1) != 1:
            other = other * kwargs.pop("alpha")
        return inplace.inplace(self, fn, other, fast=fast, **kwargs)
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place :func:`{fn.__name__}` (bumps the version counter)."
    return method


def _unary_inplace(fn):
    def method(self, *args, **kwargs):
        return inplace.inplace(self, fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place :func:`{fn.__name__}` (bumps the version counter)."
    return method


Tensor.add_ = _binary_inplace(add, np.add)  # noqa: F405
Tensor.sub_ = _binary_inplace(sub, np.subtract)  # noqa: F405
Tensor.mul_ = _binary_inplace(mul, np.multiply)  # noqa: F405
Tensor.div_ = _binary_inplace(div)  # noqa: F405
Tensor.pow_ = _binary_inplace(pow)
Tensor.maximum_ = _binary_inplace(maximum)  # noqa: F405
Tensor.minimum_ = _binary_inplace(minimum)  # noqa: F405
Tensor.remainder_ = _binary_inplace(remainder)  # noqa: F405
Tensor.fmod_ = _binary_inplace(fmod)  # noqa: F405
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
for _name in ("neg abs sign floor ceil round relu exp expm1 log log1p log2 sqrt rsqrt square "
              "reciprocal sin cos tan tanh sigmoid erf clamp clip masked_fill").split():
    setattr(Tensor, _name + "_", _unary_inplace(_g[_name]))


def _fill(self, value):
    """Fill with ``value`` in place."""
    if isinstance(value, Tensor) and value._requires_grad:
        return inplace.inplace(self, lambda t, val: clone(expand(val.to(t.dtype), t.shape)),  # noqa: F405
                               value)
    v = value.item() if isinstance(value, Tensor) else value
    return inplace.inplace(self, lambda t: bind(inplace.Fill, (t,), {"value": v}),
                           fast=lambda d: d.fill(v))


def _zero(self):
    """Fill with zeros in place."""
    return _fill(self, 0)


def _copy(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into this tensor in place."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    def fast(d, s):
        np.copyto(d, s, casting="unsafe")
    return inplace.inplace(self, lambda t, s: clone(expand(to(s, t.dtype), t.shape)),  # noqa: F405
                           src, fast=fast)


def _setitem(self, key, value):
    """``self[key] = value`` in place (differentiable with respect to both)."""
    k, advanced = shape._norm_key(key, self.shape)
    if isinstance(value, (list, tuple, np.ndarray)):
        from numbagrad._creation import tensor

        value = tensor(value, dtype=self.dtype)

    def fast(d, v):
        d[k] = v
    inplace.check_inplace(self)
    if not inplace._needs_graph(self, (value,)):
        fast(self._data, value._data if isinstance(value, Tensor) else value)
        self._storage[1] += 1
        return
    inplace.commit(self, bind(shape.IndexPut, (self, value), {"key": k, "advanced": advanced}))


Tensor.fill_ = _fill
Tensor.zero_ = _zero
Tensor.copy_ = _copy
Tensor.__setitem__ = _setitem
_tensor._F = _g
