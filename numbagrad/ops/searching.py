"""Searching, counting and set ops: the data-dependent primitives ``Searchsorted``,
``Histc`` and ``Unique`` (non-differentiable, as PyTorch's, whose derivatives are not
implemented either) and ``searchsorted``, ``bucketize``, ``histc``, ``unique`` and
``unique_consecutive`` over them.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import ops as F
from numbagrad._creation import tensor
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._util import wrap_dim
from numbagrad.ops.math import _tname

__all__: list = []


# -- searching and counting (non-differentiable primitives) -----------------------------------
def _search_rows(xp, seq, x, side):
    """``searchsorted`` of each row of ``x`` (leading dims matching ``seq``'s) in the
    matching row of ``seq``."""
    if seq.ndim == 1:
        return xp.searchsorted(seq, x, side=side)
    rows = seq.reshape(-1, seq.shape[-1])
    xs = x.reshape(rows.shape[0], -1)
    out = xp.empty(xs.shape, np.int64)
    for i in range(rows.shape[0]):
        out[i] = xp.searchsorted(rows[i], xs[i], side=side)
    return out.reshape(x.shape)


class Searchsorted(Primitive):
    """The insertion indices of ``values`` in the last dim of ``seq`` (both data: no
    gradient). The comparison is in the promoted dtype of the two."""

    differentiable = False

    @staticmethod
    def impl(be, seq, values, side, out_int32):
        xp = be.xp
        v = xp.asarray(values)
        dt = np.result_type(seq.dtype, v.dtype)
        out = _search_rows(xp, seq.astype(dt, copy=False), v.astype(dt, copy=False), side)
        return xp.asarray(out, np.int32 if out_int32 else np.int64)

    @staticmethod
    def batch(args, dims, side, out_int32):
        """Batch dims in front; a 1-D sequence per example searches the flattened values."""
        seq, values = args
        sd, vd = dims
        params = {"side": side, "out_int32": out_int32}
        if sd is None:
            if seq.ndim == 1:  # the same 1-D sequence for every value
                return bind(Searchsorted, (seq, values), params), vd
            seq = F.expand(F.unsqueeze(seq, 0), (values.shape[vd], *seq.shape))
        else:
            seq = F.movedim(seq, sd, 0)
        b = seq.shape[0]
        if vd is None:
            values = F.expand(F.unsqueeze(values, 0), (b, *values.shape))
        else:
            values = F.movedim(values, vd, 0)
        if seq.ndim == 2:  # 1-D sequences per example: each example's values as one row
            shape = tuple(values.shape)
            flat = F.reshape(values, (b, math.prod(shape[1:])))
            return F.reshape(bind(Searchsorted, (seq, flat), params), shape), 0
        return bind(Searchsorted, (seq, values), params), 0


@public(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices where ``input``'s values would be inserted into ``sorted_sequence`` (along
    its last dim) to keep it sorted.

    Parameters
    ----------
    sorted_sequence : Tensor
        1-D, or N-D whose leading dims match ``input``'s (one sequence per row).
    input : Tensor or Python number
    out_int32 : bool, default False
        int32 indices instead of int64.
    right, side : bool, {'left', 'right'}
        The index after equal values (``right=True`` or ``side='right'``) or before.
    sorter : Tensor, optional
        Indices that sort an unsorted ``sorted_sequence`` along its last dim.

    Returns
    -------
    Tensor
        Of ``input``'s shape (0-d for a number); no gradient.

    Examples
    --------
    >>> import numbagrad
    >>> seq = numbagrad.tensor([1.0, 3.0, 5.0, 7.0])
    >>> numbagrad.searchsorted(seq, numbagrad.tensor([3.0, 6.0]))
    tensor([1, 3])
    >>> numbagrad.searchsorted(seq, numbagrad.tensor([3.0, 6.0]), right=True)
    tensor([2, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to "
                "opposites, got side of left while right was True"
            )
        right = side == "right"
    if not isinstance(input, Tensor):
        if sorted_sequence.ndim != 1:
            raise RuntimeError(
                "torch.searchsorted(): input value can be a scalar only when "
                "boundaries tensor dimension is 1, but we got boundaries "
                f"tensor dim({sorted_sequence.ndim}) and input value's dim(0) "
                "numel(1)"
            )
        input = tensor(input)
    seq = sorted_sequence
    if seq.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive "
            "dimension, but got 0 dimension"
        )
    if seq.ndim != 1 and (
        seq.ndim != input.ndim or tuple(seq.shape[:-1]) != tuple(input.shape[:-1])
    ):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or "
            "the first N-1 dimensions of boundaries tensor and input value "
            "tensor must match, but we got boundaries tensor "
            f"{list(seq.shape)} and input value tensor {list(input.shape)}"
        )
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same "
                f"size, but got boundary tensor {list(seq.shape)}and got "
                f"sorter tensor {list(sorter.shape)}"
            )
        seq = F.take_along_dim(seq, sorter, -1)
    return bind(
        Searchsorted,
        (seq.detach(), input.detach()),
        {"side": "right" if right else "left", "out_int32": bool(out_int32)},
    )


@public(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element of ``input`` among the 1-D sorted ``boundaries``:
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=``/``<`` with ``right=True``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.bucketize(numbagrad.tensor([1.0, 5.0, 9.0]), numbagrad.tensor([1.0, 5.0]))
    tensor([0, 1, 2])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


class Histc(Primitive):
    """Equal-width histogram of the elements in ``[lo, hi]`` (NaN and the outside ignored),
    binned as PyTorch's kernel: ``int((x - lo) * bins / (hi - lo))``, the right edge in
    the last bin; ``lo == hi`` means the finite data range. With ``rows`` (the batching
    rule's form) each row of a 2-D input gets its own histogram. No gradient (PyTorch
    defines none)."""

    differentiable = False

    @staticmethod
    def impl(be, x, bins, lo, hi, rows=False):
        xp = be.xp
        x = x.reshape(x.shape[0], -1) if rows else x.reshape(1, -1)
        r, n = x.shape
        t = x.dtype.type
        lo_r = xp.full(r, lo, np.float64)
        hi_r = xp.full(r, hi, np.float64)
        if lo == hi and n:
            fin = xp.isfinite(x)
            has = fin.any(axis=1)
            lo_r = xp.where(has, xp.where(fin, x, xp.inf).min(axis=1), lo_r)
            hi_r = xp.where(has, xp.where(fin, x, -xp.inf).max(axis=1), hi_r)
        same = lo_r == hi_r
        lo_r, hi_r = xp.where(same, lo_r - 1, lo_r), xp.where(same, hi_r + 1, hi_r)
        lo_t, hi_t = lo_r.astype(x.dtype)[:, None], hi_r.astype(x.dtype)[:, None]
        keep = (x >= lo_t) & (x <= hi_t)  # False for NaN
        with np.errstate(invalid="ignore", over="ignore"):
            pos = (x - lo_t) * t(bins) / (hi_t - lo_t)
        pos = xp.where(keep, pos, 0).astype(np.int64)
        pos[pos == bins] = bins - 1
        flat = (pos + xp.arange(r)[:, None] * bins)[keep]
        out = xp.bincount(flat, minlength=r * bins).astype(x.dtype).reshape(r, bins)
        return out if rows else out[0]

    @staticmethod
    def batch(args, dims, bins, lo, hi, rows=False):
        """One histogram per example: the examples as the rows of a 2-D input (per row of
        each example already in rows form, under nested vmap)."""
        x = F.movedim(args[0], dims[0], 0)
        params = {"bins": bins, "lo": lo, "hi": hi, "rows": True}
        if rows:
            b, r = x.shape[0], x.shape[1]
            out = bind(Histc, (F.reshape(x, (b * r, x.shape[2])),), params)
            return F.reshape(out, (b, r, bins)), 0
        flat = F.reshape(x, (x.shape[0], math.prod(x.shape[1:])))
        return bind(Histc, (flat,), params), 0


@public
def histc(input, bins=100, min=0, max=0):
    """A histogram of ``input`` with ``bins`` equal bins over ``[min, max]`` (the data's
    range when both are equal); elements outside are ignored. Floating tensors only.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.histc(numbagrad.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_tname(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(min) and math.isfinite(max)):
        raise RuntimeError(f"torch.histc: range of [{min}, {max}] is not finite")
    return bind(Histc, (input.detach(),), {"bins": int(bins), "lo": float(min), "hi": float(max)})


class Unique(Primitive):
    """Sorted unique values (or slices along ``dim``), the inverse indices and the counts;
    NaN values are all distinct, as PyTorch's. ``consecutive`` merges only runs of equal
    neighbours. No gradient; the output size depends on the data (no vmap)."""

    differentiable = False
    n_out = 3

    @staticmethod
    def impl(be, x, dim, consecutive):
        xp = be.xp
        if dim is None:
            flat, shape_inv = x.reshape(-1), x.shape
            moved = flat.reshape(-1, 1)
        else:
            moved = xp.moveaxis(x, dim, 0)
            shape_inv = (x.shape[dim],)
            # (the row size spelt out: -1 is ambiguous when there are no rows)
            moved = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))
        n = moved.shape[0]
        if consecutive:
            order = xp.arange(n)
            srt = moved
        else:
            # lexicographic order of the rows (stable), then runs of equal rows
            order = xp.lexsort(moved.T[::-1]) if moved.shape[1] else xp.arange(n)
            srt = moved[order]
        if n:
            new = xp.ones(n, bool)
            new[1:] = (srt[1:] != srt[:-1]).any(axis=1) if moved.shape[1] else False
        else:
            new = xp.zeros(0, bool)
        group = xp.cumsum(new) - 1
        starts = xp.flatnonzero(new)
        counts = xp.diff(xp.append(starts, n)).astype(np.int64)
        inverse = xp.empty(n, np.int64)
        inverse[order] = group
        values = srt[starts]
        if dim is None:
            values = values.reshape(-1)
        else:
            rest = tuple(s for i, s in enumerate(x.shape) if i != dim)
            values = xp.moveaxis(values.reshape((values.shape[0], *rest)), 0, dim)
        return xp.ascontiguousarray(values), inverse.reshape(shape_inv), counts


