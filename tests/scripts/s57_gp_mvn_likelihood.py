"""Gaussian-process hyper-parameters by LBFGS on ``-MultivariateNormal(0, K).log_prob(y)``
(the form GP tutorials write with ``torch.distributions``), then the posterior predictive
drawn as a batched ``MultivariateNormal`` and its KL to the prior."""

import numpy as np
import torch
from torch.distributions import MultivariateNormal, kl_divergence

torch.set_default_dtype(torch.float64)


def rbf(a, b, log_ell, log_sf):
    d2 = (a.unsqueeze(-2) - b.unsqueeze(-3)).pow(2).sum(-1)
    return log_sf.exp() * torch.exp(-0.5 * d2 / log_ell.exp() ** 2)


def main():
    rng = np.random.default_rng(57)
    x = torch.from_numpy(rng.uniform(-2, 2, size=(12, 1)))
    y = torch.cos(2 * x[:, 0]) + 0.05 * torch.from_numpy(rng.normal(size=12))
    log_ell = torch.tensor(0.0, requires_grad=True)
    log_sf = torch.tensor(0.0, requires_grad=True)
    log_noise = torch.tensor(-3.0, requires_grad=True)
    opt = torch.optim.LBFGS(
        [log_ell, log_sf, log_noise], lr=0.5, max_iter=20, line_search_fn="strong_wolfe"
    )

    def closure():
        opt.zero_grad()
        K = rbf(x, x, log_ell, log_sf) + log_noise.exp() * torch.eye(12)
        nll = -MultivariateNormal(torch.zeros(12), covariance_matrix=K).log_prob(y)
        nll.backward()
        return nll

    nll = opt.step(closure)
    with torch.no_grad():
        K = rbf(x, x, log_ell, log_sf) + log_noise.exp() * torch.eye(12)
        xs = torch.linspace(-2, 2, 5).unsqueeze(-1)
        Ks = rbf(xs, x, log_ell, log_sf)
        L = torch.linalg.cholesky(K)
        mean = Ks @ torch.cholesky_solve(y.unsqueeze(-1), L)
        v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
        cov = rbf(xs, xs, log_ell, log_sf) - v.T @ v + 1e-6 * torch.eye(5)
        post = MultivariateNormal(mean.squeeze(-1), scale_tril=torch.linalg.cholesky(cov))
        prior = MultivariateNormal(
            torch.zeros(5), rbf(xs, xs, log_ell, log_sf) + 1e-6 * torch.eye(5)
        )
    return {
        "nll": nll.item(),
        "hyper": torch.stack([log_ell, log_sf, log_noise]).detach(),
        "mean": post.mean,
        "var": post.variance,
        "entropy": post.entropy().item(),
        "kl": kl_divergence(post, prior).item(),
    }


TOLERANCE = {"var": (1e-5, 1e-10), "entropy": (1e-6, 1e-9), "kl": (1e-6, 1e-9)}
