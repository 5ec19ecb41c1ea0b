"""The Op base class, the interpreter context and ``bind`` (the one dispatch entry point).

NOTE [Ops and interpreters]
Every primitive is one ``Op`` subclass holding, side by side, its ``forward`` (array-level,
picking the kernel), what it ``saves`` for backward, its ``vjp`` written with numbagrad ops
(so the rule is itself differentiable: higher order and, later, transforms work through
it), and optionally a ``fused_vjp`` on raw arrays used when no graph of the backward is
being built. An op instance is its own graph node (PyTorch's ``MulBackward0`` object):
it holds the saved values and the edges.

Calls go through ``bind(op, args, params)``, which hands the op to the interpreter held in a
ContextVar (JAX's "stackless" design, DESIGN.md section 3). The bottom interpreter, ``EVAL``,
runs the kernels and records the eager tape; the transforms issue pushes interpreters whose
``parent`` is the one current at entry. Positional ``args`` are the differentiable inputs
(tensors, or Python scalars standing in for them); ``params`` are static (dims, flags).

Rules return gradients in the output's (broadcast) shape; the engine reduces them to each
input's shape in one place (``engine._validate``).
"""

from __future__ import annotations

from contextvars import ContextVar

import numpy as np

from numbagrad._tensor import Tensor
from numbagrad.autograd.grad_mode import is_grad_enabled_fast
from numbagrad.autograd.graph import Node, SavedOutput, _seq, accumulator_of, saved_value

__all__ = ["EVAL", "EvalInterpreter", "Interpreter", "Op", "bind", "current_interpreter"]


class Interpreter:
    """Processes ops; subclasses are pushed by transforms (see NOTE [Ops and interpreters])."""

    __slots__ = ("parent",)

    def __init__(self, parent=None):
        self.parent = parent

    def process(self, op, args, params):
        raise NotImplementedError(f"{type(self).__name__} must implement process()")


class EvalInterpreter(Interpreter):
    """The bottom interpreter: run the kernels now and record the eager autograd tape."""

    __slots__ = ()

    def process(self, op, args, params):
        return op._eval(args, params)


EVAL = EvalInterpreter()
_CURRENT: ContextVar[Interpreter] = ContextVar("numbagrad_interpreter", default=EVAL)
current_interpreter = _CURRENT.get


NO_PARAMS: dict = {}  # shared by calls without params; never mutated


def bind(op, args, params):
    """Apply primitive ``op`` to ``args`` under the current interpreter."""
    interp = _CURRENT.get()
    if interp is EVAL:  # the common case, one call shorter
        return op._eval(args, params)
    return interp.process(op, args, params)


def _edge(t):
    if t._view_of is not None and t._hist_version != t._storage[1]:
        from numbagrad.ops.inplace import refresh_view

        refresh_view(t)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (accumulator_of(t), 0)


class Op(Node):
    """Base of all primitives. Subclasses declare:

    ``forward(*arrays, **params)``
        Static, array-level: returns an ndarray (or a tuple when ``n_out > 1``).
    ``saves_inputs`` / ``saves_output``
        Input positions and whether output 0 is needed by the rules.
    ``vjp(self, *grads)``
        Tensor-level: one gradient (or None) per positional input.
    ``fused_vjp(self, *grads)``
        Optional array-level twin of ``vjp``, used when no backward graph is recorded.
    ``view``
        True when output 0 is a view of input 0 (shares its storage).
    """

    n_out = 1
    differentiable = True
    view = False
    _fresh_grads = True  # built-in rules return new arrays or pass ``g`` through
    saves_inputs: tuple = ()
    saves_output = False
    # per saved input, the positions whose gradients need it: saved only if one requires grad
    # (``a * b`` keeps ``a`` only for ``b``'s gradient), so in-place changes to a tensor no
    # gradient needs stay legal, as in PyTorch
    saved_for = None
    fused_vjp = None

    # -- evaluation (the EVAL interpreter) -----------------------------------------------
    @classmethod
    def _eval(cls, args, params):
        if len(args) == 2:
            a, b = args
            ta = isinstance(a, Tensor)
            tb = isinstance(b, Tensor)
            if params:
                out = cls.forward(a._data if ta else a, b._data if tb else b, **params)
            else:
                out = cls.forward(a._data if ta else a, b._data if tb else b)
            rec = (ta and a._requires_grad) or (tb and b._requires_grad)
        elif len(args) == 1:
            a = args[0]
            out = cls.forward(a._data, **params) if params else cls.forward(a._data)
            rec = a._requires_grad
        else:
            out = cls.forward(*[a._data if isinstance(a, Tensor) else a for a in args], **params)
            rec = False
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    rec = True
                    break
        if cls.n_out == 1:
            if type(out) is np.ndarray and not cls.view:
                res = Tensor._make(out)
            else:
                res = _wrap(out, args[0] if cls.view else None)
            if rec and cls.differentiable and is_grad_enabled_fast():
                cls._record(args, params, (res,))
            return res
        outs = tuple(_wrap(o, None) for o in out)
        if rec and cls.differentiable and is_grad_enabled_fast():
            cls._record(args, params, outs)
        return outs

    @classmethod
    def _record(cls, args, params, outs):
        """Make the graph node for one application (see NOTE [Graph layout]).

        ``_in_meta[i]`` is ``(shape, dtype)`` of input ``i`` only where it differs from
        output 0's; None means the rule's gradient already has the input's shape and dtype
        (so the engine skips the check on the hot path)."""
        node = object.__new__(cls)
        od = outs[0]._data
        oshape, odtype = od.shape, od.dtype
        if len(args) == 1:  # unary: the input requires grad, or we would not be here
            a = args[0]
            d = a._data
            shape = d.shape
            fn = a._grad_fn
            edges = [(fn, a._output_nr) if fn is not None and a._view_of is None
                     else _edge(a)]
            meta = [None if shape == oshape and d.dtype is odtype else (shape, d.dtype)]
        else:
            edges = []
            meta = []
            for a in args:
                if isinstance(a, Tensor):
                    d = a._data
                    shape = d.shape
                    meta.append(None if shape == oshape and d.dtype is odtype
                                else (shape, d.dtype))
                    if a._requires_grad:
                        fn = a._grad_fn
                        if fn is None or a._view_of is not None:
                            edges.append(_edge(a))
                        else:
                            edges.append((fn, a._output_nr))
                    else:
                        edges.append(None)
                else:
                    meta.append(None)
                    edges.append(None)
        node._next = edges
        node._in_meta = meta
        node._seq = next(_seq)
        if params:
            node.__dict__.update(params)
        if cls.n_out == 1:
            o = outs[0]
            if o._data.dtype.kind == "f":
                o._requires_grad = True
                o._grad_fn = node
        else:
            node._n_out = cls.n_out
            i = 0
            for o in outs:
                if o._data.dtype.kind == "f":
                    o._requires_grad = True
                    o._grad_fn = node
                    o._output_nr = i
                i += 1
        # after the outputs got their history: a saved output remembers requires_grad
        if cls.saves_inputs or cls.saves_output:
            saved = []
            needed_by = cls.saved_for
            for i in cls.saves_inputs:
                a = args[i]
                if needed_by is not None and all(edges[j] is None for j in needed_by[i]):
                    a = None  # no gradient that needs it will be computed
                saved.append((a, a._storage[1]) if isinstance(a, Tensor) else a)
            if cls.saves_output:
                saved.append(SavedOutput(outs[0]))
            node._saved = saved
        else:
            node._saved = ()
        if cls._post_record is not Op._post_record:
            node._post_record(args, outs)
        return node

    def _post_record(self, args, outs):
        """Hook for ops that need more than ``saves_*`` (e.g. index arrays)."""

    # -- saved values ----------------------------------------------------------------------
    def saved_tensors(self):
        """The saved values (inputs in ``saves_inputs`` order, then the output) as tensors."""
        saved = self._saved
        n = len(saved) if saved is not None else 1
        return [saved_value(self, i) for i in range(n)]

    def saved_arrays(self):
        """The saved values as ndarrays (Python scalars stay scalars), version-checked."""
        saved = self._saved
        if saved is None:
            saved_value(self, 0)  # raises the "freed graph" error
        out = []
        for e in saved:
            if type(e) is tuple and e[0]._storage[1] == e[1]:
                out.append(e[0]._data)  # the common case, inline
            else:
                out.append(saved_value(self, len(out), True))
        return out

    # -- backward (called by the engine) -----------------------------------------------------
    def _backward(self, grads, create_graph):
        # the engine calls ``fused_vjp`` itself on its array path (NOTE [Engine])
        res = self.vjp(*grads)
        return list(res) if type(res) is tuple else [res]

    def vjp(self, *grads):
        raise RuntimeError(f"the derivative for '{type(self).__name__.lower()}' is not "
                           "implemented")

    def name(self) -> str:
        return type(self).__name__ + "Backward0"


def _wrap(out, view_of):
    """Wrap a forward result in a Tensor; views of input 0 share its storage."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if view_of is not None:
        src = view_of._data
        root = src.base if src.base is not None else src
        if out.base is root or out.base is src:
            t = Tensor._make(out, view_of._storage)
            t._view_of = view_of if view_of._view_of is None else view_of._view_of
            t._hist_version = view_of._storage[1]
            return t
    return Tensor._make(out)
