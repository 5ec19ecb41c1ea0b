"""``nn.functional.embedding``/``nn.Embedding``, ``Tensor.unfold``, ``take`` and
``masked_select``: values, gradients (padding rows, frequency scaling, renormalisation),
errors, and the transforms, against PyTorch where it is installed and against NumPy."""

import numpy as np
import pytest

import numbagrad
import numbagrad.nn.functional as F
from numbagrad import nn
from numbagrad.autograd import gradcheck
from numbagrad.func import grad, vmap

W = np.random.default_rng(0).standard_normal((6, 3)) * 2
IDX = np.array([[1, 2, 1, 0], [5, 5, 5, 3]])


def _embedding_run(mod, **kw):
    w = mod.tensor(W.copy(), requires_grad=True)
    out = mod.nn.functional.embedding(mod.tensor(IDX), w, **kw)
    (out * mod.arange(3.0, dtype=mod.float64)).sum().backward()
    return out.detach().numpy(), w.grad.numpy(), w.detach().numpy()


EMBEDDING_CASES = [
    {},
    {"padding_idx": 0},
    {"padding_idx": -1, "scale_grad_by_freq": True},
    {"max_norm": 1.0},
    {"max_norm": 1.5, "norm_type": 1.0, "padding_idx": 5},
]


@pytest.mark.parametrize("kw", EMBEDDING_CASES, ids=lambda kw: ",".join(kw) or "plain")
def test_embedding_matches_torch(kw):
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_embedding_run(numbagrad, **kw), _embedding_run(torch, **kw)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_embedding_gradients_by_hand():
    out, g, _ = _embedding_run(numbagrad)
    np.testing.assert_array_equal(out, W[IDX])
    want = np.zeros_like(W)
    np.add.at(want, IDX.reshape(-1), np.arange(3.0))
    np.testing.assert_array_equal(g, want)
    _, g, _ = _embedding_run(numbagrad, padding_idx=5, scale_grad_by_freq=True)
    counts = np.bincount(IDX.reshape(-1), minlength=6)
    want = np.zeros_like(W)
    np.add.at(want, IDX.reshape(-1), np.arange(3.0) / counts[IDX.reshape(-1)][:, None])
    want[5] = 0  # the padding row gets nothing
    np.testing.assert_allclose(g, want, rtol=1e-15)
    # max_norm rescales, in place, exactly the rows the input uses
    _, _, w = _embedding_run(numbagrad, max_norm=1.0)
    used = np.unique(IDX)
    assert np.all(np.linalg.norm(w[used], axis=1) <= 1.0 + 1e-12)
    np.testing.assert_array_equal(w[4], W[4])


def test_embedding_gradcheck_and_transforms():
    w = numbagrad.tensor(W.copy(), requires_grad=True)
    idx = numbagrad.tensor(IDX)
    # (padding_idx and scale_grad_by_freq change the backward only: no true derivative)
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    wd = w.detach()
    # per-example gradients of a bag-of-embeddings score
    per = vmap(grad(lambda w, i: F.embedding(i, w).sum()), in_dims=(None, 0))(wd, idx)
    for k in range(2):
        row = idx[k]
        np.testing.assert_array_equal(
            per[k].numpy(), grad(lambda w, row=row: F.embedding(row, w).sum())(wd).numpy()
        )


def test_embedding_errors():
    w = numbagrad.tensor(W)
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding(numbagrad.tensor([1.0]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(numbagrad.tensor([6]), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(numbagrad.tensor([1]), w, padding_idx=6)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(numbagrad.tensor([1]), numbagrad.ones(3))
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(numbagrad.tensor([1]), w, sparse=True)


def test_embedding_module():
    numbagrad.manual_seed(0)
    e = nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0, scale_grad_by_freq=True)
    assert repr(e) == "Embedding(10, 3, padding_idx=9, max_norm=1.0, scale_grad_by_freq=True)"
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert e.weight[9].tolist() == [0.0, 0.0, 0.0] and e.weight.requires_grad
    assert list(e.state_dict()) == ["weight"]
    table = numbagrad.tensor(np.arange(6.0).reshape(3, 2))
    f = nn.Embedding.from_pretrained(table)
    assert not f.weight.requires_grad and f(numbagrad.tensor([2])).tolist() == [[4.0, 5.0]]
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(numbagrad.ones(3))
    with pytest.raises(AssertionError, match="Shape of weight"):
        nn.Embedding(3, 2, _weight=numbagrad.ones(2, 2))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(3, 2, sparse=True)
    # trains: the padding row stays zero
    e = nn.Embedding(5, 2, padding_idx=0)
    e(numbagrad.tensor([[0, 1, 4]])).pow(2).sum().backward()
    assert e.weight.grad[0].tolist() == [0.0, 0.0] and e.weight.grad[1].abs().sum() > 0


@pytest.mark.parametrize(
    "shape,dim,size,step",
    [
        ((2, 5), 1, 2, 2),
        ((2, 5), 0, 1, 1),
        ((2, 5), -1, 3, 1),
        ((4, 3), 0, 2, 1),
        ((0, 3), 1, 2, 1),
    ],
)
def test_unfold_matches_numpy_and_its_gradient(shape, dim, size, step):
    a = np.random.default_rng(1).standard_normal(shape)
    x = numbagrad.tensor(a, requires_grad=True)
    u = x.unfold(dim, size, step)
    d = dim % len(shape)
    win = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    win = np.take(win, np.arange(0, win.shape[d], step), axis=d)
    np.testing.assert_array_equal(u.detach().numpy(), win)
    if u.numel():
        assert gradcheck(lambda t: t.unfold(dim, size, step), (x,))


def test_unfold_edges_and_errors():
    assert numbagrad.tensor(5.0).unfold(0, 1, 1).tolist() == [5.0]
    assert tuple(numbagrad.tensor(5.0).unfold(0, 0, 1).shape) == (0,)
    assert tuple(numbagrad.ones(3, 4).unfold(0, 0, 2).shape) == (2, 4, 0)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 3"):
        numbagrad.ones(3).unfold(0, 4, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        numbagrad.ones(3).unfold(0, 2, 0)
    x = numbagrad.tensor(np.arange(10.0).reshape(2, 5))
    np.testing.assert_array_equal(
        vmap(lambda r: r.unfold(0, 2, 1).sum(-1))(x).numpy(), x.numpy()[:, :-1] + x.numpy()[:, 1:]
    )


def test_take_and_masked_select():
    a = np.arange(6.0).reshape(2, 3)
    x = numbagrad.tensor(a, requires_grad=True)
    idx = np.array([[-1, 0], [2, 3]])
    t = numbagrad.take(x, numbagrad.tensor(idx))
    np.testing.assert_array_equal(t.detach().numpy(), np.take(a, idx))
    t.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])
    assert x.take(numbagrad.tensor([1])).tolist() == [1.0]
    with pytest.raises(IndexError, match="tried to access index 6 on a tensor of 6 elements"):
        numbagrad.take(x, numbagrad.tensor([6]))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index"):
        numbagrad.take(x, numbagrad.tensor([1.0]))
    m = numbagrad.tensor([True, False, True])  # broadcast against (2, 3)
    s = numbagrad.masked_select(x, m)
    assert s.tolist() == [0.0, 2.0, 3.0, 5.0]
    assert x.masked_select(x > 3).tolist() == [4.0, 5.0]
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        numbagrad.masked_select(x, numbagrad.tensor([1, 0, 1]))
    np.testing.assert_array_equal(
        grad(lambda v: numbagrad.take(v, numbagrad.tensor([0, 0, -1])).sum())(x.detach()).numpy(),
        [[2.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
    )
