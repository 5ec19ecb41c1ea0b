"""Optimizer steps on a large parameter.

- ``AdamStep``: one ``Adam.step()`` on a 10,000,000-element float64 parameter with a fixed
  gradient. numbagrad runs its fused one-pass kernel (``numbagrad/kernels/cpu/optim.py``);
  PyTorch its multi-tensor path (``foreach=True``, the fastest it has on the CPU);
  NumPy-by-hand is the update a careful user writes with in-place ufuncs (PyTorch's
  single-tensor op order), a dozen passes over the data with their temporaries.

Each call takes one more step, so the returned parameter depends on the number of calls;
``run_ratios.py`` calls every backend equally often, so the values it cross-checks match.
"""

from ._common import BackendBenchmark, const, leaf, rng

LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8


def adam_inputs(n):
    """Parameter and gradient for AdamStep (standard normal)."""
    r = rng(3)
    return r.standard_normal(n), r.standard_normal(n)


class AdamStep(BackendBenchmark):
    """``Adam(lr=1e-3).step()`` on 10M float64 (state: exp_avg, exp_avg_sq)."""

    n = 10_000_000
    number = 1
    repeat = (3, 10, 60.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 600.0

    def build_tensor(self, mod):
        p_np, g_np = adam_inputs(self.n)
        p = leaf(mod, p_np)
        p.grad = const(mod, g_np)
        extra = {"foreach": True} if mod.__name__ == "torch" else {}
        opt = mod.optim.Adam([p], lr=LR, betas=(BETA1, BETA2), eps=EPS, **extra)

        def run():
            opt.step()
            return p

        return run

    def build_numpy(self, np_):
        p, g = adam_inputs(self.n)
        m = np_.zeros_like(p)
        v = np_.zeros_like(p)
        step = [0]

        def run():
            step[0] += 1
            t = step[0]
            np_.multiply(m, BETA1, out=m)
            np_.add(m, (1 - BETA1) * g, out=m)
            np_.multiply(v, BETA2, out=v)
            np_.add(v, (1 - BETA2) * g * g, out=v)
            denom = np_.sqrt(v)
            np_.divide(denom, (1 - BETA2**t) ** 0.5, out=denom)
            np_.add(denom, EPS, out=denom)
            np_.subtract(p, (LR / (1 - BETA1**t)) * m / denom, out=p)
            return p

        return run

    def time_step(self, backend):
        """One Adam step over 10M float64."""
        return self.run()
