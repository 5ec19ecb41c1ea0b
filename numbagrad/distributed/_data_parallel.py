"""Data-parallel gradients: bucketed, overlapped gradient averaging on post-accumulate hooks.

NOTE [Gradient buckets]
As PyTorch's ``Reducer``: parameters are grouped, in reverse order of registration (the
order backward usually produces their gradients), into buckets of one dtype and at most
``bucket_cap_mb`` megabytes (the first bucket 1 MB, so communication starts early). Each
parameter carries a post-accumulate-grad hook; when the last gradient of a bucket has
been accumulated, the bucket's gradients are packed into one flat buffer and a
non-blocking ``Iallreduce`` starts, while backward goes on with the rest of the graph.
Buckets are launched in bucket order on every rank (a bucket that fills early waits for
the ones before it), because MPI requires the same order of collectives everywhere. When
the last bucket has been launched, all are waited for and the averaged gradients are
written back into each ``.grad`` in place. MPI makes progress on pending collectives when
it is called, so every hook also tests the pending requests; MPICH's
``MPIR_CVAR_ASYNC_PROGRESS=1`` adds a progress thread for more overlap.

The whole accumulated ``.grad`` is averaged, so gradients accumulated locally under
``no_sync()`` are included in the next synchronised backward, as in PyTorch.
"""

from __future__ import annotations

import contextlib

import numpy as np

from numbagrad._tensor import Tensor
from numbagrad.distributed import _process_group as P

__all__ = ["DataParallel"]

_FIRST_BUCKET_BYTES = 1 << 20  # torch.distributed's _DEFAULT_FIRST_BUCKET_BYTES


