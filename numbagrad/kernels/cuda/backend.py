"""The CUDA backend (NOTE [Backends]): numba ``@cuda.jit`` kernels on ``CudaArray`` views.

What runs on CUDA today: elementwise maps (``elementwise.UNARY``), binary ops with
broadcasting (``elementwise.BINARY``), the fused unary gradients (``UNARY_GRAD``), sums over
any dims (``reduce``), ``matmul`` (``linalg``), strided copies and casts, fills, the
engine's gradient sums and leaf accumulation, and the views NumPy's namespace provides
(``reshape``, ``transpose``, ``broadcast_to``, basic indexing) through ``xp``. Anything else
an op asks for raises ``NotImplementedError`` naming it: nothing silently runs on the host.
Floating math runs in float64 and is rounded once on store (float32 results may differ from
the CPU's by an ulp).
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels import _BACKENDS, module
from numbagrad.kernels.cuda.array import CudaArray, device_mismatch
from numbagrad.kernels.cuda.launch import launch, launch_2d, launch_blocks

__all__ = ["CUDA", "CudaBackend"]

K = module("elementwise", "cuda")
KR = module("reduce", "cuda")
KL = module("linalg", "cuda")


def _unsupported(what):
    return NotImplementedError(
        f"{what} is not implemented for CUDA tensors yet; move the tensor to the CPU with .cpu()"
    )


def _meta(a):
    """``(shape, strides)`` tuples a kernel takes; a 0-d array as shape ``(1,)``."""
    if a.ndim == 0:
        return (1,), (0,)
    return a.shape, a._st


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

    from numbagrad.kernels.cpu.backend import _UFUNCS

    with np.errstate(all="ignore"):
        return np.asarray(_UFUNCS[name](proto(a), proto(b))).dtype


class CudaMath:
    """The array twins of the ops that derivative formulas use, on CUDA arrays."""

    @staticmethod
    def _map(name):
        return staticmethod(lambda x: CUDA.map(name, x))

    cos = _map("cos")
    sin = _map("sin")
    exp = _map("exp")
    sign = _map("sign")
    reciprocal = _map("reciprocal")
    sigmoid = _map("sigmoid")
    sqrt = _map("sqrt")
    sinh = _map("sinh")
    cosh = _map("cosh")
    del _map

    @staticmethod
    def matmul(a, b):
        return CUDA.matmul(a, b)

    @staticmethod
    def swapaxes(x, i, j):
        return CudaXP.swapaxes(x, i, j)

    @staticmethod
    def sum(x, dim=None, keepdim=False):
        return CUDA.sum(x, dim, keepdim, None)

    @staticmethod
    def where(cond, a, b):
        return CUDA.where(cond, a, b)

    def __getattr__(self, name):
        if name.startswith("__"):  # introspection (doctest, copy), not a formula
            raise AttributeError(name)
        raise _unsupported(f"the gradient formula's {name!r}")


class _XP:
    """The subset of NumPy's namespace the ops' ``impl`` use, on CUDA arrays: views,
    allocation, and what maps to the backend's kernels. Any other name raises
    NotImplementedError naming it."""

    @staticmethod
    def reshape(x, shape, copy=None):
        return x.reshape(shape, copy=copy)

    @staticmethod
    def transpose(x, axes=None):
        return x.transpose() if axes is None else x.transpose(axes)

    @staticmethod
    def swapaxes(x, i, j):
        axes = list(range(x.ndim))
        axes[i], axes[j] = axes[j], axes[i]
        return x.transpose(axes)

    @staticmethod
    def broadcast_to(x, shape):
        return x.broadcast_to(shape)

    @staticmethod
    def ascontiguousarray(x):
        return x if x.is_c_contiguous() else x.copy()

    @staticmethod
    def prod(shape, dtype=None):
        if isinstance(shape, CudaArray):
            raise _unsupported("prod")
        return math.prod(shape)

    @staticmethod
    def sum(x, axis=None, keepdims=False, dtype=None):
        return CUDA.sum(x, axis, keepdims, dtype)

    @staticmethod
    def matmul(a, b):
        return CUDA.matmul(a, b)

    @staticmethod
    def empty(shape, dtype=np.float64):
        return CUDA.empty(_shape(shape), dtype)

    @staticmethod
    def zeros(shape, dtype=np.float64):
        return CUDA.zeros(_shape(shape), dtype)

    @staticmethod
    def ones(shape, dtype=np.float64):
        return CUDA.full(_shape(shape), 1, dtype)

    @staticmethod
    def full(shape, value, dtype=None):
        dtype = np.asarray(value).dtype if dtype is None else dtype
        return CUDA.full(_shape(shape), value, dtype)

    @staticmethod
    def zeros_like(x):
        return CUDA.zeros(x.shape, x.dtype)

    @staticmethod
    def asarray(x, dtype=None):
        if not isinstance(x, CudaArray):
            raise _unsupported("asarray of host data")
        return x if dtype is None else x.astype(dtype, copy=False)

    @staticmethod
    def maximum(a, b):
        return CUDA.binary("maximum", a, b)

    @staticmethod
    def where(cond, a, b):
        return CUDA.where(cond, a, b)

    @staticmethod
    def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
        return CUDA.nan_to_num(x, copy, nan, posinf, neginf)

    @staticmethod
    def minimum(a, b):
        return CUDA.binary("minimum", a, b)

    @staticmethod
    def sqrt(x):
        return CUDA.map("sqrt", x)

    @staticmethod
    def isfinite(x):
        return CUDA.map("isfinite", x)

    def __getattr__(self, name):
        if name.startswith("__"):  # introspection (doctest, copy), not an array function
            raise AttributeError(name)
        raise _unsupported(f"numpy.{name}")


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


CudaXP = _XP()


class CudaBackend:
    """CUDA device arrays (``CudaArray``) and numba ``@cuda.jit`` kernels."""

    name = "cuda"
    xp = CudaXP
    math = CudaMath()
    KERNEL_MIN = 0  # every size runs the fused kernels: there is no host fallback
    PARALLEL_MIN = 0
    THREAD_MIN = 0

    @staticmethod
    def owns(array) -> bool:
        return isinstance(array, CudaArray)

    # -- allocation ------------------------------------------------------------------------
    @staticmethod
    def empty(shape, dtype):
        return CudaArray.empty(shape, dtype)

    @staticmethod
    def full(shape, value, dtype):
        out = CudaArray.empty(shape, dtype)
        CudaBackend.copy_into(out, value)
        return out

    @staticmethod
    def zeros(shape, dtype):
        return CudaBackend.full(shape, 0, dtype)

    # -- elementwise -----------------------------------------------------------------------
    @staticmethod
    def map(name, x):
        """The elementwise map ``name`` of CUDA array ``x``."""
        op = K.UNARY.get(name)
        if op is None:
            raise _unsupported(name)
        if x.dtype.kind not in "fc" and name not in (
            "isfinite",
            "isnan",
            "isinf",
            "logical_not",
            "negative",
            "abs",
            "square",
            "sign",
        ):
            # PyTorch promotes integer inputs of float maps to the default float
            dt = np.dtype(np.float32)
        elif name in ("isfinite", "isnan", "isinf", "logical_not"):
            dt = np.dtype(bool)
        else:
            dt = x.dtype
        if dt.kind == "c" or x.dtype.kind == "c":
            raise _unsupported(f"{name} of complex tensors")
        out = CudaArray.empty(x.shape, dt)
        shape, st = _meta(x)
        launch(K.map_kernel, x.size, op, x.size, x._buf, x._off, shape, st, out._buf)
        return out

    @staticmethod
    def binary(name, a, b):
        """The broadcasting binary op ``name`` (the CPU backend's ufunc names)."""
        dev = a if isinstance(a, CudaArray) else b
        if name.startswith("bitwise_") and all(
            isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_ for x in (a, b)
        ):
            name = "logical_" + name[8:]  # on bools the bitwise ops are the logical ones
        op = K.BINARY.get(name)
        if op is None:
            raise _unsupported(name)
        a = _as_operand(a, dev)
        b = _as_operand(b, dev)
        dt = _result_dtype(name, a, b)
        if isinstance(a, CudaArray) and isinstance(b, CudaArray):
            shape = np.broadcast_shapes(a.shape, b.shape)
            out = CudaArray.empty(shape, dt)
            ast, aoff = _bcast_st(a, shape)
            bst, boff = _bcast_st(b, shape)
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
        out = CudaArray.empty(arr.shape, dt)
        shape, st = _meta(arr)
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

    @staticmethod
    def binary_into(name, dst, other):
        """``dst = name(dst, other)`` in place."""
        CudaBackend.copy_into(dst, CudaBackend.binary(name, dst, other))

    @staticmethod
    def copy_into(dst, src):
        """Copy (broadcast, cast) ``src``, a CUDA array or a scalar, into CUDA array ``dst``."""
        if dst.size == 0:
            return
        shape, dst_st = _meta(dst)
        if isinstance(src, np.ndarray) and src.ndim == 0:
            src = src[()]
        if isinstance(src, CudaArray):
            sst, soff = _bcast_st(src, dst.shape)
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

    @staticmethod
    def multiply(a, b):
        return CudaBackend.binary("multiply", a, b)

    @staticmethod
    def divide(a, b):
        return CudaBackend.binary("true_divide", a, b)

    @staticmethod
    def unary_backward(kernel, g, s, derivative):
        """``g * derivative(s)``: one fused kernel for the ops that have one, else the
        op's formula on CUDA arrays."""
        op = K.UNARY_GRAD.get(kernel) if kernel is not None else None
        if op is None:
            return CudaBackend.multiply(g, derivative(CUDA.math, s))
        if not isinstance(g, CudaArray):
            raise device_mismatch(f"cuda:{s.device_index}", "cpu")
        dt = s.dtype if g.dtype == s.dtype else np.result_type(g.dtype, s.dtype)
        out = CudaArray.empty(s.shape, dt)
        gst, goff = _bcast_st(g, s.shape)
        shape, sst = _meta(s)
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

    @staticmethod
    def mul_backward(g, a, b, need_a, need_b):
        mul = CudaBackend.multiply
        return (mul(g, b) if need_a else None), (mul(g, a) if need_b else None)

    @staticmethod
    def where(cond, a, b):
        """``a`` where ``cond`` else ``b`` (arrays or scalars, broadcasting)."""

        def proto(x):
            return np.ones(1, x.dtype) if isinstance(x, CudaArray) else x

        ops = [_as_operand(x, cond) for x in (cond, a, b)]
        dt = np.where(True, proto(ops[1]), proto(ops[2])).dtype
        arrays = [
            x if isinstance(x, CudaArray) else CudaBackend.full((), x, dt) for x in ops
        ]  # a scalar as a 0-d device array: a fill, no copy
        shape = np.broadcast_shapes(*(x.shape for x in arrays))
        out = CudaArray.empty(shape, dt)
        args = []
        for x in arrays:
            st, off = _bcast_st(x, shape)
            args += [x._buf, off, st]
        launch(K.where_kernel, out.size, out.size, *args, shape or (1,), out._buf)
        return out

    @staticmethod
    def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
        """NumPy's ``nan_to_num`` (in place into ``x`` when ``copy`` is False)."""
        if x.dtype.kind != "f":
            return x.copy() if copy else x
        info = np.finfo(x.dtype)
        out = CudaArray.empty(x.shape, x.dtype) if copy else x
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

    # -- reductions ------------------------------------------------------------------------
    @staticmethod
    def sum(x, dims, keepdim, dtype):
        """Sum over ``dims`` (None: all) with a shared-memory tree per block."""
        if not isinstance(x, CudaArray):
            raise TypeError("CUDA sum of a host array")
        nd = x.ndim
        if dims is None:
            dims = tuple(range(nd))
        elif isinstance(dims, (int, np.integer)):
            dims = (int(dims),)
        dims = tuple(sorted({d % nd for d in dims})) if nd else ()
        if dtype is None:
            dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
        dtype = np.dtype(dtype)
        kept = tuple(i for i in range(nd) if i not in dims)
        oshape = (
            tuple(1 if i in dims else x.shape[i] for i in range(nd))
            if keepdim
            else tuple(x.shape[i] for i in kept)
        )
        nout = math.prod(x.shape[i] for i in kept)
        r = math.prod(x.shape[i] for i in dims)
        perm = kept + dims
        shape = tuple(x.shape[i] for i in perm) or (1,)
        st = tuple(x._st[i] for i in perm) or (0,)
        out = CudaArray.empty(oshape, dtype)
        if nout == 0:
            return out
        if r == 0:
            CudaBackend.copy_into(out, 0)
            return out
        threads = 1
        while threads < min(r, KR.TPB):
            threads *= 2
        kern = KR.sum_int_kernel if dtype.kind in "biu" else KR.sum_kernel
        launch_blocks(kern, nout, threads, nout, r, x._buf, x._off, shape, st, out._buf)
        return out

    @staticmethod
    def expand_back(g, shape, dims, keepdim):
        """Broadcast a reduced ``g`` back to ``shape`` (a zero-copy stride-0 view)."""
        if not keepdim and dims:
            g = g.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
        return g.broadcast_to(shape)

    # -- linear algebra --------------------------------------------------------------------
    @staticmethod
    def matmul(a, b):
        """``a @ b`` with NumPy's rules (1-D operands, broadcast batch dims): the tiled
        kernel of ``linalg``."""
        if not (isinstance(a, CudaArray) and isinstance(b, CudaArray)):
            raise device_mismatch("cuda:0", "cpu")
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError("matmul: Input operand does not have enough dimensions")
        va = a.reshape((1, *a.shape)) if a.ndim == 1 else a
        vb = b.reshape((*b.shape, 1)) if b.ndim == 1 else b
        m, k = va.shape[-2:]
        k2, n = vb.shape[-2:]
        if k != k2:
            raise ValueError(
                f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                f"(size {k2} is different from {k})"
            )
        batch = np.broadcast_shapes(va.shape[:-2], vb.shape[:-2])
        ast = va.broadcast_to((*batch, m, k))._st[: len(batch)] if batch else (0,)
        bst = vb.broadcast_to((*batch, k, n))._st[: len(batch)] if batch else (0,)
        nb = math.prod(batch)
        dt = np.result_type(a.dtype, b.dtype)
        out = CudaArray.empty((*batch, m, n), dt)
        if out.size:
            if k == 0:
                CudaBackend.copy_into(out, 0)
            else:
                tile = KL.TILE
                grid = (
                    min((n + tile - 1) // tile, 65535),
                    min((m + tile - 1) // tile, 65535),
                    min(nb, 65535),
                )
                launch_2d(
                    KL.matmul_kernel,
                    grid,
                    (tile, tile),
                    nb,
                    m,
                    k,
                    n,
                    va._buf,
                    va._off,
                    ast,
                    va._st[-2],
                    va._st[-1],
                    vb._buf,
                    vb._off,
                    bst,
                    vb._st[-2],
                    vb._st[-1],
                    batch or (1,),
                    out._buf,
                )
        shape = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
        return out.reshape(shape)

    # -- indices ---------------------------------------------------------------------------
    @staticmethod
    def first_out_of_range(idx, size):
        """Position of the first entry of index array ``idx`` outside ``[0, size)``, or -1."""
        if not idx.size:
            return -1
        res = CudaArray.from_host(np.array([idx.size], np.int64))
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
    @staticmethod
    def add_grads(a, b, owned):
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
            CudaBackend.accumulate(a, b)
            return a
        return CudaBackend.binary("add", a, b)

    @staticmethod
    def accumulate(dst, src):
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


CUDA = CudaBackend()
_BACKENDS["cuda"] = CUDA
