"""``torch.distributions.gumbel``: :class:`Gumbel`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import AffineTransform, ExpTransform
from numbagrad.distributions.uniform import Uniform
from numbagrad.distributions.utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution of ``loc`` and ``scale``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Gumbel
    >>> round(Gumbel(0.0, 1.0).log_prob(numbagrad.tensor(0.0)).item(), 4)
    -1.0
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = D.finfo(self.loc.dtype)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(
                _creation.full_like(self.loc, finfo.tiny),
                _creation.full_like(self.loc, 1 - finfo.eps),
                validate_args=validate_args,
            )
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-_creation.ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=loc, scale=-self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = F.expand(self.loc, tuple(Size(batch_shape)))
        new.scale = F.expand(self.scale, tuple(Size(batch_shape)))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - F.exp(y)) - F.log(self.scale)

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev**2

    def entropy(self):
        return F.log(self.scale) + (1 + euler_constant)
