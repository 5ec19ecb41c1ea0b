"""``torch.distributions.bernoulli``: :class:`Bernoulli`."""

from __future__ import annotations

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad.distributions.distribution import (
    _NO_SHAPE,
    Distribution,
    _broadcast_all,
    _clamp_probs,
)
from numbagrad.nn.functional import binary_cross_entropy_with_logits as _bce_with_logits

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """The Bernoulli distribution, by ``probs`` or ``logits`` (exactly one).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Bernoulli
    >>> d = Bernoulli(logits=numbagrad.tensor([0.0, 2.0]))
    >>> d.log_prob(numbagrad.tensor([1.0, 0.0]))
    tensor([-0.6931, -2.1269])
    """

    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = _broadcast_all(probs)
            self.logits = F.log(_clamp_probs(self.probs)) - F.log1p(-_clamp_probs(self.probs))
        else:
            (self.logits,) = _broadcast_all(logits)
            self.probs = F.sigmoid(self.logits)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _creation.bernoulli(F.expand(self.probs, shape))

    def log_prob(self, value):
        logits, value = F.broadcast_tensors(self.logits, value)
        return -_bce_with_logits(logits, value, reduction="none")

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs, reduction="none")
