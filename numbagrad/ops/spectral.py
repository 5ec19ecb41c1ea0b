"""Discrete Fourier transforms: three primitives, as PyTorch's ``_fft_c2c``, ``_fft_r2c``
and ``_fft_c2r``, under every function of ``numbagrad.fft``.

NOTE [FFT primitives]
Each primitive transforms the dimensions ``dims`` of an operand already sized for it (the
public functions trim or zero-pad to ``n``/``s`` first, with differentiable ops) and scales
by ``norm`` ("backward": the forward unscaled, the inverse by 1/n; "forward": the
reverse; "ortho": both by 1/sqrt(n)), NumPy's ``pocketfft`` computing it on the CPU.
The results are written into row-major arrays from the backend's buffer cache (NumPy's
own allocation of a new output costs several times the transform of a small batch).
The rules never build a matrix: the adjoint of a DFT is the DFT of the other direction
with the dual norm (backward <-> forward, ortho <-> ortho), so

- ``FftC2C``'s VJP is ``FftC2C`` the other way (the transforms are complex-linear: PyTorch's
  gradient of a complex-linear map is its adjoint, NOTE [Complex autograd] in
  ``ops/cplx.py``);
- ``FftR2C`` (the one-sided ``rfft``)'s VJP is PyTorch's ``fft_r2c_backward`` (zero-fill
  the missing half, inverse C2C, real part), computed as the C2R of the gradient with its
  mirrored entries halved (the same values, at a C2R's cost);
- ``FftC2R`` (``irfft``)'s VJP is the one-sided R2C of the gradient with the entries whose
  mirror image lies outside the half spectrum doubled (PyTorch's ``fft_c2r_backward``).

All three are linear over the reals: the JVP is the op on the tangent; the batching rule
moves the batch dimension to the front and shifts ``dims``.
"""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import tensor
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import bound_both_ways

__all__ = ["FftC2C", "FftC2R", "FftR2C", "dual_norm", "resize"]

_NORMS = ("backward", "forward", "ortho")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def dual_norm(norm):
    """The norm of the adjoint transform (backward <-> forward, ortho <-> ortho)."""
    return _DUAL[norm]


def _no_ffts(name, device):
    return NotImplementedError(
        f"numbagrad.fft.{name}: FFTs on {device.upper()} tensors are not implemented "
        f"(numbagrad's {device.upper()} kernels are real-valued, see docs/gpu.rst); move the "
        "tensor to the CPU"
    )


def _fft_backend(be, name):
    """The backend's ``fft`` namespace (NumPy's ``np.fft`` on the CPU); a backend without
    FFTs (``be.fft`` None) raises NotImplementedError naming the op."""
    if be.fft is None:
        raise _no_ffts(name, be.name)
    return be.fft


def _batched(prim, args, dims_b, params):
    (x,), (d,) = args, dims_b
    if d != 0:
        x = F.movedim(x, d, 0)
    p = dict(params)
    p["dims"] = tuple(k + 1 for k in params["dims"])
    return bind(prim, (x,), p), 0


def _fft_c2c_rule(cls, ctx, saved, g, dims, norm, forward):
    """The adjoint of a transform: the opposite direction with the dual norm."""
    return FftC2C, (g,), {"dims": dims, "norm": _DUAL[norm], "forward": not forward}


class FftC2C(Primitive):
    """The complex DFT of ``dims`` (``forward``: the sign of the exponent), scaled by
    ``norm`` (NOTE [FFT primitives])."""

    complex_ok = True
    linearity = "linear"

    @staticmethod
    def impl(be, x, dims, norm, forward):
        fft = _fft_backend(be, "fft" if forward else "ifft")
        if not dims:
            return x.copy()
        out = be.empty(x.shape, x.dtype)  # (row-major, as PyTorch's)
        norm, rescale = _single_precision_norm(x, norm, forward, [x.shape[d] for d in dims])
        if len(dims) == 1:
            f = fft.fft if forward else fft.ifft
            return _rescaled(f(x, axis=dims[0], norm=norm, out=out), rescale)
        f = fft.fftn if forward else fft.ifftn
        return _rescaled(f(x, axes=dims, norm=norm, out=out), rescale)

    vjp, fused_vjp = bound_both_ways(_fft_c2c_rule)

    @staticmethod
    def batch(args, bdims, dims, norm, forward):
        return _batched(FftC2C, args, bdims, {"dims": dims, "norm": norm, "forward": forward})


class FftR2C(Primitive):
    """The one-sided DFT of a real tensor over ``dims``: the last of them keeps
    ``n // 2 + 1`` frequencies (``rfftn``)."""

    complex_ok = True
    linearity = "linear"

    @staticmethod
    def impl(be, x, dims, norm):
        fft = _fft_backend(be, "rfft")
        shape = list(x.shape)
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
        out = be.empty(tuple(shape), np.result_type(x.dtype, np.complex64))
        norm, rescale = _single_precision_norm(x, norm, True, [x.shape[d] for d in dims])
        if len(dims) == 1:
            return _rescaled(fft.rfft(x, axis=dims[0], norm=norm, out=out), rescale)
        return _rescaled(fft.rfftn(x, axes=dims, norm=norm, out=out), rescale)

    @staticmethod
    def vjp(ctx, g, dims, norm):
        # PyTorch's fft_r2c_backward is real(C2C^-1(g zero-filled to n)); each line of that
        # is the C2R of g with the entries that have a mirror image (0 < k < n/2) halved,
        # the same values for a C2R's cost, not a full complex transform's
        last = dims[-1]
        n = ctx.input_shape(0)[last]
        return bind(
            FftC2R, (_r2c_weights(g, last, n),), {"dims": dims, "norm": _DUAL[norm], "last_size": n}
        )

    @staticmethod
    def batch(args, bdims, dims, norm):
        return _batched(FftR2C, args, bdims, {"dims": dims, "norm": norm})


