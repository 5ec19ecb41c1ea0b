"""Behaviour of the extra top-level math against PyTorch: special values, gradients at
domain edges, ties and NaN rules of the scans and order statistics, the options of
``unique``/``searchsorted``/``histc``, and the errors (the generic checks are the op
database entries in ``_opdb_math.py``)."""

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def check(ours, theirs, rtol=1e-7, atol=1e-10):
    """Same shape, dtype name and values (NaN equal to NaN)."""
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            check(o, t, rtol, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    a, b = _np(ours), _np(theirs)
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def both(data, dtype="float64", requires_grad=False):
    """The same values as a numbagrad and a torch tensor."""
    a = np.asarray(data, dtype=dtype)
    x = ng.tensor(a)
    y = torch.tensor(a)
    if requires_grad:
        x.requires_grad_(True)
        y.requires_grad_(True)
    return x, y


def grads(fn_ng, fn_t, *arrays, cot=None):
    """Gradients of ``sum(fn(*inputs) * cot)`` in both libraries."""
    xs = [ng.tensor(np.asarray(a, np.float64), requires_grad=True) for a in arrays]
    ts = [torch.tensor(np.asarray(a, np.float64), requires_grad=True) for a in arrays]
    o, p = fn_ng(*xs), fn_t(*ts)
    c = np.ones(tuple(o.shape)) if cot is None else np.asarray(cot, np.float64)
    (o * ng.tensor(c)).sum().backward()
    (p * torch.tensor(c)).sum().backward()
    return [x.grad for x in xs], [t.grad for t in ts]


def check_grads(fn_ng, fn_t, *arrays, cot=None):
    g1, g2 = grads(fn_ng, fn_t, *arrays, cot=cot)
    check(g1, g2)


# -- elementwise --------------------------------------------------------------------------------
EDGES = [-1.0, 1.0, 0.5, -0.5, 0.0, 1.5, -2.0, INF, -INF, NAN]


@pytest.mark.parametrize(
    "name",
    [
        "acos",
        "asin",
        "atan",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "log10",
        "exp2",
        "trunc",
        "frac",
        "deg2rad",
        "rad2deg",
        "sgn",
    ],
)
def test_unary_values_and_gradients_at_special_points(name):
    with np.errstate(all="ignore"):
        x, y = both(EDGES, requires_grad=True)
        check(getattr(ng, name)(x), getattr(torch, name)(y))
        if name != "sgn":  # torch.sgn's gradient of a real tensor is a ZeroTensor
            check_grads(getattr(ng, name), getattr(torch, name), EDGES)


@pytest.mark.parametrize("name", ["acos", "asinh", "log10", "exp2", "deg2rad", "rad2deg"])
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_unary_integer_inputs_promote(name, dtype):
    x, y = both([1, 0, 1], dtype)
    check(getattr(ng, name)(x), getattr(torch, name)(y), rtol=1e-6)


def test_trunc_frac_signbit_positive_dtypes_and_errors():
    x, y = both([3, -2, 0], "int64")
    check(ng.trunc(x), torch.trunc(y))
    check(ng.fix(x), torch.fix(y))
    check(ng.signbit(x), torch.signbit(y))
    check(ng.sgn(x), torch.sgn(y))
    b, c = both([True, False], "bool")
    check(ng.signbit(b), torch.signbit(c))
    with pytest.raises(NotImplementedError, match="trunc"):
        ng.trunc(b)
    with pytest.raises(NotImplementedError, match="frac_cpu"):
        ng.frac(x)
    with pytest.raises(RuntimeError, match="bool tensor"):
        ng.positive(b)
    f, g = both([-0.0, 0.0, -NAN, -1.0])
    check(ng.signbit(f), torch.signbit(g))
    assert ng.positive(f) is f


def test_aliases():
    x = ng.tensor([0.25, -0.5])
    for alias, name in [
        ("arccos", "acos"),
        ("arcsin", "asin"),
        ("arctan", "atan"),
        ("arcsinh", "asinh"),
        ("arctanh", "atanh"),
        ("absolute", "abs"),
        ("negative", "neg"),
        ("fix", "trunc"),
    ]:
        np.testing.assert_array_equal(getattr(ng, alias)(x).numpy(), getattr(ng, name)(x).numpy())
        np.testing.assert_array_equal(getattr(x, alias)().numpy(), getattr(ng, name)(x).numpy())
    np.testing.assert_array_equal(ng.arccosh(x + 2).numpy(), ng.acosh(x + 2).numpy())


def test_inplace_variants():
    for name in ["acos", "atan", "sinh", "log10", "exp2", "trunc", "frac", "deg2rad", "sgn"]:
        a = np.array([0.25, 0.5])
        x, y = ng.tensor(a), torch.tensor(a)
        assert getattr(x, name + "_")() is x
        getattr(y, name + "_")()
        check(x, y)
    x, y = both([1.0, -2.0])
    x.hypot_(ng.tensor([3.0, 1.0]))
    y.hypot_(torch.tensor([3.0, 1.0]))
    check(x, y)
    x.lerp_(ng.zeros(2, dtype=ng.float64), 0.25)
    y.lerp_(torch.zeros(2, dtype=torch.float64), 0.25)
    check(x, y)
    x.copysign_(-1.0)
    y.copysign_(-1.0)
    check(x, y)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ng.tensor([1, 2]).acos_()
    # float_power_ computes in float64, so only a float64 tensor can hold its result
    x, y = both([1.0, -2.0])
    assert x.float_power_(2) is x
    y.float_power_(2)
    check(x, y)
    for m in (ng, torch):
        with pytest.raises(RuntimeError, match="requires dtype Double"):
            m.tensor([1.0, 2.0], dtype=m.float32).float_power_(2)


PAIRS = [
    (3.0, 4.0),
    (0.0, 0.0),
    (-2.0, 0.0),
    (INF, 1.0),
    (-INF, -INF),
    (INF, INF),
    (1.0, NAN),
    (-0.0, 2.0),
    (5.0, -1.0),
]


@pytest.mark.parametrize(
    "name", ["hypot", "logaddexp", "logaddexp2", "copysign", "fmax", "fmin", "nextafter"]
)
def test_binary_values_and_gradients_at_special_points(name):
    a = [p[0] for p in PAIRS]
    b = [p[1] for p in PAIRS]
    with np.errstate(all="ignore"):
        x, y = both(a)
        u, v = both(b)
        check(getattr(ng, name)(x, u), getattr(torch, name)(y, v))
        if name != "nextafter":  # (no derivative in PyTorch)
            check_grads(getattr(ng, name), getattr(torch, name), a, b)


def test_binary_ties_and_nan_gradients_of_fmax_fmin():
    a, b = [1.0, 2.0, NAN, NAN, 3.0], [1.0, NAN, 2.0, NAN, 1.0]
    for name in ("fmax", "fmin"):
        check_grads(getattr(ng, name), getattr(torch, name), a, b)


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "nextafter"])
def test_float_only_binary_ops_refuse_integers(name):
    x, y = both([1, 2], "int64")
    with pytest.raises(NotImplementedError) as ours:
        getattr(ng, name)(x, x)
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch, name)(y, y)
    assert str(ours.value) == str(theirs.value)


