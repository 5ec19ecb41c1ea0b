"""The wider top-level math: interpolation, stacking and grids, differences and integrals,
counting, covariance and triangle indices.

Most are composites of existing ops (so they get gradients, JVP and vmap rules for free).
The data-dependent ones (``searchsorted``, ``histc``, ``unique``) live in
``ops/searching.py``. Each public op is marked ``@public`` where it is defined (NOTE [Public
ops] in ``ops/_public.py``); the wider elementwise, binary and reduction functions live
with their families in ``unary.py``, ``binary.py`` and ``reduce.py``.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import const_ones_like as ones_like
from numbagrad._creation import tensor, zeros
from numbagrad._tensor import Tensor
from numbagrad.ops import _rules, reduce
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._util import default_float, wrap_dim

_TORCH_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
}


def _tname(dtype) -> str:
    name = np.dtype(dtype.np if isinstance(dtype, D.dtype) else dtype).name
    return _TORCH_NAMES.get(name, name)


def _tensors(args, name):
    """The tensors of ``f(*tensors)`` or ``f([tensors])``, checked."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    for i, t in enumerate(args):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{name}(): expected Tensor as element {i} in argument 0, but got "
                f"{type(t).__name__}"
            )
    return tuple(args)


# -- interpolation -----------------------------------------------------------------------------
@public(inplace=True)
def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``.

    Computed as PyTorch does (from ``end`` where ``|weight| >= 0.5``, so that ``weight = 1``
    gives ``end`` exactly); differentiable with respect to all three.

    Parameters
    ----------
    input, end : Tensor
        Floating tensors of one dtype (broadcast together).
    weight : float or Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.lerp(numbagrad.tensor([0.0, 10.0]), numbagrad.tensor([10.0, 20.0]), 0.25)
    tensor([ 2.5000, 12.5000])
    """
    if not isinstance(input, Tensor) or not isinstance(end, Tensor):
        raise TypeError("lerp(): input and end must be Tensors")
    if end.dtype is not input.dtype:
        raise RuntimeError(
            f"expected dtype {_lerp_tname(input.dtype)} for `end` but got "
            f"dtype {_lerp_tname(end.dtype)}"
        )
    if isinstance(weight, Tensor):
        if weight.ndim == 0 and weight.dtype is not input.dtype:
            # a 0-d weight of any dtype takes part in the type promotion as PyTorch's
            # TensorIterator does (a 0-d tensor of a higher kind, or all of them 0-d)
            dt = D.result_type(input, end, weight)
            input, end, weight = input.to(dt), end.to(dt), weight.to(dt)
        elif weight.dtype is not input.dtype:
            raise RuntimeError(
                f"expected dtype {_lerp_tname(input.dtype)} for `weight` "
                f"but got dtype {_lerp_tname(weight.dtype)}"
            )
    else:
        weight = float(weight)
    if not input.is_floating_point():
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(input.dtype)}'")
    return bind(Lerp, (input, end, weight), {})


def _lerp_tname(dtype) -> str:
    name = _tname(dtype).lower()
    return "long int" if name == "long" else name  # PyTorch's spelling in lerp's message


class Lerp(Primitive):
    """``lerp(input, end, weight)`` by PyTorch's formula (from ``end`` where ``|weight| >=
    0.5``), with PyTorch's rules: ``grad * (1 - weight)``, ``grad * weight`` and
    ``grad * (end - input)`` (``weight`` a tensor or a Python float)."""

    grad_fn = "LerpBackward1"
    saves_inputs = (0, 1, 2)
    saved_for = ((2,), (2,), (0, 1))  # input and end for weight's gradient, weight for theirs
    batch = classmethod(_rules.broadcast_batch)

    @staticmethod
    def impl(be, x, end, w):
        xp = be.xp
        with np.errstate(all="ignore"):  # inf - inf is NaN, as in PyTorch
            d = end - x
            if not hasattr(w, "shape"):  # a Python float: one branch
                out = x + w * d if builtins.abs(w) < 0.5 else end - d * (1 - w)
            else:
                out = xp.where(xp.abs(w) < 0.5, x + w * d, end - d * (1 - w))
        return xp.asarray(out, dtype=x.dtype)

    @staticmethod
    def vjp(ctx, g):
        x, end, w = ctx.saved()
        return (
            g * (1 - w) if ctx.needs_input_grad(0) else None,
            g * w if ctx.needs_input_grad(1) else None,
            g * (end - x) if ctx.needs_input_grad(2) else None,
        )

    @staticmethod
    def jvp(primals, tangents, out):
        """``tx (1 - w) + te w + tw (end - x)``, absent tangents skipped."""
        x, end, w = primals
        tx, te, tw = tangents
        terms = []
        if tx is not None:
            terms.append(tx * (1 - w))
        if te is not None:
            terms.append(te * w)
        if tw is not None:
            terms.append(tw * (end - x))
        if not terms:
            return None
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total


@public(inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (broadcast); differentiable.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([1.0, 2.0])
    >>> numbagrad.addcmul(x, x, numbagrad.tensor([3.0, 4.0]), value=0.5)
    tensor([2.5000, 6.0000])
    """
    if not any(isinstance(t, Tensor) and t.is_floating_point() for t in (input, tensor1, tensor2)):
        value = int(value)  # as PyTorch: the scalar takes the integral result dtype
    return input + value * tensor1 * tensor2


