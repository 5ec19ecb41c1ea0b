"""``nn.functional`` activations, losses, layer_norm, pad and lerp at special values, against
PyTorch 2.13 (many cases came from the differential fuzz suite, issue 9)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _pair(values, dtype="float64", requires_grad=True):
    a = np.asarray(values, dtype=dtype)
    return (
        numbagrad.tensor(a, requires_grad=requires_grad),
        torch.tensor(a, requires_grad=requires_grad),
    )


def _same(a, b, signed_zeros=False):
    a = np.asarray(a.detach().numpy() if hasattr(a, "detach") else a, dtype=np.float64)
    b = np.asarray(b.detach().numpy(), dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)  # NaN where NaN
    if signed_zeros:
        assert np.array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0]))


def _grads(m, f, *xs, cot=None):
    y = f(m, *xs)
    cot = m.ones_like(y) if cot is None else cot
    return y, m.autograd.grad(y, list(xs), cot, allow_unused=True)


def _check(f, *values, dtype="float64", signed_zeros=False, cot=None, nan_cot=False):
    """Forward values and first-order gradients of ``f(m, *xs)`` agree with torch."""
    pairs = [_pair(v, dtype) for v in values]
    yn, gn = _grads(numbagrad, f, *[p[0] for p in pairs])
    yt, gt = _grads(torch, f, *[p[1] for p in pairs])
    _same(yn, yt, signed_zeros)
    for a, b in zip(gn, gt, strict=True):
        _same(a, b)


SPECIAL = [NAN, INF, -INF, 710.0, -89.0, 1e-30, -1e-30, 0.0, -0.0, 89.0, -2.5, 1.0, -1.0, 6.0]


@pytest.mark.parametrize("n", [1, 3, 64])
def test_kl_div_nonpositive_and_nonfinite_target(n):
    # kl-div-nonfinite, kl-div-grad-nan: xlogy(t, t) - t * x, as PyTorch
    t = [0.0, -1.0, 0.5, NAN, INF, 2.0] * n
    x = [0.3, 0.2, -0.1, 0.4, 0.5, -INF] * n
    _check(lambda m, x, t: m.nn.functional.kl_div(x, t, reduction="none"), x, t)
    _check(lambda m, x, t: m.nn.functional.kl_div(x, t, reduction="batchmean"), x, t)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hardtanh_relu6_signed_zero_bounds_and_nan(dtype):
    # relu6-signed-zero: clamp's forward keeps -0.0; the gradient is 0 at the bounds and
    # (PyTorch's SIMD path, every element of a 64-long tensor) at NaN
    vals = [*SPECIAL, 6.5, 0.25] * 4
    _check(lambda m, x: m.nn.functional.relu6(x), vals, dtype=dtype, signed_zeros=True)
    _check(lambda m, x: m.nn.functional.hardtanh(x, -1.0, 1.0), vals, dtype=dtype)


def test_hardtanh_second_order_masks_nan():
    # relu6-gradgrad-nan, hardtanh-gradgrad-nan: d/dcot of <grad, w> is 0 at NaN inputs
    vals = [NAN, INF, -INF, 0.5, 7.0, -3.0, 0.0, 6.0] * 4
    res = []
    for m in (numbagrad, torch):
        x = m.tensor(np.array(vals), requires_grad=True)
        cot = m.tensor(np.linspace(-1, 1, len(vals)), requires_grad=True)
        (g,) = m.autograd.grad(m.nn.functional.relu6(x), [x], cot, create_graph=True)
        w = m.tensor(np.full(len(vals), NAN))
        res.append(m.autograd.grad((g * w).sum(), [cot])[0])
    _same(*res)


def test_logsigmoid_large_input_is_plus_zero():
    # logsigmoid-signed-zero
    _check(lambda m, x: m.nn.functional.logsigmoid(x), SPECIAL, dtype="float32", signed_zeros=True)
    _check(lambda m, x: m.nn.functional.logsigmoid(x), SPECIAL, signed_zeros=True)


@pytest.mark.parametrize("name", ["elu", "selu"])
def test_elu_selu_nan_input_gradient(name):
    # selu-grad-nan, elu-grad-float32: a NaN input has a NaN gradient (PyTorch's SIMD path)
    f = getattr(numbagrad.nn.functional, name)
    ft = getattr(torch.nn.functional, name)
    vals = [*SPECIAL, 2.0, -2.0] * 4  # 64 elements: all on PyTorch's SIMD path
    for dtype in ("float64", "float32"):
        _check(lambda m, x: (f if m is numbagrad else ft)(x), vals, dtype=dtype)


def test_bilinear_contracts_input1_first():
    # bilinear-nonfinite: (input1 . weight) . input2, so an infinite input2 gives +-inf
    x1 = [[-1.758485658902627, -0.9830623528305766]]
    x2 = [[3.0, 2.021321952486299, INF]]
    w = [[[-1.14, 1.02, -0.225], [1.27, -1.85, 1.72]]]  # the two inf terms have opposite signs
    yn = numbagrad.nn.functional.bilinear(*(numbagrad.tensor(np.array(v)) for v in (x1, x2, w)))
    yt = torch.nn.functional.bilinear(*(torch.tensor(np.array(v)) for v in (x1, x2, w)))
    assert math.isinf(float(yt[0, 0]))
    _same(yn, yt)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_smooth_l1_and_huber_gradients_at_nonfinite(dtype):
    # smooth-l1-grad-nan, huber-grad-nan, huber-gradgrad-nan: +-1 (or +-delta) at +-inf,
    # NaN at NaN
    vals = [NAN, INF, -INF, 710.0, -89.0, 0.3, -0.3, 0.0, 0.5, -0.5, 0.8, -0.8]
    for f in (
        lambda m, x, t: m.nn.functional.smooth_l1_loss(x, t, beta=0.5, reduction="none"),
        lambda m, x, t: m.nn.functional.huber_loss(x, t, delta=0.8, reduction="none"),
    ):
        _check(f, vals, [0.1] * len(vals), dtype=dtype)


@pytest.mark.filterwarnings("ignore:Using a target size")  # a 0-d target, on purpose
def test_huber_second_order_at_nan():
    res = []
    for m in (numbagrad, torch):
        x = m.tensor(np.array([NAN, 0.3, 2.0, -INF]), requires_grad=True)
        t = m.tensor(np.array(0.1), requires_grad=True)
        y = m.nn.functional.huber_loss(x, t, delta=0.8)
        (g,) = m.autograd.grad(y, [t], create_graph=True)
        res.append(m.autograd.grad(g, [t])[0])
    _same(*res)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_layer_norm_constant_rows_give_the_bias(dtype):
    # layer-norm-float32, layer-norm-signed-zero: a constant row centres to exactly 0
    rng = np.random.default_rng(0)
    base = np.repeat(rng.standard_normal((2, 1, 1)), 12, axis=2).reshape(2, 3, 4).astype(dtype)
    w = (rng.standard_normal((3, 4)) - 2.0).astype(dtype)
    b = rng.standard_normal((3, 4)).astype(dtype)
    for args in ((w, b), (w, None), (None, None)):
        yn = numbagrad.nn.functional.layer_norm(
            numbagrad.tensor(base),
            (3, 4),
            *(None if a is None else numbagrad.tensor(a) for a in args),
        )
        yt = torch.nn.functional.layer_norm(
            torch.tensor(base), (3, 4), *(None if a is None else torch.tensor(a) for a in args)
        )
        np.testing.assert_array_equal(yn.numpy(), yt.numpy())  # exact, signs of zeros too
        assert np.array_equal(np.signbit(yn.numpy()), np.signbit(yt.numpy()))


def test_layer_norm_mixed_dtypes_raise_like_torch():
    # layer-norm-mixed-dtype
    cases = [
        ("float32", "float64", None),
        ("float32", None, "float64"),
        ("float64", "float32", None),
        ("float64", "float32", "float32"),
        ("float64", "float32", "float64"),
    ]
    for xd, wd, bd in cases:
        msgs = []
        for m in (numbagrad, torch):
            x = m.ones(2, 4, dtype=getattr(m, xd))
            w = None if wd is None else m.ones(4, dtype=getattr(m, wd))
            b = None if bd is None else m.zeros(4, dtype=getattr(m, bd))
            with pytest.raises(RuntimeError) as e:
                m.nn.functional.layer_norm(x, (4,), w, b)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_rejects_empty_non_batch_dims(mode):
    # pad-dims-check
    for shape, pad in [((0, 3), (1, 1)), ((2, 0, 3), (1, 1)), ((3, 3, 0), (1, 1, 1, 1))]:
        msgs = []
        for m in (numbagrad, torch):
            with pytest.raises(RuntimeError) as e:
                m.nn.functional.pad(m.zeros(shape), pad, mode=mode)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    y = numbagrad.nn.functional.pad(numbagrad.zeros(0, 2, 3), (1, 1), mode=mode)
    assert tuple(y.shape) == (0, 2, 5)  # an empty batch is fine


def test_lerp_zero_dim_weight_of_any_dtype():
    # lerp-weight-dtype: a 0-d weight acts as a scalar; others must match input's dtype
    for w in (2, True, 0.25):
        xs = [m.tensor([1.0, 2.0, NAN], dtype=m.float64) for m in (numbagrad, torch)]
        es = [m.tensor([3.0, 5.0, 1.0], dtype=m.float64) for m in (numbagrad, torch)]
        _same(
            numbagrad.lerp(xs[0], es[0], numbagrad.tensor(w)),
            torch.lerp(xs[1], es[1], torch.tensor(w)),
        )
    msgs = []
    for m in (numbagrad, torch):
        with pytest.raises(RuntimeError) as e:
            m.lerp(m.ones(2, dtype=m.float64), m.ones(2, dtype=m.float64), m.tensor([1, 2]))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_lerp_gradients_at_infinite_operands():
    # lerp-grad-inf: PyTorch's rules grad * (1 - w), grad * w, grad * (end - input)
    x = [0.2, -0.2, INF, 1.0, -INF, 0.5]
    e = [-3.0, INF, 1.0, NAN, 2.0, -0.0]
    w = [-0.0, -INF, 0.9, 3.0, 0.5, NAN]
    _check(lambda m, x, e, w: m.lerp(x, e, w), x, e, w)
    _check(lambda m, x, e: m.lerp(x, e, 0.75), x, e)


def test_lerp_forward_mode_and_vmap():
    from numbagrad.func import jvp, vmap

    rng = np.random.default_rng(1)
    x, e, w, tx, te, tw = (numbagrad.tensor(rng.standard_normal((3, 4))) for _ in range(6))
    _, t = jvp(numbagrad.lerp, (x, e, w), (tx, te, tw))
    expect = tx * (1 - w) + te * w + tw * (e - x)
    np.testing.assert_allclose(t.numpy(), expect.numpy(), rtol=1e-12)
    w = w.t().contiguous()
    out = vmap(numbagrad.lerp, in_dims=(0, None, 1))(x, e[0], w)
    loop = numbagrad.stack([numbagrad.lerp(x[i], e[0], w[:, i]) for i in range(3)])
    np.testing.assert_allclose(out.numpy(), loop.numpy(), rtol=1e-12)


def test_lerp_zero_dim_promotion_and_weight_only_gradient():
    # a 0-d float64 weight promotes 0-d float32 input and end (PyTorch's TensorIterator);
    # the weight's gradient when only it requires grad
    res = []
    for m in (numbagrad, torch):
        x = m.tensor(1.1343529224395752, dtype=m.float32)
        e = m.tensor(-2.6954166889190674, dtype=m.float32)
        w = m.tensor(0.43425403943676566, dtype=m.float64, requires_grad=True)
        y = m.lerp(x, e, w)
        assert str(y.dtype).endswith("float64")
        res.append((y, m.autograd.grad(y, [w])[0]))
    _same(res[0][0], res[1][0])
    _same(res[0][1], res[1][1])


def _second_order(m, f, values, cot_values, w_values):
    """d<grad(f(x), x, cot), w>/d(x, cot), as the fuzz suite's second-order stage."""
    x = m.tensor(np.asarray(values, dtype="float64"), requires_grad=True)
    y = f(m, x)
    cot = m.tensor(np.asarray(cot_values, dtype="float64").reshape(tuple(y.shape)))
    cot.requires_grad_(True)
    (g,) = m.autograd.grad(y, [x], cot, create_graph=True)
    w = m.tensor(np.asarray(w_values, dtype="float64"))
    return m.autograd.grad((g * w).sum(), [x, cot], allow_unused=True)