def test_copysign_fmax_heaviside_dtypes():
    x, y = both([1, -2, 0], "int64")
    check(ng.copysign(x, -1), torch.copysign(y, -1))
    check(ng.fmax(x, x * 0), torch.fmax(y, y * 0))
    check(ng.heaviside(x, ng.tensor([7])), torch.heaviside(y, torch.tensor([7])))
    f, g = both([NAN, 0.0, -1.0, 2.0])
    h, k = both([0.5])
    check(ng.heaviside(f, h), torch.heaviside(g, k))
    with pytest.raises(RuntimeError, match="different dtypes"):
        ng.heaviside(f, ng.tensor([1.0], dtype=ng.float32))


def test_float_power():
    x, y = both([1.0, 2.0, 3.0], "float32", requires_grad=True)
    o, p = ng.float_power(x, 2.5), torch.float_power(y, 2.5)
    check(o, p)
    o.sum().backward()
    p.sum().backward()
    check(x.grad, y.grad, rtol=1e-6)
    a, b = both([2, 3], "int64")
    check(ng.float_power(a, a), torch.float_power(b, b))
    check(ng.float_power(2, ng.tensor([0.5, 1.0])), torch.float_power(2, torch.tensor([0.5, 1.0])))


def test_lerp_gradients_with_respect_to_all_three():
    rng = np.random.default_rng(0)
    a, b, w = rng.normal(size=(3, 4)), rng.normal(size=(4,)), rng.uniform(-1, 2, (3, 4))
    check_grads(ng.lerp, torch.lerp, a, b, w)
    x, y = both([1.0, 2.0])
    u, v = both([3.0, 7.0])
    check(ng.lerp(x, u, 1.0), torch.lerp(y, v, 1.0))
    check(ng.lerp(x, u, 0.5), torch.lerp(y, v, 0.5))
    with pytest.raises(RuntimeError, match="expected dtype"):
        ng.lerp(x, u.float(), 0.5)


