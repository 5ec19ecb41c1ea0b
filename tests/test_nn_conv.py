"""Convolution, pooling, padding, normalisation and pixel-shuffle layers against PyTorch:
values, gradients, double backward, ``state_dict`` round trips, ``repr``, running
statistics, errors, the transforms (``vmap`` per-example gradients, ``jvp``) and
Hypothesis over shapes, strides, padding, dilation and groups. The functionals' forward,
gradcheck, gradgradcheck, JVP and vmap checks run from the op database
(``tests/_opdb_conv.py``)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numbagrad
import numbagrad.nn.functional as F
from numbagrad import nn

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-10, 1e-10


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(ours, theirs, rtol=RTOL, atol=ATOL):
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _pair(shape, seed=0, dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (
        numbagrad.tensor(x.copy(), requires_grad=True),
        torch.tensor(x.copy(), requires_grad=True),
    )


def _to_torch_module(ours, theirs):
    theirs.load_state_dict(
        {k: torch.tensor(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )


def _check_module(ours, theirs, shape, seed=0, rtol=RTOL, atol=ATOL, call=None, dtype=np.float64):
    """Same weights (ours -> theirs), same input: outputs, input and parameter gradients."""
    _to_torch_module(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    xo, xt = _pair(shape, seed, dtype)
    yo = ours(xo) if call is None else call(ours, xo)
    yt = theirs(xt) if call is None else call(theirs, xt)
    _close(yo, yt, rtol, atol)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape)).astype(dtype)
    yo.backward(numbagrad.tensor(g))
    yt.backward(torch.tensor(g))
    _close(xo.grad, xt.grad, rtol, atol)
    for (_, po), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        _close(po.grad, pt.grad, rtol, atol)
    return yo, yt


# -- convolutions ------------------------------------------------------------------------
CONV_CASES = [
    (1, dict(in_channels=3, out_channels=4, kernel_size=3), (2, 3, 9)),
    (
        1,
        dict(in_channels=4, out_channels=6, kernel_size=2, stride=2, padding=1, groups=2),
        (2, 4, 8),
    ),
    (
        1,
        dict(
            in_channels=2,
            out_channels=2,
            kernel_size=3,
            padding="same",
            dilation=2,
            padding_mode="circular",
        ),
        (3, 2, 7),
    ),
    (
        1,
        dict(in_channels=3, out_channels=3, kernel_size=4, padding="same", bias=False, groups=3),
        (2, 3, 6),
    ),
    (2, dict(in_channels=1, out_channels=4, kernel_size=3), (2, 1, 6, 6)),
    (
        2,
        dict(
            in_channels=2,
            out_channels=4,
            kernel_size=(3, 2),
            stride=(2, 1),
            padding=(1, 0),
            dilation=(1, 2),
        ),
        (2, 2, 7, 6),
    ),
    (
        2,
        dict(
            in_channels=3,
            out_channels=3,
            kernel_size=3,
            padding=1,
            padding_mode="reflect",
            groups=3,
        ),
        (1, 3, 5, 5),
    ),
    (
        2,
        dict(in_channels=2, out_channels=2, kernel_size=3, padding=2, padding_mode="replicate"),
        (2, 5, 4),
    ),
    (
        2,
        dict(in_channels=2, out_channels=4, kernel_size=2, padding="valid", bias=False),
        (2, 2, 4, 3),
    ),
    (
        3,
        dict(in_channels=2, out_channels=3, kernel_size=2, stride=(1, 2, 1), padding=1),
        (1, 2, 3, 4, 3),
    ),
    (
        3,
        dict(in_channels=2, out_channels=2, kernel_size=3, padding="same", padding_mode="circular"),
        (1, 2, 3, 3, 4),
    ),
]


@pytest.mark.parametrize("k,kw,shape", CONV_CASES)
def test_conv_modules_match_torch(k, kw, shape):
    numbagrad.manual_seed(0)
    ours = getattr(nn, f"Conv{k}d")(**kw).double()
    theirs = getattr(torch.nn, f"Conv{k}d")(**kw).double()
    _check_module(ours, theirs, shape)


TRANSPOSE_CASES = [
    (1, dict(in_channels=3, out_channels=2, kernel_size=3), (2, 3, 5), None),
    (
        1,
        dict(in_channels=4, out_channels=6, kernel_size=4, stride=2, padding=1, groups=2),
        (2, 4, 5),
        None,
    ),
    (
        2,
        dict(
            in_channels=2,
            out_channels=3,
            kernel_size=3,
            stride=2,
            padding=1,
            output_padding=1,
            dilation=1,
        ),
        (1, 2, 3, 4),
        None,
    ),
    (
        2,
        dict(
            in_channels=2,
            out_channels=2,
            kernel_size=(2, 3),
            stride=(2, 3),
            dilation=(2, 1),
            bias=False,
        ),
        (2, 2, 3, 3),
        None,
    ),
    (
        2,
        dict(in_channels=2, out_channels=3, kernel_size=3, stride=2, padding=1),
        (1, 2, 4, 4),
        (8, 8),
    ),
    (3, dict(in_channels=2, out_channels=1, kernel_size=2, stride=2), (1, 2, 2, 3, 2), None),
]


@pytest.mark.parametrize("k,kw,shape,size", TRANSPOSE_CASES)
def test_conv_transpose_modules_match_torch(k, kw, shape, size):
    numbagrad.manual_seed(0)
    ours = getattr(nn, f"ConvTranspose{k}d")(**kw).double()
    theirs = getattr(torch.nn, f"ConvTranspose{k}d")(**kw).double()
    call = None if size is None else (lambda m, x: m(x, output_size=size))
    _check_module(ours, theirs, shape, call=call)


def test_conv_float32_matches_torch():
    ours = nn.Conv2d(3, 8, 3, padding=1)
    theirs = torch.nn.Conv2d(3, 8, 3, padding=1)
    _check_module(ours, theirs, (2, 3, 10, 9), rtol=1e-4, atol=1e-5, dtype=np.float32)
    assert ours.weight.dtype == numbagrad.float32
    assert ours(numbagrad.zeros(1, 3, 4, 4)).dtype == numbagrad.float32


def test_conv_unbatched_input():
    xo, xt = _pair((3, 8))
    w = np.random.default_rng(1).standard_normal((2, 3, 3))
    _close(
        F.conv1d(xo, numbagrad.tensor(w), padding=1),
        torch.nn.functional.conv1d(xt, torch.tensor(w), padding=1),
    )


def test_conv_init_bounds_and_state_dict_round_trip():
    numbagrad.manual_seed(0)
    conv = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)  # kaiming_uniform(a=sqrt(5)) and the bias: both 1/sqrt(fan_in)
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    theirs = torch.nn.Conv2d(16, 32, 3)
    _to_torch_module(conv, theirs)
    back = nn.Conv2d(16, 32, 3)
    back.load_state_dict(
        {k: numbagrad.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    )
    _close(back.weight, theirs.weight, 0, 0)
    assert list(back.state_dict()) == ["weight", "bias"]


def test_conv_transpose_weight_shape_and_repr():
    ours = nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2, dilation=2)
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2, dilation=2)
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape) == (4, 3, 3, 3)
    assert repr(ours) == repr(theirs)


def test_module_paths():
    from numbagrad.nn.modules.batchnorm import BatchNorm2d
    from numbagrad.nn.modules.conv import Conv2d
    from numbagrad.nn.modules.normalization import GroupNorm, LayerNorm
    from numbagrad.nn.modules.padding import ConstantPad1d
    from numbagrad.nn.modules.pooling import MaxPool2d

    assert Conv2d is nn.Conv2d and BatchNorm2d is nn.BatchNorm2d and MaxPool2d is nn.MaxPool2d
    assert ConstantPad1d is nn.ConstantPad1d and GroupNorm is nn.GroupNorm
    assert LayerNorm is nn.LayerNorm


def test_conv_double_backward_matches_torch():
    """Double backward through a convolution (a PINN differentiates twice)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 6, 5))
    w = rng.standard_normal((3, 2, 3, 3))
    results = []
    for m in (numbagrad, torch):
        xt = m.tensor(x, requires_grad=True)
        wt = m.tensor(w, requires_grad=True)
        y = m.nn.functional.conv2d(xt, wt, stride=(2, 1), padding=1)
        (gx, gw) = m.autograd.grad((y.tanh() ** 2).sum(), (xt, wt), create_graph=True)
        (gx.pow(2).sum() + (gw * gw).sum()).backward()
        results.append((xt.grad, wt.grad))
    for a, b in zip(*results):
        _close(a, b, 1e-9, 1e-9)


