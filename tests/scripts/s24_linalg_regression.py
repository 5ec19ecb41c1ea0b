"""Linear-algebra toolbox of a regression script: ridge via ``linalg.solve``, least squares via
``lstsq`` and QR, determinants, inverse, ``matrix_exp``; gradients of a few of them."""

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(20)
    X = torch.from_numpy(rng.normal(size=(30, 4)))
    w_true = torch.tensor([1.0, -2.0, 0.5, 3.0])
    y = X @ w_true + 0.1 * torch.from_numpy(rng.normal(size=30))
    lam = torch.tensor(0.5, requires_grad=True)
    A = X.T @ X + lam * torch.eye(4)
    w_ridge = torch.linalg.solve(A, X.T @ y)
    cv = ((X @ w_ridge - y) ** 2).mean()
    cv.backward()
    w_lstsq = torch.linalg.lstsq(X, y.unsqueeze(-1)).solution.squeeze(-1)
    Q, R = torch.linalg.qr(X)
    w_qr = torch.linalg.solve_triangular(R, (Q.T @ y).unsqueeze(-1), upper=True).squeeze(-1)
    M = torch.from_numpy(rng.normal(size=(3, 3))).requires_grad_()
    f = (
        torch.linalg.det(M)
        + torch.linalg.inv(M).trace()
        + torch.linalg.matrix_exp(0.1 * M).sum()
        + torch.linalg.matrix_norm(M)
        + torch.linalg.vector_norm(M, ord=3)
    )
    f.backward()
    return {
        "w_ridge": w_ridge,
        "dcv_dlam": lam.grad.item(),
        "w_lstsq": w_lstsq,
        "w_qr": w_qr,
        "R_diag_abs": torch.diagonal(R).abs(),
        "f": f.item(),
        "M_grad": M.grad,
        "pinv": torch.linalg.pinv(X[:5]),
        "cond": torch.linalg.cond(X).item(),
    }
