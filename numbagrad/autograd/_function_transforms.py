"""A custom ``Function`` under the transforms: one rule per interpreter.

NOTE [Functions under transforms]
``Function.apply`` binds ``_FunctionApply``; each transform interpreter that owns one of
its inputs calls the hook here instead of a rule slot:

- reverse mode (``func.grad``/``vjp``): the application is handed down unwrapped (the
  parent applies the Function: eagerly, or through its own hook), ``setup_context`` fills
  a ctx for this level, and a tape node calls the user's ``backward``/``vjp`` with it;
- forward mode (``func.jvp``, ``forward_ad``): the same, then the user's ``jvp``; a
  ``forward_ad`` level over the eager interpreter also accepts the combined style
  (``forward(ctx, ...)``), reading the eager application's ctx;
- vmap: the user's ``vmap`` staticmethod, or with ``generate_vmap_rule = True`` a
  generated Function whose forward, backward and jvp are the user's under ``vmap``.

As in PyTorch, ``func`` transforms need the separate style (``setup_context``).

PyTorch's gradcheck batched checks, ``autograd.grad(is_grads_batched=True)`` and the
vectorized ``autograd.functional`` Jacobians use its legacy vmap, under which a Function is
no transform's business: its staticmethods run as they are on the batched values, whatever
its style, and its ``vmap`` rule is never called. ``legacy_vmap`` is that vmap: a
``BatchInterpreter`` marked ``legacy``. Under it a Function applied to batched values runs
inline (``_run_inline``) when nothing needs recording (grad mode off, or no input that
requires grad); a ``forward_ad`` level over legacy vmaps only applies Functions eagerly,
as over the eager interpreter (gradcheck's batched forward check: unbatched primals,
batched tangents). A Function applied to batched values that require grad (a backward
recorded with ``create_graph=True`` under ``is_grads_batched``) is batched through its
``vmap`` rule, and without one refuses with an error: PyTorch records it on its batched
tensors, which numbagrad's tape cannot hold.

A Function's outputs that are not tensors pass through every rule unchanged: no tangent
(jvp's for them is ignored, as PyTorch ignores it), no gradient (backward gets None), no
batch dimension (a vmap rule's ``out_dim`` for them is ignored).
"""

from __future__ import annotations

import functools
from collections import namedtuple

from numbagrad import ops as F
from numbagrad._core.grad_mode import _GRAD_ENABLED
from numbagrad._core.interpreter import _CURRENT, EVAL, current_interpreter
from numbagrad._creation import const_zeros_like as _zeros_like
from numbagrad._tensor import Tensor
from numbagrad._transforms.batching import BatchInterpreter, BatchTracer
from numbagrad._transforms.forward import DualTracer, fix_tangent, save_duals
from numbagrad._transforms.reverse import GradInterpreter, GradTracer
from numbagrad._transforms.tracer import np_dtype_of, shape_of
from numbagrad.autograd.function import (
    Function,
    FunctionCtx,
    _bind_inputs,
    _FunctionApply,
    apply_eager,
    register_transform_rules,
    with_ctx_tensors,
)
from numbagrad.func import vmap

__all__ = ["VmapInfo", "legacy_vmap"]

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])

_SETUP_MSG = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
    "jacrev, ...), it must override the setup_context staticmethod: define forward(*args) "
    "without ctx and setup_context(ctx, inputs, output) to save what backward needs "
    "({name})."
)


class TransformCtx(FunctionCtx):
    """The ctx a Function's ``setup_context``/``backward``/``jvp`` get under a transform:
    saved tensors are the values one level down."""

    _under_transform = True

    def __init__(self, fn, needs_input_grad):
        self._fn = fn
        self.needs_input_grad = tuple(needs_input_grad)
        self._saved = None

    @property
    def saved_tensors(self):
        d = self.__dict__
        if "saved_for_forward" in d and d.get("_in_jvp"):
            return tuple(d["saved_for_forward"])
        return tuple(d.get("to_save", ()))

    def name(self):
        return self._fn.__name__ + "Backward"

    def _being_differentiated(self):
        interp = current_interpreter()
        while interp is not None and interp is not EVAL:
            if isinstance(interp, GradInterpreter) and interp.alive:
                return True
            interp = interp.parent
        return False


