"""TRPO-style natural-gradient step (pytorch-trpo style, older Variable idiom): Fisher-vector
products by double backward of the KL, conjugate gradient, ``parameters_to_vector`` /
``vector_to_parameters`` and a backtracking line search."""

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.set_default_dtype(torch.float64)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.action_mean = nn.Linear(16, 2)
        self.action_log_std = nn.Parameter(torch.zeros(1, 2))

    def forward(self, x):
        x = torch.tanh(self.affine1(x))
        mean = self.action_mean(x)
        log_std = self.action_log_std.expand_as(mean)
        return mean, log_std, torch.exp(log_std)


def normal_log_density(x, mean, log_std, std):
    var = std.pow(2)
    log_density = -(x - mean).pow(2) / (2 * var) - 0.5 * np.log(2 * np.pi) - log_std
    return log_density.sum(1, keepdim=True)


def conjugate_gradients(Avp, b, nsteps, residual_tol=1e-10):
    x = torch.zeros(b.size())
    r = b.clone()
    p = b.clone()
    rdotr = torch.dot(r, r)
    for _ in range(nsteps):
        _Avp = Avp(p)
        alpha = rdotr / torch.dot(p, _Avp)
        x += alpha * p
        r -= alpha * _Avp
        new_rdotr = torch.dot(r, r)
        p = r + new_rdotr / rdotr * p
        rdotr = new_rdotr
        if rdotr < residual_tol:
            break
    return x


def main():
    rng = np.random.default_rng(38)
    policy = Policy()
    with torch.no_grad():
        for p in policy.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape))))
    states = Variable(torch.from_numpy(rng.normal(size=(32, 4))))
    actions = Variable(torch.from_numpy(rng.normal(size=(32, 2))))
    advantages = torch.from_numpy(rng.normal(size=(32, 1)))
    mean0, log_std0, std0 = policy(states)
    fixed_log_prob = normal_log_density(actions, mean0, log_std0, std0).data.clone()

    def get_loss():
        mean, log_std, std = policy(states)
        log_prob = normal_log_density(actions, mean, log_std, std)
        return (-advantages * torch.exp(log_prob - fixed_log_prob)).mean()

    def get_kl():
        mean1, log_std1, std1 = policy(states)
        mean0, log_std0, std0 = mean1.detach(), log_std1.detach(), std1.detach()
        kl = (
            log_std1 - log_std0 + (std0.pow(2) + (mean0 - mean1).pow(2)) / (2.0 * std1.pow(2)) - 0.5
        )
        return kl.sum(1, keepdim=True)

    def Fvp(v, damping=1e-2):
        kl = get_kl().mean()
        grads = torch.autograd.grad(kl, policy.parameters(), create_graph=True)
        flat_grad_kl = torch.cat([grad.view(-1) for grad in grads])
        kl_v = (flat_grad_kl * Variable(v)).sum()
        grads = torch.autograd.grad(kl_v, policy.parameters())
        flat_grad_grad_kl = torch.cat([grad.contiguous().view(-1) for grad in grads]).data
        return flat_grad_grad_kl + v * damping

    loss = get_loss()
    grads = torch.autograd.grad(loss, policy.parameters())
    loss_grad = torch.cat([grad.view(-1) for grad in grads]).data
    stepdir = conjugate_gradients(Fvp, -loss_grad, 10)
    shs = 0.5 * (stepdir * Fvp(stepdir)).sum(0, keepdim=True)
    lm = torch.sqrt(shs / 1e-2)
    fullstep = stepdir / lm[0]
    prev = parameters_to_vector(policy.parameters())
    fval = get_loss().data
    accepted = 0.0
    for stepfrac in 0.5 ** np.arange(10):
        vector_to_parameters(prev + stepfrac * fullstep, policy.parameters())
        with torch.no_grad():
            newfval = get_loss()
        if (fval - newfval).item() > 0:
            accepted = float(stepfrac)
            break
    return {
        "loss_grad": loss_grad,
        "stepdir": stepdir,
        "shs": shs,
        "accepted": accepted,
        "new_params": parameters_to_vector(policy.parameters()),
        "n_params": float(prev.numel()),
    }
