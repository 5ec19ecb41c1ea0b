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

from numbagrad import kernels
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Op, bind
from numbagrad.ops._util import as_tensor_arg, norm_dims, wrap_dim

KI = kernels.module("index")


class IndexOutOfRangeError(IndexError, RuntimeError):
    """An index outside its dimension. An ``IndexError``, as the issue asks, and also a
    ``RuntimeError``, which is what PyTorch raises from ``gather``/``index_select``, so
    scripts catching either keep working."""


def _check_index(name, idx, size):
    """``IndexOutOfRangeError`` naming the op when an index falls outside ``[0, size)``."""
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {idx.dtype}")
    if idx.size:
        flat = np.ascontiguousarray(idx).reshape(-1)
        bad = KI.first_out_of_range(flat.astype(np.int64, copy=False), size)
        if bad >= 0:
            raise IndexOutOfRangeError(f"{name}(): index {flat[bad]} is out of bounds for "
                                       f"dimension with size {size}")


# -- views -------------------------------------------------------------------------------------
class Reshape(Op):
    view = True

    @staticmethod
    def forward(x, shape, strict):
        if strict:
            try:
                return np.reshape(x, shape, copy=False)
            except ValueError:
                if np.prod(shape, dtype=np.int64) != x.size and -1 not in shape:
                    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                                       f"{x.size}") from None
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.") from None
        try:
            return np.reshape(x, shape)
        except ValueError:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                               f"{x.size}") from None

    def _post_record(self, args, outs):
        self.in_shape = args[0]._data.shape

    def vjp(self, g):
        return reshape(g, self.in_shape)

    def fused_vjp(self, g):
        return np.reshape(g, self.in_shape)


class Permute(Op):
    view = True

    @staticmethod
    def forward(x, perm):
        return np.transpose(x, perm)

    def vjp(self, g):
        return permute(g, tuple(np.argsort(self.perm)))

    def fused_vjp(self, g):
        return np.transpose(g, np.argsort(self.perm))


# The same ops under the names PyTorch's grad_fn shows for them.
class Transpose(Permute):
    pass


class T(Permute):
    pass


class View(Reshape):
    pass


class Squeeze(Reshape):
    pass


class Unsqueeze(Reshape):
    pass


class Expand(Op):
    view = True

    @staticmethod
    def forward(x, shape):
        return np.broadcast_to(x, shape)

    def vjp(self, g):
        return g  # the engine sums the broadcast gradient back to the input's shape

    fused_vjp = vjp


class SumTo(Op):
    """Sum a broadcast gradient back to ``shape`` (the engine's one reduction point)."""

    @staticmethod
    def forward(x, shape):
        return sum_to_array(x, shape)

    def _post_record(self, args, outs):
        self.in_shape = args[0]._data.shape

    def vjp(self, g):
        return expand(g, self.in_shape)

    def fused_vjp(self, g):
        return np.broadcast_to(g, self.in_shape)


def sum_to_array(x, shape):
    """Reduce ndarray ``x`` by summation to ``shape`` (which ``x`` broadcasts from)."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    if axes:
        x = np.sum(x, axis=axes, keepdims=True)
    return x.reshape(shape) if lead or x.shape != shape else x


def is_expandable_to(shape, desired):
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient can be summed back)."""
    if len(shape) > len(desired):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(shape), reversed(desired)))


