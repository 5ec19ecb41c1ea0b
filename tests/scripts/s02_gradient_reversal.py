"""Gradient reversal layer (DANN, Ganin & Lempitsky): identity forward, -alpha * grad backward."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

torch.set_default_dtype(torch.float64)


class ReverseLayerF(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh())
        self.class_head = nn.Linear(6, 3)
        self.domain_head = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 2))

    def forward(self, x, alpha):
        f = self.feature(x)
        return self.class_head(f), self.domain_head(ReverseLayerF.apply(f, alpha))


def main():
    rng = np.random.default_rng(1)
    model = DANN()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape))))
    xs = torch.from_numpy(rng.normal(size=(10, 5)))
    ys = torch.from_numpy(rng.integers(0, 3, size=10))
    xt = torch.from_numpy(rng.normal(size=(10, 5)) + 0.5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    out = {}
    for step in range(5):
        p = float(step) / 5
        alpha = 2.0 / (1.0 + np.exp(-10 * p)) - 1
        opt.zero_grad()
        cls, dom_s = model(xs, alpha)
        _, dom_t = model(xt, alpha)
        loss_cls = F.cross_entropy(cls, ys)
        dom_labels = torch.cat(
            [torch.zeros(10, dtype=torch.long), torch.ones(10, dtype=torch.long)]
        )
        loss_dom = F.nll_loss(F.log_softmax(torch.cat([dom_s, dom_t]), dim=1), dom_labels)
        (loss_cls + loss_dom).backward()
        out[f"loss_{step}"] = (loss_cls + loss_dom).item()
        opt.step()
    out["feature_grad"] = model.feature[0].weight.grad
    out["domain_grad"] = model.domain_head[0].weight.grad
    return out
