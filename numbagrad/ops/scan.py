"""Cumulative ops (scans) along one dimension: the primitives ``Cumsum``, ``Cumprod``,
``Cumargmax``/``Cumargmin`` and ``Logcumsumexp``, and ``cumsum``, ``cumprod``, ``cummax``,
``cummin`` and ``logcumsumexp`` over them. ``Cumprod``'s VJP is PyTorch's
``cumprod_backward`` (exact where the input has zeros). The reductions are in
``ops/reduce.py``.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import is_grad_enabled
from numbagrad._creation import const_ones_like as _ones_like
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import both_ways, conj_all
from numbagrad.ops._util import MinMax as _MinMax
from numbagrad.ops._util import default_float, wrap_dim
from numbagrad.ops.gather_scatter import Gather
from numbagrad.ops.reduce import (
    _is_concrete,
    _pick,
    _reverse_cumsum,
    _scan_batch,
    _torch_name,
    prod,
)

__all__: list = []


def _cumprod_backward(g, x, y, dim):
    """PyTorch's ``cumprod_backward`` (FunctionsManual.cpp) for cotangent ``g``, input ``x``
    and output ``y`` along ``dim``, its data branches as masks (NOTE [Data branches in
    rules])."""
    zero = x == 0
    any_zero = F.any(zero)
    concrete = _is_concrete(x, y, g)
    if concrete and not bool(any_zero):
        return _reverse_cumsum(y * g, dim) / x
    plain = _reverse_cumsum(F.where(any_zero, 0, y) * g, dim) / F.where(any_zero, 1, x)
    if is_grad_enabled():  # a graph of the backward is built: PyTorch's O(n^2) formula
        if concrete:
            return _cumprod_backward_loop(g, x, dim)
        return F.where(any_zero, _cumprod_backward_loop(g, F.where(any_zero, x, 1), dim), plain)
    return F.where(any_zero, _cumprod_backward_zeros(g, x, y, zero, dim), plain)


def _cumprod_backward_zeros(g, x, y, zero, dim):
    """``cumprod_backward`` with zeros and no graph built, O(n): before the first zero of a
    slice, ``reverse_cumsum(y * g) / x``; at the first zero ``z``,
    ``y[z - 1] * sum(g[z:z2] * cumprod(x[z + 1:z2]))`` (``z2`` the second zero); 0 after."""
    count = F.cumsum(zero, dim)
    before = count == 0
    ones = _ones_like(F.narrow(y, dim, 0, 1))
    g_before = _reverse_cumsum(F.where(before, y * g, 0), dim) / x  # (x != 0 where kept)
    first = zero & (count == 1)
    between = (count == 1) & ~first
    run = F.sum(
        F.cumprod(F.where(between, x, 1), dim) * F.where(count == 1, g, 0), dim, keepdim=True
    )
    y_prev = F.cat([ones, F.narrow(y, dim, 0, y.shape[dim] - 1)], dim)
    g_first = run * F.sum(F.where(first, y_prev, 0), dim, keepdim=True)
    return F.where(before, g_before, F.where(first, g_first, 0))


def _cumprod_backward_loop(g, x, dim):
    """``cumprod_backward`` when a graph of it is built (PyTorch's O(n^2) loop, whose
    derivative is the second derivative of cumprod at zeros too):
    ``gx[k] = sum_{j >= k} g[j] * prod(x[:k]) * cumprod(x[k + 1:])[j - k - 1]``."""
    n = x.shape[dim]
    cols = []
    for k in range(n):
        if k == 0:
            ones = _ones_like(F.narrow(x, dim, 0, 1))
            omitted = F.cat([ones, F.cumprod(F.narrow(x, dim, 1, n - 1), dim)], dim)
        else:
            before = prod(F.narrow(x, dim, 0, k), dim, keepdim=True)
            if k == n - 1:
                omitted = before
            else:
                after = F.cumprod(F.narrow(x, dim, k + 1, n - k - 1), dim)
                omitted = F.cat([before, F.expand(before, after.shape) * after], dim)
        cols.append(F.sum(F.narrow(g, dim, k, n - k) * omitted, dim, keepdim=True))
    return F.cat(cols, dim)


class Cumprod(Primitive):
    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_scan_batch)

    @staticmethod
    def impl(be, x, dim):
        return _scan_impl(be.xp.cumprod, x, dim)

    @staticmethod
    def vjp(ctx, g, dim):
        shape = ctx.input_shape(0)
        if math.prod(shape) <= 1 or shape[dim] == 1:
            return g  # (a 0-d tensor: its cumprod is the tensor)
        x, y = conj_all(ctx.saved())  # (complex: the real rule on conjugates)
        return _cumprod_backward(g, x, y, dim)

    @staticmethod
    def jvp(primals, tangents, out, dim):
        # dy[i] = sum_{k <= i} t[k] * prod_{j <= i, j != k} x[j], by the number of zeros in
        # x[:i + 1] (masks, no branch), right near the point as well as at it (as the vjp):
        # - none: y[i] * c[i], c = cumsum(t / x);
        # - one, at z: p1[i] * (t[z] + x[z] * c[i]), p1 the cumprod with x[z] set to 1;
        # - two, at z and z2: p2[i] * (t[z] * x[z2] + t[z2] * x[z]), p2 likewise;
        # - more: 0, with zero first derivatives.
        (x,), (t,) = primals, tangents
        if x.ndim == 0:
            return t
        nonzero = x != 0
        count = F.cumsum(~nonzero, dim)
        first = ~nonzero & (count == 1)
        second = ~nonzero & (count == 2)
        c = F.cumsum(F.where(nonzero, t, 0) / F.where(nonzero, x, 1), dim)
        t1, x1 = _pick(t, first, dim), _pick(x, first, dim)
        t2, x2 = _pick(t, second, dim), _pick(x, second, dim)
        p1 = F.cumprod(F.where(first, 1, x), dim)
        p2 = F.cumprod(F.where(first | second, 1, x), dim)
        return (
            F.where(count == 0, out * c, 0)
            + F.where(count == 1, p1 * (t1 + x1 * c), 0)
            + F.where(count == 2, p2 * (t1 * x2 + t2 * x1), 0)
        )


def _scan_impl(fn, x, dim):
    """``cumsum``/``cumprod`` as PyTorch's CPU kernels: integers and bools in int64, float32
    accumulated in float64 (its ``acc_type``; a partial product may pass float32's range),
    and a 0-d input stays 0-d."""
    kind = x.dtype.kind
    if kind in "biu":
        return fn(x, axis=dim, dtype=np.int64).reshape(x.shape)
    if x.dtype == np.float32:
        return fn(x, axis=dim, dtype=np.float64).astype(np.float32).reshape(x.shape)
    if x.dtype == np.float16:  # in float32 (NOTE [Half precision]); beyond 65504 is inf
        with np.errstate(over="ignore"):
            return fn(x, axis=dim, dtype=np.float32).astype(np.float16).reshape(x.shape)
    return fn(x, axis=dim).reshape(x.shape)


def _cumsum_rule(m, ctx, saved, g, dim):
    if g.ndim == 0:  # the cumsum of a 0-d tensor is the tensor
        return g
    return m.flip(m.cumsum(m.flip(g, (dim,)), dim), (dim,))


class Cumsum(Primitive):
    linearity = "linear"
    vjp, fused_vjp = both_ways(_cumsum_rule)
    batch = classmethod(_scan_batch)

    @staticmethod
    def impl(be, x, dim):
        out = _scan_impl(be.xp.cumsum, x, dim)
        if out.dtype.kind == "f":
            # PyTorch accumulates from +0: a leading -0.0 sums to +0.0 (NumPy keeps -0.0)
            out += 0.0
        return out


class Cumargmax(Primitive):
    """The index of the running maximum along ``dim`` (int64, no gradient): the latest
    index on ties (PyTorch's ``>=``), and once a NaN is met, the latest NaN. ``cummax``
    gathers its values with it, so the gradient goes to the chosen positions."""

    differentiable = False
    batch = classmethod(_scan_batch)
    fn = "maximum"

    @classmethod
    def impl(cls, be, x, dim):
        xp = be.xp
        if x.ndim == 0:
            return xp.zeros((), np.int64)
        if x.dtype.kind == "b":
            x = x.view(np.uint8)
        # the running extreme, then where each element equals it (a new extreme or a tie:
        # PyTorch updates on ties) or is NaN; the latest such position is the index
        run = getattr(xp, cls.fn).accumulate(x, axis=dim)
        hit = x == run
        if x.dtype.kind == "f":
            hit |= xp.isnan(x)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        pos = xp.arange(x.shape[dim], dtype=np.int64).reshape(shape)
        return xp.maximum.accumulate(xp.where(hit, pos, 0), axis=dim)


class Cumargmin(Cumargmax):
    fn = "minimum"


def _logcumsumexp_rule(g, x, y, dim):
    """PyTorch's ``logcumsumexp_backward``: ``sum_{i >= k} g[i] exp(x[k] - y[i])`` in log
    space, split by the sign of ``g`` (so nothing overflows), written with
    ``logcumsumexp`` itself and so differentiable again."""
    lowest = float(np.finfo(g.dtype.np).min)
    log_abs = F.log(F.abs(g))
    pos = F.where(g > 0, log_abs, lowest)
    neg = F.where(g < 0, log_abs, lowest)

    def reverse(v):
        return F.flip(logcumsumexp(F.flip(v, (dim,)), dim), (dim,))

    return F.exp(reverse(pos - y) + x) - F.exp(reverse(neg - y) + x)


class Logcumsumexp(Primitive):
    """``log(cumsum(exp(x)))`` along ``dim``, as a running ``logaddexp`` (exact and stable:
    no common shift that could underflow the early prefixes)."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_scan_batch)

    @staticmethod
    def impl(be, x, dim):
        if x.dtype.kind != "f":
            x = x.astype(default_float())
        if x.ndim == 0:
            return x.copy()
        return be.xp.logaddexp.accumulate(x, axis=dim)

    @staticmethod
    def vjp(ctx, g, dim):
        if g.ndim == 0 or g.numel() == 0:
            return g
        x, y = ctx.saved()
        return _logcumsumexp_rule(g, x, y, dim)

    @staticmethod
    def jvp(primals, tangents, out, dim):
        # sum_{k <= i} t[k] exp(x[k] - y[i]), with t split by sign and summed in log space
        # (stable where PyTorch's max-shifted rule underflows to 0 on early prefixes)
        (x,), (t,) = primals, tangents
        if x.ndim == 0 or x.numel() == 0:
            return t
        lowest = float(np.finfo(t.dtype.np).min)
        log_abs = F.log(F.abs(t))
        pos = logcumsumexp(F.where(t > 0, log_abs, lowest) + x, dim)
        neg = logcumsumexp(F.where(t < 0, log_abs, lowest) + x, dim)
        return F.exp(pos - out) - F.exp(neg - out)


def _scan(prim, name, input, dim, dtype):
    d = wrap_dim(dim, input.ndim)
    if dtype is None:
        return bind(prim, (input,), {"dim": d})
    dtype = D.as_dtype(dtype)
    if dtype is D.bool and input.ndim and input.numel():
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
    out = bind(prim, (input.to(dtype),), {"dim": d})
    return out if out.dtype is dtype else out.to(dtype)  # integers scan in int64


@public(numpy_keywords=True, inplace=True)
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim`` (integers and bools in int64 unless ``dtype``)."""
    return _scan(Cumsum, "cumsum", input, dim, dtype)


@public(numpy_keywords=True, inplace=True)
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``; its gradient is exact where inputs are zero.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor([1.0, 2.0, 0.0, 4.0]).cumprod(0)
    tensor([1., 2., 0., 0.])
    """
    return _scan(Cumprod, "cumprod", input, dim, dtype)


def _cum_extreme(prim, input, dim):
    if input.numel() == 0:
        d = 0  # PyTorch returns an empty result without looking at ``dim``
    elif input.ndim == 0 and dim not in (0, -1):
        raise IndexError(
            f"{'cummax' if prim is Cumargmax else 'cummin'}(): Expected reduction dim -1 "
            f"or 0 for scalar but got {dim}"
        )
    else:
        d = wrap_dim(dim, input.ndim)
    idx = bind(prim, (input,), {"dim": d})
    if input.ndim == 0:
        return _MinMax((F.clone(input), idx))
    return _MinMax((bind(Gather, (input, idx), {"dim": d}), idx))


@public
def cummax(input, dim):
    """Running maximum along ``dim`` and its indices.

    Ties take the latest index and a NaN, once met, stays the maximum (its index the
    latest NaN's), as in PyTorch; the gradient goes to the chosen positions.

    Parameters
    ----------
    input : Tensor
    dim : int

    Returns
    -------
    (values, indices)
        ``values`` like ``input``; ``indices`` int64.

    Examples
    --------
    >>> import numbagrad
    >>> v, i = numbagrad.cummax(numbagrad.tensor([1.0, 3.0, 2.0, 3.0]), 0)
    >>> v, i
    (tensor([1., 3., 3., 3.]), tensor([0, 1, 1, 3]))
    """
    return _cum_extreme(Cumargmax, input, dim)


@public
def cummin(input, dim):
    """Running minimum along ``dim`` and its indices (see :func:`cummax`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.cummin(numbagrad.tensor([3, 1, 2, 1]), 0).indices
    tensor([0, 1, 1, 3])
    """
    return _cum_extreme(Cumargmin, input, dim)


@public
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` computed stably (floating tensors only, as in
    PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.logcumsumexp(numbagrad.tensor([0.0, 0.0, 0.0]), 0)
    tensor([0.0000, 0.6931, 1.0986])
    """
    if not input.is_floating_point():
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_torch_name(input.dtype)}'"
        )
    return bind(Logcumsumexp, (input,), {"dim": wrap_dim(dim, input.ndim)})
