"""``torch.distributions.geometric``: :class:`Geometric`."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import (
    _uniform,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from numbagrad.nn.functional import binary_cross_entropy_with_logits as _bce_with_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The number of failures before the first success in Bernoulli trials of probability
    ``probs`` (or ``logits``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Geometric
    >>> round(Geometric(0.5).log_prob(numbagrad.tensor(2.0)).item(), 4)
    -2.0794
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = (
            Size()
            if isinstance(given, numbers.Number)
            else (self.probs if probs is not None else self.logits).shape
        )
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(F.all(valid)):
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to be positive but found invalid values:\n{value[~valid]}"
                )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, tuple(batch_shape))
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, tuple(batch_shape))
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _creation.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        tiny = D.finfo(self.probs.dtype).tiny
        with no_grad():
            u = _uniform(shape, self.probs) * (1 - tiny) + tiny  # in [tiny, 1)
            return F.floor(F.log(u) / F.log1p(-self.probs))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = F.where((probs == 1) & (value == 0), 0.0, probs)
        return value * F.log1p(-probs) + F.log(self.probs)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs, reduction="none") / self.probs
