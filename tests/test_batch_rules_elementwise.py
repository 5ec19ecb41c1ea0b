"""Batching and JVP rules of the elementwise primitives (``ops/binary.py``, ``ops/unary.py``):
``where`` with a batched condition, scalar operands and batch dimensions in different places
under ``vmap``, and forward-mode conventions at ties and bounds (against PyTorch)."""

import warnings

import numpy as np
import pytest
from _batching import B, arr, loop, t, vmapped

import numbagrad
from numbagrad import func
from numbagrad.ops import PRIMITIVES, bind


def check_vmap(fn, args, in_dims):
    got = vmapped(fn, args, in_dims)
    want = loop(fn, args, in_dims)
    np.testing.assert_array_equal(arr(got), want)
    return got


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# -- where -------------------------------------------------------------------------------
@pytest.mark.parametrize("cdim", [0, 1, 2])
def test_vmap_where_batched_condition_unbatched_branches(rng, cdim):
    shape = [3, 4]
    shape.insert(cdim, B)
    cond = t(rng.uniform(size=shape) < 0.5, np.bool_)
    a = t(rng.standard_normal((3, 4)))
    b = t(rng.standard_normal((4,)))
    check_vmap(numbagrad.where, (cond, a, b), (cdim, None, None))
    check_vmap(lambda c, x: numbagrad.where(c, x, 0.0), (cond, a), (cdim, None))
    check_vmap(lambda c, y: numbagrad.where(c, 1.5, y), (cond, b), (cdim, None))


def test_vmap_where_everything_batched_in_different_places(rng):
    cond = t(rng.uniform(size=(4, B)) < 0.5, np.bool_)
    a = t(rng.standard_normal((B, 3, 4)))
    b = t(rng.standard_normal((3, 1, B)))
    check_vmap(numbagrad.where, (cond, a, b), (1, 0, 2))
    # a batched branch under an unbatched condition of higher rank
    c2 = t(rng.uniform(size=(2, 3, 4)) < 0.5, np.bool_)
    check_vmap(numbagrad.where, (c2, a, b), (None, 0, 2))


def test_jvp_of_where_under_vmap_with_a_batched_condition(rng):
    cond = t(rng.uniform(size=(B, 5)) < 0.5, np.bool_)
    x = t(rng.standard_normal((5,)))
    v = t(rng.standard_normal((5,)))

    def f(c):
        return func.jvp(lambda x: numbagrad.where(c, x.sin(), x * 2), (x,), (v,))[1]

    got = vmapped(f, (cond,), (0,))
    c = arr(cond)
    want = np.where(c, np.cos(arr(x)) * arr(v), 2 * arr(v))
    np.testing.assert_allclose(arr(got), want, rtol=1e-12)


# -- scalars and batch dimensions ----------------------------------------------------------
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "maximum",
    "minimum",
    "atan2",
    "fmod",
    "remainder",
    "eq",
    "lt",
    "ge",
    "logical_and",
    "logical_xor",
]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("bdim", [0, 1, 2])
def test_vmap_scalar_vs_tensor(rng, name, bdim):
    op = getattr(numbagrad, name)
    shape = [3, 4]
    shape.insert(bdim, B)
    x = t(rng.uniform(0.5, 2.0, shape))
    check_vmap(lambda x: op(x, 1.5), (x,), (bdim,))
    check_vmap(lambda x: op(1.5, x), (x,), (bdim,))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize(
    "da,db,sa,sb",
    [
        (0, 1, (B, 3, 4), (3, B, 4)),  # same rank, different dims
        (1, 1, (3, B, 4), (1, B, 4)),  # same dim: stays in place
        (2, 0, (3, 4, B), (B, 4)),  # different ranks
        (0, None, (B, 4), (2, 3, 4)),  # the unbatched operand has the higher rank
        (1, None, (3, B, 4), (4,)),  # the unbatched operand broadcasts after the batch
        (None, 1, (), (2, B)),  # an unbatched 0-d tensor
    ],
)
def test_vmap_in_dims_on_different_dims(rng, name, da, db, sa, sb):
    op = getattr(numbagrad, name)
    a = t(rng.uniform(0.5, 2.0, sa))
    b = t(rng.uniform(0.5, 2.0, sb))
    check_vmap(op, (a, b), (da, db))


def test_broadcast_batch_keeps_a_shared_batch_dim_in_place(rng):
    add = PRIMITIVES["Add"]
    a = t(rng.standard_normal((3, B, 4)))
    b = t(rng.standard_normal((1, B, 4)))
    out, d = add.batch([a, b], [1, 1])
    assert d == 1 and tuple(out.shape) == (3, B, 4)
    out, d = add.batch([a, 2.0], [1, None])
    assert d == 1
    out, d = PRIMITIVES["Where"].batch([t(np.ones((3, B, 4)), np.bool_), a, 0.0], [1, 1, None])
    assert d == 1
    out, d = PRIMITIVES["Exp"].batch([a], [1])
    assert d == 1
    np.testing.assert_allclose(arr(out), np.exp(arr(a)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.clamp(-0.5, 0.5),
        lambda x: x.clamp(min=0.0),
        lambda x: ~(x > 0),
        lambda x: x.isnan(),
        lambda x: x.nan_to_num(),
        lambda x: x.clone(),
        lambda x: bind(PRIMITIVES["ToCopy"], (x,), {"dtype": np.dtype(np.float32)}),
        lambda x: x.clone().fill_(2.0),
        lambda x: -x.abs(),
        lambda x: x.abs().sqrt(),
        lambda x: numbagrad.softplus(x, beta=2.0),
        lambda x: x.sign(),
    ],
)
def test_vmap_one_operand_ops_keep_the_batch_dim(rng, fn):
    x = t(rng.standard_normal((3, B, 4)))
    check_vmap(fn, (x,), (1,))


