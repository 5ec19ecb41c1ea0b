#!/usr/bin/env python
"""Time issue 28's convolution training steps with each library alone in its process.

``run_ratios.py`` interleaves the backends in one process; on a shared machine their
thread pools then sway each other (NOTE [OpenMP wait policy] in
``numbagrad/kernels/cpu/threads.py``). Here every sample is a fresh process that imports
one library only, builds the workload of ``benchmarks/bench_conv.py`` (the same weights
and data in both), warms it up and times ``--steps`` training steps; the processes
alternate between the libraries for ``--rounds`` rounds, so that load drifting on the
machine hits both alike. The table gives each library's best step over all rounds and the
median of the rounds' medians, the ratio of the bests, the target and the 1-minute load
average seen during the runs.

Usage::

    python asv_bench/run_separate.py                       # both steps, 3 rounds of 15
    python asv_bench/run_separate.py --only mnist --rounds 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORKLOADS = {  # name: (bench_conv class, target ratio to torch)
    "mnist_cnn_step": ("MnistStep", 1.5),
    "conv1d_bn_step": ("Conv1dBNStep", 1.5),
}
LIBRARIES = ("numbagrad", "torch")

CHILD = r"""
import json, os, sys, time
sys.path[:0] = [{root!r}, {here!r}]
import importlib
from benchmarks import bench_conv
mod = importlib.import_module({lib!r})
run = getattr(bench_conv, {cls!r})().build_tensor(mod)
for _ in range(3):
    run()
times = []
for _ in range({steps}):
    t = time.perf_counter()
    run()
    times.append(time.perf_counter() - t)
print(json.dumps({{"times": times, "load": os.getloadavg()[0]}}))
"""


def sample(lib, cls, steps):
    """One process: ``steps`` timed training steps of ``cls`` in library ``lib``."""
    code = CHILD.format(root=ROOT, here=HERE, lib=lib, cls=cls, steps=steps)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="processes per library")
    parser.add_argument("--steps", type=int, default=15, help="timed steps per process")
    parser.add_argument("--only", default="", help="workloads whose name contains this")
    args = parser.parse_args(argv)
    rows = []
    for name, (cls, target) in WORKLOADS.items():
        if args.only not in name:
            continue
        best = {lib: float("inf") for lib in LIBRARIES}
        medians: dict = {lib: [] for lib in LIBRARIES}
        loads = []
        for _ in range(args.rounds):
            for lib in LIBRARIES:
                s = sample(lib, cls, args.steps)
                best[lib] = min(best[lib], min(s["times"]))
                medians[lib].append(statistics.median(s["times"]))
                loads.append(s["load"])
        ratio = best["numbagrad"] / best["torch"]
        rows.append((name, best, medians, ratio, target, loads))
    print(
        f"{'workload':16s} {'numbagrad ms':>20s} {'torch ms':>20s} {'ratio':>6s} "
        f"{'target':>7s}  load"
    )
    for name, best, medians, ratio, target, loads in rows:
        cells = [
            f"{best[lib] * 1e3:7.1f} (med {statistics.median(medians[lib]) * 1e3:6.1f})"
            for lib in LIBRARIES
        ]
        verdict = "PASS" if ratio <= target else "FAIL"
        print(
            f"{name:16s} {cells[0]:>20s} {cells[1]:>20s} {ratio:6.2f} "
            f"{'<=' + str(target):>7s}  {min(loads):.1f}-{max(loads):.1f} {verdict}"
        )
    print("(best step over all processes; med: median of the processes' medians)")


if __name__ == "__main__":
    main()
