"""``torch.distributions.weibull``: :class:`Weibull`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.exponential import Exponential
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import AffineTransform, PowerTransform
from numbagrad.distributions.utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution (``scale``, ``concentration``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Weibull
    >>> round(Weibull(1.0, 1.0).log_prob(numbagrad.tensor(1.0)).item(), 4)
    -1.0
    """

    arg_constraints: ClassVar[dict] = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = F.reciprocal(self.concentration)
        base_dist = Exponential(_creation.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        shape = tuple(Size(batch_shape))
        new.scale = F.expand(self.scale, shape)
        new.concentration = F.expand(self.concentration, shape)
        new.concentration_reciprocal = F.reciprocal(new.concentration)
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * F.exp(F.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** F.reciprocal(
            self.concentration
        )

    @property
    def variance(self):
        cr = self.concentration_reciprocal
        return self.scale**2 * (F.exp(F.lgamma(1 + 2 * cr)) - F.exp(2 * F.lgamma(1 + cr)))

    def entropy(self):
        cr = self.concentration_reciprocal
        return euler_constant * (1 - cr) + F.log(self.scale * cr) + 1
