"""Elementwise kernels: forward maps NumPy has no single ufunc for, and fused backward
formulas (one pass instead of the two or three NumPy would need).

NOTE [Elementwise kernel conventions]
Kernels work on flat contiguous 1-D arrays and write into ``out``. A gradient argument
``g`` is either as long as ``out`` or has length 1 (a broadcast scalar, which is what
``sum().backward()`` sends); ``_gi`` picks the element. What each kernel assumes is in its
docstring; none of it is checked (Numba does no bounds checks: a shorter array is read or
written past its end), except under ``NUMBAGRAD_BOUNDSCHECK=1`` (NOTE [Bounds-check
mode] in ``_jit.py``), which turns such an access into ``IndexError``. Arguments are
1-D: a 2-D array does not compile. Non-contiguous 1-D arrays compute correctly but each
layout compiles (and caches) a separate specialisation; ``out`` must be the caller's own
memory, so it is never a ``reshape(-1)`` copy of a non-contiguous array.

Integer literals (``1 - v * v``) keep float32 arithmetic in float32; the few float
constants compute in float64 and are rounded on store, which only adds accuracy.

Each formula is one scalar function (``<op>_grad(g, v)``, ``<op>_scalar(v)``) that the
serial loop and its ``*_par`` twin (``prange``, used from ``PARALLEL_MIN`` elements) both
call, and that a CUDA kernel can call as a device function. The formulas restate, per
element, the ``derivative`` declared by each op in ``numbagrad/ops/unary.py``; the op
database checks the two against each other (fused vs composite backward).
"""

import math

from numba import prange

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "cos_backward",
    "erf_backward",
    "erf_forward",
    "gelu_backward",
    "mul_backward_par",
    "relu_backward",
    "rsqrt_forward",
    "sigmoid_backward",
    "sigmoid_backward_par",
    "sin_backward",
    "softplus_backward",
    "softplus_forward",
    "tan_backward",
    "tanh_backward",
    "tanh_backward_par",
]


@njit(cache=True, inline="always")
def _gi(g, i):
    """Element ``i`` of a gradient: ``g[i]``, or ``g[0]`` when ``g`` has length 1 (1-D ``g``;
    ``i < len(g)`` unless ``len(g) == 1``)."""
    return g[i] if g.size != 1 else g[0]


# -- scalar formulas (shared by serial, parallel and device kernels) --------------------------
@njit(cache=True, inline="always")
def softplus_scalar(v):
    """Scalar ``log(1 + e^v)`` for a float32 or float64 scalar; no overflow."""
    # log(1 + e^v) = max(v, 0) + log1p(e^-|v|): no overflow for large |v|
    return max(v, 0) + math.log1p(math.exp(-abs(v)))


@njit(cache=True, inline="always")
def sigmoid_scalar(v):
    """Scalar logistic function of a float32 or float64 scalar; no overflow."""
    # stable on both sides: e^v never overflows for v < 0, e^-v never for v >= 0
    if v >= 0:
        return 1 / (1 + math.exp(-v))
    e = math.exp(v)
    return e / (1 + e)


@njit(cache=True, inline="always")
def tanh_grad(g, y):
    """Scalar ``g * tanh'``, from the output ``y = tanh(x)``."""
    return g * (1 - y * y)


@njit(cache=True, inline="always")
def sigmoid_grad(g, y):
    """Scalar ``g * sigmoid'``, from the output ``y = sigmoid(x)``, grouped as PyTorch's
    ``sigmoid_backward`` kernel: ``(g * (1 - y)) * y``."""
    return g * (1 - y) * y


@njit(cache=True, inline="always")
def sin_grad(g, x):
    """Scalar ``g * sin'(x)``."""
    return g * math.cos(x)


@njit(cache=True, inline="always")
def cos_grad(g, x):
    """Scalar ``g * cos'(x)``."""
    return -g * math.sin(x)


@njit(cache=True, inline="always")
def tan_grad(g, y):
    """Scalar ``g * tan'``, from the output ``y = tan(x)``."""
    return g * (1 + y * y)


@njit(cache=True, inline="always")
def softplus_grad(g, x):
    """Scalar ``g * softplus'(x)``."""
    return g * sigmoid_scalar(x)


@njit(cache=True, inline="always")
def erf_grad(g, x):
    """Scalar ``g * erf'(x)``."""
    return g * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


@njit(cache=True, inline="always")
def gelu_grad(g, x):
    """Scalar ``g * gelu'(x)`` (PyTorch's ``gelu_backward``): ``g * (Phi(x) + x phi(x))``,
    one product with ``g``, so an infinite ``g`` at ``x = 0`` gives +-inf, not NaN."""
    cdf = 0.5 * (1.0 + math.erf(x * 0.7071067811865476))
    pdf = math.exp(-0.5 * x * x) * 0.3989422804014327
    return g * (cdf + x * pdf)


@njit(cache=True, inline="always")
def relu_grad(g, y):
    """Scalar ``g * relu'``, from the output ``y = relu(x)``: 0 where ``y <= 0``, else ``g``
    (PyTorch's threshold_backward: a NaN output passes its gradient through)."""
    return 0.0 if y <= 0 else g


# -- forward maps ----------------------------------------------------------------------------
@njit(cache=True)
def softplus_forward(x, out):
    """``out = softplus(x)`` elementwise (stable for large ``|x|``).

    Assumes: ``x`` and ``out`` 1-D (flat), ``len(out) >= len(x)``, ``out`` float32
    or float64 (an integer ``out`` would truncate), ``x`` of any real dtype; contiguous
    for the cached specialisation."""
    for i in range(x.size):
        out[i] = softplus_scalar(x[i])


