"""Programs of the differential fuzz suite: data model, execution, comparison, reduction.

A *program* is plain data (JSON-serialisable, see ``encode``/``decode``)::

    {"seed": 12, "grad_mode": "grad" | "backward",
     "inputs": [{"name": "x0", "dtype": "float64", "shape": [3, 4], "grad": true,
                 "values": {"kind": "special", "seed": 987} | {"data": [...]},
                 "view": null | ["T", d0, d1] | ["step", d] | ["offset"] | ["expand", [d, ...]]},
                ...],
     "steps": [{"op": "add", "variant": null | "method" | ..., "args": [...],
                "kwargs": {...}}, ...]}

Step arguments refer to inputs and earlier results by name (``{"ref": "x0"}``,
``{"ref": "s2", "i": 1}`` for output 1 of step 2). An input's ``view`` says how the
tensor the program sees is made from its leaf (``base``): transposed, every other
element of a dimension (the skipped ones hold NaN), behind a storage offset, or expanded
from size-1 dimensions. Ops are called through ``tests/_opdb.py`` (``OpInfo.op`` or one of
its variants), so a program means the same under numbagrad and torch.

``check(program)`` runs a program under both libraries and returns the first
disagreement: forward outputs step by step (count, dtype, shape, ``requires_grad``,
values with dtype tolerances and NaN patterns, error vs no error), then the first-order
gradients of the last floating result, then (all-float64 programs) second-order terms.
``reduce_mismatch`` shrinks a disagreement to a shortest prefix and, where it still
reproduces, to the guilty step alone on the values it saw; ``render`` writes a program
as a Python script that runs under ``torch`` or ``numbagrad as torch``.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from _opdb import OpInfo, ops_by_name  # noqa: E402

__all__ = [
    "FEATURES",
    "KINDS",
    "check",
    "decode",
    "encode",
    "make_values",
    "reduce_mismatch",
    "render",
]

DTYPES = ("float64", "float32", "int64", "bool")
FLOATS = ("float64", "float32")

# Kinds of disagreement. Forward kinds are bare, backward ones carry their stage.
_BASE_KINDS = (
    "num_outputs",
    "not_a_tensor",
    "dtype",
    "shape",
    "requires_grad",
    "nan_pattern",
    "value",
    "signed_zero",
    "raises_only_numbagrad",
    "raises_only_torch",
)
KINDS = (
    _BASE_KINDS
    + tuple(f"grad_{k}" for k in (*_BASE_KINDS, "none"))
    + tuple(f"gradgrad_{k}" for k in (*_BASE_KINDS, "none"))
)

# Conditions a known deviation may require (see known_deviations.py); computed from the
# tensors and Python numbers the guilty step receives (``grad*`` stages: every input).
FEATURES = (
    "nan",
    "inf",
    "nonfinite",
    "signed_zero",
    "zero",
    "ties",
    "empty",
    "zero_dim",
    "float32",
    "float64",
    "int64",
    "bool",
    "mixed_dtypes",
    "python_scalar",
    "noncontig",
    "large",
    "int_input",
    "bool_input",
    "torch_not_implemented",
)
# ... and ``variant:<name>`` (the step calls the op through that variant of its OpInfo).

# Forward tolerances (rtol, atol) per dtype; ops in ACCUMULATING also get
# ``eps * 64 * scale`` with scale the L1 norm of their inputs (summation order).
FWD_TOL = {"float64": (1e-9, 1e-12), "float32": (2e-5, 1e-6)}
GRAD_TOL = {"float64": (1e-7, 1e-10), "float32": (2e-4, 1e-5)}
GRADGRAD_TOL = {"float64": (1e-6, 1e-9), "float32": (1e-3, 1e-4)}
ACCUMULATING = frozenset(
    (
        "sum mean prod logsumexp norm var std softmax log_softmax cumsum cumprod matmul mm bmm "
        "dot outer einsum scatter_add write_through_view"
    ).split()
)
LARGE = 4096  # numbagrad.kernels.KERNEL_MIN: from here the njit kernels run

NAN_FILL = {"float64": np.nan, "float32": np.nan, "int64": 77, "bool": True}


class Ref:
    """A reference to program input ``name`` or to output ``i`` of step ``name``."""

    __slots__ = ("i", "name")

    def __init__(self, name, i=None):
        self.name = name
        self.i = i

    def __repr__(self):
        return self.name if self.i is None else f"{self.name}[{self.i}]"

    def __eq__(self, other):
        return isinstance(other, Ref) and (self.name, self.i) == (other.name, other.i)

    def __hash__(self):
        return hash((self.name, self.i))


# ---------------------------------------------------------------------------------------------
# JSON encoding of step arguments
# ---------------------------------------------------------------------------------------------


def encode(obj):
    """Step arguments -> JSON-compatible data (tuples, slices, Ellipsis, refs tagged)."""
    if isinstance(obj, Ref):
        return {"ref": obj.name} if obj.i is None else {"ref": obj.name, "i": obj.i}
    if isinstance(obj, tuple):
        return {"tuple": [encode(o) for o in obj]}
    if isinstance(obj, list):
        return [encode(o) for o in obj]
    if isinstance(obj, dict):
        return {"dict": {k: encode(v) for k, v in obj.items()}}
    if isinstance(obj, slice):
        return {"slice": [obj.start, obj.stop, obj.step]}
    if obj is Ellipsis:
        return {"ellipsis": 1}
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def decode(obj):
    """Inverse of :func:`encode`."""
    if isinstance(obj, list):
        return [decode(o) for o in obj]
    if isinstance(obj, dict):
        if "ref" in obj:
            return Ref(obj["ref"], obj.get("i"))
        if "tuple" in obj:
            return tuple(decode(o) for o in obj["tuple"])
        if "dict" in obj:
            return {k: decode(v) for k, v in obj["dict"].items()}
        if "slice" in obj:
            return slice(*obj["slice"])
        if "ellipsis" in obj:
            return Ellipsis
        return {k: decode(v) for k, v in obj.items()}  # step kwargs
    return obj


def refs_in(obj):
    """The refs inside (decoded) step arguments, in order."""
    if isinstance(obj, Ref):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [r for o in obj for r in refs_in(o)]
    if isinstance(obj, dict):
        return [r for o in obj.values() for r in refs_in(o)]
    return []


def scalars_in(obj):
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, slice)):
        return []
    if isinstance(obj, (int, float)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [s for o in obj for s in scalars_in(o)]
    if isinstance(obj, dict):
        return [s for o in obj.values() for s in scalars_in(o)]
    return []


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

_SPECIALS = np.array(
    [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        100.0,
        -100.0,
        89.0,
        -89.0,
        710.0,
        1e-30,
        -1e-30,
        3.0,
        -3.0,
    ]
)


def make_values(shape, dtype, kind, seed):
    """The values of a generated input: a seeded draw of ``kind``.

    ``normal``: uniform in [-3, 3); ``positive``: in [0.1, 3); ``ints``: integer-valued in
    [-3, 3] with signed zeros (ties); ``special``: normal with a quarter drawn from NaN,
    +-inf, +-0, +-1e-30, overflow edges (89, 710) and small integers; ``index``: int64 in
    [0, 5); ``bool``: fair coin.
    """
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if dtype == "bool" or kind == "bool":
        a = rng.uniform(size=shape) < 0.5
    elif dtype == "int64":
        lo, hi = (0, 5) if kind == "index" else (-4, 5)
        a = rng.integers(lo, hi, shape)
    elif kind == "positive":
        a = rng.uniform(0.1, 3.0, shape)
    elif kind == "ints":
        a = rng.integers(-3, 4, shape).astype(np.float64)
        a = np.where(a == 0, np.where(rng.uniform(size=shape) < 0.5, -0.0, 0.0), a)
    elif kind == "special":
        a = rng.uniform(-3.0, 3.0, shape)
        pick = rng.uniform(size=shape) < 0.25
        a = np.where(pick, rng.choice(_SPECIALS, size=shape), a)
    else:
        a = rng.uniform(-3.0, 3.0, shape)
    return np.asarray(a).astype(dtype)


def _expand_base_shape(shape, dims):
    return tuple(1 if d in dims else s for d, s in enumerate(shape))


def input_array(inp):
    """The logical array an input holds (before its view), as NumPy."""
    vals = inp["values"]
    shape = tuple(inp["shape"])
    view = inp.get("view")
    if "data" in vals:
        a = np.array(vals["data"], dtype=inp["dtype"]).reshape(shape)
        return a
    if view and view[0] == "expand":
        base = make_values(
            _expand_base_shape(shape, view[1]), inp["dtype"], vals["kind"], vals["seed"]
        )
        return np.broadcast_to(base, shape)
    return make_values(shape, inp["dtype"], vals["kind"], vals["seed"])


def _c_array(a):
    return np.array(a, order="C")  # np.ascontiguousarray would make a 0-d array 1-d


def base_array(inp):
    """The array of the leaf an input's view is taken from."""
    a = input_array(inp)
    view = inp.get("view")
    if not view:
        return _c_array(a)
    tag = view[0]
    if tag == "T":
        return _c_array(np.swapaxes(a, view[1], view[2]))
    if tag == "step":
        d = view[1]
        shape = list(a.shape)
        shape[d] *= 2
        base = np.full(shape, NAN_FILL[inp["dtype"]], dtype=a.dtype)
        base[(slice(None),) * d + (slice(None, None, 2),)] = a
        return base
    if tag == "offset":
        pad = np.full((1, *a.shape[1:]), NAN_FILL[inp["dtype"]], dtype=a.dtype)
        return np.concatenate([pad, a], axis=0)
    if tag == "expand":
        return _c_array(
            a[tuple(slice(0, 1) if d in view[1] else slice(None) for d in range(a.ndim))]
        )
    raise ValueError(f"unknown view {view!r}")


