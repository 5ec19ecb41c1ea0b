"""Nonlinear least squares the way JAX/functorch examples write Gauss-Newton and
Levenberg-Marquardt: the residual Jacobian from ``torch.func.jacfwd`` (and checked against
``jacrev`` and column-by-column ``torch.func.jvp``), a damped normal-equation step with
``torch.linalg.solve``, a trust-region style damping update, and ``torch.func.linearize``
to reuse one linearisation for several tangent directions (Gauss-Newton-vector products for
a conjugate-gradient inner solve). The model is a two-exponential decay fitted to noisy
data, plus a Rosenbrock-type residual system; last, implicit Euler on Robertson's stiff
chemical kinetics with the right-hand side written as NumPy ports usually are (fill a
preallocated ``torch.empty`` row by row) and its Jacobian from
``torch.autograd.functional.jacobian`` and ``jacfwd`` inside Newton's iteration."""

import numpy as np
import torch
from torch.func import jacfwd, jacrev, jvp, linearize, vjp, vmap

torch.set_default_dtype(torch.float64)


def model(theta, t):
    a1, k1, a2, k2 = theta.unbind()
    return a1 * torch.exp(-k1 * t) + a2 * torch.exp(-k2 * t)


def levenberg_marquardt(residual, theta, iters=12, lam=1e-2):
    history = []
    cost = 0.5 * residual(theta).pow(2).sum()
    for _ in range(iters):
        r = residual(theta)
        J = jacfwd(residual)(theta)
        JtJ = J.T @ J
        g = J.T @ r
        A = JtJ + lam * torch.diag(torch.diagonal(JtJ))
        step = torch.linalg.solve(A, -g)
        cand = theta + step
        new_cost = 0.5 * residual(cand).pow(2).sum()
        # (a decrease beyond rounding: at convergence "new_cost < cost" is decided by the
        # last bit, which differs between BLAS builds and would make lam a coin flip)
        if new_cost < cost * (1 - 1e-12):
            theta, cost, lam = cand, new_cost, lam * 0.3
        else:
            lam = lam * 10.0
        history.append(cost.item())
    return theta, history, lam


def cg(matvec, b, iters):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r @ r
    for _ in range(iters):
        Ap = matvec(p)
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def robertson(y):
    dy = torch.empty(3, dtype=y.dtype)
    dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2]
    dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2
    dy[2] = 3e7 * y[1] ** 2
    return dy


def implicit_euler(f, y0, h, steps, newton_iters=4):
    ys = [y0]
    y = y0
    for _ in range(steps):
        z = y.clone()
        for _ in range(newton_iters):
            G = z - y - h * f(z)
            JG = torch.eye(3) - h * jacfwd(f)(z)
            z = z - torch.linalg.solve(JG, G)
        y = z
        ys.append(y)
    return torch.stack(ys)


def main():
    rng = np.random.default_rng(60)
    t = torch.linspace(0, 4, 40)
    true = torch.tensor([2.0, 1.5, 0.7, 0.2])
    y = model(true, t) + torch.from_numpy(0.01 * rng.normal(size=40))

    def residual(theta):
        return model(theta, t) - y

    theta0 = torch.tensor([1.0, 1.0, 1.0, 0.1])
    theta, history, lam = levenberg_marquardt(residual, theta0)

    # Jacobian three ways at the solution
    J_fwd = jacfwd(residual)(theta)
    J_rev = jacrev(residual)(theta)
    cols = torch.stack([jvp(residual, (theta,), (e,))[1] for e in torch.eye(4)], dim=1)
    basis_rows = vmap(lambda v: vjp(residual, theta)[1](v)[0])(torch.eye(40))

    # Gauss-Newton with linearize: r(theta + d) ~ r + J d; solve J^T J d = -J^T r by CG
    r0, jvp_fn = linearize(residual, theta0)
    _, vjp_fn = vjp(residual, theta0)

    def gnvp(v):
        return vjp_fn(jvp_fn(v))[0]

    rhs = -vjp_fn(r0)[0]
    d_cg = cg(gnvp, rhs, iters=4)
    J0 = jacfwd(residual)(theta0)
    d_exact = torch.linalg.solve(J0.T @ J0, -J0.T @ r0)

    # Rosenbrock as a residual system r = (10 (y - x^2), 1 - x), solved by Gauss-Newton
    def rosen(z):
        x, yy = z[0], z[1]
        return torch.stack([10 * (yy - x**2), 1 - x])

    z = torch.tensor([-1.2, 1.0])
    path = [z]
    for _ in range(5):
        Jz = jacfwd(rosen)(z)
        z = z - torch.linalg.solve(Jz, rosen(z))
        path.append(z)

    # stiff kinetics: Jacobian of a right-hand side filled in place, implicit Euler
    y0 = torch.tensor([1.0, 0.0, 0.0])
    J_rob = torch.autograd.functional.jacobian(robertson, torch.tensor([0.9, 1e-5, 0.1]))
    traj = implicit_euler(robertson, y0, h=0.05, steps=6)

    # covariance of the estimate from the Gauss-Newton Hessian
    s2 = residual(theta).pow(2).sum() / (40 - 4)
    cov = s2 * torch.linalg.inv(J_fwd.T @ J_fwd)
    return {
        "theta": theta,
        "history": history,
        "lam": lam,
        "J_fwd": J_fwd,
        "J_rev_minus_fwd": (J_rev - J_fwd).abs().max(),
        "J_cols": cols,
        "J_rows": basis_rows,
        "d_cg": d_cg,
        "d_exact": d_exact,
        "rosen_path": torch.stack(path),
        "robertson_jacobian": J_rob,
        "robertson_traj": traj,
        "robertson_mass": traj.sum(1),
        "stderr": torch.sqrt(torch.diagonal(cov)),
    }


TOLERANCE = {"J_rev_minus_fwd": (1e-6, 1e-12), "d_cg": (1e-5, 1e-9)}
