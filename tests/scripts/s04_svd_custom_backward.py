"""Custom SVD-based ops: a symmetric eigen-decomposition Function with a hand-written
backward (as in differentiable-SVD papers), checked against torch.linalg's own gradients."""

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


class SymEig(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A):
        L, V = torch.linalg.eigh(A)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        F = L.unsqueeze(-2) - L.unsqueeze(-1)
        F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
        F = 1.0 / F
        inner = torch.diag_embed(gL)
        if gV is not None:
            inner = inner + F * (V.transpose(-2, -1) @ gV)
        gA = V @ inner @ V.transpose(-2, -1)
        return 0.5 * (gA + gA.transpose(-2, -1))


def main():
    rng = np.random.default_rng(3)
    B = torch.from_numpy(rng.normal(size=(5, 5)))
    A = (B @ B.T + 5 * torch.eye(5)).requires_grad_()
    L, V = SymEig.apply(A)
    loss = L.pow(2).sum() + (V[:, 0] ** 4).sum()
    (gA,) = torch.autograd.grad(loss, A)
    L2, V2 = torch.linalg.eigh(A)
    loss2 = L2.pow(2).sum() + (V2[:, 0] ** 4).sum()
    (gA2,) = torch.autograd.grad(loss2, A)
    # nuclear norm through SVD and its gradient U V^T
    M = torch.from_numpy(rng.normal(size=(4, 3))).requires_grad_()
    U, S, Vh = torch.linalg.svd(M, full_matrices=False)
    S.sum().backward()
    sv = torch.linalg.svdvals(M.detach())
    return {
        "eig": L,
        "custom_grad": gA,
        "builtin_grad_match": float(torch.allclose(gA, gA2)),
        "nuclear_grad": M.grad,
        "uvt": U @ Vh,
        "svdvals": sv,
        "recon_err": torch.dist(U @ torch.diag(S) @ Vh, M).item(),
    }
