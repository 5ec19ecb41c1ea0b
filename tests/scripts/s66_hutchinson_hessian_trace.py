"""Stochastic Hessian trace and diagonal estimators as curvature / sharpness code (PyHessian,
AdaHessian, Hutch++) writes them: Rademacher probes drawn with NumPy; Hessian-vector
products by forward-over-reverse (``torch.func.jvp`` of ``torch.func.grad``) batched over the
probes with ``vmap``, and by double backward with ``autograd.grad(..., is_grads_batched=True)``;
Hutchinson's trace and diagonal (Bekas) estimators, Hutch++ (low-rank part from
``torch.linalg.qr`` of a sketch), power iteration for the top eigenvalue; the exact Hessian
from ``torch.func.hessian`` and ``torch.autograd.functional.hessian(vectorize=True,
outer_jacobian_strategy='forward-mode')``; ``autograd.functional.hvp``/``vhp`` with
``create_graph=True``; a Gauss-Newton / Fisher diagonal from per-sample Jacobians
``vmap(jacrev(...))`` and the empirical Fisher from ``vmap(grad(...))``; and the gradient of
a Hutchinson trace penalty (third derivatives: ``grad`` of ``vmap`` of ``jvp`` of ``grad``)."""

import numpy as np
import torch
from torch.autograd.functional import hessian as af_hessian
from torch.autograd.functional import hvp as af_hvp
from torch.autograd.functional import vhp as af_vhp
from torch.func import grad, hessian, jacrev, jvp, vmap

torch.set_default_dtype(torch.float64)

SIZES = [(3, 5), (5, 2)]


def unflatten(theta):
    params, i = [], 0
    for n_in, n_out in SIZES:
        w = theta[i : i + n_in * n_out].reshape(n_out, n_in)
        i += n_in * n_out
        b = theta[i : i + n_out]
        i += n_out
        params.append((w, b))
    return params


def net(theta, x):
    (w1, b1), (w2, b2) = unflatten(theta)
    h = torch.tanh(x @ w1.T + b1)
    return h @ w2.T + b2


def main():
    rng = np.random.default_rng(66)
    n_params = sum(i * o + o for i, o in SIZES)
    theta = torch.from_numpy(rng.normal(0, 0.6, size=n_params))
    x = torch.from_numpy(rng.normal(size=(12, 3)))
    y = torch.from_numpy(rng.normal(size=(12, 2)))

    def loss(th):
        return 0.5 * ((net(th, x) - y) ** 2).sum(-1).mean() + 0.01 * (th**4).sum()

    out = {}
    H = hessian(loss)(theta)
    out["trace_exact"] = torch.trace(H)
    out["diag_exact"] = torch.diagonal(H)

    k = 24
    V = torch.from_numpy(rng.choice([-1.0, 1.0], size=(k, n_params)))

    def hvp_fwd(v):
        return jvp(grad(loss), (theta,), (v,))[1]

    HV = vmap(hvp_fwd)(V)
    out["hv_fwd_vs_exact"] = (HV - V @ H).abs().max()

    # the same products by double backward, all probes at once
    th = theta.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(loss(th), th, create_graph=True)
    (HV2,) = torch.autograd.grad(g, th, grad_outputs=V, is_grads_batched=True, retain_graph=True)
    out["hv_batched_backward"] = HV2
    out["hv_fwd_vs_rev"] = (HV - HV2).abs().max()

    # Hutchinson (trace) and Bekas (diagonal) estimators
    out["trace_hutchinson"] = (V * HV).sum(1).mean()
    out["diag_bekas"] = (V * HV).mean(0)

    # Hutch++: exact trace on a sketched range, Hutchinson on its complement
    S = torch.from_numpy(rng.choice([-1.0, 1.0], size=(n_params, 6)))
    G = torch.from_numpy(rng.choice([-1.0, 1.0], size=(n_params, 6)))
    Q, _ = torch.linalg.qr(vmap(hvp_fwd, in_dims=1, out_dims=1)(S))
    HQ = vmap(hvp_fwd, in_dims=1, out_dims=1)(Q)
    Gp = G - Q @ (Q.T @ G)
    HGp = vmap(hvp_fwd, in_dims=1, out_dims=1)(Gp)
    out["trace_hutchpp"] = torch.trace(Q.T @ HQ) + torch.trace(Gp.T @ HGp) / 6

    # top eigenvalue by power iteration on double-backward HVPs (PyHessian style)
    v = V[0] / V[0].norm()
    eig = torch.tensor(0.0)
    for _ in range(30):
        (hv,) = torch.autograd.grad(g, th, grad_outputs=v, retain_graph=True)
        eig = hv @ v
        v = hv / hv.norm()
    out["top_eig_power"] = eig
    out["top_eig_exact"] = torch.linalg.eigvalsh(H)[-1]

    # torch.autograd.functional: vectorized Hessian (forward-over-reverse) and hvp/vhp
    H_af = af_hessian(loss, theta, vectorize=True, outer_jacobian_strategy="forward-mode")
    out["H_af_vs_func"] = (H_af - H).abs().max()
    t0 = theta.detach().requires_grad_(True)
    val, hv_cg = af_hvp(loss, t0, V[1], create_graph=True)
    _, vh_cg = af_vhp(loss, t0, V[1], create_graph=True)
    out["hvp_value"] = val
    out["hvp_af"] = hv_cg
    out["vhp_minus_hvp"] = (vh_cg - hv_cg).abs().max()
    # d/dtheta of v.Hv through the create_graph HVP (third derivatives)
    (g3,) = torch.autograd.grad(hv_cg @ V[1], t0)
    out["grad_vHv_af"] = g3

    # Gauss-Newton diagonal: per-sample output Jacobians; empirical Fisher from per-sample grads
    J = vmap(jacrev(lambda th, xi: net(th, xi.unsqueeze(0)).squeeze(0)), in_dims=(None, 0))(
        theta, x
    )
    out["ggn_diag"] = (J**2).sum(1).mean(0)
    ggn = torch.einsum("nop,noq->pq", J, J) / x.shape[0]
    out["ggn_trace_vs_diag"] = (torch.trace(ggn) - out["ggn_diag"].sum()).abs()

    def sample_loss(th, xi, yi):
        return 0.5 * ((net(th, xi.unsqueeze(0)).squeeze(0) - yi) ** 2).sum()

    per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(theta, x, y)
    out["emp_fisher_diag"] = (per_sample**2).mean(0)

    # trace-penalty gradient (Hessian-trace regulariser): grad of the Hutchinson estimate
    def trace_penalty(th):
        hv = vmap(lambda v: jvp(grad(loss), (th,), (v,))[1])(V[:6])
        return (V[:6] * hv).sum(1).mean()

    out["trace_penalty_grad"] = grad(trace_penalty)(theta)
    (gp,) = torch.autograd.grad(
        (V[:6] * torch.autograd.grad(g, th, V[:6], is_grads_batched=True, create_graph=True)[0])
        .sum(1)
        .mean(),
        th,
    )
    out["trace_penalty_grad_rev"] = gp
    return out


TOLERANCE = {
    "hv_fwd_vs_exact": (1e-6, 1e-12),
    "hv_fwd_vs_rev": (1e-6, 1e-12),
    "H_af_vs_func": (1e-6, 1e-12),
    "vhp_minus_hvp": (1e-6, 1e-12),
    "ggn_trace_vs_diag": (1e-6, 1e-12),
    "top_eig_power": (1e-5, 1e-9),
}
