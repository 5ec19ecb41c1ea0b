"""The CUDA backend (NOTE [Backends]): numba ``@cuda.jit`` kernels on CUDA arrays.

``CudaBackend`` is this module's core (allocation, sums, ``matmul``) plus one mixin per
kernel family, each in a module of its own: ``backend_elementwise`` (maps, binary ops,
``where``, copies, casts and fills, the fused unary gradients, the engine's gradient
buffers), ``backend_reduce`` (reductions, scans, joining, reordering), ``backend_index``
(indexing, gather/scatter, sorting, the ``.at`` reductions), ``backend_random``,
``backend_special`` and ``backend_linalg`` (with ``matrix_exp``). Their methods reach each
other through ``self``, the one ``CUDA`` object. NumPy's namespace ``xp`` and the formula
twins ``math`` are ``backend_xp``'s, made with the backend object. The arrays the backend
makes are ``CudaNDArray``: the plain strided view ``array.CudaArray`` with NumPy's array
methods, each one call of the backend (NOTE [CUDA array protocol]).

What runs on CUDA today: elementwise maps (``elementwise.UNARY``), binary ops with
broadcasting (``elementwise.BINARY``), the fused unary gradients (``UNARY_GRAD``), sums over
any dims (``reduce``), ``matmul`` (``linalg``), strided copies and casts, fills, the
engine's gradient sums and leaf accumulation, and the views NumPy's namespace provides
(``reshape``, ``transpose``, ``broadcast_to``, basic indexing) through ``xp``. Indexing
(``index``): advanced indexing reads, writes and atomic ``add.at`` (NOTE [CUDA advanced
indexing]), ``take_along_axis``, ``indices``, ``nonzero``; sorting (``sort``): a stable
merge-path ``argsort`` along any dim (NOTE [CUDA sort]). Reductions, scans, joining
(``reduce``, ``scan``, ``join``): ``prod``/``amax``/``amin``/``all``/``any`` over any dims and
``argmax``/``argmin`` (a shared-memory tree per output), ``var``, the scans ``cumsum``/
``cumprod``, ``logaddexp.accumulate`` and ``maximum``/``minimum.accumulate`` (NOTE [CUDA
scans]), ``concatenate``/``stack``, ``flip`` (a negative-stride view), ``roll``.
The op database's gaps: ``multiply``/``maximum``/``minimum.at`` (``scatter_reduce``: NOTE
[CUDA multiply.at, maximum.at, minimum.at]), ``bincount``, ``einsum`` (batched ``matmul``
per operand pair), ``diagonal`` (a view), ``tril``/``triu``, ``round``, ``signbit``,
``fmod``, ``floor_divide``, ``logaddexp``/``logaddexp2``.
Special functions (``special``): ``numbagrad.special``'s maps, ``polygamma``, ``gammainc``/
``gammaincc``/``zeta``, ``xlogy``/``xlog1py`` and ``nextafter`` (the CPU's scalar formulas,
compiled for the device: NOTE [CUDA special functions]).
Random numbers (``random``): uniform, normal, exponential, Bernoulli and integer draws from a
counter-based Philox4x32-10 state (NOTE [CUDA random numbers]); the backward of bool-mask
indexing finds the True positions on the device (NOTE [CUDA mask scatter]).
Linear algebra (``linalg``): ``np.linalg``'s ``solve``/``inv``/``det``/``slogdet`` (LU with
partial pivoting), ``cholesky``, ``qr`` (Householder), ``eigh`` and ``svd`` (cyclic Jacobi),
and ``solve_triangular``, one block per matrix (NOTE [CUDA decompositions]); ``matrix_exp``
(``expm_pade``: NOTE [CUDA matrix_exp]).
Anything else an op asks for raises ``NotImplementedError`` naming it: nothing silently
runs on the host. Floating math runs in float64 and is rounded once on store (float32
results may differ from the CPU's by an ulp).
"""

from __future__ import annotations

import math
import os
import warnings
from typing import TYPE_CHECKING

import numpy as np

from numbagrad.kernels import module, register_backend
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.array import CudaArray, advanced_key, device_mismatch
from numbagrad.kernels.cuda.backend_common import _unsupported
from numbagrad.kernels.cuda.backend_elementwise import ElementwiseMethods
from numbagrad.kernels.cuda.backend_index import IndexMethods
from numbagrad.kernels.cuda.backend_linalg import LinalgMethods
from numbagrad.kernels.cuda.backend_random import RandomMethods
from numbagrad.kernels.cuda.backend_reduce import ReduceMethods
from numbagrad.kernels.cuda.backend_special import SpecialMethods
from numbagrad.kernels.cuda.backend_xp import CudaMath, CudaXP
from numbagrad.kernels.cuda.launch import current_stream, launch_2d, launch_blocks

