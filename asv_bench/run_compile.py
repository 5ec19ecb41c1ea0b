"""Side-by-side figures for ``numbagrad.compile`` (the table of its issue), in one process.

Usage::

    python asv_bench/run_compile.py            # the workloads of bench_compile.py
    python asv_bench/run_compile.py --sweep    # tanh(x*w+b)*sigmoid(x) by size
    python asv_bench/run_compile.py --first    # first-call times, empty and warm cache
    python asv_bench/run_compile.py --large    # 10M-element chain and an MLP step

Medians of ``--repeat`` timings of ``number`` calls each, in the default environment;
PyTorch and NumPy run in the same process, so their ratios are comparable even on a busy
machine. ``--first`` runs fresh interpreters with an empty and then a warm
``NUMBAGRAD_CACHE_DIR`` and reports the time of the first compiled forward+backward of
the 20-op chain (the import excluded, reported apart).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from asv_bench.benchmarks import bench_compile as B  # noqa: E402

WORKLOADS = [
    B.CompiledChain,
    B.CompiledChainGrad,
    B.CompiledFunctionCall,
    B.CompiledCustomOp,
    B.CompiledFunctionGrad,
    B.CompiledCustomOpGrad,
    B.CompiledPerExample,
    B.CompiledHessian,
    B.CompiledLennardJones,
]


def _time(run, number, repeat):
    return statistics.median(timeit.repeat(run, number=number, repeat=repeat)) / number


def table(repeat):
    print(f"{'workload':28s} " + " ".join(f"{m:>12s}" for m in B.MODES) + "   eager/compiled")
    for cls in WORKLOADS:
        row = {}
        for mode in cls.params[0]:
            b = cls()
            try:
                b.setup(mode)
            except NotImplementedError as e:  # torch missing
                row[mode] = None
                print(f"  ({mode}: {e})", file=sys.stderr)
                continue
            row[mode] = _time(b.run, cls.number, repeat)
        cells = []
        for m in B.MODES:
            t = row.get(m)
            cells.append(f"{'-':>12s}" if t is None else f"{t * 1e6:10.1f}us")
        ratio = row["eager"] / row["compiled"]
        print(f"{cls.__name__:28s} " + " ".join(cells) + f"   {ratio:6.1f}x", flush=True)


def sweep(repeat):
    import numpy as np

    import numbagrad as ng

    def f(x, w, b):
        return (ng.tanh(x * w + b) * ng.sigmoid(x)).sum()

    c = ng.compile(f)
    for n in (256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 10_000_000):
        r = np.random.default_rng(0)
        x = ng.tensor(r.uniform(-1, 1, n))
        w = ng.tensor(r.uniform(-1, 1, n), requires_grad=True)
        b = ng.tensor(r.uniform(-1, 1, n), requires_grad=True)

        def run(g, x=x, w=w, b=b):
            w.grad = b.grad = None
            g(x, w, b).backward()

        run(c)
        number = max(1, int(2e6 // n))
        te = _time(lambda: run(f), number, repeat)
        tc = _time(lambda: run(c), number, repeat)
        print(f"n={n:>9d}  eager {te * 1e6:10.1f}us  compiled {tc * 1e6:10.1f}us  {te / tc:5.2f}x")


def large(repeat):
    """The issue's large-array checks: the 10M-element chain and a 512-512-512-10 MLP SGD
    step, eager against compiled."""
    import numpy as np

    import numbagrad as ng

    def f(x, w, b):
        return (ng.tanh(x * w + b) * ng.sigmoid(x)).sum()

    r = np.random.default_rng(0)
    n = 10_000_000
    x = ng.tensor(r.uniform(-1, 1, n))
    w = ng.tensor(r.uniform(-1, 1, n), requires_grad=True)
    b = ng.tensor(r.uniform(-1, 1, n), requires_grad=True)

    def chain(g):
        w.grad = b.grad = None
        g(x, w, b).backward()

    c = ng.compile(f)
    chain(c)
    te, tc = _time(lambda: chain(f), 1, repeat), _time(lambda: chain(c), 1, repeat)
    print(f"10M chain   eager {te * 1e3:8.1f} ms  compiled {tc * 1e3:8.1f} ms  {te / tc:5.2f}x")

    ng.manual_seed(0)
    nn = ng.nn
    model = nn.Sequential(
        nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )
    cm = ng.compile(model)
    xs, ys = ng.randn(512, 512), ng.randint(0, 10, (512,))
    opt = ng.optim.SGD(model.parameters(), lr=0.01)
    loss = nn.CrossEntropyLoss()

    def step(m):
        opt.zero_grad()
        loss(m(xs), ys).backward()
        opt.step()

    step(cm)
    te, tc = _time(lambda: step(model), 3, repeat), _time(lambda: step(cm), 3, repeat)
    print(f"MLP step    eager {te * 1e3:8.1f} ms  compiled {tc * 1e3:8.1f} ms  {te / tc:5.2f}x")


FIRST = """
import time
t0 = time.perf_counter()
import numbagrad as ng
t1 = time.perf_counter()
x = ng.linspace(-1, 1, 16, dtype=ng.float64, requires_grad=True)
c, d = ng.full((16,), 0.7, dtype=ng.float64), ng.full((16,), 0.05, dtype=ng.float64)
@ng.compile
def f(x, c, d):
    y = x
    for _ in range(4):
        y = (y * c + d).sin().exp().tanh()
    return y.sum()
t2 = time.perf_counter()
f(x, c, d).backward()
t3 = time.perf_counter()
print(f"{t1 - t0:.3f} {t3 - t2:.3f}")
"""


def first():
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBAGRAD_CACHE_DIR=d)
        for label in ("empty cache", "warm cache", "warm cache"):
            out = subprocess.run(
                [sys.executable, "-c", FIRST], env=env, capture_output=True, text=True, check=True
            ).stdout.split()
            print(
                f"{label:12s}: import {float(out[0]):.2f} s, "
                f"first compiled call {float(out[1]):.2f} s"
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--first", action="store_true")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    t0 = time.time()
    if a.first:
        first()
    elif a.large:
        large(a.repeat)
    elif a.sweep:
        sweep(a.repeat)
    else:
        table(a.repeat)
    print(f"({time.time() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
