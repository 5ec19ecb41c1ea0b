"""Custom differentiable functions: ``Function``, its ``ctx``, ``once_differentiable`` and
the legacy ``NestedIOFunction``.

NOTE [Custom Function application]
``Function.apply`` is one op (``_FunctionApply``) bound through the current interpreter,
so the transforms can give it their own rules. Under the eager interpreter it:

1. makes the ctx, which is also the graph node (``<Name>Backward``, as in PyTorch), and
   fixes ``ctx.needs_input_grad`` from the inputs as they are now;
2. runs ``forward`` with grad mode off (``forward(ctx, ...)``, or ``forward(...)`` then
   ``setup_context(ctx, inputs, output)``);
3. wires the outputs: an input returned unchanged comes back as a new tensor sharing its
   storage; a dirty (``mark_dirty``) input comes back as the same object with its history
   replaced (a view's base is re-based as for any in-place op, NOTE [In-place ops and
   views]); non-differentiable and integer outputs never require grad; outputs that are
   not tensors (a NumPy array, a number, any object) pass through as the same object, as
   in PyTorch: ``setup_context`` sees them in ``output``, ``backward`` gets None for them
   and ``jvp``'s tangent for them is ignored;
4. turns ``save_for_backward``'s tensors into saved tensors with their version, outputs
   saved without a reference cycle (NOTE [Graph layout]).

Instantiating a Function emits PyTorch 2.x's ``DeprecationWarning``; numbagrad never does
it itself (ctx objects are ``<Name>Backward`` nodes, not Function instances). Users of the
legacy ``NestedIOFunction`` instantiate it by design, and get the warning too, as in
PyTorch (NOTE [NestedIOFunction]).

On backward the node materialises missing gradients as zeros (``set_materialize_grads``),
calls the user's ``backward``/``vjp`` and checks the count of what it returned; the engine
checks shapes and dtypes and names this Function in its errors. ``mark_dirty`` bumps the
version counter of each marked tensor, as PyTorch does (the forward may have written it
through ``x.numpy()``, which no counter sees).

Beyond PyTorch: a floating-point tensor stored directly on ctx (``ctx.t = t``), not an
input and not requiring grad (an intermediate computed in forward, whose dependence on the
inputs is not tracked), reads under ``create_graph=True`` as a tensor whose ``grad_fn``
raises when a gradient reaches it (``_untracked``): PyTorch would silently miss that
dependence in the higher-order gradient. Anything that is not differentiated through it
runs as in PyTorch, and a gradient whose only history is such tensors comes back with no
graph, as PyTorch's does. An input stored on ctx keeps its history (it is the caller's
tensor), so ``ctx.x = x`` is differentiable, as in PyTorch.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings

import numpy as np

from numbagrad._core.grad_mode import _GRAD_ENABLED, is_grad_enabled, no_grad
from numbagrad._core.graph import (
    _FREED_MSG,
    AccumulateGrad,
    Node,
    SavedOutput,
    after_record,
    edge_of,
    next_seq,
    save_input,
    saved_value,
)
from numbagrad._core.interpreter import EVAL, bind, current_interpreter
from numbagrad._tensor import Tensor
from numbagrad._transforms.pytree import tree_flatten, tree_map, tree_unflatten
from numbagrad.ops._op import Primitive
from numbagrad.ops.inplace import AsStridedPut, _geometry

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "InplaceFunction",
    "NestedIOFunction",
    "apply_eager",
    "once_differentiable",
]


class FunctionCtx:
    """The ``ctx`` passed to ``forward``/``setup_context``/``backward`` of a Function.

    It carries tensors saved for backward (``save_for_backward``/``saved_tensors``), the
    ``needs_input_grad`` flags, marks for in-place and non-differentiable outputs, and any
    Python attribute you set on it (``ctx.dim = dim``).
    """

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for ``backward``; read them back with ``saved_tensors``.

        Call it at most once, in ``forward`` or ``setup_context``. Inputs, outputs and
        intermediates may be saved; a saved tensor modified in place before backward makes
        ``saved_tensors`` raise.

        Examples
        --------
        >>> import numbagrad
        >>> class Square(numbagrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> x = numbagrad.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).sum().backward()
        >>> x.grad
        tensor([6.])
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save tensors (or None), but "
                    f"argument {i} is a {type(t).__name__}; store other values as "
                    "ctx attributes"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors (or None) for ``jvp``; they are read back with ``saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_forward expects all arguments to be tensors or "
                    f"None, but argument {i} is a {type(t).__name__}"
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors that ``forward`` modified in place; return them as outputs.

        As in PyTorch, each marked tensor's version counter is bumped when ``forward``
        returns, so a tensor saved earlier from the same storage (``b = a * a`` before the
        Function wrote ``a``) refuses to be used by backward instead of giving a wrong
        gradient, even when ``forward`` wrote through ``x.numpy()``.

        Examples
        --------
        >>> import numbagrad
        >>> class MulTwo_(numbagrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         x.mul_(2)
        ...         ctx.mark_dirty(x)
        ...         return x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * 2
        >>> a = numbagrad.ones(2, requires_grad=True)
        >>> b = a.clone()
        >>> MulTwo_.apply(b) is b
        True
        """
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs that do not require grad; backward receives zeros (or None) for
        them."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """Whether missing output gradients reach ``backward`` as zeros (default True) or
        as None."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, checked against in-place changes (in
        ``jvp``, those given to ``save_for_forward``, as ``TransformCtx`` gives them)."""
        d = self.__dict__
        if d.get("_in_jvp") and "saved_for_forward" in d:
            return tuple(d["saved_for_forward"])
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED_MSG)
        if saved is _IN_FORWARD:
            return tuple(getattr(self, "to_save", ()))
        return tuple([saved_value(self, i) for i in range(len(saved))])

    @property
    def saved_variables(self):
        return self.saved_tensors


_IN_FORWARD = object()  # ``_saved`` while forward runs: saved_tensors gives what was saved
_CTX_INTERNAL = frozenset(
    (
        "to_save",
        "saved_for_forward",
        "dirty_tensors",
        "non_differentiable",
        "materialize_grads",
        "needs_input_grad",
        "_ctx_tensors",
        "_double",
        "_out_meta",
        "_proxies",
        "_tensor_hooks",
    )
)


class _CustomNode(FunctionCtx, Node):
    """A ctx that is also the graph node of one Function application."""

    def __getattr__(self, name):
        # only reached for attributes not in __dict__: tensors moved to _ctx_tensors
        d = self.__dict__
        ct = d.get("_ctx_tensors")
        if ct is not None and name in ct:
            t = ct[name]
            if d.get("_double") and not t._requires_grad:
                return _untracked(self, name, t)
            return t
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _call_backward(self, grads):
        raise NotImplementedError

    def _backward(self, grads, create_graph):
        if self.__dict__.get("materialize_grads", True):
            grads = [
                g if g is not None or m is None else Tensor._make(np.zeros(m[0], m[1]))
                for g, m in zip(grads, self._out_meta)
            ]
        d = self.__dict__
        proxies = None
        if create_graph:
            seq0 = next_seq()  # the nodes this backward records come after it
            d["_double"] = True
            try:
                res = self._call_backward(grads)
            finally:
                d["_double"] = False
                proxies = d.pop("_proxies", None)
        else:
            res = self._call_backward(grads)
        if type(res) is not tuple:
            res = (res,) if not isinstance(res, list) else tuple(res)
        if proxies:
            res = tuple([_drop_untracked_history(r, proxies, seq0) for r in res])
        n = len(self._next)
        if len(res) > n:
            if any(r is not None for r in res[n:]):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of "
                    f"gradients (expected {n}, got {len(res)})"
                )
            res = res[:n]
        elif len(res) < n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of "
                f"gradients (expected {n}, got {len(res)})"
            )
        out = []
        for i, (r, edge, meta) in enumerate(zip(res, self._next, self._in_meta)):
            if r is not None and not isinstance(r, Tensor):
                raise TypeError(
                    f"function {self.name()} returned a {type(r).__name__} as the "
                    f"gradient at index {i}; gradients must be Tensors or None"
                )
            if r is not None and meta is None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than "
                    f"None at position {i}, but the corresponding forward input "
                    "was not a Tensor"
                )
            out.append(r if edge is not None else None)
        return out


_GONE = object()  # (a ctx attribute the user's code deleted)


def with_ctx_tensors(ctx, kept, call, args):
    """``call(ctx, *args)`` (the user's backward or jvp) with the tensors kept as ``ctx.x =
    t`` (moved aside after forward into ``kept``) back as plain attributes, so that ``del
    ctx.x`` and rebinding work as in PyTorch (its forward-AD tutorial frees ``ctx.result``
    in jvp); afterwards what is left is moved aside again. (A ``__delattr__`` on the node
    class would slow every attribute assignment of every Function call: CPython then
    routes sets through a Python-level slot.)"""
    d = ctx.__dict__
    d.update(kept)
    names = list(kept)
    kept.clear()  # (while the call runs, ``__getattr__`` must not find them there)
    try:
        return call(ctx, *args)
    finally:
        for k in names:
            v = d.pop(k, _GONE)
            if v is not _GONE:  # (else deleted by the call)
                kept[k] = v


class BackwardCFunction(_CustomNode):
    """Base of the per-Function node classes (``<Name>Backward``)."""

    _forward_cls = None

    def name(self) -> str:
        return type(self).__name__

    def _call_backward(self, grads):
        d = self.__dict__
        kept = d.get("_ctx_tensors")
        if kept is None or d.get("_double"):  # (double backward: read through the guard)
            return self._forward_cls._backward_impl(self, *grads)
        return with_ctx_tensors(self, kept, self._forward_cls._backward_impl, grads)

    def apply(self, *grads):
        """Call the Function's backward with this ctx (PyTorch's ``grad_fn.apply``)."""
        return self._forward_cls._backward_impl(self, *grads)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stacklevel():
    """The ``stacklevel`` that makes a warning raised by this function's caller point at
    the first frame outside numbagrad (``InplaceFunction.__init__`` calls
    ``Function.__init__``, for instance: the warning names the user's line)."""
    level = 2
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


class FunctionMeta(type):
    """Makes the ``<Name>Backward`` node class of each Function subclass."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": cls.__module__},
        )
        super().__init__(name, bases, attrs)
        # resolved once per class (inspect.getattr_static is slow for a per-call check)
        cls._static_forward = isinstance(inspect.getattr_static(cls, "forward"), staticmethod)
        base = globals().get("Function")
        if base is None:  # Function itself
            cls._separate_style = False
            return
        if cls._nested_io:
            # NestedIOFunction: instance methods, never applied through ``apply``; a
            # ``vjp`` of its own clashes with the shared ``backward`` (as in PyTorch)
            cls._separate_style = cls._uses_vjp = False
            cls._both_backward_and_vjp = inspect.getattr_static(
                cls, "vjp"
            ) is not inspect.getattr_static(cls, "_vjp_stub")
            return
        cls._separate_style = (
            inspect.getattr_static(cls, "setup_context") is not base.__dict__["setup_context"]
        )
        user_bw = inspect.getattr_static(cls, "backward")
        user_vjp = inspect.getattr_static(cls, "vjp")
        base_bw = base.__dict__["backward"]
        cls._both_backward_and_vjp = (
            user_bw is not base_bw and user_vjp is not base_bw and user_vjp is not user_bw
        )
        cls._uses_vjp = user_bw is base_bw


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class for custom differentiable operations (``torch.autograd.Function``).

    Subclass it with static methods and call ``MyFunction.apply(*args)``:

    - ``forward(ctx, *args, **kwargs)``, or ``forward(*args, **kwargs)`` together with
      ``setup_context(ctx, inputs, output)``;
    - ``backward(ctx, *grad_outputs)`` (or ``vjp``): one gradient per forward input, None
      for non-tensor or non-differentiable inputs;
    - ``jvp`` and ``vmap`` (with ``generate_vmap_rule``) for the ``numbagrad.func``
      transforms.

    Do not instantiate it: as in PyTorch 2.x, ``MyFunction()`` emits a
    ``DeprecationWarning`` (pointing at the line that instantiates it).

    Examples
    --------
    >>> import numbagrad
    >>> class Exp(numbagrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (y,) = ctx.saved_tensors
    ...         return g * y
    >>> x = numbagrad.tensor([0.0, 1.0], requires_grad=True)
    >>> Exp.apply(x).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """

    generate_vmap_rule = False
    _nested_io = False  # True on NestedIOFunction and its subclasses

    def __init__(self, *args, **kwargs):
        # PyTorch 2.x's deprecation of instances, word for word (numbagrad itself never
        # instantiates a Function: its ctx objects are ``<Name>Backward`` nodes)
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. "
            "Instantiating an autograd function will raise an "
            "error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=_user_stacklevel(),
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"Legacy autograd function with non-static forward method is not supported: "
            f"calling an instance {type(self).__name__}()(...) does not work. Define forward "
            f"and backward as @staticmethod and call {type(self).__name__}.apply(...) instead."
        )

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (see the class docstring for the two styles)."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save what backward needs; override together with a ctx-less ``forward``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradients of the inputs given gradients of the outputs (or define ``vjp``)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for "
            "your custom autograd.Function to use it with backward mode "
            "AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Tangents of the outputs given tangents of the inputs (forward-mode AD)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom "
            "autograd.Function to use it with forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule under ``numbagrad.func.vmap``."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either "
            "override the vmap staticmethod or set generate_vmap_rule=True."
        )

    @classmethod
    def _backward_impl(cls, ctx, *grads):
        # ``backward`` and ``vjp`` are aliases: use whichever the subclass defined
        if cls._both_backward_and_vjp:
            raise RuntimeError(
                f"Implementing both 'backward' and 'vjp' for a custom Function "
                f"is not allowed. You should only implement one of them "
                f"({cls.__name__})."
            )
        return (cls.vjp if cls._uses_vjp else cls.backward)(ctx, *grads)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function on ``args`` and record it for backward.

        Tensors may appear at any position among other values (numbers, None, strings,
        tuples); only tensor arguments are differentiated.
        """
        if not cls._static_forward:
            raise RuntimeError(
                f"{cls.__name__}.forward must be a @staticmethod: numbagrad supports only "
                f"new-style autograd Functions, defined with static forward/backward and "
                f"called as {cls.__name__}.apply(...)."
            )
        if kwargs or (cls._separate_style and len(args) < cls._n_forward_args()):
            args, kwargs = cls._bind_arguments(args, kwargs)
        return bind(_FunctionApply, args, {"fn": cls, "kwargs": kwargs})

    @classmethod
    def _n_forward_args(cls):
        """How many arguments ``forward`` takes by position (its ``ctx`` left out)."""
        n = cls.__dict__.get("_forward_positional")
        if n is None:
            kinds = [p.kind for p in inspect.signature(cls.forward).parameters.values()]
            n = sum(k in _BY_POSITION for k in kinds)
            n -= 0 if cls._separate_style else 1  # (ctx)
            cls._forward_positional = n
        return n

    @classmethod
    def _bind_arguments(cls, args, kwargs):
        """``apply``'s arguments as PyTorch passes them on: those given by keyword move to
        their positions (so ``ctx.needs_input_grad`` and the count of gradients cover
        them), and with ``setup_context`` the defaults are filled in too (its ``inputs``
        are the whole argument list). Keyword-only ones stay keywords."""
        sig = inspect.signature(cls.forward)
        if cls._separate_style:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            return bound.args, bound.kwargs
        bound = sig.bind(None, *args, **kwargs)  # (ctx)
        return bound.args[1:], bound.kwargs


_BY_POSITION = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _function_name(ctx):
    name = type(ctx).__name__
    return name[: -len("Backward")] if name.endswith("Backward") else name


def _check_marks(ctx, args, outs, dirty, nondiff, grad_on):
    """Validate ``mark_dirty`` and ``mark_non_differentiable`` against inputs/outputs."""
    for i, t in enumerate(dirty):
        if not isinstance(t, Tensor) or not any(t is a for a in args):
            raise RuntimeError(f"mark_dirty only accepts input tensors, but argument {i} isn't one")
        if not any(o is t for o in outs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were "
                "not returned as output. The inputs that are modified inplace "
                "must all be outputs of the Function."
            )
        if grad_on and t._requires_grad and t._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
        base = t._view_of
        if grad_on and base is not None and base._requires_grad and base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in "
                "an in-place operation."
            )
    for t in nondiff:
        if not isinstance(t, Tensor) or not any(t is o for o in outs):
            raise ValueError("mark_non_differentiable only accepts output tensors")


def _run_custom(ctx, args, forward_call, setup=None):
    """Steps 1-4 of NOTE [Custom Function application]; returns the outputs as given."""
    grad_on = _GRAD_ENABLED.get()
    needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
    ctx.needs_input_grad = needs
    executable = grad_on and True in needs
    ctx._saved = _IN_FORWARD
    token = _GRAD_ENABLED.set(False)
    try:
        raw = forward_call()
        if setup is not None:
            setup(raw)
    finally:
        _GRAD_ENABLED.reset(token)
    is_tuple = isinstance(raw, tuple)
    outs = list(raw) if is_tuple else [raw]
    d = ctx.__dict__
    dirty = d.get("dirty_tensors", ())
    nondiff_list = d.get("non_differentiable", ())
    if dirty or nondiff_list:
        _check_marks(ctx, args, outs, dirty, nondiff_list, grad_on)
        for t in dirty:
            # as PyTorch's mark_dirty: the forward wrote the storage (maybe through
            # ``x.numpy()``, which no version counter sees), so tensors saved earlier from
            # it must refuse to unpack
            t._storage[1] += 1
    nondiff = {id(t) for t in nondiff_list}
    dirty_ids = {id(t) for t in dirty}

    # edges and input metadata (one per positional argument)
    edges, meta = [], []
    for a in args:
        if isinstance(a, Tensor):
            meta.append((a._data.shape, a._data.dtype))
            edges.append(edge_of(a) if executable and a._requires_grad else None)
        else:
            meta.append(None)
            edges.append(None)
    ctx._init_node(edges, meta, len(outs))

    out_meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            out_meta.append(None)
            continue
        if id(o) not in dirty_ids and any(o is a for a in args):
            # an input returned unchanged: a new tensor on the same storage (as PyTorch)
            alias = Tensor._make(o._data, o._storage)
            alias._view_of = o if o._view_of is None else o._view_of
            alias._hist_version = o._storage[1]
            o = outs[i] = alias
        out_meta.append((o._data.shape, o._data.dtype))
        differentiable = executable and o._data.dtype.kind in "fc" and id(o) not in nondiff
        if id(o) in dirty_ids:
            if differentiable:
                o._grad_fn = ctx
                o._output_nr = i
                o._requires_grad = True
                base = o._view_of
                if base is not None:
                    geom = {"geom": _geometry(o, base)}
                    after_record(AsStridedPut._record((base, o), geom, (base,)))
                o._hist_version = o._storage[1]
            elif id(o) in nondiff:
                o._grad_fn = None
                o._requires_grad = False
            continue
        if differentiable:
            o._grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
            if o._view_of is not None:  # a view: its history cannot be re-derived later
                o.__dict__["_custom_view"] = _function_name(ctx)
    ctx._out_meta = out_meta

    # saved tensors: outputs without a reference back to themselves (NOTE [Graph layout])
    saved = []
    for t in d.pop("to_save", ()):
        if t is None:
            saved.append(None)
        elif t._grad_fn is ctx and t._output_nr < len(outs) and outs[t._output_nr] is t:
            saved.append(SavedOutput(t, t._output_nr))
        else:
            saved.append(save_input(t))
    ctx._saved = saved
    # float tensors stored directly on ctx: guarded against double backward
    ct = None
    for k, v in d.items():
        # (an input keeps its own history: ``ctx.x = x`` is differentiable, as in PyTorch)
        if (
            isinstance(v, Tensor)
            and k not in _CTX_INTERNAL
            and v._data.dtype.kind in "fc"
            and not any(v is a for a in args)
        ):
            if ct is None:
                ct = {}
            ct[k] = v
    if ct:
        for k in ct:
            del d[k]
        d["_ctx_tensors"] = ct
    return tuple(outs) if is_tuple else outs[0]


class _FunctionApply(Primitive):
    """The op that ``Function.apply`` binds (one rule per interpreter: eager here; the
    transforms' whole-application rules come from ``autograd._function_transforms``
    through ``register_transform_rules``, NOTE [Functions under transforms])."""

    @classmethod
    def _eval(cls, args, params):
        return apply_eager(params["fn"], args, params["kwargs"])[0]


def register_transform_rules(*, grad, jvp, batch):
    """Install the rules a custom Function runs under ``func.grad``, forward mode and
    ``vmap`` (``process_grad``/``process_jvp``/``process_batch``, NOTE [Primitive
    declaration]); called once, by ``autograd._function_transforms``, which needs this
    module and so cannot be imported by it."""
    _FunctionApply.process_grad = staticmethod(grad)
    _FunctionApply.process_jvp = staticmethod(jvp)
    _FunctionApply.process_batch = staticmethod(batch)


def apply_eager(fn, args, kwargs):
    """Apply Function ``fn`` eagerly (NOTE [Custom Function application]); returns the
    outputs and the ctx (which forward mode reads for ``jvp``)."""
    ctx = fn._backward_cls.__new__(fn._backward_cls)
    if fn._separate_style:
        # setup_context sees every argument, defaults filled in (as PyTorch binds them)
        inputs = _bind_inputs(fn, args, kwargs)
        return _run_custom(
            ctx,
            args,
            lambda: fn.forward(*args, **kwargs),
            setup=lambda out: fn.setup_context(ctx, inputs, out),
        ), ctx
    return _run_custom(ctx, args, lambda: fn.forward(ctx, *args, **kwargs)), ctx


def _bind_inputs(fn, args, kwargs):
    """``args`` and ``kwargs`` of ``fn.forward`` as one tuple with defaults applied."""
    sig = fn.__dict__.get("_forward_signature")
    if sig is None:
        sig = inspect.signature(fn.forward)
        has_defaults = any(
            p.default is not p.empty or p.kind in (p.VAR_KEYWORD,) for p in sig.parameters.values()
        )
        sig = sig if has_defaults else False
        type.__setattr__(fn, "_forward_signature", sig)
    if sig is False and not kwargs:
        return args
    bound = (sig or inspect.signature(fn.forward)).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (kept for compatibility with PyTorch)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# -- once_differentiable ------------------------------------------------------------------
class _DelayedError(Node):
    """Stands where a once-differentiable backward's result would need differentiating."""

    def __init__(self, msg, edges, meta):
        self._init_node(edges, meta, 1)
        self.msg = msg

    def name(self) -> str:
        return "DelayedError"

    def _backward(self, grads, create_graph):
        raise RuntimeError(self.msg)


