"""The compiled callable: guards, the compiled forward, and one node for the backward.

NOTE [Compiled calls]
``CompiledFunction.__call__`` computes a guard key from the call (per tensor argument its
dtype, shape, strides and ``requires_grad``; grad mode; the other arguments' values) and
looks it up. A new key traces the call (``trace.py``), builds the forward and, when an
input requires grad, the backward (``codegen.py``), and returns the traced call's own
(eager) result. Keys are grouped by structure (NOTE [Size variants]). Each entry also
checks what the trace read from outside: the function's globals and closure cells that it
names (Python values by equality, other objects by identity), each captured tensor's
shape, dtype and ``requires_grad``, and for modules every submodule's ``training`` flag,
parameters, buffers and plain attributes. A failed check retraces.

A compiled call runs the forward program on the arrays, wraps each output once, and, when
gradients are needed, gives the outputs one ``CompiledFunctionBackward`` node whose edges
are the inputs' (and captured tensors') histories. Its first-order backward runs the
backward program on raw arrays; with ``create_graph=True`` it replays the recorded
forward and backward equations through ``bind`` from the saved inputs, so the gradient
has a history and double backward is eager's. Saved inputs are version-checked as eager
mode's saved tensors are.

A call whose tensors are all on one CUDA device runs a CUDA program instead (NOTE
[Compiled CUDA programs]; ``_call_device``: the device joins the guard key).

What is not compiled runs eagerly, with the same answer: a call under a transform
(``grad(compiled_f)``; compile the transformed function instead), a call with tensors on
several devices, a graph break (warned once per cause and line; ``fullgraph=True`` raises), and
calls beyond ``config.cache_size_limit`` structures (warned once).

NOTE [Size variants]
A key's structure (``_structure_key``) is the key without sizes: per tensor its dtype,
which dims are 1 (the broadcasting pattern), its layout (C, F or other strides) and
``requires_grad``; grad mode, the device and the other arguments. ``cache_size_limit``
counts structures, as PyTorch counts recompiles; the keys of one structure (its size
variants) do not count, and at most ``SIZE_VARIANTS_MAX`` of them are kept per structure,
the least recently used dropped first, so memory stays bounded. A new size is traced
again: the user's Python may branch on ``x.shape`` or compute reshape targets from it, and
numbagrad's own op wrappers bake shape-derived constants into the graph (the count in
``mean``), none of which a recorded graph shows; a replay of another size's graph could
give a wrong answer, so each size variant has its own trace, glue and checks. What the
variants share is the machine code: the loop kernels take their sizes as arguments and
their source depends on ranks, dtypes and broadcasting only (NOTE [Lowering]), so a new
size finds its kernels in ``codegen._MODULES`` (or Numba's disk cache) and costs a trace
and the glue (7 to 15 ms for the 20-op chain with its backward on the busy 2-core
machine, against 21 us for a hit: ``asv_bench/run_dynamic.py``), never a Numba
compilation, except where a size crosses a lowering threshold (NOTE [Loop nest size]) or a
number the graph derives from a size is a small whole number: other numbers are kernel
arguments (``codegen._hoisted``).

``compile(dynamic=False)`` specialises on sizes, as PyTorch's: the structure is the whole
key, so every size counts toward the limit, and the CPU loop kernels have their sizes as
literals (constant trip counts LLVM can unroll and vectorise), a Numba compilation per
size. On the 16-element chain that gained nothing measurable (callgrind: 184,017
instructions per call against 184,405; the call's time is Python glue), so it is not the
default. Skipping the new trace (proving a second size's graph equal modulo sizes, with
no size read by the user's Python, and substituting sizes symbolically) is not done.

A graph break is remembered per structure: the function runs eagerly for every size of it
(eager is always right; a break rarely depends on a size).
"""

from __future__ import annotations

import collections
import functools
import sys
import time
import types
import warnings
import weakref

import numpy as np

