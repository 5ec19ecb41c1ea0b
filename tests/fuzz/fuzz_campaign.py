"""Differential fuzz campaigns: programs in subprocess batches, crash capture, the report.

Run from the repository root (``make fuzz N=40000`` does)::

    .venv/bin/python tests/fuzz/fuzz_campaign.py -n 40000 [--seed 0] [--jobs 2]
        [--batch 250] [--out tests/fuzz] [--ops add,sum,...]
    .venv/bin/python tests/fuzz/fuzz_campaign.py --show SEED   # one program, in-process

Each batch of seeds runs in a fresh ``python fuzz_campaign.py --worker`` process, which
announces every seed and program on stdout before running it: when the process dies (a
segfault in a kernel, an abort) or stops answering, the parent records a crash with the
seed and the program, and starts a new worker after it. The report (``report.json`` and a
short ``report.txt``) counts programs, crashes and mismatches by kind and op, and keeps one
minimal reproducer per (op, kind, classification) with its Python script.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [p for p in (str(HERE), str(HERE.parent)) if p not in sys.path]

import known_deviations  # noqa: E402
from fuzz_program import explicit_elements, render  # noqa: E402

TAG = "@@FUZZ "
SEED_TIMEOUT = 180.0  # seconds a worker may spend on one program (large ones included)


# ---------------------------------------------------------------------------------------------
# Worker (one subprocess per batch)
# ---------------------------------------------------------------------------------------------


def _emit(**event):
    sys.stdout.write(TAG + json.dumps(event) + "\n")
    sys.stdout.flush()


def run_one(seed, ng, torch, ops=None, log=None):
    """Generate, check and (on a mismatch) reduce program ``seed``; a JSON-able record."""
    from fuzz_gen import generate
    from fuzz_program import check, reduce_mismatch, target_name

    program, t_run = generate(seed, torch, ops)
    if log:
        log("program", program)
    res = check(program, ng, torch, t_run=t_run)
    rec = {
        "seed": seed,
        "status": res["status"],
        "ops": sorted({s["op"] for s in program["steps"]}),
    }
    if res["status"] == "drift":
        rec.update(op=res["op"], kind=res["kind"])
    if res["status"] != "mismatch":
        return rec
    small, sres = reduce_mismatch(
        program, res, ng, torch, log=(lambda p: log("attempt", p)) if log else None
    )
    if sres.get("stage") in ("grad", "gradgrad"):
        sres["target"] = target_name(small, sres, torch)
    rec.update(
        {k: sres.get(k) for k in ("stage", "kind", "op", "variant", "detail", "features", "step")}
    )
    rec["program"] = small
    rec["steps"] = len(small["steps"])
    rec["repro"] = render(small, sres)
    return rec


def _setup():
    import warnings

    warnings.simplefilter("ignore")
    import torch

    import numbagrad

    torch.set_num_threads(1)
    return numbagrad, torch


def _planted_crash(seed):
    """The crash test of test_fuzz.py: NUMBAGRAD_FUZZ_CRASH_SEED=<seed> kills the worker
    (SIGSEGV) once that program has been announced."""
    if os.environ.get("NUMBAGRAD_FUZZ_CRASH_SEED") == str(seed):
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)


def worker():
    job = json.loads(sys.stdin.readline())
    ng, torch = _setup()
    ops = job.get("ops")
    for seed in range(job["start"], job["stop"]):
        _emit(ev="start", seed=seed)

        def log(what, p, s=seed):
            _emit(ev=what, seed=s, program=p)
            if what == "program":
                _planted_crash(s)

        try:
            rec = run_one(seed, ng, torch, ops, log=log)
        except Exception as e:
            import traceback

            rec = {
                "seed": seed,
                "status": "fuzzer_error",
                "detail": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc()[-2000:],
            }
        _emit(ev="done", seed=seed, rec=rec)


# ---------------------------------------------------------------------------------------------
# Parent
# ---------------------------------------------------------------------------------------------


def _reader(stream, q):
    for line in stream:
        q.put(line)
    q.put(None)


def run_batch(start, stop, ops=None, timeout=SEED_TIMEOUT, env=None):
    """Run seeds [start, stop) in worker processes; (records, crashes)."""
    records, crashes = [], []
    seed = start
    while seed < stop:
        errf = tempfile.TemporaryFile(mode="w+")  # stderr: its tail goes into crash records
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "fuzz_campaign.py"), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errf,
            text=True,
            env=env,
            cwd=str(HERE.parent.parent),
        )
        proc.stdin.write(json.dumps({"start": seed, "stop": stop, "ops": ops}) + "\n")
        proc.stdin.flush()
        q = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
        current, program, stage = None, None, "generate"
        timed_out = False
        while True:
            try:
                line = q.get(timeout=timeout)
            except queue.Empty:
                timed_out = True
                proc.kill()
                break
            if line is None:
                break
            if not line.startswith(TAG):
                continue
            ev = json.loads(line[len(TAG) :])
            if ev["ev"] == "start":
                current, program, stage = ev["seed"], None, "generate"
            elif ev["ev"] in ("program", "attempt"):
                program, stage = ev["program"], ("check" if ev["ev"] == "program" else "reduce")
            elif ev["ev"] == "done":
                records.append(ev["rec"])
                current = None
                seed = ev["seed"] + 1
        rc = proc.wait()
        errf.seek(0)
        stderr = errf.read()[-3000:]
        errf.close()
        if current is None and not timed_out and rc == 0:
            break  # finished the batch
        if current is None:
            current = seed  # died between programs (import, startup)
        crashes.append(
            {
                "seed": current,
                "returncode": rc,
                "signal": -rc if rc < 0 else None,
                "timeout": timed_out,
                "stage": stage,
                "program": program,
                "repro": render(program) if program else None,
                "stderr_tail": stderr,
            }
        )
        seed = current + 1
    return records, crashes


def run_campaign(
    n, seed=0, jobs=2, batch=250, ops=None, progress=None, timeout=SEED_TIMEOUT, env=None
):
    """Run ``n`` programs (seeds ``seed``..``seed+n-1``); returns the report dict."""
    t0 = time.time()
    batches = [(a, min(a + batch, seed + n)) for a in range(seed, seed + n, batch)]
    records, crashes = [], []
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = [ex.submit(run_batch, a, b, ops, timeout, env) for a, b in batches]
        for fut, (a, b) in zip(futs, batches):
            r, c = fut.result()
            records += r
            crashes += c
            done += b - a
            if progress:
                el = time.time() - t0
                mism = sum(1 for x in records if x["status"] == "mismatch")
                eta = el / done * (n - done)
                progress(
                    f"[{done}/{n}] {100 * done / n:5.1f}%  crashes {len(crashes)}  "
                    f"mismatches {mism}  elapsed {el:.0f}s  eta {eta:.0f}s"
                )
    return build_report(
        records,
        crashes,
        {
            "n": n,
            "seed": seed,
            "jobs": jobs,
            "batch": batch,
            "ops": ops,
            "elapsed_s": round(time.time() - t0, 1),
            "boundscheck": os.environ.get("NUMBAGRAD_BOUNDSCHECK", ""),
        },
    )


def build_report(records, crashes, config):
    status = Counter(r["status"] for r in records)
    status["crash"] = len(crashes)
    mism = [r for r in records if r["status"] == "mismatch"]
    by_kind = Counter(r["kind"] for r in mism)
    by_op = Counter(r["op"] for r in mism)
    classes = Counter()
    groups = {}
    for r in mism:
        cls, entry = known_deviations.classify(r)
        classes[cls] += 1
        key = (r["op"], r["kind"], cls)
        g = groups.get(key)
        size = (r["steps"], explicit_elements(r["program"]), r["seed"])
        if g is None:
            groups[key] = g = {
                "op": r["op"],
                "kind": r["kind"],
                "stage": r["stage"],
                "classification": cls,
                "entry": entry,
                "count": 0,
                "seeds": [],
                "_size": None,
                "common_features": sorted(r["features"]),
            }
        g["count"] += 1
        g["common_features"] = sorted(set(g["common_features"]) & set(r["features"]))
        if len(g["seeds"]) < 10:
            g["seeds"].append(r["seed"])
        if g["_size"] is None or size < g["_size"]:
            g.update(
                _size=size,
                seed=r["seed"],
                variant=r.get("variant"),
                detail=r["detail"],
                features=r["features"],
                program=r["program"],
                repro=r["repro"],
            )
    order = {"unexplained": 0, "open_bug": 1, "known": 2}
    repros = sorted(
        groups.values(), key=lambda g: (order[g["classification"]], -g["count"], g["op"], g["kind"])
    )
    for g in repros:
        del g["_size"]
    coverage = Counter(op for r in records for op in r.get("ops", ()))
    fuzzer_errors = [r for r in records if r["status"] == "fuzzer_error"]
    return {
        "config": config,
        "programs": len(records) + len(crashes),
        "status": dict(status),
        "crashes": crashes,
        "mismatches": len(mism),
        "mismatches_by_kind": dict(by_kind.most_common()),
        "mismatches_by_op": dict(by_op.most_common()),
        "classification": dict(classes),
        "drift": dict(Counter(f"{r['op']}/{r['kind']}" for r in records if r["status"] == "drift")),
        "reproducers": repros,
        "fuzzer_errors": fuzzer_errors[:20],
        "op_coverage": dict(sorted(coverage.items())),
        # every mismatch (its reduced program, no script), so that ``--reclassify`` can
        # classify a long campaign again against edited tables
        "mismatch_records": [{k: v for k, v in r.items() if k != "repro"} for r in mism],
    }


def summary(report, full=False):
    """The short text summary of a report."""
    c = report["config"]
    st = report["status"]
    lines = [
        f"numbagrad differential fuzz: {report['programs']} programs "
        f"(seeds {c['seed']}..{c['seed'] + c['n'] - 1}, {c['jobs']} jobs"
        f"{', NUMBAGRAD_BOUNDSCHECK=1' if c.get('boundscheck') == '1' else ''}) "
        f"in {c['elapsed_s']:.0f} s",
        f"  agree {st.get('ok', 0)}, both raised {st.get('agree_raise', 0)}, "
        f"float drift {st.get('drift', 0)}, mismatches {report['mismatches']}, "
        f"crashes {len(report['crashes'])}, fuzzer errors {st.get('fuzzer_error', 0)}",
        "  mismatches by kind: "
        + (", ".join(f"{k} {v}" for k, v in report["mismatches_by_kind"].items()) or "-"),
        "  by classification: "
        + (", ".join(f"{k} {v}" for k, v in report["classification"].items()) or "-"),
        "  top ops: "
        + (", ".join(f"{k} {v}" for k, v in list(report["mismatches_by_op"].items())[:12]) or "-"),
    ]
    for cr in report["crashes"]:
        what = "timeout" if cr["timeout"] else f"exit {cr['returncode']}"
        lines.append(f"  CRASH seed {cr['seed']} ({what}, during {cr['stage']})")
    for e in report["fuzzer_errors"]:
        lines.append(f"  FUZZER ERROR seed {e['seed']}: {e['detail']}")
    if report["reproducers"]:
        lines.append("reproducers (one per op / kind / classification):")
    for g in report["reproducers"]:
        tag = g["classification"] + (f" {g['entry']}" if g["entry"] else "")
        lines.append(
            f"  [{tag}] {g['op']} / {g['kind']}  x{g['count']}  seed {g['seed']}, "
            f"{len(g['program']['steps'])} step(s): {g['detail'][:150]}"
        )
        if full or g["classification"] == "unexplained":
            lines += ["      " + ln for ln in g["repro"].splitlines()]
    return "\n".join(lines)


def reclassify(*reports):
    """The reports of one or more campaigns (chunks of a long one) merged, their mismatches
    classified again against the current tables (the programs are not run again)."""
    records = []
    for rep in reports:
        for r in rep["mismatch_records"]:
            r = dict(r)
            r["repro"] = render(r["program"], r)
            records.append(r)
    first = reports[0]["config"]
    config = dict(
        first,
        n=sum(rep["config"]["n"] for rep in reports),
        seed=min(rep["config"]["seed"] for rep in reports),
        elapsed_s=round(sum(rep["config"]["elapsed_s"] for rep in reports), 1),
        merged=[[rep["config"]["seed"], rep["config"]["n"]] for rep in reports],
    )
    out = build_report(records, [], config)

    def total(key):
        c = Counter()
        for rep in reports:
            c.update(rep[key])
        return dict(c.most_common())

    out.update(
        programs=sum(rep["programs"] for rep in reports),
        status=total("status"),
        crashes=[c for rep in reports for c in rep["crashes"]],
        drift=total("drift"),
        fuzzer_errors=[e for rep in reports for e in rep["fuzzer_errors"]][:20],
        op_coverage=dict(sorted(total("op_coverage").items())),
    )
    return out


def write_report(report, out_dir):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    (out / "report.txt").write_text(summary(report) + "\n")
    return out / "report.json", out / "report.txt"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5000, help="number of programs")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--batch", type=int, default=250, help="programs per worker process")
    ap.add_argument("--ops", default=None, help="comma-separated op names to draw from")
    ap.add_argument("--out", default=str(HERE), help="directory of report.json/report.txt")
    ap.add_argument(
        "--show",
        type=int,
        default=None,
        metavar="SEED",
        help="run one program in this process and print it",
    )
    ap.add_argument(
        "--reclassify",
        default=None,
        metavar="REPORT_JSON[,...]",
        help="classify the mismatches of one or more campaigns' reports (chunks "
        "of a long campaign are merged) again against the current tables of "
        "known_deviations.py, and write the report in --out",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        return worker()
    if a.reclassify:
        report = reclassify(*(json.loads(Path(f).read_text()) for f in a.reclassify.split(",")))
        js, txt = write_report(report, a.out)
        print(summary(report))
        print(f"report: {js} and {txt}")
        return 0
    ops = a.ops.split(",") if a.ops else None
    if a.show is not None:
        ng, torch = _setup()
        rec = run_one(a.show, ng, torch, ops)
        from fuzz_gen import generate

        program, _ = generate(a.show, torch, ops)
        print(json.dumps(program, indent=1))
        print(render(program))
        print(json.dumps({k: v for k, v in rec.items() if k not in ("program", "repro")}))
        if rec.get("repro"):
            print("--- reduced reproducer ---")
            print(rec["repro"])
        return 0
    report = run_campaign(
        a.n, a.seed, a.jobs, a.batch, ops, progress=lambda s: print(s, flush=True)
    )
    js, txt = write_report(report, a.out)
    print(summary(report))
    print(f"report: {js} and {txt}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
