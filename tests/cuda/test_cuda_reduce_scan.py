"""Reductions along dims, scans, joining and reordering on CUDA against the CPU result
(values, dtypes, shapes and gradients): ``prod``, ``amax``/``amin``, ``max``/``min``,
``argmax``/``argmin``, ``any``/``all``, ``var``/``std``, ``logsumexp``, ``nansum``,
``softmax``/``log_softmax``, ``cumsum``/``cumprod``, ``logcumsumexp``, ``cummax``/``cummin``,
``cat``/``stack``, ``flip``, ``roll``, and a few composites of them; NaN and tie semantics
also against PyTorch.

Under the simulator a reduction or scan launches 2 blocks of at most 8 threads (NOTE [CUDA
launches]), so rows longer than 8 exercise the block-strided loops (several elements per
thread's segment in a scan, NOTE [CUDA scans]) and more than 2 outputs exercise blocks
striding over outputs; rows of 300 and 600 are longer than a GPU block (256 threads)."""

import math

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.backend import CUDA

RNG = np.random.default_rng(1)


def _pair(shape, low=-2.0, high=2.0, dtype=np.float64):
    a = RNG.uniform(low, high, shape).astype(dtype)
    c = numbagrad.tensor(a, requires_grad=a.dtype.kind == "f")
    g = numbagrad.tensor(a, device="cuda", requires_grad=a.dtype.kind == "f")
    return c, g


def _values(out_c, out_g, rtol, atol):
    assert out_g.is_cuda and out_g.shape == out_c.shape and out_g.dtype == out_c.dtype
    np.testing.assert_allclose(
        out_g.cpu().detach().numpy(), out_c.detach().numpy(), rtol=rtol, atol=atol
    )


def _check(fn, *specs, rtol=1e-6, atol=1e-8, pairs=None):
    """``fn`` on CPU and CUDA operands: same values, dtype and shape, and the same gradients
    of ``sum(fn(...) * w)`` for a fixed random ``w`` (each output of a tuple result)."""
    if pairs is None:
        pairs = [_pair(*s) if s and isinstance(s[0], tuple) else _pair(s) for s in specs]
    out_c = fn(*[p[0] for p in pairs])
    out_g = fn(*[p[1] for p in pairs])
    outs = list(zip(out_c, out_g)) if isinstance(out_c, tuple) else [(out_c, out_g)]
    for c, g in outs:
        _values(c, g, rtol, atol)
    loss_c = loss_g = 0
    for c, g in outs:
        if c.requires_grad:
            w = RNG.standard_normal(c.shape)
            loss_c = loss_c + (c * numbagrad.tensor(w)).sum()
            loss_g = loss_g + (g * numbagrad.tensor(w, device="cuda")).sum()
    if not isinstance(loss_c, numbagrad.Tensor):
        return
    loss_c.backward()
    loss_g.backward()
    for c, g in pairs:
        if c.requires_grad:
            assert g.grad.is_cuda and g.grad.shape == c.grad.shape
            np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol)


def _both(a, **kw):
    """The same leaf on the CPU and on CUDA."""
    a = np.asarray(a)
    rg = a.dtype.kind == "f"
    return (
        numbagrad.tensor(a, requires_grad=rg, **kw),
        numbagrad.tensor(a, device="cuda", requires_grad=rg, **kw),
    )


def _raises_alike(fn, x):
    """``fn`` raises the same exception type and message on the CPU and on CUDA."""
    c = numbagrad.tensor(x)
    g = numbagrad.tensor(x, device="cuda")
    with pytest.raises(Exception) as ec:
        fn(c)
    with pytest.raises(type(ec.value)) as eg:
        fn(g)
    assert str(eg.value) == str(ec.value)


# -- prod --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_prod(dim, keepdim):
    if dim is None:
        _check(lambda x: x.prod(), ((2, 3), 0.5, 1.5))
    else:
        _check(lambda x: x.prod(dim, keepdim=keepdim), ((3, 4), 0.5, 1.5))


