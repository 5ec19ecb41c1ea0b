"""``@cuda.jit`` index kernels: advanced indexing (read, write, accumulate), ``take_along_axis``,
index ranges and ``arange``.

NOTE [CUDA advanced indexing]
NumPy's advanced indexing of a strided view by ``K`` index arrays (broadcast together to
``B``) reads, for output element ``o``, the source offset ``adv[b] + pre + post``:
the output is laid out as ``(pre dims, B, post dims)`` (PyTorch's and NumPy's placement:
the broadcast index dims stand where the index entries stood when those were adjacent,
else first, with ``pre`` empty), ``pre``/``post`` are ordinary strided dims of the source,
and ``adv`` is one int64 device array of shape ``B`` holding the view's offset plus
``sum_k index_k[b] * stride_k``. ``adv`` starts as the view's offset and is built by one
``adv_offset_kernel`` launch per index array: every partial sum is the offset of an element
of the view (its other coordinates 0), so it is never negative for valid indices, even
through negative strides, and a negative entry can mean "out of range". Every kernel so
takes a fixed number of arrays whatever ``K`` is (no kernel factories). Negative indices are wrapped
as NumPy does. The backend validates index values on the host before any launch (NOTE
[CUDA index validation] in ``backend.py``); the kernels still guard every index against its
dimension (an out-of-range entry makes ``adv`` negative and is never read or written), so no
kernel can touch memory outside its array whatever it is given. Accumulation
(``add_at_kernel``: ``np.add.at``, the backward of indexing and ``gather``) adds with
``cuda.atomic.add``, so repeated indices add up (float32, float64, int32 and int64 targets).

NOTE [CUDA multiply.at, maximum.at, minimum.at]
There is no atomic multiply, and the atomic float max/min leave NaN handling to the
hardware, so these three (``scatter_reduce``'s prod/amax/amin) do not use atomics: the
destination offset of every value (``dest_kernel``) is sorted with the stable device
``argsort``, and the first thread of each run of equal offsets folds the run's values into
the destination in their original order (``reduce_at_kernel``), as ``np.multiply.at``
does: the same rounding as the CPU, NaN propagating as NumPy's ``maximum``/``minimum``, and
no lost updates whatever the grid (a run is read by one thread only).
"""

from __future__ import annotations

from numba import int64

from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = [
    "BAD",
    "REDUCE_AT",
    "add_at_kernel",
    "adv_offset_kernel",
    "dest_kernel",
    "iota_kernel",
    "mask_coords_kernel",
    "minmax_kernel",
    "put_kernel",
    "reduce_at_kernel",
    "take_along_kernel",
    "take_kernel",
]

# what ``adv_offset_kernel`` stores for an out-of-range index: any sum with it stays negative
BAD = -(2**62)

# op codes of ``reduce_at_kernel`` by NumPy's ufunc names (NOTE [CUDA op codes] in
# ``elementwise.py``), and the names its branches compare with
REDUCE_AT = {"multiply": 0, "maximum": 1, "minimum": 2}
_R_MULTIPLY = REDUCE_AT["multiply"]
_R_MAXIMUM = REDUCE_AT["maximum"]
_R_MINIMUM = REDUCE_AT["minimum"]


@cuda.jit
def minmax_kernel(n, x, xoff, shape, st, out):
    """``out[0] = min(x)``, ``out[1] = max(x)`` of an integer (or bool) strided array; ``out``
    (int64) starts at ``(int64 max, int64 min)``."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = int64(x[_offset(i, shape, st, xoff)])
        cuda.atomic.min(out, 0, v)
        cuda.atomic.max(out, 1, v)


@cuda.jit
def mask_coords_kernel(n, mask, moff, shape, st, csum, count, out):
    """The coordinates of the True entries of the strided bool ``mask`` (``np.nonzero``, in
    row-major order) from ``csum``, the inclusive running count of the flattened mask: the
    True entry at flat position ``p`` is number ``csum[p] - 1``, and its coordinate along
    dim ``d`` goes to ``out[d * count + csum[p] - 1]``. Entries past ``count`` (a count
    that does not match the mask) are not written (NOTE [CUDA mask scatter] in
    ``backend.py``)."""
    nd = len(shape)
    for p in range(cuda.grid(1), n, cuda.gridsize(1)):
        if mask[_offset(p, shape, st, moff)]:
            j = csum[p] - 1
            if 0 <= j < count:
                rest = p
                for d in range(nd - 1, -1, -1):
                    out[d * count + j] = rest % shape[d]
                    rest //= shape[d]


@cuda.jit
def iota_kernel(n, out):
    """``out[i] = i`` (``arange`` on the device: no host copy)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = i


