"""Shape and indexing ops.

Primitives: ``Reshape``, ``Permute``, ``Expand``, ``SumTo`` (all views or their adjoints),
``Index``/``IndexBackward`` (``__getitem__`` and its linear adjoint, each the other's VJP),
``Gather``/``ScatterAdd``, ``Cat``, ``Flip``, ``Roll``, ``Diagonal``/``DiagonalBackward``,
``Tril``/``Triu`` and the non-differentiable ``Argsort``. ``view``, ``flatten``, ``squeeze``,
``transpose``, ``movedim``, ``stack``, ``split``, ``sort``, ``topk`` and friends compose them.
Index arrays are validated before use: out-of-range indices raise ``IndexError``.
"""

from __future__ import annotations

import numpy as np

from numbagrad import ops as F
from numbagrad._dtype import promote_types
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend_of
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._rules import both_ways, passthrough
from numbagrad.ops._util import MinMax as _MinMax
from numbagrad.ops._util import as_tensor_arg, norm_dims, wrap_dim


class IndexOutOfRangeError(IndexError, RuntimeError):
    """An index outside its dimension. An ``IndexError``, as the issue asks, and also a
    ``RuntimeError``, which is what PyTorch raises from ``gather``/``index_select``, so
    scripts catching either keep working."""


def _check_index(name, idx, size):
    """``IndexOutOfRangeError`` naming the op when an index falls outside ``[0, size)``."""
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {idx.dtype}")
    bad = backend_of(idx).first_out_of_range(idx, size)
    if bad >= 0:
        raise IndexOutOfRangeError(f"{name}(): index {idx.reshape(-1)[bad]} is out of bounds "
                                   f"for dimension with size {size}")


# -- views -------------------------------------------------------------------------------------
# ``name`` is the PyTorch op a view was made by, for its ``grad_fn`` name only
_VIEW_NAMES = {"view": "ViewBackward0", "reshape": "ReshapeBackward0",
               "squeeze": "SqueezeBackward0", "unsqueeze": "UnsqueezeBackward0",
               "permute": "PermuteBackward0", "transpose": "TransposeBackward0",
               "t": "TBackward0"}


class Reshape(Primitive):
    linearity = "linear"
    view = True

    @classmethod
    def node_name(cls, params):
        return _VIEW_NAMES[params["name"]]

    @staticmethod
    def impl(be, x, shape, strict, name):
        xp = be.xp
        if strict:
            try:
                return xp.reshape(x, shape, copy=False)
            except ValueError:
                if xp.prod(shape, dtype=np.int64) != x.size and -1 not in shape:
                    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                                       f"{x.size}") from None
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.") from None
        try:
            return xp.reshape(x, shape)
        except ValueError:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                               f"{x.size}") from None

    @staticmethod
    def vjp(ctx, g, shape, strict, name):
        return reshape(g, ctx.input_shape(0))

    @staticmethod
    def fused_vjp(ctx, g, shape, strict, name):
        return g.reshape(ctx.input_shape(0))


class Permute(Primitive):
    linearity = "linear"
    view = True
    node_name = Reshape.node_name

    @staticmethod
    def impl(be, x, perm, name):
        return be.xp.transpose(x, perm)

    @staticmethod
    def vjp(ctx, g, perm, name):
        return bind(Permute, (g,), {"perm": _inverse(perm), "name": "permute"})

    @staticmethod
    def fused_vjp(ctx, g, perm, name):
        return ctx.be.xp.transpose(g, _inverse(perm))


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class Expand(Primitive):
    linearity = "linear"
    view = True
    vjp = fused_vjp = staticmethod(passthrough)  # the engine sums the broadcast back

    @staticmethod
    def impl(be, x, shape):
        return be.xp.broadcast_to(x, shape)


