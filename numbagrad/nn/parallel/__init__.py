"""``numbagrad.nn.parallel``: data parallelism for modules (PyTorch's ``torch.nn.parallel``).

:class:`DistributedDataParallel` averages a module's gradients across the ranks of an MPI
job during backward (see :mod:`numbagrad.distributed` and the docs page "Beyond one
machine").
"""

from numbagrad.nn.parallel._data_parallel import DataParallel
from numbagrad.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
