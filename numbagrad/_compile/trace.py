"""Tracing one call of a function into a forward and a backward ``Graph``.

NOTE [Compile traces]
``trace`` runs the function once, eagerly, with a ``Recorder`` as the current interpreter
(NOTE [Interpreters]): every primitive application reaches ``Recorder.process``, which
runs it on the eager interpreter below and appends an ``Eqn``. Because the values are
real, everything Python does around the ops (shapes, loops, transforms such as
``func.grad`` or ``vmap`` nested inside, custom ``Function``s whose forward and backward
are numbagrad ops) runs as it would eagerly, and only what reaches ``bind`` is kept.

The backward graph comes from the ops' own VJP rules: ``autograd.grad(outputs, inputs,
create_graph=True)`` runs under the same recorder, so the rules' ops (and a custom
Function's backward) are recorded like the forward's, with no second table of derivatives.

A trace stops (``GraphBreak``) wherever replaying the recorded ops could give another
answer than running the function again:
- the function reads a traced value into Python (``.item()``, ``bool(t)``, ``.tolist()``,
  ``.numpy()``: the hooks in ``_tensor.COMPILE_TRACE``), so later control flow or values
  may depend on the data;
- an in-place write the recorder cannot make functional (NOTE [In-place writes in
  compiled graphs] says which it can);
- an op whose output shape depends on the data (``nonzero``, boolean masks);
- a random draw that cannot be recorded (the generator's state moved outside a recorded
  draw; a draw under a transform inside the function), which must draw anew on every
  call. The draws of the factories (``randn``, ``rand_like``: ``Draw``) and from tensors
  (``bernoulli(p)``, ``normal(mean, std)``, ``poisson``, ``multinomial``: ``DrawFrom``)
  are recorded instead, and a compiled call draws them anew from numbagrad's generator in
  the eager order, so it gives the eager call's numbers for the same seed;
- a tensor reaches an op from a path the recorder did not see (a tensor computed outside
  numbagrad's ops, a custom backward that leaves numbagrad).
The caller then runs the function eagerly (``_compile/api.py``). Tensors the function reads
from outside (module parameters, globals, closures) become ``ext`` inputs, read by
reference on every call, so in-place updates by an optimiser need no retrace.

NOTE [In-place writes in compiled graphs]
The graph is functional: an in-place op is recorded as its out-of-place form, whose new
var replaces the written tensor's in later equations. ``check_inplace`` announces the
write (``Recorder.announce_write``) and ``commit`` reports it before writing
(``inplace_write``); while tracing, the ops' no-graph fast paths (writing straight into
memory) are off, so every write goes through ``commit``. Each storage written gets a
``_Store``: its root tensor (the var that views were derived from, found through
``Var.root``), the root's current var and the storage version after the last recorded
write. A write through a view records ``AsStridedPut(root, value)`` (the view's place in
the root: ``ops.inplace._view_params``) as the root's new var; a view whose var predates
the storage's version is re-derived when next read (``known``: ``AsStrided(root)``), so
views, the base and ``detach()`` aliases see the write as eagerly. A write cast to the
tensor's dtype records ``ToCopy``. The eager run of the trace does write: the old value a
node saved (``commit``'s snapshot) keeps the old var (``snapshot``), and the backward is
traced from the eager tape, which rebased the history exactly as without compiling.

Writes into an input, a captured tensor (``ext``) or a tensor made by a creation function
(``const``, read again by every call) are undone when the trace ends (``restore``: values,
version, autograd fields), so the compiled code, or the eager call after a break, makes
them once. For inputs and captured tensors the forward returns the final var of the root
(``Trace.writes``) and the runtime writes it into the caller's memory through its strides
and bumps the version by the number of writes eager mode makes (``runtime._write_back``);
an output that is the written tensor is returned as itself. The trace breaks where the
result could differ: the written tensor shares memory with another input or captured
tensor (two arguments viewing one storage: the guard ``runtime._aliased`` sends such a
later call to a retrace, which breaks), the value written requires grad (the caller's
tensor would take a history), the function returns a view of it, the backward reads its
value from before the write, a write through a view of a non-contiguous root, a write that
broadcasts the value, a write in a traced backward or in a CUDA call, and a write announced
but made without ``commit`` (``check_pending``). Writes that no op announces are found by
the version check at the end (``backward()`` and ``Optimizer.step()`` announce themselves
as reads, so they break before writing). An op's own implementation (the recorder runs it
with ``EVAL`` current: a custom op's Python kernel) may write into its own tensors: those
writes are not the graph's.
"""

