"""Maximum-likelihood Student-t fit using ``torch.special`` (gammaln/lgamma, digamma, xlogy,
log1p) plus a few other special functions and their gradients."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.special as special

torch.set_default_dtype(torch.float64)


def student_t_logpdf(x, df, loc, scale):
    z = (x - loc) / scale
    return (
        special.gammaln((df + 1) / 2)
        - special.gammaln(df / 2)
        - 0.5 * torch.log(df * math.pi)
        - torch.log(scale)
        - (df + 1) / 2 * torch.log1p(z**2 / df)
    )


def main():
    rng = np.random.default_rng(19)
    data = torch.from_numpy(rng.standard_t(4.0, size=200) * 2.0 + 1.0)
    raw_df = nn.Parameter(torch.tensor(1.0))
    loc = nn.Parameter(torch.tensor(0.0))
    raw_scale = nn.Parameter(torch.tensor(0.0))
    opt = torch.optim.Adam([raw_df, loc, raw_scale], lr=0.05)
    nll = []
    for _ in range(40):
        opt.zero_grad()
        loss = -student_t_logpdf(
            data, nn.functional.softplus(raw_df) + 1, loc, raw_scale.exp()
        ).mean()
        loss.backward()
        opt.step()
        nll.append(loss.item())
    x = torch.linspace(0.2, 3.0, 8, requires_grad=True)
    y = (
        special.digamma(x)
        + special.erf(x)
        + special.erfc(x / 2)
        + special.i0e(x)
        + special.xlogy(x, x + 1)
        + special.log_ndtr(x - 1)
        + special.expit(x)
        + special.erfinv(x / 4)
        + special.ndtri(x / 4)
        + special.sinc(x)
    ).sum()
    (gx,) = torch.autograd.grad(y, x)
    return {
        "nll": nll,
        "df": (nn.functional.softplus(raw_df) + 1).item(),
        "loc": loc.item(),
        "y": y.item(),
        "gx": gx,
        "lgamma": torch.lgamma(x.detach()),
        "polygamma": special.polygamma(1, x.detach()),
        "logsumexp": special.logsumexp(x.detach(), dim=0).item(),
    }
