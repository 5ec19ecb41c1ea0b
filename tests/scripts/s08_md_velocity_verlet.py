"""Molecular dynamics with velocity Verlet: a harmonic bond + Morse pair potential, forces
as -grad of the potential energy, energy drift and momentum conservation."""

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def potential(x):
    diff = x.unsqueeze(0) - x.unsqueeze(1)
    r = torch.sqrt((diff**2).sum(-1) + torch.eye(x.shape[0]))
    mask = torch.triu(torch.ones(x.shape[0], x.shape[0]), diagonal=1)
    morse = (1 - torch.exp(-1.5 * (r - 1.1))) ** 2 - 1
    return (morse * mask).sum()


def force(x):
    with torch.enable_grad():
        x = x.detach().requires_grad_()
        u = potential(x)
        return -torch.autograd.grad(u, x)[0], u.detach()


def main():
    rng = np.random.default_rng(7)
    x = torch.from_numpy(
        np.array([[0.0, 0, 0], [1.1, 0, 0], [0, 1.1, 0], [0.6, 0.6, 0.9]])
        + 0.05 * rng.normal(size=(4, 3))
    )
    v = torch.from_numpy(0.1 * rng.normal(size=(4, 3)))
    v = v - v.mean(dim=0, keepdim=True)
    m = torch.ones(4, 1)
    dt = 0.01
    f, u = force(x)
    energies = []
    with torch.no_grad():
        for _ in range(50):
            v_half = v + 0.5 * dt * f / m
            x = x + dt * v_half
            f, u = force(x)
            v = v_half + 0.5 * dt * f / m
            energies.append((u + 0.5 * (m * v**2).sum()).item())
    energies = np.array(energies)
    return {
        "x": x,
        "v": v,
        "energies": energies,
        "drift": float(np.ptp(energies)),
        "momentum": (m * v).sum(0),
    }
