"""
Sorting with NumPy inside a custom Function
===========================================

``NumpySort`` and ``NumpyTake`` are the pair from PyTorch's page "Extending
torch.func with autograd.Function", run unchanged with ``import numbagrad as torch``.
Their forward passes leave the autograd world for NumPy (``x.numpy()`` is zero-copy),
and ``NumpySort``'s backward is written with another Function, ``NumpyTake``, so the
pair can be differentiated twice.

The gradient of a sort is a permutation: if ``result[j] = x[ind[j]]`` then
``dL/dx[ind[j]] = dL/dresult[j]``, i.e. the upstream gradient gathered with the
inverse permutation ``ind_inv``. The script checks that hand derivation, runs
``gradcheck`` and ``gradgradcheck``, and prints what it checked.
"""

import numpy as np

import numbagrad as torch


def to_numpy(tensor):
    """The tensor's data as a NumPy array (zero-copy on the CPU)."""
    return tensor.cpu().numpy()


class NumpySort(torch.autograd.Function):
    """Sort along ``dim`` with NumPy; also returns the permutation and its inverse."""

    # Note that forward does not take ctx
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        # Any intermediates to be saved in backward must be returned as outputs.
        return (
            torch.tensor(result, device=device),  # the desired output
            torch.tensor(ind, device=device),  # saved for backward
            torch.tensor(ind_inv, device=device),  # saved for backward
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, dim = inputs
        _, ind, ind_inv = output
        # The indices are integer outputs: mark them as such, save them properly.
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        # Non-tensors may be saved by assigning them as attributes on ctx.
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # Written with another Function (not NumPy directly), so that it is
        # itself differentiable: double backward works.
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None


class NumpyTake(torch.autograd.Function):
    """``take_along_axis(x, ind, dim)``; its gradient is the take with ``ind_inv``."""

    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None


def numpy_sort(x, dim=-1):
    """The sorted values only, hiding the index outputs."""
    result, _, _ = NumpySort.apply(x, dim)
    return result


torch.manual_seed(0)
x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
x_np = x.detach().numpy()

# Forward: the values are sorted along the last dimension, the indices carry no grad.
y, ind, ind_inv = NumpySort.apply(x, -1)
assert np.array_equal(y.detach().numpy(), np.sort(x_np, axis=-1))
assert y.requires_grad and not ind.requires_grad and not ind_inv.requires_grad
print("sorted rows     :", np.round(y.detach().numpy()[0], 4).tolist())
print("grad_fn         :", y.grad_fn.name())

# Backward: L = sum(sort(x) * w)  =>  dL/dx = w gathered with the inverse permutation.
w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
loss = (numpy_sort(x) * w).sum()
(grad_x,) = torch.autograd.grad(loss, x, create_graph=True)
w_np = w.detach().numpy()
expected = np.take_along_axis(w_np, np.argsort(np.argsort(x_np, axis=-1), axis=-1), axis=-1)
assert np.allclose(grad_x.detach().numpy(), expected)
print("dL/dx matches the hand-derived permutation of w: ok")

# Second order: dL/dx is linear in w, and d/dw sum(dL/dx * v) = v gathered with ind.
v = torch.randn(3, 5, dtype=torch.float64)
(grad_w,) = torch.autograd.grad((grad_x * v).sum(), w)
expected_w = np.take_along_axis(v.numpy(), np.argsort(x_np, axis=-1), axis=-1)
assert np.allclose(grad_w.numpy(), expected_w)
print("second-order gradient through NumpyTake: ok")

# Finite differences agree, to first and second order, along either dimension.
x64 = x.detach().clone().requires_grad_(True)
for dim in (0, 1):
    assert torch.autograd.gradcheck(lambda t, d=dim: numpy_sort(t, d), (x64,))
    assert torch.autograd.gradgradcheck(lambda t, d=dim: numpy_sort(t, d), (x64,))
print("gradcheck and gradgradcheck (dim 0 and 1): ok")
