"""Tests for ``numbagrad.autograd.Function`` and its context object (issue 3).

Each documented behaviour of PyTorch's ``autograd.Function`` / ``FunctionCtx`` has a
test here, errors included, written to PyTorch 2.x semantics with
``import numbagrad as torch``. A few tests check where numbagrad deliberately goes
beyond PyTorch (clear errors where PyTorch is silent); they skip when the suite is
pointed at PyTorch itself (``numbagrad.__name__ == 'torch'``), which is how the
tests were validated. The last sections compare against PyTorch (when installed)
and run the example scripts.
"""

import importlib
import pathlib
import runpy

import numpy as np
import pytest

import numbagrad as torch
from numbagrad.autograd.function import Function, FunctionCtx, once_differentiable

IS_TORCH = torch.__name__ == "torch"
numbagrad_only = pytest.mark.skipif(
    IS_TORCH, reason="numbagrad goes beyond PyTorch here (PyTorch is silent or lenient)"
)

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def to_np(t):
    """A NumPy copy of a tensor, detached from any graph."""
    return np.array(t.detach().numpy())


def f64(values, requires_grad=False):
    """A float64 tensor from nested Python/NumPy values."""
    return torch.tensor(
        np.asarray(values, dtype=np.float64), dtype=torch.float64, requires_grad=requires_grad
    )


@pytest.fixture
def rng():
    """A seeded NumPy generator, so every test draws the same inputs."""
    return np.random.default_rng(1234)


class Square(Function):
    """``x**2`` with the input saved; its backward is differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


class SquareSeparate(Function):
    """``x**2`` in the separate style."""

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


class Scale(Function):
    """``x * k`` for a Python number ``k``; saves nothing."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.k, None


