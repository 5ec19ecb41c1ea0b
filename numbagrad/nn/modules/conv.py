"""Convolution layers (PyTorch's ``torch.nn.modules.conv``): ``Conv1d/2d/3d``,
``ConvTranspose1d/2d/3d``, ``Unfold`` and ``Fold``."""

from __future__ import annotations

import math
from typing import Any

from numbagrad._creation import empty
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn.modules.layers import _factory
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "Fold",
    "Unfold",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v) if len(v) == n else tuple(v) * n if len(v) == 1 else tuple(v)
    return (v,) * n


class _ConvNd(Module):
    _k = 0
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
        device=None,
        dtype=None,
    ):
        super().__init__()
        k = self._k
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_strings}"
                )
            if padding == "same" and any(s != 1 for s in _ntuple(stride, k)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        dt = _factory(device, dtype)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, k)
        self.stride = _ntuple(stride, k)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, k)
        self.dilation = _ntuple(dilation, k)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, k)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * k
            if padding == "same":
                for d, kk, i in zip(self.dilation, self.kernel_size, range(k - 1, -1, -1)):
                    total = d * (kk - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [
                p for p in reversed(self.padding) for _ in (0, 1)
            ]
        if transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dt))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw PyTorch's default initialisation again: ``kaiming_uniform_(a=sqrt(5))`` for
        the weight, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            0,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution layer over ``(N, C_in, L)`` (PyTorch's ``nn.Conv1d``).

    ``weight`` is ``(out_channels, in_channels / groups, kernel_size)`` and ``bias``
    ``(out_channels,)``, both drawn as PyTorch does (``kaiming_uniform_(a=sqrt(5))``, bias
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``). ``padding`` is an int, a tuple, ``'valid'`` or
    ``'same'``; ``padding_mode`` is ``'zeros'``, ``'reflect'``, ``'replicate'`` or
    ``'circular'``.

    Examples
    --------
    >>> import numbagrad
    >>> conv = numbagrad.nn.Conv1d(3, 8, 5, padding=2)
    >>> conv
    Conv1d(3, 8, kernel_size=(5,), stride=(1,), padding=(2,))
    >>> conv(numbagrad.zeros(4, 3, 20)).shape
    numbagrad.Size([4, 8, 20])
    """

    _k = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution layer over ``(N, C_in, H, W)`` (PyTorch's ``nn.Conv2d``); arguments
    as :class:`Conv1d`, each size an int or a pair.

    Examples
    --------
    >>> import numbagrad
    >>> conv = numbagrad.nn.Conv2d(1, 32, 3, 1)
    >>> conv
    Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))
    >>> conv(numbagrad.zeros(2, 1, 28, 28)).shape
    numbagrad.Size([2, 32, 26, 26])
    """

    _k = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution layer over ``(N, C_in, D, H, W)`` (PyTorch's ``nn.Conv3d``);
    arguments as :class:`Conv1d`, each size an int or a triple.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Conv3d(2, 4, 3, padding=1)(numbagrad.zeros(1, 2, 5, 5, 5)).shape
    numbagrad.Size([1, 4, 5, 5, 5])
    """

    _k = 3
    _fn = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    _fn: Any = None  # the functional form, set by each subclass

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input, output_size):
        k = self._k
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)
        if len(output_size) == input.ndim:
            output_size = output_size[2:] if input.ndim == k + 2 else output_size[1:]
        output_size = output_size[-k:]
        if len(output_size) != k:
            raise ValueError(
                f"ConvTranspose{k}D: for {input.ndim}D input, output_size must have {k} or "
                f"{input.ndim} elements (got {len(output_size)})"
            )
        res = []
        for d in range(k):
            n = input.shape[input.ndim - k + d]
            lo = (
                (n - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            hi = lo + self.stride[d] - 1
            if not lo <= output_size[d] <= hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{lo} to {hi} (for an input of {list(input.shape[input.ndim - k :])})"
                )
            res.append(output_size[d] - lo)
        return tuple(res)

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return type(self)._fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            op,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution layer (PyTorch's ``nn.ConvTranspose1d``): ``weight`` is
    ``(in_channels, out_channels / groups, kernel_size)``; ``forward(input, output_size)``
    may ask for an output size, which sets the output padding.

    Examples
    --------
    >>> import numbagrad
    >>> up = numbagrad.nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1)
    >>> up(numbagrad.zeros(1, 4, 10)).shape
    numbagrad.Size([1, 2, 20])
    """

    _k = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution layer (PyTorch's ``nn.ConvTranspose2d``); arguments as
    :class:`ConvTranspose1d`.

    Examples
    --------
    >>> import numbagrad
    >>> up = numbagrad.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    >>> up(numbagrad.zeros(1, 4, 5, 5), output_size=(10, 10)).shape
    numbagrad.Size([1, 2, 10, 10])
    """

    _k = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution layer (PyTorch's ``nn.ConvTranspose3d``); arguments as
    :class:`ConvTranspose1d`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ConvTranspose3d(2, 1, 2, stride=2)(numbagrad.zeros(1, 2, 3, 3, 3)).shape
    numbagrad.Size([1, 1, 6, 6, 6])
    """

    _k = 3
    _fn = staticmethod(F.conv_transpose3d)


class Unfold(Module):
    """Extract sliding local blocks (PyTorch's ``nn.Unfold``; see
    :func:`numbagrad.nn.functional.unfold`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Unfold(kernel_size=(2, 3))(numbagrad.zeros(2, 5, 3, 4)).shape
    numbagrad.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )


class Fold(Module):
    """Sum sliding local blocks into an image (PyTorch's ``nn.Fold``; see
    :func:`numbagrad.nn.functional.fold`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(numbagrad.zeros(1, 12, 12)).shape
    numbagrad.Size([1, 3, 4, 5])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self):
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )
