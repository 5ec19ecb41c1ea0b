"""Graph nodes, saved tensors and leaf accumulators.

NOTE [Graph layout]
A Node is one recorded application of a differentiable op. ``_next`` holds one edge per
op input: ``(node, output_nr)`` for an input that requires grad (its ``grad_fn``, or the
leaf's ``AccumulateGrad``), or ``None``. ``_in_meta[i]`` is input ``i``'s ``(shape, dtype)``
where it differs from output 0's, else None, so the engine can reduce a broadcast gradient
to the input's shape in one place (``engine._validate``) and skip the check when nothing
differs. Saved tensors remember the storage version seen at save time; the engine releases
them after a backward without ``retain_graph``. Nodes never point at their outputs (an
output saved for backward keeps only its array), so the graph has no cycles and memory is
freed by reference counting alone.

A primitive's node is one generic class, ``OpNode``: it holds the primitive (its
declaration, ``numbagrad.ops._op.Primitive``), the params of this application, the saved
values and the edges, and it is the context a VJP rule receives (``saved``,
``input_shape``, ``needs_input_grad``). Custom ``Function``s make their own node classes
(``<Name>Backward``, which are also their ``ctx``).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

from numbagrad._core.extension import HOOKS, RECORDING
from numbagrad._core.grad_mode import is_grad_enabled
from numbagrad._hooks import RemovableHandle
from numbagrad._tensor import Tensor

__all__ = [
    "AccumulateGrad",
    "Node",
    "OpNode",
    "SavedOutput",
    "SavedPacked",
    "accumulator_of",
    "after_record",
    "edge_of",
    "next_seq",
    "save_input",
    "saved_value",
]

_seq = itertools.count()


def next_seq():
    """A sequence number later than every node made so far (nodes made after are later)."""
    return next(_seq)


_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


_Handle = RemovableHandle


class Node:
    """Base class of graph nodes (a tensor's ``grad_fn``).

    Subclasses implement ``_backward(grads, create_graph)``: given one gradient per output
    (``None`` for outputs that received none), return one gradient per input.
    """

    __slots__ = ("__dict__", "__weakref__", "_in_meta", "_next", "_saved", "_seq")
    # set only when hooks are registered (then in the instance dict); see NOTE [Tensor
    # attributes] for the same trick
    _hooks = None
    _pre_hooks = None
    _tensor_hooks = None
    _any_hooks = False  # set by any hook registration: one check per node in the engine
    _n_out = 1
    # True when every gradient array the rule returns is new or one of its inputs'
    # gradients (never an array kept elsewhere): NOTE [Engine], point 4
    _fresh_grads = False
    # True when every gradient the rule returns already has its input's shape and dtype
    # (the engine's ``_validate`` has nothing to fix): NOTE [Engine], point 7
    _exact_grads = False

    def _init_node(self, next_edges, in_meta, n_out=1):
        self._next = next_edges
        self._in_meta = in_meta
        if n_out != 1:
            self._n_out = n_out
        self._seq = next(_seq)
        self._saved = ()
        if RECORDING.anomaly:
            stamp_anomaly(self)

    # -- PyTorch's public Node API -------------------------------------------------------
    def name(self) -> str:
        """The node's name, e.g. ``'MulBackward0'``."""
        return type(self).__name__ + "Backward0"

    @property
    def next_functions(self):
        """One ``(node, output_nr)`` pair per input; ``(None, 0)`` where no gradient flows."""
        return tuple(e if e is not None else (None, 0) for e in self._next)

    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs)``, run after the node; it may return
        replacement ``grad_inputs``."""
        if self._hooks is None:
            self._hooks = []
        self._any_hooks = True
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """Register ``fn(grad_outputs)``, run before the node; it may return replacements."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._any_hooks = True
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def __call__(self, *grads):
        """Run the node's backward directly (as ``grad_fn(grad)`` does in PyTorch)."""
        out = self._backward(list(grads), is_grad_enabled())
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def _backward(self, grads, create_graph):
        raise NotImplementedError(f"{type(self).__name__} defines no backward")

    def _backward_arrays(self, garrays):
        """``_backward`` on raw arrays (the engine's first-order path)."""
        out = self._backward([None if a is None else Tensor._make(a) for a in garrays], False)
        return [None if g is None else g._data for g in out]


