"""A small 1-D/2-D CNN as in the PyTorch "Training a classifier" tutorial, at toy size:
``nn.Conv1d`` + ``nn.BatchNorm1d`` + ``nn.MaxPool1d`` on noisy waveforms and ``nn.Conv2d`` +
``nn.BatchNorm2d`` + ``nn.MaxPool2d`` + ``nn.Dropout`` on tiny images, trained a few SGD
steps with momentum in ``train()`` mode and evaluated under ``torch.no_grad()`` in ``eval()``
mode (BatchNorm running statistics, Dropout off)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class SignalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 4, kernel_size=5, padding=2)
        self.bn1 = nn.BatchNorm1d(4)
        self.pool = nn.MaxPool1d(2)
        self.conv2 = nn.Conv1d(4, 6, kernel_size=3, stride=1)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.conv2(x))
        x = x.mean(dim=-1)  # global average pooling
        return self.fc(x)


class ImageNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(3, 4, 3)
        self.drop = nn.Dropout(p=0.0)  # p=0 keeps the run deterministic across libraries
        self.fc = nn.Linear(4 * 2 * 2, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv1(x))))
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        return self.fc(self.drop(x))


def init_(model, rng):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape))))


def make_signals(rng, n):
    t = np.linspace(0, 1, 32)
    labels = rng.integers(0, 3, size=n)
    freqs = np.array([2.0, 5.0, 9.0])[labels]
    x = np.sin(2 * np.pi * freqs[:, None] * t) + 0.3 * rng.normal(size=(n, 32))
    return torch.from_numpy(x[:, None, :]), torch.from_numpy(labels)


def main():
    rng = np.random.default_rng(58)
    out = {}

    net = SignalNet()
    init_(net, rng)
    xs, ys = make_signals(rng, 24)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    losses = []
    net.train()
    for _ in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(net(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out["signal_losses"] = losses
    out["bn_running_mean"] = net.bn1.running_mean
    out["bn_running_var"] = net.bn1.running_var
    out["bn_batches"] = net.bn1.num_batches_tracked
    out["conv1_grad"] = net.conv1.weight.grad
    net.eval()
    with torch.no_grad():
        xt, yt = make_signals(rng, 10)
        logits = net(xt)
    out["eval_logits"] = logits
    out["eval_acc"] = (logits.argmax(1) == yt).double().mean()

    img = ImageNet()
    init_(img, rng)
    images = torch.from_numpy(rng.normal(size=(6, 1, 8, 8)))
    labels = torch.from_numpy(rng.integers(0, 2, size=6))
    opt2 = torch.optim.SGD(img.parameters(), lr=0.02, momentum=0.9, nesterov=True)
    img.train()
    for _ in range(3):
        opt2.zero_grad()
        loss = F.cross_entropy(img(images), labels)
        loss.backward()
        opt2.step()
    out["image_loss"] = loss.detach()
    out["image_conv2_grad"] = img.conv2.weight.grad
    out["image_bias_grad"] = img.conv1.bias.grad
    img.eval()
    with torch.no_grad():
        out["image_eval"] = img(images)
    return out
