"""Matrix decompositions and solvers: the primitives behind ``numbagrad.linalg``.

Each forward runs on the backend's linalg family (NOTE [Backend protocol]: on the CPU,
NumPy's LAPACK, ``kernels/cpu/backend_linalg.py``); each primitive's ``vjp`` and
``jvp`` are written with numbagrad ops (so they are differentiable again) after PyTorch's
``derivatives.yaml`` / ``FunctionsManual.cpp`` formulas, and each batches over leading
dimensions, so its vmap rule moves the batch dimension to the front.

NOTE [Linalg outputs saved for backward]
The factorizations with several outputs (``LinalgSvd``, ``LinalgEigh``, ``LinalgQr``,
``LinalgSlogdet``) need all their outputs in the backward, while the engine's
``saves_output`` keeps output 0 only. ``_MultiOut._record`` appends the other outputs to the
eager node, and ``_outputs(ctx)`` reads them back (from a ``func.grad`` tape node, which
keeps every output, directly).

NOTE [Complex linalg]
Every primitive here runs on complex64/complex128 and follows
PyTorch's complex convention (NOTE [Complex autograd] in ``ops/cplx.py``): the rules are
PyTorch's (``FunctionsManual.cpp``) with each transpose a conjugate transpose (``_mH``),
plus the complex-only terms: ``slogdet``'s sign (a complex unit) has a gradient through
``Im(conj(g_sign) sign)``, ``eigh``'s eigenvalues stay real (``dL = Re(diag(V^H dA V))``),
and ``svd``'s JVP/VJP carry the ``i Im(diag(.)) / (2S)`` terms. The eigenvectors of
``eigh`` and the singular vectors of ``svd`` are defined up to a phase ``e^{i phi}`` per
column: as PyTorch, a VJP through them checks that the loss does not depend on that phase
(``_check_gauge``) and raises PyTorch's RuntimeError otherwise.

NOTE [Degenerate spectra]
As in PyTorch, the gradients of ``eigh`` / ``svd`` through the eigenvectors or singular
vectors divide by differences of eigenvalues (squared singular values): at a repeated
value they are inf or nan, since the vectors are not unique there. Gradients through the
values alone (``eigvalsh``, ``svdvals``) are fine everywhere.
"""

# ruff: noqa: N802, N803, N806  (math notation: A, L, U, S, Vh, as PyTorch names them)
from __future__ import annotations

from collections import namedtuple

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.graph import SavedOutput
from numbagrad._creation import arange as _arange
from numbagrad._creation import const_ones_like as _ones_like
from numbagrad._creation import const_zeros_like as _zeros_like
from numbagrad._creation import eye as _eye
from numbagrad._tensor import Tensor
from numbagrad.kernels import LinAlgError
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._rules import align_batched, conj_all, front
from numbagrad.ops.shape import DiagonalBackward

__all__ = ["LinAlgError"]

# result types with PyTorch's field names (``torch.return_types.<name>``)
SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
CholeskyExResult = namedtuple("linalg_cholesky_ex", ["L", "info"])
SvdResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
TorchSvdResult = namedtuple("svd", ["U", "S", "V"])
QrResult = namedtuple("linalg_qr", ["Q", "R"])
LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# -- input checks -------------------------------------------------------------------------------
def _torch_dtype_name(dtype):
    names = {
        "int64": "Long",
        "int32": "Int",
        "bool": "Bool",
        "int16": "Short",
        "int8": "Char",
        "uint8": "Byte",
    }
    return names.get(str(dtype).split(".")[-1], str(dtype))


# functions whose rules hold for complex matrices (NOTE [Complex linalg])
_COMPLEX_OK = frozenset(
    (
        "linalg.inv linalg.solve linalg.det linalg.slogdet linalg.cholesky linalg.eigh "
        "linalg.svd linalg.svdvals linalg.qr linalg.pinv linalg.solve_triangular "
        "linalg.matrix_norm linalg.norm linalg.cond linalg.matrix_rank linalg.lstsq "
        "linalg.matrix_power linalg.matrix_exp linalg.eig linalg.eigvals cholesky_solve "
        "linalg.cholesky_ex"
    ).split()
)


