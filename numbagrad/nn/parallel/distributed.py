"""``DistributedDataParallel`` (PyTorch's ``torch.nn.parallel.DistributedDataParallel``).

:class:`DistributedDataParallel` wraps a module and averages its gradients across the ranks
of an MPI job during backward, on :class:`numbagrad.distributed.DataParallel` (bucketed,
overlapped all-reduces on post-accumulate-grad hooks; NOTE [Gradient buckets] in
``numbagrad/distributed/_data_parallel.py``).
"""

from __future__ import annotations

import contextlib

from numbagrad import distributed as dist
from numbagrad.autograd.grad_mode import is_grad_enabled
from numbagrad.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism for a module across the ranks of a process group.

    At construction the module's parameters (and buffers) are broadcast from rank 0, so
    every rank starts from the same model; each ``backward()`` then all-reduces and
    averages the gradients in buckets while backward runs. With a loss that averages over
    the batch, N ranks with per-rank batches of B train exactly like one process with the
    batch of N·B. Launch with ``mpiexec -n N python train.py`` after
    ``numbagrad.distributed.init_process_group("mpi")``.

    Parameters
    ----------
    module : Module
        The model; its parameters must have the same shapes on every rank, and each
        trainable one must receive a gradient in every synchronised backward.
    device_ids, output_device : None
        For CUDA devices in PyTorch; numbagrad's data parallelism runs on CPU tensors.
    broadcast_buffers : bool
        Broadcast rank 0's buffers (running statistics) at the start of every forward.
    init_sync : bool
        Broadcast rank 0's parameters and buffers at construction (default True).
    process_group : ProcessGroup, optional
        The ranks to average over (default: the world).
    bucket_cap_mb : float, optional
        Bucket size in megabytes (default 25).
    find_unused_parameters : bool
        Let some parameters take no part in a step: after each forward the autograd graph
        of the output is traversed and the parameters it does not reach count as ready
        (:meth:`numbagrad.distributed.DataParallel.prepare_for_backward`). Costs the
        traversal and one more small all-reduce per step. Default False: every trainable
        parameter must receive a gradient in each synchronised backward.

    Examples
    --------
    >>> import numbagrad, numbagrad.distributed as dist
    >>> from numbagrad import nn
    >>> from numbagrad.nn.parallel import DistributedDataParallel as DDP
    >>> dist.init_process_group("mpi")
    >>> _ = numbagrad.manual_seed(0)
    >>> model = DDP(nn.Linear(3, 1))
    >>> model(numbagrad.ones(4, 3)).mean().backward()  # gradients averaged over the ranks
    >>> model.module.bias.grad
    tensor([1.])
    >>> dist.destroy_process_group()
    """

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        broadcast_buffers=True,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
    ):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel expects a numbagrad.nn.Module, got "
                f"{type(module).__name__}"
            )
        if device_ids is not None or output_device is not None:
            raise ValueError(
                "DistributedDataParallel: device_ids and output_device are for "
                "CUDA modules in PyTorch; numbagrad's data parallelism runs on "
                "CPU tensors: leave them None"
            )
        self.module = module
        params = [p for p in module.parameters() if p.requires_grad]
        self.__dict__["_broadcast_buffers"] = bool(broadcast_buffers)
        self.__dict__["_pg"] = process_group
        self.__dict__["_find_unused"] = bool(find_unused_parameters)
        self.__dict__["_dp"] = dist.DataParallel(
            params,
            group=process_group,
            bucket_cap_mb=25.0 if bucket_cap_mb is None else bucket_cap_mb,
            broadcast_parameters=bool(init_sync),
        )
        if init_sync:
            self._sync_buffers()

    def _sync_buffers(self):
        """Copy rank 0's buffers to every rank."""
        for b in self.module.buffers():
            if b is not None:
                dist.broadcast(b, src=dist.get_global_rank(self._group(), 0), group=self._pg)

    def _group(self):
        """The process group (the default one when None was given)."""
        return self._dp._pg

    def forward(self, *inputs, **kwargs):
        """Run the wrapped module (after broadcasting buffers, if asked to)."""
        if self._broadcast_buffers and self._dp._sync:
            self._sync_buffers()
        out = self.module(*inputs, **kwargs)
        if self._find_unused and is_grad_enabled():
            self._dp.prepare_for_backward(out)
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Within it, backward accumulates gradients locally; the first backward after it
        averages the accumulated gradients (gradient accumulation).

        Examples
        --------
        >>> import numbagrad, numbagrad.distributed as dist
        >>> from numbagrad import nn
        >>> from numbagrad.nn.parallel import DistributedDataParallel as DDP
        >>> dist.init_process_group("mpi")
        >>> model = DDP(nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model(numbagrad.ones(1, 2)).sum().backward()
        >>> model(numbagrad.ones(1, 2)).sum().backward()
        >>> model.module.bias.grad
        tensor([2.])
        >>> dist.destroy_process_group()
        """
        with self._dp.no_sync():
            yield
