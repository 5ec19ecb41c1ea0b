"""Unadjusted Langevin dynamics on a 2-D Gaussian mixture: the score is the gradient of
``logsumexp`` of component log-densities, obtained with ``torch.autograd.grad``."""

import math

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

MEANS = torch.tensor([[-2.0, 0.0], [2.0, 0.5], [0.0, 2.5]])
LOG_W = torch.log(torch.tensor([0.3, 0.5, 0.2]))


def log_density(x):
    d2 = ((x.unsqueeze(1) - MEANS.unsqueeze(0)) ** 2).sum(-1)
    return torch.logsumexp(LOG_W - 0.5 * d2 - math.log(2 * math.pi), dim=1)


def score(x):
    x = x.detach().requires_grad_(True)
    return torch.autograd.grad(log_density(x).sum(), x)[0]


def main():
    rng = np.random.default_rng(26)
    x = torch.from_numpy(rng.normal(size=(50, 2)))
    step = 0.05
    for _ in range(40):
        noise = torch.from_numpy(rng.normal(size=(50, 2)))
        x = x + step * score(x) + math.sqrt(2 * step) * noise
    responsibilities = torch.softmax(LOG_W - 0.5 * ((x.unsqueeze(1) - MEANS) ** 2).sum(-1), dim=1)
    return {
        "x": x,
        "mean": x.mean(0),
        "cov": torch.cov(x.T),
        "resp": responsibilities.mean(0),
        "logp": log_density(x).mean().item(),
    }