def check_float(A, fname, arg="input"):
    """``A`` a floating tensor (PyTorch's message otherwise)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be Tensor, not {type(A).__name__}")
    if A.dtype.is_complex and fname not in _COMPLEX_OK:
        raise NotImplementedError(
            f"{fname}: complex tensors are not supported by numbagrad's linear algebra yet "
            "(matmul, einsum and the elementwise ops are; see docs/complex.rst)"
        )
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. "
            f"Got {_torch_dtype_name(A.dtype)}"
        )


_HALF_OK = frozenset(("linalg.matrix_exp", "linalg.matrix_power"))  # products only


def check_matrix(A, fname, square=False, name="A"):
    """``A`` a floating batch of (square) matrices."""
    check_float(A, fname)
    if A.dtype is D.float16 and fname not in _HALF_OK:  # NumPy's LAPACK has no float16
        raise NotImplementedError(
            f"{fname}: float16 (Half) is not supported, as in PyTorch's "
            "CPU build; convert with .float() first"
        )
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{fname}: {name} must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )


# -- small tensor helpers used by the rules ---------------------------------------------------
def _mT(x):
    return F.swapaxes(x, -1, -2)


def _mH(x):
    """The conjugate transpose (the transpose of a real ``x``)."""
    return F.conj(_mT(x)) if x.dtype.is_complex else _mT(x)


def _conj(x):
    return F.conj(x) if x.dtype.is_complex else x


def _check_gauge(im, other, message):
    """PyTorch's phase-invariance check of a complex eigen/singular-vector VJP:
    ``allclose(im, other, rtol=1e-2, atol=1e-2)`` for imaginary parts of diagonals (None
    for zeros; NOTE [Complex linalg]). Skipped on the values transforms trace (PyTorch
    skips tensor subclasses)."""
    vals = [v for v in (im, other) if v is not None]
    if any(v._is_tracer for v in vals):
        return
    a, b = (None if v is None else v.detach().numpy() for v in (im, other))
    a = np.zeros_like(b) if a is None else a
    b = np.zeros_like(a) if b is None else b
    if not np.allclose(a, b, rtol=1e-2, atol=1e-2):
        raise RuntimeError(message)


def diag_embed0(x):
    """A batch of diagonal matrices with ``x`` (``(..., n)``) on their diagonals."""
    n = x.shape[-1]
    k = x.ndim
    return bind(
        DiagonalBackward, (x,), {"shape": (*x.shape, n), "offset": 0, "dim1": k - 1, "dim2": k}
    )


def _eye_as(x, n):
    return _eye(n, dtype=x.dtype, device=x.device)


def _ones_offdiag(x, n):
    # 1 - I: keeps the off-diagonal part of a batch of n x n matrices
    return 1.0 - _eye_as(x, n)


def _sym_denominator(v):
    """``E_ij = v_j - v_i`` with ones on the diagonal (the gaps the rules divide by)."""
    n = v.shape[-1]
    return F.unsqueeze(v, -2) - F.unsqueeze(v, -1) + _eye_as(v, n)


def _unary_batch(cls, args, dims, **params):
    """Every primitive here batches over leading dims: the vmap dim goes first."""
    out = bind(cls, (front(args[0], dims[0]),), params)
    return out, (0 if cls.n_out == 1 else (0,) * cls.n_out)


def _outputs(ctx, n):
    """All ``n`` outputs of the node (NOTE [Linalg outputs saved for backward])."""
    outs = getattr(ctx, "outs", None)
    if outs is not None:  # a func.grad tape node keeps them all
        return list(outs)
    return ctx.saved()[-n:]


class _MultiOut(Primitive, register=False):
    """Base of the primitives with several outputs that their rules all read."""

    saves_output = True

    @classmethod
    def _record(cls, args, params, outs, be=None):
        node = (
            super()._record(args, params, outs)
            if be is None
            else super()._record(args, params, outs, be)
        )
        node._saved = [*node._saved, *(SavedOutput(o, i) for i, o in enumerate(outs) if i)]
        return node


# -- inverse and solve --------------------------------------------------------------------------
class LinalgInv(Primitive):
    """``A^-1``; VJP ``-A^-T g A^-T``, JVP ``-X dA X``."""

    saves_output = True
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        return be.inv(a)

    @staticmethod
    def vjp(ctx, g):
        xt = _mT(conj_all(ctx.saved())[0])  # (complex: -A^-H g A^-H)
        return -F.matmul(xt, F.matmul(g, xt))

    @staticmethod
    def jvp(primals, tangents, out):
        return -F.matmul(out, F.matmul(tangents[0], out))


def inv(A):
    check_matrix(A, "linalg.inv", square=True)
    return bind(LinalgInv, (A,), NO_PARAMS)


class LinalgSolve(Primitive):
    """``X = A^-1 B`` for a batch of matrices ``B`` (batch dims broadcast). VJP: one solve
    with ``A^T`` gives ``gB``, and ``gA = -gB X^T``; JVP ``A^-1 (dB - dA X)``."""

    saves_inputs = (0,)
    saves_output = True
    complex_ok = True

    @staticmethod
    def impl(be, a, b):
        return be.solve(a, b)

    @staticmethod
    def vjp(ctx, g):
        a, x = conj_all(ctx.saved())  # (complex: gB = A^-H g, gA = -gB X^H)
        gb = bind(LinalgSolve, (_mT(a), g), NO_PARAMS)
        ga = -F.matmul(gb, _mT(x)) if ctx.needs_input_grad(0) else None
        return ga, (gb if ctx.needs_input_grad(1) else None)

    @staticmethod
    def jvp(primals, tangents, out):
        a, _ = primals
        ta, tb = tangents
        rhs = tb
        if ta is not None:
            rhs = -F.matmul(ta, out) if rhs is None else rhs - F.matmul(ta, out)
        return bind(LinalgSolve, (a, rhs), NO_PARAMS)

    @staticmethod
    def batch(args, dims):
        """Batch dims broadcast: the vmap dim first, unbatched operands broadcast."""
        return bind(LinalgSolve, align_batched(args, dims), NO_PARAMS), 0


def _tri(x, upper, unitriangular):
    """The triangle of ``x`` a triangular solve reads (without the diagonal if unit)."""
    k = int(unitriangular)
    return F.triu(x, k) if upper else F.tril(x, -k)


class LinalgSolveTriangular(Primitive):
    """``X = A^-1 B`` for triangular ``A`` (batch dims broadcast), by substitution. VJP
    (PyTorch's ``linalg_solve_triangular_backward``): ``gB = A^-T g`` (a triangular solve
    with the other triangle), ``gA = -tri(gB X^T)``; JVP ``A^-1 (dB - tri(dA) X)``."""

    saves_inputs = (0,)
    saves_output = True
    complex_ok = True

    @staticmethod
    def impl(be, a, b, upper, unitriangular):
        return be.solve_triangular(a, b, upper, unitriangular)

    @staticmethod
    def vjp(ctx, g, upper, unitriangular):
        a, x = ctx.saved()  # (complex: gB = A^-H g, gA = -tri(gB X^H))
        params = {"upper": not upper, "unitriangular": unitriangular}
        gb = bind(LinalgSolveTriangular, (_mH(a), g), params)
        ga = None
        if ctx.needs_input_grad(0):
            ga = _tri(-F.matmul(gb, _mH(x)), upper, unitriangular)
        return ga, (gb if ctx.needs_input_grad(1) else None)

    @staticmethod
    def jvp(primals, tangents, out, upper, unitriangular):
        a, _ = primals
        ta, tb = tangents
        rhs = tb
        if ta is not None:
            proj = F.matmul(_tri(ta, upper, unitriangular), out)
            rhs = -proj if rhs is None else rhs - proj
        params = {"upper": upper, "unitriangular": unitriangular}
        return bind(LinalgSolveTriangular, (a, rhs), params)

    @staticmethod
    def batch(args, dims, upper, unitriangular):
        params = {"upper": upper, "unitriangular": unitriangular}
        return bind(LinalgSolveTriangular, align_batched(args, dims), params), 0


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """``A^-1 B`` (``B A^-1`` with ``left=False``) for triangular ``A``."""
    params = {"upper": bool(upper), "unitriangular": bool(unitriangular)}
    if not left:  # X A = B  <=>  A^T X^T = B^T, with the other triangle
        params["upper"] = not params["upper"]
        return _mT(bind(LinalgSolveTriangular, (_mT(A), _mT(B)), params))
    return bind(LinalgSolveTriangular, (A, B), params)


def _is_vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True):
    check_matrix(A, "linalg.solve", square=True)
    check_float(B, "linalg.solve", "B")
    if A.dtype is not B.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found "
            f"A of type {A.dtype} and B of type {B.dtype} instead"
        )
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(solve(_mT(A), _mT(B)))
    vector = _is_vector_rhs(A, B)
    Bm = F.unsqueeze(B, -1) if vector else B
    n = A.shape[-1]
    if Bm.shape[-2] != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"AX = B ({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x"
            f"{Bm.shape[-1]})"
        )
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2]))
    except ValueError:
        raise RuntimeError(
            f"linalg.solve: batch dimensions of A {list(A.shape)} and B "
            f"{list(B.shape)} are not broadcastable"
        ) from None
    X = bind(LinalgSolve, (A, Bm), NO_PARAMS)
    return F.squeeze(X, -1) if vector else X


# -- determinants ------------------------------------------------------------------------------
def _prod_others(s):
    """``prod_{j != i} s_j`` along the last dim, without dividing (exclusive products)."""
    ones = _ones_like(F.narrow(s, -1, 0, 1)) if s.shape[-1] else s
    before = F.cumprod(F.cat([ones, F.narrow(s, -1, 0, s.shape[-1] - 1)], -1), -1)
    rev = F.flip(s, (-1,))
    after = F.flip(F.cumprod(F.cat([ones, F.narrow(rev, -1, 0, s.shape[-1] - 1)], -1), -1), (-1,))
    return before * after


def _det_grad(a, d, g):
    """``g * conj(adj(A))^T``, PyTorch's ``linalg_det_backward``: ``g conj(det A) A^-H``
    through one solve where ``A`` is invertible; through the SVD,
    ``conj(det(U) det(Vh)) U diag(prod_{j!=i} S_j) Vh``, where ``|det A|`` is tiny (no
    division there). Each path sees a harmless
    stand-in (identity, or a diagonal with distinct entries) for the matrices it does not
    own, so neither produces inf/nan."""
    n = a.shape[-1]
    if n == 0:
        return _zeros_like(a)
    if n == 1:
        return F.expand(F.unsqueeze(F.unsqueeze(g, -1), -1), a.shape)
    eps = float(np.finfo(D.as_dtype(a.dtype).np).eps)
    singular = F.unsqueeze(F.unsqueeze(F.abs(d) < 100.0 * eps, -1), -1)
    eye = _eye_as(a, n)
    # diag(g det A), not (g det A) * I: an infinite g times the off-diagonal zeros is nan
    gd = diag_embed0(F.expand(F.unsqueeze(g * _conj(d), -1), (*d.shape, n)))
    good = bind(LinalgSolve, (_mH(F.where(singular, eye, a)), gd), NO_PARAMS)
    distinct = eye * _arange(1, n + 1, dtype=D.as_dtype(a.dtype).to_real(), device=a.device)
    u, s, vh = bind(LinalgSvd, (F.where(singular, a, distinct),), {"full_matrices": False})
    alpha = _conj(bind(LinalgDet, (u,), NO_PARAMS) * bind(LinalgDet, (vh,), NO_PARAMS)) * g
    bad = F.matmul(u * F.unsqueeze(F.unsqueeze(alpha, -1) * _prod_others(s), -2), vh)
    return F.where(singular, bad, good)


class LinalgDet(Primitive):
    """``det A``; VJP ``g conj(adj(A))^T`` (``_det_grad``), JVP ``<adj(A)^T, dA>``."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        d = be.xp.asarray(be.det(a), dtype=a.dtype)
        nan = np.isnan(a).any((-2, -1))  # LAPACK's LU can turn a nan matrix into det 0
        return np.where(nan, np.nan, d).astype(a.dtype) if nan.any() else d

    @staticmethod
    def vjp(ctx, g):
        a, d = ctx.saved()
        return _det_grad(a, d, g)

    @staticmethod
    def fused_vjp(ctx, g):
        """``_det_grad`` on arrays, where the backend has it fused (``be.det_backward``:
        each matrix takes only its own path, one solve or the SVD for the nearly singular
        ones, instead of both); else the composite rule."""
        a, d = ctx.saved_arrays()
        out = ctx.be.det_backward(a, d, g)
        if out is None:
            return LinalgDet.vjp(ctx, Tensor._make(g))._data
        return out

    @staticmethod
    def jvp(primals, tangents, out):
        adj_t = _conj(_det_grad(primals[0], out, _ones_like(out)))
        return F.sum(adj_t * tangents[0], (-2, -1))


