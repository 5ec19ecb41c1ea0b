"""``torch.distributions.relaxed_bernoulli``: :class:`RelaxedBernoulli` (and the
``LogitRelaxedBernoulli`` it transforms)."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import SigmoidTransform
from numbagrad.distributions.utils import (
    _uniform,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a :class:`RelaxedBernoulli` sample (the binary Concrete distribution
    on the reals), by ``temperature`` and ``probs`` or ``logits``."""

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, tuple(batch_shape))
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, tuple(batch_shape))
            new._param = new.logits
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(F.expand(self.probs, tuple(shape)))
        uniforms = clamp_probs(_uniform(shape, probs))
        return (
            F.log(uniforms) - F.log1p(-uniforms) + F.log(probs) - F.log1p(-probs)
        ) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return F.log(self.temperature) + diff - 2 * F.log1p(F.exp(diff))


class RelaxedBernoulli(TransformedDistribution):
    """The relaxed (Concrete) Bernoulli distribution on ``(0, 1)`` of ``temperature``:
    reparameterised, tending to a Bernoulli as the temperature goes to 0.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import RelaxedBernoulli
    >>> d = RelaxedBernoulli(numbagrad.tensor(0.5), probs=numbagrad.tensor([0.3]))
    >>> round(d.log_prob(numbagrad.tensor([0.5])).item(), 4)
    -0.8675
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
