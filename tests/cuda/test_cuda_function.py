"""``autograd.Function`` whose forward/backward launch the user's own ``@cuda.jit`` kernels
on the tensors' memory, and the example script."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
from numba import cuda

import numbagrad


@cuda.jit
def cube_kernel(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i] * x[i] * x[i]


@cuda.jit
def cube_grad_kernel(x, g, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = 3.0 * x[i] * x[i] * g[i]


@cuda.jit
def scale_inplace_kernel(x, s):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[i] *= s


class Cube(numbagrad.autograd.Function):
    """x**3: the forward result wrapped with as_tensor, the backward written into
    empty_like."""

    @staticmethod
    def forward(ctx, x):
        out = cuda.device_array(x.shape[0], dtype=np.float64)
        cube_kernel[1, 8](numbagrad.cuda.as_cuda_array(x), out)
        ctx.save_for_backward(x)
        return numbagrad.as_tensor(out)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        gx = numbagrad.empty_like(x)
        cube_grad_kernel[1, 8](
            numbagrad.cuda.as_cuda_array(x),
            numbagrad.cuda.as_cuda_array(g.contiguous()),
            numbagrad.cuda.as_cuda_array(gx),
        )
        return gx


class ScaleInplace(numbagrad.autograd.Function):
    """x *= 2 in place, by a kernel, with mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        scale_inplace_kernel[1, 8](numbagrad.cuda.as_cuda_array(x), 2.0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_user_kernels_in_function():
    x = numbagrad.tensor(
        [1.0, -2.0, 0.5], dtype=numbagrad.float64, device="cuda", requires_grad=True
    )
    y = Cube.apply(x)
    assert y.is_cuda and y.grad_fn is not None
    assert np.allclose(y.tolist(), [1.0, -8.0, 0.125])
    (y * numbagrad.tensor([1.0, 2.0, 3.0], dtype=numbagrad.float64, device="cuda")).sum().backward()
    assert x.grad.is_cuda and np.allclose(x.grad.tolist(), [3.0, 24.0, 2.25])


def test_saved_tensor_version_check():
    x = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64, device="cuda", requires_grad=True)
    a = x * 1
    y = Cube.apply(a)
    a.add_(1)  # a was saved by Cube
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_mark_dirty_with_kernel():
    x = numbagrad.tensor([1.0, 3.0], dtype=numbagrad.float64, device="cuda", requires_grad=True)
    a = x * 1
    v0 = a._version
    b = ScaleInplace.apply(a)
    assert b is a and a._version > v0 and a.tolist() == [2.0, 6.0]
    (b * b).sum().backward()
    assert np.allclose(x.grad.tolist(), [8.0, 24.0])  # d/dx (2x)^2 = 8x


def test_example_runs():
    path = pathlib.Path(__file__).parents[2] / "examples" / "cuda_custom_kernel.py"
    spec = importlib.util.spec_from_file_location("cuda_custom_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    # registered as an import would: Numba's cache reloads the @njit(cache=True) twins
    # by their module's name
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
        de, df = mod.main(n=6)
    finally:
        sys.modules.pop(spec.name, None)
    assert de < 1e-9 and df < 1e-9
