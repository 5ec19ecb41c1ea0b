"""Reductions (with ``dim`` as int, tuple or None, and ``keepdim``) and the ops built on them.

Primitives: ``sum``, ``nansum``, ``prod``, ``amax``/``amin``, ``norm`` (``Norm2`` for p = 2,
``NormP`` for the other p), ``logsumexp``, ``softmax``, ``log_softmax``, ``var``,
``median``/``nanmedian`` over all elements, plus the
non-differentiable ``argmax``/``argmin``/``all``/``any``. ``mean``, ``std``, ``max``/``min``
and the rest are composites and get every rule for free (the scans, ``cumsum`` and
friends, are in ``ops/scan.py``). The primitives' gradients follow
PyTorch's formulas with their data branches written as masks, so their NaN/inf patterns at
zeros, infinities and NaN are PyTorch's (NOTE [Data branches in rules]).

Batching rules leave the batch dimension where it is and renumber the reduced dims around
it (``_reduce_batch``, ``_scan_batch``): a ``dims`` of None ("all") becomes every dim but
the batch one, so a reduced ``dims`` param may be ``()`` (reduce nothing), which the rules
below keep distinct from None (``_sum`` binds ``Sum`` directly; ``sum()`` reads ``()`` as
all, as PyTorch does).

NOTE [Reduction dims as PyTorch reads them]
The public functions turn ``dim`` into the ``dims`` param in one place (``_reduce_dims``):
None, ``[]`` and ``()`` mean every dim for ``sum``, ``mean``, ``var``, ``std``, ``amax``,
``amin`` and ``norm`` (``any``/``all`` read an empty list as no dim: nothing is reduced);
repeated dims raise; and a 0-d tensor accepts dim 0 and -1, reducing nothing (its value is
the result). Reductions with no identity (``amax``, ``max``, ``argmax``, the inf norm)
raise PyTorch's errors over an empty dim; the others give their identity (``sum`` 0,
``prod`` 1, ``logsumexp`` -inf) or nan (``mean``, ``var``).
"""

from __future__ import annotations

import builtins
import collections
import math
import warnings

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import is_grad_enabled
from numbagrad._core.interpreter import EVAL, current_interpreter
from numbagrad._creation import const_ones_like as _ones_like
from numbagrad._creation import tensor as _tensor
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import both_ways, conj_all, front
from numbagrad.ops._util import MinMax as _MinMax
from numbagrad.ops._util import default_float, wrap_dim
from numbagrad.ops.gather_scatter import Gather
from numbagrad.ops.shape import Expand
from numbagrad.ops.unary import SafeSqrt

# the names PyTorch's messages give dtypes
_TORCH_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
}


def _torch_name(dtype) -> str:
    name = np.dtype(dtype.np if isinstance(dtype, D.dtype) else dtype).name
    return _TORCH_NAMES.get(name, name)


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient ``g`` back to ``shape`` (differentiable; the shapes
    are right by construction, so ``Expand`` is bound without ``expand``'s checks)."""
    if not keepdim and dims:
        g = F.reshape(g, tuple(1 if i in dims else s for i, s in enumerate(shape)))
    shape = tuple(shape)
    if (g._data.shape if type(g) is Tensor else tuple(g.shape)) == shape:
        return g
    return bind(Expand, (g,), {"shape": shape})


def _keepdim(g, shape, dims, keepdim):
    """A reduced ``g`` with the reduced dims of ``shape`` kept as size 1 (not expanded:
    PyTorch's ``unsqueeze_multiple``, so a rule's arithmetic on it happens at the reduced
    shape, as in PyTorch's formulas)."""
    if keepdim:
        return g
    return F.reshape(g, tuple(1 if dims is None or i in dims else s for i, s in enumerate(shape)))


def _sum(x, dims, keepdim):
    """``Sum`` over exactly ``dims`` (None = all, ``()`` = none), unlike ``sum()``."""
    return bind(Sum, (x,), {"dims": dims, "keepdim": keepdim, "dtype": None})


def _batch_dims(dims, bd, ndim, keepdim):
    """Per-example reduced ``dims`` (None = all of ``ndim``) as dims of the batched value,
    whose batch dimension is ``bd``, and the output's batch dimension."""
    dims = range(ndim) if dims is None else dims
    if bd == 0:  # (the common case: every dim moves up by one, the batch stays first)
        return tuple([d + 1 for d in dims]), 0
    new = tuple([d + (d >= bd) for d in dims])
    return new, bd if keepdim else bd - len([d for d in dims if d < bd])


def _reduce_batch(prim, args, bdims, dims, keepdim, **params):
    """The batching rule of a ``dims``/``keepdim`` reduction: one call, dims renumbered."""
    x = args[0]
    new, out_dim = _batch_dims(dims, bdims[0], x.ndim - 1, keepdim)
    return bind(prim, (x,), {"dims": new, "keepdim": keepdim, **params}), out_dim


def _scan_batch(prim, args, bdims, dim):
    """The batching rule of an op along one ``dim`` that keeps the shape (scans, softmax);
    a batch of 0-d examples is scanned along a size-1 dim."""
    x, bd = args[0], bdims[0]
    if x.ndim == 1:  # 0-d examples: the op along a new size-1 dim, one per example
        out = bind(prim, (F.unsqueeze(x, 1),), {"dim": 1})
        return F.squeeze(out, 1), 0
    return bind(prim, args, {"dim": dim + (dim >= bd)}), bd


# -- dims (NOTE [Reduction dims as PyTorch reads them]) -----------------------------------------
def _wrap_dims(dim, ndim):
    """An int or a sequence of dims as a sorted tuple of non-negative axes."""
    if isinstance(dim, (int, np.integer)):
        return (wrap_dim(int(dim), ndim),)
    out = []
    for d in dim:
        w = wrap_dim(int(d), ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.append(w)
    return tuple(sorted(out))


def _is_empty_seq(dim):
    return isinstance(dim, (list, tuple)) and len(dim) == 0


def _reduce_dims(input, dim, empty_is_all=True):
    """The ``dims`` param of a reduction of ``input`` over ``dim``: None for all dims."""
    if dim is None:
        return None
    if _is_empty_seq(dim):
        return None if empty_is_all else ()
    dims = _wrap_dims(dim, input.ndim)
    return None if input.ndim == 0 else dims  # a 0-d tensor: nothing to reduce


def _count(shape, dims):
    """The number of elements each output element reduces."""
    return math.prod(shape if dims is None else [shape[d] for d in dims])


def _check_nonempty(name, input, dim, dims):
    """PyTorch's errors for a reduction with no identity (max, amax...) over no elements;
    ``dim`` is the argument as given (PyTorch names the dim as the caller wrote it)."""
    if dims is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for "
                "input.numel() == 0. Specify the reduction dim with the 'dim' "
                "argument."
            )
        return
    if input.ndim == 0:  # dim 0 / -1 of a 0-d tensor: its one element
        return
    shape = input.shape
    for d in (dim,) if isinstance(dim, (int, np.integer)) else dim:
        if shape[wrap_dim(int(d), input.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


class Sum(Primitive):
    linearity = "linear"
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim, dtype):
        return be.sum(x, dims, keepdim, dtype)

    @staticmethod
    def vjp(ctx, g, dims, keepdim, dtype):
        return _expand_back(g, ctx.input_shape(0), dims, keepdim)

    # by hand (NOTE [Hand-written fused rules]): ``expand_back`` returns a broadcast view: no copy
    # of the gradient
    @staticmethod
    def fused_vjp(ctx, g, dims, keepdim, dtype):
        return ctx.be.expand_back(g, ctx.input_shape(0), dims, keepdim)


class Prod(Primitive):
    saves_inputs = (0,)
    # PyTorch's ProdBackward saves its result too (prod_backward reads it): changing the
    # result in place before the backward is the same error here
    saves_output = True
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim, whole=False):
        dt = np.int64 if x.dtype.kind in "biu" else None
        return be.xp.prod(x, axis=dims, keepdims=keepdim, dtype=dt)

    @staticmethod
    def vjp(ctx, g, dims, keepdim, whole=False):
        shape = ctx.input_shape(0)
        if len(shape) == 0:
            return g  # the prod of a 0-d tensor is the tensor
        x, y = conj_all(ctx.saved())  # (complex: the real rule on conjugates)
        ge = _expand_back(g, shape, dims, keepdim)
        return _prod_backward(ge, x, _expand_back(y, shape, dims, keepdim), dims, whole)

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim, whole=False):
        # PyTorch's: sum(prod_backward(ones) * t), so the NaN/inf pattern is the vjp's
        (x,), (t,) = primals, tangents
        if x.ndim == 0:
            return t
        ye = _expand_back(out, x.shape, dims, keepdim)
        return _sum(_prod_backward(t, x, ye, dims, whole), dims, keepdim)


