"""``@cuda.jit`` random number kernels: a counter-based Philox4x32-10 generator, drawn on the
device (no host draw, no copy).

NOTE [CUDA random numbers]
A CUDA generator's state is two integers, ``(seed, offset)``, kept on the host (see
``numbagrad.Generator``). Element ``i`` of a draw reads one 128-bit Philox4x32-10 block
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11; the generator of
PyTorch's CUDA backend and of JAX)::

    words(i) = philox4x32_10(counter=(lo32(b), hi32(b), attempt, 0), key=(lo32(seed), hi32(seed)))
    b = offset // 4 + i

so every value is a pure function of ``(seed, offset, i)``: any grid, any block size and any
launch order give the same numbers, and a draw of ``n`` elements then advances ``offset`` by
``4 * n`` (the 32-bit words it was given; PyTorch's CUDA offsets are multiples of 4 too).
``attempt`` (the third counter word) is 0 except for the rejection loop of ``randint_kernel``,
which reads further blocks of the same element with attempt 1, 2, ...
From the four words of a block:

- uniform floats in ``[0, 1)`` take the top ``bits`` bits (24 for float32, 11 for float16,
  53 for float64 from two words) times ``2**-bits``: exact in the output dtype, every
  multiple of ``2**-bits`` equally likely, never 1.0;
- truncated standard normals on ``[a, b]`` invert the CDF: a uniform between ``Phi(a)`` and
  ``Phi(b)``, then 60 bisection steps on ``[a, b]`` (exact to float64 for the bounded
  intervals ``nn.init.trunc_normal_`` gives, in every tail: no rejection loop);
- normals use Box-Muller on two 53-bit uniforms (``sqrt(-2 log(1 - u1)) cos(2 pi u2)``:
  ``1 - u1`` is in ``(0, 1]``, so the log is finite), one normal per element;
- Poisson counts take as many uniforms as they need (two per block, the blocks of attempts
  1, 2, ...): Knuth's product of uniforms for a rate below 10, else Hoermann's transformed
  rejection (PTRS, as NumPy's ``random_poisson``);
- integers in ``[low, high)`` (a range ``r`` up to ``2**64 - 1``) take a 64-bit word pair
  ``x`` and reject ``x < 2**64 mod r`` before ``low + x mod r`` (the unbiased rejection of
  OpenBSD's ``arc4random_uniform``): every integer equally likely, no modulo bias at all.
  Each block offers two candidates; an element whose candidates are both rejected (chance
  below ``1/4`` per block, below ``2**-32`` for ``r <= 2**32``) reads its next attempt block.

Floating math is in float64 and rounded once on store, as the other CUDA kernels. The
streams differ from the CPU generator's (PyTorch's mt19937), as PyTorch's CUDA and CPU streams
differ.

Every random function of ``numbagrad/_creation.py`` that makes or fills a CUDA tensor draws
here: ``rand``/``randn``/``randint``/``normal`` (and the ``*_like``), ``randperm`` (random keys
sorted by the device ``argsort``), ``bernoulli``, ``poisson``, ``multinomial`` (inverse CDF
with replacement, ``categorical_kernel``; the exponential race without), the in-place
``uniform_``/``normal_``/``bernoulli_``/``exponential_``/``random_`` (and so ``dropout`` and
``nn.init``'s uniform, normal and truncated normal initialisers; ``orthogonal_`` draws on
the host), the samplers of ``numbagrad.distributions``, and ``vmap(randomness='different')``
(one draw for the whole batch). None copies values between host and device; the ones that check
a tensor argument (the probabilities of ``bernoulli``, the rates of ``poisson``, the weights
of ``multinomial``, ``normal``'s ``std``) read one small array of flags back to raise, as
PyTorch's host-side checks do.
"""

from __future__ import annotations

import math

from numba import float64, int64, uint64

from numbagrad.kernels.cuda._driver import cuda as _cuda
from numbagrad.kernels.cuda.elementwise import _offset

cuda = _cuda()

__all__ = [
    "BERNOULLI",
    "EXPONENTIAL",
    "NORMAL",
    "SAMPLES",
    "TRUNC_NORMAL",
    "UNIFORM",
    "categorical_kernel",
    "poisson_kernel",
    "randint_kernel",
    "sample_kernel",
]

