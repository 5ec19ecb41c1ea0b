"""``numbagrad.distributions`` against PyTorch: log_prob, entropy, moments, cdf/icdf, samples'
shapes, ``expand``, reprs, KL divergences, ``Independent``, ``rsample`` gradients (gradcheck
through the reparameterised gamma draws, sampled moments), ``MultivariateNormal``, the
transforms (round trips, log det Jacobians against autograd's Jacobian), the constraints
with ``biject_to``/``transform_to``, and ``validate_args``' errors."""

import math

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
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(probs=numbagrad.tensor([0.5, 0.5])))


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


# -- the families against torch -----------------------------------------------------------------
_A = np.array


def _A32(v):
    return np.array(v, dtype=np.float32)


# (name, parameters, a value in the support); arrays become tensors requiring grad
FAMILIES = [
    ("Normal", {"loc": _A([0.0, 1.5]), "scale": _A([1.0, 0.3])}, _A([0.2, 1.0])),
    ("Exponential", {"rate": _A([0.5, 2.0])}, _A([0.3, 1.7])),
    ("Laplace", {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 3.0])}, _A([0.3, 1.0])),
    ("Cauchy", {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 3.0])}, _A([0.3, 1.0])),
    ("HalfNormal", {"scale": _A([0.5, 2.0])}, _A([0.3, 1.0])),
    ("HalfCauchy", {"scale": _A([0.5, 2.0])}, _A([0.3, 1.0])),
    ("LogNormal", {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 0.4])}, _A([0.3, 1.0])),
    ("Gamma", {"concentration": _A([0.5, 2.5]), "rate": _A([1.0, 3.0])}, _A([0.3, 1.0])),
    ("Gamma", {"concentration": _A([[0.7], [4.0]]), "rate": 2.0}, _A([0.3, 1.0, 2.0])),
    ("Chi2", {"df": _A([0.5, 3.0])}, _A([0.3, 1.0])),
    ("Beta", {"concentration1": _A([0.5, 2.0]), "concentration0": _A([1.5, 3.0])}, _A([0.3, 0.8])),
    ("Dirichlet", {"concentration": _A([[0.5, 2.0, 1.0], [3.0, 1.0, 1.5]])}, _A([0.3, 0.5, 0.2])),
    (
        "StudentT",
        {"df": _A([0.8, 2.0, 5.0]), "loc": _A([1.0, 0.0, -1.0]), "scale": _A([1.0, 2.0, 0.5])},
        _A([0.3, 1.0, -1.0]),
    ),
    ("Poisson", {"rate": _A([0.5, 4.0])}, _A([0.0, 3.0])),
    ("Binomial", {"total_count": 5, "probs": _A([0.3, 0.6])}, _A([2.0, 5.0])),
    ("Binomial", {"total_count": _A([5.0, 7.0]), "logits": _A([0.3, -0.6])}, _A([0.0, 3.0])),
    ("Geometric", {"probs": _A([0.3, 0.6])}, _A([2.0, 0.0])),
    ("Geometric", {"logits": _A([0.3, -2.0])}, _A([2.0, 5.0])),
    ("NegativeBinomial", {"total_count": _A([5.0, 2.5]), "probs": _A([0.3, 0.6])}, _A([2.0, 0.0])),
    ("NegativeBinomial", {"total_count": 3.0, "logits": _A([0.3, -1.0])}, _A([4.0, 1.0])),
    ("Multinomial", {"total_count": 4, "probs": _A([0.3, 0.6, 0.1])}, _A([2.0, 1.0, 1.0])),
    ("Multinomial", {"total_count": 3, "logits": _A([[0.3, 0.6], [1.0, -1.0]])}, _A([3.0, 0.0])),
    ("OneHotCategorical", {"probs": _A([[0.3, 0.6, 0.1], [0.2, 0.2, 0.6]])}, _A([0.0, 1.0, 0.0])),
    ("OneHotCategoricalStraightThrough", {"logits": _A([0.3, 0.6, -1.0])}, _A([0.0, 0.0, 1.0])),
    ("Gumbel", {"loc": _A([0.5, 2.0]), "scale": _A([1.0, 3.0])}, _A([0.3, 1.0])),
    ("Weibull", {"scale": _A([0.5, 2.0]), "concentration": _A([1.0, 3.0])}, _A([0.3, 1.0])),
    ("Pareto", {"scale": _A([0.5, 2.0]), "alpha": _A([1.5, 3.0])}, _A([0.6, 3.0])),
    ("Bernoulli", {"probs": _A([0.2, 0.5])}, _A([1.0, 0.0])),
    ("Uniform", {"low": _A([0.0, -1.0]), "high": _A([2.0, 3.0])}, _A([1.0, 2.5])),
    ("InverseGamma", {"concentration": _A([1.5, 3.5]), "rate": _A([1.0, 3.0])}, _A([0.3, 1.0])),
    (
        "Kumaraswamy",
        {"concentration1": _A([0.5, 2.0]), "concentration0": _A([1.5, 3.0])},
        _A([0.3, 0.8]),
    ),
    ("LogisticNormal", {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 0.4])}, _A([0.3, 0.5, 0.2])),
    ("RelaxedBernoulli", {"temperature": _A(0.7), "probs": _A([0.3, 0.6])}, _A([0.3, 0.8])),
    ("RelaxedBernoulli", {"temperature": _A(1.7), "logits": _A([0.3, -2.0])}, _A([0.3, 0.8])),
    (
        "RelaxedOneHotCategorical",
        {"temperature": _A(0.7), "probs": _A([0.3, 0.6, 0.1])},
        _A([0.3, 0.5, 0.2]),
    ),
    ("ContinuousBernoulli", {"probs": _A([0.2, 0.4995, 0.9])}, _A([0.3, 0.8, 0.5])),
    ("ContinuousBernoulli", {"logits": _A([0.3, -2.0])}, _A([0.3, 0.8])),
    ("FisherSnedecor", {"df1": _A([1.5, 5.0]), "df2": _A([3.0, 7.0])}, _A([0.3, 1.7])),
    (
        # float32: torch's GeneralizedPareto compares a float64 concentration with a
        # float32 zero, which raises
        "GeneralizedPareto",
        {"loc": _A32([0.0, 1.0]), "scale": _A32([1.0, 2.0]), "concentration": _A32([0.3, -0.2])},
        _A32([0.3, 1.7]),
    ),
    ("GeneralizedPareto", {"loc": 0.5, "scale": 2.0, "concentration": 0.0}, _A32([0.7, 1.7])),
    ("VonMises", {"loc": _A([0.5, -1.0]), "concentration": _A([0.5, 6.0])}, _A([0.3, 1.7])),
    (
        "LowRankMultivariateNormal",
        {
            "loc": _A([[0.5, -1.0, 0.0], [1.0, 2.0, 3.0]]),
            "cov_factor": _A([[1.0, 0.5], [0.2, -0.3], [0.0, 1.0]]),
            "cov_diag": _A([0.5, 1.0, 2.0]),
        },
        _A([0.3, 1.7, -1.0]),
    ),
]


