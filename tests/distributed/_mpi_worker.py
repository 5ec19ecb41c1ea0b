"""The checks ``test_mpi.py`` runs under ``mpiexec -n 2``: every collective against NumPy,
DataParallel against one process, error cases. Usage: ``mpiexec -n 2 python _mpi_worker.py
OUT.json [CASE ...]``; rank 0 writes ``{case: [result on rank 0, result on rank 1]}``, a
result being ``"ok"`` or the traceback.
"""

import datetime
import json
import sys
import traceback
import warnings

import numba
import numpy as np

import numbagrad as torch
import numbagrad.distributed as dist
from numbagrad.autograd.function import once_differentiable
from numbagrad.distributed import ReduceOp

CASES = {}
TIMEOUT = datetime.timedelta(seconds=20)


def case(name):
    def deco(f):
        CASES[name] = f
        return f

    return deco


def data(rank, shape, dtype, seed=0):
    """Rank ``rank``'s data: every rank can compute every rank's, for the NumPy reference."""
    rng = np.random.default_rng(1000 * seed + rank)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-9, 10, size=shape).astype(dtype)
    return rng.uniform(0.5, 1.5, size=shape).astype(dtype)


def allr(x):
    """Per-rank data of every rank, stacked."""
    return np.stack(x)


REFS = {
    ReduceOp.SUM: lambda s: s.sum(0) if s.dtype != np.bool_ else s.any(0),
    ReduceOp.AVG: lambda s: s.sum(0) / s.shape[0],
    ReduceOp.PRODUCT: lambda s: s.prod(0) if s.dtype != np.bool_ else s.all(0),
    ReduceOp.MIN: lambda s: s.min(0),
    ReduceOp.MAX: lambda s: s.max(0),
    ReduceOp.BAND: lambda s: np.bitwise_and.reduce(s, 0),
    ReduceOp.BOR: lambda s: np.bitwise_or.reduce(s, 0),
    ReduceOp.BXOR: lambda s: np.bitwise_xor.reduce(s, 0),
}
COMBOS = [
    (op, dt)
    for dt in (np.float64, np.float32)
    for op in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX)
]
COMBOS += [
    (op, dt)
    for dt in (np.int64, np.int32)
    for op in (
        ReduceOp.SUM,
        ReduceOp.PRODUCT,
        ReduceOp.MIN,
        ReduceOp.MAX,
        ReduceOp.BAND,
        ReduceOp.BOR,
        ReduceOp.BXOR,
    )
]
COMBOS += [(op, np.bool_) for op in (ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX)]


def _all_reduce_case(op, dt):
    def run(rank, world):
        shape = (3, 4)
        t = torch.from_numpy(data(rank, shape, dt).copy())
        dist.all_reduce(t, op=op)
        want = REFS[op](allr([data(r, shape, dt) for r in range(world)])).astype(dt)
        assert t.dtype == torch.from_numpy(want).dtype
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-6 if dt == np.float32 else 1e-15)

    return run


for _op, _dt in COMBOS:
    CASES[f"all_reduce_{_op.name}_{np.dtype(_dt).name}"] = _all_reduce_case(_op, _dt)


@case("all_reduce_zero_copy_and_version")
def _(rank, world):
    a = data(rank, (5,), np.float64)
    t = torch.from_numpy(a)
    v0 = t._version
    dist.all_reduce(t)
    assert np.shares_memory(t.numpy(), a)
    np.testing.assert_allclose(a, sum(data(r, (5,), np.float64) for r in range(world)))
    assert t._version == v0 + 1


@case("all_reduce_strided_view")
def _(rank, world):
    base = torch.from_numpy(data(rank, (4, 3), np.float64).copy())
    col = base[:, 1]  # a strided view: packed, reduced, written back into base
    dist.all_reduce(col, op=ReduceOp.MAX)
    ref = allr([data(r, (4, 3), np.float64) for r in range(world)])
    want = data(rank, (4, 3), np.float64)
    want[:, 1] = ref[:, :, 1].max(0)
    np.testing.assert_array_equal(base.numpy(), want)
    tt = torch.from_numpy(data(rank, (3, 2), np.float64).copy()).t()
    dist.all_reduce(tt)
    np.testing.assert_allclose(tt.numpy(), sum(data(r, (3, 2), np.float64) for r in range(world)).T)


