r"""
Learning the viscosity of Burgers' equation with a spectral solver
===================================================================

Solve the viscous Burgers equation on the periodic interval :math:`[0, 2\pi)`,

.. math:: u_t + u u_x = \nu u_{xx},

with a pseudo-spectral method written in ``numbagrad.fft``, and recover the viscosity
:math:`\nu` from a noisy snapshot of the solution by gradient descent through the whole
simulation.

Each time step is semi-implicit in Fourier space: the nonlinear term
:math:`\tfrac12 (u^2)_x` is taken explicitly (computed on the grid, differentiated as
:math:`i k`, with the 2/3 rule against aliasing) and the diffusion implicitly,

.. math:: \hat u^{n+1}_k = \frac{\hat u^n_k - \Delta t \, \tfrac{i k}{2} \widehat{(u^n)^2}_k}
                               {1 + \Delta t \, \nu k^2}.

``rfft`` and ``irfft`` carry the gradient back through every step (their adjoints are FFTs
too, NOTE [FFT primitives]), so the gradient of the misfit with respect to :math:`\log\nu`
costs about as much as one more simulation. (The figure needs matplotlib; without it the
script runs and checks all the same.)
"""

import math
import time

import numbagrad as torch

try:
    import matplotlib.pyplot as plt
except ImportError:  # the figure is optional
    plt = None

N = 64  # grid points
STEPS = 80
DT = 0.0125  # to T = 1
TRUE_NU = 0.07

x = torch.arange(N, dtype=torch.float64) * (2 * math.pi / N)
k = torch.fft.rfftfreq(N, d=1.0 / N, dtype=torch.float64)  # wavenumbers 0 .. N/2
dealias = (k < N / 3).to(torch.float64)  # the 2/3 rule
u0 = torch.sin(x) + 0.5 * torch.sin(2 * x + 1.0)


def simulate(nu):
    """``u(T)`` for viscosity ``nu`` (a 0-d tensor), differentiable in ``nu``."""
    u_hat = torch.fft.rfft(u0)
    implicit = 1 + DT * nu * k**2
    for _ in range(STEPS):
        u = torch.fft.irfft(u_hat, n=N)
        nonlinear = 0.5j * k * torch.fft.rfft(u * u) * dealias
        u_hat = (u_hat - DT * nonlinear) / implicit
    return torch.fft.irfft(u_hat, n=N)


# synthetic data: the solution at T with the true viscosity, plus noise
torch.manual_seed(0)
data = simulate(torch.tensor(TRUE_NU, dtype=torch.float64)) + 0.01 * torch.randn(
    N, dtype=torch.float64
)

log_nu = torch.tensor(math.log(0.3), dtype=torch.float64, requires_grad=True)
opt = torch.optim.Adam([log_nu], lr=0.1)
history = []
start = time.perf_counter()
ITERS = 120
for _ in range(ITERS):
    opt.zero_grad()
    loss = ((simulate(log_nu.exp()) - data) ** 2).mean()
    loss.backward()
    opt.step()
    history.append((loss.item(), log_nu.exp().item()))
elapsed = time.perf_counter() - start

nu_fit = log_nu.exp().item()
print(f"true viscosity {TRUE_NU}, start 0.3, fitted {nu_fit:.4f} ({elapsed:.1f} s, {ITERS} steps)")
print(f"misfit: {history[0][0]:.2e} -> {history[-1][0]:.2e} (noise variance 1.0e-04)")
assert abs(nu_fit - TRUE_NU) < 0.05 * TRUE_NU, nu_fit
assert history[-1][0] < 2e-4

if plt is not None:
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    xs = x.numpy()
    ax0.plot(xs, u0.numpy(), "k:", label="u(0)")
    ax0.plot(xs, data.numpy(), ".", ms=4, label="data at T = 1")
    with torch.no_grad():
        ax0.plot(xs, simulate(torch.tensor(0.3, dtype=torch.float64)).numpy(), label="nu = 0.3")
        ax0.plot(xs, simulate(torch.tensor(nu_fit, dtype=torch.float64)).numpy(),
                 label=f"fitted nu = {nu_fit:.3f}")  # fmt: skip
    ax0.set_xlabel("x")
    ax0.legend(fontsize=8)
    ax1.semilogy([h[0] for h in history], label="misfit")
    ax1.set_xlabel("Adam step")
    ax2 = ax1.twinx()
    ax2.plot([h[1] for h in history], "C1", label="nu")
    ax2.axhline(TRUE_NU, color="C1", ls=":")
    ax1.set_ylabel("misfit")
    ax2.set_ylabel("nu")
    plt.show()
