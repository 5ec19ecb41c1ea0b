"""PyTorch's CPU random number generator: the mt19937 engine and ATen's transformations.

NOTE [PyTorch's CPU random stream]
``numbagrad.Generator`` (CPU) is PyTorch's ``CPUGeneratorImpl``: a 32-bit Mersenne Twister
(``at::mt19937``, seeded with the low 32 bits of the seed by the 2002 ``init_genrand``
recurrence, in Python: ``_mt_words`` in ``numbagrad/_creation.py``) plus two cached normal
samples (a double and a float) that the Box-Muller scalar path leaves behind. Its
state lives in NumPy arrays that the kernels below update in
place: ``mt`` (624 uint32 words) and ``pos`` (int64: ``left``, ``next``, as ATen's
``mt19937_data_pod``; a draw first decrements ``left`` and regenerates the block when it
reaches 0). ``random()`` is one tempered word, ``random64()`` two (first word high).

The transformations are ATen's (``ATen/core/TransformationHelper.h``,
``DistributionsHelper.h`` and ``native/cpu/DistributionTemplates.h``):

- uniform: float from ``random() & (2**24 - 1)`` times ``2**-24``, double from
  ``random64() & (2**53 - 1)`` times ``2**-53``; then ``x * (to - from) + from`` in the
  dtype, which the compiler fuses into one fma.
- normal, ``numel < 16`` (or a strided tensor): the double Box-Muller pair
  ``r = sqrt(-2 log1p(-u2))``, ``theta = 2 pi u1`` from two double uniforms, ``r cos``
  returned and ``r sin`` cached for the next scalar draw (whatever the tensor's dtype).
- normal, ``numel >= 16``: ``normal_fill``: all ``numel`` uniforms first, then
  Box-Muller on each 16-element chunk (``u1 = 1 - x[j]``, ``u2 = x[j + 8]``, cos into
  ``j``, sin into ``j + 8``); a tail (``numel % 16``) redraws 16 fresh uniforms into the
  last 16 slots and transforms them again. float64 uses libm ``log``/``cos``/``sin``;
  float32 on an x86 CPU with AVX2 (ATen dispatches ``normal`` to its AVX2 kernel on AVX-512
  machines too) uses the Cephes polynomials of ``avx_mathfun.h`` (``log256_ps``,
  ``sincos256_ps``) exactly as GCC compiled them for PyTorch's wheels: the multiply-adds it
  contracted into fma instructions are fma here too (read from the disassembly of
  ``libtorch_cpu.so`` 2.13), so the float32 results agree to the last bit. The kernel's
  loop indexes with unsigned integers (no wraparound branches) so LLVM vectorises it. Without AVX2
  (``ATEN_CPU_CAPABILITY=default``) ATen's scalar float path runs (libm ``logf``,
  ``cosf``, ``sinf``); ``normal_fill_f32`` takes that path with ``vector=False``.
- randint / ``random_(from, to)``: ``random() % range + from`` for ``range < 2**28``,
  else ``random64() % range + from``; ``random_()``: ``random64()`` (int64, float64) or
  ``random()`` (others) modulo the dtype's range.
- bernoulli: ``uniform < p`` (double uniform for a number ``p`` or a float64 ``p`` tensor,
  float uniform for a float32 ``p`` tensor); exponential: ``-1/lambda * log1p(-u)`` with a
  double uniform; randperm: Fisher-Yates on ``random() % (n - i)`` for
  ``n < 2**32 / 20``, else the inside-out shuffle on ``random64() % (i + 1)``;
  multinomial with replacement: a binary search of a double uniform in the normalised
  running sum (in the weights' dtype).

Every kernel takes the state arrays first and returns nothing; the caller
(``numbagrad/_creation.py``) validates shapes, dtypes and parameters before calling
(Numba does no bounds checks).
"""

from __future__ import annotations

import math
import os
import platform