def apply_view(base, view, shape):
    """The tensor a program sees, made from its leaf ``base`` (any module)."""
    if not view:
        return base
    tag = view[0]
    if tag == "T":
        return base.transpose(view[1], view[2])
    if tag == "step":
        return base[(slice(None),) * view[1] + (slice(None, None, 2),)]
    if tag == "offset":
        return base[1:]
    if tag == "expand":
        return base.expand(*shape)
    raise ValueError(f"unknown view {view!r}")


def cotangent(shape, dtype, seed):
    """The seeded cotangent (and second-order weight) arrays of the gradient stages."""
    return np.random.default_rng(seed).standard_normal(tuple(shape)).astype(dtype)


def program_cotangent(program, out):
    """The cotangent of the gradient target ``out``: the program's explicit one (a step
    isolated from a longer program keeps the gradient that reached it), else seeded."""
    cot = program.get("cotangent")
    if cot is not None:
        return np.array(cot["data"], dtype=dtype_name(out)).reshape(tuple(out.shape))
    return cotangent(out.shape, dtype_name(out), program["seed"])


# ---------------------------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------------------------


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def is_tensor(m, obj):
    return isinstance(obj, m.Tensor)


def op_call(step):
    """The callable ``fn(m, *args, **kwargs)`` of a step."""
    info = ops_by_name[step["op"]]
    variant = step.get("variant")
    if variant:
        fn = info.variants[variant]
        return lambda m, *a, **k: fn(m, *a, **k)
    return info.op


