"""Autograd mechanics from the docs: ``retain_grad``, tensor hooks that rescale gradients,
module forward hooks, ``backward(inputs=...)``, gradient accumulation and ``detach``."""

import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def main():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x * w
    h.retain_grad()
    h.register_hook(lambda g: g * 2)
    y = (h**2).sum()
    y.backward(retain_graph=True)
    gx1 = x.grad.clone()
    y.backward(inputs=[w])  # accumulates into w only
    acts = {}
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.3, 0.2, -0.1]]))
        lin.bias.copy_(torch.tensor([0.01, -0.02]))
    handle = lin.register_forward_hook(lambda mod, inp, out: acts.__setitem__("out", out.detach()))
    z = lin(x.detach()).tanh().sum()
    z.backward()
    handle.remove()
    lin(x.detach())
    a = torch.ones(2, 2, requires_grad=True)
    for _ in range(3):
        (a * 3).sum().backward()
    return {
        "gx1": gx1,
        "gx_after": x.grad,
        "gw": w.grad,
        "h_grad": h.grad,
        "acts": acts["out"],
        "lin_w_grad": lin.weight.grad,
        "accum": a.grad,
        "is_leaf": float(h.is_leaf),
        "requires": float(h.detach().requires_grad),
    }
