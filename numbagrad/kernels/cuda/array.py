"""``CudaArray``: a strided view of a flat device array, the ``_data`` of CUDA tensors.

NOTE [CUDA storage]
A CUDA tensor's storage is one flat numba device array; its ``_data`` is a ``CudaArray``:
that buffer plus an element offset, a shape and element strides, exactly the NumPy view
model of NOTE [Storage and views]. Views (``reshape``, ``transpose``, ``broadcast_to``,
basic ``__getitem__``) are new ``CudaArray`` objects over the same buffer whose ``base`` is
the root array that allocated it (``base`` is None on the root), so ``wrap_output`` and the
engine recognise views as they do NumPy's. Kernels receive the flat buffer with offset,
shape and strides (NOTE [CUDA elementwise kernels]). Reading values on the host (``item``,
``tolist``, printing) copies through ``_driver.to_host``; ``__array__`` refuses, as
PyTorch's ``.numpy()`` does, so no copy happens behind the user's back.

NOTE [CUDA array protocol]
``CudaArray`` is a plain strided view: metadata, views, basic indexing and host reads of
contiguous data, with no kernel behind any of its methods and no import of the backend
(``tests/test_layers.py`` checks that this module reaches no backend module). What needs
a kernel (copies and casts, arithmetic operators, NumPy's ufunc and function protocols,
reductions, advanced indexing, a reshape that must copy, the host read of a strided
view) is the backend's: the arrays the CUDA backend allocates are its subclass
``backend.CudaNDArray``, whose NumPy methods each call one backend method (ops written for
NumPy arrays, ``x.astype(dt)``, ``a + b``, run unchanged on CUDA tensors' data). Only the
backend makes arrays (``CUDA.empty``, ``CUDA.from_host``, ``CUDA.from_device_array``);
views keep their array's class.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from numbagrad.kernels.cuda import _driver

__all__ = [
    "CudaArray",
    "advanced_key",
    "contiguous_strides",
    "device_mismatch",
    "resolve_shape",
    "view_strides",
]


def _unsupported(what):
    return NotImplementedError(
        f"{what} is not implemented for CUDA tensors yet; move the tensor to the CPU with .cpu()"
    )


def contiguous_strides(shape):
    """Row-major element strides of ``shape``."""
    st = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        st[i] = acc
        acc *= max(shape[i], 1)
    return tuple(st)


def device_mismatch(a="cuda:0", b="cpu"):
    """PyTorch's error for operands on two devices."""
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two "
        f"devices, {a} and {b}!"
    )


class _Flags:
    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c):
        self.c_contiguous = c
        self.writeable = True