class OpNode(Node):
    """The node of one primitive application, and the context its VJP rule receives.

    ``prim`` is the primitive (a ``numbagrad.ops._op.Primitive`` subclass), ``params`` its
    static arguments for this application, ``be`` the device backend that ran the forward.
    """

    __slots__ = ("_out_dtype", "_out_shape", "be", "params", "prim")
    prim: Any
    params: Any
    be: Any
    _out_shape: tuple
    _out_dtype: Any
    _fresh_grads = True  # built-in rules return new arrays or pass ``g`` through

    def name(self) -> str:
        return self.prim.node_name(self.params)

    # -- the rule context ------------------------------------------------------------------
    def saved(self):
        """The saved values as tensors: inputs in ``saves_inputs`` order, then the output
        (when ``saves_output``); version-checked."""
        saved = self._saved
        n = len(saved) if saved is not None else 1
        return [saved_value(self, i) for i in range(n)]

    def saved_arrays(self):
        """The saved values as arrays (Python scalars stay scalars), version-checked."""
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

    def input_shape(self, i):
        """The shape of input ``i`` of the forward."""
        m = self._in_meta[i]
        return self._out_shape if m is None else m[0]

    def input_dtype(self, i):
        """The (NumPy) dtype of input ``i`` of the forward."""
        m = self._in_meta[i]
        return self._out_dtype if m is None else m[1]

    def num_inputs(self):
        """The number of operands of the forward."""
        return len(self._next)

    def needs_input_grad(self, i):
        """Whether input ``i`` gets a gradient (rules skip the others' work)."""
        return self._next[i] is not None

    # -- backward ----------------------------------------------------------------------------
    def _backward(self, grads, create_graph):
        params = self.params
        res = self.prim.vjp(self, *grads, **params) if params else self.prim.vjp(self, *grads)
        return list(res) if type(res) is tuple else [res]

    def _backward_arrays(self, garrays):
        prim = self.prim
        if prim.fused_vjp is None:
            return Node._backward_arrays(self, garrays)
        params = self.params
        res = prim.fused_vjp(self, *garrays, **params) if params else prim.fused_vjp(self, *garrays)
        return res if type(res) is tuple else (res,)


# PyTorch's argument names of the operands of the primitives whose names differ from
# ``self, other`` (``_saved_<name>`` attributes); the saved output is ``result``
_ARG_NAMES = {
    "Pow": ("self", "exponent"),
    "Where": ("condition", "self", "other"),
    "Clamp": ("self", "min", "max"),
    "Gather": ("self", "index"),
    "ScatterAdd": ("self", "index", "src"),
}


def _saved_index(node, key):
    """The position in ``node._saved`` of the value PyTorch calls ``_saved_<key>``."""
    try:
        prim = object.__getattribute__(node, "prim")
    except AttributeError:
        return None
    saves = prim.saves_inputs
    if type(saves) is not tuple:  # a variable number of operands: no names
        return None
    names = _ARG_NAMES.get(prim.__name__, ("self", "other"))
    for k, i in enumerate(saves):
        if i < len(names) and names[i] == key:
            return k
    if key == "result" and prim.saves_output:
        return len(saves)
    return None


def _saved_property(key):
    """``OpNode._saved_<key>``: the saved value PyTorch names ``key`` (a property per name,
    not ``__getattr__``, which would slow every attribute read of every node)."""

    def get(node):
        i = _saved_index(node, key)
        if i is None:
            raise AttributeError(f"'{node.name()}' object has no attribute '_saved_{key}'")
        return saved_value(node, i)

    get.__name__ = "_saved_" + key
    return property(get, doc=f"The saved value PyTorch calls ``{key}`` (``_saved_{key}``).")


for _key in sorted({"self", "other", "result", *(n for v in _ARG_NAMES.values() for n in v)}):
    setattr(OpNode, "_saved_" + _key, _saved_property(_key))


def _version_error(node, index, data, version, expected, what):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{data.dtype} {list(data.shape)}] (saved tensor {index} of "
        f"{node.name()}, {what}) is at version {version}; expected version {expected} "
        "instead. Hint: clone the tensor before modifying it in place, or modify it before "
        "it is saved."
    )


