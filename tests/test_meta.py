"""The ``meta`` device (NOTE [Meta tensors] in ``numbagrad/kernels/meta.py``): tensors with
a shape and a dtype and no data, enough for the stateless module of ``torch.func``'s model
ensembling; everything that would read or compute values raises."""

import copy

import numpy as np
import pytest

import numbagrad
from numbagrad.func import functional_call, stack_module_state, vmap


def test_meta_tensors_have_metadata_and_no_data():
    x = numbagrad.ones(2, 3, dtype=numbagrad.float64)
    m = x.to("meta")
    assert m.is_meta and not x.is_meta
    assert m.device == numbagrad.device("meta") and str(m.device) == "meta"
    assert repr(numbagrad.device("meta")) == "device(type='meta')"
    assert tuple(m.shape) == (2, 3) and m.dtype == numbagrad.float64 and m.numel() == 6
    assert m.size(1) == 3 and m.dim() == 2 and m.element_size() == 8
    assert repr(m) == "tensor(..., device='meta', size=(2, 3), dtype=numbagrad.float64)"
    assert repr(numbagrad.empty(4, device="meta")) == "tensor(..., device='meta', size=(4,))"
    assert m.to("meta") is m and m.to(numbagrad.float32).dtype == numbagrad.float32
    assert m.clone().is_meta and m.detach().is_meta
    assert numbagrad.zeros_like(m).is_meta and numbagrad.empty_like(m).is_meta
    assert numbagrad.zeros(3, dtype=numbagrad.int64, device="meta").dtype == numbagrad.int64
    assert x.requires_grad_().to("meta").requires_grad


@pytest.mark.parametrize(
    "op",
    [
        lambda m: m + 1,
        lambda m: m * m,
        lambda m: m.sum(),
        lambda m: m.exp(),
        lambda m: m @ m.T,
        lambda m: m.reshape(3, 2),
        lambda m: m[0],
        lambda m: m.tolist(),
        lambda m: numbagrad.cat([m, m]),
        lambda m: m == m,
        lambda m: m.to("cpu"),
    ],
)
def test_anything_that_reads_values_raises(op):
    m = numbagrad.ones(2, 3).to("meta")
    with pytest.raises(NotImplementedError, match="meta"):
        op(m)


def test_numpy_of_a_meta_tensor_raises_as_for_a_device_tensor():
    with pytest.raises(TypeError, match="meta device type tensor to numpy"):
        numbagrad.empty(2, device="meta").numpy()


def test_module_to_meta_keeps_its_parameters_objects():
    lin = numbagrad.nn.Linear(3, 2)
    w = lin.weight
    lin.to("meta")
    assert lin.weight is w and w.is_meta and w.requires_grad
    assert all(p.is_meta for p in lin.parameters())
    with pytest.raises(NotImplementedError, match="meta"):
        lin(numbagrad.ones(1, 3))


def _mlp(mod):
    return mod.nn.Sequential(mod.nn.Linear(4, 8), mod.nn.ReLU(), mod.nn.Linear(8, 3))


def test_model_ensembling_with_a_meta_base_model():
    """torch.func's model-ensembling tutorial: a stateless base model on 'meta' called with
    each member's parameters through functional_call under vmap; compared with PyTorch."""
    torch = pytest.importorskip("torch")
    results = {}
    rng = np.random.default_rng(0)
    data = rng.standard_normal((5, 4))
    minibatches = rng.standard_normal((3, 5, 4))
    states = None
    for mod in (torch, numbagrad):
        mod.manual_seed(0)
        models = [_mlp(mod).double() for _ in range(3)]
        if states is None:
            states = [
                {k: v.detach().numpy().copy() for k, v in m.state_dict().items()} for m in models
            ]
        for m, st in zip(models, states):
            m.load_state_dict({k: mod.tensor(v) for k, v in st.items()})
        params, buffers = mod.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def fmodel(params, buffers, x, base=base, mod=mod):
            return mod.func.functional_call(base, (params, buffers), (x,))

        same = mod.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, mod.tensor(data))
        each = mod.func.vmap(fmodel)(params, buffers, mod.tensor(minibatches))
        results[mod.__name__] = (same.detach().numpy(), each.detach().numpy())
    for got, want in zip(results["numbagrad"], results["torch"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_meta_base_model_gradients_flow_to_the_stacked_parameters():
    models = [_mlp(numbagrad) for _ in range(2)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = numbagrad.ones(5, 4)
    out = vmap(lambda p, b: functional_call(base, (p, b), (x,)))(params, buffers)
    out.sum().backward()
    assert all(p.grad is not None and not p.grad.is_meta for p in params.values())
    assert all(p.is_meta for p in base.parameters())  # the base model is never written
