"""WGAN-GP gradient penalty: critic gradients at random interpolates via
``autograd.grad(create_graph=True)``, penalty (||grad||_2 - 1)^2 trained into the critic."""

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn

torch.set_default_dtype(torch.float64)


def gradient_penalty(critic, real, fake, alpha):
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = critic(interpolates)
    gradients = autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=torch.ones(real.size(0), 1),
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def main():
    rng = np.random.default_rng(23)
    critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    gen = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    for p in list(critic.parameters()) + list(gen.parameters()):
        with torch.no_grad():
            p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape))))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.5, 0.9))
    out = {"d": [], "gp": [], "g": []}
    for _it in range(4):
        real = torch.from_numpy(rng.normal(2.0, 0.5, size=(16, 2)))
        z = torch.from_numpy(rng.normal(size=(16, 3)))
        alpha = torch.from_numpy(rng.uniform(size=(16, 1)))
        fake = gen(z).detach()
        opt_c.zero_grad()
        gp = gradient_penalty(critic, real, fake, alpha)
        d_loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        d_loss.backward()
        opt_c.step()
        opt_g.zero_grad()
        g_loss = -critic(gen(z)).mean()
        g_loss.backward()
        opt_g.step()
        out["d"].append(d_loss.item())
        out["gp"].append(gp.item())
        out["g"].append(g_loss.item())
    return out
