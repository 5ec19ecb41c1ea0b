"""``numbagrad.special`` (and ``nextafter``) on CUDA against the CPU: values, dtypes, shapes
and gradients through ``backward``, for strided views, 0-d and empty tensors, integer,
float32 and float16 inputs, special values (poles, infinities, NaN), a size above one block,
the errors, and backward without host copies (NOTE [CUDA special functions])."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver

RNG = np.random.default_rng(8)

# the unary maps of kernels/cuda/special.py, with a domain each (low, high)
UNARY = {
    "erfc": (numbagrad.special.erfc, -2.0, 2.0),
    "erfcx": (numbagrad.special.erfcx, -1.5, 3.0),
    "erfinv": (numbagrad.erfinv, -0.9, 0.9),
    "lgamma": (numbagrad.lgamma, 0.3, 4.0),
    "digamma": (numbagrad.digamma, 0.3, 4.0),
    "i0": (numbagrad.i0, -3.0, 3.0),
    "i0e": (numbagrad.special.i0e, 0.3, 3.0),
    "i1": (numbagrad.special.i1, -3.0, 3.0),
    "i1e": (numbagrad.special.i1e, 0.3, 3.0),
    "bessel_j0": (numbagrad.special.bessel_j0, -4.9, 4.9),
    "bessel_j1": (numbagrad.special.bessel_j1, -4.9, 4.9),
    "ndtr": (numbagrad.special.ndtr, -3.0, 3.0),
    "ndtri": (numbagrad.special.ndtri, 0.05, 0.95),
    "log_ndtr": (numbagrad.special.log_ndtr, -4.0, 3.0),
    "entr": (numbagrad.special.entr, 0.3, 2.0),
}

# two-operand functions: (fn, domain of the first, domain of the second); gradients flow to
# the second only for gammainc/gammaincc/zeta (NOTE [Special-function gradients])
BINARY = {
    "gammainc": (numbagrad.special.gammainc, (0.5, 3.0), (0.2, 4.0)),
    "gammaincc": (numbagrad.special.gammaincc, (0.5, 3.0), (0.2, 4.0)),
    "zeta": (numbagrad.special.zeta, (1.5, 4.0), (0.3, 3.0)),
    "xlogy": (numbagrad.xlogy, (-2.0, 2.0), (0.3, 2.0)),
    "xlog1py": (numbagrad.special.xlog1py, (-2.0, 2.0), (-0.7, 2.0)),
}
FIRST_GRAD = {"xlogy", "xlog1py"}  # differentiable in both operands


def _compare(out_g, out_c, rtol=1e-6, atol=1e-8):
    assert out_g.is_cuda and out_g.shape == out_c.shape and out_g.dtype == out_c.dtype
    np.testing.assert_allclose(
        out_g.detach().cpu().numpy(), out_c.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True
    )


def _check(fn, *arrays, view=None, grads=None, rtol=1e-6, atol=1e-8):
    """``fn`` of CPU and CUDA tensors made from ``arrays`` (each passed through ``view``, e.g.
    a transpose, so the kernels read strided memory): the same values, and the same gradients
    of ``sum(fn(...) * w)`` for a fixed random ``w`` for the inputs in ``grads``."""
    grads = range(len(arrays)) if grads is None else grads
    outs, leaves = [], []
    for device in ("cpu", "cuda"):
        ts = [
            numbagrad.tensor(a, device=device, requires_grad=i in grads and a.dtype.kind == "f")
            for i, a in enumerate(arrays)
        ]
        leaves.append(ts)
        args = [t if view is None else view(t) for t in ts]
        outs.append(fn(*args))
    out_c, out_g = outs
    _compare(out_g, out_c, rtol, atol)
    if not out_c.requires_grad:
        assert not out_g.requires_grad
        return
    w = RNG.standard_normal(tuple(out_c.shape))
    (out_c * numbagrad.tensor(w, dtype=out_c.dtype)).sum().backward()
    (out_g * numbagrad.tensor(w, dtype=out_g.dtype, device="cuda")).sum().backward()
    for c, g in zip(*leaves, strict=True):
        assert (c.grad is None) == (g.grad is None)
        if c.grad is not None:
            assert g.grad.is_cuda and g.grad.dtype == c.grad.dtype
            np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol)


def _uniform(low, high, shape, dtype=np.float64):
    return RNG.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_strided(name):
    fn, lo, hi = UNARY[name]
    _check(fn, _uniform(lo, hi, (3, 4)), view=lambda t: t.t())  # a transposed view


@pytest.mark.parametrize("name", ["lgamma", "erfcx", "i1e", "log_ndtr", "ndtri"])
def test_unary_float32_sliced_0d_and_empty(name):
    fn, lo, hi = UNARY[name]
    _check(fn, _uniform(lo, hi, (2, 6), np.float32), view=lambda t: t[:, 1::2], rtol=1e-5)
    _check(fn, _uniform(lo, hi, ()))
    _check(fn, np.zeros((0, 3)))


def test_unary_integer_bool_and_float16_inputs():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    for fn in (numbagrad.lgamma, numbagrad.special.i0e, numbagrad.special.ndtr):
        _check(fn, x)  # integers give the default float dtype
        _check(fn, x > 2)
    h = _uniform(0.5, 3.0, (5,), np.float16)
    _check(numbagrad.digamma, h, grads=(), rtol=1e-3, atol=1e-3)
    _check(numbagrad.special.erfcx, h, grads=(), rtol=1e-3, atol=1e-3)


def test_special_values():
    """Poles, infinities, NaN and the domain edges: the CPU's answers."""
    v = np.array([0.0, -0.0, -1.0, -2.5, 1.0, -1e-300, 1e-300, 30.0, -30.0, 1e10, -1e10])
    v = np.concatenate([v, [np.inf, -np.inf, np.nan]])
    for fn, *_ in UNARY.values():
        _check(fn, v, grads=())
    for n in range(4):
        _check(lambda t, n=n: numbagrad.polygamma(n, t), v, grads=())
    a = np.array([0.0, 0.5, 1.0, 2.0, np.inf, np.nan, -1.0])
    x = np.array([0.0, 1.0, np.inf, np.nan, 1e-5, 100.0, -0.5])
    for fn, *_ in BINARY.values():
        _check(fn, a[:, None], x, grads=())  # every pair, broadcasting