@case("all_reduce_async_and_0d")
def _(rank, world):
    t = torch.tensor(float(rank + 1))
    w = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
    assert w.wait() is True and w.is_completed() and w.result()[0] is t
    assert float(t) == (world + 1) / 2
    e = torch.zeros(0)
    dist.all_reduce(e)
    assert e.shape == (0,)


@case("broadcast")
def _(rank, world):
    t = torch.from_numpy(data(rank, (2, 3), np.float32).copy())
    dist.broadcast(t, src=1)
    np.testing.assert_array_equal(t.numpy(), data(1, (2, 3), np.float32))
    t = torch.from_numpy(data(rank, (4,), np.int64).copy())
    w = dist.broadcast(t, group_src=0, async_op=True)
    w.wait()
    np.testing.assert_array_equal(t.numpy(), data(0, (4,), np.int64))


@case("reduce")
def _(rank, world):
    mine = data(rank, (3,), np.float64)
    t = torch.from_numpy(mine.copy())
    dist.reduce(t, dst=1)
    want = sum(data(r, (3,), np.float64) for r in range(world)) if rank == 1 else mine
    np.testing.assert_allclose(t.numpy(), want)
    t = torch.from_numpy(mine.copy())
    dist.reduce(t, dst=0, op=ReduceOp.AVG)
    want = sum(data(r, (3,), np.float64) for r in range(world)) / world if rank == 0 else mine
    np.testing.assert_allclose(t.numpy(), want)


