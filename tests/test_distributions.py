"""``numbagrad.distributions`` against PyTorch: log_prob, entropy, moments, samples' shapes,
KL divergences, ``Independent``, ``rsample`` gradients, ``MultivariateNormal``."""

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


# -- distributions ------------------------------------------------------------------------------
def _dist_pair(name, params):
    """The same distribution in both libraries; tensor parameters require grad."""

    def build(lib):
        args = {
            k: lib.tensor(v, requires_grad=True) if isinstance(v, np.ndarray) else v
            for k, v in params.items()
        }
        return getattr(lib.distributions, name)(**args), args

    return build(numbagrad), build(torch)


@pytest.mark.parametrize(
    "name,params,value",
    [
        (
            "Normal",
            {"loc": np.array([0.0, 1.5, -2.0]), "scale": np.array([1.0, 0.3, 2.5])},
            np.array([0.2, 1.0, 3.0]),
        ),
        ("Normal", {"loc": 0.5, "scale": np.array([[1.0], [2.0]])}, np.array([0.0, 1.0])),
        (
            "Uniform",
            {"low": np.array([0.0, -1.0]), "high": np.array([2.0, 3.0])},
            np.array([1.0, 2.5]),
        ),
        ("Bernoulli", {"probs": np.array([0.2, 0.7, 0.5])}, np.array([1.0, 0.0, 1.0])),
        ("Bernoulli", {"logits": np.array([-1.0, 0.3, 2.0])}, np.array([1.0, 0.0, 1.0])),
        ("Categorical", {"probs": np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])}, np.array([2, 0])),
        ("Categorical", {"logits": np.array([[0.1, -1.0, 2.0, 0.0]])}, np.array([[3], [1]])),
    ],
)
def test_distributions_match_torch(name, params, value):
    (do, po), (dt, pt) = _dist_pair(name, params)
    assert tuple(do.batch_shape) == tuple(dt.batch_shape)
    assert tuple(do.event_shape) == tuple(dt.event_shape)
    vo, vt = numbagrad.tensor(value), torch.tensor(value)
    lo, lt = do.log_prob(vo), dt.log_prob(vt)
    _same(lo, lt)
    eo, et = do.entropy(), dt.entropy()
    _same(eo, et)
    (lo.sum() + eo.sum()).backward()
    (lt.sum() + et.sum()).backward()
    for k in po:
        if isinstance(po[k], numbagrad.Tensor):
            _same(po[k].grad, pt[k].grad)
    if name in ("Normal", "Uniform"):
        u = np.array([0.1, 0.6, 0.9])[: value.shape[-1]]
        _same(do.cdf(vo), dt.cdf(vt))
        _same(do.icdf(numbagrad.tensor(u)), dt.icdf(torch.tensor(u)))
    if name != "Categorical":
        _same(do.mean, dt.mean)
        _same(do.variance, dt.variance)
        _same(do.stddev, dt.stddev)
    assert tuple(do.sample((4,)).shape) == tuple(dt.sample((4,)).shape)


@pytest.mark.parametrize(
    "name,p,q",
    [
        (
            "Normal",
            {"loc": np.array([0.0, 1.0]), "scale": np.array([1.0, 2.0])},
            {"loc": np.array([0.5, -1.0]), "scale": np.array([0.7, 1.0])},
        ),
        ("Bernoulli", {"probs": np.array([0.2, 0.9])}, {"logits": np.array([0.3, -0.4])}),
        (
            "Categorical",
            {"logits": np.array([[0.1, 1.0, -0.5]])},
            {"probs": np.array([[0.3, 0.3, 0.4]])},
        ),
    ],
)
def test_kl_divergence_matches_torch(name, p, q):
    (po, ppo), (pt, ppt) = _dist_pair(name, p)
    (qo, _), (qt, _) = _dist_pair(name, q)
    ko = numbagrad.distributions.kl_divergence(po, qo)
    kt = torch.distributions.kl_divergence(pt, qt)
    _same(ko, kt)
    ko.sum().backward()
    kt.sum().backward()
    for k in ppo:
        _same(ppo[k].grad, ppt[k].grad)