def det(A):
    check_matrix(A, "linalg.det", square=True)
    return bind(LinalgDet, (A,), NO_PARAMS)


class LinalgSlogdet(_MultiOut):
    """``(sign, log|det A|)``. Real: the sign is piecewise constant (zero gradient), the
    log's VJP is ``g A^-T`` (one solve), its JVP ``tr(A^-1 dA)``. Complex (PyTorch's
    ``slogdet_backward`` / ``slogdet_jvp``): with ``t = tr(A^-1 dA)``,
    ``d logabsdet = Re(t)``, ``d sign = sign i Im(t)``; VJP
    ``(g_log - i Im(conj(g_sign) sign)) A^-H``."""

    n_out = 2
    saves_inputs = (0,)
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        sign, logabs = be.slogdet(a)
        nan = np.isnan(a).any((-2, -1))
        if nan.any():  # PyTorch: sign 0, logabsdet nan
            sign = np.where(nan, 0.0, sign)
            logabs = np.where(nan, np.nan, logabs)
        real = np.finfo(a.dtype).dtype  # logabsdet is real also for a complex A
        return be.xp.asarray(sign, dtype=a.dtype), be.xp.asarray(logabs, dtype=real)

    @staticmethod
    def vjp(ctx, gsign, glog):
        a = ctx.saved()[0]
        if a.dtype.is_complex and gsign is not None:
            sign = _outputs(ctx, 2)[0]
            im = -F.imag(F.conj(gsign) * sign)
            glog = F.complex(_zeros_like(im) if glog is None else glog, im)
        if glog is None:
            return None
        n = a.shape[-1]
        if a.dtype.is_complex and not glog.dtype.is_complex:
            glog = F.complex(glog, _zeros_like(glog))
        # diag(g) as PyTorch's slogdet_backward builds it, not g * I: an infinite g times
        # the off-diagonal zeros is NaN, and the solve spreads it over the whole gradient
        gd = diag_embed0(F.expand(F.unsqueeze(glog, -1), (*glog.shape, n)))
        return bind(LinalgSolve, (_mH(a), gd), NO_PARAMS)

    @staticmethod
    def jvp(primals, tangents, out):
        a = primals[0]
        x = bind(LinalgSolve, (a, tangents[0]), NO_PARAMS)
        t = F.sum(F.diagonal(x, 0, -2, -1), -1)
        if a.dtype.is_complex:
            return out[0] * (F.imag(t) * 1j), F.real(t)
        return None, t


