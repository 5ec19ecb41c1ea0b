"""Cold start: a fresh Python process that imports the library and runs the 20-op chain once.

Times the whole process (interpreter start, import, first forward + backward) with
``subprocess``, as a user sees it. Issue 2 target: numbagrad at most 0.6 s with the numba
cache warm (PyTorch ~1.7-2.2 s); the empty-cache time (everything compiled) is reported too.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from ._common import BackendBenchmark, cached, load_backend

# The workload of bench_eager.ChainSmall written as a standalone script, as a user would.
TENSOR_SCRIPT = """\
import {mod} as t
x = t.tensor([-1.0 + 2.0 * i / 15 for i in range(16)], dtype=t.float64, requires_grad=True)
c = t.tensor([0.5 + i / 30 for i in range(16)], dtype=t.float64)
d = t.tensor([0.01 * (i - 8) for i in range(16)], dtype=t.float64)
y = x
for _ in range(4):
    y = (y * c + d).sin().exp().tanh()
y.sum().backward()
print(repr(float(x.grad.sum())))
"""

NUMPY_SCRIPT = """\
import numpy as np
x = np.array([-1.0 + 2.0 * i / 15 for i in range(16)])
c = np.array([0.5 + i / 30 for i in range(16)])
d = np.array([0.01 * (i - 8) for i in range(16)])
saved = []
y = x
for _ in range(4):
    s_in = y * c + d
    e = np.exp(np.sin(s_in))
    y = np.tanh(e)
    saved.append((s_in, e, y))
y.sum()
g = np.ones_like(y)
for s_in, e, t in reversed(saved):
    g = g * (1.0 - t * t) * e * np.cos(s_in) * c
print(repr(float(g.sum())))
"""


def cold_script(backend):
    """Source of the script the fresh process runs."""
    if backend == "numpy":
        return NUMPY_SCRIPT
    return TENSOR_SCRIPT.format(mod=backend)


def subprocess_env(mod, cache_dir=None):
    """Environment for the child: it must import the very package this process imported."""
    env = dict(os.environ)
    if mod.__name__ == "numbagrad":
        # numbagrad may be importable here only through the current directory or
        # sys.path edits (a checkout, not installed): hand its location on.
        root = os.path.dirname(os.path.dirname(os.path.abspath(mod.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    return env


def run_script(source, env):
    """Run ``source`` in a fresh interpreter; return the number it prints."""
    proc = subprocess.run(
        [sys.executable, "-c", source],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"cold-start script failed ({proc.returncode}):\n{proc.stderr}")
    return np.array(float(proc.stdout.strip().splitlines()[-1]))


class ColdStart(BackendBenchmark):
    """Fresh process: import + first 20-op chain forward/backward, numba cache warm.

    ``setup`` runs the script once, which fills numba's cache (``cache=True`` kernels).
    """

    number = 1
    repeat = (3, 5, 60.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 600.0

    def build_tensor(self, mod):
        source = cold_script(mod.__name__)
        env = subprocess_env(mod)
        return lambda: run_script(source, env)

    def build_numpy(self, np_):
        source = cold_script("numpy")
        env = dict(os.environ)
        return lambda: run_script(source, env)

    def time_import_and_chain(self, backend):
        """Wall time of the whole fresh process."""
        return self.run()


class ColdStartEmptyCache:
    """Fresh numbagrad process with an empty numba cache: everything is compiled.

    Each sample points ``NUMBA_CACHE_DIR`` at a new empty directory.
    """

    params = [["numbagrad"]]
    param_names = ["backend"]
    number = 1
    repeat = (1, 3, 120.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 900.0

    def setup(self, backend):
        self.mod = cached(("ColdStartEmptyCache", backend), lambda: self._warm(backend))
        self.source = cold_script(backend)
        self.cache_dir = tempfile.mkdtemp(prefix="numbagrad-cold-")

    def _warm(self, backend):
        mod = load_backend(backend)
        # One throwaway run so that the OS file cache holds numba, llvmlite and the
        # package sources: the samples then measure compilation, not disk reads.
        with tempfile.TemporaryDirectory(prefix="numbagrad-cold-") as tmp:
            run_script(cold_script(backend), subprocess_env(mod, tmp))
        return mod

    def teardown(self, backend):
        # asv calls teardown even when setup skipped (raised before making the directory).
        cache_dir = getattr(self, "cache_dir", None)
        if cache_dir is not None:
            shutil.rmtree(cache_dir, ignore_errors=True)

    def run(self):
        """Run the script once against an empty cache directory; return its result."""
        if os.listdir(self.cache_dir):
            # An asv that runs setup once per process would hand us a used directory.
            shutil.rmtree(self.cache_dir, ignore_errors=True)
            self.cache_dir = tempfile.mkdtemp(prefix="numbagrad-cold-")
        return run_script(self.source, subprocess_env(self.mod, self.cache_dir))

    def time_import_and_chain(self, backend):
        """Wall time of the whole fresh process, compiling every kernel it uses."""
        return self.run()