# -- scans ----------------------------------------------------------------------------------------
SCAN = [1.0, 3.0, 3.0, 0.0, 3.0, NAN, 2.0, NAN, 5.0]


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_ties_nan_and_gradient(name):
    x, y = both(SCAN)
    check(getattr(ng, name)(x, 0), tuple(getattr(torch, name)(y, 0)))
    a = [[2.0, 1.0, 2.0, 4.0], [0.0, 0.0, -1.0, -1.0]]
    for dim in (0, 1):
        check_grads(
            lambda t, d=dim: getattr(ng, name)(t, d)[0],
            lambda t, d=dim: getattr(torch, name)(t, d)[0],
            a,
            cot=np.arange(8.0).reshape(2, 4) + 1,
        )
    i, j = both([3, 1, 1, 2, 5], "int64")
    check(getattr(ng, name)(i, 0), tuple(getattr(torch, name)(j, 0)))
    z, w = both(2.5)
    check(getattr(ng, name)(z, 0), tuple(getattr(torch, name)(w, 0)))
    out = getattr(ng, name)(x, 0)
    assert out.values is out[0] and out.indices is out[1]


def test_logcumsumexp_is_stable_and_handles_infinities():
    x, y = both([[-1000.0, 0.0, 1000.0, -INF], [-INF, -INF, 3.0, INF]])
    check(ng.logcumsumexp(x, 1), torch.logcumsumexp(y, 1))
    check(ng.logcumsumexp(x, 0), torch.logcumsumexp(y, 0))
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 5)) * 10
    check_grads(
        lambda t: ng.logcumsumexp(t, 1),
        lambda t: torch.logcumsumexp(t, 1),
        a,
        cot=rng.normal(size=(3, 5)),
    )
    i, j = both([1, 2, 3], "int64")
    with pytest.raises(NotImplementedError) as ours:
        ng.logcumsumexp(i, 0)
    with pytest.raises(NotImplementedError) as theirs:
        torch.logcumsumexp(j, 0)
    assert str(ours.value) == str(theirs.value)


def test_logcumsumexp_jvp_is_stable_on_early_prefixes():
    x = ng.tensor([-1000.0, 0.0, 5.0], dtype=ng.float64)
    t = ng.tensor([1.0, -2.0, 0.5], dtype=ng.float64)
    _, tangent = ng.func.jvp(lambda v: ng.logcumsumexp(v, 0), (x,), (t,))
    xs = x.numpy()
    y = np.logaddexp.accumulate(xs)
    want = [sum(t.numpy()[k] * math.exp(xs[k] - y[i]) for k in range(i + 1)) for i in range(3)]
    np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-12)


# -- order statistics and reductions --------------------------------------------------------------
def test_median_without_dim_lower_median_nan_and_shared_gradient():
    for data in ([3.0, 1.0, 2.0, 4.0], [1.0, NAN, 2.0], [2.0, 2.0, 1.0, 2.0, 5.0], [7.0]):
        x, y = both(data)
        check(ng.median(x), torch.median(y))
    check_grads(ng.median, torch.median, [2.0, 2.0, 1.0, 2.0, 5.0])
    check_grads(ng.median, torch.median, [1.0, NAN, 2.0, NAN])
    i, j = both([[3, 1], [2, 5]], "int64")
    check(ng.median(i), torch.median(j))
    assert ng.median(ng.tensor([])).isnan().item()