def slogdet(A):
    check_matrix(A, "linalg.slogdet", square=True)
    return SlogdetResult(*bind(LinalgSlogdet, (A,), NO_PARAMS))


# -- Cholesky ---------------------------------------------------------------------------------
def _solve_right(x, a):
    """``x a^-1`` (a solve from the right)."""
    return _mT(bind(LinalgSolve, (_mT(a), _mT(x)), NO_PARAMS))


class LinalgCholesky(Primitive):
    """The lower Cholesky factor ``L`` of ``A = L L^H`` (LAPACK reads the lower triangle).

    VJP (PyTorch's ``cholesky_backward``): ``Phi = tril(L^H gL)``, then
    ``0.5 (Phi + tril(Phi, -1)^H)``, then ``gA = L^-H Phi L^-1``. JVP:
    ``dL = L Phi(L^-1 dA L^-H)`` with ``Phi`` the lower triangle, diagonal halved."""

    saves_output = True
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        return be.cholesky(a)

    @staticmethod
    def vjp(ctx, g):
        return _cholesky_vjp(ctx.saved()[0], g)

    @staticmethod
    def jvp(primals, tangents, out):
        return _cholesky_jvp(out, tangents[0])


def _cholesky_vjp(L, g):
    # PyTorch's: two triangular solves, so NaN/inf propagate as in PyTorch
    phi = F.tril(F.matmul(_mH(L), g))
    phi = 0.5 * (phi + _mH(F.tril(phi, -1)))
    ga = solve_triangular(_mH(L), phi, upper=True)
    return solve_triangular(L, ga, upper=False, left=False)


def _cholesky_jvp(L, da):
    x = _mH(bind(LinalgSolve, (L, _mH(bind(LinalgSolve, (L, da), NO_PARAMS))), NO_PARAMS))
    phi = F.tril(x) - 0.5 * diag_embed0(F.diagonal(x, 0, -2, -1))
    return F.matmul(L, phi)


class LinalgCholeskyEx(Primitive):
    """``(L, info)``: ``LinalgCholesky`` that reports instead of raising (``info`` int32,
    no gradient); the rules are ``LinalgCholesky``'s on ``L``."""

    n_out = 2
    saves_output = True
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        lo, info = be.cholesky_ex(a)
        return lo, info

    @staticmethod
    def vjp(ctx, gl, ginfo):
        return None if gl is None else _cholesky_vjp(ctx.saved()[0], gl)

    @staticmethod
    def jvp(primals, tangents, out):
        return _cholesky_jvp(out[0], tangents[0]), None


def cholesky(A, *, upper=False):
    check_matrix(A, "linalg.cholesky", square=True)
    L = bind(LinalgCholesky, (A,), NO_PARAMS)
    return _mH(L) if upper else L


def cholesky_ex(A, *, upper=False, check_errors=False):
    check_matrix(A, "linalg.cholesky_ex", square=True)
    L, info = bind(LinalgCholeskyEx, (A,), NO_PARAMS)
    if check_errors and info.numel() and bool((info != 0).any()):
        flat = info.reshape(-1).tolist()
        i = next(k for k, v in enumerate(flat) if v)
        prefix = f"(Batch element {i}): " if A.ndim > 2 else ""
        raise LinAlgError(
            f"linalg.cholesky_ex: {prefix}The factorization could not be completed because "
            f"the input is not positive-definite (the leading minor of order {flat[i]} is not "
            "positive-definite)."
        )
    return CholeskyExResult(_mH(L) if upper else L, info)


# -- symmetric eigendecomposition ----------------------------------------------------------------
class LinalgEigh(_MultiOut):
    """``(L, V)`` with ``A = V diag(L) V^T``, eigenvalues ascending (reads the ``UPLO``
    triangle). VJP (``linalg_eig_backward``, Hermitian case):
    ``V (skew(V^T gV) / E + diag(gL)) V^T`` with ``E_ij = L_j - L_i``
    (NOTE [Degenerate spectra]); JVP ``dL = diag(V^T dA V)``, ``dV = V (V^T dA V / E)`` with
    a zero diagonal. Complex (Hermitian) ``A``: each ``^T`` is ``^H``, ``dL`` takes the real
    part, and the VJP through ``V`` checks the phase invariance (NOTE [Complex linalg])."""

    n_out = 2
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a, uplo):
        w, v = be.eigh(a, uplo)
        return w, v

    @staticmethod
    def vjp(ctx, gl, gv, uplo):
        L, V = _outputs(ctx, 2)
        Vt = _mH(V)
        if gv is None:
            return F.matmul(V * F.unsqueeze(gl, -2), Vt)
        vg = F.matmul(Vt, gv)
        if vg.dtype.is_complex:
            _check_gauge(
                F.imag(F.diagonal(vg, 0, -2, -1)),
                None,
                "linalg_eigh_backward: The eigenvectors in the complex case are specified up "
                "to multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined.",
            )
        ga = 0.5 * (vg - _mH(vg)) / _sym_denominator(L)
        if gl is not None:  # PyTorch overwrites the diagonal with gL
            if ga.dtype.is_complex:
                ga = ga * _ones_offdiag(L, L.shape[-1])
            ga = ga + diag_embed0(gl)
        return F.matmul(V, F.matmul(ga, Vt))

    @staticmethod
    def jvp(primals, tangents, out, uplo):
        L, V = out
        x = F.matmul(_mH(V), F.matmul(tangents[0], V))
        dl = F.diagonal(x, 0, -2, -1)
        if dl.dtype.is_complex:
            dl = F.real(dl)
        c = x / _sym_denominator(L) * _ones_offdiag(x, x.shape[-1])
        return dl, F.matmul(V, c)


