"""``torch.distributions.log_normal``: :class:`LogNormal`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import ops as F
from numbagrad.distributions import constraints
from numbagrad.distributions.normal import Normal
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import LogNormal
    >>> round(LogNormal(0.0, 1.0).log_prob(numbagrad.tensor(1.0)).item(), 4)
    -0.9189
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return F.exp(self.loc + self.scale**2 / 2)

    @property
    def mode(self):
        return F.exp(self.loc - self.scale**2)

    @property
    def variance(self):
        scale2 = self.scale**2
        return F.expm1(scale2) * F.exp(2 * self.loc + scale2)

    def entropy(self):
        return self.base_dist.entropy() + self.loc
