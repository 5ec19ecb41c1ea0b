"""The JIT kernels against the NumPy formulas they replace.

Op tests use small inputs, which take NumPy paths below ``KERNEL_MIN``; here every njit
kernel (and its ``prange`` twin) runs on inputs large enough to select it, and on float32,
and is compared with the plain NumPy expression of the same formula.
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.kernels import KERNEL_MIN, PARALLEL_MIN
from numbagrad.kernels.cpu import accumulate as KA
from numbagrad.kernels.cpu import elementwise as K
from numbagrad.kernels.cpu import index as KI
from numbagrad.kernels.cpu import threads
from numbagrad.kernels.cpu.threads import THREAD_MIN

N = KERNEL_MIN + 7
rng = np.random.default_rng(7)


def _sig(x):
    return 1 / (1 + np.exp(-x))


# (kernel, saved-value generator, NumPy reference of g * derivative)
BACKWARD = {
    "tanh_backward": (lambda x: np.tanh(x), lambda g, y: g * (1 - y * y)),
    "sigmoid_backward": (_sig, lambda g, y: g * y * (1 - y)),
    "sin_backward": (lambda x: x, lambda g, x: g * np.cos(x)),
    "cos_backward": (lambda x: x, lambda g, x: -g * np.sin(x)),
    "tan_backward": (np.tan, lambda g, y: g * (1 + y * y)),
    "softplus_backward": (lambda x: x, lambda g, x: g * _sig(x)),
    "erf_backward": (lambda x: x, lambda g, x: g * 2 / math.sqrt(math.pi) * np.exp(-x * x)),
    "relu_backward": (lambda x: np.maximum(x, 0), lambda g, y: g * (y > 0)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_backward_kernel_matches_numpy(name, dtype):
    make, ref = BACKWARD[name]
    x = rng.uniform(-2, 2, N).astype(dtype)
    s = make(x).astype(dtype)
    g = rng.standard_normal(N).astype(dtype)
    out = np.empty(N, dtype)
    getattr(K, name)(g, s, out)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(out, ref(g, s), rtol=tol, atol=tol)
    # a broadcast scalar gradient (length 1) is the same as a full one
    getattr(K, name)(g[:1], s, out)
    np.testing.assert_allclose(out, ref(np.full(N, g[0]), s), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "name, ref",
    [
        ("softplus_forward", lambda x: np.log1p(np.exp(x))),
        ("erf_forward", np.vectorize(math.erf)),
        ("rsqrt_forward", lambda x: 1 / np.sqrt(x)),
    ],
)
def test_forward_kernel_matches_numpy(name, ref):
    x = rng.uniform(0.1, 3, N) if name == "rsqrt_forward" else rng.uniform(-5, 5, N)
    out = np.empty(N)
    getattr(K, name)(x, out)
    np.testing.assert_allclose(out, ref(x), rtol=1e-12, atol=1e-14)


def test_sigmoid_and_softplus_are_stable_at_extremes():
    x = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    out = np.concatenate([x, np.zeros(KERNEL_MIN)])  # large: the blocked path
    for arr in (x, out):
        y = ng.sigmoid(ng.tensor(arr)).numpy()[:5]
        assert np.all(np.isfinite(y)) and y[0] == 0.0 and y[-1] == 1.0
        assert y[1] == pytest.approx(math.exp(-40.0), rel=1e-12)
    out = np.empty_like(x)
    K.softplus_forward(x, out)
    np.testing.assert_allclose(
        out, [0.0, math.log1p(math.exp(-40.0)), math.log(2.0), 40.0, 800.0], rtol=1e-12
    )


def test_parallel_twins_match_serial():
    n = PARALLEL_MIN + 3
    a, b, g = (rng.standard_normal(n) for _ in range(3))
    for serial, par, args in [
        (K.tanh_backward, K.tanh_backward_par, (g, np.tanh(a))),
        (K.sigmoid_backward, K.sigmoid_backward_par, (g, _sig(a))),
    ]:
        o1, o2 = np.empty(n), np.empty(n)
        serial(*args, o1)
        par(*args, o2)
        np.testing.assert_array_equal(o1, o2)
    ga, gb, total = np.empty(n), np.empty(n), np.empty(n)
    K.mul_backward_par(g, a, b, ga, gb)
    np.testing.assert_array_equal(ga, g * b)
    np.testing.assert_array_equal(gb, g * a)
    K.mul_backward_par(g[:1], a, b, ga, gb)  # broadcast scalar gradient
    np.testing.assert_array_equal(ga, g[0] * b)
    KA.add_into_new_par(a, b, total)
    np.testing.assert_array_equal(total, a + b)


def test_accumulate_kernels():
    n = PARALLEL_MIN + 5
    dst, src = rng.standard_normal(n), rng.standard_normal(n)
    want = dst + src
    d1, d2 = dst.copy(), dst.copy()
    KA.accumulate(d1, src)
    KA.accumulate_par(d2, src)
    np.testing.assert_array_equal(d1, want)
    np.testing.assert_array_equal(d2, want)
    d3 = dst.copy()
    KA.accumulate(d3, src[:1])
    np.testing.assert_array_equal(d3, dst + src[0])


def test_index_kernels():
    idx = np.array([0, 3, 2, 5], np.int64)
    assert KI.first_out_of_range(idx, 6) == -1
    assert KI.first_out_of_range(idx, 5) == 3
    assert KI.first_out_of_range(np.array([1, -1], np.int64), 5) == 1


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "sin", "cos", "softplus", "erf", "relu"])
def test_large_op_gradients_use_kernels_and_agree_with_small_path(op):
    """Above KERNEL_MIN the fused kernels run; the gradient equals the NumPy path's."""
    x = ng.tensor(rng.uniform(-2, 2, N), requires_grad=True)
    getattr(ng, op)(x).sum().backward()
    big = x.grad.numpy().copy()
    # the same values through the small (NumPy) path, in chunks below KERNEL_MIN
    pieces = []
    for chunk in np.array_split(x.detach().numpy(), 4):
        xc = ng.tensor(chunk, requires_grad=True)
        getattr(ng, op)(xc).sum().backward()
        pieces.append(xc.grad.numpy())
    np.testing.assert_allclose(big, np.concatenate(pieces), rtol=1e-12, atol=1e-15)


