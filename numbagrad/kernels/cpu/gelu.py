"""GELU kernels: the forward and ``gelu_backward`` of both forms (``approximate='none'``,
the exact ``x Phi(x)``, and ``'tanh'``), one pass per call, float32 in float32.

NOTE [Float32 GELU]
PyTorch's CPU GELU computes a float32 tensor in float32 with vectorised polynomials
(``Vectorized<float>::erf``, ``exp``, ``tanh``); a scalar ``math.erf``/``math.exp`` per
element (libm, float64) cannot be vectorised by LLVM and measured 30-70x slower on the
655,360-element activation of an FNO's projection layer. The float32 kernels here use only
arithmetic, comparisons and one bit cast, which LLVM vectorises (``error_model="numpy"``:
a division is a plain ``vdivps``, no zero check; ``fastmath={"contract"}`` lets it fuse
multiply-adds, which only removes roundings):

- ``erf_f32``: the rational approximation ``x P(x^2) / Q(x^2)`` on ``[-4, 4]`` (degrees
  13/8, the coefficients of Eigen's ``generic_fast_erf_float``; +-1 outside, where float32
  erf rounds to +-1), error below 6.5e-8 in exact arithmetic and 4e-7 evaluated in
  float32 without FMA (PyTorch's Abramowitz-Stegun 7.1.26 polynomial: 1.5e-7);
- ``exp_f32``: ``2^n p(r)`` with ``n = round(x / ln 2)``, ``r = x - n ln 2`` in two parts
  (Cody-Waite) and ``p`` of degree 6 (a least-squares fit of ``(e^r - 1 - r) / r^2`` on
  ``|r| <= ln(2) / 2`` at Chebyshev nodes, relative error 3.6e-9); ``2^n`` as two
  factors ``2^(n//2) 2^(n - n//2)`` built from their exponent bits, so the results down to
  the subnormals and up to ``FLT_MAX`` are right; 0 below -104, inf above ``ln FLT_MAX``;
- the tanh form as ``0.5 x (1 + tanh(u)) = x s`` with ``s = 1 / (1 + e^(-2u))``, and
  ``1 - tanh(u)^2 = 4 s (1 - s)``, from ``z = e^(-2|u|) <= 1`` so nothing overflows, each
  term accurate to a few ulp relative where PyTorch's ``1 + tanh(u)`` loses the digits
  of a tiny result.

Special values are PyTorch's: NaN propagates, ``gelu(-inf)`` is NaN (``-inf * 0``), the
derivative at ``+-inf`` is NaN (``inf * 0`` in ``x pdf``). Results agree with the float64
formula to ~1e-6 relative (more closely than PyTorch's float32 kernel does in the
negative tail, where ``1 + erf`` cancels in both). float64 uses libm's ``math.erf`` in one
fused pass (PyTorch computes float64 with Sleef's 1-ulp functions); the float64 tanh form
stays on NumPy's SIMD ``tanh`` (the backend's formula), faster than scalar libm.

Every kernel follows NOTE [Elementwise kernel conventions] in ``elementwise.py``: flat
contiguous 1-D arrays, ``g`` as long as ``out`` or of length 1; a ``*_par`` twin
(``prange``) from ``PARALLEL_MIN`` elements.
"""

import math

import numpy as np
from numba import prange

from numbagrad.kernels.cpu._jit import njit
from numbagrad.kernels.cpu.elementwise import _gi

__all__ = [
    "erf_f32",
    "exp_f32",
    "gelu_backward_f32",
    "gelu_backward_f32_par",
    "gelu_forward",
    "gelu_forward_f32",
    "gelu_forward_f32_par",
    "gelu_forward_par",
    "gelu_tanh_backward_f32",
    "gelu_tanh_backward_f32_par",
    "gelu_tanh_forward_f32",
    "gelu_tanh_forward_f32_par",
]

_F32 = np.float32
# float32 module constants: Numba freezes them as float32, so the arithmetic stays float32
_ZERO = _F32(0.0)
_HALF = _F32(0.5)
_ONE = _F32(1.0)
_TWO = _F32(2.0)
_FOUR = _F32(4.0)
_INF = _F32(np.inf)
_SQRT1_2 = _F32(0.7071067811865476)  # M_SQRT1_2
_PDF0 = _F32(0.3989422804014327)  # 1 / sqrt(2 pi)
_BETA = _F32(0.7978845608028654)  # sqrt(2 / pi)
_KAPPA = _F32(0.044715)
_KAPPA3 = _F32(3 * 0.044715)

