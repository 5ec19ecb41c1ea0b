"""NumPy ufuncs over large arrays, split across cores.

NOTE [Threaded ufuncs]
NumPy's SIMD loops for exp, log, tanh, sin, ... beat a numba loop (PyPI's llvmlite has no
SVML, so numba cannot vectorise transcendental functions), but they run on one core.
NumPy releases the GIL inside its loops, so above ``THREAD_MIN`` elements ``call`` cuts
the output into one slab per core along its first axis (or its flat index, when every
operand has the output's shape) and runs the ufunc on the slabs from a small thread pool.
Each slab is an ordinary ufunc call with ``out=``, so results are bit-identical to the
single call. Below the threshold, or with one core, it is the plain ufunc call.

NOTE [OpenMP wait policy]
Numba's ``prange`` kernels run on its OpenMP threading layer, and NumPy's matrix products on
OpenBLAS's own thread pool. By default, OpenMP threads spin for a while after each parallel
region, waiting for the next one; the OpenBLAS threads, and the other processes of a shared
machine, then wait for cores the spinning threads hold. A training step alternates between
the two (a GEMM, an elementwise kernel, a GEMM...). On the 2-core machine (numbagrad alone
in its process, the machine otherwise loaded 2-3), the 1-D conv net step of
``asv_bench/benchmarks/bench_conv.py`` took 26-96 ms with libgomp's default spinning against
17-32 ms with sleeping threads, and a 2M-element forward+backward chain 30 ms against
23-25 ms. So, unless the user has set
``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` themselves, importing numbagrad sets
``OMP_WAIT_POLICY=PASSIVE`` in the process environment, before Numba loads its OpenMP
layer (at the first parallel kernel): idle threads sleep at once. It applies to the OpenMP
runtimes loaded after that point (an OpenMP library loaded later, PyTorch's included, reads
it too: a benchmark that compares the two in one process imports PyTorch first, as
``asv_bench/benchmarks/_common.py`` does); set ``OMP_WAIT_POLICY=ACTIVE`` before importing
numbagrad for the spinning behaviour.
"""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from numbagrad.kernels.cpu import alloc

# NOTE [OpenMP wait policy]: idle OpenMP threads sleep, unless the user chose otherwise
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

__all__ = [
    "BLOCK",
    "CHEAP_THREAD_MIN",
    "EXPLICIT",
    "N_THREADS",
    "THREAD_MIN",
    "blocked",
    "call",
    "get_num_threads",
    "run_dynamic",
    "set_num_threads",
]

# Elements from which splitting pays: a thread hand-off costs ~20-50 us, a 128K-element
# exp ~0.3 ms (measured with asv_bench/benchmarks/bench_kernels.py).
THREAD_MIN = 1 << 17


def default_threads(environ=os.environ) -> int:
    """The cores this process may run on (its CPU affinity, as ``taskset`` sets it), at
    most ``NUMBA_NUM_THREADS`` and ``OMP_NUM_THREADS`` when set, and at most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity API (macOS, Windows)
        n = os.cpu_count() or 1
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS"):
        value = environ.get(var, "").split(",")[0].strip()  # OMP allows "4,2" (nested)
        if value.isdigit() and int(value) > 0:
            n = min(n, int(value))
    return max(1, min(n, 8))


N_THREADS = default_threads()
# [True] once the user called set_num_threads (it then governs BLAS too: NOTE [BLAS threads])
EXPLICIT = [False]

_pool = None


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for large elementwise work (the ufunc pool here and Numba's
    ``prange`` kernels, the latter capped by ``NUMBA_NUM_THREADS``) and for matrix products
    (NOTE [BLAS threads] in ``blas.py``)."""
    global N_THREADS, _pool
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    if _pool is not None:
        _pool.shutdown(wait=True)
        _pool = None
    N_THREADS = n
    EXPLICIT[0] = True
    import numba

    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def get_num_threads() -> int:
    """The number of threads large elementwise work uses."""
    return N_THREADS


def _get_pool():
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(
            max_workers=N_THREADS - 1, thread_name_prefix="numbagrad-ufunc", initializer=_quiet
        )
    return _pool


def _quiet():
    """Worker threads never warn on overflow/0/0 (PyTorch does not; the values are IEEE's)."""
    np.seterr(all="ignore")


def run_parts(parts):
    """Call each of ``parts`` (callables with no arguments): the first on this thread, the
    others on the pool, and wait for all of them."""
    pool = _get_pool()
    futures = [pool.submit(p) for p in parts[1:]]
    parts[0]()
    for f in futures:
        f.result()


