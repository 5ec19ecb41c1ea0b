"""``torch.distributions.logistic_normal``: :class:`LogisticNormal`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad.distributions import constraints
from numbagrad.distributions.normal import Normal
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A normal vector of ``K - 1`` entries pushed onto the ``K``-simplex by stick breaking.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import LogisticNormal
    >>> d = LogisticNormal(numbagrad.zeros(2), numbagrad.ones(2))
    >>> d.event_shape
    numbagrad.Size([3])
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