def test_prod_zeros_views_ints_and_empty():
    a = RNG.uniform(0.5, 1.5, (3, 4))
    a[0, 1] = 0.0
    a[1, 2] = a[1, 3] = 0.0  # one and two zeros in a row: exact gradients
    _check(lambda x: x.prod(1), pairs=[_both(a)])
    _check(lambda x: x.t().prod(1), ((4, 3), 0.5, 1.5))  # non-contiguous
    _check(lambda x: x[:, ::2].prod(0), ((3, 5), 0.5, 1.5))
    c, g = _both(np.array([[1, 2, 3], [4, 5, -6]], np.int32))
    _values(c.prod(1), g.prod(1), 0, 0)  # int64, as PyTorch
    assert g.prod(1).dtype == numbagrad.int64
    _values(c.prod(), g.prod(), 0, 0)
    _values(c.prod(1, dtype=numbagrad.float64), g.prod(1, dtype=numbagrad.float64), 0, 0)
    c, g = _both(np.ones((0, 3)))
    _values(c.prod(0), g.prod(0), 0, 0)  # the identity over an empty dim
    _values(c.prod(1), g.prod(1), 0, 0)  # no outputs
    _check(lambda x: x.prod(), pairs=[_both(np.float64(1.5))])  # 0-d
    _check(lambda x: x.prod(0), pairs=[_both(np.float64(1.5))])
    _check(lambda x: (x > 0).prod(1), (2, 3))  # bools: int64


def test_prod_float32_and_long_rows():
    # 600 elements per output, 5 outputs: more than the launched blocks and threads
    _check(lambda x: x.prod(1), ((5, 600), 0.995, 1.005, np.float32), rtol=1e-5, atol=1e-6)


def test_prod_bad_dim():
    _raises_alike(lambda x: x.prod(2), np.ones((2, 3)))
    _raises_alike(lambda x: x.prod(-3), np.ones((2, 3)))


# -- amax / amin / max / min ----------------------------------------------------------------
@pytest.mark.parametrize("fn", ["amax", "amin"])
@pytest.mark.parametrize(
    "dim,keepdim", [((), False), (0, False), (1, True), (-1, False), ((0, 2), True)]
)
def test_amax_amin(fn, dim, keepdim):
    _check(lambda x: getattr(x, fn)(dim, keepdim=keepdim), (2, 3, 4))


def test_amax_ties_nan_views_and_ints():
    a = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, np.nan, 5.0, 5.0], [-np.inf, -np.inf, 0.0, 1.0]])
    for fn in ("amax", "amin"):
        _check(lambda x, fn=fn: getattr(x, fn)(1), pairs=[_both(a)])  # ties share, NaN wins
        _check(lambda x, fn=fn: getattr(x, fn)(0), pairs=[_both(a)])
        _check(lambda x, fn=fn: getattr(x, fn)(), pairs=[_both(a)])
    _check(lambda x: x.t().amax(0), (4, 3))
    _check(lambda x: x[::2].amin(1), (5, 3))
    _check(lambda x: x.flip(1).amax(1), (3, 4))
    _check(lambda x: x.amax(1), ((5, 600), -1, 1, np.float32))  # long rows, many outputs
    big = np.array([[2**62 + 1, 2**62, -(2**62)], [-5, -7, -6]], np.int64)  # exact in int64
    c, g = _both(big)
    _values(c.amax(1), g.amax(1), 0, 0)
    _values(c.amin(), g.amin(), 0, 0)
    c, g = _both(np.array([[True, False], [False, False]]))
    _values(c.amax(1), g.amax(1), 0, 0)
    _values(c.amin(0), g.amin(0), 0, 0)
    _check(lambda x: x.amax(), pairs=[_both(np.float64(-2.0))])  # 0-d
    c, g = _both(np.ones((3, 0)))
    _values(c.amax(0), g.amax(0), 0, 0)  # no outputs


def test_amax_errors():
    _raises_alike(lambda x: x.amax(2), np.ones((2, 3)))
    _raises_alike(lambda x: x.amin(1), np.ones((2, 0)))  # no identity
    _raises_alike(lambda x: x.amax(), np.ones((0, 2)))