def save_input(t):
    """A saved input tensor: ``(tensor, version at save time)`` (a tuple: cheapest), or,
    under ``saved_tensors_hooks``, what the pack hook made of it (``SavedPacked``)."""
    if RECORDING.saved_hooks:
        return SavedPacked(t)
    return (t, t._storage[1])


# NOTE [Saved-tensor hooks]
# ``autograd.graph.saved_tensors_hooks(pack, unpack)`` pushes its pair on
# ``RECORDING.saved_hooks`` (NOTE [Recording options] in ``_core/extension.py``). While the
# stack is not empty, every tensor saved for backward is replaced at save time by a
# ``SavedPacked`` holding ``pack(tensor)`` and the innermost pair's ``unpack``: by
# ``save_input`` and ``SavedOutput`` (custom Functions' ``save_for_backward``) and, for the
# built-in ops, by ``after_record``, which ``Primitive._eval`` calls on each node it
# records while ``RECORDING.active`` (one flag test per recorded op when no hooks are on).
# ``saved_value`` calls ``unpack`` when the rule reads the value and gives the result the
# saved tensor's history (its ``grad_fn``, or its leaf's accumulator) so that double
# backward still reaches it. As in PyTorch with hooks, the version check against in-place
# changes is not made (the pack hook decides what is kept). The stack is per process, not
# per thread.


class SavedPacked:
    """A saved tensor replaced by what a pack hook returned (NOTE [Saved-tensor hooks])."""

    __slots__ = ("_acc", "grad_fn", "output_nr", "packed", "requires_grad", "unpack_hook")

    def __init__(self, t, is_output=False, output_nr=0):
        pack, unpack = RECORDING.saved_hooks[-1]
        self.unpack_hook = unpack
        self.requires_grad = t._requires_grad
        self.output_nr = output_nr if is_output else t._output_nr
        # an output's node is the saving node itself (given at unpack: no cycle)
        self.grad_fn = None if is_output else t._grad_fn
        self._acc = None
        if t._requires_grad and t._grad_fn is None and not is_output:
            self._acc = accumulator_of(t)  # a leaf: keep its accumulator for double backward
        self.packed = pack(t.detach() if is_output else t)

    def unpack(self, node, index, is_output):
        r = self.unpack_hook(self.packed)
        if not isinstance(r, Tensor):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but "
                f"got result of type {type(r).__name__}"
            )
        t = Tensor._make(r._data, r._storage)
        if self.requires_grad:
            t._requires_grad = True
            if is_output:
                t._grad_fn = node
                t._output_nr = self.output_nr
            elif self.grad_fn is not None:
                t._grad_fn = self.grad_fn
                t._output_nr = self.output_nr
            else:
                t._accumulator = weakref.ref(self._acc)
        return t


# NOTE [Anomaly mode]: ``autograd.anomaly_mode`` sets ``RECORDING.anomaly`` (and
# ``RECORDING.check_nan``, NOTE [Recording options]); while it is on, every node gets the
# forward's stack at creation (``stamp_anomaly``: by ``after_record`` for built-in ops, by
# ``_init_node`` for the others) and the engine checks each rule's results for NaN (its
# checked path, chosen once per backward).


def stamp_anomaly(node):
    """Record the current (forward) stack on ``node`` for anomaly mode's error reports."""
    import os
    import traceback

    frames = traceback.extract_stack()
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    while frames and os.path.abspath(frames[-1].filename).startswith(pkg):
        frames.pop()  # numbagrad's own frames: the user's call is what helps
    node.__dict__["_anomaly_trace"] = traceback.format_list(frames)


def after_record(node):
    """What the recording options add to a just-recorded built-in node (NOTE [Recording
    options]): its saved tensors packed by the saved-tensor hooks, the forward's stack
    stamped for anomaly mode. ``Primitive._eval`` calls it while ``RECORDING.active``, and
    so does every other caller of ``Primitive._record``."""
    if RECORDING.saved_hooks:
        saved = node._saved
        for i, e in enumerate(saved):
            if type(e) is tuple:
                saved[i] = SavedPacked(e[0])
    if RECORDING.anomaly:
        stamp_anomaly(node)
    return node


