"""Batching and JVP rules of the reductions and linear algebra (``ops/reduce.py``,
``ops/linalg.py``): ``matmul`` under ``vmap`` in every 1-D/2-D/batched combination (one BLAS
call against an unbatched matrix), reductions over "all" dims, negative dims and keepdim,
and forward mode at zeros (``prod``, ``cumprod``) and ties (``amax``), against PyTorch."""

import warnings

import _batching
import numpy as np
import pytest
from _batching import B, arr, loop, t

import numbagrad
from numbagrad import func
from numbagrad.ops import PRIMITIVES, bind

Matmul = PRIMITIVES["Matmul"]


_REDUCE_OPS = (
    "Matmul|Einsum|Sum|Prod|Amax|Amin|Argmax|Argmin|All|Any|Norm2|Softmax|LogSoftmax|Cumsum|Cumprod"
)


def vmapped(fn, args, in_dims, ops=_REDUCE_OPS):
    """``vmap(fn)``, failing if one of this file's primitives falls back to the loop."""
    return _batching.vmapped(fn, args, in_dims, ops)


def check_vmap(fn, args, in_dims, **kw):
    got = vmapped(fn, args, in_dims, **kw)
    np.testing.assert_allclose(arr(got), loop(fn, args, in_dims), rtol=1e-12, atol=1e-12)
    return got


def batched(rng, shape, d):
    """A random batch of examples of ``shape`` with the batch dimension at ``d``."""
    if d is None:
        return t(rng.standard_normal(shape))
    full = list(shape)
    full.insert(d if d >= 0 else len(shape) + 1 + d, B)
    return t(rng.standard_normal(full))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# -- matmul ------------------------------------------------------------------------------
SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 1, 3, 4), (3, 4, 2)),
    ((3, 1), (1, 5)),
    ((1,), (1, 5)),
]
DIMS = [(0, 0), (0, None), (None, 0), (-1, 0), (None, -1), (-1, None), (1, -1)]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=[f"{a}@{b}" for a, b in SHAPES])
@pytest.mark.parametrize("dims", DIMS, ids=str)
def test_vmap_matmul_matches_loop(rng, sa, sb, dims):
    da, db = dims
    a, b = batched(rng, sa, da), batched(rng, sb, db)
    check_vmap(numbagrad.matmul, (a, b), (da, db))


@pytest.mark.parametrize(
    "sa,sb",
    [((1, 4), (4, 5)), ((3, 4), (4, 1)), ((1, 4), (4, 1)), ((3, 1), (1, 5)), ((2, 3, 4), (4, 5))],
)
@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0), (2, 1)], ids=str)
def test_vmap_of_the_primitive_never_loops(rng, sa, sb, dims):
    # the primitive alone (no reshape around it): any fallback warning is an error
    a, b = batched(rng, sa, dims[0]), batched(rng, sb, dims[1])
    check_vmap(lambda x, y: bind(Matmul, (x, y)), (a, b), dims, ops=".*")


@pytest.fixture
def matmul_calls(monkeypatch):
    """The operand shapes of every matrix product evaluated: ``Matmul``'s, and ``Mv``'s of a
    stack of vectors (``b @ a.T``)."""
    from numbagrad.ops.linalg import Mv

    calls = []
    impl, mv_impl = Matmul.impl, Mv.impl

    def spy(be, a, b):
        calls.append((a.shape, b.shape))
        return impl(be, a, b)

    def mv_spy(be, a, b):
        calls.append((a.shape, b.shape) if b.ndim == 1 else (b.shape, a.shape[::-1]))
        return mv_impl(be, a, b)

    monkeypatch.setattr(Matmul, "impl", staticmethod(spy))
    monkeypatch.setattr(Mv, "impl", staticmethod(mv_spy))
    return calls


