"""Convolutions, pooling, ``unfold``/``fold``, normalisation and resampling of
``nn.functional`` (NOTE [Convolution design] in ``nn/_conv.py``).

Each is a composite of numbagrad ops and the primitives of ``nn/_conv.py`` and
``nn/_resample.py``, so reverse mode (double backward included), forward mode and ``vmap``
come from their rules. Average pooling, adaptive average pooling and the antialiased
modes of ``interpolate`` are separable linear maps applied per dim by ``_apply_dims``
(each output gathers its window); the other modes of ``interpolate`` are one ``Upsample``
primitive (NOTE [Resampling]).
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as _D
from numbagrad import ops as _ops
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import as_tensor
from numbagrad._tensor import Tensor
from numbagrad.nn._conv import (
    AdaptiveMaxIndices,
    Col2Im,
    Im2Col,
    MaxPoolIndices,
    WindowPut,
    gather_windows,
    out_size,
)
from numbagrad.nn._functional_core import layer_norm, pad
from numbagrad.nn._resample import Upsample, axis_table
from numbagrad.ops._op import bind

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "group_norm",
    "instance_norm",
    "interpolate",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "rms_norm",
    "unfold",
    "upsample",
]


def _tuple(v, n, name="argument"):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = tuple(v) * n
        if len(v) != n:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} values"
            )
        return tuple(int(e) for e in v)
    return (int(v),) * n


def _type_name(t):
    return {"float32": "float", "float64": "double", "float16": "Half"}.get(
        t.dtype.np.name, t.dtype.np.name
    )


def _check_floating(name, *ts):
    for t in ts:
        if t is not None and not t.dtype.is_floating_point:
            raise RuntimeError(f"\"{name}\" not implemented for '{t.dtype.np.name}'")


# -- convolutions -------------------------------------------------------------------------
def _batched(input, k, name):
    """``input`` with a batch dim (unbatched ``(C, *spatial)`` gets one) and whether it was
    added."""
    if input.ndim == k + 1:
        return _ops.unsqueeze(input, 0), True
    if input.ndim != k + 2:
        raise RuntimeError(
            f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    return input, False


def _same_padding(k, dilation, kernel):
    """``padding='same'``: (left, right) per spatial dim, the extra one on the right."""
    out = []
    for d, kk in zip(dilation, kernel):
        total = d * (kk - 1)
        out.append((total // 2, total - total // 2))
    return out


def _conv(input, weight, bias, stride, padding, dilation, groups, k, name):
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{name}(): argument 'input' and 'weight' must be Tensors")
    stride = _tuple(stride, k, "stride")
    dilation = _tuple(dilation, k, "dilation")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if weight.ndim != k + 2:
        raise RuntimeError(
            f"weight should have at least three dimensions and {k + 2} for {name}, "
            f"but got weight of size {list(weight.shape)}"
        )
    x, unbatched = _batched(input, k, name)
    _check_floating(name, x)
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != x.dtype):
        other = weight if x.dtype != weight.dtype else bias
        which = "weight" if other is weight else "bias"
        raise RuntimeError(
            f"Input type ({_type_name(x)}) and {which} type ({_type_name(other)}) should be "
            "the same"
        )
    out_c, cpg = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    if out_c % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size {list(weight.shape)} instead"
        )
    if x.shape[1] != cpg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {cpg * groups} channels, but got {x.shape[1]} channels "
            "instead"
        )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_c):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{out_c} elements, but got bias of size {list(bias.shape)} instead"
        )
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * k
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pairs = _same_padding(k, dilation, kernel)
            if any(a != b for a, b in pairs):
                amounts = []
                for a, b in reversed(pairs):
                    amounts += [a, b]
                x = _ops_pad(x, amounts)
                padding = (0,) * k
            else:
                padding = tuple(a for a, _ in pairs)
        else:
            raise ValueError(
                f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}"
            )
    else:
        padding = _tuple(padding, k, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
    spatial = tuple(x.shape[2:])
    padded = tuple(n + 2 * p for n, p in zip(spatial, padding))
    eff = tuple(d * (kk - 1) + 1 for d, kk in zip(dilation, kernel))
    if any(e > n for e, n in zip(eff, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
            "actual input size"
        )
    osz = tuple(
        out_size(n, kk, s, p, d)
        for n, kk, s, p, d in zip(spatial, kernel, stride, padding, dilation)
    )
    n = x.shape[0]
    if (
        groups == 1
        and all(kk == 1 for kk in kernel)
        and all(st == 1 for st in stride)
        and not any(padding)
    ):
        # a 1x1 convolution is a product over the channels: (C_out, C_in) @ (N, C_in, L), no
        # im2col copy and no transpose of the result (an FNO's pointwise layers)
        out = _ops.matmul(
            _ops.reshape(weight, (out_c, cpg)), _ops.reshape(x, (n, cpg, math.prod(spatial)))
        )
        if bias is not None:
            out = out + _ops.reshape(bias, (out_c, 1))
        out = _ops.reshape(out, (n, out_c, *spatial))
        return _ops.squeeze(out, 0) if unbatched else out
    params = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
    cols = bind(Im2Col, (x,), params)  # (C * K, N, L)
    ck = cpg * math.prod(kernel)
    nl = n * math.prod(osz)
    if groups == 1:
        out = _ops.matmul(_ops.reshape(weight, (out_c, ck)), _ops.reshape(cols, (ck, nl)))
    else:
        w = _ops.reshape(weight, (groups, out_c // groups, ck))
        out = _ops.matmul(w, _ops.reshape(cols, (groups, ck, nl)))
    out = _ops.reshape(out, (out_c, nl))
    if bias is not None:
        out = out + _ops.reshape(bias, (out_c, 1))
    out = _ops.movedim(_ops.reshape(out, (out_c, n, *osz)), 0, 1).contiguous()
    return _ops.squeeze(out, 0) if unbatched else out


def _ops_pad(x, amounts, mode="constant"):
    return pad(x, amounts, mode)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over ``(N, C_in, L)`` or ``(C_in, L)`` inputs.

    Parameters
    ----------
    input : Tensor
    weight : Tensor
        ``(C_out, C_in / groups, kL)``.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, padding, dilation : int or tuple
        ``padding`` may also be ``'valid'`` (none) or ``'same'`` (output as long as the
        input; stride 1 only).
    groups : int
        Input and output channels split into ``groups`` independent blocks.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv1d(numbagrad.ones(1, 1, 5), numbagrad.ones(1, 1, 3)).tolist()
    [[[3.0, 3.0, 3.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    ``weight`` is ``(C_out, C_in / groups, kH, kW)``; the other arguments as
    :func:`conv1d`, each an int or a pair.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv2d(numbagrad.ones(1, 1, 4, 4), numbagrad.ones(2, 1, 3, 3), padding=1).shape
    numbagrad.Size([1, 2, 4, 4])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over ``(N, C_in, D, H, W)`` or ``(C_in, D, H,
    W)``.

    ``weight`` is ``(C_out, C_in / groups, kD, kH, kW)``; the other arguments as
    :func:`conv1d`, each an int or a triple.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv3d(numbagrad.ones(1, 1, 3, 3, 3), numbagrad.ones(1, 1, 2, 2, 2)).shape
    numbagrad.Size([1, 1, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(
    input, weight, bias, stride, padding, output_padding, groups, dilation, k, name
):
    stride = _tuple(stride, k, "stride")
    padding = _tuple(padding, k, "padding")
    output_padding = _tuple(output_padding, k, "output_padding")
    dilation = _tuple(dilation, k, "dilation")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(op < 0 or (op >= s and op >= d) for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation")
    if weight.ndim != k + 2:
        raise RuntimeError(
            f"weight should have {k + 2} dimensions for {name}, but got weight of size "
            f"{list(weight.shape)}"
        )
    x, unbatched = _batched(input, k, name)
    _check_floating(name, x)
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != x.dtype):
        other = weight if x.dtype != weight.dtype else bias
        which = "weight" if other is weight else "bias"
        raise RuntimeError(
            f"Input type ({_type_name(x)}) and {which} type ({_type_name(other)}) should be "
            "the same"
        )
    in_c, opg = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    if x.shape[1] != in_c:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {in_c} channels, but got {x.shape[1]} channels instead"
        )
    if in_c % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size {list(weight.shape)} instead"
        )
    out_c = opg * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_c):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {out_c} elements, but got bias of size {list(bias.shape)} "
            "instead"
        )
    spatial = tuple(x.shape[2:])
    size = tuple(
        (n - 1) * s - 2 * p + d * (kk - 1) + op + 1
        for n, s, p, d, kk, op in zip(spatial, stride, padding, dilation, kernel, output_padding)
    )
    if any(v <= 0 for v in size):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, spatial))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, size))}). Output size is too small"
        )
    n = x.shape[0]
    ln = math.prod(spatial)
    ipg = in_c // groups
    kp = math.prod(kernel)
    xr = _ops.reshape(_ops.movedim(x, 1, 0), (groups, ipg, n * ln))
    w = _ops.transpose(_ops.reshape(weight, (groups, ipg, opg * kp)), -1, -2)
    cols = _ops.reshape(_ops.matmul(w, xr), (out_c * kp, n, ln))
    params = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
    # (an output padding of at least the stride, allowed below the dilation, makes room for
    # more windows than the input has positions: the count is given)
    out = bind(Col2Im, (cols,), dict(params, size=size, blocks=spatial))
    if bias is not None:
        out = out + _ops.reshape(bias, (out_c,) + (1,) * k)
    return _ops.squeeze(out, 0) if unbatched else out


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """1-D transposed convolution (the gradient of :func:`conv1d` with respect to its input).

    ``weight`` is ``(C_in, C_out / groups, kL)``; the output length is ``(L - 1) stride - 2
    padding + dilation (kL - 1) + output_padding + 1``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv_transpose1d(numbagrad.ones(1, 1, 3), numbagrad.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 2.0, 1.0]]]
    """
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        1,
        "conv_transpose1d",
    )


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """2-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, kH, kW)``, the
    arguments as :func:`conv_transpose1d`, each an int or a pair.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv_transpose2d(numbagrad.ones(1, 2, 3, 3), numbagrad.ones(2, 4, 2, 2), stride=2).shape
    numbagrad.Size([1, 4, 6, 6])
    """
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        2,
        "conv_transpose2d",
    )


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """3-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, kD, kH, kW)``, the
    arguments as :func:`conv_transpose1d`, each an int or a triple.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv_transpose3d(numbagrad.ones(1, 1, 2, 2, 2), numbagrad.ones(1, 1, 2, 2, 2)).shape
    numbagrad.Size([1, 1, 3, 3, 3])
    """
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        3,
        "conv_transpose3d",
    )


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of a batched ``(N, C, H, W)`` (or unbatched ``(C, H, W)``)
    input as columns: ``(N, C * kH * kW, L)``, ``L`` the number of blocks.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.unfold(numbagrad.arange(16.0).reshape(1, 1, 4, 4), 2, stride=2)[0, :, 0].tolist()
    [0.0, 1.0, 4.0, 5.0]
    """
    if input.ndim not in (3, 4):
        raise NotImplementedError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)"
        )
    kernel = _tuple(kernel_size, 2, "kernel_size")
    dilation = _tuple(dilation, 2, "dilation")
    padding = _tuple(padding, 2, "padding")
    stride = _tuple(stride, 2, "stride")
    if any(v <= 0 for v in kernel + dilation + stride) or any(p < 0 for p in padding):
        raise RuntimeError(
            "kernel size, dilation and stride should be greater than zero and padding should "
            f"be non-negative, but got kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}"
        )
    spatial = tuple(input.shape[-2:])
    blocks = [
        out_size(n, k, s, p, d) for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)
    ]
    if any(b < 1 for b in blocks) or 0 in input.shape[-3:]:
        raise RuntimeError(
            f"Given input with spatial size {spatial}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, calculated shape of the array of sliding blocks as "
            f"({blocks[0]}, {blocks[1]}), but its components must be at least one."
        )
    params = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
    cols = bind(Im2Col, (input,), params)
    return cols if input.ndim == 3 else _ops.movedim(cols, 0, 1)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns of sliding blocks ``(N, C * kH * kW, L)`` (or ``(C * kH * kW, L)``) into
    an image ``(N, C, *output_size)``: the adjoint of :func:`unfold`.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.fold(numbagrad.ones(1, 4, 4), (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    if input.ndim not in (2, 3):
        raise NotImplementedError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {input.ndim}D)"
        )
    size = _tuple(output_size, 2, "output_size")
    kernel = _tuple(kernel_size, 2, "kernel_size")
    dilation = _tuple(dilation, 2, "dilation")
    padding = _tuple(padding, 2, "padding")
    stride = _tuple(stride, 2, "stride")
    if any(v <= 0 for v in kernel + dilation + stride + size) or any(p < 0 for p in padding):
        raise RuntimeError(
            "output size, kernel size, dilation and stride should be greater than zero and "
            "padding should be non-negative"
        )
    kp = math.prod(kernel)
    if input.shape[-2] % kp:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={input.shape[-2]} and kernel_size={kernel}"
        )
    blocks = [
        out_size(n, k, s, p, d) for n, k, s, p, d in zip(size, kernel, stride, padding, dilation)
    ]
    if any(b < 1 for b in blocks) or input.shape[-1] != math.prod(blocks):
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}, expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{math.prod(blocks)}, but got input.size(2)={input.shape[-1]}."
        )
    params = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
    cols = input if input.ndim == 2 else _ops.movedim(input, 1, 0)
    return bind(Col2Im, (cols,), dict(params, size=size))


