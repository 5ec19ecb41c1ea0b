"""Reductions, scans, linear algebra, norms and shape/math ops at special values, against
PyTorch 2.13 (many cases came from the differential fuzz suite, issue 9)."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

# special values: NumPy warns about the inf * 0 and 0 / 0 that PyTorch computes silently
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _grad(lib, fn, *arrays, cot=None):
    """Gradient of ``(fn(*xs) * cot).sum()`` under ``lib`` (numbagrad or torch)."""
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    c = lib.ones_like(out) if cot is None else lib.tensor(np.asarray(cot, dtype=arrays[0].dtype))
    return [g.detach().numpy() for g in lib.autograd.grad((out * c).sum(), xs)]


def _same(a, b, rtol=1e-6, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


def _grads(lib, fn, arrays, seed=0, order=1):
    """First-order gradients of ``fn(lib, *xs)`` for a random cotangent, or (``order=2``)
    the gradients of ``sum(g * w)`` over them for random ``w`` (as the fuzz suite does)."""
    rng = np.random.default_rng(seed)
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    cot = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(arrays[0].dtype))
    gs = lib.autograd.grad(out, xs, cot, create_graph=order == 2, allow_unused=True)
    if order == 2:
        ws = [lib.tensor(rng.standard_normal(a.shape).astype(a.dtype)) for a in arrays]
        total = sum((g * w).sum() for g, w in zip(gs, ws) if g is not None and g.requires_grad)
        if not isinstance(total, lib.Tensor):  # no first derivative depends on the inputs
            return [None for _ in xs]
        gs = lib.autograd.grad(total, xs, allow_unused=True)
    kw = {"force": True} if lib is torch else {}  # (torch's ZeroTensor gradients)
    return [None if g is None else g.detach().numpy(**kw) for g in gs]


def _check(fn, *arrays, order=1, seed=0, rtol=1e-6, atol=1e-12):
    """numbagrad's gradients (NaN/inf pattern included) equal PyTorch's."""
    arrays = [np.asarray(a) for a in arrays]
    ours = _grads(numbagrad, fn, arrays, seed, order)
    theirs = _grads(torch, fn, arrays, seed, order)
    for a, b in zip(ours, theirs, strict=True):
        if b is None:
            assert a is None or not np.any(a), a
        else:
            # a first derivative with no graph (sgn from comparisons, as abs's) has the
            # second derivative 0: PyTorch's zero tensor there (the fuzz suite reads None
            # as zeros too)
            _same(np.zeros_like(b) if a is None else a, b, rtol, atol)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cum_extreme_dim_checks(fn):
    x = numbagrad.zeros((0, 3), requires_grad=True)
    values, indices = getattr(numbagrad, fn)(x, 5)  # empty: PyTorch ignores dim
    assert tuple(values.shape) == (0, 3) and indices.dtype == numbagrad.int64
    with pytest.raises(IndexError, match="Expected reduction dim -1 or 0 for scalar but got 1"):
        getattr(numbagrad, fn)(numbagrad.tensor(1.0), 1)


@pytest.mark.parametrize("xshape", [(3, 4), (2, 3, 4), (1, 3, 4), (5, 2, 3, 4)])
@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_sample_points_broadcast(fn, xshape):
    rng = np.random.default_rng(0)
    y, x = rng.standard_normal((2, 3, 4)), np.cumsum(rng.random(xshape), -1)
    for dim in (-1, 0, 1):
        try:
            want = getattr(torch, fn)(torch.tensor(y), torch.tensor(x), dim=dim).numpy()
        except RuntimeError:
            with pytest.raises(RuntimeError):
                getattr(numbagrad, fn)(numbagrad.tensor(y), numbagrad.tensor(x), dim=dim)
            continue
        got = getattr(numbagrad, fn)(numbagrad.tensor(y), numbagrad.tensor(x), dim=dim).numpy()
        assert got.shape == want.shape
        _same(got, want, rtol=1e-12)
    # a 1-D y against a 2-D x: the spacings are taken along x's dim 0 (PyTorch: shape (4,))
    out = numbagrad.trapezoid(numbagrad.tensor([3.0, 4.0]), numbagrad.tensor(x.reshape(-1, 4)))
    assert tuple(out.shape) == (4,)


def test_cumulative_trapezoid_checks_x_on_empty_y():
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        numbagrad.cumulative_trapezoid(numbagrad.zeros((2, 3, 0)), numbagrad.ones(4))


@pytest.mark.parametrize("fn", ["unique", "unique_consecutive"])
def test_unique_dim_empty(fn):
    f = getattr(numbagrad, fn)
    values, inverse, counts = f(
        numbagrad.zeros((4, 2, 0)), return_inverse=True, return_counts=True, dim=2
    )
    assert tuple(values.shape) == (4, 2, 0) and tuple(inverse.shape) == (0,)
    assert tuple(counts.shape) == (0,)
    with pytest.raises(RuntimeError, match="0 sized dimensions, and they aren't selected"):
        f(numbagrad.zeros((0, 3)), dim=1)
    with pytest.raises(RuntimeError, match="more than one"):
        f(numbagrad.zeros((0, 0)), dim=0)


def test_setitem_broadcast_value_grad_shape():
    x = numbagrad.tensor(1.5, requires_grad=True)
    v = numbagrad.tensor(2.0, requires_grad=True)
    y = x.clone()
    y[None, ...] = v
    gx, gv = numbagrad.autograd.grad(y * 3.0, [x, v])
    assert tuple(gv.shape) == () and float(gv) == 3.0 and float(gx) == 0.0


_INF, _NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    "x",
    [
        [1.349, -1.133, -_INF],
        [1.0, _NAN, 2.0],
        [0.0, 3.0, _INF],
        [0.0, 0.0, _INF, 2.0],
        [2.0, 0.0, 3.0, -1.0],
    ],
)
@pytest.mark.parametrize("order", [1, 2])
def test_prod_grad_nonfinite(x, order):
    _check(lambda m, t: m.prod(t), np.array(x), order=order)
    _check(lambda m, t: m.prod(t.reshape(-1, 1) * t, 1), np.array(x), order=order)
    _check(lambda m, t: m.prod(t, 0, keepdim=True), np.array(x), order=order)


_CUMPROD_CASES = [
    [[1.5, 0.0, 2.0, 0.0, 3.0], [1.0, 2.0, 3.0, 4.0, 5.0]],
    [[0.0, _INF, 2.0, 1.0, 1.0], [2.0, 0.0, _INF, 0.5, 0.0]],
    [[1e-30, 1e30, 0.0, 1e30, 1e30], [_INF, 2.0, 3.0, 0.0, -1.0]],
    [[1.0, 2.0, -_INF, 0.5, 1.0], [3.0, _NAN, 1.0, 2.0, 2.0]],
]


@pytest.mark.parametrize("case", range(len(_CUMPROD_CASES)))
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cumprod_grad_nonfinite(case, order, dtype):
    x = np.array(_CUMPROD_CASES[case], dtype=dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-10
    for dim in (0, 1):
        _check(lambda m, t, dim=dim: m.cumprod(t, dim), x, order=order, rtol=rtol, atol=1e-30)


def test_cumprod_grad_under_vmap_matches_torch():
    x = np.array([[1.5, 0.0, 2.0, 0.0, 3.0], [1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 2.0, 0.0, 1.0, 1.0]])
    got, want = (
        m.func.vmap(m.func.hessian(lambda r, m=m: m.cumprod(r, 0).sum()))(m.tensor(x)).numpy()
        for m in (numbagrad, torch)
    )
    _same(got, want)


_LSE_ROWS = [
    [-_INF, -_INF, -_INF],
    [-_INF, 1.0, -_INF],
    [_INF, 1.0, 2.0],
    [_INF, _INF, 1.0],
    [_NAN, 1.0, 2.0],
    [710.0, _INF, 3.0],  # exp(710) overflows once the infinite max is set to 0
    [1.0, 2.0, 3.0],
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fn", ["logsumexp", "special.logsumexp"])
def test_logsumexp_grad_nonfinite(fn, order):
    def f(m, t):
        return (m.special.logsumexp if fn.startswith("special") else m.logsumexp)(t * 2, 1)

    _check(f, np.array(_LSE_ROWS), order=order, rtol=1e-10)


def test_logsumexp_grad_equal_large_maxima_is_the_softmax():
    # max + log(2) rounds to max: PyTorch's exp(x - result) then gives 1 to each maximum;
    # the derivative is the softmax, 1/2 each (a known deviation from PyTorch)
    x = numbagrad.tensor([-_INF, 1e308, 1e308], dtype=numbagrad.float64, requires_grad=True)
    (g,) = numbagrad.autograd.grad(numbagrad.logsumexp(x, 0), [x])
    assert g.tolist() == [0.0, 0.5, 0.5]


_NORM_ROWS = [
    [0.0, -0.0, 0.0],
    [_NAN, _NAN, 0.42],
    [_INF, 1.0, -2.0],
    [0.0, 3.0, -4.0],
    [_NAN, 0.0, 0.0],
    [1e-30, 0.0, -1e-30],
]


@pytest.mark.parametrize("p", [1, 2, 3, 1.5, 0.5, -1.0, _INF, -_INF])
@pytest.mark.parametrize("order", [1, 2])
def test_vector_norm_grad_special_values(p, order):
    x = np.array(_NORM_ROWS)
    _check(lambda m, t: m.linalg.vector_norm(t, ord=p, dim=1), x, order=order, rtol=1e-10)
    # over one element: the norm is |x| (no x ** p)
    _check(lambda m, t: m.linalg.vector_norm(t, ord=p, dim=-1), x[:, :1], order=order)


def test_norm_of_one_element_does_not_overflow():
    x = 1.1169973830808557e308
    for p in (2, 3, 0.5):
        assert float(numbagrad.norm(numbagrad.tensor(x, dtype=numbagrad.float64), p=p)) == x


def test_svd_of_a_non_finite_matrix_is_nan():
    a = np.array([[[-0.4, -2.2, -0.9], [1.1, 0.4, _INF]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
    x = numbagrad.tensor(a, requires_grad=True)
    u, _, vh = numbagrad.linalg.svd(x, full_matrices=False)
    assert np.isnan(u[0].detach().numpy()).all() and np.isnan(vh[0].detach().numpy()).all()
    _check(lambda m, t: m.linalg.matrix_norm(t, ord="nuc"), a, rtol=1e-10)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3)])
@pytest.mark.parametrize("ord", [1, -1, _INF, -_INF, 2, "fro", "nuc"])
def test_matrix_norm_empty(shape, ord):
    try:
        want = torch.linalg.matrix_norm(torch.zeros(shape, requires_grad=True), ord=ord)
    except IndexError:
        with pytest.raises(IndexError):
            numbagrad.linalg.matrix_norm(numbagrad.zeros(shape, requires_grad=True), ord=ord)
        return
    got = numbagrad.linalg.matrix_norm(numbagrad.zeros(shape, requires_grad=True), ord=ord)
    assert got.tolist() == want.tolist() and got.requires_grad == want.requires_grad


@pytest.mark.parametrize("p", [2, 3, 1, _INF])
@pytest.mark.parametrize("order", [1, 2])
def test_renorm_grad_special_values(p, order):
    x = np.array(
        [[[100.0, _INF], [710.0, _NAN]], [[0.0, 0.0], [0.0, -0.0]], [[0.3, -0.2], [0.1, 0.5]]]
    )
    for dim in (0, 2):
        _check(lambda m, t, dim=dim: m.renorm(t, p, dim, 0.5), x, order=order, rtol=1e-10)


def test_renorm_under_vmap():
    x = np.random.default_rng(0).standard_normal((3, 4, 2))
    got, want = (
        m.func.vmap(m.func.jacrev(lambda r, m=m: m.renorm(r, 2, 0, 0.5)))(m.tensor(x)).numpy()
        for m in (numbagrad, torch)
    )
    _same(got, want, rtol=1e-10)


@pytest.mark.parametrize("order", [1, 2])
def test_nansum_grad_is_grad_times_not_nan(order):
    x = np.array([[0.5, _NAN, -2.0], [_NAN, _NAN, 1.0]])
    _check(lambda m, t: m.nansum(t, 1), x, order=order)
    # an infinite upstream gradient: inf * 0 is NaN at the NaN entries, as PyTorch's
    _check(lambda m, t: m.nansum(t / (t * 0), 1), x, order=order)
    _check(lambda m, t: m.nanmean(t, 1), x, order=order)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("order", [1, 2])
def test_median_all_grad_shared_by_ties(fn, order):
    for x in ([[-3.0, -2.0], [-2.0, 1.0], [0.0, 0.0], [-1.0, -1.0]], [[1.0, _NAN], [_NAN, 1.0]]):
        _check(lambda m, t: getattr(m, fn)(t), np.array(x), order=order)


@pytest.mark.parametrize("fn", ["median", "nanmedian", "max"])
def test_median_of_empty_second_order_in_grad_is_nan(fn):
    # PyTorch fills grad / mask.sum() (0 / 0) into no elements: its derivative in grad is NaN
    x = numbagrad.zeros((0, 3), dtype=numbagrad.float64, requires_grad=True)
    if fn == "max":
        x = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64, requires_grad=True)
    cot = numbagrad.tensor(0.5, dtype=numbagrad.float64, requires_grad=True)
    (g,) = numbagrad.autograd.grad(getattr(numbagrad, fn)(x), [x], cot, create_graph=True)
    (gc,) = numbagrad.autograd.grad((g * 2.0).sum(), [cot])
    assert np.isnan(float(gc)) == (fn != "max")


def test_logdet_negative_determinant_has_zero_gradient():
    a = np.array([[0.18, 0.74, 0.64], [0.96, 0.0068, 0.28], [0.21, 0.67, 0.71]])
    assert np.isnan(float(numbagrad.logdet(numbagrad.tensor(a))))
    _check(lambda m, t: m.logdet(t), a)
    _check(lambda m, t: m.logdet(t), np.eye(3) * 2.0)


_SPD = np.array([[3.9, 0.3, -1.6], [0.3, 3.0, 0.7], [-1.6, 0.7, 3.5]])


@pytest.mark.parametrize("order", [1, 2])
def test_cholesky_grad_nonfinite_cotangent(order):
    cot = np.array([[-0.1, 0.0, 0.0], [0.45, 0.002, 0.0], [_NAN, -0.3, -0.1]])
    for upper in (False, True):
        for c in (cot, np.where(np.isnan(cot), 0.0, cot)):

            def f(m, t, upper=upper, c=c):
                return m.linalg.cholesky(t, upper=upper) * m.tensor(c.T if upper else c)

            _check(f, _SPD, order=order, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_nonfinite(upper, left, unitriangular):
    a = np.array([[1.8, 0.4, -0.3], [0.26, 1.23, 0.9], [0.7, -0.5, 1.1]])
    b = np.array([[-0.3, _NAN], [1.4, 1.7], [_INF, -1.0]])
    if not left:
        b = b.T.copy()
    for bb in (b, np.where(np.isfinite(b), b, 0.0)):

        def f(m, t, u, upper=upper, left=left, unit=unitriangular):
            return m.linalg.solve_triangular(t, u, upper=upper, left=left, unitriangular=unit)

        _check(f, a, bb, rtol=1e-10)
        _check(f, a, bb, order=2, rtol=1e-8)
    singular = a.copy()
    singular[1, 1] = 0.0
    _check(f, singular, np.where(np.isfinite(b), b, 0.0), rtol=1e-10)


@pytest.mark.parametrize(
    "a",
    [
        [[_NAN, _NAN], [_INF, _NAN]],
        [[1.0, 0.0, 0.0], [0.0, 1.0, _INF], [0.0, _INF, 1.0]],
        [[1.0, 0.0, _INF], [0.0, 1.0, 0.0], [_INF, 0.0, 1.0]],
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, _NAN, 1.0]],
    ],
)
def test_cholesky_non_finite_pivot_raises(a):
    with pytest.raises(torch.linalg.LinAlgError) as want:
        torch.linalg.cholesky(torch.tensor(a, dtype=torch.float64))
    with pytest.raises(numbagrad.linalg.LinAlgError) as got:
        numbagrad.linalg.cholesky(numbagrad.tensor(a, dtype=numbagrad.float64))
    assert str(got.value) == str(want.value)


def test_cholesky_non_finite_without_a_bad_pivot():
    for a in ([[_INF, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [[1.0, _NAN], [0.0, 1.0]]):
        got = numbagrad.linalg.cholesky(numbagrad.tensor(a, dtype=numbagrad.float64)).numpy()
        _same(got, torch.linalg.cholesky(torch.tensor(a, dtype=torch.float64)).numpy())


@pytest.mark.parametrize("shape", [(2, 4), (4, 2), (3, 3)])
def test_qr_grad_nonfinite_cotangent(shape):
    a = np.random.default_rng(1).standard_normal(shape)
    k = min(shape)
    w = np.random.default_rng(2).standard_normal((k, 2))
    w[0, 0] = _INF

    def f(m, t):
        q, _ = m.linalg.qr(t)
        return m.matmul(q, m.tensor(w))

    _check(f, a, rtol=1e-8)


def test_tensordot_broadcast_dim_sums_first():
    x = np.array([[[_INF], [1.0]], [[2.0], [_NAN]]])
    y = np.array([[1.75, -0.35], [-2.85, -0.03], [0.28, -0.12]])
    got = numbagrad.tensordot(numbagrad.tensor(x), numbagrad.tensor(y), 1).numpy()
    want = torch.tensordot(torch.tensor(x), torch.tensor(y), 1).numpy()
    _same(got, want)
    _check(lambda m, a, b: m.tensordot(a, b, 1), x, y)


# -- einsum / tensordot / cross dtypes, squeeze / split arguments (issue 9, fuzz seeds 5362,
# 37732, 22798, 6052, 15444) ----------------------------------------------------------------
_EINSUM_EQS = [
    "i->",
    "i,i->",
    "ij->j",
    "ij,jk->ik",
    "ij,ij->i",
    "ij,j->i",
    "bij,bjk->bik",
    "bij,bij->",
    "ii->i",
    "i,j->ij",
    "ij,jk,kl->il",
    "i,i,i->",
]


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:
        return (type(e).__name__, str(e))
    return (str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().numpy().astype(float))


def _same_outcome(fn):
    a, b = _outcome(numbagrad, fn), _outcome(torch, fn)
    assert a[:2] == b[:2], (a, b)
    if len(a) == 3:
        _same(a[2], b[2])


@pytest.mark.parametrize("eq", _EINSUM_EQS)
def test_einsum_dtypes_and_empty_contractions(eq):
    """PyTorch's pairwise bmm: bool raises and mixed dtypes raise only where a product has
    elements; an empty one takes mat2's dtype; indices summed in one operand go to int64."""
    rng = np.random.default_rng(len(eq))
    terms = eq.split("->")[0].split(",")
    for _ in range(30):
        sizes = {c: int(rng.choice([0, 1, 2, 3])) for c in set("".join(terms))}
        dtypes = [str(rng.choice(["float32", "float64", "int64", "bool"])) for _ in terms]
        arrays = [rng.integers(-2, 3, size=tuple(sizes[c] for c in t)) for t in terms]
        arrays = [a > 0 if d == "bool" else a.astype(d) for a, d in zip(arrays, dtypes)]
        _same_outcome(lambda m, arrays=arrays: m.einsum(eq, *[m.tensor(a) for a in arrays]))


