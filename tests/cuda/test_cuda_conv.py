"""The convolution and max-pooling primitives have no CUDA kernels: on CUDA tensors they
raise ``NotImplementedError`` naming the op (docs/gpu.rst); the layers that are
compositions of ops (average and adaptive average pooling, batch norm, interpolation) run
on the device and match the CPU."""

import numpy as np
import pytest

import numbagrad
import numbagrad.nn.functional as F

RNG = np.random.default_rng(4)


@pytest.mark.parametrize(
    "name,call",
    [
        (
            "im2col",
            lambda x: F.conv2d(
                x, numbagrad.ones(2, 2, 3, 3, dtype=numbagrad.float64, device="cuda")
            ),
        ),
        ("im2col", lambda x: F.unfold(x, 2)),
        (
            "col2im",
            lambda x: F.conv_transpose2d(
                x, numbagrad.ones(2, 1, 2, 2, dtype=numbagrad.float64, device="cuda")
            ),
        ),
        ("max_pool", lambda x: F.max_pool2d(x, 2)),
        ("adaptive_max_pool", lambda x: F.adaptive_max_pool2d(x, 2)),
    ],
)
def test_conv_and_max_pool_raise_on_cuda(name, call):
    x = numbagrad.tensor(RNG.standard_normal((1, 2, 4, 4)), device="cuda")
    with pytest.raises(NotImplementedError, match=name + ".*CUDA"):
        call(x)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.avg_pool2d(x, 2, 1, 1),
        lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        lambda x: F.batch_norm(x, None, None, training=True),
    ],
)
def test_composite_layers_run_on_cuda(fn):
    a = RNG.standard_normal((2, 3, 5, 4))
    xc = numbagrad.tensor(a, requires_grad=True)
    xg = numbagrad.tensor(a, device="cuda", requires_grad=True)
    oc, og = fn(xc), fn(xg)
    assert og.is_cuda
    np.testing.assert_allclose(og.cpu().detach().numpy(), oc.detach().numpy(), rtol=1e-9, atol=1e-9)
    oc.sum().backward()
    og.sum().backward()
    np.testing.assert_allclose(xg.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-9, atol=1e-9)