@pytest.mark.parametrize("case", ["vec@mat", "mat@vec", "dot", "batch@mat", "mat@batch"])
def test_vmap_matmul_against_a_matrix_is_one_2d_product(rng, matmul_calls, case):
    args, dims = {
        "vec@mat": ((batched(rng, (4,), 0), batched(rng, (4, 6), None)), (0, None)),
        "mat@vec": ((batched(rng, (6, 4), None), batched(rng, (4,), 1)), (None, 1)),
        "dot": ((batched(rng, (4,), None), batched(rng, (4,), 0)), (None, 0)),
        "batch@mat": ((batched(rng, (2, 3, 4), 1), batched(rng, (4, 6), None)), (1, None)),
        "mat@batch": ((batched(rng, (6, 4), None), batched(rng, (2, 4, 3), 0)), (None, 0)),
    }[case]
    got = vmapped(numbagrad.matmul, args, dims)
    calls = list(matmul_calls)
    np.testing.assert_allclose(arr(got), loop(numbagrad.matmul, args, dims), rtol=1e-12)
    assert len(calls) == 1, calls  # one product over the whole batch...
    assert [len(s) for s in calls[0]] == [2, 2], calls  # ...of two matrices (one gemm)


def test_vmap_matmul_outer_products_are_broadcast_products(rng, matmul_calls):
    # both operands batched with a contraction of length 1 (per-example weight gradients)
    a, b = batched(rng, (5, 1), 0), batched(rng, (1, 4), 0)
    check_vmap(lambda x, y: bind(Matmul, (x, y)), (a, b), (0, 0), ops=".*")
    assert len(matmul_calls) == B  # the loop's only


def test_jacrev_of_tanh_matvec(rng):
    w = t(rng.standard_normal((6, 6)) / 4)
    x = t(rng.standard_normal(6))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*batching rule for Matmul")
        jac = func.jacrev(lambda v: numbagrad.tanh(w @ v))(x)
    y = np.tanh(arr(w) @ arr(x))
    np.testing.assert_allclose(arr(jac), (1 - y * y)[:, None] * arr(w), rtol=1e-12)


def test_per_example_gradients_of_a_linear_model(rng):
    w, b = t(rng.standard_normal((3, 5))), t(rng.standard_normal(3))
    x, y = t(rng.standard_normal((7, 5))), t(rng.standard_normal((7, 3)))

    def loss(params, xi, yi):
        wi, bi = params
        return ((wi @ xi + bi - yi) ** 2).sum()

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*batching rule for Matmul")
        gw, gb = func.vmap(func.grad(loss), in_dims=(None, 0, 0))((w, b), x, y)
    r = 2 * (arr(x) @ arr(w).T + arr(b) - arr(y))
    np.testing.assert_allclose(arr(gw), r[:, :, None] * arr(x)[:, None, :], rtol=1e-12)
    np.testing.assert_allclose(arr(gb), r, rtol=1e-12)


# -- einsum ------------------------------------------------------------------------------
EINSUMS = [
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("i,i->", (4,), (4,)),
    ("i,j->ij", (3,), (4,)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 3)),
    ("ij->j", (3, 4)),
    ("ij->", (3, 4)),
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
]


@pytest.mark.parametrize("eq,shapes", [(e, s) for e, *s in EINSUMS], ids=[e for e, *_ in EINSUMS])
def test_vmap_einsum_matches_loop(rng, eq, shapes):
    n = len(shapes)
    placements = [(0,) * n, (-1,) * n] + [
        tuple(0 if j == i else None for j in range(n)) for i in range(n)
    ]
    for dims in dict.fromkeys(placements):
        args = [batched(rng, s, d) for s, d in zip(shapes, dims)]
        check_vmap(lambda *xs: numbagrad.einsum(eq, *xs), args, dims, ops=".*")


def test_jvp_einsum_matches_torch(rng):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    ta, tb = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    _, got = func.jvp(
        lambda x, y: numbagrad.einsum("ij,jk->ik", x, y), (t(a), t(b)), (t(ta), t(tb))
    )
    _, want = torch.func.jvp(
        lambda x, y: torch.einsum("ij,jk->ik", x, y),
        (torch.tensor(a), torch.tensor(b)),
        (torch.tensor(ta), torch.tensor(tb)),
    )
    np.testing.assert_allclose(arr(got), want.numpy(), rtol=1e-12)


