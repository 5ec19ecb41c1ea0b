"""Helpers the CUDA backend's families share (``backend.py`` and ``backend_*.py``): operand
metadata for the kernels, stride coalescing and broadcasting, NumPy's result dtypes."""

from __future__ import annotations

import numpy as np

from numbagrad.kernels.cpu.backend import _UFUNCS
from numbagrad.kernels.cuda.array import CudaArray, _unsupported, device_mismatch

__all__ = ["_as_operand", "_bcast_st", "_coalesce", "_meta", "_result_dtype", "_unsupported"]


def _meta(a):
    """``(shape, strides)`` tuples a kernel takes; a 0-d array as shape ``(1,)``."""
    if a.ndim == 0:
        return (1,), (0,)
    return a.shape, a._st


def _coalesce(shape, *sts):
    """``shape`` and the operands' strides ``sts`` with adjacent dims merged where every
    operand steps through them as through one dim, and size-1 dims dropped (NumPy's
    iterator coalescing): a contiguous operand of any rank becomes 1-d, so the kernels'
    ``_offset`` does no integer division for it (NOTE [CUDA launches])."""
    if len(shape) <= 1:
        return shape, sts
    keep = [k for k, n in enumerate(shape) if n != 1] or [len(shape) - 1]
    out_shape = [shape[keep[0]]]
    out_sts = [[st[keep[0]]] for st in sts]
    for k in keep[1:]:
        n = shape[k]
        if all(t[-1] == st[k] * n for t, st in zip(out_sts, sts)):
            out_shape[-1] *= n
            for t, st in zip(out_sts, sts):
                t[-1] = st[k]
        else:
            out_shape.append(n)
            for t, st in zip(out_sts, sts):
                t.append(st[k])
    return tuple(out_shape), tuple(tuple(t) for t in out_sts)


def _bcast_st(a, shape):
    """``a``'s element strides broadcast to ``shape`` (stride 0 on broadcast dims)."""
    v = a.broadcast_to(shape)
    return (v._st if v.ndim else (0,)), v._off


def _as_operand(x, other):
    """A binary operand as a ``CudaArray`` or a Python scalar; host arrays other than 0-d
    ones are a device mismatch (as PyTorch, a CPU scalar tensor may join a CUDA op)."""
    if isinstance(x, CudaArray):
        return x
    if isinstance(x, np.ndarray):
        if x.ndim:
            raise device_mismatch(f"cuda:{other.device_index}", "cpu")
        return x[()]
    if isinstance(x, (bool, int, float, np.generic)):
        return x
    raise TypeError(f"unsupported operand for a CUDA op: {type(x).__name__}")


def _result_dtype(name, a, b):
    """The dtype NumPy (and so the CPU backend) gives ``name(a, b)``."""

    def proto(x):
        return np.ones(1, x.dtype) if isinstance(x, CudaArray) else x

    with np.errstate(all="ignore"):
        return np.asarray(_UFUNCS.get(name, getattr(np, name))(proto(a), proto(b))).dtype
