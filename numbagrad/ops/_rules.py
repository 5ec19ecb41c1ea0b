"""Rule families shared by many primitives, so that each formula is stated once.

- ``Unary`` ops (``ops/unary.py``) state a local derivative ``derivative(m, s)``.
- ``both_ways(formula)`` turns one VJP formula written with operators and ``m.<name>``
  calls into the tensor rule (``m`` = the op namespace, differentiable) and the fused
  array rule (``m`` = the backend's array math), the pattern of PyTorch's
  ``derivatives.yaml`` entries that serve both its autograd and its fused kernels.
- ``bound_both_ways(formula)``: the same for a gradient that is one application of a
  primitive (``SigmoidBackward`` of ``g`` and the output, ``Permute`` by the inverse
  permutation): bound for the tensor rule, its ``impl`` on arrays for the fused one.
- ``linear_jvp`` / ``bilinear_jvp``: the JVP of every op declaring ``linearity``.
- ``broadcast_batch`` / ``unary_batch`` / ``elementwise_batch``: the batching rules of
  elementwise ops. The first two keep the batch dimension where it is when the operands'
  layouts line up (``same_layout``); ``Primitive.layout_batch`` marks the ops that use them,
  so that ``vmap`` over the eager interpreter applies the op without running a rule
  (``BatchInterpreter.process``).

NOTE [Hand-written fused rules]
A primitive's ``fused_vjp`` comes from ``both_ways``/``bound_both_ways`` (or the ``Unary``
family's ``derivative``) wherever it is the tensor rule's formula on arrays. The ones still
written by hand say why in a comment above them; the reasons are of three kinds: memory or
passes (a one-pass backend kernel such as ``mul_backward`` or ``unary_backward``, a
broadcast view instead of a copy, zeros made without reading ``g``); a rule that is more
than one op application (two gradients, a cast then a product, None for index operands);
and array forms the backend's ``math`` namespace does not have (``zeros_like``,
``isfinite``), which ``numbagrad/kernels/`` would have to add first. The op database
checks each against its ``vjp`` (``tests/test_ops.py``).
"""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.interpreter import bind
from numbagrad._creation import const_zeros_like as _zeros_like
from numbagrad._tensor import Tensor

__all__ = [
    "align_batched",
    "bilinear_jvp",
    "both_ways",
    "bound_both_ways",
    "broadcast_batch",
    "conj_all",
    "elementwise_batch",
    "front",
    "linear_jvp",
    "passthrough",
    "same_layout",
    "unary_batch",
]


def both_ways(formula):
    """``(vjp, fused_vjp)`` from ``formula(m, ctx, saved, *grads, **params)``.

    ``saved`` is ``ctx.saved()`` (tensors) for the VJP and ``ctx.saved_arrays()`` for the
    fused rule; ``m`` is the matching math namespace (NOTE [Backends]).
    """

    def vjp(ctx, *grads, **params):
        return formula(F, ctx, ctx.saved(), *grads, **params)

    def fused_vjp(ctx, *grads, **params):
        return formula(ctx.be.math, ctx, ctx.saved_arrays(), *grads, **params)

    vjp.__name__ = fused_vjp.__name__ = formula.__name__
    vjp.__doc__ = fused_vjp.__doc__ = formula.__doc__
    return staticmethod(vjp), staticmethod(fused_vjp)


def bound_both_ways(formula):
    """``(vjp, fused_vjp)`` (classmethods) from ``formula(cls, ctx, saved, *grads,
    **params)``, which returns ``(prim, operands, params)``: the gradient is ``prim``
    applied to ``operands``, bound (so differentiable, recorded as ``prim``'s node) in the
    VJP and ``prim.impl`` on the arrays in the fused rule. ``saved`` is as for
    ``both_ways`` (empty, and not read, for an op that saves nothing: its backward may run
    again after the graph is freed); ``cls`` is the declaring primitive (``Tril``,
    ``Triu``)."""

    def vjp(cls, ctx, *grads, **params):
        saved = ctx.saved() if cls.saves_inputs or cls.saves_output else ()
        prim, args, p = formula(cls, ctx, saved, *grads, **params)
        return bind(prim, args, p)

    def fused_vjp(cls, ctx, *grads, **params):
        saved = ctx.saved_arrays() if cls.saves_inputs or cls.saves_output else ()
        prim, args, p = formula(cls, ctx, saved, *grads, **params)
        return prim.impl(ctx.be, *args, **p)

    vjp.__name__ = fused_vjp.__name__ = formula.__name__
    vjp.__doc__ = fused_vjp.__doc__ = formula.__doc__
    return classmethod(vjp), classmethod(fused_vjp)


def conj_all(values):
    """``values`` (saved tensors, arrays or numbers) with the complex ones conjugated: the
    VJP of a holomorphic op is its real rule on conjugated operands (NOTE [Complex
    autograd] in ``ops/cplx.py``); real values pass through untouched."""
    for v in values:  # the common case first: real arrays and numbers, returned as they are
        t = type(v)
        if t is np.ndarray:
            if v.dtype.kind == "c":
                break
        elif t is not float and t is not int and t is not bool and v is not None:
            break
    else:
        return values
    out = None
    for i, v in enumerate(values):
        if isinstance(v, Tensor):
            c = F.conj(v) if v.dtype.is_complex else v
        else:
            dt = getattr(v, "dtype", None)
            if dt is not None:
                c = v.conj() if dt.kind == "c" else v
            else:
                c = v.conjugate() if type(v) is complex else v
        if c is not v:
            if out is None:
                out = list(values)
            out[i] = c
    return values if out is None else tuple(out)


