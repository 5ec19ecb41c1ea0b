"""Array-in, array-out JIT kernels. They know nothing about Tensor.

``kernels.cpu`` holds the ``@numba.njit(cache=True)`` kernels; CUDA kernels join as
``kernels.cuda`` behind the same names.

NOTE [Lazy kernels]
Importing numba costs about a quarter of a second, more than numpy and all of numbagrad's
Python together. Ops therefore reach kernels through ``lazy("...")`` proxies: numba is
imported, and the cached machine code loaded, on the first call of a kernel, not at
``import numbagrad``. Workloads that need no JIT kernel never import numba.
"""

import importlib

# Element count from which the ``prange`` twins of a kernel pay off on two cores (their
# start cost is ~3-7 us; measured in asv_bench/benchmarks/bench_kernels.py).
PARALLEL_MIN = 200_000

# Below this many elements NumPy's ufuncs are as fast as a fused kernel call, and using
# them keeps numba out of small workloads (NOTE [Lazy kernels]).
KERNEL_MIN = 4096


class _Lazy:
    """A module proxy that imports the module on first attribute access."""

    def __init__(self, name):
        self.__dict__["_name"] = name

    def __getattr__(self, attr):
        module = importlib.import_module(self.__dict__["_name"])
        # copy the module's names in: later lookups are plain instance-dict hits
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        try:
            return self.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {self._name!r} has no attribute {attr!r}") from None


def lazy(name: str) -> _Lazy:
    """A lazily imported kernel module (see NOTE [Lazy kernels])."""
    return _Lazy(name)
