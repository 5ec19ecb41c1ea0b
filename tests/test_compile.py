"""numbagrad.compile: compiled results equal eager ones, guards, graph breaks, the node."""

import os
import warnings

import numba
import numba.core.event
import numpy as np
import pytest
from _opdb import op_db
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ops import Call, as_tuple, is_float, to_numpy

import numbagrad as ng
from numbagrad import func
from numbagrad._compile import codegen


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    # one cache directory for the module's tests (kernels are shared between them)
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "ngc"))


def chain(x):
    y = x
    for _ in range(3):
        y = ng.tanh(y) * 1.1 + ng.sigmoid(y) - y * y * 0.1
    return y.sum()


def _grads(f, *xs):
    out = f(*xs)
    return out, ng.autograd.grad(out, xs)


@pytest.mark.parametrize("dtype", [ng.float64, ng.float32])
def test_chain_forward_backward_equal_eager(dtype):
    c = ng.compile(chain)
    x = ng.linspace(-1.5, 1.5, 16, dtype=dtype, requires_grad=True)
    for _ in range(3):  # the first call traces, the next ones run the compiled code
        out, (g,) = _grads(c, x)
        ref, (gr,) = _grads(chain, x)
        tol = 1e-12 if dtype == ng.float64 else 1e-5
        np.testing.assert_allclose(out.item(), ref.item(), rtol=tol)
        np.testing.assert_allclose(g.numpy(), gr.numpy(), rtol=tol, atol=tol)
        assert out.dtype == dtype and g.dtype == dtype
    assert len(c._entries) == 1
    assert out.grad_fn.name() == "CompiledFunctionBackward"


def test_backward_accumulates_into_grad_and_hooks_run():
    c = ng.compile(chain)
    x = ng.linspace(-1, 1, 8, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    c(x).backward()
    c(x).backward()
    assert len(seen) == 2
    ref = ng.autograd.grad(chain(x), x)[0]
    np.testing.assert_allclose(x.grad.numpy(), 2 * ref.numpy(), rtol=1e-4, atol=1e-6)


def test_no_grad_call_has_no_history():
    c = ng.compile(chain)
    x = ng.linspace(-1, 1, 8, dtype=ng.float64, requires_grad=True)
    with ng.no_grad():
        out = c(x)
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_allclose(out.item(), chain(x).item(), rtol=1e-12)


def test_broadcasting_reductions_and_array_calls():
    def f(x, w, b):
        h = ng.tanh(x @ w + b)  # matmul: an array call; + b broadcasts
        s = ng.softmax(h, dim=-1)
        return (s * h).sum(dim=1).mean() + h.sum(0, keepdim=True).pow(2).sum()

    c = ng.compile(f)
    rng = np.random.default_rng(0)
    x = ng.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    w = ng.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = ng.tensor(rng.standard_normal(4), requires_grad=True)
    for _ in range(2):
        out, gs = _grads(c, x, w, b)
        ref, rs = _grads(f, x, w, b)
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
        for g, r in zip(gs, rs):
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-10, atol=1e-12)


def test_partial_requires_grad_and_multiple_outputs():
    def f(x, y):
        return x * y, ng.exp(x) + 1, (y > 0)

    c = ng.compile(f)
    x = ng.randn(4, dtype=ng.float64, requires_grad=True)
    y = ng.randn(4, dtype=ng.float64)
    a, b, m = c(x, y)
    assert a.requires_grad and b.requires_grad and not m.requires_grad
    assert m.dtype == ng.bool
    (a.sum() + 2 * b.sum()).backward()
    np.testing.assert_allclose(
        x.grad.numpy(), y.numpy() + 2 * np.exp(x.detach().numpy()), rtol=1e-6
    )


def test_returning_an_input_returns_the_same_tensor():
    c = ng.compile(lambda x, y: (x, x + y))
    x, y = ng.randn(3), ng.randn(3)
    a, _ = c(x, y)
    a2, _ = c(x, y)
    assert a is x and a2 is x


