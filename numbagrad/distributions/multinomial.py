"""``torch.distributions.multinomial``: :class:`Multinomial`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.binomial import Binomial
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """The counts of ``total_count`` draws from a :class:`Categorical` of ``probs`` (or
    ``logits``); ``total_count`` is one int (PyTorch's restriction).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Multinomial
    >>> d = Multinomial(3, probs=numbagrad.tensor([0.5, 0.5]))
    >>> round(d.log_prob(numbagrad.tensor([1.0, 2.0])).item(), 4)
    -0.9808
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=_NO_SHAPE):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count, *tuple(sample_shape))))
        k = self._categorical._num_events
        hits = F.unsqueeze(draws, -1) == _creation.arange(k, dtype=D.int64)
        counts = F.sum(hits.to(self.probs.dtype), 0)
        return F.reshape(counts, tuple(self._extended_shape(sample_shape)))

    def entropy(self):
        n = _creation.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - F.lgamma(n + 1)
        binomial = Binomial(total_count=self.total_count, probs=self.probs, validate_args=False)
        support = binomial.enumerate_support(expand=False)[1:]
        binomial_probs = F.exp(binomial.log_prob(support))
        weights = F.lgamma(support + 1)
        term2 = F.sum(binomial_probs * weights, (0, -1))
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = F.lgamma(F.sum(value, -1) + 1)
        log_factorial_xs = F.sum(F.lgamma(value + 1), -1)
        logits = F.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = F.sum(logits * value, -1)
        return log_factorial_n - log_factorial_xs + log_powers
