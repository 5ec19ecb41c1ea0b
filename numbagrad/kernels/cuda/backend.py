"""The CUDA backend (NOTE [Backends]): numba ``@cuda.jit`` kernels on ``CudaArray`` views.

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

import numpy as np

from numbagrad.kernels import LinAlgError, module, register_backend
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.array import CudaArray, contiguous_strides, device_mismatch
from numbagrad.kernels.cuda.launch import current_stream, launch, launch_2d, launch_blocks

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


def _unsupported(what):
    return NotImplementedError(
        f"{what} is not implemented for CUDA tensors yet; move the tensor to the CPU with .cpu()"
    )


def _meta(a):
    """``(shape, strides)`` tuples a kernel takes; a 0-d array as shape ``(1,)``."""
    if a.ndim == 0:
        return (1,), (0,)
    return a.shape, a._st


def _coalesce(shape, *sts):
    """``shape`` and the operands' strides ``sts`` with adjacent dims merged where every
    operand steps through them as through one dim, and size-1 dims dropped (NumPy's
    iterator coalescing): a contiguous operand of any rank becomes 1-d, so the kernels'
    ``_offset`` does no integer division for it (NOTE [CUDA launches])."""
    if len(shape) <= 1:
        return shape, sts
    keep = [k for k, n in enumerate(shape) if n != 1] or [len(shape) - 1]
    out_shape = [shape[keep[0]]]
    out_sts = [[st[keep[0]]] for st in sts]
    for k in keep[1:]:
        n = shape[k]
        if all(t[-1] == st[k] * n for t, st in zip(out_sts, sts)):
            out_shape[-1] *= n
            for t, st in zip(out_sts, sts):
                t[-1] = st[k]
        else:
            out_shape.append(n)
            for t, st in zip(out_sts, sts):
                t.append(st[k])
    return tuple(out_shape), tuple(tuple(t) for t in out_sts)


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
        return np.asarray(_UFUNCS.get(name, getattr(np, name))(proto(a), proto(b))).dtype


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
    maximum.__func__.accumulate = lambda x, axis=0, dtype=None: CUDA.scan("cummax", x, axis, dtype)
    minimum.__func__.accumulate = lambda x, axis=0, dtype=None: CUDA.scan("cummin", x, axis, dtype)

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
    multiply.__func__.at = lambda a, indices, b: CUDA.reduce_at("multiply", a, indices, b)
    maximum.__func__.at = lambda a, indices, b: CUDA.reduce_at("maximum", a, indices, b)
    minimum.__func__.at = lambda a, indices, b: CUDA.reduce_at("minimum", a, indices, b)

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
        return CUDA.lu_solve(a, b, "solve")

    @staticmethod
    def inv(a):
        return CUDA.lu_solve(a, None, "inv")

    @staticmethod
    def det(a):
        sign, logabs = CUDA.slogdet(a)
        return CUDA.multiply(sign, CUDA.map("exp", logabs))

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
def _mask_count(mask, d, v, narrays, value_shape):
    """The True count of the bool ``mask`` at dim ``d`` of the view ``v`` read from the shape
    of the values added there, or None (NOTE [CUDA mask scatter])."""
    if value_shape is None or narrays != 1 or not isinstance(mask, CudaArray):
        return None
    k = mask.ndim
    if len(value_shape) != v.ndim - k + 1:
        return None
    if tuple(value_shape[:d]) != v.shape[:d] or tuple(value_shape[d + 1 :]) != v.shape[d + k :]:
        return None
    return int(value_shape[d])


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
            if name == "remainder":  # fmod and a sign fix (``_XP.remainder``)
                return CudaXP.remainder(_as_operand(a, dev), _as_operand(b, dev))
            if name == "nextafter":  # special.py
                return CudaBackend.special_binary(name, a, b)
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

    @staticmethod
    def multiply(a, b):
        return CudaBackend.binary("multiply", a, b)

    @staticmethod
    def divide(a, b):
        return CudaBackend.binary("true_divide", a, b)

    @staticmethod
    def outer(a, b):
        """``out[..., i, j] = a[..., i] * b[..., j]`` (``Outer``): a broadcasting product."""
        return CudaBackend.binary(
            "multiply", a.reshape((*a.shape, 1)), b.reshape((*b.shape[:-1], 1, b.shape[-1]))
        )

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

    # -- reductions, scans, joining and reordering (reduce.py, scan.py, join.py) -----------
    @staticmethod
    def _plan(x, dims, keepdim, name):
        """``(oshape, nout, r, shape, st)`` of a reduction of ``x`` over ``dims`` (None: all):
        the reduced dims moved last (NOTE [CUDA reductions]); ``shape``/``st`` permuted."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        nd = x.ndim
        if dims is None:
            dims = tuple(range(nd))
        elif isinstance(dims, (int, np.integer)):
            dims = (int(dims),)
        for d in dims:
            if not (-nd <= d < nd or (nd == 0 and d in (0, -1))):
                raise IndexError(
                    f"{name}(): Dimension out of range (expected to be in range of "
                    f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {d})"
                )
        dims = tuple(sorted({d % nd for d in dims})) if nd else ()
        kept = tuple(i for i in range(nd) if i not in dims)
        oshape = (
            tuple(1 if i in dims else x.shape[i] for i in range(nd))
            if keepdim
            else tuple(x.shape[i] for i in kept)
        )
        perm = kept + dims
        shape = tuple(x.shape[i] for i in perm) or (1,)
        st = tuple(x._st[i] for i in perm) or (0,)
        nout = math.prod(x.shape[i] for i in kept)
        return oshape, nout, math.prod(x.shape[i] for i in dims), shape, st

    @staticmethod
    def _threads(r):
        """The block size of a tree over ``r`` elements: a power of two up to ``KR.TPB``."""
        threads = 1
        while threads < min(r, KR.TPB):
            threads *= 2
        return threads

    @staticmethod
    def reduce(name, x, dims, keepdim, dtype=None):
        """``prod``, ``amax``, ``amin``, ``all``, ``any`` or ``nansum`` over ``dims`` (None: all;
        ``()``: none) with a shared-memory tree per output (NOTE [CUDA reductions]); max and min
        propagate NaN, as PyTorch's. ``amax``/``amin`` of no elements raise ValueError,
        as NumPy's."""
        oshape, nout, r, shape, st = CudaBackend._plan(x, dims, keepdim, name)
        if name in ("all", "any"):
            dt = np.dtype(bool)
        elif dtype is not None:
            dt = np.dtype(dtype)
        else:
            dt = x.dtype
        out = CudaArray.empty(oshape, dt)
        if nout == 0:
            return out
        if r == 0 and name in ("amax", "amin"):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        op = KR.REDUCE[name]
        if dt.kind == "f" and name not in ("all", "any"):
            kern = KR.reduce_kernel
            identity = {"prod": 1.0, "amax": -math.inf, "amin": math.inf, "nansum": 0.0}[name]
        else:
            if dt.kind not in "biu":
                raise _unsupported(f"{name} of {dt} tensors")
            kern = KR.reduce_int_kernel
            info = np.iinfo(np.int64)
            identity = {"prod": 1, "amax": info.min, "amin": info.max, "all": 1, "any": 0}[name]
        # (the float kernel reads any input dtype as float64: an integer product asked for
        # in a floating dtype needs no cast first)
        launch_blocks(
            kern,
            nout,
            CudaBackend._threads(r),
            op,
            nout,
            r,
            x._buf,
            x._off,
            shape,
            st,
            identity,
            out._buf,
        )
        return out

    @staticmethod
    def prod(x, dims, keepdim, dtype=None):
        """The product over ``dims`` (NumPy's ``prod``: integers and bools in int64)."""
        if dtype is None:
            dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
        return CudaBackend.reduce("prod", x, dims, keepdim, dtype)

    @staticmethod
    def argreduce(is_max, x, dim, keepdim):
        """The int64 index of the first maximum (``is_max``) or minimum along ``dim`` (None:
        of the flattened array); a NaN wins, as in PyTorch (the first NaN's index)."""
        name = "argmax" if is_max else "argmin"
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if x.dtype.kind not in "fiub":
            raise _unsupported(f"{name} of {x.dtype} tensors")
        # (dim None: every dim reduced, in order: the row-major flattening, read in place)
        dims = None if dim is None else (dim,)
        oshape, nout, r, shape, st = CudaBackend._plan(x, dims, keepdim, name)
        out = CudaArray.empty(oshape, np.int64)
        if nout == 0:
            return out
        if r == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        kern = KR.argreduce_kernel if x.dtype.kind == "f" else KR.argreduce_int_kernel
        launch_blocks(
            kern,
            nout,
            CudaBackend._threads(r),
            is_max,
            nout,
            r,
            x._buf,
            x._off,
            shape,
            st,
            out._buf,
        )
        return out

    @staticmethod
    def var(x, dims, ddof, keepdim, dtype=None):
        """NumPy's ``var``: the mean of the squared deviations from the mean, divided by
        ``n - ddof``; two passes of device kernels (sum, then sum of squares)."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if dtype is not None:
            x = x.astype(dtype, copy=False)
        elif x.dtype.kind != "f":
            x = x.astype(np.float64)
        _, _, n, _, _ = CudaBackend._plan(x, dims, keepdim, "var")
        mean = CudaBackend.binary("true_divide", CudaBackend.sum(x, dims, True, None), n)
        d = CudaBackend.binary("subtract", x, mean)
        ss = CudaBackend.sum(CudaBackend.multiply(d, d), dims, keepdim, None)
        return CudaBackend.binary("true_divide", ss, float(n - ddof))

    @staticmethod
    def scan(name, x, dim, dtype=None):
        """``cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax`` or ``cummin`` (the running
        maximum/minimum values) along ``dim`` (None: of the flattened array) with NumPy's
        dtypes (sums and products of integers and bools in int64 unless ``dtype``); one
        block per row scans it (NOTE [CUDA scans])."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        nd = x.ndim
        if dim is not None and not -max(nd, 1) <= dim < max(nd, 1):
            raise IndexError(
                f"{name}(): Dimension out of range (expected to be in range of "
                f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {dim})"
            )
        if dtype is None:  # (NumPy's running max/min keep the dtype; sums of ints: int64)
            keep = x.dtype.kind not in "biu" or name in ("cummax", "cummin")
            dtype = x.dtype if keep else np.int64
        dt = np.dtype(dtype)
        if dt.kind not in "fiub" or x.dtype.kind not in "fiub":
            raise _unsupported(f"{name} of {x.dtype} tensors to {dt}")
        if name == "logcumsumexp" and dt.kind != "f":
            raise TypeError(f"{name}: expected a floating array, got {dt}")
        if dim is None or nd == 0:
            # one row: the row-major flattening (of a 0-d array, its element), read in place
            out = CudaArray.empty((x.size,) if dim is None else (), dt)
            nrow, r = 1, x.size
            shape, st = _meta(x)
            ost = contiguous_strides(shape)
        else:
            dim %= nd
            out = CudaArray.empty(x.shape, dt)
            r = x.shape[dim]
            nrow = x.size // r if r else 0
            perm = (*(i for i in range(nd) if i != dim), dim)
            shape = tuple(x.shape[i] for i in perm)
            st = tuple(x._st[i] for i in perm)
            ost = tuple(out._st[i] for i in perm)
        if nrow == 0 or r == 0:
            return out
        if dt.kind == "f":
            identity = {"cumsum": 0.0, "cumprod": 1.0, "logcumsumexp": -math.inf}.get(name)
            kern = KS.scan_kernel
        else:
            identity = {"cumsum": 0, "cumprod": 1}.get(name)
            kern = KS.scan_int_kernel
        if identity is None:  # the running max/min: the lowest/highest value
            big = math.inf if dt.kind == "f" else int(np.iinfo(np.int64).max)
            identity = -big - (dt.kind != "f") if name == "cummax" else big
        threads = 1
        while threads < min(r, KS.TPB):
            threads *= 2
        launch_blocks(
            kern,
            nrow,
            threads,
            KS.SCAN[name],
            nrow,
            r,
            x._buf,
            x._off,
            shape,
            st,
            out._buf,
            0,
            ost,
            identity,
        )
        return out

    @staticmethod
    def concatenate(arrays, axis=0):
        """NumPy's ``concatenate``: one strided copy of each operand into its slice of the
        result (no kernel of its own, see ``join.py``)."""
        arrays = list(arrays)
        if not arrays:
            raise ValueError("need at least one array to concatenate")
        for a in arrays:
            if not isinstance(a, CudaArray):
                raise device_mismatch(f"cuda:{arrays[0].device_index}", "cpu")
        if axis is None:
            arrays, axis = [a.reshape(-1) for a in arrays], 0
        nd = arrays[0].ndim
        if nd == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        if not -nd <= axis < nd:
            raise IndexError(
                f"concatenate: axis {axis} is out of bounds for array of dimension {nd}"
            )
        axis %= nd
        ref = arrays[0].shape
        for i, a in enumerate(arrays):
            same = all(p == q for k, (p, q) in enumerate(zip(a.shape, ref)) if k != axis)
            if a.ndim != nd or not same:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {axis}, the array at index 0 has "
                    f"shape {ref} and the array at index {i} has shape {a.shape}"
                )
        dt = np.result_type(*(a.dtype for a in arrays))
        shape = list(ref)
        shape[axis] = sum(a.shape[axis] for a in arrays)
        out = CudaArray.empty(tuple(shape), dt)
        start = 0
        lead = (slice(None),) * axis
        for a in arrays:
            n = a.shape[axis]
            if n:
                CudaBackend.copy_into(out[(*lead, slice(start, start + n))], a)
            start += n
        return out

    @staticmethod
    def stack(arrays, axis=0):
        """NumPy's ``stack``: the operands, each given a new ``axis``, concatenated."""
        arrays = list(arrays)
        if not arrays:
            raise ValueError("need at least one array to stack")
        ref = getattr(arrays[0], "shape", None)
        if any(getattr(a, "shape", None) != ref for a in arrays):
            raise ValueError("all input arrays must have the same shape")
        nd = len(ref) + 1
        if not -nd <= axis < nd:
            raise IndexError(f"stack: axis {axis} is out of bounds for array of dimension {nd}")
        axis %= nd
        shape = (*ref[:axis], 1, *ref[axis:])
        return CudaBackend.concatenate([a.reshape(shape) for a in arrays], axis)

    @staticmethod
    def flip(x, dims=None):
        """``x`` reversed along ``dims`` (None: all) as a zero-copy negative-stride view."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        nd = x.ndim
        if dims is None:
            dims = tuple(range(nd))
        elif isinstance(dims, (int, np.integer)):
            dims = (int(dims),)
        st, off = list(x._st), x._off
        for d in dims:
            if not -nd <= d < nd:
                raise IndexError(f"flip: axis {d} is out of bounds for array of dimension {nd}")
            d %= nd
            if x.shape[d] > 1:
                off += (x.shape[d] - 1) * st[d]
                st[d] = -st[d]
        return x._view(x.shape, tuple(st), off)

    @staticmethod
    def roll(x, shifts, dims=None):
        """NumPy's ``roll``: each output element gathered from its shifted position by the
        ``join.roll_kernel`` (``dims`` None: of the flattened array)."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if dims is None:
            return CudaBackend.roll(x.reshape(-1), shifts, 0).reshape(x.shape)
        shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
        dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
        if len(shifts) != len(dims):
            if len(shifts) == 1:
                shifts = shifts * len(dims)
            elif len(dims) == 1:
                dims = dims * len(shifts)
            else:
                raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences")
        nd = x.ndim
        total = [0] * max(nd, 1)
        for s, d in zip(shifts, dims):
            if not -max(nd, 1) <= d < max(nd, 1):
                raise IndexError(f"roll: axis {d} is out of bounds for array of dimension {nd}")
            total[d % max(nd, 1)] += int(s)
        shape, st = _meta(x)
        total = tuple(t % n if n else 0 for t, n in zip(total, shape))
        out = CudaArray.empty(x.shape, x.dtype)
        launch(KJ.roll_kernel, x.size, x.size, x._buf, x._off, shape, st, total, out._buf)
        return out

    # -- end of reductions, scans, joining and reordering ---------------------------------

    # -- indexing, gather/scatter, sorting (index.py, sort.py) -----------------------------
    # NOTE [CUDA index validation]
    # Index values are checked on the host before any kernel of the op runs: a min/max
    # kernel over the index array and one 2-element device->host copy (the index tensor
    # itself stays on the device), raising IndexError as the CPU path does; a bool mask is
    # copied to the host to find its true positions (their count is the result's shape),
    # and host (NumPy) index arrays are copied to the device, as PyTorch accepts CPU
    # indices for CUDA tensors. ``add.at`` (NumPy's ``np.add.at``: the backward of indexing
    # and of ``gather``, ``scatter_add``, ``index_add``) does not check again: its indices
    # were checked by the forward op (or by ``scatter_add``/``index_add`` before they bind
    # it), so backward makes no device->host copy for integer indices. Every kernel also
    # guards each index against its dimension (NOTE [CUDA advanced indexing]).
    @staticmethod
    def arange(n):
        """``0 .. n-1`` (int64) made on the device."""
        out = CudaArray.empty((n,), np.int64)
        launch(KX.iota_kernel, n, n, out._buf)
        return out

    @staticmethod
    def index_minmax(idx):
        """``(min, max)`` of a non-empty integer or bool CUDA array, as Python ints."""
        if idx.dtype.kind not in "biu":
            raise _unsupported(f"min/max of {idx.dtype} arrays (use numbagrad.amax/amin)")
        if idx.size == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        res = CudaArray.empty((2,), np.int64)
        CudaBackend.copy_into(res[0:1], np.iinfo(np.int64).max)
        CudaBackend.copy_into(res[1:2], np.iinfo(np.int64).min)
        shape, st = _meta(idx)
        launch(KX.minmax_kernel, idx.size, idx.size, idx._buf, idx._off, shape, st, res._buf)
        lo, hi = res.to_host().tolist()
        return lo, hi

    @staticmethod
    def _axis(axis, nd):
        """``axis`` wrapped into ``[0, nd)``; NumPy's AxisError when out of range."""
        if not -nd <= axis < nd:
            raise np.exceptions.AxisError(axis, nd)
        return axis % nd

    @staticmethod
    def _device_index(k):
        """An index array on the device (a host one copied there, as PyTorch allows)."""
        if isinstance(k, CudaArray):
            return k
        return CudaArray.from_host(np.asarray(k))

    @staticmethod
    def _check_range(idx, size, dim):
        """IndexError unless every entry of ``idx`` (a device or host array) is in
        ``[-size, size)``."""
        if idx.size:
            if isinstance(idx, CudaArray):
                lo, hi = CudaBackend.index_minmax(idx)
            else:
                lo, hi = int(idx.min()), int(idx.max())
            if lo < -size or hi >= size:
                bad = hi if hi >= size else lo
                raise IndexError(
                    f"index {bad} is out of bounds for dimension {dim} with size {size}"
                )

    @staticmethod
    def _adv_plan(a, key, check, value_shape=None):
        """NumPy's advanced indexing ``a[key]`` planned (NOTE [CUDA advanced indexing]):
        ``(view, pairs, bshape, pre, post, oshape)``: the view after the key's slices,
        ``None`` and ``...``; ``(dim, index array)`` pairs (a bool mask as its nonzero
        arrays); their broadcast shape; the view's dims before and after the index block in
        the result; the result's shape. Index values are checked when ``check``. The shape
        of an ``add.at``'s values, ``value_shape``, may give a bool mask's True count (NOTE
        [CUDA mask scatter])."""
        if not isinstance(key, tuple):
            key = (key,)
        ents = []
        for k in key:
            if isinstance(k, list):
                k = np.asarray(k)
            elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
                k = np.asarray(int(k), np.int64)  # an int among index arrays is one, 0-d
            elif not (k is None or k is Ellipsis or isinstance(k, (slice, CudaArray, np.ndarray))):
                raise IndexError(f"unsupported index of a CUDA array: {type(k).__name__}")
            if isinstance(k, (CudaArray, np.ndarray)):
                if k.dtype.kind not in "biu":
                    raise IndexError("tensors used as indices must be long, int, byte or bool")
                if k.dtype.kind == "b" and k.ndim == 0:
                    raise IndexError("a 0-d bool index of a CUDA array is not supported")
            ents.append(k)

        def used(k):
            if isinstance(k, (CudaArray, np.ndarray)):
                return k.ndim if k.dtype.kind == "b" else 1
            return 0 if k is None or k is Ellipsis else 1

        nused = sum(used(k) for k in ents)
        if nused > a.ndim:
            raise IndexError(f"too many indices for tensor of dimension {a.ndim}")
        if sum(k is Ellipsis for k in ents) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        basic, arrays, d = [], [], 0
        for k in ents:
            if k is Ellipsis:
                basic.append(k)
                d += a.ndim - nused
            elif k is None or isinstance(k, slice):
                basic.append(k)
                d += 1
            else:
                basic.extend([slice(None)] * used(k))
                arrays.append((d, k))
                d += used(k)
        v = a[tuple(basic)]  # slices, None, ...: a view
        pairs = []
        for d, k in arrays:
            if k.dtype.kind == "b":
                if tuple(k.shape) != v.shape[d : d + k.ndim]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {d} does not match "
                        f"the shape of the indexed tensor {list(v.shape)} at index {d}"
                    )
                count = _mask_count(k, d, v, len(arrays), value_shape)
                if count is None:
                    host = k.to_host() if isinstance(k, CudaArray) else k
                    nz = CudaArray.from_host(np.stack(np.nonzero(host)).astype(np.int64))
                else:  # no host read (NOTE [CUDA mask scatter])
                    nz = CudaBackend.mask_nonzero(k, count)
                pairs.extend((d + j, nz[j]) for j in range(k.ndim))
            else:
                if check:  # before any copy or launch (a host index is checked there)
                    CudaBackend._check_range(k, v.shape[d], d)
                pairs.append((d, CudaBackend._device_index(k)))
        try:
            bshape = tuple(np.broadcast_shapes(*(p[1].shape for p in pairs)))
        except ValueError:
            shapes = " ".join(str(tuple(p[1].shape)) for p in pairs)
            raise IndexError(
                f"shape mismatch: indexing tensors could not be broadcast together with "
                f"shapes {shapes}"
            ) from None
        adims = [p[0] for p in pairs]
        rest = [i for i in range(v.ndim) if i not in adims]
        if adims == list(range(adims[0], adims[0] + len(adims))):  # adjacent: in place
            pre = [i for i in rest if i < adims[0]]
            post = [i for i in rest if i > adims[-1]]
        else:  # separated: the index dims first
            pre, post = [], rest
        oshape = tuple(v.shape[i] for i in pre) + bshape + tuple(v.shape[i] for i in post)
        return v, pairs, bshape, pre, post, oshape

    @staticmethod
    def _adv_args(plan):
        """The layout arguments of the index kernels after ``buf``: ``adv`` built on the
        device (one launch per index array), ``nb``, ``npost`` and the pre/post dims."""
        v, pairs, bshape, pre, post, _ = plan
        nb = math.prod(bshape)
        adv = CudaBackend.full(bshape, v._off, np.int64)
        for d, idx in pairs:
            ist, ioff = _bcast_st(idx, bshape)
            launch(
                KX.adv_offset_kernel,
                nb,
                nb,
                adv._buf,
                idx._buf,
                ioff,
                ist,
                bshape or (1,),
                v.shape[d],
                v._st[d],
            )
        return (
            adv._buf,
            nb,
            math.prod(v.shape[i] for i in post),
            tuple(v.shape[i] for i in pre) or (1,),
            tuple(v._st[i] for i in pre) or (0,),
            tuple(v.shape[i] for i in post) or (1,),
            tuple(v._st[i] for i in post) or (0,),
        )

    @staticmethod
    def index_get(a, key):
        """``a[key]`` for a key with index arrays (NumPy's advanced indexing): a copy."""
        plan = CudaBackend._adv_plan(a, key, check=True)
        oshape = plan[-1]
        out = CudaArray.empty(oshape, a.dtype, a.device_index)
        n = out.size
        if n:
            launch(KX.take_kernel, n, n, plan[0]._buf, *CudaBackend._adv_args(plan), out._buf)
        return out

    @staticmethod
    def _scatter(kernel, a, key, value, check, cast, mask_count=False):
        if not isinstance(a, CudaArray):  # a host target with device indices or values
            raise device_mismatch("cuda:0", "cpu")
        vshape = value.shape if mask_count and isinstance(value, CudaArray) else None
        plan = CudaBackend._adv_plan(a, key, check, vshape)
        oshape = plan[-1]
        if isinstance(value, np.ndarray):
            if value.ndim:
                raise device_mismatch(f"cuda:{a.device_index}", "cpu")
            value = value[()]
        if not isinstance(value, CudaArray):
            value = CudaBackend.full((), value, a.dtype)
        while value.ndim > len(oshape) and value.shape[0] == 1:  # NumPy drops leading 1s
            value = value.reshape(value.shape[1:])
        try:
            vst, voff = _bcast_st(value, oshape)
        except ValueError:
            raise ValueError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                f"broadcast to indexing result of shape {list(oshape)}"
            ) from None
        if cast and value.dtype != a.dtype:
            value = value.astype(a.dtype)
            vst, voff = _bcast_st(value, oshape)
        n = math.prod(oshape)
        if n:
            args = CudaBackend._adv_args(plan)
            launch(kernel, n, n, plan[0]._buf, *args, value._buf, voff, vst, oshape or (1,))

    @staticmethod
    def index_put(a, key, value):
        """``a[key] = value`` in place for a key with index arrays (a repeated index: which
        write lands is unspecified, as in PyTorch)."""
        CudaBackend._scatter(KX.put_kernel, a, key, value, check=True, cast=False)

    @staticmethod
    def add_at(a, key, value):
        """``np.add.at(a, key, value)``: atomic adds, so repeated indices add up (NOTE [CUDA
        index validation]: the indices were checked by the op that made them). A bool mask's
        True count is read from ``value``'s shape (NOTE [CUDA mask scatter])."""
        if a.dtype.kind not in "fiu" or a.dtype.itemsize < 4:
            raise _unsupported(f"add.at into {a.dtype} arrays")
        CudaBackend._scatter(
            KX.add_at_kernel, a, key, value, check=False, cast=True, mask_count=True
        )

    @staticmethod
    def mask_nonzero(mask, count):
        """``np.stack(np.nonzero(mask))`` of a CUDA bool ``mask`` with ``count`` True entries,
        made on the device (NOTE [CUDA mask scatter]): int64 of shape ``(mask.ndim, count)``."""
        csum = CudaBackend.scan("cumsum", mask, None)  # the running count, read in place
        out = CudaBackend.full((mask.ndim, count), KX.BAD, np.int64)  # unwritten: out of range
        shape, st = _meta(mask)
        launch(KX.mask_coords_kernel, mask.size, mask.size, mask._buf, mask._off, shape, st,
               csum._buf, count, out._buf)  # fmt: skip
        return out

    @staticmethod
    def take_along_axis(arr, indices, axis):
        """NumPy's ``take_along_axis`` (``gather``), reading ``arr`` through its strides."""
        idx = indices if isinstance(indices, CudaArray) else np.asarray(indices)
        if idx.dtype.kind not in "iu":
            raise IndexError("`indices` must be an integer array")
        if axis is None:
            arr, idx, axis = arr.reshape(-1), idx.reshape(-1), 0
        if arr.ndim != idx.ndim:
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        axis = CudaBackend._axis(axis, arr.ndim)
        off = [tuple(s for d, s in enumerate(x.shape) if d != axis) for x in (arr, idx)]
        shape = list(np.broadcast_shapes(*off))
        shape.insert(axis, idx.shape[axis])
        shape = tuple(shape)
        size = arr.shape[axis]
        CudaBackend._check_range(idx, size, axis)
        idx = CudaBackend._device_index(idx)
        out = CudaArray.empty(shape, arr.dtype, arr.device_index)
        if out.size == 0:
            return out
        xst = tuple(0 if d == axis or arr.shape[d] == 1 else arr._st[d] for d in range(arr.ndim))
        ist, ioff = _bcast_st(idx, shape)
        launch(
            KX.take_along_kernel,
            out.size,
            out.size,
            arr._buf,
            arr._off,
            xst,
            idx._buf,
            ioff,
            ist,
            shape,
            size,
            arr._st[axis],
            out._buf,
        )
        return out

    @staticmethod
    def indices(dimensions, dtype=int, sparse=False):
        """NumPy's ``indices`` made on the device (no host copy)."""
        dims = tuple(int(n) for n in dimensions)
        nd = len(dims)
        dt = np.dtype(dtype)
        parts = []
        for i, n in enumerate(dims):
            r = CudaBackend.arange(n)
            r = r if dt == np.int64 else r.astype(dt)
            parts.append(r.reshape(tuple(n if j == i else 1 for j in range(nd))))
        if sparse:
            return tuple(parts)
        out = CudaArray.empty((nd, *dims), dt)
        for i, p in enumerate(parts):
            CudaBackend.copy_into(out[i], p)
        return out

    @staticmethod
    def nonzero(a):
        """NumPy's ``nonzero``: one int64 array per dim (``a`` is copied to the host to find
        the non-zero positions: their count is the result's shape)."""
        if a.ndim == 0:
            raise ValueError("Calling nonzero on 0d arrays is not allowed.")
        nz = np.stack(np.nonzero(a.to_host())).astype(np.int64)
        dev = CudaArray.from_host(nz)
        return tuple(dev[j] for j in range(a.ndim))

    @staticmethod
    def argsort(a, axis=-1):
        """Indices (int64) that sort ``a`` along ``axis``: a stable merge sort of every row
        (NOTE [CUDA sort]); NaN sorts last."""
        if a.ndim == 0:
            return CudaBackend.zeros((), np.int64)
        if axis is None:
            a, axis = a.reshape(-1), 0
        axis = CudaBackend._axis(axis, a.ndim)
        n = a.shape[axis]
        perm = (*(d for d in range(a.ndim) if d != axis), axis)
        v = a.transpose(perm)  # the sorted dim last: rows of n
        total = a.size
        out = CudaArray.empty(a.shape, np.int64, a.device_index)
        if total == 0:
            return out
        kdt = np.uint8 if a.dtype.kind == "b" else a.dtype
        keys = CudaArray.empty(v.shape, kdt)
        CudaBackend.copy_into(keys, v)
        idx = CudaArray.empty(v.shape, np.int64)
        launch(KO.row_iota_kernel, total, total, n, idx._buf)
        keys2 = CudaArray.empty(v.shape, kdt)
        idx2 = CudaArray.empty(v.shape, np.int64)
        w = 1
        while w < n:
            launch(
                KO.merge_pass_kernel, total, total, n, w, keys._buf, idx._buf, keys2._buf, idx2._buf
            )
            keys, keys2, idx, idx2 = keys2, keys, idx2, idx
            w *= 2
        inv = tuple(int(i) for i in np.argsort(perm))
        CudaBackend.copy_into(out, idx.transpose(inv))
        return out

    @staticmethod
    def searchsorted(a, v, side="left"):
        """NumPy's ``searchsorted`` of ``v`` (an array or a number) in the sorted 1-D ``a``:
        int64 insertion indices, one binary search per value."""
        if side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
        if a.ndim != 1:
            raise ValueError("object too deep for desired array")
        if not isinstance(v, CudaArray):
            v = CudaBackend.full((), v, a.dtype)
        out = CudaArray.empty(v.shape, np.int64, a.device_index)
        shape, st = _meta(v)
        launch(
            KO.searchsorted_kernel,
            v.size,
            v.size,
            a._buf,
            a._off,
            a._st[0],
            a.shape[0],
            v._buf,
            v._off,
            shape,
            st,
            side == "right",
            out._buf,
        )
        return out

    # -- end of indexing, gather/scatter, sorting -------------------------------------------

    # -- the op database's gaps (multiply/maximum/minimum.at: index.py) ---------------------

    @staticmethod
    def reduce_at(name, a, key, value):
        """``np.<name>.at(a, key, value)`` in place for ``name`` in ``multiply``,
        ``maximum``, ``minimum`` (``scatter_reduce``'s prod/amax/amin): the values of a
        repeated index fold in order, as NumPy's (NOTE [CUDA multiply.at, maximum.at,
        minimum.at]; the indices were checked by the op that made them)."""
        if not isinstance(a, CudaArray):  # a host target with device indices or values
            raise device_mismatch("cuda:0", "cpu")
        if a.dtype.kind not in "fiu":
            raise _unsupported(f"{name}.at into {a.dtype} arrays")
        plan = CudaBackend._adv_plan(a, key, check=False)
        oshape = plan[-1]
        if isinstance(value, np.ndarray):
            if value.ndim:
                raise device_mismatch(f"cuda:{a.device_index}", "cpu")
            value = value[()]
        if not isinstance(value, CudaArray):
            value = CudaBackend.full((), value, a.dtype)
        if value.dtype != a.dtype:
            value = value.astype(a.dtype)
        while value.ndim > len(oshape) and value.shape[0] == 1:  # NumPy drops leading 1s
            value = value.reshape(value.shape[1:])
        try:
            vst, voff = _bcast_st(value, oshape)
        except ValueError:
            raise ValueError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                f"broadcast to indexing result of shape {list(oshape)}"
            ) from None
        n = math.prod(oshape)
        if n == 0:
            return
        dest = CudaArray.empty((n,), np.int64, a.device_index)
        launch(KX.dest_kernel, n, n, *CudaBackend._adv_args(plan), dest._buf)
        order = CudaBackend.argsort(dest, 0)
        fold = ("multiply", "maximum", "minimum").index(name)
        buf = plan[0]._buf
        launch(KX.reduce_at_kernel, n, n, fold, buf, dest._buf, order._buf, value._buf, voff,
               vst, oshape or (1,))  # fmt: skip

    # -- end of the op database's gaps -------------------------------------------------------

    # -- random numbers (random.py: NOTE [CUDA random numbers]) -----------------------------

    @staticmethod
    def random_fill(out, kind, seed, offset, a=0.0, b=1.0):
        """Fill the CUDA array ``out`` in place with ``kind`` samples (``"uniform"`` on
        ``[a, b)``, ``"normal"`` of mean ``a`` and std ``b``, ``"exponential"`` of rate ``a``,
        ``"bernoulli"`` with probability ``a``, ``"trunc_normal"``: standard normals truncated
        to the finite ``[a, b]``) from the Philox state ``(seed, offset)``; the caller
        advances its offset by ``4 * out.size``."""
        op = {"uniform": KRand.UNIFORM, "normal": KRand.NORMAL,
              "exponential": KRand.EXPONENTIAL, "bernoulli": KRand.BERNOULLI,
              "trunc_normal": KRand.TRUNC_NORMAL}[kind]  # fmt: skip
        if out.size == 0:
            return
        # uniforms with the output dtype's spacing (float16's too, exact in float32), and
        # ``b`` rounded to the output dtype (or to float64 for non-floating outputs)
        bits = {np.float16: 11, np.float32: 24}.get(out.dtype.type, 53)
        top = float(out.dtype.type(b)) if out.dtype.kind == "f" else float(b)
        dst = out
        if out.dtype not in (np.float32, np.float64):  # drawn in float, then cast on copy
            dst = CudaArray.empty(out.shape, np.float32 if out.dtype == np.float16 else np.float64)
        shape, st = _meta(dst)
        k0, k1, base = _philox_args(seed, offset)
        launch(KRand.sample_kernel, dst.size, op, dst.size, k0, k1, base, float(a), float(b),
               bits, top, dst._buf, dst._off, shape, st)  # fmt: skip
        if dst is not out:
            CudaBackend.copy_into(out, dst)

    @staticmethod
    def randint_fill(out, seed, offset, low, high):
        """Fill the CUDA array ``out`` in place with integers uniform on ``[low, high)``
        (``high - low`` from 1 to ``2**64 - 1``), without modulo bias, from the Philox state
        ``(seed, offset)``; the caller advances its offset by ``4 * out.size``."""
        low, high = int(low), int(high)
        if not 1 <= high - low <= 2**64 - 1 or not -(2**63) <= low < 2**63:
            raise ValueError(f"randint_fill: bad range [{low}, {high})")
        if out.size == 0:
            return
        if out.dtype not in (np.int64, np.int32, np.float32, np.float64):
            tmp = CudaArray.empty(out.shape, np.int64)  # drawn in int64, cast on copy
            CudaBackend.randint_fill(tmp, seed, offset, low, high)
            CudaBackend.copy_into(out, tmp)
            return
        shape, st = _meta(out)
        k0, k1, base = _philox_args(seed, offset)
        launch(KRand.randint_kernel, out.size, out.size, k0, k1, base, np.int64(low),
               np.uint64(high - low), out._buf, out._off, shape, st)  # fmt: skip

    @staticmethod
    def categorical(cdf, u):
        """Inverse-CDF draws: for the running sums ``cdf`` (float64, contiguous ``(rows,
        ncat)``) and uniforms ``u`` (float64, ``(rows, k)``), the int64 categories."""
        rows, ncat = cdf.shape
        k = u.shape[1]
        out = CudaArray.empty((rows, k), np.int64)
        launch(KRand.categorical_kernel, out.size, out.size, k, ncat, cdf._buf, u._buf, out._buf)
        return out

    @staticmethod
    def poisson_fill(out, lam, seed, offset):
        """Fill the contiguous CUDA array ``out`` with Poisson counts of the rates ``lam``
        (finite, non-negative, ``out``'s shape) from the Philox state ``(seed, offset)``;
        the caller advances its offset by ``4 * out.size``. A count is drawn in float64 and
        cast to ``out``'s dtype on store."""
        if out.size == 0:
            return
        shape, st = _meta(lam)
        k0, k1, base = _philox_args(seed, offset)
        launch(KRand.poisson_kernel, out.size, out.size, k0, k1, base, lam._buf, lam._off,
               shape, st, out._buf)  # fmt: skip

    # -- end of random numbers --------------------------------------------------------------

    # -- special (special.py: numbagrad.special, xlogy/xlog1py, nextafter) ------------------
    @staticmethod
    def special_unary(name, x, dtype, n=None):
        """The special function ``name`` (``special.UNARY``, the CPU's codes; ``"polygamma"``
        of order ``n``) of the CUDA array ``x`` as ``dtype``: the CPU's scalar formulas run
        on the device in float64 and rounded once (NOTE [CUDA special functions])."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if x.dtype.kind not in "biuf":
            raise _unsupported(f"special.{name} of {x.dtype} tensors")
        dt = np.dtype(dtype)
        out = CudaArray.empty(x.shape, dt, x.device_index)
        shape, st = _meta(x)
        if n is not None:  # polygamma: trigamma's reflection in float32 for float32 results
            single = dt == np.float32
            launch(KSpecial.polygamma_kernel, x.size, int(n), single, x.size, x._buf, x._off,
                   shape, st, out._buf)  # fmt: skip
            return out
        code = KSpecial.UNARY.get(name)
        if code is None:
            raise _unsupported(f"special.{name}")
        launch(KSpecial.special_unary_kernel, x.size, code, x.size, x._buf, x._off, shape, st,
               out._buf)  # fmt: skip
        return out

    @staticmethod
    def special_binary(name, a, b, dtype=None):
        """The broadcasting two-operand function ``name`` (``special.BINARY``: ``gammainc``,
        ``gammaincc``, ``zeta``, ``xlogy``, ``xlog1py``, ``nextafter``) of CUDA arrays or
        scalars, as ``dtype`` (None: NumPy's result dtype); a scalar is first rounded to
        ``dtype``, as NumPy's ufuncs and the CPU ops do."""
        code = KSpecial.BINARY.get(name)
        if code is None:
            raise _unsupported(name)
        dev = a if isinstance(a, CudaArray) else b
        a, b = _as_operand(a, dev), _as_operand(b, dev)
        dt = _result_dtype(name, a, b) if dtype is None else np.dtype(dtype)
        if dt.kind != "f" or any(
            isinstance(v, CudaArray) and v.dtype.kind not in "biuf" for v in (a, b)
        ):
            raise _unsupported(f"{name} of {dt} tensors")
        a, b = (v if isinstance(v, CudaArray) else CudaBackend.full((), v, dt) for v in (a, b))
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            sa, sb = list(a.shape), list(b.shape)
            raise RuntimeError(
                f"{name}: the size of tensor a ({sa}) must match the size of tensor b ({sb}): "
                f"shapes {sa} and {sb} are not broadcastable"
            ) from None
        out = CudaArray.empty(shape, dt, dev.device_index)
        ast, aoff = _bcast_st(a, shape)
        bst, boff = _bcast_st(b, shape)
        digits, emin, big = KSpecial.NEXTAFTER_FORMATS.get(dt.name, (53, -1074, 0.0))
        launch(KSpecial.special_binary_kernel, out.size, code, out.size, a._buf, aoff, ast,
               b._buf, boff, bst, shape or (1,), digits, emin, float(big), out._buf)  # fmt: skip
        return out

    # -- end of special ----------------------------------------------------------------------

    # -- linalg (linalg.py: NOTE [CUDA decompositions]) --------------------------------------
    # NOTE [CUDA linalg status]
    # Each factorization kernel writes a status per matrix (a zero pivot, a leading minor
    # that is not positive-definite, a non-finite input, no convergence) to a small device
    # array. Where the CPU op raises for such a matrix (``solve``, ``inv``, ``cholesky``,
    # ``svd``, ``eigh``), the status is copied to the host once, after the kernel, in the
    # forward, and the error is raised with the CPU op's message, naming the first failing
    # batch element as it does; ``det``/``slogdet``/``solve_triangular`` never fail and read
    # nothing. The backward rules are built from these ops too, so they read a status when
    # they factor (``linalg.solve`` in the gradient of ``inv``'s users, say).
    @staticmethod
    def _linalg_threads(m, n):
        """The block size of a decomposition kernel for ``(m, n)`` matrices: a power of
        two up to ``KL.LTPB``, about one thread per entry."""
        threads = 1
        while threads < min(m * n, KL.LTPB):
            threads *= 2
        return threads

    @staticmethod
    def _linalg_work(a, name, transpose=False):
        """``(work, batch)``: a contiguous float64 copy ``(nb, m, n)`` of the matrices of
        ``a`` (of their transposes when ``transpose``), read through ``a``'s strides, and
        the batch shape."""
        if not isinstance(a, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if a.ndim < 2:
            raise ValueError(
                f"linalg.{name}: {a.ndim}-dimensional array given; the array must be at least "
                "two-dimensional"
            )
        if a.dtype.kind not in "fiub":
            raise _unsupported(f"linalg.{name} of {a.dtype} arrays")
        if transpose:
            a = CudaXP.swapaxes(a, -1, -2)
        batch = a.shape[:-2]
        m, n = a.shape[-2:]
        work = CudaArray.empty((math.prod(batch), m, n), np.float64, a.device_index)
        CudaBackend.copy_into(work.reshape(a.shape), a)
        return work, batch

    @staticmethod
    def _linalg_error(msg):
        """``numbagrad.linalg.LinAlgError(msg)`` (a RuntimeError)."""
        return LinAlgError(msg)

    @staticmethod
    def _batch_prefix(shape, i):
        return f"(Batch element {i}): " if len(shape) > 2 else ""

    @staticmethod
    def _out_dtype(*arrays):
        dt = np.result_type(*(x.dtype for x in arrays))
        return dt if dt.kind == "f" else np.dtype(np.float64)

    @staticmethod
    def _eye(n):
        """The float64 identity ``(n, n)`` made on the device."""
        r = CudaBackend.arange(n)
        eq = CudaBackend.binary("equal", r.reshape((n, 1)), r.reshape((1, n)))
        return eq.astype(np.float64)

    @staticmethod
    def lu_factor(a, name):
        """``(lu, piv, info, batch)``: LU with partial pivoting of every matrix of the
        square ``a`` (``lu_kernel``): ``lu`` ``(nb, n, n)`` float64, ``piv`` ``(nb, n)``,
        ``info`` ``(nb, 2)`` (first zero pivot, non-finite flag), on the device."""
        work, batch = CudaBackend._linalg_work(a, name)
        nb, n = work.shape[0], work.shape[-1]
        if work.shape[-2] != n:
            raise ValueError(f"linalg.{name}: Last 2 dimensions of the array must be square")
        piv = CudaArray.empty((nb, n), np.int64, a.device_index)
        info = CudaBackend.zeros((nb, 2), np.int64)
        launch_blocks(
            KL.lu_kernel, nb, CudaBackend._linalg_threads(n, n), nb, n, work._buf, piv._buf,
            info._buf,
        )  # fmt: skip
        return work, piv, info, batch

    @staticmethod
    def _trsm(nb, n, k, a, bshape, lower, unit, x):
        """``x`` (contiguous float64 ``(nb, n, k)``) <- ``A^-1 x`` for the triangular ``a``
        (a ``CudaArray`` ``(*bshape, n, n)`` view, any strides)."""
        if nb == 0 or n == 0 or k == 0:
            return
        ast = a._st[:-2] or (0,)
        launch_blocks(
            KL.trsm_kernel, nb, CudaBackend._linalg_threads(n, k), nb, n, k, a._buf, a._off,
            ast, a._st[-2], a._st[-1], bshape or (1,), lower, unit, x._buf,
        )  # fmt: skip

    @staticmethod
    def lu_solve(a, b, name):
        """NumPy's ``linalg.solve(a, b)`` (``b`` a vector or a stack of matrices, batch dims
        broadcast), or ``linalg.inv(a)`` when ``b`` is None: one LU per matrix of ``a``,
        then row swaps and two triangular solves per right-hand side. A singular matrix
        raises the CPU op's ``LinAlgError``; a non-finite one gives NaN."""
        if not isinstance(a, CudaArray) or (b is not None and not isinstance(b, CudaArray)):
            raise device_mismatch("cuda:0", "cpu")
        lu, piv, info, abatch = CudaBackend.lu_factor(a, name)
        n = lu.shape[-1]
        vector = b is not None and b.ndim == 1
        if b is None:
            bm, dt = CudaBackend._eye(n), CudaBackend._out_dtype(a)
        else:
            bm, dt = (b.reshape((n, 1)) if vector else b), CudaBackend._out_dtype(a, b)
            if bm.ndim < 2 or bm.shape[-2] != n:
                raise ValueError(
                    f"solve: Input operand 1 has a mismatch in its core dimension 0 "
                    f"(size {bm.shape[-2] if bm.ndim else 0} is different from {n})"
                )
        k = bm.shape[-1]
        batch = tuple(np.broadcast_shapes(abatch, bm.shape[:-2]))
        nb = math.prod(batch)
        x = CudaArray.empty((nb, n, k), np.float64, a.device_index)
        CudaBackend.copy_into(x.reshape((*batch, n, k)), bm)
        status = info.to_host() if info.size else np.zeros((0, 2), np.int64)
        for i, (zero, nonfinite) in enumerate(status.tolist()):
            if zero and not nonfinite:
                prefix = CudaBackend._batch_prefix(a.shape, i)
                if name == "inv":
                    raise CudaBackend._linalg_error(
                        f"linalg.inv: {prefix}The diagonal element {zero} is zero, the "
                        "inversion could not be completed because the input matrix is singular."
                    )
                raise CudaBackend._linalg_error(
                    f"torch.linalg.solve: {prefix}The solver failed because the input matrix "
                    "is singular."
                )
        if nb and n and k:
            lub = lu.reshape((*abatch, n, n)).broadcast_to((*batch, n, n))
            pivb = piv.reshape((*abatch, n)).broadcast_to((*batch, n))
            launch_blocks(
                KL.lu_permute_kernel, nb, CudaBackend._linalg_threads(1, k), nb, n, k,
                piv._buf, pivb._st[:-1] or (0,), 0, batch or (1,), x._buf,
            )  # fmt: skip
            CudaBackend._trsm(nb, n, k, lub, batch, True, True, x)
            CudaBackend._trsm(nb, n, k, lub, batch, False, False, x)
        out = x.reshape((*batch, n, k))
        if status[:, 1].any():  # non-finite matrices: NaN (the CPU op's choice)
            bad = CudaBackend.binary("not_equal", info[:, 1], 0).reshape((*abatch, 1, 1))
            out = CudaBackend.where(bad, math.nan, out)
        out = out.astype(dt, copy=False)
        return out.reshape((*batch, n)) if vector else out

    @staticmethod
    def slogdet(a):
        """``(sign, log|det|)`` of every matrix of ``a`` from its LU factors (no host
        copy), in ``a``'s dtype."""
        lu, piv, _, batch = CudaBackend.lu_factor(a, "slogdet")
        nb, n = lu.shape[0], lu.shape[-1]
        sign = CudaArray.empty((nb,), np.float64, a.device_index)
        logabs = CudaArray.empty((nb,), np.float64, a.device_index)
        launch(KL.lu_det_kernel, nb, nb, n, lu._buf, piv._buf, sign._buf, logabs._buf)
        dt = CudaBackend._out_dtype(a)
        return (
            sign.reshape(batch).astype(dt, copy=False),
            logabs.reshape(batch).astype(dt, copy=False),
        )

    @staticmethod
    def solve_triangular(a, b, upper, unitriangular):
        """``A^-1 B`` for the triangular ``a`` (its ``upper`` or lower triangle, a unit
        diagonal when ``unitriangular``), batch dims broadcast, as the CPU op's
        ``_solve_triangular``: substitution row by row (``trsm_kernel``), so a zero on the
        diagonal gives inf/NaN, never an error; ``a`` is read through its strides."""
        if not (isinstance(a, CudaArray) and isinstance(b, CudaArray)):
            raise device_mismatch("cuda:0", "cpu")
        if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != a.shape[-2] or b.shape[-2] != a.shape[-1]:
            raise ValueError(
                f"solve_triangular: shapes {a.shape} and {b.shape} are not a batch of square "
                "matrices and a batch of matching right-hand sides"
            )
        n, k = b.shape[-2:]
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        nb = math.prod(batch)
        x = CudaArray.empty((nb, n, k), np.float64, a.device_index)
        CudaBackend.copy_into(x.reshape((*batch, n, k)), b)
        ab = a.broadcast_to((*batch, n, n))
        CudaBackend._trsm(nb, n, k, ab, batch, not upper, bool(unitriangular), x)
        return x.reshape((*batch, n, k)).astype(CudaBackend._out_dtype(a, b), copy=False)

    @staticmethod
    def cholesky(a):
        """The lower Cholesky factors of ``a`` (its lower triangle read); a matrix that is
        not positive-definite raises the CPU op's ``LinAlgError`` naming the order of the
        first failing leading minor."""
        work, _ = CudaBackend._linalg_work(a, "cholesky")
        nb, n = work.shape[0], work.shape[-1]
        if work.shape[-2] != n:
            raise ValueError("linalg.cholesky: Last 2 dimensions of the array must be square")
        info = CudaBackend.zeros((nb,), np.int64)
        launch_blocks(
            KL.cholesky_kernel, nb, CudaBackend._linalg_threads(n, n), nb, n, work._buf,
            info._buf,
        )  # fmt: skip
        if nb:
            for i, order in enumerate(info.to_host().tolist()):
                if order:
                    raise CudaBackend._linalg_error(
                        f"linalg.cholesky: {CudaBackend._batch_prefix(a.shape, i)}The "
                        "factorization could not be completed because the input is not "
                        f"positive-definite (the leading minor of order {order} is not "
                        "positive-definite)."
                    )
        return work.reshape(a.shape).astype(CudaBackend._out_dtype(a), copy=False)

    @staticmethod
    def _householder(work):
        """``qr_kernel`` on the float64 work ``(nb, m, n)`` in place; returns ``tau``."""
        nb, m, n = work.shape
        tau = CudaArray.empty((nb, min(m, n)), np.float64, work.device_index)
        launch_blocks(
            KL.qr_kernel, nb, CudaBackend._linalg_threads(m, 1), nb, m, n, work._buf, tau._buf
        )
        return tau

    @staticmethod
    def _householder_q(work, tau, kq):
        """The first ``kq`` columns of ``Q`` from the reflectors of ``_householder``."""
        nb, m, n = work.shape
        q = CudaArray.empty((nb, m, kq), np.float64, work.device_index)
        launch(KL.qr_q_kernel, nb * kq, nb, m, n, kq, work._buf, tau._buf, q._buf)
        return q

    @staticmethod
    def qr(a, mode="reduced"):
        """NumPy's ``linalg.qr`` (modes ``reduced``, ``complete``, ``r``): Householder
        reflections as LAPACK's (``R``'s signs are LAPACK's)."""
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"Unrecognized mode '{mode}' (CUDA arrays: reduced, complete, r)")
        work, batch = CudaBackend._linalg_work(a, "qr")
        m, n = work.shape[1:]
        k = min(m, n)
        tau = CudaBackend._householder(work)
        dt = CudaBackend._out_dtype(a)
        rk = m if mode == "complete" else k
        r = CudaXP.triu(work[:, :rk, :]).reshape((*batch, rk, n)).astype(dt, copy=False)
        if mode == "r":
            return r
        q = CudaBackend._householder_q(work, tau, rk)
        return q.reshape((*batch, m, rk)).astype(dt, copy=False), r

    @staticmethod
    def eigh(a, uplo="L"):
        """NumPy's ``linalg.eigh`` (``uplo``'s triangle read): eigenvalues ascending and
        eigenvectors by cyclic Jacobi (``jacobi_eigh_kernel``); the eigenvectors' signs
        are Jacobi's, not LAPACK's (each is unique only up to sign)."""
        if uplo not in ("L", "U"):
            raise ValueError("UPLO argument must be 'L' or 'U'")
        if not isinstance(a, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        tri = CudaXP.tril if uplo == "L" else CudaXP.triu
        off = tri(a, -1 if uplo == "L" else 1)
        sym = CudaBackend.binary("add", tri(a), CudaXP.swapaxes(off, -1, -2))
        work, batch = CudaBackend._linalg_work(sym, "eigh")
        nb, n = work.shape[0], work.shape[-1]
        if work.shape[-2] != n:
            raise ValueError("linalg.eigh: Last 2 dimensions of the array must be square")
        v = CudaArray.empty(work.shape, np.float64, a.device_index)
        lam = CudaArray.empty((nb, n), np.float64, a.device_index)
        vout = CudaArray.empty(work.shape, np.float64, a.device_index)
        info = CudaBackend.zeros((nb,), np.int64)
        launch_blocks(
            KL.jacobi_eigh_kernel, nb, CudaBackend._linalg_threads(n, 1), nb, n, work._buf,
            v._buf, lam._buf, vout._buf, info._buf, 60,
        )  # fmt: skip
        if nb and (info.to_host() == 1).any():
            raise CudaBackend._linalg_error(
                "linalg.eigh: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues."
            )
        dt = CudaBackend._out_dtype(a)
        return (
            lam.reshape((*batch, n)).astype(dt, copy=False),
            vout.reshape((*batch, n, n)).astype(dt, copy=False),
        )

    @staticmethod
    def svd(a, full_matrices=True):
        """NumPy's ``linalg.svd``: one-sided Jacobi on the tall orientation
        (``jacobi_svd_kernel``), singular values descending. The left vectors of zero
        singular values, and the extra columns of ``full_matrices``, come from a
        Householder QR of the normalised left factor (``Q``'s columns, signs matched to
        it), so the factors are orthonormal; vectors are unique only up to sign (and the
        completion up to rotation), so they may differ from LAPACK's. A non-finite matrix
        raises the CPU op's ``LinAlgError``."""
        if not isinstance(a, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        wide = a.ndim >= 2 and a.shape[-2] < a.shape[-1]
        work, batch = CudaBackend._linalg_work(a, "svd", transpose=wide)
        nb, m, k = work.shape  # m >= k
        v = CudaArray.empty((nb, k, k), np.float64, a.device_index)
        s = CudaArray.empty((nb, k), np.float64, a.device_index)
        sout = CudaArray.empty((nb, k), np.float64, a.device_index)
        u = CudaArray.empty((nb, m, k), np.float64, a.device_index)
        vh = CudaArray.empty((nb, k, k), np.float64, a.device_index)
        info = CudaBackend.zeros((nb,), np.int64)
        launch_blocks(
            KL.jacobi_svd_kernel, nb, CudaBackend._linalg_threads(m, 1), nb, m, k, work._buf,
            v._buf, s._buf, sout._buf, u._buf, vh._buf, info._buf, 60,
        )  # fmt: skip
        status = info.to_host().tolist() if nb else []
        for i, st in enumerate(status):
            if st == 2:
                raise CudaBackend._linalg_error(
                    f"linalg.svd: {CudaBackend._batch_prefix(a.shape, i)}The algorithm failed "
                    "to converge because the input matrix contained non-finite values."
                )
        if 1 in status:
            raise CudaBackend._linalg_error(
                "linalg.svd: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated singular values."
            )
        kq = m if full_matrices else k
        qw = u.copy()
        q = CudaBackend._householder_q(qw, CudaBackend._householder(qw), kq)
        sgn = CudaBackend.where(
            CudaBackend.binary("less", CudaXP.diagonal(qw, 0, -2, -1), 0), -1.0, 1.0
        )
        if kq > k:
            sgn = CudaXP.concatenate([sgn, CudaBackend.full((nb, kq - k), 1.0, np.float64)], -1)
        u = CudaBackend.multiply(q, sgn.reshape((nb, 1, kq)))  # (nb, m, kq)
        dt = CudaBackend._out_dtype(a)
        if wide:  # a^T = u s vh: a = vh^T s u^T
            u, vh = CudaXP.swapaxes(vh, -1, -2), CudaXP.swapaxes(u, -1, -2)
        rows, cols = a.shape[-2:]

        def out(x, shape):
            return CudaXP.ascontiguousarray(x).reshape((*batch, *shape)).astype(dt, copy=False)

        return (
            out(u, (rows, u.shape[-1])),
            sout.reshape((*batch, k)).astype(dt, copy=False),
            out(vh, (vh.shape[-2], cols)),
        )

    # -- end of linalg -------------------------------------------------------------------------

    # -- matrix_exp (linalg.py: NOTE [CUDA matrix_exp] in ops/linalg_decomp.py) ---------------
    @staticmethod
    def expm_pade(a2, a4, a6):
        """The four sums of the degree-13 Pade approximant from the powers ``A^2``, ``A^4``,
        ``A^6`` (contiguous float64 ``(nb, n, n)`` arrays): ``(t1, t2, t3, t4)`` with
        ``U = A (A^6 t1 + t2)`` and ``V = A^6 t3 + t4`` (``expm_pade_kernel``, one pass)."""
        for x in (a2, a4, a6):
            if not isinstance(x, CudaArray):
                raise device_mismatch("cuda:0", "cpu")
            if x.dtype != np.float64 or x.shape != a2.shape or not x.is_c_contiguous():
                raise ValueError(
                    "expm_pade: the powers must be contiguous float64 arrays of one shape "
                    f"(nb, n, n), got {x.dtype} {x.shape}"
                )
        if a2.ndim != 3 or a2.shape[-1] != a2.shape[-2]:
            raise ValueError(f"expm_pade: expected a batch of square matrices, got {a2.shape}")
        outs = tuple(CudaArray.empty(a2.shape, np.float64, a2.device_index) for _ in range(4))
        n = a2.shape[-1]
        launch(
            KL.expm_pade_kernel, a2.size, a2.size, n, a2._buf[a2._off :], a4._buf[a4._off :],
            a6._buf[a6._off :], *(t._buf for t in outs),
        )  # fmt: skip
        return outs

    # -- end of matrix_exp ---------------------------------------------------------------------


def _philox_args(seed, offset):
    """The kernel arguments of a Philox state: the key words and the first block index."""
    seed, offset = int(seed) % 2**64, int(offset)
    if offset < 0 or offset % 4:
        raise ValueError(f"a Philox offset is a non-negative multiple of 4, got {offset}")
    return np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32), np.uint64((offset // 4) % 2**64)


CUDA = CudaBackend()
register_backend("cuda", CUDA)