def test_double_backward_equals_eager():
    def f(x):
        return (ng.sin(x) * x**3).sum()

    c = ng.compile(f)
    x = ng.linspace(-1, 1, 5, dtype=ng.float64, requires_grad=True)
    for _ in range(2):
        (g,) = ng.autograd.grad(c(x), x, create_graph=True)
        (h,) = ng.autograd.grad(g.sum(), x)
        (gr,) = ng.autograd.grad(f(x), x, create_graph=True)
        (hr,) = ng.autograd.grad(gr.sum(), x)
        np.testing.assert_allclose(g.detach().numpy(), gr.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(h.numpy(), hr.numpy(), rtol=1e-12)


def test_second_backward_without_retain_graph_raises():
    c = ng.compile(lambda x: ng.tanh(x).sum())
    x = ng.randn(4, requires_grad=True)
    c(x)  # trace
    out = c(x)
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_input_modified_in_place_before_backward_raises():
    c = ng.compile(lambda x, y: (x * y).sum())
    x = ng.randn(4, requires_grad=True)
    y = ng.randn(4)
    c(x, y)
    out = c(x, y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


# -- transforms ---------------------------------------------------------------------------
def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def test_compiled_transforms_equal_eager():
    x = ng.linspace(-1, 1, 6, dtype=ng.float64)
    for t in (func.grad(rosen), func.hessian(rosen), func.jacrev(func.grad(rosen))):
        c = ng.compile(t)
        for _ in range(2):
            np.testing.assert_allclose(c(x).numpy(), t(x).numpy(), rtol=1e-12)


def test_compiled_per_example_gradients():
    def loss(w, x, y):
        return ((ng.tanh(x @ w) - y) ** 2).mean()

    pe = ng.compile(func.vmap(func.grad(loss), in_dims=(None, 0, 0)))
    rng = np.random.default_rng(1)
    w = ng.tensor(rng.standard_normal((3, 2)))
    x = ng.tensor(rng.standard_normal((7, 3)))
    y = ng.tensor(rng.standard_normal((7, 2)))
    for _ in range(2):
        ref = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(w, x, y)
        np.testing.assert_allclose(pe(w, x, y).numpy(), ref.numpy(), rtol=1e-12)


def test_transform_of_a_compiled_function_runs_eagerly_and_is_right():
    c = ng.compile(rosen)
    x = ng.linspace(-1, 1, 5, dtype=ng.float64)
    np.testing.assert_allclose(func.grad(c)(x).numpy(), func.grad(rosen)(x).numpy())


def test_custom_function_backward_is_traced():
    class Twice(ng.autograd.Function):  # a deliberately "wrong" backward: 2 * g
        @staticmethod
        def forward(ctx, x):
            return ng.sin(x)

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    def f(x):
        return Twice.apply(x).sum()

    c = ng.compile(f)
    x = ng.randn(3, requires_grad=True)
    for _ in range(2):
        (g,) = ng.autograd.grad(c(x), x)
        np.testing.assert_allclose(g.numpy(), 2.0)
    assert not c._breaks


# -- guards ---------------------------------------------------------------------------------
SCALE = 2.0


def scaled(x):
    return (x * SCALE).sum()


def test_guards_dtype_shape_requires_grad_grad_mode_and_globals():
    global SCALE
    c = ng.compile(scaled)
    x = ng.ones(3)
    assert c(x).item() == 6.0
    assert c(ng.ones(3, dtype=ng.float32)).dtype == ng.float32
    assert c(ng.ones(5)).item() == 10.0
    assert c(ng.ones(3, requires_grad=True)).requires_grad
    with ng.no_grad():
        assert not c(ng.ones(3, requires_grad=True)).requires_grad
    n = len(c._entries)
    try:
        SCALE = 3.0
        assert c(x).item() == 9.0  # the global changed: retraced, never stale
    finally:
        SCALE = 2.0
    assert c(x).item() == 6.0
    assert len(c._entries) == n


def test_guards_closure_and_captured_tensors():
    k = 2.0
    w = ng.ones(3)

    def f(x):
        return (x * w * k).sum()

    c = ng.compile(f)
    x = ng.ones(3)
    assert c(x).item() == 6.0
    w.mul_(2)  # in place: read by reference, no retrace needed
    assert c(x).item() == 12.0
    k = 1.0
    assert c(x).item() == 6.0
    w = ng.full((3,), 5.0)
    assert c(x).item() == 15.0


def test_module_compile_training_step_matches_eager_and_sees_updates():
    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(4, 8), ng.nn.Tanh(), ng.nn.Linear(8, 1))
    ref = ng.nn.Sequential(ng.nn.Linear(4, 8), ng.nn.Tanh(), ng.nn.Linear(8, 1))
    ref.load_state_dict(model.state_dict())
    cm = ng.compile(model)
    assert next(iter(cm.state_dict())).startswith("_orig_mod.")
    opt = ng.optim.SGD(model.parameters(), lr=0.1)
    opt_r = ng.optim.SGD(ref.parameters(), lr=0.1)
    x, y = ng.randn(16, 4), ng.randn(16, 1)
    for _ in range(4):
        for m, o in ((cm, opt), (ref, opt_r)):
            o.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            o.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert len(cm._compiled._entries) == 1
    model[0].weight = ng.nn.Parameter(ng.zeros(8, 4))  # replaced: seen by the guards
    with ng.no_grad():
        np.testing.assert_allclose(cm(x).numpy(), ref_out(model, x), rtol=1e-6)


def ref_out(model, x):
    with ng.no_grad():
        return model(x).numpy()


def test_module_compile_in_place():
    model = ng.nn.Linear(3, 2)
    x = ng.randn(4, 3)
    ref = model(x).detach().numpy()
    model.compile()
    np.testing.assert_allclose(model(x).detach().numpy(), ref)
    np.testing.assert_allclose(model(x).detach().numpy(), ref)


# -- graph breaks -----------------------------------------------------------------------------
def branchy(x):
    if x.sum().item() > 0:  # a Python branch on a value
        return x * 2
    return x * 3


def test_graph_break_warns_once_runs_eagerly_and_fullgraph_raises():
    c = ng.compile(branchy)
    with pytest.warns(
        UserWarning, match=r"graph break: \.item\(\) on a traced tensor .*test_compile"
    ):
        assert c(ng.ones(2)).sum().item() == 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c(-ng.ones(2)).sum().item() == -6.0
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        ng.compile(branchy, fullgraph=True)(ng.ones(2))


def test_in_place_on_an_input_happens_once():
    def f(x):
        x.add_(1)
        return x * 2

    c = ng.compile(f)
    x = ng.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled: the new value is written back once
        out = c(x)
    np.testing.assert_array_equal(x.numpy(), 1.0)
    np.testing.assert_array_equal(out.numpy(), 2.0)
    assert x._version == 1


def test_random_draws_are_recorded_and_match_eager_numbers():
    def f(x):
        return x + ng.randn(3)

    c = ng.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # recorded, not a graph break
        ng.manual_seed(3)
        a = c(ng.zeros(3))
        b = c(ng.zeros(3))
    ng.manual_seed(3)
    np.testing.assert_array_equal(a.numpy(), ng.randn(3).numpy())
    np.testing.assert_array_equal(b.numpy(), ng.randn(3).numpy())


def draws_from_tensors(p, m, s, lam, w):
    a = ng.bernoulli(p) * 2 + ng.bernoulli(p, 0.3)
    b = ng.normal(m, s) * p + ng.normal(m, 0.5)
    return (a + b + ng.poisson(lam)).sum(), ng.multinomial(w, 3), ng.multinomial(w, 4, True)


def test_draws_from_tensors_are_recorded_and_match_eager_numbers():
    c = ng.compile(draws_from_tensors)
    p = ng.full((5,), 0.5, dtype=ng.float64, requires_grad=True)
    args = (p, ng.zeros(5), ng.ones(5), ng.full((5,), 3.0), ng.rand(2, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # recorded, not a graph break
        for seed in (3, 3, 4):  # the traced call, then the compiled code, drawing anew
            ng.manual_seed(seed)
            ref = draws_from_tensors(*args)
            (gr,) = ng.autograd.grad(ref[0], p)
            after = ng.rand(2)  # the generator advanced as far as eagerly
            ng.manual_seed(seed)
            out = c(*args)
            (g,) = ng.autograd.grad(out[0], p)
            np.testing.assert_array_equal(ng.rand(2).numpy(), after.numpy())
            for o, r in zip(out, ref):
                assert o.dtype == r.dtype
                np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())
            np.testing.assert_array_equal(g.numpy(), gr.numpy())
    assert len(c._entries) == 1
    assert "DrawFrom(" in c.explain()
    with pytest.raises(RuntimeError, match="bernoulli"):  # the draw's checks, every call
        c(ng.full((5,), 2.0, dtype=ng.float64), *args[1:])


def test_draw_from_tensors_in_a_double_backward_uses_the_drawn_numbers():
    def f(x, p):
        return (x**3 * ng.bernoulli(p)).sum()

    c = ng.compile(f)
    x = ng.linspace(-1, 1, 6, dtype=ng.float64, requires_grad=True)
    p = ng.full((6,), 0.5, dtype=ng.float64)
    for _ in range(2):
        ng.manual_seed(1)
        (g,) = ng.autograd.grad(c(x, p), x, create_graph=True)
        (h,) = ng.autograd.grad(g.sum(), x)
        ng.manual_seed(1)
        (gr,) = ng.autograd.grad(f(x, p), x, create_graph=True)
        (hr,) = ng.autograd.grad(gr.sum(), x)
        np.testing.assert_array_equal(g.detach().numpy(), gr.detach().numpy())
        np.testing.assert_allclose(h.numpy(), hr.numpy(), rtol=1e-12)


def test_a_draw_from_tensors_under_vmap_breaks_and_matches_eager_numbers():
    def f(p):
        return func.vmap(lambda q: ng.bernoulli(q) * 2, randomness="different")(p)

    c = ng.compile(f)
    p = ng.full((3, 5), 0.5)
    ng.manual_seed(3)
    with pytest.warns(UserWarning, match="random draw"):
        a = c(p)
    ng.manual_seed(3)
    np.testing.assert_array_equal(a.numpy(), f(p).numpy())


def test_cache_size_limit_falls_back_with_one_warning(monkeypatch):
    monkeypatch.setattr(ng._dynamo.config, "cache_size_limit", 2)
    c = ng.compile(lambda x: x * 2)
    c(ng.ones(2))
    c(ng.ones(2, 2))
    c(ng.ones(3, 5))  # a new size of a known structure: not counted
    with pytest.warns(UserWarning, match="cache size limit"):
        assert c(ng.ones(3, 1, 2)).sum().item() == 12.0  # a new rank: a third structure
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c(ng.ones(2, 2, 2, 2)).sum().item() == 32.0
    assert len(c._structures) == 2


# -- sizes (NOTE [Size variants]) -------------------------------------------------------------
class _NumbaCompiles(numba.core.event.Listener):
    """Counts Numba compilations (loads from its disk cache are not compilations)."""

    def __init__(self):
        self.n = 0

    def on_start(self, event):
        self.n += 1

    def on_end(self, event):
        pass


def _count_compiles():
    listener = _NumbaCompiles()
    return listener, numba.core.event.install_listener("numba:compile", listener)


def mlp_loss(w1, b1, w2, x, y):
    h = ng.tanh(x @ w1 + b1)
    return ((h @ w2 - y) ** 2).mean()  # (mean: a count derived from the batch size)


def test_new_sizes_reuse_kernels_and_stay_one_structure():
    ng.manual_seed(0)
    w1 = ng.randn(3, 6, dtype=ng.float64, requires_grad=True)
    b1 = ng.randn(6, dtype=ng.float64, requires_grad=True)
    w2 = ng.randn(6, 1, dtype=ng.float64, requires_grad=True)
    c = ng.compile(mlp_loss)
    cc = ng.compile(chain)
    c(w1, b1, w2, ng.randn(5, 3, dtype=ng.float64), ng.randn(5, 1, dtype=ng.float64)).backward()
    cc(ng.ones(5, requires_grad=True)).backward()  # (the first size compiles the kernels)
    listener, counting = _count_compiles()
    with counting, warnings.catch_warnings():
        warnings.simplefilter("error")  # twelve sizes: no cache size limit warning
        for n in range(6, 18):
            x = ng.randn(n, 3, dtype=ng.float64)
            y = ng.randn(n, 1, dtype=ng.float64)
            out = c(w1, b1, w2, x, y)
            grads = ng.autograd.grad(out, (w1, b1, w2))
            ref = mlp_loss(w1, b1, w2, x, y)
            refs = ng.autograd.grad(ref, (w1, b1, w2))
            np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
            for g, r in zip(grads, refs):
                np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-10, atol=1e-14)
            z = ng.linspace(-1, 1, n, requires_grad=True)
            out, (g,) = _grads(cc, z)
            ref, (r,) = _grads(chain, z)
            np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-5)
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)
    assert listener.n == 0  # every size ran the kernels compiled for the first one
    assert len(c._structures) == 1 and len(c._entries) == 13
    assert len(cc._structures) == 1 and len(cc._entries) == 13