class SumTo(Primitive):
    """Sum a broadcast gradient back to ``shape`` (the engine's one reduction point)."""

    linearity = "linear"
    @staticmethod
    def impl(be, x, shape):
        return sum_to_array(x, shape, be.xp)

    @staticmethod
    def vjp(ctx, g, shape):
        return expand(g, ctx.input_shape(0))

    @staticmethod
    def fused_vjp(ctx, g, shape):
        return ctx.be.xp.broadcast_to(g, ctx.input_shape(0))


def sum_to_array(x, shape, xp=np):
    """Reduce array ``x`` by summation to ``shape`` (which ``x`` broadcasts from)."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    if axes:
        x = xp.sum(x, axis=axes, keepdims=True)
    return x.reshape(shape) if lead or x.shape != shape else x


def is_expandable_to(shape, desired):
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient can be summed back)."""
    if len(shape) > len(desired):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(shape), reversed(desired)))


# -- indexing ----------------------------------------------------------------------------------
def _norm_key(key, shape):
    """A tuple key (index arrays as int/bool Tensors) and whether it uses advanced indexing.

    Integer indices are checked against their dimension first (IndexError, as PyTorch)."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    advanced = False
    dim = 0
    for k in key:
        if isinstance(k, Tensor):
            arr = k._data
        elif isinstance(k, (list, np.ndarray)) or (isinstance(k, bool)):
            arr = np.asarray(k)
            k = None
        else:
            arr = None
        if arr is not None:
            if arr.dtype.kind == "b":
                advanced = True
                dim += max(arr.ndim, 1)
            elif arr.dtype.kind in "iu":
                advanced = True
                if dim < len(shape) and arr.size:
                    size = shape[dim]
                    if arr.min() < -size or arr.max() >= size:
                        bad = arr.max() if arr.max() >= size else arr.min()
                        raise IndexError(f"index {bad} is out of bounds for dimension {dim} "
                                         f"with size {size}")
                dim += 1
            elif arr.dtype.kind == "f" and arr.ndim == 0:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and "
                                 "long or byte Variables are valid indices (got float)")
            else:
                raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                                 f"got {arr.dtype}")
            k = k if k is not None else Tensor._make(arr)
        elif isinstance(k, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got float)")
        elif k is not None and k is not Ellipsis:
            dim += 1
        out.append(k)
    if not advanced and Ellipsis not in out:
        out.append(Ellipsis)  # keeps x[0, 1] a 0-d *view*, not a NumPy scalar copy
    return tuple(out), advanced


class _Slot:
    """Stands in a key for the ``i``-th index operand (NOTE [Primitive declaration]: index
    tensors are operands, so a transform sees them; the key keeps only static parts)."""

    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i

    def __eq__(self, other):
        return type(other) is _Slot and other.i == self.i

    def __hash__(self):
        return hash(("_Slot", self.i))

    def __repr__(self):
        return f"<index operand {self.i}>"


def split_key(key):
    """``(template, index_tensors)``: the key with each index tensor replaced by a slot."""
    template, tensors = [], []
    for k in key:
        if isinstance(k, Tensor):
            template.append(_Slot(len(tensors)))
            tensors.append(k)
        else:
            template.append(k)
    return tuple(template), tuple(tensors)


def fill_key(template, arrays):
    """The key ``template`` with its slots filled from ``arrays`` (index operands)."""
    return tuple(arrays[k.i] if type(k) is _Slot else k for k in template)


def _index_operands(n):
    return tuple(range(1, n))


def _put_index_operands(n):
    return tuple(range(2, n))


class Index(Primitive):
    """``x[key]``; index tensors of the key are operands 1, 2, ... (data)."""

    linearity = "linear"
    view = True
    data_operands = staticmethod(_index_operands)
    saves_inputs = staticmethod(_index_operands)

    @classmethod
    def node_name(cls, params):
        # PyTorch's names: Select (ints), Slice (slices), Index (advanced indexing)
        key = params["key"]
        if params["advanced"]:
            return "IndexBackward0"
        if any(isinstance(k, slice) for k in key):
            return "SliceBackward0"
        return "SelectBackward0" if any(isinstance(k, int) for k in key) else \
            "AliasBackward0"

    @staticmethod
    def impl(be, x, *index, key, advanced):
        return x[fill_key(key, index) if index else key]

    @staticmethod
    def vjp(ctx, g, key, advanced):
        index = ctx.saved()
        gx = bind(IndexBackward, (g, *index),
                  {"key": key, "advanced": advanced, "shape": ctx.input_shape(0)})
        return (gx, *(None for _ in index))

    @staticmethod
    def fused_vjp(ctx, g, key, advanced):
        index = ctx.saved_arrays()
        gx = IndexBackward.impl(ctx.be, g, *index, key=key, advanced=advanced,
                                shape=ctx.input_shape(0))
        return (gx, *(None for _ in index))


class IndexBackward(Primitive):
    """Zeros of ``shape`` with ``g`` added at ``key`` (the adjoint of ``Index``)."""

    linearity = "linear"
    data_operands = staticmethod(_index_operands)
    saves_inputs = staticmethod(_index_operands)

    @staticmethod
    def impl(be, g, *index, key, advanced, shape):
        xp = be.xp
        out = xp.zeros(shape, g.dtype)
        if advanced:
            xp.add.at(out, fill_key(key, index), g)  # repeated indices accumulate
        else:
            out[key] = g
        return out

    @staticmethod
    def vjp(ctx, gg, key, advanced, shape):
        index = ctx.saved()
        return (bind(Index, (gg, *index), {"key": key, "advanced": advanced}),
                *(None for _ in index))


class IndexPut(Primitive):
    """``x`` with ``value`` written at ``key`` (out of place; ``__setitem__`` commits it);
    index tensors of the key are operands 2, 3, ..."""

    linearity = "linear"
    data_operands = staticmethod(_put_index_operands)
    saves_inputs = staticmethod(_put_index_operands)

    @classmethod
    def node_name(cls, params):
        return "IndexPutBackward0" if params["advanced"] else "CopySlices"

    @staticmethod
    def impl(be, x, value, *index, key, advanced):
        out = x.copy()
        v = value if type(value) is not np.ndarray or value.dtype == x.dtype \
            else value.astype(x.dtype)
        out[fill_key(key, index) if index else key] = v
        return out

    @staticmethod
    def vjp(ctx, g, key, advanced):
        index = ctx.saved()
        params = {"key": key, "advanced": advanced}
        gx = bind(IndexPut, (g, 0.0, *index), params) if ctx.needs_input_grad(0) else None
        gv = bind(Index, (g, *index), params) if ctx.needs_input_grad(1) else None
        return (gx, gv, *(None for _ in index))


def getitem(input, key):
    """``input[key]``: ints, slices (with steps), ``None``, ``...``, bool masks, int tensors."""
    k, advanced = _norm_key(key, input.shape)
    template, index = split_key(k)
    return bind(Index, (input, *index), {"key": template, "advanced": advanced})


def index_put(input, key, value):
    """Out-of-place ``input[key] = value``."""
    k, advanced = _norm_key(key, input.shape)
    if not isinstance(value, (Tensor, int, float, bool)):
        value = as_tensor_arg(value, "value")
    template, index = split_key(k)
    return bind(IndexPut, (input, value, *index), {"key": template, "advanced": advanced})


class Gather(Primitive):
    """``gather(x, index, dim)``: the index tensor is a data operand."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, x, index, dim):
        window = _gather_window(x.ndim, dim, index.shape)
        return be.xp.take_along_axis(x[window], index, axis=dim)

    @staticmethod
    def vjp(ctx, g, dim):
        (index,) = ctx.saved()
        z = bind(Zeros, (), {"shape": ctx.input_shape(0), "dtype": ctx.input_dtype(0)})
        return bind(ScatterAdd, (z, index, g), {"dim": dim}), None


