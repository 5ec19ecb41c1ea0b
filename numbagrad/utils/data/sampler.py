"""``torch.utils.data.sampler``: the index samplers a :class:`DataLoader` draws from.

``RandomSampler`` and ``SubsetRandomSampler`` draw from the generator as PyTorch's do
("Random sampling" in docs/api.rst): the same order for the same seed.

Examples
--------
>>> from numbagrad.utils.data.sampler import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(3)), batch_size=2, drop_last=False))
[[0, 1], [2]]
"""

from __future__ import annotations

from numbagrad import _creation
from numbagrad import _dtype as D

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


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