@pytest.mark.parametrize(
    "eq, shapes",
    [
        ("ij,jk->ik", [(2, 1), (2, 2)]),  # fuzz seed 702064 (complex)
        ("ij,jk", [(2, 3), (1, 4)]),
        ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
        ("i,i->", [(1,), (5,)]),
        ("ij,kj->ikj", [(3, 1), (2, 4)]),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_einsum_broadcasts_size_one_subscripts(eq, shapes, dtype):
    """A subscript of size 1 in one operand broadcasts against the others' size, as in
    PyTorch (numbagrad raised 'operands do not broadcast'); the gradient sums it back."""
    rng = np.random.default_rng(7)
    arrays = [
        rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype[0] == "c" else 0)
        for s in shapes
    ]
    res = []
    for m in (numbagrad, torch):
        ts = [m.tensor(a, requires_grad=True) for a in arrays]
        out = m.einsum(eq, *ts)
        grads = m.autograd.grad(out, ts, m.ones_like(out))
        res.append([out.detach().numpy(), *(g.numpy() for g in grads)])
    for a, b in zip(*res):
        _same(a, b, rtol=1e-12)
    for m in (numbagrad, torch):
        with pytest.raises(RuntimeError, match="broadcast"):
            m.einsum("ij,jk", m.ones(2, 3), m.ones(2, 2))


def test_einsum_empty_integer_result_that_would_require_grad():
    def f(m, other):
        return m.einsum("i,i->", m.zeros(0, dtype=m.float64, requires_grad=True), other(m))

    for other in (lambda m: m.zeros(0, dtype=m.bool), lambda m: m.zeros(0, dtype=m.int64)):
        _same_outcome(lambda m, other=other: f(m, other))
    # the other operand first: the float64 result requires grad
    out = numbagrad.einsum(
        "i,i->",
        numbagrad.zeros(0, dtype=numbagrad.bool),
        numbagrad.zeros(0, dtype=numbagrad.float64, requires_grad=True),
    )
    assert out.dtype == numbagrad.float64 and out.requires_grad


@pytest.mark.parametrize(
    "dtypes",
    [
        ("float32", "float64"),
        ("float64", "float32"),
        ("int64", "float32"),
        ("bool", "bool"),
        ("bool", "float32"),
        ("int64", "bool"),
        ("int64", "int64"),
    ],
)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((0, 3), (1, 3))])
def test_linalg_cross_dtypes(dtypes, shapes):
    def f(m, fn):
        a, b = (m.ones(s, dtype=getattr(m, d)) for s, d in zip(shapes, dtypes))
        return m.linalg.cross(a, b) if fn == "linalg" else m.cross(a, b, dim=1)

    for fn in ("linalg", "cross"):
        _same_outcome(lambda m, fn=fn: f(m, fn))


