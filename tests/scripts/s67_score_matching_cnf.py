"""Score matching and a continuous normalising flow, as the score-based generative modelling
tutorials and FFJORD-style code write them: an MLP score network trained by exact
(Hyvarinen) score matching whose divergence term is the trace of per-sample Jacobians from
``vmap(jacrev(...))``; sliced score matching with random projections, the directional
derivative from ``autograd.grad(..., create_graph=True)``; denoising score matching with
NumPy noise. Then a tiny CNF: the log-density change is integrated with RK4 along with the
state, the trace of the vector field's Jacobian exact (``vmap(jacrev)``, ``torch.diagonal``
over a ``vmap``-ed Jacobian) and by Hutchinson's estimator (vector-Jacobian products with
``create_graph=True``, FFJORD's choice); the negative log-likelihood is minimised with Adam
through the solver, and ``torch.func.grad`` over ``functional_call`` gives the same
parameter gradient as ``.backward()``."""

import math

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, grad, jacrev, vmap

torch.set_default_dtype(torch.float64)


class ScoreNet(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, hidden), nn.Softplus(), nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, 2),
        )  # fmt: skip

    def forward(self, x):
        return self.net(x)


class ODEFunc(nn.Module):
    def __init__(self, hidden=12):
        super().__init__()
        self.l1 = nn.Linear(3, hidden)
        self.l2 = nn.Linear(hidden, 2)

    def forward(self, t, z):
        tt = torch.ones_like(z[..., :1]) * t
        return self.l2(torch.tanh(self.l1(torch.cat([z, tt], dim=-1))))


def init_(module, rng, scale=0.5):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, scale, size=tuple(p.shape))))


def exact_sm_loss(model, x):
    s = model(x)
    jac = vmap(jacrev(model))(x)  # (n, 2, 2)
    div = torch.diagonal(jac, dim1=-2, dim2=-1).sum(-1)
    return (0.5 * (s**2).sum(-1) + div).mean()


def sliced_sm_loss(model, x, v):
    x = x.detach().requires_grad_(True)
    s = model(x)
    sv = (s * v).sum()
    (gsv,) = torch.autograd.grad(sv, x, create_graph=True)
    return (0.5 * (s * v).sum(-1) ** 2 + (gsv * v).sum(-1)).mean()


def trace_exact(func, t, z):
    jac = vmap(jacrev(lambda zi: func(t, zi)))(z)
    return jac.diagonal(dim1=1, dim2=2).sum(1)


def trace_hutchinson(func, t, z, e):
    with torch.enable_grad():
        z = z if z.requires_grad else z.detach().requires_grad_(True)
        f = func(t, z)
        (ej,) = torch.autograd.grad(f, z, e, create_graph=True)
    return f, (ej * e).sum(1)


def cnf_logp(func, x, steps=8, e=None):
    """Integrate [z, dlogp] from t=1 (data) to t=0 (base) with RK4; return log p(x)."""

    def aug(t, z):
        if e is None:
            return func(t, z), -trace_exact(func, t, z)
        f, tr = trace_hutchinson(func, t, z, e)
        return f, -tr

    h = -1.0 / steps
    z, dlogp = x, torch.zeros(x.shape[0])
    t = 1.0
    for _ in range(steps):
        k1 = aug(t, z)
        k2 = aug(t + h / 2, z + h / 2 * k1[0])
        k3 = aug(t + h / 2, z + h / 2 * k2[0])
        k4 = aug(t + h, z + h * k3[0])
        z = z + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        dlogp = dlogp + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        t = t + h
    logpz = -0.5 * (z**2).sum(1) - math.log(2 * math.pi)
    return logpz - dlogp, z


def main():
    rng = np.random.default_rng(67)
    centers = np.array([[1.5, 0.0], [-1.5, 0.5]])
    data = centers[rng.integers(0, 2, size=32)] + 0.3 * rng.normal(size=(32, 2))
    x = torch.from_numpy(data)
    out = {}

    model = ScoreNet()
    init_(model, rng)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    hist = []
    for _ in range(4):
        opt.zero_grad()
        loss = exact_sm_loss(model, x)
        loss.backward()
        opt.step()
        hist.append(loss.item())
    out["exact_sm_hist"] = hist
    out["exact_sm_grad_last"] = model.net[0].weight.grad

    ssm = ScoreNet()
    init_(ssm, rng)
    opt2 = torch.optim.SGD(ssm.parameters(), lr=5e-2, momentum=0.9)
    hist2 = []
    for _ in range(4):
        v = torch.from_numpy(rng.normal(size=(32, 2)))
        opt2.zero_grad()
        loss = sliced_sm_loss(ssm, x, v)
        loss.backward()
        opt2.step()
        hist2.append(loss.item())
    out["sliced_sm_hist"] = hist2
    out["sliced_sm_w"] = ssm.net[4].weight

    # sliced estimate with many projections vs the exact loss, same network
    vs = torch.from_numpy(rng.normal(size=(64, 32, 2)))
    est = torch.stack([sliced_sm_loss(model, x, vs[i]) for i in range(8)])
    out["sliced_vs_exact"] = torch.stack([est.mean(), exact_sm_loss(model, x)])

    # denoising score matching at one noise level
    sigma = 0.2
    noise = torch.from_numpy(rng.normal(size=(32, 2)))
    xt = x + sigma * noise
    dsm = ((model(xt) + noise / sigma) ** 2).sum(-1).mean() * sigma**2 / 2
    out["dsm"] = dsm
    out["dsm_grad_b"] = torch.autograd.grad(dsm, model.net[2].bias)[0]

    # continuous normalising flow
    func = ODEFunc()
    init_(func, rng, scale=0.4)
    logp, z0 = cnf_logp(func, x[:10])
    out["cnf_logp"] = logp
    out["cnf_z0"] = z0
    e = torch.from_numpy(rng.choice([-1.0, 1.0], size=(10, 2)))
    logp_h, _ = cnf_logp(func, x[:10], e=e)
    out["cnf_logp_hutch"] = logp_h
    tr_e = trace_exact(func, 0.3, x[:10])
    tr_fd = []
    for i in range(2):
        d = torch.zeros(2)
        d[i] = 1e-6
        tr_fd.append((func(0.3, x[:10] + d)[:, i] - func(0.3, x[:10] - d)[:, i]) / 2e-6)
    out["trace_vs_fd"] = (tr_e - sum(tr_fd)).abs().max()

    params = {k: v.detach().clone() for k, v in func.named_parameters()}

    def nll(p):
        return -cnf_logp(lambda t, z: functional_call(func, p, (t, z)), x[:10], steps=4)[0].mean()

    g_func = grad(nll)(params)
    func.zero_grad()
    nll_eager = -cnf_logp(func, x[:10], steps=4)[0].mean()
    nll_eager.backward()
    out["nll"] = nll_eager
    out["grad_l1_w"] = g_func["l1.weight"]
    out["grad_func_vs_eager"] = max(
        (g_func[k] - p.grad).abs().max() for k, p in func.named_parameters()
    )

    opt3 = torch.optim.Adam(func.parameters(), lr=2e-2)
    hist3 = []
    for _ in range(3):
        opt3.zero_grad()
        loss = -cnf_logp(func, x[:10], steps=4, e=e)[0].mean()
        loss.backward()
        opt3.step()
        hist3.append(loss.item())
    out["cnf_train_hist"] = hist3
    return out


TOLERANCE = {"trace_vs_fd": (1e-6, 1e-6), "grad_func_vs_eager": (1e-6, 1e-12)}