def _prod_backward(ge, x, ye, dims, whole):
    """PyTorch's ``prod_backward`` for the expanded gradient ``ge`` and result ``ye``
    (``whole``: ``prod()`` with no dim), its data branches written as masks (no branch on
    data: batchable):

    - no zero in the whole input: ``ge * (ye / x)``, so inf and NaN entries give PyTorch's
      inf/NaN pattern, and the second derivative goes through the result as PyTorch's;
    - some zero: ``ge * others``, the product of the other elements of each slice from
      exclusive cumulative products (O(n), exact with zeros);
    - ``prod()``, two zeros or more, and no graph of the backward built: exact zeros.

    On eager values the branch is taken as PyTorch takes it (NOTE [Data branches in rules]),
    so the branch not taken adds nothing to a second derivative; under a transform each
    masked branch is fed values that keep its own derivative finite (ones).
    """
    zero = x == 0
    any_zero = F.any(zero)
    if _is_concrete(ge, x, ye):
        if not bool(any_zero):
            return ge * (ye / x)
        out = ge * _others_prod(x, dims)
    else:
        ratio = ye / F.where(any_zero, 1, x)
        others = _others_prod(F.where(any_zero, x, 1), dims)
        out = ge * F.where(any_zero, others, ratio)
    if whole and not is_grad_enabled():
        out = F.where(F.sum(zero) > 1, 0, out)
    return out


def _exclusive_cumprod(x):
    """``out[..., i] = prod(x[..., :i])`` along the last axis (``out[..., 0] = 1``)."""
    ones = _ones_like(x[..., :1])  # (not x * 0 + 1: that is NaN at an infinite x)
    return F.cumprod(F.cat([ones, x[..., :-1]], -1), -1)


def _others_prod(x, dims):
    """For every element, the product of the other elements of its reduced slice."""
    dims = range(x.ndim) if dims is None else dims
    rest = [i for i in range(x.ndim) if i not in dims]
    moved = F.movedim(x, list(dims), list(range(len(rest), x.ndim)))
    # (the reduced size spelt out: -1 is ambiguous when the tensor is empty)
    flat = F.reshape(moved, (*moved.shape[: len(rest)], math.prod(moved.shape[len(rest) :])))
    left = _exclusive_cumprod(flat)
    right = F.flip(_exclusive_cumprod(F.flip(flat, (-1,))), (-1,))
    out = F.reshape(left * right, moved.shape)
    return F.movedim(out, list(range(len(rest), x.ndim)), list(dims))


def _reverse_cumsum(v, dim):
    return F.flip(F.cumsum(F.flip(v, (dim,)), dim), (dim,))


def _pick(v, mask, dim):
    """The entry of ``v`` where ``mask`` holds (at most once per slice; else 0), keepdim."""
    return F.sum(F.where(mask, v, 0), dim, keepdim=True)


def _is_concrete(*ts):
    """Whether ``ts`` are eager values (no transform is tracing them) in host memory, so a
    rule may look at their data (NOTE [Data branches in rules]); on CUDA that would be a
    device-to-host copy in every backward, so the masked forms run there."""
    return current_interpreter() is EVAL and not builtins.any(
        getattr(t, "_is_tracer", False) or t.is_cuda for t in ts
    )


# NOTE [Data branches in rules]
# PyTorch's cumprod backward picks its formula by looking at the data (no zero in the input:
# one division; zeros: masks, or an O(n^2) loop when a graph of the backward is built), and
# its NaN/inf pattern and second derivative come from the formula picked. The rules here
# write such branches as masks (``where`` on a 0-d condition, each branch fed values that
# keep it finite where it is not taken), which is right under every transform. Where the
# masked form would cost more than PyTorch's (the O(n^2) loop, needed only with zeros), a
# rule may branch on the data when ``_is_concrete``: no transform traces the values, so the
# branch taken is the one PyTorch takes, and nothing is recorded that could be replayed
# with other values.