def test_max_min_over_all():
    a = np.array([[1.0, 4.0], [4.0, -2.0]])
    _check(lambda x: x.max(), pairs=[_both(a)])  # the tie shares the gradient
    _check(lambda x: x.min(), pairs=[_both(a)])
    a = np.array([1.0, np.nan, 3.0, np.nan])
    _check(lambda x: x.max(), pairs=[_both(a)])  # the NaN elements share it
    _check(lambda x: x.min(), ((3, 5),))
    _raises_alike(lambda x: x.max(), np.ones((0,)))


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_along_a_dim(fn):
    # argmax/argmin, then the values gathered (the gradient goes to the returned index)
    _check(lambda x: getattr(x, fn)(1), (3, 4))
    _check(lambda x: getattr(x, fn)(-2, keepdim=True), (3, 4))
    _check(lambda x: getattr(x.t(), fn)(0), (4, 3))
    a = np.array([[1.0, 3.0, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0]])
    _check(lambda x: getattr(x, fn)(1), pairs=[_both(a)])  # the first tie, the NaN
    c, g = _both(np.array([[True, False], [False, False]]))
    _values(getattr(c, fn)(1).values, getattr(g, fn)(1).values, 0, 0)
    _check(lambda x: getattr(x, fn)(0), pairs=[_both(np.float64(2.0))])  # 0-d
    _raises_alike(lambda x: getattr(x, fn)(2), np.ones((2, 3)))
    _raises_alike(lambda x: getattr(x, fn)(1), np.ones((2, 0)))


def test_composites_of_these_ops():
    _check(lambda x: x.norm(float("inf"), dim=1), (3, 4))
    _check(lambda x: x.norm(3, dim=0), ((3, 4), 0.5, 1.5))
    _check(lambda x: numbagrad.aminmax(x, dim=1), (3, 4))
    _check(lambda x: numbagrad.nansum(x, 1) + numbagrad.nanmean(x, 1), (3, 4))
    nan = np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, np.nan]])
    _check(lambda x: numbagrad.nansum(x, 1) + numbagrad.nansum(x), pairs=[_both(nan)])
    _check(lambda x: numbagrad.nansum(x, 0), ((3, 4), -1, 1, np.float32), rtol=1e-6)
    _check(lambda x: numbagrad.var_mean(x, 1), (3, 4))
    _check(
        lambda a, b: numbagrad.hstack([a, b]).sum(1) * numbagrad.vstack([a, b]).sum(),
        (2, 3),
        (2, 3),
    )
    _check(lambda x: numbagrad.rot90(x) + numbagrad.diff(x.t(), dim=0).sum(), (3, 3))
    _check(lambda x: numbagrad.special.logsumexp(x, 1), (3, 4))
    tgt = [0, 2, 1]
    _check(
        lambda x: numbagrad.nn.functional.cross_entropy(x, numbagrad.tensor(tgt, device=x.device)),
        (3, 4),
    )


# -- argmax / argmin -------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin(fn):
    for dim, keepdim in [(None, False), (None, True), (0, False), (1, True), (-1, False)]:
        _check(lambda x, d=dim, k=keepdim: getattr(x, fn)(d, keepdim=k), (3, 4))
    _check(lambda x: getattr(x, fn)(1), (5, 600))  # long rows
    _check(lambda x: getattr(x.t(), fn)(0), (4, 3))  # non-contiguous
    a = np.array([[1.0, 3.0, 3.0, np.nan, np.nan], [2.0, 2.0, -1.0, -1.0, 0.0]])
    c, g = _both(a)
    _values(getattr(c, fn)(1), getattr(g, fn)(1), 0, 0)  # the first NaN / the first tie
    _values(getattr(c, fn)(), getattr(g, fn)(), 0, 0)
    c, g = _both(np.array([[2**62 + 1, 2**62, 7], [3, 3, -3]], np.int64))
    _values(getattr(c, fn)(1), getattr(g, fn)(1), 0, 0)
    c, g = _both(np.float64(3.0))
    _values(getattr(c, fn)(), getattr(g, fn)(), 0, 0)  # 0-d
    _values(getattr(c, fn)(0), getattr(g, fn)(0), 0, 0)
    c, g = _both(np.ones((3, 0)))
    _values(getattr(c, fn)(0), getattr(g, fn)(0), 0, 0)  # no outputs


