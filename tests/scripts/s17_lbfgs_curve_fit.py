"""Non-linear least squares with LBFGS: fit a damped oscillation a exp(-b t) cos(w t + phi)
to noisy data, parameters as ``nn.Parameter``s in a tiny Module."""

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class Damped(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.tensor(1.0))
        self.b = nn.Parameter(torch.tensor(0.3))
        self.w = nn.Parameter(torch.tensor(2.5))
        self.phi = nn.Parameter(torch.tensor(0.1))

    def forward(self, t):
        return self.a * torch.exp(-self.b * t) * torch.cos(self.w * t + self.phi)


def main():
    rng = np.random.default_rng(15)
    t = torch.linspace(0, 6, 60)
    y = 1.5 * torch.exp(-0.4 * t) * torch.cos(3.0 * t + 0.2) + 0.01 * torch.from_numpy(
        rng.normal(size=60)
    )
    model = Damped()
    opt = torch.optim.LBFGS(
        model.parameters(),
        lr=1,
        max_iter=50,
        history_size=10,
        line_search_fn="strong_wolfe",
        tolerance_grad=1e-10,
        tolerance_change=1e-14,
    )

    def closure():
        opt.zero_grad()
        loss = ((model(t) - y) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        loss = opt.step(closure)
    fitted = torch.stack([model.a, model.b, model.w, model.phi]).detach()
    return {"loss": loss.item(), "params": fitted, "n_iter": float(opt.state[model.a]["n_iter"])}
