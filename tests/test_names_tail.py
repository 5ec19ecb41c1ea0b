"""The tail of small PyTorch names (issue 27): Tensor flags and predicates, the in-place
variants, the top-level in-place functions, the small functions of ``ops/extras.py`` and
the global switches, each compared with PyTorch (values, gradients, errors). The ops'
forward/gradcheck/jvp/vmap checks are their op-database entries (``tests/_opdb_names.py``)."""

import warnings

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")


def _outcome(mod, fn):
    """``('ok', value as numpy or plain)`` or ``('raise', type name)`` of ``fn(mod)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = fn(mod)
    except Exception as e:  # (the exception is the result compared)
        return ("raise", type(e).__name__, str(e))
    if isinstance(v, (tuple, list)):
        return ("ok", [_plain(x) for x in v])
    return ("ok", _plain(v))


def _plain(v):
    if isinstance(v, (numbagrad.Tensor, torch.Tensor)):
        return (v.detach().numpy().tolist(), str(v.dtype).split(".")[-1], tuple(v.shape))
    if isinstance(v, (numbagrad.Size, torch.Size)):
        return tuple(v)
    return v


def _same(fn, messages=True):
    ours, theirs = _outcome(numbagrad, fn), _outcome(torch, fn)
    if not messages and ours[0] == "raise":
        ours, theirs = ours[:2], theirs[:2]
    assert ours == theirs


def _t(m, data, **kw):
    return m.tensor(data, **kw)


# -- Tensor flags and predicates --------------------------------------------------------------
FLAGS = [
    "is_cpu",
    "is_sparse",
    "is_sparse_csr",
    "is_quantized",
    "is_mkldnn",
    "is_nested",
    "is_mps",
    "is_xpu",
    "is_xla",
    "is_ipu",
    "is_vulkan",
    "is_mtia",
    "is_maia",
]


@pytest.mark.parametrize("flag", FLAGS)
def test_flags(flag):
    _same(lambda m: getattr(m.ones(2), flag))


def test_get_device_and_allclose():
    _same(lambda m: m.ones(2).get_device())
    _same(lambda m: _t(m, [1.0, 2.0]).allclose(_t(m, [1.0, 2.0 + 1e-9])))
    _same(lambda m: _t(m, [1.0, float("nan")]).allclose(_t(m, [1.0, float("nan")]), equal_nan=True))
    _same(lambda m: _t(m, [1.0, 2.0]).allclose(_t(m, [1.1, 2.0]), rtol=0.0, atol=0.01))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.is_nonzero(_t(m, [[0.5]])),
        lambda m: m.is_nonzero(_t(m, [0])),
        lambda m: m.is_nonzero(_t(m, [])),
        lambda m: m.is_nonzero(m.ones(2)),
        lambda m: _t(m, [3]).is_nonzero(),
        lambda m: m.is_same_size(m.ones(2, 3), m.zeros(2, 3)),
        lambda m: m.ones(2).is_same_size(m.ones(3)),
        lambda m: m.is_signed(_t(m, [True])),
        lambda m: m.is_signed(_t(m, [1])),
        lambda m: m.ones(2).is_signed(),
        lambda m: m.typename(m.ones(2, dtype=m.float64)),
        lambda m: m.typename(_t(m, [1])),
        lambda m: m.typename(3),
        lambda m: m.typename(len),
    ],
)
def test_predicates(fn):
    _same(fn)


def test_rsub_refuses_bools():
    _same(lambda m: m.rsub(m.tensor([True]), m.tensor([True])), messages=False)


def test_is_same_size_refuses_a_number():
    _same(lambda m: m.is_same_size(m.ones(2), 3), messages=False)


# -- in-place variants ------------------------------------------------------------------------
X = [[0.3, -1.2, 2.5], [0.7, 0.1, -0.4]]
POS = [[0.3, 1.2, 2.5], [0.7, 0.1, 0.4]]
UNIT = [[0.3, -0.2, 0.5], [0.7, 0.1, -0.4]]

INPLACE = [
    ("tril_", X, ()),
    ("triu_", X, (1,)),
    ("clamp_min_", X, (0.2,)),
    ("clamp_max_", X, (0.2,)),
    ("cumsum_", X, (1,)),
    ("cumprod_", X, (0,)),
    ("xlogy_", POS, (2.0,)),
    ("digamma_", POS, ()),
    ("lgamma_", POS, ()),
    ("erfinv_", UNIT, ()),
    ("erfc_", X, ()),
    ("sinc_", X, ()),
    ("i0_", X, ()),
    ("logit_", [[0.3, 0.2, 0.5]], ()),
    ("logit_", [[0.3, 0.0, 1.0]], (0.1,)),
    ("nan_to_num_", [[float("nan"), float("inf"), -float("inf")]], ()),
    ("atan2_", X, ("other",)),
    ("arctan2_", X, ("other",)),
    ("floor_divide_", X, (0.5,)),
    ("true_divide_", X, ("other",)),
    ("divide_", X, ("other",)),
    ("multiply_", X, ("other",)),
    ("subtract_", X, ("other",)),
    ("polygamma_", POS, (1,)),  # (series: agrees to 1e-9, checked below at 1e-8)
    ("mvlgamma_", [[2.3, 1.6]], (2,)),
    ("float_power_", POS, (2,)),
    ("ldexp_", X, ("other",)),
]


def _inplace_call(m, name, data, args, dtype="float64"):
    x = m.tensor(data, dtype=getattr(m, dtype))
    args = [m.tensor(POS, dtype=getattr(m, dtype)) if a == "other" else a for a in args]
    if name == "ldexp_":
        args = [m.tensor([[1, -2, 3], [0, 2, 1]])]
    out = getattr(x, name)(*args)
    assert out is x
    return x


@pytest.mark.parametrize(
    "name,data,args", INPLACE, ids=[f"{n}{i}" for i, (n, *_) in enumerate(INPLACE)]
)
def test_inplace_values(name, data, args):
    ours = _inplace_call(numbagrad, name, data, args).numpy()
    theirs = _inplace_call(torch, name, data, args).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(
    "name,data,args",
    [e for e in INPLACE if e[0] not in ("floor_divide_", "nan_to_num_")],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_inplace_gradients(name, data, args):
    """The gradient through an in-place variant on a non-leaf equals PyTorch's."""
    grads = []
    for m in (numbagrad, torch):
        leaf = m.tensor(data, dtype=m.float64, requires_grad=True)
        x = leaf * 1.0
        other = m.tensor(POS, dtype=m.float64)
        a = [other if v == "other" else v for v in args]
        if name == "ldexp_":  # (non-negative: PyTorch's gradient is 0 for negative ints)
            a = [m.tensor([[1, 2, 3], [0, 2, 1]])]
        getattr(x, name)(*a)
        (x * m.tensor(np.arange(x.numel()).reshape(x.shape) + 1.0)).sum().backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)