class Logsumexp(Primitive):
    """``log(sum(exp(x)))`` over ``dims``, as PyTorch computes it: the maximum (set to 0
    where it is infinite) is taken out before the exponential and added back.

    The gradient is PyTorch's ``g * exp(x - result)`` where the result is not finite (so
    its NaN/0 pattern at infinite entries and overflowing sums), and the same quantity
    written as ``exp((x - max) - log(sum(exp(x - max))))`` where it is finite: that is
    the softmax to rounding, also when ``log(sum)`` is lost in a large ``max + log(sum)``
    (PyTorch's form then gives 1 to each of several equal maxima).
    """

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim):
        xp = be.xp
        m = xp.amax(x, axis=dims, keepdims=True)
        m = xp.where(xp.isinf(m), xp.zeros_like(m), m)
        out = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(tuple(s for i, s in enumerate(x.shape) if i not in dims))
        return out

    @staticmethod
    def _shifted(x, dims):
        """``x - max`` (the max set to 0 where infinite, no gradient through it)."""
        m = bind(Amax, (x.detach(),), {"dims": dims, "keepdim": True})
        return x - F.where(F.isinf(m), 0, m)

    @classmethod
    def vjp(cls, ctx, g, dims, keepdim):
        x, y = ctx.saved()
        ge = _expand_back(g, x.shape, dims, keepdim)
        ye = _expand_back(y, x.shape, dims, keepdim)
        finite = F.isfinite(ye)
        # each branch gets inputs that keep it finite where the other one is taken
        shifted = cls._shifted(F.where(finite, x, 0), dims)
        rel = F.log(F.sum(F.exp(shifted), dims, keepdim=True))
        soft = F.exp(shifted - rel)
        plain = F.exp(x - ye)
        return ge * F.where(finite, soft, plain)

    @classmethod
    def jvp(cls, primals, tangents, out, dims, keepdim):
        # PyTorch's logsumexp_jvp: sum(exp(x - max) * t) / sum(exp(x - max))
        (x,), (t,) = primals, tangents
        e = F.exp(cls._shifted(x, dims))
        return _sum(e * t, dims, keepdim) / _sum(e, dims, keepdim)


class Amax(Primitive):
    """``amax`` over ``dims``; ties share the gradient equally (PyTorch's amax/amin rule,
    under which a NaN maximum gives NaN gradients to its whole slice).

    ``evenly=True`` is ``max()``/``min()`` over all elements (PyTorch's MaxBackward1,
    ``evenly_distribute_backward``): the elements equal to the result, or all the NaN ones
    when the result is NaN, share the gradient, and the others get exactly 0 (masked, so
    an infinite gradient gives no NaN there).
    """

    saves_inputs = (0,)
    saves_output = True
    fn = "amax"
    batch = classmethod(_reduce_batch)

    @classmethod
    def node_name(cls, params) -> str:
        if params.get("evenly"):
            return "MaxBackward1" if cls.fn == "amax" else "MinBackward1"
        return cls.grad_fn

    @classmethod
    def impl(cls, be, x, dims, keepdim, evenly=False):
        if x.size == 0 and (dims is None or builtins.any(x.shape[d] == 0 for d in dims)):
            raise IndexError(
                f"{cls.fn}(): Expected reduction dim to be specified for "
                "input.numel() == 0. Specify the reduction dim."
            )
        return getattr(be.xp, cls.fn)(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def _mask(x, ye, evenly):
        mask = x == ye
        if evenly:  # a NaN result: the NaN elements are the maximum
            mask = mask | (F.isnan(x) & F.isnan(ye))
        return mask

    @classmethod
    def vjp(cls, ctx, g, dims, keepdim, evenly=False):
        x, y = ctx.saved()
        mask = cls._mask(x, _expand_back(y, x.shape, dims, keepdim), evenly)
        count = _sum(mask.to(g.dtype), dims, True)
        if evenly:  # zeros, filled with grad / mask.sum() where mask (so 0 / 0 is NaN's
            # derivative in grad over no elements; g with the reduced dims kept as 1s)
            return F.where(mask, _keepdim(g, x.shape, dims, keepdim) / count, 0)
        ge = _expand_back(g, x.shape, dims, keepdim)
        return ge / count * mask.to(g.dtype)  # (grad / count) * mask, as PyTorch

    @classmethod
    def jvp(cls, primals, tangents, out, dims, keepdim, evenly=False):
        # the mean of the tangents at the ties (the transpose of the vjp's equal shares)
        (x,), (t,) = primals, tangents
        mask = cls._mask(x, _expand_back(out, x.shape, dims, keepdim), evenly)
        return _sum(F.where(mask, t, 0), dims, keepdim) / _sum(mask.to(t.dtype), dims, keepdim)


class Amin(Amax):
    fn = "amin"


class ArgReduce(Primitive, register=False):
    differentiable = False
    fn = "argmax"

    @classmethod
    def impl(cls, be, x, dim, keepdim):
        if x.dtype.kind == "b":
            raise RuntimeError(f"{cls.fn}(): does not support bool input")
        if dim is None and x.size == 0:
            raise IndexError(
                f"{cls.fn}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        if dim is not None and x.ndim and x.shape[dim] == 0:
            raise IndexError(f"{cls.fn}(): Expected reduction dim {dim} to have non-zero size.")
        fn = getattr(be.xp, cls.fn)
        if dim is None:
            r = fn(x.reshape(-1))
            return be.xp.asarray(r, np.int64).reshape((1,) * x.ndim if keepdim else ())
        return be.xp.asarray(fn(x, axis=dim, keepdims=keepdim)).astype(np.int64, copy=False)

    @classmethod
    def batch(cls, args, bdims, dim, keepdim):
        x, bd = args[0], bdims[0]
        if dim is not None and x.ndim == 1:  # 0-d examples: the index of each is 0
            out = bind(cls, (F.unsqueeze(x, 1),), {"dim": 1, "keepdim": False})
            return out, 0
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
    """The 2-norm; its gradient is ``x / norm``, masked to 0 where the norm is 0 (PyTorch's
    subgradient at the origin)."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim):
        if _count(x.shape, dims) == 1:  # PyTorch's norm of one element is its abs (no x * x)
            return be.xp.abs(be.xp.sum(x, axis=dims, keepdims=keepdim))
        return be.xp.sqrt(be.xp.sum(x * x, axis=dims, keepdims=keepdim))

    @staticmethod
    def vjp(ctx, g, dims, keepdim):
        # grad * (self / norm).masked_fill_(norm == 0, 0), as PyTorch's norm_backward (whose
        # second derivative is NaN at a zero norm: 0 / 0 in the masked quotient's gradient)
        x, y = ctx.saved()
        ye = _keepdim(y, x.shape, dims, keepdim)
        return _keepdim(g, x.shape, dims, keepdim) * F.where(ye == 0, 0, x / ye)

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim):
        s = _sum(primals[0] * tangents[0], dims, keepdim)
        zero = out == 0
        return F.where(zero, 0, s / F.where(zero, 1, out))


class NormP(Primitive):
    """The vector ``p``-norm for ``p`` other than 0 and 2 (``inf`` and ``-inf`` included),
    as PyTorch's ``linalg_vector_norm``: ``sum(|x|**p)**(1/p)``, ``|x|`` itself over one
    element; the gradient is PyTorch's ``norm_backward``, with its masks (so its NaN/0
    pattern at zero norms, zero entries, infinities and NaN)."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim, p):
        xp = be.xp
        a = xp.abs(x)
        if _count(x.shape, dims) == 1:
            return xp.sum(a, axis=dims, keepdims=keepdim)
        if p == math.inf:
            return xp.amax(a, axis=dims, keepdims=keepdim)
        if p == -math.inf:
            return xp.amin(a, axis=dims, keepdims=keepdim)
        if p == 1:
            return xp.sum(a, axis=dims, keepdims=keepdim)
        with np.errstate(all="ignore"):  # (0 ** -1 is inf, silently: NOTE [Quiet NumPy])
            return xp.asarray(xp.sum(a**p, axis=dims, keepdims=keepdim) ** (1.0 / p), x.dtype)

    @staticmethod
    def _backward(ge, x, ye, dims, p):
        # sgn(x) from comparisons, a constant of the graph, as Abs's derivative: PyTorch's
        # sgn has a zero-tensor derivative that contributes nothing, where sign's zeros
        # would give 0 * NaN upstream in the double backward (entr at x < 0)
        sgn = (x > 0).to(x.dtype) - (x < 0).to(x.dtype)
        if p == 1:
            return sgn * ge
        a = F.abs(x)
        if math.isinf(p):  # the elements equal to the norm, or NaN, share the gradient
            mask = (a == ye) | F.isnan(a)
            return sgn * ((ge / _sum(mask.to(ge.dtype), dims, True)) * mask)
        if p < 1:
            scaled = sgn * F.where(x == 0, 0, a ** (p - 1))
            return scaled * ge * ye ** (1 - p)
        scaled = sgn * a ** (p - 1) if p < 2 else x * a ** (p - 2)
        return scaled * F.where(ye == 0, 0, ge / ye ** (p - 1))

    @classmethod
    def vjp(cls, ctx, g, dims, keepdim, p):
        x, y = ctx.saved()
        ye = _keepdim(y, x.shape, dims, keepdim)
        return cls._backward(_keepdim(g, x.shape, dims, keepdim), x, ye, dims, p)

    @classmethod
    def jvp(cls, primals, tangents, out, dims, keepdim, p):
        (x,), (t,) = primals, tangents
        ye = _keepdim(out, x.shape, dims, keepdim)
        return _sum(cls._backward(t, x, ye, dims, p), dims, keepdim)


class Norm0(Primitive):
    """The 0-"norm", the number of nonzero entries over ``dims`` in ``x``'s dtype. As in
    PyTorch, it is recorded (its output requires grad) but its backward gives no gradient:
    an undefined one, not zeros, so ``x.grad`` stays None and ``autograd.grad`` says the
    input was not used unless ``allow_unused``."""

    grad_fn = "LinalgVectorNormBackward0"
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim):
        return be.xp.sum(x != 0, axis=dims, keepdims=keepdim, dtype=x.dtype)

    @staticmethod
    def vjp(ctx, g, dims, keepdim):
        return None

    fused_vjp = vjp

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim):
        return None  # a piecewise constant: a zero tangent


