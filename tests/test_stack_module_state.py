"""``func.stack_module_state`` against PyTorch, and under ``vmap``."""

import numpy as np
import pytest

import numbagrad
import numbagrad.nn as nn

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, rtol=1e-12, atol=1e-12):
    a, b = _np(ours), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _raises_like(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    return str(ours.value), str(theirs.value)


# -- func.stack_module_state ------------------------------------------------------------------
def test_stack_module_state_matches_torch_and_runs_under_vmap():
    rng = np.random.default_rng(2)
    weights = [[rng.normal(size=(4, 3)), rng.normal(size=4)] for _ in range(3)]

    def build(lib):
        ms = [lib.nn.Linear(3, 4) for _ in range(3)]
        for m, (w, b) in zip(ms, weights):
            with lib.no_grad():
                m.weight.copy_(lib.tensor(w))
                m.bias.copy_(lib.tensor(b))
        return ms

    po, bo = numbagrad.func.stack_module_state(build(numbagrad))
    pt, bt = torch.func.stack_module_state(build(torch))
    assert set(po) == set(pt) and bo == bt == {}
    for k in pt:
        _same(po[k].float() if False else po[k], pt[k].detach(), rtol=1e-6)
        assert po[k].requires_grad and po[k].is_leaf
    ms = build(numbagrad)
    x = numbagrad.ones(2, 3)
    out = numbagrad.func.vmap(
        lambda p, b: numbagrad.func.functional_call(ms[0], (p, b), (x,)), in_dims=(0, 0)
    )(po, bo)
    for i, m in enumerate(ms):
        _same(out[i], torch.tensor(_np(m(x))), rtol=1e-6)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="at least one model"):
        numbagrad.func.stack_module_state([])
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.eval()
    with pytest.raises(RuntimeError, match="training/eval mode"):
        numbagrad.func.stack_module_state([a, b])
    with pytest.raises(RuntimeError, match="same class"):
        numbagrad.func.stack_module_state([nn.Linear(2, 2), nn.Tanh()])
    c = nn.Linear(2, 2)
    c.weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match=r"same \.requires_grad"):
        numbagrad.func.stack_module_state([nn.Linear(2, 2), c])