@njit(cache=True)
def erf_forward(x, out):
    """``out = erf(x)`` elementwise (``math.erf``, computed in float64).

    Assumes: ``x`` and ``out`` 1-D (flat), ``len(out) >= len(x)``, ``out`` float32
    or float64 (an integer ``out`` would truncate), ``x`` of any real dtype; contiguous
    for the cached specialisation."""
    for i in range(x.size):
        out[i] = math.erf(x[i])


@njit(cache=True)
def rsqrt_forward(x, out):
    """``out = 1 / sqrt(x)`` elementwise; ``x < 0`` gives NaN, but ``x == 0`` raises
    ``ZeroDivisionError`` (Numba's Python error model), which the caller must handle.

    Assumes: ``x`` and ``out`` 1-D (flat), ``len(out) >= len(x)``, ``out`` float32
    or float64 (an integer ``out`` would truncate), ``x`` of any real dtype; contiguous
    for the cached specialisation."""
    for i in range(x.size):
        out[i] = 1 / math.sqrt(x[i])


# -- fused backward loops (``out = g * derivative(saved)``) ------------------------------------
@njit(cache=True)
def tanh_backward(g, y, out):
    """``out = g * (1 - y*y)`` from the saved output ``y``.

    Assumes: ``y`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``y``); contiguous for the cached specialisation."""
    for i in range(y.size):
        out[i] = tanh_grad(_gi(g, i), y[i])


@njit(cache=True, parallel=True)
def tanh_backward_par(g, y, out):
    """``tanh_backward`` over all threads (``prange``).

    Assumes: ``y`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``y``); contiguous for the cached specialisation."""
    for i in prange(y.size):
        out[i] = tanh_grad(_gi(g, i), y[i])


@njit(cache=True)
def sigmoid_backward(g, y, out):
    """``out = g * (1 - y) * y`` from the saved output ``y``.

    Assumes: ``y`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``y``); contiguous for the cached specialisation."""
    for i in range(y.size):
        out[i] = sigmoid_grad(_gi(g, i), y[i])


@njit(cache=True, parallel=True)
def sigmoid_backward_par(g, y, out):
    """``sigmoid_backward`` over all threads (``prange``).

    Assumes: ``y`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``y``); contiguous for the cached specialisation."""
    for i in prange(y.size):
        out[i] = sigmoid_grad(_gi(g, i), y[i])


@njit(cache=True)
def sin_backward(g, x, out):
    """``out = g * cos(x)`` from the saved input ``x``.

    Assumes: ``x`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``x``); contiguous for the cached specialisation."""
    for i in range(x.size):
        out[i] = sin_grad(_gi(g, i), x[i])


@njit(cache=True)
def cos_backward(g, x, out):
    """``out = -g * sin(x)`` from the saved input ``x``.

    Assumes: ``x`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``x``); contiguous for the cached specialisation."""
    for i in range(x.size):
        out[i] = cos_grad(_gi(g, i), x[i])


@njit(cache=True)
def tan_backward(g, y, out):
    """``out = g * (1 + y*y)`` from the saved output ``y``.

    Assumes: ``y`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``y``); contiguous for the cached specialisation."""
    for i in range(y.size):
        out[i] = tan_grad(_gi(g, i), y[i])


@njit(cache=True)
def softplus_backward(g, x, out):
    """``out = g * sigmoid(x)`` from the saved input ``x``.

    Assumes: ``x`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``x``); contiguous for the cached specialisation."""
    for i in range(x.size):
        out[i] = softplus_grad(_gi(g, i), x[i])


@njit(cache=True)
def erf_backward(g, x, out):
    """``out = g * 2/sqrt(pi) * exp(-x*x)`` from the saved input ``x``.

    Assumes: ``x`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``x``); contiguous for the cached specialisation."""
    for i in range(x.size):
        out[i] = erf_grad(_gi(g, i), x[i])


@njit(cache=True, parallel=True)
def gelu_backward(g, x, out):
    """``out = g * gelu'(x)`` from the saved input ``x`` (``gelu_grad``; every element is
    an erf and an exp, so it runs on every core from ``KERNEL_MIN`` elements).

    Assumes: ``x`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64; contiguous for the cached
    specialisation."""
    for i in prange(x.size):
        out[i] = gelu_grad(_gi(g, i), x[i])


@njit(cache=True)
def relu_backward(g, y, out):
    """``out = g`` where the saved output ``y > 0``, else 0.

    Assumes: ``y`` and ``out`` 1-D (flat) of one length, ``len(g)`` equal to it or 1
    (a broadcast scalar gradient); float32/float64 (``out`` of the result dtype of ``g``
    and ``y``); contiguous for the cached specialisation."""
    for i in range(y.size):
        out[i] = relu_grad(_gi(g, i), y[i])


@njit(cache=True, parallel=True)
def mul_backward_par(g, a, b, ga, gb):
    """Both products of ``mul``'s VJP in one parallel pass: ``ga = g * b``, ``gb = g * a``.

    Assumes: ``a``, ``b``, ``ga``, ``gb`` 1-D (flat) of one length and dtype, ``len(g)``
    equal to it or 1; contiguous for the cached specialisation."""
    for i in prange(ga.size):
        gv = _gi(g, i)
        ga[i] = gv * b[i]
        gb[i] = gv * a[i]
