"""numbagrad.linalg and the top-level linear-algebra functions: what the op database does not
cover (error messages, degenerate spectra, result fields, conventions, batching, float32)."""

import numpy as np
import pytest

import numbagrad
from numbagrad import linalg

torch = pytest.importorskip("torch")


def _pair(a, requires_grad=False):
    """The same float64 matrix as a numbagrad and a torch tensor."""
    a = np.asarray(a, dtype=np.float64)
    return (
        numbagrad.tensor(a.copy(), requires_grad=requires_grad),
        torch.tensor(a.copy(), requires_grad=requires_grad),
    )


def _message(fn, *args, **kwargs):
    with pytest.raises(RuntimeError) as info:
        fn(*args, **kwargs)
    return str(info.value)


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


# -- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, make",
    [
        ("inv", lambda m, a: m.linalg.inv(a)),
        ("solve", lambda m, a: m.linalg.solve(a, m.ones(2, dtype=m.float64))),
        ("cholesky", lambda m, a: m.linalg.cholesky(a)),
    ],
)
def test_singular_and_non_pd_messages_match_torch(name, make):
    for batch in (False, True):
        a = np.array(SINGULAR)
        if batch:
            a = np.stack([np.eye(2), a])
        ours, theirs = _pair(a)
        got = _message(make, numbagrad, ours)
        want = _message(make, torch, theirs)
        assert got == want
        with pytest.raises(linalg.LinAlgError):
            make(numbagrad, ours)


def test_linalg_error_is_runtime_error_and_never_numpy():
    assert issubclass(linalg.LinAlgError, RuntimeError)
    with pytest.raises(linalg.LinAlgError, match="leading minor of order 1"):
        linalg.cholesky(-numbagrad.eye(3, dtype=numbagrad.float64))
    with pytest.raises(linalg.LinAlgError, match="diagonal element 3 is zero"):
        linalg.inv(numbagrad.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.linalg.inv(m.ones(2, 3)),
        lambda m: m.linalg.inv(m.ones(3)),
        lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
        lambda m: m.linalg.det(m.ones(2, 3)),
        lambda m: m.linalg.eigh(m.ones(2, 3)),
        lambda m: m.linalg.svd(m.ones(3)),
        lambda m: m.linalg.qr(m.ones(3, 2), mode="x"),
        lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
        lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)),
        lambda m: m.linalg.solve(m.eye(2), m.ones(3)),
        lambda m: m.linalg.eigh(m.eye(2), UPLO="X"),
    ],
    ids=[
        "inv-nonsquare",
        "inv-1d",
        "inv-int",
        "det-nonsquare",
        "eigh-nonsquare",
        "svd-1d",
        "qr-mode",
        "matrix_exp-nonsquare",
        "cross-length",
        "solve-shapes",
        "eigh-uplo",
    ],
)
def test_input_errors_match_torch(call):
    assert _message(call, numbagrad) == _message(call, torch)


def test_qr_gradient_errors_match_torch():
    for mode, shape in (("r", (3, 2)), ("complete", (3, 2))):
        msgs = []
        for m in (numbagrad, torch):
            a = m.ones(*shape, dtype=m.float64).requires_grad_(True)
            _q, r = m.linalg.qr(a * 1.0 + m.eye(*shape, dtype=m.float64), mode=mode)
            msgs.append(_message(r.sum().backward))
        assert msgs[0] == msgs[1]


# -- degenerate spectra ---------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
def test_eigh_repeated_eigenvalues_gradient_as_torch():
    a = np.diag([1.0, 1.0, 2.0])
    grads = []
    for x in _pair(a, requires_grad=True):
        m = numbagrad if isinstance(x, numbagrad.Tensor) else torch
        w, v = m.linalg.eigh(x)
        w.sum().backward()  # eigenvalues alone: finite
        g_vals = x.grad.numpy().copy()
        x.grad = None
        w, v = m.linalg.eigh(x)
        (v.abs() * m.arange(9.0, dtype=m.float64).reshape(3, 3)).sum().backward()
        grads.append((g_vals, x.grad.numpy().copy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][0], np.eye(3))
    # through the eigenvectors: not finite at the repeated eigenvalue, as in PyTorch
    assert not np.all(np.isfinite(grads[0][1]))
    np.testing.assert_array_equal(np.isfinite(grads[0][1]), np.isfinite(grads[1][1]))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
