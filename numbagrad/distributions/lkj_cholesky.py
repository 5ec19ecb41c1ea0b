"""``torch.distributions.lkj_cholesky``: :class:`LKJCholesky`."""

from __future__ import annotations

import math
from typing import ClassVar

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.beta import Beta
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution
from numbagrad.distributions.utils import _standard_normal, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over Cholesky factors of ``dim x dim`` correlation matrices,
    of ``concentration`` (samples by the onion method, as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import LKJCholesky
    >>> d = LKJCholesky(3, 0.5)
    >>> round(d.log_prob(numbagrad.eye(3)).item(), 4)
    -2.531
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _creation.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = F.cat([_creation.zeros(1, dtype=offset.dtype), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = F.unsqueeze(marginal_conc, -1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = F.expand(self.concentration, tuple(batch_shape))
        new._beta = self._beta.expand((*tuple(batch_shape), self.dim))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=_NO_SHAPE):
        with no_grad():
            y = F.unsqueeze(self._beta.sample(sample_shape), -1)
            u_normal = F.tril(_standard_normal(self._extended_shape(sample_shape), y), -1)
            norm = F.sqrt(F.sum(u_normal**2, -1, keepdim=True))
            # the first row is all zero: 0 / 0 there, replaced by 0 as PyTorch's fill_
            first = (_creation.arange(self.dim) == 0).to(D.bool)
            u_hypersphere = F.where(F.unsqueeze(first, -1), 0.0, u_normal / norm)
            w = F.sqrt(y) * u_hypersphere
            eps = D.finfo(w.dtype).tiny
            diag_elems = F.sqrt(F.clamp(1 - F.sum(w**2, -1), min=eps))
            return w + F.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = F.diagonal(value, 0, -1, -2)[..., 1:]
        order = _creation.arange(2, self.dim + 1)
        order = 2 * F.unsqueeze(self.concentration - 1, -1) + self.dim - order
        unnormalized_log_pdf = F.sum(order * F.log(diag_elems), -1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = F.lgamma(alpha) * dm1
        numerator = F.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
