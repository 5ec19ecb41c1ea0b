"""``numbagrad.linalg``: linear algebra with gradients, mirroring ``torch.linalg``.

Every function batches over leading dimensions and supports float32 and float64, and
complex64/complex128 with PyTorch's complex gradients (``docs/complex.rst``). LAPACK
(through NumPy) computes the forwards; the gradients follow PyTorch's formulas and are
written with numbagrad ops, so they are differentiable again and work under ``vmap``,
``jvp`` and the other transforms (see ``docs/linalg.rst``). Failures raise
:class:`LinAlgError` (a ``RuntimeError``) with PyTorch's messages.

Gradients through eigenvectors (:func:`eigh`) or singular vectors (:func:`svd`) are not
defined at repeated eigenvalues / singular values: there they are inf or nan, as in
PyTorch. :func:`eigvalsh` and :func:`svdvals` have well-defined gradients everywhere.
"""

# ruff: noqa: N803, N806  (math notation and PyTorch's argument names: A, B, UPLO)
from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import ones_like as _ones_like
from numbagrad._creation import tensor as _tensor
from numbagrad._tensor import Tensor
from numbagrad.autograd.grad_mode import no_grad as _no_grad_mode
from numbagrad.ops import linalg_decomp as _L
from numbagrad.ops._public import namespace_all as _namespace_all
from numbagrad.ops._public import public as _public
from numbagrad.ops._util import wrap_dim as _wrap_dim
from numbagrad.ops.linalg import linalg_cross as _linalg_cross
from numbagrad.ops.linalg import matrix_power as _matrix_power
from numbagrad.ops.linalg_decomp import LinAlgError
from numbagrad.ops.reduce import _torch_name

_public(LinAlgError, namespace="linalg")


@_public(namespace="linalg")
def det(A):
    """Determinant of a (batch of) square matrices ``(*, n, n)``.

    The gradient is ``g * adj(A)^T``: ``g det(A) A^-T`` through one solve where ``A`` is
    invertible, through the SVD where ``|det A|`` is tiny (finite for singular matrices,
    as PyTorch's).

    Parameters
    ----------
    A : Tensor
        Square matrices, float32 or float64.

    Returns
    -------
    Tensor
        Shape ``(*)``.

    Raises
    ------
    RuntimeError
        When ``A`` is not a batch of square floating matrices.

    Examples
    --------
    >>> import numbagrad
    >>> print(round(float(numbagrad.linalg.det(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))), 4))
    -2.0
    """
    return _L.det(A)


@_public(namespace="linalg")
def slogdet(A):
    """Sign and log of the absolute value of the determinant: ``(sign, logabsdet)``.

    Returns a namedtuple with fields ``sign`` and ``logabsdet``; ``logabsdet`` is
    ``-inf`` for a singular matrix. Only ``logabsdet`` carries a gradient
    (``g A^-T``).

    Parameters
    ----------
    A : Tensor
        Square matrices ``(*, n, n)``.

    Returns
    -------
    (Tensor, Tensor)
        ``sign`` and ``logabsdet``, each of shape ``(*)``.

    Examples
    --------
    >>> import numbagrad
    >>> r = numbagrad.linalg.slogdet(numbagrad.tensor([[0.0, 2.0], [3.0, 0.0]]))
    >>> print(float(r.sign), round(float(r.logabsdet), 4))
    -1.0 1.7918
    """
    return _L.slogdet(A)


@_public(namespace="linalg")
def inv(A):
    """Inverse of a (batch of) square matrices.

    The gradient is ``-A^-T g A^-T``.

    Parameters
    ----------
    A : Tensor
        Invertible square matrices ``(*, n, n)``.

    Returns
    -------
    Tensor
        Shape ``(*, n, n)``.

    Raises
    ------
    LinAlgError
        For a singular matrix (``The diagonal element k is zero, ...``, naming the batch
        element).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.inv(numbagrad.tensor([[2.0, 0.0], [0.0, 0.5]])).tolist()
    [[0.5, 0.0], [0.0, 2.0]]
    """
    return _L.inv(A)