def _resolve(obj, env):
    if isinstance(obj, Ref):
        v = env[obj.name]
        return v if obj.i is None else v[obj.i]
    if isinstance(obj, list):
        return [_resolve(o, env) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_resolve(o, env) for o in obj)
    if isinstance(obj, dict):
        return {k: _resolve(v, env) for k, v in obj.items()}
    return obj


class Snap:
    """A copy of one output: dtype name, shape, requires_grad and values (NumPy)."""

    __slots__ = ("dtype", "requires_grad", "shape", "values")

    def __init__(self, t):
        self.dtype = dtype_name(t)
        self.shape = tuple(t.shape)
        self.requires_grad = bool(t.requires_grad)
        if getattr(t, "_is_zerotensor", None) and t._is_zerotensor():
            self.values = np.zeros(self.shape, dtype=self.dtype)  # torch's ZeroTensor
        else:
            self.values = np.array(t.detach().numpy())


class Run:
    """One library's run of a program: per step a list of :class:`Snap` (or a non-tensor
    marker), the error that stopped it, and the live environment."""

    def __init__(self):
        self.steps = []
        self.error = None  # (step index, exception)
        self.env = {}
        self.bases = []  # (input name, leaf tensor) for inputs with grad=True


def materialize(m, inp):
    """(tensor the program sees, leaf) of one input under module ``m``."""
    base = m.tensor(base_array(inp))
    if inp.get("grad") and inp["dtype"] in FLOATS:
        base.requires_grad_(True)
    return apply_view(base, inp.get("view"), tuple(inp["shape"])), base


def execute(m, program, upto=None):
    """Run the forward of ``program`` (its first ``upto`` steps) under module ``m``."""
    run = Run()
    for inp in program["inputs"]:
        value, base = materialize(m, inp)
        run.env[inp["name"]] = value
        if base.requires_grad:
            run.bases.append((inp["name"], base))
    steps = program["steps"] if upto is None else program["steps"][:upto]
    for i, step in enumerate(steps):
        try:
            args = _resolve(decode(step["args"]), run.env)
            kwargs = _resolve(decode(step.get("kwargs") or {}), run.env)
            out = op_call(step)(m, *args, **kwargs)
        except Exception as e:
            run.error = (i, e)
            break
        run.env[f"s{i}"] = out
        run.steps.append(snapshot(m, out))
    return run


def snapshot(m, out):
    """[Snap, ...] of a result, or a string saying what it is instead of tensors."""
    try:
        if is_tensor(m, out):
            return [Snap(out)]
        if isinstance(out, (tuple, list)) and all(is_tensor(m, o) for o in out):
            return [Snap(o) for o in out]
    except Exception as e:
        return f"unreadable result ({_err(e)})"
    return type(out).__name__


def grad_target(run, m):
    """The last floating result that requires grad: (step index, output index) or None."""
    for i in range(len(run.steps) - 1, -1, -1):
        snaps = run.steps[i]
        if isinstance(snaps, str):
            continue
        for k in range(len(snaps) - 1, -1, -1):
            if snaps[k].dtype in FLOATS and snaps[k].requires_grad:
                return i, k
    return None


def _target_tensor(run, target):
    i, k = target
    out = run.env[f"s{i}"]
    return out if not isinstance(out, (tuple, list)) else out[k]


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


def _eps(dtype):
    return float(np.finfo(dtype).eps) if dtype in FLOATS else 0.0


def compare_values(a, b, dtype, tol, scale=0.0, signed_zeros=False):
    """None, or (kind, detail) for NumPy arrays ``a`` (numbagrad) and ``b`` (torch); zeros
    of opposite signs count as equal unless ``signed_zeros``."""
    if dtype not in FLOATS:
        if np.array_equal(a, b):
            return None
        bad = np.argwhere(a != b)
        where = tuple(int(i) for i in bad[0]) if bad.size else ()
        return "value", f"at {where}: {a[where]!r} != {b[where]!r}"
    na, nb = np.isnan(a), np.isnan(b)
    if not np.array_equal(na, nb):
        where = tuple(int(i) for i in np.argwhere(na != nb)[0])
        return "nan_pattern", f"at {where}: {a[where]!r} vs {b[where]!r}"
    ok = ~na
    a, b = a[ok].astype(np.float64), b[ok].astype(np.float64)
    infa, infb = np.isinf(a), np.isinf(b)
    if not np.array_equal(infa, infb) or not np.array_equal(a[infa], b[infb]):
        i = int(np.argwhere((infa != infb) | (infa & (a != b)))[0][0])
        return "value", f"non-finite mismatch: {a[i]!r} vs {b[i]!r}"
    fa, fb = a[~infa], b[~infb]
    if not fa.size:
        return None
    rtol, atol = tol
    with np.errstate(all="ignore"):
        err = np.abs(fa - fb)
        bound = atol + rtol * np.abs(fb) + 64 * _eps(dtype) * scale
    bad = err > bound
    if not np.any(bad):
        if signed_zeros:
            z = (fa == 0) & (fb == 0) & (np.signbit(fa) != np.signbit(fb))
            if np.any(z):
                i = int(np.argmax(z))
                return (
                    "signed_zero",
                    f"{np.count_nonzero(z)} zeros differ in sign: {fa[i]!r} vs {fb[i]!r}",
                )
        return None
    i = int(np.argmax(np.where(bad, err / np.maximum(bound, 1e-300), 0)))
    return "value", (
        f"{np.count_nonzero(bad)} of {bad.size} differ; worst {fa[i]!r} vs "
        f"{fb[i]!r} (abs {err[i]:.3g}, allowed {bound[i]:.3g})"
    )


