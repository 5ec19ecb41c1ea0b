"""Complex dtypes and PyTorch's complex autograd, differentially against PyTorch.

The op database (``_opdb_complex.py``) runs gradcheck, gradgradcheck, JVP and vmap checks
on real functions through complex values; this file checks the complex surface directly:
dtypes and promotion, creation, views, printing, the errors of real-only ops, and the
gradients (``autograd.grad`` with complex ``grad_outputs``), forward tangents and batched
values of complex functions against PyTorch's.
"""

import io

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _cplx(shape, rng=RNG):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _np(t):
    t = t.detach()
    if hasattr(t, "resolve_conj"):
        t = t.resolve_conj()
    return t.numpy()


def _close(a, b, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


# -- dtypes ------------------------------------------------------------------------------------
def test_dtypes_and_names():
    assert numbagrad.cfloat is numbagrad.complex64
    assert numbagrad.cdouble is numbagrad.complex128
    for d in (numbagrad.complex64, numbagrad.complex128):
        assert d.is_complex and not d.is_floating_point and d.is_signed
    assert numbagrad.complex64.itemsize == 8 and numbagrad.complex128.itemsize == 16
    assert repr(numbagrad.complex64) == "numbagrad.complex64"
    assert numbagrad.float32.to_complex() is numbagrad.complex64
    assert numbagrad.float64.to_complex() is numbagrad.complex128
    assert numbagrad.complex128.to_real() is numbagrad.float64
    assert numbagrad.zeros(2, dtype="cfloat").dtype is numbagrad.complex64
    assert numbagrad.zeros(2, dtype=complex).dtype is numbagrad.complex128
    assert numbagrad.zeros(2, dtype=np.complex64).dtype is numbagrad.complex64


@pytest.mark.parametrize("name", ["complex32", "chalf"])
def test_complex32_raises_clearly(name):
    with pytest.raises(AttributeError, match="complex32"):
        getattr(numbagrad, name)
    with pytest.raises(TypeError, match="complex32"):
        numbagrad.zeros(2, dtype=name)
    with pytest.raises(TypeError, match="complex32"):
        numbagrad.ones(2, dtype=numbagrad.float16) * 1j


_DTS = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("a", _DTS)
@pytest.mark.parametrize("b", ["complex64", "complex128"])
def test_promote_types_matches_torch(a, b):
    got = numbagrad.promote_types(getattr(numbagrad, a), getattr(numbagrad, b))
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert str(got).split(".")[-1] == str(want).split(".")[-1]


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(2, dtype=m.float64) * m.tensor(1j, dtype=m.complex64),  # 0-d lower
        lambda m: m.ones(2, dtype=m.float32) * m.tensor(1j, dtype=m.complex128),
        lambda m: m.ones(2, dtype=m.float32) * 1j,
        lambda m: m.ones(2, dtype=m.float64) * 1j,
        lambda m: m.ones(2, dtype=m.int64) * 1j,
        lambda m: m.ones(2, dtype=m.int32) * m.tensor(1j, dtype=m.complex128),
        lambda m: m.ones(2, dtype=m.complex64) * m.tensor(2.0, dtype=m.float64),
        lambda m: m.ones(2, dtype=m.complex64) + m.ones(2, dtype=m.float64),
        lambda m: m.tensor(1.0, dtype=m.float64) * 1j,
        lambda m: m.tensor([1, 2j]),
        lambda m: m.tensor([np.complex128(1j), 1.0]),
        lambda m: m.full((2,), 1 + 1j),
        lambda m: m.ones(2, dtype=m.complex64) / 2,
        lambda m: m.arange(3) / (1 + 1j),
    ],
)
def test_type_promotion_matches_torch(make):
    got, want = make(numbagrad), make(torch)
    _close(got, want)


def test_default_complex_follows_default_dtype():
    old = numbagrad.get_default_dtype()
    try:
        numbagrad.set_default_dtype(numbagrad.float64)
        assert numbagrad.tensor([1j]).dtype is numbagrad.complex128
        assert (numbagrad.ones(2, dtype=numbagrad.int64) * 1j).dtype is numbagrad.complex128
        assert numbagrad.full((1,), 1j).dtype is numbagrad.complex128
        # a float32 tensor keeps its precision
        assert (numbagrad.ones(2, dtype=numbagrad.float32) * 1j).dtype is numbagrad.complex64
    finally:
        numbagrad.set_default_dtype(old)


