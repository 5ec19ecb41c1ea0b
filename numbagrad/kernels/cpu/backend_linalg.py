"""The CPU backend's linalg family (a mixin of ``backend.CpuBackend``, NOTE [Backends]):
``numbagrad.linalg``'s forwards on NumPy's ``np.linalg`` (LAPACK), with PyTorch's
``LinAlgError`` messages, the triangular solve by substitution and ``matrix_exp`` by
scaling and squaring. The same methods as the CUDA backend's
``backend_linalg.LinalgMethods`` (NOTE [Backend protocol]); the ops in
``ops/linalg_decomp.py`` reach LAPACK only through them."""

# ruff: noqa: N806  (math notation: L, as LAPACK names it)
from __future__ import annotations

import math

import numpy as np

from numbagrad.kernels import PADE13 as _PADE13
from numbagrad.kernels import LinAlgError

__all__ = ["POW27", "THETA13", "LinalgMethods", "expm_squarings", "squarings_rule"]


# -- LAPACK calls with PyTorch's error messages ----------------------------------------------
def _flat(a):
    """``a`` as a stack of matrices (also when some dimension is 0)."""
    return a.reshape(int(np.prod(a.shape[:-2], dtype=np.int64)), *a.shape[-2:])


def _batch_prefix(shape, flat_index):
    if len(shape) <= 2:
        return ""
    return f"(Batch element {flat_index}): "


def _zero_pivot(a):
    """1-based index of the first exactly-zero pivot of ``a``'s LU factorization with partial
    pivoting (LAPACK ``getrf``'s ``info``), 0 when there is none."""
    u = np.array(a, dtype=np.complex128 if a.dtype.kind == "c" else np.float64)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        if p != k:
            u[[k, p]] = u[[p, k]]
        u[k + 1 :, k:] -= np.outer(u[k + 1 :, k] / u[k, k], u[k, k:])
    return 0


def _per_matrix(fn, a, *rest):
    """``fn`` applied matrix by matrix over the batch (non-finite matrices give nan, as in
    PyTorch, instead of LAPACK's singular-matrix error)."""
    flat = _flat(a)
    outs = []
    for m in flat:
        if np.isfinite(m).all():
            outs.append(fn(m, *rest))
        else:
            outs.append(np.full_like(fn(np.eye(m.shape[-1], dtype=m.dtype), *rest), np.nan))
    return np.stack(outs).reshape(*a.shape[:-2], *outs[0].shape)


def _first_singular_finite(a):
    """``(batch index, pivot)`` of the first finite singular matrix, or None."""
    flat = _flat(a)
    for i, m in enumerate(flat):
        if np.isfinite(m).all():
            info = _zero_pivot(m)
            if info:
                return i, info
    return None


