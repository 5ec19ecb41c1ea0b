"""Mini-batch regression with ``TensorDataset``/``DataLoader`` and the usual reproducibility
boilerplate (device pick, cudnn flags), a train/validation ``random_split`` only checked for
its sizes, and an epoch loop with a running loss."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
device = torch.device("cuda" if torch.cuda.is_available() and False else "cpu")


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(39)
    X = torch.from_numpy(rng.uniform(-2, 2, size=(50, 2))).float()
    y = (torch.sin(X[:, :1]) + 0.5 * X[:, 1:] ** 2).float()
    train_set = TensorDataset(X, y)
    train_part, val_part = random_split(train_set, [40, 10])
    loader = DataLoader(train_set, batch_size=16, shuffle=False, num_workers=0)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))).float())
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    criterion = nn.MSELoss()
    epoch_losses = []
    for _epoch in range(5):
        running = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            opt.step()
            running += loss.item() * xb.size(0)
        epoch_losses.append(running / len(loader.dataset))
    batches = [tuple(xb.shape) for xb, _ in loader]
    return {
        "epoch_losses": np.array(epoch_losses),
        "n_batches": float(len(loader)),
        "last_batch": list(batches[-1]),
        "split": [len(train_part), len(val_part)],
        "pred": model(X[:4]).detach(),
    }


TOLERANCE = {"epoch_losses": (1e-4, 1e-6), "pred": (1e-4, 1e-5)}