class Zeros(Primitive):
    differentiable = False

    @staticmethod
    def impl(be, shape, dtype):
        return be.zeros(shape, dtype)


def _gather_window(ndim, dim, index_shape):
    """The part of a tensor that an index of ``index_shape`` addresses along ``dim``."""
    return tuple(slice(None) if d == dim else slice(0, index_shape[d]) for d in range(ndim))


def _check_gather(name, x, dim, index):
    if index.ndim != x.ndim:
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as "
                           f"input tensor ({index.ndim} vs {x.ndim})")
    for d in range(x.ndim):
        if d != dim and index.shape[d] > x.shape[d]:
            raise RuntimeError(f"{name}(): Size does not match at dimension {d} expected index "
                               f"{list(index.shape)} to be smaller than self {list(x.shape)} "
                               f"apart from dimension {dim}")
    _check_index(name, index, x.shape[dim] if x.ndim else 1)


def gather(input, dim, index):
    """``out[i][j] = input[i][index[i][j]]`` along ``dim`` (indices validated)."""
    index = as_tensor_arg(index, "index")
    d = wrap_dim(dim, input.ndim)
    _check_gather("gather", input._data, d, index._data)
    return bind(Gather, (input, index), {"dim": d})


class ScatterAdd(Primitive):
    """``scatter_add(x, index, src, dim)``: the index tensor is a data operand."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, x, index, src, dim):
        xp = be.xp
        out = x.copy()
        src = src[_gather_window(src.ndim, dim, index.shape)]
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
                pad = bind(Zeros, (), {"shape": src_shape, "dtype": ctx.input_dtype(2)})
                window = _gather_window(len(src_shape), dim, index.shape)
                gsrc = index_put(pad, window, gsrc)
        return g, None, gsrc


def scatter_add(input, dim, index, src):
    """Out of place: ``input`` with ``src`` added at ``index`` along ``dim``."""
    index = as_tensor_arg(index, "index")
    d = wrap_dim(dim, input.ndim)
    _check_gather("scatter_add", input._data, d, index._data)
    for k in range(index.ndim):
        if index.shape[k] > src.shape[k]:
            raise RuntimeError(f"scatter_add(): Expected index {list(index.shape)} to be "
                               f"smaller than src {list(src.shape)} in every dimension")
    return bind(ScatterAdd, (input, index, src), {"dim": d})


def take_along_dim(input, indices, dim=None):
    """Pick values along ``dim`` at ``indices`` (broadcast against ``input``)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = wrap_dim(dim, input.ndim)
    idx = as_tensor_arg(indices, "indices")
    if idx.ndim != input.ndim:
        raise RuntimeError("take_along_dim(): input and indices should have the same number "
                           f"of dimensions, but got {input.ndim} and {idx.ndim}")
    shp = list(np.broadcast_shapes(
        tuple(s for i, s in enumerate(input.shape) if i != d),
        tuple(s for i, s in enumerate(idx.shape) if i != d)))
    xshape = (*shp[:d], input.shape[d], *shp[d:])
    ishape = (*shp[:d], idx.shape[d], *shp[d:])
    _check_index("take_along_dim", idx._data, input.shape[d])
    x = expand(input, xshape) if xshape != tuple(input.shape) else input
    idx = expand(idx, ishape) if ishape != tuple(idx.shape) else idx
    return bind(Gather, (x, idx), {"dim": d})


