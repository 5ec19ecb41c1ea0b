"""Random numbers drawn on the device (NOTE [CUDA random numbers]): the Philox4x32-10 words
against the Random123 known answers and a host reference, independence from the grid,
reproducibility under the seeds and states, statistics, dtypes and shapes, errors, and no
host<->device copy."""

import math

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda import random as KR

# -- a host reference of Philox4x32-10 (Random123), in Python ints --------------------------
M32 = 0xFFFFFFFF


def philox(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def ref_words(seed, offset, i, attempt=0):
    b = offset // 4 + i
    return philox((b & M32, b >> 32, attempt, 0), (seed & M32, seed >> 32))


def ref_u53(w0, w1):
    return ((w0 >> 5) * 67108864 + (w1 >> 6)) / 2.0**53


def test_reference_philox_matches_random123_known_answers():
    assert philox((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert philox((M32,) * 4, (M32, M32)) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    assert philox((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0)) == (
        0xD16CFE09,
        0x94FDCCEB,
        0x5001E420,
        0x24126EA1,
    )


def _state(g=None):
    s = (numbagrad.cuda.get_rng_state() if g is None else g.get_state()).numpy().view(np.uint64)
    return int(s[0]), int(s[1])


@pytest.mark.parametrize("seed", [0, 2**64 - 3])
def test_device_words_are_philox_of_seed_offset_and_index(seed):
    g = numbagrad.Generator("cuda").manual_seed(seed)
    numbagrad.rand(3, device="cuda", generator=g)  # offset 12: the next draw starts at block 3
    assert _state(g) == (seed, 12)
    n = 40  # more elements than the simulator's launch has threads: the grid-stride loop
    u = numbagrad.rand(n, dtype=numbagrad.float64, device="cuda", generator=g).cpu().numpy()
    want = [ref_u53(*ref_words(seed, 12, i)[:2]) for i in range(n)]
    np.testing.assert_array_equal(u, want)
    assert _state(g) == (seed, 12 + 4 * n)
    # float32: the top 24 bits of the first word
    u32 = numbagrad.rand(n, device="cuda", generator=g).cpu().numpy()
    want32 = [(ref_words(seed, 12 + 4 * n, i)[0] >> 8) / 2.0**24 for i in range(n)]
    np.testing.assert_array_equal(u32, np.float32(want32))
    # normals: Box-Muller of two 53-bit uniforms
    z = numbagrad.randn(n, dtype=numbagrad.float64, device="cuda", generator=g).cpu().numpy()
    w = [ref_words(seed, 12 + 8 * n, i) for i in range(n)]
    want_z = [
        math.sqrt(-2 * math.log(1 - ref_u53(a, b))) * math.cos(2 * math.pi * ref_u53(c, d))
        for a, b, c, d in w
    ]
    np.testing.assert_allclose(z, want_z, rtol=1e-14, atol=1e-14)


def test_values_do_not_depend_on_the_grid():
    from numbagrad.kernels.cuda.array import CudaArray

    n = 37
    outs = []
    for blocks, threads in [(1, 1), (1, 8), (3, 16)]:
        out = CudaArray.empty((n,), np.float64)
        KR.sample_kernel[blocks, threads](
            KR.NORMAL, n, np.uint64(5), np.uint64(0), np.uint64(7), 0.0, 1.0, 53, 1.0,
            out._buf, 0, (n,), (1,),
        )  # fmt: skip
        outs.append(out.to_host())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def test_manual_seed_reproduces_and_streams_advance():
    numbagrad.manual_seed(123)
    a = numbagrad.randn(5, 3, device="cuda").cpu().numpy()
    b = numbagrad.randn(5, 3, device="cuda").cpu().numpy()
    numbagrad.manual_seed(123)
    np.testing.assert_array_equal(numbagrad.randn(5, 3, device="cuda").cpu().numpy(), a)
    np.testing.assert_array_equal(numbagrad.randn(5, 3, device="cuda").cpu().numpy(), b)
    assert not np.array_equal(a, b)
    # numbagrad.cuda.manual_seed seeds the CUDA generator only; the CPU stream is untouched
    numbagrad.manual_seed(1)
    cpu = numbagrad.rand(4).numpy()
    numbagrad.manual_seed(1)
    numbagrad.cuda.manual_seed(123)
    np.testing.assert_array_equal(numbagrad.randn(5, 3, device="cuda").cpu().numpy(), a)
    np.testing.assert_array_equal(numbagrad.rand(4).numpy(), cpu)
    numbagrad.cuda.manual_seed_all(123)
    assert numbagrad.cuda.initial_seed() == 123
    np.testing.assert_array_equal(numbagrad.randn(5, 3, device="cuda").cpu().numpy(), a)
    # the CUDA stream is not the CPU one (as in PyTorch)
    numbagrad.manual_seed(7)
    c = numbagrad.rand(6, device="cuda").cpu().numpy()
    numbagrad.manual_seed(7)
    assert not np.array_equal(c, numbagrad.rand(6).numpy())


def test_rng_state_get_set():
    numbagrad.cuda.manual_seed(9)
    state = numbagrad.cuda.get_rng_state()
    assert state.dtype == numbagrad.int64 and tuple(state.shape) == (2,) and not state.is_cuda
    a = numbagrad.rand(4, device="cuda").cpu().numpy()
    numbagrad.rand(4, device="cuda")
    numbagrad.cuda.set_rng_state(state)
    np.testing.assert_array_equal(numbagrad.rand(4, device="cuda").cpu().numpy(), a)
    assert len(numbagrad.cuda.get_rng_state_all()) == numbagrad.cuda.device_count()
    numbagrad.cuda.set_rng_state_all([state])
    np.testing.assert_array_equal(numbagrad.rand(4, device="cuda").cpu().numpy(), a)
    assert numbagrad.cuda.default_generators[0].device.type == "cuda"
    with pytest.raises(RuntimeError, match="offset"):
        numbagrad.cuda.set_rng_state(numbagrad.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="int64 CPU tensor of 2 values"):
        numbagrad.cuda.set_rng_state(numbagrad.tensor([1, 2, 3]))


def test_generators_are_checked_against_the_device():
    gc, gg = numbagrad.Generator(), numbagrad.Generator("cuda")
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        numbagrad.rand(2, device="cuda", generator=gc)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
        numbagrad.rand(2, generator=gg)
    gg.manual_seed(4)
    a = numbagrad.randint(0, 10, (6,), device="cuda", generator=gg).cpu().numpy()
    gg.manual_seed(4)
    b = numbagrad.randint(0, 10, (6,), device="cuda", generator=gg).cpu().numpy()
    np.testing.assert_array_equal(a, b)


def _ks(x, cdf):
    """The Kolmogorov-Smirnov statistic of the sample ``x`` against ``cdf``."""
    x = np.sort(x)
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


N = 4096
KS_BOUND = 1.63 / math.sqrt(N)  # the 1% critical value


def test_uniform_statistics():
    numbagrad.manual_seed(0)
    for dt in (numbagrad.float64, numbagrad.float32):
        u = numbagrad.rand(N, dtype=dt, device="cuda").cpu().numpy().astype(np.float64)
        assert u.min() >= 0.0 and u.max() < 1.0
        assert abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 1 / 12) < 0.01
        assert _ks(u, lambda t: t) < KS_BOUND


def test_normal_statistics():
    numbagrad.manual_seed(1)
    z = numbagrad.randn(N, dtype=numbagrad.float64, device="cuda").cpu().numpy()
    assert abs(z.mean()) < 0.06 and abs(z.var() - 1) < 0.08
    cdf = np.vectorize(lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2))))
    assert _ks(z, cdf) < KS_BOUND
    x = numbagrad.normal(3.0, 0.5, (N,), device="cuda").cpu().numpy()
    assert abs(x.mean() - 3.0) < 0.03 and abs(x.std() - 0.5) < 0.03


