"""PyTorch's ``torch.nn.modules.channelshuffle``: ``ChannelShuffle``."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` input from ``groups`` groups (see
    :func:`numbagrad.nn.functional.channel_shuffle`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ChannelShuffle(2)
    ChannelShuffle(groups=2)
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