from numbagrad._compile import codegen, codegen_cuda
from numbagrad._compile.graph import Graph, Var, format_dtype
from numbagrad._compile.lower import FUSE_MAX_MATH, _lowering
from numbagrad._compile.trace import DRAWS, GraphBreak, OpaqueFunction, pending_draws, trace
from numbagrad._core.grad_mode import is_grad_enabled_fast
from numbagrad._core.graph import Node, edge_of, saved_value
from numbagrad._core.interpreter import EVAL, bind, current_interpreter
from numbagrad._creation import zeros_like
from numbagrad._tensor import Tensor
from numbagrad._transforms.pytree import tree_flatten, tree_unflatten
from numbagrad.autograd import grad as autograd_grad
from numbagrad.ops._op import wrap_output

__all__ = ["CompiledFunction", "config", "disable", "is_compiling", "reset"]


class _Config:
    """``numbagrad._dynamo.config``: the settings scripts set."""

    cache_size_limit = 8
    suppress_errors = False
    verbose = False


config = _Config()
# the size variants kept per structure (NOTE [Size variants])
SIZE_VARIANTS_MAX = 64
_ALL: list = []  # weak references to every CompiledFunction, for ``reset``
_COMPILING = [0]
_DISABLED = [0]


def reset():
    """Forget every compiled entry (``torch.compiler.reset``)."""
    for ref in _ALL:
        cf = ref()
        if cf is not None:
            cf._entries.clear()
            cf._structures.clear()
            cf._breaks.clear()
            cf._warned.clear()


def is_compiling() -> bool:
    """True while numbagrad traces a function for compilation."""
    return _COMPILING[0] > 0


# -- guards --------------------------------------------------------------------------------
_SIMPLE = (int, float, bool, str, bytes, type(None), complex)


def _value_guard(v):
    """How to check a captured Python value: ``(is_value, expected)``."""
    if type(v) in _SIMPLE or (type(v) is tuple and all(type(x) in _SIMPLE for x in v)):
        return True, v
    return False, v


def _names(code, acc, depth=0):
    acc.update(code.co_names)
    if depth < 3:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                _names(c, acc, depth + 1)
    return acc


def _function_guards(fn, seen=None, depth=0):
    """``[(getter, is_value, expected)]`` for the globals and closure cells ``fn`` reads,
    and those of the plain functions it calls by global name (two levels)."""
    guards = []
    seen = set() if seen is None else seen
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None or id(fn) in seen:
        return guards
    seen.add(id(fn))
    g = fn.__globals__
    for name in sorted(_names(code, set())):
        if name in g:
            v = g[name]
            is_val, exp = _value_guard(v)
            guards.append((_global_getter(g, name), is_val, exp))
            if isinstance(v, types.FunctionType) and depth < 2 and not _is_library(v):
                guards += _function_guards(v, seen, depth + 1)
    for cell in fn.__closure__ or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        is_val, exp = _value_guard(v)
        guards.append((_cell_getter(cell), is_val, exp))
        if isinstance(v, types.FunctionType) and depth < 2 and not _is_library(v):
            guards += _function_guards(v, seen, depth + 1)
    return guards


def _is_library(f):
    mod = getattr(f, "__module__", "") or ""
    return mod.split(".")[0] in ("numbagrad", "numpy", "numba", "math", "builtins")


_MISSING = object()


def _global_getter(g, name):
    return lambda: g.get(name, _MISSING)


def _cell_getter(cell):
    def get():
        try:
            return cell.cell_contents
        except ValueError:
            return _MISSING

    return get


def _module_guards(module):
    """Guards of a module tree: each submodule's training flag, parameters, buffers and
    plain attributes."""
    guards = []
    for m in module.modules():
        d = m.__dict__
        guards.append((_attr_getter(m, "training"), True, m.training))
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None:
                guards.append((_items_getter(s), True, tuple((k, id(v)) for k, v in s.items())))
        for k, v in d.items():
            if not k.startswith("_") and type(v) in _SIMPLE:
                guards.append((_attr_getter(m, k), True, v))
        fwd = type(m).forward
        guards += _function_guards(fwd)
    return guards


def _attr_getter(obj, name):
    return lambda: getattr(obj, name, _MISSING)


def _items_getter(store):
    return lambda: tuple((k, id(v)) for k, v in store.items())


def _check(guards):
    for get, is_val, exp in guards:
        v = get()
        if is_val:
            if type(v) is not type(exp) or v != exp:
                return False
        elif v is not exp:
            return False
    return True


