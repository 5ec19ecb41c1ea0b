"""The CUDA backend's NumPy namespace ``xp`` (``CudaXP``) and derivative-formula twins
``math`` (``CudaMath``) (NOTE [Backends]): NumPy's names and signatures on CUDA arrays,
each a call of the backend's methods. Both are made by the backend with itself
(``CudaXP(backend)``), so this module imports no backend module."""

from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels.cuda.array import CudaArray, device_mismatch
from numbagrad.kernels.cuda.backend_common import _unsupported

__all__ = ["CudaMath", "CudaXP"]


class _Ufunc:
    """A NumPy ufunc on CUDA arrays: calling it runs the backend's binary op ``name``;
    ``accumulate`` is the backend's scan ``scan`` (NOTE [CUDA scans]) and ``at`` folds
    values in place (``add.at``: NOTE [CUDA advanced indexing]; the others: NOTE [CUDA
    multiply.at, maximum.at, minimum.at]), where the backend has them."""

    def __init__(self, be, name, scan=None, at=None, call=True):
        self._be, self.__name__, self._scan, self._at, self._call = be, name, scan, at, call

    def __call__(self, a, b):
        if not self._call:
            raise _unsupported(f"numpy.{self.__name__} of two arrays")
        return self._be.binary(self.__name__, a, b)

    def accumulate(self, x, axis=0, dtype=None):
        if self._scan is None:
            raise _unsupported(f"numpy.{self.__name__}.accumulate")
        return self._be.scan(self._scan, x, axis, dtype)

    def at(self, a, indices, b):
        if self._at is None:
            raise _unsupported(f"numpy.{self.__name__}.at")
        self._at(a, indices, b)


def _reduce_at(be, name):
    return lambda a, indices, b: be.reduce_at(name, a, indices, b)


class CudaMath:
    """The array twins of the ops that derivative formulas use, on CUDA arrays."""

    def __init__(self, be):
        self._be = be

    def cos(self, x):
        return self._be.map("cos", x)

    def sin(self, x):
        return self._be.map("sin", x)

    def exp(self, x):
        return self._be.map("exp", x)

    def sign(self, x):
        return self._be.map("sign", x)

    def reciprocal(self, x):
        return self._be.map("reciprocal", x)

    def sigmoid(self, x):
        return self._be.map("sigmoid", x)

    def sqrt(self, x):
        return self._be.map("sqrt", x)

    def sinh(self, x):
        return self._be.map("sinh", x)

    def cosh(self, x):
        return self._be.map("cosh", x)

    def matmul(self, a, b):
        return self._be.matmul(a, b)

    def swapaxes(self, x, i, j):
        return self._be.xp.swapaxes(x, i, j)

    def reshape(self, x, shape):
        return self._be.xp.reshape(x, shape)

    def sum(self, x, dim=None, keepdim=False):
        return self._be.sum(x, dim, keepdim, None)

    def where(self, cond, a, b):
        return self._be.where(cond, a, b)

    def __getattr__(self, name):
        if name.startswith("__"):  # introspection (doctest, copy), not a formula
            raise AttributeError(name)
        raise _unsupported(f"the gradient formula's {name!r}")

    # -- reductions, scans, joining and reordering (scan.py, join.py) ----------------------
    def flip(self, x, dims):
        return self._be.copy(self._be.flip(x, dims))  # a copy, as PyTorch's flip

    def cumsum(self, x, dim):
        return self._be.xp.cumsum(x, dim)

    # -- end of reductions, scans, joining and reordering ---------------------------------


