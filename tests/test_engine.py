"""Backward engine: graph shapes, retain_graph, accumulation, hooks, higher order, errors."""

import gc
import warnings

import numpy as np
import pytest

import numbagrad
from numbagrad import autograd

IS_TORCH = numbagrad.__name__ == "torch"


def leaf(values):
    """A float64 leaf that requires grad."""
    return numbagrad.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def npy(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# Graph shapes.
# ---------------------------------------------------------------------------


def test_diamond():
    # x feeds two branches that meet again: contributions from both must be summed.
    x = leaf([0.5, -1.0, 2.0])
    a = x.sin()
    b = x.exp()
    y = (a * b).sum()
    y.backward()
    xv = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(npy(x.grad), np.cos(xv) * np.exp(xv) + np.sin(xv) * np.exp(xv))


def test_nested_diamonds_and_shared_subexpression():
    x = leaf([0.3, 1.2])
    s = x * x  # shared by all consumers below
    u = s + s.exp()
    v = s * 3.0 - u
    y = (u * v + s).sum()
    y.backward()
    xv = np.array([0.3, 1.2])
    sv = xv * xv
    uv = sv + np.exp(sv)
    vv = 3.0 * sv - uv
    du_ds = 1.0 + np.exp(sv)
    dv_ds = 3.0 - du_ds
    dy_ds = du_ds * vv + uv * dv_ds + 1.0
    np.testing.assert_allclose(npy(x.grad), dy_ds * 2.0 * xv, rtol=1e-12)


def test_same_tensor_used_twice_in_one_op():
    x = leaf([1.5, -2.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3.0, -4.0])
    y = leaf([2.0])
    (y + y + y).sum().backward()
    np.testing.assert_allclose(npy(y.grad), [3.0])


def test_execution_order_respects_dependencies():
    # A node must run only after every consumer has sent its gradient: here b's gradient
    # arrives from two paths of different lengths.
    x = leaf([1.0, 2.0])
    b = x * 2.0
    c = b.exp().log()  # long path back to b (identity)
    d = b * 1.0  # short path
    (c + d).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [4.0, 4.0], rtol=1e-12)


def test_deep_chain_has_no_recursion_limit():
    # 100,000 ops: a recursive engine (or a recursive graph free) hits Python's limit.
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1.0])
    del y
    gc.collect()


def test_wide_fan_out():
    x = leaf([2.0])
    total = x * 0.0
    for i in range(200):
        total = total + x * float(i)
    total.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [sum(range(200))])


# ---------------------------------------------------------------------------
# retain_graph and accumulation.
# ---------------------------------------------------------------------------


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()  # MulBackward saves both inputs
    y.backward()
    with pytest.raises(RuntimeError, match=r"second time|freed"):
        y.backward()


def test_second_backward_after_autograd_grad_raises():
    x = leaf([1.0, 2.0])
    y = x.exp().sum()
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=r"second time|freed"):
        autograd.grad(y, x)


def test_retain_graph_allows_second_backward_and_accumulates():
    x = leaf([1.0, -2.0])
    y = (x * x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(npy(x.grad), [3.0, 12.0])
    y.backward()
    np.testing.assert_allclose(npy(x.grad), [6.0, 24.0])


def test_graph_that_saved_nothing_can_backward_twice():
    # Adding a constant and summing save no tensors (as in PyTorch).
    x = leaf([1.0, 2.0])
    y = (x + 1.0).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


def test_accumulation_across_two_graphs_and_reset():
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3.0 + 2.0, 3.0 + 4.0])
    x.grad = None
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])
    x.grad.zero_()
    assert np.all(npy(x.grad) == 0.0)


def test_grad_is_not_aliased_to_an_intermediate():
    # The first gradient stored in .grad must not alias a buffer the engine reuses.
    x = leaf([1.0, 2.0])
    y = x * 1.0
    y.sum().backward()
    g = npy(x.grad).copy()
    (x * 5.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), g + 5.0)


def test_grad_dtype_and_shape_match_leaf():
    x = numbagrad.ones(2, 3, dtype=numbagrad.float32, requires_grad=True)
    (x * 2.0).sum().backward()
    assert x.grad.dtype == numbagrad.float32
    assert tuple(x.grad.shape) == (2, 3)
    assert x.grad.requires_grad is False


# ---------------------------------------------------------------------------
# Hooks and retain_grad.
# ---------------------------------------------------------------------------


