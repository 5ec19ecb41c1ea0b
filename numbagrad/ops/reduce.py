"""Reductions (with ``dim`` as int, tuple or None, and ``keepdim``) and the ops built on them.

Primitives: ``sum``, ``prod``, ``amax``/``amin``, ``norm`` (p = 2), ``softmax``,
``log_softmax``, ``cumsum``, plus the non-differentiable ``argmax``/``argmin``/``all``/
``any``. ``mean``, ``var``, ``std``, ``logsumexp``, ``max``/``min`` and the other norms are
composites and get every rule for free.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad._tensor import Tensor
from numbagrad.kernels import KERNEL_MIN
from numbagrad.ops._op import Op, bind
from numbagrad.ops._util import default_float, norm_dims, wrap_dim


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient ``g`` back to ``shape`` (differentiable)."""
    from numbagrad.ops.shape import expand, reshape

    if not keepdim and dims:
        kshape = tuple(1 if i in dims else s for i, s in enumerate(shape))
        g = reshape(g, kshape)
    return expand(g, shape)


def _expand_back_array(g, shape, dims, keepdim):
    if not keepdim and dims:
        g = g.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    if g.size == 1 and math.prod(shape) < KERNEL_MIN:
        out = np.empty(shape, g.dtype)  # small: filling is cheaper than broadcast_to
        out.fill(g.reshape(()))
        return out
    return np.broadcast_to(g, shape)  # large: a zero-copy view


class Sum(Op):
    @staticmethod
    def forward(x, dims, keepdim, dtype):
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64  # PyTorch sums integers and bools in int64
        return x.sum(axis=dims, keepdims=keepdim, dtype=dtype)

    def _post_record(self, args, outs):
        self.shape = args[0]._data.shape

    def vjp(self, g):
        return _expand_back(g, self.shape, self.dims, self.keepdim)

    def fused_vjp(self, g):
        return _expand_back_array(g, self.shape, self.dims, self.keepdim)


class Prod(Op):
    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def forward(x, dims, keepdim):
        dt = np.int64 if x.dtype.kind in "biu" else None
        return np.prod(x, axis=dims, keepdims=keepdim, dtype=dt)

    def vjp(self, g):
        x, y = self.saved_tensors()
        ge = _expand_back(g, x.shape, self.dims, self.keepdim)
        if not bool((x == 0).any()):
            return ge * _expand_back(y, x.shape, self.dims, self.keepdim) / x
        # with zeros, d prod / d x_i = product of the other elements: exclusive products
        from numbagrad.ops.shape import movedim, reshape

        dims = self.dims
        rest = [i for i in range(x.ndim) if i not in dims]
        xt = movedim(x, list(dims), list(range(len(rest), x.ndim)))
        lead = xt.shape[: len(rest)]
        flat = reshape(xt, (*lead, -1))
        others = _exclusive_prod(flat)
        others = reshape(others, xt.shape)
        others = movedim(others, list(range(len(rest), x.ndim)), list(dims))
        return ge * others


def _exclusive_prod(x):
    """Product of all other elements along the last axis (differentiable, zero-safe)."""
    from numbagrad.ops.shape import stack

    n = x.shape[-1]
    cols = [x[..., i] for i in range(n)]
    outs = []
    for i in range(n):
        p = None
        for j in range(n):
            if j != i:
                p = cols[j] if p is None else p * cols[j]
        outs.append(p if p is not None else cols[i] * 0 + 1)
    return stack(outs, -1)


class Amax(Op):
    saves_inputs = (0,)
    saves_output = True
    fn = staticmethod(np.amax)

    @classmethod
    def forward(cls, x, dims, keepdim):
        if x.size == 0:
            raise IndexError(f"{cls.__name__.lower()}(): Expected reduction dim to be specified "
                             "for input.numel() == 0. Specify the reduction dim.")
        return cls.fn(x, axis=dims, keepdims=keepdim)

    def vjp(self, g):
        x, y = self.saved_tensors()
        # ties share the gradient equally (PyTorch's amax/amin rule)
        mask = (x == _expand_back(y, x.shape, self.dims, self.keepdim)).to(g.dtype)
        count = mask.sum(dim=self.dims, keepdim=True)
        return _expand_back(g, x.shape, self.dims, self.keepdim) * mask / count


class Amin(Amax):
    fn = staticmethod(np.amin)


