"""``torch.distributions.laplace``: :class:`Laplace`."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import _uniform, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace distribution of location ``loc`` and scale ``scale``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Laplace
    >>> round(Laplace(0.0, 1.0).cdf(numbagrad.tensor(0.0)).item(), 4)
    0.5
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = F.expand(self.loc, tuple(batch_shape))
        new.scale = F.expand(self.scale, tuple(batch_shape))
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale**2

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = D.finfo(self.loc.dtype).eps
        u = _uniform(shape, self.loc) * (2 - eps) + (eps - 1)  # in [eps - 1, 1)
        return self.loc - self.scale * F.sign(u) * F.log1p(-F.abs(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -F.log(2 * self.scale) - F.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * F.sign(value - self.loc) * F.expm1(-F.abs(value - self.loc) / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * F.sign(term) * F.log1p(-2 * F.abs(term))

    def entropy(self):
        return 1 + F.log(2 * self.scale)
