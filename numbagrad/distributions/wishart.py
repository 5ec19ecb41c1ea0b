"""``torch.distributions.wishart``: :class:`Wishart`."""

from __future__ import annotations

import math
import numbers
import warnings

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import linalg as _linalg
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.chi2 import Chi2
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import _standard_normal, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool(F.all(x > (p - 1) / 2)):
        raise ValueError("Wrong domain for multivariate digamma function.")
    return F.sum(F.digamma(F.unsqueeze(x, -1) - _creation.arange(p, dtype=x.dtype) / 2), -1)


def _precision_to_scale_tril(p):
    flipped = _linalg.cholesky(F.flip(p, (-2, -1)))
    tril_inv = F.transpose(F.flip(flipped, (-2, -1)), -2, -1)
    eye = _creation.eye(tril_inv.shape[-1], dtype=tril_inv.dtype)
    return _linalg.solve_triangular(tril_inv, eye, upper=False)


def _broadcast_shapes(a, b):
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"shapes {a} and {b} cannot be broadcast")
        out.append(max(x, y))
    return Size(out)


class Wishart(ExponentialFamily):
    """The Wishart distribution over positive definite matrices, of ``df`` degrees of
    freedom and one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``;
    ``rsample`` by the Bartlett decomposition (reparameterised through the chi-squared
    draws), singular draws redrawn up to ``max_try_correction`` times.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Wishart
    >>> d = Wishart(numbagrad.tensor(4.0), covariance_matrix=numbagrad.eye(2))
    >>> d.mean
    tensor([[4., 0.],
            [0., 4.]])
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        param = given[0]
        if param.ndim < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = _creation.tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = _broadcast_shapes(param.shape[:-2], df.shape)
            self.df = F.expand(df, tuple(batch_shape))
        event_shape = param.shape[-2:]
        if bool(F.any(self.df <= event_shape[-1] - 1)):
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}."
            )
        full = (*tuple(batch_shape), *tuple(event_shape))
        if scale_tril is not None:
            self.scale_tril = F.expand(param, full)
        elif covariance_matrix is not None:
            self.covariance_matrix = F.expand(param, full)
        else:
            self.precision_matrix = F.expand(param, full)
        if bool(F.any(self.df < event_shape[-1])):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        p = self._event_shape[-1]
        offsets = _creation.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=F.unsqueeze(self.df, -1) - F.expand(offsets, (*tuple(batch_shape), p)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = (*tuple(batch_shape), *tuple(self.event_shape))
        new._unbroadcasted_scale_tril = F.expand(self._unbroadcasted_scale_tril, cov_shape)
        new.df = F.expand(self.df, tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, F.expand(self.__dict__[name], cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self):
        return (*tuple(self._batch_shape), *tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return F.expand(self._unbroadcasted_scale_tril, self._full())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return F.expand(tril @ F.transpose(tril, -2, -1), self._full())

    @lazy_property
    def precision_matrix(self):
        eye = _creation.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return F.expand(F.cholesky_solve(eye, self._unbroadcasted_scale_tril), self._full())

    def _df_matrix(self):
        return F.reshape(self.df, (*tuple(self._batch_shape), 1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = F.where(factor <= 0, math.nan, factor)
        return F.reshape(factor, (*tuple(self._batch_shape), 1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = F.diagonal(v, 0, -2, -1)
        return self._df_matrix() * (v**2 + F.unsqueeze(diag_v, -1) * F.unsqueeze(diag_v, -2))

    def _bartlett_sampling(self, sample_shape=_NO_SHAPE):
        p = self._event_shape[-1]
        chi = F.sqrt(self._dist_chi2.rsample(sample_shape))
        chi = F.clamp(chi, min=D.finfo(chi.dtype).eps)
        shape = (*tuple(sample_shape), *tuple(self._batch_shape), p, p)
        below = F.tril(_standard_normal(shape, chi), -1)
        noise = below + F.diag_embed(chi)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ F.transpose(chol, -2, -1)

    def _singular(self, sample):
        bad = ~self.support.check(sample)
        if self._batch_shape:
            bad = F.amax(bad.to(D.int64), tuple(self._batch_dims)).to(D.bool)
        return bad

    def rsample(self, sample_shape=_NO_SHAPE, max_try_correction=None):
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(F.any(is_singular)):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                mask = F.reshape(
                    is_singular, tuple(is_singular.shape) + (1,) * (sample.ndim - is_singular.ndim)
                )
                sample = F.where(mask, self._bartlett_sampling(sample_shape), sample)
                is_singular = self._singular(sample)
                if not bool(F.any(is_singular)):
                    break
        return sample

    def _log_det_scale(self):
        return F.sum(F.log(F.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)), -1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = F.sum(
            F.diagonal(F.cholesky_solve(value, self._unbroadcasted_scale_tril), 0, -2, -1), -1
        )
        return (
            -nu * (p * _LOG_2 / 2 + self._log_det_scale())
            - F.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * _linalg.slogdet(value).logabsdet
            - trace / 2
        )

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return (
            (p + 1) * (p * _LOG_2 / 2 + self._log_det_scale())
            + F.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-_linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + F.mvlgamma(
            y + (p + 1) / 2, p
        )