@_public(namespace="linalg")
def solve(A, B, *, left=True):
    """Solve ``A X = B`` (or ``X A = B`` with ``left=False``) for square ``A``.

    ``B`` is a batch of vectors when it is 1-D or has ``A``'s shape without the last
    dimension (PyTorch's rule), else a batch of matrices ``(*, n, k)``; batch dims
    broadcast. The gradient takes one solve with ``A^T``: ``gB = A^-T g``,
    ``gA = -gB X^T``.

    Parameters
    ----------
    A : Tensor
        Invertible matrices ``(*, n, n)``.
    B : Tensor
        Right-hand sides ``(*, n)`` or ``(*, n, k)``.
    left : bool
        Solve ``A X = B`` (True) or ``X A = B``.

    Returns
    -------
    Tensor
        The solution, shaped like ``B`` (broadcast).

    Raises
    ------
    LinAlgError
        For a singular ``A``.
    RuntimeError
        For incompatible shapes.

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> numbagrad.linalg.solve(A, numbagrad.tensor([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    return _L.solve(A, B, left=left)


@_public(namespace="linalg")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """Solve ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``.

    Only the ``upper`` (or lower) triangle of ``A`` is read (its diagonal taken as ones
    with ``unitriangular=True``), so the gradient with respect to ``A`` is triangular too,
    as PyTorch's.

    Parameters
    ----------
    A : Tensor
        Triangular matrices ``(*, n, n)``.
    B : Tensor
        Right-hand sides ``(*, n, k)`` (``(*, k, n)`` with ``left=False``).
    upper : bool
        Whether ``A`` is upper triangular.
    left : bool
        Side of ``A``.
    unitriangular : bool
        Take the diagonal of ``A`` as ones.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.tensor([[2.0, 1.0], [0.0, 1.0]])
    >>> B = numbagrad.tensor([[3.0], [1.0]])
    >>> numbagrad.linalg.solve_triangular(A, B, upper=True).tolist()
    [[1.0], [1.0]]
    """
    _L.check_matrix(A, "linalg.solve_triangular", square=True)
    _L.check_matrix(B, "linalg.solve_triangular", name="B")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(
            f"linalg.solve_triangular: batch dimensions of A {list(A.shape)} and B "
            f"{list(B.shape)} are not broadcastable"
        ) from None
    return _L.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


@_public(namespace="linalg")
def cholesky(A, *, upper=False):
    """Cholesky factor of symmetric positive-definite matrices: ``A = L L^T``.

    LAPACK reads the lower triangle. The gradient is PyTorch's ``cholesky_backward``
    (a symmetric matrix).

    Parameters
    ----------
    A : Tensor
        Symmetric positive-definite matrices ``(*, n, n)``.
    upper : bool
        Return the upper factor ``L^T`` instead.

    Returns
    -------
    Tensor

    Raises
    ------
    LinAlgError
        When a matrix is not positive-definite (naming the leading minor and the batch
        element).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.cholesky(numbagrad.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return _L.cholesky(A, upper=upper)


@_public(namespace="linalg")
def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`cholesky` that reports instead of raising: a namedtuple ``(L, info)``, with
    ``info`` (int32, one per matrix) the order of the first leading minor that is not
    positive-definite, 0 for a factored matrix (whose ``L`` is :func:`cholesky`'s, with its
    gradient). With ``check_errors=True`` a failure raises :class:`LinAlgError` as
    :func:`cholesky` does.

    Parameters
    ----------
    A : Tensor
        Symmetric (Hermitian) positive-definite matrices ``(*, n, n)``.
    upper : bool
        Return the upper factor ``L^H``.
    check_errors : bool
        Raise on a failed factorization.

    Returns
    -------
    (Tensor, Tensor)
        Namedtuple ``(L, info)``.

    Examples
    --------
    >>> import numbagrad
    >>> r = numbagrad.linalg.cholesky_ex(numbagrad.tensor([[4.0, 2.0], [2.0, 1.0]]))
    >>> r.info.item()
    2
    """
    return _L.cholesky_ex(A, upper=upper, check_errors=check_errors)


@_public(namespace="linalg")
def qr(A, mode="reduced"):
    """QR decomposition ``A = Q R``: a namedtuple ``(Q, R)``.

    ``mode`` is ``'reduced'`` (``Q`` is ``(*, m, k)``, ``k = min(m, n)``), ``'complete'``
    (``Q`` is ``(*, m, m)``) or ``'r'`` (``R`` only; ``Q`` is empty). Differentiable
    except with ``mode='r'`` and with ``mode='complete'`` for ``m > n`` (errors as
    PyTorch's).

    Parameters
    ----------
    A : Tensor
        Matrices ``(*, m, n)``.
    mode : str

    Returns
    -------
    (Tensor, Tensor)

    Examples
    --------
    >>> import numbagrad
    >>> Q, R = numbagrad.linalg.qr(numbagrad.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> print(round(abs(float(R[0, 0])), 4))
    5.0
    """
    return _L.qr(A, mode)


@_public(namespace="linalg")
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices.

    Only the ``UPLO`` triangle of ``A`` is read. Eigenvectors are defined up to sign, so
    only functions invariant to it (``V @ diag(L) @ V.mT``, ``V.abs()``) have a
    meaningful gradient, and that gradient is inf/nan at repeated eigenvalues (as in
    PyTorch); :func:`eigvalsh` is differentiable everywhere.

    Parameters
    ----------
    A : Tensor
        Symmetric matrices ``(*, n, n)``.
    UPLO : {'L', 'U'}

    Returns
    -------
    (Tensor, Tensor)
        Namedtuple ``(eigenvalues, eigenvectors)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.eigh(numbagrad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    return _L.eigh(A, UPLO)


@_public(namespace="linalg")
def eig(A):
    """Eigenvalues and eigenvectors of general square matrices ``(*, n, n)``: a namedtuple
    ``(eigenvalues, eigenvectors)`` with ``A V = V diag(L)``, both complex (also for a real
    ``A``, as PyTorch's), each eigenvector of norm 1 (LAPACK's ``geev``).

    Each eigenvector is unique only up to a phase ``e^{i phi}``: a loss must not depend
    on it (the backward checks, as PyTorch's), and gradients are inf/nan at repeated
    eigenvalues. A real ``A`` gets the real part of its gradient.

    Parameters
    ----------
    A : Tensor
        Square matrices, float32/float64 or complex64/complex128, without inf or NaN.

    Returns
    -------
    (Tensor, Tensor)
        Namedtuple ``(eigenvalues, eigenvectors)``, complex.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.eig(numbagrad.tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues.tolist()
    [(2+0j), (3+0j)]
    """
    return _L.eig(A)


@_public(namespace="linalg")
def eigvals(A):
    """Eigenvalues (complex) of general square matrices; see :func:`eig`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.eigvals(numbagrad.tensor([[0.0, 1.0], [-1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    return _L.eigvals(A)


@_public(namespace="linalg")
def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices; see :func:`eigh`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.eigvalsh(numbagrad.tensor([[0.0, 1.0], [1.0, 0.0]])).tolist()
    [-1.0, 1.0]
    """
    return _L.eigh(A, UPLO)[0]


@_public(namespace="linalg")
def svd(A, full_matrices=True):
    """Singular value decomposition ``A = U diag(S) Vh``: a namedtuple ``(U, S, Vh)``.

    Singular values are descending. Singular vectors are defined up to sign: only
    functions invariant to it have a meaningful gradient, and that gradient is inf/nan at
    repeated singular values, as in PyTorch (:func:`svdvals` is fine everywhere). With
    ``full_matrices=True`` the extra columns of ``U`` (rows of ``Vh``) get no gradient.

    Parameters
    ----------
    A : Tensor
        Matrices ``(*, m, n)``.
    full_matrices : bool
        Full ``(*, m, m)`` / ``(*, n, n)`` factors, or reduced ones with ``k = min(m, n)``.

    Returns
    -------
    (Tensor, Tensor, Tensor)

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.svd(numbagrad.tensor([[0.0, 2.0], [1.0, 0.0]])).S.tolist()
    [2.0, 1.0]
    """
    return _L.svd(A, full_matrices)


@_public(namespace="linalg")
def svdvals(A):
    """Singular values (descending) of matrices ``(*, m, n)``; gradient ``U diag(g) Vh``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.svdvals(numbagrad.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    return _L.svdvals(A)


@_public(namespace="linalg")
def cond(A, p=None):
    """Condition number of matrices ``(*, m, n)`` in the norm ``p``: the ratio of the
    largest to the smallest singular value for ``p`` None or 2 (their inverse ratio for
    -2), else ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` (square invertible ``A``;
    ``p`` one of ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, 1, -1). Differentiable.

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> round(numbagrad.linalg.cond(A).item(), 4)
    14.933
    >>> numbagrad.linalg.cond(A, 1).item()
    21.0
    """
    _L.check_float(A, "linalg.cond")
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return small / big if p == -2 else big / small
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.cond(ord={p}): A must be batches of square matrices, but "
            f"they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if (isinstance(p, str) and p not in ("fro", "nuc")) or (
        not isinstance(p, str) and p not in (1, -1, float("inf"), float("-inf"))
    ):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


@_public(namespace="linalg")
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse, dropping singular values at most
    ``max(atol, rtol * s_max)``.

    ``rtol`` defaults to ``eps * max(m, n)`` when neither tolerance is given (0 when only
    ``atol`` is). ``hermitian=True`` uses the eigendecomposition of a symmetric ``A``.
    The gradient is PyTorch's ``pinv_backward`` (valid where the rank is locally constant).

    Parameters
    ----------
    A : Tensor
        Matrices ``(*, m, n)``.
    atol, rtol : float, optional
        Absolute and relative tolerances (Python floats).
    hermitian : bool

    Returns
    -------
    Tensor
        Shape ``(*, n, m)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.pinv(numbagrad.tensor([[2.0, 0.0]])).tolist()
    [[0.5], [0.0]]
    """
    return _L.pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


@_public(namespace="linalg")
def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X = B``: a namedtuple
    ``(solution, residuals, rank, singular_values)``.

    The solution is ``pinv(A) @ B`` (the minimum-norm solution, as LAPACK's ``gelsy``
    and ``gelsd`` give), differentiable in ``A`` and ``B`` through :func:`pinv` (which is
    PyTorch's ``lstsq`` gradient). As in PyTorch on CPU: ``rank`` is computed unless
    ``driver='gels'``; ``residuals`` (squared residual norms per column) only for
    ``m > n``, full-rank ``A`` and a driver other than ``'gelsy'``;
    ``singular_values`` only for ``'gelsd'`` and ``'gelss'``; the others are empty.

    Parameters
    ----------
    A : Tensor
        Matrices ``(*, m, n)``.
    B : Tensor
        Right-hand sides ``(*, m, k)`` (or ``(*, m)``).
    rcond : float, optional
        Relative cutoff for small singular values (default ``eps * max(m, n)``).
    driver : {'gelsy', 'gels', 'gelsd', 'gelss'}, optional
        Which fields are filled, as in PyTorch (default ``'gelsy'``).

    Returns
    -------
    (Tensor, Tensor, Tensor, Tensor)

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> B = numbagrad.tensor([[1.0], [2.0], [3.0]])
    >>> r = numbagrad.linalg.lstsq(A, B, driver='gelsd')
    >>> r.solution.tolist(), r.residuals.tolist(), int(r.rank)
    ([[1.0], [2.0]], [9.0], 2)
    """
    _L.check_matrix(A, "linalg.lstsq")
    _L.check_float(B, "linalg.lstsq", "B")
    if A.dtype is not B.dtype:
        raise RuntimeError(
            f"torch.linalg.lstsq: Expected input and other to have the same "
            f"dtype, but got input's dtype {A.dtype} and other's dtype "
            f"{B.dtype}"
        )
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"parameter `driver` should be one of (gels, gelsy, gelsd, gelss) but got {driver}"
        )
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if Bm.shape[-2] != m:
        raise RuntimeError(
            f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
            f" ({m} != {Bm.shape[-2]})"
        )
    eps = float(np.finfo(_np_dtype(A)).eps)
    rtol = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    X = F.matmul(_L.pinv(A, rtol=rtol), Bm)

    with _no_grad():
        s = _L.svdvals(A)
        smax = s[..., :1] if min(m, n) else s
        rank = (s > rtol * smax).sum(-1) if min(m, n) else s.sum(-1).long()
    empty = _tensor([], dtype=D.as_dtype(A.dtype).to_real())  # (real also for complex A)
    rank_out = _tensor([], dtype=rank.dtype) if driver == "gels" else rank
    sv = s if driver in ("gelsd", "gelss") else empty
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        r = F.matmul(A, X) - Bm
        if r.dtype.is_complex:  # |r|^2, real as PyTorch's residuals
            r = F.view_as_real(r)
            res = (r * r).sum((-3, -1))
        else:
            res = (r * r).sum(-2)
        if vector:
            res = res.squeeze(-1)
    else:
        res = empty
    return _L.LstsqResult(X.squeeze(-1) if vector else X, res, rank_out, sv)


def _np_dtype(A):
    return D.as_dtype(A.dtype).np


def _no_grad():
    return _no_grad_mode()


@_public(namespace="linalg")
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Number of singular values above ``max(atol, rtol * s_max)`` (int64, not
    differentiable); tolerances default as in :func:`pinv`.

    Examples
    --------
    >>> import numbagrad
    >>> int(numbagrad.linalg.matrix_rank(numbagrad.tensor([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    _L.check_matrix(A, "linalg.matrix_rank")
    m, n = A.shape[-2], A.shape[-1]
    if rtol is None:
        eps = float(np.finfo(_np_dtype(A)).eps)
        rtol = eps * max(m, n) if atol is None or atol <= 0 else 0.0
    with _no_grad():
        s = _L.eigh(A)[0].abs() if hermitian else _L.svdvals(A)
        if not min(m, n):
            return s.sum(-1).long()
        smax = s.amax(-1, keepdim=True)
        tol = F.clamp_min(smax * rtol, float(atol or 0.0))
        return (s > tol).sum(-1)


@_public(namespace="linalg")
def tensorinv(A, ind=2):
    """The inverse of ``A`` for :func:`numbagrad.tensordot`: ``X``, of shape
    ``A.shape[ind:] + A.shape[:ind]``, with ``tensordot(X, A, ind)`` the identity.

    ``A`` is read as the square matrix of shape ``(prod(A.shape[:ind]),
    prod(A.shape[ind:]))``; the two products must be equal. Differentiable as :func:`inv`.

    Parameters
    ----------
    A : Tensor
        The tensor to invert.
    ind : int, default 2
        How many leading dimensions form the rows (a strictly positive integer).

    Returns
    -------
    Tensor
        Shape ``A.shape[ind:] + A.shape[:ind]``.

    Raises
    ------
    RuntimeError
        For ``ind < 1`` or unequal products.
    LinAlgError
        For a singular ``A``.

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.eye(6).reshape(6, 2, 3) * 2
    >>> X = numbagrad.linalg.tensorinv(A, ind=1)
    >>> X.shape
    numbagrad.Size([2, 3, 6])
    >>> I = numbagrad.tensordot(X, A, 1).reshape(6, 6)
    >>> bool(numbagrad.allclose(I, numbagrad.eye(6)))
    True
    """
    if not isinstance(ind, int) or isinstance(ind, bool) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.ndim:  # (PyTorch fails on an invalid slice of the shape)
        raise RuntimeError(
            f"linalg.tensorinv: 'ind' ({ind}) is larger than the number of dimensions ({A.ndim})"
        )
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    n_rows, n_cols = int(np.prod(rows)), int(np.prod(cols))
    if n_rows != n_cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {n_cols} != {n_rows}"
        )
    return inv(A.reshape(n_rows, n_cols)).reshape(cols + rows)


@_public(namespace="linalg")
def tensorsolve(A, B, dims=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``: :func:`solve` of ``A`` read as a
    square matrix, for tensors.

    ``X`` has shape ``A.shape[B.ndim:]``, whose product must equal ``B.numel()``. ``dims``
    names dimensions of ``A`` to move to its end first. Differentiable as :func:`solve`.

    Parameters
    ----------
    A : Tensor
        The coefficients, of shape ``B.shape + X.shape`` (after moving ``dims``).
    B : Tensor
        The right-hand side.
    dims : tuple of int, optional
        Dimensions of ``A`` moved to the end before solving.

    Returns
    -------
    Tensor
        Shape ``A.shape[B.ndim:]``.

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.eye(6).reshape(2, 3, 6) * 2
    >>> numbagrad.linalg.tensorsolve(A, numbagrad.ones(2, 3)).tolist()
    [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    """
    if dims is not None:
        dims = tuple(dims)
        A = F.movedim(A, dims, tuple(range(A.ndim - len(dims), A.ndim)))
    shape = tuple(A.shape[B.ndim :])
    n = int(np.prod(shape))
    if n != B.numel():
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {n} != {B.numel()}"
        )
    return solve(A.reshape(n, n), B.reshape(n)).reshape(shape)


@_public(namespace="linalg")
def vander(x, *, N=None):
    """The Vandermonde matrix of ``x``: ``x**0, x**1, ..., x**(N-1)`` along a new last
    dimension (increasing powers, as PyTorch's, unlike ``numpy.vander``).

    Built by a cumulative product, so the gradient at ``x = 0`` is finite.

    Parameters
    ----------
    x : Tensor
        ``(*, n)`` (a 0-d tensor counts as ``(1,)``), of an integer, floating or complex
        dtype.
    N : int, optional
        The number of columns (default ``n``); at least 2.

    Returns
    -------
    Tensor
        Shape ``(*, n, N)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.vander(numbagrad.tensor([1, 2, 3])).tolist()
    [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    if x.dtype == D.bool:
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got Bool"
        )
    if x.ndim == 0:
        x = x.reshape(1)
    if N is None:
        N = x.shape[-1]
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    col = x.unsqueeze(-1)
    powers = F.cat([_ones_like(col), col.expand(*x.shape, N - 1)], -1)
    return F.cumprod(powers, -1)


@_public(namespace="linalg")
def matrix_exp(A):
    """Matrix exponential of square matrices ``(*, n, n)`` (scaling and squaring with a
    degree-13 Pade approximant); its gradient is the Frechet derivative, computed with
    the block-matrix trick ``exp([[A^T, g], [0, A^T]])``.

    Examples
    --------
    >>> import numbagrad
    >>> E = numbagrad.linalg.matrix_exp(numbagrad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    >>> E.tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return _L.matrix_exp(A)


@_public(namespace="linalg")
def matrix_power(A, n):
    """``A`` to the integer power ``n`` (``inv(A)`` powers for ``n < 0``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.matrix_power(numbagrad.eye(2) * 2.0, -1).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    return _matrix_power(A, n)


@_public(namespace="linalg")
def cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along ``dim`` (broadcast).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.cross(numbagrad.tensor([0.0, 1.0, 0.0]),
    ...                        numbagrad.tensor([0.0, 0.0, 1.0])).tolist()
    [1.0, 0.0, 0.0]
    """
    return _linalg_cross(input, other, dim=dim)


@_public(namespace="linalg")
def vecdot(x, y, *, dim=-1):
    """Dot product of vectors along ``dim`` (broadcast).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.vecdot(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([3.0, 4.0])).item()
    11.0
    """
    if x.dtype is not y.dtype:  # as PyTorch: no promotion
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found "
            f"x of type {_torch_name(x.dtype)} and y of type "
            f"{_torch_name(y.dtype)} instead"
        )
    if x.ndim == 1 and y.ndim == 1 and x.shape[0] != y.shape[0]:  # PyTorch: a dot, no broadcast
        n1, n2 = x.shape[0], y.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to "
            f"have the same number of elements, but got {n1} and {n2} elements "
            "respectively"
        )
    return (x * y).sum(dim)


@_public(namespace="linalg")
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of a batch of matrices (a view), over the last two dims by default.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.diagonal(numbagrad.eye(2)).tolist()
    [1.0, 1.0]
    """
    return F.diagonal(A, offset, dim1, dim2)


@_public(namespace="linalg")
def matmul(input, other):
    """Matrix product, :func:`numbagrad.matmul`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.matmul(numbagrad.eye(2), numbagrad.ones(2)).tolist()
    [1.0, 1.0]
    """
    return F.matmul(input, other)


@_public(namespace="linalg")
def multi_dot(tensors):
    """Product of a chain of matrices, multiplied in the cheapest order; the first and
    last may be 1-D (a row and a column vector).

    Examples
    --------
    >>> import numbagrad
    >>> a = numbagrad.ones(2, 3)
    >>> numbagrad.linalg.multi_dot([a, a.mT, numbagrad.ones(2)]).tolist()
    [6.0, 6.0]
    """
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec = ts[0].ndim == 1
    last_vec = ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i in range(len(ts) - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes "
                f"{list(ts[i].shape)} and {list(ts[i + 1].shape)} cannot be "
                "multiplied"
            )
    out = _chain(ts, _chain_order([t.shape[0] for t in ts] + [ts[-1].shape[1]]), 0, len(ts) - 1)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def _chain_order(p):
    """The optimal split points of a matrix chain with dims ``p`` (dynamic programming)."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k
    return split


def _chain(ts, split, i, j):
    if i == j:
        return ts[i]
    k = split[i][j]
    return F.matmul(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


@_public(namespace="linalg")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """Vector ``ord``-norm over ``dim`` (all elements when None): any real ``ord``,
    ``inf``, ``-inf`` and 0 (the count of nonzeros). The gradient of the 2-norm at 0 is 0,
    as in PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.linalg.vector_norm(numbagrad.tensor([3.0, -4.0])).item()
    5.0
    >>> numbagrad.linalg.vector_norm(numbagrad.tensor([3.0, -4.0]), ord=1).item()
    7.0
    """
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, list):
        dim = tuple(dim)
    return F.norm(x, ord, dim, keepdim)


def _max_or_zero(v):
    """The max over the last dim; over no elements 0, with no gradient (as PyTorch's
    matrix norms, whose min over no elements raises instead)."""
    return v.detach().sum(-1) if v.shape[-1] == 0 else v.amax(-1)


def _matrix_norm_last(A, ord):
    if ord == "fro":
        return F.norm(A, 2, (-2, -1))
    if ord == "nuc":
        return _L.svdvals(A).sum(-1)
    if ord in (2, -2):
        s = _L.svdvals(A)
        return _max_or_zero(s) if ord == 2 else s.amin(-1)
    if ord in (1, -1, float("inf"), float("-inf")):
        # as PyTorch: the 1-norms of the columns (rows for inf), then their max or min
        sums = F.norm(A, 1, -2 if abs(ord) == 1 else -1)
        return _max_or_zero(sums) if ord > 0 else sums.amin(-1)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


@_public(namespace="linalg")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norm over the two dims ``dim``: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, 1,
    -1 (max/min absolute row or column sums), 2 and -2 (largest / smallest singular
    value).

    Examples
    --------
    >>> import numbagrad
    >>> A = numbagrad.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> numbagrad.linalg.matrix_norm(A, ord=1).item()
    6.0
    >>> numbagrad.linalg.matrix_norm(A, ord=float('inf')).item()
    7.0
    """
    if isinstance(A, Tensor) and A.dtype.is_complex and ord not in ("nuc", 2, -2):
        # the norms of the moduli; 'nuc', 2 and -2 take the complex SVD's singular values
        return matrix_norm(F.abs(A), ord, dim, keepdim, dtype=None if dtype is None else
                           D.as_dtype(dtype).to_real())  # fmt: skip
    _L.check_float(A, "linalg.matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if dtype is not None:
        A = A.to(dtype)
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if not isinstance(ord, str) and ord not in (1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (d % A.ndim for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    out = _matrix_norm_last(F.movedim(A, (d0, d1), (-2, -1)), ord)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


@_public(namespace="linalg")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or matrix norm, as ``torch.linalg.norm`` decides: with ``dim`` an int (or
    a 1-tuple), or ``dim=None`` and ``ord=None``, a vector norm (of the flattened input);
    with ``dim`` a 2-tuple, or ``dim=None`` and a 2-D input with ``ord`` given, a matrix
    norm (``ord=None`` means ``'fro'`` there).

    Examples
    --------
    >>> import numbagrad
    >>> print(round(numbagrad.linalg.norm(numbagrad.ones(2, 2)).item(), 4))
    2.0
    >>> numbagrad.linalg.norm(numbagrad.eye(2) * 3.0, ord=2).item()
    3.0
    """
    if not (isinstance(A, Tensor) and A.dtype.is_complex):  # (complex: vector_norm and
        _L.check_float(A, "linalg.norm")  # matrix_norm decide)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) == 2:
            for d in dim:  # PyTorch's IndexError for a dim out of range
                _wrap_dim(d, A.ndim)
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
        )
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.ndim == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported.")
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(
        f"linalg.norm: If dim is not specified but ord is, the input must be "
        f"1D or 2D. Got {A.ndim}D."
    )


# the names marked ``@public(namespace="linalg")`` above (NOTE [Public ops])
__all__ = _namespace_all("linalg", globals())
