"""Implicit layer as a custom Function (implicit-layers tutorial, chapter 1): forward solves
z = tanh(Wz + x) by Newton's method, backward applies the implicit function theorem with
``torch.linalg.solve`` of the transposed Jacobian."""

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class TanhNewton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, W):
        z = torch.zeros_like(x)
        eye = torch.eye(W.shape[0])
        for _ in range(30):
            z_lin = z @ W.T + x
            g = z - torch.tanh(z_lin)
            if g.norm() < 1e-13:
                break
            J = eye - (1 / torch.cosh(z_lin) ** 2)[:, :, None] * W[None]
            z = z - torch.linalg.solve(J, g[:, :, None])[:, :, 0]
        ctx.save_for_backward(z, x, W)
        return z

    @staticmethod
    def backward(ctx, grad_z):
        z, x, W = ctx.saved_tensors
        s = 1 / torch.cosh(z @ W.T + x) ** 2
        J = torch.eye(W.shape[0]) - s[:, :, None] * W[None]
        u = torch.linalg.solve(J.transpose(1, 2), grad_z[:, :, None])[:, :, 0]
        gx = u * s
        gW = gx.T @ z
        return gx, gW


def main():
    rng = np.random.default_rng(28)
    n = 5
    W = nn.Parameter(torch.from_numpy(rng.normal(0, 0.4, size=(n, n))))
    x = torch.from_numpy(rng.normal(size=(3, n))).requires_grad_()
    ok = torch.autograd.gradcheck(TanhNewton.apply, (x, W))
    z = TanhNewton.apply(x, W)
    (z**2).sum().backward()
    return {"z": z, "x_grad": x.grad, "W_grad": W.grad, "gradcheck": float(ok)}
