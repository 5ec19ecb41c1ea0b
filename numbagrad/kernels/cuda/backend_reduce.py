"""The CUDA backend's reduce family (a mixin of ``backend.CudaBackend``, NOTE [Backends]):
reductions (``prod``, ``amax``/``amin``, ``all``/``any``, ``argmax``/``argmin``,
``var``), scans, joining (``concatenate``, ``stack``) and reordering (``flip``, ``roll``): the
kernels of ``reduce.py``, ``scan.py`` and ``join.py``.

The methods reach the backend's other methods through ``self`` (the one ``CUDA`` object),
so a family calls another without importing it."""

from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels import module
from numbagrad.kernels.cuda.array import CudaArray, contiguous_strides, device_mismatch
from numbagrad.kernels.cuda.backend_common import (
    _meta,
    _unsupported,
)
from numbagrad.kernels.cuda.launch import launch, launch_blocks

__all__ = ["ReduceMethods"]

KR = module("reduce", "cuda")
KS = module("scan", "cuda")
KJ = module("join", "cuda")


class ReduceMethods:
    """The reduce methods of ``CudaBackend``."""

    # -- reductions, scans, joining and reordering (reduce.py, scan.py, join.py) -----------
    def _plan(self, x, dims, keepdim, name):
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

    def _threads(self, r):
        """The block size of a tree over ``r`` elements: a power of two up to ``KR.TPB``."""
        threads = 1
        while threads < min(r, KR.TPB):
            threads *= 2
        return threads

    def reduce(self, name, x, dims, keepdim, dtype=None):
        """``prod``, ``amax``, ``amin``, ``all``, ``any`` or ``nansum`` over ``dims`` (None: all;
        ``()``: none) with a shared-memory tree per output (NOTE [CUDA reductions]); max and min
        propagate NaN, as PyTorch's. ``amax``/``amin`` of no elements raise ValueError,
        as NumPy's."""
        oshape, nout, r, shape, st = self._plan(x, dims, keepdim, name)
        if name in ("all", "any"):
            dt = np.dtype(bool)
        elif dtype is not None:
            dt = np.dtype(dtype)
        else:
            dt = x.dtype
        out = self.empty(oshape, dt)
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
            self._threads(r),
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

    def prod(self, x, dims, keepdim, dtype=None):
        """The product over ``dims`` (NumPy's ``prod``: integers and bools in int64)."""
        if dtype is None:
            dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
        return self.reduce("prod", x, dims, keepdim, dtype)

    def argreduce(self, is_max, x, dim, keepdim):
        """The int64 index of the first maximum (``is_max``) or minimum along ``dim`` (None:
        of the flattened array); a NaN wins, as in PyTorch (the first NaN's index)."""
        name = "argmax" if is_max else "argmin"
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if x.dtype.kind not in "fiub":
            raise _unsupported(f"{name} of {x.dtype} tensors")
        # (dim None: every dim reduced, in order: the row-major flattening, read in place)
        dims = None if dim is None else (dim,)
        oshape, nout, r, shape, st = self._plan(x, dims, keepdim, name)
        out = self.empty(oshape, np.int64)
        if nout == 0:
            return out
        if r == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        kern = KR.argreduce_kernel if x.dtype.kind == "f" else KR.argreduce_int_kernel
        launch_blocks(
            kern,
            nout,
            self._threads(r),
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

    def var(self, x, dims, ddof, keepdim, dtype=None):
        """NumPy's ``var``: the mean of the squared deviations from the mean, divided by
        ``n - ddof``; two passes of device kernels (sum, then sum of squares)."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if dtype is not None:
            x = x.astype(dtype, copy=False)
        elif x.dtype.kind != "f":
            x = x.astype(np.float64)
        _, _, n, _, _ = self._plan(x, dims, keepdim, "var")
        mean = self.binary("true_divide", self.sum(x, dims, True, None), n)
        d = self.binary("subtract", x, mean)
        ss = self.sum(self.multiply(d, d), dims, keepdim, None)
        return self.binary("true_divide", ss, float(n - ddof))

    def scan(self, name, x, dim, dtype=None):
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
            out = self.empty((x.size,) if dim is None else (), dt)
            nrow, r = 1, x.size
            shape, st = _meta(x)
            ost = contiguous_strides(shape)
        else:
            dim %= nd
            out = self.empty(x.shape, dt)
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

    def concatenate(self, arrays, axis=0):
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
        out = self.empty(tuple(shape), dt)
        start = 0
        lead = (slice(None),) * axis
        for a in arrays:
            n = a.shape[axis]
            if n:
                part = (*lead, slice(start, start + n))
                self.copy_into(out[part], a)
            start += n
        return out

    def stack(self, arrays, axis=0):
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
        return self.concatenate([a.reshape(shape) for a in arrays], axis)

    def flip(self, x, dims=None):
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

    def roll(self, x, shifts, dims=None):
        """NumPy's ``roll``: each output element gathered from its shifted position by the
        ``join.roll_kernel`` (``dims`` None: of the flattened array)."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if dims is None:
            return self.roll(x.reshape(-1), shifts, 0).reshape(x.shape)
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
        out = self.empty(x.shape, x.dtype)
        launch(KJ.roll_kernel, x.size, x.size, x._buf, x._off, shape, st, total, out._buf)
        return out

    # -- end of reductions, scans, joining and reordering ---------------------------------
