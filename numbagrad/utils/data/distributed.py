"""``torch.utils.data.distributed``: :class:`DistributedSampler`, each rank's share of a
dataset.

Examples
--------
>>> from numbagrad.utils.data.distributed import DistributedSampler
>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
[1, 3, 0]
"""

from __future__ import annotations

import math

from numbagrad import _creation
from numbagrad import distributed as dist
from numbagrad.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` loads: every
    ``num_replicas``-th index from ``rank`` of a list padded (by repeating its start) or
    cut (``drop_last``) to a multiple of ``num_replicas``, as PyTorch's.

    Parameters
    ----------
    dataset : Dataset
        A map-style dataset of constant length.
    num_replicas : int, optional
        Default: the world size of :mod:`numbagrad.distributed`'s default process group.
    rank : int, optional
        Default: this process's rank in that group.
    shuffle : bool, default True
        Permute the indices first, with a generator seeded ``seed + epoch`` (the same
        permutation on every rank, and PyTorch's for the same seed and epoch).
    seed : int, default 0
    drop_last : bool, default False
        Drop the tail instead of padding.

    Raises
    ------
    ValueError
        For a ``rank`` outside ``[0, num_replicas - 1]``, or (from
        :func:`numbagrad.distributed.get_world_size`) when a default is needed and no
        process group is initialised.
    RuntimeError
        When a default is needed and the distributed package is not available.

    Examples
    --------
    >>> from numbagrad.utils.data import DistributedSampler
    >>> s = DistributedSampler(range(7), num_replicas=3, rank=0, drop_last=True)
    >>> len(s), len(list(s))
    (2, 2)
    >>> s.set_epoch(1)
    """

    def __init__(
        self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False
    ):
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _creation.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _creation.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(
                f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})"
            )
        indices = indices[self.rank : self.total_size : self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match num_samples "
                f"({self.num_samples})"
            )
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch: with ``shuffle=True`` the next pass draws the permutation of
        ``seed + epoch`` (call it before each epoch's iteration, on every rank)."""
        self.epoch = epoch
