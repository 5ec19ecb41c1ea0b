"""``@cuda.jit`` kernels of the special functions (``numbagrad.special``) and ``nextafter``.

NOTE [CUDA special functions]
The scalar formulas are the CPU's: the kernels here call the ``@njit`` functions of
``kernels/cpu/special.py`` (``_unary_scalar``, ``polygamma_scalar``, ``gammainc_scalar``,
...), which numba-cuda compiles for the device when a CUDA kernel calls a CPU-jitted
function (its typing context turns the CPU dispatcher into a device function of the same
Python source, with the CUDA target's NumPy error model: a pole gives inf or NaN, as on the
CPU). So each algorithm has one source for both targets, and the CUDA results differ from
the CPU's only by the device's libdevice ``exp``/``log``/``lgamma``/``erfc`` (a few ulps
of float64). The coefficient tables of those functions are module-level NumPy arrays, which
numba freezes into the device code as constants. The device versions are compiled in each
process (numba-cuda gives them no disk cache, as it gives none to the kernels here), so an
edit of the CPU formulas is always picked up (``@njit`` scalar helpers stay next to their
CPU kernels for the CPU cache's sake: docs/developer.rst, design decisions, 5). Under the
simulator the same calls run the CPU-compiled functions.

As on the CPU (NOTE [Special-function kernels]), every formula takes and returns a float64:
the kernels read any input dtype as float64 and round once on store into the output's
dtype. Inputs are read through their offset, shape and strides (NOTE [CUDA elementwise
kernels]); each kernel is a grid-stride loop over the contiguous output (NOTE [CUDA
launches]), so any grid covers any size.

``xlogy``, ``xlog1py`` and ``nextafter`` are short enough to be written here as device
functions (with the domain guards the simulator needs: its ``math.log`` raises where the
device returns NaN). ``nextafter`` steps by the ulp of the operand's dtype (``frexp``/
``ldexp``, no bit casts), so float16, float32 and float64 all run in one kernel.
"""

from __future__ import annotations

import math

from numba import float64

from numbagrad.kernels.cpu import special as _cpu
from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = [
    "BINARY",
    "NEXTAFTER_FORMATS",
    "UNARY",
    "polygamma_kernel",
    "special_binary_kernel",
    "special_unary_kernel",
]

# codes of ``special_unary_kernel``: the CPU's (``kernels/cpu/special.py``'s UNARY_CODES)
UNARY = dict(_cpu.UNARY_CODES)

# codes of ``special_binary_kernel``: the CPU's BINARY_CODES, then the ones written here;
# ``_binary`` branches on them by name (NOTE [CUDA op codes] in ``elementwise.py``)
BINARY = {**_cpu.BINARY_CODES, "xlogy": 3, "xlog1py": 4, "nextafter": 5}
_S_GAMMAINC = BINARY["gammainc"]
_S_GAMMAINCC = BINARY["gammaincc"]
_S_ZETA = BINARY["zeta"]
_S_XLOGY = BINARY["xlogy"]
_S_XLOG1PY = BINARY["xlog1py"]
_S_NEXTAFTER = BINARY["nextafter"]

# ``nextafter``'s float format per dtype name: (significand bits, exponent of the smallest
# subnormal, largest finite value)
NEXTAFTER_FORMATS = {
    "float16": (11, -24, 65504.0),
    "float32": (24, -149, 3.4028234663852886e38),
    "float64": (53, -1074, 1.7976931348623157e308),
}


@cuda.jit(device=True)
def _xlogy(a, b, log1p):
    """``a * log(b)`` (``log1p(b)`` when ``log1p``), 0 where ``a == 0`` unless ``b`` is NaN
    (PyTorch's ``xlogy``/``xlog1py``)."""
    if b != b:
        return b
    if a == 0:
        return 0.0
    v = b + 1.0 if log1p else b  # where the log's argument is 0
    if v > 0:
        lg = math.log1p(b) if log1p else math.log(b)
    elif v == 0:
        lg = -math.inf
    else:
        lg = math.nan
    return a * lg


@cuda.jit(device=True)
def _nextafter(x, y, digits, emin, big):
    """The next value after ``x`` toward ``y`` in the float format with ``digits``
    significand bits, smallest subnormal ``2**emin`` and largest finite ``big``
    (``NEXTAFTER_FORMATS``); ``x`` and ``y`` are values of that format, held in float64."""
    if x != x or y != y:
        return x + y  # NaN
    if x == y:
        return y  # (nextafter(0.0, -0.0) is -0.0, as C's)
    up = y > x
    if x == 0:
        tiny = math.ldexp(1.0, emin)
        return tiny if up else -tiny
    if math.isinf(x):
        return math.copysign(big, x)  # toward y: the largest finite value
    # x = m 2^e with 0.5 <= |m| < 1: the spacing above |x| is 2^(e - digits), the one below
    # half that when |x| is a power of two; never below the smallest subnormal
    m, e = math.frexp(x)
    away = up == (x > 0)  # away from zero: |x| grows
    k = e - digits
    if not away and abs(m) == 0.5:
        k -= 1
    step = math.ldexp(1.0, max(k, emin))
    r = x + step if up else x - step  # exact in float64
    if abs(r) > big:  # past the largest finite value of the format (not only of float64)
        return math.copysign(math.inf, r)
    return math.copysign(0.0, x) if r == 0 else r


@cuda.jit(device=True)
def _binary(code, a, b, digits, emin, big):
    """The two-operand special function ``code`` (``BINARY``) of two float64 values."""
    if code == _S_GAMMAINC:
        return _cpu.gammainc_scalar(a, b)
    if code == _S_GAMMAINCC:
        return _cpu.gammaincc_scalar(a, b)
    if code == _S_ZETA:
        return _cpu.zeta_scalar(a, b)
    if code == _S_XLOGY:
        return _xlogy(a, b, False)
    if code == _S_XLOG1PY:
        return _xlogy(a, b, True)
    if code == _S_NEXTAFTER:
        return _nextafter(a, b, digits, emin, big)
    return math.nan  # no such code (the backend looks names up in the table)


@cuda.jit
def special_unary_kernel(code, n, x, xoff, shape, xst, out):
    """``out[i] = f(x[...])`` for the formula ``code`` of ``UNARY`` (the CPU's scalar
    functions, NOTE [CUDA special functions]), in float64, rounded on store."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = _cpu._unary_scalar(code, float64(x[_offset(i, shape, xst, xoff)]))


@cuda.jit
def polygamma_kernel(order, single, n, x, xoff, shape, xst, out):
    """``out[i] = polygamma(order, x[...])``; ``single``: the input is float32 (trigamma's
    reflection term is then computed in float32, as on the CPU and in PyTorch)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = float64(x[_offset(i, shape, xst, xoff)])
        out[i] = _cpu.polygamma_scalar(order, v, single)


@cuda.jit
def special_binary_kernel(code, n, a, aoff, ast, b, boff, bst, shape, digits, emin, big, out):
    """``out[i] = f(a[...], b[...])`` for ``code`` of ``BINARY``, broadcasting through
    stride-0 dims; ``digits``, ``emin``, ``big``: ``nextafter``'s float format (ignored by
    the other codes)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        va = float64(a[_offset(i, shape, ast, aoff)])
        vb = float64(b[_offset(i, shape, bst, boff)])
        out[i] = _binary(code, va, vb, digits, emin, big)
