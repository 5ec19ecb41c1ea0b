"""Shape ops: views, the indexing machinery, and the ops composed of them.

Primitives: ``Reshape``, ``Permute``, ``Expand``, ``SumTo`` (all views or their adjoints),
``Index``/``IndexBackward`` (``__getitem__`` and its linear adjoint, each the other's VJP),
``IndexPut``, ``Diagonal``/``DiagonalBackward`` and ``Zeros``. ``view``, ``flatten``,
``squeeze``, ``transpose``, ``movedim``, ``split``, ``unfold`` and friends compose them.
Index arrays are validated before use: out-of-range indices raise ``IndexError`` (a
transform's tracer index by dtype only: its values are checked when the transform's rule
applies the op to arrays). Batching rules move the batch dimension to the front and shift
dim params; the indexing primitives share ``_batch_key`` (batched indices through an
``arange`` index).

The other families of the former ``shape.py`` live beside it: ``ops/gather_scatter.py``
(``gather``, ``index_select``, ``take``, ``masked_fill``, the scatter family),
``ops/join.py`` (``cat``, ``stack``), ``ops/sorting.py`` (``sort``, ``topk``, ``nonzero``)
and ``ops/reorder.py`` (``flip``, ``roll``, ``tril``, ``triu``).
"""

from __future__ import annotations

import warnings

import numpy as np

from numbagrad import ops as F
from numbagrad._creation import arange
from numbagrad._creation import const_ones_like as ones_like
from numbagrad._creation import const_zeros_like as zeros_like
from numbagrad._dtype import int64 as _INT64
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend, backend_of
from numbagrad.kernels.cpu.backend import broadcast_view
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import bound_both_ways, front, passthrough
from numbagrad.ops._util import as_tensor_arg, norm_dims, wrap_dim


class IndexOutOfRangeError(IndexError, RuntimeError):
    """An index outside its dimension. An ``IndexError``, as the issue asks, and also a
    ``RuntimeError``, which is what PyTorch raises from ``gather``/``index_select``, so
    scripts catching either keep working."""


def _check_index(name, idx, size, wrap=False):
    """``idx``, after an ``IndexOutOfRangeError`` naming the op if an entry of the index
    tensor falls outside ``[0, size)`` (with ``wrap``, ``[-size, size)``: a new index with
    the negative entries plus ``size``). A transform's tracer has no values: for one, the
    check is an op (``CheckIndex``) that runs when the transform reaches the arrays."""
    dt = idx.dtype.np
    if dt.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {dt}")
    if idx._is_tracer:
        return bind(CheckIndex, (idx,), {"size": size, "op": name, "wrap": wrap})
    arr = _raise_out_of_range(name, idx._data, size, wrap)
    return idx if arr is idx._data else Tensor._make(arr)


def _raise_out_of_range(name, arr, size, wrap=False):
    """``arr`` (with ``wrap``, its entries in ``[-size, 0)`` plus ``size``: a new array),
    after raising if an entry is outside ``[0, size)``; the scan of the common case, every
    entry in range, is all it costs."""
    be = backend_of(arr)
    bad = be.first_out_of_range(arr, size)
    if bad >= 0 and wrap:
        neg = be.binary(
            "logical_and", be.binary("less", arr, 0), be.binary("greater_equal", arr, -size)
        )
        arr = be.xp.where(neg, be.binary("add", arr, size), arr)
        bad = be.first_out_of_range(arr, size)  # (an entry out of range is as given)
    if bad >= 0:
        raise IndexOutOfRangeError(
            f"{name}(): index {arr.reshape(-1)[bad]} is out of bounds "
            f"for dimension with size {size}"
        )
    return arr


class CheckIndex(Primitive):
    """The bounds check of ``_check_index`` as an op: the index itself, after raising if an
    entry falls outside ``[0, size)`` (for index tensors owned by a transform)."""

    differentiable = False

    @staticmethod
    def impl(be, idx, size, op, wrap=False):
        return _raise_out_of_range(op, idx, size, wrap)

    @staticmethod
    def batch(args, dims, size, op, wrap=False):
        return bind(CheckIndex, args, {"size": size, "op": op, "wrap": wrap}), dims[0]


# -- batching helpers (the ``batch`` rules, NOTE [Primitive declaration]) ---------------------
def _batch_size(args, dims):
    """The length of the batch dimension of the batched operands."""
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise ValueError("no batched operand")


def _with_batch(x, d, at, size):
    """``x`` with its batch dimension (``d``) at position ``at``; an unbatched ``x``
    (``d`` None) broadcast to ``size`` copies along a new dimension there (a view)."""
    if d is None:
        x = F.unsqueeze(x, at)
        shape = list(x.shape)
        shape[at] = size
        return F.expand(x, tuple(shape))
    return x if d == at else F.movedim(x, d, at)


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _dims_up(dims):
    """Dim params shifted past a batch dimension moved to the front."""
    return tuple(d + 1 for d in dims)