def _unique(input, dim, consecutive, return_inverse, return_counts):
    d = None if dim is None else wrap_dim(dim, input.ndim)
    if d is not None and input.ndim == 0:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
        )
    if d is not None and 0 in input.shape:  # PyTorch's checks for empty slices
        if input.shape[d] != 0:
            raise RuntimeError(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied"
            )
        if list(input.shape).count(0) > 1:
            raise RuntimeError(
                "Number of zero sized dimensions is more than one, so unique cannot be applied "
            )
    values, inverse, counts = bind(
        Unique, (input.detach(),), {"dim": d, "consecutive": consecutive}
    )
    out = (values,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return values if len(out) == 1 else out


@public
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements of ``input`` (or unique slices along ``dim``), sorted.

    Parameters
    ----------
    input : Tensor
    sorted : bool, default True
        Accepted for PyTorch's signature: the CPU result is sorted either way, as
        PyTorch's CPU kernel is.
    return_inverse : bool, default False
        Also return, for each element (slice), the index of its value in the output.
    return_counts : bool, default False
        Also return how often each unique value occurs.
    dim : int, optional

    Returns
    -------
    Tensor, or a tuple ``(output, inverse_indices?, counts?)``
        No gradient; NaN elements are all distinct (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.unique(numbagrad.tensor([3, 1, 2, 1, 3]), return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 1, 2]))
    """
    return _unique(input, dim, False, return_inverse, return_counts)


@public
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.unique_consecutive(numbagrad.tensor([1, 1, 2, 2, 1]))
    tensor([1, 2, 1])
    """
    return _unique(input, dim, True, return_inverse, return_counts)