def test_svd_repeated_singular_values_gradient_as_torch():
    a = np.eye(3)
    out = []
    for x in _pair(a, requires_grad=True):
        m = numbagrad if isinstance(x, numbagrad.Tensor) else torch
        m.linalg.svdvals(x).sum().backward()  # fine everywhere
        g_vals = x.grad.numpy().copy()
        x.grad = None
        u, _s, _vh = m.linalg.svd(x)
        (u.abs() * m.arange(9.0, dtype=m.float64).reshape(3, 3)).sum().backward()
        out.append((g_vals, x.grad.numpy().copy()))
    np.testing.assert_allclose(out[0][0], out[1][0])
    assert not np.all(np.isfinite(out[0][1]))
    np.testing.assert_array_equal(np.isfinite(out[0][1]), np.isfinite(out[1][1]))


def _adjugate_t(a):
    """The cofactor matrix (the gradient of det), from 2x2 minors."""
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


def test_det_gradient_of_singular_matrix_is_the_cofactor_matrix():
    # PyTorch 2.13 returns zeros for this matrix; the derivative of det at a rank-(n-1)
    # matrix is its cofactor matrix, which the SVD path computes without dividing.
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    x = numbagrad.tensor(a, requires_grad=True)
    linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), _adjugate_t(a), rtol=1e-7, atol=1e-9)
    # a batch mixing singular and invertible matrices takes both paths at once
    b = np.stack([a, np.eye(3) * 2.0])
    x = numbagrad.tensor(b, requires_grad=True)
    linalg.det(x).sum().backward()
    for k in range(2):
        np.testing.assert_allclose(x.grad.numpy()[k], _adjugate_t(b[k]), rtol=1e-7, atol=1e-9)
    assert numbagrad.autograd.gradcheck(linalg.det, (numbagrad.tensor(a, requires_grad=True),))
    # the fused (array) rule and the differentiable rule agree on both paths
    (fast,) = numbagrad.autograd.grad(linalg.det(x).sum(), x)
    (graph,) = numbagrad.autograd.grad(linalg.det(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(fast.numpy(), graph.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_cdist_gradient_at_zero_distance_is_zero():
    pts = np.array([[0.0, 1.0], [2.0, 3.0]])
    grads = []
    for x in _pair(pts, requires_grad=True):
        m = numbagrad if isinstance(x, numbagrad.Tensor) else torch
        m.cdist(x, x).sum().backward()
        grads.append(x.grad.numpy().copy())
    assert np.all(np.isfinite(grads[0]))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=1e-9)


# -- result fields and conventions ------------------------------------------------------------
def test_namedtuple_fields():
    a = numbagrad.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=numbagrad.float64)
    assert linalg.slogdet(a)._fields == ("sign", "logabsdet")
    assert linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert linalg.svd(a)._fields == ("U", "S", "Vh")
    assert linalg.qr(a)._fields == ("Q", "R")
    assert linalg.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")
    assert numbagrad.svd(a)._fields == ("U", "S", "V")
    assert numbagrad.slogdet(a)._fields == ("sign", "logabsdet")


def test_torch_svd_returns_v_not_vh():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3))
    ours, theirs = _pair(a)
    u, s, v = numbagrad.svd(ours)
    np.testing.assert_allclose((u * s) @ v.mT, a, atol=1e-12)
    assert tuple(v.shape) == (3, 3)
    _u2, _s2, vh = linalg.svd(ours, full_matrices=False)
    np.testing.assert_allclose(v.numpy(), vh.mT.numpy())
    for some in (True, False):
        for compute_uv in (True, False):
            got = numbagrad.svd(ours, some=some, compute_uv=compute_uv)
            want = torch.svd(theirs, some=some, compute_uv=compute_uv)
            assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]
    _, _, v0 = numbagrad.svd(ours, compute_uv=False)
    assert not np.any(v0.numpy())


