"""Gathering and scattering along a dimension: the primitives ``Gather``, ``ScatterAdd``
and ``ScatterReduce`` and the ops composed of them and of the indexing primitives of
``ops/shape.py`` (``gather``, ``take_along_dim``, ``index_select``, ``take``,
``masked_select``, ``masked_fill``, and the scatter family ``index_add``, ``index_copy``,
``index_fill``, ``scatter``, ``scatter_reduce``, ``masked_scatter``, ``put``). Every
index is validated here, before a kernel sees it.
"""

from __future__ import annotations

import warnings

import numpy as np

from numbagrad import ops as F
from numbagrad._creation import arange, full, ones, zeros
from numbagrad._dtype import bool as _BOOL
from numbagrad._tensor import Tensor
from numbagrad.ops._op import PRIMITIVES, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._util import as_tensor_arg, wrap_dim
from numbagrad.ops.shape import (
    Index,
    IndexPut,
    Zeros,
    _batch_size,
    _check_index,
    _Slot,
    _with_batch,
    expand,
    getitem,
    index_put,
    is_expandable_to,
    reshape,
)

__all__: list = []


class Gather(Primitive):
    """``gather(x, index, dim)``: the index tensor is a data operand."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, x, index, dim):
        if x.ndim == 0:  # a 0-d index (checked: 0) picks the one element
            return x.copy()
        window = _gather_window(x.ndim, dim, index.shape)
        return be.xp.take_along_axis(x[window], index, axis=dim)

    @staticmethod
    def batch(args, dims, dim):
        """Both operands batched in front (an unbatched one broadcast), ``dim`` shifted."""
        size = _batch_size(args, dims)
        x, index = (_with_batch(a, d, 0, size) for a, d in zip(args, dims))
        if x.ndim == 1:  # 0-d examples
            out = gather(reshape(x, (size, 1)), 1, reshape(index, (size, 1)))
            return reshape(out, (size,)), 0
        return gather(x, dim + 1, index), 0

    @staticmethod
    def vjp(ctx, g, dim):
        (index,) = ctx.saved()
        shape, dtype = ctx.input_shape(0), ctx.input_dtype(0)
        z = bind(Zeros, (), {"shape": shape, "dtype": dtype, "device": g.device.type})
        return bind(ScatterAdd, (z, index, g), {"dim": dim}), None


def _gather_window(ndim, dim, index_shape):
    """The part of a tensor that an index of ``index_shape`` addresses along ``dim``."""
    return tuple(slice(None) if d == dim else slice(0, index_shape[d]) for d in range(ndim))


def _check_gather(name, x, dim, index, src=None):
    """PyTorch's ``gather``/``scatter`` shape checks (a non-empty ``index``): the same rank as
    ``x`` (a 0-d tensor counting as 1-d), no larger than ``x`` off ``dim`` (and than ``src``
    everywhere); then the values' range."""
    xs, js = tuple(x.shape) or (1,), tuple(index.shape) or (1,)
    if len(xs) != len(js):
        raise RuntimeError(
            f"{name}(): Index tensor must have the same number of dimensions as "
            f"input tensor ({index.ndim} vs {x.ndim})"
        )
    ss = None if src is None else (tuple(src.shape) or (1,))
    if ss is not None and len(ss) != len(js):
        raise RuntimeError(
            f"{name}(): Index tensor must have the same number of dimensions as "
            f"src tensor ({index.ndim} vs {src.ndim})"
        )
    for d in range(len(xs)):
        if (d != dim and js[d] > xs[d]) or (ss is not None and js[d] > ss[d]):
            extra = "" if src is None else f" and to be smaller size than src {list(src.shape)}"
            raise RuntimeError(
                f"{name}(): Size does not match at dimension {d} expected index "
                f"{list(index.shape)} to be smaller than self {list(x.shape)} "
                f"apart from dimension {dim}{extra}"
            )
    return _check_index(name, index, xs[dim])


def _as_1d(t):
    return reshape(t, (1,)) if t.ndim == 0 else t


