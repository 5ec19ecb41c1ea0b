"""Neural ODE with the adjoint method written as torchdiffeq's ``odeint_adjoint`` does it, at
toy size: a custom ``autograd.Function`` whose ``forward`` integrates the vector field with
fixed-step RK4 under ``no_grad`` and stores the module on ``ctx``; ``backward`` integrates
the augmented adjoint system [z, a, dL/dtheta] backwards in time, the products a^T df/dz and
a^T df/dtheta coming from ``torch.func.vjp`` over ``functional_call`` with the parameters as
one flat vector (``parameters_to_vector``); observation-time gradients are added to the
adjoint on the way back. The adjoint gradients are compared with backpropagation through
the same solver (discretise-then-optimise), the model is fitted to a spiral (torchdiffeq's
``ode_demo``) with Adam, and the Function is run through ``gradcheck`` at loose tolerance.
A second, closed-form check: a linear ODE dz/dt = A z whose solution and gradient come from
``torch.linalg.matrix_exp``."""

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, vjp
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.set_default_dtype(torch.float64)


class VectorField(nn.Module):
    def __init__(self, dim=2, hidden=10):
        super().__init__()
        self.lin1 = nn.Linear(dim, hidden)
        self.lin2 = nn.Linear(hidden, dim)

    def forward(self, t, z):
        return self.lin2(torch.tanh(self.lin1(z**3))) - 0.1 * z


def unflatten(module, flat):
    out, i = {}, 0
    for name, p in module.named_parameters():
        n = p.numel()
        out[name] = flat[i : i + n].view_as(p)
        i += n
    return out


def rk4_step(f, t, z, h):
    k1 = f(t, z)
    k2 = f(t + h / 2, z + h / 2 * k1)
    k3 = f(t + h / 2, z + h / 2 * k2)
    k4 = f(t + h, z + h * k3)
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint(f, z0, ts, substeps):
    zs = [z0]
    z = z0
    for i in range(len(ts) - 1):
        h = (ts[i + 1] - ts[i]) / substeps
        t = ts[i]
        for _ in range(substeps):
            z = rk4_step(f, t, z, h)
            t = t + h
        zs.append(z)
    return torch.stack(zs)


class ODEAdjoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z0, flat_params, ts, func, substeps):
        params = unflatten(func, flat_params)
        with torch.no_grad():
            zs = odeint(lambda t, z: functional_call(func, params, (t, z)), z0, ts, substeps)
        ctx.func = func
        ctx.substeps = substeps
        ctx.save_for_backward(ts, zs, flat_params)
        return zs

    @staticmethod
    def backward(ctx, grad_zs):
        ts, zs, flat = ctx.saved_tensors
        func, substeps = ctx.func, ctx.substeps

        def f(t, z, p):
            return functional_call(func, unflatten(func, p), (t, z))

        def aug_dynamics(t, z, a):
            fz, pullback = vjp(lambda z_, p_: f(t, z_, p_), z, flat)
            az, ap = pullback(a)
            return fz, -az, -ap

        z = zs[-1]
        a = grad_zs[-1].clone()
        gp = torch.zeros_like(flat)
        for i in range(len(ts) - 1, 0, -1):
            h = -(ts[i] - ts[i - 1]) / substeps
            t = ts[i]
            for _ in range(substeps):
                k1 = aug_dynamics(t, z, a)
                k2 = aug_dynamics(t + h / 2, z + h / 2 * k1[0], a + h / 2 * k1[1])
                k3 = aug_dynamics(t + h / 2, z + h / 2 * k2[0], a + h / 2 * k2[1])
                k4 = aug_dynamics(t + h, z + h * k3[0], a + h * k3[1])
                z = z + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
                a = a + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
                gp = gp + h / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
                t = t + h
            z = zs[i - 1]  # reset to the stored trajectory (torchdiffeq does the same)
            a = a + grad_zs[i - 1]
        return a, gp, None, None, None


