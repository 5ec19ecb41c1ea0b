"""``torch.autograd.functional`` API tour: vjp, jvp, jacobian (vectorized and not), hessian,
vhp/hvp of a log-likelihood with several inputs."""

import numpy as np
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.set_default_dtype(torch.float64)


def loglik(mu, log_sigma, data):
    return (-0.5 * ((data - mu) / log_sigma.exp()) ** 2 - log_sigma).sum()


def exp_reducer(x):
    return x.exp().sum(dim=1)


def main():
    rng = np.random.default_rng(31)
    data = torch.from_numpy(rng.normal(1.0, 2.0, size=20))
    mu = torch.tensor(0.5)
    ls = torch.tensor(0.3)
    inputs = torch.from_numpy(rng.uniform(size=(4, 4)))
    v4 = torch.ones(4)
    _, g_vjp = vjp(exp_reducer, inputs, v4)
    _, g_jvp = jvp(exp_reducer, inputs, torch.ones(4, 4))
    J = jacobian(exp_reducer, inputs)
    Jv = jacobian(exp_reducer, inputs, vectorize=True)
    H = hessian(lambda m, s: loglik(m, s, data), (mu, ls))
    _, vh = vhp(lambda m, s: loglik(m, s, data), (mu, ls), (torch.tensor(1.0), torch.tensor(-1.0)))
    _, hv = hvp(lambda m, s: loglik(m, s, data), (mu, ls), (torch.tensor(1.0), torch.tensor(-1.0)))
    return {
        "g_vjp": g_vjp,
        "g_jvp": g_jvp,
        "J": J,
        "Jv": Jv,
        "H": torch.stack([torch.stack([H[0][0], H[0][1]]), torch.stack([H[1][0], H[1][1]])]),
        "vh": torch.stack(list(vh)),
        "hv": torch.stack(list(hv)),
    }