def _check_style(fn):
    if not fn._separate_style:
        raise RuntimeError(_SETUP_MSG.format(name=fn.__name__))


def _lower_apply(interp, args, params):
    """Apply the Function one level down (its parent current)."""
    return interp.to_parent(_FunctionApply, args, params)


def _as_list(out):
    return (list(out), True) if isinstance(out, tuple) else ([out], False)


def _setup(fn, ctx, vals, kwargs, out):
    fn.setup_context(ctx, _bind_inputs(fn, tuple(vals), kwargs), out)


def _nondiff_ids(ctx):
    return {id(t) for t in ctx.__dict__.get("non_differentiable", ())}


# -- PyTorch's legacy vmap ------------------------------------------------------------------
def legacy_vmap(func):
    """``numbagrad.func.vmap(func)`` (over dimension 0 of every input) with PyTorch's legacy
    vmap's treatment of custom Functions (NOTE [Functions under transforms])."""

    @functools.wraps(func)
    def inner(*args):
        current_interpreter().legacy = True  # (the BatchInterpreter vmap just pushed)
        return func(*args)

    return vmap(inner)


def _eager_through_legacy(interp, primals):
    """Whether an application of plain ``primals`` that ``interp`` hands down meets only
    legacy vmaps on its way to the eager interpreter (so it can be applied eagerly)."""
    p = interp.parent
    while p is not EVAL:
        if type(p) is not BatchInterpreter or not p.legacy:
            return False
        p = p.parent
    return not any(isinstance(v, Tensor) and v._is_tracer for v in primals)


def _run_inline(interp, fn, args, kwargs):
    """The Function's forward (and ``setup_context``) run as they are on ``args``, under
    ``interp`` (a legacy vmap) with grad mode off: nothing to record, no rule needed."""
    ctx = TransformCtx(fn, [False] * len(args))
    token = _CURRENT.set(interp)
    grad_token = _GRAD_ENABLED.set(False)
    try:
        if fn._separate_style:
            out = fn.forward(*args, **kwargs)
            fn.setup_context(ctx, _bind_inputs(fn, tuple(args), kwargs), out)
        else:
            out = fn.forward(ctx, *args, **kwargs)
    finally:
        _GRAD_ENABLED.reset(grad_token)
        _CURRENT.reset(token)
    return out


# -- reverse mode -----------------------------------------------------------------------------
def process_grad(interp, args, params):
    fn, kwargs = params["fn"], params["kwargs"]
    _check_style(fn)
    owned = [type(a) is GradTracer and a._interp is interp for a in args]
    vals = [a._val if o else a for a, o in zip(args, owned)]
    needs = [o and np_dtype_of(a).kind in "fc" for a, o in zip(args, owned)]
    out = _lower_apply(interp, vals, params)
    ctx = TransformCtx(fn, needs)
    _setup(fn, ctx, vals, kwargs, out)
    outs, is_tuple = _as_list(out)
    nondiff = _nondiff_ids(ctx)
    edges = [(a._node, a._out_nr) if n else None for a, n in zip(args, needs)]
    if not any(needs):
        return out
    materialize = ctx.__dict__.get("materialize_grads", True)

    def rule(node, grads):
        if materialize:
            grads = [
                g if g is not None or not isinstance(o, Tensor) else _zeros_like(o)
                for g, o in zip(grads, outs)
            ]
        res = fn._backward_impl(ctx, *grads)
        return _check_grads(fn, res, vals)

    node = interp.record(_FunctionApply, params, vals, tuple(outs), edges, rule=rule)
    wrapped = []
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and id(o) not in nondiff:
            o = interp.wrap(o, node, i)
        wrapped.append(o)
    return tuple(wrapped) if is_tuple else wrapped[0]