def test_median_with_dim_values_nan_index_and_gradient():
    data = [[3.0, NAN, 1.0, NAN], [4.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 0.0]]
    x, y = both(data)
    v, i = ng.median(x, 1)
    w, j = torch.median(y, 1)
    check(v, w)
    np.testing.assert_array_equal(i.numpy()[:2], j.numpy()[:2])  # first NaN; no ties
    # among ties the index may differ from PyTorch's (unspecified there): it points to a tie
    assert x.numpy()[2, i.numpy()[2]] == 1.0
    a = [[4.0, 1.0, 2.0, 3.0], [0.5, -1.0, 2.0, 7.0]]
    check_grads(lambda t: ng.median(t, 1)[0], lambda t: torch.median(t, 1)[0], a)
    check(ng.median(x, 0, keepdim=True)[0], torch.median(y, 0, keepdim=True)[0])


def test_nanmedian():
    data = [[3.0, NAN, 1.0, NAN], [NAN, NAN, NAN, NAN], [4.0, 1.0, 2.0, 3.0]]
    x, y = both(data)
    check(ng.nanmedian(x), torch.nanmedian(y))
    check(ng.nanmedian(x, 1)[0], torch.nanmedian(y, 1)[0])
    check(ng.nanmedian(x, 1)[1][[0, 2]], torch.nanmedian(y, 1)[1][[0, 2]])


def test_kthvalue_values_gradient_and_errors():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 5))
    x, y = both(a)
    for k, dim in [(1, 1), (5, 1), (2, 0)]:
        check(ng.kthvalue(x, k, dim), tuple(torch.kthvalue(y, k, dim)))
    check_grads(lambda t: ng.kthvalue(t, 2, 1)[0], lambda t: torch.kthvalue(t, 2, 1)[0], a)
    with pytest.raises(RuntimeError, match="out of range"):
        ng.kthvalue(x, 6, 1)


@pytest.mark.parametrize("mode", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_modes_nan_and_shapes(mode):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 6))
    a[1, 2] = NAN
    x, y = both(a)
    qs = [0.0, 0.3, 0.5, 1.0]
    for q in (0.3, 0.75):
        check(ng.quantile(x, q, 1, interpolation=mode), torch.quantile(y, q, 1, interpolation=mode))
        check(
            ng.nanquantile(x, q, 1, keepdim=True, interpolation=mode),
            torch.nanquantile(y, q, 1, keepdim=True, interpolation=mode),
        )
    qx, qy = both(qs)
    check(
        ng.quantile(x, qx, 0, keepdim=True, interpolation=mode),
        torch.quantile(y, qy, 0, keepdim=True, interpolation=mode),
    )
    check(ng.nanquantile(x, qx, interpolation=mode), torch.nanquantile(y, qy, interpolation=mode))
    check(
        ng.quantile(x, qx, keepdim=True, interpolation=mode),
        torch.quantile(y, qy, keepdim=True, interpolation=mode),
    )


def test_quantile_gradients_input_and_q():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(2, 5))
    q = [0.15, 0.6]
    check_grads(
        lambda t, p: ng.quantile(t, p, 1),
        lambda t, p: torch.quantile(t, p, 1),
        a,
        q,
        cot=rng.normal(size=(2, 2)),
    )
    check_grads(lambda t: ng.nanquantile(t, 0.4), lambda t: torch.nanquantile(t, 0.4), a)


def test_quantile_errors():
    x = ng.tensor([1.0, 2.0], dtype=ng.float64)
    for bad, match in [
        (lambda: ng.quantile(ng.tensor([1, 2]), 0.5), "float or double"),
        (lambda: ng.quantile(x, 1.5), r"\[0, 1\]"),
        (lambda: ng.quantile(x, ng.tensor([0.5, 2.0], dtype=ng.float64)), r"\[0, 1\]"),
        (lambda: ng.quantile(x, ng.tensor([0.5], dtype=ng.float32)), "same dtype"),
        (lambda: ng.quantile(ng.tensor([]), 0.5), "non-empty"),
        (lambda: ng.quantile(x, ng.tensor([[0.5]], dtype=ng.float64)), "scalar or 1D"),
    ]:
        with pytest.raises(RuntimeError, match=match):
            bad()
    with pytest.raises(ValueError, match="interpolation"):
        ng.quantile(x, 0.5, interpolation="cubic")