# -- entries --------------------------------------------------------------------------------
class _Entry:
    """One compiled specialisation (NOTE [Compiled calls])."""

    __slots__ = (
        "build",
        "bwd",
        "bwd_consts",
        "captured",
        "captured_meta",
        "compile_s",
        "diff_outputs",
        "draw_pos",
        "fwd",
        "fwd_grad",
        "guards",
        "n_args",
        "out_alias",
        "out_grad",
        "res_inputs",
        "simple",
        "sizes",
        "target_set",
        "targets",
        "trace",
        "treedef",
        "variants",
        "writes",
        "zeros",
    )


# the most residual elements for which the backward recomputes the forward (above it,
# storing them is cheaper than a second pass of transcendental functions)
RECOMPUTE_MAX = 1 << 16


def _recompute(tr):
    size = sum(int(np.prod(v.shape)) for v in tr.residuals if v.kind == "eqn")
    return size <= RECOMPUTE_MAX and all(
        _lowering(e) is not None and int(np.prod(e.outs[0].shape)) <= FUSE_MAX_MATH
        for e in tr.fwd.eqns
    )


def _meta(t):
    return (t._data.shape, t._data.dtype, t._requires_grad)


class CompiledFunction:
    """A function compiled by ``numbagrad.compile`` (NOTE [Compiled calls])."""

    def __init__(self, fn, fullgraph=False, module=None, name=None, dynamic=None):
        self.fn = fn
        self.fullgraph = fullgraph
        self.module = module
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        # False: sizes are part of the structure (NOTE [Size variants])
        self.dynamic = dynamic
        self._entries = {}  # key -> _Entry, every size variant of every structure
        # structure -> OrderedDict of its keys (least recently used first)
        self._structures = {}
        self._breaks = {}  # structure -> GraphBreak: its calls run eagerly
        self._warned = set()
        self._limit_warned = False
        _ALL.append(weakref.ref(self))
        try:
            self.__wrapped__ = fn
            self.__doc__ = getattr(fn, "__doc__", None)
        except AttributeError:
            pass

    # -- the call ------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _DISABLED[0] or current_interpreter() is not EVAL:
            return self.fn(*args, **kwargs)
        if kwargs:
            leaves, _ = tree_flatten((args, kwargs))
        else:
            leaves = args
            for a in args:
                if isinstance(a, (list, tuple, dict)):
                    leaves, _ = tree_flatten((args, kwargs))
                    break
        grad_on = is_grad_enabled_fast()
        key = [grad_on]
        tensors = []
        for a in leaves:
            if isinstance(a, Tensor):
                if a._is_tracer or type(a._data) is not np.ndarray:
                    return self._call_device(args, kwargs, leaves, grad_on)
                d = a._data
                key.append((d.dtype, d.shape, d.strides, a._requires_grad))
                tensors.append(a)
            else:
                try:
                    hash(a)
                    key.append((type(a), a))
                except TypeError:
                    key.append((type(a), id(a)))
        if not kwargs and leaves is args:
            key = tuple(key)
        else:
            key = (tuple(key), tuple(kwargs))
        entry = self._entries.get(key)
        if entry is not None and self._valid(entry, tensors):
            entry.variants.move_to_end(key)  # (least recently used: NOTE [Size variants])
            return self._run(entry, tensors)
        return self._miss(key, args, kwargs, leaves, tensors, None, 3)

    def _miss(self, key, args, kwargs, leaves, tensors, device, stacklevel):
        """A call whose key has no valid entry: eager for a known graph break or beyond the
        cache size limit (warned once), else traced and compiled (NOTE [Size variants])."""
        struct = key if self.dynamic is False else _structure_key(leaves, kwargs, device)
        if struct in self._breaks:
            return self.fn(*args, **kwargs)
        variants = self._structures.get(struct)
        if variants is None and len(self._structures) >= config.cache_size_limit:
            if not self._limit_warned:
                self._limit_warned = True
                what = "sizes, " if self.dynamic is False else ""
                warnings.warn(
                    f"numbagrad.compile: {self.name} reached the cache size limit "
                    f"({config.cache_size_limit} specialisations: dtypes, ranks, broadcasting "
                    f"patterns, {what}layouts, devices, requires_grad or captured values keep "
                    "changing); further new calls run eagerly. Raise "
                    "numbagrad._dynamo.config.cache_size_limit to allow more.",
                    stacklevel=stacklevel,
                )
            return self.fn(*args, **kwargs)
        return self._compile(key, struct, args, kwargs, leaves, tensors, device)

    def _call_device(self, args, kwargs, leaves, grad_on):
        """A call with tensors that are not all on the CPU: compiled for CUDA when every one
        is on one CUDA device (NOTE [Compiled CUDA programs]), else run eagerly (mixed
        devices raise eager mode's error)."""
        key = [grad_on]
        tensors, device = [], None
        for a in leaves:
            if isinstance(a, Tensor):
                d = a._data
                if a._is_tracer or not codegen_cuda.owns(d):
                    return self.fn(*args, **kwargs)
                dev = f"cuda:{d.device_index}"
                if device is None:
                    device = dev
                elif dev != device:
                    return self.fn(*args, **kwargs)
                key.append((d.dtype, d.shape, d.strides, a._requires_grad))
                tensors.append(a)
            else:
                try:
                    hash(a)
                    key.append((type(a), a))
                except TypeError:
                    key.append((type(a), id(a)))
        key = (device, tuple(key), tuple(kwargs))  # (the device is part of the guard)
        entry = self._entries.get(key)
        if entry is not None and self._valid(entry, tensors):
            entry.variants.move_to_end(key)
            return self._run(entry, tensors)
        return self._miss(key, args, kwargs, leaves, tensors, device, 4)

    def _valid(self, entry, tensors=()):
        for t, meta in zip(entry.captured, entry.captured_meta):
            d = t._data
            if d.shape != meta[0] or d.dtype is not meta[1] or t._requires_grad != meta[2]:
                return False
        if entry.writes and _aliased(entry, tensors):
            return False  # (traced again: the trace breaks on the aliasing)
        return _check(entry.guards) if entry.guards else True

    def _compile(self, key, struct, args, kwargs, leaves, tensors, device=None):
        positions = [i for i, a in enumerate(leaves) if isinstance(a, Tensor)]
        t0 = time.perf_counter()
        _COMPILING[0] += 1
        try:
            if leaves is args:
                tr = trace(lambda *a: self.fn(*a), args, {}, positions)
            else:
                tr = trace(self.fn, args, kwargs, _positions_in(args, kwargs))
        except GraphBreak as e:
            _COMPILING[0] -= 1
            return self._graph_break(struct, e, args, kwargs)
        except Exception:  # the eager call raises the same error, with the user's traceback
            _COMPILING[0] -= 1
            return self.fn(*args, **kwargs)
        try:
            entry = self._build(tr, device)
        finally:
            _COMPILING[0] -= 1
        entry.guards = _function_guards(self.fn)
        if self.module is not None:
            entry.guards += _module_guards(self.module)
        entry.sizes = [tuple(t._data.shape) for t in tensors]
        self._add(key, struct, entry)
        # the traced call ran the function eagerly on aliases of the inputs; this call's
        # result comes from the compiled code (its first run compiles or loads the
        # kernels), wired to the real inputs' histories, with the random numbers the
        # trace drew (then dropped: only this call uses them)
        pending_draws(tr.drawn)
        tr.drawn = []
        try:
            out = self._run(entry, tensors)
        finally:
            pending_draws(())
        entry.compile_s = time.perf_counter() - t0
        if codegen.logging_compiles() or entry.compile_s > 1.0:
            print(
                f"numbagrad.compile: compiled {self.name} in {entry.compile_s:.2f} s",
                file=sys.stderr,
            )
        return out

    def _add(self, key, struct, entry):
        """Keep ``entry`` as the newest size variant of ``struct`` (NOTE [Size variants])."""
        variants = self._structures.get(struct)
        if variants is None:
            variants = self._structures[struct] = collections.OrderedDict()
        variants[key] = None
        variants.move_to_end(key)
        while len(variants) > SIZE_VARIANTS_MAX:
            old, _ = variants.popitem(last=False)
            del self._entries[old]
        entry.variants = variants
        self._entries[key] = entry

    def _graph_break(self, key, e, args, kwargs):
        if self.fullgraph:
            raise RuntimeError(
                f"numbagrad.compile(fullgraph=True): {self.name} cannot be traced into one "
                f"graph: {e}"
            ) from e
        self._breaks[key] = e
        sig = (e.cause, e.where)
        if sig not in self._warned:
            self._warned.add(sig)
            warnings.warn(
                f"numbagrad.compile: {self.name} runs eagerly (graph break: {e}). Pass "
                "fullgraph=True to make this an error.",
                stacklevel=4,
            )
        return self.fn(*args, **kwargs)

    # -- building -------------------------------------------------------------------------------
    def _build(self, tr, device=None):
        en = _Entry()
        if device is None:
            en.build, en.zeros = codegen.build, np.zeros
            if self.dynamic is False:  # sizes as literals (NOTE [Size variants])
                en.build = functools.partial(codegen.build, static=True)
        else:
            en.build = functools.partial(codegen_cuda.build, device=device)
            en.zeros = codegen_cuda.zeros
        en.trace = tr
        en.treedef = tr.treedef
        en.captured = tr.captured
        en.captured_meta = [_meta(t) for t in tr.captured]
        en.n_args = len(tr.fwd.inputs) - len(tr.captured)
        en.out_grad = tr.out_grad
        fin = tr.fwd.inputs
        index_of = {id(v): i for i, v in enumerate(fin)}
        # outputs that are inputs (returned as the same tensor) or views of one
        en.out_alias = [
            (index_of.get(id(a)), index_of.get(id(a.root)) if a.root is not None else None)
            if type(a) is Var
            else (None, None)
            for a in tr.fwd.outputs
        ]
        # inputs and captured tensors written in place: the forward also returns their new
        # values, which ``_run`` writes back (NOTE [In-place writes in compiled graphs])
        en.writes = [(i, bump) for i, _, bump in tr.writes]
        wb = [v for _, v, _ in tr.writes]
        written = {id(v): i for i, v, _ in tr.writes}
        en.simple = (
            not wb
            and len(tr.fwd.outputs) == 1
            and tr.treedef == _LEAF
            and en.out_alias[0] == (None, None)
            and type(tr.fwd.outputs[0]) is Var
        )
        en.fwd = en.build(fin, tr.fwd.eqns, list(tr.fwd.outputs) + wb, "forward")
        en.bwd = None
        en.draw_pos = {}
        en.fwd_grad = None
        if tr.bwd is not None and not wb and _recompute(tr):
            # small and all fused: the backward recomputes the forward from the inputs in
            # its own loop nests (NOTE [Compiled calls]), so the forward returns only its
            # outputs
            en.res_inputs = [("in", i) for i in range(len(fin))]
            en.fwd_grad = en.fwd
            n_res = len(tr.residuals)
            extra = tr.bwd.inputs[n_res:]
            en.bwd = en.build(
                list(fin) + extra, tr.fwd.eqns + tr.bwd.eqns, tr.bwd.outputs, "backward"
            )
            en.bwd_consts = tr.bwd_consts
            en.targets = tr.targets
            en.diff_outputs = tr.diff_outputs
            en.target_set = frozenset(tr.targets)
        elif tr.bwd is not None:
            # (a written input's new value is read back from the input, whose version the
            # backward checks as eager mode's saved tensors)
            res_eqn = [v for v in tr.residuals if v.kind == "eqn" and id(v) not in written]
            # the random draws are kept too: a double backward replays the forward with the
            # numbers this call drew (``_replay``)
            for e in tr.fwd.eqns:
                if e.prim in DRAWS and e.outs[0] not in res_eqn:
                    res_eqn.append(e.outs[0])
            en.draw_pos = {id(v): k for k, v in enumerate(res_eqn)}
            en.res_inputs = [
                ("in", index_of[id(v)])
                if v.kind != "eqn"
                else ("in", written[id(v)])
                if id(v) in written
                else ("out", res_eqn.index(v))
                for v in tr.residuals
            ]
            en.fwd_grad = en.build(
                fin, tr.fwd.eqns, list(tr.fwd.outputs) + wb + res_eqn, "forward_with_residuals"
            )
            en.bwd = en.build(tr.bwd.inputs, tr.bwd.eqns, tr.bwd.outputs, "backward")
            en.bwd_consts = tr.bwd_consts
            en.targets = tr.targets
            en.diff_outputs = tr.diff_outputs
            en.target_set = frozenset(tr.targets)
        return en

    # -- running --------------------------------------------------------------------------------
    def _run(self, en, tensors):
        inputs = tensors + en.captured if en.captured else tensors
        arrays = [t._data for t in inputs]
        grad = en.bwd is not None and is_grad_enabled_fast()
        if grad:
            res = en.fwd_grad.fn(*arrays)
            n = len(en.out_alias) + len(en.writes)
            outs, extra = res[:n], res[n:]
        else:
            outs = en.fwd.fn(*arrays)
        if en.writes:
            _write_back(en, inputs, outs)
        if en.simple:  # one new array out (a loss): the common case, inline
            t = Tensor._make(outs[0])
            if grad:
                _attach_node(en, inputs, (t,), extra)
            return t
        wrapped = []
        for o, (same, root) in zip(outs, en.out_alias):
            if same is not None:
                wrapped.append(inputs[same])
            elif type(o) is not np.ndarray and not codegen_cuda.owns(o):
                wrapped.append(o)
            elif root is not None:
                wrapped.append(wrap_output(o, inputs[root]))
            else:
                wrapped.append(Tensor._make(o))
        if grad:
            _attach_node(en, inputs, wrapped, extra)
        if en.treedef is not None and len(wrapped) == 1 and en.treedef == _LEAF:
            return wrapped[0]
        return tree_unflatten(wrapped, en.treedef)

    # -- introspection -------------------------------------------------------------------------
    def explain(self) -> str:
        """The compiled graphs, their generated code and the graph breaks, as text."""
        parts = []
        for i, (struct, variants) in enumerate(self._structures.items()):
            en = self._entries[next(reversed(variants))]  # the most recently used size
            tr = en.trace
            sizes = [self._entries[k].sizes for k in variants]
            parts.append(
                f"== {self.name}, specialisation {i} (compiled in {en.compile_s:.2f} s)\n"
                f"structure: {_format_structure(struct, self.dynamic)}\n"
                f"sizes seen ({len(sizes)}, least recently used first): "
                + ", ".join(_format_sizes(s) for s in sizes)
            )
            parts.append(Graph(tr.fwd.inputs, tr.fwd.eqns, tr.fwd.outputs).format("forward"))
            for j, v, bump in tr.writes:  # NOTE [In-place writes in compiled graphs]
                parts.append(
                    f"  written back in place: {tr.fwd.inputs[j].name} = {v.name} (version +{bump})"
                )
            if tr.bwd is not None:
                parts.append(tr.bwd.format("backward"))
            prog = en.fwd_grad or en.fwd
            parts.append("-- generated glue --\n" + prog.glue)
            if prog.kernels:
                parts.append("-- generated kernels --\n" + prog.kernels)
            if en.bwd is not None:
                parts.append("-- backward glue --\n" + en.bwd.glue)
                if en.bwd.kernels:
                    parts.append("-- backward kernels --\n" + en.bwd.kernels)
        for e in self._breaks.values():
            parts.append(f"== graph break: {e}")
        return "\n".join(parts) if parts else f"{self.name}: nothing compiled yet"