if TYPE_CHECKING:
    from numbagrad.kernels.interface import Backend

__all__ = ["CUDA", "CudaBackend", "CudaNDArray"]

KR = module("reduce", "cuda")
KL = module("linalg", "cuda")

# a sum with fewer outputs than SPLIT_OUTPUTS, each over more than 2 * SPLIT_CHUNK elements,
# is split into partial sums of about SPLIT_CHUNK elements (NOTE [CUDA split sums])
SPLIT_OUTPUTS, SPLIT_CHUNK = 1024, 16384


# NOTE [cuBLAS through CuPy]
# numbagrad's own matmul is a tiled shared-memory kernel: correct for every dtype and
# layout, but on an H100 it reached 4 TFLOP/s where cuBLAS reaches 50-60 (docs/gpu.rst,
# "Measured on hardware"). numba-cuda has no BLAS, so when CuPy is installed (it is not a
# dependency) a float32 or float64 product of operands of one dtype runs as cupy.matmul
# over the tensors' memory (zero copy, through __cuda_array_interface__), writing into
# numbagrad's output, on numbagrad's current stream. float32 stays IEEE float32 (CuPy
# uses TF32 only when CUPY_TF32=1 is set, as PyTorch only with allow_tf32).
# NUMBAGRAD_CUDA_CUBLAS=0 keeps the tiled kernel. The simulator always uses the kernel.
_cupy_state: list = []


def _cupy():
    """The cupy module, or None (not installed, not importable, turned off, simulator)."""
    if not _cupy_state:
        mod = None
        if not _driver.simulator() and os.environ.get("NUMBAGRAD_CUDA_CUBLAS", "1") != "0":
            try:
                import cupy as mod
            except Exception:  # a broken CuPy install must not break numbagrad
                mod = None
        _cupy_state.append(mod)
    return _cupy_state[0]


def _cublas_matmul(a, b, out) -> bool:
    """``out[...] = a @ b`` through cuBLAS (NOTE [cuBLAS through CuPy]); False when that
    path does not apply, and the caller runs the tiled kernel."""
    if a.dtype != b.dtype or a.dtype != out.dtype or a.dtype.char not in "fd":
        return False
    cp = _cupy()
    if cp is None:
        return False
    s = current_stream()
    if not s:
        cp.matmul(cp.asarray(a), cp.asarray(b), out=cp.asarray(out))
        return True
    with warnings.catch_warnings():  # CuPy 14 deprecates ExternalStream (still supported)
        warnings.simplefilter("ignore", DeprecationWarning)
        stream = cp.cuda.ExternalStream(int(s.handle))
    with stream:
        cp.matmul(cp.asarray(a), cp.asarray(b), out=cp.asarray(out))
    return True


