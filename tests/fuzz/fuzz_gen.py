"""The seeded random-program generator of the fuzz suite.

``generate(seed, torch)`` builds a program of 1-5 steps over the ops of
``tests/_opdb.py``: a first input (0-d to 4-d, sometimes with an empty dimension, now and
then large enough for the njit kernels, float32/float64/int64/bool, a non-contiguous view
of its leaf in a third of the cases), then steps that each apply an op to the current
value, with fresh operands (broadcastable shapes with size-1 and missing dimensions, other
dtypes, Python scalars), earlier values, dims (negative ones too) and indices drawn by the
op's *schema* below. Every op of the database is drawn: those without a hand-written
schema (the math, special, linalg and nn.functional families) start from one of their
op-database samples (``_from_samples``). A small share of the arguments is invalid on
purpose (dims out of range, shapes that do not broadcast, indices out of bounds): both
libraries must then raise. Float values come in four kinds (``fuzz_program.make_values``):
plain, positive, integer-valued with signed zeros (ties), and special (NaN, +-inf, +-0,
overflow edges).

Generation runs the program under torch as it goes: the shapes and dtypes of the results
choose the next arguments, and the torch run is reused by the check. Everything is drawn
from ``random.Random(seed)`` and seeded NumPy generators, so a seed is a reproducer.
"""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
from _opdb import ops_by_name
from fuzz_program import FLOATS, Ref, encode, execute, snapshot

__all__ = ["SCHEMAS", "generate"]

MAX_ELEMENTS = 2_000_000  # no op may create more (outer products of large vectors, ...)
LARGE_SHAPES = [(4100,), (64, 65), (2, 33, 64), (1, 4099), (3, 1, 1400), (70, 60, 1)]
HUGE_SHAPES = [(450, 450), (200_001,), (2, 100, 1001)]


