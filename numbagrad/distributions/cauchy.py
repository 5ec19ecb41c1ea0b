"""``torch.distributions.cauchy``: :class:`Cauchy`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import _uniform, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of location ``loc`` and scale ``scale``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Cauchy
    >>> round(Cauchy(0.0, 1.0).log_prob(numbagrad.tensor(0.0)).item(), 4)
    -1.1447
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = F.expand(self.loc, tuple(batch_shape))
        new.scale = F.expand(self.scale, tuple(batch_shape))
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _creation.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = F.tan(math.pi * (_uniform(shape, self.loc) - 0.5))
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - F.log(self.scale) - F.log1p(((value - self.loc) / self.scale) ** 2)
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return F.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return F.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + F.log(self.scale)