def _l1(arrays):
    s = 0.0
    for a in arrays:
        if a.dtype.kind == "f" and a.size:
            with np.errstate(all="ignore"):
                v = np.abs(a[np.isfinite(a)].astype(np.float64))
            s += float(v.sum()) * max(1.0, float(v.max()) if v.size else 1.0)
    return s


def compare_snaps(sa, sb, tol, scale=0.0, prefix=""):
    """First disagreement between two lists of :class:`Snap` (numbagrad, torch)."""
    if isinstance(sa, str) or isinstance(sb, str):
        if sa != sb:
            return prefix + "not_a_tensor", f"{sa!r} vs {sb!r}"
        return None
    if len(sa) != len(sb):
        return prefix + "num_outputs", f"{len(sa)} outputs vs {len(sb)}"
    for k, (a, b) in enumerate(zip(sa, sb)):
        if a.dtype != b.dtype:
            return prefix + "dtype", f"output {k}: {a.dtype} vs {b.dtype}"
        if a.shape != b.shape:
            return prefix + "shape", f"output {k}: {a.shape} vs {b.shape}"
        if a.requires_grad != b.requires_grad:
            return prefix + "requires_grad", f"output {k}: {a.requires_grad} vs {b.requires_grad}"
        r = compare_values(
            a.values, b.values, a.dtype, tol.get(a.dtype, (0, 0)), scale, signed_zeros=not prefix
        )
        if r:
            return prefix + r[0], f"output {k}: {r[1]}"
    return None


def _err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


def step_inputs(program, run, i):
    """The torch-side NumPy values of the tensors step ``i`` receives."""
    out = []
    for r in refs_in(decode(program["steps"][i]["args"])) + refs_in(
        decode(program["steps"][i].get("kwargs") or {})
    ):
        v = run.env.get(r.name)
        if v is None:
            continue
        v = v if r.i is None else v[r.i]
        out.append(np.array(v.detach().numpy()))
    return out


def compare_forward(program, ng_run, t_run):
    """(step, kind, detail) of the first forward disagreement, or None."""
    n = max(len(ng_run.steps), len(t_run.steps))
    for i in range(n + 1):
        e_ng = ng_run.error if ng_run.error and ng_run.error[0] == i else None
        e_t = t_run.error if t_run.error and t_run.error[0] == i else None
        if e_ng and e_t:
            return None  # both raise: agree, and the program ends here
        if e_ng:
            return i, "raises_only_numbagrad", _err(e_ng[1])
        if e_t:
            return i, "raises_only_torch", _err(e_t[1])
        if i >= n:
            return None
        step = program["steps"][i]
        scale = _l1(step_inputs(program, t_run, i)) if step["op"] in ACCUMULATING else 0.0
        r = compare_snaps(ng_run.steps[i], t_run.steps[i], FWD_TOL, scale)
        if r:
            return i, r[0], r[1]
    return None


def _grads_to_snaps(grads):
    return [None if g is None else Snap(g) for g in grads]


def _compare_grad_lists(ga, gb, prefix, tol, none_matters=True):
    for k, (a, b) in enumerate(zip(ga, gb)):
        if (a is None) != (b is None):
            if none_matters:
                return (
                    prefix + "none",
                    f"input {k}: {'None' if a is None else 'tensor'} vs "
                    f"{'None' if b is None else 'tensor'}",
                )
            a = a or _zeros_like_snap(b)
            b = b or _zeros_like_snap(a)
        if a is None:
            continue
        if a.dtype != b.dtype:
            return prefix + "dtype", f"input {k}: {a.dtype} vs {b.dtype}"
        if a.shape != b.shape:
            return prefix + "shape", f"input {k}: {a.shape} vs {b.shape}"
        scale = float(np.max(np.abs(b.values[np.isfinite(b.values)]), initial=0.0))
        rtol, atol = tol[a.dtype]
        r = compare_values(a.values, b.values, a.dtype, (rtol, atol + rtol * scale))
        if r:
            return prefix + r[0], f"input {k}: {r[1]}"
    return None


def _zeros_like_snap(s):
    z = Snap.__new__(Snap)
    z.dtype, z.shape, z.requires_grad = s.dtype, s.shape, False
    z.values = np.zeros(s.shape, dtype=s.values.dtype)
    return z


def first_order(m, program, run, target):
    """The first-order gradients of the target w.r.t. the leaves (list of Snap/None)."""
    out = _target_tensor(run, target)
    cot = m.tensor(program_cotangent(program, out))
    leaves = [b for _, b in run.bases]
    if program.get("grad_mode") == "backward":
        out.backward(cot)
        grads = [b.grad for b in leaves]
    else:
        grads = m.autograd.grad(out, leaves, cot, allow_unused=True)
    return _grads_to_snaps(grads)


def second_order(m, program, run, target):
    """Second-order terms: d<grad(out, leaves, v), w>/d(leaves, v), None read as zeros."""
    out = _target_tensor(run, target)
    cot = m.tensor(program_cotangent(program, out)).requires_grad_(True)
    leaves = [b for _, b in run.bases]
    gs = m.autograd.grad(out, leaves, cot, create_graph=True, allow_unused=True)
    terms = []
    for j, (g, b) in enumerate(zip(gs, leaves)):
        if g is not None and g.requires_grad:
            w = m.tensor(cotangent(b.shape, dtype_name(b), program["seed"] + 1 + j))
            terms.append((g * w).sum())
    if not terms:
        return "no second-order terms"
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    hs = m.autograd.grad(total, [*leaves, cot], allow_unused=True)
    return [None if h is None else Snap(h) for h in hs]


