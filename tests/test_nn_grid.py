"""``grid_sample``/``affine_grid``, fractional max pooling and the other issue-28 additions to
``nn.functional`` against PyTorch (values, gradients, double backward, errors), plus the
checks that need no PyTorch (bad grids, the generator, vmap). The op database
(``tests/_opdb_conv.py``) runs gradcheck, gradgradcheck, JVP and vmap on ``grid_sample``
and ``affine_grid`` too. Tests that compare with PyTorch skip without it."""

import itertools
import warnings

import numpy as np
import pytest

import numbagrad
import numbagrad.nn.functional as F


def _torch():
    return pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy()


_CASES_2D = list(
    itertools.product(
        ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True)
    )
)
_CASES_3D = list(
    itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"), (False, True))
)


def _inputs(nd, seed, spread=1.3):
    rng = np.random.default_rng(seed)
    xs = (2, 3, 4, 5) if nd == 2 else (2, 2, 3, 4, 5)
    gs = (2, 3, 4, 2) if nd == 2 else (2, 2, 3, 3, 3)
    return rng.standard_normal(xs), rng.uniform(-spread, spread, gs), rng


@pytest.mark.parametrize("nd,mode,padding,align", [(2, *c) for c in _CASES_2D] + [
    (3, *c) for c in _CASES_3D
])  # fmt: skip
def test_grid_sample_against_torch(nd, mode, padding, align):
    """Values, both gradients (the fused kernel) and the double backward (the op rules)
    against PyTorch, float64."""
    torch = _torch()
    x, g, rng = _inputs(nd, 7)
    kw = {"mode": mode, "padding_mode": padding, "align_corners": align}
    tx, tg = (torch.tensor(a, requires_grad=True) for a in (x, g))
    nx, ng_ = (numbagrad.tensor(a, requires_grad=True) for a in (x, g))
    t_out = torch.nn.functional.grid_sample(tx, tg, **kw)
    n_out = F.grid_sample(nx, ng_, **kw)
    np.testing.assert_allclose(_np(n_out), _np(t_out), rtol=1e-12, atol=1e-12)
    assert n_out.grad_fn.name() == type(t_out.grad_fn).__name__
    go = rng.standard_normal(t_out.shape)
    for create in (False, True):
        kw2 = {"create_graph": create, "retain_graph": True}
        ta = torch.autograd.grad(t_out, (tx, tg), torch.tensor(go), **kw2)
        na = numbagrad.autograd.grad(n_out, (nx, ng_), numbagrad.tensor(go), **kw2)
        for a, b in zip(na, ta):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    if mode == "nearest":
        return
    w1, w2 = rng.standard_normal(x.shape), rng.standard_normal(g.shape)
    t_gog = torch.tensor(go, requires_grad=True)
    n_gog = numbagrad.tensor(go, requires_grad=True)
    ta = torch.autograd.grad(t_out, (tx, tg), t_gog, create_graph=True)
    na = numbagrad.autograd.grad(n_out, (nx, ng_), n_gog, create_graph=True)
    t2 = torch.autograd.grad(
        (ta[0] * torch.tensor(w1)).sum() + (ta[1] * torch.tensor(w2)).sum(), (tx, tg, t_gog)
    )
    n2 = numbagrad.autograd.grad(
        (na[0] * numbagrad.tensor(w1)).sum() + (na[1] * numbagrad.tensor(w2)).sum(),
        (nx, ng_, n_gog),
    )
    for a, b in zip(n2, t2):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_grid_sample_float32_and_unaligned_sizes(mode):
    torch = _torch()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 1, 6)).astype(np.float32)  # a height of 1
    g = rng.uniform(-1.5, 1.5, (1, 5, 2, 2)).astype(np.float32)
    for padding in ("zeros", "border", "reflection"):
        kw = {"mode": mode, "padding_mode": padding, "align_corners": True}
        a = F.grid_sample(numbagrad.tensor(x), numbagrad.tensor(g), **kw)
        b = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), **kw)
        assert a.dtype == numbagrad.float32
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-5)


