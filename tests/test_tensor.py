"""Tensor creation, NumPy interop, inspection, conversion and repr."""

import numpy as np
import pytest

import numbagrad

IS_TORCH = numbagrad.__name__ == "torch"
ng = numbagrad


def npy(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# Module-level facts.
# ---------------------------------------------------------------------------


def test_version_string():
    assert isinstance(ng.__version__, str)
    assert ng.__version__[0].isdigit()


def test_tensor_class():
    x = ng.zeros(2)
    assert isinstance(x, ng.Tensor)
    assert isinstance(x * 2.0, ng.Tensor)
    assert isinstance(ng.tensor(1.0), ng.Tensor)
    assert isinstance(ng.from_numpy(np.zeros(2)), ng.Tensor)


def test_dtypes_exist_and_differ():
    dts = [ng.float32, ng.float64, ng.int64, ng.bool]
    assert len(set(map(str, dts))) == 4
    assert ng.float32 != ng.float64


def test_default_dtype(restore_default_dtype):
    assert ng.get_default_dtype() == ng.float32
    assert ng.tensor([1.0]).dtype == ng.float32
    ng.set_default_dtype(ng.float64)
    assert ng.get_default_dtype() == ng.float64
    assert ng.tensor([1.0]).dtype == ng.float64
    assert ng.zeros(2).dtype == ng.float64
    assert ng.randn(2).dtype == ng.float64
    assert ng.arange(0.0, 1.0, 0.5).dtype == ng.float64
    # Integer data keeps int64 whatever the default float type.
    assert ng.tensor([1]).dtype == ng.int64


# ---------------------------------------------------------------------------
# Creation.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, dtype, shape",
    [
        ([1, 2, 3], "int64", (3,)),
        ([1.0, 2.0], "float32", (2,)),
        ([1, 2.5], "float32", (2,)),
        ([True, False], "bool", (2,)),
        (3.0, "float32", ()),
        (7, "int64", ()),
        ([[1.0, 2.0], [3.0, 4.0]], "float32", (2, 2)),
        (np.array([1.0, 2.0]), "float64", (2,)),
        (np.array([1.0, 2.0], dtype=np.float32), "float32", (2,)),
        (np.array([1, 2]), "int64", (2,)),
        (np.array(2.5), "float64", ()),
        (np.float64(2.5), "float64", ()),
        (np.float32(2.5), "float32", ()),
        (np.int64(4), "int64", ()),
        ([], "float32", (0,)),
    ],
)
def test_tensor_infers_dtype_and_shape(data, dtype, shape):
    t = ng.tensor(data)
    assert t.dtype == getattr(ng, dtype)
    assert tuple(t.shape) == shape
    np.testing.assert_array_equal(npy(t), np.asarray(data))


def test_tensor_dtype_and_requires_grad_arguments():
    t = ng.tensor([1, 2], dtype=ng.float64, requires_grad=True)
    assert t.dtype == ng.float64 and t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError):
        ng.tensor([1, 2], requires_grad=True)  # only floating tensors can require grad


def test_tensor_copies_its_input():
    a = np.array([1.0, 2.0])
    t = ng.tensor(a)
    a[0] = 100.0
    assert t[0].item() == 1.0


def test_as_tensor_shares_memory_with_matching_ndarray():
    a = np.array([1.0, 2.0])
    t = ng.as_tensor(a)
    a[1] = 5.0
    assert t[1].item() == 5.0
    u = ng.as_tensor([1, 2])
    assert u.dtype == ng.int64
    assert ng.as_tensor(t) is t
    assert ng.as_tensor(a, dtype=ng.float32).dtype == ng.float32


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    t = ng.from_numpy(a)
    assert t.dtype == ng.float64 and tuple(t.shape) == (2, 3)
    a[0, 1] = -7.0
    assert t[0, 1].item() == -7.0
    t.add_(1.0)
    np.testing.assert_array_equal(a, [[1.0, -6.0, 3.0], [4.0, 5.0, 6.0]])
    t[1, 2] = 42.0
    assert a[1, 2] == 42.0


def test_from_numpy_keeps_float32_and_noncontiguous_values():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ng.from_numpy(a)
    assert t.dtype == ng.float32
    v = ng.from_numpy(a[:, ::2])
    np.testing.assert_array_equal(npy(v), a[:, ::2])
    a[0, 2] = -1.0
    assert v[0, 1].item() == -1.0


def test_numpy_is_zero_copy():
    t = ng.zeros(3, dtype=ng.float64)
    a = t.numpy()
    a[0] = 4.0
    assert t[0].item() == 4.0
    t.add_(1.0)
    np.testing.assert_array_equal(a, [5.0, 1.0, 1.0])


