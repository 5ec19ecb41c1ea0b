"""Op database entries for numbagrad.linalg and the top-level linear-algebra functions (joined
into ``_opdb.op_db``).

Samples stay well conditioned: square matrices are a random matrix plus a multiple of the
identity, symmetric positive-definite ones ``X X^T + n I``, and matrices for ``eigh`` /
``svd`` are built from chosen, well-separated eigenvalues / singular values. Eigenvectors and
singular vectors are defined up to sign only, so those entries return sign-invariant
functions of them (``abs``), as PyTorch's OpInfos do; ``eigh`` and ``cholesky`` read one
triangle of a symmetric input, so their entries pass ``A + A^T`` (``gradcheck`` then
perturbs the whole matrix consistently).
"""

import numpy as np
from _opdb import OpInfo, SampleInput, real

op_db = []


def _s(*args, name="", **kwargs):
    return SampleInput(*args, name=name, **kwargs)


def _square(rng, shape):
    """A random matrix (batch) plus ``n I``: far from singular."""
    n = shape[-1]
    return real(rng, shape) + n * np.eye(n)


def _spd_half(rng, shape):
    """Half of an SPD matrix (batch): ``A + A^T`` is ``X X^T + n I``."""
    n = shape[-1]
    x = real(rng, shape)
    return 0.5 * (x @ np.swapaxes(x, -1, -2) + n * np.eye(n))