def test_conv_vmap_per_example_gradients():
    from numbagrad.func import functional_call, grad, vmap

    numbagrad.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 3, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(12, 2)
    ).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = numbagrad.randn(4, 1, 6, 6, dtype=numbagrad.float64)
    y = numbagrad.tensor([0, 1, 1, 0])

    def loss(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(4):
        one = grad(loss)(params, x[i], y[i])
        for k in params:
            _close(per[k][i], one[k], 1e-12, 1e-12)


def test_conv_jvp_matches_torch():
    from numbagrad.func import jvp

    rng = np.random.default_rng(5)
    x, tx = rng.standard_normal((2, 3, 7)), rng.standard_normal((2, 3, 7))
    w, tw = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3, 3))
    out, tan = jvp(
        lambda a, b: F.conv1d(a, b, padding=2, dilation=2),
        (numbagrad.tensor(x), numbagrad.tensor(w)),
        (numbagrad.tensor(tx), numbagrad.tensor(tw)),
    )
    tout, ttan = torch.func.jvp(
        lambda a, b: torch.nn.functional.conv1d(a, b, padding=2, dilation=2),
        (torch.tensor(x), torch.tensor(w)),
        (torch.tensor(tx), torch.tensor(tw)),
    )
    _close(out, tout)
    _close(tan, ttan)


