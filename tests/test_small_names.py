"""Small names that stop whole scripts (issue 27): ``numbagrad.accelerator``,
``numbagrad.functional``, ``is_complex``, the ``size=`` keyword of the factories, naming a
CUDA device without a GPU, and the submodules scripts import names from. Each is compared
with PyTorch where torch is installed; the checks that need no oracle run without it."""

import io
import os
import pathlib
import subprocess
import sys
import warnings

import pytest

import numbagrad

ROOT = pathlib.Path(__file__).resolve().parent.parent
NO_CUDA = not numbagrad.cuda.is_available()
needs_no_cuda = pytest.mark.skipif(not NO_CUDA, reason="checks the machine without CUDA")


def _torch():
    return pytest.importorskip("torch")


def _outcome(fn):
    """``('ok', value)`` or ``('raise', type name, message)`` of ``fn()``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return ("ok", fn())
    except Exception as e:  # (the exception is the result compared)
        return ("raise", type(e).__name__, str(e))


def _run(code, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=e, capture_output=True, text=True, timeout=600
    )


# -- 1. numbagrad.accelerator ----------------------------------------------------------------
_NO_DEVICE_CALLS = [
    "current_device_index",
    "current_device_idx",
    "synchronize",
    "empty_cache",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "current_stream",
]


@needs_no_cuda
def test_accelerator_without_cuda_answers_as_cpu_only_build():
    acc = numbagrad.accelerator
    assert acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None
    assert acc.is_available() is False and acc.device_count() == 0
    for name in _NO_DEVICE_CALLS:
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                getattr(acc, name)()
    assert acc.set_device_index(-1) is None  # negative: a no-op, as PyTorch
    with pytest.raises(RuntimeError, match="Accelerator expected"):
        acc.set_device_index("cuda:0")
    with pytest.raises(RuntimeError, match="Cannot access"):
        with acc.device_index(0):
            pass
    with acc.device_index(None):  # no switching: fine without a device
        pass
    device = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert numbagrad.ones(2, device=device).device.type == "cpu"


def test_accelerator_deprecated_aliases_warn():
    acc = numbagrad.accelerator
    with pytest.warns(FutureWarning, match="Use `current_device_index` instead"):
        try:
            assert acc.current_device_idx() == acc.current_device_index()
        except RuntimeError:
            assert not acc.is_available()
    with pytest.warns(FutureWarning, match="Use `set_device_index` instead"):
        acc.set_device_idx(-1)


@needs_no_cuda
def test_accelerator_matches_torch_cpu_build():
    torch = _torch()
    if torch.accelerator.current_accelerator() is not None:
        pytest.skip("torch is not a CPU-only build here")
    assert numbagrad.accelerator.current_accelerator() == torch.accelerator.current_accelerator()
    assert numbagrad.accelerator.is_available() == torch.accelerator.is_available()
    assert numbagrad.accelerator.device_count() == torch.accelerator.device_count()
    for name in _NO_DEVICE_CALLS:
        ours = _outcome(getattr(numbagrad.accelerator, name))
        theirs = _outcome(getattr(torch.accelerator, name))
        assert ours == theirs, name
    for arg in (0, -1, "cuda", "cuda:1", "cpu"):
        ours = _outcome(lambda a=arg: numbagrad.accelerator.set_device_index(a))
        theirs = _outcome(lambda a=arg: torch.accelerator.set_device_index(a))
        assert ours == theirs, arg
        ours = _outcome(lambda a=arg: numbagrad.accelerator.synchronize(a))
        theirs = _outcome(lambda a=arg: torch.accelerator.synchronize(a))
        assert ours[:2] == theirs[:2], arg
    names = {n for n in dir(torch.accelerator) if not n.startswith("_")}
    assert set(numbagrad.accelerator.__all__) <= names


ACCELERATOR_SIM = r"""
import warnings
import numbagrad as torch
acc = torch.accelerator
assert acc.is_available() and acc.device_count() == 1
assert acc.current_accelerator() == torch.device("cuda")
assert acc.current_accelerator(check_available=True).type == "cuda"
assert acc.current_accelerator().index is None
assert acc.current_device_index() == 0
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    assert acc.current_device_idx() == 0
    acc.set_device_idx(0)
