"""The primitive declarations: registry, rule slots, data operands, and the op database's
coverage of every primitive (NOTE [Primitive declaration] in ``numbagrad/ops/_op.py``)."""

import inspect
import re

import numpy as np
import pytest
from _opdb import op_db
from _trace import trace

import numbagrad
from numbagrad.ops import PRIMITIVES, Primitive
from numbagrad.ops import shape as shape_mod
from numbagrad.ops._op import bind

PRIMS = sorted(PRIMITIVES.items())


def _rule_sources(prim, slot):
    """Source of the tensor-level rule in ``slot``; for ``both_ways`` rules, the formula."""
    rule = getattr(prim, slot)
    if rule is None:
        return None
    fn = getattr(rule, "__func__", rule)
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    if "formula" in closure:  # made by ops._rules.both_ways
        fn = closure["formula"].cell_contents
    src = inspect.getsource(fn)
    deriv = getattr(prim, "derivative", None)
    if deriv is not None:  # the Unary family's vjp is g * derivative(F, saved)
        src += inspect.getsource(deriv)
    return src


# A rule that reads raw arrays or branches on data gives a silent wrong answer under vmap
# or a tracer (docs/developer.rst, design decisions, 1): these spellings must not appear in
# tensor-level rules.
_FORBIDDEN = [r"\._data\b", r"_make\(", r"\bbool\(", r"\.item\(\)", r"\.numpy\(\)"]


@pytest.mark.parametrize("name,prim", PRIMS, ids=[n for n, _ in PRIMS])
def test_rules_do_not_read_data(name, prim):
    for slot in ("vjp", "jvp", "batch"):
        src = _rule_sources(prim, slot)
        if src is None:
            continue
        for pattern in _FORBIDDEN:
            assert not re.search(pattern, src), f"{name}.{slot} uses {pattern!r}"


@pytest.mark.parametrize("name,prim", PRIMS, ids=[n for n, _ in PRIMS])
def test_declaration(name, prim):
    assert issubclass(prim, Primitive)
    assert (
        prim.grad_fn.endswith("Backward0")
        or prim.grad_fn == "CopySlices"
        or prim.node_name is not Primitive.node_name
    )
    if prim.differentiable and name != "_FunctionApply":
        assert prim.vjp is not None, f"{name} is differentiable but has no vjp"
    with pytest.raises(TypeError, match="primitive declaration"):
        prim()


@pytest.mark.parametrize("slot", ["jvp", "batch"])
def test_empty_rule_slots_raise_naming_the_op(slot):
    empty = [p for _, p in PRIMS if getattr(p, slot) is None]
    assert empty  # the transforms issue fills these in
    for prim in empty:
        with pytest.raises(NotImplementedError, match=prim.__name__):
            prim.rule(slot)
    assert PRIMITIVES["Mul"].rule("vjp") is PRIMITIVES["Mul"].vjp


def test_primitive_names_are_unique():
    with pytest.raises(TypeError, match="two primitives are named"):
        type("Mul", (Primitive,), {})


def test_rules_receive_params_explicitly():
    # a rule is a plain function of (ctx, grads, **params): callable with no node attributes
    x = numbagrad.rand(3, 4, dtype=numbagrad.float64, requires_grad=True)
    y = x.sum(1, keepdim=True)
    node = y.grad_fn
    assert node.prim is PRIMITIVES["Sum"]
    assert node.params == {"dims": (1,), "keepdim": True, "dtype": None}
    assert not hasattr(node, "dims")
    g = node.prim.vjp(node, numbagrad.ones(3, 1, dtype=numbagrad.float64), **node.params)
    assert tuple(g.shape) == (3, 4)
    assert node.input_shape(0) == (3, 4)


def test_data_operands_are_tensors_of_the_graph():
    x = numbagrad.rand(5, dtype=numbagrad.float64, requires_grad=True)
    idx = numbagrad.tensor([4, 0, 4])
    y = x[idx]
    node = y.grad_fn
    assert node.prim is PRIMITIVES["Index"]
    assert len(node.next_functions) == 2 and node.next_functions[1] == (None, 0)
    # the index is saved like any operand: changing it in place is caught
    idx[0] = 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    c = numbagrad.tensor([True, False, True])
    w = numbagrad.where(c, x[:3], 0.0)
    assert w.grad_fn.prim is PRIMITIVES["Where"]
    assert w.grad_fn.next_functions[0] == (None, 0)


def test_bind_is_the_entry_point():
    x = numbagrad.tensor([1.0, -2.0])
    assert bind(PRIMITIVES["Abs"], (x,)).tolist() == [1.0, 2.0]


# -- the op database covers every primitive ----------------------------------------------
_TRACES = {}


def _traced(info):
    if info.name not in _TRACES:
        _TRACES[info.name] = trace(info)
    return _TRACES[info.name]


