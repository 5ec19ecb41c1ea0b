"""Elementwise ops and ``numbagrad.special`` at special values (inf, NaN, signed zeros,
poles), against PyTorch 2.13: values, NaN/inf patterns and signed zeros of first and second
derivatives. Many cases came from the differential fuzz suite (issue 9; ids as in
``tests/fuzz/known_deviations.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

nan, inf = math.nan, math.inf


def _same(ours, theirs, rtol=1e-12, atol=0.0, zeros=False):
    """Equal NaN/inf pattern and signs of infinities, finite values within rtol; the signs
    of zeros too when ``zeros`` (values: the fuzz suite does not compare them in
    gradients)."""
    a = np.asarray(ours.detach().numpy() if hasattr(ours, "detach") else ours, np.float64)
    b = np.asarray(theirs.detach().numpy(), np.float64)
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{a} vs {b}")
    fin = np.isfinite(b)
    np.testing.assert_array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)])
    np.testing.assert_allclose(a[fin], b[fin], rtol=rtol, atol=atol)
    if zeros:
        np.testing.assert_array_equal(np.signbit(a[b == 0]), np.signbit(b[b == 0]))


def _grads(T, f, x, dtype="float64", cot=None, second=True):
    """First derivative of ``f`` at ``x`` (cotangent ``cot``, default ones) and, when
    ``second``, the second-order gradients of ``sum(g * w)`` w.r.t. ``x`` and the
    cotangent (``w`` fixed)."""
    dt = getattr(T, dtype)
    xt = T.tensor(x, dtype=dt, requires_grad=True)
    y = f(T, xt)
    c = T.tensor(np.ones(tuple(y.shape)) if cot is None else cot, dtype=dt)
    c.requires_grad_(second)
    (g,) = T.autograd.grad(y, xt, c, create_graph=second)
    if not second:
        return (g,)
    w = T.tensor(np.linspace(-1.3, 0.7, g.numel()).reshape(tuple(g.shape)), dtype=dt)
    return (g, *T.autograd.grad((g * w).sum(), [xt, c], allow_unused=True))


def _check(f, x, dtype="float64", cot=None, second=True, rtol=1e-12):
    for ours, theirs in zip(
        _grads(numbagrad, f, x, dtype, cot, second), _grads(torch, f, x, dtype, cot, second)
    ):
        _same(ours, theirs, rtol)


# -- gamma family at the poles (psi-*, digamma-*, polygamma-*, gammaln-*, multigammaln-*) ----
POLES = [-3.0, -2.0, -1.0, 0.0, -0.0, -10.0, -1e6, -4.5, 1e-20]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trigamma_at_the_poles_is_pytorchs(dtype):
    # sin(pi * x) of the rounded pi * x: large finite values at the negative integers
    for name in ("float64", "float32"):
        if name != dtype:
            continue
        ours = numbagrad.polygamma(1, numbagrad.tensor(POLES, dtype=getattr(numbagrad, dtype)))
        theirs = torch.polygamma(1, torch.tensor(POLES, dtype=getattr(torch, dtype)))
        _same(ours, theirs, rtol=1e-9 if dtype == "float64" else 1e-6, zeros=True)


def test_digamma_gradient_masked_at_a_pole_is_zero():
    # psi-gradgrad-nan: clamp sends no gradient to x = -3, and trigamma(-1) * 0 is 0
    _check(lambda T, x: T.special.psi(T.clamp(x, -1.0, 3)), [-3.0, 1.0, 0.5], rtol=1e-9)


@pytest.mark.parametrize("op", ["digamma", "gammaln"])
def test_gamma_family_derivatives_at_the_poles(op):
    _check(lambda T, x: getattr(T.special, op)(x), [-3.0, -2.0, -0.0, 0.0, 2.5], rtol=1e-9)


def test_multigammaln_gradient_at_signed_zero():
    # PyTorch's offsets end in +0.0: x = -0.0 gives lgamma(+0.0), gradient -inf
    _check(lambda T, x: T.special.multigammaln(x, 2), [-0.0, 0.0, -1.0, 1.5], rtol=1e-9)


# -- pow / float_power ---------------------------------------------------------------------------
def test_pow_base_gradient_grouped_as_pytorch():
    # pow-grad-inf: t * (b * a**(b - 1)) overflows to inf for both cotangent signs
    a = [2.7040555719828205, 2.7040555719828205]
    b = numbagrad.tensor([710.0, 710.0], dtype=numbagrad.float64)
    bt = torch.tensor([710.0, 710.0], dtype=torch.float64)
    cot = [-0.1, 0.05]
    ours = _grads(numbagrad, lambda T, x: x ** (b if T is numbagrad else bt), a, cot=cot)
    theirs = _grads(torch, lambda T, x: x ** (b if T is numbagrad else bt), a, cot=cot)
    for o, t in zip(ours, theirs):
        _same(o, t, rtol=1e-12)


def test_float_power_gradient_with_underflowing_cotangent():
    # float-power-grad-nan: a -0.0 cotangent (pow underflows) times b * a**(b - 1) = inf is
    # NaN, as in PyTorch (grouped as (g * b) * a**(b - 1) it was -0.0)
    def f(T, x):
        e = T.tensor([710.0, 2.0], dtype=T.float64)
        return T.pow(T.float_power(x, e), T.tensor([-2.9351779615297833, 0.5], dtype=T.float64))

    _check(f, [2.702682612961084, 0.0])


# -- binary / unary second orders ---------------------------------------------------------------
def test_copysign_second_order_is_nan_at_zero():
    _check(lambda T, x: T.copysign(x, x), [-0.0, 0.0, 3.0, -1.5])


def test_std_of_one_element_second_order():
    # atan-gradgrad-nan: std's masked division keeps 0/0 in the unselected branch
    _check(lambda T, x: T.atan(T.std_mean(x, 0, keepdim=True, correction=0)[0]), [-2.86])


def test_abs_sign_is_a_constant_of_the_graph():
    # absolute-gradgrad-nan: sgn's derivative contributes nothing (no 0 * inf)
    _check(lambda T, x: T.abs(T.log2(x)), [0.0, inf, 1e-310, 2.0, 1.0])


@pytest.mark.parametrize("op", ["log", "log10", "log2", "log1p", "atan"])
def test_log_family_rules_divide_as_pytorch(op):
    # log10-gradgrad: grad / (x ln 10), so the rounding (and cancellations) are PyTorch's
    _check(lambda T, x: getattr(T, op)(x), [1e-300, 5e-324, 0.0, 0.37, 2.0, -0.5], rtol=0)


# -- sigmoid --------------------------------------------------------------------------------------
def test_sigmoid_second_order_with_infinite_cotangent():
    # sigmoid-gradgrad-nonfinite: gg * g * (1 - 2 y), one term, is +-inf (not inf - inf)
    _check(
        lambda T, x: T.sigmoid(x), [-1.66, 0.02, 2.7, -0.3], cot=[-inf, inf, 3.0, nan], rtol=1e-14
    )


def test_sigmoid_backward_fused_and_forward_mode():
    # the fused one-pass kernel (large arrays) and the small-array formula are PyTorch's
    # (g * (1 - y)) * y; forward mode binds the same primitive
    for n in (7, 5000):
        x = np.linspace(-30, 30, n)
        xs = numbagrad.tensor(x, requires_grad=True)
        (g,) = numbagrad.autograd.grad(numbagrad.sigmoid(xs), xs, numbagrad.ones(n))
        xt = torch.tensor(x, requires_grad=True)
        (gt,) = torch.autograd.grad(torch.sigmoid(xt), xt, torch.ones(n, dtype=torch.float64))
        np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-14)
        fa = numbagrad.autograd.forward_ad
        with fa.dual_level():
            d = fa.make_dual(xs.detach(), numbagrad.ones(n, dtype=numbagrad.float64))
            t = fa.unpack_dual(numbagrad.sigmoid(d)).tangent
        np.testing.assert_allclose(t.numpy(), g.numpy(), rtol=1e-15)


# -- numbagrad.special ----------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit_gradients(eps):
    # logit-grad-*, logit-eps-gradgrad: PyTorch's infinitely differentiable logit_backward
    x = [1.0, 0.0, -0.0, 0.5, 2.0, -1.0, nan, 0.1, 0.9, 0.25]
    _check(lambda T, v: T.special.logit(v, eps), x)


def test_logit_forward_and_float32():
    x = [0.0, 1.0, 0.3, nan, 1.5, -0.0]
    for eps in (None, 0.2):
        for dt in ("float64", "float32"):
            ours = numbagrad.logit(numbagrad.tensor(x, dtype=getattr(numbagrad, dt)), eps)
            theirs = torch.logit(torch.tensor(x, dtype=getattr(torch, dt)), eps)
            _same(ours, theirs, rtol=1e-6 if dt == "float32" else 1e-15, zeros=True)


def test_sinc_gradients_next_to_and_at_zero():
    # sinc-grad (no cancellation next to 0), sinc-gradgrad-zero (NaN at 0, as PyTorch's)
    x = [1e-30, 0.0, -0.0, 3.0, 0.5, -2.42]
    _check(lambda T, v: T.special.sinc(v), x, cot=[-0.0276, 1.9, -0.55, -1.66, 0.35, 0.4])


@pytest.mark.parametrize("op", ["i0", "i0e", "i1", "i1e"])
def test_modified_bessel_gradients_at_special_values(op):
    # i1-grad-nonfinite, i1e-grad-nonfinite (1/2 at NaN and |x| <= eps), i1-gradgrad,
    # i1e-gradgrad (no cancellation at 1e-30), i0-gradgrad-nan, i1e-gradgrad-nonfinite-2
    x = [nan, inf, -inf, 1e-30, -1e-30, 0.0, -0.0, 0.42, -3.5, 710.0]
    _check(lambda T, v: getattr(T.special, op)(v), x, rtol=1e-9)


def test_bessel_j1_is_odd_at_signed_zero():
    for dt in ("float32", "float64"):
        ours = numbagrad.special.bessel_j1(numbagrad.tensor([-0.0, 0.0], dtype=dt))
        assert [math.copysign(1, v) for v in ours.tolist()] == [-1.0, 1.0]


@pytest.mark.parametrize(
    "op, x",
    [
        ("erfcx", [53.754383, -2.5, 0.3, 8.0]),
        ("log_ndtr", [-299.5574, -2084.754, -3.9]),
        # bessel-e-float32-grad-cancellation: i1e(x) - sgn(x) i0e(x) and its i1e twin
        ("i0e", [10140.961, 1.567519e6, 4.0394336e7, -1.9823831e6, 3.0, -0.5]),
        ("i1e", [10140.961, 1.567519e6, 4.0394336e7, -1.9823831e6, 3.0, -0.5]),
    ],
)
def test_float32_gradients_recomputed_in_float64(op, x):
    # erfcx-grad-accuracy (2 x erfcx(x) - 2/sqrt(pi) cancels), log_ndtr's tail: the float32
    # derivative is the float64 one rounded once
    f = getattr(numbagrad.special, op)
    x32 = numbagrad.tensor(x, dtype=numbagrad.float32, requires_grad=True)
    (g32,) = numbagrad.autograd.grad(f(x32), x32, numbagrad.ones(len(x)))
    x64 = x32.detach().to(numbagrad.float64).requires_grad_()
    (g64,) = numbagrad.autograd.grad(f(x64), x64, numbagrad.ones(len(x), dtype=numbagrad.float64))
    np.testing.assert_array_equal(g32.numpy(), g64.numpy().astype(np.float32))
    # ... and a second derivative exists (the recomputation is differentiable)
    (h,) = numbagrad.autograd.grad(
        numbagrad.autograd.grad(f(x32), x32, numbagrad.ones(len(x)), create_graph=True)[0].sum(),
        x32,
    )
    assert h.dtype == numbagrad.float32 and bool(numbagrad.isfinite(h).all())


# -- atanh, setitem, zeta (issue 9, last campaign) ------------------------------------------------
def test_atanh_rule_divides_as_pytorch():
    # atanh-gradgrad-rounding: next to psi's pole two second-order terms of 1e30 cancel; the
    # rule grad / (1 - x^2) (PyTorch's division, not a product with a reciprocal) rounds
    # as PyTorch's does
    # (rtol: psi's own derivative, trigamma, is 4e-10 off PyTorch's at 0.3)
    x = [-1e-30, 1e-30, -1e-30, 1e-30, -1e-30, 1e-30, 0.3]
    cot = [0.126, -0.132, 0.64, 0.105, -0.536, 0.362, 1.304]
    _check(lambda T, v: T.atanh(T.special.psi(-v)), x, cot=cot, rtol=1e-9)
    _check(lambda T, x: T.atanh(x), [0.5, -0.3, 0.99999, 1.0, -1.0, 2.0, nan, -0.0])


def _second_order(T, f, a, b):
    at = T.tensor(a, dtype=T.float64, requires_grad=True)
    bt = T.tensor(b, dtype=T.float64, requires_grad=True)
    y = f(T, at, bt)
    c = T.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
    ga, gb = T.autograd.grad(y, [at, bt], c, create_graph=True)
    total = 0
    for g in (ga, gb):
        if g.requires_grad:
            total = total + (g * T.tensor(np.linspace(-1.3, 0.7, g.numel()).reshape(g.shape))).sum()
    out = [ga, gb]
    out += T.autograd.grad(total, [at, bt, c], allow_unused=True)
    # whether a's gradient is a function of the cotangent (PyTorch: not after a whole write)
    return ga.requires_grad, [None if v is None else v.detach().numpy() for v in out]


def _compare_second_order(f, a, b):
    (flag, ours), (flag_t, theirs) = (
        _second_order(numbagrad, f, a, b),
        _second_order(torch, f, a, b),
    )
    assert flag == flag_t
    for u, v in zip(ours, theirs):
        assert (u is None) == (v is None)
        if u is not None:
            _same(u, torch.tensor(v), rtol=1e-12)


@pytest.mark.parametrize(
    "key",
    [slice(None), slice(0, 100), Ellipsis, (Ellipsis, slice(None)), (slice(None), slice(0, 2))],
    ids=["all", "0:100", "ellipsis", "ellipsis-all", "all-all"],
)
@pytest.mark.parametrize("value", ["scalar", "tensor"])
def test_write_of_a_whole_tensor_cuts_the_double_backward(key, value):
    # pow-gradgrad-nan, setitem-whole-gradgrad-nan: x[:] = v writes x itself in PyTorch
    # (fill_/copy_), whose gradient for x is zeros_like(grad): no second-order term reaches
    # pow's rule, where 0 * log(b) would be NaN at b < 0
    def f(T, a, b):
        s = (a * 1.0).reshape(3, 2).clone()
        s[key] = 0.0 if value == "scalar" else T.tensor([[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]])
        return T.pow(b, s)

    a, b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.array([-1.5, 2.0, -3.0, 0.5, -0.5, 4.0])
    b = b.reshape(3, 2).tolist()
    _compare_second_order(f, a, b)


@pytest.mark.parametrize("key", [slice(0, 2), slice(-3, None), 1], ids=["0:2", "-3:", "int"])
def test_write_of_part_of_a_tensor_keeps_pytorchs_nan(key):
    # a partial key (or one that PyTorch does not see as whole, -3:) is CopySlices in
    # PyTorch: zeros written into a copy of grad, linear in it, so 0 * NaN upstream stays
    def f(T, a, b):
        s = (a * 1.0).clone()
        s[key] = 0.0
        return T.pow(b, s)

    a, b = [1.0, 2.0, 3.0], [-1.5, 2.0, -3.0]
    _compare_second_order(f, a, b)


def test_copy_into_a_tensor_cuts_the_double_backward():
    def f(T, a, b):
        s = (a * 1.0).clone()
        s.copy_(T.tensor([0.5, 1.0, 1.5]))
        return T.pow(b, s)

    a, b = [1.0, 2.0, 3.0], [-1.5, 2.0, -3.0]
    _compare_second_order(f, a, b)


def test_zeta_gradient_with_integer_x_is_float64_accurate():
    # torch-zeta-int-grad-float32: PyTorch computes zeta(x + 1., q) in float32 there;
    # numbagrad's gradient is PyTorch's float64 one (x given as float64)
    q = -4.485500235893404
    qn = numbagrad.tensor(q, dtype=numbagrad.float64, requires_grad=True)
    (gn,) = numbagrad.autograd.grad(
        numbagrad.special.zeta(numbagrad.tensor([[3], [2]]), qn).sum(), qn
    )
    qt = torch.tensor(q, dtype=torch.float64, requires_grad=True)
    x64 = torch.tensor([[3.0], [2.0]], dtype=torch.float64)
    (gt,) = torch.autograd.grad(torch.special.zeta(x64, qt).sum(), qt)
    assert gn.dtype == numbagrad.float64
    assert abs(float(gn) - float(gt)) <= 1e-13 * abs(float(gt))


def test_sinc_gradient_multiplies_the_derivative_by_grad():
    # sinc-float32-grad-overflow: PyTorch's grad * ((pi x cos(pi x) - sin(pi x)) / (pi x^2)),
    # the derivative first: a float32 grad of 3e37 at x = 100 gives 3e35, not inf
    _check(
        lambda T, x: T.special.sinc(x), [100.0, 0.3, -7.5], "float32", [3.1e37, 3e37, 1e38], False
    )
    _check(lambda T, x: T.special.sinc(x), [100.0, 0.3, 1e-30, 0.0], cot=[3.1e307, 1.0, 2.0, 1.0])
