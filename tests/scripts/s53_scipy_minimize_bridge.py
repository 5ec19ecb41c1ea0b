"""Handing a torch objective to ``scipy.optimize.minimize`` (jac=True), the bridge many
scientific codes use: NumPy in, ``torch.from_numpy(...).requires_grad_()``, loss and
``grad.numpy()`` out, in float64. Without SciPy a small NumPy BFGS stands in for it."""

from types import SimpleNamespace

import numpy as np
import torch


def _numpy_bfgs(fun, x0, iters=60):
    x = np.asarray(x0, float)
    f, g = fun(x)
    H = np.eye(x.size)
    for _ in range(iters):
        p = -H @ g
        step = 1.0
        while True:
            f_new, g_new = fun(x + step * p)
            if f_new <= f + 1e-4 * step * g @ p or step < 1e-10:
                break
            step *= 0.5
        s, yv = step * p, g_new - g
        x, f, g = x + s, f_new, g_new
        if np.linalg.norm(g) < 1e-7:
            break
        sy = s @ yv
        if sy > 1e-12:
            rho = 1.0 / sy
            eye = np.eye(x.size)
            H = (eye - rho * np.outer(s, yv)) @ H @ (eye - rho * np.outer(yv, s)) + rho * np.outer(
                s, s
            )
    return SimpleNamespace(x=x, fun=f)


def main():
    try:
        from scipy.optimize import minimize
    except ImportError:
        minimize = None
    rng = np.random.default_rng(53)
    t = np.linspace(0, 4, 40)
    y = 2.0 * np.exp(-0.7 * t) + 0.3 + 0.01 * rng.normal(size=40)
    t_t, y_t = torch.from_numpy(t), torch.from_numpy(y)
    calls = []

    def fun(theta_np):
        theta = torch.from_numpy(theta_np).requires_grad_()
        a, k, c = theta
        loss = ((a * torch.exp(-k * t_t) + c - y_t) ** 2).sum()
        loss.backward()
        calls.append(loss.item())
        return loss.item(), theta.grad.numpy().astype(np.float64)

    x0 = np.array([1.0, 1.0, 0.0])
    res = (
        _numpy_bfgs(fun, x0)
        if minimize is None
        else minimize(fun, x0=x0, jac=True, method="BFGS", options={"gtol": 1e-10})
    )
    hess = torch.autograd.functional.hessian(
        lambda th: ((th[0] * torch.exp(-th[1] * t_t) + th[2] - y_t) ** 2).sum(),
        torch.from_numpy(res.x),
    )
    cov = torch.linalg.inv(hess) * 2 * res.fun / (40 - 3)
    # the iteration count is left out: near the optimum the stopping test compares
    # gradients at rounding level, where the order of a sum decides
    return {
        "x": res.x,
        "fun": res.fun,
        "first_calls": calls[:5],
        "stderr": torch.sqrt(torch.diagonal(cov)),
    }


TOLERANCE = {"x": (1e-6, 1e-9), "fun": (1e-6, 1e-12), "stderr": (1e-5, 1e-9)}
