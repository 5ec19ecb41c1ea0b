"""A PINN in the functional style (torch.func): the network is a pure function of a
parameter dict; u_x and u_xx per collocation point come from
``vmap(jacrev(jacrev(u)))``, the loss gradient from ``grad`` w.r.t. the parameters, and
the update is a plain SGD step on the dict."""

import math

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, grad, jacrev, vmap

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(55)
    model = nn.Sequential(
        nn.Linear(1, 12), nn.Tanh(), nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 1)
    )
    params = {
        k: torch.from_numpy(rng.normal(0, 0.6, size=tuple(v.shape)))
        for k, v in model.named_parameters()
    }

    def u(p, x):
        return functional_call(model, p, (x.reshape(1, 1),)).reshape(())

    def loss_fn(p, xs):
        u_xx = vmap(jacrev(jacrev(u, argnums=1), argnums=1), in_dims=(None, 0))(p, xs)
        f = -(math.pi**2) * torch.sin(math.pi * xs)
        bc = vmap(u, in_dims=(None, 0))(p, torch.tensor([0.0, 1.0]))
        return ((u_xx - f) ** 2).mean() + (bc**2).mean()

    xs = torch.linspace(0, 1, 12)
    history = []
    for _ in range(10):
        g = grad(loss_fn)(params, xs)
        params = {k: params[k] - 1e-3 * g[k] for k in params}
        history.append(loss_fn(params, xs).item())
    return {
        "history": history,
        "w0": params["0.weight"],
        "u_x": vmap(jacrev(u, argnums=1), in_dims=(None, 0))(params, xs),
    }
