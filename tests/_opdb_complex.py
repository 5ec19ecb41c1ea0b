"""Op database entries for complex numbers and numbagrad.fft (joined into ``_opdb.op_db``).

The generic suites feed real float arrays, so each entry is a real function of real
arrays that goes through complex values: a pair array ``(..., 2)`` becomes complex with
``view_as_complex``, and a complex result comes back with ``view_as_real``. Its gradients,
JVPs and batching are then checked by the real machinery (gradcheck, gradgradcheck, the
torch comparison, vmap against a loop), which checks the complex rules inside end to end:
a wrong conjugation in a complex VJP changes the real Jacobian.
"""

import numpy as np
from _opdb import OpInfo, SampleInput, nonzero, positive, real

_s = SampleInput


def _c(x):
    """A ``(..., 2)`` float array as complex."""
    return x[..., 0] + 1j * x[..., 1]


def _r(z):
    """A complex array as ``(..., 2)`` floats."""
    z = np.asarray(z)
    return np.stack([z.real, z.imag], -1)


def _vc(m, x):
    return m.view_as_complex(x.contiguous())  # (a strided pair dimension cannot be viewed)


def _vr(m, z):
    return m.view_as_real(m.resolve_conj(z))  # (torch's conj is lazy: resolve it first)


def _pair_samples(gen=nonzero, shapes=((3,), (2, 3))):
    def samples(rng):
        return [_s(gen(rng, (*s, 2)), name=f"{len(s)}d") for s in shapes]

    return samples


def _two_pair_samples(rng):
    return [
        _s(nonzero(rng, (3, 2)), nonzero(rng, (3, 2)), name="1d"),
        _s(nonzero(rng, (2, 3, 2)), nonzero(rng, (3, 2)), name="broadcast"),
    ]


def _cmat(rng, shape):
    """A ``(..., n, n, 2)`` pair array of well-conditioned complex matrices."""
    x = rng.standard_normal((*shape, 2))
    x[..., 0] += 3 * np.eye(shape[-1])
    return x


def _cmat_samples(shapes=((3, 3), (2, 2, 2))):
    def samples(rng):
        return [_s(_cmat(rng, s), name=f"{len(s) - 2}batch") for s in shapes]

    return samples


def _rect_samples(name):
    def samples(rng):
        shape = (3, 2, 2) if name == "tall" else (2, 3, 2)
        return [_s(nonzero(rng, shape), name=name), _s(_cmat(rng, (2, 3, 3)), name="sq")]

    return samples


def _hpd(z):
    """A Hermitian positive-definite matrix from ``z``: ``z z^H + n I``."""
    return z @ np.conj(np.swapaxes(z, -1, -2)) + z.shape[-1] * np.eye(z.shape[-1])


def _hpd_t(m, z):
    return z @ z.mH + z.shape[-1] * m.eye(z.shape[-1])


_HPD_PRIMS = ("ViewAsComplex", "Permute", "Conj", "Matmul", "Mul", "Add")


def _expm_ref(z):
    """``exp(z)`` by eigendecomposition (diagonalizable random matrices)."""
    w, v = np.linalg.eig(z)
    return (v * np.exp(w)[..., None, :]) @ np.linalg.inv(v)


# (name, numbagrad/torch function name, NumPy reference, sample generator)
_HOLOMORPHIC = [
    ("exp", np.exp, real),
    ("log", np.log, nonzero),
    ("sqrt", np.sqrt, nonzero),
    ("rsqrt", lambda z: 1 / np.sqrt(z), nonzero),
    ("sin", np.sin, real),
    ("cos", np.cos, real),
    ("tan", np.tan, real),
    ("tanh", np.tanh, real),
    ("sinh", np.sinh, real),
    ("cosh", np.cosh, real),
    ("sigmoid", lambda z: 1 / (1 + np.exp(-z)), real),
    ("reciprocal", np.reciprocal, nonzero),
    ("square", np.square, real),
    ("expm1", np.expm1, real),
    ("log1p", np.log1p, positive),
    ("log2", np.log2, nonzero),
    ("log10", np.log10, nonzero),
    ("exp2", np.exp2, real),
    ("asin", np.arcsin, real),
    ("acos", np.arccos, real),
    ("atan", np.arctan, real),
    ("asinh", np.arcsinh, real),
    ("acosh", np.arccosh, nonzero),
    ("atanh", np.arctanh, real),
    ("neg", np.negative, real),
]