def _untracked(ctx, name, t):
    """``ctx.<name>``, a float tensor stored directly on ctx (no history: computed in forward,
    under no_grad), read by a backward that is being differentiated.

    PyTorch hands it over as it is, so a gradient that depends on it is silently wrong when
    differentiated. Here it comes back as a tensor on the same storage whose ``grad_fn``
    raises when a gradient reaches it (``_DelayedError``, with edges to the Function's
    inputs, on which the missing dependence is). Whatever does not differentiate through it
    runs as in PyTorch; a gradient whose only history is such tensors is detached when the
    backward returns (``_drop_untracked_history``), so it has no graph, as in PyTorch.
    Under a transform's interpreter (``forward_ad`` over a backward) there is no graph to
    carry the error: reading it raises."""
    if current_interpreter() is not EVAL:
        raise RuntimeError(
            f"{ctx.name()}: the backward is being differentiated but reads ctx.{name}, a "
            "tensor stored directly on ctx. Its history is not tracked, so the higher-order "
            f"gradient would silently be wrong. Save it with ctx.save_for_backward(...) (and "
            "return it from forward if it is an intermediate result) and read it from "
            "ctx.saved_tensors."
        )
    edges = tuple(e for e in ctx._next if e is not None)
    if not edges:
        return t
    meta = tuple(m for e, m in zip(ctx._next, ctx._in_meta) if e is not None)
    msg = (
        f"{ctx.name()}: a gradient that depends on ctx.{name}, a tensor stored directly on "
        "ctx in forward, is being differentiated. Its history is not tracked, so the "
        "higher-order gradient would silently be wrong (PyTorch would miss this "
        "dependence). Save it with ctx.save_for_backward(...), and if it is an "
        "intermediate result, also return it as an output of forward (see PyTorch's "
        "'Double Backward with Custom Functions' tutorial)."
    )
    node = _DelayedError(msg, edges, meta)
    ctx.__dict__.setdefault("_proxies", set()).add(node)
    p = Tensor._make(t._data, t._storage)
    p._grad_fn = node
    p._requires_grad = True
    return p