@case("all_gather")
def _(rank, world):
    out = [torch.zeros(2, 2, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(out, torch.from_numpy(data(rank, (2, 2), np.int64)))
    for r in range(world):
        np.testing.assert_array_equal(out[r].numpy(), data(r, (2, 2), np.int64))
    out = [torch.zeros(3) for _ in range(world)]
    dist.all_gather(out, torch.from_numpy(data(rank, (3,), np.float32)), async_op=True).wait()
    np.testing.assert_array_equal(out[1].numpy(), data(1, (3,), np.float32))


@case("all_gather_into_tensor")
def _(rank, world):
    x = torch.from_numpy(data(rank, (2, 3), np.float64))
    cat = torch.zeros(world * 2, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(cat, x)
    np.testing.assert_array_equal(
        cat.numpy(), np.concatenate([data(r, (2, 3), np.float64) for r in range(world)])
    )
    stacked = torch.zeros(world, 2, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(stacked, x)
    np.testing.assert_array_equal(
        stacked.numpy(), allr([data(r, (2, 3), np.float64) for r in range(world)])
    )


@case("reduce_scatter_tensor")
def _(rank, world):
    x = torch.from_numpy(data(rank, (world * 3,), np.float64))
    out = torch.zeros(3, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, x)
    total = sum(data(r, (world * 3,), np.float64) for r in range(world))
    np.testing.assert_allclose(out.numpy(), total[3 * rank : 3 * rank + 3])
    dist.reduce_scatter_tensor(out, x, op=ReduceOp.AVG)
    np.testing.assert_allclose(out.numpy(), total[3 * rank : 3 * rank + 3] / world)


@case("gather_scatter")
def _(rank, world):
    x = torch.from_numpy(data(rank, (2,), np.float64))
    lst = [torch.zeros(2, dtype=torch.float64) for _ in range(world)] if rank == 0 else None
    dist.gather(x, lst, dst=0)
    if rank == 0:
        for r in range(world):
            np.testing.assert_array_equal(lst[r].numpy(), data(r, (2,), np.float64))
    t = torch.zeros(2, dtype=torch.float64)
    src_list = [torch.full((2,), float(10 + r), dtype=torch.float64) for r in range(world)]
    dist.scatter(t, src_list if rank == 1 else None, src=1)
    np.testing.assert_array_equal(t.numpy(), [10.0 + rank] * 2)


@case("send_recv")
def _(rank, world):
    if rank == 0:
        dist.send(torch.tensor([1.0, 2.0, 3.0]), dst=1)
        w1 = dist.isend(torch.tensor([4, 5]), dst=1, tag=3)
        w2 = dist.isend(torch.tensor([6.0]), dst=1, tag=3)
        w1.wait()
        w2.wait()
        got = torch.zeros(2, 2)
        assert dist.recv(got) == 1  # src=None: from anyone
        np.testing.assert_array_equal(got.numpy(), [[7.0, 8.0], [9.0, 10.0]])
    else:
        t = torch.zeros(3)
        assert dist.recv(t, src=0) == 0
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
        a = torch.zeros(2, dtype=torch.int64)
        b = torch.zeros(1)
        wa = dist.irecv(a, src=0, tag=3)
        wb = dist.irecv(b, src=0, tag=3)
        wb.wait()  # waited in the other order: still the right messages
        wa.wait()
        np.testing.assert_array_equal(a.numpy(), [4, 5])
        np.testing.assert_array_equal(b.numpy(), [6.0])
        dist.send(torch.tensor([[7.0, 8.0], [9.0, 10.0]]), dst=0)


@case("barrier_and_groups")
def _(rank, world):
    dist.barrier()
    dist.barrier(async_op=True).wait()
    g = dist.new_group([0, 1])
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=g)
    assert float(t) == 1.0
    solo = dist.new_group([1])
    t = torch.tensor([5.0])
    if rank == 1:
        assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
        dist.all_reduce(t, group=solo)
        assert float(t) == 5.0
        dist.broadcast(t, src=1, group=solo)
    else:
        assert dist.get_rank(solo) == -1
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert dist.all_reduce(t, group=solo) is None
        assert any("does not belong" in str(x.message) for x in w)
    assert dist.get_process_group_ranks(solo) == [1]
    assert dist.get_global_rank(solo, 0) == 1 and dist.get_group_rank(solo, 1) == 0
    dist.destroy_process_group(solo)
    dist.destroy_process_group(g)


def _raises(exc, *words):
    """A context manager asserting ``exc`` with all ``words`` in its message."""

    class _Ctx:
        def __enter__(self):
            return self

        def __exit__(self, et, ev, tb):
            assert et is not None, f"expected {exc.__name__}, nothing raised"
            assert issubclass(et, exc), f"expected {exc.__name__}, got {et.__name__}: {ev}"
            for w in words:
                assert w in str(ev), f"{w!r} not in {ev}"
            return True

    return _Ctx()


@case("error_mismatched_shape_dtype_op_root")
def _(rank, world):
    with _raises(
        RuntimeError,
        "rank 0: all_reduce op=SUM float64 (3,)",
        "rank 1: all_reduce op=SUM float64 (4,)",
    ):
        dist.all_reduce(torch.zeros(3 + rank, dtype=torch.float64))
    with _raises(RuntimeError, "different arguments", "float32"):
        dist.all_reduce(torch.zeros(3, dtype=torch.float64 if rank else torch.float32))
    with _raises(RuntimeError, "op=MAX"):
        dist.all_reduce(torch.zeros(3), op=ReduceOp.MAX if rank else ReduceOp.SUM)
    with _raises(RuntimeError, "src="):
        dist.broadcast(torch.zeros(3), src=rank)
    with _raises(RuntimeError, "different arguments"):
        dist.all_gather([torch.zeros(2 + rank) for _ in range(world)], torch.zeros(2 + rank))
    # the group still works after the errors
    t = torch.ones(2)
    dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), [2.0, 2.0])


@case("error_local_arguments")
def _(rank, world):
    with _raises(ValueError, "AVG needs a floating-point"):
        dist.all_reduce(torch.zeros(2, dtype=torch.int64), op=ReduceOp.AVG)
    with _raises(ValueError, "BAND needs an integer"):
        dist.all_reduce(torch.zeros(2), op=ReduceOp.BAND)
    with _raises(ValueError, "not a member"):
        dist.broadcast(torch.zeros(2), src=5)
    with _raises(ValueError, "list of 2 tensors"):
        dist.all_gather([torch.zeros(2)], torch.zeros(2))
    with _raises(ValueError, "world_size (2) times"):
        dist.all_gather_into_tensor(torch.zeros(3), torch.zeros(2))
    with _raises(ValueError, "Invalid destination rank"):
        dist.send(torch.zeros(2), dst=rank)
    with _raises(TypeError, "numbagrad Tensor"):
        dist.all_reduce(np.zeros(2))
    with _raises(ValueError, "must NOT be specified"):
        dist.gather(torch.zeros(2), [torch.zeros(2)] * 2, dst=1 - rank)
    with _raises(NotImplementedError, "PREMUL_SUM"):
        dist.all_reduce(torch.zeros(2), op=ReduceOp.PREMUL_SUM)


@case("error_recv_mismatch")
def _(rank, world):
    if rank == 0:
        dist.send(torch.zeros(3, dtype=torch.float64), dst=1)
    else:
        t = torch.full((4,), 7.0)
        with _raises(RuntimeError, "rank 0 sent a float64 (3,)", "float32 (4,)"):
            dist.recv(t, src=0)
        np.testing.assert_array_equal(t.numpy(), [7.0] * 4)
    dist.barrier()
    if rank == 1:
        dist.send(torch.tensor([1.0]), dst=0)
    else:
        t = torch.zeros(1)
        assert dist.recv(t, src=1) == 1 and float(t) == 1.0


@case("error_timeout")
def _(rank, world):
    g = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=0.3))
    if rank == 0:
        with _raises(dist.DistBackendError, "barrier timed out"):
            dist.barrier(group=g)
        with _raises(dist.DistBackendError, "unusable"):
            dist.all_reduce(torch.zeros(1), group=g)
        dist.barrier()  # world: now let rank 1 complete the barrier on g
    else:
        dist.barrier()
        dist.barrier(group=g, timeout=datetime.timedelta(seconds=10))
    dist.destroy_process_group(g)


