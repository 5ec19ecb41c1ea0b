"""Reverse mode for ``numbagrad.func``: an interpreter with a tape of its own.

``func.grad``/``func.vjp`` push a ``GradInterpreter``; each op on its values runs on the
parent-level values and appends a ``TapeNode`` (the primitive, its params, the operands and
outputs, and edges to the nodes of the operands it owns). ``backward`` walks the tape in
reverse creation order, calling each primitive's ``vjp`` rule with the interpreter that is
current *at that time* (the parent, or a vmap around ``vjp_fn`` in ``jacrev``), so the
backward is itself differentiable, batchable and traceable: a single eager tape would lose
the tangents of jvp-of-grad (docs/developer.rst, design decisions, 3).

NOTE: the eager engine (``autograd/engine.py``) is not reused here. It is built around
concrete arrays (fused array rules, in-place accumulation, hooks, retain_graph), none of
which apply to a tape whose values may be tracers of outer transforms; the tape's backward
is a plain reverse topological walk over ``vjp`` rules.
"""

from __future__ import annotations

from weakref import ref as _weakref

from numbagrad import ops as F
from numbagrad._core.grad_mode import is_grad_enabled_fast
from numbagrad._creation import const_ones_like
from numbagrad._creation import const_zeros_like as _zeros_like
from numbagrad._hooks import RemovableHandle
from numbagrad._tensor import Tensor
from numbagrad._transforms.tracer import (
    Tracer,
    TransformInterpreter,
    as_np_dtype,
    mark_view,
    np_dtype_of,
    shape_of,
    under,
)

__all__ = [
    "GradInterpreter",
    "GradTracer",
    "TapeNode",
    "backward",
    "grad_inside",
    "hide_outer_grads",
    "sum_to_shape",
    "unhide_outer_grads",
]


class GradInterpreter(TransformInterpreter):
    """Records applications on values it owns onto a tape of ``TapeNode``s."""

    __slots__ = ("inner", "tape")

    def __init__(self, parent, name="numbagrad.func.grad"):
        super().__init__(parent, name)
        self.inner = None  # the innermost grad/jvp level open inside this one, if any
        # weak references to the TapeNodes, in the order they were made (``backward``):
        # the values' own references keep a node alive exactly while an output can reach
        # it, as before there was a tape (a node of a dead branch is freed at once)
        self.tape = []

    def record(self, prim, params, vals, outs, edges, rule=None):
        """A new ``TapeNode``, appended to this level's tape."""
        node = TapeNode(prim, params, vals, outs, edges, rule)
        if self.inner is not None:
            node.hidden = self.inner
        self.tape.append(_weakref(node))
        return node

    def process(self, prim, args, params):
        # one pass over the operands: the parent-level values, and an edge per owned one
        edges = None
        for i, a in enumerate(args):
            if type(a) is GradTracer and a._interp is self:
                if edges is None:
                    edges = [None] * len(args)
                    vals = list(args)
                edges[i] = (a._node, a._out_nr)
                vals[i] = a._val
        if edges is None:
            return self.to_parent(prim, args, params)
        if not is_grad_enabled_fast():
            # no_grad inside the transformed function: compute, record nothing
            return self.to_parent(prim, vals, params)
        custom = prim.process_grad
        if custom is not None:
            return custom(self, args, params)
        out = self.to_parent(prim, vals, params)
        if not prim.differentiable:
            return out
        data = prim.data_operands
        if data is not None:
            for i in data if type(data) is tuple else data(len(args)):
                edges[i] = None
            if all(e is None for e in edges):
                return out
        if prim.n_out == 1:
            if not isinstance(out, Tensor):
                return out
            if (out._np_dtype if out._is_tracer else out._data.dtype).kind not in "fc":
                return out  # (not differentiable: an integer or bool result)
            node = self.record(prim, params, vals, (out,), edges)
            t = GradTracer._new(self, out, node, 0)
            return mark_view(prim, t, args, params) if prim.view else t
        node = self.record(prim, params, vals, tuple(out), edges)
        return tuple(self.wrap(o, node, i) for i, o in enumerate(out))

    def lift(self, value):
        """A value this level does not own, as a constant on its tape."""
        return GradTracer._new(self, value, LeafNode(None), 0)

    def wrap(self, value, node, out_nr=0):
        if not isinstance(value, Tensor) or np_dtype_of(value).kind not in "fc":
            return value
        return GradTracer._new(self, value, node, out_nr)


