"""Ready-made parametrizations (PyTorch's ``torch.nn.utils.parametrizations``):
``weight_norm``, ``spectral_norm`` and ``orthogonal``, registered with
:func:`~numbagrad.nn.utils.parametrize.register_parametrization` under PyTorch's names
(``parametrizations.weight.original0``/``original1``; ``parametrizations.weight.0._u``,
``_v``), so their state dicts move between the two libraries."""

from __future__ import annotations

from numbagrad import _dtype as _D
from numbagrad import linalg
from numbagrad import ops as _ops
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import arange as _arange
from numbagrad._creation import eye as _eye
from numbagrad._creation import randn
from numbagrad._creation import zeros as _zeros
from numbagrad._tensor import Tensor as _Tensor
from numbagrad.nn.modules.module import Module
from numbagrad.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    """PyTorch's ``norm_except_dim(v, 2, dim)``: the 2-norm over every dim but ``dim``
    (over all of them for ``dim = -1``), shaped to broadcast against ``v``."""
    if dim == -1:
        return _ops.sqrt((v * v).sum())
    d = dim % v.ndim
    dims = tuple(i for i in range(v.ndim) if i != d)
    return _ops.sqrt((v * v).sum(dims, keepdim=True))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norms over every dim but
    ``dim``; ``dim=None``: the whole tensor), ``g`` and ``v`` stored as ``original0`` and
    ``original1``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.utils.parametrizations import weight_norm
    >>> m = weight_norm(numbagrad.nn.Linear(4, 3))
    >>> [k for k in m.state_dict()]
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def _normalize(x, eps):
    return x / _ops.clamp_min(_ops.sqrt((x * x).sum()), eps)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            self.register_buffer("_u", _normalize(randn(h, dtype=weight.dtype), eps))
            self.register_buffer("_v", _normalize(randn(w, dtype=weight.dtype), eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat, n_power_iterations):
        with no_grad():
            mat = mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(_ops.mv(mat, self._v), self.eps))
                self._v.copy_(_normalize(_ops.mv(mat.t(), self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _ops.dot(u, _ops.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (one step per training-mode access; the vectors are the buffers ``_u`` and ``_v``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.utils.parametrizations import spectral_norm
    >>> m = spectral_norm(numbagrad.nn.Linear(5, 4))
    >>> sorted(m.parametrizations.weight[0].state_dict())
    ['_u', '_v']
    """
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


def _householder_product(A, tau):
    """``H_1 ... H_k`` applied to the first ``k`` columns of the identity, ``H_i = I - tau_i
    v_i v_i^T`` with ``v_i`` column ``i`` of ``A`` below the diagonal and 1 on it (LAPACK's
    ``orgqr``), in tensor ops."""
    n, k = A.shape[-2], A.shape[-1]
    rows = _ops.unsqueeze(_arange(n), -1)  # (n, 1)
    q = _eye(n, k, dtype=A.dtype).expand(*A.shape[:-2], n, k)
    for i in range(k - 1, -1, -1):
        col = A[..., :, i : i + 1]
        v = _ops.where(rows > i, col, (rows == i).to(A.dtype))
        q = q - tau[..., i : i + 1].unsqueeze(-1) * v * (v * q).sum(-2, keepdim=True)
    return q


def _make_orthogonal(A):
    """The Q of A's QR decomposition with R's diagonal made positive."""

    q, r = linalg.qr(A)
    return q * _ops.sign(_ops.diagonal(r, 0, -2, -1)).unsqueeze(-2)


def _is_orthogonal(Q, eps=None):
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * _finfo_eps(Q.dtype) if eps is None else eps
    diff = _ops.matmul(Q.transpose(-2, -1), Q) - _eye(k, k, dtype=Q.dtype)
    return bool((_ops.abs(diff) <= eps).all())


def _finfo_eps(dtype):
    import numpy as np

    return float(np.finfo(np.dtype(str(dtype).replace("numbagrad.", ""))).eps)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                pad = _zeros(*X.shape[:-2], n, n - k, dtype=X.dtype)
                X = _ops.cat([X, pad], -1)
            A = X - X.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                eye = _eye(n, n, dtype=A.dtype)
                Q = linalg.solve(eye - A * 0.5, eye + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _householder_product(A, tau)
            Q = Q * _ops.diagonal(X, 0, -2, -1).to(_D.int32).to(X.dtype).unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            Q = _ops.matmul(self.base, Q)
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        if tuple(Q.shape) != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {tuple(Q.shape)}."
            )
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.transpose(-2, -1)
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in ("cayley", "matrix_exp"):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            raise NotImplementedError(
                "orthogonal: assigning through the householder map without "
                "use_trivialization needs geqrf, which numbagrad does not have"
            )
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
            Q = _make_orthogonal(_ops.cat([Q, N], -1))
        self.base = Q.detach()
        neg_id = _zeros(*Q_init.shape, dtype=Q_init.dtype)
        m = min(Q_init.shape[-2], Q_init.shape[-1])
        return neg_id - _eye(Q_init.shape[-2], Q_init.shape[-1], dtype=Q_init.dtype) * (m > 0)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix or a batch of them) to orthogonal columns or
    rows, as PyTorch's: ``orthogonal_map`` ``'matrix_exp'`` (the default for square
    matrices), ``'cayley'`` or ``'householder'`` (the default otherwise); with
    ``use_trivialization`` the current matrix is kept in the buffer ``base``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.utils.parametrizations import orthogonal
    >>> m = orthogonal(numbagrad.nn.Linear(3, 5))
    >>> w = m.weight
    >>> bool(((w.T @ w - numbagrad.eye(3)).abs() < 1e-5).all())
    True
    """
    weight = getattr(module, name, None)
    if weight is None or not isinstance(weight, _Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    if orthogonal_map == "householder" and not use_trivialization:
        raise NotImplementedError(
            "orthogonal: the householder map with use_trivialization=False starts from the "
            "reflectors of geqrf, which numbagrad does not have; use the default "
            "use_trivialization=True"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
