"""``interpolate`` against PyTorch: every mode without antialiasing (the ``Upsample``
primitive, NOTE [Resampling] in ``numbagrad/nn/_resample.py``) by ``align_corners``,
dtype and ``size``/``scale_factor``, forward and gradients; non-finite inputs and
gradients reaching exactly PyTorch's outputs; gradcheck and gradgradcheck in float64;
the threaded kernels against the serial ones."""

import itertools

import numpy as np
import pytest

import numbagrad
import numbagrad.nn.functional as F
from numbagrad.kernels.cpu import resample as kernels
from numbagrad.nn._resample import axis_table

torch = pytest.importorskip("torch")  # (most cases compare against it)

RNG = np.random.default_rng(28)

# (mode, input shape, size / scale arguments)
CASES = [
    ("nearest", (2, 3, 5), [dict(scale_factor=2), dict(size=7), dict(scale_factor=0.6)]),
    ("nearest", (1, 2, 5, 6), [dict(scale_factor=2.3), dict(size=(3, 12))]),
    ("nearest", (1, 2, 3, 4, 5), [dict(scale_factor=(2, 1.5, 0.5)), dict(size=(3, 4, 9))]),
    ("nearest-exact", (2, 3, 5), [dict(scale_factor=1.7), dict(size=3)]),
    ("nearest-exact", (1, 2, 5, 6), [dict(scale_factor=2), dict(size=(3, 11))]),
    ("nearest-exact", (1, 2, 3, 4, 5), [dict(scale_factor=(2, 1.5, 0.5))]),
    ("linear", (2, 3, 5), [dict(scale_factor=2), dict(size=1), dict(size=5), dict(size=3)]),
    (
        "bilinear",
        (2, 3, 5, 6),
        [
            dict(scale_factor=2.3),
            dict(size=(3, 11)),
            dict(scale_factor=(1, 2)),
            dict(scale_factor=1.7, recompute_scale_factor=True),
        ],
    ),
    (
        "bicubic",
        (2, 3, 5, 6),
        [dict(scale_factor=2.3), dict(size=(3, 11)), dict(scale_factor=(1, 0.5)), dict(size=1)],
    ),
    ("trilinear", (1, 2, 3, 4, 5), [dict(scale_factor=(2, 1.5, 0.5)), dict(size=(3, 1, 7))]),
]
PARAMS = [
    pytest.param(mode, shape, kw, align, dt, id=f"{mode}-{shape}-{kw}-{align}-{dt.__name__}")
    for mode, shape, kws in CASES
    for kw in kws
    for align in ([None] if mode.startswith("nearest") else [False, True])
    for dt in (np.float32, np.float64)
]


def _both(x, mode, align, **kw):
    xo = numbagrad.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yo = F.interpolate(xo, mode=mode, align_corners=align, **kw)
    yt = torch.nn.functional.interpolate(xt, mode=mode, align_corners=align, **kw)
    return xo, xt, yo, yt


@pytest.mark.parametrize("mode,shape,kw,align,dt", PARAMS)
def test_matches_torch(mode, shape, kw, align, dt):
    x = RNG.standard_normal(shape).astype(dt)
    xo, xt, yo, yt = _both(x, mode, align, **kw)
    assert yo.dtype == (numbagrad.float32 if dt == np.float32 else numbagrad.float64)
    assert yo.grad_fn.name() == yt.grad_fn.name()
    tol = dict(rtol=1e-5, atol=1e-5) if dt == np.float32 else dict(rtol=1e-12, atol=1e-12)
    if mode.startswith("nearest"):
        tol = dict(rtol=0, atol=0)  # a copy of the picked inputs
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), **tol)
    g = RNG.standard_normal(tuple(yt.shape)).astype(dt)
    yo.backward(numbagrad.tensor(g))
    yt.backward(torch.tensor(g))
    gtol = dict(rtol=1e-5, atol=1e-5) if dt == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), **gtol)