class MulInPlace(Function):
    """``x.mul_(k)`` in place, marked dirty."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        x.mul_(k)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.k, None


# ---------------------------------------------------------------------------
# the module surface
# ---------------------------------------------------------------------------


def test_public_names():
    import numbagrad.autograd
    import numbagrad.autograd.function as fn

    assert numbagrad.autograd.Function is fn.Function
    assert Function is fn.Function
    assert FunctionCtx is fn.FunctionCtx
    assert hasattr(fn, "NestedIOFunction")
    assert callable(once_differentiable)


def test_ctx_is_a_function_ctx():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(ctx)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx)
            return g

    x = f64([1.0, 2.0], requires_grad=True)
    Probe.apply(x).sum().backward()
    assert isinstance(seen[0], FunctionCtx)
    # the ctx given to backward is the one forward filled
    assert seen[1] is seen[0]


# ---------------------------------------------------------------------------
# combined and separate styles
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("Fn", [Square, SquareSeparate], ids=["combined", "separate"])
def test_both_styles_forward_backward(Fn, rng):
    xv, gv = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    x = f64(xv, requires_grad=True)
    y = Fn.apply(x)
    np.testing.assert_allclose(to_np(y), xv**2, rtol=1e-14)
    y.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), 2 * xv * gv, rtol=1e-14)


@pytest.mark.parametrize("Fn", [Square, SquareSeparate], ids=["combined", "separate"])
def test_both_styles_gradcheck_gradgradcheck(Fn, rng):
    x = f64(rng.normal(size=(3,)), requires_grad=True)
    assert torch.autograd.gradcheck(Fn.apply, (x,))
    assert torch.autograd.gradgradcheck(Fn.apply, (x,))


def test_setup_context_receives_inputs_and_output(rng):
    seen = {}

    class Affine(Function):
        @staticmethod
        def forward(x, a, b=1.5):
            seen["forward_grad_mode"] = torch.is_grad_enabled()
            return x * a + b, x * 0 + a

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["inputs"] = inputs
            seen["output"] = output
            ctx.a = inputs[1]

        @staticmethod
        def backward(ctx, g, g_const):
            return g * ctx.a, None, None

    xv = rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    y, _ = Affine.apply(x, 2.0)
    x_in, a_in, b_in = seen["inputs"]
    assert x_in is x  # the input tensor itself, not a copy
    assert a_in == 2.0
    assert b_in == 1.5  # defaults are bound into `inputs`
    assert isinstance(seen["output"], tuple) and len(seen["output"]) == 2
    np.testing.assert_allclose(to_np(seen["output"][0]), 2 * xv + 1.5)
    # forward runs with grad mode off, like PyTorch
    assert seen["forward_grad_mode"] is False
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.full(3, 2.0))


def test_setup_context_single_tensor_vs_one_tuple():
    seen = []

    class One(Function):
        @staticmethod
        def forward(x, as_tuple):
            return (x * 2,) if as_tuple else x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append(output)

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    x = f64([1.0, 2.0], requires_grad=True)
    single = One.apply(x, False)
    one_tuple = One.apply(x, True)
    assert not isinstance(seen[0], tuple)
    assert isinstance(seen[1], tuple) and len(seen[1]) == 1
    assert not isinstance(single, tuple)
    assert isinstance(one_tuple, tuple) and len(one_tuple) == 1
    (single + one_tuple[0]).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [4.0, 4.0])


def test_keyword_arguments_to_apply(rng):
    class Axpy(Function):
        @staticmethod
        def forward(ctx, x, y, alpha=1.0):
            ctx.alpha = alpha
            return x * alpha + y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.alpha, g, None

    xv, yv = rng.normal(size=3), rng.normal(size=3)
    x, y = f64(xv, requires_grad=True), f64(yv, requires_grad=True)
    out = Axpy.apply(x, y, alpha=-2.0)
    np.testing.assert_allclose(to_np(out), -2.0 * xv + yv)
    out.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.full(3, -2.0))
    np.testing.assert_allclose(to_np(y.grad), np.ones(3))


# ---------------------------------------------------------------------------
# apply with non-tensors in any position
# ---------------------------------------------------------------------------


class Mixed(Function):
    """Tensors and non-tensors interleaved: ``x * a + y * b``."""

    @staticmethod
    def forward(ctx, a, x, b, nothing, mode, shape, y):
        assert nothing is None and mode == "mode" and shape == (1, 2)
        ctx.a, ctx.b = a, b
        ctx.needs = tuple(ctx.needs_input_grad)
        return x * a + y * b

    @staticmethod
    def backward(ctx, g):
        return None, g * ctx.a, None, None, None, None, g * ctx.b


def test_apply_with_non_tensors_in_any_position(rng):
    xv, yv, gv = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    x, y = f64(xv, requires_grad=True), f64(yv, requires_grad=True)
    out = Mixed.apply(2, x, 3.5, None, "mode", (1, 2), y)
    np.testing.assert_allclose(to_np(out), 2 * xv + 3.5 * yv, rtol=1e-14)
    assert out.grad_fn.name() == "MixedBackward"
    out.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), 2 * gv, rtol=1e-14)
    np.testing.assert_allclose(to_np(y.grad), 3.5 * gv, rtol=1e-14)


def test_needs_input_grad_with_non_tensors():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, k, x, w, s):
            seen.append(tuple(ctx.needs_input_grad))
            return x * k + w

        @staticmethod
        def backward(ctx, g):
            seen.append(tuple(ctx.needs_input_grad))
            return None, g * 2, None, None

    x = f64([1.0, 2.0], requires_grad=True)
    w = f64([3.0, 4.0])  # a tensor that does not require grad
    Probe.apply(2, x, w, "name").sum().backward()
    assert seen == [(False, True, False, False)] * 2
    np.testing.assert_allclose(to_np(x.grad), [2.0, 2.0])


def test_gradcheck_with_non_tensor_arguments(rng):
    x = f64(rng.normal(size=3), requires_grad=True)
    y = f64(rng.normal(size=3), requires_grad=True)

    def f(x, y):
        return Mixed.apply(-1.5, x, 0.25, None, "mode", (1, 2), y)

    assert torch.autograd.gradcheck(f, (x, y))
    assert torch.autograd.gradgradcheck(f, (x, y))


def test_tensors_inside_containers_are_not_tracked():
    # The reference page: Function "does not handle Tensors in pytrees"; only
    # tensors passed directly as arguments are tracked.
    class FromTuple(Function):
        @staticmethod
        def forward(ctx, x, ws):
            return x * ws[0]

        @staticmethod
        def backward(ctx, g):
            return g * 3, None

    x = f64([1.0, 2.0], requires_grad=True)
    w_leaf = f64([3.0, 3.0], requires_grad=True)
    out = FromTuple.apply(x, (w_leaf * 1,))
    out.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [3.0, 3.0])
    assert w_leaf.grad is None


def test_non_tensor_inputs_only_no_grad():
    class Const(Function):
        @staticmethod
        def forward(ctx, n):
            return torch.ones(n, dtype=torch.float64) * 2

        @staticmethod
        def backward(ctx, g):
            return None

    out = Const.apply(3)
    assert not out.requires_grad and out.grad_fn is None
    np.testing.assert_allclose(to_np(out), [2.0, 2.0, 2.0])


# ---------------------------------------------------------------------------
# outputs
# ---------------------------------------------------------------------------


class SinCos(Function):
    """Two outputs, ``(sin x, cos x)``, from one node."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        return g_sin * x.cos() - g_cos * x.sin()


def test_tuple_outputs(rng):
    xv, g1, g2 = rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
    x = f64(xv, requires_grad=True)
    out = SinCos.apply(x)
    assert isinstance(out, tuple) and len(out) == 2
    s, c = out
    np.testing.assert_allclose(to_np(s), np.sin(xv), rtol=1e-14)
    np.testing.assert_allclose(to_np(c), np.cos(xv), rtol=1e-14)
    assert s.requires_grad and c.requires_grad
    # one node for both outputs
    assert s.grad_fn is c.grad_fn
    assert s.grad_fn.name() == "SinCosBackward"
    torch.autograd.backward([s, c], [f64(g1), f64(g2)])
    np.testing.assert_allclose(to_np(x.grad), g1 * np.cos(xv) - g2 * np.sin(xv), rtol=1e-13)


def test_tuple_outputs_gradcheck_gradgradcheck(rng):
    x = f64(rng.normal(size=4), requires_grad=True)
    assert torch.autograd.gradcheck(SinCos.apply, (x,))
    assert torch.autograd.gradgradcheck(SinCos.apply, (x,))


