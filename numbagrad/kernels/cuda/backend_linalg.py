"""The CUDA backend's linalg family (a mixin of ``backend.CudaBackend``, NOTE [Backends]):
the decompositions and solvers (LU, Cholesky, QR, ``eigh``, ``svd``, triangular
solves) and ``matrix_exp``'s Pade sum: the kernels of ``linalg.py``.

The methods reach the backend's other methods through ``self`` (the one ``CUDA`` object),
so a family calls another without importing it."""

from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels import LinAlgError, module
from numbagrad.kernels.cpu import backend_linalg as _cpu_linalg
from numbagrad.kernels.cuda.array import CudaArray, device_mismatch
from numbagrad.kernels.cuda.backend_common import (
    _unsupported,
)
from numbagrad.kernels.cuda.launch import launch, launch_blocks

__all__ = ["LinalgMethods"]

KL = module("linalg", "cuda")


class LinalgMethods:
    """The linalg methods of ``CudaBackend``."""

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
    def _linalg_threads(self, m, n):
        """The block size of a decomposition kernel for ``(m, n)`` matrices: a power of
        two up to ``KL.LTPB``, about one thread per entry."""
        threads = 1
        while threads < min(m * n, KL.LTPB):
            threads *= 2
        return threads

    def _linalg_work(self, a, name, transpose=False):
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
            a = self.xp.swapaxes(a, -1, -2)
        batch = a.shape[:-2]
        m, n = a.shape[-2:]
        work = self.empty((math.prod(batch), m, n), np.float64, a.device_index)
        self.copy_into(work.reshape(a.shape), a)
        return work, batch

    def _linalg_error(self, msg):
        """``numbagrad.linalg.LinAlgError(msg)`` (a RuntimeError)."""
        return LinAlgError(msg)

    def _batch_prefix(self, shape, i):
        return f"(Batch element {i}): " if len(shape) > 2 else ""

    def _out_dtype(self, *arrays):
        dt = np.result_type(*(x.dtype for x in arrays))
        return dt if dt.kind == "f" else np.dtype(np.float64)

    def _eye(self, n):
        """The float64 identity ``(n, n)`` made on the device."""
        r = self.arange(n)
        eq = self.binary("equal", r.reshape((n, 1)), r.reshape((1, n)))
        return eq.astype(np.float64)

    def lu_factor(self, a, name):
        """``(lu, piv, info, batch)``: LU with partial pivoting of every matrix of the
        square ``a`` (``lu_kernel``): ``lu`` ``(nb, n, n)`` float64, ``piv`` ``(nb, n)``,
        ``info`` ``(nb, 2)`` (first zero pivot, non-finite flag), on the device."""
        work, batch = self._linalg_work(a, name)
        nb, n = work.shape[0], work.shape[-1]
        if work.shape[-2] != n:
            raise ValueError(f"linalg.{name}: Last 2 dimensions of the array must be square")
        piv = self.empty((nb, n), np.int64, a.device_index)
        info = self.zeros((nb, 2), np.int64)
        launch_blocks(
            KL.lu_kernel, nb, self._linalg_threads(n, n), nb, n, work._buf, piv._buf,
            info._buf,
        )  # fmt: skip
        return work, piv, info, batch

    def _trsm(self, nb, n, k, a, bshape, lower, unit, x):
        """``x`` (contiguous float64 ``(nb, n, k)``) <- ``A^-1 x`` for the triangular ``a``
        (a ``CudaArray`` ``(*bshape, n, n)`` view, any strides)."""
        if nb == 0 or n == 0 or k == 0:
            return
        ast = a._st[:-2] or (0,)
        launch_blocks(
            KL.trsm_kernel, nb, self._linalg_threads(n, k), nb, n, k, a._buf, a._off,
            ast, a._st[-2], a._st[-1], bshape or (1,), lower, unit, x._buf,
        )  # fmt: skip

    def lu_solve(self, a, b, name):
        """NumPy's ``linalg.solve(a, b)`` (``b`` a vector or a stack of matrices, batch dims
        broadcast), or ``linalg.inv(a)`` when ``b`` is None: one LU per matrix of ``a``,
        then row swaps and two triangular solves per right-hand side. A singular matrix
        raises the CPU op's ``LinAlgError``; a non-finite one gives NaN."""
        if not isinstance(a, CudaArray) or (b is not None and not isinstance(b, CudaArray)):
            raise device_mismatch("cuda:0", "cpu")
        lu, piv, info, abatch = self.lu_factor(a, name)
        n = lu.shape[-1]
        vector = b is not None and b.ndim == 1
        if b is None:
            bm, dt = self._eye(n), self._out_dtype(a)
        else:
            bm, dt = (b.reshape((n, 1)) if vector else b), self._out_dtype(a, b)
            if bm.ndim < 2 or bm.shape[-2] != n:
                raise ValueError(
                    f"solve: Input operand 1 has a mismatch in its core dimension 0 "
                    f"(size {bm.shape[-2] if bm.ndim else 0} is different from {n})"
                )
        k = bm.shape[-1]
        batch = tuple(np.broadcast_shapes(abatch, bm.shape[:-2]))
        nb = math.prod(batch)
        x = self.empty((nb, n, k), np.float64, a.device_index)
        self.copy_into(x.reshape((*batch, n, k)), bm)
        status = info.to_host() if info.size else np.zeros((0, 2), np.int64)
        for i, (zero, nonfinite) in enumerate(status.tolist()):
            if zero and not nonfinite:
                prefix = self._batch_prefix(a.shape, i)
                if name == "inv":
                    raise self._linalg_error(
                        f"linalg.inv: {prefix}The diagonal element {zero} is zero, the "
                        "inversion could not be completed because the input matrix is singular."
                    )
                raise self._linalg_error(
                    f"torch.linalg.solve: {prefix}The solver failed because the input matrix "
                    "is singular."
                )
        if nb and n and k:
            lub = lu.reshape((*abatch, n, n)).broadcast_to((*batch, n, n))
            pivb = piv.reshape((*abatch, n)).broadcast_to((*batch, n))
            launch_blocks(
                KL.lu_permute_kernel, nb, self._linalg_threads(1, k), nb, n, k,
                piv._buf, pivb._st[:-1] or (0,), 0, batch or (1,), x._buf,
            )  # fmt: skip
            self._trsm(nb, n, k, lub, batch, True, True, x)
            self._trsm(nb, n, k, lub, batch, False, False, x)
        out = x.reshape((*batch, n, k))
        if status[:, 1].any():  # non-finite matrices: NaN (the CPU op's choice)
            bad = self.binary("not_equal", info[:, 1], 0).reshape((*abatch, 1, 1))
            out = self.where(bad, math.nan, out)
        out = out.astype(dt, copy=False)
        return out.reshape((*batch, n)) if vector else out

    def slogdet(self, a):
        """``(sign, log|det|)`` of every matrix of ``a`` from its LU factors (no host
        copy), in ``a``'s dtype."""
        lu, piv, _, batch = self.lu_factor(a, "slogdet")
        nb, n = lu.shape[0], lu.shape[-1]
        sign = self.empty((nb,), np.float64, a.device_index)
        logabs = self.empty((nb,), np.float64, a.device_index)
        launch(KL.lu_det_kernel, nb, nb, n, lu._buf, piv._buf, sign._buf, logabs._buf)
        dt = self._out_dtype(a)
        return (
            sign.reshape(batch).astype(dt, copy=False),
            logabs.reshape(batch).astype(dt, copy=False),
        )

    def solve_triangular(self, a, b, upper, unitriangular):
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
        x = self.empty((nb, n, k), np.float64, a.device_index)
        self.copy_into(x.reshape((*batch, n, k)), b)
        ab = a.broadcast_to((*batch, n, n))
        self._trsm(nb, n, k, ab, batch, not upper, bool(unitriangular), x)
        return x.reshape((*batch, n, k)).astype(self._out_dtype(a, b), copy=False)

    def cholesky(self, a):
        """The lower Cholesky factors of ``a`` (its lower triangle read); a matrix that is
        not positive-definite raises the CPU op's ``LinAlgError`` naming the order of the
        first failing leading minor."""
        work, info = self._cholesky_run(a)
        nb = work.shape[0]
        if nb:
            for i, order in enumerate(info.to_host().tolist()):
                if order:
                    raise self._linalg_error(
                        f"linalg.cholesky: {self._batch_prefix(a.shape, i)}The "
                        "factorization could not be completed because the input is not "
                        f"positive-definite (the leading minor of order {order} is not "
                        "positive-definite)."
                    )
        return work.reshape(a.shape).astype(self._out_dtype(a), copy=False)

    def _cholesky_run(self, a):
        """``cholesky_kernel`` on the float64 work copy of ``a``: ``(work, info)``."""
        work, _ = self._linalg_work(a, "cholesky")
        nb, n = work.shape[0], work.shape[-1]
        if work.shape[-2] != n:
            raise ValueError("linalg.cholesky: Last 2 dimensions of the array must be square")
        info = self.zeros((nb,), np.int64)
        launch_blocks(
            KL.cholesky_kernel, nb, self._linalg_threads(n, n), nb, n, work._buf,
            info._buf,
        )  # fmt: skip
        return work, info

    def cholesky_ex(self, a):
        """``(L, info)`` without raising: ``info`` (int32) the order of the first failing
        leading minor, 0 on success (the factor of a failed matrix is the kernel's partial
        one, implementation-defined as on PyTorch's CUDA)."""
        work, info = self._cholesky_run(a)
        lo = work.reshape(a.shape).astype(self._out_dtype(a), copy=False)
        return lo, info.reshape(a.shape[:-2]).astype(np.int32, copy=False)

    def _householder(self, work):
        """``qr_kernel`` on the float64 work ``(nb, m, n)`` in place; returns ``tau``."""
        nb, m, n = work.shape
        tau = self.empty((nb, min(m, n)), np.float64, work.device_index)
        launch_blocks(KL.qr_kernel, nb, self._linalg_threads(m, 1), nb, m, n, work._buf, tau._buf)
        return tau

    def _householder_q(self, work, tau, kq):
        """The first ``kq`` columns of ``Q`` from the reflectors of ``_householder``."""
        nb, m, n = work.shape
        q = self.empty((nb, m, kq), np.float64, work.device_index)
        launch(KL.qr_q_kernel, nb * kq, nb, m, n, kq, work._buf, tau._buf, q._buf)
        return q

    def qr(self, a, mode="reduced"):
        """NumPy's ``linalg.qr`` (modes ``reduced``, ``complete``, ``r``): Householder
        reflections as LAPACK's (``R``'s signs are LAPACK's)."""
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"Unrecognized mode '{mode}' (CUDA arrays: reduced, complete, r)")
        work, batch = self._linalg_work(a, "qr")
        m, n = work.shape[1:]
        k = min(m, n)
        tau = self._householder(work)
        dt = self._out_dtype(a)
        rk = m if mode == "complete" else k
        r = self.xp.triu(work[:, :rk, :]).reshape((*batch, rk, n)).astype(dt, copy=False)
        if mode == "r":
            return r
        q = self._householder_q(work, tau, rk)
        return q.reshape((*batch, m, rk)).astype(dt, copy=False), r

    def eigh(self, a, uplo="L"):
        """NumPy's ``linalg.eigh`` (``uplo``'s triangle read): eigenvalues ascending and
        eigenvectors by cyclic Jacobi (``jacobi_eigh_kernel``); the eigenvectors' signs
        are Jacobi's, not LAPACK's (each is unique only up to sign)."""
        if uplo not in ("L", "U"):
            raise ValueError("UPLO argument must be 'L' or 'U'")
        if not isinstance(a, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        tri = self.xp.tril if uplo == "L" else self.xp.triu
        off = tri(a, -1 if uplo == "L" else 1)
        sym = self.binary("add", tri(a), self.xp.swapaxes(off, -1, -2))
        work, batch = self._linalg_work(sym, "eigh")
        nb, n = work.shape[0], work.shape[-1]
        if work.shape[-2] != n:
            raise ValueError("linalg.eigh: Last 2 dimensions of the array must be square")
        v = self.empty(work.shape, np.float64, a.device_index)
        lam = self.empty((nb, n), np.float64, a.device_index)
        vout = self.empty(work.shape, np.float64, a.device_index)
        info = self.zeros((nb,), np.int64)
        launch_blocks(
            KL.jacobi_eigh_kernel, nb, self._linalg_threads(n, 1), nb, n, work._buf,
            v._buf, lam._buf, vout._buf, info._buf, 60,
        )  # fmt: skip
        if nb and (info.to_host() == 1).any():
            raise self._linalg_error(
                "linalg.eigh: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues."
            )
        dt = self._out_dtype(a)
        return (
            lam.reshape((*batch, n)).astype(dt, copy=False),
            vout.reshape((*batch, n, n)).astype(dt, copy=False),
        )

    def eig(self, a):
        """Not on CUDA: its results are complex, and complex arrays are CPU-only."""
        raise NotImplementedError(
            "linalg.eig: not implemented for CUDA tensors (its results are complex, and "
            "complex tensors are CPU-only; see docs/gpu.rst)"
        )

    def svd(self, a, full_matrices=True):
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
        work, batch = self._linalg_work(a, "svd", transpose=wide)
        nb, m, k = work.shape  # m >= k
        v = self.empty((nb, k, k), np.float64, a.device_index)
        s = self.empty((nb, k), np.float64, a.device_index)
        sout = self.empty((nb, k), np.float64, a.device_index)
        u = self.empty((nb, m, k), np.float64, a.device_index)
        vh = self.empty((nb, k, k), np.float64, a.device_index)
        info = self.zeros((nb,), np.int64)
        launch_blocks(
            KL.jacobi_svd_kernel, nb, self._linalg_threads(m, 1), nb, m, k, work._buf,
            v._buf, s._buf, sout._buf, u._buf, vh._buf, info._buf, 60,
        )  # fmt: skip
        status = info.to_host().tolist() if nb else []
        for i, st in enumerate(status):
            if st == 2:
                raise self._linalg_error(
                    f"linalg.svd: {self._batch_prefix(a.shape, i)}The algorithm failed "
                    "to converge because the input matrix contained non-finite values."
                )
        if 1 in status:
            raise self._linalg_error(
                "linalg.svd: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated singular values."
            )
        kq = m if full_matrices else k
        qw = u.copy()
        q = self._householder_q(qw, self._householder(qw), kq)
        sgn = self.where(self.binary("less", self.xp.diagonal(qw, 0, -2, -1), 0), -1.0, 1.0)
        if kq > k:
            sgn = self.xp.concatenate([sgn, self.full((nb, kq - k), 1.0, np.float64)], -1)
        u = self.multiply(q, sgn.reshape((nb, 1, kq)))  # (nb, m, kq)
        dt = self._out_dtype(a)
        if wide:  # a^T = u s vh: a = vh^T s u^T
            u, vh = self.xp.swapaxes(vh, -1, -2), self.xp.swapaxes(u, -1, -2)
        rows, cols = a.shape[-2:]

        def out(x, shape):
            return self.xp.ascontiguousarray(x).reshape((*batch, *shape)).astype(dt, copy=False)

        return (
            out(u, (rows, u.shape[-1])),
            sout.reshape((*batch, k)).astype(dt, copy=False),
            out(vh, (vh.shape[-2], cols)),
        )

    # -- end of linalg -------------------------------------------------------------------------

    # -- the protocol's linalg entries (NOTE [Backend protocol]) -----------------------------
    def inv(self, a):
        """``A^-1`` of each matrix (LU), ``LinAlgError`` for a singular one."""
        return self.lu_solve(a, None, "inv")

    def solve(self, a, b):
        """``A^-1 B`` (batch dims broadcast), ``LinAlgError`` for a singular ``A``."""
        return self.lu_solve(a, b, "solve")

    def det(self, a):
        """``det A`` from ``slogdet``'s LU factors (no host copy)."""
        sign, logabs = self.slogdet(a)
        return self.multiply(sign, self.map("exp", logabs))

    def det_backward(self, a, d, g):
        """None: no fused VJP of ``det`` here, the op runs its composite rule (whose every
        step is a device op)."""
        return None

    # -- matrix_exp (linalg.py) ----------------------------------------------------------------
    # NOTE [CUDA matrix_exp]
    # On a device the CPU's algorithm runs on the whole batch at once, each matrix's work on
    # the device, in float64: the norms and powers of ``expm_squarings``
    # (``kernels/cpu/backend_linalg.py``) as batched products (the backend's tiled matmul) and
    # reductions, the Pade sums in one fused kernel (``expm_pade``), the solve by the
    # backend's LU (``solve``), the squarings as batched products. The squaring count ``s`` of
    # each matrix is a host decision made from a few norms, as in PyTorch's own CUDA
    # matrix_exp (which copies its norms to the host too), by the CPU's rule
    # (``squarings_rule``, so both paths take the same ``s``). Device-to-host copies per call:
    # the 1-norms (one value per matrix); only when some norm is above ``theta_13``, the 11
    # values per matrix the rule may read (the norms of ``b^6``, ``b^8``, ``b^10`` and the 8
    # maxima of the ``|b|^27`` powering, computed for every matrix of the batch up front); and
    # the status of the LU (NOTE [CUDA linalg status]): 2 or 3 copies of O(batch) values,
    # never a matrix, whatever ``n``. They happen in the backward too (its rule is a
    # matrix_exp of a ``2n x 2n`` block matrix): the one exception to the engine's
    # no-host-copy rule, counted in tests/cuda/test_cuda_matrix_exp.py. Per-matrix scalars
    # (the divisors ``2**floor(log2 ||a||)`` of the norms' powers and ``2**s`` of the scaling,
    # the counts ``s``) are Python floats when the matrices of a batch agree (one matrix:
    # always), else one host-to-device copy each; a batch costs ``max(s)`` batched squarings,
    # a matrix whose squarings are done keeping its value through ``where``. A matrix with a
    # non-finite entry is computed as zeros and replaced by NaN, as on the CPU.
    def expm_pade(self, a2, a4, a6):
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
        outs = tuple(self.empty(a2.shape, np.float64, a2.device_index) for _ in range(4))
        n = a2.shape[-1]
        launch(
            KL.expm_pade_kernel, a2.size, a2.size, n, a2._buf[a2._off :], a4._buf[a4._off :],
            a6._buf[a6._off :], *(t._buf for t in outs),
        )  # fmt: skip
        return outs

    def _batch_scalars(self, values, like):
        """The per-matrix scalars ``values`` as an operand for the device array ``like``
        ``(nb, n, n)``: a Python float when they are all equal (no copy), else a
        ``(nb, 1, 1)`` device array (one host-to-device copy)."""
        if all(x == values[0] for x in values):
            return float(values[0])
        host = np.asarray(values, np.float64).reshape(-1, 1, 1)
        return self.from_host(host, like.device_index)

    def matrix_exp(self, a):
        """``exp(A)`` of each matrix: the CPU's algorithm on the whole batch, each matrix's
        work on the device, the same squaring count per matrix (NOTE [CUDA matrix_exp])."""
        xp = self.xp
        n = a.shape[-1]
        if a.size == 0:
            return xp.empty(a.shape, a.dtype)
        nb = a.size // (n * n)

        def norm1(x):  # the 1-norm of each matrix of x (nb, n, n)
            return xp.amax(xp.sum(xp.abs(x), axis=1), axis=1)

        w = xp.reshape(a.astype(np.float64), (nb, n, n))
        finite = xp.all(xp.isfinite(w), axis=(1, 2))
        w = xp.where(xp.reshape(finite, (nb, 1, 1)), w, 0.0)
        norms = xp.where(finite, norm1(w), np.nan).to_host().tolist()  # NaN: non-finite
        big = [x > _cpu_linalg.THETA13 for x in norms]
        s = [0] * nb
        if any(big):
            c = [2.0 ** math.floor(math.log2(x)) if k else 1.0 for x, k in zip(norms, big)]
            b = w / self._batch_scalars(c, w)
            b2 = xp.matmul(b, b)
            b4 = xp.matmul(b2, b2)
            b6 = xp.matmul(b4, b2)
            stats = [norm1(b6), norm1(xp.matmul(b4, b4)), norm1(xp.matmul(b4, b6))]
            v, p = xp.ones((nb, 1, n)), xp.abs(b)
            for step in _cpu_linalg.POW27:  # top_of of expm_squarings, on every matrix at once
                x = xp.matmul(v, p) if step == "v" else xp.matmul(p, p)
                top = xp.amax(x, axis=(1, 2))
                stats.append(top)
                x = x / xp.reshape(xp.where(top > 0.0, top, 1.0), (nb, 1, 1))
                v, p = (x, p) if step == "v" else (v, x)
            host = xp.stack(stats, axis=1).to_host()
            for i in range(nb):
                if big[i]:
                    tops = iter(host[i, 3:].tolist())
                    s[i] = _cpu_linalg.squarings_rule(
                        norms[i], host[i, :3], lambda step, t=tops: next(t)
                    )
        if max(s):
            w = w / self._batch_scalars([2.0**k for k in s], w)
        a2 = xp.matmul(w, w)
        a4 = xp.matmul(a2, a2)
        a6 = xp.matmul(a4, a2)
        t1, t2, t3, t4 = self.expm_pade(a2, a4, a6)
        u = xp.matmul(w, xp.matmul(a6, t1) + t2)
        v = xp.matmul(a6, t3) + t4
        r = self.solve(v - u, v + u)
        counts = self._batch_scalars(s, w)
        for k in range(max(s)):
            sq = xp.matmul(r, r)
            r = sq if min(s) > k else xp.where(counts > k, sq, r)
        if any(x != x for x in norms):
            r = xp.where(xp.reshape(finite, (nb, 1, 1)), r, np.nan)
        return xp.reshape(r.astype(a.dtype, copy=False), a.shape)

    # -- end of matrix_exp ---------------------------------------------------------------------
