"""``numbagrad.utils.model_zoo``: PyTorch's ``torch.utils.model_zoo``, where ``load_url`` is
:func:`numbagrad.hub.load_state_dict_from_url`."""

from numbagrad.hub import load_state_dict_from_url as load_url
from numbagrad.hub import tqdm  # noqa: F401 (PyTorch's module exports it too)

__all__ = ["load_url"]