# -- DataParallel ---------------------------------------------------------------------------


@numba.njit(cache=True)
def softcube_forward(x, out):
    """out = x + x**3 / 3, elementwise, on flat arrays."""
    for i in range(x.size):
        out[i] = x[i] + x[i] * x[i] * x[i] / 3.0


@numba.njit(cache=True)
def softcube_backward(x, g, out):
    """out = g * (1 + x**2)."""
    for i in range(x.size):
        out[i] = g[i] * (1.0 + x[i] * x[i])


class SoftCube(torch.autograd.Function):
    """A Function whose forward and backward are Numba kernels on the tensors' memory."""

    @staticmethod
    def forward(x):
        xa = x.contiguous().numpy().reshape(-1)
        out = np.empty_like(xa)
        softcube_forward(xa, out)
        return torch.from_numpy(out.reshape(x.shape))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        xa = x.contiguous().numpy().reshape(-1)
        out = np.empty_like(xa)
        softcube_backward(xa, g.contiguous().numpy().reshape(-1), out)
        return torch.from_numpy(out.reshape(x.shape))


def make_params(seed):
    rng = np.random.default_rng(seed)
    shapes = [(6, 16), (16,), (16, 16), (16,), (16, 1), (1,)]
    return [torch.from_numpy(0.3 * rng.standard_normal(s)).requires_grad_(True) for s in shapes]


def forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = torch.tanh(x @ w1 + b1)
    h = SoftCube.apply(h @ w2 + b2)
    return h @ w3 + b3


def batch(step, n):
    rng = np.random.default_rng(100 + step)
    x = rng.standard_normal((n, 6))
    y = np.sin(x.sum(1, keepdims=True))
    return torch.from_numpy(x), torch.from_numpy(y)


def sgd(params, lr=0.05):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def train_reference(world, per_rank, steps):
    """One process, batch world * per_rank."""
    params = make_params(0)
    for step in range(steps):
        x, y = batch(step, world * per_rank)
        ((forward(params, x) - y) ** 2).mean().backward()
        sgd(params)
    return [p.detach().numpy().copy() for p in params]


