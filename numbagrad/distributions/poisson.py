"""``torch.distributions.poisson``: :class:`Poisson`."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution of rate ``rate`` (samples by ``numbagrad.poisson``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Poisson
    >>> round(Poisson(2.0).log_prob(numbagrad.tensor(3.0)).item(), 4)
    -1.7123
    """

    arg_constraints: ClassVar[dict] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = F.expand(self.rate, tuple(batch_shape))
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return F.floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _creation.poisson(F.expand(self.rate, shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return F.xlogy(value, rate) - rate - F.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (F.log(self.rate),)

    def _log_normalizer(self, x):
        return F.exp(x)
