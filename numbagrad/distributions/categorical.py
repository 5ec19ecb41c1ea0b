"""``torch.distributions.categorical``: :class:`Categorical`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A categorical distribution over the last dimension of ``probs`` or ``logits``
    (normalised), batched over the others.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Categorical
    >>> d = Categorical(probs=numbagrad.tensor([0.2, 0.3, 0.5]))
    >>> round(d.log_prob(numbagrad.tensor(2)).item(), 4), round(d.entropy().item(), 4)
    (-0.6931, 1.0297)
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / F.sum(probs, -1, keepdim=True)
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - F.logsumexp(logits, -1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.ndim > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = (*tuple(batch_shape), self._num_events)
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return F.argmax(self.probs, -1)

    @property
    def variance(self):
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=_NO_SHAPE):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        n = math.prod(tuple(sample_shape))
        with no_grad():
            flat = F.reshape(self.probs, (-1, self._num_events))
            draws = _creation.multinomial(flat, n, replacement=True)  # (batch, n)
            draws = F.transpose(draws, 0, 1)
        return F.reshape(draws, tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = F.unsqueeze(value.to(D.int64), -1)
        value, log_pmf = F.broadcast_tensors(value, self.logits)
        return F.squeeze(F.gather(log_pmf, -1, value[..., :1]), -1)

    def entropy(self):
        logits = F.clamp(self.logits, min=D.finfo(self.logits.dtype).min)
        return -F.sum(logits * self.probs, -1)

    def enumerate_support(self, expand=True):
        values = _creation.arange(self._num_events, dtype=D.int64)
        values = F.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = F.expand(values, (-1, *tuple(self._batch_shape)))
        return values
