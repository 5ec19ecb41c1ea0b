"""``@cuda.jit`` linear algebra: the matrix product (a tiled shared-memory kernel) and the
decompositions and solvers (NOTE [CUDA decompositions]): triangular solves, LU with partial
pivoting, Cholesky, Householder QR, and cyclic Jacobi for ``eigh`` and the SVD; the Pade
sums of ``matrix_exp`` (NOTE [CUDA matrix_exp]).

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

import math

from numba import float64, int64

from numbagrad.kernels import PADE13
from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset
from numbagrad.kernels.cuda.reduce import _ADD, _reduce_tree

cuda = _cuda()

__all__ = [
    "LTPB",
    "TILE",
    "cholesky_kernel",
    "expm_pade_kernel",
    "jacobi_eigh_kernel",
    "jacobi_svd_kernel",
    "lu_det_kernel",
    "lu_kernel",
    "lu_permute_kernel",
    "matmul_kernel",
    "qr_kernel",
    "qr_q_kernel",
    "trsm_kernel",
]

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


# -- decompositions and solvers ----------------------------------------------------------------
# NOTE [CUDA decompositions]
# One thread block factors one matrix at a time (blocks stride over the batch, so any grid
# covers any batch); its threads share each step of the factorization (a row swap, a column
# scaling, a rank-one update of the trailing matrix, a dot product as a shared-memory tree)
# and ``cuda.syncthreads()`` separates the steps, so every thread sees the previous step's
# writes to global memory. The block size is a power of two up to ``LTPB`` and any block
# size is correct (the loops stride by ``blockDim``). Each kernel works in place on a
# contiguous float64 workspace of ``(nb, m, n)``: the backend fills it from the input with
# one strided copy (a factorization overwrites its matrix, as LAPACK's does; the triangular
# solve reads its triangle through strides and overwrites only the right-hand sides), the
# arithmetic runs in float64 and the results are rounded once to the input's dtype (float32
# results are those of a float64 factorization, so they may differ from LAPACK's float32
# ones in the last bits). Eigenvectors and singular vectors come from Jacobi rotations, so
# their signs are not LAPACK's (each is unique only up to sign). Control flow that
# contains a barrier depends only on values every thread of the block has read after the
# same barrier, so no thread skips a ``syncthreads`` another one waits at. Failures (a zero
# pivot, a leading minor that is not positive-definite, a non-finite input) are written to
# a status array that the backend reads once, after the kernel (NOTE [CUDA linalg status]).
LTPB = 128  # shared-memory slots: the largest block a decomposition kernel is launched with
EPS = 2.220446049250313e-16  # float64's machine epsilon


@cuda.jit(device=True)
def _tree_sum(sm, tid, nt):
    """The sum of ``sm[0:nt]`` (``nt`` a power of two) for every thread of the block; every
    thread calls it (it synchronises), after writing its ``sm[tid]``."""
    _reduce_tree(_ADD, sm, tid, nt)
    r = sm[0]
    cuda.syncthreads()  # every thread has read sm[0] before sm is reused
    return r


@cuda.jit
def trsm_kernel(nb, n, k, a, aoff, ab_st, ars, acs, bshape, lower, unit, x):
    """Solve ``A[z] X = B`` in place (``x``: contiguous float64 ``(nb, n, k)`` holding ``B``)
    for the triangular ``A[z]`` (its lower or upper triangle, a unit diagonal when
    ``unit``), read through strides; batch dims of ``A`` broadcast through stride 0. Row by
    row: divide by the diagonal, then the block subtracts the row from every row after it."""
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        ao = _offset(z, bshape, ab_st, aoff)
        xo = z * n * k
        for s in range(n):
            i = s if lower else n - 1 - s
            if not unit:
                d = float64(a[ao + i * ars + i * acs])
                for c in range(tid, k, nt):
                    x[xo + i * k + c] = x[xo + i * k + c] / d
            cuda.syncthreads()
            nrem = n - 1 - i if lower else i
            for t in range(tid, nrem * k, nt):
                rr = t // k
                c = t - rr * k
                r = i + 1 + rr if lower else rr
                x[xo + r * k + c] -= float64(a[ao + r * ars + i * acs]) * x[xo + i * k + c]
            cuda.syncthreads()


@cuda.jit
def lu_kernel(nb, n, w, piv, info):
    """LU factorization with partial pivoting of each ``(n, n)`` matrix of the contiguous
    float64 ``w``, in place (LAPACK's ``getf2``: ``L`` unit lower below the diagonal, ``U``
    on and above it). ``piv[z, j]``: the row swapped with row ``j`` at step ``j`` (the first
    largest ``|entry|``); ``info[z, 0]``: the first zero pivot (1-based; 0 if none, and the
    step is skipped, as LAPACK's); ``info[z, 1]``: 1 if the matrix has a non-finite entry."""
    sv = cuda.shared.array(LTPB, float64)
    si = cuda.shared.array(LTPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        wo = z * n * n
        bad = 0.0
        for t in range(tid, n * n, nt):
            v = w[wo + t]
            if not (v - v == 0.0):  # NaN or +-inf
                bad = 1.0
        sv[tid] = bad
        nonfinite = _tree_sum(sv, tid, nt)
        first = int64(0)
        for j in range(n):
            best = -1.0
            bi = int64(-1)
            for r in range(j + tid, n, nt):
                v = abs(w[wo + r * n + j])
                if bi < 0 or v > best:
                    best = v
                    bi = r
            sv[tid] = best
            si[tid] = bi
            cuda.syncthreads()
            step = nt // 2
            while step > 0:
                if tid < step:
                    k2 = si[tid + step]
                    if k2 >= 0 and (
                        si[tid] < 0
                        or sv[tid + step] > sv[tid]
                        or (sv[tid + step] == sv[tid] and k2 < si[tid])
                    ):
                        sv[tid] = sv[tid + step]
                        si[tid] = k2
                cuda.syncthreads()
                step //= 2
            p = si[0]
            pv = w[wo + p * n + j]
            cuda.syncthreads()  # every thread has read the pivot before the swap
            if tid == 0:
                piv[z * n + j] = p
            if pv == 0.0:
                if first == 0:
                    first = j + 1
            else:
                if p != j:
                    for c in range(tid, n, nt):
                        tmp = w[wo + j * n + c]
                        w[wo + j * n + c] = w[wo + p * n + c]
                        w[wo + p * n + c] = tmp
                cuda.syncthreads()
                for r in range(j + 1 + tid, n, nt):
                    w[wo + r * n + j] = w[wo + r * n + j] / pv
                cuda.syncthreads()
                m = n - 1 - j
                for t in range(tid, m * m, nt):
                    rr = t // m
                    r = j + 1 + rr
                    c = j + 1 + t - rr * m
                    w[wo + r * n + c] -= w[wo + r * n + j] * w[wo + j * n + c]
            cuda.syncthreads()
        if tid == 0:
            info[2 * z] = first
            info[2 * z + 1] = 1 if nonfinite > 0.0 else 0
        cuda.syncthreads()


@cuda.jit
def lu_permute_kernel(nb, n, k, piv, pb_st, poff, bshape, x):
    """Apply the row swaps ``piv`` of ``lu_kernel`` (batch broadcast through ``pb_st``, in
    elements) to each ``(n, k)`` matrix of the contiguous float64 ``x``, in order."""
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        po = _offset(z, bshape, pb_st, poff)
        xo = z * n * k
        for j in range(n):
            p = piv[po + j]
            if p != j:
                for c in range(tid, k, nt):
                    tmp = x[xo + j * k + c]
                    x[xo + j * k + c] = x[xo + p * k + c]
                    x[xo + p * k + c] = tmp
            cuda.syncthreads()


@cuda.jit
def lu_det_kernel(nb, n, w, piv, sign, logabs):
    """``sign`` and ``log|det|`` of each matrix from its LU factors (one thread per
    matrix): the sign of the permutation times the diagonal's signs, the sum of the
    ``log|u_jj|``; a zero pivot gives sign 0 and ``-inf`` (NumPy's ``slogdet``)."""
    for z in range(cuda.grid(1), nb, cuda.gridsize(1)):
        s = 1.0
        la = 0.0
        for j in range(n):
            u = w[z * n * n + j * n + j]
            if piv[z * n + j] != j:
                s = -s
            if u < 0.0:
                s = -s
            elif u == 0.0:
                s = 0.0
                la = -math.inf
                break
            la += math.log(abs(u))
        sign[z] = s
        logabs[z] = la


@cuda.jit
def cholesky_kernel(nb, n, w, info):
    """The lower Cholesky factor of each ``(n, n)`` matrix of the contiguous float64 ``w``,
    in place, reading its lower triangle (LAPACK's ``potf2``, right-looking); the upper
    triangle is zeroed. ``info[z]``: the order of the first leading minor whose pivot is
    not positive (NaN included), where the factorization stopped; 0 on success."""
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        wo = z * n * n
        stop = int64(0)
        for j in range(n):
            d = w[wo + j * n + j]
            if not d > 0.0:
                stop = j + 1
                break
            d = math.sqrt(d)
            cuda.syncthreads()  # every thread has read the pivot before it changes
            if tid == 0:
                w[wo + j * n + j] = d
            for r in range(j + 1 + tid, n, nt):
                w[wo + r * n + j] = w[wo + r * n + j] / d
            cuda.syncthreads()
            m = n - 1 - j
            for t in range(tid, m * m, nt):  # the lower triangle of the trailing matrix
                rr = t // m
                c = t - rr * m
                if c <= rr:
                    r = j + 1 + rr
                    w[wo + r * n + j + 1 + c] -= w[wo + r * n + j] * w[wo + (j + 1 + c) * n + j]
            cuda.syncthreads()
        cuda.syncthreads()
        for t in range(tid, n * n, nt):
            if t % n > t // n:
                w[wo + t] = 0.0
        if tid == 0:
            info[z] = stop
        cuda.syncthreads()


@cuda.jit
def qr_kernel(nb, m, n, w, tau):
    """Householder QR of each ``(m, n)`` matrix of the contiguous float64 ``w``, in place
    (LAPACK's ``geqr2`` and ``larfg``, so ``R``'s signs are LAPACK's): ``R`` on and above
    the diagonal, reflector ``j``'s vector below it (``v_j = 1``), its scale in
    ``tau[z, j]``; ``H_j = I - tau_j v v^T``."""
    sm = cuda.shared.array(LTPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    kk = min(m, n)
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        wo = z * m * n
        for j in range(kk):
            alpha = w[wo + j * n + j]  # (read before the tree's barriers: thread 0 changes it)
            acc = 0.0
            for r in range(j + 1 + tid, m, nt):
                v = w[wo + r * n + j]
                acc += v * v
            sm[tid] = acc
            xn2 = _tree_sum(sm, tid, nt)
            t = 0.0
            if xn2 != 0.0:
                beta = -math.copysign(math.hypot(alpha, math.sqrt(xn2)), alpha)
                t = (beta - alpha) / beta
                scale = 1.0 / (alpha - beta)
                for r in range(j + 1 + tid, m, nt):
                    w[wo + r * n + j] = w[wo + r * n + j] * scale
                if tid == 0:
                    w[wo + j * n + j] = beta
            if tid == 0:
                tau[z * kk + j] = t
            cuda.syncthreads()
            if t != 0.0:
                for c in range(j + 1 + tid, n, nt):  # H_j applied to the later columns
                    s = w[wo + j * n + c]
                    for r in range(j + 1, m):
                        s += w[wo + r * n + j] * w[wo + r * n + c]
                    s *= t
                    w[wo + j * n + c] -= s
                    for r in range(j + 1, m):
                        w[wo + r * n + c] -= s * w[wo + r * n + j]
            cuda.syncthreads()


@cuda.jit
def qr_q_kernel(nb, m, n, kq, w, tau, q):
    """The first ``kq`` columns of ``Q = H_0 H_1 ... H_{k-1}`` from ``qr_kernel``'s
    reflectors into the contiguous float64 ``q`` ``(nb, m, kq)``: one thread per column,
    each applying the reflectors to its unit vector, last reflector first."""
    kk = min(m, n)
    for t in range(cuda.grid(1), nb * kq, cuda.gridsize(1)):
        z = t // kq
        c = t - z * kq
        wo = z * m * n
        qo = z * m * kq
        for r in range(m):
            q[qo + r * kq + c] = 1.0 if r == c else 0.0
        for j in range(kk - 1, -1, -1):
            tj = tau[z * kk + j]
            if tj != 0.0:
                s = q[qo + j * kq + c]
                for r in range(j + 1, m):
                    s += w[wo + r * n + j] * q[qo + r * kq + c]
                s *= tj
                q[qo + j * kq + c] -= s
                for r in range(j + 1, m):
                    q[qo + r * kq + c] -= s * w[wo + r * n + j]


@cuda.jit
def jacobi_eigh_kernel(nb, n, w, v, lam, vout, info, max_sweeps):
    """Eigenvalues (ascending, into ``lam`` ``(nb, n)``) and eigenvectors (columns of
    ``vout`` ``(nb, n, n)``) of each symmetric ``(n, n)`` matrix of the contiguous float64
    ``w`` by cyclic Jacobi rotations (``w`` is overwritten, ``v`` is a workspace). A pair
    is rotated while ``|a_pq| > eps sqrt(|a_pp a_qq|)``; sweeps stop when none is, after
    ``max_sweeps`` at most (``info[z]`` is then 1). A matrix with a non-finite entry gives
    NaN values and vectors (``info[z]`` 2)."""
    sm = cuda.shared.array(LTPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        wo = z * n * n
        bad = 0.0
        for t in range(tid, n * n, nt):
            x = w[wo + t]
            v[wo + t] = 1.0 if t // n == t % n else 0.0
            if not (x - x == 0.0):
                bad = 1.0
        sm[tid] = bad
        nonfinite = _tree_sum(sm, tid, nt)
        status = int64(2) if nonfinite > 0.0 else int64(1)
        sweep = 0
        while nonfinite == 0.0 and sweep < max_sweeps:
            rotated = 0
            for p in range(n - 1):
                for q in range(p + 1, n):
                    apq = w[wo + p * n + q]
                    app = w[wo + p * n + p]
                    aqq = w[wo + q * n + q]
                    cuda.syncthreads()  # every thread has read the pair before it changes
                    if abs(apq) > EPS * math.sqrt(abs(app * aqq)) and apq != 0.0:
                        rotated += 1
                        theta = (aqq - app) / (2.0 * apq)
                        tt = math.copysign(1.0, theta) / (abs(theta) + math.hypot(1.0, theta))
                        c = 1.0 / math.hypot(1.0, tt)
                        s = tt * c
                        for r in range(tid, n, nt):  # A J and V J: columns p and q
                            x1 = w[wo + r * n + p]
                            x2 = w[wo + r * n + q]
                            w[wo + r * n + p] = c * x1 - s * x2
                            w[wo + r * n + q] = s * x1 + c * x2
                            y1 = v[wo + r * n + p]
                            y2 = v[wo + r * n + q]
                            v[wo + r * n + p] = c * y1 - s * y2
                            v[wo + r * n + q] = s * y1 + c * y2
                        cuda.syncthreads()
                        for r in range(tid, n, nt):  # J^T (A J): rows p and q
                            x1 = w[wo + p * n + r]
                            x2 = w[wo + q * n + r]
                            w[wo + p * n + r] = c * x1 - s * x2
                            w[wo + q * n + r] = s * x1 + c * x2
                        cuda.syncthreads()
                        if tid == 0:
                            w[wo + p * n + q] = 0.0
                            w[wo + q * n + p] = 0.0
                        cuda.syncthreads()
            sweep += 1
            if rotated == 0:
                status = 0
                break
        if tid == 0:
            info[z] = status
        for i in range(tid, n, nt):  # ascending order, ties in index order: by rank
            di = w[wo + i * n + i]
            rank = i  # (a non-finite matrix: NaN everywhere, in place)
            if nonfinite == 0.0:
                rank = 0
                for j in range(n):
                    dj = w[wo + j * n + j]
                    if dj < di or (dj == di and j < i):
                        rank += 1
            lam[z * n + rank] = math.nan if nonfinite > 0.0 else di
            for r in range(n):
                vout[wo + r * n + rank] = math.nan if nonfinite > 0.0 else v[wo + r * n + i]
        cuda.syncthreads()


@cuda.jit
def jacobi_svd_kernel(nb, m, n, w, v, s, sout, u, vh, info, max_sweeps):
    """The thin SVD of each ``(m, n)`` matrix (``m >= n``) of the contiguous float64 ``w``
    by one-sided (Hestenes) Jacobi rotations of its column pairs, ``v`` ``(nb, n, n)``
    accumulating them and ``s`` ``(nb, n)`` a workspace: ``sout`` ``(nb, n)`` the singular
    values descending, ``u`` ``(nb, m, n)`` the normalised columns (a zero column stays
    zero: the backend completes it), ``vh`` ``(nb, n, n)``. A pair is rotated while
    ``|w_p . w_q| > eps |w_p| |w_q|``; ``info[z]``: 0, 1 if ``max_sweeps`` did not
    converge, 2 for a non-finite matrix (NaN outputs)."""
    s1 = cuda.shared.array(LTPB, float64)
    s2 = cuda.shared.array(LTPB, float64)
    s3 = cuda.shared.array(LTPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for z in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        wo = z * m * n
        vo = z * n * n
        bad = 0.0
        for t in range(tid, m * n, nt):
            x1 = w[wo + t]
            if not (x1 - x1 == 0.0):
                bad = 1.0
        for t in range(tid, n * n, nt):
            v[vo + t] = 1.0 if t // n == t % n else 0.0
        s1[tid] = bad
        nonfinite = _tree_sum(s1, tid, nt)
        status = int64(2) if nonfinite > 0.0 else int64(1)
        sweep = 0
        while nonfinite == 0.0 and sweep < max_sweeps:
            rotated = 0
            for p in range(n - 1):
                for q in range(p + 1, n):
                    a = 0.0
                    b = 0.0
                    g = 0.0
                    for r in range(tid, m, nt):
                        x1 = w[wo + r * n + p]
                        x2 = w[wo + r * n + q]
                        a += x1 * x1
                        b += x2 * x2
                        g += x1 * x2
                    s1[tid] = a
                    s2[tid] = b
                    s3[tid] = g
                    cuda.syncthreads()
                    step = nt // 2
                    while step > 0:
                        if tid < step:
                            s1[tid] += s1[tid + step]
                            s2[tid] += s2[tid + step]
                            s3[tid] += s3[tid + step]
                        cuda.syncthreads()
                        step //= 2
                    a = s1[0]
                    b = s2[0]
                    g = s3[0]
                    cuda.syncthreads()  # every thread has read the sums before reuse
                    if abs(g) > EPS * math.sqrt(a * b) and g != 0.0:
                        rotated += 1
                        zeta = (b - a) / (2.0 * g)
                        tt = math.copysign(1.0, zeta) / (abs(zeta) + math.hypot(1.0, zeta))
                        c = 1.0 / math.hypot(1.0, tt)
                        sn = c * tt
                        for r in range(tid, m, nt):
                            x1 = w[wo + r * n + p]
                            x2 = w[wo + r * n + q]
                            w[wo + r * n + p] = c * x1 - sn * x2
                            w[wo + r * n + q] = sn * x1 + c * x2
                        for r in range(tid, n, nt):
                            y1 = v[vo + r * n + p]
                            y2 = v[vo + r * n + q]
                            v[vo + r * n + p] = c * y1 - sn * y2
                            v[vo + r * n + q] = sn * y1 + c * y2
                        cuda.syncthreads()
            sweep += 1
            if rotated == 0:
                status = 0
                break
        for j in range(n):  # the column norms: the singular values, in column order
            acc = 0.0
            for r in range(tid, m, nt):
                x1 = w[wo + r * n + j]
                acc += x1 * x1
            s1[tid] = acc
            nrm = math.sqrt(_tree_sum(s1, tid, nt))
            if tid == 0:
                s[z * n + j] = nrm
        cuda.syncthreads()
        if tid == 0:
            info[z] = status
        for i in range(tid, n, nt):  # descending order, ties in column order: by rank
            sv = s[z * n + i]
            rank = i
            if nonfinite == 0.0:
                rank = 0
                for j in range(n):
                    sj = s[z * n + j]
                    if sj > sv or (sj == sv and j < i):
                        rank += 1
            sout[z * n + rank] = math.nan if nonfinite > 0.0 else sv
            for r in range(m):
                x1 = w[wo + r * n + i] / sv if sv > 0.0 else 0.0
                u[wo + r * n + rank] = math.nan if nonfinite > 0.0 else x1
            for r in range(n):
                vh[vo + rank * n + r] = math.nan if nonfinite > 0.0 else v[vo + r * n + i]
        cuda.syncthreads()


# -- matrix_exp (NOTE [CUDA matrix_exp] in numbagrad/kernels/cuda/backend_linalg.py) -----------
# (``PADE13``, the coefficients, is shared with the CPU: ``numbagrad.kernels``)


@cuda.jit
def expm_pade_kernel(total, n, a2, a4, a6, t1, t2, t3, t4):
    """The four matrix sums of the degree-13 Pade approximant, elementwise over the
    ``total`` entries of the contiguous float64 powers ``a2``, ``a4``, ``a6`` (a batch of
    ``(n, n)`` matrices): ``t1 = b13 A6 + b11 A4 + b9 A2``, ``t2 = b7 A6 + b5 A4 + b3 A2 +
    b1 I``, ``t3 = b12 A6 + b10 A4 + b8 A2``, ``t4 = b6 A6 + b4 A4 + b2 A2 + b0 I``, so that
    ``U = A (A6 t1 + t2)`` and ``V = A6 t3 + t4``; summed left to right as the CPU's."""
    nn = n * n
    for i in range(cuda.grid(1), total, cuda.gridsize(1)):
        x2 = a2[i]
        x4 = a4[i]
        x6 = a6[i]
        j = i % nn
        one = 1.0 if j // n == j % n else 0.0
        t1[i] = PADE13[13] * x6 + PADE13[11] * x4 + PADE13[9] * x2
        t2[i] = PADE13[7] * x6 + PADE13[5] * x4 + PADE13[3] * x2 + PADE13[1] * one
        t3[i] = PADE13[12] * x6 + PADE13[10] * x4 + PADE13[8] * x2
        t4[i] = PADE13[6] * x6 + PADE13[4] * x4 + PADE13[2] * x2 + PADE13[0] * one