def test_full_matrices_shapes_and_reconstruction():
    rng = np.random.default_rng(1)
    for shape in ((4, 2), (2, 4), (2, 3, 5)):
        a = rng.standard_normal(shape)
        ours, theirs = _pair(a)
        for full in (True, False):
            got = linalg.svd(ours, full_matrices=full)
            want = torch.linalg.svd(theirs, full_matrices=full)
            assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]
        u, s, vh = linalg.svd(ours, full_matrices=False)
        np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), a, atol=1e-12)
        for mode in ("reduced", "complete", "r"):
            got = linalg.qr(ours, mode=mode)
            want = torch.linalg.qr(theirs, mode=mode)
            for g, w in zip(got, want):
                assert tuple(g.shape) == tuple(w.shape)
                np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-12)


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
def test_lstsq_fields_as_torch(driver):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    got = linalg.lstsq(numbagrad.tensor(a), numbagrad.tensor(b), driver=driver)
    want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-7, atol=1e-9)


def test_lstsq_rank_deficient_minimum_norm_and_rank():
    a = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    b = np.array([[2.0], [2.0], [1.0]])
    r = linalg.lstsq(numbagrad.tensor(a), numbagrad.tensor(b), driver="gelsd")
    np.testing.assert_allclose(r.solution.numpy(), [[1.0], [1.0]], atol=1e-12)
    assert int(r.rank) == 1
    assert tuple(r.residuals.shape) == (0,)  # not full rank: empty, as PyTorch
    assert int(linalg.matrix_rank(numbagrad.tensor(a))) == 1


def test_lstsq_gradient_matches_torch():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    grads = []
    for m in (numbagrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b, requires_grad=True)
        (m.linalg.lstsq(x, y).solution ** 2).sum().backward()
        grads.append((x.grad.numpy().copy(), y.grad.numpy().copy()))
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)


# -- batching, dtypes and the surface ---------------------------------------------------------
def test_float32_results_and_gradients():
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    x = numbagrad.tensor(a, requires_grad=True)
    outs = [
        linalg.det(x),
        linalg.inv(x),
        linalg.solve(x, x),
        linalg.matrix_exp(x * 0.1),
        linalg.svdvals(x),
        linalg.eigvalsh(x + x.mT),
        linalg.cholesky(x @ x.mT),
        linalg.pinv(x),
        linalg.qr(x).R,
        linalg.slogdet(x).logabsdet,
    ]
    for o in outs:
        assert o.dtype == numbagrad.float32
        (g,) = numbagrad.autograd.grad(o.sum(), x)
        assert g.dtype == numbagrad.float32
        assert np.all(np.isfinite(g.numpy()))
    np.testing.assert_allclose(
        linalg.det(x).detach().numpy(), torch.linalg.det(torch.tensor(a)).numpy(), rtol=1e-5
    )


def test_batched_shapes_match_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((4, 3, 2))
    ours, theirs = _pair(a)
    for fn in (
        lambda m, x, y: m.linalg.solve(x, y),
        lambda m, x, y: m.linalg.inv(x),
        lambda m, x, y: m.linalg.det(x),
        lambda m, x, y: m.linalg.matrix_norm(x, "nuc"),
        lambda m, x, y: m.linalg.norm(x, dim=(-2, -1)),
        lambda m, x, y: m.linalg.vector_norm(x, 3, dim=-1, keepdim=True),
    ):
        got = fn(numbagrad, ours, numbagrad.tensor(b))
        want = fn(torch, theirs, torch.tensor(b))
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7, atol=1e-9)


