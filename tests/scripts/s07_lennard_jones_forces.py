"""Lennard-Jones cluster: pair energy over upper-triangle pairs, forces = -dE/dr from
``autograd.grad``, steepest-descent relaxation."""

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def lj_energy(pos, epsilon=1.0, sigma=1.0):
    n = pos.shape[0]
    i, j = torch.triu_indices(n, n, offset=1)
    rij = pos[i] - pos[j]
    r = torch.linalg.norm(rij, dim=-1)
    sr6 = (sigma / r) ** 6
    return (4 * epsilon * (sr6**2 - sr6)).sum()


def forces(pos):
    pos = pos.detach().requires_grad_(True)
    e = lj_energy(pos)
    (g,) = torch.autograd.grad(e, pos)
    return e.detach(), -g


def main():
    rng = np.random.default_rng(6)
    grid = np.array([[a, b, c] for a in range(2) for b in range(2) for c in range(2)], float)
    pos = torch.from_numpy(1.2 * grid + 0.05 * rng.normal(size=grid.shape))
    e0, f0 = forces(pos)
    energies = [e0.item()]
    for _ in range(30):
        e, f = forces(pos)
        pos = pos + 0.01 * f.clamp(-5.0, 5.0)
        energies.append(e.item())
    _, f_final = forces(pos)
    # finite-difference check on one coordinate
    h = 1e-6
    d = torch.zeros_like(pos)
    d[0, 0] = h
    fd = -(lj_energy(pos + d) - lj_energy(pos - d)) / (2 * h)
    return {
        "e0": e0.item(),
        "f0": f0,
        "energies": energies,
        "pos": pos,
        "net_force": f_final.sum(0),
        "fd_close": float(abs(fd.item() - f_final[0, 0].item()) < 1e-5),
    }