def norm_backward(ge, x, ye, dims, p):
    """PyTorch's ``norm_backward`` of the vector ``p``-norm over ``dims`` (``p`` not 0), for
    the cotangent ``ge`` and the norm ``ye``, both broadcastable against ``x``."""
    if p == 2:
        return ge * F.where(ye == 0, 0, x / ye)
    return NormP._backward(ge, x, ye, dims, p)


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
        elif x.dtype == np.float16:  # in float32, rounded once (NOTE [Half precision])
            return Softmax.impl(be, x.astype(np.float32), dim).astype(np.float16)  # in [0, 1]
        if x.size == 0:  # an empty dim has no maximum to subtract
            return xp.empty(x.shape, x.dtype)
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
        elif x.dtype == np.float16:  # in float32, rounded once (NOTE [Half precision])
            with np.errstate(over="ignore"):
                return LogSoftmax.impl(be, x.astype(np.float32), dim).astype(np.float16)
        if x.size == 0:
            return xp.empty(x.shape, x.dtype)
        with np.errstate(all="ignore"):  # inf - inf is NaN, silently (NOTE [Quiet NumPy])
            s = x - xp.amax(x, axis=dim, keepdims=True)
            return s - xp.log(xp.sum(xp.exp(s), axis=dim, keepdims=True))


