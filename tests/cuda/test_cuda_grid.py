"""``grid_sample`` has no CUDA kernel: on CUDA tensors it raises ``NotImplementedError``
naming the op (docs/gpu.rst); ``affine_grid`` and fractional max pooling are compositions
of ops and run on the device, matching the CPU."""

import numpy as np
import pytest

import numbagrad
import numbagrad.nn.functional as F

RNG = np.random.default_rng(8)


def test_grid_sample_raises_on_cuda():
    x = numbagrad.tensor(RNG.standard_normal((1, 2, 4, 4)), device="cuda")
    g = numbagrad.zeros(1, 3, 3, 2, dtype=numbagrad.float64, device="cuda")
    with pytest.raises(NotImplementedError, match=r"grid_sample.*CUDA"):
        F.grid_sample(x, g, align_corners=False)


def test_affine_grid_and_fractional_pool_run_on_cuda():
    theta = RNG.standard_normal((2, 2, 3))
    tc = numbagrad.tensor(theta, requires_grad=True)
    tg = numbagrad.tensor(theta, device="cuda", requires_grad=True)
    oc = F.affine_grid(tc, (2, 1, 3, 4), align_corners=False)
    og = F.affine_grid(tg, (2, 1, 3, 4), align_corners=False)
    assert og.is_cuda
    np.testing.assert_allclose(og.cpu().detach().numpy(), oc.detach().numpy(), rtol=1e-12)
    oc.sum().backward()
    og.sum().backward()
    np.testing.assert_allclose(tg.grad.cpu().numpy(), tc.grad.numpy(), rtol=1e-12)

    a = RNG.standard_normal((2, 3, 9, 8))
    s = RNG.uniform(0, 1, (2, 3, 2))
    xc = numbagrad.tensor(a, requires_grad=True)
    xg = numbagrad.tensor(a, device="cuda", requires_grad=True)
    pc, ic = F.fractional_max_pool2d(xc, 2, 4, None, True, numbagrad.tensor(s))
    pg, ig = F.fractional_max_pool2d(xg, 2, 4, None, True, numbagrad.tensor(s, device="cuda"))
    assert pg.is_cuda
    np.testing.assert_array_equal(ig.cpu().numpy(), ic.numpy())
    np.testing.assert_array_equal(pg.cpu().detach().numpy(), pc.detach().numpy())
    pc.sum().backward()
    pg.sum().backward()
    np.testing.assert_array_equal(xg.grad.cpu().numpy(), xc.grad.numpy())
