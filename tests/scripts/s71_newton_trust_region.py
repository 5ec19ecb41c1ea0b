"""Second-order optimisation as research code writes it with ``torch.func``: damped Newton,
saddle-free Newton (|H|^-1 g from ``torch.linalg.eigh``) and a trust-region step whose
subproblem is solved exactly in the eigenbasis (More-Sorensen secular equation by Newton's
method on lambda), on Himmelblau's and a Rosenbrock-type function; batched Newton from many
starts with ``vmap`` over ``hessian``/``grad``; ``hessian`` with ``argnums=(0, 1)`` (a
nested tuple of blocks); natural-gradient descent for a softmax policy and a Gaussian
family with the Fisher matrix from ``jacfwd(..., has_aux=True)``/``jacrev(has_aux=True)``
and ``torch.linalg.pinv``/``lstsq``; and a Newton step differentiated w.r.t. the data
(``torch.autograd.functional.hessian`` and ``jacobian`` with ``create_graph=True``,
``vectorize=True``, ``strategy='forward-mode'``)."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd.functional import hessian as af_hessian
from torch.autograd.functional import jacobian as af_jacobian
from torch.func import grad, hessian, jacfwd, jacrev, vmap

torch.set_default_dtype(torch.float64)


def himmelblau(z):
    x, y = z[0], z[1]
    return (x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2


def rosen(z):
    return (100 * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2).sum()


def trust_region_step(g, H, radius, iters=30):
    evals, evecs = torch.linalg.eigh(H)
    gt = evecs.T @ g
    if evals[0] > 0:
        p = -evecs @ (gt / evals)
        if p.norm() <= radius:
            return p, torch.tensor(0.0)
    lam = torch.clamp(-evals[0], min=0.0) + 1e-3
    for _ in range(iters):
        d = evals + lam
        pn = torch.sqrt(((gt / d) ** 2).sum())
        dpn = -((gt**2) / d**3).sum() / pn
        phi = 1 / radius - 1 / pn
        dphi = dpn / pn**2
        lam = torch.clamp(lam - phi / dphi, min=-evals[0] + 1e-12)
    return -evecs @ (gt / (evals + lam)), lam


def main():
    rng = np.random.default_rng(71)
    out = {}

    # damped Newton and saddle-free Newton on Himmelblau from a point near a saddle
    z = torch.tensor([-0.2, -0.9])
    path_sfn = [z]
    for _ in range(8):
        g = grad(himmelblau)(z)
        H = hessian(himmelblau)(z)
        evals, evecs = torch.linalg.eigh(H)
        step = evecs @ ((evecs.T @ g) / (evals.abs() + 1.0))
        z = z - step
        path_sfn.append(z)
    out["sfn_path"] = torch.stack(path_sfn)
    out["sfn_final_grad"] = grad(himmelblau)(z)

    # trust region on a 4-D Rosenbrock
    z = torch.tensor([-1.2, 1.0, -0.5, 0.8])
    radius = 0.5
    radii, fvals, lams = [], [], []
    for _ in range(15):
        f0, g, H = rosen(z), grad(rosen)(z), hessian(rosen)(z)
        p, lam = trust_region_step(g, H, radius)
        pred = -(g @ p + 0.5 * p @ H @ p)
        rho = (f0 - rosen(z + p)) / pred
        if rho < 0.25:
            radius = 0.25 * radius
        elif rho > 0.75 and abs(float(p.norm()) - radius) < 1e-6:
            radius = min(2 * radius, 4.0)
        if rho > 0.1:
            z = z + p
        radii.append(radius)
        fvals.append(rosen(z))
        lams.append(lam)
    out["tr_radii"] = radii
    out["tr_f"] = torch.stack(fvals)
    out["tr_lams"] = torch.stack(lams)
    out["tr_z"] = z

    # batched Newton from many starts
    starts = torch.from_numpy(rng.uniform(-4, 4, size=(16, 2)))

    def newton_step(z):
        H = hessian(himmelblau)(z) + 5.0 * torch.eye(2)
        return z - torch.linalg.solve(H, grad(himmelblau)(z))

    zb = starts
    for _ in range(12):
        zb = vmap(newton_step)(zb)
    out["batched_newton"] = zb
    zl = starts[3]
    for _ in range(12):
        zl = newton_step(zl)
    out["batched_vs_loop"] = (zl - zb[3]).abs().max()

    # hessian w.r.t. two arguments: nested tuple of blocks
    a = torch.from_numpy(rng.normal(size=3))
    b = torch.from_numpy(rng.normal(size=2))
    C = torch.from_numpy(rng.normal(size=(3, 2)))

    def coupled(a, b):
        return torch.sin(a @ C @ b) + (a**3).sum() * b.pow(2).sum()

    Hab = hessian(coupled, argnums=(0, 1))(a, b)
    out["H_aa"] = Hab[0][0]
    out["H_ab"] = Hab[0][1]
    out["H_ba_minus_abT"] = (Hab[1][0] - Hab[0][1].T).abs().max()
    out["H_bb"] = Hab[1][1]

    # natural gradient for a softmax policy over 4 actions, features (4, 3)
    phi = torch.from_numpy(rng.normal(size=(4, 3)))
    adv = torch.from_numpy(rng.normal(size=4))
    theta = torch.zeros(3)

    def logp(th):
        lp = F.log_softmax(phi @ th, dim=0)
        return lp, lp.exp()

    for _ in range(4):
        J, probs = jacfwd(logp, has_aux=True)(theta)  # (4, 3) score of each action
        fisher = (probs[:, None, None] * J[:, :, None] * J[:, None, :]).sum(0)
        pg = (probs * adv) @ J
        nat = torch.linalg.pinv(fisher + 1e-6 * torch.eye(3)) @ pg
        theta = theta + 0.5 * nat
    out["ng_theta"] = theta
    Jr, probs_r = jacrev(logp, has_aux=True)(theta)
    out["ng_jac_fwd_vs_rev"] = (Jr - jacfwd(logp, has_aux=True)(theta)[0]).abs().max()
    out["ng_probs"] = probs_r

    # natural gradient for a 1-D Gaussian fitted to data: Fisher from per-sample scores
    data = torch.from_numpy(rng.normal(1.5, 0.7, size=50))
    params = torch.tensor([0.0, 0.0])  # mean, log std

    def nll(p, x):
        return 0.5 * ((x - p[0]) / p[1].exp()) ** 2 + p[1]

    for _ in range(5):
        scores = vmap(grad(nll), in_dims=(None, 0))(params, data)
        fisher = scores.T @ scores / data.shape[0]
        g = scores.mean(0)
        sol = torch.linalg.lstsq(fisher, g[:, None]).solution[:, 0]
        params = params - 0.8 * sol
    out["gauss_params"] = params

    # differentiate a Newton step w.r.t. the data (bilevel / meta-learning style)
    X = torch.from_numpy(rng.normal(size=(10, 3)))
    yv = torch.from_numpy(rng.normal(size=10)).requires_grad_(True)
    w0 = torch.zeros(3)

    def objective(w):
        return F.softplus(X @ w).sum() - (yv * (X @ w)).sum() + 0.5 * (w**2).sum()

    g0 = torch.autograd.grad(objective(w0.requires_grad_(True)), w0, create_graph=True)[0]
    H0 = af_hessian(objective, w0.detach(), create_graph=True)
    w1 = w0.detach() - torch.linalg.solve(H0, g0)
    out["newton_w1"] = w1
    (dw1_dy,) = torch.autograd.grad(w1.sum(), yv)
    out["newton_w1_grad_y"] = dw1_dy
    H_fixed = af_hessian(objective, w0.detach()).detach()
    w0 = w0.detach()

    def newton_of_y(y_):
        g_ = X.T @ torch.sigmoid(X @ w0) - X.T @ y_ + w0
        return w0 - torch.linalg.solve(H_fixed, g_)

    Jw = af_jacobian(newton_of_y, yv.detach(), vectorize=True, strategy="forward-mode")
    out["newton_jac_y"] = Jw
    out["newton_jac_vs_grad"] = (Jw.sum(0) - dw1_dy).abs().max()
    return out


TOLERANCE = {
    "H_ba_minus_abT": (1e-6, 1e-12),
    "batched_vs_loop": (1e-6, 1e-12),
    "ng_jac_fwd_vs_rev": (1e-6, 1e-12),
    "newton_jac_vs_grad": (1e-6, 1e-12),
    "tr_lams": (1e-6, 1e-9),
}