def test_returning_an_input_unchanged_gives_a_new_tensor(rng):
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 1

    xv, gv = rng.normal(size=3), rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x
    assert x.is_leaf and x.grad_fn is None  # the input is untouched
    assert not y.is_leaf
    assert y.grad_fn.name() == "IdentityBackward"
    np.testing.assert_array_equal(to_np(y), xv)
    y.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), gv)


def test_returning_an_input_among_other_outputs(rng):
    class PassAndDouble(Function):
        @staticmethod
        def forward(ctx, x):
            return x, x * 2

        @staticmethod
        def backward(ctx, g_same, g_double):
            return g_same + 2 * g_double

    x = f64(rng.normal(size=3), requires_grad=True)
    same, double = PassAndDouble.apply(x)
    assert same is not x
    (3 * same + double).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.full(3, 5.0))


def test_non_tensor_outputs_pass_through():
    seen = []

    class WithExtras(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 7, "label"

        @staticmethod
        def backward(ctx, g, g_int, g_str):
            seen.append((g_int, g_str))
            return g * 2

    x = f64([1.0, -1.0], requires_grad=True)
    out = WithExtras.apply(x)
    assert isinstance(out, tuple) and out[1] == 7 and out[2] == "label"
    out[0].sum().backward()
    assert seen == [(None, None)]  # non-tensor outputs get None, even materialized
    np.testing.assert_allclose(to_np(x.grad), [2.0, 2.0])


def test_output_requires_grad_only_when_an_input_does():
    x = f64([1.0, 2.0])
    y = Square.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(to_np(y), [1.0, 4.0])


def test_apply_under_no_grad():
    x = f64([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        y = Square.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(to_np(y), [1.0, 4.0])


def test_integer_outputs_never_require_grad(rng):
    # argsort indices: integer tensors are not differentiable, even unmarked.
    seen = []

    class SortWithIndices(Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.numpy(), kind="stable")
            ctx.save_for_backward(torch.tensor(order))
            return torch.tensor(x.numpy()[order]), torch.tensor(order)

        @staticmethod
        def backward(ctx, g_values, g_indices):
            seen.append(g_indices)
            (order,) = ctx.saved_tensors
            grad = np.zeros(g_values.shape, dtype=np.float64)
            grad[order.numpy()] = g_values.numpy()
            return torch.tensor(grad)

    xv = rng.permutation(6).astype(np.float64)
    x = f64(xv, requires_grad=True)
    values, indices = SortWithIndices.apply(x)
    assert indices.dtype == torch.int64
    assert values.requires_grad
    assert not indices.requires_grad and indices.grad_fn is None
    np.testing.assert_array_equal(to_np(indices), np.argsort(xv))
    gv = rng.normal(size=6)
    values.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), gv[np.argsort(np.argsort(xv))])
    # the integer output's gradient, if materialized, is not a float gradient
    assert seen[0] is None or not seen[0].dtype.is_floating_point


# ---------------------------------------------------------------------------
# backward / vjp
# ---------------------------------------------------------------------------


def test_vjp_alias(rng):
    class OnlyVjp(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def vjp(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()

    xv = rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    OnlyVjp.apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.exp(xv), rtol=1e-14)
    assert torch.autograd.gradcheck(OnlyVjp.apply, (f64(xv, True),))


def test_extra_trailing_nones_accepted():
    class Trailing(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3, None, None

    x = f64([1.0, 2.0], requires_grad=True)
    Trailing.apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [3.0, 3.0])


def test_none_gradient_for_an_input_that_requires_grad():
    class OnlySecond(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return None, g * 5

    x = f64([1.0, 2.0], requires_grad=True)
    y = f64([3.0, 4.0], requires_grad=True)
    OnlySecond.apply(x, y).sum().backward()
    assert x.grad is None  # None means "no gradient", not an error
    np.testing.assert_allclose(to_np(y.grad), [5.0, 5.0])


def test_backward_runs_with_grad_mode_off_unless_create_graph():
    modes = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            modes.append(torch.is_grad_enabled())
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = f64([1.0, 2.0], requires_grad=True)
    Probe.apply(x).sum().backward()
    torch.autograd.grad(Probe.apply(x).sum(), x, create_graph=True)
    assert modes == [False, True]


def test_missing_backward_raises_not_implemented():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = f64([1.0], requires_grad=True)
    y = NoBackward.apply(x)
    np.testing.assert_allclose(to_np(y), [2.0])
    with pytest.raises(NotImplementedError):
        y.sum().backward()


def test_missing_forward_raises_not_implemented():
    class NoForward(Function):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(NotImplementedError):
        NoForward.apply(f64([1.0], requires_grad=True))


# ---------------------------------------------------------------------------
# grad_fn and the engine: hooks, retain_graph, accumulation, autograd.grad
# ---------------------------------------------------------------------------


def test_grad_fn_name_and_repr():
    x = f64([1.0, 2.0], requires_grad=True)
    y = Square.apply(x)
    assert y.grad_fn.name() == "SquareBackward"
    assert "SquareBackward" in repr(y)


def test_grad_fn_next_functions_link_functions():
    x = f64([1.0, 2.0], requires_grad=True)
    h = Square.apply(x)
    y = Scale.apply(h, 3.0)
    nodes = [edge[0] for edge in y.grad_fn.next_functions]
    assert h.grad_fn in nodes


def test_function_inside_a_larger_graph(rng):
    # x -> Square -> (exp, *3) -> sum: a diamond through the Function's output
    xv = rng.normal(size=4)
    x = f64(xv, requires_grad=True)
    h = Square.apply(x)
    loss = (h.exp() + h * 3).sum()
    loss.backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * xv * (np.exp(xv**2) + 3), rtol=1e-13)


def test_hooks_on_function_output_and_input():
    x = f64([1.0, 2.0], requires_grad=True)
    y = Square.apply(x)
    y.register_hook(lambda g: g * 10)
    seen = []
    x.register_hook(lambda g: seen.append(to_np(g)))
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [20.0, 40.0])
    np.testing.assert_allclose(seen[0], [20.0, 40.0])


def test_retain_grad_on_function_output():
    x = f64([1.0, 2.0], requires_grad=True)
    y = Square.apply(x)
    y.retain_grad()
    (y * f64([3.0, 5.0])).sum().backward()
    np.testing.assert_allclose(to_np(y.grad), [3.0, 5.0])
    np.testing.assert_allclose(to_np(x.grad), [6.0, 20.0])


def test_retain_graph_allows_second_backward_and_accumulates():
    x = f64([1.0, 2.0], requires_grad=True)
    y = Square.apply(x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(to_np(x.grad), [2.0, 4.0])
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), [4.0, 8.0])


