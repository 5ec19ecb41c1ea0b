"""``torch.distributions.continuous_bernoulli``: :class:`ContinuousBernoulli`."""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import (
    _uniform,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from numbagrad.nn.functional import binary_cross_entropy_with_logits as _bce_with_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on ``[0, 1]`` (Loaiza-Ganem and Cunningham),
    by ``probs`` or ``logits``; near ``probs = 0.5`` (within ``lims``) its normaliser and
    moments use Taylor expansions, as PyTorch's.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import ContinuousBernoulli
    >>> round(ContinuousBernoulli(probs=numbagrad.tensor(0.2)).mean.item(), 4)
    0.388
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(
                F.all(self.arg_constraints["probs"].check(self.probs))
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.shape
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = F.expand(self.probs, tuple(batch_shape))
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = F.expand(self.logits, tuple(batch_shape))
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return F.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = F.where(cut <= 0.5, cut, 0.0)
        above = F.where(cut >= 0.5, cut, 1.0)
        log_norm = F.log(F.abs(F.log1p(-cut) - F.log(cut))) - F.where(
            cut <= 0.5, F.log1p(-2.0 * below), F.log(2.0 * above - 1.0)
        )
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return F.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (F.log1p(-cut) - F.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x**2) * x
        return F.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return F.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = (
            cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / (F.log1p(-cut) - F.log(cut)) ** 2
        )
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return F.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=_NO_SHAPE):
        u = _uniform(self._extended_shape(sample_shape), self.probs)
        return self.icdf(u).detach()

    def rsample(self, sample_shape=_NO_SHAPE):
        u = _uniform(self._extended_shape(sample_shape), self.probs)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut**value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = F.where(self._outside_unstable_region(), cdfs, value)
        zeros = _creation.zeros_like(value)
        ones = _creation.ones_like(value)
        return F.where(value <= 0.0, zeros, F.where(value >= 1.0, ones, unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return F.where(
            self._outside_unstable_region(),
            (F.log1p(-cut + value * (2.0 * cut - 1.0)) - F.log1p(-cut))
            / (F.log(cut) - F.log1p(-cut)),
            value,
        )

    def entropy(self):
        log_probs0 = F.log1p(-self.probs)
        log_probs1 = F.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = F.where(out_unst_reg, x, self._lims[0] - 0.5)
        log_norm = F.log(F.abs(F.expm1(cut_nat_params))) - F.log(F.abs(cut_nat_params))
        taylor = 0.5 * x + x**2 / 24.0 - x**4 / 2880.0
        return F.where(out_unst_reg, log_norm, taylor)