def test_register_hook_on_leaf_modifies_grad():
    x = leaf([1.0, 2.0])
    seen = []

    def hook(g):
        seen.append(npy(g).copy())
        return g * 10.0

    x.register_hook(hook)
    (x * x).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 4.0])
    np.testing.assert_allclose(npy(x.grad), [20.0, 40.0])


def test_register_hook_on_intermediate_changes_upstream_grad():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    y.register_hook(lambda g: g * 2.0)
    z = y * y
    z.sum().backward()
    # dz/dy = 2y = 6x; doubled by the hook; times dy/dx = 3.
    np.testing.assert_allclose(npy(x.grad), 2.0 * 6.0 * np.array([1.0, 2.0]) * 3.0)


def test_hook_returning_none_keeps_grad_and_handle_removes():
    x = leaf([1.0])
    calls = []
    h = x.register_hook(lambda g: calls.append(1))
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0])
    assert calls == [1]
    h.remove()
    (x * 2.0).sum().backward()
    assert calls == [1]


def test_hook_sees_summed_gradient_once():
    # An intermediate with two consumers: its hook fires once, with the summed gradient.
    x = leaf([1.0])
    y = x * 2.0
    seen = []
    y.register_hook(lambda g: seen.append(npy(g).copy()))
    (y * 3.0 + y * 4.0).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [7.0])


def test_register_hook_on_tensor_not_requiring_grad_raises():
    with pytest.raises(RuntimeError, match=r"requires_grad|require grad"):
        numbagrad.ones(2).register_hook(lambda g: g)


def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    y.retain_grad()
    z = y * 2.0
    (z * z).sum().backward()
    np.testing.assert_allclose(npy(y.grad), 8.0 * npy(y))
    assert y.retains_grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns when reading a non-leaf's .grad
        assert z.grad is None


# ---------------------------------------------------------------------------
# autograd.grad: inputs, unused inputs, grad_outputs, higher order.
# ---------------------------------------------------------------------------


def test_autograd_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(npy(g), [2.0, 4.0])
    assert x.grad is None


def test_autograd_grad_with_grad_outputs():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    (g,) = autograd.grad(
        y, x, grad_outputs=numbagrad.tensor([1.0, 0.5, -1.0], dtype=numbagrad.float64)
    )
    np.testing.assert_allclose(npy(g), [2.0, 2.0, -6.0])


def test_autograd_grad_multiple_outputs_and_inputs():
    a = leaf([1.0, 2.0])
    b = leaf([3.0])
    y1 = (a * b).sum()
    y2 = (a * a).sum()
    ga, gb = autograd.grad([y1, y2], [a, b])
    np.testing.assert_allclose(npy(ga), [3.0 + 2.0, 3.0 + 4.0])
    np.testing.assert_allclose(npy(gb), [3.0])


def test_allow_unused():
    x = leaf([1.0])
    unused = leaf([5.0])
    y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match=r"not have been used|allow_unused"):
        autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    np.testing.assert_allclose(npy(gx), [2.0])
    assert gu is None


def test_materialize_grads():
    x = leaf([1.0])
    unused = leaf([[5.0, 6.0]])
    y = (x * 2.0).sum()
    gx, gu = autograd.grad(y, [x, unused], allow_unused=True, materialize_grads=True)
    np.testing.assert_allclose(npy(gx), [2.0])
    assert tuple(gu.shape) == (1, 2)
    np.testing.assert_array_equal(npy(gu), [[0.0, 0.0]])


def test_grad_of_intermediate():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    z = (y * y).sum()
    (gy,) = autograd.grad(z, y)
    np.testing.assert_allclose(npy(gy), 2.0 * npy(y))


def test_create_graph_higher_derivatives_of_cube():
    xv = np.array([-1.5, 0.5, 2.0])
    x = leaf(xv)
    y = (x**3).sum()
    (g1,) = autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(npy(g1), 3.0 * xv**2)
    assert g1.requires_grad
    (g2,) = autograd.grad(g1.sum(), x, create_graph=True)
    np.testing.assert_allclose(npy(g2), 6.0 * xv)
    (g3,) = autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(npy(g3), [6.0, 6.0, 6.0])


def test_backward_create_graph_then_grad_of_grad():
    x = leaf([0.7])
    y = (x.sin() * x).sum()
    y.backward(create_graph=True)
    gx = x.grad
    assert gx.requires_grad
    (h,) = autograd.grad(gx.sum(), x)
    xv = 0.7
    np.testing.assert_allclose(npy(h), [2 * np.cos(xv) - xv * np.sin(xv)])


