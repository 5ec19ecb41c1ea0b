"""Collectives and point-to-point on tensors, in place, as in ``torch.distributed``.

A tensor travels as its flat storage: a C-contiguous tensor's ``_data`` (an ndarray, a
buffer-protocol object) goes to MPI as it is, with no copy; a strided view is packed into
a contiguous buffer first and unpacked after completion. Outputs are written, and their
version counters bumped (they were changed in place), when the operation completes: at
once for a blocking call, at ``Work.wait()`` for ``async_op=True`` (timeouts: NOTE [MPI
backend] in ``_process_group.py``).

NOTE [Point-to-point]
``send`` first sends a header (a sequence number, the dtype and the shape) on the group's
header communicator with the user's tag, then the data on the data communicator with the
sequence number as its tag. The receiver reads the header, checks dtype and shape, and only
then posts the data receive, from that sender with that sequence number: a mismatched
send/recv raises on the receiving rank (after draining the message) instead of truncating
or hanging, and several ``irecv`` outstanding from one sender match the right messages
whatever order they are waited in.
"""

from __future__ import annotations

import zlib

import numpy as np

from numbagrad._tensor import Tensor
from numbagrad.distributed import _process_group as P
from numbagrad.distributed._process_group import ReduceOp, Work

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "gather",
    "irecv",
    "isend",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]

_DTYPES = (
    np.dtype(np.float32),
    np.dtype(np.float64),
    np.dtype(np.int32),
    np.dtype(np.int64),
    np.dtype(np.bool_),
)
_TYPES = frozenset(d.type for d in _DTYPES)
_MAX_NDIM = 32
_SEQ_MOD = 32767  # the smallest MPI_TAG_UB the standard allows


def _array(t, what, name="tensor"):
    """The ndarray a tensor argument views, checked."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {name} must be a numbagrad Tensor, got {type(t).__name__}")
    if t._is_tracer:
        raise RuntimeError(
            f"{what}: {name} is a value inside a transform (vmap, grad, jvp); "
            "collectives run on concrete tensors, outside numbagrad.func "
            "transforms"
        )
    a = t._data
    if a.dtype.type not in _TYPES:
        raise TypeError(
            f"{what}: {name} has dtype {a.dtype}, which the MPI backend does not "
            "send; use float32, float64, int32, int64 or bool"
        )
    return a


def _inout(t, what, name="tensor"):
    """A contiguous buffer MPI may write for tensor ``t`` (``t``'s own memory when ``t``
    is contiguous, else a packed copy)."""
    a = _array(t, what, name)
    if not a.flags.writeable:
        raise ValueError(f"{what}: {name} is read-only and cannot receive the result")
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _in(t, what, name="tensor"):
    """A contiguous buffer MPI reads for tensor ``t`` (no copy when contiguous)."""
    a = _array(t, what, name)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _desc(a):
    """The dtype and shape of ``a`` for the cross-rank check."""
    return f"{a.dtype} {tuple(a.shape)}"


_SIGS: dict = {}  # (call, arguments, dtype, shape) -> CRC32, the cross-rank check's signature


def _check(pg, what, extra, a):
    """The cross-rank check (NOTE [Cross-rank check]) of a call on array ``a``; ``extra``
    holds its other arguments (op, root)."""
    key = (what, extra, a.dtype.char, a.shape)
    sig = _SIGS.get(key)
    if sig is None:
        if len(_SIGS) > 4096:
            _SIGS.clear()
        sig = _SIGS[key] = zlib.crc32(repr(key).encode())
    P._check_same(
        pg, lambda: " ".join(filter(None, (what, extra, _desc(a)))), what, pg._deadline(), sig
    )


def _written(t, buf, divide=None):
    """The completion step for output ``t`` received into ``buf``: divide (AVG), unpack
    a packed copy, bump the version."""

    def finish():
        if divide is not None:
            np.divide(buf, buf.dtype.type(divide), out=buf)
        if buf is not t._data:
            t._data[...] = buf
        t._storage[1] += 1

    return finish


def _op(name, *args, **kwargs):
    """A collective to run: the mpi4py method name in lower case and its arguments."""
    return name, args, kwargs


def _run(pg, call, what, finish, outputs, async_op, keep):
    """Run collective ``call``: non-blocking (``Iallreduce``...) wrapped in a Work for
    ``async_op``, else the blocking call (``Allreduce``...) and its completion step.

    A blocking call needs no timeout of its own: the cross-rank check before it (NOTE
    [Cross-rank check]) waits, with the timeout, for every rank to reach the call, and MPI's
    blocking collectives are the fastest path (the non-blocking ones lose ~10-30 % on
    mid-sized buffers on MPICH)."""
    name, args, kwargs = call
    if async_op:
        req = getattr(pg._comm, "I" + name)(*args, **kwargs)
        return Work(pg, [req], what, finish, outputs, keep)
    getattr(pg._comm, name.capitalize())(*args, **kwargs)
    if finish is not None:
        finish()
    return None


def _root(pg, rank, group_rank, what, name):
    """The group rank of a root given as a global rank or as ``group_<name>``."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"{what}: can not specify both {name} and group_{name}")
    if group_rank is not None:
        if not isinstance(group_rank, int) or not 0 <= group_rank < pg.size():
            raise ValueError(
                f"{what}: group_{name}={group_rank!r} is not a rank of the group (size {pg.size()})"
            )
        return group_rank
    if rank is None:
        raise ValueError(f"{what}: must specify either {name} or group_{name}")
    if rank not in pg._ranks:
        raise ValueError(
            f"{what}: {name}={rank!r} is not a member of the group (global ranks {pg._ranks})"
        )
    return pg._ranks.index(rank)


