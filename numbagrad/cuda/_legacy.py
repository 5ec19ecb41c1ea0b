"""The legacy CUDA tensor types of ``torch.cuda`` (``numbagrad.cuda.FloatTensor(2, 3)``,
``isinstance(x, numbagrad.cuda.LongTensor)``), for the dtypes numbagrad has.

They are the CPU legacy types' design (``numbagrad._legacy``) on CUDA: calling one makes a
CUDA tensor of its dtype (uninitialised from sizes, or from data), and ``isinstance`` is
true for CUDA tensors of that dtype only (a CPU tensor is a ``numbagrad.FloatTensor``, not a
``numbagrad.cuda.FloatTensor``). Where CUDA is unavailable, calling one raises PyTorch's
CPU-build TypeError ("type torch.cuda.FloatTensor not available. Torch not compiled with
CUDA enabled.") followed by what numbagrad misses; ``isinstance`` still answers (False).
"""

from __future__ import annotations

from numbagrad import _dtype as D
from numbagrad._legacy import _TensorType
from numbagrad.kernels.cuda import _driver

__all__ = [
    "BoolTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
]


class _CudaTensorType(_TensorType):
    """The metaclass of the legacy CUDA types: ``_TensorType`` making CUDA tensors."""

    def __call__(cls, *args, device=None):  # noqa: N805 (a metaclass: cls is the type)
        if not _driver.is_available():
            why = (
                "numba-cuda sees no CUDA GPU"
                if _driver.installed()
                else "the numba-cuda package is not installed"
            )
            raise TypeError(
                f"type torch.cuda.{cls.__name__} not available. Torch not compiled with CUDA "
                f"enabled. (numbagrad: {why}; numbagrad.cuda.is_available() is False)"
            )
        return super().__call__(*args, device="cuda" if device is None else device)

    def __repr__(cls):  # noqa: N805
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _legacy(name, dtype):
    doc = (
        f"Legacy constructor of {dtype} CUDA tensors: ``{name}(*sizes)`` uninitialised, "
        f"``{name}(data)`` from data; ``isinstance(x, {name})`` tests for a CUDA tensor of "
        "that dtype. Calling it without CUDA raises TypeError."
    )
    return _CudaTensorType(
        name, (), {"dtype": dtype, "is_cuda": True, "__doc__": doc, "__module__": "numbagrad.cuda"}
    )


FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
HalfTensor = _legacy("HalfTensor", D.float16)
LongTensor = _legacy("LongTensor", D.int64)
IntTensor = _legacy("IntTensor", D.int32)
BoolTensor = _legacy("BoolTensor", D.bool)
FloatTensor.__doc__ += """

Examples
--------
>>> import numbagrad
>>> isinstance(numbagrad.ones(2), numbagrad.cuda.FloatTensor)  # a CPU tensor
False
>>> if numbagrad.cuda.is_available():
...     x = numbagrad.cuda.FloatTensor([1, 2])
...     assert x.is_cuda and isinstance(x, numbagrad.cuda.FloatTensor)
"""