from __future__ import annotations

import os
import sys
import weakref

import numpy as np

from numbagrad import _creation
from numbagrad import _tensor as _tensor_module
from numbagrad._compile.graph import Eqn, Graph, Var
from numbagrad._core.grad_mode import enable_grad, is_grad_enabled, no_grad
from numbagrad._core.graph import Node
from numbagrad._core.interpreter import _CURRENT, EVAL, Interpreter
from numbagrad._tensor import Tensor
from numbagrad._transforms.pytree import tree_flatten, tree_unflatten
from numbagrad.autograd import grad as autograd_grad
from numbagrad.autograd.function import apply_eager
from numbagrad.kernels import backend_of
from numbagrad.ops._op import Primitive
from numbagrad.ops.inplace import AsStrided, AsStridedPut, ToCopy, _view_params

__all__ = [
    "DRAWS",
    "PENDING_DRAWS",
    "Draw",
    "DrawFrom",
    "GraphBreak",
    "OpaqueFunction",
    "OpaqueFunctionBackward",
    "Recorder",
    "Trace",
    "pending_draws",
    "trace",
]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# primitives whose output shape depends on the values
_DATA_SHAPED = frozenset({"Nonzero", "Unique"})


class GraphBreak(Exception):  # noqa: N818 (a break, not an error: it is handled)
    """A call that cannot be traced into a graph; ``cause`` says why, ``where`` is the
    user's line (``file:line``) or None."""

    def __init__(self, cause, where=None):
        super().__init__(cause if where is None else f"{cause} (at {where})")
        self.cause = cause
        self.where = where


def user_frame():
    """``file:line`` of the innermost frame outside numbagrad (the user's code)."""
    f = sys._getframe(1)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_PKG):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return None