def test_sizes_above_one_block():
    """Long enough that every launch needs many blocks (and, under the simulator, each
    thread several grid-stride steps)."""
    x = _uniform(0.2, 4.0, (2500,))
    _check(numbagrad.digamma, x)
    _check(lambda t: numbagrad.polygamma(2, t), x)
    a, x = _uniform(0.5, 3.0, (50, 1)), _uniform(0.2, 4.0, (50,))
    _check(numbagrad.special.gammaincc, a, x, grads=(1,))
    a, b = _uniform(-2.0, 2.0, (2500,)), _uniform(-2.0, 2.0, (2500,))
    _check(numbagrad.nextafter, a, b, grads=(), rtol=0, atol=0)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma(n):
    _check(lambda t: numbagrad.polygamma(n, t), _uniform(0.5, 3.0, (3, 4)), view=lambda t: t.t())
    _check(lambda t: t.polygamma(n), _uniform(0.5, 3.0, ()))
    f32 = _uniform(-2.9, 3.0, (6,), np.float32)  # float32: trigamma's reflection in float32
    _check(lambda t: numbagrad.polygamma(n, t), f32, rtol=1e-5, atol=1e-6)


def test_polygamma_errors():
    x = numbagrad.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="does not support negative n"):
        numbagrad.polygamma(-1, x)
    with pytest.raises(TypeError, match="must be int"):
        numbagrad.polygamma(1.5, x)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast_strided(name):
    fn, (alo, ahi), (xlo, xhi) = BINARY[name]
    a = _uniform(alo, ahi, (4, 1))
    x = _uniform(xlo, xhi, (3, 4))
    if name in FIRST_GRAD:
        a[0, 0] = 0.0  # the x == 0 branch
    grads = (0, 1) if name in FIRST_GRAD else (1,)
    # ``a`` a (4, 1) column broadcast against the transposed (4, 3) view of ``x``
    _check(lambda p, q: fn(p, q.t()), a, x, grads=grads)
    _check(fn, _uniform(alo, ahi, ()), _uniform(xlo, xhi, (5,)), grads=grads)  # 0-d and 1-d
    _check(fn, _uniform(alo, ahi, (0, 2)), _uniform(xlo, xhi, (2,)), grads=grads)  # empty


def test_binary_numbers_and_dtypes():
    y = _uniform(0.3, 2.0, (5,), np.float32)
    _check(lambda t: numbagrad.xlogy(2.5, t), y, rtol=1e-5)  # a number stays float32's
    _check(lambda t: numbagrad.special.xlog1py(t, 1.5), y, rtol=1e-5)
    _check(lambda t: numbagrad.special.zeta(t, 2.0), _uniform(1.5, 3.0, (4,)), grads=())
    ints = np.array([1, 2, 3], np.int64)
    _check(numbagrad.special.gammainc, ints, _uniform(0.2, 4.0, (3,)))
    _check(numbagrad.special.zeta, ints + 1, ints)  # both integers: the default float
    # a 0-d CPU tensor may join a CUDA op, as in PyTorch
    q = numbagrad.tensor(1.5, dtype=numbagrad.float64)
    s = numbagrad.tensor(_uniform(1.5, 3.0, (3,)), device="cuda")
    _compare(numbagrad.special.zeta(s, q), numbagrad.special.zeta(s.cpu(), q))


