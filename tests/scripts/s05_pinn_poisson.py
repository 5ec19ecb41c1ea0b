"""Physics-informed network for -u'' = pi^2 sin(pi x) on [0, 1] with u(0) = u(1) = 0:
residual from ``autograd.grad(..., create_graph=True)``, trained with Adam."""

import math

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class PINN(nn.Module):
    def __init__(self, width=10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1)
        )

    def forward(self, x):
        return self.net(x)


def pde_loss(model, x):
    u = model(x)
    du_dx = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True, retain_graph=True)[0]
    d2u_dx2 = torch.autograd.grad(du_dx, x, torch.ones_like(du_dx), create_graph=True)[0]
    return nn.MSELoss()(-d2u_dx2, math.pi**2 * torch.sin(math.pi * x))


def main():
    rng = np.random.default_rng(4)
    model = PINN()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.7, size=tuple(p.shape))))
    x = torch.linspace(0, 1, 16).reshape(-1, 1).requires_grad_(True)
    xb = torch.tensor([[0.0], [1.0]])
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    history = []
    for _ in range(15):
        opt.zero_grad()
        loss = pde_loss(model, x) + (model(xb) ** 2).mean()
        loss.backward()
        opt.step()
        history.append(loss.item())
    return {"history": history, "u": model(x.detach()), "last_w_grad": model.net[0].weight.grad}
