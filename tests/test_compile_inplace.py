"""numbagrad.compile with in-place ops: functionalised writes to tensors made inside the
call, writes back into inputs and captured tensors, versions, aliasing, custom ops that
mutate their arguments (NOTE [In-place writes in compiled graphs])."""

import re
import warnings

import numba
import numpy as np
import pytest

import numbagrad as ng
from numbagrad import func


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "ngc"))


@pytest.fixture
def no_breaks():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a graph break warns: an error here
        yield


# -- writes to tensors made inside the call ----------------------------------------------------
def clone_mul(t, x):
    v = x.clone()
    v.mul_(2)
    return (v * x).sum()


def index_into_zeros(t, x):
    out = t.zeros(6, dtype=x.dtype)
    out[t.tensor([0, 2, 5])] = x[:3] * 2
    out[1] = x[4]
    return (out * t.arange(6, dtype=x.dtype)).sum()


def add_in_loop(t, x):
    h = x * 2
    for k in range(3):
        h.add_(t.tanh(x) * (k + 1))
        h.mul_(0.9)
        h += x * x
    return h.pow(2).sum()


def through_view_of_clone(t, x):
    v = x.clone().reshape(2, 3)
    col = v[:, 0]
    col.mul_(3)  # written through a view: v changes too
    row = v[1]  # a view made before the next write, read after it
    v.view(-1)[1:3].clamp_(min=-0.2, max=0.3)
    return (v * v).sum() + row.sum() * 2 + col.sum()


def relu_clamp(t, x):
    h = x * 1.5
    t.nn.functional.relu_(h)
    h2 = x.clone()
    h2.clamp_(-0.5, 0.5)
    return (h * h2).sum() + h.sum()


FUNCS = [clone_mul, index_into_zeros, add_in_loop, through_view_of_clone, relu_clamp]
X = np.linspace(-1.2, 1.3, 6)


@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.__name__)
def test_internal_writes_compile_and_grads_equal_eager_and_torch(f, no_breaks):
    torch = pytest.importorskip("torch")
    c = ng.compile(lambda x: f(ng, x), fullgraph=True)
    xt = torch.tensor(X, requires_grad=True)
    want = f(torch, xt)
    (gt,) = torch.autograd.grad(want, xt)
    x = ng.tensor(X, requires_grad=True)
    for _ in range(3):  # traced, then compiled
        out = c(x)
        x.grad = None
        out.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), gt.numpy(), rtol=1e-12, atol=1e-14)
        (ge,) = ng.autograd.grad(f(ng, x), x)
        np.testing.assert_allclose(x.grad.numpy(), ge.numpy(), rtol=1e-12, atol=1e-14)
    assert len(c._entries) == 1 and not c._breaks
    # func.grad of the same function, compiled (where eager func.grad takes the function)
    g = func.grad(lambda x: f(ng, x))
    try:
        g(ng.tensor(X))
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=re.escape(str(e)[:40])):
            ng.compile(g)(ng.tensor(X))
        return
    cg = ng.compile(g, fullgraph=True)
    for _ in range(2):
        np.testing.assert_allclose(cg(ng.tensor(X)).numpy(), gt.numpy(), rtol=1e-12, atol=1e-14)


def test_internal_write_listing_is_functional(no_breaks):
    c = ng.compile(lambda x: through_view_of_clone(ng, x))
    c(ng.tensor(X))
    text = c.explain()
    assert "AsStridedPut" in text and "AsStrided(" in text


