"""Module plumbing used around training loops: ``Module.apply`` with deterministic
``nn.init`` functions, parameter groups with their own learning rates, ``add_param_group``,
``named_parameters``/``named_modules``, ``requires_grad_(False)`` freezing, buffers in
``state_dict`` and ``train``/``eval`` switches."""

import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
        self.head = nn.Linear(4, 2)
        self.register_buffer("scale", torch.tensor([2.0, 0.5]))

    def forward(self, x):
        return self.head(self.backbone(x)) * self.scale


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1)
        with torch.no_grad():
            m.weight.add_(
                torch.arange(m.weight.numel(), dtype=m.weight.dtype).view_as(m.weight) * 0.01
            )
        nn.init.zeros_(m.bias)


def main():
    net = Net()
    net.apply(init_weights)
    x = torch.linspace(-1, 1, 15).view(5, 3)
    target = torch.ones(5, 2)
    opt = torch.optim.SGD(
        [{"params": net.backbone.parameters(), "lr": 0.01}, {"params": net.head.parameters()}],
        lr=0.1,
        momentum=0.5,
    )
    losses = []
    for step in range(6):
        if step == 3:
            net.backbone.requires_grad_(False)
            extra = nn.Parameter(torch.zeros(2))
            opt.add_param_group({"params": [extra], "lr": 0.2})
        opt.zero_grad()
        out = net(x) + (extra if step >= 3 else 0)
        loss = nn.functional.smooth_l1_loss(out, target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    names = [n for n, _ in net.named_parameters()]
    sd = net.state_dict()
    net.eval()
    return {
        "losses": losses,
        "head_w": net.head.weight,
        "backbone_w": net.backbone[0].weight,
        "extra": extra,
        "n_names": float(len(names)),
        "sd_keys": float(len(sd)),
        "has_scale": float("scale" in sd),
        "training": float(net.training),
        "n_modules": float(len(list(net.named_modules()))),
        "lrs": [g["lr"] for g in opt.param_groups],
        "frozen": float(all(not p.requires_grad for p in net.backbone.parameters())),
    }
