"""Process groups on MPI (mpi4py), work handles, timeouts and the cross-rank argument check.

NOTE [MPI backend]
mpi4py is imported on first use (``is_available``/``init_process_group``), never at
``import numbagrad``. A process group wraps an MPI communicator: the default group a
``Dup`` of ``COMM_WORLD`` (so ``destroy_process_group`` can free it and user code on
``COMM_WORLD`` never matches our messages), ``new_group`` a ``Split`` of it. Each group
holds a second duplicate for the headers of ``send``/``recv`` (NOTE [Point-to-point]).

Whatever waits on peers is bounded by the group's timeout: the cross-rank check before
each collective, barriers, point-to-point messages and ``async_op=True`` collectives are
issued non-blocking (``Iallreduce``, ``Ibarrier``, ``Isend``, ...) and completed by
``_wait``, which polls them until the deadline, so a rank that never reaches the matching
call raises ``DistBackendError`` instead of hanging forever. A blocking collective runs
MPI's blocking call only after its check passed, that is once every rank has reached it.
MPI cannot cancel a collective, so a group that timed out is marked broken and refuses
further work.

NOTE [Cross-rank check]
Before a collective runs, the ranks agree that they called the same operation with the
same dtype, shape, root and reduce op: each rank reduces ``[sig, -sig]`` (a CRC32 of that
description) with ``MAX``; equal signatures everywhere give ``max == sig == min``. On a
mismatch every rank sees it at once, so all of them gather the descriptions (one small
``allgather``) and raise the same error naming each rank's arguments; the data
collective, which MPI would run into a hang or a truncation error, never starts. The check
costs one 16-byte allreduce per call; ``DataParallel`` checks its buckets once, at
construction, and skips it per step.
"""

from __future__ import annotations

import datetime
import enum
import os
import time
import warnings
import zlib
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "ProcessGroup",
    "ReduceOp",
    "Work",
]

_INSTALL_HINT = "pip install mpi4py mpich"
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch's default_pg_timeout
_MPI: Any = None  # the mpi4py.MPI module, once imported
_SPIN_SECONDS = 2.0  # how long _wait polls without sleeping


class DistError(RuntimeError):
    """Base class of numbagrad.distributed's errors (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The MPI backend failed or timed out (``torch.distributed.DistBackendError``)."""


def _import_mpi():
    """The ``mpi4py.MPI`` module, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:  # mpi4py missing, or its MPI library missing
            raise RuntimeError(
                "numbagrad.distributed's 'mpi' backend needs mpi4py and an MPI library, which "
                f"could not be imported ({e}); install both with `{_INSTALL_HINT}` and launch "
                "scripts with `mpiexec -n N python script.py`"
            ) from e
        _MPI = MPI
    return _MPI


class Backend(str):
    """A backend name (``torch.distributed.Backend``); numbagrad implements ``"mpi"``.

    Examples
    --------
    >>> from numbagrad.distributed import Backend
    >>> print(Backend("MPI"), Backend.MPI == "mpi")
    mpi True
    """

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    _KNOWN = ("mpi", "gloo", "nccl", "ucc", "xccl")

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise TypeError(f"Backend name must be a string, got {type(name).__name__}")
        low = name.lower()
        if low not in cls._KNOWN:
            raise ValueError(f"Invalid backend: {name!r}; numbagrad supports 'mpi'")
        return super().__new__(cls, low)


class ReduceOp(enum.Enum):
    """Reduction operations for ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor``.

    ``AVG`` (floating-point tensors only) sums and divides by the group size. On ``bool``
    tensors ``SUM`` and ``MAX`` are a logical or, ``PRODUCT`` and ``MIN`` a logical and.

    Examples
    --------
    >>> from numbagrad.distributed import ReduceOp
    >>> print(ReduceOp.SUM.name, ReduceOp.AVG.value)
    SUM 1
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


_OPS: dict = {}  # (op value, dtype kind) -> MPI op, filled by _mpi_op


