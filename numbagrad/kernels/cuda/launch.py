"""The one launch helper of the CUDA backend (DESIGN.md section 5).

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
    kernel[blocks, THREADS, s](*args)


def launch_blocks(kernel, nblocks: int, threads: int, *args, stream=None):
    """Run a block-per-item ``kernel`` (a reduction: one block per output, shared memory)
    on ``nblocks`` blocks of ``threads`` threads (a power of two up to the kernel's
    shared-memory size); the simulator gets few small blocks (NOTE [CUDA launches])."""
    if nblocks <= 0:
        return
    s = current_stream() if stream is None else stream
    if _driver.simulator():
        nblocks, threads = min(nblocks, SIM_BLOCKS), min(threads, 8)
    kernel[min(nblocks, 65535), threads, s](*args)


def launch_2d(kernel, grid, block, *args, stream=None):
    """Run a tiled kernel with an explicit ``grid``/``block`` (matmul); the simulator gets
    one block (its loops are grid-strided too)."""
    s = current_stream() if stream is None else stream
    if _driver.simulator():
        grid = (1, 1, 1)
    kernel[grid, block, s](*args)
