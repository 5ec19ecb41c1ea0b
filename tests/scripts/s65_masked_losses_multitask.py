"""Multi-task regression/classification with missing labels, in the style of
property-prediction notebooks: a shared trunk and an ``nn.ModuleDict`` of heads; NaN
entries in the targets masked with ``torch.isnan``/``torch.where``/``nan_to_num`` so no NaN
reaches the gradient (the "double where" guard for ``sqrt`` and ``log`` at the boundary);
the ``torch.nn.functional`` losses ``gaussian_nll_loss`` (heteroscedastic head),
``binary_cross_entropy_with_logits`` with ``pos_weight`` and per-element ``weight``,
``kl_div`` with ``log_target=True``, ``huber_loss``/``smooth_l1_loss``/``l1_loss`` with
``reduction='none'``; parameter groups with their own learning rates and a frozen
``ParameterList``; a ``state_dict`` round trip of model and optimizer through
``torch.save``/``torch.load`` on an in-memory buffer, ``load_state_dict(strict=False)``
reporting missing and unexpected keys, and resumed training that reproduces the
uninterrupted run; evaluation in ``eval()`` mode under ``torch.no_grad()``."""

import io

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(5, 10), nn.SiLU(), nn.Linear(10, 10), nn.ELU())
        self.heads = nn.ModuleDict(
            {"mu_logvar": nn.Linear(10, 4), "logits": nn.Linear(10, 3), "dist": nn.Linear(10, 4)}
        )
        self.prior = nn.ParameterList([nn.Parameter(torch.zeros(4)), nn.Parameter(torch.ones(3))])

    def forward(self, x):
        h = self.trunk(x)
        mu, logvar = self.heads["mu_logvar"](h).chunk(2, dim=1)
        return mu, logvar, self.heads["logits"](h), F.log_softmax(self.heads["dist"](h), dim=1)


def safe_norm(v, dim):
    sq = (v * v).sum(dim)
    ok = sq > 0
    return torch.where(
        ok, torch.sqrt(torch.where(ok, sq, torch.ones_like(sq))), torch.zeros_like(sq)
    )


def losses(model, batch):
    x, y_reg, y_cls, q_log = batch
    mu, logvar, logits, p_log = model(x)
    mask = ~torch.isnan(y_reg)
    y_filled = torch.nan_to_num(y_reg, nan=0.0)
    var = torch.exp(logvar)
    nll = F.gaussian_nll_loss(mu, y_filled, var, reduction="none", full=True)
    nll = torch.where(mask, nll, torch.zeros_like(nll)).sum() / mask.sum()
    cls_mask = (y_cls >= 0).to(logits.dtype)
    bce = (
        F.binary_cross_entropy_with_logits(
            logits,
            y_cls.clamp(min=0),
            weight=cls_mask,
            pos_weight=torch.tensor([1.0, 2.0, 0.5]),
            reduction="sum",
        )
        / cls_mask.sum()
    )
    kl = F.kl_div(p_log, q_log, reduction="batchmean", log_target=True)
    robust = F.huber_loss(mu, y_filled, reduction="none", delta=0.3)
    robust = (robust * mask).sum() / mask.sum()
    return nll + bce + 0.5 * kl + robust + 1e-3 * safe_norm(model.prior[0], 0)


def make_batch(rng, n):
    x = rng.normal(size=(n, 5))
    y_reg = np.stack([x[:, 0] * x[:, 1], np.sin(x[:, 2])], 1) + 0.1 * rng.normal(size=(n, 2))
    y_reg[rng.random(size=(n, 2)) < 0.3] = np.nan
    y_cls = (x[:, 3:4] + rng.normal(size=(n, 3)) > 0).astype(np.float64)
    y_cls[rng.random(size=(n, 3)) < 0.2] = -1.0  # unlabeled
    q = rng.dirichlet(np.ones(4), size=n)
    return tuple(torch.from_numpy(a) for a in (x, y_reg, y_cls, np.log(q)))


def make_opt(model):
    return torch.optim.Adam(
        [
            {"params": model.trunk.parameters(), "lr": 0.01},
            {"params": model.heads.parameters(), "lr": 0.03, "betas": (0.8, 0.99)},
        ],
        lr=0.02,
    )


def train(model, opt, batches):
    out = []
    for b in batches:
        opt.zero_grad()
        loss = losses(model, b)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def main():
    rng = np.random.default_rng(65)
    model = MultiTask()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape))))
    for p in model.prior:
        p.requires_grad_(False)
    batches = [make_batch(rng, 16) for _ in range(6)]
    out = {}

    # the grad of the NaN-guarded loss is finite, and NaN-free even when the norm is 0
    z = torch.zeros(3, requires_grad=True)
    safe_norm(z, 0).backward()
    out["safe_norm_grad_at_zero"] = z.grad
    x_nan = torch.tensor([1.0, float("nan"), 4.0], requires_grad=True)
    guarded = torch.where(torch.isnan(x_nan), torch.zeros_like(x_nan), x_nan.clamp(min=0).sqrt())
    guarded.sum().backward()
    out["where_nan_guard_grad"] = x_nan.grad  # NaN at the masked entry, as in PyTorch

    opt = make_opt(model)
    first = train(model, opt, batches[:3])
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    rest = train(model, opt, batches[3:])

    buf.seek(0)
    ckpt = torch.load(buf)
    model2 = MultiTask()
    model2.load_state_dict(ckpt["model"])
    for p in model2.prior:
        p.requires_grad_(False)
    opt2 = make_opt(model2)
    opt2.load_state_dict(ckpt["opt"])
    resumed = train(model2, opt2, batches[3:])
    out["first"] = first
    out["rest"] = rest
    out["resumed"] = resumed
    out["resume_exact"] = bool(
        all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters()))
    )
    out["opt_step"] = opt2.state_dict()["state"][0]["step"]
    out["group_lrs"] = [g["lr"] for g in opt2.param_groups]

    partial = {k: v for k, v in ckpt["model"].items() if not k.startswith("heads.dist")}
    partial["extra.weight"] = torch.zeros(1)
    res = MultiTask().load_state_dict(partial, strict=False)
    out["missing"] = len(res.missing_keys)
    out["unexpected"] = len(res.unexpected_keys)
    out["missing_names_ok"] = sorted(res.missing_keys) == ["heads.dist.bias", "heads.dist.weight"]
    out["prior_untouched"] = model.prior[0]

    model.eval()
    with torch.no_grad():
        x, y_reg, y_cls, q_log = make_batch(rng, 8)
        mu, logvar, logits, p_log = model(x)
        err = F.l1_loss(mu, torch.nan_to_num(y_reg), reduction="none")
        out["eval_mae"] = torch.where(torch.isnan(y_reg), torch.nan, err).nanmean(0)
        out["eval_smooth_l1"] = F.smooth_l1_loss(mu, torch.nan_to_num(y_reg), beta=0.5)
        out["eval_probs"] = torch.sigmoid(logits)
        labeled = y_cls >= 0
        out["eval_cls_acc"] = ((logits > 0) == (y_cls > 0))[labeled].double().mean()
        out["eval_kl"] = F.kl_div(p_log, q_log, reduction="batchmean", log_target=True)
        out["eval_sigma"] = torch.exp(0.5 * logvar)
        out["eval_requires_grad"] = mu.requires_grad
    return out
