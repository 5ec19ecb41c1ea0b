"""Autograd edge cases, numbagrad against PyTorch (from an adversarial differential review).

Every scenario is a function of the library module ``T`` (``torch`` or ``numbagrad``) that
returns what it observed (values, gradients, dtypes, flags, names). The test runs it on both
libraries and compares the normalised results; when PyTorch raises, numbagrad must raise the
same exception type. Known differences are ``xfail(strict=True)`` so that fixing one turns
the test red until its mark is removed.

Areas: in-place ops through views, ``__setitem__``, version counters; the engine (hooks,
``retain_grad``, ``autograd.grad``, ``backward(inputs=...)``, accumulation, higher order);
broadcasting and dtype promotion of gradients; ``autograd.Function`` corner cases.
"""

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

if ng.__name__ == "torch":  # the PyTorch shim: nothing to compare
    pytest.skip("differential tests need the real numbagrad", allow_module_level=True)


# -- harness ---------------------------------------------------------------------------------
def _norm(v):
    """A library-neutral form of an observation: tensors become (dtype, shape, values)."""
    if isinstance(v, (torch.Tensor, ng.Tensor)):
        vals = v.detach().tolist()
        return ("T", str(v.dtype).split(".")[-1], tuple(v.shape), np.asarray(vals, dtype=float))
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return v


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)
        )
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _run(T, fn):
    with warnings.catch_warnings():
        # PyTorch warns about backward(create_graph=True) reference cycles: noise here
        warnings.simplefilter("ignore")
        try:
            return "ok", _norm(fn(T))
        except Exception as e:  # the exception type is the observation
            return "raise", type(e).__name__, str(e)


def _check(fn_ng, fn_torch=None):
    want = _run(torch, fn_torch or fn_ng)
    got = _run(ng, fn_ng)
    if want[0] == "raise":
        assert got[0] == "raise" and got[1] == want[1], f"torch: {want}\nnumbagrad: {got}"
    else:
        assert got[0] == "ok" and _same(got[1], want[1]), f"torch: {want}\nnumbagrad: {got}"


SCENARIOS = []


def scenario(xfail=None):
    """Register a scenario; ``xfail`` is the reason when numbagrad is known to differ."""

    def deco(fn):
        marks = [pytest.mark.xfail(strict=True, reason=f"numbagrad: {xfail}")] if xfail else []
        SCENARIOS.append(pytest.param(fn, id=fn.__name__, marks=marks))
        return fn

    return deco


def leaf(T, vals, dtype=None):
    return T.tensor(vals, dtype=dtype or T.float64, requires_grad=True)


def F(T):
    return T.autograd.Function


