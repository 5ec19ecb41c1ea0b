"""PyTorch's deprecated top-level norms, kept for the scripts that call them:
each warns as PyTorch does and is the ``numbagrad.linalg`` norm it names."""

from __future__ import annotations

import warnings

from numbagrad import linalg as _linalg

__all__ = ["frobenius_norm", "nuclear_norm"]


def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm over at most two ``dim`` (deprecated in PyTorch, with its warning: use
    ``linalg.vector_norm(input, 2, dim, keepdim)``).

    Examples
    --------
    >>> import warnings, numbagrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     numbagrad.frobenius_norm(numbagrad.ones(2, 2), (0, 1))
    tensor(2.)
    """
    warnings.warn(
        "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will "
        "be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, "
        "keepdim)` instead",
        UserWarning,
        stacklevel=2,
    )
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(
            f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead."
        )
    return _linalg.vector_norm(input, 2, dims, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of the singular values of the matrices over ``dim`` (the last two by
    default; deprecated in PyTorch, with its warning: use ``linalg.matrix_norm(input,
    'nuc', dim, keepdim)``). ``nuclear_norm(input, keepdim)`` works too, as PyTorch's.

    Examples
    --------
    >>> import warnings, numbagrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     numbagrad.nuclear_norm(numbagrad.eye(2))
    tensor(2.)
    """
    warnings.warn(
        "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will "
        "be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', "
        "dim, keepdim)` instead",
        UserWarning,
        stacklevel=2,
    )
    if isinstance(dim, bool):  # the overload nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return _linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)
