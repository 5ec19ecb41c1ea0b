"""``numbagrad.utils``: helpers scripts import from ``torch.utils`` (``checkpoint``,
``data``, ``model_zoo``)."""

from numbagrad.utils import checkpoint, data, model_zoo

__all__ = ["checkpoint", "data", "model_zoo"]
