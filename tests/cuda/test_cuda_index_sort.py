"""Indexing, gather/scatter and sorting on CUDA against the CPU result (values, dtypes,
shapes and gradients through ``backward``): advanced indexing (index tensors, bool masks),
``index_select``, ``take_along_dim``, ``gather``, ``scatter``/``scatter_add``/``index_add``,
setitem with index tensors, ``sort``/``argsort``/``topk``."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver

RNG = np.random.default_rng(1)


def _pair(shape, low=-2.0, high=2.0, dtype=np.float64):
    a = RNG.uniform(low, high, shape).astype(dtype)
    c = numbagrad.tensor(a, requires_grad=a.dtype.kind == "f")
    g = numbagrad.tensor(a, device="cuda", requires_grad=a.dtype.kind == "f")
    return c, g


def _check(fn, *specs, rtol=1e-6, atol=1e-8):
    """``fn(*tensors, device)`` on CPU and CUDA operands (``device`` for the index tensors
    ``fn`` makes): the same values, dtype and shape, and the same gradients of
    ``sum(fn(...) * w)`` for a fixed random ``w``."""
    pairs = [_pair(*s) if s and isinstance(s[0], tuple) else _pair(s) for s in specs]
    out_c = fn(*[p[0] for p in pairs], "cpu")
    out_g = fn(*[p[1] for p in pairs], "cuda")
    assert out_g.is_cuda and out_g.shape == out_c.shape and out_g.dtype == out_c.dtype
    np.testing.assert_allclose(
        out_g.cpu().detach().numpy(), out_c.detach().numpy(), rtol=rtol, atol=atol
    )
    if not out_c.requires_grad:
        return
    w = RNG.standard_normal(out_c.shape)
    (out_c * numbagrad.tensor(w)).sum().backward()
    (out_g * numbagrad.tensor(w, device="cuda")).sum().backward()
    for c, g in pairs:
        if c.grad is None:
            assert g.grad is None
            continue
        assert g.grad.is_cuda
        np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol)


def _i(values, device):
    return numbagrad.tensor(values, dtype=numbagrad.int64, device=device)


# -- advanced indexing -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    [
        lambda d: (_i([2, 0, -1, 2], d),),  # repeats and a negative index
        lambda d: (slice(None), _i([3, 1], d)),
        lambda d: (_i([[0, 1], [2, 2]], d), _i([1, -2], d)),  # broadcast index tensors
        lambda d: (Ellipsis, _i([0, 0, 2], d)),
        lambda d: (1, _i([0, 3], d)),
        lambda d: (_i([], d),),  # empty
    ],
)
def test_index_tensor(key):
    _check(lambda x, d: x[key(d)], (3, 4))


def test_index_noncontiguous_and_separated():
    _check(lambda x, d: x.t()[_i([3, 0], d)], (3, 4))
    _check(lambda x, d: x[:, ::2][_i([1, 1], d)], (2, 5))
    _check(lambda x, d: x.flip(0)[_i([2, -1], d)], (3, 4))  # negative strides
    # index tensors separated by a slice: their dims come first (NumPy's and PyTorch's rule)
    _check(lambda x, d: x[_i([0, 1], d), :, _i([2, 0], d)], (2, 3, 4))
    _check(lambda x, d: x[None, _i([1, 0], d), 1:], (2, 3))


def test_index_bool_masks():
    _check(lambda x, d: x[x.detach() > 0], (3, 4))
    _check(lambda x, d: x[:, numbagrad.tensor([True, False, True], device=d)], (2, 3))
    _check(lambda x, d: x[numbagrad.zeros(2, 3, dtype=numbagrad.bool, device=d)], (2, 3))
    x = numbagrad.zeros(2, 3, device="cuda")
    with pytest.raises(IndexError, match="shape of the mask"):
        x[numbagrad.tensor([True, False, True], device="cuda")]


def test_index_with_cpu_index_and_ints():
    _check(lambda x, d: x[numbagrad.tensor([1, 0])], (2, 3))  # a CPU index, as PyTorch allows
    _check(lambda x, d: x[[0, 2]], (3,))
    x = numbagrad.tensor([[1, 2], [3, 4]], device="cuda")
    assert x[_i([1], "cuda")].tolist() == [[3, 4]] and x[_i([1], "cuda")].dtype == x.dtype


def test_index_out_of_range():
    x = numbagrad.zeros(3, 4, device="cuda")
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[_i([0, 3], "cuda")]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, _i([-5], "cuda")]


def test_index_backward_stays_on_device():
    x = numbagrad.tensor(RNG.standard_normal((4, 3)), device="cuda", requires_grad=True)
    loss = (x[_i([0, 2, 2, -1], "cuda")] * 2).sum() + numbagrad.gather(
        x, 1, _i([[0], [2], [1], [1]], "cuda")
    ).sum()
    before = dict(_driver.COPIES)
    loss.backward()
    assert _driver.COPIES == before  # atomic scatter-adds on the device, no index check copy
    want = np.zeros((4, 3))
    np.add.at(want, [0, 2, 2, -1], 2.0)
    np.add.at(want, (np.arange(4), [0, 2, 1, 1]), 1.0)
    np.testing.assert_allclose(x.grad.cpu().numpy(), want)


def test_index_larger_than_a_block():
    # 300 x 7 gathered rows and repeated indices: many blocks' worth of elements and atomics
    idx = RNG.integers(-50, 50, 300)
    _check(lambda x, d: x[_i(idx, d)], (50, 7))


# -- index_select, take_along_dim, gather ------------------------------------------------------
def test_index_select():
    _check(lambda x, d: numbagrad.index_select(x, 0, _i([2, 0, 2], d)), (3, 4))
    _check(lambda x, d: x.t().index_select(-1, _i([1], d)), (3, 4))
    _check(lambda x, d: numbagrad.index_select(x, 0, _i(0, d)), ())  # 0-d input
    with pytest.raises(IndexError, match="index_select"):
        numbagrad.index_select(numbagrad.zeros(3, device="cuda"), 0, _i([3], "cuda"))


def test_take_along_dim():
    _check(lambda x, d: numbagrad.take_along_dim(x, _i([[0, 2], [1, 1]], d), 1), (2, 3))
    _check(lambda x, d: numbagrad.take_along_dim(x, _i([5, 0], d)), (2, 3))  # flattened
    _check(lambda x, d: numbagrad.take_along_dim(x, _i([[1], [0]], d), -1), (2, 3))  # broadcast


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    idx = [[0, 1], [1, 0], [2, 2]] if dim == 0 else [[0, 3], [1, 1], [3, 0]]
    idx = np.array(idx) % (3 if dim == 0 else 4)
    _check(lambda x, d: numbagrad.gather(x, dim, _i(idx, d)), (3, 4))


def test_gather_noncontiguous_empty_and_errors():
    _check(lambda x, d: numbagrad.gather(x.t(), 0, _i([[0, 1], [1, 1]], d)), (2, 3))
    _check(lambda x, d: numbagrad.gather(x, 1, _i(np.zeros((2, 0), np.int64), d)), (2, 3))
    _check(lambda x, d: numbagrad.gather(x, 0, _i(1, d)), (3,))  # 0-d index
    with pytest.raises(IndexError, match="gather"):
        numbagrad.gather(numbagrad.zeros(2, 3, device="cuda"), 1, _i([[3], [0]], "cuda"))
    with pytest.raises(IndexError, match="Dimension out of range"):
        numbagrad.gather(numbagrad.zeros(2, 3, device="cuda"), 2, _i([[0], [0]], "cuda"))


# -- scatter, scatter_add, index_add, setitem --------------------------------------------------
def test_scatter_add_repeated_indices():
    idx = [[0, 1, 0], [2, 2, 2]]
    _check(lambda x, s, d: numbagrad.scatter_add(x, 1, _i(idx, d), s), (2, 4), (2, 3))
    _check(lambda x, s, d: x.scatter_add(0, _i([[1, 1], [1, 1]], d), s), (3, 2), (2, 2))
    _check(lambda x, s, d: x.scatter_add(-1, _i([[0], [0]], d), s), (2, 3), (2, 4))  # src larger
    x = numbagrad.zeros(3, device="cuda", dtype=numbagrad.float32)
    out = x.scatter_add(0, _i([0, 0, 2, 0], "cuda"), numbagrad.ones(4, device="cuda"))
    assert out.dtype == numbagrad.float32 and out.tolist() == [3.0, 0.0, 1.0]
    with pytest.raises(IndexError, match="scatter_add"):
        x.scatter_add(0, _i([3], "cuda"), numbagrad.ones(1, device="cuda"))


def test_scatter():
    _check(lambda x, s, d: numbagrad.scatter(x, 1, _i([[2, 0], [1, 3]], d), s), (2, 4), (2, 2))
    _check(lambda x, d: x.scatter(0, _i([[1, 0, 1]], d), 7.5), (2, 3))
    _check(lambda x, s, d: x.scatter(-1, _i([[0], [1]], d), s, reduce="add"), (2, 3), (2, 1))


def test_index_add():
    _check(lambda x, s, d: numbagrad.index_add(x, 0, _i([0, 2, 0], d), s, alpha=2), (3, 2), (3, 2))
    _check(lambda x, s, d: x.index_add(-1, _i([1, 1], d), s), (2, 3), (2, 2))
    with pytest.raises(IndexError, match="index_add"):
        numbagrad.zeros(2, device="cuda").index_add(
            0, _i([2], "cuda"), numbagrad.ones(1, device="cuda")
        )


def _setitem(x, key, value):
    y = x.clone()
    y[key] = value
    return y


def test_setitem_with_index_tensors():
    _check(lambda x, v, d: _setitem(x, _i([2, 0], d), v), (3, 4), (2, 4))
    _check(lambda x, v, d: _setitem(x, (slice(None), _i([1, -1], d)), v), (3, 4), (2,))
    _check(lambda x, d: _setitem(x, x.detach() < 0, 0.0), (3, 4))
    _check(lambda x, v, d: _setitem(x, (_i([0, 1], d), _i([2, 2], d)), v), (2, 3), (1,))
    h = numbagrad.zeros(2, 3, device="cuda")
    h[_i([1], "cuda")] = numbagrad.tensor([1.0, 2.0, 3.0], device="cuda")
    h[h > 1.5] = -1.0
    assert h.tolist() == [[0.0, 0.0, 0.0], [1.0, -1.0, -1.0]]
    with pytest.raises(IndexError, match="out of bounds"):
        h[_i([2], "cuda")] = 1.0


# -- sort, argsort, topk -----------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dim, descending):
    _check(lambda x, d: numbagrad.sort(x, dim, descending=descending).values, (3, 5))
    x = numbagrad.tensor(RNG.standard_normal((3, 5)))
    i_c = numbagrad.argsort(x, dim, descending=descending)
    i_g = numbagrad.argsort(x.cuda(), dim, descending=descending)
    assert i_g.dtype == numbagrad.int64 and i_g.cpu().tolist() == i_c.tolist()


def test_sort_stable_ties_nan_and_torch():
    torch = pytest.importorskip("torch")
    vals = [2.0, 1.0, float("nan"), 1.0, 2.0, -float("inf"), 1.0, float("inf"), 0.0]
    for descending in (False, True):
        v, i = numbagrad.sort(numbagrad.tensor(vals, device="cuda"), descending=descending)
        tv, ti = torch.sort(torch.tensor(vals), descending=descending, stable=True)
        assert i.cpu().tolist() == ti.tolist()
        np.testing.assert_array_equal(v.cpu().numpy(), tv.numpy())
    ints = numbagrad.tensor([[3, 1, 3, 0, 1]], device="cuda")
    v, i = ints.sort(dim=1)
    assert v.dtype == numbagrad.int64 and v.tolist() == [[0, 1, 1, 3, 3]]
    assert i.tolist() == [[3, 1, 4, 0, 2]]
    b = numbagrad.tensor([True, False, True, False], device="cuda")
    assert numbagrad.argsort(b).tolist() == [1, 3, 0, 2]


def test_sort_long_rows_noncontiguous_0d_and_empty():
    # rows longer than a block, of a non-power-of-two length: many merge passes
    _check(lambda x, d: numbagrad.sort(x.t(), dim=1).values, (77, 2))
    a = RNG.integers(0, 10, 133)  # many ties
    i = numbagrad.argsort(numbagrad.tensor(a, device="cuda"))
    assert i.cpu().tolist() == np.argsort(a, kind="stable").tolist()
    _check(lambda x, d: numbagrad.sort(x).values, ())
    _check(lambda x, d: numbagrad.sort(x, 0).values, (0, 3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        numbagrad.sort(numbagrad.zeros(2, 3, device="cuda"), 2)


@pytest.mark.parametrize("largest", [True, False])
def test_topk(largest):
    _check(lambda x, d: numbagrad.topk(x, 2, dim=1, largest=largest).values, (3, 5))
    _check(lambda x, d: x.topk(1, dim=0, largest=largest).values, (3, 5))
    x = numbagrad.tensor(RNG.standard_normal((4, 6)))
    assert (
        numbagrad.topk(x.cuda(), 3, largest=largest).indices.cpu().tolist()
        == numbagrad.topk(x, 3, largest=largest).indices.tolist()
    )
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        numbagrad.topk(x.cuda(), 7)


# -- composites that reach the same kernels ------------------------------------------------
def test_index_copy_fill_put_masked():
    _check(lambda x, s, d: x.index_copy(1, _i([2, 0], d), s), (2, 3), (2, 2))
    _check(lambda x, d: x.index_fill(-1, _i([0, -1], d), 7.0), (2, 3))
    # distinct targets: which of two writes to one element wins is undefined on a GPU (as
    # PyTorch's put documents; the simulator's sequential threads hid it)
    _check(lambda x, s, d: x.put(_i([4, -1, 0], d), s), (2, 3), (3,))
    _check(lambda x, s, d: x.put(_i([1, 1], d), s, accumulate=True), (2, 3), (2,))
    _check(lambda x, d: x.masked_fill(x.detach() > 0, -1.0), (3, 4))
    _check(lambda x, s, d: x.masked_scatter(x.detach() > 0, s), (3, 4), (12,))
    with pytest.raises(IndexError, match="out of bounds"):
        numbagrad.zeros(2, 3, device="cuda").index_fill(1, _i([3], "cuda"), 1.0)


def test_nonzero_and_sort_based_reductions():
    a = RNG.standard_normal((3, 4))
    c, g = numbagrad.tensor(a), numbagrad.tensor(a, device="cuda")
    for fn in (
        lambda t: numbagrad.nonzero(t > 0),
        lambda t: numbagrad.argwhere(t < 0),
        lambda t: numbagrad.nonzero(t > 0, as_tuple=True)[1],
        lambda t: numbagrad.kthvalue(t, 2, dim=1).indices,
        lambda t: numbagrad.median(t, 0).values,
        lambda t: numbagrad.msort(t),
    ):
        out_c, out_g = fn(c), fn(g)
        assert out_g.is_cuda and out_g.dtype == out_c.dtype
        np.testing.assert_array_equal(out_g.cpu().numpy(), out_c.numpy())
    _check(lambda x, d: numbagrad.kthvalue(x, 3, dim=-1).values, (2, 5))


def test_second_order_and_vmap_on_device():
    a = RNG.standard_normal((2, 3))
    outs = []
    for d in ("cpu", "cuda"):
        x = numbagrad.tensor(a, device=d, requires_grad=True)
        y = (numbagrad.gather(x, 1, _i([[2, 0], [1, 1]], d)) ** 3).sum()
        y = y + (x[_i([1, 1, 0], d)] ** 2).sum()
        (g,) = numbagrad.autograd.grad(y, x, create_graph=True)
        (h,) = numbagrad.autograd.grad((g * g).sum(), x)
        v = numbagrad.func.vmap(lambda r, d=d: numbagrad.sort(r).values[_i([0, -1], d)])(x.detach())
        assert h.device.type == v.device.type == d
        outs.append((h.detach().cpu().numpy(), v.cpu().numpy()))
    for c, g in zip(*outs):
        np.testing.assert_allclose(g, c, rtol=1e-10)


def test_searchsorted_bucketize_and_median():
    seq = numbagrad.tensor([1.0, 2.0, 2.0, 3.0, float("nan")])
    vals = numbagrad.tensor([[0.0, 2.0, 2.5], [3.0, 9.0, float("nan")]])
    for side in ("left", "right"):
        want = numbagrad.searchsorted(seq, vals, side=side)
        got = numbagrad.searchsorted(seq.cuda(), vals.cuda(), side=side)
        assert got.is_cuda and got.dtype == want.dtype and got.tolist() == want.tolist()
    rows = numbagrad.tensor([[1.0, 3.0, 5.0], [0.0, 2.0, 4.0]])
    v = numbagrad.tensor([[2.0, 6.0], [5.0, -1.0]])
    assert numbagrad.searchsorted(rows.cuda(), v.cuda()).tolist() == [[1, 3], [3, 0]]
    b = numbagrad.bucketize(numbagrad.tensor([0.5, 2.0, 3.0]).cuda(), seq[:4].cuda(), right=True)
    assert (
        b.tolist()
        == numbagrad.bucketize(numbagrad.tensor([0.5, 2.0, 3.0]), seq[:4], right=True).tolist()
    )
    _check(lambda x, d: numbagrad.median(x), (3, 5))
    _check(lambda x, d: numbagrad.median(x.t(), -1).values, (3, 4))


def test_unique():
    x = numbagrad.tensor([[3.0, 1.0, 3.0], [float("nan"), 1.0, 3.0], [3.0, 1.0, 3.0]])
    for fn in (
        lambda t: numbagrad.unique(t, return_inverse=True, return_counts=True),
        lambda t: numbagrad.unique(t, dim=0, return_inverse=True, return_counts=True),
        lambda t: numbagrad.unique(t, dim=-1, return_counts=True),
        lambda t: numbagrad.unique_consecutive(t.reshape(-1), return_counts=True),
    ):
        for want, got in zip(fn(x), fn(x.cuda())):
            assert got.is_cuda and got.dtype == want.dtype
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    assert numbagrad.unique(numbagrad.zeros(0, device="cuda")).shape == (0,)


def test_repeat_interleave_with_cuda_repeats():
    """The counts of a CUDA ``repeats`` tensor are read on the host (the output's size
    depends on them); the result and its gradient stay on the device."""
    x = numbagrad.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device="cuda", requires_grad=True)
    r = numbagrad.tensor([1, 0, 2], device="cuda")
    y = numbagrad.repeat_interleave(x, r, dim=0)
    assert y.is_cuda and y.shape == (3, 2)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), [[1, 2], [5, 6], [5, 6]])
    y.sum().backward()
    assert x.grad.is_cuda
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [[1, 1], [0, 0], [2, 2]])
    idx = numbagrad.repeat_interleave(r)
    assert idx.is_cuda
    np.testing.assert_array_equal(idx.cpu().numpy(), [0, 2, 2])
