"""DLPack export of arrays (NOTE [DLPack]): NumPy's own for host arrays, a ctypes-built
``"dltensor"`` capsule for CUDA arrays. Arrays in, capsules out: no Tensor here (the
Tensor methods and ``numbagrad.from_dlpack`` are in ``numbagrad/_tensor.py`` and
``numbagrad/cuda/_interop.py``)."""

from __future__ import annotations

import ctypes

import numpy as np

from numbagrad.kernels.cuda import _driver

__all__ = ["device_of", "export"]


# NOTE [DLPack]
# ``Tensor.__dlpack__`` of a CPU tensor is NumPy's (the storage is a NumPy array). A CUDA
# tensor's capsule is built here with ctypes, as the DLPack project's own NumPy example does
# (dmlc/dlpack ``apps/numpy_dlpack``): a ``DLManagedTensor`` pointing at the device memory of
# the tensor's view (its ``__cuda_array_interface__`` pointer, shape and element strides) in
# a ``"dltensor"`` PyCapsule. The struct, its shape and strides arrays and the tensor's
# storage stay referenced in ``_LIVE`` until the consumer calls the deleter (or the capsule
# is freed unconsumed). numba-cuda's device arrays have no ``__dlpack__`` of their own, and
# the CUDA simulator's have no device pointer, so the CUDA export runs on a GPU only; the
# capsule builder itself is device-agnostic and is tested on host memory (a kDLCPU capsule
# consumed by NumPy and PyTorch), which checks the struct layout and the deleter.
# ``from_dlpack`` takes CPU producers through ``numpy.from_dlpack`` (zero copy) and CUDA
# producers (PyTorch CUDA tensors, CuPy arrays) through their ``__cuda_array_interface__``
# (zero copy, as ``numbagrad.as_tensor``).
_KDL_CPU, _KDL_CUDA = 1, 2
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # DLDataTypeCode (kDLBool is 6)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _Deleter),
]

# address of a live DLManagedTensor -> (struct, shape, strides, owner) (NOTE [DLPack])
_LIVE: dict = {}
_NAME = b"dltensor"  # a module constant: the capsule keeps a pointer to it

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_Deleter
def _deleter(managed):
    """The consumer is done with the tensor: release what kept its memory alive."""
    _LIVE.pop(ctypes.addressof(managed.contents), None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # a capsule still named "dltensor" was never consumed (a consumer renames it
    # "used_dltensor" and calls the deleter itself): free its tensor here
    if _capsule_is_valid(capsule, _NAME):
        _LIVE.pop(_capsule_pointer(capsule, _NAME), None)


def _capsule(ptr, device, shape, strides, dtype, owner):
    """A ``"dltensor"`` capsule over memory at ``ptr`` on DLPack ``device`` (type, id), of
    ``shape`` and element ``strides``, keeping ``owner`` alive until the deleter runs."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _DL_CODES:
        raise BufferError(f"DLPack cannot describe {dtype} data")
    n = len(shape)
    shp = (ctypes.c_int64 * max(n, 1))(*shape)
    st = (ctypes.c_int64 * max(n, 1))(*strides)
    m = _DLManagedTensor()
    m.dl_tensor.data = ptr
    m.dl_tensor.device = _DLDevice(*device)
    m.dl_tensor.ndim = n
    m.dl_tensor.dtype = _DLDataType(_DL_CODES[dtype.kind], dtype.itemsize * 8, 1)
    m.dl_tensor.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.strides = ctypes.cast(st, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.byte_offset = 0
    m.manager_ctx = None
    m.deleter = _deleter
    addr = ctypes.addressof(m)
    _LIVE[addr] = (m, shp, st, owner)
    return _capsule_new(addr, _NAME, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def device_of(a) -> tuple[int, int]:
    """``(device type, index)`` of array ``a`` as DLPack counts them: ``(1, 0)`` for a
    NumPy array, ``(2, index)`` for a CUDA array (``kDLCPU`` and ``kDLCUDA``)."""
    if type(a) is np.ndarray:
        return (_KDL_CPU, 0)
    return (_KDL_CUDA, int(a.device_index))


def export(a, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule sharing the memory of array ``a`` (NOTE [DLPack]): NumPy's own for a
    NumPy array, one built here for a CUDA array.

    Raises
    ------
    BufferError
        For a CUDA array under the CUDA simulator (no device pointer to share), or a
        ``dl_device`` other than the array's own.
    """
    if type(a) is np.ndarray:
        return a.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    here = device_of(a)
    if dl_device is not None and tuple(dl_device) != here:
        raise BufferError(
            f"__dlpack__: a CUDA tensor cannot be exported to DLPack device {tuple(dl_device)}; "
            "move it with .cpu() first"
        )
    if copy:
        a = a.copy()
    if _driver.simulator():
        raise BufferError(
            "__dlpack__ of a CUDA tensor needs a GPU: the CUDA simulator's arrays have no "
            "device pointer (use numbagrad.cuda.as_cuda_array under the simulator)"
        )
    if stream is not None and stream != -1:
        _driver.synchronize()  # numbagrad's kernels are done before the consumer's stream reads
    ptr = a.__cuda_array_interface__["data"][0]
    return _capsule(ptr, here, a.shape, a._st, a.dtype, owner=a)
