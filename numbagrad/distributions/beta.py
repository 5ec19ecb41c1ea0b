"""``torch.distributions.beta``: :class:`Beta`."""

from __future__ import annotations

import numbers
from typing import ClassVar

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.dirichlet import Dirichlet
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """The beta distribution of ``concentration1`` (alpha) and ``concentration0`` (beta),
    a two-category :class:`Dirichlet` (``rsample`` is reparameterised).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Beta
    >>> round(Beta(2.0, 2.0).log_prob(numbagrad.tensor(0.5)).item(), 4)
    0.4055
    """

    arg_constraints: ClassVar[dict] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            c1_c0 = _creation.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            c1_c0 = F.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(c1_c0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        super(Beta, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total**2 * (total + 1))

    def rsample(self, sample_shape=_NO_SHAPE):
        return F.select(self._dirichlet.rsample(sample_shape), -1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = F.stack(F.broadcast_tensors(value, 1.0 - value), -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return F.lgamma(x) + F.lgamma(y) - F.lgamma(x + y)