def _check_grads(fn, res, vals):
    if not isinstance(res, (tuple, list)):
        res = (res,)
    n = len(vals)
    if len(res) > n and all(r is None for r in res[n:]):
        res = tuple(res[:n])
    if len(res) != n:
        raise RuntimeError(
            f"function {fn.__name__}Backward returned an incorrect number of "
            f"gradients (expected {n}, got {len(res)})"
        )
    out = []
    for i, (r, v) in enumerate(zip(res, vals)):
        if r is None:
            out.append(None)
            continue
        if not isinstance(r, Tensor):
            raise TypeError(
                f"function {fn.__name__}Backward returned a {type(r).__name__} as "
                f"the gradient at index {i}; gradients must be Tensors or None"
            )
        if not isinstance(v, Tensor):
            raise RuntimeError(
                f"function {fn.__name__}Backward returned a gradient different "
                f"than None at position {i}, but the corresponding forward "
                "input was not a Tensor"
            )
        out.append(r)
    return out


# -- forward mode -----------------------------------------------------------------------------
def process_jvp(interp, args, params):
    fn, kwargs = params["fn"], params["kwargs"]
    owned = [type(a) is DualTracer and a._interp is interp for a in args]
    primals = [a._primal if o else a for a, o in zip(args, owned)]
    eager_level = interp.level is not None and (
        interp.parent is EVAL or _eager_through_legacy(interp, primals)
    )
    if eager_level:
        # forward_ad over eager: both styles; the eager application's ctx serves jvp
        out, ctx = apply_eager(fn, tuple(primals), kwargs)
        # an input kept as a ctx attribute (``ctx.x = x``) is the dual, as in PyTorch:
        # a backward differentiated inside the level sees its tangent
        d = ctx.__dict__
        for k, v in list(d.items()):
            if isinstance(v, Tensor):
                for a, p, o in zip(args, primals, owned):
                    if o and v is p:
                        d[k] = a
                        break
    else:
        _check_style(fn)
        out = _lower_apply(interp, primals, params)
        ctx = TransformCtx(fn, [o for o in owned])
        _setup(fn, ctx, primals, kwargs, out)
    materialize = ctx.__dict__.get("materialize_grads", True)

    tangents = []
    for a, p, o in zip(args, primals, owned):
        if o:
            tangents.append(a._tangent)
        elif isinstance(p, Tensor) and materialize:
            tangents.append(_zeros_like(p))
        else:
            tangents.append(None)
    outs, is_tuple = _as_list(out)
    token = _CURRENT.set(interp.parent)
    d = ctx.__dict__
    kept = d.get("_ctx_tensors")  # (``del ctx.result`` in jvp: ``with_ctx_tensors``)
    d["_in_jvp"] = True
    try:
        if kept:
            tans = with_ctx_tensors(ctx, kept, fn.jvp, tangents)
        else:
            tans = fn.jvp(ctx, *tangents)
    finally:
        d["_in_jvp"] = False
        _CURRENT.reset(token)
    tans_l = _checked_tangents(tans, len(outs))
    nondiff = _nondiff_ids(ctx)
    # a dual marked dirty comes back as itself (NOTE [In-place on duals]): its primal was
    # changed in place by the forward, and its tangent must be by the jvp, as in PyTorch
    dirty = {}
    if eager_level:
        for t in ctx.__dict__.get("dirty_tensors", ()):
            for a, p, o in zip(args, primals, owned):
                if o and t is p:
                    dirty[id(p)] = a
    res = []
    out_tans = []
    for i, (o, t) in enumerate(zip(outs, tans_l)):
        a = dirty.get(id(o))
        if a is not None:
            if t is not None and t is not a._tangent:
                raise RuntimeError(
                    f"{fn.__name__}: an inplace custom Function is not modifying the forward "
                    "mode gradients inplace. If the forward is modifying an input inplace, "
                    "then the jvp function must modify the corresponding gradient inplace."
                )
            a._requires_grad, a._grad_fn, a._output_nr = o._requires_grad, o._grad_fn, o._output_nr
            a._refresh_views()
            res.append(a)
            out_tans.append(a._tangent)
            continue
        if not isinstance(o, Tensor):
            # (a non-tensor output passes through; PyTorch ignores a tangent for it)
            res.append(o)
            out_tans.append(None)
            continue
        if id(o) in nondiff:
            if t is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but  the "
                    "corresponding forward output is not a differentiable Tensor.You should "
                    "return None at that position instead."
                )
            res.append(o)
            out_tans.append(None)
            continue
        if t is not None:
            if shape_of(t) != shape_of(o):
                raise RuntimeError(
                    f"{fn.__name__}.jvp: the tangent of output {i} has shape "
                    f"{list(shape_of(t))}, but the output has shape "
                    f"{list(shape_of(o))}"
                )
            t = fix_tangent(t, o, fn.__name__ + ".jvp")
        res.append(interp.dual(o, t))
        out_tans.append(t)
    if eager_level:  # NOTE [Forward-over-reverse in a dual level]: the node saves duals
        save_duals(interp, outs, args, primals, out_tans)
        ct = ctx.__dict__.get("_ctx_tensors")  # (an output kept as ``ctx.out = y``)
        if ct:
            for k, v in ct.items():
                for o, r in zip(outs, res):
                    if v is o and r is not o:
                        ct[k] = r
    return tuple(res) if is_tuple else res[0]


