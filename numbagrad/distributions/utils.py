"""``torch.distributions.utils``: the helpers the distributions share."""

from __future__ import annotations

import numbers
from functools import update_wrapper

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant


def broadcast_all(*values):
    """Numbers become tensors (of the first tensor's dtype, else the default dtype), then all
    are broadcast together.

    Raises
    ------
    ValueError
        For an argument that is neither a number nor a tensor.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions.utils import broadcast_all
    >>> [tuple(t.shape) for t in broadcast_all(numbagrad.zeros(2, 1), 3.0)]
    [(2, 1), (2, 1)]
    """
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError(
                "Input arguments must all be instances of numbers.Number, "
                f"torch.Tensor or objects implementing __torch_function__, got {type(v).__name__}"
            )
    if tensors:
        dtype = tensors[0].dtype
        dev = _creation._like_device(tensors[0], None)
    else:
        dtype, dev = D.get_default_dtype(), None
    out = [
        v if isinstance(v, Tensor) else _creation.tensor(float(v), dtype=dtype, device=dev)
        for v in values
    ]
    return F.broadcast_tensors(*out)


def _standard_normal(shape, like):
    dev = _creation._like_device(like, None)  # a CUDA parameter: drawn on the device
    return _creation.randn(tuple(shape), dtype=like.dtype, device=dev)


def _uniform(shape, like):
    dev = _creation._like_device(like, None)
    return _creation.rand(tuple(shape), dtype=like.dtype, device=dev)


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return F.sum(F.reshape(value, (*tuple(value.shape[: value.ndim - dim]), -1)), -1)


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` of its dtype.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions.utils import clamp_probs
    >>> bool(clamp_probs(numbagrad.tensor([0.0])) > 0)
    True
    """
    eps = D.finfo(probs.dtype).eps
    return F.clamp(probs, eps, 1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (``is_binary``) or log-probabilities of ``probs`` (clamped).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions.utils import probs_to_logits
    >>> probs_to_logits(numbagrad.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    ps = clamp_probs(probs)
    if is_binary:
        return F.log(ps) - F.log1p(-ps)
    return F.log(ps)


def logits_to_probs(logits, is_binary=False):
    """``sigmoid(logits)`` (``is_binary``) or ``softmax(logits, -1)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions.utils import logits_to_probs
    >>> logits_to_probs(numbagrad.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    if is_binary:
        return F.sigmoid(logits)
    return F.softmax(logits, -1)


class lazy_property:
    """A property computed on first access and then stored on the instance (the
    distributions' ``probs``/``logits`` pairs).

    Examples
    --------
    >>> from numbagrad.distributions.utils import lazy_property
    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         return 42
    >>> A().x
    42
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:  # on the class: a property, as documentation tools expect
            return _LazyPropertyAndProperty(self.wrapped)
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


class _LazyPropertyAndProperty(lazy_property, property):
    """What a ``lazy_property`` is on its class (as PyTorch's): a ``property`` too, so
    ``inspect`` and Sphinx document it as an attribute."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        property.__init__(self, wrapped)


def _tril_mask(n, diag):
    r = _creation.arange(n)
    return F.unsqueeze(r, 1) + (diag + 1) > F.unsqueeze(r, 0)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal ``diag``) of ``mat``, row by row.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions.utils import tril_matrix_to_vec
    >>> tril_matrix_to_vec(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of :func:`tril_matrix_to_vec`: a lower-triangular ``D x D`` matrix.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.distributions.utils import vec_to_tril_matrix
    >>> vec_to_tril_matrix(numbagrad.tensor([1.0, 3.0, 4.0]))
    tensor([[1., 0.],
            [3., 4.]])
    """
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > D.finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mask = F.reshape(_tril_mask(n, diag), (-1,))
    idx = F.cumsum(mask.to(D.int64), 0) - 1
    idx = F.where(mask, idx, _creation.tensor(0))
    flat = F.where(mask, F.index_select(vec, -1, idx), _creation.tensor(0.0, dtype=vec.dtype))
    return F.reshape(flat, (*tuple(vec.shape[:-1]), n, n))