def test_accumulation_across_two_graphs():
    x = f64([1.0, 2.0], requires_grad=True)
    Square.apply(x).sum().backward()
    Scale.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2.0 + 3.0, 4.0 + 3.0])


def test_autograd_grad_through_a_function(rng):
    xv, yv, gv = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    x, y = f64(xv, requires_grad=True), f64(yv, requires_grad=True)
    out = Mixed.apply(2, x, -1.0, None, "mode", (1, 2), y)
    gx, gy = torch.autograd.grad(out, (x, y), grad_outputs=f64(gv))
    np.testing.assert_allclose(to_np(gx), 2 * gv)
    np.testing.assert_allclose(to_np(gy), -gv)
    assert x.grad is None and y.grad is None  # autograd.grad does not accumulate


def test_autograd_grad_allow_unused():
    x = f64([1.0, 2.0], requires_grad=True)
    unused = f64([5.0], requires_grad=True)
    y = Square.apply(x).sum()
    with pytest.raises(RuntimeError):
        torch.autograd.grad(y, (x, unused), retain_graph=True)
    gx, gu = torch.autograd.grad(y, (x, unused), allow_unused=True)
    np.testing.assert_allclose(to_np(gx), [2.0, 4.0])
    assert gu is None


# ---------------------------------------------------------------------------
# once_differentiable
# ---------------------------------------------------------------------------


_once_modes = []  # grad mode seen inside SquareOnce.backward


class SquareOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        _once_modes.append(torch.is_grad_enabled())
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_once_differentiable_first_order(rng):
    xv = rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    SquareOnce.apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * xv)
    assert torch.autograd.gradcheck(SquareOnce.apply, (f64(xv, True),))


def test_once_differentiable_grad_mode_off_even_with_create_graph():
    _once_modes.clear()
    x = f64([1.0, 2.0], requires_grad=True)
    torch.autograd.grad(SquareOnce.apply(x).sum(), x, create_graph=True)
    assert _once_modes == [False]


def test_once_differentiable_double_backward_raises():
    x = f64([3.0, 1.0, 2.0], requires_grad=True)
    # the incoming gradient 2*y requires grad, so the backward's result is
    # part of a graph -- differentiating it must fail loudly
    z = (SquareOnce.apply(x) ** 2).sum()
    (gx,) = torch.autograd.grad(z, x, create_graph=True)
    np.testing.assert_allclose(to_np(gx), 4 * np.array([3.0, 1.0, 2.0]) ** 3)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        gx.sum().backward()


def test_once_differentiable_double_backward_raises_simple():
    x = f64([3.0, 1.0, 2.0], requires_grad=True)
    (gx,) = torch.autograd.grad(SquareOnce.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_np(gx), [6.0, 2.0, 4.0])
    with pytest.raises(RuntimeError):
        torch.autograd.grad(gx.sum(), x)


# ---------------------------------------------------------------------------
# higher order
# ---------------------------------------------------------------------------