def test_float_power_refuses_float32():
    _same(lambda m: m.ones(2).float_power_(2))
    _same(lambda m: m.ones(2, dtype=m.float64).float_power_(2))


def test_inplace_result_that_cannot_be_cast():
    _same(lambda m: _t(m, [1, 2]).digamma_(), messages=False)


NO_GRAD_INPLACE = [
    "eq_",
    "ne_",
    "lt_",
    "le_",
    "gt_",
    "ge_",
    "greater_",
    "greater_equal_",
    "less_",
    "less_equal_",
    "not_equal_",
    "logical_and_",
    "logical_or_",
    "logical_xor_",
]


@pytest.mark.parametrize("name", NO_GRAD_INPLACE)
def test_comparison_inplace(name):
    _same(lambda m: getattr(_t(m, [0.0, 1.0, 2.0]), name)(_t(m, [1.0, 1.0, 0.0])))
    if not name.startswith("logical"):  # (PyTorch's logical ops take tensors only)
        _same(lambda m: getattr(_t(m, [0, 1, 2]), name)(1))
    # a non-leaf written with a comparison: the old value gets a zero gradient, as PyTorch
    grads = []
    for m in (numbagrad, torch):
        leaf = m.tensor([0.0, 1.0, 2.0], requires_grad=True)
        x = leaf * 2
        getattr(x, name)(m.tensor([0.0, 2.0, 0.0]))
        assert x.requires_grad
        (x * leaf).sum().backward()
        grads.append(leaf.grad.numpy())
        new = x.detach().numpy()
    if name.startswith("logical"):
        # PyTorch records no node for its in-place logical ops on float tensors, so the old
        # value's gradient passes through unchanged; here, as for its comparisons, the
        # overwritten value gets none: the gradient of ``x * leaf`` is the new ``x``
        np.testing.assert_allclose(grads[0], new)
        return
    np.testing.assert_allclose(grads[0], grads[1])