_LEAF = tree_flatten(0)[1]


def _write_back(en, inputs, outs):
    """Write the new values of the inputs and captured tensors the function writes in
    place into their memory (through their strides), and bump their versions as the eager
    in-place ops do (NOTE [In-place writes in compiled graphs])."""
    k = len(en.out_alias)
    for (i, bump), a in zip(en.writes, outs[k:]):
        d = inputs[i]._data
        d[...] = a
        inputs[i]._storage[1] += bump


def _aliased(en, tensors):
    """Whether an input or captured tensor the entry writes shares memory with another."""
    inputs = tensors + en.captured if en.captured else tensors
    for i, _ in en.writes:
        a = inputs[i]
        for j, b in enumerate(inputs):
            if j != i and (b._storage is a._storage or np.may_share_memory(a._data, b._data)):
                return True
    return False


def _layout(d):
    """``"C"``, ``"F"`` or ``"A"`` (other strides) for array ``d`` (Numba's layouts)."""
    flags = d.flags
    if flags.c_contiguous:
        return "C"
    return "F" if getattr(flags, "f_contiguous", False) else "A"


def _structure_key(leaves, kwargs, device):
    """The structure of a call (NOTE [Size variants]): its key with each tensor's shape and
    strides replaced by which dims are 1 and its layout."""
    parts = [device, is_grad_enabled_fast(), tuple(kwargs)]
    for a in leaves:
        if isinstance(a, Tensor):
            d = a._data
            parts.append((d.dtype, tuple(n == 1 for n in d.shape), _layout(d), a._requires_grad))
        else:
            try:
                hash(a)
                parts.append((type(a), a))
            except TypeError:
                parts.append((type(a), id(a)))
    return tuple(parts)


