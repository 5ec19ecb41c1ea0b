"""Shared helpers: backend loading, per-process state cache, tensor construction.

Nothing here imports numbagrad or torch at module import time, so ``asv check`` can
discover the benchmarks on a machine where either is missing or broken.
"""

import importlib

import numpy as np

BACKENDS = ["numbagrad", "numpy", "torch"]

# NOTE [state cache]
# asv-runner >= 0.3 re-runs ``setup`` before every timed sample (asv#966), and
# ``run_ratios.py`` interleaves backends. Building inputs and warming the JIT once per
# process, then handing out the same state, keeps ``setup`` cheap on re-runs. Every
# workload is idempotent (it clears ``.grad`` before its backward), so reusing the
# state cannot change what is measured.
_STATE = {}


def cached(key, build):
    """Return the state stored under ``key``, building (and warming) it on first use."""
    try:
        return _STATE[key]
    except KeyError:
        state = build()
        _STATE[key] = state
        return state


def clear_cache():
    """Drop all cached states (``run_ratios.py`` calls this between workloads)."""
    _STATE.clear()


def load_backend(name):
    """Import a backend module, or raise ``NotImplementedError`` (asv's skip) saying why.

    Parameters
    ----------
    name : {'numbagrad', 'numpy', 'torch'}

    Returns
    -------
    module
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}")
    if name == "numbagrad":
        # PyTorch first, when it is there: importing numbagrad sets OMP_WAIT_POLICY=PASSIVE
        # where the user set none (NOTE [OpenMP wait policy]), and an OpenMP runtime loaded
        # after that (PyTorch's) would read it too; the comparison measures PyTorch as its
        # users run it
        try:
            importlib.import_module("torch")
        except Exception:
            pass
    try:
        mod = importlib.import_module(name)
    except Exception as exc:  # an import can fail with anything, not only ImportError
        raise NotImplementedError(f"{name} not importable: {type(exc).__name__}: {exc}") from exc
    # A bare ``numbagrad/`` directory without ``__init__.py`` imports as a namespace
    # package: importable, but with none of the API.
    if getattr(mod, "__file__", None) is None:
        raise NotImplementedError(f"{name} is an empty namespace package (no __init__.py)")
    return mod


def leaf(mod, arr):
    """A leaf tensor of ``mod`` holding a copy of ``arr`` that requires grad."""
    if mod is np:
        return arr.copy()
    return mod.from_numpy(arr.copy()).requires_grad_(True)


def const(mod, arr):
    """A tensor of ``mod`` holding a copy of ``arr`` that does not require grad."""
    if mod is np:
        return arr.copy()
    return mod.from_numpy(arr.copy())


def to_numpy(value):
    """Convert a backend result (array, tensor, or a tuple of them) to NumPy arrays."""
    if isinstance(value, (tuple, list)):
        return [to_numpy(v) for v in value]
    if isinstance(value, np.ndarray):
        return value
    if value is None:
        return None
    return np.array(value.detach().numpy(), copy=True)


def rng(seed=0):
    """The one random stream all backends draw their inputs from."""
    return np.random.default_rng(seed)


class BackendBenchmark:
    """Base of the workload classes: one ``backend`` parameter, state built once.

    Subclasses define ``build_numpy(np, *rest)`` and ``build_tensor(mod, *rest)`` (used
    for both numbagrad and torch, whose APIs match); each returns a zero-argument
    callable that runs the workload once and returns the gradients it computed. The
    ``time_*`` methods return that value too: asv ignores it, ``run_ratios.py`` compares
    it across backends so that a fast but wrong result cannot pass unnoticed.
    """

    params = [BACKENDS]
    param_names = ["backend"]

    def setup(self, *params):
        key = (type(self).__name__, *params)
        self.run = cached(key, lambda: self._prepare(*params))

    def _prepare(self, backend, *rest):
        mod = load_backend(backend)
        if backend == "numpy":
            run = self.build_numpy(mod, *rest)
        else:
            run = self.build_tensor(mod, *rest)
        # Warm-up: JIT compilation (numbagrad), lazy initialisation (torch), page faults.
        run()
        return run
