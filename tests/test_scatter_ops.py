"""index_add / index_copy / index_fill / scatter / scatter_reduce / masked_scatter / put:
values and gradients against PyTorch, in-place variants, index validation, gradcheck."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.random((3, 4))
S = R.random((3, 4))

CASES = {
    "index_add": lambda m, x, s: x.index_add(0, m.tensor([2, 0, 2]), s, alpha=2.0),
    "index_add_dim1": lambda m, x, s: x.index_add(1, m.tensor([3, 0, 3, 1]), s),
    "index_add_int32": lambda m, x, s: x.index_add(0, m.tensor([1, 1, 0], dtype=m.int32), s),
    "index_copy": lambda m, x, s: x.index_copy(1, m.tensor([3, 0, 2, 1]), s),
    "index_fill": lambda m, x, s: x.index_fill(1, m.tensor([3, -4]), 2.5) * s,
    "index_fill_tensor": lambda m, x, s: x.index_fill(0, m.tensor([1]), s[0, 0]),
    "scatter_src": lambda m, x, s: x.scatter(1, m.tensor([[0, 1], [2, 3], [3, 0]]), s[:, :2]),
    "scatter_value": lambda m, x, s: x.scatter(0, m.tensor([[0, 1, 2, 0]]), 1.5) * s,
    "scatter_reduce_sum": lambda m, x, s: x.scatter_reduce(
        0, m.tensor([[0, 1, 2, 0], [0, 0, 0, 0]]), s[:2], "sum", include_self=False
    ),
    "scatter_reduce_mean": lambda m, x, s: x.scatter_reduce(
        0, m.tensor([[0, 1, 2, 0], [0, 0, 0, 0]]), s[:2], "mean"
    ),
    "scatter_reduce_mean_excl": lambda m, x, s: x.scatter_reduce(
        1, m.tensor([[0, 0], [1, 1], [3, 3]]), s[:, :2], "mean", include_self=False
    ),
    "masked_scatter": lambda m, x, s: x.masked_scatter(m.tensor([True, False, True, True]), s),
    "put": lambda m, x, s: x.put(m.tensor([0, -1, 5]), s[0, :3]),
    "put_accumulate": lambda m, x, s: x.put(m.tensor([0, -1, 0]), s[0, :3], accumulate=True),
    "top_level": lambda m, x, s: (
        m.index_add(x, 0, m.tensor([1]), s[:1])
        + m.scatter(x, 0, m.tensor([[1, 0, 0, 2]]), s[:1])
        + m.put(x, m.tensor([3]), s[0, :1])
    ),
    "inplace_chain": lambda m, x, s: (
        (x * 1)
        .index_add_(0, m.tensor([2, 0, 2]), s)
        .scatter_(1, m.tensor([[0], [1], [2]]), s[:, :1])
        .index_fill_(0, m.tensor([1]), 0.0)
        .put_(m.tensor([3]), s[0, :1])
        .masked_scatter_(m.tensor([True, False, False, False]), s)
        .index_copy_(1, m.tensor([2]), s[:, :1])
        .scatter_add_(0, m.tensor([[1]]), s[:1, :1])
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    f = CASES[name]
    xa = numbagrad.tensor(X, requires_grad=True)
    sa = numbagrad.tensor(S, requires_grad=True)
    xb = torch.tensor(X, requires_grad=True)
    sb = torch.tensor(S, requires_grad=True)
    a, b = f(numbagrad, xa, sa), f(torch, xb, sb)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    w = R.random(tuple(b.shape))
    (a * numbagrad.tensor(w)).sum().backward()
    (b * torch.tensor(w)).sum().backward()
    for ga, gb in ((xa.grad, xb.grad), (sa.grad, sb.grad)):
        assert (ga is None) == (gb is None)
        if ga is not None:
            np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "name",
    [
        "index_add",
        "index_copy",
        "index_fill_tensor",
        "scatter_src",
        "scatter_reduce_mean",
        "masked_scatter",
        "put",
    ],
)
def test_gradcheck_and_gradgradcheck(name):
    f = CASES[name]
    x = numbagrad.tensor(X, requires_grad=True)
    s = numbagrad.tensor(S, requires_grad=True)
    fn = lambda a, b: f(numbagrad, a, b)  # noqa: E731
    assert numbagrad.autograd.gradcheck(fn, (x, s))
    assert numbagrad.autograd.gradgradcheck(fn, (x, s))


def test_inplace_bumps_version_and_records():
    x = numbagrad.zeros(3, 2)
    v = x._version
    x.index_add_(0, numbagrad.tensor([0]), numbagrad.ones(1, 2))
    x.scatter_(0, numbagrad.tensor([[1, 2]]), 5.0)
    x.index_fill_(1, numbagrad.tensor([0]), -1.0)
    x.put_(numbagrad.tensor([5]), numbagrad.tensor([9.0]))
    x.index_copy_(0, numbagrad.tensor([2]), numbagrad.full((1, 2), 3.0))
    x.masked_scatter_(numbagrad.tensor([[True, False]] * 3), numbagrad.tensor([7.0, 8.0, 9.0]))
    assert x._version == v + 6
    assert x.tolist() == [[7.0, 1.0], [8.0, 0.0], [9.0, 3.0]]
    leaf = numbagrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.index_fill_(0, numbagrad.tensor([0]), 1.0)
    # a saved tensor overwritten in place: the version check fires at backward
    a = numbagrad.ones(3, requires_grad=True)
    y = a * 1
    z = y * y
    y.index_fill_(0, numbagrad.tensor([0]), 2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


ERRORS = [
    (
        "index_add count",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 1]), m.ones(3, 2)),
        RuntimeError,
        "Number of indices",
    ),
    (
        "index_add float index",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([0.0, 1.0]), m.ones(2, 2)),
        RuntimeError,
        "int32/int64",
    ),
    (
        "index_add out of range",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 5]), m.ones(2, 2)),
        RuntimeError,
        "out of bounds",
    ),
    (
        "index_add negative",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([-1]), m.ones(1, 2)),
        RuntimeError,
        "out of bounds",
    ),
    (
        "index_add dtype",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 1]), m.ones(2, 2, dtype=m.float64)),
        RuntimeError,
        "same scalar type",
    ),
    (
        "index_add 2-d index",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([[0, 1]]), m.ones(2, 2)),
        IndexError,
        "vector",
    ),
    (
        "index_add source shape",
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 1]), m.ones(2, 3)),
        RuntimeError,
        "source tensor shape",
    ),
    (
        "index_copy int32",
        lambda m: m.zeros(3, 2).index_copy(0, m.tensor([0, 1], dtype=m.int32), m.ones(2, 2)),
        RuntimeError,
        "long tensor",
    ),
    (
        "index_copy negative",
        lambda m: m.zeros(3, 2).index_copy(0, m.tensor([-1]), m.ones(1, 2)),
        IndexError,
        "out of bounds",
    ),
    (
        "index_copy count",
        lambda m: m.zeros(3, 2).index_copy(0, m.tensor([0, 0]), m.ones(3, 2)),
        IndexError,
        "Number of indices",
    ),
    (
        "index_fill int32",
        lambda m: m.zeros(3, 2).index_fill(0, m.tensor([0], dtype=m.int32), 1.0),
        IndexError,
        "int64",
    ),
    (
        "index_fill 1-d value",
        lambda m: m.zeros(3, 2).index_fill(1, m.tensor([1]), m.tensor([2.0])),
        RuntimeError,
        "0-dimensional value",
    ),
    (
        "index_fill out of range",
        lambda m: m.zeros(3, 2).index_fill(0, m.tensor([3]), 1.0),
        IndexError,
        "out of bounds",
    ),
    (
        "put int32",
        lambda m: m.zeros(3, 2).put(m.tensor([0, 1], dtype=m.int32), m.ones(2)),
        RuntimeError,
        "long tensor",
    ),
    (
        "put out of range",
        lambda m: m.zeros(3, 2).put(m.tensor([-1, 7]), m.ones(2)),
        IndexError,
        "out of range",
    ),
    (
        "put negative out of range",
        lambda m: m.zeros(3, 2).put(m.tensor([-7]), m.ones(1)),
        IndexError,
        "out of range",
    ),
    (
        "scatter out of range",
        lambda m: m.zeros(3, 2).scatter(0, m.tensor([[3, 1]]), 1.0),
        RuntimeError,
        "out of bounds",
    ),
    (
        "scatter float index",
        lambda m: m.zeros(3, 2).scatter(0, m.tensor([[0.0]]), 1.0),
        RuntimeError,
        "int64",
    ),
    (
        "scatter src dtype",
        lambda m: m.zeros(3, 2).scatter(0, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64)),
        RuntimeError,
        "dtype",
    ),
    (
        "masked_scatter short source",
        lambda m: m.zeros(3, 2).masked_scatter(m.ones(3, 2, dtype=m.bool), m.ones(3)),
        RuntimeError,
        "Number of elements of source",
    ),
    (
        "masked_scatter int mask",
        lambda m: m.zeros(3).masked_scatter(m.tensor([1, 0, 1]), m.ones(3)),
        RuntimeError,
        "boolean",
    ),
    (
        "scatter_reduce bad reduce",
        lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "median"),
        RuntimeError,
        "reduce argument",
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_like_torch(case):
    _, f, exc, match = case
    with pytest.raises(exc, match=match):
        f(numbagrad)
    with pytest.raises(exc):
        f(torch)


def _grouped_data(kind, shape):
    """Small integers (ties for amax/amin) or random reals with ~30% zeros (for prod)."""
    if kind == "ties":
        return R.integers(-2, 3, shape).astype(np.float64)
    a = R.standard_normal(shape)
    a[R.random(shape) < 0.3] = 0.0
    return a


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_prod_amax_amin_match_torch(reduce, include_self):
    kind = "zeros" if reduce == "prod" else "ties"
    for trial in range(20):
        dim = trial % 2
        xs, js = ((3, 4), (5, 4)) if dim == 0 else ((3, 4), (2, 6))
        x, s = _grouped_data(kind, xs), _grouped_data(kind, js)
        i = R.integers(0, xs[dim], js)  # duplicates
        w = R.random(xs)
        got = []
        for m in (numbagrad, torch):
            xt, st = m.tensor(x, requires_grad=True), m.tensor(s, requires_grad=True)
            y = xt.scatter_reduce(dim, m.tensor(i), st, reduce, include_self=include_self)
            (y * m.tensor(w)).sum().backward()
            got.append([y.detach().numpy(), xt.grad.numpy(), st.grad.numpy()])
            assert y.grad_fn.name() == "ScatterReduceBackward0"
        for a, b in zip(*got):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_scatter_reduce_prod_zero_gradients():
    # group 0: one zero in src; group 1: two zeros in src; group 2: a zero in self; 3: none
    x = [2.0, 3.0, 0.0, 5.0]
    s = [0.0, 4.0, 0.0, 0.0, 7.0, 6.0]
    i = [0, 0, 1, 1, 2, 3]
    for include_self in (True, False):
        got = []
        for m in (numbagrad, torch):
            xt, st = m.tensor(x, requires_grad=True), m.tensor(s, requires_grad=True)
            y = xt.scatter_reduce(0, m.tensor(i), st, "prod", include_self=include_self)
            y.backward(m.tensor([1.0, 2.0, 3.0, 4.0]))
            got.append((y.tolist(), xt.grad.tolist(), st.grad.tolist()))
        assert got[0] == got[1]
    assert got[0][2][0] == 4.0  # the lone zero gets the product of the others


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_second_order_with_zeros(include_self):
    """Groups of one, two and three zeros (and a zero in self): the second derivative of a
    group of two zeros in one another is the product of the rest (numbagrad gave 0; PyTorch
    raises 'Double backward is unsupported ... >1 zeros', fuzz seed 801668), checked by
    finite differences; the first-order gradients stay PyTorch's, signed zeros included."""
    x = [2.0, 3.0, 0.0, 5.0, 1.5]
    s = [0.0, 4.0, 0.0, -0.0, 7.0, 6.0, 0.0, 0.0, -0.0, 2.5]
    i = [0, 0, 1, 1, 2, 3, 4, 4, 4, 1]

    def fn(a, b):
        return a.scatter_reduce(0, numbagrad.tensor(i), b, "prod", include_self=include_self)

    xt = numbagrad.tensor(x, dtype=numbagrad.float64, requires_grad=True)
    st = numbagrad.tensor(s, dtype=numbagrad.float64, requires_grad=True)
    assert numbagrad.autograd.gradgradcheck(fn, (xt, st))
    got = []
    for m in (numbagrad, torch):
        xt, st = m.tensor(x, requires_grad=True), m.tensor(s, requires_grad=True)
        y = xt.scatter_reduce(0, m.tensor(i), st, "prod", include_self=include_self)
        grads = m.autograd.grad(y, (xt, st), m.tensor([1.0, -2.0, 3.0, 4.0, -0.5]))
        got.append([g.numpy() for g in grads])
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_gradcheck(reduce, include_self):
    i = numbagrad.tensor([[0, 1, 2, 0], [0, 0, 2, 2]])
    fn = lambda a, b: a.scatter_reduce(0, i, b, reduce, include_self=include_self)  # noqa: E731
    x = numbagrad.tensor(X, requires_grad=True)  # random reals: no ties, no zeros
    s = numbagrad.tensor(S[:2], requires_grad=True)
    assert numbagrad.autograd.gradcheck(fn, (x, s))
    assert numbagrad.autograd.gradgradcheck(fn, (x, s))


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_integer_empty_and_0d_match_torch(reduce):
    for include_self in (True, False):
        got = []
        for m in (numbagrad, torch):
            x = m.tensor([[5, -3, 2], [0, 7, -1]])
            a = x.scatter_reduce(
                1,
                m.tensor([[0, 0, 2], [1, 1, 1]]),
                m.tensor([[4, -6, 3], [2, -2, 9]]),
                reduce,
                include_self=include_self,
            )
            b = x.scatter_reduce(
                0,
                m.tensor([], dtype=m.int64).reshape(0, 3),
                m.zeros(0, 3, dtype=m.int64),
                reduce,
                include_self=include_self,
            )
            c = m.tensor(2.5).scatter_reduce(
                0, m.tensor(0), m.tensor(-4.0), reduce, include_self=include_self
            )
            assert a.dtype == m.int64
            got.append((a.tolist(), b.tolist(), c.item()))
        assert got[0] == got[1]


