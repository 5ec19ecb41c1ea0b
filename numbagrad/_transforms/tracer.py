"""The base of the values a transform owns, and running code under an interpreter.

NOTE [Tracers]
A value a transform owns is a ``Tracer``: a ``Tensor`` subclass tagged with the
interpreter *object* that owns it (``_interp``) and holding its parent-level value(s)
(a dual's primal and tangent, a batched value and its batch dimension, a reverse-mode
value and its tape node). Ops on tracers go through ``bind`` like any other, so every
op and composite works on them unchanged; the owning interpreter unwraps them.

A tracer has no array of its own. Its metadata (``shape``, ``dtype``, ``ndim``...) comes
from ``_shape``/``_np_dtype``; reading ``_data`` (what the eager interpreter and the
kernels read) raises ``EscapedTracerError`` naming the transform. A tracer reaches the
eager interpreter only after its transform has returned (it was stored outside the
function, or captured by a closure), so that error is exactly the "a transformed value
escaped" check, at no cost on the eager path. As in PyTorch, two kinds stay usable as
their values once their transform has closed: ``forward_ad`` duals (as their primals) and
``func.grad`` values whose value is a plain tensor (as constants, ``GradTracer._data``).

Values a transform does not own are constants to it (an interpreter checks
``a._interp is self``, identity, never level numbers), which is what keeps nested
derivatives from confusing their perturbations.
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core import extension
from numbagrad._core.interpreter import _CURRENT, EVAL, Interpreter, bind
from numbagrad._device import CPU as _CPU_DEVICE
from numbagrad._tensor import Size, Tensor, _wrap_dim, laid_out_as

__all__ = [
    "EscapedTracerError",
    "Tracer",
    "TransformInterpreter",
    "all_true",
    "as_np_dtype",
    "mark_born",
    "mark_view",
    "np_dtype_of",
    "shape_of",
    "under",
    "view_recipe",
]


class EscapedTracerError(RuntimeError):
    """A value owned by a transform was used after the transform returned."""


class TransformInterpreter(Interpreter):
    """An interpreter a transform pushes; ``name`` is the user-facing transform name
    (``"numbagrad.func.vmap"``) used in errors, ``alive`` turns False when it returns."""

    __slots__ = ("__weakref__", "alive", "name", "weak")
    level = None  # a forward_ad level's index (JvpInterpreter); None for numbagrad.func's

    def __init__(self, parent, name):
        super().__init__(parent)
        self.alive = True
        self.name = name
        # what the plain tensors made inside hold (``_born_in``): a weak reference, as a
        # strong one would close a cycle (tape -> node -> output -> interpreter -> tape)
        self.weak = weakref.ref(self)

    def to_parent(self, prim, args, params):
        """Hand an application this interpreter owns nothing of to its parent."""
        parent = self.parent
        if parent.sets_current:
            out = parent.process(prim, args, params)
        else:
            token = _CURRENT.set(parent)
            try:
                if parent is EVAL:
                    out = prim._eval(args, params)
                else:
                    out = parent.process(prim, args, params)
            finally:
                _CURRENT.reset(token)
        if type(out) is Tensor:  # made inside this transform (see ``mark_born``)
            d = out.__dict__
            d["_born_in"] = self.weak
            if prim.view:  # how, for an in-place write of traced values through it
                d["_view_recipe"] = view_recipe(prim, args, params)
        return out


@contextmanager
def under(interp):
    """Make ``interp`` the current interpreter for the block."""
    token = _CURRENT.set(interp)
    try:
        yield interp
    finally:
        _CURRENT.reset(token)


def as_np_dtype(dtype):
    return dtype if isinstance(dtype, np.dtype) else D.as_dtype(dtype).np


def shape_of(x):
    """The shape of a tensor, tracer or Python scalar (``()``), as a plain tuple."""
    if type(x) is Tensor:  # the common cases first: no Size built
        return x._data.shape
    if isinstance(x, Tracer):
        return x._shape
    if isinstance(x, Tensor):
        return tuple(x.shape)
    return ()


def np_dtype_of(x):
    """The NumPy dtype of a tensor or tracer (Python scalars: their PyTorch default)."""
    if type(x) is Tensor:
        return x._data.dtype
    if isinstance(x, Tracer):
        return x._np_dtype
    if isinstance(x, Tensor):
        return x._data.dtype
    return D.scalar_dtype(x).np


def mark_born(t):
    """Mark plain tensor ``t``, just made, as made inside the current transform (if any):
    it may then take that transform's values in place (NOTE [In-place writes under
    transforms] in ``ops/inplace.py``)."""
    interp = _CURRENT.get()
    if interp is not EVAL:
        weak = getattr(interp, "weak", None)  # (an Interpreter that is not a transform's:
        if weak is not None:  # nothing adopts values into tensors made under it)
            t.__dict__["_born_in"] = weak


def _active_func_transform():
    """The name of the innermost active ``numbagrad.func`` transform, or None (a
    ``forward_ad`` level is not one: it has a level index)."""
    interp = _CURRENT.get()
    while interp is not EVAL and interp is not None:
        if isinstance(interp, TransformInterpreter):
            if interp.alive and interp.level is None:
                return interp.name
        interp = interp.parent
    return None


def view_recipe(prim, args, params):
    """How a view was made of operand ``args[0]``: ``(base, prim, other operands, params)``,
    to re-derive it (``bind(prim, (base, *others), params)``) or write through it."""
    return (args[0], prim, tuple(args[1:]), params)


def mark_view(prim, out, args, params):
    """Remember that tracer ``out`` is a view of operand ``args[0]``: how it was made (to
    re-derive it when its base changes in place, and to write an in-place change of it
    through to the base), and, on the base, that it lives (a weak reference). A tracer's
    value is not shared memory: ``Tracer._assign`` does what sharing would."""
    if prim.view and isinstance(out, Tracer):
        d = out.__dict__
        d["_traced_view"] = True
        base = args[0]
        if isinstance(base, Tracer):
            d["_view_recipe"] = view_recipe(prim, args, params)
            views = base.__dict__.setdefault("_views", [])
            if len(views) >= 8:
                views[:] = [r for r in views if r() is not None]
            views.append(weakref.ref(out))
    return out


def _contiguous_strides(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(st))


def all_true(t) -> bool:
    """PyTorch's ``torch._is_all_true`` (the distributions' argument validation): whether
    every element of ``t`` is true, read through the transforms' tracers to the values
    under them, so under ``vmap`` it checks every example at once (a check that raises for
    the whole call, as PyTorch's batching rule of ``_is_all_true`` does, not control flow
    of one example, which ``bool()`` of a batched value refuses)."""
    while isinstance(t, Tracer):
        inner = getattr(t, "_val", None)
        if inner is None:
            inner = getattr(t, "_primal", None)
        if inner is None:  # (no value under it: the tracer's own error)
            return bool(t)
        t = inner
    return bool(F.all(t)) if isinstance(t, Tensor) else bool(t)


class Tracer(Tensor):
    """Base of the values a transform owns (NOTE [Tracers])."""

    __slots__ = ()  # the fields are ``Tensor``'s slots (NOTE [In-place writes under transforms])
    _FIELDS: tuple[str, ...] = (
        "_interp",
        "_np_dtype",
        "_shape",
    )  # what a tracer's value is; subclasses add
    _is_tracer = True
    _layout_known = False  # whether its views are views exactly where PyTorch's are

    def _init_tracer(self, interp, shape, np_dtype):
        # (inlined in the hot paths of BatchTracer._new and GradTracer._new, a call less for
        # each op under every transform: keep the three in step; test_transforms checks it)
        self._interp = interp
        self._shape = shape if type(shape) is tuple else tuple(shape)
        self._np_dtype = np_dtype
        self._storage = [None, 0]
        self._requires_grad = False
        self._grad_fn = None
        self._view_of = None

    def _take_fields(self, other):
        """Take the value of tracer ``other`` (of this class): its interpreter, metadata and
        parent-level value(s), not its identity, version or views."""
        for name in self._FIELDS:
            setattr(self, name, getattr(other, name))

    def _alias(self):
        """Another tracer object with this one's value (its own version counter)."""
        a = object.__new__(type(self))
        a._take_fields(self)
        a._storage = [None, 0]
        a._requires_grad = False
        a._grad_fn = None
        a._view_of = None
        return a

    # -- what the eager path reads: only an escaped tracer gets here ------------------------
    def _escaped(self):
        interp = self._interp
        state = "after it returned" if not interp.alive else "outside of it"
        return EscapedTracerError(
            f"a value created inside {interp.name} was used {state} ({type(self).__name__}"
            f" of shape {list(self._shape)}): a transformed value must not escape its "
            f"transform. Return it from the transformed function instead of storing it "
            f"outside (in a global, a list, or an attribute)."
        )

    @property
    def _data(self):
        raise self._escaped()

    # -- in-place ops: the tracer takes the new value (functionalisation) ------------------
    def _check_inplace(self):
        """Raise where PyTorch refuses an in-place op on this value (``GradTracer``: the
        transform's inputs); called before anything is computed."""

    def _assigned(self, result):
        """A value this level does not own, taken in place: lifted to the level."""
        return self._interp.lift(result)

    def _assign(self, result):
        """Give this tracer the value ``result`` (an in-place op under its transform).

        A view (``mark_view``) writes the value through to its base when its primitive
        declares how (``view_put``: basic indexing ``y[1:] += v``, transposes, reshapes that
        are views, diagonals); a value with live views re-derives them from its new value,
        as views of shared memory see it."""
        if not isinstance(result, Tensor):
            raise TypeError(f"in-place result must be a tensor, got {type(result).__name__}")
        if shape_of(result) != self._shape:
            try:
                result = F.broadcast_to(result, self._shape)
            except RuntimeError:
                raise RuntimeError(
                    f"output with shape {list(self._shape)} doesn't match the "
                    f"broadcast shape {list(shape_of(result))}"
                ) from None
        if np_dtype_of(result) != self._np_dtype:
            result = result.to(self._np_dtype)
        d = self.__dict__
        if d.get("_traced_view"):
            recipe = d.get("_view_recipe")
            put = None if recipe is None else recipe[1].view_put
            # (a ``reshape``/``flatten`` that may have copied where PyTorch's would, which
            # a tracer without a memory layout cannot tell; a forward_ad dual knows its
            # primal's. ``view``, ``squeeze`` and ``unsqueeze`` are always views)
            unknown = recipe is not None and recipe[3].get("name") == "reshape"
            if put is None or recipe[3].get("advanced") or (unknown and not self._layout_known):
                what = "a view" if recipe is None else recipe[1].__name__.lower()
                if put is not None:
                    what = "reshape" if unknown else "advanced indexing"
                raise NotImplementedError(
                    f"in-place modification of a view ({what}) of a value traced by "
                    f"{self._interp.name} is not supported: the change "
                    "would not reach the tensor it views. Modify a slice of it (y[1:] += v), "
                    "or write it out of place (index_put, where, cat)."
                )
            base, _, rest, params = recipe
            base._assign(put(base, result, *rest, **params))  # refreshes this view
            return
        self._take(result)

    def _take(self, result):
        """Take ``result`` as this (root) tracer's new value: a new version, and its live
        views re-derived."""
        if not (type(result) is type(self) and result._interp is self._interp):
            result = self._assigned(result)
        self._take_fields(result)
        self._storage[1] += 1  # a new version: what saved the old value notices
        self._refresh_views()

    def _refresh_views(self):
        """Re-derive the live views of this tracer from its (new) value."""
        views = self.__dict__.get("_views")
        if not views:
            return
        live = [v for v in (r() for r in views) if v is not None]
        views[:] = [weakref.ref(v) for v in live]
        for v in live:
            _, prim, rest, params = v.__dict__["_view_recipe"]
            new = bind(prim, (self, *rest), params)
            if not (type(new) is type(v) and new._interp is v._interp):
                raise NotImplementedError(
                    f"in-place modification of a value traced by {self._interp.name}: a view "
                    "of it could not be re-derived at its level; take the view after the "
                    "in-place op"
                )
            v._take_fields(new)
            v._storage[1] += 1
            v._refresh_views()

    # -- metadata from the tracer -------------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    @property
    def dtype(self):
        return D._FROM_NP[self._np_dtype]

    @property
    def device(self):
        return _CPU_DEVICE

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._shape)
        return self._shape[_wrap_dim(dim, len(self._shape))]

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    def element_size(self) -> int:
        return self._np_dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._np_dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._np_dtype.kind == "c"

    def is_contiguous(self, *, memory_format=None) -> bool:
        """A traced value is row-major (its views' strides are not tracked)."""
        return laid_out_as(self._shape, self.stride(), memory_format)

    def stride(self, dim=None):
        st = _contiguous_strides(self._shape)
        return st if dim is None else st[_wrap_dim(dim, len(self._shape))]

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __hash__(self) -> int:
        return id(self)

    @property
    def requires_grad(self) -> bool:
        return False

    @requires_grad.setter
    def requires_grad(self, value):
        raise RuntimeError(
            f"requires_grad cannot be set on a value traced by "
            f"{self._interp.name}; set it on the input before the transform"
        )

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad

    @property  # type: ignore[misc]  # (read-only: a traced value has no .grad to set)
    def grad(self):
        return None

    @property
    def is_leaf(self) -> bool:
        return True

    def backward(self, *args, **kwargs):
        raise RuntimeError(
            f".backward() was called on a value traced by {self._interp.name}; "
            "inside a transform use numbagrad.func.grad / vjp instead"
        )

    # -- values: the concrete value where the transform has one ----------------------------
    def _parent_value(self):
        """The value one level down (a tracer of the parent interpreter, or a tensor)."""
        raise NotImplementedError

    def _concrete(self, what):
        """The concrete (eager) tensor behind this tracer, for data-dependent Python
        (``.item()``, ``bool``); vmap has none and raises."""
        raise NotImplementedError

    def _layout_value(self):
        """The eager tensor whose memory layout this value has, for layout hints (the
        gradient of a transposed matrix, ``ops/linalg.py``), or None (vmap: a batched
        value's layout is not an example's: ``BatchTracer`` says None)."""
        v = self._parent_value()
        if not isinstance(v, Tensor):
            return None
        return v._layout_value() if v._is_tracer else v

    def item(self):
        return self._concrete(".item()").item()

    def tolist(self):
        return self._concrete(".tolist()").tolist()

    def __bool__(self) -> bool:
        return bool(self._concrete("bool()"))

    def __float__(self) -> float:
        return float(self._concrete("float()"))

    def __int__(self) -> int:
        return int(self._concrete("int()"))

    def __index__(self) -> int:
        return self._concrete("an index").__index__()

    def numpy(self, *, force=False):
        raise RuntimeError(
            f"Can't call numpy() on a value traced by {self._interp.name}: inside the "
            "transform it has no concrete array, and detach() does not give one. Write the "
            "computation with numbagrad ops, or wrap the NumPy code in an autograd.Function "
            "with the rule the transform needs (a vmap staticmethod for vmap, jvp for "
            "forward mode)."
        )

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(
            f"a value traced by {self._interp.name} cannot be converted to a NumPy array; "
            "write the computation with numbagrad ops, or wrap NumPy code in an "
            "autograd.Function with the rules the transform needs"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inner_repr()})"

    def _inner_repr(self):
        return ""

    def __reduce_ex__(self, protocol):
        raise TypeError(f"a value traced by {self._interp.name} cannot be pickled")

    def __deepcopy__(self, memo):
        return self.clone()


# the calls up from the lower layers (NOTE [Extension points])
extension.register(birth=mark_born, func_transform=_active_func_transform)
