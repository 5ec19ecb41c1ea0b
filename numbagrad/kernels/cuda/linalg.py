"""``@cuda.jit`` matrix product: a tiled shared-memory kernel.

NOTE [CUDA matmul]
Each block computes ``TILE x TILE`` outputs of one matrix of the batch; along the
contraction it loads one tile of ``a`` and one of ``b`` into shared memory per step (zero
padded at the edges), so each element of ``a`` and ``b`` is read from global memory
``n / TILE`` and ``m / TILE`` times instead of ``n`` and ``m`` times. Operands are strided
(transposed views need no copy); batch dims broadcast through stride 0. Blocks stride over
the batch, rows and columns, so any grid covers any size. Accumulates in float64. cuBLAS
(through CuPy or nvmath-python) is not used: neither is a dependency of numbagrad.
"""

from __future__ import annotations

from numba import float64

from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = ["TILE", "matmul_kernel"]

TILE = 16


@cuda.jit
def matmul_kernel(nb, m, k, n, a, aoff, ab_st, ars, acs, b, boff, bb_st, brs, bcs, bshape, out):
    """``out[z] = a[z] @ b[z]`` for the ``nb`` matrices of the batch ``bshape``; ``out`` is
    contiguous ``(nb, m, n)``."""
    sa = cuda.shared.array((TILE, TILE), float64)
    sb = cuda.shared.array((TILE, TILE), float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for z in range(cuda.blockIdx.z, nb, cuda.gridDim.z):
        ao = _offset(z, bshape, ab_st, aoff)
        bo = _offset(z, bshape, bb_st, boff)
        for row0 in range(cuda.blockIdx.y * TILE, m, cuda.gridDim.y * TILE):
            for col0 in range(cuda.blockIdx.x * TILE, n, cuda.gridDim.x * TILE):
                row = row0 + ty
                col = col0 + tx
                acc = 0.0
                for t0 in range(0, k, TILE):
                    if row < m and t0 + tx < k:
                        sa[ty, tx] = a[ao + row * ars + (t0 + tx) * acs]
                    else:
                        sa[ty, tx] = 0.0
                    if col < n and t0 + ty < k:
                        sb[ty, tx] = b[bo + (t0 + ty) * brs + col * bcs]
                    else:
                        sb[ty, tx] = 0.0
                    cuda.syncthreads()
                    for q in range(TILE):
                        acc += sa[ty, q] * sb[q, tx]
                    cuda.syncthreads()
                if row < m and col < n:
                    out[(z * m + row) * n + col] = acc
