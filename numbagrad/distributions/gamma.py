"""``torch.distributions.gamma``: :class:`Gamma`."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad import special as _special
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import broadcast_all

__all__ = ["Gamma"]


def _clamp_tiny(value):
    """``value`` clamped below at the smallest normal float, keeping its gradient (as
    PyTorch's in-place clamp of the detached sample)."""
    tiny = D.finfo(value.dtype).tiny
    return value + (F.clamp(value.detach(), min=tiny) - value.detach())


class Gamma(ExponentialFamily):
    """The gamma distribution of shape ``concentration`` and inverse scale ``rate``;
    ``rsample`` is reparameterised (implicit reparameterisation, NOTE [Reparameterised
    gamma samples] in ``kernels/cpu/gamma.py``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Gamma
    >>> round(Gamma(2.0, 3.0).log_prob(numbagrad.tensor(1.0)).item(), 4)
    -0.8028
    """

    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.concentration.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = F.expand(self.concentration, tuple(batch_shape))
        new.rate = F.expand(self.rate, tuple(batch_shape))
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return F.clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self):
        return self.concentration / self.rate**2

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        value = F.standard_gamma(F.expand(self.concentration, shape)) / F.expand(self.rate, shape)
        return _clamp_tiny(value)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            _special.xlogy(self.concentration, self.rate)
            + _special.xlogy(self.concentration - 1, value)
            - self.rate * value
            - F.lgamma(self.concentration)
        )

    def entropy(self):
        c = self.concentration
        return c - F.log(self.rate) + F.lgamma(c) + (1.0 - c) * F.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return F.lgamma(x + 1) + (x + 1) * F.log(-F.reciprocal(y))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _special.gammainc(self.concentration, self.rate * value)