class ArgReduce(Op):
    differentiable = False
    fn = staticmethod(np.argmax)

    @classmethod
    def forward(cls, x, dim, keepdim):
        if x.size == 0:
            raise IndexError(f"{cls.__name__.lower()}(): Expected reduction dim to be "
                             "specified for input.numel() == 0.")
        if dim is None:
            r = cls.fn(x.reshape(-1))
            return np.asarray(r, np.int64).reshape((1,) * x.ndim if keepdim else ())
        return cls.fn(x, axis=dim, keepdims=keepdim).astype(np.int64, copy=False)


class Argmax(ArgReduce):
    fn = staticmethod(np.argmax)


class Argmin(ArgReduce):
    fn = staticmethod(np.argmin)


class All(Op):
    differentiable = False
    fn = staticmethod(np.all)

    @classmethod
    def forward(cls, x, dims, keepdim):
        return cls.fn(x, axis=dims, keepdims=keepdim)


class Any(All):
    fn = staticmethod(np.any)


class Norm2(Op):
    """The 2-norm; its gradient is ``x / norm``, taken as 0 where the norm is 0."""

    saves_inputs = (0,)
    saves_output = True

    @staticmethod
    def forward(x, dims, keepdim):
        return np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))

    def vjp(self, g):
        x, y = self.saved_tensors()
        ye = _expand_back(y, x.shape, self.dims, self.keepdim)
        ge = _expand_back(g, x.shape, self.dims, self.keepdim)
        from numbagrad.ops.binary import where

        return where(ye == 0, ge * 0, ge * x / where(ye == 0, ye + 1, ye))


class Softmax(Op):
    saves_output = True

    @staticmethod
    def forward(x, dim):
        if x.dtype.kind != "f":
            x = x.astype(default_float())
        e = np.exp(x - np.amax(x, axis=dim, keepdims=True))
        return e / np.sum(e, axis=dim, keepdims=True)

    def vjp(self, g):
        (y,) = self.saved_tensors()
        return y * (g - (g * y).sum(dim=self.dim, keepdim=True))

    def fused_vjp(self, g):
        (y,) = self.saved_arrays()
        gy = g * y
        return gy - y * np.sum(gy, axis=self.dim, keepdims=True)


class LogSoftmax(Op):
    saves_output = True

    @staticmethod
    def forward(x, dim):
        if x.dtype.kind != "f":
            x = x.astype(default_float())
        s = x - np.amax(x, axis=dim, keepdims=True)
        return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))

    def vjp(self, g):
        (y,) = self.saved_tensors()
        from numbagrad.ops.unary import exp

        return g - exp(y) * g.sum(dim=self.dim, keepdim=True)

    def fused_vjp(self, g):
        (y,) = self.saved_arrays()
        return g - np.exp(y) * np.sum(g, axis=self.dim, keepdims=True)


class Cumsum(Op):
    @staticmethod
    def forward(x, dim):
        dt = np.int64 if x.dtype.kind in "biu" else None
        return np.cumsum(x, axis=dim, dtype=dt)

    def vjp(self, g):
        from numbagrad.ops.shape import flip

        return flip(cumsum(flip(g, (self.dim,)), self.dim), (self.dim,))

    def fused_vjp(self, g):
        return np.flip(np.cumsum(np.flip(g, self.dim), axis=self.dim), self.dim).copy()


# -- public functions ------------------------------------------------------------------------
def _dims(input, dim):
    return None if dim is None else norm_dims(dim, input.ndim)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (int, tuple or None for all).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(1)
    tensor([3., 7.])
    """
    dims = None if dim is None or dim == () else norm_dims(dim, input.ndim)  # () = all (torch)
    dt = None if dtype is None else D.as_dtype(dtype).np
    return bind(Sum, (input,), {"dims": dims, "keepdim": keepdim, "dtype": dt})


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; requires a floating dtype (or ``dtype=``), as in PyTorch."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {input.dtype}"
        )
    dims = norm_dims(None if dim == () else dim, input.ndim)
    n = 1
    for d in dims:
        n *= input.shape[d]
    return sum(input, dims, keepdim) / n


def prod(input, dim=None, keepdim=False):
    """Product over ``dim`` (an int or None); zeros are handled in the gradient."""
    return bind(Prod, (input,), {"dims": norm_dims(dim, input.ndim), "keepdim": keepdim})


def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (default all); ties share the gradient equally."""
    dims = None if dim == () or dim is None else norm_dims(dim, input.ndim)
    return bind(Amax, (input,), {"dims": dims, "keepdim": keepdim})


