"""Gaussian-process regression: RBF kernel hyper-parameters fitted by maximising the log
marginal likelihood with Cholesky, ``cholesky_solve`` and the log-determinant."""

import math

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class GP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.log_outputscale = nn.Parameter(torch.tensor(0.0))
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def kernel(self, a, b):
        d2 = torch.cdist(a, b).pow(2)
        return self.log_outputscale.exp() * torch.exp(-0.5 * d2 / self.log_lengthscale.exp() ** 2)

    def nll(self, x, y):
        n = x.shape[0]
        K = self.kernel(x, x) + self.log_noise.exp() * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
        return (
            0.5 * (y.unsqueeze(-1) * alpha).sum()
            + torch.log(torch.diagonal(L)).sum()
            + 0.5 * n * math.log(2 * math.pi)
        )

    def predict(self, x, y, xs):
        K = self.kernel(x, x) + self.log_noise.exp() * torch.eye(x.shape[0])
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(xs, x)
        mean = Ks @ torch.cholesky_solve(y.unsqueeze(-1), L)
        v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
        var = self.log_outputscale.exp() - (v**2).sum(0)
        return mean.squeeze(-1), var


def main():
    rng = np.random.default_rng(8)
    x = torch.from_numpy(np.sort(rng.uniform(-3, 3, size=(15, 1)), axis=0))
    y = torch.sin(x).squeeze(-1) + 0.1 * torch.from_numpy(rng.normal(size=15))
    gp = GP()
    opt = torch.optim.Adam(gp.parameters(), lr=0.05)
    nlls = []
    for _ in range(25):
        opt.zero_grad()
        loss = gp.nll(x, y)
        loss.backward()
        opt.step()
        nlls.append(loss.item())
    with torch.no_grad():
        mean, var = gp.predict(x, y, torch.linspace(-3, 3, 7).unsqueeze(-1))
    K = gp.kernel(x, x).detach() + 0.01 * torch.eye(15)
    _sign, logabsdet = torch.linalg.slogdet(K)
    return {
        "nll": nlls,
        "lengthscale": gp.log_lengthscale.exp().item(),
        "mean": mean,
        "var": var,
        "logdet": logabsdet.item(),
        "logdet2": torch.logdet(K).item(),
    }