@public
def gather(input, dim, index):
    """``out[i][j] = input[i][index[i][j]]`` along ``dim`` (indices validated).

    As PyTorch: the index may be smaller than ``input`` off ``dim``; a 0-d tensor counts as
    1-d; an empty index gives an empty result shaped like it (no other check)."""
    index = as_tensor_arg(index, "index")
    d = wrap_dim(dim, input.ndim)
    try:
        index = _check_gather("gather", input, d, index)
    except RuntimeError:
        if index.numel():
            raise
        # PyTorch checks nothing for an empty index
        return reshape(getitem(reshape(input, (-1,)), slice(0, 0)), tuple(index.shape))
    if input.ndim != index.ndim:  # one of them 0-d, the other 1-d
        out = bind(Gather, (_as_1d(input), _as_1d(index)), {"dim": 0})
        return reshape(out, tuple(index.shape))
    return bind(Gather, (input, index), {"dim": d})


class ScatterAdd(Primitive):
    """``scatter_add(x, index, src, dim)``: the index tensor is a data operand."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, x, index, src, dim):
        xp = be.xp
        if x.ndim == 0:  # a 0-d index (checked: 0) adds the one element
            return (x + src).astype(x.dtype)
        out = x.copy()
        src = src[tuple(slice(0, n) for n in index.shape)]  # src may be larger than index
        idx = list(xp.indices(index.shape, sparse=True))
        idx[dim] = index
        if src.dtype != out.dtype:
            src = src.astype(out.dtype)
        xp.add.at(out, tuple(idx), src)
        return out

    @staticmethod
    def vjp(ctx, g, dim):
        gsrc = None
        if ctx.needs_input_grad(2):
            (index,) = ctx.saved()
            gsrc = bind(Gather, (g, index), {"dim": dim})
            src_shape = ctx.input_shape(2)
            if tuple(gsrc.shape) != src_shape:  # src may be larger than index
                pad = bind(
                    Zeros,
                    (),
                    {"shape": src_shape, "dtype": ctx.input_dtype(2), "device": g.device.type},
                )
                window = tuple(slice(0, n) for n in index.shape)
                gsrc = index_put(pad, window, gsrc)
        return g, None, gsrc

    @staticmethod
    def batch(args, dims, dim):
        """All operands batched in front (an unbatched one broadcast), ``dim`` shifted."""
        size = _batch_size(args, dims)
        x, index, src = (_with_batch(a, d, 0, size) for a, d in zip(args, dims))
        if x.ndim == 1:  # 0-d examples
            x, index, src = (reshape(a, (size, 1)) for a in (x, index, src))
            return reshape(scatter_add(x, 1, index, src), (size,)), 0
        return scatter_add(x, dim + 1, index, src), 0


@public
def scatter_add(input, dim, index, src):
    """Out of place: ``input`` with ``src`` added at ``index`` along ``dim``.

    As PyTorch: ``src`` has ``input``'s dtype; the index may be smaller than ``input`` off
    ``dim`` and than ``src`` everywhere; a 0-d tensor counts as 1-d; an empty index adds
    nothing."""
    index = as_tensor_arg(index, "index")
    src = as_tensor_arg(src, "src")
    if src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, input.ndim)
    try:
        index = _check_gather("scatter_add", input, d, index, src)
    except RuntimeError:
        if index.numel():
            raise
        return F.clone(input)  # PyTorch checks nothing for an empty index
    if not input.ndim == index.ndim == src.ndim:  # 0-d ones among 1-d ones
        out = bind(ScatterAdd, (_as_1d(input), _as_1d(index), _as_1d(src)), {"dim": 0})
        return reshape(out, tuple(input.shape))
    return bind(ScatterAdd, (input, index, src), {"dim": d})


@public
def take_along_dim(input, indices, dim=None):
    """Pick values along ``dim`` at ``indices`` (int64, broadcast against ``input`` off
    ``dim``); with ``dim`` None, from the flattened ``input``."""
    idx = as_tensor_arg(indices, "indices")
    if idx.dtype.np != np.int64:
        name = {
            "int32": "Int",
            "int16": "Short",
            "int8": "Char",
            "uint8": "Byte",
            "bool": "Bool",
        }.get(idx.dtype.np.name, str(idx.dtype.np))
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {name}"
        )
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(idx, (-1,)))
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    if idx.ndim != input.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same "
            f"number of dimensions, but got {input.ndim} dimensions for input, "
            f"and {idx.ndim} dimensions for indices"
        )
    xo = tuple(s for i, s in enumerate(input.shape) if i != d)
    io = tuple(s for i, s in enumerate(idx.shape) if i != d)
    try:
        shp = list(np.broadcast_shapes(xo, io))
    except ValueError:
        k = next(
            i
            for i in range(1, min(len(xo), len(io)) + 1)
            if xo[-i] != io[-i] and 1 not in (xo[-i], io[-i])
        )
        raise RuntimeError(
            f"The size of tensor a ({xo[-k]}) must match the size of tensor b "
            f"({io[-k]}) at non-singleton dimension {len(xo) - k}"
        ) from None
    xshape = (*shp[:d], input.shape[d], *shp[d:])
    ishape = (*shp[:d], idx.shape[d], *shp[d:])
    # PyTorch wraps negative indices along dim (``indices % size``); one below -size, or
    # past the end, raises here where PyTorch wraps it too (known_deviations.py)
    idx = _check_index("take_along_dim", idx, input.shape[d], wrap=True)
    x = expand(input, xshape) if xshape != tuple(input.shape) else input
    idx = expand(idx, ishape) if ishape != tuple(idx.shape) else idx
    return bind(Gather, (x, idx), {"dim": d})


@public
def index_select(input, dim, index):
    """Select entries of ``input`` along ``dim`` at the 0-d or 1-D int ``index`` (of a 0-d
    ``input``, its one entry: a 0-d result)."""
    index = as_tensor_arg(index, "index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)"
        )
    index = _check_index("index_select", index, input.shape[d] if input.ndim else 1)
    key = (slice(None),) * d + (_Slot(0),)
    out = bind(Index, (_as_1d(input), reshape(index, (-1,))), {"key": key, "advanced": True})
    return reshape(out, ()) if input.ndim == 0 else out


@public
def take(input, index):
    """``input`` read as a 1-D tensor at the entries of the int ``index`` (negative entries
    count from the end); the result has ``index``'s shape.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.take(numbagrad.tensor([[4.0, 3.0], [5.0, 6.0]]), numbagrad.tensor([0, -1]))
    tensor([4., 6.])
    """
    index = as_tensor_arg(index, "index")
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype}")
    n = input.numel()
    if not index._is_tracer:
        arr = index._data
        bad = (arr < -n) | (arr >= n)
        if arr.size and bad.any():
            raise IndexError(
                f"out of range: tried to access index {arr[bad].reshape(-1)[0]} on a tensor of "
                f"{n} elements."
            )
    flat = F.where(index < 0, index + n, index)
    return reshape(index_select(reshape(input, (-1,)), 0, reshape(flat, (-1,))), index.shape)


@public
def masked_select(input, mask):
    """The entries of ``input`` where the bool ``mask`` (broadcast with it) is True, as a
    1-D tensor (its length depends on the values: no ``vmap``, as in PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[1.0, -2.0], [3.0, -4.0]])
    >>> numbagrad.masked_select(x, x > 0)
    tensor([1., 3.])
    """
    mask = as_tensor_arg(mask, "mask")
    if mask.dtype.np.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    input, mask = F.broadcast_tensors(as_tensor_arg(input, "input"), mask)
    return input[mask]


_C_NAMES = {
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "float32": "float",
    "float64": "double",
}
_C_TYPES = {
    "int64": "int64_t",
    "int32": "int",
    "int16": "int16_t",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "bool": "bool",
}


@public(inplace=True)
def masked_fill(input, mask, value):
    """``input`` with ``value`` where the bool ``mask`` is true (broadcast together).

    ``value`` (a number or a 0-d tensor) is cast to ``input``'s dtype, as PyTorch does: an
    int64 tensor filled with 0.5 stays int64 (0 there). A 0-d float tensor ``value`` gets
    the gradient summed over the filled positions."""
    if not isinstance(mask, Tensor):
        mask = as_tensor_arg(mask, "mask")
    if mask.dtype.np.kind != "b":
        name = mask.dtype.np.name
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_C_NAMES.get(name, name)}"
        )
    dt = input.dtype.np
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but "
                f"got tensor with {value.ndim} dimension(s)."
            )
        if value.dtype.np != dt:
            value = value.to(input.dtype)
    else:
        if isinstance(value, np.generic):
            value = value.item()
        if dt.kind in "iu" and isinstance(value, float) and not np.isfinite(value):
            raise RuntimeError(
                f"value cannot be converted to type {_C_TYPES.get(dt.name)} without overflow"
            )
        value = np.array(value).astype(dt).item()
    node = "MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0"
    return bind(PRIMITIVES["Where"], (mask, value, input), {"node": node})


# -- index_add / index_copy / index_fill / scatter / scatter_reduce / masked_scatter / put ---
# Composites of IndexPut, ScatterAdd and Index (so they get every rule: gradients as
# PyTorch's derivatives.yaml, JVP, vmap); every index is validated here, before any kernel.
_TYPE_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "int64": "Long",
    "int32": "Int",
    "bool": "Bool",
    "float16": "Half",
}


def _tname(t):
    return _TYPE_NAMES.get(t.dtype.np.name, t.dtype.np.name)


def _long_index(name, index, msg=None):
    index = as_tensor_arg(index, "index")
    if index.dtype.np != np.int64:
        raise (
            msg
            or (
                lambda: RuntimeError(
                    f"{name}(): Expected a long tensor for index, but got {_tname(index)}"
                )
            )
        )()
    return index


def _vector_index(name, index):
    if index.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {_tname(index)} and size: "
            f"{list(index.shape)}"
        )
    return reshape(index, (-1,))


def _wrap_negative(index, size):
    """``index`` with entries in ``[-size, 0)`` moved up by ``size`` (after a range check
    over ``[-size, size)``)."""
    return F.where(F.lt(index, 0), F.add(index, size), index)


def _check_signed(name, index, size, msg):
    """Bounds ``[-size, size)`` (PyTorch's ``index_fill``/``put``), checked on the values."""
    if not index._is_tracer and index.numel():
        a = index._data
        bad = (a < -size) | (a >= size)
        if bad.any():
            raise IndexError(msg(int(a.reshape(-1)[np.argmax(bad.reshape(-1))])))
    return index


def _along(d):
    return (slice(None),) * d + (_Slot(0),)


def _source_along(name, input, d, index, source, err=RuntimeError):
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"{name}(): self ({_tname(input)}) and source ({_tname(source)}) "
            "must have the same scalar type"
        )
    xs, ss = tuple(input.shape) or (1,), tuple(source.shape) or (1,)
    if len(xs) != len(ss) or any(a != b for k, (a, b) in enumerate(zip(xs, ss)) if k != d):
        raise RuntimeError(
            f"source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(input.shape)} "
            f"source.shape = {list(source.shape)}"
        )
    if ss[d] != index.numel():
        raise err(
            f"{name}(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim): ({ss[d]}), for dim: {d}"
        )