def _mpi_op(op: ReduceOp, dtype: np.dtype):
    """The MPI reduction for ``op`` on ``dtype`` (AVG is SUM then a division)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a numbagrad.distributed.ReduceOp, got {op!r}")
    key = (op._value_, dtype.kind)
    found = _OPS.get(key)
    if found is None:
        found = _OPS[key] = _find_mpi_op(op, dtype)
    return found


def _find_mpi_op(op, dtype):
    """``_mpi_op`` without the cache."""
    mpi = _MPI
    kind = dtype.kind
    if op is ReduceOp.PREMUL_SUM:
        raise NotImplementedError(
            "ReduceOp.PREMUL_SUM is not supported by numbagrad's MPI "
            "backend; multiply the tensor first and use ReduceOp.SUM"
        )
    if op is ReduceOp.AVG and kind != "f":
        raise ValueError(
            f"ReduceOp.AVG needs a floating-point tensor, got {dtype}: use "
            "ReduceOp.SUM and divide, or convert the tensor to float first"
        )
    if kind == "b":
        return {
            ReduceOp.SUM: mpi.LOR,
            ReduceOp.MAX: mpi.LOR,
            ReduceOp.BOR: mpi.LOR,
            ReduceOp.PRODUCT: mpi.LAND,
            ReduceOp.MIN: mpi.LAND,
            ReduceOp.BAND: mpi.LAND,
            ReduceOp.BXOR: mpi.LXOR,
            ReduceOp.AVG: mpi.LOR,
        }[op]
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind == "f":
        raise ValueError(f"ReduceOp.{op.name} needs an integer or bool tensor, got {dtype}")
    return {
        ReduceOp.SUM: mpi.SUM,
        ReduceOp.AVG: mpi.SUM,
        ReduceOp.PRODUCT: mpi.PROD,
        ReduceOp.MIN: mpi.MIN,
        ReduceOp.MAX: mpi.MAX,
        ReduceOp.BAND: mpi.BAND,
        ReduceOp.BOR: mpi.BOR,
        ReduceOp.BXOR: mpi.BXOR,
    }[op]


class ProcessGroup:
    """A group of ranks that run collectives together (made by ``init_process_group`` and
    ``new_group``; not constructed directly).

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> pg = dist.new_group([0])
    >>> print(pg.rank(), pg.size(), dist.get_process_group_ranks(pg))
    0 1 [0]
    >>> dist.destroy_process_group()
    """

    def __init__(self, comm, ranks, timeout):
        self._comm = comm  # None on ranks that are not members
        self._hdr = comm.Dup() if comm is not None else None  # NOTE [Point-to-point]
        self._ranks = list(ranks)  # global ranks, by group rank
        self._timeout = float(timeout.total_seconds())
        self._broken = None  # what failed, once a wait timed out
        self._send_seq = {}
        self._sig = (np.empty(2, dtype=np.int64), np.empty(2, dtype=np.int64))
        self._destroyed = False

    def rank(self) -> int:
        """This process's rank in the group (-1 when it is not a member)."""
        return self._comm.Get_rank() if self._comm is not None else -1

    def size(self) -> int:
        """The number of ranks in the group."""
        return len(self._ranks)

    def name(self) -> str:
        """The backend's name, ``"mpi"``."""
        return "mpi"

    def __repr__(self):
        return f"ProcessGroup(backend='mpi', ranks={self._ranks}, rank={self.rank()})"

    def _free(self):
        """Free the communicators (after which the group refuses work)."""
        if self._destroyed:
            return
        self._destroyed = True
        if self._comm is not None and self._broken is None:
            # a broken group may have a collective in flight: freeing it is erroneous in MPI
            self._hdr.Free()
            self._comm.Free()
        self._comm = self._hdr = None

    def _usable(self, what):
        """Raise if the group was destroyed or broken; return False for non-members."""
        if self._destroyed:
            raise ValueError(
                f"{what}: the process group was destroyed (destroy_process_group); make a new one"
            )
        if self._broken is not None:
            raise DistBackendError(
                f"{what}: the process group is unusable after an earlier "
                f"failure ({self._broken}); destroy it and start again"
            )
        return self._comm is not None

    def _deadline(self, timeout=None):
        """The monotonic time at which a wait gives up."""
        if timeout is None:
            return time.monotonic() + self._timeout
        return time.monotonic() + _seconds(timeout)


def _seconds(timeout):
    """A ``timedelta`` (or a number of seconds) as seconds."""
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        return float(timeout)
    raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")


