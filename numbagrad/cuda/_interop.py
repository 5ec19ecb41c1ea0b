"""Zero-copy interop: CUDA tensors as numba device arrays (NOTE [CUDA tensors]) and DLPack
(NOTE [DLPack]) for CPU and CUDA tensors."""

from __future__ import annotations

import numpy as np

from numbagrad._creation import as_tensor, from_numpy
from numbagrad._tensor import Tensor
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.array import CudaArray, contiguous_strides
from numbagrad.kernels.dlpack import (
    _KDL_CPU,
    _KDL_CUDA,
    _capsule,  # noqa: F401  (the tests build capsules with it)
    device_of,
    export,
)

__all__ = ["as_cuda_array", "dlpack_device", "from_dlpack", "to_dlpack"]


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


def dlpack_device(t: Tensor) -> tuple[int, int]:
    """``Tensor.__dlpack_device__``: ``(1, 0)`` for a CPU tensor, ``(2, index)`` for a CUDA
    one (DLPack's ``kDLCPU`` and ``kDLCUDA``)."""
    return device_of(t._data)


def to_dlpack(t: Tensor, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: a DLPack capsule sharing ``t``'s memory (NOTE [DLPack] in
    ``numbagrad/kernels/dlpack.py``).

    Raises
    ------
    RuntimeError
        If ``t`` requires grad (as PyTorch: export ``t.detach()``).
    BufferError
        For a CUDA tensor under the CUDA simulator, or a ``dl_device`` other than the
        tensor's own.
    """
    if t.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return export(t._data, stream, max_version, dl_device, copy)


def from_dlpack(ext) -> Tensor:
    """A tensor sharing the memory of a DLPack producer (zero copy).

    ``ext`` is an object with ``__dlpack__`` and ``__dlpack_device__``: a NumPy array, a
    PyTorch tensor, a CuPy array, a numbagrad tensor. CPU producers go through
    :func:`numpy.from_dlpack`; CUDA producers are wrapped through their
    ``__cuda_array_interface__`` (PyTorch CUDA tensors and CuPy arrays have one), as
    :func:`numbagrad.as_tensor` does.

    Parameters
    ----------
    ext : object
        The producer.

    Returns
    -------
    Tensor
        On the producer's device, sharing its memory: writes show on both sides.

    Raises
    ------
    NotImplementedError
        For a raw DLPack capsule (PyTorch's legacy form: pass the producer itself), or a CUDA
        producer without ``__cuda_array_interface__``.
    BufferError
        For a device other than the CPU and CUDA.

    Examples
    --------
    >>> import numpy as np, numbagrad
    >>> a = np.arange(3.0)
    >>> t = numbagrad.from_dlpack(a)
    >>> t += 1
    >>> a.tolist()
    [1.0, 2.0, 3.0]
    """
    if isinstance(ext, Tensor):
        return ext.detach()
    if not hasattr(ext, "__dlpack__"):
        if type(ext).__name__ == "PyCapsule":
            raise NotImplementedError(
                "from_dlpack of a raw DLPack capsule is not supported; pass the object that "
                "made it (it has __dlpack__)"
            )
        raise TypeError(f"from_dlpack expects an object with __dlpack__ (got {type(ext).__name__})")
    kind, index = ext.__dlpack_device__()
    if kind == _KDL_CPU:
        return from_numpy(np.from_dlpack(ext))
    if kind == _KDL_CUDA:
        if not hasattr(ext, "__cuda_array_interface__"):
            raise NotImplementedError(
                "from_dlpack of a CUDA producer without __cuda_array_interface__ is not "
                "supported; numbagrad wraps CUDA memory through that interface"
            )

        return as_tensor(ext, device=f"cuda:{index}")
    raise BufferError(
        f"from_dlpack: DLPack device type {kind} is not supported (numbagrad tensors live on "
        "the CPU (1) and CUDA devices (2))"
    )