def index_select(input, dim, index):
    """Select entries of ``input`` along ``dim`` at the 1-D int ``index``."""
    index = as_tensor_arg(index, "index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input.ndim)
    _check_index("index_select", index._data, input.shape[d] if input.ndim else 1)
    key = (slice(None),) * d + (_Slot(0),)
    return bind(Index, (input, index.reshape(-1)), {"key": key, "advanced": True})


class Cat(Primitive):
    linearity = "linear"
    @staticmethod
    def impl(be, *xs, dim):
        return be.xp.concatenate(xs, axis=dim)

    @staticmethod
    def vjp(ctx, g, dim):
        out = []
        start = 0
        for i in range(ctx.num_inputs()):
            n = ctx.input_shape(i)[dim]
            out.append(narrow(g, dim, start, n))
            start += n
        return tuple(out)


def cat(tensors, dim=0):
    """Concatenate tensors along an existing ``dim``."""
    tensors = [as_tensor_arg(t, "tensors") for t in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    d = wrap_dim(dim, tensors[0].ndim)
    ref = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.ndim != len(ref) or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref))
                                     if k != d):
            raise RuntimeError(f"torch.cat(): Sizes of tensors must match except in dimension "
                               f"{d}. Expected {list(ref)} but got {list(t.shape)} for tensor "
                               f"number {i} in the list.")
    dts = {t.dtype for t in tensors}
    if len(dts) > 1:
        dt = tensors[0].dtype
        for t in tensors[1:]:
            dt = promote_types(dt, t.dtype)
        tensors = [t.to(dt) for t in tensors]
    return bind(Cat, tuple(tensors), {"dim": d})


