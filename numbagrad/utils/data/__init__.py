"""``torch.utils.data`` as training scripts use it: datasets (:mod:`.dataset`), samplers
(:mod:`.sampler`, :mod:`.distributed`), ``DataLoader``, ``default_collate`` and
``default_convert`` (:mod:`.dataloader`).

Loading happens in the calling process, a ``num_workers > 0`` loader playing PyTorch's
workers in turn (:mod:`numbagrad.utils.data.dataloader`), so the batches are the same ones
PyTorch's loader yields, in the same order for the same seed with ``shuffle=True`` (the
loader and ``RandomSampler`` draw from the generator as PyTorch's do: "Random sampling" in
docs/api.rst).

Examples
--------
>>> import numbagrad
>>> from numbagrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(numbagrad.arange(5.0), numbagrad.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from numbagrad.utils.data import dataloader as dataloader
from numbagrad.utils.data import dataset as dataset
from numbagrad.utils.data import distributed as distributed
from numbagrad.utils.data import sampler as sampler
from numbagrad.utils.data.dataloader import (
    DataLoader,
    default_collate,
    default_convert,
    get_worker_info,
)
from numbagrad.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from numbagrad.utils.data.distributed import DistributedSampler
from numbagrad.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
