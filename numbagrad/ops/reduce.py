"""Reductions (with ``dim`` as int, tuple or None, and ``keepdim``) and the ops built on them.

Primitives: ``sum``, ``prod``, ``amax``/``amin``, ``norm`` (p = 2), ``softmax``,
``log_softmax``, ``cumsum``, ``cumprod``, plus the non-differentiable ``argmax``/``argmin``/
``all``/``any``. ``mean``, ``var``, ``std``, ``logsumexp``, ``max``/``min`` and the other
norms are composites and get every rule for free.

Batching rules leave the batch dimension where it is and renumber the reduced dims around
it (``_reduce_batch``, ``_scan_batch``): a ``dims`` of None ("all") becomes every dim but
the batch one, so a reduced ``dims`` param may be ``()`` (reduce nothing), which the rules
below keep distinct from None (``_sum`` binds ``Sum`` directly; ``sum()`` reads ``()`` as
all, as PyTorch does).
"""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import both_ways, front
from numbagrad.ops._util import MinMax as _MinMax
from numbagrad.ops._util import default_float, norm_dims, wrap_dim
from numbagrad.ops.shape import Gather
from numbagrad.ops.unary import SafeSqrt


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient ``g`` back to ``shape`` (differentiable)."""
    if not keepdim and dims:
        g = F.reshape(g, tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return F.expand(g, shape)


def _sum(x, dims, keepdim):
    """``Sum`` over exactly ``dims`` (None = all, ``()`` = none), unlike ``sum()``."""
    return bind(Sum, (x,), {"dims": dims, "keepdim": keepdim, "dtype": None})


def _batch_dims(dims, bd, ndim, keepdim):
    """Per-example reduced ``dims`` (None = all of ``ndim``) as dims of the batched value,
    whose batch dimension is ``bd``, and the output's batch dimension."""
    dims = range(ndim) if dims is None else dims
    new = tuple(d + (d >= bd) for d in dims)
    return new, bd if keepdim else bd - len([d for d in dims if d < bd])


def _reduce_batch(prim, args, bdims, dims, keepdim, **params):
    """The batching rule of a ``dims``/``keepdim`` reduction: one call, dims renumbered."""
    x = args[0]
    new, out_dim = _batch_dims(dims, bdims[0], x.ndim - 1, keepdim)
    return bind(prim, (x,), {"dims": new, "keepdim": keepdim, **params}), out_dim


def _scan_batch(prim, args, bdims, dim):
    """The batching rule of an op along one ``dim`` that keeps the shape (scans, softmax)."""
    bd = bdims[0]
    return bind(prim, args, {"dim": dim + (dim >= bd)}), bd


class Sum(Primitive):
    linearity = "linear"
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim, dtype):
        return be.sum(x, dims, keepdim, dtype)

    @staticmethod
    def vjp(ctx, g, dims, keepdim, dtype):
        return _expand_back(g, ctx.input_shape(0), dims, keepdim)

    @staticmethod
    def fused_vjp(ctx, g, dims, keepdim, dtype):
        return ctx.be.expand_back(g, ctx.input_shape(0), dims, keepdim)


class Prod(Primitive):
    saves_inputs = (0,)
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim):
        dt = np.int64 if x.dtype.kind in "biu" else None
        return be.xp.prod(x, axis=dims, keepdims=keepdim, dtype=dt)

    @staticmethod
    def vjp(ctx, g, dims, keepdim):
        # d prod / d x_i is the product of the other elements: exclusive products from the
        # left and from the right, O(n) and exact with zeros (no division, no branch)
        (x,) = ctx.saved()
        return _expand_back(g, ctx.input_shape(0), dims, keepdim) * _others_prod(x, dims)

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim):
        # sum_i t_i * prod_{j != i} x_j, with the same division-free products as the vjp
        return _sum(tangents[0] * _others_prod(primals[0], dims), dims, keepdim)


def _exclusive_cumprod(x):
    """``out[..., i] = prod(x[..., :i])`` along the last axis (``out[..., 0] = 1``)."""
    ones = x[..., :1] * 0 + 1
    return F.cumprod(F.cat([ones, x[..., :-1]], -1), -1)


