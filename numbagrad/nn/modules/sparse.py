"""PyTorch's ``torch.nn.modules.sparse`` names (``Embedding`` lives in ``layers.py``)."""

from numbagrad.nn.modules.layers import Embedding

__all__ = ["Embedding"]
