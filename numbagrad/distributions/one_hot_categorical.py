"""``torch.distributions.one_hot_categorical``: :class:`OneHotCategorical` and
:class:`OneHotCategoricalStraightThrough`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(indices, n, dtype):
    return (F.unsqueeze(indices, -1) == _creation.arange(n, dtype=D.int64)).to(dtype)


class OneHotCategorical(Distribution):
    """A :class:`Categorical` whose samples are one-hot vectors of the last dimension.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import OneHotCategorical
    >>> d = OneHotCategorical(probs=numbagrad.tensor([0.2, 0.8]))
    >>> round(d.log_prob(numbagrad.tensor([0.0, 1.0])).item(), 4)
    -0.2231
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(F.argmax(probs, -1), probs.shape[-1], probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=_NO_SHAPE):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return _one_hot(indices, self._categorical._num_events, probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = F.argmax(value, -1)
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _creation.eye(n, dtype=self._param.dtype)
        values = F.reshape(values, (n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = F.expand(values, (n, *tuple(self.batch_shape), n))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """:class:`OneHotCategorical` with a straight-through ``rsample``: the one-hot sample
    in the forward, the gradient of ``probs`` in the backward."""

    has_rsample = True

    def rsample(self, sample_shape=_NO_SHAPE):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
