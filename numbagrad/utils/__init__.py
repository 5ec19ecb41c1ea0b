"""``numbagrad.utils``: helpers scripts import from ``torch.utils`` (``checkpoint``)."""

from numbagrad.utils import checkpoint

__all__ = ["checkpoint"]
