"""CUDA programs for traced graphs: generated ``@cuda.jit`` kernels plus the eager CUDA
backend for the rest.

NOTE [Compiled CUDA programs]
A call whose tensors are all on one CUDA device compiles to the same plan as a CPU call
(NOTE [Lowering]: ``plan`` groups runs of lowerable equations that share an iteration
shape, with broadcasting and the sums that end them), without the CPU's size limits (NOTE
[Loop nest size]: a GPU has no SIMD ufunc to prefer). Each group becomes one generated
``@cuda.jit`` kernel: a grid-stride loop over the iteration shape's elements (NOTE [CUDA
launches]) that splits the linear index into one index per dim, reads each input through
its flat device buffer, element offset and strides (NOTE [CUDA elementwise kernels]; a
broadcast dim is not indexed at all), evaluates the equations with the primitives' own
``scalar`` forms, and writes the values that leave the group into new contiguous arrays.
The scalar forms are emitted with ``CUDA_SCALAR``: the CPU's ``SCALAR`` with each math
function mapped to a device function of ``CUDA_PRELUDE`` (numba-cuda has ``math``'s functions
from libdevice, and only some of NumPy's ufuncs: ``np.exp``, ``np.sqrt``, ``np.floor`` are
missing), which computes in float64 like the eager kernels and spells out the domain edges
(``log(0)``, ``sqrt(-1)``, overflow) that the simulator's Python ``math`` would raise on.
A sum accumulates in float64: a full sum per thread and then one ``cuda.atomic.add`` per
thread, a partial sum with an atomic add per element into its (zeroed) output; the glue
casts and reshapes the accumulator. Atomic adds make the order of the additions, and so the
last bits of a float sum, vary from run to run on a GPU, as PyTorch's CUDA sums may.

Every other equation (matmul, reductions other than sums, shape ops, indexing, random draws,
opaque Functions) calls its primitive's ``impl`` with the CUDA backend, as the CPU glue calls
it with the CPU backend. The kernels' module goes to the compile cache directory (NOTE
[Compiled code cache]) with ``cache=True``; its source names the device kind, so a graph's
CUDA module never shares a file with its CPU one. Sizes are kernel arguments, and so are
the numbers a graph may derive from a size (``codegen._hoisted``: ``mean``'s count), so
the source (and the compiled PTX) depends on ranks, dtypes and which dims broadcast, not
on sizes (NOTE [Size variants]). ``Program.signatures`` lists each kernel's argument
types, which the PTX test compiles for sm_90 without a GPU.
"""

from __future__ import annotations

import numpy as np

from numbagrad._compile import codegen
from numbagrad._compile.codegen import _compute_dtype
from numbagrad._compile.graph import Var
from numbagrad._compile.lower import _CAST, Group, _Scalar, _sum_axes, plan
from numbagrad.kernels import backend
from numbagrad.kernels.cuda.array import CudaArray
from numbagrad.kernels.cuda.launch import launch

__all__ = [
    "CUDA_PRELUDE",
    "CUDA_SCALAR",
    "CudaProgram",
    "build",
    "generate",
    "module_source",
    "owns",
    "zeros",
]


def owns(array) -> bool:
    """Whether ``array`` is a CUDA tensor's data (a call that compiles for CUDA)."""
    return isinstance(array, CudaArray)


def zeros(shape, dtype):
    """A zero CUDA array (a missing cotangent of a compiled backward)."""
    return backend("cuda").zeros(shape, dtype)


class _CudaScalar(_Scalar):
    """``SCALAR`` for CUDA kernels: NumPy's scalar math mapped to ``CUDA_PRELUDE``'s
    device functions (NOTE [Compiled CUDA programs])."""

    @staticmethod
    def const(x):
        x = float(x)
        if x != x:
            return "math.nan"
        if x in (float("inf"), float("-inf")):
            return "math.inf" if x > 0 else "(-math.inf)"
        return repr(x)

    @staticmethod
    def rsqrt(a):
        return f"_rsqrt({a})"

    @staticmethod
    def erf(a):
        return f"_erf({a})"