def _call_or_none(fn):
    try:
        return fn()
    except (NotImplementedError, AttributeError):
        return None


def _close(a, b, rtol=1e-9, atol=1e-12):
    assert a is not None, "numbagrad lacks what torch has"
    a, b = _np(a), b.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    if a.dtype == np.float32:
        rtol, atol = max(rtol, 2e-5), max(atol, 1e-6)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name,params,value", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_family_matches_torch(name, params, value):
    (do, po), (dt, pt) = _dist_pair(name, params)
    assert (tuple(do.batch_shape), tuple(do.event_shape)) == (
        tuple(dt.batch_shape),
        tuple(dt.event_shape),
    )
    assert repr(do) == repr(dt).replace("torch.", "numbagrad.")
    assert do.has_rsample == dt.has_rsample
    assert sorted(do.arg_constraints) == sorted(dt.arg_constraints)
    if not name.startswith(("Binomial", "Multinomial", "Uniform", "Pareto", "GeneralizedPareto")):
        assert repr(do.support) == repr(dt.support)
    vo, vt = numbagrad.tensor(value), torch.tensor(value)
    lo, lt = do.log_prob(vo), dt.log_prob(vt)
    _close(lo, lt)
    total_o, total_t = lo.sum(), lt.sum()
    et = _call_or_none(dt.entropy)
    if et is not None:
        eo = do.entropy()
        _close(eo, et, rtol=1e-7)
        total_o, total_t = total_o + eo.sum(), total_t + et.sum()
    if total_t.requires_grad:
        total_o.backward()
        total_t.backward()
    for k in po:
        if isinstance(po[k], numbagrad.Tensor):
            _close(po[k].grad, pt[k].grad, rtol=1e-7, atol=1e-10)
    for attr in ("mean", "mode", "variance", "stddev"):
        theirs = _call_or_none(lambda a=attr: getattr(dt, a))
        if theirs is not None:
            _close(getattr(do, attr), theirs)
    u = np.clip(value, 0.1, 0.9)
    for method, arg in (("cdf", value), ("icdf", u)):
        theirs = _call_or_none(lambda m=method, a=arg: getattr(dt, m)(torch.tensor(a)))
        if theirs is not None:
            _close(getattr(do, method)(numbagrad.tensor(arg)), theirs)
    sample = do.sample((4,))
    assert tuple(sample.shape) == tuple(dt.sample((4,)).shape)
    assert not sample.requires_grad
    if not name.startswith(("Uniform", "GeneralizedPareto", "RelaxedOneHot", "LogisticNormal")):
        assert bool(do.support.check(sample).all())
    if do.has_rsample:
        assert tuple(do.rsample((3,)).shape) == tuple(dt.rsample((3,)).shape)
    # expand: new batch dimensions in front, same log_prob broadcast
    new_batch = (3, *tuple(do.batch_shape))
    eo_, et_ = do.expand(new_batch), dt.expand(new_batch)
    assert tuple(eo_.batch_shape) == tuple(et_.batch_shape) == new_batch
    if not do.batch_shape and not do.event_shape:  # scalar parameters: values in a column
        vo, vt = vo.reshape(-1, 1), vt.reshape(-1, 1)
    _close(eo_.log_prob(vo), et_.log_prob(vt))
    if dt.has_enumerate_support:
        theirs = _call_or_none(dt.enumerate_support)
        if theirs is None:
            with pytest.raises(NotImplementedError):
                do.enumerate_support()
        else:
            _close(do.enumerate_support(), theirs)


