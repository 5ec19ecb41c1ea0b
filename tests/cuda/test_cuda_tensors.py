"""CUDA devices, creation, moving between devices, errors and interop."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda import _driver


def test_cuda_module():
    c = numbagrad.cuda
    assert c.is_available() is True
    assert c.device_count() >= 1
    assert c.current_device() == 0
    assert isinstance(c.get_device_name(), str)
    c.set_device(0)
    c.synchronize()
    s = c.Stream()
    with c.stream(s):
        assert c.current_stream().numba_stream is s.numba_stream
        x = numbagrad.ones(3, device="cuda") * 2
    s.synchronize()
    assert x.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match="Stream"):
        with c.stream(object()):
            pass


def test_devices():
    d = numbagrad.device("cuda:0")
    assert repr(d) == "device(type='cuda', index=0)" and str(d) == "cuda:0"
    assert repr(numbagrad.device("cuda")) == "device(type='cuda')"
    assert numbagrad.device("cuda", 0) == d and d != numbagrad.device("cpu")
    with pytest.raises(RuntimeError, match="device type"):
        numbagrad.device("tpu")


@pytest.mark.parametrize(
    "make",
    [
        lambda dev: numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]], device=dev),
        lambda dev: numbagrad.zeros(2, 3, device=dev),
        lambda dev: numbagrad.ones(2, 3, dtype=numbagrad.float64, device=dev),
        lambda dev: numbagrad.full((2,), 7, device=dev),
        lambda dev: numbagrad.arange(5, device=dev),
        lambda dev: (
            numbagrad.empty(2, device=dev).zero_()
            if dev == "cpu"
            else numbagrad.zeros(2, device=dev)
        ),
    ],
)
def test_creation_matches_cpu(make):
    c, g = make("cpu"), make("cuda")
    assert g.is_cuda and g.device == numbagrad.device("cuda:0")
    assert g.dtype == c.dtype and g.shape == c.shape
    np.testing.assert_array_equal(g.cpu().numpy(), c.numpy())


def test_like_keeps_device_and_random_is_reproducible():
    x = numbagrad.ones(2, 2, device="cuda")
    for f in (
        numbagrad.zeros_like,
        numbagrad.ones_like,
        numbagrad.empty_like,
        numbagrad.randn_like,
        numbagrad.rand_like,
    ):
        assert f(x).is_cuda
    assert numbagrad.full_like(x, 3).is_cuda
    numbagrad.manual_seed(3)
    a = numbagrad.randn(4, device="cuda")
    numbagrad.manual_seed(3)
    b = numbagrad.randn(4, device="cuda")
    numbagrad.manual_seed(3)
    c = numbagrad.rand(4, device="cuda")
    assert a.tolist() == b.tolist()  # drawn on the device (NOTE [CUDA random numbers])
    assert c.is_cuda and 0 <= min(c.tolist()) and max(c.tolist()) < 1


def test_moving():
    x = numbagrad.tensor([1.0, 2.0, 3.0])
    g = x.cuda()
    assert g.is_cuda and not x.is_cuda
    assert g.cuda() is g and x.cpu() is x
    assert g.to("cuda:0") is g and g.to(g) is g
    assert x.to(g).is_cuda and g.to(x).device.type == "cpu"
    assert g.to("cpu").tolist() == [1.0, 2.0, 3.0]
    assert g.to(numbagrad.float64).dtype == numbagrad.float64
    assert g.to(numbagrad.float64).is_cuda
    h = g.to("cpu", numbagrad.float64)
    assert h.dtype == numbagrad.float64 and not h.is_cuda


def test_moving_is_differentiable():
    x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x.cuda() * 3).sum()
    assert y.is_cuda
    y.backward()
    assert not x.grad.is_cuda and x.grad.tolist() == [3.0, 3.0]
    w = numbagrad.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    (w.cpu() ** 2).sum().backward()
    assert w.grad.is_cuda and w.grad.tolist() == [2.0, 4.0]


def test_host_access():
    g = numbagrad.tensor([[1.5, 2.0]], device="cuda")
    with pytest.raises(
        TypeError,
        match=r"can't convert cuda:0 device type tensor to numpy\. "
        r"Use Tensor\.cpu\(\) to copy the tensor to host memory first\.",
    ):
        g.numpy()
    with pytest.raises(TypeError, match="cuda:0"):
        np.asarray(g)
    assert g.tolist() == [[1.5, 2.0]] and g[0, 0].item() == 1.5
    assert float(g[0, 1]) == 2.0 and bool(g[0, 0])
    assert repr(g) == "tensor([[1.5000, 2.0000]], device='cuda:0')"
    r = repr(numbagrad.ones(2, dtype=numbagrad.float64, device="cuda", requires_grad=True))
    assert r == "tensor([1., 1.], device='cuda:0', dtype=numbagrad.float64, requires_grad=True)"


def test_mixing_devices():
    g = numbagrad.ones(3, device="cuda")
    c = numbagrad.ones(3)
    msg = "Expected all tensors to be on the same device.*cuda:0 and cpu"
    with pytest.raises(RuntimeError, match=msg):
        g + c
    with pytest.raises(RuntimeError, match=msg):
        c * g
    # a 0-dim CPU tensor and a Python scalar join a CUDA op, as in PyTorch
    assert (g + numbagrad.tensor(2.0)).tolist() == [3.0, 3.0, 3.0]
    assert (numbagrad.tensor(2.0) * g).is_cuda
    assert (g * 2 - 1).tolist() == [1.0, 1.0, 1.0]


def test_not_implemented_names_the_op():
    mask = numbagrad.zeros(3, dtype=numbagrad.bool, device="cuda")  # (nextafter runs now)
    with pytest.raises(NotImplementedError, match=r"add\.at into bool.*CUDA.*cpu"):
        mask.index_add_(0, numbagrad.tensor([0, 1], device="cuda"), mask[:2])
    with pytest.raises(NotImplementedError, match=r"invert.*not implemented for CUDA"):
        numbagrad.bitwise_not(numbagrad.tensor([1, 2], device="cuda"))  # (det has kernels now)


def test_views_share_storage_and_version():
    g = numbagrad.zeros(2, 3, device="cuda")
    v = g.t()
    assert v._storage is g._storage and not v.is_contiguous()
    assert v.stride() == (1, 3)
    row = g[1]
    assert row.storage_offset() == 3
    g.add_(1)
    assert g._version == v._version == 1
    assert v.tolist() == [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]


def test_interop_zero_copy():
    from numba import cuda

    dev = cuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = numbagrad.as_tensor(dev)
    assert t.is_cuda and t.shape == (2, 3) and t.dtype == numbagrad.float32
    view = numbagrad.cuda.as_cuda_array(t)
    view[0, 0] = 42.0  # writes through: one memory
    assert t[0, 0].item() == 42.0 and dev.copy_to_host()[0, 0] == 42.0
    tv = numbagrad.cuda.as_cuda_array(t.t())  # a strided (transposed) view, zero copy
    assert tv.shape == (3, 2) and tv.copy_to_host()[0, 0] == 42.0
    assert tv.copy_to_host()[2, 1] == 5.0
    with pytest.raises(TypeError, match="CUDA tensor"):
        numbagrad.cuda.as_cuda_array(numbagrad.ones(2))


def test_copy_counter_counts():
    before = dict(_driver.COPIES)
    g = numbagrad.tensor([1.0, 2.0], device="cuda")  # made on the host, copied once
    g.tolist()
    assert _driver.COPIES["h2d"] == before["h2d"] + 1
    assert _driver.COPIES["d2h"] == before["d2h"] + 1


def test_copy_across_devices_moves_values_and_gradients_back():
    """PyTorch's cross-device ``copy_``: values are copied (cast, broadcast), and the
    gradient of the source lands on the source's device."""
    d = numbagrad.zeros(2, 3, device="cuda")
    d.copy_(numbagrad.arange(3.0))
    assert d.device.type == "cuda" and d.cpu().tolist() == [[0.0, 1.0, 2.0]] * 2
    c = numbagrad.zeros(2, 3, dtype=numbagrad.float32)
    c.copy_(d * 2)
    assert c.device.type == "cpu" and c.tolist() == [[0.0, 2.0, 4.0]] * 2
    w = numbagrad.arange(6.0).reshape(2, 3)
    for src_dev, dst_dev in (("cpu", "cuda"), ("cuda", "cpu")):
        src = numbagrad.ones(3, device=src_dev, requires_grad=True)
        dst = numbagrad.zeros(2, 3, device=dst_dev)
        dst.copy_(src)
        (dst * w.to(dst_dev)).sum().backward()
        assert src.grad.device.type == src_dev
        assert src.grad.cpu().tolist() == [3.0, 5.0, 7.0]


def test_new_tensor_methods_keep_the_device():
    x = numbagrad.ones(2, device="cuda")
    for t in (
        x.new_zeros(2),
        x.new_ones(2),
        x.new_empty(2),
        x.new_full((2,), 3.0),
        x.new_tensor([1.0]),
    ):
        assert t.device.type == "cuda"
    assert x.new_zeros(2, device="cpu").device.type == "cpu"


def test_a_fresh_process_can_use_its_first_cuda_tensor():
    """The first CUDA array made (``empty`` allocates directly) registers the backend, so
    ops on it work before any other op ran."""
    import os
    import subprocess
    import sys

    code = "import numbagrad as ng; t = ng.empty(2, device='cuda'); print(list((t + t).shape))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip() == "[2]", out.stderr[-2000:]