class Recorder(Interpreter):
    """Runs each application eagerly and records it (NOTE [Compile traces])."""

    __slots__ = (
        "__weakref__",
        "array_type",
        "bwd_eqns",
        "by_array",
        "drawn",
        "draws",
        "entry_grad",
        "eqns",
        "inputs",
        "keep",
        "opaque",
        "pending",
        "phase",
        "stores",
        "unrecorded",
        "vars",
        "versions",
        "weak",
    )

    def __init__(self):
        super().__init__(EVAL)
        self.array_type = np.ndarray  # the device's array type (CudaArray for CUDA calls)
        self.vars = {}  # id(tensor) -> Var
        self.by_array = {}  # id(array) -> Var (tensors re-wrapping a traced array)
        self.keep = []  # the traced tensors, alive until the trace ends (ids stay unique)
        self.eqns = []
        self.bwd_eqns = []
        self.phase = "fwd"
        self.opaque = 0  # > 0 while an opaque Function runs
        self.draws = 0  # random draws recorded (``record_draw``)
        self.drawn = []  # their values, in order
        self.unrecorded = None  # what drew without being recorded
        self.inputs = []  # the in/ext/const vars, in order
        self.entry_grad = {}  # id(var) -> whether its tensor required grad when first read
        # NOTE [In-place writes in compiled graphs]: the storages written while tracing
        # (id(storage) -> _Store), each var's storage version, and the in-place op under way
        self.stores = {}
        self.versions = {}
        self.pending = None
        # tensors made by creation functions while tracing point here (``_born_in``)
        self.weak = weakref.ref(self)

    # -- vars ------------------------------------------------------------------------------
    def new_var(self, t, kind, root=None):
        v = Var(len(self.keep), t._data.shape, t._data.dtype, kind, root)
        self.vars[id(t)] = v
        self.by_array[id(t._data)] = v
        self.versions[id(v)] = t._storage[1]
        self.keep.append((t, t._storage[1]))
        if kind in ("in", "ext", "const"):
            self.inputs.append(v)
            self.entry_grad[id(v)] = t._requires_grad
        return v

    def known(self, t):
        v = self.vars.get(id(t))
        if v is None:
            v = self.by_array.get(id(t._data))
        if v is not None and self.stores:
            st = self.stores.get(id(t._storage))
            if st is not None and self.versions[id(v)] != t._storage[1]:
                v = self._rederive(t, st)  # a view of a storage written since
        return v

    def atom(self, a):
        """The graph atom of operand ``a``: a Var for tensors, the value for literals."""
        if not isinstance(a, Tensor):
            return a
        v = self.known(a)
        if v is not None:
            return v
        if a._is_tracer:
            raise GraphBreak("a transform's value reached the compiled graph", user_frame())
        if type(a._data) is not self.array_type:  # (one device per graph)
            raise GraphBreak(
                f"a {a.device} tensor in a graph of the call's "
                f"{'CPU' if self.array_type is np.ndarray else 'CUDA'} tensors",
                user_frame(),
            )
        born = a.__dict__.get("_born_in") if hasattr(a, "__dict__") else None
        if self.phase == "bwd" and born is None:
            raise GraphBreak(
                "the backward produced a tensor outside numbagrad's ops (a custom backward "
                "that computes with NumPy or its own kernels)",
                user_frame(),
            )
        for w in self.keep:  # a view of a traced value made outside the ops
            if w[0]._storage is a._storage:
                raise GraphBreak("a view of a traced tensor made outside numbagrad's ops")
        kind = "const" if born is not None and born() is self else "ext"
        return self.new_var(a, kind)

    # -- the interpreter ---------------------------------------------------------------------
    def process(self, prim, args, params):
        name = prim.__name__
        if name == "_FunctionApply":
            return self._function(prim, args, params)
        if name in _DATA_SHAPED or (
            name == "Index"
            and any(isinstance(a, Tensor) and a._data.dtype == np.bool_ for a in args[1:])
        ):
            raise GraphBreak(f"{name}: its output shape depends on the values", user_frame())
        if "impl" not in _own_attrs(prim):
            raise GraphBreak(f"{name} has no array implementation to compile", user_frame())
        if self.pending is not None:
            self.check_pending()
        ins = [self.atom(a) for a in args]
        token = _CURRENT.set(EVAL)
        try:
            out = prim._eval(args, params)
        finally:
            _CURRENT.reset(token)
        outs = out if type(out) is tuple else (out,)
        root = None
        if prim.view and type(ins[0]) is Var:
            root = ins[0].root if ins[0].root is not None else ins[0]
        ovars = [self.new_var(o, "eqn", root if i == 0 else None) for i, o in enumerate(outs)]
        (self.eqns if self.phase == "fwd" else self.bwd_eqns).append(Eqn(prim, ins, params, ovars))
        return out

    def _function(self, prim, args, params):
        """A custom Function. Written with numbagrad ops, it is traced through: its
        forward's ops are recorded as they run, its outputs are those ops' results
        (re-wrapped), and its backward is recorded when the backward is traced. A Function
        that leaves numbagrad (reads values, runs its own kernels) is one opaque call
        instead: ``OpaqueFunction`` forward, ``OpaqueFunctionBackward`` backward."""
        ins = [self.atom(a) for a in args]
        n_eqns = len(self.eqns)
        try:
            out = prim._eval(args, params)  # with this recorder current: the forward's ops
            for o in out if type(out) is tuple else (out,):
                if isinstance(o, Tensor) and self.known(o) is None:
                    raise GraphBreak("an output was not computed with numbagrad ops")
            return out
        except GraphBreak:
            if self.phase != "fwd":
                raise
            del self.eqns[n_eqns:]  # (what it recorded before leaving numbagrad)
        return self._opaque_function(args, ins, params)

    def _opaque_function(self, args, ins, params):
        fn, kwargs = params["fn"], params["kwargs"]
        token = _CURRENT.set(EVAL)
        self.opaque += 1  # its own reads of values are its business: it runs on every call
        try:
            out, ctx = apply_eager(fn, args, kwargs)
        finally:
            self.opaque -= 1
            _CURRENT.reset(token)
        outs = out if type(out) is tuple else (out,)
        if not all(isinstance(o, Tensor) for o in outs):
            raise GraphBreak(
                f"custom Function {fn.__name__} leaves numbagrad and returns non-tensors",
                user_frame(),
            )
        tensors = [a for a in args if isinstance(a, Tensor)]
        call = {
            "fn": fn,
            "kwargs": kwargs,
            "consts": tuple((i, a) for i, a in enumerate(args) if not isinstance(a, Tensor)),
            "n_args": len(args),
            "grad_mask": tuple(t._requires_grad for t in tensors),
            "tuple_out": type(out) is tuple,
        }
        ovars = [self.new_var(o, "eqn") for o in outs]
        holder = _Object(ctx)
        cvar = Var(len(self.keep), (), np.dtype(object), "eqn")
        self.keep.append((holder, 0))
        self.eqns.append(
            Eqn(OpaqueFunction, [a for a in ins if type(a) is Var], call, [*ovars, cvar])
        )
        if any(o._grad_fn is ctx for o in outs):
            node = _OpaqueNode(ctx, self, cvar)
            for o in outs:
                if o._grad_fn is ctx:
                    o._grad_fn = node
        return out

    def record_draw(self, make, size):
        """A random draw (``_creation``'s factories, through the random hook): drawn now
        and recorded as a ``Draw`` equation, which draws anew on every compiled call."""
        t = Tensor._make(make(size))
        self.drawn.append(t._data)
        v = self.new_var(t, "eqn")
        (self.eqns if self.phase == "fwd" else self.bwd_eqns).append(
            Eqn(Draw, [], {"make": make, "size": size}, [v])
        )
        self.draws += 1
        return t

    def record_draw_of(self, fn, tensors, what):
        """A random draw from tensors (``bernoulli(p)``, ``normal(mean, std)``,
        ``poisson``, ``multinomial``; through the random-op hook): ``fn`` of the tensors'
        values, drawn now and recorded as a ``DrawFrom`` equation, which calls ``fn`` anew
        on every compiled call (NOTE [Compile traces])."""
        if self.phase != "fwd":  # (the traced backward's draws could not be replayed)
            self.unrecorded = f"{what} in a backward"
            return _draw_of(fn, tensors)
        ins = [self.atom(t) for t in tensors]
        token = _CURRENT.set(EVAL)
        try:
            out = _draw_of(fn, tensors)
        finally:
            _CURRENT.reset(token)
        self.drawn.append(out._data)
        v = self.new_var(out, "eqn")
        self.eqns.append(Eqn(DrawFrom, ins, {"fn": fn, "what": what}, [v]))
        self.draws += 1
        return out

    def unrecorded_draw(self, what):
        """A draw this recorder cannot record (under vmap, in place, from tensors)."""
        self.unrecorded = what

    def data_read(self, t, what):
        """Called before a tensor's values are read into Python or written in place."""
        if self.opaque:
            return
        if what == "an in-place operation":
            if _CURRENT.get() is not EVAL:  # (else an op's own implementation writes)
                self.announce_write(t)
            return
        if self.known(t) is not None:
            raise GraphBreak(f"{what} on a traced tensor", user_frame())
        born = t.__dict__.get("_born_in") if hasattr(t, "__dict__") else None
        if born is None or born() is not self:  # a tensor from outside: its values may change
            raise GraphBreak(f"{what} on a tensor read from outside", user_frame())

    # -- in-place writes (NOTE [In-place writes in compiled graphs]) ----------------------------
    def announce_write(self, t):
        """Called before an in-place op writes into ``t`` (``ops.inplace.check_inplace``):
        finds the storage's root, keeps a copy of an input's or captured tensor's values
        (restored when the trace ends) and remembers the write (``check_pending``)."""
        where = user_frame()
        if self.phase != "fwd":
            raise GraphBreak("an in-place operation in a traced backward", where)
        if self.array_type is not np.ndarray:
            raise GraphBreak("an in-place operation in a compiled CUDA call", where)
        if self.pending is not None:
            self.check_pending()
        v = self.atom(t)
        key = id(t._storage)
        if key not in self.stores:
            root = v.root if v.root is not None else v
            rt = self.keep[root.index][0]
            if rt._storage is not t._storage:  # (a view op that copied: t is its own root)
                root, rt = v, t
            st = _Store(rt, root, t._storage[1])
            st.where = where
            if root.kind in ("in", "ext", "const"):  # (a const is read again by every call)
                st.saved = rt._data.copy()
                st.meta = (rt._requires_grad, rt._grad_fn, rt._output_nr)
            self.stores[key] = st
        self.pending = (t, t._storage[1], where)

    def graph_break(self, cause):
        """Stop the trace (for code outside this package: ``library``'s mutating ops)."""
        raise GraphBreak(cause, user_frame())

    def check_pending(self):
        """Break if the in-place op announced last wrote without ``inplace_write``."""
        t, version, where = self.pending
        if t._storage[1] != version:
            raise GraphBreak(
                "an in-place write that numbagrad cannot record (it wrote into memory "
                "directly, outside its in-place ops)",
                where,
            )

    def inplace_write(self, t, result):
        """``ops.inplace.commit`` is about to write out-of-place ``result`` into ``t``:
        ``t`` (and the root of its storage) take new vars, the storage's version the one
        the write gives it."""
        if self.opaque or _CURRENT.get() is EVAL:
            return
        where = self.pending[2] if self.pending is not None else user_frame()
        self.pending = None
        st = self.stores.get(id(t._storage))
        if st is None:
            raise GraphBreak("an in-place write that numbagrad cannot record", where)
        if st.root.kind in ("in", "ext") and result._requires_grad:
            raise GraphBreak(
                "an in-place write of a value that requires grad into an input or a "
                "captured tensor (the caller's tensor would take a history)",
                where,
            )
        self.known(t)  # (other views re-derived first, from the value before the write)
        vr = self.atom(result)
        data = t._data
        if result._data.shape != data.shape:
            raise GraphBreak("an in-place write of a value broadcast to the tensor", where)
        if vr.dtype != data.dtype:
            vr = self._eqn(ToCopy, [vr], {"dtype": data.dtype}, t)
        version = t._storage[1] + 1
        rt = st.tensor
        if _same_region(t._data, rt._data):
            new_root = vr
        else:
            new_root = self._eqn(AsStridedPut, [st.current, vr], self._geom(t, rt, where), rt)
        st.current, st.version = new_root, version
        st.writes += 1
        self._bind(rt, new_root, version)
        self._bind(t, vr, version)

    def snapshot(self, old, t):
        """``commit`` kept the old value of ``t`` for a node that saved it: ``old`` is the
        var ``t`` has before the write."""
        if self.opaque or _CURRENT.get() is EVAL:
            return
        v = self.known(t)
        if v is not None:
            self.vars[id(old)] = v
            self.keep.append((old, None))

    def _bind(self, t, v, version):
        self.vars[id(t)] = v
        self.by_array[id(t._data)] = v
        self.versions[id(v)] = version

    def _eqn(self, prim, ins, params, like):
        """Record ``prim`` with one output shaped as tensor ``like``'s values."""
        d = like._data
        v = Var(len(self.keep), d.shape, d.dtype, "eqn")
        self.keep.append((like, None))
        (self.eqns if self.phase == "fwd" else self.bwd_eqns).append(Eqn(prim, ins, params, [v]))
        return v

    def _geom(self, t, rt, where):
        """The ``AsStrided`` params of view ``t`` in its storage's root ``rt``."""
        try:
            params = _view_params(t, rt)
        except RuntimeError:
            raise GraphBreak(
                "an in-place write through a view of a tensor that is not contiguous", where
            ) from None
        shape, strides, off = params["geom"]
        size = rt._data.size * (2 if params.get("real") else 1)
        lo = hi = off
        for n, s in zip(shape, strides):
            if n == 0:
                return params
            lo += min(0, (n - 1) * s)
            hi += max(0, (n - 1) * s)
        if lo < 0 or hi >= size:
            raise GraphBreak("an in-place write through a view outside its tensor", where)
        return params

    def _rederive(self, t, st):
        """The var of view ``t`` of a storage written since the view's var was made."""
        if t._storage[1] != st.version:
            raise GraphBreak(
                "a tensor was written in place outside numbagrad's ops while tracing",
                user_frame(),
            )
        if _same_region(t._data, st.tensor._data):
            v = st.current
        else:
            v = self._eqn(AsStrided, [st.current], self._geom(t, st.tensor, user_frame()), t)
        self._bind(t, v, st.version)
        return v

    def restore(self):
        """Put back the values and versions of the inputs and captured tensors the trace
        wrote into (the compiled code or the eager call then writes them once)."""
        for st in self.stores.values():
            if st.saved is not None:
                t = st.tensor
                backend_of(t._data).copy_into(t._data, st.saved)
                t._storage[1] = st.v0
                t._requires_grad, t._grad_fn, t._output_nr = st.meta
                st.saved = None


