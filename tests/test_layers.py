"""The import picture (NOTE [Layers] in ``numbagrad/_core/__init__.py``): every module-level
import points down or sideways, there are no import cycles, and the only calls up are the
two documented late-bound ones."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "numbagrad"

# lowest first; a module belongs to the longest prefix listed
LAYERS = [
    (
        "numbagrad._version",
        "numbagrad._hooks",
        "numbagrad._core.extension",
        "numbagrad._core.grad_mode",
        "numbagrad._dtype",
        "numbagrad._device",
        "numbagrad.kernels",
    ),
    ("numbagrad._tensor",),
    ("numbagrad._creation", "numbagrad.testing"),
    ("numbagrad._core",),
    ("numbagrad.ops",),
    ("numbagrad._transforms",),
    ("numbagrad.autograd", "numbagrad.func"),
    ("numbagrad",),
]


def _layer(module):
    best, rank = "", None
    for r, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > len(best):
                best, rank = p, r
    return rank


def _modules():
    out = {}
    for path in ROOT.rglob("*.py"):
        if path.name == "conftest.py":  # pytest's doctest fixtures, not part of the library
            continue
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name, path, top_level):
    """``(target, lineno)`` for each numbagrad import at module level (or inside functions
    when ``top_level`` is False). ``from pkg import sub`` names the submodule."""
    tree = ast.parse(path.read_text())
    nodes = (
        tree.body
        if top_level
        else [
            n
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f)
        ]
    )
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("numbagrad"):
                    yield a.name, node.lineno
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("numbagrad")
            and node.level == 0
        ):
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                yield (sub if sub in MODULES else node.module), node.lineno


def _late_bound_namespace(importer, target):
    # ``from numbagrad import ops as F`` inside ops/: the package object as a namespace whose
    # names are looked up when a rule runs (not at import), NOTE [Primitive declaration]
    return target == "numbagrad.ops" and importer.startswith("numbagrad.ops.")


def test_module_level_imports_point_down():
    bad = []
    for name, path in MODULES.items():
        for target, line in _imports(name, path, True):
            if _late_bound_namespace(name, target):
                continue
            if _layer(target) > _layer(name):
                bad.append(f"{name}:{line} imports {target}")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_cycles():
    graph = {
        name: {
            t
            for t, _ in _imports(name, path, True)
            if t in MODULES
            and not _late_bound_namespace(name, t)
            and not (name.startswith(t + "."))
        }  # a package's own __init__
        for name, path in MODULES.items()
    }
    state = {}

    def visit(n, stack):
        state[n] = "active"
        for m in graph[n]:
            if state.get(m) == "active":
                pytest.fail("import cycle: " + " -> ".join([*stack[stack.index(m) :], m]))
            if m not in state:
                visit(m, [*stack, m])
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])


def test_function_level_imports_do_not_point_up():
    bad = []
    for name, path in MODULES.items():
        for target, line in _imports(name, path, False):
            if _layer(target) > _layer(name):
                bad.append(f"{name}:{line} imports {target}")
    assert not bad, "upward imports inside functions:\n" + "\n".join(bad)


def test_the_extension_points_are_filled_in():
    # NOTE [Extension points]: every declared upward call is registered once numbagrad is
    # imported, by the module the table names
    import numbagrad
    from numbagrad import _creation, _tensor
    from numbagrad._core import extension
    from numbagrad._transforms import batching, tracer

    hooks = extension.HOOKS
    missing = [n for n in extension.Hooks.__slots__ if getattr(hooks, n) is None]
    assert not missing, f"extension points left unfilled: {missing}"
    assert hooks.refresh_view is numbagrad.ops.inplace.refresh_view
    assert hooks.backward is numbagrad.autograd.backward
    assert hooks.birth is tracer.mark_born
    assert hooks.random_op is batching._random_op
    assert _tensor._F is extension.OPS and extension.OPS.exp is numbagrad.exp
    assert extension.OPS.tensor is _creation.tensor
    with pytest.raises(TypeError, match="not a declared extension point"):
        extension.register(no_such_point=print)
    with pytest.raises(TypeError, match="takes a callable"):
        extension.register(birth=1)


def test_every_module_declares_all():
    missing = [n for n, p in MODULES.items() if "__all__" not in p.read_text()]
    assert not missing, f"modules without __all__: {missing}"


def test_in_place_names_mean_in_place():
    import numbagrad

    for name in dir(numbagrad.ops):
        if name.endswith("_") and not name.startswith("_"):
            pytest.fail(f"numbagrad.ops.{name} is not an in-place op")
    x = numbagrad.tensor([1.0, 2.0])
    assert x.add_(1.0) is x and x.tolist() == [2.0, 3.0]


def test_import_loads_no_jit_compiler_and_no_optional_engine():
    # NOTE [Lazy kernels]: numba (a quarter of a second) loads on the first kernel call;
    # mpi4py, dask, matplotlib and numba.cuda only where their features are used
    import subprocess
    import sys

    code = (
        "import sys, numbagrad, numbagrad.nn, numbagrad.optim, numbagrad.linalg, "
        "numbagrad.special; "
        "print(sorted(m for m in ('numba', 'numba.cuda', 'mpi4py', 'dask', 'matplotlib') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()
    assert out == "[]", f"import numbagrad loaded {out}"