def test_nansum_nanmean_values_and_gradients():
    a = [[1.0, NAN, 2.0], [NAN, NAN, NAN]]
    x, y = both(a)
    check(ng.nansum(x), torch.nansum(y))
    check(ng.nansum(x, 1, keepdim=True), torch.nansum(y, 1, keepdim=True))
    check(ng.nanmean(x, 1), torch.nanmean(y, 1))
    check(ng.nanmean(x), torch.nanmean(y))
    check_grads(lambda t: ng.nansum(t, 1), lambda t: torch.nansum(t, 1), a)
    # (over an all-NaN slice PyTorch's gradient is inf * 0 = NaN at the NaN elements, this
    # one 0: a documented deviation; elsewhere they agree)
    b = [[1.0, NAN, 2.0], [NAN, 3.0, NAN]]
    check_grads(lambda t: ng.nanmean(t, 0), lambda t: torch.nanmean(t, 0), b)
    check_grads(lambda t: ng.nanmean(t, 1), lambda t: torch.nanmean(t, 1), b)
    i, j = both([1, 2], "int64")
    check(ng.nansum(i), torch.nansum(j))
    with pytest.raises(RuntimeError, match="nanmean"):
        ng.nanmean(i)


def test_var_mean_std_mean_aminmax_count_nonzero():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(3, 4))
    x, y = both(a)
    check(ng.var_mean(x, 1), torch.var_mean(y, 1))
    check(
        ng.std_mean(x, 0, keepdim=True, correction=0),
        torch.std_mean(y, 0, keepdim=True, correction=0),
    )
    check(ng.var_mean(x, False), torch.var_mean(y, False))
    check(ng.aminmax(x), tuple(torch.aminmax(y)))
    check(ng.aminmax(x, keepdim=True), tuple(torch.aminmax(y, keepdim=True)))
    out = ng.aminmax(x, dim=1)
    assert out.min is out[0] and out.max is out[1]
    i, j = both([[0, 1, 2], [0, 0, 3]], "int64")
    for dim in (None, 1, (0, 1)):
        check(ng.count_nonzero(i, dim), torch.count_nonzero(j, dim))
    check(ng.msort(x), torch.msort(y))


# -- stacking, grids and shapes -------------------------------------------------------------------
def test_stacking_against_torch():
    a, b = both([1.0, 2.0])
    c, d = both([[3.0, 4.0]])
    e, f = both(5.0)
    check(ng.vstack([a, c]), torch.vstack([b, d]))
    check(ng.row_stack((a, c)), torch.vstack([b, d]))
    check(ng.hstack([a, a]), torch.hstack([b, b]))
    check(ng.hstack([e, a]), torch.hstack([f, b]))
    check(ng.dstack([c, c]), torch.dstack([d, d]))
    check(ng.column_stack([a, c.t()]), torch.column_stack([b, d.t()]))
    for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
        check(getattr(ng, fn)(e), getattr(torch, fn)(f))
        check(getattr(ng, fn)(a, c), getattr(torch, fn)(b, d))
        check(getattr(ng, fn)([a, e]), getattr(torch, fn)([b, f]))
    with pytest.raises(RuntimeError, match="non-empty"):
        ng.vstack([])


