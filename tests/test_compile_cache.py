"""An unwritable Numba compile cache (read-only site-packages, no writable HOME) must not
break numbagrad: kernels are cached in a temporary directory, with one warning
(NOTE [Compile cache fallback]). Simulated by restricting Numba's cache locators to the
``NUMBA_CACHE_DIR`` one while that variable is unset or points nowhere writable."""

import os
import subprocess
import sys

import numba
import pytest

pytestmark = pytest.mark.skipif(
    not hasattr(numba.config, "CACHE_LOCATOR_CLASSES"),
    reason="this numba has no NUMBA_CACHE_LOCATOR_CLASSES to simulate an unwritable cache",
)

SCRIPT = """
import warnings
warnings.simplefilter("always")
import numpy as np
import numbagrad as ng
with warnings.catch_warnings(record=True) as caught:
    x = ng.tensor(np.linspace(-2, 2, 10000), requires_grad=True)
    ng.tanh(x).sum().backward()
    y = ng.tensor(np.linspace(-2, 2, 10000), requires_grad=True)
    ng.sigmoid(y).sum().backward()
expected = 1 - np.tanh(np.linspace(-2, 2, 10000)) ** 2
assert np.allclose(x.grad.numpy(), expected)
msgs = [str(w.message) for w in caught if "compile cache" in str(w.message)]
print(len(msgs))
print(msgs[0] if msgs else "")
import numba
print(numba.config.CACHE_DIR)
"""


def _run(env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(env_extra, NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_no_cache_location_falls_back_to_a_temporary_directory_with_one_warning():
    count, message, cache_dir = _run({})
    assert count == "1"  # one warning for all the kernels
    assert "NUMBA_CACHE_DIR" in message and "for this process only" in message
    assert "numbagrad-numba-cache-" in cache_dir


def test_an_unwritable_numba_cache_dir_compiles_without_a_disk_cache():
    count, message, cache_dir = _run({"NUMBA_CACHE_DIR": "/proc/numbagrad-not-writable"})
    assert count == "1"
    assert "without a disk cache" in message
    assert cache_dir == "/proc/numbagrad-not-writable"  # the user's choice is kept
