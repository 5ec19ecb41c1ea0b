"""Straight-through estimator: a binarised linear layer trained with SGD.

Pattern: ``autograd.Function`` whose forward is ``sign`` and whose backward passes the
gradient through where |x| <= 1 (BinaryConnect / BitNet-style STE).
"""

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Function

torch.set_default_dtype(torch.float64)


class SignSTE(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        mask = input.ge(-1) & input.le(1)
        return torch.where(mask, grad_output, torch.zeros_like(grad_output))


class BinaryLinear(nn.Linear):
    def forward(self, x):
        return nn.functional.linear(x, SignSTE.apply(self.weight), self.bias)


def main():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(32, 4)))
    w_true = torch.tensor([[1.0, -1.0, 1.0, 1.0]])
    y = (x @ w_true.t() > 0).double()
    model = nn.Sequential(BinaryLinear(4, 1), nn.Sigmoid())
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, size=(1, 4))))
        model[0].bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.BCELoss()
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    acc = ((model(x) > 0.5).double() == y).double().mean()
    return {
        "losses": losses,
        "weight": model[0].weight,
        "accuracy": acc.item(),
        "grad": model[0].weight.grad,
    }