def test_scatter_multiply_matches_torch_and_has_no_derivative():
    for m in (numbagrad, torch):
        with pytest.warns(UserWarning, match="deprecated"):
            a = m.tensor([1, 2, 3]).scatter(
                0, m.tensor([0, 0]), m.tensor([5, -2]), reduce="multiply"
            )
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x.scatter(0, m.tensor([0, 0, 2]), 2.0, reduce="multiply")
        if m is numbagrad:
            got = (a.tolist(), b.tolist())
        else:
            assert got == (a.tolist(), b.tolist())
        assert b.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            b.sum().backward()


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_errors_like_torch(reduce):
    for m in (numbagrad, torch):
        x = m.zeros(3, 2)
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.scatter_reduce(0, m.tensor([[3, 0]]), m.ones(1, 2), reduce)
        with pytest.raises(RuntimeError, match="int64"):
            x.scatter_reduce(0, m.tensor([[0.0, 1.0]]), m.ones(1, 2), reduce)
        with pytest.raises(RuntimeError, match="dtype"):
            x.scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 2, dtype=m.float64), reduce)
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            x.scatter_reduce(0, m.tensor([0, 1]), m.ones(2), reduce)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_jvp_is_the_transpose_of_its_vjp(reduce, include_self):
    # <J t, g> == <t, J^T g>, and central differences away from ties (prod: with a zero in
    # a group, where torch 2.13's own forward-mode formula divides by it and is wrong)
    rng = np.random.default_rng(7)
    x, src = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    idx = numbagrad.tensor(rng.integers(0, 4, (6, 3)))
    if reduce == "prod":
        src[1, 0] = 0.0
    tx, ts = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    g = rng.standard_normal((4, 3))

    def f(a, b):
        return a.scatter_reduce(0, idx, b, reduce, include_self=include_self)

    _, t_out = numbagrad.func.jvp(
        f,
        (numbagrad.tensor(x), numbagrad.tensor(src)),
        (numbagrad.tensor(tx), numbagrad.tensor(ts)),
    )
    xa, sa = numbagrad.tensor(x, requires_grad=True), numbagrad.tensor(src, requires_grad=True)
    (f(xa, sa) * numbagrad.tensor(g)).sum().backward()
    lhs = (t_out.numpy() * g).sum()
    rhs = (tx * xa.grad.numpy()).sum() + (ts * sa.grad.numpy()).sum()
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-12)
    h = 1e-6
    fd = (
        f(numbagrad.tensor(x + h * tx), numbagrad.tensor(src + h * ts))
        - f(numbagrad.tensor(x - h * tx), numbagrad.tensor(src - h * ts))
    ).numpy() / (2 * h)
    np.testing.assert_allclose(t_out.numpy(), fd, rtol=1e-6, atol=1e-6)


