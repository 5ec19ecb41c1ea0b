"""Every code example of the reference pages (``shared/reference/``) as a test.

The pages document PyTorch's ``autograd.Function``; numbagrad reproduces that API,
so each example runs here unchanged apart from ``import numbagrad as torch``.
Examples written in another notation (the TypeScript-like ``Exp`` of
``function-api-summary.txt``, the C++ ``Function<T>`` template) are translated to
Python line by line. Every test checks numbers against a hand-derived formula or
NumPy, not only that the example runs.

Examples that need the ``numbagrad.func`` transforms (``vmap``, ``jvp``, ``jacrev``,
``jacfwd``, ``hessian``) or forward-mode AD are marked ``transforms`` and skip until
those names exist; they run unchanged once the transforms issue lands.
"""

# The examples are kept as printed on the pages, unused unpacked names included.
# ruff: noqa: RUF059

import importlib

import numpy as np
import pytest

import numbagrad as torch
from numbagrad.autograd.function import Function, NestedIOFunction, once_differentiable

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _func_module():
    """``numbagrad.func`` if it can be imported, else None."""
    try:
        return importlib.import_module("numbagrad.func")
    except ImportError:
        return None


def requires_func(name, *, toplevel=False):
    """Skip unless ``numbagrad.func`` has ``name`` (and ``numbagrad`` too if ``toplevel``).

    The reference pages call some transforms through the top-level namespace
    (``torch.vmap``), others through ``torch.func``: ``toplevel`` checks the former.
    """
    func = _func_module()
    present = func is not None and hasattr(func, name)
    if toplevel:
        present = present and hasattr(torch, name)
    where = f"numbagrad.{name}" if toplevel else f"numbagrad.func.{name}"
    return pytest.mark.skipif(not present, reason=f"{where} not implemented yet (transforms)")


def _has_forward_ad():
    """True when ``numbagrad.autograd.forward_ad`` offers dual numbers."""
    try:
        fwad = importlib.import_module("numbagrad.autograd.forward_ad")
    except ImportError:
        return False
    return all(hasattr(fwad, n) for n in ("dual_level", "make_dual", "unpack_dual"))


requires_forward_ad = pytest.mark.skipif(
    not _has_forward_ad(), reason="numbagrad.autograd.forward_ad not implemented yet"
)

# PyTorch 2.13's own NestedIOFunction calls a removed method and fails at call time;
# numbagrad's must work. Under the PyTorch shim these tests are skipped.
_TORCH_NESTED = NestedIOFunction.__module__.startswith("torch.")
requires_working_nested = pytest.mark.skipif(
    _TORCH_NESTED, reason="PyTorch's own NestedIOFunction is broken (AttributeError)"
)
# instantiating any autograd Function (NestedIOFunction included) warns, as in PyTorch 2.x
_INSTANTIATED = "should not be instantiated"


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
    return np.random.default_rng(20240603)


def distinct(rng, shape):
    """Random float64 values that are pairwise far apart (sorting is well defined)."""
    n = int(np.prod(shape))
    values = rng.permutation(n).astype(np.float64) + rng.uniform(0.1, 0.4, size=n)
    return values.reshape(shape) - n / 2


# ---------------------------------------------------------------------------
# function-api-summary.txt: Exp, combined and separate style
# (TypeScript notation translated to Python)
# ---------------------------------------------------------------------------


class ExpCombined(torch.autograd.Function):
    """``class Exp extends torch.autograd.Function`` -- combined style."""

    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output.mul(result)


class ExpSeparate(torch.autograd.Function):
    """``class Exp extends torch.autograd.Function`` -- separate style."""

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output.mul(result)


EXP_STYLES = pytest.mark.parametrize(
    "Exp", [ExpCombined, ExpSeparate], ids=["combined", "separate"]
)


@EXP_STYLES
def test_exp_forward_and_grad(Exp, rng):
    xv = rng.normal(size=5)
    gv = rng.normal(size=5)
    x = f64(xv, requires_grad=True)
    y = Exp.apply(x)
    np.testing.assert_allclose(to_np(y), np.exp(xv), rtol=1e-13)
    assert y.requires_grad
    assert y.grad_fn.name() == f"{Exp.__name__}Backward"
    y.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), gv * np.exp(xv), rtol=1e-13)


@EXP_STYLES
def test_exp_float32(Exp):
    # The summary's example has no dtype: the default float32 must work too.
    x = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.dtype == torch.float32
    y.sum().backward()
    assert x.grad.dtype == torch.float32
    np.testing.assert_allclose(to_np(x.grad), np.exp([0.0, 1.0, -2.0]), rtol=1e-6)


@EXP_STYLES
def test_exp_gradcheck_and_gradgradcheck(Exp, rng):
    x = f64(rng.normal(size=(2, 3)), requires_grad=True)
    assert torch.autograd.gradcheck(Exp.apply, (x,), eps=1e-6, atol=1e-5)
    # The backward multiplies by the saved *output*, so the second derivative
    # flows through the Function itself: d2/dx2 exp(x) = exp(x).
    assert torch.autograd.gradgradcheck(Exp.apply, (x,), eps=1e-6, atol=1e-5)