class Gen:
    """The state of one program under construction."""

    def __init__(self, seed, torch):
        self.rng = random.Random(seed)
        self.torch = torch
        self.seed = seed
        self.program = {"seed": seed, "grad_mode": "grad", "inputs": [], "steps": []}
        self.env = {}
        self.run = None
        self.cur = None
        self.values = []  # refs to every tensor value so far
        self.float_dtype = "float64"
        self.large = False

    # -- random choices -------------------------------------------------------------------------
    def p(self, prob):
        return self.rng.random() < prob

    def choice(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def meta(self, ref):
        v = self.env[ref.name]
        v = v if ref.i is None else v[ref.i]
        return tuple(v.shape), str(v.dtype).split(".")[-1]

    def shape(self, ref=None):
        return self.meta(ref or self.cur)[0]

    def dtype(self, ref=None):
        return self.meta(ref or self.cur)[1]

    def random_shape(self, max_ndim=4):
        nd = self.choice([0, 1, 1, 2, 2, 2, 3, 3, 4][: 1 + 2 * max_ndim])
        return tuple(self.dim_size() for _ in range(nd))

    def dim_size(self, small=False):
        r = self.rng.random()
        if r < 0.04:
            return 0
        if r < 0.24:
            return 1
        return self.rng.randint(2, 3 if small else 5)

    def dim(self, nd, bad=0.04):
        """A dim of an ``nd``-d tensor, negative 40% of the time, out of range rarely."""
        if self.p(bad):
            return self.choice([nd, -nd - 1, nd + 2])
        n = max(nd, 1)
        d = self.rng.randrange(n)
        return d - n if self.p(0.4) else d

    def dims(self, nd, unique=True):
        """A tuple of distinct dims (sometimes a repeated one)."""
        if nd == 0:
            return (self.choice([0, -1]),)
        k = self.rng.randint(1, nd)
        ds = self.rng.sample(range(nd), k)
        out = tuple(d - nd if self.p(0.3) else d for d in ds)
        if not unique and self.p(0.05):
            out = (*out, out[0])
        return out

    def scalar(self, kind="any"):
        if kind == "int":
            return self.choice([0, 1, 2, -1, 3])
        if kind == "exp":
            return self.choice([2, 3, 0, -1, 0.5, -1.5, 2.5, 1])
        return self.choice([2.5, -1.0, 0.0, 2, 0, -3, 0.5, 1e-3, math.inf, math.nan, True])

    # -- values -----------------------------------------------------------------------------------
    def value_kind(self, dtype):
        if dtype not in FLOATS:
            return "int"
        return self.choice(["normal", "normal", "positive", "ints", "special", "special"])

    def tensor(self, shape, dtype=None, kind=None, grad=None, view=None):
        """A fresh program input; returns its Ref."""
        dtype = dtype or self.float_dtype
        name = f"x{len(self.program['inputs'])}"
        if grad is None:
            grad = dtype in FLOATS and self.p(0.7)
        inp = {
            "name": name,
            "dtype": dtype,
            "shape": list(shape),
            "grad": bool(grad),
            "view": view if view is not None else self.random_view(shape),
            "values": {
                "kind": kind or self.value_kind(dtype),
                "seed": self.seed * 64 + len(self.program["inputs"]),
            },
        }
        self.program["inputs"].append(inp)
        from fuzz_program import materialize

        value, _ = materialize(self.torch, inp)
        self.env[name] = value
        ref = Ref(name)
        self.values.append(ref)
        return ref

    def random_view(self, shape):
        nd = len(shape)
        if nd == 0 or not self.p(0.3):
            return None
        options = ["step", "offset"]
        if nd >= 2:
            options.append("T")
        if any(s != 1 for s in shape):
            options.append("expand")
        tag = self.choice(options)
        if tag == "T":
            a, b = self.rng.sample(range(nd), 2)
            return ["T", a, b]
        if tag == "step":
            return ["step", self.rng.randrange(nd)]
        if tag == "expand":
            dims = [d for d in range(nd) if self.p(0.5)] or [self.rng.randrange(nd)]
            return ["expand", dims]
        return ["offset"]

    def partner_dtype(self, dtype=None):
        if self.p(0.75):
            return dtype or self.dtype()
        return self.choice(["float64", "float32", "int64", "bool"])

    def broadcast_shape(self, shape):
        """A shape that broadcasts with ``shape`` (rarely one that does not)."""
        r = self.rng.random()
        nd = len(shape)
        if r < 0.4:
            return shape
        if r < 0.55 and nd:
            return shape[self.rng.randint(1, nd) :]
        if r < 0.75:
            return tuple(1 if self.p(0.5) else s for s in shape)
        if r < 0.85:
            return ()
        if r < 0.95:
            lead = tuple(self.rng.randint(1, 3) for _ in range(self.rng.randint(1, 2)))
            if math.prod(lead) * math.prod(shape) <= MAX_ELEMENTS:
                return lead + shape
            return shape
        if nd:  # incompatible
            d = self.rng.randrange(nd)
            return (*shape[:d], shape[d] + 1 if shape[d] != 0 else 2, *shape[d + 1 :])
        return (2,)

    def partner(self, shape=None, dtype=None, same_shape=False):
        """An operand for the current value: an earlier value or a fresh input."""
        shape = self.shape() if shape is None else shape
        target = shape if same_shape else None
        if self.p(0.2):
            cands = [
                r
                for r in self.values
                if (target is None or self.shape(r) == target)
                and self._broadcasts(self.shape(r), shape)
                and (dtype is None or self.dtype(r) == dtype)
            ]
            if cands:
                return self.choice(cands)
        s = shape if same_shape else self.broadcast_shape(shape)
        return self.tensor(s, dtype or self.partner_dtype())

    @staticmethod
    def _broadcasts(a, b):
        try:
            np.broadcast_shapes(a, b)
            return True
        except ValueError:
            return False

    def index_tensor(self, high, shape, bad=0.04):
        """An int64 index tensor with entries in [0, high) (rarely negative / too big)."""
        name = f"x{len(self.program['inputs'])}"
        rng = np.random.default_rng(self.seed * 64 + len(self.program["inputs"]))
        a = rng.integers(0, max(high, 1), shape) if high > 0 else np.zeros(shape, np.int64)
        if self.p(bad) and a.size:
            a.flat[rng.integers(a.size)] = self.choice([-1, high, high + 3])
        inp = {
            "name": name,
            "dtype": "int64",
            "shape": list(shape),
            "grad": False,
            "view": None,
            "values": {"data": a.astype(np.int64).ravel().tolist()},
        }
        self.program["inputs"].append(inp)
        self.env[name] = self.torch.tensor(a.astype(np.int64))
        return Ref(name)

    def bool_tensor(self, shape):
        return self.tensor(shape, "bool", "bool", grad=False)

    # -- steps ----------------------------------------------------------------------------------
    def variant(self, op, allowed=None):
        names = [v for v in ops_by_name[op].variants if allowed is None or v in allowed]
        if names and self.p(0.5):
            return self.choice(names)
        return None

    def add_step(self, op, args, kwargs=None, variant=None):
        step = {
            "op": op,
            "variant": variant,
            "args": encode(list(args)),
            "kwargs": {k: encode(v) for k, v in (kwargs or {}).items()},
        }
        self.program["steps"].append(step)


# ---------------------------------------------------------------------------------------------
# Schemas: (g) -> (args, kwargs, variant) or None when the op does not fit the current value
# ---------------------------------------------------------------------------------------------


def _unary(g, op):
    return [g.cur], {}, g.variant(op)


def _nan_to_num(g, op):
    kw = {}
    for k in ("nan", "posinf", "neginf"):
        if g.p(0.4):
            kw[k] = g.choice([0.0, 1.5, -2.0, 9.0])
    return [g.cur], kw, g.variant(op)


_SCALAR_OK = set("add sub mul div pow fmod remainder eq ne lt le gt ge".split())


def _binary(g, op):
    if op in _SCALAR_OK and g.p(0.2):
        other = g.scalar("exp" if op == "pow" else "any")
        return [g.cur, other], {}, g.variant(op)
    dtype = None
    if op.startswith("bitwise") or op.startswith("logical"):
        dtype = g.choice(["bool", "bool", "int64", g.dtype()])
    other = g.partner(dtype=dtype)
    args = [g.cur, other] if g.p(0.75) else [other, g.cur]
    return args, {}, g.variant(op)


def _where(g, op):
    shape = g.shape()
    if g.dtype() == "bool" and g.p(0.7):
        cond = g.cur
        x = g.tensor(g.broadcast_shape(shape))
    else:
        cond = g.bool_tensor(g.broadcast_shape(shape))
        x = g.cur
    y = g.scalar() if g.p(0.2) else g.partner(shape)
    return [cond, x, y], {}, g.variant(op)


def _clamp(g, op):
    r = g.rng.random()
    lo, hi = sorted([g.choice([-1.0, -0.5, 0.0, 0.3, 1.0, 2]), g.choice([-0.2, 0.5, 1.0, 3])])
    if r < 0.35:
        args, kw = [g.cur, lo, hi], {}
    elif r < 0.5:
        args, kw = [g.cur], {"min": lo}
    elif r < 0.65:
        args, kw = [g.cur], {"max": hi}
    elif r < 0.72:
        args, kw = [g.cur, hi + 1, lo], {}  # min > max
    elif r < 0.75:
        args, kw = [g.cur], {}  # neither: an error in both
    else:
        shape = g.shape()
        args, kw = (
            [g.cur],
            {"min": g.tensor(g.broadcast_shape(shape)), "max": g.tensor(g.broadcast_shape(shape))},
        )
    return args, kw, g.variant(op)


def _reduce(g, op):
    nd = len(g.shape())
    kw = {}
    r = g.rng.random()
    if r < 0.3:
        pass
    elif r < 0.75 or op == "prod":
        kw["dim"] = g.dim(nd)
    else:
        kw["dim"] = g.dims(nd, unique=False)
    if "dim" in kw and g.p(0.5):
        kw["keepdim"] = True
    return [g.cur], kw, g.variant(op)


def _max_min(g, op):
    nd = len(g.shape())
    if g.p(0.35):
        return [g.cur], {}, g.variant(op)
    kw = {"dim": g.dim(nd)}
    if g.p(0.5):
        kw["keepdim"] = True
    return [g.cur], kw, g.variant(op)


def _arg(g, op):
    nd = len(g.shape())
    kw = {}
    if g.p(0.6):
        kw["dim"] = g.dim(nd)
    if g.p(0.4):
        kw["keepdim"] = True
    return [g.cur], kw, g.variant(op)


def _all_any(g, op):
    nd = len(g.shape())
    kw = {}
    if g.p(0.6):
        kw["dim"] = g.dim(nd)
        if g.p(0.5):
            kw["keepdim"] = True
    return [g.cur], kw, g.variant(op)


def _logsumexp(g, op):
    nd = len(g.shape())
    dim = g.dim(nd) if g.p(0.7) else g.dims(nd)
    kw = {"keepdim": True} if g.p(0.4) else {}
    return [g.cur, dim], kw, g.variant(op)


def _norm(g, op):
    nd = len(g.shape())
    kw = {}
    if g.p(0.6):
        kw["p"] = g.choice([1, 2, 3, 2.0, "fro"])
    if g.p(0.5):
        kw["dim"] = g.dim(nd) if g.p(0.7) else g.dims(nd)
        if g.p(0.5):
            kw["keepdim"] = True
    if kw.get("p") == "fro" and isinstance(kw.get("dim"), int):
        kw["dim"] = (kw["dim"],)
    return [g.cur], kw, g.variant(op)


def _var(g, op):
    nd = len(g.shape())
    args, kw = [g.cur], {}
    if g.p(0.6):
        args.append(g.dim(nd) if g.p(0.7) else g.dims(nd))
    r = g.rng.random()
    if r < 0.3:
        kw["correction"] = g.choice([0, 1, 2])
    elif r < 0.45:
        kw["unbiased"] = g.p(0.5)
    if len(args) > 1 and g.p(0.4):
        kw["keepdim"] = True
    return args, kw, g.variant(op)


def _dim_op(g, op):
    return [g.cur, g.dim(len(g.shape()))], {}, g.variant(op)


def _fill(g, op):
    return [g.cur, g.choice([2.5, -1.0, 0.0, math.nan, 3])], {}, None


def _reshape_target(g, shape):
    n = math.prod(shape)
    if g.p(0.05):
        return (n + 1,)
    if n == 0:
        out = list(g.choice([(0,), (0, 3), (2, 0), (0, 1, 2), (-1, 0)]))
        return tuple(out) if not g.p(0.3) else (0, -1)
    factors = []
    m = n
    for p in (2, 3, 5, 7, 11, 13):
        while m % p == 0:
            factors.append(p)
            m //= p
    if m > 1:
        factors.append(m)
    g.rng.shuffle(factors)
    k = g.rng.randint(1, 4)
    dims = [1] * k
    for f in factors:
        dims[g.rng.randrange(k)] *= f
    if g.p(0.3):
        dims.insert(g.rng.randrange(len(dims) + 1), 1)
    if g.p(0.4):
        dims[g.rng.randrange(len(dims))] = -1
    if n == 1 and g.p(0.3):
        return ()
    return tuple(dims)


def _reshape(g, op):
    return [g.cur, _reshape_target(g, g.shape())], {}, g.variant(op)


def _flatten(g, op):
    nd = len(g.shape())
    args = [g.cur]
    if g.p(0.6):
        args.append(g.dim(nd))
        if g.p(0.6):
            args.append(g.dim(nd))
    return args, {}, g.variant(op)


def _unflatten(g, op):
    shape = g.shape()
    nd = len(shape)
    if nd == 0:
        return [g.cur, 0, (1,)], {}, g.variant(op)
    d = g.dim(nd, bad=0.02)
    size = shape[d] if -nd <= d < nd else 1
    sizes = _reshape_target(g, (size,))
    return [g.cur, d, sizes if sizes else (1,)], {}, g.variant(op)


def _transpose(g, op):
    nd = len(g.shape())
    return [g.cur, g.dim(nd), g.dim(nd)], {}, g.variant(op)


def _permute(g, op):
    nd = len(g.shape())
    perm = list(range(nd))
    g.rng.shuffle(perm)
    perm = [p - nd if g.p(0.3) else p for p in perm]
    if perm and g.p(0.05):
        perm[-1] = perm[0]
    return [g.cur, tuple(perm)], {}, g.variant(op)


def _movedim(g, op):
    nd = len(g.shape())
    if g.p(0.6) or nd < 2:
        return [g.cur, g.dim(nd), g.dim(nd)], {}, g.variant(op)
    k = g.rng.randint(1, nd)
    return (
        [g.cur, tuple(g.rng.sample(range(nd), k)), tuple(g.rng.sample(range(nd), k))],
        {},
        g.variant(op),
    )


def _expand_target(g, shape):
    out = [(-1 if g.p(0.3) else s) if s != 1 else g.choice([1, 2, 3, 4, -1]) for s in shape]
    lead = [g.rng.randint(1, 3) for _ in range(g.choice([0, 0, 1, 2]))]
    out = lead + out
    if shape and g.p(0.04):
        d = g.rng.randrange(len(shape))
        if shape[d] > 1:
            out[len(lead) + d] = shape[d] + 1  # not expandable
    new = math.prod(abs(s) if s != -1 else 1 for s in out) * max(1, math.prod(shape))
    if new > MAX_ELEMENTS:
        return tuple(-1 if s != 1 else 1 for s in shape)
    return tuple(out)


def _expand(g, op):
    target = _expand_target(g, g.shape())
    if g.p(0.2):
        return [g.cur, target], {}, None
    return [g.cur, *target], {}, None


def _expand_as(g, op):
    shape = g.shape()
    t = _expand_target(g, shape)
    lead = len(t) - len(shape)
    target = tuple(s if s != -1 else shape[i - lead] for i, s in enumerate(t))
    return [g.cur, g.tensor(target, "int64", grad=False)], {}, None


def _broadcast_to(g, op):
    t = _expand_target(g, g.shape())
    shape = g.shape()
    lead = len(t) - len(shape)
    target = tuple(s if s != -1 else shape[i - lead] for i, s in enumerate(t))
    return [g.cur, target], {}, g.variant(op)


def _squeeze(g, op):
    nd = len(g.shape())
    r = g.rng.random()
    if r < 0.35:
        return [g.cur], {}, g.variant(op)
    if r < 0.8:
        return [g.cur, g.dim(nd)], {}, g.variant(op)
    return [g.cur, g.dims(nd)], {}, g.variant(op)


def _unsqueeze(g, op):
    nd = len(g.shape())
    d = g.rng.randint(-nd - 1, nd) if not g.p(0.03) else nd + 2
    return [g.cur, d], {}, g.variant(op)


def _index_key(g, shape, for_set=False):
    nd = len(shape)
    if nd == 0:
        return g.choice([Ellipsis, None, (), (None, Ellipsis)])
    r = g.rng.random()
    if r < 0.12:  # a bool mask
        if g.p(0.6):
            return g.bool_tensor(shape)
        return g.bool_tensor(shape[:1])
    if r < 0.25:  # an index tensor
        k = g.choice([(g.rng.randint(0, 4),), (2, 2), ()])
        idx = g.index_tensor(shape[0], k)
        if nd > 1 and g.p(0.4):
            return (slice(None), g.index_tensor(shape[1], k)) if g.p(0.5) else (idx, Ellipsis)
        return idx
    parts = []
    i = 0
    while i < nd and len(parts) < nd + 1:
        c = g.rng.random()
        if c < 0.3:
            n = shape[i]
            parts.append(g.rng.randint(-n, n - 1) if n and not g.p(0.04) else n)
            i += 1
        elif c < 0.7:
            n = shape[i]
            start = g.choice([None, 0, 1, -1, -2])
            stop = g.choice([None, n, n - 1, 2, -1])
            step = g.choice([None, 1, 2, 3]) if not g.p(0.03) else -1
            parts.append(slice(start, stop, step))
            i += 1
        elif c < 0.8 and not for_set:
            parts.append(None)
        elif c < 0.88 and Ellipsis not in parts:
            parts.append(Ellipsis)
            i = nd - g.rng.randint(0, nd - i)
        else:
            break
    if not parts:
        return slice(None)
    return parts[0] if len(parts) == 1 and g.p(0.5) else tuple(parts)


def _getitem(g, op):
    return [g.cur, _index_key(g, g.shape())], {}, None


def _setitem(g, op):
    shape = g.shape()
    key = _index_key(g, shape, for_set=True)
    try:
        np_key = _np_key(g, key)
        target = np.empty(shape)[np_key].shape
    except (IndexError, ValueError, TypeError):
        target = ()
    if g.p(0.25):
        value = g.choice([1.5, -2.0, 0.0, math.nan])
    else:
        t = target[g.rng.randint(0, len(target)) :] if target and g.p(0.4) else target
        value = g.tensor(t if not g.p(0.3) else tuple(1 if g.p(0.5) else s for s in t))
    return [g.cur, value, key], {}, None


def _np_key(g, key):
    if isinstance(key, Ref):
        v = g.env[key.name]
        return np.array(v.numpy())
    if isinstance(key, tuple):
        return tuple(_np_key(g, k) for k in key)
    return key


def _index_select(g, op):
    shape = g.shape()
    nd = len(shape)
    d = g.dim(nd)
    n = shape[d] if -nd <= d < nd and nd else 1
    idx = g.index_tensor(n, (g.rng.randint(0, 5),) if not g.p(0.05) else (2, 2))
    return [g.cur, d, idx], {}, g.variant(op)


def _gather_index(g, shape, d):
    nd = len(shape)
    dd = d % nd if nd and -nd <= d < nd else 0
    ishape = tuple(
        (g.rng.randint(0, 4) if i == dd else g.rng.randint(0, s) if s else 0) if not g.p(0.7) else s
        for i, s in enumerate(shape)
    )
    high = shape[dd] if nd else 1
    return g.index_tensor(high, ishape)


def _gather(g, op):
    shape = g.shape()
    d = g.dim(len(shape))
    return [g.cur, d, _gather_index(g, shape, d)], {}, g.variant(op)


def _scatter_add(g, op):
    shape = g.shape()
    d = g.dim(len(shape))
    idx = _gather_index(g, shape, d)
    ishape = g.shape(idx)
    src_shape = tuple(s + (1 if g.p(0.2) else 0) for s in ishape)
    return (
        [g.cur, d, idx, g.tensor(src_shape, g.dtype() if g.dtype() in FLOATS else None)],
        {},
        g.variant(op),
    )


def _take_along_dim(g, op):
    shape = g.shape()
    nd = len(shape)
    if g.p(0.3) or nd == 0:
        n = math.prod(shape)
        return [g.cur, g.index_tensor(n, (g.rng.randint(0, 5),))], {}, g.variant(op)
    d = g.dim(nd)
    dd = d % nd if -nd <= d < nd else 0
    ishape = tuple(
        g.rng.randint(0, 4) if i == dd else (1 if g.p(0.3) else s) for i, s in enumerate(shape)
    )
    return [g.cur, g.index_tensor(shape[dd], ishape), d], {}, g.variant(op)


def _cat(g, op):
    shape = g.shape()
    nd = len(shape)
    d = g.dim(nd) if nd else 0
    dd = d % nd if nd and -nd <= d < nd else 0
    parts = [g.cur]
    for _ in range(g.rng.randint(1, 2)):
        if g.p(0.05):
            parts.append(g.tensor((0,)))
            continue
        s = list(shape)
        if nd:
            s[dd] = g.rng.randint(0, 3)
        parts.append(g.tensor(tuple(s), g.partner_dtype()))
    g.rng.shuffle(parts)
    kw = {"dim": d} if g.p(0.5) else {}
    args = [parts] + ([d] if not kw and g.p(0.7) else [])
    return args, kw, g.variant(op)


def _stack(g, op):
    shape = g.shape()
    parts = [g.cur] + [
        g.partner(shape, same_shape=not g.p(0.05)) for _ in range(g.rng.randint(1, 2))
    ]
    d = g.rng.randint(-len(shape) - 1, len(shape))
    return [parts], ({"dim": d} if g.p(0.8) else {}), None


def _split(g, op):
    shape = g.shape()
    nd = len(shape)
    d = g.dim(nd) if nd else 0
    n = shape[d] if nd and -nd <= d < nd else 0
    if g.p(0.5):
        spec = g.rng.randint(1, max(n, 1) + 1) if not g.p(0.03) else 0
    else:
        cuts = sorted(g.rng.randint(0, n) for _ in range(g.rng.randint(0, 2)))
        spec = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
        if g.p(0.05):
            spec[-1] += 1
    kw = {"dim": d} if g.p(0.6) else {}
    return [g.cur, spec] + ([] if kw or d == 0 else [d]), kw, g.variant(op)


def _chunk(g, op):
    nd = len(g.shape())
    chunks = g.rng.randint(1, 5) if not g.p(0.03) else 0
    d = g.dim(nd)
    return [g.cur, chunks], ({"dim": d} if nd else {}), g.variant(op)


def _flip(g, op):
    return [g.cur, g.dims(len(g.shape()), unique=False)], {}, g.variant(op)


def _roll(g, op):
    nd = len(g.shape())
    if g.p(0.3) or nd == 0:
        return [g.cur, g.rng.randint(-5, 5)], {}, g.variant(op)
    dims = g.dims(nd)
    shifts = tuple(g.rng.randint(-5, 5) for _ in dims)
    if len(dims) == 1 and g.p(0.5):
        return [g.cur, shifts[0], dims[0]], {}, g.variant(op)
    return [g.cur, shifts, dims], {}, g.variant(op)


def _narrow(g, op):
    shape = g.shape()
    nd = len(shape)
    d = g.dim(nd)
    n = shape[d] if nd and -nd <= d < nd else 1
    start = g.rng.randint(-n, n) if n else 0
    rest = n - (start % n if n else 0)
    length = g.rng.randint(0, max(rest, 0)) if not g.p(0.04) else rest + 1
    return [g.cur, d, start, length], {}, g.variant(op)


def _diagonal(g, op):
    nd = len(g.shape())
    if nd < 2 and not g.p(0.1):
        return None
    args = [g.cur]
    kw = {}
    if g.p(0.5):
        kw["offset"] = g.rng.randint(-3, 3)
    if nd >= 2 and g.p(0.5):
        a, b = g.rng.sample(range(nd), 2) if not g.p(0.05) else (0, 0)
        kw["dim1"], kw["dim2"] = a - nd if g.p(0.3) else a, b
    return args, kw, g.variant(op)


def _tri(g, op):
    nd = len(g.shape())
    if nd < 2 and not g.p(0.1):
        return None
    if g.p(0.5):
        return [g.cur, g.rng.randint(-3, 3)], {}, g.variant(op)
    return [g.cur], {}, g.variant(op)


def _sort(g, op):
    nd = len(g.shape())
    kw = {}
    if g.p(0.6):
        kw["dim"] = g.dim(nd)
    if g.p(0.5):
        kw["descending"] = True
    return [g.cur], kw, g.variant(op)


def _topk(g, op):
    shape = g.shape()
    nd = len(shape)
    kw = {}
    d = -1
    if g.p(0.5):
        d = kw["dim"] = g.dim(nd)
    n = shape[d] if nd and -nd <= d < nd else 1
    k = g.rng.randint(0, n) if not g.p(0.04) else n + 1
    if g.p(0.4):
        kw["largest"] = False
    return [g.cur, k], kw, g.variant(op)


def _small(g):
    return g.rng.randint(1, 4) if not g.p(0.05) else 0


def _matmul(g, op):
    shape = g.shape()
    nd = len(shape)
    if nd == 0:
        return ([g.cur, g.tensor((2,))], {}, g.variant(op)) if g.p(0.2) else None
    k = shape[-1] if not g.p(0.04) else shape[-1] + 1
    r = g.rng.random()
    if r < 0.3:
        other = (k,)
    elif r < 0.75:
        other = (k, _small(g))
    else:
        batch = shape[:-2] if nd > 2 else (g.rng.randint(1, 3),)
        other = (*tuple(1 if g.p(0.3) else b for b in batch), k, _small(g))
    if math.prod(shape) * math.prod(other[-1:]) > MAX_ELEMENTS:
        other = (k,)
    o = g.tensor(other, g.partner_dtype())
    if g.p(0.2) and len(other) >= 2:  # other on the left: (..., m, k) @ x requires k == rows
        if nd >= 2:
            o2 = g.tensor((*other[:-2], _small(g), shape[-2]), g.partner_dtype())
            return [o2, g.cur], {}, g.variant(op)
    return [g.cur, o], {}, g.variant(op)


def _mm(g, op):
    shape = g.shape()
    if len(shape) != 2 and not g.p(0.05):
        return None
    k = shape[-1] if shape else 2
    return (
        [g.cur, g.tensor((k if not g.p(0.04) else k + 1, _small(g)), g.partner_dtype())],
        {},
        g.variant(op),
    )


def _bmm(g, op):
    shape = g.shape()
    if len(shape) != 3 and not g.p(0.05):
        return None
    b, _, k = shape if len(shape) == 3 else (1, 1, 1)
    return [g.cur, g.tensor((b, k, _small(g)), g.partner_dtype())], {}, g.variant(op)


def _dot(g, op):
    shape = g.shape()
    if len(shape) != 1 and not g.p(0.05):
        return None
    n = shape[0] if shape else 1
    return [g.cur, g.tensor((n if not g.p(0.04) else n + 1,), g.partner_dtype())], {}, g.variant(op)


def _outer(g, op):
    shape = g.shape()
    if len(shape) != 1 and not g.p(0.05):
        return None
    other = (g.rng.randint(0, 4),)
    if math.prod(shape) * other[0] > MAX_ELEMENTS:
        return None
    return [g.cur, g.tensor(other, g.partner_dtype())], {}, g.variant(op)


def _einsum(g, op):
    shape = g.shape()
    nd = len(shape)
    eqs = {
        1: ["i->", "i,i->", "i->i"],
        2: ["ij->ji", "ij->j", "ij->", "ij,jk->ik", "ij,ij->i", "ij,j->i"],
        3: ["bij,bjk->bik", "bij->bji", "bij->b", "bij,bij->"],
    }.get(nd)
    if not eqs:
        return None
    if nd == 2 and shape[0] == shape[1]:
        eqs = [*eqs, "ii->", "ii->i"]
    if nd == 1 and shape[0] <= 50:
        eqs = [*eqs, "i,j->ij"]
    eq = g.choice(eqs)
    lhs = eq.split("->")[0].split(",")
    sizes = dict(zip(lhs[0], shape))
    others = []
    for term in lhs[1:]:
        s = tuple(sizes.setdefault(c, _small(g)) for c in term)
        others.append(g.tensor(s, g.partner_dtype()))
    return [eq, g.cur, *others], {}, g.variant(op)


def _write_through_view(g, op):
    return [g.cur], {}, None


# -- the ops of the op database's family files (_opdb_math/_special/_linalg/_nn) -------------
# Drawn from the op's own samples (``OpInfo.sample_inputs``): their arguments (shapes, dims,
# keyword arguments, index tensors, structured matrices) are valid by construction. The
# sample's first float array is replaced by the current value (always for elementwise ops,
# whose other operands then are broadcastable partners; half the time for the others), and
# the sample's other arrays become program inputs holding the sample's values (a quarter of
# the time a random draw of the same shape: special values, ties). Decompositions whose
# outputs are defined up to a sign or a basis (eigh, svd, qr, ...) keep their samples' values
# and contiguous layouts: their op-database entries call gauge-invariant forms (``|U|``,
# ``U diag(S) Vh``) that are only well defined on the samples' distinct spectra.

_SAMPLES = {}
_ELEMENTWISE_UNARY = set(
    "acos asin atan sinh cosh asinh acosh atanh log10 exp2 trunc frac deg2rad rad2deg sgn "
    "absolute negative positive signbit special.erf special.erfc special.erfcx special.erfinv "
    "special.expit special.exp2 special.expm1 special.log1p special.gammaln special.digamma "
    "special.psi special.i0 special.i0e special.i1 special.i1e special.bessel_j0 "
    "special.bessel_j1 special.ndtr special.ndtri special.log_ndtr special.entr special.sinc "
    "special.polygamma special.multigammaln special.logit special.round nn.functional.gelu "
    "nn.functional.silu nn.functional.elu nn.functional.leaky_relu nn.functional.relu6 "
    "nn.functional.softplus nn.functional.hardtanh nn.functional.selu nn.functional.logsigmoid "
    "nn.functional.softsign nn.functional.mish".split()
)
_ELEMENTWISE_NARY = set(
    "hypot logaddexp logaddexp2 copysign fmax fmin nextafter heaviside float_power lerp "
    "special.xlogy special.xlog1py special.gammainc special.gammaincc special.zeta".split()
)
# Inputs with structure (spectra, definiteness, triangularity): the samples' values only.
_STRUCTURED = set(
    "linalg.cholesky cholesky cholesky_solve linalg.eigh linalg.eigvalsh linalg.svd svd "
    "linalg.svdvals linalg.qr linalg.pinv pinverse linalg.lstsq linalg.solve_triangular "
    "logdet linalg.slogdet slogdet linalg.det det linalg.inv inverse linalg.solve "
    "linalg.matrix_exp matrix_exp linalg.matrix_power matrix_power searchsorted bucketize".split()
)
_SORTED = {"searchsorted", "bucketize"}  # sorted boundaries: never the current value


def _samples(op):
    if op not in _SAMPLES:
        _SAMPLES[op] = ops_by_name[op].sample_inputs()
    return _SAMPLES[op]


def _float_array(a):
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _data_tensor(g, a, structured):
    """A program input holding the sample array ``a`` (floats in the program's float dtype),
    or, a quarter of the time for unstructured ops, a random draw of its shape."""
    dtype = g.float_dtype if a.dtype.kind == "f" else str(a.dtype)
    if not structured and a.dtype.kind == "f" and g.p(0.25):
        return g.tensor(a.shape, dtype)
    name = f"x{len(g.program['inputs'])}"
    grad = dtype in FLOATS and g.p(0.7)
    inp = {
        "name": name,
        "dtype": dtype,
        "shape": list(a.shape),
        "grad": bool(grad),
        "view": None if structured else g.random_view(a.shape),
        "values": {"data": np.asarray(a).astype(dtype).ravel().tolist()},
    }
    g.program["inputs"].append(inp)
    from fuzz_program import materialize

    g.env[name], _ = materialize(g.torch, inp)
    ref = Ref(name)
    g.values.append(ref)
    return ref


def _from_samples(g, op):
    sample = g.choice(_samples(op))
    structured = op in _STRUCTURED
    elementwise = op in _ELEMENTWISE_UNARY or op in _ELEMENTWISE_NARY
    first = next((i for i, a in enumerate(sample.args) if _float_array(a)), None)
    cur_float = g.dtype() in FLOATS
    subst = first is not None and (
        elementwise
        or (not structured and cur_float and g.p(0.5))
        or (structured and op not in _SORTED and g.shape() == sample.args[first].shape and g.p(0.3))
    )
    if elementwise and first is None:
        return None
    nd = len(g.shape())

    def conv(a, top=False):
        if isinstance(a, np.ndarray):
            if op in _ELEMENTWISE_NARY and top and _float_array(a):
                return g.partner()
            return _data_tensor(g, a, structured)
        if isinstance(a, tuple):
            return tuple(conv(b) for b in a)
        if isinstance(a, list):
            return [conv(b) for b in a]
        if isinstance(a, dict):
            return {k: conv(v) for k, v in a.items()}
        return a.item() if isinstance(a, np.generic) else a

    args = [g.cur if subst and i == first else conv(a, top=True) for i, a in enumerate(sample.args)]
    kwargs = {k: conv(v, top=True) for k, v in sample.kwargs.items()}
    if subst and not elementwise and isinstance(kwargs.get("dim"), int) and g.p(0.7):
        kwargs["dim"] = g.dim(nd)
    return args, kwargs, g.variant(op)


SCHEMAS = {}
for _name in (
    "neg abs sign exp expm1 log log1p log2 sqrt rsqrt square reciprocal sin cos tan "
    "tanh sigmoid relu softplus erf floor ceil round radd rsub rmul rtruediv rpow "
    "isnan isinf function_apply nonzero t"
).split():
    SCHEMAS[_name] = _unary
for _name in (
    "add sub mul div pow maximum minimum atan2 fmod remainder eq ne lt le gt ge "
    "logical_and logical_or logical_xor bitwise_or bitwise_xor"
).split():
    SCHEMAS[_name] = _binary
for _name in "sum mean prod amax amin".split():
    SCHEMAS[_name] = _reduce
for _name in "softmax log_softmax cumsum cumprod".split():
    SCHEMAS[_name] = _dim_op
SCHEMAS.update(
    {
        "nan_to_num": _nan_to_num,
        "where": _where,
        "clamp": _clamp,
        "max": _max_min,
        "min": _max_min,
        "argmax": _arg,
        "argmin": _arg,
        "logsumexp": _logsumexp,
        "norm": _norm,
        "var": _var,
        "std": _var,
        "all": _all_any,
        "any": _all_any,
        "fill_": _fill,
        "write_through_view": _write_through_view,
        "reshape": _reshape,
        "view": _reshape,
        "flatten": _flatten,
        "unflatten": _unflatten,
        "transpose": _transpose,
        "permute": _permute,
        "movedim": _movedim,
        "expand": _expand,
        "expand_as": _expand_as,
        "broadcast_to": _broadcast_to,
        "squeeze": _squeeze,
        "unsqueeze": _unsqueeze,
        "getitem": _getitem,
        "setitem": _setitem,
        "index_select": _index_select,
        "gather": _gather,
        "scatter_add": _scatter_add,
        "take_along_dim": _take_along_dim,
        "cat": _cat,
        "stack": _stack,
        "split": _split,
        "chunk": _chunk,
        "flip": _flip,
        "roll": _roll,
        "narrow": _narrow,
        "diagonal": _diagonal,
        "tril": _tri,
        "triu": _tri,
        "sort": _sort,
        "argsort": _sort,
        "topk": _topk,
        "matmul": _matmul,
        "mm": _mm,
        "bmm": _bmm,
        "dot": _dot,
        "outer": _outer,
        "einsum": _einsum,
    }
)
for _name in ops_by_name:
    SCHEMAS.setdefault(_name, _from_samples)
OPS = sorted(SCHEMAS)


def _first_input(g):
    r = g.rng.random()
    g.float_dtype = "float32" if g.p(0.4) else "float64"
    dtype = g.float_dtype if r < 0.75 else ("int64" if r < 0.9 else "bool")
    if g.p(0.06):
        g.large = True
        shape = g.choice(HUGE_SHAPES if g.p(0.12) else LARGE_SHAPES)
    else:
        shape = g.random_shape()
    grad = dtype in FLOATS and g.p(0.85)
    return g.tensor(shape, dtype, grad=grad)


def generate(seed, torch, ops=None):
    """A program for ``seed`` and its torch :class:`fuzz_program.Run` (see module doc).

    ``ops`` restricts the ops drawn (names of ``tests/_opdb.py``)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return _generate(seed, torch, ops or OPS)


def _generate(seed, torch, ops):
    g = Gen(seed, torch)
    g.cur = _first_input(g)
    g.program["grad_mode"] = "backward" if g.p(0.35) else "grad"
    n_steps = g.rng.randint(1, 5)
    for _ in range(n_steps):
        spec = None
        for _attempt in range(8):
            op = g.choice(ops)
            spec = SCHEMAS[op](g, op)
            if spec is not None:
                break
        if spec is None:
            break
        args, kwargs, variant = spec
        g.add_step(op, args, kwargs, variant)
        i = len(g.program["steps"]) - 1
        # run the step under torch now: its result shapes the next step's arguments
        run = execute(torch, g.program)
        g.run = run
        if run.error is not None:
            break
        out = run.env[f"s{i}"]
        g.env[f"s{i}"] = out
        snaps = snapshot(torch, out)
        if isinstance(snaps, str):
            break
        if not snaps or any(math.prod(s.shape) > MAX_ELEMENTS for s in snaps):
            break
        seq = isinstance(out, (tuple, list))
        g.cur = Ref(f"s{i}", g.rng.randrange(len(snaps)) if seq else None)
        for j in range(len(snaps)):
            g.values.append(Ref(f"s{i}", j if seq else None))
    if g.run is None:
        g.run = execute(torch, g.program)
    return g.program, g.run