def _checked_tangents(tans, n):
    """What a Function's ``jvp`` returned, as one tangent (a Tensor or None) per output of
    ``n``: as in PyTorch a tuple holds one per output and anything else is the one tangent
    (a list too), with PyTorch's errors."""
    tans = list(tans) if isinstance(tans, tuple) else [tans]
    for i, t in enumerate(tans):
        if t is not None and not isinstance(t, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {type(t).__name__}) for grad output {i}."
            )
    if len(tans) != n:
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{n} but got {len(tans)})"
        )
    return tans


# -- vmap ---------------------------------------------------------------------------------
def process_batch(interp, args, params):
    fn, kwargs = params["fn"], params["kwargs"]
    owned = [type(a) is BatchTracer and a._interp is interp for a in args]
    vals = [a._val if o else a for a, o in zip(args, owned)]
    user_vmap = fn.vmap is not Function.vmap
    if interp.legacy:
        if interp.parent is EVAL and not (
            _GRAD_ENABLED.get() and any(isinstance(v, Tensor) and v._requires_grad for v in vals)
        ):
            return _run_inline(interp, fn, args, kwargs)
        if not fn._separate_style or not (fn.generate_vmap_rule or user_vmap):
            raise RuntimeError(
                f"{fn.__name__}: numbagrad cannot batch this custom Function here. Under "
                "autograd.grad(is_grads_batched=True), gradcheck's batched checks and the "
                "vectorized autograd.functional Jacobians its staticmethods run as they are, "
                "as in PyTorch, but here it is applied to batched values that require grad "
                "(a backward recorded with create_graph=True), which numbagrad can only batch "
                "through a vmap rule: give it setup_context and a vmap staticmethod (or "
                "generate_vmap_rule = True), or do not ask for a graph of the batched "
                "gradients."
            )
    _check_style(fn)
    if fn.generate_vmap_rule and user_vmap:
        raise RuntimeError(
            f"You tried to vmap over {fn.__name__}, but it has both generate_vmap_rule=True "
            "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
            "delete the overridden vmap staticmethod to avoid ambiguity. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html"
        )
    if not fn.generate_vmap_rule and not user_vmap:
        raise RuntimeError(
            f"You tried to vmap over {fn.__name__}, but it does not have vmap support. "
            "Please override and implement the vmap staticmethod or set "
            "generate_vmap_rule=True. For more details, please see "
            "https://pytorch.org/docs/main/notes/extending.func.html"
        )
    dims = tuple(a._bdim if o else None for a, o in zip(args, owned))
    token = _CURRENT.set(interp.parent)
    try:
        if user_vmap:
            res = fn.vmap(VmapInfo(interp.size, interp.randomness), dims, *vals, **kwargs)
            out, out_dims = _check_vmap_return(fn, res)
        else:
            out = _generated(fn).apply(_VmapRule(dims, interp.randomness, kwargs), *vals)
            out_dims = tuple(0 for _ in out) if isinstance(out, tuple) else 0
    finally:
        _CURRENT.reset(token)
    if isinstance(out, tuple):
        return tuple(interp.wrap(o, d) for o, d in zip(out, out_dims))
    return interp.wrap(out, out_dims)


