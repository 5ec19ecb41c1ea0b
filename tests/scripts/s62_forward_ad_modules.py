"""Forward-mode AD through ordinary ``nn.Module`` code with ``torch.autograd.forward_ad``
(the PyTorch "Forward-mode Automatic Differentiation" tutorial): dual inputs pushed through
``nn.Sequential`` of ``Linear``/``Tanh``/``GELU``/``LayerNorm``/``Softplus``; dual
*parameters* swapped in with ``functional_call`` (the tutorial's "Usage with Modules"
section) to get directional derivatives w.r.t. the weights; a full Jacobian assembled column
by column and compared with ``torch.autograd.functional.jacobian``; forward-over-reverse
Hessian-vector products (a dual input through ``torch.autograd.grad`` with
``create_graph=True``); and tangents through ``softmax``, ``logsumexp``, ``cross_entropy``,
``torch.where`` and in-place ops on a dual tensor."""

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(62)
    model = nn.Sequential(
        nn.Linear(4, 6),
        nn.Tanh(),
        nn.Linear(6, 6),
        nn.LayerNorm(6),
        nn.GELU(),
        nn.Linear(6, 3),
        nn.Softplus(beta=2.0),
    )
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    x = torch.from_numpy(rng.normal(size=(5, 4)))
    v = torch.from_numpy(rng.normal(size=(5, 4)))
    out = {}

    # 1. directional derivative w.r.t. the input
    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, v)
        y = model(dual_x)
        primal, tangent = fwAD.unpack_dual(y)
        out["jvp_input"] = tangent
        out["primal_matches"] = bool(torch.allclose(primal, model(x)))
        out["tangent_none_for_plain"] = fwAD.unpack_dual(model(x)).tangent is None

    # 2. directional derivative w.r.t. the parameters (tutorial: "Usage with Modules")
    params = {name: p for name, p in model.named_parameters()}
    tangents = {
        name: torch.from_numpy(rng.normal(size=tuple(p.shape))) for name, p in params.items()
    }
    with fwAD.dual_level():
        dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        y = functional_call(model, dual_params, (x,))
        out["jvp_params"] = fwAD.unpack_dual(y).tangent

    # ... and with the tutorial's other approach: delete the parameter and set a dual attribute
    lin = nn.Linear(4, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(rng.normal(size=(2, 4))))
        lin.bias.copy_(torch.from_numpy(rng.normal(size=2)))
    w_t = torch.from_numpy(rng.normal(size=(2, 4)))
    with fwAD.dual_level():
        w = lin.weight.detach()
        del lin.weight
        lin.weight = fwAD.make_dual(w, w_t)
        out["jvp_weight_attr"] = fwAD.unpack_dual(lin(x)).tangent

    # 3. full Jacobian of a single-sample map, column by column, vs autograd.functional
    def f(z):
        return model(z.unsqueeze(0)).squeeze(0)

    x0 = x[0]
    cols = []
    with fwAD.dual_level():
        for e in torch.eye(4):
            cols.append(fwAD.unpack_dual(f(fwAD.make_dual(x0, e))).tangent)
    J_fwd = torch.stack(cols, dim=1)
    J_ref = torch.autograd.functional.jacobian(f, x0)
    out["jacobian"] = J_fwd
    out["jacobian_err"] = (J_fwd - J_ref).abs().max()

    # 4. forward-over-reverse HVP: tangent of the gradient
    def energy(z):
        return (model(z) ** 2).sum()

    with fwAD.dual_level():
        xd = fwAD.make_dual(x.clone().requires_grad_(True), v)
        e = energy(xd)
        (g,) = torch.autograd.grad(e, xd, create_graph=True)
        gp, hvp = fwAD.unpack_dual(g)
    xr = x.clone().requires_grad_(True)
    (gr,) = torch.autograd.grad(energy(xr), xr, create_graph=True)
    (hvp_ref,) = torch.autograd.grad((gr * v).sum(), xr)
    out["grad"] = gp
    out["hvp"] = hvp
    out["hvp_err"] = (hvp - hvp_ref).abs().max()

    # 5. tangents through losses, masks and in-place updates
    logits = torch.from_numpy(rng.normal(size=(5, 3)))
    dlog = torch.from_numpy(rng.normal(size=(5, 3)))
    target = torch.from_numpy(rng.integers(0, 3, size=5))
    with fwAD.dual_level():
        z = fwAD.make_dual(logits, dlog)
        ce = F.cross_entropy(z, target, label_smoothing=0.1)
        sm = torch.softmax(z, dim=1)
        lse = torch.logsumexp(z, dim=1)
        masked = torch.where(z > 0, z.exp(), torch.zeros_like(z))
        buf = torch.zeros(5, 3)
        buf.add_(z * 2)  # in-place on a plain tensor with a dual operand makes it dual
        buf.mul_(z)
        out["ce_tangent"] = fwAD.unpack_dual(ce).tangent
        out["softmax_tangent"] = fwAD.unpack_dual(sm).tangent
        out["lse_tangent"] = fwAD.unpack_dual(lse).tangent
        out["where_tangent"] = fwAD.unpack_dual(masked).tangent
        out["inplace_tangent"] = fwAD.unpack_dual(buf).tangent
    return out


TOLERANCE = {"jacobian_err": (1e-6, 1e-12), "hvp_err": (1e-6, 1e-12)}
