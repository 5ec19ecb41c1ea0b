#!/usr/bin/env python
"""Time the asv workloads for numbagrad, NumPy-by-hand and PyTorch in one run; print ratios.

Standalone (asv is not needed): imports the benchmark classes from ``benchmarks/``, runs
their ``setup`` (which builds inputs and warms the JIT), then times each workload with
``timeit``-style repeats. Backends are interleaved round-robin within each repeat, so
that drift on the shared machine hits them alike and the ratios stay comparable. Each
row shows the median with the [min-max] spread over the repeats, the ratios of medians,
the target from the issues with PASS/FAIL, and whether the backends' gradients agree.

Usage::

    python asv_bench/run_ratios.py --quick           # small workloads, 3 repeats
    python asv_bench/run_ratios.py --quick --large   # plus the 10M / 4000x2500 ones
    python asv_bench/run_ratios.py --only chain      # rows whose name contains 'chain'
    python asv_bench/run_ratios.py --json out.json   # also write every sample

A backend that cannot be imported is skipped with the reason printed; an error inside a
workload is reported in its row (``--traceback`` prints it in full) and the run goes on.
"""

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# ``benchmarks`` is a package inside asv_bench/; the numbagrad measured is the checkout
# next to this script, whether or not it is installed.
sys.path.insert(0, HERE)
sys.path.insert(1, ROOT)

from benchmarks import (  # noqa: E402
    _common,
    bench_cold,
    bench_eager,
    bench_function,
    bench_kernels,
    bench_large,
    bench_optim,
    bench_transforms,
)

BACKENDS = _common.BACKENDS


@dataclass
class Target:
    """A target from the issues: an absolute time for numbagrad, or a ratio to torch."""

    kind: str  # "abs": numbagrad median <= value seconds; "torch": numbagrad/torch <= value
    value: float
    text: str

    def verdict(self, medians):
        """'PASS', 'FAIL' or 'n/a (...)' for the medians of one row (already scaled)."""
        nb = medians.get("numbagrad")
        if nb is None:
            return "n/a"
        if self.kind == "abs":
            return "PASS" if nb <= self.value else "FAIL"
        torch_median = medians.get("torch")
        if torch_median is None:
            return "n/a"
        return "PASS" if nb / torch_median <= self.value else "FAIL"


@dataclass
class Workload:
    """One row of the table: a benchmark method, its parameters beyond ``backend``."""

    name: str
    cls: type
    method: str
    extra: tuple = ()
    per: int = 1  # divide times by this (chain length: per-op figures)
    per_label: str = ""
    target: Target = None
    large: bool = False  # skipped by --quick unless --large or named in --only
    fresh_setup: bool = False  # setup/teardown around every sample (empty-cache runs)
    quick_repeat: int = None  # repeats under --quick, when fewer than the default
    max_repeat: int = None  # cap on repeats otherwise (samples that take seconds)
    backends: list = field(default_factory=lambda: list(BACKENDS))
    group: str = "issue targets"
    note: str = ""


