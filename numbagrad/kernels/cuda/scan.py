"""``@cuda.jit`` scans (``cumsum``, ``cumprod``, ``logcumsumexp``, running maximum and minimum)
along one dim, for any row length.

NOTE [CUDA scans]
The scanned dim is moved last by permuting shape and strides (no copy), so row ``j`` is the
``r`` elements with linear indices ``j * r .. j * r + r - 1`` of the permuted view; the output
is written through its own permuted strides. One block scans one row at a time (blocks
stride over rows), in three phases (reduce, scan the partials, rescan)::

    row (r = 10), blockDim 4, seg = ceil(r / 4) = 3:
    thread:       0          1          2          3
    segment:      x0 x1 x2   x3 x4 x5   x6 x7 x8   x9
    1. totals:    A          B          C          D          (sequential, in registers)
    2. scan:      A          AB         ABC        ABCD       (Hillis-Steele in shared memory:
                                                               log2(blockDim) steps)
    3. rescan:    from 1     from A     from AB    from ABC   (each thread rescans its
                                                               segment from the prefix)

so a row of any length costs ``2 log2(blockDim) + 2`` barriers, and a thread whose segment
is empty (``r < blockDim``) takes part with the identity. Floating rows accumulate in
float64 (PyTorch's CPU ``acc_type`` for float32, so a partial product may pass float32's
range), integer and bool rows in int64. ``logcumsumexp`` is the scan of ``logaddexp``
(associative, as the scheme needs; exact and stable, with no common shift); the running
maximum and minimum (NumPy's ``maximum.accumulate``, which ``cummax`` reads) propagate NaN. The
combinations are grouped differently from a sequential scan, so float64 results may differ
from the CPU's by rounding.
"""

from __future__ import annotations

import math

from numba import float64, int64

from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = ["SCAN", "TPB", "scan_int_kernel", "scan_kernel"]

TPB = 256  # shared-memory slots: the largest block a scan is launched with

# op codes of the scan kernels
SCAN = {"cumsum": 0, "cumprod": 1, "logcumsumexp": 2, "cummax": 3, "cummin": 4}
# the names the device functions compare with (NOTE [CUDA op codes] in ``elementwise.py``)
_OP_CUMSUM = SCAN["cumsum"]
_OP_CUMPROD = SCAN["cumprod"]
_OP_LOGCUMSUMEXP = SCAN["logcumsumexp"]
_OP_CUMMAX = SCAN["cummax"]
_OP_CUMMIN = SCAN["cummin"]


@cuda.jit(device=True)
def _op(op, a, b):
    """``a + b``, ``a * b``, or the maximum or minimum propagating NaN (op 3, 4), in the
    operands' type (the integer scans stay exact in int64)."""
    if op == _OP_CUMSUM:
        return a + b
    if op == _OP_CUMPROD:
        return a * b
    if op == _OP_CUMMAX:
        return a if a >= b or a != a else b
    return a if a <= b or a != a else b  # _OP_CUMMIN


@cuda.jit(device=True)
def _fop(op, a, b):
    """The floating scans' combination: ``_op``, or ``logaddexp`` (op 2) as NumPy's."""
    if op != _OP_LOGCUMSUMEXP:
        return _op(op, a, b)
    if a != a or b != b:
        return math.nan
    if a == b:  # also inf and -inf, where a - b is NaN
        return a + math.log(2.0)
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@cuda.jit
def scan_kernel(op, nrow, r, x, xoff, shape, st, out, ooff, ost, identity):
    """The inclusive scan ``op`` (``SCAN``) of each row of ``x`` into ``out``, in float64."""
    sm = cuda.shared.array(TPB, float64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    seg = (r + nt - 1) // nt
    lo = min(tid * seg, r)
    hi = min(lo + seg, r)
    for j in range(cuda.blockIdx.x, nrow, cuda.gridDim.x):
        acc = identity
        for k in range(lo, hi):
            acc = _fop(op, acc, float64(x[_offset(j * r + k, shape, st, xoff)]))
        sm[tid] = acc
        cuda.syncthreads()
        s = 1
        while s < nt:
            w = identity
            if tid >= s:
                w = sm[tid - s]
            cuda.syncthreads()  # every read of this step before any write
            sm[tid] = _fop(op, w, sm[tid])
            cuda.syncthreads()
            s *= 2
        carry = identity
        if tid > 0:
            carry = sm[tid - 1]
        for k in range(lo, hi):
            carry = _fop(op, carry, float64(x[_offset(j * r + k, shape, st, xoff)]))
            out[_offset(j * r + k, shape, ost, ooff)] = carry
        cuda.syncthreads()  # sm is reused by the block's next row


@cuda.jit
def scan_int_kernel(op, nrow, r, x, xoff, shape, st, out, ooff, ost, identity):
    """``scan_kernel`` for integer and bool inputs, accumulating in int64."""
    sm = cuda.shared.array(TPB, int64)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    seg = (r + nt - 1) // nt
    lo = min(tid * seg, r)
    hi = min(lo + seg, r)
    for j in range(cuda.blockIdx.x, nrow, cuda.gridDim.x):
        acc = identity
        for k in range(lo, hi):
            acc = _op(op, acc, int64(x[_offset(j * r + k, shape, st, xoff)]))
        sm[tid] = acc
        cuda.syncthreads()
        s = 1
        while s < nt:
            w = identity
            if tid >= s:
                w = sm[tid - s]
            cuda.syncthreads()
            sm[tid] = _op(op, w, sm[tid])
            cuda.syncthreads()
            s *= 2
        carry = identity
        if tid > 0:
            carry = sm[tid - 1]
        for k in range(lo, hi):
            carry = _op(op, carry, int64(x[_offset(j * r + k, shape, st, xoff)]))
            out[_offset(j * r + k, shape, ost, ooff)] = carry
        cuda.syncthreads()
