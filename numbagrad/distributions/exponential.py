"""``torch.distributions.exponential``: :class:`Exponential`."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import _uniform, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution of rate ``rate`` (density ``rate * exp(-rate x)``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Exponential
    >>> round(Exponential(2.0).log_prob(numbagrad.tensor(1.0)).item(), 4)
    -1.3069
    """

    arg_constraints: ClassVar[dict] = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = F.expand(self.rate, tuple(batch_shape))
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return F.reciprocal(self.rate)

    @property
    def mode(self):
        return _creation.zeros_like(self.rate)

    @property
    def stddev(self):
        return F.reciprocal(self.rate)

    @property
    def variance(self):
        return F.pow(self.rate, -2)

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        u = _uniform(shape, self.rate)
        return -F.log1p(-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return F.log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - F.exp(-self.rate * value)

    def icdf(self, value):
        return -F.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - F.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -F.log(-x)