def saved_value(node, i, as_array=False):
    """Saved entry ``i`` of ``node`` (a tensor, or its array), version-checked.

    Entries are ``(tensor, version)`` tuples for saved inputs, ``SavedOutput`` objects
    for saved outputs, and plain Python values (scalars, None) otherwise."""
    saved = node._saved
    if saved is None:
        raise RuntimeError(_FREED_MSG)
    e = saved[i]
    if type(e) is tuple:
        t, v = e
        if t._storage[1] != v:
            raise _version_error(node, i, t._data, t._storage[1], v, "an input")
        return t._data if as_array else t
    if type(e) is SavedOutput:
        return e.array(node, i) if as_array else e.unpack(node, i)
    if type(e) is SavedPacked:
        t = e.unpack(node, i, False)
        return t._data if as_array else t
    if isinstance(e, SavedOutput):  # a subclass: a forward_ad level's saved dual output
        return e.array(node, i) if as_array else e.unpack(node, i)
    return e


class SavedOutput:
    """An op's *output* saved for backward. It keeps the array, not the tensor object (that
    would form a cycle through ``grad_fn``): ``unpack`` rebuilds a tensor on the same array
    whose ``grad_fn`` is the saving node, which is what double backward needs."""

    __slots__ = ("data", "output_nr", "packed", "requires_grad", "storage", "version")

    def __init__(self, t, output_nr=0):
        if RECORDING.saved_hooks:  # NOTE [Saved-tensor hooks]: keep only what pack returns
            self.packed = SavedPacked(t, True, output_nr)
            self.data = self.storage = None
            self.requires_grad = t._requires_grad
            self.output_nr = output_nr
            return
        self.packed = None
        self.storage = s = t._storage
        self.version = s[1]
        self.data = t._data
        self.requires_grad = t._requires_grad
        self.output_nr = output_nr

    def _check(self, node, index):
        if self.storage[1] != self.version:
            raise _version_error(
                node,
                index,
                self.data,
                self.storage[1],
                self.version,
                f"output {self.output_nr} of {node.name()}",
            )

    def unpack(self, node, index=0):
        if self.packed is not None:
            return self.packed.unpack(node, index, True)
        self._check(node, index)
        t = Tensor._make(self.data, self.storage)
        if self.requires_grad:
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = self.output_nr
        return t

    def array(self, node, index=0):
        if self.packed is not None:
            return self.packed.unpack(node, index, True)._data
        self._check(node, index)
        return self.data


class AccumulateGrad(Node):
    """The node that adds incoming gradients into a leaf tensor's ``.grad``.

    ``_lock`` serialises the read-add-store of ``.grad`` (PyTorch's per-AccumulateGrad
    mutex): backward calls running in several threads into a shared leaf lose no update.
    A leaf has at most one live AccumulateGrad (``accumulator_of``), so one lock per leaf.
    """

    __slots__ = ("_lock", "variable")

    def __init__(self, variable):
        self._init_node((), ((variable._data.shape, variable._data.dtype),), 1)
        self.variable = variable
        self._lock = threading.Lock()

    def name(self) -> str:
        return "AccumulateGrad"


_ACCUMULATOR_LOCK = threading.Lock()


def accumulator_of(leaf) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, shared while any graph holds it (as in PyTorch)."""
    ref = leaf._accumulator
    node = ref() if ref is not None else None
    if node is None:
        with _ACCUMULATOR_LOCK:  # two threads must not make two (two locks) for one leaf
            ref = leaf._accumulator
            node = ref() if ref is not None else None
            if node is None:
                node = AccumulateGrad(leaf)
                leaf._accumulator = weakref.ref(node)
    return node


def edge_of(t):
    """The edge to ``t``'s history: ``(grad_fn, output_nr)``, or its leaf accumulator. A view
    whose base changed in place first re-derives its history (``HOOKS.refresh_view``, set by
    ``ops.inplace``: views are an op-level concept, NOTE [Extension points])."""
    if t._view_of is not None and t._hist_version != t._storage[1]:
        HOOKS.refresh_view(t)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (accumulator_of(t), 0)
