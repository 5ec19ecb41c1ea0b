"""``torch.distributions.kl``: :func:`kl_divergence` and :func:`register_kl`, with the
closed forms of the pairs numbagrad has."""

from __future__ import annotations

import math

from numbagrad import ops as F
from numbagrad.distributions.bernoulli import Bernoulli
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.independent import Independent
from numbagrad.distributions.multivariate_normal import (
    MultivariateNormal,
    _batch_shape_of,
    _mahalanobis,
)
from numbagrad.distributions.normal import Normal
from numbagrad.linalg import solve_triangular as _solve_triangular

__all__ = ["kl_divergence", "register_kl"]


_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from
    ``type_q``.

    Examples
    --------
    >>> from numbagrad.distributions import Distribution, kl_divergence, register_kl
    >>> class Point(Distribution):
    ...     pass
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return 0.0
    >>> kl_divergence(Point(), Point())
    0.0
    """

    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn

    return decorator


def kl_divergence(p, q):
    """``KL(p || q)``, batched, for the registered pairs: Normal/Normal,
    MultivariateNormal/MultivariateNormal, Bernoulli/Bernoulli, Categorical/Categorical,
    Independent/Independent (and any added with :func:`register_kl`).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Categorical, kl_divergence
    >>> p = Categorical(probs=numbagrad.tensor([0.5, 0.5]))
    >>> round(kl_divergence(p, Categorical(probs=numbagrad.tensor([0.9, 0.1]))).item(), 4)
    0.5108
    """
    for (tp, tq), fn in _KL.items():
        if type(p) is tp and type(q) is tq:
            return fn(p, q)
    raise NotImplementedError(
        f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}"
    )


def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - F.log(var_ratio))


def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = F.where(q.probs == 0, math.inf, t1)
    t1 = F.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = F.where(q.probs == 1, math.inf, t2)
    t2 = F.where(p.probs == 1, 0.0, t2)
    return t1 + t2


def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = F.where(q.probs == 0, math.inf, t)
    t = F.where(p.probs == 0, 0.0, t)
    return F.sum(t, -1)


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


def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            "KL between Independents with different reinterpreted_batch_ndims is not implemented"
        )
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


_KL[Normal, Normal] = _kl_normal_normal
_KL[Bernoulli, Bernoulli] = _kl_bernoulli_bernoulli
_KL[Categorical, Categorical] = _kl_categorical_categorical
_KL[Independent, Independent] = _kl_independent_independent
_KL[MultivariateNormal, MultivariateNormal] = _kl_mvn_mvn