class CudaXP:
    """The subset of NumPy's namespace the ops' ``impl`` use, on CUDA arrays: views,
    allocation, and what maps to the backend's kernels. Any other name raises
    NotImplementedError naming it. NumPy's ufuncs that ops use with their methods
    (``add.at``, ``maximum.accumulate``, ``multiply.at``, ``logaddexp.accumulate``) are
    ``_Ufunc`` objects."""

    def __init__(self, be):
        self._be = be
        self.add = _Ufunc(be, "add", at=be.add_at)
        self.multiply = _Ufunc(be, "multiply", at=_reduce_at(be, "multiply"))
        self.maximum = _Ufunc(be, "maximum", scan="cummax", at=_reduce_at(be, "maximum"))
        self.minimum = _Ufunc(be, "minimum", scan="cummin", at=_reduce_at(be, "minimum"))
        # (NumPy's ufunc, as ``xp.logaddexp.accumulate`` reads it: only the scan)
        self.logaddexp = _Ufunc(be, "logaddexp", scan="logcumsumexp", call=False)

    def reshape(self, x, shape, copy=None):
        return self._be.reshape(x, shape, copy)

    def transpose(self, x, axes=None):
        return x.transpose() if axes is None else x.transpose(axes)

    def swapaxes(self, x, i, j):
        axes = list(range(x.ndim))
        axes[i], axes[j] = axes[j], axes[i]
        return x.transpose(axes)

    def broadcast_to(self, x, shape):
        return x.broadcast_to(shape)

    def ascontiguousarray(self, x):
        return x if x.is_c_contiguous() else self._be.copy(x)

    def prod(self, shape, axis=None, dtype=None, keepdims=False):
        if isinstance(shape, CudaArray):  # a product of elements (reduce.py)
            return self._be.prod(shape, axis, keepdims, dtype)
        return math.prod(shape)

    def sum(self, x, axis=None, keepdims=False, dtype=None):
        return self._be.sum(x, axis, keepdims, dtype)

    def matmul(self, a, b):
        return self._be.matmul(a, b)

    def empty(self, shape, dtype=np.float64):
        return self._be.empty(_shape(shape), dtype)

    def zeros(self, shape, dtype=np.float64):
        return self._be.zeros(_shape(shape), dtype)

    def ones(self, shape, dtype=np.float64):
        return self._be.full(_shape(shape), 1, dtype)

    def full(self, shape, value, dtype=None):
        dtype = np.asarray(value).dtype if dtype is None else dtype
        return self._be.full(_shape(shape), value, dtype)

    def zeros_like(self, x):
        return self._be.zeros(x.shape, x.dtype)

    def asarray(self, x, dtype=None):
        if isinstance(x, (bool, int, float, np.generic)) or (
            isinstance(x, np.ndarray) and x.ndim == 0
        ):  # a scalar operand (as ``remainder``'s divisor): a 0-d device fill, no copy
            x = np.asarray(x, dtype)
            return self._be.full((), x[()], x.dtype)
        if not isinstance(x, CudaArray):
            raise _unsupported("asarray of host data")
        return x if dtype is None else self._be.astype(x, dtype, copy=False)

    def where(self, cond, a, b):
        return self._be.where(cond, a, b)

    def nan_to_num(self, x, copy=True, nan=0.0, posinf=None, neginf=None):
        return self._be.nan_to_num(x, copy, nan, posinf, neginf)

    def sqrt(self, x):
        return self._be.map("sqrt", x)

    def isfinite(self, x):
        return self._be.map("isfinite", x)

    def __getattr__(self, name):
        if name.startswith("__"):  # introspection (doctest, copy), not an array function
            raise AttributeError(name)
        raise _unsupported(f"numpy.{name}")

    # -- reductions, scans, joining and reordering (reduce.py, scan.py, join.py) -----------
    nan = np.nan
    inf = np.inf

    def amax(self, x, axis=None, keepdims=False):
        return self._be.reduce("amax", x, axis, keepdims)

    def amin(self, x, axis=None, keepdims=False):
        return self._be.reduce("amin", x, axis, keepdims)

    def all(self, x, axis=None, keepdims=False):
        return self._be.reduce("all", x, axis, keepdims)

    def any(self, x, axis=None, keepdims=False):
        return self._be.reduce("any", x, axis, keepdims)

    def argmax(self, x, axis=None, keepdims=False):
        return self._be.argreduce(True, x, axis, keepdims)

    def argmin(self, x, axis=None, keepdims=False):
        return self._be.argreduce(False, x, axis, keepdims)

    def nansum(self, x, axis=None, dtype=None, keepdims=False):
        if x.dtype.kind != "f":  # no NaN to skip
            return self._be.sum(x, axis, keepdims, dtype)
        if dtype is not None and np.dtype(dtype).kind != "f":  # NaN as 0, then cast
            return self._be.sum(self._be.nan_to_num(x, nan=0.0), axis, keepdims, dtype)
        return self._be.reduce("nansum", x, axis, keepdims, dtype)

    def var(self, x, axis=None, dtype=None, ddof=0, keepdims=False):
        return self._be.var(x, axis, ddof, keepdims, dtype)

    def exp(self, x):
        return self._be.map("exp", x)

    def log(self, x):
        return self._be.map("log", x)

    def abs(self, x):
        return self._be.map("abs", x)

    def isinf(self, x):
        return self._be.map("isinf", x)

    def isnan(self, x):
        return self._be.map("isnan", x)

    def cumsum(self, x, axis=None, dtype=None):
        return self._be.scan("cumsum", x, axis, dtype)

    def cumprod(self, x, axis=None, dtype=None):
        return self._be.scan("cumprod", x, axis, dtype)

    def arange(self, start, stop=None, step=1, dtype=None):
        """NumPy's ``arange`` made on the device (``start + i * step``)."""
        if stop is None:
            start, stop = 0, start
        n = max(math.ceil((stop - start) / step), 0)
        if dtype is None:
            dtype = np.result_type(np.asarray(start), np.asarray(stop), np.asarray(step))
        out = self._be.arange(n)  # 0 .. n - 1 in int64 (index.py's iota)
        if step != 1:
            out = self._be.binary("multiply", out, step)
        if start != 0:
            out = self._be.binary("add", out, start)
        return self._be.astype(out, dtype, copy=False)

    def concatenate(self, arrays, axis=0):
        return self._be.concatenate(arrays, axis)

    def stack(self, arrays, axis=0):
        return self._be.stack(arrays, axis)

    def flip(self, x, axis=None):
        return self._be.flip(x, axis)

    def roll(self, x, shift, axis=None):
        return self._be.roll(x, shift, axis)

    # -- end of reductions, scans, joining and reordering ---------------------------------

    # -- indexing, gather/scatter, sorting (index.py, sort.py) -----------------------------
    def take_along_axis(self, arr, indices, axis):
        return self._be.take_along_axis(arr, indices, axis)

    def argsort(self, a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise _unsupported("argsort with order=")
        return self._be.argsort(a, axis)  # always stable (NOTE [CUDA sort])

    def indices(self, dimensions, dtype=int, sparse=False):
        return self._be.indices(dimensions, dtype, sparse)

    def nonzero(self, a):
        return self._be.nonzero(a)

    def shape(self, a):  # ``np.shape`` of a CUDA array (through ``CudaArray.__array_function__``)
        return a.shape

    def ndim(self, a):
        return a.ndim

    def moveaxis(self, a, source, destination):  # a view (median moves the reduced dims last)
        src = [source] if isinstance(source, (int, np.integer)) else list(source)
        dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
        src = [self._be._axis(int(d), a.ndim) for d in src]
        dst = [self._be._axis(int(d), a.ndim) for d in dst]
        if len(src) != len(dst):
            raise ValueError(
                "`source` and `destination` arguments must have the same number of elements"
            )
        order = [d for d in range(a.ndim) if d not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return a.transpose(order)

    def sort(self, a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise _unsupported("sort with order=")
        if axis is None:
            a, axis = a.reshape(-1), 0
        return self._be.take_along_axis(a, self._be.argsort(a, axis), axis)

    def searchsorted(self, a, v, side="left", sorter=None):
        if sorter is not None:
            raise _unsupported("searchsorted with sorter=")
        return self._be.searchsorted(a, v, side)

    def lexsort(self, keys):
        """Indices sorting by the last key, ties broken by the one before, ... (NumPy's
        ``lexsort``): one stable argsort per key, the primary key last."""
        keys = list(keys)
        if not keys:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        order = self._be.arange(keys[0].shape[0])
        for key in keys:
            order = order[self._be.argsort(key[order], 0)]
        return order

    def flatnonzero(self, a):
        return self._be.nonzero(a.reshape(-1))[0]

    def diff(self, a, n=1, axis=-1):
        if n != 1 or a.ndim != 1:
            raise _unsupported("diff of order other than 1 or along a dim of an n-d array")
        return self._be.binary("subtract", a[1:], a[:-1])

    def append(self, arr, values, axis=None):
        if axis is not None:
            raise _unsupported("append along an axis")
        a = arr.reshape(-1) if isinstance(arr, CudaArray) else self._be.full((1,), arr, np.int64)
        b = values.reshape(-1) if isinstance(values, CudaArray) else None
        dt = a.dtype if b is None else np.result_type(a.dtype, b.dtype)
        out = self._be.empty((a.size + (1 if b is None else b.size),), dt)
        self._be.copy_into(out[: a.size], a)
        self._be.copy_into(out[a.size :], values if b is None else b)
        return out

    def clip(self, a, a_min=None, a_max=None):  # clamp (nn.utils.clip_grad_norm_ in training loops)
        out = a if a_min is None else self._be.binary("maximum", a, a_min)  # NaN stays NaN
        out = out if a_max is None else self._be.binary("minimum", out, a_max)
        return self._be.astype(out, a.dtype, copy=False) if out is not a else self._be.copy(a)

    def count_nonzero(self, a, axis=None, keepdims=False):
        return self._be.sum(self._be.binary("not_equal", a, 0), axis, keepdims, None)

    # -- end of indexing, gather/scatter, sorting -------------------------------------------

    # -- the op database's gaps (ufunc .at, bincount, einsum, diagonal, tril/triu, fmod) ----

    def fmod(self, a, b):
        return self._be.binary("fmod", a, b)

    def floor_divide(self, a, b):
        return self._be.binary("floor_divide", a, b)

    def remainder(self, a, b):
        """NumPy's remainder (the sign of the divisor), as its ``npy_divmod``: ``fmod``,
        moved by ``b`` where it is nonzero and its sign differs from ``b``'s."""
        r = self._be.binary("fmod", a, b)
        r_neg = self._be.binary("less", r, 0)
        if isinstance(b, CudaArray):
            differ = self._be.binary("not_equal", r_neg, self._be.binary("less", b, 0))
        else:  # a scalar divisor: its sign is known here
            differ = self._be.map("logical_not", r_neg) if b < 0 else r_neg
        fix = self._be.binary("logical_and", self._be.binary("not_equal", r, 0), differ)
        return self._be.where(fix, self._be.binary("add", r, b), r)

    def trunc(self, x):
        return self._be.map("trunc", x)

    def true_divide(self, a, b):
        return self._be.binary("true_divide", a, b)

    def diagonal(self, a, offset=0, axis1=0, axis2=1):
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

    def _triangle(self, x, k, lower):
        """``x`` with the entries above (``lower``) or below the ``k``-th diagonal zeroed,
        over the last two dims."""
        m, n = x.shape[-2:]
        rows = self._be.arange(m).reshape((m, 1))
        cols = self._be.arange(n).reshape((1, n))
        diff = self._be.binary("subtract", cols, rows)  # col - row
        keep = self._be.binary("less_equal" if lower else "greater_equal", diff, int(k))
        return self._be.where(keep, x, x.dtype.type(0))

    def tril(self, x, k=0):
        return self._triangle(x, k, True)

    def triu(self, x, k=0):
        return self._triangle(x, k, False)

    def einsum(self, subscripts, *operands, optimize=False):
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
            return "".join(c for c in sub if c in keep), self._be.sum(x, gone, False, None)

        def arrange(sub, x, order):  # transpose to ``order``, contiguous
            return self.ascontiguousarray(x.transpose(tuple(sub.index(c) for c in order)))

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
            acc = self._be.matmul(a, b).reshape(tuple(sizes[c] for c in batch + left + right))
            acc_sub = "".join(batch + left + right)
        acc_sub, acc = drop(acc_sub, acc, set(out))
        return arrange(acc_sub, acc, list(out))

    def bincount(self, x, weights=None, minlength=0):
        """``np.bincount`` of a 1-D non-negative integer CUDA array: atomic adds of ones (or
        of ``weights``, counted in float64 as NumPy's) into the bins. The number of bins
        depends on the data: one device-to-host read of the largest entry."""
        if x.ndim != 1 or x.dtype.kind not in "iu":
            raise TypeError("bincount: x must be a 1-D array of non-negative integers")
        lo, hi = self._be.index_minmax(x) if x.size else (0, -1)
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        dtype = np.int64 if weights is None else np.float64
        out = self._be.zeros((max(hi + 1, int(minlength)),), dtype)
        self._be.add_at(out, (x,), 1 if weights is None else weights)
        return out

    # -- end of the op database's gaps -------------------------------------------------------

    # -- linalg (linalg.py: NOTE [CUDA decompositions]) --------------------------------------
    # ``np.linalg.<name>(cuda_array)`` reaches these through ``CudaArray.__array_function__``
    # (by name), with NumPy's signatures; failures raise ``LinAlgError`` with the CPU op's
    # message (NOTE [CUDA linalg status]).
    def solve(self, a, b):
        return self._be.solve(a, b)

    def inv(self, a):
        return self._be.inv(a)

    def det(self, a):
        return self._be.det(a)

    def slogdet(self, a):
        return self._be.slogdet(a)

    def cholesky(self, a, /, *, upper=False):
        low = self._be.cholesky(a)
        return self.ascontiguousarray(self.swapaxes(low, -1, -2)) if upper else low

    def qr(self, a, mode="reduced"):
        return self._be.qr(a, mode)

    def eigh(self, a, UPLO="L"):  # noqa: N803  (NumPy's name)
        return self._be.eigh(a, UPLO)

    def svd(self, a, full_matrices=True, compute_uv=True, hermitian=False):
        if hermitian:
            return self._svd_hermitian(a, compute_uv)
        u, s, vh = self._be.svd(a, full_matrices)
        return (u, s, vh) if compute_uv else s

    def dot(self, a, b):
        """NumPy's ``dot`` of vectors and matrices (``matmul`` of 1-D and 2-D operands)."""
        if a.ndim > 2 or b.ndim > 2 or a.ndim == 0 or b.ndim == 0:
            raise _unsupported("dot of 0-d or more than 2-d arrays")
        return self._be.matmul(a, b)

    # -- end of linalg -------------------------------------------------------------------------

    # -- svd(hermitian=True) (NumPy's formula on the Jacobi eigh: NOTE [CUDA decompositions]) --
    def _svd_hermitian(self, a, compute_uv):
        """NumPy's ``linalg.svd(a, hermitian=True)`` from the eigendecomposition of the
        symmetric ``a`` (``eigh`` of its lower triangle): the singular values ``|w|``
        descending, ``u`` the eigenvectors in that order, ``vh = (u * sign(w))^T`` (a zero
        eigenvalue gives a zero row, as NumPy's); no host copy beyond ``eigh``'s status."""
        w, u = self._be.eigh(a, "L")
        s = self._be.map("abs", w)
        order = self._be.flip(self._be.argsort(s, -1), -1)  # descending (ties: the later first)
        s = self._be.take_along_axis(s, order, -1)
        if not compute_uv:
            return s
        row = (*order.shape[:-1], 1, order.shape[-1])
        sgn = self._be.take_along_axis(self._be.map("sign", w), order, -1).reshape(row)
        u = self._be.take_along_axis(u, order.reshape(row).broadcast_to(u.shape), -1)
        vh = self.ascontiguousarray(self.swapaxes(self._be.multiply(u, sgn), -1, -2))
        return u, s, vh

    # -- end of svd(hermitian=True) ------------------------------------------------------------


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