@pytest.mark.parametrize(
    "mode,shape,kw",
    [
        ("bilinear", (2, 3, 6, 5), dict(scale_factor=2)),
        ("bicubic", (2, 3, 6, 5), dict(size=(4, 9))),
        ("trilinear", (2, 2, 4, 6, 5), dict(scale_factor=1.5)),
        ("nearest", (2, 3, 6, 5), dict(size=(4, 9))),
        ("linear", (2, 3, 6), dict(scale_factor=2.5)),
    ],
)
def test_non_contiguous_input(mode, shape, kw):
    base = RNG.standard_normal((shape[1], shape[0], *shape[2:], 2))
    x = np.swapaxes(base, 0, 1)[..., 0]  # strided, channels and batch swapped
    align = None if mode == "nearest" else True
    _, xt, _, yt = _both(np.ascontiguousarray(x), mode, align, **kw)
    view = numbagrad.tensor(base, requires_grad=True)
    y = F.interpolate(view.transpose(0, 1)[..., 0], mode=mode, align_corners=align, **kw)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = RNG.standard_normal(tuple(yt.shape))
    y.backward(numbagrad.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(
        view.grad.numpy()[..., 0].swapaxes(0, 1), xt.grad.numpy(), rtol=1e-12, atol=1e-12
    )
    assert np.all(view.grad.numpy()[..., 1] == 0)


NONFINITE = [
    ("nearest", dict(scale_factor=2)),
    ("nearest", dict(size=(5, 4))),
    ("nearest-exact", dict(scale_factor=(1.5, 0.7))),
    ("bilinear", dict(scale_factor=2)),
    ("bilinear", dict(size=(6, 5))),  # the same size: PyTorch's copy, weights 1 and 0
    ("bilinear", dict(scale_factor=(1, 0.5))),
    ("bicubic", dict(scale_factor=2)),
    ("bicubic", dict(size=(6, 3))),
]


@pytest.mark.parametrize("mode,kw", NONFINITE)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_non_finite_values_reach_what_torch_reaches(mode, kw, align, dt):
    """An ``inf``/``nan`` input reaches exactly the outputs PyTorch's kernels give a
    non-finite value (a tap of weight 0 included), and a ``nan``/``inf`` output gradient
    exactly the inputs PyTorch's backward gives one."""
    if mode.startswith("nearest"):
        if align:
            return
        align = None
    x = RNG.standard_normal((2, 2, 6, 5)).astype(dt)
    x[0, 0, 2, 1] = np.inf
    x[0, 1, 0, 0] = np.nan
    x[1, 0, 5, 4] = -np.inf
    x[1, 1, 3, 3] = np.inf
    x[1, 1, 3, 4] = -np.inf
    xo, xt, yo, yt = _both(x, mode, align, **kw)
    a, b = yo.detach().numpy(), yt.detach().numpy()
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b))
    np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b))
    fin = np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=1e-5, atol=1e-5)
    g = RNG.standard_normal(tuple(yt.shape)).astype(dt)
    g[0, 0, 1, 1] = np.nan
    g[1, 1, -1, -1] = np.inf
    g[1, 0, 0, -1] = -np.inf
    (go,) = numbagrad.autograd.grad(yo, [xo], numbagrad.tensor(g))
    (gt,) = torch.autograd.grad(yt, [xt], torch.tensor(g))
    a, b = go.numpy(), gt.numpy()
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
    fin = np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=1e-4, atol=1e-4)


def test_same_size_copy_reads_its_input_twice():
    """PyTorch's linear copy of an equal-size axis reads each input with weights 1 and 0:
    an ``inf`` gives ``nan`` at its own output only (the previous tables read the next
    input with weight 0, so the ``inf`` turned its left neighbour into ``nan``)."""
    x = numbagrad.tensor([[[1.0, float("inf"), 3.0, 4.0]]])
    y = F.interpolate(x, size=4, mode="linear")
    assert y.numpy()[0, 0, 0] == 1.0 and np.isnan(y.numpy()[0, 0, 1])
    assert y.numpy()[0, 0, 2] == 3.0


@pytest.mark.parametrize(
    "mode,shape,kw,align",
    [
        ("nearest", (1, 2, 3), dict(scale_factor=1.7), None),
        ("nearest-exact", (1, 1, 3, 2), dict(size=(4, 3)), None),
        ("linear", (2, 1, 4), dict(size=7), False),
        ("linear", (1, 2, 5), dict(size=3), True),
        ("bilinear", (1, 2, 3, 4), dict(scale_factor=(1.5, 0.6)), False),
        ("bilinear", (1, 1, 3, 3), dict(size=(5, 3)), True),
        ("bicubic", (1, 1, 3, 4), dict(scale_factor=1.7), False),
        ("bicubic", (1, 2, 4, 3), dict(size=(2, 5)), True),
        ("trilinear", (1, 1, 2, 3, 2), dict(scale_factor=(1.5, 0.7, 2)), False),
        ("trilinear", (1, 1, 2, 2, 3), dict(size=(3, 3, 2)), True),
    ],
)
def test_gradcheck_and_gradgradcheck(mode, shape, kw, align):
    x = numbagrad.tensor(RNG.standard_normal(shape), requires_grad=True)

    def f(t):
        return F.interpolate(t, mode=mode, align_corners=align, **kw)

    assert numbagrad.autograd.gradcheck(f, (x,))
    assert numbagrad.autograd.gradgradcheck(f, (x,))


