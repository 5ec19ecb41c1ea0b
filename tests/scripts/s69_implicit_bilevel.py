"""Implicit differentiation and bilevel hyper-gradients as in the implicit-layers tutorial,
jaxopt-style ports and "Optimizing Millions of Hyperparameters by Implicit
Differentiation" (Lorraine et al.): an inner ridge/logistic problem solved by gradient
descent under ``no_grad``; the hyper-gradient of a validation loss from the implicit
function theorem with ``torch.func.jacrev(update, argnums=(0, 1))`` of the optimizer's
update map and ``torch.linalg.solve``; the same by a conjugate-gradient inverse-HVP and by a
truncated Neumann series (``autograd.grad`` with ``create_graph=True``), by differentiating
the closed form, and by unrolled differentiation through the inner loop. A custom
``autograd.Function`` (``setup_context`` style) finds a fixed point z = tanh(W z + U x + b)
by iteration and differentiates it in ``backward`` by solving the adjoint system with the
Jacobian from ``torch.func.jacrev`` and the parameter VJP from ``torch.func.vjp``; it is used
under ordinary ``.backward()``, under ``torch.func.grad`` and inside a few Adam steps of
hyper-parameter learning."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import grad, jacrev, vjp

torch.set_default_dtype(torch.float64)


def inner_loss(w, log_lam, X, y):
    r = X @ w - y
    return 0.5 * (r**2).mean() + 0.5 * torch.exp(log_lam) * (w**2).sum()


def inner_solve(log_lam, X, y, lr=0.3, iters=200):
    w = torch.zeros(X.shape[1])
    with torch.no_grad():
        for _ in range(iters):
            w = w - lr * grad(inner_loss)(w, log_lam, X, y)
    return w


def unrolled(log_lam, X, y, lr=0.3, iters=60):
    w = torch.zeros(X.shape[1], requires_grad=True)
    for _ in range(iters):
        (g,) = torch.autograd.grad(inner_loss(w, log_lam, X, y), w, create_graph=True)
        w = w - lr * g
    return w


def cg(Av, b, iters=20):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r @ r
    for _ in range(iters):
        Ap = Av(p)
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        if rs_new < 1e-28:
            break
        p = r + rs_new / rs * p
        rs = rs_new
    return x


class FixedPointLayer(torch.autograd.Function):
    @staticmethod
    def forward(W, U, b, x):
        with torch.no_grad():
            z = torch.zeros(W.shape[0])
            for _ in range(200):
                z_next = torch.tanh(W @ z + U @ x + b)
                if (z_next - z).abs().max() < 1e-13:
                    z = z_next
                    break
                z = z_next
        return z

    @staticmethod
    def setup_context(ctx, inputs, output):
        W, U, b, x = inputs
        ctx.save_for_backward(W, U, b, x, output)

    @staticmethod
    def backward(ctx, gz):
        W, U, b, x, z = ctx.saved_tensors

        def f(z_, W_, U_, b_, x_):
            return torch.tanh(W_ @ z_ + U_ @ x_ + b_)

        Jz = jacrev(f, argnums=0)(z, W, U, b, x)
        u = torch.linalg.solve((torch.eye(z.shape[0]) - Jz).T, gz)
        _, pullback = vjp(lambda *a: f(z, *a), W, U, b, x)
        return pullback(u)


def main():
    rng = np.random.default_rng(69)
    X = torch.from_numpy(rng.normal(size=(30, 5)))
    w_true = torch.from_numpy(rng.normal(size=5))
    y = X @ w_true + 0.5 * torch.from_numpy(rng.normal(size=30))
    Xv = torch.from_numpy(rng.normal(size=(20, 5)))
    yv = Xv @ w_true + 0.5 * torch.from_numpy(rng.normal(size=20))
    out = {}

    def val_loss(w):
        return 0.5 * ((Xv @ w - yv) ** 2).mean()

    log_lam = torch.tensor(-2.0)
    w_star = inner_solve(log_lam, X, y)
    out["w_star"] = w_star

    # implicit function theorem on the update map T(w, lam) = w - lr * grad_w L
    lr = 0.3

    def update(w, ll):
        return w - lr * grad(inner_loss)(w, ll, X, y)

    Jw, Jl = jacrev(update, argnums=(0, 1))(w_star, log_lam)
    dw_dl = torch.linalg.solve(torch.eye(5) - Jw, Jl)
    hyper_ift = grad(val_loss)(w_star) @ dw_dl
    out["dw_dlam_ift"] = dw_dl
    out["hypergrad_ift"] = hyper_ift

    # closed form: (X^T X / n + lam I) w = X^T y / n, differentiated directly
    def closed(ll):
        A = X.T @ X / 30 + torch.exp(ll) * torch.eye(5)
        return torch.linalg.solve(A, X.T @ y / 30)

    ll = log_lam.clone().requires_grad_(True)
    val_loss(closed(ll)).backward()
    out["hypergrad_closed"] = ll.grad
    out["closed_vs_inner"] = (closed(log_lam) - w_star).abs().max()

    # inverse-HVP by CG and by a Neumann series (Lorraine et al.)
    w_r = w_star.clone().requires_grad_(True)
    l_r = log_lam.clone().requires_grad_(True)
    (gw,) = torch.autograd.grad(inner_loss(w_r, l_r, X, y), w_r, create_graph=True)
    v = grad(val_loss)(w_star)

    def hvp(p):
        return torch.autograd.grad(gw, w_r, p, retain_graph=True)[0]

    q = cg(hvp, v)
    (mixed,) = torch.autograd.grad(gw, l_r, q, retain_graph=True)
    out["hypergrad_cg"] = -mixed
    p_acc, cur = v.clone(), v.clone()
    for _ in range(60):
        cur = cur - 0.3 * hvp(cur)
        p_acc = p_acc + cur
    (mixed_n,) = torch.autograd.grad(gw, l_r, 0.3 * p_acc, retain_graph=True)
    out["hypergrad_neumann"] = -mixed_n

    # unrolled differentiation (60 steps)
    l_u = log_lam.clone().requires_grad_(True)
    w_u = unrolled(l_u, X, y)
    (g_unroll,) = torch.autograd.grad(val_loss(w_u), l_u)
    out["hypergrad_unrolled"] = g_unroll

    # hyper-parameter descent on log lambda with IFT hyper-gradients
    path = []
    ll_h = log_lam.clone()
    for _ in range(3):
        w_h = inner_solve(ll_h, X, y, iters=150)
        Jw, Jl = jacrev(update, argnums=(0, 1))(w_h, ll_h)
        hg = grad(val_loss)(w_h) @ torch.linalg.solve(torch.eye(5) - Jw, Jl)
        ll_h = ll_h - 2.0 * hg
        path.append(ll_h)
    out["log_lam_path"] = torch.stack(path)

    # a fixed-point layer with an adjoint backward
    W = torch.from_numpy(0.3 * rng.normal(size=(4, 4)) / 2).requires_grad_(True)
    U = torch.from_numpy(rng.normal(size=(4, 3))).requires_grad_(True)
    b = torch.from_numpy(rng.normal(size=4)).requires_grad_(True)
    x = torch.from_numpy(rng.normal(size=3))
    target = torch.from_numpy(rng.normal(size=4))
    z = FixedPointLayer.apply(W, U, b, x)
    F.mse_loss(z, target).backward()
    out["fp_z"] = z
    out["fp_gW"] = W.grad
    out["fp_gU"] = U.grad
    out["fp_gb"] = b.grad

    def layer_loss(W_, U_, b_):
        return F.mse_loss(FixedPointLayer.apply(W_, U_, b_, x), target)

    gW, gU, gb = grad(layer_loss, argnums=(0, 1, 2))(W.detach(), U.detach(), b.detach())
    out["fp_func_vs_eager"] = torch.stack(
        [(gW - W.grad).abs().max(), (gU - U.grad).abs().max(), (gb - b.grad).abs().max()]
    )

    # the same gradient by unrolling 200 iterations, as a check of the adjoint
    zz = torch.zeros(4)
    for _ in range(200):
        zz = torch.tanh(W @ zz + U @ x + b)
    (gW_unroll,) = torch.autograd.grad(F.mse_loss(zz, target), W)
    out["fp_adjoint_vs_unrolled"] = (gW_unroll - W.grad).abs().max()

    opt = torch.optim.Adam([W, U, b], lr=0.05)
    hist = []
    for _ in range(4):
        opt.zero_grad()
        loss = F.mse_loss(FixedPointLayer.apply(W, U, b, x), target)
        loss.backward()
        opt.step()
        hist.append(loss.item())
    out["fp_train"] = hist
    return out


TOLERANCE = {
    "closed_vs_inner": (1e-6, 1e-10),
    "fp_func_vs_eager": (1e-6, 1e-12),
    "fp_adjoint_vs_unrolled": (1e-6, 1e-10),
    "hypergrad_neumann": (1e-5, 1e-9),
}
