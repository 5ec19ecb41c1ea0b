"""``numbagrad.utils.data`` against PyTorch: DataLoader batches, ``default_collate``, the
dataset utilities."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.data")


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


# -- the package's submodules, ChainDataset, StackDataset, default_convert -----------------------
SUBMODULES = ["dataset", "sampler", "dataloader", "distributed"]


@pytest.mark.parametrize("sub", SUBMODULES)
def test_submodules_import_as_torchs(sub):
    import importlib

    ours = importlib.import_module(f"numbagrad.utils.data.{sub}")
    theirs = importlib.import_module(f"torch.utils.data.{sub}")
    assert set(ours.__all__) == set(theirs.__all__) - {"_DatasetKind"}
    for name in ours.__all__:  # one object, whichever path a script imports it by
        assert getattr(ours, name) is getattr(numbagrad.utils.data, name)
    assert getattr(numbagrad.utils.data, sub) is ours
    from numbagrad.utils.data.dataloader import default_collate  # noqa: F401


def _count(lib, n):
    class Count(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n

    return Count()


def test_chain_dataset_matches_torch():
    for lib in (numbagrad, torch):
        d = lib.utils.data
        chain = d.ChainDataset([_count(lib, 2), _count(lib, 3)])
        assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
        added = _count(lib, 1) + _count(lib, 2)
        assert isinstance(added, d.ChainDataset) and list(added) == [0, 0, 1]
        loader = d.DataLoader(chain, batch_size=2)
        assert [b.tolist() for b in loader] == [[0, 1], [0, 1], [2]]
    msgs = _raises_like(
        lambda: list(numbagrad.utils.data.ChainDataset([_count(numbagrad, 1), [5]])),
        lambda: list(torch.utils.data.ChainDataset([_count(torch, 1), [5]])),
    )
    assert msgs[0] == msgs[1]
    msgs = _raises_like(
        lambda: len(numbagrad.utils.data.ChainDataset([[5]])),
        lambda: len(torch.utils.data.ChainDataset([[5]])),
    )
    assert msgs[0] == msgs[1]


def test_stack_dataset_matches_torch():
    class WithGetitems:
        calls = 0

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return 10 * i

        def __getitems__(self, idx):
            WithGetitems.calls += 1
            return [10 * i for i in idx]

    def run(lib):
        d = lib.utils.data
        a = d.TensorDataset(lib.arange(4.0))
        tup = d.StackDataset(a, WithGetitems(), [7, 8, 9, 10])
        named = d.StackDataset(x=a, y=[7, 8, 9, 10])
        out = [len(tup), tup[2], named[1], tup.__getitems__([3, 0]), named.__getitems__([2])]
        out.append([b for b in d.DataLoader(named, batch_size=3)])
        return out

    before = WithGetitems.calls
    o, t = run(numbagrad), run(torch)
    assert WithGetitems.calls - before == 2  # once each: __getitems__ is used
    assert o[0] == t[0] == 4
    assert repr(o[1:5]).replace("numbagrad", "torch") == repr(t[1:5])
    for ob, tb in zip(o[5], t[5]):
        _same(ob["x"][0], tb["x"][0])
        _same(ob["y"], tb["y"])
    bad = [((), {}), (([1],), {"b": [2]}), (([1], [1, 2]), {}), ((), {"a": [1], "b": []})]
    for args, kwargs in bad:
        msgs = _raises_like(
            lambda a=args, k=kwargs: numbagrad.utils.data.StackDataset(*a, **k),
            lambda a=args, k=kwargs: torch.utils.data.StackDataset(*a, **k),
        )
        assert msgs[0] == msgs[1]

    class Short(WithGetitems):
        def __getitems__(self, idx):
            return [0]

    msgs = _raises_like(
        lambda: numbagrad.utils.data.StackDataset(Short()).__getitems__([0, 1]),
        lambda: torch.utils.data.StackDataset(Short()).__getitems__([0, 1]),
    )
    assert msgs[0] == msgs[1]


def test_default_convert_matches_torch():
    import collections

    from torch.utils.data import default_convert as tc

    from numbagrad.utils.data import default_convert as oc

    Point = collections.namedtuple("Point", "x y")
    sample = {
        "a": np.arange(3, dtype=np.float32),
        "b": (np.int64(4), "s", [np.float64(2.5), np.array([True, False])]),
        "c": Point(np.ones(2), 3),
        "d": np.array(["x", "y"]),
        "e": range(2),
    }
    o, t = oc(sample), tc(sample)
    _same(o["a"], t["a"])
    assert isinstance(o["b"], list) and isinstance(t["b"], list)
    _same(o["b"][0], t["b"][0])
    assert o["b"][1] == t["b"][1] == "s"
    _same(o["b"][2][0], t["b"][2][0])
    _same(o["b"][2][1], t["b"][2][1])
    assert type(o["c"]) is Point and o["c"].y == 3
    _same(o["c"].x, t["c"].x)
    assert o["d"] is sample["d"] and t["d"] is sample["d"]
    assert o["e"] == t["e"]
    tensor = numbagrad.ones(2)
    assert oc(tensor) is tensor and oc("str") == "str" and oc(np.str_("a")) == "a"


def test_unbatched_loader_converts_like_torch():
    data = [np.arange(2.0) + i for i in range(3)]
    o = list(numbagrad.utils.data.DataLoader(data, batch_size=None))
    t = list(torch.utils.data.DataLoader(data, batch_size=None))
    for a, b in zip(o, t, strict=True):
        _same(a, b)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"prefetch_factor": 2},
        {"num_workers": 1, "prefetch_factor": -1},
        {"persistent_workers": True},
        {"num_workers": -1},
    ],
)
def test_loader_worker_options_errors_match_torch(kwargs):
    msgs = _raises_like(
        lambda: numbagrad.utils.data.DataLoader([1, 2], **kwargs),
        lambda: torch.utils.data.DataLoader([1, 2], **kwargs),
    )
    assert msgs[0] == msgs[1]


# -- DistributedSampler -------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 5, 7, 12])
@pytest.mark.parametrize("replicas", [1, 3, 8])
@pytest.mark.parametrize("shuffle,drop_last", [(False, False), (True, False), (True, True)])
def test_distributed_sampler_matches_torch(n, replicas, shuffle, drop_last):
    for rank in range(replicas):
        for seed, epoch in [(0, 0), (5, 2)]:
            samplers = [
                lib.utils.data.DistributedSampler(
                    range(n), replicas, rank, shuffle=shuffle, seed=seed, drop_last=drop_last
                )
                for lib in (numbagrad, torch)
            ]
            for s in samplers:
                s.set_epoch(epoch)
            o, t = (list(s) for s in samplers)
            assert o == t, (rank, seed, epoch)
            assert len(samplers[0]) == len(samplers[1]) == len(o)
            assert samplers[0].total_size == samplers[1].total_size


def test_distributed_sampler_feeds_a_loader_as_torchs():
    def batches(lib):
        d = lib.utils.data
        sampler = d.DistributedSampler(range(10), num_replicas=2, rank=1, seed=3)
        loader = d.DataLoader(list(range(10)), batch_size=3, sampler=sampler)
        out = []
        for epoch in range(2):
            sampler.set_epoch(epoch)
            out += [b.tolist() for b in loader]
        return out

    assert batches(numbagrad) == batches(torch)


@pytest.mark.parametrize("args", [(2, 2), (2, -1), (3, 5)])
def test_distributed_sampler_rank_errors_match_torch(args):
    msgs = _raises_like(
        lambda: numbagrad.utils.data.DistributedSampler(range(4), *args),
        lambda: torch.utils.data.DistributedSampler(range(4), *args),
    )
    assert msgs[0] == msgs[1]


def test_distributed_sampler_defaults_need_a_process_group():
    import torch.distributed

    if torch.distributed.is_initialized() or numbagrad.distributed.is_initialized():
        pytest.skip("a process group is initialised in this process")
    if not numbagrad.distributed.is_available():
        with pytest.raises(RuntimeError, match="Requires distributed package"):
            numbagrad.utils.data.DistributedSampler(range(4))
        return
    for kwargs in [{}, {"num_replicas": 2}]:
        msgs = _raises_like(
            lambda k=kwargs: numbagrad.utils.data.DistributedSampler(range(4), **k),
            lambda k=kwargs: torch.utils.data.DistributedSampler(range(4), **k),
        )
        assert msgs[0].startswith(msgs[1])  # (numbagrad's adds how to initialise one)


# -- workers: get_worker_info, worker_init_fn and the workers' random streams -------------------
def _sharded(lib):
    class Shards(lib.utils.data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            if info is None:
                return iter(range(self.n))
            # uneven shards: worker k yields n - k samples starting at 100 * k
            return iter(range(100 * info.id, 100 * info.id + self.n - info.id))

    return Shards


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("workers", [0, 1, 3])
@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (None, False)])
def test_iterable_dataset_workers_match_torch(workers, batch_size, drop_last):
    def batches(lib):
        ds = _sharded(lib)(5)
        loader = lib.utils.data.DataLoader(
            ds, batch_size=batch_size, drop_last=drop_last, num_workers=workers
        )
        return [b if isinstance(b, int) else b.tolist() for b in loader]

    assert batches(numbagrad) == batches(torch)
    assert numbagrad.utils.data.get_worker_info() is None


def test_workers_see_torchs_worker_info_and_random_streams():
    import random

    def run(lib):
        started = {}  # per worker process in PyTorch, keyed by worker in numbagrad's one

        def init(worker_id):
            info = lib.utils.data.get_worker_info()
            draw = lib.rand(1).item()
            started[worker_id] = (worker_id, info.id, info.num_workers, info.seed, draw)

        class Noisy(lib.utils.data.Dataset):
            def __len__(self):
                return 7

            def __getitem__(self, i):
                info = lib.utils.data.get_worker_info()
                noise = (
                    lib.rand(2).tolist(),
                    random.random(),
                    np.random.rand(),  # noqa: NPY002
                )
                return {"i": i, "init": started[info.id], "noise": noise}

        lib.manual_seed(11)
        random.seed(1)
        np.random.seed(2)  # noqa: NPY002
        g = lib.Generator().manual_seed(4)
        loader = lib.utils.data.DataLoader(
            Noisy(),
            batch_size=2,
            shuffle=True,
            num_workers=2,
            worker_init_fn=init,
            generator=g,
            collate_fn=lambda b: b,
        )
        out = [list(loader), list(loader)]
        # the calling process's streams are untouched by the workers' draws
        after = (lib.rand(1).item(), random.random(), np.random.rand())  # noqa: NPY002
        return out, after

    ours, theirs = run(numbagrad), run(torch)
    assert ours[1] == theirs[1]
    assert ours[0] == theirs[0]
    assert numbagrad.utils.data.get_worker_info() is None


def test_map_dataset_workers_fetch_with_getitems():
    fetched = []

    class Rows(numbagrad.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("the loader fetches batches with __getitems__")

        def __getitems__(self, idx):
            info = numbagrad.utils.data.get_worker_info()
            fetched.append((info.id, list(idx)))
            return [float(i) for i in idx]

    loader = numbagrad.utils.data.DataLoader(Rows(), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert fetched == [(0, [0, 1]), (1, [2, 3]), (0, [4])]
