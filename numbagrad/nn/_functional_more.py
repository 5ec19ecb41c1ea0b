"""The remaining names of PyTorch's ``torch.nn.functional`` (issue 28): the
``*_with_indices`` spellings of max pooling, fractional max pooling, ``conv_tbc``, the
deprecated ``upsample_nearest``/``upsample_bilinear`` and the helpers ``boolean_dispatch``
and ``assert_int_or_pair``. Compositions of the ops and functionals below them.
"""

from __future__ import annotations

import warnings

import numpy as np

from numbagrad import ops as _ops
from numbagrad._creation import rand, tensor
from numbagrad._tensor import Tensor
from numbagrad.nn import _conv_functional as _cf
from numbagrad.nn import _functional_core as _core

__all__ = [
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "assert_int_or_pair",
    "boolean_dispatch",
    "conv_tbc",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "linear_cross_entropy",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "upsample_bilinear",
    "upsample_nearest",
]


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls ``if_true`` or ``if_false`` by the value of one boolean
    argument (PyTorch's ``torch._jit_internal.boolean_dispatch``, which builds
    ``max_pool2d`` and friends from their ``return_indices`` variants).

    The flag is keyword ``arg_name`` if given, else positional ``arg_index`` if given, else
    ``default``. Exactly one of the two functions may have a docstring; the result takes it.

    Examples
    --------
    >>> from numbagrad.nn.functional import boolean_dispatch
    >>> def both(x, flag=False):
    ...     "x, with its double when flag."
    ...     return x, 2 * x
    >>> def one(x, flag=False):
    ...     return x
    >>> f = boolean_dispatch("flag", 1, False, both, one, None, "f")
    >>> f(3), f(3, True), f(3, flag=True)
    (3, (3, 6), (3, 6))
    """

    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_false.__doc__
        if_true.__doc__ = doc
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        doc = if_true.__doc__
        if_false.__doc__ = doc
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
        fn.__qualname__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or has
    length 2 (PyTorch's helper of the same name).

    Examples
    --------
    >>> from numbagrad.nn.functional import assert_int_or_pair
    >>> assert_int_or_pair((2, 3), "kernel_size", "{} must be an int or a pair")
    """
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