def _stage(fn, m, program, run, target):
    try:
        return fn(m, program, run, target), None
    except Exception as e:
        return None, e


class Result(dict):
    """A check's outcome: ``status`` ('ok', 'agree_raise', 'mismatch', 'drift'), and for a
    mismatch ``stage``, ``kind``, ``step``, ``op``, ``detail``, ``features``."""


def check(program, ng, torch, *, t_run=None, isolate_drift=True):
    """Run ``program`` under numbagrad (``ng``) and ``torch`` and compare; see module doc."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return _check(program, ng, torch, t_run, isolate_drift)


def _check(program, ng, torch, t_run, isolate_drift):
    t_run = t_run or execute(torch, program)
    ng_run = execute(ng, program)
    fwd = compare_forward(program, ng_run, t_run)
    if fwd:
        i, kind, detail = fwd
        res = _mismatch(program, t_run, "forward", kind, i, detail)
        if isolate_drift and not _inputs_identical(program, ng_run, t_run, i):
            # The step saw (slightly) different values: blame it only if it disagrees on
            # identical ones too.
            iso = isolate(program, t_run, i)
            if iso is not None:
                r = check(iso, ng, torch, isolate_drift=False)
                if r["status"] != "mismatch" or r["kind"] != kind:
                    return Result(
                        status="drift",
                        stage="forward",
                        kind=kind,
                        step=i,
                        op=program["steps"][i]["op"],
                        detail=detail,
                    )
        return res
    status = "agree_raise" if t_run.error else "ok"
    target = grad_target(t_run, torch)
    if target is None:
        return Result(status=status)
    if grad_target(ng_run, ng) != target:
        return _mismatch(
            program,
            t_run,
            "grad",
            "grad_requires_grad",
            target[0],
            f"gradient target {grad_target(ng_run, ng)} vs {target}",
        )
    g_t, e_t = _stage(first_order, torch, program, t_run, target)
    g_n, e_n = _stage(first_order, ng, program, ng_run, target)
    r = _compare_stage(g_n, e_n, g_t, e_t, "grad_", GRAD_TOL, True)
    if r:
        return _mismatch(program, t_run, "grad", r[0], target[0], r[1])
    if not all(inp["dtype"] == "float64" or not inp.get("grad") for inp in program["inputs"]):
        return Result(status=status)
    upto = target[0] + 1
    t2, n2 = execute(torch, program, upto), execute(ng, program, upto)
    h_t, e_t = _stage(second_order, torch, program, t2, target)
    h_n, e_n = _stage(second_order, ng, program, n2, target)
    if isinstance(h_t, str) or isinstance(h_n, str):
        if isinstance(h_t, str) and isinstance(h_n, str):
            return Result(status=status)
        h_t = h_t if not isinstance(h_t, str) else [None] * (len(t2.bases) + 1)
        h_n = h_n if not isinstance(h_n, str) else [None] * (len(n2.bases) + 1)
    r = _compare_stage(h_n, e_n, h_t, e_t, "gradgrad_", GRADGRAD_TOL, False)
    if r:
        return _mismatch(program, t_run, "gradgrad", r[0], target[0], r[1])
    return Result(status=status)


def _compare_stage(g_n, e_n, g_t, e_t, prefix, tol, none_matters):
    if e_n and e_t:
        return None
    if e_n:
        return prefix + "raises_only_numbagrad", _err(e_n)
    if e_t:
        return prefix + "raises_only_torch", _err(e_t)
    return _compare_grad_lists(g_n, g_t, prefix, tol, none_matters)


def _inputs_identical(program, ng_run, t_run, i):
    step = program["steps"][i]
    for r in refs_in(decode(step["args"])) + refs_in(decode(step.get("kwargs") or {})):
        if not r.name.startswith("s"):
            continue
        j = int(r.name[1:])
        a = ng_run.steps[j] if j < len(ng_run.steps) else None
        b = t_run.steps[j] if j < len(t_run.steps) else None
        if a is None or b is None or isinstance(a, str) or isinstance(b, str):
            return False
        for sa, sb in zip(a, b):
            if sa.values.shape != sb.values.shape or not np.array_equal(
                sa.values, sb.values, equal_nan=sa.dtype in FLOATS
            ):
                return False
            if sa.dtype in FLOATS and not np.array_equal(
                np.signbit(sa.values), np.signbit(sb.values)
            ):
                return False
    return True


def _mismatch(program, t_run, stage, kind, step, detail):
    features = features_of(program, t_run, step if stage == "forward" else None)
    if kind.endswith("raises_only_torch") and detail.startswith("NotImplementedError"):
        features.add("torch_not_implemented")  # torch has no kernel for these dtypes
    variant = program["steps"][step].get("variant")
    if variant:
        features.add(f"variant:{variant}")
    return Result(
        status="mismatch",
        stage=stage,
        kind=kind,
        step=step,
        op=program["steps"][step]["op"],
        variant=program["steps"][step].get("variant"),
        detail=detail,
        features=sorted(features),
    )


# ---------------------------------------------------------------------------------------------
# Features (conditions of known deviations)
# ---------------------------------------------------------------------------------------------


def features_of(program, t_run, step=None):
    """The FEATURES that hold for step ``step``'s inputs (None: the program's inputs and
    every step's arguments)."""
    arrays, dtypes, scalars, views = [], set(), [], False
    steps = range(len(program["steps"])) if step is None else [step]
    names = set()
    for i in steps:
        if i >= len(program["steps"]):
            continue
        st = program["steps"][i]
        args = decode(st["args"]), decode(st.get("kwargs") or {})
        scalars += scalars_in(args)
        for r in refs_in(args):
            names.add(r.name)
            v = t_run.env.get(r.name)
            if v is None:
                continue
            v = v if r.i is None else v[r.i]
            if hasattr(v, "detach"):
                arrays.append(np.array(v.detach().numpy()))
                dtypes.add(dtype_name(v))
                views = views or not v.is_contiguous()
    for inp in program["inputs"]:
        if inp["name"] in names and inp.get("view"):
            views = True
    if step is None and program.get("cotangent") is not None:
        arrays.append(np.array(program["cotangent"]["data"], dtype=np.float64))
    f = set()
    for a in arrays:
        if a.size == 0:
            f.add("empty")
        if a.ndim == 0:
            f.add("zero_dim")
        if a.size >= LARGE:
            f.add("large")
        if a.dtype.kind == "f" and a.size:
            if np.isnan(a).any():
                f.update(("nan", "nonfinite"))
            if np.isinf(a).any():
                f.update(("inf", "nonfinite"))
            z = a == 0
            if z.any():
                f.add("zero")
                if np.signbit(a[z]).any():
                    f.add("signed_zero")
        if a.size > 1 and a.dtype.kind in "fi" and np.unique(a.ravel()).size < a.size:
            f.add("ties")  # equal values (NaNs, and -0.0 with 0.0, count as equal)
    for s in scalars:
        if isinstance(s, float) and not math.isfinite(s):
            f.update(("nonfinite", "nan" if math.isnan(s) else "inf"))
    f.update(d for d in dtypes if d in DTYPES)
    if "int64" in dtypes:
        f.add("int_input")
    if "bool" in dtypes:
        f.add("bool_input")
    if len(dtypes) > 1:
        f.add("mixed_dtypes")
    if scalars:
        f.add("python_scalar")
    if views:
        f.add("noncontig")
    return f