@EXP_STYLES
def test_exp_second_derivative(Exp, rng):
    xv = rng.normal(size=4)
    x = f64(xv, requires_grad=True)
    (g,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_np(g), np.exp(xv), rtol=1e-13)
    np.testing.assert_allclose(to_np(gg), np.exp(xv), rtol=1e-13)


# ---------------------------------------------------------------------------
# function-forward.txt: Usage 1 (combined) and Usage 2 (separate) signatures,
# with *args and **kwargs
# ---------------------------------------------------------------------------


class Usage1(torch.autograd.Function):
    """``forward(ctx, *args, **kwargs)``: the sum of any number of tensors."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        ctx.n = len(args)
        out = args[0]
        for a in args[1:]:
            out = out + a
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (grad_output,) * ctx.n


class Usage1Keyword(torch.autograd.Function):
    """Combined style with a keyword argument: ``alpha * x + y``."""

    @staticmethod
    def forward(ctx, x, y, alpha=1.0):
        ctx.alpha = alpha
        return x * alpha + y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.alpha, grad_output, None


class Usage2(torch.autograd.Function):
    """``forward(*args, **kwargs)`` + ``setup_context(ctx, inputs, output)``."""

    @staticmethod
    def forward(x, y, scale=2.0):
        return (x * y) * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, scale = inputs
        ctx.save_for_backward(x, y)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output * y * ctx.scale, grad_output * x * ctx.scale, None


def test_function_forward_usage1_combined(rng):
    av, bv, cv = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    a, b, c = (f64(v, requires_grad=True) for v in (av, bv, cv))
    out = Usage1.apply(a, b, c)
    np.testing.assert_allclose(to_np(out), av + bv + cv, rtol=1e-13)
    gv = rng.normal(size=3)
    out.backward(f64(gv))
    for t in (a, b, c):
        np.testing.assert_allclose(to_np(t.grad), gv)


@pytest.mark.parametrize("kwargs, alpha", [({}, 1.0), ({"alpha": -3.0}, -3.0)])
def test_function_forward_usage1_keyword(rng, kwargs, alpha):
    av, bv = rng.normal(size=3), rng.normal(size=3)
    a, b = f64(av, requires_grad=True), f64(bv, requires_grad=True)
    out = Usage1Keyword.apply(a, b, **kwargs)
    np.testing.assert_allclose(to_np(out), alpha * av + bv, rtol=1e-13)
    out.sum().backward()
    np.testing.assert_allclose(to_np(a.grad), np.full(3, alpha))
    np.testing.assert_allclose(to_np(b.grad), np.ones(3))


@pytest.mark.parametrize("kwargs, scale", [({}, 2.0), ({"scale": 5.0}, 5.0)])
def test_function_forward_usage2_separate(rng, kwargs, scale):
    xv, yv = rng.normal(size=4), rng.normal(size=4)
    x, y = f64(xv, requires_grad=True), f64(yv, requires_grad=True)
    out = Usage2.apply(x, y, **kwargs)
    np.testing.assert_allclose(to_np(out), scale * xv * yv, rtol=1e-13)
    out.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), scale * yv, rtol=1e-13)
    np.testing.assert_allclose(to_np(y.grad), scale * xv, rtol=1e-13)


def test_function_forward_usage2_gradcheck(rng):
    x = f64(rng.normal(size=3), requires_grad=True)
    y = f64(rng.normal(size=3), requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: Usage2.apply(a, b, 3.0), (x, y))
    assert torch.autograd.gradgradcheck(lambda a, b: Usage2.apply(a, b, 3.0), (x, y))


# ---------------------------------------------------------------------------
# cpp-function-template.txt, translated to Python
# ---------------------------------------------------------------------------


class MyFunction(torch.autograd.Function):
    """The C++ page's ``MyFunction``: ``var.mul_(2)`` in place + ``mark_dirty``.

    ``ctx->saved_data["n"]`` becomes the attribute ``ctx.n``; ``variable_list``
    becomes a tuple. As on the page, backward scales by ``n`` (not by 2).
    """

    is_traceable = True

    @staticmethod
    def forward(ctx, n, var):
        # Save data for backward in context
        ctx.n = n
        var.mul_(2)
        # Mark var as modified by inplace operation
        ctx.mark_dirty(var)
        return (var,)

    @staticmethod
    def backward(ctx, grad_output):
        # Use data saved in forward
        n = ctx.n
        return None, grad_output * n


def test_cpp_template_mul_inplace_mark_dirty():
    leaf = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    # In-place on a leaf that requires grad is an error, so the C++ ``Variable x``
    # is a non-leaf here.
    x = leaf.clone()
    version_before = x._version
    y = MyFunction.apply(6, x)
    assert isinstance(y, tuple) and len(y) == 1
    # mark_dirty: the very same tensor object comes back, with a new grad_fn
    assert y[0] is x
    assert x._version > version_before
    assert x.grad_fn.name() == "MyFunctionBackward"
    np.testing.assert_allclose(to_np(y[0]), [2.0, 4.0, 6.0])
    # Example backward call
    y[0].sum().backward()
    np.testing.assert_allclose(to_np(leaf.grad), [6.0, 6.0, 6.0])


class MulConstant(torch.autograd.Function):
    """The C++ page's ``saved_data`` idiom: a non-tensor kept on ctx for backward."""

    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx is a context object that can be used to stash information
        # for backward computation
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # We return as many input gradients as there were arguments.
        # Gradients of non-Tensor arguments to forward must be None.
        return grad_output * ctx.constant, None


