"""vmap: batched values and the interpreter that applies batching rules.

Each primitive's ``batch(args, dims, **params)`` rule (NOTE [Primitive declaration])
receives the parent-level operands and, per operand, the position of its batch dimension
(None for an unbatched operand; at least one is batched); it returns ``(out, out_dim)``
(tuples of both for multi-output primitives; an ``out_dim`` of None means the output is
not batched). Rules run with the parent current and are written with numbagrad ops.
A primitive without a rule runs once per batch element and the results are stacked, with
a one-time warning naming the op (``loop_batch``).
"""

from __future__ import annotations

import warnings

from numbagrad import ops as F
from numbagrad._core import extension
from numbagrad._core.grad_mode import is_grad_enabled_fast
from numbagrad._core.interpreter import _CURRENT, EVAL, bind, current_interpreter
from numbagrad._tensor import Tensor
from numbagrad._transforms.forward import zero_tangent
from numbagrad._transforms.tracer import (
    Tracer,
    TransformInterpreter,
    mark_born,
    mark_view,
    np_dtype_of,
    shape_of,
)
from numbagrad.ops._rules import align_batched, promote_examples, same_layout

__all__ = ["BatchInterpreter", "BatchTracer", "loop_batch", "move_to_front"]

_WARNED: set = set()


class BatchInterpreter(TransformInterpreter):
    """Runs ops on values with one extra (batch) dimension of length ``size``."""

    __slots__ = ("legacy", "randomness", "size")
    fills_plain = False  # a batched value cannot go into an unbatched tensor (as PyTorch)
    # ``process`` binds only under its parent, set where it does (rules, the loop fallback,
    # Functions' ``process_batch``, ``to_parent``); its elementwise fast path binds nothing
    sets_current = True

    def __init__(self, parent, size, randomness="error", name="numbagrad.vmap"):
        super().__init__(parent, name)
        self.size = size
        self.randomness = randomness
        # PyTorch's legacy vmap (``torch._vmap_internals``), which gradcheck's batched
        # checks, ``autograd.grad(is_grads_batched=True)`` and the vectorized
        # ``autograd.functional`` Jacobians use: a custom Function inside it runs as it is,
        # on the batched values, never through its ``vmap`` rule (NOTE [Functions under
        # transforms]); set by ``numbagrad.autograd._function_transforms.legacy_vmap``
        self.legacy = False

    def process(self, prim, args, params):
        # one pass over the operands: their parent-level values and batch dimensions
        dims = None
        for i, a in enumerate(args):
            if type(a) is BatchTracer and a._interp is self:
                if dims is None:
                    dims = [None] * len(args)
                    vals = list(args)
                dims[i] = a._bdim
                vals[i] = a._val
        if dims is None:
            return self.to_parent(prim, args, params)
        custom = prim.process_batch
        if custom is not None:
            return custom(self, args, params)
        if prim.layout_batch and self.parent is EVAL:
            # the stock elementwise rule's common case, without running the rule: over
            # the eager interpreter the op on the operands as they are is all it does
            # (unless the examples promote otherwise than the batch: the rule casts)
            d = same_layout(vals, dims)
            if d is not None and not (prim.promotes and promote_examples(vals, dims) is not vals):
                t = BatchTracer._new(self, prim._eval(vals, params), d)
                return mark_view(prim, t, args, params) if prim.view else t
        token = _CURRENT.set(self.parent)
        try:
            rule = prim.batch
            if rule is None:
                out, odim = loop_batch(prim, vals, dims, self.size, params)
            else:
                out, odim = rule(vals, dims, **params)
        finally:
            _CURRENT.reset(token)
        if prim.n_out == 1:
            if odim is None or not isinstance(out, Tensor):
                return out
            t = BatchTracer._new(self, out, odim)
            return mark_view(prim, t, args, params) if prim.view else t
        return tuple(self.wrap(o, d) for o, d in zip(out, odim))

    def lift(self, value):
        """A value this level does not own, as a batch of copies."""
        token = _CURRENT.set(self.parent)
        try:
            v = F.expand(F.unsqueeze(value, 0), (self.size, *shape_of(value)))
        finally:
            _CURRENT.reset(token)
        return BatchTracer._new(self, v, 0)

    def wrap(self, value, bdim):
        if bdim is None or not isinstance(value, Tensor):
            return value
        return BatchTracer._new(self, value, bdim)


def move_to_front(x, d):
    """``x`` with its batch dimension ``d`` moved to position 0."""
    if d == 0 or d is None:
        return x

    return F.movedim(x, d, 0)


def loop_batch(prim, vals, dims, size, params):
    """The fallback rule: apply ``prim`` per batch element and stack the results."""
    name = prim.__name__
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {name}: vmap runs it once per batch element and stacks the results.",
            UserWarning,
            stacklevel=4,
        )
    outs = []
    for i in range(size):
        sl = [F.select(v, d, i) if d is not None else v for v, d in zip(vals, dims)]
        outs.append(bind(prim, sl, params))
    if prim.n_out == 1:
        return F.stack(outs), 0
    return tuple(F.stack(list(col)) for col in zip(*outs)), (0,) * prim.n_out