# -- indexing ----------------------------------------------------------------------------------
def _norm_key(key, shape):
    """A tuple key with tensors/lists as arrays; whether it uses advanced indexing."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    advanced = False
    dim = 0
    for k in key:
        if isinstance(k, Tensor):
            k = k._data
        elif isinstance(k, (list, np.ndarray)) or (isinstance(k, bool)):
            k = np.asarray(k)
        if isinstance(k, np.ndarray):
            if k.dtype.kind == "b":
                advanced = True
                dim += max(k.ndim, 1)
            elif k.dtype.kind in "iu":
                advanced = True
                if dim < len(shape) and k.size:
                    size = shape[dim]
                    if k.min() < -size or k.max() >= size:
                        bad = k.max() if k.max() >= size else k.min()
                        raise IndexError(f"index {bad} is out of bounds for dimension {dim} "
                                         f"with size {size}")
                dim += 1
            elif k.dtype.kind == "f" and k.ndim == 0:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and "
                                 "long or byte Variables are valid indices (got float)")
            else:
                raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                                 f"got {k.dtype}")
        elif isinstance(k, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got float)")
        elif k is not None and k is not Ellipsis:
            dim += 1
        out.append(k)
    if not advanced and Ellipsis not in out:
        out.append(Ellipsis)  # keeps x[0, 1] a 0-d *view*, not a NumPy scalar copy
    return tuple(out), advanced


class Index(Op):
    view = True

    def name(self):
        # PyTorch's names: Select (ints), Slice (slices), Index (advanced indexing)
        if self.advanced:
            return "IndexBackward0"
        if any(isinstance(k, slice) for k in self.key):
            return "SliceBackward0"
        return "SelectBackward0" if any(isinstance(k, int) for k in self.key) else \
            "AliasBackward0"

    @staticmethod
    def forward(x, key, advanced):
        return x[key]

    def _post_record(self, args, outs):
        self.in_shape = args[0]._data.shape

    def vjp(self, g):
        return bind(IndexBackward, (g,), {"key": self.key, "advanced": self.advanced,
                                          "shape": self.in_shape})

    def fused_vjp(self, g):
        return IndexBackward.forward(g, self.key, self.advanced, self.in_shape)


class IndexBackward(Op):
    """Zeros of ``shape`` with ``g`` added at ``key`` (the adjoint of ``Index``)."""

    @staticmethod
    def forward(g, key, advanced, shape):
        out = np.zeros(shape, g.dtype)
        if advanced:
            np.add.at(out, key, g)  # repeated indices accumulate
        else:
            out[key] = g
        return out

    def vjp(self, gg):
        return bind(Index, (gg,), {"key": self.key, "advanced": self.advanced})


class IndexPut(Op):
    """``x`` with ``value`` written at ``key`` (out of place; ``__setitem__`` commits it)."""

    def name(self):
        return "IndexPutBackward0" if self.advanced else "CopySlices"

    @staticmethod
    def forward(x, value, key, advanced):
        out = x.copy()
        v = value if type(value) is not np.ndarray or value.dtype == x.dtype \
            else value.astype(x.dtype)
        out[key] = v
        return out

    def _post_record(self, args, outs):
        self.x_shape = args[0]._data.shape

    def vjp(self, g):
        gx = gv = None
        if self._next[0] is not None:
            gx = bind(IndexPut, (g, 0.0), {"key": self.key, "advanced": self.advanced})
        if self._next[1] is not None:
            gv = bind(Index, (g,), {"key": self.key, "advanced": self.advanced})
        return gx, gv


def getitem(input, key):
    """``input[key]``: ints, slices (with steps), ``None``, ``...``, bool masks, int tensors."""
    k, advanced = _norm_key(key, input.shape)
    return bind(Index, (input,), {"key": k, "advanced": advanced})


def index_put(input, key, value):
    """Out-of-place ``input[key] = value``."""
    k, advanced = _norm_key(key, input.shape)
    if not isinstance(value, (Tensor, int, float, bool)):
        value = as_tensor_arg(value, "value")
    return bind(IndexPut, (input, value), {"key": k, "advanced": advanced})


class Gather(Op):
    @staticmethod
    def forward(x, dim, index):
        return np.take_along_axis(x[_gather_window(x, dim, index)], index, axis=dim)

    def _post_record(self, args, outs):
        self.in_shape = args[0]._data.shape

    def vjp(self, g):
        z = bind(Zeros, (), {"shape": self.in_shape, "dtype": g._data.dtype})
        return scatter_add(z, self.dim, Tensor._make(self.index), g)


class Zeros(Op):
    differentiable = False

    @staticmethod
    def forward(shape, dtype):
        return np.zeros(shape, dtype)


def _gather_window(x, dim, index):
    return tuple(slice(None) if d == dim else slice(0, index.shape[d]) for d in range(x.ndim))


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
    index = as_tensor_arg(index, "index")._data
    d = wrap_dim(dim, input.ndim)
    _check_gather("gather", input._data, d, index)
    return bind(Gather, (input,), {"dim": d, "index": index})


class ScatterAdd(Op):
    def _post_record(self, args, outs):
        self.src_shape = args[1]._data.shape

    @staticmethod
    def forward(x, src, dim, index):
        out = x.copy()
        src = src[_gather_window(src, dim, index)]
        idx = list(np.indices(index.shape, sparse=True))
        idx[dim] = index
        if src.dtype != out.dtype:
            src = src.astype(out.dtype)
        np.add.at(out, tuple(idx), src)
        return out

    def vjp(self, g):
        gsrc = None
        if self._next[1] is not None:
            gsrc = bind(Gather, (g,), {"dim": self.dim, "index": self.index})
            src_shape = self.src_shape
            if tuple(gsrc.shape) != src_shape:  # src may be larger than index
                pad = bind(Zeros, (), {"shape": src_shape, "dtype": g._data.dtype})
                gsrc = index_put(pad, _gather_window(pad._data, self.dim, self.index), gsrc)
        return g, gsrc


def scatter_add(input, dim, index, src):
    """Out of place: ``input`` with ``src`` added at ``index`` along ``dim``."""
    index = as_tensor_arg(index, "index")._data
    d = wrap_dim(dim, input.ndim)
    _check_gather("scatter_add", input._data, d, index)
    for k in range(index.ndim):
        if index.shape[k] > src.shape[k]:
            raise RuntimeError(f"scatter_add(): Expected index {list(index.shape)} to be "
                               f"smaller than src {list(src.shape)} in every dimension")
    return bind(ScatterAdd, (input, src), {"dim": d, "index": index})


def take_along_dim(input, indices, dim=None):
    """Pick values along ``dim`` at ``indices`` (broadcast against ``input``)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = wrap_dim(dim, input.ndim)
    idx = as_tensor_arg(indices, "indices")._data
    if idx.ndim != input.ndim:
        raise RuntimeError("take_along_dim(): input and indices should have the same number "
                           f"of dimensions, but got {input.ndim} and {idx.ndim}")
    shp = list(np.broadcast_shapes(
        tuple(s for i, s in enumerate(input.shape) if i != d),
        tuple(s for i, s in enumerate(idx.shape) if i != d)))
    xshape = [*shp[:d], input.shape[d], *shp[d:]]
    ishape = [*shp[:d], idx.shape[d], *shp[d:]]
    _check_index("take_along_dim", idx, input.shape[d])
    x = expand(input, tuple(xshape)) if tuple(xshape) != tuple(input.shape) else input
    return gather(x, d, np.broadcast_to(idx, ishape))