def _orth(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def _with_values(rng, shape, symmetric=False):
    """Matrices with well-separated eigenvalues (symmetric) or singular values."""
    *batch, m, n = shape
    k = min(m, n)
    out = np.empty(shape)
    for idx in np.ndindex(*batch):
        vals = np.arange(k, 0, -1) * 0.8 + rng.uniform(0.0, 0.2, k)
        if symmetric:
            vals = vals - 1.5
            q = _orth(rng, n)
            out[idx] = 0.5 * (q * vals) @ q.T  # the entry doubles it with A + A^T
        else:
            u = _orth(rng, m)[:, :k]
            v = _orth(rng, n)[:, :k]
            out[idx] = (u * vals) @ v.T
    return out


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _sym(m, a):
    return a + a.mT


# ---- determinants and inverses -------------------------------------------------------------
def _det_samples(rng):
    return [
        _s(_square(rng, (3, 3)), name="3x3"),
        _s(_square(rng, (2, 3, 3)), name="batched"),
        _s(_square(rng, (1, 1)), name="1x1"),
        _s(real(rng, (2, 2)), name="2x2"),
    ]


def _ref_slogdet(a):
    return np.linalg.slogdet(a)


def _spd_samples(rng):
    return [
        _s(2 * _spd_half(rng, (3, 3)), name="3x3"),
        _s(2 * _spd_half(rng, (2, 2, 2)), name="batched"),
    ]


def _ref_solve(a, b, left=True):
    if not left:
        return _mT(_ref_solve(_mT(a), _mT(b)))
    vec = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vec:
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _solve_samples(rng):
    return [
        _s(_square(rng, (3, 3)), real(rng, (3,)), name="vector"),
        _s(_square(rng, (3, 3)), real(rng, (3, 2)), name="matrix"),
        _s(_square(rng, (2, 3, 3)), real(rng, (2, 3)), name="batched_vector"),
        _s(_square(rng, (2, 3, 3)), real(rng, (3, 2)), name="broadcast_b"),
        _s(_square(rng, (2, 2)), real(rng, (3, 2, 1)), name="broadcast_a"),
        _s(_square(rng, (2, 2)), real(rng, (3, 2)), left=False, name="right"),
    ]


def _ref_cholesky(a, upper=False):
    L = np.linalg.cholesky(a + _mT(a))
    return _mT(L) if upper else L


def _chol_samples(rng):
    return [
        _s(_spd_half(rng, (3, 3)), name="3x3"),
        _s(_spd_half(rng, (2, 3, 3)), name="batched"),
        _s(_spd_half(rng, (2, 2)), upper=True, name="upper"),
    ]


def _chol_solve_ref(b, L, upper=False):
    a = _mT(L) @ L if upper else L @ _mT(L)
    return np.linalg.solve(a, b)


def _tri_factor(rng, shape, lower=True):
    n = shape[-1]
    t = real(rng, shape, 0.2, 1.0)
    t = np.tril(t) if lower else np.triu(t)
    return t + n * np.eye(n) * 0.5


# ---- eigh / svd ------------------------------------------------------------------------------
def _eigh_ref(a, UPLO="L"):
    w, v = np.linalg.eigh(a + _mT(a), UPLO=UPLO)
    return w, np.abs(v)


def _eigh_op(m, a, UPLO="L"):
    w, v = m.linalg.eigh(_sym(m, a), UPLO=UPLO)
    return w, v.abs()


def _eigh_samples(rng):
    return [
        _s(_with_values(rng, (3, 3), True), name="3x3"),
        _s(_with_values(rng, (2, 3, 3), True), name="batched"),
        _s(_with_values(rng, (2, 2), True), UPLO="U", name="upper"),
    ]


def _svd_ref(a, full_matrices=True):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return np.abs(u[..., :k]), s, np.abs(vh[..., :k, :])


def _svd_op(m, a, full_matrices=True):
    u, s, vh = m.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return u[..., :k].abs(), s, vh[..., :k, :].abs()


def _svd_samples(rng):
    return [
        _s(_with_values(rng, (3, 3)), full_matrices=False, name="3x3"),
        _s(_with_values(rng, (4, 2)), full_matrices=False, name="tall"),
        _s(_with_values(rng, (2, 4)), full_matrices=False, name="wide"),
        _s(_with_values(rng, (2, 3, 2)), full_matrices=False, name="batched"),
        _s(_with_values(rng, (3, 2)), name="full_tall"),
        _s(_with_values(rng, (2, 3)), name="full_wide"),
    ]


def _torch_svd_ref(a, some=True, compute_uv=True):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    if not compute_uv:
        m, n = a.shape[-2:]
        return np.zeros((*a.shape[:-2], m, m)), s, np.zeros((*a.shape[:-2], n, n))
    return np.abs(u), s, np.abs(_mT(vh))


def _torch_svd_op(m, a, some=True, compute_uv=True):
    u, s, v = m.svd(a, some=some, compute_uv=compute_uv)
    if not compute_uv:
        return u, s, v
    k = s.shape[-1]
    return u[..., :k].abs(), s, v[..., :k].abs()


def _torch_svd_method(m, a, **kw):
    u, s, v = a.svd(**kw)
    if not kw.get("compute_uv", True):
        return u, s, v
    k = s.shape[-1]
    return u[..., :k].abs(), s, v[..., :k].abs()


def _svdvals_samples(rng):
    return [
        _s(_with_values(rng, (3, 3)), name="3x3"),
        _s(_with_values(rng, (4, 2)), name="tall"),
        _s(_with_values(rng, (2, 2, 3)), name="batched"),
    ]


def _qr_ref(a, mode="reduced"):
    return np.linalg.qr(a, mode=mode)


def _qr_samples(rng):
    return [
        _s(_square(rng, (3, 3)), name="3x3"),
        _s(real(rng, (4, 2)), name="tall"),
        _s(real(rng, (2, 4)), name="wide"),
        _s(real(rng, (2, 3, 2)), name="batched"),
        _s(real(rng, (2, 3)), mode="complete", name="complete_wide"),
    ]


# ---- matrix functions ------------------------------------------------------------------------
def _expm_ref(a):
    """Taylor series after scaling to norm < 1/2, then squaring (independent of the
    implementation's Pade approximant)."""
    out = np.empty_like(a)
    for idx in np.ndindex(*a.shape[:-2]):
        x = a[idx]
        s = max(0, int(np.ceil(np.log2(max(np.abs(x).sum(0).max(), 1e-300) / 0.5))))
        x = x / 2.0**s
        term = np.eye(x.shape[0])
        total = term.copy()
        for k in range(1, 30):
            term = term @ x / k
            total = total + term
        for _ in range(s):
            total = total @ total
        out[idx] = total
    return out


def _expm_samples(rng):
    return [
        _s(real(rng, (3, 3)), name="3x3"),
        _s(real(rng, (2, 2, 2)), name="batched"),
        _s(3 * real(rng, (2, 2)), name="scaled"),
    ]


def _pinv_samples(rng):
    return [
        _s(_with_values(rng, (3, 2)), name="tall"),
        _s(_with_values(rng, (2, 3)), name="wide"),
        _s(_with_values(rng, (2, 2, 2)), name="batched"),
        _s(_with_values(rng, (3, 3), True), hermitian=True, name="hermitian"),
    ]


def _pinv_ref(a, hermitian=False, rtol=None, atol=None):
    return np.linalg.pinv(a + _mT(a) if hermitian else a, hermitian=hermitian)


def _lstsq_samples(rng):
    return [
        _s(_with_values(rng, (4, 2)), real(rng, (4, 2)), name="tall"),
        _s(_with_values(rng, (2, 4, 3)), real(rng, (2, 4, 1)), name="batched"),
        _s(_with_values(rng, (3, 3)), real(rng, (3, 2)), name="square"),
    ]


def _lstsq_ref(a, b):
    return np.linalg.pinv(a) @ b


def _matrix_power_samples(rng):
    return [
        _s(_square(rng, (2, 2)) * 0.5, 3, name="3"),
        _s(_square(rng, (2, 3, 3)) * 0.4, 2, name="batched"),
        _s(_square(rng, (2, 2)), -2, name="-2"),
    ]


def _ref_matrix_power(a, n):
    if n < 0:
        a = np.linalg.inv(a)
    return (
        np.linalg.matrix_power(a, abs(n))
        if a.ndim == 2
        else np.stack([np.linalg.matrix_power(x, abs(n)) for x in a])
    )


# ---- norms -----------------------------------------------------------------------------------
_MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")]


def _matrix_norm_samples(rng):
    out = [_s(_with_values(rng, (3, 2)), ord=o, name=f"ord={o}") for o in _MATRIX_ORDS]
    out.append(_s(_with_values(rng, (2, 3, 3)), ord="fro", name="batched"))
    out.append(
        _s(real(rng, (3, 2, 4), 0.3, 1.0), ord=1, dim=(0, 2), keepdim=True, name="dims_keepdim")
    )
    return out


def _ref_matrix_norm(a, ord="fro", dim=(-2, -1), keepdim=False):
    return np.linalg.norm(a, ord=ord, axis=dim, keepdims=keepdim)


def _vector_norm_samples(rng):
    return [
        _s(real(rng, (5,), 0.2, 1.0), name="2"),
        _s(real(rng, (3, 4), 0.2, 1.0), ord=1, dim=1, name="1_dim"),
        _s(real(rng, (2, 3, 4), 0.2, 1.0), ord=3, dim=(0, 2), keepdim=True, name="3_dims"),
        _s(real(rng, (4,)), ord=float("inf"), name="inf"),
    ]


def _ref_vector_norm(x, ord=2, dim=None, keepdim=False):
    if dim is None:
        x = x.reshape(-1)
        dim = 0
        if keepdim:
            raise NotImplementedError
    a = np.abs(x)
    if ord == float("inf"):
        return a.max(axis=dim, keepdims=keepdim)
    return (a**ord).sum(axis=dim, keepdims=keepdim) ** (1.0 / ord)


def _norm_samples(rng):
    return [
        _s(real(rng, (3, 4)), name="flat"),
        _s(real(rng, (4,), 0.2, 1.0), 1, name="vector_ord"),
        _s(_with_values(rng, (3, 3)), "nuc", name="matrix_nuc"),
        _s(real(rng, (2, 3, 4)), dim=(1, 2), name="dims_fro"),
        _s(real(rng, (2, 3), 0.2, 1.0), 3, dim=1, name="dim_int"),
    ]


def _ref_norm(a, ord=None, dim=None, keepdim=False):
    if dim is None and ord is None:
        return np.linalg.norm(a.reshape(-1))
    if dim is None:
        return np.linalg.norm(a, ord)
    if isinstance(dim, int):
        return _ref_vector_norm(a, 2 if ord is None else ord, dim, keepdim)
    return np.linalg.norm(a, ord, axis=dim, keepdims=keepdim)


# ---- products and shapes -----------------------------------------------------------------
def _cross_ref(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


def _cdist_ref(x1, x2, p=2.0):
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == float("inf"):
        return d.max(-1)
    return (d**p).sum(-1) ** (1.0 / p)


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros((*x.shape[:-1], n, n))
    idx = np.arange(x.shape[-1])
    r, c = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., r, c] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _diag_ref(x, diagonal=0):
    if x.ndim == 1:
        return np.diag(x, diagonal)
    return np.diagonal(x, diagonal).copy()


def _tensordot_ref(a, b, dims=2):
    return np.tensordot(a, b, axes=dims)


def _trace_ref(x):
    return np.trace(x)


op_db += [
    OpInfo(
        "linalg.det",
        np.linalg.det,
        _det_samples,
        op=lambda m, a: m.linalg.det(a),
        primitives=("LinalgDet",),
        supports_cuda=True,
    ),
    OpInfo(
        "det",
        np.linalg.det,
        _det_samples,
        method=True,
        primitives=("LinalgDet",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.slogdet",
        _ref_slogdet,
        _det_samples,
        op=lambda m, a: tuple(m.linalg.slogdet(a)),
        primitives=("LinalgSlogdet",),
        supports_cuda=True,
    ),
    OpInfo(
        "slogdet",
        _ref_slogdet,
        _det_samples,
        method=True,
        op=lambda m, a: tuple(m.slogdet(a)),
        primitives=("LinalgSlogdet",),
        supports_cuda=True,
    ),
    OpInfo(
        "logdet",
        lambda a: np.log(np.linalg.det(a)),
        _spd_samples,
        method=True,
        primitives=("LinalgSlogdet", "Eq", "Where"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.inv",
        np.linalg.inv,
        _det_samples,
        op=lambda m, a: m.linalg.inv(a),
        primitives=("LinalgInv",),
        supports_cuda=True,
    ),
    OpInfo(
        "inverse",
        np.linalg.inv,
        _det_samples,
        method=True,
        primitives=("LinalgInv",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.tensorinv",
        lambda a, ind=2: np.linalg.tensorinv(a, ind),
        lambda rng: [
            _s(_square(rng, (4, 4)).reshape(4, 2, 2), ind=1, name="ind1"),
            _s(_square(rng, (4, 4)).reshape(2, 2, 4), name="ind2"),
        ],
        op=lambda m, a, **k: m.linalg.tensorinv(a, **k),
        primitives=("LinalgInv", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.tensorsolve",
        lambda a, b, dims=None: np.linalg.tensorsolve(a, b, dims),
        lambda rng: [
            _s(_square(rng, (2, 2)).reshape(2, 1, 2), real(rng, (2,)), name="small"),
            _s(_square(rng, (4, 4)).reshape(2, 2, 4), real(rng, (2, 2)), name="2x2"),
            _s(
                _square(rng, (4, 4)).reshape(2, 2, 2, 2).transpose(2, 0, 1, 3),
                real(rng, (2, 2)),
                dims=(0,),
                name="dims",
            ),
        ],
        op=lambda m, a, b, **k: m.linalg.tensorsolve(a, b, **k),
        primitives=("LinalgSolve", "Reshape", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.vander",
        lambda x, N=None: (
            np.vander(x, N, increasing=True)
            if x.ndim == 1
            else np.stack([np.vander(r, N, increasing=True) for r in x])
        ),
        lambda rng: [
            _s(real(rng, (4,)), name="square"),
            _s(real(rng, (2, 3)), N=4, name="batched"),
            _s(np.array([0.0, 1.5, -2.0]), N=5, name="zero"),
        ],
        op=lambda m, x, **k: m.linalg.vander(x, **k),
        primitives=("Cat", "Cumprod", "Expand", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.solve",
        _ref_solve,
        _solve_samples,
        op=lambda m, a, b, **k: m.linalg.solve(a, b, **k),
        primitives=("LinalgSolve", "Reshape", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.cholesky",
        _ref_cholesky,
        _chol_samples,
        op=lambda m, a, **k: m.linalg.cholesky(_sym(m, a), **k),
        primitives=("LinalgCholesky", "Add", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "cholesky",
        _ref_cholesky,
        _chol_samples,
        op=lambda m, a, **k: m.cholesky(_sym(m, a), **k),
        variants={"method": lambda m, a, **k: _sym(m, a).cholesky(**k)},
        primitives=("LinalgCholesky", "Add", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "cholesky_solve",
        _chol_solve_ref,
        lambda rng: [
            _s(real(rng, (3, 2)), _tri_factor(rng, (3, 3)), name="lower"),
            _s(
                real(rng, (2, 2, 1)),
                _tri_factor(rng, (2, 2, 2), False),
                upper=True,
                name="upper_batched",
            ),
        ],
        method=True,
        primitives=("LinalgSolve", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.eigh",
        _eigh_ref,
        _eigh_samples,
        op=_eigh_op,
        primitives=("LinalgEigh", "Add", "Abs", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.eigvalsh",
        lambda a, UPLO="L": np.linalg.eigvalsh(a + _mT(a), UPLO=UPLO),
        _eigh_samples,
        op=lambda m, a, **k: m.linalg.eigvalsh(_sym(m, a), **k),
        primitives=("LinalgEigh", "Add", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.svd",
        _svd_ref,
        _svd_samples,
        op=_svd_op,
        primitives=("LinalgSvd", "Abs", "Index"),
        supports_cuda=True,
    ),
    OpInfo(
        "svd",
        _torch_svd_ref,
        lambda rng: [
            _s(_with_values(rng, (3, 3)), name="3x3"),
            _s(_with_values(rng, (2, 4, 2)), name="batched"),
            _s(_with_values(rng, (2, 3)), some=False, name="not_some"),
        ],
        op=_torch_svd_op,
        variants={"method": _torch_svd_method},
        primitives=("LinalgSvd", "Abs", "Index", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.svdvals",
        lambda a: np.linalg.svd(a, compute_uv=False),
        _svdvals_samples,
        op=lambda m, a: m.linalg.svdvals(a),
        primitives=("LinalgSvd",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.qr",
        _qr_ref,
        _qr_samples,
        op=lambda m, a, **k: tuple(m.linalg.qr(a, **k)),
        primitives=("LinalgQr",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.matrix_exp",
        _expm_ref,
        _expm_samples,
        op=lambda m, a: m.linalg.matrix_exp(a),
        tol64=(1e-9, 1e-11),
        primitives=("LinalgMatrixExp",),
        supports_cuda=True,
    ),
    OpInfo(
        "matrix_exp",
        _expm_ref,
        _expm_samples,
        method=True,
        tol64=(1e-9, 1e-11),
        primitives=("LinalgMatrixExp",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.pinv",
        _pinv_ref,
        _pinv_samples,
        op=lambda m, a, **k: m.linalg.pinv(_sym(m, a) if k.get("hermitian") else a, **k),
        primitives=("LinalgPinv", "Add", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "pinverse",
        _pinv_ref,
        lambda rng: [
            _s(_with_values(rng, (3, 2)), name="tall"),
            _s(_with_values(rng, (2, 2, 3)), name="batched"),
        ],
        method=True,
        primitives=("LinalgPinv",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.lstsq",
        _lstsq_ref,
        _lstsq_samples,
        op=lambda m, a, b: m.linalg.lstsq(a, b).solution,
        primitives=("LinalgPinv", "LinalgSvd", "Matmul", "Gt", "Index", "Mul", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.matrix_power",
        _ref_matrix_power,
        _matrix_power_samples,
        op=lambda m, a, n: m.linalg.matrix_power(a, n),
        primitives=("Matmul", "LinalgInv"),
        supports_cuda=True,
    ),
    OpInfo(
        "matrix_power",
        _ref_matrix_power,
        _matrix_power_samples,
        method=True,
        primitives=("Matmul", "LinalgInv"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.matrix_norm",
        _ref_matrix_norm,
        _matrix_norm_samples,
        op=lambda m, a, **k: m.linalg.matrix_norm(a, **k),
        primitives=("Norm2", "NormP", "LinalgSvd", "Sum", "Amax", "Amin", "Permute", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.vector_norm",
        _ref_vector_norm,
        _vector_norm_samples,
        op=lambda m, x, **k: m.linalg.vector_norm(x, **k),
        primitives=("Norm2", "NormP"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.norm",
        _ref_norm,
        _norm_samples,
        op=lambda m, a, *args, **k: m.linalg.norm(a, *args, **k),
        primitives=("Norm2", "NormP", "Sum", "LinalgSvd", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.cross",
        _cross_ref,
        lambda rng: [
            _s(real(rng, (3,)), real(rng, (3,)), name="1d"),
            _s(real(rng, (2, 3)), real(rng, (1, 3)), name="broadcast"),
            _s(real(rng, (3, 2)), real(rng, (3, 2)), dim=0, name="dim0"),
        ],
        op=lambda m, a, b, **k: m.linalg.cross(a, b, **k),
        primitives=("Roll", "Mul", "Sub", "Expand"),
        supports_cuda=True,
    ),
    OpInfo(
        "cross",
        _cross_ref,
        lambda rng: [
            _s(real(rng, (4, 3)), real(rng, (4, 3)), dim=1, name="dim1"),
            _s(real(rng, (3, 2)), real(rng, (3, 2)), dim=0, name="dim0"),
        ],
        method=True,
        primitives=("Roll", "Mul", "Sub"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.multi_dot",
        lambda ts: np.linalg.multi_dot(ts),
        lambda rng: [
            _s([real(rng, (2, 3)), real(rng, (3, 4)), real(rng, (4, 2))], name="3"),
            _s([real(rng, (3,)), real(rng, (3, 2)), real(rng, (2,))], name="vectors"),
        ],
        op=lambda m, ts: m.linalg.multi_dot(ts),
        primitives=("Matmul", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.vecdot",
        lambda x, y, dim=-1: (x * y).sum(dim),
        lambda rng: [
            _s(real(rng, (3, 4)), real(rng, (4,)), name="broadcast"),
            _s(real(rng, (3, 4)), real(rng, (3, 4)), dim=0, name="dim0"),
        ],
        op=lambda m, x, y, **k: m.linalg.vecdot(x, y, **k),
        primitives=("Mul", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.diagonal",
        lambda a, offset=0: np.diagonal(a, offset, -2, -1),
        lambda rng: [
            _s(real(rng, (2, 3, 3)), name="batched"),
            _s(real(rng, (3, 4)), offset=1, name="offset"),
        ],
        op=lambda m, a, **k: m.linalg.diagonal(a, **k),
        primitives=("Diagonal",),
        supports_cuda=True,
    ),
    OpInfo(
        "linalg.solve_triangular",
        lambda a, b, upper, left=True: _ref_solve(
            np.triu(a) if upper else np.tril(a), b, left=left
        ),
        lambda rng: [
            _s(_tri_factor(rng, (3, 3), False), real(rng, (3, 2)), upper=True, name="upper"),
            _s(
                _tri_factor(rng, (2, 3, 3)), real(rng, (2, 3, 1)), upper=False, name="lower_batched"
            ),
            _s(_tri_factor(rng, (2, 2)), real(rng, (3, 2)), upper=False, left=False, name="right"),
        ],
        op=lambda m, a, b, **k: m.linalg.solve_triangular(a, b, **k),
        primitives=("LinalgSolveTriangular", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "diag",
        _diag_ref,
        lambda rng: [
            _s(real(rng, (3,)), name="1d"),
            _s(real(rng, (3,)), 1, name="1d_offset"),
            _s(real(rng, (3, 4)), name="2d"),
            _s(real(rng, (4, 3)), -1, name="2d_offset"),
        ],
        method=True,
        primitives=("DiagonalBackward", "Diagonal", "Clone"),
        supports_cuda=True,
    ),
    OpInfo(
        "diag_embed",
        _diag_embed_ref,
        lambda rng: [
            _s(real(rng, (3,)), name="1d"),
            _s(real(rng, (2, 3)), name="batched"),
            _s(real(rng, (2, 3)), 1, name="offset"),
            _s(real(rng, (2, 3)), -1, 0, 2, name="dims"),
        ],
        method=True,
        primitives=("DiagonalBackward",),
        supports_cuda=True,
    ),
    OpInfo(
        "trace",
        _trace_ref,
        lambda rng: [
            _s(real(rng, (3, 3)), name="square"),
            _s(real(rng, (2, 4)), name="wide"),
        ],
        method=True,
        primitives=("Diagonal", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "dist",
        lambda a, b, p=2: _ref_vector_norm(a - b, p),
        lambda rng: [
            _s(real(rng, (3, 4)), real(rng, (4,)), name="2"),
            _s(real(rng, (3,)), real(rng, (3,)), 3, name="3"),
        ],
        method=True,
        primitives=("Norm2", "NormP", "Sub"),
        supports_cuda=True,
    ),
    OpInfo(
        "cdist",
        _cdist_ref,
        lambda rng: [
            _s(real(rng, (3, 2)), real(rng, (4, 2)), name="2"),
            _s(real(rng, (2, 3, 2)), real(rng, (2, 2, 2)), 1.0, name="batched_1"),
            _s(real(rng, (3, 2)), real(rng, (2, 2)), 3.0, name="3"),
        ],
        primitives=("Norm2", "NormP", "Reshape", "Sub"),
        # torch's cdist backward is not differentiable (no double backward to compare)
        supports_gradgrad=False,
        supports_cuda=True,
    ),
    OpInfo(
        "tensordot",
        _tensordot_ref,
        lambda rng: [
            _s(real(rng, (2, 3)), real(rng, (3, 2)), 1, name="small"),
            _s(real(rng, (2, 3, 4)), real(rng, (3, 4, 2)), name="2"),
            _s(real(rng, (2, 3)), real(rng, (3, 2)), 1, name="1"),
            _s(real(rng, (2, 3, 4)), real(rng, (4, 2, 3)), ([1, 2], [2, 0]), name="lists"),
        ],
        primitives=("Einsum",),
        supports_cuda=True,
    ),
    OpInfo(
        "kron",
        np.kron,
        lambda rng: [
            _s(real(rng, (2,)), real(rng, (3,)), name="1d"),
            _s(real(rng, (2, 2)), real(rng, (3, 2)), name="2d"),
            _s(real(rng, (2, 1, 2)), real(rng, (2, 3)), name="mixed"),
        ],
        method=True,
        primitives=("Mul", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "addmm",
        lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b),
        lambda rng: [
            _s(real(rng, (2, 2)), real(rng, (2, 2)), real(rng, (2, 2)), name="small"),
            _s(real(rng, (2, 3)), real(rng, (2, 4)), real(rng, (4, 3)), name="plain"),
            _s(
                real(rng, (3,)),
                real(rng, (2, 4)),
                real(rng, (4, 3)),
                beta=0.5,
                alpha=2.0,
                name="scaled_broadcast",
            ),
        ],
        method=True,
        primitives=("Matmul", "Mul", "Add"),
        supports_cuda=True,
    ),
    OpInfo(
        "baddbmm",
        lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b),
        lambda rng: [
            _s(real(rng, (1, 2, 2)), real(rng, (1, 2, 2)), real(rng, (1, 2, 2)), name="small"),
            _s(real(rng, (2, 2, 3)), real(rng, (2, 2, 4)), real(rng, (2, 4, 3)), name="plain"),
            _s(
                real(rng, (2, 3)),
                real(rng, (2, 2, 4)),
                real(rng, (2, 4, 3)),
                alpha=0.5,
                name="scaled",
            ),
        ],
        method=True,
        primitives=("Matmul", "Mul", "Add"),
        supports_cuda=True,
    ),
    OpInfo(
        "addmv",
        lambda c, a, v, beta=1, alpha=1: beta * c + alpha * (a @ v),
        lambda rng: [
            _s(real(rng, (2,)), real(rng, (2, 3)), real(rng, (3,)), name="plain"),
            _s(real(rng, (2,)), real(rng, (2, 3)), real(rng, (3,)), beta=2.0, name="beta"),
        ],
        method=True,
        primitives=("Mv", "Mul", "Add"),
        supports_cuda=True,
    ),
    OpInfo(
        "addr",
        lambda c, a, b, beta=1, alpha=1: beta * c + alpha * np.outer(a, b),
        lambda rng: [
            _s(real(rng, (2, 3)), real(rng, (2,)), real(rng, (3,)), name="plain"),
            _s(real(rng, (3,)), real(rng, (2,)), real(rng, (3,)), name="broadcast"),
            _s(
                real(rng, (2, 1)),
                real(rng, (2,)),
                real(rng, (3,)),
                beta=0.5,
                alpha=2.0,
                name="scaled",
            ),
        ],
        method=True,
        primitives=("Reshape", "Mul", "Add"),
        supports_cuda=True,
    ),
]
