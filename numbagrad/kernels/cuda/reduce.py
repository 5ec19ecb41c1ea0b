"""``@cuda.jit`` reductions: a shared-memory tree per block (numba-cuda's
``kernels/reduction.py`` scheme).

NOTE [CUDA reductions]
The reduced dims are moved last by permuting the shape and strides (no copy), so output
``j`` reduces the ``r`` elements with linear indices ``j * r .. j * r + r - 1`` of the
permuted view. One block reduces one output at a time (blocks stride over outputs): each
thread sums a block-strided slice of the ``r`` elements into a register, the block then
halves the partial sums in shared memory (``threads`` a power of two, at most ``TPB``)::

    thread:  0    1    2    3    4    5    6    7
    step 4:  0+4  1+5  2+6  3+7
    step 2:  0+2  1+3
    step 1:  0+1                                  -> out[j]

Floating sums accumulate in float64, integer and bool sums in int64 (PyTorch's dtype).
"""

from __future__ import annotations

from numba import float64, int64

from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = ["TPB", "sum_int_kernel", "sum_kernel"]

TPB = 256  # shared-memory slots: the largest block a reduction is launched with


# NOTE [CUDA split sums]
# One block per output leaves a GPU idle when there are few outputs: a full sum of 10M
# elements ran on one multiprocessor of an H100's 132. So the sum kernels take the ``r``
# elements of an output in ``chunks`` pieces of ``rc`` elements: block item ``b`` sums piece
# ``b % chunks`` of output ``b // chunks`` into ``out[b]``. The backend splits a sum with
# few, long outputs that way (``nout * chunks`` partial sums in float64 or int64), then
# sums the partials with ``chunks = 1``, so every multiprocessor reads its share.


@cuda.jit
def sum_kernel(nitems, chunks, rc, r, x, xoff, shape, st, out):
    """``out[b] = sum`` of piece ``b % chunks`` (``rc`` elements) of output ``b // chunks``
    (``r`` elements) of the permuted view, in float64 (NOTE [CUDA split sums])."""
    sm = cuda.shared.array(TPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, nitems, cuda.gridDim.x):
        j = b // chunks
        k0 = (b - j * chunks) * rc
        acc = 0.0
        for k in range(k0 + tid, min(k0 + rc, r), nt):
            acc += x[_offset(j * r + k, shape, st, xoff)]
        sm[tid] = acc
        _reduce_tree(_ADD, sm, tid, nt)
        if tid == 0:
            out[b] = sm[0]
        cuda.syncthreads()  # sm is reused by the block's next output


@cuda.jit
def sum_int_kernel(nitems, chunks, rc, r, x, xoff, shape, st, out):
    """``sum_kernel`` for integer and bool inputs, accumulating in int64."""
    sm = cuda.shared.array(TPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, nitems, cuda.gridDim.x):
        j = b // chunks
        k0 = (b - j * chunks) * rc
        acc = 0
        for k in range(k0 + tid, min(k0 + rc, r), nt):
            acc += int64(x[_offset(j * r + k, shape, st, xoff)])
        sm[tid] = acc
        _reduce_tree(_ADD, sm, tid, nt)
        if tid == 0:
            out[b] = sm[0]
        cuda.syncthreads()


# -- products, extremes and boolean reductions (NOTE [CUDA reductions], same tree) ------------
# op codes of ``reduce_kernel`` / ``reduce_int_kernel``
REDUCE = {"prod": 0, "amax": 1, "amin": 2, "all": 3, "any": 4, "nansum": 5}
# the names the device functions compare with (NOTE [CUDA op codes] in ``elementwise.py``)
_OP_PROD = REDUCE["prod"]
_OP_AMAX = REDUCE["amax"]
_OP_AMIN = REDUCE["amin"]
_OP_ALL = REDUCE["all"]
_OP_ANY = REDUCE["any"]
_OP_NANSUM = REDUCE["nansum"]
_ADD = _OP_NANSUM  # ``_combine``'s ``a + b`` (nansum's combine; the sums' tree too)


@cuda.jit(device=True)
def _combine(op, a, b):
    """Two partial results of ``op`` (``REDUCE``) combined; max/min propagate NaN."""
    if op == _OP_NANSUM:
        return a + b
    if op == _OP_PROD:
        return a * b
    if op == _OP_AMAX or op == _OP_ANY:
        return a if a >= b or a != a else b
    return a if a <= b or a != a else b  # _OP_AMIN, _OP_ALL


@cuda.jit(device=True)
def _element(op, v):
    """An input element as ``op`` reads it: all/any test it against zero (NaN is true)."""
    if op == _OP_ALL or op == _OP_ANY:
        return 1 if v != 0 else 0
    return v


