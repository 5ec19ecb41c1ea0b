"""``PixelShuffle`` and ``PixelUnshuffle`` (PyTorch's ``torch.nn.modules.pixelshuffle``)."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C r^2, H, W)`` into ``(*, C, H r, W r)`` (PyTorch's
    ``nn.PixelShuffle``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.PixelShuffle(3)(numbagrad.zeros(1, 9, 4, 4)).shape
    numbagrad.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H r, W r)`` into ``(*, C r^2, H, W)`` (PyTorch's
    ``nn.PixelUnshuffle``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.PixelUnshuffle(2)(numbagrad.zeros(1, 1, 4, 4)).shape
    numbagrad.Size([1, 4, 2, 2])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