def odeint_adjoint(func, z0, ts, substeps=4):
    flat = parameters_to_vector(func.parameters())
    return ODEAdjoint.apply(z0, flat, ts, func, substeps)


def main():
    rng = np.random.default_rng(70)
    out = {}
    # spiral data from the true system dz/dt = A z^3
    A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
    ts = torch.linspace(0.0, 1.5, 7)
    z0_true = torch.tensor([2.0, 0.0])
    with torch.no_grad():
        true_zs = odeint(lambda t, z: (z**3) @ A.T, z0_true, ts, 10)
    out["true_traj"] = true_zs

    func = VectorField()
    with torch.no_grad():
        vector_to_parameters(
            torch.from_numpy(rng.normal(0, 0.3, size=sum(p.numel() for p in func.parameters()))),
            func.parameters(),
        )
    z0 = torch.from_numpy(rng.normal(size=(3, 2))).requires_grad_(True)
    w = torch.from_numpy(rng.normal(size=(7, 3, 2)))

    zs = odeint_adjoint(func, z0, ts)
    loss = (zs * w).sum()
    loss.backward()
    g_adj = [p.grad.clone() for p in func.parameters()]
    gz0_adj = z0.grad.clone()
    out["adj_traj"] = zs
    out["adj_grad_z0"] = gz0_adj
    out["adj_grad_w1"] = g_adj[0]

    func.zero_grad()
    z0.grad = None
    zs_bp = odeint(func, z0, ts, 4)
    (zs_bp * w).sum().backward()
    out["bp_vs_adj_traj"] = (zs_bp - zs).abs().max()
    out["bp_vs_adj_grad"] = (
        max((p.grad - g).abs().max() for p, g in zip(func.parameters(), g_adj))
        + (z0.grad - gz0_adj).abs().max()
    )

    # gradcheck of the adjoint Function w.r.t. z0 and the flat parameters
    flat = parameters_to_vector(func.parameters()).detach()
    small_ts = torch.linspace(0.0, 0.3, 3)
    ok = torch.autograd.gradcheck(
        lambda z, p: ODEAdjoint.apply(z, p, small_ts, func, 6),
        (z0.detach()[:1].clone().requires_grad_(True), flat.clone().requires_grad_(True)),
        eps=1e-6,
        atol=1e-5,
        rtol=1e-3,
    )
    out["gradcheck"] = ok

    # fit the spiral with the adjoint gradients
    opt = torch.optim.Adam(func.parameters(), lr=0.02)
    hist = []
    for _ in range(5):
        opt.zero_grad()
        pred = odeint_adjoint(func, z0_true, ts, substeps=3)
        loss = (pred - true_zs).abs().mean()
        loss.backward()
        opt.step()
        hist.append(loss.item())
    out["fit_hist"] = hist

    # linear ODE: z(T) = expm(T M) z0 and its gradient w.r.t. M
    lin = nn.Linear(2, 2, bias=False)
    M = torch.tensor([[-0.3, 1.0], [-1.0, -0.2]])
    with torch.no_grad():
        lin.weight.copy_(M)

    class Lin(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, t, z):
            return self.lin(z)

    lf = Lin()
    y0 = torch.tensor([1.0, 0.5])
    ts2 = torch.tensor([0.0, 1.0])
    zT = odeint_adjoint(lf, y0, ts2, substeps=20)[-1]
    zT.sum().backward()
    Mr = M.clone().requires_grad_(True)
    exact = torch.linalg.matrix_exp(Mr) @ y0
    exact.sum().backward()
    out["linear_zT"] = zT
    out["linear_vs_expm"] = (zT - exact).abs().max()
    out["linear_grad_vs_expm"] = (lf.lin.weight.grad - Mr.grad).abs().max()
    return out


TOLERANCE = {
    "bp_vs_adj_traj": (1e-6, 1e-12),
    "bp_vs_adj_grad": (1e-3, 1e-8),
    "linear_vs_expm": (1e-3, 1e-9),
    "linear_grad_vs_expm": (1e-3, 1e-8),
}
