"""The differential fuzz suite as a test: a bounded campaign against PyTorch 2.13.

Runs ``NUMBAGRAD_FUZZ_N`` programs (default 2000; seeds from ``NUMBAGRAD_FUZZ_SEED``,
fixed) in worker subprocesses and fails on a crash (a worker that died or hung) and on a
mismatch that neither ``KNOWN_DEVIATIONS`` nor ``OPEN_BUGS`` of ``known_deviations.py``
covers; the failure message carries a minimal reproducer script. Each open bug is
replayed from its minimal program and reported as an expected failure, or as XPASS once
fixed (then delete its entry). Skipped when torch is not importable. A long campaign:
``make fuzz N=40000`` (docs/guide/deviations.rst).
"""

import json
import os
import random
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fuzz_campaign  # noqa: E402
import fuzz_gen  # noqa: E402
import fuzz_program  # noqa: E402
import known_deviations  # noqa: E402
from _opdb import ops_by_name  # noqa: E402
from known_deviations import FIXED_BUGS, KNOWN_DEVIATIONS, OPEN_BUGS  # noqa: E402

import numbagrad  # noqa: E402

N = int(os.environ.get("NUMBAGRAD_FUZZ_N", "2000"))
SEED = int(os.environ.get("NUMBAGRAD_FUZZ_SEED", "1000000"))
JOBS = min(2, os.cpu_count() or 1)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    rep = fuzz_campaign.run_campaign(N, SEED, jobs=JOBS, batch=-(-N // (2 * JOBS)))
    js, _ = fuzz_campaign.write_report(rep, tmp_path_factory.mktemp("fuzz"))
    print(f"\n{fuzz_campaign.summary(rep)}\nreport: {js}")
    return rep


def test_no_crashes(report):
    crashes = report["crashes"]
    assert not crashes, "workers died or hung:\n" + "\n".join(
        f"seed {c['seed']}: exit {c['returncode']} timeout={c['timeout']} during "
        f"{c['stage']}\n{c['repro']}\n{c['stderr_tail'][-800:]}"
        for c in crashes
    )


def test_fuzzer_runs_clean(report):
    assert report["programs"] == N
    errors = report["fuzzer_errors"]
    assert not errors, "\n".join(f"seed {e['seed']}: {e['traceback']}" for e in errors)


def test_no_unexplained_mismatches(report):
    bad = [g for g in report["reproducers"] if g["classification"] == "unexplained"]
    assert not bad, (
        f"{len(bad)} kinds of mismatch with PyTorch that known_deviations.py does not list "
        "(fix numbagrad, or add an OPEN_BUGS / KNOWN_DEVIATIONS entry):\n"
        + "\n\n".join(
            f"{g['op']} / {g['kind']} x{g['count']} (seed {g['seed']}, features "
            f"{g['features']}): {g['detail']}\n# run with `import torch` and with "
            f"`import numbagrad as torch`:\n{g['repro']}"
            for g in bad
        )
    )


def _bug_param(bug):
    reason = f"open bug {bug.id}: {bug.note}"
    return pytest.param(bug, id=bug.id, marks=pytest.mark.xfail(reason=reason, strict=False))


@pytest.mark.parametrize("bug", [_bug_param(b) for b in OPEN_BUGS])
def test_open_bug(bug):
    res = fuzz_program.check(bug.program, numbagrad, torch)
    if res["status"] == "mismatch":
        _, res = fuzz_program.reduce_mismatch(bug.program, res, numbagrad, torch)
    still = res["status"] == "mismatch" and known_deviations.matches(bug, res)
    assert not still, f"{bug.id}: {res['detail']}\n{fuzz_program.render(bug.program, res)}"


@pytest.mark.parametrize("bug", [pytest.param(b, id=b.id) for b in FIXED_BUGS])
def test_fixed_bug_stays_fixed(bug):
    """Regression tests: the minimal programs of fixed open bugs no longer show their bug
    (a mismatch they still show must be another listed one, never the bug's own)."""
    res = fuzz_program.check(bug.program, numbagrad, torch)
    if res["status"] == "mismatch":
        assert not known_deviations.matches(bug, res), (
            f"{bug.id} is back: {res['detail']}\n{fuzz_program.render(bug.program, res)}"
        )
        assert known_deviations.classify(res)[0] != "unexplained", res["detail"]


# ---------------------------------------------------------------------------------------------
# The fuzzer itself
# ---------------------------------------------------------------------------------------------


def test_schemas_cover_the_op_database():
    assert set(fuzz_gen.SCHEMAS) == set(ops_by_name)


@pytest.mark.parametrize("table", ["KNOWN_DEVIATIONS", "OPEN_BUGS", "FIXED_BUGS"])
def test_deviation_tables_are_precise(table):
    entries = getattr(known_deviations, table)
    assert len({e.id for e in entries}) == len(entries), "duplicate ids"
    for e in entries:
        ops = (e.op,) if isinstance(e.op, str) else e.op
        assert all(op in ops_by_name for op in ops), e.id
        assert e.kind in fuzz_program.KINDS, e.id
        for cond in e.when:
            name = cond.lstrip("!")
            assert name in fuzz_program.FEATURES or name.startswith("variant:"), (e.id, cond)
        if table == "KNOWN_DEVIATIONS":
            assert e.reason, e.id
        else:
            assert e.note and e.program and e.program["steps"], e.id
            assert any(st["op"] in ops for st in e.program["steps"]), e.id
            json.dumps(e.program)


def test_known_deviations_do_not_shadow_open_bugs():
    for bug in OPEN_BUGS:
        for d in KNOWN_DEVIATIONS:
            ops = {d.op} if isinstance(d.op, str) else set(d.op)
            bops = {bug.op} if isinstance(bug.op, str) else set(bug.op)
            assert not (ops & bops and d.kind == bug.kind and set(d.when) <= set(bug.when)), (
                d.id,
                bug.id,
            )


def test_generation_is_deterministic():
    for seed in (3, 17, 4242):
        a, _ = fuzz_gen.generate(seed, torch)
        b, _ = fuzz_gen.generate(seed, torch)
        assert json.dumps(a) == json.dumps(b)


def test_programs_round_trip_through_json():
    rng = random.Random(0)
    for _ in range(20):
        p, t_run = fuzz_gen.generate(rng.randrange(10**6), torch)
        q = json.loads(json.dumps(p))
        r = fuzz_program.execute(torch, q)
        assert len(r.steps) == len(t_run.steps)


def test_reproducer_scripts_run_under_both_libraries():
    ran = 0
    for seed in range(40):
        p, _ = fuzz_gen.generate(seed, torch)
        body = fuzz_program.render(p)
        outs = []
        for m in (torch, numbagrad):
            env = {"torch": m}
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")  # NaN and inf are the point
                    exec(body, env)
            except Exception:
                outs.append("raised")
                continue
            outs.append("ok")
        ran += outs == ["ok", "ok"]
    assert ran >= 20


def test_a_planted_bug_is_found_and_reduced(monkeypatch):
    def wrong_exp(x):
        return x.sin()

    monkeypatch.setattr(numbagrad, "exp", wrong_exp)
    program = {
        "seed": 5,
        "grad_mode": "grad",
        "inputs": [
            {
                "name": "x0",
                "dtype": "float64",
                "shape": [3],
                "grad": True,
                "view": ["step", 0],
                "values": {"kind": "normal", "seed": 1},
            }
        ],
        "steps": [
            {"op": "neg", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
            {"op": "exp", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
            {"op": "sum", "variant": None, "args": [{"ref": "s1"}], "kwargs": {}},
        ],
    }
    res = fuzz_program.check(program, numbagrad, torch)
    assert (res["status"], res["stage"], res["kind"], res["op"]) == (
        "mismatch",
        "forward",
        "value",
        "exp",
    )
    small, sres = fuzz_program.reduce_mismatch(program, res, numbagrad, torch)
    assert [s["op"] for s in small["steps"]] == ["exp"] and sres["kind"] == "value"
    x = np.array(small["inputs"][0]["values"]["data"])
    np.testing.assert_allclose(x, -fuzz_program.input_array(program["inputs"][0]))


def test_a_crashing_program_is_reported_with_its_seed():
    env = dict(os.environ, NUMBAGRAD_FUZZ_CRASH_SEED="11")
    records, crashes = fuzz_campaign.run_batch(10, 13, env=env)
    assert [c["seed"] for c in crashes] == [11]
    assert crashes[0]["signal"] and crashes[0]["program"]["seed"] == 11
    assert sorted(r["seed"] for r in records) == [10, 12]


@pytest.mark.skipif(
    os.environ.get("NUMBAGRAD_BOUNDSCHECK") != "1",
    reason="only under NUMBAGRAD_BOUNDSCHECK=1 (the CI step)",
)
def test_bounds_checks_are_compiled_in():
    from numbagrad.kernels.cpu import _jit
    from numbagrad.kernels.cpu import elementwise as K

    assert _jit.BOUNDSCHECK
    with pytest.raises(IndexError):
        K.tanh_backward(np.ones(3), np.ones(5), np.empty(5))  # g shorter than y