def test_without_create_graph_grad_does_not_require_grad():
    x = leaf([1.0, 2.0])
    (g,) = autograd.grad((x**3).sum(), x)
    assert not g.requires_grad
    assert g.grad_fn is None


def test_hessian_vector_product_mixed_partials():
    a = leaf([1.0, 2.0])
    b = leaf([3.0, -1.0])
    f = (a * a * b).sum()
    ga, _ = autograd.grad(f, (a, b), create_graph=True)
    # d/db of (ga . v) with ga = 2ab: 2a*v
    v = numbagrad.tensor([1.0, 1.0], dtype=numbagrad.float64)
    (hb,) = autograd.grad((ga * v).sum(), b)
    np.testing.assert_allclose(npy(hb), 2.0 * np.array([1.0, 2.0]))


def test_backward_inputs_restricts_accumulation():
    a = leaf([1.0])
    b = leaf([2.0])
    y = (a * b).sum()
    y.backward(inputs=[a])
    np.testing.assert_allclose(npy(a.grad), [2.0])
    assert b.grad is None


def test_backward_with_gradient_argument():
    x = leaf([1.0, 2.0])
    y = x * x
    y.backward(gradient=numbagrad.tensor([1.0, -1.0], dtype=numbagrad.float64))
    np.testing.assert_allclose(npy(x.grad), [2.0, -4.0])


def test_autograd_backward_function():
    x = leaf([1.0, 2.0])
    y1 = (x * 2.0).sum()
    y2 = x * x
    autograd.backward([y1, y2], [None, numbagrad.ones(2, dtype=numbagrad.float64)])
    np.testing.assert_allclose(npy(x.grad), [2.0 + 2.0, 2.0 + 4.0])


def test_detach_and_detach_():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    y2 = x * 3.0
    y2.detach_()
    assert not y2.requires_grad and y2.grad_fn is None and y2.is_leaf
    # A detached value stops the gradient.
    (x * d).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 4.0])


def test_requires_grad_flags():
    x = numbagrad.tensor([1.0, 2.0])
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.requires_grad_() is x
    assert x.requires_grad
    y = x * 2.0
    assert y.requires_grad and not y.is_leaf
    z = numbagrad.tensor([1.0]) * 2.0
    assert not z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError):
        y.requires_grad_(False)  # only leaves can change the flag


# ---------------------------------------------------------------------------
# grad_fn introspection.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda x, w: x * w, "MulBackward0"),
        (lambda x, w: x + w, "AddBackward0"),
        (lambda x, w: x - w, "SubBackward0"),
        (lambda x, w: x / w, "DivBackward0"),
        (lambda x, w: -x, "NegBackward0"),
        (lambda x, w: x.exp(), "ExpBackward0"),
        (lambda x, w: x.tanh(), "TanhBackward0"),
        (lambda x, w: x.sigmoid(), "SigmoidBackward0"),
        (lambda x, w: x.sum(), "SumBackward0"),
    ],
)
def test_grad_fn_name(fn, name):
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    out = fn(x, w)
    assert out.grad_fn.name() == name
    assert f"grad_fn=<{name}>" in repr(out)


def test_next_functions():
    x = leaf([1.0, 2.0])
    c = numbagrad.tensor([3.0, 4.0], dtype=numbagrad.float64)
    y = x.exp()
    z = y * c
    nf = z.grad_fn.next_functions
    assert len(nf) == 2
    assert nf[0][0] is y.grad_fn
    assert nf[1][0] is None  # c does not require grad
    assert isinstance(nf[0][1], int)
    ((acc, _),) = y.grad_fn.next_functions
    assert acc is not None and acc.name().endswith("AccumulateGrad")
    assert acc.variable is x


def test_leaf_has_no_grad_fn_and_grad_fn_is_stable():
    x = leaf([1.0])
    assert x.grad_fn is None
    y = x * 2.0
    assert y.grad_fn is y.grad_fn


# ---------------------------------------------------------------------------
# Errors.
# ---------------------------------------------------------------------------


def test_non_scalar_backward_without_gradient_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"scalar"):
        (x * 2.0).backward()


def test_gradient_shape_mismatch_raises():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match=r"[Ss]hape"):
        y.backward(gradient=numbagrad.ones(3, dtype=numbagrad.float64))


