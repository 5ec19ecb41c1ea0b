"""Warm-up and cyclic learning-rate schedules of transformer/ResNet training recipes:
LinearLR warm-up chained into CosineAnnealingLR with SequentialLR, OneCycleLR, and
CosineAnnealingWarmRestarts stepped with fractional epochs."""

import torch
import torch.nn as nn
from torch.optim import lr_scheduler


def trace(make, steps=14, frac=None):
    p = nn.Parameter(torch.ones(2, dtype=torch.float64))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = make(opt)
    lrs = []
    for i in range(steps):
        opt.zero_grad()
        (p**2).sum().backward()
        opt.step()
        if frac is None:
            sched.step()
        else:
            sched.step(i * frac)
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def main():
    out = {}
    out["warmup_cosine"] = trace(
        lambda o: lr_scheduler.SequentialLR(
            o,
            schedulers=[
                lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=4),
                lr_scheduler.CosineAnnealingLR(o, T_max=10),
            ],
            milestones=[4],
        )
    )
    out["onecycle"] = trace(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=15))
    out["restarts"] = trace(
        lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=1e-3),
        frac=0.5,
    )
    return out
