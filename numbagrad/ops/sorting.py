"""Sorting and data-dependent selection: the non-differentiable primitives ``Argsort``
and ``Nonzero`` (whose output shape depends on the data, so it refuses ``vmap``), and
``argsort``, ``sort``, ``topk`` and ``nonzero`` over them (the values of ``sort`` and
``topk`` are gathered with ``take_along_dim``: they are differentiable).
"""

from __future__ import annotations

import numpy as np

from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import front
from numbagrad.ops._util import MinMax as _MinMax
from numbagrad.ops._util import wrap_dim
from numbagrad.ops.gather_scatter import take_along_dim
from numbagrad.ops.shape import narrow, reshape

__all__: list = []


class Argsort(Primitive):
    differentiable = False

    @staticmethod
    def impl(be, x, dim, descending, stable):
        """Always a stable sort (PyTorch's CPU sort orders ties by index with or without
        ``stable=True``; NaN sorts as the largest value)."""
        xp = be.xp
        if x.ndim == 0:
            return xp.zeros((), np.int64)
        if descending:
            # stable descending order: sort the reversed axis, map back, reverse
            n = x.shape[dim]
            idx = xp.argsort(xp.flip(x, dim), axis=dim, kind="stable")
            return xp.flip(n - 1 - idx, dim).astype(np.int64)
        return xp.argsort(x, axis=dim, kind="stable").astype(np.int64)

    @staticmethod
    def batch(args, dims, dim, descending, stable):
        """The batch dimension first, ``dim`` shifted (0-d examples as ``(B, 1)``)."""
        x = front(args[0], dims[0])
        params = {"dim": dim + 1, "descending": descending, "stable": stable}
        if x.ndim == 1:
            size = x.shape[0]
            return reshape(bind(Argsort, (reshape(x, (size, 1)),), params), (size,)), 0
        return bind(Argsort, (x,), params), 0


@public
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim``: a stable sort (ties keep their order, as
    PyTorch's CPU sort does whether or not ``stable=True``)."""
    d = wrap_dim(dim, input.ndim)
    return bind(
        Argsort, (input,), {"dim": d, "descending": bool(descending), "stable": bool(stable)}
    )


@public
def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim`` (stable: see ``argsort``); gradients flow
    to the values. A 0-d input gives 0-d results."""
    idx = argsort(input, dim, descending, stable)
    if input.ndim == 0:
        return _MinMax((input.clone(), idx))
    return _MinMax((take_along_dim(input, idx, dim), idx))


@public
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices (ties in
    index order; PyTorch leaves their order unspecified). A 0-d input gives 0-d results
    for ``k`` 0 or 1, as in PyTorch."""
    if input.dtype.np.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range: k={k} for dimension of size {n}")
    if input.ndim == 0:
        return _MinMax((input.clone(), argsort(input)))
    idx = narrow(argsort(input, d, descending=largest), d, 0, k)
    return _MinMax((take_along_dim(input, idx, d), idx))


class Nonzero(Primitive):
    """The ``(n, ndim)`` int64 indices of the non-zero elements (a data-dependent shape: no
    gradient, and no batching rule can exist)."""

    differentiable = False

    @staticmethod
    def impl(be, x):
        xp = be.xp
        if x.ndim == 0:  # one row of no coordinates when the scalar is non-zero
            return xp.zeros((int(x != 0), 0), np.int64)
        return xp.stack(xp.nonzero(x), axis=1).astype(np.int64)

    @staticmethod
    def batch(args, dims):
        raise RuntimeError(
            "vmap: We do not yet support calling nonzero inside of vmap: its output shape "
            "depends on each example's data (dynamic output shape). Call it outside vmap, or "
            "use a mask with numbagrad.where instead."
        )


@public
def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements: an ``(n, ndim)`` int64 tensor, or a tuple of 1-D."""
    if as_tuple:
        if input.ndim == 0:  # as PyTorch: the scalar's indices as if it were 1-D
            return (nonzero(input.reshape(1))[:, 0],)
        idx = bind(Nonzero, (input,), NO_PARAMS)
        return tuple(idx[:, d] for d in range(input.ndim))
    return bind(Nonzero, (input,), NO_PARAMS)
