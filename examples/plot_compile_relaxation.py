r"""
A Lennard-Jones relaxation, eager and compiled
==============================================

The same gradient-descent loop twice: once eagerly, once with the energy compiled by
:func:`numbagrad.compile`. The energy is written with broadcast tensor ops (all pair
vectors at once), which is how scientific code is usually written; compiled, its
elementwise chain, broadcasting and sums run as one generated Numba loop nest forward
and one backward, with no temporary tensors or graph nodes per op.

.. math:: E = \sum_{i<j} 4\left[r_{ij}^{-12} - r_{ij}^{-6}\right]

Both loops start from the same perturbed lattice and end at the same energy (to
rounding); the script prints both timings. (The figure needs matplotlib; without it the
script runs and checks all the same.)
"""

import time

import numpy as np

import numbagrad as torch

try:
    import matplotlib.pyplot as plt
except ImportError:  # the figure is optional
    plt = None


def lattice(n_side, seed=0):
    """``n_side**3`` atoms on a perturbed cubic lattice at the pair-potential minimum."""
    g = np.stack(np.meshgrid(*[np.arange(n_side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    pos = 2.0 ** (1 / 6) * g + 0.08 * np.random.default_rng(seed).standard_normal(g.shape)
    return torch.tensor(pos, dtype=torch.float64)


def energy(x, mask, eye):
    """Lennard-Jones energy of positions ``x`` (N, 3), every pair counted once."""
    r = x[:, None, :] - x[None, :, :]
    d2 = (r * r).sum(-1) + eye  # (the diagonal is masked out; eye keeps it finite)
    inv6 = (1.0 / d2) ** 3
    return (4.0 * (inv6 * inv6 - inv6) * mask).sum()


def relax(energy_fn, x0, steps=150, lr=2e-3):
    n = x0.shape[0]
    mask = torch.triu(torch.ones(n, n, dtype=torch.float64), 1)
    eye = torch.eye(n, dtype=torch.float64)
    x = x0.clone().requires_grad_(True)
    trace = []
    t0 = time.perf_counter()
    for _ in range(steps):
        e = energy_fn(x, mask, eye)
        x.grad = None
        e.backward()
        with torch.no_grad():
            # a capped step: no atom moves more than 0.05 per iteration
            step = lr * x.grad
            x -= step.clamp(-0.05, 0.05)
        trace.append(e.item())
    return x.detach(), trace, time.perf_counter() - t0


x0 = lattice(4)  # 64 atoms
compiled_energy = torch.compile(energy)
relax(compiled_energy, x0, steps=2)  # the first call traces and compiles

x_eager, e_eager, t_eager = relax(energy, x0)
x_comp, e_comp, t_comp = relax(compiled_energy, x0)

print(f"eager:    final energy {e_eager[-1]:.8f}  in {t_eager * 1e3:7.1f} ms")
print(f"compiled: final energy {e_comp[-1]:.8f}  in {t_comp * 1e3:7.1f} ms")
print(f"compiled loop {t_eager / t_comp:.1f}x faster")
assert e_eager[-1] < e_eager[0], "the cluster relaxed"
np.testing.assert_allclose(e_comp, e_eager, rtol=1e-9)
np.testing.assert_allclose(x_comp.numpy(), x_eager.numpy(), rtol=1e-9, atol=1e-12)

# %%
# The generated code can be read: the traced graphs and the loop nests.
print(compiled_energy.explain().splitlines()[1])

if plt is not None:
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(e_eager, label=f"eager ({t_eager * 1e3:.0f} ms)")
    ax.plot(e_comp, "--", label=f"compiled ({t_comp * 1e3:.0f} ms)")
    ax.set_xlabel("step")
    ax.set_ylabel("energy")
    ax.legend()
    fig.tight_layout()