class TapeNode:
    """One recorded application, and the context its ``vjp`` rule receives (the same
    interface as the eager ``OpNode``: ``saved``, ``input_shape``, ``input_dtype``,
    ``needs_input_grad``, ``num_inputs``)."""

    __slots__ = (
        "__weakref__",
        "edges",
        "hidden",
        "hooks",
        "outs",
        "params",
        "prim",
        "rule",
        "vals",
        "versions",
    )

    def __init__(self, prim, params, vals, outs, edges, rule=None):
        self.prim = prim
        self.params = params
        self.vals = vals
        self.outs = outs
        self.edges = edges
        self.rule = rule  # a custom backward (Functions); else prim.vjp
        self.hooks = None  # output number -> hooks registered on that output's tracer
        self.hidden = None  # the inner grad/jvp level open when it was made (requires_grad)
        # each operand the rule reads, with its version (None: not a tensor): one changed in
        # place before the backward (a constant written eagerly, a tracer given a new value,
        # a plain tensor that became a tracer) would give a silently wrong gradient;
        # ``saved`` raises instead, as PyTorch's version counters do
        saves = prim.saves_inputs
        if saves:
            if type(saves) is not tuple:
                saves = saves(len(vals))
            versions = self.versions = []  # (loops, not comprehensions: a frame less each)
            for i in saves:
                v = vals[i]
                versions.append((i, v._storage[1] if isinstance(v, Tensor) else None))
        else:
            self.versions = ()

    def saved(self):
        vals = self.vals
        out = []
        for i, version in self.versions:
            out.append(vals[i])
            if version is not None and vals[i]._storage[1] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: operand {i} of {self.name()} (shape "
                    f"{list(shape_of(vals[i]))}) is at version {vals[i]._storage[1]}; expected "
                    f"version {version} instead. Hint: clone the tensor before modifying it "
                    "in place, or modify it before it is used."
                )
        if self.prim.saves_output:
            out.append(self.outs[0])
        return out

    def input_shape(self, i):
        return shape_of(self.vals[i])

    def input_dtype(self, i):
        return np_dtype_of(self.vals[i])

    def needs_input_grad(self, i):
        return self.edges[i] is not None

    def num_inputs(self):
        return len(self.vals)

    def name(self):
        return self.prim.node_name(self.params)

    def __repr__(self):
        return f"<{self.name()} (numbagrad.func tape)>"

    def run_vjp(self, grads):
        if self.rule is not None:
            return self.rule(self, grads)
        prim = self.prim
        rule = prim.vjp if prim.vjp is not None else prim.rule("vjp")  # rule() raises
        res = rule(self, *grads, **self.params)
        return list(res) if type(res) is tuple else [res]


class LeafNode:
    """The tape node of an input of the transformed function."""

    __slots__ = ("hooks", "index")

    def __init__(self, index):
        self.index = index
        self.hooks = None