@pytest.mark.parametrize(
    "case",
    [
        ((2, 3), (3, 2), "float32", "float64", 1),
        ((2, 3), (3, 2), "float32", "float64", 5),
        ((2, 3), (4, 2), "float32", "float64", ([1], [0])),
        ((2, 0), (0, 2), "float32", "float64", 1),
        ((2, 3), (3, 2), "bool", "bool", 1),
        ((2, 3), (3, 2), "bool", "bool", 0),
        ((2, 0), (0, 2), "bool", "bool", 1),
        ((0, 3), (3, 2), "bool", "bool", 1),
        ((2, 3), (3, 2), "int64", "int64", 1),
    ],
)
def test_tensordot_dtypes(case):
    sa, sb, da, db, dims = case
    _same_outcome(
        lambda m: m.tensordot(
            m.ones(sa, dtype=getattr(m, da)), m.ones(sb, dtype=getattr(m, db)), dims=dims
        )
    )


@pytest.mark.parametrize("shape", [(), (3,), (1,), (1, 2)])
@pytest.mark.parametrize("dim", [0, -1, 1, 2, -2, (0,), (0, 1), (2,), []])
def test_squeeze_dim_range(shape, dim):
    _same_outcome(lambda m: m.squeeze(m.zeros(shape), dim))
    _same_outcome(lambda m: m.zeros(shape).squeeze(dim))