concatenate = concat = cat


def stack(tensors, dim=0):
    """Stack tensors along a new ``dim``."""
    tensors = [as_tensor_arg(t, "tensors") for t in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


def _flip_rule(m, ctx, saved, g, dims):
    return m.flip(g, dims)  # flipping is its own adjoint


class Flip(Primitive):
    linearity = "linear"
    vjp, fused_vjp = both_ways(_flip_rule)

    @staticmethod
    def impl(be, x, dims):
        return be.xp.flip(x, dims).copy()  # PyTorch's flip copies


def flip(input, dims):
    """Reverse the order of elements along ``dims``."""
    if isinstance(dims, int):
        dims = (dims,)
    return bind(Flip, (input,), {"dims": norm_dims(dims, input.ndim)})


class Roll(Primitive):
    linearity = "linear"
    @staticmethod
    def impl(be, x, shifts, dims):
        return be.xp.roll(x, shifts, dims)

    @staticmethod
    def vjp(ctx, g, shifts, dims):
        return bind(Roll, (g,), {"shifts": tuple(-s for s in shifts), "dims": dims})


def roll(input, shifts, dims=None):
    """Roll elements along ``dims`` by ``shifts`` (flattened when ``dims`` is None)."""
    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    if isinstance(shifts, int):
        shifts = (shifts,)
    if isinstance(dims, int):
        dims = (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    return bind(Roll, (input,), {"shifts": tuple(shifts), "dims": dims})


class Diagonal(Primitive):
    linearity = "linear"
    view = True

    @staticmethod
    def impl(be, x, offset, dim1, dim2):
        v = be.xp.diagonal(x, offset, dim1, dim2)
        if x.flags.writeable:
            v.setflags(write=True)  # a real view: writes reach the base, as in PyTorch
        return v

    @staticmethod
    def vjp(ctx, g, offset, dim1, dim2):
        return bind(DiagonalBackward, (g,), {"shape": ctx.input_shape(0), "offset": offset,
                                             "dim1": dim1, "dim2": dim2})


class DiagonalBackward(Primitive):
    linearity = "linear"
    @staticmethod
    def impl(be, g, shape, offset, dim1, dim2):
        out = be.xp.zeros(shape, g.dtype)
        view = be.xp.diagonal(out, offset, dim1, dim2)
        view.setflags(write=True)
        view[...] = g
        return out

    @staticmethod
    def vjp(ctx, gg, shape, offset, dim1, dim2):
        return bind(Diagonal, (gg,), {"offset": offset, "dim1": dim1, "dim2": dim2})


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal (a view) with respect to ``dim1`` and ``dim2``."""
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return bind(Diagonal, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


class Tril(Primitive):
    linearity = "linear"
    fn = "tril"

    @classmethod
    def impl(cls, be, x, diagonal):
        if x.ndim < 2:
            raise RuntimeError(f"{cls.fn}: input tensor must have at least 2 dimensions")
        return getattr(be.xp, cls.fn)(x, diagonal)

    @classmethod
    def vjp(cls, ctx, g, diagonal):
        return bind(cls, (g,), {"diagonal": diagonal})  # masking is its own adjoint

    @classmethod
    def fused_vjp(cls, ctx, g, diagonal):
        return getattr(ctx.be.xp, cls.fn)(g, diagonal)


class Triu(Tril):
    fn = "triu"


def tril(input, diagonal=0):
    """Lower triangle of the last two dims (elements above ``diagonal`` zeroed)."""
    return bind(Tril, (input,), {"diagonal": diagonal})


def triu(input, diagonal=0):
    """Upper triangle of the last two dims (elements below ``diagonal`` zeroed)."""
    return bind(Triu, (input,), {"diagonal": diagonal})


class Argsort(Primitive):
    differentiable = False

    @staticmethod
    def impl(be, x, dim, descending, stable):
        xp = be.xp
        if descending:
            # stable descending order: sort the reversed axis, map back, reverse
            n = x.shape[dim] if x.ndim else 1
            r = xp.flip(x, dim) if x.ndim else x
            idx = xp.argsort(r, axis=dim if x.ndim else None, kind="stable")
            idx = (n - 1 - idx) if x.ndim else idx
            return xp.flip(idx, dim).astype(np.int64) if x.ndim else idx.astype(np.int64)
        if x.ndim == 0:
            return xp.zeros((), np.int64)
        return xp.argsort(x, axis=dim, kind="stable").astype(np.int64)


def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (a stable sort)."""
    d = wrap_dim(dim, input.ndim)
    return bind(Argsort, (input,), {"dim": d, "descending": descending, "stable": stable})


def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim``; gradients flow to the values."""
    idx = argsort(input, dim, descending, stable)
    if input.ndim == 0:
        return _MinMax((input.clone(), idx))
    return _MinMax((take_along_dim(input, idx, dim), idx))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range: k={k} for dimension of size {n}")
    idx = narrow(argsort(input, d, descending=largest), d, 0, k)
    return _MinMax((take_along_dim(input, idx, d), idx))


# -- composites on views -----------------------------------------------------------------------
def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def reshape(input, *shape):
    """Reshape (a view when the layout allows, else a copy); one dim may be -1."""
    return bind(Reshape, (input,), {"shape": _shape_arg(shape), "strict": False,
                                    "name": "reshape"})


def view(input, *shape):
    """Reshape as a view; RuntimeError when the layout needs a copy (use ``reshape``)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return input.to(shape[0])  # view(dtype) is a reinterpreting cast in torch
    return bind(Reshape, (input,), {"shape": _shape_arg(shape), "strict": True,
                                    "name": "view"})


def permute(input, *dims):
    """Reorder the dims (a view)."""
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}")
    perm = tuple(wrap_dim(d, input.ndim) for d in dims)
    if sorted(perm) != list(range(input.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return bind(Permute, (input,), {"perm": perm, "name": "permute"})


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    n = input.ndim
    if n == 0:
        return input
    perm = list(range(n))
    a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
    perm[a], perm[b] = perm[b], perm[a]
    return bind(Permute, (input,), {"perm": tuple(perm), "name": "transpose"})


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return bind(Permute, (input,), {"perm": (1, 0), "name": "t"}) if input.ndim == 2 \
        else input


def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (a view)."""
    n = input.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError("movedim: Invalid source or destination dims: source "
                           f"({src} dims) should contain the same number of dims as destination "
                           f"({dst} dims)")
    src = [wrap_dim(s, n) for s in src]
    dst = [wrap_dim(d, n) for d in dst]
    order = [i for i in range(n) if i not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return bind(Permute, (input,), {"perm": tuple(perm), "name": "permute"})


moveaxis = movedim


def expand(input, *sizes):
    """Broadcast singleton dims to ``sizes`` (a view; -1 keeps a size)."""
    sizes = _shape_arg(sizes)
    n = len(sizes)
    if n < input.ndim:
        raise RuntimeError(f"expand: the number of sizes provided ({n}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({input.ndim})")
    shape = list(sizes)
    lead = n - input.ndim
    for i, s in enumerate(input.shape):
        want = shape[i + lead]
        if want == -1:
            shape[i + lead] = s
        elif s != want and s != 1:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                               f"existing size ({s}) at non-singleton dimension {i + lead}.  "
                               f"Target sizes: {list(sizes)}.  Tensor sizes: {list(input.shape)}")
    shape = tuple(shape)
    if shape == tuple(input.shape):
        return input
    return bind(Expand, (input,), {"shape": shape})


def broadcast_to(input, shape):
    """``expand`` to ``shape``."""
    return expand(input, tuple(shape))


def expand_as(input, other):
    """``expand`` to ``other``'s shape."""
    return expand(input, tuple(other.shape))


def sum_to(input, shape):
    """Sum ``input`` down to ``shape`` (the adjoint of broadcasting)."""
    shape = tuple(shape)
    if tuple(input.shape) == shape:
        return input
    return bind(SumTo, (input,), {"shape": shape})


def squeeze(input, dim=None):
    """Remove size-1 dims (all of them, or those in ``dim``)."""
    if dim is None:
        shape = tuple(s for s in input.shape if s != 1)
    else:
        dims = norm_dims(dim, input.ndim) if input.ndim else ()
        shape = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
    return bind(Reshape, (input,), {"shape": shape, "strict": False, "name": "squeeze"})


def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    d = wrap_dim(dim, input.ndim + 1)
    shape = list(input.shape)
    shape.insert(d, 1)
    return bind(Reshape, (input,), {"shape": tuple(shape), "strict": False,
                                    "name": "unsqueeze"})


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one."""
    if input.ndim == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = (*input.shape[:s], -1, *input.shape[e + 1:])
    return reshape(input, shape)


def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes``."""
    d = wrap_dim(dim, input.ndim)
    return reshape(input, (*input.shape[:d], *sizes, *input.shape[d + 1:]))


def narrow(input, dim, start, length):
    """Elements ``start`` to ``start + length - 1`` along ``dim`` (a view)."""
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if start < 0:
        start += n
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise IndexError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return getitem(input, key)


def select(input, dim, index):
    """The slice at ``index`` along ``dim``, that dimension removed (a view)."""
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return getitem(input, (slice(None),) * d + (index % n,))


def split(tensor, split_size_or_sections, dim=0):
    """Split into chunks of ``split_size`` (int) or of the given section sizes (list)."""
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        sizes = [min(size, n - i) for i in range(0, n, size)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins_sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def builtins_sum(xs):
    total = 0
    for x in xs:
        total += x
    return total


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` nearly equal pieces (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    n = input.shape[wrap_dim(dim, input.ndim)]
    size = max(-(-n // chunks), 1)
    return split(input, size, dim)


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


def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements: an ``(n, ndim)`` int64 tensor, or a tuple of 1-D."""
    if as_tuple:
        if input.ndim == 0:  # as PyTorch: the scalar's indices as if it were 1-D
            return (nonzero(input.reshape(1))[:, 0],)
        idx = bind(Nonzero, (input,), NO_PARAMS)
        return tuple(idx[:, d] for d in range(input.ndim))
    return bind(Nonzero, (input,), NO_PARAMS)


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` is true."""
    return F.where(mask, value, input)


ALL = ("reshape view permute transpose swapaxes swapdims t movedim moveaxis expand "
       "broadcast_to expand_as sum_to squeeze unsqueeze flatten unflatten narrow select split "
       "chunk "
       "cat concat concatenate stack flip roll diagonal tril triu argsort sort topk gather "
       "scatter_add take_along_dim index_select nonzero masked_fill").split()

__all__ = ["ALL", *ALL, "IndexOutOfRangeError", "fill_key", "getitem", "index_put",
           "is_expandable_to", "split_key", "sum_to_array"]