# -- creation ----------------------------------------------------------------------------------
def test_creation():
    z = numbagrad.tensor(np.array([1 + 2j, 3 - 1j], dtype=np.complex128))
    assert z.dtype is numbagrad.complex128 and z.is_complex() and not z.is_floating_point()
    assert numbagrad.is_complex(z) and not numbagrad.is_floating_point(z)
    assert numbagrad.tensor(1 + 2j).item() == 1 + 2j
    assert complex(numbagrad.tensor(1 + 2j)) == 1 + 2j
    assert numbagrad.zeros(2, 3, dtype=numbagrad.cfloat).tolist() == [[0j] * 3] * 2
    assert numbagrad.ones(2, dtype=numbagrad.cdouble).dtype is numbagrad.complex128
    assert numbagrad.empty(2, dtype=numbagrad.cfloat).dtype is numbagrad.complex64
    assert numbagrad.full((2,), 2, dtype=numbagrad.cfloat).tolist() == [2 + 0j, 2 + 0j]
    assert numbagrad.zeros_like(z).dtype is numbagrad.complex128
    assert numbagrad.randn_like(z).dtype is numbagrad.complex128
    a = np.array([1j, 2], dtype=np.complex64)
    t = numbagrad.from_numpy(a)
    t.mul_(2)
    assert a.tolist() == [2j, 4 + 0j]  # shares memory
    assert z.numpy().dtype == np.complex128
    assert z.type() == "torch.ComplexDoubleTensor"
    with pytest.raises(RuntimeError, match="without overflow"):
        numbagrad.full((2,), 1j, dtype=numbagrad.float32)


@pytest.mark.parametrize("fn", ["randn", "rand"])
def test_random_complex(fn):
    numbagrad.manual_seed(0)
    x = getattr(numbagrad, fn)(200000, dtype=numbagrad.cfloat)
    assert x.dtype is numbagrad.complex64
    re, im = x.real.numpy(), x.imag.numpy()
    if fn == "randn":  # PyTorch's: real and imaginary parts each N(0, 1/2)
        assert abs(re.var() - 0.5) < 0.01 and abs(im.var() - 0.5) < 0.01
        assert abs(np.mean(re)) < 0.01 and abs(np.corrcoef(re, im)[0, 1]) < 0.01
    else:  # each part uniform on [0, 1)
        assert re.min() >= 0 and re.max() < 1 and im.min() >= 0 and im.max() < 1
        assert abs(re.mean() - 0.5) < 0.01 and abs(im.mean() - 0.5) < 0.01