def eigh(A, UPLO="L"):
    check_matrix(A, "linalg.eigh", square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return EighResult(*bind(LinalgEigh, (A,), {"uplo": UPLO}))


# -- general eigendecomposition -----------------------------------------------------------------
class LinalgEig(_MultiOut):
    """``(L, V)`` with ``A V = V diag(L)``, complex also for a real ``A``, unit
    eigenvectors (LAPACK's ``geev``). VJP (PyTorch's ``linalg_eig_backward``):
    ``gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H`` with
    ``E_ij = L_j - L_i`` (its diagonal replaced by ``gL``), after the phase check
    (NOTE [Complex linalg]); a real ``A`` gets its real part. JVP (``linalg_eig_jvp``):
    ``dP = V^-1 dA V``, ``dL = diag(dP)``, ``dX = V (dP / E)`` (zero diagonal),
    ``dV = dX - V Re(diag(V^H dX))`` (NOTE [Degenerate spectra])."""

    n_out = 2
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        w, v = be.eig(a)
        return w, v

    @staticmethod
    def vjp(ctx, gl, gv):
        L, V = _outputs(ctx, 2)
        Vh = _mH(V)
        if gv is None:
            return bind(LinalgSolve, (Vh, F.unsqueeze(gl, -1) * Vh), NO_PARAMS)
        vg = F.matmul(Vh, gv)
        dg = F.diagonal(vg, 0, -2, -1)
        _check_gauge(
            F.imag(dg),
            None,
            "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined.",
        )
        vg = vg - F.matmul(Vh, V * F.unsqueeze(F.real(dg), -2))
        ga = vg / _sym_denominator(F.conj(L))
        if gl is not None:
            ga = ga * _ones_offdiag(ga, ga.shape[-1]) + diag_embed0(gl)
        return bind(LinalgSolve, (Vh, F.matmul(ga, Vh)), NO_PARAMS)

    @staticmethod
    def jvp(primals, tangents, out):
        L, V = out
        da = tangents[0]
        if not da.dtype.is_complex:
            da = F.complex(da, _zeros_like(da))
        dp = bind(LinalgSolve, (V, F.matmul(da, V)), NO_PARAMS)
        dl = F.diagonal(dp, 0, -2, -1)
        dx = F.matmul(V, dp / _sym_denominator(L) * _ones_offdiag(dp, dp.shape[-1]))
        fix = F.real(F.diagonal(F.matmul(_mH(V), dx), 0, -2, -1))
        return dl, dx - V * F.unsqueeze(fix, -2)


def eig(A):
    check_matrix(A, "linalg.eig", square=True)
    return EigResult(*bind(LinalgEig, (A,), NO_PARAMS))


def eigvals(A):
    check_matrix(A, "linalg.eigvals", square=True)
    return bind(LinalgEig, (A,), NO_PARAMS)[0]


# -- singular value decomposition -------------------------------------------------------------
def _svd_backward(gu, gs, gvh, U, S, Vh):
    """PyTorch's ``svd_backward`` (reduced factors; NOTE [Degenerate spectra], NOTE
    [Complex linalg])."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gu is None and gvh is None:
        if m >= n:
            return F.matmul(U, F.unsqueeze(gs, -1) * Vh)
        return F.matmul(U * F.unsqueeze(gs, -2), Vh)
    E = _sym_denominator(S * S)
    uhgu = vhgv = None
    if gu is not None:
        uhgu = F.matmul(_mH(U), gu)
        uhgu = uhgu - _mH(uhgu)
    if gvh is not None:
        vhgv = F.matmul(Vh, _mH(gvh))
        vhgv = vhgv - _mH(vhgv)
    cplx = U.dtype.is_complex
    if cplx:  # allclose(Im diag(U^H gU), -Im diag(V^H gV)), zeros where undefined
        _check_gauge(
            F.imag(F.diagonal(uhgu, 0, -2, -1)) if uhgu is not None else None,
            -F.imag(F.diagonal(vhgv, 0, -2, -1)) if vhgv is not None else None,
            "svd_backward: The singular vectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this phase "
            "term, making it ill-defined.",
        )
    if uhgu is not None and vhgv is not None:
        ga = (uhgu * F.unsqueeze(S, -2) + F.unsqueeze(S, -1) * vhgv) / E
    elif uhgu is not None:
        ga = uhgu / E * F.unsqueeze(S, -2)
    else:
        ga = F.unsqueeze(S, -1) * (vhgv / E)
    if gs is not None:
        ga = ga + diag_embed0(gs)
    if cplx and uhgu is not None and vhgv is not None:
        ga = ga + diag_embed0(F.diagonal(uhgu, 0, -2, -1) / (2.0 * S))
    if m > n and gu is not None:
        ga = F.matmul(U, ga)
        gus = gu / F.unsqueeze(S, -2)
        ga = ga + gus - F.matmul(U, F.matmul(_mH(U), gus))
        return F.matmul(ga, Vh)
    if m < n and gvh is not None:
        ga = F.matmul(ga, Vh)
        sgvh = gvh / F.unsqueeze(S, -1)
        ga = ga + sgvh - F.matmul(F.matmul(sgvh, _mH(Vh)), Vh)
        return F.matmul(U, ga)
    if m >= n:
        return F.matmul(U, F.matmul(ga, Vh))
    return F.matmul(F.matmul(U, ga), Vh)


class LinalgSvd(_MultiOut):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending.

    VJP: PyTorch's ``svd_backward`` on the reduced factors (``full_matrices=True`` drops the
    extra columns of ``U`` / rows of ``Vh`` and their gradients first, as PyTorch does).
    JVP (``svd_jvp``): with ``dP = U^T dA V``, ``dS = diag(dP)``,
    ``dU = U (sym(dP S) / E) + (I - U U^T) dA V S^-1``,
    ``dVh = -(sym(S dP) / E) Vh + S^-1 U^T dA (I - V V^T)``, ``E_ij = S_j^2 - S_i^2``
    (zero diagonal for the skew parts; NOTE [Degenerate spectra]). Complex: ``^T`` is
    ``^H``, ``dS = Re(diag(dP))``, and ``dU`` / ``dVh`` get ``i Im(diag(dP)) / (2S)`` on
    the diagonal (PyTorch's ``linalg_svd_jvp``, NOTE [Complex linalg])."""

    n_out = 3
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a, full_matrices):
        return be.svd(a, full_matrices)

    @staticmethod
    def vjp(ctx, gu, gs, gvh, full_matrices):
        U, S, Vh = _outputs(ctx, 3)
        if full_matrices:
            k = S.shape[-1]
            U = F.narrow(U, -1, 0, k)
            Vh = F.narrow(Vh, -2, 0, k)
            gu = F.narrow(gu, -1, 0, k) if gu is not None else None
            gvh = F.narrow(gvh, -2, 0, k) if gvh is not None else None
        return _svd_backward(gu, gs, gvh, U, S, Vh)

    @staticmethod
    def jvp(primals, tangents, out, full_matrices):
        U_, S, Vh_ = out
        da = tangents[0]
        m, n = da.shape[-2], da.shape[-1]
        k = S.shape[-1]
        U = F.narrow(U_, -1, 0, k) if full_matrices else U_
        Vh = F.narrow(Vh_, -2, 0, k) if full_matrices else Vh_
        V = _mH(Vh)
        Uh = _mH(U)
        dp = F.matmul(Uh, F.matmul(da, V))
        ds = F.diagonal(dp, 0, -2, -1)
        cplx = dp.dtype.is_complex
        if cplx:
            ds = F.real(ds)
        dp = dp - diag_embed0(ds)  # (complex: i Im(diag(dP)) stays on the diagonal)
        E = _sym_denominator(S * S)
        x = dp * F.unsqueeze(S, -2)
        dux = (x + _mH(x)) / E
        y = F.unsqueeze(-S, -1) * dp
        dvx = (y + _mH(y)) / E
        if cplx:
            d2s = diag_embed0(F.diagonal(dp, 0, -2, -1) / (2.0 * S))
            dux = dux + d2s
            dvx = dvx + d2s
        du = F.matmul(U, dux)
        dvh = F.matmul(dvx, Vh)
        if m > k:
            dav = F.matmul(da, V / F.unsqueeze(S, -2))
            du = du + dav - F.matmul(U, F.matmul(Uh, dav))
            if full_matrices:
                du = F.cat([du, _zeros_like(F.narrow(U_, -1, k, m - k))], -1)
        if n > k:
            uda = F.matmul(Uh / F.unsqueeze(S, -1), da)
            dvh = dvh + uda - F.matmul(F.matmul(uda, V), Vh)
            if full_matrices:
                dvh = F.cat([dvh, _zeros_like(F.narrow(Vh_, -2, k, n - k))], -2)
        return du, ds, dvh


