"""Gradient-based MCMC as NumPyro/BlackJAX ports to PyTorch write it: the potential's gradient
from ``torch.func.grad_and_value`` (with ``has_aux`` carrying the log-likelihood), HMC with
leapfrog steps in a Python loop and a Metropolis correction, many chains at once with
``vmap`` over the chain axis (``in_dims=(0, None)``), MALA with the asymmetric proposal
correction, a preconditioned (Laplace) mass matrix from ``torch.func.hessian`` at the MAP
point with ``torch.linalg.cholesky``/``cholesky_solve``/``solve_triangular``; targets are a
Bayesian logistic regression (``binary_cross_entropy_with_logits``) and Neal's funnel via
``torch.distributions.Normal(...).log_prob`` under ``grad``/``vmap``. Every random draw
(momenta, proposal noise, acceptance uniforms) comes from NumPy."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributions import Normal
from torch.func import grad, grad_and_value, hessian, vmap

torch.set_default_dtype(torch.float64)


def make_logreg(rng):
    X = torch.from_numpy(rng.normal(size=(40, 3)))
    w_true = torch.tensor([1.5, -2.0, 0.5])
    p = torch.sigmoid(X @ w_true).numpy()
    y = torch.from_numpy((rng.uniform(size=40) < p).astype(np.float64))

    def potential(w, X=X, y=y):
        loglik = -F.binary_cross_entropy_with_logits(X @ w, y, reduction="sum")
        logprior = Normal(0.0, 2.0).log_prob(w).sum()
        return -(loglik + logprior), loglik

    return potential


def funnel_potential(z):
    v, x = z[0], z[1:]
    lp = Normal(0.0, 3.0).log_prob(v) + Normal(0.0, torch.exp(v / 2)).log_prob(x).sum()
    return -lp


def leapfrog(grad_u, q, p, eps, n_steps, minv):
    g, _ = grad_u(q)
    p = p - 0.5 * eps * g
    for i in range(n_steps):
        q = q + eps * minv * p
        g, _ = grad_u(q)
        if i < n_steps - 1:
            p = p - eps * g
    p = p - 0.5 * eps * g
    return q, p


def hmc_chain(potential, q0, n_iter, eps, n_steps, rng, minv=None):
    gv = grad_and_value(potential, has_aux=True)

    def grad_u(q):
        g, (u, _) = gv(q)
        return g, u

    minv = torch.ones_like(q0) if minv is None else minv
    q = q0
    samples, accepts = [], []
    for _ in range(n_iter):
        p0 = torch.from_numpy(rng.normal(size=q.shape[0])) / minv.sqrt()
        q_new, p_new = leapfrog(grad_u, q, p0, eps, n_steps, minv)
        h0 = potential(q)[0] + 0.5 * (minv * p0**2).sum()
        h1 = potential(q_new)[0] + 0.5 * (minv * p_new**2).sum()
        log_u = float(np.log(rng.uniform()))
        accept = log_u < float(h0 - h1)
        if accept:
            q = q_new
        samples.append(q)
        accepts.append(accept)
    return torch.stack(samples), accepts


def mala_step_batched(potential, q, eps, noise, log_u):
    """One MALA step for a batch of chains (rows of q)."""
    grad_u = vmap(grad(lambda z: potential(z)))
    u = vmap(potential)
    g = grad_u(q)
    prop = q - eps * g + (2 * eps) ** 0.5 * noise
    g_prop = grad_u(prop)

    def log_q(to, frm, g_frm):
        return -((to - frm + eps * g_frm) ** 2).sum(-1) / (4 * eps)

    log_alpha = -u(prop) + u(q) + log_q(q, prop, g_prop) - log_q(prop, q, g)
    acc = log_u < log_alpha
    return torch.where(acc[:, None], prop, q), acc


def main():
    rng = np.random.default_rng(68)
    potential = make_logreg(rng)
    out = {}

    # MAP by a few Newton steps, Laplace mass matrix
    w = torch.zeros(3)
    for _ in range(6):
        g, _aux = grad(potential, has_aux=True)(w)
        H = hessian(lambda z: potential(z)[0])(w)
        L = torch.linalg.cholesky(H)
        w = w - torch.cholesky_solve(g[:, None], L)[:, 0]
    out["map"] = w
    out["laplace_cov"] = torch.cholesky_inverse(L)
    Linv = torch.linalg.solve_triangular(L, torch.eye(3), upper=False)
    out["laplace_cov_tri"] = Linv.T @ Linv

    samples, acc = hmc_chain(potential, w, n_iter=12, eps=0.15, n_steps=5, rng=rng)
    out["hmc_samples"] = samples
    out["hmc_accept"] = np.array(acc)
    minv = torch.diagonal(out["laplace_cov"])
    samples_pc, acc_pc = hmc_chain(potential, w, 8, 0.5, 4, rng, minv=minv)
    out["hmc_precond"] = samples_pc
    out["hmc_precond_accept"] = np.array(acc_pc)

    # many HMC chains at once: leapfrog vmapped over the chain axis
    q0 = torch.from_numpy(rng.normal(size=(6, 3)))
    p0 = torch.from_numpy(rng.normal(size=(6, 3)))

    def gu(q):
        g, (u, _) = grad_and_value(potential, has_aux=True)(q)
        return g, u

    def lf(q, p, eps):
        return leapfrog(gu, q, p, eps, 6, torch.ones(3))

    qT, pT = vmap(lf, in_dims=(0, 0, None))(q0, p0, 0.1)
    energy = lambda q, p: potential(q)[0] + 0.5 * (p**2).sum()  # noqa: E731
    e0 = vmap(energy)(q0, p0)
    e1 = vmap(energy)(qT, pT)
    out["lf_batched_q"] = qT
    out["lf_energy_err"] = (e1 - e0).abs()
    q_loop = torch.stack([lf(q0[i], p0[i], 0.1)[0] for i in range(6)])
    out["lf_batched_vs_loop"] = (q_loop - qT).abs().max()
    # reversibility: flip the momentum and integrate back
    qB, _ = vmap(lf, in_dims=(0, 0, None))(qT, -pT, 0.1)
    out["lf_reversibility"] = (qB - q0).abs().max()

    # MALA on Neal's funnel, 8 chains at once
    q = torch.from_numpy(rng.normal(size=(8, 4)))
    accs = []
    for _ in range(10):
        noise = torch.from_numpy(rng.normal(size=(8, 4)))
        log_u = torch.from_numpy(np.log(rng.uniform(size=8)))
        q, acc = mala_step_batched(funnel_potential, q, 0.05, noise, log_u)
        accs.append(acc)
    out["mala_state"] = q
    out["mala_accept"] = torch.stack(accs)
    out["funnel_grad"] = vmap(grad(funnel_potential))(q)
    out["funnel_hess_diag"] = vmap(lambda z: torch.diagonal(hessian(funnel_potential)(z)))(q)
    return out


TOLERANCE = {"lf_batched_vs_loop": (1e-6, 1e-12), "lf_reversibility": (1e-6, 1e-10)}
