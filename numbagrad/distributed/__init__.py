"""numbagrad.distributed: the part of ``torch.distributed`` that data-parallel scripts use,
on MPI through mpi4py.

Launch a script with ``mpiexec -n N python train.py`` (``pip install mpi4py mpich`` gives
both); in it, ``init_process_group("mpi")`` connects the ranks, the collectives
(``all_reduce``, ``broadcast``, ``reduce``, ``all_gather``, ``all_gather_into_tensor``,
``reduce_scatter_tensor``, ``gather``, ``scatter``, ``send``/``recv``, ``barrier``) work on
tensors in place, as PyTorch's, and :class:`DataParallel` averages gradients during
backward. mpi4py is imported on first use, not by ``import numbagrad``. See the docs page
"Beyond one machine".

Examples
--------
>>> import numbagrad, numbagrad.distributed as dist
>>> dist.init_process_group("mpi")
>>> t = numbagrad.tensor([float(dist.get_rank() + 1)])
>>> dist.all_reduce(t, op=dist.ReduceOp.AVG)  # under mpiexec -n 2: tensor([1.5000])
>>> t
tensor([1.])
>>> dist.destroy_process_group()
"""

from numbagrad.distributed._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    send,
)
from numbagrad.distributed._data_parallel import DataParallel
from numbagrad.distributed._process_group import (
    Backend,
    DistBackendError,
    DistError,
    ProcessGroup,
    ReduceOp,
    Work,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)

__all__ = [
    "Backend",
    "DataParallel",
    "DistBackendError",
    "DistError",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]
