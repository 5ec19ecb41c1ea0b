"""Pre-0.4 idioms still found in many research repositories: ``torch.FloatTensor`` /
``DoubleTensor`` constructors, ``Variable``, ``.data`` updates, ``x.grad.data.zero_()``,
``.type(torch.DoubleTensor)``, ``torch.from_numpy(...).float()`` and ``.numpy()``."""

import numpy as np
import torch
from torch.autograd import Variable


def main():
    rng = np.random.RandomState(45)
    x_np = rng.randn(40, 3).astype(np.float32)
    w_true = np.array([[2.0], [-1.0], [0.5]], dtype=np.float32)
    y_np = x_np.dot(w_true) + 0.3
    x = Variable(torch.from_numpy(x_np))
    y = Variable(torch.from_numpy(y_np), requires_grad=False)
    w = Variable(torch.FloatTensor(3, 1).zero_(), requires_grad=True)
    b = Variable(torch.zeros(1), requires_grad=True)
    lr = 0.1
    losses = []
    for _ in range(30):
        y_pred = x.mm(w) + b
        loss = (y_pred - y).pow(2).mean()
        losses.append(loss.data.item())
        loss.backward()
        w.data -= lr * w.grad.data
        b.data -= lr * b.grad.data
        w.grad.data.zero_()
        b.grad.data.zero_()
    wd = w.data.type(torch.DoubleTensor)
    t = torch.DoubleTensor([[1, 2], [3, 4]])
    return {
        "losses": np.array(losses, dtype=np.float32),
        "w": w.data.numpy(),
        "b": b.data.numpy(),
        "wd_is_double": float(wd.dtype == torch.float64),
        "type_str": float(w.type() == "torch.FloatTensor"),
        "t": t,
        "long": torch.LongTensor([1, 2, 3]),
        "isvar": float(isinstance(w, Variable)),
    }
