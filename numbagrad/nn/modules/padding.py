"""Padding layers (PyTorch's ``torch.nn.modules.padding``): constant, zero, reflection,
replication and circular padding of the last 1, 2 or 3 dims, each a call of
:func:`numbagrad.nn.functional.pad`."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _amounts(padding, k):
    if isinstance(padding, int):
        return (padding,) * (2 * k)
    padding = tuple(padding)
    if len(padding) != 2 * k:
        raise ValueError(
            f"expected padding to be a single integer value or a list of {2 * k} values"
        )
    return padding


class _PadNd(Module):
    _k = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _amounts(padding, self._k)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant (PyTorch's ``nn.ConstantPad1d``); ``padding`` an
    int or ``(left, right)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ConstantPad1d(1, 3.5)(numbagrad.zeros(1, 2)).tolist()
    [[3.5, 0.0, 0.0, 3.5]]
    """

    _k = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant (PyTorch's ``nn.ConstantPad2d``); ``padding``
    an int or ``(left, right, top, bottom)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ConstantPad2d((1, 0, 0, 1), 2.0)(numbagrad.zeros(1, 1, 1)).tolist()
    [[[2.0, 0.0], [2.0, 2.0]]]
    """

    _k = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant (PyTorch's ``nn.ConstantPad3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ConstantPad3d(1, 0.5)(numbagrad.zeros(1, 1, 1, 1)).shape
    numbagrad.Size([1, 3, 3, 3])
    """

    _k = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros (PyTorch's ``nn.ZeroPad1d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ZeroPad1d(1)
    ZeroPad1d((1, 1))
    """

    _k = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros (PyTorch's ``nn.ZeroPad2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ZeroPad2d(1)(numbagrad.ones(1, 2, 2)).shape
    numbagrad.Size([1, 4, 4])
    """

    _k = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros (PyTorch's ``nn.ZeroPad3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ZeroPad3d((1, 0, 0, 0, 0, 0))(numbagrad.ones(1, 1, 1, 1)).shape
    numbagrad.Size([1, 1, 1, 2])
    """

    _k = 3


class ReflectionPad1d(_PadNd):
    """Mirror-pad the last dim, without repeating the edge (PyTorch's
    ``nn.ReflectionPad1d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReflectionPad1d(2)(numbagrad.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    _k = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Mirror-pad the last 2 dims (PyTorch's ``nn.ReflectionPad2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReflectionPad2d(1)(numbagrad.ones(1, 3, 3)).shape
    numbagrad.Size([1, 5, 5])
    """

    _k = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    """Mirror-pad the last 3 dims (PyTorch's ``nn.ReflectionPad3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReflectionPad3d(1)(numbagrad.ones(1, 1, 2, 2, 2)).shape
    numbagrad.Size([1, 1, 4, 4, 4])
    """

    _k = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating the edge (PyTorch's ``nn.ReplicationPad1d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReplicationPad1d((1, 2))(numbagrad.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 2.0, 2.0, 2.0]]
    """

    _k = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating the edges (PyTorch's ``nn.ReplicationPad2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReplicationPad2d(1)(numbagrad.ones(1, 2, 2)).shape
    numbagrad.Size([1, 4, 4])
    """

    _k = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating the edges (PyTorch's ``nn.ReplicationPad3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReplicationPad3d(1)(numbagrad.ones(1, 1, 1, 1, 1)).shape
    numbagrad.Size([1, 1, 3, 3, 3])
    """

    _k = 3
    _mode = "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around (PyTorch's ``nn.CircularPad1d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.CircularPad1d(1)(numbagrad.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    _k = 1
    _mode = "circular"


class CircularPad2d(_PadNd):
    """Pad the last 2 dims by wrapping around (PyTorch's ``nn.CircularPad2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.CircularPad2d(1)(numbagrad.ones(1, 2, 2)).shape
    numbagrad.Size([1, 4, 4])
    """

    _k = 2
    _mode = "circular"


class CircularPad3d(_PadNd):
    """Pad the last 3 dims by wrapping around (PyTorch's ``nn.CircularPad3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.CircularPad3d(1)
    CircularPad3d((1, 1, 1, 1, 1, 1))
    """

    _k = 3
    _mode = "circular"