@pytest.mark.parametrize("info", op_db, ids=lambda i: i.name)
def test_entry_names_its_primitives(info):
    forward, _ = _traced(info)
    assert set(info.primitives) == forward, (
        f"{info.name}: declares {sorted(info.primitives)}, binds {sorted(forward)}"
    )
    for p in info.primitives:
        assert p in PRIMITIVES


def test_every_primitive_is_exercised_by_some_entry():
    seen = set()
    for info in op_db:
        seen |= _traced(info)[1]
    missing = sorted(set(PRIMITIVES) - seen - set(_TRANSFORM_ONLY))
    assert not missing, f"primitives no op-database entry exercises: {missing}"


# primitives only a transform's values reach, with the call that binds them
_TRANSFORM_ONLY = {
    "CheckIndex": lambda: numbagrad.vmap(
        lambda i: numbagrad.index_select(numbagrad.arange(3.0), 0, i)
    )(numbagrad.tensor([[0], [2]])),
}


@pytest.mark.parametrize("name", sorted(_TRANSFORM_ONLY))
def test_transform_only_primitives_are_bound_under_their_transform(name):
    from _trace import Recorder

    from numbagrad._core import interpreter

    rec = Recorder()
    token = interpreter._CURRENT.set(rec)
    try:
        _TRANSFORM_ONLY[name]()
    finally:
        interpreter._CURRENT.reset(token)
    assert name in rec.seen


def test_capability_flags_exist():
    for info in op_db:
        assert isinstance(info.supports_jvp, bool)
        assert isinstance(info.supports_vmap, bool)
        assert isinstance(info.supports_cuda, bool)


# -- rules written once ----------------------------------------------------------------------
def test_cumprod_second_order_with_several_zeros():
    x = numbagrad.tensor(
        [[0.7, 0.0, 1.2, 0.0, 0.9, 0.0, 1.1]], dtype=numbagrad.float64, requires_grad=True
    )
    assert numbagrad.autograd.gradcheck(lambda t: t.cumprod(1), (x,))
    assert numbagrad.autograd.gradgradcheck(lambda t: t.cumprod(1), (x,))


def test_prod_gradient_with_zeros_is_linear_time():
    # the old rule built O(n^2) ops for a slice with a zero (0.4 s at n = 400)
    values = np.random.default_rng(0).uniform(0.999, 1.001, 2001)
    values[1000] = 0.0
    x = numbagrad.tensor(values, requires_grad=True)
    x.prod().backward()
    others = np.prod(np.delete(x.detach().numpy(), 1000))
    np.testing.assert_allclose(x.grad.numpy()[1000], others)
    assert np.count_nonzero(x.grad.numpy()) == 1


# -- linearity flags ---------------------------------------------------------------------------
_FLAGGED = {n for n, p in PRIMITIVES.items() if p.linearity}


def _has_python_float(obj):
    if isinstance(obj, float):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_python_float(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_python_float(o) for o in obj.values())
    return False


# entries whose op adds a constant of its own (``2.0 + x``, ``beta * input + a @ b``): affine
_AFFINE_ENTRIES = {"radd", "rsub", "rsub_fn", "addmm", "baddbmm", "addbmm", "addmv", "addr"}
_LINEAR_ENTRIES = [
    i
    for i in op_db
    if i.supports_grad
    and i.primitives
    and set(i.primitives) <= _FLAGGED
    and i.name not in _AFFINE_ENTRIES
]


def _outputs(call, leaves):
    return [np.array(o.detach().numpy()) for o in call.float_outputs(*leaves)]


@pytest.mark.parametrize("info", _LINEAR_ENTRIES, ids=lambda i: i.name)
def test_linearity_flags_hold(info):
    """An entry made only of flagged primitives is linear in each float input (and jointly
    linear when every primitive is ``"linear"``): f(a x + b y) == a f(x) + b f(y)."""
    from test_ops import Call

    rng = np.random.default_rng(7)
    joint = all(PRIMITIVES[p].linearity == "linear" for p in info.primitives)
    checked = 0
    for sample in info.sample_inputs():
        if _has_python_float((sample.args, sample.kwargs)):
            continue  # a Python-scalar operand is a constant here: the op is then affine
        call = Call(numbagrad, info, sample, "float64")
        xs = call.leaves
        if not xs:
            continue
        ys = [numbagrad.tensor(rng.standard_normal(tuple(x.shape))) for x in xs]
        a, b = 0.7, -1.3
        groups = [list(range(len(xs)))] if joint else [[i] for i in range(len(xs))]
        for group in groups:
            mix = [a * x + b * y if i in group else x for i, (x, y) in enumerate(zip(xs, ys))]
            only_y = [y if i in group else x for i, (x, y) in enumerate(zip(xs, ys))]
            lhs = _outputs(call, mix)
            fx, fy = _outputs(call, xs), _outputs(call, only_y)
            for k, (left, u, v) in enumerate(zip(lhs, fx, fy)):
                np.testing.assert_allclose(
                    left,
                    a * u + b * v,
                    rtol=1e-10,
                    atol=1e-12,
                    err_msg=f"{sample}, output {k}, inputs {group}",
                )
        checked += 1
    assert checked, f"{info.name}: no sample without Python-scalar operands"