def _format_structure(struct, dynamic):
    """A structure (or with ``dynamic=False`` a whole key) as text, for ``explain``."""
    if dynamic is False:
        return f"{struct!r} (dynamic=False: sizes are part of it)"
    device, grad_on, kwnames = struct[:3]
    items = []
    for p in struct[3:]:
        if len(p) == 4 and isinstance(p[0], np.dtype):
            dims = ",".join("1" if one else "n" for one in p[1])
            items.append(f"{format_dtype(p[0])}[{dims}] {p[2]}{' requires_grad' if p[3] else ''}")
        else:
            items.append(f"{p[0].__name__} {p[1]!r}")
    where = device or "cpu"
    kw = f", keywords {list(kwnames)}" if kwnames else ""
    return f"({', '.join(items)}) on {where}, grad mode {'on' if grad_on else 'off'}{kw}"


def _format_sizes(sizes):
    return "(" + ", ".join("[" + ",".join(map(str, s)) + "]" for s in sizes) + ")"


def _positions_in(args, kwargs):
    leaves, _ = tree_flatten((args, kwargs))
    return [i for i, a in enumerate(leaves) if isinstance(a, Tensor)]


class CompiledFunctionBackward(Node):
    """The node of a compiled call's outputs (NOTE [Compiled calls])."""

    # every gradient it returns is a new array (``_backward_arrays`` copies the others), so
    # the engine may keep it as a leaf's .grad without copying (NOTE [Engine], point 4)
    _fresh_grads = True
    # the program's gradients are the traced ``autograd.grad``'s, whose shapes and dtypes
    # the engine validated (and reduced) while tracing: the fix-ups are in the program
    _exact_grads = True

    def name(self) -> str:
        return "CompiledFunctionBackward"

    def _backward_arrays(self, garrays):
        en = self.entry
        saved = self._saved
        if saved is None:
            saved_value(self, 0)  # the "backward through the graph a second time" error
        res = []
        for kind, x in en.res_inputs:
            if kind == "in":
                t, version = self.inputs[x]
                if t._storage[1] != version:
                    raise _modified(self, t, version)
                res.append(t._data)
            else:
                res.append(saved[x])
        cots = garrays
        for g in garrays:
            if g is None:  # an output that got no gradient: zeros
                cots = [
                    en.zeros(*self.out_meta[k]) if g is None else g for k, g in enumerate(garrays)
                ]
                break
        if en.bwd_consts:
            res += [c._data for c in en.bwd_consts]
        grads = en.bwd.fn(*res, *cots)
        nxt = self._next
        out = [None] * len(nxt)
        for i, g in zip(en.targets, grads):
            if nxt[i] is not None and g is not None:
                # a view, or an array the program was given (a residual, a cotangent that
                # passed through): a copy, so that no .grad aliases another tensor's memory
                if g.base is not None or _among(g, res) or _among(g, cots):
                    g = g.copy()
                out[i] = g
        return out

    def _backward(self, grads, create_graph):
        if not create_graph:
            arrays = self._backward_arrays([None if g is None else g._data for g in grads])
            return [None if a is None else Tensor._make(a) for a in arrays]
        return _replay(self, grads)