def test_grad_outputs_shape_mismatch_raises():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match=r"[Ss]hape"):
        autograd.grad(y, x, grad_outputs=numbagrad.ones(2, 2, dtype=numbagrad.float64))


def test_backward_on_tensor_not_requiring_grad_raises():
    x = numbagrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"does not require grad"):
        (x * 2.0).sum().backward()


def test_grad_wrt_tensor_not_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    c = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64)
    y = (x * c).sum()
    with pytest.raises(RuntimeError, match=r"require grad"):
        autograd.grad(y, c)


def test_saved_output_modified_in_place_raises():
    x = leaf([0.5, -1.0, 2.0])
    a = x.sigmoid()  # sigmoid saves its output
    a.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation|version"):
        a.sum().backward()


def test_saved_input_modified_in_place_raises():
    x = leaf([0.5, -1.0])
    y = x.exp()
    z = y * y  # mul saves y (both operands)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation|version"):
        z.sum().backward()


def test_inplace_on_unsaved_tensor_is_fine():
    x = leaf([0.5, -1.0])
    y = x * 2.0  # mul by a Python scalar saves nothing of y
    y.add_(1.0)
    z = y * 3.0
    z.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [6.0, 6.0])


def test_version_error_names_versions():
    x = leaf([0.5])
    a = x.tanh()
    a.add_(1.0)
    with pytest.raises(RuntimeError, match=r"(?s)version 1.*version 0|version 0.*version 1"):
        a.sum().backward()


# ---------------------------------------------------------------------------
# gradcheck / gradgradcheck must be able to fail (the op suite relies on them).
# ---------------------------------------------------------------------------


def test_gradcheck_passes_and_detects_wrong_first_derivative():
    x = leaf([1.0, 2.0, -0.5])
    assert autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    # x * x.detach(): the analytical gradient misses one of the two terms.
    with pytest.raises(RuntimeError):
        autograd.gradcheck(lambda t: t * t.detach(), (x,))
    assert autograd.gradcheck(lambda t: t * t.detach(), (x,), raise_exception=False) is False


def test_gradgradcheck_passes_and_detects_wrong_second_derivative():
    x = leaf([1.0, 2.0, -0.5])
    assert autograd.gradgradcheck(lambda t: (t * t).sin(), (x,))
    # First derivative of t*t*d (d detached) is 2*t*d: right value at d == t, but its
    # derivative is 2*d, not the numerical 4*t.
    with pytest.raises(RuntimeError):
        autograd.gradgradcheck(lambda t: t * t * t.detach(), (x,))
    assert (
        autograd.gradgradcheck(lambda t: t * t * t.detach(), (x,), raise_exception=False) is False
    )


def test_large_gradient_sums_in_place_never_alias():
    """Above the kernel thresholds the engine sums gradients in place into buffers it owns;
    arrays sent to two edges (add's rule) or kept elsewhere must never be modified."""
    from numbagrad.kernels import PARALLEL_MIN

    n = PARALLEL_MIN + 3
    r = np.random.default_rng(3)
    xa = r.uniform(-1, 1, n)
    x = numbagrad.tensor(xa, requires_grad=True)
    w = numbagrad.tensor(r.uniform(-1, 1, n), requires_grad=True)
    u = x * 2.0
    v = u + w  # add sends one gradient array to u's node and to w
    z = v + v.sin() + u * u + x  # x gets three contributions, u two, v two
    z.sum().backward()
    va = 2 * xa + w.detach().numpy()
    gv = 1 + np.cos(va)
    np.testing.assert_allclose(w.grad.numpy(), gv, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (gv + 2 * (2 * xa)) + 1, rtol=1e-12)
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())


@pytest.mark.parametrize(
    "op",
    [
        lambda x: numbagrad.div(numbagrad.tensor([1, 2]), x),
        lambda x: x * numbagrad.tensor(-4),
        lambda x: numbagrad.tensor([1, 2]).atan2(x),
        lambda x: x / numbagrad.tensor(3, dtype=numbagrad.float64),
    ],
)
def test_gradient_has_the_input_dtype_when_numpy_would_promote(op):
    # NumPy promotes int64 array * float32 array to float64; PyTorch keeps the input's
    # float32, for autograd.grad as for .grad
    x = numbagrad.tensor([1.5, 2.0], requires_grad=True)
    out = op(x)
    (g,) = numbagrad.autograd.grad(out, x, numbagrad.ones_like(out))
    assert g.dtype == numbagrad.float32
    op(x).sum().backward()
    assert x.grad.dtype == numbagrad.float32


