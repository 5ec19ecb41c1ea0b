"""Index validation. Numba does no bounds checks, and NumPy wraps negative indices where
PyTorch refuses them, so every index array is validated here before use."""

from numbagrad.kernels.cpu._jit import njit

__all__ = ["first_out_of_range"]


@njit(cache=True)
def first_out_of_range(idx, size):
    """Position of the first index outside ``[0, size)`` in flat ``idx``, or -1.

    Assumes: ``idx`` 1-D (flat) of an integer dtype (the backend passes int64), any length
    (0 included); ``size`` an integer; contiguous for the cached specialisation."""
    for i in range(idx.size):
        v = idx[i]
        if v < 0 or v >= size:
            return i
    return -1