def test_cpp_template_mul_constant(rng):
    xv = rng.normal(size=(2, 3))
    gv = rng.normal(size=(2, 3))
    x = f64(xv, requires_grad=True)
    y = MulConstant.apply(x, 6)
    np.testing.assert_allclose(to_np(y), 6 * xv, rtol=1e-14)
    y.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), 6 * gv, rtol=1e-14)
    assert torch.autograd.gradcheck(lambda t: MulConstant.apply(t, 6), (f64(xv, True),))
    assert torch.autograd.gradgradcheck(lambda t: MulConstant.apply(t, 6), (f64(xv, True),))


# ---------------------------------------------------------------------------
# nested-io-function.txt: set_materialize_grads examples
# ---------------------------------------------------------------------------

_seen_grads = []


class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        _seen_grads.append((g1, g2))  # observation only, not on the page
        return g1 + g2  # No check for None necessary


# We modify SimpleFunc to handle non-materialized grad outputs
class Func(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        _seen_grads.append((g1, g2))  # observation only, not on the page
        (x,) = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:  # We must check for None now
            grad_input += g1
        if g2 is not None:
            grad_input += g2
        return grad_input


def test_set_materialize_grads_default_true():
    _seen_grads.clear()
    a = torch.tensor(1.0, requires_grad=True)
    b, _ = SimpleFunc.apply(a)  # g2 is undefined, so it is materialized as zeros
    assert b.item() == 1.0
    b.backward()
    assert a.grad.item() == 1.0
    ((g1, g2),) = _seen_grads
    assert g2 is not None
    assert g2.shape == a.shape and g2.item() == 0.0


def test_set_materialize_grads_false():
    _seen_grads.clear()
    a = torch.tensor(1.0, requires_grad=True)
    b, _ = Func.apply(a)  # induces g2 to be undefined
    b.backward()
    assert a.grad.item() == 1.0
    ((g1, g2),) = _seen_grads
    assert g1.item() == 1.0
    assert g2 is None


def test_set_materialize_grads_false_both_used():
    _seen_grads.clear()
    a = torch.tensor(1.5, requires_grad=True)
    b, c = Func.apply(a)
    (3 * b + 5 * c).backward()
    assert a.grad.item() == 8.0
    ((g1, g2),) = _seen_grads
    assert g1.item() == 3.0 and g2.item() == 5.0


# ---------------------------------------------------------------------------
# nested-io-function.txt: save_for_forward / jvp / vjp example (Func)
# ---------------------------------------------------------------------------


class FwdFunc(torch.autograd.Function):
    """The ``save_for_forward`` example (``Func`` on the page)."""

    @staticmethod
    def forward(ctx, x, y, z: int):
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        ctx.z = z
        return x * y * z

    @staticmethod
    def jvp(ctx, x_t, y_t, _):
        x, y = ctx.saved_tensors
        z = ctx.z
        return z * (y * x_t + x * y_t)

    @staticmethod
    def vjp(ctx, grad_out):
        x, y = ctx.saved_tensors
        z = ctx.z
        return z * grad_out * y, z * grad_out * x, None


def test_save_for_forward_example_reverse_mode():
    # The page's tensors, differentiated in reverse mode (no transform needed).
    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double)
    b = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    c = 4
    d = FwdFunc.apply(a, b, c)
    assert d.item() == 8.0
    d.backward()
    assert a.grad.item() == c * 2.0  # z * y
    assert b.grad.item() == c * 1.0  # z * x


def test_save_for_forward_example_gradcheck(rng):
    x = f64(rng.normal(size=3), requires_grad=True)
    y = f64(rng.normal(size=3), requires_grad=True)
    assert torch.autograd.gradcheck(lambda p, q: FwdFunc.apply(p, q, 3), (x, y))


@pytest.mark.transforms
@requires_forward_ad
def test_save_for_forward_example_forward_ad():
    import numbagrad.autograd.forward_ad as fwAD

    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double)
    t = torch.tensor(1.0, dtype=torch.double)
    b = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    c = 4

    with fwAD.dual_level():
        a_dual = fwAD.make_dual(a, t)
        d = FwdFunc.apply(a_dual, b, c)
        primal, tangent = fwAD.unpack_dual(d)
        # d = x*y*z = 8, and the tangent z*(y*x_t + x*y_t) = 4*(2*1 + 1*0) = 8
        assert primal.item() == 8.0
        assert tangent.item() == 8.0


class FwdFuncSeparate(torch.autograd.Function):
    """The same Function in the separate style, which the transforms require."""

    @staticmethod
    def forward(x, y, z):
        return x * y * z

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, z = inputs
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        ctx.z = z

    @staticmethod
    def jvp(ctx, x_t, y_t, _):
        x, y = ctx.saved_tensors
        return ctx.z * (y * x_t + x * y_t)

    @staticmethod
    def vjp(ctx, grad_out):
        x, y = ctx.saved_tensors
        return ctx.z * grad_out * y, ctx.z * grad_out * x, None