_ITEM = (
    "vmap: It looks like you're calling {what} on a Tensor. We don't support vmap over "
    "calling {what} on a Tensor, please try to rewrite what you're doing with other "
    "operations."
)
_CONTROL = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
    "control flow. We don't support that yet: rewrite it with numbagrad.where or "
    "other ops that work on the whole batch."
)


class BatchTracer(Tracer):
    """A value with a batch dimension ``_bdim`` in its parent-level value ``_val``."""

    __slots__ = ()
    _FIELDS = (*Tracer._FIELDS, "_bdim", "_val")

    @classmethod
    def _new(cls, interp, val, bdim):
        t = object.__new__(cls)
        if type(val) is Tensor:  # (the common case: Tracer._init_tracer's stores inline)
            d = val._data
            shape = d.shape
            if bdim < 0:
                bdim += len(shape)
            t._interp = interp
            t._shape = shape[:bdim] + shape[bdim + 1 :]
            t._np_dtype = d.dtype
            t._storage = [None, 0]
            t._requires_grad = False
            t._grad_fn = None
            t._view_of = None
            t._val = val
            t._bdim = bdim
            return t
        shape = shape_of(val)
        if bdim < 0:
            bdim += len(shape)
        t._init_tracer(interp, shape[:bdim] + shape[bdim + 1 :], np_dtype_of(val))
        t._val = val
        t._bdim = bdim
        return t

    def _parent_value(self):
        return self._val

    def _check_inplace(self):
        """Before the first in-place op on a ``vmap`` input that is part of an eager graph:
        the op reads a recorded clone of it, so that what it saves for the backward keeps
        the old value when the new one is written back into the caller's tensor at the end
        (PyTorch's in-place ops save a copy of the original where their derivative reads
        it)."""
        d = self.__dict__
        if d.get("_input_of_graph"):
            del d["_input_of_graph"]
            v = self._val
            if type(v) is Tensor and v._requires_grad and is_grad_enabled_fast():
                self._val = v.clone()

    def _concrete(self, what):
        if what in ("bool()", "an index"):
            raise RuntimeError(_CONTROL)
        raise RuntimeError(_ITEM.format(what=what))

    def _inner_repr(self):
        return f"lvl={self._interp.name}, bdim={self._bdim}, value={self._val!r}"

    def _layout_value(self):
        return None  # (the batch's layout is not an example's)

    def detach(self):
        v = self._val
        return BatchTracer._new(
            self._interp, v.detach() if isinstance(v, Tensor) else v, self._bdim
        )

    def _take(self, result):
        if type(result) is BatchTracer and result._interp is self._interp:
            result = _keep_outer_history(self, result)
        super()._take(result)


def _keep_outer_history(old, new):
    """The new value ``new`` of the batched value ``old`` (an in-place op), where the levels
    below this one that computed ``new`` with nothing recorded (``no_grad`` inside a
    ``func.grad`` around the ``vmap``) keep ``old``'s history at those levels: their
    ``_assigned`` takes the new data under the old tape node, as a tensor changed in place
    under ``no_grad`` keeps its ``grad_fn``. Without this the outer ``grad`` saw a
    constant and returned zeros."""
    inner_old, inner_new = old._val, new._val
    if new._bdim != old._bdim:
        inner_new = F.movedim(inner_new, new._bdim, old._bdim)
    if type(inner_old) is BatchTracer and type(inner_new) is BatchTracer:
        if inner_new._interp is inner_old._interp:
            inner_new = _keep_outer_history(inner_old, inner_new)
    elif isinstance(inner_old, Tracer) and not (
        type(inner_new) is type(inner_old) and inner_new._interp is inner_old._interp
    ):
        inner_new = inner_old._assigned(inner_new)
    elif inner_new is new._val:
        return new
    return BatchTracer._new(old._interp, inner_new, old._bdim)


_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either "
    "use the 'same' or 'different' randomness flags on vmap or perform the "
    "randomness operation out of vmap"
)


_SAME_BATCHED = (
    "vmap: Vmap does not currently support same randomness with a batched tensor input. "
    "Please file an issue with functorch"
)
_INPLACE_UNBATCHED = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
    "appear like same randomness. If this is necessary for your usage, please file an issue "
    "with functorch."
)


def _batch_levels(t):
    """``(levels, base)``: the live vmap interpreters value ``t`` is batched at, outermost
    first (the order of the batch dimensions of its base value), and that base value."""
    levels = []
    while isinstance(t, Tracer):
        if type(t) is BatchTracer and t._interp.alive:
            levels.append(t._interp)
        t = t._parent_value()
    levels.reverse()
    return levels, t


def _batched_at(levels, value):
    """``value``, whose leading dimensions are the batches of ``levels`` (outermost first),
    as a value batched at each of them; made here, so marked born (``mark_born``)."""
    for interp in levels:
        value = BatchTracer._new(interp, value, 0)
    mark_born(value)  # an inner transform may write its values into it
    return value