def test_meshgrid_indexing_and_warning():
    a, b = both([1, 2], "int64")
    c, d = both([3, 4, 5], "int64")
    for indexing in ("ij", "xy"):
        check(ng.meshgrid(a, c, indexing=indexing), torch.meshgrid(b, d, indexing=indexing))
        check(
            ng.meshgrid([a, c, a], indexing=indexing), torch.meshgrid([b, d, b], indexing=indexing)
        )
    with pytest.warns(UserWarning, match="indexing"):
        grids = ng.meshgrid(a, c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(grids, torch.meshgrid(b, d))
    with pytest.raises(RuntimeError, match="same dtype"):
        ng.meshgrid(a, ng.tensor([1.0]), indexing="ij")


def test_tile_repeat_interleave_rot90():
    rng = np.random.default_rng(6)
    a = rng.normal(size=(2, 3))
    x, y = both(a)
    for reps in [(2,), (1, 2), (2, 1, 3), (0, 2)]:
        check(ng.tile(x, reps), torch.tile(y, reps))
    check(x.tile((2, 2)), y.tile((2, 2)))
    check(ng.repeat_interleave(x, 2), torch.repeat_interleave(y, 2))
    check(ng.repeat_interleave(x, 3, dim=0), torch.repeat_interleave(y, 3, dim=0))
    r, s = both([2, 0, 1], "int64")
    check(ng.repeat_interleave(x, r, dim=1), torch.repeat_interleave(y, s, dim=1))
    check(ng.repeat_interleave(r), torch.repeat_interleave(s))
    check(x.repeat_interleave(ng.tensor([2]), dim=0), y.repeat_interleave(torch.tensor([2]), dim=0))
    with pytest.raises(RuntimeError, match="same size"):
        ng.repeat_interleave(x, r, dim=0)
    with pytest.raises(RuntimeError, match="negative"):
        ng.repeat_interleave(x, -1)
    for k in range(-3, 6):
        check(ng.rot90(x, k), torch.rot90(y, k))
    b3 = rng.normal(size=(2, 3, 4))
    u, v = both(b3)
    check(ng.rot90(u, 1, (2, 0)), torch.rot90(v, 1, (2, 0)))
    with pytest.raises(RuntimeError, match="different"):
        ng.rot90(x, 1, (0, 0))
    with pytest.raises(RuntimeError, match="total dims"):
        ng.rot90(ng.tensor([1.0]))


def test_renorm_against_torch():
    rng = np.random.default_rng(11)
    a = rng.normal(size=(3, 4)) * 2
    x, y = both(a)
    for p, dim, maxnorm in [(2, 0, 1.0), (1, 1, 2.0), (3.5, -1, 0.5)]:
        check(ng.renorm(x, p, dim, maxnorm), torch.renorm(y, p, dim, maxnorm))
        check_grads(
            lambda t, p=p, d=dim, m=maxnorm: ng.renorm(t, p, d, m),
            lambda t, p=p, d=dim, m=maxnorm: torch.renorm(t, p, d, m),
            a,
            cot=rng.normal(size=(3, 4)),
        )
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ng.renorm(ng.tensor([1.0]), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="maxnorm"):
        ng.renorm(x, 2, 0, -1.0)


def test_broadcast_block_diag_cartesian_prod():
    a, b = both([[1.0], [2.0]])
    c, d = both([3.0, 4.0, 5.0])
    check(ng.broadcast_tensors(a, c), torch.broadcast_tensors(b, d))
    with pytest.raises(RuntimeError, match="must match"):
        ng.broadcast_tensors(c, ng.tensor([1.0, 2.0]))
    i, j = both([[1, 2]], "int64")
    check(ng.block_diag(a, i, c), torch.block_diag(b, j, d))
    e, f = both(7.0)
    check(ng.block_diag(e, c), torch.block_diag(f, d))
    with pytest.raises(RuntimeError, match="2 or fewer"):
        ng.block_diag(ng.zeros(1, 1, 1))
    k, m = both([1, 2], "int64")
    check(ng.cartesian_prod(k, c.to(ng.int64)), torch.cartesian_prod(m, d.to(torch.int64)))
    check(ng.cartesian_prod(c), torch.cartesian_prod(d))
    check(ng.ravel(a.t()), torch.ravel(b.t()))
    check(ng.argwhere(a > 1), torch.argwhere(b > 1))


# -- differences and integrals --------------------------------------------------------------------
def test_diff_options_and_errors():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(3, 4))
    x, y = both(a)
    for n, dim in [(1, -1), (2, 0), (0, 1), (5, 1)]:
        check(ng.diff(x, n, dim), torch.diff(y, n, dim))
    p, q = both(rng.normal(size=(3, 1)))
    check(ng.diff(x, 1, 1, prepend=p, append=p), torch.diff(y, 1, 1, prepend=q, append=q))
    b, c = both([True, False, False, True], "bool")
    check(ng.diff(b), torch.diff(c))
    check_grads(lambda t: ng.diff(t, 2, 1), lambda t: torch.diff(t, 2, 1), a)
    with pytest.raises(RuntimeError, match="one-dimensional"):
        ng.diff(ng.tensor(1.0))
    with pytest.raises(RuntimeError, match="non-negative"):
        ng.diff(x, -1)


