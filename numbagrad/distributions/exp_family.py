"""``torch.distributions.exp_family``: :class:`ExponentialFamily`."""

from __future__ import annotations

from numbagrad import autograd as _autograd
from numbagrad import ops as F
from numbagrad.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of the distributions of the form ``p(x) = exp(<t(x), theta> - F(theta) + k(x))``:
    a subclass states ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``,
    and gets ``entropy`` (and the Bregman KL divergence between two of its members) from
    the gradient of the log normalizer."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]``, by autograd."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = _autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for npar, g in zip(nparams, gradients, strict=True):
            result = result - F.sum(F.reshape(npar * g, (*tuple(self._batch_shape), -1)), -1)
        return result
