"""``torch.distributions.pareto``: :class:`Pareto`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.exponential import Exponential
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import AffineTransform, ExpTransform
from numbagrad.distributions.utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto type-I distribution of ``scale`` and tail index ``alpha``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Pareto
    >>> round(Pareto(1.0, 2.0).log_prob(numbagrad.tensor(2.0)).item(), 4)
    -1.3863
    """

    arg_constraints: ClassVar[dict] = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = F.expand(self.scale, tuple(Size(batch_shape)))
        new.alpha = F.expand(self.alpha, tuple(Size(batch_shape)))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = F.clamp(self.alpha, min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = F.clamp(self.alpha, min=2)
        return self.scale**2 * a / ((a - 1) ** 2 * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return F.log(self.scale / self.alpha) + (1 + F.reciprocal(self.alpha))
