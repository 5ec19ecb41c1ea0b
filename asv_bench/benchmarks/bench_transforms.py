"""The function transforms against ``torch.func`` and NumPy by hand (transforms issue).

- ``JacrevTanh``: ``jacrev(lambda x: tanh(W @ x))(x)``, W 256x256 float64;
- ``PerExampleGrads``: ``vmap(grad(loss), in_dims=(None, 0, 0))((W, b), X, Y)`` for a linear
  model with squared loss, W 8x32, b 8, 512 examples, float32;
- ``HessianRosenbrock``: ``hessian`` of the 64-dimensional Rosenbrock function, float64.

Targets on the 2-core machine: each at most 0.5x PyTorch's time. The NumPy rows are the
closed-form derivatives written by hand (the floor any library can reach).
"""

from ._common import BackendBenchmark, rng


class JacrevTanh(BackendBenchmark):
    """Jacobian of ``tanh(W @ x)`` by reverse mode."""

    n = 256
    number = 20
    repeat = (5, 20, 20.0)

    def _data(self):
        r = rng(11)
        return r.standard_normal((self.n, self.n)) / 16, r.standard_normal(self.n)

    def build_tensor(self, mod):
        w, x = (mod.tensor(a) for a in self._data())
        jac = mod.func.jacrev(lambda x: mod.tanh(w @ x))
        return lambda: jac(x)

    def build_numpy(self, np_):
        w, x = self._data()

        def run():
            y = np_.tanh(w @ x)
            return (1 - y * y)[:, None] * w

        return run

    def time_jacrev(self, backend):
        """jacrev of tanh(W @ x), W 256x256."""
        return self.run()


class PerExampleGrads(BackendBenchmark):
    """Per-example gradients of a linear model's squared loss."""

    number = 20
    repeat = (5, 20, 20.0)

    def _data(self):
        r = rng(12)
        f = "float32"
        return (
            r.standard_normal((8, 32)).astype(f),
            r.standard_normal(8).astype(f),
            r.standard_normal((512, 32)).astype(f),
            r.standard_normal((512, 8)).astype(f),
        )

    def build_tensor(self, mod):
        w, b, x, y = (mod.tensor(a) for a in self._data())

        def loss(params, xi, yi):
            wi, bi = params
            return ((wi @ xi + bi - yi) ** 2).sum()

        per = mod.func.vmap(mod.func.grad(loss), in_dims=(None, 0, 0))
        return lambda: per((w, b), x, y)

    def build_numpy(self, np_):
        w, b, x, y = self._data()

        def run():
            r = 2 * (x @ w.T + b - y)  # (512, 8)
            return r[:, :, None] * x[:, None, :], r

        return run

    def time_per_example(self, backend):
        """vmap(grad(loss)) over 512 examples, W 8x32."""
        return self.run()


class HessianRosenbrock(BackendBenchmark):
    """Hessian of the 64-dimensional Rosenbrock function."""

    n = 64
    number = 20
    repeat = (5, 20, 20.0)

    def _x(self):
        return rng(13).uniform(-1.0, 1.0, self.n)

    def build_tensor(self, mod):
        x = mod.tensor(self._x())

        def rosen(x):
            return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()

        h = mod.func.hessian(rosen)
        return lambda: h(x)

    def build_numpy(self, np_):
        x = self._x()
        n = self.n

        def run():
            h = np_.zeros((n, n))
            d = np_.zeros(n)
            d[:-1] += 2 - 400 * x[1:] + 1200 * x[:-1] ** 2
            d[1:] += 200
            h[np_.arange(n), np_.arange(n)] = d
            off = -400 * x[:-1]
            h[np_.arange(n - 1), np_.arange(1, n)] = off
            h[np_.arange(1, n), np_.arange(n - 1)] = off
            return h

        return run

    def time_hessian(self, backend):
        """hessian of Rosenbrock, n=64."""
        return self.run()