def test_integer_statistics_and_full_range():
    numbagrad.manual_seed(2)
    r = numbagrad.randint(-3, 4, (N,), device="cuda").cpu().numpy()
    counts = np.bincount(r + 3, minlength=7)
    assert r.min() == -3 and r.max() == 3
    chi2 = ((counts - N / 7) ** 2 / (N / 7)).sum()
    assert chi2 < 16.8  # 6 degrees of freedom, 1%
    # the widest range PyTorch takes (2**64 - 1 values): both halves (the v >= 2**63 branch)
    big = numbagrad.randint(-(2**63), 2**63 - 1, (40,), device="cuda").cpu().numpy()
    assert (big < 0).any() and (big > 0).any()
    assert len(set(big.tolist())) == 40


def test_exponential_and_bernoulli_statistics():
    numbagrad.manual_seed(3)
    e = numbagrad.empty(N, dtype=numbagrad.float64, device="cuda").exponential_(2.0)
    e = e.cpu().numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.03
    assert _ks(e, lambda t: 1 - np.exp(-2 * t)) < KS_BOUND
    b = numbagrad.empty(N, device="cuda").bernoulli_(0.3).cpu().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.03


def test_float_spacing_and_uniform_bounds():
    u32 = numbagrad.rand(300, device="cuda").cpu().numpy().astype(np.float64)
    assert np.all(u32 * 2**24 == np.floor(u32 * 2**24))  # multiples of 2**-24
    u16 = numbagrad.rand(300, dtype=numbagrad.float16, device="cuda").cpu().numpy()
    assert u16.dtype == np.float16 and np.all(u16 < 1)
    assert np.all(u16.astype(np.float64) * 2**11 == np.floor(u16.astype(np.float64) * 2**11))
    x = numbagrad.empty(40, device="cuda").uniform_(-2.0, 5.0).cpu().numpy()
    assert x.min() >= -2.0 and x.max() < 5.0
    # [1, 1 + 2**-23) holds one float32: values that round up to ``to`` become ``from``
    y = numbagrad.empty(40, device="cuda").uniform_(1.0, 1.0 + 2**-23).cpu().numpy()
    assert np.all(y == 1.0)
    assert numbagrad.empty(3, device="cuda").uniform_(2.0, 2.0).tolist() == [2.0, 2.0, 2.0]


