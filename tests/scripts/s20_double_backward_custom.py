"""Double backward with custom functions (PyTorch tutorial): a Square Function whose backward
is built from differentiable ops, and a Tanh Function saving its output; second derivatives
via ``autograd.grad(create_graph=True)`` and ``gradgradcheck``."""

import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


class Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.tanh(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return grad_out * (1 - out**2)


def main():
    x = torch.linspace(-1.5, 1.5, 7, dtype=torch.double, requires_grad=True)
    ok = torch.autograd.gradcheck(Square.apply, x) and torch.autograd.gradgradcheck(Square.apply, x)
    ok = ok and torch.autograd.gradgradcheck(Tanh.apply, x)
    y = Tanh.apply(Square.apply(x)).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    ref = torch.tanh(x**2).sum()
    (gr,) = torch.autograd.grad(ref, x, create_graph=True)
    (ggr,) = torch.autograd.grad(gr.sum(), x)
    return {"ok": float(ok), "g": g, "gg": gg, "match": float(torch.allclose(gg, ggr))}