def _start(group, what):
    """The group a call runs on, or None where this rank is not a member."""
    pg = P._resolve(group, what)
    return None if P._not_member(pg, what) else pg


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across all ranks, in place, so every rank holds the result.

    Parameters
    ----------
    tensor : Tensor
        Input and output (contiguous tensors are sent without a copy).
    op : ReduceOp
        ``SUM`` (default), ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``.
    group : ProcessGroup, optional
        Default: the world.
    async_op : bool
        Return a :class:`Work` to ``wait()`` on instead of blocking.

    Returns
    -------
    Work or None

    Raises
    ------
    RuntimeError
        When the ranks passed different shapes, dtypes or ops (on every rank).

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = numbagrad.tensor([1.0, 2.0])  # under mpiexec -n N each rank adds its own
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)
    >>> t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "all_reduce")
    if pg is None:
        return None
    buf = _inout(tensor, "all_reduce")
    mop = P._mpi_op(op, buf.dtype)
    _check(pg, "all_reduce", f"op={op._name_}", buf)
    call = _op("allreduce", P._MPI.IN_PLACE, buf, op=mop)
    div = pg.size() if op is ReduceOp.AVG else None
    return _run(pg, call, "all_reduce", _written(tensor, buf, div), [tensor], async_op, (buf,))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` from rank ``src`` into ``tensor`` on every other rank.

    Parameters
    ----------
    tensor : Tensor
        Data to send on ``src``; receives it elsewhere.
    src : int
        Global rank of the sender (or ``group_src``, its rank in ``group``).
    group, async_op
        As in :func:`all_reduce`.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = numbagrad.tensor([3, 4])
    >>> dist.broadcast(t, src=0)
    >>> t
    tensor([3, 4])
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "broadcast", "src")
    buf = _inout(tensor, "broadcast")
    _check(pg, "broadcast", f"src={root}", buf)
    call = _op("bcast", buf, root=root)
    if pg.rank() == root:
        return _run(pg, call, "broadcast", None, [tensor], async_op, (buf,))
    return _run(pg, call, "broadcast", _written(tensor, buf), [tensor], async_op, (buf,))


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` across ranks into ``tensor`` on rank ``dst`` (others unchanged).

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = numbagrad.tensor([1.5, -2.0])
    >>> dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    >>> t
    tensor([ 1.5000, -2.0000])
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "reduce", "dst")
    mpi = P._MPI
    if pg.rank() == root:
        buf = _inout(tensor, "reduce")
    else:
        buf = _in(tensor, "reduce")
    mop = P._mpi_op(op, buf.dtype)
    _check(pg, "reduce", f"dst={root} op={op._name_}", buf)
    if pg.rank() == root:
        call = _op("reduce", mpi.IN_PLACE, buf, op=mop, root=root)
        div = pg.size() if op is ReduceOp.AVG else None
        return _run(pg, call, "reduce", _written(tensor, buf, div), [tensor], async_op, (buf,))
    call = _op("reduce", buf, None, op=mop, root=root)
    return _run(pg, call, "reduce", None, [tensor], async_op, (buf,))


