"""The gaps the op database found on CUDA, closed: each op on CUDA against the CPU result
(values, dtype, shape, gradients of ``sum(out * w)``), with non-contiguous inputs, negative
dims, empty inputs where PyTorch allows them, errors, and a size above one simulated block
(the simulator launches 2 blocks of 16 threads: NOTE [CUDA launches])."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.backend import CUDA

RNG = np.random.default_rng(1)


def _pair(a, requires_grad=True):
    """The same values as a CPU tensor and a CUDA tensor (leaves when floating)."""
    a = np.asarray(a)
    rg = requires_grad and a.dtype.kind == "f"
    return (
        numbagrad.tensor(a, requires_grad=rg),
        numbagrad.tensor(a, device="cuda", requires_grad=rg),
    )


def _check(fn, *arrays, rtol=1e-6, atol=1e-8, grad=True):
    """``fn`` on CPU and CUDA operands: same values, dtype and shape, and the same
    gradients of ``sum(fn(...) * w)`` for a fixed random ``w`` (floating outputs)."""
    pairs = [_pair(a, grad) for a in arrays]
    out_c = fn(*[p[0] for p in pairs])
    out_g = fn(*[p[1] for p in pairs])
    assert out_g.is_cuda and out_g.shape == out_c.shape and out_g.dtype == out_c.dtype
    np.testing.assert_allclose(
        out_g.cpu().detach().numpy(), out_c.detach().numpy(), rtol=rtol, atol=atol
    )
    if not (grad and out_c.requires_grad):
        return
    w = RNG.standard_normal(out_c.shape)
    (out_c * numbagrad.tensor(w)).sum().backward()
    (out_g * numbagrad.tensor(w, device="cuda")).sum().backward()
    for c, g in pairs:
        assert (c.grad is None) == (g.grad is None)
        if c.grad is not None:
            assert g.grad.is_cuda
            np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol)


def _raises_alike(fn, *arrays, match=None):
    """``fn`` raises the same exception type on CPU and on CUDA operands."""
    pairs = [_pair(a, False) for a in arrays]
    with pytest.raises(Exception, match=match) as ec:
        fn(*[p[0] for p in pairs])
    with pytest.raises(type(ec.value), match=match):
        fn(*[p[1] for p in pairs])


# -- prod / cumprod backward: no device-to-host copy ------------------------------------------


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_and_cumprod_backward_stay_on_the_device(zeros):
    a = RNG.uniform(0.5, 1.5, (3, 4))
    a.flat[[1, 6][:zeros]] = 0.0
    _check(lambda x: x.prod(), a)
    _check(lambda x: x.t().prod(0, keepdim=True), a)
    _check(lambda x: x[:, ::2].cumprod(-2), a)
    for fn in (lambda x: x.prod(-1), lambda x: x.cumprod(-1)):
        x = numbagrad.tensor(a, device="cuda", requires_grad=True)
        y = fn(x)
        w = numbagrad.ones(tuple(y.shape), device="cuda", dtype=y.dtype)
        before = dict(_driver.COPIES)
        (y * w).sum().backward()
        # the masked form: no host read of any_zero, and the seed is filled on the device
        assert _driver.COPIES == before
        np.testing.assert_allclose(x.grad.cpu().numpy(), _cpu_grad(fn, a), rtol=1e-6)
    if zeros == 0:
        _check(lambda x: x.prod(0), np.zeros((0, 3)))  # empty: ones, zero-size gradient


def _cpu_grad(fn, a):
    x = numbagrad.tensor(a, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


# -- scatter_reduce prod/amax/amin: multiply.at, maximum.at, minimum.at -----------------------


def _scatter(reduce, include_self=True, dim=0):
    def fn(x, src, index):
        return x.scatter_reduce(dim, index, src, reduce, include_self=include_self)

    return fn


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    x = RNG.uniform(0.5, 2.0, (4, 3))
    src = RNG.uniform(0.5, 2.0, (6, 3))
    index = RNG.integers(0, 4, (6, 3))
    _check(_scatter(reduce, include_self), x, src, index)
    # a negative dim, a non-contiguous source, a lone zero in a group
    src2 = src.copy()
    src2[0, 0] = 0.0
    _check(
        lambda x, s, i: x.t().scatter_reduce(-1, i.t(), s.t(), reduce, include_self=include_self),
        x,
        src2,
        index,
    )


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_above_one_block_with_repeats_and_nan(reduce):
    # 200 values into 5 slots: every slot gets ~40 values, folded by one thread per run
    x = RNG.uniform(0.9, 1.1, (5,))
    src = RNG.uniform(0.9, 1.1, (200,))
    index = RNG.integers(0, 5, (200,))
    _check(_scatter(reduce), x, src, index, grad=False)
    _check(_scatter(reduce), x, src, index, rtol=1e-5)
    src[17] = np.nan  # NaN propagates, as NumPy's maximum/minimum/multiply
    _check(_scatter(reduce), x, src, index, grad=False)
    for dtype in (np.float32, np.int64):  # other dtypes, no gradient
        xs, ss = (x * 3).astype(dtype), (np.nan_to_num(src) * 3).astype(dtype)
        _check(_scatter(reduce, include_self=False), xs, ss, index, grad=False, rtol=1e-5)


def test_scatter_reduce_errors_and_empty():
    x, src = np.ones((3, 2)), np.ones((2, 2))
    _raises_alike(_scatter("amax"), x, src, np.array([[0, 3], [1, 1]]), match="index")
    _check(_scatter("prod"), x, np.ones((0, 2)), np.zeros((0, 2), np.int64))


def test_reduce_at_rejects_host_targets_and_bool():
    idx = CUDA.from_host(np.array([0, 0, 1]))
    with pytest.raises(RuntimeError, match="same device"):
        CUDA.reduce_at("multiply", np.ones(3), (idx,), 2.0)
    with pytest.raises(NotImplementedError, match="not implemented for CUDA"):
        CUDA.reduce_at("maximum", CUDA.from_host(np.ones(3, bool)), (idx,), True)


# -- einsum (and what is built on it) ----------------------------------------------------------


@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 3)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ji", [(3,), (4,)]),
        ("ij->j", [(3, 4)]),
        ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 2)]),
        ("abc,cd,ae->ebd", [(2, 3, 2), (2, 3), (2, 2)]),
        ("ij,ij->i", [(0, 3), (0, 3)]),
    ],
)
def test_einsum(eq, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    _check(lambda *xs: numbagrad.einsum(eq, *xs), *arrays)


def test_einsum_noncontiguous_and_friends():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 4))
    _check(lambda x, y: numbagrad.einsum("ij,jk->ik", x.t(), y.t()), a, b)
    _check(lambda x, y: numbagrad.tensordot(x, y, dims=([0], [1])), a, b)
    w = RNG.standard_normal((2, 3, 4))
    _check(
        lambda x, y, w: numbagrad.nn.functional.bilinear(x, y, w),
        RNG.standard_normal((5, 3)),
        RNG.standard_normal((5, 4)),
        w,
    )
    _raises_alike(lambda x, y: numbagrad.einsum("ij,jk->ik", x, y), a, a)


def test_einsum_backend_rejects_what_it_does_not_do():
    x = CUDA.from_host(np.ones((2, 2)))
    with pytest.raises(ValueError, match="unsupported subscripts"):
        CUDA.xp.einsum("ii->i", x)


# -- tril / triu, diagonal --------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, -1, 5, -5])
def test_tril_triu(k):
    a = RNG.standard_normal((2, 3, 4))
    _check(lambda x: x.tril(k), a)
    _check(lambda x: x.triu(k), a)
    _check(lambda x: x.transpose(-1, -2).triu(k), a)  # non-contiguous
    _check(lambda x: numbagrad.tril(x > 0, k).long(), a, grad=False)  # bool keeps its dtype
    _check(lambda x: x.tril(k), np.zeros((0, 3)))
    _raises_alike(lambda x: x.tril(k), np.ones(3))


@pytest.mark.parametrize("offset", [0, 1, -2, 7])
def test_diagonal(offset):
    a = RNG.standard_normal((3, 4, 5))
    _check(lambda x: x.diagonal(offset), a)
    _check(lambda x: x.diagonal(offset, -1, 0), a)
    _check(lambda x: x.transpose(0, 2).diagonal(offset, 1, 2), a)
    _check(lambda x: numbagrad.diag_embed(x, offset), a[0])
    _check(lambda x: numbagrad.diag(x, offset), a[0])
    _raises_alike(lambda x: x.diagonal(offset, 1, -2), a)


def test_diagonal_is_a_view_and_trace():
    x = numbagrad.zeros(3, 3, device="cuda")
    x.diagonal().fill_(2.0)
    np.testing.assert_array_equal(x.cpu().numpy(), 2.0 * np.eye(3))
    _check(lambda x: x.trace(), RNG.standard_normal((4, 3)))


def test_writes_through_views_with_gradients():
    def fn(x):
        y = (x * 1).contiguous()
        row = y[0]
        y[:, 1].mul_(2.0)
        return row * 1 + y.sum(0)

    _check(fn, RNG.standard_normal((3, 4)))
    base = CUDA.from_host(np.arange(6.0))
    np.testing.assert_array_equal(base.as_strided((2, 2), (3, 1), 1).to_host(), [[1, 2], [4, 5]])
    with pytest.raises(ValueError, match="outside"):
        base.as_strided((2, 2), (3, 1), 3)
    with pytest.raises(NotImplementedError, match="writeable"):
        base.setflags(write=False)


# -- ops that built CPU tensors: one_hot, bincount, histc, pad, block_diag, quantile ----------


def test_one_hot_bincount_histc():
    idx = np.array([0, 2, 2, 4, 1])
    _check(lambda i: numbagrad.nn.functional.one_hot(i, 6), idx, grad=False)
    _check(lambda i: numbagrad.nn.functional.one_hot(i), idx, grad=False)
    _raises_alike(lambda i: numbagrad.nn.functional.one_hot(i, 3), idx, match="smaller")
    big = RNG.integers(0, 7, 150)  # above one block: atomic adds into 7 bins
    _check(lambda i: numbagrad.bincount(i), big, grad=False)
    _check(lambda i: numbagrad.bincount(i, minlength=10), big, grad=False)
    w = RNG.standard_normal(150)
    _check(lambda i, w: numbagrad.bincount(i, weights=w), big, w, grad=False)
    _check(lambda i: numbagrad.bincount(i), np.zeros(0, np.int64), grad=False)
    _raises_alike(lambda i: numbagrad.bincount(i), np.array([1, -1]), match="non-negative")
    _check(lambda x: numbagrad.histc(x, bins=5, min=-1, max=1), RNG.standard_normal(100))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode):
    a = RNG.standard_normal((2, 3, 4))
    pad = numbagrad.nn.functional.pad
    _check(lambda x: pad(x, (1, 2), mode=mode), a)
    _check(lambda x: pad(x.transpose(-1, -2), (2, 1, 1, 0), mode=mode), a)
    if mode == "constant":
        _check(lambda x: pad(x, (-1, 2), value=3.5), a)


def test_block_diag_and_quantile():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((1, 2))
    _check(lambda a, b: numbagrad.block_diag(a, b), a, b)
    x = RNG.standard_normal((4, 6))
    _check(lambda x: numbagrad.quantile(x, 0.3, dim=-1), x)
    _check(lambda x: numbagrad.nanquantile(x, 0.7, dim=0, keepdim=True), x)
    q = np.array([0.1, 0.5, 0.9])
    _check(lambda x, q: numbagrad.quantile(x, q.detach(), dim=1), x, q)
    _raises_alike(lambda x: numbagrad.quantile(x, 1.5), x, match="range")


# -- elementwise: round, signbit, fmod, remainder, floor_divide, logaddexp(2) ----------------


def test_round_and_signbit():
    halves = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.49, np.inf, -np.inf, np.nan])
    _check(numbagrad.round, halves, grad=False)
    _check(numbagrad.signbit, halves, grad=False)
    _check(numbagrad.signbit, np.array([-3, 0, 2]), grad=False)
    _check(numbagrad.round, RNG.uniform(-50, 50, 100) // 0.5 * 0.5)  # above one block
    _check(lambda x: x.t().round(), RNG.standard_normal((3, 2)) * 4)


def test_fmod_remainder_floor_divide():
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0, np.inf, 3.0, 1e300])
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 2.0, np.inf, 1e-300])
    _check(numbagrad.fmod, a, b, grad=False)
    _check(numbagrad.remainder, a, b, grad=False)
    _check(numbagrad.floor_divide, a, b, grad=False)
    _check(lambda a, b: numbagrad.div(a, b, rounding_mode="floor"), a, b, grad=False)
    x, y = RNG.standard_normal((3, 4)) * 5, RNG.uniform(0.5, 2.0, (4,))
    _check(numbagrad.remainder, x, y)
    _check(lambda x: x % 1.5, x)


def test_logaddexp():
    a = np.array([0.0, -np.inf, np.inf, 1.0, np.nan, 3.0])
    b = np.array([0.0, -np.inf, np.inf, np.inf, 1.0, -2.0])
    _check(numbagrad.logaddexp, a, b, grad=False)
    _check(numbagrad.logaddexp2, a, b, grad=False)
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((3,))
    _check(numbagrad.logaddexp, x, y)
    _check(numbagrad.logaddexp2, x.T, RNG.standard_normal((2,)))


# -- cummax / cummin of bool tensors: the view(dtype) of a CUDA array ------------------------


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_of_bool(name):
    a = RNG.uniform(-1, 1, (3, 40)) > 0  # a row above one block

    def fn(x, dim):
        return getattr(numbagrad, name)(x, dim)

    for dim, view in ((1, lambda x: x), (-2, lambda x: x), (0, lambda x: x.t())):
        c, g = fn(view(numbagrad.tensor(a)), dim), fn(view(numbagrad.tensor(a, device="cuda")), dim)
        assert g.values.is_cuda and g.values.dtype == numbagrad.bool
        np.testing.assert_array_equal(g.values.cpu().numpy(), c.values.numpy())
        np.testing.assert_array_equal(g.indices.cpu().numpy(), c.indices.numpy())
    with pytest.raises(IndexError):
        fn(numbagrad.tensor(a, device="cuda"), 2)
    b = CUDA.from_host(a)
    np.testing.assert_array_equal(b.view(np.uint8).to_host(), a.astype(np.uint8))
    with pytest.raises(ValueError, match="item size"):
        b.view(np.int64)


def test_integer_division_remainder_and_fmod_gradients():
    # remainder on the device is fmod moved by the divisor where the signs differ
    # (NumPy's npy_divmod); integer div(rounding_mode='trunc') needs it, and so do the
    # gradients of fmod and remainder (their rule divides with rounding)
    a = np.array([7, -7, 9, -9, 0, 12])
    b = np.array([2, 2, -4, -4, 3, -5])
    _check(lambda x, y: numbagrad.div(x, y, rounding_mode="trunc"), a, b, grad=False)
    _check(lambda x: numbagrad.div(x, 2, rounding_mode="trunc"), a, grad=False)
    _check(lambda x, y: numbagrad.remainder(x, y), a, b, grad=False)
    _check(lambda x: numbagrad.remainder(x, -3), a, grad=False)
    x = np.array([5.5, -5.5, 5.5, -5.5, 0.0, 7.25])
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.0, -0.5])
    _check(numbagrad.fmod, x, y)
    _check(numbagrad.remainder, x, y)
    _check(lambda t: t % 2, x)


def test_nanmedian_along_a_dim():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 5.0, np.nan, np.nan], [0.5, -1.0, 2.0, 8.0]])
    _check(lambda t: numbagrad.nanmedian(t, dim=1).values, x)
    _check(lambda t: numbagrad.nanmedian(t, dim=-2, keepdim=True).values, x)