@pytest.mark.transforms
@requires_func("jvp")
def test_save_for_forward_example_func_jvp(rng):
    xv, yv, tv = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    y = f64(yv)
    out, tangent = torch.func.jvp(lambda x: FwdFuncSeparate.apply(x, y, 4), (f64(xv),), (f64(tv),))
    np.testing.assert_allclose(to_np(out), 4 * xv * yv, rtol=1e-13)
    np.testing.assert_allclose(to_np(tangent), 4 * yv * tv, rtol=1e-13)


@pytest.mark.transforms
@requires_func("grad")
@pytest.mark.skipif(
    torch.__name__ == "torch", reason="PyTorch's torch.func path ignores a Function's vjp alias"
)
def test_save_for_forward_example_func_grad(rng):
    # The vjp staticmethod is documented as equivalent to backward: it must also
    # serve torch.func.grad (PyTorch 2.13 raises NotImplementedError here).
    xv, yv = rng.normal(size=3), rng.normal(size=3)
    y = f64(yv)
    gx = torch.func.grad(lambda x: FwdFuncSeparate.apply(x, y, 4).sum())(f64(xv))
    np.testing.assert_allclose(to_np(gx), 4 * yv, rtol=1e-13)


@pytest.mark.transforms
@requires_func("grad")
def test_transforms_require_setup_context(rng):
    # "Only the latter [separate forward + setup_context] is supported with
    # function transforms": the combined-style Func must be refused clearly.
    y = f64(rng.normal(size=3))
    with pytest.raises(RuntimeError, match="setup_context"):
        torch.func.grad(lambda x: FwdFunc.apply(x, y, 4).sum())(f64(rng.normal(size=3)))


# ---------------------------------------------------------------------------
# nested-io-function.txt: NestedIOFunction (legacy), as its page documents it:
# forward_extended / backward_extended on nested inputs and outputs,
# save_for_backward / saved_tensors with nesting, mark_dirty,
# mark_non_differentiable.
# ---------------------------------------------------------------------------


