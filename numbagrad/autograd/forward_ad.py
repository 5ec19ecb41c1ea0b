"""Forward-mode automatic differentiation (PyTorch's ``torch.autograd.forward_ad``).

Inside ``with dual_level():``, ``make_dual(primal, tangent)`` makes a dual tensor; every op
on duals computes its output's tangent with the op's JVP rule; ``unpack_dual`` returns
``(primal, tangent)``. A dual tensor is its primal to the rest of numbagrad (autograd,
``.numpy()``), and after the level exits it is a plain tensor again (tangent ``None``).

Examples
--------
>>> import numbagrad
>>> import numbagrad.autograd.forward_ad as fwAD
>>> x = numbagrad.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, numbagrad.ones_like(x)).exp()
...     fwAD.unpack_dual(y).tangent
tensor([2.7183, 7.3891])
"""

from __future__ import annotations

import functools
from collections import namedtuple

from numbagrad._core.interpreter import _CURRENT, current_interpreter
from numbagrad._tensor import Tensor
from numbagrad._transforms.forward import DualTracer, JvpInterpreter, checked_tangent
from numbagrad._transforms.tracer import shape_of

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_STATE = {"interp": None, "token": None}


def enter_dual_level():
    """Open a new forward AD level and return its index: 0, the only one (levels do not
    nest; a closed level's duals are told apart by their level object, not the index)."""
    if _STATE["interp"] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = 0
    interp = JvpInterpreter(
        current_interpreter(), "numbagrad.autograd.forward_ad.dual_level", level=level
    )
    _STATE["interp"] = interp
    _STATE["token"] = _CURRENT.set(interp)
    return level


def exit_dual_level(*, level=None):
    """Close the current forward AD level; its duals become plain tensors."""
    interp = _STATE["interp"]
    if interp is None or (level is not None and level != interp.level):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that "
            "was created. This is not supported."
        )
    interp.alive = False
    token = _STATE["token"]
    _STATE["interp"] = _STATE["token"] = None
    try:
        _CURRENT.reset(token)
    except ValueError:  # entered in another context: restore the parent explicitly
        _CURRENT.set(interp.parent)


class dual_level:
    """Context manager for a forward AD level (PyTorch's ``fwAD.dual_level``): ``with
    dual_level() as level`` opens it (``level`` is its index, 0) and closes it at the end;
    as a decorator, ``@dual_level()`` runs each call of the function inside a level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with dual_level():
                return func(*args, **kwargs)

        return wrapper


def _check_level(level, api):
    if level is not None and level != 0:
        raise RuntimeError(f"Invalid level given to {api}")


def _level_interp(level, api):
    _check_level(level, "_make_dual")
    interp = _STATE["interp"]
    if interp is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, "
            "make sure to enter_dual_level() first."
            if api == "make_dual"
            else f"{api}: no forward AD level is open"
        )
    if level is not None and level != interp.level:
        raise RuntimeError(
            f"{api}: level {level} is not the current forward AD level ({interp.level})"
        )
    return interp


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor with primal ``tensor`` and ``tangent``: floating tensors of the same
    shape (a tangent of another precision keeps its dtype, as PyTorch's)."""
    interp = _level_interp(level, "make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(
            "make_dual expects Tensors for both the primal and the tangent, got "
            f"{type(tensor).__name__} and {type(tangent).__name__}"
        )
    tangent = checked_tangent(
        tensor,
        tangent,
        f"Trying to set a forward gradient that has a different size than that of the "
        f"original Tensor, this is not supported. Tensor is of size {list(shape_of(tensor))} "
        f"while the given forward gradient is of size {list(shape_of(tangent))}.",
        f"Expected tangent to have the same dtype as the primal: the primal is "
        f"{tensor.dtype} and the tangent is {tangent.dtype}",
        cast=False,
    )
    if type(tensor) is DualTracer and tensor._interp is interp:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {interp.level} is not supported."
        )
    # the tangent is used as it is when it is laid out as the primal (an in-place op on
    # the dual then changes it too, NOTE [In-place on duals]), else copied, as PyTorch's
    given = type(tangent) is Tensor and type(tensor) is Tensor and _same_layout(tensor, tangent)
    if not given:
        tangent = tangent.clone()
    if type(tensor) is Tensor and tensor._requires_grad:
        # the dual is a view of its primal: its history is a view node (an in-place op on
        # it then changes the primal's history, or raises for a leaf's, as PyTorch's)
        tensor = tensor.view(tensor.shape)
    dual = DualTracer._new(interp, tensor, tangent)
    d = dual.__dict__
    d["_view_of_primal"] = True  # (detach_ refuses it, as PyTorch's views)
    if given:
        d["_given_tangent"] = True
    return dual


def _same_layout(a, b):
    """Whether ``b`` is laid out in memory as ``a`` (strides, offset, storage size)."""
    return (
        a.stride() == b.stride()
        and a.storage_offset() == b.storage_offset()
        and a._storage[0].size == b._storage[0].size
    )


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at the current level (tangent None if it has
    none, or once its level has closed)."""
    _check_level(level, "_fw_primal")
    interp = _STATE["interp"]
    if type(tensor) is DualTracer and tensor._interp.level is not None:
        if (
            tensor._interp is interp
            and interp is not None
            and (level is None or level == interp.level)
        ):
            return UnpackedDualTensor(tensor._primal, tensor._tangent)
        return UnpackedDualTensor(tensor._primal, None)
    return UnpackedDualTensor(tensor, None)
