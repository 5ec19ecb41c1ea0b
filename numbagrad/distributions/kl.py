"""``torch.distributions.kl``: :func:`kl_divergence` and :func:`register_kl`, with the
closed forms PyTorch has between the families numbagrad has. Lookup picks the most specific
registered pair by subclass (as PyTorch), so a pair registered for base classes (such as
``ExponentialFamily``, by the Bregman divergence of the log normalizer) serves subclasses."""

from __future__ import annotations

import functools
import math
import warnings

from numbagrad import _creation
from numbagrad import autograd as _autograd
from numbagrad import ops as F
from numbagrad.distributions.bernoulli import Bernoulli
from numbagrad.distributions.beta import Beta
from numbagrad.distributions.binomial import Binomial
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.cauchy import Cauchy
from numbagrad.distributions.continuous_bernoulli import ContinuousBernoulli
from numbagrad.distributions.dirichlet import Dirichlet
from numbagrad.distributions.distribution import Distribution
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.exponential import Exponential
from numbagrad.distributions.gamma import Gamma
from numbagrad.distributions.geometric import Geometric
from numbagrad.distributions.gumbel import Gumbel
from numbagrad.distributions.half_normal import HalfNormal
from numbagrad.distributions.independent import Independent
from numbagrad.distributions.laplace import Laplace
from numbagrad.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _lowrank_logdet,
    _lowrank_mahalanobis,
)
from numbagrad.distributions.multivariate_normal import (
    MultivariateNormal,
    _batch_shape_of,
    _mahalanobis,
)
from numbagrad.distributions.normal import Normal
from numbagrad.distributions.one_hot_categorical import OneHotCategorical
from numbagrad.distributions.pareto import Pareto
from numbagrad.distributions.poisson import Poisson
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.uniform import Uniform
from numbagrad.distributions.utils import _sum_rightmost, euler_constant
from numbagrad.linalg import solve_triangular as _solve_triangular

__all__ = ["kl_divergence", "register_kl"]


_KL_REGISTRY: dict = {}  # (type_p, type_q) -> fn, as registered
_KL_MEMOIZE: dict = {}  # (type_p, type_q) -> the dispatched fn


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from
    ``type_q`` (subclasses use the most specific registered pair).

    Examples
    --------
    >>> from numbagrad.distributions import Distribution, kl_divergence, register_kl
    >>> class Point(Distribution):
    ...     arg_constraints = {}
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return 0.0
    >>> kl_divergence(Point(), Point())
    0.0
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # reset since lookup order may have changed
        return fun

    return decorator


@functools.total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types, strict=True):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fun