class CudaNDArray(CudaArray):
    """The CUDA backend's arrays: a ``CudaArray`` view with NumPy's array methods, each
    one call of the backend (NOTE [CUDA array protocol] in ``array.py``), so that ops
    written for NumPy arrays (``x.astype(dt)``, ``a + b``, ``np.exp(a)``, ``x[idx]``) run
    on CUDA tensors' data. Views keep the class."""

    __slots__ = ()

    # -- copies, casts, host reads -------------------------------------------------------
    def copy(self):
        return CUDA.copy(self)

    def astype(self, dtype, copy=True):
        return CUDA.astype(self, dtype, copy)

    def reshape(self, *shape, copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return CUDA.reshape(self, shape, copy)

    def to_host(self) -> np.ndarray:
        return CUDA.to_host(self)

    def fill(self, value):
        CUDA.fill(self, value)

    # -- indexing ------------------------------------------------------------------------
    def __getitem__(self, key):
        if advanced_key(key):  # index arrays: a copy (NOTE [CUDA advanced indexing])
            return CUDA.index_get(self, key)
        return CudaArray.__getitem__(self, key)

    def __setitem__(self, key, value):
        if advanced_key(key):
            CUDA.index_put(self, key, value)
            return
        CUDA.copy_into(CudaArray.__getitem__(self, key), value)

    # -- NumPy's protocols ---------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy ufuncs with a CUDA operand: a 0-d host operand (a CPU scalar tensor) is
        allowed, as PyTorch allows it; any other host array is a device mismatch."""
        out = kwargs.pop("out", None)  # ``out=(a,)``: the result copied into CUDA array a
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if method != "__call__" or kwargs or len(inputs) not in (1, 2):
            raise device_mismatch(f"cuda:{self.device_index}", "cpu")
        for x in (*inputs, out):
            if isinstance(x, np.ndarray) and x.ndim:
                raise device_mismatch(f"cuda:{self.device_index}", "cpu")
        name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
        res = CUDA.map(name, inputs[0]) if len(inputs) == 1 else CUDA.binary(name, *inputs)
        if out is None:
            return res
        CUDA.copy_into(out, res)
        return out

    def __array_function__(self, func, types, args, kwargs):
        impl = getattr(type(CUDA.xp), func.__name__, None)  # the device twin, if any
        if impl is not None and func.__name__ in vars(type(CUDA.xp)):
            return getattr(CUDA.xp, func.__name__)(*args, **kwargs)
        raise NotImplementedError(
            f"numpy.{func.__name__} is not implemented for CUDA tensors yet; move the tensor "
            "to the CPU with .cpu()"
        )

    # -- reductions ----------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False, dtype=None):
        return CUDA.sum(self, axis, keepdims, dtype)

    def min(self, axis=None, keepdims=False):
        """The smallest entry of an integer or bool array (to check index arrays), an int."""
        return _minmax(self, 0, axis, keepdims)

    def max(self, axis=None, keepdims=False):
        """The largest entry of an integer or bool array (to check index arrays), an int."""
        return _minmax(self, 1, axis, keepdims)

    def any(self, axis=None, keepdims=False):
        return CUDA.reduce("any", self, axis, keepdims)

    def all(self, axis=None, keepdims=False):
        return CUDA.reduce("all", self, axis, keepdims)


_UFUNC_NAMES = {"divide": "true_divide"}


def _minmax(a, which, axis, keepdims):
    if axis is not None or keepdims:
        raise NotImplementedError(
            "min/max of CUDA arrays along an axis: use numbagrad.amax/amin on the tensor"
        )
    return CUDA.index_minmax(a)[which]


def _not(a):
    """``~a`` of a bool mask (bitwise not of integers is not on CUDA yet)."""
    if a.dtype.kind != "b":
        raise _unsupported("bitwise not of integer arrays")
    return CUDA.map("logical_not", a)


def _binop(name, swap=False):
    def op(self, other):
        return CUDA.binary(name, other, self) if swap else CUDA.binary(name, self, other)

    op.__name__ = name
    return op


def _inplace(name):
    def op(self, other):  # NumPy's ``a += b``: in place, cast to a's dtype
        CUDA.binary_into(name, self, other)
        return self

    op.__name__ = name
    return op


for _n, _f in (
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("truediv", "true_divide"),
    ("pow", "power"),
):
    setattr(CudaNDArray, f"__{_n}__", _binop(_f))
    setattr(CudaNDArray, f"__r{_n}__", _binop(_f, swap=True))
    setattr(CudaNDArray, f"__i{_n}__", _inplace(_f))
for _n, _f in (
    ("eq", "equal"),
    ("ne", "not_equal"),
    ("lt", "less"),
    ("le", "less_equal"),
    ("gt", "greater"),
    ("ge", "greater_equal"),
):
    setattr(CudaNDArray, f"__{_n}__", _binop(_f))
for _n, _f in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
    setattr(CudaNDArray, f"__{_n}__", _binop(_f))  # on bool masks: the logical ops
    setattr(CudaNDArray, f"__r{_n}__", _binop(_f, swap=True))
# (the operators set after the class, by name: mypy sees the class without them)
CudaNDArray.__hash__ = object.__hash__  # type: ignore[method-assign]
# ``a @ b`` (linalg's pinv): the tiled matmul
setattr(CudaNDArray, "__matmul__", lambda self, other: CUDA.matmul(self, other))  # noqa: B010
setattr(CudaNDArray, "__invert__", lambda self: _not(self))  # noqa: B010
setattr(CudaNDArray, "__neg__", lambda self: CUDA.map("negative", self))  # noqa: B010


def _current(index):
    """``index`` after checking that CUDA works and that it is the current device (arrays
    are made on the current device only)."""
    current = _driver.current_device()
    if index != current:
        raise RuntimeError(
            f"cuda:{index} is not the current CUDA device (cuda:{current}); select it with "
            "numbagrad.cuda.set_device first"
        )
    return index


class CudaBackend(
    ElementwiseMethods,
    ReduceMethods,
    IndexMethods,
    RandomMethods,
    SpecialMethods,
    LinalgMethods,
):
    """CUDA device arrays (``CudaNDArray``) and numba ``@cuda.jit`` kernels."""

    name = "cuda"
    array_type = CudaNDArray  # the class of the arrays it makes (compiled glue checks it)
    fft = None  # real-valued kernels: no FFTs (docs/gpu.rst)
    KERNEL_MIN = 0  # every size runs the fused kernels: there is no host fallback
    PARALLEL_MIN = 0
    THREAD_MIN = 0

    def __init__(self):
        self.xp = CudaXP(self)
        self.math = CudaMath(self)

    def owns(self, array) -> bool:
        return isinstance(array, CudaNDArray)

    # -- allocation (the only makers of CUDA arrays: NOTE [CUDA array protocol]) ---------
    def empty(self, shape, dtype, device_index=0):
        return CudaNDArray.empty(shape, dtype, device_index)

    def from_host(self, host, device_index=None):
        """A copy of the host array ``host`` on the device; a factory's ``device_index``
        (``_device.on_device``) must be the current device."""
        if device_index is None:
            return CudaNDArray.from_host(host)
        host = np.asarray(host)
        if host.dtype.kind == "c":  # (docs/gpu.rst)
            raise NotImplementedError(
                "complex tensors on CUDA: numbagrad's CUDA kernels are real-valued; keep "
                "complex64/complex128 tensors (and numbagrad.fft) on the CPU"
            )
        return CudaNDArray.from_host(host, _current(device_index))

    def empty_on(self, shape, dtype, device_index=None):
        """An uninitialised array on device ``device_index`` (the current one)."""
        index = 0 if device_index is None else _current(device_index)
        return CudaNDArray.empty(shape, dtype, index)

    def from_device_array(self, obj, device_index=0):
        """A zero-copy array over the C-contiguous device array ``obj``."""
        return CudaNDArray.from_device_array(obj, device_index)

    def full(self, shape, value, dtype, device_index=0):
        out = self.empty(shape, dtype, device_index)
        self.copy_into(out, value)
        return out

    def zeros(self, shape, dtype):
        return self.full(shape, 0, dtype)

    # -- reductions ------------------------------------------------------------------------
    def sum(self, x, dims, keepdim, dtype):
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
        out = self.empty(oshape, dtype)
        if nout == 0:
            return out
        if r == 0:
            self.copy_into(out, 0)
            return out
        threads = 1
        while threads < min(r, KR.TPB):
            threads *= 2
        kern = KR.sum_int_kernel if dtype.kind in "biu" else KR.sum_kernel
        chunks = 1
        if nout < SPLIT_OUTPUTS and r > 2 * SPLIT_CHUNK:  # NOTE [CUDA split sums]
            chunks = min(-(-r // SPLIT_CHUNK), -(-SPLIT_OUTPUTS // nout))
        if chunks == 1:
            launch_blocks(kern, nout, threads, nout, 1, r, r, x._buf, x._off, shape, st, out._buf)
            return out
        rc = -(-r // chunks)
        part = self.empty((nout * chunks,), np.int64 if dtype.kind in "biu" else np.float64)
        n = nout * chunks
        launch_blocks(kern, n, threads, n, chunks, rc, r, x._buf, x._off, shape, st, part._buf)
        threads = 1
        while threads < min(chunks, KR.TPB):
            threads *= 2
        launch_blocks(
            kern, nout, threads, nout, 1, chunks, chunks, part._buf, 0, (n,), (1,), out._buf
        )
        return out

    def expand_back(self, g, shape, dims, keepdim):
        """Broadcast a reduced ``g`` back to ``shape`` (a zero-copy stride-0 view)."""
        if not keepdim and dims:
            g = g.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
        return g.broadcast_to(shape)

    # -- linear algebra --------------------------------------------------------------------
    def matmul(self, a, b):
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
        out = self.empty((*batch, m, n), dt)
        if out.size:
            if k == 0:
                self.copy_into(out, 0)
            elif not _cublas_matmul(va, vb, out):  # (cuBLAS where it applies, else tiled)
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


CUDA: CudaBackend = CudaBackend()
register_backend("cuda", CUDA)

if TYPE_CHECKING:  # mypy checks the CUDA backend against the protocol (NOTE [Backend protocol])
    _CHECK: Backend = CUDA