@pytest.mark.parametrize("shape", [(0,), (3,), (0, 2), (2, 0)])
@pytest.mark.parametrize("size", [0, 1, 2, -1])
@pytest.mark.parametrize("dim", [0, -1])
def test_split_sizes(shape, size, dim):
    def f(m):
        parts = m.split(m.zeros(shape), size, dim=dim)
        return m.stack([m.tensor(p.shape) for p in parts]) if parts else m.zeros(0)

    _same_outcome(f)


# -- matrix_exp at large cotangents (seeds 21359, 33860): NOTE [matrix_exp scaling] ---------
def _frechet_exp_diagonal(a, g):
    """The exact adjoint Frechet derivative of exp at the diagonal matrix ``diag(a)``
    applied to ``g``: ``g_ij (e^a_i - e^a_j) / (a_i - a_j)`` (``e^a_i`` on ties)."""
    ai, aj = a[:, None], a[None, :]
    with np.errstate(all="ignore"):
        q = np.where(ai == aj, np.exp(ai), (np.exp(ai) - np.exp(aj)) / (ai - aj))
    return g * q


@pytest.mark.parametrize("scale", [1.0, 1e8, 1e20, 1e33])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matrix_exp_grad_large_cotangent_is_exact(scale, dtype):
    a = np.array([0.3, -1.2, 2.0])
    g = np.random.default_rng(3).standard_normal((3, 3)) * np.array([[scale], [1.0], [1e-3]])
    x = numbagrad.tensor(np.diag(a).astype(dtype), requires_grad=True)
    numbagrad.linalg.matrix_exp(x).backward(numbagrad.tensor(g.astype(dtype)))
    want = _frechet_exp_diagonal(a.astype(dtype).astype(float), g.astype(dtype).astype(float))
    rtol = 1e-12 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_matrix_exp_grad_large_cotangent_seed_21359():
    """PyTorch is 30% off here (its block matrix takes 110 squarings); numbagrad agrees with
    the eigendecomposition formula (and mpmath) to rounding."""
    a = np.array(
        [[0.2770484685897827, 1.236060380935669], [4.2726263999938965, -0.874516487121582]]
    )
    g = np.array([[-0.010742587968707085, -1.4644703775892022e33], [0.06707902997732162, 2e-31]])
    w, v = np.linalg.eig(a.T)
    vi = np.linalg.inv(v)
    q = (np.exp(w[:, None]) - np.exp(w[None, :])) / (w[:, None] - w[None, :])
    np.fill_diagonal(q, np.exp(w))
    want = (v @ ((vi @ g @ v) * q) @ vi).real
    for dtype, rtol in (("float64", 1e-12), ("float32", 1e-6)):
        x = numbagrad.tensor(a.astype(dtype), requires_grad=True)
        numbagrad.linalg.matrix_exp(x).backward(numbagrad.tensor(g.astype(dtype)))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=rtol * 100)  # (want: eig's)