# -- views -------------------------------------------------------------------------------------
# ``name`` is the PyTorch op a view was made by, for its ``grad_fn`` name only
_VIEW_NAMES = {
    "view": "ViewBackward0",
    "reshape": "ReshapeBackward0",
    "squeeze": "SqueezeBackward0",
    "unsqueeze": "UnsqueezeBackward0",
    "permute": "PermuteBackward0",
    "transpose": "TransposeBackward0",
    "t": "TBackward0",
}


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
                    raise RuntimeError(
                        f"shape '{list(shape)}' is invalid for input of size {x.size}"
                    ) from None
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead."
                ) from None
        try:  # (the method on NumPy arrays: np.reshape's dispatch wrapper costs 0.5 us)
            return x.reshape(shape) if type(x) is np.ndarray else xp.reshape(x, shape)
        except ValueError:
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {x.size}"
            ) from None

    @staticmethod
    def vjp(ctx, g, shape, strict, name):
        return reshape(g, ctx.input_shape(0))

    @staticmethod
    def jvp(primals, tangents, out, shape, strict, name):
        """The tangent reshaped: a view where its layout allows, else a copy (a tangent's
        strides need not be its primal's)."""
        return bind(Reshape, (tangents[0],), {"shape": shape, "strict": False, "name": name})

    @staticmethod
    def batch(args, dims, shape, strict, name):
        """The batch dimension stays where it is when the reshape does not merge dims across
        it (the batched view is then valid exactly when each example's is); otherwise it
        moves to the front, and a ``view`` may copy."""
        (x,), (d,) = args, dims
        full = tuple(x.shape)
        size, per = full[d], full[:d] + full[d + 1 :]
        shape = _infer_shape(shape, _prod(per))
        lead, acc = _prod(per[:d]), 1
        for k in range(len(shape) + 1):
            if acc == lead:
                new = (*shape[:k], size, *shape[k:])
                return bind(Reshape, (x,), {"shape": new, "strict": strict, "name": name}), k
            if k < len(shape):
                acc *= shape[k]
        return bind(
            Reshape, (front(x, d),), {"shape": (size, *shape), "strict": False, "name": name}
        ), 0

    # by hand (NOTE [Hand-written fused rules]): a view of ``g``; the tensor form is ``reshape``'s
    # shortcuts
    @staticmethod
    def fused_vjp(ctx, g, shape, strict, name):
        return g.reshape(ctx.input_shape(0))


def _infer_shape(shape, numel):
    """``shape`` with its -1 resolved for ``numel`` elements (as it is when it cannot be:
    the op then raises)."""
    if -1 not in shape:
        return tuple(shape)
    known = _prod(s for s in shape if s != -1)
    if known == 0 or numel % known:
        return tuple(shape)
    return tuple(numel // known if s == -1 else s for s in shape)


def _permute_rule(cls, ctx, saved, g, perm, name):
    return cls, (g,), {"perm": _inverse(perm), "name": "permute"}


class Permute(Primitive):
    linearity = "linear"
    view = True
    node_name = Reshape.node_name

    @staticmethod
    def impl(be, x, perm, name):
        return x.transpose(perm) if type(x) is np.ndarray else be.xp.transpose(x, perm)

    @staticmethod
    def batch(args, dims, perm, name):
        """The batch dimension first, the permutation after it."""
        x = front(args[0], dims[0])
        return bind(Permute, (x,), {"perm": (0, *_dims_up(perm)), "name": name}), 0

    vjp, fused_vjp = bound_both_ways(_permute_rule)


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
        if type(x) is np.ndarray:
            return broadcast_view(x, shape)
        return be.xp.broadcast_to(x, shape)

    @staticmethod
    def batch(args, dims, shape):
        """The batch dimension first, new leading dims inserted after it."""
        x = front(args[0], dims[0])
        size, per = x.shape[0], tuple(x.shape[1:])
        if len(per) < len(shape):
            x = reshape(x, (size,) + (1,) * (len(shape) - len(per)) + per)
        return bind(Expand, (x,), {"shape": (size, *shape)}), 0


class SumTo(Primitive):
    """Sum a broadcast gradient back to ``shape`` (the engine's one reduction point)."""

    linearity = "linear"

    @staticmethod
    def impl(be, x, shape):
        return sum_to_array(x, shape, be.xp)

    @staticmethod
    def batch(args, dims, shape):
        """The batch dimension first; the summed leading dims kept as 1s, then dropped."""
        x = front(args[0], dims[0])
        size, lead = x.shape[0], x.ndim - 1 - len(shape)
        out = bind(SumTo, (x,), {"shape": (size,) + (1,) * lead + tuple(shape)})
        if not lead:
            return out, 0
        out = reshape(out, (size, *shape))
        # (each example's sum over its leading dims makes a new tensor, as PyTorch's: where
        # they are all of size 1 nothing was summed, and ``x`` may be a broadcast view)
        return (out.contiguous() if _prod(x.shape[1 : 1 + lead]) == 1 else out), 0

    @staticmethod
    def vjp(ctx, g, shape):
        return expand(g, ctx.input_shape(0))

    # by hand (NOTE [Hand-written fused rules]): a broadcast view of ``g``: no copy
    @staticmethod
    def fused_vjp(ctx, g, shape):
        if type(g) is np.ndarray:
            return broadcast_view(g, ctx.input_shape(0))
        return ctx.be.xp.broadcast_to(g, ctx.input_shape(0))


def sum_to_array(x, shape, xp=np):
    """Reduce array ``x`` by summation to ``shape`` (which ``x`` broadcasts from)."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1
    )
    if axes:
        if xp is np and x.dtype in _SUM_KERNEL_DTYPES:  # the CPU's sum kernels (NOTE [Sum kernels])
            x = backend("cpu").sum(x, axes, True, None)
        else:
            x = xp.sum(x, axis=axes, keepdims=True)
    return x.reshape(shape) if lead or x.shape != shape else x


_SUM_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def is_expandable_to(shape, desired):
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient can be summed back)."""
    if len(shape) > len(desired):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(shape), reversed(desired)))


