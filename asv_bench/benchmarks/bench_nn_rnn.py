"""Recurrent layers and attention: training steps (forward, backward, SGD) of issue 28's
workloads, float32, the same weights and inputs for numbagrad and PyTorch.

* ``GRUTrainStep``/``LSTMTrainStep``: a 2-layer GRU/LSTM, hidden 64, sequence 50, batch 32,
  input 32, mean squared error against a fixed target (target: at most 1.0x PyTorch's time);
* ``EncoderLayerTrainStep``: a ``TransformerEncoderLayer`` (d_model 64, 4 heads, the default
  feed-forward width 2048 and dropout 0.1, batch_first) on a (16, 32, 64) batch (target: at
  most 1.5x).

There is no NumPy-by-hand version (asv skips the ``numpy`` backend); ``bench_ratios.py``
records numbagrad's time over PyTorch's for each, measured side by side in one process.
"""

import numpy as np

from ._common import BackendBenchmark, rng


def _same_weights(mod, model, seed):
    """Every parameter drawn from one NumPy stream (U(-1/sqrt(64), 1/sqrt(64)) for the
    recurrent layers' matrices, the layer's own shapes), so both libraries start equal."""
    r = rng(seed)
    with mod.no_grad():
        for _, p in model.named_parameters():
            values = r.uniform(-0.125, 0.125, tuple(p.shape)).astype(np.float32)
            p.copy_(mod.from_numpy(values))


def _train_step(mod, model, x, y, lr=0.01):
    opt = mod.optim.SGD(model.parameters(), lr=lr)
    first = next(iter(model.parameters()))

    def run():
        opt.zero_grad()
        out = model(x)
        if isinstance(out, tuple):
            out = out[0]
        loss = ((out - y) ** 2).mean()
        loss.backward()
        opt.step()
        return first.grad

    return run


class _RecurrentTrainStep(BackendBenchmark):
    params = [["numbagrad", "torch"]]
    number = 5
    repeat = (3, 10, 20.0)
    layer = None

    def build_numpy(self, np_):
        raise NotImplementedError("no NumPy-by-hand recurrent layer")

    def build_tensor(self, mod):
        model = getattr(mod.nn, self.layer)(32, 64, num_layers=2)
        _same_weights(mod, model, 0)
        r = rng(1)
        x = mod.from_numpy(r.standard_normal((50, 32, 32)).astype(np.float32))
        y = mod.from_numpy(r.standard_normal((50, 32, 64)).astype(np.float32))
        return _train_step(mod, model, x, y)


class GRUTrainStep(_RecurrentTrainStep):
    """A 2-layer GRU (hidden 64, sequence 50, batch 32, input 32): one SGD training step."""

    layer = "GRU"

    def time_train_step(self, backend):
        return self.run()


class LSTMTrainStep(_RecurrentTrainStep):
    """A 2-layer LSTM (hidden 64, sequence 50, batch 32, input 32): one SGD training step."""

    layer = "LSTM"

    def time_train_step(self, backend):
        return self.run()


class EncoderLayerTrainStep(BackendBenchmark):
    """A TransformerEncoderLayer (d_model 64, 4 heads, batch 16, sequence 32): one SGD
    training step with dropout on (PyTorch's default 0.1)."""

    params = [["numbagrad", "torch"]]
    number = 5
    repeat = (3, 10, 20.0)

    def build_numpy(self, np_):
        raise NotImplementedError("no NumPy-by-hand Transformer layer")

    def build_tensor(self, mod):
        model = mod.nn.TransformerEncoderLayer(64, 4, batch_first=True)
        _same_weights(mod, model, 2)
        r = rng(3)
        x = mod.from_numpy(r.standard_normal((16, 32, 64)).astype(np.float32))
        y = mod.from_numpy(r.standard_normal((16, 32, 64)).astype(np.float32))
        return _train_step(mod, model, x, y)

    def time_train_step(self, backend):
        return self.run()