def test_numpy_of_a_view_is_a_view():
    t = ng.tensor(np.arange(6.0).reshape(2, 3))
    a = t.t().numpy()
    assert a.shape == (3, 2)
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3).T)
    a[0, 1] = -1.0
    assert t[1, 0].item() == -1.0


def test_numpy_refused_for_requires_grad_in_grad_mode():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0])
    with ng.no_grad():
        np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_array_protocol():
    t = ng.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ng.float64)
    a = np.asarray(t)
    assert a.dtype == np.float64 and a.shape == (2, 2)
    np.testing.assert_array_equal(a, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(ng.tensor([1, 2])), [1, 2])
    assert np.asarray(ng.tensor([True])).dtype == np.bool_
    assert np.asarray(t, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize(
    "fn, shape, value",
    [
        (lambda: ng.zeros(2, 3), (2, 3), 0.0),
        (lambda: ng.zeros((2, 3)), (2, 3), 0.0),
        (lambda: ng.zeros([4]), (4,), 0.0),
        (lambda: ng.zeros(()), (), 0.0),
        (lambda: ng.ones(3), (3,), 1.0),
        (lambda: ng.ones((1, 2)), (1, 2), 1.0),
        (lambda: ng.full((2, 2), 1.5), (2, 2), 1.5),
        (lambda: ng.full([3], -2.0), (3,), -2.0),
    ],
)
def test_filled_creation(fn, shape, value):
    t = fn()
    assert tuple(t.shape) == shape
    assert t.dtype == ng.float32
    assert np.all(npy(t) == value)


def test_creation_keywords():
    t = ng.zeros(2, dtype=ng.float64, requires_grad=True)
    assert t.dtype == ng.float64 and t.requires_grad and t.is_leaf
    assert ng.ones(2, dtype=ng.int64).dtype == ng.int64
    assert ng.ones(2, dtype=ng.bool).dtype == ng.bool
    assert ng.full((2,), 3).dtype == ng.int64
    assert ng.full((2,), True).dtype == ng.bool
    assert ng.full((2,), 3, dtype=ng.float64).dtype == ng.float64
    assert ng.empty(2, 3).shape == (2, 3)
    assert ng.empty((4,), dtype=ng.int64).dtype == ng.int64
    assert ng.zeros(2, device="cpu").device.type == "cpu"


def test_arange():
    t = ng.arange(5)
    assert t.dtype == ng.int64
    np.testing.assert_array_equal(npy(t), np.arange(5))
    np.testing.assert_array_equal(npy(ng.arange(2, 8, 2)), [2, 4, 6])
    f = ng.arange(0, 1, 0.25)
    assert f.dtype == ng.float32
    np.testing.assert_allclose(npy(f), [0.0, 0.25, 0.5, 0.75])
    assert ng.arange(1.0, 4.0).dtype == ng.float32
    np.testing.assert_array_equal(npy(ng.arange(5, 0, -2)), [5, 3, 1])
    assert ng.arange(3, dtype=ng.float64).dtype == ng.float64


def test_linspace():
    t = ng.linspace(0, 1, 5)
    assert t.dtype == ng.float32
    np.testing.assert_allclose(npy(t), np.linspace(0, 1, 5), rtol=1e-6)
    t = ng.linspace(-1.0, 1.0, steps=3, dtype=ng.float64)
    np.testing.assert_array_equal(npy(t), [-1.0, 0.0, 1.0])
    assert tuple(ng.linspace(0, 1, 1).shape) == (1,)


def test_eye():
    np.testing.assert_array_equal(npy(ng.eye(3)), np.eye(3))
    np.testing.assert_array_equal(npy(ng.eye(2, 3)), np.eye(2, 3))
    assert ng.eye(2).dtype == ng.float32
    assert ng.eye(2, dtype=ng.float64).dtype == ng.float64


@pytest.mark.parametrize(
    "fn",
    [
        lambda: ng.randn(1000),
        lambda: ng.rand(1000),
        lambda: ng.randint(0, 10, (1000,)),
        lambda: ng.randn(10, 100),
    ],
)
def test_manual_seed_reproducible(fn):
    ng.manual_seed(123)
    a = npy(fn()).copy()
    b = npy(fn()).copy()
    ng.manual_seed(123)
    c = npy(fn()).copy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b), "successive draws must differ"
    ng.manual_seed(124)
    assert not np.array_equal(npy(fn()), a), "different seeds must differ"