def svd(A, full_matrices=True):
    check_matrix(A, "linalg.svd")
    return SvdResult(*bind(LinalgSvd, (A,), {"full_matrices": bool(full_matrices)}))


def svdvals(A):
    check_matrix(A, "linalg.svdvals")
    return bind(LinalgSvd, (A,), {"full_matrices": False})[1]


# -- QR -------------------------------------------------------------------------------------------
def _qr_square_jvp(da, Q, R):
    """``(dQ, dR)`` for ``A = Q R`` with ``R`` square (PyTorch's ``linalg_qr_jvp``):
    ``X = Q^H dA R^-1``, ``dR R^-1 = syminv(X + X^H)`` (the upper triangle, diagonal
    halved: real, as ``R``'s), ``dR = syminv(.) R``, ``dQ = dA R^-1 - Q syminv(.)``."""
    dar = _solve_right(da, R)
    x = F.matmul(_mH(Q), dar)
    sym = F.triu(x + _mH(x))
    up = sym - 0.5 * diag_embed0(F.diagonal(sym, 0, -2, -1))
    return dar - F.matmul(Q, up), F.matmul(up, R)


class LinalgQr(_MultiOut):
    """``(Q, R)`` with ``A = Q R`` (``mode`` 'reduced', 'complete' or 'r'; with 'r' ``Q`` is
    empty). VJP: PyTorch's ``linalg_qr_backward``; JVP: the same derivation forward
    (``_qr_square_jvp``; a wide ``A = Q [R1 R2]`` adds ``dR2 = Q^H (dA2 - dQ R2)``);
    complex: each ``^T`` is ``^H`` (NOTE [Complex linalg])."""

    n_out = 2
    complex_ok = True

    @staticmethod
    def impl(be, a, mode):
        if mode == "r":
            r = be.qr(a, "r")
            return be.xp.zeros((0,), a.dtype), r
        q, r = be.qr(a, mode)
        return q, r

    @staticmethod
    def batch(args, dims, mode):
        """The vmap dim first; the empty Q of mode 'r' is not batched."""
        q, r = bind(LinalgQr, (front(args[0], dims[0]),), {"mode": mode})
        return (q, r), ((None if mode == "r" else 0), 0)

    @staticmethod
    def vjp(ctx, gq, gr, mode):
        _check_qr_differentiable(mode, ctx.input_shape(0))
        Q, R = _outputs(ctx, 2)
        m, n = Q.shape[-2], R.shape[-1]
        if gq is not None:
            ga = -F.matmul(_mH(Q), gq)
            if gr is not None:
                ga = ga + F.matmul(gr, _mH(R))
        else:
            ga = F.matmul(gr, _mH(R))
        if m >= n:
            sym = F.triu(ga)
            sym = sym + _mH(sym)  # (its diagonal is real: halving it halves the real part)
            sym = sym - 0.5 * diag_embed0(F.diagonal(sym, 0, -2, -1))
            ga = F.matmul(Q, sym)
            if gq is not None:
                ga = ga + gq
            # gA R^-H by a triangular solve, as PyTorch (so NaN/inf propagate as there)
            return solve_triangular(_mH(R), ga, upper=False, left=False)
        x = -ga
        skew = F.tril(x - _mH(x))
        if skew.dtype.is_complex:  # halve the (imaginary) diagonal
            skew = skew - 0.5 * diag_embed0(F.diagonal(skew, 0, -2, -1))
        U = F.narrow(R, -1, 0, m)
        ga = solve_triangular(_mH(U), F.matmul(Q, skew), upper=False, left=False)
        ga = F.cat([ga, _zeros_like(F.narrow(R, -1, m, n - m))], -1)
        if gr is not None:
            ga = ga + F.matmul(Q, gr)
        return ga

    @staticmethod
    def jvp(primals, tangents, out, mode):
        _check_qr_differentiable(mode, tuple(primals[0].shape))
        Q, R = out
        da = tangents[0]
        m, n = Q.shape[-2], R.shape[-1]
        if m >= n:
            return _qr_square_jvp(da, Q, R)
        dq, dr1 = _qr_square_jvp(F.narrow(da, -1, 0, m), Q, F.narrow(R, -1, 0, m))
        dr2 = F.matmul(_mH(Q), F.narrow(da, -1, m, n - m) - F.matmul(dq, F.narrow(R, -1, m, n - m)))
        return dq, F.cat([dr1, dr2], -1)


def _check_qr_differentiable(mode, shape):
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed "
            "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
            "going to differentiate through linalg.qr."
        )
    if mode == "complete" and shape[-2] > shape[-1]:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def qr(A, mode="reduced"):
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of "
            "'reduced' (default), 'r', or 'complete'"
        )
    return QrResult(*bind(LinalgQr, (A,), {"mode": mode}))