def test_grid_sample_gradcheck_every_mode():
    rng = np.random.default_rng(11)
    for nd, cases in ((2, _CASES_2D), (3, _CASES_3D)):
        for mode, padding, align in cases:
            xs = (1, 2, 3, 3) if nd == 2 else (1, 1, 2, 3, 3)
            gs = (1, 2, 2, 2) if nd == 2 else (1, 1, 2, 2, 3)
            x = numbagrad.tensor(rng.standard_normal(xs), requires_grad=True)
            g = numbagrad.tensor(rng.uniform(-1.2, 1.2, gs), requires_grad=True)

            def f(a, b, mode=mode, padding=padding, align=align):
                return F.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=align)

            assert numbagrad.autograd.gradcheck(f, (x, g), eps=1e-6, atol=1e-5)
            if mode != "nearest":
                assert numbagrad.autograd.gradgradcheck(f, (x, g), eps=1e-6, atol=1e-5)


def test_grid_sample_vmap_and_jvp():
    """``vmap`` over the input only, the grid only and both, against a loop; forward mode
    against the reverse-mode Jacobian."""
    rng = np.random.default_rng(5)
    x = numbagrad.tensor(rng.standard_normal((3, 1, 2, 4, 4)))
    g = numbagrad.tensor(rng.uniform(-1, 1, (3, 1, 2, 3, 2)))

    def f(a, b):
        return F.grid_sample(a, b, mode="bicubic", padding_mode="border", align_corners=False)

    for dims in ((0, 0), (0, None), (None, 0)):
        xa = x if dims[0] == 0 else x[0]
        ga = g if dims[1] == 0 else g[0]
        out = numbagrad.func.vmap(f, in_dims=dims)(xa, ga)
        a = [x[i] if dims[0] == 0 else x[0] for i in range(3)]
        b = [g[i] if dims[1] == 0 else g[0] for i in range(3)]
        ref = numbagrad.stack([f(ai, bi) for ai, bi in zip(a, b)])
        np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-12, atol=1e-12)
    tx, tg = (
        numbagrad.randn(*x.shape[1:], dtype=numbagrad.float64),
        numbagrad.randn(*g.shape[1:], dtype=numbagrad.float64),
    )
    _, t_out = numbagrad.func.jvp(f, (x[0], g[0]), (tx, tg))
    _, pull = numbagrad.func.vjp(f, x[0], g[0])
    ct = numbagrad.randn(*t_out.shape, dtype=numbagrad.float64)
    gx, gg = pull(ct)
    lhs = float((t_out * ct).sum())
    rhs = float((gx * tx).sum() + (gg * tg).sum())
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))


def test_grid_sample_bad_grid_values_read_zero():
    """NaN, infinite and huge coordinates never index outside the input."""
    x = numbagrad.ones(1, 1, 3, 3, dtype=numbagrad.float64, requires_grad=True)
    bad = [float("nan"), float("inf"), -float("inf"), 1e300, -1e300]
    g = numbagrad.tensor([[[[v, 0.0] for v in bad]]], dtype=numbagrad.float64)
    g.requires_grad_()
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            out = F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)
            out.sum().backward()
            assert out.shape == (1, 1, 1, 5)
    g3 = numbagrad.tensor([[[[[v, 0.0, v] for v in bad]]]], dtype=numbagrad.float64)
    x3 = numbagrad.ones(1, 1, 2, 2, 2, dtype=numbagrad.float64, requires_grad=True)
    for padding in ("zeros", "border", "reflection"):
        F.grid_sample(x3, g3, padding_mode=padding, align_corners=True).sum().backward()