@pytest.mark.parametrize(
    "fn,args,match",
    [
        ("conv2d", ((1, 3, 5, 5), (4, 2, 3, 3)), "expected input"),
        ("conv2d", ((1, 2, 2, 2), (4, 2, 3, 3)), "Kernel size can't be greater"),
        ("conv1d", ((1, 2, 5), (4, 2, 3, 3)), "weight should have"),
        ("conv2d", ((5, 5), (4, 2, 3, 3)), "Expected 3D"),
    ],
)
def test_conv_errors_match_torch(fn, args, match):
    x, w = (np.zeros(s) for s in args)
    with pytest.raises(RuntimeError, match=match):
        getattr(F, fn)(numbagrad.tensor(x), numbagrad.tensor(w))
    with pytest.raises(RuntimeError):
        getattr(torch.nn.functional, fn)(torch.tensor(x), torch.tensor(w))


def test_conv_argument_errors():
    x, w = numbagrad.zeros(1, 2, 5, 5), numbagrad.zeros(4, 2, 3, 3)
    with pytest.raises(RuntimeError, match="strided"):
        F.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string"):
        F.conv2d(x, w, padding="full")
    with pytest.raises(RuntimeError, match="should be the same"):
        F.conv2d(x.double(), w)
    with pytest.raises(RuntimeError, match="groups"):
        F.conv2d(x, numbagrad.zeros(3, 1, 3, 3), groups=2)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(2, 4, 3, padding_mode="mirror")
    with pytest.raises(RuntimeError, match="output padding"):
        F.conv_transpose1d(
            numbagrad.zeros(1, 2, 4), numbagrad.zeros(2, 1, 3), stride=2, output_padding=2
        )
    with pytest.raises(ValueError, match="output size"):
        nn.ConvTranspose2d(2, 2, 3, stride=2)(numbagrad.zeros(1, 2, 4, 4), output_size=(12, 12))


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(1, 3),
    n=st.integers(1, 2),
    cpg=st.integers(1, 2),
    groups=st.integers(1, 3),
    opg=st.integers(1, 2),
    size=st.integers(3, 6),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 3),
    padding=st.integers(0, 2),
    dilation=st.integers(1, 2),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_conv_hypothesis(
    k, n, cpg, groups, opg, size, kernel, stride, padding, dilation, bias, seed
):
    if dilation * (kernel - 1) + 1 > size + 2 * padding:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, cpg * groups) + (size,) * k)
    w = rng.standard_normal((opg * groups, cpg) + (kernel,) * k)
    b = rng.standard_normal(opg * groups) if bias else None
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    outs, grads = [], []
    for m in (numbagrad, torch):
        xt, wt = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        bt = None if b is None else m.tensor(b)
        y = getattr(m.nn.functional, f"conv{k}d")(xt, wt, bt, **kw)
        (y * y).sum().backward()
        outs.append(y)
        grads.append((xt.grad, wt.grad))
    _close(outs[0], outs[1], 1e-9, 1e-9)
    for a, c in zip(*grads):
        _close(a, c, 1e-9, 1e-9)
    # the transposed convolution of the same geometry, against torch
    op = rng.integers(0, max(stride, dilation)) if max(stride, dilation) > 1 else 0
    wt_np = rng.standard_normal((cpg * groups, opg) + (kernel,) * k)
    ys = [
        getattr(m.nn.functional, f"conv_transpose{k}d")(
            m.tensor(x), m.tensor(wt_np), None, stride, padding, int(op), groups, dilation
        )
        if (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + op + 1 > 0
        else None
        for m in (numbagrad, torch)
    ]
    if ys[0] is not None:
        _close(ys[0], ys[1], 1e-9, 1e-9)


# -- unfold / fold ------------------------------------------------------------------------
def test_unfold_fold_modules_match_torch():
    for ours, theirs, shape in [
        (
            nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)),
            torch.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)),
            (2, 3, 6, 7),
        ),
        (nn.Fold((5, 4), 2, stride=1), torch.nn.Fold((5, 4), 2, stride=1), (2, 8, 12)),
        (nn.Fold(4, 2, padding=1, stride=2), torch.nn.Fold(4, 2, padding=1, stride=2), (12, 9)),
    ]:
        assert repr(ours) == repr(theirs)
        xo, xt = _pair(shape)
        yo, yt = ours(xo), theirs(xt)
        _close(yo, yt)
        yo.sum().backward()
        yt.sum().backward()
        _close(xo.grad, xt.grad)