class GradTracer(Tracer):
    """A value recorded on a ``GradInterpreter``'s tape."""

    __slots__ = ()
    _FIELDS = (*Tracer._FIELDS, "_node", "_out_nr", "_val")

    @classmethod
    def _new(cls, interp, val, node, out_nr=0):
        t = object.__new__(cls)
        if type(val) is Tensor:
            d = val._data
            t._init_tracer(interp, d.shape, d.dtype)
        elif isinstance(val, Tracer):  # (under vmap: the batched value; _init_tracer inline)
            t._interp = interp
            t._shape = val._shape
            t._np_dtype = val._np_dtype
            t._storage = [None, 0]
            t._requires_grad = False
            t._grad_fn = None
            t._view_of = None
        else:
            t._init_tracer(interp, shape_of(val), np_dtype_of(val))
        t._val = val
        t._node = node
        t._out_nr = out_nr
        return t

    def _parent_value(self):
        return self._val

    # -- a value kept past its transform (stored in a global, say) is, as PyTorch's, a
    # plain constant with the value it had; one nested in a live outer transform (its value
    # is that transform's) still raises
    def _kept_value(self):
        v = self._val
        return v if type(v) is Tensor and not self._interp.alive else None

    @property
    def _data(self):
        v = self._kept_value()
        if v is None:
            raise self._escaped()
        return v._data

    def numpy(self, *, force=False):
        v = self._kept_value()
        return Tracer.numpy(self) if v is None else v.numpy(force=force)

    def __array__(self, dtype=None, copy=None):
        v = self._kept_value()
        return Tracer.__array__(self, dtype, copy) if v is None else v.__array__(dtype, copy)

    def __repr__(self):
        v = self._kept_value()
        return Tracer.__repr__(self) if v is None else repr(v)

    def _concrete(self, what):
        v = self._val
        return v._concrete(what) if isinstance(v, Tracer) else v

    def _inner_repr(self):
        return f"value={self._val!r}"

    def detach(self):
        v = self._val
        return v.detach() if isinstance(v, Tensor) else v

    # -- as PyTorch's tensors inside func.grad: tracked values require grad, take hooks --
    @property
    def requires_grad(self):
        """True for the transform's inputs and the values computed from them, except those
        made inside an inner ``grad``/``jvp`` (PyTorch's report False there)."""
        node = self._node
        if type(node) is TapeNode:
            h = node.hidden
            return self._interp.alive and (h is None or not h.alive)
        return self._interp.alive and node.index is not None

    @requires_grad.setter
    def requires_grad(self, value):
        Tracer.requires_grad.fset(self, value)

    @property
    def is_leaf(self):
        return not self.requires_grad or type(self._node) is LeafNode

    @property
    def grad_fn(self):
        """The tape node that made this value (its ``name()`` is PyTorch's node name), or
        None for the transform's inputs and constants."""
        node = self._node
        if type(node) is not TapeNode or not self._interp.alive:
            return None
        h = node.hidden
        return node if h is None or not h.alive else None

    def _assigned(self, result):
        """A value computed with nothing recorded (under ``no_grad``), taken in place: the
        data changes and the history stays (the same tape node), as a PyTorch tensor
        changed in place under ``no_grad`` keeps its ``grad_fn`` (or stays a leaf)."""
        if self._interp.alive and not is_grad_enabled_fast():
            inner = self._val  # (nested grads: each level below keeps its history too)
            if isinstance(inner, Tracer) and not (
                type(result) is type(inner) and result._interp is inner._interp
            ):
                result = inner._assigned(result)
            return GradTracer._new(self._interp, result, self._node, self._out_nr)
        return self._interp.lift(result)

    def _check_inplace(self):
        """Refuse an in-place op on an input of the transform, or a view of one, while
        gradients are recorded: PyTorch's func transforms make the inputs leaves that
        require grad, which in-place ops may not change."""
        if not self._interp.alive:
            views = self.__dict__.get("_views")
            if views and any(r() is not None for r in views):
                # (its views are traced views of a closed level: they could not follow)
                raise NotImplementedError(
                    f"in-place modification of a value kept past {self._interp.name} that "
                    "has views kept too is not supported: clone() it first"
                )
            return
        if not is_grad_enabled_fast():
            return
        root, view = self, False
        while True:
            recipe = root.__dict__.get("_view_recipe")
            if recipe is None or not isinstance(recipe[0], GradTracer):
                break
            root, view = recipe[0], True
        node = root._node
        if root._interp is self._interp and type(node) is LeafNode and node.index is not None:
            if view:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an "
                    "in-place operation."
                )
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )

    def register_hook(self, hook):
        """Run ``hook(grad)`` when the transform's backward computes this value's gradient;
        a tensor it returns replaces the gradient (PyTorch's hooks inside ``func.grad``)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self._node
        if node.hooks is None:
            node.hooks = {}
        hooks = node.hooks.setdefault(self._out_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)


def sum_to_shape(g, shape, dtype):
    """Reduce a gradient in the broadcast output shape to an operand's shape and dtype."""
    if shape_of(g) != shape:
        g = F.sum_to(g, tuple(shape))
    if np_dtype_of(g) != dtype and dtype.kind in "fc":
        g = g.to(as_np_dtype(dtype))
    return g


def _fit(g, v):
    """Gradient ``g`` reduced to operand ``v``'s shape and dtype (``sum_to_shape``), with
    the common case, already the same, decided from the metadata in place: the backward
    calls this once per edge."""
    if type(g) is Tensor:
        sg, dg = g._data.shape, g._data.dtype
    elif isinstance(g, Tracer):
        sg, dg = g._shape, g._np_dtype
    else:
        return sum_to_shape(g, shape_of(v), np_dtype_of(v))
    if type(v) is Tensor:
        sv, dv = v._data.shape, v._data.dtype
    elif isinstance(v, Tracer):
        sv, dv = v._shape, v._np_dtype
    else:
        return sum_to_shape(g, shape_of(v), np_dtype_of(v))
    if sg == sv and dg == dv:
        return g
    return sum_to_shape(g, sv, dv)