def _inv(a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        bad = _first_singular_finite(a)
        if bad is None:  # only non-finite matrices failed: nan there
            return _per_matrix(np.linalg.inv, a)
        i, info = bad
        raise LinAlgError(
            f"linalg.inv: {_batch_prefix(a.shape, i)}The diagonal element {info} "
            "is zero, the inversion could not be completed because the input "
            "matrix is singular."
        ) from None


def _solve(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        bad = _first_singular_finite(a)
        if bad is None:
            shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            a2 = np.broadcast_to(a, (*shape, *a.shape[-2:]))
            b2 = np.broadcast_to(b, (*shape, *b.shape[-2:]))
            flat_a = a2.reshape(-1, *a.shape[-2:])
            flat_b = b2.reshape(-1, *b.shape[-2:])
            out = np.stack(
                [
                    np.linalg.solve(m, r)
                    if np.isfinite(m).all()
                    else np.full(r.shape, np.nan, r.dtype)
                    for m, r in zip(flat_a, flat_b)
                ]
            )
            return out.reshape(*shape, *b.shape[-2:])
        i, _ = bad
        raise LinAlgError(
            f"torch.linalg.solve: {_batch_prefix(a.shape, i)}The solver failed "
            "because the input matrix is singular."
        ) from None


def _not_converged(name, a, what):
    """PyTorch's error for an eigen/singular value solver that did not converge."""
    flat = _flat(a)
    for i, m in enumerate(flat):
        if not np.isfinite(m).all():
            return LinAlgError(
                f"{name}: {_batch_prefix(a.shape, i)}The algorithm failed to "
                "converge because the input matrix contained non-finite values."
            )
    return LinAlgError(
        f"{name}: The algorithm failed to converge because the input matrix is "
        f"ill-conditioned or has too many repeated {what}."
    )


def _not_pd(a, i, k):
    return LinAlgError(
        f"linalg.cholesky: {_batch_prefix(a.shape, i)}The factorization could "
        "not be completed because the input is not positive-definite (the "
        f"leading minor of order {k} is not positive-definite)."
    )


def _cholesky_unblocked(m):
    """``(L, info)`` by LAPACK's unblocked ``potf2`` (lower): ``info`` is the order of the
    first leading minor whose pivot is not > 0 (NaN included), 0 on success. NumPy's
    ``cholesky`` returns NaN where LAPACK (and PyTorch) report a NaN pivot."""
    n = m.shape[-1]
    L = np.zeros_like(m)
    with np.errstate(all="ignore"):
        for j in range(n):  # (complex: A = L L^H, the diagonal's real part)
            d = np.real(m[j, j]) - np.real(np.vdot(L[j, :j], L[j, :j]))
            if not d > 0:
                return L, j + 1
            L[j, j] = np.sqrt(d)
            L[j + 1 :, j] = (m[j + 1 :, j] - L[j + 1 :, :j] @ L[j, :j].conj()) / L[j, j]
    return L, 0


def _first_bad_minor(m):
    """The order of the first leading minor of finite ``m`` that is not positive-definite
    (0 if none)."""
    for k in range(1, m.shape[-1] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _cholesky(a):
    flat = _flat(a)
    finite = np.isfinite(np.tril(flat)).all((-2, -1))  # LAPACK reads the lower triangle
    if not finite.all():  # matrix by matrix, non-finite ones by LAPACK's own steps
        out = []
        for i, m in enumerate(flat):
            if finite[i]:
                try:
                    out.append(np.linalg.cholesky(m))
                    continue
                except np.linalg.LinAlgError:
                    info = _first_bad_minor(m)
            else:
                L, info = _cholesky_unblocked(m)
                out.append(L)
            if info:
                raise _not_pd(a, i, info)
        return np.stack(out).reshape(a.shape)
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        for i, m in enumerate(flat):
            info = _first_bad_minor(m)
            if info:
                raise _not_pd(a, i, info) from None
        raise LinAlgError(
            "linalg.cholesky: The factorization could not be completed because "
            "the input is not positive-definite."
        ) from None


def _potf2(m):
    """``(out, info)`` as LAPACK's unblocked ``potf2`` (lower) leaves them: the columns
    before the first failing pivot factored, that pivot's value ``a_jj - |L_j|^2`` on the
    diagonal, the rest of the lower triangle as in ``m``, the upper triangle zero."""
    out = np.tril(m).copy()
    with np.errstate(all="ignore"):
        for j in range(m.shape[-1]):
            d = np.real(out[j, j]) - np.real(np.vdot(out[j, :j], out[j, :j]))
            if not d > 0:
                out[j, j] = d
                return out, j + 1
            out[j, j] = np.sqrt(d)
            out[j + 1 :, j] = (out[j + 1 :, j] - out[j + 1 :, :j] @ out[j, :j].conj()) / out[j, j]
    return out, 0


def _cholesky_ex(a):
    """``(L, info)`` for each matrix, never raising (``linalg.cholesky_ex``)."""
    flat = _flat(a)
    info = np.zeros(flat.shape[0], np.int32)
    if np.isfinite(np.tril(flat)).all():
        try:
            return np.linalg.cholesky(a), info.reshape(a.shape[:-2])
        except np.linalg.LinAlgError:
            pass
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        try:
            if not np.isfinite(np.tril(m)).all():
                raise np.linalg.LinAlgError
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i], info[i] = _potf2(m)
    return out.reshape(a.shape), info.reshape(a.shape[:-2])


def _solve_triangular(a, b, upper, unitriangular):
    """``A^-1 B`` by substitution, reading only the ``upper`` (or lower) triangle of ``A``
    (its diagonal as ones when ``unitriangular``); batch dims broadcast. Row by row, as
    LAPACK's ``trsm``: a NaN or inf propagates exactly as PyTorch's (0 * inf is NaN, a
    singular triangle gives inf/NaN, never an error)."""
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, shape + a.shape[-2:])
    b = np.broadcast_to(b, shape + b.shape[-2:])
    n = a.shape[-1]
    x = np.empty(b.shape, np.result_type(a, b))
    with np.errstate(all="ignore"):
        for i in range(n - 1, -1, -1) if upper else range(n):
            done = slice(i + 1, n) if upper else slice(0, i)
            r = b[..., i, :] - np.matmul(a[..., i : i + 1, done], x[..., done, :])[..., 0, :]
            x[..., i, :] = r if unitriangular else r / a[..., i, i, None]
    return x


def _svd(a, full_matrices):
    try:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        raise _not_converged("linalg.svd", a, "singular values") from None
    bad = ~np.isfinite(a).all((-2, -1))
    if bad.any():  # LAPACK's factors of a non-finite matrix are partly finite: nan, as PyTorch
        u = np.where(bad[..., None, None], np.nan, u)
        s = np.where(bad[..., None], np.nan, s)
        vh = np.where(bad[..., None, None], np.nan, vh)
    return u, s, vh


# -- matrix exponential -------------------------------------------------------------------------


THETA13 = 5.371920351148152  # the largest norm where Pade-13 is accurate to 2**-53
_ERR13 = 1.1325077560602111e35  # 1 / |c_27|, the leading coefficient of its backward error


def _norm1(a):
    return np.abs(a).sum(0).max()


def expm_squarings(a):
    """The number of squarings ``s`` for Pade-13 (Al-Mohy & Higham 2009, Algorithm 5.1).

    NOTE [matrix_exp scaling]: the plain 2005 rule ``||a||_1 / 2**s <= theta_13``
    overscales matrices with a large nilpotent part, and each squaring then doubles
    the relative error of the small entries. The block matrices ``[[A, E], [0, A]]`` of
    matrix_exp's derivatives are such matrices when ``E`` (a cotangent) is large: with
    ``||E|| = 1.5e33`` the old rule took 108 squarings and lost every digit of ``exp(A)``.
    Here ``s`` comes from ``||a^k||^(1/k)`` (k = 6, 8, 10), which sees through the
    nilpotent part, plus the correction that keeps the Pade backward error below 2**-53.
    Powers are taken of ``a`` over a power of two (no overflow). The rule itself, from
    these norms, is ``squarings_rule`` (shared with the CUDA backend's ``matrix_exp``,
    NOTE [CUDA matrix_exp])."""
    nrm = float(_norm1(a))
    if not nrm > THETA13:  # then s = 0, and ell is 0 too (||a||**26 / 1.1e35 < 2**-53)
        return 0
    b = a / 2.0 ** math.floor(math.log2(nrm))  # exact scaling: d_k(a) = c * d_k(a / c)
    b2 = b @ b
    b4 = b2 @ b2
    b6 = b4 @ b2
    b8 = b4 @ b4
    b10 = b4 @ b6
    state = {"v": np.ones(a.shape[0]), "p": np.abs(b)}

    def top_of(step):  # one step of POW27 on |b|: v <- v p or p <- p p, scaled to max 1
        x = state["v"] @ state["p"] if step == "v" else state["p"] @ state["p"]
        top = float(x.max())
        if top > 0:
            state[step] = x / top
        return top

    return squarings_rule(nrm, (_norm1(b6), _norm1(b8), _norm1(b10)), top_of)


# || |b|^27 ||_1 = max(1^T |b|^27) by binary powering (27 = 1 + 2 + 8 + 16): the steps
# v <- v p ("v", v starting at 1^T) and p <- p p ("p", p starting at |b|), in this order
POW27 = "vpvppvpv"


def squarings_rule(nrm, norms, top_of):
    """``s`` from ``nrm = ||a||_1 > theta_13``, ``norms`` = the 1-norms of ``b^6``, ``b^8``,
    ``b^10`` for ``b = a / 2**floor(log2(nrm))``, and ``top_of(step)``: the largest entry
    of the next power of ``POW27`` on ``|b|`` (each power and the row vector kept at
    largest entry 1 with their scales in log2), asked for only when the backward-error
    correction is needed (NOTE [matrix_exp scaling])."""
    log2_c = math.floor(math.log2(nrm))
    c = 2.0**log2_c
    d6, d8, d10 = (x ** (1.0 / k) for x, k in zip(norms, (6, 8, 10), strict=True))
    eta = c * float(min(max(d6, d8), max(d8, d10)))
    s = max(0, math.ceil(math.log2(eta / THETA13))) if eta > 0 else 0
    # and no entry above 2**960, where the Pade sums (b_0 = 6.5e16) would overflow
    s = max(s, math.ceil(math.log2(nrm)) - 960)
    if math.log2(nrm) - s <= math.log2(THETA13):  # ||2**-s a|| <= theta_13: ell is 0
        return s
    # ell(2**-s a, 13): the squarings the backward-error bound still asks for
    log2_v, log2_p = 0.0, 0.0
    for step in POW27:
        top = top_of(step)
        if not top > 0:  # |b|^27 = 0: no correction
            return s
        if step == "v":
            log2_v += math.log2(top) + log2_p
        else:
            log2_p = 2 * log2_p + math.log2(top)
    log2_pow = log2_v + 27 * (log2_c - s)  # log2 || |2**-s a|^27 ||_1
    log2_alpha = log2_pow - (math.log2(nrm) - s) - math.log2(_ERR13)
    return s + max(0, math.ceil((log2_alpha + 53) / 26))


def _expm_one(a):
    """``exp(a)`` of one matrix: scaling and squaring with the degree-13 Pade approximant
    (Higham 2005), the number of squarings as Al-Mohy & Higham 2009 (NOTE [matrix_exp
    scaling]), in float64 (complex128 for a complex ``a``)."""
    a = np.asarray(a, dtype=np.complex128 if a.dtype.kind == "c" else np.float64)
    n = a.shape[0]
    s = expm_squarings(a) if n else 0
    a = a / (2.0**s)
    b = _PADE13
    ident = np.eye(n)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
        + b[7] * a6
        + b[5] * a4
        + b[3] * a2
        + b[1] * ident
    )
    v = (
        a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
        + b[6] * a6
        + b[4] * a4
        + b[2] * a2
        + b[0] * ident
    )
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _expm(a):
    flat = _flat(a)
    out = np.empty(flat.shape, dtype=a.dtype)
    # a non-finite matrix: NaN in every part (complex: nan+nanj, as PyTorch; a plain NaN
    # assigned to a complex array is nan+0j, fuzz seed 704084)
    nan = complex(np.nan, np.nan) if a.dtype.kind == "c" else np.nan
    for i, m in enumerate(flat):
        out[i] = _expm_one(m) if np.isfinite(m).all() else nan
    return out.reshape(a.shape)