class SumAndProducts(NestedIOFunction):
    """``(x, (y, z)) -> (x + y, [x * z, y - z])``, with a nested saved structure."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale  # a non-tensor parameter lives on the instance

    def forward_extended(self, x, yz):
        y, z = yz
        self.save_for_backward(x, (y, z))
        s = self.scale
        return (x + y) * s, [x * z * s, (y - z) * s]

    def backward_extended(self, g_sum, g_pair):
        x, (y, z) = self.saved_tensors
        g_prod, g_diff = g_pair
        s = self.scale
        gx = (g_sum + g_prod * z) * s
        gy = (g_sum + g_diff) * s
        gz = (g_prod * x - g_diff) * s
        return gx, (gy, gz)


@requires_working_nested
def test_nested_io_function_structure_and_grads(rng):
    xv, yv, zv = (rng.normal(size=3) for _ in range(3))
    x, y, z = (f64(v, requires_grad=True) for v in (xv, yv, zv))
    with pytest.warns(DeprecationWarning, match=_INSTANTIATED):  # as in PyTorch 2.x
        fn = SumAndProducts(2.0)
    out = fn(x, (y, z))
    # outputs come back with forward_extended's nesting
    assert isinstance(out, tuple) and len(out) == 2
    total, pair = out
    assert isinstance(pair, list) and len(pair) == 2
    prod, diff = pair
    np.testing.assert_allclose(to_np(total), 2 * (xv + yv), rtol=1e-14)
    np.testing.assert_allclose(to_np(prod), 2 * xv * zv, rtol=1e-14)
    np.testing.assert_allclose(to_np(diff), 2 * (yv - zv), rtol=1e-14)
    assert total.requires_grad and prod.requires_grad and diff.requires_grad

    gs, gp, gd = (rng.normal(size=3) for _ in range(3))
    torch.autograd.backward([total, prod, diff], [f64(gs), f64(gp), f64(gd)])
    np.testing.assert_allclose(to_np(x.grad), 2 * (gs + gp * zv), rtol=1e-13)
    np.testing.assert_allclose(to_np(y.grad), 2 * (gs + gd), rtol=1e-13)
    np.testing.assert_allclose(to_np(z.grad), 2 * (gp * xv - gd), rtol=1e-13)


@requires_working_nested
def test_nested_io_function_unused_output_and_needs_input_grad(rng):
    seen = {}

    class Scale(NestedIOFunction):
        def forward_extended(self, pair):
            a, b = pair
            seen["needs"] = tuple(self.needs_input_grad)
            return a * 3, b * 4

        def backward_extended(self, ga, gb):
            seen["grads"] = (ga, gb)
            return (ga * 3, None if gb is None else gb * 4)

    av, bv = rng.normal(size=2), rng.normal(size=2)
    a = f64(av, requires_grad=True)
    b = f64(bv)  # does not require grad
    with pytest.warns(DeprecationWarning, match=_INSTANTIATED):
        fn = Scale()
    out_a, out_b = fn((a, b))
    np.testing.assert_allclose(to_np(out_a), 3 * av)
    np.testing.assert_allclose(to_np(out_b), 4 * bv)
    assert seen["needs"] == (True, False)
    out_a.sum().backward()
    np.testing.assert_allclose(to_np(a.grad), np.full(2, 3.0))
    ga, gb = seen["grads"]
    np.testing.assert_allclose(to_np(ga), np.ones(2))
    # the unused output's gradient is materialized as zeros (the default)
    np.testing.assert_allclose(to_np(gb), np.zeros(2))


@requires_working_nested
def test_nested_io_function_mark_non_differentiable(rng):
    class SortWithIndex(NestedIOFunction):
        def forward_extended(self, x):
            order = np.argsort(x.numpy(), kind="stable")
            values = torch.tensor(x.numpy()[order], dtype=x.dtype)
            rank = torch.tensor(np.argsort(order).astype(np.float64), dtype=x.dtype)
            self.mark_non_differentiable(rank)
            self.save_for_backward(rank)
            return values, rank

        def backward_extended(self, g_values, g_rank):
            (rank,) = self.saved_tensors
            return g_values[rank.long()]

    xv = distinct(rng, (5,))
    x = f64(xv, requires_grad=True)
    with pytest.warns(DeprecationWarning, match=_INSTANTIATED):
        fn = SortWithIndex()
    values, rank = fn(x)
    np.testing.assert_allclose(to_np(values), np.sort(xv))
    assert values.requires_grad
    assert not rank.requires_grad
    gv = rng.normal(size=5)
    values.backward(f64(gv))
    np.testing.assert_allclose(to_np(x.grad), gv[np.argsort(np.argsort(xv))])


@requires_working_nested
def test_nested_io_function_mark_dirty():
    class DoubleInPlace(NestedIOFunction):
        def forward_extended(self, x):
            x.mul_(2)
            self.mark_dirty(x)
            return x

        def backward_extended(self, g):
            return g * 2

    leaf = f64([1.0, -2.0, 3.0], requires_grad=True)
    x = leaf * 1  # a non-leaf: in-place on a leaf requiring grad is an error
    with pytest.warns(DeprecationWarning, match=_INSTANTIATED):
        fn = DoubleInPlace()
    out = fn(x)
    np.testing.assert_allclose(to_np(out), [2.0, -4.0, 6.0])
    np.testing.assert_allclose(to_np(x), [2.0, -4.0, 6.0])  # x was modified in place
    out.sum().backward()
    np.testing.assert_allclose(to_np(leaf.grad), [2.0, 2.0, 2.0])


# ---------------------------------------------------------------------------
# extending-func-with-function.txt, Example 1: NumpySort / NumpyTake
# ---------------------------------------------------------------------------


def to_numpy(tensor):
    return tensor.cpu().numpy()


class NumpySort(torch.autograd.Function):
    # Note that forward does not take ctx
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        # Any intermediates to be saved in backward must be returned as
        # outputs.
        return (
            # The desired output
            torch.tensor(result, device=device),
            # intermediate to save for backward
            torch.tensor(ind, device=device),
            # intermediate to save for backward
            torch.tensor(ind_inv, device=device),
        )

    # setup_context is responsible for calling methods and/or assigning to
    # the ctx object. Please do not do additional compute (e.g. add
    # Tensors together) in setup_context.
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        # Note that output is whatever you returned from forward.
        # If you returned multiple values, then output is a Tuple of multiple values.
        # If you returned a single Tensor, then output is a Tensor.
        # If you returned a Tuple with a single Tensor, then output is a
        # Tuple with a single Tensor.
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        # Tensors must be saved via ctx.save_for_backward. Please do not
        # assign them directly onto the ctx object.
        ctx.save_for_backward(ind, ind_inv)
        # Non-tensors may be saved by assigning them as attributes on the ctx object.
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # For the autograd.Function to be arbitrarily composable with function
        # transforms, all staticmethod other than forward and setup_context
        # must be implemented in a "transformable" way; that is, they must
        # only consist of PyTorch operations or autograd.Function.
        #
        # For example, this allows us to do double backwards and/or compute
        # second order gradients.
        #
        # We've written the backward pass of NumpySort in terms of another
        # autograd.Function, NumpyTake.
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


@pytest.mark.parametrize("shape, dim", [((6,), 0), ((2, 3), -1), ((3, 4), 0), ((2, 3, 4), 1)])
def test_numpy_sort_forward_and_outputs(rng, shape, dim):
    xv = distinct(rng, shape)
    x = f64(xv, requires_grad=True)
    result, ind, ind_inv = NumpySort.apply(x, dim)
    np.testing.assert_array_equal(to_np(result), np.sort(xv, axis=dim))
    np.testing.assert_array_equal(to_np(ind), np.argsort(xv, axis=dim))
    np.testing.assert_array_equal(to_np(ind_inv), np.argsort(np.argsort(xv, axis=dim), axis=dim))
    assert result.requires_grad
    assert result.grad_fn.name() == "NumpySortBackward"
    # mark_non_differentiable (and integer dtype): the indices never require grad
    assert not ind.requires_grad and not ind_inv.requires_grad
    assert ind.dtype == torch.int64


@pytest.mark.parametrize("shape, dim", [((6,), 0), ((2, 3), -1), ((3, 4), 0), ((2, 3, 4), 1)])
def test_numpy_sort_grad_matches_hand_derivation(rng, shape, dim):
    # result[..., j, ...] = x[..., ind[j], ...], so dL/dx[..., ind[j], ...] = g[..., j, ...]:
    # the gradient is g gathered with the inverse permutation.
    xv = distinct(rng, shape)
    gv = rng.normal(size=shape)
    x = f64(xv, requires_grad=True)
    numpy_sort(x, dim).backward(f64(gv))
    ind_inv = np.argsort(np.argsort(xv, axis=dim), axis=dim)
    np.testing.assert_allclose(to_np(x.grad), np.take_along_axis(gv, ind_inv, axis=dim))


def test_numpy_sort_sum_grad_is_ones(rng):
    # The page's sanity check, through plain reverse mode.
    x = torch.randn(2, 3, requires_grad=True)
    numpy_sort(x).sum().backward()
    assert torch.allclose(x.grad, torch.ones_like(x))


def test_numpy_sort_gradcheck_and_gradgradcheck(rng):
    x = f64(distinct(rng, (3, 4)), requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: numpy_sort(t, 1), (x,))
    assert torch.autograd.gradcheck(lambda t: numpy_sort(t, 0), (x,))
    # NumpySort's backward is NumpyTake, itself a Function: double backward works.
    assert torch.autograd.gradgradcheck(lambda t: numpy_sort(t, 1), (x,))


def test_numpy_take_double_backward(rng):
    xv = distinct(rng, (5,))
    wv = rng.normal(size=5)
    x = f64(xv, requires_grad=True)
    w = f64(wv, requires_grad=True)
    # L = sum(sort(x) * w); dL/dx = w[ind_inv]; d/dw of sum(dL/dx * v) = v[ind]
    (gx,) = torch.autograd.grad((numpy_sort(x) * w).sum(), x, create_graph=True)
    ind = np.argsort(xv)
    np.testing.assert_allclose(to_np(gx), wv[np.argsort(ind)])
    assert gx.requires_grad
    vv = rng.normal(size=5)
    (gw,) = torch.autograd.grad((gx * f64(vv)).sum(), w)
    np.testing.assert_allclose(to_np(gw), vv[ind])


@pytest.mark.transforms
@requires_func("grad")
def test_numpy_sort_func_grad_sanity_check():
    # The page's sanity check, verbatim.
    x = torch.randn(2, 3)
    grad_x = torch.func.grad(lambda x: numpy_sort(x).sum())(x)
    assert torch.allclose(grad_x, torch.ones_like(x))


@pytest.mark.transforms
@requires_func("grad")
def test_numpy_sort_func_grad_weighted(rng):
    xv = distinct(rng, (2, 3))
    wv = rng.normal(size=(2, 3))
    w = f64(wv)
    grad_x = torch.func.grad(lambda x: (numpy_sort(x) * w).sum())(f64(xv))
    ind_inv = np.argsort(np.argsort(xv, axis=-1), axis=-1)
    np.testing.assert_allclose(to_np(grad_x), np.take_along_axis(wv, ind_inv, axis=-1))


# ---------------------------------------------------------------------------
# extending-func-with-function.txt, Example 2: MyCube
# ---------------------------------------------------------------------------


class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x**3
        # In regular PyTorch, if we had just run y = x ** 3, then the backward
        # pass computes dx = 3 * x ** 2. In this autograd.Function, we've done
        # that computation here in the forward pass instead.
        dx = 3 * x**2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # In order for the autograd.Function to work with higher-order
        # gradients, we must add the gradient contribution of `dx`.
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, _ = MyCube.apply(x)
    return result


def test_my_cube_forward_and_grad(rng):
    xv = rng.normal(size=4)
    x = f64(xv, requires_grad=True)
    result, dx = MyCube.apply(x)
    np.testing.assert_allclose(to_np(result), xv**3, rtol=1e-14)
    np.testing.assert_allclose(to_np(dx), 3 * xv**2, rtol=1e-14)
    my_cube(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 3 * xv**2, rtol=1e-14)


@pytest.mark.parametrize("shape", [(), (4,)])
def test_my_cube_higher_derivatives_via_autograd_grad(rng, shape):
    # d/dx x^3 = 3x^2, d2/dx2 = 6x, d3/dx3 = 6, each through autograd.grad(create_graph=True)
    xv = rng.normal(size=shape)
    x = f64(xv, requires_grad=True)
    (g1,) = torch.autograd.grad(my_cube(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_np(g1), 3 * xv**2, rtol=1e-13)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    np.testing.assert_allclose(to_np(g2), 6 * xv, rtol=1e-13)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(to_np(g3), np.full(shape, 6.0), rtol=1e-13)


def test_my_cube_gradcheck_and_gradgradcheck(rng):
    x = f64(rng.normal(size=(2, 3)), requires_grad=True)
    assert torch.autograd.gradcheck(my_cube, (x,))
    assert torch.autograd.gradgradcheck(my_cube, (x,))
    # both outputs at once: the grad_dx path is exercised too
    assert torch.autograd.gradcheck(MyCube.apply, (x,))
    assert torch.autograd.gradgradcheck(MyCube.apply, (x,))


@pytest.mark.transforms
@requires_func("grad")
def test_my_cube_func_grad_grad_sanity_check():
    # The page's sanity check, verbatim.
    x = torch.randn([])
    ggx = torch.func.grad(torch.func.grad(my_cube))(x)
    assert torch.allclose(ggx, 6 * x)


@pytest.mark.transforms
@requires_func("grad")
def test_my_cube_func_third_derivative(rng):
    xv = float(rng.normal())
    gggx = torch.func.grad(torch.func.grad(torch.func.grad(my_cube)))(f64(xv))
    assert gggx.item() == pytest.approx(6.0)
    ggx = torch.func.grad(torch.func.grad(my_cube))(f64(xv))
    assert ggx.item() == pytest.approx(6 * xv)


# ---------------------------------------------------------------------------
# extending-func-with-function.txt: torch.vmap support
# ---------------------------------------------------------------------------


class MyCubeVmap(torch.autograd.Function):
    # Set generate_vmap_rule to True to ask PyTorch to automatically generate
    # a vmap rule.
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        result = x**3
        dx = 3 * x**2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube_vmap(x):
    result, dx = MyCubeVmap.apply(x)
    return result


@pytest.mark.transforms
@requires_func("vmap", toplevel=True)
def test_my_cube_generate_vmap_rule():
    # The page's example, verbatim.
    x = torch.randn(3)
    result = torch.vmap(my_cube_vmap)(x)
    assert torch.allclose(result, x**3)


@pytest.mark.transforms
@requires_func("vmap", toplevel=True)
def test_my_cube_generate_vmap_rule_batched_2d(rng):
    xv = rng.normal(size=(4, 3))
    result = torch.vmap(my_cube_vmap, in_dims=1)(f64(xv))
    np.testing.assert_allclose(to_np(result), (xv**3).T, rtol=1e-13)


@pytest.mark.transforms
@requires_func("vmap")
@requires_func("grad")
def test_my_cube_vmap_of_grad(rng):
    xv = rng.normal(size=5)
    g = torch.func.vmap(torch.func.grad(my_cube_vmap))(f64(xv))
    np.testing.assert_allclose(to_np(g), 3 * xv**2, rtol=1e-13)
    gg = torch.func.vmap(torch.func.grad(torch.func.grad(my_cube_vmap)))(f64(xv))
    np.testing.assert_allclose(to_np(gg), 6 * xv, rtol=1e-13)


class NumpySortV(torch.autograd.Function):
    """The vmap section's NumpySort (with its own ``vmap`` staticmethod)."""

    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        return (
            torch.tensor(result, device=device),
            torch.tensor(ind, device=device),
            torch.tensor(ind_inv, device=device),
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # NOTE: the page's listing uses ind/ind_inv without reading them from ctx
        # (a NameError as printed); Example 1's backward shows the intended line.
        ind, ind_inv = ctx.saved_tensors
        return NumpyTakeV.apply(grad_output, ind_inv, ind, ctx.dim), None

    # The signature of the vmap staticmethod is:
    # vmap(info, in_dims: Tuple[Optional[int]], *args)
    # where *args is the same as the arguments to `forward`.
    @staticmethod
    def vmap(info, in_dims, x, dim):
        # For every input (x and dim), in_dims stores an Optional[int]
        # that is:
        # - None if the input is not being vmapped over or if the input
        #   is not a Tensor
        # - an integer if the input is being vmapped over that represents
        #   the index of the dimension being vmapped over.
        x_bdim, _ = in_dims

        # A "vmap rule" is the logic of how to perform the operation given
        # inputs with one additional dimension. In NumpySort, x has an
        # additional dimension (x_bdim). The vmap rule is simply
        # to call NumpySort again but pass it a different `dim`.
        x = x.movedim(x_bdim, 0)
        # Handle negative dims correctly
        dim = dim if dim >= 0 else dim + x.dim() - 1
        result = NumpySortV.apply(x, dim + 1)  # noqa: F841 (as on the page)

        # The vmap rule must return a tuple of two things
        # 1. the output. Should be the same amount of things
        #    as returned by the forward().
        # 2. one Optional[int] for each output specifying if each output
        # is being vmapped over, and if so, the index of the
        # dimension being vmapped over.
        #
        # NumpySort.forward returns a Tuple of 3 Tensors. Since we moved the
        # dimension being vmapped over to the front of `x`, that appears at
        # dimension 0 of all outputs.
        # The return is (output, out_dims) -- output is a tuple of 3 Tensors
        # and out_dims is a Tuple of 3 Optional[int]
        return NumpySortV.apply(x, dim + 1), (0, 0, 0)


class NumpyTakeV(torch.autograd.Function):
    """The vmap section's NumpyTake (with its own ``vmap`` staticmethod)."""

    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTakeV.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims

        # The strategy is: expand {x, ind, ind_inv} to all have the dimension
        # being vmapped over.
        # Then, call back into NumpyTake(expanded_x, expanded_ind, expanded_ind_inv, new_dim).

        # Handle negative dims by wrapping them to be positive
        logical_dim = x.dim() if x_bdim is None else x_bdim - 1
        dim = dim if dim >= 0 else dim + logical_dim

        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)

        # If the Tensor doesn't have the dimension being vmapped over,
        # expand it out. Otherwise, move it to the front of the Tensor
        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)

        # The return is a tuple (output, out_dims). Since output is a Tensor,
        # then out_dims is an Optional[int] (instead of being a Tuple).
        return NumpyTakeV.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort_v(x, dim=-1):
    result, _, _ = NumpySortV.apply(x, dim)
    return result


