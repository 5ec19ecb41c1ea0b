"""The primitive declaration: ``Primitive``, its registry, and eager evaluation.

NOTE [Primitive declaration]
Each primitive is one ``Primitive`` subclass (registered by name on definition) stating,
side by side:

``impl(be, *arrays, **params)``
    The forward, array in and array out: ``be`` is the device backend of the inputs
    (NOTE [Backends]); returns an array (a tuple when ``n_out > 1``).
``vjp(ctx, *grads, **params)``
    One gradient (a tensor or None) per operand, written with numbagrad ops so that it is
    itself differentiable. ``ctx`` is the graph node (``_core.graph.OpNode``):
    ``ctx.saved()``, ``ctx.input_shape(i)``, ``ctx.input_dtype(i)``,
    ``ctx.needs_input_grad(i)``. Gradients may be in the broadcast output shape: the engine
    reduces them to each input's shape in one place.
``fused_vjp(ctx, *grads, **params)`` (optional)
    The same rule on arrays (``ctx.saved_arrays()``, ``ctx.be``), used by the engine when no
    graph of the backward is recorded; the op database checks it against ``vjp``.
``jvp(primals, tangents, out, **params)``
    The forward-mode rule: the output tangent (None for zero; one per output when
    ``n_out > 1``) from the operands, their tangents (None where an operand has none) and the
    output, written with numbagrad ops (``numbagrad/_transforms/forward.py``). Linear and
    bilinear ops get it from ``linearity``; unary ops from ``derivative``.
``batch(args, dims, **params)``
    The batching rule: ``(out, out_dim)`` from the operands and each one's batch dimension
    (None when unbatched), written with numbagrad ops (``_transforms/batching.py``);
    elementwise families and reductions share stock rules (``ops/_rules.py``). Without one,
    vmap runs the op per batch element and warns once.
An empty slot raises ``NotImplementedError`` naming the op (``Primitive.rule``).
``saves_inputs`` / ``saves_output`` / ``saved_for``
    Which operands (and whether output 0) the rules read, and for each saved input which
    operands' gradients need it (a tensor no gradient needs is not saved, so changing it in
    place stays legal, as in PyTorch).
``data_operands``
    Positions of operands that are data (a condition, an index): tensors that get no
    gradient but that a transform must see (never params: under ``vmap`` a batched index
    taken as a constant would be a silent wrong answer). ``None`` means none.
``linearity``
    ``"linear"`` when the op is linear in its non-data operands jointly (its JVP is the op
    applied to the tangents; ``sum``, views, indexing, ``add``), ``"bilinear"`` when it is
    linear in each one separately (``mul``, ``matmul``, ``einsum``), else None. The
    transforms' stock rules key on it; ``tests/test_primitives.py`` checks every flag
    numerically.
``scalar(m, *xs, **params)`` (optional)
    The op on scalars, for code generation (NOTE [Lowering] in ``_compile/lower.py``):
    its result built from the operands ``xs`` with the NumPy-named functions of namespace
    ``m``, or None where these params have no scalar form. Elementwise families state it
    once from ``fn``.
``grad_fn``
    PyTorch's name for the node (``"MulBackward0"``), or ``node_name(params)`` when it
    depends on the params (indexing).

Params are explicit keyword arguments of every rule, never attributes of a node, and no
rule reads raw arrays of tensors or branches on data (``bool(t)``, ``.item()``);
``tests/test_primitives.py`` enforces both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numbagrad._core.extension import RECORDING
from numbagrad._core.grad_mode import is_grad_enabled_fast
from numbagrad._core.graph import OpNode, SavedOutput, _seq, after_record, edge_of
from numbagrad._core.interpreter import NO_PARAMS, bind
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend, backend_of
from numbagrad.ops._rules import LAYOUT_RULES, bilinear_jvp, linear_jvp

__all__ = ["NO_PARAMS", "PRIMITIVES", "Primitive", "bind", "wrap_output"]

# the host backend (NumPy arrays): the fast path of the one backend lookup per op
CPU = backend()

PRIMITIVES: dict = {}  # name -> Primitive subclass, filled in as they are defined


def _backend_of(data):
    # the one backend lookup per op application: NumPy arrays are the CPU's
    return CPU if type(data) is np.ndarray else backend_of(data)


class Primitive:
    """Base of every primitive's declaration (NOTE [Primitive declaration]); never
    instantiated: the class is the declaration."""

    # (the slots are typed for mypy: a rule slot holds a function, a classmethod or a
    # staticmethod, or None where the op has no such rule)
    n_out: int = 1
    differentiable: bool = True
    view: bool = False  # output 0 is a view of operand 0 (shares its storage)
    saves_inputs: Any = ()  # a tuple of operand positions, or a function of the arity
    saves_output: bool = False
    saved_for: Any = None
    data_operands: Any = None
    linearity: str | None = None
    grad_fn: Any = None  # set from the class name unless given
    vjp: Any = None
    fused_vjp: Any = None
    jvp: Any = None
    batch: Any = None
    scalar: Any = None
    layout_batch: bool = False  # ``batch`` is a stock elementwise rule (set below; ``_rules.py``)
    # two operands promoted to a common dtype as PyTorch's type promotion: under ``vmap``
    # they are promoted by their per-example ranks (``_rules.promote_examples``)
    promotes = False
    # for a view primitive, how a value written into the view reaches its base:
    # ``view_put(base, value, *other operands, **params)`` (the view's params) is the base's
    # new value, in numbagrad ops (``Index``: an ``IndexPut``). In-place ops on views under
    # transforms go through it (``Tracer._assign``); None: such a write raises
    view_put: Any = None
    # a whole-application override per transform (``process_jvp(interp, args, params)``
    # and so on) for ops that are not one rule per slot: custom Functions
    process_jvp: Any = None
    process_batch: Any = None
    process_grad: Any = None

    def __init_subclass__(cls, register=True, **kwargs):
        super().__init_subclass__(**kwargs)
        if "grad_fn" not in cls.__dict__:
            cls.grad_fn = cls.__name__ + "Backward0"

        if cls.linearity is not None and "jvp" not in cls.__dict__:
            cls.jvp = classmethod(linear_jvp if cls.linearity == "linear" else bilinear_jvp)
        cls.layout_batch = cls.n_out == 1 and getattr(cls.batch, "__func__", None) in LAYOUT_RULES
        if register:
            _guard_complex(cls)
            other = PRIMITIVES.get(cls.__name__)
            if other is not None and other is not cls:
                raise TypeError(
                    f"two primitives are named {cls.__name__!r}: "
                    f"{other.__module__} and {cls.__module__}"
                )
            PRIMITIVES[cls.__name__] = cls

    def __new__(cls, *args, **kwargs):
        raise TypeError(
            f"{cls.__name__} is a primitive declaration; apply it with bind(prim, args, params)"
        )

    @classmethod
    def node_name(cls, params) -> str:
        """The ``grad_fn`` name of an application with ``params``."""
        return cls.grad_fn

    @classmethod
    def rule(cls, slot: str):
        """The rule in ``slot`` (``"vjp"``, ``"jvp"``, ``"batch"``); NotImplementedError
        naming the op when it has none."""
        r = getattr(cls, slot, None)
        if r is None:
            what = {
                "jvp": "forward-mode AD (jvp)",
                "batch": "vmap (a batching rule)",
                "vjp": "reverse-mode AD (vjp)",
            }.get(slot, slot)
            raise NotImplementedError(f"{cls.__name__}: {what} is not implemented for this op")
        return r

    @staticmethod
    def impl(be, *arrays, **params):
        raise NotImplementedError

    # -- eager evaluation (the EVAL interpreter) ------------------------------------------
    @classmethod
    def _eval(cls, args, params):
        if len(args) == 2:
            a, b = args
            ta = isinstance(a, Tensor)
            tb = isinstance(b, Tensor)
            da = a._data if ta else a
            db = b._data if tb else b
            d0 = da if ta else db
            be = CPU if type(d0) is np.ndarray else _backend_of(d0)
            out = cls.impl(be, da, db, **params) if params else cls.impl(be, da, db)
            rec = (ta and a._requires_grad) or (tb and b._requires_grad)
        elif len(args) == 1:
            a = args[0]
            d = a._data
            be = CPU if type(d) is np.ndarray else _backend_of(d)
            out = cls.impl(be, d, **params) if params else cls.impl(be, d)
            rec = a._requires_grad
        else:
            arrays = [a._data if isinstance(a, Tensor) else a for a in args]
            be = CPU
            for d in arrays:
                if type(d) is not np.ndarray and not isinstance(d, (int, float, bool)):
                    be = _backend_of(d)
                    break
            out = cls.impl(be, *arrays, **params)
            rec = False
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    rec = True
                    break
        if cls.n_out == 1:
            if type(out) is np.ndarray and not cls.view:
                # Tensor._make inline: the result of every op (keep them in step;
                # test_tensor checks it)
                res = _new_tensor(Tensor)
                res._data = out
                res._storage = [out, 0]
                res._requires_grad = False
                res._grad_fn = None
                res._view_of = None
            else:
                res = wrap_output(out, args[0] if cls.view else None)
            if rec and cls.differentiable and is_grad_enabled_fast():
                node = cls._record(args, params, (res,), be)
                if RECORDING.active:  # NOTE [Recording options]
                    after_record(node)
            return res
        outs = tuple(wrap_output(o, None) for o in out)
        if rec and cls.differentiable and is_grad_enabled_fast():
            node = cls._record(args, params, outs, be)
            if RECORDING.active:
                after_record(node)
        return outs

    @classmethod
    def _record(cls, args, params, outs, be=CPU):
        """Make the graph node of one application (see NOTE [Graph layout])."""
        node = object.__new__(OpNode)
        od = outs[0]._data
        oshape, odtype = od.shape, od.dtype
        if len(args) == 1:  # unary: the input requires grad, or we would not be here
            a = args[0]
            d = a._data
            shape = d.shape
            fn = a._grad_fn
            edges = [(fn, a._output_nr) if fn is not None and a._view_of is None else edge_of(a)]
            meta = [None if shape == oshape and d.dtype is odtype else (shape, d.dtype)]
        else:
            edges = []
            meta = []
            for a in args:
                if isinstance(a, Tensor):
                    d = a._data
                    shape = d.shape
                    meta.append(None if shape == oshape and d.dtype is odtype else (shape, d.dtype))
                    if a._requires_grad:
                        fn = a._grad_fn
                        if fn is None or a._view_of is not None:
                            edges.append(edge_of(a))
                        else:
                            edges.append((fn, a._output_nr))
                    else:
                        edges.append(None)
                else:
                    meta.append(None)
                    edges.append(None)
            data = cls.data_operands
            if data is not None:  # data operands never get a gradient
                for i in data if type(data) is tuple else data(len(args)):
                    edges[i] = None
        node.prim = cls
        node.params = params
        node.be = be
        node._next = edges
        node._in_meta = meta
        node._out_shape = oshape
        node._out_dtype = odtype
        node._seq = next(_seq)
        if cls.n_out == 1:
            o = outs[0]
            if o._data.dtype.kind in "fc":
                o._requires_grad = True
                o._grad_fn = node
        else:
            node._n_out = cls.n_out
            i = 0
            for o in outs:
                if o._data.dtype.kind in "fc":
                    o._requires_grad = True
                    o._grad_fn = node
                    o._output_nr = i
                i += 1
        # after the outputs got their history: a saved output remembers requires_grad
        saves = cls.saves_inputs
        if saves or cls.saves_output:
            if type(saves) is not tuple:
                saves = saves(len(args))
            saved = []
            needed_by = cls.saved_for
            for k, i in enumerate(saves):
                a = args[i]
                if needed_by is not None and all(edges[j] is None for j in needed_by[k]):
                    a = None  # no gradient that needs it will be computed
                saved.append((a, a._storage[1]) if isinstance(a, Tensor) else a)
            if cls.saves_output:
                saved.append(SavedOutput(outs[0]))
            node._saved = saved
        else:
            node._saved = ()
        return node


_new_tensor = object.__new__

# NOTE [Complex support]
# A primitive runs on complex operands only when its rules are right for them (the VJP
# conjugates its local derivative, NOTE [Complex autograd] in ``ops/complex.py``): those
# named here, or declaring ``complex_ok = True``. Every other primitive's ``impl`` is
# wrapped at definition to raise PyTorch's kind of error for a complex operand, so that a
# real-only kernel (an ``@njit`` loop typed for floats, NumPy's lexicographic ``maximum``)
# never gives a silent wrong answer.
COMPLEX_OK = frozenset(
    (
        "Abs Acos Acosh Add All Any AsStrided AsStridedPut Asin Asinh Atan Atanh Cat CheckIndex "
        "Clone Cos Cosh Cumprod Cumsum Diagonal DiagonalBackward Div Einsum Eq Exp Exp2 Expand "
        "Expm1 Fill Flip Gather Index IndexBackward IndexPut IsFinite IsInf IsNan Log Log10 "
        "Log1p Log2 Matmul Mul Mv NanToNum Ne Neg Outer Permute Pow Prod Reciprocal Reshape "
        "Roll Rsqrt ScaledMul ScatterAdd Sigmoid SigmoidBackward Sin Sinh Sqrt Square Sub Sum "
        "SumTo Tan Tanh ToCopy Tril Triu Where Zeros _FunctionApply"
    ).split()
)
_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _guard_complex(cls):
    """Wrap ``cls.impl`` to refuse complex operands unless ``cls`` supports them."""
    if cls.__name__ in COMPLEX_OK or getattr(cls, "complex_ok", False):
        return
    desc = None
    for k in cls.__mro__:
        if "impl" in k.__dict__:
            desc = k.__dict__["impl"]
            break
    raw_desc = getattr(getattr(desc, "__func__", None), "_raw_impl", desc)
    raw = raw_desc.__get__(None, cls)
    name = cls.__name__

    def impl(be, *arrays, **params):
        for a in arrays:
            dt = getattr(a, "dtype", None)
            if dt is not None and dt.kind == "c":
                raise NotImplementedError(
                    f'"{name}" not implemented for '
                    f"'{_COMPLEX_NAMES.get(dt.name, dt.name)}': numbagrad's {name} does not "
                    "support complex tensors (as PyTorch's, or not yet)"
                )
            if type(a) is complex:
                raise NotImplementedError(f'"{name}" not implemented for a complex scalar operand')
        return raw(be, *arrays, **params)

    impl._raw_impl = raw_desc
    impl.__name__ = "impl"
    impl.__doc__ = getattr(raw, "__doc__", None)
    cls.impl = staticmethod(impl)


def wrap_output(out, view_of):
    """Wrap a forward result in a Tensor; views of operand 0 share its storage."""
    if (
        type(out) is not np.ndarray
        and not getattr(out, "_numbagrad_device", False)
        and not getattr(out, "_numbagrad_meta", False)
    ):
        out = np.asarray(out)  # (a CUDA or meta array stays itself: NOTE [CUDA tensors])
    if view_of is not None:
        src = view_of._data
        root = src.base if src.base is not None else src
        if out.base is root or out.base is src:
            t = Tensor._make(out, view_of._storage)
            t._view_of = view_of if view_of._view_of is None else view_of._view_of
            t._hist_version = view_of._storage[1]
            return t
    return Tensor._make(out)