class _Bucket:
    """Parameters whose gradients are averaged by one all-reduce."""

    __slots__ = ("buf", "offsets", "params", "ready")

    def __init__(self, params):
        self.params = params
        sizes = [p._data.size for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.buf = np.empty(int(self.offsets[-1]), dtype=params[0]._data.dtype)
        self.ready = 0

    def views(self):
        """(param, flat slice of the buffer) pairs."""
        o = self.offsets
        return [(p, self.buf[o[i] : o[i + 1]]) for i, p in enumerate(self.params)]


class DataParallel:
    """Average the gradients of ``params`` across the ranks of a group during backward.

    The functional core of ``DistributedDataParallel`` for code that manages its own
    parameters. At construction the parameters are checked to have the same shapes and
    dtypes on every rank and are broadcast from the group's rank 0. During each
    ``backward()``, gradients are all-reduced in buckets as soon as a bucket's gradients
    are ready (NOTE [Gradient buckets]), overlapping communication with the rest of the
    backward; when backward returns, every ``.grad`` holds the average over the ranks.
    Training on N ranks with a per-rank batch of B (and a loss that is a mean over the
    batch) then gives the parameters one process gets with the batch of N·B.

    Parameters
    ----------
    params : iterable of Tensor
        Leaf tensors with ``requires_grad=True``, in the same order on every rank. Each
        must receive a gradient in every synchronised backward, unless
        :meth:`prepare_for_backward` was called for it.
    group : ProcessGroup, optional
        The ranks to average over (default: the world).
    bucket_cap_mb : float
        Bucket size in megabytes (PyTorch's default, 25).
    broadcast_parameters : bool
        Copy rank 0's parameter values to every rank at construction (default True).

    Raises
    ------
    RuntimeError
        When the parameters' shapes or dtypes differ across ranks, or when a backward
        starts before the previous one delivered a gradient to every parameter.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> w = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    >>> dp = dist.DataParallel([w])
    >>> (w * w).sum().backward()  # under mpiexec -n N: the mean of the ranks' gradients
    >>> w.grad
    tensor([2., 4.])
    >>> with dp.no_sync():  # accumulate locally, averaged at the next synchronised step
    ...     (w * w).sum().backward()
    >>> dp.remove()
    >>> dist.destroy_process_group()
    """

    def __init__(self, params, group=None, bucket_cap_mb=25.0, broadcast_parameters=True):
        if isinstance(params, Tensor):
            raise TypeError(
                "DataParallel expects an iterable of tensors, got a single Tensor: pass [tensor]"
            )
        pg = P._resolve(group, "DataParallel")
        if not pg._usable("DataParallel"):
            raise ValueError("DataParallel: this rank is not a member of the given group")
        if not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        plist, seen = [], set()
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"DataParallel: parameter {i} is a {type(p).__name__}, not a Tensor"
                )
            if not p.requires_grad or p.grad_fn is not None:
                raise ValueError(
                    f"DataParallel: parameter {i} must be a leaf tensor with requires_grad=True"
                )
            if p._data.dtype.kind != "f":
                raise ValueError(
                    f"DataParallel: parameter {i} has dtype {p.dtype}; gradients are floating point"
                )
            if id(p) not in seen:
                seen.add(id(p))
                plist.append(p)
        if not plist:
            raise ValueError("DataParallel: no parameters given")
        self._pg = pg
        self._params = plist
        desc = "DataParallel " + ";".join(f"{p._data.dtype}{tuple(p.shape)}" for p in plist)
        P._check_same(pg, desc, "DataParallel (parameters differ across ranks)", pg._deadline())
        self._buckets = _make_buckets(plist, bucket_cap_mb)
        self._where = {}
        for b, bucket in enumerate(self._buckets):
            for p in bucket.params:
                self._where[id(p)] = b
        if broadcast_parameters:
            self._broadcast()
        self._sync = True
        self._marked = set()  # ids of the parameters ready in this backward
        self._used = set()  # ids of those that got a gradient (not marked unused)
        self._track_unused = False  # prepare_for_backward ran for this backward
        self._next = 0  # the next bucket to launch
        self._pending = []  # (bucket, request) in flight
        self._handles = [p.register_post_accumulate_grad_hook(self._hook) for p in plist]

    @property
    def parameters(self) -> list:
        """The parameters, deduplicated, in the order given."""
        return list(self._params)

    def _broadcast(self):
        """Copy the group's rank 0 parameter values to all ranks, one bucket at a time."""
        for bucket in self._buckets:
            for p, v in bucket.views():
                v[...] = p._data.reshape(-1)
            P._wait(
                self._pg,
                [self._pg._comm.Ibcast(bucket.buf, root=0)],
                self._pg._deadline(),
                "DataParallel parameter broadcast",
            )
            if self._pg.rank() != 0:
                for p, v in bucket.views():
                    p._data[...] = v.reshape(p._data.shape)
                    p._storage[1] += 1

    @contextlib.contextmanager
    def no_sync(self):
        """Within it, backward accumulates gradients locally without communication.

        The next backward outside it averages the accumulated gradients."""
        old = self._sync
        self._sync = False
        try:
            yield
        finally:
            self._sync = old

    def prepare_for_backward(self, outputs) -> None:
        """Let the next backward skip the parameters ``outputs`` do not depend on.

        Call it with the forward's outputs (a tensor, or a list, tuple or dict of them)
        before ``backward()`` when some parameters may take no part in a step (PyTorch's
        ``find_unused_parameters=True``; ``DistributedDataParallel`` calls it for you). The
        parameters the autograd graph of ``outputs`` does not reach count as ready at once,
        with a zero gradient (or their existing ``.grad``); after the averaging, a parameter
        that no rank used keeps its ``.grad``, one used elsewhere gets the average.

        Examples
        --------
        >>> import numbagrad, numbagrad.distributed as dist
        >>> dist.init_process_group("mpi")
        >>> a = numbagrad.ones(2, requires_grad=True)
        >>> b = numbagrad.ones(2, requires_grad=True)
        >>> dp = dist.DataParallel([a, b])
        >>> loss = (3 * a).sum()  # b unused in this step
        >>> dp.prepare_for_backward(loss)
        >>> loss.backward()
        >>> print(a.grad, b.grad)
        tensor([3., 3.]) None
        >>> dp.remove()
        >>> dist.destroy_process_group()
        """
        if not self._sync:
            return
        reached = set()
        stack, seen = [], set()
        for t in _tensors(outputs):
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad:
                reached.add(id(t))
        while stack:  # iterative: deep graphs do not hit the recursion limit
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)  # an AccumulateGrad node: a leaf
            if var is not None:
                reached.add(id(var))
                continue
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        self._track_unused = True
        for p in self._params:
            if id(p) not in reached:
                self._mark(p, used=False)

    def _hook(self, p):
        """Post-accumulate-grad hook: mark ``p`` ready (NOTE [Gradient buckets])."""
        if not self._sync:
            return
        if p._grad is None or p._grad._requires_grad:
            raise RuntimeError(
                "DataParallel does not support create_graph=True (double "
                "backward through the gradient averaging)"
            )
        self._mark(p, used=True)

    def _mark(self, p, used):
        """Count ``p`` as ready; launch the buckets that are full, in bucket order."""
        key = id(p)
        if key in self._marked:
            self._reset()
            raise RuntimeError(
                "DataParallel: a gradient for the same parameter arrived twice before every "
                "parameter got one: either a backward started before the previous one "
                "reached all parameters (a parameter unused in that step: pass "
                "find_unused_parameters=True to DistributedDataParallel, call "
                "DataParallel.prepare_for_backward(outputs) before backward, or leave the "
                "unused parameters out), or backward ran twice on one graph (use no_sync() "
                "for the first)"
            )
        self._marked.add(key)
        if used:
            self._used.add(key)
        self._buckets[self._where[key]].ready += 1
        buckets = self._buckets
        comm = self._pg._comm
        mpi = P._MPI
        while self._next < len(buckets) and buckets[self._next].ready == len(
            buckets[self._next].params
        ):
            bucket = buckets[self._next]
            for q, v in bucket.views():
                if q._grad is None:  # an unused parameter without a gradient
                    v[...] = 0
                else:
                    v[...] = q._grad._data.reshape(-1)
            self._pending.append((bucket, comm.Iallreduce(mpi.IN_PLACE, bucket.buf, op=mpi.SUM)))
            self._next += 1
        if self._pending:
            mpi.Request.Testall([r for _, r in self._pending])  # let MPI progress
        if self._next == len(buckets):
            self._finish()

    def _finish(self):
        """Wait for every bucket and write the averages into the gradients."""
        pending, self._pending = self._pending, []
        reqs = [r for _, r in pending]
        used = None
        if self._track_unused:  # which parameters some rank used
            used = np.array([id(p) in self._used for p in self._params], dtype=np.int32)
            reqs.append(self._pg._comm.Iallreduce(P._MPI.IN_PLACE, used, op=P._MPI.MAX))
        try:
            P._wait(self._pg, reqs, self._pg._deadline(), "DataParallel gradient all-reduce")
        finally:
            self._reset()
        used_anywhere = None if used is None else {id(p) for p, u in zip(self._params, used) if u}
        n = self._pg.size()
        for bucket, _ in pending:
            if n != 1:
                np.divide(bucket.buf, bucket.buf.dtype.type(n), out=bucket.buf)
            for q, v in bucket.views():
                if used_anywhere is not None and id(q) not in used_anywhere:
                    continue  # no rank used it: its .grad stays as it was
                g = q._grad
                if g is None:
                    q._grad = Tensor._make(v.reshape(q._data.shape).copy())
                else:
                    g._data[...] = v.reshape(g._data.shape)
                    g._storage[1] += 1

    def _reset(self):
        """Start a new step."""
        self._marked = set()
        self._used = set()
        self._track_unused = False
        self._next = 0
        for bucket in self._buckets:
            bucket.ready = 0

    def remove(self) -> None:
        """Remove the gradient hooks (the parameters train locally again)."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def __repr__(self):
        sizes = [len(b.params) for b in self._buckets]
        return (
            f"DataParallel({len(self._params)} parameters, world size {self._pg.size()}, "
            f"buckets of {sizes} parameters)"
        )


def _make_buckets(params, cap_mb):
    """Buckets in reverse parameter order, one dtype each, by size (NOTE [Gradient
    buckets])."""
    cap = int(cap_mb * (1 << 20))
    buckets, current = [], {}
    limit = min(_FIRST_BUCKET_BYTES, cap)
    for p in reversed(params):
        dt = p._data.dtype
        cur = current.setdefault(dt, [[], 0])
        cur[0].append(p)
        cur[1] += p._data.nbytes
        if cur[1] >= limit:
            buckets.append(_Bucket(cur[0]))
            del current[dt]
            limit = cap
    for lst, _ in current.values():
        buckets.append(_Bucket(lst))
    return buckets


def _tensors(outputs):
    """The tensors in ``outputs`` (a tensor, or nested lists, tuples and dicts of them)."""
    stack, found = [outputs], []
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    return found