# -- KL divergences --------------------------------------------------------------------------------
def _mk(lib, name, params):
    return getattr(lib.distributions, name)(
        **{k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in params.items()}
    )


_KL_PARAMS = {
    "Normal": {"loc": _A([0.3, -1.0]), "scale": _A([1.2, 0.5])},
    "Exponential": {"rate": _A([0.5, 2.0])},
    "Laplace": {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 3.0])},
    "Cauchy": {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 3.0])},
    "HalfNormal": {"scale": _A([0.5, 2.0])},
    "Gamma": {"concentration": _A([0.5, 2.5]), "rate": _A([1.0, 3.0])},
    "Beta": {"concentration1": _A([0.5, 2.0]), "concentration0": _A([1.5, 3.0])},
    "Dirichlet": {"concentration": _A([[0.5, 2.0, 1.0], [3.0, 1.0, 1.5]])},
    "Poisson": {"rate": _A([0.5, 4.0])},
    "Binomial": {"total_count": 5, "probs": _A([0.3, 0.6])},
    "Geometric": {"probs": _A([0.3, 0.6])},
    "OneHotCategorical": {"probs": _A([[0.3, 0.6, 0.1], [0.2, 0.2, 0.6]])},
    "Gumbel": {"loc": _A([0.5, 2.0]), "scale": _A([1.0, 3.0])},
    "Pareto": {"scale": _A([0.5, 2.0]), "alpha": _A([2.5, 3.0])},
    "Uniform": {"low": _A([0.1, 0.2]), "high": _A([0.7, 0.9])},
    "Bernoulli": {"probs": _A([0.2, 0.5])},
    "LogNormal": {"loc": _A([0.5, -1.0]), "scale": _A([1.0, 0.4])},
    "Weibull": {"scale": _A([0.5, 2.0]), "concentration": _A([1.0, 3.0])},
    "ContinuousBernoulli": {"probs": _A([0.2, 0.7])},
    "LowRankMultivariateNormal": {
        "loc": _A([[0.5, -1.0, 0.0], [1.0, 2.0, 3.0]]),
        "cov_factor": _A([[1.0, 0.5], [0.2, -0.3], [0.0, 1.0]]),
        "cov_diag": _A([0.5, 1.0, 2.0]),
    },
    "MultivariateNormal": {
        "loc": _A([0.5, -1.0, 1.0]),
        "covariance_matrix": _A([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]]),
    },
}
_KL_Q = {  # second parameter sets, so that p != q
    name: {
        k: (v * 1.3 if isinstance(v, np.ndarray) and name != "Uniform" else v)
        for k, v in ps.items()
    }
    for name, ps in _KL_PARAMS.items()
}
_KL_Q["Uniform"] = {"low": _A([0.0, 0.1]), "high": _A([1.0, 0.95])}
_KL_Q["Geometric"] = {"probs": _A([0.5, 0.2])}
_KL_Q["Beta"] = {"concentration1": _A([1.5, 1.0]), "concentration0": _A([0.5, 2.0])}
_KL_Q["Bernoulli"] = {"probs": _A([0.4, 0.7])}
_KL_Q["OneHotCategorical"] = {"probs": _A([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])}
_KL_Q["Binomial"] = {"total_count": 5, "probs": _A([0.5, 0.2])}
_KL_Q["ContinuousBernoulli"] = {"probs": _A([0.6, 0.4995])}

_KL_PAIRS = [
    (a, b)
    for a in _KL_PARAMS
    for b in _KL_PARAMS
    if (a == b and a not in ("Weibull",))
    or (a, b)
    in {
        ("Bernoulli", "Poisson"),
        ("Beta", "Exponential"),
        ("Beta", "Gamma"),
        ("Beta", "Normal"),
        ("Beta", "Uniform"),
        ("Beta", "Pareto"),
        ("Exponential", "Gamma"),
        ("Exponential", "Gumbel"),
        ("Exponential", "Normal"),
        ("Exponential", "Uniform"),
        ("Gamma", "Exponential"),
        ("Gamma", "Gumbel"),
        ("Gamma", "Normal"),
        ("Gamma", "Beta"),
        ("Gumbel", "Normal"),
        ("Gumbel", "Gamma"),
        ("Laplace", "Normal"),
        ("Laplace", "Pareto"),
        ("Normal", "Gumbel"),
        ("Normal", "Laplace"),
        ("Normal", "Exponential"),
        ("Pareto", "Exponential"),
        ("Pareto", "Gamma"),
        ("Pareto", "Normal"),
        ("Pareto", "Uniform"),
        ("Poisson", "Bernoulli"),
        ("Poisson", "Binomial"),
        ("Uniform", "Beta"),
        ("Uniform", "Exponential"),
        ("Uniform", "Gamma"),
        ("Uniform", "Gumbel"),
        ("Uniform", "Normal"),
        ("Uniform", "Pareto"),
        ("Uniform", "ContinuousBernoulli"),
        ("Beta", "ContinuousBernoulli"),
        ("ContinuousBernoulli", "Exponential"),
        ("ContinuousBernoulli", "Normal"),
        ("ContinuousBernoulli", "Uniform"),
        ("ContinuousBernoulli", "Pareto"),
        ("Gamma", "ContinuousBernoulli"),
        ("Normal", "ContinuousBernoulli"),
        ("LowRankMultivariateNormal", "MultivariateNormal"),
        ("MultivariateNormal", "LowRankMultivariateNormal"),
    }
]