def test_dtypes_shapes_and_like():
    x = numbagrad.rand(2, 3, device="cuda")
    assert x.is_cuda and tuple(x.shape) == (2, 3) and x.dtype == numbagrad.float32
    assert numbagrad.randn((4,), dtype=numbagrad.float64, device="cuda").dtype == numbagrad.float64
    assert numbagrad.rand(0, 3, device="cuda").shape == (0, 3)
    assert numbagrad.randn((), device="cuda").shape == ()
    t = numbagrad.zeros(2, 2, dtype=numbagrad.float64, device="cuda")
    for f in (numbagrad.rand_like, numbagrad.randn_like):
        y = f(t)
        assert y.is_cuda and y.dtype == numbagrad.float64 and tuple(y.shape) == (2, 2)
    y = numbagrad.randint_like(t, 5)
    assert (
        y.is_cuda and y.dtype == numbagrad.float64 and set(y.cpu().numpy().ravel()) <= set(range(5))
    )
    for dt in (numbagrad.int32, numbagrad.float32, numbagrad.bool):
        r = numbagrad.randint(0, 2, (8,), dtype=dt, device="cuda")
        assert r.dtype == dt and set(r.cpu().numpy().astype(int).tolist()) <= {0, 1}
    r = numbagrad.randint(5, (3, 2), device="cuda")
    assert r.dtype == numbagrad.int64 and r.shape == (3, 2)
    x = numbagrad.rand(2, device="cuda", requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_errors():
    with pytest.raises(NotImplementedError, match=r"normal_kernel_cuda.*Long"):
        numbagrad.randn(2, dtype=numbagrad.int64, device="cuda")
    with pytest.raises(NotImplementedError, match="check_uniform_bounds"):
        numbagrad.rand(2, dtype=numbagrad.int64, device="cuda")
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        numbagrad.randint(5, 5, (2,), device="cuda")
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for int32"):
        numbagrad.randint(0, 2**31 + 1, (2,), dtype=numbagrad.int32, device="cuda")
    with pytest.raises(RuntimeError, match="negative dimension"):
        numbagrad.randn(-1, device="cuda")
    with pytest.raises(RuntimeError, match="negative dimension"):
        numbagrad.randperm(-1, device="cuda")
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        numbagrad.empty(2, device="cuda").bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="probability must be in"):
        numbagrad.bernoulli(numbagrad.tensor([0.5, 2.0], device="cuda"))
    with pytest.raises(RuntimeError, match=r"std >= 0\.0"):
        numbagrad.normal(
            numbagrad.zeros(2, device="cuda"), numbagrad.tensor([1.0, -1.0], device="cuda")
        )


