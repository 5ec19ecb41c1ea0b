"""The CPU backend (``backend.CPU``, NOTE [Backends]) and its kernel modules
(``@numba.njit(cache=True)``, compiled lazily per dtype and cached on disk)."""

__all__ = ["accumulate", "alloc", "backend", "elementwise", "index", "threads"]