@pytest.mark.parametrize("name", ["bitwise_and_", "bitwise_or_", "bitwise_xor_"])
def test_bitwise_inplace(name):
    _same(lambda m: getattr(_t(m, [5, 3, 12]), name)(_t(m, [6, 1, 10])))
    _same(lambda m: getattr(_t(m, [True, False]), name)(_t(m, [True, True])))


def test_not_inplace():
    _same(lambda m: _t(m, [5, -3]).bitwise_not_())
    _same(lambda m: _t(m, [0.0, 2.0]).logical_not_())
    _same(lambda m: _t(m, [True, False]).logical_not_())


def test_leaf_refuses_inplace():
    _same(lambda m: m.ones(2, requires_grad=True).eq_(1))
    _same(lambda m: m.ones(2, requires_grad=True).tril_())


@pytest.mark.parametrize("name", ["addmm_", "addmv_", "baddbmm_", "addbmm_"])
def test_matrix_inplace(name):
    rng = np.random.default_rng(0)
    shapes = {
        "addmm_": ((2, 3), (2, 4), (4, 3)),
        "addmv_": ((2,), (2, 4), (4,)),
        "baddbmm_": ((2, 2, 3), (2, 2, 4), (2, 4, 3)),
        "addbmm_": ((2, 3), (5, 2, 4), (5, 4, 3)),
    }[name]
    arrays = [rng.standard_normal(s) for s in shapes]
    outs, grads = [], []
    for m in (numbagrad, torch):
        leaves = [m.tensor(a, requires_grad=True) for a in arrays]
        x = leaves[0] * 1.0
        getattr(x, name)(*leaves[1:], beta=0.5, alpha=2.0)
        x.sum().backward()
        outs.append(x.detach().numpy())
        grads.append([leaf.grad.numpy() for leaf in leaves])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10)
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_index_put_method_and_inplace():
    def f(m):
        x = m.zeros(3, 2)
        i = (m.tensor([0, 2, 0]),)
        y = x.index_put(i, m.ones(2), accumulate=True)
        x.index_put_((m.tensor([1]), m.tensor([1])), m.tensor(5.0))
        return y, x

    _same(f)
    _same(lambda m: m.zeros(3).index_put((m.tensor([0]),), m.ones(1, dtype=m.float64)))
    _same(lambda m: m.zeros(3).index_put_([m.tensor([0])], m.ones(1)))


# -- top-level in-place functions -------------------------------------------------------------
def test_torch_level_inplace_functions_are_torchs():
    from numbagrad._inplace_functions import TORCH_INPLACE

    for name in TORCH_INPLACE:
        assert callable(getattr(torch, name)), name
    for name in ("exp_", "relu_", "clamp_", "sinc_", "nan_to_num_", "xlogy_"):
        args = {"clamp_": (0.0, 1.0), "xlogy_": (2.0,)}.get(name, ())
        _same(lambda m, n=name, a=args: getattr(m, n)(_t(m, [-0.5, 0.5, 2.0], dtype=m.float64), *a))
    assert not [n for n in TORCH_INPLACE if not hasattr(numbagrad.Tensor, n)]
    x = numbagrad.tensor([1.0, 4.0])
    assert numbagrad.sqrt_(x) is x and x.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        numbagrad.exp_(3.0)