def test_complex_polar_and_views():
    re, im = RNG.standard_normal(4), RNG.standard_normal(4)
    z = numbagrad.complex(numbagrad.tensor(re), numbagrad.tensor(im))
    _close(z, torch.complex(torch.tensor(re), torch.tensor(im)))
    p = numbagrad.polar(numbagrad.tensor(np.abs(re)), numbagrad.tensor(im))
    _close(p, torch.polar(torch.tensor(np.abs(re)), torch.tensor(im)))
    r = numbagrad.view_as_real(z)
    assert r.shape == (4, 2) and r.dtype is numbagrad.float64
    r[0, 1] = 7.0  # a view: writes show in z
    assert z[0].item().imag == 7.0
    c = numbagrad.view_as_complex(r)
    c[1] = 5 - 5j
    assert r[1].tolist() == [5.0, -5.0] and z[1].item() == 5 - 5j
    with pytest.raises(RuntimeError, match="complex"):
        numbagrad.view_as_real(numbagrad.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        numbagrad.view_as_complex(numbagrad.ones(3))
    with pytest.raises(RuntimeError, match="stride 1"):
        numbagrad.view_as_complex(numbagrad.ones(2, 4)[:, ::2].t())
    with pytest.raises(RuntimeError, match="scalar type"):
        numbagrad.complex(numbagrad.ones(2), numbagrad.ones(2, dtype=numbagrad.float64))


def test_real_imag_are_writable_views():
    z = numbagrad.tensor([1 + 2j, 3 - 4j])
    assert z.real.tolist() == [1.0, 3.0] and z.imag.tolist() == [2.0, -4.0]
    z.real[0] = 10.0
    z.imag.mul_(2)
    assert z.tolist() == [10 + 4j, 3 - 8j]
    z.real = numbagrad.tensor([0.5, 0.25])
    z.imag = numbagrad.zeros(2)
    assert z.tolist() == [0.5 + 0j, 0.25 + 0j]
    x = numbagrad.tensor([1.0, 2.0])
    assert x.real is x and numbagrad.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        x.imag  # noqa: B018
    assert numbagrad.isreal(numbagrad.tensor([1 + 0j, 1j])).tolist() == [True, False]


def test_conj_is_a_copy():
    z = numbagrad.tensor([1 + 2j])
    c = z.conj()
    assert c.tolist() == [1 - 2j] and not c.is_conj() and not numbagrad.is_conj(c)
    assert numbagrad.resolve_conj(c) is c and numbagrad.resolve_neg(c) is c
    assert numbagrad.conj_physical(z).tolist() == [1 - 2j]
    x = numbagrad.ones(2)
    assert x.conj() is x and numbagrad.conj_physical(x) is x
    m = numbagrad.tensor([[1 + 1j, 2j], [3.0 + 0j, 4 - 1j]])
    assert m.H.tolist() == np.conj(np.array(m.tolist()).T).tolist()
    assert m.mH.tolist() == m.H.tolist() and numbagrad.adjoint(m).tolist() == m.H.tolist()


# -- values against torch ----------------------------------------------------------------------
_UNARY = [
    "abs", "angle", "sgn", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sinh",
    "cosh", "sigmoid", "reciprocal", "square", "neg", "expm1", "log1p", "log2", "log10",
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "conj", "isfinite", "isnan",
    "nan_to_num",
]  # fmt: skip


@pytest.mark.parametrize("name", _UNARY)
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_unary_values_match_torch(name, dt):
    z = _cplx((3, 4))
    a = getattr(numbagrad, name)(numbagrad.tensor(z, dtype=getattr(numbagrad, dt)))
    b = getattr(torch, name)(torch.tensor(z, dtype=getattr(torch, dt)))
    tol = 1e-5 if dt == "complex64" else 1e-10
    _close(a, b, rtol=tol, atol=tol)


_BINARY = [
    lambda m, a, b: a + b,
    lambda m, a, b: a - b * 2.5,
    lambda m, a, b: a * b,
    lambda m, a, b: a / b,
    lambda m, a, b: a**b,
    lambda m, a, b: a**2 + a**0.5 - 3**a.real,
    lambda m, a, b: (1 + 2j) * a - b / (2 - 1j),
    lambda m, a, b: m.where(a.real > 0, a, b),
    lambda m, a, b: a.sum() + b.mean(0) - a.sum(1, keepdim=True),
    lambda m, a, b: a @ b.T,
    lambda m, a, b: m.einsum("ij,kj->ik", a, b),
    lambda m, a, b: m.cat([a, b]).flip(0)[1:3],
    lambda m, a, b: a.prod(1) + b.cumprod(0).sum(),
    lambda m, a, b: a.reshape(-1)[::2].unsqueeze(0) * b.t().reshape(1, -1)[:, :6],
]


@pytest.mark.parametrize("k", range(len(_BINARY)))
def test_binary_and_reductions_match_torch(k):
    a, b = _cplx((3, 4)), _cplx((3, 4))
    got = _BINARY[k](numbagrad, numbagrad.tensor(a), numbagrad.tensor(b))
    want = _BINARY[k](torch, torch.tensor(a), torch.tensor(b))
    _close(got, want, rtol=1e-10, atol=1e-10)


def test_comparisons_and_closeness():
    z = numbagrad.tensor([1 + 2j, 3 - 1j])
    assert (z == z.clone()).tolist() == [True, True] and (z != z).tolist() == [False, False]
    assert numbagrad.equal(z, z.clone()) and numbagrad.allclose(z, z + 1e-9)
    assert numbagrad.isclose(z, z + 1e-3j).tolist() == [False, False]
    assert not numbagrad.allclose(z, z.conj())


_REFUSED = [
    lambda m, z: z < z,
    lambda m, z: z >= 0,
    lambda m, z: z.max(),
    lambda m, z: z.min(),
    lambda m, z: z.amax(0),
    lambda m, z: z.argmax(),
    lambda m, z: z.sort(),
    lambda m, z: m.clamp(z, 0, 1),
    lambda m, z: m.relu(z),
    lambda m, z: m.maximum(z, z),
    lambda m, z: z.floor(),
    lambda m, z: z.round(),
    lambda m, z: m.sign(z),
    lambda m, z: m.erf(z),
    lambda m, z: m.atan2(z, z),
    lambda m, z: m.fmod(z, 2),
    lambda m, z: z.cummax(0),
    lambda m, z: z.median(),
]


@pytest.mark.parametrize("k", range(len(_REFUSED)))
def test_real_only_ops_raise_as_torch(k):
    """Never a silent wrong answer (NumPy would compare lexicographically, round both
    parts, or its kernels would run typed for floats): an error, where PyTorch raises."""
    for m in (torch, numbagrad):
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
            _REFUSED[k](m, m.tensor([1 + 2j, 3 - 1j]))


_LINALG = [
    lambda m, a, b: m.linalg.inv(a),
    lambda m, a, b: m.inverse(a) @ b,
    lambda m, a, b: m.linalg.solve(a, b),
    lambda m, a, b: m.linalg.solve(a, b[..., 0]),
    lambda m, a, b: m.linalg.solve(a, b.mT[..., :3], left=False),
]


@pytest.mark.parametrize("k", range(len(_LINALG)))
def test_complex_inv_and_solve_match_torch(k):
    f = _LINALG[k]
    rng = np.random.default_rng(2)
    a0 = _cplx((2, 3, 3), rng) + 3 * np.eye(3)
    b0 = _cplx((2, 3, 2), rng)
    a, b = numbagrad.tensor(a0, requires_grad=True), numbagrad.tensor(b0, requires_grad=True)
    at, bt = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    y, yt = f(numbagrad, a, b), f(torch, at, bt)
    _close(y, yt, rtol=1e-10, atol=1e-12)
    g = _cplx(tuple(yt.shape), rng)
    ga = numbagrad.autograd.grad(y, (a, b), numbagrad.tensor(g), allow_unused=True)
    gt = torch.autograd.grad(yt, (at, bt), torch.tensor(g), allow_unused=True)
    for u, v in zip(ga, gt):
        assert (u is None) == (v is None)
        if u is not None:
            _close(u, v, rtol=1e-9, atol=1e-12)
    assert numbagrad.autograd.gradcheck(
        lambda p, q: f(numbagrad, p, q), (a, b), check_forward_ad=True, check_batched_grad=True
    )
    assert numbagrad.autograd.gradgradcheck(lambda p, q: f(numbagrad, p, q), (a, b))


def test_complex_singular_matrix_error():
    with pytest.raises(RuntimeError, match="singular"):
        numbagrad.linalg.inv(numbagrad.zeros(2, 2, dtype=numbagrad.cdouble))


def test_complex_not_yet_supported_raises_clearly():
    z = numbagrad.tensor([[1 + 2j, 3 - 1j], [0.5j, 2.0 + 0j]])
    with pytest.raises(NotImplementedError, match="complex"):
        numbagrad.optim.LBFGS([z.requires_grad_()])


def test_dlpack_both_ways():
    z = numbagrad.tensor([1 + 2j, 3 - 1j])
    t = torch.from_dlpack(z)
    assert t.dtype == torch.complex64 and t.tolist() == [1 + 2j, 3 - 1j]
    back = numbagrad.from_dlpack(torch.tensor([1j, 2 + 0j], dtype=torch.complex128))
    assert back.dtype is numbagrad.complex128 and back.tolist() == [1j, 2 + 0j]


def test_cuda_refuses_complex():
    from numbagrad._device import to_cuda

    with pytest.raises(NotImplementedError, match="complex tensors on CUDA"):
        to_cuda(np.zeros(2, np.complex64), "cuda")


def test_repr_matches_torch():
    cases = [
        [1 + 2j, 3 - 1j],
        [1.5 + 2j, 3 - 1e-5j],
        [[0.25 - 1j, 2 + 0.5j]],
        1 + 2j,
        [1.5 + 20j, 1 + 1j],
        [-76.055 - 43.0069j, -100.055 + 0j],
        [1 + 1j, -10 - 200j],
        [0.001 + 1j, 123.5 - 4.25j],
    ]
    for v in cases:
        assert repr(numbagrad.tensor(v)) == repr(torch.tensor(v)).replace("torch", "numbagrad")
    a = numbagrad.tensor([1j], dtype=numbagrad.complex128)
    assert repr(a) == "tensor([0.+1.j], dtype=numbagrad.complex128)"
    z = numbagrad.tensor([1 + 1j], requires_grad=True)
    assert repr(z) == "tensor([1.+1.j], requires_grad=True)"


def _inplace_through_views(m):
    z = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    w = z * 2
    w.real.mul_(3)  # writes through real/imag views of a tensor with history
    w.imag[1] = 5.0
    r = w.imag
    w.mul_(1 + 1j)  # r is now stale: re-derived from w's new history
    out = w.sum().abs() + r.sum() * 2 + (w * w).real.sum() + m.view_as_real(w)[0, 1]
    out.backward()
    return out, z.grad


def test_inplace_writes_through_real_imag_views_are_differentiated():
    a, ga = _inplace_through_views(numbagrad)
    b, gb = _inplace_through_views(torch)
    _close(a, b)
    _close(ga, gb)


def test_save_load_roundtrip(tmp_path):
    z = numbagrad.randn(3, dtype=numbagrad.cdouble)
    buf = io.BytesIO()
    numbagrad.save({"z": z, "w": z[1:]}, buf)
    buf.seek(0)
    out = numbagrad.load(buf)
    assert out["z"].dtype is numbagrad.complex128 and out["z"].tolist() == z.tolist()
    p = tmp_path / "c.pt"
    torch.save({"c": torch.tensor([1 + 2j, -1j])}, p)
    assert numbagrad.load(p)["c"].tolist() == [1 + 2j, -1j]


# -- autograd ----------------------------------------------------------------------------------
_FUNCS = [
    lambda m, z, w: z * w,
    lambda m, z, w: (z / w).exp(),
    lambda m, z, w: z.abs() * w,
    lambda m, z, w: m.angle(z) + w.real,
    lambda m, z, w: m.sgn(z) + w.conj(),
    lambda m, z, w: z**2 + w.sigmoid() + z**w,
    lambda m, z, w: (z.rsqrt() + w.log()).tanh().sqrt(),
    lambda m, z, w: m.view_as_real(z) * w.imag.unsqueeze(-1),
    lambda m, z, w: m.view_as_complex(m.view_as_real(z) * 2) * w,
    lambda m, z, w: (z.unsqueeze(0) * w.unsqueeze(1)) @ z.reshape(4, 1),
    lambda m, z, w: m.einsum("i,j->ij", z, w).sum(0) * 1j,
    lambda m, z, w: m.polar(z.abs(), w.angle()),
    lambda m, z, w: m.complex(z.real, w.imag) * z,
    lambda m, z, w: (z.mean() + w.sum()) / (z - w),
    lambda m, z, w: z.real.sin() + w.imag * 1j,
    lambda m, z, w: (z.acos() + w.atanh()) * z.cosh(),
    lambda m, z, w: w.real.to(m.complex128) * z + m.real(z * w),
    lambda m, z, w: m.var(z) + z.std(correction=0) * w,
    lambda m, z, w: m.linalg.vector_norm(z, 3) + m.norm(w) * z + m.linalg.norm(z, float("inf")),
    lambda m, z, w: m.linalg.matrix_norm(m.outer(z, w)) + m.linalg.matrix_norm(m.outer(z, w), 1),
]


def _pair(m, requires_grad=True):
    rng = np.random.default_rng(1)
    z, w = _cplx(4, rng), _cplx(4, rng)
    return m.tensor(z, requires_grad=requires_grad), m.tensor(w, requires_grad=requires_grad)


@pytest.mark.parametrize("k", range(len(_FUNCS)))
def test_gradients_match_torch(k):
    f = _FUNCS[k]
    nz, nw = _pair(numbagrad)
    tz, tw = _pair(torch)
    a, b = f(numbagrad, nz, nw), f(torch, tz, tw)
    _close(a, b, rtol=1e-10, atol=1e-12)
    g = RNG.standard_normal(tuple(b.shape))
    if b.is_complex():
        g = g + 1j * RNG.standard_normal(tuple(b.shape))
    ga = numbagrad.autograd.grad(a, (nz, nw), numbagrad.tensor(g), allow_unused=True)
    gb = torch.autograd.grad(b, (tz, tw), torch.tensor(g), allow_unused=True)
    for x, y in zip(ga, gb):
        assert (x is None) == (y is None)
        if x is not None:
            _close(x, y, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("k", range(len(_FUNCS)))
def test_gradcheck_complex(k):
    f = _FUNCS[k]
    z, w = _pair(numbagrad)
    assert numbagrad.autograd.gradcheck(
        lambda a, b: f(numbagrad, a, b),
        (z, w),
        check_forward_ad=True,
        check_batched_grad=True,
        check_batched_forward_grad=True,
    )
    assert numbagrad.autograd.gradgradcheck(lambda a, b: f(numbagrad, a, b), (z, w))


def test_gradcheck_catches_a_wrong_complex_rule():
    """A rule missing its conjugation (``g * f'(z)`` instead of ``g * conj(f'(z))``) is
    caught: the complex gradcheck checks both Wirtinger derivatives."""
    from numbagrad.ops import Primitive, bind

    class BadSquare(Primitive, register=False):
        complex_ok = True
        saves_inputs = (0,)

        @staticmethod
        def impl(be, x):
            return x * x

        @staticmethod
        def vjp(ctx, g):
            (x,) = ctx.saved()
            return g * 2 * x  # wrong for complex: should be g * conj(2 x)

    z = numbagrad.tensor(_cplx(3), requires_grad=True)
    assert not numbagrad.autograd.gradcheck(
        lambda a: bind(BadSquare, (a,)), (z,), raise_exception=False
    )
    x = numbagrad.tensor(RNG.standard_normal(3), requires_grad=True)
    assert numbagrad.autograd.gradcheck(lambda a: bind(BadSquare, (a,)), (x,))


@pytest.mark.parametrize("k", range(len(_FUNCS)))
def test_jvp_matches_torch(k):
    f = _FUNCS[k]
    z, w = _pair(numbagrad, False)
    tz, tw = _pair(torch, False)
    rng = np.random.default_rng(5)
    u, v = _cplx(4, rng), _cplx(4, rng)
    import torch.autograd.forward_ad as tfwd

    import numbagrad.autograd.forward_ad as nfwd

    with nfwd.dual_level():
        out = f(
            numbagrad,
            nfwd.make_dual(z, numbagrad.tensor(u)),
            nfwd.make_dual(w, numbagrad.tensor(v)),
        )
        ta = nfwd.unpack_dual(out).tangent
    with tfwd.dual_level():
        out = f(torch, tfwd.make_dual(tz, torch.tensor(u)), tfwd.make_dual(tw, torch.tensor(v)))
        tb = tfwd.unpack_dual(out).tangent
    _close(ta, tb, rtol=1e-9, atol=1e-12)


def test_backward_of_complex_output_needs_a_gradient():
    z = numbagrad.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * z).sum().backward()
    (z * z).sum().abs().backward()  # a real loss: fine
    tz = torch.tensor([1 + 1j], requires_grad=True)
    (tz * tz).sum().abs().backward()
    _close(z.grad, tz.grad)
    # a real leaf of a complex computation gets a real gradient (the real part)
    x = numbagrad.tensor([0.5, -1.0], requires_grad=True)
    ((x * (1 + 2j)).exp().abs() ** 2).sum().backward()
    tx = torch.tensor([0.5, -1.0], requires_grad=True)
    ((tx * (1 + 2j)).exp().abs() ** 2).sum().backward()
    _close(x.grad, tx.grad)


def test_func_transforms_on_complex():
    z = numbagrad.tensor([1 + 1j, 2j])
    tz = torch.tensor([1 + 1j, 2j])
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        numbagrad.func.grad(lambda x: (x * x).sum())(z)
    _close(
        numbagrad.func.grad(lambda x: (x * x).abs().sum())(z),
        torch.func.grad(lambda x: (x * x).abs().sum())(tz),
    )
    _close(numbagrad.vmap(lambda x: x * x.conj())(z), torch.vmap(lambda x: x * x.conj())(tz))
    zz = numbagrad.tensor(_cplx((3, 4)))
    tzz = torch.tensor(zz.numpy())
    for fn in (
        lambda m, x: m.fft.fft(x),
        lambda m, x: m.view_as_real(x * 2).sum(-1),
        lambda m, x: x.abs() + m.angle(x),
        lambda m, x: m.sgn(x) * x.real,
    ):
        for d in (0, 1):
            _close(
                numbagrad.vmap(lambda x, fn=fn: fn(numbagrad, x), in_dims=d)(zz),
                torch.vmap(lambda x, fn=fn: fn(torch, x), in_dims=d)(tzz),
                rtol=1e-10,
                atol=1e-12,
            )
    with pytest.raises(RuntimeError, match="jacrev: Expected all inputs to be real"):
        numbagrad.func.jacrev(lambda x: x * x)(z)
    with pytest.raises(RuntimeError, match="jacfwd: Expected all inputs to be real"):
        numbagrad.func.jacfwd(lambda x: x * x)(z)
    with pytest.raises(RuntimeError, match="jacrev: Expected all outputs to be real"):
        numbagrad.func.jacrev(lambda x: x * 1j)(numbagrad.ones(2))
    # vjp and jvp take complex values, as torch.func's
    out, fn = numbagrad.func.vjp(lambda x: x * x, z)
    tout, tfn = torch.func.vjp(lambda x: x * x, tz)
    _close(fn(numbagrad.ones_like(out))[0], tfn(torch.ones_like(tout))[0])
    _close(
        numbagrad.func.jvp(lambda x: x.exp(), (z,), (z,))[1],
        torch.func.jvp(lambda x: x.exp(), (tz,), (tz,))[1],
    )


def test_custom_function_with_complex_tensors():
    class Scale(numbagrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * (2 + 1j)

        @staticmethod
        def backward(ctx, g):
            return g * (2 - 1j)  # the conjugate of the local derivative

    z = numbagrad.tensor(_cplx(3), requires_grad=True)
    assert numbagrad.autograd.gradcheck(Scale.apply, (z,))


def test_gradient_descent_on_complex_parameter():
    """A step along -grad decreases a real loss of a complex parameter (PyTorch's
    convention)."""
    target = numbagrad.tensor([1 - 2j, 0.5j])
    p = numbagrad.zeros(2, dtype=numbagrad.cfloat, requires_grad=True)
    losses = []
    for _ in range(50):
        loss = ((p - target).abs() ** 2).sum()
        (g,) = numbagrad.autograd.grad(loss, p)
        with numbagrad.no_grad():
            p -= 0.1 * g
        losses.append(loss.item())
    assert losses[-1] < 1e-6 < losses[0]


_OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.01}),
    ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("ASGD", {}),
    ("Rprop", {}),
]


