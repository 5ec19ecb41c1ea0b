"""Forward mode: dual values and the interpreter that pushes tangents through ops.

Each primitive's ``jvp(primals, tangents, out, **params)`` rule (NOTE [Primitive
declaration]) runs with the parent interpreter current, so it may itself be
differentiated, batched or traced again. ``tangents[i]`` is None where operand ``i``
carries no tangent (a zero); the rule returns the output tangent (None for zero), one per
output for multi-output primitives.
"""

from __future__ import annotations

from numbagrad import ops as F
from numbagrad._core.grad_mode import is_inference_mode_enabled, no_grad
from numbagrad._core.graph import AccumulateGrad, SavedOutput, accumulator_of
from numbagrad._core.interpreter import _CURRENT, EVAL
from numbagrad._creation import const_zeros_like
from numbagrad._creation import const_zeros_like as zeros_like
from numbagrad._tensor import Tensor
from numbagrad._transforms.tracer import (
    Tracer,
    TransformInterpreter,
    mark_view,
    np_dtype_of,
    shape_of,
)
from numbagrad.ops.inplace import check_inplace, commit

__all__ = [
    "DualTracer",
    "JvpInterpreter",
    "SavedDualOutput",
    "checked_tangent",
    "fix_tangent",
    "save_duals",
    "zero_tangent",
]


class JvpInterpreter(TransformInterpreter):
    """Pushes tangents forward. ``level`` is set for ``forward_ad.dual_level`` (whose duals
    outlive it as plain tensors, as in PyTorch) and None for ``func.jvp``."""

    __slots__ = ("level",)

    def __init__(self, parent, name, level=None):
        super().__init__(parent, name)
        self.level = level

    def process(self, prim, args, params):
        # one pass over the operands: their primals, and the tangents of the owned ones
        tangents = None
        for i, a in enumerate(args):
            if type(a) is DualTracer and a._interp is self:
                if tangents is None:
                    tangents = [None] * len(args)
                    primals = list(args)
                primals[i] = a._primal
                tangents[i] = a._tangent
        if tangents is None:
            return self.to_parent(prim, args, params)
        if self.level is not None and is_inference_mode_enabled():
            # (PyTorch's inference mode turns forward AD off: the op sees the primals)
            return self.to_parent(prim, primals, params)
        custom = prim.process_jvp
        if custom is not None:
            return custom(self, args, params)
        parent = self.parent
        token = _CURRENT.set(parent)
        try:
            if parent is EVAL:
                out = prim._eval(primals, params)
            else:
                out = parent.process(prim, primals, params)
            if not prim.differentiable:
                return out
            data = prim.data_operands
            if data is not None:
                for i in data if type(data) is tuple else data(len(args)):
                    tangents[i] = None
                if all(t is None for t in tangents):
                    return out
            rule = prim.jvp if prim.jvp is not None else prim.rule("jvp")  # rule() raises
            tan = rule(primals, tangents, out, **params)
            if prim.n_out == 1:
                tan = fix_tangent(tan, out, prim.__name__)
                if self.level is not None:
                    if tan is None:  # (a zero derivative: floor, sign, x ** 0...)
                        tan = zero_tangent(out)
                    if parent is EVAL:
                        save_duals(self, (out,), args, primals, (tan,))
                if prim.view and parent is EVAL and self.level is not None:
                    if type(out) is Tensor and out._view_of is None:
                        return self.dual(out, tan)  # (a reshape that copied: not a view)
                return mark_view(prim, self.dual(out, tan), args, params)
            tan = [fix_tangent(t, o, prim.__name__) for o, t in zip(out, tan)]
            if self.level is not None:
                tan = [zero_tangent(o) if t is None else t for o, t in zip(out, tan)]
            if self.level is not None and parent is EVAL:
                save_duals(self, out, args, primals, tan)
            return tuple(self.dual(o, t) for o, t in zip(out, tan))
        finally:
            _CURRENT.reset(token)

    def lift(self, value):
        """A value this level does not own, as a dual with a zero tangent."""
        return DualTracer._new(self, value, zeros_like(value))

    def dual(self, primal, tangent):
        """A dual of this interpreter (``primal`` itself when the tangent is None)."""
        if (
            tangent is None
            or not isinstance(primal, Tensor)
            or np_dtype_of(primal).kind not in "fc"
        ):
            return primal
        return DualTracer._new(self, primal, tangent)