def test_python_reading_a_size_is_traced_again_per_size():
    def f(x):
        return (x * x.shape[0]).reshape(x.shape[0] // 2, 2).sum(0)

    c = ng.compile(f)
    for n in (4, 6, 8, 6, 4):
        np.testing.assert_array_equal(c(ng.ones(n)).numpy(), f(ng.ones(n)).numpy())
    assert len(c._structures) == 1 and len(c._entries) == 3


def test_structure_is_dtype_rank_broadcasting_and_layout():
    c = ng.compile(lambda a: (a * 2).sum())
    calls = [
        ng.randn(4, 3),
        ng.randn(5, 2),  # another size: the same structure
        ng.randn(4, 1),  # a dim of 1 (broadcasting)
        ng.randn(3, 4).t(),  # another layout (F)
        ng.randn(2, 5).t(),
        ng.randn(4, 3).double(),
    ]
    for a in calls:
        np.testing.assert_allclose(c(a).item(), (a * 2).sum().item(), rtol=1e-6)
    assert len(c._entries) == 6 and len(c._structures) == 4


def test_size_variants_are_bounded_least_recently_used_first(monkeypatch):
    monkeypatch.setattr(ng._compile.runtime, "SIZE_VARIANTS_MAX", 3)
    c = ng.compile(lambda x: (x * 3).sum())
    for n in (2, 3, 4, 2, 5):  # 2 used again: 3 is the least recently used when 5 comes
        assert c(ng.ones(n)).item() == 3.0 * n
    kept = sorted(en.sizes[0][0] for en in c._entries.values())
    assert kept == [2, 4, 5]
    assert c(ng.ones(3)).item() == 9.0  # traced again


def test_dynamic_false_specialises_on_sizes(monkeypatch):
    monkeypatch.setattr(ng._dynamo.config, "cache_size_limit", 2)
    c = ng.compile(chain, dynamic=False)
    for n in (4, 5):
        x = ng.linspace(-1, 1, n, requires_grad=True)
        out, (g,) = _grads(c, x)
        ref, (r,) = _grads(chain, x)
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-5)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)
    assert len(c._structures) == 2
    en = next(iter(c._entries.values()))
    kernels = en.fwd_grad.kernels + en.bwd.kernels
    assert "n0 = 4" in kernels and "(x0, n0" not in kernels  # sizes as literals
    with pytest.warns(UserWarning, match="cache size limit"):  # every size counts
        assert c(ng.ones(6)).item() == chain(ng.ones(6)).item()
    m = ng.nn.Linear(3, 2)
    cm = ng.compile(m, dynamic=False)
    cm(ng.ones(4, 3))
    assert cm._compiled.dynamic is False
    m.compile(dynamic=False)
    assert m._compiled_call_impl.dynamic is False