def test_unfold_fold_errors():
    with pytest.raises(NotImplementedError, match="3D or 4D"):
        F.unfold(numbagrad.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(numbagrad.zeros(1, 4, 5), (3, 3), 2)
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(numbagrad.zeros(1, 5, 4), (3, 3), 2)


# -- pooling ------------------------------------------------------------------------------
POOL_CASES = [
    ("MaxPool1d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), (2, 3, 8)),
    ("MaxPool1d", dict(kernel_size=2, dilation=2), (3, 9)),
    ("MaxPool2d", dict(kernel_size=2), (2, 3, 6, 5)),
    (
        "MaxPool2d",
        dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), ceil_mode=True),
        (1, 2, 7, 8),
    ),
    ("MaxPool3d", dict(kernel_size=2, stride=1, padding=1), (1, 2, 3, 4, 3)),
    (
        "AvgPool1d",
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        (2, 3, 8),
    ),
    ("AvgPool2d", dict(kernel_size=3, stride=2, padding=1), (2, 3, 7, 6)),
    (
        "AvgPool2d",
        dict(kernel_size=(2, 3), stride=1, padding=(1, 1), count_include_pad=False, ceil_mode=True),
        (1, 2, 5, 5),
    ),
    ("AvgPool2d", dict(kernel_size=3, padding=1, divisor_override=2), (1, 2, 6, 6)),
    (
        "AvgPool3d",
        dict(kernel_size=2, stride=(1, 2, 2), padding=1, ceil_mode=True),
        (1, 2, 3, 5, 4),
    ),
    ("AdaptiveAvgPool1d", dict(output_size=4), (2, 3, 9)),
    ("AdaptiveAvgPool2d", dict(output_size=(3, None)), (2, 3, 7, 5)),
    ("AdaptiveAvgPool3d", dict(output_size=(2, 3, 1)), (1, 2, 5, 4, 3)),
    ("AdaptiveMaxPool1d", dict(output_size=4), (2, 3, 9)),
    ("AdaptiveMaxPool2d", dict(output_size=(3, 2)), (2, 3, 7, 5)),
    ("AdaptiveMaxPool3d", dict(output_size=2), (1, 2, 5, 4, 3)),
    ("LPPool1d", dict(norm_type=2, kernel_size=3, stride=2, ceil_mode=True), (2, 3, 8)),
    ("LPPool2d", dict(norm_type=1.5, kernel_size=(2, 3)), (1, 2, 6, 6)),
    ("LPPool3d", dict(norm_type=float("inf"), kernel_size=2), (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("name,kw,shape", POOL_CASES)
def test_pool_modules_match_torch(name, kw, shape):
    _check_module(getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw), shape)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_pool_indices_match_torch(k):
    xo, xt = _pair((2, 2) + (6,) * k)
    fn = f"max_pool{k}d"
    yo, io = getattr(F, fn)(xo, 3, 2, 1, return_indices=True, ceil_mode=True)
    yt, it = getattr(torch.nn.functional, fn)(xt, 3, 2, 1, return_indices=True, ceil_mode=True)
    _close(yo, yt)
    assert io.dtype == numbagrad.int64
    np.testing.assert_array_equal(io.numpy(), it.numpy())
    yo, io = getattr(F, f"adaptive_max_pool{k}d")(xo, 4, return_indices=True)
    yt, it = getattr(torch.nn.functional, f"adaptive_max_pool{k}d")(xt, 4, return_indices=True)
    np.testing.assert_array_equal(io.numpy(), it.numpy())


def test_max_pool_nan_and_ties_like_torch():
    x = np.array([[[1.0, np.nan, 3.0, np.nan, 2.0, 2.0, -np.inf, -np.inf]]])
    for kw in (dict(kernel_size=2), dict(kernel_size=4, stride=1)):
        yo, io = F.max_pool1d(numbagrad.tensor(x), return_indices=True, **kw)
        yt, it = torch.nn.functional.max_pool1d(torch.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(yo.numpy(), yt.numpy())
        np.testing.assert_array_equal(io.numpy(), it.numpy())


def test_max_pool_double_backward_matches_torch():
    results = []
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 5))
    for m in (numbagrad, torch):
        xt = m.tensor(x, requires_grad=True)
        y = m.nn.functional.max_pool2d(xt * xt, 2, 1)
        (g,) = m.autograd.grad(y.sum(), xt, create_graph=True)
        (g * g).sum().backward()
        results.append(xt.grad)
    _close(*results)


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(numbagrad.zeros(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(numbagrad.zeros(1, 1, 1, 1), 2)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D"):
        F.max_pool1d(numbagrad.zeros(1, 1, 1, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.avg_pool2d(numbagrad.zeros(1, 1, 4, 4), 2, padding=2)


def test_pool_reprs_match_torch():
    for name, kw in [
        ("MaxPool2d", dict(kernel_size=2)),
        ("MaxPool1d", dict(kernel_size=3, stride=1, return_indices=True)),
        ("AvgPool1d", dict(kernel_size=2)),
        ("AvgPool2d", dict(kernel_size=3, stride=1, padding=1)),
        ("AvgPool3d", dict(kernel_size=2, divisor_override=3)),
        ("AdaptiveAvgPool2d", dict(output_size=(1, None))),
        ("AdaptiveMaxPool1d", dict(output_size=3)),
    ]:
        assert repr(getattr(nn, name)(**kw)) == repr(getattr(torch.nn, name)(**kw))


# -- padding ------------------------------------------------------------------------------
PAD_CASES = [
    ("ConstantPad1d", ((1, 2), 3.5), (2, 3, 4)),
    ("ConstantPad2d", (2, -1.0), (2, 3, 3)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), (1, 2, 2, 2, 2)),
    ("ZeroPad1d", ((2, 0),), (2, 3)),
    ("ZeroPad2d", ((1, 2, 0, 1),), (1, 2, 3, 3)),
    ("ZeroPad3d", (1,), (1, 2, 2, 2)),
    ("ReflectionPad1d", (2,), (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 2, 1),), (1, 2, 4, 4)),
    ("ReflectionPad3d", (1,), (1, 1, 3, 3, 3)),
    ("ReplicationPad1d", ((3, 1),), (2, 3, 4)),
    ("ReplicationPad2d", (2,), (2, 3, 3)),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),), (1, 2, 2, 3, 2)),
    ("CircularPad1d", (2,), (2, 3, 4)),
    ("CircularPad2d", ((1, 2, 2, 1),), (1, 2, 3, 3)),
    ("CircularPad3d", (1,), (1, 1, 2, 3, 2)),
]


