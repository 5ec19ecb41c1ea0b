"""Activation checkpointing: an MLP block run through ``torch.utils.checkpoint.checkpoint``
gives the same loss and gradients as the plain forward."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.set_default_dtype(torch.float64)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(
            nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)
        )

    def forward(self, x):
        return x + self.ff(x)


class Model(nn.Module):
    def __init__(self, d=6, depth=3, use_checkpoint=False):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(depth)])
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.use_checkpoint else blk(x)
        return x


def run(use_checkpoint, state, x):
    model = Model(use_checkpoint=use_checkpoint)
    model.load_state_dict(state)
    loss = model(x).pow(2).mean()
    loss.backward()
    return loss.item(), [p.grad.clone() for p in model.parameters()]


def main():
    rng = np.random.default_rng(13)
    ref = Model()
    state = {
        k: torch.from_numpy(rng.normal(0, 0.3, size=tuple(v.shape)))
        for k, v in ref.state_dict().items()
    }
    x = torch.from_numpy(rng.normal(size=(4, 6)))
    l1, g1 = run(False, state, x)
    l2, g2 = run(True, state, x)
    return {
        "loss": l1,
        "loss_ckpt": l2,
        "grad0": g1[0],
        "grad0_ckpt": g2[0],
        "max_diff": max((a - b).abs().max().item() for a, b in zip(g1, g2)),
    }
