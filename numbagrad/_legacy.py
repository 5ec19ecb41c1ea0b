"""Names older scripts use that only describe a tensor's layout or type: the memory formats
(``numbagrad.preserve_format`` ...) and the legacy typed constructors
(``numbagrad.FloatTensor(2, 3)``, ``isinstance(x, numbagrad.DoubleTensor)``).

numbagrad's CPU tensors are always row-major contiguous, so ``preserve_format`` and
``contiguous_format`` describe the same layout; ``channels_last`` is a different physical
layout numbagrad cannot hold, and asking for it raises ``NotImplementedError``.
"""

from __future__ import annotations

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad._device import device as _device
from numbagrad._dtype import (  # the memory formats live with the dtypes (lowest layer)
    channels_last,
    channels_last_3d,
    check_memory_format,
    contiguous_format,
    memory_format,
    preserve_format,
)
from numbagrad._tensor import Size, Tensor

__all__ = [
    "BoolTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "channels_last",
    "channels_last_3d",
    "check_memory_format",
    "contiguous_format",
    "memory_format",
    "preserve_format",
]


class _TensorType(type):
    """The metaclass of the legacy typed constructors: calling one makes a tensor of its
    dtype, and ``isinstance`` checks a tensor's dtype."""

    def __instancecheck__(cls, obj):
        # a CPU type names CPU tensors only, a ``numbagrad.cuda`` type CUDA ones (PyTorch's)
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda is cls.is_cuda

    def __call__(cls, *args, device=None):
        kind = "cuda" if cls.is_cuda else "cpu"
        if device is not None and _device(device).type != kind:
            raise RuntimeError(
                f"legacy constructor expects device type: {kind} but device type: "
                f"{_device(device).type} was passed"
            )

        if not args:
            return _creation.empty(0, dtype=cls.dtype, device=device)
        if (len(args) == 1 and isinstance(args[0], Size)) or all(
            isinstance(a, int) and not isinstance(a, bool) for a in args
        ):
            size = tuple(args[0]) if isinstance(args[0], Size) else args
            return _creation.empty(size, dtype=cls.dtype, device=device)
        if len(args) > 1:
            raise TypeError(
                f"{cls.__name__}(): expected sizes (ints) or one sequence of data, "
                f"got {len(args)} arguments"
            )
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype is not cls.dtype:
                raise TypeError(
                    f"{cls.__name__}(tensor): expected a tensor of dtype "
                    f"{cls.dtype}, got {data.dtype}; use tensor.to({cls.dtype})"
                )
            if data.is_cuda is not cls.is_cuda:
                raise TypeError(
                    f"{cls!r}(tensor): expected a {kind} tensor, got one on {data.device}; "
                    f"use tensor.to({kind!r})"
                )
            return data
        return _creation.tensor(data, dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy(name, dtype):
    doc = (
        f"Legacy constructor of {dtype} tensors: ``{name}(*sizes)`` uninitialised, "
        f"``{name}(data)`` from data; ``isinstance(x, {name})`` tests the dtype."
    )
    return _TensorType(
        name, (), {"dtype": dtype, "is_cuda": False, "__doc__": doc, "__module__": "numbagrad"}
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
>>> numbagrad.FloatTensor([1, 2]), numbagrad.FloatTensor(2, 3).shape
(tensor([1., 2.]), numbagrad.Size([2, 3]))
>>> isinstance(numbagrad.ones(2), numbagrad.FloatTensor)
True
>>> numbagrad.ones(2).type(numbagrad.DoubleTensor).dtype
numbagrad.float64
"""
