"""numbagrad.compile on CUDA tensors (NOTE [Compiled CUDA programs]): the generated
``@cuda.jit`` kernels and the eager CUDA calls around them give eager CUDA's (and the CPU's)
values and gradients. Tiny sizes: the simulator runs every thread in Python."""

import os

import numpy as np
import pytest
from test_cuda_function import Cube  # (its forward and backward launch its own kernels)

import numbagrad as ng
from numbagrad import func


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "ngcuda"))


def _host(t):
    return t.detach().cpu().numpy()


def _inputs(arrays, device, grad=True):
    return [ng.tensor(a, device=device, requires_grad=grad) for a in arrays]


def _check(f, arrays, tol=1e-12, calls=2, grad=True):
    """``compile(f)`` on CUDA against eager CUDA and eager CPU: outputs and gradients."""
    c = ng.compile(f)
    for _ in range(calls):  # the first call traces, the next ones run the compiled program
        xs = _inputs(arrays, "cuda", grad)
        out = c(*xs)
        assert out.device.type == "cuda"
        refs = []
        for dev in ("cuda", "cpu"):
            ys = _inputs(arrays, dev, grad)
            r = f(*ys)
            refs.append((r, ng.autograd.grad(r, ys) if grad else ()))
        gs = ng.autograd.grad(out, xs) if grad else ()
        for r, rgs in refs:
            np.testing.assert_allclose(_host(out), _host(r), rtol=tol, atol=tol)
            for g, rg in zip(gs, rgs):
                assert g.device.type == "cuda"
                np.testing.assert_allclose(_host(g), _host(rg), rtol=tol, atol=tol)
    assert not c._breaks
    (key,) = c._entries
    assert key[0] == "cuda:0"  # compiled for the device (the guard key names it)
    return c


def chain(x):
    y = x
    for _ in range(2):
        y = ng.tanh(y) * 1.1 + ng.sigmoid(y) - y * y * 0.1
    return y.sum()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chain_forward_and_gradient_equal_eager(dtype):
    x = np.linspace(-1.5, 1.5, 10).astype(dtype)
    c = _check(chain, [x], tol=1e-12 if dtype == np.float64 else 1e-5)
    text = c.explain()
    assert "@cuda.jit(cache=True)" in text and "cuda.grid(1)" in text
    assert "-- backward kernels --" in text
    assert c(ng.tensor(x, device="cuda")).dtype == ng.float32 if dtype == np.float32 else True


def test_broadcasting_partial_sums_and_array_calls():
    def f(x, w, b):
        h = ng.tanh(x @ w + b)  # matmul: the eager CUDA kernel; + b broadcasts
        s = ng.softmax(h, dim=-1)  # amax and exp/sum: eager calls and kernels
        return (s * h).sum(dim=1).mean() + h.sum(0, keepdim=True).pow(2).sum()

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)]
    _check(f, arrays, tol=1e-10)


def test_transposed_and_broadcast_inputs_and_whole_exponents():
    def f(x, y):
        # a transposed (non-contiguous) input, a (3, 1) against (1, 4) broadcast, a math
        # function of every family
        z = x.t() * y + ng.exp(-(y**2)) / (1 + ng.abs(x.t()))
        return (ng.log1p(z * z) + ng.sqrt(ng.relu(z)) + ng.maximum(z, y) ** 3).sum(1)

    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((4, 3)), rng.standard_normal((3, 1))]
    c = ng.compile(f)
    xs = _inputs(arrays, "cuda")
    out = c(*xs)
    ys = _inputs(arrays, "cpu")
    ref = f(*ys)
    np.testing.assert_allclose(_host(out), _host(ref), rtol=1e-10)
    gs = ng.autograd.grad(out.sum(), xs)
    rs = ng.autograd.grad(ref.sum(), ys)
    for g, r in zip(gs, rs):
        np.testing.assert_allclose(_host(g), _host(r), rtol=1e-10, atol=1e-12)
    out2 = c(*xs)  # the compiled program
    np.testing.assert_allclose(_host(out2), _host(ref), rtol=1e-10)