class FftC2R(Primitive):
    """The real inverse of the one-sided DFT over ``dims``: the last one becomes
    ``last_size`` long (``irfftn``; the input's last dim holds ``last_size // 2 + 1``)."""

    complex_ok = True
    linearity = "linear"

    @staticmethod
    def impl(be, x, dims, norm, last_size):
        fft = _fft_backend(be, "irfft")
        shape = list(x.shape)
        shape[dims[-1]] = last_size
        out = be.empty(tuple(shape), x.real.dtype)
        s = [x.shape[d] for d in dims[:-1]] + [last_size]
        norm, rescale = _single_precision_norm(x, norm, False, s)
        if len(dims) == 1:
            return _rescaled(fft.irfft(x, n=last_size, axis=dims[0], norm=norm, out=out), rescale)
        return _rescaled(fft.irfftn(x, s=s, axes=dims, norm=norm, out=out), rescale)

    @staticmethod
    def vjp(ctx, g, dims, norm, last_size):
        gi = bind(FftR2C, (g,), {"dims": dims, "norm": _DUAL[norm]})
        last = dims[-1]
        m = gi.shape[last]
        double = last_size - m  # the entries whose mirror image is outside the half
        if double > 0:
            w = np.ones(m, dtype=g.dtype.np)
            w[1 : 1 + double] = 2
            gi = gi * _along(w, g.ndim, last)
        return gi

    @staticmethod
    def batch(args, bdims, dims, norm, last_size):
        return _batched(FftC2R, args, bdims, {"dims": dims, "norm": norm, "last_size": last_size})


# NOTE [Single-precision FFTs]
# NumPy's (2.x) complex transform of complex64 data runs ~10x slower when its scale factor is
# exactly 1 (a forward transform with norm="backward", an inverse one with norm="forward")
# than with any other factor, and so do its one-dimensional float32 ``rfft`` and complex64
# ``irfft`` (measured 1.26 ms against 0.19 ms for an FNO's (20, 32, 256) ``rfft``, and the
# same for its ``irfft``; float64 is not affected). Those are computed with norm="ortho" and
# scaled back by sqrt(n) in one more pass (a rounding of float32's order, which the scale
# itself has).
def _single_precision_norm(x, norm, forward, sizes):
    """The norm to run and the factor to scale the result by afterwards (or None)."""
    if x.dtype not in (np.float32, np.complex64):
        return norm, None
    if norm != ("backward" if forward else "forward"):
        return norm, None
    return "ortho", float(np.sqrt(float(np.prod(sizes))))


def _rescaled(out, factor):
    if factor is not None and factor != 1.0:
        out *= out.real.dtype.type(factor)
    return out


def _along(w, ndim, dim):
    """The 1-D array ``w`` as a constant tensor that broadcasts along ``dim`` of ``ndim``."""
    shape = [1] * ndim
    shape[dim] = w.shape[0]
    return tensor(w.reshape(shape))


def _r2c_weights(g, last, n):
    """``g`` (a one-sided spectrum of ``n`` points along ``last``) with the entries that
    have a mirror image, ``0 < k < n / 2``, halved."""
    m = g.shape[last]
    w = np.full(m, 0.5, dtype=g.dtype.to_real().np)
    w[0] = 1.0
    if n % 2 == 0:
        w[m - 1] = 1.0  # (Nyquist)
    return g * _along(w, g.ndim, last)


# -- helpers of the public functions (numbagrad/fft) ---------------------------------------
def resize(x, dim, n):
    """``x`` trimmed or zero-padded at the end of ``dim`` to length ``n`` (differentiable)."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        return F.narrow(x, dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - size
    return F.cat([x, x.new_zeros(tuple(shape))], dim)


def check_norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def as_input(name, x, *, real=False):
    """``x`` as a transform takes it: a tensor (else TypeError), integer and bool tensors
    as the default float dtype; ``real``: complex inputs refused, as PyTorch's ``rfft``."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )
    if not x._is_tracer and x.is_cuda:
        raise _no_ffts(name, x.device.type)
    dt = x.dtype
    if dt.is_complex:
        if real:
            names = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}
            raise RuntimeError(f"{name} expects a real input tensor, but got {names[dt._name]}")
        return x
    if dt is D.float16:
        raise NotImplementedError(
            f"numbagrad.fft.{name}: float16 is not supported (NumPy's FFT has no half "
            "precision); convert to float32"
        )
    if not dt.is_floating_point:
        x = x.to(D.get_default_dtype())
    return x


def to_complex(x):
    return x if x.dtype.is_complex else x.to(x.dtype.to_complex())