@pytest.mark.parametrize("name,args,shape", PAD_CASES)
def test_padding_modules_match_torch(name, args, shape):
    _check_module(getattr(nn, name)(*args), getattr(torch.nn, name)(*args), shape)


# -- normalisation ------------------------------------------------------------------------
BN_CASES = [
    (1, dict(num_features=3), (4, 3)),
    (1, dict(num_features=3, momentum=None), (4, 3, 5)),
    (2, dict(num_features=2, affine=False), (3, 2, 4, 3)),
    (2, dict(num_features=2, track_running_stats=False), (3, 2, 2, 2)),
    (3, dict(num_features=2, momentum=0.3, eps=1e-3, bias=False), (2, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("k,kw,shape", BN_CASES)
def test_batch_norm_modules_match_torch(k, kw, shape):
    ours = getattr(nn, f"BatchNorm{k}d")(**kw).double()
    theirs = getattr(torch.nn, f"BatchNorm{k}d")(**kw).double()
    for step in range(3):  # train: batch statistics, running updates (momentum None: average)
        _check_module(ours, theirs, shape, seed=step)
        ours.zero_grad()
        theirs.zero_grad()
        for a, b in zip(ours.state_dict().values(), theirs.state_dict().values()):
            _close(a, b, 1e-12, 1e-12)
    ours.eval()
    theirs.eval()
    _check_module(ours, theirs, shape, seed=7)
    # round trip back from torch, buffers included
    fresh = getattr(nn, f"BatchNorm{k}d")(**kw).double()
    fresh.load_state_dict(
        {key: numbagrad.tensor(v.detach().numpy()) for key, v in theirs.state_dict().items()}
    )
    for a, b in zip(fresh.state_dict().values(), theirs.state_dict().values()):
        _close(a, b, 0, 0)


def test_batch_norm_functional_and_double_backward_match_torch():
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    w = np.random.default_rng(1).standard_normal(3)
    results = []
    for m in (numbagrad, torch):
        xt, wt = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        rm, rv = m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)
        y = m.nn.functional.batch_norm(xt, rm, rv, wt, None, True, 0.2, 1e-4)
        (gx,) = m.autograd.grad((y**3).sum(), xt, create_graph=True)
        (gx * gx).sum().backward()
        results.append((y, rm, rv, xt.grad, wt.grad))
    for a, b in zip(*results):
        _close(a, b, 1e-9, 1e-9)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(numbagrad.zeros(1, 3))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(numbagrad.zeros(2, 3, 4))


@pytest.mark.parametrize(
    "name,kw,shape",
    [
        ("GroupNorm", dict(num_groups=2, num_channels=4), (3, 4, 5)),
        ("GroupNorm", dict(num_groups=3, num_channels=3, affine=False), (2, 3, 2, 2)),
        ("InstanceNorm1d", dict(num_features=3), (2, 3, 6)),
        ("InstanceNorm1d", dict(num_features=3, affine=True), (3, 6)),
        ("InstanceNorm2d", dict(num_features=2, track_running_stats=True), (2, 2, 3, 4)),
        ("InstanceNorm3d", dict(num_features=2, affine=True), (1, 2, 2, 3, 2)),
        ("LocalResponseNorm", dict(size=3), (2, 5, 4)),
        ("LocalResponseNorm", dict(size=2, alpha=0.1, beta=0.5, k=2.0), (1, 4, 3, 3)),
        ("RMSNorm", dict(normalized_shape=4), (3, 4)),
        ("RMSNorm", dict(normalized_shape=(2, 3), eps=1e-3), (2, 2, 3)),
    ],
)
def test_norm_modules_match_torch(name, kw, shape):
    ours = getattr(nn, name)(**kw).double()
    theirs = getattr(torch.nn, name)(**kw).double()
    _check_module(ours, theirs, shape)
    for a, b in zip(ours.state_dict().values(), theirs.state_dict().values()):
        _close(a, b, 1e-12, 1e-12)
    if name == "InstanceNorm2d":  # eval: the running statistics normalise
        ours.eval()
        theirs.eval()
        _check_module(ours, theirs, shape, seed=3)


def test_rms_norm_float32_default_eps():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32) * 1e-4
    _close(
        F.rms_norm(numbagrad.tensor(x), (4,)),
        torch.nn.functional.rms_norm(torch.tensor(x), (4,)),
        1e-5,
        1e-7,
    )


# -- pixel shuffle ------------------------------------------------------------------------
def test_pixel_shuffle_match_torch():
    _check_module(nn.PixelShuffle(2), torch.nn.PixelShuffle(2), (2, 8, 3, 2))
    _check_module(nn.PixelUnshuffle(3), torch.nn.PixelUnshuffle(3), (1, 2, 6, 3))
    _check_module(nn.PixelShuffle(2), torch.nn.PixelShuffle(2), (4, 2, 3))
    with pytest.raises(RuntimeError, match="divisible"):
        F.pixel_shuffle(numbagrad.zeros(1, 3, 2, 2), 2)


# -- a whole CNN --------------------------------------------------------------------------
def test_mnist_style_training_step_matches_torch():
    """The pytorch/examples MNIST CNN (without dropout), same weights: two SGD steps."""

    def make(m):
        nn_ = m.nn
        return nn_.Sequential(
            nn_.Conv2d(1, 4, 3, 1),
            nn_.ReLU(),
            nn_.Conv2d(4, 8, 3, 1),
            nn_.ReLU(),
            nn_.MaxPool2d(2),
            nn_.Flatten(),
            nn_.Linear(8 * 4 * 4, 10),
            nn_.LogSoftmax(dim=1),
        ).double()

    ours, theirs = make(numbagrad), make(torch)
    _to_torch_module(ours, theirs)
    x = np.random.default_rng(0).standard_normal((5, 1, 12, 12))
    y = np.array([1, 2, 3, 4, 5])
    for m, model in ((numbagrad, ours), (torch, theirs)):
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            m.nn.functional.nll_loss(model(m.tensor(x)), m.tensor(y)).backward()
            opt.step()
    for a, b in zip(ours.state_dict().values(), theirs.state_dict().values()):
        _close(a, b, 1e-10, 1e-10)


# -- resampling ---------------------------------------------------------------------------
INTERP_CASES = [
    ("nearest", (2, 3, 5), dict(scale_factor=2)),
    ("nearest", (1, 2, 4, 5), dict(scale_factor=1.7)),
    ("nearest", (1, 1, 3, 3, 3), dict(size=(2, 5, 4))),
    ("nearest-exact", (1, 2, 4, 5), dict(size=(7, 3))),
    ("linear", (2, 3, 5), dict(scale_factor=0.6)),
    ("bilinear", (1, 2, 4, 5), dict(scale_factor=1.5, recompute_scale_factor=True)),
    ("bicubic", (1, 2, 4, 5), dict(size=(7, 9))),
    ("trilinear", (1, 2, 3, 4, 3), dict(scale_factor=(2, 1.5, 0.7))),
    ("area", (1, 2, 7, 5), dict(size=(3, 2))),
]


@pytest.mark.parametrize("mode,shape,kw", INTERP_CASES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_matches_torch(mode, shape, kw, align_corners):
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners:
            with pytest.raises(ValueError, match="align_corners"):
                F.interpolate(numbagrad.zeros(*shape), mode=mode, align_corners=True, **kw)
            return
        align_corners = None
    xo, xt = _pair(shape)
    yo = F.interpolate(xo, mode=mode, align_corners=align_corners, **kw)
    yt = torch.nn.functional.interpolate(xt, mode=mode, align_corners=align_corners, **kw)
    _close(yo, yt)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    yo.backward(numbagrad.tensor(g))
    yt.backward(torch.tensor(g))
    _close(xo.grad, xt.grad)


def test_upsample_modules_match_torch():
    for args, kw, shape in [
        ((), dict(scale_factor=2), (1, 2, 3, 3)),
        ((), dict(size=(5, 4), mode="bilinear", align_corners=True), (1, 2, 3, 3)),
        ((), dict(scale_factor=2, mode="bicubic"), (1, 1, 3, 4)),
    ]:
        _check_module(nn.Upsample(*args, **kw), torch.nn.Upsample(*args, **kw), shape)
    _check_module(
        nn.UpsamplingNearest2d(scale_factor=3),
        torch.nn.UpsamplingNearest2d(scale_factor=3),
        (1, 2, 2, 2),
    )
    _check_module(
        nn.UpsamplingBilinear2d(size=(4, 5)),
        torch.nn.UpsamplingBilinear2d(size=(4, 5)),
        (1, 2, 2, 3),
    )
    xo, xt = _pair((1, 2, 5, 4), dtype=np.float32)
    _close(
        F.interpolate(xo, scale_factor=1.5, mode="bilinear"),
        torch.nn.functional.interpolate(xt, scale_factor=1.5, mode="bilinear"),
        1e-5,
        1e-6,
    )


def test_interpolate_errors():
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(numbagrad.zeros(1, 1, 4))
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D"):
        F.interpolate(numbagrad.zeros(1, 1, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(numbagrad.zeros(1, 1, 4, 4), scale_factor=2, mode="nearest", antialias=True)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_unpool_modules_match_torch(k):
    xt = torch.tensor(np.random.default_rng(k).standard_normal((2, 2) + (6,) * k))
    yt, it = getattr(torch.nn.functional, f"max_pool{k}d")(xt, 3, 2, 1, return_indices=True)
    ours = getattr(nn, f"MaxUnpool{k}d")(3, 2, 1)
    theirs = getattr(torch.nn, f"MaxUnpool{k}d")(3, 2, 1)
    assert repr(ours) == repr(theirs)
    size = (6,) * k  # (overlapping windows: repeated indices, the last write wins)
    yo = numbagrad.tensor(yt.numpy().copy(), requires_grad=True)
    ytr = yt.detach().requires_grad_(True)
    out_o = ours(yo, numbagrad.tensor(it.numpy().copy()), output_size=size)
    out_t = theirs(ytr, it, output_size=size)
    _close(out_o, out_t)
    g = np.random.default_rng(0).standard_normal(tuple(out_t.shape))
    out_o.backward(numbagrad.tensor(g))
    out_t.backward(torch.tensor(g))
    _close(yo.grad, ytr.grad)


def test_max_unpool_errors():
    y = numbagrad.ones(1, 1, 2)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool1d(y, numbagrad.tensor([[[0, 9]]]), 2)
    with pytest.raises(RuntimeError, match="int64"):
        F.max_unpool1d(y, numbagrad.tensor([[[0, 1]]], dtype=numbagrad.int32), 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool1d(y, numbagrad.tensor([[[0, 1]]]), 2, output_size=(9,))


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("avg_pool1d", (3, 2, 1), {}),
        ("avg_pool2d", (3, 1, 1), {"divisor_override": 4}),
        ("avg_pool2d", (2,), {"ceil_mode": True, "count_include_pad": False}),
        ("avg_pool3d", (2,), {}),
        ("adaptive_avg_pool1d", (3,), {}),
        ("adaptive_avg_pool2d", ((2, 3),), {}),
        ("adaptive_avg_pool3d", (2,), {}),
        ("interpolate", (), {"scale_factor": 2, "mode": "nearest"}),
        ("interpolate", (), {"size": 7, "mode": "linear"}),
        ("interpolate", (), {"size": (5, 7), "mode": "bicubic"}),
        ("interpolate", (), {"size": (4, 3), "mode": "bilinear", "antialias": True}),
        ("interpolate", (), {"scale_factor": 1.5, "mode": "trilinear"}),
    ],
)
def test_pooling_non_finite_stays_in_its_windows(name, args, kwargs):
    """An ``inf`` / ``nan`` input reaches only the outputs whose windows hold it (and a
    ``nan`` cotangent only the inputs of its window): the separable maps gather their
    windows instead of multiplying a dense matrix, whose zeros times ``inf`` gave ``nan``
    everywhere (fuzz seeds 700879, 702475, 703082, 701614, 704369)."""
    k = {"1d": 1, "2d": 2, "3d": 3}.get(name[-2:])
    if k is None:
        k = {"nearest": 3, "linear": 1, "bilinear": 2, "bicubic": 2}.get(kwargs["mode"], 3)
    shape = (1, 2, *(6, 5, 4)[:k])
    x = np.random.default_rng(3).standard_normal(shape)
    x[(0, 0, *([1] * k))] = np.inf
    x[(0, 1, *([0] * k))] = np.nan
    x[(0, 1, *([-1] * k))] = -np.inf
    outs = []
    for m in (numbagrad, torch):
        base = m.tensor(np.repeat(x, 2, axis=-1), requires_grad=True)
        xv = base[..., ::2]  # a strided view, as in the fuzz programs
        y = getattr(m.nn.functional, name)(xv, *args, **kwargs)
        cot = m.ones(y.shape, dtype=y.dtype)
        cot[(0, 0, *([-1] * k))] = float("nan")
        (g,) = m.autograd.grad(y, [base], cot)
        outs.append((y, g))
    (y, g), (ty, tg) = outs
    np.testing.assert_array_equal(np.isnan(_np(y)), np.isnan(_np(ty)))
    _close(y, ty, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(_np(g)), np.isnan(_np(tg)))
    _close(g, tg, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_pooling_and_unpooling_of_an_empty_batch(k):
    """Max pooling, adaptive max pooling and unpooling of a batch of 0 give PyTorch's
    empty shapes and gradient (the flattened planes were ``reshape(..., -1)``, which
    cannot infer the size when a leading dim is 0; fuzz seed 700437)."""
    shapes = []
    for m in (numbagrad, torch):
        x = m.zeros((0, 2, *(5,) * k), requires_grad=True)
        f = m.nn.functional
        y, i = getattr(f, f"max_pool{k}d")(x, 3, 2, 1, ceil_mode=True, return_indices=True)
        u = getattr(f, f"max_unpool{k}d")(y, i, 3, 2, 1, output_size=x.shape[2:])
        a = getattr(f, f"adaptive_max_pool{k}d")(x, 2)
        (g,) = m.autograd.grad(y.sum() + u.sum() + a.sum(), [x])
        shapes.append([tuple(t.shape) for t in (y, i, u, a, g)])
    assert shapes[0] == shapes[1]


def test_max_pool_window_wholly_in_the_padding():
    # kernel 2, dilation 2, padding 1 on a length-1 dim: both taps are padding. PyTorch
    # returns -inf with an out-of-range index, and its backward then writes outside the
    # gradient (a heap corruption); numbagrad gives -inf, index -1 and no gradient
    x0 = np.random.default_rng(0).standard_normal((1, 2, 1, 5))
    x = numbagrad.tensor(x0, requires_grad=True)
    y, i = F.max_pool2d(x, (2, 3), (1, 2), (1, 1), dilation=(2, 1), return_indices=True)
    assert np.all(y.detach().numpy() == -np.inf) and np.all(i.numpy() == -1)
    yt = torch.nn.functional.max_pool2d(torch.tensor(x0), (2, 3), (1, 2), (1, 1), dilation=(2, 1))
    np.testing.assert_array_equal(y.detach().numpy(), yt.numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)
    # windows with a tap inside keep PyTorch's values and gradients
    x1 = np.random.default_rng(1).standard_normal((2, 3, 7, 6))
    a = numbagrad.tensor(x1, requires_grad=True)
    b = torch.tensor(x1, requires_grad=True)
    F.max_pool2d(a, (3, 2), (2, 1), (1, 1), dilation=(2, 2)).sum().backward()
    torch.nn.functional.max_pool2d(b, (3, 2), (2, 1), (1, 1), dilation=(2, 2)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
