"""``torch.utils.data`` as training scripts use it: datasets, samplers, ``DataLoader`` and
``default_collate``.

Loading happens in the calling process: ``num_workers``, ``pin_memory``, ``prefetch_factor``
and ``persistent_workers`` are accepted for PyTorch's signature and only decide how PyTorch
would parallelise the same loading, so the batches are the same ones PyTorch's loader yields,
in the same order for the same seed with ``shuffle=True`` (the loader and ``RandomSampler``
draw from the generator as PyTorch's do: "Random sampling" in docs/api.rst).

Examples
--------
>>> import numbagrad
>>> from numbagrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(numbagrad.arange(5.0), numbagrad.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import bisect
import collections.abc
import math
import numbers

import numpy as np

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Tensor

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "random_split",
]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    Examples
    --------
    >>> from numbagrad.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 3
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> list(Squares() + Squares())[:4]
    [0, 1, 4, 0]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is an iterable of samples (subclasses define ``__iter__``).

    Examples
    --------
    >>> from numbagrad.utils.data import DataLoader, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Samples are the rows ``tuple(t[i] for t in tensors)`` of tensors that share their
    first dimension.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import TensorDataset
    >>> ds = TensorDataset(numbagrad.tensor([[1.0], [2.0]]), numbagrad.tensor([0, 1]))
    >>> len(ds), ds[1]
    (2, (tensor([2.]), tensor(1)))
    """

    def __init__(self, *tensors):
        if (
            not tensors
            or any(not isinstance(t, Tensor) or t.ndim == 0 for t in tensors)
            or any(t.shape[0] != tensors[0].shape[0] for t in tensors)
        ):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``.

    Examples
    --------
    >>> from numbagrad.utils.data import Subset
    >>> list(Subset([10, 11, 12], [2, 0]))
    [12, 10]
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several map-style datasets one after the other.

    Examples
    --------
    >>> from numbagrad.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2], ds[-1]
    (3, 3, 3)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self):
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if which == 0 else int(self.cumulative_sizes[which - 1])
        return self.datasets[which][idx - start]


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random :class:`Subset` s of the given
    ``lengths`` (or fractions summing to 1, the remainder spread round-robin, as PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import random_split
    >>> a, b = random_split(range(10), [0.7, 0.3], generator=numbagrad.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for frac in lengths:
            if not 0 <= frac <= 1:
                raise ValueError(f"Fraction at index {lengths.index(frac)} is not between 0 and 1")
        sizes = [math.floor(n * frac) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _creation.randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset : offset + length]))
        offset += length
    return out


class Sampler:
    """Base class of index samplers (iterables of dataset indices).

    Examples
    --------
    >>> from numbagrad.utils.data import SequentialSampler
    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``0`` to ``len(data_source) - 1``, in order.

    Examples
    --------
    >>> from numbagrad.utils.data import SequentialSampler
    >>> len(SequentialSampler([5, 6]))
    2
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (or ``num_samples`` draws with replacement),
    drawn from ``generator`` (numbagrad's default generator when None).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(4), generator=numbagrad.Generator().manual_seed(1)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:  # PyTorch: a fresh generator seeded from the global stream
            seed = int(_creation.empty((), dtype=D.int64).random_().item())
            generator = _creation.Generator().manual_seed(seed)
        if self.replacement:
            idx = _creation.randint(0, n, (self.num_samples,), generator=generator)
            return iter(idx.tolist())
        reps, rest = divmod(self.num_samples, n)
        out = []
        for _ in range(reps):
            out += _creation.randperm(n, generator=generator).tolist()
        out += _creation.randperm(n, generator=generator).tolist()[:rest]
        return iter(out)

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a fresh permutation each epoch, drawn from
    ``generator``, numbagrad's default generator when None).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([3, 5, 7]))
    [3, 5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _creation.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` drawn with probabilities proportional to the
    weights (:func:`numbagrad.multinomial`), with or without replacement.

    Parameters
    ----------
    weights : sequence of float
        One weight per index (need not sum to one).
    num_samples : int
    replacement : bool, default True
        Without replacement an index is drawn at most once.
    generator : numbagrad.Generator, optional

    Raises
    ------
    ValueError
        For a ``num_samples`` that is not a positive int, a ``replacement`` that is not a
        bool, or weights that are not one-dimensional.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = _creation.as_tensor(weights, dtype=D.float64)
        if w.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _creation.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        return iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Examples
    --------
    >>> from numbagrad.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate(batch):
    """Merge a list of samples into a batch as PyTorch's ``default_collate``: tensors and
    NumPy arrays are stacked, Python floats become a float64 tensor and ints an int64
    tensor, and tuples, lists and dicts are collated element by element.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import default_collate
    >>> default_collate([(numbagrad.tensor([1.0]), 0), (numbagrad.tensor([2.0]), 1)])
    [tensor([[1.],
            [2.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return F.stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind in "biufc":
        return F.stack([_creation.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic) and elem.dtype.kind in "biufc":
        return _creation.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return _creation.tensor(batch, dtype=D.bool)
    if isinstance(elem, numbers.Integral):
        return _creation.tensor(batch, dtype=D.int64)
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=D.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, "
        f"dicts or lists; found {type(elem)}"
    )


class DataLoader:
    """Iterate over a dataset in batches.

    Parameters
    ----------
    dataset : Dataset or IterableDataset
    batch_size : int or None, default 1
        None yields the samples one by one, uncollated.
    shuffle : bool, default False
        A fresh random order each epoch (from ``generator``).
    sampler, batch_sampler : iterable, optional
        Custom index order (exclusive with ``shuffle``) or index batches.
    num_workers : int, default 0
        Accepted for PyTorch's signature; loading always runs in this process (module
        docstring), which yields the same batches.
    collate_fn : callable, optional
        Default :func:`default_collate`.
    drop_last : bool, default False
        Drop a last incomplete batch.
    generator : numbagrad.Generator, optional

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(numbagrad.arange(6.0).reshape(3, 2)), batch_size=2)
    >>> len(loader), [tuple(b.shape) for (b,) in loader]
    (2, [(2, 2), (1, 2)])
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 "
                "to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle "
                    f"option, but got shuffle={shuffle}"
                )
            if sampler is not None or batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    "sampler/batch_sampler option"
                )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = (
            collate_fn
            if collate_fn is not None
            else (
                default_collate
                if batch_size is not None or batch_sampler is not None
                else (lambda x: x)
            )
        )

    def __iter__(self):
        # PyTorch's iterator draws its workers' base seed (an int64 ``random_`` of the
        # loader's generator) when it is made: the same numbers follow as in PyTorch
        _creation.empty((), dtype=D.int64).random_(generator=self.generator)
        return self._iterate()

    def _iterate(self):
        if self._iterable:
            if self.batch_size is None:
                yield from (self.collate_fn(s) for s in self.dataset)
                return
            batch = []
            for sample in self.dataset:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    yield self.collate_fn(batch)
                    batch = []
            if batch and not self.drop_last:
                yield self.collate_fn(batch)
        elif self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
        else:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
