"""Dropout modules (PyTorch's ``torch.nn.modules.dropout``): ``Dropout`` (defined in
``layers.py``), the channel dropouts ``Dropout1d/2d/3d`` and the SELU-preserving
``AlphaDropout``/``FeatureAlphaDropout``."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.layers import Dropout
from numbagrad.nn.modules.module import Module

__all__ = [
    "AlphaDropout",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "FeatureAlphaDropout",
]


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)``/``(C, L)`` input in training.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)``/``(C, H, W)`` input in training.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Dropout2d().eval()(numbagrad.ones(1, 2, 2, 2)).sum()
    tensor(8.)
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)``/``(C, D, H, W)`` input in training.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Dropout3d(0.1)
    Dropout3d(p=0.1, inplace=False)
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout keeping SELU's self-normalisation (see
    :func:`numbagrad.nn.functional.alpha_dropout`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AlphaDropout(0.2)
    AlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """:class:`AlphaDropout` of whole channels.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.FeatureAlphaDropout(0.2)
    FeatureAlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