import numpy as np
from llvmlite import binding, ir  # type: ignore[import-untyped]
from numba.core import cgutils, types
from numba.extending import intrinsic

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "VECTOR_NORMAL",
    "bernoulli_scalar",
    "bernoulli_tensor",
    "exponential",
    "fill_random",
    "multinomial_with_replacement",
    "normal_fill_f32",
    "normal_fill_f64",
    "normal_scalar",
    "poisson",
    "random_default",
    "random_from_to",
    "randperm",
    "uniform_f32",
    "uniform_f64",
]

_N = 624
_M = 397


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma``)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        name = "llvm.fma.f32" if a.bitwidth == 32 else "llvm.fma.f64"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t, t]), name)
        return builder.call(fn, args)

    return a(a, b, c), codegen


@intrinsic
def _f32_bits(typingctx, x):
    """The int32 bit pattern of a float32."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(x), codegen


@intrinsic
def _bits_f32(typingctx, b):
    """The float32 of an int32 bit pattern."""
    if b != types.int32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(b), codegen


@njit(inline="always")
def _twist(mt):
    upper = np.uint32(0x80000000)
    lower = np.uint32(0x7FFFFFFF)
    mag = np.uint32(0x9908B0DF)
    zero = np.uint32(0)
    one = np.uint32(1)
    for k in range(_N):
        u = mt[k]
        v = mt[k + 1] if k + 1 < _N else mt[0]
        y = (u & upper) | (v & lower)
        x = (y >> one) ^ (mag if (v & one) else zero)
        mt[k] = mt[(k + _M) % _N] ^ x


@njit(inline="always")
def _u32(mt, pos):
    """One tempered 32-bit word (``at::mt19937::operator()``)."""
    pos[0] -= 1
    if pos[0] == 0:
        _twist(mt)
        pos[0] = _N
        pos[1] = 0
    y = mt[pos[1]]
    pos[1] += 1
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


@njit(inline="always")
def _u64(mt, pos):
    hi = np.uint64(_u32(mt, pos))
    lo = np.uint64(_u32(mt, pos))
    return (hi << np.uint64(32)) | lo


_F24 = np.float32(1.0 / (1 << 24))
_D53 = 1.0 / (1 << 53)
_MASK24 = np.uint32((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)


@njit(inline="always")
def _unit_f32(mt, pos):
    return np.float32(_u32(mt, pos) & _MASK24) * _F24


@njit(inline="always")
def _unit_f64(mt, pos):
    return float(_u64(mt, pos) & _MASK53) * _D53


@njit
def fill_random(mt, pos, out):
    """``out`` (uint32) filled with raw ``random()`` words."""
    for i in range(out.size):
        out[i] = _u32(mt, pos)


@njit
def uniform_f32(mt, pos, out, lo, hi):
    """float32 uniforms on ``[lo, hi)`` (``lo``, ``hi`` float32): ``fma(x, hi - lo, lo)``."""
    span = np.float32(hi - lo)
    for i in range(out.size):
        out[i] = _fma(_unit_f32(mt, pos), span, lo)


@njit
def uniform_f64(mt, pos, out, lo, hi):
    """float64 uniforms on ``[lo, hi)``: ``fma(x, hi - lo, lo)``."""
    span = hi - lo
    for i in range(out.size):
        out[i] = _fma(_unit_f64(mt, pos), span, lo)


@njit
def normal_scalar(mt, pos, cache, out, mean, std):
    """ATen's ``normal_distribution<double>`` per element into float64 ``out``, using and
    refilling the double cache ``cache`` (``[valid, value]``)."""
    for i in range(out.size):
        if cache[0] != 0.0:
            cache[0] = 0.0
            out[i] = _fma(cache[1], std, mean)
            continue
        u1 = _unit_f64(mt, pos)
        u2 = _unit_f64(mt, pos)
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        cache[0] = 1.0
        cache[1] = r * math.sin(theta)
        out[i] = _fma(r * math.cos(theta), std, mean)


@njit(inline="always")
def _box_muller_f64(d, o, mean, std):
    for j in range(8):
        u1 = 1.0 - d[o + j]
        u2 = d[o + j + 8]
        radius = math.sqrt(-2.0 * math.log(u1))
        theta = (2.0 * math.pi) * u2
        d[o + j] = _fma(radius * math.cos(theta), std, mean)
        d[o + j + 8] = _fma(radius * math.sin(theta), std, mean)


@njit
def normal_fill_f64(mt, pos, out, mean, std):
    """ATen's ``normal_fill`` for float64 (``out.size >= 16``)."""
    n = out.size
    for i in range(n):
        out[i] = _unit_f64(mt, pos)
    for i in range(0, n - 15, 16):
        _box_muller_f64(out, i, mean, std)
    if n % 16:
        for i in range(16):
            out[n - 16 + i] = _unit_f64(mt, pos)
        _box_muller_f64(out, n - 16, mean, std)


