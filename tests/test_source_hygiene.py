"""Checks on numbagrad's source that the linters do not make."""

import ast
import collections
import pathlib

import numbagrad

_ROOT = pathlib.Path(numbagrad.__file__).parent


def test_no_module_defines_a_top_level_name_twice():
    # ruff's F811 only flags a redefinition of an unused name: a second ``def f`` in a
    # module silently replaces the first for every caller, used or not
    twice = []
    for path in sorted(_ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = collections.Counter(
            node.name
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )
        twice += [f"{path.relative_to(_ROOT)}: {n}" for n, c in names.items() if c > 1]
    assert not twice, f"defined twice at module level: {twice}"
