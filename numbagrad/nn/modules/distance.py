"""PyTorch's ``torch.nn.modules.distance``: ``CosineSimilarity`` and ``PairwiseDistance``,
modules over the functionals of the same names."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity along ``dim`` (see :func:`numbagrad.nn.functional.cosine_similarity`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.CosineSimilarity()(numbagrad.ones(2, 3), numbagrad.ones(2, 3)).shape
    numbagrad.Size([2])
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim (see
    :func:`numbagrad.nn.functional.pairwise_distance`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.PairwiseDistance()(numbagrad.zeros(1, 2), numbagrad.tensor([[3.0, 4.0]]))
    tensor([5.0000])
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
