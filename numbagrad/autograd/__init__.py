"""Reverse-mode automatic differentiation: the engine, grad modes, gradient checks and
custom ``Function``s.

NOTE [Import order]
``ops`` records graph nodes from ``autograd.graph`` and reads ``autograd.grad_mode``, while
``autograd.function`` and ``autograd.gradcheck`` call ops. This package therefore imports
its low modules first; ``numbagrad/__init__`` imports ``autograd`` before ``ops``.
"""

from numbagrad.autograd import grad_mode, graph  # noqa: I001  (order matters, see NOTE)
from numbagrad.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled,
)
from numbagrad.autograd.engine import backward, grad
from numbagrad.autograd import function
from numbagrad.autograd.function import (
    Function, FunctionCtx, NestedIOFunction, once_differentiable,
)
from numbagrad.autograd.gradcheck import gradcheck, gradgradcheck
from numbagrad.autograd.graph import Node

__all__ = [
    "Function", "FunctionCtx", "NestedIOFunction", "Node", "backward", "enable_grad",
    "function", "grad", "grad_mode", "gradcheck", "gradgradcheck", "graph",
    "inference_mode", "is_grad_enabled", "no_grad", "once_differentiable", "set_grad_enabled",
]
