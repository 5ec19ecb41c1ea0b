"""Hamiltonian neural network (Greydanus et al.): a scalar H(q, p) network whose symplectic
gradient (dH/dp, -dH/dq) is fitted to the vector field of a harmonic oscillator."""

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class HNN(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(2, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )
        J = torch.eye(2)
        self.register_buffer("J", torch.cat([J[1:], -J[:1]]))

    def forward(self, x):
        return self.mlp(x)

    def time_derivative(self, x):
        H = self.forward(x).sum()
        dH = torch.autograd.grad(H, x, create_graph=True)[0]
        return dH @ self.J.t()


def main():
    rng = np.random.default_rng(10)
    model = HNN()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    x = torch.from_numpy(rng.normal(size=(25, 2))).requires_grad_()
    dxdt = torch.stack([x[:, 1], -x[:, 0]], dim=1).detach()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    losses = []
    for _ in range(12):
        opt.zero_grad()
        loss = (model.time_derivative(x) - dxdt).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "J": model.J, "field": model.time_derivative(x)}