def test_numpy_sort_vmap_version_without_transforms(rng):
    # The vmap-capable pair still works as a plain Function (vmap unused).
    xv = distinct(rng, (2, 5))
    gv = rng.normal(size=(2, 5))
    x = f64(xv, requires_grad=True)
    y = numpy_sort_v(x)
    np.testing.assert_array_equal(to_np(y), np.sort(xv, axis=-1))
    y.backward(f64(gv))
    ind_inv = np.argsort(np.argsort(xv, axis=-1), axis=-1)
    np.testing.assert_allclose(to_np(x.grad), np.take_along_axis(gv, ind_inv, axis=-1))


@pytest.mark.transforms
@requires_func("vmap", toplevel=True)
def test_numpy_sort_vmap_staticmethod():
    # The page's example, verbatim.
    x = torch.randn(2, 3)
    result = torch.vmap(numpy_sort_v)(x)
    assert torch.allclose(result, numpy_sort_v(result, 1))
    # ... and it is actually the row-wise sort
    np.testing.assert_array_equal(to_np(result), np.sort(to_np(x), axis=-1))


@pytest.mark.transforms
@requires_func("vmap", toplevel=True)
def test_numpy_sort_vmap_in_dims_1(rng):
    xv = distinct(rng, (4, 3))
    result = torch.vmap(numpy_sort_v, in_dims=1)(f64(xv))
    np.testing.assert_array_equal(to_np(result), np.sort(xv.T, axis=-1))