@pytest.mark.parametrize("pname,qname", _KL_PAIRS, ids=[f"{a}-{b}" for a, b in _KL_PAIRS])
def test_kl_pairs_match_torch(pname, qname):
    qparams = _KL_Q[qname] if pname == qname else _KL_PARAMS[qname]
    ko = numbagrad.distributions.kl_divergence(
        _mk(numbagrad, pname, _KL_PARAMS[pname]), _mk(numbagrad, qname, qparams)
    )
    kt = torch.distributions.kl_divergence(
        _mk(torch, pname, _KL_PARAMS[pname]), _mk(torch, qname, qparams)
    )
    _close(ko, kt, rtol=1e-8)


def test_kl_dispatch_and_register():
    D = numbagrad.distributions

    class MyNormal(D.Normal):
        pass

    # a subclass uses its base's pair; the Bregman form serves exponential families
    _same(
        D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)),
        torch.distributions.kl_divergence(
            torch.distributions.Normal(0.0, 1.0), torch.distributions.Normal(1.0, 2.0)
        ),
    )
    with pytest.raises(TypeError, match="Distribution subclass"):
        D.register_kl(int, D.Normal)
    p = D.Poisson(numbagrad.tensor([1.0, 2.0]))
    q = D.Poisson(numbagrad.tensor([2.0, 0.5]))
    bregman = D.kl._kl_expfamily_expfamily(p, q)
    _same(bregman, D.kl_divergence(p, q).detach(), rtol=1e-10)


# -- reparameterised samples -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda c, r: numbagrad.distributions.Gamma(c, r),
        lambda c, r: numbagrad.distributions.Beta(c, r),
        lambda c, r: numbagrad.distributions.Dirichlet(numbagrad.stack([c, r], -1)),
        lambda c, r: numbagrad.distributions.StudentT(c + 1.0, 0.0, r),
        lambda c, r: numbagrad.distributions.Chi2(c),
    ],
    ids=["Gamma", "Beta", "Dirichlet", "StudentT", "Chi2"],
)
def test_rsample_gradcheck(build):
    c = numbagrad.tensor([0.6, 2.0, 7.5], dtype=numbagrad.float64, requires_grad=True)
    r = numbagrad.tensor([1.5, 0.7, 3.0], dtype=numbagrad.float64, requires_grad=True)

    def draw(c, r):
        numbagrad.manual_seed(3)  # the same uniforms at every evaluation
        return build(c, r).rsample((2,))

    assert numbagrad.autograd.gradcheck(draw, (c, r), atol=1e-6, rtol=1e-4)


def test_standard_gamma_grad_matches_torch():
    alpha = np.array([0.3, 1.0, 2.5, 30.0, 400.0])
    x = np.array([0.05, 0.7, 3.0, 28.0, 390.0])
    ours = numbagrad.ops.standard_gamma_grad(numbagrad.tensor(alpha), numbagrad.tensor(x))
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x))
    # torch's is an approximation (about 1e-4 relative); ours is exact to ~1e-9
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=5e-4)


@pytest.mark.parametrize(
    "name,params,mean,var",
    [
        ("Gamma", {"concentration": 0.4, "rate": 2.0}, 0.2, 0.1),
        ("Gamma", {"concentration": 50.0, "rate": 1.0}, 50.0, 50.0),
        ("Beta", {"concentration1": 2.0, "concentration0": 5.0}, 2 / 7, 10 / (49 * 8)),
        ("Poisson", {"rate": 3.0}, 3.0, 3.0),
        ("Binomial", {"total_count": 300.0, "probs": 0.3}, 90.0, 63.0),
        ("Geometric", {"probs": 0.25}, 3.0, 12.0),
        ("NegativeBinomial", {"total_count": 4.0, "probs": 0.4}, 8 / 3, 40 / 9),
        ("Laplace", {"loc": 1.0, "scale": 2.0}, 1.0, 8.0),
        ("Exponential", {"rate": 0.5}, 2.0, 4.0),
        ("Gumbel", {"loc": 1.0, "scale": 2.0}, 1.0 + 2 * 0.5772156649, (np.pi * 2) ** 2 / 6),
        ("Weibull", {"scale": 2.0, "concentration": 1.5}, None, None),
    ],
)
def test_sampled_moments(name, params, mean, var):
    numbagrad.manual_seed(11)
    d = getattr(numbagrad.distributions, name)(**params)
    x = _np(d.sample((40000,)))
    mean = float(_np(d.mean)) if mean is None else mean
    var = float(_np(d.variance)) if var is None else var
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / x.size) + 1e-12, (x.mean(), mean)
    assert abs(x.var() / var - 1) < 0.05, (x.var(), var)


