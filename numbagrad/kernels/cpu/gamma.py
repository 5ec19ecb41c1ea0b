"""Kernels of the reparameterised gamma sampler (``numbagrad/ops/random_gamma.py``).

NOTE [Reparameterised gamma samples]
A standard gamma sample is drawn by inverting its CDF at a uniform draw ``u``:
``x = P^-1(alpha, u)`` (``P`` the regularized lower incomplete gamma function), by Halley
steps from the Wilson-Hilferty (``alpha > 1``) or small-``x`` (``alpha <= 1``) guess. The
uniform comes from numbagrad's generator (``numbagrad.rand``), so these kernels hold no
random state. The gradient is the implicit reparameterisation one that PyTorch's
``_standard_gamma_grad`` approximates: ``dx/dalpha = -(dP/dalpha) / (dP/dx)`` at the sample,
here computed from the power series of ``P`` differentiated term by term where
``x < alpha + 1`` (exact, no underflow: the ratio is formed analytically) and from a central
difference of ``Q = 1 - P`` (continued fraction) in the upper tail. Everything runs in
float64; the callers round once.
"""

from __future__ import annotations

import math

from numba import prange

from numbagrad.kernels.cpu._jit import njit
from numbagrad.kernels.cpu.special import (
    digamma_scalar,
    gammainc_scalar,
    gammaincc_scalar,
    ndtri_scalar,
)

__all__ = ["standard_gamma_grad", "standard_gamma_icdf"]

_TINY = 2.2250738585072014e-308  # the smallest normal float64
_MAXITER = 100000
_LARGE_A = 1e12  # from here the inverse is Wilson-Hilferty's (``_icdf_scalar``)
_LARGE_A_GRAD = 1e5  # and from here its derivative (``_grad_scalar``)


@njit(cache=True, error_model="numpy")
def _log_pdf(a, x):
    return (a - 1.0) * math.log(x) - x - math.lgamma(a)


@njit(cache=True, error_model="numpy")
def _icdf_scalar(a, u):
    """``x`` with ``P(a, x) = u`` (``0 <= u <= 1``, ``a > 0``)."""
    if not (a > 0.0) or not (u >= 0.0) or not (u <= 1.0):
        return math.nan
    if u == 0.0:
        return 0.0
    if u == 1.0:
        return math.inf
    if a > _LARGE_A:
        # Wilson-Hilferty, whose error falls as 1/a and is below rounding here, where the
        # series and continued fraction of P lose their precision (NaN from 1e16 on);
        # a = inf gives inf, the limit
        if math.isinf(a):
            return math.inf
        return a * (1.0 - 1.0 / (9.0 * a) + ndtri_scalar(u) / (3.0 * math.sqrt(a))) ** 3
    q = 1.0 - u
    if a > 1.0:
        pp = u if u < 0.5 else q
        t = math.sqrt(-2.0 * math.log(pp))
        z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        if u < 0.5:
            z = -z
        x = a * (1.0 - 1.0 / (9.0 * a) - z / (3.0 * math.sqrt(a))) ** 3
        if x < 1e-3 * a:
            x = 1e-3 * a
    else:
        t = 1.0 - a * (0.253 + a * 0.12)
        if u < t:
            # log form: (u / t) ** (1 / a) underflows for small a
            lx = (math.log(u) - math.log(t)) / a
            if lx < -745.0:
                return 0.0
            x = math.exp(lx)
        else:
            x = 1.0 - math.log1p(-(u - t) / (1.0 - t))
    last = math.inf
    for _ in range(100):
        if x <= 0.0:
            return 0.0
        # the residual from whichever tail keeps its precision
        if u < 0.5:
            err = gammainc_scalar(a, x) - u
        else:
            err = q - gammaincc_scalar(a, x)
        lp = _log_pdf(a, x)
        if lp < -745.0:
            return x
        d = math.exp(lp)
        r = err / d
        step = r / (1.0 - 0.5 * min(1.0, r * ((a - 1.0) / x - 1.0)))
        xn = x - step
        if xn <= 0.0:
            xn = 0.5 * x
        change = abs(xn - x)
        # converged, or the steps stopped shrinking (rounding noise of P at full precision)
        if change <= 4e-16 * x or (change <= 1e-12 * x and change >= last):
            return xn
        last = change
        x = xn
    return x


@njit(cache=True, error_model="numpy", parallel=True)
def standard_gamma_icdf(a, u, out):
    """``out[i] = P^-1(a[i], u[i])``, clamped below at the smallest normal float (as
    PyTorch's sampler clamps its draws); elements in parallel."""
    for i in prange(out.size):
        x = _icdf_scalar(a[i], u[i])
        if x == 0.0:
            x = _TINY
        out[i] = x


@njit(cache=True, error_model="numpy")
def _grad_scalar(a, x):
    """``dx/da`` at fixed ``P(a, x)``."""
    if not (a > 0.0) or not (x >= 0.0):
        return math.nan
    if x == 0.0:
        return 0.0
    if math.isinf(x):
        return math.inf
    if a > _LARGE_A_GRAD:
        # the derivative of the Wilson-Hilferty form at fixed u (z read back from x):
        # x = a c^3, c = 1 - 1 / (9 a) + z / (3 sqrt a); its relative error falls as 1/a,
        # while the central difference of Q below loses digits from a ~ 1e6 (1e-5 there,
        # 8 % at 1e10)
        c = (x / a) ** (1.0 / 3.0)
        z = (c - 1.0 + 1.0 / (9.0 * a)) * 3.0 * math.sqrt(a)
        dc = 1.0 / (9.0 * a * a) - z / (6.0 * a * math.sqrt(a))
        return c * c * c + 3.0 * a * c * c * dc
    if x < a + 1.0:
        # P = e^-x x^a / Gamma(a + 1) * S, S = sum_n c_n, c_n = x^n / ((a+1)...(a+n));
        # dP/da = P (log x - psi(a + 1) + S'/S), pdf = P a / (x S), so
        # dx/da = -(x / a) (S (log x - psi(a + 1)) + S')
        c = 1.0
        s = 1.0
        h = 0.0  # sum_{k<=n} 1 / (a + k)
        ds = 0.0
        for n in range(1, _MAXITER):
            h += 1.0 / (a + n)
            c *= x / (a + n)
            s += c
            ds -= c * h
            if c * (1.0 + h) <= 1e-17 * s:
                break
        return -(x / a) * (s * (math.log(x) - digamma_scalar(a + 1.0)) + ds)
    lp = _log_pdf(a, x)
    if lp < -700.0:
        # far tail: Q ~ pdf (1 + (a-1)/x + ...), so dQ/da / pdf ~ log x - psi(a)
        return math.log(x) - digamma_scalar(a)
    step = 1e-5 * a
    dq = (gammaincc_scalar(a + step, x) - gammaincc_scalar(a - step, x)) / (2.0 * step)
    return dq / math.exp(lp)


@njit(cache=True, error_model="numpy", parallel=True)
def standard_gamma_grad(a, x, out):
    """``out[i] = dx/da`` of the gamma sample ``x[i]`` of concentration ``a[i]`` (elements
    in parallel)."""
    for i in prange(out.size):
        out[i] = _grad_scalar(a[i], x[i])