def _check_vmap_return(fn, res):
    if not (isinstance(res, tuple) and len(res) == 2):
        raise RuntimeError(
            f"{fn.__name__}.vmap must return a tuple (output, out_dims), got {type(res).__name__}"
        )
    out, out_dims = res
    if isinstance(out, tuple):
        if isinstance(out_dims, int) or out_dims is None:
            out_dims = (out_dims,) * len(out)
        if not isinstance(out_dims, tuple) or len(out_dims) != len(out):
            raise RuntimeError(
                f"{fn.__name__}.vmap: expected out_dims to be a tuple with one "
                f"entry per output ({len(out)}), got {out_dims!r}"
            )
    elif not (isinstance(out_dims, int) or out_dims is None):
        raise RuntimeError(
            f"{fn.__name__}.vmap: the output is a single Tensor, so out_dims "
            f"must be an int or None, got {out_dims!r}"
        )
    for o, d in zip(
        out if isinstance(out, tuple) else (out,),
        out_dims if isinstance(out, tuple) else (out_dims,),
    ):
        if not isinstance(o, Tensor):
            continue  # (passes through unbatched, whatever its out_dim: as PyTorch)
        if d is not None and not -len(shape_of(o)) <= d < len(shape_of(o)):
            raise RuntimeError(
                f"{fn.__name__}.vmap: out_dim {d} is out of range for an output "
                f"of shape {list(shape_of(o))}"
            )
    return out, out_dims


class _VmapRule:
    """What one application of a generated rule maps over: the batch dimension of each
    of the user Function's inputs, vmap's ``randomness`` and the ``apply`` keywords.
    Passed to the generated Function as a non-tensor input (its gradient is None)."""

    __slots__ = ("dims", "kwargs", "randomness")

    def __init__(self, dims, randomness, kwargs):
        self.dims = dims
        self.randomness = randomness
        self.kwargs = kwargs


def _generated(fn):
    """The Function that runs ``fn``'s forward, setup_context, backward and jvp under
    vmap (``generate_vmap_rule = True``); ``apply(rule, *vals)`` with a ``_VmapRule``, its
    outputs batched at 0.

    One per user Function, made on its first vmap and kept on the class itself (its own
    ``__dict__``: a subclass gets its own): a class made per call cost ~40 us and a
    reference cycle, and a module-level weak-key table would never free a user's class,
    since the generated one refers back to it."""
    gen = fn.__dict__.get("_generated_vmap_rule")
    if gen is None:
        gen = type(
            fn.__name__ + "VmapRule",
            (Function,),
            {
                "forward": staticmethod(functools.partial(_gen_forward, fn)),
                "setup_context": staticmethod(_gen_setup_context),
                "backward": staticmethod(functools.partial(_gen_backward, fn)),
                "jvp": staticmethod(functools.partial(_gen_jvp, fn)),
                "generate_vmap_rule": True,
            },
        )
        fn._generated_vmap_rule = gen
    return gen