# exp_f32
_LOG2E = _F32(1.4426950408889634)
_LN2_HI = _F32(0.693359375)  # ln 2 = _LN2_HI + _LN2_LO, _LN2_HI with 9 significant bits
_LN2_LO = _F32(0.6931471805599453 - 0.693359375)
_EXP_MIN = _F32(-104.0)  # below: e^x < half the smallest subnormal, 0
_EXP_MAX = _F32(88.72283935546875)  # float32(ln FLT_MAX): above, inf
_E2 = _F32(0.4999998859511278)
_E3 = _F32(0.16666518459980367)
_E4 = _F32(0.04166953310922352)
_E5 = _F32(0.008368916341374509)
_E6 = _F32(0.0013751407895815156)

# erf_f32: x P(x^2) / Q(x^2) on [-4, 4]
_A1 = _F32(-1.60960333262415e-02)
_A3 = _F32(-2.95459980854025e-03)
_A5 = _F32(-7.34990630326855e-04)
_A7 = _F32(-5.69250639462346e-05)
_A9 = _F32(-2.10102402082508e-06)
_A11 = _F32(2.77068142495902e-08)
_A13 = _F32(-2.72614225801306e-10)
_B0 = _F32(-1.42647390514189e-02)
_B2 = _F32(-7.37332916720468e-03)
_B4 = _F32(-1.68282697438203e-03)
_B6 = _F32(-2.13374055278905e-04)
_B8 = _F32(-1.45660718464996e-05)

_FAST = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}


@njit(inline="always", **_FAST)
def _pow2(n):
    """``2.0 ** n`` in float32 for an integer-valued float32 ``n`` in ``[-126, 127]``, from
    its exponent bits."""
    return np.int32((np.int32(n) + np.int32(127)) << np.int32(23)).view(np.float32)


@njit(inline="always", **_FAST)
def exp_f32(x):
    """``e^x`` of a float32 ``x`` in float32 (NOTE [Float32 GELU]): a few ulp relative,
    subnormal results included; 0 below -104, inf above ``ln FLT_MAX``, NaN for NaN."""
    c = _EXP_MIN if x < _EXP_MIN else (_EXP_MAX if x > _EXP_MAX else x)
    c = c if c == c else _ZERO  # (NaN: any finite value, replaced below)
    n = np.floor(c * _LOG2E + _HALF)  # in [-150, 128]
    r = c - n * _LN2_HI - n * _LN2_LO
    p = _ONE + r + r * r * (_E2 + r * (_E3 + r * (_E4 + r * (_E5 + r * _E6))))
    n1 = np.floor(n * _HALF)
    y = p * _pow2(n1) * _pow2(n - n1)
    y = _ZERO if x < _EXP_MIN else (_INF if x > _EXP_MAX else y)
    return y if x == x else x


@njit(inline="always", **_FAST)
def erf_f32(x):
    """``erf(x)`` of a float32 ``x`` in float32 (NOTE [Float32 GELU]): within 4e-7 of the
    exact value; +-1 beyond +-4 (+-inf included), NaN for NaN."""
    c = _FOUR if x > _FOUR else (-_FOUR if x < -_FOUR else x)
    s = c * c
    p = c * (_A1 + s * (_A3 + s * (_A5 + s * (_A7 + s * (_A9 + s * (_A11 + s * _A13))))))
    q = _B0 + s * (_B2 + s * (_B4 + s * (_B6 + s * _B8)))
    e = p / q
    return _ONE if c >= _FOUR else (-_ONE if c <= -_FOUR else e)


@njit(inline="always", **_FAST)
def _gelu_f32(v):
    return v * _HALF * (_ONE + erf_f32(v * _SQRT1_2))  # PyTorch's order of operations


@njit(inline="always", **_FAST)
def _gelu_grad_f32(g, v):
    cdf = _HALF * (_ONE + erf_f32(v * _SQRT1_2))
    pdf = exp_f32(-_HALF * v * v) * _PDF0
    return g * (cdf + v * pdf)


@njit(inline="always", **_FAST)
def _tanh_parts(v):
    """``(s, 1 - s)`` with ``s = (1 + tanh(u)) / 2``, ``u = sqrt(2/pi) (v + 0.044715 v^3)``,
    from ``z = e^(-2|u|)`` (no overflow, no cancellation)."""
    u = _BETA * (v + _KAPPA * (v * v * v))
    z = exp_f32(-_TWO * abs(u))
    d = _ONE / (_ONE + z)
    small = z * d  # the smaller of s and 1 - s
    pos = u >= _ZERO
    return (d if pos else small), (small if pos else d)