@pytest.mark.parametrize("name", ["elu", "selu"])
def test_elu_second_order_is_pytorchs_double_backward(name):
    # elu-gradgrad-nan, selu-gradgrad-nan: 0 at x = 0 (PyTorch's mask x < 0), NaN cotangents
    # stay NaN
    vals = [0.0, -0.0, -1.5, 2.0, -INF, INF, 1e-30, -89.0] * 2  # 16: PyTorch's SIMD loop
    cot = [NAN, 0.5, -1.0, NAN, 2.0, 0.3, -0.7, 1.1] * 2
    w = [0.9, -1.3, 0.4, 2.0, 1.0, -0.5, 0.25, 3.0] * 2
    f = lambda m, x: getattr(m.nn.functional, name)(x)  # noqa: E731
    for a, b in zip(
        _second_order(numbagrad, f, vals, cot, w), _second_order(torch, f, vals, cot, w)
    ):
        _same(a, b)


def test_smooth_l1_second_order_with_nan_cotangent():
    # smooth-l1-gradgrad-nan: PyTorch's double backward multiplies the mask |d| < beta
    vals = [0.1, 3.0, -2.0, INF, NAN, -0.2]
    for f in (
        lambda m, x: m.nn.functional.smooth_l1_loss(x, m.zeros_like(x), beta=0.5, reduction="sum"),
        lambda m, x: m.nn.functional.huber_loss(x, m.zeros_like(x), delta=0.5, reduction="mean"),
    ):
        for cot in ([NAN], [0.7]):
            res = [
                _second_order(m, f, vals, cot, [1.0, -2.0, 0.5, 1.5, 1.0, 3.0])
                for m in (numbagrad, torch)
            ]
            for a, b in zip(*res):
                _same(a, b)