def test_explain_shows_the_structure_and_the_sizes_seen():
    c = ng.compile(lambda x, k: (x * k).sum())
    for n in (3, 7, 5):
        c(ng.ones(n, 2, requires_grad=True), 2.0)
    text = c.explain()
    assert "structure: (f32[n,n] C requires_grad, float 2.0) on cpu, grad mode on" in text
    assert "sizes seen (3, least recently used first): ([3,2]), ([7,2]), ([5,2])" in text


# -- API --------------------------------------------------------------------------------------
def test_api_arguments():
    f = lambda x: x + 1  # noqa: E731
    assert ng.compile(f, disable=True) is f
    assert ng.compile(f, backend="eager") is f
    assert ng.compile(mode="max-autotune")(f)(ng.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        ng.compile(f, mode="fast")
    with pytest.raises(NotImplementedError, match="backend"):
        ng.compile(f, backend=lambda gm, ex: gm)
    with pytest.raises(NotImplementedError, match="options"):
        ng.compile(f, options={"triton.cudagraphs": True})
    with pytest.raises(TypeError):
        ng.compile(3)
    ng.compiler.reset()
    assert not ng.compiler.is_compiling()


def test_disable_and_is_compiling():
    seen = []

    def f(x):
        seen.append(ng.compiler.is_compiling())
        return x * 2

    c = ng.compile(f)
    c(ng.ones(2))
    c(ng.ones(2))
    assert seen == [True]  # traced once, then compiled code only
    with ng.compiler.disable():
        c(ng.ones(2))
    assert seen == [True, False]
    with pytest.raises(NotImplementedError, match="recursive"):
        ng.compiler.disable(f, recursive=False)


def test_explain_shows_graphs_and_generated_code(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path))
    c = ng.compile(chain)
    c(ng.ones(4, requires_grad=True)).backward()
    text = c.explain()
    assert "forward(a0: f32[4])" in text and "Tanh(" in text and "backward(" in text
    assert "@njit(cache=True" in text
    # the kernels' module, in the cache directory (this process may have loaded it before)
    path = next(iter(c._entries.values())).fwd.module_path
    assert os.path.basename(path).startswith("ng_") and os.path.exists(path)
    assert "graph break" in ng._dynamo.explain(branchy, ng.ones(2))


