"""The base class :class:`Distribution` (``torch.distributions.distribution``)."""

from __future__ import annotations

import warnings

from numbagrad import ops as F
from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Size, Tensor
from numbagrad._transforms.tracer import all_true
from numbagrad.distributions import constraints
from numbagrad.distributions.utils import broadcast_all, clamp_probs, lazy_property

__all__ = ["Distribution"]


_NO_SHAPE = Size()

# (the names the distributions' modules imported before ``utils`` existed)
_broadcast_all = broadcast_all
_clamp_probs = clamp_probs


def _describe(value):
    """A parameter in ``repr``: its value when it has one element (a 0-d tensor formats as
    its number, as PyTorch's), else its size."""
    if value.numel() != 1:
        return value.size()
    return value.item() if value.ndim == 0 else value


def _all_true(valid):
    return all_true(valid)  # (over every vmap example: PyTorch's _is_all_true)


class Distribution:
    """Base class: ``batch_shape``, ``event_shape``, ``sample``/``rsample`` of a
    ``sample_shape``, ``log_prob``, ``entropy``, ``mean``, ``mode``, ``variance``,
    ``stddev``, ``expand``, and argument validation (``validate_args``; on by default, as
    in PyTorch under ``__debug__``: parameters are checked against ``arg_constraints`` and
    ``log_prob``'s values against ``support``).

    Examples
    --------
    >>> from numbagrad.distributions import Normal
    >>> Normal(0.0, 1.0).sample((3,)).shape
    numbagrad.Size([3])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for distributions made without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=_NO_SHAPE, event_shape=_NO_SHAPE, validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the distribution "
                    "with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the batch dimensions expanded to ``batch_shape``
        (parameters are broadcast views, not copies)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint of each parameter, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

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

    def sample_n(self, n):
        warnings.warn(
            "sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2
        )
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return F.exp(self.entropy())

    def _extended_shape(self, sample_shape=_NO_SHAPE):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        event = tuple(self._event_shape)
        event_dim_start = len(shape) - len(event)
        if shape[event_dim_start:] != event:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.shape} vs {self._event_shape}."
            )
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{value.shape} vs {Size(expected)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
        names = [k for k in arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {_describe(self.__dict__[p])}" for p in names)
        return self.__class__.__name__ + "(" + args + ")"
