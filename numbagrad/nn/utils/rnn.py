"""Variable-length sequences for the recurrent layers (PyTorch's ``torch.nn.utils.rnn``):
:class:`PackedSequence`, packing, padding and their inverses.

A packed sequence stores the steps time-major, the rows of step ``t`` being the
``batch_sizes[t]`` sequences still running (sorted by decreasing length), as PyTorch's. The
conversions are index ops (differentiable); the recurrent modules run a packed batch with the
fused recurrence's per-step active rows (NOTE [Fused recurrence] in ``nn/_rnn.py``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as _ops
from numbagrad._creation import tensor as _tensor
from numbagrad._creation import zeros as _zeros
from numbagrad._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_PackedSequenceBase = namedtuple(
    "_PackedSequenceBase", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


class PackedSequence(_PackedSequenceBase):
    """The data and ``batch_sizes`` of a packed batch of sequences (PyTorch's
    ``PackedSequence``); made by :func:`pack_padded_sequence` or :func:`pack_sequence`, and
    accepted by ``nn.RNN``, ``nn.GRU`` and ``nn.LSTM``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([numbagrad.tensor([1.0, 2.0, 3.0]), numbagrad.tensor([4.0])])
    >>> p.data
    tensor([1., 4., 2., 3.])
    >>> p.batch_sizes
    tensor([2, 1, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise TypeError("PackedSequence needs batch_sizes")
        if not isinstance(batch_sizes, Tensor):
            batch_sizes = _tensor(list(batch_sizes), dtype=D.int64)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._with_data(data)

    def cpu(self):
        return self

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation.numpy() if isinstance(permutation, Tensor) else permutation)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=p.dtype)
    return _tensor(inv, dtype=D.int64)


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise ValueError("lengths should be a 1D tensor or a list of ints")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    """Rows still running at each step, for lengths sorted in decreasing order."""
    lens = np.asarray(lengths, dtype=np.int64)
    steps = np.arange(int(lens[0]) if lens.size else 0)
    return (lens[None, :] > steps[:, None]).sum(1)


def _packed_positions(batch_sizes, B):
    """For each packed row, its flat position ``t * B + r`` in the ``(T, B)`` padding."""
    pos = [t * B + r for t, n in enumerate(batch_sizes) for r in range(int(n))]
    return np.asarray(pos, dtype=np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    of the given lengths; with ``enforce_sorted=False`` the batch is sorted by length here
    and the permutation is kept in the result."""
    lens = _lengths_list(lengths)
    bdim = 0 if batch_first else 1
    if input.ndim < 2:
        raise ValueError("pack_padded_sequence: input must have at least 2 dimensions")
    if len(lens) != input.shape[bdim]:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
            f"(batch_size={input.shape[bdim]})"
        )
    sorted_indices = None
    if enforce_sorted:
        if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
    else:
        order = np.argsort(-np.asarray(lens, dtype=np.int64), kind="stable")
        sorted_indices = _tensor(order, dtype=D.int64)
        input = _ops.index_select(input, bdim, sorted_indices)
        lens = [lens[i] for i in order]
    if lens and lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    T = input.shape[1 - bdim]
    if lens and lens[0] > T:
        raise RuntimeError(
            f"Expected sequence length to be at most {T} (the padded length), got {lens[0]}"
        )
    if batch_first:
        input = input.transpose(0, 1)
    B = input.shape[1]
    bs = _batch_sizes(lens)
    flat = input.reshape(T * B, *input.shape[2:])
    data = _ops.index_select(flat, 0, _tensor(_packed_positions(bs, B), dtype=D.int64))
    return PackedSequence(data, _tensor(bs, dtype=D.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """``(padded, lengths)``: the inverse of :func:`pack_padded_sequence` (the batch back in
    its original order; ``lengths`` an int64 tensor)."""
    data = sequence.data
    bs = [int(v) for v in sequence.batch_sizes.tolist()]
    T = len(bs)
    B = bs[0] if bs else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being {T}"
            )
        T_out = total_length
    else:
        T_out = T
    pos = _packed_positions(bs, B)
    n = data.shape[0]
    index = np.full(T_out * B, n, dtype=np.int64)
    index[pos] = np.arange(n, dtype=np.int64)
    fill = _zeros((1, *data.shape[1:]), dtype=data.dtype) + padding_value
    padded = _ops.index_select(_ops.cat([data, fill], 0), 0, _tensor(index, dtype=D.int64))
    padded = padded.reshape(T_out, B, *data.shape[1:])
    lengths = (np.asarray(bs, dtype=np.int64)[:, None] > np.arange(B)[None, :]).sum(0)
    if sequence.unsorted_indices is not None:
        padded = _ops.index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.numpy()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _tensor(lengths, dtype=D.int64)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes ``(L_i, *)`` into ``(L_max, B, *)`` (``(B, L_max, *)`` with
    ``batch_first``), padded with ``padding_value`` on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    L = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        k = L - s.shape[0]
        if k:
            pad = _zeros((k, *s.shape[1:]), dtype=s.dtype) + padding_value
            s = _ops.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return _ops.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes ``(L_i, *)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a packed batch (in the original order)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
