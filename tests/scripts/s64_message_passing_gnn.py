"""A tiny message-passing graph neural network written without PyG, as in "GNNs from
scratch" tutorials and molecular-property code: a radius graph from ``torch.cdist`` and
``nonzero``; messages gathered with ``index_select``/advanced indexing; aggregation by
``index_add_`` (sum), ``scatter_add`` with expanded indices, ``scatter_reduce`` (``amax``,
``mean`` with ``include_self=False``) and a segment softmax for attention weights
(``scatter_reduce`` max, ``gather``-back, ``index_add`` normaliser); degree from
``bincount``; atom-type embeddings as rows of an ``nn.Parameter`` table; graph-level
readout by ``index_add`` over a batch vector; trained a few steps with AdamW,
``clip_grad_norm_`` and ``OneCycleLR``; forces as ``-dE/dpos`` through all of it."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def radius_graph(pos, batch, r):
    d = torch.cdist(pos, pos)
    same = batch[:, None] == batch[None, :]
    adj = (d < r) & same & ~torch.eye(pos.shape[0], dtype=torch.bool)
    src, dst = adj.nonzero(as_tuple=True)
    return torch.stack([src, dst]), d[src, dst]


def segment_softmax(scores, index, n):
    smax = torch.zeros(n, scores.shape[1]).scatter_reduce(
        0, index[:, None].expand_as(scores), scores, reduce="amax", include_self=False
    )
    ex = torch.exp(scores - smax.gather(0, index[:, None].expand_as(scores)))
    denom = torch.zeros(n, scores.shape[1]).index_add(0, index, ex)
    return ex / denom[index]


class MPLayer(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.msg = nn.Linear(2 * h + 1, h)
        self.att = nn.Linear(h, 1)
        self.upd = nn.Linear(3 * h, h)

    def forward(self, x, edge_index, dist):
        src, dst = edge_index
        m = F.silu(self.msg(torch.cat([x[src], x.index_select(0, dst), dist[:, None]], dim=1)))
        alpha = segment_softmax(self.att(m), dst, x.shape[0])
        agg_att = torch.zeros_like(x).index_add_(0, dst, alpha * m)
        agg_max = torch.zeros_like(x).scatter_reduce(
            0, dst[:, None].expand_as(m), m, reduce="amax", include_self=False
        )
        agg_mean = torch.zeros_like(x).scatter_reduce(
            0, dst[:, None].expand_as(m), m, reduce="mean", include_self=False
        )
        return x + torch.tanh(self.upd(torch.cat([agg_att, agg_max, agg_mean], dim=1)))


class GNN(nn.Module):
    def __init__(self, n_types=3, h=8):
        super().__init__()
        self.embed_w = nn.Parameter(torch.zeros(n_types, h))
        self.layers = nn.ModuleList([MPLayer(h) for _ in range(2)])
        self.readout = nn.Linear(h, 1)

    def forward(self, types, pos, batch, n_graphs, r=1.6):
        x = self.embed_w[types]
        edge_index, dist = radius_graph(pos, batch, r)
        for layer in self.layers:
            x = layer(x, edge_index, dist)
        node_e = self.readout(x).squeeze(-1)
        energy = torch.zeros(n_graphs).index_add(0, batch, node_e)
        deg = torch.bincount(edge_index[1], minlength=x.shape[0])
        return energy, deg, edge_index


def main():
    rng = np.random.default_rng(64)
    sizes = [5, 4, 6]
    batch = torch.from_numpy(np.repeat(np.arange(3), sizes))
    pos = torch.from_numpy(rng.normal(scale=0.9, size=(sum(sizes), 3)))
    types = torch.from_numpy(rng.integers(0, 3, size=sum(sizes)))
    target = torch.from_numpy(rng.normal(size=3))

    model = GNN()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape))))

    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=0.01, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=8)
    losses, lrs, norms = [], [], []
    for _ in range(8):
        opt.zero_grad()
        energy, deg, edges = model(types, pos, batch, 3)
        loss = F.huber_loss(energy, target, delta=0.5)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(params, 1.0)))
        opt.step()
        sched.step()
        losses.append(loss.item())
        lrs.append(sched.get_last_lr()[0])

    # forces: -dE/dpos through cdist, indexing and scatter ops
    p = pos.clone().requires_grad_(True)
    energy, deg, edges = model(types, p, batch, 3)
    (forces,) = torch.autograd.grad(-energy.sum(), p)

    # scatter_add with an expanded index equals index_add
    vals = torch.from_numpy(rng.normal(size=(edges.shape[1], 2)))
    sa = torch.zeros(pos.shape[0], 2).scatter_add(0, edges[1][:, None].expand(-1, 2), vals)
    ia = torch.zeros(pos.shape[0], 2).index_add(0, edges[1], vals)
    return {
        "losses": losses,
        "lrs": lrs,
        "grad_norms": norms,
        "energy": energy.detach(),
        "forces": forces,
        "net_force_per_graph": torch.zeros(3, 3).index_add(0, batch, forces),
        "degree": deg,
        "n_edges": edges.shape[1],
        "scatter_vs_index_add": (sa - ia).abs().max(),
        "embed_grad": model.embed_w.grad,
    }


TOLERANCE = {"net_force_per_graph": (1e-6, 1e-10)}