# ---------------------------------------------------------------------------------------------
# Reduction of a mismatch
# ---------------------------------------------------------------------------------------------

ISOLATE_MAX_ELEMENTS = 512  # isolated programs carry their values: keep reproducers small
ISOLATE_MAX_ATTRIBUTION = 1_000_000  # a larger isolated step only names the guilty op


def isolate(program, t_run, i):
    """Step ``i`` alone, on the torch values it saw (program inputs keep their layout)."""
    step = program["steps"][i]
    args, kwargs = decode(step["args"]), decode(step.get("kwargs") or {})
    inputs, rename = [], {}
    by_name = {inp["name"]: inp for inp in program["inputs"]}
    for r in refs_in((args, kwargs)):
        if r in rename:
            continue
        if r.name in by_name:
            inp = dict(by_name[r.name])
            inp["name"] = f"x{len(inputs)}"
        else:
            v = t_run.env.get(r.name)
            if v is None:
                return None
            v = v if r.i is None else v[r.i]
            a = np.array(v.detach().numpy())
            inp = {
                "name": f"x{len(inputs)}",
                "dtype": dtype_name(v),
                "shape": list(a.shape),
                "grad": bool(v.requires_grad),
                "view": None,
                "values": {
                    "data": a.astype(np.float64 if a.dtype.kind == "f" else a.dtype)
                    .ravel()
                    .tolist()
                },
            }
        rename[r] = Ref(inp["name"])
        inputs.append(inp)

    def sub(o):
        if isinstance(o, Ref):
            return rename[o]
        if isinstance(o, list):
            return [sub(x) for x in o]
        if isinstance(o, tuple):
            return tuple(sub(x) for x in o)
        if isinstance(o, dict):
            return {k: sub(v) for k, v in o.items()}
        return o

    new_step = dict(
        step, args=encode(sub(args)), kwargs={k: encode(v) for k, v in sub(kwargs).items()}
    )
    return {
        "seed": program["seed"],
        "grad_mode": program.get("grad_mode", "grad"),
        "inputs": inputs,
        "steps": [new_step],
    }


def prefix(program, n):
    """The first ``n`` steps of ``program`` and the inputs they use."""
    steps = program["steps"][:n]
    used = {
        r.name
        for st in steps
        for r in refs_in((decode(st["args"]), decode(st.get("kwargs") or {})))
    }
    return dict(
        program, inputs=[inp for inp in program["inputs"] if inp["name"] in used], steps=steps
    )


def explicit_elements(program):
    """How many values ``program`` spells out (inputs and cotangent)."""
    n = sum(len(inp["values"].get("data", ())) for inp in program["inputs"])
    return n + len((program.get("cotangent") or {}).get("data", ()))


