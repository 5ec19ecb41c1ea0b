"""``torch.distributions.von_mises``: :class:`VonMises`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as DT
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad.distributions import constraints
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz and Stegun 9.8.1-9.8.4: polynomial forms of I0 and I1 (PyTorch uses these, so
# log_prob and variance match its values)
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_LARGE = [
    0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
    -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2,
]  # fmt: skip
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_LARGE = [
    0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
    0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2,
]  # fmt: skip


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """``log I_order(x)`` for ``x > 0``, ``order`` 0 or 1."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _I0_SMALL if order == 0 else _I1_SMALL)
    if order == 1:
        small = F.abs(x) * small
    small = F.log(small)
    y = 3.75 / x
    large = x - 0.5 * F.log(x) + F.log(_eval_poly(y, _I0_LARGE if order == 0 else _I1_LARGE))
    return F.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's rejection sampler, redrawing the elements not yet accepted."""
    done = _creation.zeros(tuple(x.shape), dtype=DT.bool)
    while not bool(F.all(done)):
        u = _creation.rand((3, *tuple(x.shape)), dtype=loc.dtype)
        u1, u2, u3 = u[0], u[1], u[2]
        z = F.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | (F.log(c / u2) + 1 - c >= 0)
        x = F.where(accept & ~done, F.sign(u3 - 0.5) * F.acos(f), x)
        done = done | accept
    return F.remainder(x + math.pi + loc, 2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises (circular normal) distribution of ``loc`` and ``concentration``,
    on the circle ``[-pi, pi)``; samples by rejection (no ``rsample``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import VonMises
    >>> round(VonMises(0.0, 1.0).log_prob(numbagrad.tensor(0.0)).item(), 4)
    -1.0738
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real,
        "concentration": constraints.positive,
    }
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * F.cos(value - self.loc)
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    @lazy_property
    def _loc(self):
        return self.loc.to(DT.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(DT.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + F.sqrt(1 + 4 * kappa**2)
        rho = (tau - F.sqrt(2 * tau)) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return F.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            x = _creation.zeros(shape, dtype=DT.float64)
            return _rejection_sample(
                self._loc.detach(), self._concentration.detach(), self._proposal_r.detach(), x
            ).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        loc = F.expand(self.loc, tuple(batch_shape))
        concentration = F.expand(self.concentration, tuple(batch_shape))
        return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - F.exp(
            _log_modified_bessel_fn(self.concentration, order=1)
            - _log_modified_bessel_fn(self.concentration, order=0)
        )
