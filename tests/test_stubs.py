"""Type stubs (NOTE [Type stubs] in numbagrad/_stubgen.py): generated from the live objects,
checked in, and good enough for mypy to type a user's script."""

import os
import subprocess
import sys
import textwrap

import pytest

import numbagrad
from numbagrad import _stubgen


def test_checked_in_stubs_match_the_live_api():
    for path, text in _stubgen.render().items():
        with open(path, encoding="utf-8") as f:
            assert f.read() == text, (
                f"{os.path.basename(path)} is stale: run `python -m numbagrad._stubgen`"
            )


def test_stubs_name_every_public_name_and_attached_method():
    module_stub, methods_stub = _stubgen.render().values()
    for name in numbagrad.__all__:
        assert (
            f"def {name}(" in module_stub
            or f" as {name}\n" in module_stub
            or f"\n{name}: " in module_stub
        ), name
    for name in ("exp", "sum", "backward", "__add__", "__matmul__", "T", "mT", "double"):
        assert f"def {name}(" in methods_stub or name == "backward", name
    # the registry of public ops (NOTE [Public ops]): each method and in-place variant it
    # declares is typed
    for name, e in numbagrad.ops.EXPORTS.items():
        if e.method:
            assert f"def {name}(" in methods_stub, name
        if e.inplace:
            assert f"def {name}_(" in methods_stub, name + "_"
    assert os.path.exists(os.path.join(os.path.dirname(numbagrad.__file__), "py.typed"))


def test_mypy_types_a_user_script(tmp_path):
    pytest.importorskip("mypy")
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent("""
        import numbagrad as torch

        x = torch.randn(3, requires_grad=True)
        y = torch.exp(x) * 2 + x.tanh().sum()
        y.sum().backward()
        w = torch.zeros(2, 3, dtype=torch.float64)
        flag: bool = torch.is_grad_enabled()
        with torch.no_grad():
            z = w @ w.T
        reveal_type(y)
        reveal_type(z.mean(0))
        reveal_type(torch.float32)
    """)
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / ".mypy"),
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Success: no issues found" in out.stdout, out.stdout + out.stderr
    assert out.stdout.count('Revealed type is "numbagrad._tensor.Tensor"') == 2
    assert 'Revealed type is "numbagrad._dtype.dtype"' in out.stdout