@pytest.mark.transforms
@requires_func("jacrev")
def test_numpy_sort_jacrev_is_permutation_matrix(rng):
    # jacrev = vmap over the backward: NumpyTake's vmap rule is used.
    xv = distinct(rng, (5,))
    jac = torch.func.jacrev(numpy_sort_v)(f64(xv))
    expected = np.zeros((5, 5))
    expected[np.arange(5), np.argsort(xv)] = 1.0
    np.testing.assert_array_equal(to_np(jac), expected)


@pytest.mark.transforms
@requires_func("vmap")
@requires_func("grad")
def test_numpy_sort_grad_of_vmap(rng):
    xv = distinct(rng, (3, 4))
    wv = rng.normal(size=(3, 4))
    w = f64(wv)
    grad_x = torch.func.grad(lambda x: (torch.func.vmap(numpy_sort_v)(x) * w).sum())(f64(xv))
    ind_inv = np.argsort(np.argsort(xv, axis=-1), axis=-1)
    np.testing.assert_allclose(to_np(grad_x), np.take_along_axis(wv, ind_inv, axis=-1))


# ---------------------------------------------------------------------------
# extending-func-with-function.txt: jvp support and compositions
# (jacrev, jacfwd, hessian): MyCube with a jvp staticmethod
# ---------------------------------------------------------------------------


