"""CUDA: what runs in the main test process (no GPU needed).

- ``import numbagrad`` does not import numba.cuda;
- without a GPU, asking for a CUDA tensor says what is missing;
- every ``@cuda.jit`` kernel in ``numbagrad/kernels/cuda/`` compiles to PTX for sm_90
  (``cuda.compile_ptx``: type errors cannot hide behind the simulator, which does no type
  checking);
- the CUDA suite ``tests/cuda/`` runs in its own process under the CUDA simulator
  (``NUMBA_ENABLE_CUDASIM=1`` must be set before numba.cuda is imported).
"""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[1]
HAVE_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
needs_numba_cuda = pytest.mark.skipif(
    not HAVE_NUMBA_CUDA, reason='numba-cuda is not installed (pip install "numbagrad[cuda]")'
)


def _run(code, env=None, timeout=120):
    e = dict(os.environ)
    e.pop("NUMBA_ENABLE_CUDASIM", None)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_import_does_not_import_numba_cuda():
    r = _run(
        "import sys, numbagrad\n"
        "x = numbagrad.ones(3, requires_grad=True)\n"
        "(x * 2).sum().backward()\n"
        "print('numba.cuda' in sys.modules, 'numbagrad.kernels.cuda.backend' in "
        "sys.modules)"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


def test_cuda_tensor_without_cuda_says_what_is_missing():
    r = _run(
        "import numbagrad\n"
        "try:\n"
        "    numbagrad.zeros(2, device='cuda')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    assert r.returncode == 0, r.stderr
    assert "CUDA is not available" in r.stdout and 'pip install "numbagrad[cuda]"' in r.stdout
    if HAVE_NUMBA_CUDA:
        assert "no CUDA GPU" in r.stdout
    else:
        assert "not installed" in r.stdout


# one representative signature per kernel (tuples of int64 stand for shapes and strides)
PTX_SCRIPT = r"""
import sys
import numba.cuda.dispatcher as dispatcher
from numba import cuda, float32, float64, int64, boolean, types, uint8
from numba.cuda.dispatcher import CUDADispatcher

class _SM90:  # device functions ask the driver for the current device's CC; no GPU here
    compute_capability = (9, 0)
dispatcher.get_current_device = lambda: _SM90()

from numbagrad.kernels.cuda import elementwise as E, reduce as R, linalg as L
from numbagrad.kernels.cuda import index as X, sort as O
from numbagrad.kernels.cuda import scan as S, join as J
from numbagrad.kernels.cuda import random as RND

T = lambda n: types.UniTuple(int64, n)
f64, f32, i64, b1 = float64[::1], float32[::1], int64[::1], boolean[::1]
SIGS = {
    "map_kernel": [(int64, int64, f64, int64, T(2), T(2), f64),
                   (int64, int64, f32, int64, T(1), T(1), b1),
                   (int64, int64, b1, int64, T(1), T(1), f32)],  # bool in: float64(x)
    "binary_kernel": [(int64, int64, f64, int64, T(2), f64, int64, T(2), T(2), f64),
                      (int64, int64, f32, int64, T(3), f32, int64, T(3), T(3), b1),
                      (int64, int64, b1, int64, T(1), b1, int64, T(1), T(1), b1)],
    "binary_scalar_kernel": [(int64, int64, f32, int64, T(2), float64, boolean, T(2), f32),
                             (int64, int64, b1, int64, T(1), float64, boolean, T(1), b1)],
    "unary_grad_kernel": [(int64, int64, f64, int64, T(2), f64, int64, T(2), T(2), f64)],
    "copy_kernel": [(int64, f64, int64, T(3), T(3), f32, int64, T(3))],
    "fill_kernel": [(int64, f64, int64, T(1), T(1), float64)],
    "accumulate_kernel": [(int64, f64, int64, T(2), f64, int64, T(2), T(2))],
    "first_out_of_range_kernel": [(int64, i64, int64, T(1), T(1), int64, i64)],
    "where_kernel": [(int64, b1, int64, T(2), f64, int64, T(2), f64, int64, T(2), T(2),
                      f64)],
    "nan_to_num_kernel": [(int64, f32, int64, T(2), T(2), float64, float64, float64, f32,
                           int64, T(2))],
    "sum_kernel": [(int64, int64, int64, int64, f64, int64, T(2), T(2), f64),
                   (int64, int64, int64, int64, f32, int64, T(3), T(3), f32)],
    "sum_int_kernel": [(int64, int64, int64, int64, i64, int64, T(2), T(2), i64),
                       (int64, int64, int64, int64, b1, int64, T(1), T(1), i64)],
    "matmul_kernel": [(int64, int64, int64, int64, f32, int64, T(1), int64, int64, f32,
                       int64, T(1), int64, int64, T(1), f32)],
}
SIGS.update({  # index.py, sort.py
    "minmax_kernel": [(int64, i64, int64, T(2), T(2), i64), (int64, b1, int64, T(1), T(1), i64)],
    "iota_kernel": [(int64, i64)],
    "adv_offset_kernel": [(int64, i64, i64, int64, T(2), T(2), int64, int64)],
    "take_kernel": [(int64, f64, i64, int64, int64, T(1), T(1), T(2), T(2), f64),
                    (int64, f32, i64, int64, int64, T(2), T(2), T(1), T(1), f32)],
    "put_kernel": [(int64, f64, i64, int64, int64, T(1), T(1), T(2), T(2), f64, int64, T(3),
                    T(3)),
                   (int64, i64, i64, int64, int64, T(1), T(1), T(1), T(1), f64, int64, T(1),
                    T(1))],
    "add_at_kernel": [(int64, f64, i64, int64, int64, T(1), T(1), T(2), T(2), f64, int64, T(3),
                       T(3)),
                      (int64, f32, i64, int64, int64, T(1), T(1), T(1), T(1), f32, int64, T(1),
                       T(1)),
                      (int64, i64, i64, int64, int64, T(1), T(1), T(1), T(1), i64, int64, T(2),
                       T(2))],
    "take_along_kernel": [(int64, f64, int64, T(2), i64, int64, T(2), T(2), int64, int64, f64),
                          (int64, f32, int64, T(1), i64, int64, T(1), T(1), int64, int64, f32)],
    "row_iota_kernel": [(int64, int64, i64)],
    "merge_pass_kernel": [(int64, int64, int64, f64, i64, f64, i64),
                          (int64, int64, int64, f32, i64, f32, i64),
                          (int64, int64, int64, i64, i64, i64, i64),
                          (int64, int64, int64, uint8[::1], i64, uint8[::1], i64)],
    "searchsorted_kernel": [(int64, f64, int64, int64, int64, f64, int64, T(2), T(2), boolean,
                             i64)],
    "dest_kernel": [(int64, i64, int64, int64, T(1), T(1), T(2), T(2), i64)],
    "reduce_at_kernel": [(int64, int64, f64, i64, i64, f64, int64, T(2), T(2)),
                         (int64, int64, f32, i64, i64, f32, int64, T(1), T(1)),
                         (int64, int64, i64, i64, i64, i64, int64, T(3), T(3))],
})
SIGS.update({  # reduce.py (products, extremes, any/all, argmax/argmin), scan.py, join.py
    "reduce_kernel": [(int64, int64, int64, f64, int64, T(2), T(2), float64, f64),
                      (int64, int64, int64, f32, int64, T(1), T(1), float64, f32)],
    "reduce_int_kernel": [(int64, int64, int64, i64, int64, T(2), T(2), int64, i64),
                          (int64, int64, int64, b1, int64, T(1), T(1), int64, b1),
                          (int64, int64, int64, f64, int64, T(2), T(2), int64, b1)],
    "argreduce_kernel": [(boolean, int64, int64, f64, int64, T(2), T(2), i64),
                         (boolean, int64, int64, f32, int64, T(1), T(1), i64)],
    "argreduce_int_kernel": [(boolean, int64, int64, i64, int64, T(2), T(2), i64)],
    "scan_kernel": [(int64, int64, int64, f64, int64, T(2), T(2), f64, int64, T(2), float64),
                    (int64, int64, int64, f32, int64, T(1), T(1), f32, int64, T(1), float64)],
    "scan_int_kernel": [(int64, int64, int64, i64, int64, T(2), T(2), i64, int64, T(2), int64),
                        (int64, int64, int64, b1, int64, T(1), T(1), i64, int64, T(1), int64)],
    "roll_kernel": [(int64, f64, int64, T(2), T(2), T(2), f64),
                    (int64, b1, int64, T(1), T(1), T(1), b1)],
})
from numba import int32, uint64  # random.py (NOTE [CUDA random numbers])
SIGS.update({
    "sample_kernel": [(int64, int64, uint64, uint64, uint64, float64, float64, int64, float64,
                       f64, int64, T(2), T(2)),
                      (int64, int64, uint64, uint64, uint64, float64, float64, int64, float64,
                       f32, int64, T(1), T(1))],
    "randint_kernel": [(int64, uint64, uint64, uint64, int64, uint64, i64, int64, T(1), T(1)),
                       (int64, uint64, uint64, uint64, int64, uint64, int32[::1], int64, T(2),
                        T(2)),
                       (int64, uint64, uint64, uint64, int64, uint64, f32, int64, T(1), T(1))],
    "categorical_kernel": [(int64, int64, int64, f64, f64, i64)],
    "poisson_kernel": [(int64, uint64, uint64, uint64, f64, int64, T(2), T(2), f64),
                       (int64, uint64, uint64, uint64, f32, int64, T(1), T(1), f32)],
    "mask_coords_kernel": [(int64, b1, int64, T(2), T(2), i64, int64, i64),  # index.py
                           (int64, b1, int64, T(1), T(1), i64, int64, i64)],
})
from numba.types import float16  # special.py (NOTE [CUDA special functions])
from numbagrad.kernels.cuda import special as SP
SIGS.update({
    "special_unary_kernel": [(int64, int64, f64, int64, T(2), T(2), f64),
                             (int64, int64, i64, int64, T(1), T(1), f32),
                             (int64, int64, b1, int64, T(1), T(1), f32)],
    "polygamma_kernel": [(int64, boolean, int64, f32, int64, T(1), T(1), f32)],
    "special_binary_kernel": [(int64, int64, f64, int64, T(2), f64, int64, T(2), T(2), int64,
                               int64, float64, f64),
                              (int64, int64, float16[::1], int64, T(1), float16[::1], int64,
                               T(1), T(1), int64, int64, float64, float16[::1])],
})
SIGS.update({  # linalg.py decompositions (NOTE [CUDA decompositions])
    "trsm_kernel": [(int64, int64, int64, f64, int64, T(1), int64, int64, T(1), boolean, boolean,
                     f64),
                    (int64, int64, int64, f32, int64, T(2), int64, int64, T(2), boolean, boolean,
                     f64)],
    "lu_kernel": [(int64, int64, f64, i64, i64)],
    "lu_permute_kernel": [(int64, int64, int64, i64, T(1), int64, T(1), f64),
                          (int64, int64, int64, i64, T(2), int64, T(2), f64)],
    "lu_det_kernel": [(int64, int64, f64, i64, f64, f64)],
    "cholesky_kernel": [(int64, int64, f64, i64)],
    "qr_kernel": [(int64, int64, int64, f64, f64)],
    "qr_q_kernel": [(int64, int64, int64, int64, f64, f64, f64)],
    "jacobi_eigh_kernel": [(int64, int64, f64, f64, f64, f64, i64, int64)],
    "jacobi_svd_kernel": [(int64, int64, int64, f64, f64, f64, f64, f64, f64, i64, int64)],
    "expm_pade_kernel": [(int64, int64, f64, f64, f64, f64, f64, f64, f64)],  # matrix_exp
})
found = {}
for mod in (E, R, L, X, O, S, J):
    for name, obj in vars(mod).items():
        if isinstance(obj, CUDADispatcher) and not obj.targetoptions.get("device"):
            found[name] = obj
for name, obj in vars(RND).items():  # random.py
    if isinstance(obj, CUDADispatcher) and not obj.targetoptions.get("device"):
        found[name] = obj
for name, obj in vars(SP).items():  # special.py
    if isinstance(obj, CUDADispatcher) and not obj.targetoptions.get("device"):
        found[name] = obj
missing = sorted(set(found) - set(SIGS))
assert not missing, f"kernels without a PTX signature in tests/test_cuda.py: {missing}"
n = 0
for name, sigs in SIGS.items():
    for sig in sigs:
        ptx, _ = cuda.compile_ptx(found[name].py_func, sig, cc=(9, 0))
        assert ".target sm_90" in ptx, name
        n += 1
print("compiled", n)
"""


@needs_numba_cuda
def test_every_kernel_compiles_to_ptx_for_sm90():
    probe = _run(
        "from numba import cuda\n"
        "def k(a):\n"
        "    a[0] = 1\n"
        "from numba import float64\n"
        "cuda.compile_ptx(k, (float64[::1],), cc=(9, 0))\n"
    )
    if probe.returncode != 0:
        pytest.skip(
            "NVVM is not available (install numba-cuda[cu13] for the NVIDIA wheels): "
            + probe.stderr.strip().splitlines()[-1]
        )
    r = _run(PTX_SCRIPT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("compiled")


@needs_numba_cuda
def test_cuda_suite_under_the_simulator():
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/cuda"],
        cwd=ROOT,
        env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
        capture_output=True,
        text=True,
        timeout=1200,  # tests/cuda takes ~6 min on an idle 2-core machine, ~8 loaded
    )
    tail = r.stdout[-4000:] + r.stderr[-2000:]
    assert r.returncode == 0, tail
    assert " passed" in r.stdout and "skipped" not in r.stdout.splitlines()[-1], tail


# The caching allocator (NOTE [CUDA memory pool]) against a fake driver: blocks are reused
# by size class, kept while a view lives, released by empty_cache, and an out-of-memory
# error releases the cache and retries once.
POOL_SCRIPT = r"""
import gc, types
from numba.cuda.cudadrv import driver as real
from numbagrad.kernels.cuda import memory

freed, allocs = [], []
class Deallocs:
    def __init__(self): self.items = []
    def add_item(self, fn, ptr, size): self.items.append((fn, ptr, size))
    def clear(self):
        for fn, ptr, size in self.items: fn(ptr)
        self.items = []
class Base:  # numba's NumbaCUDAMemoryManager, as far as the pool uses it
    def __init__(self, context=None): self.context = context; self.deallocations = Deallocs()
    def initialize(self): pass
    def _attempt_allocation(self, alloc): return alloc()
    def reset(self): pass
class Drv:
    fail = 0
    def cuMemAlloc(self, nbytes):
        if Drv.fail:
            Drv.fail -= 1
            raise RuntimeError("[CUresult.CUDA_ERROR_OUT_OF_MEMORY] out of memory")
        allocs.append(nbytes)
        return real.binding.CUdeviceptr(0x100000 * len(allocs))
    def cuMemFree(self, ptr): freed.append(int(ptr))
fake = types.SimpleNamespace(NumbaCUDAMemoryManager=Base, AutoFreePointer=real.AutoFreePointer,
                             driver=Drv())
class Ctx: pass
ctx = Ctx()
m = memory._make_manager_class(fake)(context=ctx)
m.initialize()
assert memory.installed_manager() is m
p = m.memalloc(1000)
first = int(p.device_pointer)
assert (m.allocated, m.reserved, allocs) == (1024, 1024, [1024])
v = p.view(100)
del p; gc.collect()
assert m.allocated == 1024  # a view keeps the block
del v; gc.collect()
assert (m.allocated, m.reserved) == (0, 1024)
p = m.memalloc(900)  # the same size class: the cached block, no new cuMemAlloc
assert int(p.device_pointer) == first and allocs == [1024]
assert memory.stats() == {"allocated": 1024, "reserved": 1024, "peak_allocated": 1024}
q = m.memalloc(3 << 20)
assert allocs[-1] == 3 << 20 and m.peak == 1024 + (3 << 20)
del q; gc.collect()
Drv.fail = 1  # out of memory once: the cache (q's block) is freed, then the retry succeeds
r = m.memalloc(5 << 20)
assert freed == [0x200000] and allocs[-1] == 5 << 20
del p, r; gc.collect()
memory.empty_cache()
assert sorted(freed) == [0x100000, 0x200000, 0x300000] and (m.allocated, m.reserved) == (0, 0)
t = m.memalloc(700)  # a context reset frees blocks in use too (as numba's manager does)
m.reset()
assert len(freed) == 4 and (m.allocated, m.reserved) == (0, 0)
del t; gc.collect()  # the dead block's last view goes quietly
assert len(freed) == 4
print("pool ok")
"""


@needs_numba_cuda
def test_caching_allocator_reuses_and_releases_blocks():
    r = _run(POOL_SCRIPT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "pool ok"


def test_size_classes():
    from numbagrad.kernels.cuda.memory import round_size

    assert [round_size(n) for n in (0, 1, 512, 513, (1 << 20) - 1)] == [
        512,
        512,
        512,
        1024,
        1 << 20,
    ]
    for n in (1 << 20, (1 << 20) + 1, 3_000_001, 80_000_000):
        c = round_size(n)
        assert n <= c <= 1.25 * n and round_size(c) == c


def test_fast_launch_remembers_the_compiled_kernel(monkeypatch):
    """NOTE [CUDA fast launches]: the first launch for an argument key goes through
    numba's general path; later ones call the compiled kernel it chose; keys that cannot
    be built (an unknown argument, an integer outside int64) always take the general path."""
    from numbagrad.kernels.cuda import _driver, launch

    calls = []

    class Compiled:
        def launch(self, args, grid, block, stream, sharedmem):
            calls.append(("fast", grid, block, stream, args))

    class Array:  # a device array as numba types it
        _numba_type_ = "array(float64, 1d, C)"

    class Dispatcher:
        def __init__(self):
            self.overloads = {}

        def typeof_pyval(self, a):
            return launch._arg_key(a)

        def __getitem__(self, config):
            def run(*args):
                calls.append(("general", config, args))
                self.overloads[tuple(self.typeof_pyval(a) for a in args)] = compiled

            return run

    compiled, k = Compiled(), Dispatcher()
    monkeypatch.setattr(launch, "_KERNELS", {})
    monkeypatch.setattr(_driver, "core_stream", lambda s: ("core", s))
    monkeypatch.setattr(_driver, "launch_quietly", lambda kern, g, b, s, a: kern[g, b, s](*a))
    x = Array()
    launch._run(k, (4, 1, 1), (256, 1, 1), 0, (3, x, (1, 2), 0.5, True))
    launch._run(k, (8, 1, 1), (256, 1, 1), 0, (7, x, (5, 6), 1.5, False))
    launch._run(k, (8, 1, 1), (256, 1, 1), 0, (7, x, (5, 6, 7), 1.5, False))  # new key
    launch._run(k, (8, 1, 1), (256, 1, 1), 0, (1 << 70, x, (5, 6), 1.5, False))  # no key
    launch._run(k, (8, 1, 1), (256, 1, 1), 0, (object(), x))  # no key
    assert [c[0] for c in calls] == ["general", "fast", "general", "general", "general"]
    assert calls[1] == ("fast", (8, 1, 1), (256, 1, 1), ("core", 0), (7, x, (5, 6), 1.5, False))
    assert launch._dim3(5) == (5, 1, 1) and launch._dim3((2, 3)) == (2, 3, 1)


@needs_numba_cuda
def test_a_numba_cuda_that_cannot_compile_with_this_numpy_says_how_to_fix_it():
    # numba-cuda 0.30 with NumPy 2.5 (np.row_stack removed): the first kernel compile fails
    # inside numba; numbagrad says which versions clash and what to install instead
    r = _run(
        "import sys\n"
        "sys.modules['numba.cuda.np.arrayobj'] = None  # its import fails, as with NumPy 2.5\n"
        "import numbagrad\n"
        "print(numbagrad.cuda.is_available())\n"
        "try:\n"
        "    numbagrad.zeros(2, device='cuda')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    assert r.returncode == 0, r.stderr
    first, message = r.stdout.split("\n", 1)
    assert first == "False"
    assert "cannot compile kernels with NumPy" in message and "numba.cuda.np.arrayobj" in message
    assert "numpy<2.5" in message
