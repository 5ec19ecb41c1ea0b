"""``torch.func.vmap`` plumbing as kernel-method, ensembling and JAX-port code leans on it:
``in_dims``/``out_dims`` given as tuples, dicts and nested pytrees (lists of tuples), negative
dims, ``None`` for broadcast arguments, non-tensor keyword arguments, ``out_dims`` per
output (one output left unbatched with ``None``), nested ``vmap(vmap(...))`` for pairwise
Gram matrices and ``torch.vmap`` as an alias; batched indexing (a table indexed by batched
integers), in-place updates of a fresh buffer (``zeros_like``/``empty_like`` + ``copy_``,
``y[1:-1] += ...`` on a slice) inside the mapped or differentiated function, ``torch.where``,
``torch.linalg.solve``/``det``/``einsum``/``cdist``/``softmax`` under ``vmap``;
``stack_module_state`` + ``functional_call`` ensembles whose members hold buffers and a
``LayerNorm``, per-sample input gradients and Hessians (``vmap(jacrev(...))``,
``vmap(hessian(...))``) of one member, and
per-member gradients with ``vmap(grad_and_value(..., argnums=(0, 1)))``; ``jacrev`` and
``jvp``/``vjp`` with ``has_aux``, ``linearize`` reused under ``vmap``, and ``chunk_size``
in ``vmap`` and ``jacrev`` giving the same numbers as unchunked calls."""

import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacrev,
    jvp,
    linearize,
    stack_module_state,
    vjp,
    vmap,
)

torch.set_default_dtype(torch.float64)


def rbf(x, y, lengthscale=1.0):
    return torch.exp(-((x - y) ** 2).sum() / (2 * lengthscale**2))


class Member(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 6)
        self.norm = nn.LayerNorm(6)
        self.fc2 = nn.Linear(6, 1)
        self.register_buffer("shift", torch.zeros(3))

    def forward(self, x):
        return self.fc2(F.gelu(self.norm(self.fc1(x - self.shift)))).squeeze(-1)