@cuda.jit(device=True)
def _reduce_tree(op, sm, tid, nt):
    """The shared-memory tree of ``reduce_kernel``: after it, ``sm[0]`` combines the
    block's ``nt`` partial results with ``op``. Every thread of the block calls it (it
    synchronises); the accumulator dtype is ``sm``'s."""
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step:
            sm[tid] = _combine(op, sm[tid], sm[tid + step])
        cuda.syncthreads()
        step //= 2


@cuda.jit
def reduce_kernel(op, nout, r, x, xoff, shape, st, identity, out):
    """``out[j] = op(x[j * r : (j + 1) * r])`` over the permuted view, in float64 (prod,
    amax, amin and nansum of floating inputs; nansum reads NaN as 0); ``identity`` pads the
    threads past ``r``."""
    sm = cuda.shared.array(TPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for j in range(cuda.blockIdx.x, nout, cuda.gridDim.x):
        acc = identity
        for k in range(tid, r, nt):
            v = float64(x[_offset(j * r + k, shape, st, xoff)])
            if op == _OP_NANSUM and v != v:
                v = 0.0
            acc = _combine(op, acc, v)
        sm[tid] = acc
        _reduce_tree(op, sm, tid, nt)
        if tid == 0:
            out[j] = sm[0]
        cuda.syncthreads()


@cuda.jit
def reduce_int_kernel(op, nout, r, x, xoff, shape, st, identity, out):
    """``reduce_kernel`` in int64: prod/amax/amin of integer and bool inputs, and all/any
    of any input (each element read as 0 or 1)."""
    sm = cuda.shared.array(TPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for j in range(cuda.blockIdx.x, nout, cuda.gridDim.x):
        acc = identity
        for k in range(tid, r, nt):
            v = x[_offset(j * r + k, shape, st, xoff)]
            acc = _combine(op, acc, int64(_element(op, v)))
        sm[tid] = acc
        _reduce_tree(op, sm, tid, nt)
        if tid == 0:
            out[j] = sm[0]
        cuda.syncthreads()


# -- argmax / argmin: a tree of (value, index) pairs ----------------------------------------------
@cuda.jit(device=True)
def _better(is_max, v, i, w, k):
    """Whether the pair ``(v, i)`` wins over ``(w, k)``: NaN wins (the first NaN, as
    PyTorch's argmax and argmin), then the larger (smaller) value, then the lower index."""
    if v != v:
        return w == w or i < k
    if w != w:
        return False
    if v == w:
        return i < k
    return v > w if is_max else v < w


@cuda.jit(device=True)
def _arg_tree(is_max, sv, si, tid, nt):
    """The shared-memory tree of ``argreduce_kernel``: after it, ``(sv[0], si[0])`` is the
    winning pair of the block's ``nt`` partial results (``si < 0``: no element). Every
    thread of the block calls it (it synchronises); the value dtype is ``sv``'s."""
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step:
            k2 = si[tid + step]
            if k2 >= 0 and (si[tid] < 0 or _better(is_max, sv[tid + step], k2, sv[tid], si[tid])):
                sv[tid] = sv[tid + step]
                si[tid] = k2
        cuda.syncthreads()
        step //= 2


@cuda.jit
def argreduce_kernel(is_max, nout, r, x, xoff, shape, st, out):
    """``out[j]`` = the index (in ``0 .. r - 1``) of the first maximum (``is_max``) or
    minimum of ``x[j * r : (j + 1) * r]``, compared in float64 (floating inputs)."""
    sv = cuda.shared.array(TPB, float64)
    si = cuda.shared.array(TPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for j in range(cuda.blockIdx.x, nout, cuda.gridDim.x):
        best = 0.0
        bi = int64(-1)  # -1: this thread saw no element (r < nt)
        for k in range(tid, r, nt):
            v = float64(x[_offset(j * r + k, shape, st, xoff)])
            if bi < 0 or _better(is_max, v, k, best, bi):
                best = v
                bi = k
        sv[tid] = best
        si[tid] = bi
        _arg_tree(is_max, sv, si, tid, nt)
        if tid == 0:
            out[j] = si[0]
        cuda.syncthreads()


@cuda.jit
def argreduce_int_kernel(is_max, nout, r, x, xoff, shape, st, out):
    """``argreduce_kernel`` for integer inputs, compared exactly in int64."""
    sv = cuda.shared.array(TPB, int64)
    si = cuda.shared.array(TPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for j in range(cuda.blockIdx.x, nout, cuda.gridDim.x):
        best = int64(0)
        bi = int64(-1)
        for k in range(tid, r, nt):
            v = int64(x[_offset(j * r + k, shape, st, xoff)])
            if bi < 0 or _better(is_max, v, k, best, bi):
                best = v
                bi = k
        sv[tid] = best
        si[tid] = bi
        _arg_tree(is_max, sv, si, tid, nt)
        if tid == 0:
            out[j] = si[0]
        cuda.syncthreads()