def test_vmap_of_grad_through_solve_and_eigh():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((4, 3, 3))
    a = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)

    def f(m, x):
        return (
            m.linalg.solve(x, x[0]).sum()
            + m.linalg.eigvalsh(x).pow(2).sum()
            + m.linalg.det(x)
            + m.linalg.cholesky(x).sum()
            + m.linalg.svdvals(x).sum()
        )

    got = numbagrad.func.vmap(numbagrad.func.grad(lambda x: f(numbagrad, x)))(numbagrad.tensor(a))
    want = torch.func.vmap(torch.func.grad(lambda x: f(torch, x)))(torch.tensor(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7, atol=1e-9)


def test_hessian_of_logdet_and_matrix_exp_as_torch():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 3))
    a = a @ a.T + 3 * np.eye(3)

    def f(m, x):
        return m.logdet(x) + m.linalg.matrix_exp(0.1 * x).sum() + m.linalg.inv(x).sum()

    got = numbagrad.func.hessian(lambda x: f(numbagrad, x))(numbagrad.tensor(a))
    want = torch.func.hessian(lambda x: f(torch, x))(torch.tensor(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7, atol=1e-9)


def test_matrix_power_zero_and_identity_gradient():
    x = numbagrad.tensor([[2.0, 1.0], [0.0, 3.0]], requires_grad=True)
    y = numbagrad.matrix_power(x, 0)
    np.testing.assert_array_equal(y.detach().numpy(), np.eye(2))
    assert x.matrix_power(2).tolist() == [[4.0, 5.0], [0.0, 9.0]]


def test_tensor_methods_and_namespace():
    assert numbagrad.linalg is linalg
    assert linalg.svd is not numbagrad.svd
    x = numbagrad.tensor([[4.0, 2.0], [2.0, 3.0]])
    assert round(x.det().item(), 4) == 8.0
    np.testing.assert_allclose((x.inverse() @ x).numpy(), np.eye(2), atol=1e-6)
    np.testing.assert_allclose((x.cholesky() @ x.cholesky().mT).numpy(), x.numpy(), atol=1e-6)
    assert round(x.logdet().item(), 4) == round(float(np.log(8.0)), 4)
    assert x.trace().item() == 7.0


def test_cross_default_dim_warns_and_picks_first_size_3_dim():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    with pytest.warns(UserWarning, match="dim"):
        got = numbagrad.cross(numbagrad.tensor(a), numbagrad.tensor(b))
    np.testing.assert_allclose(got.numpy(), np.cross(a, b, axis=0))
    np.testing.assert_allclose(
        linalg.cross(numbagrad.tensor(a), numbagrad.tensor(b)).numpy(), np.cross(a, b, axis=-1)
    )


@pytest.mark.parametrize(
    "name, shape",
    [
        ("det", (0, 0)),
        ("det", (2, 0, 0)),
        ("inv", (0, 0)),
        ("slogdet", (0, 0)),
        ("svd", (0, 3)),
        ("svdvals", (3, 0)),
        ("cholesky", (0, 0)),
        ("eigh", (0, 0)),
        ("qr", (0, 2)),
        ("matrix_exp", (0, 0)),
        ("pinv", (0, 3)),
    ],
)
def test_empty_matrices_as_torch(name, shape):
    results = []
    for m in (numbagrad, torch):
        a = m.zeros(*shape, dtype=m.float64, requires_grad=True)
        out = getattr(m.linalg, name)(a)
        outs = tuple(out) if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
        results.append(
            (
                [tuple(o.shape) for o in outs],
                [o.detach().numpy().tolist() for o in outs],
                tuple(a.grad.shape),
            )
        )
    assert results[0] == results[1]


def test_nan_inputs_as_torch():
    a = [[float("nan"), 1.0], [1.0, 1.0]]
    for fn in (
        lambda m, x: m.linalg.inv(x),
        lambda m, x: m.linalg.det(x),
        lambda m, x: m.linalg.slogdet(x).logabsdet,
        lambda m, x: m.linalg.matrix_exp(x),
        lambda m, x: m.linalg.solve(x, m.ones(2, dtype=m.float64)),
    ):
        ours, theirs = _pair(a)
        np.testing.assert_array_equal(fn(numbagrad, ours).numpy(), fn(torch, theirs).numpy())
    for fn in (lambda m, x: m.linalg.svd(x), lambda m, x: m.linalg.pinv(x)):
        ours, theirs = _pair(np.stack([np.eye(2), np.array(a)]))
        assert _message(fn, numbagrad, ours) == _message(fn, torch, theirs)


# -- products with a dimension of size 0: forward, backward and double backward ----------------
EMPTY_PRODUCTS = [
    ("matmul", (2, 0, 3), (3, 0)),
    ("matmul", (2, 3, 0), (0,)),
    ("matmul", (2, 3, 0), (0, 3)),
    ("matmul", (0, 2, 3), (3, 0)),
    ("matmul", (1, 0, 3), (3, 4)),
    ("matmul", (3, 0), (0, 4)),
    ("matmul", (0,), (0, 2)),
    ("mm", (0, 3), (3, 0)),
    ("mm", (3, 0), (0, 2)),
    ("bmm", (2, 3, 0), (2, 0, 4)),
    ("bmm", (0, 3, 2), (0, 2, 4)),
    ("einsum", (3, 0), (0, 2)),
    ("linear", (2, 3, 0), (4, 0)),
    ("linear", (2, 0, 3), (0, 3)),
    ("linear", (2, 3, 0), (0,)),
    ("mv", (3, 0), (0,)),
    ("tensordot", (2, 0), (0, 3)),
    ("inner", (2, 0), (3, 0)),
    ("inner", (2, 3), (0, 3)),
]


def _product(m, name, a, b):
    if name == "einsum":
        return m.einsum("ij,jk->ik", a, b)
    if name == "linear":
        return m.nn.functional.linear(a, b)
    if name == "tensordot":
        return m.tensordot(a, b, dims=1)
    return getattr(m, name)(a, b)


@pytest.mark.parametrize("name, sa, sb", EMPTY_PRODUCTS)
def test_products_with_an_empty_dim_as_torch(name, sa, sb):
    results = []
    for m in (numbagrad, torch):
        a = m.ones(*sa, dtype=m.float64, requires_grad=True)
        b = m.ones(*sb, dtype=m.float64, requires_grad=True)
        y = _product(m, name, a, b)
        ga, gb = m.autograd.grad(y.sum(), (a, b), create_graph=True)
        gga, ggb = m.autograd.grad(ga.sum() + gb.sum(), (a, b), allow_unused=True)
        results.append(
            [tuple(y.shape), y.detach().numpy().tolist()]
            + [None if g is None else tuple(g.shape) for g in (ga, gb, gga, ggb)]
        )
    assert results[0] == results[1]


def test_linear_refuses_a_weight_of_more_than_two_dims():
    for m in (numbagrad, torch):
        with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
            m.nn.functional.linear(m.ones(2, 3), m.ones(2, 3, 4))


@pytest.mark.parametrize(
    "sa, sb", [((2, 3), (4, 3)), ((2, 1, 3), (5, 3)), ((3,), (4, 3)), ((), (2, 3)), ((2,), ())]
)
def test_inner_of_nd_tensors_as_torch(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    outs = []
    for m in (numbagrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b, requires_grad=True)
        out = m.inner(x, y)
        out.backward(m.ones_like(out))
        outs.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    x, y = numbagrad.ones(2, 3), numbagrad.ones(4, 2)
    assert _message(numbagrad.inner, x, y) == _message(
        torch.inner, torch.ones(2, 3), torch.ones(4, 2)
    )


@pytest.mark.parametrize(("shape", "upper"), [((3, 3), False), ((2, 4, 4), True), ((1, 1), False)])
def test_cholesky_inverse_matches_torch(shape, upper):
    r = np.random.default_rng(7)
    a = r.standard_normal(shape)
    A = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(shape[-1])
    f = np.linalg.cholesky(A)
    if upper:
        f = np.swapaxes(f, -1, -2).copy()
    x = numbagrad.tensor(f, requires_grad=True)
    xt = torch.tensor(f, requires_grad=True)
    y = numbagrad.cholesky_inverse(x, upper=upper)
    yt = torch.cholesky_inverse(xt, upper=upper)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y.detach().numpy(), np.linalg.inv(A), rtol=1e-10, atol=1e-12)
    g = r.standard_normal(shape)
    y.backward(numbagrad.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-10)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        numbagrad.cholesky_inverse(numbagrad.ones(3))


@pytest.mark.parametrize("other", [[False, True, True], [2, -1, 3]])
def test_outer_double_backward_with_a_bool_or_integer_operand(other):
    """outer promotes a bool/int operand; its differentiable VJP's matmul (double
    backward) takes one dtype, so it casts the saved operand to the gradient's (fuzz seed
    701605: 'expected m1 and m2 to have the same dtype')."""
    res = []
    for m in (numbagrad, torch):
        x = m.tensor([0.7, -1.2], dtype=m.float64, requires_grad=True)
        v = m.tensor(other)
        out = m.outer(x, v)
        cot = m.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=m.float64)
        cot.requires_grad_()
        (g,) = m.autograd.grad(out, [x], cot, create_graph=True)
        w = m.tensor([1.0, -2.0], dtype=m.float64)
        res.append([t.detach().numpy() for t in m.autograd.grad((g * w).sum(), [cot])])
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)


