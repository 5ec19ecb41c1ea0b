"""``torch.utils.data.dataloader``: :class:`DataLoader`, :func:`default_collate`,
:func:`default_convert` and :func:`get_worker_info`.

Loading happens in the calling process. With ``num_workers=0`` the loader fetches every
batch itself. With ``num_workers=n > 0`` it plays PyTorch's ``n`` worker processes in turn
(NOTE [In-process workers] below): batch ``i`` of a map-style dataset is fetched by worker
``i % n``, each worker of an :class:`IterableDataset` iterates its own pass over the
dataset and the loader takes their batches round-robin, ``worker_init_fn`` runs once per
worker, and while a worker fetches, :func:`get_worker_info` describes it and the global
random streams (numbagrad's and Python's ``random``) are the worker's, seeded
``base_seed + id`` as in PyTorch's workers. So the batches are the ones PyTorch's loader
yields, in the same order for the same seed. ``pin_memory``, ``prefetch_factor``,
``persistent_workers``, ``timeout`` and ``multiprocessing_context`` only decide how
PyTorch would run the same workers in parallel.

Examples
--------
>>> import numbagrad
>>> from numbagrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(numbagrad.arange(5.0), numbagrad.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import collections.abc
import copy
import dataclasses
import numbers
import random
import re

import numpy as np

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Tensor
from numbagrad.utils.data.dataset import IterableDataset
from numbagrad.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


_STR_OR_OBJECT = re.compile(r"[SaUO]")  # NumPy dtype codes default_convert leaves alone


def default_convert(data):
    """Convert one sample's NumPy arrays and scalars into tensors, keeping its structure,
    as PyTorch's ``default_convert`` (the DataLoader's ``collate_fn`` when batching is off,
    ``batch_size=None``): tensors stay, arrays of strings or objects stay, mappings and
    sequences keep their type (a plain tuple becomes a list, as in PyTorch), anything else
    is returned as is.

    Examples
    --------
    >>> import numpy as np
    >>> from numbagrad.utils.data import default_convert
    >>> default_convert({"x": np.array([1.5, 2.0]), "n": (np.int64(3), "a")})
    {'x': tensor([1.5000, 2.0000], dtype=numbagrad.float64), 'n': [tensor(3), 'a']}
    """
    kind = type(data)
    if isinstance(data, Tensor):
        return data
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if isinstance(data, np.ndarray) and _STR_OR_OBJECT.search(data.dtype.str):
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)  # a mapping type may carry more than its items
                clone.update(converted)
                return clone
            return kind(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted_list = [default_convert(d) for d in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(converted_list):
                    clone[i] = d
                return clone
            return kind(converted_list)
        except TypeError:  # e.g. range
            return converted_list
    return data


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a DataLoader worker (PyTorch's fields).

    ``dataset`` is the loader's dataset itself (PyTorch's workers hold a copy), and
    ``worker_method`` is None: numbagrad plays the workers in the calling process
    (:mod:`numbagrad.utils.data.dataloader`), neither PyTorch's processes nor its threads.
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str | None = None


_worker_info: WorkerInfo | None = None  # set while a played worker fetches


def get_worker_info():
    """The :class:`WorkerInfo` (``id``, ``num_workers``, ``seed``, ``dataset``) of the
    DataLoader worker running the caller, or None outside one: always None in the main
    loading (``num_workers=0``), and the worker's while a loader with ``num_workers > 0``
    fetches, runs ``worker_init_fn`` or iterates an :class:`IterableDataset`, so a dataset
    can split its work across the workers as with PyTorch.

    Examples
    --------
    >>> from numbagrad.utils.data import DataLoader, IterableDataset, get_worker_info
    >>> class Shards(IterableDataset):
    ...     def __iter__(self):
    ...         info = get_worker_info()
    ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
    ...         return iter(range(start, 6, step))
    >>> get_worker_info() is None
    True
    >>> [b.tolist() for b in DataLoader(Shards(), batch_size=2, num_workers=2)]
    [[0, 2], [1, 3], [4], [5]]
    """
    return _worker_info


class _Worker:
    """One of PyTorch's DataLoader worker processes, played in this process.

    NOTE [In-process workers]
    A PyTorch worker process seeds its global random streams with ``base_seed + id``
    (``torch.manual_seed``, ``random.seed``; NumPy's from a SeedSequence of
    ``(id, base_seed)``) and reports a ``WorkerInfo``. A played worker keeps its own states
    of the three streams and swaps them in around each piece of its work (``run``), so the
    dataset's random draws, ``worker_init_fn`` and ``get_worker_info`` see what they would
    see in PyTorch's worker, and the calling process's streams are left as they were.
    """

    def __init__(self, info, base_seed):
        self.info = info
        self.states = (
            _creation.Generator().manual_seed(info.seed).get_state(),
            random.Random(info.seed).getstate(),
            _numpy_state(base_seed, info.id),
        )

    def run(self, fn, *args):
        global _worker_info
        gen = _creation.default_generator
        saved = (gen.get_state(), random.getstate(), _np_state(), _worker_info)
        gen.set_state(self.states[0])
        random.setstate(self.states[1])
        _np_set_state(self.states[2])
        _worker_info = self.info
        try:
            return fn(*args)
        finally:
            self.states = (gen.get_state(), random.getstate(), _np_state())
            gen.set_state(saved[0])
            random.setstate(saved[1])
            _np_set_state(saved[2])
            _worker_info = saved[3]


# NumPy's legacy global stream: the one a script's ``np.random.*`` calls draw from and
# PyTorch's workers seed
def _np_state():
    return np.random.get_state()  # noqa: NPY002


def _np_set_state(state):
    np.random.set_state(state)  # noqa: NPY002


def _numpy_state(base_seed, worker_id):
    """NumPy's global state as PyTorch's worker ``worker_id`` seeds it: from the
    SeedSequence of the words ``(worker_id, low and high halves of base_seed, 0)``."""
    words = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    rs = np.random.RandomState(np.random.SeedSequence(words).generate_state(4))
    return rs.get_state()


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
        The number of PyTorch worker processes whose loading to reproduce; numbagrad plays
        them in this process (module docstring), yielding the same batches in the same
        order.
    collate_fn : callable, optional
        Default :func:`default_collate` (:func:`default_convert` with ``batch_size=None``).
    drop_last : bool, default False
        Drop a last incomplete batch.
    worker_init_fn : callable, optional
        Called as ``worker_init_fn(worker_id)`` by each worker when an iteration starts
        (only with ``num_workers > 0``, as in PyTorch).
    generator : numbagrad.Generator, optional
        Draws the shuffle order and the workers' base seed.

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
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
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
                else default_convert
            )
        )

    def __iter__(self):
        # PyTorch's iterator draws its workers' base seed (an int64 ``random_`` of the
        # loader's generator) when it is made: the same numbers follow as in PyTorch
        seed = _creation.empty((), dtype=D.int64).random_(generator=self.generator)
        if self.num_workers == 0:
            return self._iterate()
        base_seed = int(seed.item())
        workers = [
            _Worker(WorkerInfo(w, self.num_workers, base_seed + w, self.dataset), base_seed)
            for w in range(self.num_workers)
        ]
        if self.worker_init_fn is not None:  # PyTorch's workers start with the iterator
            for worker in workers:
                worker.run(self.worker_init_fn, worker.info.id)
        if self._iterable:
            return self._iterate_iterable_workers(workers)
        return self._iterate_map_workers(workers)

    def _fetch(self, index):
        """The collated sample(s) at ``index``: a list of indices when batching (fetched
        with the dataset's ``__getitems__`` where it has one, as PyTorch's fetcher), else one
        index."""
        if self.batch_sampler is None:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            return self.collate_fn(getitems(index))
        return self.collate_fn([self.dataset[i] for i in index])

    def _iterable_batches(self):
        """The collated batches of one pass over the iterable dataset."""
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

    def _iterate(self):
        if self._iterable:
            yield from self._iterable_batches()
            return
        indices = self.batch_sampler if self.batch_sampler is not None else self.sampler
        for index in indices:
            yield self._fetch(index)

    def _iterate_map_workers(self, workers):
        # PyTorch sends the i-th index (batch) to worker i % num_workers and yields in order
        indices = self.batch_sampler if self.batch_sampler is not None else self.sampler
        for i, index in enumerate(indices):
            yield workers[i % len(workers)].run(self._fetch, index)

    def _iterate_iterable_workers(self, workers):
        # each worker runs its own pass over the dataset; PyTorch takes their batches in
        # turn, leaving out a worker once its pass ends
        passes = [(w, w.run(self._iterable_batches)) for w in workers]
        done = object()
        while passes:
            alive = []
            for worker, batches in passes:
                batch = worker.run(next, batches, done)
                if batch is not done:
                    alive.append((worker, batches))
                    yield batch
            passes = alive

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
