"""A sequence model written the way "LSTM from scratch" tutorials do it: one ``nn.Module``
cell holding the four gates in a single ``nn.Linear`` (``chunk(4, dim=1)``), unrolled over
time with a Python loop and ``torch.stack``; trained to predict the next value of noisy
sine waves with truncated back-propagation through time (``h.detach()`` between windows),
``clip_grad_norm_`` and Adam; then a free-running (closed-loop) forecast under
``torch.no_grad()``. A hand-written Elman RNN with ``torch.tanh`` and a learned initial
state (``nn.Parameter`` expanded over the batch) is trained alongside. Everything runs in
the default float32, as such tutorials do."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMCell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.n_hidden = n_hidden
        self.ih = nn.Linear(n_in, 4 * n_hidden)
        self.hh = nn.Linear(n_hidden, 4 * n_hidden, bias=False)

    def forward(self, x, state):
        h, c = state
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, o = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o)
        g = torch.tanh(g)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


class Forecaster(nn.Module):
    def __init__(self, n_hidden=8):
        super().__init__()
        self.cell = LSTMCell(1, n_hidden)
        self.head = nn.Linear(n_hidden, 1)

    def forward(self, xs, state=None):
        # xs: (T, B, 1)
        if state is None:
            zeros = xs.new_zeros(xs.shape[1], self.cell.n_hidden)
            state = (zeros, zeros)
        outs = []
        for x in xs.unbind(0):
            state = self.cell(x, state)
            outs.append(self.head(state[0]))
        return torch.stack(outs), state


class ElmanRNN(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.W = nn.Parameter(torch.empty(n_in, n_hidden))
        self.U = nn.Parameter(torch.empty(n_hidden, n_hidden))
        self.b = nn.Parameter(torch.zeros(n_hidden))
        self.h0 = nn.Parameter(torch.zeros(1, n_hidden))
        self.out = nn.Linear(n_hidden, 1)

    def forward(self, xs):
        h = self.h0.expand(xs.shape[0], -1)
        hs = []
        for t in range(xs.shape[1]):
            h = torch.tanh(xs[:, t] @ self.W + h @ self.U + self.b)
            hs.append(h)
        hs = torch.stack(hs, dim=1)  # (B, T, H)
        return self.out(hs).squeeze(-1)


def init_(model, rng, scale):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.normal(0, scale, size=tuple(p.shape))))


def main():
    rng = np.random.default_rng(59)
    t = np.arange(48) * 0.25
    phases = rng.uniform(0, 2 * math.pi, size=4)
    waves = np.sin(t[:, None] + phases[None, :]) + 0.05 * rng.normal(size=(48, 4))
    series = torch.from_numpy(waves).float().unsqueeze(-1)  # (T, B, 1)

    model = Forecaster()
    init_(model, rng, 0.3)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    window = 12
    losses, norms = [], []
    for _epoch in range(2):
        state = None
        for start in range(0, 47 - window + 1, window):
            x = series[start : start + window]
            y = series[start + 1 : start + window + 1]
            opt.zero_grad()
            pred, state = model(x, state)
            loss = F.mse_loss(pred, y)
            loss.backward()
            norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)))
            opt.step()
            state = tuple(s.detach() for s in state)
            losses.append(loss.item())

    with torch.no_grad():
        _, state = model(series[:40])
        x = series[39]
        forecast = []
        for _ in range(8):
            h, c = model.cell(x, state)
            state = (h, c)
            x = model.head(h)
            forecast.append(x)
        forecast = torch.stack(forecast).squeeze(-1)

    rnn = ElmanRNN(2, 6)
    init_(rnn, rng, 0.4)
    xs = torch.tensor(rng.normal(size=(5, 7, 2)), dtype=torch.float32)
    target = torch.cumsum(xs[..., 0] * xs[..., 1], dim=1)
    opt2 = torch.optim.SGD(rnn.parameters(), lr=0.05, momentum=0.5)
    rnn_losses = []
    for _ in range(5):
        opt2.zero_grad()
        loss = F.smooth_l1_loss(rnn(xs), target, beta=0.5)
        loss.backward()
        opt2.step()
        rnn_losses.append(loss.item())

    return {
        "losses": losses,
        "grad_norms": norms,
        "forecast": forecast,
        "cell_ih": model.cell.ih.weight,
        "rnn_losses": rnn_losses,
        "h0_grad": rnn.h0.grad,
        "U": rnn.U,
    }


# losses and norms are float32 computations returned as Python floats (float64 arrays)
TOLERANCE = {"losses": (1e-4, 1e-6), "grad_norms": (1e-4, 1e-6), "rnn_losses": (1e-4, 1e-6)}
