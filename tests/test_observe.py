"""The compile log (set_log_compiles / NUMBAGRAD_LOG_COMPILES) and precompile()."""

import logging
import os
import subprocess
import sys

import numbagrad

RUN_TANH = (
    "import numbagrad as ng; x = ng.linspace(-1, 1, 10000, dtype=ng.float64)"
    ".requires_grad_(); ng.tanh(x).sum().backward(); print('ok')"
)


def _python(code_or_args, cache_dir, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "NUMBAGRAD_"))}
    e.update(NUMBA_CACHE_DIR=str(cache_dir), **env)
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    out = subprocess.run(
        [sys.executable, *args], env=e, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return out


def test_log_compiles_from_the_environment_names_kernel_types_and_time(tmp_path):
    out = _python(RUN_TANH, tmp_path, NUMBAGRAD_LOG_COMPILES="1")
    assert "compiled elementwise.tanh_backward(array(float64, 1d, C)" in out.stderr
    assert " s\n" in out.stderr
    # the second process loads the kernel from the cache: nothing is compiled
    again = _python(RUN_TANH, tmp_path, NUMBAGRAD_LOG_COMPILES="1")
    assert "compiled elementwise.tanh_backward" not in again.stderr


def test_precompile_fills_the_cache(tmp_path):
    out = _python(["-m", "numbagrad.warmup", "-q"], tmp_path)
    assert "numbagrad kernels compiled in" in out.stdout and str(tmp_path) in out.stdout
    again = _python(RUN_TANH.replace("float64", "float32"), tmp_path, NUMBAGRAD_LOG_COMPILES="1")
    assert "compiled" not in again.stderr  # every kernel it needs came from the cache


def test_set_log_compiles_toggles_a_listener(caplog):
    from numbagrad import _observe

    numbagrad.set_log_compiles(True)
    try:
        assert _observe._state["listener"] is not None
        numbagrad.set_log_compiles(True)  # idempotent
        import numba

        @numba.njit
        def not_ours(x):
            return x + 1

        with caplog.at_level(logging.WARNING, logger="numbagrad.compile"):
            not_ours(1)
        assert not caplog.records  # only numbagrad's kernels are logged
    finally:
        numbagrad.set_log_compiles(False)
    assert _observe._state["listener"] is None