def test_binary_errors():
    a = numbagrad.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="xlogy: the size of tensor a"):
        numbagrad.xlogy(a, numbagrad.ones(4, device="cuda"))
    with pytest.raises(RuntimeError, match="gammainc: the size of tensor a"):
        numbagrad.special.gammainc(a, numbagrad.ones((2, 2), device="cuda"))
    with pytest.raises(RuntimeError, match="same device"):
        numbagrad.special.zeta(a, numbagrad.ones(3))
    # PyTorch has no derivative for the first argument of gammainc/zeta
    x = numbagrad.ones(3, device="cuda", requires_grad=True)
    with pytest.raises(NotImplementedError, match="igamma: input"):
        numbagrad.special.gammainc(x, a).sum().backward()


def test_multigammaln():
    for p in (1, 3):
        _check(lambda t, p=p: numbagrad.special.multigammaln(t, p), _uniform(1.3, 3.0, (2, 3)))


def test_nextafter():
    """Bit for bit PyTorch's, in float64, float32 and float16: zeros of both signs,
    subnormals, the largest finite values, infinities and NaN; no gradient."""
    torch = pytest.importorskip("torch")
    for dt in (np.float64, np.float32, np.float16):
        info = np.finfo(dt)
        tiny, normal, big = info.smallest_subnormal, info.smallest_normal, info.max
        x = np.array(
            [1.0, -1.0, 0.0, -0.0, tiny, -tiny, normal, big, -big, np.inf, -np.inf, np.nan, 3.0],
            dtype=dt,
        )
        y = np.array([np.inf, -np.inf, 0.0, -0.0, 1.0, np.nan], dtype=dt)
        got = numbagrad.nextafter(
            numbagrad.tensor(x[:, None], device="cuda"), numbagrad.tensor(y, device="cuda")
        )
        ref = torch.nextafter(torch.tensor(x[:, None]), torch.tensor(y)).numpy()
        assert got.is_cuda and got.dtype.np == dt
        assert np.array_equal(got.cpu().numpy().view(np.uint8), ref.view(np.uint8)), dt
    v = _uniform(-2.0, 2.0, (3, 4))
    _check(lambda p, q: p.nextafter(q.t()), v, _uniform(-2.0, 2.0, (4, 3)), rtol=0, atol=0)
    _check(lambda t: numbagrad.nextafter(t, numbagrad.tensor(0.0)), v.astype(np.float32))
    _check(numbagrad.nextafter, np.zeros((0,)), np.zeros((1,)), rtol=0, atol=0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        i = numbagrad.tensor([1, 2], device="cuda")
        numbagrad.nextafter(i, i)
    with pytest.raises(RuntimeError, match="nextafter: the size of tensor a"):
        numbagrad.nextafter(numbagrad.ones(2, device="cuda"), numbagrad.ones(3, device="cuda"))


def test_backward_stays_on_device():
    x = numbagrad.tensor(_uniform(0.5, 3.0, (4,)), device="cuda", requires_grad=True)
    q = numbagrad.tensor(_uniform(0.5, 3.0, (4,)), device="cuda", requires_grad=True)
    loss = (
        numbagrad.lgamma(x)
        + numbagrad.special.i1(x)
        + numbagrad.special.i1e(x)
        + numbagrad.special.erfcx(x)
        + numbagrad.special.log_ndtr(x)
        + numbagrad.polygamma(2, x)
        + numbagrad.xlogy(x, q)
        + numbagrad.special.zeta(x.detach() + 1.0, q)
        + numbagrad.special.gammainc(x.detach(), q)
    ).sum()
    before = dict(_driver.COPIES)
    loss.backward()
    assert _driver.COPIES == before  # not one host<->device copy
    assert x.grad.is_cuda and q.grad.is_cuda


def test_transforms_on_device():
    x = numbagrad.tensor(_uniform(0.5, 3.0, (3,)), device="cuda")
    g = numbagrad.func.grad(lambda t: numbagrad.digamma(t).sum())(x)
    _compare(g, numbagrad.polygamma(1, x.cpu()))
    y = numbagrad.tensor(_uniform(0.5, 3.0, (2, 3)), device="cuda")
    out = numbagrad.func.vmap(numbagrad.special.xlog1py, in_dims=(None, 0))(x, y)
    _compare(out, numbagrad.special.xlog1py(x.cpu(), y.cpu()))
    t = numbagrad.ones_like(x)
    _, tan = numbagrad.func.jvp(numbagrad.special.i0e, (x,), (t,))
    _compare(tan, numbagrad.func.jvp(numbagrad.special.i0e, (x.cpu(),), (t.cpu(),))[1])
    # second order: lgamma -> digamma -> trigamma, every rule on the device
    xr = x.detach().requires_grad_()
    (d,) = numbagrad.autograd.grad(numbagrad.lgamma(xr).sum(), xr, create_graph=True)
    (dd,) = numbagrad.autograd.grad(d.sum(), xr)
    _compare(d, numbagrad.digamma(x.cpu()))
    _compare(dd, numbagrad.polygamma(1, x.cpu()))