def test_random_distributions():
    ng.manual_seed(0)
    n = ng.randn(20000, dtype=ng.float64)
    assert n.dtype == ng.float64
    assert abs(npy(n).mean()) < 0.05 and abs(npy(n).std() - 1.0) < 0.05
    u = npy(ng.rand(20000))
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.02
    assert ng.rand(2, 3).shape == (2, 3) and ng.randn((2, 3)).shape == (2, 3)
    r = ng.randint(3, 7, (5000,))
    assert r.dtype == ng.int64
    assert set(np.unique(npy(r))) == {3, 4, 5, 6}
    r = ng.randint(5, size=(10,))
    assert npy(r).max() < 5 and npy(r).min() >= 0
    assert ng.randn(3, requires_grad=True).requires_grad


def test_like_functions():
    base = ng.ones(2, 3, dtype=ng.float64)
    for fn, value in [
        (ng.zeros_like, 0.0),
        (ng.ones_like, 1.0),
        (lambda t: ng.full_like(t, 2.5), 2.5),
    ]:
        t = fn(base)
        assert tuple(t.shape) == (2, 3) and t.dtype == ng.float64
        assert np.all(npy(t) == value)
    assert tuple(ng.empty_like(base).shape) == (2, 3)
    assert ng.zeros_like(base, dtype=ng.int64).dtype == ng.int64
    ng.manual_seed(5)
    r1 = npy(ng.randn_like(base)).copy()
    ng.manual_seed(5)
    np.testing.assert_array_equal(npy(ng.randn_like(base)), r1)
    assert ng.randn_like(base).dtype == ng.float64
    u = npy(ng.rand_like(base))
    assert u.shape == (2, 3) and u.min() >= 0.0 and u.max() < 1.0
    # *_like of a tensor requiring grad does not require grad.
    x = ng.ones(2, requires_grad=True)
    assert not ng.zeros_like(x).requires_grad


# ---------------------------------------------------------------------------
# Inspection.
# ---------------------------------------------------------------------------


def test_inspection():
    t = ng.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4)
    assert t.size() == (2, 3, 4)
    assert t.size(1) == 3 and t.size(-1) == 4
    assert t.shape[0] == 2
    assert t.dim() == 3 and t.ndim == 3
    assert t.numel() == 24
    assert t.dtype == ng.float32
    assert str(t.device) == "cpu" and t.device.type == "cpu"
    assert ng.tensor(1.0).dim() == 0 and ng.tensor(1.0).numel() == 1
    assert len(ng.zeros(5, 2)) == 5


def test_item_and_tolist():
    assert ng.tensor(2.5).item() == 2.5
    assert isinstance(ng.tensor(2.5).item(), float)
    assert isinstance(ng.tensor(3).item(), int)
    assert isinstance(ng.tensor(True).item(), bool)
    assert ng.tensor([[4.0]]).item() == 4.0
    with pytest.raises((RuntimeError, ValueError)):
        ng.tensor([1.0, 2.0]).item()
    assert ng.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    lst = ng.tensor([0.5, 1.5]).tolist()
    assert lst == [0.5, 1.5] and all(isinstance(v, float) for v in lst)
    assert ng.tensor(7).tolist() == 7
    x = ng.tensor([1.0], requires_grad=True)
    assert x.item() == 1.0 and x.tolist() == [1.0]  # allowed in grad mode, as in PyTorch


def test_builtin_conversions():
    assert float(ng.tensor(2.5)) == 2.5
    assert int(ng.tensor(3)) == 3
    assert bool(ng.tensor([1.0])) is True
    assert bool(ng.tensor(0.0)) is False
    with pytest.raises(RuntimeError):
        bool(ng.tensor([1.0, 2.0]))


def test_is_contiguous_memory_formats():
    x = ng.zeros(2, 3, 4, 5)
    nhwc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert x.is_contiguous() and not nhwc.is_contiguous()
    assert nhwc.is_contiguous(memory_format=ng.channels_last)
    assert not x.is_contiguous(memory_format=ng.channels_last)
    assert ng.zeros(2, 1, 1, 1).is_contiguous(memory_format=ng.channels_last)  # (size-1 dims)
    assert not ng.zeros(2, 3).is_contiguous(memory_format=ng.channels_last)
    ndhwc = ng.zeros(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3)
    assert ndhwc.is_contiguous(memory_format=ng.channels_last_3d)
    assert not x.transpose(1, 2).is_contiguous(memory_format=ng.preserve_format)
    with pytest.raises(TypeError, match="memory_format"):
        x.is_contiguous(memory_format="channels_last")


