"""Per-sample gradients with ``torch.func`` (PyTorch tutorial): functional_call +
vmap(grad(...)) over the batch, checked against a Python loop of ordinary backward calls."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)


def main():
    rng = np.random.default_rng(11)
    model = Net()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    data = torch.from_numpy(rng.normal(size=(5, 6)))
    targets = torch.from_numpy(rng.integers(0, 3, size=5))

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return F.nll_loss(predictions, target.unsqueeze(0))

    ft_per_sample = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(
        params, buffers, data, targets
    )
    loop = []
    for i in range(5):
        model.zero_grad()
        F.nll_loss(model(data[i : i + 1]), targets[i : i + 1]).backward()
        loop.append(model.fc1.weight.grad.clone())
    return {
        "fc1_weight": ft_per_sample["fc1.weight"],
        "fc2_bias": ft_per_sample["fc2.bias"],
        "match": float(torch.allclose(ft_per_sample["fc1.weight"], torch.stack(loop))),
    }