def test_matrix_exp_gradgrad_large_cotangent_seed_33860():
    a = np.array(
        [
            [-1.3283422027610037, -0.5781145109471706, 1.6489742189325853],
            [1.2198692780750848, -0.6034919859265631, 0.458729227150382],
            [-0.5230785990515745, -1.8208680961511865, 0.22170513208216303],
        ]
    )
    g = np.array(
        [
            [635.6064730831357, -8416.154688614819, 8473.410569843352],
            [-5136796.5009236215, 68017042.35310006, -68479788.39481969],
            [-88.21519370814529, 1168.0692410331517, -1176.020119082251],
        ]
    )
    w = np.random.default_rng(33861).standard_normal((3, 3))

    def second(lib):
        x, c = lib.tensor(a, requires_grad=True), lib.tensor(g, requires_grad=True)
        (gx,) = lib.autograd.grad(lib.linalg.matrix_exp(x), [x], c, create_graph=True)
        return [t.numpy() for t in lib.autograd.grad((gx * lib.tensor(w)).sum(), [x, c])]

    # PyTorch is accurate here; the cotangent's 7e7 entries cancel, and the last bits move
    # with the NumPy/BLAS build (1.1e-7 with NumPy 2.4.6)
    for got, want in zip(second(numbagrad), second(torch)):
        _same(got, want, rtol=3e-7)