def _explicit_linear_cases():
    """Flagged primitives the op database reaches only through backward rules, applied
    directly: ``(name, fn of float tensors, input shapes)``."""
    P = PRIMITIVES
    idx = numbagrad.tensor([2, 0, 2])
    mask = numbagrad.tensor([True, False, True, True])
    gidx = numbagrad.tensor([[1, 0], [2, 2]])
    geom = ((2, 2), (1, 2), 1)  # a strided 2x2 window of a flat 6-vector
    return [
        (
            "IndexBackward",
            lambda g: bind(
                P["IndexBackward"],
                (g, idx),
                {"key": (shape_mod._Slot(0),), "advanced": True, "shape": (4,)},
            ),
            [(3,)],
        ),
        (
            "DiagonalBackward",
            lambda g: bind(
                P["DiagonalBackward"], (g,), {"shape": (3, 3), "offset": 0, "dim1": 0, "dim2": 1}
            ),
            [(3,)],
        ),
        ("SumTo", lambda g: bind(P["SumTo"], (g,), {"shape": (1, 3)}), [(2, 3)]),
        ("AsStrided", lambda x: bind(P["AsStrided"], (x,), {"geom": geom}), [(6,)]),
        (
            "AsStridedPut",
            lambda x, v: bind(P["AsStridedPut"], (x, v), {"geom": geom}),
            [(6,), (2, 2)],
        ),
        (
            "ScatterAdd",
            lambda x, s: bind(P["ScatterAdd"], (x, gidx, s), {"dim": 1}),
            [(2, 3), (2, 2)],
        ),
        (
            "IndexPut",
            lambda x, v: bind(
                P["IndexPut"], (x, v, idx[:2]), {"key": (shape_mod._Slot(0),), "advanced": True}
            ),
            [(4,), (2,)],
        ),
        ("Where", lambda x, y: bind(P["Where"], (mask, x, y)), [(4,), (4,)]),
        ("ToCopy", lambda x: bind(P["ToCopy"], (x,), {"dtype": np.float32}), [(3,)]),
        ("WindowGather", lambda x: bind(P["WindowGather"], (x, gidx), {}), [(2, 3)]),
        ("WindowScatter", lambda g: bind(P["WindowScatter"], (g, gidx), {"size": 3}), [(2, 2)]),
        ("WindowPut", lambda g: bind(P["WindowPut"], (g, gidx), {"size": 3}), [(2, 2)]),
        (
            "UpsampleBackward",
            lambda g: bind(
                P["UpsampleBackward"],
                (g,),
                {
                    "mode": "cubic",
                    "align": False,
                    "size": (5, 3),
                    "scales": (None, 0.7),
                    "in_size": (2, 4),
                },
            ),
            [(2, 5, 3)],
        ),
    ]


@pytest.mark.parametrize("case", _explicit_linear_cases(), ids=lambda c: c[0])
def test_linearity_flags_hold_for_backward_primitives(case):
    name, fn, shapes = case
    assert PRIMITIVES[name].linearity == "linear"
    rng = np.random.default_rng(3)
    xs = [numbagrad.tensor(rng.standard_normal(s)) for s in shapes]
    ys = [numbagrad.tensor(rng.standard_normal(s)) for s in shapes]
    a, b = 0.5, -2.0
    left = fn(*[a * x + b * y for x, y in zip(xs, ys)]).numpy()
    right = a * fn(*xs).numpy() + b * fn(*ys).numpy()
    np.testing.assert_allclose(left, right, rtol=1e-6, atol=1e-6)


def test_every_linearity_flag_is_checked():
    covered = {c[0] for c in _explicit_linear_cases()}
    for info in _LINEAR_ENTRIES:
        if info.name not in _AFFINE_ENTRIES:
            covered |= set(info.primitives)
    assert _FLAGGED <= covered, sorted(_FLAGGED - covered)


def test_hand_written_fused_rules_say_why():
    """NOTE [Hand-written fused rules] (``ops/_rules.py``): a ``fused_vjp`` that is not made
    by the ``both_ways`` family says, in a comment above it, why it is written by hand."""
    import pathlib

    ops_dir = pathlib.Path(numbagrad.__file__).parent / "ops"
    bare, seen = [], 0
    for path in sorted(ops_dir.glob("*.py")):
        if path.name in ("_rules.py", "linalg_decomp.py"):  # (the family; part 3's file)
            continue
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip().startswith("def fused_vjp("):
                seen += 1
                above = "\n".join(lines[max(0, i - 4) : i])
                if "NOTE [Hand-written fused rules]" not in above:
                    bare.append(f"{path.name}:{i + 1}")
    assert seen > 10, "the scan found no fused rules: did the ops move?"
    assert not bare, f"fused_vjp written by hand without its reason: {bare}"
