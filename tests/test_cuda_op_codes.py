"""NOTE [CUDA op codes] (``numbagrad/kernels/cuda/elementwise.py``): the CUDA kernels' op-code
tables against their declarations. Read from the source (no numba-cuda needed): the codes of
a table are 0..n-1, each name's code constant is its table entry, every name has exactly one
branch in its device function and no branch compares with a bare number, and the names are
the CPU backend's (``map``'s, the ufuncs', the fused gradient kernels', the special-function
codes)."""

import ast
import pathlib

import numpy as np
import pytest

from numbagrad.kernels.cpu import backend as cpu_backend
from numbagrad.kernels.cpu import special as cpu_special

CUDA = pathlib.Path(__file__).resolve().parent.parent / "numbagrad" / "kernels" / "cuda"
CPU_ELEMENTWISE = CUDA.parent / "cpu" / "elementwise.py"

# (module, table, the device function branching on it, its code argument, constant prefix)
FAMILIES = [
    ("elementwise.py", "UNARY", "_unary", "op", "_U_"),
    ("elementwise.py", "BINARY", "_binary", "op", "_B_"),
    ("elementwise.py", "UNARY_GRAD", "_unary_grad", "op", "_G_"),
    ("special.py", "BINARY", "_binary", "code", "_S_"),
    ("index.py", "REDUCE_AT", "reduce_at_kernel", "op", "_R_"),
    ("random.py", "SAMPLES", "sample_kernel", "op", ""),
]


def _tree(module):
    return ast.parse((CUDA / module).read_text())


def _table(tree, name):
    """The table ``name`` as a dict (the special one extends the CPU's BINARY_CODES)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            name
        ]:
            d = node.value
            assert isinstance(d, ast.Dict), f"{name} must be a dict display"
            out = {}
            for k, v in zip(d.keys, d.values, strict=True):
                if k is None:  # ``**_cpu.BINARY_CODES``
                    assert ast.unparse(v) == "_cpu.BINARY_CODES"
                    out.update(cpu_special.BINARY_CODES)
                else:
                    out[ast.literal_eval(k)] = ast.literal_eval(v)
            return out
    raise AssertionError(f"no table {name}")


def _constants(tree, table):
    """``{constant name: table key}`` for ``_X_NAME = TABLE["name"]``."""
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == table
        ):
            out[node.targets[0].id] = ast.literal_eval(node.value.slice)
    return out


def _branches(tree, fn, arg):
    """The right-hand sides of ``arg == ...`` in device function ``fn``."""
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn)
    return [
        c.comparators[0]
        for c in ast.walk(func)
        if isinstance(c, ast.Compare)
        and isinstance(c.left, ast.Name)
        and c.left.id == arg
        and isinstance(c.ops[0], ast.Eq)
    ]


@pytest.mark.parametrize(("module", "table", "fn", "arg", "prefix"), FAMILIES)
def test_codes_are_a_range(module, table, fn, arg, prefix):
    codes = _table(_tree(module), table)
    assert sorted(codes.values()) == list(range(len(codes)))


@pytest.mark.parametrize(("module", "table", "fn", "arg", "prefix"), FAMILIES)
def test_every_name_has_one_branch_by_name(module, table, fn, arg, prefix):
    tree = _tree(module)
    codes = _table(tree, table)
    consts = _constants(tree, table)
    for const, key in consts.items():
        assert const == prefix + key.upper(), (const, key)
    branches = _branches(tree, fn, arg)
    bare = [ast.unparse(b) for b in branches if not isinstance(b, ast.Name)]
    assert not bare, f"{fn} compares {arg} with {bare}: use the table's named constants"
    named = [consts[b.id] for b in branches]
    assert sorted(named) == sorted(codes), (
        f"{fn}: names without a branch {sorted(set(codes) - set(named))}, "
        f"branched twice {sorted({n for n in named if named.count(n) > 1})}"
    )


def test_the_names_are_the_cpu_backends():
    tree = _tree("elementwise.py")
    assert set(_table(tree, "UNARY")) <= set(cpu_backend._MAPS)
    for name in _table(tree, "BINARY"):  # NumPy's two-input ufuncs (``binary``'s names)
        fn = cpu_backend._UFUNCS.get(name, getattr(np, name, None))
        assert isinstance(fn, np.ufunc) and fn.nin == 2, name
    cpu_tree = ast.parse(CPU_ELEMENTWISE.read_text())
    cpu_kernels = {n.name for n in cpu_tree.body if isinstance(n, ast.FunctionDef)}
    assert set(_table(tree, "UNARY_GRAD")) <= cpu_kernels
    special = _table(_tree("special.py"), "BINARY")
    assert {k: special[k] for k in cpu_special.BINARY_CODES} == cpu_special.BINARY_CODES


def test_the_check_finds_a_bare_code():
    tree = ast.parse("def _unary(op, x):\n    if op == 3:\n        return x\n")
    assert [ast.unparse(b) for b in _branches(tree, "_unary", "op")] == ["3"]


def _bare_code_compares(tree):
    """``(line, source)`` of each comparison of ``op``/``code`` with a number literal."""
    return [
        (c.lineno, ast.unparse(c))
        for c in ast.walk(tree)
        if isinstance(c, ast.Compare)
        and isinstance(c.left, ast.Name)
        and c.left.id in ("op", "code")
        and any(isinstance(x, ast.Constant) and isinstance(x.value, int) for x in c.comparators)
    ]


def test_no_kernel_module_compares_an_op_code_with_a_number():
    # the families with a shared branch (reduce.py, scan.py: ``op == _OP_AMAX or op ==
    # _OP_ANY``) are not in FAMILIES, but they too name their codes
    bad = [
        f"{path.name}:{line}: {src}"
        for path in sorted(CUDA.glob("*.py"))
        for line, src in _bare_code_compares(ast.parse(path.read_text()))
    ]
    assert not bad, "op codes compared by number (use the table's names):\n" + "\n".join(bad)
    assert _bare_code_compares(ast.parse("if op == 1 or code != 2: pass")) == [
        (1, "op == 1"),
        (1, "code != 2"),
    ]
