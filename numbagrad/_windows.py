"""Window functions for spectral analysis (``torch.hann_window`` and its kin).

Each is computed in float64 with NumPy and rounded once to the requested dtype. With
``periodic=True`` (the default, as PyTorch's) the window is the symmetric window of
``window_length + 1`` points without its last one, the form ``stft`` wants.
"""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad._creation import tensor

__all__ = [
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "kaiser_window",
]


def _window(name, window_length, periodic, dtype, device, requires_grad, fill):
    if not isinstance(window_length, (int, np.integer)) or isinstance(window_length, bool):
        raise TypeError(
            f"{name}(): argument 'window_length' must be int, not {type(window_length).__name__}"
        )
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if window_length == 0:
        w = np.zeros(0)
    elif window_length == 1:
        w = np.ones(1)
    else:
        m = window_length + 1 if periodic else window_length
        w = fill(np.arange(m, dtype=np.float64), m)[:window_length]
    return tensor(w, dtype=dt, device=device, requires_grad=requires_grad)


def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """The Hamming window ``alpha - beta cos(2 pi n / (N - 1))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.hamming_window(4)
    tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: alpha - beta * np.cos(2 * np.pi * n / (m - 1)),
    )


def hann_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False
):
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: 0.5 - 0.5 * np.cos(2 * np.pi * n / (m - 1)),
    )


def blackman_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False
):
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: (
            0.42 - 0.5 * np.cos(2 * np.pi * n / (m - 1)) + 0.08 * np.cos(4 * np.pi * n / (m - 1))
        ),
    )


def bartlett_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False
):
    """The Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|``."""
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: 1 - np.abs(2 * n / (m - 1) - 1),
    )


def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """The Kaiser window ``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``."""
    return _window(
        "kaiser_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: (
            np.i0(beta * np.sqrt(np.maximum(0.0, 1 - (2 * n / (m - 1) - 1) ** 2))) / np.i0(beta)
        ),
    )
