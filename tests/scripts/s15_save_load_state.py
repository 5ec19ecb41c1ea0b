"""Saving and loading: model and optimizer ``state_dict`` through ``torch.save``/``torch.load``
(file and BytesIO), resuming training gives the same trajectory as uninterrupted training."""

import io
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def make(rng_seed):
    rng = np.random.default_rng(rng_seed)
    model = nn.Sequential(nn.Linear(3, 5), nn.SiLU(), nn.Linear(5, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    return model


def train(model, opt, x, y, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return loss.item()


def main():
    rng = np.random.default_rng(14)
    x = torch.from_numpy(rng.normal(size=(20, 3)))
    y = x.sum(1, keepdim=True) ** 2
    model = make(0)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    train(model, opt, x, y, 5)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 5}, path)
        ckpt = torch.load(path)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    sd2 = torch.load(buf, weights_only=True)
    loss_a = train(model, opt, x, y, 5)

    model2 = make(1)
    model2.load_state_dict(ckpt["model"])
    opt2 = torch.optim.Adam(model2.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt["opt"])
    loss_b = train(model2, opt2, x, y, 5)
    return {
        "loss_a": loss_a,
        "loss_b": loss_b,
        "epoch": ckpt["epoch"],
        "w": model2[0].weight,
        "keys": float(len(sd2)),
        "same_sd": float(all(torch.equal(sd2[k], ckpt["model"][k]) for k in sd2)),
        "step": float(opt2.state_dict()["state"][0]["step"]),
    }