def test_grid_sample_errors():
    x = numbagrad.zeros(1, 1, 3, 3)
    g = numbagrad.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="expected mode to be"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.grid_sample(x, g.double(), align_corners=False)
    with pytest.raises(RuntimeError, match="4D or 5D"):
        F.grid_sample(x[0], g[0], align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, numbagrad.zeros(2, 2, 2, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="size 2 in last dimension"):
        F.grid_sample(x, numbagrad.zeros(1, 2, 2, 3), align_corners=False)
    with pytest.raises(RuntimeError, match="non-empty spatial"):
        F.grid_sample(numbagrad.zeros(1, 1, 0, 3), g, align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(
            numbagrad.zeros(1, 1, 2, 2, 2),
            numbagrad.zeros(1, 1, 1, 1, 3),
            mode="bicubic",
            align_corners=False,
        )


def test_grid_sample_errors_are_torchs():
    torch = _torch()
    bad = [
        ((1, 1, 3, 3), (1, 2, 2, 3), {}),
        ((1, 1, 3, 3), (2, 2, 2, 2), {}),
        ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), {"mode": "bicubic"}),
        ((1, 1, 3, 3), (1, 2, 2, 2), {"mode": "linear"}),
    ]
    for xs, gs, kw in bad:
        for mod, fn in ((torch, torch.nn.functional.grid_sample), (numbagrad, F.grid_sample)):
            with pytest.raises(Exception) as info:
                fn(mod.zeros(*xs), mod.zeros(*gs), align_corners=False, **kw)
            if mod is torch:
                t_type = info.type
            else:
                assert info.type is t_type, (xs, gs, kw)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_against_torch(align):
    torch = _torch()
    rng = np.random.default_rng(2)
    for theta_shape, size in (((2, 2, 3), (2, 3, 4, 5)), ((1, 3, 4), (1, 2, 3, 4, 2))):
        theta = rng.standard_normal(theta_shape)
        tt = torch.tensor(theta, requires_grad=True)
        nt = numbagrad.tensor(theta, requires_grad=True)
        a = F.affine_grid(nt, size, align_corners=align)
        b = torch.nn.functional.affine_grid(tt, size, align_corners=align)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)
        go = rng.standard_normal(b.shape)
        (ga,) = numbagrad.autograd.grad(a, nt, numbagrad.tensor(go))
        (gb,) = torch.autograd.grad(b, tt, torch.tensor(go))
        np.testing.assert_allclose(_np(ga), _np(gb), rtol=1e-12, atol=1e-12)
    # a unit-size grid: PyTorch's 0 (and its warning with align_corners=True)
    ctx = pytest.warns(UserWarning, match="unit-size") if align else warnings.catch_warnings()
    with ctx:
        a = F.affine_grid(numbagrad.tensor(rng.standard_normal((1, 2, 3))), (1, 1, 1, 3), align)
    assert a.shape == (1, 1, 3, 2)


