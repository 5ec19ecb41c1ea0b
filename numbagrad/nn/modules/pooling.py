"""Pooling layers (PyTorch's ``torch.nn.modules.pooling``)."""

from __future__ import annotations

from typing import Any

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


class _MaxPoolNd(Module):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices=False,
        ceil_mode=False,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling layer (PyTorch's ``nn.MaxPool1d``; see
    :func:`numbagrad.nn.functional.max_pool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MaxPool1d(2)
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling layer (PyTorch's ``nn.MaxPool2d``; see
    :func:`numbagrad.nn.functional.max_pool2d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MaxPool2d(2)(numbagrad.zeros(1, 3, 8, 8)).shape
    numbagrad.Size([1, 3, 4, 4])
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling layer (PyTorch's ``nn.MaxPool3d``; see
    :func:`numbagrad.nn.functional.max_pool3d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MaxPool3d(2)(numbagrad.zeros(1, 4, 4, 4)).shape
    numbagrad.Size([1, 2, 2, 2])
    """

    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """1-D average pooling layer (PyTorch's ``nn.AvgPool1d``; see
    :func:`numbagrad.nn.functional.avg_pool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(v):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,)


class _AvgPoolNd(Module):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling layer (PyTorch's ``nn.AvgPool2d``; see
    :func:`numbagrad.nn.functional.avg_pool2d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AvgPool2d(3, 1, 1)
    AvgPool2d(kernel_size=3, stride=1, padding=1)
    """

    _fn = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling layer (PyTorch's ``nn.AvgPool3d``; see
    :func:`numbagrad.nn.functional.avg_pool3d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AvgPool3d(2)(numbagrad.ones(1, 4, 4, 4)).shape
    numbagrad.Size([1, 2, 2, 2])
    """

    _fn = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-D adaptive average pooling layer (PyTorch's ``nn.AdaptiveAvgPool1d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AdaptiveAvgPool1d(4)(numbagrad.ones(2, 3, 10)).shape
    numbagrad.Size([2, 3, 4])
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-D adaptive average pooling layer (PyTorch's ``nn.AdaptiveAvgPool2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AdaptiveAvgPool2d((1, None))
    AdaptiveAvgPool2d(output_size=(1, None))
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-D adaptive average pooling layer (PyTorch's ``nn.AdaptiveAvgPool3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AdaptiveAvgPool3d(1)(numbagrad.ones(1, 2, 3, 4, 5)).shape
    numbagrad.Size([1, 2, 1, 1, 1])
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-D adaptive max pooling layer (PyTorch's ``nn.AdaptiveMaxPool1d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AdaptiveMaxPool1d(3)
    AdaptiveMaxPool1d(output_size=3)
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-D adaptive max pooling layer (PyTorch's ``nn.AdaptiveMaxPool2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AdaptiveMaxPool2d((2, 3))(numbagrad.ones(1, 5, 7)).shape
    numbagrad.Size([1, 2, 3])
    """

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-D adaptive max pooling layer (PyTorch's ``nn.AdaptiveMaxPool3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.AdaptiveMaxPool3d(2)(numbagrad.ones(1, 4, 4, 4)).shape
    numbagrad.Size([1, 2, 2, 2])
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(Module):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self):
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling layer (PyTorch's ``nn.LPPool1d``; see
    :func:`numbagrad.nn.functional.lp_pool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LPPool1d(1.5, 2, 1)
    LPPool1d(norm_type=1.5, kernel_size=2, stride=1, ceil_mode=False)
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling layer (PyTorch's ``nn.LPPool2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LPPool2d(2, 3)(numbagrad.ones(1, 1, 6, 6)).shape
    numbagrad.Size([1, 1, 2, 2])
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling layer (PyTorch's ``nn.LPPool3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LPPool3d(2, 2)(numbagrad.ones(1, 1, 2, 2, 2)).shape
    numbagrad.Size([1, 1, 1, 1, 1])
    """

    _fn = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    _fn: Any = None  # the functional form, set by each subclass
    _k = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        k = self._k
        self.kernel_size = _ntuple(kernel_size, k)
        self.stride = _ntuple(stride if stride is not None else kernel_size, k)
        self.padding = _ntuple(padding, k)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _ntuple(v, k):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * k


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d`` (PyTorch's ``nn.MaxUnpool1d``; see
    :func:`numbagrad.nn.functional.max_unpool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MaxUnpool1d(3, 2, 1)
    MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))
    """

    _fn = staticmethod(F.max_unpool1d)
    _k = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d`` (PyTorch's ``nn.MaxUnpool2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _fn = staticmethod(F.max_unpool2d)
    _k = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d`` (PyTorch's ``nn.MaxUnpool3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    _fn = staticmethod(F.max_unpool3d)
    _k = 3


class _FractionalMaxPoolNd(Module):
    _k = 2
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(
        self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
        _random_samples=None,
    ):  # fmt: skip
        super().__init__()
        k = self._k
        name = type(self).__name__

        def tup(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * k

        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling layer (PyTorch's ``nn.FractionalMaxPool2d``; see
    :func:`numbagrad.nn.functional.fractional_max_pool2d`): windows of ``kernel_size`` at
    pseudo-random steps, drawn from the global generator at each call unless
    ``_random_samples`` is given.

    Examples
    --------
    >>> import numbagrad
    >>> pool = numbagrad.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    >>> pool(numbagrad.randn(1, 2, 10, 8)).shape
    numbagrad.Size([1, 2, 5, 4])
    """

    _k = 2
    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling layer (PyTorch's ``nn.FractionalMaxPool3d``; see
    :func:`numbagrad.nn.functional.fractional_max_pool3d`).

    Examples
    --------
    >>> import numbagrad
    >>> pool = numbagrad.nn.FractionalMaxPool3d(2, output_size=(2, 3, 3))
    >>> pool(numbagrad.randn(1, 1, 5, 6, 6)).shape
    numbagrad.Size([1, 1, 2, 3, 3])
    """

    _k = 3
    _fn = staticmethod(F.fractional_max_pool3d)