@pytest.mark.parametrize("name,kw", _OPTIMIZERS, ids=[o[0] for o in _OPTIMIZERS])
def test_optimizers_step_complex_parameters_as_torch(name, kw):
    """As PyTorch's: a complex parameter steps as its view_as_real, its state stays
    complex (NOTE [Complex parameters] in optim/optimizer.py)."""
    rng = np.random.default_rng(0)
    p0 = (_cplx((3, 4), rng)).astype(np.complex64)
    tgt = (_cplx((3, 4), rng)).astype(np.complex64)
    results = []
    for m in (numbagrad, torch):
        p = m.tensor(p0, requires_grad=True)
        opt = getattr(m.optim, name)([p], **kw)
        for _ in range(5):
            opt.zero_grad()
            loss = ((p - m.tensor(tgt)).abs() ** 2).sum() + (p * p).real.sum() * 0.1
            loss.backward()
            opt.step()
        results.append((p, opt.state_dict()["state"][0]))
    (a, sa), (b, sb) = results
    _close(a, b, rtol=1e-4, atol=1e-5)
    assert set(sa) == set(sb)
    for k, v in sa.items():
        if hasattr(v, "dtype"):
            _close(v, sb[k], rtol=1e-4, atol=1e-5)


def test_testing_assert_close_compares_complex_values():
    z = numbagrad.tensor([1 + 2j, 3 - 1j])
    numbagrad.testing.assert_close(z, z + 1e-7j)
    with pytest.raises(AssertionError, match="not close"):
        numbagrad.testing.assert_close(z, z + 1e-3j)  # (only the imaginary parts differ)
    for bad in (z.conj(), z * 1.001):
        with pytest.raises(AssertionError):
            numbagrad.testing.assert_close(z, bad)
        with pytest.raises(AssertionError):
            torch.testing.assert_close(torch.tensor(z.numpy()), torch.tensor(bad.numpy()))


