"""Shared helpers for op declarations: argument checks, dims, flat views for kernels."""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad._creation import tensor
from numbagrad._tensor import Tensor, _wrap_dim

__all__ = ["MinMax", "as_tensor_arg", "default_float", "norm_dims", "wrap_dim"]

wrap_dim = _wrap_dim


def default_float() -> np.dtype:
    return D.get_default_dtype().np


def as_tensor_arg(x, name: str = "input") -> Tensor:
    """Accept a Tensor (or array-like) where an op needs a tensor; TypeError otherwise."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, list, tuple, int, float, bool, np.number)):
        return tensor(x)
    raise TypeError(f"{name} must be a Tensor, got {type(x).__name__}")


def norm_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, int, or sequence) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (_wrap_dim(int(dim), ndim),)
    dims = tuple(sorted(_wrap_dim(int(d), ndim) for d in dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {tuple(dim)} appears multiple times in the list of dims")
    return dims


class MinMax(tuple):
    """``(values, indices)`` as returned by ``max``/``min``/``sort``/``topk`` with a dim."""

    __slots__ = ()

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]