def index_select(input, dim, index):
    """Select entries of ``input`` along ``dim`` at the 1-D int ``index``."""
    index = as_tensor_arg(index, "index")._data
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input.ndim)
    _check_index("index_select", index, input.shape[d] if input.ndim else 1)
    key = (slice(None),) * d + (index.reshape(-1),)
    return bind(Index, (input,), {"key": key, "advanced": True})


class Cat(Op):
    @staticmethod
    def forward(*xs, dim):
        return np.concatenate(xs, axis=dim)

    def _post_record(self, args, outs):
        self.sizes = [a.shape[self.dim] for a in args]

    def vjp(self, g):
        out = []
        start = 0
        for n in self.sizes:
            out.append(narrow(g, self.dim, start, n))
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
        from numbagrad._dtype import promote_types

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


class Flip(Op):
    @staticmethod
    def forward(x, dims):
        return np.flip(x, dims).copy()  # PyTorch's flip copies

    def vjp(self, g):
        return flip(g, self.dims)

    def fused_vjp(self, g):
        return np.flip(g, self.dims)


def flip(input, dims):
    """Reverse the order of elements along ``dims``."""
    if isinstance(dims, int):
        dims = (dims,)
    return bind(Flip, (input,), {"dims": norm_dims(dims, input.ndim)})


class Roll(Op):
    @staticmethod
    def forward(x, shifts, dims):
        return np.roll(x, shifts, dims)

    def vjp(self, g):
        neg = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return bind(Roll, (g,), {"shifts": neg, "dims": self.dims})


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


class Diagonal(Op):
    view = True

    @staticmethod
    def forward(x, offset, dim1, dim2):
        v = np.diagonal(x, offset, dim1, dim2)
        if x.flags.writeable:
            v.setflags(write=True)  # a real view: writes reach the base, as in PyTorch
        return v

    def _post_record(self, args, outs):
        self.in_shape = args[0]._data.shape

    def vjp(self, g):
        return bind(DiagonalBackward, (g,), {"shape": self.in_shape, "offset": self.offset,
                                             "dim1": self.dim1, "dim2": self.dim2})


