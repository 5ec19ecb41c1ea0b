"""The import picture (NOTE [Layers] in ``numbagrad/_core/__init__.py``): every import points
down or sideways, there are no import cycles (counting the imports inside functions), the
imports inside functions are the declared ones, and the only calls up go through the
extension points (NOTE [Extension points]): no module assigns another module's attributes."""

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


# The cycle left, inside the CUDA engine (issue 26, "backends as a contract", removes it):
# the driver installs the memory pool when it first loads numba.cuda.
KNOWN_CYCLES = {
    frozenset(
        {
            "numbagrad.kernels.cuda._driver",
            "numbagrad.kernels.cuda.launch",
            "numbagrad.kernels.cuda.memory",
        }
    ),
}

# The one loader of the backends (``kernels.backend``: the CPU's, and the optional CUDA
# engine's, NOTE [Optional engines] in ``kernels/__init__.py``): its imports are the declared
# late edges, left out of the cycle check (what the loader loads may use the loader).
LOADER_IMPORTS = {
    ("numbagrad.kernels", "numbagrad.kernels.cpu.backend"),
    ("numbagrad.kernels", "numbagrad.kernels.cuda.backend"),
}

# The imports of numbagrad modules allowed inside functions, as (importer, imported): the
# loader above, the workload tool that drives the public API, and the CUDA engine's own
# cycle above. Any other import goes at module level (an import inside a function to dodge
# a cycle is a cycle).
FUNCTION_LEVEL_IMPORTS = LOADER_IMPORTS | {
    ("numbagrad._observe", "numbagrad"),
    ("numbagrad.kernels.cuda._driver", "numbagrad.kernels.cuda.memory"),
}


def _import_graph(with_functions):
    graph = {}
    for name, path in MODULES.items():
        found = list(_imports(name, path, True))
        if with_functions:
            found += [
                (t, line)
                for t, line in _imports(name, path, False)
                if (name, t) not in LOADER_IMPORTS
            ]
        graph[name] = {
            t
            for t, _ in found
            if t in MODULES
            and not _late_bound_namespace(name, t)
            and not (name.startswith(t + "."))  # a package's own __init__
        }
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    cycles = _cycles(_import_graph(with_functions=False))
    assert not cycles, "import cycles at module level: " + str([sorted(c) for c in cycles])


def test_no_import_cycles_counting_function_level_imports():
    cycles = [c for c in _cycles(_import_graph(with_functions=True)) if c not in KNOWN_CYCLES]
    assert not cycles, "import cycles: " + str([sorted(c) for c in cycles])


def test_function_level_imports_are_the_declared_ones():
    bad = sorted(
        f"{name}:{line} imports {target}"
        for name, path in MODULES.items()
        for target, line in _imports(name, path, False)
        if (name, target) not in FUNCTION_LEVEL_IMPORTS
    )
    assert not bad, "imports inside functions (move them to module level):\n" + "\n".join(bad)


def test_the_declared_exceptions_are_still_needed():
    # an entry whose import or cycle is gone must leave the lists (they only shrink)
    used = {
        (name, target)
        for name, path in MODULES.items()
        for target, _ in _imports(name, path, False)
    }
    assert FUNCTION_LEVEL_IMPORTS <= used, FUNCTION_LEVEL_IMPORTS - used
    cycles = set(_cycles(_import_graph(with_functions=True)))
    assert cycles >= KNOWN_CYCLES, KNOWN_CYCLES - cycles


def test_no_hidden_imports():
    # ``__import__("numbagrad...")`` or ``importlib.import_module`` would dodge the checks
    # above; the kernel registry's lazy proxies (``kernels.lazy``) are the one user
    bad = [
        name
        for name, path in MODULES.items()
        if ("__import__(" in path.read_text() or "import_module(" in path.read_text())
        and name != "numbagrad.kernels"
    ]
    assert not bad, f"hidden imports in {bad}"


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [frozenset({"a", "b", "c"})]


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


# Assignments to another module's attributes (or to a class imported from one) allowed, as
# (module, imported name): the Tensor method table (``ops._methods`` and the random methods
# of ``_creation``, NOTE [Tensor attributes]) and the profiler, which wraps the op and engine
# entry points only while a profile is running (NOTE [Profiler]). Every other call up goes
# through ``numbagrad._core.extension`` (NOTE [Extension points]).
CROSS_MODULE_ASSIGNMENTS = {
    ("numbagrad.ops._methods", "Tensor"),
    ("numbagrad._creation", "Tensor"),
    ("numbagrad.autograd.profiler", "Primitive"),
    ("numbagrad.autograd.profiler", "_FunctionApply"),
    ("numbagrad.autograd.profiler", "engine"),
}