# -- pooling ------------------------------------------------------------------------------
def _pool_out(n, k, s, p, d, ceil_mode):
    """PyTorch's ``pooling_output_shape``."""
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _pool_args(input, k, kernel_size, stride, padding, dilation, name):
    kernel = _tuple(kernel_size, k, "kernel_size")
    if stride is None or (isinstance(stride, (list, tuple)) and not stride):
        stride = kernel
    else:
        stride = _tuple(stride, k, "stride")
    padding = _tuple(padding, k, "padding")
    dilation = _tuple(dilation, k, "dilation")
    if any(v <= 0 for v in kernel):
        raise RuntimeError(f"{name}: kernel_size must be greater than zero")
    if any(v <= 0 for v in stride):
        raise RuntimeError(f"{name}: stride must be greater than zero")
    if any(v <= 0 for v in dilation):
        raise RuntimeError(f"{name}: dilation must be greater than zero")
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(
            f"{name}: Expected {k + 1}D or {k + 2}D (batch mode) tensor for input, got "
            f"{list(input.shape)}"
        )
    if 0 in input.shape[input.ndim - k - 1 :]:
        raise RuntimeError(
            f"{name}: Expected {k + 1}D or {k + 2}D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got: {list(input.shape)}"
        )
    return kernel, stride, padding, dilation


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, k, name):
    kernel, stride, padding, dilation = _pool_args(
        input, k, kernel_size, stride, padding, dilation, name
    )
    for p, kk, d in zip(padding, kernel, dilation):
        if p < 0 or p > (d * (kk - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={kk} and dilation={d}"
            )
    spatial = tuple(input.shape[-k:])
    osz = tuple(
        _pool_out(n, kk, s, p, d, ceil_mode)
        for n, kk, s, p, d in zip(spatial, kernel, stride, padding, dilation)
    )
    if any(o < 1 for o in osz):
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, input.shape[-k - 1 :]))}). Calculated output "
            f"size: ({'x'.join(map(str, (input.shape[-k - 1], *osz)))}). Output size is too small"
        )
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype.np.name}'")
    params = {
        "kernel": kernel,
        "stride": stride,
        "padding": padding,
        "dilation": dilation,
        "out": osz,
    }
    idx = bind(MaxPoolIndices, (input,), params)
    if all(d == 1 for d in dilation):
        out = gather_windows(input, idx, k)
    else:
        # with dilation a window can have every tap in the padding (kernel 2, dilation 2,
        # padding 1 on a length-1 dim): its maximum is -inf, as PyTorch's, and its index
        # -1 (PyTorch returns an out-of-range index there, and its backward then writes
        # outside the gradient); no gradient flows from it
        empty = idx < 0
        out = gather_windows(input, _ops.where(empty, 0, idx), k)
        out = _ops.where(empty, float("-inf"), out)
    return (out, idx) if return_indices else out


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``; with ``return_indices`` also the
    flat index of each maximum in its input row.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.max_pool1d(numbagrad.tensor([[1.0, 3.0, 2.0, 5.0, 4.0]]), 2).tolist()
    [[3.0, 5.0]]
    """
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d"
    )


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` (arguments as
    :func:`max_pool1d`, each an int or a pair); indices are flat in ``H * W``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.max_pool2d(numbagrad.arange(16.0).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d"
    )


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (arguments as
    :func:`max_pool1d`, each an int or a triple).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.max_pool3d(numbagrad.arange(8.0).reshape(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d"
    )


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, k, name):
    kernel = _tuple(kernel_size, k, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, k, "stride")
    padding = _tuple(padding, k, "padding")
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(
            f"{name}: Expected {k + 1}D or {k + 2}D (batch mode) tensor for input, got "
            f"{list(input.shape)}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    if indices.dtype != _D.int64:
        raise RuntimeError(
            f"elements in indices should be type int64 but got: {indices.dtype.np.name}"
        )
    spatial = tuple(input.shape[-k:])
    default = [(n - 1) * s + kk - 2 * p for n, s, kk, p in zip(spatial, stride, kernel, padding)]
    if output_size is None:
        size = tuple(default)
    else:
        size = list(output_size)
        if len(size) == k + 2 or (len(size) == k + 1 and input.ndim == k + 1):
            size = size[-k:]
        if len(size) != k:
            raise ValueError(
                f"output_size should be a sequence containing {k} or {k + 2} elements, but it "
                f"has a length of '{len(size)}'"
            )
        for d in range(k):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < size[d] < hi:
                raise ValueError(
                    f'invalid output_size "{tuple(size)}" (dim {d} must be between {lo} and {hi})'
                )
        size = tuple(int(v) for v in size)
    _check_floating(name, input)
    lead = tuple(input.shape[:-k])
    # explicit sizes: a -1 cannot be inferred when a lead dim is 0 (an empty batch)
    flat = _ops.reshape(input, (*lead, math.prod(input.shape[-k:])))
    fi = _ops.reshape(indices, (*lead, math.prod(indices.shape[-k:])))
    total = math.prod(size)
    if fi.numel() and not fi._is_tracer:  # (WindowPut checks traced indices too)
        lo, hi = int(fi._data.min()), int(fi._data.max())
        if lo < 0 or hi >= total:
            bad = lo if lo < 0 else hi
            raise RuntimeError(
                f"Found an invalid max index: {bad} (output volumes are of size "
                f"{'x'.join(map(str, size))})"
            )
    out = bind(WindowPut, (flat, fi), {"size": total})
    return _ops.reshape(out, (*lead, *size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool1d`: the values written at their ``indices``
    into zeros of the unpooled size.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.tensor([[1.0, 3.0, 2.0, 5.0]])
    >>> y, i = F.max_pool1d(x, 2, return_indices=True)
    >>> F.max_unpool1d(y, i, 2).tolist()
    [[0.0, 3.0, 0.0, 5.0]]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool2d` (see :func:`max_unpool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> y, i = F.max_pool2d(numbagrad.arange(16.0).reshape(1, 4, 4), 2, return_indices=True)
    >>> F.max_unpool2d(y, i, 2).shape
    numbagrad.Size([1, 4, 4])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool3d` (see :func:`max_unpool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> y, i = F.max_pool3d(numbagrad.ones(1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(y, i, 2).shape
    numbagrad.Size([1, 2, 2, 2])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def _matrix_taps(m):
    """The ``(index, weight)`` tables, ``(out, taps)`` each, of the nonzero entries of the
    ``(out, in)`` matrix ``m``: slots past a row's entries index ``in`` with weight 0."""
    o, n = m.shape
    nz = m != 0
    width = max(1, int(nz.sum(axis=1).max()) if o else 1)
    idx = np.full((o, width), n, dtype=np.int64)
    w = np.zeros((o, width))
    for i in range(o):
        cols = np.flatnonzero(nz[i])
        idx[i, : cols.size] = cols
        w[i, : cols.size] = m[i, cols]
    return idx, w


