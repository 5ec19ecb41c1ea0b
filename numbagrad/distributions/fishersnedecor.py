"""``torch.distributions.fishersnedecor``: :class:`FisherSnedecor`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.gamma import Gamma
from numbagrad.distributions.utils import broadcast_all

__all__ = ["FisherSnedecor"]


def _clamp_tiny(x):
    tiny = D.finfo(x.dtype).tiny
    return x + (F.clamp(x.detach(), min=tiny) - x.detach())


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom (``rsample`` through
    two reparameterised :class:`Gamma` draws).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import FisherSnedecor
    >>> round(FisherSnedecor(4.0, 6.0).mean.item(), 4)
    1.5
    """

    arg_constraints: ClassVar[dict] = {
        "df1": constraints.positive,
        "df2": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.df1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = F.expand(self.df1, tuple(batch_shape))
        new.df2 = F.expand(self.df2, tuple(batch_shape))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = F.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return F.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = F.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2**2 * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2) ** 2 * (df2 - 4))

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = F.reshape(self._gamma1.rsample(sample_shape), shape)
        x2 = _clamp_tiny(F.reshape(self._gamma2.rsample(sample_shape), shape))
        return _clamp_tiny(x1 / x2)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = F.lgamma(ct1 + ct2) - F.lgamma(ct1) - F.lgamma(ct2)
        t2 = ct1 * F.log(ct3) + (ct1 - 1) * F.log(value)
        t3 = (ct1 + ct2) * F.log1p(ct3 * value)
        return t1 + t2 - t3
