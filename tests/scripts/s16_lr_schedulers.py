"""Learning-rate schedules from the optim docs: StepLR, MultiStepLR, ExponentialLR,
CosineAnnealingLR, LambdaLR and ReduceLROnPlateau driving SGD with momentum."""

import numpy as np
import torch
import torch.nn as nn
from torch.optim import lr_scheduler

torch.set_default_dtype(torch.float64)


def lrs(make_sched, epochs=12, metric=None):
    p = nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    sched = make_sched(opt)
    out = []
    for epoch in range(epochs):
        opt.zero_grad()
        (p**2).sum().backward()
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric[epoch])
        out.append(opt.param_groups[0]["lr"])
    return out, p


def main():
    res = {}
    res["step"], _ = lrs(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5))
    res["multistep"], _ = lrs(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 7], gamma=0.1))
    res["exp"], _ = lrs(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9))
    res["cosine"], p = lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=0.001))
    res["lambda"], _ = lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1.0 / (1 + e)))
    metric = np.array([1.0, 0.9, 0.9, 0.9, 0.9, 0.95, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9])
    res["plateau"], _ = lrs(
        lambda o: lr_scheduler.ReduceLROnPlateau(o, patience=2, factor=0.5), metric=metric
    )
    res["p_cosine"] = p
    sched = lr_scheduler.StepLR(torch.optim.SGD([nn.Parameter(torch.ones(1))], lr=1.0), 2)
    res["last_lr"] = sched.get_last_lr()
    return res