def backward(interp, outputs, cotangents, n_inputs, targets=None):
    """Gradients of ``outputs`` (values of the GradInterpreter ``interp``; any other value
    is a constant to it) with cotangents ``cotangents`` with respect to its ``n_inputs``
    leaves, or, given ``targets`` (``(node, output number)`` keys of any of its values),
    with respect to those (``autograd.grad`` inside the transform).

    Runs under whatever interpreter is current; returns one gradient (or None) per input.
    The walk is the tape backwards: a node is made after every node its operands come
    from, so its gradient is complete when the walk reaches it, and nodes no gradient
    reached are passed over (no graph search, no sort).
    """
    if targets is not None:
        captured = dict.fromkeys(targets)
        wanted = captured.keys()
    grads: dict = {}  # (node, output number) -> the gradient summed so far
    for o, c in zip(outputs, cotangents):
        # (a value of another level, an outer grad's included, is a constant here)
        if type(o) is GradTracer and o._interp is interp and c is not None:
            key = (o._node, o._out_nr)
            prev = grads.get(key)
            grads[key] = c if prev is None else prev + c
    result = [None] * (n_inputs if targets is None else len(targets))
    if not grads:
        return result
    for ref in reversed(interp.tape):
        n = ref()
        if n is None:  # (freed: no output could reach it)
            continue
        outs = n.outs
        if len(outs) == 1:
            g = grads.pop((n, 0), None)
            if g is None:
                continue
            if n.hooks:
                g = _run_hooks(n.hooks.get(0), g)
            gs = [g]
        else:
            gs = [grads.pop((n, i), None) for i in range(len(outs))]
            if all(g is None for g in gs):  # (not count(None): Tensor == is elementwise)
                continue
            if n.hooks:
                gs = [g if g is None else _run_hooks(n.hooks.get(i), g) for i, g in enumerate(gs)]
        if targets is not None:
            for i, g in enumerate(gs):
                if (n, i) in wanted:
                    captured[(n, i)] = g
        if len(outs) != 1 and n.rule is None:
            # built-in rules take zeros for outputs without a gradient
            gs = [g if g is not None else _zeros_like(o) for g, o in zip(gs, outs)]
        in_grads = n.run_vjp(gs)
        edges = n.edges
        if len(in_grads) != len(edges):
            raise RuntimeError(
                f"{n.name()}: the vjp returned {len(in_grads)} gradients, expected {len(edges)}"
            )
        for e, g, v in zip(edges, in_grads, n.vals):
            if e is None or g is None:
                continue
            g = _fit(g, v)
            prev = grads.get(e)
            grads[e] = g if prev is None else prev + g
    # what is left are the leaves' gradients: the inputs', and those of constants lifted
    # onto the tape by an in-place op (index None), which go nowhere
    for (n, i), g in grads.items():
        if type(n) is not LeafNode:  # (every tape node's gradient was taken above)
            continue
        if n.hooks:
            g = _run_hooks(n.hooks.get(0), g)
        if targets is not None:
            if (n, i) in wanted:
                captured[(n, i)] = g
        elif n.index is not None:
            result[n.index] = g
    return result if targets is None else [captured[k] for k in targets]


def grad_inside(outputs, inputs, grad_outputs, create_graph):
    """``autograd.grad(outputs, inputs)`` where ``inputs`` are values of a live
    ``func.grad`` level (PyTorch computes it at that level). The gradients are constants
    to the level (as without ``create_graph``); one per input, None where unused.
    ``grad_outputs`` has a cotangent (or None: ones for a scalar output) per output."""
    interp = inputs[0]._interp
    for x in inputs:
        if not (type(x) is GradTracer and x._interp is interp):
            raise RuntimeError(
                "autograd.grad inside a transform: every input must be a value the "
                f"innermost {interp.name} tracks"
            )
    if create_graph:
        raise NotImplementedError(
            f"autograd.grad(..., create_graph=True) inside {interp.name} is not supported: "
            "for a derivative of a derivative, nest numbagrad.func.grad instead"
        )
    cts = []
    for o, c in zip(outputs, grad_outputs):
        if c is None:
            if shape_of(o) != ():
                raise RuntimeError("grad can be implicitly created only for scalar outputs")

            c = const_ones_like(o)
        elif isinstance(c, Tracer) and c._interp is interp:
            c = c._val  # (a cotangent of this level: its value, the gradient is a constant)
        cts.append(c)
    targets = [(x._node, x._out_nr) for x in inputs]
    with under(interp.parent):
        return backward(interp, outputs, cts, 0, targets=targets)


def _run_hooks(hooks, g):
    """``g`` through the hooks registered on its tracer (``GradTracer.register_hook``)."""
    for hook in list(hooks or ()):
        r = hook(g)
        if r is not None:
            if not isinstance(r, Tensor) or shape_of(r) != shape_of(g):
                got = f"shape {list(shape_of(r))}" if isinstance(r, Tensor) else type(r).__name__
                raise RuntimeError(
                    f"hook returned a {got} where a gradient of shape {list(shape_of(g))} "
                    "(or None) was expected"
                )
            g = r
    return g


def hide_outer_grads(interp):
    """Tell the open ``grad`` levels around ``interp``, a new ``grad``/``jvp`` level, that
    it is open: the values they make while it is report ``requires_grad`` False and no
    ``grad_fn``, as PyTorch's do (their gradients are unchanged; once it has closed, what
    it returned is tracked as usual). Returns what ``unhide_outer_grads`` restores."""
    outer = []
    p = interp.parent
    while isinstance(p, TransformInterpreter):
        if type(p) is GradInterpreter and p.alive:
            outer.append((p, p.inner))
            p.inner = interp
        p = p.parent
    return outer


def unhide_outer_grads(outer):
    for p, prev in outer:
        p.inner = prev
