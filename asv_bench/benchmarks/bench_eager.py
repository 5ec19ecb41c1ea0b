"""Eager-mode overhead: chains of small elementwise ops, forward + backward.

The chain cycles through ``mul, add, sin, exp, tanh`` (``mul``/``add`` take a constant
tensor of the same shape), then ``y.sum().backward()``. On 16 elements the kernels cost
almost nothing, so the figure is the per-op price of the eager path: one Tensor, one
Node, one kernel call (issue 2, target <= 7 us per op; PyTorch CPU ~11-14 us).
"""

from ._common import BackendBenchmark, const, leaf, rng

# One cycle of the chain; values stay bounded: tanh maps into (-1, 1), exp of sin into
# (0.37, 2.72), so nothing overflows however long the chain is.
CYCLE = ("mul", "add", "sin", "exp", "tanh")


def chain_inputs(n):
    """Inputs of the chain: x in [-1, 1], the mul factor c and the add offset d."""
    r = rng(0)
    return r.uniform(-1.0, 1.0, n), r.uniform(0.5, 1.0, n), r.uniform(-0.1, 0.1, n)


def build_chain_tensor(mod, n_ops, n):
    """Chain on numbagrad or torch tensors; returns a callable giving ``x.grad``."""
    if n_ops % len(CYCLE):
        raise ValueError("n_ops must be a multiple of the cycle length")
    x_np, c_np, d_np = chain_inputs(n)
    x = leaf(mod, x_np)
    c = const(mod, c_np)
    d = const(mod, d_np)
    n_cycles = n_ops // len(CYCLE)

    def run():
        x.grad = None
        y = x
        for _ in range(n_cycles):
            y = y * c
            y = y + d
            y = y.sin()
            y = y.exp()
            y = y.tanh()
        y.sum().backward()
        return x.grad

    return run


def build_chain_numpy(np_, n_ops, n):
    """The same chain by hand: a forward that keeps what backward needs, then backward."""
    x_np, c, d = chain_inputs(n)
    n_cycles = n_ops // len(CYCLE)

    def run():
        saved = []
        y = x_np
        for _ in range(n_cycles):
            y = y * c
            y = y + d
            s_in = y
            y = np_.sin(y)
            y = np_.exp(y)
            e = y
            y = np_.tanh(y)
            saved.append((s_in, e, y))
        y.sum()
        g = np_.ones_like(y)
        for s_in, e, t in reversed(saved):
            g = g * (1.0 - t * t)  # tanh' = 1 - tanh^2
            g = g * e  # exp' = exp
            g = g * np_.cos(s_in)  # sin' = cos
            g = g * c  # add passes g through; mul by the constant scales it
        return g

    return run


class ChainSmall(BackendBenchmark):
    """20 elementwise ops on a 16-element float64 vector; time is per whole chain.

    Divide by ``n_ops`` (20) for the per-op figure of issue 2's target (<= 7 us per op).
    """

    n_ops = 20
    n = 16
    number = 200
    repeat = (5, 20, 20.0)

    def build_tensor(self, mod):
        return build_chain_tensor(mod, self.n_ops, self.n)

    def build_numpy(self, np_):
        return build_chain_numpy(np_, self.n_ops, self.n)

    def time_chain(self, backend):
        """Forward + backward of the 20-op chain (per-op time = this / 20)."""
        return self.run()


class ChainLong(BackendBenchmark):
    """200 elementwise ops on 1000 float64 elements; time is per whole chain."""

    n_ops = 200
    n = 1000
    number = 10
    repeat = (5, 20, 20.0)

    def build_tensor(self, mod):
        return build_chain_tensor(mod, self.n_ops, self.n)

    def build_numpy(self, np_):
        return build_chain_numpy(np_, self.n_ops, self.n)

    def time_chain(self, backend):
        """Forward + backward of the 200-op chain (per-op time = this / 200)."""
        return self.run()
