"""Jacobians and Hessians tutorial (torch.func): jacrev / jacfwd / hessian of a small
prediction function, batched Jacobians with vmap, and the autograd.functional versions."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd.functional import jacobian
from torch.func import hessian, jacfwd, jacrev, vmap


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


def main():
    rng = np.random.default_rng(18)
    D = 4
    weight = torch.from_numpy(rng.normal(size=(D, D)))
    bias = torch.from_numpy(rng.normal(size=D))
    x = torch.from_numpy(rng.normal(size=D))
    jr = jacrev(predict, argnums=2)(weight, bias, x)
    jf = jacfwd(predict, argnums=2)(weight, bias, x)
    jw, jb = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    hess = hessian(lambda v: predict(weight, bias, v).sum())(x)
    hess2 = jacfwd(jacrev(lambda v: predict(weight, bias, v).sum()))(x)
    xb = torch.from_numpy(rng.normal(size=(3, D)))
    batch_jac = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb)
    jac_af = jacobian(lambda v: predict(weight, bias, v), x)
    return {
        "jr": jr,
        "jf": jf,
        "jw": jw,
        "jb": jb,
        "hess": hess,
        "hess2": hess2,
        "batch_jac": batch_jac,
        "jac_af": jac_af,
    }