def test_dirichlet_and_multinomial_samples():
    numbagrad.manual_seed(2)
    conc = numbagrad.tensor([1.0, 2.0, 3.0])
    x = _np(numbagrad.distributions.Dirichlet(conc).sample((20000,)))
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    m = numbagrad.distributions.Multinomial(10, probs=numbagrad.tensor([0.2, 0.8]))
    counts = _np(m.sample((5000,)))
    assert (counts.sum(-1) == 10).all()
    np.testing.assert_allclose(counts.mean(0), [2.0, 8.0], atol=0.1)
    st = numbagrad.distributions.OneHotCategoricalStraightThrough(
        logits=numbagrad.tensor([0.0, 1.0], requires_grad=True)
    )
    s = st.rsample()
    assert sorted(s.tolist()) == [0.0, 1.0]
    s.sum().backward()  # the straight-through gradient flows to the logits
    assert st._categorical.logits.grad_fn is not None


# -- transforms ------------------------------------------------------------------------------------
def _transform_pair(lib, name):
    T = lib.distributions.transforms
    return {
        "exp": lambda: T.ExpTransform(),
        "affine": lambda: T.AffineTransform(
            lib.tensor([1.0, -2.0, 0.5]), lib.tensor([2.0, -0.5, 3.0])
        ),
        "affine_event": lambda: T.AffineTransform(0.5, lib.tensor([2.0, -0.5, 3.0]), event_dim=1),
        "sigmoid": lambda: T.SigmoidTransform(),
        "tanh": lambda: T.TanhTransform(),
        "softplus": lambda: T.SoftplusTransform(),
        "power": lambda: T.PowerTransform(lib.tensor(2.5)),
        "stick": lambda: T.StickBreakingTransform(),
        "corr_cholesky": lambda: T.CorrCholeskyTransform(),
        "compose": lambda: T.ComposeTransform([T.AffineTransform(0.3, 2.0), T.ExpTransform()]),
        "independent": lambda: T.IndependentTransform(T.SigmoidTransform(), 1),
        "reshape": lambda: T.ReshapeTransform((3,), (3, 1)),
        "cat": lambda: T.CatTransform([T.ExpTransform(), T.identity_transform], 0, [1, 2]),
        "stack": lambda: T.StackTransform(
            [T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform()], 0
        ),
        "inv_exp": lambda: T.ExpTransform().inv,
        "cdf": lambda: T.CumulativeDistributionTransform(lib.distributions.Normal(0.5, 2.0)),
    }[name]()


_TRANSFORMS = [
    "exp",
    "affine",
    "affine_event",
    "sigmoid",
    "tanh",
    "softplus",
    "power",
    "stick",
    "corr_cholesky",
    "compose",
    "independent",
    "reshape",
    "cat",
    "stack",
    "inv_exp",
    "cdf",
]


@pytest.mark.parametrize("name", _TRANSFORMS)
def test_transform_matches_torch_and_round_trips(name):
    x = (
        np.array([0.3, -0.7, 1.2])
        if name not in ("inv_exp", "power")
        else np.array([0.3, 0.7, 1.2])
    )
    to, tt = _transform_pair(numbagrad, name), _transform_pair(torch, name)
    xo, xt = numbagrad.tensor(x, requires_grad=True), torch.tensor(x)
    yo, yt = to(xo), tt(xt)
    _close(yo, yt)
    _close(to.log_abs_det_jacobian(xo, yo), tt.log_abs_det_jacobian(xt, yt), rtol=1e-8)
    assert tuple(to.forward_shape((2, 3))) == tuple(tt.forward_shape((2, 3)))
    assert repr(to.domain) == repr(tt.domain) and repr(to.codomain) == repr(tt.codomain)
    _close(to.inv(yo.detach()), tt.inv(yt), rtol=1e-7, atol=1e-9)
    # log |det dy/dx| from autograd's Jacobian, for the bijections between equal dimensions
    if name not in ("stick", "corr_cholesky", "reshape") and to.bijective:
        jac = numbagrad.autograd.functional.jacobian(lambda v: to(v).reshape(-1), xo)
        jac = _np(jac).reshape(3, 3)
        lad = _np(to.log_abs_det_jacobian(xo, to(xo)))
        expected = np.log(np.abs(np.linalg.det(jac)))
        assert np.allclose(lad.sum(), expected, rtol=1e-8), (lad, expected)


def test_stick_breaking_log_det_against_autograd():
    T = numbagrad.distributions.transforms
    t = T.StickBreakingTransform()
    x = numbagrad.tensor([0.3, -0.7, 1.2], dtype=numbagrad.float64)
    jac = _np(numbagrad.autograd.functional.jacobian(lambda v: t(v)[:-1], x))
    lad = t.log_abs_det_jacobian(x, t(x)).item()
    assert np.isclose(lad, np.log(abs(np.linalg.det(jac))), rtol=1e-10)
    assert bool(numbagrad.distributions.constraints.simplex.check(t(x)))