# -- functions --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.fliplr(m.ones(3)),
        lambda m: m.flipud(m.tensor(1.0)),
        lambda m: m.hsplit(m.tensor(1.0), 2),
        lambda m: m.hsplit(m.ones(3, 5), 2),
        lambda m: m.hsplit(m.ones(5), 2),
        lambda m: m.hsplit(m.ones(3, 5), 0),
        lambda m: m.vsplit(m.ones(3), 2),
        lambda m: m.dsplit(m.ones(2, 2), 2),
        lambda m: m.dsplit(m.ones(1, 1, 3), [1]),
        lambda m: m.diagflat(m.tensor([[1, 2], [3, 4]]), 1),
        lambda m: m.broadcast_shapes((2, 1), (3,)),
        lambda m: m.broadcast_shapes((2,), (3,)),
        lambda m: m.broadcast_shapes(2, (1, 2)),
        lambda m: m.broadcast_shapes(),
        lambda m: m.broadcast_shapes((-1,)),
        lambda m: m.isposinf(m.tensor([1.0, float("inf"), -float("inf"), float("nan")])),
        lambda m: m.isneginf(m.tensor([1.0, float("inf"), -float("inf"), float("nan")])),
        lambda m: m.isposinf(m.tensor([1, 2])),
        lambda m: m.isneginf(m.tensor([1j])),
        lambda m: m.rsub(m.tensor([1.0, 2.0]), 3, alpha=2),
        lambda m: m.rsub(m.tensor([1, 2]), m.tensor([5, 5])),
        lambda m: m.ldexp(m.tensor([1.0, 3.0]), m.tensor([2, -1])),
        lambda m: m.ldexp(m.tensor([1, 3]), m.tensor([2, 1])),
        lambda m: m.chain_matmul(m.ones(2, 3)),
        lambda m: m.chain_matmul(m.ones(3)),
        lambda m: m.chain_matmul(),
        lambda m: m.chain_matmul(m.ones(2, 3), m.ones(3, 4), m.ones(4, 1)),
        lambda m: m.addbmm(m.ones(2, 2), m.ones(3, 2, 4), m.ones(2, 4, 2)),
        lambda m: m.slice_scatter(m.zeros(4), m.ones(3), start=1, end=3),
        lambda m: m.slice_scatter(m.zeros(8, 2), m.ones(2, 2), start=6),
        lambda m: m.select_scatter(m.zeros(2, 3), m.ones(3), 0, 1),
        lambda m: m.select_scatter(m.zeros(2, 3), m.ones(2), 0, 1),
        lambda m: m.select_scatter(m.zeros(2, 3), m.ones(3), 0, 5),
        lambda m: m.diagonal_scatter(m.zeros(3, 4), m.ones(3), 1),
        lambda m: m.diagonal_scatter(m.zeros(3, 4), m.ones(2), 1),
        lambda m: m.diagonal_scatter(m.zeros(2, 3, 4), m.ones(4, 2), 0, 1, 0),
        lambda m: m.diagonal_scatter(m.zeros(3, 3), m.ones(0), 5),
        lambda m: m.index_put(m.zeros(3), (m.tensor([0, 0]),), m.tensor([1.0, 2.0]), True),
        lambda m: m.index_put(m.zeros(3), (m.tensor([0]),), m.ones(1, dtype=m.float64)),
    ],
)
def test_functions(fn):
    _same(fn)


def test_range():
    for args, kw in [
        ((1, 4), {}),
        ((0, 1, 0.3), {}),
        ((4, 1, -1), {}),
        ((1, 4), {"dtype": "int64"}),
        ((1.5, 3), {"dtype": "float64"}),
    ]:
        kw_ = dict(kw)
        out = []
        for m in (numbagrad, torch):
            k = {n: getattr(m, v) for n, v in kw_.items()}
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out.append(_plain(m.range(*args, **k)))
            assert any("torch.range is deprecated" in str(x.message) for x in w)
        assert out[0] == out[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # (PyTorch's range crashes its process on these: here they raise)
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            numbagrad.range(1, 4, 0)
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            numbagrad.range(4, 1)
        x = numbagrad.range(0, 2, requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_chain_matmul_warns_and_differentiates():
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        numbagrad.chain_matmul(numbagrad.ones(2, 2), numbagrad.ones(2, 2))
    rng = np.random.default_rng(1)
    mats = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 2))]
    grads = []
    for m in (numbagrad, torch):
        ts = [m.tensor(a, requires_grad=True) for a in mats]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.chain_matmul(*ts).sum().backward()
        grads.append([t.grad.numpy() for t in ts])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_split_views_share_memory():
    x = numbagrad.zeros(2, 4)
    a, _ = numbagrad.hsplit(x, 2)
    a[0, 0] = 5.0
    assert x[0, 0].item() == 5.0