def _drop_untracked_history(r, proxies, seq0):
    """``r`` detached when its history (the nodes recorded by this backward, after
    ``seq0``) leads to nothing but ``proxies``: it then has no real graph, as in PyTorch."""
    if not isinstance(r, Tensor) or not r._requires_grad or r._grad_fn is None:
        return r
    seen = set()
    stack = [r._grad_fn]
    while stack:
        node = stack.pop()
        if node in proxies:
            continue
        if node._seq < seq0 or type(node) is AccumulateGrad:
            return r  # reaches the real graph (or a leaf): keep it
        for e in node._next:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return Tensor._make(r._data, r._storage)


def once_differentiable(fn):
    """Decorate a ``backward`` that cannot itself be differentiated.

    It runs with grad mode off; if the gradients it returns are later differentiated
    (double backward), a clear RuntimeError is raised instead of a wrong answer.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.function import once_differentiable
    >>> class Cube(numbagrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x ** 2 * g
    >>> x = numbagrad.tensor(2.0, requires_grad=True)
    >>> Cube.apply(x).backward()
    >>> x.grad
    tensor(12.)
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        if getattr(ctx, "_under_transform", False):
            # a func.grad/vjp backward: differentiating it again is the double backward
            if ctx._being_differentiated():
                raise RuntimeError(
                    "trying to differentiate twice a function that was marked "
                    f"with @once_differentiable ({_function_name(ctx)})"
                )
            return fn(ctx, *args)
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            # (as PyTorch: with no incoming gradient that requires grad, the results are
            # plain; a double backward through them finds nothing to differentiate)
            return outputs
        # create_graph=True: make the results refuse to be differentiated
        edges = tuple(e for e in ctx._next if e is not None)
        if not edges:
            return outputs
        meta = tuple(m for e, m in zip(ctx._next, ctx._in_meta) if e is not None)
        msg = (
            "trying to differentiate twice a function that was marked with "
            f"@once_differentiable ({ctx.name()})"
        )

        def delayed(o):
            # nested lists/tuples: a NestedIOFunction's backward_extended may return them
            if isinstance(o, (list, tuple)):
                items = [delayed(x) for x in o]
                return items if isinstance(o, list) else tuple(items)
            if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
                t = Tensor._make(o._data, o._storage)
                t._grad_fn = _DelayedError(msg, edges, meta)
                t._requires_grad = True
                return t
            return o

        # nested lists/tuples: a NestedIOFunction's backward_extended may return them
        return tree_map(delayed, outputs)

    return wrapper


# -- NestedIOFunction (legacy) ----------------------------------------------------------------
# NOTE [NestedIOFunction]
# The instance is the ctx and the graph node of its one application. ``__call__`` flattens
# the nested inputs to their tensors and runs ``_run_custom`` with ``forward`` (which
# rebuilds the nesting for ``forward_extended`` and flattens its result); the node's
# backward calls ``backward`` (which rebuilds the outputs' nesting for the gradients given
# to ``backward_extended`` and flattens what it returns, one gradient per input tensor).
# The nesting is kept as a *skeleton*: the structure with each tensor replaced by
# ``_LEAF``, so the instance holds no reference to its outputs (no cycle through
# ``grad_fn``) and no tensor outside the version-checked saved tensors.
_LEAF = object()


def _nesting_error(obj):
    return ValueError(
        f"Auto nesting doesn't know how to process an input object of type "
        f"{type(obj).__name__}. Accepted types: Tensors, or lists/tuples of them"
    )


def _iter_tensors(obj, strict=False):
    """The tensors of a nested list/tuple/dict structure (``_transforms.pytree``), in
    order; other leaves are skipped (None always; anything else only when not ``strict``)."""
    leaves = tree_flatten(obj)[0]
    if strict:
        for x in leaves:
            if x is not None and not isinstance(x, Tensor):
                raise _nesting_error(x)
    return [x for x in leaves if isinstance(x, Tensor)]


def _skeleton(obj):
    """``obj`` with each tensor replaced by ``_LEAF`` (other leaves kept)."""
    leaves, spec = tree_flatten(obj)
    return tree_unflatten([_LEAF if isinstance(x, Tensor) else x for x in leaves], spec)


def _unflatten(flat, skeleton, others_none=False):
    """Rebuild ``skeleton``'s nesting, its ``_LEAF`` entries taken in order from ``flat``;
    its other leaves are kept, or None with ``others_none`` (gradients of non-tensors)."""
    leaves, spec = tree_flatten(skeleton)
    it = iter(flat)
    return tree_unflatten(
        [next(it) if x is _LEAF else (None if others_none else x) for x in leaves], spec
    )


# The two walkers below check ``backward_extended``'s result against the inputs' nesting
# (PyTorch's rules: a None may stand for a whole nested input, a list for a tuple); the
# flattening itself is ``_transforms.pytree``'s.
def _iter_none_tensors(obj):
    if obj is None or isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_none_tensors(o)
    else:
        raise TypeError(
            f"backward_extended must return tensors, None or nested lists/tuples "
            f"of them, got {type(obj).__name__}"
        )


class _MismatchError(Exception):
    pass


def _match_grads(result, skeleton):
    """One gradient per tensor of ``skeleton`` from ``result`` of the same nesting, where a
    None standing for a whole nested input gives None for each of its tensors."""
    if skeleton is _LEAF:
        if result is not None and not isinstance(result, Tensor):
            raise _MismatchError
        yield result
    elif isinstance(skeleton, (list, tuple, dict)):
        values = list(skeleton.values()) if isinstance(skeleton, dict) else skeleton
        if result is None:
            for s in values:
                yield from _match_grads(None, s)
            return
        if isinstance(skeleton, dict):
            if not isinstance(result, dict) or result.keys() != skeleton.keys():
                raise _MismatchError
            result = [result[k] for k in skeleton]
        elif not isinstance(result, (list, tuple)) or len(result) != len(values):
            raise _MismatchError
        for r, s in zip(result, values):
            yield from _match_grads(r, s)
    elif result is not None:  # a non-tensor input has no gradient
        raise _MismatchError


def _flat_grads(result, inputs):
    """``backward_extended``'s result as one gradient (or None) per input tensor."""
    if inputs is not None:
        # one input: its gradient may be returned bare, or in a 1-tuple
        if len(inputs) == 1 and not (isinstance(result, (list, tuple)) and len(result) == 1):
            result = (result,)
        try:
            return tuple(
                _match_grads(tuple(result) if isinstance(result, list) else result, inputs)
            )
        except _MismatchError:
            pass
    return tuple(_iter_none_tensors(result))  # PyTorch's flattening; the node checks counts


