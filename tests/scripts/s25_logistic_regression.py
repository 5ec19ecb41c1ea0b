"""Logistic regression in float32 (the classic tutorial shape): ``nn.Linear`` +
``BCEWithLogitsLoss`` with ``pos_weight``, SGD with weight decay, accuracy and a
``torch.no_grad`` evaluation."""

import numpy as np
import torch
import torch.nn as nn


def main():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(64, 3)).astype(np.float32)
    y = (X @ np.array([1.5, -2.0, 0.5], np.float32) + 0.3 > 0).astype(np.float32)
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y).view(-1, 1)
    model = nn.Linear(3, 1)
    nn.init.zeros_(model.weight)
    nn.init.constant_(model.bias, 0.1)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.5]))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, weight_decay=1e-3)
    losses = []
    for _epoch in range(30):
        optimizer.zero_grad()
        loss = criterion(model(X_t), y_t)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        prob = torch.sigmoid(model(X_t))
        acc = ((prob >= 0.5).float() == y_t).float().mean()
    return {
        "losses": np.array(losses, np.float32),
        "weight": model.weight,
        "bias": model.bias,
        "acc": acc,
        "prob_dtype_is_f32": float(prob.dtype == torch.float32),
    }
