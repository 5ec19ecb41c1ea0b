"""``nn.Module.to('cuda')``/``.cuda()``/``.cpu()`` (parameters and their gradients keep their
identity, as PyTorch's ``_apply``) and optimizers stepping CUDA parameters, against the
same steps on the CPU."""

import numpy as np
import pytest

import numbagrad
from numbagrad import nn
from numbagrad.kernels.cuda import _driver

RNG = np.random.default_rng(2)


class _Net(nn.Module):
    def __init__(self, dtype=numbagrad.float64):
        super().__init__()
        self.fc1 = nn.Linear(4, 5, dtype=dtype)
        self.fc2 = nn.Linear(5, 2, dtype=dtype)
        self.register_buffer("scale", numbagrad.tensor([1.5, -0.5], dtype=dtype))
        self.register_buffer("count", numbagrad.tensor(3))

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh()) * self.scale


def _twins(dtype=numbagrad.float64):
    """A net on the CPU and a copy of it moved to CUDA."""
    cpu = _Net(dtype)
    dev = _Net(dtype)
    dev.load_state_dict(cpu.state_dict())
    return cpu, dev.cuda()


def test_to_cuda_keeps_parameter_identity_and_moves_buffers():
    net = _Net()
    params = list(net.parameters())
    values = [p.detach().numpy().copy() for p in params]
    assert net.to("cuda") is net
    assert all(a is b for a, b in zip(net.parameters(), params))
    assert all(p.is_cuda and p.requires_grad for p in params)
    assert net.scale.is_cuda and net.count.is_cuda and net.count.dtype == numbagrad.int64
    for p, v in zip(params, values):
        np.testing.assert_array_equal(p.detach().cpu().numpy(), v)
    assert net.cpu() is net and not any(p.is_cuda for p in params)
    assert all(a is b for a, b in zip(net.parameters(), params))
    assert not net.scale.is_cuda


def test_gradients_move_with_their_parameters():
    net = _Net()
    x = numbagrad.tensor(RNG.standard_normal((3, 4)))
    net(x).sum().backward()
    grads = [p.grad for p in net.parameters()]
    want = [g.numpy().copy() for g in grads]
    net.cuda()
    for p, g, w in zip(net.parameters(), grads, want):
        assert p.grad is g and g.is_cuda and not g.requires_grad
        np.testing.assert_array_equal(g.cpu().numpy(), w)
    net.cpu()
    assert all(not p.grad.is_cuda for p in net.parameters())


def test_forward_backward_on_cuda_match_cpu():
    cpu, dev = _twins()
    x = RNG.standard_normal((6, 4))
    out_c = cpu(numbagrad.tensor(x))
    out_g = dev(numbagrad.tensor(x, device="cuda"))
    assert out_g.is_cuda
    # (atol: a product that cancels to ~1e-5 differs in the last bits between the CPU's one
    # GEMM over the stacked rows and the device's kernel)
    np.testing.assert_allclose(
        out_g.detach().cpu().numpy(), out_c.detach().numpy(), rtol=1e-12, atol=1e-15
    )
    out_c.square().mean().backward()
    out_g.square().mean().backward()
    for pc, pg in zip(cpu.parameters(), dev.parameters()):
        assert pg.grad.is_cuda
        np.testing.assert_allclose(pg.grad.cpu().numpy(), pc.grad.numpy(), rtol=1e-10)


def test_to_forms_and_errors():
    net = _Net(numbagrad.float32)
    w = net.fc1.weight
    net.to("cuda", numbagrad.float64)
    assert net.fc1.weight is w and w.is_cuda and w.dtype == numbagrad.float64
    assert net.count.dtype == numbagrad.int64  # not floating: only moved
    net.to(numbagrad.zeros(1, dtype=numbagrad.float32))  # a tensor: its dtype and device
    assert not w.is_cuda and w.dtype == numbagrad.float32
    net.to(device=numbagrad.device("cuda", 0))
    assert w.is_cuda and net.to(0) is net and w.is_cuda
    with pytest.raises(TypeError, match="floating point"):
        net.to(numbagrad.int64)


