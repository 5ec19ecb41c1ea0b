"""Saved-tensor hooks (saved_tensors_hooks, save_on_cpu), register_multi_grad_hook and
activation checkpointing (numbagrad.utils.checkpoint), against PyTorch."""

import numpy as np
import pytest

import numbagrad
from numbagrad.autograd.graph import register_multi_grad_hook, save_on_cpu, saved_tensors_hooks
from numbagrad.utils.checkpoint import checkpoint, checkpoint_sequential, detach_variable

torch = pytest.importorskip("torch")


def _packed_shapes(m):
    """What the pack hook sees for a small graph (built-in ops and a custom Function)."""

    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    def unpack(t):
        unpacked.append(tuple(t.shape))
        return t

    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (Cube.apply(x) * x).exp().sum()
    y.backward()
    return packed, unpacked, x.grad.tolist()


def test_pack_unpack_counts_match_torch():
    a, b = _packed_shapes(numbagrad), _packed_shapes(torch)
    assert sorted(a[0]) == sorted(b[0])
    assert sorted(a[1]) == sorted(b[1])
    np.testing.assert_allclose(a[2], b[2])


def test_unpack_result_is_used_and_nesting_uses_innermost():
    x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    outer, inner = [], []
    with saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        with saved_tensors_hooks(lambda t: inner.append(1) or t, lambda t: t * 2):
            y = (x * x).sum()  # saves x twice, packed by the inner pair
        z = (x * x).sum()
    assert len(inner) == 2 and len(outer) == 2
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]  # unpack doubled both saved x: 2x * 2
    x.grad = None
    z.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_hooks_off_after_exit():
    # NOTE [Recording options]: a switch read by the recording path, no class patched
    from numbagrad._core.extension import RECORDING
    from numbagrad.ops._op import Primitive

    record = Primitive.__dict__["_record"]
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        assert RECORDING.active and len(RECORDING.saved_hooks) == 1
        with numbagrad.autograd.set_detect_anomaly(True):
            assert RECORDING.active and RECORDING.anomaly
        assert RECORDING.active and not RECORDING.anomaly
    assert not RECORDING.active and not RECORDING.saved_hooks
    assert Primitive.__dict__["_record"] is record


def test_unpack_must_return_a_tensor():
    for m in (numbagrad, torch):
        x = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: "a"):
            y = (x * x).sum()
        with pytest.raises(
            TypeError,
            match="Output of saved tensor unpack_hook expected to be "
            "a Tensor but got result of type str",
        ):
            y.backward()


def test_double_backward_through_unpacked_tensors():
    x = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x.exp() * x * x).sum()
    (g,) = numbagrad.autograd.grad(y, x, create_graph=True)
    (h,) = numbagrad.autograd.grad(g.sum(), x)
    xt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        yt = (xt.exp() * xt * xt).sum()
    (gt,) = torch.autograd.grad(yt, xt, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy())
    np.testing.assert_allclose(h.numpy(), ht.numpy())


def test_save_on_cpu_copies_and_matches():
    x = numbagrad.tensor([0.5, 1.5], dtype=numbagrad.float64, requires_grad=True)
    with save_on_cpu(pin_memory=True):
        y = (x.tanh() * x).sum()
    y.backward()
    xt = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    (xt.tanh() * xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    seen = []
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with save_on_cpu():
            a = numbagrad.ones(2, requires_grad=True)
            b = a * 1
            c = b * b
    seen.append(c.grad_fn._saved_self.data_ptr() != b.data_ptr())  # a copy was saved
    assert seen == [True]


def test_multi_grad_hook_all_and_any():
    for m in (numbagrad, torch):
        a = m.tensor(1.0, requires_grad=True)
        b = m.tensor(2.0, requires_grad=True)
        calls = []
        h = m.autograd.graph.register_multi_grad_hook(
            (a, b),
            lambda gs, calls=calls: calls.append([None if g is None else g.item() for g in gs]),
        )
        (a * b).backward()
        (a * 3).backward()
        h.remove()
        (a * b).backward()
        anys = []
        m.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g, anys=anys: anys.append(g.item()), mode="any"
        )
        (a * b * 5).backward()
        if m is numbagrad:
            got = (calls, len(anys))
        else:
            assert got == (calls, len(anys))
    assert got == ([[2.0, 1.0], [3.0, None]], 1)
    with pytest.raises(ValueError, match="mode"):
        register_multi_grad_hook((a,), print, mode="some")


# -- checkpoint ---------------------------------------------------------------------------------
def _model(w):
    def f(t, scale=1.0):
        noise = numbagrad.rand(*t.shape)  # the recomputation must see the same draws
        return (((t @ w).tanh() * noise).exp() * scale).sum()

    return f


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_gradient_equals_plain(reentrant):
    w = numbagrad.tensor(np.random.default_rng(1).random((3, 3)), requires_grad=True)
    x = numbagrad.tensor(np.random.default_rng(2).random((2, 3)), requires_grad=True)
    f = _model(w)
    numbagrad.manual_seed(0)
    f(x).backward()
    want = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    numbagrad.manual_seed(0)
    y = checkpoint(f, x, use_reentrant=reentrant)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), want[0].numpy())
    np.testing.assert_allclose(w.grad.numpy(), want[1].numpy())


def test_checkpoint_non_reentrant_with_autograd_grad_and_kwargs():
    w = numbagrad.tensor(np.random.default_rng(1).random((3, 3)), requires_grad=True)
    x = numbagrad.tensor(np.random.default_rng(2).random((2, 3)), requires_grad=True)
    f = _model(w)
    numbagrad.manual_seed(4)
    want = numbagrad.autograd.grad(f(x, scale=2.0), (x, w))
    numbagrad.manual_seed(4)
    got = numbagrad.autograd.grad(checkpoint(f, x, scale=2.0), (x, w))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy())


def test_checkpoint_recomputes_in_backward():
    calls = []
    x = numbagrad.tensor([1.0, 2.0], requires_grad=True)

    def f(t):
        calls.append(1)
        return (t.exp() * t).sum()

    y = checkpoint(f, x)
    assert len(calls) == 1
    y.backward()
    assert len(calls) == 2
    np.testing.assert_allclose(
        x.grad.numpy(), np.exp([1.0, 2.0]) * (1 + np.array([1, 2.0])), rtol=1e-6
    )


def test_checkpoint_sequential_and_detach_variable():
    fs = [lambda t: t * 2, lambda t: t.sin(), lambda t: t.exp(), lambda t: t.sum()]
    x = numbagrad.tensor([0.1, 0.7], dtype=numbagrad.float64, requires_grad=True)
    checkpoint_sequential(fs, 2, x).backward()
    xt = torch.tensor([0.1, 0.7], dtype=torch.float64, requires_grad=True)
    from torch.utils.checkpoint import checkpoint_sequential as torch_sequential

    torch_sequential(
        [lambda t: t * 2, lambda t: t.sin(), lambda t: t.exp(), lambda t: t.sum()],
        2,
        xt,
        use_reentrant=False,
    ).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    d, n = detach_variable((x * 2, 3))
    assert d.requires_grad and d.grad_fn is None and n == 3
    with pytest.raises(RuntimeError, match="tuple"):
        detach_variable([x])
    with pytest.raises(ValueError, match="Unexpected keyword"):
        checkpoint(lambda t: t, x, use_reentrant=True, foo=1)