def test_affine_grid_errors():
    theta = numbagrad.zeros(1, 2, 3)
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(numbagrad.zeros(1, 2, 3, dtype=numbagrad.int64), (1, 1, 2, 2), False)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(numbagrad.zeros(1, 3, 4), (1, 1, 2, 2), False)
    with pytest.raises(ValueError, match="Nx3x4"):
        F.affine_grid(theta, (1, 1, 2, 2, 2), False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(theta, (1, 1, 2), False)
    with pytest.raises(ValueError, match="non-zero, positive"):
        F.affine_grid(theta, (1, 1, 0, 2), False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(theta, (1, 1, 2, 2))


def test_spatial_transformer_round_trip():
    """The identity transform samples the input back (align_corners=False: pixel centres)."""
    x = numbagrad.randn(2, 3, 5, 4, dtype=numbagrad.float64)
    theta = numbagrad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=numbagrad.float64)
    grid = F.affine_grid(theta, x.shape, align_corners=False)
    for mode in ("bilinear", "nearest", "bicubic"):
        out = F.grid_sample(x, grid, mode=mode, align_corners=False)
        np.testing.assert_allclose(_np(out), _np(x), rtol=1e-12, atol=1e-12)


# -- fractional max pooling and the small names ----------------------------------------------------
@pytest.mark.parametrize(
    "k,shape,kernel,out",
    [
        (2, (2, 3, 11, 9), (2, 3), (5, 4)),
        (2, (3, 7, 7), 3, 5),
        (3, (2, 2, 6, 7, 8), 2, (3, 4, 5)),
        (3, (1, 5, 6, 5), (2, 1, 3), (3, 5, 2)),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_against_torch(k, shape, kernel, out, dtype):
    torch = _torch()
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape)
    n = shape[0] if len(shape) == k + 2 else 1
    s = rng.uniform(0, 1, (n, shape[-k - 1], k))
    tdt, ndt = getattr(torch, dtype), getattr(numbagrad, dtype)
    tx = torch.tensor(x, dtype=tdt, requires_grad=True)
    nx = numbagrad.tensor(x, dtype=ndt, requires_grad=True)
    t_fn = getattr(torch.nn.functional, f"fractional_max_pool{k}d")
    n_fn = getattr(F, f"fractional_max_pool{k}d")
    to, ti = t_fn(tx, kernel, out, return_indices=True, _random_samples=torch.tensor(s, dtype=tdt))
    no, ni = n_fn(nx, kernel, out, None, True, numbagrad.tensor(s, dtype=ndt))
    np.testing.assert_array_equal(ni.numpy(), ti.numpy())
    np.testing.assert_array_equal(_np(no), _np(to))
    go = rng.standard_normal(to.shape)
    to.backward(torch.tensor(go, dtype=tdt))
    no.backward(numbagrad.tensor(go, dtype=ndt))
    np.testing.assert_allclose(_np(nx.grad), _np(tx.grad), rtol=1e-6)
    # the module, and the ratio form
    mod = getattr(numbagrad.nn, f"FractionalMaxPool{k}d")
    ratio = (0.5,) * k
    m = mod(kernel if k == 2 else 1, output_ratio=ratio, _random_samples=numbagrad.tensor(s))
    tm = getattr(torch.nn, f"FractionalMaxPool{k}d")(
        kernel if k == 2 else 1, output_ratio=ratio, _random_samples=torch.tensor(s)
    )
    np.testing.assert_array_equal(_np(m(numbagrad.tensor(x))), _np(tm(torch.tensor(x))))


def test_fractional_max_pool_draws_from_the_global_generator():
    x = numbagrad.randn(2, 3, 12, 12)
    numbagrad.manual_seed(5)
    a = F.fractional_max_pool2d(x, 2, output_size=5)
    numbagrad.manual_seed(5)
    b = F.fractional_max_pool2d(x, 2, output_size=5)
    np.testing.assert_array_equal(_np(a), _np(b))
    numbagrad.manual_seed(5)
    s = numbagrad.rand(2, 3, 2)
    c = F.fractional_max_pool2d(x, 2, output_size=5, _random_samples=s)
    np.testing.assert_array_equal(_np(a), _np(c))
    assert F.fractional_max_pool2d(x, 2, output_size=5).shape == (2, 3, 5, 5)


def test_fractional_max_pool_errors_and_gradcheck():
    x = numbagrad.randn(1, 2, 6, 6, dtype=numbagrad.float64)
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        F.fractional_max_pool2d(x, 3, output_size=5)
    with pytest.raises(RuntimeError, match="_random_samples"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=numbagrad.rand(1, 2, 3))
    with pytest.raises(ValueError, match="output size, or a pooling ratio"):
        numbagrad.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="between 0 and 1"):
        numbagrad.nn.FractionalMaxPool3d(2, output_ratio=1.5)
    s = numbagrad.rand(1, 2, 2, dtype=numbagrad.float64)
    x.requires_grad_()
    assert numbagrad.autograd.gradcheck(
        lambda t: F.fractional_max_pool2d(t, 2, output_size=3, _random_samples=s), (x,)
    )


def test_with_indices_names_return_both():
    torch = _torch()
    rng = np.random.default_rng(1)
    for k in (1, 2, 3):
        x = rng.standard_normal((1, 2) + (6,) * k)
        for name, args in ((f"max_pool{k}d_with_indices", (2,)), (
            f"adaptive_max_pool{k}d_with_indices", (3,)
        )):  # fmt: skip
            a = getattr(F, name)(numbagrad.tensor(x), *args)
            b = getattr(torch.nn.functional, name)(torch.tensor(x), *args)
            assert isinstance(a, tuple) and len(a) == 2
            np.testing.assert_array_equal(_np(a[0]), _np(b[0]))
            np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())


