"""``grid_sample`` with ``affine_grid`` (a spatial transformer's sampling step), numbagrad
against PyTorch with the same data: forward and backward with respect to the input and the
transform, float32, batch 8 x 16 channels x 64 x 64 (bilinear and bicubic) and a 3-D
(trilinear) volume. NumPy has no version of this workload (skipped)."""

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
