"""Zero-copy interop between CUDA tensors and numba device arrays (NOTE [CUDA tensors])."""

from __future__ import annotations

import numpy as np

from numbagrad._tensor import Tensor
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.array import CudaArray, contiguous_strides

__all__ = ["as_cuda_array"]


def as_cuda_array(t: Tensor):
    """A numba device array viewing the memory of CUDA tensor ``t`` (zero copy).

    Works on a GPU and under the CUDA simulator alike (the simulator has no
    ``numba.cuda.as_cuda_array``), so kernels launched on it can be tested in CI. Writing
    into it writes into ``t``: launch kernels on ``as_cuda_array(numbagrad.empty_like(x))``
    to fill a result.

    Parameters
    ----------
    t : Tensor
        A CUDA tensor. Tensors that require grad are accepted (as ``.data``: writes are not
        recorded by autograd, as writes through ``Tensor.numpy()`` are not).

    Returns
    -------
    numba device array
        Of ``t``'s shape, dtype and strides.

    Raises
    ------
    TypeError
        For a CPU tensor (use ``t.cuda()``, or ``t.numpy()`` for host memory).
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"as_cuda_array expects a Tensor, got {type(t).__name__}")
    a = t._data
    if type(a) is np.ndarray or not isinstance(a, CudaArray):
        raise TypeError(
            "as_cuda_array expects a CUDA tensor, got a tensor on 'cpu'; move it "
            "with .cuda() first (or use .numpy() for host memory)"
        )
    if a.size == 0 or a.is_c_contiguous():
        st = contiguous_strides(a.shape)
    else:
        st = a._st
    return _driver.strided_view(a._buf, a._off, a.shape, st, a.dtype)
