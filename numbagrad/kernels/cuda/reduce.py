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


@cuda.jit
def sum_kernel(nout, r, x, xoff, shape, st, out):
    """``out[j] = sum(x[j * r : (j + 1) * r])`` over the permuted view, in float64."""
    sm = cuda.shared.array(TPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for j in range(cuda.blockIdx.x, nout, cuda.gridDim.x):
        acc = 0.0
        for k in range(tid, r, nt):
            acc += x[_offset(j * r + k, shape, st, xoff)]
        sm[tid] = acc
        cuda.syncthreads()
        step = nt // 2
        while step > 0:
            if tid < step:
                sm[tid] += sm[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            out[j] = sm[0]
        cuda.syncthreads()  # sm is reused by the block's next output


@cuda.jit
def sum_int_kernel(nout, r, x, xoff, shape, st, out):
    """``sum_kernel`` for integer and bool inputs, accumulating in int64."""
    sm = cuda.shared.array(TPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for j in range(cuda.blockIdx.x, nout, cuda.gridDim.x):
        acc = 0
        for k in range(tid, r, nt):
            acc += int64(x[_offset(j * r + k, shape, st, xoff)])
        sm[tid] = acc
        cuda.syncthreads()
        step = nt // 2
        while step > 0:
            if tid < step:
                sm[tid] += sm[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            out[j] = sm[0]
        cuda.syncthreads()
