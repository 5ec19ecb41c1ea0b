"""``torch.distributions.kumaraswamy``: :class:`Kumaraswamy`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import AffineTransform, PowerTransform
from numbagrad.distributions.uniform import Uniform
from numbagrad.distributions.utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    arg1 = 1 + n / a
    log_value = F.lgamma(arg1) + F.lgamma(b) - F.lgamma(arg1 + b)
    return b * F.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``(0, 1)`` (``concentration1`` a,
    ``concentration0`` b), by transforms of a uniform.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Kumaraswamy
    >>> round(Kumaraswamy(1.0, 1.0).log_prob(numbagrad.tensor(0.3)).item(), 4)
    0.0
    """

    arg_constraints: ClassVar[dict] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            _creation.full_like(self.concentration0, 0),
            _creation.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=F.reciprocal(self.concentration0)),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=F.reciprocal(self.concentration1)),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = F.expand(self.concentration1, tuple(Size(batch_shape)))
        new.concentration0 = F.expand(self.concentration0, tuple(Size(batch_shape)))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = F.reciprocal(b) * F.log1p(-b) - F.log1p(-b * a)
        log_mode = F.where((b < 1) | (a < 1), math.nan, log_mode)
        return F.exp(log_mode)

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean**2

    def entropy(self):
        t1 = 1 - F.reciprocal(self.concentration1)
        t0 = 1 - F.reciprocal(self.concentration0)
        h0 = F.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - F.log(self.concentration1) - F.log(self.concentration0)