def test_view_as_real_of_strided_and_empty_complex_tensors():
    """view_as_real takes any strides, as PyTorch's (only view_as_complex needs a
    contiguous last dimension), and view_as_complex of an empty tensor works whatever
    strides NumPy gave it (fuzz seeds 703661, 704078)."""
    base = np.arange(24.0).reshape(3, 4, 2)
    for m in (numbagrad, torch):
        c = m.view_as_complex(m.tensor(base))[:, ::2]
        r = m.view_as_real(c)
        assert tuple(r.shape) == (3, 2, 2)
        np.testing.assert_array_equal(r.numpy(), base[:, ::2])
    z = numbagrad.zeros(2, 0, dtype=numbagrad.int64).transpose(1, 0).acosh()
    c = numbagrad.view_as_complex(numbagrad.stack([z, z], -1))
    assert tuple(numbagrad.view_as_real(numbagrad.rsqrt(c)).shape) == (0, 2, 2)


def test_complex_reciprocal_special_values_match_torch():
    """reciprocal is 1 / z by complex division, as PyTorch's (np.reciprocal gave the real
    part of 1 / (-0 + 1j) as -0.0) (fuzz seed 700510). (sgn is checked on a short tensor:
    PyTorch's own sgn differs between its scalar and vectorised loops, known_deviations
    torch-complex-vectorised-loop.)"""
    inf, nan = float("inf"), float("nan")
    parts = [(-0.0, 1.0), (0.0, -2.0), (inf, 0.0), (-inf, 5.0), (inf, -5.0), (3.0, 0.0)]
    vals = [complex(*p) for p in [*parts, (0.0, 0.0), (nan, 1.0)]]
    for fn in ("reciprocal", "sgn"):  # (these 8 complex64 values: PyTorch's scalar loop)
        a = numbagrad.view_as_real(getattr(numbagrad, fn)(numbagrad.tensor(vals))).numpy()
        b = torch.view_as_real(getattr(torch, fn)(torch.tensor(vals))).numpy()
        np.testing.assert_array_equal(a, b)
        ok = ~np.isnan(b)  # (a NaN's sign bit means nothing)
        np.testing.assert_array_equal(np.signbit(a[ok]), np.signbit(b[ok]))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_sqrt_rsqrt_gradients_at_zero_and_overflow_match_torch(dt):
    """sqrt's gradient is grad / (2 * result) (complex division by 0 is +-inf in each part,
    where grad * (0.5 / 0) was NaN) and rsqrt's -0.5 * grad * conj(result ** 3) with the
    constant on the cotangent (an overflowed cube times -0.5 + 0j was NaN in both parts
    where PyTorch's product keeps +-inf: fuzz seed 701471). The values have a zero part,
    so the complex products meet no overflowing sum (where PyTorch's scalar and
    vectorised loops differ)."""
    inf = float("inf")
    parts = [0.0, -0.0, 1e-30, -1e-30, 1.0, -2.5, 1e30, inf, -inf]
    zs = [complex(a, b) for a in parts for b in parts if a == 0 or b == 0]
    for name in ("sqrt", "rsqrt"):
        for cot in (complex(-1.98, -0.31), complex(0.5, 0.0)):
            got = []
            for m in (numbagrad, torch):
                z = m.tensor(zs, dtype=getattr(m, dt), requires_grad=True)
                r = getattr(m, name)(z)
                (g,) = m.autograd.grad(r, [z], m.full(r.shape, cot, dtype=r.dtype))
                got.append(m.view_as_real(g).numpy())
            np.testing.assert_allclose(got[0], got[1], rtol=1e-5, err_msg=f"{name} {cot}")


