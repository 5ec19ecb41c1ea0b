"""In-place ops, copies and casts.

NOTE [In-place ops and views]
An in-place op computes its result out of place (recording the node as usual), then
``commit`` writes it into the tensor's memory, bumps the shared version counter and hands
the tensor the result's history. If the node saved the very tensor being overwritten, the
saved value is swapped for a snapshot of the old data first. Writing through a *view*
changes the base too: the base's history becomes ``AsStridedPut(base_old, result)`` (what
PyTorch calls CopySlices), recorded without running its forward. Other views of that base
notice the version bump when next used and re-derive their history as ``AsStrided(base)``
(``refresh_view``). With no graph to record, in-place ops write straight into memory.

NOTE [In-place writes under transforms]
Under a transform the value is functional: a tracer takes its new value (``Tracer._assign``,
which bumps its version). A *plain* tensor written with a value a transform owns (``dy =
torch.empty(3); dy[0] = x[1] * x[2]`` in a function under ``jacrev``, or ``buf.add_(dual)``
in a ``forward_ad`` level) becomes a tracer of that transform in place: the tracers' fields
are ``Tensor`` slots, unset on plain tensors, so the object changes class and keeps its
identity (``Tensor._become``). The op itself runs on an alias of the old value, which is
what its tape nodes keep; a node that read the tensor before (its version changed) raises
when its backward runs, as PyTorch's version counters do (``TapeNode.saved``). As in
PyTorch, the func transforms allow this only for a tensor made inside the transformed
function (marked ``_born_in``, a weak reference to the transform's interpreter, by
``_transforms.tracer.mark_born`` through ``HOOKS.birth``, NOTE [Extension points], and by the
interpreters for their plain results): writing into a
captured tensor raises PyTorch's error, and under ``vmap`` (``fills_plain = False``) a
batched value into an unbatched tensor raises. A ``forward_ad`` level takes any plain
tensor. A tensor that shares its memory (a view, one with views) is refused: its sharers
would not see the value.
"""

from __future__ import annotations

import sys
import weakref

import numpy as np

from numbagrad import _dtype as D
from numbagrad import _tensor as _tensor_module
from numbagrad import ops as F
from numbagrad._core import extension
from numbagrad._core.grad_mode import is_grad_enabled_fast
from numbagrad._core.graph import after_record, save_input
from numbagrad._core.interpreter import current_interpreter
from numbagrad._creation import const_zeros_like as zeros_like
from numbagrad._device import copy_array
from numbagrad._device import device as _device
from numbagrad._device import resolve as _resolve_device
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend_of
from numbagrad.kernels.meta import MetaArray
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import passthrough
from numbagrad.ops.shape import OVERLAP_ERROR, Zeros
from numbagrad.ops.unary import unary_batch

__all__ = ["assign_traced", "check_inplace", "commit", "inplace", "refresh_view", "traced"]


class Clone(Primitive):
    linearity = "linear"
    vjp = fused_vjp = staticmethod(passthrough)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return x.copy()


class Fill(Primitive):
    """``input`` overwritten with a constant: its old value gets no gradient (zeros, as
    PyTorch's fill_/zero_ backward gives; not ``g * 0``, which is NaN for an inf ``g``)."""

    @staticmethod
    def vjp(ctx, g, value):
        return zeros_like(g)

    # by hand (NOTE [Hand-written fused rules]): zeros made without reading ``g`` (no ``g * 0``, NaN
    # for an inf ``g``)
    @staticmethod
    def fused_vjp(ctx, g, value):
        return ctx.be.zeros(g.shape, g.dtype)

    batch = classmethod(unary_batch)

    @staticmethod
    def jvp(primals, tangents, out, value):
        return None  # a constant: a zero tangent

    @staticmethod
    def impl(be, x, value):
        return be.xp.full(x.shape, value, x.dtype)


