"""numbagrad: Numba-JIT accelerated autograd with PyTorch's custom-gradient API.

Scripts written against ``torch.autograd.Function`` run with ``import numbagrad as torch``.
Tensors keep their data in flat NumPy storage (``.numpy()`` and ``from_numpy`` share memory),
elementwise, reduction and accumulation kernels are ``@numba.njit``, and a queue-based
engine runs reverse mode.
"""

from numbagrad._version import __version__
from numbagrad import _dtype  # noqa: I001  (import order: see NOTE [Import order])
from numbagrad._dtype import (
    bool, dtype, float32, float64, get_default_dtype, int32, int64, promote_types,
    set_default_dtype,
)
from numbagrad._device import device
from numbagrad._tensor import Size, Tensor
from numbagrad import autograd
from numbagrad.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from numbagrad import ops
from numbagrad.ops import *  # noqa: F403
from numbagrad._creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace,
    manual_seed, ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like,
    randperm, scalar_tensor, seed, tensor, zeros, zeros_like,
)
from numbagrad import testing

float = float32  # noqa: A001 - torch.float
double = float64
long = int64
int = int32  # noqa: A001 - torch.int


def is_tensor(obj) -> "builtins.bool":  # noqa: F821
    """Return True if ``obj`` is a numbagrad Tensor."""
    return isinstance(obj, Tensor)


def numel(input) -> "builtins.int":  # noqa: A002, F821
    """Number of elements of ``input``."""
    return input.numel()


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> "builtins.bool":  # noqa: A002, F821
    """True when ``|input - other| <= atol + rtol * |other|`` elementwise (broadcasting).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.allclose(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([1.0, 2.0 + 1e-9]))
    True
    """
    import numpy as _np

    return __builtins__["bool"](_np.allclose(input._data, other._data, rtol=rtol, atol=atol,
                                              equal_nan=equal_nan)) \
        if isinstance(__builtins__, dict) else _np.allclose(input._data, other._data, rtol=rtol,
                                                            atol=atol, equal_nan=equal_nan)


def equal(input, other) -> "builtins.bool":  # noqa: A002, F821
    """True when both tensors have the same shape and elements."""
    import numpy as _np

    return input.shape == other.shape and _np.array_equal(input._data, other._data)


def result_type(tensor1, tensor2):
    """The dtype PyTorch's promotion gives an op of the two operands."""
    return _dtype.result_type(tensor1, tensor2)


def can_cast(from_, to) -> "builtins.bool":  # noqa: F821
    """Whether casting ``from_`` to ``to`` is allowed by PyTorch's type-promotion rules."""
    return from_._category <= to._category


get_default_dtype = get_default_dtype
