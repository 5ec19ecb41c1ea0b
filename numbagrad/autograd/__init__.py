"""Reverse-mode automatic differentiation: the engine, grad modes, gradient checks and
custom ``Function``s.

The grad modes and graph nodes live in the core layer below the ops
(``numbagrad._core``, NOTE [Layers]); this package re-exports them as PyTorch's
``torch.autograd`` does.
"""

from numbagrad._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from numbagrad.autograd import (
    _function_transforms,
    anomaly_mode,
    engine,
    forward_ad,
    function,
    functional,
    grad_mode,
    graph,
    profiler,
)
from numbagrad.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from numbagrad.autograd.engine import backward, grad
from numbagrad.autograd.function import (
    Function,
    FunctionCtx,
    NestedIOFunction,
    once_differentiable,
)
from numbagrad.autograd.gradcheck import gradcheck, gradgradcheck
from numbagrad.autograd.graph import Node
from numbagrad.autograd.variable import Variable

__all__ = [
    "Function",
    "FunctionCtx",
    "NestedIOFunction",
    "Node",
    "Variable",
    "anomaly_mode",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "engine",
    "forward_ad",
    "function",
    "functional",
    "grad",
    "grad_mode",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "profiler",
    "set_detect_anomaly",
    "set_grad_enabled",
]
