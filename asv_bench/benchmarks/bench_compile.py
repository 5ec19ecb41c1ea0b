"""``numbagrad.compile`` against eager numbagrad, PyTorch eager and NumPy by hand.

The workloads of the compile issue: the 20-op chain (``bench_eager.ChainSmall``), a
custom-gradient call ``x * sigmoid(x)`` (a Function of numbagrad ops, and a custom op with
``@njit`` kernels), per-example gradients and the 64-d Rosenbrock Hessian
(``bench_transforms``), and Lennard-Jones energy and forces of 1000 atoms written with
broadcast ops. ``mode`` is ``eager`` (numbagrad), ``compiled`` (``numbagrad.compile``),
``torch`` (PyTorch eager) or ``numpy``.
"""

import numba
import numpy as np

from ._common import cached, const, leaf, load_backend, rng
from .bench_eager import build_chain_numpy, chain_inputs

MODES = ["eager", "compiled", "torch", "numpy"]


class CompileBenchmark:
    params = [MODES]
    param_names = ["mode"]
    number = 100
    repeat = (5, 20, 20.0)

    def setup(self, mode):
        self.run = cached((type(self).__name__, mode), lambda: self._prepare(mode))

    def _prepare(self, mode):
        if mode == "numpy":
            run = self.build_numpy()
        else:
            mod = load_backend("torch" if mode == "torch" else "numbagrad")
            run = self.build(mod, mode == "compiled")
        run()
        run()  # (the first call of a compiled function traces)
        return run


def _maybe_compile(mod, fn, compiled, **kwargs):
    return mod.compile(fn, **kwargs) if compiled else fn


class CompiledChain(CompileBenchmark):
    """20-op chain on 16 float64, forward + backward (per-op time = this / 20)."""

    number = 500
    compile_kwargs: dict = {}

    def build(self, mod, compiled):
        x_np, c_np, d_np = chain_inputs(16)
        x, c, d = leaf(mod, x_np), const(mod, c_np), const(mod, d_np)

        def f(x, c, d):
            y = x
            for _ in range(4):
                y = (y * c + d).sin().exp().tanh()
            return y.sum()

        f = _maybe_compile(mod, f, compiled, **self.compile_kwargs)

        def run():
            x.grad = None
            f(x, c, d).backward()
            return x.grad

        return run

    def build_numpy(self):
        return build_chain_numpy(np, 20, 16)

    def time_chain(self, mode):
        return self.run()


class CompiledChainStatic(CompiledChain):
    """The chain compiled with ``dynamic=False``: loop kernels with constant trip counts
    (NOTE [Size variants]); only the compiled mode differs from ``CompiledChain``."""

    params = [["compiled"]]
    compile_kwargs = {"dynamic": False}


class CompiledChainGrad(CompileBenchmark):
    """The same chain as ``func.grad(f)`` (how ``jax.jit(jax.grad(f))`` is timed)."""

    number = 500

    def build(self, mod, compiled):
        x_np, c_np, d_np = chain_inputs(16)
        x, c, d = const(mod, x_np), const(mod, c_np), const(mod, d_np)

        def f(x, c, d):
            y = x
            for _ in range(4):
                y = (y * c + d).sin().exp().tanh()
            return y.sum()

        g = _maybe_compile(mod, mod.func.grad(f), compiled)
        return lambda: g(x, c, d)

    def build_numpy(self):
        return build_chain_numpy(np, 20, 16)

    def time_chain_grad(self, mode):
        return self.run()


