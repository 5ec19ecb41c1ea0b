"""``torch.utils.data.dataset``: map-style and iterable datasets, their combinations
(:class:`ConcatDataset`, :class:`ChainDataset`, :class:`StackDataset`, :class:`Subset`) and
:func:`random_split`.

Examples
--------
>>> from numbagrad.utils.data.dataset import ChainDataset, StackDataset
>>> StackDataset([1, 2], [3, 4])[1]
(2, 4)
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from numbagrad import _creation
from numbagrad._tensor import Tensor

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
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

    def __add__(self, other):
        return ChainDataset([self, other])


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

    def __getitems__(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

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


class ChainDataset(IterableDataset):
    """Several iterable datasets one after the other, chained lazily as they are iterated.

    Raises
    ------
    AssertionError
        When iterated (or measured) over a dataset that is not an :class:`IterableDataset`,
        as PyTorch's.

    Examples
    --------
    >>> from numbagrad.utils.data import ChainDataset, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    ...     def __len__(self):
    ...         return self.n
    >>> ds = ChainDataset([Count(2), Count(3)])
    >>> list(ds), len(ds), list(Count(1) + Count(2))
    ([0, 1, 0, 1, 2], 5, [0, 0, 1])
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """The samples of several equally long datasets side by side: ``StackDataset(a, b)[i]``
    is the tuple ``(a[i], b[i])`` and ``StackDataset(x=a, y=b)[i]`` the dict
    ``{"x": a[i], "y": b[i]}``.

    Raises
    ------
    ValueError
        With no dataset, with both positional and keyword datasets, or with datasets of
        different lengths (PyTorch's messages).

    Examples
    --------
    >>> from numbagrad.utils.data import StackDataset
    >>> ds = StackDataset(image=[10, 11], label=[0, 1])
    >>> len(ds), ds[1]
    (2, {'image': 11, 'label': 1})
    """

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or"
                    "``dict``- (via ``kwargs``) like input/output, but both types are given."
                )
            parts = list(args)
        elif kwargs:
            parts = list(kwargs.values())
        else:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """The samples at ``indices`` (a list), each part fetched with its dataset's own
        ``__getitems__`` where it has one (as the DataLoader fetches a batch)."""
        named = isinstance(self.datasets, dict)
        keyed = self.datasets.items() if named else enumerate(self.datasets)
        columns = []
        for _, d in keyed:
            getitems = getattr(d, "__getitems__", None)
            if callable(getitems):
                items = getitems(indices)
                if len(items) != len(indices):
                    raise ValueError(
                        "Nested dataset's output size mismatch."
                        f" Expected {len(indices)}, got {len(items)}"
                    )
            else:
                items = [d[i] for i in indices]
            columns.append(items)
        rows = range(len(indices))
        if named:
            keys = list(self.datasets)
            return [{k: col[j] for k, col in zip(keys, columns)} for j in rows]
        return [tuple(col[j] for col in columns) for j in rows]

    def __len__(self):
        return self._length


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
