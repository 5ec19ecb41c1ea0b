"""Clear exceptions for shape, index, dim and dtype errors in ops.

Exception types follow PyTorch, except where the issue asks for more: every out-of-range
index raises ``IndexError`` (PyTorch raises ``RuntimeError`` from some index kernels), and
index kernels validate before writing anything.
"""

import numpy as np
import pytest

import numbagrad as ng

IS_TORCH = ng.__name__ == "torch"

# PyTorch's gather/take_along_dim/scatter_add raise RuntimeError for a bad index; numbagrad
# must raise IndexError. Under the torch shim accept what torch does.
INDEX_ERROR = (IndexError, RuntimeError) if IS_TORCH else IndexError


def f64(*shape):
    return ng.zeros(*shape, dtype=ng.float64)


def idx(values):
    return ng.tensor(values, dtype=ng.int64)


# ---------------------------------------------------------------------------
# Shapes.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: ng.sub(a, b),
        lambda a, b: a / b,
        lambda a, b: ng.maximum(a, b),
        lambda a, b: ng.where(a > 0, a, b),
        lambda a, b: a == b,
    ],
    ids=["add", "mul", "sub", "div", "maximum", "where", "eq"],
)
def test_broadcast_mismatch_names_both_shapes(op):
    with pytest.raises(RuntimeError) as info:
        op(f64(2, 3), f64(4))
    msg = str(info.value)
    if IS_TORCH:
        # PyTorch names the clashing sizes only.
        assert "3" in msg and "4" in msg
    else:
        assert any(s in msg for s in ("(2, 3)", "[2, 3]", "2x3")), msg
        assert any(s in msg for s in ("(4,)", "[4]", "(4)")), msg


def test_inplace_broadcast_cannot_grow_self():
    with pytest.raises(RuntimeError):
        f64(3).add_(f64(2, 3))


@pytest.mark.parametrize(
    "a, b", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (2,)), ((2, 2, 3), (2, 4, 5))]
)
def test_matmul_mismatch_names_shapes(a, b):
    with pytest.raises(RuntimeError) as info:
        f64(*a) @ f64(*b)
    msg = str(info.value)
    # Both inner sizes must be named (PyTorch: "(2x3 and 4x5)").
    assert str(a[-1]) in msg and str(b[-1] if len(b) == 1 else b[-2]) in msg, msg


@pytest.mark.parametrize(
    "call",
    [
        lambda: ng.mm(f64(2, 3), f64(4, 5)),
        lambda: ng.mm(f64(3), f64(3, 2)),
        lambda: ng.bmm(f64(2, 2, 3), f64(3, 3, 2)),
        lambda: ng.dot(f64(3), f64(4)),
        lambda: ng.einsum("ij,jk->ik", f64(2, 3), f64(4, 5)),
        lambda: ng.cat([f64(2, 3), f64(2, 4)], dim=0),
        lambda: ng.stack([f64(2), f64(3)]),
        lambda: f64(2, 3).expand(4, 3),
        lambda: f64(6).reshape(4),
    ],
)
def test_other_shape_errors(call):
    with pytest.raises(RuntimeError):
        call()


def test_view_incompatible_sizes_and_strides():
    with pytest.raises(RuntimeError, match=r"invalid|size"):
        f64(6).view(4)
    with pytest.raises(RuntimeError, match=r"view|stride|contiguous|reshape"):
        f64(2, 3).t().view(6)
    # reshape handles the same case by copying.
    assert tuple(f64(2, 3).t().reshape(6).shape) == (6,)


def test_backward_gradient_shape_error_names_shapes():
    x = ng.ones(2, dtype=ng.float64, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        (x * 2.0).backward(gradient=f64(3))
    assert "2" in str(info.value) and "3" in str(info.value)


# ---------------------------------------------------------------------------
# Indices out of range: IndexError, and nothing read or written out of bounds.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x[5],
        lambda x: x[-6],
        lambda x: x[idx([0, 5])],
        lambda x: x[idx([-6])],
        lambda x: x.reshape(1, 5)[0, 7],
        lambda x: x.reshape(1, 5)[:, idx([1, 9])],
    ],
    ids=["int", "neg_int", "int_tensor", "neg_int_tensor", "int_2d", "int_tensor_2d"],
)
def test_getitem_out_of_range(call):
    with pytest.raises(IndexError):
        call(f64(5))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ng.index_select(x, 0, idx([0, 3])),
        lambda x: ng.index_select(x, 0, idx([-1])),
        lambda x: ng.gather(x, 0, idx([1, 3])),
        lambda x: ng.gather(x.reshape(1, 3), 1, idx([[-1]])),
        # torch 2.13 silently reads out of bounds for this one (returns 0)
        pytest.param(
            lambda x: ng.take_along_dim(x, idx([4]), 0),
            marks=pytest.mark.skipif(IS_TORCH, reason="PyTorch 2.13 does not check"),
        ),
        lambda x: ng.take_along_dim(x, idx([3])),
        lambda x: x.scatter_add(0, idx([0, 3]), f64(2)),
        lambda x: x.scatter_add(0, idx([-1]), f64(1)),
    ],
    ids=[
        "index_select",
        "index_select_neg",
        "gather",
        "gather_neg",
        "take_along_dim",
        "take_along_dim_flat",
        "scatter_add",
        "scatter_add_neg",
    ],
)
def test_index_ops_out_of_range(call):
    with pytest.raises(INDEX_ERROR):
        call(f64(3))


