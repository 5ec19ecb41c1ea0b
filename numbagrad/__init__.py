"""numbagrad: Numba-JIT accelerated autograd with PyTorch's custom-gradient API.

Scripts written against ``torch.autograd.Function`` run with ``import numbagrad as torch``.
Tensors keep their data in flat NumPy storage (``.numpy()`` and ``from_numpy`` share memory),
elementwise, reduction and accumulation kernels are ``@numba.njit``, and a queue-based
engine runs reverse mode.
"""

import builtins

from numbagrad import (
    _dtype,
    accelerator,
    autograd,
    distributed,
    func,
    functional,
    linalg,
    nn,
    ops,
    optim,
    profiler,
    special,
    testing,
)
from numbagrad._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    scalar_tensor,
    seed,
    tensor,
    zeros,
    zeros_like,
)
from numbagrad._device import device
from numbagrad._dtype import (
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int32,
    int64,
    promote_types,
    set_default_dtype,
)
from numbagrad._tensor import Size, Tensor
from numbagrad._version import __version__
from numbagrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from numbagrad.func import vmap
from numbagrad.ops import *  # noqa: F403

float = float32
double = float64
half = float16
long = int64
int = int32


def is_tensor(obj):
    """Return True if ``obj`` is a numbagrad Tensor."""
    return isinstance(obj, Tensor)


def numel(input):
    """Number of elements of ``input``."""
    return input.numel()


def is_floating_point(input):
    """Return True if ``input`` has a floating-point dtype.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.is_floating_point(numbagrad.tensor([1.0])), numbagrad.is_floating_point(
    ...     numbagrad.tensor([1]))
    (True, False)
    """
    return input.is_floating_point()


def is_complex(input):
    """Return True if ``input`` has a complex dtype (:meth:`Tensor.is_complex`): False for
    every dtype numbagrad has.

    Raises
    ------
    TypeError
        When ``input`` is not a Tensor, as PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.is_complex(numbagrad.tensor([1.0]))
    False
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"is_complex(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input.is_complex()


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when ``|input - other| <= atol + rtol * |other|`` elementwise (broadcasting).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.allclose(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([1.0, 2.0 + 1e-9]))
    True
    """
    import numpy as _np

    return builtins.bool(
        _np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def equal(input, other):
    """True when both tensors have the same shape and elements (:meth:`Tensor.equal`)."""
    return input.equal(other)


def result_type(tensor1, tensor2):
    """The dtype PyTorch's promotion gives an op of the two operands."""
    return _dtype.result_type(tensor1, tensor2)


def can_cast(from_, to):
    """Whether casting ``from_`` to ``to`` is allowed by PyTorch's type-promotion rules."""
    return from_._category <= to._category


def set_num_threads(n):
    """Use ``n`` threads for large elementwise work and matrix products (PyTorch's
    ``torch.set_num_threads``).

    The default is the number of cores this process may run on (its CPU affinity), capped
    by ``NUMBA_NUM_THREADS`` and ``OMP_NUM_THREADS`` when set, and by 8. Work below about
    128K elements (a million for plain arithmetic) always runs on the calling thread.
    Matrix products run NumPy's OpenBLAS at one thread, a large product cut into pieces
    that up to ``n`` threads compute at once; with ``OPENBLAS_NUM_THREADS`` set (and until
    this function is called) they are left to OpenBLAS's own threads.
    """
    _threads.set_num_threads(n)


def get_num_threads():
    """The number of threads large elementwise work uses (see :func:`set_num_threads`)."""
    return _threads.get_num_threads()


def empty_cache():
    """Return the free arrays of the CPU buffer cache to the system.

    Results of at least 256 KiB come from a cache that hands an array out again once
    nothing refers to it (a fresh large array costs page faults); it holds up to 1 GiB,
    set with the environment variable ``NUMBAGRAD_BUFFER_CACHE_MB`` (0 turns it off).
    Arrays still held by tensors are not freed, only forgotten by the cache.
    """
    _alloc.clear()


# -- module-level names scripts use (constants, limits, RNG, devices, save/load) -------------
import math as _math  # noqa: E402

from numbagrad import _dynamo, backends, compiler, cuda, distributions, fft, hub, library, utils  # noqa: E402
from numbagrad._compile import compile  # noqa: E402
from numbagrad._creation import (  # noqa: E402
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    multinomial,
    normal,
    poisson,
    set_rng_state,
)
from numbagrad._device import get_default_device, set_default_device  # noqa: E402
from numbagrad._dtype import finfo, iinfo  # noqa: E402
from numbagrad._inplace_functions import *  # noqa: E402, F403
from numbagrad._legacy import (  # noqa: E402
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from numbagrad._norms import frobenius_norm, nuclear_norm  # noqa: E402
from numbagrad._observe import precompile, set_log_compiles  # noqa: E402
from numbagrad._stft import istft, stft  # noqa: E402
from numbagrad._switches import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    set_anomaly_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from numbagrad._tensor import set_printoptions  # noqa: E402
from numbagrad._windows import (  # noqa: E402
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
from numbagrad.cuda._interop import from_dlpack  # noqa: E402
from numbagrad.kernels.cpu import alloc as _alloc  # noqa: E402
from numbagrad.kernels.cpu import threads as _threads  # noqa: E402
from numbagrad.serialization import load, save  # noqa: E402

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e
newaxis = None  # as torch.newaxis: ``x[numbagrad.newaxis]`` adds a dimension
globals().update(ops._methods.NUMPY_KEYWORDS)  # ``numbagrad.sum(x, axis=0, keepdims=True)``


def __getattr__(name):
    if name in ("complex32", "chalf"):
        raise AttributeError(
            f"module 'numbagrad' has no attribute {name!r}: {_dtype._NO_COMPLEX32}"
        )
    raise AttributeError(f"module 'numbagrad' has no attribute {name!r}")


# every public name: the ops, creation and dtype names imported above and the functions here
__all__ = sorted(name for name in globals() if not name.startswith("_") and name != "builtins")
