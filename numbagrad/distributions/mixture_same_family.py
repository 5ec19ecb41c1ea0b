"""``torch.distributions.mixture_same_family``: :class:`MixtureSameFamily`."""

from __future__ import annotations

from typing import ClassVar

from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size
from numbagrad.distributions import constraints
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.distribution import _NO_SHAPE, Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture whose components are the rightmost batch dimension of one
    ``component_distribution``, weighted by the :class:`Categorical`
    ``mixture_distribution``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Categorical, MixtureSameFamily, Normal
    >>> mix = Categorical(probs=numbagrad.tensor([0.5, 0.5]))
    >>> d = MixtureSameFamily(mix, Normal(numbagrad.tensor([-1.0, 1.0]), numbagrad.ones(2)))
    >>> round(d.log_prob(numbagrad.tensor(0.0)).item(), 4)
    -1.4189
    """

    arg_constraints: ClassVar[dict] = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an "
                " instance of torch.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution needs to be an "
                "instance of torch.distributions.Distribution"
            )
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                    "compatible with `component_distribution."
                    f"batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not"
                " equal `component_distribution.batch_shape[-1]`"
                f" ({kc})"
            )
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            (*tuple(batch_shape), self._num_component)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        super(MixtureSameFamily, new).__init__(
            batch_shape=batch_shape,
            event_shape=new._component_distribution.event_shape,
            validate_args=False,
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return F.sum(probs * self.component_distribution.mean, -1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = F.sum(probs * self.component_distribution.variance, -1 - self._event_ndims)
        var_cond_mean = F.sum(
            probs * (self.component_distribution.mean - self._pad(self.mean)) ** 2.0,
            -1 - self._event_ndims,
        )
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return F.sum(cdf_x * self.mixture_distribution.probs, -1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = F.log_softmax(self.mixture_distribution.logits, -1)
        return F.logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape=_NO_SHAPE):
        with no_grad():
            sample_len = len(sample_shape)
            gather_dim = sample_len + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            idx = F.reshape(mix_sample, mix_shape + (1,) * (len(es) + 1))
            idx = F.expand(idx, (*mix_shape, 1, *es))
            return F.squeeze(F.gather(comp_samples, gather_dim, idx), gather_dim)

    def _pad(self, x):
        return F.unsqueeze(x, -1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return F.reshape(x, xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self):
        return (
            "MixtureSameFamily"
            + f"(\n  {self.mixture_distribution},\n  {self.component_distribution})"
        )
