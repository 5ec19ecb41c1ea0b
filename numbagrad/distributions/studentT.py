# ruff: noqa: N999  (the module is named as PyTorch's torch.distributions.studentT)
"""``torch.distributions.studentT``: :class:`StudentT`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.chi2 import Chi2
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale`` (``rsample`` through a reparameterised :class:`Chi2`).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import StudentT
    >>> round(StudentT(3.0).log_prob(numbagrad.tensor(0.0)).item(), 4)
    -1.0009
    """

    arg_constraints: ClassVar[dict] = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = F.expand(self.df, tuple(batch_shape))
        new.loc = F.expand(self.loc, tuple(batch_shape))
        new.scale = F.expand(self.scale, tuple(batch_shape))
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return F.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale**2 * df / F.where(df > 2, df - 2, 1.0)
        m = F.where(df > 2, finite, math.inf)
        return F.where(df <= 1, math.nan, m)

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df)
        z = self._chi2.rsample(sample_shape)
        y = x * F.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            F.log(self.scale)
            + 0.5 * F.log(self.df)
            + 0.5 * math.log(math.pi)
            + F.lgamma(0.5 * self.df)
            - F.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * F.log1p(y**2.0 / self.df) - z

    def entropy(self):
        lbeta = F.lgamma(0.5 * self.df) + math.lgamma(0.5) - F.lgamma(0.5 * (self.df + 1))
        return (
            F.log(self.scale)
            + 0.5 * (self.df + 1) * (F.digamma(0.5 * (self.df + 1)) - F.digamma(0.5 * self.df))
            + 0.5 * F.log(self.df)
            + lbeta
        )
