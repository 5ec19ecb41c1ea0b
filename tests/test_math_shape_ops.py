"""Top-level math and shape ops against PyTorch: bincount, cov/corrcoef, triangle
indices, addcmul/addcdiv, logspace, unbind, repeat, sum_to_size, fill_diagonal_, .H/.mH,
tensor_split, combinations, isin (found by the drop-in script sweep, ``tests/test_scripts.py``)."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, rtol=1e-12, atol=1e-12):
    a, b = _np(ours), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _raises_like(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    return str(ours.value), str(theirs.value)


# -- top-level math: bincount, cov, corrcoef, triangle indices, addcmul/addcdiv, logspace -----
@pytest.mark.parametrize("weights", [None, "f64", "f32", "i64"])
@pytest.mark.parametrize("minlength", [0, 7])
def test_bincount_matches_torch(weights, minlength):
    idx = np.array([0, 3, 3, 1, 5, 3])
    w = {
        None: None,
        "f64": np.linspace(0.5, 3, 6),
        "f32": np.linspace(0.5, 3, 6, dtype=np.float32),
        "i64": np.arange(6),
    }[weights]
    ours = numbagrad.bincount(
        numbagrad.tensor(idx), None if w is None else numbagrad.tensor(w), minlength=minlength
    )
    theirs = torch.bincount(
        torch.tensor(idx), None if w is None else torch.tensor(w), minlength=minlength
    )
    _same(ours, theirs)
    _same(
        numbagrad.tensor(idx).bincount(minlength=minlength),
        torch.tensor(idx).bincount(minlength=minlength),
    )


def test_bincount_empty_and_errors():
    _same(
        numbagrad.bincount(numbagrad.tensor([], dtype=numbagrad.int64)),
        torch.bincount(torch.tensor([], dtype=torch.int64)),
    )
    for bad in ([[1]], [-1]):
        m, t = _raises_like(
            lambda b=bad: numbagrad.bincount(numbagrad.tensor(b)),
            lambda b=bad: torch.bincount(torch.tensor(b)),
        )
        assert m == t
    _raises_like(
        lambda: numbagrad.bincount(numbagrad.tensor([1.0])),
        lambda: torch.bincount(torch.tensor([1.0])),
    )
    m, t = _raises_like(
        lambda: numbagrad.bincount(numbagrad.tensor([1]), minlength=-1),
        lambda: torch.bincount(torch.tensor([1]), minlength=-1),
    )
    assert m == t
    m, t = _raises_like(
        lambda: numbagrad.bincount(numbagrad.tensor([1, 2]), numbagrad.tensor([1.0])),
        lambda: torch.bincount(torch.tensor([1, 2]), torch.tensor([1.0])),
    )
    assert m == t


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"correction": 0},
        {"correction": 2},
        {"fweights": True},
        {"aweights": True},
        {"fweights": True, "aweights": True},
    ],
)
def test_cov_and_corrcoef_match_torch_with_gradients(kw):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 6))
    fw, aw = np.array([1, 2, 1, 3, 1, 2]), rng.uniform(0.5, 2, size=6)

    def run(lib, x):
        extra = {}
        if kw.get("fweights"):
            extra["fweights"] = lib.tensor(fw)
        if kw.get("aweights"):
            extra["aweights"] = lib.tensor(aw)
        if "correction" in kw:
            extra["correction"] = kw["correction"]
        return lib.cov(x, **extra)

    xo = numbagrad.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    co, ct = run(numbagrad, xo), run(torch, xt)
    _same(co, ct, rtol=1e-12)
    (co * numbagrad.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
    (ct * torch.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
    _same(xo.grad, xt.grad)
    _same(numbagrad.corrcoef(numbagrad.tensor(x)), torch.corrcoef(torch.tensor(x)))
    _same(numbagrad.tensor(x).cov(), torch.tensor(x).cov())


def test_cov_shapes_dtypes_and_errors():
    _same(numbagrad.cov(numbagrad.tensor([1, 2, 4])), torch.cov(torch.tensor([1, 2, 4])))
    _same(
        numbagrad.cov(numbagrad.tensor([1.0, 2, 4], dtype=numbagrad.float32)),
        torch.cov(torch.tensor([1.0, 2, 4])),
        rtol=1e-6,
    )
    _same(
        numbagrad.corrcoef(numbagrad.tensor([1.0, 2.0, 4.0])),
        torch.corrcoef(torch.tensor([1.0, 2.0, 4.0])),
    )
    m, t = _raises_like(
        lambda: numbagrad.cov(numbagrad.ones(2, 2, 2)), lambda: torch.cov(torch.ones(2, 2, 2))
    )
    assert m == t
    m, t = _raises_like(
        lambda: numbagrad.cov(numbagrad.ones(2, 3), fweights=numbagrad.ones(3)),
        lambda: torch.cov(torch.ones(2, 3), fweights=torch.ones(3)),
    )
    assert m == t
    m, t = _raises_like(
        lambda: numbagrad.cov(numbagrad.ones(2, 3), aweights=numbagrad.ones(2)),
        lambda: torch.cov(torch.ones(2, 3), aweights=torch.ones(2)),
    )
    assert m == t
    with pytest.warns(UserWarning, match="degrees of freedom"):
        numbagrad.cov(numbagrad.ones(2, 1))


@pytest.mark.parametrize(
    "row,col,offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (5, 2, 3), (0, 3, 0), (3, 3, -5)]
)
def test_triu_tril_indices_match_torch(row, col, offset):
    _same(numbagrad.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))
    _same(numbagrad.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    _same(
        numbagrad.tril_indices(row, col, offset, dtype=numbagrad.int32),
        torch.tril_indices(row, col, offset, dtype=torch.int32),
    )
    assert not hasattr(numbagrad.Tensor, "triu_indices")


def test_triu_indices_errors():
    m, t = _raises_like(lambda: numbagrad.triu_indices(-1, 3), lambda: torch.triu_indices(-1, 3))
    assert m == t


@pytest.mark.parametrize("value", [1, 0.5, -2.0])
def test_addcmul_addcdiv_match_torch(value):
    rng = np.random.default_rng(1)
    a, b, c = rng.normal(size=(2, 3)), rng.normal(size=(3,)), rng.uniform(1, 2, size=(2, 1))
    ours = [numbagrad.tensor(v, requires_grad=True) for v in (a, b, c)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b, c)]
    for name in ("addcmul", "addcdiv"):
        o = getattr(numbagrad, name)(*ours, value=value)
        t = getattr(torch, name)(*theirs, value=value)
        _same(o, t, rtol=1e-15)
        o.sum().backward()
        t.sum().backward()
        for x, y in zip(ours, theirs):
            _same(x.grad, y.grad)
        xo = numbagrad.tensor(a)
        xt = torch.tensor(a)
        _same(
            getattr(xo, name + "_")(numbagrad.tensor(b), numbagrad.tensor(c), value=value),
            getattr(xt, name + "_")(torch.tensor(b), torch.tensor(c), value=value),
        )
    i = [1, 2]
    _same(
        numbagrad.addcmul(
            numbagrad.tensor(i), numbagrad.tensor(i), numbagrad.tensor(i), value=value
        ),
        torch.addcmul(torch.tensor(i), torch.tensor(i), torch.tensor(i), value=value),
    )
    m, t = _raises_like(
        lambda: numbagrad.addcdiv(
            numbagrad.tensor([1.0]), numbagrad.tensor([1]), numbagrad.tensor([2])
        ),
        lambda: torch.addcdiv(torch.tensor([1.0]), torch.tensor([1]), torch.tensor([2])),
    )
    assert m == t


def test_logspace_and_is_floating_point():
    _same(numbagrad.logspace(0, 2, 3), torch.logspace(0, 2, 3), rtol=1e-6)
    _same(
        numbagrad.logspace(-2.5, -1.5, 5, dtype=numbagrad.float64),
        torch.logspace(-2.5, -1.5, 5, dtype=torch.float64),
    )
    _same(
        numbagrad.logspace(0, 3, 4, base=2, dtype=numbagrad.float64),
        torch.logspace(0, 3, 4, base=2, dtype=torch.float64),
    )
    assert numbagrad.logspace(0, 1, 0).shape == (0,)
    assert numbagrad.is_floating_point(numbagrad.ones(1))
    assert not numbagrad.is_floating_point(numbagrad.tensor([1]))


# -- shape: unbind, repeat, sum_to_size ---------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind_matches_torch_with_gradient(dim):
    x = np.arange(6.0).reshape(2, 3)
    xo, xt = numbagrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    po, pt = numbagrad.unbind(xo, dim), torch.unbind(xt, dim)
    assert isinstance(po, tuple) and len(po) == len(pt)
    for i, (a, b) in enumerate(zip(po, pt)):
        _same(a, b)
        (a * (i + 1)).sum().backward()
        (b * (i + 1)).sum().backward()
    _same(xo.grad, xt.grad)
    _same(xo.unbind(dim)[0], xt.unbind(dim)[0])


def test_unbind_errors():
    m, t = _raises_like(lambda: numbagrad.tensor(1.0).unbind(), lambda: torch.tensor(1.0).unbind())
    assert m == t
    _raises_like(lambda: numbagrad.ones(2, 3).unbind(2), lambda: torch.ones(2, 3).unbind(2))


@pytest.mark.parametrize("sizes", [(2, 1), ((2, 2),), (3, 1, 2), (1, 1)])
def test_repeat_matches_torch_with_gradient(sizes):
    x = np.arange(6.0).reshape(2, 3)
    xo, xt = numbagrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    o, t = xo.repeat(*sizes), xt.repeat(*sizes)
    _same(o, t)
    w = np.arange(float(np.prod(t.shape))).reshape(tuple(t.shape))
    (o * numbagrad.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    _same(xo.grad, xt.grad)
    assert not hasattr(numbagrad, "repeat")  # method-only, as in PyTorch


def test_repeat_errors():
    m, t = _raises_like(lambda: numbagrad.ones(2, 3).repeat(2), lambda: torch.ones(2, 3).repeat(2))
    assert m == t


def test_sum_to_size_matches_torch():
    x = np.arange(6.0).reshape(2, 3)
    for size in [(1, 3), (3,), ((2, 1),), (2, 3)]:
        _same(numbagrad.tensor(x).sum_to_size(*size), torch.tensor(x).sum_to_size(*size))
    m, t = _raises_like(
        lambda: numbagrad.ones(2, 3).sum_to_size(3, 3), lambda: torch.ones(2, 3).sum_to_size(3, 3)
    )
    assert m == t


# -- Tensor.fill_diagonal_, .H, .mH ---------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,wrap",
    [
        ((3, 4), False),
        ((4, 3), True),
        ((7, 3), True),
        ((7, 3), False),
        ((2, 2, 2), False),
        ((3, 3), True),
    ],
)
def test_fill_diagonal_matches_torch_with_gradient(shape, wrap):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    xo, xt = numbagrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    yo, yt = xo * 2, xt * 2
    assert yo.fill_diagonal_(-1.5, wrap=wrap) is yo
    yt.fill_diagonal_(-1.5, wrap=wrap)
    _same(yo, yt)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    _same(xo.grad, xt.grad)


def test_fill_diagonal_errors_and_conjugate_transposes():
    for shape in ((3,), (2, 3, 2)):
        m, t = _raises_like(
            lambda s=shape: numbagrad.zeros(*s).fill_diagonal_(1.0),
            lambda s=shape: torch.zeros(*s).fill_diagonal_(1.0),
        )
        assert m == t
    a = np.arange(6.0).reshape(2, 3)
    _same(numbagrad.tensor(a).H, torch.tensor(a).H)
    _same(numbagrad.tensor(a)[None].mH, torch.tensor(a)[None].mH)
    _same(numbagrad.tensor(2.0).H, torch.tensor(2.0).H)
    for shape, attr in (((3,), "H"), ((2, 2, 2), "H"), ((3,), "mH")):
        m, t = _raises_like(
            lambda s=shape, n=attr: getattr(numbagrad.zeros(*s), n),
            lambda s=shape, n=attr: getattr(torch.zeros(*s), n),
        )
        assert m == t


# -- tensor_split, combinations, isin -------------------------------------------------------------
@pytest.mark.parametrize("spec", [3, 1, 9, [1, 5], [5, 1], [2, 10], [-3, 4], "t0", "t1"])
def test_tensor_split_matches_torch(spec):
    a = np.arange(14.0).reshape(7, 2)

    def split(lib, x):
        s = (
            {"t0": lib.tensor(3), "t1": lib.tensor([2, 4])}.get(spec, spec)
            if isinstance(spec, str)
            else spec
        )
        return lib.tensor_split(x, s)

    xo, xt = numbagrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    po, pt = split(numbagrad, xo), split(torch, xt)
    assert len(po) == len(pt)
    for i, (u, v) in enumerate(zip(po, pt)):
        _same(u, v)
        (u * (i + 1)).sum().backward()
        (v * (i + 1)).sum().backward()
    _same(xo.grad, xt.grad)
    _same(numbagrad.tensor(a).tensor_split(2, dim=1)[1], torch.tensor(a).tensor_split(2, 1)[1])


def test_tensor_split_errors():
    m, t = _raises_like(
        lambda: numbagrad.tensor_split(numbagrad.arange(3), 0),
        lambda: torch.tensor_split(torch.arange(3), 0),
    )
    assert m == t


@pytest.mark.parametrize("r,repl", [(2, False), (3, False), (2, True), (4, False), (0, False)])
def test_combinations_matches_torch_with_gradient(r, repl):
    a = np.array([0.5, -1.0, 2.0, 3.5])[:3]
    xo, xt = numbagrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    co = numbagrad.combinations(xo, r=r, with_replacement=repl)
    ct = torch.combinations(xt, r=r, with_replacement=repl)
    _same(co, ct)
    if co.numel():
        (co**2).sum().backward()
        (ct**2).sum().backward()
        _same(xo.grad, xt.grad)
    m, t = _raises_like(
        lambda: numbagrad.combinations(numbagrad.ones(2, 2)),
        lambda: torch.combinations(torch.ones(2, 2)),
    )
    assert m == t


def test_isin_matches_torch():
    a, b = np.array([[1, 2], [3, 4]]), np.array([2, 3, 9])
    for invert in (False, True):
        _same(
            numbagrad.isin(numbagrad.tensor(a), numbagrad.tensor(b), invert=invert),
            torch.isin(torch.tensor(a), torch.tensor(b), invert=invert),
        )
    _same(
        numbagrad.isin(numbagrad.tensor([1.0, 2.0]), 2.0), torch.isin(torch.tensor([1.0, 2.0]), 2.0)
    )
    _same(numbagrad.isin(3, numbagrad.tensor([3])), torch.isin(3, torch.tensor([3])))
    _same(
        numbagrad.isin(numbagrad.tensor(a), numbagrad.tensor([], dtype=numbagrad.int64)),
        torch.isin(torch.tensor(a), torch.tensor([], dtype=torch.int64)),
    )
