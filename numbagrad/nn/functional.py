"""Functional forms of the layers and losses (PyTorch's ``torch.nn.functional``).

Every function is a composite of numbagrad ops (or a primitive with its own rules), so it
gets reverse mode, forward mode and ``vmap`` from the ops' rules. Checks that read data
(class indices in range, BCE inputs in ``[0, 1]``) run only on concrete tensors, never on
values a transform owns. The functions live in ``_functional_core`` (layers, activations,
losses), ``_conv_functional`` (convolution, pooling, normalisation), ``_attention`` and
``_functional_extra`` (which build on the core).
"""

from __future__ import annotations

from numbagrad._tensor import Tensor  # noqa: F401 (as torch.nn.functional.Tensor)
from numbagrad.nn import grad  # noqa: F401 (as torch.nn.functional.grad)
from numbagrad.nn._attention import multi_head_attention_forward, scaled_dot_product_attention
from numbagrad.nn._conv_functional import *  # noqa: F403
from numbagrad.nn._conv_functional import __all__ as _conv_all
from numbagrad.nn._functional_core import *  # noqa: F403
from numbagrad.nn._functional_core import __all__ as _core_all
from numbagrad.nn._functional_core import _reduction  # noqa: F401 (the loss modules use it)
from numbagrad.nn._functional_extra import *  # noqa: F403
from numbagrad.nn._functional_extra import __all__ as _extra_all
from numbagrad.nn._functional_more import *  # noqa: F403
from numbagrad.nn._functional_more import __all__ as _more_all
from numbagrad.nn._grid import (
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
)

__all__ = [
    *_core_all,
    *_conv_all,
    *_extra_all,
    *_more_all,
    "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
    "affine_grid",
    "grid_sample",
    "multi_head_attention_forward",
    "scaled_dot_product_attention",
]
del _conv_all, _core_all, _extra_all, _more_all
