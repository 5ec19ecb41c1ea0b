"""``torch.distributions.negative_binomial``: :class:`NegativeBinomial`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.gamma import Gamma
from numbagrad.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from numbagrad.nn.functional import logsigmoid as _logsigmoid

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures in Bernoulli trials of
    success probability ``probs`` (or ``logits``); samples by a gamma-Poisson mixture.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import NegativeBinomial
    >>> round(NegativeBinomial(3.0, probs=numbagrad.tensor(0.5)).mean.item(), 4)
    3.0
    """

    arg_constraints: ClassVar[dict] = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = F.expand(self.total_count, tuple(batch_shape))
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, tuple(batch_shape))
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, tuple(batch_shape))
            new._param = new.logits
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * F.exp(self.logits)

    @property
    def mode(self):
        return F.clamp(F.floor((self.total_count - 1) * F.exp(self.logits)), min=0.0)

    @property
    def variance(self):
        return self.mean / F.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=F.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=_NO_SHAPE):
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _creation.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * _logsigmoid(-self.logits) + value * _logsigmoid(
            self.logits
        )
        log_normalization = (
            -F.lgamma(self.total_count + value) + F.lgamma(1.0 + value) + F.lgamma(self.total_count)
        )
        log_normalization = F.where(self.total_count + value == 0.0, 0.0, log_normalization)
        return log_unnormalized_prob - log_normalization