def test_argmax_matches_torch_nan_and_ties():
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, np.nan, 3.0, np.nan], [5.0, 5.0, 1.0, 1.0], [-np.inf, -np.inf, -np.inf, 0]])
    g = numbagrad.tensor(a, device="cuda")
    t = torch.tensor(a)
    for fn in ("argmax", "argmin"):
        assert getattr(g, fn)(1).tolist() == getattr(t, fn)(1).tolist()
        assert getattr(g, fn)(0).tolist() == getattr(t, fn)(0).tolist()
    assert np.isnan(g.amax(1).tolist()[0]) and np.isnan(g.amin().item())
    np.testing.assert_array_equal(g.amax(1).cpu().numpy(), t.amax(1).numpy())


def test_argmax_errors():
    _raises_alike(lambda x: x.argmax(2), np.ones((2, 3)))
    _raises_alike(lambda x: x.argmin(1), np.ones((2, 0)))
    _raises_alike(lambda x: x.argmax(), np.ones((0,)))
    _raises_alike(lambda x: x.argmax(), np.ones(3, bool))


# -- any / all -------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["any", "all"])
def test_any_all(fn):
    a = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, np.nan], [2.0, -1.0, 3.0]])
    for x in (a, a.astype(np.int64), a != 0, np.zeros((0, 3)), np.float64(0.0)):
        c, g = _both(x)
        _values(getattr(c, fn)(), getattr(g, fn)(), 0, 0)
        if np.ndim(x):
            for dim, keepdim in [(0, False), (1, True), (-1, False), ((), False), ((0, 1), True)]:
                _values(getattr(c, fn)(dim, keepdim), getattr(g, fn)(dim, keepdim), 0, 0)
    c, g = _both(a)
    _values(getattr(c.t(), fn)(1), getattr(g.t(), fn)(1), 0, 0)  # non-contiguous
    c, g = _both(RNG.uniform(-1, 1, (5, 600)) > 0.999)
    _values(getattr(c, fn)(1), getattr(g, fn)(1), 0, 0)
    _raises_alike(lambda x: getattr(x, fn)(2), np.ones((2, 3)))


# -- var / std / logsumexp / softmax ----------------------------------------------------------
@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std(fn):
    _check(lambda x: getattr(x, fn)(), (3, 4))
    _check(lambda x: getattr(x, fn)((0, 2), keepdim=True), (2, 3, 4))
    _check(lambda x: getattr(x, fn)(-1, correction=0), (3, 4))
    _check(lambda x: getattr(x.t(), fn)(0), (4, 3))
    _check(lambda x: getattr(x, fn)(1), ((3, 5), -1, 1, np.float32), rtol=1e-5, atol=1e-6)
    _check(lambda x: getattr(x, fn)(0), pairs=[_both(np.ones((3, 2)))])  # 0 deviation
    _raises_alike(lambda x: getattr(x, fn)(3), np.ones((2, 3)))