def reduce_mismatch(program, result, ng, torch, log=None):
    """A smaller program with the same stage and kind of mismatch: the shortest prefix,
    then the guilty step alone on the values it saw. Returns (program, result)."""

    def same(r):
        return r["status"] == "mismatch" and r["kind"] == result["kind"]

    best, best_res = program, result
    last = result["step"] + 1
    for n in range(1, last + 1):
        cand = prefix(program, n)
        if log:
            log(cand)
        r = check(cand, ng, torch)
        if same(r):
            best, best_res = cand, r
            break
    if len(best["steps"]) > 1 and result["stage"] == "forward":
        t_run = execute(torch, best)
        iso = isolate(best, t_run, len(best["steps"]) - 1)
        if iso is not None and explicit_elements(iso) <= ISOLATE_MAX_ELEMENTS:
            if log:
                log(iso)
            r = check(iso, ng, torch)
            if same(r):
                best, best_res = iso, r
    elif len(best["steps"]) > 1:
        # A gradient mismatch: find a step that disagrees alone, on the values it saw and
        # with the gradient that reached it in torch (scanning from the target back). A
        # large one only names the guilty op; the (compact) prefix stays the reproducer.
        for iso in _isolated_backward_steps(best, torch):
            if log:
                log(iso)
            r = check(iso, ng, torch)
            if r["status"] == "mismatch" and r["stage"] == result["stage"]:
                if explicit_elements(iso) <= ISOLATE_MAX_ELEMENTS:
                    best, best_res = iso, r
                else:
                    best_res = Result(r, attributed=True)
                break
        else:
            # No single-output step disagrees alone, and the isolation does not reach
            # multi-output steps (their outputs get separate cotangents): the last of them
            # whose outputs carry gradients is the only step left to blame.
            multi = _last_multi_output_step(best, torch)
            if multi is not None:
                best_res = Result(
                    best_res, step=multi, op=best["steps"][multi]["op"], attributed=True
                )
    return best, best_res


def _last_multi_output_step(program, torch):
    """The index of the last step with several outputs, one of which requires grad and is
    used by a later step (None if there is none)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        t_run = execute(torch, program)
    steps = program["steps"]
    used = set()
    for j in range(len(steps) - 1, -1, -1):
        v = t_run.env.get(f"s{j}")
        if (
            f"s{j}" in used
            and isinstance(v, (tuple, list))
            and any(is_tensor(torch, o) and o.requires_grad for o in v)
        ):
            return j
        step = steps[j]
        args = (decode(step["args"]), decode(step.get("kwargs") or {}))
        used.update(r.name for r in refs_in(args))
    return None


def _isolated_backward_steps(program, torch):
    """For each single-output step, last first: the step alone with its torch inputs and
    the torch gradient of the target with respect to its output as cotangent."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        t_run = execute(torch, program)
        target = grad_target(t_run, torch)
        if target is None or t_run.error:
            return []
        out = _target_tensor(t_run, target)
        steps = []
        for j in range(target[0], -1, -1):
            v = t_run.env.get(f"s{j}")
            if is_tensor(torch, v) and v.requires_grad and dtype_name(v) in FLOATS:
                steps.append((j, v))
        if not steps:
            return []
        try:
            cot = torch.tensor(program_cotangent(program, out))
            grads = torch.autograd.grad(out, [v for _, v in steps], cot, allow_unused=True)
        except Exception:
            return []
    found = []
    for (j, _), g in zip(steps, grads):
        if g is None:
            continue
        iso = isolate(program, t_run, j)
        if iso is None:
            continue
        try:
            a = np.array(g.detach().numpy())
        except RuntimeError:  # torch's ZeroTensor (a gradient known to be 0) has no array
            a = np.zeros(tuple(g.shape))
        iso["cotangent"] = {"data": a.astype(np.float64).ravel().tolist()}
        if explicit_elements(iso) <= ISOLATE_MAX_ATTRIBUTION:
            found.append(iso)
    return found


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------

_OPERATORS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "pow": "**",
    "remainder": "%",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "bitwise_or": "|",
    "bitwise_xor": "^",
    "matmul": "@",
}
_PLAIN_OP = OpInfo("_", None, None)._op.__code__