def test_trapezoid_and_cumulative_trapezoid():
    rng = np.random.default_rng(8)
    a = rng.normal(size=(3, 4))
    pts = np.sort(rng.normal(size=4))
    x, y = both(a)
    u, v = both(pts)
    check(ng.trapezoid(x), torch.trapezoid(y))
    check(ng.trapezoid(x, dx=0.5, dim=0), torch.trapezoid(y, dx=0.5, dim=0))
    check(ng.trapezoid(x, u), torch.trapezoid(y, v))
    check(ng.trapz(x, u), torch.trapz(y, v))
    check(ng.trapz(x, dx=2.0), torch.trapz(y, dx=2.0))
    check(ng.cumulative_trapezoid(x, u), torch.cumulative_trapezoid(y, v))
    check(ng.cumulative_trapezoid(x, dx=0.5, dim=0), torch.cumulative_trapezoid(y, dx=0.5, dim=0))
    i, j = both([1, 2, 4], "int64")
    check(ng.trapezoid(i), torch.trapezoid(j))
    check(ng.cumulative_trapezoid(i), torch.cumulative_trapezoid(j))
    e, f = both(np.zeros((2, 0)))
    check(ng.trapezoid(e), torch.trapezoid(f))
    check_grads(ng.trapezoid, torch.trapezoid, a, pts)
    check_grads(
        lambda s, t: ng.cumulative_trapezoid(s, t),
        lambda s, t: torch.cumulative_trapezoid(s, t),
        a,
        pts,
    )


# -- searching, counting and sets ----------------------------------------------------------------
def test_searchsorted_sides_sorter_dtypes():
    seq = [1.0, 2.0, 2.0, 3.0, 5.0]
    vals = [[0.0, 2.0, 2.5], [5.0, 6.0, 1.0]]
    s, t = both(seq)
    x, y = both(vals)
    check(ng.searchsorted(s, x), torch.searchsorted(t, y))
    check(ng.searchsorted(s, x, right=True), torch.searchsorted(t, y, right=True))
    check(ng.searchsorted(s, x, side="right"), torch.searchsorted(t, y, side="right"))
    check(ng.searchsorted(s, x, out_int32=True), torch.searchsorted(t, y, out_int32=True))
    check(ng.searchsorted(s, 2.0), torch.searchsorted(t, 2.0))
    nd, ne = both([[1.0, 3.0, 5.0], [0.0, 0.5, 1.0]])
    check(ng.searchsorted(nd, x), torch.searchsorted(ne, y))
    perm = [4, 0, 3, 1, 2]
    us, ut = both(np.asarray(seq)[perm])
    srt = np.argsort(np.asarray(seq)[perm], kind="stable")
    check(
        ng.searchsorted(us, x, sorter=ng.tensor(srt)),
        torch.searchsorted(ut, y, sorter=torch.tensor(srt)),
    )
    i, j = both([1, 3, 5], "int64")
    check(ng.searchsorted(i, x), torch.searchsorted(j, y))
    with pytest.raises(RuntimeError, match="opposites"):
        ng.searchsorted(s, x, right=True, side="left")
    with pytest.raises(RuntimeError, match="first N-1 dimensions"):
        ng.searchsorted(nd, ng.tensor([1.0]))
    check(ng.bucketize(x, s), torch.bucketize(y, t))
    check(
        ng.bucketize(x, s, right=True, out_int32=True),
        torch.bucketize(y, t, right=True, out_int32=True),
    )
    with pytest.raises(RuntimeError, match="1 dimension"):
        ng.bucketize(x, nd)