@pytest.mark.parametrize("name", ["silu", "mish"])
def test_silu_mish_gradient_of_infinite_cotangent(name):
    # silu-grad-nonfinite, mish-grad-nonfinite: PyTorch's g * (its derivative), not the
    # product rule's -inf + 0 * -inf
    vals = [0.0, -2.0, 1.0, -3.0, 0.0, 30.0, -30.0, 0.5]
    cot = [-INF, -1.6, INF, NAN, INF, -INF, 1.0, 0.25]
    for dtype in ("float64", "float32"):
        res = []
        for m in (numbagrad, torch):
            x = m.tensor(np.array(vals, dtype=dtype), requires_grad=True)
            c = m.tensor(np.array(cot, dtype=dtype))
            res.append(m.autograd.grad(getattr(m.nn.functional, name)(x), [x], c)[0])
        _same(*res)


# (numbagrad's sum of inf and -inf still warns from NumPy: not this test's subject)
@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_layer_norm_gradient_with_infinite_weight():
    # layer-norm-grad-nonfinite (first order): PyTorch's dx = a g w + b x + c
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4))
    w = rng.standard_normal((3, 4))
    w[1, 3] = w[2, 3] = -INF
    b = rng.standard_normal((3, 4))
    g = rng.standard_normal((2, 3, 4))
    _check(
        lambda m, x, w, b: m.nn.functional.layer_norm(x, (3, 4), w, b, eps=1e-3),
        x,
        w,
        b,
        cot=None,
    )
    res = []
    for m in (numbagrad, torch):
        ts = [m.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = m.nn.functional.layer_norm(ts[0], (3, 4), ts[1], ts[2], eps=1e-3)
        res.append(m.autograd.grad(y, ts, m.tensor(g)))
    for a, b_ in zip(*res):
        _same(a, b_)


def test_layer_norm_vmap_with_batched_weight_and_forward_mode():
    from numbagrad.func import jvp, vmap

    rng = np.random.default_rng(4)
    t = lambda *s: numbagrad.tensor(rng.standard_normal(s))  # noqa: E731

    def composite(x, w, b):
        c = x - x.mean((-2, -1), keepdim=True)
        return c * numbagrad.rsqrt((c * c).mean((-2, -1), keepdim=True) + 1e-5) * w + b

    def ln(x, w, b):
        return numbagrad.nn.functional.layer_norm(x, (3, 4), w, b)

    args = (t(6, 5, 3, 4), t(6, 3, 4), t(3, 4))
    for in_dims in ((0, 0, None), (None, 0, None), (1, None, None)):
        a = args if in_dims[0] != 1 else (args[0].movedim(0, 1), args[1][0], args[2])
        if in_dims[0] is None:
            a = (args[0][0], args[1], args[2])
        np.testing.assert_allclose(
            vmap(ln, in_dims=in_dims)(*a).numpy(),
            vmap(composite, in_dims=in_dims)(*a).numpy(),
            atol=1e-12,
        )
    prim = (t(5, 3, 4), t(3, 4), t(3, 4))
    tang = (t(5, 3, 4), t(3, 4), t(3, 4))
    np.testing.assert_allclose(
        jvp(ln, prim, tang)[1].numpy(), jvp(composite, prim, tang)[1].numpy(), atol=1e-12
    )


def test_grad_fn_names_are_pytorchs():
    names = []
    for m in (numbagrad, torch):
        F = m.nn.functional
        x = m.tensor([1.0, -2.0, 0.3], requires_grad=True)
        t = m.zeros(3)
        outs = [
            F.elu(x),
            F.selu(x),
            F.silu(x),
            F.mish(x),
            F.relu6(x),
            F.hardtanh(x),
            F.smooth_l1_loss(x, t, reduction="none"),
            F.huber_loss(x, t, reduction="none"),
            F.layer_norm(x, (3,)),
            m.lerp(x, t, x),
        ]
        names.append([o.grad_fn.name() for o in outs])
    assert names[0] == names[1]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradients_are_pytorchs_formulas(approximate):
    # gelu-grad-inf-cotangent: g * (cdf + x * pdf) is inf for an infinite g at x = -0.0,
    # where the composite's product rule gave inf + inf * 0 = NaN; second order too
    vals = [-0.0, 0.0, 0.84, -0.99, NAN, INF, -INF, 9.0, -9.0, 1e-30, 40.0, -40.0] * 2
    # (not an infinite g at x = -9: PyTorch's float32 SIMD loop rounds gelu'(-9) to 0 there)
    cot = [INF, -INF, NAN, 0.5, 1.0, 2.0, -1.0, INF, -2.0, 1e30, 0.3, -0.7] * 2
    w = list(np.linspace(-1.0, 1.3, len(vals)))
    f = lambda m, x: m.nn.functional.gelu(x, approximate=approximate)  # noqa: E731
    for dtype in ("float64", "float32"):
        res = []
        for m in (numbagrad, torch):
            x = m.tensor(np.array(vals, dtype=dtype), requires_grad=True)
            res.append(m.autograd.grad(f(m, x), [x], m.tensor(np.array(cot, dtype=dtype)))[0])
        _same(*res)
    for a, b in zip(
        _second_order(numbagrad, f, vals, cot, w), _second_order(torch, f, vals, cot, w)
    ):
        _same(a, b)


def test_gelu_forward_mode_vmap_and_integer_input():
    from numbagrad.func import jvp, vmap

    rng = np.random.default_rng(5)
    x, t = (numbagrad.tensor(rng.standard_normal((3, 4))) for _ in range(2))
    for approximate in ("none", "tanh"):
        f = functools.partial(numbagrad.nn.functional.gelu, approximate=approximate)
        xt = torch.tensor(x.numpy(), requires_grad=True)
        (expect,) = torch.autograd.grad(
            torch.nn.functional.gelu(xt, approximate=approximate), [xt], torch.tensor(t.numpy())
        )
        np.testing.assert_allclose(jvp(f, (x,), (t,))[1].numpy(), expect.numpy(), rtol=1e-12)
        loop = numbagrad.stack([f(x[:, i]) for i in range(4)])
        np.testing.assert_allclose(vmap(f, in_dims=1)(x).numpy(), loop.numpy(), rtol=1e-15)
    y = numbagrad.nn.functional.gelu(numbagrad.tensor([1, -2]))  # promoted as before
    assert y.dtype == numbagrad.float32
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        numbagrad.nn.functional.gelu(x, approximate="erf")


def test_logsigmoid_second_order_is_pytorchs():
    # logsigmoid-gradgrad-underflow: (z - 1) z with z = sigmoid(x), nonzero at x = -89
    # (the chain rule through sigmoid(-x) gave 0 there)
    vals = [-100.0, -89.0, -40.0, -1.0, 0.0, 2.0, 40.0, 100.0, INF, -INF, NAN, -1e-30]
    cot = [0.5, -9.6e86, 1.0, -2.0, 0.3, 2.4e155, 1.0, 0.7, 1.0, INF, 0.2, -1.0]
    w = [1.0, 1.0, -1.0, 0.5, 2.0, 1.0, 3.0, 1.0, 1.0, 1.0, 1.0, 0.25]
    f = lambda m, x: m.nn.functional.logsigmoid(x)  # noqa: E731
    res = [_second_order(m, f, vals, cot, w) for m in (numbagrad, torch)]
    assert float(res[0][0][1]) == pytest.approx(float(res[1][0][1]), rel=1e-12)  # 2.1e48
    for a, b in zip(*res):
        _same(a, b)
    _check(f, vals, dtype="float32", signed_zeros=True)


def test_logsigmoid_forward_mode_and_vmap():
    from numbagrad.func import jvp, vmap

    rng = np.random.default_rng(6)
    x, t = (numbagrad.tensor(rng.standard_normal((3, 4)) * 5) for _ in range(2))
    f = numbagrad.nn.functional.logsigmoid
    xt = torch.tensor(x.numpy(), requires_grad=True)
    (expect,) = torch.autograd.grad(
        torch.nn.functional.logsigmoid(xt), [xt], torch.tensor(t.numpy())
    )
    np.testing.assert_allclose(jvp(f, (x,), (t,))[1].numpy(), expect.numpy(), rtol=1e-12)
    loop = numbagrad.stack([f(x[:, i]) for i in range(4)])
    np.testing.assert_allclose(vmap(f, in_dims=1)(x).numpy(), loop.numpy(), rtol=1e-15)


def test_gelu_logsigmoid_grad_fn_names_are_pytorchs():
    names = []
    for m in (numbagrad, torch):
        x = m.tensor([1.0, -2.0, 0.3], requires_grad=True)
        outs = [m.nn.functional.gelu(x), m.nn.functional.logsigmoid(x)]
        names.append([o.grad_fn.name() for o in outs])
        names.append(
            [m.autograd.grad(o.sum(), [x], create_graph=True)[0].grad_fn.name() for o in outs]
        )
    assert names[0] == names[2] and names[1] == names[3]


@pytest.mark.filterwarnings("ignore:Using a target size")  # a 0-d target, on purpose
def test_huber_loss_differentiates_mixed_precision_operands():
    # torch-huber-mixed-dtype-backward (a deviation): PyTorch's backward raises, numbagrad
    # returns each operand's gradient in its own dtype, as smooth_l1_loss does in PyTorch
    x = numbagrad.tensor([2.7182817459106445, -0.5], dtype=numbagrad.float32, requires_grad=True)
    t = numbagrad.tensor(-1.8716595225939088, dtype=numbagrad.float64, requires_grad=True)
    gx, gt = numbagrad.autograd.grad(numbagrad.nn.functional.huber_loss(x, t, delta=0.8), [x, t])
    assert gx.dtype == numbagrad.float32 and gt.dtype == numbagrad.float64
    xs = torch.tensor(x.detach().numpy(), dtype=torch.float64, requires_grad=True)
    ts = torch.tensor(float(t), dtype=torch.float64, requires_grad=True)
    ex, et = torch.autograd.grad(torch.nn.functional.huber_loss(xs, ts, delta=0.8), [xs, ts])
    np.testing.assert_allclose(gx.numpy(), ex.numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(gt), float(et), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # (as above)
def test_layer_norm_second_order_is_pytorchs_double_backward():
    # layer-norm-gradgrad-nonfinite: an infinite weight gives the cotangent's second-order
    # term +-inf (the weight outside the sums), where the chain rule gave inf - inf = NaN
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, (2, 3, 4)).astype(np.float64)
    w = rng.standard_normal((3, 4))
    w[1, 3] = w[2, 3] = -INF
    b = rng.standard_normal((3, 4))
    cot = rng.standard_normal((2, 3, 4))
    ws = [rng.standard_normal(s) for s in ((2, 3, 4), (3, 4), (3, 4))]
    for finite in (False, True):
        res = []
        for m in (numbagrad, torch):
            ts = [m.tensor(np.where(np.isinf(a), 2.5, a) if finite else a) for a in (x, w, b)]
            for t in ts:
                t.requires_grad_(True)
            c = m.tensor(cot, requires_grad=True)
            y = m.nn.functional.layer_norm(ts[0], (3, 4), ts[1], ts[2], eps=1e-3)
            gs = m.autograd.grad(y, ts, c, create_graph=True)
            total = sum((g * m.tensor(v)).sum() for g, v in zip(gs, ws))
            res.append(m.autograd.grad(total, [*ts, c], allow_unused=True))
        for a, b_ in zip(*res):
            if b_ is None:
                assert a is None or not np.any(a.numpy())
            else:
                np.testing.assert_allclose(a.numpy(), b_.numpy(), rtol=1e-9, atol=1e-9)


def test_layer_norm_backward_under_vmap_and_forward_mode():
    from numbagrad.func import grad, hessian, vmap

    rng = np.random.default_rng(8)
    t = lambda *s: numbagrad.tensor(rng.standard_normal(s))  # noqa: E731
    v = t(3, 4)

    def loss(x, w):
        return (numbagrad.nn.functional.layer_norm(x, (4,), w, None) * v).sum()

    xs, wb, w = t(5, 3, 4), t(5, 4), t(4)
    for in_dims, args in (((0, None), (xs, w)), ((0, 0), (xs, wb)), ((None, 0), (xs[0], wb))):
        out = vmap(grad(loss, argnums=(0, 1)), in_dims=in_dims)(*args)
        for i in range(5):
            a = [a if d is None else a[i] for a, d in zip(args, in_dims)]
            loop = grad(loss, argnums=(0, 1))(*a)
            for o, l_ in zip(out, loop):
                np.testing.assert_allclose(o[i].numpy(), l_.numpy(), rtol=1e-10, atol=1e-12)
    # hessian: forward over reverse (LayerNormBackward's JVP), against torch's
    x0 = xs[0, 0]
    h = hessian(lambda x: loss(x.reshape(1, 4).expand(3, 4), w))(x0)
    vt, wt = torch.tensor(v.numpy()), torch.tensor(w.numpy())
    ht = torch.autograd.functional.hessian(
        lambda x: (
            torch.nn.functional.layer_norm(x.reshape(1, 4).expand(3, 4), (4,), wt, None) * vt
        ).sum(),
        torch.tensor(x0.numpy()),
    )
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-9, atol=1e-10)


