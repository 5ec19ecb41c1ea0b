"""Two host copies out of the backward: the seed gradient of ``backward()`` (and the fills
and ``*_like`` creations the transforms use) is filled on the device, and the backward of
boolean-mask indexing scatters on the device (NOTE [CUDA mask scatter]): no
host<->device copy."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.backend import CUDA

RNG = np.random.default_rng(0)


def test_seed_gradient_and_fills_are_made_on_the_device():
    x = numbagrad.tensor(RNG.standard_normal((3, 4)), device="cuda", requires_grad=True)
    loss = (x.tanh() * x).sum()
    before = dict(_driver.COPIES)
    loss.backward()
    assert _driver.COPIES == before
    np.testing.assert_allclose(
        x.grad.cpu().numpy(),
        np.tanh(x.detach().cpu().numpy()) * 1
        + x.detach().cpu().numpy() * (1 - np.tanh(x.detach().cpu().numpy()) ** 2),
    )
    t = x.detach()
    before = dict(_driver.COPIES)
    made = [
        numbagrad.ones_like(t),
        numbagrad.zeros_like(t),
        numbagrad.full_like(t, 2.5),
        numbagrad.empty_like(t),
        numbagrad.zeros(2, 3, device="cuda"),
        numbagrad.ones(4, dtype=numbagrad.int64, device="cuda"),
        numbagrad.full((2,), 7, device="cuda"),
        numbagrad.empty(0, device="cuda"),
    ]
    g = numbagrad.func.grad(lambda v: (v * v).sum())(t)  # ones_like of its output
    (gx,) = numbagrad.autograd.grad((t.requires_grad_() * 3).sum(), t)
    assert _driver.COPIES == before
    assert all(m.is_cuda for m in made) and g.is_cuda and gx.is_cuda
    assert made[0].tolist() == [[1.0] * 4] * 3 and made[2].dtype == t.dtype
    assert made[5].dtype == numbagrad.int64 and made[5].tolist() == [1, 1, 1, 1]
    assert made[6].dtype == numbagrad.int64 and made[6].tolist() == [7, 7]
    assert made[3].shape == (3, 4) and made[7].shape == (0,)
    np.testing.assert_allclose(g.cpu().numpy(), 2 * t.detach().cpu().numpy())
    assert gx.tolist() == [[3.0] * 4] * 3


def _mask_case(shape, mask_fn, key_fn, mask_np):
    """``x[key]`` with a CUDA bool mask in the key: its backward makes no host copy, and the
    values and gradients equal the CPU's."""
    a = RNG.standard_normal(shape)
    m_dev = mask_fn(numbagrad.tensor(mask_np, device="cuda"))
    m_cpu = mask_fn(numbagrad.tensor(mask_np))
    xg = numbagrad.tensor(a, device="cuda", requires_grad=True)
    xc = numbagrad.tensor(a, requires_grad=True)
    yg, yc = key_fn(xg, m_dev), key_fn(xc, m_cpu)
    assert yg.shape == yc.shape
    np.testing.assert_array_equal(yg.detach().cpu().numpy(), yc.detach().numpy())
    w = RNG.standard_normal(tuple(yc.shape))
    lg = (yg * numbagrad.tensor(w, device="cuda")).sum()
    lc = (yc * numbagrad.tensor(w)).sum()
    before = dict(_driver.COPIES)
    lg.backward()
    assert _driver.COPIES == before  # no device-to-host (nor host-to-device) copy
    lc.backward()
    np.testing.assert_array_equal(xg.grad.cpu().numpy(), xc.grad.numpy())


@pytest.mark.parametrize(
    "shape, mask_shape, key",
    [
        ((3, 4), (3, 4), lambda x, m: x[m]),  # the whole tensor
        ((3, 4), (4,), lambda x, m: x[:, m]),  # a trailing dim after a slice
        ((2, 3, 4), (2, 3), lambda x, m: x[m]),  # leading dims, the rest kept
        ((2, 3, 4), (3,), lambda x, m: x[1:, m, ::2]),  # between slices of a view
        ((6, 9), (6, 9), lambda x, m: x[m]),  # more elements than one simulated launch
    ],
)
def test_mask_backward_scatters_on_the_device(shape, mask_shape, key):
    mask = RNG.random(mask_shape) < 0.5
    _mask_case(shape, lambda m: m, key, mask)


def test_mask_backward_edge_cases():
    _mask_case((3, 4), lambda m: m, lambda x, m: x[m], np.zeros((3, 4), bool))  # no True
    _mask_case((3, 4), lambda m: m, lambda x, m: x[m], np.ones((3, 4), bool))  # all True
    one = np.zeros((3, 4), bool)
    one[1, 2] = True
    _mask_case((3, 4), lambda m: m, lambda x, m: x[m], one)  # a count of one
    # a non-contiguous mask (a transposed view), read through its strides
    _mask_case((4, 3), lambda m: m.t(), lambda x, m: x[m], RNG.random((3, 4)) < 0.5)
    # a mask over 0 rows
    _mask_case((0, 3), lambda m: m, lambda x, m: x[m], np.zeros((0, 3), bool))


def test_mask_nonzero_matches_numpy():
    mask = RNG.random((5, 7)) < 0.4
    dev = numbagrad.tensor(mask, device="cuda")._data
    got = CUDA.mask_nonzero(dev, int(mask.sum())).to_host()
    np.testing.assert_array_equal(got, np.stack(np.nonzero(mask)))
    # a count too large leaves the extra coordinates out of range, never garbage
    got = CUDA.mask_nonzero(dev, int(mask.sum()) + 2).to_host()
    np.testing.assert_array_equal(got[:, :-2], np.stack(np.nonzero(mask)))
    assert np.all(got[:, -2:] < -(2**61))


def test_mask_errors_and_forward_read():
    x = numbagrad.zeros(3, 4, device="cuda", requires_grad=True)
    with pytest.raises(IndexError, match="The shape of the mask"):
        x[numbagrad.tensor([True, False], device="cuda")]
    before = _driver.COPIES["d2h"]
    y = x[numbagrad.tensor([True, False, True], device="cuda")]
    assert y.shape == (2, 4)
    assert _driver.COPIES["d2h"] == before + 1  # the forward's one read: its shape
