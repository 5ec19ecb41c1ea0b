"""numbagrad.fft against torch.fft: values, gradients (``autograd.grad`` with complex
``grad_outputs``), forward-mode tangents and vmap, over lengths 1, odd, even and prime,
every ``norm`` and ``dim``; the window functions against PyTorch's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numbagrad

torch = pytest.importorskip("torch")

NORMS = [None, "backward", "ortho", "forward"]
C2C = ["fft", "ifft"]
R2C = ["rfft", "ihfft"]
C2R = ["irfft", "hfft"]
ND = ["fftn", "ifftn", "fft2", "ifft2", "rfftn", "rfft2", "irfftn", "irfft2", "hfftn", "hfft2",
      "ihfftn", "ihfft2"]  # fmt: skip
REAL_IN = {"rfft", "ihfft", "rfftn", "rfft2", "ihfftn", "ihfft2"}


def _input(name, shape, rng):
    x = rng.standard_normal(shape)
    if name not in REAL_IN:
        x = x + 1j * rng.standard_normal(shape)
    return x


def _np(t):
    t = t.detach()
    if hasattr(t, "resolve_conj"):
        t = t.resolve_conj()
    return np.asarray(t.numpy())


def _check(name, x, kwargs, rng, grad=True):
    """Values and gradients of ``numbagrad.fft.<name>`` and ``torch.fft.<name>`` agree."""
    a_in = numbagrad.tensor(x, requires_grad=grad)
    b_in = torch.tensor(x, requires_grad=grad)
    try:
        b = getattr(torch.fft, name)(b_in, **kwargs)
    except (RuntimeError, IndexError, ValueError) as e:
        with pytest.raises(type(e)):
            getattr(numbagrad.fft, name)(a_in, **kwargs)
        return
    a = getattr(numbagrad.fft, name)(a_in, **kwargs)
    assert tuple(a.shape) == tuple(b.shape), (name, kwargs)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    tol = 1e-9 if a.dtype in (numbagrad.float64, numbagrad.complex128) else 2e-5
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol, err_msg=f"{name} {kwargs}")
    if not grad or a.numel() == 0:
        return
    g = rng.standard_normal(tuple(b.shape))
    if b.is_complex():
        g = g + 1j * rng.standard_normal(tuple(b.shape))
    (ga,) = numbagrad.autograd.grad(a, a_in, numbagrad.tensor(g))
    (gb,) = torch.autograd.grad(b, b_in, torch.tensor(g))
    np.testing.assert_allclose(_np(ga), _np(gb), rtol=1e-9, atol=1e-9, err_msg=f"grad {name}")


lengths = st.sampled_from([1, 2, 3, 4, 5, 7, 8, 11, 13, 16])


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(C2C + R2C + C2R),
    length=lengths,
    n=st.one_of(st.none(), lengths),
    norm=st.sampled_from(NORMS),
    dim=st.sampled_from([0, 1, -1]),
    seed=st.integers(0, 2**16),
)
def test_1d_transforms_match_torch(name, length, n, norm, dim, seed):
    rng = np.random.default_rng(seed)
    shape = [3, 3]
    shape[dim] = length
    _check(name, _input(name, tuple(shape), rng), {"n": n, "dim": dim, "norm": norm}, rng)


@settings(max_examples=50, deadline=None)
@given(
    name=st.sampled_from(ND),
    shape=st.lists(st.sampled_from([1, 2, 3, 5, 6]), min_size=2, max_size=3),
    use_s=st.booleans(),
    s_vals=st.lists(st.sampled_from([-1, 1, 2, 4, 7]), min_size=2, max_size=2),
    norm=st.sampled_from(NORMS),
    seed=st.integers(0, 2**16),
)
def test_nd_transforms_match_torch(name, shape, use_s, s_vals, norm, seed):
    rng = np.random.default_rng(seed)
    kwargs = {"norm": norm}
    if name.endswith("2"):
        if use_s:
            kwargs["s"] = tuple(s_vals)
    else:
        kwargs["dim"] = (0, -1)
        if use_s:
            kwargs["s"] = tuple(s_vals)
    _check(name, _input(name, tuple(shape), rng), kwargs, rng)


@pytest.mark.parametrize("name", C2C + R2C + C2R + ND)
def test_defaults_match_torch(name):
    rng = np.random.default_rng(1)
    _check(name, _input(name, (4, 6), rng), {}, rng)
    _check(
        name,
        _input(name, (3, 5), rng).astype(np.complex64 if name not in REAL_IN else np.float32),
        {},
        rng,
        grad=False,
    )


def test_integer_and_float32_inputs():
    x = numbagrad.arange(6)
    assert numbagrad.fft.fft(x).dtype is numbagrad.complex64
    assert numbagrad.fft.rfft(x.float()).dtype is numbagrad.complex64
    assert numbagrad.fft.irfft(numbagrad.fft.rfft(x.double())).dtype is numbagrad.float64
    np.testing.assert_allclose(
        numbagrad.fft.fft(x).numpy(), torch.fft.fft(torch.arange(6)).numpy(), rtol=1e-6
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.fft.fft(m.ones(3), n=0),
        lambda m: m.fft.fft(m.ones(3), dim=2),
        lambda m: m.fft.fft(m.tensor(1.0)),
        lambda m: m.fft.rfft(m.ones(3, dtype=m.complex64)),
        lambda m: m.fft.ihfft(m.ones(3, dtype=m.complex64)),
        lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
        lambda m: m.fft.fftn(m.ones(3, 3), dim=(0, 0)),
        lambda m: m.fft.fftn(m.ones(3, 3), s=(2,), dim=(0, 1)),
        lambda m: m.fft.fftn(m.ones(3), s=(2, 2)),
        lambda m: m.fft.fft(m.ones(3), norm="bad"),
    ],
)
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)):
        call(numbagrad)


def test_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(2)
    z = numbagrad.tensor(rng.standard_normal((2, 5)) + 1j * rng.standard_normal((2, 5)),
                         requires_grad=True)  # fmt: skip
    x = numbagrad.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    F = numbagrad.fft
    fns = [
        (lambda a: F.fft(a, n=7, norm="ortho"), z),
        (lambda a: F.ifft2(a, s=(3, 4)), z),
        (lambda a: F.rfft(a, n=4), x),
        (lambda a: F.rfftn(a, norm="forward"), x),
        (lambda a: F.irfft(a, n=9), z),
        (lambda a: F.irfftn(a, s=(3, 6)), z),
        (lambda a: F.hfft(a), z),
        (lambda a: F.ihfft2(a), x),
        (lambda a: F.hfftn(a, norm="ortho"), z),
        (lambda a: F.fftshift(F.fft(a), dim=-1), x),
        (lambda a: F.ifftshift(a), z),
    ]
    for f, a in fns:
        assert numbagrad.autograd.gradcheck(
            f, (a,), check_forward_ad=True, check_batched_grad=True,
            check_batched_forward_grad=True,
        )  # fmt: skip
        assert numbagrad.autograd.gradgradcheck(f, (a,))


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn"])
def test_jvp_and_vmap_match_torch(name):
    rng = np.random.default_rng(3)
    x = _input(name, (3, 6), rng)
    t = _input(name, (3, 6), rng)
    import torch.autograd.forward_ad as tfwd

    import numbagrad.autograd.forward_ad as nfwd

    with nfwd.dual_level():
        out = getattr(numbagrad.fft, name)(nfwd.make_dual(numbagrad.tensor(x), numbagrad.tensor(t)))
        ta = nfwd.unpack_dual(out).tangent
    with tfwd.dual_level():
        out = getattr(torch.fft, name)(tfwd.make_dual(torch.tensor(x), torch.tensor(t)))
        tb = tfwd.unpack_dual(out).tangent
    np.testing.assert_allclose(_np(ta), _np(tb), rtol=1e-10, atol=1e-10)
    for d in (0, 1):
        va = numbagrad.vmap(getattr(numbagrad.fft, name), in_dims=d)(numbagrad.tensor(x))
        vb = torch.vmap(getattr(torch.fft, name), in_dims=d)(torch.tensor(x))
        np.testing.assert_allclose(_np(va), _np(vb), rtol=1e-10, atol=1e-10)
    # per-example gradients under vmap
    f = getattr(numbagrad.fft, name)
    g = numbagrad.vmap(numbagrad.func.grad(lambda v: (f(v).abs() ** 2).sum()))(numbagrad.tensor(x))
    tf = getattr(torch.fft, name)
    tg = torch.vmap(torch.func.grad(lambda v: (tf(v).abs() ** 2).sum()))(torch.tensor(x))
    np.testing.assert_allclose(_np(g), _np(tg), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.1])
def test_fftfreq_rfftfreq(n, d):
    for name in ("fftfreq", "rfftfreq"):
        for dt in (numbagrad.float32, numbagrad.float64):
            a = getattr(numbagrad.fft, name)(n, d, dtype=dt)
            b = getattr(torch.fft, name)(n, d, dtype=getattr(torch, str(dt).split(".")[-1]))
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
            assert a.dtype is dt


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_fftshift_ifftshift(dim):
    x = np.arange(35.0).reshape(5, 7)
    for name in ("fftshift", "ifftshift"):
        a = getattr(numbagrad.fft, name)(numbagrad.tensor(x), dim=dim)
        b = getattr(torch.fft, name)(torch.tensor(x), dim=dim)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize(
    "name,kw",
    [
        ("hann_window", {}),
        ("hamming_window", {}),
        ("hamming_window", {"alpha": 0.5, "beta": 0.4}),
        ("blackman_window", {}),
        ("bartlett_window", {}),
        ("kaiser_window", {}),
        ("kaiser_window", {"beta": 3.0}),
    ],
)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name, kw, n, periodic):
    for dt in ("float32", "float64"):
        a = getattr(numbagrad, name)(n, periodic, **kw, dtype=getattr(numbagrad, dt))
        b = getattr(torch, name)(n, periodic, **kw, dtype=getattr(torch, dt))
        assert a.dtype is getattr(numbagrad, dt)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert getattr(numbagrad, name)(6).dtype is numbagrad.float32
    np.testing.assert_allclose(
        getattr(numbagrad, name)(6).numpy(), getattr(torch, name)(6).numpy(), atol=1e-6
    )


def test_window_errors():
    with pytest.raises(RuntimeError, match="non-negative"):
        numbagrad.hann_window(-1)
    with pytest.raises(RuntimeError, match="floating point"):
        numbagrad.hann_window(4, dtype=numbagrad.int64)


def test_fft_on_cuda_raises_naming_the_op():
    from numbagrad.ops.spectral import FftC2C

    class FakeBackend:  # a backend without FFTs (NOTE [Backend protocol]: ``fft`` None)
        name = "cuda"
        fft = None

    with pytest.raises(NotImplementedError, match=r"numbagrad\.fft\.fft: FFTs on CUDA"):
        FftC2C.impl(
            FakeBackend(), np.zeros(4, np.complex64), dims=(0,), norm="backward", forward=True
        )


_STFT_CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, win_length=12, normalized=True),
    dict(n_fft=15, hop_length=4, center=False),
    dict(n_fft=16, onesided=False),
    dict(n_fft=8, pad_mode="constant"),
]


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("kw", _STFT_CASES, ids=str)
@pytest.mark.parametrize("shape", [(64,), (2, 50)])
@pytest.mark.parametrize("hann", [False, True])
def test_stft_istft_match_torch(kw, shape, hann):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape)
    wl = kw.get("win_length", kw["n_fft"])
    wn = numbagrad.hann_window(wl, dtype=numbagrad.float64) if hann else None
    wt = torch.hann_window(wl, dtype=torch.float64) if hann else None
    a_in, b_in = numbagrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a = numbagrad.stft(a_in, window=wn, return_complex=True, **kw)
    b = torch.stft(b_in, window=wt, return_complex=True, **kw)
    assert a.shape == tuple(b.shape) and a.dtype is numbagrad.complex128
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(tuple(b.shape)) + 1j * rng.standard_normal(tuple(b.shape))
    (ga,) = numbagrad.autograd.grad(a, a_in, numbagrad.tensor(g))
    (gb,) = torch.autograd.grad(b, b_in, torch.tensor(g))
    np.testing.assert_allclose(_np(ga), _np(gb), rtol=1e-10, atol=1e-10)
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    for length in (None, shape[-1], shape[-1] + 3):
        sa, sb = a.detach().requires_grad_(), b.detach().requires_grad_()
        try:
            yb = torch.istft(sb, window=wt, length=length, **ikw)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                numbagrad.istft(sa, window=wn, length=length, **ikw)
            continue
        ya = numbagrad.istft(sa, window=wn, length=length, **ikw)
        assert ya.shape == tuple(yb.shape)
        np.testing.assert_allclose(_np(ya), _np(yb), rtol=1e-9, atol=1e-10)
        h = rng.standard_normal(tuple(yb.shape))
        (ga,) = numbagrad.autograd.grad(ya, sa, numbagrad.tensor(h))
        (gb,) = torch.autograd.grad(yb, sb, torch.tensor(h))
        np.testing.assert_allclose(_np(ga), _np(gb), rtol=1e-9, atol=1e-10)


def test_stft_errors_match_torch():
    x = numbagrad.randn(32)
    with pytest.raises(RuntimeError, match="return_complex"):
        numbagrad.stft(x, 8)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        numbagrad.stft(numbagrad.randn(2, 2, 8), 4, return_complex=True)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        numbagrad.istft(numbagrad.randn(5, 3), 8)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        r = numbagrad.stft(x, 8, window=numbagrad.hann_window(8), return_complex=False)
    assert r.shape == (5, 17, 2) and r.dtype is numbagrad.float32


@pytest.mark.parametrize(
    "name, shape, axis, n",
    [
        ("rfft", (300, 1024), -1, None),
        ("irfft", (300, 513), -1, 1024),
        ("fft", (3, 512, 200), 1, None),
        ("ifft", (512, 600), 0, 700),
        ("rfft", (2, 40, 4096), -1, 4000),
    ],
)
def test_threaded_fft_slabs_match_numpy(name, shape, axis, n):
    """NOTE [Threaded FFTs]: a large batch split across threads gives NumPy's result bit
    for bit, whichever axis is transformed and split."""
    from numbagrad.kernels.cpu import fft as cpu_fft
    from numbagrad.kernels.cpu import threads

    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape)
    if name in ("irfft", "fft", "ifft"):
        a = a + 1j * rng.standard_normal(shape)
    want = getattr(np.fft, name)(a, n=n, axis=axis)
    out = np.empty_like(want)
    saved = threads.N_THREADS
    threads.set_num_threads(2)
    try:
        got = getattr(cpu_fft.FFT, name)(a, n=n, axis=axis, out=out)
    finally:
        threads.set_num_threads(saved)
    assert got is out
    np.testing.assert_array_equal(got, want)