@pytest.mark.skipif(IS_TORCH, reason="PyTorch writes the valid indices before raising")
@pytest.mark.parametrize(
    "key",
    [
        lambda: idx([0, 5]),
        lambda: (idx([0, 1]), idx([0, 9])),
    ],
    ids=["1d", "paired"],
)
def test_setitem_out_of_range_writes_nothing(key):
    x = ng.zeros(3, 3, dtype=ng.float64) if isinstance(key(), tuple) else f64(3)
    before = x.numpy().copy()
    with pytest.raises(IndexError):
        x[key()] = 1.0
    np.testing.assert_array_equal(x.numpy(), before)


def test_setitem_out_of_range_int():
    x = f64(3)
    with pytest.raises(IndexError):
        x[3] = 1.0


# ---------------------------------------------------------------------------
# Bad dims: IndexError as in PyTorch.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.sum(dim=2),
        lambda x: x.sum(dim=(0, -3)),
        lambda x: x.mean(-3),
        lambda x: x.amax(dim=5),
        lambda x: x.max(dim=2),
        lambda x: x.argmax(dim=2),
        lambda x: x.softmax(2),
        lambda x: x.log_softmax(-3),
        lambda x: x.cumsum(2),
        lambda x: x.logsumexp(2),
        lambda x: x.transpose(0, 2),
        lambda x: x.unsqueeze(3),
        lambda x: x.squeeze(2),
        lambda x: x.flatten(0, 2),
        lambda x: x.movedim(0, 2),
        lambda x: x.permute(0, 2),
        lambda x: ng.cat([x, x], dim=2),
        lambda x: ng.stack([x, x], dim=3),
        lambda x: x.index_select(2, idx([0])),
        lambda x: x.flip(2),
        lambda x: x.narrow(2, 0, 1),
        lambda x: x.sort(dim=2),
        lambda x: x.var(dim=2),
    ],
    ids=[
        "sum",
        "sum_tuple",
        "mean",
        "amax",
        "max",
        "argmax",
        "softmax",
        "log_softmax",
        "cumsum",
        "logsumexp",
        "transpose",
        "unsqueeze",
        "squeeze",
        "flatten",
        "movedim",
        "permute",
        "cat",
        "stack",
        "index_select",
        "flip",
        "narrow",
        "sort",
        "var",
    ],
)
def test_bad_dim(call):
    with pytest.raises(IndexError, match=r"[Dd]im"):
        call(f64(2, 3))


def test_duplicate_dims_rejected():
    with pytest.raises(RuntimeError):
        f64(2, 3).permute(0, 0)
    with pytest.raises(RuntimeError):
        f64(2, 3).sum(dim=(1, -1))


# ---------------------------------------------------------------------------
# Index dtypes.
# ---------------------------------------------------------------------------


def test_float_index_tensor_rejected_by_getitem():
    with pytest.raises(IndexError, match=r"long|int|bool|dtype"):
        f64(3)[ng.tensor([0.0, 1.0])]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, i: ng.gather(x, 0, i),
        lambda x, i: ng.index_select(x, 0, i),
        lambda x, i: x.scatter_add(0, i, f64(2)),
        lambda x, i: ng.take_along_dim(x, i, 0),
    ],
    ids=["gather", "index_select", "scatter_add", "take_along_dim"],
)
def test_float_index_tensor_rejected(call):
    with pytest.raises((RuntimeError, IndexError, TypeError), match=r"int|long|dtype"):
        call(f64(3), ng.tensor([0.0, 1.0]))


def test_bool_mask_shape_mismatch():
    with pytest.raises(IndexError):
        f64(3)[ng.tensor([True, False])]


def test_requires_grad_on_integer_tensor_rejected():
    with pytest.raises(RuntimeError, match=r"[Ff]loat|complex"):
        ng.tensor([1, 2]).requires_grad_()


def test_op_error_message_names_the_op():
    with pytest.raises(RuntimeError) as info:
        ng.mm(f64(2, 3), f64(4, 5))
    msg = str(info.value).lower()
    assert "mm" in msg or "mat1" in msg or "matmul" in msg


def test_out_of_range_index_is_both_index_and_runtime_error():
    x = ng.tensor([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="out of bounds"):
        ng.gather(x, 0, ng.tensor([3]))
    with pytest.raises(RuntimeError, match="out of bounds"):  # what PyTorch scripts catch
        ng.index_select(x, 0, ng.tensor([-1]))


@pytest.mark.parametrize("op", ["cat", "stack"])
def test_cat_and_stack_take_sequences_of_tensors(op):
    f = getattr(ng, op)
    with pytest.raises(TypeError, match="element 0 in argument 0, but got float"):
        f([1.0, 2.0])
    with pytest.raises(TypeError, match="element 1 in argument 0, but got list"):
        f([ng.zeros(2), [1.0, 2.0]])
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        f(ng.zeros(2, 3))
    out = f((ng.zeros(2), ng.ones(2)))
    assert tuple(out.shape) == {"cat": (4,), "stack": (2, 2)}[op]
