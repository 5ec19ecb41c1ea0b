"""``torch.distributions``: PyTorch's probability distributions, with its formulas (so
``log_prob``, ``entropy``, ``cdf`` and the KL divergences are differentiable with respect to
the parameters and match PyTorch's values), its argument constraints and validation
(``validate_args``, on by default under ``__debug__`` as in PyTorch), ``expand``, the
:mod:`~numbagrad.distributions.transforms` with :class:`TransformedDistribution`, and the
:mod:`~numbagrad.distributions.constraints` with :data:`biject_to`/:data:`transform_to`.
``rsample`` is reparameterised where PyTorch's is (the gamma family through an implicit
reparameterisation gradient, NOTE [Reparameterised gamma samples] in
``kernels/cpu/gamma.py``). ``rsample``/``sample`` draw from numbagrad's generator: the
same seed gives other numbers than PyTorch's (as everywhere in numbagrad).

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
from numbagrad.distributions import constraints, transforms, utils  # noqa: F401  (utils: as torch)
from numbagrad.distributions.bernoulli import Bernoulli
from numbagrad.distributions.beta import Beta
from numbagrad.distributions.binomial import Binomial
from numbagrad.distributions.categorical import Categorical
from numbagrad.distributions.cauchy import Cauchy
from numbagrad.distributions.chi2 import Chi2
from numbagrad.distributions.constraint_registry import biject_to, transform_to
from numbagrad.distributions.continuous_bernoulli import ContinuousBernoulli
from numbagrad.distributions.dirichlet import Dirichlet
from numbagrad.distributions.distribution import Distribution
from numbagrad.distributions.exp_family import ExponentialFamily
from numbagrad.distributions.exponential import Exponential
from numbagrad.distributions.fishersnedecor import FisherSnedecor
from numbagrad.distributions.gamma import Gamma
from numbagrad.distributions.generalized_pareto import GeneralizedPareto
from numbagrad.distributions.geometric import Geometric
from numbagrad.distributions.gumbel import Gumbel
from numbagrad.distributions.half_cauchy import HalfCauchy
from numbagrad.distributions.half_normal import HalfNormal
from numbagrad.distributions.independent import Independent
from numbagrad.distributions.inverse_gamma import InverseGamma
from numbagrad.distributions.kl import kl_divergence, register_kl
from numbagrad.distributions.kumaraswamy import Kumaraswamy
from numbagrad.distributions.laplace import Laplace
from numbagrad.distributions.lkj_cholesky import LKJCholesky
from numbagrad.distributions.log_normal import LogNormal
from numbagrad.distributions.logistic_normal import LogisticNormal
from numbagrad.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from numbagrad.distributions.mixture_same_family import MixtureSameFamily
from numbagrad.distributions.multinomial import Multinomial
from numbagrad.distributions.multivariate_normal import MultivariateNormal
from numbagrad.distributions.negative_binomial import NegativeBinomial
from numbagrad.distributions.normal import Normal
from numbagrad.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from numbagrad.distributions.pareto import Pareto
from numbagrad.distributions.poisson import Poisson
from numbagrad.distributions.relaxed_bernoulli import RelaxedBernoulli
from numbagrad.distributions.relaxed_categorical import RelaxedOneHotCategorical
from numbagrad.distributions.studentT import StudentT
from numbagrad.distributions.transformed_distribution import TransformedDistribution
from numbagrad.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from numbagrad.distributions.uniform import Uniform
from numbagrad.distributions.von_mises import VonMises
from numbagrad.distributions.weibull import Weibull
from numbagrad.distributions.wishart import Wishart

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
]