def _others_prod(x, dims):
    """For every element, the product of the other elements of its reduced slice."""
    rest = [i for i in range(x.ndim) if i not in dims]
    moved = F.movedim(x, list(dims), list(range(len(rest), x.ndim)))
    flat = F.reshape(moved, (*moved.shape[: len(rest)], -1))
    left = _exclusive_cumprod(flat)
    right = F.flip(_exclusive_cumprod(F.flip(flat, (-1,))), (-1,))
    out = F.reshape(left * right, moved.shape)
    return F.movedim(out, list(range(len(rest), x.ndim)), list(dims))


def _reverse_cumsum(v, dim):
    return F.flip(F.cumsum(F.flip(v, (dim,)), dim), (dim,))


def _pick(v, mask, dim):
    """The entry of ``v`` where ``mask`` holds (at most once per slice; else 0), keepdim."""
    return F.sum(F.where(mask, v, 0), dim, keepdim=True)


class Cumprod(Primitive):
    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_scan_batch)

    @staticmethod
    def impl(be, x, dim):
        dt = np.int64 if x.dtype.kind in "biu" else None
        return be.xp.cumprod(x, axis=dim, dtype=dt)

    @staticmethod
    def vjp(ctx, g, dim):
        # gx[k] = sum_{i >= k} g[i] * prod_{j <= i, j != k} x[j], computed in O(n) with masks
        # (no branch on data, so batchable), and written so that it is right as a function of
        # x near the point, not only at it (its derivative is the second derivative):
        # - where x[k] != 0: reverse_cumsum(g * y)[k] / x[k], an identity in x;
        # - at the first zero z of a slice: reverse_cumsum(g * y1)[z], y1 the cumprod with
        #   x[z] set to 1;
        # - at the second zero z2: x[z] * reverse_cumsum(g * y2)[z2], y2 the cumprod with
        #   x[z] and x[z2] set to 1 (zero in value, but its derivative in x[z] is not);
        # - at later zeros: 0, with zero first derivatives too (two factors vanish).
        x, y = ctx.saved()
        nonzero = x != 0
        count = F.cumsum(~nonzero, dim)
        first = ~nonzero & (count == 1)
        second = ~nonzero & (count == 2)
        g_nonzero = _reverse_cumsum(g * y, dim) / F.where(nonzero, x, 1)
        g_first = _reverse_cumsum(g * F.cumprod(F.where(first, 1, x), dim), dim)
        x_first = F.sum(F.where(first, x, 0), dim, keepdim=True)
        y2 = F.cumprod(F.where(first | second, 1, x), dim)
        g_second = x_first * _reverse_cumsum(g * y2, dim)
        return (F.where(nonzero, g_nonzero, 0) + F.where(first, g_first, 0)
                + F.where(second, g_second, 0))

    @staticmethod
    def jvp(primals, tangents, out, dim):
        # dy[i] = sum_{k <= i} t[k] * prod_{j <= i, j != k} x[j], by the number of zeros in
        # x[:i + 1] (masks, no branch), right near the point as well as at it (as the vjp):
        # - none: y[i] * c[i], c = cumsum(t / x);
        # - one, at z: p1[i] * (t[z] + x[z] * c[i]), p1 the cumprod with x[z] set to 1;
        # - two, at z and z2: p2[i] * (t[z] * x[z2] + t[z2] * x[z]), p2 likewise;
        # - more: 0, with zero first derivatives.
        (x,), (t,) = primals, tangents
        nonzero = x != 0
        count = F.cumsum(~nonzero, dim)
        first = ~nonzero & (count == 1)
        second = ~nonzero & (count == 2)
        c = F.cumsum(F.where(nonzero, t, 0) / F.where(nonzero, x, 1), dim)
        t1, x1 = _pick(t, first, dim), _pick(x, first, dim)
        t2, x2 = _pick(t, second, dim), _pick(x, second, dim)
        p1 = F.cumprod(F.where(first, 1, x), dim)
        p2 = F.cumprod(F.where(first | second, 1, x), dim)
        return (F.where(count == 0, out * c, 0) + F.where(count == 1, p1 * (t1 + x1 * c), 0)
                + F.where(count == 2, p2 * (t1 * x2 + t2 * x1), 0))