def passthrough(ctx, *grads, **params):
    """The VJP of an op whose gradient is its output gradient, unchanged (tensors and
    arrays alike): ``clone``, ``expand`` (the engine sums the broadcast back)."""
    return grads[0]


# -- forward mode (NOTE [Primitive declaration], ``jvp``) --------------------------------------
def _data_positions(prim, n):
    data = prim.data_operands
    if data is None:
        return ()
    return data if type(data) is tuple else data(n)


def _zero_like(p):
    return _zeros_like(p) if isinstance(p, Tensor) else 0


def linear_jvp(prim, primals, tangents, out, **params):
    """The JVP of an op linear in its non-data operands jointly: the op of the tangents."""
    data = _data_positions(prim, len(primals))
    args = [
        p if i in data else (t if t is not None else _zero_like(p))
        for i, (p, t) in enumerate(zip(primals, tangents))
    ]
    return bind(prim, args, params)


def bilinear_jvp(prim, primals, tangents, out, **params):
    """The JVP of an op linear in each operand separately (product rule)."""
    acc = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        args = list(primals)
        args[i] = t
        term = bind(prim, args, params)
        acc = term if acc is None else acc + term
    return acc


# -- batching (``batch``) ----------------------------------------------------------------------
def align_batched(args, dims):
    """Operands of a broadcasting op with each batch dimension moved to the front and the
    batched ones padded with size-1 dimensions after it, so that broadcasting lines the
    per-example dimensions up and the batch dimension stays in front."""
    rank = 0
    for a, d in zip(args, dims):
        if isinstance(a, Tensor):
            r = a.ndim - (d is not None)
            if r > rank:
                rank = r
    out = []
    for a, d in zip(args, dims):
        if d is not None:
            if d != 0:
                a = F.movedim(a, d, 0)
            shape = tuple(a.shape)
            if len(shape) - 1 < rank:
                a = F.reshape(a, shape[:1] + (1,) * (rank - len(shape) + 1) + shape[1:])
        out.append(a)
    return out


def elementwise_batch(prim, args, dims, **params):
    """The batching rule of broadcasting elementwise ops: one call on the whole batch."""
    return bind(prim, align_batched(args, dims), params), 0


def same_layout(args, dims):
    """The batch dimension ``d`` that an elementwise op on ``args`` as they are keeps, or
    None when their layouts do not line up: the batched operands must share ``d`` and
    their rank, and every unbatched tensor must broadcast into the dimensions after ``d``."""
    if len(dims) == 1:
        return dims[0]
    if len(dims) == 2:  # (binary ops: the same test, unrolled)
        a, b = args
        da, db = dims
        if da is not None and db is not None:
            return da if da == db and a.ndim == b.ndim else None
        if da is None:
            a, b, da = b, a, db
        return None if isinstance(b, Tensor) and b.ndim >= a.ndim - da else da
    d = n = None
    for a, k in zip(args, dims):
        if k is not None:
            if d is None:
                d, n = k, a.ndim
            elif k != d or a.ndim != n:
                return None
    for a, k in zip(args, dims):
        if k is None and isinstance(a, Tensor) and a.ndim >= n - d:
            return None
    return d


def promote_examples(args, dims):
    """The operands of a promoting binary op (``Primitive.promotes``) under ``vmap``, cast
    to the dtype their examples promote to when that differs from the batched values':
    PyTorch's promotion ranks a 0-d tensor below a dimensioned one of the same category,
    and an example that is 0-d is a 1-d batched value (``vmap(lambda x: x * c32)`` of a
    float64 batch of scalars is float32, as ``tensor(1.0, dtype=float64) * c32``)."""
    a, b = args
    da, db = dims
    # (first the cheap test: only a 1-d batch, i.e. 0-d examples, can promote otherwise)
    if not ((da is not None and a.ndim == 1) or (db is not None and b.ndim == 1)):
        return args
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a.dtype is b.dtype:
        return args
    ea, eb = a.ndim - (da is not None), b.ndim - (db is not None)
    if (ea == 0) == (a.ndim == 0) and (eb == 0) == (b.ndim == 0):
        return args  # (no operand changes rank class: the promotion is the same)
    dt = D.result_type(_Rank(a.dtype, ea), _Rank(b.dtype, eb))
    if dt is D.result_type(_Rank(a.dtype, a.ndim), _Rank(b.dtype, b.ndim)):
        return args
    return a.to(dt), b.to(dt)


class _Rank:
    """A dtype and a rank, as ``result_type`` reads a tensor."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, dtype, ndim):
        self.dtype, self.ndim = dtype, ndim


def broadcast_batch(prim, args, dims, **params):
    """The batching rule of broadcasting elementwise ops: one call on the operands as they
    are when their layouts line up (the batch stays at ``d``), else ``elementwise_batch``
    moves it to the front."""
    if prim.promotes:
        args = promote_examples(args, dims)
    d = same_layout(args, dims)
    if d is None:
        return elementwise_batch(prim, args, dims, **params)
    return bind(prim, args, params), d


def unary_batch(prim, args, dims, **params):
    """The batching rule of one-operand elementwise ops: the op on the whole batch, whose
    dimension stays where it is (no transpose)."""
    return bind(prim, args, params), dims[0]


# the rules for which ``vmap`` may apply the op itself when ``same_layout`` gives a dimension
LAYOUT_RULES = frozenset((broadcast_batch, unary_batch))


def front(x, d):
    """``x`` with batch dimension ``d`` moved to position 0."""
    return x if d == 0 else F.movedim(x, d, 0)