def test_new_values_of_a_const_do_not_leak_into_later_calls(no_breaks):
    def f(y, idx):
        out = ng.zeros(6)
        out[idx] = y
        return out

    c = ng.compile(f)
    np.testing.assert_array_equal(c(ng.ones(2), ng.tensor([0, 1])).numpy(), [1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(c(ng.ones(2), ng.tensor([4, 5])).numpy(), [0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(c(ng.ones(2), ng.tensor([2, 3])).numpy(), [0, 0, 1, 1, 0, 0])


def test_write_with_a_cast(no_breaks):
    def f(x):
        v = ng.zeros(3, dtype=ng.float32)
        v.add_(x)  # a float64 result cast into float32
        v[0] = 7
        return v

    c = ng.compile(f)
    x = ng.tensor([1.25, 2.5, 3.75], dtype=ng.float64)
    for _ in range(2):
        out = c(x)
        assert out.dtype == ng.float32
        np.testing.assert_array_equal(out.numpy(), f(x).numpy())


# -- writes to inputs and captured tensors ------------------------------------------------------
def test_write_to_an_input_goes_back_and_bumps_the_version(no_breaks):
    def f(x):
        x.add_(1)
        x[0] = -x[1]
        return x * 2

    c = ng.compile(f)
    x, xe = ng.zeros(3), ng.zeros(3)
    for _ in range(3):
        out, oe = c(x), f(xe)
        np.testing.assert_array_equal(x.numpy(), xe.numpy())
        np.testing.assert_array_equal(out.numpy(), oe.numpy())
        assert x._version == xe._version


def test_returning_the_written_input_returns_it(no_breaks):
    c = ng.compile(lambda x: x.mul_(2))
    x = ng.ones(3)
    for k in range(2):
        assert c(x) is x
        np.testing.assert_array_equal(x.numpy(), 2.0 ** (k + 1))


def test_write_into_a_strided_input(no_breaks):
    def f(x):
        x.mul_(10)
        return x.sum()

    c = ng.compile(f)
    base = ng.arange(12.0).reshape(3, 4)
    want = base.clone()
    for _ in range(2):
        c(base[:, 1])
        want[:, 1] *= 10
        np.testing.assert_array_equal(base.numpy(), want.numpy())


def test_write_through_a_view_of_an_input(no_breaks):
    def f(x):
        x[1:].add_(x[:-1])  # reads x before the write: the views re-derive
        return x[0] + x[-1]

    c = ng.compile(f)
    x, xe = ng.arange(5.0), ng.arange(5.0)
    for _ in range(3):
        np.testing.assert_array_equal(c(x).numpy(), f(xe).numpy())
        np.testing.assert_array_equal(x.numpy(), xe.numpy())
        assert x._version == xe._version


class MLP(ng.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = ng.nn.Linear(4, 8)
        self.l2 = ng.nn.Linear(8, 2)

    def forward(self, x):
        return self.l2(ng.tanh(self.l1(x)))


def sgd_step(model, x, y, lr=0.1):
    params = list(model.parameters())
    loss = ((model(x) - y) ** 2).mean()
    grads = ng.autograd.grad(loss, params)
    with ng.no_grad():
        for p, g in zip(params, grads):
            p.sub_(lr * g)
    return loss.detach()


def test_hand_written_sgd_step_equals_eager(no_breaks):
    ng.manual_seed(0)
    m, me = MLP(), MLP()
    me.load_state_dict(m.state_dict())
    x, y = ng.randn(16, 4), ng.randn(16, 2)
    step = ng.compile(lambda x, y: sgd_step(m, x, y))
    for p, q in zip(m.parameters(), me.parameters()):
        q._storage[1] = p._version  # (load_state_dict wrote into me's)
    for _ in range(4):
        loss, loss_e = step(x, y), sgd_step(me, x, y)
        np.testing.assert_allclose(loss.item(), loss_e.item(), rtol=1e-6)
        for p, q in zip(m.parameters(), me.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5)
            assert p._version == q._version
    assert len(step._entries) == 1


def test_a_saved_tensor_modified_afterwards_still_raises(no_breaks):
    def f(x, w):
        x.add_(1)  # x does not require grad: written back
        return (x * w).sum()

    c = ng.compile(f)
    w = ng.randn(3, requires_grad=True)
    x = ng.zeros(3)
    c(x, w).backward()
    np.testing.assert_array_equal(w.grad.numpy(), 1.0)
    out = c(x, w)
    w.grad = None
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(w.grad.numpy(), 2.0)  # x's written value
    x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
    xe = ng.zeros(3)
    oe = f(xe, w)  # eager says the same
    xe.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        oe.backward()


def test_write_to_a_leaf_that_requires_grad_raises_as_eager():
    def f(x):
        x.add_(1)
        return x

    c = ng.compile(f)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        c(ng.zeros(3, requires_grad=True))


def test_aliased_inputs_are_not_wrong():
    def f(a, b):
        a.mul_(2)
        return a + b

    c = ng.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = ng.ones(3)
        np.testing.assert_array_equal(c(a, ng.ones(3)).numpy(), 3.0)
    z = ng.ones(3)
    with pytest.warns(
        UserWarning, match=r"shares memory with another one \(at .*test_compile_inplace"
    ):
        out = c(z, z)
    np.testing.assert_array_equal(out.numpy(), 4.0)
    t, te = ng.ones(4), ng.ones(4)
    np.testing.assert_array_equal(c(t[:3], t[1:]).numpy(), f(te[:3], te[1:]).numpy())
    np.testing.assert_array_equal(t.numpy(), te.numpy())
    a = ng.ones(3)  # not aliased again: the compiled entry
    np.testing.assert_array_equal(c(a, ng.ones(3)).numpy(), 3.0)
    np.testing.assert_array_equal(a.numpy(), 2.0)


def test_write_of_a_value_that_requires_grad_into_an_input_breaks_at_its_line():
    def f(x, w):
        x.add_(w)  # the caller's x would take a history
        return x

    c = ng.compile(f)
    x, w = ng.zeros(3), ng.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match=r"requires grad into an input.*test_compile_inplace"):
        out = c(x, w)
    assert out is x and x.grad_fn is not None
    np.testing.assert_array_equal(x.detach().numpy(), 1.0)


def test_a_direct_write_into_memory_breaks_at_its_line():
    def f(x):
        v = x.clone()
        v.numpy()[0] = 5  # not through an op
        return v * 2

    c = ng.compile(f)
    with pytest.warns(UserWarning, match="graph break"):
        out = c(ng.ones(2))
    np.testing.assert_array_equal(out.numpy(), [10, 2])


# -- custom ops that mutate their arguments ---------------------------------------------------
@numba.njit
def _scale_into_kernel(x, out, k: float) -> None:
    for i in range(x.shape[0]):
        out[i] += k * x[i]


scale_into = ng.library.custom_op(
    "testinplace::scale_into", _scale_into_kernel, mutates_args=("out",)
)


@numba.njit
def _fill_ret_kernel(x, out):
    out[:] = x * 2
    return x + 1


fill_ret = ng.library.custom_op(
    "testinplace::fill_ret",
    _fill_ret_kernel,
    mutates_args=("out",),
    schema="(Tensor x, Tensor out) -> Tensor",
)


def test_mutating_custom_op_eager():
    x, out = ng.arange(3.0), ng.zeros(3)
    assert scale_into(x, out, 2.0) is None
    np.testing.assert_array_equal(out.numpy(), [0, 2, 4])
    assert out._version == 1 and x._version == 0
    r = fill_ret(x, out=out)
    np.testing.assert_array_equal(r.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(out.numpy(), [0, 2, 4])
    assert out._version == 2
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        scale_into(x, ng.zeros(3, requires_grad=True), 1.0)
    with pytest.raises(RuntimeError, match="requires grad"):
        scale_into(x, ng.zeros(3, requires_grad=True) * 1, 1.0)
    with pytest.raises(RuntimeError, match="memory location"):
        scale_into(x, ng.zeros(1).expand(3), 1.0)
    with pytest.raises(NotImplementedError, match="transforms"):
        func.vmap(lambda o: scale_into(x, o, 1.0))(ng.zeros(2, 3))


def test_mutating_custom_op_compiled_writes_the_callers_buffer(no_breaks):
    def f(x, out):
        scale_into(x, out, 2.0)
        return out * 1 + x

    c = ng.compile(f)
    x = ng.arange(3.0)
    o, oe = ng.zeros(3), ng.zeros(3)
    for _ in range(3):
        np.testing.assert_array_equal(c(x, o).numpy(), f(x, oe).numpy())
        np.testing.assert_array_equal(o.numpy(), oe.numpy())
        assert o._version == oe._version
    assert "written back in place" in c.explain()


def test_mutating_custom_op_on_an_internal_buffer_with_grad(no_breaks):
    def f(x):
        buf = ng.zeros(3, dtype=x.dtype)
        r = fill_ret(x.detach(), buf)
        return (buf * x).sum() + r.sum()

    c = ng.compile(f)
    x = ng.arange(3.0, dtype=ng.float64, requires_grad=True)
    for _ in range(3):
        out = c(x)
        (g,) = ng.autograd.grad(out, x)
        np.testing.assert_allclose(out.item(), f(x).item())
        np.testing.assert_array_equal(g.numpy(), 2 * x.detach().numpy())


def test_mutating_custom_op_on_aliased_arguments_breaks():
    c = ng.compile(lambda x: scale_into(x, x, 1.0))
    x = ng.ones(3)
    with pytest.warns(UserWarning, match="shares memory"):
        c(x)
    np.testing.assert_array_equal(x.numpy(), 2.0)
    assert x._version == 1


def test_fills_copies_masks_and_inplace_activations(no_breaks):
    def f(x):
        a = ng.zeros(4)
        a.fill_(2.0)
        a.copy_(x * 3)
        a += 1
        b = ng.zeros(4)
        b[ng.tensor([1, 3])] = x[:2]
        b.masked_fill_(b > 1.5, -1.0)
        c = ng.nn.functional.relu(x - 0.5, inplace=True)
        return a + b + c

    c = ng.compile(f)
    x = ng.tensor([0.1, 2.0, -3.0, 1.0])
    for _ in range(2):
        np.testing.assert_array_equal(c(x).numpy(), f(x).numpy())


def test_backward_and_optimizer_steps_inside_break_before_writing():
    m = ng.nn.Linear(3, 1)
    me = ng.nn.Linear(3, 1)
    me.load_state_dict(m.state_dict())
    opt = ng.optim.SGD(m.parameters(), lr=0.1)
    opt_e = ng.optim.SGD(me.parameters(), lr=0.1)

    def step(model, opt, x):
        opt.zero_grad(set_to_none=False) if model.weight.grad is not None else None
        model(x).sum().backward()
        opt.step()

    c = ng.compile(lambda x: step(m, opt, x))
    x = ng.ones(2, 3)
    with pytest.warns(UserWarning, match=r"backward\(\).*test_compile_inplace"):
        c(x)
    step(me, opt_e, x)
    for _ in range(2):
        c(x)
        step(me, opt_e, x)
    np.testing.assert_allclose(m.weight.detach().numpy(), me.weight.detach().numpy())
    np.testing.assert_allclose(m.weight.grad.numpy(), me.weight.grad.numpy())
    # a step alone (gradients from outside): once, not once by the trace and once eagerly
    w0 = m.weight.detach().clone()
    cs = ng.compile(lambda: opt.step())
    with pytest.warns(UserWarning, match=r"SGD.step\(\)"):
        cs()
    np.testing.assert_allclose(
        (w0 - m.weight.detach()).numpy(), 0.1 * m.weight.grad.numpy(), rtol=1e-6
    )


@ng.library.custom_op("testinplace::py_kernel", mutates_args=())
def py_kernel(x: ng.Tensor) -> ng.Tensor:
    out = x.clone()
    out.mul_(2)  # in place inside the op's own implementation: the op's business
    out[0] = 7
    return out


def test_writes_inside_an_ops_implementation_stay_inside_it(no_breaks):
    c = ng.compile(lambda x: py_kernel(x) + 1)
    x = ng.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(c(x).numpy(), [8, 3, 5])
    en = next(iter(c._entries.values()))
    assert en.trace.writes == [] and len(en.trace.fwd.inputs) == 1
