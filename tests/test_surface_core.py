"""The Tensor and module-level surface scripts use: legacy constructors, type strings,
``__format__``, metadata, post-accumulate hooks, ``_saved_*`` attributes, RNG generators and
random fills, finfo/iinfo, constants, default device, print options, ``numbagrad.cuda``."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")


# -- register_post_accumulate_grad_hook -------------------------------------------------------
def _post_acc_trace(mod):
    x = mod.ones(2, requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    mod.autograd.grad((x * 2).sum(), x)  # accumulates nothing: no call
    (x * 3).sum().backward(inputs=[x])
    h.remove()
    (x * 2).sum().backward()
    return seen


def test_post_accumulate_grad_hook_matches_torch():
    assert (
        _post_acc_trace(numbagrad) == _post_acc_trace(torch) == [[2.0, 2.0], [4.0, 4.0], [7.0, 7.0]]
    )


def test_post_accumulate_grad_hook_sees_grad_once_per_backward_with_two_paths():
    w = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    w.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.clone()))
    (w * w + w).sum().backward()  # two edges into one leaf: one accumulation
    assert len(calls) == 1 and calls[0].tolist() == [3.0, 5.0]


def test_post_accumulate_grad_hook_errors():
    with pytest.raises(RuntimeError, match="non-leaf"):
        (numbagrad.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        numbagrad.ones(2).register_post_accumulate_grad_hook(print)
    x = numbagrad.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: 1)
    with pytest.raises(TypeError, match="must return None"):
        (x * 2).sum().backward()


# -- legacy constructors, type(), new, equal, __format__, metadata ----------------------------
def test_legacy_constructor():
    assert numbagrad.Tensor([1, 2]).dtype is numbagrad.float32
    assert numbagrad.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert tuple(numbagrad.Tensor(2, 3).shape) == (2, 3)
    assert tuple(numbagrad.Tensor().shape) == tuple(torch.Tensor().shape) == (0,)
    assert tuple(numbagrad.Tensor(numbagrad.Size([4])).shape) == (4,)
    with pytest.raises(TypeError):
        numbagrad.Tensor(numbagrad.tensor([1, 2]))  # int64: torch refuses too
    numbagrad.set_default_dtype(numbagrad.float64)
    try:
        assert numbagrad.Tensor([1]).dtype is numbagrad.float64
    finally:
        numbagrad.set_default_dtype(numbagrad.float32)


@pytest.mark.parametrize(
    "data",
    [
        [np.float64(1), 2.0],
        [np.float32(1), 2.0],
        [1, np.float64(2)],
        [np.int32(1), 2],
        [np.int32(1), 2.0],
        [[np.float64(1)], [2.0]],
        [np.float64(1), np.float32(2)],
    ],
)
def test_numpy_scalars_in_lists_infer_like_torch(data):
    got = numbagrad.as_tensor(data).dtype
    want = torch.as_tensor(data).dtype
    assert str(got).split(".")[-1] == str(want).split(".")[-1]
    assert (
        str(numbagrad.tensor(data).dtype).split(".")[-1]
        == str(torch.tensor(data).dtype).split(".")[-1]
    )


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "int32", "bool"])
def test_type_strings_match_torch(name):
    a = numbagrad.zeros(2, dtype=getattr(numbagrad, name))
    b = torch.zeros(2, dtype=getattr(torch, name))
    assert a.type() == b.type()
    assert a.type("torch.DoubleTensor").dtype is numbagrad.float64
    assert a.type(numbagrad.int64).dtype is numbagrad.int64


def test_type_errors():
    x = numbagrad.ones(2)
    assert x.type(numbagrad.float32) is x
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoSuchTensor")
    with pytest.raises(RuntimeError, match="CUDA"):
        x.type("torch.cuda.FloatTensor")


def test_new_and_equal():
    x = numbagrad.ones(2, dtype=numbagrad.float64)
    assert x.new([1, 2]).dtype is numbagrad.float64
    assert tuple(x.new(2, 3).shape) == (2, 3)
    assert tuple(x.new().shape) == (0,)
    assert tuple(x.new(numbagrad.Size([3])).shape) == (3,)
    i = numbagrad.ones(2, dtype=numbagrad.int64)
    assert i.new([1.5]).tolist() == torch.ones(2, dtype=torch.int64).new([1.5]).tolist()
    assert x.equal(numbagrad.ones(2, dtype=numbagrad.float64))
    assert not x.equal(numbagrad.ones(3, dtype=numbagrad.float64))
    assert numbagrad.ones(2).equal(numbagrad.ones(2, dtype=numbagrad.int64)) == torch.ones(2).equal(
        torch.ones(2, dtype=torch.int64)
    )


def test_format():
    for spec in (".4f", "", ".2e", "8.3f"):
        v = np.float32(1.23456)
        assert format(numbagrad.tensor(v), spec) == format(torch.tensor(v), spec)
    assert f"{numbagrad.tensor(3)}" == f"{torch.tensor(3)}"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{numbagrad.ones(2):.2f}"
    assert f"{numbagrad.ones(2)}" == "tensor([1., 1.])"


def test_metadata_methods():
    a = numbagrad.zeros(3, 4, dtype=numbagrad.float64)
    b = torch.zeros(3, 4, dtype=torch.float64)
    for x, y in ((a, b), (a[1:, ::2], b[1:, ::2]), (a.t(), b.t())):
        assert x.element_size() == y.element_size() and x.itemsize == y.itemsize
        assert x.nbytes == y.nbytes and x.stride() == y.stride()
        assert x.storage_offset() == y.storage_offset()
        assert x.is_contiguous() == y.is_contiguous()
        assert x.dim() == x.ndimension() == y.ndimension() and x.nelement() == y.nelement()
    assert a[1:].data_ptr() - a.data_ptr() == b[1:].data_ptr() - b.data_ptr() == 32
    x = numbagrad.ones(2, requires_grad=True) * 2
    assert not x.retains_grad
    x.retain_grad()
    assert x.retains_grad


# -- grad_fn._saved_* -------------------------------------------------------------------------
def test_saved_attributes():
    x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    c = numbagrad.tensor([3.0, 4.0])
    m = (x * c).grad_fn
    # as PyTorch: self is not saved when no gradient needs it (c requires none)
    tm = (torch.tensor([1.0, 2.0], requires_grad=True) * torch.tensor([3.0, 4.0])).grad_fn
    assert m._saved_self is None and tm._saved_self is None
    assert m._saved_other.tolist() == tm._saved_other.tolist() == [3.0, 4.0]
    assert (x * x).grad_fn._saved_self is x
    e = x.exp()
    assert np.allclose(e.grad_fn._saved_result.detach().numpy(), np.exp([1.0, 2.0]))
    assert (x**2).grad_fn._saved_exponent == 2
    assert (x**x).grad_fn._saved_result.tolist() == [1.0, 4.0]
    with pytest.raises(AttributeError):
        _ = e.grad_fn._saved_self  # exp saves only its result (as PyTorch)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = y.grad_fn._saved_result


# -- Generator, seeds and random functions ----------------------------------------------------
def test_generator_reproducible_and_state():
    g = numbagrad.Generator().manual_seed(5)
    a = numbagrad.rand(4, generator=g)
    st = g.get_state()
    b = numbagrad.randn(3, generator=g)
    g.set_state(st)
    assert numbagrad.randn(3, generator=g).equal(b)
    assert g.initial_seed() == 5
    g2 = numbagrad.Generator().manual_seed(5)
    assert numbagrad.rand(4, generator=g2).equal(a)
    assert g.device == numbagrad.device("cpu")
    s = g.seed()
    assert g.initial_seed() == s
    with pytest.raises(TypeError, match="RNG state must be"):
        g.set_state(numbagrad.zeros(3))
    with pytest.raises(RuntimeError, match="size 5056"):
        g.set_state(numbagrad.zeros(3, dtype=numbagrad.int64))
    with pytest.raises(TypeError, match="Generator"):
        numbagrad.rand(2, generator=np.random.default_rng(0))


def test_global_seed_and_rng_state():
    assert numbagrad.manual_seed(3) is numbagrad.default_generator
    assert numbagrad.initial_seed() == 3
    st = numbagrad.get_rng_state()
    a = numbagrad.rand(5)
    numbagrad.set_rng_state(st)
    assert numbagrad.rand(5).equal(a)


def test_generator_arguments_everywhere():
    def draws(seed):
        g = numbagrad.Generator().manual_seed(seed)
        out = [
            numbagrad.rand(3, generator=g),
            numbagrad.randn(3, generator=g),
            numbagrad.randint(0, 9, (3,), generator=g),
            numbagrad.randperm(5, generator=g),
            numbagrad.normal(0.0, 1.0, (3,), generator=g),
            numbagrad.normal(numbagrad.zeros(3), numbagrad.ones(3), generator=g),
            numbagrad.bernoulli(numbagrad.full((3,), 0.5), generator=g),
            numbagrad.multinomial(numbagrad.ones(4), 2, generator=g),
            numbagrad.poisson(numbagrad.ones(3), generator=g),
            numbagrad.empty(3).uniform_(generator=g),
            numbagrad.empty(3).normal_(generator=g),
            numbagrad.empty(3).bernoulli_(0.3, generator=g),
            numbagrad.empty(3).random_(10, generator=g),
            numbagrad.empty(3).exponential_(generator=g),
        ]
        return [t.tolist() for t in out]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)


def test_random_functions_distributions():
    numbagrad.manual_seed(0)
    n = 20000
    u = numbagrad.empty(n, dtype=numbagrad.float64).uniform_(2.0, 4.0)
    assert 2.0 <= float(u.min()) and float(u.max()) < 4.0 and abs(float(u.mean()) - 3) < 0.05
    z = numbagrad.empty(n).normal_(1.0, 2.0)
    assert abs(float(z.mean()) - 1) < 0.1 and abs(float(z.std()) - 2) < 0.1
    e = numbagrad.empty(n).exponential_(2.0)
    assert abs(float(e.mean()) - 0.5) < 0.05 and float(e.min()) >= 0
    r = numbagrad.empty(n).random_(3, 7)
    assert set(r.tolist()) == {3.0, 4.0, 5.0, 6.0}
    ri = numbagrad.zeros(n, dtype=numbagrad.int64).random_(5)
    assert set(ri.tolist()) == set(range(5)) and ri.dtype is numbagrad.int64
    b = numbagrad.bernoulli(numbagrad.tensor([0.0, 1.0] * 10))
    assert b.tolist() == [0.0, 1.0] * 10
    m = numbagrad.multinomial(
        numbagrad.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), 3, replacement=True
    )
    assert m.tolist() == [[1, 1, 1], [0, 0, 0]] and m.dtype is numbagrad.int64
    perm = numbagrad.multinomial(numbagrad.ones(5), 5)
    assert sorted(perm.tolist()) == list(range(5))
    p = numbagrad.poisson(numbagrad.full((n,), 3.0))
    assert abs(float(p.mean()) - 3) < 0.1
    nt = numbagrad.normal(numbagrad.tensor([0.0, 100.0]), numbagrad.tensor([0.0, 0.0]))
    assert nt.tolist() == [0.0, 100.0]


@pytest.mark.parametrize(
    "draw",
    [
        lambda m: m.normal(m.tensor(0.0), m.tensor(1.0)),
        lambda m: m.normal(m.tensor(0.0), 1.0),
        lambda m: m.normal(0.0, m.tensor(1.0, dtype=m.float64)),
        lambda m: m.bernoulli(m.tensor(0.5)),
        lambda m: m.tensor(0.5).bernoulli(),
        lambda m: m.poisson(m.tensor(2.0)),
        lambda m: m.tensor(0.0).uniform_(),
        lambda m: m.rand_like(m.tensor(0.0)),
    ],
    ids=["normal", "normal_std_float", "normal_mean_float", "bernoulli", "bernoulli_method",
         "poisson", "uniform_", "rand_like"],
)  # fmt: skip
def test_random_draws_of_0d_parameters_are_0d(draw):
    # NumPy's ascontiguousarray made them 1-D (poisson of a 0-d rate raised)
    ours, theirs = draw(numbagrad), draw(torch)
    assert (tuple(ours.shape), str(ours.dtype)[10:]) == (tuple(theirs.shape), str(theirs.dtype)[6:])


def test_random_errors():
    with pytest.raises(RuntimeError, match="without replacement"):
        numbagrad.multinomial(numbagrad.ones(3), 4)
    with pytest.raises(RuntimeError, match="probability"):
        numbagrad.bernoulli(numbagrad.tensor([1.5]))
    with pytest.raises(RuntimeError, match="from=3"):
        numbagrad.empty(2).uniform_(3, 1)
    with pytest.raises(RuntimeError, match="std >= 0"):
        numbagrad.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="floating point"):
        numbagrad.zeros(2, dtype=numbagrad.int64).normal_()


def test_random_fills_and_autograd():
    w = numbagrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.uniform_()
    with numbagrad.no_grad():
        w.uniform_()
    v = w._version
    with numbagrad.no_grad():
        w.normal_()
    assert w._version > v
    y = w * 2
    y.normal_()  # the old value of y gets a zero gradient (torch: NormalBackward)
    (y * 3).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0, 0.0]


# -- finfo / iinfo / constants / devices / cuda ------------------------------------------------
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_finfo_matches_torch(name):
    a, b = numbagrad.finfo(getattr(numbagrad, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(a, field) == getattr(b, field), field
    assert a.dtype == b.dtype
    assert repr(a) == repr(b)


@pytest.mark.parametrize("name", ["int32", "int64"])
def test_iinfo_matches_torch(name):
    a, b = numbagrad.iinfo(getattr(numbagrad, name)), torch.iinfo(getattr(torch, name))
    assert (a.bits, a.max, a.min, a.dtype) == (b.bits, b.max, b.min, b.dtype)
    assert repr(a) == repr(b)


def test_finfo_iinfo_errors_and_default():
    assert numbagrad.finfo().dtype == "float32"
    with pytest.raises(TypeError):
        numbagrad.finfo(numbagrad.int64)
    with pytest.raises(TypeError):
        numbagrad.iinfo(numbagrad.float32)
    with pytest.raises(TypeError):
        numbagrad.iinfo(numbagrad.bool)


def test_constants():
    assert numbagrad.inf == torch.inf and numbagrad.pi == torch.pi and numbagrad.e == torch.e
    assert np.isnan(numbagrad.nan)
    assert numbagrad.newaxis is torch.newaxis is None
    assert tuple(numbagrad.ones(3)[numbagrad.newaxis].shape) == (1, 3)


def test_default_device():
    assert numbagrad.get_default_device() == numbagrad.device("cpu")
    numbagrad.set_default_device("cpu")
    numbagrad.set_default_device(None)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        numbagrad.set_default_device("cuda")
    assert str(numbagrad.get_default_device()) == "cpu"


def test_cuda_module_as_cpu_build():
    c = numbagrad.cuda
    assert c.is_available() is torch.cuda.is_available() is False
    assert c.device_count() == torch.cuda.device_count() == 0
    assert c.manual_seed(0) is None and c.manual_seed_all(0) is None
    c.empty_cache()
    for name in ("synchronize", "current_device", "get_device_name", "initial_seed"):
        with pytest.raises(AssertionError):
            getattr(torch.cuda, name)()
        with pytest.raises(AssertionError, match="CUDA"):
            getattr(c, name)()


# -- printoptions -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "opts",
    [
        {"precision": 2},
        {"precision": 6},
        {"sci_mode": True},
        {"sci_mode": False},
        {"profile": "short"},
        {"profile": "full"},
        {"linewidth": 40},
    ],
)
def test_printoptions_match_torch(opts):
    data = np.linspace(-3.0, 4.0, 12).reshape(3, 4) * np.array([1.0, 10.0, 0.5, 3.0])
    try:
        numbagrad.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        # (the dtype suffix is longer in numbagrad, so where it goes may differ)
        a = repr(numbagrad.tensor(data, dtype=numbagrad.float64)).replace("numbagrad", "torch")
        assert a.split() == repr(torch.tensor(data, dtype=torch.float64)).split()
        a = repr(numbagrad.tensor(data, dtype=numbagrad.float32))
        assert a == repr(torch.tensor(data, dtype=torch.float32))
    finally:
        numbagrad.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
    assert repr(numbagrad.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"


def test_printoptions_summary():
    big = numbagrad.arange(2000.0)
    try:
        numbagrad.set_printoptions(threshold=5, edgeitems=2)
        text = repr(numbagrad.arange(10.0))
        assert text == "tensor([0., 1., ..., 8., 9.])"
        numbagrad.set_printoptions(profile="full")
        assert "..." not in repr(big)
    finally:
        numbagrad.set_printoptions(profile="default")
    assert "..." in repr(big)
    with pytest.raises(ValueError, match="profile"):
        numbagrad.set_printoptions(profile="long")


# -- NumPy keyword aliases on reductions ------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "sum",
        "mean",
        "prod",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "all",
        "any",
        "logsumexp",
        "std",
        "var",
    ],
)
def test_axis_and_keepdims_aliases_match_torch(name):
    data = np.arange(1.0, 7.0).reshape(2, 3)
    for kw in ({"axis": 1}, {"axis": 0, "keepdims": True}, {"dim": 1, "keepdims": True}):
        a = getattr(numbagrad.tensor(data), name)(**kw)
        b = getattr(torch.tensor(data), name)(**kw)
        np.testing.assert_allclose(np.asarray(a.tolist(), float), np.asarray(b.tolist(), float))
        c = getattr(numbagrad, name)(numbagrad.tensor(data), **kw)
        assert c.tolist() == a.tolist()
    with pytest.raises(TypeError, match="alias"):
        getattr(numbagrad.tensor(data), name)(dim=0, axis=0)


def test_axis_alias_differentiable():
    x = numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x.sum(axis=0, keepdims=True).mean(axis=1).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.5], [0.5, 0.5]]
