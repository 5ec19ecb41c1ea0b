"""``torch.distributions.bernoulli``: :class:`Bernoulli`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from numbagrad.nn.functional import binary_cross_entropy_with_logits as _bce_with_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """The Bernoulli distribution, by ``probs`` or ``logits`` (exactly one).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Bernoulli
    >>> d = Bernoulli(logits=numbagrad.tensor([0.0, 2.0]))
    >>> d.log_prob(numbagrad.tensor([1.0, 0.0]))
    tensor([-0.6931, -2.1269])
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
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
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, tuple(batch_shape))
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, tuple(batch_shape))
            new._param = new.logits
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return F.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

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
            return _creation.bernoulli(F.expand(self.probs, shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value, reduction="none")

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = _creation.arange(2, dtype=self._param.dtype)
        values = F.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = F.expand(values, (-1, *tuple(self._batch_shape)))
        return values

    @property
    def _natural_params(self):
        return (F.logit(self.probs),)

    def _log_normalizer(self, x):
        return F.log1p(F.exp(x))
