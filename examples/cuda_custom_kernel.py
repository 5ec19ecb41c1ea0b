"""
Your own CUDA kernels in an autograd Function
=============================================

A pairwise potential ``E = sum_{i<j} exp(-|x_i - x_j|^2)`` over particle positions ``x``
and its forces ``dE/dx``, each computed by a ``@cuda.jit`` kernel you write, inside a
:class:`numbagrad.autograd.Function`. The kernels read and write the tensors' memory
through :func:`numbagrad.cuda.as_cuda_array` (a zero-copy device view that works on a GPU
and under the CUDA simulator alike), so nothing is copied to the host. The same Function
runs on the CPU with ``@njit`` twins of the kernels, and the two agree.

Run it on a GPU, or without one under the simulator at a toy size::

    NUMBA_ENABLE_CUDASIM=1 python examples/cuda_custom_kernel.py

The docs build shows this script without running it (it needs ``numbagrad[cuda]``).
"""

import math
import sys

import numpy as np
from numba import njit

import numbagrad


# -- the CPU twins (``@njit`` loops over the same per-pair math) ---------------------------
@njit(cache=True)
def energy_cpu(x, e):
    n = x.shape[0]
    for i in range(n):
        acc = 0.0
        for j in range(n):
            if j != i:
                r2 = 0.0
                for k in range(x.shape[1]):
                    d = x[i, k] - x[j, k]
                    r2 += d * d
                acc += math.exp(-r2)
        e[i] = 0.5 * acc  # each pair is counted by both of its particles


@njit(cache=True)
def forces_cpu(x, g, f):
    n = x.shape[0]
    for i in range(n):
        for k in range(x.shape[1]):
            f[i, k] = 0.0
        for j in range(n):
            if j != i:
                r2 = 0.0
                for k in range(x.shape[1]):
                    d = x[i, k] - x[j, k]
                    r2 += d * d
                w = -2.0 * g * math.exp(-r2)
                for k in range(x.shape[1]):
                    f[i, k] += w * (x[i, k] - x[j, k])


# -- the user's ``@cuda.jit`` kernels (one thread per particle, grid-stride loops) ----------
try:
    from numba import cuda
except ImportError:  # no numba-cuda: the CPU path still runs
    cuda = None

if cuda is not None:

    @cuda.jit
    def energy_gpu(x, e):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            acc = 0.0
            for j in range(x.shape[0]):
                if j != i:
                    r2 = 0.0
                    for k in range(x.shape[1]):
                        d = x[i, k] - x[j, k]
                        r2 += d * d
                    acc += math.exp(-r2)
            e[i] = 0.5 * acc

    @cuda.jit
    def forces_gpu(x, g, f):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            for k in range(x.shape[1]):
                f[i, k] = 0.0
            for j in range(x.shape[0]):
                if j != i:
                    r2 = 0.0
                    for k in range(x.shape[1]):
                        d = x[i, k] - x[j, k]
                        r2 += d * d
                    w = -2.0 * g * math.exp(-r2)
                    for k in range(x.shape[1]):
                        f[i, k] += w * (x[i, k] - x[j, k])


# one thread per particle: enough blocks of 128 threads to cover them all (the loops are
# grid-strided, so any grid is correct; too small a grid leaves most of a GPU idle)
_THREADS = 128


def _grid(n):
    return max(1, (n + _THREADS - 1) // _THREADS)


class PairEnergy(numbagrad.autograd.Function):
    """``sum_{i<j} exp(-|x_i - x_j|^2)`` of positions ``x`` (n, d), on either device."""

    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        e = numbagrad.empty(x.shape[0], dtype=x.dtype, device=x.device)
        if x.is_cuda:
            xs = numbagrad.cuda.as_cuda_array(x)
            energy_gpu[_grid(x.shape[0]), _THREADS](xs, numbagrad.cuda.as_cuda_array(e))
        else:
            energy_cpu(x.detach().numpy(), e.numpy())
        ctx.save_for_backward(x)
        return e.sum()  # the reduction runs on x's device

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        f = numbagrad.empty_like(x)
        gv = float(g)  # the incoming gradient of a scalar: one value
        if x.is_cuda:
            forces_gpu[_grid(x.shape[0]), _THREADS](
                numbagrad.cuda.as_cuda_array(x), gv, numbagrad.cuda.as_cuda_array(f)
            )
        else:
            forces_cpu(x.detach().numpy(), gv, f.numpy())
        return f


def main(n=12, seed=0):
    """Compare the Function on CUDA with the same Function on the CPU; returns the max
    differences of energy and forces."""
    if not numbagrad.cuda.is_available():
        print("CUDA is not available: run on a GPU, or with NUMBA_ENABLE_CUDASIM=1")
        return None
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0.0, 2.0, (n, 3))
    x_cpu = numbagrad.tensor(pos, requires_grad=True)
    x_gpu = numbagrad.tensor(pos, device="cuda", requires_grad=True)
    e_cpu = PairEnergy.apply(x_cpu)
    e_gpu = PairEnergy.apply(x_gpu)
    e_cpu.backward()
    e_gpu.backward()
    assert e_gpu.is_cuda and x_gpu.grad.is_cuda
    de = abs(e_gpu.item() - e_cpu.item())
    df = float(np.abs(x_gpu.grad.cpu().numpy() - x_cpu.grad.numpy()).max())
    print(f"energy: cpu {e_cpu.item():.6f}  cuda {e_gpu.item():.6f}  |diff| {de:.1e}")
    print(f"forces: max |cuda - cpu| {df:.1e}")
    # the analytic gradient agrees with central differences (float64)
    ok = numbagrad.autograd.gradcheck(PairEnergy.apply, (x_cpu.detach().requires_grad_(),))
    print("gradcheck on the CPU:", ok)
    return de, df


if __name__ == "__main__":
    res = main()
    if res is not None and max(res) > 1e-9:
        sys.exit("CUDA and CPU results differ")
