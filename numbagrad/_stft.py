"""The short-time Fourier transform and its inverse (``torch.stft``/``torch.istft``),
composed of differentiable ops: padding, framing (``unfold``), windowing and the
``numbagrad.fft`` transforms; ``istft`` overlap-adds with ``index_add`` and divides by the
window's overlap-added square (PyTorch's algorithm), so both have gradients, forward-mode
derivatives and ``vmap`` wherever their ops do."""

from __future__ import annotations

import warnings

import numpy as np

from numbagrad import _dtype as D
from numbagrad import fft as _fft
from numbagrad import ops as F
from numbagrad._creation import ones, tensor, zeros
from numbagrad._tensor import Tensor
from numbagrad.nn import functional as NF
from numbagrad.ops.gather_scatter import index_add
from numbagrad.ops.shape import unfold

__all__ = ["istft", "stft"]


def _window_of(window, win_length, n_fft, like, name):
    if window is None:
        window = ones(
            win_length, dtype=like.dtype.to_real() if like.dtype.is_complex else like.dtype
        )
    elif not isinstance(window, Tensor) or window.ndim != 1 or window.shape[0] != win_length:
        got = list(window.shape) if isinstance(window, Tensor) else window
        raise RuntimeError(
            f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, "
            f"but got window with size {got}"
        )
    if win_length < n_fft:  # centred in n_fft zeros, as PyTorch
        left = (n_fft - win_length) // 2
        window = NF.pad(window, (left, n_fft - win_length - left))
    return window


def _check_lengths(name, n_fft, hop_length, win_length, length=None):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if n_fft <= 0:
        raise RuntimeError(f"{name}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(
            f"{name}: expected 0 < win_length <= n_fft, but got win_length={win_length}"
        )
    return hop_length, win_length


def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
):
    """The short-time Fourier transform of a 1-D signal or a batch of them (``(B, L)``):
    ``(B, n_fft // 2 + 1, frames)`` complex (``onesided`` for real input and window).

    Parameters are PyTorch's: frames of ``n_fft`` samples every ``hop_length`` (default
    ``n_fft // 4``), multiplied by ``window`` (``win_length`` samples, default ``n_fft``,
    centred in ``n_fft``; ones when None); ``center`` pads the signal by ``n_fft // 2`` on
    both sides with ``pad_mode``; ``normalized`` scales by ``n_fft ** -0.5``.
    ``return_complex`` must be given for real inputs (``False``: the real view, deprecated
    as in PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.arange(16.0)
    >>> numbagrad.stft(x, 8, window=numbagrad.hann_window(8), return_complex=True).shape
    numbagrad.Size([5, 9])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' must be Tensor, not {type(input).__name__}")
    complex_in = input.dtype.is_complex or (isinstance(window, Tensor) and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and "
                "will further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    hop_length, win_length = _check_lengths("stft", n_fft, hop_length, win_length)
    x = input if input.ndim == 2 else F.unsqueeze(input, 0)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(D.get_default_dtype())
    if center:
        p = n_fft // 2
        x = F.squeeze(NF.pad(F.unsqueeze(x, 1), (p, p), mode=pad_mode), 1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    w = _window_of(window, win_length, n_fft, x, "stft")
    frames = unfold(x, -1, n_fft, hop_length) * w  # (B, frames, n_fft)
    norm = "ortho" if normalized else "backward"
    if onesided is None:
        onesided = not complex_in
    if onesided:
        if complex_in:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = _fft.rfft(frames, dim=-1, norm=norm)
    else:
        spec = _fft.fft(frames, dim=-1, norm=norm)
    spec = F.transpose(spec, -1, -2)
    if input.ndim == 1:
        spec = F.squeeze(spec, 0)
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, "
            "stft will return complex tensors for all inputs, and return_complex=False will "
            "raise an error.",
            UserWarning,
            stacklevel=2,
        )
        return F.view_as_real(F.contiguous(spec))
    return spec


def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """The inverse of :func:`stft` (PyTorch's least-squares overlap-add): a signal from
    its complex spectrogram ``(B, n_freq, frames)``.

    ``length`` trims or zero-pads the result; without it the ``n_fft // 2`` samples
    ``center`` added are cut from both ends. The overlap-added squared window must not
    vanish anywhere in the kept range (RuntimeError, as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.randn(64, dtype=numbagrad.float64)
    >>> w = numbagrad.hann_window(16, dtype=numbagrad.float64)
    >>> s = numbagrad.stft(x, 16, window=w, return_complex=True)
    >>> bool(numbagrad.allclose(numbagrad.istft(s, 16, window=w, length=64), x))
    True
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor.")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"istft: expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}"
        )
    hop_length, win_length = _check_lengths("istft", n_fft, hop_length, win_length)
    spec = input if input.ndim == 3 else F.unsqueeze(input, 0)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError(
                "istft: expected the frequency dimension (3rd to the last) of the input "
                f"tensor to match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
            )
    elif n_fft != n_freq:
        raise RuntimeError(
            "istft: expected the frequency dimension (3rd to the last) of the input tensor "
            f"to match n_fft when onesided=False, but got {n_freq}"
        )
    if return_complex:
        if onesided:
            raise RuntimeError("cannot have onesided output if window or input is complex")
    else:
        if isinstance(window, Tensor) and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:  # a real result: the half spectrum, as PyTorch's
            spec = F.narrow(spec, -2, 0, n_fft // 2 + 1)
            onesided = True
    w = _window_of(window, win_length, n_fft, spec, "istft")
    norm = "ortho" if normalized else "backward"
    frames = F.transpose(spec, -1, -2)  # (B, frames, n_freq)
    if onesided:
        frames = _fft.irfft(frames, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(frames, n=n_fft, dim=-1, norm=norm)
    frames = frames * w
    total = n_fft + hop_length * (n_frames - 1)
    starts = np.arange(n_frames)[:, None] * hop_length + np.arange(n_fft)[None, :]
    index = tensor(starts.reshape(-1))
    batch = frames.shape[0]
    y = index_add(
        zeros((batch, total), dtype=frames.dtype), 1, index, F.reshape(frames, (batch, -1))
    )
    w2 = F.abs(w * w).detach()
    env = index_add(zeros(total, dtype=w2.dtype), 0, index, w2.repeat(n_frames))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    end_in = min(end, total)
    y = F.narrow(y, -1, start, end_in - start)
    env = F.narrow(env, 0, start, end_in - start)
    if env.numel() and float(F.abs(env).min()) < 1e-11:
        raise RuntimeError(
            "istft(...): window overlap add min: "
            f"{float(F.abs(env).min())}: the window's overlap-added square vanishes; use a "
            "window and hop_length that overlap (NOLA)"
        )
    y = y / env
    if end > total:  # a requested length beyond the signal: zeros
        y = NF.pad(y, (0, end - total))
    if input.ndim == 2:
        y = F.squeeze(y, 0)
    return y
