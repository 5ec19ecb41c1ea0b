"""Training steps of convolutional networks (issue 28's speed targets), numbagrad against
PyTorch with the same weights and data: forward, backward and an SGD step, float32.

- ``MnistStep``: the pytorch/examples MNIST CNN (conv 1->32 3x3, conv 32->64 3x3, ReLUs,
  ``max_pool2d(2)``, dropout, fc 9216->128, fc 128->10, ``log_softmax``, ``nll_loss``) at
  batch 64;
- ``Conv1dBNStep``: a 1-D conv net with batch norm (3->32->32 channels, kernel 5, length
  256, batch 32, then global average pooling and a linear head).

``bench_ratios.Ratios`` records numbagrad's time over PyTorch's for both, interleaved in
one process. NumPy has no version of these workloads (skipped).
"""

import numpy as np

from ._common import BackendBenchmark, rng


def _mnist_net(mod):
    nn, fn = mod.nn, mod.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = fn.relu(self.conv1(x))
            x = fn.relu(self.conv2(x))
            x = fn.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = mod.flatten(x, 1)
            x = fn.relu(self.fc1(x))
            x = self.dropout2(x)
            return fn.log_softmax(self.fc2(x), dim=1)

    return Net()


def _conv1d_bn_net(mod):
    nn = mod.nn
    return nn.Sequential(
        nn.Conv1d(3, 32, 5, padding=2),
        nn.BatchNorm1d(32),
        nn.ReLU(),
        nn.Conv1d(32, 32, 5, padding=2),
        nn.BatchNorm1d(32),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 1),
    )


def _same_weights(mod, model, seed):
    """Overwrite every parameter with seeded float32 values (the same in both libraries)."""
    r = rng(seed)
    state = model.state_dict()
    for k, v in state.items():
        if v.dtype == mod.float32:
            state[k] = mod.tensor((r.standard_normal(tuple(v.shape)) * 0.05).astype(np.float32))
    model.load_state_dict(state)


class _TrainStep(BackendBenchmark):
    params = [["numbagrad", "torch"]]
    number = 3
    repeat = (3, 10, 20.0)

    def build_numpy(self, np_):
        raise NotImplementedError("no NumPy version of a CNN training step")

    def _model(self, mod):
        raise NotImplementedError

    def _batch(self, mod):
        raise NotImplementedError

    def _loss(self, mod, out, y):
        raise NotImplementedError

    def build_tensor(self, mod):
        mod.manual_seed(0)
        model = self._model(mod)
        _same_weights(mod, model, 1)
        opt = mod.optim.SGD(model.parameters(), lr=0.01)
        x, y = self._batch(mod)

        def step():
            opt.zero_grad()
            loss = self._loss(mod, model(x), y)
            loss.backward()
            opt.step()
            return [loss.detach()]

        return step


class MnistStep(_TrainStep):
    """The pytorch/examples MNIST CNN, one SGD step at batch 64."""

    def _model(self, mod):
        return _mnist_net(mod)

    def _batch(self, mod):
        r = rng(2)
        x = r.standard_normal((64, 1, 28, 28)).astype(np.float32)
        return mod.tensor(x), mod.tensor(r.integers(0, 10, 64))

    def _loss(self, mod, out, y):
        return mod.nn.functional.nll_loss(out, y)

    def time_step(self, backend):
        """Forward, backward and SGD step, float32, batch 64."""
        return self.run()


class Conv1dBNStep(_TrainStep):
    """A 1-D conv net with batch norm, one SGD step (batch 32, length 256)."""

    def _model(self, mod):
        return _conv1d_bn_net(mod)

    def _batch(self, mod):
        r = rng(3)
        x = r.standard_normal((32, 3, 256)).astype(np.float32)
        return mod.tensor(x), mod.tensor(r.standard_normal((32, 1)).astype(np.float32))

    def _loss(self, mod, out, y):
        return mod.nn.functional.mse_loss(out, y)

    def time_step(self, backend):
        """Forward, backward and SGD step, float32, batch 32 x 3 x 256."""
        return self.run()