def test_contiguous_and_clone():
    t = ng.tensor(np.arange(6.0).reshape(2, 3))
    tt = t.t()
    assert not tt.is_contiguous()
    c = tt.contiguous()
    assert c.is_contiguous()
    np.testing.assert_array_equal(npy(c), np.arange(6.0).reshape(2, 3).T)
    assert t.contiguous() is t
    k = t.clone()
    k.add_(1.0)
    np.testing.assert_array_equal(npy(t), np.arange(6.0).reshape(2, 3))
    # clone is differentiable
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    assert y.requires_grad and not y.is_leaf
    (y * 3.0).sum().backward()
    np.testing.assert_array_equal(npy(x.grad), [3.0, 3.0])


def test_dtype_conversions():
    t = ng.tensor([1.7, -2.7])
    assert t.to(ng.float64).dtype == ng.float64
    assert t.double().dtype == ng.float64
    assert t.double().float().dtype == ng.float32
    long = t.long()
    assert long.dtype == ng.int64
    np.testing.assert_array_equal(npy(long), [1, -2])  # truncation toward zero
    assert t.to(ng.float32) is t  # no-op conversion returns self
    assert t.to("cpu") is t
    assert ng.tensor([0, 2]).to(ng.bool).tolist() == [False, True]
    np.testing.assert_allclose(npy(ng.tensor([1, 2]).float()), [1.0, 2.0])


def test_dtype_conversion_is_differentiable():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.dtype == ng.float64 and y.requires_grad
    (y * y).sum().backward()
    assert x.grad.dtype == ng.float32
    np.testing.assert_allclose(npy(x.grad), [2.0, 4.0])


def test_transpose_property():
    t = ng.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(npy(t.T), np.arange(6.0).reshape(2, 3).T)


def test_allclose_and_assert_close():
    a = ng.tensor([1.0, 2.0])
    assert ng.allclose(a, a + 1e-9)
    assert not ng.allclose(a, a + 1e-2)
    ng.testing.assert_close(a, a + 1e-7)
    with pytest.raises(AssertionError):
        ng.testing.assert_close(a, a + 1e-2)
    with pytest.raises(AssertionError):
        ng.testing.assert_close(a, a.double())  # dtypes differ


# ---------------------------------------------------------------------------
# repr.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: ng.tensor([1.0, 2.0]), "tensor([1., 2.])"),
        (lambda: ng.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
        (lambda: ng.tensor(3.0), "tensor(3.)"),
        (lambda: ng.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
        (lambda: ng.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
        (
            lambda: ng.tensor([[1.0, 10.0], [100.0, -2.0]]),
            "tensor([[  1.,  10.],\n        [100.,  -2.]])",
        ),
        (lambda: ng.tensor([True, False]), "tensor([ True, False])"),
        (lambda: ng.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
        (
            lambda: ng.tensor([1.0, 2.0], requires_grad=True) * 2,
            "tensor([2., 4.], grad_fn=<MulBackward0>)",
        ),
    ],
    ids=["float", "decimals", "0d", "int", "2d", "aligned", "bool", "requires_grad", "grad_fn"],
)
def test_repr(make, expected):
    assert repr(make()) == expected


def test_repr_shows_non_default_dtype():
    r = repr(ng.tensor([1.0, 2.0], dtype=ng.float64))
    assert r == f"tensor([1., 2.], dtype={ng.float64})"
    assert str(ng.float64).endswith("float64")


def test_new_tensor_methods_follow_torch():
    """``new_zeros``/``new_ones``/``new_empty``/``new_full``/``new_tensor``: this tensor's
    dtype and device unless given, ``requires_grad`` as a keyword, as PyTorch."""
    torch = pytest.importorskip("torch")
    for m in (torch, numbagrad):
        x = m.ones(2, dtype=m.float32)
        got = [
            x.new_zeros(3),
            x.new_ones((2, 2), dtype=m.float64),
            x.new_empty(2, 3),
            x.new_full((2,), 7),
            x.new_tensor([1, 2]),
            x.new_zeros(2, requires_grad=True),
            m.ones(2, dtype=m.int64).new_full((2,), 2.5),
        ]
        summary = [(str(t.dtype).split(".")[-1], tuple(t.shape), t.requires_grad) for t in got]
        if m is torch:
            want = summary
        else:
            assert summary == want
            assert got[3].tolist() == [7.0, 7.0] and got[6].tolist() == [2, 2]


def test_op_results_are_made_as_tensor_make_makes_them():
    # Primitive._eval inlines Tensor._make for the result of every op: the same fields
    import numpy as np

    import numbagrad as ng
    from numbagrad._tensor import Tensor

    out = ng.ones(3) + 1
    ref = Tensor._make(np.ones(3))
    for name in ("_requires_grad", "_grad_fn", "_view_of"):
        assert getattr(out, name) == getattr(ref, name)
    assert out._storage == [out._data, 0] and type(out) is Tensor and out.__dict__ == {}
