"""Every op the CUDA backend supports, on CUDA against the CPU result (values and
gradients), and backward on the device without host copies."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver

RNG = np.random.default_rng(0)


def _pair(shape, low=-2.0, high=2.0, dtype=np.float64):
    a = RNG.uniform(low, high, shape).astype(dtype)
    c = numbagrad.tensor(a, requires_grad=True)
    g = numbagrad.tensor(a, device="cuda", requires_grad=True)
    return c, g


def _check(fn, *specs, rtol=1e-6, atol=1e-8):
    """``fn`` on CPU and CUDA operands: same values, and the same gradients of
    ``sum(fn(...) * w)`` for a fixed random ``w``."""
    pairs = [_pair(*s) if isinstance(s[0], tuple) else _pair(s) for s in specs]
    out_c = fn(*[p[0] for p in pairs])
    out_g = fn(*[p[1] for p in pairs])
    assert out_g.is_cuda and out_g.shape == out_c.shape and out_g.dtype == out_c.dtype
    np.testing.assert_allclose(
        out_g.cpu().detach().numpy(), out_c.detach().numpy(), rtol=rtol, atol=atol
    )
    if not out_c.requires_grad:
        return
    w = RNG.standard_normal(out_c.shape)
    (out_c * numbagrad.tensor(w)).sum().backward()
    (out_g * numbagrad.tensor(w, device="cuda")).sum().backward()
    for c, g in pairs:
        assert g.grad.is_cuda
        np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol)


UNARY = {
    "neg": lambda x: -x,
    "abs": numbagrad.abs,
    "exp": numbagrad.exp,
    "expm1": numbagrad.expm1,
    "sin": numbagrad.sin,
    "cos": numbagrad.cos,
    "tan": numbagrad.tan,
    "tanh": numbagrad.tanh,
    "sigmoid": numbagrad.sigmoid,
    "relu": numbagrad.relu,
    "square": numbagrad.square,
    "atan": numbagrad.atan,
    "sinh": numbagrad.sinh,
    "cosh": numbagrad.cosh,
    "asinh": numbagrad.asinh,
    "erf": numbagrad.erf,
    "softplus": numbagrad.nn.functional.softplus,
    "sign": numbagrad.sign,
    "floor": numbagrad.floor,
    "trunc": numbagrad.trunc,
}
POSITIVE = {
    "log": numbagrad.log,
    "log1p": numbagrad.log1p,
    "log2": numbagrad.log2,
    "sqrt": numbagrad.sqrt,
    "rsqrt": numbagrad.rsqrt,
    "reciprocal": numbagrad.reciprocal,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    _check(UNARY[name], (2, 3))


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_unary_positive(name):
    _check(POSITIVE[name], ((3,), 0.5, 3.0))


def test_unary_float32_and_noncontiguous():
    _check(lambda x: numbagrad.tanh(x.t()) * 2, ((2, 3), -1, 1, np.float32), rtol=1e-5, atol=1e-6)
    _check(lambda x: x[:, ::2].exp(), (3, 4))


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 1),
    "maximum": numbagrad.maximum,
    "minimum": numbagrad.minimum,
    "atan2": numbagrad.atan2,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3))])
def test_binary_broadcasting(name, shapes):
    _check(BINARY[name], *shapes)


def test_scalars_pow_and_comparisons():
    _check(lambda x: 2.5 * x - 1 + x / 4, (2, 2))
    _check(lambda x: x**2 + x**3, (3,))
    _check(lambda x: (x.abs() + 1) ** 1.5, (3,))
    _check(lambda a, b: a.pow(b.abs()), ((3,), 0.5, 2.0), (3,))
    _check(lambda a, b: (a > b) | (a == b), (2, 3), (3,))
    _check(lambda a: (a >= 0).float() * a, (4,))


@pytest.mark.parametrize(
    "dims,keepdim", [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True)]
)
def test_sum_mean(dims, keepdim):
    if dims is None:
        _check(lambda x: x.sum(), (2, 3, 4))
        _check(lambda x: x.mean(), (2, 3, 4))
    else:
        _check(lambda x: x.sum(dims, keepdim=keepdim), (2, 3, 4))
        _check(lambda x: x.mean(dims, keepdim=keepdim), (2, 3, 4))


def test_sum_of_views_and_ints():
    _check(lambda x: x.t().sum(0), (3, 5))
    g = numbagrad.tensor([[1, 2], [3, 4]], device="cuda")
    s = g.sum(0)
    assert s.dtype == numbagrad.int64 and s.tolist() == [4, 6]
    assert numbagrad.ones(0, 3, device="cuda").sum(0).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (4, 2)),
        ((4,), (4, 3)),
        ((3, 4), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 2, 3), (3, 3, 2)),
    ],
)
def test_matmul(sa, sb):
    _check(lambda a, b: a @ b, sa, sb)


def test_matmul_transposed_and_float32():
    _check(lambda a, b: a.t() @ b, (4, 3), (4, 2))
    _check(
        lambda a, b: a @ b,
        ((17, 18), -1, 1, np.float32),
        ((18, 3), -1, 1, np.float32),
        rtol=1e-5,
        atol=1e-5,
    )


# (defined on a real GPU only: under the simulator, whose run must skip nothing, there is no
# cuBLAS to compare)
if not _driver.simulator():

    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    def test_cublas_matmul_matches_the_tiled_kernel(monkeypatch, dtype):
        """With CuPy on a real GPU, matmul runs through cuBLAS (NOTE [cuBLAS through CuPy]):
        the same values as numbagrad's tiled kernel, for batched, broadcast, transposed and
        vector operands, on the default stream and on a numbagrad stream."""
        from numbagrad.kernels.cuda import backend

        if backend._cupy() is None:
            pytest.skip("cuBLAS needs CuPy and a real GPU")
        rng = np.random.default_rng(3)
        cases = [((70, 33), (33, 65)), ((3, 1, 9, 8), (5, 8, 7)), ((8,), (8, 5)), ((6, 8), (8,))]
        for sa, sb in cases:
            a = numbagrad.tensor(rng.standard_normal(sa).astype(dtype), device="cuda")
            b = numbagrad.tensor(rng.standard_normal(sb).astype(dtype), device="cuda")
            fast = (a @ b).cpu().numpy()
            s = numbagrad.cuda.Stream()
            with numbagrad.cuda.stream(s):  # a column-major operand, on another stream
                at = a.mT.contiguous().mT if a.ndim > 1 else a
                streamed = at @ b
            s.synchronize()
            monkeypatch.setattr(backend, "_cupy_state", [None])  # the tiled kernel
            tiled = (a @ b).cpu().numpy()
            monkeypatch.undo()
            tol = 2e-5 if dtype is np.float32 else 1e-12
            np.testing.assert_allclose(fast, tiled, rtol=tol, atol=tol)
            np.testing.assert_allclose(streamed.cpu().numpy(), tiled, rtol=tol, atol=tol)


def test_views():
    _check(lambda x: x.reshape(3, 2) * 2, (2, 3))
    _check(lambda x: x.view(-1) + 1, (2, 3))
    _check(lambda x: x.t().reshape(6), (2, 3))  # a copy: not viewable
    _check(lambda x: x.permute(2, 0, 1) * x.permute(2, 0, 1), (2, 3, 2))
    _check(lambda x: x.expand(4, 2, 3) * 1.5, (2, 3))
    _check(lambda x: x.unsqueeze(0).squeeze(0).flatten(), (2, 3))
    _check(lambda x: x[1:, ::-1] if False else x[1:, 1:], (3, 3))
    _check(lambda x: x[0] * x[:, 0], (3, 3))
    _check(lambda x: x.transpose(0, 1).contiguous(), (2, 3))
    _check(lambda x: x.clone() * x.detach(), (2, 3))


def test_composites():
    _check(
        lambda x, w, b: (numbagrad.tanh(x * w + b) * numbagrad.sigmoid(x)).sum(), (2, 4), (4,), (4,)
    )
    _check(lambda x, w: numbagrad.nn.functional.linear(x, w).relu().mean(), (3, 4), (2, 4))


def test_inplace_and_versions():
    g = numbagrad.ones(3, device="cuda", requires_grad=True)
    y = g * 2
    z = y.sin()  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    h = numbagrad.zeros(2, 3, device="cuda")
    h[0] = 5.0
    h[:, 1].mul_(3)
    assert h.tolist() == [[5.0, 15.0, 5.0], [0.0, 0.0, 0.0]]


def test_backward_stays_on_device():
    x = numbagrad.tensor(RNG.standard_normal((4, 3)), device="cuda")
    w = numbagrad.tensor(RNG.standard_normal((3, 2)), device="cuda", requires_grad=True)
    b = numbagrad.zeros(2, dtype=numbagrad.float64, device="cuda", requires_grad=True)
    loss = ((x @ w + b).tanh() * (x @ w).sigmoid()).sum() + (w * w).mean()
    before = dict(_driver.COPIES)
    loss.backward()
    loss.backward(retain_graph=False) if False else None
    assert _driver.COPIES == before  # not one host<->device copy (the seed is made there)
    assert w.grad.is_cuda and b.grad.is_cuda
    # the same on the CPU
    xc, wc = x.cpu(), w.detach().cpu().requires_grad_()
    bc = b.detach().cpu().requires_grad_()
    ((xc @ wc + bc).tanh() * (xc @ wc).sigmoid()).sum().add((wc * wc).mean()).backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), wc.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.cpu().numpy(), bc.grad.numpy(), rtol=1e-6)


def test_leaf_accumulation_on_device():
    w = numbagrad.ones(3, device="cuda", requires_grad=True)
    for _ in range(3):
        (w * 2).sum().backward()
    assert w.grad.is_cuda and w.grad.tolist() == [6.0, 6.0, 6.0]
    gw = w.grad
    (w * 1).sum().backward()
    assert w.grad is gw and gw.tolist() == [7.0, 7.0, 7.0]  # accumulated in place


def test_autograd_grad_and_second_order():
    x = numbagrad.tensor([0.5, -1.0], device="cuda", requires_grad=True)
    (g,) = numbagrad.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.is_cuda and np.allclose(g.tolist(), [0.75, 3.0])
    (h,) = numbagrad.autograd.grad(g.sum(), x)
    assert h.is_cuda and np.allclose(h.tolist(), [3.0, -6.0])


def test_where_predicates_and_more_binary():
    _check(lambda a, b: numbagrad.where(a > 0, a, b), (2, 3), (3,))
    _check(lambda a: numbagrad.where(a > 0, a, 0.0), (4,))
    _check(numbagrad.hypot, (2, 3), (2, 3))
    _check(lambda a, b: numbagrad.copysign(a, b), (3,), (3,))
    _check(lambda a: numbagrad.log10(a), ((3,), 0.5, 2.0))
    x = numbagrad.tensor([1.0, float("nan"), float("inf"), -float("inf")], device="cuda")
    assert numbagrad.isfinite(x).tolist() == [True, False, False, False]
    assert numbagrad.isnan(x).tolist() == [False, True, False, False]
    assert numbagrad.isinf(x).tolist() == [False, False, True, True]
    assert numbagrad.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0).tolist() == [
        1.0,
        0.0,
        1.0,
        -1.0,
    ]


def test_transforms_on_device():
    x = numbagrad.tensor([0.5, -1.0], device="cuda")
    g = numbagrad.func.grad(lambda x: (x**3).sum())(x)
    assert g.is_cuda and np.allclose(g.tolist(), [0.75, 3.0])
    v = numbagrad.func.vmap(lambda r: (r * r).sum())(numbagrad.ones(2, 3, device="cuda"))
    assert v.is_cuda and v.tolist() == [3.0, 3.0]
