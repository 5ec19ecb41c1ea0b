"""Parameter initialisation (PyTorch's ``torch.nn.init``).

Every function fills its tensor in place without recording a graph and returns it. Random
draws go through the tensor's in-place samplers (``uniform_``, ``normal_``) in PyTorch's
order, so on the CPU they give PyTorch's numbers for the same seed ("Random sampling" in
docs/api.rst; ``orthogonal_`` to within the rounding of the QR factorisation).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from numbagrad import linalg as _linalg
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import _draw_normal, _draw_uniform, _fill_random, _gen
from numbagrad._dtype import float64 as _float64
from numbagrad._tensor import Tensor
from numbagrad.ops import diagonal as _diagonal

__all__ = [
    "calculate_gain",
    "constant_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]


def _check(tensor, name):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name}(): expected a numbagrad Tensor, got {type(tensor).__name__}")


def _write(tensor, values):
    """Copy ``values`` (an ndarray of the tensor's shape) into ``tensor`` without a graph."""
    with no_grad():
        tensor.copy_(Tensor._make(np.asarray(values, dtype=tensor._data.dtype)))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table).

    ``linear``, the ``conv`` variants and ``sigmoid``: 1; ``tanh``: 5/3; ``relu``:
    sqrt(2); ``leaky_relu``: sqrt(2 / (1 + negative_slope^2)) with ``param`` the slope
    (default 0.01); ``selu``: 3/4.

    Raises
    ------
    ValueError
        For an unknown nonlinearity or a non-numeric slope.

    Examples
    --------
    >>> from numbagrad import nn
    >>> round(nn.init.calculate_gain("tanh"), 4)
    1.6667
    """
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of the uniform distribution on ``[a, b)``.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.nn.init.uniform_(numbagrad.empty(3, 5), -0.1, 0.1)
    >>> bool((w.abs() <= 0.1).all())
    True
    """
    _check(tensor, "uniform_")
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of the normal distribution ``N(mean, std^2)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.normal_(numbagrad.empty(2, 2), std=0.0)
    tensor([[0., 0.],
            [0., 0.]])
    """
    _check(tensor, "normal_")
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples of ``N(mean, std^2)`` truncated to ``[a, b]``.

    PyTorch's rejection methods: where more than 30% of the normal's mass lies in
    ``[a, b]``, normals are redrawn (the whole tensor's, kept where out of range) until
    all are inside; else uniform proposals on ``[a, b]`` are accepted with probability
    ``pdf(x) / pdf(mode)``.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.nn.init.trunc_normal_(numbagrad.empty(100), std=1.0, a=-0.5, b=0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """
    _check(tensor, "trunc_normal_")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    if getattr(tensor._data, "_numbagrad_device", False):  # drawn on the device
        # the standardised bounds (beyond 40 the normal CDF is 0 or 1 in float64)
        lo_s, hi_s = (min(max((v - mean) / std, -40.0), 40.0) for v in (a, b))
        with no_grad():
            _fill_random(tensor, None, "trunc_normal", generator, lo_s, hi_s)
            return tensor.mul_(std).add_(mean).clamp_(a, b)
    g = _gen(generator)
    shape, dt = tuple(tensor.shape), tensor._data.dtype
    mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    if mass > 0.3:  # redraw the whole tensor's normals where out of [a, b] (as PyTorch)
        lo, hi = dt.type(a), dt.type(b)
        out = _draw_normal(g, shape, dt, mean, std)
        while True:
            outside = (out < lo) | (out > hi)
            if not outside.any():
                break
            out = np.where(outside, _draw_normal(g, shape, dt, mean, std), out)
        return _write(tensor, out)
    # uniform proposals on [a, b], accepted with probability pdf / pdf(mode) (as PyTorch)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_ratio(c):
        c = (c - dt.type(mean)) / dt.type(std)
        return (c * c) * dt.type(-0.5) - dt.type(log_peak)

    out = _draw_uniform(g, shape, dt, a, b)
    pending = np.log(_draw_uniform(g, shape, dt)) > log_ratio(out)
    while pending.any():
        candidates = _draw_uniform(g, shape, dt, a, b)
        out = np.where(pending, candidates, out)
        pending = pending & (np.log(_draw_uniform(g, shape, dt)) > log_ratio(candidates))
    return _write(tensor, out)


def constant_(tensor, val):
    """Fill with the constant ``val``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.constant_(numbagrad.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    _check(tensor, "constant_")
    with no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor):
    """Fill with ones.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.ones_(numbagrad.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with zeros.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.zeros_(numbagrad.empty(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.eye_(numbagrad.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    _check(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(6 / (fan_in +
    fan_out))``.

    Examples
    --------
    >>> import numbagrad, math
    >>> w = numbagrad.nn.init.xavier_uniform_(numbagrad.empty(4, 6))
    >>> bool((w.abs() <= math.sqrt(6 / 10)).all())
    True
    """
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: ``N(0, std^2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.xavier_normal_(numbagrad.empty(4, 6)).shape
    numbagrad.Size([4, 6])
    """
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``, ``gain =
    calculate_gain(nonlinearity, a)`` and ``fan`` the ``mode`` fan.

    Examples
    --------
    >>> import numbagrad, math
    >>> w = numbagrad.nn.init.kaiming_uniform_(numbagrad.empty(3, 8), a=math.sqrt(5))
    >>> bool((w.abs() <= 1 / math.sqrt(8)).all())
    True
    """
    _check(tensor, "kaiming_uniform_")
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: ``N(0, std^2)`` with ``std = gain / sqrt(fan)`` (see
    :func:`kaiming_uniform_`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.init.kaiming_normal_(numbagrad.empty(3, 8), mode="fan_out").shape
    numbagrad.Size([3, 8])
    """
    _check(tensor, "kaiming_normal_")
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix times ``gain`` (trailing dims flattened),
    from the QR decomposition of a normal matrix with the signs of ``R``'s diagonal
    fixed, as PyTorch does.

    Examples
    --------
    >>> import numbagrad
    >>> q = numbagrad.nn.init.orthogonal_(numbagrad.empty(3, 3, dtype=numbagrad.float64))
    >>> bool(numbagrad.allclose(q @ q.T, numbagrad.eye(3, dtype=numbagrad.float64)))
    True
    """
    _check(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    if getattr(tensor._data, "_numbagrad_device", False):
        # drawn and factored on the device (its generator and QR kernel), written in place

        with no_grad():
            flat = tensor.new_empty((rows, cols), dtype=_float64).normal_(generator=generator)
            if rows < cols:
                flat = flat.T
            q, r = _linalg.qr(flat)
            q = q * _diagonal(r).sign()
            if rows < cols:
                q = q.T
            tensor.copy_((gain * q).reshape(tuple(tensor.shape)))
        return tensor
    # PyTorch: ``new_empty((rows, cols)).normal_()`` in the tensor's dtype, then QR
    flat = _draw_normal(_gen(generator), (rows, cols), tensor._data.dtype)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, np.multiply(q, gain, dtype=q.dtype).reshape(tuple(tensor.shape)))