class Median(Amax):
    """The lower median over ``dims`` (NaN where a NaN is reduced). Its gradient is
    PyTorch's for ``median()`` (``evenly_distribute_backward``): the elements equal to the
    result share it equally (the NaN ones when it is NaN); the JVP is their mean tangent."""

    fn = "median"
    grad_fn = "MedianBackward0"

    @classmethod
    def node_name(cls, params) -> str:
        return cls.grad_fn

    @classmethod
    def impl(cls, be, x, dims, keepdim, evenly=True):
        xp = be.xp
        dims = tuple(range(x.ndim)) if dims is None else dims
        rest = [i for i in range(x.ndim) if i not in dims]
        moved = xp.moveaxis(x, list(dims), list(range(len(rest), x.ndim)))
        flat = moved.reshape((*(x.shape[i] for i in rest), _count(x.shape, dims)))
        n = flat.shape[-1]
        if n == 0:
            out = xp.full(
                flat.shape[:-1], xp.nan, x.dtype if x.dtype.kind == "f" else default_float()
            )
        else:
            srt = xp.sort(flat, axis=-1)  # NaN sorts last
            if cls.fn == "nanmedian" and x.dtype.kind == "f":
                # the lower median of the non-NaN values (NaN where all are NaN): at sorted
                # position p with 2 p in {count - 1, count - 2} (p = 0 when count is 0)
                count = xp.sum(xp.where(xp.isnan(srt), 0, 1), axis=-1, keepdims=True)
                twice = xp.arange(0, 2 * n, 2)
                pick = (twice == count - 1) | (twice == count - 2) | (twice + count == 0)
                out = xp.amax(xp.where(pick, srt, -xp.inf), axis=-1)
            else:
                out = srt[..., (n - 1) // 2]
                if x.dtype.kind == "f":
                    out = xp.where(xp.isnan(srt[..., -1]), srt[..., -1], out)
            out = xp.asarray(out, x.dtype)
        if keepdim:
            out = out.reshape(tuple(1 if i in dims else s for i, s in enumerate(x.shape)))
        return out


class Nanmedian(Median):
    """:class:`Median` of the non-NaN elements (NaN where all are NaN); PyTorch's
    ``nanmedian()`` gradient is ``evenly_distribute_backward`` too."""

    fn = "nanmedian"
    grad_fn = "NanmedianBackward0"


# -- public functions ------------------------------------------------------------------------
@public(numpy_keywords=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (int, tuple or None for all; ``()`` and ``[]`` mean all too).

    Integer and bool inputs sum in int64 unless ``dtype`` says otherwise, as in PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(1)
    tensor([3., 7.])
    """
    dt = None if dtype is None else D.as_dtype(dtype).np
    return bind(Sum, (input,), {"dims": _reduce_dims(input, dim), "keepdim": keepdim, "dtype": dt})


@public(numpy_keywords=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; requires a floating dtype (or ``dtype=``), as in PyTorch."""
    if dtype is not None:
        dt = D.as_dtype(dtype)
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a "
                f"floating point or complex dtype. Got: {_torch_name(dt)}"
            )
        input = input.to(dt)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_torch_name(input.dtype)}"
        )
    dims = _reduce_dims(input, dim)
    n = _count(input.shape, dims)
    if n == 0:
        # nan, with PyTorch's gradient grad.expand(...) / 0: empty, and the derivative of
        # that in grad is a sum over nothing, 0 (``sum / 0`` would give 0 / 0 there)
        return sum(input, dims, keepdim) + float("nan")
    if input.dtype is D.float16:  # PyTorch accumulates half in float32, rounds once
        return (sum(input, dims, keepdim, dtype=D.float32) / n).to(D.float16)
    return sum(input, dims, keepdim) / n


@public(numpy_keywords=True)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over ``dim`` (an int or None); zeros are handled in the gradient."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    if dtype is not None:
        dtype = D.as_dtype(dtype)
        input = input.to(dtype)
    dims = _reduce_dims(input, dim)
    out = bind(
        Prod,
        (input,),
        {
            "dims": tuple(range(input.ndim)) if dims is None else dims,
            "keepdim": keepdim,
            "whole": dim is None,
        },
    )
    return out if dtype is None or out.dtype is dtype else out.to(dtype)


@public(numpy_keywords=True)
def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (default all); ties share the gradient equally."""
    dims = _reduce_dims(input, dim)
    _check_nonempty("amax", input, dim, dims)
    return bind(Amax, (input,), {"dims": dims, "keepdim": keepdim})


@public(numpy_keywords=True)
def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (default all); ties share the gradient equally."""
    dims = _reduce_dims(input, dim)
    _check_nonempty("amin", input, dim, dims)
    return bind(Amin, (input,), {"dims": dims, "keepdim": keepdim})


@public(numpy_keywords=True)
def argmax(input, dim=None, keepdim=False):
    """Index of the maximum (over the flattened tensor when ``dim`` is None)."""
    d = None if dim is None else wrap_dim(dim, input.ndim)
    return bind(Argmax, (input,), {"dim": d, "keepdim": keepdim})


@public(numpy_keywords=True)
def argmin(input, dim=None, keepdim=False):
    """Index of the minimum (over the flattened tensor when ``dim`` is None)."""
    d = None if dim is None else wrap_dim(dim, input.ndim)
    return bind(Argmin, (input,), {"dim": d, "keepdim": keepdim})


def _minmax(input, dim, keepdim, name, arg, full, other):
    if isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        return other(input, dim)
    if dim is None:
        _check_nonempty(name, input, None, None)
        return bind(full, (input,), {"dims": None, "keepdim": False, "evenly": True})
    d = wrap_dim(dim, input.ndim)
    _check_nonempty(name, input, d, (d,))
    # (argmax/argmin refuse bools, as PyTorch's; max/min of bools along a dim do not)
    idx = arg(input.to(D.int32) if input.dtype is D.bool else input, d, keepdim=True)
    values = bind(Gather, (input, idx), {"dim": d})  # take_along_dim; idx is valid
    if not keepdim:
        values = values.squeeze(d)
        idx = idx.squeeze(d)
    return _MinMax((values, idx))


@public(numpy_keywords=True)
def max(input, dim=None, keepdim=False):
    """Maximum of all elements, or ``(values, indices)`` along ``dim``.

    With a tensor second argument it is :func:`maximum`. Along a dim the gradient goes to
    the returned index; over all elements ties share it, and a NaN maximum sends it to the
    NaN elements (as in PyTorch).
    """
    return _minmax(input, dim, keepdim, "max", argmax, Amax, F.maximum)


@public(numpy_keywords=True)
def min(input, dim=None, keepdim=False):
    """Minimum of all elements, or ``(values, indices)`` along ``dim``."""
    return _minmax(input, dim, keepdim, "min", argmin, Amin, F.minimum)


@public(numpy_keywords=True)
def all(input, dim=None, keepdim=False):
    """True where all elements (along ``dim``) are non-zero (``dim=()``: elementwise)."""
    return bind(
        All, (input,), {"dims": _reduce_dims(input, dim, empty_is_all=False), "keepdim": keepdim}
    )


@public(numpy_keywords=True)
def any(input, dim=None, keepdim=False):
    """True where any element (along ``dim``) is non-zero (``dim=()``: elementwise)."""
    return bind(
        Any, (input,), {"dims": _reduce_dims(input, dim, empty_is_all=False), "keepdim": keepdim}
    )


