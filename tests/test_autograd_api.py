"""Autograd API details against PyTorch: row-major gradients from ``autograd.grad``,
``make_dual``'s tangent casting, ``Variable``."""

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


# -- autograd: contiguous gradients, make_dual casting, Variable ------------------------------
def test_autograd_grad_returns_row_major_gradients():
    lin = nn.Linear(4, 3)
    x = numbagrad.ones(5, 4)
    for create_graph in (False, True):
        (g,) = numbagrad.autograd.grad(
            numbagrad.tanh(lin(x)).sum(), [lin.weight], create_graph=create_graph
        )
        assert g.is_contiguous()
        assert g.view(-1).shape == (12,)  # what flat-gradient code does (TRPO, CG solvers)
    (gg,) = numbagrad.autograd.grad(g.sum(), lin.weight)
    assert gg.is_contiguous()


def test_make_dual_casts_a_float_tangent_to_the_primal_dtype():
    import torch.autograd.forward_ad as fwt

    import numbagrad.autograd.forward_ad as fwo

    with fwo.dual_level():
        d = fwo.make_dual(numbagrad.ones(3, dtype=numbagrad.float64), numbagrad.eye(3)[0])
        to = fwo.unpack_dual(numbagrad.sin(d)).tangent
    with fwt.dual_level():
        d = fwt.make_dual(torch.ones(3, dtype=torch.float64), torch.eye(3)[0])
        tt = fwt.unpack_dual(torch.sin(d)).tangent
    _same(to, tt)
    with fwo.dual_level(), pytest.raises(ValueError, match="floating point"):
        fwo.make_dual(numbagrad.ones(2), numbagrad.ones(2, dtype=numbagrad.int64))


def test_variable_is_the_legacy_alias():
    from numbagrad.autograd import Variable

    a = numbagrad.ones(2, requires_grad=True)
    b = Variable(a * 2)
    assert not b.requires_grad and b.is_leaf and isinstance(a, Variable)
    assert not isinstance(3, Variable)
    d = numbagrad.ones(2)
    e = Variable(d, requires_grad=True)
    assert e.requires_grad and e is not d
    with numbagrad.no_grad():
        e[0] = 5
    assert d[0].item() == 5  # shares storage, as PyTorch's
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1, 2])
    with pytest.raises(RuntimeError, match="no_grad"):
        Variable(d, volatile=True)