def main():
    rng = np.random.default_rng(72)
    out = {}
    X = torch.from_numpy(rng.normal(size=(7, 3)))
    Y = torch.from_numpy(rng.normal(size=(5, 3)))

    # nested vmap: Gram matrix, checked against cdist; non-tensor keyword argument
    gram = vmap(vmap(rbf, in_dims=(None, 0)), in_dims=(0, None))(X, Y, lengthscale=0.7)
    out["gram"] = gram
    out["gram_vs_cdist"] = (gram - torch.exp(-(torch.cdist(X, Y) ** 2) / (2 * 0.49))).abs().max()
    out["gram_torch_vmap"] = torch.vmap(torch.vmap(rbf, (None, 0)), (0, None))(X, Y)

    # negative in_dims / out_dims
    Xt = X.T.contiguous()  # (3, 7): batch along the last dim
    colnorm = vmap(lambda v: (v**2).sum().sqrt(), in_dims=-1)(Xt)
    out["colnorm"] = colnorm
    scaled = vmap(lambda v, s: v * s, in_dims=(-1, 0), out_dims=-1)(Xt, colnorm)
    out["scaled_shape"] = torch.tensor(scaled.shape)
    out["scaled"] = scaled

    # dict inputs with dict in_dims, tuple outputs with per-output out_dims (one unbatched)
    batch = {"x": X, "w": torch.from_numpy(rng.normal(size=3))}

    def per_row(d, bias):
        z = d["x"] @ d["w"] + bias
        return z, d["w"] * 2

    z, w2 = vmap(per_row, in_dims=({"x": 0, "w": None}, None), out_dims=(0, None))(batch, 0.5)
    out["dict_z"] = z
    out["dict_w2"] = w2

    # nested pytree: a list of (tensor, tensor) pairs with mixed dims
    pairs = [(X, Y[0]), (X * 2, Y[1])]

    def pair_sum(ps):
        return sum((a * b).sum() for a, b in ps)

    out["pytree_in_dims"] = vmap(pair_sum, in_dims=([(0, None), (0, None)],))(pairs)

    # out_dims=1 on a matrix output and a dict output
    def outer_and_stats(v):
        return {"outer": torch.outer(v, v), "mean": v.mean()}

    res = vmap(outer_and_stats, out_dims={"outer": 2, "mean": 0})(X)
    out["outer_dim2_shape"] = torch.tensor(res["outer"].shape)
    out["outer_dim2"] = res["outer"]
    out["row_means"] = res["mean"]

    # batched integer indexing into a fixed table, in-place fill of a fresh buffer, where
    table = torch.from_numpy(rng.normal(size=(10, 4)))
    idx = torch.from_numpy(rng.integers(0, 10, size=(6, 3)))

    def lookup(ix):
        rows = table[ix]  # (3, 4)
        buf = torch.zeros_like(rows[0])
        buf += rows.sum(0)
        buf[0] = rows[:, 0].max()
        return torch.where(buf > 0, buf, 0.1 * buf)

    out["lookup"] = vmap(lookup)(idx)

    def smooth(v):  # NumPy-port style: preallocate, copy, then update the interior in place
        y = torch.empty_like(v)
        y.copy_(v)
        y[1:-1] += 0.25 * (v[:-2] - 2 * v[1:-1] + v[2:])
        return y

    out["smooth_cols"] = vmap(smooth, in_dims=1, out_dims=1)(X)
    out["smooth_jac"] = jacrev(smooth)(X[:, 0])

    # batched linear algebra
    A = torch.from_numpy(rng.normal(size=(4, 3, 3))) + 3 * torch.eye(3)
    b = torch.from_numpy(rng.normal(size=(4, 3)))
    out["solve"] = vmap(torch.linalg.solve)(A, b)
    out["det"] = vmap(torch.linalg.det)(A)
    out["bilinear"] = vmap(lambda M, v: torch.einsum("i,ij,j->", v, M, v))(A, b)
    out["softmax_rows"] = vmap(lambda v: F.softmax(v / 0.5, dim=0), in_dims=1, out_dims=1)(b)

    # ensembles with stack_module_state; members with buffers
    models = [Member() for _ in range(4)]
    for m in models:
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
            m.shift.copy_(torch.from_numpy(rng.normal(size=3)))
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0])

    def fmodel(p, bf, x):
        return functional_call(base, (p, bf), (x,))

    ens = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, X)
    out["ensemble"] = ens
    out["ensemble_vs_loop"] = (ens - torch.stack([m(X) for m in models])).abs().max()
    minib = torch.from_numpy(rng.normal(size=(4, 7, 3)))
    out["ensemble_minibatch"] = vmap(fmodel)(params, buffers, minib)
    # per-sample input gradients and Hessians of one member (saliency / Laplacian style)
    p1 = {k: v[1] for k, v in params.items()}
    b1 = {k: v[1] for k, v in buffers.items()}
    out["per_sample_input_jac"] = vmap(jacrev(lambda xi: fmodel(p1, b1, xi)))(X)
    out["per_sample_input_hess"] = vmap(hessian(lambda xi: fmodel(p1, b1, xi)))(X)

    target = torch.from_numpy(rng.normal(size=7))

    def member_loss(p, bf, x, y):
        return F.mse_loss(fmodel(p, bf, x), y)

    (gp, gb), losses = vmap(
        grad_and_value(member_loss, argnums=(0, 1)), in_dims=(0, 0, None, None)
    )(params, buffers, X, target)
    out["ens_losses"] = losses
    out["ens_grad_fc1_w"] = gp["fc1.weight"]
    out["ens_grad_shift"] = gb["shift"]
    m0 = models[1]
    m0.zero_grad()
    F.mse_loss(m0(X), target).backward()
    out["ens_grad_vs_backward"] = (gp["fc2.weight"][1] - m0.fc2.weight.grad).abs().max()

    # has_aux everywhere
    w = torch.from_numpy(rng.normal(size=3))

    def pred_aux(w):
        z = X @ w
        return torch.tanh(z), {"z": z, "norm": w.norm()}

    J, aux = jacrev(pred_aux, has_aux=True)(w)
    out["jacrev_aux_J"] = J
    out["jacrev_aux_norm"] = aux["norm"]
    _p_out, t_out, aux2 = jvp(pred_aux, (w,), (torch.ones(3),), has_aux=True)
    out["jvp_aux_tangent"] = t_out
    out["jvp_aux_z"] = aux2["z"]
    _p_out2, pullback, aux3 = vjp(pred_aux, w, has_aux=True)
    out["vjp_aux"] = pullback(torch.ones(7))[0]
    out["vjp_aux_norm_diff"] = (aux3["norm"] - aux["norm"]).abs()

    # linearize once, push a batch of tangents through vmap
    f_lin_val, f_jvp = linearize(lambda v: torch.tanh(X @ v), w)
    T = torch.from_numpy(rng.normal(size=(5, 3)))
    out["linearize_batched"] = vmap(f_jvp)(T)
    out["linearize_vs_J"] = (vmap(f_jvp)(T) - T @ J.T).abs().max()
    out["linearize_value"] = f_lin_val

    # chunk_size: same numbers as unchunked
    big = torch.from_numpy(rng.normal(size=(9, 3)))
    g_full = vmap(grad(lambda v: torch.sin(v).prod()))(big)
    g_chunk = vmap(grad(lambda v: torch.sin(v).prod()), chunk_size=2)(big)
    out["chunk_vmap"] = g_chunk
    out["chunk_vmap_diff"] = (g_full - g_chunk).abs().max()
    J_chunk = jacrev(lambda v: torch.tanh(X @ v), chunk_size=3)(w)
    out["chunk_jacrev_diff"] = (J_chunk - J).abs().max()
    return out


TOLERANCE = {
    "gram_vs_cdist": (1e-6, 1e-12),
    "ensemble_vs_loop": (1e-6, 1e-12),
    "ens_grad_vs_backward": (1e-6, 1e-12),
    "vjp_aux_norm_diff": (1e-6, 1e-12),
    "linearize_vs_J": (1e-6, 1e-12),
    "chunk_vmap_diff": (1e-6, 1e-12),
    "chunk_jacrev_diff": (1e-6, 1e-12),
}
