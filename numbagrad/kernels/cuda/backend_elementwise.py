"""The CUDA backend's elementwise family (a mixin of ``backend.CudaBackend``, NOTE
[Backends]): maps, broadcasting binary ops, ``where``, copies, casts and fills, the fused
unary gradients, the index range check and the engine's gradient sums: the kernels of
``elementwise.py``.

The methods reach the backend's other methods through ``self`` (the one ``CUDA`` object),
so a family calls another without importing it."""

from __future__ import annotations

import numpy as np

from numbagrad.kernels import module
from numbagrad.kernels.cuda.array import (
    CudaArray,
    contiguous_strides,
    device_mismatch,
    resolve_shape,
    view_strides,
)
from numbagrad.kernels.cuda.backend_common import (
    _as_operand,
    _bcast_st,
    _coalesce,
    _meta,
    _result_dtype,
    _unsupported,
)
from numbagrad.kernels.cuda.launch import launch

__all__ = ["ElementwiseMethods"]

K = module("elementwise", "cuda")


class ElementwiseMethods:
    """The elementwise methods of ``CudaBackend``."""

    # -- elementwise -----------------------------------------------------------------------
    def map(self, name, x):
        """The elementwise map ``name`` of CUDA array ``x``."""
        op = K.UNARY.get(name)
        if op is None:
            raise _unsupported(name)
        if x.dtype.kind not in "fc" and name not in (
            "isfinite",
            "isnan",
            "isinf",
            "logical_not",
            "signbit",
            "negative",
            "abs",
            "square",
            "sign",
        ):
            # PyTorch promotes integer inputs of float maps to the default float
            dt = np.dtype(np.float32)
        elif name in ("isfinite", "isnan", "isinf", "logical_not", "signbit"):
            dt = np.dtype(bool)
        else:
            dt = x.dtype
        if dt.kind == "c" or x.dtype.kind == "c":
            raise _unsupported(f"{name} of complex tensors")
        out = self.empty(x.shape, dt)
        shape, (st,) = _coalesce(*_meta(x))
        launch(K.map_kernel, x.size, op, x.size, x._buf, x._off, shape, st, out._buf)
        return out

    def binary(self, name, a, b):
        """The broadcasting binary op ``name`` (the CPU backend's ufunc names)."""
        dev = a if isinstance(a, CudaArray) else b
        if name.startswith("bitwise_") and all(
            isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_ for x in (a, b)
        ):
            name = "logical_" + name[8:]  # on bools the bitwise ops are the logical ones
        op = K.BINARY.get(name)
        if op is None:
            if name == "remainder":  # fmod and a sign fix (``_XP.remainder``)
                return self.xp.remainder(_as_operand(a, dev), _as_operand(b, dev))
            if name == "nextafter":  # special.py
                return self.special_binary(name, a, b)
            raise _unsupported(name)
        a = _as_operand(a, dev)
        b = _as_operand(b, dev)
        dt = _result_dtype(name, a, b)
        if isinstance(a, CudaArray) and isinstance(b, CudaArray):
            shape = np.broadcast_shapes(a.shape, b.shape)
            out = self.empty(shape, dt)
            ast, aoff = _bcast_st(a, shape)
            bst, boff = _bcast_st(b, shape)
            shape, (ast, bst) = _coalesce(shape or (1,), ast, bst)
            launch(
                K.binary_kernel,
                out.size,
                op,
                out.size,
                a._buf,
                aoff,
                ast,
                b._buf,
                boff,
                bst,
                shape or (1,),
                out._buf,
            )
            return out
        arr, s, right = (a, b, True) if isinstance(a, CudaArray) else (b, a, False)
        out = self.empty(arr.shape, dt)
        shape, (st,) = _coalesce(*_meta(arr))
        launch(
            K.binary_scalar_kernel,
            out.size,
            op,
            out.size,
            arr._buf,
            arr._off,
            st,
            float(s),
            right,
            shape,
            out._buf,
        )
        return out

    def binary_into(self, name, dst, other):
        """``dst = name(dst, other)`` in place."""
        self.copy_into(dst, self.binary(name, dst, other))

    def copy_into(self, dst, src):
        """Copy (broadcast, cast) ``src``, a CUDA array or a scalar, into CUDA array ``dst``."""
        if dst.size == 0:
            return
        shape, dst_st = _meta(dst)
        if isinstance(src, np.ndarray) and src.ndim == 0:
            src = src[()]
        if isinstance(src, CudaArray):
            sst, soff = _bcast_st(src, dst.shape)
            shape, (sst, dst_st) = _coalesce(shape, sst if sst else (0,), dst_st)
            launch(
                K.copy_kernel,
                dst.size,
                dst.size,
                src._buf,
                soff,
                sst,
                shape,
                dst._buf,
                dst._off,
                dst_st,
            )
        elif isinstance(src, (bool, int, float, np.generic)):
            launch(
                K.fill_kernel,
                dst.size,
                dst.size,
                dst._buf,
                dst._off,
                shape,
                dst_st,
                dst.dtype.type(src),
            )
        else:
            raise device_mismatch(f"cuda:{dst.device_index}", "cpu")

    def multiply(self, a, b):
        return self.binary("multiply", a, b)

    def divide(self, a, b):
        return self.binary("true_divide", a, b)

    def outer(self, a, b):
        """``out[..., i, j] = a[..., i] * b[..., j]`` (``Outer``): a broadcasting product."""
        return self.binary(
            "multiply", a.reshape((*a.shape, 1)), b.reshape((*b.shape[:-1], 1, b.shape[-1]))
        )

    def unary_backward(self, kernel, g, s, derivative):
        """``g * derivative(s)``: one fused kernel for the ops that have one, else the
        op's formula on CUDA arrays."""
        op = K.UNARY_GRAD.get(kernel) if kernel is not None else None
        if op is None:
            return self.multiply(g, derivative(self.math, s))
        if not isinstance(g, CudaArray):
            raise device_mismatch(f"cuda:{s.device_index}", "cpu")
        dt = s.dtype if g.dtype == s.dtype else np.result_type(g.dtype, s.dtype)
        out = self.empty(s.shape, dt)
        gst, goff = _bcast_st(g, s.shape)
        shape, sst = _meta(s)
        shape, (gst, sst) = _coalesce(shape, gst, sst)
        launch(
            K.unary_grad_kernel,
            s.size,
            op,
            s.size,
            g._buf,
            goff,
            gst,
            s._buf,
            s._off,
            sst,
            shape,
            out._buf,
        )
        return out

    def mul_backward(self, g, a, b, need_a, need_b):
        mul = self.multiply
        return (mul(g, b) if need_a else None), (mul(g, a) if need_b else None)

    def where(self, cond, a, b):
        """``a`` where ``cond`` else ``b`` (arrays or scalars, broadcasting)."""

        def proto(x):
            return np.ones(1, x.dtype) if isinstance(x, CudaArray) else x

        ops = [_as_operand(x, cond) for x in (cond, a, b)]
        dt = np.where(True, proto(ops[1]), proto(ops[2])).dtype
        arrays = [
            x if isinstance(x, CudaArray) else self.full((), x, dt) for x in ops
        ]  # a scalar as a 0-d device array: a fill, no copy
        shape = np.broadcast_shapes(*(x.shape for x in arrays))
        out = self.empty(shape, dt)
        args = []
        for x in arrays:
            st, off = _bcast_st(x, shape)
            args += [x._buf, off, st]
        launch(K.where_kernel, out.size, out.size, *args, shape or (1,), out._buf)
        return out

    def nan_to_num(self, x, copy=True, nan=0.0, posinf=None, neginf=None):
        """NumPy's ``nan_to_num`` (in place into ``x`` when ``copy`` is False)."""
        if x.dtype.kind != "f":
            return self.copy(x) if copy else x
        info = np.finfo(x.dtype)
        out = self.empty(x.shape, x.dtype) if copy else x
        shape, st = _meta(x)
        _, ost = _meta(out)
        launch(
            K.nan_to_num_kernel,
            x.size,
            x.size,
            x._buf,
            x._off,
            shape,
            st,
            float(nan),
            float(info.max if posinf is None else posinf),
            float(info.min if neginf is None else neginf),
            out._buf,
            out._off,
            ost,
        )
        return out

    # -- indices ---------------------------------------------------------------------------
    def first_out_of_range(self, idx, size):
        """Position of the first entry of index array ``idx`` outside ``[0, size)``, or -1."""
        if not idx.size:
            return -1
        res = self.from_host(np.array([idx.size], np.int64))
        shape, st = _meta(idx)
        launch(
            K.first_out_of_range_kernel,
            idx.size,
            idx.size,
            idx._buf,
            idx._off,
            shape,
            st,
            size,
            res._buf,
        )
        pos = int(res.item())
        return -1 if pos == idx.size else pos

    # -- the engine's gradient buffers -----------------------------------------------------
    def add_grads(self, a, b, owned):
        """``a + b`` for two gradients of one slot; in place into ``a`` when the engine
        owns it and its layout allows (NOTE [Engine], point 4)."""
        if (
            owned
            and isinstance(b, CudaArray)
            and a.dtype == b.dtype
            and a.base is None
            and a.is_c_contiguous()
            and np.broadcast_shapes(a.shape, b.shape) == a.shape
        ):
            self.accumulate(a, b)
            return a
        return self.binary("add", a, b)

    def accumulate(self, dst, src):
        """``dst += src`` in place by a device kernel (a leaf's ``.grad``), casting."""
        if not isinstance(src, CudaArray):
            raise device_mismatch(f"cuda:{dst.device_index}", "cpu")
        if dst.size == 0:
            return
        shape, dst_st = _meta(dst)
        sst, soff = _bcast_st(src, dst.shape)
        launch(
            K.accumulate_kernel,
            dst.size,
            dst.size,
            dst._buf,
            dst._off,
            dst_st,
            src._buf,
            soff,
            sst,
            shape,
        )

    # -- copies and casts (the kernels behind ``CudaNDArray``'s NumPy methods) ---------------
    def copy(self, x):
        """A C-contiguous copy of the CUDA array ``x`` (``x.copy()``)."""
        out = self.empty(x.shape, x.dtype, x.device_index)
        self.copy_into(out, x)
        return out

    def astype(self, x, dtype, copy=True):
        """``x`` cast to ``dtype`` (``x.astype``): ``x`` itself when ``copy`` is False and
        the dtype is ``x``'s."""
        dtype = np.dtype(dtype)
        if dtype == x.dtype and not copy:
            return x
        out = self.empty(x.shape, dtype, x.device_index)
        self.copy_into(out, x)
        return out

    def reshape(self, x, shape, copy=None):
        """NumPy's ``reshape``: a view where the strides allow one, else (unless ``copy``
        is False) a view of a contiguous copy."""
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        shape = resolve_shape(tuple(shape), x.size)
        st = None if copy else view_strides(x.shape, x._st, shape)
        if st is not None:
            return x._view(shape, st)
        if copy is False:
            raise ValueError("cannot reshape this CUDA array without copying")
        return self.copy(x)._view(shape, contiguous_strides(shape), 0)

    def to_host(self, x):
        """A host copy (NumPy array) of the view ``x``: a strided view is made contiguous on
        the device first, so one device->host copy moves only its elements."""
        if x.size and not x.is_c_contiguous():
            x = self.copy(x)
        return CudaArray.to_host(x)

    def fill(self, x, value):
        """``x[...] = value`` for a number ``value`` (``x.fill``)."""
        self.copy_into(x, value)