def _among(a, arrays) -> bool:
    """Whether ``a`` is one of ``arrays`` (by identity; the lists are short)."""
    for b in arrays:
        if b is a:
            return True
    return False


def _modified(node, t, version):
    d = t._data
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{d.dtype} {list(d.shape)}] (an input of {node.name()}) is at "
        f"version {t._storage[1]}; expected version {version} instead. Hint: clone the "
        "tensor before modifying it in place, or modify it before it is saved."
    )


def _attach_node(en, inputs, wrapped, extra):
    node = _new_node(CompiledFunctionBackward)
    targets = en.target_set
    edges = [
        edge_of(t) if t._requires_grad and i in targets else None for i, t in enumerate(inputs)
    ]
    node._init_node(edges, [(t._data.shape, t._data.dtype) for t in inputs], len(en.diff_outputs))
    d = node.__dict__
    d["entry"] = en
    d["inputs"] = [(t, t._storage[1]) for t in inputs]
    # (the engine frees ``_saved`` after a backward without retain_graph; a recomputing
    # backward keeps a marker, so a second backward raises as eager mode's does)
    node._saved = list(extra) if extra else ([None] if en.trace.residuals else ())
    outs = []
    for k, i in enumerate(en.diff_outputs):
        o = wrapped[i]
        outs.append((o._data.shape, o._data.dtype))
        if o._grad_fn is None and not o._requires_grad:
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = k
    d["out_meta"] = outs