@pytest.mark.parametrize("order", ["upstream-first", "downstream-first"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_of_several_outputs_one_upstream_of_another(order, create_graph):
    # y feeds z and w: every output's gradient reaches x, whatever their order (the
    # upstream root used to be visited after the downstream one, which then was dropped)
    x = leaf(1.0)
    y = x * 2
    z = y.exp()
    w = z * y
    outs = [y, z, w] if order == "upstream-first" else [w, z, y]
    (g,) = autograd.grad(outs, x, create_graph=create_graph)
    e2 = np.exp(2.0)
    # d/dx [2x + e^(2x) + 2x e^(2x)] at x = 1
    np.testing.assert_allclose(npy(g), 2 + 2 * e2 + 2 * e2 + 4 * e2, rtol=1e-12)


# An in-place op through a view of a 0-d tensor rewrites its base through CopySlices; the
# base's gradient must stay 0-d (NumPy's ascontiguousarray made it 1-D: a [1] .grad).
VIEWS_OF_0D = {
    "view": lambda v: v.view(-1),
    "unsqueeze": lambda v: v.unsqueeze(0),
    "reshape": lambda v: v.reshape(1, 1),
    "flatten": lambda v: v.flatten(),
    "squeeze": lambda v: v.squeeze(),
    "view_as": lambda v: v.view_as(v),
    "select_of_view": lambda v: v.view(1, 1)[0],
}


@pytest.mark.parametrize("view", list(VIEWS_OF_0D))
@pytest.mark.parametrize("op", ["clamp_", "exp_"])
def test_inplace_through_a_view_of_a_0d_clone_keeps_the_gradient_0d(view, op):
    torch = pytest.importorskip("torch")
    results = []
    for m in (numbagrad, torch):
        x = m.tensor(0.5, dtype=m.float64, requires_grad=True)
        v = x.clone()
        w = VIEWS_OF_0D[view](v)
        w.clamp_(0.0, 0.3) if op == "clamp_" else w.exp_()
        (v * 3).sum().backward()
        # second order through the same write
        x2 = m.tensor(0.5, dtype=m.float64, requires_grad=True)
        v2 = x2.clone()
        VIEWS_OF_0D[view](v2).exp_()
        (g,) = m.autograd.grad(v2 * v2, x2, create_graph=True)
        (gg,) = m.autograd.grad(g, x2)
        results.append([(tuple(t.shape), t.item()) for t in (x.grad, g, gg)])
    assert results[0][0][0] == () and results[0][1][0] == () and results[0][2][0] == ()
    np.testing.assert_allclose([v for _, v in results[0]], [v for _, v in results[1]], rtol=1e-12)
    assert [s for s, _ in results[0]] == [s for s, _ in results[1]]


def test_one_node_over_leaves_behaves_as_the_queue(monkeypatch):
    # NOTE [Engine] point 7: backward() of one node over leaves skips the queue; every
    # observable effect is the queue's (accumulation, freeing, hooks, duplicate leaves)
    from numbagrad.autograd import engine

    taken = []
    real = engine._execute_shallow
    monkeypatch.setattr(engine, "_execute_shallow", lambda *a: (taken.append(1), real(*a))[1])
    x = numbagrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = numbagrad.tensor([4.0, 5.0, 6.0], requires_grad=True)
    (x * y).sum().backward()  # two nodes: the queue
    assert not taken
    x.sum().backward()  # one node over a leaf: the short path, accumulating
    x.sum().backward()
    assert len(taken) == 2
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 7.0, 8.0])  # y + 1 + 1
    s = x.prod()  # one node that saves its input
    s.backward(retain_graph=True)
    s.backward()  # retained once, freed now
    assert len(taken) == 4
    with pytest.raises(RuntimeError, match="second time"):
        s.backward()
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    x.grad = None
    x.sum().backward()  # a leaf hook: the queue runs it
    assert len(seen) == 1 and len(taken) == 5  # (the failed call took the path too)
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])
    w = numbagrad.tensor(2.0, requires_grad=True)
    numbagrad.stack([w, w]).sum().backward()  # the same leaf twice: the queue sums
    assert w.grad.item() == 2.0