# -- indexing ----------------------------------------------------------------------------------
# NOTE [PyTorch's indexing order]
# PyTorch does not follow NumPy where advanced indices are mixed with basic ones: it applies
# ints (``select``), slices, ``None`` and Python bools (a new size-1 dim indexed by ``[0]`` or
# ``[]``) first, left to right, and then indexes the resulting view with the index tensors,
# which is where NumPy's placement rule applies (adjacent index tensors keep their place,
# separated ones go first). So ints are not advanced indices and do not separate index
# tensors: ``x[0, :, [1, 2]]`` is ``x[0][:, [1, 2]]`` (shape ``(3, 2)`` for a ``(2, 3, 4)``
# tensor, where NumPy gives ``(2, 3)``). A key is normalised once (``_norm_key``); each
# application splits it into the basic key and the index-tensor key of that view
# (``_stages``), and ``_key_layout`` states the same rule for the batching rules.
_BAD_INDEX = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
    "are valid indices (got {})"
)


class _BoolAxis:
    """A Python bool (or a 0-d bool tensor) in a key: a new size-1 dim indexed by ``[0]``
    (True) or by an empty index (False), as PyTorch does; an advanced entry."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = bool(value)

    def __eq__(self, other):
        return type(other) is _BoolAxis and other.value == self.value

    def __hash__(self):
        return hash(("_BoolAxis", self.value))

    def __repr__(self):
        return f"<bool index {self.value}>"

    def array(self, xp):
        return xp.zeros(1 if self.value else 0, np.int64)


def _sequence_as_tuple(key):
    """PyTorch's (deprecated) heuristic: a list key holding a sequence, tensor, slice, None
    or ``...`` is a tuple of indices (``x[[[0, 1], [1, 2]]]`` is ``x[[0, 1], [1, 2]]``)."""
    if len(key) >= 32:
        return False
    for k in key:
        if isinstance(k, (Tensor, list, tuple, slice)) or k is None or k is Ellipsis:
            warnings.warn(
                "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                "which will result either in an error or a different result",
                UserWarning,
                stacklevel=4,
            )
            return True
    return False


def _norm_entry(k):
    """One key entry as ``_norm_key`` keeps it: an int, slice, None, ``...``, ``_BoolAxis``
    or an int/bool index Tensor."""
    if k is None or k is Ellipsis:
        return k
    tk = type(k)
    if tk is bool:
        return _BoolAxis(k)
    if tk is int:
        return k
    if tk is slice:
        if k.step is not None:
            step = k.step.item() if isinstance(k.step, Tensor) else k.step
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
        return k
    if isinstance(k, (int, np.integer)):  # an int subclass or a NumPy integer
        return int(k)
    if isinstance(k, (list, tuple, np.ndarray)):
        arr = np.asarray(k)
        if arr.size == 0 and arr.dtype.kind == "f":  # ``[]``: an empty int64 index
            arr = arr.astype(np.int64)
        k = Tensor._make(arr)
    if isinstance(k, Tensor):
        kind = k.dtype.np.kind
        if kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k.ndim == 0 and not k._is_tracer:  # as PyTorch: a select, or a new dim
            return _BoolAxis(k._data) if kind == "b" else int(k._data)
        return k
    if isinstance(k, float):
        raise IndexError(_BAD_INDEX.format("float"))
    mod = type(k).__module__
    name = type(k).__name__ if mod == "builtins" else f"{mod.split('.')[0]}.{type(k).__name__}"
    raise IndexError(_BAD_INDEX.format(name))


def _used(k):
    """How many dims of the indexed tensor a normalised key entry consumes (a bool mask its
    rank; ``None``, ``...`` and Python bools none)."""
    if isinstance(k, Tensor):
        return k.ndim if k.dtype.np.kind == "b" else 1
    return 0 if k is None or k is Ellipsis or type(k) is _BoolAxis else 1


def _norm_key(key, shape):
    """A tuple key (index arrays as int/bool Tensors) and whether it uses advanced indexing
    (NOTE [PyTorch's indexing order]).

    Ints, and index tensors' values, are checked against the dimension they index first
    (IndexError, as PyTorch); a transform's tracer index only by dtype (its values are
    checked when its rule applies the op to arrays)."""
    if not isinstance(key, tuple):
        key = tuple(key) if type(key) is list and _sequence_as_tuple(key) else (key,)
    out = [_norm_entry(k) for k in key]
    ndim = len(shape)
    specified = sum(_used(k) for k in out)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    rest = ndim - specified  # the dims each ``...`` stands for
    n_ellipsis = sum(k is Ellipsis for k in out)
    if n_ellipsis > 1:  # PyTorch lets each one stand for ``rest`` dims
        full = []
        for k in out:
            full.extend([slice(None)] * rest if k is Ellipsis else [k])
        while sum(_used(k) for k in full) > ndim:  # full slices past the last dim
            if type(full[-1]) is not slice or full[-1] != slice(None):
                raise IndexError(f"too many indices for tensor of dimension {ndim}")
            full.pop()
        out = full
    dim = 0
    for j, k in enumerate(out):
        if k is Ellipsis:
            dim += rest
            continue
        if type(k) is int:
            size = shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {j} with size {size}")
        elif isinstance(k, Tensor) and not k._is_tracer:
            if k.dtype.np.kind == "b":
                want = tuple(shape[dim : dim + k.ndim])
                if tuple(k.shape) != want:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {dim} "
                        f"does not match the shape of the indexed tensor "
                        f"{list(shape)} at index {dim}"
                    )
            elif k.numel():
                arr = k._data
                size = shape[dim]
                lo, hi = arr.min(), arr.max()
                if lo < -size or hi >= size:
                    bad = hi if hi >= size else lo
                    raise IndexError(
                        f"index {bad} is out of bounds for dimension {dim} with size {size}"
                    )
        dim += _used(k)
    advanced = any(isinstance(k, Tensor) or type(k) is _BoolAxis for k in out)
    if not advanced and not any(k is Ellipsis for k in out):
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


def _is_index(k):
    """Whether a key entry is an index tensor's slot or a Python bool: the entries PyTorch
    indexes the view with after the basic ones (NOTE [PyTorch's indexing order])."""
    return type(k) is _Slot or type(k) is _BoolAxis


def _meta_used(k, metas):
    if type(k) is _Slot:
        nd, is_bool = metas[k.i]
        return nd if is_bool else 1
    return 0 if k is None or k is Ellipsis or type(k) is _BoolAxis else 1


def _stages(key, ndim, metas):
    """``(basic, adv)``: a key template as NumPy basic indexing of the tensor, then the
    advanced indexing of that view by ``adv`` (slots, ``_BoolAxis`` and full slices only;
    NumPy's placement rule on it is PyTorch's). ``metas[i]`` is ``(ndim, is_bool)`` of index
    operand ``i``."""
    rest = ndim - sum(_meta_used(k, metas) for k in key)
    basic, adv = [], []
    for k in key:
        if type(k) is _Slot:
            nd, is_bool = metas[k.i]
            basic.extend([slice(None)] * (nd if is_bool else 1))
            adv.append(k)
        elif type(k) is _BoolAxis:
            basic.append(None)
            adv.append(k)
        elif k is Ellipsis:
            basic.append(k)
            adv.extend([slice(None)] * rest)
        elif k is None or type(k) is slice:
            basic.append(k)
            adv.append(slice(None))
        else:  # an int: a select, no dim of the view
            basic.append(k)
    while adv and type(adv[-1]) is slice:
        adv.pop()
    if not any(k is Ellipsis for k in basic):
        basic.append(Ellipsis)
    return tuple(basic), tuple(adv)


def _split_arrays(xp, x_ndim, key, index):
    """``(basic, adv)`` of ``_stages`` with the slots filled from the arrays ``index``."""
    metas = [(a.ndim, a.dtype.kind == "b") for a in index]
    basic, adv = _stages(key, x_ndim, metas)
    adv = tuple(
        index[k.i] if type(k) is _Slot else (k.array(xp) if type(k) is _BoolAxis else k)
        for k in adv
    )
    return basic, adv


def index_array(xp, x, key, index, advanced):
    """``x[key]`` on an array, in PyTorch's order (a view for basic keys)."""
    if not advanced:
        return x[key]
    basic, adv = _split_arrays(xp, x.ndim, key, index)
    return x[basic][adv]


def put_array(xp, out, key, index, advanced, value, accumulate=False):
    """Write ``value`` into array ``out`` at ``key`` (PyTorch's order), in place; with
    ``accumulate`` repeated indices add up."""
    if not advanced:
        out[key] = value
        return
    basic, adv = _split_arrays(xp, out.ndim, key, index)
    view = out[basic]
    if accumulate:
        xp.add.at(view, adv, value)
    else:
        view[adv] = value


def _key_layout(key, ndim, metas):
    """Where the index tensors of ``key`` act on an ``ndim``-dim tensor, following PyTorch
    (NOTE [PyTorch's indexing order]); ``metas[i]`` is ``(ndim, is_bool)`` of index operand
    ``i``.

    Returns ``(first, xdim, odim, adjacent, rank, out_ndim)``: the key position of the
    first index entry and the input and output dims before it, whether the index entries
    are adjacent in the view (ints between them do not separate them; their result dims
    then stand in their place, else first), the rank of their broadcast shape (a bool mask
    counts as one dim) and the result's rank."""
    rest = ndim - sum(_meta_used(k, metas) for k in key)
    first = None
    xdim = odim = rank = 0
    at = (0, 0)
    blocks = 0
    inside = False
    for j, k in enumerate(key):
        if _is_index(k):
            if first is None:
                first, at = j, (xdim, odim)
            if not inside:
                blocks += 1
                inside = True
            if type(k) is _Slot:
                nd, is_bool = metas[k.i]
                rank = max(rank, 1 if is_bool else nd)
            else:
                rank = max(rank, 1)
            xdim += _meta_used(k, metas)
        elif k is Ellipsis:
            xdim += rest
            odim += rest
            if rest:
                inside = False
        elif k is None or type(k) is slice:
            xdim += k is not None
            odim += 1
            inside = False
        else:  # an int
            xdim += 1
    return first, at[0], at[1], blocks <= 1, rank, odim + ndim - xdim + rank


def _batch_key(key, advanced, ndim, index, idims, size):
    """A key's batched form: ``(key, index, xd, od, out_ndim)`` such that indexing a value
    with its batch dimension at ``xd`` by ``key`` (operands ``index``) gives the batched
    result with its batch dimension at ``od``; ``out_ndim`` is an example's result rank.

    With no batched index a full slice takes the batch dimension (at the front). With one,
    an ``arange(size)`` index (shaped to broadcast with the other advanced indices) is put
    just before the first advanced entry and the value's batch dimension moved to the dim
    it indexes: the advanced entries stay adjacent or not, so the batch dimension leads
    their block wherever NumPy puts it (in place, or first)."""
    metas = [(a.ndim - (d is not None), a.dtype.np.kind == "b") for a, d in zip(index, idims)]
    first, xd, od, adjacent, rank, out_ndim = _key_layout(key, ndim, metas)
    if all(d is None for d in idims):
        return (slice(None), *key), index, 0, (rank if advanced and not adjacent else 0), out_ndim
    new = []
    for a, d, (nd, is_bool) in zip(index, idims, metas):
        if d is not None:
            if is_bool:
                raise RuntimeError(
                    "vmap: indexing with a batched boolean mask is not supported: the result "
                    "shape would depend on each example's data (dynamic output shape). Use "
                    "numbagrad.where with the mask instead."
                )
            a = front(a, d)
            if nd < rank:
                a = reshape(a, (size,) + (1,) * (rank - nd) + tuple(a.shape[1:]))
        new.append(a)
    new.append(reshape(arange(size), (size,) + (1,) * rank))
    key = (*key[:first], _Slot(len(index)), *key[first:])
    return key, tuple(new), xd, (od if adjacent else 0), out_ndim


def _place_value(v, d, at, rank, size):
    """``v`` (which broadcasts to an example's result of ``rank`` dims; ``d`` its batch
    dimension) arranged to broadcast against the batched result, batch dimension at ``at``."""
    if not isinstance(v, Tensor):
        return v
    if d is None:
        if v.ndim <= rank - at:
            return v
        shape = tuple(v.shape)[max(v.ndim - rank, 0) :]
        return unsqueeze(reshape(v, (1,) * (rank - len(shape)) + shape), at)
    v = front(v, d)
    shape = tuple(v.shape)[1:]
    shape = shape[max(len(shape) - rank, 0) :]
    v = reshape(v, (size,) + (1,) * (rank - len(shape)) + shape)
    return v if at == 0 else F.movedim(v, 0, at)


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
        return "SelectBackward0" if any(isinstance(k, int) for k in key) else "AliasBackward0"

    @staticmethod
    def impl(be, x, *index, key, advanced):
        return index_array(be.xp, x, key, index, advanced)

    @staticmethod
    def batch(args, dims, key, advanced):
        """One indexing of the whole batch (``_batch_key``)."""
        x, index = args[0], args[1:]
        size = _batch_size(args, dims)
        key, index, xd, od, _ = _batch_key(
            key, advanced, x.ndim - (dims[0] is not None), index, dims[1:], size
        )
        x = _with_batch(x, dims[0], xd, size)
        return bind(Index, (x, *index), {"key": key, "advanced": advanced}), od

    @staticmethod
    def vjp(ctx, g, key, advanced):
        index = ctx.saved()
        gx = bind(
            IndexBackward,
            (g, *index),
            {"key": key, "advanced": advanced, "shape": ctx.input_shape(0)},
        )
        return (gx, *(None for _ in index))

    # by hand (NOTE [Hand-written fused rules]): an ``IndexBackward`` plus a None per index operand
    @staticmethod
    def fused_vjp(ctx, g, key, advanced):
        index = ctx.saved_arrays()
        gx = IndexBackward.impl(
            ctx.be, g, *index, key=key, advanced=advanced, shape=ctx.input_shape(0)
        )
        return (gx, *(None for _ in index))


class IndexBackward(Primitive):
    """Zeros of ``shape`` with ``g`` added at ``key`` (the adjoint of ``Index``)."""

    linearity = "linear"
    data_operands = staticmethod(_index_operands)
    saves_inputs = staticmethod(_index_operands)

    @staticmethod
    def impl(be, g, *index, key, advanced, shape):
        out = be.xp.zeros(shape, g.dtype)
        put_array(be.xp, out, key, index, advanced, g, accumulate=True)  # repeats add up
        return out

    @staticmethod
    def batch(args, dims, key, advanced, shape):
        """The adjoint of ``Index.batch``: the same batched key, into a batched zeros."""
        g, index = args[0], args[1:]
        size = _batch_size(args, dims)
        key, index, xd, od, rank = _batch_key(key, advanced, len(shape), index, dims[1:], size)
        g = _place_value(g, dims[0], od, rank, size)  # an unbatched g broadcasts
        shape = (*shape[:xd], size, *shape[xd:])
        return bind(
            IndexBackward, (g, *index), {"key": key, "advanced": advanced, "shape": shape}
        ), xd

    @staticmethod
    def vjp(ctx, gg, key, advanced, shape):
        index = ctx.saved()
        return (
            bind(Index, (gg, *index), {"key": key, "advanced": advanced}),
            *(None for _ in index),
        )


class IndexPut(Primitive):
    """``x`` with ``value`` written at ``key`` (out of place; ``__setitem__`` commits it);
    index tensors of the key are operands 2, 3, ... ``copy`` marks ``Tensor.copy_`` (the
    key ``(...,)``), for PyTorch's node name only."""

    linearity = "linear"
    data_operands = staticmethod(_put_index_operands)
    saves_inputs = staticmethod(_put_index_operands)

    @classmethod
    def node_name(cls, params):
        if params.get("copy"):
            return "CopyBackwards"
        return "IndexPutBackward0" if params["advanced"] else "CopySlices"

    @staticmethod
    def impl(be, x, value, *index, key, advanced, copy=False):
        out = x.copy()
        v = (
            value
            if type(value) is not np.ndarray or value.dtype == x.dtype
            else value.astype(x.dtype)
        )
        put_array(be.xp, out, key, index, advanced, v)
        return out

    @staticmethod
    def batch(args, dims, key, advanced, copy=False):
        """The batched key (``_batch_key``) on ``x``, ``value`` broadcast to match."""
        x, value, index = args[0], args[1], args[2:]
        size = _batch_size(args, dims)
        key, index, xd, od, rank = _batch_key(
            key, advanced, x.ndim - (dims[0] is not None), index, dims[2:], size
        )
        x = _with_batch(x, dims[0], xd, size)
        value = _place_value(value, dims[1], od, rank, size)
        return bind(
            IndexPut, (x, value, *index), {"key": key, "advanced": advanced, "copy": copy}
        ), xd

    @staticmethod
    def vjp(ctx, g, key, advanced, copy=False):
        index = ctx.saved()
        params = {"key": key, "advanced": advanced}
        gx = None
        if ctx.needs_input_grad(0):
            # A key of ``...`` and slices ``0:n`` (n past the end) with step 1 writes all of
            # x, and PyTorch then writes into x itself (fill_/copy_, not CopySlices): x's
            # gradient is zeros_like(grad), a constant, where IndexPut(g, 0) is linear in g
            # and its double backward would send 0 * (a NaN local derivative) upstream.
            # (Where x is a view PyTorch records CopySlices on its base, linear in grad;
            # the params do not say so, and a view written whole gets the constant too.)
            shape = ctx.input_shape(0)
            lead = key.index(Ellipsis) if Ellipsis in key else len(key)
            dims = [*range(lead), *range(len(shape) - len(key) + lead + 1, len(shape))]
            whole = not advanced and all(
                type(k) is slice
                and (k.start is None or (type(k.start) is int and k.start == 0))
                and (k.step is None or (type(k.step) is int and k.step == 1))
                and (k.stop is None or (type(k.stop) is int and k.stop >= shape[d]))
                for k, d in zip([k for k in key if k is not Ellipsis], dims)
            )
            gx = zeros_like(g) if whole else bind(IndexPut, (g, 0.0, *index), params)
        gv = None
        if ctx.needs_input_grad(1):
            gv = bind(Index, (g, *index), params)
            # the engine takes an input shaped like the output at its word (no reduction
            # there): a value that broadcast into ``x[key]`` gets its own shape back here
            if tuple(gv.shape) != tuple(ctx.input_shape(1)):
                gv = sum_to(gv, ctx.input_shape(1))
        return (gx, gv, *(None for _ in index))


_SCALAR_NAMES = {
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
}


def check_put_dtype(x, key, advanced, value):
    """PyTorch's ``index_put_`` check for ``x[key] = value``: a tensor ``value`` written
    through index tensors has ``x``'s dtype, unless it is one element written through one
    bool mask (PyTorch then fills through ``masked_fill_``, casting). Basic keys (``copy_``)
    cast, and so does the out-of-place ``index_put`` here."""
    if not advanced or not isinstance(value, Tensor) or value.dtype == x.dtype:
        return
    index = [k for k in key if isinstance(k, Tensor) or type(k) is _BoolAxis]
    if (
        value.numel() == 1
        and len(index) == 1
        and isinstance(index[0], Tensor)
        and index[0].dtype.np.kind == "b"
    ):
        return
    dst, src = (_SCALAR_NAMES.get(t.dtype.np.name, t.dtype.np.name) for t in (x, value))
    raise RuntimeError(
        f"Index put requires the source and destination dtypes match, got {dst} "
        f"for the destination and {src} for the source."
    )


# -- writes through views under transforms (``Primitive.view_put``, ``Tracer._assign``) ----
def _index_put_view(base, value, *rest, **params):
    return bind(IndexPut, (base, value, *rest), params)


def _reshape_put_view(base, value, shape, strict, name):
    return reshape(value, tuple(base.shape))


def _permute_put_view(base, value, perm, name):
    return bind(Permute, (value,), {"perm": _inverse(perm), "name": name})


def _diagonal_put_view(base, value, offset, dim1, dim2):
    # (a select of the new diagonal, not base + embed(value - diagonal): exact values)
    p = {"shape": tuple(base.shape), "offset": offset, "dim1": dim1, "dim2": dim2}
    on = bind(DiagonalBackward, (ones_like(value),), p)
    return F.where(on != 0, bind(DiagonalBackward, (value,), p), base)


# PyTorch's refusal of a write into memory several elements share (an expand)
OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def _expand_put_view(base, value, shape):
    if _prod(shape) != _prod(base.shape):
        raise RuntimeError(OVERLAP_ERROR)
    return reshape(value, tuple(base.shape))


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


class Zeros(Primitive):
    differentiable = False

    @staticmethod
    def impl(be, shape, dtype, device="cpu"):
        return (be if be.name == device else backend(device)).zeros(shape, dtype)  # no operand

    @staticmethod
    def batch(args, dims, shape, dtype, device="cpu"):
        """No operands, so never batched; the same zeros for every example."""
        return bind(Zeros, (), {"shape": shape, "dtype": dtype, "device": device}), None


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
        return bind(
            DiagonalBackward,
            (g,),
            {"shape": ctx.input_shape(0), "offset": offset, "dim1": dim1, "dim2": dim2},
        )

    @staticmethod
    def batch(args, dims, offset, dim1, dim2):
        """The batch dimension first (the diagonal goes last either way)."""
        x = front(args[0], dims[0])
        return bind(Diagonal, (x,), {"offset": offset, "dim1": dim1 + 1, "dim2": dim2 + 1}), 0


class DiagonalBackward(Primitive):
    linearity = "linear"

    @staticmethod
    def batch(args, dims, shape, offset, dim1, dim2):
        """The batch dimension first, as ``Diagonal.batch`` leaves it."""
        g = front(args[0], dims[0])
        return bind(
            DiagonalBackward,
            (g,),
            {"shape": (g.shape[0], *shape), "offset": offset, "dim1": dim1 + 1, "dim2": dim2 + 1},
        ), 0

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


Index.view_put = staticmethod(_index_put_view)
Expand.view_put = staticmethod(_expand_put_view)
Reshape.view_put = staticmethod(_reshape_put_view)
Permute.view_put = staticmethod(_permute_put_view)
Diagonal.view_put = staticmethod(_diagonal_put_view)


@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal (a view) with respect to ``dim1`` and ``dim2``."""
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return bind(Diagonal, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


# -- composites on views -----------------------------------------------------------------------
def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


@public
def reshape(input, *shape):
    """Reshape (a view when the layout allows, else a copy); one dim may be -1."""
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    return bind(Reshape, (input,), {"shape": _shape_arg(shape), "strict": False, "name": "reshape"})


@public
def view(input, *shape):
    """Reshape as a view; RuntimeError when the layout needs a copy (use ``reshape``)."""
    if not shape:
        raise TypeError(
            "view() received an invalid combination of arguments - got (), but "
            "expected one of: (torch.dtype dtype), (tuple of ints size)"
        )
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return input.to(shape[0])  # view(dtype) is a reinterpreting cast in torch
    return bind(Reshape, (input,), {"shape": _shape_arg(shape), "strict": True, "name": "view"})


@public
def permute(input, *dims):
    """Reorder the dims (a view)."""
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does "
            f"not match the length of the desired ordering of dimensions i.e. "
            f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
        )
    perm = tuple(wrap_dim(d, input.ndim) for d in dims)
    if sorted(perm) != list(range(input.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return bind(Permute, (input,), {"perm": perm, "name": "permute"})


@public(aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    n = input.ndim
    if n == 0:  # a 0-d tensor takes dims -1 and 0, as PyTorch's
        wrap_dim(dim0, 1), wrap_dim(dim1, 1)
        return input
    perm = list(range(n))
    a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
    perm[a], perm[b] = perm[b], perm[a]
    return bind(Permute, (input,), {"perm": tuple(perm), "name": "transpose"})


swapaxes = swapdims = transpose


@public
def t(input):
    """Transpose a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return bind(Permute, (input,), {"perm": (1, 0), "name": "t"}) if input.ndim == 2 else input


def matrix_transpose_0d(input, name, ndim_name, advice):
    """``mT``/``mH``/``H``/``adjoint`` of a tensor of fewer than 2 dims, as PyTorch's: a
    0-d tensor is returned itself after a deprecation warning, a 1-D one raises."""
    if input.ndim == 0:
        warnings.warn(f"{name} is deprecated on 0-D tensors. {advice}", UserWarning, stacklevel=3)
        return input
    raise RuntimeError(
        f"{ndim_name} is only supported on matrices or batches of matrices. "
        f"Got {input.ndim}-D tensor."
    )


def warn_T(ndim):  # noqa: N802  (PyTorch's name)
    """PyTorch's deprecation warnings of ``Tensor.T`` on a tensor that is not 2-D."""
    if ndim == 0:
        msg = "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
    else:
        msg = (
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor."
        )
    warnings.warn(msg, UserWarning, stacklevel=4)


@public
def adjoint(input):
    """Conjugate transpose of the last two dims: for real tensors the transpose, a view (as
    ``input.mT``); for complex ones a conjugated copy (no lazy conjugate bit); a 0-d tensor
    is returned itself, a 1-D one raises.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.adjoint(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[1., 3.],
            [2., 4.]])
    """
    if input.ndim < 2:
        return matrix_transpose_0d(
            input, "adjoint()", "tensor.adjoint()", "Consider using x.conj()."
        )
    return F.conj(transpose(input, -2, -1))


@public(aliases=("moveaxis",))
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (a view)."""
    n = input.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({src} dims) should contain the same number of dims as destination "
            f"({dst} dims)"
        )
    for what, given in (("source", src), ("destination", dst)):
        wrapped = [wrap_dim(s, n) for s in given]
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({given})")
    if n == 0:  # dims 0 and -1 of a 0-d tensor: nothing moves
        return bind(Permute, (input,), {"perm": (), "name": "permute"})
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


@public
def expand(input, *sizes):
    """Broadcast singleton dims to ``sizes`` (a view; -1 keeps a size)."""
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _shape_arg(sizes)
    n = len(sizes)
    if n < input.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({n}) must be greater or "
            f"equal to the number of dimensions in the tensor ({input.ndim})"
        )
    shape = list(sizes)
    lead = n - input.ndim
    for i, s in enumerate(input.shape):
        want = shape[i + lead]
        if want == -1:
            shape[i + lead] = s
        elif s != want and s != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the "
                f"existing size ({s}) at non-singleton dimension {i + lead}.  "
                f"Target sizes: {list(sizes)}.  Tensor sizes: {list(input.shape)}"
            )
    shape = tuple(shape)
    if shape == tuple(input.shape):
        return input
    return bind(Expand, (input,), {"shape": shape})


@public
def broadcast_to(input, shape):
    """``expand`` to ``shape``."""
    return expand(input, tuple(shape))


@public
def expand_as(input, other):
    """``expand`` to ``other``'s shape."""
    return expand(input, tuple(other.shape))


@public
def sum_to(input, shape):
    """Sum ``input`` down to ``shape`` (the adjoint of broadcasting)."""
    shape = tuple(shape)
    if tuple(input.shape) == shape:
        return input
    return bind(SumTo, (input,), {"shape": shape})


@public
def squeeze(input, dim=None):
    """Remove size-1 dims (all of them, or those in ``dim``)."""
    if dim is None:
        shape = tuple(s for s in input.shape if s != 1)
    else:
        dims = norm_dims(dim, input.ndim)  # a 0-d tensor has dims -1 and 0, as in PyTorch
        shape = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
    return bind(Reshape, (input,), {"shape": shape, "strict": False, "name": "squeeze"})


@public
def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    d = wrap_dim(dim, input.ndim + 1)
    shape = list(input.shape)
    shape.insert(d, 1)
    return bind(Reshape, (input,), {"shape": tuple(shape), "strict": False, "name": "unsqueeze"})


@public
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one."""
    if input.ndim == 0:  # dims -1 and 0 are accepted, as PyTorch's
        wrap_dim(start_dim, 1), wrap_dim(end_dim, 1)
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = (*input.shape[:s], _prod(input.shape[s : e + 1]), *input.shape[e + 1 :])
    return reshape(input, shape)  # sizes spelled out: -1 is ambiguous with no elements


@public
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes``."""
    if input.ndim == 0:
        raise RuntimeError(
            f"unflatten got an unexpected error:\nDimension specified as {dim} "
            f"but tensor has no dimensions"
        )
    d = wrap_dim(dim, input.ndim)
    sizes = [int(v) for v in sizes]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    n = input.shape[d]
    if -1 in sizes:  # inferred here: reshape cannot infer it when the tensor is empty
        known = _prod(v for v in sizes if v != -1)
        if known == 0 or n % known:
            raise RuntimeError(
                f"unflatten: Provided sizes {sizes} don't multiply up to the "
                f"size of dim {dim} ({n}) in the input tensor"
            )
        sizes[sizes.index(-1)] = n // known
    if _prod(sizes) != n:
        raise RuntimeError(
            f"unflatten: Provided sizes {sizes} don't multiply up to the size "
            f"of dim {dim} ({n}) in the input tensor"
        )
    shape = (*input.shape[:d], *sizes, *input.shape[d + 1 :])  # (splitting a dim: a view)
    return bind(Reshape, (input,), {"shape": shape, "strict": True, "name": "view"})


@public
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


@public
def select(input, dim, index):
    """The slice at ``index`` along ``dim``, that dimension removed (a view)."""
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(input.shape)} at dimension {d}"
        )
    return getitem(input, (slice(None),) * d + (index % n,))


@public
def split(tensor, split_size_or_sections, dim=0):
    """Split into chunks of ``split_size`` (int) or of the given section sizes (list)."""
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={size}"
            )
        if size == 0 and n:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins_sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} "
                f"(input tensor's size at dimension {d}), but got "
                f"split_sizes={sizes}"
            )
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