class LinalgMethods:
    """The linalg methods of ``CpuBackend`` (NOTE [Backend protocol])."""

    @staticmethod
    def inv(a):
        """``A^-1`` of each matrix of ``a``; a singular finite matrix raises
        ``LinAlgError``, a non-finite one gives NaN (as PyTorch)."""
        return _inv(a)

    @staticmethod
    def solve(a, b):
        """``A^-1 B`` (batch dims broadcast), ``LinAlgError`` for a singular ``A``."""
        return _solve(a, b)

    @staticmethod
    def solve_triangular(a, b, upper, unitriangular):
        return _solve_triangular(a, b, upper, unitriangular)

    @staticmethod
    def cholesky(a):
        """The lower Cholesky factor of each matrix (``LinAlgError`` naming the first
        leading minor that is not positive-definite)."""
        return _cholesky(a)

    @staticmethod
    def cholesky_ex(a):
        """``(L, info)`` without raising (``info`` int32: the order of the first leading
        minor that is not positive-definite, 0 on success; that matrix's ``L`` as LAPACK's
        unblocked ``potf2`` leaves it)."""
        return _cholesky_ex(a)

    @staticmethod
    def det(a):
        """NumPy's ``linalg.det`` (LAPACK's LU; no warning for NaN)."""
        with np.errstate(invalid="ignore"):
            return np.linalg.det(a)

    @staticmethod
    def slogdet(a):
        """NumPy's ``linalg.slogdet``: ``(sign, log|det|)``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.linalg.slogdet(a)

    @staticmethod
    def eigh(a, uplo="L"):
        """``(eigenvalues ascending, eigenvectors)`` reading ``uplo``'s triangle."""
        try:
            return np.linalg.eigh(a, UPLO=uplo)
        except np.linalg.LinAlgError:
            raise _not_converged("linalg.eigh", a, "eigenvalues") from None

    @staticmethod
    def eig(a):
        """``(eigenvalues, eigenvectors)`` of general matrices (LAPACK's ``geev``: unit
        eigenvectors), complex also for a real ``a`` (as PyTorch's); a non-finite matrix
        raises PyTorch's error."""
        if not np.isfinite(a).all():
            raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
        out = np.result_type(a.dtype, np.complex64)
        try:
            w, v = np.linalg.eig(a)
        except np.linalg.LinAlgError:
            raise _not_converged("linalg.eig", a, "eigenvalues") from None
        return w.astype(out, copy=False), v.astype(out, copy=False)

    @staticmethod
    def svd(a, full_matrices=True):
        """``(U, S, Vh)``, singular values descending; NaN for a non-finite matrix."""
        return _svd(a, full_matrices)

    @staticmethod
    def qr(a, mode="reduced"):
        """NumPy's ``linalg.qr`` (``mode`` 'reduced', 'complete', or 'r': ``R`` alone)."""
        return np.linalg.qr(a, mode=mode)

    @staticmethod
    def matrix_exp(a):
        """``exp(A)`` of each matrix (NaN for a non-finite one)."""
        return _expm(a)

    @staticmethod
    def det_backward(a, d, g):
        """``g`` times the conjugate adjugate transposed of each matrix ``a`` of
        determinant ``d`` (the VJP of ``det``, complex too) in one pass: each matrix takes
        only its own path (one solve, or the SVD for the nearly singular ones)."""
        g = np.broadcast_to(g, d.shape)
        n = a.shape[-1]
        if n <= 1:
            return np.broadcast_to(g[..., None, None], a.shape).copy()
        eps = np.finfo(a.dtype).eps
        singular = np.abs(d) < 100.0 * eps
        out = np.empty(a.shape, dtype=a.dtype)
        good = ~singular
        if good.any():
            gd = np.zeros((int(good.sum()), n, n), dtype=a.dtype)  # diag(g det A), no inf * 0
            gd[:, np.arange(n), np.arange(n)] = (g * d.conj())[good][:, None]
            out[good] = np.linalg.solve(np.swapaxes(a[good], -1, -2).conj(), gd)
        if singular.any():
            u, s, vh = np.linalg.svd(a[singular])
            alpha = (np.linalg.det(u) * np.linalg.det(vh)).conj() * g[singular]
            others = np.stack([np.prod(np.delete(s, i, -1), -1) for i in range(n)], -1)
            out[singular] = (u * (alpha[..., None] * others)[..., None, :]) @ vh
        return out