def view_strides(oldshape, oldstride, newshape):
    """Strides that let ``newshape`` view an array of ``oldshape``/``oldstride`` without a
    copy, or None (PyTorch's ``computeStride``)."""
    numel = math.prod(oldshape)
    if numel <= 1 or not oldshape:
        return contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for td in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[td]
        if td == 0 or (oldshape[td - 1] != 1 and oldstride[td - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk = oldstride[td - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


class CudaArray:
    """A strided view (shape, element strides, offset) of a flat device array
    (NOTE [CUDA storage]). Internal: users see CUDA tensors."""

    __slots__ = ("_buf", "_off", "_st", "base", "device_index", "dtype", "shape")
    _numbagrad_device = True
    __array_priority__ = 2000

    def __init__(self, buf, off, shape, st, dtype, base=None, device_index=0):
        self._buf = buf
        self._off = int(off)
        self.shape = tuple(int(s) for s in shape)
        self._st = tuple(int(s) for s in st)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind == "c":  # (the kernels are real-valued: docs/gpu.rst)
            raise NotImplementedError(
                "complex tensors on CUDA: numbagrad's CUDA kernels are real-valued; keep "
                "complex64/complex128 tensors (and numbagrad.fft) on the CPU"
            )
        self.base = base
        self.device_index = device_index

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def empty(cls, shape, dtype, device_index=0):
        """An uninitialised device array (``cls``: the backend's ``CudaNDArray``)."""
        shape = tuple(int(s) for s in shape)
        n = math.prod(shape)
        buf = _driver.device_array(max(n, 1), dtype)
        return cls(buf, 0, shape, contiguous_strides(shape), dtype, None, device_index)

    @classmethod
    def from_host(cls, host, device_index=0):
        """A copy of host array ``host`` on the device."""
        host = np.asarray(host)
        flat = np.ascontiguousarray(host).reshape(-1)
        buf = _driver.to_device(flat if flat.size else np.zeros(1, host.dtype))
        return cls(
            buf, 0, host.shape, contiguous_strides(host.shape), host.dtype, None, device_index
        )

    @classmethod
    def from_device_array(cls, obj, device_index=0):
        """A zero-copy ``CudaArray`` over the C-contiguous device array ``obj`` (numba's,
        the simulator's, or anything with ``__cuda_array_interface__``)."""
        dev = _driver.as_device_array(obj)
        if not dev.is_c_contiguous():
            raise ValueError(
                "as_tensor(device array): only C-contiguous device arrays can be "
                "wrapped without a copy"
            )
        shape = tuple(dev.shape)
        flat = dev.reshape(-1) if dev.ndim != 1 else dev
        return cls(flat, 0, shape, contiguous_strides(shape), dev.dtype, None, device_index)

    def _view(self, shape, st, off=None):
        root = self if self.base is None else self.base
        return type(self)(
            self._buf,
            self._off if off is None else off,
            shape,
            st,
            self.dtype,
            root,
            self.device_index,
        )

    # -- metadata ----------------------------------------------------------------------------
    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        """Strides in bytes, as NumPy's."""
        return tuple(s * self.dtype.itemsize for s in self._st)

    @property
    def flags(self):
        return _Flags(self.is_c_contiguous())

    def is_c_contiguous(self):
        if self.size <= 1:
            return True
        return all(
            s == c
            for s, c, n in zip(self._st, contiguous_strides(self.shape), self.shape)
            if n != 1
        )

    @property
    def T(self):  # noqa: N802  (NumPy's name)
        return self.transpose()

    @property
    def __cuda_array_interface__(self):
        """The CUDA Array Interface (version 3) of this view (a real GPU only: the
        simulator's arrays have none)."""
        base = self._buf.__cuda_array_interface__
        ptr = base["data"][0] + self._off * self.dtype.itemsize
        return {
            "shape": self.shape,
            "strides": self.strides,
            "typestr": self.dtype.str,
            "data": (ptr, False),
            "version": 3,
            "stream": None,
        }

    def __repr__(self):
        return f"CudaArray(shape={self.shape}, dtype={self.dtype}, device=cuda:{self.device_index})"

    # -- views -------------------------------------------------------------------------------
    def reshape(self, *shape, copy=None):
        """A view of the new shape; ValueError where that needs a copy (the backend's
        ``CudaNDArray.reshape`` copies there, as NumPy's)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = resolve_shape(shape, self.size)
        st = None if copy else view_strides(self.shape, self._st, shape)
        if st is None:
            raise ValueError("cannot reshape this CUDA array without copying")
        return self._view(shape, st)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(range(self.ndim - 1, -1, -1))
        axes = tuple(a % self.ndim for a in axes) if self.ndim else ()
        return self._view(tuple(self.shape[a] for a in axes), tuple(self._st[a] for a in axes))

    def broadcast_to(self, shape):
        shape = tuple(int(s) for s in shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"cannot broadcast shape {self.shape} to {shape}")
        st = [0] * lead
        for i, (s, t) in enumerate(zip(self.shape, self._st)):
            n = shape[lead + i]
            if s == n:
                st.append(t)
            elif s == 1:
                st.append(0)
            else:
                raise ValueError(f"cannot broadcast shape {self.shape} to {shape}")
        return self._view(shape, tuple(st))

    def __getitem__(self, key):
        """Basic indexing: a view (index arrays are the backend's, NOTE [CUDA advanced
        indexing])."""
        shape, st, off = _basic_index(self, key)
        return self._view(shape, st, off)

    def view(self, dtype):
        """NumPy's ``view(dtype)`` for a dtype of the same item size (bool as uint8): the
        same device memory, reinterpreted."""
        dtype = np.dtype(dtype)
        if dtype.itemsize != self.dtype.itemsize:
            raise ValueError(
                f"view of a CUDA array: {dtype} has not the item size of {self.dtype} "
                f"({dtype.itemsize} != {self.dtype.itemsize} bytes)"
            )
        root = self if self.base is None else self.base
        buf = self._buf.view(dtype)
        return type(self)(buf, self._off, self.shape, self._st, dtype, root, self.device_index)

    @property
    def offset(self):
        """The first element's offset, in elements, in the flat device buffer."""
        return self._off

    def as_strided(self, shape, strides, offset=0):
        """A view of this contiguous array's elements with element ``strides``, starting at
        element ``offset`` (``np.lib.stride_tricks.as_strided`` in elements); every element
        it can reach must lie inside the array (checked: kernels do no bounds checks)."""
        shape, strides = tuple(int(n) for n in shape), tuple(int(s) for s in strides)
        if not self.is_c_contiguous() or len(shape) != len(strides):
            raise ValueError("as_strided: a contiguous array and one stride per dim expected")
        if any(n < 0 for n in shape):
            raise ValueError(f"as_strided: negative size in shape {shape}")
        if 0 not in shape:
            lo = offset + sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
            hi = offset + sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0)
            if lo < 0 or hi >= self.size:
                raise ValueError(
                    f"as_strided: shape {shape}, strides {strides} and offset {offset} reach "
                    f"outside the {self.size} elements of the array"
                )
        return self._view(shape, strides, self._off + offset)

    def setflags(self, write=None, align=None, uic=None):
        """NumPy's ``setflags``: a CUDA array is always writeable (views included), so only
        ``write=True`` (or nothing) is accepted."""
        if write is False or align is not None or uic is not None:
            raise NotImplementedError("CUDA arrays are always writeable and aligned")

    # -- host reads ------------------------------------------------------------------------
    def to_host(self) -> np.ndarray:
        """A host copy (NumPy array) of this view (one counted device->host copy); a strided
        view is copied on the device first, by the backend (``CudaNDArray.to_host``)."""
        if not self.size:
            return np.empty(self.shape, self.dtype)
        if not self.is_c_contiguous():
            raise _unsupported("the host read of a strided plain CudaArray")
        flat = _driver.to_host(self._buf[self._off : self._off + self.size])
        return flat.reshape(self.shape)

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.to_host().reshape(()).item()

    def tolist(self):
        return self.to_host().tolist()

    def __bool__(self):
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"can't convert cuda:{self.device_index} device type tensor to numpy. "
            "Use Tensor.cpu() to copy the tensor to host memory first."
        )


