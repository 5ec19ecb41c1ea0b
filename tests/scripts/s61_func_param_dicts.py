"""``torch.func`` over module parameters held in dicts, as in the functorch tutorials and
Laplace-approximation / influence-function code: ``functional_call`` with a tuple of
(params, buffers) dicts, ``jacrev`` and ``hessian`` w.r.t. a dict (nested dict results),
the full parameter Hessian flattened into a matrix, ``vmap`` with nested ``in_dims``
(a dict inside a tuple) over an ensemble of parameter sets, ``chunk_size`` in
``vmap`` and ``jacrev`` (under ``jacfwd``), ``grad_and_value`` with ``has_aux``, and
``randomness=`` in ``vmap`` with dropout (checked through deterministic properties only)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad_and_value, hessian, jacfwd, jacrev, vmap

torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 5)
        self.fc2 = nn.Linear(5, 2)
        self.register_buffer("scale", torch.tensor([1.0, 2.0]))

    def forward(self, x):
        return self.fc2(F.softplus(self.fc1(x))) * self.scale


class DropNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def forward(self, x):
        return self.drop(x)


def main():
    rng = np.random.default_rng(61)
    net = Net()
    params = {
        k: torch.from_numpy(rng.normal(0, 0.5, size=tuple(v.shape)))
        for k, v in net.named_parameters()
    }
    buffers = {k: v.detach() for k, v in net.named_buffers()}
    x = torch.from_numpy(rng.normal(size=(6, 3)))
    y = torch.from_numpy(rng.normal(size=(6, 2)))

    def loss(p, x, y):
        pred = functional_call(net, (p, buffers), (x,))
        return F.mse_loss(pred, y)

    out = {}
    # Jacobian of the outputs w.r.t. every parameter (dict of tensors)
    jac = jacrev(lambda p: functional_call(net, (p, buffers), (x,)))(params)
    out["jac_fc1_weight"] = jac["fc1.weight"]
    out["jac_fc2_bias"] = jac["fc2.bias"]
    # Hessian w.r.t. the dict: nested dict {name: {name: block}}
    H = hessian(loss)(params, x, y)
    out["H_w1_w1"] = H["fc1.weight"]["fc1.weight"]
    out["H_w2_b1"] = H["fc2.weight"]["fc1.bias"]
    names = list(params)
    sizes = [params[n].numel() for n in names]
    rows = []
    for a, na in enumerate(names):
        rows.append(
            torch.cat([H[na][nb].reshape(sizes[a], sizes[b]) for b, nb in enumerate(names)], 1)
        )
    Hmat = torch.cat(rows, 0)
    out["H_symmetry"] = (Hmat - Hmat.T).abs().max()
    out["H_eigvals"] = torch.linalg.eigvalsh(Hmat)

    # the same Hessian through a flat parameter vector: jacfwd of a chunked jacrev
    flat0 = torch.cat([params[n].reshape(-1) for n in names])

    def unflatten(v):
        out_, i = {}, 0
        for n, s in zip(names, sizes):
            out_[n] = v[i : i + s].view_as(params[n])
            i += s
        return out_

    def flat_loss(v):
        return loss(unflatten(v), x, y)

    H2 = jacfwd(jacrev(flat_loss, chunk_size=7))(flat0)
    out["H_flat_vs_dict"] = (H2 - Hmat).abs().max()
    out["grad_chunked"] = jacrev(flat_loss, chunk_size=5)(flat0)

    # Laplace approximation: predictive variance from the GGN in parameter space
    Jf = jacrev(lambda v: functional_call(net, (unflatten(v), buffers), (x[:2],)).reshape(-1))(
        flat0
    )
    ggn = Jf.T @ Jf + 0.1 * torch.eye(flat0.numel())
    out["laplace_var"] = torch.diagonal(Jf @ torch.linalg.solve(ggn, Jf.T))

    # an ensemble: stacked params vmapped with in_dims=({...}, None, None)
    ens = {k: torch.stack([v + 0.1 * i for i in range(3)]) for k, v in params.items()}
    per_member = vmap(loss, in_dims=({k: 0 for k in ens}, None, None))(ens, x, y)
    out["ensemble_loss"] = per_member

    # per-sample gradients and values with has_aux, chunked vmap
    def sample_loss(p, xi, yi):
        pred = functional_call(net, (p, buffers), (xi.unsqueeze(0),)).squeeze(0)
        err = pred - yi
        return (err**2).sum(), err

    gv = vmap(grad_and_value(sample_loss, has_aux=True), in_dims=(None, 0, 0), chunk_size=4)
    (grads, (values, errs)) = gv(params, x, y)
    out["ps_grad_w2"] = grads["fc2.weight"]
    out["ps_values"] = values
    out["ps_err"] = errs

    # randomness: 'different' draws a separate dropout mask per batch element, 'same' one mask
    drop = DropNet()
    drop.train()
    ones = torch.ones(16, 64)
    diff = vmap(drop, randomness="different")(ones)
    same = vmap(drop, randomness="same")(ones)
    out["diff_values_ok"] = bool(((diff == 0) | (diff == 2)).all())
    out["diff_rows_differ"] = bool((diff != diff[0]).any())
    out["same_rows_equal"] = bool((same == same[0]).all())
    try:
        vmap(drop)(ones)
        out["error_mode_raises"] = False
    except RuntimeError:
        out["error_mode_raises"] = True
    drop.eval()
    out["eval_identity"] = bool((vmap(drop)(ones) == 1).all())
    return out


TOLERANCE = {"H_symmetry": (1e-6, 1e-12), "H_flat_vs_dict": (1e-6, 1e-12)}