def _wait(pg, reqs, deadline, what, statuses=None):
    """Complete the MPI requests ``reqs`` or raise ``DistBackendError`` at ``deadline``.

    Polls with ``Testall``, which is also what makes MPI progress a non-blocking collective
    through its stages: in a tight loop for the first ``_SPIN_SECONDS`` (as MPI's own
    blocking calls spin; sleeping between polls there made an 8 MB all-reduce 2.4 times
    slower), then with 1 ms sleeps, so a rank waiting long on a slow peer leaves the core
    to it."""
    test = _MPI.Request.Testall
    if test(reqs, statuses):
        return
    now = time.monotonic
    spin_until = now() + _SPIN_SECONDS
    while True:
        for _ in range(256):
            if test(reqs, statuses):
                return
        t = now()
        if t > deadline:
            break
        if t > spin_until:
            time.sleep(1e-3)
    pg._broken = f"{what} timed out"
    raise DistBackendError(
        f"{what} timed out on rank {_MPI.COMM_WORLD.Get_rank()} after waiting for its "
        "peers: some rank did not reach the matching call (a rank that crashed or took a "
        "different branch), or the timeout of init_process_group/new_group is too short"
    )


def _check_same(pg, desc, what, deadline, sig=None):
    """Raise on every rank unless all ranks of ``pg`` passed the same ``desc`` (a string,
    or a function making it, then with its CRC32 ``sig`` given; NOTE [Cross-rank check])."""
    if sig is None:
        sig = zlib.crc32(desc.encode())
    mine, out = pg._sig
    mine[0] = sig
    mine[1] = -sig
    _wait(pg, [pg._comm.Iallreduce(mine, out, op=_MPI.MAX)], deadline, what)
    if out[0] == sig and out[1] == -sig:
        return
    descs = pg._comm.allgather(desc() if callable(desc) else desc)
    lines = "; ".join(f"rank {pg._ranks[i]}: {d}" for i, d in enumerate(descs))
    raise RuntimeError(
        f"{what}: the ranks called it with different arguments ({lines}); "
        "every rank must pass tensors of the same shape and dtype and the "
        "same src/dst and op"
    )


class Work:
    """The handle an ``async_op=True`` collective returns (``torch.distributed.Work``).

    ``wait()`` blocks until the operation finished (or the timeout passed), after which the
    output tensors hold the result.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = numbagrad.tensor([1.0, 2.0])
    >>> work = dist.all_reduce(t, async_op=True)
    >>> work.wait()
    True
    >>> t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """

    def __init__(self, pg, reqs, what, finish=None, outputs=(), keep=()):
        self._pg = pg
        self._reqs = list(reqs)
        self._what = what
        self._finish = finish  # runs once after completion: copies back, divides, bumps
        self._outputs = list(outputs)
        self._keep = keep  # buffers MPI reads or writes until completion
        self._done = False

    def _complete(self):
        self._done = True
        self._keep = ()
        if self._finish is not None:
            f, self._finish = self._finish, None
            f()

    def wait(self, timeout=None) -> bool:
        """Block until the operation completed; ``timeout`` (a ``timedelta``) overrides
        the group's. Returns True."""
        if not self._done:
            _wait(self._pg, self._reqs, self._pg._deadline(timeout), self._what)
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether the operation finished (never blocks)."""
        if not self._done and _MPI.Request.Testall(self._reqs):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        """Whether the operation finished without an error."""
        return self.is_completed()

    def result(self) -> list:
        """The output tensors (after ``wait()``)."""
        return list(self._outputs)


# -- the default group ----------------------------------------------------------------------


class _State:
    default = None  # the default ProcessGroup
    groups: ClassVar[list] = []  # every live group, the default first


def _default(what="this function"):
    """The default group, or torch's error when there is none."""
    pg = _State.default
    if pg is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure "
            f"to call init_process_group. (numbagrad.distributed: {what} needs "
            "init_process_group('mpi') first, in a script launched with "
            "`mpiexec -n N python script.py`)"
        )
    return pg