# -- every op of the op database, compiled --------------------------------------------------
@pytest.mark.parametrize("info", [i for i in op_db if i.supports_grad], ids=lambda i: i.name)
def test_op_database_compiled_equals_eager(info):
    for sample in info.sample_inputs()[:1]:
        call = Call(ng, info, sample, "float64", requires_grad=True)

        def f(*leaves, call=call):
            return tuple(o for o in as_tuple(call(*leaves)) if is_float(ng, o))

        c = ng.compile(f)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # graph breaks run eagerly: still equal
            for _ in range(2):
                outs = c(*call.leaves)
                ref = f(*call.leaves)
                rtol, atol = info.tol64
                for o, r in zip(outs, ref):
                    np.testing.assert_allclose(to_numpy(o), to_numpy(r), rtol=rtol, atol=atol)
                diff = [o for o in outs if o.requires_grad]
                if not diff:
                    continue
                cots = [ng.ones_like(o) for o in diff]
                gs = ng.autograd.grad(diff, call.leaves, cots, allow_unused=True)
                rs = ng.autograd.grad(
                    [r for r in ref if r.requires_grad], call.leaves, cots, allow_unused=True
                )
                grtol, gatol = info.grad_tol
                for g, r in zip(gs, rs):
                    assert (g is None) == (r is None), sample
                    if g is not None:
                        np.testing.assert_allclose(
                            g.numpy(), r.numpy(), rtol=max(grtol, 1e-9), atol=max(gatol, 1e-12)
                        )


