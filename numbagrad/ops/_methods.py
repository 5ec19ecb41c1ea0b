# mypy: disable-error-code="method-assign,assignment,has-type"
# (this module fills Tensor's method table, which ``_tensor_methods.pyi`` declares for type
# checkers: each assignment here is the definition of a method that stub already types; it
# reads ``ops._public.EXPORTS`` while ``numbagrad.ops`` is still being imported)
"""Tensor's method table: its methods, operators and in-place variants, in one place.

Imported once by ``numbagrad.ops`` after every op exists; it also registers the ops in
``_core.extension.OPS``, the namespace the Tensor layer calls up into (NOTE [Extension points]).
"""

from __future__ import annotations

import functools

import numpy as np

from numbagrad import ops as F
from numbagrad._core import extension
from numbagrad._core.grad_mode import is_grad_enabled
from numbagrad._creation import _sizes, empty, full, like_new, ones, tensor, zeros
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend_of
from numbagrad.ops import inplace, shape
from numbagrad.ops._op import bind
from numbagrad.ops._public import EXPORTS
from numbagrad.ops.binary import _add, _sub
from numbagrad.ops.inplace import clone, to

__all__: list = []

# -- Tensor methods and operators -------------------------------------------------------------
# the public ops that are also methods (NOTE [Public ops] in ``ops/_public.py``)
for _e in EXPORTS.values():
    if _e.method:
        setattr(Tensor, _e.name, _e.obj)
Tensor.where = lambda self, condition, other: F.where(condition, self, other)
Tensor.__getitem__ = F.getitem
_IDENTITY_0D = "This function is the identity in these cases."
_CONJ_0D = "Consider using x.conj()."


def _mT(self):  # noqa: N802  (PyTorch's name)
    """Transpose of the last two dims; a 0-d tensor is returned itself (with PyTorch's
    deprecation warning)."""
    if self.ndim < 2:
        return shape.matrix_transpose_0d(self, "Tensor.mT", "tensor.mT", _IDENTITY_0D)
    return F.transpose(self, -2, -1)


def _T(self):  # noqa: N802  (PyTorch's name)
    """All dims reversed; PyTorch warns for tensors that are not 2-D."""
    n = self.ndim
    if n != 2:
        shape.warn_T(n)
    return F.permute(self, tuple(range(n - 1, -1, -1)))


def _H(self):  # noqa: N802  (PyTorch's name)
    """Conjugate transpose of a matrix (the transpose for real tensors)."""
    if self.ndim == 0:
        return shape.matrix_transpose_0d(self, "Tensor.H", "", _CONJ_0D)
    if self.ndim != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got "
            f"{self.ndim}-D tensor."
            + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else "")
        )
    return F.conj(F.transpose(self, 0, 1))


def _mH(self):  # noqa: N802  (PyTorch's name)
    """Conjugate transpose of the last two dims (real tensors: ``mT``)."""
    if self.ndim < 2:
        return shape.matrix_transpose_0d(self, "Tensor.mH", "tensor.mH", _CONJ_0D)
    return F.conj(F.transpose(self, -2, -1))


