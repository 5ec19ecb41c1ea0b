"""``numbagrad.fft``: discrete Fourier transforms with gradients, mirroring ``torch.fft``.

Every transform takes ``n`` (or ``s``), ``dim`` and ``norm`` as PyTorch's: the input is
trimmed or zero-padded to ``n`` along each transformed dimension, and ``norm`` is
``"backward"`` (the default: forward transforms unscaled, inverse ones by ``1/n``),
``"ortho"`` (both by ``1/sqrt(n)``) or ``"forward"`` (the reverse of ``"backward"``).
Real inputs of the complex transforms are promoted to complex (integers to the default
float dtype first); ``float16`` is not supported. They are computed by NumPy's
``pocketfft`` on the CPU (CUDA tensors raise ``NotImplementedError``). Gradients, JVPs
and ``vmap`` work through every transform: the adjoint of a DFT is a DFT (NOTE [FFT
primitives] in ``numbagrad/ops/spectral.py``), and the gradients follow PyTorch's
convention for complex numbers (see the "Complex numbers and FFT" page of the docs).

Examples
--------
>>> import numbagrad
>>> x = numbagrad.tensor([1.0, 2.0, 3.0, 4.0])
>>> numbagrad.fft.fft(x)
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
>>> numbagrad.fft.irfft(numbagrad.fft.rfft(x), n=4)
tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

import numpy as np

from numbagrad import _creation
from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._tensor import Tensor
from numbagrad.ops._op import bind
from numbagrad.ops.spectral import (
    FftC2C,
    FftC2R,
    FftR2C,
    as_input,
    check_norm,
    dual_norm,
    resize,
    to_complex,
)

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]


# -- arguments -----------------------------------------------------------------------------
def _wrap(dim, ndim):
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return int(dim) % max(ndim, 1)


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return int(n)


def _one_dim(x, n, dim):
    if x.ndim == 0:
        raise IndexError(
            "Dimension specified as -1 but tensor has no dimensions"
            if dim == -1
            else f"Dimension specified as {dim} but tensor has no dimensions"
        )
    d = _wrap(dim, x.ndim)
    return d, (x.shape[d] if n is None else _check_n(n))


def _dims_sizes(x, s, dim):
    """The transformed dims (wrapped, unique) and their sizes, from ``s`` and ``dim`` as
    PyTorch's ``fftn`` reads them (``s`` entries of -1 keep the input's size)."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if s is not None and not isinstance(s, (tuple, list)):
        s = (s,)
    if dim is None:
        if s is None:
            dims = list(range(x.ndim))
        else:
            if len(s) > x.ndim:
                raise RuntimeError(
                    f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions."
                )
            dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = [_wrap(d, x.ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        sizes = [x.shape[d] if n == -1 else _check_n(n) for d, n in zip(dims, s)]
    return dims, sizes


def _resize_all(x, dims, sizes):
    for d, n in zip(dims, sizes):
        x = resize(x, d, n)
    return x


# -- complex-to-complex --------------------------------------------------------------------
def _c2c(name, input, dims, sizes, norm, forward):
    norm = check_norm(norm)
    x = to_complex(_resize_all(as_input(name, input), dims, sizes))
    return bind(FftC2C, (x,), {"dims": tuple(dims), "norm": norm, "forward": forward})


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``.

    Parameters
    ----------
    input : Tensor
        Real inputs are promoted to complex.
    n : int, optional
        The signal length: ``input`` is trimmed or zero-padded to it along ``dim``.
    dim : int, default -1
    norm : {"backward", "ortho", "forward"}, optional
        ``"backward"`` (the default) leaves the forward transform unscaled.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.fft.fft(numbagrad.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    d, n = _one_dim(input, n, dim)
    return _c2c("fft", input, [d], [n], norm, True)


def ifft(input, n=None, dim=-1, norm=None):
    """The one-dimensional inverse discrete Fourier transform (see :func:`fft`)."""
    d, n = _one_dim(input, n, dim)
    return _c2c("ifft", input, [d], [n], norm, False)


def fftn(input, s=None, dim=None, norm=None):
    """The N-dimensional discrete Fourier transform over ``dim`` (all dimensions by
    default, or the last ``len(s)``), each trimmed or zero-padded to ``s``."""
    dims, sizes = _dims_sizes(input, s, dim)
    return _c2c("fftn", input, dims, sizes, norm, True)


def ifftn(input, s=None, dim=None, norm=None):
    """The N-dimensional inverse discrete Fourier transform (see :func:`fftn`)."""
    dims, sizes = _dims_sizes(input, s, dim)
    return _c2c("ifftn", input, dims, sizes, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional discrete Fourier transform (:func:`fftn` over ``dim``)."""
    dims, sizes = _dims_sizes(input, s, dim)
    return _c2c("fft2", input, dims, sizes, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional inverse discrete Fourier transform (:func:`ifftn` over
    ``dim``)."""
    dims, sizes = _dims_sizes(input, s, dim)
    return _c2c("ifft2", input, dims, sizes, norm, False)


# -- real-to-complex (one-sided) -----------------------------------------------------------
def _r2c(name, input, dims, sizes, norm):
    norm = check_norm(norm)
    x = _resize_all(as_input(name, input, real=True), dims, sizes)
    return bind(FftR2C, (x,), {"dims": tuple(dims), "norm": norm})


def rfft(input, n=None, dim=-1, norm=None):
    """The one-dimensional Fourier transform of a real ``input``: the ``n // 2 + 1``
    non-negative frequencies (the others are their conjugates).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.fft.rfft(numbagrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    d, n = _one_dim(input, n, dim)
    return _r2c("rfft", input, [d], [n], norm)


def rfftn(input, s=None, dim=None, norm=None):
    """The N-dimensional Fourier transform of a real ``input``, one-sided in the last of
    ``dim``."""
    dims, sizes = _dims_sizes(input, s, dim)
    return _r2c("rfftn", input, dims, sizes, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional Fourier transform of a real ``input`` (:func:`rfftn`)."""
    dims, sizes = _dims_sizes(input, s, dim)
    return _r2c("rfft2", input, dims, sizes, norm)


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`hfft`: the one-sided inverse Fourier transform of a real
    ``input`` (``conj(rfft(input))`` with the dual norm)."""
    norm = check_norm(norm)
    as_input("ihfft", input, real=True)
    return F.conj(rfft(input, n, dim, dual_norm(norm)))


def ihfftn(input, s=None, dim=None, norm=None):
    """The N-dimensional inverse of :func:`hfftn` for a real ``input``."""
    norm = check_norm(norm)
    as_input("ihfftn", input, real=True)
    return F.conj(rfftn(input, s, dim, dual_norm(norm)))


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional :func:`ihfftn`."""
    norm = check_norm(norm)
    as_input("ihfft2", input, real=True)
    return F.conj(rfftn(input, s, dim, dual_norm(norm)))


# -- complex-to-real -----------------------------------------------------------------------
def _c2r(name, input, dims, sizes, norm):
    """``irfftn`` over ``dims``; ``sizes`` are the output sizes (the last one None: from the
    input, ``2 * (m - 1)``)."""
    norm = check_norm(norm)
    x = to_complex(as_input(name, input))
    last = dims[-1]
    n = sizes[-1]
    if n is None:
        n = 2 * (x.shape[last] - 1)
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    x = _resize_all(x, dims[:-1], sizes[:-1])
    x = resize(x, last, n // 2 + 1)
    return bind(FftC2R, (x,), {"dims": tuple(dims), "norm": norm, "last_size": n})


def _c2r_sizes(input, s, dim):
    given = s is not None
    dims, sizes = _dims_sizes(input, s, dim)
    if not given or (s[-1] if isinstance(s, (tuple, list)) else s) == -1:
        sizes[-1] = None
    return dims, sizes


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`rfft`: a real signal of length ``n`` (``2 * (m - 1)`` for an
    input of ``m`` frequencies by default) from its one-sided spectrum.

    The imaginary parts of the zero (and, for even ``n``, the Nyquist) frequency are
    ignored, as PyTorch's.
    """
    d, _ = _one_dim(input, 1, dim)
    if n is not None:
        _check_n(n)
    return _c2r("irfft", input, [d], [n], norm)


def irfftn(input, s=None, dim=None, norm=None):
    """The N-dimensional inverse of :func:`rfftn`."""
    dims, sizes = _c2r_sizes(input, s, dim)
    return _c2r("irfftn", input, dims, sizes, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional inverse of :func:`rfft2`."""
    dims, sizes = _c2r_sizes(input, s, dim)
    return _c2r("irfft2", input, dims, sizes, norm)


def hfft(input, n=None, dim=-1, norm=None):
    """The Fourier transform of a Hermitian-symmetric signal given by its one-sided half:
    a real tensor of length ``n`` (``irfft(conj(input))`` with the dual norm)."""
    norm = check_norm(norm)
    x = as_input("hfft", input)
    return irfft(F.conj(x), n, dim, dual_norm(norm))


def hfftn(input, s=None, dim=None, norm=None):
    """The N-dimensional :func:`hfft` (one-sided in the last of ``dim``)."""
    norm = check_norm(norm)
    x = as_input("hfftn", input)
    return irfftn(F.conj(x), s, dim, dual_norm(norm))


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional :func:`hfftn`."""
    norm = check_norm(norm)
    x = as_input("hfft2", input)
    return irfftn(F.conj(x), s, dim, dual_norm(norm))


# -- helpers -------------------------------------------------------------------------------
def _freq_dtype(dtype):
    d = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if not d.is_floating_point:
        raise RuntimeError(f"fftfreq requires a floating point dtype, got {d}")
    return d


def _inverse(v, dt):
    """``1 / v`` in ``dt`` (inf at 0: ``rfftfreq(0)`` is ``[nan]``, as PyTorch's)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return dt.np.type(np.float64(1.0) / np.float64(v))


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of :func:`fft` for a signal of length ``n`` and sample
    spacing ``d``: ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    dt = _freq_dtype(dtype)
    k = np.concatenate([np.arange(0, (n + 1) // 2), np.arange(-(n // 2), 0)])
    # as PyTorch: the integers in the dtype, times 1 / (n d)
    vals = k.astype(dt.np) * _inverse(n * d, dt)
    return _creation.tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of :func:`rfft` for a signal of length ``n`` and sample
    spacing ``d``: ``[0, 1, ..., n // 2] / (d n)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    dt = _freq_dtype(dtype)
    vals = np.arange(n // 2 + 1).astype(dt.np) * _inverse(n * d, dt)
    return _creation.tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)


def _shift_dims(input, dim):
    if not isinstance(input, Tensor):
        raise TypeError(f"argument 'input' must be Tensor, not {type(input).__name__}")
    if dim is None:
        return list(range(input.ndim))
    if not isinstance(dim, (tuple, list)):
        dim = (dim,)
    return [_wrap(d, input.ndim) for d in dim]


def fftshift(input, dim=None):
    """``input`` rolled so that the zero frequency is at the centre of each of ``dim``
    (all dimensions by default): a roll by ``size // 2``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.fft.fftshift(numbagrad.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    dims = _shift_dims(input, dim)
    if not dims:
        return input
    return F.roll(input, tuple(input.shape[d] // 2 for d in dims), tuple(dims))


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: a roll by ``(size + 1) // 2``."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input
    return F.roll(input, tuple((input.shape[d] + 1) // 2 for d in dims), tuple(dims))