def _cross_module_assignments(source):
    """``(line, imported name, target)`` for each assignment (``x.a = ...``, ``x[k] = ...``,
    ``del x.a``, ``setattr(x, ...)``) whose target is reached from a name imported from a
    numbagrad module."""
    tree = ast.parse(source)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {
                a.asname or a.name.split(".")[0]
                for a in node.names
                if a.name.startswith("numbagrad")
            }
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("numbagrad"):
            imported |= {a.asname or a.name for a in node.names}

    def root(n):
        while isinstance(n, (ast.Attribute, ast.Subscript)):
            n = n.value
        return n.id if isinstance(n, ast.Name) else None

    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and node.args
        ):
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        for t in targets:
            for tt in t.elts if isinstance(t, ast.Tuple) else [t]:
                if isinstance(tt, (ast.Attribute, ast.Subscript)) and root(tt) in imported:
                    yield node.lineno, root(tt), ast.unparse(tt)


def test_no_module_assigns_another_modules_attributes():
    bad = [
        f"{name}:{line} assigns {target}"
        for name, path in MODULES.items()
        for line, owner, target in _cross_module_assignments(path.read_text())
        if (name, owner) not in CROSS_MODULE_ASSIGNMENTS
    ]
    assert not bad, "calls up go through numbagrad._core.extension:\n" + "\n".join(bad)


def test_the_assignment_check_finds_assignments():
    src = (
        "from numbagrad import _creation\nfrom numbagrad._tensor import Tensor as T\n"
        "import numbagrad.ops\n_creation.HOOK = 1\nsetattr(T, 'f', 2)\n"
        "numbagrad.ops.x[0] = 3\nlocal = object()\nlocal.y = 4\n"
    )
    found = sorted((line, owner) for line, owner, _ in _cross_module_assignments(src))
    assert found == [(4, "_creation"), (5, "T"), (6, "numbagrad")]


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


# NOTE [Backend protocol] (``numbagrad/kernels/interface.py``): the primitives reach a device
# only through its backend object, so a third backend needs no edit to ``ops/``. These are
# the spellings of a device branch the check below finds in ``numbagrad/ops/`` and the
# primitives of ``numbagrad/nn/_primitives.py``.
DEVICE_NAMES = ("cpu", "cuda")  # the backends' (``meta`` is a shape-only device, no backend)
DEVICE_PACKAGES = ("numbagrad.kernels.cpu", "numbagrad.kernels.cuda")

# (path under numbagrad/, the offending line, stripped): reviewed exceptions, which only
# shrink (``test_the_device_branch_exceptions_are_still_needed``)
DEVICE_BRANCH_EXCEPTIONS = {
    # ``Tensor.to``: the user's device argument decides whether a copy is recorded (the one
    # op whose meaning is a device; the copy itself is ``copy_array``)
    ("ops/inplace.py", 'and (dev.type == "cuda" or input.is_cuda)'),
    # ops/shape.py is being split by another change; its three are left to it
    ("ops/shape.py", "from numbagrad.kernels.cpu.backend import broadcast_view"),
    ("ops/shape.py", 'x = backend("cpu").sum(x, axes, True, None)'),
    (
        "ops/shape.py",
        "return (be if be.name == device else backend(device)).zeros(shape, dtype)  # no operand",
    ),
}


def _is_backend_name(node):
    # ``be.name``, ``ctx.be.name``, ``self.be.name``
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "name"
        and (
            (isinstance(node.value, ast.Name) and node.value.id == "be")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "be")
        )
    )


def _is_device_literal(node):
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.partition(":")[0] in DEVICE_NAMES
    )