class Amax(Primitive):
    saves_inputs = (0,)
    saves_output = True
    fn = "amax"
    batch = classmethod(_reduce_batch)

    @classmethod
    def impl(cls, be, x, dims, keepdim):
        if x.size == 0:
            raise IndexError(f"{cls.fn}(): Expected reduction dim to be specified "
                             "for input.numel() == 0. Specify the reduction dim.")
        return getattr(be.xp, cls.fn)(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def vjp(ctx, g, dims, keepdim):
        x, y = ctx.saved()
        # ties share the gradient equally (PyTorch's amax/amin rule)
        mask = (x == _expand_back(y, x.shape, dims, keepdim)).to(g.dtype)
        count = _sum(mask, dims, True)
        return _expand_back(g, x.shape, dims, keepdim) * mask / count

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim):
        # the mean of the tangents at the ties (the transpose of the vjp's equal shares)
        (x,), (t,) = primals, tangents
        mask = (x == _expand_back(out, x.shape, dims, keepdim)).to(t.dtype)
        return _sum(mask * t, dims, keepdim) / _sum(mask, dims, keepdim)


class Amin(Amax):
    fn = "amin"


class ArgReduce(Primitive, register=False):
    differentiable = False
    fn = "argmax"

    @classmethod
    def impl(cls, be, x, dim, keepdim):
        if x.size == 0:
            raise IndexError(f"{cls.fn}(): Expected reduction dim to be "
                             "specified for input.numel() == 0.")
        fn = getattr(be.xp, cls.fn)
        if dim is None:
            r = fn(x.reshape(-1))
            return be.xp.asarray(r, np.int64).reshape((1,) * x.ndim if keepdim else ())
        return fn(x, axis=dim, keepdims=keepdim).astype(np.int64, copy=False)

    @classmethod
    def batch(cls, args, bdims, dim, keepdim):
        x, bd = args[0], bdims[0]
        if dim is not None:
            new, out_dim = _batch_dims((dim,), bd, x.ndim - 1, keepdim)
            return bind(cls, (x,), {"dim": new[0], "keepdim": keepdim}), out_dim
        x = front(x, bd)  # over each flattened example
        out = bind(cls, (F.reshape(x, (x.shape[0], -1)),), {"dim": 1, "keepdim": False})
        return (F.reshape(out, (x.shape[0],) + (1,) * (x.ndim - 1)) if keepdim else out), 0


class Argmax(ArgReduce):
    fn = "argmax"


class Argmin(ArgReduce):
    fn = "argmin"


class All(Primitive):
    differentiable = False
    fn = "all"
    batch = classmethod(_reduce_batch)

    @classmethod
    def impl(cls, be, x, dims, keepdim):
        return getattr(be.xp, cls.fn)(x, axis=dims, keepdims=keepdim)


class Any(All):
    fn = "any"