def test_searchsorted_under_vmap():
    seqs = ng.tensor(np.sort(np.random.default_rng(9).normal(size=(3, 6)), axis=1))
    vals = ng.tensor(np.random.default_rng(10).normal(size=(3, 4)))
    got = ng.func.vmap(ng.searchsorted)(seqs, vals)
    want = ng.stack([ng.searchsorted(seqs[i], vals[i]) for i in range(3)])
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = ng.func.vmap(ng.searchsorted, in_dims=(None, 0))(seqs[0], vals)
    np.testing.assert_array_equal(got.numpy(), ng.searchsorted(seqs[0], vals).numpy())


def test_histc_edges_nan_and_data_range():
    cases = [
        ([0.0, 1.0, 2.0, 3.0, 3.0, -1.0, 4.0, NAN], dict(bins=3, min=0, max=3)),
        ([1.0, 2.0, 1.0], dict(bins=4)),
        ([2.0, 2.0], dict(bins=3)),
        ([0.1, 0.2, 0.30000001, 0.7, 1.0], dict(bins=10, min=0, max=1)),
        ([], dict(bins=2)),
    ]
    for data, kw in cases:
        for dtype in ("float32", "float64"):
            x, y = both(data, dtype)
            check(ng.histc(x, **kw), torch.histc(y, **kw))
    with pytest.raises(NotImplementedError, match="histogram_cpu"):
        ng.histc(ng.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="larger than min"):
        ng.histc(ng.tensor([1.0]), min=2, max=1)
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    assert not ng.histc(x, 2).requires_grad


def test_unique_options():
    a = [3, 1, 2, 1, 3, 5, 1]
    x, y = both(a, "int64")
    for kw in [
        {},
        {"return_inverse": True},
        {"return_counts": True},
        {"return_inverse": True, "return_counts": True, "sorted": False},
    ]:
        check(ng.unique(x, **kw), torch.unique(y, **kw))
    check(x.unique(return_counts=True), y.unique(return_counts=True))
    m, n = both([[1, 2], [0, 1], [1, 2], [0, 0]], "int64")
    for dim in (0, 1):
        check(
            ng.unique(m, return_inverse=True, return_counts=True, dim=dim),
            torch.unique(n, return_inverse=True, return_counts=True, dim=dim),
        )
    f, g = both([NAN, 1.0, NAN, 0.5])
    check(ng.unique(f), torch.unique(g))
    e, h = both([], "int64")
    check(
        ng.unique(e, return_inverse=True, return_counts=True),
        torch.unique(h, return_inverse=True, return_counts=True),
    )
    k, q = both([[2.0, 1.0], [2.0, 3.0]])
    check(ng.unique(k, return_inverse=True), torch.unique(q, return_inverse=True))


def test_unique_consecutive_options():
    a = [1, 1, 2, 2, 3, 1, 1, 2]
    x, y = both(a, "int64")
    for kw in [
        {},
        {"return_inverse": True},
        {"return_counts": True},
        {"return_inverse": True, "return_counts": True},
    ]:
        check(ng.unique_consecutive(x, **kw), torch.unique_consecutive(y, **kw))
    m, n = both([[1, 2], [1, 2], [0, 1], [1, 2]], "int64")
    check(
        ng.unique_consecutive(m, return_inverse=True, return_counts=True, dim=0),
        torch.unique_consecutive(n, return_inverse=True, return_counts=True, dim=0),
    )


def test_isclose_special_values_and_errors():
    a = [1.0, INF, -INF, NAN, 1.0, 0.0, 1e-9]
    b = [1.0 + 1e-6, INF, INF, NAN, 1.1, 1e-9, 0.0]
    x, y = both(a)
    u, v = both(b)
    check(ng.isclose(x, u), torch.isclose(y, v))
    check(ng.isclose(x, u, equal_nan=True), torch.isclose(y, v, equal_nan=True))
    check(ng.isclose(x, u, rtol=0, atol=0), torch.isclose(y, v, rtol=0, atol=0))
    check(ng.isclose(x, u, rtol=0.2), torch.isclose(y, v, rtol=0.2))
    i, j = both([1, 2, 3], "int64")
    k, m = both([1, 3, 5], "int64")
    check(ng.isclose(i, k, atol=1), torch.isclose(j, m, atol=1))
    with pytest.raises(RuntimeError, match="did not match"):
        ng.isclose(x, u.float())
    with pytest.raises(RuntimeError, match="rtol"):
        ng.isclose(x, u, rtol=-1)