def zero_tangent(out):
    """The tangent of a differentiable op's floating output whose rule gave none (its
    derivative is zero) in a ``forward_ad`` level: zeros, as PyTorch's (a ``ZeroTensor``
    there), so that ``unpack_dual`` reports a tangent; None for other outputs. (Under
    ``func.jvp`` no tangent is the cheaper zero: only its outputs are seen, and they get
    zeros.)"""
    if isinstance(out, Tensor) and np_dtype_of(out).kind in "fc":
        return const_zeros_like(out)
    return None


def save_duals(interp, outs, args, primals, tangents):
    """Make the eager autograd node of ``outs`` (if the op on the primals recorded one),
    an op inside the ``forward_ad`` level ``interp``, save the duals instead of the
    primals: its operands' (the ``DualTracer`` arguments themselves) and its outputs'
    (``SavedDualOutput``).

    NOTE [Forward-over-reverse in a dual level]: ``autograd.grad(f(dual), dual,
    create_graph=True)`` runs the VJP rules on what the nodes saved, under the level's
    interpreter, so with duals saved the gradient carries its tangent, the
    Hessian-vector product, as PyTorch's does. A dual is its primal to the eager world
    (its ``_data``, storage and version counter are the primal's), so every other use of
    the saved values (first-order backward on arrays, version checks) is unchanged; once
    the level has closed, a saved dual is its primal again."""
    node = None
    for o in outs:
        if isinstance(o, Tensor) and o._grad_fn is not None:
            node = o._grad_fn  # (all outputs of one application share it)
            break
    saved = node._saved if node is not None else None
    if not saved:
        return
    new = list(saved)
    for k, e in enumerate(saved):
        if type(e) is tuple:
            t = e[0]
            for a, p in zip(args, primals):
                if p is t and a is not p:  # (a is this level's dual of p)
                    new[k] = (a, e[1])
                    break
        elif type(e) is SavedOutput:
            tan = tangents[e.output_nr]
            if tan is not None:
                new[k] = SavedDualOutput(e, interp, tan)
    node._saved = new


class SavedDualOutput(SavedOutput):
    """A saved output of an op inside a ``forward_ad`` level, with its tangent: unpacked
    as a dual while the level is open (NOTE [Forward-over-reverse in a dual level])."""

    __slots__ = ("interp", "tangent")

    def __init__(self, saved, interp, tangent):
        for name in SavedOutput.__slots__:
            setattr(self, name, getattr(saved, name))
        self.interp = interp
        self.tangent = tangent

    def unpack(self, node, index=0):
        t = SavedOutput.unpack(self, node, index)
        interp = self.interp
        if not interp.alive:
            return t
        return DualTracer._new(interp, t, self.tangent)


def checked_tangent(primal, tangent, shape_error, kind_error, *, cast=True):
    """``tangent`` for ``primal`` as PyTorch's forward AD takes it (``make_dual``,
    ``func.jvp``): both floating (``ValueError`` otherwise), the same shape (else
    ``RuntimeError(shape_error)``), and a floating tangent of another precision cast to the
    primal's dtype if ``cast`` (``make_dual`` keeps it: the ops' rules bring their output
    tangents to the output's dtype) or one of another kind: ``RuntimeError(kind_error)``."""
    for what, x in (("primal", primal), ("tangent", tangent)):
        if np_dtype_of(x).kind not in "fc":
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {x.dtype}")
    if shape_of(primal) != shape_of(tangent):
        raise RuntimeError(shape_error)
    dp, dt = np_dtype_of(primal), np_dtype_of(tangent)
    if dp != dt:
        if dp.kind != dt.kind:
            raise RuntimeError(kind_error)
        if cast:
            tangent = tangent.to(primal.dtype)
    return tangent


