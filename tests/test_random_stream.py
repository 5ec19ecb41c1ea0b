"""numbagrad's CPU random numbers are PyTorch's, bit for bit (NOTE [PyTorch's CPU random
stream] in numbagrad/kernels/cpu/random.py): the same seed gives the same numbers in every
sampler, for every size (the normal sampler changes algorithm at 16 elements), in float32
and float64, and generator states move between the two libraries."""

import math

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

SEEDS = (0, 1, 7, 42, 2**32 + 5, 12345678901)
SIZES = (0, 1, 7, 15, 16, 17, 100, 1001)
DTYPES = ("float32", "float64")


def _np(x):
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    return np.ascontiguousarray(x.detach().numpy())


def _same(a, b):
    """Bit-identical arrays (same shape and dtype, same bytes)."""
    a, b = _np(a), _np(b)
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(a.view(np.uint8), b.view(np.uint8))
    )


def _run(case, seed):
    torch.manual_seed(seed)
    want = case(torch)
    numbagrad.manual_seed(seed)
    got = case(numbagrad)
    return got, want


def _sweep(make):
    """``make(module, n, dtype)`` over SEEDS x SIZES x DTYPES; the failing combinations."""
    bad = []
    for dt in DTYPES:
        for n in SIZES:
            for seed in SEEDS:
                got, want = _run(lambda m, n=n, dt=dt: make(m, n, getattr(m, dt)), seed)
                if not _same(got, want):
                    bad.append((dt, n, seed))
    return bad


