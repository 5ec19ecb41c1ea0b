"""1-D Gaussian mixture: negative log-likelihood with ``logsumexp`` and softmax-parameterised
weights fitted by gradient descent, then EM updates computed with tensor reductions."""

import math

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class GMM(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(k))
        self.means = nn.Parameter(torch.linspace(-1, 1, k))
        self.log_std = nn.Parameter(torch.zeros(k))

    def log_prob(self, x):
        x = x.unsqueeze(-1)
        comp = (
            -0.5 * ((x - self.means) / self.log_std.exp()) ** 2
            - self.log_std
            - 0.5 * math.log(2 * math.pi)
        )
        return torch.logsumexp(comp + torch.log_softmax(self.logits, -1), dim=-1)


def main():
    rng = np.random.default_rng(27)
    data = torch.from_numpy(np.concatenate([rng.normal(-2, 0.5, 60), rng.normal(1.5, 1.0, 90)]))
    gmm = GMM(2)
    opt = torch.optim.Adagrad(gmm.parameters(), lr=0.1)
    nll = []
    for _ in range(30):
        opt.zero_grad()
        loss = -gmm.log_prob(data).mean()
        loss.backward()
        opt.step()
        nll.append(loss.item())
    with torch.no_grad():
        w = torch.softmax(gmm.logits, 0)
        mu, sd = gmm.means.clone(), gmm.log_std.exp()
        for _ in range(10):
            logr = torch.log(w) - 0.5 * ((data[:, None] - mu) / sd) ** 2 - torch.log(sd)
            r = torch.exp(logr - logr.logsumexp(dim=1, keepdim=True))
            nk = r.sum(0)
            w = nk / nk.sum()
            mu = (r * data[:, None]).sum(0) / nk
            sd = torch.sqrt((r * (data[:, None] - mu) ** 2).sum(0) / nk)
    return {"nll": nll, "w": w, "mu": mu, "sd": sd}