@njit(inline="always", **_FAST)
def _gelu_tanh_f32(v):
    s, _ = _tanh_parts(v)
    return v * s


@njit(inline="always", **_FAST)
def _gelu_tanh_grad_f32(g, v):
    # PyTorch's 0.5 (1 + t) + 0.5 v (1 - t^2) u' with t = tanh(u): s + 2 v s (1 - s) u'
    s, sc = _tanh_parts(v)
    du = _BETA * (_ONE + _KAPPA3 * (v * v))
    return g * (s + _TWO * v * (s * sc) * du)


@njit(inline="always", cache=True)
def _gelu_f64(v):
    return v * 0.5 * (1.0 + math.erf(v * 0.7071067811865476))


# -- forward ---------------------------------------------------------------------------------
@njit(**_FAST)
def gelu_forward_f32(x, out):
    """``out = gelu(x)`` (exact form), float32 in float32.

    Assumes: ``x`` and ``out`` float32, 1-D (flat) of one length; contiguous for the
    cached specialisation."""
    for i in range(x.size):
        out[i] = _gelu_f32(x[i])


@njit(parallel=True, **_FAST)
def gelu_forward_f32_par(x, out):
    """``gelu_forward_f32`` over all threads (``prange``); same assumptions."""
    for i in prange(x.size):
        out[i] = _gelu_f32(x[i])


@njit(**_FAST)
def gelu_tanh_forward_f32(x, out):
    """``out = gelu(x, approximate='tanh')``, float32 in float32.

    Assumes: ``x`` and ``out`` float32, 1-D (flat) of one length; contiguous for the
    cached specialisation."""
    for i in range(x.size):
        out[i] = _gelu_tanh_f32(x[i])


@njit(parallel=True, **_FAST)
def gelu_tanh_forward_f32_par(x, out):
    """``gelu_tanh_forward_f32`` over all threads (``prange``); same assumptions."""
    for i in prange(x.size):
        out[i] = _gelu_tanh_f32(x[i])


@njit(cache=True)
def gelu_forward(x, out):
    """``out = x * 0.5 * (1 + erf(x / sqrt 2))`` with libm's float64 ``erf``.

    Assumes: ``x`` and ``out`` float64, 1-D (flat) of one length; contiguous for the
    cached specialisation."""
    for i in range(x.size):
        out[i] = _gelu_f64(x[i])


@njit(cache=True, parallel=True)
def gelu_forward_par(x, out):
    """``gelu_forward`` over all threads (``prange``); same assumptions."""
    for i in prange(x.size):
        out[i] = _gelu_f64(x[i])


# -- backward (``out = g * gelu'(x)``) --------------------------------------------------------
@njit(**_FAST)
def gelu_backward_f32(g, x, out):
    """``out = g * (cdf(x) + x pdf(x))`` (PyTorch's ``gelu_backward``), float32.

    Assumes: ``x``, ``g`` and ``out`` float32, 1-D (flat); ``x`` and ``out`` of one length,
    ``len(g)`` equal to it or 1; contiguous for the cached specialisation."""
    for i in range(x.size):
        out[i] = _gelu_grad_f32(_gi(g, i), x[i])


@njit(parallel=True, **_FAST)
def gelu_backward_f32_par(g, x, out):
    """``gelu_backward_f32`` over all threads (``prange``); same assumptions."""
    for i in prange(x.size):
        out[i] = _gelu_grad_f32(_gi(g, i), x[i])


@njit(**_FAST)
def gelu_tanh_backward_f32(g, x, out):
    """``out = g * gelu'(x)`` of the tanh form (PyTorch's ``gelu_backward`` with
    ``approximate='tanh'``), float32.

    Assumes: ``x``, ``g`` and ``out`` float32, 1-D (flat); ``x`` and ``out`` of one length,
    ``len(g)`` equal to it or 1; contiguous for the cached specialisation."""
    for i in range(x.size):
        out[i] = _gelu_tanh_grad_f32(_gi(g, i), x[i])


@njit(parallel=True, **_FAST)
def gelu_tanh_backward_f32_par(g, x, out):
    """``gelu_tanh_backward_f32`` over all threads (``prange``); same assumptions."""
    for i in prange(x.size):
        out[i] = _gelu_tanh_grad_f32(_gi(g, i), x[i])
