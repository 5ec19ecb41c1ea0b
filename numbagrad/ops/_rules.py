"""Rule families shared by many primitives, so that each formula is stated once.

- ``Unary`` ops (``ops/unary.py``) state a local derivative ``derivative(m, s)``.
- ``both_ways(formula)`` turns one VJP formula written with operators and ``m.<name>``
  calls into the tensor rule (``m`` = the op namespace, differentiable) and the fused
  array rule (``m`` = the backend's array math), the pattern of PyTorch's
  ``derivatives.yaml`` entries that serve both its autograd and its fused kernels.
- ``linear`` marks ops whose VJP is the adjoint op applied to ``g`` (no saved values).
"""

from __future__ import annotations

from numbagrad import ops as F

__all__ = ["both_ways", "passthrough"]


def both_ways(formula):
    """``(vjp, fused_vjp)`` from ``formula(m, ctx, saved, *grads, **params)``.

    ``saved`` is ``ctx.saved()`` (tensors) for the VJP and ``ctx.saved_arrays()`` for the
    fused rule; ``m`` is the matching math namespace (NOTE [Backends]).
    """
    def vjp(ctx, *grads, **params):
        return formula(F, ctx, ctx.saved(), *grads, **params)

    def fused_vjp(ctx, *grads, **params):
        return formula(ctx.be.math, ctx, ctx.saved_arrays(), *grads, **params)

    vjp.__name__ = fused_vjp.__name__ = formula.__name__
    vjp.__doc__ = fused_vjp.__doc__ = formula.__doc__
    return staticmethod(vjp), staticmethod(fused_vjp)


def passthrough(ctx, *grads, **params):
    """The VJP of an op whose gradient is its output gradient, unchanged (tensors and
    arrays alike): ``clone``, ``expand`` (the engine sums the broadcast back)."""
    return grads[0]