class Cube(Function):
    """``x**3``, backward ``3 x**2 g`` in differentiable ops."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


class Bilinear(Function):
    """``x * y**2`` with two tensor inputs."""

    @staticmethod
    def forward(x, y):
        return x * y * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * y, 2 * g * x * y


def test_create_graph_second_and_third_derivatives(rng):
    xv = rng.normal(size=4)
    x = f64(xv, requires_grad=True)
    (g1,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(to_np(g1), 3 * xv**2, rtol=1e-13)
    np.testing.assert_allclose(to_np(g2), 6 * xv, rtol=1e-13)
    np.testing.assert_allclose(to_np(g3), np.full(4, 6.0), rtol=1e-13)


def test_create_graph_mixed_partials(rng):
    xv, yv = rng.normal(size=3), rng.normal(size=3)
    x, y = f64(xv, requires_grad=True), f64(yv, requires_grad=True)
    gx, gy = torch.autograd.grad(Bilinear.apply(x, y).sum(), (x, y), create_graph=True)
    np.testing.assert_allclose(to_np(gx), yv**2, rtol=1e-13)
    np.testing.assert_allclose(to_np(gy), 2 * xv * yv, rtol=1e-13)
    # d/dy (dL/dx) = 2y ; d/dx (dL/dy) = 2y ; d/dy (dL/dy) = 2x
    (gxy,) = torch.autograd.grad(gx.sum(), y, retain_graph=True)
    gyx, gyy = torch.autograd.grad(gy.sum(), (x, y))
    np.testing.assert_allclose(to_np(gxy), 2 * yv, rtol=1e-13)
    np.testing.assert_allclose(to_np(gyx), 2 * yv, rtol=1e-13)
    np.testing.assert_allclose(to_np(gyy), 2 * xv, rtol=1e-13)


@pytest.mark.parametrize("Fn", [Cube, Bilinear, SinCos, Square])
def test_gradcheck_gradgradcheck(Fn, rng):
    n_inputs = 2 if Fn is Bilinear else 1
    inputs = tuple(f64(rng.normal(size=(2, 3)), requires_grad=True) for _ in range(n_inputs))
    assert torch.autograd.gradcheck(Fn.apply, inputs, eps=1e-6, atol=1e-5)
    assert torch.autograd.gradgradcheck(Fn.apply, inputs, eps=1e-6, atol=1e-5)


def test_gradcheck_detects_a_wrong_backward(rng):
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 2.1  # should be 2x * g

    x = f64(rng.normal(size=3), requires_grad=True)
    assert not torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError):
        torch.autograd.gradcheck(Wrong.apply, (x,))


# ---------------------------------------------------------------------------
# save_for_backward / saved_tensors
# ---------------------------------------------------------------------------


def test_save_for_backward_accepts_none():
    seen = []

    class WithNone(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            saved = ctx.saved_tensors
            seen.append(saved)
            return g * 2

    x = f64([1.0, 2.0], requires_grad=True)
    WithNone.apply(x).sum().backward()
    (saved,) = seen
    assert isinstance(saved, tuple) and len(saved) == 2
    assert saved[1] is None
    np.testing.assert_array_equal(to_np(saved[0]), [1.0, 2.0])
    np.testing.assert_allclose(to_np(x.grad), [2.0, 2.0])


def test_save_for_backward_rejects_non_tensors():
    class SavesInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError):
        SavesInt.apply(f64([1.0], requires_grad=True))


def test_saved_input_modified_in_place_raises_with_versions():
    x = f64([1.0, 2.0], requires_grad=True)
    w = f64([3.0, 4.0]) * 1  # a non-leaf: in-place on it is allowed
    w.requires_grad_()
    out = Bilinear.apply(x, w)
    with torch.no_grad():
        w.add_(1.0)
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="version") as info:
        out.sum().backward()
    # both versions are named: saved at 0, now at 2
    assert "2" in str(info.value) and "0" in str(info.value)


def test_saved_output_modified_in_place_raises():
    class ExpSaveOut(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    x = f64([0.0, 1.0], requires_grad=True)
    y = ExpSaveOut.apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="version"):
        y.sum().backward()


def test_modifying_before_saving_is_fine():
    class AddOneThenSave(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 1
            y.add_(1)  # bumps y's version before it is saved
            ctx.save_for_backward(y)
            return y * y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return 2 * y * g

    x = f64([1.0, 2.0], requires_grad=True)
    AddOneThenSave.apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [4.0, 6.0])


def test_saved_tensors_freed_after_backward():
    x = f64([1.0, 2.0], requires_grad=True)
    y = Square.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"(?i)second time|freed|retain_graph"):
        y.backward()


def test_graph_that_saves_nothing_can_backward_twice():
    x = f64([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x, 3.0)
    g = f64([1.0, -1.0])
    y.backward(g)
    y.backward(g)
    np.testing.assert_allclose(to_np(x.grad), [6.0, -6.0])


# ---------------------------------------------------------------------------
# needs_input_grad
# ---------------------------------------------------------------------------


def test_needs_input_grad_fixed_when_forward_runs():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            seen.append(tuple(ctx.needs_input_grad))
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = f64([1.0, 2.0], requires_grad=True)
    y = f64([3.0, 4.0], requires_grad=True)
    # asking autograd.grad for x only does not change needs_input_grad
    (gx,) = torch.autograd.grad(Probe.apply(x, y).sum(), x)
    np.testing.assert_allclose(to_np(gx), [3.0, 4.0])
    Probe.apply(x, f64([3.0, 4.0])).sum().backward()
    assert seen == [(True, True), (True, False)]


# ---------------------------------------------------------------------------
# mark_dirty
# ---------------------------------------------------------------------------


def test_mark_dirty_returns_same_object_with_new_grad_fn():
    leaf = f64([1.0, 2.0, 3.0], requires_grad=True)
    x = leaf * 1
    old_grad_fn = x.grad_fn
    version = x._version
    y = MulInPlace.apply(x, 3.0)
    assert y is x
    assert x.grad_fn is not old_grad_fn
    assert x.grad_fn.name() == "MulInPlaceBackward"
    assert x._version > version
    np.testing.assert_allclose(to_np(x), [3.0, 6.0, 9.0])
    x.backward(f64([1.0, 2.0, -1.0]))
    np.testing.assert_allclose(to_np(leaf.grad), [3.0, 6.0, -3.0])


def test_mark_dirty_gradcheck(rng):
    x = f64(rng.normal(size=4), requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: MulInPlace.apply(t.clone(), -2.5), (x,))
    assert torch.autograd.gradgradcheck(lambda t: MulInPlace.apply(t.clone(), -2.5), (x,))


def test_mark_dirty_with_an_extra_output():
    class AddOneAndDouble(Function):
        @staticmethod
        def forward(ctx, x):
            doubled = x * 2
            x.add_(1)
            ctx.mark_dirty(x)
            return x, doubled

        @staticmethod
        def backward(ctx, g_x, g_doubled):
            return g_x + 2 * g_doubled

    leaf = f64([1.0, 2.0, 3.0], requires_grad=True)
    x = leaf * 1
    a, b = AddOneAndDouble.apply(x)
    assert a is x and b is not x
    np.testing.assert_allclose(to_np(a), [2.0, 3.0, 4.0])
    np.testing.assert_allclose(to_np(b), [2.0, 4.0, 6.0])
    (3 * a + b).sum().backward()
    np.testing.assert_allclose(to_np(leaf.grad), [5.0, 5.0, 5.0])


def test_mark_dirty_on_a_view_rebases_the_base():
    # In-place on a view: the base's history is rewritten (PyTorch's CopySlices).
    leaf = f64([1.0, 2.0, 3.0], requires_grad=True)
    base = leaf * 1
    view = base[:2]
    MulInPlace.apply(view, 2.0)
    np.testing.assert_allclose(to_np(base), [2.0, 4.0, 3.0])
    base.sum().backward()
    np.testing.assert_allclose(to_np(leaf.grad), [2.0, 2.0, 1.0])


def test_mark_dirty_base_updates_an_existing_view():
    # A view taken before the in-place Function sees the new values and history.
    leaf = f64([1.0, 2.0, 3.0], requires_grad=True)
    base = leaf * 1
    view = base[1:]
    MulInPlace.apply(base, 2.0)
    np.testing.assert_allclose(to_np(view), [4.0, 6.0])
    view.sum().backward()
    np.testing.assert_allclose(to_np(leaf.grad), [0.0, 2.0, 2.0])


def test_mark_dirty_on_a_leaf_requiring_grad_raises():
    leaf = f64([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        MulInPlace.apply(leaf, 2.0)


def test_mark_dirty_on_a_view_of_a_leaf_requiring_grad_raises():
    leaf = f64([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        MulInPlace.apply(leaf[:2], 2.0)


@numbagrad_only
def test_mark_dirty_of_a_non_input_raises():
    # PyTorch only warns here; numbagrad raises.
    class DirtyNewTensor(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = f64([1.0, 2.0], requires_grad=True) * 1
    with pytest.raises((RuntimeError, ValueError), match="mark_dirty"):
        DirtyNewTensor.apply(x)


# ---------------------------------------------------------------------------
# mark_non_differentiable and set_materialize_grads
# ---------------------------------------------------------------------------


def _make_two_outputs(materialize, mark):
    seen = []

    class TwoOutputs(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            a, b = x * 2, x * 3
            if mark:
                ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, g_a, g_b):
            seen.append((g_a, g_b))
            grad = g_a * 2
            if g_b is not None:
                grad = grad + g_b * 3
            return grad

    return TwoOutputs, seen


@pytest.mark.parametrize("materialize", [True, False])
def test_mark_non_differentiable(materialize):
    TwoOutputs, seen = _make_two_outputs(materialize, mark=True)
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    assert a.requires_grad
    assert not b.requires_grad and b.grad_fn is None
    np.testing.assert_allclose(to_np(b), [3.0, 6.0, 9.0])
    a.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2.0, 2.0, 2.0])
    ((g_a, g_b),) = seen
    np.testing.assert_allclose(to_np(g_a), np.ones(3))
    if materialize:
        # zeros of the output's shape and dtype
        assert g_b is not None and tuple(g_b.shape) == (3,) and g_b.dtype == torch.float64
        np.testing.assert_array_equal(to_np(g_b), np.zeros(3))
    else:
        assert g_b is None


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads_unused_output(materialize):
    TwoOutputs, seen = _make_two_outputs(materialize, mark=False)
    x = f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    assert a.requires_grad and b.requires_grad
    a.sum().backward()  # b unused: its gradient is undefined
    np.testing.assert_allclose(to_np(x.grad), np.full((2, 2), 2.0))
    ((_, g_b),) = seen
    if materialize:
        assert g_b is not None and tuple(g_b.shape) == (2, 2)
        np.testing.assert_array_equal(to_np(g_b), np.zeros((2, 2)))
    else:
        assert g_b is None


def test_set_materialize_grads_both_used():
    TwoOutputs, _ = _make_two_outputs(False, mark=False)
    x = f64([1.0, 2.0], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    (a + b * 10).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [32.0, 32.0])


# ---------------------------------------------------------------------------
# ctx attributes and save_for_forward
# ---------------------------------------------------------------------------


def test_arbitrary_ctx_attributes():
    payload = {"dims": (0, 1), "name": "abc", "array": np.arange(3.0), "fn": np.sin}

    class Stash(Function):
        @staticmethod
        def forward(ctx, x):
            for key, value in payload.items():
                setattr(ctx, key, value)
            ctx.counter = 41
            return x * 1

        @staticmethod
        def backward(ctx, g):
            assert ctx.dims == (0, 1) and ctx.name == "abc" and ctx.fn is np.sin
            ctx.counter += 1
            return g * ctx.array.sum() + ctx.counter

    x = f64([0.0, 0.0, 0.0], requires_grad=True)
    Stash.apply(x).backward(f64([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(to_np(x.grad), [45.0, 48.0, 51.0])


def test_save_for_forward_does_not_disturb_backward(rng):
    class Both(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    xv, yv = rng.normal(size=3), rng.normal(size=3)
    x, y = f64(xv, requires_grad=True), f64(yv, requires_grad=True)
    Both.apply(x, y).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), yv)
    np.testing.assert_allclose(to_np(y.grad), xv)


class CubeStoredOnCtx(Function):
    """A misuse: an intermediate kept as ``ctx.dx`` instead of save_for_backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.dx = 3 * x * x  # computed with grad mode off: a constant
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.dx