def kl_divergence(p, q):
    """``KL(p || q)``, batched, for the registered pairs (those of PyTorch among the
    families numbagrad has, and any added with :func:`register_kl`).

    Raises
    ------
    NotImplementedError
        For a pair with no registered divergence.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Categorical, kl_divergence
    >>> p = Categorical(probs=numbagrad.tensor([0.5, 0.5]))
    >>> round(kl_divergence(p, Categorical(probs=numbagrad.tensor([0.9, 0.1]))).item(), 4)
    0.5108
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and "
            f"q type {q.__class__.__name__}"
        )
    return fun(p, q)


# -- helpers -----------------------------------------------------------------------------------
def _infinite_like(t):
    return _creation.full_like(t, math.inf)


def _x_log_x(t):
    return F.xlogy(t, t)


def _inf_where(mask, result):
    return F.where(mask, math.inf, result)


# -- same family -------------------------------------------------------------------------------
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = F.where(q.probs == 0, math.inf, t1)
    t1 = F.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = F.where(q.probs == 1, math.inf, t2)
    t2 = F.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = F.lgamma(q.concentration1) + F.lgamma(q.concentration0) + F.lgamma(sum_p)
    t2 = F.lgamma(p.concentration1) + F.lgamma(p.concentration0) + F.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * F.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * F.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * F.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool(F.any(p.total_count < q.total_count)):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + F.log1p(-p.probs) - F.log1p(-q.probs))
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = F.where(q.probs == 0, math.inf, t)
    t = F.where(p.probs == 0, 0.0, t)
    return F.sum(t, -1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = F.sum(p.concentration, -1)
    sum_q = F.sum(q.concentration, -1)
    t1 = F.lgamma(sum_p) - F.lgamma(sum_q)
    t2 = F.sum(F.lgamma(p.concentration) - F.lgamma(q.concentration), -1)
    t3 = p.concentration - q.concentration
    t4 = F.digamma(p.concentration) - F.unsqueeze(F.digamma(sum_p), -1)
    return t1 - t2 + F.sum(t3 * t4, -1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -F.log(rate_ratio) + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot "
            "be computed using Bregman divergences"
        )
    p_nparams = [npar.detach().requires_grad_() for npar in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = _autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients, strict=True):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * F.log(p.rate / q.rate)
    t2 = F.lgamma(q.concentration) - F.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * F.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -F.log(ct1) - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = F.exp(ct2 + F.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - F.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = F.abs(p.loc - q.loc)
    t1 = -F.log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * F.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different "
            "event shapes cannot be computed"
        )
    half_term1 = q._half_log_det() - p._half_log_det()
    batch = _batch_shape_of(
        q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_scale_tril.shape[:-2]
    )
    n = p.event_shape[0]
    q_l = F.expand(q._unbroadcasted_scale_tril, (*batch, n, n))
    p_l = F.expand(p._unbroadcasted_scale_tril, (*batch, n, n))
    term2 = F.sum(_solve_triangular(q_l, p_l, upper=False) ** 2, (-2, -1))
    term3 = _mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - F.log(var_ratio))


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * F.log(scale_ratio)
    t2 = -F.log(alpha_ratio)
    result = t1 + t2 + alpha_ratio - 1
    return _inf_where(p.scale < q.scale, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (F.log(p.rate) - F.log(q.rate)) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = F.log((q.high - q.low) / (p.high - p.low))
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = F.log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2)
    t2 = F.log(4 * p.scale * q.scale)
    return t1 - t2


# -- different families ------------------------------------------------------------------------
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * F.log(q.rate) - q.rate)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return (
        -p.entropy()
        - F.log(q.rate)
        + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))
    )


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = F.lgamma(q.concentration) - q.concentration * F.log(q.rate)
    t3 = (q.concentration - 1) * (
        F.digamma(p.concentration1) - F.digamma(p.concentration1 + p.concentration0)
    )
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    e_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale**2
    t1 = -p.entropy()
    t2 = 0.5 * F.log(var_normal * 2 * math.pi)
    t3 = (e_beta * (1 - e_beta) / (p.concentration1 + p.concentration0 + 1) + e_beta**2) * 0.5
    t4 = q.loc * e_beta
    t5 = q.loc**2 * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + F.log(q.high - q.low)
    return _inf_where((q.low > 0.0) | (q.high < 1.0), result)


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * F.log(ratio)
    return (
        t1
        + ratio
        + F.lgamma(q.concentration)
        + q.concentration * euler_constant
        - (1 + euler_constant)
    )


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = F.log(scale_rate_prod) - 1
    t2 = F.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    t3 = F.reciprocal(scale_rate_prod)
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale**2
    rate_sqr = p.rate**2
    t1 = 0.5 * F.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = F.reciprocal(rate_sqr)
    t3 = q.loc / p.rate
    t4 = q.loc**2 * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - F.log(q.rate) + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = (
        (p.concentration - 1) * F.digamma(p.concentration)
        - F.lgamma(p.concentration)
        - p.concentration
    )
    t2 = F.log(beta_scale_prod) + p.concentration / beta_scale_prod
    t3 = (
        F.exp(loc_scale_ratio) * (1 + F.reciprocal(beta_scale_prod)) ** (-p.concentration)
        - loc_scale_ratio
    )
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale**2
    beta_sqr = p.rate**2
    t1 = (
        0.5 * F.log(beta_sqr * var_normal * 2 * math.pi)
        - p.concentration
        - F.lgamma(p.concentration)
    )
    t2 = 0.5 * (p.concentration**2 + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc**2
    return t1 + (p.concentration - 1) * F.digamma(p.concentration) + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = F.log(param_ratio / math.sqrt(2 * math.pi))
    t2 = (math.pi * param_ratio * 0.5) ** 2 / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale) ** 2 * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
def _kl_laplace_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale**2
    scale_sqr_var_ratio = p.scale**2 / var_normal
    t1 = 0.5 * F.log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * p.loc**2
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc**2
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale) ** 2
    loc_scale_ratio = q.loc / q.scale
    t1 = F.log(var_scale_sqr_ratio) * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = F.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = F.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * F.exp(-0.5 * loc_diff_scale_ratio**2)
    t3 = loc_diff * F.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = F.log(p.alpha / scale_rate_prod)
    t2 = F.reciprocal(p.alpha)
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 - t2 + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = F.log(p.scale) + F.reciprocal(p.alpha)
    t1 = F.log(p.alpha) - common_term
    t2 = F.lgamma(q.concentration) - q.concentration * F.log(q.rate)
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale**2
    common_term = p.scale / (p.alpha - 1)
    t1 = F.log(math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale)
    t2 = F.reciprocal(p.alpha)
    t3 = p.alpha * common_term**2 / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc) ** 2
    return _inf_where(p.alpha <= 2, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = F.log(common_term)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t3 = (
        (q.concentration0 - 1)
        * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term)
        / common_term
    )
    t4 = (
        F.lgamma(q.concentration1)
        + F.lgamma(q.concentration0)
        - F.lgamma(q.concentration1 + q.concentration0)
    )
    return _inf_where((p.high > 1.0) | (p.low < 0.0), t3 + t4 - t1 - t2)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - F.log((p.high - p.low) * q.rate)
    return _inf_where(p.low < 0.0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = F.log(common_term)
    t2 = F.lgamma(q.concentration) - q.concentration * F.log(q.rate)
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(p.low < 0.0, -t1 + t2 + t3 + t4)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = F.log(common_term) + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (F.exp(-high_loc_diff) - F.exp(-low_loc_diff))
    return t1 - t2


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = F.log(math.sqrt(math.pi * 2) * q.scale / common_term)
    t2 = common_term**2 / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2) ** 2
    return t1 + 0.5 * (t2 + t3) / q.scale**2


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = F.log(q.alpha * q.scale**q.alpha * support_uniform)
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return _inf_where(p.low < q.scale, t2 * (q.alpha + 1) - t1)


def _trace_xxt(bmat):
    """``trace(X X^T)`` over trailing batch dimensions."""
    return F.sum(bmat**2, (-2, -1))


def _check_events(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two {what} with different event shapes cannot be computed"
        )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_events(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    ) - _lowrank_logdet(p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril)
    term3 = _lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p.loc, q._capacitance_tril
    )
    # inv(qcov) @ pcov = [inv(qD) - A^T A] (pD + pW pW^T), A = inv(qC) qW^T inv(qD)
    qwt_qdinv = F.transpose(q._unbroadcasted_cov_factor, -2, -1) / F.unsqueeze(
        q._unbroadcasted_cov_diag, -2
    )
    a = _solve_triangular(q._capacitance_tril, qwt_qdinv, upper=False)
    term21 = F.sum(p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag, -1)
    term22 = _trace_xxt(
        p._unbroadcasted_cov_factor * F.unsqueeze(F.rsqrt(q._unbroadcasted_cov_diag), -1)
    )
    term23 = _trace_xxt(a * F.unsqueeze(F.sqrt(p._unbroadcasted_cov_diag), -2))
    term24 = _trace_xxt(a @ p._unbroadcasted_cov_factor)
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    term1 = (
        _lowrank_logdet(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril)
        - 2 * p._half_log_det()
    )
    term3 = _lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p.loc, q._capacitance_tril
    )
    qwt_qdinv = F.transpose(q._unbroadcasted_cov_factor, -2, -1) / F.unsqueeze(
        q._unbroadcasted_cov_diag, -2
    )
    a = _solve_triangular(q._capacitance_tril, qwt_qdinv, upper=False)
    term21 = _trace_xxt(
        p._unbroadcasted_scale_tril * F.unsqueeze(F.rsqrt(q._unbroadcasted_cov_diag), -1)
    )
    term22 = _trace_xxt(a @ p._unbroadcasted_scale_tril)
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    term1 = 2 * q._half_log_det() - _lowrank_logdet(
        p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril
    )
    term3 = _mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    batch = _batch_shape_of(
        q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2]
    )
    n = p.event_shape[0]
    q_tril = F.expand(q._unbroadcasted_scale_tril, (*batch, n, n))
    p_w = F.expand(p._unbroadcasted_cov_factor, (*batch, n, p.cov_factor.shape[-1]))
    p_d = F.expand(F.diag_embed(F.sqrt(p._unbroadcasted_cov_diag)), (*batch, n, n))
    term21 = _trace_xxt(_solve_triangular(q_tril, p_w, upper=False))
    term22 = _trace_xxt(_solve_triangular(q_tril, p_d, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + F.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - F.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p, q):
    return -p.entropy() - p.mean * q.logits - F.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, Pareto)
def _kl_cb_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p, q):
    return -p.entropy() - F.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale) ** 2) + F.log(q.scale)
    t3 = (p.variance + p.mean**2 - 2.0 * q.loc * p.mean) / (2.0 * q.scale**2)
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p, q):
    result = -p.entropy() + F.log(q.high - q.low)
    return _inf_where((q.low >= 0.0) | (q.high <= 1.0), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    result = -p.entropy() - p.mean * q.logits - F.log1p(-q.probs) - q._cont_bern_log_norm()
    return _inf_where((p.high >= 1.0) | (p.low <= 0.0), result)