def _apply_dims(x, maps):
    """``x`` with the ``j``-th map of ``maps`` applied along the ``j``-th of its last
    ``len(maps)`` dims, the last dim first (PyTorch's separable kernels' order): a
    separable linear map. A map is an ``(out_j, in_j)`` NumPy matrix, or the pair
    ``(index, weight)`` of ``(out_j, taps)`` tables: output ``i`` is
    ``sum_t weight[i, t] * x[index[i, t]]``, ``index`` ``in_j`` reading a zero. The tables
    keep the taps PyTorch's interpolation kernels read: those of weight 0 (an ``inf`` there
    makes a ``nan``) and the clamped duplicates at the edges.

    Each output gathers only its taps with ``index_select`` and sums them with their
    weights. A dense ``matmul`` would also multiply the zero weights by every other input,
    so one ``inf`` or ``nan`` anywhere along the dim would turn every output (and,
    backwards, every gradient) into ``nan``, where PyTorch's windowed kernels only see the
    window."""
    k = len(maps)
    out = x
    for j in reversed(range(k)):
        dim = x.ndim - k + j
        idx, w = maps[j] if isinstance(maps[j], tuple) else _matrix_taps(maps[j])
        o, width = idx.shape
        after = x.ndim - 1 - dim
        n = x.shape[dim]
        if o == 1 and width == n and np.array_equal(idx[0], np.arange(n)) and np.all(w == w[0, 0]):
            # one window over the whole dim (global average pooling): a sum
            wt = np.full((1,) + (1,) * after, w[0, 0], dtype=x.dtype.np)
            out = _ops.sum(out, dim, keepdim=True) * as_tensor(wt, device=x.device)
            continue
        padded = pad(out, (0, 0) * after + (0, 1))
        g = _ops.index_select(padded, dim, as_tensor(idx.reshape(-1), device=x.device))
        g = _ops.reshape(g, (*g.shape[:dim], o, width, *g.shape[dim + 1 :]))
        row = w.max(axis=1, initial=0.0)
        if np.all((w == row[:, None]) | (idx == n)):  # one weight a row (the averages)
            wt = np.ascontiguousarray(row.reshape(o, *(1,) * after), dtype=x.dtype.np)
            out = _ops.sum(g, dim + 1) * as_tensor(wt, device=x.device)
        else:
            wt = np.ascontiguousarray(w.reshape(o, width, *(1,) * after), dtype=x.dtype.np)
            out = _ops.sum(g * as_tensor(wt, device=x.device), dim + 1)
    return out