def test_logsumexp():
    _check(lambda x: x.logsumexp(1), (3, 4))
    _check(lambda x: x.logsumexp((0, 1), keepdim=True), (3, 4))
    _check(lambda x: x.logsumexp(-1), (5, 600))
    _check(lambda x: x.t().logsumexp(0), (4, 3))
    a = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, -np.inf]])
    _check(lambda x: x.logsumexp(1), pairs=[_both(a)])
    c, g = _both(np.ones((2, 0)))
    _values(c.logsumexp(1), g.logsumexp(1), 0, 0)  # -inf over no elements
    _raises_alike(lambda x: x.logsumexp(2), np.ones((2, 3)))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax(fn):
    for dim in (0, -1):
        _check(lambda x, d=dim: getattr(x, fn)(d), (3, 4))
    _check(lambda x: getattr(x.t(), fn)(1), (4, 3))
    _check(lambda x: getattr(x, fn)(1), ((5, 40), -3, 3, np.float32), rtol=1e-5, atol=1e-6)
    _check(lambda x: getattr(x, fn)(0), pairs=[_both(np.float64(0.3))])  # 0-d
    c, g = _both(np.ones((0, 3)))
    _values(getattr(c, fn)(1), getattr(g, fn)(1), 0, 0)
    c, g = _both(np.array([[1, 2], [3, 3]]))
    _values(
        getattr(c, fn)(1, dtype=numbagrad.float64),
        getattr(g, fn)(1, dtype=numbagrad.float64),
        1e-12,
        0,
    )
    _raises_alike(lambda x: getattr(x, fn)(2), np.ones((2, 3)))


def test_nn_functional_cross_entropy_style():
    # log_softmax + the mean of picked entries, as a classifier's loss (no index ops)
    def loss(x, w):
        logits = x @ w
        onehot = numbagrad.tensor(np.eye(3)[[0, 2, 1, 1]], device=logits.device)
        return -(logits.log_softmax(1) * onehot).sum(1).mean()

    _check(loss, (4, 5), (5, 3))


# -- cumsum / cumprod --------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_scans(fn):
    for dim in (0, -1):
        _check(lambda x, d=dim: getattr(x, fn)(d), ((3, 4), 0.5, 1.5))
    _check(lambda x: getattr(x.t(), fn)(1), ((4, 3), 0.5, 1.5))  # non-contiguous
    _check(lambda x: getattr(x[:, 1::2], fn)(0), ((3, 5), 0.5, 1.5))  # a strided view
    _check(lambda x: getattr(x, fn)(1), ((2, 3, 4), 0.5, 1.5))
    _check(lambda x: getattr(x, fn)(0), pairs=[_both(np.float64(1.5))])  # 0-d
    c, g = _both(np.ones((0, 3)))
    _values(getattr(c, fn)(0), getattr(g, fn)(0), 0, 0)
    _values(getattr(c, fn)(1), getattr(g, fn)(1), 0, 0)
    c, g = _both(np.array([[1, 2, 3], [-4, 5, 6]], np.int32))
    _values(getattr(c, fn)(1), getattr(g, fn)(1), 0, 0)  # int64, as PyTorch
    _values(
        getattr(c, fn)(0, dtype=numbagrad.float32), getattr(g, fn)(0, dtype=numbagrad.float32), 0, 0
    )
    c, g = _both(np.array([True, False, True, True]))
    _values(getattr(c, fn)(0), getattr(g, fn)(0), 0, 0)
    _raises_alike(lambda x: getattr(x, fn)(2), np.ones((2, 3)))


def test_scans_long_rows_and_zeros():
    # rows of 600 and 300: longer than a block on a GPU (256 threads), many elements per
    # thread's segment under the simulator (8 threads)
    _check(lambda x: x.cumsum(1), ((3, 600), -1, 1), rtol=1e-9, atol=1e-9)
    _check(lambda x: x.cumsum(0), ((300, 2), -1, 1, np.float32), rtol=1e-5, atol=1e-5)
    _check(lambda x: x.cumprod(1), ((2, 300), 0.99, 1.01), rtol=1e-9)
    c, g = _both(np.arange(1000, dtype=np.int64).reshape(1, 1000) * (2**40))
    _values(c.cumsum(1), g.cumsum(1), 0, 0)  # exact in int64
    a = RNG.uniform(0.5, 1.5, (3, 5))
    a[0, 1] = 0.0
    a[1, 1] = a[1, 3] = 0.0
    a[2, 0] = a[2, 2] = a[2, 4] = 0.0  # one, two and three zeros: the masked gradients
    _check(lambda x: x.cumprod(1), pairs=[_both(a)])
    c, g = _both(np.array([-0.0, 1.0]))
    assert math.copysign(1, g.cumsum(0).tolist()[0]) == 1  # from +0, as PyTorch


