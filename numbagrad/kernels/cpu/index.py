"""Index validation and scatter kernels. Numba does no bounds checks, so every index
array is validated here before any kernel (or NumPy fancy indexing) uses it."""

from numba import njit


@njit(cache=True)
def first_out_of_range(idx, size):
    """Position of the first index outside ``[0, size)`` in flat ``idx``, or -1."""
    for i in range(idx.size):
        v = idx[i]
        if v < 0 or v >= size:
            return i
    return -1


@njit(cache=True)
def scatter_add_1d(out, idx, src):
    """``out[idx[i]] += src[i]`` serially (a parallel scatter would lose updates).
    Indices must be validated first."""
    for i in range(idx.size):
        out[idx[i]] += src[i]