def test_large_elementwise_chain_matches_numpy():
    n = PARALLEL_MIN + 11
    xa, wa = rng.standard_normal(n), rng.standard_normal(n)
    x = ng.tensor(xa, requires_grad=True)
    w = ng.tensor(wa, requires_grad=True)
    (ng.tanh(x * w + 1.0) * ng.sigmoid(x)).sum().backward()
    t, s = np.tanh(xa * wa + 1.0), _sig(xa)
    gx = (1 - t * t) * wa * s + t * s * (1 - s)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), (1 - t * t) * xa * s, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "shapes",
    [
        [(THREAD_MIN + 3,)],
        [(THREAD_MIN + 3,), (THREAD_MIN + 3,)],
        [(1025, 1024), (1025, 1)],  # row broadcast: split along the first axis
        [(1, 1024), (1025, 1024)],  # first operand broadcast along the first axis
        [(2, THREAD_MIN // 2 + 1), ()],  # fewer rows than cores: flat split not possible
        [(THREAD_MIN + 1,), "scalar"],
    ],
)
def test_threaded_ufunc_is_bit_identical(shapes):
    args = [2.5 if s == "scalar" else rng.standard_normal(s) for s in shapes]
    ufunc = np.exp if len(args) == 1 else np.arctan2  # not "cheap": threaded from THREAD_MIN
    np.testing.assert_array_equal(threads.call(ufunc, *args), ufunc(*args))


def test_cheap_ufuncs_split_only_from_their_own_threshold():
    a = rng.standard_normal(threads.CHEAP_THREAD_MIN + 3)
    np.testing.assert_array_equal(threads.call(np.multiply, a, a), a * a)
    b = rng.standard_normal(THREAD_MIN + 3)
    np.testing.assert_array_equal(threads.call(np.add, b, 1.5), b + 1.5)


@pytest.mark.parametrize("n", [10, THREAD_MIN + 1, threads.CHEAP_THREAD_MIN + 1])
def test_large_comparisons_give_bool(n):
    a, b = ng.tensor(rng.standard_normal(n)), ng.tensor(rng.standard_normal(n))
    for got, want in [
        (a > b, a.numpy() > b.numpy()),
        (a <= 0.5, a.numpy() <= 0.5),
        (a == a, np.ones(n, bool)),
        (a != b, a.numpy() != b.numpy()),
    ]:
        assert got.dtype == ng.bool
        np.testing.assert_array_equal(got.numpy(), want)


def test_broadcast_result_of_small_operands_comes_from_the_cache():
    from numbagrad.kernels.cpu import alloc
    from numbagrad.kernels.cpu.backend import CPU

    a = rng.standard_normal((512, 8, 1)).astype(np.float32)
    b = rng.standard_normal((512, 1, 32)).astype(np.float32)
    out = CPU.binary("multiply", a, b)  # 512 KB from 16 KB and 64 KB operands
    np.testing.assert_array_equal(out, a * b)
    assert any(out is c for c in alloc._cache)
    assert CPU.binary("greater", a, b).dtype == np.bool_


def test_threaded_ufunc_falls_back_for_mixed_dtypes_and_small():
    a = rng.standard_normal(THREAD_MIN + 1)
    b = a.astype(np.float32)
    out = threads.call(np.add, a, b)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a + b)
    small = rng.standard_normal(10)
    np.testing.assert_array_equal(threads.call(np.tanh, small), np.tanh(small))


