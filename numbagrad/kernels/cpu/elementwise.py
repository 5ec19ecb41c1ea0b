"""Elementwise kernels: fused forward maps NumPy has no single ufunc for, and fused
backward formulas (one pass instead of the two or three NumPy would need).

NOTE [Elementwise kernel conventions]
Kernels work on flat contiguous 1-D arrays and write into ``out``. A gradient argument
``g`` is either as long as ``out`` or has length 1 (a broadcast scalar, which is what
``sum().backward()`` sends); ``_gi`` picks the element. Integer literals (``1 - v * v``) keep
float32 arithmetic in float32; the few float constants compute in float64 and are rounded
on store, which only adds accuracy. Serial kernels below ``PARALLEL_MIN`` elements
(``numbagrad.kernels``); ``*_par`` twins use ``prange`` above it.
"""

import math

from numba import njit, prange

from numbagrad.kernels import PARALLEL_MIN  # noqa: F401  (re-exported for the ops)


@njit(cache=True, inline="always")
def _gi(g, i):
    return g[i] if g.size != 1 else g[0]


# -- forward maps ----------------------------------------------------------------------------
@njit(cache=True)
def softplus_forward(x, out):
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large |x|
    for i in range(x.size):
        v = x[i]
        out[i] = max(v, 0) + math.log1p(math.exp(-abs(v)))


@njit(cache=True)
def erf_forward(x, out):
    for i in range(x.size):
        out[i] = math.erf(x[i])


@njit(cache=True)
def rsqrt_forward(x, out):
    for i in range(x.size):
        out[i] = 1 / math.sqrt(x[i])


# -- fused backward formulas --------------------------------------------------------------
@njit(cache=True)
def tanh_backward(g, y, out):
    for i in range(y.size):
        v = y[i]
        out[i] = _gi(g, i) * (1 - v * v)


@njit(cache=True, parallel=True)
def tanh_backward_par(g, y, out):
    for i in prange(y.size):
        v = y[i]
        out[i] = _gi(g, i) * (1 - v * v)


@njit(cache=True)
def sigmoid_backward(g, y, out):
    for i in range(y.size):
        v = y[i]
        out[i] = _gi(g, i) * (v * (1 - v))


@njit(cache=True, parallel=True)
def sigmoid_backward_par(g, y, out):
    for i in prange(y.size):
        v = y[i]
        out[i] = _gi(g, i) * (v * (1 - v))


@njit(cache=True)
def sin_backward(g, x, out):
    for i in range(x.size):
        out[i] = _gi(g, i) * math.cos(x[i])


@njit(cache=True)
def cos_backward(g, x, out):
    for i in range(x.size):
        out[i] = -_gi(g, i) * math.sin(x[i])


@njit(cache=True)
def tan_backward(g, y, out):
    for i in range(y.size):
        v = y[i]
        out[i] = _gi(g, i) * (1 + v * v)


@njit(cache=True)
def softplus_backward(g, x, out):
    # d/dx softplus = sigmoid(x), computed stably
    for i in range(x.size):
        v = x[i]
        if v >= 0:
            s = 1 / (1 + math.exp(-v))
        else:
            e = math.exp(v)
            s = e / (1 + e)
        out[i] = _gi(g, i) * s


@njit(cache=True)
def erf_backward(g, x, out):
    c = 2 / math.sqrt(math.pi)
    for i in range(x.size):
        v = x[i]
        out[i] = _gi(g, i) * c * math.exp(-v * v)


@njit(cache=True)
def relu_backward(g, y, out):
    for i in range(y.size):
        out[i] = _gi(g, i) if y[i] > 0 else 0.0


@njit(cache=True, parallel=True)
def mul_backward_par(g, a, b, ga, gb):
    for i in prange(ga.size):
        gv = _gi(g, i)
        ga[i] = gv * b[i]
        gb[i] = gv * a[i]
