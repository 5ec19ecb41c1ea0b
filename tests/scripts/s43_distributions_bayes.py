"""Bayesian linear regression by variational inference with ``torch.distributions``:
a mean-field ``Normal`` posterior, reparameterised ``rsample`` with a fixed base draw,
``log_prob`` likelihood and analytic ``kl_divergence`` to the prior."""

import numpy as np
import torch
from torch.distributions import Normal, kl_divergence

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(43)
    X = torch.from_numpy(rng.normal(size=(30, 2)))
    y = X @ torch.tensor([1.5, -0.7]) + 0.2 * torch.from_numpy(rng.normal(size=30))
    mu = torch.zeros(2, requires_grad=True)
    rho = torch.full((2,), -1.0, requires_grad=True)
    prior = Normal(torch.zeros(2), torch.ones(2))
    opt = torch.optim.Adam([mu, rho], lr=0.05)
    elbos = []
    for _ in range(30):
        eps = torch.from_numpy(rng.normal(size=(8, 2)))
        q = Normal(mu, torch.nn.functional.softplus(rho))
        w = q.loc + q.scale * eps
        lik = Normal(w @ X.T, 0.2).log_prob(y).sum(-1).mean()
        elbo = lik - kl_divergence(q, prior).sum()
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
        elbos.append(elbo.item())
    return {
        "elbo": elbos,
        "mu": mu.detach(),
        "entropy": q.entropy().detach(),
        "cdf": Normal(0.0, 1.0).cdf(torch.tensor([0.5, 1.5])),
    }