def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (default all); ties share the gradient equally."""
    dims = None if dim == () or dim is None else norm_dims(dim, input.ndim)
    return bind(Amin, (input,), {"dims": dims, "keepdim": keepdim})


def argmax(input, dim=None, keepdim=False):
    """Index of the maximum (over the flattened tensor when ``dim`` is None)."""
    d = None if dim is None else wrap_dim(dim, input.ndim)
    return bind(Argmax, (input,), {"dim": d, "keepdim": keepdim})


def argmin(input, dim=None, keepdim=False):
    """Index of the minimum (over the flattened tensor when ``dim`` is None)."""
    d = None if dim is None else wrap_dim(dim, input.ndim)
    return bind(Argmin, (input,), {"dim": d, "keepdim": keepdim})


class _MinMax(tuple):
    """``(values, indices)`` as returned by ``max``/``min``/``sort``/``topk`` with a dim."""

    __slots__ = ()

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _minmax(input, dim, keepdim, arg, full, other):
    if isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        return other(input, dim)
    if dim is None:
        return full(input)
    from numbagrad.ops.shape import take_along_dim

    d = wrap_dim(dim, input.ndim)
    idx = arg(input, d, keepdim=True)
    values = take_along_dim(input, idx, d)
    if not keepdim:
        values = values.squeeze(d)
        idx = idx.squeeze(d)
    return _MinMax((values, idx))


def max(input, dim=None, keepdim=False):
    """Maximum of all elements, or ``(values, indices)`` along ``dim``.

    With a tensor second argument it is :func:`maximum`. Along a dim the gradient goes to
    the returned index; over all elements ties share it (as in PyTorch).
    """
    from numbagrad.ops.binary import maximum

    return _minmax(input, dim, keepdim, argmax, amax, maximum)


def min(input, dim=None, keepdim=False):
    """Minimum of all elements, or ``(values, indices)`` along ``dim``."""
    from numbagrad.ops.binary import minimum

    return _minmax(input, dim, keepdim, argmin, amin, minimum)


def all(input, dim=None, keepdim=False):
    """True where all elements (along ``dim``) are non-zero."""
    return bind(All, (input,), {"dims": _dims(input, dim), "keepdim": keepdim})


def any(input, dim=None, keepdim=False):
    """True where any element (along ``dim``) is non-zero."""
    return bind(Any, (input,), {"dims": _dims(input, dim), "keepdim": keepdim})


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably (the max is subtracted first)."""
    from numbagrad.ops.unary import log

    dims = norm_dims(dim, input.ndim)
    m = amax(input, dims, keepdim=True).detach()
    m = m.masked_fill(~m.isfinite(), 0.0) if input.numel() else m
    out = log(sum((input - m).exp(), dims, keepdim=True)) + m
    return out if keepdim else out.reshape(
        tuple(s for i, s in enumerate(input.shape) if i not in dims))


def norm(input, p="fro", dim=None, keepdim=False):
    """Vector p-norm over ``dim`` (``'fro'``/2, 1, ``inf``, ``-inf``, or any float p)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be floating point, got {input.dtype}")
    dims = _dims(input, dim)
    if p in ("fro", 2, 2.0):
        return bind(Norm2, (input,), {"dims": dims, "keepdim": keepdim})
    a = input.abs()
    if p == float("inf"):
        return amax(a, dims if dims is not None else (), keepdim)
    if p == float("-inf"):
        return amin(a, dims if dims is not None else (), keepdim)
    if p == 1:
        return sum(a, dims, keepdim)
    if p == 0:
        return sum((a != 0).to(input.dtype), dims, keepdim)
    return sum(a ** p, dims, keepdim) ** (1.0 / p)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False``
    means 0)."""
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = norm_dims(dim, input.ndim)
    n = 1
    for d in dims:
        n *= input.shape[d]
    mu = mean(input, dims, keepdim=True)
    diff = input - mu
    return sum(diff * diff, dims, keepdim) / np.maximum(n - correction, 0)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, ``sqrt(var(...))``; its gradient is 0 where the deviation is 0
    (as PyTorch), not 0/0."""
    from numbagrad.ops.unary import SafeSqrt

    return bind(SafeSqrt, (var(input, dim, unbiased, keepdim, correction=correction),), {})


def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return bind(Softmax, (input,), {"dim": wrap_dim(dim, input.ndim)})


def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return bind(LogSoftmax, (input,), {"dim": wrap_dim(dim, input.ndim)})


def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``."""
    if dtype is not None:
        input = input.to(dtype)
    return bind(Cumsum, (input,), {"dim": wrap_dim(dim, input.ndim)})


ALL = ("sum mean prod amax amin argmax argmin max min all any logsumexp norm var std "
       "softmax log_softmax cumsum").split()
