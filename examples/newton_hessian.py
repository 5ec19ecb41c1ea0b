"""
Newton's method with ``func.hessian`` and per-example gradient clipping with ``vmap(grad)``
===========================================================================================

Two things scientists do with the function transforms:

1. minimise the Rosenbrock function by Newton steps, the Hessian from ``hessian``
   (``jacfwd`` of ``jacrev``), checked against a Hessian-vector product from
   forward-over-reverse;
2. train a linear model with per-example gradients (``vmap(grad(loss))``), each clipped
   to a norm bound before averaging (the core of differentially private SGD).
"""

import numpy as np

import numbagrad as torch
from numbagrad.func import grad, hessian, jvp, vmap


def rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


# -- 1. Newton's method ----------------------------------------------------------------------
x = torch.tensor(np.full(6, -0.5), dtype=torch.float64)
for step in range(30):
    g = grad(rosenbrock)(x)
    H = hessian(rosenbrock)(x)
    dx = torch.tensor(np.linalg.solve(H.numpy(), g.numpy()))
    x = x - dx
    if float(g.abs().max()) < 1e-10:
        break
print(f"Newton: {step + 1} steps, x = {np.round(x.numpy(), 6)}, f = {float(rosenbrock(x)):.2e}")

v = torch.ones(6, dtype=torch.float64)
hv = jvp(grad(rosenbrock), (x,), (v,))[1]  # H v by forward-over-reverse
assert np.allclose(hv.numpy(), hessian(rosenbrock)(x).numpy() @ v.numpy())

# -- 2. per-example gradient clipping ----------------------------------------------------------
rng = np.random.default_rng(0)
n, d = 256, 8
X = torch.tensor(rng.standard_normal((n, d)))
w_true = torch.tensor(rng.standard_normal(d))
Y = X @ w_true + 0.1 * torch.tensor(rng.standard_normal(n))


def loss(w, x, y):
    return (x @ w - y) ** 2


w = torch.zeros(d, dtype=torch.float64)
clip = 1.0
for epoch in range(200):
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(w, X, Y)  # (n, d), no Python loop
    norms = (per_example ** 2).sum(1, keepdim=True).sqrt()
    clipped = per_example * torch.clamp(clip / (norms + 1e-12), max=1.0)
    w = w - 0.1 * clipped.mean(0)
err = float(((w - w_true) ** 2).sum().sqrt())
print(f"clipped per-example SGD: |w - w_true| = {err:.3f}")
