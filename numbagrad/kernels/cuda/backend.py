"""The CUDA backend (NOTE [Backends]): numba ``@cuda.jit`` kernels on ``CudaArray`` views.

``CudaBackend`` is this module's core (allocation, elementwise maps and binary ops, copies,
sums, ``matmul``, the engine's gradient buffers, and NumPy's namespace ``xp``) plus one mixin
per kernel family, each in a module of its own: ``backend_reduce`` (reductions, scans,
joining, reordering), ``backend_index`` (indexing, gather/scatter, sorting, the ``.at``
reductions), ``backend_random``, ``backend_special`` and ``backend_linalg`` (with
``matrix_exp``). Their methods reach each other through ``self``, the one ``CUDA`` object.

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
from numbagrad.kernels.cuda.array import CudaArray, device_mismatch
from numbagrad.kernels.cuda.backend_common import (
    _as_operand,
    _bcast_st,
    _coalesce,
    _meta,
    _result_dtype,
    _unsupported,
)
from numbagrad.kernels.cuda.backend_index import IndexMethods
from numbagrad.kernels.cuda.backend_linalg import LinalgMethods
from numbagrad.kernels.cuda.backend_random import RandomMethods
from numbagrad.kernels.cuda.backend_reduce import ReduceMethods
from numbagrad.kernels.cuda.backend_special import SpecialMethods
from numbagrad.kernels.cuda.launch import current_stream, launch, launch_2d, launch_blocks

if TYPE_CHECKING:
    from numbagrad.kernels.interface import Backend

__all__ = ["CUDA", "CudaBackend"]

K = module("elementwise", "cuda")
KR = module("reduce", "cuda")
KL = module("linalg", "cuda")
KS = module("scan", "cuda")
KJ = module("join", "cuda")
KX = module("index", "cuda")
KO = module("sort", "cuda")
KSpecial = module("special", "cuda")
KRand = module("random", "cuda")

# a sum with fewer outputs than SPLIT_OUTPUTS, each over more than 2 * SPLIT_CHUNK elements,
# is split into partial sums of about SPLIT_CHUNK elements (NOTE [CUDA split sums])
SPLIT_OUTPUTS, SPLIT_CHUNK = 1024, 16384


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
    def reshape(x, shape):
        return CudaXP.reshape(x, shape)

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

    # -- reductions, scans, joining and reordering (scan.py, join.py) ----------------------
    @staticmethod
    def flip(x, dims):
        return CUDA.flip(x, dims).copy()  # a copy, as PyTorch's flip

    @staticmethod
    def cumsum(x, dim):
        return CudaXP.cumsum(x, dim)

    # -- end of reductions, scans, joining and reordering ---------------------------------


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
    def prod(shape, axis=None, dtype=None, keepdims=False):
        if isinstance(shape, CudaArray):  # a product of elements (reduce.py)
            return CUDA.prod(shape, axis, keepdims, dtype)
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
        if isinstance(x, (bool, int, float, np.generic)) or (
            isinstance(x, np.ndarray) and x.ndim == 0
        ):  # a scalar operand (as ``remainder``'s divisor): a 0-d device fill, no copy
            x = np.asarray(x, dtype)
            return CUDA.full((), x[()], x.dtype)
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

    # -- reductions, scans, joining and reordering (reduce.py, scan.py, join.py) -----------
    nan = np.nan
    inf = np.inf

    @staticmethod
    def amax(x, axis=None, keepdims=False):
        return CUDA.reduce("amax", x, axis, keepdims)

    @staticmethod
    def amin(x, axis=None, keepdims=False):
        return CUDA.reduce("amin", x, axis, keepdims)

    @staticmethod
    def all(x, axis=None, keepdims=False):
        return CUDA.reduce("all", x, axis, keepdims)

    @staticmethod
    def any(x, axis=None, keepdims=False):
        return CUDA.reduce("any", x, axis, keepdims)

    @staticmethod
    def argmax(x, axis=None, keepdims=False):
        return CUDA.argreduce(True, x, axis, keepdims)

    @staticmethod
    def argmin(x, axis=None, keepdims=False):
        return CUDA.argreduce(False, x, axis, keepdims)

    @staticmethod
    def nansum(x, axis=None, dtype=None, keepdims=False):
        if x.dtype.kind != "f":  # no NaN to skip
            return CUDA.sum(x, axis, keepdims, dtype)
        if dtype is not None and np.dtype(dtype).kind != "f":  # NaN as 0, then cast
            return CUDA.sum(CUDA.nan_to_num(x, nan=0.0), axis, keepdims, dtype)
        return CUDA.reduce("nansum", x, axis, keepdims, dtype)

    @staticmethod
    def var(x, axis=None, dtype=None, ddof=0, keepdims=False):
        return CUDA.var(x, axis, ddof, keepdims, dtype)

    @staticmethod
    def exp(x):
        return CUDA.map("exp", x)

    @staticmethod
    def log(x):
        return CUDA.map("log", x)

    @staticmethod
    def abs(x):
        return CUDA.map("abs", x)

    @staticmethod
    def isinf(x):
        return CUDA.map("isinf", x)

    @staticmethod
    def isnan(x):
        return CUDA.map("isnan", x)

    @staticmethod
    def cumsum(x, axis=None, dtype=None):
        return CUDA.scan("cumsum", x, axis, dtype)

    @staticmethod
    def cumprod(x, axis=None, dtype=None):
        return CUDA.scan("cumprod", x, axis, dtype)

    class logaddexp:  # (NumPy's ufunc, as ``xp.logaddexp.accumulate`` reads it)
        """NumPy's ``logaddexp`` ufunc: only its ``accumulate`` (a scan, NOTE [CUDA scans])."""

        def __new__(cls, a, b):
            raise _unsupported("numpy.logaddexp of two arrays")

        @staticmethod
        def accumulate(x, axis=0, dtype=None):
            return CUDA.scan("logcumsumexp", x, axis, dtype)

    # NumPy's ufunc methods ``maximum.accumulate``/``minimum.accumulate`` (what ``cummax``
    # and ``cummin`` read): the running maximum/minimum scans (NOTE [CUDA scans])
    # (attributes of the functions, as NumPy's ufuncs carry them: mypy types neither)
    maximum.__func__.accumulate = lambda x, axis=0, dtype=None: CUDA.scan(  # type: ignore[attr-defined]
        "cummax", x, axis, dtype
    )
    minimum.__func__.accumulate = lambda x, axis=0, dtype=None: CUDA.scan(  # type: ignore[attr-defined]
        "cummin", x, axis, dtype
    )

    @staticmethod
    def arange(start, stop=None, step=1, dtype=None):
        """NumPy's ``arange`` made on the device (``start + i * step``)."""
        if stop is None:
            start, stop = 0, start
        n = max(math.ceil((stop - start) / step), 0)
        if dtype is None:
            dtype = np.result_type(np.asarray(start), np.asarray(stop), np.asarray(step))
        out = CUDA.arange(n)  # 0 .. n - 1 in int64 (index.py's iota)
        if step != 1:
            out = CUDA.binary("multiply", out, step)
        if start != 0:
            out = CUDA.binary("add", out, start)
        return out.astype(dtype, copy=False)

    @staticmethod
    def concatenate(arrays, axis=0):
        return CUDA.concatenate(arrays, axis)

    @staticmethod
    def stack(arrays, axis=0):
        return CUDA.stack(arrays, axis)

    @staticmethod
    def flip(x, axis=None):
        return CUDA.flip(x, axis)

    @staticmethod
    def roll(x, shift, axis=None):
        return CUDA.roll(x, shift, axis)

    # -- end of reductions, scans, joining and reordering ---------------------------------

    # -- indexing, gather/scatter, sorting (index.py, sort.py) -----------------------------
    @staticmethod
    def take_along_axis(arr, indices, axis):
        return CUDA.take_along_axis(arr, indices, axis)

    @staticmethod
    def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise _unsupported("argsort with order=")
        return CUDA.argsort(a, axis)  # always stable (NOTE [CUDA sort])

    @staticmethod
    def indices(dimensions, dtype=int, sparse=False):
        return CUDA.indices(dimensions, dtype, sparse)

    @staticmethod
    def nonzero(a):
        return CUDA.nonzero(a)

    @staticmethod
    def shape(a):  # ``np.shape`` of a CUDA array (through ``CudaArray.__array_function__``)
        return a.shape

    @staticmethod
    def ndim(a):
        return a.ndim

    @staticmethod
    def moveaxis(a, source, destination):  # a view (median moves the reduced dims last)
        src = [source] if isinstance(source, (int, np.integer)) else list(source)
        dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
        src = [CUDA._axis(int(d), a.ndim) for d in src]
        dst = [CUDA._axis(int(d), a.ndim) for d in dst]
        if len(src) != len(dst):
            raise ValueError(
                "`source` and `destination` arguments must have the same number of elements"
            )
        order = [d for d in range(a.ndim) if d not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return a.transpose(order)

    @staticmethod
    def sort(a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise _unsupported("sort with order=")
        if axis is None:
            a, axis = a.reshape(-1), 0
        return CUDA.take_along_axis(a, CUDA.argsort(a, axis), axis)

    @staticmethod
    def searchsorted(a, v, side="left", sorter=None):
        if sorter is not None:
            raise _unsupported("searchsorted with sorter=")
        return CUDA.searchsorted(a, v, side)

    @staticmethod
    def lexsort(keys):
        """Indices sorting by the last key, ties broken by the one before, ... (NumPy's
        ``lexsort``): one stable argsort per key, the primary key last."""
        keys = list(keys)
        if not keys:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        order = CUDA.arange(keys[0].shape[0])
        for key in keys:
            order = order[CUDA.argsort(key[order], 0)]
        return order

    @staticmethod
    def flatnonzero(a):
        return CUDA.nonzero(a.reshape(-1))[0]

    @staticmethod
    def diff(a, n=1, axis=-1):
        if n != 1 or a.ndim != 1:
            raise _unsupported("diff of order other than 1 or along a dim of an n-d array")
        return CUDA.binary("subtract", a[1:], a[:-1])

    @staticmethod
    def append(arr, values, axis=None):
        if axis is not None:
            raise _unsupported("append along an axis")
        a = arr.reshape(-1) if isinstance(arr, CudaArray) else CUDA.full((1,), arr, np.int64)
        b = values.reshape(-1) if isinstance(values, CudaArray) else None
        dt = a.dtype if b is None else np.result_type(a.dtype, b.dtype)
        out = CudaArray.empty((a.size + (1 if b is None else b.size),), dt)
        CUDA.copy_into(out[: a.size], a)
        CUDA.copy_into(out[a.size :], values if b is None else b)
        return out

    @staticmethod
    def clip(a, a_min=None, a_max=None):  # clamp (nn.utils.clip_grad_norm_ in training loops)
        out = a if a_min is None else CUDA.binary("maximum", a, a_min)  # NaN stays NaN
        out = out if a_max is None else CUDA.binary("minimum", out, a_max)
        return out.astype(a.dtype, copy=False) if out is not a else a.copy()

    @staticmethod
    def count_nonzero(a, axis=None, keepdims=False):
        return CUDA.sum(CUDA.binary("not_equal", a, 0), axis, keepdims, None)

    class _Add:
        """``numpy.add`` on CUDA arrays: calling it adds; ``add.at`` accumulates in place."""

        def __call__(self, a, b):
            return CUDA.binary("add", a, b)

        def at(self, a, indices, b):
            CUDA.add_at(a, indices, b)

    add = _Add()

    # -- end of indexing, gather/scatter, sorting -------------------------------------------

    # -- the op database's gaps (ufunc .at, bincount, einsum, diagonal, tril/triu, fmod) ----

    @staticmethod
    def multiply(a, b):
        return CUDA.binary("multiply", a, b)

    # ``multiply.at``/``maximum.at``/``minimum.at`` (``scatter_reduce``): fold values into an
    # array in place (NOTE [CUDA multiply.at, maximum.at, minimum.at])
    # (attributes of the functions, as NumPy's ufuncs carry them: mypy types neither)
    multiply.__func__.at = lambda a, indices, b: CUDA.reduce_at(  # type: ignore[attr-defined]
        "multiply", a, indices, b
    )
    maximum.__func__.at = lambda a, indices, b: CUDA.reduce_at(  # type: ignore[attr-defined]
        "maximum", a, indices, b
    )
    minimum.__func__.at = lambda a, indices, b: CUDA.reduce_at(  # type: ignore[attr-defined]
        "minimum", a, indices, b
    )

    @staticmethod
    def fmod(a, b):
        return CUDA.binary("fmod", a, b)

    @staticmethod
    def floor_divide(a, b):
        return CUDA.binary("floor_divide", a, b)

    @staticmethod
    def remainder(a, b):
        """NumPy's remainder (the sign of the divisor), as its ``npy_divmod``: ``fmod``,
        moved by ``b`` where it is nonzero and its sign differs from ``b``'s."""
        r = CUDA.binary("fmod", a, b)
        r_neg = CUDA.binary("less", r, 0)
        if isinstance(b, CudaArray):
            differ = CUDA.binary("not_equal", r_neg, CUDA.binary("less", b, 0))
        else:  # a scalar divisor: its sign is known here
            differ = CUDA.map("logical_not", r_neg) if b < 0 else r_neg
        fix = CUDA.binary("logical_and", CUDA.binary("not_equal", r, 0), differ)
        return CUDA.where(fix, CUDA.binary("add", r, b), r)

    @staticmethod
    def trunc(x):
        return CUDA.map("trunc", x)

    @staticmethod
    def true_divide(a, b):
        return CUDA.binary("true_divide", a, b)

    @staticmethod
    def diagonal(a, offset=0, axis1=0, axis2=1):
        """``np.diagonal``: a strided view (the diagonal last), as NumPy's and PyTorch's."""
        nd = a.ndim
        if nd < 2:
            raise ValueError("diag requires an array of at least two dimensions")
        a1, a2 = axis1 % nd, axis2 % nd
        if a1 == a2:
            raise ValueError("axis1 and axis2 cannot be the same")
        n1, n2 = a.shape[a1], a.shape[a2]
        if offset >= 0:
            n, off = max(0, min(n1, n2 - offset)), a._off + offset * a._st[a2]
        else:
            n, off = max(0, min(n1 + offset, n2)), a._off - offset * a._st[a1]
        rest = [i for i in range(nd) if i not in (a1, a2)]
        shape = (*(a.shape[i] for i in rest), n)
        st = (*(a._st[i] for i in rest), a._st[a1] + a._st[a2])
        return a._view(shape, st, off if n else a._off)

    @staticmethod
    def _triangle(x, k, lower):
        """``x`` with the entries above (``lower``) or below the ``k``-th diagonal zeroed,
        over the last two dims."""
        m, n = x.shape[-2:]
        rows = CUDA.arange(m).reshape((m, 1))
        cols = CUDA.arange(n).reshape((1, n))
        diff = CUDA.binary("subtract", cols, rows)  # col - row
        keep = CUDA.binary("less_equal" if lower else "greater_equal", diff, int(k))
        return CUDA.where(keep, x, x.dtype.type(0))

    @staticmethod
    def tril(x, k=0):
        return CudaXP._triangle(x, k, True)

    @staticmethod
    def triu(x, k=0):
        return CudaXP._triangle(x, k, False)

    @staticmethod
    def einsum(subscripts, *operands, optimize=False):
        """``np.einsum`` in the explicit form with distinct subscripts per operand (what the
        ``Einsum`` op binds): each operand first sums the indices no one else needs, then
        the operands fold left to right, every pair as one batched ``matmul`` (batch,
        kept-left, contracted, kept-right indices). ``optimize`` (the contraction order) is
        accepted as NumPy's and ignored: the left-to-right order is always valid."""
        lhs, out = subscripts.replace(" ", "").split("->")
        ins = lhs.split(",")
        if len(ins) != len(operands) or any(len(set(s)) != len(s) for s in ins):
            raise ValueError(f"einsum on CUDA arrays: unsupported subscripts {subscripts!r}")
        sizes = {}
        for sub, x in zip(ins, operands, strict=True):
            if not isinstance(x, CudaArray):
                raise device_mismatch("cuda:0", "cpu")
            if len(sub) != x.ndim:
                raise ValueError(f"einsum: operand has {x.ndim} dims, subscripts {sub!r}")
            for c, n in zip(sub, x.shape, strict=True):
                if sizes.setdefault(c, n) != n:
                    raise ValueError(f"einsum: size mismatch for index {c!r}")

        def drop(sub, x, keep):  # sum the indices nothing later needs
            gone = tuple(i for i, c in enumerate(sub) if c not in keep)
            if not gone:
                return sub, x
            return "".join(c for c in sub if c in keep), CUDA.sum(x, gone, False, None)

        def arrange(sub, x, order):  # transpose to ``order``, contiguous
            return CudaXP.ascontiguousarray(x.transpose(tuple(sub.index(c) for c in order)))

        acc_sub, acc = drop(ins[0], operands[0], set(out).union(*ins[1:]))
        for k in range(1, len(ins)):
            keep = set(out).union(*ins[k + 1 :])  # what is needed after this pair
            sub, x = drop(ins[k], operands[k], keep | set(acc_sub))
            batch = [c for c in acc_sub if c in sub and c in keep]
            inner = [c for c in acc_sub if c in sub and c not in keep]
            left = [c for c in acc_sub if c not in sub]
            right = [c for c in sub if c not in acc_sub]
            nb, nl, nr, ni = (math.prod(sizes[c] for c in g) for g in (batch, left, right, inner))
            a = arrange(acc_sub, acc, batch + left + inner).reshape((nb, nl, ni))
            b = arrange(sub, x, batch + inner + right).reshape((nb, ni, nr))
            acc = CUDA.matmul(a, b).reshape(tuple(sizes[c] for c in batch + left + right))
            acc_sub = "".join(batch + left + right)
        acc_sub, acc = drop(acc_sub, acc, set(out))
        return arrange(acc_sub, acc, list(out))

    @staticmethod
    def bincount(x, weights=None, minlength=0):
        """``np.bincount`` of a 1-D non-negative integer CUDA array: atomic adds of ones (or
        of ``weights``, counted in float64 as NumPy's) into the bins. The number of bins
        depends on the data: one device-to-host read of the largest entry."""
        if x.ndim != 1 or x.dtype.kind not in "iu":
            raise TypeError("bincount: x must be a 1-D array of non-negative integers")
        lo, hi = CUDA.index_minmax(x) if x.size else (0, -1)
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        dtype = np.int64 if weights is None else np.float64
        out = CUDA.zeros((max(hi + 1, int(minlength)),), dtype)
        CUDA.add_at(out, (x,), 1 if weights is None else weights)
        return out

    # -- end of the op database's gaps -------------------------------------------------------

    # -- linalg (linalg.py: NOTE [CUDA decompositions]) --------------------------------------
    # ``np.linalg.<name>(cuda_array)`` reaches these through ``CudaArray.__array_function__``
    # (by name), with NumPy's signatures; failures raise ``LinAlgError`` with the CPU op's
    # message (NOTE [CUDA linalg status]).
    @staticmethod
    def solve(a, b):
        return CUDA.solve(a, b)

    @staticmethod
    def inv(a):
        return CUDA.inv(a)

    @staticmethod
    def det(a):
        return CUDA.det(a)

    @staticmethod
    def slogdet(a):
        return CUDA.slogdet(a)

    @staticmethod
    def cholesky(a, /, *, upper=False):
        low = CUDA.cholesky(a)
        return CudaXP.ascontiguousarray(CudaXP.swapaxes(low, -1, -2)) if upper else low

    @staticmethod
    def qr(a, mode="reduced"):
        return CUDA.qr(a, mode)

    @staticmethod
    def eigh(a, UPLO="L"):  # noqa: N803  (NumPy's name)
        return CUDA.eigh(a, UPLO)

    @staticmethod
    def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
        if hermitian:
            return CudaXP._svd_hermitian(a, compute_uv)
        u, s, vh = CUDA.svd(a, full_matrices)
        return (u, s, vh) if compute_uv else s

    @staticmethod
    def dot(a, b):
        """NumPy's ``dot`` of vectors and matrices (``matmul`` of 1-D and 2-D operands)."""
        if a.ndim > 2 or b.ndim > 2 or a.ndim == 0 or b.ndim == 0:
            raise _unsupported("dot of 0-d or more than 2-d arrays")
        return CUDA.matmul(a, b)

    # -- end of linalg -------------------------------------------------------------------------

    # -- svd(hermitian=True) (NumPy's formula on the Jacobi eigh: NOTE [CUDA decompositions]) --
    @staticmethod
    def _svd_hermitian(a, compute_uv):
        """NumPy's ``linalg.svd(a, hermitian=True)`` from the eigendecomposition of the
        symmetric ``a`` (``eigh`` of its lower triangle): the singular values ``|w|``
        descending, ``u`` the eigenvectors in that order, ``vh = (u * sign(w))^T`` (a zero
        eigenvalue gives a zero row, as NumPy's); no host copy beyond ``eigh``'s status."""
        w, u = CUDA.eigh(a, "L")
        s = CUDA.map("abs", w)
        order = CUDA.flip(CUDA.argsort(s, -1), -1)  # descending (ties: the later first)
        s = CUDA.take_along_axis(s, order, -1)
        if not compute_uv:
            return s
        row = (*order.shape[:-1], 1, order.shape[-1])
        sgn = CUDA.take_along_axis(CUDA.map("sign", w), order, -1).reshape(row)
        u = CUDA.take_along_axis(u, order.reshape(row).broadcast_to(u.shape), -1)
        vh = CudaXP.ascontiguousarray(CudaXP.swapaxes(CUDA.multiply(u, sgn), -1, -2))
        return u, s, vh

    # -- end of svd(hermitian=True) ------------------------------------------------------------


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


# NOTE [CUDA mask scatter]
# Indexing by a bool mask, ``x[mask]``, has a result whose length is the mask's True count,
# so its forward reads the mask on the host once (``np.nonzero``). Its backward adds the
# gradient ``g`` back at the True positions (``np.add.at(zeros, mask, g)``), and there the
# count is known without a read: it is ``g``'s length along the mask's dim. So ``add_at``
# passes the values' shape to ``_adv_plan``, and for a key whose one index array is a CUDA
# bool mask, the True positions are made on the device (``mask_nonzero``): an inclusive scan
# of the flattened mask numbers the True entries, and ``mask_coords_kernel`` writes each
# entry's coordinates at its number. No device-to-host copy. The count is trusted (the only
# ``add.at`` with a bool mask is that adjoint, whose ``g`` has the forward's shape); a count
# that did not match could not write out of bounds: coordinates past it are not written,
# and the ones never written stay ``BAD`` (out of range, so never used by the index kernels).


CudaXP = _XP()


class CudaBackend(ReduceMethods, IndexMethods, RandomMethods, SpecialMethods, LinalgMethods):
    """CUDA device arrays (``CudaArray``) and numba ``@cuda.jit`` kernels."""

    name = "cuda"
    xp = CudaXP
    fft = None  # real-valued kernels: no FFTs (docs/gpu.rst)
    math = CudaMath()
    KERNEL_MIN = 0  # every size runs the fused kernels: there is no host fallback
    PARALLEL_MIN = 0
    THREAD_MIN = 0

    def owns(self, array) -> bool:
        return isinstance(array, CudaArray)

    # -- allocation ------------------------------------------------------------------------
    def empty(self, shape, dtype):
        return CudaArray.empty(shape, dtype)

    def full(self, shape, value, dtype):
        out = CudaArray.empty(shape, dtype)
        self.copy_into(out, value)
        return out

    def zeros(self, shape, dtype):
        return self.full(shape, 0, dtype)

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
        out = CudaArray.empty(x.shape, dt)
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
                return CudaXP.remainder(_as_operand(a, dev), _as_operand(b, dev))
            if name == "nextafter":  # special.py
                return self.special_binary(name, a, b)
            raise _unsupported(name)
        a = _as_operand(a, dev)
        b = _as_operand(b, dev)
        dt = _result_dtype(name, a, b)
        if isinstance(a, CudaArray) and isinstance(b, CudaArray):
            shape = np.broadcast_shapes(a.shape, b.shape)
            out = CudaArray.empty(shape, dt)
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
        out = CudaArray.empty(arr.shape, dt)
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
            return self.multiply(g, derivative(CUDA.math, s))
        if not isinstance(g, CudaArray):
            raise device_mismatch(f"cuda:{s.device_index}", "cpu")
        dt = s.dtype if g.dtype == s.dtype else np.result_type(g.dtype, s.dtype)
        out = CudaArray.empty(s.shape, dt)
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
        out = CudaArray.empty(shape, dt)
        args = []
        for x in arrays:
            st, off = _bcast_st(x, shape)
            args += [x._buf, off, st]
        launch(K.where_kernel, out.size, out.size, *args, shape or (1,), out._buf)
        return out

    def nan_to_num(self, x, copy=True, nan=0.0, posinf=None, neginf=None):
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
        out = CudaArray.empty(oshape, dtype)
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
        part = CudaArray.empty((nout * chunks,), np.int64 if dtype.kind in "biu" else np.float64)
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
        out = CudaArray.empty((*batch, m, n), dt)
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

    # -- indices ---------------------------------------------------------------------------
    def first_out_of_range(self, idx, size):
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


CUDA: CudaBackend = CudaBackend()
register_backend("cuda", CUDA)

if TYPE_CHECKING:  # mypy checks the CUDA backend against the protocol (NOTE [Backend protocol])
    _CHECK: Backend = CUDA
