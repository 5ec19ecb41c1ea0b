"""Gradients of the convolutions with respect to their input and weight (PyTorch's
``torch.nn.grad``, also ``torch.nn.functional.grad``).

Each function runs the convolution on a zero tensor of the requested size and takes its
vector-Jacobian product with ``grad_output`` through the engine: the convolution is linear
in the operand whose gradient is asked for, so the result does not depend on that operand,
and it is differentiable again (``create_graph`` when ``grad_output`` or the other operand
requires grad).
"""

from __future__ import annotations

from numbagrad._core.grad_mode import enable_grad, is_grad_enabled
from numbagrad._creation import zeros
from numbagrad.autograd.engine import grad as _grad
from numbagrad.nn import _conv_functional as _cf

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]


def _vjp(conv, size, other, grad_output, wrt_input, stride, padding, dilation, groups):
    leaf = zeros(
        tuple(size), dtype=grad_output.dtype, device=grad_output.device, requires_grad=True
    )
    graph = is_grad_enabled() and (grad_output.requires_grad or other.requires_grad)
    with enable_grad():
        x, w = (leaf, other) if wrt_input else (other, leaf)
        out = conv(x, w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(
                f"grad_output of shape {tuple(grad_output.shape)} does not match the "
                f"convolution's output shape {tuple(out.shape)}"
            )
        (g,) = _grad(out, leaf, grad_output, create_graph=graph)
    return g


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~numbagrad.nn.functional.conv1d` with respect to an input of
    shape ``input_size``.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.ones(1, 1, 2)
    >>> numbagrad.nn.grad.conv1d_input((1, 1, 3), w, numbagrad.ones(1, 1, 2))
    tensor([[[1., 2., 1.]]])
    """
    return _vjp(_cf.conv1d, input_size, weight, grad_output, True, stride, padding, dilation,
                groups)  # fmt: skip


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~numbagrad.nn.functional.conv1d` with respect to a weight of
    shape ``weight_size``.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[[1.0, 2.0, 3.0]]])
    >>> numbagrad.nn.grad.conv1d_weight(x, (1, 1, 2), numbagrad.ones(1, 1, 2))
    tensor([[[3., 5.]]])
    """
    return _vjp(_cf.conv1d, weight_size, input, grad_output, False, stride, padding, dilation,
                groups)  # fmt: skip


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~numbagrad.nn.functional.conv2d` with respect to an input of
    shape ``input_size``.

    Examples
    --------
    >>> import numbagrad
    >>> g = numbagrad.nn.grad.conv2d_input((1, 1, 3, 3), numbagrad.ones(1, 1, 2, 2),
    ...                                    numbagrad.ones(1, 1, 2, 2))
    >>> g[0, 0, 1]
    tensor([2., 4., 2.])
    """
    return _vjp(_cf.conv2d, input_size, weight, grad_output, True, stride, padding, dilation,
                groups)  # fmt: skip


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~numbagrad.nn.functional.conv2d` with respect to a weight of
    shape ``weight_size``.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.ones(1, 1, 3, 3)
    >>> numbagrad.nn.grad.conv2d_weight(x, (1, 1, 2, 2), numbagrad.ones(1, 1, 2, 2)).shape
    numbagrad.Size([1, 1, 2, 2])
    """
    return _vjp(_cf.conv2d, weight_size, input, grad_output, False, stride, padding, dilation,
                groups)  # fmt: skip


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~numbagrad.nn.functional.conv3d` with respect to an input of
    shape ``input_size``.

    Examples
    --------
    >>> import numbagrad
    >>> w, g = numbagrad.ones(1, 1, 2, 2, 2), numbagrad.ones(1, 1, 1, 1, 1)
    >>> numbagrad.nn.grad.conv3d_input((1, 1, 2, 2, 2), w, g).sum()
    tensor(8.)
    """
    return _vjp(_cf.conv3d, input_size, weight, grad_output, True, stride, padding, dilation,
                groups)  # fmt: skip


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~numbagrad.nn.functional.conv3d` with respect to a weight of
    shape ``weight_size``.

    Examples
    --------
    >>> import numbagrad
    >>> x, g = numbagrad.ones(1, 1, 2, 2, 2), numbagrad.ones(1, 1, 1, 1, 1)
    >>> numbagrad.nn.grad.conv3d_weight(x, (1, 1, 2, 2, 2), g).sum()
    tensor(8.)
    """
    return _vjp(_cf.conv3d, weight_size, input, grad_output, False, stride, padding, dilation,
                groups)  # fmt: skip
