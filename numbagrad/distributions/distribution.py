"""The base class :class:`Distribution` and the helpers the distributions share
(``torch.distributions.distribution``)."""

from __future__ import annotations

import numbers

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size, Tensor

__all__ = ["Distribution"]


_NO_SHAPE = Size()


def _broadcast_all(*values):
    """Numbers become tensors (of the tensors' dtype, else the default), then all are
    broadcast together, as ``torch.distributions.utils.broadcast_all``."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError(
                "Input arguments must all be instances of numbers.Number or "
                f"torch.Tensor, got {type(v).__name__}"
            )
    dtype = tensors[0].dtype if tensors else D.get_default_dtype()
    out = [v if isinstance(v, Tensor) else _creation.tensor(float(v), dtype=dtype) for v in values]
    return F.broadcast_tensors(*out)


def _clamp_probs(probs):
    eps = D.finfo(probs.dtype).eps
    return F.clamp(probs, eps, 1 - eps)


class Distribution:
    """Base class: ``batch_shape``, ``event_shape``, ``sample``/``rsample`` of a
    ``sample_shape``, ``log_prob``, ``entropy``, ``mean``, ``variance``, ``stddev``.

    Examples
    --------
    >>> from numbagrad.distributions import Normal
    >>> Normal(0.0, 1.0).sample((3,)).shape
    numbagrad.Size([3])
    """

    has_rsample = False

    def __init__(self, batch_shape=_NO_SHAPE, event_shape=_NO_SHAPE, validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=_NO_SHAPE):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    @property
    def stddev(self):
        return F.sqrt(self.variance)

    def sample(self, sample_shape=_NO_SHAPE):
        """A sample (no gradient) of shape ``sample_shape + batch_shape + event_shape``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_NO_SHAPE):
        """A reparameterised sample (gradients flow to the parameters)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no rsample (it is not reparameterisable)"
        )

    def __repr__(self):
        params = ", ".join(f"{k}: {tuple(getattr(self, k).shape)}" for k in self._param_names)
        return f"{type(self).__name__}({params})"
