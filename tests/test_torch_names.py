"""PyTorch's public names per namespace against numbagrad's (issue 27), from the record in
``tests/data/missing_names.json`` (``tests/_torch_names.py`` makes it): a name numbagrad has
must stay, and a name recorded as missing must still be missing, so that the record stays
true. Both run without torch; with torch, the record must list exactly torch's names."""

import json
import pathlib
import subprocess
import sys

import pytest
from _torch_names import NAMESPACES, RECORD, has, load, resolve

REGENERATE = f"update {RECORD.name} with: python tests/_torch_names.py"


def _entries():
    return load()["namespaces"].items()


def test_record_covers_the_namespaces():
    assert list(load()["namespaces"]) == list(NAMESPACES)
    for ns, entry in _entries():
        assert entry["numbagrad"] == NAMESPACES[ns]
        assert not set(entry["have"]) & set(entry["missing"]), ns


@pytest.mark.parametrize("ns", list(NAMESPACES))
def test_names_numbagrad_has_stay(ns):
    entry = load()["namespaces"][ns]
    mine = resolve(entry["numbagrad"])
    gone = [n for n in entry["have"] if not has(mine, n)]
    assert not gone, (
        f"{entry['numbagrad']} lost PyTorch names it had: {gone} (restore them; if the "
        f"removal is meant, {REGENERATE})"
    )


@pytest.mark.parametrize("ns", list(NAMESPACES))
def test_names_recorded_missing_are_missing(ns):
    entry = load()["namespaces"][ns]
    mine = resolve(entry["numbagrad"])
    now = [n for n in entry["missing"] if has(mine, n)]
    assert not now, f"{entry['numbagrad']} now has {now}, recorded as missing: {REGENERATE}"


def test_record_lists_torchs_names():
    torch = pytest.importorskip("torch")
    record = load()
    if torch.__version__ != record["torch_version"]:
        pytest.skip(f"recorded for torch {record['torch_version']}, not {torch.__version__}")
    # in a fresh process: what ``dir(torch)`` lists grows as other tests import torch's
    # lazily loaded submodules (torch.onnx), so in-process the answer depends on test order
    here = pathlib.Path(__file__).resolve().parent
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, _torch_names; print(json.dumps(_torch_names.compute()))",
        ],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    fresh = json.loads(out.stdout.strip().splitlines()[-1])["namespaces"]
    for ns, entry in record["namespaces"].items():
        recorded = set(entry["have"]) | set(entry["missing"])
        current = set(fresh[ns]["have"]) | set(fresh[ns]["missing"])
        assert recorded == current, (
            f"{ns}: torch's public names differ from the record (added "
            f"{sorted(current - recorded)}, gone {sorted(recorded - current)}): {REGENERATE}"
        )
