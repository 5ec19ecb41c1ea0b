"""PyTorch's ``torch.nn.modules.linear`` names (the classes live in ``layers.py``)."""

from numbagrad.nn.modules.layers import Bilinear, Identity, Linear

__all__ = ["Bilinear", "Identity", "Linear"]