def _check_list(lst, like, n, what, name):
    """``lst`` must be ``n`` tensors with the shape and dtype of array ``like``."""
    if not isinstance(lst, (list, tuple)) or len(lst) != n:
        got = len(lst) if isinstance(lst, (list, tuple)) else type(lst).__name__
        raise ValueError(f"{what}: {name} must be a list of {n} tensors (one per rank), got {got}")
    for i, t in enumerate(lst):
        a = _array(t, what, f"{name}[{i}]")
        if a.shape != like.shape or a.dtype != like.dtype:
            raise ValueError(
                f"{what}: {name}[{i}] is {_desc(a)} but the tensor is {_desc(like)}; all must match"
            )


def _unpack_rows(lst, rows):
    """The completion step writing ``rows[i]`` into tensor ``lst[i]``."""

    def finish():
        for t, r in zip(lst, rows):
            t._data[...] = r
            t._storage[1] += 1

    return finish


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather ``tensor`` from every rank into ``tensor_list`` (one tensor per rank) on all.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [numbagrad.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.all_gather(out, numbagrad.tensor([1.0, 2.0]))
    >>> out
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "all_gather")
    if pg is None:
        return None
    send = _in(tensor, "all_gather")
    _check_list(tensor_list, send, pg.size(), "all_gather", "tensor_list")
    for t in tensor_list:
        _inout(t, "all_gather", "tensor_list entry")
    _check(pg, "all_gather", "", send)
    recv = np.empty((pg.size(), *send.shape), dtype=send.dtype)
    call = _op("allgather", send, recv)
    return _run(
        pg, call, "all_gather", _unpack_rows(tensor_list, recv), tensor_list, async_op, (send, recv)
    )


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather ``input_tensor`` from every rank, concatenated along dim 0 (or stacked) into
    ``output_tensor``, which holds ``world_size`` times as many elements.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = numbagrad.zeros(dist.get_world_size() * 2)
    >>> dist.all_gather_into_tensor(out, numbagrad.tensor([5.0, 6.0]))
    >>> out
    tensor([5., 6.])
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "all_gather_into_tensor")
    if pg is None:
        return None
    what = "all_gather_into_tensor"
    send = _in(input_tensor, what, "input_tensor")
    out = _inout(output_tensor, what, "output_tensor")
    if out.dtype != send.dtype or out.size != send.size * pg.size():
        raise ValueError(
            f"{what}: output_tensor ({_desc(out)}) must have the input's dtype "
            f"and world_size ({pg.size()}) times its {send.size} elements"
        )
    _check(pg, what, "", send)
    call = _op("allgather", send, out)
    return _run(
        pg, call, what, _written(output_tensor, out), [output_tensor], async_op, (send, out)
    )


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` across ranks and give rank ``i`` the ``i``-th block of the result
    (``input`` holds ``world_size`` times ``output``'s elements).

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = numbagrad.zeros(2)
    >>> dist.reduce_scatter_tensor(out, numbagrad.tensor([7.0, 8.0]))
    >>> out
    tensor([7., 8.])
    >>> dist.destroy_process_group()
    """
    what = "reduce_scatter_tensor"
    pg = _start(group, what)
    if pg is None:
        return None
    send = _in(input, what, "input")
    out = _inout(output, what, "output")
    if out.dtype != send.dtype or send.size != out.size * pg.size():
        raise ValueError(
            f"{what}: input ({_desc(send)}) must have the output's dtype and "
            f"world_size ({pg.size()}) times its {out.size} elements"
        )
    mop = P._mpi_op(op, out.dtype)
    _check(pg, what, f"op={op._name_}", out)
    call = _op("reduce_scatter_block", send, out, op=mop)
    div = pg.size() if op is ReduceOp.AVG else None
    return _run(pg, call, what, _written(output, out, div), [output], async_op, (send, out))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Gather ``tensor`` from every rank into ``gather_list`` on rank ``dst``.

    ``gather_list`` (one tensor per rank) is given on ``dst`` only.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [numbagrad.zeros(2, dtype=numbagrad.int64)]
    >>> dist.gather(numbagrad.tensor([1, 2]), out, dst=0)
    >>> out
    [tensor([1, 2])]
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "gather")
    if pg is None:
        return None
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst, "gather", "dst")
    send = _in(tensor, "gather")
    me = pg.rank()
    if me == root:
        if gather_list is None:
            raise ValueError("gather: gather_list must be specified on the destination rank")
        _check_list(gather_list, send, pg.size(), "gather", "gather_list")
        for t in gather_list:
            _inout(t, "gather", "gather_list entry")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    _check(pg, "gather", f"dst={root}", send)
    if me == root:
        recv = np.empty((pg.size(), *send.shape), dtype=send.dtype)
        call = _op("gather", send, recv, root=root)
        return _run(
            pg, call, "gather", _unpack_rows(gather_list, recv), gather_list, async_op, (send, recv)
        )
    call = _op("gather", send, None, root=root)
    return _run(pg, call, "gather", None, [], async_op, (send,))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Send ``scatter_list[i]`` from rank ``src`` into ``tensor`` on rank ``i``.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = numbagrad.zeros(2)
    >>> dist.scatter(t, [numbagrad.tensor([9.0, 1.0])], src=0)
    >>> t
    tensor([9., 1.])
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "scatter")
    if pg is None:
        return None
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, "scatter", "src")
    buf = _inout(tensor, "scatter")
    me = pg.rank()
    send = None
    if me == root:
        if scatter_list is None:
            raise ValueError("scatter: scatter_list must be specified on the source rank")
        _check_list(scatter_list, buf, pg.size(), "scatter", "scatter_list")
        send = np.stack([t._data for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    _check(pg, "scatter", f"src={root}", buf)
    call = _op("scatter", send, buf, root=root)
    return _run(pg, call, "scatter", _written(tensor, buf), [tensor], async_op, (send, buf))


def barrier(group=None, async_op=False, timeout=None):
    """Block until every rank of ``group`` reached the barrier.

    ``timeout`` (a ``timedelta``) overrides the group's.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    pg = _start(group, "barrier")
    if pg is None:
        return None
    w = Work(pg, [pg._comm.Ibarrier()], "barrier")
    if async_op:
        return w
    w.wait(timeout)
    return None


# -- point-to-point (NOTE [Point-to-point]) -------------------------------------------------


def _p2p(group, peer, group_peer, tag, what, name):
    """The group and the peer's group rank of a send or recv."""
    pg = _start(group, what)
    if pg is None:
        return None, None
    if not isinstance(tag, int) or isinstance(tag, bool) or not 0 <= tag <= 32767:
        raise ValueError(f"{what}: tag must be an int in [0, 32767], got {tag!r}")
    if peer is None and group_peer is None:
        return pg, None
    r = _root(pg, peer, group_peer, what, name)
    if r == pg.rank():
        role = "destination" if name == "dst" else "source"
        raise ValueError(
            f"Invalid {role} rank: {role} rank should not be the same as the "
            "rank of the current process."
        )
    return pg, r


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` without blocking; returns a :class:`Work`.

    The matching ``recv`` must pass a tensor of the same shape and dtype (checked there).
    """
    pg, peer = _p2p(group, dst, group_dst, tag, "isend", "dst")
    if pg is None:
        return None
    if peer is None:
        raise ValueError("isend: must specify either dst or group_dst")
    buf = _in(tensor, "isend")
    if buf.ndim > _MAX_NDIM or buf.dtype not in _DTYPES:
        raise ValueError(f"isend: cannot send a {_desc(buf)} tensor")
    seq = pg._send_seq.get(peer, 0)
    pg._send_seq[peer] = (seq + 1) % _SEQ_MOD
    hdr = np.zeros(3 + _MAX_NDIM, dtype=np.int64)
    hdr[0] = seq
    hdr[1] = _DTYPES.index(buf.dtype)
    hdr[2] = buf.ndim
    hdr[3 : 3 + buf.ndim] = buf.shape
    reqs = [pg._hdr.Isend(hdr, dest=peer, tag=tag), pg._comm.Isend(buf, dest=peer, tag=seq)]
    return Work(pg, reqs, "send", None, [tensor], (hdr, buf))


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    """Send ``tensor`` to rank ``dst`` (blocks until the data left this buffer).

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> if dist.get_world_size() > 1:  # rank 0 sends to rank 1, which calls dist.recv
    ...     dist.send(numbagrad.ones(3), dst=1)
    >>> dist.destroy_process_group()
    """
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


class _RecvWork(Work):
    """A receive in two steps: the header, then (checked) the data (NOTE
    [Point-to-point])."""

    def __init__(self, pg, tensor, peer, tag):
        mpi = P._MPI
        buf = _inout(tensor, "recv")
        self._hdr_buf = np.zeros(3 + _MAX_NDIM, dtype=np.int64)
        self._statuses = [mpi.Status()]
        src = mpi.ANY_SOURCE if peer is None else peer
        req = pg._hdr.Irecv(self._hdr_buf, source=src, tag=tag)
        super().__init__(pg, [req], "recv", None, [tensor], ())
        self._tensor = tensor
        self._buf = buf
        self._phase = 0
        self._error = None
        self.source = None

    def _on_header(self):
        """Check the header and post the data receive (into a scratch buffer on a
        mismatch, so the message is still drained)."""
        h = self._hdr_buf
        src = self._statuses[0].Get_source()
        self.source = self._pg._ranks[src]
        dtype = _DTYPES[int(h[1])]
        shape = tuple(int(s) for s in h[3 : 3 + int(h[2])])
        target = self._buf
        if dtype != target.dtype or shape != target.shape:
            self._error = (
                f"recv: rank {self.source} sent a {dtype} {shape} tensor but this "
                f"rank receives into a {_desc(target)} one; send and recv must use "
                "the same shape and dtype"
            )
            target = np.empty(shape, dtype=dtype)
        self._reqs = [self._pg._comm.Irecv(target, source=src, tag=int(h[0]))]
        self._keep = (target,)
        self._phase = 1

    def _finish_recv(self):
        self._phase = 2
        self._done = True
        self._keep = ()
        if self._error is not None:
            raise RuntimeError(self._error)
        _written(self._tensor, self._buf)()

    def wait(self, timeout=None) -> bool:
        """Block until the tensor arrived; raise if the sender's shape or dtype differ."""
        deadline = self._pg._deadline(timeout)
        if self._phase == 0:
            P._wait(self._pg, self._reqs, deadline, "recv", self._statuses)
            self._on_header()
        if self._phase == 1:
            P._wait(self._pg, self._reqs, deadline, "recv")
            self._finish_recv()
        return True

    def is_completed(self) -> bool:
        test = P._MPI.Request.Testall
        if self._phase == 0 and test(self._reqs, self._statuses):
            self._on_header()
        if self._phase == 1 and test(self._reqs):
            self._finish_recv()
        return self._phase == 2


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank if None) without blocking.

    Returns a :class:`Work`; its ``source`` attribute is the sender's global rank after
    ``wait()``.
    """
    pg, peer = _p2p(group, src, group_src, tag, "irecv", "src")
    if pg is None:
        return None
    return _RecvWork(pg, tensor, peer, tag)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's
    rank.

    Raises
    ------
    RuntimeError
        When the sender's tensor has another shape or dtype (``tensor`` is left unchanged).

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> if dist.get_rank() == 1:  # under mpiexec -n 2, with rank 0 calling dist.send
    ...     dist.recv(numbagrad.zeros(3), src=0)
    >>> dist.destroy_process_group()
    """
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w.source