# -- matrix exponential -------------------------------------------------------------------------
def _expm_frechet(a, e):
    """The Frechet derivative of ``exp`` at ``a`` in direction ``e``: the top-right block of
    ``exp([[a, e], [0, a]])`` (PyTorch's block-matrix trick), differentiable again."""
    n = a.shape[-1]
    top = F.cat([a, e], -1)
    bottom = F.cat([_zeros_like(a), a], -1)
    big = bind(LinalgMatrixExp, (F.cat([top, bottom], -2),), NO_PARAMS)
    return F.narrow(F.narrow(big, -2, 0, n), -1, n, n)


class LinalgMatrixExp(Primitive):
    """``exp(A)``; VJP the Frechet derivative at ``A^T`` applied to ``g``, JVP at ``A``
    applied to ``dA`` (``_expm_frechet``)."""

    saves_inputs = (0,)
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a):
        return be.matrix_exp(a)

    @staticmethod
    def vjp(ctx, g):
        return _expm_frechet(_mH(ctx.saved()[0]), g)  # (complex: at A^H, PyTorch's adjoint)

    @staticmethod
    def jvp(primals, tangents, out):
        return _expm_frechet(primals[0], tangents[0])


def matrix_exp(A):
    check_matrix(A, "linalg.matrix_exp", square=True)
    return bind(LinalgMatrixExp, (A,), NO_PARAMS)


# -- pseudo-inverse -------------------------------------------------------------------------------
def _pinv_svd(be, a, atol, rtol):
    """``A^+`` from the backend's SVD: the singular values above ``max(atol, rtol *
    s_max)`` inverted, the others dropped."""
    u, s, vh = be.svd(a, False)
    smax = s[..., :1] if s.shape[-1] else s
    keep = s > np.maximum(atol, rtol * smax)
    sinv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0).astype(a.dtype)
    v, uh = np.swapaxes(vh, -1, -2), np.swapaxes(u, -1, -2)
    if a.dtype.kind == "c":  # (complex matrices are CPU-only)
        v, uh = v.conj(), uh.conj()
    return (v * sinv[..., None, :]) @ uh


def _pinv_hermitian(be, a, atol, rtol):
    """``A^+`` of a symmetric ``A`` from the backend's ``eigh`` (on CUDA, cyclic Jacobi:
    NOTE [CUDA decompositions]): the same cutoff on ``|eigenvalues|``; a non-finite matrix
    gives NaN (as PyTorch)."""
    xp = be.xp
    if a.size == 0:
        return xp.empty(a.shape, a.dtype)
    w, v = be.eigh(a, "L")
    s = xp.abs(w)
    keep = s > xp.maximum(atol, rtol * xp.amax(s, axis=-1, keepdims=True))
    winv = xp.where(keep, 1.0 / xp.where(keep, w, 1.0), 0.0).astype(a.dtype)
    winv = xp.reshape(winv, (*winv.shape[:-1], 1, winv.shape[-1]))
    vh = xp.swapaxes(v, -1, -2)
    return xp.matmul(v * winv, vh.conj() if a.dtype.kind == "c" else vh)


class LinalgPinv(Primitive):
    """The Moore-Penrose pseudo-inverse ``X = A^+`` (singular values at most
    ``max(atol, rtol * s_max)`` dropped). VJP: PyTorch's ``pinv_backward``; JVP
    ``-X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X`` (constant rank); complex:
    each ``^T`` is ``^H``."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(_unary_batch)
    complex_ok = True

    @staticmethod
    def impl(be, a, atol, rtol, hermitian):
        if hermitian:
            return _pinv_hermitian(be, a, atol, rtol)
        return _pinv_svd(be, a, atol, rtol)

    @staticmethod
    def vjp(ctx, g, atol, rtol, hermitian):
        a, p = ctx.saved()
        m, n = a.shape[-2], a.shape[-1]
        ph = _mH(p)
        gh = _mH(g)
        if m <= n:
            k = F.matmul(gh, p)
            kph = F.matmul(k, ph)
            return (
                -_mH(F.matmul(p, k))
                + kph
                - F.matmul(F.matmul(a, p), kph)
                + F.matmul(F.matmul(ph, p), gh - F.matmul(k, a))
            )
        k = F.matmul(p, gh)
        phk = F.matmul(ph, k)
        return (
            -_mH(F.matmul(k, p))
            + F.matmul(F.matmul(gh - F.matmul(a, k), p), ph)
            + phk
            - F.matmul(F.matmul(phk, p), a)
        )

    @staticmethod
    def jvp(primals, tangents, out, atol, rtol, hermitian):
        a = primals[0]
        da = tangents[0]
        x = out
        dat = _mH(da)
        xt = _mH(x)
        ax = F.matmul(a, x)
        xa = F.matmul(x, a)
        return (
            -F.matmul(x, F.matmul(da, x))
            + F.matmul(F.matmul(x, xt), F.matmul(dat, _eye_as(a, a.shape[-2]) - ax))
            + F.matmul(_eye_as(a, a.shape[-1]) - xa, F.matmul(dat, F.matmul(xt, x)))
        )


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    check_matrix(A, "linalg.pinv")
    if hermitian and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.pinv(hermitian=True): A must be batches of square "
            f"matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    for name, v in (("atol", atol), ("rtol", rtol)):
        if isinstance(v, Tensor):
            raise NotImplementedError(
                f"linalg.pinv: a tensor {name} is not supported; pass a Python float"
            )
    if rtol is None:
        eps = float(np.finfo(D.as_dtype(A.dtype).np).eps)
        rtol = eps * max(A.shape[-2], A.shape[-1]) if atol is None or atol <= 0 else 0.0
    return bind(
        LinalgPinv,
        (A,),
        {"atol": float(atol or 0.0), "rtol": float(rtol), "hermitian": bool(hermitian)},
    )
