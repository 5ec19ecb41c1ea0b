"""Model ensembling exactly as the torch.func tutorial writes it: the stateless base copy lives
on the ``meta`` device (shapes only, no storage) and ``functional_call`` supplies the weights."""

import copy

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, stack_module_state, vmap

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(37)
    models = [nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)) for _ in range(3)]
    for m in models:
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.from_numpy(rng.normal(size=tuple(p.shape))))
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    x = torch.from_numpy(rng.normal(size=(5, 3)))
    return {"pred": vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)}
