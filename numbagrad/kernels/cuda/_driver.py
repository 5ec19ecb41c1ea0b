"""The one module that imports ``numba.cuda`` (docs/developer.rst, design decisions, 5).

NOTE [CUDA driver]
Every ``numba.cuda`` symbol numbagrad uses is reached through this module, so the backend
could move to another binding (numba-cuda-mlir) by editing one file. ``numba.cuda`` is
imported on first use (:func:`cuda`), never at ``import numbagrad``: importing it costs
time, and a CPU-only install has no numba-cuda at all. Host<->device copies made by
numbagrad go through :func:`to_device` and :func:`to_host`, which count them in
:data:`COPIES`; the tests use the counts to prove that ``backward`` keeps gradients on the
device. Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, set before numba.cuda is
imported) ``numba.cuda`` pretends one device, which is how CI runs the CUDA path.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import metadata

import numpy as np

__all__ = ["COPIES", "CudaUnavailableError", "cuda", "is_available", "require", "simulator"]

INSTALL_HINT = 'pip install "numbagrad[cuda]"'

# host->device and device->host copies made through this module (NOTE [CUDA driver])
COPIES = {"h2d": 0, "d2h": 0}

_state: dict = {}


class CudaUnavailableError(RuntimeError):
    """CUDA was asked for, but numba-cuda or a GPU is missing (the message says which)."""


def installed() -> bool:
    """Whether the numba-cuda package is installed (without importing it)."""
    return importlib.util.find_spec("numba_cuda") is not None


def simulator() -> bool:
    """Whether numba.cuda runs (or will run) as the CUDA simulator."""
    # numba reads the variable once, when numba.cuda is imported
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def cuda():
    """The ``numba.cuda`` module, imported on first call.

    Raises
    ------
    CudaUnavailableError
        When numba-cuda is not installed, or cannot compile kernels with the installed
        NumPy (``_check_compiler``).
    """
    mod = _state.get("cuda")
    if mod is None:
        if not installed():
            raise CudaUnavailableError(
                "CUDA is not available: the numba-cuda package is not installed; install it "
                f"with {INSTALL_HINT}"
            )
        from numba import cuda as mod  # the only numba.cuda import (NOTE [CUDA driver])

        if not simulator():
            _check_compiler()
        from numbagrad.kernels.cuda import memory

        memory.install(mod)  # the caching allocator (NOTE [CUDA memory pool])
        _state["cuda"] = mod
    return mod


def _check_compiler():
    """Refuse, with the fix, a numba-cuda that cannot compile kernels against this NumPy.

    numba-cuda imports its NumPy typing (``numba.cuda.np.arrayobj``) at the first kernel
    compile; numba-cuda 0.30 names ``np.row_stack``, which NumPy 2.5 removed, so there the
    first CUDA op would fail deep inside numba with an AttributeError (seen on an H200
    image with numba-cuda 0.30.4 and NumPy 2.5.2; the suite passes with NumPy 2.4.6)."""
    try:
        from numba.cuda.np import arrayobj  # noqa: F401  (what the first compile imports)
    except (AttributeError, ImportError) as e:
        version = metadata.version("numba-cuda")
        raise CudaUnavailableError(
            f"CUDA is not usable: numba-cuda {version} cannot compile kernels "
            f"with NumPy {np.__version__} ({type(e).__name__}: {e}); install a NumPy that "
            "this numba-cuda supports (pip install 'numpy<2.5') or a newer numba-cuda"
        ) from e


def is_available() -> bool:
    """Whether CUDA tensors can be made: numba-cuda is installed and sees a GPU (or runs
    as the simulator)."""
    if not installed():
        return False
    try:
        return bool(cuda().is_available())
    except CudaUnavailableError as e:  # (require() raises it: it says what to fix)
        _state["error"] = e
        return False
    except Exception:  # a broken driver install reads as "no GPU"
        return False


def require():
    """``numba.cuda`` after checking that a device is usable; the error says what is
    missing (numba-cuda, or a GPU)."""
    mod = cuda()
    if _state.get("available"):  # checked once: every allocation comes through here
        return mod
    if not is_available():
        if "error" in _state:
            raise _state["error"]
        raise CudaUnavailableError(
            "CUDA is not available: numba-cuda is installed but no CUDA GPU (or driver) was "
            "found; run on 'cpu', or set NUMBA_ENABLE_CUDASIM=1 to use the CUDA simulator "
            f"(install the CUDA extra with {INSTALL_HINT})"
        )
    _state["available"] = True
    return mod


def device_array(n: int, dtype):
    """An uninitialised flat device array of ``n`` elements."""
    return require().device_array(n, dtype=np.dtype(dtype))


def to_device(host: np.ndarray, stream=0):
    """Copy a contiguous host array to a new device array (counted in ``COPIES``)."""
    COPIES["h2d"] += 1
    return require().to_device(np.ascontiguousarray(host), stream=stream)


def to_host(dev, stream=0) -> np.ndarray:
    """Copy a device array to a new host array (counted in ``COPIES``)."""
    COPIES["d2h"] += 1
    return dev.copy_to_host(stream=stream)


def is_device_array(obj) -> bool:
    """Whether ``obj`` is a numba device array (the simulator's too) or exposes
    ``__cuda_array_interface__``."""
    if type(obj).__name__ == "FakeCUDAArray":  # the simulator's device arrays
        return True
    return hasattr(obj, "__cuda_array_interface__")


def as_device_array(obj):
    """A numba device array for ``obj`` (zero copy through ``__cuda_array_interface__``)."""
    mod = cuda()
    if type(obj).__name__ == "FakeCUDAArray":
        return obj
    return mod.as_cuda_array(obj)


def strided_view(flat, offset: int, shape, strides, dtype):
    """A zero-copy device array of ``shape``/``strides`` (in elements) over the flat device
    array ``flat`` from element ``offset`` (a GPU array, or the simulator's fake one)."""
    shape = tuple(shape)
    n = 1
    for s in shape:
        n *= s
    cstrides, acc = [], 1
    for s in reversed(shape):
        cstrides.append(acc)
        acc *= max(s, 1)
    if tuple(strides) == tuple(reversed(cstrides)) or n == 0:
        return flat[offset : offset + n].reshape(shape)  # a contiguous slice: a view
    itemsize = np.dtype(dtype).itemsize
    bstrides = tuple(int(s) * itemsize for s in strides)
    if type(flat).__name__ == "FakeCUDAArray":
        host = np.lib.stride_tricks.as_strided(flat._ary[offset:], shape, bstrides)
        return type(flat)(host)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return DeviceNDArray(shape, bstrides, np.dtype(dtype), gpu_data=flat[offset:].gpu_data)


_core_streams: dict = {}


def core_stream(stream):
    """numba-cuda's launch-time form of ``stream`` (a numba stream, or 0: the default),
    made once per stream."""
    key = id(stream) if stream else 0
    hit = _core_streams.get(key)
    if hit is not None and hit[0] is (stream or 0):
        return hit[1]
    from numba.cuda.cudadrv import driver as numba_driver

    core = numba_driver._to_core_stream(stream)
    if len(_core_streams) > 64:  # streams come and go: keep the cache small
        _core_streams.clear()
    _core_streams[key] = (stream or 0, core)  # (the stream is kept: its id stays unique)
    return core


def launch_quietly(kernel, grid, block, stream, args) -> None:
    """``kernel[grid, block, stream](*args)`` without numba's low-occupancy warning: small
    tensors make small grids on purpose (a grid-stride launch sized to the data)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Grid size .* under-utilization")
        kernel[grid, block, stream](*args)


def device_count() -> int:
    """The number of CUDA devices numba sees (0 when CUDA is unavailable)."""
    if not is_available():
        return 0
    mod = cuda()
    try:
        return len(mod.gpus)
    except TypeError:  # the simulator's device list has no length: it simulates one GPU
        return 1


def current_device() -> int:
    """The index of the current CUDA device."""
    return int(getattr(require().get_current_device(), "id", 0))  # (the simulator: no id)


def set_device(index: int) -> None:
    """Make device ``index`` current."""
    require().select_device(int(index))


def device_name(index=None) -> str:
    """The name of the CUDA device ``index`` (the current one by default)."""
    mod = require()
    dev = mod.get_current_device() if index is None else mod.gpus[int(index)]
    name = getattr(dev, "name", None)
    if name is None:  # the simulator's device has no name
        return "CUDA simulator"
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize() -> None:
    """Wait for all work on the current device."""
    require().synchronize()


def new_stream():
    """A new numba CUDA stream."""
    return require().stream()


def default_stream():
    """The default numba CUDA stream."""
    return require().default_stream()
