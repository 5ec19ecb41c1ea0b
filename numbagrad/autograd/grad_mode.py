"""Grad modes (``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``).

They live in the core layer (``numbagrad._core.grad_mode``), below the ops that read
them; this module is their public home, as ``torch.autograd.grad_mode`` is.
"""

from numbagrad._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]