class ToCopy(Primitive):
    linearity = "linear"
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, dtype):
        if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            import warnings

            warnings.warn(  # (PyTorch's warning: a cast that loses information is loud)
                "Casting complex values to real discards the imaginary part",
                UserWarning,
                stacklevel=2,
            )
            x = x.real
        if dtype == np.float16:  # beyond 65504 is inf, silently as in PyTorch
            with np.errstate(over="ignore"):
                return x.astype(dtype)
        return x.astype(dtype)

    @staticmethod
    def vjp(ctx, g, dtype):
        if g.dtype.is_complex and ctx.input_dtype(0).kind != "c":
            g = F.real(g)  # (a real input of a cast to complex: the real part)
        return bind(ToCopy, (g,), {"dtype": ctx.input_dtype(0)})

    # by hand (NOTE [Hand-written fused rules]): two steps for a real input cast to complex (real
    # part, cast)
    @staticmethod
    def fused_vjp(ctx, g, dtype):
        if g.dtype.kind == "c" and ctx.input_dtype(0).kind != "c":
            g = g.real  # (a real input of a cast to complex: the real part)
        return g.astype(ctx.input_dtype(0))


@public
def clone(input, *, memory_format=None):
    """A copy with its own storage; gradients flow through unchanged."""
    D.check_memory_format(memory_format, "clone")
    return bind(Clone, (input,), NO_PARAMS)


@public
def contiguous(input, memory_format=None):
    """``input`` itself if row-major contiguous, else a contiguous copy."""
    D.check_memory_format(memory_format, "contiguous")
    if input._is_tracer:
        # a transformed value's layout is its parent-level value's, which may be a
        # transpose: a copy, so that a ``view`` after it works as it does on a contiguous
        # tensor (``x.t().contiguous().view(-1)``); a forward_ad dual knows its layout
        # (its primal's) and is returned itself where that is contiguous, as PyTorch's
        if input._layout_known and input.is_contiguous():
            return input
        return clone(input)
    return input if input._data.flags.c_contiguous else clone(input)


@public
def to(input, *args, **kwargs):
    """Convert the dtype (``to(dtype)``, ``to(device)``, ``to(other)``, ``dtype=``).

    Returns ``input`` itself when nothing changes, as PyTorch does.
    """
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
            if not (a._is_tracer or input._is_tracer) and (a.is_cuda or input.is_cuda):
                dev = a.device  # to(other) also moves to other's device (NOTE [CUDA tensors])
        elif isinstance(a, (str, _device)):
            dev = a
        elif a is not None:
            dtype = a
    if dev is not None:
        dev = _device(dev)
        if not input._is_tracer and (dev.type == "meta" or input.is_meta):
            input = _to_meta(input, dev)  # NOTE [Meta tensors]
            copy = False
        elif (
            not input._is_tracer
            and (dev.type == "cuda" or input.is_cuda)
            and input.device != _resolve_device(dev)
        ):  # NOTE [CUDA tensors]
            input = bind(ToDevice, (input,), {"device": _resolve_device(dev)})
            copy = False
    if dtype is None or D.as_dtype(dtype) == input.dtype:
        return clone(input) if copy else input
    return bind(ToCopy, (input,), {"dtype": D.as_dtype(dtype).np})


def _to_meta(input, dev):
    """``input`` on the meta device (a new tensor of its shape and dtype, no data); a meta
    tensor cannot go anywhere else (NOTE [Meta tensors] in ``kernels/meta.py``)."""
    if dev.type != "meta":
        raise NotImplementedError(
            f"Cannot copy out of meta tensor; no data! (to {dev}: a meta tensor has a shape "
            "and a dtype only; make the tensor on that device instead)"
        )
    if input.is_meta:
        return input
    d = input._data
    out = Tensor._make(MetaArray(d.shape, d.dtype))
    out._requires_grad = input._requires_grad and is_grad_enabled_fast()
    return out


class ToDevice(Primitive, register=False):
    """A copy to another device (PyTorch's ``_to_copy`` with a device): its VJP copies the
    gradient back to the device that ran the forward (``ctx.be``). Not registered: the op
    database runs on the CPU only, and the CUDA suite (``tests/cuda``) tests this op."""

    linearity = "linear"
    grad_fn = "ToCopyBackward0"
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, device):
        return copy_array(x, device)

    @staticmethod
    def vjp(ctx, g, device):
        return bind(ToDevice, (g,), {"device": _resolve_device(ctx.be.name)})

    # by hand (NOTE [Hand-written fused rules]): a copy to the backend named by the node, no device
    # object
    @staticmethod
    def fused_vjp(ctx, g, device):
        return copy_array(g, ctx.be.name)


