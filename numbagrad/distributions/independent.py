"""``torch.distributions.independent``: :class:`Independent`."""

from __future__ import annotations

from numbagrad import ops as F
from numbagrad.distributions.distribution import (
    _NO_SHAPE,
    Distribution,
)

__all__ = ["Independent"]


class Independent(Distribution):
    """Treat the last ``reinterpreted_batch_ndims`` batch dimensions of ``base_distribution``
    as event dimensions (``log_prob`` and ``entropy`` sum over them).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Independent, Normal
    >>> d = Independent(Normal(numbagrad.zeros(3), numbagrad.ones(3)), 1)
    >>> d.batch_shape, d.event_shape
    (numbagrad.Size([]), numbagrad.Size([3]))
    >>> round(d.log_prob(numbagrad.zeros(3)).item(), 4)
    -2.7568
    """

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        if n > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution."
                f"batch_shape), actual {n} vs "
                f"{len(base_distribution.batch_shape)}"
            )
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        event_dim = n + len(base_distribution.event_shape)
        super().__init__(shape[: len(shape) - event_dim], shape[len(shape) - event_dim :])
        self.has_rsample = base_distribution.has_rsample

    def _sum_rightmost(self, x):
        n = self.reinterpreted_batch_ndims
        return x if n == 0 else F.sum(x, tuple(range(-n, 0)))

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=_NO_SHAPE):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=_NO_SHAPE):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