def test_logcumsumexp():
    for dim in (0, -1):
        _check(lambda x, d=dim: numbagrad.logcumsumexp(x, d), (3, 4))
    _check(lambda x: numbagrad.logcumsumexp(x.t(), 1), ((4, 3), -1, 1, np.float32), rtol=1e-5)
    _check(lambda x: numbagrad.logcumsumexp(x, 1), (2, 300), rtol=1e-9)  # above one block
    _check(lambda x: numbagrad.logcumsumexp(x, 0), pairs=[_both(np.float64(0.5))])  # 0-d
    a = np.array([[-np.inf, -np.inf, 1.0, 2.0], [np.inf, 0.0, np.inf, -np.inf]])
    c, g = _both(a)
    _values(numbagrad.logcumsumexp(c, 1), numbagrad.logcumsumexp(g, 1), 1e-12, 0)
    c, g = _both(np.ones((0, 3)))
    _values(numbagrad.logcumsumexp(c, 0), numbagrad.logcumsumexp(g, 0), 0, 0)
    _raises_alike(lambda x: numbagrad.logcumsumexp(x, 2), np.ones((2, 3)))
    _raises_alike(lambda x: numbagrad.logcumsumexp(x, 0), np.ones(3, np.int64))


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummax_cummin(fn):
    # the running extreme (NumPy's maximum.accumulate on the device), then its indices
    def op(x, d):
        return getattr(numbagrad, fn)(x, d)

    _check(lambda x: op(x, 1), (3, 4))
    _check(lambda x: op(x.t(), 0), (4, 3))  # non-contiguous
    _check(lambda x: op(x, -1), (2, 300))  # above one block
    a = np.array([[1.0, 3.0, 3.0, np.nan, 2.0, np.nan], [2.0, 2.0, -1.0, -1.0, 0.0, 5.0]])
    _check(lambda x: op(x, 1), pairs=[_both(a)])  # ties take the latest index; NaN stays
    c, g = _both(np.array([[3, 1, 3, 5], [-2, -2, 7, 0]], np.int64))
    for d in (0, 1):
        _values(op(c, d).values, op(g, d).values, 0, 0)
        _values(op(c, d).indices, op(g, d).indices, 0, 0)
    _check(lambda x: op(x, 0), pairs=[_both(np.float64(1.5))])  # 0-d
    c, g = _both(np.ones((0, 3)))
    _values(op(c, 0).indices, op(g, 0).indices, 0, 0)
    _raises_alike(lambda x: op(x, 2), np.ones((2, 3)))


def test_scans_match_torch():
    torch = pytest.importorskip("torch")
    a = RNG.uniform(-1, 1, (4, 37))
    g = numbagrad.tensor(a, device="cuda")
    t = torch.tensor(a)
    np.testing.assert_allclose(g.cumsum(1).cpu().numpy(), t.cumsum(1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.cumprod(0).cpu().numpy(), t.cumprod(0).numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        numbagrad.logcumsumexp(g, 1).cpu().numpy(), t.logcumsumexp(1).numpy(), rtol=1e-12
    )
    a[1, 3] = a[2, 5] = np.nan
    g = numbagrad.tensor(a, device="cuda")
    t = torch.tensor(a)
    for fn in ("cummax", "cummin"):
        v, i = getattr(numbagrad, fn)(g, 1)
        tv, ti = getattr(torch, fn)(t, 1)
        np.testing.assert_array_equal(v.cpu().numpy(), tv.numpy())
        np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())


