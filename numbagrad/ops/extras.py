"""Small PyTorch names scripts use (issue 27, "a tail of small names"), composed of the other
ops: flips and splits along fixed dims, ``diagflat``, ``broadcast_shapes``, the infinity
tests, ``rsub``, ``addbmm``, ``ldexp``, the ``*_scatter`` ops, ``index_put`` and the
predicates ``is_nonzero``/``is_same_size``/``is_signed``. Each binds only existing
primitives, so its gradients, forward mode and vmap come from theirs."""

from __future__ import annotations

import builtins
import math
import warnings

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import arange, ones_like
from numbagrad._tensor import Size, Tensor, _wrap_dim
from numbagrad.ops._op import bind
from numbagrad.ops._public import public
from numbagrad.ops.shape import IndexBackward, IndexPut, _norm_key, check_put_dtype, split_key

__all__: list = []


def _need_tensor(fn, arg, value, pos=1):
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(value).__name__}"
        )


# -- flips and splits along fixed dims --------------------------------------------------------
@public
def fliplr(input):
    """Reverse the order of the columns (dim 1); ``input`` must be at least 2-D. A copy,
    as PyTorch's.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.fliplr(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[2., 1.],
            [4., 3.]])
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return F.flip(input, (1,))


@public
def flipud(input):
    """Reverse the order of the rows (dim 0); ``input`` must be at least 1-D. A copy.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.flipud(numbagrad.tensor([1.0, 2.0, 3.0]))
    tensor([3., 2., 1.])
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return F.flip(input, (0,))


def _split(name, input, sections, dim, min_ndim):
    if input.ndim < min_ndim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a "
            f"tensor with {input.ndim} dimensions!"
        )
    if isinstance(sections, int) and not isinstance(sections, bool):
        size = input.shape[dim]
        if sections == 0 or size % sections != 0:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!"
            )
    return F.tensor_split(input, sections, dim)


