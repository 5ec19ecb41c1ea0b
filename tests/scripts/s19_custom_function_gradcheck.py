"""Extending autograd (docs): a LinearFunction and MulConstant with ``needs_input_grad``,
``setup_context``-style and classic forms, verified with ``gradcheck``/``gradgradcheck``."""

import numpy as np
import torch
from torch.autograd import Function, gradcheck, gradgradcheck


class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


def main():
    rng = np.random.default_rng(16)
    inp = (
        torch.from_numpy(rng.normal(size=(5, 4))).requires_grad_(),
        torch.from_numpy(rng.normal(size=(3, 4))).requires_grad_(),
        torch.from_numpy(rng.normal(size=3)).requires_grad_(),
    )
    ok1 = gradcheck(LinearFunction.apply, inp, eps=1e-6, atol=1e-4)
    ok2 = gradgradcheck(LinearFunction.apply, inp)
    out = LinearFunction.apply(*inp)
    out.sum().backward()
    x = torch.from_numpy(rng.normal(size=4)).requires_grad_()
    y = MulConstant.apply(Exp.apply(x), 2.5)
    y.backward(torch.ones_like(y))
    ok3 = gradcheck(lambda t: Exp.apply(MulConstant.apply(t, 0.5)), (x,))
    return {
        "ok": float(ok1 and ok2 and ok3),
        "out": out,
        "w_grad": inp[1].grad,
        "b_grad": inp[2].grad,
        "x_grad": x.grad,
    }