class Norm2(Primitive):
    """The 2-norm; its gradient is ``x / norm``, taken as 0 where the norm is 0."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim):
        return be.xp.sqrt(be.xp.sum(x * x, axis=dims, keepdims=keepdim))

    @staticmethod
    def vjp(ctx, g, dims, keepdim):
        x, y = ctx.saved()
        ye = _expand_back(y, x.shape, dims, keepdim)
        ge = _expand_back(g, x.shape, dims, keepdim)
        zero = ye == 0
        return F.where(zero, ge * 0, ge * x / F.where(zero, ye + 1, ye))

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim):
        s = _sum(primals[0] * tangents[0], dims, keepdim)
        zero = out == 0
        return F.where(zero, s * 0, s / F.where(zero, out + 1, out))


def _softmax_rule(m, ctx, saved, g, dim):
    (y,) = saved
    gy = g * y
    return gy - y * m.sum(gy, dim, keepdim=True)


class Softmax(Primitive):
    saves_output = True
    vjp, fused_vjp = both_ways(_softmax_rule)
    batch = classmethod(_scan_batch)

    @staticmethod
    def jvp(primals, tangents, out, dim):
        t = tangents[0]
        return out * (t - F.sum(out * t, dim, keepdim=True))

    @staticmethod
    def impl(be, x, dim):
        xp = be.xp
        if x.dtype.kind != "f":
            x = x.astype(default_float())
        e = xp.exp(x - xp.amax(x, axis=dim, keepdims=True))
        return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_rule(m, ctx, saved, g, dim):
    (y,) = saved
    return g - m.exp(y) * m.sum(g, dim, keepdim=True)


class LogSoftmax(Primitive):
    saves_output = True
    vjp, fused_vjp = both_ways(_log_softmax_rule)
    batch = classmethod(_scan_batch)

    @staticmethod
    def jvp(primals, tangents, out, dim):
        t = tangents[0]
        return t - F.sum(F.exp(out) * t, dim, keepdim=True)

    @staticmethod
    def impl(be, x, dim):
        xp = be.xp
        if x.dtype.kind != "f":
            x = x.astype(default_float())
        s = x - xp.amax(x, axis=dim, keepdims=True)
        return s - xp.log(xp.sum(xp.exp(s), axis=dim, keepdims=True))


def _cumsum_rule(m, ctx, saved, g, dim):
    return m.flip(m.cumsum(m.flip(g, (dim,)), dim), (dim,))


class Cumsum(Primitive):
    linearity = "linear"
    vjp, fused_vjp = both_ways(_cumsum_rule)
    batch = classmethod(_scan_batch)

    @staticmethod
    def impl(be, x, dim):
        dt = np.int64 if x.dtype.kind in "biu" else None
        return be.xp.cumsum(x, axis=dim, dtype=dt)


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


def _minmax(input, dim, keepdim, arg, full, other):
    if isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        return other(input, dim)
    if dim is None:
        return full(input)
    d = wrap_dim(dim, input.ndim)
    idx = arg(input, d, keepdim=True)
    values = bind(Gather, (input, idx), {"dim": d})  # take_along_dim; idx is valid
    if not keepdim:
        values = values.squeeze(d)
        idx = idx.squeeze(d)
    return _MinMax((values, idx))


def max(input, dim=None, keepdim=False):
    """Maximum of all elements, or ``(values, indices)`` along ``dim``.

    With a tensor second argument it is :func:`maximum`. Along a dim the gradient goes to
    the returned index; over all elements ties share it (as in PyTorch).
    """
    return _minmax(input, dim, keepdim, argmax, amax, F.maximum)


def min(input, dim=None, keepdim=False):
    """Minimum of all elements, or ``(values, indices)`` along ``dim``."""
    return _minmax(input, dim, keepdim, argmin, amin, F.minimum)


def all(input, dim=None, keepdim=False):
    """True where all elements (along ``dim``) are non-zero."""
    return bind(All, (input,), {"dims": _dims(input, dim), "keepdim": keepdim})


def any(input, dim=None, keepdim=False):
    """True where any element (along ``dim``) is non-zero."""
    return bind(Any, (input,), {"dims": _dims(input, dim), "keepdim": keepdim})


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably (the max is subtracted first)."""
    dims = norm_dims(dim, input.ndim)
    m = amax(input, dims, keepdim=True).detach()
    m = m.masked_fill(~m.isfinite(), 0.0) if input.numel() else m
    out = F.log(sum((input - m).exp(), dims, keepdim=True)) + m
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
    return sum(diff * diff, dims, keepdim) / (n - correction if n > correction else 0)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, ``sqrt(var(...))``; its gradient is 0 where the deviation is 0
    (as PyTorch), not 0/0."""
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


def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``; its gradient is exact where inputs are zero.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor([1.0, 2.0, 0.0, 4.0]).cumprod(0)
    tensor([1., 2., 0., 0.])
    """
    if dtype is not None:
        input = input.to(dtype)
    return bind(Cumprod, (input,), {"dim": wrap_dim(dim, input.ndim)})


ALL = ("sum mean prod amax amin argmax argmin max min all any logsumexp norm var std "
       "softmax log_softmax cumsum cumprod").split()

__all__ = ["ALL", *ALL]
