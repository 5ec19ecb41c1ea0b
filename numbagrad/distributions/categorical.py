"""``torch.distributions.categorical``: :class:`Categorical`."""

from __future__ import annotations

import math

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad.distributions.distribution import (
    _NO_SHAPE,
    Distribution,
    _clamp_probs,
)

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

    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / F.sum(probs, -1, keepdim=True)
            self.logits = F.log(_clamp_probs(self.probs))
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - F.logsumexp(logits, -1, keepdim=True)
            self.probs = F.softmax(self.logits, -1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1])

    @property
    def mean(self):
        return _creation.full(tuple(self.batch_shape), math.nan, dtype=self.probs.dtype)

    @property
    def variance(self):
        return _creation.full(tuple(self.batch_shape), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=_NO_SHAPE):
        n = math.prod(tuple(sample_shape))
        with no_grad():
            flat = F.reshape(self.probs, (-1, self._num_events))
            draws = _creation.multinomial(flat, n, replacement=True)  # (batch, n)
            draws = F.transpose(draws, 0, 1)
        return F.reshape(draws, tuple(sample_shape) + tuple(self.batch_shape))

    def log_prob(self, value):
        value = F.unsqueeze(value.to(D.int64), -1)
        value, log_pmf = F.broadcast_tensors(value, self.logits)
        return F.squeeze(F.gather(log_pmf, -1, value[..., :1]), -1)

    def entropy(self):
        logits = F.clamp(self.logits, min=D.finfo(self.logits.dtype).min)
        return -F.sum(logits * self.probs, -1)