@public(inplace=True)
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source[..., i, ...]`` added at ``input[..., index[i], ...]``
    along ``dim`` (out of place; repeated indices add up).

    Differentiable in ``input`` (the gradient passes through) and ``source``
    (``alpha * grad.index_select(dim, index)``).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.zeros(3, 2)
    >>> x.index_add(0, numbagrad.tensor([0, 2, 0]), numbagrad.ones(3, 2))
    tensor([[2., 2.],
            [0., 0.],
            [1., 1.]])
    """
    index = as_tensor_arg(index, "index")
    source = as_tensor_arg(source, "source")
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {_tname(index)}"
        )
    if index.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {_tname(index)} and size: "
            f"{list(index.shape)}"
        )
    d = wrap_dim(dim, input.ndim)
    _source_along("index_add_", input, d, index, source)
    index = _check_index(
        "index_add_", reshape(index, (-1,)).to(np.int64), input.shape[d] if input.ndim else 1
    )
    if alpha != 1:
        # alpha in input's dtype, as PyTorch's alpha.to<scalar_t>() (2.5 is 2 for int64)
        if input.dtype is _BOOL:
            alpha = bool(alpha)
        elif not input.dtype.is_floating_point:
            alpha = int(alpha)
        source = F.mul(source, alpha)
    if input.ndim == 0:
        return reshape(index_add(reshape(input, (1,)), 0, index, reshape(source, (1,))), ())
    shape = [1] * input.ndim
    shape[d] = index.numel()
    src = source if source.ndim else reshape(source, (1,))
    idx = expand(reshape(index, tuple(shape)), tuple(src.shape))
    return bind(ScatterAdd, (input, idx, src), {"dim": d})


@public(inplace=True)
def index_copy(input, dim, index, source):
    """``input`` with ``source[..., i, ...]`` written at ``input[..., index[i], ...]`` along
    ``dim`` (out of place; ``index`` int64). Gradients: ``input`` gets ``grad`` with zeros at
    the overwritten slices, ``source`` gets ``grad.index_select(dim, index)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.zeros(3).index_copy(0, numbagrad.tensor([2, 0]), numbagrad.tensor([5., 6.]))
    tensor([6., 0., 5.])
    """
    index = _long_index("index_copy_", index)
    source = as_tensor_arg(source, "source")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    d = wrap_dim(dim, input.ndim)
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, "
            f"but got (self) {_tname(input)} and (source) {_tname(source)}"
        )
    ss = tuple(source.shape) or (1,)
    xs = tuple(input.shape) or (1,)
    if len(ss) != len(xs) or xs[:d] + xs[d + 1 :] != ss[:d] + ss[d + 1 :]:
        raise IndexError(
            f"index_copy_(): Source/destination tensor must have same slice "
            f"shapes. Destination slice shape: {list(input.shape)} at dimension "
            f"{d} and source slice shape: {list(source.shape)} at dimension {d}."
        )
    if ss[d] != index.numel():
        raise IndexError(
            f"index_copy_(): Number of indices ({index.numel()}) should be equal "
            f"to source.size(dim) ({ss[d]})"
        )
    index = _check_index("index_copy_", reshape(index, (-1,)), input.shape[d] if input.ndim else 1)
    if input.ndim == 0:
        return reshape(index_copy(reshape(input, (1,)), 0, index, reshape(source, (1,))), ())
    return bind(IndexPut, (input, source, index), {"key": _along(d), "advanced": True})


@public(inplace=True)
def index_fill(input, dim, index, value):
    """``input`` with ``value`` (a number or a 0-d tensor) in the slices ``index`` along
    ``dim`` (int64; negative entries count from the end). A 0-d float tensor ``value`` gets
    the gradient summed over the filled slices.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.zeros(2, 3).index_fill(1, numbagrad.tensor([0, -1]), 7.0)
    tensor([[7., 0., 7.],
            [7., 0., 7.]])
    """
    index = _long_index(
        "index_fill_", index, lambda: IndexError("index_fill_(): Expected dtype int64 for index.")
    )
    if index.ndim > 1:
        raise IndexError(
            f"index_fill_(): Index is supposed to be a vector, but got dim: {index.ndim}"
        )
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    index = reshape(index, (-1,))
    _check_signed(
        "index_fill_",
        index,
        size,
        lambda i: f"index {i} is out of bounds for dimension {d} with size {size}",
    )
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but "
                f"got tensor with {value.ndim} dimension(s)."
            )
        value = value.to(input.dtype)
    elif isinstance(value, (int, float, bool, np.number)):
        value = np.array(value).astype(input.dtype.np).item()
    else:
        raise TypeError(
            f"index_fill(): value must be a number or a 0-d tensor, got {type(value).__name__}"
        )
    index = _wrap_negative(index, size)
    if input.ndim == 0:
        return reshape(index_fill(reshape(input, (1,)), 0, index, value), ())
    return bind(IndexPut, (input, value, index), {"key": _along(d), "advanced": True})


def _scatter_key(index, d):
    """The advanced key writing ``src[i][j]..`` to ``out[..index[i][j]..]`` along ``d``:
    one int64 operand per dimension (``arange``s broadcast against ``index``)."""
    ops = []
    for k, n in enumerate(index.shape):
        if k == d:
            ops.append(index.to(np.int64))
        else:
            shape = [1] * index.ndim
            shape[k] = n
            ops.append(reshape(arange(n), tuple(shape)))
    return tuple(_Slot(k) for k in range(index.ndim)), ops


def _scatter_prep(name, input, dim, index, src):
    index = as_tensor_arg(index, "index")
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    d = wrap_dim(dim, input.ndim)
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:
        return None, d
    index = _check_gather(name, input, d, index, src if isinstance(src, Tensor) else None)
    return index, d


def _scatter_reduce_op(input, d, index, src, reduce, include_self):
    """``ScatterReduce`` on a checked, non-empty index: 0-d operands as 1-d, ``src`` cut to
    the index's shape."""
    if input.ndim == 0 or index.ndim == 0 or src.ndim == 0:
        out = _scatter_reduce_op(_as_1d(input), 0, _as_1d(index), _as_1d(src), reduce, include_self)
        return reshape(out, tuple(input.shape))
    if tuple(src.shape) != tuple(index.shape):
        src = getitem(src, tuple(slice(0, n) for n in index.shape))
    return bind(
        ScatterReduce,
        (input, index, src),
        {"dim": d, "reduce": reduce, "include_self": bool(include_self)},
    )


