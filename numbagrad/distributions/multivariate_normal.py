"""``torch.distributions.multivariate_normal``: :class:`MultivariateNormal`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import linalg as _linalg
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import (
    _NO_SHAPE,
    Distribution,
)
from numbagrad.distributions.utils import _standard_normal, lazy_property
from numbagrad.linalg import solve_triangular as _solve_triangular

__all__ = ["MultivariateNormal"]


def _batch_shape_of(*shapes):
    out = []
    for dims in zip(*[(1,) * (max(map(len, shapes)) - len(sh)) + tuple(sh) for sh in shapes]):
        big = max(dims)
        if any(d not in (1, big) for d in dims):
            raise ValueError(f"Incompatible batch shapes: {[tuple(sh) for sh in shapes]}")
        out.append(big)
    return tuple(out)


def _mahalanobis(tril, x):
    """``x^T (L L^T)^{-1} x`` over broadcast batches: ``|| L^{-1} x ||^2``."""
    batch = _batch_shape_of(tril.shape[:-2], x.shape[:-1])
    n = x.shape[-1]
    tril = F.expand(tril, (*batch, n, n))
    x = F.expand(x, (*batch, n))
    z = _solve_triangular(tril, F.unsqueeze(x, -1), upper=False)
    return F.sum(F.squeeze(z, -1) ** 2, -1)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution, by exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor), batched by
    broadcasting with ``loc``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import MultivariateNormal
    >>> d = MultivariateNormal(numbagrad.zeros(2), numbagrad.tensor([[2.0, 0.5], [0.5, 1.0]]))
    >>> round(d.log_prob(numbagrad.tensor([1.0, -1.0])).item(), 4)
    -3.2605
    >>> round(d.entropy().item(), 4)
    3.1177
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (precision_matrix is not None) + (
            scale_tril is not None
        ) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if given.ndim < 2:
            name = (
                "scale_tril"
                if scale_tril is not None
                else "covariance_matrix"
                if covariance_matrix is not None
                else "precision_matrix"
            )
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional "
                "leading batch dimensions"
            )
        if scale_tril is not None:
            tril = scale_tril
            self.scale_tril = F.expand(
                scale_tril,
                _batch_shape_of(tril.shape[:-2], loc.shape[:-1]) + tuple(tril.shape[-2:]),
            )
        elif covariance_matrix is not None:
            self.covariance_matrix = F.expand(
                covariance_matrix,
                _batch_shape_of(covariance_matrix.shape[:-2], loc.shape[:-1])
                + tuple(covariance_matrix.shape[-2:]),
            )
            tril = _linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = F.expand(
                precision_matrix,
                _batch_shape_of(precision_matrix.shape[:-2], loc.shape[:-1])
                + tuple(precision_matrix.shape[-2:]),
            )  # as PyTorch's _precision_to_scale_tril
            flipped = _linalg.cholesky(F.flip(precision_matrix, (-2, -1)))
            tril_inv = F.transpose(F.flip(flipped, (-2, -1)), -2, -1)
            eye = _creation.eye(tril_inv.shape[-1], dtype=tril_inv.dtype)
            tril = _linalg.solve_triangular(tril_inv, eye, upper=False)
        self._unbroadcasted_scale_tril = tril
        batch = _batch_shape_of(tril.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        self.loc = F.expand(loc, (*batch, n))
        super().__init__(batch, (n,), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = F.expand(self.loc, loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, F.expand(self.__dict__[name], cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return F.expand(
            self._unbroadcasted_scale_tril, tuple(self.batch_shape) + tuple(self.event_shape) * 2
        )

    @lazy_property
    def precision_matrix(self):
        tril_inv = _linalg.solve_triangular(
            self._unbroadcasted_scale_tril,
            _creation.eye(self.event_shape[0], dtype=self.loc.dtype),
            upper=False,
        )
        return F.expand(
            F.transpose(tril_inv, -2, -1) @ tril_inv,
            tuple(self.batch_shape) + tuple(self.event_shape) * 2,
        )

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return F.expand(
            tril @ F.transpose(tril, -2, -1), tuple(self.batch_shape) + tuple(self.event_shape) * 2
        )

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return F.expand(
            F.sum(self._unbroadcasted_scale_tril**2, -1),
            tuple(self.batch_shape) + tuple(self.event_shape),
        )

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc)
        return self.loc + F.squeeze(self._unbroadcasted_scale_tril @ F.unsqueeze(eps, -1), -1)

    def _half_log_det(self):
        return F.sum(F.log(F.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)), -1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return F.expand(h, tuple(self.batch_shape))