@cuda.jit
def adv_offset_kernel(n, acc, idx, ioff, ist, shape, size, stride):
    """``acc[b] += wrap(idx[b]) * stride`` over the broadcast index shape ``shape`` (``ist``:
    the index array's strides broadcast to it); an index outside ``[-size, size)`` sets
    ``acc[b]`` to ``BAD`` (NOTE [CUDA advanced indexing])."""
    for b in range(cuda.grid(1), n, cuda.gridsize(1)):
        j = int64(idx[_offset(b, shape, ist, ioff)])
        if j < 0:
            j += size
        if j < 0 or j >= size or acc[b] < 0:
            acc[b] = BAD
        else:
            acc[b] += j * stride


@cuda.jit(device=True)
def _src(o, adv, nb, npost, pre_shape, pre_st, post_shape, post_st):
    """The source offset of output element ``o`` (NOTE [CUDA advanced indexing]); negative
    for an out-of-range index."""
    post = o % npost
    t = o // npost
    b = t % nb
    a = adv[b]
    if a < 0:
        return -1
    off = a + _offset(t // nb, pre_shape, pre_st, 0)
    return _offset(post, post_shape, post_st, off)


@cuda.jit
def take_kernel(n, src, adv, nb, npost, pre_shape, pre_st, post_shape, post_st, out):
    """``out[o] = src[offset(o)]``: advanced indexing into the contiguous ``out``."""
    m = src.shape[0]
    for o in range(cuda.grid(1), n, cuda.gridsize(1)):
        s = _src(o, adv, nb, npost, pre_shape, pre_st, post_shape, post_st)
        if 0 <= s < m:
            out[o] = src[s]


@cuda.jit
def put_kernel(
    n, dst, adv, nb, npost, pre_shape, pre_st, post_shape, post_st, v, voff, vst, oshape
):
    """``dst[offset(o)] = v[o]`` (``v`` broadcast to the index result's shape ``oshape``);
    which write lands for a repeated index is unspecified, as in NumPy and PyTorch."""
    m = dst.shape[0]
    for o in range(cuda.grid(1), n, cuda.gridsize(1)):
        d = _src(o, adv, nb, npost, pre_shape, pre_st, post_shape, post_st)
        if 0 <= d < m:
            dst[d] = v[_offset(o, oshape, vst, voff)]


@cuda.jit
def add_at_kernel(
    n, dst, adv, nb, npost, pre_shape, pre_st, post_shape, post_st, v, voff, vst, oshape
):
    """``dst[offset(o)] += v[o]`` atomically (``np.add.at``): repeated indices add up."""
    m = dst.shape[0]
    for o in range(cuda.grid(1), n, cuda.gridsize(1)):
        d = _src(o, adv, nb, npost, pre_shape, pre_st, post_shape, post_st)
        if 0 <= d < m:
            cuda.atomic.add(dst, d, v[_offset(o, oshape, vst, voff)])


@cuda.jit
def take_along_kernel(n, x, xoff, xst, idx, ioff, ist, shape, size, axst, out):
    """``out[o] = x[..., wrap(idx[o]), ...]`` along one axis (``np.take_along_axis``): ``xst``
    are ``x``'s strides broadcast to the output ``shape`` with 0 on the axis, ``axst`` its
    stride there; an out-of-range index (never after the host check) is not read."""
    m = x.shape[0]
    for o in range(cuda.grid(1), n, cuda.gridsize(1)):
        j = int64(idx[_offset(o, shape, ist, ioff)])
        if j < 0:
            j += size
        if 0 <= j < size:
            s = _offset(o, shape, xst, xoff) + j * axst
            if 0 <= s < m:
                out[o] = x[s]


@cuda.jit
def dest_kernel(n, adv, nb, npost, pre_shape, pre_st, post_shape, post_st, out):
    """``out[o]``: the destination offset of value ``o`` of an advanced-index write (``-1``
    for an out-of-range index; NOTE [CUDA multiply.at, maximum.at, minimum.at])."""
    for o in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[o] = _src(o, adv, nb, npost, pre_shape, pre_st, post_shape, post_st)


@cuda.jit
def reduce_at_kernel(n, op, dst, dest, order, v, voff, vst, oshape):
    """``np.multiply.at``, ``np.maximum.at`` or ``np.minimum.at`` (``op``: ``REDUCE_AT``) of the
    values ``v`` (broadcast to ``oshape``) at the offsets ``dest``; ``order`` sorts ``dest``
    stably, and the head of each run of equal offsets folds the whole run (NOTE [CUDA
    multiply.at, maximum.at, minimum.at])."""
    m = dst.shape[0]
    for k in range(cuda.grid(1), n, cuda.gridsize(1)):
        d = dest[order[k]]
        if d < 0 or d >= m or (k > 0 and dest[order[k - 1]] == d):
            continue
        acc = dst[d]
        j = k
        while j < n and dest[order[j]] == d:
            x = v[_offset(order[j], oshape, vst, voff)]
            if op == _R_MULTIPLY:
                acc = acc * x
            elif op == _R_MAXIMUM:
                if x > acc or x != x:  # a NaN value wins; a NaN accumulator stays
                    acc = x
            elif op == _R_MINIMUM:
                if x < acc or x != x:
                    acc = x
            j += 1
        dst[d] = acc
