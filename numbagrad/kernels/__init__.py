"""Device backends: array-in, array-out code that knows nothing about Tensor.

NOTE [Backends]
Ops never call NumPy's math, the thread pool, the buffer cache or a JIT kernel directly:
each primitive's ``impl`` receives the *backend* of its inputs' device (``backend_of``,
chosen once per op application) and calls it; fused backward rules use the backend that
ran the forward (``ctx.be``), and the engine's gradient sums and leaf accumulation go
through the backend of the gradient arrays. A backend provides

``name``
    the device type (``"cpu"``).
``xp``
    an array namespace with NumPy's names and semantics for layout, indexing and
    reductions (``reshape``, ``transpose``, ``take_along_axis``, ``concatenate``,
    ``einsum``, ``cumsum``, ...); for the CPU it is NumPy itself.
``math``
    the array-level twins of the ops used in derivative formulas (``exp``, ``cos``,
    ``where``, ``sigmoid``, ...), so a formula stated once in terms of ``m.<name>`` runs
    on tensors (``m`` = the op namespace) or on arrays (``m`` = ``be.math``).
policy methods
    ``map``, ``binary``, ``multiply``, ``unary_backward``, ``mul_backward``, ``sum``,
    ``expand_back``, ``empty``, ``check_index``, ``add_grads``, ``accumulate``: where the
    device's speed decisions live (for the CPU: SIMD ufuncs vs fused ``@njit`` kernels,
    threads, the buffer cache and the size thresholds between them).

The interface is written down as a ``typing.Protocol``, ``kernels.interface.Backend``
(NOTE [Backend protocol]); mypy checks each backend against it.

``kernels/cpu/`` holds the CPU backend (``cpu.backend.CPU``) and its ``@njit`` kernel
modules; a CUDA backend registers itself (``register_backend("cuda", ...)``) with the same
protocol and is chosen for ``numba.cuda`` device arrays by ``backend_of``.

NOTE [Lazy kernels]
Importing numba costs about a quarter of a second, more than numpy and all of numbagrad's
Python together. Backends therefore reach kernel modules through ``lazy("...")`` proxies:
numba is imported, and the cached machine code loaded, on the first call of a kernel, not
at ``import numbagrad``. Workloads that need no JIT kernel never import numba.
"""

import importlib

__all__ = [
    "KERNEL_MIN",
    "PADE13",
    "PARALLEL_MIN",
    "LinAlgError",
    "backend",
    "backend_of",
    "lazy",
    "module",
    "register_backend",
]

# Element count from which the ``prange`` twins of a kernel pay off on two cores (their
# start cost is ~3-7 us; measured in asv_bench/benchmarks/bench_kernels.py).
PARALLEL_MIN = 200_000

# Below this many elements NumPy's ufuncs are as fast as a fused kernel call, and using
# them keeps numba out of small workloads (NOTE [Lazy kernels]).
KERNEL_MIN = 4096

# The degree-13 Pade coefficients b_0 .. b_13 of ``exp`` (Higham 2005), shared by the CPU's
# ``matrix_exp`` (ops/linalg_decomp.py) and the CUDA Pade-sum kernel (a module-level tuple:
# a kernel compiles it as constants).
PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (a singular matrix in ``inv`` or
    ``solve``, a matrix that is not positive-definite in ``cholesky``), as
    ``torch.linalg.LinAlgError``; a ``RuntimeError``. (Defined at the kernel layer, where
    the device backends detect the failures; public as ``numbagrad.linalg.LinAlgError``.)"""

    __module__ = "numbagrad.linalg"


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
# ``numbagrad.kernels.<package>.<kind>`` for the device's package. Backends look their
# kernels up through it, so a device's kernels live under its own package.
REGISTRY = {"cpu": "numbagrad.kernels.cpu", "cuda": "numbagrad.kernels.cuda"}
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
            raise RuntimeError(
                f"no kernels are registered for device {device!r}; available: {sorted(REGISTRY)}"
            ) from None
        mod = _modules[key] = lazy(f"{package}.{kind}")
    return mod


# NOTE [Optional engines]
# The CUDA engine (``kernels/cuda/backend.py`` and the kernel modules it reaches) is optional:
# importing numbagrad must not import it, and a CPU-only program never does. ``backend``
# below is its one declared loader: code above the kernels that needs the CUDA backend object
# asks ``backend("cuda")`` (imported, and registered in ``_BACKENDS``, on the first call)
# instead of importing ``kernels.cuda.backend`` inside a function. The small CUDA modules
# that import no numba (``_driver``, ``array``, ``launch``, ``memory``) are imported at module
# level like any other; ``_driver.cuda()`` alone imports ``numba.cuda`` (NOTE [CUDA driver]).
# MPI (``mpi4py``) is loaded on first use by its one user, ``distributed._process_group``.
_BACKENDS: dict = {}


def register_backend(device: str, be) -> None:
    """Register ``be`` as the backend of device type ``device`` (``backend_of`` asks each
    registered backend whether it ``owns`` an array)."""
    _BACKENDS[device] = be


def backend(device: str = "cpu"):
    """The backend object of ``device`` (a device type such as ``"cpu"``); the loader of the
    optional CUDA engine (NOTE [Optional engines]).

    Raises
    ------
    RuntimeError
        For a device with no backend.
    """
    be = _BACKENDS.get(device)
    if be is None:
        if device == "cpu":
            from numbagrad.kernels.cpu.backend import CPU

            be = _BACKENDS["cpu"] = CPU
        elif device == "cuda":  # NOTE [CUDA driver]: imported (and numba.cuda) on first use
            from numbagrad.kernels.cuda.backend import CUDA

            be = CUDA
        else:
            raise RuntimeError(
                f"no backend is available for device {device!r}; "
                f"available: {sorted(set(_BACKENDS) | {'cpu'})}"
            )
    return be


def backend_of(array):
    """The backend owning ``array``: NumPy arrays (and scalars) are the CPU's."""
    for be in _BACKENDS.values():
        if be.owns(array):
            return be
    raise TypeError(f"no numbagrad backend handles arrays of type {type(array).__name__}")
