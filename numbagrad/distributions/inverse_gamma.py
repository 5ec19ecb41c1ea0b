"""``torch.distributions.inverse_gamma``: :class:`InverseGamma`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad.distributions import constraints
from numbagrad.distributions.gamma import Gamma
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)`` (``rsample`` is reparameterised).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import InverseGamma
    >>> round(InverseGamma(3.0, 2.0).mean.item(), 4)
    1.0
    """

    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -_creation.ones((), dtype=base_dist.rate.dtype)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return F.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        result = self.rate**2 / ((c - 1) ** 2 * (c - 2))
        return F.where(c > 2, result, math.inf)

    def entropy(self):
        c = self.concentration
        return c + F.log(self.rate) + F.lgamma(c) - (1 + c) * F.digamma(c)