# -- cat / stack / flip / roll ---------------------------------------------------------------
def test_cat_stack():
    _check(lambda a, b: numbagrad.cat([a, b], 0), (2, 3), (4, 3))
    _check(lambda a, b: numbagrad.cat([a, b, a], -1), (2, 3), (2, 1))
    _check(lambda a, b: numbagrad.cat([a.t(), b[:, ::2]], 1), (3, 2), (2, 5))  # views
    _check(lambda a, b: numbagrad.stack([a, b], 0), (2, 3), (2, 3))
    _check(lambda a, b: numbagrad.stack([a, b.t()], -1), (2, 3), (3, 2))
    _check(lambda a, b: numbagrad.stack([a, b]), (), ())  # 0-d operands
    _check(lambda a, b: numbagrad.cat([a, b], 0), (0, 3), (2, 3))  # an empty operand
    _check(lambda a, b: numbagrad.cat([a, b], 1), (3, 300), (3, 5))  # above one block
    c = [numbagrad.tensor([1, 2]), numbagrad.tensor([0.5])]
    g = [t.cuda() for t in c]
    _values(numbagrad.cat(c), numbagrad.cat(g), 0, 0)  # promoted to float32


def test_cat_stack_errors():
    g = numbagrad.ones(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        numbagrad.cat([g, numbagrad.ones(2, 4, device="cuda")], 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        numbagrad.cat([g, g], 2)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        numbagrad.stack([g, g.t()])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        numbagrad.cat([g, numbagrad.ones(2, 3)], 0)


def test_flip_roll():
    _check(lambda x: x.flip(0), (3, 4))
    _check(lambda x: x.flip((0, -1)), (2, 3, 4))
    _check(lambda x: x.t().flip(1), (4, 3))
    _check(lambda x: x.flip(0).flip(0) * x, (3,))
    _check(lambda x: x.flip(0), ())
    _check(lambda x: x.roll(1, 0), (3, 4))
    _check(lambda x: x.roll((-1, 5), (1, -1)), (2, 3, 4))  # two dims, negative and > size
    _check(lambda x: x.roll(3), (3, 4))  # flattened
    _check(lambda x: x.t().roll(2, 0), (4, 3))
    _check(lambda x: x.roll(250, 1), (2, 600))
    _check(lambda x: x.roll((1, 1), (0, 0)), (5,))  # one dim twice
    c, g = _both(np.ones((0, 3)))
    _values(c.roll(1, 1), g.roll(1, 1), 0, 0)
    _values(c.flip(0), g.flip(0), 0, 0)
    _raises_alike(lambda x: x.flip(2), np.ones((2, 3)))
    _raises_alike(lambda x: x.roll(1, 2), np.ones((2, 3)))
    _raises_alike(lambda x: x.roll((1, 2), 0), np.ones((2, 3)))


# -- the backend methods validate before launching ----------------------------------------------
def test_backend_validates_dims():
    x = numbagrad.ones(2, 3, device="cuda")._data
    with pytest.raises(IndexError, match="prod"):
        CUDA.prod(x, (2,), False)
    with pytest.raises(IndexError, match="argmax"):
        CUDA.argreduce(True, x, -3, False)
    with pytest.raises(IndexError, match="cumsum"):
        CUDA.scan("cumsum", x, 2)
    with pytest.raises(IndexError, match="flip"):
        CUDA.flip(x, (3,))
    with pytest.raises(IndexError, match="roll"):
        CUDA.roll(x, 1, 5)
    with pytest.raises(IndexError, match="concatenate"):
        CUDA.concatenate([x, x], 2)
    with pytest.raises(ValueError, match="must match exactly"):
        CUDA.concatenate([x, x.reshape(3, 2)], 0)
    with pytest.raises(ValueError, match="no identity"):
        CUDA.reduce("amax", x[:, :0], 1, False)


def test_negative_strides():
    # flip is a negative-stride view in the backend: the kernels read through it
    a = RNG.standard_normal((3, 5))
    x = CUDA.flip(numbagrad.tensor(a, device="cuda")._data, (0, 1))
    assert x._st == (-5, -1)
    r = a[::-1, ::-1]
    np.testing.assert_allclose(CUDA.scan("cumsum", x, 1).to_host(), r.cumsum(1), rtol=1e-12)
    np.testing.assert_allclose(CUDA.prod(x, (0,), False).to_host(), r.prod(0), rtol=1e-12)
    np.testing.assert_array_equal(CUDA.argreduce(True, x, 1, False).to_host(), r.argmax(1))
    # dim None: the row-major flattening, read through the strides
    np.testing.assert_allclose(CUDA.scan("cumsum", x, None).to_host(), np.cumsum(r), rtol=1e-12)
    assert CUDA.argreduce(False, x, None, False).item() == r.argmin()
    assert CUDA.argreduce(True, x.T, None, True).shape == (1, 1)
    np.testing.assert_array_equal(CUDA.roll(x, 2, 1).to_host(), np.roll(r, 2, 1))
    np.testing.assert_array_equal(CUDA.concatenate([x, x], 1).to_host(), np.concatenate([r, r], 1))


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.softmax(1),
        lambda t: t.logsumexp(1),
        lambda t: t.cumprod(1) + t.prod(0),
        lambda t: numbagrad.cat([t, t.flip(0).roll(1, 1)], 1) ** 2,
    ],
    ids=["softmax", "logsumexp", "cumprod-prod", "cat-flip-roll"],
)
def test_second_order(fn):
    # the rules are numbagrad ops: their gradients run on the device too
    a = RNG.uniform(0.5, 1.5, (3, 4))
    hs = []
    for dev in ("cpu", "cuda"):
        x = numbagrad.tensor(a, device=dev, requires_grad=True)
        (g,) = numbagrad.autograd.grad(fn(x).sum(), x, create_graph=True)
        (h,) = numbagrad.autograd.grad((g * g).sum(), x)
        assert h.device.type == dev
        hs.append(h.cpu().numpy())
    np.testing.assert_allclose(hs[1], hs[0], rtol=1e-9, atol=1e-12)


