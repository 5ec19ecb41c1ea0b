"""Spectral solver for the periodic Poisson equation -u'' = f with ``torch.fft.rfft`` /
``irfft`` and wavenumbers from ``fftfreq``; the gradient of a misfit with respect to the
source flows through the FFTs."""

import math

import torch

torch.set_default_dtype(torch.float64)


def solve_poisson(f, length=2 * math.pi):
    n = f.shape[-1]
    k = torch.fft.rfftfreq(n, d=length / n) * 2 * math.pi
    f_hat = torch.fft.rfft(f)
    k2 = k**2
    k2[0] = 1.0
    u_hat = f_hat / k2
    u_hat[0] = 0.0
    return torch.fft.irfft(u_hat, n=n)


def main():
    n = 32
    x = torch.linspace(0, 2 * math.pi, n + 1)[:-1]
    f = (torch.sin(3 * x) + 0.5 * torch.cos(x)).requires_grad_()
    u = solve_poisson(f)
    target = torch.sin(x) / 4
    loss = ((u - target) ** 2).mean()
    loss.backward()
    return {
        "u": u.detach(),
        "loss": loss.item(),
        "grad": f.grad,
        "exact_err": (u - (torch.sin(3 * x) / 9 + 0.5 * torch.cos(x))).abs().max().item(),
    }
