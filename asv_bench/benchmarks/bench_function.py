"""Per-call overhead of a custom ``autograd.Function`` (issue 3).

``ExpMul`` computes ``x * exp(x)`` in forward, saves ``x`` and ``exp(x)`` with
``ctx.save_for_backward`` and uses them in backward (``g * e * (1 + x)``). Applied to a
16-element float64 vector, then ``y.sum().backward()``. Target: numbagrad <= 20 us
(PyTorch CPU ~64-92 us).
"""

from ._common import BackendBenchmark, leaf, rng


def function_input(n):
    """x for FunctionCall."""
    return rng(3).uniform(-1.0, 1.0, n)


def make_exp_mul(mod):
    """Define ``ExpMul`` against ``mod.autograd.Function`` (numbagrad or torch)."""

    class ExpMul(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            e = x.exp()
            ctx.save_for_backward(x, e)
            return x * e

        @staticmethod
        def backward(ctx, g):
            x, e = ctx.saved_tensors
            # d/dx x e^x = e^x (1 + x)
            return g * e * (1 + x)

    return ExpMul


class FunctionCall(BackendBenchmark):
    """``ExpMul.apply(x).sum().backward()`` on 16 float64 elements."""

    n = 16
    number = 200
    repeat = (5, 20, 20.0)

    def build_tensor(self, mod):
        exp_mul = make_exp_mul(mod)
        x = leaf(mod, function_input(self.n))

        def run():
            x.grad = None
            exp_mul.apply(x).sum().backward()
            return x.grad

        return run

    def build_numpy(self, np_):
        x = function_input(self.n)

        def run():
            e = np_.exp(x)
            (x * e).sum()
            g = np_.ones_like(x)
            return g * e * (1 + x)

        return run

    def time_apply_backward(self, backend):
        """Function forward + backward on 16 elements."""
        return self.run()
