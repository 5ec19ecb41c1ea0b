"""Deep equilibrium layer (implicit-layers tutorial style): forward by fixed-point iteration
under no_grad, backward by solving the adjoint fixed point inside a ``register_hook``."""

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def fixed_point(f, z0, tol=1e-12, max_iter=200):
    z = z0
    for k in range(max_iter):
        z_next = f(z)
        if torch.norm(z_next - z) < tol:
            return z_next, k
        z = z_next
    return z, max_iter


class TanhFixedPointLayer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n, bias=False)

    def forward(self, x):
        with torch.no_grad():
            z, self.iters = fixed_point(
                lambda z: torch.tanh(self.linear(z) + x), torch.zeros_like(x)
            )
        z = torch.tanh(self.linear(z) + x)  # re-engage autograd
        z0 = z.clone().detach().requires_grad_()
        f0 = torch.tanh(self.linear(z0) + x)

        def backward_hook(grad):
            g, _ = fixed_point(
                lambda y: autograd.grad(f0, z0, y, retain_graph=True)[0] + grad, grad
            )
            return g

        if z.requires_grad:
            z.register_hook(backward_hook)
        return z


def main():
    rng = np.random.default_rng(2)
    n = 6
    layer = TanhFixedPointLayer(n)
    with torch.no_grad():
        layer.linear.weight.copy_(torch.from_numpy(rng.normal(0, 0.3 / np.sqrt(n), (n, n))))
    x = torch.from_numpy(rng.normal(size=(4, n))).requires_grad_()
    z = layer(x)
    loss = (z**2).sum()
    loss.backward()
    # implicit-function-theorem check: the fixed point solves z = tanh(Wz + x)
    residual = torch.norm(z - torch.tanh(layer.linear(z) + x)).item()
    return {
        "z": z,
        "loss": loss.item(),
        "x_grad": x.grad,
        "w_grad": layer.linear.weight.grad,
        "residual_small": float(residual < 1e-10),
    }