# -- reductions --------------------------------------------------------------------------
REDUCTIONS = {
    "sum": lambda x, **k: numbagrad.sum(x, **k),
    "amax": lambda x, **k: numbagrad.amax(x, **k),
    "amin": lambda x, **k: numbagrad.amin(x, **k),
    "prod": lambda x, **k: numbagrad.prod(x, **k),
    "norm": lambda x, **k: numbagrad.norm(x, **k),
    "all": lambda x, **k: numbagrad.all(x > 0, **k),
    "any": lambda x, **k: numbagrad.any(x > 0, **k),
}
KWARGS = [
    {},
    {"dim": -1},
    {"dim": 0, "keepdim": True},
    {"dim": -2, "keepdim": False},
    {"dim": (0, -1)},
    {"dim": (-1, 1), "keepdim": True},
    {"keepdim": True},
]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("kw", KWARGS, ids=str)
@pytest.mark.parametrize("bdim", [0, 1, -1])
def test_vmap_reductions_match_loop(rng, name, kw, bdim):
    fn = REDUCTIONS[name]
    if name == "prod" and isinstance(kw.get("dim"), tuple):
        pytest.skip("prod reduces one dim or all (as torch)")
    if name == "sum" and "keepdim" in kw and "dim" not in kw:
        kw = dict(kw, dim=None)
    if name in ("amax", "amin") and "dim" not in kw and kw:
        kw = dict(kw, dim=())
    x = batched(rng, (2, 3, 4), bdim)
    check_vmap(lambda v: fn(v, **kw), (x,), (bdim,))


@pytest.mark.parametrize("name", REDUCTIONS)
def test_vmap_reductions_of_0d_examples(rng, name):
    x = t(rng.standard_normal(B))
    check_vmap(REDUCTIONS[name], (x,), (0,))


@pytest.mark.parametrize("name", ["sum", "amax", "amin", "prod", "norm"])
def test_grad_through_vmapped_reduction_of_0d_examples(rng, name):
    # the batched op reduces no dim at all (``dims=()``): its vjp must not read that as
    # "all dims" (each example's reduction is the identity, up to the norm's sign)
    x = t(rng.uniform(0.5, 1.5, B))
    g = func.grad(lambda v: func.vmap(REDUCTIONS[name])(v).sum())(x)
    np.testing.assert_allclose(arr(g), np.ones(B), rtol=1e-12)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "kw", [{}, {"keepdim": True}, {"dim": -1}, {"dim": 0, "keepdim": True}], ids=str
)
@pytest.mark.parametrize("bdim", [0, 2])
def test_vmap_arg_reductions_match_loop(rng, name, kw, bdim):
    x = batched(rng, (3, 4), bdim)
    got = check_vmap(lambda v: getattr(numbagrad, name)(v, **kw), (x,), (bdim,))
    assert got.dtype == numbagrad.int64


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("bdim", [0, 1, -1])
def test_vmap_scans_match_loop(rng, name, dim, bdim):
    x = batched(rng, (3, 4), bdim)
    check_vmap(lambda v: getattr(numbagrad, name)(v, dim), (x,), (bdim,))


# -- forward mode at zeros and ties, against PyTorch --------------------------------------
def _jvp_both(fn_ng, fn_torch, x, v):
    torch = pytest.importorskip("torch")
    _, got = func.jvp(fn_ng, (t(x),), (t(v),))
    _, want = torch.func.jvp(fn_torch, (torch.tensor(x),), (torch.tensor(v),))
    return arr(got), want.numpy()