# -- max pooling, always with indices --------------------------------------------------------------
def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """:func:`max_pool1d` returning ``(output, indices)`` whatever ``return_indices`` says
    (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> out, idx = F.max_pool1d_with_indices(numbagrad.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    >>> idx
    tensor([[[1, 2]]])
    """
    return _cf.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """:func:`max_pool2d` returning ``(output, indices)`` (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> out, idx = F.max_pool2d_with_indices(numbagrad.arange(16.0).reshape(1, 1, 4, 4), 2)
    >>> idx
    tensor([[[[ 5,  7],
              [13, 15]]]])
    """
    return _cf.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """:func:`max_pool3d` returning ``(output, indices)`` (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> out, idx = F.max_pool3d_with_indices(numbagrad.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    >>> idx
    tensor([[[[[7]]]]])
    """
    return _cf.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool1d` returning ``(output, indices)`` (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.tensor([[[1.0, 3.0, 2.0, 0.0]]])
    >>> F.adaptive_max_pool1d_with_indices(x, 1)[1]
    tensor([[[1]]])
    """
    return _cf.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` returning ``(output, indices)`` (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.adaptive_max_pool2d_with_indices(numbagrad.arange(4.0).reshape(1, 1, 2, 2), 1)[1]
    tensor([[[[3]]]])
    """
    return _cf.adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool3d` returning ``(output, indices)`` (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> F.adaptive_max_pool3d_with_indices(x, 1)[1]
    tensor([[[[[7]]]]])
    """
    return _cf.adaptive_max_pool3d(input, output_size, True)


# -- fractional max pooling ------------------------------------------------------------------------
def _intervals(samples, n_in, n_out, pool, dt):
    """PyTorch's ``generate_intervals`` for every plane at once: the window starts ``(*planes,
    n_out)`` from the samples ``(*planes,)`` in ``[0, 1)``, computed in the input's dtype."""
    s = samples.astype(dt)
    starts = np.empty((*s.shape, n_out), np.int64)
    if n_out > 1:
        alpha = dt.type(n_in - pool) / dt.type(n_out - 1)
        i = np.arange(n_out - 1, dtype=dt)
        first = ((i + s[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = first - (s * alpha).astype(np.int64)[..., None]
    if n_out > 0:
        starts[..., -1] = n_in - pool
    return starts


def _fractional(input, kernel_size, output_size, output_ratio, samples, k):
    name = f"fractional_max_pool{k}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(
            f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got: {list(input.shape)}"
        )
    _cf._check_floating(name, input)
    spatial = tuple(input.shape[-k:])
    kernel = _cf._tuple(kernel_size, k, "kernel_size")
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * k
        if len(ratio) != k:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        out = tuple(int(n * r) for n, r in zip(spatial, ratio))
    else:
        out = _cf._tuple(output_size, k, "output_size")
    names = ("time", "height", "width")[3 - k :]
    for n, kk, o, what in zip(spatial, kernel, out, names):
        if kk <= 0 or o <= 0:
            raise RuntimeError(
                f"{name}(): kernel_size and output_size must be positive, got {kernel} and {out}"
            )
        # (PyTorch's 2-D check allows the windows to reach the last row, its 3-D one not)
        if o + kk - 1 > n or (k == 3 and o + kk - 1 == n):
            raise RuntimeError(
                f"{name}{'_out' if k == 3 else ''}(): pool {what} {kk} too large relative to "
                f"input {what} {n}"
            )
    batched = input.ndim == k + 2
    x = input if batched else _ops.unsqueeze(input, 0)
    n_img, n_ch = x.shape[0], x.shape[1]
    if samples is None:
        samples = rand(n_img, n_ch, k, dtype=input.dtype, device=input.device)
    elif not isinstance(samples, Tensor):
        raise TypeError(f"{name}(): _random_samples must be a Tensor")
    if tuple(samples.shape) != (n_img, n_ch, k):
        raise RuntimeError(
            f"{name}(): expected _random_samples of shape {(n_img, n_ch, k)}, got "
            f"{tuple(samples.shape)}"
        )
    dt = np.dtype(input.dtype.np)
    if dt == np.float16:  # (PyTorch computes the half-precision intervals in float32)
        dt = np.dtype(np.float32)
    s = samples.detach().cpu().numpy()
    # PyTorch's sample order: width then height (2-D); time, height, width (3-D)
    order = (1, 0) if k == 2 else (0, 1, 2)
    starts = [_intervals(s[:, :, order[j]], spatial[j], out[j], kernel[j], dt) for j in range(k)]
    # every window's flat indices into the plane: (N, C, *out, prod(kernel))
    strides = [int(np.prod(spatial[j + 1 :])) for j in range(k)]
    idx = np.zeros((n_img, n_ch, *out, 1), np.int64)
    for j in range(k):
        shape = [n_img, n_ch] + [1] * k + [1]
        shape[2 + j] = out[j]
        offs = np.arange(kernel[j]) * strides[j]
        pos = starts[j].reshape(shape) * strides[j]
        idx = (idx[..., :, None] + (pos[..., None] + offs)).reshape(*idx.shape[:-1], -1)
    window = int(np.prod(kernel))
    plane = _ops.reshape(x, (n_img, n_ch, -1))
    widx = tensor(idx.reshape(n_img, n_ch, -1), device=input.device)
    vals = _ops.reshape(_ops.gather(plane, 2, widx), (n_img, n_ch, *out, window))
    pick = _ops.argmax(vals, -1, True)
    result = _ops.squeeze(_ops.gather(vals, -1, pick), -1)
    indices = _ops.squeeze(_ops.gather(tensor(idx, device=input.device), -1, pick), -1)
    if not batched:
        result, indices = _ops.squeeze(result, 0), _ops.squeeze(indices, 0)
    return result, indices


def fractional_max_pool2d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None,
):  # fmt: skip
    """2-D fractional max pooling (Graham, 2014) returning ``(output, indices)``.

    Max over ``kH x kW`` windows whose starts advance by a pseudo-random step so that
    ``output_size`` (or ``output_ratio`` times the input size) windows cover ``(N, C, H,
    W)`` or ``(C, H, W)``. ``_random_samples`` (``(N, C, 2)`` in ``[0, 1)``, width then
    height, as PyTorch's) fixes the windows; by default they are drawn from the global
    generator (:func:`numbagrad.rand`). Indices are flat in ``H * W``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.arange(25.0).reshape(1, 1, 5, 5)
    >>> s = numbagrad.full((1, 1, 2), 0.5)
    >>> F.fractional_max_pool2d_with_indices(x, 2, output_size=3, _random_samples=s)[1]
    tensor([[[[ 6,  8,  9],
              [16, 18, 19],
              [21, 23, 24]]]])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def _fractional_max_pool2d(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None,
):  # fmt: skip
    return fractional_max_pool2d_with_indices(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )[0]


fractional_max_pool2d = boolean_dispatch(
    arg_name="return_indices",
    arg_index=4,
    default=False,
    if_true=fractional_max_pool2d_with_indices,
    if_false=_fractional_max_pool2d,
    module_name="numbagrad.nn.functional",
    func_name="fractional_max_pool2d",
)


def fractional_max_pool3d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None,
):  # fmt: skip
    """3-D fractional max pooling returning ``(output, indices)``: as
    :func:`fractional_max_pool2d_with_indices` over ``(N, C, T, H, W)`` or ``(C, T, H, W)``
    with ``_random_samples`` ``(N, C, 3)`` (time, height, width). Indices are flat in ``T * H
    * W``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.arange(27.0).reshape(1, 1, 3, 3, 3)
    >>> s = numbagrad.full((1, 1, 3), 0.5)
    >>> F.fractional_max_pool3d_with_indices(x, 2, output_size=1, _random_samples=s)[1]
    tensor([[[[[26]]]]])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def _fractional_max_pool3d(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None,
):  # fmt: skip
    return fractional_max_pool3d_with_indices(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )[0]


fractional_max_pool3d = boolean_dispatch(
    arg_name="return_indices",
    arg_index=4,
    default=False,
    if_true=fractional_max_pool3d_with_indices,
    if_false=_fractional_max_pool3d,
    module_name="numbagrad.nn.functional",
    func_name="fractional_max_pool3d",
)


# -- the rest -------------------------------------------------------------------------------------
def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution over time-batch-channel input (PyTorch's ``conv_tbc``).

    ``input`` is ``(T, B, C_in)``, ``weight`` ``(K, C_in, C_out)``, ``bias`` ``(C_out,)``;
    the output is ``(T + 2 pad - K + 1, B, C_out)``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.conv_tbc(numbagrad.ones(4, 2, 3), numbagrad.ones(2, 3, 5), numbagrad.zeros(5)).shape
    numbagrad.Size([3, 2, 5])
    """
    checks = (
        (input, 3, "Input must have 3 dims: time, batch, in_channel"),
        (weight, 3, "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."),
        (bias, 1, "Bias must be 1-D"),
    )
    for t, nd, message in checks:
        if not isinstance(t, Tensor):
            raise TypeError(f"conv_tbc(): expected Tensors, got {type(t).__name__}")
        if t.ndim != nd:
            raise RuntimeError(message)
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight")
    x = _ops.permute(input, (1, 2, 0))
    w = _ops.permute(weight, (2, 1, 0))
    out = _cf.conv1d(x, w, bias, padding=int(pad))
    return _ops.permute(out, (2, 0, 1))


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: :func:`interpolate` with ``mode='nearest'`` (warns, as PyTorch).

    Examples
    --------
    >>> import warnings
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(numbagrad.ones(1, 1, 2, 2), scale_factor=2).shape
    numbagrad.Size([1, 1, 4, 4])
    """
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return _cf.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: :func:`interpolate` with ``mode='bilinear'`` and ``align_corners=True``
    (warns, as PyTorch).

    Examples
    --------
    >>> import warnings
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(numbagrad.ones(1, 1, 2, 2), size=3).shape
    numbagrad.Size([1, 1, 3, 3])
    """
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return _cf.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """Cross entropy of ``linear(input, linear_weight, linear_bias)`` against ``target``
    (PyTorch's ``linear_cross_entropy``: ``cross_entropy(linear(...), target, ...)``).

    ``input`` is ``(N, in_features)`` or ``(in_features,)``; ``linear_weight`` is
    ``(C, in_features)`` or, for a K-dimensional loss, ``(C, d_1, ..., d_K, in_features)``
    (``linear_bias`` then ``(C, d_1, ..., d_K)``). ``target`` holds class indices or, shaped
    as the logits, class probabilities. ``ignore_index`` (class indices only) defaults to
    -100. ``options`` selects PyTorch's chunked implementation, which numbagrad does not
    have: only ``None`` is accepted.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x, w = numbagrad.zeros(2, 3), numbagrad.zeros(4, 3)
    >>> round(float(F.linear_cross_entropy(x, w, numbagrad.tensor([0, 3]))), 4)
    1.3863
    """
    if options is not None:
        raise NotImplementedError(
            "linear_cross_entropy: the chunked implementation (options=...) is not available "
            "in numbagrad; pass options=None"
        )
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}"
        )
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    n_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (n_classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(n_classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batches, n_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        rows = n_classes * int(np.prod(out_features))
        linear_weight = _ops.reshape(linear_weight, (rows, in_features))
        if linear_bias is not None:
            linear_bias = _ops.reshape(linear_bias, (rows,))
    logits = _ops.reshape(_core.linear(input, linear_weight, linear_bias), logits_shape)
    return _core.cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
    )
