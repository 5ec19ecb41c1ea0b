"""Matrix products through NumPy's BLAS, with numbagrad choosing the threads.

NOTE [BLAS threads]
NumPy's wheels bundle OpenBLAS (``scipy-openblas``), built with its own pthreads pool: a
GEMM above about 262K multiply-adds (``m * n * k``) runs on every core, the threads
handing the packed panels of the operands to each other many times per call, each
waiting (spinning, then yielding) for the others. On the shared 2-core machine, each
shape in a process of its own, float32, best and median of 11-15 calls with the machine
loaded 8-40 (other engineers' benchmarks and test runs):

====================================  ==================  ================  ==============
product (m x k @ k x n)               BLAS 1 thread       BLAS 2 threads    2 halves here
====================================  ==================  ================  ==============
conv 32->64 3x3 fwd, 64x288 @ 36864   19-42 / 47-55       42-80 / 72-105    18-63 / 46-71
its weight grad, 64x36864 @ 288       47-53 / 52-69       110-310 / 360+    42-67 / 46-84
its input grad, 288x64 @ 36864        39-69 / 66-85       73-108 / 104+     50-94 / 52-116
conv 1->32 weight grad, 32x43264 @ 9  0.85-1.1 / 0.9-1.3  0.7-13 / 0.8-32   1.5 / 1.8-7.5
linear 9216->128 fwd, 64x9216 @ 128   2.1-2.3 / 6-10      1.1-1.7 / 1.3-51  4.2-6.4 / 8-14
conv1d 32->32 k5 fwd, 32x160 @ 8192   1.1-1.4 / 1.4-3     0.6-0.8 / 1-32    1.4-1.6 / 4-5
====================================  ==================  ================  ==============

(``best / median`` in ms.) Two BLAS threads lose by 2-30x in the median and often in the
best: when the machine is loaded, one thread of the pair loses its core and the other
spins at each hand-off, and a long reduction over few outputs (a weight gradient: the
conv 1->32 one runs 13 times slower) gives each thread little work between hand-offs.
One thread never loses badly. The product split into independent pieces, each a
one-thread BLAS call on a thread of numbagrad's pool (``threads.run_parts``; NumPy
releases the GIL), synchronises once per call instead of once per panel and is as fast as
one thread when the second core is busy and up to twice as fast when it is free: this is
PyTorch's approach too (``at::parallel_for`` over independent chunks).

So ``matmul`` here runs every product above OpenBLAS's own one-thread limit
(``BLAS_SINGLE``) with BLAS at one thread and, from ``SPLIT_MIN`` multiply-adds (about
0.25 ms on one core) with a dimension long enough, cut along the longer of ``m`` and
``n`` (never ``k``: every entry sums the same terms in the same order as in one call)
into pieces that the calling thread and the pool's threads take one by one
(``threads.run_dynamic``: a thread that loses its core takes fewer); a batch of products
(the same batch dims, or one operand a single matrix: a 1x1 convolution, a grouped one) is
cut into pieces of whole items instead. BLAS's thread count goes back to what it was once
no such product runs, so NumPy code beside numbagrad keeps its own setting.
``numbagrad.set_num_threads`` sets the number of pieces run at once.

The user's choice wins: with ``OPENBLAS_NUM_THREADS`` or ``GOTO_NUM_THREADS`` set (and no
later ``numbagrad.set_num_threads``), or a BLAS that is not OpenBLAS (MKL, Accelerate), or
no OpenBLAS found among the process's libraries, the products are plain ``np.matmul``
calls. ``OMP_NUM_THREADS`` caps numbagrad's thread count (``threads.default_threads``), so
``OMP_NUM_THREADS=1`` runs every product on one thread either way.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading

import numpy as np

from numbagrad.kernels.cpu import alloc, threads

__all__ = [
    "BLAS_SINGLE",
    "SPLIT_MIN",
    "blas_threads_governed",
    "matmul",
]

# OpenBLAS runs a GEMM with m * n * k at most this on the calling thread anyway
# (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c)
BLAS_SINGLE = 65536 * 4
# multiply-adds from which a product is cut into pieces (8.4M: ~0.25 ms on one core of the
# 2-core machine, ten times a hand-off to the pool)
SPLIT_MIN = 1 << 23
# the shortest piece along the cut dimension, and pieces per thread (more pieces: a thread
# that loses its core holds back less of the work; fewer: less repacking of the operand
# every piece shares). Each piece packs all of the shared operand (``m x k`` when ``n`` is
# cut), about as costly per element as a few dozen multiply-adds: with 32-wide pieces the
# ``linear`` forward above took 2.9-7.9 ms, with 128-wide ones (so not cut) 2.1-2.3 ms, and
# conv1d's 32x8192 @ 160 weight gradient 3.8-5.7 against 1.7-1.9 ms (load 24-25)
PIECE_MIN = 128
PIECES_PER_THREAD = 2

_USER_ENV = any(os.environ.get(v, "").strip() for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS"))

_SYMBOLS = (  # (set, get): scipy-openblas's prefixed ILP64 / LP64 names, then plain OpenBLAS
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)

_api: list = []  # [(set, get)] once looked up; [None] when there is no OpenBLAS to control
_lock = threading.Lock()
_active = [0, 1]  # products running with BLAS at one thread, BLAS's thread count before them


def _candidates():
    """Paths of the OpenBLAS libraries loaded in this process (Linux), then those bundled
    next to NumPy (the wheels' ``numpy.libs`` or ``numpy/.dylibs``)."""
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").split(" ")[-1]
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    root = os.path.dirname(np.__file__)
    for pattern in ("../numpy.libs/*openblas*", ".dylibs/*openblas*"):
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            if path not in paths:
                paths.append(path)
    return paths


def _lookup():
    """``(set_num_threads, get_num_threads)`` of NumPy's OpenBLAS, or None."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _SYMBOLS:
            setter = getattr(lib, set_name, None)
            getter = getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes = [ctypes.c_int]
                setter.restype = None
                getter.argtypes = []
                getter.restype = ctypes.c_int
                return setter, getter
    return None


def _blas():
    if not _api:
        try:
            found = _lookup()
        except Exception:  # a library that cannot be inspected: leave BLAS alone
            found = None
        _api.append(found)
    return _api[0]


def blas_threads_governed() -> bool:
    """Whether numbagrad chooses the BLAS threads of its products (NOTE [BLAS threads]):
    OpenBLAS was found and the user set neither ``OPENBLAS_NUM_THREADS`` nor
    ``GOTO_NUM_THREADS``, or called ``numbagrad.set_num_threads``."""
    return (threads.EXPLICIT[0] or not _USER_ENV) and _blas() is not None


def _enter():
    setter, getter = _api[0]
    with _lock:
        if _active[0] == 0:
            before = getter()
            _active[1] = before
            if before != 1:
                setter(1)
        _active[0] += 1


def _leave():
    setter, _ = _api[0]
    with _lock:
        _active[0] -= 1
        if _active[0] == 0 and _active[1] != 1:
            setter(_active[1])


def _pieces(length, parts):
    """``(start, stop)`` pieces of ``range(length)``: about ``parts`` of them, each at least
    ``PIECE_MIN`` long and a multiple of 16 (the GEMM kernels' tile; but the last)."""
    step = max(PIECE_MIN, -(-length // parts))
    step = -(-step // 16) * 16
    return [(i, min(i + step, length)) for i in range(0, length, step)]


def _split_2d(a, b, out):
    m, n = out.shape
    nt = threads.N_THREADS
    if n >= m:
        pieces = _pieces(n, nt * PIECES_PER_THREAD)

        def run(p):
            i, j = pieces[p]
            np.matmul(a, b[:, i:j], out=out[:, i:j])

    else:
        pieces = _pieces(m, nt * PIECES_PER_THREAD)

        def run(p):
            i, j = pieces[p]
            np.matmul(a[i:j], b, out=out[i:j])

    if len(pieces) < 2:
        np.matmul(a, b, out=out)
    else:
        threads.run_dynamic(run, len(pieces))
    return out


def _stack(x, batch, nb):
    """``x`` as ``(nb, rows, cols)`` without a copy when its batch dims are ``batch``; a 2-D
    ``x`` (the same matrix for every item) as it is; None when neither works."""
    if x.ndim == 2:
        return x
    if tuple(x.shape[:-2]) != tuple(batch):
        return None  # a broadcast batch dim
    try:
        return np.reshape(x, (nb, *x.shape[-2:]), copy=False)
    except ValueError:  # batch dims that do not fold without a copy
        return None


def _split_batch(a, b, out, batch):
    """The batch of products cut into pieces of whole items (each piece one ``np.matmul``),
    or None when an operand's batch dims do not fold into one."""
    nb = out.size // (out.shape[-2] * out.shape[-1])
    a3, b3 = _stack(a, batch, nb), _stack(b, batch, nb)
    if a3 is None or b3 is None or nb < 2:
        return None
    out3 = out.reshape(nb, *out.shape[-2:])
    step = -(-nb // (threads.N_THREADS * PIECES_PER_THREAD))
    pieces = [(i, min(i + step, nb)) for i in range(0, nb, step)]

    def run(p):
        i, j = pieces[p]
        np.matmul(a3 if a3.ndim == 2 else a3[i:j], b3 if b3.ndim == 2 else b3[i:j], out=out3[i:j])

    threads.run_dynamic(run, len(pieces))
    return out


def matmul(a, b):
    """``np.matmul(a, b)`` for arrays of one dtype, BLAS's threads chosen by NOTE [BLAS
    threads]: plain ``np.matmul`` for small products, vectors, integer and mixed dtypes."""
    if (
        a.ndim < 2
        or b.ndim < 2
        or a.dtype != b.dtype
        or a.dtype.kind not in "fc"
        or a.shape[-1] != b.shape[-2]
    ):
        return np.matmul(a, b)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    work = m * k * n
    if work <= BLAS_SINGLE or not blas_threads_governed():
        return np.matmul(a, b)
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return np.matmul(a, b)  # (NumPy's own error)
    total = work
    for s in batch:
        total *= s
    out = alloc.empty((*batch, m, n), a.dtype)
    _enter()
    try:
        if threads.N_THREADS == 1 or total < SPLIT_MIN:
            return np.matmul(a, b, out=out)
        if not batch:
            if max(m, n) < 2 * PIECE_MIN:
                return np.matmul(a, b, out=out)
            return _split_2d(a, b, out)
        done = _split_batch(a, b, out, batch)
        return done if done is not None else np.matmul(a, b, out=out)
    finally:
        _leave()
