"""The CPU backend's ``fft`` namespace: NumPy's ``np.fft`` with the one-dimensional
transforms of a large batch split across cores.

NOTE [Threaded FFTs]
NumPy's ``pocketfft`` is single-threaded, but its transforms are ufuncs that release the
GIL while they run, so the rows of a batch can be transformed on several threads at once,
each writing its slab of the caller's ``out``: a 1-D transform (``fft``, ``ifft``,
``rfft``, ``irfft``) of at least ``FFT_THREAD_MIN`` elements (input or output), with
``out`` given and a batch dimension of two or more rows, is split along its longest
batch dimension into ``threads.N_THREADS`` slabs (``threads.run_parts``: the first on
the calling thread). Each row is transformed by the same code as unsplit, so the results
are bit-identical. The multi-dimensional transforms (``rfftn``, ...) and everything else
are NumPy's own.
"""

from __future__ import annotations

import functools

import numpy as np

from numbagrad.kernels.cpu import threads

__all__ = ["FFT", "FFT_THREAD_MIN", "ThreadedFFT"]

# A 1024-point float64 rfft row costs ~10 us: from 256 such rows (262,144 elements) a
# thread hand-off (~20-50 us) is small beside each slab.
FFT_THREAD_MIN = 1 << 18


def _split(fn, a, axis, out, **kw):
    """``fn(a, axis=axis, out=out, **kw)``, its batch split across threads where it pays."""
    if (
        out is None
        or threads.N_THREADS == 1
        or max(a.size, out.size) < FFT_THREAD_MIN
        or a.ndim < 2
        or a.ndim != out.ndim
    ):
        return fn(a, axis=axis, out=out, **kw)
    ax = axis % a.ndim
    d = max((k for k in range(a.ndim) if k != ax), key=lambda k: a.shape[k])
    if a.shape[d] < 2 or out.shape[d] != a.shape[d]:
        return fn(a, axis=axis, out=out, **kw)
    parts = []
    for i, j in threads._slabs(a.shape[d], threads.N_THREADS):
        sl = (slice(None),) * d + (slice(i, j),)
        parts.append(functools.partial(fn, a[sl], axis=axis, out=out[sl], **kw))
    threads.run_parts(parts)
    return out


class ThreadedFFT:
    """``np.fft`` with the 1-D transforms of large batches threaded (NOTE [Threaded FFTs])."""

    @staticmethod
    def fft(a, n=None, axis=-1, norm=None, out=None):
        return _split(np.fft.fft, a, axis, out, n=n, norm=norm)

    @staticmethod
    def ifft(a, n=None, axis=-1, norm=None, out=None):
        return _split(np.fft.ifft, a, axis, out, n=n, norm=norm)

    @staticmethod
    def rfft(a, n=None, axis=-1, norm=None, out=None):
        return _split(np.fft.rfft, a, axis, out, n=n, norm=norm)

    @staticmethod
    def irfft(a, n=None, axis=-1, norm=None, out=None):
        return _split(np.fft.irfft, a, axis, out, n=n, norm=norm)

    def __getattr__(self, name):
        return getattr(np.fft, name)  # the n-dimensional transforms, fftfreq, ...


FFT = ThreadedFFT()
