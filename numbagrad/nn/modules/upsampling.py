"""Upsampling layers (PyTorch's ``torch.nn.modules.upsampling``)."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resample by ``size`` or ``scale_factor`` (PyTorch's ``nn.Upsample``; see
    :func:`numbagrad.nn.functional.interpolate`).

    Examples
    --------
    >>> import numbagrad
    >>> up = numbagrad.nn.Upsample(scale_factor=2, mode="bilinear")
    >>> up
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> up(numbagrad.ones(1, 1, 2, 3)).shape
    numbagrad.Size([1, 1, 4, 6])
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling (PyTorch's ``nn.UpsamplingNearest2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.UpsamplingNearest2d(scale_factor=2)(numbagrad.ones(1, 1, 2, 2)).shape
    numbagrad.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with ``align_corners=True`` (PyTorch's
    ``nn.UpsamplingBilinear2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.UpsamplingBilinear2d(size=(3, 3))(numbagrad.ones(1, 1, 2, 2)).shape
    numbagrad.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