@public(numpy_keywords=True)
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably (the max is subtracted first); -inf
    over an empty dim."""
    if _is_empty_seq(dim) and not keepdim and input.ndim:
        # PyTorch reduces every dim but then fails to drop them (its own error)
        raise RuntimeError(
            f"output with shape [] doesn't match the broadcast shape {[1] * input.ndim}"
        )
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        input = input.to(default_float())  # (complex: Logsumexp refuses it, NOTE [Complex support])
    dims = _reduce_dims(input, dim)
    if _count(input.shape, dims) == 0:  # nothing to take the maximum of: log(0) = -inf
        # (PyTorch's gradient g * exp(x - out) is empty, and its derivative in g is 0)
        out = sum(input, dims, keepdim=True) + float("-inf")
    else:
        dims = tuple(range(input.ndim)) if dims is None else dims
        out = bind(Logsumexp, (input,), {"dims": dims, "keepdim": True})
    if keepdim:
        return out
    dims = range(input.ndim) if dims is None else dims
    return out.reshape(tuple(s for i, s in enumerate(input.shape) if i not in dims))


def _format_p(p):
    p = float(p)
    if math.isinf(p):
        return "inf" if p > 0 else "-inf"
    return str(int(p)) if p.is_integer() else str(p)


@public
def norm(input, p="fro", dim=None, keepdim=False):
    """Vector p-norm over ``dim`` (``'fro'``/2, 1, ``inf``, ``-inf``, or any float p)."""
    if input.dtype.is_complex:  # the norm of the moduli (real), as PyTorch's
        return norm(F.abs(input), p, dim, keepdim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor "
            f"as input. Got {_torch_name(input.dtype)}"
        )
    if input.dtype is D.float16:  # x**p overflows in half: in float32, as PyTorch's opmath
        return norm(input.to(D.float32), p, dim, keepdim).to(D.float16)
    if p == "fro" and isinstance(dim, (list, tuple)) and len(dim) > 2:
        raise RuntimeError(
            "linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(str(d) for d in dim)
        )
    dims = _reduce_dims(input, dim)
    if p in ("fro", 2, 2.0):
        return bind(Norm2, (input,), {"dims": dims, "keepdim": keepdim})
    if p < 0 and _count(input.shape, dims) == 0:  # no identity: as linalg.vector_norm
        if dims is None:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {_format_p(p)} norm "
                "on an empty tensor because the operation does not have an "
                "identity"
            )
        for d in (dim,) if isinstance(dim, (int, np.integer)) else dim:
            if input.shape[wrap_dim(int(d), input.ndim)] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {_format_p(p)} "
                    f"norm on the dimension {d}because this dimension is "
                    "empty and the operation does not have an identity"
                )
    if p == float("inf") and _count(input.shape, dims) == 0:
        _check_norm_inf_empty(input, dim, dims)
    if p == 0:
        return bind(Norm0, (input,), {"dims": dims, "keepdim": keepdim})
    return bind(NormP, (input,), {"dims": dims, "keepdim": keepdim, "p": float(p)})


def _check_norm_inf_empty(input, dim, dims):
    if dims is None:
        raise RuntimeError(
            "linalg.vector_norm cannot compute the inf norm on an empty "
            "tensor because the operation does not have an identity"
        )
    for d in (dim,) if isinstance(dim, (int, np.integer)) else dim:
        if input.shape[wrap_dim(int(d), input.ndim)] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the inf norm on the "
                f"dimension {d}because this dimension is empty and the "
                "operation does not have an identity"
            )


class Var(Primitive):
    """The variance over ``dims`` (None: all) with ``correction`` where ``n - correction >
    0``. PyTorch's ``var_backward``, ``(2 / (n - correction)) * grad * (x - mean(x))``, has
    no term through the mean (it is 0 in exact arithmetic; with an infinite entry it would
    be inf - inf = NaN everywhere); it saves only the input, as PyTorch's VarBackward0."""

    saves_inputs = (0,)
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim, correction):
        with np.errstate(all="ignore"):  # inf - inf is NaN, silently (NOTE [Quiet NumPy])
            return be.xp.asarray(
                be.xp.var(x, axis=dims, ddof=correction, keepdims=keepdim), dtype=x.dtype
            )

    @staticmethod
    def vjp(ctx, g, dims, keepdim, correction):
        x = ctx.saved()[0]
        scale = 2.0 / (_count(x.shape, dims) - correction)
        return scale * _expand_back(g, x.shape, dims, keepdim) * (x - mean(x, dims, True))

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim, correction):
        x = primals[0]
        scale = 2.0 / (_count(x.shape, dims) - correction)
        return _sum(tangents[0] * (x - mean(x, dims, True)), dims, keepdim) * scale


def _var(input, dim, unbiased, keepdim, correction, name):
    if input.dtype.is_complex:
        # E|z - mean|^2 = var(real) + var(imag), a real tensor (as PyTorch's)
        re = _var(F.real(input), dim, unbiased, keepdim, correction, name)
        with warnings.catch_warnings():  # (the degrees-of-freedom warning once)
            warnings.simplefilter("ignore")
            return re + _var(F.imag(input), dim, unbiased, keepdim, correction, name)
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = _reduce_dims(input, dim)
    n = _count(input.shape, dims)
    dof = n - correction
    if dof > 0:
        return bind(Var, (input,), {"dims": dims, "keepdim": keepdim, "correction": correction})
    mu = mean(input, dims, keepdim=True)
    warnings.warn(
        f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
        "than the reduction factor (input numel divided by output numel).",
        UserWarning,
        stacklevel=3,
    )
    if n == 0:  # nan; the gradient is empty and its derivative in grad 0, as PyTorch's
        return sum(input, dims, keepdim) + float("nan")
    return _var_no_dof(input, mu, dims, keepdim, n, dof, dim is None or input.ndim == 0)


def _var_no_dof(input, mu, dims, keepdim, n, dof, whole):
    """``var`` with ``correction >= n``: ``sum((x - mean)**2) / 0`` (inf, or nan when every
    element is the mean), with PyTorch's gradients (``var_backward``): over the whole tensor
    ``grad * (inf, or nan where x == mean)`` with no graph; over a dim
    ``(2 / (n - correction)) * grad * (x - mean)`` (inf times it when ``n == correction``).
    """
    inf = float("inf")
    diff = input - mu
    ss = sum(diff * diff, dims, keepdim)
    if whole:
        # value: ss * inf; gradient: inf * |x - mean| (its derivative is 0: a constant)
        dev = diff.abs().detach()
        p = sum(input * dev, dims, keepdim)
        return (ss.detach() + (p - p.detach())) * inf
    if dof == 0:
        # (2 / 0) * grad * (x - mean), not inf - inf from the mean; one element (x == mean)
        # keeps the mean: its second order is then NaN, as PyTorch's inf * (1 - 1/n)
        d = input - (mu if n == 1 else mu.detach())
        return sum(d * d, dims, keepdim) / 0.0
    q = ss / dof  # the gradient of sum(...) / (n - correction) < 0, the value inf (or nan)
    return q + (ss.detach() / 0.0 - q.detach())


