"""numbagrad on ``dask.distributed`` workers: tensors, a module-level Function with Numba
kernels, and their gradients pickle to a 2-process ``LocalCluster`` and back; each worker
compiles the kernels once; ``examples/dask_sweep.py`` runs at a toy size.

Skipped, saying why, when dask.distributed is missing (``pip install "dask[distributed]"``;
``.ci/run`` installs it).
"""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import numbagrad
from numbagrad.autograd.function import once_differentiable

NO_DASK = 'dask.distributed is not installed (pip install "dask[distributed]")'
distributed = pytest.importorskip("distributed", reason=NO_DASK)
if not hasattr(distributed, "LocalCluster"):
    # not the package: pytest puts tests/ on sys.path, where this folder, tests/distributed,
    # imports as an empty namespace package when dask.distributed is not installed
    pytest.skip(NO_DASK, allow_module_level=True)
cloudpickle = pytest.importorskip("cloudpickle")

ROOT = Path(__file__).resolve().parents[2]


@numba.njit(cache=True)
def scaled_square_forward(x, scale, out):
    for i in range(x.size):
        out[i] = scale * x[i] * x[i]


@numba.njit(cache=True)
def scaled_square_backward(x, scale, g, out):
    for i in range(x.size):
        out[i] = 2.0 * scale * x[i] * g[i]


class ScaledSquare(numbagrad.autograd.Function):
    """``scale * x**2`` with Numba kernels for forward and backward."""

    @staticmethod
    def forward(x, scale):
        xa = x.contiguous().numpy().reshape(-1)
        out = np.empty_like(xa)
        scaled_square_forward(xa, scale, out)
        return numbagrad.from_numpy(out.reshape(x.shape))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        xa = x.contiguous().numpy().reshape(-1)
        out = np.empty_like(xa)
        scaled_square_backward(xa, ctx.scale, g.contiguous().numpy().reshape(-1), out)
        return numbagrad.from_numpy(out.reshape(x.shape)), None


def task(x, scale):
    """One task: forward and backward through the Function on a worker."""
    fresh = not scaled_square_forward.signatures  # this process has not compiled it yet
    x = x.detach().requires_grad_(True)
    y = ScaledSquare.apply(x, scale).sum()
    y.backward()
    return {"value": y.detach(), "grad": x.grad, "pid": os.getpid(), "fresh": fresh}


def test_pickle_roundtrip_locally():
    x = numbagrad.arange(6.0).reshape(2, 3)
    for obj in (x, x.t(), numbagrad.tensor([1, 2]), x.requires_grad_(True)):
        y = cloudpickle.loads(cloudpickle.dumps(obj))
        assert y.shape == obj.shape and y.dtype == obj.dtype
        assert y.requires_grad == obj.requires_grad
        np.testing.assert_array_equal(y.detach().numpy(), obj.detach().numpy())
    f = pickle.loads(pickle.dumps(ScaledSquare))  # by reference: the same class
    assert f is ScaledSquare


def test_local_cluster_runs_functions_and_reuses_kernels():
    # the workers cannot import this test module: ship its functions by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            client.wait_for_workers(2, timeout=120)
            xs = [numbagrad.linspace(-1.0, 1.0, 5 + i, dtype=numbagrad.float64) for i in range(12)]
            futures = client.map(task, xs, [0.5 + i for i in range(12)], pure=False)
            results = client.gather(futures, errors="raise")
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    for i, (x, r) in enumerate(zip(xs, results)):
        s = 0.5 + i
        np.testing.assert_allclose(float(r["value"]), s * float((x * x).sum()), rtol=1e-14)
        np.testing.assert_allclose(r["grad"].numpy(), 2 * s * x.numpy(), rtol=1e-14)
    pids = {r["pid"] for r in results}
    assert os.getpid() not in pids
    # each worker compiled (or loaded from the cache) the kernel for its first task only
    for pid in pids:
        fresh = [r["fresh"] for r in results if r["pid"] == pid]
        assert sum(fresh) <= 1, (pid, fresh)


def test_dask_sweep_example_runs():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "dask_sweep.py"),
            "--starts",
            "4",
            "--steps",
            "200",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "relaxations: serial" in proc.stdout
    assert "once per worker at most" in proc.stdout