assert [x.category for x in w] == [FutureWarning, FutureWarning]
acc.set_device_index("cuda:0")
acc.set_device_index(torch.device("cuda", 0))
for bad, err in [("cuda", ValueError), ("cpu", ValueError), ("cpu:0", ValueError)]:
    try:
        acc.set_device_index(bad)
    except err as e:
        print(type(e).__name__, e)
    else:
        raise AssertionError(bad)
with acc.device_index(0):
    assert acc.current_device_index() == 0
device = acc.current_accelerator().type if acc.is_available() else "cpu"
x = torch.ones(3, device=device) * 2
acc.synchronize()
acc.synchronize("cuda:0")
assert isinstance(acc.current_stream(), torch.cuda.Stream)
assert acc.memory_allocated() >= 0 and acc.max_memory_allocated() >= 0
acc.reset_peak_memory_stats()
acc.empty_cache()
print(x.device, x.tolist())
"""


def test_accelerator_with_cuda_simulator():
    pytest.importorskip("numba_cuda")
    r = _run(ACCELERATOR_SIM, {"NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "ValueError Expected a torch.device with a specified index or an integer, but got:cuda",
        "ValueError cpu doesn't match the current accelerator cuda.",
        "ValueError cpu doesn't match the current accelerator cuda.",
        "cuda:0 [2.0, 2.0, 2.0]",
    ]


# -- 2. numbagrad.functional and is_complex --------------------------------------------------
def test_functional_module_reexports():
    from numbagrad.functional import F, einsum, split

    assert F is numbagrad.nn.functional
    assert einsum is numbagrad.einsum and split is numbagrad.split
    for name in numbagrad.functional.__all__:
        if name != "F":
            assert getattr(numbagrad.functional, name) is getattr(numbagrad, name), name
    x = numbagrad.arange(5.0)
    assert [t.tolist() for t in numbagrad.functional.split(x, 2)] == [[0, 1], [2, 3], [4]]


def test_functional_module_matches_torch():
    torch = _torch()
    ours = set(numbagrad.functional.__all__) - {"F"}
    assert ours <= set(torch.functional.__all__)
    a, b = torch.arange(6.0).reshape(2, 3), torch.arange(3.0)
    ref = torch.functional.einsum("ij,j->i", a, b)
    got = numbagrad.functional.einsum(
        "ij,j->i", numbagrad.tensor(a.tolist()), numbagrad.tensor(b.tolist())
    )
    assert got.tolist() == ref.tolist()
    ref = torch.functional.norm(a)
    assert numbagrad.functional.norm(numbagrad.tensor(a.tolist())).item() == pytest.approx(
        ref.item()
    )


DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


def test_is_complex_without_torch():
    for name in DTYPES:
        t = numbagrad.zeros(2, dtype=getattr(numbagrad, name))
        assert t.is_complex() is False and numbagrad.is_complex(t) is False
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        numbagrad.is_complex(1.0)


def test_is_complex_matches_torch():
    torch = _torch()
    for name in DTYPES:
        t = torch.zeros(2, dtype=getattr(torch, name))
        n = numbagrad.zeros(2, dtype=getattr(numbagrad, name))
        assert n.is_complex() == t.is_complex() and numbagrad.is_complex(n) == torch.is_complex(t)
    assert _outcome(lambda: numbagrad.is_complex(1.0)) == _outcome(lambda: torch.is_complex(1.0))


# -- 3. the size= keyword ---------------------------------------------------------------------
# (call, compare the message too): the call is evaluated with ``T`` the library and ``x`` a
# float32 tensor of it
SIZE_CALLS = [
    ("T.zeros(size=(2, 3))", True),
    ("T.zeros(size=[2, 3], dtype=T.int64)", True),
    ("T.zeros(size=())", True),
    ("T.zeros(size=T.Size([4]))", True),
    ("T.ones(size=(2,))", True),
    ("T.empty(size=(2, 1))", True),
    ("T.rand(size=(3,))", True),
    ("T.randn(size=(3, 2), dtype=T.float64)", True),
    ("T.randn(size=(2,), requires_grad=True)", True),
    ("T.rand(size=(2,), generator=T.Generator().manual_seed(0))", True),
    ("T.full(size=(2,), fill_value=1.0)", True),
    ("T.randint(0, 5, size=(2,))", True),
    ("T.randint(5, size=(2,))", True),
    ("T.randint(low=1, high=5, size=(2,))", True),
    ("T.normal(0.0, 1.0, size=(2,))", True),
    ("T.normal(mean=0.0, std=1.0, size=(2,))", True),
    ("x.new_empty(size=(2, 3))", True),
    ("x.new_zeros(size=(2,))", True),
    ("x.new_ones(size=[2])", True),
    ("x.new_zeros(2, 3)", True),
    ("x.new_full(size=(2,), fill_value=3)", True),
    # errors: both ways at once, a size= that is not a sequence, a negative size
    ("T.zeros(2, size=(2,))", True),
    ("T.zeros((2,), size=(2,))", True),
    ("T.ones(2, 3, size=(2,))", True),
    ("T.empty(2, size=(2,))", True),
    ("T.rand(2, size=(2,))", False),  # (PyTorch's message lists its overloads)
    ("T.randn(2, size=(2,))", False),
    ("T.full((2,), 1.0, size=(2,))", True),
    ("x.new_empty(2, size=(2,))", True),
    ("x.new_zeros((2,), size=(2,))", True),
    ("x.new_full((2,), 1.0, size=(2,))", True),
    ("T.zeros(size=2)", True),
    ("T.randn(size=3)", True),
    ("x.new_empty(size=2)", True),
    ("x.new_full(2, 1.0)", False),  # (PyTorch names the position too)
    ("T.randn(size=(-1,))", True),
]


def _size_outcome(T, call):
    env = {"T": T, "x": T.zeros(1)}
    out = _outcome(lambda: eval(call, env))
    if out[0] == "ok":
        return ("ok", tuple(out[1].shape), str(out[1].dtype).split(".")[-1])
    return out


@pytest.mark.parametrize("call, same_message", SIZE_CALLS, ids=[c for c, _ in SIZE_CALLS])
def test_size_keyword_matches_torch(call, same_message):
    torch = _torch()
    ours, theirs = _size_outcome(numbagrad, call), _size_outcome(torch, call)
    if ours[0] == "raise" and not same_message:
        ours, theirs = ours[:2], theirs[:2]
    assert ours == theirs


def test_size_keyword_without_torch():
    x = numbagrad.zeros(1, dtype=numbagrad.float64)
    assert numbagrad.randn(size=(3,)).shape == (3,)
    assert x.new_empty(size=(2, 3)).shape == (2, 3) and x.new_empty(size=(2,)).dtype is x.dtype
    assert numbagrad.full(size=(2,), fill_value=1.0).tolist() == [1.0, 1.0]
    assert numbagrad.ones(size=(2,)).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="got multiple values for argument 'size'"):
        numbagrad.zeros(2, size=(2,))
    with pytest.raises(TypeError, match="argument 'size' must be tuple of ints, not int"):
        x.new_zeros(size=2)


# -- 4. naming a CUDA device without a GPU ----------------------------------------------------
@needs_no_cuda
def test_cuda_device_is_a_value_without_cuda():
    d = numbagrad.device("cuda:0")
    assert (d.type, d.index, str(d)) == ("cuda", 0, "cuda:0")
    assert repr(numbagrad.device("cuda")) == "device(type='cuda')"
    assert numbagrad.device("cuda", 1) != numbagrad.device("cuda")
    assert numbagrad.device("cuda:0") == "cuda:0"
    for make in (
        lambda: numbagrad.zeros(2, device=d),
        lambda: numbagrad.tensor([1.0], device="cuda"),
        lambda: numbagrad.ones(2).to(d),
        lambda: numbagrad.randn(2, device="cuda"),
    ):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            make()
    buf = io.BytesIO()
    numbagrad.save(numbagrad.ones(1), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        numbagrad.load(buf, map_location=d)


@needs_no_cuda
def test_cuda_device_matches_torch():
    torch = _torch()
    assert _outcome(lambda: numbagrad.device(0)) == _outcome(lambda: torch.device(0))
    for args in [("cuda",), ("cuda:0",), ("cuda", 1)]:
        ours, theirs = numbagrad.device(*args), torch.device(*args)
        assert (repr(ours), str(ours), ours.type, ours.index) == (
            repr(theirs),
            str(theirs),
            theirs.type,
            theirs.index,
        )
    assert (numbagrad.device("cuda:0") == numbagrad.device("cuda")) == (
        torch.device("cuda:0") == torch.device("cuda")
    )


# -- 5. submodules scripts import names from ----------------------------------------------------
DIST_MODULES = {
    "bernoulli": ["Bernoulli"],
    "beta": ["Beta"],
    "binomial": ["Binomial"],
    "categorical": ["Categorical"],
    "cauchy": ["Cauchy"],
    "chi2": ["Chi2"],
    "continuous_bernoulli": ["ContinuousBernoulli"],
    "dirichlet": ["Dirichlet"],
    "distribution": ["Distribution"],
    "exp_family": ["ExponentialFamily"],
    "exponential": ["Exponential"],
    "fishersnedecor": ["FisherSnedecor"],
    "gamma": ["Gamma"],
    "generalized_pareto": ["GeneralizedPareto"],
    "geometric": ["Geometric"],
    "gumbel": ["Gumbel"],
    "half_cauchy": ["HalfCauchy"],
    "half_normal": ["HalfNormal"],
    "independent": ["Independent"],
    "inverse_gamma": ["InverseGamma"],
    "kl": ["kl_divergence", "register_kl"],
    "kumaraswamy": ["Kumaraswamy"],
    "laplace": ["Laplace"],
    "lkj_cholesky": ["LKJCholesky"],
    "log_normal": ["LogNormal"],
    "logistic_normal": ["LogisticNormal"],
    "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
    "mixture_same_family": ["MixtureSameFamily"],
    "multinomial": ["Multinomial"],
    "multivariate_normal": ["MultivariateNormal"],
    "negative_binomial": ["NegativeBinomial"],
    "normal": ["Normal"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
    "pareto": ["Pareto"],
    "poisson": ["Poisson"],
    "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
    "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"],
    "studentT": ["StudentT"],
    "transformed_distribution": ["TransformedDistribution"],
    "uniform": ["Uniform"],
    "von_mises": ["VonMises"],
    "weibull": ["Weibull"],
    "wishart": ["Wishart"],
}


def test_distribution_modules():
    import importlib

    for mod, names in DIST_MODULES.items():
        m = importlib.import_module(f"numbagrad.distributions.{mod}")
        assert getattr(numbagrad.distributions, mod) is m
        for name in names:
            if name in ("LogitRelaxedBernoulli", "ExpRelaxedCategorical"):
                continue  # (module-level only, as in torch.distributions)
            assert getattr(m, name) is getattr(numbagrad.distributions, name), (mod, name)
    from numbagrad.distributions.kl import kl_divergence
    from numbagrad.distributions.normal import Normal

    p = Normal(numbagrad.tensor([0.0]), numbagrad.tensor([1.0]))
    assert kl_divergence(p, p).tolist() == [0.0]


def test_distribution_modules_match_torch():
    _torch()
    import importlib

    for mod, names in DIST_MODULES.items():
        ours = importlib.import_module(f"numbagrad.distributions.{mod}")
        theirs = importlib.import_module(f"torch.distributions.{mod}")
        assert set(ours.__all__) == set(names) <= set(theirs.__all__), mod
        for name in names:  # the class or function lives where PyTorch's does
            assert getattr(theirs, name).__module__ == f"torch.distributions.{mod}"
            assert getattr(ours, name).__module__ == f"numbagrad.distributions.{mod}"


class _Settings:
    def __init__(self, lr):
        self.lr = lr


def _save(obj):
    buf = io.BytesIO()
    numbagrad.save(obj, buf)
    buf.seek(0)
    return buf


def test_safe_globals():
    import argparse
    import pickle

    from numbagrad import serialization as S

    S.clear_safe_globals()
    obj = {"w": numbagrad.ones(2), "args": argparse.Namespace(lr=0.5), "s": _Settings(3)}
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL argparse\.Namespace was not an"):
        numbagrad.load(_save(obj))
    with S.safe_globals([argparse.Namespace]):
        assert S.get_safe_globals() == [argparse.Namespace]
        with pytest.raises(pickle.UnpicklingError, match=r"test_small_names\._Settings"):
            numbagrad.load(_save(obj))
        with S.safe_globals([(_Settings, f"{__name__}._Settings")]):
            out = numbagrad.load(_save(obj), weights_only=True)
        assert out["args"].lr == 0.5 and out["s"].lr == 3 and out["w"].tolist() == [1.0, 1.0]
    assert S.get_safe_globals() == []
    S.add_safe_globals([_Settings])
    try:  # a tensor inside a safe object loads too (its rebuild functions are allowed)
        s = _Settings(numbagrad.arange(3.0))
        assert numbagrad.load(_save(s)).lr.tolist() == [0.0, 1.0, 2.0]
        assert S.get_safe_globals() == [_Settings]
    finally:
        S.clear_safe_globals()
    assert S.get_safe_globals() == []
    # the defaults PyTorch allows: sets, complex numbers, bytes, bytearray, Counter
    import collections

    for v in [{1, 2}, 1 + 2j, b"ab", bytearray(b"ab"), collections.Counter("aab")]:
        assert numbagrad.load(_save([v]))[0] == v
    with pytest.raises(ValueError, match="tuple of length 2"):
        with S.safe_globals([(_Settings,)]):
            numbagrad.load(_save(_Settings(1)))
    with pytest.raises(TypeError, match="str of callable full path"):
        with S.safe_globals([(_Settings, 1)]):
            numbagrad.load(_save(_Settings(1)))


def test_safe_globals_match_torch():
    torch = _torch()
    import argparse
    import collections

    for name in ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]:
        assert name in torch.serialization.__all__
    for v in [{1, 2}, 1 + 2j, bytearray(b"ab"), collections.Counter("aab"), frozenset([1])]:
        tbuf = io.BytesIO()
        torch.save([v], tbuf)
        tbuf.seek(0)
        theirs = _outcome(lambda b=tbuf: torch.load(b, weights_only=True))
        ours = _outcome(lambda v=v: numbagrad.load(_save([v]), weights_only=True))
        assert ours[:2] == theirs[:2], v
    ns = argparse.Namespace(a=1)
    with torch.serialization.safe_globals([argparse.Namespace]):
        tbuf = io.BytesIO()
        torch.save(ns, tbuf)
        tbuf.seek(0)
        assert torch.load(tbuf).a == 1
    with numbagrad.serialization.safe_globals([argparse.Namespace]):
        assert numbagrad.load(_save(ns)).a == 1
    assert argparse.Namespace not in torch.serialization.get_safe_globals()  # removed on exit
    assert argparse.Namespace not in numbagrad.serialization.get_safe_globals()


def test_samplers_without_torch():
    from numbagrad.utils.data import (
        BatchSampler,
        DataLoader,
        RandomSampler,
        SubsetRandomSampler,
        TensorDataset,
        WeightedRandomSampler,
    )

    g = numbagrad.Generator().manual_seed(0)
    assert sorted(SubsetRandomSampler([3, 5, 7], generator=g)) == [3, 5, 7]
    assert len(SubsetRandomSampler(range(4))) == 4
    w = WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], 5, generator=g)
    assert list(w) == [2] * 5 and len(w) == 5
    assert sorted(WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False)) == [0, 1, 2]
    rs = RandomSampler(range(3), replacement=True, num_samples=7, generator=g)
    assert len(list(rs)) == 7 and set(rs) <= {0, 1, 2}
    ds = TensorDataset(numbagrad.arange(6.0))
    loader = DataLoader(ds, batch_size=2, sampler=SubsetRandomSampler([0, 2, 4]))
    assert sorted(v for (b,) in loader for v in b.tolist()) == [0.0, 2.0, 4.0]
    bs = BatchSampler(SubsetRandomSampler([1, 3]), batch_size=2, drop_last=False)
    assert [sorted(b.tolist()) for (b,) in DataLoader(ds, batch_sampler=bs)] == [[1.0, 3.0]]


SAMPLER_ERRORS = [
    "WeightedRandomSampler([1.0, 2.0], 0)",
    "WeightedRandomSampler([1.0, 2.0], True)",
    "WeightedRandomSampler([1.0, 2.0], 2, replacement=1)",
    "WeightedRandomSampler([[1.0, 2.0]], 2)",
    "list(WeightedRandomSampler([1.0, 1.0], 3, replacement=False))",
    "RandomSampler(range(3), replacement=1)",
    "RandomSampler(range(3), num_samples=0)",
    "BatchSampler(range(3), 2, drop_last=0)",
    "BatchSampler(range(3), 0, drop_last=False)",
    "len(WeightedRandomSampler([1.0, 2.0], 4))",
    "len(SubsetRandomSampler([4, 5]))",
    "len(BatchSampler(SubsetRandomSampler([4, 5, 6]), 2, drop_last=True))",
]


@pytest.mark.parametrize("call", SAMPLER_ERRORS)
def test_samplers_match_torch(call):
    _torch()
    import torch.utils.data as theirs

    import numbagrad.utils.data as ours

    a = _outcome(lambda: eval(call, vars(ours)))
    b = _outcome(lambda: eval(call, vars(theirs)))
    if a[0] == "raise" and "cannot sample" in b[-1]:  # (multinomial's own message)
        assert a[:2] == b[:2]
    else:
        assert a == b
    names = {"Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler"}
    names |= {"WeightedRandomSampler", "BatchSampler"}
    assert names <= set(ours.__all__) & set(theirs.__all__)


CUDA_TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "BoolTensor"]


@needs_no_cuda
def test_legacy_cuda_types_without_cuda():
    for name in CUDA_TYPES:
        cls = getattr(numbagrad.cuda, name)
        assert repr(cls) == f"<class 'torch.cuda.{name}'>"
        assert cls.dtype is getattr(numbagrad, name).dtype and cls.is_cuda
        assert not isinstance(numbagrad.zeros(1, dtype=cls.dtype), cls)
        assert isinstance(numbagrad.zeros(1, dtype=cls.dtype), getattr(numbagrad, name))
        for args in [(2,), (), ([1],)]:
            with pytest.raises(TypeError, match=f"^type torch.cuda.{name} not available. Torch"):
                cls(*args)


@needs_no_cuda
def test_legacy_cuda_types_match_torch():
    torch = _torch()
    if torch.cuda.is_available():
        pytest.skip("torch sees a GPU")
    for name in CUDA_TYPES:
        ours, theirs = getattr(numbagrad.cuda, name), getattr(torch.cuda, name)
        assert (
            repr(ours) == repr(theirs)
            and str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        )
        assert ours.is_cuda == theirs.is_cuda
        for args in [(2,), (2, 3), ([1],)]:
            o, t = _outcome(lambda c=ours, a=args: c(*a)), _outcome(lambda c=theirs, a=args: c(*a))
            assert o[:2] == t[:2] and o[2].startswith(t[2]), (name, args)
        z = numbagrad.zeros(1, dtype=ours.dtype)
        assert isinstance(z, ours) == isinstance(torch.zeros(1, dtype=theirs.dtype), theirs)


LEGACY_SIM = r"""
import numbagrad
for name in ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"]:
    cls = getattr(numbagrad.cuda, name)
    x = cls(2, 3)
    assert x.is_cuda and x.dtype is cls.dtype and x.shape == (2, 3), name
    assert isinstance(x, cls) and not isinstance(x, getattr(numbagrad, name)), name
    assert not isinstance(x.cpu(), cls) and isinstance(x.cpu(), getattr(numbagrad, name))
    assert x.type() == "torch.cuda." + name
y = numbagrad.cuda.FloatTensor([1, 2])
assert y.is_cuda and y.tolist() == [1.0, 2.0] and numbagrad.cuda.FloatTensor(y) is y
z = numbagrad.ones(2).type(numbagrad.cuda.DoubleTensor)
assert z.is_cuda and z.dtype is numbagrad.float64
w = z.type("torch.FloatTensor")
assert not w.is_cuda and w.dtype is numbagrad.float32
assert numbagrad.ones(2).type("torch.cuda.LongTensor").type() == "torch.cuda.LongTensor"
for bad in (lambda: numbagrad.cuda.FloatTensor(numbagrad.ones(2)),
            lambda: numbagrad.FloatTensor(y),
            lambda: numbagrad.cuda.FloatTensor(2, device="cpu")):
    try:
        bad()
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__)
    else:
        raise AssertionError("accepted")
print("ok")
"""


def test_legacy_cuda_types_with_cuda_simulator():
    pytest.importorskip("numba_cuda")
    r = _run(LEGACY_SIM, {"NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["TypeError", "TypeError", "RuntimeError", "ok"]