@public
def hsplit(input, indices_or_sections):
    """Split into views along the columns: dim 1, or dim 0 of a 1-D tensor
    (:func:`tensor_split` with an even split required for an int).

    Examples
    --------
    >>> import numbagrad
    >>> [t.tolist() for t in numbagrad.hsplit(numbagrad.arange(4.0).reshape(1, 4), 2)]
    [[[0.0, 1.0]], [[2.0, 3.0]]]
    """
    if input.ndim == 0:
        raise RuntimeError(
            "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor "
            "with 0 dimensions!"
        )
    return _split("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


@public
def vsplit(input, indices_or_sections):
    """Split into views along dim 0 of an at least 2-D tensor (:func:`tensor_split`;
    an int must divide the size).

    Examples
    --------
    >>> import numbagrad
    >>> [t.shape for t in numbagrad.vsplit(numbagrad.zeros(4, 2), [1, 3])]
    [numbagrad.Size([1, 2]), numbagrad.Size([2, 2]), numbagrad.Size([1, 2])]
    """
    return _split("vsplit", input, indices_or_sections, 0, 2)


@public
def dsplit(input, indices_or_sections):
    """Split into views along dim 2 of an at least 3-D tensor (:func:`tensor_split`;
    an int must divide the size).

    Examples
    --------
    >>> import numbagrad
    >>> [t.shape for t in numbagrad.dsplit(numbagrad.zeros(1, 2, 4), 2)]
    [numbagrad.Size([1, 2, 2]), numbagrad.Size([1, 2, 2])]
    """
    return _split("dsplit", input, indices_or_sections, 2, 3)


@public
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on its ``offset`` diagonal.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.diagflat(numbagrad.tensor([[1.0, 2.0]]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    return F.diag(F.reshape(input, (-1,)), offset)


# -- shapes -----------------------------------------------------------------------------------
@public(method=False)
def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (ints count as 1-D shapes), as a
    :class:`Size`, without making tensors.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.broadcast_shapes((2, 1), (3,))
    numbagrad.Size([2, 3])
    """
    norm = []
    for s in shapes:
        if isinstance(s, int) and not isinstance(s, bool):
            s = (s,)
        elif not isinstance(s, (tuple, list)):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}"
            )
        s = tuple(int(n) for n in s)
        if any(n < 0 for n in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        norm.append(s)
    rank = max((len(s) for s in norm), default=0)
    out = [1] * rank
    for i, s in enumerate(norm):
        for j, n in enumerate(s):
            at = rank - len(s) + j
            if n == out[at] or n == 1:
                continue
            if out[at] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at {j - len(s)}! "
                    f"Mismatching argument at index {i} had {s}; but expected shape should "
                    f"be broadcastable to {out}"
                )
            out[at] = n
    return Size(out)


# -- elementwise ------------------------------------------------------------------------------
def _inf_test(name, input, sign):
    _need_tensor(name, "input", input)
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} does not support complex inputs.")
    if not input.dtype.is_floating_point:
        return F.ne(input, input)  # (an integer equals itself: all False)
    return F.eq(input, sign * math.inf)


@public
def isposinf(input):
    """Where ``input`` is positive infinity (all False for integer and bool tensors).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.isposinf(numbagrad.tensor([1.0, float("inf"), -float("inf")]))
    tensor([False,  True, False])
    """
    return _inf_test("isposinf", input, 1)


@public
def isneginf(input):
    """Where ``input`` is negative infinity (all False for integer and bool tensors).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.isneginf(numbagrad.tensor([1.0, float("inf"), -float("inf")]))
    tensor([False, False,  True])
    """
    return _inf_test("isneginf", input, -1)


@public(method=False)
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (:func:`sub` with the operands swapped).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.rsub(numbagrad.tensor([1.0, 2.0]), 3, alpha=2)
    tensor([ 1., -1.])
    """
    if alpha == 1:
        return F.sub(other, input)
    return F.sub(other, F.mul(input, alpha))


@public(inplace=True)
def ldexp(input, other):
    """``input * 2 ** other``; integer operands give the default float dtype. (The
    gradient is ``2 ** other`` for negative integer exponents too, where PyTorch's
    ``LdexpBackward0`` computes ``2 ** other`` in integers and gives 0.)

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.ldexp(numbagrad.tensor([1.0, 3.0]), numbagrad.tensor([2, 1]))
    tensor([4., 6.])
    """
    return F.mul(input, F.pow(2.0, other))


# -- products ---------------------------------------------------------------------------------
@public(method=False)
def chain_matmul(*matrices):
    """The product of the 2-D ``matrices`` (deprecated in PyTorch, with its warning:
    use :func:`numbagrad.linalg.multi_dot`).

    Examples
    --------
    >>> import warnings, numbagrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     numbagrad.chain_matmul(numbagrad.eye(2), numbagrad.tensor([[1.0], [2.0]]))
    tensor([[1.],
            [2.]])
    """
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
        "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
        "rather than multiple parameters.",
        UserWarning,
        stacklevel=2,
    )
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return F.clone(matrices[0])
    out = matrices[0]
    for m in matrices[1:]:
        out = F.mm(out, m)
    return out


@public(inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (one :func:`addmm` of the
    batches laid side by side).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.addbmm(numbagrad.zeros(1, 1), numbagrad.ones(3, 1, 2), numbagrad.ones(3, 2, 1))
    tensor([[6.]])
    """
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, k = batch1.shape
    b2, k2, p = batch2.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    m1 = F.reshape(F.permute(batch1, (1, 0, 2)), (n, b * k))
    m2 = F.reshape(batch2, (b * k, p))
    return F.addmm(input, m1, m2, beta=beta, alpha=alpha)


# -- writes of a slice, a selection, a diagonal, index tensors (out of place) -----------------
def _check_src(src, want):
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(want)}"
        )


def _put(input, key, src):
    k, advanced = _norm_key(key, input.shape)
    template, index = split_key(k)
    return bind(IndexPut, (input, src, *index), {"key": template, "advanced": advanced})


@public
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``src`` written into ``input[..., start:end:step, ...]`` (the slice
    along ``dim``), out of place; ``src`` has the slice's shape.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.slice_scatter(numbagrad.zeros(4), numbagrad.ones(2), start=1, end=3)
    tensor([0., 1., 1., 0.])
    """
    _need_tensor("slice_scatter", "src", src, 2)
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.ndim)
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * dim + (slice(start, end, step),)
    shape = list(input.shape)
    shape[dim] = len(builtins.range(*key[dim].indices(shape[dim])))
    _check_src(src, shape)
    return _put(input, key, src)


@public
def select_scatter(input, src, dim, index):
    """``input`` with ``src`` written into ``input.select(dim, index)``, out of place.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.select_scatter(numbagrad.zeros(2, 2), numbagrad.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    _need_tensor("select_scatter", "src", src, 2)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} "
            f"at dimension {dim}"
        )
    key = (slice(None),) * dim + (int(index),)
    _check_src(src, [n for d, n in enumerate(input.shape) if d != dim])
    return _put(input, key, src)


@public
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``src`` written onto ``input.diagonal(offset, dim1, dim2)``, out of
    place; ``src`` has the diagonal's shape (its last dim runs along the diagonal).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.diagonal_scatter(numbagrad.zeros(2, 2), numbagrad.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _need_tensor("diagonal_scatter", "src", src, 2)
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = input.shape[d1], input.shape[d2]
    n = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    _check_src(src, [m for d, m in enumerate(input.shape) if d not in (d1, d2)] + [n])
    rows = arange(n, device=input.device) + max(-offset, 0)
    cols = arange(n, device=input.device) + max(offset, 0)
    key = [slice(None)] * input.ndim
    key[d1], key[d2] = rows, cols
    # where PyTorch's indexing puts the diagonal dim: in place of two adjacent index dims,
    # else first (NOTE [PyTorch's indexing order] in ops/shape.py)
    at = min(d1, d2) if abs(d1 - d2) == 1 else 0
    return _put(input, tuple(key), F.movedim(src, -1, at))


def _index_key(name, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"{name}(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}"
        )
    for i in indices:
        if i is not None and not isinstance(i, Tensor):
            raise TypeError(
                f"{name}(): argument 'indices' must be tuple of Tensors, not {type(i).__name__}"
            )
    return tuple(slice(None) if i is None else i for i in indices)


@public(inplace=True)
def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written (with ``accumulate``, added: repeated indices add
    up) at ``input[indices]``, out of place; ``indices`` is a tuple of index tensors
    (``None`` for a whole dim) and ``values`` has ``input``'s dtype.

    Examples
    --------
    >>> import numbagrad
    >>> i = (numbagrad.tensor([0, 0, 2]),)
    >>> numbagrad.index_put(numbagrad.zeros(3), i, numbagrad.ones(3), accumulate=True)
    tensor([2., 0., 1.])
    """
    key = _index_key("index_put", indices)
    if not isinstance(values, Tensor):
        raise TypeError(
            f"index_put(): argument 'values' (position 3) must be Tensor, not "
            f"{type(values).__name__}"
        )
    k, advanced = _norm_key(key, input.shape)
    check_put_dtype(input, k, advanced or True, values)
    template, index = split_key(k)
    params = {"key": template, "advanced": advanced}
    if not accumulate:
        return bind(IndexPut, (input, values, *index), params)
    shape = tuple(F.getitem(input.detach(), key).shape)
    try:
        v = F.expand(values, shape)
    except RuntimeError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast "
            f"to indexing result of shape {list(shape)}"
        ) from None
    sparams = {**params, "shape": tuple(input.shape)}
    added = bind(IndexBackward, (v, *index), sparams)
    # only the indexed entries change: ``input + 0`` elsewhere would turn a -0.0 into +0.0
    touched = bind(IndexBackward, (ones_like(v.detach()), *index), sparams) != 0
    return F.where(touched, F.add(input, added), input)


# -- predicates -------------------------------------------------------------------------------
@public
def is_nonzero(input):
    """Whether the one-element ``input`` is not zero (PyTorch's errors for none or more).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.is_nonzero(numbagrad.tensor([[0.5]]))
    True
    """
    _need_tensor("is_nonzero", "input", input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


@public
def is_same_size(input, other):
    """Whether both tensors have the same shape.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.is_same_size(numbagrad.zeros(2, 3), numbagrad.ones(2, 3))
    True
    """
    _need_tensor("is_same_size", "input", input)
    _need_tensor("is_same_size", "other", other, 2)
    return tuple(input.shape) == tuple(other.shape)


@public
def is_signed(input):
    """Whether ``input``'s dtype is signed (all but bool here).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.is_signed(numbagrad.tensor([True])), numbagrad.is_signed(numbagrad.tensor([1]))
    (False, True)
    """
    _need_tensor("is_signed", "input", input)
    return input.dtype.is_signed


# -- type names and the deprecated inclusive range --------------------------------------------
@public(method=False)
def typename(obj, /):
    """The fully qualified name of ``obj``'s type: a tensor's :meth:`Tensor.type`
    (``"torch.FloatTensor"``), else ``module.qualname`` (builtins bare).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.typename(numbagrad.tensor([1, 2])), numbagrad.typename(3)
    ('torch.LongTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` *inclusive* by ``step`` (deprecated, with PyTorch's
    warning: use :func:`arange`, whose end is exclusive); the default float dtype unless
    ``dtype`` is given.

    Examples
    --------
    >>> import warnings, numbagrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     numbagrad.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, Tensor):
            v = v.item()
        if not isinstance(v, (int, float)) or isinstance(v, complex):
            raise TypeError(f"range(): argument '{name}' must be Number, not {type(v).__name__}")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    dt = D.get_default_dtype() if dtype is None else dtype
    if not dt.is_floating_point and dt.is_signed:  # an integer dtype: integer bounds
        start, end, step = int(start), int(end), int(step)
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    count = math.floor((end - start) / step) + 1
    out = arange(count, dtype=D.float64, device=device) * step + start
    return out.to(dt).requires_grad_(requires_grad)


range = public(_range, name="range", method=False)


# -- unravel_index --------------------------------------------------------------------------------
@public(method=False)
def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of the flat ``indices`` (a tuple of int64
    tensors, one per dim); indices outside ``[0, numel)`` wrap around, as PyTorch's.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.unravel_index(numbagrad.tensor([4, 1]), (2, 3))
    (tensor([1, 0]), tensor([1, 1]))
    """
    if not isinstance(indices, Tensor):
        indices = F.tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or not indices.dtype.is_signed:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    idx = indices.to(D.int64)
    out = []
    for s in reversed(shape):
        out.append(F.remainder(idx, s))
        idx = F.floor_divide(idx, s)
    return tuple(reversed(out))


# -- gradient ---------------------------------------------------------------------------------
def _along(t, dim, start, stop):
    return F.narrow(t, dim, start, stop - start)


def _shaped(v, dim, ndim):
    """A 1-D tensor ``v`` shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    return F.reshape(v, tuple(-1 if d == dim else 1 for d in builtins.range(ndim)))


def _gradient_dim(f, dim, h, edge_order):
    n = f.shape[dim]
    nd = f.ndim
    if isinstance(h, Tensor):  # coordinates
        dx = F.diff(h)
        dx1, dx2 = _along(dx, 0, 0, n - 2), _along(dx, 0, 1, n - 1)
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        inner = (
            _shaped(a, dim, nd) * _along(f, dim, 0, n - 2)
            + _shaped(b, dim, nd) * _along(f, dim, 1, n - 1)
            + _shaped(c, dim, nd) * _along(f, dim, 2, n)
        )
        f0, f1 = _along(f, dim, 0, 1), _along(f, dim, 1, 2)
        g2, g1 = _along(f, dim, n - 2, n - 1), _along(f, dim, n - 1, n)
        if edge_order == 1:
            first = (f1 - f0) / dx[0]
            last = (g1 - g2) / dx[n - 2]
        else:
            f2, g3 = _along(f, dim, 2, 3), _along(f, dim, n - 3, n - 2)
            d1, d2 = dx[0], dx[1]
            first = (
                -(2 * d1 + d2) / (d1 * (d1 + d2)) * f0
                + (d1 + d2) / (d1 * d2) * f1
                - d1 / (d2 * (d1 + d2)) * f2
            )
            d1, d2 = dx[n - 3], dx[n - 2]
            last = (
                d2 / (d1 * (d1 + d2)) * g3
                - (d2 + d1) / (d1 * d2) * g2
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * g1
            )
        return F.cat([first, inner, last], dim)
    inner = (_along(f, dim, 2, n) - _along(f, dim, 0, n - 2)) / (2 * h)
    f0, f1 = _along(f, dim, 0, 1), _along(f, dim, 1, 2)
    g2, g1 = _along(f, dim, n - 2, n - 1), _along(f, dim, n - 1, n)
    if edge_order == 1:
        first, last = (f1 - f0) / h, (g1 - g2) / h
    else:
        f2, g3 = _along(f, dim, 2, 3), _along(f, dim, n - 3, n - 2)
        first = (-1.5 * f0 + 2 * f1 - 0.5 * f2) / h
        last = (0.5 * g3 - 2 * g2 + 1.5 * g1) / h
    return F.cat([first, inner, last], dim)


@public(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimate the derivative of ``input`` along each of ``dim`` (all dims by default) by
    central differences inside and one-sided differences of order ``edge_order`` (1 or 2)
    at the edges, as NumPy's ``gradient``; differentiable. ``spacing`` is one number for
    every dim, a number per dim, or a 1-D coordinate tensor per dim. Returns a tuple, one
    tensor per dim.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.gradient(numbagrad.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    >>> numbagrad.gradient(numbagrad.tensor([1.0, 4.0, 9.0, 16.0]), spacing=2.0, edge_order=2)
    (tensor([1., 2., 3., 4.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(builtins.range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, input.ndim) for d in dims]
    if isinstance(spacing, (tuple, list)):
        spacing = list(spacing)
        if dim is None and len(spacing) != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {input.ndim}', since dim argument was not "
                f"given, but got a list of length {len(spacing)}"
            )
        if len(spacing) != len(dims):
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                f"and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}."
            )
    else:
        if isinstance(spacing, Tensor) and spacing.ndim != 0:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of tensors"
            )
        spacing = [spacing] * len(dims)
    if not input.dtype.is_floating_point and not input.dtype.is_complex:
        input = input.to(D.get_default_dtype())
    out = []
    for d, h in zip(dims, spacing):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
        if isinstance(h, Tensor) and h.ndim == 1:
            if h.shape[0] != input.shape[d]:
                raise RuntimeError(
                    f"torch.gradient expected each tensor to be on the same device and the "
                    f"coordinates of dimension {d} to have {input.shape[d]} values, got "
                    f"{h.shape[0]}"
                )
        elif isinstance(h, Tensor):
            h = h.item()
        out.append(_gradient_dim(input, d, h, edge_order))
    return tuple(out)
