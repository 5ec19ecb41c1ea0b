"""``torch.distributions.relaxed_categorical``: :class:`RelaxedOneHotCategorical` (and the
``ExpRelaxedCategorical`` it transforms)."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import ExpTransform
from numbagrad.distributions.utils import _uniform, broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a :class:`RelaxedOneHotCategorical` sample (the Concrete distribution
    in log space), by ``temperature`` and ``probs`` or ``logits``."""

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        super(ExpRelaxedCategorical, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(_uniform(shape, self.logits))
        gumbels = -F.log(-F.log(uniforms))
        scores = (self.logits + gumbels) / self.temperature
        return scores - F.logsumexp(scores, -1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (
            math.lgamma(float(k))
            + _creation.zeros_like(self.temperature)
            - F.log(self.temperature) * -(k - 1)
        )
        score = logits - value * self.temperature
        score = F.sum(score - F.logsumexp(score, -1, keepdim=True), -1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The relaxed one-hot categorical (Concrete, Gumbel-softmax) distribution on the
    simplex, of ``temperature``: reparameterised.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import RelaxedOneHotCategorical
    >>> d = RelaxedOneHotCategorical(numbagrad.tensor(0.5), probs=numbagrad.tensor([0.3, 0.7]))
    >>> d.rsample().shape
    numbagrad.Size([2])
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
