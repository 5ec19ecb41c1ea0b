"""Source text for a planned graph, its cache file, and the callable it becomes.

NOTE [Compiled code cache]
The loop nests of a graph (NOTE [Lowering]) are written as one Python module,
``<cache dir>/ng_<hash>.py``, named by the hash of its own source, with
``@njit(cache=True)`` kernels: Numba then keeps their machine code next to it, so another
process that traces the same program loads it instead of compiling (the first call of a
warm process costs the trace and the cache lookup). The cache directory is
``$NUMBAGRAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/numbagrad/compile``, else
``~/.cache/numbagrad/compile``. The glue that calls the kernels and the array calls is
generated as text too and run with ``exec`` (it is cheap to make and holds live objects:
the primitives and their params).

NOTE [User code in compiled calls]
Three kinds of step run user code: a custom op's kernel, an opaque custom Function's
forward and its backward. Their outputs' shapes and dtypes are whatever that code returns,
while the fused kernels after them read the traced shapes with no bounds checks; so the
glue checks each such array against the traced one (``_check_out``) and raises a
RuntimeError naming the op before anything reads it. A custom op whose CPU kernel is an
``@njit`` function, with one output and array arguments only, is called by the glue
directly (``CustomOpKernel.direct_call``), without its ``impl`` wrapper in between.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

import numpy as np

from numbagrad import _observe
from numbagrad._compile.graph import Var
from numbagrad._compile.lower import _CAST, PARALLEL_MIN, PRELUDE, SCALAR, Group, _sum_axes, plan
from numbagrad.kernels.cpu import alloc
from numbagrad.kernels.cpu.backend import CPU

__all__ = ["Program", "build", "cache_dir"]


def logging_compiles() -> bool:
    """Whether ``numbagrad.set_log_compiles`` is on."""
    return _observe._state["listener"] is not None


def cache_dir() -> str:
    d = os.environ.get("NUMBAGRAD_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "numbagrad", "compile")
    return d


class Program:
    """A built graph: ``fn(*arrays) -> tuple of arrays`` plus the text it came from."""

    __slots__ = ("fn", "glue", "kernels", "module_path")

    def __init__(self, fn, glue, kernels, module_path):
        self.fn = fn
        self.glue = glue
        self.kernels = kernels
        self.module_path = module_path


def _dt(dtype) -> str:
    return _CAST[np.dtype(dtype)]


def _index(v, shape):
    """The subscript reading var ``v`` inside a loop nest over ``shape``."""
    r, rank = len(v.shape), len(shape)
    if r == 0:
        return "[()]"
    idx = ["0" if v.shape[j] == 1 else f"i{j + rank - r}" for j in range(r)]
    return "[" + ", ".join(idx) + "]"


def _literal(a, dtype) -> str:
    if isinstance(a, (bool, np.bool_)):
        return f"{_dt(dtype)}({bool(a)})"
    return f"{_dt(dtype)}({SCALAR.const(a)})" if dtype != np.bool_ else f"b1({a!r})"


def _compute_dtype(e):
    """The dtype the operands are cast to: the output's, or for a comparison the operands'
    common dtype (Python numbers are weak, as in PyTorch's promotion)."""
    out = e.outs[0].dtype
    if out != np.bool_:
        return out
    vs = [a.dtype for a in e.ins if type(a) is Var]
    if not vs or e.prim.__name__ in (
        "LogicalAnd",
        "LogicalOr",
        "LogicalXor",
        "LogicalNot",
        "Where",
    ):
        return np.dtype(np.bool_) if not vs else np.result_type(*vs)
    return np.result_type(*vs)


def _kernel(kname, group, live, given_out=False, static=False):
    """Source of one loop nest: ``(source, input vars, output vars, accumulators)``. With
    ``given_out`` the caller allocates the outputs (from the buffer cache, NOTE [Buffer
    cache]) and passes them after the inputs. With ``static`` the sizes are literals in
    the source (``compile(dynamic=False)``: constant trip counts), else arguments."""
    shape = group.shape
    rank = len(shape)
    size = 1
    for n in shape:
        size *= n
    loop = ", ".join(f"i{j}" for j in range(rank))
    produced = {id(o) for e in group.eqns for o in e.outs}
    inputs, position = [], {}
    for e in group.eqns:
        for a in e.ins:
            if type(a) is Var and id(a) not in produced and id(a) not in position:
                position[id(a)] = len(inputs)
                inputs.append(a)
    outputs = [o for e in group.eqns for o in e.outs if id(o) in live]
    local = {}  # id(var) -> its scalar's name inside the loop
    body, pre, scalars = [], [], []
    acc = {}  # id(sum var) -> (accumulator name, full reduction?, reduced axes)
    for k, o in enumerate(outputs):
        if id(o) in group.reduced:
            e = next(e for e in group.eqns if e.outs[0] is o)
            axes = _sum_axes(e)
            if len(axes) == rank:
                pre.append(f"s{k} = 0.0")
                acc[id(o)] = (f"s{k}", True, axes)
            else:
                sizes = ", ".join("1" if j in axes else f"n{j}" for j in range(rank))
                pre.append(f"s{k} = np.zeros(({sizes},), np.float64)")
                acc[id(o)] = (f"s{k}", False, axes)
        elif not given_out:
            sizes = "".join(f"n{j}, " for j in range(rank))
            pre.append(f"o{k} = np.empty(({sizes}), {_dt(o.dtype)})")

    params: list = []  # the numbers passed as arguments (``_hoisted``)

    def operand(a, dtype):
        if type(a) is not Var:
            if static or not _hoisted(a, dtype):
                return _literal(a, dtype)
            params.append(float(a))
            return f"{_dt(dtype)}(p{len(params) - 1})"
        if id(a) in local:
            name = local[id(a)]
        elif not a.shape:  # a 0-d input: read once, before the loops
            name = f"c{position[id(a)]}"
            if name not in scalars:
                scalars.append(name)
                pre.append(f"{name} = x{position[id(a)]}[()]")
        else:
            name = f"x{position[id(a)]}{_index(a, shape)}"
        return name if a.dtype == dtype else f"{_dt(dtype)}({name})"

    for e, kind in zip(group.eqns, group.kinds):
        o = e.outs[0]
        t = f"t{len(local)}"
        local[id(o)] = t
        if kind == "expand":
            body.append(f"{t} = {operand(e.ins[0], o.dtype)}")
        elif kind == "sum":  # (a sum ends its group: nothing in the loop reads it)
            body.append(f"{t} = {operand(e.ins[0], o.dtype)}")
            if id(o) in acc:
                name, full, axes = acc[id(o)]
                if full:
                    body.append(f"{name} += {t}")
                else:
                    sub = ", ".join("0" if j in axes else f"i{j}" for j in range(rank))
                    body.append(f"{name}[{sub}] += {t}")
            continue
        else:
            cd = _compute_dtype(e)
            if e.prim.__name__ == "Where":  # the condition stays a bool
                dt = o.dtype if cd == np.bool_ or o.dtype != np.bool_ else cd
                xs = [operand(e.ins[0], np.dtype(np.bool_))]
                xs += [operand(a, dt) for a in e.ins[1:]]
            else:
                xs = [operand(a, cd) for a in e.ins]
            expr = e.prim.scalar(SCALAR, *xs, **e.params)
            body.append(f"{t} = {_dt(o.dtype)}({expr})")
        if id(o) in live:
            body.append(f"o{outputs.index(o)}[{loop if rank else '()'}] = {t}")
    args = [f"x{i}" for i in range(len(inputs))]
    if given_out:
        args += [f"o{k}" for k, o in enumerate(outputs) if id(o) not in acc]
    if static:
        pre[:0] = [f"n{j} = {n}" for j, n in enumerate(shape)]
    else:
        args += [f"n{j}" for j in range(rank)]
        args += [f"p{m}" for m in range(len(params))]
    # NOTE [Loop nest size]: large nests run their outer loop on every core, unless a sum
    # accumulates along it into an array (threads would race on its elements)
    parallel = (
        PARALLEL_MIN is not None
        and rank > 0
        and size >= PARALLEL_MIN
        and shape[0] > 1
        and not any(not full and 0 in axes for _, full, axes in acc.values())
    )
    ind = "    "
    flags = ", parallel=True" if parallel else ""
    lines = [
        f'@njit(cache=True, error_model="numpy", nogil=True{flags})',
        f"def {kname}({', '.join(args)}):",
    ]
    lines += [ind + p for p in pre]
    lines += [
        ind * (j + 1) + f"for i{j} in {'prange' if parallel and j == 0 else 'range'}(n{j}):"
        for j in range(rank)
    ]
    lines += [ind * (rank + 1) + b for b in body]
    rets = [acc[id(o)][0] if id(o) in acc else f"o{k}" for k, o in enumerate(outputs)]
    lines.append(ind + f"return ({', '.join(rets)},)")
    return "\n".join(lines) + "\n", inputs, outputs, acc, params


def _hoisted(a, dtype) -> bool:
    """Whether literal ``a`` is passed to a size-generic loop kernel as an argument rather
    than written into its source: a number the graph may have derived from a size (the
    count that ``mean`` divides by) would otherwise make a new kernel per size (NOTE [Size
    variants]). Bools and the small whole numbers that ``power`` turns into products
    (``SCALAR.power``) stay literals."""
    if isinstance(a, (bool, np.bool_)) or dtype == np.bool_:
        return False
    x = float(a)
    return not (x == int(x) and abs(x) <= 4) if x == x and abs(x) != float("inf") else True


def _py_float(x) -> str:
    """Python source of float ``x`` in the glue (infinities and NaN through NumPy)."""
    if x != x:
        return "_np.nan"
    if x in (float("inf"), float("-inf")):
        return "_np.inf" if x > 0 else "(-_np.inf)"
    return repr(x)


def _step_name(s):
    op = getattr(s.prim, "op", None)
    if op is not None:
        return f"the custom op {op.name}"
    fn = s.params.get("fn") if s.params else None
    if fn is not None:
        return f"the custom Function {fn.__name__}"
    return f"{s.prim.__name__} (a custom Function's backward)"


def check_lines(s, k, ns, kind=""):
    """The glue lines that check step ``s``'s outputs when user code made them (its
    primitive's ``shape_from_values``): the kernels after it read them with the traced
    shapes and do no bounds checks (NOTE [User code in compiled calls]). ``kind``: the name
    of the device's array type in the glue's namespace (empty: NumPy's)."""
    if not getattr(s.prim, "shape_from_values", False):
        return []
    ns[f"_N{k}"] = _step_name(s)
    tail = f", {kind})" if kind else ")"
    return [
        f"    _check_out({o.name}, {tuple(o.shape)!r}, _np.{o.dtype.name}, _N{k}{tail}"
        for o in s.outs
        if o.dtype != object
    ]


def _check_out(a, shape, dtype, what, kind=np.ndarray):
    """Refuse an array user code returned inside a compiled call whose shape or dtype is not
    the traced call's: the fused kernels after it would read it out of bounds (``kind``:
    the device's array type)."""
    if type(a) is not kind or a.shape != shape or a.dtype != dtype:
        got = (
            f"shape {list(a.shape)} and dtype {a.dtype}"
            if type(a) is kind
            else f"a {type(a).__name__}"
        )
        raise RuntimeError(
            f"numbagrad.compile: {what} returned {got} where the traced call gave shape "
            f"{list(shape)} and dtype {np.dtype(dtype)}; a compiled function needs output "
            "shapes and dtypes that follow from its inputs' (run it eagerly, or wrap it in "
            "numbagrad.compiler.disable)"
        )


def build(graph_inputs, eqns, outputs, label="fwd", static=False):
    """Code for a program with inputs ``graph_inputs`` (Vars), equations ``eqns`` and
    ``outputs`` (atoms); returns a ``Program``. ``static``: loop kernels with their sizes
    as literals (``compile(dynamic=False)``, NOTE [Size variants]) rather than arguments."""
    needed = {id(a) for a in outputs if type(a) is Var}
    kept = []
    for e in reversed(eqns):  # dead code out (not a random draw: the stream must advance)
        if getattr(e.prim, "effect", False) or any(id(o) in needed for o in e.outs):
            kept.append(e)
            needed.update(id(a) for a in e.ins if type(a) is Var)
    kept.reverse()
    steps = plan(kept)
    # which steps read each var (a group's value leaves it as an array only where another
    # step or the output reads it)
    readers: dict = {}
    for k, st in enumerate(steps):
        for e in st.eqns if type(st) is Group else (st,):
            for a in e.ins:
                if type(a) is Var:
                    readers.setdefault(id(a), set()).add(k)
    out_ids = {id(a) for a in outputs if type(a) is Var}
    ns = {
        "_check_out": _check_out,
        "_CPU": CPU,
        "_np": np,
        "_asarray": np.asarray,
        "_ndarray": np.ndarray,
        "_empty": alloc.empty,
    }
    glue = [f"def {label}({', '.join(v.name for v in graph_inputs)}):"]
    kernels = []
    for k, s in enumerate(steps):
        if type(s) is Group:
            gname = f"_k{len(kernels)}"
            live = {
                id(o)
                for e in s.eqns
                for o in e.outs
                if id(o) in out_ids or readers.get(id(o), set()) - {k}
            }
            size = 1
            for n in s.shape:
                size *= n
            given = size * 8 >= alloc.MIN_BYTES  # large: outputs from the buffer cache
            src, ins, outs, acc, params = _kernel(gname, s, live, given, static)
            kernels.append(src)
            outs_given = []
            if given:
                for o in outs:
                    if id(o) not in acc:
                        glue.append(
                            f"    {o.name} = _empty({tuple(o.shape)!r}, _np.{o.dtype.name})"
                        )
                        outs_given.append(o.name)
            sizes = [] if static else [str(n) for n in s.shape]
            sizes += [_py_float(x) for x in params]
            call_args = ", ".join([v.name for v in ins] + outs_given + sizes)
            glue.append(f"    {''.join(o.name + ', ' for o in outs)}= _mod.{gname}({call_args})")
            for o in outs:
                if id(o) not in acc:
                    continue
                full, dt = acc[id(o)][1], f"_np.{o.dtype.name}"
                if full and o.shape == ():
                    glue.append(f"    {o.name} = _np.array({o.name}, {dt})")
                elif full:
                    glue.append(f"    {o.name} = _np.full({tuple(o.shape)!r}, {o.name}, {dt})")
                else:
                    glue.append(
                        f"    {o.name} = {o.name}.astype({dt}, copy=False)"
                        f".reshape({tuple(o.shape)!r})"
                    )
        else:
            k = len(ns)
            args = [a.name if type(a) is Var else f"_L{k}_{i}" for i, a in enumerate(s.ins)]
            for i, a in enumerate(s.ins):
                if type(a) is not Var:
                    ns[f"_L{k}_{i}"] = a
            direct = getattr(s.prim, "direct_call", None)
            direct = direct(s.params) if direct is not None else None
            if direct is not None:  # a custom op's @njit kernel, called as it is
                ns[f"_U{k}"], ns[f"_W{k}"] = direct
                o = s.outs[0].name
                glue.append(f"    {o} = _U{k}({', '.join(args)})")
                glue.append(f"    if type({o}) is not _ndarray: {o} = _W{k}({o})")
            else:
                ns[f"_P{k}"] = s.prim.impl
                params = f", **_K{k}" if s.params else ""
                call = f"_P{k}({', '.join(['_CPU', *args])}{params})"
                if s.params:
                    ns[f"_K{k}"] = s.params
                if len(s.outs) == 1:
                    o = s.outs[0].name
                    glue.append(f"    {o} = {call}")
                    glue.append(f"    if type({o}) is not _ndarray: {o} = _asarray({o})")
                else:
                    glue.append(f"    {', '.join(o.name for o in s.outs)} = {call}")
            glue += check_lines(s, k, ns)
    rets = []
    for a in outputs:
        if type(a) is Var:
            rets.append(a.name)
        else:
            k = len(ns)
            ns[f"_O{k}"] = a
            rets.append(f"_O{k}")
    glue.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    glue_src = "\n".join(glue) + "\n"
    mod, path = (None, None)
    if kernels:
        mod, path = _load(PRELUDE + "\n\n" + "\n\n".join(kernels))
    ns["_mod"] = mod
    exec(compile(glue_src, f"<numbagrad.compile {label}>", "exec"), ns)
    return Program(ns[label], glue_src, "\n\n".join(kernels), path)


_MODULES: dict = {}


def _load(source):
    """The module of ``source`` from the cache dir (written there first if new)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:20]
    mod = _MODULES.get(key)
    if mod is not None:
        return mod, mod.__file__
    d = cache_dir()
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"ng_{key}.py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: another process may be writing the same file
    name = f"numbagrad_compiled_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _MODULES[key] = mod
    return mod, path
