r"""
Relaxing a Lennard-Jones cluster with a Numba kernel Function
=============================================================

The reason to use numbagrad: your own ``@numba.njit`` loops can be wrapped as an
``autograd.Function`` and work on the tensors' memory with no copies.
``Tensor.numpy()`` is a view of the tensor's storage, and ``numbagrad.from_numpy``
wraps a NumPy result back into a tensor that shares its memory.

Here the forward pass is the Lennard-Jones pair-potential energy of ``N`` particles,

.. math:: E = \sum_{i<j} 4\varepsilon \left[(\sigma/r_{ij})^{12} - (\sigma/r_{ij})^{6}\right],

and the backward pass is the gradient of the energy with respect to the positions
(minus the forces),

.. math:: \frac{\partial E}{\partial \mathbf{x}_i} = \sum_{j \ne i}
    \frac{4\varepsilon}{r_{ij}^2}\left[6 (\sigma/r_{ij})^{6} - 12 (\sigma/r_{ij})^{12}\right]
    (\mathbf{x}_i - \mathbf{x}_j),

each one ``@njit(cache=True)`` loop over the pairs. The Function is checked with
``gradcheck`` on a four-particle cluster, then a 13-particle cluster, perturbed from
a cuboctahedral lattice fragment, is relaxed by gradient descent using ``.grad``; the
figure shows its energy and largest force along the descent. (The plot needs matplotlib,
which the ``docs`` extra installs; without it the script runs and checks all the same.)
"""

import numba
import numpy as np

import numbagrad
from numbagrad.autograd.function import once_differentiable

try:
    import matplotlib.pyplot as plt
except ImportError:  # the figure is optional: the script checks its results without it
    plt = None

# %%
# The two kernels
# ---------------
# Plain ``@numba.njit`` loops over the pairs, on NumPy arrays: they know nothing about
# tensors or autograd.


@numba.njit(cache=True)
def lj_energy(pos, epsilon, sigma):
    """Total Lennard-Jones energy of the particles at ``pos`` (shape ``(N, 3)``)."""
    n = pos.shape[0]
    sigma2 = sigma * sigma
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            sr6 = (sigma2 / (dx * dx + dy * dy + dz * dz)) ** 3
            total += sr6 * sr6 - sr6
    return 4.0 * epsilon * total


@numba.njit(cache=True)
def lj_gradient(pos, epsilon, sigma, out):
    """Write dE/dpos into ``out``: each pair's term is added to i and subtracted from j."""
    n = pos.shape[0]
    sigma2 = sigma * sigma
    out[:, :] = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            sr6 = (sigma2 / r2) ** 3
            # (dE/dr) / r for this pair: the common factor of the three components
            coef = 4.0 * epsilon * (6.0 * sr6 - 12.0 * sr6 * sr6) / r2
            out[i, 0] += coef * dx
            out[i, 1] += coef * dy
            out[i, 2] += coef * dz
            out[j, 0] -= coef * dx
            out[j, 1] -= coef * dy
            out[j, 2] -= coef * dz


# %%
# The Function
# ------------
# ``forward`` runs the energy kernel on the tensor's own memory, ``backward`` the gradient
# kernel; ``once_differentiable`` says that the backward itself has no gradient.


class LennardJones(numbagrad.autograd.Function):
    """Energy of a particle cluster; gradient by a hand-written Numba kernel."""

    @staticmethod
    def forward(positions, epsilon=1.0, sigma=1.0):
        # .numpy() is zero-copy: the kernel reads the tensor's own storage.
        pos = positions.contiguous().numpy()
        energy = lj_energy(pos, epsilon, sigma)
        return numbagrad.from_numpy(np.array(energy, dtype=pos.dtype))

    @staticmethod
    def setup_context(ctx, inputs, output):
        positions, epsilon, sigma = inputs
        ctx.save_for_backward(positions)
        ctx.epsilon = epsilon
        ctx.sigma = sigma

    @staticmethod
    @once_differentiable  # the kernel is not written in differentiable ops
    def backward(ctx, grad_energy):
        (positions,) = ctx.saved_tensors
        pos = positions.contiguous().numpy()
        grad = np.empty_like(pos)
        lj_gradient(pos, ctx.epsilon, ctx.sigma, grad)
        # from_numpy shares grad's memory; scaling by the upstream gradient
        # (a 0-d tensor) makes the Function composable with other ops.
        return numbagrad.from_numpy(grad) * grad_energy, None, None