_PRIM = {
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "rsqrt": "Rsqrt",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "tanh": "Tanh",
    "sinh": "Sinh",
    "cosh": "Cosh",
    "sigmoid": "Sigmoid",
    "reciprocal": "Reciprocal",
    "square": "Square",
    "expm1": "Expm1",
    "log1p": "Log1p",
    "log2": "Log2",
    "log10": "Log10",
    "exp2": "Exp2",
    "asin": "Asin",
    "acos": "Acos",
    "atan": "Atan",
    "asinh": "Asinh",
    "acosh": "Acosh",
    "atanh": "Atanh",
    "neg": "Neg",
}


def _unary_entry(name, ref, gen):
    return OpInfo(
        f"complex.{name}",
        lambda x: _r(ref(_c(x))),
        _pair_samples(gen),
        op=lambda m, x: _vr(m, getattr(m, name)(_vc(m, x))),
        primitives=("ViewAsComplex", _PRIM[name], "ViewAsReal"),
    )


def _fft_ref(name):
    return getattr(np.fft, name)


op_db = [_unary_entry(*e) for e in _HOLOMORPHIC] + [
    OpInfo(
        "complex",
        lambda re, im: _r(re + 1j * im),
        lambda rng: [
            _s(real(rng, (4,)), real(rng, (4,)), name="1d"),
            _s(real(rng, (2, 3)), real(rng, (3,)), name="broadcast"),
        ],
        op=lambda m, re, im: m.view_as_real(m.complex(re, im)),
        primitives=("Complex", "ViewAsReal"),
    ),
    OpInfo(
        "polar",
        lambda r, t: _r(r * np.exp(1j * t)),
        lambda rng: [_s(positive(rng, (4,)), real(rng, (4,)), name="1d")],
        op=lambda m, r, t: m.view_as_real(m.polar(r, t)),
        primitives=("Complex", "Cos", "Sin", "Mul", "ViewAsReal"),
    ),
    OpInfo(
        "complex.real_imag",
        lambda x: np.stack([_c(x).real * 2, _c(x).imag * 3]),
        _pair_samples(),
        op=lambda m, x: m.stack([m.real(_vc(m, x) * 2), m.imag(_vc(m, x) * 3)]),
        primitives=("ViewAsComplex", "Mul", "Real", "Imag", "Cat", "Reshape"),
    ),
    OpInfo(
        "complex.abs",
        lambda x: np.abs(_c(x)),
        _pair_samples(),
        op=lambda m, x: m.abs(_vc(m, x)),
        primitives=("ViewAsComplex", "Abs"),
    ),
    OpInfo(
        "complex.angle",
        lambda x: np.angle(_c(x)),
        _pair_samples(),
        op=lambda m, x: m.angle(_vc(m, x)),
        primitives=("ViewAsComplex", "Angle"),
        # torch.angle's forward-mode formula has no batching rule (a per-sample loop)
    ),
    OpInfo(
        "complex.sgn",
        lambda x: _r(_c(x) / np.abs(_c(x))),
        _pair_samples(),
        op=lambda m, x: _vr(m, m.sgn(_vc(m, x))),
        primitives=("ViewAsComplex", "Sgn", "ViewAsReal"),
    ),
    OpInfo(
        "complex.conj",
        lambda x, y: _r(np.conj(_c(x) * _c(y))),
        _two_pair_samples,
        op=lambda m, x, y: _vr(m, m.conj(_vc(m, x) * _vc(m, y))),
        primitives=("ViewAsComplex", "Mul", "Conj", "ViewAsReal"),
    ),
    OpInfo(
        "complex.conj_physical",
        lambda x: _r(np.conj(_c(x))),
        _pair_samples(),
        op=lambda m, x: _vr(m, m.conj_physical(_vc(m, x))),
        primitives=("ViewAsComplex", "ConjPhysical", "ViewAsReal"),
    ),
    OpInfo(
        "complex.div",
        lambda x, y: _r(_c(x) / _c(y) - _c(y) / 2.5),
        _two_pair_samples,
        op=lambda m, x, y: _vr(m, _vc(m, x) / _vc(m, y) - _vc(m, y) / 2.5),
        primitives=("ViewAsComplex", "Div", "Sub", "ViewAsReal"),
    ),
    OpInfo(
        "complex.pow",
        lambda x, y: _r(_c(x) ** _c(y) + _c(x) ** 3),
        _two_pair_samples,
        op=lambda m, x, y: _vr(m, _vc(m, x) ** _vc(m, y) + _vc(m, x) ** 3),
        primitives=("ViewAsComplex", "Pow", "Add", "ViewAsReal"),
    ),
    OpInfo(
        "complex.scalar",
        lambda x: _r(_c(x) * (2 - 1j) + 1j * _c(x)),
        _pair_samples(),
        op=lambda m, x: _vr(m, _vc(m, x) * (2 - 1j) + 1j * _vc(m, x)),
        primitives=("ViewAsComplex", "Mul", "Add", "ViewAsReal"),
    ),
    OpInfo(
        "complex.matmul",
        lambda x, y: _r(_c(x) @ _c(y)),
        lambda rng: [_s(real(rng, (2, 2, 2)), real(rng, (2, 2, 2)), name="2d")],
        op=lambda m, x, y: _vr(m, m.matmul(_vc(m, x), _vc(m, y))),
        primitives=("ViewAsComplex", "Matmul", "ViewAsReal"),
    ),
    OpInfo(
        "complex.einsum",
        lambda x, y: _r(np.einsum("ij,jk->ik", _c(x), _c(y))),
        lambda rng: [_s(real(rng, (2, 2, 2)), real(rng, (2, 2, 2)), name="2d")],
        op=lambda m, x, y: _vr(m, m.einsum("ij,jk->ik", _vc(m, x), _vc(m, y))),
        primitives=("ViewAsComplex", "Einsum", "ViewAsReal"),
    ),
    OpInfo(
        "complex.sum_mean",
        lambda x: _r(_c(x).sum(-1) + _c(x).mean(-1)),
        _pair_samples(shapes=((2, 3),)),
        op=lambda m, x: _vr(m, _vc(m, x).sum(-1) + _vc(m, x).mean(-1)),
        primitives=("ViewAsComplex", "Sum", "Div", "Add", "ViewAsReal"),
    ),
    OpInfo(
        "complex.prod",
        lambda x: _r(np.prod(_c(x), axis=-1)),
        lambda rng: [
            _s(nonzero(rng, (2, 3, 2)), name="2d"),
            _s(np.array([[1.0, 0.5], [0.0, 0.0], [2.0, -1.0]]), name="a zero"),
        ],
        op=lambda m, x: _vr(m, _vc(m, x).prod(-1)),
        primitives=("ViewAsComplex", "Prod", "ViewAsReal"),
    ),
    OpInfo(
        "complex.cumprod",
        lambda x: _r(np.cumprod(_c(x), axis=-1)),
        lambda rng: [_s(nonzero(rng, (2, 3, 2)), name="2d")],
        op=lambda m, x: _vr(m, _vc(m, x).cumprod(-1)),
        primitives=("ViewAsComplex", "Cumprod", "ViewAsReal"),
    ),
    # -- numbagrad.linalg on complex matrices (NOTE [Complex linalg]) -------------------------
    OpInfo(
        "complex.linalg.det",
        lambda x: _r(np.linalg.det(_c(x))),
        _cmat_samples(),
        op=lambda m, x: _vr(m, m.linalg.det(_vc(m, x))),
        primitives=("ViewAsComplex", "LinalgDet", "ViewAsReal"),
    ),
    OpInfo(
        "complex.linalg.slogdet",
        lambda x: np.concatenate(
            [_r(np.linalg.slogdet(_c(x))[0]), np.linalg.slogdet(_c(x))[1][..., None]], -1
        ),
        _cmat_samples(),
        op=lambda m, x: (lambda r: m.cat([_vr(m, r.sign), r.logabsdet.unsqueeze(-1)], -1))(
            m.linalg.slogdet(_vc(m, x))
        ),
        primitives=("ViewAsComplex", "LinalgSlogdet", "ViewAsReal", "Reshape", "Cat"),
    ),
    OpInfo(
        "complex.linalg.cholesky",
        lambda x: _r(np.linalg.cholesky(_hpd(_c(x)))),
        _cmat_samples(),
        op=lambda m, x: _vr(m, m.linalg.cholesky(_hpd_t(m, _vc(m, x)))),
        primitives=(*_HPD_PRIMS, "LinalgCholesky", "ViewAsReal"),
    ),
    OpInfo(
        "complex.linalg.cholesky_ex",
        lambda x: _r(np.linalg.cholesky(_hpd(_c(x)))),
        _cmat_samples(),
        op=lambda m, x: _vr(m, m.linalg.cholesky_ex(_hpd_t(m, _vc(m, x))).L),
        primitives=(*_HPD_PRIMS, "LinalgCholeskyEx", "ViewAsReal"),
    ),
    OpInfo(
        "complex.linalg.eigvalsh",
        lambda x: np.linalg.eigvalsh(_hpd(_c(x))),
        _cmat_samples(),
        op=lambda m, x: m.linalg.eigvalsh(_hpd_t(m, _vc(m, x))),
        primitives=(*_HPD_PRIMS, "LinalgEigh"),
    ),
    OpInfo(
        "complex.linalg.eigvals",
        lambda x: _r(np.linalg.eigvals(_c(x))),
        _cmat_samples(),
        op=lambda m, x: _vr(m, m.linalg.eigvals(_vc(m, x))),
        primitives=("ViewAsComplex", "LinalgEig", "ViewAsReal"),
    ),
    OpInfo(
        "complex.linalg.eig_real_input",
        lambda x: np.concatenate(
            [_r(np.linalg.eigvals(x)).ravel(), np.abs(np.linalg.eig(x)[1]).ravel()]
        ),
        lambda rng: [_s(real(rng, (3, 3)) + 2 * np.eye(3), name="3x3")],
        op=lambda m, x: (
            lambda r: m.cat([_vr(m, r.eigenvalues).flatten(), r.eigenvectors.abs().flatten()])
        )(m.linalg.eig(x)),
        primitives=("LinalgEig", "ViewAsReal", "Abs", "Reshape", "Cat"),
    ),
    OpInfo(
        "complex.linalg.svdvals",
        lambda x: np.linalg.svd(_c(x), compute_uv=False),
        _rect_samples("wide"),
        op=lambda m, x: m.linalg.svdvals(_vc(m, x)),
        primitives=("ViewAsComplex", "LinalgSvd"),
    ),
    OpInfo(
        "complex.linalg.qr_r_abs",
        lambda x: np.abs(np.linalg.qr(_c(x))[1]),
        lambda rng: [_s(_cmat(rng, (2, 2)), name="sq"), _s(nonzero(rng, (3, 2, 2)), name="tall")],
        op=lambda m, x: m.linalg.qr(_vc(m, x)).R.abs(),
        primitives=("ViewAsComplex", "LinalgQr", "Abs"),
    ),
    OpInfo(
        "complex.linalg.pinv",
        lambda x: _r(np.linalg.pinv(_c(x))),
        _rect_samples("tall"),
        op=lambda m, x: _vr(m, m.linalg.pinv(_vc(m, x))),
        primitives=("ViewAsComplex", "LinalgPinv", "ViewAsReal"),
    ),
    OpInfo(
        "complex.linalg.matrix_exp",
        lambda x: _r(_expm_ref(0.3 * _c(x))),
        _cmat_samples(),
        op=lambda m, x: _vr(m, m.linalg.matrix_exp(0.3 * _vc(m, x))),
        primitives=("ViewAsComplex", "Mul", "LinalgMatrixExp", "ViewAsReal"),
    ),
    # -- numbagrad.fft ----------------------------------------------------------------------
    OpInfo(
        "fft.fft",
        lambda x: _r(np.fft.fft(_c(x), n=5, norm="ortho")),
        _pair_samples(real, ((4,), (2, 3))),
        op=lambda m, x: _vr(m, m.fft.fft(_vc(m, x), n=5, norm="ortho")),
        primitives=("ViewAsComplex", "Cat", "FftC2C", "ViewAsReal"),
    ),
    OpInfo(
        "fft.ifft",
        lambda x: _r(np.fft.ifft(_c(x), axis=0)),
        _pair_samples(real, ((4,), (2, 3))),
        op=lambda m, x: _vr(m, m.fft.ifft(_vc(m, x), dim=0)),
        primitives=("ViewAsComplex", "FftC2C", "ViewAsReal"),
    ),
    OpInfo(
        "fft.fftn",
        lambda x: _r(np.fft.fftn(x, norm="forward")),
        lambda rng: [_s(real(rng, (3, 4)), name="2d")],
        op=lambda m, x: _vr(m, m.fft.fftn(x, norm="forward")),
        primitives=("ToCopy", "FftC2C", "ViewAsReal"),
    ),
    OpInfo(
        "fft.rfft",
        lambda x: _r(np.fft.rfft(x, n=6)),
        lambda rng: [_s(real(rng, (5,)), name="1d"), _s(real(rng, (2, 7)), name="2d")],
        op=lambda m, x: _vr(m, m.fft.rfft(x, n=6)),
        primitives=("FftR2C", "ViewAsReal", "Index", "Cat"),
    ),
    OpInfo(
        "fft.rfftn",
        lambda x: _r(np.fft.rfftn(x, norm="ortho")),
        lambda rng: [_s(real(rng, (3, 5)), name="odd"), _s(real(rng, (2, 4)), name="even")],
        op=lambda m, x: _vr(m, m.fft.rfftn(x, norm="ortho")),
        primitives=("FftR2C", "ViewAsReal"),
    ),
    OpInfo(
        "fft.irfft",
        lambda x: np.fft.irfft(_c(x), n=7),
        _pair_samples(real, ((4,), (2, 3))),
        op=lambda m, x: m.fft.irfft(_vc(m, x), n=7),
        primitives=("ViewAsComplex", "FftC2R", "Cat"),
    ),
    OpInfo(
        "fft.irfftn",
        lambda x: np.fft.irfftn(_c(x), axes=(0, 1), norm="forward"),
        _pair_samples(real, ((2, 3),)),
        op=lambda m, x: m.fft.irfftn(_vc(m, x), norm="forward"),
        primitives=("ViewAsComplex", "FftC2R"),
    ),
    OpInfo(
        "fft.hfft",
        lambda x: np.fft.hfft(_c(x), n=5),
        _pair_samples(real, ((3,), (2, 4))),
        op=lambda m, x: m.fft.hfft(_vc(m, x), n=5),
        primitives=("ViewAsComplex", "Conj", "FftC2R", "Index"),
    ),
    OpInfo(
        "fft.ihfft",
        lambda x: _r(np.fft.ihfft(x)),
        lambda rng: [_s(real(rng, (5,)), name="odd"), _s(real(rng, (2, 6)), name="even")],
        op=lambda m, x: _vr(m, m.fft.ihfft(x)),
        primitives=("FftR2C", "Conj", "ViewAsReal"),
    ),
]
