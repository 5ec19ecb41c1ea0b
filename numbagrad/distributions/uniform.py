"""``torch.distributions.uniform``: :class:`Uniform`."""

from __future__ import annotations

import numbers

from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import _uniform, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Uniform
    >>> d = Uniform(0.0, 4.0, validate_args=False)
    >>> d.log_prob(numbagrad.tensor([1.0, 5.0]))
    tensor([-1.3863,    -inf])
    """

    has_rsample = True

    @property
    def arg_constraints(self):
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        if isinstance(low, numbers.Number) and isinstance(high, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.low.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = Size(batch_shape)
        new.low = F.expand(self.low, tuple(batch_shape))
        new.high = F.expand(self.high, tuple(batch_shape))
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        rand = _uniform(shape, self.low)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = F.le(self.low, value).to(self.low.dtype)
        ub = F.gt(self.high, value).to(self.low.dtype)
        return F.log(lb * ub) - F.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return F.clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return F.log(self.high - self.low)