# op codes of ``sample_kernel`` by the backend's sample kinds (NOTE [CUDA op codes] in
# ``elementwise.py``), and the names its branches compare with
SAMPLES = {"uniform": 0, "normal": 1, "exponential": 2, "bernoulli": 3, "trunc_normal": 4}
UNIFORM = SAMPLES["uniform"]
NORMAL = SAMPLES["normal"]
EXPONENTIAL = SAMPLES["exponential"]
BERNOULLI = SAMPLES["bernoulli"]
TRUNC_NORMAL = SAMPLES["trunc_normal"]

# Philox4x32 constants (Random123): the round multipliers and the key schedule's Weyl steps
_M0 = 0xD2511F53
_M1 = 0xCD9E8D57
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_LO32 = 0xFFFFFFFF
_TWO_PI = 2.0 * math.pi
_SQRT_HALF = math.sqrt(0.5)


@cuda.jit(device=True)
def _philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 of the counter ``(c0, c1, c2, c3)`` under the key ``(k0, k1)``: four
    32-bit words (every argument and result a uint64 below ``2**32``)."""
    mask = uint64(_LO32)
    for _ in range(10):
        p0 = uint64(_M0) * c0  # the 64-bit products of two 32-bit words (mulhilo32)
        p1 = uint64(_M1) * c2
        n0 = (p1 >> uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> uint64(32)) ^ c3 ^ k1
        c1 = p1 & mask
        c3 = p0 & mask
        c0 = n0
        c2 = n2
        k0 = (k0 + uint64(_W0)) & mask  # the key schedule (its last bump is unused)
        k1 = (k1 + uint64(_W1)) & mask
    return c0, c1, c2, c3


@cuda.jit(device=True)
def _block(i, base, attempt, k0, k1):
    """The four words of element ``i``'s block ``base + i`` (NOTE [CUDA random numbers])."""
    b = base + uint64(i)
    return _philox(b & uint64(_LO32), b >> uint64(32), attempt, uint64(0), k0, k1)


@cuda.jit(device=True)
def _u53(a, b):
    """A uniform float64 in ``[0, 1)`` with 53 random bits from two words (NumPy's way)."""
    return (float64(a >> uint64(5)) * 67108864.0 + float64(b >> uint64(6))) * (1.0 / 2.0**53)