def test_vmap_over_scatter_reduce_amax():
    x = numbagrad.tensor(R.random((4, 3)))
    s = numbagrad.tensor(R.random((4, 5)))
    idx = numbagrad.tensor([2, 0, 2, 2, 1])
    f = lambda a, b: a.scatter_reduce(0, idx, b, "amax", include_self=False)  # noqa: E731
    want = numbagrad.stack([f(x[i], s[i]) for i in range(4)])
    np.testing.assert_allclose(numbagrad.vmap(f)(x, s).numpy(), want.numpy())


def test_integer_and_empty_cases_match_torch():
    for m in (numbagrad, torch):
        a = m.tensor([5, 5, 5]).scatter_reduce(0, m.tensor([0, 0, 2]), m.tensor([1, 2, 4]), "mean")
        b = m.zeros(3).index_add(0, m.tensor([], dtype=m.int64), m.zeros(0))
        c = m.zeros(2, 2).scatter(0, m.tensor([], dtype=m.int64).reshape(0, 2), 1.0)
        if m is numbagrad:
            got = (a.tolist(), b.tolist(), c.tolist())
        else:
            assert got == (a.tolist(), b.tolist(), c.tolist())


def test_vmap_over_index_add_and_scatter():
    x = numbagrad.tensor(R.random((4, 3)))
    s = numbagrad.tensor(R.random((4, 2)))
    idx = numbagrad.tensor([2, 0])
    got = numbagrad.vmap(lambda a, b: a.index_add(0, idx, b))(x, s)
    want = numbagrad.stack([x[i].index_add(0, idx, s[i]) for i in range(4)])
    np.testing.assert_allclose(got.numpy(), want.numpy())
    got = numbagrad.vmap(lambda a, b: a.scatter(0, idx, b))(x, s)
    want = numbagrad.stack([x[i].scatter(0, idx, s[i]) for i in range(4)])
    np.testing.assert_allclose(got.numpy(), want.numpy())
