"""Hessian-vector products three ways: double backward, ``autograd.functional.hvp`` and
forward-over-reverse with ``torch.func.jvp(grad(f))``; plus a few CG steps of Newton."""

import numpy as np
import torch
from torch.autograd.functional import hessian, hvp
from torch.func import grad, jvp

torch.set_default_dtype(torch.float64)


def rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def hvp_double_backward(f, x, v):
    x = x.detach().requires_grad_()
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v)
    return hv


def conjugate_gradient(Av, b, iters=10):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r.dot(r)
    for _ in range(iters):
        Ap = Av(p)
        alpha = rs / p.dot(Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r.dot(r)
        if rs_new.sqrt() < 1e-12:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def main():
    rng = np.random.default_rng(12)
    x = torch.from_numpy(rng.uniform(-1, 1, size=5))
    v = torch.from_numpy(rng.normal(size=5))
    hv1 = hvp_double_backward(rosenbrock, x, v)
    _, hv2 = hvp(rosenbrock, x, v)
    _, hv3 = jvp(grad(rosenbrock), (x,), (v,))
    H = hessian(rosenbrock, x)
    g = torch.func.grad(rosenbrock)(x)
    step = conjugate_gradient(lambda p: hvp_double_backward(rosenbrock, x, p), -g)
    return {
        "hv1": hv1,
        "hv2": hv2,
        "hv3": hv3,
        "H": H,
        "newton_step": step,
        "newton_residual": (H @ step + g).abs().max().item(),
    }