def test_jvp_and_vmap():
    x = numbagrad.tensor(RNG.standard_normal((3, 2, 4, 5)))
    t = numbagrad.tensor(RNG.standard_normal((3, 2, 4, 5)))

    def f(a):
        return F.interpolate(a, scale_factor=(1.5, 2), mode="bicubic", align_corners=False)

    out, tan = numbagrad.func.jvp(f, (x,), (t,))
    np.testing.assert_allclose(out.numpy(), f(x).numpy())
    np.testing.assert_allclose(tan.numpy(), f(t).numpy(), rtol=1e-12, atol=1e-12)
    # vmap over a dim in the middle: per example (2, 4, 5) -> a batch of 1
    per = numbagrad.vmap(lambda a: f(a.unsqueeze(0))[0], in_dims=1)(x)
    ref = numbagrad.stack([f(x[:, i].unsqueeze(0))[0] for i in range(2)])
    np.testing.assert_allclose(per.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    # the gradient of a vmapped call, and vmap of the gradient
    g = numbagrad.func.vmap(numbagrad.func.grad(lambda a: f(a.unsqueeze(0)).square().sum()))(x)
    xs = x.clone().requires_grad_(True)
    f(xs).square().sum().backward()
    np.testing.assert_allclose(g.numpy(), xs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_float16_and_empty_batch():
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float16)
    yo = F.interpolate(numbagrad.tensor(x), scale_factor=2, mode="bilinear")
    yt = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=2, mode="bilinear")
    assert yo.dtype == numbagrad.float16
    np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-3, atol=1e-3)
    e = numbagrad.zeros(0, 2, 3, 4, requires_grad=True)
    y = F.interpolate(e, size=(5, 2), mode="bicubic")
    assert tuple(y.shape) == (0, 2, 5, 2)
    y.sum().backward()
    assert tuple(e.grad.shape) == (0, 2, 3, 4)


def test_size_errors_match_torch():
    for shape, kw in [
        ((1, 1, 0, 4), dict(size=(2, 2), mode="bilinear")),
        ((1, 1, 4), dict(size=0, mode="nearest")),
        ((1, 1, 0, 2, 2), dict(size=(3, 3, 3), mode="trilinear")),
        ((1, 0, 4), dict(size=3, mode="nearest")),
    ]:
        with pytest.raises(RuntimeError) as ours:
            F.interpolate(numbagrad.zeros(*shape), **kw)
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.functional.interpolate(torch.zeros(*shape), **kw)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("grow", [True, False])
def test_threaded_kernels_match_serial_and_the_dense_map(k, mode, grow, monkeypatch):
    """The ``prange`` twins (over chunks of planes) give the serial kernels' result bit
    for bit, forward and backward, and both are the dense separable map of the tables and
    its transpose (the backward's transposed tables, zero padding included)."""
    in_size = (5, 4, 6)[3 - k :] if grow else (9, 7, 11)[3 - k :]
    size = (7, 3, 9)[3 - k :] if grow else (4, 2, 5)[3 - k :]
    x = RNG.standard_normal((7, *in_size))
    g = RNG.standard_normal((7, *size))
    tables = [axis_table(mode, False, n, o, None, "<f8") for n, o in zip(in_size, size)]
    trans = [kernels.transpose_table(i, w, n) for (i, w, _), n in zip(tables, in_size)]
    results = []
    for chunks in (0, 3):
        monkeypatch.setattr(kernels, "_chunks", lambda planes, work, c=chunks: c)
        out, gin = np.empty((7, *size)), np.empty((7, *in_size))
        kernels.resample(x, tables, out)
        kernels.resample_backward(g, tables, gin, trans)
        results.append((out, gin))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    dense, back = x, g
    for j, (idx, w, _) in enumerate(tables):
        m = np.zeros((size[j], in_size[j]))
        for t, o in itertools.product(range(idx.shape[0]), range(size[j])):
            m[o, idx[t, o]] += w[t, o]
        dense = np.moveaxis(np.tensordot(m, np.moveaxis(dense, 1 + j, 0), axes=1), 0, 1 + j)
        back = np.moveaxis(np.tensordot(m.T, np.moveaxis(back, 1 + j, 0), axes=1), 0, 1 + j)
    np.testing.assert_allclose(results[0][0], dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][1], back, rtol=1e-12, atol=1e-12)


def test_large_input_takes_the_threaded_path_and_matches_torch():
    x = RNG.standard_normal((4, 16, 24, 20)).astype(np.float32)  # above PARALLEL_MIN
    xo, xt, yo, yt = _both(x, "bilinear", False, scale_factor=2)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = RNG.standard_normal(tuple(yt.shape)).astype(np.float32)
    yo.backward(numbagrad.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)