@public(inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (broadcast); differentiable. Integer
    ``tensor1`` and ``tensor2`` are refused, as PyTorch does.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([1.0, 2.0])
    >>> numbagrad.addcdiv(x, x, numbagrad.tensor([4.0, 4.0]), value=2)
    tensor([1.5000, 3.0000])
    """
    if not (isinstance(tensor1, Tensor) and tensor1.is_floating_point()) and not (
        isinstance(tensor2, Tensor) and tensor2.is_floating_point()
    ):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a "
            "future  release addcdiv will perform a true division of tensor1 "
            "and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
            "for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
    return input + value * tensor1 / tensor2


# -- dimensions, stacking and grids ----------------------------------------------------------
def _atleast(args, nd, name):
    ts = _tensors(args, name)
    out = []
    for t in ts:
        if t.ndim >= nd:
            out.append(t)
        elif nd == 1 or t.ndim == 0:
            out.append(F.reshape(t, (1,) * nd))
        elif nd == 2:  # (n,) -> (1, n)
            out.append(F.unsqueeze(t, 0))
        elif t.ndim == 1:  # (n,) -> (1, n, 1)
            out.append(F.reshape(t, (1, t.shape[0], 1)))
        else:  # (m, n) -> (m, n, 1)
            out.append(F.unsqueeze(t, -1))
    single = len(args) == 1 and isinstance(args[0], Tensor)
    return out[0] if single else tuple(out)


@public(method=False)
def atleast_1d(*tensors):
    """Each tensor with at least one dimension (0-d ones become shape ``(1,)``).

    Returns the tensor for one tensor argument, else a tuple.

    Examples
    --------
    >>> import numbagrad
    >>> tuple(numbagrad.atleast_1d(numbagrad.tensor(3.0)).shape)
    (1,)
    """
    return _atleast(tensors, 1, "atleast_1d")


@public(method=False)
def atleast_2d(*tensors):
    """Each tensor with at least two dimensions (``(n,)`` becomes ``(1, n)``).

    Examples
    --------
    >>> import numbagrad
    >>> tuple(numbagrad.atleast_2d(numbagrad.tensor([1.0, 2.0])).shape)
    (1, 2)
    """
    return _atleast(tensors, 2, "atleast_2d")


@public(method=False)
def atleast_3d(*tensors):
    """Each tensor with at least three dimensions (``(n,)`` becomes ``(1, n, 1)``,
    ``(m, n)`` becomes ``(m, n, 1)``).

    Examples
    --------
    >>> import numbagrad
    >>> tuple(numbagrad.atleast_3d(numbagrad.tensor([1.0, 2.0])).shape)
    (1, 2, 1)
    """
    return _atleast(tensors, 3, "atleast_3d")


def _nonempty(ts, name):
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


@public(aliases=("row_stack",), method=False)
def vstack(tensors):
    """Stack tensors vertically: :func:`cat` of their :func:`atleast_2d` along dim 0.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.vstack([numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([3.0, 4.0])])
    tensor([[1., 2.],
            [3., 4.]])
    """
    ts = _nonempty(_tensors((tensors,), "vstack"), "vstack")
    return F.cat(list(_atleast(ts, 2, "vstack")), 0)


row_stack = vstack


@public(method=False)
def hstack(tensors):
    """Stack tensors horizontally: along dim 0 for 1-D tensors, else dim 1.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.hstack([numbagrad.tensor([1.0]), numbagrad.tensor([2.0, 3.0])])
    tensor([1., 2., 3.])
    """
    ts = list(_atleast(_nonempty(_tensors((tensors,), "hstack"), "hstack"), 1, "hstack"))
    return F.cat(ts, 0 if ts[0].ndim == 1 else 1)


@public(method=False)
def dstack(tensors):
    """Stack tensors depth-wise: :func:`cat` of their :func:`atleast_3d` along dim 2.

    Examples
    --------
    >>> import numbagrad
    >>> tuple(numbagrad.dstack([numbagrad.tensor([1.0]), numbagrad.tensor([2.0])]).shape)
    (1, 1, 2)
    """
    ts = _nonempty(_tensors((tensors,), "dstack"), "dstack")
    return F.cat(list(_atleast(ts, 3, "dstack")), 2)


@public(method=False)
def column_stack(tensors):
    """Stack as columns: 0-d and 1-D tensors become ``(n, 1)`` columns, then :func:`cat`
    along dim 1.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.column_stack([numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([3.0, 4.0])])
    tensor([[1., 3.],
            [2., 4.]])
    """
    ts = _nonempty(_tensors((tensors,), "column_stack"), "column_stack")
    cols = [F.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in ts]
    return F.cat(cols, 1)


@public(method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors (0-d ones count as size 1).

    Parameters
    ----------
    *tensors : Tensor
        Or one list of tensors; all of one dtype.
    indexing : {'ij', 'xy'}, optional
        ``'ij'`` (matrix indexing, the default, with PyTorch's warning when not given) or
        ``'xy'`` (Cartesian: the first two dimensions swapped).

    Returns
    -------
    tuple of Tensor
        Broadcast views of the inputs, each of the full grid shape.

    Examples
    --------
    >>> import numbagrad
    >>> gx, gy = numbagrad.meshgrid(numbagrad.tensor([1, 2]), numbagrad.tensor([3, 4, 5]),
    ...                             indexing="xy")
    >>> gx
    tensor([[1, 2],
            [1, 2],
            [1, 2]])
    """
    ts = _tensors(tensors, "meshgrid")
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass "
            "the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if t.dtype is not ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
    flat = [F.reshape(t, (-1,)) for t in ts]
    shape = tuple(t.shape[0] for t in flat)
    grids = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = shape[i]
        grids.append(F.expand(F.reshape(t, tuple(view)), shape))
    if indexing == "xy" and len(grids) >= 2:  # Cartesian: the first two dims swapped
        grids = [F.transpose(g, 0, 1) for g in grids]
    return tuple(grids)


@public(method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views).

    Examples
    --------
    >>> import numbagrad
    >>> a, b = numbagrad.broadcast_tensors(numbagrad.tensor([[1.0], [2.0]]),
    ...                                    numbagrad.tensor([3.0, 4.0, 5.0]))
    >>> tuple(a.shape), tuple(b.shape)
    ((2, 3), (2, 3))
    """
    ts = _tensors(tensors, "broadcast_tensors")
    shape = _broadcast_shapes(*(t.shape for t in ts))
    return tuple(t if tuple(t.shape) == shape else F.expand(t, shape) for t in ts)


def _broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to (PyTorch's error when they do not)."""
    out = []
    for s in shapes:
        s = tuple(s)
        for i in range(1, len(s) + 1):
            if i > len(out):
                out.insert(0, s[-i])
            elif out[-i] == 1:
                out[-i] = s[-i]
            elif s[-i] != 1 and s[-i] != out[-i]:
                raise RuntimeError(
                    f"The size of tensor a ({out[-i]}) must match the size of "
                    f"tensor b ({s[-i]}) at non-singleton dimension "
                    f"{len(out) - i}"
                )
    return tuple(out)


@public
def tile(input, dims):
    """Repeat ``input`` ``dims[i]`` times along each dimension (missing leading entries of
    either are 1, as NumPy's and PyTorch's ``tile``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tile(numbagrad.tensor([1.0, 2.0]), (2, 2))
    tensor([[1., 2., 1., 2.],
            [1., 2., 1., 2.]])
    """
    reps = (dims,) if isinstance(dims, (int, np.integer)) else tuple(int(r) for r in dims)
    for r in reps:
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: {list(reps)}")
    n = builtins.max(len(reps), input.ndim)
    reps = (1,) * (n - len(reps)) + reps
    shape = (1,) * (n - input.ndim) + tuple(input.shape)
    # (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), then merged pairwise
    inter = tuple(v for s in shape for v in (1, s))
    full = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    out = F.expand(F.reshape(input, inter), full)
    return F.reshape(out, tuple(r * s for r, s in zip(reps, shape)))


@public
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times in place.

    Parameters
    ----------
    input : Tensor
        With ``repeats`` None, a 1-D integer tensor of counts: the result is
        ``repeat_interleave(arange(len(input)), input)``.
    repeats : int or Tensor
        One count for all, or a 1-D integer tensor with one count per slice.
    dim : int, optional
        Along which to repeat; the flattened input when None.
    output_size : int, optional
        The total length along ``dim``, checked when given.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.repeat_interleave(numbagrad.tensor([1.0, 2.0]), 2)
    tensor([1., 1., 2., 2.])
    >>> numbagrad.repeat_interleave(numbagrad.tensor([2, 0, 1]))
    tensor([0, 0, 2])
    """
    if repeats is None:
        counts = input
        if counts.ndim != 1 or counts.is_floating_point():
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        input = tensor(np.arange(counts.shape[0], dtype=np.int64), device=counts.device)
        repeats, dim = counts, 0
    if dim is None:
        input, dim = F.reshape(input, (-1,)), 0
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:  # PyTorch refuses a dim for a 0-d input (it reads it as 1-d's dim 1)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    n = input.shape[d]
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.reshape(()).item())
    if isinstance(repeats, Tensor):
        if repeats.ndim != 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.is_floating_point():
            raise RuntimeError("repeats has to be Long or Int tensor")
        # the output's size depends on the counts: read them on the host (a CUDA tensor's
        # too, as PyTorch synchronises there)
        counts = np.asarray(repeats.detach().cpu().numpy(), np.int64)
        if counts.shape[0] != n:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {counts.shape[0]} and input.size({d}) = {n}"
            )
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        total = int(counts.sum())
        _check_output_size(output_size, total)
        index = tensor(np.repeat(np.arange(n, dtype=np.int64), counts), device=input.device)
        return F.index_select(input, d, index)
    r = int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    _check_output_size(output_size, n * r)
    shape = tuple(input.shape)
    out = F.expand(F.unsqueeze(input, d + 1), (*shape[: d + 1], r, *shape[d + 1 :]))
    return F.reshape(out, (*shape[:d], n * r, *shape[d + 1 :]))


def _check_output_size(output_size, total):
    if output_size is not None and output_size != total:
        raise RuntimeError(
            f"repeat_interleave: allocated size does not match required size "
            f"(output_size={output_size}, required {total})"
        )


@public
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first toward the
    second.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.rot90(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[2., 4.],
            [1., 3.]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    k = int(k) % 4
    if k == 1:
        return F.transpose(F.flip(input, (d1,)), d0, d1)
    if k == 2:
        return F.flip(input, (d0, d1))
    if k == 3:
        return F.transpose(F.flip(input, (d0,)), d0, d1)
    return F.clone(input)


@public(method=False)
def block_diag(*tensors):
    """A block-diagonal matrix of the given blocks (0-d ones are 1x1, 1-D ones one row);
    the dtype is their promoted dtype.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.block_diag(numbagrad.tensor([[1.0, 2.0]]), numbagrad.tensor(3.0))
    tensor([[1., 2., 0.],
            [0., 0., 3.]])
    """
    ts = _tensors(tensors, "block_diag")
    blocks = []
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer "
                f"dimensions. Input {i} has {t.ndim} dimensions"
            )
        blocks.append(
            F.reshape(t, (1, 1)) if t.ndim == 0 else F.unsqueeze(t, 0) if t.ndim == 1 else t
        )
    if not blocks:
        return zeros((1, 0))
    dt = blocks[0].dtype
    for b in blocks[1:]:
        dt = D.promote_types(dt, b.dtype)
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        z = {"dtype": dt, "device": b.device}
        parts = [zeros((r, left), **z), b.to(dt), zeros((r, width - left - c), **z)]
        rows.append(F.cat(parts, 1))
        left += c
    return F.cat(rows, 0)


@public(method=False)
def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors, one combination per row (a single tensor
    is returned as it is, as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.cartesian_prod(numbagrad.tensor([1, 2]), numbagrad.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    ts = _tensors(tensors, "cartesian_prod")
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return F.stack([F.reshape(g, (-1,)) for g in grids], 1)


@public(inplace=True)
def renorm(input, p, dim, maxnorm):
    """Rescale each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` to
    norm ``maxnorm`` (PyTorch's factor ``maxnorm / (norm + 1e-7)``); differentiable through
    the norm.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.renorm(numbagrad.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if not input.is_floating_point():
        raise RuntimeError(f"renorm: expected a floating point tensor, got {_tname(input.dtype)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions"
        )
    d = wrap_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    return bind(Renorm, (input,), {"dims": others, "p": float(p), "maxnorm": float(maxnorm)})


class Renorm(Primitive):
    """``x * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1)``, ``norm`` the ``p``-norm
    over ``dims`` (keepdim), with PyTorch's ``renorm_backward`` and ``renorm_jvp`` (which
    give ``grad`` itself to the slices left as they are, whatever their norm's derivative)."""

    saves_inputs = (0,)

    @staticmethod
    def _norm(x, dims, p):
        return F.norm(x, p, dims, keepdim=True)

    @staticmethod
    def impl(be, x, dims, p, maxnorm):
        xp = be.xp
        with np.errstate(all="ignore"):
            if p == 2:
                norm = reduce.Norm2.impl(be, x, dims, True)
            else:
                norm = reduce.NormP.impl(be, x, dims, True, p)
            factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
            return xp.asarray(x * factor, dtype=x.dtype)

    @classmethod
    def vjp(cls, ctx, g, dims, p, maxnorm):
        (x,) = ctx.saved()
        norm = cls._norm(x, dims, p)
        nb = reduce.norm_backward(F.sum(x * g, dims, keepdim=True), x, norm, dims, p)
        invnorm = 1 / (norm + 1e-7)
        return F.where(norm > maxnorm, invnorm * maxnorm * (g - invnorm * nb), g)

    @classmethod
    def jvp(cls, primals, tangents, out, dims, p, maxnorm):
        (x,), (t,) = primals, tangents
        norm = cls._norm(x, dims, p)
        nt = F.sum(reduce.norm_backward(t, x, norm, dims, p), dims, keepdim=True)
        invnorm = 1 / (norm + 1e-7)
        return F.where(norm > maxnorm, invnorm * maxnorm * (t - x * invnorm * nt), t)

    @staticmethod
    def batch(args, bdims, dims, p, maxnorm):
        bd = bdims[0]
        new = tuple(d + (d >= bd) for d in dims)  # the batch dim is not reduced
        return bind(Renorm, args, {"dims": new, "p": p, "maxnorm": maxnorm}), bd


@public
def ravel(input):
    """``input`` flattened to one dimension (a view when possible).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.ravel(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 2., 3., 4.])
    """
    return F.reshape(input, (-1,))


@public
def argwhere(input):
    """The indices of the non-zero elements, one row each (as :func:`nonzero`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.argwhere(numbagrad.tensor([[0.0, 1.0], [2.0, 0.0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return F.nonzero(input)


# -- differences and integrals ---------------------------------------------------------------
@public
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bools), after
    concatenating ``prepend`` and ``append`` along it.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.diff(numbagrad.tensor([1.0, 4.0, 9.0, 16.0]))
    tensor([3., 5., 7.])
    >>> numbagrad.diff(numbagrad.tensor([1.0, 4.0, 9.0, 16.0]), n=2)
    tensor([2., 2.])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    for t in parts:
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): prepend and append must be Tensors, not {type(t).__name__}")
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    x = F.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = F.narrow(x, d, 1, m - 1), F.narrow(x, d, 0, m - 1)
        x = F.logical_xor(hi, lo) if x.dtype is D.bool else hi - lo
    return x


def _dx_along(x, y, d, name="trapezoid"):
    """The spacings of sample points ``x`` along dim ``d`` of ``y``, as PyTorch's: a 1-D
    ``x`` lines up with that dim; a lower-dimensional ``x`` gets leading 1s; then the
    spacings are taken along dim ``d`` of ``x`` (counted from the front) and broadcast
    against ``y``'s pairs afterwards."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        view = [1] * y.ndim
        view[d] = x.shape[0]
        x = F.reshape(x, tuple(view))
    elif x.ndim < y.ndim:
        x = F.reshape(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    m = x.shape[d]
    return F.narrow(x, d, min(1, m), max(m - 1, 0)) - F.narrow(x, d, 0, max(m - 1, 0))


@public(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: sample points ``x`` (a tensor) or a constant
    spacing ``dx`` (default 1); differentiable with respect to ``y`` and ``x``.

    Examples
    --------
    >>> import numbagrad
    >>> print(float(numbagrad.trapezoid(numbagrad.tensor([1.0, 2.0, 3.0]))))
    4.0
    >>> print(float(numbagrad.trapezoid(numbagrad.tensor([1.0, 2.0, 3.0]),
    ...                                 numbagrad.tensor([0.0, 1.0, 3.0]))))
    6.5
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid(): pass either sample points x or a spacing dx, not both")
    if y.ndim == 0:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
        )
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        shape = tuple(s for i, s in enumerate(y.shape) if i != d)
        return zeros(shape, dtype=y.dtype if y.is_floating_point() else default_float())
    if isinstance(x, Tensor):
        spacing = _dx_along(x, y, d)
        n = y.shape[d]
        pair = F.narrow(y, d, 0, n - 1) + F.narrow(y, d, 1, n - 1)
        return F.sum(spacing * pair, d) / 2.0
    h = 1.0 if dx is None and x is None else float(dx if dx is not None else x)
    ends = F.select(y, d, 0) + F.select(y, d, -1)
    return (F.sum(y, d) - ends * 0.5) * h


@public(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`.

    Examples
    --------
    >>> import numbagrad
    >>> print(float(numbagrad.trapz(numbagrad.tensor([0.0, 2.0]), dx=0.5)))
    0.5
    """
    return trapezoid(y, x, dx=dx, dim=dim)


@public(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element shorter than ``y``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.cumulative_trapezoid(numbagrad.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    if x is not None and dx is not None:
        raise TypeError(
            "cumulative_trapezoid(): pass either sample points x or a spacing dx, not both"
        )
    if y.ndim == 0:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
        )
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    if isinstance(x, Tensor):
        spacing = _dx_along(x, y, d, "cumulative_trapezoid")
        pair = F.narrow(y, d, 0, max(n - 1, 0)) + F.narrow(y, d, min(1, n), max(n - 1, 0))
        return F.cumsum(spacing * pair / 2.0, d)
    if n == 0:
        return y if y.is_floating_point() else y.to(default_float())
    pair = F.narrow(y, d, 1, n - 1) + F.narrow(y, d, 0, n - 1)
    h = 1.0 if dx is None and x is None else float(dx if dx is not None else x)
    if not pair.is_floating_point():
        pair = pair.to(default_float())
    return F.cumsum(pair * (h / 2.0), d)


@public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|input - other| <= atol + |rtol * other|`` (or where they are equal,
    infinities included; NaN equals NaN only with ``equal_nan``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.isclose(numbagrad.tensor([1.0, 1.0]), numbagrad.tensor([1.0 + 1e-9, 1.1]))
    tensor([ True, False])
    """
    if not isinstance(other, Tensor):
        other = tensor(other, dtype=input.dtype)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_tname(input.dtype)} did not match {_tname(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = input.detach(), other.detach()
    close = a == b
    if equal_nan and a.is_floating_point():
        close = close | (F.isnan(a) & F.isnan(b))
    if rtol == 0 and atol == 0:
        return close
    if a.dtype is D.bool:
        a, b = a.to(default_float()), b.to(default_float())
    allowed = F.abs(b * rtol) + atol
    actual = F.abs(a - b)
    return close | (F.isfinite(actual) & (actual <= allowed))


# -- counting, covariance and triangle indices ----------------------------------------------
@public
def bincount(input, weights=None, minlength=0):
    """Count how often each value ``0, 1, ..., max(input)`` occurs in a 1-D tensor of
    non-negative integers (sum the matching ``weights`` instead, when given).

    Parameters
    ----------
    input : Tensor
        1-D, integral, non-negative.
    weights : Tensor, optional
        1-D, as long as ``input``. The result has its dtype when floating, float64 else.
    minlength : int, default 0
        The smallest length of the result.

    Returns
    -------
    Tensor
        Of length ``max(max(input) + 1, minlength)``; int64 without ``weights``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.bincount(numbagrad.tensor([0, 2, 2, 3]))
    tensor([1, 0, 2, 1])
    >>> numbagrad.bincount(numbagrad.tensor([0, 2]), weights=numbagrad.tensor([0.5, 2.0]))
    tensor([0.5000, 0.0000, 2.0000])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bincount(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.is_floating_point() or input.dtype is D.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_tname(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.numel() and F.amin(input).item() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    index = input.detach().to(D.int64)
    if weights is None:
        src = ones_like(index)
    else:
        if (
            not isinstance(weights, Tensor)
            or weights.ndim != 1
            or weights.shape[0] != input.shape[0]
        ):
            raise RuntimeError("weights should be 1-d and have the same length as input")
        # no gradient, as PyTorch's; integral weights count in float64, as PyTorch's
        src = weights.detach() if weights.is_floating_point() else weights.detach().to(D.float64)
    # NOTE: the output length depends on the data, so this reads it eagerly (no vmap, as
    # PyTorch's bincount has no batching rule either)
    n = builtins.max(int(F.amax(index).item()) + 1 if index.numel() else 0, int(minlength))
    return zeros(n, dtype=src.dtype, device=input.device).index_add(0, index, src)


@public
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), as ``numpy.cov``; differentiable.

    Parameters
    ----------
    input : Tensor
        1-D (one variable) or 2-D (variables x observations).
    correction : int, default 1
        Subtracted from the (weighted) number of observations: 1 is Bessel's correction.
    fweights : Tensor, optional
        1-D integer frequency weights, one per observation.
    aweights : Tensor, optional
        1-D floating observation weights.

    Returns
    -------
    Tensor
        ``(variables, variables)``, or a scalar for a single variable.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    >>> numbagrad.cov(x)
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got "
            f"an input with {input.ndim} dimensions"
        )
    x = input if input.ndim == 2 else F.reshape(input, (1, -1))
    if x.is_complex():
        raise NotImplementedError("cov: complex tensors are not supported by numbagrad yet")
    if not x.is_floating_point():
        x = x.to(default_float())
    n_obs = x.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        if wt.ndim > 1:
            raise RuntimeError(
                f"cov(): expected {name} to have one or fewer dimensions but "
                f"got {name} with {wt.ndim} dimensions"
            )
        if wt.numel() != n_obs:
            raise RuntimeError(
                f"cov(): expected {name} to have the same numel as there are "
                f"observations in the input but got {wt.numel()} != {n_obs}"
            )
        if name == "fweights" and wt.is_floating_point():
            raise RuntimeError(
                "cov(): expected fweights to have integral dtype but got "
                f"fweights with {_tname(wt.dtype)} dtype"
            )
        if name == "aweights" and not wt.is_floating_point():
            raise RuntimeError(
                "cov(): expected aweights to have floating point dtype but "
                f"got aweights with {_tname(wt.dtype)} dtype"
            )
        w = wt if w is None else w * wt
    if w is None:
        avg = F.mean(x, 1)
        norm = builtins.max(n_obs - correction, 0)
        if norm == 0:
            warnings.warn(
                "cov(): degrees of freedom is <= 0. Correction should be strictly "
                "less than the number of observations.",
                stacklevel=2,
            )
    else:
        w = w.to(x.dtype)
        w_sum = F.sum(w)
        avg = F.sum(x * w, 1) / w_sum
        norm = (
            w_sum - correction * F.sum(w * aweights) / w_sum
            if (aweights is not None and correction != 0)
            else w_sum - correction
        )
        norm = F.clamp_min(norm, 0)
    xm = x - F.unsqueeze(avg, 1)
    c = F.mm(xm, F.transpose(xm if w is None else xm * w, 0, 1))
    return F.squeeze(c / norm)


@public
def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``
    (``cov`` normalised by the standard deviations, clipped to ``[-1, 1]``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.corrcoef(numbagrad.tensor([[1.0, 2.0, 4.0], [1.0, 0.0, 2.0]]))
    tensor([[1.0000, 0.6547],
            [0.6547, 1.0000]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = F.sqrt(F.diagonal(c))
    c = c / F.unsqueeze(std, 1) / F.unsqueeze(std, 0)
    return F.clamp(c, -1, 1)


def _tri_indices(upper, row, col, offset, dtype, device):
    name = "triu_indices" if upper else "tril_indices"
    for what, v in (("row", row), ("col", col)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{name}(): argument '{what}' must be int, not {type(v).__name__}")
        if v < 0:
            raise RuntimeError(f"{what} must be non-negative, got{v}")
    if dtype not in (D.int64, D.int32):
        raise RuntimeError(f"\"{name}\" not implemented for '{_tname(dtype)}'")
    make = np.triu_indices if upper else np.tril_indices
    idx = (
        np.stack(make(int(row), int(offset), int(col)))
        if row and col
        else np.zeros((2, 0), np.int64)
    )
    return tensor(idx.astype(dtype.np), device=device)


@public(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, N)`` row and column indices of the upper triangle (on and above diagonal
    ``offset``) of a ``row x col`` matrix, in row-major order.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.triu_indices(3, 3, offset=1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    return _tri_indices(True, row, col, offset, D.int64 if dtype is None else dtype, device)


@public(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, N)`` row and column indices of the lower triangle (on and below diagonal
    ``offset``) of a ``row x col`` matrix, in row-major order.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    return _tri_indices(False, row, col, offset, D.int64 if dtype is None else dtype, device)


@public
def tensor_split(input, indices_or_sections, dim=0):
    """Split ``input`` along ``dim`` into ``n`` nearly equal views (the first ``size % n``
    one longer) for an integer ``n``, or at the given indices (negative ones from the end,
    clamped to the size, an empty piece where they decrease), as ``numpy.array_split``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor_split(numbagrad.arange(7), 3)
    (tensor([0, 1, 2]), tensor([3, 4]), tensor([5, 6]))
    >>> numbagrad.tensor_split(numbagrad.arange(7), [1, 5])
    (tensor([0]), tensor([1, 2, 3, 4]), tensor([5, 6]))
    """
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.ndim > 1 or spec.is_floating_point():
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a "
                "zero-dimensional or one-dimensional tensor, but got a tensor "
                f"with {spec.ndim} dims"
            )
        spec = int(spec.item()) if spec.ndim == 0 else spec.tolist()
    if isinstance(spec, (int, np.integer)):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(n, int(spec))
        bounds = [0]
        for i in range(int(spec)):
            bounds.append(bounds[-1] + q + (i < r))
    else:
        # as slicing: negative indices count from the end, all are clamped to [0, n]
        bounds = [
            0,
            *(builtins.min(builtins.max(int(i) + n * (int(i) < 0), 0), n) for i in spec),
            n,
        ]
    import itertools

    return tuple(
        F.narrow(input, d, a, builtins.max(b - a, 0)) for a, b in itertools.pairwise(bounds)
    )


@public(method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-D tensor, as rows (the order of
    ``itertools.combinations``); differentiable.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.combinations(numbagrad.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 2.],
            [1., 3.],
            [2., 3.]])
    """
    import itertools

    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return zeros(0, dtype=input.dtype)
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(make(range(input.shape[0]), r))
    idx = np.array(rows, dtype=np.int64).reshape(len(rows), r)
    flat = F.index_select(input, 0, tensor(idx.reshape(-1), device=input.device))
    return F.reshape(flat, (len(rows), r))


@public(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a
    scalar); ``invert`` negates. No gradient.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.isin(numbagrad.tensor([[1, 2], [3, 4]]), numbagrad.tensor([2, 3]))
    tensor([[False,  True],
            [ True, False]])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of elements and test_elements must be a Tensor")
    if not isinstance(elements, Tensor):
        elements = tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, Tensor):
        test_elements = tensor(test_elements, device=elements.device)
    test = F.reshape(test_elements.detach(), (-1,))
    if test.shape[0] == 0:
        found = zeros(tuple(elements.shape), dtype=D.bool, device=elements.device)
    else:
        found = F.any(F.unsqueeze(elements.detach(), -1) == test, -1)
    return F.logical_not(found) if invert else found


# (the ops are public through ``@public``: NOTE [Public ops] in ``ops/_public.py``)
__all__: list = []