class MyCubeJvp(torch.autograd.Function):
    """MyCube with the ``jvp`` staticmethod the page asks for forward mode."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x**3, 3 * x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)
        ctx.save_for_forward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_output * dx + grad_dx * 6 * x

    @staticmethod
    def jvp(ctx, x_t):
        x, dx = ctx.saved_tensors
        return dx * x_t, 6 * x * x_t


def my_cube_jvp(x):
    result, _ = MyCubeJvp.apply(x)
    return result


@pytest.mark.transforms
@requires_func("jvp")
def test_my_cube_func_jvp(rng):
    xv, tv = rng.normal(size=4), rng.normal(size=4)
    out, tangent = torch.func.jvp(my_cube_jvp, (f64(xv),), (f64(tv),))
    np.testing.assert_allclose(to_np(out), xv**3, rtol=1e-13)
    np.testing.assert_allclose(to_np(tangent), 3 * xv**2 * tv, rtol=1e-13)


@pytest.mark.transforms
@requires_func("jacrev")
def test_my_cube_jacrev(rng):
    xv = rng.normal(size=4)
    jac = torch.func.jacrev(my_cube_jvp)(f64(xv))
    np.testing.assert_allclose(to_np(jac), np.diag(3 * xv**2), rtol=1e-13)


@pytest.mark.transforms
@requires_func("jacfwd")
def test_my_cube_jacfwd(rng):
    xv = rng.normal(size=4)
    jac = torch.func.jacfwd(my_cube_jvp)(f64(xv))
    np.testing.assert_allclose(to_np(jac), np.diag(3 * xv**2), rtol=1e-13)


@pytest.mark.transforms
@requires_func("hessian")
def test_my_cube_hessian(rng):
    xv = rng.normal(size=4)
    hess = torch.func.hessian(lambda x: my_cube_jvp(x).sum())(f64(xv))
    np.testing.assert_allclose(to_np(hess), np.diag(6 * xv), rtol=1e-13)