WORKLOADS = [
    Workload(
        "chain20 x16 f64",
        bench_eager.ChainSmall,
        "time_chain",
        per=20,
        per_label="per op",
        target=Target("abs", 7e-6, "<= 7 us/op"),
        note="issue 2: 20 elementwise ops on 16 float64, fwd+bwd; PyTorch CPU ~11.5-14 us/op",
    ),
    Workload(
        "function16 f64",
        bench_function.FunctionCall,
        "time_apply_backward",
        target=Target("abs", 20e-6, "<= 20 us"),
        note="issue 3: autograd.Function x*exp(x) with saved tensors on 16 float64, "
        "apply + sum().backward(); PyTorch CPU ~64-92 us",
    ),
    Workload(
        "tanh*sigmoid 10M f64",
        bench_large.TanhSigmoid,
        "time_forward_backward",
        target=Target("torch", 0.65, "<= 0.65x torch"),
        large=True,
        note="issue 2: sum(tanh(x*w+b)*sigmoid(x)), 10M float64, x/w/b require grad",
    ),
    Workload(
        "logsumexp 4000x2500",
        bench_large.LogSumExp,
        "time_forward_backward",
        target=Target("torch", 1.0, "<= 1.0x torch"),
        large=True,
        note="issue 2: log(exp(x).sum(1)).sum(), 4000x2500 float64",
    ),
    Workload(
        "cold start, warm cache",
        bench_cold.ColdStart,
        "time_import_and_chain",
        per_label="process",
        target=Target("abs", 0.6, "<= 0.6 s"),
        quick_repeat=3,
        max_repeat=5,
        note="issue 2: fresh process, import + chain20 once, numba cache warm; PyTorch ~1.7-2.2 s",
    ),
    Workload(
        "cold start, empty cache",
        bench_cold.ColdStartEmptyCache,
        "time_import_and_chain",
        per_label="process",
        fresh_setup=True,
        quick_repeat=1,
        max_repeat=3,
        backends=["numbagrad"],
        note="issue 2: as above with NUMBA_CACHE_DIR empty (report only)",
    ),
    Workload(
        "jacrev tanh(W@x) 256",
        bench_transforms.JacrevTanh,
        "time_jacrev",
        target=Target("torch", 0.5, "<= 0.5x torch"),
        note="transforms issue: jacrev of tanh(W @ x), W 256x256 float64 (torch.func)",
    ),
    Workload(
        "per-example grads 512",
        bench_transforms.PerExampleGrads,
        "time_per_example",
        target=Target("torch", 0.5, "<= 0.5x torch"),
        note="transforms issue: vmap(grad(loss), in_dims=(None, 0, 0)), W 8x32, b 8, "
        "512 examples, float32",
    ),
    Workload(
        "hessian rosenbrock 64",
        bench_transforms.HessianRosenbrock,
        "time_hessian",
        target=Target("torch", 0.5, "<= 0.5x torch"),
        note="transforms issue: hessian of the 64-dimensional Rosenbrock function",
    ),
    Workload(
        "adam step 10M f64",
        bench_optim.AdamStep,
        "time_step",
        large=True,
        group="other workloads",
        note="optim: one Adam step on a 10M float64 parameter; torch with foreach=True",
    ),
    Workload(
        "chain200 x1000 f64",
        bench_eager.ChainLong,
        "time_chain",
        per=200,
        per_label="per op",
        group="other workloads",
        note="200 elementwise ops on 1000 float64, fwd+bwd",
    ),
]
for _op in bench_kernels.OPS:
    for _size in bench_kernels.SIZES:
        WORKLOADS.append(
            Workload(
                f"{_op} n={_size:.0e}".replace("e+0", "e"),
                bench_kernels.Kernels,
                f"time_{_op}",
                extra=(_size,),
                group="kernels (no graph unless backward)",
            )
        )


@dataclass
class Result:
    """Per-backend outcome of one workload."""

    samples: list = field(default_factory=list)  # seconds per call, one per repeat
    number: int = 0
    skipped: str = None
    error: str = None
    value: object = None  # what the workload returned (gradients), for the cross-check