def fix_tangent(tan, out, who):
    """Bring a rule's (or a user's) tangent to the output's shape and dtype: a broadcast
    operand's tangent is expanded, a shape that cannot broadcast raises."""
    if tan is None:
        return None
    if not isinstance(tan, Tensor):
        raise TypeError(
            f"{who}: the jvp rule returned a {type(tan).__name__} where a tensor "
            "tangent (or None) was expected"
        )
    oshape = shape_of(out)
    tshape = shape_of(tan)
    if tshape != oshape:
        try:
            tan = F.broadcast_to(tan, oshape)
        except RuntimeError:
            raise RuntimeError(
                f"{who}: the tangent has shape {list(tshape)} but the output "
                f"has shape {list(oshape)}"
            ) from None
    odt = np_dtype_of(out)
    if np_dtype_of(tan) != odt:
        tan = tan.to(odt)
    return tan


class DualTracer(Tracer):
    """A value with a tangent, owned by one forward-mode interpreter.

    NOTE [In-place on duals]: a ``forward_ad`` dual of an eager primal is, as in PyTorch,
    a view of that primal, and its tangent is the tensor given to ``make_dual`` when that
    is laid out as the primal (else a copy). An in-place op on the dual (``_take``) writes
    the new primal into the primal's memory with the eager in-place machinery (``commit``:
    the primal's history and version change as for an eager in-place op, a view's base
    too) and the new tangent into the given tangent's memory; other duals take the new
    tangent as a value. Its views are views of the primal's memory, so they see the
    change; their tangents are re-derived (``_refresh_views``). A ``reshape`` of a dual
    is a view exactly where its primal's is (``_layout_known``). Under ``func.jvp`` and
    the other transforms values have no memory of their own: an in-place op gives the
    tracer a new value (``Tracer._take``) and writes it through the view chain.
    """

    __slots__ = ()
    _FIELDS = (*Tracer._FIELDS, "_primal", "_tangent")

    @classmethod
    def _new(cls, interp, primal, tangent):
        t = object.__new__(cls)
        t._init_tracer(interp, shape_of(primal), np_dtype_of(primal))
        t._primal = primal
        t._tangent = tangent
        if interp.level is not None and type(primal) is Tensor:
            # a forward_ad dual is its primal to the eager world (autograd, in-place
            # version counters), during its level and after it (NOTE [Tracers])
            t._storage = primal._storage
            t._requires_grad = primal._requires_grad
            t._grad_fn = primal._grad_fn
            if primal._requires_grad and primal._grad_fn is None:
                t._grad_fn = accumulator_of(primal)
            else:
                t._output_nr = primal._output_nr
        return t

    @property
    def _data(self):
        if self._interp.level is not None:
            return self._primal._data
        raise self._escaped()

    @property
    def _layout_known(self):
        """A ``forward_ad`` dual's views are its eager primal's: views where PyTorch's are."""
        return self._interp.level is not None and type(self._primal) is Tensor

    def is_contiguous(self, *, memory_format=None):
        if self._layout_known:
            return self._primal.is_contiguous(memory_format=memory_format)
        return Tracer.is_contiguous(self, memory_format=memory_format)

    def stride(self, dim=None):
        if self._layout_known:
            return self._primal.stride(dim)
        return Tracer.stride(self, dim)

    def _check_inplace(self):
        """A ``forward_ad`` dual's in-place op writes into its primal's memory: refused
        where an eager in-place op on the primal is (a leaf that requires grad, a view of
        one: ``make_dual`` of such a leaf is a view of it, as PyTorch's)."""
        if self._layout_known:
            check_inplace(self._primal)

    def _parent_value(self):
        return self._primal

    def _concrete(self, what):
        p = self._primal
        return p._concrete(what) if isinstance(p, Tracer) else p

    def _inner_repr(self):
        return f"primal={self._primal!r}, tangent={self._tangent!r}"

    def __repr__(self):
        if self._interp.level is not None:
            p = self._primal
            if self._tangent is None or not self._interp.alive:  # (a closed level: a plain tensor)
                return repr(p)
            return f"{repr(p)[:-1]}, tangent={self._tangent!r})"
        return super().__repr__()

    # forward_ad duals are their primals to eager autograd
    @property
    def requires_grad(self):
        return self._interp.level is not None and self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        p = self._primal
        if self._interp.level is None or type(p) is not Tensor:
            Tracer.requires_grad.fset(self, value)  # (raises: a func.jvp value)
        value = bool(value)
        if value == self._requires_grad:
            return
        own = self.__dict__.get("_own_leaf", False)
        if not (own or self._grad_fn is None):  # (computed, or a view of a leaf to PyTorch)
            Tensor.requires_grad.fset(self, value)  # (raises: not a leaf)
        # PyTorch's dual of a tensor is a view of it: making the dual a leaf that requires
        # grad leaves the primal given to make_dual as it was, so the dual's own leaf is
        # an alias of the primal's storage (version counter included)
        leaf = p.detach()
        leaf.requires_grad = value
        self._primal = leaf
        self._requires_grad = value
        if value:
            self._grad_fn = accumulator_of(leaf)
        else:
            self._grad_fn = None
        self.__dict__["_own_leaf"] = value

    requires_grad_ = Tensor.requires_grad_

    @property
    def grad(self):
        """The gradient accumulated into a dual made a leaf by ``requires_grad_()``."""
        return self._primal.grad if self.__dict__.get("_own_leaf", False) else None

    @grad.setter
    def grad(self, value):
        if not self.__dict__.get("_own_leaf", False):
            Tensor.grad.fset(self, value)
        else:
            self._primal.grad = value

    def _take(self, result):
        """A ``forward_ad`` dual of an eager primal takes an in-place op's value as
        PyTorch's does (NOTE [In-place on duals])."""
        if not self._layout_known:
            return Tracer._take(self, result)
        p = self._primal
        if type(result) is DualTracer and result._interp is self._interp:
            new_p, new_t = result._primal, result._tangent
        else:
            new_p, new_t = result, None
        if type(new_p) is not Tensor:  # (a value of a transform inside the level)
            return Tracer._take(self, result)

        commit(p, new_p, alias=self)
        self._requires_grad, self._grad_fn = p._requires_grad, p._grad_fn
        self._output_nr = p._output_nr
        if not self._interp.alive or (new_t is None and is_inference_mode_enabled()):
            return  # (a closed level's dual is a plain tensor; inference mode: no tangent)
        t = self._tangent
        if new_t is None:
            new_t = zero_tangent(p)
        if (
            self.__dict__.get("_given_tangent")
            and type(t) is Tensor
            and type(new_t) is Tensor
            and t._data.flags.writeable
        ):
            with no_grad():  # (the tangent given to make_dual changes in place too)
                t.copy_(new_t)
        else:
            self._tangent = new_t
        self._refresh_views()

    def detach_(self):
        """Drop the tangent and the autograd history in place, as PyTorch's: this dual is
        its primal from now on, as after its level closes. A view (``make_dual``'s result
        is one of its primal) cannot be detached in place, as in PyTorch."""
        if self._interp.level is None:
            return Tensor.detach_(self)
        d = self.__dict__
        if d.get("_traced_view") or d.get("_view_of_primal"):
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._interp = _DETACHED
        self._grad_fn = None
        self._requires_grad = False
        self.__dict__.pop("_own_leaf", None)
        return self

    @property
    def grad_fn(self):
        fn = self._grad_fn

        return None if isinstance(fn, AccumulateGrad) else fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if self._interp.level is None:
            return Tracer.backward(self)
        p = self._primal
        return p.backward(gradient, retain_graph, create_graph, inputs)

    def detach(self):
        p = self._primal
        return p.detach() if isinstance(p, Tensor) else p

    def numpy(self, *, force=False):
        if self._interp.level is not None and isinstance(self._primal, Tensor):
            return self._primal.numpy(force=force)
        return Tracer.numpy(self)


# the closed level a dual detached in place belongs to (``DualTracer.detach_``)
_DETACHED = JvpInterpreter(EVAL, "numbagrad.autograd.forward_ad (detached)", level=0)
_DETACHED.alive = False