class DiagonalBackward(Op):
    @staticmethod
    def forward(g, shape, offset, dim1, dim2):
        out = np.zeros(shape, g.dtype)
        view = np.diagonal(out, offset, dim1, dim2)
        view.setflags(write=True)
        view[...] = g
        return out

    def vjp(self, gg):
        return bind(Diagonal, (gg,), {"offset": self.offset, "dim1": self.dim1,
                                      "dim2": self.dim2})


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal (a view) with respect to ``dim1`` and ``dim2``."""
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return bind(Diagonal, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


class Tril(Op):
    fn = staticmethod(np.tril)

    @classmethod
    def forward(cls, x, diagonal):
        if x.ndim < 2:
            raise RuntimeError(f"{cls.__name__.lower()}: input tensor must have at least 2 "
                               "dimensions")
        return cls.fn(x, diagonal)

    def vjp(self, g):
        return bind(type(self), (g,), {"diagonal": self.diagonal})

    def fused_vjp(self, g):
        return self.fn(g, self.diagonal)


class Triu(Tril):
    fn = staticmethod(np.triu)


def tril(input, diagonal=0):
    """Lower triangle of the last two dims (elements above ``diagonal`` zeroed)."""
    return bind(Tril, (input,), {"diagonal": diagonal})


def triu(input, diagonal=0):
    """Upper triangle of the last two dims (elements below ``diagonal`` zeroed)."""
    return bind(Triu, (input,), {"diagonal": diagonal})


class Argsort(Op):
    differentiable = False

    @staticmethod
    def forward(x, dim, descending, stable):
        if descending:
            # stable descending order: sort the reversed axis, map back, reverse
            n = x.shape[dim] if x.ndim else 1
            r = np.flip(x, dim) if x.ndim else x
            idx = np.argsort(r, axis=dim if x.ndim else None, kind="stable")
            idx = (n - 1 - idx) if x.ndim else idx
            return np.flip(idx, dim).astype(np.int64) if x.ndim else idx.astype(np.int64)
        if x.ndim == 0:
            return np.zeros((), np.int64)
        return np.argsort(x, axis=dim, kind="stable").astype(np.int64)


def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (a stable sort)."""
    d = wrap_dim(dim, input.ndim)
    return bind(Argsort, (input,), {"dim": d, "descending": descending, "stable": stable})


def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim``; gradients flow to the values."""
    from numbagrad.ops.reduce import _MinMax

    idx = argsort(input, dim, descending, stable)
    if input.ndim == 0:
        return _MinMax((input.clone(), idx))
    return _MinMax((take_along_dim(input, idx, dim), idx))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    from numbagrad.ops.reduce import _MinMax

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
    return bind(Reshape, (input,), {"shape": _shape_arg(shape), "strict": False})


def view(input, *shape):
    """Reshape as a view; RuntimeError when the layout needs a copy (use ``reshape``)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return input.to(shape[0])  # view(dtype) is a reinterpreting cast in torch
    return bind(View, (input,), {"shape": _shape_arg(shape), "strict": True})


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
    return bind(Permute, (input,), {"perm": perm})


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    n = input.ndim
    if n == 0:
        return input
    perm = list(range(n))
    a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
    perm[a], perm[b] = perm[b], perm[a]
    return bind(Transpose, (input,), {"perm": tuple(perm)})


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return bind(T, (input,), {"perm": (1, 0)}) if input.ndim == 2 else input


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
    return bind(Permute, (input,), {"perm": tuple(perm)})


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
    return bind(Squeeze, (input,), {"shape": shape, "strict": False})


def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    d = wrap_dim(dim, input.ndim + 1)
    shape = list(input.shape)
    shape.insert(d, 1)
    return bind(Unsqueeze, (input,), {"shape": tuple(shape), "strict": False})


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


def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements: an ``(n, ndim)`` int64 tensor, or a tuple of 1-D."""
    idx = np.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in idx)
    return Tensor._make(np.stack(idx, axis=1).astype(np.int64) if idx else
                        np.zeros((0, 0), np.int64))


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` is true."""
    from numbagrad.ops.binary import where

    return where(mask, value, input)


ALL = ("reshape view permute transpose swapaxes swapdims t movedim moveaxis expand "
       "broadcast_to expand_as sum_to squeeze unsqueeze flatten unflatten narrow split chunk "
       "cat concat concatenate stack flip roll diagonal tril triu argsort sort topk gather "
       "scatter_add take_along_dim index_select nonzero masked_fill").split()
