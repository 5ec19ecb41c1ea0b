"""Burgers equation residual u_t + u u_x - nu u_xx for a PINN with separate x and t inputs,
second derivative by a second ``autograd.grad`` call; one LBFGS step."""

import math

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import grad

torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 12), nn.Linear(12, 12), nn.Linear(12, 1)])

    def forward(self, x, t):
        h = torch.cat([x, t], dim=1)
        for layer in self.layers[:-1]:
            h = torch.tanh(layer(h))
        return self.layers[-1](h)


def residual(model, x, t, nu):
    u = model(x, t)
    u_t = grad(u, t, torch.ones_like(u), create_graph=True)[0]
    u_x = grad(u, x, torch.ones_like(u), create_graph=True)[0]
    u_xx = grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
    return u_t + u * u_x - nu * u_xx


def main():
    rng = np.random.default_rng(5)
    model = Net()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    x = torch.from_numpy(rng.uniform(-1, 1, size=(20, 1))).requires_grad_()
    t = torch.from_numpy(rng.uniform(0, 1, size=(20, 1))).requires_grad_()
    x0 = torch.linspace(-1, 1, 9).unsqueeze(1)
    t0 = torch.zeros_like(x0)
    nu = 0.01 / math.pi
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=8, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (
            residual(model, x, t, nu).pow(2).mean()
            + (model(x0, t0) + torch.sin(math.pi * x0)).pow(2).mean()
        )
        loss.backward()
        return loss

    first = closure().item()
    opt.step(closure)
    final = closure().item()
    return {"first": first, "final": final, "res": residual(model, x, t, nu)}