def test_randperm_normal_bernoulli_and_random_():
    p = numbagrad.randperm(40, device="cuda")
    assert p.is_cuda and p.dtype == numbagrad.int64
    assert sorted(p.cpu().numpy().tolist()) == list(range(40))
    assert numbagrad.randperm(0, device="cuda").shape == (0,)
    assert numbagrad.randperm(5, dtype=numbagrad.int32, device="cuda").dtype == numbagrad.int32
    mean = numbagrad.tensor([0.0, 10.0, -5.0], device="cuda")
    std = numbagrad.tensor([0.0, 0.0, 0.0], device="cuda")
    out = numbagrad.normal(mean, std)
    assert out.is_cuda and out.tolist() == [0.0, 10.0, -5.0]
    out = numbagrad.normal(mean.double(), 1.0)
    assert out.is_cuda and out.dtype == numbagrad.float64 and out.shape == (3,)
    probs = numbagrad.tensor([[0.0, 1.0], [1.0, 0.0]], device="cuda")
    assert numbagrad.bernoulli(probs).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert numbagrad.bernoulli(probs, 1.0).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    x = numbagrad.zeros(2, 2, device="cuda").bernoulli_(probs)
    assert x.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    r = numbagrad.zeros(40, dtype=numbagrad.int32, device="cuda").random_(3, 9).cpu().numpy()
    assert r.min() >= 3 and r.max() < 9 and r.dtype == np.int32
    f = numbagrad.zeros(10, device="cuda").random_().cpu().numpy()
    assert np.all(f == np.floor(f)) and f.max() <= 2**24


def test_in_place_fills_through_views_and_the_graph():
    x = numbagrad.zeros(4, 6, device="cuda")
    x[:, ::2].uniform_(1.0, 2.0)
    h = x.cpu().numpy()
    assert np.all(h[:, 1::2] == 0) and np.all(h[:, ::2] >= 1.0)
    w = numbagrad.ones(3, device="cuda", requires_grad=True)
    y = w * 2
    y.normal_()  # the fill replaces y: its old value gets no gradient
    (y * w).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), y.detach().cpu().numpy())


def test_nn_init_and_dropout_on_the_device():
    lin = numbagrad.nn.Linear(5, 4).to("cuda")
    numbagrad.manual_seed(0)
    before = dict(_driver.COPIES)
    numbagrad.nn.init.kaiming_uniform_(lin.weight, a=math.sqrt(5))
    numbagrad.nn.init.normal_(lin.bias, 0.0, 0.01)
    numbagrad.nn.init.xavier_normal_(lin.weight)
    d = numbagrad.nn.functional.dropout(numbagrad.ones(40, device="cuda"), 0.5)
    assert _driver.COPIES == before
    assert lin.weight.is_cuda and lin.weight.grad is None and not lin.weight.grad_fn
    assert set(np.unique(d.cpu().numpy())) <= {0.0, 2.0}


