"""``torch.distributions.uniform``: :class:`Uniform`."""

from __future__ import annotations

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad.distributions.distribution import (
    _NO_SHAPE,
    Distribution,
    _broadcast_all,
)

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Uniform
    >>> d = Uniform(0.0, 4.0)
    >>> d.log_prob(numbagrad.tensor([1.0, 5.0]))
    tensor([-1.3863,    -inf])
    """

    has_rsample = True
    _param_names = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        if validate_args and not bool(F.all(self.low < self.high)):
            raise ValueError("Expected parameter low of Uniform to be less than high")
        super().__init__(self.low.shape)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        dev = _creation._like_device(self.low, None)  # a CUDA low: drawn on the device
        rand = _creation.rand(tuple(shape), dtype=self.low.dtype, device=dev)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return F.log(lb * ub) - F.log(self.high - self.low)

    def cdf(self, value):
        return F.clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return F.log(self.high - self.low)
