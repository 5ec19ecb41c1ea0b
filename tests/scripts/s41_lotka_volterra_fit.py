"""Parameter estimation for Lotka-Volterra with an explicit Euler integrator written with
``unbind``/``stack``, a log-spaced grid search of the initial learning rate (``logspace``),
``Tensor.repeat`` for batched initial conditions and Adam on log-parameters."""

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def simulate(theta, y0, n_steps=60, dt=0.05):
    alpha, beta, delta, gamma = theta.unbind()
    ys = [y0]
    y = y0
    for _ in range(n_steps):
        prey, pred = y.unbind(-1)
        dprey = alpha * prey - beta * prey * pred
        dpred = delta * prey * pred - gamma * pred
        y = y + dt * torch.stack([dprey, dpred], dim=-1)
        ys.append(y)
    return torch.stack(ys, dim=-2)


def main():
    rng = np.random.default_rng(41)
    true_theta = torch.tensor([1.1, 0.4, 0.1, 0.4])
    y0 = torch.tensor([[10.0, 5.0]]).repeat(3, 1) * torch.tensor([[1.0], [0.8], [1.2]])
    with torch.no_grad():
        data = simulate(true_theta, y0)
        data = data * torch.from_numpy(np.exp(0.02 * rng.normal(size=tuple(data.shape))))
    results = {}
    for lr in torch.logspace(-2.5, -1.5, 3).tolist():
        log_theta = torch.log(torch.tensor([1.0, 0.5, 0.2, 0.5])).requires_grad_()
        opt = torch.optim.Adam([log_theta], lr=lr)
        for _ in range(15):
            opt.zero_grad()
            loss = ((torch.log(simulate(log_theta.exp(), y0)) - torch.log(data)) ** 2).mean()
            loss.backward()
            opt.step()
        results[f"lr_{lr:.4f}"] = loss.item()
        results[f"theta_{lr:.4f}"] = log_theta.detach().exp()
    results["first_rows"] = data[:, 0]
    return results