# -- strided views of a base (for in-place writes through views) ----------------------------
def _geometry(view, base):
    """``(shape, strides, offset)`` in elements of ``view`` inside contiguous ``base``."""
    b = base._data
    if not b.flags.c_contiguous:
        raise RuntimeError(
            "in-place modification of a view whose base is not contiguous is not supported "
            "when gradients are recorded; call .contiguous() on the base before taking views"
        )
    item = b.itemsize
    if type(b) is not np.ndarray:  # a device array (CUDA): offsets in elements
        return (view._data.shape, tuple(s // item for s in view._data.strides),
                view._data.offset - b.offset)  # fmt: skip
    off = (view._data.__array_interface__["data"][0] - b.__array_interface__["data"][0]) // item
    return (view._data.shape, tuple(s // item for s in view._data.strides), off)


def _view_params(view, base):
    """The ``AsStrided``/``AsStridedPut`` params of ``view`` inside ``base``: its geometry,
    and for a real view of a complex base (``real``/``imag``, ``view_as_real``) ``real``:
    the geometry is then in the base's real and imaginary parts (its ``view_as_real``)."""
    vd, bd = view._data.dtype, base._data.dtype
    if vd != bd and bd.kind == "c":
        pairs = Tensor._make(base._data.view(vd))  # (the same memory, as real numbers)
        return {"geom": _geometry(view, pairs), "real": True}
    return {"geom": _geometry(view, base)}


def _as_real(x, real):
    """``x`` itself, or its flat real and imaginary parts when ``real``."""
    if not real:
        return x
    x = np.ascontiguousarray(x)
    return x.view(x.real.dtype)


def _strided(flat, geom):
    shape, strides, off = geom
    if type(flat) is not np.ndarray:  # a device array (CUDA): a checked strided view
        return flat.as_strided(shape, strides, off)
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[off:], shape, tuple(s * item for s in strides), writeable=True
    )


class AsStrided(Primitive):
    """A strided view of a contiguous base (``geom`` from ``_geometry``), as a copy."""

    linearity = "linear"

    @staticmethod
    def impl(be, x, geom, real=False):
        x = _as_real(be.xp.ascontiguousarray(x), real)
        return _strided(x.reshape(-1), geom).copy()

    @staticmethod
    def vjp(ctx, g, geom, real=False):
        shape, dtype = ctx.input_shape(0), ctx.input_dtype(0)
        z = bind(Zeros, (), {"shape": shape, "dtype": dtype, "device": g.device.type})
        return bind(AsStridedPut, (z, g), {"geom": geom, "real": real})


class AsStridedPut(Primitive):
    """``base`` with ``value`` written into its strided region (PyTorch's CopySlices)."""

    linearity = "linear"
    grad_fn = "CopySlices"

    @staticmethod
    def impl(be, base, value, geom, real=False):
        # (NumPy's ascontiguousarray makes a 0-d array 1-D: the reshape keeps it 0-d)
        out = be.xp.ascontiguousarray(base).reshape(base.shape).copy()
        _strided(_as_real(out, real).reshape(-1), geom)[...] = value
        return out

    @staticmethod
    def vjp(ctx, g, geom, real=False):
        p = {"geom": geom, "real": real}
        gb = bind(AsStridedPut, (g, 0.0), p) if ctx.needs_input_grad(0) else None
        gv = bind(AsStrided, (g,), p) if ctx.needs_input_grad(1) else None
        return gb, gv


def refresh_view(view):
    """Re-derive a stale view's history from its base's current history."""
    fn_name = view.__dict__.get("_custom_view")
    if fn_name is not None:
        raise RuntimeError(
            f"Output {view._output_nr} of {fn_name} is a view and its base or another view of "
            "its base has been modified inplace. The custom Function's backward cannot be "
            "replayed on the new base: return a clone from forward (x.clone()) if the base "
            "is modified later."
        )
    base = view._view_of
    view._hist_version = view._storage[1]
    if base._requires_grad:
        after_record(AsStrided._record((base,), _view_params(view, base), (view,)))


# -- committing in-place results -----------------------------------------------------------
def check_inplace(t):
    """Raise for in-place ops PyTorch refuses (before anything is written)."""
    if _tensor_module.COMPILE_TRACE:  # NOTE [Compile traces]
        _tensor_module.COMPILE_TRACE[-1].data_read(t, "an in-place operation")
    if is_grad_enabled_fast():
        if t._grad_fn is None and t._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        base = t._view_of
        if base is not None and base._grad_fn is None and base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in "
                "an in-place operation."
            )
    if not t._data.flags.writeable:
        raise RuntimeError(OVERLAP_ERROR)


def _needs_graph(t, others):
    if _tensor_module.COMPILE_TRACE:  # (the write goes through ``commit``, which it records)
        return True
    if not is_grad_enabled_fast():
        return False
    if t._requires_grad or (t._view_of is not None and t._view_of._requires_grad):
        return True
    return any(isinstance(o, Tensor) and o._requires_grad for o in others)


def commit(t, result, alias=None):
    """Write out-of-place ``result`` into ``t``'s memory and give ``t`` its history
    (``alias``: another tensor object with ``t``'s memory, a dual of it, that ``result``'s
    node may have saved instead)."""
    data, rd = t._data, result._data
    if rd.shape != data.shape:
        try:
            ok = np.broadcast_shapes(rd.shape, data.shape) == data.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"output with shape {list(data.shape)} doesn't match the "
                f"broadcast shape {list(rd.shape)}"
            )
    if rd.dtype != data.dtype and not np.can_cast(rd.dtype, data.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {D._FROM_NP[rd.dtype]} can't be cast to the desired output type {t.dtype}"
        )
    node = result._grad_fn
    if node is not None and node._saved:
        # the node may have saved the tensor we are about to overwrite: snapshot it
        for i, s in enumerate(node._saved):
            if type(s) is tuple and (s[0] is t or (alias is not None and s[0] is alias)):
                old = Tensor._make(data.copy())
                old._requires_grad, old._grad_fn, old._output_nr = (
                    t._requires_grad,
                    t._grad_fn,
                    t._output_nr,
                )
                node._saved[i] = save_input(old)
                if _tensor_module.COMPILE_TRACE:
                    _tensor_module.COMPILE_TRACE[-1].snapshot(old, t)
    if _tensor_module.COMPILE_TRACE:  # NOTE [In-place writes in compiled graphs]
        _tensor_module.COMPILE_TRACE[-1].inplace_write(t, result)
    backend_of(data).copy_into(data, rd)
    t._storage[1] += 1
    if node is not None:
        base = t._view_of
        if base is not None:
            old = (base._grad_fn, base._output_nr)
            after_record(AsStridedPut._record((base, result), _view_params(t, base), (base,)))
            base._hist_version = t._storage[1]
            move_retain_grad(base, *old)
        old = (t._grad_fn, t._output_nr)
        t._grad_fn = node
        t._output_nr = result._output_nr
        t._requires_grad = True
        t._hist_version = t._storage[1]
        move_retain_grad(t, *old)
    return t


