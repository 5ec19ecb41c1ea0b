"""The CUDA backend's index family (a mixin of ``backend.CudaBackend``, NOTE [Backends]):
advanced indexing reads and writes, ``add.at`` and the other ``.at`` reductions,
``take_along_axis``, ``indices``, ``nonzero``, sorting and ``searchsorted``: the kernels of
``index.py`` and ``sort.py``.

The methods reach the backend's other methods through ``self`` (the one ``CUDA`` object),
so a family calls another without importing it."""

from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels import determinism, module
from numbagrad.kernels.cuda.array import CudaArray, device_mismatch
from numbagrad.kernels.cuda.backend_common import (
    _bcast_st,
    _meta,
    _unsupported,
)
from numbagrad.kernels.cuda.launch import launch

__all__ = ["IndexMethods"]

KX = module("index", "cuda")
KO = module("sort", "cuda")


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


class IndexMethods:
    """The index methods of ``CudaBackend``."""

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
    def arange(self, n):
        """``0 .. n-1`` (int64) made on the device."""
        out = self.empty((n,), np.int64)
        launch(KX.iota_kernel, n, n, out._buf)
        return out

    def index_minmax(self, idx):
        """``(min, max)`` of a non-empty integer or bool CUDA array, as Python ints."""
        if idx.dtype.kind not in "biu":
            raise _unsupported(f"min/max of {idx.dtype} arrays (use numbagrad.amax/amin)")
        if idx.size == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        res = self.empty((2,), np.int64)
        self.copy_into(res[0:1], np.iinfo(np.int64).max)
        self.copy_into(res[1:2], np.iinfo(np.int64).min)
        shape, st = _meta(idx)
        launch(KX.minmax_kernel, idx.size, idx.size, idx._buf, idx._off, shape, st, res._buf)
        lo, hi = res.to_host().tolist()
        return lo, hi

    def _axis(self, axis, nd):
        """``axis`` wrapped into ``[0, nd)``; NumPy's AxisError when out of range."""
        if not -nd <= axis < nd:
            raise np.exceptions.AxisError(axis, nd)
        return axis % nd

    def _device_index(self, k):
        """An index array on the device (a host one copied there, as PyTorch allows)."""
        if isinstance(k, CudaArray):
            return k
        return self.from_host(np.asarray(k))

    def _check_range(self, idx, size, dim):
        """IndexError unless every entry of ``idx`` (a device or host array) is in
        ``[-size, size)``."""
        if idx.size:
            if isinstance(idx, CudaArray):
                lo, hi = self.index_minmax(idx)
            else:
                lo, hi = int(idx.min()), int(idx.max())
            if lo < -size or hi >= size:
                bad = hi if hi >= size else lo
                raise IndexError(
                    f"index {bad} is out of bounds for dimension {dim} with size {size}"
                )

    def _adv_plan(self, a, key, check, value_shape=None):
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
                    nz = self.from_host(np.stack(np.nonzero(host)).astype(np.int64))
                else:  # no host read (NOTE [CUDA mask scatter])
                    nz = self.mask_nonzero(k, count)
                pairs.extend((d + j, nz[j]) for j in range(k.ndim))
            else:
                if check:  # before any copy or launch (a host index is checked there)
                    self._check_range(k, v.shape[d], d)
                pairs.append((d, self._device_index(k)))
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

    def _adv_args(self, plan):
        """The layout arguments of the index kernels after ``buf``: ``adv`` built on the
        device (one launch per index array), ``nb``, ``npost`` and the pre/post dims."""
        v, pairs, bshape, pre, post, _ = plan
        nb = math.prod(bshape)
        adv = self.full(bshape, v._off, np.int64)
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

    def index_get(self, a, key):
        """``a[key]`` for a key with index arrays (NumPy's advanced indexing): a copy."""
        plan = self._adv_plan(a, key, check=True)
        oshape = plan[-1]
        out = self.empty(oshape, a.dtype, a.device_index)
        n = out.size
        if n:
            launch(KX.take_kernel, n, n, plan[0]._buf, *self._adv_args(plan), out._buf)
        return out

    def _scatter(self, kernel, a, key, value, check, cast, mask_count=False):
        if not isinstance(a, CudaArray):  # a host target with device indices or values
            raise device_mismatch("cuda:0", "cpu")
        vshape = value.shape if mask_count and isinstance(value, CudaArray) else None
        plan = self._adv_plan(a, key, check, vshape)
        oshape = plan[-1]
        if isinstance(value, np.ndarray):
            if value.ndim:
                raise device_mismatch(f"cuda:{a.device_index}", "cpu")
            value = value[()]
        if not isinstance(value, CudaArray):
            value = self.full((), value, a.dtype)
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
            args = self._adv_args(plan)
            launch(kernel, n, n, plan[0]._buf, *args, value._buf, voff, vst, oshape or (1,))

    def index_put(self, a, key, value):
        """``a[key] = value`` in place for a key with index arrays (a repeated index: which
        write lands is unspecified, as in PyTorch)."""
        self._scatter(KX.put_kernel, a, key, value, check=True, cast=False)

    def add_at(self, a, key, value):
        """``np.add.at(a, key, value)``: atomic adds, so repeated indices add up (NOTE [CUDA
        index validation]: the indices were checked by the op that made them). A bool mask's
        True count is read from ``value``'s shape (NOTE [CUDA mask scatter])."""
        if a.dtype.kind not in "fiu" or a.dtype.itemsize < 4:
            raise _unsupported(f"add.at into {a.dtype} arrays")
        if (
            a.dtype.kind == "f"
        ):  # float atomics add in arrival order (NOTE [Deterministic algorithms])
            determinism.alert("add_at_kernel (CUDA accumulation into repeated indices)")
        self._scatter(KX.add_at_kernel, a, key, value, check=False, cast=True, mask_count=True)

    def mask_nonzero(self, mask, count):
        """``np.stack(np.nonzero(mask))`` of a CUDA bool ``mask`` with ``count`` True entries,
        made on the device (NOTE [CUDA mask scatter]): int64 of shape ``(mask.ndim, count)``."""
        csum = self.scan("cumsum", mask, None)  # the running count, read in place
        out = self.full((mask.ndim, count), KX.BAD, np.int64)  # unwritten: out of range
        shape, st = _meta(mask)
        launch(KX.mask_coords_kernel, mask.size, mask.size, mask._buf, mask._off, shape, st,
               csum._buf, count, out._buf)  # fmt: skip
        return out

    def take_along_axis(self, arr, indices, axis):
        """NumPy's ``take_along_axis`` (``gather``), reading ``arr`` through its strides."""
        idx = indices if isinstance(indices, CudaArray) else np.asarray(indices)
        if idx.dtype.kind not in "iu":
            raise IndexError("`indices` must be an integer array")
        if axis is None:
            arr, idx, axis = arr.reshape(-1), idx.reshape(-1), 0
        if arr.ndim != idx.ndim:
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        axis = self._axis(axis, arr.ndim)
        off = [tuple(s for d, s in enumerate(x.shape) if d != axis) for x in (arr, idx)]
        shape = list(np.broadcast_shapes(*off))
        shape.insert(axis, idx.shape[axis])
        shape = tuple(shape)
        size = arr.shape[axis]
        self._check_range(idx, size, axis)
        idx = self._device_index(idx)
        out = self.empty(shape, arr.dtype, arr.device_index)
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

    def indices(self, dimensions, dtype=int, sparse=False):
        """NumPy's ``indices`` made on the device (no host copy)."""
        dims = tuple(int(n) for n in dimensions)
        nd = len(dims)
        dt = np.dtype(dtype)
        parts = []
        for i, n in enumerate(dims):
            r = self.arange(n)
            r = r if dt == np.int64 else r.astype(dt)
            parts.append(r.reshape(tuple(n if j == i else 1 for j in range(nd))))
        if sparse:
            return tuple(parts)
        out = self.empty((nd, *dims), dt)
        for i, p in enumerate(parts):
            self.copy_into(out[i], p)
        return out

    def nonzero(self, a):
        """NumPy's ``nonzero``: one int64 array per dim (``a`` is copied to the host to find
        the non-zero positions: their count is the result's shape)."""
        if a.ndim == 0:
            raise ValueError("Calling nonzero on 0d arrays is not allowed.")
        nz = np.stack(np.nonzero(a.to_host())).astype(np.int64)
        dev = self.from_host(nz)
        return tuple(dev[j] for j in range(a.ndim))

    def argsort(self, a, axis=-1):
        """Indices (int64) that sort ``a`` along ``axis``: a stable merge sort of every row
        (NOTE [CUDA sort]); NaN sorts last."""
        if a.ndim == 0:
            return self.zeros((), np.int64)
        if axis is None:
            a, axis = a.reshape(-1), 0
        axis = self._axis(axis, a.ndim)
        n = a.shape[axis]
        perm = (*(d for d in range(a.ndim) if d != axis), axis)
        v = a.transpose(perm)  # the sorted dim last: rows of n
        total = a.size
        out = self.empty(a.shape, np.int64, a.device_index)
        if total == 0:
            return out
        kdt = np.uint8 if a.dtype.kind == "b" else a.dtype
        keys = self.empty(v.shape, kdt)
        self.copy_into(keys, v)
        idx = self.empty(v.shape, np.int64)
        launch(KO.row_iota_kernel, total, total, n, idx._buf)
        keys2 = self.empty(v.shape, kdt)
        idx2 = self.empty(v.shape, np.int64)
        w = 1
        while w < n:
            launch(
                KO.merge_pass_kernel, total, total, n, w, keys._buf, idx._buf, keys2._buf, idx2._buf
            )
            keys, keys2, idx, idx2 = keys2, keys, idx2, idx
            w *= 2
        inv = tuple(int(i) for i in np.argsort(perm))
        self.copy_into(out, idx.transpose(inv))
        return out

    def searchsorted(self, a, v, side="left"):
        """NumPy's ``searchsorted`` of ``v`` (an array or a number) in the sorted 1-D ``a``:
        int64 insertion indices, one binary search per value."""
        if side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
        if a.ndim != 1:
            raise ValueError("object too deep for desired array")
        if not isinstance(v, CudaArray):
            v = self.full((), v, a.dtype)
        out = self.empty(v.shape, np.int64, a.device_index)
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

    def reduce_at(self, name, a, key, value):
        """``np.<name>.at(a, key, value)`` in place for ``name`` in ``multiply``,
        ``maximum``, ``minimum`` (``scatter_reduce``'s prod/amax/amin): the values of a
        repeated index fold in order, as NumPy's (NOTE [CUDA multiply.at, maximum.at,
        minimum.at]; the indices were checked by the op that made them)."""
        if not isinstance(a, CudaArray):  # a host target with device indices or values
            raise device_mismatch("cuda:0", "cpu")
        if a.dtype.kind not in "fiu":
            raise _unsupported(f"{name}.at into {a.dtype} arrays")
        plan = self._adv_plan(a, key, check=False)
        oshape = plan[-1]
        if isinstance(value, np.ndarray):
            if value.ndim:
                raise device_mismatch(f"cuda:{a.device_index}", "cpu")
            value = value[()]
        if not isinstance(value, CudaArray):
            value = self.full((), value, a.dtype)
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
        dest = self.empty((n,), np.int64, a.device_index)
        launch(KX.dest_kernel, n, n, *self._adv_args(plan), dest._buf)
        order = self.argsort(dest, 0)
        fold = KX.REDUCE_AT[name]
        buf = plan[0]._buf
        launch(KX.reduce_at_kernel, n, n, fold, buf, dest._buf, order._buf, value._buf, voff,
               vst, oshape or (1,))  # fmt: skip

    # -- end of the op database's gaps -------------------------------------------------------
