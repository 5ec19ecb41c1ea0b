"""``@cuda.jit`` sort: a stable merge sort of every row of a contiguous ``(rows, n)`` array,
and ``searchsorted`` (a binary search per value).

NOTE [CUDA sort]
The sorted dim is moved last and the keys copied into a contiguous ``(rows, n)`` buffer
(one strided copy), beside their positions ``0 .. n-1``. Pass ``w`` (1, 2, 4, ... below
``n``) merges each pair of sorted runs ``[s, s + w)`` and ``[s + w, s + 2w)`` of every row
into a second buffer, one thread per element and no cooperation between threads: an
element of the left run lands at its rank in its run plus the number of right-run keys
*strictly less* than it, an element of the right run at its rank plus the number of
left-run keys *not greater* than it (two binary searches, the "merge path" co-rank), so
equal keys keep their order (a stable sort) and every destination is written exactly once.
``ceil(log2 n)`` grid-stride launches over all ``rows * n`` elements sort rows of any length
with any grid; the buffers swap between passes. NaN sorts as the largest key, after
``+inf``, as in NumPy and PyTorch.
"""

from __future__ import annotations

from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = ["merge_pass_kernel", "row_iota_kernel", "searchsorted_kernel"]


@cuda.jit(device=True)
def _less(a, b):
    """``a < b`` with NaN the largest value."""
    return a < b or (b != b and a == a)


@cuda.jit
def row_iota_kernel(total, n, out):
    """``out[e] = e % n``: each element's position in its row."""
    for e in range(cuda.grid(1), total, cuda.gridsize(1)):
        out[e] = e % n


@cuda.jit
def merge_pass_kernel(total, n, w, kin, iin, kout, iout):
    """One merge pass of width ``w`` over all rows (NOTE [CUDA sort])."""
    for e in range(cuda.grid(1), total, cuda.gridsize(1)):
        row0 = (e // n) * n
        i = e - row0
        start = (i // (2 * w)) * (2 * w)
        mid = min(start + w, n)
        end = min(start + 2 * w, n)
        key = kin[e]
        if i < mid:  # left run: count right-run keys strictly less than key
            lo = mid
            hi = end
            while lo < hi:
                m = (lo + hi) // 2
                if _less(kin[row0 + m], key):
                    lo = m + 1
                else:
                    hi = m
            pos = (i - start) + (lo - mid)
        else:  # right run: count left-run keys not greater than key
            lo = start
            hi = mid
            while lo < hi:
                m = (lo + hi) // 2
                if _less(key, kin[row0 + m]):
                    hi = m
                else:
                    lo = m + 1
            pos = (i - mid) + (lo - start)
        d = row0 + start + pos
        kout[d] = key
        iout[d] = iin[e]


@cuda.jit
def searchsorted_kernel(n, a, aoff, ast, m, v, voff, vshape, vst, right, out):
    """``out[i]``: where ``v[i]`` goes in the sorted 1-D ``a`` of ``m`` entries (stride
    ``ast``): before equal entries, or after them when ``right`` (NumPy's ``side``); NaN
    is the largest value, as in the sort."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        x = v[_offset(i, vshape, vst, voff)]
        lo = 0
        hi = m
        while lo < hi:
            mid = (lo + hi) // 2
            y = a[aoff + mid * ast]
            if (not _less(x, y)) if right else _less(y, x):
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
