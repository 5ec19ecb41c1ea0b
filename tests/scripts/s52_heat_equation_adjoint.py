"""Inverse problem for the 1-D heat equation: Crank-Nicolson steps with a tridiagonal system
built from ``torch.diag`` offsets and solved with ``torch.linalg.solve``; the diffusivity is
recovered by gradient descent through all the solves."""

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def laplacian(n, h):
    main = -2.0 * torch.ones(n)
    off = torch.ones(n - 1)
    return (torch.diag(main) + torch.diag(off, 1) + torch.diag(off, -1)) / h**2


def simulate(kappa, u0, L, dt, steps):
    n = u0.shape[0]
    eye = torch.eye(n)
    A = eye - 0.5 * dt * kappa * L
    B = eye + 0.5 * dt * kappa * L
    u = u0
    snapshots = []
    for _ in range(steps):
        u = torch.linalg.solve(A, B @ u)
        snapshots.append(u)
    return torch.stack(snapshots)


def main():
    n, h, dt = 20, 1.0 / 21, 0.002
    x = torch.linspace(h, 1 - h, n)
    u0 = torch.sin(np.pi * x) + 0.5 * torch.sin(3 * np.pi * x)
    L = laplacian(n, h)
    observed = simulate(torch.tensor(0.8), u0, L, dt, 10)
    log_kappa = torch.tensor(np.log(0.3), requires_grad=True)
    opt = torch.optim.Adam([log_kappa], lr=0.1)
    history = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((simulate(log_kappa.exp(), u0, L, dt, 10) - observed) ** 2).sum()
        loss.backward()
        opt.step()
        history.append(loss.item())
    return {"history": history, "kappa": log_kappa.exp().item(), "grad": log_kappa.grad}
