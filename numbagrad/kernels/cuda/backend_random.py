"""The CUDA backend's random family (a mixin of ``backend.CudaBackend``, NOTE [Backends]):
random fills from a counter-based Philox4x32-10 state, categorical and Poisson draws:
the kernels of ``random.py``.

The methods reach the backend's other methods through ``self`` (the one ``CUDA`` object),
so a family calls another without importing it."""

from __future__ import annotations

import numpy as np

from numbagrad.kernels import module
from numbagrad.kernels.cuda.backend_common import (
    _meta,
)
from numbagrad.kernels.cuda.launch import launch

__all__ = ["RandomMethods"]

KRand = module("random", "cuda")


def _philox_args(seed, offset):
    """The kernel arguments of a Philox state: the key words and the first block index."""
    seed, offset = int(seed) % 2**64, int(offset)
    if offset < 0 or offset % 4:
        raise ValueError(f"a Philox offset is a non-negative multiple of 4, got {offset}")
    return np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32), np.uint64((offset // 4) % 2**64)


class RandomMethods:
    """The random methods of ``CudaBackend``."""

    # -- random numbers (random.py: NOTE [CUDA random numbers]) -----------------------------

    def random_fill(self, out, kind, seed, offset, a=0.0, b=1.0):
        """Fill the CUDA array ``out`` in place with ``kind`` samples (``"uniform"`` on
        ``[a, b)``, ``"normal"`` of mean ``a`` and std ``b``, ``"exponential"`` of rate ``a``,
        ``"bernoulli"`` with probability ``a``, ``"trunc_normal"``: standard normals truncated
        to the finite ``[a, b]``) from the Philox state ``(seed, offset)``; the caller
        advances its offset by ``4 * out.size``."""
        op = KRand.SAMPLES[kind]
        if out.size == 0:
            return
        # uniforms with the output dtype's spacing (float16's too, exact in float32), and
        # ``b`` rounded to the output dtype (or to float64 for non-floating outputs)
        bits = {np.float16: 11, np.float32: 24}.get(out.dtype.type, 53)
        top = float(out.dtype.type(b)) if out.dtype.kind == "f" else float(b)
        dst = out
        if out.dtype not in (np.float32, np.float64):  # drawn in float, then cast on copy
            dst = self.empty(out.shape, np.float32 if out.dtype == np.float16 else np.float64)
        shape, st = _meta(dst)
        k0, k1, base = _philox_args(seed, offset)
        launch(KRand.sample_kernel, dst.size, op, dst.size, k0, k1, base, float(a), float(b),
               bits, top, dst._buf, dst._off, shape, st)  # fmt: skip
        if dst is not out:
            self.copy_into(out, dst)

    def randint_fill(self, out, seed, offset, low, high):
        """Fill the CUDA array ``out`` in place with integers uniform on ``[low, high)``
        (``high - low`` from 1 to ``2**64 - 1``), without modulo bias, from the Philox state
        ``(seed, offset)``; the caller advances its offset by ``4 * out.size``."""
        low, high = int(low), int(high)
        if not 1 <= high - low <= 2**64 - 1 or not -(2**63) <= low < 2**63:
            raise ValueError(f"randint_fill: bad range [{low}, {high})")
        if out.size == 0:
            return
        if out.dtype not in (np.int64, np.int32, np.float32, np.float64):
            tmp = self.empty(out.shape, np.int64)  # drawn in int64, cast on copy
            self.randint_fill(tmp, seed, offset, low, high)
            self.copy_into(out, tmp)
            return
        shape, st = _meta(out)
        k0, k1, base = _philox_args(seed, offset)
        launch(KRand.randint_kernel, out.size, out.size, k0, k1, base, np.int64(low),
               np.uint64(high - low), out._buf, out._off, shape, st)  # fmt: skip

    def categorical(self, cdf, u):
        """Inverse-CDF draws: for the running sums ``cdf`` (float64, contiguous ``(rows,
        ncat)``) and uniforms ``u`` (float64, ``(rows, k)``), the int64 categories."""
        rows, ncat = cdf.shape
        k = u.shape[1]
        out = self.empty((rows, k), np.int64)
        launch(KRand.categorical_kernel, out.size, out.size, k, ncat, cdf._buf, u._buf, out._buf)
        return out

    def poisson_fill(self, out, lam, seed, offset):
        """Fill the contiguous CUDA array ``out`` with Poisson counts of the rates ``lam``
        (finite, non-negative, ``out``'s shape) from the Philox state ``(seed, offset)``;
        the caller advances its offset by ``4 * out.size``. A count is drawn in float64 and
        cast to ``out``'s dtype on store."""
        if out.size == 0:
            return
        shape, st = _meta(lam)
        k0, k1, base = _philox_args(seed, offset)
        launch(KRand.poisson_kernel, out.size, out.size, k0, k1, base, lam._buf, lam._off,
               shape, st, out._buf)  # fmt: skip

    # -- end of random numbers --------------------------------------------------------------