def test_transform_cache_and_inverse_identity():
    T = numbagrad.distributions.transforms
    t = T.ExpTransform(cache_size=1)
    x = numbagrad.tensor([0.5])
    y = t(x)
    assert t.inv(y) is x and t.inv.inv is t
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((2,), (3,))
    assert T.identity_transform(x) is x


def test_transformed_distribution_matches_torch():
    def build(lib):
        T = lib.distributions.transforms
        base = lib.distributions.Normal(
            lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        )
        return lib.distributions.TransformedDistribution(
            base, [T.AffineTransform(1.0, 2.0), T.SigmoidTransform(), T.AffineTransform(0.0, -1.0)]
        )

    do, dt = build(numbagrad), build(torch)
    v = np.array([-0.3, -0.5, -0.9])
    _close(do.log_prob(numbagrad.tensor(v)), dt.log_prob(torch.tensor(v)))
    _close(do.cdf(numbagrad.tensor(v)), dt.cdf(torch.tensor(v)))
    _close(do.icdf(numbagrad.tensor([0.2, 0.5, 0.7])), dt.icdf(torch.tensor([0.2, 0.5, 0.7])))
    assert repr(do.support) == repr(dt.support)
    # an event-changing transform: stick breaking turns a batch of 2 into a 3-simplex event
    ln = numbagrad.distributions.TransformedDistribution(
        numbagrad.distributions.Normal(numbagrad.zeros(2), numbagrad.ones(2)),
        numbagrad.distributions.transforms.StickBreakingTransform(),
    )
    assert (tuple(ln.batch_shape), tuple(ln.event_shape)) == ((), (3,))


# -- constraints ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cname,value",
    [
        ("real", [0.0, np.nan]),
        ("positive", [1.0, -1.0, 0.0]),
        ("nonnegative", [1.0, -1.0, 0.0]),
        ("unit_interval", [0.5, 1.5]),
        ("boolean", [0.0, 1.0, 0.5]),
        ("nonnegative_integer", [0.0, 2.0, 1.5, -1.0]),
        ("simplex", [[0.2, 0.8], [0.5, 0.6]]),
        ("real_vector", [[0.2, np.nan], [0.5, 0.6]]),
        ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
        ("lower_cholesky", [[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.5, 2.0]]]),
        ("positive_definite", [[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
        ("corr_cholesky", [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.5, 0.5]]]),
    ],
)
def test_constraints_match_torch(cname, value):
    co = getattr(numbagrad.distributions.constraints, cname)
    ct = getattr(torch.distributions.constraints, cname)
    assert repr(co) == repr(ct)
    assert (co.event_dim, co.is_discrete) == (ct.event_dim, ct.is_discrete)
    v = np.array(value)
    assert co.check(numbagrad.tensor(v)).tolist() == ct.check(torch.tensor(v)).tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda c: c.positive,
        lambda c: c.greater_than(1.5),
        lambda c: c.less_than(-1.0),
        lambda c: c.interval(-1.0, 3.0),
        lambda c: c.unit_interval,
        lambda c: c.simplex,
        lambda c: c.real_vector,
        lambda c: c.corr_cholesky,
        lambda c: c.lower_cholesky,
        lambda c: c.positive_definite,
    ],
)
def test_biject_to_and_transform_to(make):
    D = numbagrad.distributions
    c = make(D.constraints)
    x = numbagrad.tensor(np.random.default_rng(0).normal(size=(2, 3, 3)))
    if c is D.constraints.corr_cholesky:
        x = x.reshape(2, 9)[:, :3]
    for registry in (D.transform_to, D.biject_to):
        try:
            t = registry(c)
        except NotImplementedError:
            theirs = getattr(
                torch.distributions, (registry is D.transform_to and "transform_to") or "biject_to"
            )
            with pytest.raises(NotImplementedError):
                theirs(make(torch.distributions.constraints))
            continue
        y = t(x)
        assert bool(c.check(y).all()), (c, y)
        if t.bijective:
            _close(t.inv(y), torch.tensor(_np(x)), rtol=1e-6, atol=1e-8)


