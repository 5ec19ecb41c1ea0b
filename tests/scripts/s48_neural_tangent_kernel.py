"""Empirical neural tangent kernel (the torch.func NTK tutorial): per-example Jacobians with
``vmap(jacrev(fnet_single))`` over ``functional_call``, contracted with ``einsum``; also
the NTK-vector-product form with ``vjp``/``jvp``."""

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, jvp, vjp, vmap

torch.set_default_dtype(torch.float64)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def main():
    rng = np.random.default_rng(48)
    net = MLP()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    x1 = torch.from_numpy(rng.normal(size=(4, 3)))
    x2 = torch.from_numpy(rng.normal(size=(5, 3)))

    def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2):
        jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = jac1.values()
        jac1 = [j.flatten(2) for j in jac1]
        jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = jac2.values()
        jac2 = [j.flatten(2) for j in jac2]
        result = torch.stack([torch.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)])
        return result.sum(0)

    def empirical_ntk_ntk_vps(func, params, x1, x2):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func(params, x1)

            def func_x2(params):
                return func(params, x2)

            output, vjp_fn = vjp(func_x1, params)

            def get_ntk_slice(vec):
                vjps = vjp_fn(vec)
                _, jvps = jvp(func_x2, (params,), vjps)
                return jvps

            basis = torch.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
            return vmap(get_ntk_slice)(basis)

        result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
        return result

    ntk = empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2)
    ntk2 = empirical_ntk_ntk_vps(fnet_single, params, x1, x2)
    return {"ntk": ntk, "ntk_vps": ntk2, "trace": torch.einsum("NMaa->NM", ntk)}
