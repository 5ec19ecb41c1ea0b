"""Multi-class MLP (quickstart style): ``nn.Sequential`` with Dropout in eval mode,
``CrossEntropyLoss`` with label smoothing, AdamW, ``clip_grad_norm_`` and argmax accuracy."""

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(22)
    centers = rng.normal(0, 3, size=(3, 2))
    labels = rng.integers(0, 3, size=60)
    X = torch.from_numpy(centers[labels] + rng.normal(size=(60, 2)))
    y = torch.from_numpy(labels)
    model = nn.Sequential(
        nn.Linear(2, 16),
        nn.ReLU(),
        nn.Dropout(0.2),
        nn.Linear(16, 16),
        nn.LeakyReLU(0.1),
        nn.Linear(16, 3),
    )
    for m in model.modules():
        if isinstance(m, nn.Linear):
            with torch.no_grad():
                m.weight.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(m.weight.shape))))
                m.bias.fill_(0.01)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)
    norms, losses = [], []
    model.eval()  # dropout off so both runs are deterministic
    for _ in range(20):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        pred = model(X).argmax(dim=1)
        correct = (pred == y).sum().item()
        probs = torch.softmax(model(X[:3]), dim=-1)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {
        "losses": losses,
        "norms": norms,
        "correct": float(correct),
        "probs": probs,
        "n_params": float(n_params),
    }