Tensor.mT = property(_mT)
Tensor.T = property(_T)


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal in place (all dims equal beyond 2-D); ``wrap`` restarts the
    diagonal every ``ncols + 1`` rows of a tall matrix, as PyTorch's."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.ndim > 2 and any(n != shape[0] for n in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    numel = int(np.prod(shape))
    step = sum(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    count = min(shape)
    if wrap and self.ndim == 2 and shape[0] > shape[1] + 1:
        count = -(-numel // step)
    flat = np.zeros(numel, np.bool_)
    flat[np.arange(count) * step] = True
    return self.masked_fill_(tensor(flat.reshape(shape), device=self.device), fill_value)


def _set_real(self, value):
    F.real(self).copy_(value)


def _set_imag(self, value):
    F.imag(self).copy_(value)


# as PyTorch: ``t.real`` and ``t.imag`` are attributes (views of a complex tensor's
# memory, NOTE [Complex autograd] in ops/cplx.py) that can be assigned to
Tensor.real = property(F.real, _set_real, doc="The real part (a view); see numbagrad.real.")
Tensor.imag = property(F.imag, _set_imag, doc="The imaginary part (a view); see numbagrad.imag.")
Tensor.cfloat = lambda self: to(self, np.complex64)
Tensor.cdouble = lambda self: to(self, np.complex128)
Tensor.H = property(_H)
Tensor.mH = property(_mH)
Tensor.fill_diagonal_ = _fill_diagonal_
Tensor.float = lambda self: to(self, np.float32)
Tensor.double = lambda self: to(self, np.float64)
Tensor.half = lambda self: to(self, np.float16)
Tensor.long = lambda self: to(self, np.int64)
Tensor.int = lambda self: to(self, np.int32)
Tensor.bool = lambda self: to(self, np.bool_)
Tensor.type_as = lambda self, other: to(self, other.dtype)
Tensor.view_as = lambda self, other: F.view(self, tuple(other.shape))
Tensor.reshape_as = lambda self, other: F.reshape(self, tuple(other.shape))


def _new(make):
    """``Tensor.new_<make>``: ``make``'s tensor with this tensor's dtype and device unless
    given (PyTorch's ``new_zeros``/``new_ones``/``new_empty``)."""

    def new(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
        size = _sizes(f"new_{make.__name__}", sizes, size)
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        dt = self.dtype if dtype is None else dtype
        return like_new(  # (batched under vmap when self is, as PyTorch's)
            self,
            tuple(size),
            lambda s, base: make(
                *s,
                dtype=dt,
                device=base.device if device is None else device,
                requires_grad=requires_grad,
            ),
        )

    new.__name__ = new.__qualname__ = f"new_{make.__name__}"
    new.__doc__ = (
        f"A {make.__name__} tensor with this tensor's dtype and device by default; the size "
        "is given as ints, one sequence or the keyword ``size=`` (not both)."
    )
    return new


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype and device
    by default."""
    if not isinstance(size, (tuple, list)):  # (Size is a tuple)
        raise TypeError(
            f"new_full(): argument 'size' must be tuple of ints, not {type(size).__name__}"
        )
    dt = self.dtype if dtype is None else dtype
    return like_new(
        self,
        tuple(size),
        lambda s, base: full(
            s,
            fill_value,
            dtype=dt,
            device=base.device if device is None else device,
            requires_grad=requires_grad,
        ),
    )


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new tensor of ``data`` (copied), with this tensor's dtype and device by default."""
    return tensor(
        data,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


Tensor.new_zeros = _new(zeros)
Tensor.new_ones = _new(ones)
Tensor.new_empty = _new(empty)
Tensor.new_full = new_full
Tensor.new_tensor = _new_tensor


def _rsub(self, other):
    return F.sub(other, self)


def _rdiv(self, other):
    if isinstance(other, Tensor):
        return F.div(other, self)
    # ``number / t`` is ``t.reciprocal() * number``, as PyTorch's ``Tensor.__rdiv__``: the
    # same rounding, the same graph (MulBackward0) and so the same second derivatives
    return F.mul(F.reciprocal(self), other)


def _rpow(self, other):
    return F.pow(other, self)


def _rmatmul(self, other):
    return F.matmul(other, self)


def _rfloordiv(self, other):
    return F.floor_divide(other, self)


def _rmod(self, other):
    return F.remainder(other, self)


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return F.bitwise_not(self)


_OPERATORS = {
    "__add__": _add,
    "__radd__": _add,
    "__sub__": _sub,
    "__rsub__": _rsub,
    "__mul__": F.mul,
    "__rmul__": F.mul,
    "__truediv__": F.div,
    "__rtruediv__": _rdiv,
    "__pow__": F.pow,
    "__rpow__": _rpow,
    "__matmul__": F.matmul,
    "__rmatmul__": _rmatmul,
    "__neg__": F.neg,
    "__abs__": F.abs,
    "__pos__": lambda s: s,
    "__floordiv__": F.floor_divide,
    "__rfloordiv__": _rfloordiv,
    "__mod__": F.remainder,
    "__rmod__": _rmod,
    "__eq__": F.eq,
    "__ne__": F.ne,
    "__lt__": F.lt,
    "__le__": F.le,
    "__gt__": F.gt,
    "__ge__": F.ge,
    "__and__": F.bitwise_and,
    "__or__": F.bitwise_or,
    "__xor__": F.bitwise_xor,
    "__invert__": _invert,
    "__rand__": F.bitwise_and,
    "__ror__": F.bitwise_or,
    "__rxor__": F.bitwise_xor,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)
Tensor.__hash__ = lambda self: id(self)


# -- in-place methods ---------------------------------------------------------------------------
def _ufunc_fast(name):
    def fast(data, other):
        try:
            backend_of(data).binary_into(name, data, other)
        except ValueError:
            so = list(other.shape) if isinstance(other, np.ndarray) else []
            raise RuntimeError(
                f"output with shape {list(data.shape)} doesn't match the "
                f"broadcast shape of {list(data.shape)} and {so}"
            ) from None
        except TypeError as e:  # numpy's casting error
            raise RuntimeError(
                f"result type can't be cast to the desired output type {data.dtype}: {e}"
            ) from None

    return fast


def _binary_inplace(fn, ufunc=None):
    """``Tensor.<fn>_``; with ``ufunc`` (a backend ufunc name) writes straight into memory
    when no graph needs recording."""
    fast = _ufunc_fast(ufunc) if ufunc is not None else None

    def method(self, other, **kwargs):
        if kwargs:  # alpha= (add_, sub_): checked and applied by fn, no fast path
            return inplace.inplace(self, fn, other, **kwargs)
        return inplace.inplace(self, fn, other, fast=fast)

    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place :func:`{fn.__name__}` (bumps the version counter)."
    return method


def _unary_inplace(fn):
    def method(self, *args, **kwargs):
        return inplace.inplace(self, fn, *args, **kwargs)

    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place :func:`{fn.__name__}` (bumps the version counter)."
    return method


Tensor.add_ = _binary_inplace(F.add, "add")
Tensor.sub_ = _binary_inplace(F.sub, "subtract")
Tensor.mul_ = _binary_inplace(F.mul, "multiply")
Tensor.div_ = _binary_inplace(F.div)
Tensor.pow_ = _binary_inplace(F.pow)
Tensor.maximum_ = _binary_inplace(F.maximum)
Tensor.minimum_ = _binary_inplace(F.minimum)
Tensor.remainder_ = _binary_inplace(F.remainder)
Tensor.fmod_ = _binary_inplace(F.fmod)
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
for _e in EXPORTS.values():  # ``@public(inplace=True)``: ``t.<name>_(...)``
    if _e.inplace:
        setattr(Tensor, _e.name + "_", _unary_inplace(_e.obj))


def _fill(self, value):
    """Fill with ``value`` in place."""
    if isinstance(value, Tensor) and value._requires_grad:
        return inplace.inplace(
            self, lambda t, val: clone(F.expand(val.to(t.dtype), t.shape)), value
        )
    v = value.item() if isinstance(value, Tensor) else value
    return inplace.inplace(
        self, lambda t: bind(inplace.Fill, (t,), {"value": v}), fast=lambda d: d.fill(v)
    )


def _zero(self):
    """Fill with zeros in place."""
    return _fill(self, 0)


_COPY = {"key": (Ellipsis,), "advanced": False, "copy": True}


def _copy_result(t, src):
    # ``t`` overwritten by ``src``: the old value gets a zero gradient (not ``src``'s history
    # alone: a constant ``src`` must still cut the gradient to the old value), ``src`` the
    # gradient summed to its shape and cast to its dtype (PyTorch's CopyBackwards)
    return bind(shape.IndexPut, (t, src), _COPY)


def _copy(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into this tensor in place."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    traced = src._is_tracer or self._is_tracer  # (a tracer has no array: no device move)
    if not traced and type(src._data) is not type(self._data) and src.device != self.device:
        # across devices, as PyTorch: a (differentiable) move first, so the gradient goes
        # back to ``src``'s device
        src = src.to(self.device)
    dst_shape, src_shape = tuple(self.shape), tuple(src.shape)
    if src_shape != dst_shape:
        for i in range(1, len(src_shape) + 1):
            a = dst_shape[-i] if i <= len(dst_shape) else 1
            if src_shape[-i] not in (1, a):
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor "
                    f"b ({src_shape[-i]}) at non-singleton dimension "
                    f"{len(src_shape) - i}"
                )

    def fast(d, s):
        backend_of(d).copy_into(d, s)

    return inplace.inplace(self, _copy_result, src, fast=fast)


def _setitem(self, key, value):
    """``self[key] = value`` in place (differentiable with respect to both)."""
    k, advanced = shape._norm_key(key, self.shape)
    if isinstance(value, (list, tuple, np.ndarray)):
        value = tensor(value, dtype=self.dtype)
    shape.check_put_dtype(self, k, advanced, value)
    template, index = shape.split_key(k)
    if inplace.traced(self, (value, *index)):
        params = {"key": template, "advanced": advanced}
        inplace.assign_traced(self, lambda x: bind(shape.IndexPut, (x, value, *index), params))
        return
    inplace.check_inplace(self)
    if not inplace._needs_graph(self, (value,)):
        data = self._data
        v = value._data if isinstance(value, Tensor) else value
        if type(v) is np.ndarray and v.dtype != data.dtype:
            v = v.astype(data.dtype)
        shape.put_array(backend_of(data).xp, data, template, [i._data for i in index], advanced, v)
        self._storage[1] += 1
        return
    inplace.commit(
        self, bind(shape.IndexPut, (self, value, *index), {"key": template, "advanced": advanced})
    )


Tensor.fill_ = _fill
Tensor.zero_ = _zero
Tensor.copy_ = _copy
Tensor.__setitem__ = _setitem


# NumPy's keyword names, which PyTorch also accepts on reductions: ``axis`` for ``dim``,
# ``keepdims`` for ``keepdim`` (``x.sum(axis=0, keepdims=True)``); ``numbagrad/__init__.py``
# gives the top-level names the same wrappers
def _numpy_keywords(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for alias, name in (("axis", "dim"), ("keepdims", "keepdim")):
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(
                            f"{fn.__name__}() got both '{name}' and its alias '{alias}'; pass one"
                        )
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    return wrapper


NUMPY_KEYWORDS = {_e.name: _numpy_keywords(_e.obj) for _e in EXPORTS.values() if _e.numpy_keywords}
for _name, _fn in NUMPY_KEYWORDS.items():
    setattr(Tensor, _name, _fn)

Tensor.scatter_add_ = _unary_inplace(F.scatter_add)
Tensor.repeat = shape.repeat  # method-only in PyTorch (no ``torch.repeat``)
Tensor.unfold = shape.unfold  # method-only (``nn.functional.unfold`` is another op)
Tensor.sum_to_size = shape.sum_to_size


# -- the rest of PyTorch's in-place variants --------------------------------------------------
def _polygamma_(self, n):
    """In-place :func:`polygamma` of order ``n`` (``t.polygamma_(n)``, as PyTorch's)."""
    return inplace.inplace(self, lambda t: F.polygamma(n, t))


def _float_power_(self, exponent):
    """In-place :func:`float_power`: ``self`` must be float64 (complex128), the dtype of
    the result, as PyTorch's."""
    want = (
        np.complex128
        if self.dtype.is_complex
        or (isinstance(exponent, Tensor) and exponent.dtype.is_complex)
        or isinstance(exponent, complex)
        else np.float64
    )
    if self.dtype.np != want:
        got = shape._SCALAR_NAMES.get(self.dtype.np.name, self.dtype.np.name)
        res = "Double" if want is np.float64 else "ComplexDouble"
        raise RuntimeError(
            f"the base given to float_power_ has dtype {got} but the operation's result "
            f"requires dtype {res}"
        )
    return inplace.inplace(self, F.float_power, exponent)


def _no_grad_inplace(fn):
    """``Tensor.<fn>_`` for an op whose result has no gradient (comparisons, logical and
    bitwise ops): the result, cast to this tensor's dtype, is copied in, so the old value
    gets a zero gradient, as PyTorch's ``EqBackward0`` gives."""

    def method(self, *args):
        return inplace.inplace(self, lambda t, *a: _copy_result(t, fn(t, *a)), *args)

    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place :func:`{fn.__name__}`, cast to this tensor's dtype."
    return method


for _name in (
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
):
    setattr(Tensor, _name + "_", _no_grad_inplace(getattr(F, _name)))
# (the rest are ``@public(inplace=True)`` on their ops; these are aliases)
Tensor.arctan2 = F.atan2
Tensor.atan2_ = Tensor.arctan2_ = _unary_inplace(F.atan2)
Tensor.multiply_ = Tensor.mul_
Tensor.subtract_ = Tensor.sub_
Tensor.divide_ = Tensor.true_divide_ = Tensor.div_
Tensor.polygamma_ = _polygamma_
Tensor.float_power_ = _float_power_


def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """:func:`numbagrad.allclose` of this tensor and ``other``."""
    return bool(F.all(F.isclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)).item())


def _get_device(self):
    """The CUDA device index of a CUDA tensor; -1 for any other."""
    i = self.device.index  # (None for the CPU and meta devices)
    return -1 if i is None else i


Tensor.allclose = _allclose
Tensor.get_device = _get_device
Tensor.is_cpu = property(
    lambda self: not (self.is_cuda or self.is_meta), doc="Whether the storage is in CPU memory."
)
# layouts and backends numbagrad has no tensors of: the flags are False for every tensor
for _name in (
    "is_sparse",
    "is_sparse_csr",
    "is_quantized",
    "is_mkldnn",
    "is_nested",
    "is_mps",
    "is_xpu",
    "is_xla",
    "is_ipu",
    "is_vulkan",
    "is_mtia",
    "is_maia",
):
    setattr(
        Tensor,
        _name,
        property(
            lambda self: False,
            doc="False: numbagrad has no such tensors (PyTorch's layout/backend flag).",
        ),
    )


# -- in-place metadata changes: ``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_`` ----------
def _metadata_inplace(view, name):
    """``Tensor.<name>``: this tensor becomes ``view(self, ...)``, the same memory seen
    through a new shape and strides, as PyTorch's in-place view ops: the version counter
    is bumped and, with a graph, the tensor's history is the view's node (``TBackward``,
    ``TransposeBackward``, ...) on its old history."""

    def method(self, *args, **kwargs):
        if inplace.traced(self, ()):
            raise NotImplementedError(
                f"{name}() under a transform (grad, vmap, jvp, compile) is not supported: "
                f"use the out-of-place {view.__name__}()"
            )
        if is_grad_enabled() and self._requires_grad and self._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        old = Tensor._make(self._data, self._storage)  # this tensor's value and history
        old._requires_grad, old._grad_fn = self._requires_grad, self._grad_fn
        old._output_nr, old._view_of = self._output_nr, self._view_of
        new = view(old, *args, **kwargs)
        before = (self._grad_fn, self._output_nr)
        self._data = new._data
        self._storage[1] += 1
        if new._grad_fn is not None:
            self._grad_fn, self._output_nr = new._grad_fn, new._output_nr
            self._hist_version = self._storage[1]
            inplace.move_retain_grad(self, *before)
        return self

    method.__name__ = name
    method.__doc__ = f"In place :func:`{view.__name__}`: this tensor takes the new shape."
    return method


Tensor.t_ = _metadata_inplace(F.t, "t_")
Tensor.transpose_ = _metadata_inplace(F.transpose, "transpose_")
Tensor.swapaxes_ = _metadata_inplace(F.transpose, "swapaxes_")
Tensor.swapdims_ = _metadata_inplace(F.transpose, "swapdims_")
Tensor.squeeze_ = _metadata_inplace(F.squeeze, "squeeze_")
Tensor.unsqueeze_ = _metadata_inplace(F.unsqueeze, "unsqueeze_")


# the names the Tensor layer calls up into (NOTE [Extension points])
extension.register_ops({**{_e.name: _e.obj for _e in EXPORTS.values()}, "tensor": tensor})
