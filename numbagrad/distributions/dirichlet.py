"""``torch.distributions.dirichlet``: :class:`Dirichlet`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE
from numbagrad.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution of ``concentration`` (the last dimension is the event);
    ``rsample`` normalises reparameterised gamma draws, so gradients reach
    ``concentration``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Dirichlet
    >>> d = Dirichlet(numbagrad.tensor([1.0, 2.0, 3.0]))
    >>> round(d.log_prob(numbagrad.tensor([0.2, 0.3, 0.5])).item(), 4)
    1.5041
    """

    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.independent(constraints.positive, 1)
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(
            concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = F.expand(
            self.concentration, tuple(batch_shape) + tuple(self.event_shape)
        )
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        gammas = F.standard_gamma(F.expand(self.concentration, shape))
        x = gammas / F.sum(gammas, -1, keepdim=True)
        finfo = D.finfo(x.dtype)
        return x + (F.clamp(x.detach(), finfo.tiny, 1 - finfo.eps) - x.detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return F.sum(F.xlogy(c - 1.0, value), -1) + F.lgamma(F.sum(c, -1)) - F.sum(F.lgamma(c), -1)

    @property
    def mean(self):
        return self.concentration / F.sum(self.concentration, -1, keepdim=True)

    @property
    def mode(self):
        cm1 = F.clamp(self.concentration - 1, min=0.0)
        mode = cm1 / F.sum(cm1, -1, keepdim=True)
        mask = F.all(self.concentration < 1, -1, keepdim=True)
        k = cm1.shape[-1]
        idx = F.unsqueeze(F.argmax(mode, -1), -1)
        one_hot = (_creation.arange(k) == idx).to(mode.dtype)
        return F.where(mask, one_hot, mode)

    @property
    def variance(self):
        con0 = F.sum(self.concentration, -1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0**2 * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = F.sum(c, -1)
        return (
            F.sum(F.lgamma(c), -1)
            - F.lgamma(a0)
            - (k - a0) * F.digamma(a0)
            - F.sum((c - 1.0) * F.digamma(c), -1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return F.sum(F.lgamma(x), -1) - F.lgamma(F.sum(x, -1))
