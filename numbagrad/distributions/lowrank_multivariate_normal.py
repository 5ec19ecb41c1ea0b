"""``torch.distributions.lowrank_multivariate_normal``: :class:`LowRankMultivariateNormal`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import linalg as _linalg
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.multivariate_normal import _mahalanobis
from numbagrad.distributions.utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _mv(mat, vec):
    return F.squeeze(mat @ F.unsqueeze(vec, -1), -1)


def _capacitance_tril(w, d):
    """The Cholesky factor of ``I + W^T D^-1 W`` (``m x m``)."""
    m = w.shape[-1]
    k = (F.transpose(w, -2, -1) / F.unsqueeze(d, -2)) @ w
    return _linalg.cholesky(k + _creation.eye(m, dtype=w.dtype))


def _lowrank_logdet(w, d, capacitance_tril):
    """``log det (W W^T + D)`` by the matrix determinant lemma."""
    return 2 * F.sum(F.log(F.diagonal(capacitance_tril, 0, -2, -1)), -1) + F.sum(F.log(d), -1)


def _lowrank_mahalanobis(w, d, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    wt_dinv = F.transpose(w, -2, -1) / F.unsqueeze(d, -2)
    wt_dinv_x = _mv(wt_dinv, x)
    return F.sum(x**2 / d, -1) - _mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with the low-rank plus diagonal covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import LowRankMultivariateNormal
    >>> d = LowRankMultivariateNormal(numbagrad.zeros(2), numbagrad.tensor([[1.0], [0.0]]),
    ...                               numbagrad.ones(2))
    >>> round(d.log_prob(numbagrad.zeros(2)).item(), 4)
    -2.1845
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.ndim < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, "
                "with optional leading batch dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = F.broadcast_tensors(
                F.unsqueeze(loc, -1), cov_factor, F.unsqueeze(cov_diag, -1)
            )
        except (RuntimeError, ValueError) as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = tuple(Size(batch_shape)) + tuple(self.event_shape)
        new.loc = F.expand(self.loc, loc_shape)
        new.cov_diag = F.expand(self.cov_diag, loc_shape)
        new.cov_factor = F.expand(self.cov_factor, loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    def _full(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        v = F.sum(self._unbroadcasted_cov_factor**2, -1) + self._unbroadcasted_cov_diag
        return F.expand(v, tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        d_sqrt = F.unsqueeze(F.sqrt(self._unbroadcasted_cov_diag), -1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / d_sqrt
        k = dinvsqrt_w @ F.transpose(dinvsqrt_w, -2, -1) + _creation.eye(n, dtype=self.loc.dtype)
        return F.expand(d_sqrt * _linalg.cholesky(k), self._full())

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        cov = w @ F.transpose(w, -2, -1) + F.diag_embed(self._unbroadcasted_cov_diag)
        return F.expand(cov, self._full())

    @lazy_property
    def precision_matrix(self):
        wt_dinv = F.transpose(self._unbroadcasted_cov_factor, -2, -1) / F.unsqueeze(
            self._unbroadcasted_cov_diag, -2
        )
        a = _linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        prec = F.diag_embed(F.reciprocal(self._unbroadcasted_cov_diag)) - F.transpose(a, -2, -1) @ a
        return F.expand(prec, self._full())

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = _standard_normal(w_shape, self.loc)
        eps_d = _standard_normal(shape, self.loc)
        return (
            self.loc
            + _mv(self._unbroadcasted_cov_factor, eps_w)
            + F.sqrt(self._unbroadcasted_cov_diag) * eps_d
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        log_det = _lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        log_det = _lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return F.expand(h, tuple(self._batch_shape))