def test_no_grad_call_and_multiple_outputs():
    def f(x, y):
        return x * y, ng.exp(x) + 1, (y > 0)

    c = ng.compile(f)
    x = ng.tensor([-1.0, 0.5, 2.0], device="cuda", requires_grad=True)
    y = ng.tensor([3.0, -2.0, 0.0], device="cuda")
    for _ in range(2):
        a, b, m = c(x, y)
        assert a.requires_grad and not m.requires_grad and m.dtype == ng.bool
        assert m.device.type == "cuda"
        np.testing.assert_array_equal(_host(m), [True, False, False])
        (a.sum() + 2 * b.sum()).backward()
    np.testing.assert_allclose(_host(x.grad), 2 * (_host(y) + 2 * np.exp(_host(x))))
    with ng.no_grad():
        a, _, _ = c(x, y)
    assert not a.requires_grad


def test_double_backward_equals_eager():
    def f(x):
        return (ng.sin(x) * x**3).sum()

    c = ng.compile(f)
    x = ng.linspace(-1, 1, 5, dtype=ng.float64, device="cuda", requires_grad=True)
    for _ in range(2):
        (g,) = ng.autograd.grad(c(x), x, create_graph=True)
        (h,) = ng.autograd.grad(g.sum(), x)
        (gr,) = ng.autograd.grad(f(x), x, create_graph=True)
        (hr,) = ng.autograd.grad(gr.sum(), x)
        np.testing.assert_allclose(_host(g), _host(gr), rtol=1e-12)
        np.testing.assert_allclose(_host(h), _host(hr), rtol=1e-12)


def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def hessian(x):
    # (func.hessian builds its basis on the CPU, which eager CUDA refuses today: the rows
    # through autograd.grad instead)
    (g,) = ng.autograd.grad(rosen(x), x, create_graph=True)
    return ng.stack([ng.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(len(x))])


@pytest.mark.parametrize("name", ["grad", "hessian"])
def test_compiled_grad_and_hessian(name):
    t = func.grad(rosen) if name == "grad" else hessian
    x = np.linspace(-1, 1, 4)
    c = ng.compile(t)
    for _ in range(2):
        out = c(ng.tensor(x, device="cuda", requires_grad=name == "hessian"))
        assert out.device.type == "cuda"
        ref = t(ng.tensor(x, requires_grad=name == "hessian"))
        np.testing.assert_allclose(_host(out), _host(ref), rtol=1e-12)
    assert not c._breaks and next(iter(c._entries))[0] == "cuda:0"


def test_compiled_vmap():
    # (vmap of grad, and func.hessian/jacrev, make their cotangents or basis on the CPU,
    # which eager CUDA refuses today; compiled they would run eagerly with the same error)
    def f(w, x):
        return func.vmap(lambda r: ng.tanh(r @ w).sum() * ng.sigmoid(r).mean())(x)

    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((3, 2)), rng.standard_normal((4, 3))]
    c = ng.compile(f)
    for _ in range(2):
        out = c(*_inputs(arrays, "cuda", False))
        ref = f(*_inputs(arrays, "cpu", False))
        np.testing.assert_allclose(_host(out), _host(ref), rtol=1e-12)
    assert not c._breaks and next(iter(c._entries))[0] == "cuda:0"


def test_custom_function_is_traced_through():
    class Twice(ng.autograd.Function):  # a deliberately "wrong" backward: 2 * g
        @staticmethod
        def forward(ctx, x):
            return ng.sin(x)

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    c = ng.compile(lambda x: Twice.apply(x).sum())
    x = ng.tensor([0.1, 0.2, 0.3], device="cuda", requires_grad=True)
    for _ in range(2):
        (g,) = ng.autograd.grad(c(x), x)
        assert g.device.type == "cuda"
        np.testing.assert_allclose(_host(g), 2.0)
    assert not c._breaks and next(iter(c._entries))[0] == "cuda:0"