@case("data_parallel_matches_one_process")
def _(rank, world):
    per_rank, steps = 8, 4
    ref = train_reference(world, per_rank, steps)
    for cap in (25.0, 0.002, 1e-6):  # one bucket; a few; one per parameter
        params = make_params(rank)  # different starts: DataParallel broadcasts rank 0's
        dp = dist.DataParallel(params, bucket_cap_mb=cap)
        assert len(dp._buckets) == {25.0: 1, 0.002: 2, 1e-6: len(params)}[cap]
        launched = []  # buckets in flight when b1's gradient arrives: overlap with backward
        h = params[1].register_post_accumulate_grad_hook(
            lambda p, dp=dp, launched=launched: launched.append(dp._next)
        )
        for step in range(steps):
            x, y = batch(step, world * per_rank)
            xs, ys = (
                x[rank * per_rank : (rank + 1) * per_rank],
                y[rank * per_rank : (rank + 1) * per_rank],
            )
            ((forward(params, xs) - ys) ** 2).mean().backward()
            sgd(params)
        dp.remove()
        h.remove()
        if cap == 1e-6:
            assert min(launched) >= 2, launched
        for p, r in zip(params, ref):
            np.testing.assert_allclose(p.detach().numpy(), r, rtol=0, atol=1e-12)


@case("data_parallel_no_sync_accumulation")
def _(rank, world):
    per_rank = 8
    ref = make_params(0)
    x, y = batch(0, world * per_rank)
    ((forward(ref, x) - y) ** 2).mean().backward()
    params = make_params(0)
    dp = dist.DataParallel(params)
    half = per_rank // 2
    lo = rank * per_rank
    with dp.no_sync():  # first micro-batch: local only
        ((forward(params, x[lo : lo + half]) - y[lo : lo + half]) ** 2).mean().backward()
    g_local = params[0].grad.numpy().copy()
    (
        (forward(params, x[lo + half : lo + per_rank]) - y[lo + half : lo + per_rank]) ** 2
    ).mean().backward()
    assert not np.allclose(g_local, params[0].grad.numpy())
    for p, r in zip(params, ref):
        # two micro-batch means summed = 2 x the mean over the rank's batch
        np.testing.assert_allclose(p.grad.numpy() / 2, r.grad.numpy(), rtol=0, atol=1e-12)
    dp.remove()


@case("data_parallel_errors")
def _(rank, world):
    with _raises(RuntimeError, "parameters differ across ranks"):
        dist.DataParallel([torch.zeros(2 + rank, requires_grad=True)])
    with _raises(ValueError, "requires_grad=True"):
        dist.DataParallel([torch.zeros(2)])
    with _raises(TypeError, "pass [tensor]"):
        dist.DataParallel(torch.zeros(2, requires_grad=True))
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    dp = dist.DataParallel([a, b], bucket_cap_mb=1e-6)
    (a * 2).sum().backward()  # b unused: its bucket never fills
    with _raises(RuntimeError, "unused"):
        (a * 3).sum().backward()
    dp.remove()


