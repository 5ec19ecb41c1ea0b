"""Instructions per call of the small-op workloads, counted by callgrind: a timer-free
before/after check for changes to the ops, the engine or dispatch.

    python asv_bench/callgrind_small.py                  # this tree
    python asv_bench/callgrind_small.py --root /tmp/wt   # another checkout (git worktree)

Each workload (``chain20``: bench_eager.ChainSmall, ``function16``:
bench_function.FunctionCall, ``perexample``: bench_transforms.PerExampleGrads, the
interpreters' cost under ``vmap(grad)``, kernels counted too; ``cchain``, ``cfunction``,
``ccustomop``: bench_compile's compiled chain, Function call and custom op, forward and
``.backward()``; ``cchainstatic``: the chain compiled with ``dynamic=False``) is set up,
warmed up for 300 calls, and then called ``--calls`` times inside one
``functools.reduce``; callgrind counts only inside that call (``--collect-atstart=no
--toggle-collect=functools_reduce``),
with the garbage collector off and ``PYTHONHASHSEED=0``, so the count is the same from run
to run (timings on a shared machine move by +-30 %). Needs ``valgrind`` on the PATH.
Compare two trees at paths of the same length: module paths appear in the interpreter's
string handling.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

WORKLOADS = (
    "chain20",
    "function16",
    "perexample",
    "cchain",
    "cchainstatic",
    "cfunction",
    "ccustomop",
)


def _child(root, which, calls):
    """Run inside valgrind: set up one workload and call it ``calls`` times."""
    sys.path.insert(0, root)
    sys.path.insert(0, os.path.join(root, "asv_bench"))
    from benchmarks import bench_compile, bench_eager, bench_function, bench_transforms

    cls, mode = {
        "chain20": (bench_eager.ChainSmall, "numbagrad"),
        "function16": (bench_function.FunctionCall, "numbagrad"),
        "perexample": (bench_transforms.PerExampleGrads, "numbagrad"),
        "cchain": (bench_compile.CompiledChain, "compiled"),
        "cchainstatic": (bench_compile.CompiledChainStatic, "compiled"),
        "cfunction": (bench_compile.CompiledFunctionCall, "compiled"),
        "ccustomop": (bench_compile.CompiledCustomOp, "compiled"),
    }[which]
    bench = cls()
    bench.setup(mode)
    fn = bench.run
    for _ in range(300):
        fn()
    gc.collect()
    gc.disable()  # collections land differently per tree: leave them out
    functools.reduce(lambda acc, _: fn(), range(calls), None)  # the measured call


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]))
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.root, args.child, args.calls)
        return 0
    if shutil.which("valgrind") is None:
        print("callgrind_small.py needs valgrind on the PATH", file=sys.stderr)
        return 2
    env = dict(os.environ, PYTHONHASHSEED="0")
    chosen = WORKLOADS if not args.only else tuple(args.only.split(","))
    for which in chosen:
        if which not in WORKLOADS:
            print(f"unknown workload {which!r}: one of {', '.join(WORKLOADS)}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=functools_reduce",
                f"--callgrind-out-file={tmp}/out",
                sys.executable,
                __file__,
                "--root",
                args.root,
                "--calls",
                str(args.calls),
                "--child",
                which,
            ]
            run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        found = re.search(r"Collected\s*:\s*(\d+)", run.stderr)
        if run.returncode or not found:
            print(f"{which}: valgrind failed\n{run.stderr[-2000:]}", file=sys.stderr)
            return 1
        print(f"{which:11s} {int(found.group(1)) // args.calls:>12,d} instructions per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