def _device_branches(source):
    """``(lineno, why)`` for each device branch in ``source`` (NOTE [Backend protocol])."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_device_literal(s) for s in sides):
                out.append((node.lineno, "compares with a device name"))
            elif any(_is_backend_name(s) for s in sides):
                out.append((node.lineno, "compares a backend's name"))
        elif isinstance(node, ast.Attribute) and node.attr == "linalg":
            if isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy"):
                out.append((node.lineno, "calls np.linalg (the backend's linalg family)"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [f"{node.module}.{a.name}" for a in node.names]
            )
            for m in mods:
                if m.startswith(DEVICE_PACKAGES) or m == "numbagrad.kernels.module":
                    out.append((node.lineno, f"imports {m} (a device's kernels)"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "backend"
            and any(_is_device_literal(a) for a in node.args)
        ):
            out.append((node.lineno, "asks for a device's backend by name"))
    return sorted(out)


def _primitive_sources():
    paths = [*sorted((ROOT / "ops").rglob("*.py")), ROOT / "nn" / "_primitives.py"]
    for path in paths:
        yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_ops_have_no_device_branches():
    bad = []
    for rel, source in _primitive_sources():
        lines = source.splitlines()
        for lineno, why in _device_branches(source):
            line = lines[lineno - 1].strip()
            if (rel, line) not in DEVICE_BRANCH_EXCEPTIONS:
                bad.append(f"{rel}:{lineno} {why}: {line}")
    assert not bad, (
        "device branches in the primitives (move them behind a backend method, NOTE "
        "[Backend protocol] in numbagrad/kernels/interface.py):\n" + "\n".join(bad)
    )


def test_the_device_branch_exceptions_are_still_needed():
    found = set()
    for rel, source in _primitive_sources():
        lines = source.splitlines()
        found |= {(rel, lines[n - 1].strip()) for n, _ in _device_branches(source)}
    assert DEVICE_BRANCH_EXCEPTIONS <= found, DEVICE_BRANCH_EXCEPTIONS - found


def test_the_device_branch_check_finds_branches():
    source = (
        "import numpy as np\n"
        "from numbagrad.kernels.cpu import special\n"
        "from numbagrad.kernels import module\n"
        "def impl(be, a, ctx):\n"
        '    if be.name != "cpu":\n'
        "        return np.linalg.inv(a)\n"
        '    if ctx.be.name == other or a.device.type == "cuda:0":\n'
        '        return backend("cuda")\n'
        "    return be.inv(a)\n"
    )
    assert [n for n, _ in _device_branches(source)] == [2, 3, 5, 6, 7, 7, 8]


def _loader_edges(path):
    """The modules a file reaches through the backend loader (NOTE [Optional engines]):
    ``backend("cuda")`` loads ``kernels.cuda.backend``, ``module("index", "cuda")`` the
    kernel module ``kernels.cuda.index``: imports by another name, so edges here."""
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        args = [a.value for a in node.args if isinstance(a, ast.Constant)]
        if fn == "backend" and args and args[0] in DEVICE_NAMES:
            yield f"numbagrad.kernels.{args[0]}.backend"
        elif fn == "module" and len(args) == 2 and args[1] in DEVICE_NAMES:
            yield f"numbagrad.kernels.{args[1]}.{args[0]}"


def _graph_with_loader_edges():
    graph = _import_graph(with_functions=True)
    for name, path in MODULES.items():
        graph[name] |= {t for t in _loader_edges(path) if t in MODULES and t != name}
    return graph


def test_no_import_cycles_counting_the_loader():
    # issue 26: ``kernels/cuda/array.py`` reached the backend through the loader and the
    # backend imports it; counting the loader's calls as imports, no cycle is left
    cycles = [c for c in _cycles(_graph_with_loader_edges()) if c not in KNOWN_CYCLES]
    assert not cycles, "import cycles through the backend loader: " + str(
        [sorted(c) for c in cycles]
    )


def test_the_cuda_array_reaches_no_backend():
    # NOTE [CUDA array protocol]: ``CudaArray`` is a plain strided view; what needs a kernel
    # is the backend's (its ``CudaNDArray``), which imports the view, not the other way
    graph = _graph_with_loader_edges()
    seen, todo = set(), ["numbagrad.kernels.cuda.array"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += sorted(graph.get(m, ()))
    backends = sorted(m for m in seen if m.rpartition(".")[2].startswith("backend"))
    assert not backends, f"kernels/cuda/array.py reaches {backends}"
    assert "numbagrad.kernels.cuda.array" in graph["numbagrad.kernels.cuda.backend"]
    # the loader-edge finder sees what it must (a check that can fail)
    edges = set(_loader_edges(ROOT / "_device.py"))
    assert "numbagrad.kernels.cuda.backend" in edges, edges


# ``numbagrad/_creation.py``'s device branches (issue 26, part 3). The factories reach a
# device through ``_device.on_device``/``empty_on`` (the backends' ``from_host``/
# ``empty_on``); what is left are the CUDA random draws (Philox generators, ``randperm``,
# ``normal``, ``bernoulli``, ``poisson``, ``multinomial`` on the device) and two imports of
# CPU helpers. Each line below is one to move, and the list only shrinks (a new branch
# fails ``test_creation_adds_no_device_branches``).
CREATION_DEVICE_BRANCHES = {
    'cuda = backend("cuda")  # loaded on first use (NOTE [Optional engines])',
    "from numbagrad.kernels import backend, backend_of, module",
    "from numbagrad.kernels.cpu.backend import quiet_numpy",
    'if self.device.type == "cuda":  # no mt19937 state: its draws run on the device',
}
CREATION_CUDA_MENTIONS = 148  # ``cuda`` in any case, comments included (180 before)


def test_creation_adds_no_device_branches():
    source = (ROOT / "_creation.py").read_text()
    lines = source.splitlines()
    found = {lines[n - 1].strip(): why for n, why in _device_branches(source)}
    new = sorted(
        f"{why}: {line}" for line, why in found.items() if line not in CREATION_DEVICE_BRANCHES
    )
    assert not new, (
        "new device branches in numbagrad/_creation.py (NOTE [Backend protocol]):\n"
        + "\n".join(new)
    )
    gone = CREATION_DEVICE_BRANCHES - set(found)
    assert not gone, f"moved behind a backend: drop from CREATION_DEVICE_BRANCHES: {gone}"
    assert source.lower().count("cuda") <= CREATION_CUDA_MENTIONS  # (only goes down)
