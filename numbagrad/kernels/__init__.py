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


# NOTE [Kernel registry]
# Kernel modules are found per device here and nowhere else: ``module(kind, device)`` is
# ``numbagrad.kernels.<package>.<kind>`` for the device's package. ``cpu`` is the only
# device so far; the CUDA backend registers ``"cuda": "numbagrad.kernels.cuda"`` with the
# same module and kernel names, and the ops pick the module by their inputs' device.
REGISTRY = {"cpu": "numbagrad.kernels.cpu"}
_modules: dict = {}


def module(kind: str, device: str = "cpu") -> _Lazy:
    """The (lazily imported) kernel module ``kind`` of ``device``, e.g. ``"elementwise"``.

    Raises
    ------
    RuntimeError
        For a device with no registered kernels.
    """
    key = (kind, device)
    mod = _modules.get(key)
    if mod is None:
        try:
            package = REGISTRY[device]
        except KeyError:
            raise RuntimeError(f"no kernels are registered for device {device!r}; "
                               f"available: {sorted(REGISTRY)}") from None
        mod = _modules[key] = lazy(f"{package}.{kind}")
    return mod