def lj_energy_numpy(pos, epsilon=1.0, sigma=1.0):
    """The same energy, vectorised with NumPy, as an independent check."""
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = (diff**2).sum(-1)[np.triu_indices(len(pos), k=1)]
    sr6 = (sigma**2 / r2) ** 3
    return 4.0 * epsilon * (sr6 * sr6 - sr6).sum()


# %%
# Checking the Function
# ---------------------
# On a four-particle cluster: the tensor and the NumPy array are the same memory, the energy
# matches NumPy's, the forces cancel, and ``gradcheck`` compares the kernel's gradient with
# finite differences.

rng = np.random.default_rng(7)
r_min = 2.0 ** (1.0 / 6.0)  # the pair distance with the lowest energy (sigma = 1)

# --- zero-copy: the tensor and the NumPy array are the same memory -------------
tetra = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=np.float64)
tetra *= r_min / np.sqrt(8.0)
tetra += rng.normal(scale=0.05, size=tetra.shape)
small = numbagrad.from_numpy(tetra)
assert np.shares_memory(small.numpy(), tetra)

# --- check the Function on a four-particle cluster -----------------------------
small.requires_grad_(True)
energy = LennardJones.apply(small)
assert np.isclose(energy.item(), lj_energy_numpy(tetra), rtol=1e-12)
energy.backward()
# Newton's third law: the pair forces cancel, so the gradients sum to zero.
assert np.allclose(small.grad.numpy().sum(axis=0), 0.0, atol=1e-10)
assert numbagrad.autograd.gradcheck(lambda p: LennardJones.apply(p, 1.0, 1.0), (small,))
print(f"4-particle energy {energy.item():.6f} matches NumPy; gradcheck: ok")

# %%
# Relaxing 13 particles
# ---------------------
# Gradient descent reads the gradient from ``.grad`` and moves the positions in place under
# ``no_grad``.

# The centre and its 12 nearest neighbours of a face-centred cubic lattice
# (a cuboctahedron), perturbed so the descent has work to do.
shell = np.array(
    [[a, b, 0.0] for a in (-1, 1) for b in (-1, 1)]
    + [[a, 0.0, b] for a in (-1, 1) for b in (-1, 1)]
    + [[0.0, a, b] for a in (-1, 1) for b in (-1, 1)]
)
start = np.vstack([np.zeros(3), shell * r_min / np.sqrt(2.0)])
start += rng.normal(scale=0.06, size=start.shape)

positions = numbagrad.from_numpy(start.copy()).requires_grad_(True)
learning_rate = 2e-3
energies = []
max_forces = []
for step in range(301):
    energy = LennardJones.apply(positions)
    positions.grad = None
    energy.backward()
    energies.append(energy.item())
    max_forces.append(float(np.abs(positions.grad.numpy()).max()))
    if step % 50 == 0:
        print(f"step {step:3d}  energy {energies[-1]:10.5f}  max |force| {max_forces[-1]:8.4f}")
    with numbagrad.no_grad():
        positions -= learning_rate * positions.grad

assert energies[-1] < energies[0] - 1.0, "the cluster relaxed"
assert np.all(np.diff(energies) <= 1e-9), "descent is monotone"
assert np.isclose(energies[-1], lj_energy_numpy(positions.detach().numpy()), rtol=1e-12)
# From this start the descent slides over the cuboctahedron's saddle into the
# icosahedron, the known global minimum of LJ13 (E = -44.326801).
assert abs(energies[-1] - (-44.326801)) < 1e-4
print(
    f"energy fell from {energies[0]:.4f} to {energies[-1]:.6f}: the LJ13 icosahedron (-44.326801)"
)

# %%
# The descent first stalls on a plateau near a saddle point, where the forces are small,
# then slides off it into the icosahedron.

if plt is not None:
    fig, (ax_e, ax_f) = plt.subplots(2, 1, sharex=True, figsize=(6.4, 5.6))
    ax_e.plot(energies, color="C0")
    ax_e.axhline(-44.326801, color="0.5", linestyle="--", linewidth=1)
    ax_e.annotate(
        "icosahedron, -44.3268",
        (len(energies) - 1, -44.326801),
        xytext=(0, 6),
        textcoords="offset points",
        ha="right",
        color="0.35",
    )
    ax_e.set_ylabel("energy (units of epsilon)")
    ax_e.set_title("Gradient descent on LJ13")
    ax_f.semilogy(max_forces, color="C1")
    ax_f.set_xlabel("step")
    ax_f.set_ylabel("largest |force| component")
    fig.tight_layout()
    plt.show()