def _random_hook(make, size, what, fill=None):
    """NOTE [Randomness under vmap] in ``_creation.py``: a draw of ``size`` (``make(shape)``
    gives the array). Every live vmap from the current one outwards
    decides for its own level, as PyTorch's batching rules do: ``'error'`` raises, ``'same'``
    leaves the draw unbatched there, ``'different'`` gives it that level's batch dimension.
    For an in-place fill of ``fill``, ``'different'`` needs ``fill`` batched at that level.
    Returns the batched draw, or None where no level batches it (``make`` None: a draw
    that cannot be batched, ``randperm`` on a CUDA device, raises under ``'different'``)."""
    interp = current_interpreter()
    levels = []
    fill_levels = None
    recorder = None  # a numbagrad.compile trace (NOTE [Compile traces])
    while interp is not None and interp is not EVAL:
        if getattr(type(interp), "record_draw", None) is not None:
            recorder = interp
        if type(interp) is BatchInterpreter and interp.alive:
            if interp.randomness == "error":
                raise RuntimeError(_RANDOM_ERROR)
            if interp.randomness == "different":
                if make is None:
                    raise NotImplementedError(
                        f"{what} on a CUDA device under vmap(randomness='different') is not "
                        "supported: draw the permutations outside vmap, or on the CPU"
                    )
                if fill is not None:
                    if fill_levels is None:
                        fill_levels = _batch_levels(fill)[0]
                    if not any(lv is interp for lv in fill_levels):
                        raise RuntimeError(_INPLACE_UNBATCHED)
                levels.append(interp)
        interp = interp.parent
    if recorder is not None:  # a draw a compiled call must make anew on every call
        if levels or fill is not None or make is None:
            recorder.unrecorded_draw(what)
        else:
            return recorder.record_draw(make, tuple(size))
    if not levels:
        return None
    levels.reverse()  # outermost first: its batch is the first dimension
    return _batched_at(levels, Tensor._make(make((*(lv.size for lv in levels), *tuple(size)))))


def _random_op(fn, args, what):
    """NOTE [Randomness under vmap]: a random op of tensors (``bernoulli(p)``, ``poisson``,
    ``normal(mean, std)``, ``multinomial``) run level by level like a primitive: ``fn`` on
    plain tensors, with no transform current, draws. A vmap level applies its randomness
    (``'error'`` raises, ``'same'`` needs unbatched operands and draws once, ``'different'``
    draws for the whole batch, an unbatched operand expanded to it); any other transform's
    values are constants to a draw. None when no transform is current."""
    interp = current_interpreter()
    if interp is EVAL:
        return None
    if getattr(type(interp), "record_draw_of", None) is not None:
        # a numbagrad.compile trace with no transform inside it: one recorded draw
        return interp.record_draw_of(fn, args, what)
    i = interp
    while i is not None and i is not EVAL:
        if getattr(type(i), "record_draw", None) is not None:
            i.unrecorded_draw(what)  # (under a transform inside the trace: a graph break)
        i = i.parent
    return _random_op_at(interp, fn, list(args), what)


def _random_op_at(interp, fn, args, what):
    if interp is EVAL:
        return fn(*args)
    parent = interp.parent
    token = _CURRENT.set(parent)
    try:
        if type(interp) is not BatchInterpreter:
            owned = [isinstance(a, Tracer) and a._interp is interp for a in args]
            vals = [a._parent_value() if o else a for a, o in zip(args, owned)]
            out = _random_op_at(parent, fn, vals, what)
            if True in owned and getattr(interp, "level", None) is not None:
                # a draw from duals in a forward_ad level: a zero tangent, as PyTorch's
                return interp.dual(out, zero_tangent(out))
            return out
        if interp.randomness == "error":
            raise RuntimeError(_RANDOM_ERROR)
        dims = [a._bdim if type(a) is BatchTracer and a._interp is interp else None for a in args]
        vals = [a._val if d is not None else a for a, d in zip(args, dims)]
        if interp.randomness == "same":
            if any(d is not None for d in dims):
                raise RuntimeError(_SAME_BATCHED)
            return _random_op_at(parent, fn, vals, what)

        vals = [
            v if d is not None else F.expand(F.unsqueeze(v, 0), (interp.size, *shape_of(v)))
            for v, d in zip(vals, dims)
        ]
        dims = [0 if d is None else d for d in dims]
        out = _random_op_at(parent, fn, align_batched(vals, dims), what)
    finally:
        _CURRENT.reset(token)
    return BatchTracer._new(interp, out, 0)


def _batched_like(t, shape, make):
    """``zeros_like``/``new_zeros``... of ``t`` under vmap (``_creation.like_new``): batched
    at every live vmap level ``t`` is batched at, as PyTorch's; None when it is at none.
    The result is a constant: the other transforms' levels are left out."""
    levels, base = _batch_levels(t)
    if not levels:
        return None
    return _batched_at(levels, make((*(interp.size for interp in levels), *shape), base))


# the calls up from ``_creation`` (NOTE [Extension points])
extension.register(random=_random_hook, random_op=_random_op, batched_like=_batched_like)