def run_dynamic(fn, count):
    """Call ``fn(i)`` for ``i`` in ``range(count)`` on this thread and the pool's, each
    thread taking the next ``i`` when it is done with one (a thread that loses its core on
    a loaded machine takes fewer); returns when all are done. The first exception raised
    by ``fn`` is raised here, after the others stopped taking work."""
    nxt = [0]
    lock = threading.Lock()
    failed: list = []

    def worker():
        while True:
            with lock:
                i = nxt[0]
                if i >= count or failed:
                    return
                nxt[0] = i + 1
            try:
                fn(i)
            except BaseException as exc:
                with lock:
                    failed.append(exc)
                return

    n = min(N_THREADS, count)
    if n <= 1:
        for i in range(count):
            fn(i)
        return
    run_parts([worker] * n)
    if failed:
        raise failed[0]


def _slabs(n, parts):
    step = -(-n // parts)
    return [(i, min(i + step, n)) for i in range(0, n, step)]


# Arithmetic is memory-bound and ~10x cheaper per element than exp or tanh: a thread
# hand-off only pays from about a million elements (2-core machine, float64 multiply:
# 128K elements 36 us on one core vs 160 us split; 4M elements 3.0 ms vs 2.2 ms).
CHEAP_THREAD_MIN = 1 << 20
_CHEAP = frozenset(
    (
        np.add,
        np.subtract,
        np.multiply,
        np.true_divide,
        np.maximum,
        np.minimum,
        np.negative,
        np.absolute,
        np.equal,
        np.not_equal,
        np.less,
        np.less_equal,
        np.greater,
        np.greater_equal,
        np.logical_and,
        np.logical_or,
        np.logical_xor,
        np.logical_not,
        np.copysign,
    )
)

# ufuncs whose result is bool whatever their (floating) operands are
_PREDICATES = frozenset(
    (
        np.equal,
        np.not_equal,
        np.less,
        np.less_equal,
        np.greater,
        np.greater_equal,
        np.logical_and,
        np.logical_or,
        np.logical_xor,
        np.logical_not,
        np.isnan,
        np.isinf,
        np.isfinite,
        np.signbit,
    )
)


def call(ufunc, *args):
    """``ufunc(*args)``; split across cores when the result is large (NOTE above).

    Only same-dtype floating operands (arrays or Python scalars) take the threaded path.
    The result's size is the broadcast one (an outer product of two small operands is
    large), and from ``alloc.MIN_BYTES`` the result comes from the buffer cache, threaded
    or not (NOTE [Buffer cache]).
    """
    arrays = [a for a in args if type(a) is np.ndarray]
    first = arrays[0]
    shape = first.shape
    if any(a.shape != shape for a in arrays[1:]):
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    size = 1
    for s in shape:
        size *= s
    if (
        size * first.dtype.itemsize < alloc.MIN_BYTES
        or first.dtype.kind != "f"
        or any(a.dtype != first.dtype for a in arrays[1:])
    ):
        return ufunc(*args)
    out = alloc.empty(shape, np.bool_ if ufunc in _PREDICATES else first.dtype)
    if size < (CHEAP_THREAD_MIN if ufunc in _CHEAP else THREAD_MIN) or N_THREADS == 1:
        return ufunc(*args, out=out)
    if all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        flat_args = [a.reshape(-1) if type(a) is np.ndarray else a for a in args]
        flat_out = out.reshape(-1)
        jobs = [
            ([a[i:j] if type(a) is np.ndarray else a for a in flat_args], flat_out[i:j])
            for i, j in _slabs(out.size, N_THREADS)
        ]
    elif shape and shape[0] >= N_THREADS:
        nd = len(shape)

        def part(a, i, j):
            if type(a) is not np.ndarray or a.ndim < nd or a.shape[0] == 1:
                return a  # broadcast along the first axis: every slab uses all of it
            return a[i:j]

        jobs = [([part(a, i, j) for a in args], out[i:j]) for i, j in _slabs(shape[0], N_THREADS)]
    else:
        return ufunc(*args, out=out)
    run_parts([functools.partial(ufunc, *a, out=o) for a, o in jobs])
    return out


# Elements per block for ``blocked``: 16K float64 = 128 KiB per operand stays in L2.
BLOCK = 1 << 14


def blocked(fn, out, *inputs):
    """Run ``fn(out_block, *input_blocks)`` over cache-sized blocks of flat, same-shape
    contiguous arrays, the blocks of each core's slab on one thread.

    ``fn`` chains in-place NumPy calls on a block (e.g. ``exp`` then ``+= 1``): each
    block stays in cache between them, so a formula of k ufuncs streams memory once
    instead of k times, and the SIMD loops run on every core.
    """
    flat_out = out.reshape(-1)
    flat_in = [a.reshape(-1) for a in inputs]
    n = flat_out.size

    def run(i, j):
        for k in range(i, j, BLOCK):
            e = min(k + BLOCK, j)
            fn(flat_out[k:e], *[a[k:e] for a in flat_in])

    slabs = _slabs(n, N_THREADS if n >= THREAD_MIN else 1) if n else []
    if len(slabs) <= 1:
        if n:
            run(0, n)
        return out
    run_parts([functools.partial(run, i, j) for i, j in slabs])
    return out
