"""The CPU backend's special family (a mixin of ``backend.CpuBackend``, NOTE [Backends]):
``numbagrad.special``'s maps and two-operand functions on the ``@njit`` kernels of
``special.py`` (NOTE [Special-function kernels]), ``xlogy``/``xlog1py`` and ``nextafter``
by NumPy. The same methods as the CUDA backend's ``backend_special.SpecialMethods``
(NOTE [Backend protocol])."""

from __future__ import annotations

import numpy as np

from numbagrad.kernels import module

__all__ = ["SpecialMethods"]

KS = module("special")
KG = module("gamma")
# the reparameterised gamma draws' kernels (NOTE [Reparameterised gamma samples] in gamma.py)
_GAMMA = {"_standard_gamma": "standard_gamma_icdf", "_standard_gamma_grad": "standard_gamma_grad"}


def _round(out, dt):
    """The float64 result ``out`` as ``dt``; float16 overflows to inf silently, as in
    PyTorch (NOTE [Half precision] in ``backend.py``)."""
    if dt == np.float16:
        with np.errstate(over="ignore"):
            return out.astype(dt)
    return out.astype(dt, copy=False)


def _xlogy(a, b, log):
    """``a * log(b)``, 0 where ``a == 0`` unless ``b`` is NaN (PyTorch's xlogy/xlog1py)."""
    with np.errstate(all="ignore"):
        out = a * log(b)
        return np.where((a == 0) & ~np.isnan(b), a.dtype.type(0), out)


_XLOG = {"xlogy": np.log, "xlog1py": np.log1p}


class SpecialMethods:
    """The special methods of ``CpuBackend``."""

    @staticmethod
    def special_unary(name, x, dtype, n=None):
        """The special function ``name`` (``special.UNARY_CODES``; ``"polygamma"`` of order
        ``n``) of array ``x`` as ``dtype``, computed in float64 and rounded once."""
        dt = np.dtype(dtype)
        if n is None and name not in KS.UNARY_CODES:
            raise NotImplementedError(f"special.{name}: no such special-function kernel")
        flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)  # a copy unless float64
        out = np.empty(flat.size, np.float64)
        if flat.size:
            if n is None:
                KS.special_unary(KS.UNARY_CODES[name], flat, out)
            else:
                KS.polygamma_forward(n, dt == np.float32, flat, out)
        return _round(out.reshape(np.shape(x)), dt)

    @staticmethod
    def special_binary(name, a, b, dtype=None):
        """The broadcasting two-operand function ``name`` (``gammainc``, ``gammaincc``,
        ``zeta``: float64 kernels rounded once; ``xlogy``, ``xlog1py``, ``nextafter``) of
        arrays or scalars as ``dtype`` (None: NumPy's result dtype); the operands are first
        cast to ``dtype``, as the CUDA backend does."""
        dt = np.result_type(a, b) if dtype is None else np.dtype(dtype)
        a, b = np.asarray(a, dt), np.asarray(b, dt)
        if name == "nextafter":
            return np.nextafter(a, b)
        a, b = np.broadcast_arrays(a, b)
        log = _XLOG.get(name)
        if log is not None:
            return np.asarray(_xlogy(a, b, log), dt)
        code = KS.BINARY_CODES.get(name)
        if code is None:
            raise NotImplementedError(f"{name}: no such special-function kernel")
        fa = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        fb = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
        out = np.empty(fa.size, np.float64)
        if fa.size:
            KS.special_binary(code, fa, fb, out)
        return _round(out.reshape(a.shape), dt)

    @staticmethod
    def standard_gamma(name, alpha, b):
        """``"_standard_gamma"``: the standard gamma inverse CDF at ``b`` (a uniform);
        ``"_standard_gamma_grad"``: ``dx/dalpha`` of the sample ``b``; ``alpha`` and ``b``
        broadcast, computed in float64 and rounded once to their result dtype."""
        dt = np.result_type(alpha.dtype, b.dtype)
        a, b = np.broadcast_arrays(alpha, b)
        fa = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        fb = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
        out = np.empty(fa.size, np.float64)
        if out.size:
            getattr(KG, _GAMMA[name])(fa, fb, out)
        return out.reshape(a.shape).astype(dt, copy=False)