def test_vmap_randomness_on_the_device():
    from numbagrad.func import vmap

    x = numbagrad.zeros(3, 4, device="cuda")
    diff = vmap(lambda r: r + numbagrad.rand(4, device="cuda"), randomness="different")(x)
    same = vmap(lambda r: r + numbagrad.rand(4, device="cuda"), randomness="same")(x)
    assert diff.is_cuda and same.is_cuda
    d, s = diff.cpu().numpy(), same.cpu().numpy()
    assert not np.array_equal(d[0], d[1]) and np.array_equal(s[0], s[1])


def test_no_host_copy_when_drawing():
    numbagrad.manual_seed(0)
    t = numbagrad.zeros(3, 2, device="cuda")
    before = dict(_driver.COPIES)
    numbagrad.rand(3, 2, device="cuda")
    numbagrad.randn(3, device="cuda", dtype=numbagrad.float64)
    numbagrad.randint(0, 9, (4,), device="cuda")
    numbagrad.randperm(6, device="cuda")
    numbagrad.normal(0.0, 2.0, (3,), device="cuda")
    numbagrad.normal(t, 1.0)
    numbagrad.bernoulli(t, 0.5)
    numbagrad.rand_like(t), numbagrad.randn_like(t), numbagrad.randint_like(t, 3)
    t.uniform_(), t.normal_(), t.exponential_(), t.bernoulli_(0.2), t.random_(0, 4)
    assert _driver.COPIES == before


def test_multinomial_on_the_device():
    numbagrad.manual_seed(5)
    w = numbagrad.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 0.0, 0.0]], device="cuda")
    before = dict(_driver.COPIES)
    s = numbagrad.multinomial(w, 600, replacement=True)
    assert _driver.COPIES["h2d"] == before["h2d"] and _driver.COPIES["d2h"] == before["d2h"] + 1
    assert s.is_cuda and s.dtype == numbagrad.int64 and s.shape == (2, 600)
    freq = [np.bincount(r, minlength=4) / 600 for r in s.cpu().numpy()]
    np.testing.assert_allclose(freq[0], [0.1, 0.0, 0.6, 0.3], atol=0.06)
    np.testing.assert_allclose(freq[1], [0.5, 0.5, 0.0, 0.0], atol=0.07)
    assert freq[0][1] == 0 and freq[1][2] == freq[1][3] == 0  # weight 0: never drawn
    # without replacement: distinct categories of positive weight
    for _ in range(3):
        s = numbagrad.multinomial(w, 2).cpu().numpy()
        assert len(set(s[0])) == 2 and 1 not in s[0] and set(s[1]) == {0, 1}
    one = numbagrad.multinomial(numbagrad.tensor([0.0, 0.0, 1.0], device="cuda"), 3, True)
    assert one.shape == (3,) and one.tolist() == [2, 2, 2]
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        numbagrad.multinomial(w, 3)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        numbagrad.multinomial(numbagrad.zeros(2, 3, device="cuda"), 1, True)
    with pytest.raises(RuntimeError, match="`inf`, `nan` or element < 0"):
        numbagrad.multinomial(numbagrad.tensor([1.0, -1.0], device="cuda"), 1, True)
    with pytest.raises(RuntimeError, match="n_sample > prob_dist"):
        numbagrad.multinomial(w, 5)