@pytest.mark.parametrize(
    "eq, shapes",
    [
        ("bix,iox->box", [(4, 3, 5), (3, 6, 5)]),  # an FNO's spectral product
        ("ij,k->", [(2, 3), (4,)]),  # indices summed in one operand only
        ("bij,bjk->bik", [(1, 2, 3), (1, 3, 4)]),
        ("i,i->", [(5,), (5,)]),
    ],
)
def test_complex_einsum_as_batched_matmul(eq, shapes):
    """NOTE [Einsum as a batched matmul]: two complex operands, values and gradients as
    PyTorch's, and a complex result where an index is summed in one operand only."""
    rng = np.random.default_rng(7)
    arrs = [_cplx(s, rng).astype(np.complex64) for s in shapes]
    nx = [numbagrad.tensor(a, requires_grad=True) for a in arrs]
    tx = [torch.tensor(a, requires_grad=True) for a in arrs]
    ny, ty = numbagrad.einsum(eq, *nx), torch.einsum(eq, *tx)
    assert ny.dtype == numbagrad.complex64 and ny.shape == tuple(ty.shape)
    _close(ny, ty, rtol=1e-5, atol=1e-5)
    (ny.abs() ** 2).sum().backward()
    (ty.abs() ** 2).sum().backward()
    for a, b in zip(nx, tx):
        _close(a.grad, b.grad, rtol=1e-4, atol=1e-4)
    # a real and a complex operand: PyTorch's bmm refuses the pair, a product promotes
    try:
        want = torch.einsum(eq, tx[0].detach().real, tx[1].detach())
    except RuntimeError:
        with pytest.raises(RuntimeError, match="expected scalar type Float"):
            numbagrad.einsum(eq, nx[0].detach().real, nx[1].detach())
    else:
        _close(numbagrad.einsum(eq, nx[0].detach().real, nx[1].detach()), want, 1e-5, 1e-5)