# -- tensorinv, tensorsolve, vander ------------------------------------------------------------
def test_vander_matches_torch():
    for x, kw in [
        (np.array([0.0, 1.5, -2.0]), {}),
        (np.array([[1.0, 2.0], [3.0, -1.0]]), {"N": 4}),
        (np.array([2, 3, 5]), {}),
        (np.array(2.0), {"N": 3}),
        (np.array([1 + 2j, -0.5j]), {"N": 3}),
        (np.zeros((2, 0)), {"N": 3}),
    ]:
        got = linalg.vander(numbagrad.tensor(x), **kw)
        want = torch.linalg.vander(torch.tensor(x), **kw)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    # the gradient at 0 is finite (a cumulative product, not a power)
    x = numbagrad.tensor([0.0, 2.0, 3.0], requires_grad=True)
    linalg.vander(x).sum().backward()
    assert x.grad.tolist() == [1.0, 5.0, 7.0]


def test_vander_errors_as_torch():
    for x, kw in [(np.array([1.0]), {}), (np.array([1.0, 2.0]), {"N": 1})]:
        with pytest.raises(RuntimeError, match="N must be greater than 1"):
            linalg.vander(numbagrad.tensor(x), **kw)
        with pytest.raises(RuntimeError, match="N must be greater than 1"):
            torch.linalg.vander(torch.tensor(x), **kw)
    with pytest.raises(RuntimeError, match="but got Bool"):
        linalg.vander(numbagrad.tensor([True, False]))


