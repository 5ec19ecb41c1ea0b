"""``numbagrad.utils``: helpers scripts import from ``torch.utils`` (``checkpoint``,
``data``)."""

from numbagrad.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
