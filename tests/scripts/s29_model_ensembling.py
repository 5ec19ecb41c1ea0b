"""Model ensembling tutorial (torch.func): ``stack_module_state`` + ``functional_call`` under
``vmap`` run several MLPs at once; compared with running each model separately."""

import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

torch.set_default_dtype(torch.float64)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    rng = np.random.default_rng(25)
    models = [SimpleMLP() for _ in range(4)]
    for m in models:
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    minibatch = torch.from_numpy(rng.normal(size=(6, 5)))
    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    predictions = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    expected = torch.stack([m(minibatch) for m in models])
    return {
        "pred": predictions,
        "match": float(torch.allclose(predictions, expected)),
        "stacked_shape": list(params["fc1.weight"].shape),
    }