# -- validate_args --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda lib: lib.distributions.Normal(lib.tensor([0.0]), lib.tensor([-1.0])),
        lambda lib: lib.distributions.Gamma(lib.tensor([0.0]), 1.0),
        lambda lib: lib.distributions.Beta(lib.tensor([1.0]), lib.tensor([-1.0])),
        lambda lib: lib.distributions.Dirichlet(lib.tensor([1.0, -1.0])),
        lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([1.5])),
        lambda lib: lib.distributions.Exponential(lib.tensor([0.0])),
        lambda lib: lib.distributions.Categorical(probs=lib.tensor([-0.5, 1.5])),
        lambda lib: lib.distributions.Uniform(lib.tensor([1.0]), lib.tensor([0.0])),
        lambda lib: lib.distributions.Geometric(probs=lib.tensor([0.0])),
        lambda lib: lib.distributions.Normal(0.0, 1.0).log_prob(lib.tensor(float("nan"))),
        lambda lib: lib.distributions.Gamma(1.0, 1.0).log_prob(lib.tensor(-1.0)),
        lambda lib: lib.distributions.Poisson(lib.tensor([1.0])).log_prob(lib.tensor([0.5])),
        lambda lib: lib.distributions.Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
        lambda lib: lib.distributions.Dirichlet(lib.ones(3)).log_prob(lib.ones(4) / 4),
    ],
)
def test_validate_args_errors_match_torch(build):
    ours, theirs = _raises_like(lambda: build(numbagrad), lambda: build(torch))
    assert (
        ours.split("found invalid values")[0].split("of distribution")[0]
        == theirs.replace("torch.", "numbagrad.")
        .split("found invalid values")[0]
        .split("of distribution")[0]
    )


def test_validate_args_off():
    D = numbagrad.distributions
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Gamma(-1.0, 1.0).concentration.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Gamma(-1.0, 1.0)


def test_second_derivative_of_gamma_sample_raises():
    c = numbagrad.tensor([2.0], dtype=numbagrad.float64, requires_grad=True)
    x = numbagrad.ops.standard_gamma(c)
    (g,) = numbagrad.autograd.grad(x.sum(), c, create_graph=True)
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad"):
        g.sum().backward()


def test_mixture_same_family_matches_torch():
    def build(lib):
        t = lambda v: lib.tensor(np.array(v))  # noqa: E731
        mix = lib.distributions.Categorical(probs=t([[0.3, 0.7], [0.5, 0.5]]))
        comp = lib.distributions.Normal(t([[-1.0, 1.0], [0.0, 2.0]]), t([[1.0, 0.5], [2.0, 1.0]]))
        return lib.distributions.MixtureSameFamily(mix, comp)

    do, dt = build(numbagrad), build(torch)
    v = np.array([[0.3], [-1.2], [2.0]])
    _close(do.log_prob(numbagrad.tensor(v)), dt.log_prob(torch.tensor(v)))
    _close(do.cdf(numbagrad.tensor(v)), dt.cdf(torch.tensor(v)))
    _close(do.mean, dt.mean)
    _close(do.variance, dt.variance)
    assert repr(do) == repr(dt).replace("torch.", "numbagrad.")
    assert repr(do.support) == repr(dt.support)
    assert tuple(do.sample((5,)).shape) == tuple(dt.sample((5,)).shape) == (5, 2)
    assert tuple(do.expand((3, 2)).batch_shape) == (3, 2)
    with pytest.raises(ValueError, match="does not equal"):
        numbagrad.distributions.MixtureSameFamily(
            numbagrad.distributions.Categorical(probs=numbagrad.ones(3)),
            numbagrad.distributions.Normal(numbagrad.zeros(2), 1.0),
        )


def test_von_mises_samples():
    numbagrad.manual_seed(4)
    d = numbagrad.distributions.VonMises(numbagrad.tensor(1.0), numbagrad.tensor(4.0))
    x = _np(d.sample((20000,)))
    assert ((x >= -np.pi) & (x < np.pi)).all()
    # circular mean and the variance 1 - I1/I0
    assert abs(np.angle(np.exp(1j * x).mean()) - 1.0) < 0.02
    assert abs((1 - np.abs(np.exp(1j * x).mean())) - d.variance.item()) < 0.01


def test_low_rank_mvn_matches_mvn():
    D = numbagrad.distributions
    w = numbagrad.tensor([[1.0, 0.5], [0.2, -0.3], [0.0, 1.0]], dtype=numbagrad.float64)
    diag = numbagrad.tensor([0.5, 1.0, 2.0], dtype=numbagrad.float64)
    lr = D.LowRankMultivariateNormal(numbagrad.zeros(3, dtype=numbagrad.float64), w, diag)
    full = D.MultivariateNormal(numbagrad.zeros(3, dtype=numbagrad.float64), lr.covariance_matrix)
    v = numbagrad.tensor([0.3, -1.0, 2.0], dtype=numbagrad.float64)
    _same(lr.log_prob(v), full.log_prob(v).detach(), rtol=1e-10)
    _same(lr.entropy(), full.entropy(), rtol=1e-10)
    _same(lr.scale_tril @ lr.scale_tril.mT, lr.covariance_matrix, rtol=1e-10)
    _same(
        lr.precision_matrix @ lr.covariance_matrix,
        numbagrad.eye(3, dtype=numbagrad.float64),
        atol=1e-10,
    )


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_torch(param):
    rng = np.random.default_rng(0)
    b = rng.normal(size=(2, 3, 3))
    cov = b @ b.transpose(0, 2, 1) + np.eye(3)
    mat = {
        "covariance_matrix": cov,
        "precision_matrix": np.linalg.inv(cov),
        "scale_tril": np.linalg.cholesky(cov),
    }[param]
    df = np.array([4.0, 6.5])
    (do, po), (dt, pt) = (
        (lib.distributions.Wishart(lib.tensor(df), **{param: m}), m)
        for lib, m in (
            (numbagrad, numbagrad.tensor(mat, requires_grad=True)),
            (torch, torch.tensor(mat, requires_grad=True)),
        )
    )
    x = dt.sample((4,)).detach()
    lo, lt = do.log_prob(numbagrad.tensor(x.numpy())), dt.log_prob(x)
    _close(lo, lt, rtol=1e-10)
    for attr in ("mean", "variance", "mode"):
        _close(getattr(do, attr), getattr(dt, attr), rtol=1e-10)
    _close(do.entropy(), dt.entropy(), rtol=1e-10)
    (lo.sum() + do.entropy().sum()).backward()
    (lt.sum() + dt.entropy().sum()).backward()
    _close(po.grad, pt.grad, rtol=1e-8, atol=1e-10)
    assert repr(do) == repr(dt).replace("torch.", "numbagrad.")
    numbagrad.manual_seed(0)
    s = do.rsample((5,))
    assert tuple(s.shape) == (5, 2, 3, 3)
    assert bool(numbagrad.distributions.constraints.positive_definite.check(s).all())
    q = (
        numbagrad.distributions.Wishart(
            numbagrad.tensor(df + 1), covariance_matrix=numbagrad.tensor(cov)
        ),
        torch.distributions.Wishart(torch.tensor(df + 1), covariance_matrix=torch.tensor(cov)),
    )
    _close(
        numbagrad.distributions.kl_divergence(do, q[0]),
        torch.distributions.kl_divergence(dt, q[1]),
        rtol=1e-8,
    )


