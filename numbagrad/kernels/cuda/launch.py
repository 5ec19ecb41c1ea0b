"""The one launch helper of the CUDA backend (docs/developer.rst, design decisions, 5).

NOTE [CUDA launches]
Every kernel in ``kernels/cuda/`` is a grid-stride loop (``for i in range(cuda.grid(1), n,
cuda.gridsize(1))``), so any grid covers any size. On a GPU an elementwise launch is
``THREADS`` (256) threads per block and enough blocks to give each thread one element, capped
at ``BLOCKS_PER_SM`` blocks per multiprocessor (a full H100 is 132 x 8 x 256 threads; past
that the grid-stride loop takes over). The configuration is computed here, not by
``kernel.forall(n)``: forall re-specialises the kernel from the argument types and asks the
occupancy API on every call, host work that cost more than the kernels themselves on an
H100 (measured: docs/gpu.rst, "Measured on hardware"). 256 threads fit any kernel's
registers (255 per thread at most, 64K per multiprocessor). The simulator runs each
simulated thread as a Python thread (0.1-0.3 ms each), so there a launch is 2 blocks of 16
threads and the grid-stride loops do the rest. The stream is the one
``numbagrad.cuda.stream(...)`` made current, else the default stream.
"""

from __future__ import annotations

from numbagrad.kernels.cuda import _driver

__all__ = ["current_stream", "launch", "launch_blocks"]

# the stack of streams made current by ``numbagrad.cuda.stream(...)`` (numba streams)
STREAMS: list = []

# the simulator's launch shape and the GPU's (NOTE [CUDA launches])
SIM_BLOCKS, SIM_THREADS = 2, 16
THREADS, BLOCKS_PER_SM = 256, 8

# the grid cap of the current device: BLOCKS_PER_SM blocks per multiprocessor
_max_blocks: list = []


def _block_cap() -> int:
    if not _max_blocks:
        dev = _driver.require().get_current_device()
        _max_blocks.append(BLOCKS_PER_SM * int(dev.MULTIPROCESSOR_COUNT))
    return _max_blocks[0]


# NOTE [CUDA fast launches]
# ``kernel[grid, block, stream](*args)`` goes through numba-cuda's general path on every
# call: it types every argument (``typeof``), builds a launch configuration (and a
# low-occupancy warning for small grids), looks the compiled kernel up, then packs the
# arguments. For numbagrad's own kernels the argument types follow from a cheap key (the
# device arrays' numba types, the Python types of scalars, the lengths of tuples), so
# ``_run`` launches through numba's general path once per key, remembers the compiled
# ``_Kernel`` it chose, and from then on calls that kernel's ``launch`` (numba's own
# argument packing) directly. A key it cannot build (an unexpected argument type, an
# integer outside int64) always takes the general path. The simulator always does.

_KERNELS: dict = {}  # (dispatcher, argument key) -> numba-cuda's compiled _Kernel
_INT64 = (-(1 << 63), 1 << 63)


def _arg_key(a):
    t = type(a)
    if t is int:
        return "i" if _INT64[0] <= a < _INT64[1] else None
    if t is float or t is bool:
        return t
    if t is tuple:
        key = tuple(_arg_key(v) for v in a)
        return None if None in key else key
    nt = getattr(a, "_numba_type_", None)  # device arrays (and NumPy scalars' dtype below)
    if nt is not None:
        return nt
    dt = getattr(a, "dtype", None)
    return dt if dt is not None and getattr(a, "ndim", 1) == 0 else None


def _run(kernel, grid, block, stream, args):
    """``kernel[grid, block, stream](*args)``, through the remembered compiled kernel when
    the argument key has been seen (NOTE [CUDA fast launches])."""
    key = tuple(_arg_key(a) for a in args)
    if None not in key:
        compiled = _KERNELS.get((kernel, key))
        if compiled is not None:
            compiled.launch(args, grid, block, _driver.core_stream(stream), 0)
            return
    _driver.launch_quietly(kernel, grid, block, stream, args)
    if None in key or getattr(kernel, "_launch_config_sensitive", False):
        return
    argtypes = tuple(kernel.typeof_pyval(a) for a in args)
    compiled = kernel.overloads.get(argtypes)
    if compiled is not None and not getattr(compiled, "launch_config_sensitive", False):
        _KERNELS[(kernel, key)] = compiled


def current_stream():
    """The numba stream kernels are launched on (0: the default stream)."""
    return STREAMS[-1] if STREAMS else 0


def launch(kernel, n: int, *args, stream=None):
    """Run the grid-stride ``kernel(*args)`` over ``n`` elements (no-op when ``n`` is 0)."""
    if n <= 0:
        return
    s = current_stream() if stream is None else stream
    if _driver.simulator():
        blocks = min(SIM_BLOCKS, (n + SIM_THREADS - 1) // SIM_THREADS)
        kernel[blocks, SIM_THREADS, s](*args)
        return
    blocks = min((n + THREADS - 1) // THREADS, _max_blocks[0] if _max_blocks else _block_cap())
    _run(kernel, (blocks, 1, 1), (THREADS, 1, 1), s, args)


def launch_blocks(kernel, nblocks: int, threads: int, *args, stream=None):
    """Run a block-per-item ``kernel`` (a reduction: one block per output, shared memory)
    on ``nblocks`` blocks of ``threads`` threads (a power of two up to the kernel's
    shared-memory size); the simulator gets few small blocks (NOTE [CUDA launches])."""
    if nblocks <= 0:
        return
    s = current_stream() if stream is None else stream
    if _driver.simulator():
        kernel[min(nblocks, SIM_BLOCKS), min(threads, 8), s](*args)
        return
    _run(kernel, (min(nblocks, 65535), 1, 1), (threads, 1, 1), s, args)


def launch_2d(kernel, grid, block, *args, stream=None):
    """Run a tiled kernel with an explicit ``grid``/``block`` (matmul); the simulator gets
    one block (its loops are grid-strided too)."""
    s = current_stream() if stream is None else stream
    if _driver.simulator():
        kernel[(1, 1, 1), block, s](*args)
        return
    _run(kernel, _dim3(grid), _dim3(block), s, args)


def _dim3(d):
    d = (d,) if isinstance(d, int) else tuple(d)
    return d + (1,) * (3 - len(d))