def test_independent_and_rsample_gradients():
    D = numbagrad.distributions
    base = D.Normal(numbagrad.zeros(2, 3), numbagrad.ones(2, 3))
    ind = D.Independent(base, 1)
    indt = torch.distributions.Independent(
        torch.distributions.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1
    )
    assert (tuple(ind.batch_shape), tuple(ind.event_shape)) == (
        tuple(indt.batch_shape),
        tuple(indt.event_shape),
    )
    v = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    _same(ind.log_prob(numbagrad.tensor(v)), indt.log_prob(torch.tensor(v)), rtol=1e-6)
    _same(ind.entropy(), indt.entropy(), rtol=1e-6)
    _same(D.kl_divergence(ind, ind), torch.distributions.kl_divergence(indt, indt))
    loc = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    D.Normal(loc, 0.5).rsample((5,)).sum().backward()
    assert loc.grad.tolist() == [5.0, 5.0]
    assert not D.Normal(loc, 0.5).sample((2,)).requires_grad
    draws = D.Categorical(probs=numbagrad.tensor([[0.0, 1.0], [1.0, 0.0]])).sample((3,))
    assert draws.tolist() == [[1, 0]] * 3
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match="GreaterThan"):
        D.Normal(0.0, -1.0, validate_args=True)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_torch(param):
    rng = np.random.default_rng(5)
    b = rng.normal(size=(2, 3, 3))
    cov = b @ b.transpose(0, 2, 1) + 3 * np.eye(3)
    mat = {
        "covariance_matrix": cov,
        "precision_matrix": np.linalg.inv(cov),
        "scale_tril": np.linalg.cholesky(cov),
    }[param]
    loc = rng.normal(size=3)
    value = rng.normal(size=(4, 1, 3))

    def build(lib):
        lo, m = lib.tensor(loc, requires_grad=True), lib.tensor(mat, requires_grad=True)
        return lib.distributions.MultivariateNormal(lo, **{param: m}), lo, m

    (do, lo, mo), (dt, lt, mt) = build(numbagrad), build(torch)
    assert tuple(do.batch_shape) == tuple(dt.batch_shape) == (2,)
    po, pt = do.log_prob(numbagrad.tensor(value)), dt.log_prob(torch.tensor(value))
    _same(po, pt, rtol=1e-10)
    _same(do.entropy(), dt.entropy(), rtol=1e-10)
    _same(do.covariance_matrix, dt.covariance_matrix, rtol=1e-10)
    _same(do.variance, dt.variance, rtol=1e-10)
    (po.sum() + do.entropy().sum()).backward()
    (pt.sum() + dt.entropy().sum()).backward()
    _same(lo.grad, lt.grad, rtol=1e-9)
    if param != "precision_matrix":  # torch symmetrises nothing either: same raw gradient
        _same(mo.grad, mt.grad, rtol=1e-8, atol=1e-12)
    assert tuple(do.rsample((5,)).shape) == tuple(dt.rsample((5,)).shape)


def test_multivariate_normal_kl_matches_torch():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(2, 3, 3))
    ca, cb = a @ a.T + np.eye(3), b @ b.transpose(0, 2, 1) + np.eye(3)
    la, lb = rng.normal(size=3), rng.normal(size=(2, 3))

    def kl(lib):
        ma = lib.tensor(ca, requires_grad=True)
        p = lib.distributions.MultivariateNormal(lib.tensor(la), ma)
        q = lib.distributions.MultivariateNormal(lib.tensor(lb), lib.tensor(cb))
        k = lib.distributions.kl_divergence(p, q)
        k.sum().backward()
        return k, ma.grad

    (ko, go), (kt, gt) = kl(numbagrad), kl(torch)
    _same(ko, kt, rtol=1e-10)
    _same(go, gt, rtol=1e-8, atol=1e-12)
    with pytest.raises(ValueError, match="Exactly one of"):
        numbagrad.distributions.MultivariateNormal(numbagrad.zeros(2))