def test_conv_tbc_against_torch():
    torch = _torch()
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    args_t = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    args_n = [numbagrad.tensor(a, requires_grad=True) for a in (x, w, b)]
    for pad in (0, 1, 2):
        t_out = torch.conv_tbc(*args_t, pad)
        n_out = F.conv_tbc(*args_n, pad)
        np.testing.assert_allclose(_np(n_out), _np(t_out), rtol=1e-12, atol=1e-12)
        t_out.sum().backward()
        n_out.sum().backward()
    for a, c in zip(args_n, args_t):
        np.testing.assert_allclose(_np(a.grad), _np(c.grad), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="3 dims"):
        F.conv_tbc(numbagrad.zeros(2, 3), numbagrad.zeros(1, 3, 4), numbagrad.zeros(4))
    with pytest.raises(RuntimeError, match="input channels"):
        F.conv_tbc(numbagrad.zeros(2, 1, 2), numbagrad.zeros(1, 3, 4), numbagrad.zeros(4))


def test_upsample_wrappers_warn_and_match_torch():
    torch = _torch()
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    for name, kw in (("upsample_nearest", {"size": (5, 7)}), ("upsample_bilinear", {
        "scale_factor": 2
    })):  # fmt: skip
        with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
            a = getattr(F, name)(numbagrad.tensor(x), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)


def test_boolean_dispatch_and_assert_int_or_pair():
    def yes(a, flag=False):
        """doc"""
        return "yes"

    def no(a, flag=False):
        return "no"

    f = F.boolean_dispatch("flag", 1, False, yes, no, "mod", "f")
    assert (f(1), f(1, True), f(1, flag=True), f(1, flag=False)) == ("no", "yes", "yes", "no")
    assert f.__doc__ == "doc" and f.__name__ == "f" and f.__module__ == "mod"
    assert F.fractional_max_pool2d.__name__ == "fractional_max_pool2d"

    def doc2(a):
        """other"""

    with pytest.raises(RuntimeError, match="only one function"):
        F.boolean_dispatch("flag", 1, False, yes, doc2, None, None)
    F.assert_int_or_pair(3, "k", "{} bad")
    F.assert_int_or_pair([1, 2], "k", "{} bad")
    with pytest.raises(AssertionError, match="k bad"):
        F.assert_int_or_pair((1, 2, 3), "k", "{} bad")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_linear_cross_entropy_against_torch(reduction):
    torch = _torch()
    rng = np.random.default_rng(9)
    x, w, b = (
        rng.standard_normal((5, 3)),
        rng.standard_normal((4, 2, 3)),
        rng.standard_normal((4, 2)),
    )
    t = rng.integers(0, 4, (5, 2))
    t[1, 0] = -100
    cw = rng.uniform(0.5, 2.0, 4)
    outs = []
    for mod in (torch, numbagrad):
        args = [mod.tensor(a, requires_grad=True) for a in (x, w, b)]
        loss = mod.nn.functional.linear_cross_entropy(
            args[0],
            args[1],
            mod.tensor(t),
            linear_bias=args[2],
            weight=mod.tensor(cw),
            reduction=reduction,
            label_smoothing=0.1,
        )
        grads = (mod.autograd.grad if mod is numbagrad else torch.autograd.grad)(loss.sum(), args)
        outs.append([_np(loss), *[_np(g) for g in grads]])
    for a, c in zip(outs[1], outs[0]):
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)
    with pytest.raises(NotImplementedError, match="chunked"):
        F.linear_cross_entropy(
            numbagrad.zeros(2, 3), numbagrad.zeros(4, 3), numbagrad.tensor([0, 1]), options=1
        )


