"""``torch.distributions``, the part scientific scripts use most: :class:`Normal`,
:class:`MultivariateNormal`,
:class:`Uniform`, :class:`Bernoulli`, :class:`Categorical`, :class:`Independent` and
:func:`kl_divergence`, with PyTorch's formulas (so ``log_prob``, ``entropy``, ``cdf`` and
the KL divergences are differentiable with respect to the parameters and match PyTorch's
values). ``rsample``/``sample`` draw from numbagrad's generator: the same seed gives other
numbers than PyTorch's (as everywhere in numbagrad). Argument validation
(``validate_args``) covers the parameters; values passed to ``log_prob`` are not checked
against the support.

Examples
--------
>>> import numbagrad
>>> from numbagrad.distributions import Normal, kl_divergence
>>> p = Normal(numbagrad.tensor([0.0, 1.0]), numbagrad.tensor([1.0, 2.0]))
>>> p.log_prob(numbagrad.tensor([0.0, 1.0]))
tensor([-0.9189, -1.6121])
>>> kl_divergence(p, Normal(0.0, 1.0))
tensor([0.0000, 1.3069])
"""

# (importing the classes from their modules, named as PyTorch's, makes the modules
# attributes of the package too: ``numbagrad.distributions.normal.Normal``)
from numbagrad.distributions.bernoulli import Bernoulli
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.distribution import Distribution
from numbagrad.distributions.independent import Independent
from numbagrad.distributions.kl import kl_divergence, register_kl
from numbagrad.distributions.multivariate_normal import MultivariateNormal
from numbagrad.distributions.normal import Normal
from numbagrad.distributions.uniform import Uniform

__all__ = [
    "Bernoulli",
    "Categorical",
    "Distribution",
    "Independent",
    "MultivariateNormal",
    "Normal",
    "Uniform",
    "kl_divergence",
    "register_kl",
]
