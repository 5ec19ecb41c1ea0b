"""
Newton's method with ``func.hessian`` and per-example gradient clipping with ``vmap(grad)``
===========================================================================================

Two things scientists do with the function transforms:

1. minimise the Rosenbrock function by Newton steps, the Hessian from ``hessian``
   (``jacfwd`` of ``jacrev``), checked against a Hessian-vector product from
   forward-over-reverse;
2. train a linear model with per-example gradients (``vmap(grad(loss))``), each clipped
   to a norm bound before averaging (the core of differentially private SGD).

The figures show Newton's quadratic convergence and the clipped SGD's error. (They need
matplotlib, which the ``docs`` extra installs; without it the script runs and checks all the
same.)
"""

import numpy as np

import numbagrad as torch
from numbagrad.func import grad, hessian, jvp, vmap

try:
    import matplotlib.pyplot as plt
except ImportError:  # the figures are optional: the script checks its results without them
    plt = None


def rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


# %%
# 1. Newton's method
# ------------------
# Each step solves ``H dx = g`` with the exact Hessian of the 6-dimensional Rosenbrock
# function (minimum 0 at ``x = 1``), starting from ``x = -0.5``.

x = torch.tensor(np.full(6, -0.5), dtype=torch.float64)
grad_norms = []  # |g| before each step
errors = []  # |x - 1| before each step
for step in range(30):  # noqa: B007  (step is read after the loop)
    g = grad(rosenbrock)(x)
    H = hessian(rosenbrock)(x)
    grad_norms.append(float(g.abs().max()))
    errors.append(float((x - 1).abs().max()))
    dx = torch.tensor(np.linalg.solve(H.numpy(), g.numpy()))
    x = x - dx
    if grad_norms[-1] < 1e-10:
        break
print(f"Newton: {step + 1} steps, x = {np.round(x.numpy(), 6)}, f = {float(rosenbrock(x)):.2e}")
assert np.allclose(x.numpy(), 1.0, atol=1e-8), "Newton converged to the minimum"

v = torch.ones(6, dtype=torch.float64)
hv = jvp(grad(rosenbrock), (x,), (v,))[1]  # H v by forward-over-reverse
assert np.allclose(hv.numpy(), hessian(rosenbrock)(x).numpy() @ v.numpy())

# %%
# 2. Per-example gradient clipping
# --------------------------------
# ``vmap(grad(loss))`` gives the gradient of every example at once; each is scaled down to
# norm at most ``clip`` before averaging.

rng = np.random.default_rng(0)
n, d = 256, 8
X = torch.tensor(rng.standard_normal((n, d)))
w_true = torch.tensor(rng.standard_normal(d))
Y = X @ w_true + 0.1 * torch.tensor(rng.standard_normal(n))


def loss(w, x, y):
    return (x @ w - y) ** 2


w = torch.zeros(d, dtype=torch.float64)
clip = 1.0
sgd_errors = []
for _epoch in range(200):
    sgd_errors.append(float(((w - w_true) ** 2).sum().sqrt()))
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(w, X, Y)  # (n, d), no Python loop
    norms = (per_example**2).sum(1, keepdim=True).sqrt()
    clipped = per_example * torch.clamp(clip / (norms + 1e-12), max=1.0)
    w = w - 0.1 * clipped.mean(0)
err = float(((w - w_true) ** 2).sum().sqrt())
print(f"clipped per-example SGD: |w - w_true| = {err:.3f}")
assert err < 0.5 * sgd_errors[0], "the clipped SGD moved towards w_true"

# %%
# Far from the minimum, Newton's steps follow the curved valley of the Rosenbrock function
# (the gradient even grows at times); close to it the error squares at every step
# (quadratic convergence) until it is exactly 0, which a log axis cannot show. The clipped
# SGD's error falls until it reaches the noise level of the data.

if plt is not None:
    fig, (ax_n, ax_s) = plt.subplots(1, 2, figsize=(9, 3.6))
    steps = np.arange(len(grad_norms))
    for values, style, label in (
        (grad_norms, "o-", "max |gradient|"),
        (errors, "s--", "max |x - 1|"),
    ):
        values = np.array(values)
        ax_n.semilogy(steps[values > 0], values[values > 0], style, label=label)
    ax_n.set_xlabel("Newton step")
    ax_n.set_title("Newton on Rosenbrock (d = 6)")
    ax_n.legend()
    ax_s.semilogy(sgd_errors)
    ax_s.set_xlabel("epoch")
    ax_s.set_ylabel("|w - w_true|")
    ax_s.set_title("SGD, per-example gradients clipped")
    fig.tight_layout()
    plt.show()
