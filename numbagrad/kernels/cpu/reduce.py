"""Sums over short rows and over a middle axis, as kernels that add in NumPy's own order.

NOTE [Sum kernels]
NumPy reduces an array as one inner loop per row of the innermost iterated axis, at about
10 ns a row, so a sum over many short rows is slow: ``x.sum(-1)`` of a ``(1000, 1000, 3)``
array (a pairwise-distance workload) is a million loops of three, and so is summing its
gradient back over the middle axis (the adjoint of broadcasting ``x[:, None, :]``). Both
patterns run here as one kernel call, with the result NumPy's bit for bit:

- ``sum_rows``: a reduction over the contiguous last axis, rows of at most 128 elements
  (NumPy's ``PW_BLOCKSIZE``; the backend checks it). NumPy adds such a row with its pairwise routine
  (``pairwise_sum`` in ``loops_utils.h``): below 8 elements one by one from 0, else eight
  running sums over strides of 8 combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
  (r6 + r7))`` and the remainder added one by one; the result is then added to the
  identity 0 (so a row of -0.0 sums to +0.0). Longer rows are split recursively by NumPy
  and stay with NumPy (their per-row cost is small anyway).
- ``sum_middle``: a reduction over the middle axis ``B`` of an ``(A, B, C)`` array with
  ``C > 1``. NumPy adds the ``B`` slices one by one into a zero-initialised ``(A, C)``
  output, which is this loop.

Accumulation is in the array's dtype, as NumPy's (float32 adds in float32). Arguments are
flat C-contiguous arrays whose sizes the caller derived from the shapes; nothing is checked
here (NOTE [Elementwise kernel conventions]). Indices are unsigned (NOTE [Broadcast
kernels]). ``out`` must be zero-filled.
"""

from numba import uint64

from numbagrad.kernels.cpu._jit import njit

__all__ = ["sum_middle", "sum_rows"]

_OPTS = {"cache": True, "nogil": True}


@njit(**_OPTS)
def sum_rows(x, n, out):
    """``out[r] = 0 + pairwise(x[r * n : (r + 1) * n])`` for each row ``r``, ``n <= 128``
    (``out`` zero-filled, one entry per row)."""
    n = uint64(n)
    tail = n - n % uint64(8)
    for r in range(uint64(out.size)):
        base = r * n
        res = out[r]  # 0 in the array's dtype
        if n < uint64(8):
            for i in range(n):
                res += x[base + i]
        else:
            r0 = x[base]
            r1 = x[base + uint64(1)]
            r2 = x[base + uint64(2)]
            r3 = x[base + uint64(3)]
            r4 = x[base + uint64(4)]
            r5 = x[base + uint64(5)]
            r6 = x[base + uint64(6)]
            r7 = x[base + uint64(7)]
            for i in range(uint64(8), tail, uint64(8)):
                k = base + i
                r0 += x[k]
                r1 += x[k + uint64(1)]
                r2 += x[k + uint64(2)]
                r3 += x[k + uint64(3)]
                r4 += x[k + uint64(4)]
                r5 += x[k + uint64(5)]
                r6 += x[k + uint64(6)]
                r7 += x[k + uint64(7)]
            res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            for i in range(tail, n):
                res += x[base + i]
        out[r] += res


@njit(**_OPTS)
def sum_middle(x, a_len, b_len, c_len, out):
    """``out[a, c] = sum over b of x[a, b, c]``, added in order of ``b`` into a zero-filled
    ``out`` (``x`` is ``(a_len, b_len, c_len)``, ``out`` ``(a_len, c_len)``, both flat)."""
    b_len = uint64(b_len)
    c_len = uint64(c_len)
    for a in range(uint64(a_len)):
        ob = a * c_len
        for b in range(b_len):
            xb = (a * b_len + b) * c_len
            for c in range(c_len):
                out[ob + c] += x[xb + c]
