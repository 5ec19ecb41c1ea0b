"""Gradient clipping and parameter/vector conversion (PyTorch's ``torch.nn.utils``)."""

from __future__ import annotations

import math

from numbagrad import ops as _ops
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import tensor as _tensor
from numbagrad._tensor import Tensor

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
]


def _as_list(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _vector_norm(t, p):
    """The ``p``-norm of all elements (``inf``: the largest magnitude)."""
    a = _ops.abs(t.reshape(-1))
    if a.numel() == 0:
        return a.sum()  # 0 for every order, as PyTorch's vector_norm of an empty tensor
    if p == math.inf:
        return a.amax()
    if p == -math.inf:
        return a.amin()
    if p == 0:
        return (a != 0).to(t.dtype).sum()
    if p == 1:
        return a.sum()
    if p == 2:
        return _ops.sqrt((a * a).sum())
    return (a**p).sum() ** (1.0 / p)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their joint ``norm_type``-norm is at most
    ``max_norm``.

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``, as PyTorch's.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` is clipped (those without a gradient are skipped).
    max_norm : float
    norm_type : float, default 2.0
        ``inf`` for the largest magnitude.
    error_if_nonfinite : bool, default False
        Raise if the total norm is NaN or infinite.
    foreach : bool or None
        PyTorch's choice of kernel; the result is the same either way.

    Returns
    -------
    Tensor
        The total norm of the gradients before clipping (a 0-d tensor).

    Examples
    --------
    >>> import numbagrad
    >>> p = numbagrad.nn.Parameter(numbagrad.zeros(2))
    >>> p.grad = numbagrad.tensor([3.0, 4.0])
    >>> numbagrad.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> [round(v, 4) for v in p.grad.tolist()]
    [0.6, 0.8]
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return _tensor(0.0)
    with no_grad():
        norms = [_vector_norm(g, norm_type) for g in grads]
        total = _vector_norm(_ops.stack([n.to(norms[0].dtype) for n in norms]), norm_type)
        if error_if_nonfinite and not math.isfinite(float(total)):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        coef = _ops.clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to ``[-clip_value, clip_value]``.

    Examples
    --------
    >>> import numbagrad
    >>> p = numbagrad.nn.Parameter(numbagrad.zeros(2))
    >>> p.grad = numbagrad.tensor([-3.0, 0.5])
    >>> numbagrad.nn.utils.clip_grad_value_(p, 1.0)
    >>> p.grad
    tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """Concatenate the parameters, flattened, into one 1-D tensor.

    Examples
    --------
    >>> import numbagrad
    >>> lin = numbagrad.nn.Linear(3, 2)
    >>> numbagrad.nn.utils.parameters_to_vector(lin.parameters()).shape
    numbagrad.Size([8])
    """
    return _ops.cat([p.reshape(-1) for p in _as_list(parameters)])


def vector_to_parameters(vec, parameters):
    """Make the parameters views of consecutive slices of ``vec`` (their ``.data`` is
    replaced, as PyTorch does, so they share ``vec``'s memory).

    Examples
    --------
    >>> import numbagrad
    >>> lin = numbagrad.nn.Linear(2, 1)
    >>> numbagrad.nn.utils.vector_to_parameters(numbagrad.arange(3.0), lin.parameters())
    >>> lin.weight.tolist(), lin.bias.tolist()
    ([[0.0, 1.0]], [2.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = _as_list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise RuntimeError(
            f"vector_to_parameters(): vec has {vec.numel()} elements in shape "
            f"{list(vec.shape)}; the parameters need a 1-D tensor of {total}"
        )
    pointer = 0
    for p in params:
        n = p.numel()
        p.data = vec[pointer : pointer + n].view(tuple(p.shape)).data
        pointer += n


# the submodules scripts import from (``torch.nn.utils.rnn``), loaded with the package
from numbagrad.nn.utils import parametrizations, parametrize, rnn  # noqa: E402, F401