def _resolve(group, what):
    """The group a call runs on (``None``: the default group)."""
    if group is None:
        return _default(what)
    if not isinstance(group, ProcessGroup):
        raise TypeError(
            f"{what}: group must be a ProcessGroup from new_group, got {type(group).__name__}"
        )
    _default(what)
    return group


def is_available() -> bool:
    """Whether the MPI backend can be used here (mpi4py and an MPI library import).

    Importing mpi4py initialises MPI; a script not started by ``mpiexec`` then runs as a
    single-process world.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.is_available() in (True, False)
    True
    """
    try:
        _import_mpi()
    except RuntimeError:
        return False
    return True


is_mpi_available = is_available


def is_gloo_available() -> bool:
    """False: numbagrad has no Gloo backend (use MPI)."""
    return False


def is_nccl_available() -> bool:
    """False: numbagrad has no NCCL backend (use MPI)."""
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` ran (and ``destroy_process_group`` did not since).

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _State.default is not None


def _env_int(name):
    """An integer from the environment (None when unset), with a clear error otherwise."""
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"environment variable {name}={v!r} is not an integer") from None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1):
    """Initialise the default process group on MPI (``torch.distributed.init_process_group``).

    Launch the script with ``mpiexec -n N python script.py``; MPI assigns ranks and connects
    the processes. Where a launcher also sets ``RANK`` and ``WORLD_SIZE`` in the environment
    (``init_method="env://"``, the default), or ``rank``/``world_size`` are given, they are
    checked against MPI's: a disagreement (for instance a script started N times without
    ``mpiexec``, each a 1-process world) raises instead of training N separate models.
    ``MASTER_ADDR``/``MASTER_PORT`` are not needed: MPI does its own wire-up.

    Parameters
    ----------
    backend : str, optional
        ``"mpi"`` (the default and the only backend numbagrad implements).
    init_method : str, optional
        ``None`` or ``"env://"``.
    timeout : datetime.timedelta, optional
        How long any operation of the group may wait for its peers (default 30 minutes);
        past it a ``DistBackendError`` is raised.
    world_size, rank : int, optional
        Expected number of processes and rank of this one (-1: not checked, or taken from
        ``WORLD_SIZE``/``RANK``).

    Raises
    ------
    RuntimeError
        mpi4py or MPI is missing (install with ``pip install mpi4py mpich``), or the world
        MPI started disagrees with ``world_size``/``rank``/the environment.
    NotImplementedError
        For the ``gloo``/``nccl``/``ucc`` backends and ``tcp://``/``file://`` init methods.
    ValueError
        When the default group exists already.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")  # one process here; mpiexec -n N gives N
    >>> print(dist.get_backend(), dist.get_rank(), dist.get_world_size())
    mpi 0 1
    >>> dist.destroy_process_group()
    """
    if _State.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend("mpi" if backend is None else backend)
    if name != "mpi":
        raise NotImplementedError(
            f"backend {name!r} is not available in numbagrad, which runs collectives on MPI "
            f"only: use init_process_group('mpi') (`{_INSTALL_HINT}`) and launch with "
            "`mpiexec -n N python script.py`"
        )
    if init_method is not None and init_method != "env://":
        raise NotImplementedError(
            f"init_method={init_method!r} is not supported: with the MPI backend the MPI "
            "launcher connects the processes; use init_method=None (or 'env://') and launch "
            "with `mpiexec -n N python script.py`"
        )
    timeout = _DEFAULT_TIMEOUT if timeout is None else timeout
    if _seconds(timeout) <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    for arg, v in (("world_size", world_size), ("rank", rank)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{arg} must be an int, got {type(v).__name__}")
    mpi = _import_mpi()
    size = mpi.COMM_WORLD.Get_size()
    me = mpi.COMM_WORLD.Get_rank()
    want_size, size_from = (
        (world_size, "world_size")
        if world_size != -1
        else (_env_int("WORLD_SIZE"), "the WORLD_SIZE environment variable")
    )
    want_rank, rank_from = (
        (rank, "rank") if rank != -1 else (_env_int("RANK"), "the RANK environment variable")
    )
    if want_size is not None and want_size != size:
        raise RuntimeError(
            f"{size_from} is {want_size} but MPI started a world of {size} process(es): "
            f"launch the script with `mpiexec -n {want_size} python script.py` (a script started "
            "by another launcher runs as separate 1-process MPI worlds)"
        )
    if want_rank is not None and want_rank != me:
        raise RuntimeError(
            f"{rank_from} is {want_rank} but MPI gave this process rank {me}: "
            "let mpiexec assign ranks (unset RANK, or pass rank=-1)"
        )
    pg = ProcessGroup(mpi.COMM_WORLD.Dup(), range(size), timeout)
    _State.default = pg
    _State.groups = [pg]


def destroy_process_group(group=None) -> None:
    """Free ``group``, or every group and the default one (``group=None``).

    After it, ``init_process_group`` may run again. MPI itself stays initialised until the
    process exits (mpi4py finalises it).

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    if group is None:
        _default("destroy_process_group")
        for g in _State.groups:
            g._free()
        _State.default = None
        _State.groups = []
        return
    pg = _resolve(group, "destroy_process_group")
    pg._free()
    if pg is _State.default:
        for g in _State.groups:
            g._free()
        _State.default = None
        _State.groups = []
    elif pg in _State.groups:
        _State.groups.remove(pg)


def new_group(ranks=None, timeout=None, backend=None):
    """A group of some ranks of the default group (``torch.distributed.new_group``).

    Every rank of the default group must call it, with the same ``ranks``, members or not
    (an MPI ``Comm.Split``). On a non-member the returned group cannot run collectives:
    they warn and return None, as in PyTorch.

    Parameters
    ----------
    ranks : list of int, optional
        Global ranks of the members (default: all).
    timeout : datetime.timedelta, optional
        The group's timeout (default: the default group's).
    backend : str, optional
        ``"mpi"`` or None.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> g = dist.new_group([0])
    >>> print(dist.get_rank(g), dist.get_world_size(g))
    0 1
    >>> dist.destroy_process_group()
    """
    world = _default("new_group")
    if backend is not None and Backend(backend) != "mpi":
        raise NotImplementedError(
            f"backend {backend!r} is not available in numbagrad; groups run on MPI"
        )
    n = world.size()
    members = list(range(n)) if ranks is None else sorted({int(r) for r in ranks})
    for r in members:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is out of range for a world of {n} ranks")
    if not members:
        raise ValueError("new_group: ranks must not be empty")
    world._usable("new_group")
    _check_same(world, f"new_group ranks={members}", "new_group", world._deadline())
    mpi = _MPI
    me = world.rank()
    color = 0 if me in members else mpi.UNDEFINED
    comm = world._comm.Split(color, members.index(me) if me in members else 0)
    if comm == mpi.COMM_NULL:
        comm = None
    t = datetime.timedelta(seconds=world._timeout) if timeout is None else timeout
    pg = ProcessGroup(comm, members, t)
    _State.groups.append(pg)
    return pg


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (default: the world); -1 for a non-member.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_rank()
    0
    >>> dist.destroy_process_group()
    """
    return _resolve(group, "get_rank").rank()


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (default: the world).

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "get_world_size")
    return pg.size() if pg._comm is not None else -1


def get_backend(group=None) -> Backend:
    """The backend of ``group``: ``"mpi"``.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group()
    >>> print(dist.get_backend())
    mpi
    >>> dist.destroy_process_group()
    """
    _resolve(group, "get_backend")
    return Backend("mpi")


def get_process_group_ranks(group) -> list:
    """The global ranks of ``group``'s members, by group rank.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_process_group_ranks(dist.new_group())
    [0]
    >>> dist.destroy_process_group()
    """
    return list(_resolve(group, "get_process_group_ranks")._ranks)


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_global_rank(dist.new_group([0]), 0)
    0
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "get_global_rank")
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg._ranks}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    """The rank in ``group`` of global rank ``global_rank``.

    Examples
    --------
    >>> import numbagrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_group_rank(dist.new_group([0]), 0)
    0
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "get_group_rank")
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg._ranks}")
    return pg._ranks.index(global_rank)


def _not_member(pg, what):
    """Warn, as PyTorch does, when this rank is not in ``pg``; True then."""
    if pg._usable(what):
        return False
    warnings.warn(
        f"Running {what} on a rank that does not belong to the given group (it does nothing there)",
        stacklevel=3,
    )
    return True
