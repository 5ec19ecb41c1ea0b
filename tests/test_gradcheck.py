"""gradcheck / gradgradcheck options: each one is honoured or refused, never ignored (the
forward-mode and batched checks: ``test_gradcheck_transforms.py``)."""

import numpy as np
import pytest

import numbagrad as torch
from numbagrad.autograd.gradcheck import GradcheckError


def _x():
    return torch.rand(4, dtype=torch.float64, requires_grad=True)


def _wrong(t):
    return t * t.detach()  # the gradient misses the detached factor


@pytest.mark.parametrize("fast_mode", [False, True])
def test_modes_pass_right_and_catch_wrong_gradients(fast_mode):
    assert torch.autograd.gradcheck(torch.sin, (_x(),), fast_mode=fast_mode)
    assert not torch.autograd.gradcheck(_wrong, (_x(),), fast_mode=fast_mode, raise_exception=False)
    with pytest.raises(GradcheckError):
        torch.autograd.gradcheck(_wrong, (_x(),), fast_mode=fast_mode)


def test_fast_mode_multiple_inputs_and_outputs():
    a, b = _x(), _x()
    assert torch.autograd.gradcheck(lambda p, q: (p * q, (p - q).exp()), (a, b), fast_mode=True)


def test_check_backward_ad_false_skips_the_reverse_check():
    class WrongBackward(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3  # wrong

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    assert torch.autograd.gradcheck(
        WrongBackward.apply, (_x(),), check_forward_ad=True, check_backward_ad=False
    )
    assert not torch.autograd.gradcheck(WrongBackward.apply, (_x(),), raise_exception=False)
    with pytest.raises(AssertionError, match="at least one of"):  # as PyTorch
        torch.autograd.gradcheck(_wrong, (_x(),), check_backward_ad=False)


def test_nondeterministic_backward_is_caught():
    rng = np.random.default_rng(1)

    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + float(rng.standard_normal()) * 1e-7

    with pytest.raises(GradcheckError, match="reentrant"):
        torch.autograd.gradcheck(Noisy.apply, (_x(),), atol=1e-3)
    assert torch.autograd.gradcheck(Noisy.apply, (_x(),), atol=1e-3, nondet_tol=1e-5)


def test_check_grad_dtypes():
    assert torch.autograd.gradcheck(torch.sin, (_x(),), check_grad_dtypes=True)


def test_undefined_output_gradients_give_none():
    # two outputs, the backward receives None for both: built-in rules are skipped
    assert torch.autograd.gradcheck(
        lambda t: (t.sin(), t.cos()), (_x(),), check_undefined_grad=True
    )


def test_gradgradcheck_non_contiguous_grad_outputs_and_fast_mode():
    assert torch.autograd.gradgradcheck(torch.tanh, (_x(),), gen_non_contig_grad_outputs=True)
    assert torch.autograd.gradgradcheck(torch.tanh, (_x(),), fast_mode=True)
    assert torch.autograd.gradgradcheck(
        torch.tanh,
        (_x(),),
        check_rev_over_rev=False,
        check_fwd_over_rev=True,
        check_undefined_grad=False,
    )
    with pytest.raises(AssertionError, match="at least one of"):  # as PyTorch
        torch.autograd.gradgradcheck(_wrong, (_x(),), check_rev_over_rev=False)


def test_gradcheck_non_contiguous_input():
    base = torch.rand(4, 6, dtype=torch.float64)
    x = base[:, ::2].detach().requires_grad_()
    assert not x.is_contiguous()
    assert torch.autograd.gradcheck(torch.exp, (x,))


def test_masked_refused():
    with pytest.raises(NotImplementedError, match="sparse"):
        torch.autograd.gradcheck(torch.sin, (_x(),), masked=True)
