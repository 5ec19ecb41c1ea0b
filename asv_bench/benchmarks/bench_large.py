"""Large arrays: kernel throughput and fusion, forward + backward.

- ``TanhSigmoid``: ``sum(tanh(x*w+b) * sigmoid(x))`` over 10,000,000 float64, with x, w, b
  requiring grad (issue 2 target: at most 0.65x PyTorch CPU's time).
- ``LogSumExp``: ``log(exp(x).sum(1)).sum()`` on 4000x2500 float64 (issue 2 target: at
  most PyTorch CPU's time).

NumPy-by-hand is what a careful user writes with ufuncs: the forward, then the backward
from the derivation, no fusion.
"""

from ._common import BackendBenchmark, leaf, rng


def tanh_sigmoid_inputs(n):
    """x, w, b for TanhSigmoid (standard normal, so tanh and sigmoid are not saturated)."""
    r = rng(1)
    return r.standard_normal(n), r.standard_normal(n), r.standard_normal(n)


def logsumexp_input(shape):
    """x for LogSumExp (standard normal: exp cannot overflow)."""
    return rng(2).standard_normal(shape)


class TanhSigmoid(BackendBenchmark):
    """``sum(tanh(x*w+b) * sigmoid(x))``, n = 10,000,000 float64, forward + backward."""

    n = 10_000_000
    number = 1
    repeat = (3, 7, 60.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 600.0

    def build_tensor(self, mod):
        x_np, w_np, b_np = tanh_sigmoid_inputs(self.n)
        x, w, b = leaf(mod, x_np), leaf(mod, w_np), leaf(mod, b_np)

        def run():
            x.grad = None
            w.grad = None
            b.grad = None
            out = (mod.tanh(x * w + b) * mod.sigmoid(x)).sum()
            out.backward()
            return x.grad, w.grad, b.grad

        return run

    def build_numpy(self, np_):
        x, w, b = tanh_sigmoid_inputs(self.n)

        def run():
            t = np_.tanh(x * w + b)
            s = 1.0 / (1.0 + np_.exp(-x))
            (t * s).sum()
            # d/dt = s, d/ds = t; tanh' = 1 - t^2; sigmoid' = s (1 - s)
            gz = s * (1.0 - t * t)
            gx = gz * w + t * s * (1.0 - s)
            gw = gz * x
            gb = gz
            return gx, gw, gb

        return run

    def time_forward_backward(self, backend):
        """Forward + backward over 10M float64."""
        return self.run()

    def peakmem_forward_backward(self, backend):
        """Peak resident memory of the process over forward + backward (inputs included)."""
        self.run()


class LogSumExp(BackendBenchmark):
    """``log(exp(x).sum(1)).sum()`` on 4000x2500 float64, forward + backward."""

    shape = (4000, 2500)
    number = 1
    repeat = (3, 10, 60.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 600.0

    def build_tensor(self, mod):
        x = leaf(mod, logsumexp_input(self.shape))

        def run():
            x.grad = None
            out = x.exp().sum(1).log().sum()
            out.backward()
            return x.grad

        return run

    def build_numpy(self, np_):
        x = logsumexp_input(self.shape)

        def run():
            e = np_.exp(x)
            s = e.sum(1)
            np_.log(s).sum()
            # d/ds log(s) = 1/s, broadcast back over the summed axis, times exp' = e
            return e * (1.0 / s)[:, None]

        return run

    def time_forward_backward(self, backend):
        """Forward + backward over 4000x2500 float64."""
        return self.run()

    def peakmem_forward_backward(self, backend):
        """Peak resident memory of the process over forward + backward (input included)."""
        self.run()