def test_matrix_exp_of_a_large_nilpotent_part():
    # exp([[a, b], [0, a]]) = e^a [[1, b], [0, 1]], exactly, for any b (PyTorch: 1 for e^a
    # from b = 1e33 on)
    for b in (1e8, 1e33, 1e200):
        got = numbagrad.linalg.matrix_exp(
            numbagrad.tensor([[0.5, b], [0.0, 0.5]], dtype=numbagrad.float64)
        )
        want = np.exp(0.5) * np.array([[1.0, b], [0.0, 1.0]])
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


# -- det with an infinite cotangent (the det-grad-nan open bug) -------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("g", [-_INF, _INF, _NAN])
def test_det_grad_nonfinite_cotangent(dtype, order, g):
    a = np.random.default_rng(5).standard_normal((3, 3)).astype(dtype)
    res = []
    for lib in (numbagrad, torch):
        x = lib.tensor(a, requires_grad=True)
        c = lib.tensor(g, dtype=getattr(lib, dtype))
        (gx,) = lib.autograd.grad(lib.linalg.det(x), x, c, create_graph=order == 2)
        res.append(gx.detach().numpy())
    _same(res[0], res[1], rtol=1e-5)


# -- slogdet with an infinite cotangent (fuzz seed 700042) ------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("g", [-_INF, _INF, _NAN])
def test_slogdet_grad_nonfinite_cotangent(dtype, order, g):
    # the gradient solves A^T X = diag(g), as PyTorch's slogdet_backward: g * I had
    # inf * 0 = NaN off the diagonal, and the solve made the whole gradient NaN. (Complex:
    # where the complex solves meet inf - inf depends on each LAPACK's order, as
    # known_deviations lapack-nonfinite-slogdet says of the values.)
    a = np.random.default_rng(5).standard_normal((2, 3, 3)) + 3 * np.eye(3)
    a = a.astype(dtype)
    res = []
    for lib in (numbagrad, torch):
        x = lib.tensor(a, requires_grad=True)
        c = lib.tensor([g, 0.5], dtype=getattr(lib, dtype))
        out = lib.linalg.slogdet(x).logabsdet
        (gx,) = lib.autograd.grad(out, x, c, create_graph=order == 2)
        res.append(gx.detach().numpy())
    _same(res[0], res[1], rtol=1e-5)


# -- the inf-norm's sgn is a constant of its rule (seed 26750) --------------------------------
def test_vector_norm_inf_gradgrad_after_a_nan_derivative():
    x = np.array([[-2.2478549894382773], [2.624477682445489], [2.3032292747981247]])

    def f(m, t):
        return m.linalg.vector_norm(m.special.entr(m.ravel(t)), ord=_INF)

    _check(f, x, order=2, seed=26750)
