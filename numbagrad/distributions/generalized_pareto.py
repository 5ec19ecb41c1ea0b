"""``torch.distributions.generalized_pareto``: :class:`GeneralizedPareto`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import _uniform, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of ``loc``, ``scale`` and ``concentration``
    (``rsample`` by its inverse CDF).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import GeneralizedPareto
    >>> round(GeneralizedPareto(0.0, 1.0, 0.0).log_prob(numbagrad.tensor(1.0)).item(), 4)
    -1.0
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = F.expand(self.loc, tuple(batch_shape))
        new.scale = F.expand(self.scale, tuple(batch_shape))
        new.concentration = F.expand(self.concentration, tuple(batch_shape))
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_NO_SHAPE):
        return self.icdf(_uniform(self._extended_shape(sample_shape), self.loc))

    def _safe(self):
        eq_zero = F.isclose(self.concentration, _creation.zeros_like(self.concentration))
        return eq_zero, F.where(eq_zero, 1.0, self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + _creation.ones_like(z)
        where_nonzero = F.where(y == 0, y, y * F.log1p(safe_conc * z))
        return -F.log(self.scale) - F.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        return F.where(eq_zero, -z, -F.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return F.log1p(-F.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return F.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe()
        logu = F.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * F.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return F.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = F.where(valid, self.concentration, 0.5)
        return F.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = F.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return F.where(valid, result, math.nan)

    def entropy(self):
        ans = F.log(self.scale) + self.concentration + 1
        return F.expand(ans, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = F.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