def _lit(v):
    if isinstance(v, Ref):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(_lit(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(_lit(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_lit(x)}" for k, x in v.items()) + "}"
    if isinstance(v, slice):
        return f"slice({_lit(v.start)}, {_lit(v.stop)}, {_lit(v.step)})"
    if v is Ellipsis:
        return "..."
    return repr(v)


def _array_lit(a):
    if a.dtype == np.bool_:
        return repr(a.tolist())
    if a.dtype.kind == "i":
        return repr(a.tolist())
    return _lit(a.astype(np.float64).tolist() if a.ndim else float(a))


def _render_input(inp):
    name, dtype = inp["name"], inp["dtype"]
    view = inp.get("view")
    base = f"{name}_base" if view else name
    a = base_array(inp)
    if a.size <= 64:
        data = _array_lit(a)
    else:
        vals = inp["values"]
        if "data" in vals:
            data = f"np.array({vals['data']!r}).reshape({tuple(a.shape)!r})"
        else:
            return [
                f"# {name}: {dtype}{tuple(inp['shape'])}, values {vals}, view {view}",
                f"{base} = torch.tensor(fuzz_program.base_array({inp!r}))"
                + (".requires_grad_()" if inp.get("grad") and dtype in FLOATS else ""),
            ] + (
                [f"{name} = fuzz_program.apply_view({base}, {view!r}, {tuple(inp['shape'])!r})"]
                if view
                else []
            )
    rg = ", requires_grad=True" if inp.get("grad") and dtype in FLOATS else ""
    if a.size == 0:  # tolist() drops the dimensions after a zero
        lines = [f"{base} = torch.zeros({tuple(a.shape)!r}, dtype=torch.{dtype}{rg})"]
    else:
        lines = [f"{base} = torch.tensor({data}, dtype=torch.{dtype}{rg})"]
    if view:
        tag = view[0]
        if tag == "T":
            lines.append(f"{name} = {base}.transpose({view[1]}, {view[2]})")
        elif tag == "step":
            lines.append(f"{name} = {base}[{', '.join([':'] * view[1] + ['::2'])}]")
        elif tag == "offset":
            lines.append(f"{name} = {base}[1:]")
        else:
            lines.append(f"{name} = {base}.expand{tuple(inp['shape'])!r}")
    return lines


def render_call(step):
    """One step as a Python expression over ``torch``."""
    op, variant = step["op"], step.get("variant")
    args = decode(step["args"])
    kwargs = decode(step.get("kwargs") or {})
    info = ops_by_name[op]
    a = [_lit(x) for x in args]
    kw = [f"{k}={_lit(v)}" for k, v in kwargs.items()]
    if variant == "operator":
        return f"-{a[0]}" if op == "neg" else f"({a[0]} {_OPERATORS[op]} {a[1]})"
    if variant == "builtin":
        return f"abs({a[0]})"
    if variant in ("method", "method_varargs", "varargs") and op not in ("where",):
        rest = a[1:]
        if variant != "method":
            rest = [_lit(x) for x in (args[1] or ())]
        return f"{a[0]}.{'view' if op == 'view' else op}({', '.join(rest + kw)})"
    if op == "where" and variant == "method":
        return f"{a[1]}.where({a[0]}, {a[2]})"
    if variant in ("max_binary", "min_binary"):
        return f"torch.{variant[:3]}({', '.join(a + kw)})"
    if variant == "clip":
        return f"torch.clip({', '.join(a + kw)})"
    if variant == "tuple":
        return f"torch.cat(tuple({a[0]}), {', '.join(a[1:] + kw)})".replace(", )", ")")
    if variant == "list":
        return f"torch.einsum({a[0]}, [{', '.join(a[1:])}])"
    if info.torch_op is None and info._op.__code__ is _PLAIN_OP:
        return f"torch.{op}({', '.join(a + kw)})"
    special = {
        "getitem": lambda: f"{a[0]}[{a[1]}]",
        "view": lambda: f"{a[0]}.view({a[1]})",
        "expand": lambda: f"{a[0]}.expand({', '.join(a[1:])})",
        "expand_as": lambda: f"{a[0]}.expand_as({a[1]})",
        "radd": lambda: f"2.5 + {a[0]}",
        "rsub": lambda: f"2.5 - {a[0]}",
        "rmul": lambda: f"2.5 * {a[0]}",
        "rtruediv": lambda: f"2.5 / {a[0]}",
        "rpow": lambda: f"2.5 ** {a[0]}",
    }
    if op in special:
        return special[op]()
    return f"OPS[{op!r}].op(torch, {', '.join(a + kw)})"


def render(program, result=None):
    """``program`` as a Python script body over a name ``torch`` (bind it to torch or to
    numbagrad); it leaves what the failing stage compares in ``result``."""
    stage = (result or {}).get("stage", "forward")
    lines = ["import numpy as np", "nan, inf = float('nan'), float('inf')"]
    body = []
    for inp in program["inputs"]:
        body += _render_input(inp)
    for i, step in enumerate(program["steps"]):
        body.append(f"s{i} = {render_call(step)}")
    if any("OPS[" in b for b in body):
        lines.append("from _opdb import ops_by_name as OPS  # tests/ on sys.path")
    if any("fuzz_program." in b for b in body):
        lines.append("import fuzz_program  # tests/fuzz on sys.path")
    lines += body
    n = len(program["steps"])
    if stage == "forward" or not n:
        lines.append(f"result = s{n - 1}" if n else "result = None")
        return "\n".join(lines)
    # the gradient target: the last floating result requiring grad, as check() picks it
    tgt = result.get("target") or f"s{result['step']}"
    leaves = [
        (f"{inp['name']}_base" if inp.get("view") else inp["name"])
        for inp in program["inputs"]
        if inp.get("grad") and inp["dtype"] in FLOATS
    ]
    seed = program["seed"]
    lines.append(f"out = {tgt}")
    cot = (
        f"torch.tensor(np.random.default_rng({seed}).standard_normal(tuple(out.shape)), "
        f"dtype=out.dtype)"
    )
    if program.get("cotangent") is not None:  # the gradient that reached this step
        cot = (
            f"torch.tensor({_lit(program['cotangent']['data'])}, dtype=out.dtype)"
            ".reshape(out.shape)"
        )
    if stage == "grad":
        lines.append(f"cot = {cot}")
        if program.get("grad_mode") == "backward":
            lines.append("out.backward(cot)")
            lines.append(f"result = [{', '.join(f'{x}.grad' for x in leaves)}]")
        else:
            lines.append(
                f"result = torch.autograd.grad(out, [{', '.join(leaves)}], cot, allow_unused=True)"
            )
        return "\n".join(lines)
    lines.append(f"cot = {cot}.requires_grad_()")
    lines.append(f"leaves = [{', '.join(leaves)}]")
    lines.append("gs = torch.autograd.grad(out, leaves, cot, create_graph=True, allow_unused=True)")
    lines.append(
        f"ws = [torch.tensor(np.random.default_rng({seed} + 1 + j).standard_normal("
        "tuple(b.shape)), dtype=b.dtype) for j, b in enumerate(leaves)]"
    )
    lines.append(
        "total = sum((g * w).sum() for g, w in zip(gs, ws) if g is not None and g.requires_grad)"
    )
    lines.append("result = torch.autograd.grad(total, [*leaves, cot], allow_unused=True)")
    return "\n".join(lines)


def target_name(program, result, torch):
    """``s<i>`` or ``s<i>[k]``: the gradient target of ``program`` (for :func:`render`)."""
    run = execute(torch, program)
    t = grad_target(run, torch)
    if t is None:
        return None
    out = run.env[f"s{t[0]}"]
    return f"s{t[0]}" if not isinstance(out, (tuple, list)) else f"s{t[0]}[{t[1]}]"
