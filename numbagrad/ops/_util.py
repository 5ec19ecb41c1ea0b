"""Shared helpers for op declarations: argument checks, dims, flat views for kernels."""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad._tensor import Tensor, _wrap_dim

__all__ = ["as_tensor_arg", "default_float", "flat", "flat_g", "norm_dims", "wrap_dim"]

wrap_dim = _wrap_dim


def default_float() -> np.dtype:
    return D.get_default_dtype().np


def as_tensor_arg(x, name: str = "input") -> Tensor:
    """Accept a Tensor (or array-like) where an op needs a tensor; TypeError otherwise."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, list, tuple, int, float, bool, np.number)):
        from numbagrad._creation import tensor

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


def flat(a: np.ndarray) -> np.ndarray:
    """A flat view of C-contiguous ``a`` (NumPy copies only when ``a`` is not contiguous)."""
    return a.reshape(-1)


def flat_g(g: np.ndarray) -> np.ndarray:
    """A gradient as the kernels take it: flat, or length 1 when it is a broadcast scalar
    (what ``sum().backward()`` sends; see NOTE [Elementwise kernel conventions])."""
    st = g.strides
    if st and not any(st) and g.size > 1:
        return np.array([g.flat[0]], dtype=g.dtype)
    return g.reshape(-1)