# -- global switches --------------------------------------------------------------------------
@pytest.fixture
def restore_switches():
    yield
    numbagrad.use_deterministic_algorithms(False)
    numbagrad.set_float32_matmul_precision("highest")
    numbagrad.set_anomaly_enabled(False)
    torch.use_deterministic_algorithms(False)
    torch.set_float32_matmul_precision("highest")
    torch.set_anomaly_enabled(False)


def _switch_state(m):
    return (
        m.are_deterministic_algorithms_enabled(),
        m.is_deterministic_algorithms_warn_only_enabled(),
        m.get_deterministic_debug_mode(),
    )


@pytest.mark.usefixtures("restore_switches")
def test_deterministic_switches():
    for m in (numbagrad, torch):
        assert _switch_state(m) == (False, False, 0)
    steps = [
        lambda m: m.use_deterministic_algorithms(True),
        lambda m: m.use_deterministic_algorithms(True, warn_only=True),
        lambda m: m.set_deterministic_debug_mode("error"),
        lambda m: m.set_deterministic_debug_mode(1),
        lambda m: m.set_deterministic_debug_mode("default"),
    ]
    for step in steps:
        step(numbagrad)
        step(torch)
        assert _switch_state(numbagrad) == _switch_state(torch)
    for bad in (
        lambda m: m.set_deterministic_debug_mode("bad"),
        lambda m: m.set_deterministic_debug_mode(5),
        lambda m: m.set_deterministic_debug_mode(1.0),
        lambda m: m.use_deterministic_algorithms(1),
        lambda m: m.use_deterministic_algorithms(True, warn_only=1),
    ):
        _same(bad)


def test_deterministic_alert():
    from numbagrad.kernels import determinism

    determinism.alert("quiet")  # off: nothing
    try:
        numbagrad.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
            determinism.alert("add_at_kernel")
        numbagrad.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="does not have a deterministic implementation"):
            determinism.alert("add_at_kernel")
        # the CPU ops are deterministic: accumulation into repeated indices still runs
        x = numbagrad.zeros(3).index_put((numbagrad.tensor([0, 0]),), numbagrad.ones(2), True)
        assert x.tolist() == [2.0, 0.0, 0.0]
    finally:
        numbagrad.use_deterministic_algorithms(False)


@pytest.mark.usefixtures("restore_switches")
def test_float32_matmul_precision():
    for value in ("high", "medium", "highest"):
        numbagrad.set_float32_matmul_precision(value)
        torch.set_float32_matmul_precision(value)
        assert numbagrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        numbagrad.set_float32_matmul_precision("bad")
    assert numbagrad.get_float32_matmul_precision() == "highest"
    _same(lambda m: m.set_float32_matmul_precision(3))


