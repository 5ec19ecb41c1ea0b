"""``torch.distributions.binomial``: :class:`Binomial`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Binomial"]

_CHUNK = 256  # Bernoulli trials drawn at once per element when sampling


def _clamp_by_zero(x):
    return (F.clamp(x, min=0) + x - F.clamp(x, max=0)) / 2


def _binomial_draw(total_count, probs):
    """Binomial draws as sums of Bernoulli trials from numbagrad's generator, in chunks of
    trials (memory ``numel * 256``; time proportional to the largest count)."""
    n_max = int(F.amax(total_count).item()) if total_count.numel() else 0
    out = _creation.zeros_like(probs)
    p = F.unsqueeze(probs, -1)
    n = F.unsqueeze(total_count, -1)
    for start in range(0, n_max, _CHUNK):
        width = min(_CHUNK, n_max - start)
        trials = _creation.bernoulli(F.expand(p, (*tuple(probs.shape), width)))
        live = (_creation.arange(start, start + width, dtype=probs.dtype) < n).to(probs.dtype)
        out = out + F.sum(trials * live, -1)
    return out


class Binomial(Distribution):
    """The number of successes in ``total_count`` trials of probability ``probs`` (or
    ``logits``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Binomial
    >>> round(Binomial(4, probs=numbagrad.tensor(0.5)).log_prob(numbagrad.tensor(2.0)).item(), 4)
    -0.9808
    """

    arg_constraints: ClassVar[dict] = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = F.expand(self.total_count, tuple(batch_shape))
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, tuple(batch_shape))
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, tuple(batch_shape))
            new._param = new.logits
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return F.minimum(F.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _binomial_draw(F.expand(self.total_count, shape), F.expand(self.probs, shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = F.lgamma(self.total_count + 1)
        log_factorial_k = F.lgamma(value + 1)
        log_factorial_nmk = F.lgamma(self.total_count - value + 1)
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * F.log1p(F.exp(-F.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(F.amax(self.total_count).item())
        if not F.amin(self.total_count).item() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -F.sum(F.exp(log_prob) * log_prob, 0)

    def enumerate_support(self, expand=True):
        total_count = int(F.amax(self.total_count).item())
        if not F.amin(self.total_count).item() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = _creation.arange(1 + total_count, dtype=self._param.dtype)
        values = F.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = F.expand(values, (-1, *tuple(self._batch_shape)))
        return values