def test_linear_cross_entropy_loss_module_against_torch():
    torch = _torch()
    ours = numbagrad.nn.LinearCrossEntropyLoss(3, 4, bias=True, out_features=(2,))
    theirs = torch.nn.LinearCrossEntropyLoss(3, 4, bias=True, out_features=(2,))
    assert repr(ours) == repr(theirs)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    t = rng.integers(0, 4, (5, 2))
    a = ours(numbagrad.tensor(x), numbagrad.tensor(t))
    b = theirs(torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)
    with pytest.raises(RuntimeError, match="expected weight shape"):
        numbagrad.nn.LinearCrossEntropyLoss(3, 4, weight=numbagrad.ones(3))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_interpolate_antialias_against_torch(mode):
    """Antialiased resizing (shrinking and growing, sizes and scale factors, align_corners)
    and its gradient against PyTorch; lanczos exists only with antialias=True."""
    torch = _torch()
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 17, 13))
    sizes = [
        {"size": (5, 4)},
        {"size": (30, 7)},
        {"scale_factor": 0.37},
        {"scale_factor": (0.5, 1.7)},
        {"size": (1, 1)},
        {"scale_factor": 0.3, "recompute_scale_factor": True},
    ]
    for align in (False, True) if mode != "lanczos" else (False,):
        for kw in sizes:
            tx = torch.tensor(x, requires_grad=True)
            nx = numbagrad.tensor(x, requires_grad=True)
            a = torch.nn.functional.interpolate(
                tx, mode=mode, align_corners=align, antialias=True, **kw
            )
            b = F.interpolate(nx, mode=mode, align_corners=align, antialias=True, **kw)
            np.testing.assert_allclose(_np(b), _np(a), rtol=1e-12, atol=1e-12)
            g = rng.standard_normal(a.shape)
            a.backward(torch.tensor(g))
            b.backward(numbagrad.tensor(g))
            np.testing.assert_allclose(_np(nx.grad), _np(tx.grad), rtol=1e-12, atol=1e-12)


def test_interpolate_antialias_and_lanczos_errors():
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(numbagrad.zeros(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(numbagrad.zeros(1, 1, 4, 4), size=2, mode="lanczos")
    with pytest.raises(ValueError, match="does not support align_corners=True"):
        F.interpolate(
            numbagrad.zeros(1, 1, 4, 4), size=2, mode="lanczos", antialias=True, align_corners=True
        )
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D"):
        F.interpolate(numbagrad.zeros(1, 1, 4), size=2, mode="lanczos")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_nn_grad_convolution_gradients_against_torch(k):
    torch = _torch()
    rng = np.random.default_rng(k)
    xs, ws = (2, 4) + (7,) * k, (6, 2) + (3,) * k
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    kw = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
    out = getattr(torch.nn.functional, f"conv{k}d")(torch.tensor(x), torch.tensor(w), **kw)
    go = rng.standard_normal(out.shape)
    pairs = [
        (f"conv{k}d_input", (xs, w, go)),
        (f"conv{k}d_weight", (x, ws, go)),
    ]
    for name, (a0, a1, a2) in pairs:

        def conv(mod, a0=a0, a1=a1, a2=a2, name=name):
            fn = getattr(mod.nn.grad, name)
            wrap = [v if isinstance(v, tuple) else mod.tensor(v) for v in (a0, a1, a2)]
            return fn(*wrap, **kw)

        np.testing.assert_allclose(_np(conv(numbagrad)), _np(conv(torch)), atol=1e-12)
    assert F.grad is numbagrad.nn.grad
    # differentiable again: the input gradient is linear in grad_output
    gt = numbagrad.tensor(go, requires_grad=True)
    gi = numbagrad.nn.grad.__dict__[f"conv{k}d_input"](xs, numbagrad.tensor(w), gt, **kw)
    assert gi.requires_grad
    (gg,) = numbagrad.autograd.grad(gi.sum(), gt)
    assert gg.shape == gt.shape


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("padding", ["border", "reflection"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_grid_sample_border_coordinates_get_no_gradient(nd, padding, create_graph):
    """A coordinate exactly on the border (or clipped to it) has slope 0, as PyTorch's
    ``clip_coordinates_set_grad`` (borders count as out of bounds); numbagrad's kernel and
    its differentiable rule counted them inside (fuzz seed 704603: -639 vs -0.0)."""
    torch = _torch()
    x, _, rng = _inputs(nd, 5)
    g = rng.choice([-3.0, -1.0, 0.0, 1.0, 2.0], size=(2, 3, 4, nd) if nd == 2 else (2, 2, 2, 3, 3))
    cot = rng.standard_normal((2, x.shape[1], *g.shape[1:-1]))
    grads = []
    for m in (numbagrad, torch):
        gt = m.tensor(g, requires_grad=True)
        out = m.nn.functional.grid_sample(m.tensor(x), gt, padding_mode=padding, align_corners=True)
        (gg,) = m.autograd.grad(out, [gt], m.tensor(cot), create_graph=create_graph)
        grads.append(gg.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
