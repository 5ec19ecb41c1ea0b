"""The less common ``autograd.Function`` features scripts rely on: ``mark_non_differentiable``
for an index output, ``set_materialize_grads(False)`` with ``None`` gradients,
``once_differentiable``, ``mark_dirty`` for an in-place op, non-tensor saved state, and
``generate_vmap_rule`` so the Function works under ``torch.func.vmap``/``grad``."""

import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable

torch.set_default_dtype(torch.float64)


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        (idx,) = ctx.saved_tensors
        return torch.zeros_like(g_values).scatter(-1, idx, g_values)


class TwoOutputs(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.exp(), x.sin()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        out = torch.zeros_like(x)
        if g1 is not None:
            out = out + g1 * x.exp()
        if g2 is not None:
            out = out + g2 * x.cos()
        return out


class ScaleInplace(Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        x.mul_(factor)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class Cube(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g


def main():
    x = torch.tensor([[0.3, -1.2, 2.0], [1.0, 0.5, -0.1]], requires_grad=True)
    values, idx = SortWithIndices.apply(x)
    (values * torch.arange(1.0, 4.0)).sum().backward()
    g_sort = x.grad.clone()
    x.grad = None
    a, _b = TwoOutputs.apply(x)
    a.sum().backward()  # only the first output used: g2 arrives as None
    g_two = x.grad.clone()
    y = x.detach().clone().requires_grad_()
    z = y * 1.0
    ScaleInplace.apply(z, 2.5)
    z.sum().backward()
    xs = torch.linspace(-1, 1, 4)
    per_example = torch.func.vmap(torch.func.grad(lambda t: Cube.apply(t)))(xs)
    return {
        "values": values,
        "idx": idx,
        "idx_requires_grad": float(idx.requires_grad),
        "g_sort": g_sort,
        "g_two": g_two,
        "g_inplace": y.grad,
        "per_example": per_example,
    }
