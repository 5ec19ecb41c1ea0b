"""numbagrad.distributed on MPI: the 2-rank checks of ``_mpi_worker.py`` (run once under
``mpiexec -n 2``, one test per check) and the single-process errors, in this process.

The MPI tests skip, saying why, when mpi4py (``pip install mpi4py mpich``) is missing;
``.ci/run`` installs it, so CI runs them.
"""

import datetime
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import numbagrad
import numbagrad.distributed as dist

HERE = Path(__file__).parent
HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None
NO_MPI = "mpi4py is not installed (pip install mpi4py mpich; .ci/run installs them)"
needs_mpi = pytest.mark.skipif(not HAVE_MPI4PY, reason=NO_MPI)


def _worker_cases():
    spec = importlib.util.spec_from_file_location("_mpi_worker", HERE / "_mpi_worker.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.CASES)


CASES = _worker_cases()


def _mpiexec():
    """The mpiexec beside this interpreter (the mpich wheel's), else the one on PATH."""
    exe = Path(sys.executable).with_name("mpiexec")
    return str(exe) if exe.exists() else shutil.which("mpiexec")


def _clean_env():
    """The environment for mpiexec, without the variables of an enclosing MPI job."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PMI_", "PMIX_", "HYDRA_", "HYDI_", "OMPI_"))
        and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")
    }
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env["NUMBA_NUM_THREADS"] = "1"  # two ranks on a 2-core machine
    return env


@pytest.fixture(scope="module")
def mpi_results(tmp_path_factory):
    if not HAVE_MPI4PY:
        pytest.skip(NO_MPI)
    exe = _mpiexec()
    if exe is None:
        pytest.skip("mpi4py is installed but no mpiexec was found (pip install mpich)")
    out = tmp_path_factory.mktemp("mpi") / "results.json"
    try:
        proc = subprocess.run(
            [exe, "-n", "2", sys.executable, str(HERE / "_mpi_worker.py"), str(out)],
            capture_output=True,
            text=True,
            timeout=240,
            env=_clean_env(),
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpiexec -n 2 _mpi_worker.py hung (killed after 240 s): {e.stderr}")
    if proc.returncode != 0 or not out.exists():
        pytest.fail(
            f"mpiexec -n 2 _mpi_worker.py failed ({proc.returncode}):\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return json.loads(out.read_text())


@pytest.mark.parametrize("name", CASES)
def test_two_ranks(mpi_results, name):
    res = mpi_results[name]
    if all(r.startswith("skip:") for r in res):
        pytest.skip(res[0][5:].strip())
    for rank, r in enumerate(res):
        assert r == "ok", f"rank {rank}:\n{r}"


# -- one process ----------------------------------------------------------------------------


@pytest.fixture
def clean_dist(monkeypatch):
    """No default group before or after; no launcher variables."""
    for k in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(k, raising=False)
    assert not dist.is_initialized()
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def test_not_imported_by_numbagrad():
    code = (
        "import sys, numbagrad, numbagrad.distributed; "
        "print('mpi4py' in sys.modules, 'dask' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["False", "False"]


def test_before_init(clean_dist):
    msg = "Default process group has not been initialized"
    t = numbagrad.ones(2)
    for call in (
        lambda: dist.all_reduce(t),
        lambda: dist.get_rank(),
        lambda: dist.get_world_size(),
        lambda: dist.barrier(),
        lambda: dist.broadcast(t, src=0),
        lambda: dist.get_backend(),
        lambda: dist.new_group(),
        lambda: dist.destroy_process_group(),
        lambda: dist.DataParallel([numbagrad.ones(2, requires_grad=True)]),
    ):
        with pytest.raises(ValueError, match=msg):
            call()
    assert dist.is_initialized() is False


def test_backend_errors(clean_dist):
    with pytest.raises(NotImplementedError, match="pip install mpi4py mpich"):
        dist.init_process_group("gloo")
    with pytest.raises(NotImplementedError, match="nccl"):
        dist.init_process_group(backend="nccl")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    with pytest.raises(NotImplementedError, match="mpiexec"):
        dist.init_process_group("mpi", init_method="tcp://127.0.0.1:23456")
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("mpi", timeout="10s")
    assert not dist.is_gloo_available() and not dist.is_nccl_available()


def test_missing_mpi4py_message(clean_dist, monkeypatch):
    from numbagrad.distributed import _process_group as P

    monkeypatch.setattr(P, "_MPI", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # an import of it now fails
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", None)
    assert dist.is_available() is False
    with pytest.raises(RuntimeError, match="pip install mpi4py mpich"):
        dist.init_process_group("mpi")


@needs_mpi
def test_single_process_world(clean_dist):
    dist.init_process_group(timeout=datetime.timedelta(seconds=30))
    assert dist.is_available() and dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("mpi")
    t = numbagrad.tensor([1.0, 2.0])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [1.0, 2.0]
    dist.destroy_process_group()
    assert not dist.is_initialized()
    dist.init_process_group("MPI", init_method="env://")  # again, after destroy
    dist.destroy_process_group()


@needs_mpi
def test_launcher_environment_checked(clean_dist, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="mpiexec -n 2"):
        dist.init_process_group("mpi")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(RuntimeError, match="RANK environment variable is 1"):
        dist.init_process_group("mpi")
    monkeypatch.setenv("RANK", "0")
    dist.init_process_group("mpi")  # consistent with MPI's world
    dist.destroy_process_group()
    with pytest.raises(RuntimeError, match="world_size is 4"):
        dist.init_process_group("mpi", world_size=4, rank=0)
    monkeypatch.setenv("RANK", "zero")
    with pytest.raises(ValueError, match="not an integer"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


@needs_mpi
def test_transform_values_refused(clean_dist):
    dist.init_process_group("mpi")

    def f(x):
        dist.all_reduce(x)
        return x.sum()

    with pytest.raises(RuntimeError, match="inside a transform"):
        numbagrad.func.grad(f)(numbagrad.ones(2))