@public(inplace=True)
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src[i][j]`` (a tensor, or one number) written at
    ``out[index[i][j]][j]`` (for ``dim=0``; likewise for other dims), out of place.

    ``reduce='add'`` adds instead of writing (``scatter_add``); ``'multiply'`` multiplies
    (PyTorch deprecates it for a tensor ``src``, with a warning, and gives it no
    derivative: backward raises; use :func:`scatter_reduce`). Gradients, as PyTorch's:
    ``input`` gets ``grad`` with zeros where written, ``src`` gets ``grad.gather(dim,
    index)``. Where an index repeats, which value lands is unspecified (as PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.zeros(2, 3).scatter(1, numbagrad.tensor([[2], [0]]), 5.0)
    tensor([[0., 0., 5.],
            [5., 0., 0.]])
    """
    if src is None:
        if value is None:
            raise TypeError(
                "scatter() missing the value to write: pass src (a tensor) or value (a number)"
            )
        src = value
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    is_tensor = isinstance(src, Tensor)
    index, d = _scatter_prep("scatter", input, dim, index, src if is_tensor else None)
    if index is None:
        return F.clone(input)  # PyTorch checks nothing for an empty index
    if reduce is not None:
        if is_tensor:
            if reduce == "multiply":
                warnings.warn(
                    "The reduce argument of torch.scatter with Tensor src is "
                    "deprecated and will be removed in a future PyTorch release. "
                    "Use torch.scatter_reduce instead for more reduction options.",
                    UserWarning,
                    stacklevel=2,
                )
        else:
            src = full(tuple(index.shape), src, dtype=input.dtype, device=input.device)
        if reduce == "add":
            return scatter_add(input, d, index, src)
        return _scatter_reduce_op(input, d, index, src, "multiply", True)
    if input.ndim == 0 or index.ndim == 0:
        x1 = _as_1d(input)
        s1 = _as_1d(src) if is_tensor else src
        return reshape(scatter(x1, 0, _as_1d(index), s1), tuple(input.shape))
    key, ops = _scatter_key(index, d)
    if is_tensor:
        window = tuple(slice(0, n) for n in index.shape)
        if tuple(src.shape) != tuple(index.shape):
            src = getitem(src, window)
    else:
        src = np.array(src).astype(input.dtype.np).item()
    return bind(IndexPut, (input, src, *ops), {"key": key, "advanced": True})


def _reduce_identity(dtype, reduce):
    """The value ``reduce`` starts from where ``include_self=False`` drops ``input``."""
    if reduce in ("prod", "multiply"):
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


def _scatter_reduce_partials(
    x, index, src, out, g, x_shape, need_x, need_src, dim, reduce, include_self
):
    """``ScatterReduce``'s gradients for cotangent ``g`` (PyTorch's
    ``scatter_reduce_backward``); with ``g`` of ones they are the partial derivatives its JVP
    uses."""
    if reduce == "multiply":
        raise RuntimeError("derivative for aten::scatter is not implemented")
    params = {"dim": dim, "reduce": reduce, "include_self": include_self}
    gx = gs = None
    if reduce == "prod":
        if need_x:
            masked_x = F.where(x == 0, 1, x)
            masked_out = bind(ScatterReduce, (masked_x, index, src), params)
            gx = g * masked_out / masked_x
        if need_src:
            src_zero = src == 0
            zero = zeros(x_shape, dtype=x.dtype, device=x.device)
            per_group = scatter_add(zero, dim, index, src_zero.to(x.dtype))
            n_zeros = gather(per_group, dim, index)
            single = src_zero & (n_zeros == 1)
            # (every zero masked: in a group of one zero that is the lone zero's mask)
            masked_out = bind(ScatterReduce, (x, index, F.where(src_zero, 1, src)), params)
            others = gather(g * masked_out, dim, index)
            gs = F.where(
                single,
                others,
                gather(g * out, dim, index) / F.where(src_zero, 1, src),
            )
            # A zero of a group of two: its gradient is the other zero times the rest, 0,
            # but its derivative in the other zero is the rest (PyTorch's double backward
            # raises there). ``others * (z - src)``, z the group's sum of zeros, has those
            # derivatives; ``gs - (e.detach() - e)`` adds them and keeps the value (and a zero's
            # sign) as it is.
            z = gather(scatter_add(zero, dim, index, F.where(src_zero, src, 0)), dim, index)
            e = F.where(src_zero & (n_zeros == 2), others * (z - src), 0)
            gs = gs - (e.detach() - e)
    else:  # amax / amin
        value = gather(out, dim, index)
        x_is = (x == out).to(x.dtype)
        src_is = (src == value).to(x.dtype)
        share = g / scatter_add(x_is, dim, index, src_is)
        if need_x:
            gx = x_is * share
        if need_src:
            gs = src_is * gather(share, dim, index)
    if gx is not None and not include_self:
        gx = scatter(gx, dim, index, 0)
    return gx, None, gs


class ScatterReduce(Primitive):
    """``scatter_reduce(x, index, src, dim)`` for ``reduce`` in ``'prod'``, ``'amax'``,
    ``'amin'`` (and ``'multiply'``: ``scatter(reduce='multiply')``, a product that, as in
    PyTorch, has no derivative). ``index`` and ``src`` come checked, shaped alike and at
    least 1-d; the index is a data operand. Gradients as PyTorch's
    ``scatter_reduce_backward``: amax/amin split ``grad`` evenly among every element equal
    to the result (``input`` included when ``include_self``); prod divides the result by the
    element, except that a lone zero of a group gets the product of the others (two zeros
    or more: 0). The JVP applies the same partial derivatives to the tangents."""

    data_operands = (1,)
    saves_inputs = (0, 1, 2)
    saves_output = True

    @classmethod
    def node_name(cls, params) -> str:
        return "NotImplemented" if params["reduce"] == "multiply" else cls.grad_fn

    @staticmethod
    def impl(be, x, index, src, dim, reduce, include_self):
        xp = be.xp
        out = x.copy()
        idx = list(xp.indices(index.shape, sparse=True))
        idx[dim] = index
        idx = tuple(idx)
        if not include_self:
            out[idx] = _reduce_identity(out.dtype, reduce)
        ufunc = {"amax": xp.maximum, "amin": xp.minimum}.get(reduce, xp.multiply)
        ufunc.at(out, idx, src.astype(out.dtype, copy=False))
        return out

    @staticmethod
    def vjp(ctx, g, dim, reduce, include_self):
        x, index, src, out = ctx.saved()
        return _scatter_reduce_partials(
            x,
            index,
            src,
            out,
            g,
            ctx.input_shape(0),
            ctx.needs_input_grad(0),
            ctx.needs_input_grad(2),
            dim,
            reduce,
            include_self,
        )

    @staticmethod
    def jvp(primals, tangents, out, dim, reduce, include_self):
        """Each output element is a function of its own group only, so the partial
        derivatives are the VJP's factors for a cotangent of ones: ``t_out = d_x * t_x +
        scatter_add(d_src * t_src)``."""
        x, index, src = primals
        tx, _, tsrc = tangents
        dx, _, dsrc = _scatter_reduce_partials(
            x,
            index,
            src,
            out,
            full(tuple(out.shape), 1, dtype=out.dtype, device=out.device),
            x.shape,
            tx is not None,
            tsrc is not None,
            dim,
            reduce,
            include_self,
        )
        t = dx * tx if tx is not None else None
        if tsrc is not None:
            zero = zeros(tuple(out.shape), dtype=out.dtype, device=out.device)
            t_src = scatter_add(zero, dim, index, dsrc * tsrc)
            t = t_src if t is None else t + t_src
        return t

    @staticmethod
    def batch(args, dims, dim, reduce, include_self):
        """All operands batched in front (an unbatched one broadcast), ``dim`` shifted (the
        operands are at least 1-d, so no 0-d examples)."""
        size = _batch_size(args, dims)
        args = tuple(_with_batch(a, d, 0, size) for a, d in zip(args, dims))
        return bind(
            ScatterReduce, args, {"dim": dim + 1, "reduce": reduce, "include_self": include_self}
        ), 0


@public(inplace=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src`` reduced into it at ``index`` along ``dim`` (out of place).

    ``reduce`` is ``'sum'``, ``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'`` (``'max'`` and
    ``'min'`` are aliases). With ``include_self=False`` the values of ``input`` at scattered
    positions take no part (positions nothing is scattered to keep ``input``). Integer
    ``'mean'`` rounds down, as PyTorch. Differentiable in ``input`` and ``src``, as PyTorch:
    ``'amax'``/``'amin'`` split the gradient evenly among the elements equal to the result;
    ``'prod'`` gives a lone zero the product of the others.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([1.0, 1.0, 1.0])
    >>> i = numbagrad.tensor([0, 0, 2])
    >>> x.scatter_reduce(0, i, numbagrad.tensor([2.0, 4.0, 5.0]), "mean")
    tensor([2.3333, 1.0000, 3.0000])
    >>> x.scatter_reduce(0, i, numbagrad.tensor([2.0, 4.0, 5.0]), "sum", include_self=False)
    tensor([6., 1., 5.])
    >>> x.scatter_reduce(0, i, numbagrad.tensor([2.0, 4.0, 5.0]), "amax", include_self=False)
    tensor([4., 1., 5.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's aliases
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    src = as_tensor_arg(src, "src")
    index, d = _scatter_prep("scatter_reduce", input, dim, index, src)
    if index is None:
        return F.clone(input)
    if input.ndim == 0 or index.ndim == 0:
        out = scatter_reduce(
            _as_1d(input), 0, _as_1d(index), _as_1d(src), reduce, include_self=include_self
        )
        return reshape(out, tuple(input.shape))
    window = tuple(slice(0, n) for n in index.shape)
    if tuple(src.shape) != tuple(index.shape):
        src = getitem(src, window)
    if reduce in ("prod", "amax", "amin"):
        return _scatter_reduce_op(input, d, index, src, reduce, include_self)
    base = input if include_self else scatter(input, d, index, 0)
    total = scatter_add(base, d, index, src)
    if reduce == "sum":
        return total

    counts = scatter_add(
        full(tuple(input.shape), 1 if include_self else 0, dtype=input.dtype, device=input.device),
        d,
        index,
        ones(tuple(index.shape), dtype=input.dtype, device=input.device),
    )
    counts = F.where(F.eq(counts, 0), 1, counts)
    if input.dtype.is_floating_point:
        return F.div(total, counts)
    return F.floor_divide(total, counts)


@public(inplace=True)
def masked_scatter(input, mask, source):
    """``input`` with the elements of ``source`` (in order) written where the bool ``mask``
    (broadcast to ``input``) is true. Gradients: ``input`` gets ``grad`` with zeros where
    written; ``source`` gets ``grad[mask]`` in its first elements, zeros after.

    The number of elements written depends on ``mask``'s values, so this op needs concrete
    values (it is not supported under ``vmap``).

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.tensor([True, False, True])
    >>> numbagrad.zeros(3).masked_scatter(m, numbagrad.tensor([1.0, 2.0, 3.0]))
    tensor([1., 0., 2.])
    """
    mask = as_tensor_arg(mask, "mask")
    source = as_tensor_arg(source, "source")
    if mask.dtype.np.kind != "b":
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_tname(mask)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"masked_scatter_: expected self and source to have same dtypes but "
            f"got {_tname(input)} and {_tname(source)}"
        )
    if mask._is_tracer:
        raise RuntimeError(
            "masked_scatter: the mask's values decide the result's layout, so "
            "it cannot be used with a mask a transform (vmap, grad) owns"
        )
    if tuple(mask.shape) != tuple(input.shape):
        if not is_expandable_to(tuple(mask.shape), tuple(input.shape)):
            raise RuntimeError(
                f"The size of tensor a ({list(mask.shape)}) must match the "
                f"size of tensor b ({list(input.shape)}): mask must broadcast "
                "to self"
            )
        mask = expand(mask, tuple(input.shape))
    n = int(np.count_nonzero(mask._data))
    if source.numel() < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    values = getitem(reshape(source, (-1,)), slice(0, n))
    return index_put(input, mask, values)


@public(inplace=True)
def put(input, index, source, accumulate=False):
    """``input`` with ``source`` written (or, with ``accumulate``, added) at the flat
    positions ``index`` (int64, negative entries count from the end), out of place.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.zeros(2, 2)
    >>> x.put(numbagrad.tensor([0, -1]), numbagrad.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    index = _long_index("put_", index)
    source = as_tensor_arg(source, "source")
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"put_(): self ({_tname(input)}) and source ({_tname(source)}) "
            "must have the same scalar type"
        )
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put_(): Expected source and index to have the same number of "
            f"elements, but got source.numel() = {source.numel()}, "
            f"index.numel() = {index.numel()}"
        )
    n = input.numel()
    idx = reshape(index, (-1,))
    _check_signed(
        "put_",
        idx,
        n,
        lambda i: f"out of range: tried to access index {i} on a tensor of {n} elements.",
    )
    if index.numel() == 0:
        return F.clone(input)
    idx = _wrap_negative(idx, n)
    flat = reshape(input, (-1,))
    src = reshape(source, (-1,))
    if accumulate:
        out = bind(ScatterAdd, (flat, idx, src), {"dim": 0})
    else:
        out = bind(IndexPut, (flat, src, idx), {"key": (_Slot(0),), "advanced": True})
    return reshape(out, tuple(input.shape))