@public
def chunk(input, chunks, dim=0):
    """Split into ``chunks`` nearly equal pieces (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:  # as PyTorch: ``chunks`` empty pieces (a split of size 0 would give one)
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-n // chunks), d)


@public
def unbind(input, dim=0):
    """The slices along ``dim``, that dimension removed: a tuple of views.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.unbind(numbagrad.tensor([[1, 2], [3, 4]]), dim=1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def _size_args(sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return tuple(int(v) for v in sizes)


def repeat(input, *sizes):
    """``Tensor.repeat``: tile ``input`` ``sizes[i]`` times along each dimension; ``sizes``
    may add leading dimensions but not have fewer entries than ``input`` has dimensions.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    reps = _size_args(sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than "
            "number of dimensions of tensor"
        )
    return F.tile(input, reps)


def sum_to_size(input, *size):
    """``Tensor.sum_to_size``: sum ``input`` down to ``size``, which must broadcast to it.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    shape = _size_args(size)
    if not is_expandable_to(shape, tuple(input.shape)):
        raise RuntimeError(
            f"size {{{list(shape)}}} is not expandable to size {{{list(input.shape)}}}."
        )
    return sum_to(input, shape)


def unfold(input, dimension, size, step):
    """``Tensor.unfold``: the windows of ``size`` elements along ``dimension``, ``step``
    apart; that dimension becomes the number of windows and a last dimension of ``size`` is
    added.

    NOTE: a copy gathered by index where PyTorch returns a strided view: values and
    gradients are the same (the gather's gradient sums overlapping windows), but writing
    into the result does not write into ``input``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.arange(5.0).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    nd = input.ndim
    d = wrap_dim(dimension, max(nd, 1))
    n = input.shape[d] if nd else 1
    size, step = int(size), int(step)
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return narrow(reshape(input, (1,)), 0, 0, size)  # (size is 0 or 1 here)
    count = (n - size) // step + 1
    starts = arange(0, count * step, step, dtype=_INT64)
    index = reshape(reshape(starts, (count, 1)) + arange(size, dtype=_INT64), (-1,))
    out = F.index_select(input, d, index)  # (ops/gather_scatter.py)
    shape = tuple(input.shape)
    out = reshape(out, (*shape[:d], count, size, *shape[d + 1 :]))
    return movedim(out, d + 1, -1)


__all__ = [
    "IndexOutOfRangeError",
    "fill_key",
    "getitem",
    "index_put",
    "is_expandable_to",
    "split_key",
    "sum_to_array",
]
