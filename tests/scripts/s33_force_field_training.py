"""Force-matching for a neural pair potential (SchNet/DeePMD style, toy): edge energies from an
MLP on distances, per-atom energies by ``index_add``, forces = -dE/dpos with
``create_graph=True`` so the force loss trains the network."""

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def reference(pos, edges):
    r = (pos[edges[0]] - pos[edges[1]]).norm(dim=-1)
    return (0.5 * (r - 1.0) ** 2).sum()


class PairPotential(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, 12), nn.Softplus(), nn.Linear(12, 1))

    def forward(self, pos, edges):
        r = (pos[edges[0]] - pos[edges[1]]).norm(dim=-1, keepdim=True)
        e_edge = self.mlp(r).squeeze(-1)
        e_atom = torch.zeros(pos.shape[0]).index_add(0, edges[0], e_edge)
        return e_atom.sum()


def main():
    rng = np.random.default_rng(29)
    n = 5
    ii, jj = np.triu_indices(n, 1)
    edges = torch.from_numpy(np.stack([ii, jj]))
    model = PairPotential()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    hist = []
    for _ in range(8):
        pos = torch.from_numpy(rng.normal(size=(n, 3))).requires_grad_()
        e_ref = reference(pos, edges)
        f_ref = -torch.autograd.grad(e_ref, pos)[0]
        e = model(pos, edges)
        f = -torch.autograd.grad(e, pos, create_graph=True)[0]
        loss = (e - e_ref.detach()) ** 2 + ((f - f_ref) ** 2).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append(loss.item())
    scat = torch.zeros(n).scatter_add(0, edges[1], torch.ones(edges.shape[1]))
    return {
        "hist": hist,
        "w": model.mlp[0].weight,
        "in_degree": scat,
        "bincount": torch.bincount(edges[0], minlength=n),
    }