class CompiledFunctionCall(CompileBenchmark):
    """``x * sigmoid(x)`` with a hand-written backward on 16 float64, forward + backward."""

    number = 500

    def build(self, mod, compiled):
        class XSig(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                s = mod.sigmoid(x)
                ctx.save_for_backward(x, s)
                return x * s

            @staticmethod
            def backward(ctx, g):
                x, s = ctx.saved_tensors
                return g * (s + x * s * (1 - s))

        x = leaf(mod, rng(3).uniform(-1, 1, 16))
        f = _maybe_compile(mod, lambda x: XSig.apply(x).sum(), compiled)

        def run():
            x.grad = None
            f(x).backward()
            return x.grad

        return run

    def build_numpy(self):
        x = rng(3).uniform(-1, 1, 16)

        def run():
            s = 1 / (1 + np.exp(-x))
            (x * s).sum()
            return s + x * s * (1 - s)

        return run

    def time_function(self, mode):
        return self.run()


class CompiledCustomOp(CompileBenchmark):
    """The same ``x * sigmoid(x)`` as a ``library.custom_op`` with ``@njit`` kernels."""

    params = [["eager", "compiled"]]
    number = 500

    def build(self, mod, compiled):
        xsig = _xsig_op(mod)
        x = leaf(mod, rng(3).uniform(-1, 1, 16))
        f = _maybe_compile(mod, lambda x: xsig(x).sum(), compiled)

        def run():
            x.grad = None
            f(x).backward()
            return x.grad

        return run

    def time_custom_op(self, mode):
        return self.run()


class CompiledFunctionGrad(CompileBenchmark):
    """The same ``x * sigmoid(x)`` Function as ``func.grad`` of its sum: how
    ``jax.jit(jax.grad(f))`` of a ``jax.custom_vjp`` is timed. (functorch transforms need
    ``setup_context`` style.)"""

    params = [["eager", "compiled", "torch"]]
    number = 500

    def build(self, mod, compiled):
        class XSig(mod.autograd.Function):
            @staticmethod
            def forward(x):
                return x * mod.sigmoid(x)

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                s = mod.sigmoid(x)
                return g * (s + x * s * (1 - s))

        x = const(mod, rng(3).uniform(-1, 1, 16))
        g = _maybe_compile(mod, mod.func.grad(lambda x: XSig.apply(x).sum()), compiled)
        return lambda: g(x)

    def time_function_grad(self, mode):
        return self.run()


class CompiledCustomOpGrad(CompileBenchmark):
    """The custom op with ``@njit`` kernels as ``func.grad`` of its sum."""

    params = [["eager", "compiled"]]
    number = 500

    def build(self, mod, compiled):
        xsig = _xsig_op(mod)
        x = const(mod, rng(3).uniform(-1, 1, 16))
        g = _maybe_compile(mod, mod.func.grad(lambda x: xsig(x).sum()), compiled)
        return lambda: g(x)

    def time_custom_op_grad(self, mode):
        return self.run()


@numba.njit(cache=True)
def _xsig_kernel(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out.flat[i] = x.flat[i] / (1.0 + np.exp(-x.flat[i]))
    return out


@numba.njit(cache=True)
def _xsig_grad_kernel(g, x):
    out = np.empty_like(x)
    for i in range(x.size):
        s = 1.0 / (1.0 + np.exp(-x.flat[i]))
        out.flat[i] = g.flat[i] * (s + x.flat[i] * s * (1.0 - s))
    return out


_OPS = {}


def _xsig_op(mod):
    """``bench::xsig``, defined once per process (op names are global)."""
    if "xsig" not in _OPS:
        grad = mod.library.custom_op("bench::xsig_grad", _xsig_grad_kernel, mutates_args=())
        op = mod.library.custom_op("bench::xsig", _xsig_kernel, mutates_args=())

        def setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, g):
            return grad(g, ctx.saved_tensors[0])

        op.register_autograd(backward, setup_context=setup)
        _OPS["xsig"] = op
    return _OPS["xsig"]


class CompiledPerExample(CompileBenchmark):
    """``vmap(grad(loss))`` over 512 examples, W 8x32, float32."""

    number = 20

    def _data(self):
        r = rng(12)
        return (
            r.standard_normal((8, 32)).astype("float32"),
            r.standard_normal(8).astype("float32"),
            r.standard_normal((512, 32)).astype("float32"),
            r.standard_normal((512, 8)).astype("float32"),
        )

    def build(self, mod, compiled):
        w, b, x, y = (mod.tensor(a) for a in self._data())

        def loss(params, xi, yi):
            wi, bi = params
            return ((wi @ xi + bi - yi) ** 2).sum()

        per = _maybe_compile(
            mod, mod.func.vmap(mod.func.grad(loss), in_dims=(None, 0, 0)), compiled
        )
        return lambda: per((w, b), x, y)

    def build_numpy(self):
        w, b, x, y = self._data()

        def run():
            r = 2 * (x @ w.T + b - y)
            return r[:, :, None] * x[:, None, :], r

        return run

    def time_per_example(self, mode):
        return self.run()


class CompiledHessian(CompileBenchmark):
    """Hessian of the 64-d Rosenbrock function."""

    number = 20

    def build(self, mod, compiled):
        x = mod.tensor(rng(13).uniform(-1.0, 1.0, 64))

        def rosen(x):
            return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()

        h = _maybe_compile(mod, mod.func.hessian(rosen), compiled)
        return lambda: h(x)

    def build_numpy(self):
        x = rng(13).uniform(-1.0, 1.0, 64)
        n = 64

        def run():
            h = np.zeros((n, n))
            d = np.zeros(n)
            d[:-1] += 2 - 400 * x[1:] + 1200 * x[:-1] ** 2
            d[1:] += 200
            h[np.arange(n), np.arange(n)] = d
            off = -400 * x[:-1]
            h[np.arange(n - 1), np.arange(1, n)] = off
            h[np.arange(1, n), np.arange(n - 1)] = off
            return h

        return run

    def time_hessian(self, mode):
        return self.run()


def lj_positions(n=1000):
    """Atoms on a jittered cubic lattice (no two closer than ~0.8)."""
    side = int(np.ceil(n ** (1 / 3)))
    g = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
    return 1.1 * g + 0.05 * rng(21).standard_normal((n, 3))


class CompiledLennardJones(CompileBenchmark):
    """Lennard-Jones energy and forces of 1000 atoms, with broadcast ops (float64)."""

    number = 2
    repeat = (3, 10, 30.0)

    def build(self, mod, compiled):
        n = 1000
        x = leaf(mod, lj_positions(n))
        eye = mod.eye(n, dtype=mod.float64)
        mask = mod.triu(mod.ones(n, n, dtype=mod.float64), 1)

        def energy(x):
            r = x[:, None, :] - x[None, :, :]
            d2 = (r * r).sum(-1) + eye
            inv6 = (1.0 / d2) ** 3
            return (4.0 * (inv6 * inv6 - inv6) * mask).sum()

        energy = _maybe_compile(mod, energy, compiled)

        def run():
            e = energy(x)
            (g,) = mod.autograd.grad(e, x)
            return -g

        return run

    def build_numpy(self):
        x = lj_positions(1000)
        n = len(x)
        mask = np.triu(np.ones((n, n)), 1)

        def run():
            r = x[:, None, :] - x[None, :, :]
            d2 = (r * r).sum(-1) + np.eye(n)
            inv2 = 1.0 / d2
            inv6 = inv2**3
            (4.0 * (inv6 * inv6 - inv6) * mask).sum()
            coef = 4.0 * (-12.0 * inv6 * inv6 + 6.0 * inv6) * inv2 * mask
            coef = coef + coef.T
            return (coef[:, :, None] * r).sum(1)

        return run

    def time_lennard_jones(self, mode):
        return self.run()


class CompiledSGDStep(CompileBenchmark):
    """A hand-written SGD step of a 2-layer MLP (64 -> 128 tanh -> 10, batch 64, float32)
    inside the compiled function: loss, ``autograd.grad``, ``p.sub_(lr * g)`` under
    ``no_grad`` (NOTE [In-place writes in compiled graphs]: written back into the
    parameters, versions bumped as eagerly)."""

    params = [["eager", "compiled", "torch"]]
    number = 200

    def build(self, mod, compiled):
        r = rng(5)
        layers = [
            (r.uniform(-0.1, 0.1, (128, 64)), r.uniform(-0.1, 0.1, 128)),
            (r.uniform(-0.1, 0.1, (10, 128)), r.uniform(-0.1, 0.1, 10)),
        ]
        params = [leaf(mod, a.astype(np.float32)) for w, b in layers for a in (w, b)]
        x = const(mod, r.standard_normal((64, 64)).astype(np.float32))
        y = const(mod, r.standard_normal((64, 10)).astype(np.float32))
        w1, b1, w2, b2 = params

        def step(x, y):
            h = mod.tanh(x @ w1.T + b1)
            loss = ((h @ w2.T + b2 - y) ** 2).mean()
            grads = mod.autograd.grad(loss, params)
            with mod.no_grad():
                for p, g in zip(params, grads):
                    p.sub_(0.01 * g)
            return loss.detach()

        f = _maybe_compile(mod, step, compiled)
        return lambda: f(x, y)

    def time_sgd_step(self, mode):
        return self.run()