def _gen_forward(fn, rule, *vals):
    kwargs = rule.kwargs
    shape = []  # whether forward returned a tuple, and its outputs that are not tensors

    def forward(*a):
        out = fn.forward(*a, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        shape[:] = [isinstance(out, tuple), [_TENSOR if isinstance(o, Tensor) else o for o in outs]]
        return tuple(o for o in outs if isinstance(o, Tensor))  # (the others: not batched)

    tensors = iter(vmap(forward, in_dims=rule.dims, randomness=rule.randomness)(*vals))
    is_tuple, outs = shape
    outs = [next(tensors) if o is _TENSOR else o for o in outs]
    return tuple(outs) if is_tuple else outs[0]


_TENSOR = object()  # where a generated rule's forward returned a tensor


def _gen_setup_context(ctx, inputs, output):
    rule, inputs = inputs[0], inputs[1:]
    outs = output if isinstance(output, tuple) else (output,)
    ins = [v if isinstance(v, Tensor) else None for v in inputs]
    touts = [o if isinstance(o, Tensor) else None for o in outs]
    ctx.save_for_backward(*ins, *touts)
    ctx.save_for_forward(*ins, *touts)
    ctx.rule = rule
    ctx.is_tuple = isinstance(output, tuple)
    ctx.plain = [None if isinstance(v, Tensor) else v for v in inputs]
    ctx.plain_out = [None if isinstance(o, Tensor) else o for o in outs]


def _per_example(fn, method, ctx, grads, g_dims):
    """``fn``'s ``backward`` or ``jvp`` under vmap over the saved inputs and outputs."""
    rule = ctx.rule
    n = len(rule.dims)
    saved = ctx.saved_tensors
    ins = [p if s is None else s for s, p in zip(saved[:n], ctx.plain)]
    outs = [p if s is None else s for s, p in zip(saved[n:], ctx.plain_out)]
    in_dims = tuple(d if isinstance(v, Tensor) else None for v, d in zip(ins, rule.dims))
    out_dims = tuple(0 if isinstance(o, Tensor) else None for o in outs)
    # ctx.needs_input_grad counts the rule: the user's backward sees its own inputs only
    needs = ctx.needs_input_grad[1:]
    # the inputs that get a gradient: vmap returns tensors only, the others' are None
    tensors = [i for i, v in enumerate(ins) if isinstance(v, Tensor)]

    def one(*flat):
        xs, os, gs = flat[:n], flat[n : n + len(outs)], flat[n + len(outs) :]
        c = TransformCtx(fn, needs)
        out = tuple(os) if ctx.is_tuple else os[0]
        _setup(fn, c, xs, rule.kwargs, out)
        if method == "backward":
            res = _check_grads(fn, fn._backward_impl(c, *gs), xs)
            return tuple(res[i] if res[i] is not None else _zeros_like(xs[i]) for i in tensors)
        c.__dict__["_in_jvp"] = True
        tans = _checked_tangents(fn.jvp(c, *gs), len(os))
        # vmap returns tensors only: the tangents of tensor outputs, None elsewhere
        kept[:] = [
            i for i, (t, o) in enumerate(zip(tans, os)) if t is not None and isinstance(o, Tensor)
        ]
        return tuple(tans[i] for i in kept)

    kept = []
    res = vmap(one, in_dims=in_dims + out_dims + g_dims, randomness=rule.randomness)(
        *ins, *outs, *grads
    )
    if method != "backward":
        full = [None] * len(outs)
        for i, r in zip(kept, res):
            full[i] = r
        return tuple(full) if ctx.is_tuple else full[0]
    full = [None] * n
    for i, r in zip(tensors, res):
        full[i] = r
    return full


def _gen_backward(fn, ctx, *grads):
    res = _per_example(
        fn, "backward", ctx, grads, tuple(0 if isinstance(g, Tensor) else None for g in grads)
    )
    out = [None]  # the rule's
    for r, d, v in zip(res, ctx.rule.dims, ctx.plain):
        if v is not None:
            out.append(None)
        elif d is None:
            out.append(r.sum(0))
        else:
            out.append(_to_dim(r, d))
    return tuple(out)


def _gen_jvp(fn, ctx, rule_tangent, *tangents):
    g_dims = tuple(None if t is None or d is None else d for t, d in zip(tangents, ctx.rule.dims))
    return _per_example(fn, "jvp", ctx, tangents, g_dims)


def _to_dim(r, d):
    return r if d == 0 else F.movedim(r, 0, d)


register_transform_rules(grad=process_grad, jvp=process_jvp, batch=process_batch)