def test_poisson_on_the_device():
    numbagrad.manual_seed(6)
    rates = [0.0, 0.5, 3.0, 25.0, 1000.0]  # Knuth below 10, PTRS above
    lam = numbagrad.tensor(rates, dtype=numbagrad.float64, device="cuda").expand(300, 5)
    before = dict(_driver.COPIES)
    p = numbagrad.poisson(lam)
    assert _driver.COPIES["h2d"] == before["h2d"] and _driver.COPIES["d2h"] == before["d2h"] + 1
    assert p.is_cuda and p.dtype == numbagrad.float64 and p.shape == (300, 5)
    p = p.cpu().numpy()
    assert np.all(p == np.floor(p)) and np.all(p[:, 0] == 0)
    se = np.sqrt(np.array(rates[1:]) / 300)
    assert np.all(np.abs(p[:, 1:].mean(0) - rates[1:]) < 4 * se)
    assert np.all(np.abs(p[:, 1:].var(0) / rates[1:] - 1) < 0.3)
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        numbagrad.poisson(numbagrad.tensor([1.0, -1.0], device="cuda"))


def test_distributions_sample_on_the_device():
    D = numbagrad.distributions
    loc = numbagrad.zeros(3, device="cuda", requires_grad=True)
    scale = numbagrad.ones(3, device="cuda")
    # (argument validation, on by default as in PyTorch, reads its verdict on the host, as
    # PyTorch's does: without it, sampling makes no copy)
    before = dict(_driver.COPIES)
    x = D.Normal(loc, scale, validate_args=False).rsample((2,))
    u = D.Uniform(loc.detach(), scale, validate_args=False).sample()
    assert _driver.COPIES == before
    probs = numbagrad.full((3,), 0.5, device="cuda")
    b = D.Bernoulli(probs=probs, validate_args=False).sample((2,))
    assert _driver.COPIES["d2h"] == before["d2h"] + 1  # the check that 0 <= p <= 1
    assert _driver.COPIES["h2d"] == before["h2d"]
    assert x.is_cuda and x.shape == (2, 3) and u.is_cuda and b.is_cuda and b.shape == (2, 3)
    x.sum().backward()
    assert loc.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="GreaterThan"):
        D.Normal(loc, -scale)  # validated on the device, the verdict read once


def test_trunc_normal_on_the_device():
    numbagrad.manual_seed(8)
    w = numbagrad.empty(1000, dtype=numbagrad.float64, device="cuda")
    before = dict(_driver.COPIES)
    out = numbagrad.nn.init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert _driver.COPIES == before and out is w
    x = w.cpu().numpy()
    assert x.min() >= -1.0 and x.max() <= 2.0

    def phi(t):
        return 0.5 * (1 + math.erf((t - 1.0) / (2.0 * math.sqrt(2))))

    lo, hi = phi(-1.0), phi(2.0)
    cdf = np.vectorize(lambda t: (phi(t) - lo) / (hi - lo))
    assert _ks(x, cdf) < 1.63 / math.sqrt(x.size)
    # a far tail (rejection would take ~700 draws per value): still inside the bounds
    with pytest.warns(UserWarning, match="more than 2 std"):  # as on the CPU
        t = numbagrad.nn.init.trunc_normal_(numbagrad.empty(40, device="cuda"), a=3.0, b=3.5)
    t = t.cpu().numpy()
    assert t.min() >= 3.0 and t.max() <= 3.5 and np.median(t) < 3.25


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 2)])
def test_orthogonal_init_draws_and_factors_on_the_device(shape):
    t = numbagrad.empty(*shape, device="cuda")
    numbagrad.manual_seed(0)
    before = dict(_driver.COPIES)
    numbagrad.nn.init.orthogonal_(t, gain=2.0)
    assert _driver.COPIES == before  # drawn, factored and written on the device
    assert t.device.type == "cuda" and t.dtype == numbagrad.float32
    q = t.cpu().numpy().reshape(shape[0], -1).astype(np.float64)
    gram = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(gram, 4 * np.eye(gram.shape[0]), atol=1e-5)
    numbagrad.manual_seed(0)
    again = numbagrad.nn.init.orthogonal_(numbagrad.empty(*shape, device="cuda"), gain=2.0)
    np.testing.assert_array_equal(again.cpu().numpy(), t.cpu().numpy())
