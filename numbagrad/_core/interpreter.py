"""The interpreter context and ``bind``, the one entry point through which ops run.

NOTE [Interpreters]
Every primitive application goes through ``bind(prim, args, params)``, which hands it to the
interpreter held in a ContextVar (JAX's "stackless" design). The bottom interpreter,
``EVAL``, runs the kernels and records the eager tape (``Primitive._eval``); each transform
(forward mode, vmap, func.grad) pushes an interpreter whose ``parent`` is the one current at
entry, and its rules run with that parent current, so transforms nest in any order.
Positional ``args`` are the operands (tensors, or Python scalars standing in for them; data
operands such as conditions and indices are tensors too, so a transform sees them);
``params`` are static (dims, flags), passed to every rule as keyword arguments.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = [
    "EVAL",
    "NO_PARAMS",
    "EvalInterpreter",
    "Interpreter",
    "bind",
    "current_interpreter",
]


class Interpreter:
    """Processes primitive applications; transforms subclass it (NOTE [Interpreters])."""

    __slots__ = ("parent",)
    # whether a plain tensor made inside this transform may take its values in place
    # (NOTE [In-place writes under transforms] in ``ops/inplace.py``); vmap's may not
    fills_plain = True
    # whether ``process`` makes its parent current itself wherever it binds (its rules
    # run under the parent, NOTE [Interpreters]), so that a child interpreter may call it
    # with the child still current, saving a context switch per op (``to_parent``)
    sets_current = False

    def __init__(self, parent=None):
        self.parent = parent

    def process(self, prim, args, params):
        raise NotImplementedError(f"{type(self).__name__} must implement process()")


class EvalInterpreter(Interpreter):
    """The bottom interpreter: run the kernels now and record the eager autograd tape."""

    __slots__ = ()

    def process(self, prim, args, params):
        return prim._eval(args, params)


EVAL = EvalInterpreter()
_CURRENT: ContextVar[Interpreter] = ContextVar("numbagrad_interpreter", default=EVAL)
current_interpreter = _CURRENT.get

NO_PARAMS: dict = {}  # shared by calls without params; never mutated


def bind(prim, args, params=NO_PARAMS):
    """Apply primitive ``prim`` to ``args`` under the current interpreter."""
    interp = _CURRENT.get()
    if interp is EVAL:  # the common case, one call shorter
        return prim._eval(args, params)
    return interp.process(prim, args, params)
