"""A hand-written optimizer subclassing ``torch.optim.Optimizer`` (AdaBelief-style update
with ``addcmul_``/``addcdiv_``, ``@torch.no_grad`` step, per-parameter ``self.state``), and
``zero_grad(set_to_none=True)``; compared with the built-in Adam on the same problem."""

import math

import numpy as np
import torch
from torch.optim import Optimizer

torch.set_default_dtype(torch.float64)


class AdaBelief(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16, weight_decay=0):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_var"] = torch.zeros_like(p)
                beta1, beta2 = group["betas"]
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                exp_avg, exp_avg_var = state["exp_avg"], state["exp_avg_var"]
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                grad_residual = grad - exp_avg
                exp_avg_var.mul_(beta2).addcmul_(grad_residual, grad_residual, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** state["step"]
                bias_correction2 = 1 - beta2 ** state["step"]
                denom = (exp_avg_var.add_(group["eps"]).sqrt() / math.sqrt(bias_correction2)).add_(
                    group["eps"]
                )
                p.addcdiv_(exp_avg, denom, value=-group["lr"] / bias_correction1)
        return loss


def fit(opt_cls, **kw):
    rng = np.random.default_rng(40)
    A = torch.from_numpy(rng.normal(size=(20, 5)))
    b = torch.from_numpy(rng.normal(size=20))
    x = torch.zeros(5, requires_grad=True)
    opt = opt_cls([x], **kw)
    losses = []
    for _ in range(25):
        opt.zero_grad(set_to_none=True)
        loss = ((A @ x - b) ** 2).mean() + 0.01 * x.abs().sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, x.detach()


def main():
    l1, x1 = fit(AdaBelief, lr=0.05, weight_decay=1e-3)
    l2, x2 = fit(torch.optim.Adam, lr=0.05, amsgrad=True)
    return {"adabelief": l1, "x_adabelief": x1, "adam_amsgrad": l2, "x_adam": x2}