def _refuse_transforms(fn, flat):
    """NestedIOFunction runs eagerly only: refuse values a live transform owns."""
    for a in flat:
        if a._is_tracer and a._interp.alive:
            interp = a._interp
            name = type(fn).__name__
            if getattr(interp, "level", None) is not None:
                raise NotImplementedError(
                    f"{name} is a legacy NestedIOFunction, which does not support forward-mode "
                    f"AD: one of its inputs is a dual tensor of {interp.name}. Write it as a "
                    "numbagrad.autograd.Function with a jvp staticmethod to use it with "
                    "forward_ad."
                )
            raise RuntimeError(
                f"{name} is a legacy NestedIOFunction, which cannot be used under "
                f"{interp.name}: as in PyTorch, the numbagrad.func transforms need an "
                "autograd.Function with a staticmethod forward(*args), setup_context(ctx, "
                "inputs, output) and backward/jvp/vmap staticmethods."
            )


class NestedIOFunction(Function, _CustomNode):
    """Legacy custom function with nested inputs and outputs (kept for old code).

    This class is here only for backward compatibility reasons; use :class:`Function`
    for any new use case. It is a :class:`Function` subclass, but instance-based:
    subclass it, define ``forward_extended(self, *inputs)`` and
    ``backward_extended(self, *grad_outputs)`` as ordinary methods, and call an
    instance, ``MyFn()(x, (y, z))``. The instance is the ``ctx``: inside
    ``forward_extended`` use ``self.save_for_backward``, ``self.mark_dirty``,
    ``self.mark_non_differentiable``, ``self.set_materialize_grads`` and
    ``self.needs_input_grad``.

    Inputs and outputs may be nested lists, tuples (named tuples included) and dicts of
    tensors; other leaves (numbers, strings, None) pass through. ``forward_extended``
    receives the inputs with their nesting, ``backward_extended`` receives one gradient per
    output with the outputs' nesting and returns gradients with the inputs' nesting (None
    for an input, or a whole nested input, that needs none). ``save_for_backward``
    accepts nested structures and ``saved_tensors`` returns them with the same nesting.

    As in PyTorch 2.x, instantiating it emits a ``DeprecationWarning`` (the one every
    ``Function`` instance gets). An instance can be applied only once. It runs eagerly
    (``backward``, ``autograd.grad``, double backward when ``backward_extended`` is itself
    differentiable); forward-mode AD and the ``numbagrad.func`` transforms refuse it with
    an error, as PyTorch refuses Functions without ``jvp``/``setup_context``. PyTorch
    2.13's own ``NestedIOFunction`` fails when called (``AttributeError``); numbagrad's
    works as documented.

    Examples
    --------
    >>> import warnings
    >>> import numbagrad
    >>> from numbagrad.autograd.function import NestedIOFunction
    >>> class AddMul(NestedIOFunction):
    ...     def forward_extended(self, x, pair):
    ...         y, z = pair
    ...         self.save_for_backward(x, (y, z))
    ...         return x + y, x * z
    ...     def backward_extended(self, g_sum, g_prod):
    ...         x, (y, z) = self.saved_tensors
    ...         return g_sum + g_prod * z, (g_sum, g_prod * x)
    >>> x, y, z = (numbagrad.tensor([v], requires_grad=True) for v in (1.0, 2.0, 3.0))
    >>> with warnings.catch_warnings():  # instances are deprecated, as in PyTorch
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     fn = AddMul()
    >>> s, p = fn(x, (y, z))
    >>> (s + p).sum().backward()
    >>> x.grad, y.grad, z.grad
    (tensor([4.]), tensor([1.]), tensor([1.]))
    >>> isinstance(fn, numbagrad.autograd.Function)
    True
    """

    _nested_io = True

    def __new__(cls, *args, **kwargs):
        # node state set here, not in __init__: legacy subclasses often define an
        # __init__ that does not call super().__init__()
        self = super().__new__(cls)
        self._saved = _IN_FORWARD  # not run yet: saved_tensors gives what was saved
        self._next = ()
        self._in_meta = ()
        self.needs_input_grad = None  # set when called
        return self

    def name(self) -> str:
        """The class name: the instance itself is the graph node (as in PyTorch)."""
        return type(self).__name__

    @classmethod
    def apply(cls, *args, **kwargs):
        """Not available: a NestedIOFunction is applied by calling an instance.

        Raises
        ------
        RuntimeError
            Always (PyTorch 2.13 fails too, with an ``AttributeError``).
        """
        raise RuntimeError(
            f"{cls.__name__} is a legacy NestedIOFunction: apply it by calling "
            f"an instance, {cls.__name__}()(*inputs), not with "
            f"{cls.__name__}.apply(...)"
        )

    def __call__(self, *input):
        d = self.__dict__
        if d.get("_used"):
            raise RuntimeError(
                f"{type(self).__name__} instances can be applied only once; "
                "make a new instance for each call"
            )
        d["_used"] = True
        flat = tuple(_iter_tensors(input))
        _refuse_transforms(self, flat)
        d["_input_skeleton"] = d["_nested_input"] = _skeleton(input)
        try:
            out = _run_custom(self, flat, lambda: self.forward(*flat))
        finally:
            d.pop("_nested_input", None)
        return _unflatten(out if isinstance(out, tuple) else (out,), d["_nested_output"])

    _do_forward = __call__

    def forward(self, *args):
        """Shared forward utility: run ``forward_extended`` on the nested inputs.

        Called by ``__call__`` with the inputs' tensors, flat; it gives them back their
        nesting, calls ``forward_extended``, remembers its result's nesting and returns the
        result's tensors as a flat tuple. Called directly (outside a call), ``args`` go to
        ``forward_extended`` as they are.

        Returns
        -------
        tuple of Tensor
            The tensors of ``forward_extended``'s result, in order.
        """
        skeleton = self.__dict__.get("_nested_input")
        nested = args if skeleton is None else _unflatten(args, skeleton)
        result = self.forward_extended(*nested)
        self._nested_output = _skeleton(result)
        return tuple(_iter_tensors(result))

    def backward(self, *gradients):
        """Shared backward utility: run ``backward_extended`` on nested gradients.

        ``gradients`` holds one gradient per output tensor, flat; they are given the
        outputs' nesting (one argument per top-level output), passed to
        ``backward_extended``, and what it returns is flattened to one gradient per input
        tensor.

        Returns
        -------
        tuple of Tensor or None
            One gradient per input tensor.
        """
        d = self.__dict__
        skeleton = d.get("_nested_output", _LEAF)
        if "_nested_output" not in d:
            nested = gradients
        else:
            nested = _unflatten(gradients, skeleton, others_none=True)
            if not isinstance(skeleton, (list, tuple)):
                nested = (nested,)  # a single output: one gradient, not its elements
        result = self.backward_extended(*nested)
        return _flat_grads(result, d.get("_input_skeleton"))

    def _call_backward(self, grads):
        if type(self)._both_backward_and_vjp:
            raise RuntimeError(
                f"Implementing both 'backward' and 'vjp' for a custom Function "
                f"is not allowed. You should only implement one of them "
                f"({type(self).__name__}: a NestedIOFunction's backward calls "
                "backward_extended; define that, not vjp)."
            )
        return self.backward(*grads)

    def forward_extended(self, *input):
        """User-defined forward: override it.

        Receives the inputs as given to the call (nested lists/tuples/dicts of tensors
        kept), runs with grad mode off and returns tensors, possibly nested. ``self`` is
        the ctx.

        Raises
        ------
        NotImplementedError
            If the subclass does not define it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define "
            "forward_extended(self, *inputs) (the NestedIOFunction's "
            "forward)"
        )

    def backward_extended(self, *grad_output):
        """User-defined backward: override it.

        Receives one gradient per top-level output of ``forward_extended``, nested as the
        outputs are, and returns the inputs' gradients nested as the inputs are (None where
        an input needs none).

        Raises
        ------
        NotImplementedError
            If the subclass does not define it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define "
            "backward_extended(self, *grad_outputs) (the "
            "NestedIOFunction's backward)"
        )

    def save_for_backward(self, *args):
        """Save tensors for ``backward_extended``, nested in lists/tuples/dicts as you like.

        ``saved_tensors`` returns ``args`` with the same nesting; like
        :meth:`FunctionCtx.save_for_backward`, a saved tensor modified in place before
        backward makes it raise. None entries are kept.

        Raises
        ------
        ValueError
            For a leaf that is not a tensor or None (as PyTorch).

        Examples
        --------
        >>> import warnings
        >>> import numbagrad
        >>> from numbagrad.autograd.function import NestedIOFunction
        >>> class Dot(NestedIOFunction):
        ...     def forward_extended(self, pair):
        ...         a, b = pair
        ...         self.save_for_backward([a, b], None)
        ...         return (a * b).sum()
        ...     def backward_extended(self, g):
        ...         [a, b], nothing = self.saved_tensors
        ...         return (g * b, g * a)
        >>> a = numbagrad.tensor([1.0, 2.0], requires_grad=True)
        >>> b = numbagrad.tensor([3.0, 4.0], requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     out = Dot()((a, b))
        >>> out.backward()
        >>> a.grad, b.grad
        (tensor([3., 4.]), tensor([1., 2.]))
        """
        self.to_save = tuple(_iter_tensors(args, strict=True))
        self._to_save_nested = _skeleton(args)

    @property
    def saved_tensors(self):
        """What ``save_for_backward`` saved, with its nesting (version-checked)."""
        flat = FunctionCtx.saved_tensors.fget(self)
        return _unflatten(flat, self.__dict__.get("_to_save_nested", ()))

    def save_for_forward(self, *tensors):
        """Accepted as on any ctx (see :meth:`FunctionCtx.save_for_forward`), but never
        read: a NestedIOFunction has no forward-mode AD (no ``jvp``)."""
        FunctionCtx.save_for_forward(self, *tensors)

    def mark_dirty(self, *args, **kwargs):
        """Mark inputs (possibly nested) that ``forward_extended`` modified in place.

        They must be returned among the outputs; see :meth:`FunctionCtx.mark_dirty`.

        Examples
        --------
        >>> import warnings
        >>> import numbagrad
        >>> from numbagrad.autograd.function import NestedIOFunction
        >>> class Double_(NestedIOFunction):
        ...     def forward_extended(self, x):
        ...         x.mul_(2)
        ...         self.mark_dirty(x)
        ...         return x
        ...     def backward_extended(self, g):
        ...         return g * 2
        >>> leaf = numbagrad.ones(2, requires_grad=True)
        >>> x = leaf.clone()
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     out = Double_()(x)
        >>> out is x
        True
        >>> out.sum().backward()
        >>> leaf.grad
        tensor([2., 2.])
        """
        self.dirty_tensors = tuple(_iter_tensors((args, kwargs), strict=True))

    def mark_non_differentiable(self, *args, **kwargs):
        """Mark outputs (possibly nested) as not requiring grad.

        Their gradients reach ``backward_extended`` as zeros (or None with
        ``set_materialize_grads(False)``); see :meth:`FunctionCtx.mark_non_differentiable`.
        """
        self.non_differentiable = tuple(_iter_tensors((args, kwargs), strict=True))

    def set_materialize_grads(self, value: bool):
        """Whether missing output gradients reach ``backward_extended`` as zeros (True, the
        default) or as None. Call it in ``forward_extended``.

        Examples
        --------
        >>> import warnings
        >>> import numbagrad
        >>> from numbagrad.autograd.function import NestedIOFunction
        >>> class Twice(NestedIOFunction):
        ...     def forward_extended(self, x):
        ...         self.set_materialize_grads(False)
        ...         return x.clone(), x.clone()
        ...     def backward_extended(self, g1, g2):
        ...         return sum(g for g in (g1, g2) if g is not None)
        >>> a = numbagrad.tensor([1.0], requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     b, _ = Twice()(a)
        >>> b.backward()  # g2 reaches backward_extended as None
        >>> a.grad
        tensor([1.])
        """
        FunctionCtx.set_materialize_grads(self, value)

    @classmethod
    def setup_context(cls, ctx, inputs, output):
        """Not used by a NestedIOFunction: ``forward_extended`` sets up ``self`` itself.

        Raises
        ------
        NotImplementedError
            Always, naming the class (PyTorch raises NotImplementedError too).
        """
        raise NotImplementedError(
            f"{cls.__name__} is a NestedIOFunction, which has no "
            "setup_context: save what backward_extended needs with "
            "self.save_for_backward(...) inside forward_extended"
        )

    @classmethod
    def jvp(cls, ctx, *grad_inputs):
        """Not available: a NestedIOFunction has no forward-mode AD.

        Raises
        ------
        NotImplementedError
            Always, naming the class (PyTorch raises NotImplementedError too).
        """
        raise NotImplementedError(
            f"{cls.__name__} is a NestedIOFunction, which does not "
            "support forward-mode AD: to define a jvp, write it as a "
            "numbagrad.autograd.Function with forward, setup_context and "
            "jvp staticmethods"
        )

    @classmethod
    def vjp(cls, ctx, *grad_outputs):
        """Not the backward of a NestedIOFunction: as in PyTorch, ``vjp`` stays the base
        ``Function``'s unimplemented hook; the gradient is ``backward_extended``'s.

        Raises
        ------
        NotImplementedError
            Always, naming the class and what to define instead.
        """
        raise NotImplementedError(
            f"{cls.__name__} is a NestedIOFunction: it does not use "
            "vjp; define backward_extended(self, *grad_outputs), which "
            "its backward calls"
        )

    _vjp_stub = vjp

    @classmethod
    def vmap(cls, info, in_dims, *args):
        """Not available: a NestedIOFunction cannot run under ``numbagrad.func.vmap``.

        Raises
        ------
        NotImplementedError
            Always, naming the class (PyTorch raises NotImplementedError too).
        """
        raise NotImplementedError(
            f"{cls.__name__} is a NestedIOFunction, which does not "
            "support vmap: write it as a numbagrad.autograd.Function "
            "with a vmap staticmethod (or generate_vmap_rule = True) "
            "and setup_context"
        )