@public(numpy_keywords=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False``
    means 0); ``correction >= n`` gives inf (nan for constant data) and warns, as PyTorch."""
    if input.dtype is D.float16:  # squares overflow in half: in float32, as PyTorch
        return _var(input.to(D.float32), dim, unbiased, keepdim, correction, "var").to(D.float16)
    return _var(input, dim, unbiased, keepdim, correction, "var")


@public(numpy_keywords=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, ``sqrt(var(...))``; its gradient is 0 where the deviation is 0
    (as PyTorch), not 0/0."""
    if input.dtype is D.float16:  # squares overflow in half: in float32, as PyTorch
        v = _var(input.to(D.float32), dim, unbiased, keepdim, correction, "std")
        return bind(SafeSqrt, (v,), {}).to(D.float16)
    return bind(SafeSqrt, (_var(input, dim, unbiased, keepdim, correction, "std"),), {})


def _check_softmax_input(name, input, dim):
    """PyTorch's softmax kernels exist for floating dtypes only (pass ``dtype=``)."""
    if not input.dtype.is_floating_point and input.numel():
        kernel = (
            "lastdim_kernel_impl" if dim == input.ndim - 1 or input.ndim == 0 else "kernel_impl"
        )
        raise NotImplementedError(
            f"\"{name}_{kernel}\" not implemented for '{_torch_name(input.dtype)}'"
        )


@public(numpy_keywords=True)
def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably (floating inputs, or pass
    ``dtype``)."""
    if dtype is not None:
        input = input.to(dtype)
    d = wrap_dim(dim, input.ndim)
    _check_softmax_input("softmax", input, d)
    if not input.dtype.is_floating_point:  # empty: nothing to compute
        return F.clone(input)
    return bind(Softmax, (input,), {"dim": d})


@public(numpy_keywords=True)
def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, computed stably (floating inputs, or pass
    ``dtype``)."""
    if dtype is not None:
        input = input.to(dtype)
    d = wrap_dim(dim, input.ndim)
    _check_softmax_input("log_softmax", input, d)
    if not input.dtype.is_floating_point:
        return F.clone(input)
    return bind(LogSoftmax, (input,), {"dim": d})


# -- the extra scans and reductions (exported through ``ops/math.py``) ---------------------------
# ``(min, max)`` as PyTorch's ``torch.return_types.aminmax``
_Pair = collections.namedtuple("aminmax", ["min", "max"])


def _kth(input, dim, keepdim, pick, name):
    """``(values, indices)`` of the element at sorted position ``pick(order, d)`` along
    ``dim``: stable ascending order (NaN last), values gathered (the gradient goes to the
    chosen element)."""
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _MinMax((F.clone(input), F.argsort(input)))
    if input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    order = F.argsort(input, d, stable=True)
    idx = pick(order, d)
    values = bind(Gather, (input, idx), {"dim": d})
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return _MinMax((values, idx))


def _at(order, d, k):
    return F.narrow(order, d, k, 1)