def test_wishart_sample_mean():
    numbagrad.manual_seed(1)
    cov = numbagrad.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=numbagrad.float64)
    x = _np(
        numbagrad.distributions.Wishart(numbagrad.tensor(5.0, dtype=numbagrad.float64), cov).sample(
            (20000,)
        )
    )
    np.testing.assert_allclose(x.mean(0), 5 * _np(cov), rtol=0.03, atol=0.03)


def test_lkj_cholesky_matches_torch():
    c = np.array([0.5, 2.0])
    do = numbagrad.distributions.LKJCholesky(3, numbagrad.tensor(c, requires_grad=True))
    dt = torch.distributions.LKJCholesky(3, torch.tensor(c, requires_grad=True))
    x = dt.sample((4,)).double()
    _close(do.log_prob(numbagrad.tensor(x.numpy())), dt.log_prob(x), rtol=1e-10)
    assert repr(do) == repr(dt).replace("torch.", "numbagrad.")
    numbagrad.manual_seed(2)
    s = do.sample((3000,))
    assert bool(numbagrad.distributions.constraints.corr_cholesky.check(s).all())
    # LKJ(eta): the off-diagonal correlations have mean 0 and variance 1 / (2 eta + d - 1)
    corr = _np(s @ s.mT)[..., 1, 0]
    np.testing.assert_allclose(corr.var(0), 1 / (2 * c + 2), rtol=0.1)
    with pytest.raises(ValueError, match="dim to be an integer greater"):
        numbagrad.distributions.LKJCholesky(1)


def test_validation_under_vmap_checks_every_example_as_torch():
    # PyTorch validates through _is_all_true, whose batching rule reads the whole batch:
    # a validated log_prob works under vmap(grad), and an invalid example still raises
    def run(lib):
        normal = lib.distributions.Normal

        def f(w):
            return normal(0.0, 2.0).log_prob(w).sum()

        x = lib.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
        g = lib.func.vmap(lib.func.grad(f))(x)
        v = lib.func.vmap(f)(x)
        with pytest.raises(ValueError, match="to be within the support"):
            lib.func.vmap(lambda w: normal(0.0, 2.0).log_prob(w / 0.0 * 0.0).sum())(x)
        # an invalid per-example parameter: the error message's repr reads the 0-d value
        # with .item(), which vmap refuses, in PyTorch too
        with pytest.raises(RuntimeError, match=r"calling \.item\(\)"):
            lib.func.vmap(lambda s: normal(0.0, s).log_prob(lib.tensor(1.0)))(x[0])
        return g.detach().numpy(), v.detach().numpy()

    for a, b in zip(run(numbagrad), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_standard_gamma_inverse_at_huge_concentrations():
    # the Newton inversion of P lost its precision from a ~ 1e16 (NaN at 1e30) and the
    # central-difference gradient from ~1e6: Wilson-Hilferty there (its error ~ 1/a)
    a = numbagrad.tensor([1e6, 1e16, 1e30, math.inf], dtype=numbagrad.float64, requires_grad=True)
    u = numbagrad.tensor([0.9, 0.5, 0.1, 0.5], dtype=numbagrad.float64)
    x = numbagrad.ops.standard_gamma_icdf(a, u)
    v = x.detach().numpy()
    assert np.isfinite(v[:3]).all() and v[3] == math.inf
    np.testing.assert_allclose(v[:3], [1e6 + 1281.77, 1e16, 1e30], rtol=1e-6)
    x[:3].sum().backward()
    np.testing.assert_allclose(a.grad.numpy()[:3], [1.00064, 1.0, 1.0], rtol=1e-5)