@case("ddp_module")
def _(rank, world):
    try:
        from numbagrad import nn
        from numbagrad.nn.parallel import DistributedDataParallel as DDP  # noqa: N817
    except ImportError:
        return "skip: numbagrad.nn.parallel not available"
    per_rank, steps = 4, 3

    def model(seed):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)).double()

    ref = model(0)
    for step in range(steps):
        x, _ = batch(step, world * per_rank)
        x = x[:, :5]
        ref.zero_grad()
        (ref(x) ** 2).mean().backward()
        with torch.no_grad():
            for p in ref.parameters():
                p -= 0.1 * p.grad
    ddp = DDP(model(rank))  # rank 1 starts elsewhere: DDP broadcasts rank 0's
    for step in range(steps):
        x, _ = batch(step, world * per_rank)
        xs = x[rank * per_rank : (rank + 1) * per_rank, :5]
        ddp.zero_grad()
        (ddp(xs) ** 2).mean().backward()
        with torch.no_grad():
            for p in ddp.parameters():
                p -= 0.1 * p.grad
    for p, r in zip(ddp.module.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), r.detach().numpy(), rtol=0, atol=1e-12)
    assert next(iter(ddp.state_dict())) == "module.0.weight"

    class WithBuffer(nn.Module):
        def __init__(self, value):
            super().__init__()
            self.lin = nn.Linear(2, 1)
            self.register_buffer("stat", torch.full((2,), value))

        def forward(self, x):
            return self.lin(x) + self.stat.sum()

    m = DDP(WithBuffer(float(rank + 3)))
    assert m.module.stat.tolist() == [3.0, 3.0]  # rank 0's buffer, at construction
    with torch.no_grad():
        m.module.stat += rank
    m(torch.ones(1, 2)).sum().backward()  # broadcast again at the start of forward
    assert m.module.stat.tolist() == [3.0, 3.0]
    w0 = m.module.lin.weight.detach().numpy().copy()
    with m.no_sync():
        m(torch.full((1, 2), float(rank))).sum().backward()
    # locally accumulated: rank 0 added x = 0, rank 1 added x = 1, not yet averaged
    np.testing.assert_allclose(m.module.lin.weight.grad.numpy(), [[1.0 + rank] * 2])
    m(torch.ones(1, 2)).sum().backward()
    np.testing.assert_allclose(m.module.lin.weight.grad.numpy(), [[2.5, 2.5]])
    np.testing.assert_array_equal(m.module.lin.weight.detach().numpy(), w0)
    return "ok"


@case("ddp_find_unused_parameters")
def _(rank, world):
    try:
        from numbagrad import nn
        from numbagrad.nn.parallel import DistributedDataParallel as DDP  # noqa: N817
    except ImportError:
        return "skip: numbagrad.nn.parallel not available"

    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(3, 4)
            self.a = nn.Linear(4, 1)
            self.b = nn.Linear(4, 1)  # used on rank 1 only
            self.c = nn.Linear(4, 1)  # used nowhere

        def forward(self, x, use_b):
            h = torch.tanh(self.trunk(x))
            return self.a(h) + self.b(h) if use_b else self.a(h)

    x = torch.from_numpy(data(rank, (5, 3), np.float64))
    use_b = rank == 1
    for cap in (25.0, 1e-6):
        torch.manual_seed(0)
        ref = Heads().double()
        ref(x, use_b).sum().backward()  # this rank's own gradients
        torch.manual_seed(0)
        model = DDP(Heads().double(), find_unused_parameters=True, bucket_cap_mb=cap)
        for _ in range(2):  # the second step checks that the state was reset
            model.zero_grad()
            model(x, use_b).sum().backward()
            for (name, p), r in zip(model.module.named_parameters(), ref.parameters()):
                local = r.grad if r.grad is not None else torch.zeros_like(r)
                every = [torch.zeros_like(r) for _ in range(world)]
                dist.all_gather(every, local)
                if name.startswith("c."):
                    assert p.grad is None, name
                else:
                    want = sum(e.numpy() for e in every) / world
                    np.testing.assert_allclose(p.grad.numpy(), want, rtol=0, atol=1e-15)
        with torch.no_grad():  # no backward follows: no preparation
            model(x, True)
        model.zero_grad()
        model(x, use_b).sum().backward()
    return "ok"


def main():
    from mpi4py import MPI

    out = sys.argv[1]
    names = sys.argv[2:] or list(CASES)
    dist.init_process_group("mpi", timeout=TIMEOUT)
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 2, "run with mpiexec -n 2"
    results = {}
    for name in names:
        try:
            r = CASES[name](rank, world)
            results[name] = r if isinstance(r, str) else "ok"
        except Exception:
            results[name] = traceback.format_exc()
        MPI.COMM_WORLD.Barrier()
    dist.destroy_process_group()
    every = MPI.COMM_WORLD.gather(results, root=0)
    if rank == 0:
        merged = {n: [every[r][n] for r in range(world)] for n in names}
        with open(out, "w") as f:
            json.dump(merged, f)


if __name__ == "__main__":
    main()