def test_function_with_its_own_cuda_kernels_is_one_opaque_call():
    def f(x, w):
        return (Cube.apply(x * w) * ng.tanh(x)).sum()

    x0, w0 = np.array([1.0, -2.0, 0.5]), np.array([0.5, 1.5, 2.0])
    c = ng.compile(f)
    for _ in range(2):
        x, w = _inputs([x0, w0], "cuda")
        out = c(x, w)
        gs = ng.autograd.grad(out, (x, w))
        xr, wr = _inputs([x0, w0], "cpu")
        ref = (((xr * wr) ** 3) * ng.tanh(xr)).sum()
        rs = ng.autograd.grad(ref, (xr, wr))
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
        for g, r in zip(gs, rs):
            np.testing.assert_allclose(_host(g), _host(r), rtol=1e-12)
    assert not c._breaks and "OpaqueFunction(" in c.explain()


def test_module_parameters_on_the_device_are_read_by_reference():
    ng.manual_seed(0)
    lin = ng.nn.Linear(3, 2).to("cuda")
    c = ng.compile(lin)
    x = ng.tensor(np.ones((4, 3)), dtype=ng.float32, device="cuda")
    for _ in range(2):
        np.testing.assert_allclose(_host(c(x)), _host(lin(x)), rtol=1e-6)
    with ng.no_grad():
        lin.weight.mul_(2)  # in place: no retrace, the compiled call sees it
    np.testing.assert_allclose(_host(c(x)), _host(lin(x)), rtol=1e-6)
    (key,) = c.__dict__["_compiled"]._entries
    assert key[0] == "cuda:0"


def test_devices_are_part_of_the_guard_and_mixed_devices_stay_eager():
    c = ng.compile(lambda x, y: (x * y).sum())
    a = ng.ones(3)
    np.testing.assert_allclose(c(a, a).item(), 3.0)
    np.testing.assert_allclose(c(a.cuda(), a.cuda()).item(), 3.0)
    assert sorted(str(type(k[0]).__name__) for k in c._entries) == ["bool", "str"]
    with pytest.raises(RuntimeError, match="same device"):
        c(a, a.cuda())


def test_cuda_kernels_module_is_in_the_cache_directory():
    c = ng.compile(chain)
    c(ng.tensor([0.5, 1.0], device="cuda"))
    (entry,) = c._entries.values()
    path = entry.fwd.module_path
    assert path is not None and path.startswith(os.environ["NUMBAGRAD_CACHE_DIR"])
    text = open(path).read()
    assert "CUDA kernels (numba.cuda.jit) for cuda:0" in text and "cache=True" in text


def every_family(x, w, b):
    # the math functions of the scalar namespace (mapped to device functions), comparisons
    # and bools, whole and fractional powers, full and partial sums (the PTX test's graph)
    z = x * w + b
    y = (
        ng.tanh(z) * ng.sigmoid(x)
        + ng.exp(-z * z)
        + ng.log1p(ng.abs(z))
        + ng.sin(x) * ng.cos(w)
        + ng.sqrt(ng.relu(z) + 1)
        + ng.rsqrt(x * x + 1)
        + ng.erf(z)
        + ng.softplus(z)
        + ng.maximum(z, x)
        - ng.minimum(z, w)
        + z**3
        + ng.abs(z) ** 0.5
        + ng.where(z > 0, z, 0.5 * z)
        + ng.floor(z)
        + ng.atan2(z, x)
        + ng.expm1(-ng.abs(z))
        + ng.log(ng.abs(z) + 1)
        + ng.sign(z)
        + ng.hypot(z, x)
    )
    m = ((z > 0) & (x < 1)) | (w == 0)
    return y.sum() + (y * m).sum(0).pow(2).sum() + y.mean(1, keepdim=True).sum()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_math_family_equals_eager(dtype):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((3, 4), (4,), (3, 1))]
    _check(every_family, arrays, tol=1e-10 if dtype == np.float64 else 2e-4, calls=1)