_UNARY = (
    "exp expm1 log log1p log2 log10 exp2 sqrt sin cos tan tanh arcsin arccos arctan sinh "
    "cosh arcsinh arccosh arctanh floor ceil trunc abs"
).split()
_BINARY = ("arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "fmod")
for _name in _UNARY:
    setattr(_CudaScalar, _name, staticmethod(lambda a, _n=_name: f"_{_n}({a})"))
for _name in _BINARY:
    setattr(_CudaScalar, _name, staticmethod(lambda a, b, _n=_name: f"_{_n}({a}, {b})"))

CUDA_SCALAR = _CudaScalar()

# The device functions every generated CUDA module starts with (its own copy, as the CPU's
# PRELUDE). Each computes in float64 and returns a float64, so that under the simulator
# (plain Python) a result is a NumPy scalar whose division by zero gives inf, as on a GPU.
CUDA_PRELUDE = """\
import math

from numba import boolean as b1
from numba import cuda
from numba import float32 as f32
from numba import float64 as f64

_BIG = 4503599627370496.0  # 2 ** 52: every float at least this large is whole
_EXP_MAX = 709.782712893384  # the largest x with a finite exp(x)


@cuda.jit(device=True)
def _maximum(a, b):
    return a if (a >= b or a != a) else b


@cuda.jit(device=True)
def _minimum(a, b):
    return a if (a <= b or a != a) else b


@cuda.jit(device=True)
def _relu(a):
    return a if not (a <= 0) else a * 0


@cuda.jit(device=True)
def _sign(a):
    v = f64(a)
    return f64(1.0) if v > 0 else (f64(-1.0) if v < 0 else v)


@cuda.jit(device=True)
def _exp(a):
    v = f64(a)
    return f64(math.inf) if v > _EXP_MAX else f64(math.exp(v))


@cuda.jit(device=True)
def _expm1(a):
    v = f64(a)
    return f64(math.inf) if v > _EXP_MAX else f64(math.expm1(v))


@cuda.jit(device=True)
def _exp2(a):
    return f64(2.0) ** f64(a)


@cuda.jit(device=True)
def _sigmoid(a):
    v = f64(a)
    if v >= 0.0:
        return f64(1.0 / (1.0 + math.exp(-v)))
    if v < -_EXP_MAX:
        return f64(0.0)
    e = math.exp(v)
    return f64(e / (1.0 + e))


@cuda.jit(device=True)
def _softplus(a):
    v = f64(a)
    if v != v:
        return v
    return f64(max(v, 0.0) + math.log1p(math.exp(-abs(v))))


@cuda.jit(device=True)
def _log(a):
    v = f64(a)
    return f64(math.log(v)) if v > 0 else (f64(-math.inf) if v == 0 else f64(math.nan))


@cuda.jit(device=True)
def _log2(a):
    v = f64(a)
    return f64(math.log2(v)) if v > 0 else (f64(-math.inf) if v == 0 else f64(math.nan))


@cuda.jit(device=True)
def _log10(a):
    v = f64(a)
    return f64(math.log10(v)) if v > 0 else (f64(-math.inf) if v == 0 else f64(math.nan))


@cuda.jit(device=True)
def _log1p(a):
    v = f64(a)
    return f64(math.log1p(v)) if v > -1 else (f64(-math.inf) if v == -1 else f64(math.nan))


@cuda.jit(device=True)
def _sqrt(a):
    v = f64(a)
    return f64(math.sqrt(v)) if v >= 0 else f64(math.nan)


@cuda.jit(device=True)
def _rsqrt(a):
    v = f64(a)
    return f64(1.0 / math.sqrt(v)) if v > 0 else (f64(math.inf) if v == 0 else f64(math.nan))


@cuda.jit(device=True)
def _sin(a):
    v = f64(a)
    return f64(math.nan) if math.isinf(v) else f64(math.sin(v))


@cuda.jit(device=True)
def _cos(a):
    v = f64(a)
    return f64(math.nan) if math.isinf(v) else f64(math.cos(v))


@cuda.jit(device=True)
def _tan(a):
    v = f64(a)
    return f64(math.nan) if math.isinf(v) else f64(math.tan(v))


@cuda.jit(device=True)
def _tanh(a):
    return f64(math.tanh(f64(a)))


@cuda.jit(device=True)
def _arcsin(a):
    v = f64(a)
    return f64(math.asin(v)) if -1 <= v <= 1 else f64(math.nan)


@cuda.jit(device=True)
def _arccos(a):
    v = f64(a)
    return f64(math.acos(v)) if -1 <= v <= 1 else f64(math.nan)


@cuda.jit(device=True)
def _arctan(a):
    return f64(math.atan(f64(a)))


@cuda.jit(device=True)
def _sinh(a):
    v = f64(a)
    if abs(v) > 710.5:
        return f64(math.copysign(math.inf, v))
    return f64(math.sinh(v))


@cuda.jit(device=True)
def _cosh(a):
    v = f64(a)
    return f64(math.inf) if abs(v) > 710.5 else f64(math.cosh(v))


@cuda.jit(device=True)
def _arcsinh(a):
    return f64(math.asinh(f64(a)))


@cuda.jit(device=True)
def _arccosh(a):
    v = f64(a)
    return f64(math.acosh(v)) if v >= 1 else f64(math.nan)


@cuda.jit(device=True)
def _arctanh(a):
    v = f64(a)
    if -1 < v < 1:
        return f64(math.atanh(v))
    return f64(math.copysign(math.inf, v)) if abs(v) == 1 else f64(math.nan)


@cuda.jit(device=True)
def _floor(a):
    v = f64(a)
    return v if (v != v or abs(v) >= _BIG) else f64(math.floor(v))


@cuda.jit(device=True)
def _ceil(a):
    v = f64(a)
    return v if (v != v or abs(v) >= _BIG) else f64(math.ceil(v))


@cuda.jit(device=True)
def _trunc(a):
    v = f64(a)
    return v if (v != v or abs(v) >= _BIG) else f64(math.trunc(v))


@cuda.jit(device=True)
def _abs(a):
    return abs(a)


@cuda.jit(device=True)
def _erf(a):
    return f64(math.erf(f64(a)))


@cuda.jit(device=True)
def _arctan2(a, b):
    return f64(math.atan2(f64(a), f64(b)))


@cuda.jit(device=True)
def _hypot(a, b):
    x = abs(f64(a))
    y = abs(f64(b))
    if math.isinf(x) or math.isinf(y):
        return f64(math.inf)
    m = max(x, y)
    if m == 0 or m != m:
        return f64(m) if m == m else f64(x + y)
    r = min(x, y) / m
    return f64(m * math.sqrt(1.0 + r * r))


@cuda.jit(device=True)
def _copysign(a, b):
    return f64(math.copysign(f64(a), f64(b)))


@cuda.jit(device=True)
def _fmod(a, b):
    x = f64(a)
    y = f64(b)
    if x != x or y != y or y == 0 or math.isinf(x):
        return f64(math.nan)
    return x if math.isinf(y) else f64(math.fmod(x, y))


@cuda.jit(device=True)
def _logaddexp(a, b):
    x = f64(a)
    y = f64(b)
    if x == y:
        return f64(x + 0.6931471805599453)
    d = x - y
    if d > 0:
        return f64(x + math.log1p(_exp(-d)))
    if d <= 0:
        return f64(y + math.log1p(_exp(d)))
    return f64(d)


@cuda.jit(device=True)
def _logaddexp2(a, b):
    x = f64(a)
    y = f64(b)
    if x == y:
        return f64(x + 1.0)
    d = x - y
    if d > 0:
        return f64(x + 1.4426950408889634 * math.log1p(_exp2(-d)))
    if d <= 0:
        return f64(y + 1.4426950408889634 * math.log1p(_exp2(d)))
    return f64(d)
"""


def _dt(dtype) -> str:
    return _CAST[np.dtype(dtype)]


def _literal(a, dtype) -> str:
    if isinstance(a, (bool, np.bool_)):
        return f"{_dt(dtype)}({bool(a)})"
    if dtype == np.bool_:
        return f"b1({a!r})"
    return f"{_dt(dtype)}({CUDA_SCALAR.const(a)})"


class CudaProgram(codegen.Program):
    """A built CUDA graph: ``Program`` plus each kernel's argument types (``signatures``:
    kernel name -> list of ``"i64"``, ``"f64"`` (a number) or an array's NumPy dtype
    name)."""

    __slots__ = ("signatures",)

    def __init__(self, fn, glue, kernels, module_path, signatures):
        super().__init__(fn, glue, kernels, module_path)
        self.signatures = signatures


def _kernel(kname, group, live):
    """Source of one group's kernel: ``(source, inputs, outputs, accumulators, argument
    list, signature, numbers)`` (NOTE [Compiled CUDA programs]). An input's argument list
    entry is ``(var, dims)``: its buffer, offset and the strides of its indexed ``dims``;
    ``numbers`` are the literals passed as the last arguments (``codegen._hoisted``)."""
    shape = group.shape
    rank = len(shape)
    produced = {id(o) for e in group.eqns for o in e.outs}
    inputs, position = [], {}
    for e in group.eqns:
        for a in e.ins:
            if type(a) is Var and id(a) not in produced and id(a) not in position:
                position[id(a)] = len(inputs)
                inputs.append(a)
    outputs = [o for e in group.eqns for o in e.outs if id(o) in live]
    args = ["n"] + [f"n{j}" for j in range(rank)]
    sig = ["i64"] * (rank + 1)
    in_dims = []
    for p, v in enumerate(inputs):
        r = len(v.shape)
        dims = [j for j in range(r) if v.shape[j] != 1]
        in_dims.append(dims)
        args += [f"x{p}", f"x{p}o"] + [f"x{p}s{j}" for j in dims]
        sig += [v.dtype.name, "i64"] + ["i64"] * len(dims)
    pre, body, post = [], [], []
    acc = {}  # id(sum var) -> (buffer name, full reduction?, reduced axes)
    for k, o in enumerate(outputs):
        axes = None
        if id(o) in group.reduced:
            e = next(e for e in group.eqns if e.outs[0] is o)
            axes = _sum_axes(e)
        if axes:  # (a sum over no dims, SumTo its own shape, is a plain output)
            full = len(axes) == rank
            acc[id(o)] = (f"s{k}", full, axes)
            if full:
                pre.append(f"a{k} = 0.0")
                post.append(f"cuda.atomic.add(s{k}, 0, a{k})")
            args.append(f"s{k}")
            sig.append("float64")
        else:
            args.append(f"o{k}")
            sig.append(o.dtype.name)
    local, hoisted = {}, set()
    params: list = []

    def operand(a, dtype):
        if type(a) is not Var:
            if not codegen._hoisted(a, dtype):
                return _literal(a, dtype)
            params.append(float(a))
            return f"{_dt(dtype)}(p{len(params) - 1})"
        if id(a) in local:
            name = local[id(a)]
        else:
            p = position[id(a)]
            dims = in_dims[p]
            if not dims:  # one element (0-d, or all dims broadcast): read once
                name = f"c{p}"
                if p not in hoisted:
                    hoisted.add(p)
                    pre.append(f"{name} = x{p}[x{p}o]")
            else:
                lead = rank - len(a.shape)
                terms = " + ".join(f"i{j + lead} * x{p}s{j}" for j in dims)
                name = f"x{p}[x{p}o + {terms}]"
        return name if a.dtype == dtype else f"{_dt(dtype)}({name})"

    for e, kind in zip(group.eqns, group.kinds):
        o = e.outs[0]
        t = f"t{len(local)}"
        local[id(o)] = t
        if kind == "expand":
            body.append(f"{t} = {operand(e.ins[0], o.dtype)}")
        elif kind == "sum":
            body.append(f"{t} = {operand(e.ins[0], o.dtype)}")
            if id(o) not in acc and id(o) in live:
                body.append(f"o{outputs.index(o)}[i] = {t}")
            elif id(o) in acc:
                name, full, axes = acc[id(o)]
                k = name[1:]
                if full:
                    body.append(f"a{k} += f64({t})")
                else:
                    idx = "0"
                    for j in range(rank):
                        if j not in axes:
                            idx = f"i{j}" if idx == "0" else f"({idx}) * n{j} + i{j}"
                    body.append(f"cuda.atomic.add({name}, {idx}, f64({t}))")
            continue
        else:
            cd = _compute_dtype(e)
            if e.prim.__name__ == "Where":  # the condition stays a bool
                dt = o.dtype if cd == np.bool_ or o.dtype != np.bool_ else cd
                xs = [operand(e.ins[0], np.dtype(np.bool_))]
                xs += [operand(a, dt) for a in e.ins[1:]]
            else:
                xs = [operand(a, cd) for a in e.ins]
            expr = e.prim.scalar(CUDA_SCALAR, *xs, **e.params)
            body.append(f"{t} = {_dt(o.dtype)}({expr})")
        if id(o) in live:
            body.append(f"o{outputs.index(o)}[i] = {t}")
    split = []
    if rank == 1:
        split.append("i0 = i")
    elif rank > 1:
        split.append("r = i")
        for j in range(rank - 1, 0, -1):
            split.append(f"i{j} = r % n{j}")
            split.append(f"r = r // n{j}")
        split.append("i0 = r")
    args += [f"p{m}" for m in range(len(params))]
    sig += ["f64"] * len(params)
    ind = "    "
    lines = ["@cuda.jit(cache=True)", f"def {kname}({', '.join(args)}):"]
    lines += [ind + p for p in pre]
    lines.append(ind + "for i in range(cuda.grid(1), n, cuda.gridsize(1)):")
    lines += [ind * 2 + b for b in split + body]
    lines += [ind + p for p in post]
    return "\n".join(lines) + "\n", inputs, outputs, acc, in_dims, sig, params


def _live_eqns(eqns, outputs):
    """``eqns`` less those no output depends on (never a random draw: NOTE [Compiled
    code cache])."""
    needed = {id(a) for a in outputs if type(a) is Var}
    kept = []
    for e in reversed(eqns):
        if getattr(e.prim, "effect", False) or any(id(o) in needed for o in e.outs):
            kept.append(e)
            needed.update(id(a) for a in e.ins if type(a) is Var)
    kept.reverse()
    return kept


def generate(graph_inputs, eqns, outputs, label="fwd"):
    """The source of a graph's CUDA program: ``(glue source, glue namespace, kernels
    source, kernel signatures)``; needs no device (the PTX test compiles the kernels)."""
    steps = plan(_live_eqns(eqns, outputs), limits=False)
    readers: dict = {}
    for k, st in enumerate(steps):
        for e in st.eqns if type(st) is Group else (st,):
            for a in e.ins:
                if type(a) is Var:
                    readers.setdefault(id(a), set()).add(k)
    out_ids = {id(a) for a in outputs if type(a) is Var}
    ns = {
        "_np": np,
        "_launch": launch,
        "_check_out": codegen._check_out,
        "_CudaArray": backend("cuda").array_type,  # (the backend's arrays' exact class)
    }
    glue = [f"def {label}({', '.join(v.name for v in graph_inputs)}):"]
    kernels, signatures = [], {}
    for k, s in enumerate(steps):
        if type(s) is Group:
            gname = f"_k{len(kernels)}"
            live = {
                id(o)
                for e in s.eqns
                for o in e.outs
                if id(o) in out_ids or readers.get(id(o), set()) - {k}
            }
            src, ins, outs, acc, in_dims, sig, params = _kernel(gname, s, live)
            kernels.append(src)
            signatures[gname] = sig
            size = 1
            for n in s.shape:
                size *= n
            call = [str(size)] + [str(n) for n in s.shape]
            for v, dims in zip(ins, in_dims):
                call += [f"{v.name}._buf", f"{v.name}._off"]
                call += [f"{v.name}._st[{j}]" for j in dims]
            for j, o in enumerate(outs):
                if id(o) in acc:
                    full, axes = acc[id(o)][1], acc[id(o)][2]
                    n_acc = 1
                    for d in range(len(s.shape)):
                        if not full and d not in axes:
                            n_acc *= s.shape[d]
                    glue.append(f"    _s{j} = _zeros(({n_acc},), _np.float64)")
                    call.append(f"_s{j}._buf")
                else:
                    glue.append(f"    {o.name} = _empty({tuple(o.shape)!r}, _np.{o.dtype.name})")
                    call.append(f"{o.name}._buf")
            call += [codegen._py_float(x) for x in params]
            glue.append(f"    _launch(_mod.{gname}, {size}, {', '.join(call)})")
            for j, o in enumerate(outs):
                if id(o) in acc:
                    cast = "" if o.dtype == np.float64 else f".astype(_np.{o.dtype.name})"
                    glue.append(f"    {o.name} = _s{j}.reshape({tuple(o.shape)!r}){cast}")
        else:
            k = len(ns)
            ns[f"_P{k}"] = s.prim.impl
            call_args = [a.name if type(a) is Var else f"_L{k}_{i}" for i, a in enumerate(s.ins)]
            for i, a in enumerate(s.ins):
                if type(a) is not Var:
                    ns[f"_L{k}_{i}"] = a
            extra = f", **_K{k}" if s.params else ""
            if s.params:
                ns[f"_K{k}"] = s.params
            lhs = ", ".join(o.name for o in s.outs)
            glue.append(f"    {lhs} = _P{k}({', '.join(['_BE', *call_args])}{extra})")
            glue += codegen.check_lines(s, k, ns, "_CudaArray")
    rets = []
    for a in outputs:
        if type(a) is Var:
            rets.append(a.name)
        else:
            k = len(ns)
            ns[f"_O{k}"] = a
            rets.append(f"_O{k}")
    glue.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    return "\n".join(glue) + "\n", ns, "\n\n".join(kernels), signatures


def module_source(kernels, device="cuda:0") -> str:
    """The text of a CUDA kernels module (the cache file's contents)."""
    header = f"# numbagrad.compile: CUDA kernels (numba.cuda.jit) for {device}\n"
    return header + CUDA_PRELUDE + "\n\n" + kernels


def build(graph_inputs, eqns, outputs, label="fwd", device="cuda:0"):
    """The CUDA program of a graph (``codegen.build``'s contract: ``fn(*device arrays) ->
    tuple``) for CUDA device ``device`` (NOTE [Compiled CUDA programs])."""
    glue_src, ns, text, signatures = generate(graph_inputs, eqns, outputs, label)
    be = backend("cuda")
    ns.update(_BE=be, _empty=be.empty, _zeros=be.zeros)
    mod, path = None, None
    if text:
        mod, path = codegen._load(module_source(text, device))
    ns["_mod"] = mod
    exec(compile(glue_src, f"<numbagrad.compile {label} {device}>", "exec"), ns)
    return CudaProgram(ns[label], glue_src, text, path, signatures)