# == 1. in-place ops and views ===============================================================
@scenario()
def slice_imul(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x.clone()
    y[1:] *= 2
    (y * y).sum().backward()
    return [y, x.grad, y._version]


@scenario()
def write_through_select(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    y[0].mul_(x[1])
    (y**2).sum().backward()
    return [y, x.grad]


@scenario()
def write_through_t(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    yt = y.t()
    yt.add_(x)
    (y * x).sum().backward()
    return [y, yt, x.grad]


@scenario()
def write_through_view(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    y.view(4).mul_(T.arange(4.0).double())
    (y**2).sum().backward()
    return [y, x.grad]


@scenario()
def write_through_diagonal(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x.exp()
    y.diagonal().zero_()
    (y * x).sum().backward()
    return [y, x.grad]


@scenario()
def sibling_views_after_write(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    v1, v2 = y[0], y[1]
    v1.mul_(3)
    (v2 * v2 + y * y).sum().backward()
    return [y, v2, x.grad]


@scenario()
def view_of_view_write(T):
    x = leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = x * 1
    v = y[1]
    v[1:].pow_(2)
    (y * y).sum().backward()
    return [y, v, x.grad]


@scenario()
def base_write_then_view_used(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x * 1
    v = y[1:]
    y.mul_(x)
    (v**3).sum().backward()
    return [v, x.grad]


@scenario()
def view_used_after_base_exp_(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    v = y[0]
    y.exp_()
    (v * 2).backward()
    return [v, x.grad]


@scenario()
def flip_is_a_copy(T):
    x = leaf(T, [1.0, 2.0, 3.0, 4.0])
    y = x * 1
    f = y.flip(0)
    f[0] = 0.0
    (y * y).sum().backward()
    return [y, f, x.grad]


@scenario()
def setitem_value_requires_grad(T):
    x, w = leaf(T, [1.0, 2.0, 3.0]), leaf(T, [10.0, 20.0])
    y = x * 1
    y[1:] = w * w
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def setitem_bool_mask_scalar(T):
    x = leaf(T, [1.0, -2.0, 3.0, -4.0])
    y = x * 2
    y[y < 0] = 0.0
    (y * y).sum().backward()
    return [y, x.grad]


@scenario()
def setitem_bool_mask_tensor_value(T):
    x, w = leaf(T, [1.0, -2.0, 3.0, -4.0]), leaf(T, [7.0, 8.0])
    y = x * 2
    y[x < 0] = w
    (y * y).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def setitem_int_index_duplicates(T):
    # which duplicate wins is unspecified; the total gradient reaching ``w`` is not
    x, w = leaf(T, [1.0, 2.0, 3.0]), leaf(T, [5.0, 6.0])
    y = x * 1
    y[T.tensor([0, 0])] = w
    y.sum().backward()
    return [y[1:], x.grad, w.grad.sum()]


@scenario()
def setitem_int_index_permuted(T):
    x, w = leaf(T, [1.0, 2.0, 3.0]), leaf(T, [5.0, 6.0])
    y = x * 1
    y[T.tensor([2, 0])] = w * x[1]
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def setitem_2d_int_tensors(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    y[T.tensor([1, 0]), T.tensor([0, 1])] = x[0] * 5
    (y * y).sum().backward()
    return [y, x.grad]


@scenario()
def setitem_0d_value(T):
    x, s = leaf(T, [1.0, 2.0, 3.0]), leaf(T, 4.0)
    y = x * 1
    y[1] = s * s
    (y * y).sum().backward()
    return [y, x.grad, s.grad]


@scenario()
def setitem_broadcast_value(T):
    x, w = leaf(T, [[1.0, 2.0], [3.0, 4.0]]), leaf(T, [5.0, 6.0])
    y = x * 1
    y[:] = w
    (y * T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64)).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def setitem_ellipsis_none(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    y[..., None, 1] = x[:, :1] * 10
    (y * y).sum().backward()
    return [y, x.grad]


@scenario()
def setitem_into_no_grad_tensor(T):
    x, w = T.zeros(3, dtype=T.float64), leaf(T, 2.0)
    x[1] = w * 3
    (x * x).sum().backward()
    return [x, x.requires_grad, x.is_leaf, w.grad]


@scenario()
def view_of_no_grad_base_gets_grad(T):
    x, w = T.zeros(2, 2, dtype=T.float64), leaf(T, [1.0, 2.0])
    v = x[0]
    v.add_(w)
    (x * x).sum().backward()
    return [x, x.requires_grad, v.requires_grad, w.grad]


@scenario()
def copy_into_nonleaf(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
    y = x * 2
    y.copy_(w * w)
    (y * x).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def copy_broadcast_and_cast(T):
    x, w = leaf(T, [[1.0, 2.0], [3.0, 4.0]]), leaf(T, [3.0], T.float32)
    y = x * 2
    y.copy_(w)
    (y * x).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def copy_into_column_view(T):
    x, w = leaf(T, [[1.0, 2.0], [3.0, 4.0]]), leaf(T, [3.0, 4.0])
    y = x * 2
    y[:, 0].copy_(w)
    (y * y).sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def fill_nonleaf(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 2
    y.fill_(5.0)
    (y * x).sum().backward()
    return [y, x.grad]


@scenario()
def fill_with_0d_tensor_requiring_grad(T):
    x, s = leaf(T, [1.0, 2.0]), leaf(T, 3.0)
    y = x * 2
    y.fill_(s)
    (y * x).sum().backward()
    return [y, x.grad, s.grad]


@scenario()
def zero_strided_view(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x.exp()
    y[::2].zero_()
    y.sum().backward()
    return [y, x.grad]


@scenario()
def clamp_nonleaf(T):
    x = leaf(T, [-1.0, 0.5, 2.0])
    y = x * 1
    y.clamp_(0.0, 1.0)
    (y * y).sum().backward()
    return [y, x.grad]


@scenario()
def clamp_tensor_bound_requiring_grad(T):
    x, lo = leaf(T, [-1.0, 0.5, 2.0]), leaf(T, [0.0, 0.6, 0.0])
    y = x * 1
    y.clamp_(min=lo)
    (y * y).sum().backward()
    return [y, x.grad, lo.grad]


@scenario()
def masked_fill_nonleaf(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x * x
    y.masked_fill_(x > 1.5, 0.0)
    (y * x).sum().backward()
    return [y, x.grad]


@scenario()
def masked_fill_on_row_view(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x * x
    y[1].masked_fill_(T.tensor([True, False]), -1.0)
    (y * x).sum().backward()
    return [y, x.grad]


@scenario()
def inplace_mixed_dtype_operand(T):
    x, w = leaf(T, [1.0, 2.0], T.float32), leaf(T, [3.0, 4.0])
    y = x * 1
    y.mul_(w)
    y.sum().backward()
    return [y, x.grad, w.grad]


@scenario()
def inplace_chain(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    y.add_(1)
    y.mul_(2)
    y.exp_()
    y.sum().backward()
    return [y, x.grad, y._version]


@scenario()
def inplace_sigmoid_then_pow_div(T):
    x, w = leaf(T, [-1.0, 2.0]), leaf(T, [2.0, 4.0])
    y = x * 1
    y.sigmoid_()
    z = y * 1
    z.pow_(3)
    z.div_(w)
    (z * z + y).sum().backward()
    return [z, x.grad, w.grad]


@scenario()
def version_counter_shared_by_views(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x * 1
    v = y[1:]
    v.add_(1)
    y.mul_(2)
    y[0] = 5.0
    return [y._version, v._version, x._version]


@scenario()
def version_error_saved_input(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    z = y * y
    y.add_(1)
    z.sum().backward()


@scenario()
def version_error_saved_output(T):
    x = leaf(T, [1.0, 2.0])
    y = x.exp()
    y.add_(1)
    y.sum().backward()


@scenario()
def version_error_through_view(T):
    x = leaf(T, [1.0, 2.0])
    y = x.exp()
    z = y.sin()
    y[0].add_(1)
    z.sum().backward()


@scenario()
def version_error_saved_view_base_modified(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x * 1
    z = y[1:].sin()
    y.mul_(2)
    z.sum().backward()


@scenario()
def version_error_via_setitem(T):
    x = leaf(T, [1.0, 2.0])
    y = x.tanh()
    y[1:] = 0.0
    y.sum().backward()


@scenario()
def version_error_via_detached_alias(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    z = y * y
    y.detach().add_(1)
    z.sum().backward()


@scenario()
def version_ok_when_not_saved(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    z = (y + 3) + (y - 1) + y.sum() + y.expand(2, 2).sum(0) + T.cat([y, y])[:2]
    y.add_(1)
    z.sum().backward()
    return [x.grad]


@scenario()
def version_ok_mul_by_python_scalar(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    z = 3 * y
    y.zero_()
    z.sum().backward()
    return [x.grad]


@scenario()
def version_ok_mul_by_constant_tensor(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    z = y * T.tensor([2.0, 5.0], dtype=T.float64)
    y.zero_()
    z.sum().backward()
    return [x.grad]


@scenario()
def version_ok_matmul_with_constant(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    z = T.ones(3, 2, dtype=T.float64) @ y
    y.zero_()
    z.sum().backward()
    return [x.grad]


@scenario()
def inplace_on_leaf_view_raises(T):
    x = leaf(T, [1.0, 2.0])
    x[0].add_(1)


@scenario()
def setitem_on_leaf_raises(T):
    x = leaf(T, [1.0, 2.0])
    x[0] = 3.0


@scenario()
def inplace_on_leaf_under_no_grad(T):
    x = leaf(T, [1.0, 2.0])
    with T.no_grad():
        x[0] = 3.0
        x.mul_(2)
    (x * x).sum().backward()
    return [x, x.grad, x.is_leaf, x.requires_grad, x._version]


@scenario()
def inplace_into_no_grad_tensor_makes_history(T):
    x, w = T.zeros(3, dtype=T.float64), leaf(T, [1.0, 2.0, 3.0])
    x.add_(w * 2)
    (x * x).sum().backward()
    return [x.requires_grad, x.is_leaf, w.grad]


@scenario()
def inplace_on_expanded_raises(T):
    x = leaf(T, [1.0])
    y = x * 1
    y.expand(3).mul_(2)


@scenario()
def inplace_grow_by_broadcast_raises(T):
    y = T.zeros(1, dtype=T.float64)
    y.add_(T.ones(3, dtype=T.float64))


@scenario()
def inplace_float_into_int_raises(T):
    y = T.tensor([1, 2])
    y.mul_(1.5)


@scenario()
def inplace_iadd_float_into_int_raises(T):
    y = T.tensor([1, 2])
    y += 0.5


@scenario()
def inplace_f64_operand_into_f32(T):
    y = T.zeros(2, dtype=T.float32)
    y.add_(T.ones(2, dtype=T.float64))
    return [y]


@scenario()
def detached_alias_write_visible(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 2
    d = y.detach()
    d.mul_(10)
    return [y, d, y._version]


@scenario()
def detached_alias_write_then_view_backward(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 2
    v = y[0]
    y.detach()[0] = 100.0
    (v * 1).backward()
    return [v, x.grad]


@scenario()
def double_backward_through_inplace(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    y.mul_(x)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    return [g, h]


@scenario()
def double_backward_through_setitem(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x * 1
    y[1:] = x[:2] ** 2
    (g,) = T.autograd.grad((y**2).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    return [g, h]


@scenario()
def double_backward_through_view_inplace(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    y = x * 1
    y[1:].mul_(x[:2])
    (g,) = T.autograd.grad((y**2).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    return [g, h]


@scenario()
def data_inplace_is_untracked(T):
    x = leaf(T, [1.0, 2.0])
    y = x * x
    x.data.mul_(10)
    y.sum().backward()
    return [x.grad, x._version]


@scenario()
def set_data(T):
    x = leaf(T, [1.0, 2.0])
    x.data = T.tensor([3.0, 4.0], dtype=T.float64)
    (x * x).sum().backward()
    return [x.grad]


# == 2. the engine ===========================================================================
@scenario()
def retain_grad_then_inplace(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    y.retain_grad()
    y.mul_(3)
    (y * y).sum().backward()
    return [y.grad, x.grad]


@scenario()
def retain_grad_then_inplace_through_view(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    y.retain_grad()
    y[0].mul_(3)
    (y * y).sum().backward()
    return [y.grad, x.grad]


@scenario(
    xfail="retain_grad() on a view whose base is then modified in place: .grad stays "
    "None; PyTorch retains it on the view's regenerated history"
)
def retain_grad_on_view_then_base_inplace(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    v = y[1:]
    v.retain_grad()
    y.mul_(3)
    (v * v).sum().backward()
    return [v.grad, x.grad]


@scenario()
def retain_grad_accumulates(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    g1 = y.grad.clone()
    z.backward()
    return [g1, y.grad, x.grad, y.retains_grad]


@scenario()
def retain_grad_on_leaf_and_no_grad(T):
    x = leaf(T, [1.0, 2.0])
    x.retain_grad()
    (x * 2).sum().backward()
    return [x.grad, x.retains_grad, (x * 2).retains_grad]


@scenario()
def retain_grad_without_requires_grad_raises(T):
    T.tensor([1.0, 2.0]).retain_grad()


@scenario()
def hooks_leaf_and_nonleaf_modify(T):
    x = leaf(T, [1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    y = x * x
    y.register_hook(lambda g: g + 1)
    (y * 3).sum().backward()
    return [x.grad]


@scenario()
def hook_and_retain_grad_order(T):
    x = leaf(T, [1.0, 2.0])
    y = x * x
    y.register_hook(lambda g: g * 2)
    y.retain_grad()
    y.register_hook(lambda g: g + 100)
    (y * 3).sum().backward()
    return [x.grad, y.grad]


@scenario()
def hook_removed(T):
    x = leaf(T, [1.0, 2.0])
    x.register_hook(lambda g: g * 10).remove()
    (x * x).sum().backward()
    return [x.grad]


@scenario()
def hook_runs_once_on_summed_grad(T):
    calls = []
    x = leaf(T, [1.0, 2.0])
    x.register_hook(lambda g: calls.append(g.clone()))
    y = x * 2
    y.register_hook(lambda g: calls.append(g.clone()))
    (y * y + y + x.sin()).sum().backward()
    return [x.grad, calls]


@scenario()
def hook_zeroes_grad_into_existing(T):
    x = leaf(T, [1.0, 2.0])
    x.grad = T.tensor([100.0, 100.0], dtype=T.float64)
    x.register_hook(lambda g: g * 0)
    (x * x).sum().backward()
    return [x.grad]


@scenario()
def hook_before_inplace_sees_old_grad(T):
    seen = []
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    y.register_hook(lambda g: seen.append(g.clone()))
    y.mul_(3)
    (y * y).sum().backward()
    return [seen, x.grad]


@scenario()
def hook_on_view_before_base_inplace(T):
    seen = []
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    v = y[1:]
    v.register_hook(lambda g: seen.append(g.clone()))
    y.mul_(3)
    (v * v).sum().backward()
    return [seen, x.grad]


@scenario()
def hook_bad_shape_raises(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g.sum())
    y.sum().backward()


@scenario()
def hook_on_no_grad_tensor_raises(T):
    T.tensor([1.0, 2.0]).register_hook(lambda g: g)


@scenario()
def node_hook_sees_and_replaces(T):
    seen = []
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
    y = x * w

    def hook(grad_inputs, grad_outputs):
        seen.append([list(grad_inputs), list(grad_outputs)])
        return grad_inputs[0] * 0, grad_inputs[1]

    y.grad_fn.register_hook(hook)
    (y * 2).sum().backward()
    return [seen, x.grad, w.grad]


@scenario()
def node_prehook_replaces_and_removes(T):
    x = leaf(T, [1.0, 2.0])
    y = x * x
    y.grad_fn.register_prehook(lambda gout: (gout[0] * 10,))
    y.grad_fn.register_prehook(lambda gout: (gout[0] + 1,)).remove()
    y.sum().backward()
    return [x.grad]


@scenario()
def accumulate_grad_node_prehook(T):
    seen = []
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda gout: seen.append(gout[0].clone()))
    (y * 3).sum().backward()
    return [seen, x.grad]


@scenario()
def nested_grad_inside_hook(T):
    out = []
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])

    def hook(g):
        out.append(T.autograd.grad((w * w).sum(), w)[0])
        return g

    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    return [x.grad, out, w.grad]


@scenario()
def grad_wrt_nonleaf(T):
    x = leaf(T, [1.0, 2.0])
    y = x * x
    gy, gx = T.autograd.grad((y * x).sum(), [y, x])
    return [gy, gx, x.grad]


@scenario()
def grad_wrt_output_itself(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 2
    return list(T.autograd.grad(y, y, T.ones(2, dtype=T.float64)))


@scenario()
def grad_wrt_view_of_leaf(T):
    x = leaf(T, [1.0, 2.0, 3.0])
    v = x[1:]
    return list(T.autograd.grad((v * v).sum(), v))


@scenario()
def grad_unused_raises(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [1.0, 2.0])
    T.autograd.grad((x * 2).sum(), [x, w])


@scenario()
def grad_allow_unused(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [1.0, 2.0])
    return list(T.autograd.grad((x * 2).sum(), [x, w], allow_unused=True))


@scenario()
def grad_materialize_dtype_and_nonleaf(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [1.0, 2.0], T.float32)
    e = x.exp()
    gs = T.autograd.grad((x * 2).sum(), [x, w, e], materialize_grads=True)
    return [list(gs), [g.requires_grad for g in gs]]


@scenario()
def grad_materialize_with_create_graph(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [1.0, 2.0])
    gs = T.autograd.grad((x * x).sum(), [x, w], materialize_grads=True, create_graph=True)
    return [list(gs), [g.requires_grad for g in gs]]


@scenario()
def grad_materialize_with_allow_unused_false_raises(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [1.0, 2.0])
    T.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True, allow_unused=False)


@scenario()
def grad_leaves_dot_grad_alone(T):
    x = leaf(T, [1.0, 2.0])
    T.autograd.grad((x * 2).sum(), x)
    return [x.grad]


@scenario()
def grad_outputs_with_none_for_scalar(T):
    x = leaf(T, [1.0, 2.0])
    return list(T.autograd.grad([(x * 2).sum(), x * 3], x, [None, T.ones(2, dtype=T.float64)]))


@scenario()
def grad_of_constant_output_raises(T):
    x = leaf(T, [1.0, 2.0])
    T.autograd.grad(T.ones(1).sum(), x)


@scenario()
def grad_wrt_constant_input_raises(T):
    x = leaf(T, [1.0, 2.0])
    T.autograd.grad((x * 2).sum(), T.ones(2))


@scenario()
def backward_inputs_nonleaf(T):
    x = leaf(T, [1.0, 2.0])
    y = x * x
    z = (y * y).sum()
    z.backward(inputs=[y], retain_graph=True)
    g1 = y.grad.clone()
    z.backward(inputs=[y])
    return [g1, y.grad, x.grad]


@scenario()
def backward_inputs_subset_and_single_tensor(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
    z = (x * w).sum()
    z.backward(inputs=[w], retain_graph=True)
    z.backward(inputs=x)
    return [x.grad, w.grad]


@scenario()
def backward_inputs_view_of_leaf(T):
    x = leaf(T, [1.0, 2.0])
    v = x[1:]
    (v * v).sum().backward(inputs=[v])
    return [v.grad, x.grad]


@scenario()
def backward_inputs_unreached(T):
    x, w = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
    (x * 2).sum().backward(inputs=[w])
    return [x.grad, w.grad]


@scenario()
def backward_inputs_empty_raises(T):
    x = leaf(T, [1.0, 2.0])
    (x * 2).sum().backward(inputs=[])


@scenario()
def accumulation_keeps_grad_object(T):
    x = leaf(T, [1.0, 2.0])
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    return [x.grad is g, x.grad, g]


@scenario()
def accumulation_into_user_grad_in_place(T):
    x = leaf(T, [1.0, 2.0])
    ext = T.tensor([10.0, 10.0], dtype=T.float64)
    x.grad = ext
    (x * 2).sum().backward()
    return [ext, x.grad is ext]


@scenario()
def accumulation_after_zero_(T):
    x = leaf(T, [1.0, 2.0])
    (x * 2).sum().backward()
    g = x.grad
    x.grad.zero_()
    (x * 3).sum().backward()
    return [x.grad, x.grad is g]


@scenario()
def accumulation_create_graph_out_of_place(T):
    x = leaf(T, [1.0, 2.0])
    (x * 2).sum().backward()
    g = x.grad
    (x * x).sum().backward(create_graph=True)
    return [x.grad is g, x.grad, x.grad.requires_grad, g]


@scenario()
def first_grad_does_not_alias_gradient_arg(T):
    x = leaf(T, [1.0, 2.0])
    gout = T.ones(2, dtype=T.float64)
    (x * 1).backward(gout)
    x.grad.mul_(5)
    x2 = leaf(T, [1.0, 2.0])
    gout2 = T.ones(2, dtype=T.float64)
    x2.backward(gout2)
    x2.grad.add_(1)
    return [gout, x.grad, gout2, x2.grad]


@scenario()
def grad_assign_bad_shape_raises(T):
    leaf(T, [1.0, 2.0]).grad = T.ones(3, dtype=T.float64)


@scenario()
def grad_assign_bad_dtype_raises(T):
    leaf(T, [1.0, 2.0]).grad = T.ones(2, dtype=T.float32)


@scenario()
def input_used_many_times(T):
    x = leaf(T, [1.0, 2.0])
    z = x * x * x + x.sin() * x + x + (x + x + x) * x
    z.sum().backward()
    return [x.grad]


@scenario()
def create_graph_grad_has_grad_fn(T):
    x = leaf(T, [1.0, 2.0])
    (x**3).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    return [g, g.grad_fn is not None, g.is_leaf, x.grad]


@scenario()
def create_graph_second_backward_accumulates(T):
    x = leaf(T, [1.0, 2.0])
    (x**3).sum().backward(create_graph=True)
    x.grad.sum().backward()
    return [x.grad]


@scenario()
def create_graph_linear_grad(T):
    x = leaf(T, [1.0, 2.0])
    (g,) = T.autograd.grad((x * 2).sum(), x, create_graph=True)
    (g2,) = T.autograd.grad((x**2).sum(), x)
    return [g, g.requires_grad, g2.requires_grad]


@scenario()
def third_derivatives(T):
    x = leaf(T, [0.5, 1.5])
    f = (x**4).sum() + (x.tanh() * x.exp() / (1 + x * x)).sum() + x.sigmoid().sum()
    out = []
    for _ in range(3):
        (f,) = T.autograd.grad(f.sum(), x, create_graph=True)
        out.append(f)
    return out


@scenario()
def backward_twice_freed_raises(T):
    x = leaf(T, [1.0, 2.0])
    z = (x.exp() * x).sum()
    z.backward()
    z.backward()


@scenario()
def backward_gradient_errors(T):
    x = leaf(T, [[1.0, 2.0]])
    errors = []
    for grad in (None, T.ones(3, dtype=T.float64), T.ones(2, dtype=T.float64)):
        try:
            (x * 2).backward(grad)
        except RuntimeError:
            errors.append(True)
    return errors


@scenario()
def backward_gradient_other_dtype(T):
    x = leaf(T, [1.0, 2.0])
    (x * 2).backward(T.ones(2, dtype=T.float32))
    y = leaf(T, [1.0])
    (y * 2).backward()
    return [x.grad, y.grad]


@scenario()
def autograd_backward_several_roots(T):
    x = leaf(T, [1.0, 2.0])
    T.autograd.backward([(x * 2).sum(), x * x], [None, T.ones(2, dtype=T.float64)])
    return [x.grad]


@scenario()
def requires_grad_false_on_nonleaf_raises(T):
    (leaf(T, [1.0, 2.0]) * 2).requires_grad_(False)


@scenario()
def int_requires_grad_raises(T):
    T.tensor([1, 2], requires_grad=True)


@scenario()
def next_functions_of_leaf_and_constant(T):
    x = leaf(T, [1.0, 2.0])
    nf = (x * T.tensor([1.0, 2.0], dtype=T.float64)).grad_fn.next_functions
    return [len(nf), type(nf[0][0]).__name__ != "NoneType", nf[0][1], nf[1][0]]


@scenario()
def grad_fn_names_of_views(T):
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    return [
        x[0].grad_fn.name(),
        x[1:].grad_fn.name(),
        x.t().grad_fn.name(),
        x.view(4).grad_fn.name(),
        x.unsqueeze(0).grad_fn.name(),
        x.squeeze().grad_fn.name(),
        x.transpose(0, 1).grad_fn.name(),
    ]


@scenario(
    xfail="grad_fn names differ from PyTorch's: mean is DivBackward0 (MeanBackward0), "
    "2 - x SubBackward0 (RsubBackward1), x.float() CastBackward0 "
    "(ToCopyBackward0), y[1:] = v IndexPutBackward0 (CopySlices), copy_ "
    "CloneBackward0 (CopyBackwards)"
)
def grad_fn_names_misc(T):
    x = leaf(T, [1.0, 2.0])
    y = x * 1
    y[1:] = x[:1]
    z = x * 1
    z.copy_(x)
    return [
        x.mean().grad_fn.name(),
        (2 - x).grad_fn.name(),
        x.float().grad_fn.name(),
        y.grad_fn.name().split("::")[-1],
        z.grad_fn.name().split("::")[-1],
    ]


# == 3. broadcasting, 0-d tensors, dtype promotion ===========================================
@scenario()
def zero_d_and_one_elem_broadcast(T):
    s, s1 = leaf(T, 2.0), leaf(T, [2.0])
    x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    (s * x + s + x / s1 - s1).sum().backward()
    return [s.grad, s1.grad, x.grad]


@scenario()
def two_sided_broadcast_pow(T):
    a, b = leaf(T, [[1.0], [2.0]]), leaf(T, [[3.0, 4.0, 5.0]])
    (a**b).sum().backward()
    return [a.grad, b.grad]


@scenario()
def reflected_scalar_ops(T):
    x = leaf(T, [1.0, 2.0])
    (2 - x + 3 / x + 2**x + x**2.5).sum().backward()
    return [x.grad]


@scenario()
def zero_d_times_zero_d(T):
    a, b = leaf(T, 2.0, T.float32), leaf(T, 3.0)
    y = a * b
    y.backward()
    return [y, a.grad, b.grad]


@scenario()
def f32_with_python_scalars(T):
    x = leaf(T, [1.0, 2.0], T.float32)
    y = x * 2.5 + 1 + True - 2
    y.sum().backward()
    return [y, x.grad]


@scenario()
def f32_with_f64_0d(T):
    x, s = leaf(T, [1.0, 2.0], T.float32), leaf(T, 3.0)
    y = x * s
    y.sum().backward()
    return [y, x.grad, s.grad]


@scenario()
def f32_with_f64_1d(T):
    x, s = leaf(T, [1.0, 2.0], T.float32), leaf(T, [3.0, 4.0])
    y = x * s
    y.sum().backward()
    return [y, x.grad, s.grad]


@scenario()
def f32_0d_with_f64_1d(T):
    x, s = leaf(T, 2.0, T.float32), leaf(T, [3.0, 4.0])
    y = x + s
    y.sum().backward()
    return [y, x.grad, s.grad]


@scenario()
def int_tensor_with_float_tensor_grad(T):
    x = leaf(T, [1.0, 2.0], T.float32)
    y = T.tensor([1, 2]) * x + x / T.tensor(3) + T.tensor([True, False]) * x
    y.sum().backward()
    return [y, x.grad]


@scenario()
def int_tensor_with_f64_0d_grad(T):
    s = leaf(T, 2.0)
    y = T.tensor([1, 2]) * s
    y.sum().backward()
    return [y, s.grad]


@scenario()
def promotion_results(T):
    i, b = T.tensor([1, 2]), T.tensor([True, False])
    return [
        i / T.tensor([2, 2]),
        T.tensor([3]) / 2,
        T.tensor([3]) // 2,
        i * 1.5,
        i + True,
        b + 1,
        b * 2.5,
        i + T.tensor(1.5, dtype=T.float64),
        i + T.tensor(1.5, dtype=T.float32),
        b + T.tensor(2),
        T.tensor([1.0, 2.0], dtype=T.float32) + T.tensor(1),
        i < 1.5,
        T.tensor([2, 3]) ** 2,
        T.tensor([2, 3]) ** 0.5,
        2**i,
        2.0**i,
        T.tensor([-7, 7]) // 2,
        T.tensor([-7.0, 7.0]) // 2,
        T.remainder(T.tensor([-7, 7]), 3),
        T.fmod(T.tensor([-7, 7]), 3),
        T.tensor([1, 2]).sum(),
        T.tensor([True, True]).sum(),
        T.tensor([1, 0]) / T.tensor([0, 0]),
    ]


@scenario()
def item_types(T):
    return [
        type(T.tensor([1, 2]).sum().item()).__name__,
        type(T.tensor(1.5).item()).__name__,
        type(T.tensor(True).item()).__name__,
    ]


@scenario()
def where_mixed_dtypes(T):
    x, y = leaf(T, [1.0, -2.0], T.float32), leaf(T, [3.0, 4.0])
    z = T.where(x > 0, x, y) + T.where(x > 0, x, 0.0)
    z.sum().backward()
    return [z, x.grad, y.grad]


@scenario()
def pow_f32_base_f64_0d_exponent(T):
    x, e = leaf(T, [1.0, 2.0], T.float32), leaf(T, 2.0)
    y = x**e
    y.sum().backward()
    return [y, x.grad, e.grad]


@scenario()
def maximum_mixed_and_ties(T):
    a, b = leaf(T, [1.0, 5.0, 2.0], T.float32), leaf(T, [3.0, 4.0, 2.0])
    y = T.maximum(a, b) + T.minimum(a, b)
    y.sum().backward()
    return [y, a.grad, b.grad]


@scenario()
def atan2_mixed_dtypes(T):
    x, y = leaf(T, [1.0, 2.0], T.float32), leaf(T, [3.0, -1.0])
    T.atan2(x, y).sum().backward()
    return [x.grad, y.grad]


@scenario()
def reduction_ties(T):
    a = leaf(T, [[1.0, 5.0, 5.0], [2.0, 2.0, 0.0]])
    v, i = a.max(1)
    (a.amax(1).sum() + v.sum() + a.max()).backward()
    return [a.grad, i]


@scenario()
def kinks_at_zero(T):
    x = leaf(T, [0.0, -0.0, 1.0, -1.0])
    (x.relu() + x.abs() + x.clamp(0.0, 1.0)).sum().backward()
    z = leaf(T, [0.0, 0.0])
    z.norm().backward()
    return [x.grad, z.grad]


@scenario()
def pow_with_zero_base(T):
    x, e = leaf(T, [0.0, 2.0]), leaf(T, [2.0, 0.5])
    ((x**0).sum() + (x**2).sum() + (x**e).sum()).backward()
    return [x.grad, e.grad]


@scenario()
def scalar_zero_base_pow_exponent_grad(T):
    e = leaf(T, [1.0, 2.0])
    (0.0**e).sum().backward()
    return [e.grad]


@scenario()
def std_of_constant_grad(T):
    x = leaf(T, [1.0, 1.0])
    y = x.std()
    y.backward()
    return [y, x.grad]


@scenario()
def sum_over_empty_dim_tuple(T):
    x = leaf(T, [[1.0, 2.0]])
    y = x.sum(dim=())
    y.sum().backward()
    return [y, x.grad]


@scenario()
def bool_subtraction_raises(T):
    T.tensor([True]) - T.tensor([False])


@scenario()
def float_minus_python_bool_raises(T):
    T.tensor([1.0, 2.0]) - True


@scenario()
def prod_with_zeros_double_backward(T):
    x = leaf(T, [0.0, 2.0, 3.0])
    (g,) = T.autograd.grad(x.prod(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    y = leaf(T, [0.0, 0.0, 3.0])
    y.prod().backward()
    return [g, h, y.grad]


@scenario()
def matmul_shapes_grad(T):
    a, b = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
    c, d = leaf(T, [[[1.0, 2.0]], [[3.0, 4.0]]]), leaf(T, [[1.0], [2.0]])
    m = leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    ((a @ b) + (c @ d).sum() + (a @ m).sum()).backward()
    return [a.grad, b.grad, c.grad, d.grad, m.grad]


@scenario()
def matmul_mixed_dtype_raises(T):
    T.ones(2, 2, dtype=T.float32) @ T.ones(2, 2, dtype=T.float64)


@scenario()
def mean_neg_dims_keepdim(T):
    x = leaf(T, [[[1.0, 2.0], [3.0, 4.0]]])
    y = x.mean(dim=(-1, 0), keepdim=True)
    (y * y).sum().backward()
    return [y, x.grad]


@scenario()
def grad_dtype_follows_leaf(T):
    x = leaf(T, [1.0, 2.0], T.float32)
    (x.double() * 3).sum().backward()
    (g,) = T.autograd.grad((x * T.tensor([2.0], dtype=T.float64)).sum(), x)
    return [x.grad, g]


# == 4. autograd.Function ====================================================================
@scenario()
def fn_returns_view_of_input(T):
    class V(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x[1:]

        @staticmethod
        def backward(ctx, g):
            out = T.zeros(3, dtype=g.dtype)
            out[1:] = g * 10
            return out

    x = leaf(T, [1.0, 2.0, 3.0])
    y = V.apply(x)
    (y * y).sum().backward()
    return [y, x.grad, y.grad_fn.name()]


@scenario()
def fn_view_output_after_base_modified(T):
    class V(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x[:1]

        @staticmethod
        def backward(ctx, g):
            out = T.zeros(2, dtype=g.dtype)
            out[:1] = g * 10
            return out

    x = leaf(T, [1.0, 2.0])
    y = x * 1
    v = V.apply(y)
    y.mul_(5)
    v.sum().backward()
    return [v, x.grad]


@scenario(
    xfail="in-place on a view returned by a Function is allowed (its backward is "
    "honoured); PyTorch raises RuntimeError ('Output 0 of V is a view and is being "
    "modified inplace')"
)
def fn_view_output_modified_inplace(T):
    class V(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x[1:]

        @staticmethod
        def backward(ctx, g):
            out = T.zeros(3, dtype=g.dtype)
            out[1:] = g * 10
            return out

    x = leaf(T, [1.0, 2.0, 3.0])
    h = x * 1
    V.apply(h).mul_(2)
    (h * h).sum().backward()
    return [h, x.grad]


@scenario(
    xfail="in-place on an input returned as-is by a Function is allowed; PyTorch "
    "raises RuntimeError ('Output 0 of Ident is a view and is being modified inplace')"
)
def fn_input_returned_as_is_modified_inplace(T):
    class Ident(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 10

    x = leaf(T, [1.0, 2.0])
    y = Ident.apply(x * 1)
    y.mul_(2)
    y.sum().backward()
    return [y, x.grad]


@scenario()
def fn_input_returned_as_is(T):
    class Ident(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf(T, [1.0, 2.0])
    y = Ident.apply(x)
    (y * y).sum().backward()
    return [y is x, x.grad, y.grad_fn.name(), y.is_leaf]


@scenario()
def fn_same_tensor_returned_twice(T):
    class D(F(T)):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            return y, y

        @staticmethod
        def backward(ctx, g1, g2):
            return 2 * g1 + 20 * g2

    x = leaf(T, [1.0, 2.0])
    a, b = D.apply(x)
    (a * 1 + b * 3).sum().backward()
    return [a is b, x.grad]


@scenario()
def fn_input_returned_twice(T):
    class D(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x, x

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 10 * g2

    x = leaf(T, [1.0, 2.0])
    a, b = D.apply(x)
    (a * 1 + b * 3).sum().backward()
    return [a is b, a is x, x.grad]


@scenario()
def fn_non_tensor_outputs(T):
    seen = []

    class N(F(T)):
        @staticmethod
        def forward(ctx, x, k):
            return x * k, k + 1, None, "s"

        @staticmethod
        def backward(ctx, *gs):
            seen.append([g is None for g in gs])
            return gs[0] * 2, None

    x = leaf(T, [1.0, 2.0])
    y, k, n, s = N.apply(x, 3)
    y.sum().backward()
    return [y, k, n, s, x.grad, seen]


@scenario()
def fn_non_differentiable_without_materialize(T):
    seen = []

    class S(F(T)):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            idx = T.argsort(x)
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, gv, gi):
            seen.append([gv is None, gi is None])
            return gv * 2

    x = leaf(T, [3.0, 1.0])
    v, i = S.apply(x)
    v.sum().backward()
    return [seen, x.grad, i.requires_grad, v.requires_grad]


@scenario()
def fn_non_differentiable_float_output(T):
    seen = []

    class S(F(T)):
        @staticmethod
        def forward(ctx, x):
            b = x * 3
            ctx.mark_non_differentiable(b)
            return x * 2, b

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb)
            return ga

    x = leaf(T, [3.0, 1.0])
    a, b = S.apply(x)
    (a + b).sum().backward()
    return [seen, x.grad, b.requires_grad, b.grad_fn is None]


@scenario()
def fn_only_non_differentiable_output_backward_raises(T):
    class S(F(T)):
        @staticmethod
        def forward(ctx, x):
            b = x * 3
            ctx.mark_non_differentiable(b)
            return b

        @staticmethod
        def backward(ctx, gb):
            return gb

    S.apply(leaf(T, [3.0, 1.0])).sum().backward()


@scenario()
def fn_materialize_on_and_off(T):
    seen = []

    def make(materialize):
        class S(F(T)):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append([ga is None, gb])
                return ga * 2 if gb is None else ga * 2 + gb

        return S

    x = leaf(T, [3.0, 1.0])
    make(False).apply(x)[0].sum().backward()
    make(True).apply(x)[0].sum().backward()
    return [seen, x.grad]


@scenario()
def fn_saved_output_higher_order(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    x = leaf(T, [0.5, 1.0])
    f = E.apply(x)
    out = []
    for _ in range(3):
        (f,) = T.autograd.grad(f.sum(), x, create_graph=True)
        out.append(f)
    return out


@scenario()
def fn_saved_output_setup_context_double_backward(T):
    class E(F(T)):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    x = leaf(T, [0.5, 1.0])
    (g1,) = T.autograd.grad(E.apply(x).sum(), x, create_graph=True)
    (g2,) = T.autograd.grad(g1.sum(), x)
    return [g1, g2]


@scenario()
def fn_cube_third_derivative(T):
    class C(F(T)):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x**2

    x = leaf(T, [1.0, 2.0])
    f = C.apply(x)
    out = []
    for _ in range(3):
        (f,) = T.autograd.grad(f.sum(), x, create_graph=True)
        out.append(f)
    return out


@scenario()
def fn_saved_output_modified_raises(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0]

    y = E.apply(leaf(T, [0.5, 1.0]))
    y.mul_(2)
    y.sum().backward()


@scenario()
def fn_saved_input_modified_through_view_raises(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            return 2 * g * ctx.saved_tensors[0]

    h = leaf(T, [0.5, 1.0]) * 1
    y = E.apply(h)
    h[0].add_(1)
    y.sum().backward()


@scenario()
def fn_once_differentiable_double_backward_raises(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x * x

    x = leaf(T, [0.5, 1.0])
    (g,) = T.autograd.grad(E.apply(x).sum(), x, create_graph=True)
    g.sum().backward()


@scenario()
def fn_grad_modes_inside(T):
    seen = []

    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen.append(["fwd", T.is_grad_enabled(), y.requires_grad])
            return y

        @staticmethod
        def backward(ctx, g):
            seen.append(["bwd", T.is_grad_enabled()])
            return g

    class Once(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            seen.append(["once", T.is_grad_enabled()])
            return g * 2

    x = leaf(T, [0.5, 1.0])
    y = E.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward(create_graph=True)
    Once.apply(x).sum().backward(create_graph=True)
    return [seen]


@scenario()
def fn_outputs_without_graph(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    a = E.apply(T.ones(2))
    with T.no_grad():
        b = E.apply(leaf(T, [1.0]))
    c = E.apply((leaf(T, [1.0]),)[0].detach())
    return [[t.requires_grad, t.grad_fn is None] for t in (a, b, c)]


@scenario()
def fn_needs_input_grad_and_extra_grads(T):
    seen = []

    class E(F(T)):
        @staticmethod
        def forward(ctx, a, k, b):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g * 5, None, g, None  # a grad for a constant input and a trailing None

    a, b = T.ones(2, dtype=T.float64), leaf(T, [1.0, 2.0])
    E.apply(a, 2, b).sum().backward()
    return [seen, a.grad, b.grad]


@scenario()
def fn_grad_for_int_argument_raises(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    E.apply(leaf(T, [1.0, 2.0]), 2).sum().backward()


@scenario()
def fn_backward_grad_broadcast_expand_and_cast(T):
    class Keep(F(T)):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.float()

    class Sum(F(T)):
        @staticmethod
        def forward(ctx, a):
            return a.sum()

        @staticmethod
        def backward(ctx, g):
            return g  # 0-d gradient for a 2x2 input

    a = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    Keep.apply(a).sum().backward()
    Sum.apply(a).backward()
    return [a.grad]


@scenario()
def fn_backward_grad_wrong_shape_raises(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return T.ones(3, dtype=g.dtype)

    E.apply(leaf(T, [1.0, 2.0])).sum().backward()


@scenario()
def fn_mark_dirty_on_view(T):
    class M(F(T)):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = leaf(T, [1.0, 2.0, 3.0])
    b = a * 1
    v = b[1:]
    r = M.apply(v)
    (b * b).sum().backward()
    return [r is v, b, a.grad]


@scenario()
def fn_mark_dirty_leaf_raises(T):
    class M(F(T)):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    M.apply(leaf(T, [1.0, 2.0]))


@scenario()
def fn_hooks_on_output_and_node(T):
    seen = []

    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf(T, [1.0, 2.0])
    y = E.apply(x)
    y.register_hook(lambda g: g * 100)
    y.grad_fn.register_hook(lambda gi, go: seen.append([gi[0].clone(), go[0].clone()]))
    y.sum().backward()
    return [seen, x.grad]


@scenario()
def fn_retain_graph_and_freed(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            return 2 * ctx.saved_tensors[0] * g

    x = leaf(T, [1.0, 2.0])
    y = E.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    grads = x.grad.clone()
    try:
        y.backward()
    except RuntimeError:
        return [grads, "raised"]
    return [grads, "no error"]


@scenario()
def fn_grad_wrt_its_output(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = E.apply(leaf(T, [1.0, 2.0]))
    return list(T.autograd.grad((y * y).sum(), y))


@scenario()
def fn_returns_detached(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            return x.detach()

        @staticmethod
        def backward(ctx, g):
            return g * 4

    x = leaf(T, [1.0, 2.0])
    y = E.apply(x)
    (y * 1).sum().backward()
    return [x.grad, y.requires_grad]


@scenario()
def fn_saves_intermediate_and_none(T):
    class E(F(T)):
        @staticmethod
        def forward(ctx, x):
            t = x * 3
            ctx.save_for_backward(t, None)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            t, _none = ctx.saved_tensors
            return g * 6 + 0 * t

    x = leaf(T, [1.0, 2.0])
    E.apply(x).sum().backward()
    return [x.grad]


@pytest.mark.parametrize("fn", SCENARIOS)
def test_matches_torch(fn):
    _check(fn)


# == cases PyTorch refuses and numbagrad computes ============================================
# PyTorch raises on these (in-place on one output of a multi-view op; in-place ops that
# overwrite a tensor saved by themselves or by an earlier in-place op). numbagrad accepts
# them by design (a snapshot of the saved value, per-output views); check its answer
# against PyTorch computing the same thing out of place.
def _x(T):
    return leaf(T, [1.0, 2.0, 3.0, 4.0])


def _split_inplace(T):
    x = _x(T)
    y = x * 1
    a, _ = y.split(2)
    a.mul_(2)
    (y * y).sum().backward()
    return [y, x.grad]


def _chunk_inplace(T):
    x = _x(T)
    y = x * 1
    a, _ = y.chunk(2)
    a.mul_(2)
    (y * y).sum().backward()
    return [y, x.grad]


def _split_ref(T):
    x = _x(T)
    y = x * T.tensor([2.0, 2.0, 1.0, 1.0], dtype=T.float64)
    (y * y).sum().backward()
    return [y, x.grad]


def _self_mul_inplace(T):
    x = _x(T)
    y = x * 1
    y.mul_(y)
    y.sum().backward()
    return [y, x.grad]


def _overlapping_views(T):
    x = _x(T)
    y = x * 1
    v1, v2 = y[:3], y[1:]
    v1.mul_(v1)
    (v2 * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return [y, x.grad]


def _saved_output_then_inplace(T):
    x, w = leaf(T, [-1.0, 2.0]), leaf(T, [2.0, 4.0])
    y = x * 1
    y.sigmoid_()  # saves its output, which the next in-place ops overwrite
    y.pow_(3)
    y.mul_(w)
    (y * y).sum().backward()
    return [y, x.grad, w.grad]


def _saved_output_ref(T):
    x, w = leaf(T, [-1.0, 2.0]), leaf(T, [2.0, 4.0])
    y = x.sigmoid() ** 3 * w
    (y * y).sum().backward()
    return [y, x.grad, w.grad]


def _self_mul_ref(T):
    x = _x(T)
    y = x * x
    y.sum().backward()
    return [y, x.grad]


def _overlapping_ref(T):
    x = _x(T)
    y = T.cat([x[:3] * x[:3], x[3:]])
    (y[1:] * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return [y, x.grad]


@pytest.mark.parametrize(
    "fn_ng, fn_torch",
    [
        (_split_inplace, _split_ref),
        (_chunk_inplace, _split_ref),
        (_self_mul_inplace, _self_mul_ref),
        (_overlapping_views, _overlapping_ref),
        (_saved_output_then_inplace, _saved_output_ref),
    ],
    ids=["split", "chunk", "self_mul_", "overlapping_views", "saved_output_then_inplace"],
)
def test_refused_by_torch_but_correct(fn_ng, fn_torch):
    assert _run(torch, fn_ng)[0] == "raise"  # PyTorch still refuses: the premise holds
    _check(fn_ng, fn_torch)
