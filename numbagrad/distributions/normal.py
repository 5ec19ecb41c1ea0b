"""``torch.distributions.normal``: :class:`Normal`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import _standard_normal, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal distribution ``N(loc, scale**2)``, batched by broadcasting.

    Parameters
    ----------
    loc, scale : float or Tensor
    validate_args : bool, optional
        Check that ``scale`` is positive (and ``log_prob``'s values real).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Normal
    >>> d = Normal(numbagrad.tensor(1.0), numbagrad.tensor(2.0))
    >>> round(d.cdf(numbagrad.tensor(1.0)).item(), 4), round(d.entropy().item(), 4)
    (0.5, 2.1121)
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = Size(batch_shape)
        new.loc = F.expand(self.loc, tuple(batch_shape))
        new.scale = F.expand(self.scale, tuple(batch_shape))
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale**2

    def sample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return F.expand(self.loc, tuple(shape)) + _standard_normal(shape, self.loc) * self.scale

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = (
            math.log(self.scale) if isinstance(self.scale, numbers.Real) else F.log(self.scale)
        )
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + F.erf((value - self.loc) * F.reciprocal(self.scale) / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * F.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + F.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale**2, -0.5 * F.reciprocal(self.scale**2))

    def _log_normalizer(self, x, y):
        return -0.25 * x**2 / y + 0.5 * F.log(-math.pi / y)