# -- random chains ------------------------------------------------------------------------------
_UNARY = [ng.tanh, ng.sigmoid, ng.exp, ng.sin, ng.relu, ng.abs, lambda t: t * t, ng.neg]
_BINARY = [ng.add, ng.sub, ng.mul, ng.maximum, lambda a, b: a / (1 + b * b)]


@settings(max_examples=25, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 4), st.booleans()), min_size=1, max_size=8
    ),
    shape=st.sampled_from([(), (0,), (1,), (5,), (2, 3), (3, 1), (1, 4, 2)]),
    dtype=st.sampled_from(["float64", "float32"]),
    reduce=st.sampled_from(["sum", "mean", "dim0", "none"]),
)
def test_random_chains_equal_eager(ops, shape, dtype, reduce):
    def f(x, w):
        y = x
        for u, b, use_w in ops:
            y = _UNARY[u](y)
            y = _BINARY[b](y, w if use_w else 0.5)
        if reduce == "sum":
            return y.sum()
        if reduce == "mean":
            return y.mean()
        if reduce == "dim0" and y.ndim:
            return y.sum(0)
        return y

    rng = np.random.default_rng(len(ops))
    x = ng.tensor(rng.uniform(-1, 1, shape).astype(dtype), requires_grad=True)
    w = ng.tensor(rng.uniform(-1, 1, shape[-1:]).astype(dtype), requires_grad=True)
    c = ng.compile(f)
    tol = 1e-10 if dtype == "float64" else 2e-4
    for _ in range(2):
        out, ref = c(x, w), f(x, w)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
        cot = ng.ones_like(ref)
        gs = ng.autograd.grad(out, (x, w), cot, allow_unused=True)
        rs = ng.autograd.grad(ref, (x, w), cot, allow_unused=True)
        for g, r in zip(gs, rs):
            if r is None:
                assert g is None or not g.abs().sum().item()
            else:
                np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=tol, atol=tol)


