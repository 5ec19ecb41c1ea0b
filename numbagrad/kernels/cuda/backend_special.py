"""The CUDA backend's special family (a mixin of ``backend.CudaBackend``, NOTE [Backends]):
``numbagrad.special``'s maps and binary functions (``xlogy``, ``nextafter``...): the
kernels of ``special.py``.

The methods reach the backend's other methods through ``self`` (the one ``CUDA`` object),
so a family calls another without importing it."""

from __future__ import annotations

import numpy as np

from numbagrad.kernels import module
from numbagrad.kernels.cuda.array import CudaArray, device_mismatch
from numbagrad.kernels.cuda.backend_common import (
    _as_operand,
    _bcast_st,
    _meta,
    _result_dtype,
    _unsupported,
)
from numbagrad.kernels.cuda.launch import launch

__all__ = ["SpecialMethods"]

KSpecial = module("special", "cuda")


class SpecialMethods:
    """The special methods of ``CudaBackend``."""

    # -- special (special.py: numbagrad.special, xlogy/xlog1py, nextafter) ------------------
    def special_unary(self, name, x, dtype, n=None):
        """The special function ``name`` (``special.UNARY``, the CPU's codes; ``"polygamma"``
        of order ``n``) of the CUDA array ``x`` as ``dtype``: the CPU's scalar formulas run
        on the device in float64 and rounded once (NOTE [CUDA special functions])."""
        if not isinstance(x, CudaArray):
            raise device_mismatch("cuda:0", "cpu")
        if x.dtype.kind not in "biuf":
            raise _unsupported(f"special.{name} of {x.dtype} tensors")
        dt = np.dtype(dtype)
        out = self.empty(x.shape, dt, x.device_index)
        shape, st = _meta(x)
        if n is not None:  # polygamma: trigamma's reflection in float32 for float32 results
            single = dt == np.float32
            launch(KSpecial.polygamma_kernel, x.size, int(n), single, x.size, x._buf, x._off,
                   shape, st, out._buf)  # fmt: skip
            return out
        code = KSpecial.UNARY.get(name)
        if code is None:
            raise _unsupported(f"special.{name}")
        launch(KSpecial.special_unary_kernel, x.size, code, x.size, x._buf, x._off, shape, st,
               out._buf)  # fmt: skip
        return out

    def standard_gamma(self, name, alpha, b):
        """The reparameterised gamma draws' kernels are CPU-only (docs/gpu.rst)."""
        raise _unsupported(name)

    def special_binary(self, name, a, b, dtype=None):
        """The broadcasting two-operand function ``name`` (``special.BINARY``: ``gammainc``,
        ``gammaincc``, ``zeta``, ``xlogy``, ``xlog1py``, ``nextafter``) of CUDA arrays or
        scalars, as ``dtype`` (None: NumPy's result dtype); a scalar is first rounded to
        ``dtype``, as NumPy's ufuncs and the CPU ops do."""
        code = KSpecial.BINARY.get(name)
        if code is None:
            raise _unsupported(name)
        dev = a if isinstance(a, CudaArray) else b
        a, b = _as_operand(a, dev), _as_operand(b, dev)
        dt = _result_dtype(name, a, b) if dtype is None else np.dtype(dtype)
        if dt.kind != "f" or any(
            isinstance(v, CudaArray) and v.dtype.kind not in "biuf" for v in (a, b)
        ):
            raise _unsupported(f"{name} of {dt} tensors")
        a, b = (v if isinstance(v, CudaArray) else self.full((), v, dt) for v in (a, b))
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            sa, sb = list(a.shape), list(b.shape)
            raise RuntimeError(
                f"{name}: the size of tensor a ({sa}) must match the size of tensor b ({sb}): "
                f"shapes {sa} and {sb} are not broadcastable"
            ) from None
        out = self.empty(shape, dt, dev.device_index)
        ast, aoff = _bcast_st(a, shape)
        bst, boff = _bcast_st(b, shape)
        digits, emin, big = KSpecial.NEXTAFTER_FORMATS.get(dt.name, (53, -1074, 0.0))
        launch(KSpecial.special_binary_kernel, out.size, code, out.size, a._buf, aoff, ast,
               b._buf, boff, bst, shape or (1,), digits, emin, float(big), out._buf)  # fmt: skip
        return out

    # -- end of special ----------------------------------------------------------------------
