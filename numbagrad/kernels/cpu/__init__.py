"""CPU kernels (``@numba.njit(cache=True)``, compiled lazily per dtype and cached on disk)."""