def fmt_time(t):
    """Seconds as a short string with a unit (3 significant digits)."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if t >= scale or unit == "ns":
            return f"{t / scale:.3g}{unit}"
    return f"{t}s"


def autorange(fn, min_time):
    """Calls per sample so that one sample lasts at least ``min_time`` (as timeit's)."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time or number >= 10**6:
            return number
        # Aim a little past min_time from the measured rate, growing at least 2x.
        number = max(2 * number, int(number * 1.2 * min_time / max(elapsed, 1e-9)))


def short_error(exc):
    """One-line description of an exception."""
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


def measure(work, args, backends):
    """Time ``work`` for every backend, interleaved; return {backend: Result}."""
    results = {b: Result() for b in backends}
    instances = {}
    for b in backends:
        inst = work.cls()
        params = (b, *work.extra)
        try:
            inst.setup(*params)
            fn = getattr(inst, work.method)
        except NotImplementedError as exc:
            results[b].skipped = str(exc) or "skipped by setup"
            continue
        except Exception as exc:
            results[b].error = short_error(exc)
            if args.traceback:
                traceback.print_exc()
            continue
        instances[b] = (inst, params, fn)

    repeat = args.repeat
    if args.quick and work.quick_repeat is not None:
        repeat = min(repeat, work.quick_repeat)
    elif not args.quick and work.max_repeat is not None and not args.repeat_given:
        repeat = min(repeat, work.max_repeat)
    for b, (_inst, params, fn) in list(instances.items()):
        if work.fresh_setup or getattr(work.cls, "number", 0) == 1:
            # Seconds per call already (big arrays, subprocesses): setup's warm-up suffices.
            results[b].number = 1
            continue
        try:
            # Also the warm-up beyond setup's: autorange's first calls are not kept.
            results[b].number = autorange(lambda fn=fn, p=params: fn(*p), args.min_time)
        except Exception as exc:
            results[b].error = short_error(exc)
            if args.traceback:
                traceback.print_exc()
            del instances[b]

    live = list(instances)
    for r in range(repeat):
        # Rotate the order each repeat so no backend always runs right after another.
        order = live[r % len(live) :] + live[: r % len(live)] if live else []
        for b in order:
            inst, params, fn = instances[b]
            res = results[b]
            if res.error:
                continue
            try:
                if work.fresh_setup:
                    inst.teardown(*params)
                    inst.setup(*params)
                gc.collect()
                if not args.gc:
                    gc.disable()
                t0 = time.perf_counter()
                for _ in range(res.number):
                    value = fn(*params)
                elapsed = time.perf_counter() - t0
                res.value = value  # the gradients, for the cross-check
            except Exception as exc:
                res.error = short_error(exc)
                if args.traceback:
                    traceback.print_exc()
                continue
            finally:
                gc.enable()
            res.samples.append(elapsed / res.number)
    for inst, params, _ in instances.values():
        if hasattr(inst, "teardown"):
            inst.teardown(*params)
    _common.clear_cache()
    gc.collect()
    return results


def check_values(results):
    """Compare each backend's returned gradients with NumPy's (or the first available)."""
    have = [b for b in BACKENDS if b in results and results[b].value is not None]
    have = [b for b in have if not results[b].error]
    if len(have) < 2:
        return "-"
    ref_b = "numpy" if "numpy" in have else have[0]
    ref = _common.to_numpy(results[ref_b].value)
    worst = 0.0
    for b in have:
        if b == ref_b:
            continue
        try:
            got = _common.to_numpy(results[b].value)
        except Exception as exc:
            return f"? {b}: {short_error(exc)[:40]}"
        refs = ref if isinstance(ref, list) else [ref]
        gots = got if isinstance(got, list) else [got]
        if len(refs) != len(gots):
            return f"BAD {b}: {len(gots)} results vs {len(refs)}"
        for e, g in zip(refs, gots):
            if g is None or np.shape(g) != np.shape(e):
                return f"BAD {b}: shape {np.shape(g) if g is not None else None}"
            # Error relative to the largest reference entry: scale-free, so gradients that
            # are tiny everywhere (long chains) are still checked to the last digits.
            scale = float(np.max(np.abs(e), initial=0.0)) or 1.0
            err = float(np.max(np.abs(g - e), initial=0.0)) / scale
            # float32 results agree to a few float32 roundings (eps 1.2e-7), not 1e-7
            tol = 1e-5 if np.asarray(e).dtype == np.float32 else 1e-7
            if not np.all(np.isfinite(g)) or not err <= tol:
                return f"BAD {b}: rel err {err:.1e}"
            worst = max(worst, err)
    return f"ok {worst:.0e}"


def cell(res, per):
    """Table cell for one backend: median [min-max], or why there is none."""
    if res is None:
        return "-"
    if res.skipped:
        return "skipped"
    if res.error:
        return "ERROR"
    if not res.samples:
        return "-"
    s = [x / per for x in res.samples]
    return f"{fmt_time(statistics.median(s))} [{fmt_time(min(s))}-{fmt_time(max(s))}]"


def environment_lines():
    """Versions, threads and machine load, for the closing note."""
    lines = [
        f"date {time.strftime('%Y-%m-%d %H:%M:%S')}  host {platform.node()}  "
        f"cpus {os.cpu_count()}  load avg {os.getloadavg()[0]:.2f}",
        f"python {platform.python_version()}  numpy {np.__version__}",
    ]
    try:
        import numba

        lines.append(
            f"numba {numba.__version__}  threads {numba.config.NUMBA_NUM_THREADS}  "
            f"threading layer (config) {numba.config.THREADING_LAYER}"
        )
    except Exception as exc:
        lines.append(f"numba: {short_error(exc)}")
    for name in ("numbagrad", "torch"):
        try:
            mod = _common.load_backend(name)
        except NotImplementedError as exc:
            lines.append(f"{name}: SKIPPED, {exc}")
            continue
        extra = f"  threads {mod.get_num_threads()}" if name == "torch" else ""
        lines.append(
            f"{name} {getattr(mod, '__version__', '?')}{extra}  ({os.path.dirname(mod.__file__)})"
        )
    return lines


def print_table(rows):
    """Print rows (lists of strings) as an aligned table with a header rule."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))


def ratio(medians, a, b):
    """medians[a] / medians[b] as text."""
    if a in medians and b in medians and medians[b] > 0:
        return f"{medians[a] / medians[b]:.2f}x"
    return "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="3 repeats, short samples, skip the 10M and 4000x2500 workloads unless --large",
    )
    parser.add_argument("--large", action="store_true", help="run the large workloads")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="rows whose name contains NAME (case-insensitive; repeatable, "
        "comma-separated); a large workload named here runs under --quick",
    )
    parser.add_argument("--no-kernels", action="store_true", help="skip the kernel rows")
    parser.add_argument(
        "--backends",
        default=",".join(BACKENDS),
        help="comma-separated subset of " + ",".join(BACKENDS),
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help="samples per backend (default 7, --quick 3)"
    )
    parser.add_argument(
        "--min-time",
        type=float,
        default=None,
        help="seconds per sample for autoranging (default 0.2, --quick 0.05)",
    )
    parser.add_argument(
        "--gc",
        action="store_true",
        help="keep the garbage collector on while timing (timeit turns it off)",
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        metavar="N",
        help="torch.set_num_threads(N) before timing (default: torch's own)",
    )
    parser.add_argument("--json", metavar="PATH", help="write all samples as JSON")
    parser.add_argument("--traceback", action="store_true", help="print errors in full")
    args = parser.parse_args(argv)
    args.repeat_given = args.repeat is not None
    if args.repeat is None:
        args.repeat = 3 if args.quick else 7
    if args.min_time is None:
        args.min_time = 0.05 if args.quick else 0.2
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        parser.error(f"unknown backends {sorted(unknown)}")
    only = [s.strip().lower() for o in args.only for s in o.split(",") if s.strip()]

    selected = []
    for w in WORKLOADS:
        if only and not any(s in w.name.lower() for s in only):
            continue
        if w.large and args.quick and not args.large and not only:
            continue
        if args.no_kernels and w.cls is bench_kernels.Kernels:
            continue
        selected.append(w)
    if not selected:
        parser.error("no workload selected")

    if args.torch_threads is not None and "torch" in backends:
        try:
            _common.load_backend("torch").set_num_threads(args.torch_threads)
        except NotImplementedError:
            pass
    print("numbagrad benchmark ratios (asv_bench/run_ratios.py)")
    for line in environment_lines():
        print("  " + line)
    print(
        f"  {args.repeat} repeats per backend, interleaved; samples >= {args.min_time} s "
        f"(autoranged); gc {'on' if args.gc else 'off'} while timing; "
        "cells: median [min-max] per call"
    )
    load = os.getloadavg()[0]
    if "torch" in backends and load > 0.8 * (os.cpu_count() or 1) - 1:
        try:
            threads = _common.load_backend("torch").get_num_threads()
        except NotImplementedError:
            threads = 1
        if threads > 1:
            print(
                f"  WARNING: load avg {load:.2f} on {os.cpu_count()} cpus: torch's "
                f"{threads}-thread OpenMP pool can stall for milliseconds per call while "
                "another process holds a core; compare with --torch-threads 1"
            )
    print(flush=True)

    header = ["workload", "unit", *backends, "nb/torch", "nb/numpy", "target", "verdict", "grads"]
    dump = []
    groups = {}
    for w in selected:
        groups.setdefault(w.group, []).append(w)
    errors = []
    for group, works in groups.items():
        rows = [header]
        notes = []
        for w in works:
            active = [b for b in backends if b in w.backends]
            t0 = time.perf_counter()
            print(f"  running {w.name} ...", end="", file=sys.stderr, flush=True)
            results = measure(w, args, active)
            print(f" {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
            medians = {
                b: statistics.median(r.samples) / w.per
                for b, r in results.items()
                if r.samples and not r.error
            }
            verdict = w.target.verdict(medians) if w.target else ""
            rows.append(
                [
                    w.name,
                    w.per_label or "per call",
                    *[cell(results.get(b), w.per) if b in w.backends else "" for b in backends],
                    ratio(medians, "numbagrad", "torch"),
                    ratio(medians, "numbagrad", "numpy"),
                    w.target.text if w.target else "",
                    verdict,
                    check_values(results),
                ]
            )
            if w.note:
                notes.append(f"{w.name}: {w.note}")
            for b, r in results.items():
                if r.skipped:
                    errors.append(f"{w.name} [{b}] skipped: {r.skipped}")
                if r.error:
                    errors.append(f"{w.name} [{b}] ERROR: {r.error}")
                dump.append(
                    {
                        "workload": w.name,
                        "backend": b,
                        "per": w.per,
                        "number": r.number,
                        "samples_s": r.samples,
                        "skipped": r.skipped,
                        "error": r.error,
                        "target": w.target.text if w.target else None,
                        "verdict": verdict,
                    }
                )
        print(f"== {group} ==")
        print_table(rows)
        for n in notes:
            print("  * " + n)
        print(flush=True)

    # Skips are usually the same reason on every row: print each distinct one once.
    if errors:
        print("== skipped / errors ==")
        seen = set()
        for e in errors:
            key = e.split("] ", 1)[1] if "] " in e else e
            if "skipped" in key and key in seen:
                continue
            seen.add(key)
            print("  " + e)
        print()
    print(
        f"  load avg after {os.getloadavg()[0]:.2f}; ratios are medians of the same run; "
        "the machine is shared, read absolute times as +-30 %"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": environment_lines(), "results": dump}, f, indent=1)
        print(f"  samples written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
