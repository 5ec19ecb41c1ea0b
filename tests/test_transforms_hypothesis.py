"""Property tests for the transforms over random shapes and batch placements.

- ``vmap`` equals loop-and-stack for broadcasting binary ops, reductions and matmul, with
  the batch dimension of each operand anywhere (negative ``in_dims`` included, or ``None``
  for an unbatched operand) and the output's batch dimension anywhere (``out_dims``);
- nested ``vmap`` equals a double loop;
- ``jacrev`` equals ``jacfwd`` (reverse and forward mode agree) on random shapes.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import numbagrad
from numbagrad.func import jacfwd, jacrev, vmap

SETTINGS = settings(max_examples=40, deadline=None)

BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: numbagrad.sub(a, b),
    "maximum": lambda a, b: numbagrad.maximum(a, b),
    "atan2": lambda a, b: numbagrad.atan2(a, b),
}
REDUCE = {
    "sum": lambda x, d: x.sum(d),
    "mean": lambda x, d: x.mean(d),
    "amax": lambda x, d: x.amax(d),
    "logsumexp": lambda x, d: numbagrad.logsumexp(x, d),
    "prod": lambda x, d: x.prod(d),
}


def _batched(rng, shape, size, dim):
    """A random array of ``shape`` with a batch dimension of ``size`` inserted at ``dim``
    (``None``: no batch dimension), and the per-example slices."""
    if dim is None:
        x = rng.standard_normal(shape)
        return numbagrad.tensor(x), [numbagrad.tensor(x)] * size
    full = rng.standard_normal((size, *shape))
    x = np.moveaxis(full, 0, dim)
    return numbagrad.tensor(x), [numbagrad.tensor(full[i]) for i in range(size)]


def _loop(fn, per_example, out_dim):
    """Loop-and-stack: ``fn`` per example, stacked along ``out_dim``."""
    return numbagrad.stack([fn(*args) for args in zip(*per_example)], out_dim)


def _dim(draw, ndim_without_batch):
    """A batch position for an operand of that many dimensions, possibly negative."""
    n = ndim_without_batch + 1
    return draw(st.integers(-n, n - 1))


def _two_dims(draw, nda, ndb):
    """Batch positions of two operands, either (not both) possibly None (unbatched)."""
    da = draw(st.one_of(st.none(), st.integers(-nda - 1, nda)))
    if da is None:
        return da, _dim(draw, ndb)
    return da, draw(st.one_of(st.none(), st.integers(-ndb - 1, ndb)))


@st.composite
def binary_cases(draw):
    shapes = draw(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    sa, sb = shapes.input_shapes
    size = draw(st.integers(1, 3))
    da, db = _two_dims(draw, len(sa), len(sb))
    out_nd = len(shapes.result_shape) + 1
    od = draw(st.integers(-out_nd, out_nd - 1))
    return draw(st.sampled_from(sorted(BINARY))), sa, sb, size, da, db, od


@given(binary_cases(), st.integers(0, 2**31 - 1))
@SETTINGS
def test_vmap_binary_matches_loop(case, seed):
    name, sa, sb, size, da, db, od = case
    rng = np.random.default_rng(seed)
    a, a_ex = _batched(rng, sa, size, da)
    b, b_ex = _batched(rng, sb, size, db)
    fn = BINARY[name]
    got = vmap(fn, in_dims=(da, db), out_dims=od)(a, b)
    want = _loop(fn, (a_ex, b_ex), od)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@st.composite
def reduce_cases(draw):
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    nd = len(shape)
    dims = draw(
        st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd, unique_by=lambda d: d % nd)
    )
    size = draw(st.integers(1, 3))
    bd = _dim(draw, nd)
    out_nd = nd - len(dims) + 1
    od = draw(st.integers(-out_nd, out_nd - 1))
    name = draw(st.sampled_from(sorted(REDUCE)))
    if name in ("amax", "logsumexp", "prod"):
        dims = dims[:1]
        od = draw(st.integers(-(nd), nd - 1))
    return name, shape, tuple(dims), size, bd, od


@given(reduce_cases(), st.integers(0, 2**31 - 1))
@SETTINGS
def test_vmap_reduction_matches_loop(case, seed):
    name, shape, dims, size, bd, od = case
    rng = np.random.default_rng(seed)
    x, x_ex = _batched(rng, shape, size, bd)
    d = dims if len(dims) > 1 else dims[0]

    def fn(t):
        return REDUCE[name](t, d)

    got = vmap(fn, in_dims=bd, out_dims=od)(x)
    want = _loop(fn, (x_ex,), od)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@st.composite
def matmul_cases(draw):
    n, k, m = (draw(st.integers(1, 3)) for _ in range(3))
    kind = draw(st.sampled_from(["mm", "mv", "vm", "dot", "bmm"]))
    sa, sb = {
        "mm": ((n, k), (k, m)),
        "mv": ((n, k), (k,)),
        "vm": ((k,), (k, m)),
        "dot": ((k,), (k,)),
        "bmm": ((2, n, k), (k, m)),
    }[kind]
    size = draw(st.integers(1, 3))
    da, db = _two_dims(draw, len(sa), len(sb))
    return sa, sb, size, da, db


@given(matmul_cases(), st.integers(0, 2**31 - 1))
@SETTINGS
def test_vmap_matmul_matches_loop(case, seed):
    sa, sb, size, da, db = case
    rng = np.random.default_rng(seed)
    a, a_ex = _batched(rng, sa, size, da)
    b, b_ex = _batched(rng, sb, size, db)
    got = vmap(numbagrad.matmul, in_dims=(da, db))(a, b)
    want = _loop(numbagrad.matmul, (a_ex, b_ex), 0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@given(
    array_shapes(min_dims=1, max_dims=2, max_side=3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 2**31 - 1),
)
@SETTINGS
def test_nested_vmap_matches_double_loop(shape, outer, inner, seed):
    rng = np.random.default_rng(seed)
    x = numbagrad.tensor(rng.standard_normal((outer, *shape, inner)))

    def fn(t):
        return numbagrad.tanh(t) * t.sum()

    got = vmap(vmap(fn, in_dims=-1), in_dims=0)(x)
    want = numbagrad.stack(
        [numbagrad.stack([fn(x[i, ..., j]) for j in range(inner)]) for i in range(outer)]
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@given(
    array_shapes(min_dims=0, max_dims=2, max_side=3),
    array_shapes(min_dims=0, max_dims=2, max_side=3),
    st.integers(0, 2**31 - 1),
)
@SETTINGS
def test_jacrev_equals_jacfwd(sx, sw, seed):
    rng = np.random.default_rng(seed)
    x = numbagrad.tensor(rng.standard_normal(sx))
    w = numbagrad.tensor(rng.standard_normal(sw))

    def f(x):
        y = numbagrad.sin(x) * x.sum() + numbagrad.exp(-x * x)
        return numbagrad.outer(y.reshape(-1), w.reshape(-1)).tanh()

    np.testing.assert_allclose(jacrev(f)(x).numpy(), jacfwd(f)(x).numpy(), rtol=1e-10, atol=1e-12)