@public
def median(input, dim=None, keepdim=False):
    """The lower median of all elements, or ``(values, indices)`` along ``dim``.

    NaN wherever a NaN is reduced (along a dim, its index is the first NaN's). Over all
    elements the gradient is shared by the elements equal to the median; along a dim it
    goes to the returned index. Among equal values the index returned may differ from
    PyTorch's (which leaves it unspecified): this one is a stable sort's.

    Parameters
    ----------
    input : Tensor
    dim : int, optional
    keepdim : bool, default False

    Returns
    -------
    Tensor, or (values, indices) with ``dim``

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[3.0, 1.0, 2.0, 4.0], [0.0, 5.0, 6.0, 7.0]])
    >>> numbagrad.median(x)
    tensor(3.)
    >>> numbagrad.median(x, 1).values
    tensor([2., 5.])
    """
    if dim is None:
        return bind(Median, (input,), {"dims": None, "keepdim": False, "evenly": True})

    def pick(order, d):
        k = _at(order, d, (input.shape[d] - 1) // 2)
        if not input.is_floating_point():
            return k
        nan = F.isnan(input)
        first = argmax(nan.to(D.int32), d, keepdim=True)
        return F.where(any(nan, d, keepdim=True), first, k)

    return _kth(input, dim, keepdim, pick, "median")


@public
def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaN (NaN only where every reduced element is NaN).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nanmedian(numbagrad.tensor([1.0, float("nan"), 3.0, 2.0]))
    tensor(2.)
    """
    if dim is None:  # PyTorch's gradient: shared by the elements equal to the result
        return bind(Nanmedian, (input,), {"dims": None, "keepdim": False, "evenly": True})
    x = input

    def pick(order, d):
        # the lower median of the non-NaN values (they sort first); 0 when all are NaN
        count = sum(~F.isnan(x), d, keepdim=True)
        k = F.clamp(F.floor_divide(count - 1, 2), min=0)
        return F.take_along_dim(order, k, d)

    return _kth(x, dim, keepdim, pick, "nanmedian")


@public
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index (NaN counts as
    the largest value); the gradient goes to that element.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.kthvalue(numbagrad.tensor([4.0, 1.0, 3.0, 2.0]), 2).values
    tensor(2.)
    """
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kth(input, d, keepdim, lambda order, d: _at(order, d, k - 1), "kthvalue")


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    """PyTorch's ``quantile_compute`` as a composite: sort, ranks ``q * (n - 1)`` (the
    non-NaN count for ``nanquantile``; the last index where a NaN makes the result NaN),
    gather below and above, interpolate with ``lerp``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _QUANTILE_MODES:
        raise ValueError(
            f"{name}() interpolation must be one of linear, lower, higher, "
            f"midpoint or nearest. Got {interpolation}"
        )
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if type(q) is Tensor and q.numel():  # (a plain tensor: a transform's has no values)
            qa = q.detach().cpu().numpy()
            if not ((qa >= 0) & (qa <= 1)).all():
                raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qt = q
    else:
        qf = float(q)
        if not 0 <= qf <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {qf}")
        qt = _tensor(qf, dtype=input.dtype, device=input.device)
    scalar_q = qt.ndim == 0
    if dim is None:
        x, d = F.reshape(input, (-1,)), 0
    else:
        d = wrap_dim(dim, input.ndim)
        x = input if input.ndim else F.reshape(input, (1,))
    srt = F.movedim(F.sort(x, d)[0], d, -1)  # (..., n), NaN last
    n = srt.shape[-1]
    qv = F.reshape(qt, (-1,))
    shape = (*srt.shape[:-1], qv.shape[0])
    nan = F.isnan(srt)
    if ignore_nan:
        count = sum(~nan, -1, keepdim=True)
        ranks = qv * (count - 1).to(input.dtype)
        ranks = F.where(ranks < 0, 0, ranks)
    else:
        ranks = F.where(any(nan, -1, keepdim=True), float(n - 1), qv * (n - 1))
    ranks = F.expand(ranks, shape)
    if interpolation == "lower":
        ranks = F.floor(ranks)
    elif interpolation == "higher":
        ranks = F.ceil(ranks)
    elif interpolation == "nearest":
        ranks = F.round(ranks)
    below = ranks.to(D.int64)
    out = F.take_along_dim(srt, below, -1)
    if interpolation in ("linear", "midpoint"):
        above = F.ceil(ranks).to(D.int64)
        w = 0.5 if interpolation == "midpoint" else ranks - below.to(ranks.dtype)
        out = F.lerp(out, F.take_along_dim(srt, above, -1), w)
    out = F.squeeze(out, -1) if scalar_q else F.movedim(out, -1, 0)
    if keepdim:
        lead = 0 if scalar_q else 1
        if dim is None:
            out = F.reshape(out, tuple(out.shape[:lead]) + (1,) * input.ndim)
        elif input.ndim:
            out = F.unsqueeze(out, lead + d)
    return out


@public
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of ``input`` over ``dim`` (all elements when None).

    Parameters
    ----------
    input : Tensor
        float32 or float64.
    q : float or Tensor
        In ``[0, 1]``; a 1-D tensor (of ``input``'s dtype) gives one result per entry,
        along a new leading dimension.
    dim : int, optional
    keepdim : bool, default False
    interpolation : {'linear', 'lower', 'higher', 'midpoint', 'nearest'}
        Between the two nearest sorted values, as NumPy's and PyTorch's.

    Returns
    -------
    Tensor
        NaN where a NaN is reduced. Differentiable with respect to ``input`` (the
        gradient goes to the sorted values used, weighted by the interpolation).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.quantile(numbagrad.tensor([1.0, 2.0, 3.0, 4.0]), 0.25)
    tensor(1.7500)
    """
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


@public
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN (NaN only where every reduced element is NaN).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nanquantile(numbagrad.tensor([1.0, float("nan"), 3.0]), 0.5)
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


@public
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    """:func:`sum` treating NaN as zero.

    The gradient is PyTorch's, ``grad * 0`` at the NaN elements (NaN where ``grad`` is
    infinite, as from :func:`nanmean` over an all-NaN slice).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nansum(numbagrad.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    if not input.is_floating_point():
        return sum(input, dim, keepdim, dtype=dtype)
    if dtype is not None:
        input = input.to(dtype)
    return bind(Nansum, (input,), {"dims": _reduce_dims(input, dim), "keepdim": keepdim})


class Nansum(Primitive):
    """The sum of the non-NaN elements over ``dims``; PyTorch's ``nansum_backward``,
    ``grad * ~isnan(x)`` (so NaN where the gradient is infinite), and its JVP
    ``sum(where(isnan(x), 0, t))``."""

    saves_inputs = (0,)
    batch = classmethod(_reduce_batch)

    @staticmethod
    def impl(be, x, dims, keepdim):
        return be.xp.asarray(be.xp.nansum(x, axis=dims, keepdims=keepdim), x.dtype)

    @staticmethod
    def vjp(ctx, g, dims, keepdim):
        (x,) = ctx.saved()
        return _expand_back(g, x.shape, dims, keepdim) * (~F.isnan(x)).to(g.dtype)

    @staticmethod
    def jvp(primals, tangents, out, dims, keepdim):
        return _sum(F.where(F.isnan(primals[0]), 0, tangents[0]), dims, keepdim)


@public
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    """:func:`mean` of the non-NaN elements (NaN where all are NaN).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nanmean(numbagrad.tensor([1.0, float("nan"), 2.0]))
    tensor(1.5000)
    """
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex "
            f"dtype but got {_torch_name(input.dtype)}"
        )
    count = sum(~F.isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim) / count.to(input.dtype)


def _var_args(dim, unbiased):
    # var_mean(x, True) is the ``unbiased`` overload, as in PyTorch
    if isinstance(dim, bool):
        return None, dim
    return dim, unbiased


@public(method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim`` in one call (see :func:`var` for ``correction``).

    Examples
    --------
    >>> import numbagrad
    >>> v, m = numbagrad.var_mean(numbagrad.tensor([1.0, 2.0, 3.0, 4.0]))
    >>> print(round(float(v), 4), float(m))
    1.6667 2.5
    """
    dim, unbiased = _var_args(dim, unbiased)
    return (var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


@public(method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim`` in one call (see :func:`std`).

    Examples
    --------
    >>> import numbagrad
    >>> s, m = numbagrad.std_mean(numbagrad.tensor([1.0, 3.0]))
    >>> print(round(float(s), 4), float(m))
    1.4142 2.0
    """
    dim, unbiased = _var_args(dim, unbiased)
    return (std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


@public
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (all elements when None); ties share the gradient.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.aminmax(numbagrad.tensor([[1.0, 5.0], [-2.0, 3.0]]), dim=1).max
    tensor([5., 3.])
    """
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as "
                "the operation has no identity."
            )
        lo, hi = amin(input, (), keepdim), amax(input, (), keepdim)
    else:
        d = wrap_dim(dim, input.ndim)
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {dim} to have non-zero size.")
        lo, hi = amin(input, d, keepdim), amax(input, d, keepdim)
    return _Pair(lo, hi)


@public
def msort(input):
    """``input`` sorted along its first dimension (the values of ``sort(input, 0)``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.msort(numbagrad.tensor([[3.0, 1.0], [2.0, 4.0]]))
    tensor([[2., 1.],
            [3., 4.]])
    """
    return F.sort(input, 0)[0]


@public
def count_nonzero(input, dim=None):
    """The number of non-zero elements over ``dim`` (int, tuple or None for all), int64.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.count_nonzero(numbagrad.tensor([[0, 1, 2], [0, 0, 3]]), dim=1)
    tensor([2, 1])
    """
    return sum(input != 0, dim)


# (the ops are public through ``@public``: NOTE [Public ops] in ``ops/_public.py``)
__all__: list = []
