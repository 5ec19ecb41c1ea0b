"""Resampling, numbagrad against PyTorch with the same data, float32:

- ``GridSampleStep``: ``grid_sample`` with ``affine_grid`` (a spatial transformer's
  sampling step), forward and backward with respect to the input and the transform, batch
  8 x 16 channels x 64 x 64 (bilinear and bicubic) and a 3-D (trilinear) volume;
- ``InterpolateStep``: ``interpolate`` by 2 (issue 28's targets), forward and backward:
  bilinear and bicubic on 32 x 64 x 32 x 32, nearest on the same, trilinear on
  4 x 16 x 16 x 16 x 16 (NOTE [Resampling] in ``numbagrad/nn/_resample.py``).

asv times each benchmark in a process of its own, so each library runs alone (NOTE
[OpenMP wait policy]). NumPy has no version of these workloads (skipped)."""

import numpy as np

from ._common import BackendBenchmark, rng


class GridSampleStep(BackendBenchmark):
    params = [["numbagrad", "torch"], ["bilinear", "bicubic", "trilinear"]]
    param_names = ["backend", "mode"]
    number = 3
    repeat = (3, 10, 20.0)

    def build_numpy(self, np_, mode):
        raise NotImplementedError("no NumPy version of grid_sample")

    def build_tensor(self, mod, mode):
        fn = mod.nn.functional
        r = rng(4)
        if mode == "trilinear":
            shape, sample_mode = (2, 8, 16, 32, 32), "bilinear"
            theta0 = np.tile(np.eye(3, 4), (2, 1, 1))
        else:
            shape, sample_mode = (8, 16, 64, 64), mode
            theta0 = np.tile(np.eye(2, 3), (8, 1, 1))
        theta0 = theta0 + 0.1 * r.standard_normal(theta0.shape)
        x = mod.tensor(r.standard_normal(shape).astype(np.float32), requires_grad=True)
        theta = mod.tensor(theta0.astype(np.float32), requires_grad=True)

        def step():
            x.grad = theta.grad = None
            grid = fn.affine_grid(theta, list(shape), align_corners=False)
            out = fn.grid_sample(x, grid, mode=sample_mode, align_corners=False)
            out.square().sum().backward()
            return [x.grad, theta.grad]

        return step

    def time_step(self, backend, mode):
        """affine_grid + grid_sample forward and backward (input and theta)."""
        return self.run()


class InterpolateStep(BackendBenchmark):
    params = [["numbagrad", "torch"], ["bilinear", "bicubic", "trilinear", "nearest"]]
    param_names = ["backend", "mode"]
    number = 3
    repeat = (3, 10, 20.0)

    def build_numpy(self, np_, mode):
        raise NotImplementedError("no NumPy version of interpolate")

    def build_tensor(self, mod, mode):
        fn = mod.nn.functional
        shape = (4, 16, 16, 16, 16) if mode == "trilinear" else (32, 64, 32, 32)
        align = None if mode == "nearest" else False
        x = mod.tensor(rng(5).standard_normal(shape).astype(np.float32), requires_grad=True)
        g = None

        def step():
            nonlocal g
            x.grad = None
            out = fn.interpolate(x, scale_factor=2, mode=mode, align_corners=align)
            if g is None:
                g = mod.tensor(rng(6).standard_normal(tuple(out.shape)).astype(np.float32))
            out.backward(g)
            return [x.grad]

        return step

    def time_step(self, backend, mode):
        """interpolate forward and backward."""
        return self.run()
