r"""
A GRU surrogate for a forced oscillator
=======================================

Learn the map from a forcing signal :math:`f(t)` to the response :math:`x(t)` of the damped
Duffing oscillator

.. math:: \ddot x + 0.3\,\dot x + x + 0.5\,x^3 = f(t), \qquad x(0) = \dot x(0) = 0,

with a two-layer ``nn.GRU`` reading the forcing one step at a time: the recurrent state has
to carry the oscillator's memory (its phase and amplitude) along the sequence. Training data
are 128 random smooth forcings, integrated with RK4 by NumPy; the model is trained with Adam
on the mean squared error of the whole trajectory and checked on forcings it has not seen.

Each GRU layer projects the whole sequence with one matrix product and runs its recurrence
as one fused primitive with a fused backward through time, so a training step costs about
as much as PyTorch's. The figure shows a test forcing, the true response and the GRU's.
(It needs matplotlib; without it the script runs and checks all the same.)
"""

import numpy as np

import numbagrad
from numbagrad import nn

try:
    import matplotlib.pyplot as plt
except ImportError:  # the figure is optional
    plt = None

T, DT = 120, 0.1
rng = np.random.default_rng(0)


def random_forcing(n):
    """Smooth random forcings: sums of a few sines with random frequencies and phases."""
    t = np.arange(T) * DT
    freq = rng.uniform(0.2, 1.5, (n, 3, 1))
    phase = rng.uniform(0, 2 * np.pi, (n, 3, 1))
    amp = rng.uniform(0.2, 1.0, (n, 3, 1))
    return (amp * np.sin(freq * t + phase)).sum(1)


def respond(f):
    """The oscillator's displacement under forcing ``f`` (RK4, the forcing held per step)."""

    def rhs(x, v, fk):
        return v, fk - 0.3 * v - x - 0.5 * x**3

    x = np.zeros(f.shape[0])
    v = np.zeros(f.shape[0])
    out = np.empty_like(f)
    for k in range(T):
        fk = f[:, k]
        k1 = rhs(x, v, fk)
        k2 = rhs(x + 0.5 * DT * k1[0], v + 0.5 * DT * k1[1], fk)
        k3 = rhs(x + 0.5 * DT * k2[0], v + 0.5 * DT * k2[1], fk)
        k4 = rhs(x + DT * k3[0], v + DT * k3[1], fk)
        x = x + DT / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + DT / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        out[:, k] = x
    return out


f_train, f_test = random_forcing(128), random_forcing(16)
x_train, x_test = respond(f_train), respond(f_test)


def as_seq(a):
    """(batch, time) -> (time, batch, 1) float32 tensors, PyTorch's default layout."""
    return numbagrad.tensor(a.T[:, :, None].astype(np.float32))


class Surrogate(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.gru = nn.GRU(1, hidden, num_layers=2)
        self.head = nn.Linear(hidden, 1)

    def forward(self, f):
        h, _ = self.gru(f)
        return self.head(h)


numbagrad.manual_seed(0)
model = Surrogate()
opt = numbagrad.optim.Adam(model.parameters(), lr=1e-2)
sched = numbagrad.optim.lr_scheduler.StepLR(opt, step_size=150, gamma=0.3)
F_train, X_train = as_seq(f_train), as_seq(x_train)
F_test, X_test = as_seq(f_test), as_seq(x_test)

scale = float((X_test**2).mean())
for step in range(300):
    opt.zero_grad()
    loss = ((model(F_train) - X_train) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
    if step % 100 == 0:
        print(f"step {step:3d}  train mse {loss.item():.2e}")

with numbagrad.no_grad():
    pred = model(F_test)
rel = float(((pred - X_test) ** 2).mean()) / scale
print(f"test relative mse {rel:.3f} (response variance {scale:.3f})")
assert rel < 0.2, rel

if plt is not None:
    t = np.arange(T) * DT
    fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    ax[0].plot(t, f_test[0], color="gray")
    ax[0].set_ylabel("forcing f(t)")
    ax[1].plot(t, x_test[0], label="oscillator (RK4)")
    ax[1].plot(t, pred[:, 0, 0].numpy(), "--", label="GRU surrogate")
    ax[1].set_xlabel("t")
    ax[1].set_ylabel("x(t)")
    ax[1].legend()
    fig.tight_layout()
    plt.show()