SAMPLERS = {
    "rand": lambda m, n, dt: m.rand(n, dtype=dt),
    "randn": lambda m, n, dt: m.randn(n, dtype=dt),
    "randn_2d": lambda m, n, dt: m.randn(3, n, dtype=dt),
    "uniform_": lambda m, n, dt: m.empty(n, dtype=dt).uniform_(-1.5, 2.25),
    "normal_": lambda m, n, dt: m.empty(n, dtype=dt).normal_(0.5, 2.0),
    "normal_tensors": lambda m, n, dt: m.normal(m.ones(n, dtype=dt), m.full((n,), 3.0, dtype=dt)),
    "normal_mean_tensor": lambda m, n, dt: m.normal(m.arange(n, dtype=dt) / 7 - 1, 2.5),
    "normal_std_tensor": lambda m, n, dt: m.normal(0.5, m.arange(n, dtype=dt) / (n + 1)),
    "normal_size": lambda m, n, dt: m.normal(-1.0, 0.5, (n,), dtype=dt),
    "exponential_": lambda m, n, dt: m.empty(n, dtype=dt).exponential_(1.5),
    "bernoulli_p_tensor": lambda m, n, dt: m.bernoulli(m.arange(n, dtype=dt) / (n + 1)),
    "bernoulli_scalar": lambda m, n, dt: m.empty(n, dtype=dt).bernoulli_(0.3),
    "randint_small": lambda m, n, dt: m.randint(-3, 1000, (n,)).to(dt),
    "randint_wide": lambda m, n, dt: m.randint(0, 2**40, (n,)).to(dt),
    "random_": lambda m, n, dt: m.empty(n, dtype=dt).random_(),
    "randperm": lambda m, n, dt: m.randperm(n).to(dt),
    "dropout": lambda m, n, dt: m.nn.functional.dropout(m.ones(n, dtype=dt), 0.3),
    "rrelu": lambda m, n, dt: m.nn.functional.rrelu(m.arange(n, dtype=dt) / 3 - 5, training=True),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_matches_pytorch_bit_for_bit(name):
    assert _sweep(SAMPLERS[name]) == []


@pytest.mark.parametrize("dt", DTYPES)
def test_a_sequence_of_draws_and_the_normal_cache(dt):
    # the scalar Box-Muller path caches its second sample; fills of >= 16 leave it alone
    def case(m):
        d = getattr(m, dt)
        parts = [m.randn(1, dtype=d), m.randn(3, dtype=d), m.rand(2, dtype=d)]
        parts += [m.randn(20, dtype=d), m.randn(1, dtype=d), m.randint(0, 5, (3,)).to(d)]
        parts += [m.randn(17, dtype=d), m.empty(5, dtype=d).normal_(), m.randperm(9).to(d)]
        return m.cat(parts)

    for seed in SEEDS:
        got, want = _run(case, seed)
        assert _same(got, want), seed
        assert _same(numbagrad.get_rng_state().numpy().view(np.uint8), torch.get_rng_state())


def test_rng_state_is_pytorchs_layout_and_moves_both_ways():
    torch.manual_seed(3)
    torch.randn(5)  # leaves a cached normal
    numbagrad.set_rng_state(torch.get_rng_state().numpy())
    assert _same(numbagrad.randn(7), torch.randn(7))
    assert _same(numbagrad.rand(40), torch.rand(40))
    state = numbagrad.get_rng_state()
    assert state.dtype is numbagrad.int64 and tuple(state.shape) == (632,)
    torch.set_rng_state(torch.from_numpy(state.numpy().view(np.uint8).copy()))
    assert _same(numbagrad.randn(3, dtype=numbagrad.float64), torch.randn(3, dtype=torch.float64))
    numbagrad.set_rng_state(state)  # its own int64 form
    again = numbagrad.randn(3, dtype=numbagrad.float64)
    torch.set_rng_state(torch.from_numpy(state.numpy().view(np.uint8).copy()))
    assert _same(again, torch.randn(3, dtype=torch.float64))


def test_generator_objects():
    g, tg = numbagrad.Generator(), torch.Generator()
    assert g.initial_seed() == tg.initial_seed() == 67280421310721
    assert _same(numbagrad.rand(5, generator=g), torch.rand(5, generator=tg))
    for s in (5, -3, 2**64 - 1):
        g.manual_seed(s)
        tg.manual_seed(s)
        assert g.initial_seed() == tg.initial_seed()
        assert _same(numbagrad.randn(4, generator=g), torch.randn(4, generator=tg))
        assert _same(g.get_state().numpy().view(np.uint8), tg.get_state())
    st = g.get_state()
    a = numbagrad.randperm(10, generator=g)
    g.set_state(st)
    assert _same(numbagrad.randperm(10, generator=g), a)
    # a generator's draws leave the global stream alone
    numbagrad.manual_seed(1)
    torch.manual_seed(1)
    numbagrad.rand(3, generator=g)
    assert _same(numbagrad.rand(3), torch.rand(3))


def test_bad_states_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match="size 5056"):
        numbagrad.set_rng_state(np.zeros(3, np.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        numbagrad.set_rng_state(np.zeros(5056, np.uint8))
    with pytest.raises(TypeError):
        numbagrad.set_rng_state(numbagrad.zeros(632))


@pytest.mark.parametrize("dt", DTYPES)
def test_strided_fills_draw_in_memory_order(dt):
    # a non-contiguous tensor: ATen's element-by-element path in memory order (normal_:
    # the scalar Box-Muller path even from 16 elements)
    def case(m):
        d = getattr(m, dt)
        a = m.empty(6, 5, dtype=d).t().normal_()
        b = m.empty(4, 9, dtype=d)[:, ::2].uniform_(-1.0, 1.0)
        return m.cat([a.reshape(-1), b.reshape(-1)])

    for seed in SEEDS[:3]:
        assert _same(*_run(case, seed))


@pytest.mark.parametrize("dt", DTYPES)
def test_multinomial(dt):
    cases = {
        "one": lambda m: m.multinomial(m.tensor([0.2, 0.3, 0.5], dtype=getattr(m, dt)), 1),
        "norep": lambda m: m.multinomial(m.rand(4, 9, dtype=getattr(m, dt)), 5),
        "rep": lambda m: m.multinomial(m.rand(3, 6, dtype=getattr(m, dt)), 40, True),
        "rep_1d": lambda m: m.multinomial(m.tensor([1.0, 0.0, 3.0], dtype=getattr(m, dt)), 9, True),
    }
    for name, case in cases.items():
        for seed in SEEDS:
            assert _same(*_run(case, seed)), (name, seed)


@pytest.mark.parametrize("dt", DTYPES)
def test_poisson(dt):
    def case(m):
        return m.poisson(
            m.tensor([0.0, 0.3, 4.0, 9.5, 10.0, 37.0, 250.0] * 3, dtype=getattr(m, dt))
        )

    for seed in SEEDS:
        assert _same(*_run(case, seed)), seed


def test_complex_and_half_draws():
    cases = [
        lambda m: m.view_as_real(m.randn(5, dtype=m.complex64)),
        lambda m: m.view_as_real(m.randn(9, dtype=m.complex128)),
        lambda m: m.view_as_real(m.rand(3, dtype=m.complex64)),
        lambda m: m.rand(37, dtype=m.float16),
        lambda m: m.randn(37, dtype=m.float16),
    ]
    for case in cases:
        for seed in SEEDS[:3]:
            assert _same(*_run(case, seed))


@pytest.mark.parametrize("dt", DTYPES)
def test_random_integer_ranges(dt):
    cases = [
        lambda m: m.empty(50, dtype=m.int64).random_(),
        lambda m: m.empty(50, dtype=m.int32).random_(),
        lambda m: m.empty(50, dtype=m.bool).random_(),
        lambda m: m.empty(50, dtype=getattr(m, dt)).random_(3, 2**23),
        lambda m: m.empty(50, dtype=m.float64).random_(3, 2**30),
        lambda m: m.empty(50, dtype=m.int64).random_(-(2**62), 2**62),
        lambda m: m.randint(5, (20,), dtype=m.int32),
    ]
    for case in cases:
        for seed in SEEDS[:3]:
            assert _same(*_run(case, seed))


def test_float_random_range_beyond_the_mantissa_warns_and_is_pytorchs():
    def case(m):
        with pytest.warns(UserWarning, match="to - 1 is out of bounds"):
            return m.empty(50).random_(3, 2**30)  # PyTorch moves ``to`` inward: 2**30 - 64

    assert _same(*_run(case, 5))


INITS = {
    "uniform_": lambda m, t: m.nn.init.uniform_(t, -0.3, 0.7),
    "normal_": lambda m, t: m.nn.init.normal_(t, 0.1, 0.2),
    "kaiming_uniform_": lambda m, t: m.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
    "kaiming_normal_": lambda m, t: m.nn.init.kaiming_normal_(t, mode="fan_out"),
    "xavier_uniform_": lambda m, t: m.nn.init.xavier_uniform_(t, gain=1.5),
    "xavier_normal_": lambda m, t: m.nn.init.xavier_normal_(t),
    "trunc_normal_": lambda m, t: m.nn.init.trunc_normal_(t, std=0.5, a=-0.6, b=0.6),
    "trunc_normal_tail": lambda m, t: m.nn.init.trunc_normal_(t, a=2.0, b=3.0),
}


@pytest.mark.parametrize("name", sorted(INITS))
@pytest.mark.parametrize("dt", DTYPES)
def test_nn_init_matches_pytorch(name, dt):
    for shape in ((3, 5), (16, 4), (7, 6, 3)):
        for seed in SEEDS[:3]:

            def case(m, shape=shape):
                return INITS[name](m, m.empty(*shape, dtype=getattr(m, dt)))

            assert _same(*_run(case, seed)), (shape, seed)


def test_orthogonal_draws_pytorchs_normals():
    # the draws are PyTorch's; the QR factorisation (LAPACK) may round differently
    for shape in ((4, 6), (6, 4)):
        got, want = _run(lambda m, s=shape: m.nn.init.orthogonal_(m.empty(*s, dtype=m.float64)), 3)
        np.testing.assert_allclose(_np(got), _np(want), rtol=0, atol=1e-12)


def test_module_default_initialisation_and_dropout_layers():
    def case(m):
        layers = [m.nn.Linear(6, 4), m.nn.Conv2d(3, 4, 3), m.nn.Embedding(10, 3)]
        params = [p.detach().reshape(-1) for layer in layers for p in layer.parameters()]
        x = m.ones(2, 5, 3, 3)
        params.append(m.nn.functional.dropout2d(x, 0.4).reshape(-1))
        params.append(m.nn.functional.alpha_dropout(x, 0.2, training=True).reshape(-1))
        return m.cat(params)

    for seed in SEEDS:
        assert _same(*_run(case, seed)), seed


def test_distributions_and_data_order_follow_the_stream():
    def case(m):
        d = m.distributions.Normal(m.zeros(20), m.ones(20))
        s = d.sample()
        order = list(m.utils.data.RandomSampler(range(12)))
        return m.cat([s, m.tensor(order, dtype=m.float32)])

    for seed in SEEDS[:3]:
        assert _same(*_run(case, seed))