def move_retain_grad(t, old_fn, old_nr):
    """After ``t`` got new history, its ``retain_grad`` capture follows it (PyTorch: it
    always reports the gradient of the current value; other hooks stay with the old)."""
    if not t._retains_grad or old_fn is None or old_fn is t._grad_fn:
        return
    hooks = (old_fn._tensor_hooks or {}).get(old_nr, [])
    for h in hooks:
        if getattr(h, "ref", None) is not None and h.ref() is t:
            hooks.remove(h)
            t._node_hooks().append(h)
            return


extension.register(refresh_view=refresh_view)  # the core's call up (NOTE [Extension points])


def assign_traced(t, compute):
    """An in-place op under a transform: ``t`` takes the value ``compute(x)``, the op's
    out-of-place result for the target value ``x`` (NOTE [In-place writes under
    transforms])."""
    if t._is_tracer:
        t._check_inplace()
        if t._interp is current_interpreter():
            t._assign(compute(t))
            return t
    # t is plain, or a tracer of an outer transform (a zeros_like under vmap, written under
    # an inner grad): the op reads an alias of t's old value, so that what it records (tape
    # nodes, saved operands) keeps that value if t takes one an inner transform owns
    old = t._alias() if t._is_tracer else Tensor._make(t._data)
    result = compute(old)
    if not result._is_tracer or (t._is_tracer and result._interp is t._interp):
        if t._is_tracer:
            t._assign(result)
            return t
        check_inplace(t)  # nothing traced reached the value (a comparison under grad)
        return commit(t, compute(t))
    interp = result._interp
    recipe = _writable_slice(t)
    if recipe is not None:
        # a slice of a plain tensor made inside the transform (``y[1:] += v``): the base
        # becomes a tracer, this view a traced view of it, and the write goes through
        base, prim, rest, params = recipe
        _check_adoptable(base, interp, sharers=1)
        base._become(interp.lift(Tensor._make(base._data)))
        t._become(bind(prim, (base, *rest), params))  # a traced view of base (mark_view)
        base.__dict__["_views"].append(weakref.ref(t))
        t._assign(result)
        return t
    _check_adoptable(t, interp)
    t._become(interp.lift(old))
    t._assign(result)
    return t