@pytest.mark.usefixtures("restore_switches")
def test_anomaly_switch():
    for m in (numbagrad, torch):
        assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
        m.set_anomaly_enabled(True, False)
        assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        m.set_anomaly_enabled(False)
        assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
    assert numbagrad.autograd.is_anomaly_enabled is numbagrad.is_anomaly_enabled
    _same(lambda m: m.set_anomaly_enabled(True, 1))
    numbagrad.set_anomaly_enabled(True)
    try:
        x = numbagrad.tensor([0.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="returned nan values"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                (x.sqrt() * 0).sum().backward()
    finally:
        numbagrad.set_anomaly_enabled(False)


# -- in-place metadata changes ----------------------------------------------------------------
METADATA = [
    ("t_", ()),
    ("transpose_", (0, 2)),
    ("swapaxes_", (1, -1)),
    ("swapdims_", (0, 1)),
    ("squeeze_", ()),
    ("squeeze_", (1,)),
    ("unsqueeze_", (-1,)),
]


@pytest.mark.parametrize("name,args", METADATA, ids=[f"{n}{a}" for n, a in METADATA])
def test_metadata_inplace(name, args):
    shape = (2, 3) if name == "t_" else (2, 1, 3)
    rng = np.random.default_rng(3)
    data = rng.standard_normal(shape)
    results = []
    for m in (numbagrad, torch):
        leaf = m.tensor(data, requires_grad=True)
        x = leaf * 2.0
        v0 = x._version
        out = getattr(x, name)(*args)
        assert out is x and x._version == v0 + 1
        x.mul_(m.tensor(np.arange(x.numel()).reshape(tuple(x.shape)) + 1.0))  # after it
        (x * x).sum().backward()
        results.append((tuple(x.shape), x.detach().numpy(), leaf.grad.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1])
    np.testing.assert_allclose(results[0][2], results[1][2])


def test_metadata_inplace_memory_and_views():
    for m in (numbagrad, torch):
        x = m.zeros(2, 3)
        row = x[0]
        x.t_()
        row[1] = 5.0  # an earlier view still writes into the same memory
        assert x.shape == (3, 2) and x[1, 0].item() == 5.0
        base = m.zeros(2, 3)
        v = base[1]
        v.unsqueeze_(0)
        v.add_(1.0)  # a view changed in place still writes through to its base
        assert v.shape == (1, 3) and base.sum().item() == 3.0
    _same(lambda m: m.ones(2, requires_grad=True).t_())
    _same(lambda m: m.ones(2, 3, 4).t_(), messages=False)
    _same(lambda m: m.ones(2, 3).transpose_(0, 5), messages=False)
    with pytest.raises(NotImplementedError, match="unsqueeze_"):
        numbagrad.func.vmap(lambda r: r.clone().unsqueeze_(0))(numbagrad.ones(2, 3))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.unravel_index(m.tensor([4, 1]), (2, 3)),
        lambda m: m.unravel_index(m.tensor(4), (2, 3)),
        lambda m: m.unravel_index(m.tensor([6, -1]), (2, 3)),
        lambda m: m.unravel_index(m.tensor([1]), 5),
        lambda m: m.unravel_index(m.tensor([1]), ()),
        lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)),
        lambda m: m.unravel_index(m.tensor([1]), (2, -3)),
        lambda m: m.frobenius_norm(m.ones(2, 3), (0, 1)),
        lambda m: m.frobenius_norm(m.ones(2, 3), (1,), True),
        lambda m: m.frobenius_norm(m.ones(2, 3, 2), (0, 1, 2)),
        lambda m: m.nuclear_norm(m.eye(3)),
        lambda m: m.nuclear_norm(m.ones(2, 3), keepdim=True),
        lambda m: m.nuclear_norm(m.ones(2, 3, 2), (0, 2), True),
    ],
)
def test_unravel_index_and_norms(fn):
    _same(fn, messages=False)


def test_deprecated_norms_warn():
    for name, args in (("frobenius_norm", ((0, 1),)), ("nuclear_norm", ())):
        with pytest.warns(UserWarning, match=f"at::{name} is deprecated"):
            getattr(numbagrad, name)(numbagrad.ones(2, 2), *args)


GRADIENT_CASES = [
    {},
    {"spacing": 2.0},
    {"spacing": [2.0, 0.5]},
    {"dim": 1, "edge_order": 2},
    {"dim": [0], "spacing": [3.0], "edge_order": 2},
    {"spacing": "coords", "dim": 1},
    {"spacing": "coords", "dim": 1, "edge_order": 2},
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=str)
def test_gradient_against_torch(case):
    rng = np.random.default_rng(5)
    f = rng.standard_normal((4, 5))
    xs = np.cumsum(rng.random(5) + 0.1)
    outs, grads = [], []
    for m in (numbagrad, torch):
        kw = dict(case)
        if kw.get("spacing") == "coords":
            kw["spacing"] = (m.tensor(xs),)
        t = m.tensor(f, requires_grad=True)
        res = m.gradient(t, **kw)
        sum(r.sum() * (i + 1) for i, r in enumerate(res)).backward()
        outs.append([r.detach().numpy() for r in res])
        grads.append(t.grad.numpy())
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.gradient(m.ones(2), edge_order=2),
        lambda m: m.gradient(m.ones(3), edge_order=3),
        lambda m: m.gradient(m.ones(3, 3), spacing=[1.0, 2.0, 3.0]),
        lambda m: m.gradient(m.ones(3, 3), spacing=[1.0, 2.0], dim=0),
        lambda m: m.gradient(m.tensor([1, 4, 9])),
        lambda m: m.gradient(m.tensor([1.0, 4.0]), spacing=m.tensor(2.0)),
    ],
)
def test_gradient_edges_and_errors(fn):
    _same(fn)