def test_backward_stays_on_device():
    # (prod and cumprod are left out: their rules look at the data when no transform is
    # tracing it, NOTE [Data branches in rules], which reads one value back to the host)
    x = numbagrad.tensor(RNG.uniform(0.5, 1.5, (3, 4)), device="cuda", requires_grad=True)
    loss = (
        x.amax(0).sum()
        + x.logsumexp(1).sum()
        + x.softmax(0).var()
        + x.cumsum(1).flip(0).mean()
        + numbagrad.cat([x, x.flip(0).roll(1, 1)], 1).std()
    )
    before = dict(_driver.COPIES)
    loss.backward()
    assert _driver.COPIES == before  # no host<->device copy during backward
    xc = x.detach().cpu().requires_grad_()
    (
        xc.amax(0).sum()
        + xc.logsumexp(1).sum()
        + xc.softmax(0).var()
        + xc.cumsum(1).flip(0).mean()
        + numbagrad.cat([xc, xc.flip(0).roll(1, 1)], 1).std()
    ).backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.bool_])
def test_split_sums_match_numpy(monkeypatch, dtype):
    """Few long outputs are summed in pieces, then the pieces (NOTE [CUDA split sums]);
    a small SPLIT_CHUNK takes that path at simulator sizes."""
    from numbagrad.kernels.cuda import backend

    monkeypatch.setattr(backend, "SPLIT_CHUNK", 8)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 2, 21))
    a = a > 0 if dtype is np.bool_ else a.astype(dtype)
    x = numbagrad.tensor(a, device="cuda")
    ref64 = a.astype(np.float64)  # (float32: the device sums in float64, NumPy in float32)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype is np.float32 else {"rtol": 1e-12}
    for dim in (None, (0, 2)):
        got = x.sum() if dim is None else x.sum(dim)
        assert got.dtype == numbagrad.tensor(a).sum().dtype
        ref = ref64.sum() if dim is None else ref64.sum(dim)
        np.testing.assert_allclose(got.cpu().numpy(), ref, **tol)
    # a transposed view: the pieces follow the permuted strides
    got = x.transpose(0, 2).sum(0).cpu().numpy()
    np.testing.assert_allclose(got, ref64.transpose(2, 1, 0).sum(0), **tol)