# -- jvp conventions against PyTorch -------------------------------------------------------
def _torch_jvp(torch, fn, primals, tangents):
    tp = tuple(torch.tensor(arr(p)) for p in primals)
    tt = tuple(torch.tensor(arr(v)) for v in tangents)
    return torch.func.jvp(fn, tp, tt)[1].numpy()


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_jvp_maximum_minimum_at_ties_match_pytorch(name):
    torch = pytest.importorskip("torch")
    a = t([1.0, 2.0, 3.0, -1.0, 0.5])
    b = t([1.0, 0.0, 3.0, 2.0, 0.5])
    ta = t([1.0, 2.0, 3.0, 4.0, 5.0])
    tb = t([10.0, 20.0, 30.0, 40.0, 50.0])
    op = getattr(numbagrad, name)
    got = func.jvp(op, (a, b), (ta, tb))[1]
    want = _torch_jvp(torch, getattr(torch, name), (a, b), (ta, tb))
    np.testing.assert_allclose(arr(got), want)
    # one operand's tangent alone
    got = func.jvp(lambda x: op(x, b), (a,), (ta,))[1]
    want = _torch_jvp(torch, lambda x: getattr(torch, name)(x, torch.tensor(arr(b))), (a,), (ta,))
    np.testing.assert_allclose(arr(got), want)
    # the JVP is the transpose of the VJP at ties too
    g = t([0.3, -1.0, 2.0, 0.7, 1.1])
    _, vjp_fn = func.vjp(op, a, b)
    ga, gb = vjp_fn(g)
    got = func.jvp(op, (a, b), (ta, tb))[1]
    np.testing.assert_allclose(
        float((arr(got) * arr(g)).sum()), float((arr(ta) * arr(ga) + arr(tb) * arr(gb)).sum())
    )


def test_jvp_clamp_at_the_bounds_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = t([-0.5, 0.0, 0.5, 0.7, -0.9])
    v = t([1.0, 2.0, 3.0, 4.0, 5.0])
    got = func.jvp(lambda x: x.clamp(-0.5, 0.5), (x,), (v,))[1]
    want = _torch_jvp(torch, lambda x: x.clamp(-0.5, 0.5), (x,), (v,))
    np.testing.assert_allclose(arr(got), want)


@pytest.mark.parametrize("name", ["fmod", "remainder", "atan2", "div", "pow"])
def test_jvp_binary_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    a = t([0.0, 0.0, 0.0, 2.0, 3.5, -1.3])
    b = t([0.0, 2.0, 0.5, 1.5, -1.5, 0.7])
    ta = t([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    tb = t([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = func.jvp(getattr(numbagrad, name), (a, b), (ta, tb))[1]
    want = _torch_jvp(torch, getattr(torch, name), (a, b), (ta, tb))
    np.testing.assert_allclose(arr(got), want)


def test_second_order_of_pow_and_maximum_match_pytorch():
    torch = pytest.importorskip("torch")
    x = t([0.7, 1.3, 2.0])

    def f(m):
        def g(x):
            return (m.maximum(x**3, x * 2) * m.atan2(x, x + 1) / (x + 2)).sum()

        return g

    got = func.jacfwd(func.grad(f(numbagrad)))(x)
    want = torch.func.jacfwd(torch.func.grad(f(torch)))(torch.tensor(arr(x)))
    np.testing.assert_allclose(arr(got), want.numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "x_dtype,c_dtype,op",
    [
        ("float64", "float32", "mul"),
        ("float64", "float32", "radd"),
        ("int64", "float32", "mul"),
        ("float64", "int32", "mul"),
        ("float64", "float32", "lt"),
        ("float64", "float32", "div"),
    ],
)
def test_zero_d_examples_promote_as_zero_d_tensors(x_dtype, c_dtype, op):
    """A 0-d example ranks below a dimensioned tensor in type promotion, as in eager
    (``tensor(1.0, dtype=float64) * ones(3, dtype=float32)`` is float32): under ``vmap``
    its batch is 1-d and used to promote as a dimensioned tensor (float64)."""
    torch = pytest.importorskip("torch")
    fns = {
        "mul": lambda a, c: a * c,
        "radd": lambda a, c: c + a,
        "lt": lambda a, c: a < c,
        "div": lambda a, c: a / c,
    }
    res = []
    for m in (numbagrad, torch):
        x = m.tensor([1.0, 2.0]).to(getattr(m, x_dtype))
        c = m.ones(3, dtype=getattr(m, c_dtype))
        out = m.func.vmap(lambda a, c=c: fns[op](a, c))(x)
        res.append((str(out.dtype).split(".")[-1], tuple(out.shape), out.numpy()))
    assert res[0][:2] == res[1][:2]
    np.testing.assert_array_equal(res[0][2], res[1][2])
