"""The cost of a new input size for ``numbagrad.compile`` (NOTE [Size variants]), and
``dynamic=False`` against the size-generic kernels on tiny arrays.

    python asv_bench/run_dynamic.py            # all
    python asv_bench/run_dynamic.py --only static

``sizes``: per call of the 20-op chain (``bench_compile.CompiledChain``'s function,
forward and ``.backward()``) and of an MLP loss (``Linear(32, 64)``, tanh,
``Linear(64, 1)``, mean squared error, the parameters' gradients), the median time of a
call that hits the cache and of a call at a size not seen before (a new trace, the
kernels reused), with PyTorch eager's call in the same process for scale. ``static``:
the chain at 16 elements compiled with ``dynamic=None`` and ``dynamic=False``, each timed
in its own child process (the other's threads and caches cannot sway it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _chain(mod):
    def f(x, c, d):
        y = x
        for _ in range(4):
            y = (y * c + d).sin().exp().tanh()
        return y.sum()

    return f


def _mlp(mod):
    mod.manual_seed(0)
    model = mod.nn.Sequential(mod.nn.Linear(32, 64), mod.nn.Tanh(), mod.nn.Linear(64, 1))

    def loss(x, y):
        return ((model(x) - y) ** 2).mean()

    return loss, model


def _median(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def sizes():
    sys.path.insert(0, ROOT)
    import torch

    import numbagrad as ng

    rows = []
    for name in ("chain", "mlp"):
        for mod in (ng, torch):
            if name == "chain":
                f = _chain(mod)

                def inputs(n, mod=mod):
                    x = mod.linspace(-1, 1, n, dtype=mod.float64).requires_grad_()
                    c = mod.full((n,), 0.9, dtype=mod.float64)
                    return x, c, c * 0.1

                base = 16
            else:
                f, _model = _mlp(mod)

                def inputs(n, mod=mod):
                    return mod.randn(n, 32), mod.randn(n, 1)

                base = 64
            g = mod.compile(f) if mod is ng else f

            def call(args, g=g):
                g(*args).backward()

            args = inputs(base)
            for _ in range(5):
                call(args)
            hit = _median(lambda args=args: call(args), 200)
            new = []
            if mod is ng:
                for k in range(1, 41):  # 40 sizes never seen: a trace each
                    a = inputs(base + k)
                    t0 = time.perf_counter()
                    call(a)
                    new.append(time.perf_counter() - t0)
                assert len(g._structures) == 1
            rows.append((name, mod.__name__, hit, statistics.median(new) if new else None))
    print(f"{'workload':8} {'library':10} {'hit (us)':>10} {'new size (us)':>14}")
    for name, lib, hit, new in rows:
        new_s = f"{new * 1e6:14.0f}" if new is not None else f"{'-':>14}"
        print(f"{name:8} {lib:10} {hit * 1e6:10.1f} {new_s}")


def _static_child(dynamic):
    sys.path.insert(0, ROOT)
    import numbagrad as ng

    f = ng.compile(_chain(ng), dynamic=None if dynamic == "None" else False)
    x = ng.linspace(-1, 1, 16, dtype=ng.float64).requires_grad_()
    c = ng.full((16,), 0.9, dtype=ng.float64)
    d = c * 0.1

    def run():
        x.grad = None
        f(x, c, d).backward()

    for _ in range(300):
        run()
    best = min(_median(run, 2000) for _ in range(5))
    print(f"{best * 1e6:.3f}")


def static():
    out = {}
    for dyn in ("None", "False", "None", "False"):
        r = subprocess.run(
            [sys.executable, __file__, "--child", dyn], capture_output=True, text=True, check=True
        )
        out.setdefault(dyn, []).append(float(r.stdout.split()[-1]))
    for dyn, ts in out.items():
        print(f"chain 16 x float64, dynamic={dyn}: {min(ts):.2f} us per call (best of {ts})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("sizes", "static"))
    p.add_argument("--child")
    a = p.parse_args()
    if a.child:
        _static_child(a.child)
        return
    if a.only in (None, "sizes"):
        sizes()
    if a.only in (None, "static"):
        static()


if __name__ == "__main__":
    main()