PROD_INPUTS = {
    "no_zero": np.array([[1.5, -0.5, 2.0, 0.7], [0.3, 1.2, -1.1, 0.9]]),
    "one_zero": np.array([[1.5, 0.0, 2.0, 0.7], [0.3, 1.2, -1.1, 0.9]]),
    "two_zeros": np.array([[1.5, 0.0, 2.0, 0.0], [0.0, 1.2, -1.1, 0.9]]),
    "all_zeros": np.zeros((2, 4)),
}


@pytest.mark.parametrize("case", PROD_INPUTS)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_jvp_prod_with_zeros_matches_torch(rng, case, dim):
    x = PROD_INPUTS[case]
    v = rng.standard_normal(x.shape)
    if dim is None:
        got, want = _jvp_both(lambda a: a.prod(), lambda a: a.prod(), x, v)
    else:
        got, want = _jvp_both(lambda a: a.prod(dim), lambda a: a.prod(dim), x, v)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", PROD_INPUTS)
@pytest.mark.parametrize("dim", [0, 1])
def test_jvp_cumprod_with_zeros_matches_torch(rng, case, dim):
    x = PROD_INPUTS[case]
    v = rng.standard_normal(x.shape)
    got, want = _jvp_both(lambda a: a.cumprod(dim), lambda a: a.cumprod(dim), x, v)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_jvp_cumprod_is_right_near_zeros(rng):
    # reverse over forward: the JVP's own derivative at a zero (two zeros in the slice)
    x = t([1.5, 0.0, 2.0, 0.0, 0.7])
    v = t(rng.standard_normal(5))
    w = t(rng.standard_normal(5))

    def tangent_dot_w(a):
        return (func.jvp(lambda b: b.cumprod(0), (a,), (v,))[1] * w).sum()

    got = func.grad(tangent_dot_w)(x)
    eps = 1e-6
    fd = np.array(
        [
            (arr(tangent_dot_w(x + eps * e)) - arr(tangent_dot_w(x - eps * e))) / (2 * eps)
            for e in np.eye(5)
        ]
    )
    np.testing.assert_allclose(arr(got), fd, rtol=1e-6, atol=1e-8)


def test_jvp_amax_with_ties_matches_torch(rng):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    v = rng.standard_normal(x.shape)
    for fn in (lambda a: a.amax(1), lambda a: a.amax(), lambda a: a.amin(0), lambda a: a.max()):
        got, want = _jvp_both(fn, fn, x, v)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_jvp_softmax_matches_torch(rng, name):
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got, want = _jvp_both(lambda a: getattr(a, name)(1), lambda a: getattr(a, name)(1), x, v)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_jvp_norm_matches_torch_and_is_zero_at_zero(rng):
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got, want = _jvp_both(lambda a: a.norm(dim=1), lambda a: a.norm(dim=1), x, v)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    x[1] = 0.0
    _, tan = func.jvp(lambda a: a.norm(dim=1), (t(x),), (t(v),))
    assert arr(tan)[1] == 0.0 and np.isfinite(arr(tan)).all()


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "median", "kthvalue"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_dim_reductions_of_zero_d_examples(name, keepdim):
    """``vmap`` of ``max``/``min``/``argmax``... with ``dim=0`` on 0-d examples (it raised
    IndexError): values, indices and dtypes as PyTorch's, and max's gradient."""
    torch = pytest.importorskip("torch")
    x = np.array([0.5, -1.0, 2.0, 0.1])

    def f(m):
        if name == "kthvalue":
            return lambda t: m.kthvalue(t, 1, dim=0, keepdim=keepdim)
        return lambda t: getattr(m, name)(t, dim=0, keepdim=keepdim)

    got = func.vmap(f(numbagrad))(numbagrad.tensor(x))
    ref = torch.func.vmap(f(torch))(torch.tensor(x))
    got = got if isinstance(got, tuple) else (got,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    for a, b in zip(got, ref, strict=True):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[10:] == str(b.dtype)[6:]
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    g = func.grad(lambda x: func.vmap(lambda t: numbagrad.max(t, dim=0)[0])(x).sum())
    np.testing.assert_array_equal(g(numbagrad.tensor(x)).numpy(), np.ones(4))