def test_tensorinv_and_tensorsolve_match_torch():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 6)) + 6 * np.eye(6)
    for shape, ind in [((6, 2, 3), 1), ((2, 3, 6), 2), ((2, 3, 3, 2), 2)]:
        got = linalg.tensorinv(numbagrad.tensor(a.reshape(shape)), ind=ind)
        want = torch.linalg.tensorinv(torch.tensor(a.reshape(shape)), ind=ind)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    b = rng.standard_normal((2, 3))
    for shape, dims in [((2, 3, 6), None), ((2, 3, 2, 3), None), ((6, 2, 3), (0,))]:
        A = a.reshape(shape)
        got = linalg.tensorsolve(numbagrad.tensor(A), numbagrad.tensor(b), dims=dims)
        want = torch.linalg.tensorsolve(torch.tensor(A), torch.tensor(b), dims=dims)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_tensorinv_and_tensorsolve_errors_as_torch():
    for mod in (numbagrad, torch):
        for ind in (0, -1):
            with pytest.raises(RuntimeError, match="strictly positive integer for 'ind'"):
                mod.linalg.tensorinv(mod.ones(4, 4), ind=ind)
        with pytest.raises(RuntimeError, match=r"but got 20 != 6"):
            mod.linalg.tensorinv(mod.ones(2, 3, 4, 5), ind=2)
        with pytest.raises(RuntimeError, match=r"but got 5 != 6"):
            mod.linalg.tensorsolve(mod.ones(2, 3, 5), mod.ones(2, 3))


@pytest.mark.parametrize(
    "sa, sb", [((20, 256, 1), (1, 128)), ((5, 1), (1, 3)), ((2, 3, 1), (1, 4))]
)
def test_matmul_inner_dimension_one_is_pytorchs_product(sa, sb):
    """An inner dimension of 1 runs as a broadcast product: PyTorch's values, infinities
    times zero as NaN and its signed zeros (0 * -1 is -0.0), and the gradients."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    a.flat[0], b.flat[0], a.flat[1], b.flat[1] = 0.0, -1.0, np.inf, 0.0
    na, nb_ = numbagrad.tensor(a, requires_grad=True), numbagrad.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    got, want = (na @ nb_), (ta @ tb)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert np.array_equal(np.signbit(got.detach().numpy()), np.signbit(want.detach().numpy()))
    g = rng.standard_normal(tuple(want.shape)).astype(np.float32)
    got.backward(numbagrad.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(na.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(nb_.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-4)
