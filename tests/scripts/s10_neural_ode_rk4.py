"""Neural ODE-style fit: an MLP vector field integrated with a hand-written RK4 loop,
trained by backpropagating through the solver (discretise-then-optimise)."""

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, t, y):
        return self.net(y**3)


def rk4(func, y0, t):
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        k1 = func(t[i], y)
        k2 = func(t[i] + h / 2, y + h * k1 / 2)
        k3 = func(t[i] + h / 2, y + h * k2 / 2)
        k4 = func(t[i] + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


def main():
    rng = np.random.default_rng(9)
    true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
    t = torch.linspace(0.0, 1.0, 11)
    y0 = torch.tensor([[2.0, 0.0]])
    with torch.no_grad():
        true_y = rk4(lambda t, y: torch.mm(y**3, true_A), y0, t)
    func = ODEFunc()
    with torch.no_grad():
        for p in func.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.1, size=tuple(p.shape))))
    opt = torch.optim.RMSprop(func.parameters(), lr=1e-3)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        pred_y = rk4(func, y0, t)
        loss = torch.mean(torch.abs(pred_y - true_y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"true_y": true_y, "losses": losses, "grad": func.net[0].weight.grad}