def _same_region(a, b):
    """Whether arrays ``a`` and ``b`` are the same elements of memory."""
    if a is b:
        return True
    return (
        a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


class _Store:
    """A storage written while tracing: its root tensor (``tensor``, whose var is
    ``root`` at the first write), the root's current var, the versions before the first
    write (``v0``) and after the last, the number of writes, and for an input, a captured
    tensor or a const a copy of its values (``saved``) and autograd fields (``meta``)
    before the trace wrote them."""

    __slots__ = (
        "current",
        "meta",
        "root",
        "saved",
        "tensor",
        "v0",
        "version",
        "where",
        "writes",
    )

    def __init__(self, tensor, root, version):
        self.tensor = tensor
        self.root = root
        self.current = root
        self.v0 = self.version = version
        self.writes = 0
        self.saved = self.meta = self.where = None


class _Object:
    """A Python object flowing through a trace (an opaque Function's ctx)."""

    __slots__ = ("_data", "_storage", "obj")

    def __init__(self, obj):
        self.obj = obj
        self._storage = [None, 0]
        self._data = None


class _OpaqueNode(Node):
    """Stands for an opaque Function's ctx while the backward is traced: runs its backward
    and records it as one ``OpaqueFunctionBackward`` equation."""

    def __init__(self, ctx, rec, cvar):
        self._init_node(ctx._next, ctx._in_meta, ctx._n_out)
        self.ctx = ctx
        self.rec = rec
        self.cvar = cvar

    def name(self) -> str:
        return self.ctx.name()

    def _backward(self, grads, create_graph):
        rec = self.rec
        gatoms = [None if g is None else rec.atom(g) for g in grads]
        token = _CURRENT.set(EVAL)
        rec.opaque += 1
        try:
            res = self.ctx._backward(list(grads), False)
        finally:
            rec.opaque -= 1
            _CURRENT.reset(token)
        mask = tuple(r is not None for r in res)
        outs = [rec.new_var(r, "eqn") for r in res if r is not None]
        rec.bwd_eqns.append(Eqn(OpaqueFunctionBackward, [self.cvar, *gatoms], {"mask": mask}, outs))
        return list(res)


class OpaqueFunction(Primitive, register=False):
    """A custom Function that leaves numbagrad, called as a whole from compiled code: the
    outputs' arrays and its ctx (NOTE [Compile traces])."""

    differentiable = False
    n_out = 2
    shape_from_values = True  # (the user's code returns the outputs: codegen checks them)

    @staticmethod
    def impl(be, *arrays, fn, kwargs, consts, n_args, grad_mask, tuple_out):
        it = iter(arrays)
        cpos = dict(consts)
        args, k = [], 0
        for i in range(n_args):
            if i in cpos:
                args.append(cpos[i])
                continue
            t = Tensor._make(next(it))
            if grad_mask[k]:
                t._requires_grad = True
            k += 1
            args.append(t)
        if any(grad_mask):
            with enable_grad():
                out, ctx = apply_eager(fn, args, kwargs)
        else:
            with no_grad():
                out, ctx = apply_eager(fn, args, kwargs)
        outs = out if tuple_out else (out,)
        return (*[o._data for o in outs], ctx)


class OpaqueFunctionBackward(Primitive, register=False):
    """The backward of an ``OpaqueFunction``: its ctx's backward on arrays."""

    differentiable = False
    n_out = 2
    shape_from_values = True  # (the user's backward returns the gradients)

    @staticmethod
    def impl(be, ctx, *grads, mask):
        res = ctx._backward([None if g is None else Tensor._make(g) for g in grads], False)
        out = []
        for want, r in zip(mask, res):
            if want:
                if r is None:
                    raise RuntimeError(
                        f"{ctx.name()}: the backward returned None where it returned a "
                        "gradient when the call was traced"
                    )
                out.append(r._data)
        return out[0] if len(out) == 1 else tuple(out)


class Draw(Primitive, register=False):
    """A random draw in a compiled program: ``make(size)`` on every call, from the same
    generator in the same order as the eager call (NOTE [Compile traces])."""

    differentiable = False
    effect = True  # never dropped as dead code: the generator must advance as eagerly

    @staticmethod
    def impl(be, make, size):
        if PENDING_DRAWS:  # the call that traced: the numbers the trace drew
            return PENDING_DRAWS.pop(0)
        return make(size)


class DrawFrom(Primitive, register=False):
    """A random draw from arrays in a compiled program: ``fn`` (the random op with its
    other arguments bound) of the operands as tensors on every call, from the same
    generator in the same order as the eager call (NOTE [Compile traces])."""

    differentiable = False
    effect = True  # never dropped as dead code: the generator must advance as eagerly

    @staticmethod
    def impl(be, *arrays, fn, what):
        if PENDING_DRAWS:  # the call that traced: the numbers the trace drew
            return PENDING_DRAWS.pop(0)
        return fn(*[Tensor._make(a) for a in arrays])._data


def _draw_of(fn, tensors):
    """``fn`` of plain tensors with ``tensors``' values (no history): what the eager call
    draws, the draw's own checks of the values included."""
    return fn(*[Tensor._make(t._data) for t in tensors])


# the random draws of a compiled program (their values are saved for a double backward)
DRAWS = (Draw, DrawFrom)

# the traced call's own draws, which the compiled code it then runs uses instead of drawing
# again (``CompiledFunction._compile``, through ``pending_draws``)
PENDING_DRAWS: list = []


def pending_draws(values):
    """Make the next ``Draw`` calls return ``values`` in order (none: draw again)."""
    PENDING_DRAWS[:] = values


def _own_attrs(prim):
    names = set()
    for k in prim.__mro__:
        if k.__name__ == "Primitive":
            break
        names.update(k.__dict__)
    return names


class Trace:
    """What one trace produced: the forward and backward graphs and the tensors they read.

    ``fwd``: inputs are the function's tensor arguments then the ``ext``/``const`` tensors;
    outputs the output tensors' atoms. ``bwd`` (None without one): inputs are the forward
    vars it reads (``residuals``) then one cotangent per differentiable output; outputs one
    gradient (or None) per ``targets`` entry, the positions (in ``fwd.inputs``) of the
    inputs that require grad. ``treedef`` is the
    output's structure; ``out_grad`` which outputs require grad. ``writes``: the inputs and
    captured tensors written in place, ``(position in fwd.inputs, var of the new value,
    version bump)`` (NOTE [In-place writes in compiled graphs])."""

    __slots__ = (
        "bwd",
        "bwd_consts",
        "captured",
        "diff_outputs",
        "drawn",
        "fwd",
        "out_grad",
        "residuals",
        "targets",
        "treedef",
        "writes",
    )


def trace(fn, args, kwargs, tensor_positions):
    """Trace ``fn(*args, **kwargs)`` (NOTE [Compile traces]); ``tensor_positions`` are the
    indices of the tensors in the flattened ``(args, kwargs)``. Raises ``GraphBreak``."""
    rec = Recorder()
    try:
        return _trace(rec, fn, args, kwargs, tensor_positions)
    finally:
        rec.restore()  # (what the trace wrote into the caller's tensors)


def _trace(rec, fn, args, kwargs, tensor_positions):
    leaves, spec = tree_flatten((args, kwargs))
    leaves = list(leaves)
    if tensor_positions:
        rec.array_type = type(leaves[tensor_positions[0]]._data)
    for i in tensor_positions:
        t = leaves[i]
        a = Tensor._make(t._data, t._storage)  # an alias: hooks and history stay the user's
        if t._requires_grad and is_grad_enabled():
            a._requires_grad = True
        leaves[i] = a
        rec.new_var(a, "in")
    targs, tkwargs = tree_unflatten(leaves, spec)
    rng = _creation.get_rng_state()
    token = _CURRENT.set(rec)
    _tensor_module.COMPILE_TRACE.append(rec)
    try:
        result = fn(*targs, **tkwargs)
        if rec.pending is not None:
            rec.check_pending()
        out_leaves, treedef = tree_flatten(result)
        out_atoms = [_out_atom(rec, o) if isinstance(o, Tensor) else o for o in out_leaves]
        if rec.unrecorded is not None:
            raise GraphBreak(f"a random draw that cannot be recorded ({rec.unrecorded})")
        if rec.draws == 0 and _rng_moved(rng, _creation.get_rng_state()):
            raise GraphBreak("a random draw outside numbagrad's factories")
        tr = Trace()
        tr.treedef = treedef  # (not the traced result: it would keep its graph alive)
        tr.out_grad = [isinstance(o, Tensor) and o._requires_grad for o in out_leaves]
        ins = list(rec.inputs)
        n_fwd_vars = len(rec.keep)
        # (pruned by the code generator, which knows what the backward reads)
        tr.fwd = Graph(ins, rec.eqns, out_atoms)
        tr.bwd = None
        tr.residuals, tr.targets, tr.diff_outputs, tr.bwd_consts = [], [], [], []
        tr.writes = _writes(rec, ins)
        if is_grad_enabled() and any(tr.out_grad):
            _trace_backward(rec, tr, out_leaves, autograd_grad, n_fwd_vars)
            written = {id(tr.fwd.inputs[w[0]]) for w in tr.writes}
            if any(id(v) in written for v in tr.residuals):
                raise GraphBreak(
                    "the backward reads an input's value from before the function wrote "
                    "into it in place"
                )
    except BaseException:
        # the call runs again eagerly: it must draw the numbers this trace drew
        _creation.set_rng_state(rng)
        raise
    finally:
        _tensor_module.COMPILE_TRACE.pop()
        _CURRENT.reset(token)
    for t, version in rec.keep:
        st = rec.stores.get(id(t._storage))
        expected = version if st is None else st.version
        if expected is not None and t._storage[1] != expected:
            raise GraphBreak("a tensor was written in place outside numbagrad's ops while tracing")
    n_args = len(tensor_positions)
    tr.captured = [rec.keep[v.index][0] for v in tr.fwd.inputs[n_args:]]
    tr.drawn = rec.drawn
    return tr


def _out_atom(rec, o):
    """The atom of output tensor ``o``: an input or captured tensor written in place is
    returned as itself (the compiled call writes its new values back)."""
    st = rec.stores.get(id(o._storage))
    if st is not None and st.root.kind in ("in", "ext"):
        if not _same_region(o._data, st.tensor._data):
            raise GraphBreak(
                "the function returns a view of an input or captured tensor it writes in place",
                st.where,
            )
        return st.root
    return rec.atom(o)


def _writes(rec, ins):
    """``[(position in ins, final var, version bump)]`` of the inputs and captured
    tensors written in place; breaks where one shares memory with another."""
    writes = []
    pos = {id(v): i for i, v in enumerate(ins)}
    for st in rec.stores.values():
        if st.root.kind not in ("in", "ext") or not st.writes:
            continue
        i = pos[id(st.root)]
        a = st.tensor
        for j, u in enumerate(ins):
            if j == i or u.kind not in ("in", "ext"):
                continue
            b = rec.keep[u.index][0]
            if b._storage is a._storage or np.may_share_memory(a._data, b._data):
                raise GraphBreak(
                    "an in-place write into an input or captured tensor that shares memory "
                    "with another one",
                    st.where,
                )
        writes.append((i, st.current, st.version - st.v0))
    return writes


def _trace_backward(rec, tr, out_leaves, autograd_grad, n_fwd_vars):
    fwd_inputs = tr.fwd.inputs
    tensors = {id(v): rec.keep[v.index][0] for v in fwd_inputs}
    targets = [i for i, v in enumerate(fwd_inputs) if rec.entry_grad[id(v)]]
    if not targets:
        return
    diff_outs = [i for i, g in enumerate(tr.out_grad) if g]
    rec.phase = "bwd"
    cots = []
    for i in diff_outs:
        o = out_leaves[i]
        d = o._data
        c = Tensor._make(
            np.ones(d.shape, d.dtype)
            if type(d) is np.ndarray
            else backend_of(d).full(d.shape, 1, d.dtype)  # (on the output's device)
        )
        c.__dict__["_born_in"] = rec.weak
        cots.append(c)
        rec.new_var(c, "cot")
    grads = autograd_grad(
        [out_leaves[i] for i in diff_outs],
        [tensors[id(fwd_inputs[i])] for i in targets],
        grad_outputs=cots,
        create_graph=True,
        allow_unused=True,
    )
    gatoms = []
    for g in grads:
        if g is None:
            gatoms.append(None)
            continue
        v = rec.known(g)
        if v is None:
            raise GraphBreak("a gradient was computed outside numbagrad's ops")
        gatoms.append(v)
    cot_vars = [rec.vars[id(c)] for c in cots]
    bwd = Graph([], rec.bwd_eqns, gatoms).prune()
    produced = {id(o) for e in bwd.eqns for o in e.outs}
    cot_ids = {id(v) for v in cot_vars}
    residuals, consts, seen = [], [], set()
    for a in [*(x for e in bwd.eqns for x in e.ins), *gatoms]:
        if type(a) is Var and id(a) not in produced and id(a) not in cot_ids and id(a) not in seen:
            seen.add(id(a))
            if a.index < n_fwd_vars:
                residuals.append(a)
            elif a.kind == "const":  # made by a creation function in a rule (zeros)
                consts.append(a)
            else:
                raise GraphBreak("the backward read a tensor made outside numbagrad's ops")
    bwd.inputs = residuals + consts + cot_vars
    tr.bwd = bwd
    tr.bwd_consts = [rec.keep[v.index][0] for v in consts]
    tr.residuals = residuals
    tr.targets = targets
    tr.diff_outputs = diff_outs


def _rng_moved(before, after):
    a = before._data if isinstance(before, Tensor) else np.asarray(before)
    b = after._data if isinstance(after, Tensor) else np.asarray(after)
    return not np.array_equal(a, b)
