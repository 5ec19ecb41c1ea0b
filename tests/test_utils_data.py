"""``numbagrad.utils.data`` against PyTorch: DataLoader batches, ``default_collate``, the
dataset utilities."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, rtol=1e-12, atol=1e-12):
    a, b = _np(ours), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _raises_like(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    return str(ours.value), str(theirs.value)


# -- utils.data ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "batch_size,drop_last", [(4, False), (4, True), (1, False), (None, False), (10, False)]
)
def test_dataloader_batches_match_torch(batch_size, drop_last):
    x = np.arange(14.0).reshape(7, 2)
    y = np.arange(7)

    def batches(lib):
        ds = lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y))
        dl = lib.utils.data.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
        return len(dl), [(a.numpy().copy(), b.numpy().copy()) for a, b in dl]

    import torch.utils.data

    (no, bo), (nt, bt) = batches(numbagrad), batches(torch)
    assert no == nt and len(bo) == len(bt)
    for (a, b), (c, d) in zip(bo, bt):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
        assert a.dtype == c.dtype and b.dtype == d.dtype


def test_default_collate_matches_torch():
    from torch.utils.data import default_collate as tc

    from numbagrad.utils.data import default_collate as oc

    samples = [
        ({"a": 1.5, "b": [1, 2]}, np.ones(2, np.float32), True),
        ({"a": 2.5, "b": [3, 4]}, np.zeros(2, np.float32), False),
    ]
    o, t = oc(samples), tc(samples)
    _same(o[0]["a"], t[0]["a"])
    for i in range(2):
        _same(o[0]["b"][i], t[0]["b"][i])
    _same(o[1], t[1])
    _same(o[2], t[2])
    assert oc(["x", "y"]) == tc(["x", "y"])


def test_data_utilities():
    from numbagrad.utils.data import (
        ConcatDataset,
        DataLoader,
        RandomSampler,
        Subset,
        TensorDataset,
        random_split,
    )

    ds = TensorDataset(numbagrad.arange(10.0))
    g = numbagrad.Generator().manual_seed(3)
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=g)
    assert [len(p) for p in parts] == [5, 3, 2]
    seen = sorted(int(p[i][0].item()) for p in parts for i in range(len(p)))
    assert seen == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    order = [
        int(b[0].item())
        for b in DataLoader(
            ds, batch_size=None, shuffle=True, generator=numbagrad.Generator().manual_seed(0)
        )
    ]
    assert sorted(order) == list(range(10))
    assert len(list(RandomSampler(ds, replacement=True, num_samples=25))) == 25
    cat = ConcatDataset([Subset(ds, [0, 1]), Subset(ds, [9])])
    assert len(cat) == 3 and cat[2][0].item() == 9.0
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(numbagrad.ones(3), numbagrad.ones(4))
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
