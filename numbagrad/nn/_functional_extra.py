"""The remaining activations, channel dropouts and losses of ``torch.nn.functional``
(re-exported by ``numbagrad.nn.functional``): compositions of numbagrad ops (``celu`` binds
the ``Elu`` primitive with PyTorch's ``input_scale = 1/alpha``), so every transform works
through them. Checks that read data (class indices, targets) use only concrete tensors.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as _ops
from numbagrad._creation import _random_like, _rrelu_noise, arange, empty, rand_like, tensor, zeros
from numbagrad._tensor import Tensor
from numbagrad.nn import _functional_core as _core
from numbagrad.nn._primitives import Elu, Hardtanh
from numbagrad.ops._op import bind
from numbagrad.ops.inplace import inplace

__all__ = [
    "alpha_dropout",
    "celu",
    "celu_",
    "channel_shuffle",
    "cosine_embedding_loss",
    "ctc_loss",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu_",
    "embedding_bag",
    "feature_alpha_dropout",
    "glu",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh_",
    "hinge_embedding_loss",
    "leaky_relu_",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "native_channel_shuffle",
    "pdist",
    "poisson_nll_loss",
    "prelu",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu_",
    "soft_margin_loss",
    "softshrink",
    "tanhshrink",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _nnf():
    return _core


def _inplace_apply(input, fn):
    return inplace(input, fn)


def _maybe(input, inplace, fn):
    return _inplace_apply(input, fn) if inplace else fn(input)


# -- activations ---------------------------------------------------------------------------
def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.celu(numbagrad.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    params = {"alpha": float(alpha), "scale": 1.0, "input_scale": 1.0 / float(alpha)}
    return _maybe(input, inplace, lambda x: bind(Elu, (x,), params))


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def relu_(input):
    """In-place ``relu``."""
    return _nnf().relu(input, inplace=True)


def elu_(input, alpha=1.0):
    """In-place ``elu``."""
    return _nnf().elu(input, alpha, inplace=True)


def selu_(input):
    """In-place ``selu``."""
    return _nnf().selu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place ``leaky_relu``."""
    return _nnf().leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place ``hardtanh``."""
    return _nnf().hardtanh(input, min_val, max_val, inplace=True)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.threshold(numbagrad.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _maybe(input, inplace, lambda x: _ops.where(x > threshold, x, float(value)))


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return _inplace_apply(input, lambda x: _ops.where(x > threshold, x, float(value)))


def glu(input, dim=-1):
    """The gated linear unit ``a * sigmoid(b)``, ``a, b`` the halves of ``input`` along
    ``dim``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.glu(numbagrad.zeros(2, 4)).shape
    numbagrad.Size([2, 2])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.ndim
    if input.shape[d] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}"
        )
    a, b = _ops.chunk(input, 2, d)
    return a * _ops.sigmoid(b)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.hardshrink(numbagrad.tensor([0.2, -0.7]))
    tensor([ 0.0000, -0.7000])
    """
    return _ops.where((input > lambd) | (input < -lambd), input, 0.0)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.softshrink(numbagrad.tensor([0.2, -0.75]))
    tensor([ 0.0000, -0.2500])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _ops.where(input > lambd, input - lambd, _ops.where(input < -lambd, input + lambd, 0.0))


def tanhshrink(input):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.tanhshrink(numbagrad.tensor([0.0]))
    tensor([0.])
    """
    return input - _ops.tanh(input)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.hardsigmoid(numbagrad.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    params = {"min_val": 0.0, "max_val": 6.0}
    return _maybe(input, inplace, lambda x: bind(Hardtanh, (x + 3.0,), params) / 6.0)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.hardswish(numbagrad.tensor([-4.0, 1.0, 4.0]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    params = {"min_val": 0.0, "max_val": 6.0}
    return _maybe(input, inplace, lambda x: x * bind(Hardtanh, (x + 3.0,), params) / 6.0)


def prelu(input, weight):
    """``x`` where positive, else ``weight * x`` (``weight`` one value or one per channel,
    dim 1).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.prelu(numbagrad.tensor([-2.0, 1.0]), numbagrad.tensor([0.25]))
    tensor([-0.5000,  1.0000])
    """
    n = weight.numel()
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    w = weight.reshape(-1)
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim == 1 else 1)
        if n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}."
            )
        if input.ndim >= 2:
            w = w.reshape(n, *([1] * (input.ndim - 2)))
    else:
        w = w.reshape(())
    return _ops.where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with slope ``(lower + upper) / 2`` in eval mode, a slope drawn uniformly
    from ``[lower, upper]`` per element in training."""
    if not training:
        slope = (lower + upper) / 2.0
        return _maybe(input, inplace, lambda x: _ops.where(x >= 0, x, x * slope))
    noise = _rrelu_noise(input, lower, upper)  # PyTorch's draws
    if noise is not None:
        return _maybe(input, inplace, lambda x: x * noise)
    noise = rand_like(input) * (upper - lower) + lower
    return _maybe(input, inplace, lambda x: _ops.where(x >= 0, x, x * noise))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


# -- dropout ---------------------------------------------------------------------------------
def _check_p(p):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_noise(input, batched):
    """Bernoulli-shape ``(N, C, 1, ...)`` (``(C, 1, ...)`` unbatched) for channel dropout."""
    lead = 2 if batched else 1
    return (*input.shape[:lead], *([1] * (input.ndim - lead)))


def _feature_dropout(input, p, training, inplace, batched, alpha=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe(input, inplace, lambda x: x * 0.0)
    shape = _feature_noise(input, batched)
    # (a CPU mask, as before: ``empty`` makes a CPU tensor)
    keep = _random_like(empty(shape, dtype=input.dtype), "bernoulli", 1.0 - p, "dropout")
    if alpha:
        a_ = 1.7580993408473766
        a = 1.0 / math.sqrt((a_ * a_ * p + 1) * (1 - p))
        b = (keep - 1.0) * (a_ * a) + a_ * a * p
        return _maybe(input, inplace, lambda x: x * (keep * a) + b)
    scale = keep / (1.0 - p)
    return _maybe(input, inplace, lambda x: x * scale)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _feature_dropout(input, p, training, inplace, input.ndim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` input with probability
    ``p`` (a 3-D input is taken as ``(N, C, L)``, with PyTorch's warning)."""
    if input.ndim not in (3, 4):
        import warnings

        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if input.ndim == 3:
        import warnings

        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    if input.ndim not in (4, 5):
        import warnings

        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, input.ndim != 4)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance (PyTorch's)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe(input, inplace, lambda x: x * 0.0)
    keep = _random_like(input, "bernoulli", 1.0 - p, "alpha_dropout")
    if keep is None:  # a CUDA tensor
        keep = (rand_like(input) < 1.0 - p).to(input.dtype)
    a_ = 1.7580993408473766
    a = 1.0 / math.sqrt((a_ * a_ * p + 1) * (1 - p))
    b = (keep - 1.0) * (a_ * a) + a_ * a * p
    return _maybe(input, inplace, lambda x: x * (keep * a) + b)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` of whole channels."""
    return _feature_dropout(input, p, training, inplace, True, alpha=True)


# -- losses ----------------------------------------------------------------------------------
def _red(size_average, reduce, reduction):
    return _nnf()._reduction(size_average, reduce, reduction)


def _reduce(loss, reduction):
    return _nnf()._reduce(loss, reduction)


def margin_ranking_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """``max(0, -y (x1 - x2) + margin)``.

    Examples
    --------
    >>> import numbagrad
    >>> x1, x2 = numbagrad.tensor([1.0, 0.0]), numbagrad.tensor([0.0, 1.0])
    >>> numbagrad.nn.functional.margin_ranking_loss(x1, x2, numbagrad.tensor([1.0, 1.0]))
    tensor(0.5000)
    """
    reduction = _red(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {tuple(input1.shape)}, input2: {tuple(input2.shape)}, target: "
            f"{tuple(target.shape)} "
        )
    return _reduce(_ops.clamp_min(-target * (input1 - input2) + margin, 0.0), reduction)


def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``."""
    reduction = _red(size_average, reduce, reduction)
    margin_clamp = _ops.clamp_min(margin - input, 0.0)
    out = _ops.where(target != 1, margin_clamp, 0.0) + _ops.where(target != -1, input, 0.0)
    return _reduce(out, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-y x))``."""
    reduction = _red(size_average, reduce, reduction)
    return _reduce(_ops.softplus(-target * input), reduction)


def cosine_embedding_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y =
    -1`` (cosine over the last dim, PyTorch's ``EPSILON = 1e-12`` in the magnitudes)."""
    reduction = _red(size_average, reduce, reduction)
    if input1.ndim not in (1, 2) or input1.shape != input2.shape:
        raise RuntimeError(
            f"cosine_embedding_loss: expected 1D or 2D inputs of one shape, got "
            f"{tuple(input1.shape)} and {tuple(input2.shape)}"
        )
    eps = 1e-12
    prod = (input1 * input2).sum(-1)
    m1 = (input1 * input1).sum(-1) + eps
    m2 = (input2 * input2).sum(-1) + eps
    cos = prod / _ops.sqrt(m1 * m2)
    pos = 1.0 - cos
    neg = _ops.clamp_min(cos - margin, 0.0)
    out = _ops.where(target == 1, pos, 0.0) + _ops.where(target == -1, neg, 0.0)
    return _reduce(out, reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm pairwise distance
    (``swap``: the smaller of ``d(a, n)`` and ``d(p, n)``)."""
    reduction = _red(size_average, reduce, reduction)
    for name, t in (("positive", positive), ("negative", negative)):
        if t.ndim != anchor.ndim:
            raise RuntimeError(
                f"The anchor, positive, and negative tensors are expected to have the same "
                f"number of dimensions, but got: anchor {anchor.ndim}D, {name} {t.ndim}D"
            )
    pd = _nnf().pairwise_distance
    d_pos = pd(anchor, positive, p, eps)
    d_neg = pd(anchor, negative, p, eps)
    if swap:
        d_neg = _ops.minimum(d_neg, pd(positive, negative, p, eps))
    return _reduce(_ops.clamp_min(margin + d_pos - d_neg, 0.0), reduction)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """:func:`triplet_margin_loss` with any ``distance_function`` (default: the pairwise
    Euclidean distance)."""
    if margin <= 0:
        raise ValueError(
            "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
            f"{margin} instead"
        )
    dist = _nnf().pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _ops.minimum(d_neg, dist(positive, negative))
    return _reduce(_ops.clamp_min(margin + d_pos - d_neg, 0.0), _red(None, None, reduction))


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """Poisson negative log likelihood: ``exp(x) - y x`` (``log_input``) or ``x - y
    log(x + eps)``; ``full`` adds Stirling's term for ``y > 1``."""
    reduction = _red(size_average, reduce, reduction)
    if log_input:
        loss = _ops.exp(input) - target * input
    else:
        loss = input - target * _ops.log(input + eps)
    if full:
        safe = _ops.where(target > 1, target, 1.0)
        stirling = safe * _ops.log(safe) - safe + 0.5 * _ops.log(2 * math.pi * safe)
        loss = loss + _ops.where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """``-(y logsigmoid(x) + (1 - y) logsigmoid(-x))`` averaged over the classes."""
    reduction = _red(size_average, reduce, reduction)
    ls = _nnf().logsigmoid
    loss = -(target * ls(input) + (1 - target) * ls(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def _class_targets(target, n_classes, name):
    if not isinstance(target, Tensor) or target.dtype.is_floating_point:
        raise RuntimeError(f"{name}: expected an integer target tensor")
    t = np.asarray(target.numpy())
    return t


def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``sum_{i != y} max(0, margin - x_y + x_i)^p / C`` per sample (``weight[y]``
    multiplies)."""
    reduction = _red(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n, c = x.shape
    t = _class_targets(target, c, "multi_margin_loss").reshape(-1)
    if t.shape[0] != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {tuple(target.shape)}")
    if t.size and (t.min() < 0 or t.max() >= c):
        raise IndexError("target out of range")
    idx = tensor(t.reshape(n, 1), dtype=D.int64)
    xy = _ops.gather(x, 1, idx)
    z = _ops.clamp_min(margin - xy + x, 0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * _ops.index_select(weight, 0, idx.reshape(-1)).reshape(n, 1)
    not_y = tensor(np.arange(c)[None, :] != t[:, None])
    loss = _ops.where(not_y, z, 0.0).sum(1) / c
    if input.ndim != 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum_{j in y} sum_{i not in y} max(0, 1 - (x_j - x_i)) / C`` per sample; ``target``
    holds class indices, ended by the first -1."""
    reduction = _red(size_average, reduce, reduction)
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n, c = x.shape
    t = _class_targets(target, c, "multilabel_margin_loss").reshape(n, -1)
    if t.shape[1] != c:
        raise RuntimeError(
            f"inconsistent target size: {tuple(target.shape)} for input of size: "
            f"{tuple(input.shape)}"
        )
    valid = np.zeros((n, c), dtype=bool)
    is_target = np.zeros((n, c), dtype=bool)
    for r in range(n):
        for k in range(c):
            j = int(t[r, k])
            if j < 0:
                break
            if j >= c:
                raise IndexError("target out of range")
            valid[r, k] = True
            is_target[r, j] = True
    idx = tensor(np.where(valid, t, 0), dtype=D.int64)
    xy = _ops.gather(x, 1, idx)  # (n, c): x at each listed target
    terms = _ops.clamp_min(1.0 - xy.unsqueeze(2) + x.unsqueeze(1), 0.0)
    mask = tensor(valid[:, :, None] & ~is_target[:, None, :])
    loss = _ops.where(mask, terms, 0.0).sum((1, 2)) / c
    if input.ndim != 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# -- embedding bags ----------------------------------------------------------------------------
def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Sums, means or maxima of bags of embeddings (PyTorch's ``embedding_bag``): ``input``
    2-D (one bag per row) or 1-D with ``offsets`` (the start of each bag); entries equal to
    ``padding_idx`` are left out; an empty bag gives zeros.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.arange(6.0).reshape(3, 2)
    >>> numbagrad.nn.functional.embedding_bag(numbagrad.tensor([0, 2, 1]), w,
    ...                                       numbagrad.tensor([0, 1]), mode="sum")
    tensor([[0., 1.],
            [6., 8.]])
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.dtype.is_floating_point:
        raise TypeError("embedding_bag: input must be an integer tensor")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input "
                f"({tuple(input.shape)})"
            )
    idx = np.asarray(input.numpy(), dtype=np.int64)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated "
                "is a mini-batch of fixed length sequences."
            )
        n_bags, width = idx.shape
        starts = np.arange(n_bags, dtype=np.int64) * width
        ends = starts + width
        flat = idx.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        off = np.asarray(offsets.numpy(), dtype=np.int64)
        if off.size and off[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {off[0]}"
            )
        if off.size and (off[-1] > idx.size or np.any(np.diff(off) < 0)):
            raise RuntimeError(
                f"offsets has to be non-decreasing and at most {idx.size}, got {off.tolist()}"
            )
        flat = idx
        if include_last_offset:
            starts, ends = off[:-1], off[1:]
        else:
            starts, ends = off, np.append(off[1:], idx.size).astype(np.int64)
        n_bags = starts.size
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    num = weight.shape[0]
    if flat.size and (flat.min() < -num or flat.max() >= num):
        raise IndexError("index out of range in self")
    if padding_idx is not None:
        padding_idx = padding_idx % num
    keep = np.ones(flat.size, dtype=bool) if padding_idx is None else flat != padding_idx
    emb = _nnf().embedding(
        tensor(flat, dtype=D.int64), weight, None, max_norm, norm_type, scale_grad_by_freq, sparse
    )
    dim = weight.shape[1]
    if mode == "max":
        rows = []
        for b in range(n_bags):
            sel = np.arange(starts[b], ends[b])[keep[starts[b] : ends[b]]]
            if sel.size:
                rows.append(_ops.index_select(emb, 0, tensor(sel, dtype=D.int64)).amax(0))
            else:
                rows.append(zeros(dim, dtype=weight.dtype))
        return _ops.stack(rows, 0) if rows else zeros(0, dim, dtype=weight.dtype)
    member = np.zeros((n_bags, flat.size), dtype=np.float64)
    for b in range(n_bags):
        member[b, starts[b] : ends[b]] = keep[starts[b] : ends[b]]
    if mode == "mean":
        counts = member.sum(1, keepdims=True)
        member = member / np.maximum(counts, 1.0)
    m = tensor(member, dtype=weight.dtype)
    if per_sample_weights is not None:
        m = m * per_sample_weights.reshape(1, -1)
    return _ops.matmul(m, emb)


# -- sampling and distances ----------------------------------------------------------------------
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax (concrete) distribution over ``dim``: ``softmax((logits
    + g) / tau)`` with ``g ~ Gumbel(0, 1)``; ``hard`` returns the one-hot of the argmax with
    the soft sample's gradient (straight through).

    Examples
    --------
    >>> import numbagrad
    >>> y = numbagrad.nn.functional.gumbel_softmax(numbagrad.zeros(2, 5), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        import warnings

        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    e = _random_like(logits, "exponential", 1.0, "gumbel_softmax")  # PyTorch's draws
    if e is None:  # a CUDA tensor: Exp(1) = -log(1 - U)
        e = -_ops.log1p(-rand_like(logits))
    gumbels = -_ops.log(e)
    y_soft = _ops.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.detach().argmax(dim, keepdim=True)
    d = dim % y_soft.ndim
    shape = [1] * y_soft.ndim
    shape[d] = y_soft.shape[d]
    positions = arange(y_soft.shape[d]).reshape(shape)
    y_hard = (positions == index).to(y_soft.dtype)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """The ``p``-norm distances between the rows of an ``(N, M)`` input, the upper triangle
    of ``cdist(input, input)`` in row order (``N (N - 1) / 2`` values).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.pdist(numbagrad.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    a = _ops.index_select(input, 0, tensor(i, dtype=D.int64))
    b = _ops.index_select(input, 0, tensor(j, dtype=D.int64))
    diff = a - b
    if p == 2:
        return _ops.sqrt((diff * diff).sum(-1))
    return _ops.norm(diff, p, -1)


# -- connectionist temporal classification -------------------------------------------------------
_CTC_NEG = -1e30  # a finite "log 0": -inf would make logsumexp's gradient NaN


def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """The connectionist temporal classification loss (PyTorch's ``ctc_loss``): the negative
    log likelihood of ``targets`` summed over all alignments with ``log_probs`` (``(T, N,
    C)`` or unbatched ``(T, C)``), by the forward (alpha) recursion in log space written
    with tensor ops (so it is differentiable twice). ``targets`` is ``(N, S)`` padded or the
    1-D concatenation of the targets; ``'mean'`` divides each loss by its target length
    before averaging. An impossible alignment gives ``inf`` (0 with ``zero_infinity``).

    The gradient is the derivative of the loss. PyTorch's kernel returns it plus
    ``exp(log_probs)`` (its formula assumes a ``log_softmax`` before it, through which the
    extra term cancels), so the two agree on gradients of the logits of a ``log_softmax``,
    not on gradients taken at ``log_probs`` as a leaf.

    Examples
    --------
    >>> import numbagrad
    >>> lp = numbagrad.zeros(3, 1, 2).log_softmax(2)
    >>> numbagrad.nn.functional.ctc_loss(lp, numbagrad.tensor([[1]]), [3], [1], reduction="sum")
    tensor(0.2877)
    """
    reduction = _red(None, None, reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be 2-D or 3-D, got {log_probs.ndim}-D")
    T, N, C = log_probs.shape

    def ints(v):
        if isinstance(v, Tensor):
            return [int(x) for x in v.reshape(-1).tolist()]
        return [int(x) for x in (v if hasattr(v, "__len__") else [v])]

    in_lens, tg_lens = ints(input_lengths), ints(target_lengths)
    if len(in_lens) != N or len(tg_lens) != N:
        raise RuntimeError(
            f"ctc_loss: expected input_lengths and target_lengths of size {N}, got "
            f"{len(in_lens)} and {len(tg_lens)}"
        )
    tg = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets, dtype=np.int64)
    if unbatched and tg.ndim == 1 and len(tg_lens) == 1 and tg.size >= tg_lens[0]:
        tg = tg.reshape(1, -1)
    if tg.ndim == 2:
        rows = [tg[b, : tg_lens[b]] for b in range(N)]
    else:
        starts = np.concatenate([[0], np.cumsum(tg_lens)])
        if starts[-1] > tg.size:
            raise RuntimeError("ctc_loss: target_lengths sum past the targets")
        rows = [tg[starts[b] : starts[b + 1]] for b in range(N)]
    for b in range(N):
        if in_lens[b] > T or in_lens[b] < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {T}, but got value {in_lens[b]}"
            )
        if rows[b].size and (rows[b].min() < 0 or rows[b].max() >= C or (rows[b] == blank).any()):
            raise RuntimeError("ctc_loss: target values must be in [0, C) and not the blank")
    S = max((r.size for r in rows), default=0)
    L = 2 * S + 1
    ext = np.full((N, L), blank, dtype=np.int64)
    skip = np.zeros((N, L), dtype=bool)
    valid = np.zeros((N, L), dtype=bool)
    feasible = np.ones(N, dtype=bool)
    for b, r in enumerate(rows):
        ext[b, 1 : 2 * r.size : 2] = r
        valid[b, : 2 * r.size + 1] = True
        for s in range(3, 2 * r.size, 2):
            skip[b, s] = ext[b, s] != ext[b, s - 2]
        repeats = int((r[1:] == r[:-1]).sum()) if r.size > 1 else 0
        feasible[b] = in_lens[b] >= r.size + repeats
    ext_t = tensor(ext)
    neg = _CTC_NEG
    lp = log_probs
    # alpha at t = 0: the blank or the first label
    init_mask = np.zeros((N, L), dtype=bool)
    init_mask[:, 0] = True
    init_mask[:, 1:2] = valid[:, 1:2]
    first = _ops.gather(lp[0], 1, ext_t)
    alpha = _ops.where(tensor(init_mask), first, neg)
    pad1 = tensor(np.full((N, 1), neg), dtype=lp.dtype)
    pad2 = tensor(np.full((N, 2), neg), dtype=lp.dtype)
    skip_t = tensor(skip)
    valid_t = tensor(valid)
    for t in range(1, T):
        a1 = _ops.cat([pad1, alpha[:, :-1]], 1)
        a2 = _ops.where(
            skip_t, _ops.cat([pad2, alpha[:, :-2]], 1) if L > 2 else alpha * 0 + neg, neg
        )
        new = _ops.logsumexp(_ops.stack([alpha, a1, a2], 0), 0) + _ops.gather(lp[t], 1, ext_t)
        new = _ops.where(valid_t, new, neg)
        running = tensor(np.asarray([t < n for n in in_lens])[:, None])
        alpha = _ops.where(running, new, alpha)
    last = np.asarray([2 * r.size for r in rows], dtype=np.int64)
    end1 = _ops.gather(alpha, 1, tensor(last[:, None])).reshape(N)
    end2 = _ops.gather(alpha, 1, tensor(np.maximum(last - 1, 0)[:, None])).reshape(N)
    has_label = tensor(last > 0)
    ll = _ops.where(has_label, _ops.logaddexp(end1, end2), end1)
    loss = -ll
    feasible_t = tensor(feasible & np.asarray([n > 0 for n in in_lens]))
    loss = _ops.where(feasible_t, loss, 0.0 if zero_infinity else float("inf"))
    if reduction == "mean":
        denom = tensor(np.maximum(np.asarray(tg_lens, dtype=np.float64), 1.0), dtype=loss.dtype)
        out = (loss / denom).mean()
    elif reduction == "sum":
        out = loss.sum()
    else:
        out = loss
    if unbatched and reduction == "none":
        out = out.reshape(())
    return out


# -- channel shuffle ------------------------------------------------------------------------------
def channel_shuffle(input, groups):
    """Interleave the channels (dim 1) of ``(N, C, *)`` input from ``groups`` groups:
    ``(N, g, C/g, *)`` transposed to ``(N, C/g, g, *)``, flattened back.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.arange(6.0).reshape(1, 6, 1)
    >>> numbagrad.nn.functional.channel_shuffle(x, 3).flatten()
    tensor([0., 2., 4., 1., 3., 5.])
    """
    if input.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