def test_domain_edges_match_the_cpu():
    # log of 0 and of a negative, sqrt of a negative, rsqrt and 1/x of 0: the values a GPU
    # gives (the simulator's Python math would raise). (exp overflow and sin(inf) are not
    # here: the traced call runs the eager CUDA kernels, which raise on them in the
    # simulator.)
    def f(x):
        y = ng.log(x) + ng.sqrt(x) + ng.log1p(-(x * x)) + ng.rsqrt(x * x) + 1 / x
        return y + ng.sigmoid(-x * 1e4) + ng.acos(x)

    x = np.array([0.0, -1.0, 1.0, 2.0])
    c = ng.compile(f)
    for _ in range(2):
        out = c(ng.tensor(x, device="cuda"))
        with np.errstate(all="ignore"):
            ref = f(ng.tensor(x))
        np.testing.assert_allclose(_host(out), _host(ref), rtol=1e-12)
    assert not c._breaks and next(iter(c._entries))[0] == "cuda:0"


def test_sums_over_several_dims_of_a_3d_chain():
    def f(x, w):
        y = ng.sigmoid(x * w) - 0.5 * x  # (2, 3, 4) * (3, 1): broadcast in the middle
        return y.sum((0, 2)) + y.mean(-1, keepdim=True).sum((0, 2)) + y.sum() * w.sum()

    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 1))]
    c = ng.compile(f)
    xs = _inputs(arrays, "cuda")
    ys = _inputs(arrays, "cpu")
    for _ in range(2):
        out, ref = c(*xs), f(*ys)
        np.testing.assert_allclose(_host(out), _host(ref), rtol=1e-12)
        gs = ng.autograd.grad((out * out).sum(), xs)
        rs = ng.autograd.grad((ref * ref).sum(), ys)
        for g, r in zip(gs, rs):
            np.testing.assert_allclose(_host(g), _host(r), rtol=1e-12)
    assert not c._breaks
    assert "cuda.atomic.add(s" in c.explain()  # (partial sums accumulate on the device)


def test_random_draws_on_the_device_match_eager_numbers():
    def f(x):
        y = ng.nn.functional.dropout(ng.tanh(x), 0.5, training=True)
        return y.sum() + ng.randn(3, device="cuda").sum()

    c = ng.compile(f)
    x = ng.linspace(-1, 1, 6, device="cuda", requires_grad=True)
    for seed in range(3):  # every compiled call draws anew, the eager call's numbers
        ng.manual_seed(seed)
        out = c(x)
        ng.manual_seed(seed)
        np.testing.assert_allclose(out.item(), f(x).item(), rtol=1e-6)
    assert not c._breaks and next(iter(c._entries))[0] == "cuda:0"


def test_in_place_ops_run_eagerly_with_a_warning():
    # (in-place ops compile on the CPU only: a CUDA call that writes in place is a graph
    # break, NOTE [In-place writes in compiled graphs])
    def f(x):
        v = x.clone()
        v.mul_(2)
        x.add_(1)
        return v + x

    c = ng.compile(f)
    x = ng.tensor([1.0, 2.0], device="cuda")
    with pytest.warns(UserWarning, match="in a compiled CUDA call"):
        out = c(x)
    np.testing.assert_array_equal(_host(out), [4.0, 7.0])
    np.testing.assert_array_equal(_host(x), [2.0, 3.0])
    assert x._version == 1


def test_new_sizes_and_draws_from_tensors_on_the_device():
    def f(x, p):
        return (ng.tanh(x) * ng.bernoulli(p)).mean()

    c = ng.compile(f)
    for n in (4, 5, 6):  # one structure; a draw from tensors recorded, drawn on the device
        x = ng.linspace(-1, 1, n, device="cuda", requires_grad=True)
        p = ng.full((n,), 0.5, device="cuda")
        ng.manual_seed(n)
        out = c(x, p)
        (g,) = ng.autograd.grad(out, x)
        ng.manual_seed(n)
        ref = f(x, p)
        (r,) = ng.autograd.grad(ref, x)
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-6)
        np.testing.assert_allclose(_host(g), _host(r), rtol=1e-6)
    assert not c._breaks and len(c._structures) == 1 and len(c._entries) == 3
    assert "DrawFrom(" in c.explain()
    # mean's count is a kernel argument (not 4 or less: a literal), so sizes share kernels
    sources = {
        (en.fwd_grad or en.fwd).kernels + en.bwd.kernels
        for en in c._entries.values()
        if en.sizes[0] != (4,)
    }
    assert len(sources) == 1 and "p0" in next(iter(sources))