def test_tensor_stored_on_ctx_first_order_works(rng):
    xv = rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    CubeStoredOnCtx.apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 3 * xv**2, rtol=1e-13)


@numbagrad_only
def test_tensor_stored_on_ctx_differentiated_under_create_graph_raises(rng):
    # The first derivative is right, as in PyTorch; differentiating it through ctx.dx
    # (whose history is not tracked) would silently miss the 6x term in PyTorch:
    # numbagrad refuses, pointing at save_for_backward (tests/test_engine_safety.py).
    xv = rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    y = (CubeStoredOnCtx.apply(x) * x).sum()  # the incoming gradient (x) has a graph
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(to_np(g), 4 * xv**3, rtol=1e-13)
    with pytest.raises(RuntimeError, match="save_for_backward"):
        torch.autograd.grad(g.sum(), x)


def test_non_tensor_ctx_attributes_fine_under_create_graph(rng):
    xv = rng.normal(size=3)
    x = f64(xv, requires_grad=True)
    (g,) = torch.autograd.grad(Scale.apply(x * x, 4.0).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_np(g), 8 * xv)
    np.testing.assert_allclose(to_np(gg), np.full(3, 8.0))


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_backward_returning_too_many_values_raises():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    x = f64([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="TooMany"):
        TooMany.apply(x).sum().backward()


def test_backward_returning_too_few_values_raises():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = f64([1.0, 2.0], requires_grad=True)
    y = f64([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="TooFew"):
        TooFew.apply(x, y).sum().backward()


def test_backward_returning_gradient_for_non_tensor_input_raises():
    class GradForInt(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    x = f64([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="GradForInt"):
        GradForInt.apply(x, 2).sum().backward()


def test_backward_returning_wrong_shape_raises():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:2]

    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="BadShape") as info:
        BadShape.apply(x).sum().backward()
    message = str(info.value)
    assert "2" in message and "3" in message  # both shapes are named


def test_backward_shape_error_names_the_input_index():
    class BadSecond(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, g.reshape(2, 2)

    x = f64([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = f64([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="BadSecond") as info:
        (BadSecond.apply(x, y)).sum().backward()
    assert "1" in str(info.value)  # the index of the offending input


@numbagrad_only
def test_backward_returning_wrong_dtype_raises():
    # PyTorch silently casts the gradient; numbagrad names the mistake.
    class BadDtype(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(3, dtype=torch.int64)

    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises((RuntimeError, TypeError), match="BadDtype"):
        BadDtype.apply(x).sum().backward()


def test_forward_returning_only_an_ndarray_passes_it_through():
    # As PyTorch: a forward that returns no tensor at all (here the array of a forgotten
    # from_numpy) gives back what it returned, the same object, with no graph.
    kept = []

    class ForgotToWrap(Function):
        @staticmethod
        def forward(ctx, x):
            kept.append(x.detach().numpy() * 2)
            return kept[0]

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = f64([1.0, 2.0], requires_grad=True)
    out = ForgotToWrap.apply(x)
    assert out is kept[0]
    np.testing.assert_array_equal(out, [2.0, 4.0])


def test_old_style_instance_call_raises():
    x = f64([1.0, 2.0], requires_grad=True)

    def define_and_call():
        # numbagrad may refuse already at class definition or instantiation
        class OldStyle(Function):
            def forward(self, x):
                return x * 2

            def backward(self, g):
                return g * 2

        return OldStyle()(x)

    if IS_TORCH:
        # PyTorch warns on instantiation, then refuses the call
        with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="static"):
            define_and_call()
    else:
        # as PyTorch, instantiating warns first (numbagrad's message points at apply)
        with (
            pytest.warns(DeprecationWarning, match="should not be instantiated"),
            pytest.raises((RuntimeError, TypeError), match="apply") as info,
        ):
            define_and_call()
        assert "static" in str(info.value)


@numbagrad_only
def test_non_static_forward_raises():
    # PyTorch happens to call a plain-function forward as if it were static;
    # numbagrad refuses legacy definitions with a message pointing at apply.
    x = f64([1.0, 2.0], requires_grad=True)
    with pytest.raises((RuntimeError, TypeError), match="apply") as info:

        class NonStatic(Function):
            def forward(self, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        NonStatic.apply(x)
    assert "static" in str(info.value)


# ---------------------------------------------------------------------------
# differential tests against PyTorch
# ---------------------------------------------------------------------------


def _functions_for(lib):
    """The same three Functions built on ``lib`` (numbagrad or torch)."""

    class ScaledSoftplus(lib.autograd.Function):
        @staticmethod
        def forward(x, w, beta):
            return (1 + (x * beta).exp()).log() * w / beta

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, beta = inputs
            ctx.save_for_backward(x, w)
            ctx.beta = beta

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            beta = ctx.beta
            sig = 1 / (1 + (-x * beta).exp())
            return g * w * sig, g * (1 + (x * beta).exp()).log() / beta, None

    class SortTake(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.numpy(), axis=-1, kind="stable")
            ctx.save_for_backward(lib.tensor(order))
            return lib.tensor(np.take_along_axis(x.numpy(), order, axis=-1))

        @staticmethod
        @once_differentiable_for(lib)
        def backward(ctx, g):
            (order,) = ctx.saved_tensors
            out = np.zeros(tuple(g.shape))
            np.put_along_axis(out, order.numpy(), g.numpy(), axis=-1)
            return lib.tensor(out)

    class SinCosPair(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, g_sin, g_cos):
            (x,) = ctx.saved_tensors
            return g_sin * x.cos() - g_cos * x.sin()

    return ScaledSoftplus, SortTake, SinCosPair


def once_differentiable_for(lib):
    """``once_differentiable`` from ``lib``'s autograd.function module."""
    return importlib.import_module(lib.__name__ + ".autograd.function").once_differentiable


def _run(lib, xv, wv, gv):
    """Outputs and input gradients of the three Functions on ``lib``."""
    ScaledSoftplus, SortTake, SinCosPair = _functions_for(lib)

    def t(v, rg=False):
        return lib.tensor(v, dtype=lib.float64, requires_grad=rg)

    results = {}
    x, w = t(xv, True), t(wv, True)
    y = ScaledSoftplus.apply(x, w, 1.7)
    y.backward(t(gv))
    results["softplus"] = (y.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy())

    x = t(xv, True)
    y = SortTake.apply(x)
    y.backward(t(gv))
    results["sort"] = (y.detach().numpy().copy(), x.grad.numpy().copy())

    x = t(xv, True)
    s, c = SinCosPair.apply(x)
    (g,) = lib.autograd.grad((s * c).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    results["sincos"] = (
        s.detach().numpy().copy(),
        c.detach().numpy().copy(),
        g.detach().numpy().copy(),
        gg.numpy().copy(),
    )
    return results


def test_differential_against_pytorch(rng):
    torch_ = pytest.importorskip("torch")
    xv = rng.normal(size=(3, 4))
    wv = rng.normal(size=(3, 4))
    gv = rng.normal(size=(3, 4))
    ours = _run(torch, xv, wv, gv)
    theirs = _run(torch_, xv, wv, gv)
    for key, values in theirs.items():
        for mine, ref in zip(ours[key], values, strict=True):
            np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-14, err_msg=key)
    # and the shared answers are the right ones
    np.testing.assert_allclose(theirs["sort"][0], np.sort(xv, axis=-1))
    np.testing.assert_allclose(theirs["sincos"][2], np.cos(2 * xv), rtol=1e-12)
    np.testing.assert_allclose(theirs["sincos"][3], -2 * np.sin(2 * xv), rtol=1e-12)


def test_differential_in_place_against_pytorch(rng):
    torch_ = pytest.importorskip("torch")
    xv, gv = rng.normal(size=5), rng.normal(size=5)

    def run(lib):
        class MulInPlace_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                x.mul_(k)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        leaf = lib.tensor(xv, dtype=lib.float64, requires_grad=True)
        x = leaf * 1
        y = MulInPlace_.apply(x, -3.0)
        (y * y).backward(lib.tensor(gv, dtype=lib.float64))
        return y.detach().numpy().copy(), leaf.grad.numpy().copy(), y is x

    mine, theirs = run(torch), run(torch_)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-14)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-14)
    assert mine[2] and theirs[2]
    np.testing.assert_allclose(theirs[1], gv * 2 * (-3 * xv) * -3, rtol=1e-13)


# ---------------------------------------------------------------------------
# the example scripts (CI runs them at toy sizes)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["numpy_sort.py", "plot_lennard_jones.py"])
def test_example_runs(name, capsys, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the figure (when matplotlib is there) never blocks
    path = EXAMPLES / name
    assert path.exists(), path
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip(), "the example prints its checked results"