_new_node = object.__new__


def _replay(node, grads):
    """The backward of a compiled call with ``create_graph=True``: the recorded forward
    runs again through the eager ops from the saved inputs, and the engine differentiates
    it (NOTE [Compiled calls]), so the gradient has eager mode's history."""
    en = node.entry
    tr = en.trace
    if en.writes:
        raise NotImplementedError(
            "numbagrad.compile: a double backward (create_graph=True) through a compiled "
            "call that writes into its inputs or captured tensors in place is not supported; "
            "compute the gradient of the function without the in-place writes"
        )
    env = {}
    for v, (t, version) in zip(tr.fwd.inputs, node.inputs):
        if t._storage[1] != version:
            raise _modified(node, t, version)
        env[id(v)] = t

    def val(a):
        return env[id(a)] if type(a) is Var else a

    for e in tr.fwd.eqns:
        args = [val(a) for a in e.ins]
        if e.prim in DRAWS:  # the numbers the forward drew
            env[id(e.outs[0])] = Tensor._make(node._saved[en.draw_pos[id(e.outs[0])]])
            continue
        if e.prim is OpaqueFunction:
            p = e.params
            full, it, cpos = [], iter(args), dict(p["consts"])
            for i in range(p["n_args"]):
                full.append(cpos[i] if i in cpos else next(it))
            out = p["fn"].apply(*full, **p["kwargs"])
            outs = out if p["tuple_out"] else (out,)
        else:
            out = bind(e.prim, tuple(args), e.params)
            outs = out if type(out) is tuple else (out,)
        for o, r in zip(e.outs, outs):
            env[id(o)] = r
    outs, cots = [], []
    for k, i in enumerate(en.diff_outputs):
        o = val(tr.fwd.outputs[i])
        if isinstance(o, Tensor) and o.requires_grad:
            outs.append(o)
            cots.append(grads[k] if grads[k] is not None else zeros_like(o))
    wanted = [i for i in en.targets if node._next[i] is not None]
    result = [None] * len(node._next)
    if outs and wanted:
        gs = autograd_grad(
            outs,
            [env[id(tr.fwd.inputs[i])] for i in wanted],
            grad_outputs=cots,
            create_graph=True,
            allow_unused=True,
        )
        for i, g in zip(wanted, gs):
            result[i] = g
    return result


class disable:
    """Run ``fn`` (or the block) eagerly, never compiled: ``@numbagrad.compiler.disable``
    or ``with numbagrad.compiler.disable():``, as ``torch.compiler.disable``."""

    def __new__(cls, fn=None, recursive=True):
        if not recursive:
            raise NotImplementedError(
                "numbagrad.compiler.disable(recursive=False): numbagrad runs everything the "
                "disabled function calls eagerly too (recursive=True)"
            )
        if fn is None:
            return super().__new__(cls)

        @functools.wraps(fn)
        def run_eagerly(*args, **kwargs):
            _DISABLED[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                _DISABLED[0] -= 1

        return run_eagerly

    def __enter__(self):
        _DISABLED[0] += 1
        return self

    def __exit__(self, *exc):
        _DISABLED[0] -= 1
        return False
