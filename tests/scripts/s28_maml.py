"""MAML on sine regression: inner-loop SGD on fast weights with
``autograd.grad(create_graph=True)`` and an outer Adam step through the adaptation."""

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def forward(params, x):
    h = F.relu(F.linear(x, params[0], params[1]))
    h = F.relu(F.linear(h, params[2], params[3]))
    return F.linear(h, params[4], params[5])


def main():
    rng = np.random.default_rng(24)
    shapes = [(20, 1), (20,), (20, 20), (20,), (1, 20), (1,)]
    params = [torch.from_numpy(rng.normal(0, 0.3, size=s)).requires_grad_() for s in shapes]
    meta_opt = torch.optim.Adam(params, lr=1e-3)
    inner_lr = 0.01
    meta_losses = []
    for _ in range(4):
        meta_opt.zero_grad()
        total = 0.0
        for _task in range(3):
            amp, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)
            xs = torch.from_numpy(rng.uniform(-5, 5, size=(10, 1)))
            xq = torch.from_numpy(rng.uniform(-5, 5, size=(10, 1)))
            ys, yq = amp * torch.sin(xs + phase), amp * torch.sin(xq + phase)
            fast = params
            for _step in range(2):
                loss = F.mse_loss(forward(fast, xs), ys)
                grads = torch.autograd.grad(loss, fast, create_graph=True)
                fast = [w - inner_lr * g for w, g in zip(fast, grads)]
            total = total + F.mse_loss(forward(fast, xq), yq)
        total = total / 3
        total.backward()
        meta_opt.step()
        meta_losses.append(total.item())
    return {"meta_losses": meta_losses, "w0_grad": params[0].grad, "b2": params[5]}