_f = np.float32
_LOG_P = (
    _f(7.0376836292e-2),
    _f(-1.1514610310e-1),
    _f(1.1676998740e-1),
    _f(-1.2420140846e-1),
    _f(1.4249322787e-1),
    _f(-1.6668057665e-1),
    _f(2.0000714765e-1),
    _f(-2.4999993993e-1),
    _f(3.3333331174e-1),
)
_LOG_P0, _LOG_P1, _LOG_P2, _LOG_P3, _LOG_P4, _LOG_P5, _LOG_P6, _LOG_P7, _LOG_P8 = _LOG_P
_LOG_Q1 = _f(-2.12194440e-4)
_LOG_Q2 = _f(0.693359375)
_SQRTHF = _f(0.707106781186547524)
_FOPI = _f(1.27323954473516)
_DP1 = _f(-0.78515625)
_DP2 = _f(-2.4187564849853515625e-4)
_DP3 = _f(-3.77489497744594108e-8)
_COS_P0 = _f(2.443315711809948e-005)
_COS_P1 = _f(-1.388731625493765e-003)
_COS_P2 = _f(4.166664568298827e-002)
_SIN_P0 = _f(-1.9515295891e-4)
_SIN_P1 = _f(8.3321608736e-3)
_SIN_P2 = _f(-1.6666654611e-1)
_TWO_PI_F = _f(2.0 * math.pi)
_ONE = _f(1.0)
_HALF = _f(0.5)
_ZERO = _f(0.0)
_MINUS_TWO = _f(-2.0)


@njit(inline="always")
def _log_avx2(x):
    """``log256_ps`` of one positive float32 ``x``, with GCC's contractions."""
    b = _f32_bits(x)
    e = np.float32((b >> np.int32(23)) - np.int32(127)) + _ONE
    m = _bits_f32(np.int32((b & np.int32(~0x7F800000)) | np.int32(0x3F000000)))
    below = m < _SQRTHF
    tmp = m if below else _ZERO
    m = m - _ONE
    e = e - (_ONE if below else _ZERO)
    m = m + tmp
    z = m * m
    y = _fma(_LOG_P0, m, _LOG_P1)
    y = _fma(y, m, _LOG_P2)
    y = _fma(y, m, _LOG_P3)
    y = _fma(y, m, _LOG_P4)
    y = _fma(y, m, _LOG_P5)
    y = _fma(y, m, _LOG_P6)
    y = _fma(y, m, _LOG_P7)
    y = _fma(y, m, _LOG_P8)
    y = y * m
    y = _fma(y, z, e * _LOG_Q1)
    y = _fma(-z, _HALF, y)
    m = m + y
    return _fma(e, _LOG_Q2, m)