def _writable_slice(t):
    """The recipe of plain ``t`` when it is a view made under a transform that writes
    through to its (non-view) base (``Primitive.view_put``: basic indexing), else None."""
    recipe = t.__dict__.get("_view_recipe")
    if t._view_of is None or recipe is None:
        return None
    base, prim, _, params = recipe
    if base._view_of is not None or prim.view_put is None or params.get("advanced"):
        return None
    return recipe


def _check_adoptable(t, interp, sharers=0):
    """Raise unless plain tensor ``t`` (with ``sharers`` views of its memory) may take a
    value ``interp`` owns in place."""
    name = interp.name
    if not interp.fills_plain:  # vmap
        raise RuntimeError(
            f"{name}: an in-place operation would write a batched value into a tensor that "
            f"is not batched (shape {list(t.shape)}), which is not possible: use the "
            "out-of-place op (index_put, where, cat) and return the result instead"
        )
    if interp.level is None:  # func transforms: a tensor made inside only
        born = t.__dict__.get("_born_in")  # (a weak reference to the interpreter)
        born = born() if born is not None else None
        while born is not None and born is not interp:
            born = born.parent
        if born is None:
            raise RuntimeError(
                f"During a {name} transform, the function provided attempted to call an "
                f"in-place operation that would mutate a captured Tensor (shape "
                f"{list(t.shape)}). This is not supported; please rewrite the function being "
                "transformed to explicitly accept the mutated Tensor(s) as inputs."
            )
    if type(t) is not Tensor and not t._is_tracer:
        raise NotImplementedError(
            f"an in-place write of a value traced by {name} into a {type(t).__name__} is "
            "not supported; write into a plain tensor, or use the out-of-place op"
        )
    if t._requires_grad and is_grad_enabled_fast():
        if t._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise NotImplementedError(
            f"an in-place write of a value traced by {name} into a tensor that is part of an "
            "eager autograd graph (it requires grad) is not supported: detach() it first, or "
            "use the out-of-place op"
        )
    if t._view_of is not None or sys.getrefcount(t._storage) > 2 + sharers:
        raise NotImplementedError(
            f"an in-place write of a value traced by {name} into a tensor that shares its "
            "memory with others (a view, a tensor with views, or one saved for an eager "
            "backward) is not supported: the others would not see the value. Write into a "
            "tensor no other tensor views, or use the out-of-place op."
        )


def traced(t, args):
    """Whether an in-place op on ``t`` with ``args`` involves a transform's values."""
    if t._is_tracer:
        return True
    for a in args:
        if isinstance(a, Tensor) and a._is_tracer:
            return True
    return False


def inplace(t, fn, *args, fast=None, **kwargs):
    """Apply out-of-place ``fn(t, *args)`` in place; ``fast(data, *args)`` writes directly
    when no graph needs recording."""
    if traced(t, args):
        return assign_traced(t, lambda x: fn(x, *args, **kwargs))
    check_inplace(t)
    if fast is not None and not _needs_graph(t, args):
        fast(t._data, *[a._data if isinstance(a, Tensor) else a for a in args], **kwargs)
        t._storage[1] += 1
        return t
    return commit(t, fn(t, *args, **kwargs))