def _avg_matrix(n, k, s, p, ceil_mode, count_include_pad, o):
    m = np.zeros((o, n))
    for i in range(o):
        start = i * s - p
        end = min(start + k, n + p)
        size = end - start
        lo, hi = max(start, 0), min(end, n)
        m[i, lo:hi] = 1.0 / (size if count_include_pad else max(hi - lo, 1))
    return m


def _avg_pool(
    input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, k, name
):
    kernel, stride, padding, _ = _pool_args(input, k, kernel_size, stride, padding, 1, name)
    for p, kk in zip(padding, kernel):
        if p < 0 or p > kk // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={kk} and dilation=1"
            )
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    spatial = tuple(input.shape[-k:])
    osz = tuple(
        _pool_out(n, kk, s, p, 1, ceil_mode)
        for n, kk, s, p in zip(spatial, kernel, stride, padding)
    )
    if any(o < 1 for o in osz):
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, input.shape[-k - 1 :]))}). Calculated output "
            f"size: ({'x'.join(map(str, (input.shape[-k - 1], *osz)))}). Output size is too small"
        )
    _check_floating(name, input)
    mats = [
        _avg_matrix(n, kk, s, p, ceil_mode, count_include_pad, o)
        for n, kk, s, p, o in zip(spatial, kernel, stride, padding, osz)
    ]
    if divisor_override is not None:
        mats = [(m != 0).astype(np.float64) for m in mats]
        mats[0] = mats[0] / float(divisor_override)
    # each dim: the sum of the window's strided slices of the zero-padded input (views:
    # no gather, and a slice's backward touches only its own entries), times the row's
    # weight (its entries are equal: 1 / divisor)
    out = input
    for j, (m, kk, s, p, o) in enumerate(zip(mats, kernel, stride, padding, osz)):
        dim = input.ndim - k + j
        after = input.ndim - 1 - dim
        right = max(0, (o - 1) * s + kk - spatial[j] - p)
        xp = pad(out, (0, 0) * after + (p, right)) if p or right else out
        acc = None
        for t in range(kk):
            sl = xp[(slice(None),) * dim + (slice(t, t + s * (o - 1) + 1, s),)]
            acc = sl if acc is None else acc + sl
        row = np.ascontiguousarray(m.max(axis=1).reshape(o, *(1,) * after), dtype=input.dtype.np)
        out = acc * as_tensor(row, device=input.device)
    return out + 0.0  # (PyTorch's window sums start at +0: a zero average is never -0)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``; ``count_include_pad`` counts
    the zero padding in the divisor.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.avg_pool1d(numbagrad.tensor([[1.0, 3.0, 2.0, 6.0]]), 2).tolist()
    [[2.0, 4.0]]
    """
    return _avg_pool(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d"
    )


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``; ``divisor_override``
    replaces the window size as the divisor.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.avg_pool2d(numbagrad.arange(16.0).reshape(1, 4, 4), 2).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """
    return _avg_pool(
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        2,
        "avg_pool2d",
    )


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (arguments as
    :func:`avg_pool2d`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.avg_pool3d(numbagrad.arange(8.0).reshape(1, 2, 2, 2), 2).tolist()
    [[[[3.5]]]]
    """
    return _avg_pool(
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        3,
        "avg_pool3d",
    )


def _adaptive_size(input, output_size, k, name):
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(
            f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got {list(input.shape)}"
        )
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != k:
            raise ValueError(f"{name}: output_size must be {k}, but got {len(output_size)}")
        size = tuple(
            input.shape[input.ndim - k + i] if v is None else int(v)
            for i, v in enumerate(output_size)
        )
    else:
        size = (int(output_size),) * k
    if any(v < 0 for v in size):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty"
            )
    return size


def _adaptive_matrix(n, o):
    m = np.zeros((o, n))
    for i in range(o):
        lo = (i * n) // o
        hi = -((-(i + 1) * n) // o)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _adaptive_avg(input, output_size, k, name):
    size = _adaptive_size(input, output_size, k, name)
    _check_floating(name, input)
    spatial = tuple(input.shape[-k:])
    out = _apply_dims(input, [_adaptive_matrix(n, o) for n, o in zip(spatial, size)])
    return out + 0.0  # (PyTorch's window sums start at +0: a zero average is never -0)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to ``output_size`` positions: window ``i`` of ``n`` covers
    ``[floor(i n / out), ceil((i + 1) n / out))``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_avg_pool1d(numbagrad.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]]), 2).tolist()
    [[2.0, 4.0]]
    """
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling; ``output_size`` an int or a pair (``None`` keeps that
    dim).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_avg_pool2d(numbagrad.ones(2, 3, 5, 7), (1, 1)).shape
    numbagrad.Size([2, 3, 1, 1])
    """
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling; ``output_size`` an int or a triple.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_avg_pool3d(numbagrad.ones(1, 2, 4, 4, 4), 2).shape
    numbagrad.Size([1, 2, 2, 2, 2])
    """
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max(input, output_size, return_indices, k, name):
    size = _adaptive_size(input, output_size, k, name)
    _check_floating(name, input)
    idx = bind(AdaptiveMaxIndices, (input,), {"out": size})
    out = gather_windows(input, idx, k)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to ``output_size`` positions (windows as :func:`adaptive_avg_pool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_max_pool1d(numbagrad.tensor([[1.0, 5.0, 3.0, 4.0, 2.0]]), 2).tolist()
    [[5.0, 4.0]]
    """
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_max_pool2d(numbagrad.arange(16.0).reshape(1, 4, 4), 1).tolist()
    [[[15.0]]]
    """
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_max_pool3d(numbagrad.ones(1, 2, 4, 4, 4), 2).shape
    numbagrad.Size([1, 2, 2, 2, 2])
    """
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, k):
    kernel = _tuple(kernel_size, k, "kernel_size")
    maxp = (max_pool1d, max_pool2d, max_pool3d)[k - 1]
    avgp = (avg_pool1d, avg_pool2d, avg_pool3d)[k - 1]
    if norm_type == float("inf"):
        return maxp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -maxp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avgp(_ops.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    out = _ops.sign(out) * _ops.relu(_ops.abs(out))
    return _ops.pow(out * math.prod(kernel), 1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum over the window of x^p)^(1/p)`` (PyTorch's
    composition: ``avg_pool`` of ``x^p`` times the window size, to the ``1/p``).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.lp_pool1d(numbagrad.tensor([[3.0, 4.0]]), 2, 2).tolist()
    [[5.0]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling (see :func:`lp_pool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.lp_pool2d(numbagrad.ones(1, 4, 4), 1, 2).tolist()
    [[[4.0, 4.0], [4.0, 4.0]]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling (see :func:`lp_pool1d`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.lp_pool3d(numbagrad.ones(1, 2, 2, 2), 1, 2).tolist()
    [[[[8.0]]]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# -- normalisation ------------------------------------------------------------------------
def _channel_view(t, ndim):
    """A per-channel ``(C,)`` tensor shaped to broadcast against ``(N, C, *spatial)``."""
    return _ops.reshape(t, (t.shape[0],) + (1,) * (ndim - 2))


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Batch normalisation over the channel dim 1 of ``(N, C, *)``.

    In training the batch's statistics normalise (biased variance) and the running ones,
    when given, are updated in place: ``running = (1 - momentum) running + momentum
    batch`` with the unbiased variance. Otherwise the running statistics normalise.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> F.batch_norm(x, None, None, training=True)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    """
    if input.ndim < 2:
        raise ValueError(f"expected 2D or higher input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    dims = (0, *tuple(range(2, input.ndim)))
    if training:
        count = input.numel() // max(c, 1)
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{input.shape}"
            )
        mean = input.mean(dims, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            with no_grad():
                m = 0.0 if momentum is None else momentum
                if running_mean is not None:
                    bm = _ops.reshape(mean.detach(), (c,)).to(running_mean.dtype)
                    running_mean.mul_(1 - m).add_(bm * m)
                if running_var is not None:
                    bv = _ops.reshape(var.detach(), (c,)) * (count / (count - 1))
                    running_var.mul_(1 - m).add_(bv.to(running_var.dtype) * m)
        out = centred * _ops.rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        rm = _channel_view(running_mean, input.ndim)
        rv = _channel_view(running_var, input.ndim)
        out = (input - rm) * _ops.rsqrt(rv + eps)
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalisation: the channels of ``(N, C, *)`` in ``num_groups`` groups, each
    normalised over its channels and spatial positions, then a per-channel affine map.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.group_norm(numbagrad.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {input.shape} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}"
            )
    per = input.numel() // max(n * num_groups, 1)
    g = _ops.reshape(input, (n, num_groups, per))
    out = _ops.reshape(layer_norm(g, (per,), eps=eps), tuple(input.shape))
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return out


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Instance normalisation: each channel of each sample of ``(N, C, *)`` normalised over
    its spatial positions; with ``use_input_stats=False`` the running statistics normalise,
    else they (when given) are updated with the batch mean of the instance statistics.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.instance_norm(numbagrad.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    if input.ndim < 3:
        raise ValueError(f"expected at least 3D input (got {input.ndim}D input)")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.ndim))
    count = math.prod(input.shape[2:])
    if count <= 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {input.shape}"
        )
    mean = input.mean(dims, keepdim=True)
    centred = input - mean
    var = (centred * centred).mean(dims, keepdim=True)
    if running_mean is not None or running_var is not None:
        with no_grad():
            m = 0.0 if momentum is None else momentum
            if running_mean is not None:
                bm = _ops.reshape(mean.detach(), input.shape[:2]).mean(0)
                running_mean.mul_(1 - m).add_(bm.to(running_mean.dtype) * m)
            if running_var is not None:
                bv = _ops.reshape(var.detach(), input.shape[:2]).mean(0) * (count / (count - 1))
                running_var.mul_(1 - m).add_(bv.to(running_var.dtype) * m)
    out = centred * _ops.rsqrt(var + eps)
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalisation across channels: ``x / (k + alpha / size * sum of x^2
    over the size neighbouring channels) ** beta`` (PyTorch's zero-padded window).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.local_response_norm(numbagrad.ones(1, 3, 2), 2).shape
    numbagrad.Size([1, 3, 2])
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = _ops.unsqueeze(input * input, 1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = _ops.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = _ops.reshape(div, (sizes[0], 1, sizes[1], sizes[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _ops.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = _ops.reshape(div, sizes)
    div = _ops.pow(div * alpha + k, beta)
    return input / div


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dims:
    ``x / sqrt(mean(x^2) + eps) * weight``; ``eps`` None is the dtype's machine epsilon.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.rms_norm(numbagrad.tensor([[3.0, 4.0]]), (2,))
    tensor([[0.8485, 1.1314]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(v) for v in normalized_shape)
    nd = len(normalized_shape)
    if tuple(input.shape[input.ndim - nd :]) != normalized_shape or nd > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{input.shape}"
        )
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(normalized_shape)}"
        )
    if eps is None:
        eps = float(np.finfo(input.dtype.np).eps)
    dims = tuple(range(input.ndim - nd, input.ndim))
    out = input * _ops.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out


# -- pixel shuffle -------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    """Rearrange ``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.pixel_shuffle(numbagrad.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    lead = tuple(lead)
    n = len(lead)
    x = _ops.reshape(input, (*lead, c // (r * r), r, r, h, w))
    perm = (*tuple(range(n)), n, n + 3, n + 1, n + 4, n + 2)
    return _ops.reshape(_ops.permute(x, perm), (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """Rearrange ``(*, C, H r, W r)`` to ``(*, C r^2, H, W)`` (the inverse of
    :func:`pixel_shuffle`).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.pixel_unshuffle(numbagrad.arange(4.0).reshape(1, 1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            "pixel_unshuffle expects height and width to be divisible by downscale_factor, but "
            f"input.size(-2)={h} and input.size(-1)={w} are not divisible by {r}"
        )
    lead = tuple(lead)
    n = len(lead)
    x = _ops.reshape(input, (*lead, c, h // r, r, w // r, r))
    perm = (*tuple(range(n)), n, n + 2, n + 4, n + 1, n + 3)
    return _ops.reshape(_ops.permute(x, perm), (*lead, c * r * r, h // r, w // r))


# -- resampling ---------------------------------------------------------------------------
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _src_scale(n_in, n_out, align_corners, scale):
    """PyTorch's ``area_pixel_compute_scale``."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _aa_filter(mode, x):
    """PyTorch's antialiasing filters (``UpSampleKernel.cpp``): the triangle, the cubic of
    ``a = -0.5`` (Pillow's) and the Lanczos-3 windowed sinc."""
    x = abs(x)
    if mode == "bilinear":
        return 1.0 - x if x < 1.0 else 0.0
    if mode == "bicubic":
        a = -0.5
        if x < 1.0:
            return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        if x < 2.0:
            return (((x - 5.0) * x + 8.0) * x - 4.0) * a
        return 0.0
    if x == 0.0:
        return 1.0
    if x < 3.0:
        px = math.pi * x
        return 3.0 * math.sin(px) * math.sin(px / 3.0) / (px * px)
    return 0.0


_AA_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _aa_matrix(n_in, n_out, align_corners, scale, mode):
    """PyTorch's antialiased resampling weights (``_compute_weights_aa``): when shrinking,
    the filter is stretched by the scale so that every input pixel under it contributes;
    each row is normalised to sum to 1."""
    r = _src_scale(n_in, n_out, align_corners, scale)
    half = _AA_TAPS[mode] * 0.5
    support = half * r if r >= 1.0 else half
    inv = 1.0 / r if r >= 1.0 else 1.0
    rows = []
    for i in range(n_out):
        center = r * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        w = [_aa_filter(mode, (j - center + 0.5) * inv) for j in range(lo, hi)]
        total = sum(w)
        if total != 0.0:
            w = [v / total for v in w]
        rows.append((lo, w))
    width = max([1] + [len(w) for _, w in rows])
    idx = np.full((n_out, width), n_in, dtype=np.int64)
    wt = np.zeros((n_out, width))
    for i, (lo, w) in enumerate(rows):
        idx[i, : len(w)] = np.arange(lo, lo + len(w))
        wt[i, : len(w)] = w
    return idx, wt


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resample the spatial dims of ``(N, C, *spatial)`` (1 to 3 of them) to ``size`` or by
    ``scale_factor``.

    ``mode`` is ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D input),
    ``'bilinear'``/``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'lanczos'`` (4-D, with
    ``antialias=True`` only) or ``'area'`` (adaptive average pooling); ``align_corners`` maps
    corner pixel centres onto each other (the interpolating modes only). ``antialias=True``
    (bilinear, bicubic and lanczos, 4-D input) widens the filter when shrinking, as
    PyTorch's (and Pillow's) antialiased resize. Each mode is a separable linear map whose
    taps per output are PyTorch's (NOTE [Resampling] in ``nn/_resample.py``): the modes
    without antialiasing are one primitive with ``@njit`` kernels and its adjoint, the
    antialiased ones gather their taps with ops; either way a non-finite input reaches
    only the outputs whose taps read it, and every transform differentiates through it.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.interpolate(numbagrad.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> F.interpolate(numbagrad.tensor([[[1.0, 2.0]]]), size=3, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    k = input.ndim - 2
    unsupported = NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
        f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})"
    )
    if k not in (1, 2, 3):
        raise unsupported
    modes = (
        "nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "lanczos",
        "area",
    )  # fmt: skip
    if mode not in modes:
        raise unsupported
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != k:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D input"
        )
    spatial = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = _tuple(size, k, "size") if isinstance(size, (list, tuple)) else (int(size),) * k
        if len(out) != k:
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(spatial)} and output size of {list(out)}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                "in (o1, o2, ...,oK) format."
            )
        scales = (None,) * k
    else:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != k:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(spatial)} and "
                    f"scale_factor of shape {list(scale_factor)}."
                )
            scales = tuple(float(v) for v in scale_factor)
        else:
            scales = (float(scale_factor),) * k
        out = tuple(math.floor(n * s) for n, s in zip(spatial, scales))
        if recompute_scale_factor:
            scales = (None,) * k
    if antialias and not (mode in _AA_TAPS and k == 2):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if mode == "lanczos":
        if k != 2:
            raise unsupported
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if any(o <= 0 for o in out) or any(n <= 0 for n in spatial):
        names = ("D", "H", "W")[3 - k :]
        shown = [", ".join(f"{a}: {v}" for a, v in zip(names, sz)) for sz in (spatial, out)]
        sep = " and" if k == 1 else ""
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({shown[0]})"
            f"{sep} output ({shown[1]})"
        )
    if input.numel() == 0 and 0 in tuple(input.shape[1:]):
        raise RuntimeError(
            f"Non-empty {k + 2}D data tensor expected but got a tensor with sizes "
            f"{list(input.shape)}"
        )
    if mode == "area":
        return _adaptive_avg(input, out, k, "adaptive_avg_pool")
    _check_floating(f"upsample_{mode}", input)
    if antialias:
        mats = [_aa_matrix(n, o, align_corners, s, mode) for n, o, s in zip(spatial, out, scales)]
        return _apply_dims(input, mats)
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    if kind in ("linear", "cubic") and align_corners:
        scales = (None,) * k  # (the corners fix the scale)
    if input.device.type == "cuda":
        # the composite form (NOTE [Resampling] in nn/_resample.py): the same taps, gathered
        # and weighted with ops that have CUDA kernels
        dt = "<f8" if input.dtype == _D.float64 else "<f4"
        tabs = [
            axis_table(kind, bool(align_corners), n, o, s, dt)
            for n, o, s in zip(spatial, out, scales)
        ]
        return _apply_dims(input, [(idx.T, w.T) for idx, w, _ in tabs])
    params = {"mode": kind, "align": bool(align_corners), "size": out, "scales": scales}
    return bind(Upsample, (input,), params)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated spelling of :func:`interpolate` (PyTorch warns too).

    Examples
    --------
    >>> import warnings
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(numbagrad.ones(1, 1, 2), scale_factor=2).shape
    numbagrad.Size([1, 1, 4])
    """
    import warnings

    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)