@cuda.jit
def sample_kernel(op, n, k0, k1, base, a, b, bits, top, out, ooff, shape, st):
    """Fill the strided ``out`` (element ``i`` at the row-major index ``i`` of ``shape``) with
    samples ``op``: ``UNIFORM`` on ``[a, b)`` with ``bits`` random bits (a value that rounds
    to ``top``, ``b`` in the output dtype, becomes ``a``, as PyTorch's ``uniform_``),
    ``NORMAL`` of mean ``a`` and standard deviation ``b``, ``EXPONENTIAL`` of rate ``a``,
    ``BERNOULLI``: 1 with probability ``a``, else 0, or ``TRUNC_NORMAL``: a standard normal
    truncated to ``[a, b]`` (finite bounds)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        w0, w1, w2, w3 = _block(i, base, uint64(0), k0, k1)
        o = _offset(i, shape, st, ooff)
        if op == UNIFORM:
            if bits > 32:
                u = _u53(w0, w1)
            else:
                u = float64(w0 >> uint64(32 - bits)) * 2.0 ** (-bits)
            out[o] = a + (b - a) * u
            if a < b and out[o] >= top:  # rounded up to the bound: PyTorch returns ``from``
                out[o] = a
        elif op == NORMAL:
            r = math.sqrt(-2.0 * math.log(1.0 - _u53(w0, w1)))
            out[o] = a + b * (r * math.cos(_TWO_PI * _u53(w2, w3)))
        elif op == EXPONENTIAL:
            out[o] = -math.log1p(-_u53(w0, w1)) / a
        elif op == BERNOULLI:
            out[o] = 1 if _u53(w0, w1) < a else 0
        elif op == TRUNC_NORMAL:
            pa = _phi(a)
            t = pa + (_phi(b) - pa) * _u53(w0, w1)
            lo = a
            hi = b
            for _ in range(60):  # bisection: Phi(lo) <= t <= Phi(hi)
                mid = 0.5 * (lo + hi)
                if _phi(mid) < t:
                    lo = mid
                else:
                    hi = mid
            out[o] = 0.5 * (lo + hi)


@cuda.jit(device=True)
def _phi(x):
    """The standard normal CDF."""
    return 0.5 * (1.0 + math.erf(x * _SQRT_HALF))


@cuda.jit(device=True)
def _add_offset(low, v):
    """``low + v`` for an int64 ``low`` and a uint64 ``v`` whose sum fits in int64 (``v`` may
    pass ``2**63`` when ``low`` is negative)."""
    if v >= uint64(2**63):
        half = int64(2**62)
        return ((low + half) + half) + int64(v - uint64(2**63))
    return low + int64(v)


@cuda.jit
def randint_kernel(n, k0, k1, base, low, r, out, ooff, shape, st):
    """Fill the strided ``out`` with integers uniform on ``[low, low + r)`` (``r`` a uint64,
    at least 1), without modulo bias (NOTE [CUDA random numbers])."""
    # 2**64 mod r: x below it is rejected, so x mod r of the rest is uniform
    thresh = ((uint64(0xFFFFFFFFFFFFFFFF) - r) + uint64(1)) % r
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        attempt = uint64(0)
        x = uint64(0)
        found = False
        while not found:
            w0, w1, w2, w3 = _block(i, base, attempt, k0, k1)
            x = (w0 << uint64(32)) | w1
            if x >= thresh:
                found = True
            else:
                x = (w2 << uint64(32)) | w3
                found = x >= thresh
            attempt += uint64(1)
        out[_offset(i, shape, st, ooff)] = _add_offset(low, x % r)


@cuda.jit
def categorical_kernel(n, k, ncat, cdf, u, out):
    """``out[t]``: the category of sample ``t`` (of ``k`` per row) drawn by inverse CDF from
    row ``t // k`` of ``cdf`` (the running sums of the row's weights, contiguous ``(rows,
    ncat)``), given the uniform ``u[t]``: the first category whose running sum exceeds
    ``u[t] * total`` (a category of weight 0 has an empty interval, so it is never drawn)."""
    for t in range(cuda.grid(1), n, cuda.gridsize(1)):
        base = (t // k) * ncat
        x = u[t] * cdf[base + ncat - 1]
        lo = 0
        hi = ncat
        while lo < hi:  # binary search: the first j with cdf[j] > x
            mid = (lo + hi) // 2
            if cdf[base + mid] > x:
                hi = mid
            else:
                lo = mid + 1
        if lo >= ncat:  # x rounded up to the total: the last category that has weight
            lo = ncat - 1
            while lo > 0 and cdf[base + lo] == cdf[base + lo - 1]:
                lo -= 1
        out[t] = lo


@cuda.jit(device=True)
def _uniform(i, base, j, k0, k1):
    """Element ``i``'s ``j``-th 53-bit uniform: half of the block of attempt ``j // 2``."""
    w0, w1, w2, w3 = _block(i, base, uint64(j // 2), k0, k1)
    if j % 2 == 0:
        return _u53(w0, w1)
    return _u53(w2, w3)


@cuda.jit
def poisson_kernel(n, k0, k1, base, lam, loff, shape, st, out):
    """``out[i]``: a Poisson count of rate ``lam[i]`` (read through ``shape``/``st`` from
    ``loff``; the rates were checked to be finite and non-negative)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        rate = float64(lam[_offset(i, shape, st, loff)])
        j = 0
        x = 0.0
        if rate <= 0.0:
            x = 0.0
        elif rate < 10.0:  # Knuth: count the uniforms whose product stays above e^-rate
            limit = math.exp(-rate)
            prod = _uniform(i, base, j, k0, k1)
            j += 1
            while prod > limit:
                x += 1.0
                prod *= _uniform(i, base, j, k0, k1)
                j += 1
        else:  # PTRS (Hoermann 1993), as NumPy's random_poisson_ptrs
            slam = math.sqrt(rate)
            loglam = math.log(rate)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2.0)
            done = False
            while not done:
                uu = _uniform(i, base, j, k0, k1) - 0.5
                v = _uniform(i, base, j + 1, k0, k1)
                j += 2
                us = 0.5 - abs(uu)
                x = math.floor((2.0 * a / us + b) * uu + rate + 0.43)
                if us >= 0.07 and v <= vr:
                    done = True
                elif x >= 0.0 and (us >= 0.013 or v <= us):
                    lhs = math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    done = lhs <= -rate + x * loglam - math.lgamma(x + 1.0)
        out[i] = x
