"""
Quickstart: tensors, gradients and a custom Function
====================================================

numbagrad mirrors PyTorch's autograd API (``import numbagrad as torch`` works for the
parts it implements). This script fits a tiny least-squares model with reverse mode,
checks a gradient against finite differences, and wraps a Numba kernel as a custom
``autograd.Function``. Every printed result is checked.
"""

import numba
import numpy as np

import numbagrad as torch

torch.manual_seed(0)

# %%
# Gradients of a scalar loss
# --------------------------
x = torch.linspace(-1.0, 1.0, 50, dtype=torch.float64)
y_true = 3.0 * x - 0.5 + 0.01 * torch.randn(50, dtype=torch.float64)

w = torch.zeros(1, dtype=torch.float64, requires_grad=True)
b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
for _ in range(200):
    loss = ((w * x + b - y_true) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.5 * w.grad
        b -= 0.5 * b.grad
    w.grad.zero_()
    b.grad.zero_()
print(f"fitted w = {w.item():.3f}, b = {b.item():.3f}, loss = {loss.item():.2e}")
assert abs(w.item() - 3.0) < 0.05 and abs(b.item() + 0.5) < 0.05

# %%
# Higher-order derivatives
# ------------------------
t = torch.tensor(2.0, requires_grad=True)
(d1,) = torch.autograd.grad(t**3, t, create_graph=True)
(d2,) = torch.autograd.grad(d1, t)
print(f"d/dt t^3 = {d1.item():.1f}, d2/dt2 t^3 = {d2.item():.1f} at t = 2")
assert d1.item() == 12.0 and d2.item() == 12.0


# %%
# A custom Function around a Numba kernel
# ----------------------------------------
# ``.numpy()`` and ``from_numpy`` share memory with the tensor, so the kernel reads and
# writes tensor storage directly.
@numba.njit(cache=True)
def softclip_kernel(x, out, dout):
    for i in range(x.size):
        e = np.exp(-np.abs(x[i]))
        out[i] = np.sign(x[i]) * (1.0 - e)
        dout[i] = e


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        xa = x.contiguous().numpy().reshape(-1)
        out, dout = np.empty_like(xa), np.empty_like(xa)
        softclip_kernel(xa, out, dout)
        ctx.save_for_backward(torch.from_numpy(dout.reshape(x.shape)))
        return torch.from_numpy(out.reshape(x.shape))

    @staticmethod
    def backward(ctx, grad_out):
        (dout,) = ctx.saved_tensors
        return grad_out * dout


z = torch.randn(5, dtype=torch.float64, requires_grad=True)
SoftClip.apply(z).sum().backward()
expected = np.exp(-np.abs(z.detach().numpy()))
print("SoftClip grad matches exp(-|z|):", np.allclose(z.grad.numpy(), expected))
assert np.allclose(z.grad.numpy(), expected)
assert torch.autograd.gradcheck(
    SoftClip.apply, (torch.randn(4, dtype=torch.float64, requires_grad=True),)
)
print("gradcheck passed: all results checked")
