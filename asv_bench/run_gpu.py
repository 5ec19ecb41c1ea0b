#!/usr/bin/env python
"""Time the GPU workloads on a real CUDA device and print (and optionally save) a report.

Standalone (asv is not needed), like ``run_ratios.py``: numbagrad from the checkout next
to this script, PyTorch CUDA and CuPy where they are installed with a GPU, each timed in
the same process with ``cuda.synchronize()`` before every clock read. Workloads:

- ``tanh_sigmoid``: ``sum(tanh(x*w+b) * sigmoid(x))`` over 10M float64, forward +
  backward (``bench_gpu.TanhSigmoidCuda``), with the achieved bandwidth over the device's
  peak (the bytes one fused pass must move, as ``bench_gpu`` counts them);
- ``pair_energy``: the ``@cuda.jit`` pair-potential Function of
  ``examples/cuda_custom_kernel.py`` (energy + forces), at 1,000 and 4,096 particles;
- ``matmul``: ``a @ b`` for square float32 and float64 matrices, numbagrad against cuBLAS
  (through CuPy and PyTorch);
- ``small_ops``: a 20-op elementwise chain on 16 float64, forward + backward, per op (the
  launch and bookkeeping cost per op on the device).

Usage::

    python asv_bench/run_gpu.py --json gpu.json
    python asv_bench/run_gpu.py --only matmul

Refuses to run under the CUDA simulator: its figures are not hardware figures.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(1, ROOT)
sys.path.insert(2, os.path.join(ROOT, "examples"))

from benchmarks import bench_gpu  # noqa: E402
from benchmarks.bench_large import tanh_sigmoid_inputs  # noqa: E402


def _optional(name):
    try:
        return __import__(name)
    except Exception as exc:  # an optional backend can fail to import with anything
        print(f"  ({name} not importable: {type(exc).__name__}: {exc})")
        return None


def timeit(fn, sync, repeat=7, number=1, warmup=1):
    """Median and min seconds per call over ``repeat`` samples of ``number`` calls."""
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / number)
    return {"median": statistics.median(samples), "min": min(samples), "samples": samples}


def fmt(t):
    return f"{t * 1e6:9.1f} us" if t < 1e-3 else f"{t * 1e3:9.3f} ms"


def tanh_sigmoid(ng, torch, cupy, report):
    n = bench_gpu.N
    xs = tanh_sigmoid_inputs(n)
    rows = {}
    run = bench_gpu._build(ng)
    rows["numbagrad"] = timeit(run, ng.cuda.synchronize, repeat=10)
    ref = [g.cpu().numpy() for g in run()]
    if torch is not None:
        trun = bench_gpu._build(torch)
        rows["torch"] = timeit(trun, torch.cuda.synchronize, repeat=10)
        got = [g.cpu().numpy() for g in trun()]
        rows["max_abs_diff_vs_torch"] = max(float(np.abs(a - b).max()) for a, b in zip(ref, got))
    # the same math by hand in NumPy on the host, for scale
    x, w, b = xs
    t0 = time.perf_counter()
    z = x * w + b
    t = np.tanh(z)
    e = np.exp(-np.abs(x))
    s = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
    _ = (t * s).sum()
    dz = (1 - t * t) * s
    _ = (dz * w + t * s * (1 - s), dz * x, dz)
    rows["numpy_host"] = {"median": time.perf_counter() - t0}
    peak = bench_gpu.peak_bandwidth()
    best = rows["numbagrad"]["min"]
    rows["peak_bandwidth_GBps"] = peak / 1e9
    rows["fused_bytes"] = bench_gpu.FUSED_BYTES
    rows["numbagrad_bandwidth_fraction"] = bench_gpu.FUSED_BYTES / best / peak
    if "torch" in rows:
        rows["torch_bandwidth_fraction"] = bench_gpu.FUSED_BYTES / rows["torch"]["min"] / peak
    report["tanh_sigmoid"] = rows
    print(
        f"tanh_sigmoid 10M f64 fwd+bwd: numbagrad {fmt(rows['numbagrad']['median'])}"
        f" (best {fmt(best)}, {rows['numbagrad_bandwidth_fraction']:.1%} of"
        f" {peak / 1e9:.0f} GB/s)"
        + (
            f"; torch {fmt(rows['torch']['median'])}"
            f" ({rows['torch_bandwidth_fraction']:.1%}); |diff| {rows['max_abs_diff_vs_torch']:.1e}"
            if "torch" in rows
            else ""
        )
        + f"; numpy host {fmt(rows['numpy_host']['median'])}"
    )


def pair_energy(ng, torch, cupy, report):
    import cuda_custom_kernel as ex

    rows = {}
    for n in (1000, 4096):
        pos = np.random.default_rng(0).uniform(0.0, 10.0, (n, 3))
        xg = ng.tensor(pos, device="cuda", requires_grad=True)
        xc = ng.tensor(pos, requires_grad=True)

        def gpu(xg=xg):
            xg.grad = None
            ex.PairEnergy.apply(xg).backward()

        def cpu(xc=xc):
            xc.grad = None
            ex.PairEnergy.apply(xc).backward()

        tg = timeit(gpu, ng.cuda.synchronize, repeat=7)
        tc = timeit(cpu, lambda: None, repeat=3)
        diff = float(np.abs(xg.grad.cpu().numpy() - xc.grad.numpy()).max())
        rows[str(n)] = {"cuda": tg, "cpu_njit": tc, "max_abs_force_diff": diff}
        print(
            f"pair_energy n={n} energy+forces: cuda {fmt(tg['median'])}, cpu @njit"
            f" {fmt(tc['median'])} ({tc['median'] / tg['median']:.0f}x); |dF| {diff:.1e}"
        )
    report["pair_energy"] = rows


def matmul(ng, torch, cupy, report):
    rows = {}
    for dtype in ("float32", "float64"):
        for n in (1024, 4096):
            a = np.random.default_rng(1).standard_normal((n, n)).astype(dtype)
            b = np.random.default_rng(2).standard_normal((n, n)).astype(dtype)
            flops = 2.0 * n**3
            row = {}
            ga, gb = ng.tensor(a, device="cuda"), ng.tensor(b, device="cuda")
            row["numbagrad"] = timeit(lambda ga=ga, gb=gb: ga @ gb, ng.cuda.synchronize, repeat=5)
            ref = (ga @ gb).cpu().numpy()
            if cupy is not None:
                ca, cb = cupy.asarray(a), cupy.asarray(b)
                row["cupy"] = timeit(
                    lambda ca=ca, cb=cb: ca @ cb, cupy.cuda.runtime.deviceSynchronize, repeat=5
                )
                row["rel_diff_vs_cupy"] = float(
                    np.abs(ref - cupy.asnumpy(ca @ cb)).max() / np.abs(ref).max()
                )
            if torch is not None:
                ta, tb = torch.tensor(a, device="cuda"), torch.tensor(b, device="cuda")
                torch.backends.cuda.matmul.allow_tf32 = False  # IEEE float32, as numbagrad
                row["torch"] = timeit(
                    lambda ta=ta, tb=tb: ta @ tb, torch.cuda.synchronize, repeat=5
                )
            for k in ("numbagrad", "cupy", "torch"):
                if k in row:
                    row[k]["tflops"] = flops / row[k]["median"] / 1e12
            rows[f"{dtype}_{n}"] = row
            print(
                f"matmul {dtype} {n}^3: "
                + ", ".join(
                    f"{k} {fmt(row[k]['median'])} ({row[k]['tflops']:.1f} TFLOP/s)"
                    for k in ("numbagrad", "cupy", "torch")
                    if k in row
                )
            )
    report["matmul"] = rows


def small_ops(ng, torch, cupy, report):
    rows = {}
    for name, mod in (("numbagrad", ng), ("torch", torch)):
        if mod is None:
            continue
        x = mod.tensor(np.linspace(-1, 1, 16), device="cuda", requires_grad=True)

        def chain(x=x, mod=mod):
            x.grad = None
            y = x
            for _ in range(10):
                y = mod.tanh(y * 0.9 + 0.1)
            y.sum().backward()

        t = timeit(chain, mod.cuda.synchronize, repeat=7, number=5)
        rows[name] = {"per_op": t["median"] / 21, **t}
        print(
            f"small_ops chain of 21 ops on 16 f64, fwd+bwd per op: {name} {fmt(t['median'] / 21)}"
        )
    report["small_ops"] = rows


def single_kernels(ng, torch, cupy, report):
    """One op at a time on 10M float64 (no autograd): achieved bandwidth of each kernel,
    numbagrad against PyTorch, counting the bytes the op must read and write."""
    n = bench_gpu.N
    x, w, _ = tanh_sigmoid_inputs(n)
    ops = {
        "x * w": (lambda m, a, b: a * b, 3),
        "tanh(x)": (lambda m, a, b: m.tanh(a), 2),
        "sigmoid(x)": (lambda m, a, b: m.sigmoid(a), 2),
        "x.sum()": (lambda m, a, b: a.sum(), 1),
        "x[::2] * 2 (strided)": (lambda m, a, b: a[::2] * 2, 1),
    }
    peak = bench_gpu.peak_bandwidth()
    rows = {}
    for name, mod in (("numbagrad", ng), ("torch", torch)):
        if mod is None:
            continue
        a, b = mod.tensor(x, device="cuda"), mod.tensor(w, device="cuda")
        for op, (fn, arrays) in ops.items():
            t = timeit(
                lambda fn=fn, mod=mod, a=a, b=b: fn(mod, a, b), mod.cuda.synchronize, repeat=20
            )
            gbs = arrays * 8 * n / t["min"] / 1e9
            rows.setdefault(op, {})[name] = {
                "min": t["min"],
                "GBps": gbs,
                "fraction_of_peak": gbs * 1e9 / peak,
            }
    report["single_kernels"] = rows
    for op, r in rows.items():
        print(
            f"kernel {op:22s} "
            + ", ".join(
                f"{k} {fmt(v['min'])} ({v['GBps']:.0f} GB/s, {v['fraction_of_peak']:.0%})"
                for k, v in r.items()
            )
        )


def profile(ng, torch, cupy, report):
    """cProfile of numbagrad's host side on the small-op chain and the 10M workload: where
    the time per op goes (printed, top functions by own time)."""
    import cProfile
    import io
    import pstats

    x = ng.tensor(np.linspace(-1, 1, 16), device="cuda", requires_grad=True)

    def chain():
        x.grad = None
        y = x
        for _ in range(10):
            y = ng.tanh(y * 0.9 + 0.1)
        y.sum().backward()

    run = bench_gpu._build(ng)
    for name, fn, reps in (("small_ops", chain, 50), ("tanh_sigmoid", run, 5)):
        fn()
        ng.cuda.synchronize()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(reps):
            fn()
        ng.cuda.synchronize()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        text = buf.getvalue()
        report[f"profile_{name}"] = text
        print(f"---- profile: {name}, {reps} calls ----")
        print(text[text.find("function calls") - 10 :][:4000])


WORKLOADS = {
    "tanh_sigmoid": tanh_sigmoid,
    "pair_energy": pair_energy,
    "matmul": matmul,
    "small_ops": small_ops,
    "single_kernels": single_kernels,
    "profile": profile,
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the report (every sample) to this file")
    p.add_argument("--only", action="append", help="run only these workloads")
    p.add_argument("--traceback", action="store_true", help="print a failing workload's traceback")
    args = p.parse_args(argv)
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.exit("run_gpu.py measures hardware: unset NUMBA_ENABLE_CUDASIM")
    import numbagrad as ng

    if not ng.cuda.is_available():
        sys.exit("no CUDA GPU: numbagrad.cuda.is_available() is False")
    torch = _optional("torch")
    if torch is not None and not torch.cuda.is_available():
        print("  (torch has no CUDA device: its rows are left out)")
        torch = None
    cupy = _optional("cupy")
    import numba
    import numba_cuda

    report = {
        "device": ng.cuda.get_device_name(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numba_cuda": numba_cuda.__version__,
        "numpy": np.__version__,
        "torch": getattr(torch, "__version__", None),
        "cupy": getattr(cupy, "__version__", None),
    }
    print(json.dumps(report))
    for name, fn in WORKLOADS.items():
        if args.only and name not in args.only:
            continue
        try:
            fn(ng, torch, cupy, report)
        except Exception as exc:
            report[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"{name}: FAILED {type(exc).__name__}: {exc}")
            if args.traceback:
                traceback.print_exc()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
