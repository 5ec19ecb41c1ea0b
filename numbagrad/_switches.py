"""PyTorch's global switches scripts set at the top: deterministic algorithms
(NOTE [Deterministic algorithms] in ``kernels/determinism.py``), the float32 matmul
precision and anomaly mode (``numbagrad.autograd.anomaly_mode``)."""

from __future__ import annotations

import warnings

from numbagrad.autograd import anomaly_mode
from numbagrad.kernels import determinism

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_deterministic_debug_mode",
    "get_float32_matmul_precision",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_anomaly_enabled",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "use_deterministic_algorithms",
]


def _need_bool(fn, arg, value, pos=None):
    if not isinstance(value, bool):
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(f"{fn}(): argument '{arg}'{where} must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ops that have no deterministic implementation raise (or, with ``warn_only``,
    warn) instead of running. In numbagrad only the CUDA accumulation of float values
    into repeated indices (the backward of indexing and ``gather``, ``scatter_add``,
    ``index_add``, ``index_put`` with ``accumulate``) is nondeterministic; every CPU op is
    deterministic (NOTE [Deterministic algorithms]).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.use_deterministic_algorithms(True)
    >>> numbagrad.are_deterministic_algorithms_enabled()
    True
    >>> numbagrad.use_deterministic_algorithms(False)
    """
    _need_bool("_set_deterministic_algorithms", "mode", mode, 1)
    _need_bool("_set_deterministic_algorithms", "warn_only", warn_only)
    determinism.set_mode(mode, warn_only)


def are_deterministic_algorithms_enabled():
    """Whether :func:`use_deterministic_algorithms` is on."""
    return determinism.enabled()


def is_deterministic_algorithms_warn_only_enabled():
    """Whether :func:`use_deterministic_algorithms` is on with ``warn_only=True``."""
    return determinism.enabled() and determinism.warn_only()


def set_deterministic_debug_mode(debug_mode):
    """:func:`use_deterministic_algorithms` by level: ``"default"``/0 off, ``"warn"``/1
    on with ``warn_only``, ``"error"``/2 on."""
    if not isinstance(debug_mode, (int, str)) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        levels = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in levels:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                f"but got {debug_mode}"
            )
        debug_mode = levels[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    determinism.set_mode(debug_mode != 0, debug_mode == 1)


def get_deterministic_debug_mode():
    """The level :func:`set_deterministic_debug_mode` sets: 0 off, 1 warn, 2 error."""
    if not determinism.enabled():
        return 0
    return 1 if determinism.warn_only() else 2


_PRECISION = {"value": "highest"}


def set_float32_matmul_precision(precision):
    """Record the float32 matmul precision (``"highest"``, ``"high"`` or ``"medium"``);
    another value warns and changes nothing, as in PyTorch. The lower settings *allow*
    faster, less precise products (TF32, bfloat16 passes); numbagrad has no such kernels
    and computes float32 products in float32 under every setting."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            " setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _PRECISION["value"] = precision


def get_float32_matmul_precision():
    """The setting :func:`set_float32_matmul_precision` recorded (``"highest"`` by
    default)."""
    return _PRECISION["value"]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly mode on or off (``numbagrad.autograd.set_detect_anomaly`` without the
    context manager)."""
    _need_bool("set_anomaly_enabled", "enabled", enabled, 1)
    _need_bool("set_anomaly_enabled", "check_nan", check_nan, 2)
    anomaly_mode.set_detect_anomaly(enabled, check_nan)


is_anomaly_enabled = anomaly_mode.is_anomaly_enabled
is_anomaly_check_nan_enabled = anomaly_mode.is_anomaly_check_nan_enabled