def test_backward_through_one_of_several_outputs():
    def f(x):
        return ng.sin(x), ng.cos(x) * 2

    c = ng.compile(f)
    x = ng.linspace(-1, 1, 4, dtype=ng.float64, requires_grad=True)
    for _ in range(2):
        _, b = c(x)
        (g,) = ng.autograd.grad(b.sum(), x)  # output 0 gets no gradient: zeros
        np.testing.assert_allclose(g.numpy(), -2 * np.sin(x.detach().numpy()), rtol=1e-12)


@pytest.mark.parametrize("dim", [0, 1])
def test_threaded_loop_nests_equal_eager(dim, monkeypatch):
    # from PARALLEL_MIN iterations (off by default) the outer loop is a prange, except
    # where a sum accumulates along it into an array (dim=0 here): then it stays serial
    from numbagrad._compile import lower

    monkeypatch.setattr(lower, "PARALLEL_MIN", 1 << 17)
    monkeypatch.setattr(codegen, "PARALLEL_MIN", 1 << 17)

    def f(t):
        return ((t * 2 + 1) * t).sum(dim)

    c = ng.compile(f)
    x = ng.tensor(np.random.default_rng(0).standard_normal((600, 300)), requires_grad=True)
    for _ in range(2):
        out, (g,) = _grads(lambda t: c(t).sum(), x)
        ref, (r,) = _grads(lambda t: f(t).sum(), x)
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-10)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12)
    fwd = next(iter(c._entries.values())).fwd_grad.kernels
    assert ("prange" in fwd) == (dim == 1)


class _NumpyCube(ng.autograd.Function):
    """A Function that leaves numbagrad in forward (NumPy on the values); its backward is
    written with numbagrad ops, so it can be differentiated again."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ng.from_numpy(x.detach().numpy() ** 3)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


def test_function_leaving_numbagrad_is_one_opaque_call():
    def f(x, w):
        return (_NumpyCube.apply(x * w) * ng.tanh(x)).sum()

    c = ng.compile(f)
    x = ng.linspace(-1, 1, 6, dtype=ng.float64, requires_grad=True)
    w = ng.linspace(0.5, 2, 6, dtype=ng.float64, requires_grad=True)
    for _ in range(2):
        out, gs = _grads(c, x, w)
        ref, rs = _grads(f, x, w)
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
        for g, r in zip(gs, rs):
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12)
    assert not c._breaks
    assert "OpaqueFunction(" in c.explain() and "OpaqueFunctionBackward(" in c.explain()
    # double backward replays the forward eagerly: the Function's backward is differentiated
    (g,) = ng.autograd.grad(c(x, w), x, create_graph=True)
    (h,) = ng.autograd.grad(g.sum(), x)
    (gr,) = ng.autograd.grad(f(x, w), x, create_graph=True)
    (hr,) = ng.autograd.grad(gr.sum(), x)
    np.testing.assert_allclose(h.numpy(), hr.numpy(), rtol=1e-12)


def test_dropout_draws_the_eager_numbers_every_call():
    ng.manual_seed(0)
    model = ng.nn.Sequential(
        ng.nn.Linear(8, 16), ng.nn.ReLU(), ng.nn.Dropout(0.3), ng.nn.Linear(16, 1)
    )
    cm = ng.compile(model)
    x = ng.randn(32, 8)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph break
        for m in (model, cm, cm):
            ng.manual_seed(5)
            out = m(x).sum()
            out.backward()
            results.append((out.item(), model[0].weight.grad.numpy().copy()))
            model.zero_grad()
    for out, g in results[1:]:
        np.testing.assert_allclose(out, results[0][0], rtol=1e-6)
        np.testing.assert_allclose(g, results[0][1], rtol=1e-5, atol=1e-7)


def test_an_unused_draw_still_advances_the_generator():
    def f(x):
        ng.rand(2)  # unused, but eager mode draws it
        return x + ng.rand(3)

    c = ng.compile(f)
    for _ in range(2):
        ng.manual_seed(1)
        a = c(ng.zeros(3))
        ng.manual_seed(1)
        np.testing.assert_array_equal(a.numpy(), f(ng.zeros(3)).numpy())
