"""Broadcasting arithmetic (``+ - * /`` of two operands of different shapes) as kernels.

NOTE [Broadcast kernels]
NumPy runs a broadcasting ufunc as one inner loop per row of its innermost dimension, at
about 10 ns a row: ``(512, 8, 1) * (512, 1, 32)`` (the per-example gradient of a linear
layer) is 4096 rows of 32 and takes 38 us, where the 131K products alone take 7 us. Here
both operands and the result are described as at most three coalesced dimensions
``(n0, n1, n2)`` with per-operand element strides (0 along a broadcast dimension); a
kernel walks the ``n0 * n1`` rows and, in each, one of three inner loops (both operands
contiguous, or one of them a single value), which LLVM vectorizes. The plan
(``backend._make_plan``) is computed once per pair of shapes. A row or column broadcast
against a full-size operand (``(512, 8) + (8,)``) is NumPy's fast case: the kernel's call
(thirteen arguments to type-check) costs more than NumPy's loop below ``4 * KERNEL_MIN``
result elements unless the rows are short (NumPy's cost per row then dominates), so the
backend takes it there only for rows of at most 16 (``backend._ROW_KERNEL_MIN``,
``_SHORT_ROW_MAX``).

Indices are unsigned: Numba adds no negative-index wraparound for them, which otherwise
keeps the inner loops from vectorizing. The kernels take a row range ``[r0, r1)`` so the
backend can split large results across its thread pool (``nogil``). What they assume (flat
C-contiguous ``a``, ``b`` and ``out``, strides and sizes that stay inside them) is what the
plan guarantees; nothing is checked here (NOTE [Elementwise kernel conventions]).
``error_model="numpy"``: a division by zero gives inf or NaN, never an exception.
"""

from numba import uint64

from numbagrad.kernels.cpu._jit import njit

__all__ = ["add", "multiply", "outer", "subtract", "true_divide"]

_OPTS = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(inline="always", **_OPTS)
def _op(code, x, y):
    # ``code`` is a constant in each kernel below: LLVM folds the branches away
    if code == 0:
        return x + y
    if code == 1:
        return x - y
    if code == 2:
        return x * y
    return x / y


@njit(inline="always", **_OPTS)
def _rows(code, a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1):
    # which operand is a single value per row is the same for every row: the test is made
    # once, outside the row loop, so that each row is only its (vectorized) inner loop
    n1 = uint64(n1)
    n2 = uint64(n2)
    sa0, sa1, sb0, sb1 = uint64(sa0), uint64(sa1), uint64(sb0), uint64(sb1)
    i = uint64(r0) // n1  # the row's (i, j), stepped without a division per row
    j = uint64(r0) - i * n1
    ia = i * sa0 + j * sa1  # the row's first element in a and in b
    ib = i * sb0 + j * sb1
    io = uint64(r0) * n2
    if sa2 == 0:
        for _ in range(uint64(r0), uint64(r1)):
            x = a[ia]
            for k in range(n2):
                out[io + k] = _op(code, x, b[ib + k])
            io += n2
            i, j, ia, ib = _next_row(i, j, ia, ib, n1, sa0, sa1, sb0, sb1)
    elif sb2 == 0:
        for _ in range(uint64(r0), uint64(r1)):
            y = b[ib]
            for k in range(n2):
                out[io + k] = _op(code, a[ia + k], y)
            io += n2
            i, j, ia, ib = _next_row(i, j, ia, ib, n1, sa0, sa1, sb0, sb1)
    else:
        for _ in range(uint64(r0), uint64(r1)):
            for k in range(n2):
                out[io + k] = _op(code, a[ia + k], b[ib + k])
            io += n2
            i, j, ia, ib = _next_row(i, j, ia, ib, n1, sa0, sa1, sb0, sb1)


@njit(inline="always", **_OPTS)
def _next_row(i, j, ia, ib, n1, sa0, sa1, sb0, sb1):
    j += uint64(1)
    if j == n1:
        i += uint64(1)
        return i, uint64(0), i * sa0, i * sb0
    return i, j, ia + sa1, ib + sb1


@njit(**_OPTS)
def add(a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1):
    """``out = a + b`` over rows ``[r0, r1)`` of a plan (NOTE [Broadcast kernels])."""
    _rows(0, a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1)


@njit(**_OPTS)
def subtract(a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1):
    """``out = a - b`` over rows ``[r0, r1)`` of a plan."""
    _rows(1, a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1)


@njit(**_OPTS)
def multiply(a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1):
    """``out = a * b`` over rows ``[r0, r1)`` of a plan."""
    _rows(2, a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1)


@njit(**_OPTS)
def true_divide(a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1):
    """``out = a / b`` over rows ``[r0, r1)`` of a plan."""
    _rows(3, a, b, out, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, r0, r1)


@njit(**_OPTS)
def outer(a, b, out, r0, r1):
    """``out[r, i, j] = a[r, i] * b[r, j]`` for rows ``r`` in ``[r0, r1)``: the batched outer
    product (``Outer``) of C-contiguous 2-D ``a`` ``(n, m)`` and ``b`` ``(n, k)`` into ``out``
    ``(n, m, k)``. NOTE [Broadcast kernels]' plan walks it as ``n * m`` rows of ``k``; the
    three explicit loops are ~30% faster (7 us against 9 us for ``(512, 8) x (512, 32)``
    float32, the per-example weight gradient of a linear layer)."""
    m = a.shape[1]
    k = b.shape[1]
    for r in range(r0, r1):
        for i in range(m):
            x = a[r, i]
            for j in range(k):
                out[r, i, j] = x * b[r, j]