@njit(inline="always")
def _box_muller_f32_avx2(d, o, mean, std):
    base = np.uint64(o)
    for jj in range(8):
        j = base + np.uint64(jj)  # (unsigned indices: no wraparound branches)
        k8 = j + np.uint64(8)
        u1 = _ONE - d[j]
        theta = _TWO_PI_F * d[k8]
        radius = math.sqrt(_log_avx2(u1) * _MINUS_TWO)
        # sincos256_ps (theta >= 0: no input sign)
        x = theta
        k = np.int32(x * _FOPI)
        k = np.int32((k + np.int32(1)) & np.int32(~1))
        y = np.float32(k)
        x = _fma(y, _DP1, x)
        x = _fma(_DP2, y, x)
        x = _fma(y, _DP3, x)
        z = x * x
        yc = _fma(_COS_P0, z, _COS_P1)
        yc = _fma(yc, z, _COS_P2)
        yc = yc * z
        yc = _fma(z, yc, -(z * _HALF))
        yc = yc + _ONE
        ys = _fma(_SIN_P0, z, _SIN_P1)
        ys = _fma(ys, z, _SIN_P2)
        ys = z * ys
        ys = _fma(x, ys, x)
        first = (k & np.int32(2)) == np.int32(0)
        s1 = _ZERO if first else yc
        s2 = ys if first else _ZERO
        sin_v = s2 + s1
        cos_v = (ys - s2) + (yc - s1)
        # the sign flips: xor of the sign bit
        sin_v = _bits_f32(np.int32(_f32_bits(sin_v) ^ np.int32((k & np.int32(4)) << np.int32(29))))
        flip = (~(k - np.int32(2)) & np.int32(4)) << np.int32(29)
        cos_v = _bits_f32(np.int32(_f32_bits(cos_v) ^ np.int32(flip)))
        d[j] = _fma(radius * cos_v, std, mean)
        d[k8] = _fma(radius * sin_v, std, mean)


@njit(inline="always")
def _box_muller_f32_scalar(d, o, mean, std):
    for j in range(8):
        u1 = _ONE - d[o + j]
        u2 = d[o + j + 8]
        radius = math.sqrt(_MINUS_TWO * math.log(u1))
        theta = np.float32((2.0 * math.pi) * np.float64(u2))
        d[o + j] = _fma(radius * math.cos(theta), std, mean)
        d[o + j + 8] = _fma(radius * math.sin(theta), std, mean)


@njit
def normal_fill_f32(mt, pos, out, mean, std, vector):
    """ATen's ``normal_fill`` for float32 (``out.size >= 16``; ``mean``/``std`` float32):
    the AVX2 kernel when ``vector``, else the scalar one."""
    n = out.size
    for i in range(n):
        out[i] = _unit_f32(mt, pos)
    for i in range(0, n - 15, 16):
        if vector:
            _box_muller_f32_avx2(out, i, mean, std)
        else:
            _box_muller_f32_scalar(out, i, mean, std)
    if n % 16:
        for i in range(16):
            out[n - 16 + i] = _unit_f32(mt, pos)
        if vector:
            _box_muller_f32_avx2(out, n - 16, mean, std)
        else:
            _box_muller_f32_scalar(out, n - 16, mean, std)


@njit
def random_from_to(mt, pos, out, span, base):
    """int64 ``out``: ``draw % span + base`` (``span`` a uint64 >= 1, ``base`` an int64;
    a 64-bit draw from ``span >= 2**28``; ``span == 0`` means the full 64-bit range)."""
    wide = span >= np.uint64(1 << 28) or span == np.uint64(0)
    b = np.uint64(base)
    for i in range(out.size):
        if span == np.uint64(0):
            out[i] = np.int64(_u64(mt, pos))
        elif wide:
            out[i] = np.int64((_u64(mt, pos) % span) + b)
        else:
            out[i] = np.int64((np.uint64(_u32(mt, pos)) % span) + b)


@njit
def random_default(mt, pos, out, modulus, wide):
    """uint64 ``out``: ``random64() % modulus`` (``wide``) or ``random() % modulus``."""
    for i in range(out.size):
        v = _u64(mt, pos) if wide else np.uint64(_u32(mt, pos))
        out[i] = v % modulus


@njit
def bernoulli_scalar(mt, pos, out, p):
    """bool ``out``: a double uniform ``< p``."""
    for i in range(out.size):
        out[i] = _unit_f64(mt, pos) < p


