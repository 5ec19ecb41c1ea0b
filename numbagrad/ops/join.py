"""Joining tensors along a dimension: the primitive ``Cat`` and ``cat`` (``concat``,
``concatenate``) and ``stack`` over it. (Their inverses, ``split``, ``chunk`` and
``unbind``, are views: ``ops/shape.py``.)
"""

from __future__ import annotations

from numbagrad._creation import zeros
from numbagrad._dtype import promote_types
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._util import wrap_dim
from numbagrad.ops.shape import _batch_size, _with_batch, narrow, unsqueeze

__all__: list = []


class Cat(Primitive):
    """``cat`` along ``dim``; the operands at positions ``skip`` are PyTorch's legacy
    skipped 1-D empty tensors: not concatenated, but still inputs (an empty gradient, and
    they make the result require grad)."""

    linearity = "linear"

    @staticmethod
    def impl(be, *xs, dim, skip=()):
        if skip:
            xs = [x for i, x in enumerate(xs) if i not in skip]
        return be.xp.concatenate(xs, axis=dim)

    @staticmethod
    def batch(args, dims, dim, skip=()):
        """Every operand batched in front (an unbatched one broadcast), ``dim`` shifted."""
        size = _batch_size(args, dims)
        xs = tuple(_with_batch(a, d, 0, size) for a, d in zip(args, dims))
        return bind(Cat, xs, {"dim": dim + 1, "skip": skip} if skip else {"dim": dim + 1}), 0

    @staticmethod
    def vjp(ctx, g, dim, skip=()):
        out = []
        start = 0
        for i in range(ctx.num_inputs()):
            if i in skip:
                out.append(zeros(ctx.input_shape(i), dtype=g.dtype, device=g.device))
                continue
            n = ctx.input_shape(i)[dim]
            out.append(narrow(g, dim, start, n))
            start += n
        return tuple(out)


def _tensor_list(tensors, api):
    """``tensors`` as a list, refusing what PyTorch's ``cat``/``stack`` refuse: a tensor
    where a sequence of them is expected, and elements that are not tensors."""
    if isinstance(tensors, Tensor):
        raise TypeError(
            f"{api}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return tensors


@public(aliases=("concat", "concatenate"), method=False)
def cat(tensors, dim=0):
    """Concatenate tensors along an existing ``dim``."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    dt = tensors[0].dtype  # every tensor takes part in the promotion, as in PyTorch
    for t in tensors[1:]:
        dt = promote_types(dt, t.dtype)
    skip = ()
    if any(t.ndim != 1 for t in tensors):  # legacy: skip 1-D empty tensors among others
        skip = tuple(i for i, t in enumerate(tensors) if t.ndim == 1 and t.shape[0] == 0)
        if len(skip) == len(tensors):
            skip = skip[1:]
    kept = [t for i, t in enumerate(tensors) if i not in skip]
    d = wrap_dim(dim, kept[0].ndim)
    ref = kept[0].shape
    for i, t in enumerate(kept):
        if t.ndim != len(ref) or any(
            a != b for k, (a, b) in enumerate(zip(t.shape, ref)) if k != d
        ):
            raise RuntimeError(
                f"torch.cat(): Sizes of tensors must match except in dimension "
                f"{d}. Expected {list(ref)} but got {list(t.shape)} for tensor "
                f"number {i} in the list."
            )
    if any(t.dtype != dt for t in tensors):
        tensors = [t.to(dt) for t in tensors]
    if skip:  # still inputs: they get (empty) gradients, as in PyTorch
        return bind(Cat, tuple(tensors), {"dim": d, "skip": skip})
    return bind(Cat, tuple(tensors), {"dim": d})


concatenate = concat = cat


@public(method=False)
def stack(tensors, dim=0):
    """Stack tensors along a new ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                f"entry {i}"
            )
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)