def advanced_key(key):
    """Whether an indexing key holds index arrays (NumPy's advanced indexing)."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (CudaArray, np.ndarray, list)) for k in keys)


def resolve_shape(shape, numel):
    """``shape`` with a -1 resolved for ``numel`` elements; ValueError as NumPy's."""
    shape = tuple(operator.index(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise ValueError(f"cannot reshape array of size {numel} into shape {shape}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise ValueError(f"cannot reshape array of size {numel} into shape {shape}")
    return shape


def _basic_index(a, key):
    """Shape, strides and offset of ``a[key]`` for a basic key (ints, slices, None,
    Ellipsis); advanced keys raise NotImplementedError."""
    if not isinstance(key, tuple):
        key = (key,)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (a.ndim - n_real) + key[i + 1 :]
    if n_real > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim}")
    key = key + (slice(None),) * (a.ndim - sum(1 for k in key if k is not None))
    shape, st, off, d = [], [], a._off, 0
    for k in key:
        if k is None:
            shape.append(1)
            st.append(0)
            continue
        if isinstance(k, slice):
            start, stop, step = k.indices(a.shape[d])
            shape.append(len(range(start, stop, step)))
            st.append(a._st[d] * step)
            off += start * a._st[d]
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            i = int(k)
            if not -a.shape[d] <= i < a.shape[d]:
                raise IndexError(
                    f"index {i} is out of bounds for dimension {d} with size {a.shape[d]}"
                )
            off += (i % a.shape[d]) * a._st[d]
        else:
            raise NotImplementedError(
                "indexing CUDA tensors with tensors, lists or bools (advanced indexing) is "
                "not implemented yet; move the tensor to the CPU with .cpu()"
            )
        d += 1
    return tuple(shape), tuple(st), off
