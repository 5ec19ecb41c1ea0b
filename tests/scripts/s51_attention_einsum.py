"""A single causal self-attention block written out with ``einsum`` (minGPT-style): causal
mask with ``masked_fill(-inf)``, ``softmax``, ``LayerNorm``, residual MLP with GELU
(tanh approximation), and gradients of a next-token cross-entropy."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd=8, n_head=2, block_size=5):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer(
            "bias",
            torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size),
        )

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = torch.einsum("bhtd,bhsd->bhts", q, k) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(8), nn.LayerNorm(8)
        self.attn = CausalSelfAttention()
        self.mlp = nn.Sequential(nn.Linear(8, 32), nn.GELU(approximate="tanh"), nn.Linear(32, 8))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


def main():
    rng = np.random.default_rng(51)
    block, head = Block(), nn.Linear(8, 11)
    for p in list(block.parameters()) + list(head.parameters()):
        with torch.no_grad():
            p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape))))
    x = torch.from_numpy(rng.normal(size=(3, 5, 8)))
    targets = torch.from_numpy(rng.integers(0, 11, size=(3, 5)))
    logits = head(block(x))
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    loss.backward()
    return {
        "loss": loss.item(),
        "logits": logits,
        "g_attn": block.attn.c_attn.weight.grad,
        "g_ln": block.ln_1.weight.grad,
    }
