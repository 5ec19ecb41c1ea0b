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

from __future__ import annotations

import math
import numbers

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size, Tensor

_NO_SHAPE = Size()

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


class Normal(Distribution):
    """The normal distribution ``N(loc, scale**2)``, batched by broadcasting.

    Parameters
    ----------
    loc, scale : float or Tensor
    validate_args : bool, optional
        Check that ``scale`` is positive.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Normal
    >>> d = Normal(numbagrad.tensor(1.0), numbagrad.tensor(2.0))
    >>> round(d.cdf(numbagrad.tensor(1.0)).item(), 4), round(d.entropy().item(), 4)
    (0.5, 2.1121)
    """

    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        if validate_args and not bool(F.all(self.scale > 0)):
            raise ValueError(
                "Expected parameter scale of Normal to satisfy the constraint "
                "GreaterThan(lower_bound=0.0), but found invalid values"
            )
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale**2

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        dev = _creation._like_device(self.loc, None)  # a CUDA loc: drawn on the device
        eps = _creation.randn(tuple(shape), dtype=self.loc.dtype, device=dev)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - F.log(self.scale)
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value):
        return 0.5 * (1 + F.erf((value - self.loc) * F.reciprocal(self.scale) / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * F.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + F.log(self.scale)


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Uniform
    >>> d = Uniform(0.0, 4.0)
    >>> d.log_prob(numbagrad.tensor([1.0, 5.0]))
    tensor([-1.3863,    -inf])
    """

    has_rsample = True
    _param_names = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        if validate_args and not bool(F.all(self.low < self.high)):
            raise ValueError("Expected parameter low of Uniform to be less than high")
        super().__init__(self.low.shape)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        dev = _creation._like_device(self.low, None)  # a CUDA low: drawn on the device
        rand = _creation.rand(tuple(shape), dtype=self.low.dtype, device=dev)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return F.log(lb * ub) - F.log(self.high - self.low)

    def cdf(self, value):
        return F.clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return F.log(self.high - self.low)


class Bernoulli(Distribution):
    """The Bernoulli distribution, by ``probs`` or ``logits`` (exactly one).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Bernoulli
    >>> d = Bernoulli(logits=numbagrad.tensor([0.0, 2.0]))
    >>> d.log_prob(numbagrad.tensor([1.0, 0.0]))
    tensor([-0.6931, -2.1269])
    """

    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = _broadcast_all(probs)
            self.logits = F.log(_clamp_probs(self.probs)) - F.log1p(-_clamp_probs(self.probs))
        else:
            (self.logits,) = _broadcast_all(logits)
            self.probs = F.sigmoid(self.logits)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _creation.bernoulli(F.expand(self.probs, shape))

    def log_prob(self, value):
        from numbagrad.nn.functional import binary_cross_entropy_with_logits

        logits, value = F.broadcast_tensors(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        from numbagrad.nn.functional import binary_cross_entropy_with_logits

        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    """A categorical distribution over the last dimension of ``probs`` or ``logits``
    (normalised), batched over the others.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Categorical
    >>> d = Categorical(probs=numbagrad.tensor([0.2, 0.3, 0.5]))
    >>> round(d.log_prob(numbagrad.tensor(2)).item(), 4), round(d.entropy().item(), 4)
    (-0.6931, 1.0297)
    """

    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / F.sum(probs, -1, keepdim=True)
            self.logits = F.log(_clamp_probs(self.probs))
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - F.logsumexp(logits, -1, keepdim=True)
            self.probs = F.softmax(self.logits, -1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1])

    @property
    def mean(self):
        return _creation.full(tuple(self.batch_shape), math.nan, dtype=self.probs.dtype)

    @property
    def variance(self):
        return _creation.full(tuple(self.batch_shape), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=_NO_SHAPE):
        n = math.prod(tuple(sample_shape))
        with no_grad():
            flat = F.reshape(self.probs, (-1, self._num_events))
            draws = _creation.multinomial(flat, n, replacement=True)  # (batch, n)
            draws = F.transpose(draws, 0, 1)
        return F.reshape(draws, tuple(sample_shape) + tuple(self.batch_shape))

    def log_prob(self, value):
        value = F.unsqueeze(value.to(D.int64), -1)
        value, log_pmf = F.broadcast_tensors(value, self.logits)
        return F.squeeze(F.gather(log_pmf, -1, value[..., :1]), -1)

    def entropy(self):
        logits = F.clamp(self.logits, min=D.finfo(self.logits.dtype).min)
        return -F.sum(logits * self.probs, -1)


def _batch_shape_of(*shapes):
    out = []
    for dims in zip(*[(1,) * (max(map(len, shapes)) - len(sh)) + tuple(sh) for sh in shapes]):
        big = max(dims)
        if any(d not in (1, big) for d in dims):
            raise ValueError(f"Incompatible batch shapes: {[tuple(sh) for sh in shapes]}")
        out.append(big)
    return tuple(out)


def _mahalanobis(tril, x):
    """``x^T (L L^T)^{-1} x`` over broadcast batches: ``|| L^{-1} x ||^2``."""
    from numbagrad.linalg import solve_triangular

    batch = _batch_shape_of(tril.shape[:-2], x.shape[:-1])
    n = x.shape[-1]
    tril = F.expand(tril, (*batch, n, n))
    x = F.expand(x, (*batch, n))
    z = solve_triangular(tril, F.unsqueeze(x, -1), upper=False)
    return F.sum(F.squeeze(z, -1) ** 2, -1)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution, by exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor), batched by
    broadcasting with ``loc``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import MultivariateNormal
    >>> d = MultivariateNormal(numbagrad.zeros(2), numbagrad.tensor([[2.0, 0.5], [0.5, 1.0]]))
    >>> round(d.log_prob(numbagrad.tensor([1.0, -1.0])).item(), 4)
    -3.2605
    >>> round(d.entropy().item(), 4)
    3.1177
    """

    has_rsample = True
    _param_names = ("loc",)

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        from numbagrad import linalg

        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (precision_matrix is not None) + (
            scale_tril is not None
        ) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if given.ndim < 2:
            name = (
                "scale_tril"
                if scale_tril is not None
                else "covariance_matrix"
                if covariance_matrix is not None
                else "precision_matrix"
            )
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional "
                "leading batch dimensions"
            )
        if scale_tril is not None:
            tril = scale_tril
        elif covariance_matrix is not None:
            tril = linalg.cholesky(covariance_matrix)
        else:  # as PyTorch's _precision_to_scale_tril
            flipped = linalg.cholesky(F.flip(precision_matrix, (-2, -1)))
            tril_inv = F.transpose(F.flip(flipped, (-2, -1)), -2, -1)
            eye = _creation.eye(tril_inv.shape[-1], dtype=tril_inv.dtype)
            tril = linalg.solve_triangular(tril_inv, eye, upper=False)
        self._unbroadcasted_scale_tril = tril
        batch = _batch_shape_of(tril.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        self.loc = F.expand(loc, (*batch, n))
        super().__init__(batch, (n,))

    @property
    def scale_tril(self):
        return F.expand(
            self._unbroadcasted_scale_tril, tuple(self.batch_shape) + tuple(self.event_shape) * 2
        )

    @property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return F.expand(
            tril @ F.transpose(tril, -2, -1), tuple(self.batch_shape) + tuple(self.event_shape) * 2
        )

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return F.expand(
            F.sum(self._unbroadcasted_scale_tril**2, -1),
            tuple(self.batch_shape) + tuple(self.event_shape),
        )

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        dev = _creation._like_device(self.loc, None)  # a CUDA loc: drawn on the device
        eps = _creation.randn(tuple(shape), dtype=self.loc.dtype, device=dev)
        return self.loc + F.squeeze(self._unbroadcasted_scale_tril @ F.unsqueeze(eps, -1), -1)

    def _half_log_det(self):
        return F.sum(F.log(F.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1)), -1)

    def log_prob(self, value):
        m = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return F.expand(h, tuple(self.batch_shape))


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


_KL = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from
    ``type_q``.

    Examples
    --------
    >>> from numbagrad.distributions import Distribution, kl_divergence, register_kl
    >>> class Point(Distribution):
    ...     pass
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return 0.0
    >>> kl_divergence(Point(), Point())
    0.0
    """

    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn

    return decorator


def kl_divergence(p, q):
    """``KL(p || q)``, batched, for the registered pairs: Normal/Normal,
    MultivariateNormal/MultivariateNormal, Bernoulli/Bernoulli, Categorical/Categorical,
    Independent/Independent (and any added with :func:`register_kl`).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions import Categorical, kl_divergence
    >>> p = Categorical(probs=numbagrad.tensor([0.5, 0.5]))
    >>> round(kl_divergence(p, Categorical(probs=numbagrad.tensor([0.9, 0.1]))).item(), 4)
    0.5108
    """
    for (tp, tq), fn in _KL.items():
        if type(p) is tp and type(q) is tq:
            return fn(p, q)
    raise NotImplementedError(
        f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}"
    )


def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - F.log(var_ratio))


def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = F.where(q.probs == 0, math.inf, t1)
    t1 = F.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = F.where(q.probs == 1, math.inf, t2)
    t2 = F.where(p.probs == 1, 0.0, t2)
    return t1 + t2


def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = F.where(q.probs == 0, math.inf, t)
    t = F.where(p.probs == 0, 0.0, t)
    return F.sum(t, -1)


def _kl_mvn_mvn(p, q):
    from numbagrad.linalg import solve_triangular

    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different "
            "event shapes cannot be computed"
        )
    half_term1 = q._half_log_det() - p._half_log_det()
    batch = _batch_shape_of(
        q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_scale_tril.shape[:-2]
    )
    n = p.event_shape[0]
    q_l = F.expand(q._unbroadcasted_scale_tril, (*batch, n, n))
    p_l = F.expand(p._unbroadcasted_scale_tril, (*batch, n, n))
    term2 = F.sum(solve_triangular(q_l, p_l, upper=False) ** 2, (-2, -1))
    term3 = _mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            "KL between Independents with different reinterpreted_batch_ndims is not implemented"
        )
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


_KL[Normal, Normal] = _kl_normal_normal
_KL[Bernoulli, Bernoulli] = _kl_bernoulli_bernoulli
_KL[Categorical, Categorical] = _kl_categorical_categorical
_KL[Independent, Independent] = _kl_independent_independent
_KL[MultivariateNormal, MultivariateNormal] = _kl_mvn_mvn
