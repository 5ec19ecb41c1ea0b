"""``torch.distributions.normal``: :class:`Normal`."""

from __future__ import annotations

import math

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad.distributions.distribution import (
    _NO_SHAPE,
    Distribution,
    _broadcast_all,
)

__all__ = ["Normal"]


class Normal(Distribution):
    """The normal distribution ``N(loc, scale**2)``, batched by broadcasting.

    Parameters
    ----------
    loc, scale : float or Tensor
    validate_args : bool, optional
        Check that ``scale`` is positive.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Normal
    >>> d = Normal(numbagrad.tensor(1.0), numbagrad.tensor(2.0))
    >>> round(d.cdf(numbagrad.tensor(1.0)).item(), 4), round(d.entropy().item(), 4)
    (0.5, 2.1121)
    """

    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        if validate_args and not bool(F.all(self.scale > 0)):
            raise ValueError(
                "Expected parameter scale of Normal to satisfy the constraint "
                "GreaterThan(lower_bound=0.0), but found invalid values"
            )
        super().__init__(self.loc.shape)

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

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        dev = _creation._like_device(self.loc, None)  # a CUDA loc: drawn on the device
        eps = _creation.randn(tuple(shape), dtype=self.loc.dtype, device=dev)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - F.log(self.scale)
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value):
        return 0.5 * (1 + F.erf((value - self.loc) * F.reciprocal(self.scale) / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * F.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + F.log(self.scale)
