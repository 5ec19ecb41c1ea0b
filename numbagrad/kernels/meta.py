"""The ``meta`` device: tensors with a shape and a dtype and no data.

NOTE [Meta tensors]
PyTorch's ``meta`` tensors carry metadata only; their main use with ``torch.func`` is the
model-ensembling pattern, a stateless copy of a module to call through ``functional_call``
(``base = copy.deepcopy(model).to('meta')``: every parameter and buffer is replaced at the
call, so none is ever read). Here a meta tensor's ``_data`` is a ``MetaArray`` (a shape and
a dtype) owned by ``MetaBackend``. What needs no values works: ``shape``, ``dtype``,
``device``, ``numel``, ``requires_grad``, ``repr``, ``Module.to('meta')``, creation with
``device='meta'``, ``to(dtype)``. Everything that would read or compute values (an op,
``.numpy()``, a copy to another device) raises ``NotImplementedError`` saying so: numbagrad
has no shape-only execution of its ops (PyTorch's meta kernels), so a result there would
have to be made up.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels import register_backend

__all__ = ["MetaArray", "MetaBackend", "no_data"]

_NO_DATA = (
    "{what}: a tensor on the 'meta' device has a shape and a dtype but no data, and "
    "numbagrad runs no op on meta tensors (it has no shape-only kernels); use them as a "
    "stateless module for numbagrad.func.functional_call, which replaces every parameter "
    "and buffer, or make the tensor on 'cpu'"
)


def no_data(what):
    """The error for reading the data of a meta tensor (``what`` did)."""
    return NotImplementedError(_NO_DATA.format(what=what))


class MetaArray:
    """The ``_data`` of a meta tensor: the shape and dtype of an array that does not exist.
    Any attribute an ndarray has and this one does not raises ``no_data``."""

    __slots__ = ("dtype", "shape")
    _numbagrad_meta = True
    _numbagrad_device = False

    def __init__(self, shape, dtype):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        """The strides (bytes) of a C-contiguous array of this shape."""
        out, acc = [], self.dtype.itemsize
        for n in reversed(self.shape):
            out.append(acc)
            acc *= max(n, 1)
        return tuple(reversed(out))

    @property
    def base(self):
        return None

    def astype(self, dtype, copy=True):
        return MetaArray(self.shape, dtype)

    def copy(self):
        return MetaArray(self.shape, self.dtype)

    def __array__(self, *args, **kwargs):
        raise no_data("converting to a NumPy array")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __getattr__(self, name):
        if name.startswith("__"):  # (protocol probes: NumPy's array interface...)
            raise AttributeError(name)
        raise no_data(f"reading the data of a meta tensor ({name!r})")

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


class _RaisingBackend(type):
    """Any backend method looked up on ``MetaBackend`` raises ``no_data``: an op on meta
    tensors reaches its backend first."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise no_data(f"an operation on meta tensors (backend {name!r})")


class MetaBackend(metaclass=_RaisingBackend):
    """The backend of meta tensors (NOTE [Meta tensors]): it owns ``MetaArray`` and runs
    nothing."""

    name = "meta"

    @staticmethod
    def owns(array) -> bool:
        return type(array) is MetaArray


register_backend("meta", MetaBackend)