def test_layer_norm_without_affine_gives_no_negative_zero():
    # a -0.0 entry whose centred value is 0: PyTorch adds its zero bias (+0.0)
    rows = [[-0.0, -1.0, -1.0, 2.0], [-0.0, -0.0, -0.0, -0.0], [-0.0, 5.0, 1.0, -6.0]]
    for dtype in ("float64", "float32"):
        a = np.array(rows, dtype=dtype)
        yn = numbagrad.nn.functional.layer_norm(numbagrad.tensor(a), (4,)).numpy()
        yt = torch.nn.functional.layer_norm(torch.tensor(a), (4,)).numpy()
        np.testing.assert_allclose(yn, yt, rtol=1e-5)
        assert not np.signbit(yn[yn == 0]).any() and not np.signbit(yt[yt == 0]).any()


def test_cdist_p0_counts_like_pytorch_and_has_a_zero_gradient():
    a = [[1.0, 2.0], [3.0, INF], [0.5, -0.0]]
    b = [[1.0, 0.0], [NAN, 2.0]]
    for dtype in ("float64", "float32"):
        res = []
        for m in (numbagrad, torch):
            x1, x2 = (m.tensor(np.array(v, dtype=dtype), requires_grad=True) for v in (a, b))
            y = m.cdist(x1, x2, 0.0)
            assert y.requires_grad and str(y.dtype).endswith(dtype)
            res.append((y, *m.autograd.grad((y * m.tensor([[1.0, 2.0]])).sum(), [x1, x2])))
        for p, q in zip(*res):
            _same(p, q)