def _run(opt_cls, dtype, steps=2, **kw):
    cpu, dev = _twins(dtype)
    opts = [opt_cls(m.parameters(), **kw) for m in (cpu, dev)]
    x = RNG.standard_normal((5, 4))
    for _ in range(steps):
        for m, opt, device in zip((cpu, dev), opts, ("cpu", "cuda")):
            opt.zero_grad()
            m(numbagrad.tensor(x, dtype=dtype, device=device)).square().sum().backward()
            opt.step()
    return cpu, dev, opts


@pytest.mark.parametrize(
    "opt_cls,kw",
    [
        (numbagrad.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
        (numbagrad.optim.Adam, {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
        (numbagrad.optim.AdamW, {"lr": 0.01}),
    ],
)
def test_optimizer_steps_on_cuda_match_cpu(opt_cls, kw):
    cpu, dev, opts = _run(opt_cls, numbagrad.float64, **kw)
    for pc, pg in zip(cpu.parameters(), dev.parameters()):
        assert pg.is_cuda
        np.testing.assert_allclose(pg.detach().cpu().numpy(), pc.detach().numpy(), rtol=1e-10)
    for state in opts[1].state.values():
        for k, v in state.items():
            if k != "step":
                assert v.is_cuda, k


@pytest.mark.parametrize(
    "opt_cls,kw",
    [
        (numbagrad.optim.RMSprop, {"lr": 0.01, "centered": True, "momentum": 0.5}),
        (numbagrad.optim.Adagrad, {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.2}),
        (numbagrad.optim.SGD, {"lr": 0.1, "maximize": True, "momentum": 0.9, "dampening": 0.1}),
    ],
)
def test_more_optimizers_on_a_cuda_tensor(opt_cls, kw):
    res = []
    for d in ("cpu", "cuda"):
        w = numbagrad.tensor([[0.5, -1.0, 2.0]], dtype=numbagrad.float64, device=d)
        w.requires_grad_()
        opt = opt_cls([w], weight_decay=0.1, **kw)
        for _ in range(2):
            opt.zero_grad()
            (w.sin() * w).sum().backward()
            opt.step()
        res.append(w.detach().cpu().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


def test_optimizer_float32_and_state_dict_onto_cuda():
    cpu, dev, opts = _run(numbagrad.optim.Adam, numbagrad.float32, steps=1, lr=0.01)
    for pc, pg in zip(cpu.parameters(), dev.parameters()):
        assert pg.dtype == numbagrad.float32
        np.testing.assert_allclose(pg.detach().cpu().numpy(), pc.detach().numpy(), rtol=1e-5)
    # a CPU optimizer state loaded into an optimizer of CUDA parameters moves to the device
    fresh = numbagrad.optim.Adam(dev.parameters(), lr=0.01)
    fresh.load_state_dict(opts[0].state_dict())
    for state in fresh.state.values():
        assert state["exp_avg"].is_cuda and not state["step"].is_cuda


def test_classifier_training_loop_on_cuda_matches_cpu():
    # the loop a PyTorch script runs: model.to(device), cross_entropy (its target check and
    # the gather of the log-probabilities), backward, gradient clipping, SGD with momentum
    x = RNG.standard_normal((8, 4))
    y = RNG.integers(0, 3, 8)
    nets = []
    for device in ("cpu", "cuda"):
        numbagrad.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 6, dtype=numbagrad.float64), nn.ReLU(), nn.Linear(6, 3))
        net = net.double().to(device)
        opt = numbagrad.optim.SGD(net.parameters(), lr=0.1, momentum=0.5)
        xb = numbagrad.tensor(x, device=device)
        yb = numbagrad.tensor(y, device=device)
        for _ in range(2):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(xb), yb)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(net.parameters(), 0.5)  # clamp on the device
            assert norm.is_cuda == (device == "cuda")
            opt.step()
        assert loss.is_cuda == (device == "cuda")
        nets.append((net, loss))
    (cpu, loss_c), (dev, loss_g) = nets
    np.testing.assert_allclose(loss_g.item(), loss_c.item(), rtol=1e-10)
    for pc, pg in zip(cpu.parameters(), dev.parameters()):
        np.testing.assert_allclose(pg.detach().cpu().numpy(), pc.detach().numpy(), rtol=1e-10)
    with pytest.raises(IndexError):
        nn.functional.cross_entropy(dev(xb), numbagrad.tensor([3] * 8, device="cuda"))


# -- DLPack (NOTE [DLPack]) ----------------------------------------------------------------------
def test_dlpack_cpu_tensors_both_ways():
    torch = pytest.importorskip("torch")
    t = numbagrad.arange(6.0).reshape(2, 3).t()  # a strided view
    assert t.__dlpack_device__() == (1, 0)
    tt = torch.from_dlpack(t)
    np.testing.assert_array_equal(tt.numpy(), t.numpy())
    tt[0, 0] = 10.0  # zero copy
    assert t[0, 0].item() == 10.0
    a = np.from_dlpack(numbagrad.ones(3, dtype=numbagrad.int64))
    assert a.dtype == np.int64 and a.tolist() == [1, 1, 1]
    src = torch.arange(4.0)
    x = numbagrad.from_dlpack(src)
    x += 1
    assert src.tolist() == [1.0, 2.0, 3.0, 4.0] and x.dtype == numbagrad.float32
    with pytest.raises(RuntimeError, match="require gradient"):
        torch.from_dlpack(numbagrad.ones(2, requires_grad=True))
    with pytest.raises(NotImplementedError, match="capsule"):
        numbagrad.from_dlpack(np.ones(2).__dlpack__())
    with pytest.raises(TypeError, match="__dlpack__"):
        numbagrad.from_dlpack(3)


def test_dlpack_of_cuda_tensors_under_the_simulator():
    g = numbagrad.ones(2, 3, device="cuda")
    assert g.__dlpack_device__() == (2, 0)
    if _driver.simulator():
        with pytest.raises(BufferError, match="needs a GPU"):
            g.__dlpack__()
    with pytest.raises(RuntimeError, match="require gradient"):
        g.requires_grad_().__dlpack__()


def test_dlpack_capsule_builder_on_host_memory():
    # the capsule CUDA tensors export, built over host memory (kDLCPU) so that NumPy and
    # PyTorch consume it here: checks the DLManagedTensor layout, strides and the deleter
    import gc

    from numbagrad.kernels import dlpack

    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = base[:, ::2]

    class Producer:
        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            st = tuple(s // view.itemsize for s in view.strides)
            return dlpack._capsule(view.ctypes.data, (1, 0), view.shape, st, view.dtype, base)

        def __dlpack_device__(self):
            return (1, 0)

    before = len(dlpack._LIVE)
    a = np.from_dlpack(Producer())
    np.testing.assert_array_equal(a, view)  # (NumPy imports a legacy capsule read-only)
    torch = pytest.importorskip("torch")
    tt = torch.from_dlpack(Producer())
    assert tt.stride() == (4, 2) and tt.tolist() == view.tolist()
    tt[1, 1] = -1.0
    assert base[1, 2] == -1.0 and a[1, 1] == -1.0  # the same memory
    assert len(dlpack._LIVE) == before + 2
    del a, tt
    gc.collect()
    assert len(dlpack._LIVE) == before  # each consumer called the deleter
    dlpack._capsule(base.ctypes.data, (1, 0), (12,), (1,), base.dtype, base)  # unconsumed
    gc.collect()
    assert len(dlpack._LIVE) == before  # freed by the capsule's destructor


def test_lbfgs_on_cuda_parameters_says_so():
    w = numbagrad.zeros(3, device="cuda", requires_grad=True)
    with pytest.raises(NotImplementedError, match="LBFGS is not implemented for CUDA"):
        numbagrad.optim.LBFGS([w])