def test_blocked_sigmoid_matches_numpy_and_is_stable():
    x = np.concatenate([rng.uniform(-50, 50, THREAD_MIN), [-800.0, 800.0, 0.0]])
    with np.errstate(over="ignore"):
        want = 1 / (1 + np.exp(-x))
    got = ng.sigmoid(ng.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert got[-3] == 0.0 and got[-2] == 1.0 and got[-1] == 0.5


def test_blocked_runs_formula_per_block():
    a = rng.standard_normal(THREAD_MIN + 5)
    out = threads.blocked(lambda o, x: np.multiply(x, 2.0, out=o), np.empty_like(a), a)
    np.testing.assert_array_equal(out, a * 2.0)


def test_kernel_registry():
    from numbagrad import kernels

    mod = kernels.module("elementwise")
    assert mod is kernels.module("elementwise", "cpu")  # one proxy per (kind, device)
    assert mod.tanh_backward is K.tanh_backward
    with pytest.raises(RuntimeError, match="no kernels are registered for device 'tpu'"):
        kernels.module("elementwise", "tpu")


def test_buffer_cache_reuses_only_unreferenced_arrays():
    from numbagrad.kernels.cpu import alloc

    alloc.clear()
    shape = (alloc.MIN_BYTES // 8 + 1,)
    a = alloc.empty(shape, np.float64)
    view = a[3:]
    a_id = id(a)
    del a
    b = alloc.empty(shape, np.float64)
    assert id(b) != a_id  # a view still holds the first array
    t = ng.from_numpy(b)
    b_id = id(b)
    del b, view
    c = alloc.empty(shape, np.float64)
    assert id(c) == a_id  # the first is free again; the second is held by a tensor
    assert id(t.numpy()) == b_id
    assert alloc.empty((4,), np.float64).base is None  # small arrays bypass the cache
    alloc.clear()


def test_buffer_cache_respects_its_limit(monkeypatch):
    from numbagrad.kernels.cpu import alloc

    alloc.clear()
    monkeypatch.setattr(alloc, "LIMIT_BYTES", 3 * alloc.MIN_BYTES)
    shape = (alloc.MIN_BYTES // 8,)
    held = [alloc.empty(shape, np.float64) for _ in range(5)]
    assert alloc._held[0] <= alloc.LIMIT_BYTES
    assert len({id(h) for h in held}) == 5
    alloc.clear()


def test_large_backward_twice_gives_same_gradients_with_reused_buffers():
    n = THREAD_MIN + 1
    xa = rng.standard_normal(n)
    grads = []
    for _ in range(3):
        x = ng.tensor(xa, requires_grad=True)
        (ng.tanh(x * 2.0) * ng.sigmoid(x)).sum().backward()
        grads.append(x.grad.numpy().copy())
        del x
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], grads[2])


def test_thread_count_follows_affinity_and_environment():
    n_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    if n_cores is not None:
        assert threads.default_threads({}) == max(1, min(n_cores, 8))
    assert threads.default_threads({"NUMBA_NUM_THREADS": "1"}) == 1
    assert threads.default_threads({"OMP_NUM_THREADS": "1,4"}) == 1
    assert threads.default_threads({"OMP_NUM_THREADS": "junk"}) == threads.default_threads({})


def test_set_num_threads_round_trip_and_errors():
    before = ng.get_num_threads()
    try:
        ng.set_num_threads(1)
        assert ng.get_num_threads() == 1
        a = rng.standard_normal(THREAD_MIN + 7)
        np.testing.assert_array_equal(ng.exp(ng.tensor(a)).numpy(), np.exp(a))
    finally:
        ng.set_num_threads(before)
    assert ng.get_num_threads() == before
    for bad in (0, -2, 1.5, True):
        with pytest.raises(RuntimeError, match="positive integer"):
            ng.set_num_threads(bad)


def test_empty_cache_and_limit_from_the_environment():
    from numbagrad.kernels.cpu import alloc

    a = alloc.empty((alloc.MIN_BYTES // 8 + 1,), np.float64)
    del a
    assert alloc._cache
    ng.empty_cache()
    assert not alloc._cache and alloc._held[0] == 0
    assert alloc._limit_from_env({}) == 1 << 30
    assert alloc._limit_from_env({"NUMBAGRAD_BUFFER_CACHE_MB": "0"}) == 0
    assert alloc._limit_from_env({"NUMBAGRAD_BUFFER_CACHE_MB": "1.5"}) == 3 << 19
    with pytest.raises(ValueError, match="megabytes"):
        alloc._limit_from_env({"NUMBAGRAD_BUFFER_CACHE_MB": "lots"})


def test_three_large_gradients_into_one_slot_with_transposed_first_two():
    # the first two gradients reaching y's slot are transposed views: their sum is
    # F-ordered, and the flat parallel kernel must not add the third into a reshape copy
    xa = rng.standard_normal((500, 400))
    x = ng.tensor(xa, requires_grad=True)
    y = x * 1.0
    (y.sin().sum() + y.t().exp().sum() + y.t().cos().sum()).backward()
    np.testing.assert_allclose(
        x.grad.numpy(), np.cos(xa) + np.exp(xa) - np.sin(xa), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("n", [10, KERNEL_MIN + 10, PARALLEL_MIN + 10])
def test_relu_passes_the_gradient_at_nan_as_pytorch(n):
    xa = rng.standard_normal(n)
    xa[:3] = [np.nan, 0.0, -1.0]
    x = ng.tensor(xa, requires_grad=True)
    ng.relu(x).sum().backward()
    g = x.grad.numpy()
    assert g[0] == 1.0 and g[1] == 0.0 and g[2] == 0.0  # threshold_backward: nan <= 0 is false
    np.testing.assert_array_equal(g[3:], (xa[3:] > 0).astype(float))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_diagonal_matmul_operand_matches_the_gemm(dtype, side):
    """NOTE [Diagonal matmul operands]: a diagonal operand scales the other one; the result
    is the GEMM's, non-finite values and signed zeros included, and anything that is not
    diagonal (or whose other operand is not finite) takes the GEMM."""
    from numbagrad.kernels.cpu.backend import _matmul

    rng = np.random.default_rng(0)
    n = 40
    d = rng.standard_normal(n).astype(dtype)
    d[3] = 0.0
    d[5] = -0.0
    diag = np.diag(d)
    w = rng.standard_normal((n, n)).astype(dtype)
    w[7, 2] = -0.0

    def pair(m):
        return (m, w) if side == "left" else (w, m)

    def check(a, b):
        with np.errstate(invalid="ignore"):  # 0 * inf in the reference GEMM
            got, want = _matmul(a, b), np.matmul(a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-14)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0]))

    check(*pair(diag))
    check(*pair(-np.eye(n, dtype=dtype)))
    not_diag = diag.copy()
    not_diag[n - 1, 0] = 2.0  # zero at [0, 1] and [1, 0], but not diagonal
    check(*pair(not_diag))
    with_nan = diag.copy()
    with_nan[4, 9] = np.nan  # a NaN off the diagonal is not a zero
    check(*pair(with_nan))
    w[6, 1] = np.inf  # 0 * inf is NaN in the GEMM: the scaling must not hide it
    check(*pair(diag))
    small = np.diag(d[:8])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(_matmul(small, w[:8, :8]), np.matmul(small, w[:8, :8]))


def test_jacrev_of_an_elementwise_map_of_a_linear_map_is_exact():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 64)) / 8
    x = rng.standard_normal(64)
    jac = ng.func.jacrev(lambda v: ng.tanh(ng.tensor(w) @ v))(ng.tensor(x)).numpy()
    y = np.tanh(w @ x)
    np.testing.assert_allclose(jac, (1 - y * y)[:, None] * w, rtol=1e-13, atol=1e-15)
    jf = ng.func.jacfwd(lambda v: ng.tanh(ng.tensor(w) @ v))(ng.tensor(x)).numpy()
    np.testing.assert_allclose(jf, jac, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_gelu_backward_matches_its_composite(dtype, approximate):
    """The fused gelu_backward kernels (from KERNEL_MIN elements) against the term-by-term
    array formula the small path uses, special values and a broadcast scalar g included."""
    from numbagrad.kernels.cpu.backend import CPU
    from numbagrad.nn._primitives import GeluBackward, _gelu_derivative

    rng = np.random.default_rng(3)
    n = KERNEL_MIN + 7
    x = (rng.standard_normal(n) * 4).astype(dtype)
    x[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    g = rng.standard_normal(n).astype(dtype)
    g[:2] = [np.inf, -np.inf]
    with np.errstate(all="ignore"):
        for gg in (g, np.array([2.5], dtype), np.full(n, -1.5, dtype)[None, :][0]):
            got = GeluBackward.impl(CPU, gg, x, approximate=approximate)
            # float32: the kernel's vectorised polynomials (NOTE [Float32 GELU]) against
            # the formula in float64 (in float32 the formula's 1 + tanh(u) cancels to
            # ~1e-6 absolute; the kernel stays within 3e-7)
            g64, x64 = gg.astype(np.float64), x.astype(np.float64)
            want = (g64 * _gelu_derivative(CPU, x64, approximate)).astype(dtype)
            assert got.dtype == want.dtype and got.shape == want.shape
            rtol, atol = (1e-6, 1e-6) if dtype == "float32" else (1e-13, 1e-13)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- broadcast kernels (NOTE [Broadcast kernels]) ----------------------------------------------
# (against a full-size operand a kernel is considered from 16384 result elements)
_BROADCAST_PAIRS = [
    ((512, 8, 1), (512, 1, 32)),  # per-example outer products
    ((1000, 1), (1000, 20)),  # a column against a matrix
    ((20,), (1000, 20)),  # a row
    ((1000, 20), (1000, 1)),
    ((1, 70, 1), (60, 1, 80)),  # three groups, both operands broadcast
    ((8, 3, 4, 5, 6, 7), (1, 7)),  # coalesces into two groups
    ((3, 1, 5, 1, 7, 20), (1, 4, 1, 6, 1, 20)),  # six groups: NumPy's loop
    ((16384, 1), (1,)),  # broadcast to a shape that is one operand's: one row
    ((128, 128), (128, 1)),  # long rows
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", _BROADCAST_PAIRS)
def test_broadcast_kernels_match_numpy(sa, sb, dtype):
    from numbagrad.kernels.cpu import backend
    from numbagrad.kernels.cpu.backend import CPU

    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    a.reshape(-1)[::7] = 0.0  # zeros for 0/0, x/0 and signed zeros
    b.reshape(-1)[::5] = 0.0
    b.reshape(-1)[1::11] = np.inf
    a.reshape(-1)[2::13] = np.nan
    for name in ("add", "subtract", "multiply", "true_divide"):
        for x, y in ((a, b), (b, a)):
            with np.errstate(all="ignore"):  # (tensors' ops install a filter instead)
                got = CPU.binary(name, x, y)
                want = getattr(np, name)(x, y)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)  # bit for bit, nan where NumPy's
            assert np.array_equal(np.signbit(got), np.signbit(want))
            assert (x.shape, y.shape) in backend._PLANS  # a kernel was considered


def test_small_broadcasts_take_the_kernel_only_where_numpy_is_slower(monkeypatch):
    # below 16384 elements against a full-size operand NumPy's loop is the faster, except
    # for short rows (its cost per row dominates); both operands broadcast (an outer
    # product) always take the kernel
    from numbagrad.kernels.cpu import backend

    calls = []

    def counting(name):
        def k(*args):
            calls.append(name)
            return getattr(backend.KB, name)(*args)

        return k

    monkeypatch.setattr(backend, "_BROADCAST_FNS", {n: counting(n) for n in ("add", "multiply")})
    cases = [
        ((512, 8), (8,), "add", True),  # short rows: the kernel
        ((8,), (512, 8), "multiply", True),
        ((64, 64), (64,), "add", False),  # long rows: NumPy
        ((512, 8), (512, 1), "add", False),  # a column broadcast: NumPy
        ((64, 8, 1), (64, 1, 16), "multiply", True),  # an outer product: the kernel
        ((1024, 16), (1024, 1), "add", True),  # 16384 elements: the kernel
    ]
    for sa, sb, name, kernel in cases:
        a = np.arange(np.prod(sa), dtype=np.float32).reshape(sa)
        b = np.arange(np.prod(sb), dtype=np.float32).reshape(sb) + 1
        calls.clear()
        np.testing.assert_array_equal(backend.CPU.binary(name, a, b), getattr(np, name)(a, b))
        assert bool(calls) is kernel, (sa, sb)


def test_broadcast_kernel_plans_and_their_refusals():
    from numbagrad.kernels.cpu.backend import _make_plan

    # (rows, n1, n2, strides of a, strides of b, shape): the outer product is 512 x 8 rows
    # of 32, a[i, j] against the row b[i]
    assert _make_plan((512, 8, 1), (512, 1, 32)) == (4096, 8, 32, 8, 1, 0, 32, 0, 1, (512, 8, 32))
    # a row against (2, 3, 4): the two outer dimensions of a coalesce into 6 rows
    assert _make_plan((2, 3, 4), (4,)) == (6, 6, 4, 0, 4, 1, 0, 0, 1, (2, 3, 4))
    assert _make_plan((3,), (4,)) is None  # not broadcastable: NumPy raises its error
    assert _make_plan((0, 3), (1, 3)) is None  # empty
    assert _make_plan((3, 1, 5, 1, 7, 2), (1, 4, 1, 6, 1, 2)) is None  # > 3 groups


def test_broadcast_kernel_splits_large_results_across_threads(monkeypatch):
    from numbagrad.kernels.cpu import backend

    monkeypatch.setattr(threads, "N_THREADS", 2)
    monkeypatch.setattr(threads, "CHEAP_THREAD_MIN", 1000)
    a = np.random.default_rng(1).standard_normal((301, 1, 17))
    b = np.random.default_rng(2).standard_normal((1, 29, 17))
    calls = []
    real = threads._get_pool

    def pool():
        calls.append(1)
        return real()

    monkeypatch.setattr(threads, "_get_pool", pool)
    np.testing.assert_array_equal(backend.CPU.binary("multiply", a, b), a * b)
    assert calls  # the rows were split


# -- the batched outer product (``Outer``: Mv's weight gradient) ---------------------------------
@pytest.mark.parametrize(
    "sa,sb,dtypes",
    [
        ((512, 8), (512, 32), (np.float32, np.float32)),  # the kernel, per-example grads
        ((3, 4, 70), (3, 4, 90), (np.float64, np.float64)),  # leading dims folded into rows
        ((70,), (90,), (np.float64, np.float64)),  # torch.outer of two vectors
        ((70,), (5, 90), (np.float64, np.float64)),  # leading dims broadcast: NumPy
        ((512, 8), (512, 32), (np.float32, np.float64)),  # promoted first
        ((512, 8), (512, 32), (np.int64, np.int64)),  # integers: NumPy
        ((0, 8), (0, 32), (np.float64, np.float64)),  # empty
    ],
)
def test_outer_matches_numpy(sa, sb, dtypes):
    from numbagrad.ops.linalg import Outer

    r = np.random.default_rng(3)
    a = (r.standard_normal(sa) * 4).astype(dtypes[0])
    b = (r.standard_normal(sb) * 4).astype(dtypes[1])
    if a.dtype.kind == "f":
        a.reshape(-1)[::7] = np.nan
        b.reshape(-1)[1::5] = -np.inf
    got = ng.ops.linalg.bind(Outer, (ng.tensor(a), ng.tensor(b)), {}).numpy()
    with np.errstate(all="ignore"):
        want = a[..., :, None] * b[..., None, :]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_outer_kernel_on_strided_operands_and_threads(monkeypatch):
    from numbagrad.kernels.cpu.backend import CPU

    r = np.random.default_rng(4)
    a = r.standard_normal((64, 20))[:, ::2]  # not contiguous: copied by NumPy's path
    b = r.standard_normal((64, 30))
    np.testing.assert_array_equal(CPU.outer(a, b), a[:, :, None] * b[:, None, :])
    monkeypatch.setattr(threads, "N_THREADS", 2)
    monkeypatch.setattr(threads, "CHEAP_THREAD_MIN", 1000)
    calls = []
    real = threads._get_pool

    def pool():
        calls.append(1)
        return real()

    monkeypatch.setattr(threads, "_get_pool", pool)
    a = np.ascontiguousarray(a)
    np.testing.assert_array_equal(CPU.outer(a, b), a[:, :, None] * b[:, None, :])
    assert calls  # the rows were split


def test_broadcast_through_ops_and_gradients():
    x = ng.randn(256, 4, 1, requires_grad=True)
    y = ng.randn(256, 1, 16, requires_grad=True)
    z = x * y / (y * y + 1) - x
    z.sum().backward()
    xa, ya = x.detach().numpy(), y.detach().numpy()
    np.testing.assert_allclose(z.detach().numpy(), xa * ya / (ya * ya + 1) - xa, rtol=1e-6)
    np.testing.assert_allclose(
        x.grad.numpy(),
        (ya / (ya * ya + 1) - 1).sum(2, keepdims=True) * np.ones_like(xa),
        rtol=1e-5,
    )


def test_broadcast_kernels_on_random_shapes():
    # random broadcastable pairs of up to five dims, each dim kept, or broadcast from one
    # side, or size 1 on both; results past KERNEL_MIN elements run the kernels
    from numbagrad.kernels.cpu import backend
    from numbagrad.kernels.cpu.backend import CPU

    rng = np.random.default_rng(7)
    used = 0
    for _ in range(200):
        nd = int(rng.integers(2, 6))
        full = [int(rng.integers(1, 24)) for _ in range(nd)]
        sa, sb = [], []
        for n in full:
            kind = rng.integers(0, 4)
            sa.append(1 if kind == 1 else n)
            sb.append(1 if kind == 2 else n)
        sa = tuple(sa[int(rng.integers(0, nd)) :])  # a may have fewer dims
        sb = tuple(sb)
        dtype = (np.float32, np.float64)[int(rng.integers(0, 2))]
        a = rng.standard_normal(sa).astype(dtype)
        b = rng.standard_normal(sb).astype(dtype) + 0.5
        plan = backend._make_plan(sa, sb)
        size = math.prod(np.broadcast_shapes(sa, sb))
        used += plan is not None and sa != sb and size >= KERNEL_MIN
        for name in ("add", "subtract", "multiply", "true_divide"):
            for x, y in ((a, b), (b, a)):
                with np.errstate(all="ignore"):
                    np.testing.assert_array_equal(CPU.binary(name, x, y), getattr(np, name)(x, y))
    assert used >= 40  # that many pairs ran a kernel (48 with this seed)


# -- sum kernels (NOTE [Sum kernels]) -----------------------------------------------------------
def test_sum_kernels_match_numpy_bit_for_bit():
    # random shapes and blocks of reduced axes; rows of -0.0 and infinities included
    from numbagrad.kernels.cpu import backend
    from numbagrad.kernels.cpu.backend import CPU

    rng = np.random.default_rng(3)
    used = 0
    for trial in range(300):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(rng.integers(1, 40)) for _ in range(nd))
        d0 = int(rng.integers(0, nd))
        dims = tuple(range(d0, int(rng.integers(d0, nd)) + 1))
        dtype = (np.float32, np.float64)[trial % 2]
        x = (rng.standard_normal(shape) * 10 ** rng.uniform(-4, 4, shape)).astype(dtype)
        if trial % 7 == 0:
            x.reshape(-1)[::3] = -0.0
        if trial % 11 == 0:
            x.reshape(-1)[::13] = np.inf
        for keepdim in (False, True):
            got = CPU.sum(x, dims, keepdim, None)
            want = np.add.reduce(x, axis=dims, keepdims=keepdim)
            assert got.shape == want.shape and got.dtype == want.dtype
            assert got.tobytes() == want.tobytes(), (shape, dims, dtype)
        used += x.size >= KERNEL_MIN and backend._sum_kernel(x, dims, False) is not None
    assert used >= 50  # that many ran a kernel (65 with this seed)


@pytest.mark.parametrize(
    "shape,dims",
    [
        ((4096, 3), (1,)),  # short rows: sum_rows
        ((512, 8), (1,)),
        ((64, 128), (1,)),  # the longest pairwise block
        ((100, 100, 3), (1,)),  # the middle axis: sum_middle
        ((50, 4, 5, 7), (1, 2)),  # a block of two axes
    ],
)
def test_sum_kernel_cases_and_all_negative_zero_rows(shape, dims):
    from numbagrad.kernels.cpu import backend
    from numbagrad.kernels.cpu.backend import CPU

    x = np.full(shape, -0.0)
    assert backend._sum_kernel(x, dims, False) is not None
    got = CPU.sum(x, dims, False, None)
    assert not np.signbit(got).any()  # NumPy adds the rows to +0.0
    y = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert CPU.sum(y, dims, True, None).tobytes() == np.add.reduce(y, dims, keepdims=True).tobytes()


def test_sum_kernels_refuse_what_numpy_does_better():
    from numbagrad.kernels.cpu import backend

    x = np.ones((40, 200))
    assert backend._sum_kernel(x, (1,), False) is None  # rows past the pairwise block
    assert backend._sum_kernel(np.ones((8, 8, 300)), (1,), False) is None  # long inner rows
    assert backend._sum_kernel(np.ones((8, 8, 8)), (0, 2), False) is None  # not one block
    assert backend._sum_kernel(np.ones((8, 1, 8)), (1,), False) is None  # nothing to add


def test_broadcast_heavy_forward_and_backward_agree_with_numpy():
    # pairwise squared distances: the broadcast kernel forward, both sum kernels backward
    r = np.random.default_rng(5)
    xa = r.standard_normal((300, 3))
    x = ng.tensor(xa, requires_grad=True)
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    (-d).exp().sum().backward()
    diff = xa[:, None, :] - xa[None, :, :]
    da = (diff**2).sum(-1)
    np.testing.assert_allclose(d.detach().numpy(), da, rtol=1e-13)
    e = np.exp(-da)
    want = (-2 * e[:, :, None] * diff).sum(1) - (-2 * e[:, :, None] * diff).sum(0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, "PASSIVE"),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"),
        ({"GOMP_SPINCOUNT": "1000"}, None),
    ],
)
def test_idle_openmp_threads_sleep_unless_the_user_chose(env, expected):
    # NOTE [OpenMP wait policy]: spinning OpenMP threads starve OpenBLAS's on a small machine
    e = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    e.update(env)
    code = "import os, numbagrad; print(os.environ.get('OMP_WAIT_POLICY'))"
    r = subprocess.run(
        [sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(expected)


@pytest.mark.parametrize("n", [KERNEL_MIN + 3, PARALLEL_MIN + 5])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_float32_gelu_kernels_against_torch(approximate, n):
    """NOTE [Float32 GELU]: the float32 forward and backward kernels (serial and prange)
    against PyTorch in float64 (within 1e-6 absolute, 2e-6 relative where the result is
    not a cancellation of the negative tail) and PyTorch's float32 special values."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[: 2 * 64 : 2] = np.linspace(-110, 110, 64)  # exp's and erf's clamps
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3.9, -3.9, 4.1, -4.1]
    x[1 : 2 * len(special) : 2] = special
    g = rng.standard_normal(n).astype(np.float32)
    xt = torch.from_numpy(x).double().requires_grad_(True)
    yt = torch.nn.functional.gelu(xt, approximate=approximate)
    (gt,) = torch.autograd.grad(yt, xt, torch.from_numpy(g).double())
    xg = ng.tensor(x, requires_grad=True)
    y = ng.nn.functional.gelu(xg, approximate=approximate)
    y.backward(ng.tensor(g))
    assert y.dtype == ng.float32 and xg.grad.dtype == ng.float32
    for got, want in ((y.detach().numpy(), yt.detach().numpy()), (xg.grad.numpy(), gt.numpy())):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    # the small arrays' path: NaN exactly where PyTorch's float64 has NaN (gelu(-inf);
    # PyTorch's float32 vector kernel also gives NaN for gelu(+inf), where the exact value
    # and its float64 and scalar paths give +inf)
    t64 = torch.nn.functional.gelu(
        torch.tensor(special, dtype=torch.float64), approximate=approximate
    )
    got = ng.nn.functional.gelu(ng.tensor(special, dtype=ng.float32), approximate=approximate)
    np.testing.assert_allclose(got.numpy(), t64.numpy().astype(np.float32), rtol=2e-6, atol=1e-6)
