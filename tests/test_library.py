"""numbagrad.library.custom_op: eager, autograd, transforms, gradcheck, compile, errors."""

import warnings

import numba
import numpy as np
import pytest

import numbagrad as ng
from numbagrad import func


@numba.njit(cache=True)
def _xsig_kernel(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out.flat[i] = x.flat[i] / (1.0 + np.exp(-x.flat[i]))
    return out


@numba.njit(cache=True)
def _xsig_bwd_kernel(g, x):
    out = np.empty_like(x)
    for i in range(x.size):
        s = 1.0 / (1.0 + np.exp(-x.flat[i]))
        out.flat[i] = g.flat[i] * (s + x.flat[i] * s * (1 - s))
    return out


xsig = ng.library.custom_op("testlib::xsig", _xsig_kernel, mutates_args=())
xsig_bwd = ng.library.custom_op("testlib::xsig_bwd", _xsig_bwd_kernel, mutates_args=())


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward(ctx, g):
    (x,) = ctx.saved_tensors
    return xsig_bwd(g, x)  # a custom op too: differentiable once, compiled as an array call


xsig.register_autograd(_backward, setup_context=_setup)


def ref(x):
    return x * ng.sigmoid(x)


def x64(*shape, grad=True, seed=0):
    rng = np.random.default_rng(seed)
    return ng.tensor(rng.standard_normal(shape), requires_grad=grad)


def test_eager_values_and_gradients():
    x = x64(5)
    np.testing.assert_allclose(xsig(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-14)
    (g,) = ng.autograd.grad(xsig(x).sum(), x)
    (r,) = ng.autograd.grad(ref(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-13)
    assert ng.autograd.gradcheck(xsig, (x,))
    assert ng.ops.testlib.xsig is xsig


def test_transforms():
    x = x64(3, 4, grad=False)
    np.testing.assert_allclose(
        func.grad(lambda t: xsig(t).sum())(x).numpy(),
        func.grad(lambda t: ref(t).sum())(x).numpy(),
        rtol=1e-13,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no registered vmap rule: per example, warned
        np.testing.assert_allclose(func.vmap(xsig)(x).numpy(), ref(x).numpy(), rtol=1e-14)


def test_registered_vmap_rule_is_used():
    @ng.library.custom_op("testlib::double", mutates_args=())
    def double(x: ng.Tensor) -> ng.Tensor:
        return x * 2

    calls = []

    @double.register_vmap
    def _(info, in_dims, x):
        calls.append(in_dims)
        return double(x), in_dims[0]

    out = func.vmap(double)(ng.ones(3, 2))
    assert calls == [(0,)] and out.shape == (3, 2)


def test_compiled_calls_the_kernel_directly():
    def loss(x):
        return (xsig(x) * 2).sum()

    c = ng.compile(loss)
    x = x64(8)
    for _ in range(2):
        (g,) = ng.autograd.grad(c(x), x)
        (r,) = ng.autograd.grad(loss(x), x)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-13)
    assert not c._breaks
    assert "testlib_xsig(" in c.explain() and "testlib_xsig_bwd(" in c.explain()


@numba.njit(cache=True)
def _head_kernel(x):
    # its output's length depends on a value: fine eagerly, not in a compiled graph
    return x[: int(x[0])].copy()


head = ng.library.custom_op("testlib::head", _head_kernel, mutates_args=())


def test_compiled_code_checks_what_a_kernel_returns_before_fusing_it():
    c = ng.compile(lambda x: (head(x) * 2).sum())
    x = ng.tensor([4.0, 1.0, 2.0, 3.0, 5.0, 6.0])
    np.testing.assert_allclose(c(x).item(), 20.0)  # traced with a length-4 output
    np.testing.assert_allclose(c(x).item(), 20.0)  # compiled, the same length
    x2 = ng.tensor([6.0, 1.0, 2.0, 3.0, 5.0, 6.0])
    # the fused sum would read 4 elements of a 6-element array: refused, never misread
    with pytest.raises(RuntimeError, match=r"testlib::head returned shape \[6\]"):
        c(x2)


def test_compiled_code_checks_an_opaque_functions_gradients():
    class Leaves(ng.autograd.Function):
        # leaves numbagrad (.numpy()): one opaque call in the compiled graph
        @staticmethod
        def forward(ctx, x):
            ctx.n = int(x.detach().numpy()[0])
            return ng.tensor(x.detach().numpy() * 3.0)

        @staticmethod
        def backward(ctx, g):
            return g[: ctx.n] * 3.0  # a wrong shape unless x[0] == len(x)

    c = ng.compile(lambda x: (Leaves.apply(x) * x).sum())
    x = ng.tensor([3.0, 1.0, 2.0], requires_grad=True)
    for _ in range(2):
        c(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (6.0 * x.detach().numpy()))
    y = ng.tensor([2.0, 1.0, 2.0], requires_grad=True)
    out = c(y)
    with pytest.raises(RuntimeError, match="custom Function's backward\\) returned shape \\[2\\]"):
        out.backward()


def test_python_implementation_tuple_outputs_and_constants():
    @ng.library.custom_op("testlib::split_scale", mutates_args=())
    def split_scale(x: ng.Tensor, k: float) -> tuple[ng.Tensor, ng.Tensor]:
        return x * k, x + k

    a, b = split_scale(ng.ones(2), 3.0)
    assert a.tolist() == [3.0, 3.0] and b.tolist() == [4.0, 4.0]
    a, b = split_scale(ng.ones(2), k=2.0)
    assert a.tolist() == [2.0, 2.0]


def test_errors():
    with pytest.raises(ValueError, match="namespace::opname"):
        ng.library.custom_op("noseparator", lambda x: x, mutates_args=())
    with pytest.raises(NotImplementedError, match="unknown"):
        ng.library.custom_op("testlib::mut", lambda x: x, mutates_args="unknown")
    with pytest.raises(ValueError, match="not found in the custom op's signature"):
        ng.library.custom_op("testlib::mut", lambda x: x, mutates_args=("y",))
    with pytest.raises(RuntimeError, match="already defined"):
        ng.library.custom_op("testlib::xsig", _xsig_kernel, mutates_args=())

    bad = ng.library.custom_op("testlib::bad", lambda x: 3.0, mutates_args=())
    with pytest.raises(TypeError, match="must be a tensor"):
        bad(ng.ones(2))
    noauto = ng.library.custom_op("testlib::noauto", lambda x: x * 1, mutates_args=())
    with pytest.raises(RuntimeError, match="no autograd formula"):
        noauto(ng.ones(2, requires_grad=True)).sum().backward()
    with pytest.raises(NotImplementedError, match="fake"):
        noauto(ng.empty(2, device="meta"))


def test_fake_for_meta_tensors():
    @ng.library.custom_op("testlib::rowsum", mutates_args=())
    def rowsum(x: ng.Tensor) -> ng.Tensor:
        return x.sum(1)

    @rowsum.register_fake
    def _(x):
        return ng.empty(x.shape[0], device="meta")

    out = rowsum(ng.empty(3, 4, device="meta"))
    assert out.shape == (3,) and out.device.type == "meta"
