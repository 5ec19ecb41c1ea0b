"""Watching compilation: a compile log and a warm-up that fills Numba's cache.

``set_log_compiles(True)`` (or ``NUMBAGRAD_LOG_COMPILES=1`` in the environment) logs one
line per numbagrad kernel Numba compiles (loading one from the disk cache is silent), with
its argument types and the time it took, to the ``numbagrad.compile`` logger at WARNING level (shown
without any logging setup, as ``jax_log_compiles`` does). ``precompile()`` runs every
kernel-backed op forward and backward at the sizes that reach its serial and parallel
kernels, so a container image or a cluster job pays the compile time once, at build time
(``python -m numbagrad.warmup``).
"""

from __future__ import annotations

import logging
import os
import threading
import time

from numbagrad.kernels import KERNEL_MIN, PARALLEL_MIN

__all__ = ["precompile", "set_log_compiles"]

logger = logging.getLogger("numbagrad.compile")

_state = {"listener": None}
_lock = threading.Lock()


def _make_listener():
    from numba.core import event

    class CompileLog(event.Listener):
        """Times numba:compile events of numbagrad's kernels (nested ones included)."""

        def __init__(self):
            self._starts = threading.local()

        def on_start(self, ev):
            stack = getattr(self._starts, "stack", None)
            if stack is None:
                stack = self._starts.stack = []
            stack.append(time.perf_counter())

        def on_end(self, ev):
            stack = getattr(self._starts, "stack", None)
            start = stack.pop() if stack else None
            data = ev.data or {}
            disp = data.get("dispatcher")
            func = getattr(disp, "py_func", None)
            module = getattr(func, "__module__", "") or ""
            if start is None or not module.startswith("numbagrad."):
                return
            args = ", ".join(str(a) for a in data.get("args", ()))
            logger.warning(
                "compiled %s.%s(%s) in %.3f s",
                module.rsplit(".", 1)[-1],
                func.__name__,
                args,
                time.perf_counter() - start,
            )

    return CompileLog()


def set_log_compiles(enabled: bool = True) -> None:
    """Log each numbagrad kernel compilation (name, argument types, seconds).

    Parameters
    ----------
    enabled : bool, default True
        Turn the log on or off. ``NUMBAGRAD_LOG_COMPILES=1`` turns it on at import.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.set_log_compiles(True)   # doctest: +SKIP
    >>> numbagrad.tanh(numbagrad.randn(10_000, requires_grad=True)).sum().backward()
    ... # doctest: +SKIP
    compiled elementwise.tanh_backward(array(float32, 1d, C), ...) in 0.412 s
    """
    from numba.core import event

    with _lock:
        current = _state["listener"]
        if enabled and current is None:
            listener = _make_listener()
            event.register("numba:compile", listener)
            _state["listener"] = listener
        elif not enabled and current is not None:
            event.unregister("numba:compile", current)
            _state["listener"] = None


def _workloads(dtype, n):
    """Ops that reach every CPU kernel at ``n`` elements of ``dtype`` (forward and
    backward, accumulation included)."""
    import numbagrad as ng

    def fresh():
        return ng.linspace(-2.0, 2.0, n, dtype=dtype).requires_grad_()

    for op in (ng.tanh, ng.sigmoid, ng.sin, ng.cos, ng.tan, ng.relu, ng.erf, ng.softplus, ng.rsqrt):
        x = fresh()
        arg = x.abs() + 1 if op is ng.rsqrt else x
        (op(arg) + op(arg)).sum().backward()  # two uses: the gradients accumulate
    a, b = fresh(), fresh()
    (a * b).sum().backward()
    col, row = a.detach().reshape(-1, 1), b.detach()[:4].reshape(1, 4)  # broadcast kernels
    col + row, col - row, col * row, col / row
    m = (col * row).reshape(-1, 4)  # the sum kernels: short rows, the middle axis
    m.sum(1), m.reshape(-1, 2, 2).sum(1)
    ng.index_select(a.detach(), 0, ng.arange(min(n, 16)))


def precompile(verbose: bool = False) -> float:
    """Compile numbagrad's CPU kernels for float32 and float64 into Numba's disk cache.

    Later processes load them in milliseconds instead of compiling them on first use.
    Run it once where the cache is kept (the package's ``__pycache__`` or
    ``NUMBA_CACHE_DIR``), for instance while building a container image.

    Parameters
    ----------
    verbose : bool, default False
        Log each kernel as it is compiled (``set_log_compiles``).

    Returns
    -------
    float
        The seconds it took.
    """
    was_on = _state["listener"] is not None
    if verbose:
        set_log_compiles(True)
    start = time.perf_counter()
    try:
        import numbagrad as ng

        for dtype in (ng.float32, ng.float64):
            for n in (KERNEL_MIN, PARALLEL_MIN):  # the serial and the parallel kernels
                _workloads(dtype, n)
    finally:
        if verbose and not was_on:
            set_log_compiles(False)
    return time.perf_counter() - start


if os.environ.get("NUMBAGRAD_LOG_COMPILES", "").strip() not in ("", "0"):
    set_log_compiles(True)
