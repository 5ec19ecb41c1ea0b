"""Anomaly detection for the backward pass (``torch.autograd.anomaly_mode``).

While anomaly mode is on, every graph node records the stack of the forward call that made
it, and the engine checks what each backward rule returns: a rule whose gradient holds NaN
raises ``RuntimeError: Function 'MulBackward0' returned nan values in its 0th output.``,
after warning with the forward traceback of that node (NOTE [Anomaly mode] in
``numbagrad._core.graph``). Errors raised inside a rule are likewise preceded by that
warning. Off (the default), it costs one flag check per ``backward`` call.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from numbagrad._core.extension import RECORDING

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_detect_anomaly",
]


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on."""
    return RECORDING.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks backward results for NaN (True unless turned off)."""
    return RECORDING.check_nan


def _set(mode, check_nan):
    RECORDING.set_anomaly(mode, check_nan)  # built-in nodes get stamped (NOTE [Recording options])


class detect_anomaly:
    """Context manager and decorator turning anomaly mode on
    (``torch.autograd.detect_anomaly``).

    Parameters
    ----------
    check_nan : bool, default True
        Raise when a backward rule returns NaN.

    Examples
    --------
    >>> import warnings, numbagrad
    >>> x = numbagrad.tensor([0.0, 1.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with numbagrad.autograd.detect_anomaly():
    ...         y = (x.sqrt() * 0).sum()
    ...         try:
    ...             y.backward()
    ...         except RuntimeError as e:
    ...             print(e)
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = None
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        self.prev = (RECORDING.anomaly, RECORDING.check_nan)
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly mode on or off (``torch.autograd.set_detect_anomaly``): takes effect
    when called, and, used as a context manager, restores the previous mode on exit.

    Parameters
    ----------
    mode : bool
    check_nan : bool, default True

    Examples
    --------
    >>> import numbagrad
    >>> _ = numbagrad.autograd.set_detect_anomaly(True)
    >>> numbagrad.autograd.is_anomaly_enabled()
    True
    >>> _ = numbagrad.autograd.set_detect_anomaly(False)
    """

    def __init__(self, mode, check_nan=True):
        self.prev = (RECORDING.anomaly, RECORDING.check_nan)
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


def _warn_trace(node):
    """Warn with the forward traceback recorded on ``node`` (as PyTorch does first)."""
    trace = node.__dict__.get("_anomaly_trace") if hasattr(node, "__dict__") else None
    if trace is None:
        msg = (
            f"Error detected in {node.name()}. No forward pass information available. "
            "Enable detect anomaly during forward pass for more information."
        )
    else:
        msg = (
            f"Error detected in {node.name()}. Traceback of forward call that caused the "
            "error:\n" + "".join(trace)
        )
    warnings.warn(msg, stacklevel=2)


def checked_path(path):
    """The engine's path object with every rule run checked (anomaly mode)."""
    base_run = path.run
    arrays = path.arrays

    def run(node, buf):
        try:
            out = base_run(node, buf)
        except Exception:
            _warn_trace(node)
            raise
        if RECORDING.check_nan:
            for i, g in enumerate(out):
                if g is None:
                    continue
                try:
                    a = g if arrays else g._data
                except Exception:  # a transform's tracer: no values to check
                    continue
                a = np.asarray(a)
                if a.dtype.kind == "f" and np.isnan(a).any():
                    _warn_trace(node)
                    raise RuntimeError(
                        f"Function '{node.name()}' returned nan values in its {i}th output."
                    )
        return out

    return type(path.__name__ + "Anomaly", (path,), {"run": staticmethod(run)})