@njit
def bernoulli_tensor(mt, pos, out, p, double):
    """bool ``out``: a uniform ``< p[i]``: a double uniform when ``double`` (a float64
    ``p``), else a float one (float32 ``p``)."""
    if double:
        for i in range(out.size):
            out[i] = _unit_f64(mt, pos) < p[i]
    else:
        for i in range(out.size):
            out[i] = _unit_f32(mt, pos) < p[i]


@njit
def exponential(mt, pos, out, lambd):
    """float64 ``out``: ``-1 / lambd * log1p(-u)`` for double uniforms ``u``."""
    scale = -1.0 / lambd
    for i in range(out.size):
        out[i] = scale * math.log1p(-_unit_f64(mt, pos))


@njit
def randperm(mt, pos, out):
    """int64 ``out`` (its size ``n``): ATen's ``randperm_cpu``."""
    n = out.size
    if n < 4294967295 // 20:
        for i in range(n):
            out[i] = i
        for i in range(n - 1):
            z = np.int64(_u32(mt, pos)) % (n - i)
            save = out[i]
            out[i] = out[z + i]
            out[z + i] = save
    else:
        for i in range(n):
            z = np.int64(_u64(mt, pos) % np.uint64(i + 1))
            out[i] = out[z]
            out[z] = i


@njit
def multinomial_with_replacement(mt, pos, rows, out, cum):
    """ATen's CPU multinomial with replacement: ``rows`` (n_dist, n_cat) checked
    non-negative, finite, with positive sums; ``out`` int64 (n_dist, n_sample); ``cum``
    a scratch row of ``rows``' dtype."""
    ncat = rows.shape[1]
    for r in range(rows.shape[0]):
        total = rows[r, 0] - rows[r, 0]
        for j in range(ncat):
            total += rows[r, j]
            cum[j] = total
        for j in range(ncat):
            cum[j] /= total
        cum[ncat - 1] = 1
        for s in range(out.shape[1]):
            u = _unit_f64(mt, pos)
            left = 0
            right = ncat
            while right - left > 0:
                mid = left + (right - left) // 2
                if cum[mid] < u:
                    left = mid + 1
                else:
                    right = mid
            out[r, s] = left


@njit
def poisson(mt, pos, lam, out):
    """float64 ``out``: ATen's ``sample_poisson`` of each rate in ``lam`` (checked >= 0):
    the transformed rejection method (Hoermann 1993) from rate 10, else the product of
    double uniforms."""
    for i in range(out.size):
        rate = lam[i]
        if rate >= 10.0:
            slam = math.sqrt(rate)
            loglam = math.log(rate)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2.0)
            while True:
                u = _unit_f64(mt, pos) - 0.5
                v = _unit_f64(mt, pos)
                us = 0.5 - abs(u)
                k = np.int64(math.floor((2.0 * a / us + b) * u + rate + 0.43))
                if us >= 0.07 and v <= vr:
                    break
                if k < 0 or (us < 0.013 and v > us):
                    continue
                lhs = math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                if lhs <= -rate + k * loglam - math.lgamma(k + 1.0):
                    break
            out[i] = k
        elif rate == 0.0:
            out[i] = 0.0
        else:
            enlam = math.exp(-rate)
            x = 0
            prod = 1.0
            while True:
                prod *= _unit_f64(mt, pos)
                if prod > enlam:
                    x += 1
                else:
                    break
            out[i] = x


def _host_avx2():
    """Whether ATen runs its AVX2 ``normal`` kernel here (NOTE [PyTorch's CPU random
    stream]): an x86-64 CPU with AVX2 and FMA, unless ``ATEN_CPU_CAPABILITY=default``."""
    if os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower() == "default":
        return False
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    features = binding.get_host_cpu_features()
    return bool(features.get("avx2")) and bool(features.get("fma"))


VECTOR_NORMAL = _host_avx2()
