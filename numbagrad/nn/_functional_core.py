"""The core of ``numbagrad.nn.functional`` (the module users import re-exports it with
the attention functions and the rest of the activations and losses, which build on it).

Every function is a composite of numbagrad ops, so it gets reverse mode, forward mode and
``vmap`` from the ops' rules. Checks that read data (class indices in range, BCE inputs in
``[0, 1]``) run only on concrete tensors, never on values a transform owns.
"""

from __future__ import annotations

import math
import warnings

from numbagrad import _dtype as D
from numbagrad import ops as _ops
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import _random_like, arange, full, rand_like
from numbagrad._creation import ones_like as _ones_like
from numbagrad._tensor import Tensor
from numbagrad.nn._primitives import (
    Elu,
    EmbeddingGradScale,
    Gelu,
    Hardtanh,
    LayerNorm,
    LogSigmoid,
    Mish,
    Silu,
    SmoothL1,
)
from numbagrad.ops._op import bind
from numbagrad.ops.inplace import inplace as _inplace
from numbagrad.ops.unary import stable_softplus as _stable_softplus

__all__ = [
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "elu",
    "embedding",
    "gaussian_nll_loss",
    "gelu",
    "hardtanh",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "mish",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
]


# -- helpers -----------------------------------------------------------------------------
def _concrete(*ts):
    """True when every tensor holds data (not a value a transform owns)."""
    return all(not (isinstance(t, Tensor) and t._is_tracer) for t in ts)


def _size(t):
    return f"numbagrad.Size({list(t.shape)})"


def _reduction(size_average, reduce, reduction):
    """The reduction string; the legacy ``size_average``/``reduce`` flags win, with a
    warning, as in PyTorch."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            stacklevel=3,
        )
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input "
            f"size ({_size(input)}). This will likely lead to incorrect results due "
            "to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _clamp_min_straight_through(t, eps):
    """``t`` clamped below at ``eps`` whose gradient passes unchanged (PyTorch clamps such
    tensors in place under no_grad, which leaves the gradient of the identity)."""
    with no_grad():  # (not clamp_min(t, eps) - t: inf - inf would make an infinite t NaN)
        shift = _ops.where(t < eps, eps - t, 0.0)
    return t + shift


def _floating_only(input, kernel):
    """PyTorch's error for an activation kernel that has no integer or bool version."""
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:
        name = _TYPE_NAMES.get(input.dtype) or {D.int64: "Long"}.get(input.dtype, str(input.dtype))
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _maybe_inplace(input, inplace, fn):
    if inplace:
        return _inplace(input, fn)
    return fn(input)


# -- linear layers -----------------------------------------------------------------------
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    Parameters
    ----------
    input : Tensor
        Shape ``(*, in_features)``.
    weight : Tensor
        Shape ``(out_features, in_features)`` (or ``(in_features,)``).
    bias : Tensor, optional
        Shape ``(out_features,)`` (or ``()``).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.linear(numbagrad.ones(1, 2), numbagrad.tensor([[1.0, 2.0]]), numbagrad.tensor([0.5]))
    tensor([[3.5000]])
    """
    if weight.ndim > 2:  # PyTorch's weight.t() refuses it (matmul would broadcast it)
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    out = _ops.matmul(input, weight.t() if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> w = numbagrad.ones(1, 2, 3)
    >>> F.bilinear(numbagrad.ones(4, 2), numbagrad.ones(4, 3), w).shape
    numbagrad.Size([4, 1])
    """
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(
            "bilinear(): input batch dimensions do not match: got "
            f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}"
        )
    if (
        weight.ndim != 3
        or weight.shape[1] != input1.shape[-1]
        or weight.shape[2] != input2.shape[-1]
    ):
        raise RuntimeError(
            f"bilinear(): weight of shape {list(weight.shape)} does not match "
            f"input1 features {input1.shape[-1]} and input2 features "
            f"{input2.shape[-1]}"
        )
    # contract input1 with weight first, then with input2 (PyTorch's _trilinear order, which
    # decides the result when an operand is infinite)
    left = _ops.einsum("...i,oij->...oj", input1, weight)
    out = _ops.einsum("...oj,...j->...o", left, input2)
    return out if bias is None else out + bias


# -- activations -------------------------------------------------------------------------
def relu(input, inplace=False):
    """``max(input, 0)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.relu(numbagrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return input.relu_() if inplace else _ops.relu(input)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``; the gradient is zero at 0 and 6 (as PyTorch's hardtanh).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.relu6(numbagrad.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``; the gradient is zero at and beyond
    the bounds (as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.hardtanh(numbagrad.tensor([-3.0, 0.5, 2.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype == D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not input.dtype.is_floating_point:  # as PyTorch: integer in, integer out
        return _maybe_inplace(input, inplace, lambda x: _ops.clamp(x, int(min_val), int(max_val)))

    # PyTorch's forward is clamp (so -0.0 at a bound of 0 stays -0.0, NaN stays NaN); its
    # backward passes the gradient only strictly inside the bounds, NaN inputs getting 0
    # (its SIMD path; its scalar loop, on strided operands and short tails, passes it)
    params = {"min_val": float(min_val), "max_val": float(max_val)}
    return _maybe_inplace(input, inplace, lambda x: bind(Hardtanh, (x,), params))


def tanh(input):
    """Hyperbolic tangent (:func:`numbagrad.tanh`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.tanh(numbagrad.tensor([0.0]))
    tensor([0.])
    """
    return _ops.tanh(input)


def sigmoid(input):
    """Logistic sigmoid (:func:`numbagrad.sigmoid`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.sigmoid(numbagrad.tensor([0.0]))
    tensor([0.5000])
    """
    return _ops.sigmoid(input)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, linear where ``beta * input > threshold``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.softplus(numbagrad.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    return _ops.softplus(input, beta, threshold)


def gelu(input, approximate="none"):
    """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` with ``approximate='tanh'``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.gelu(numbagrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # (no integer kernel)
        input = input.to(D.get_default_dtype())
    # a primitive whose rule is PyTorch's g * (cdf + x * pdf) (NOTE [Activation primitives])
    return bind(Gelu, (input,), {"approximate": approximate})


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (swish).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.silu(numbagrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    _floating_only(input, "silu_cpu")
    return _maybe_inplace(input, inplace, lambda x: bind(Silu, (x,), {}))


def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.elu(numbagrad.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    _floating_only(input, "elu_cpu")
    params = {"alpha": float(alpha), "scale": 1.0, "input_scale": 1.0}
    return _maybe_inplace(input, inplace, lambda x: bind(Elu, (x,), params))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """Scaled ELU: ``scale * elu(x, alpha)`` with PyTorch's constants
    (``alpha = 1.6733``, ``scale = 1.0507``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.selu(numbagrad.tensor([-1.0, 1.0]))
    tensor([-1.1113,  1.0507])
    """
    _floating_only(input, "elu_cpu")
    params = {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0}
    return _maybe_inplace(input, inplace, lambda x: bind(Elu, (x,), params))


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.logsigmoid(numbagrad.tensor([0.0, -200.0]))
    tensor([  -0.6931, -200.0000])
    """
    # 0 - softplus(-x) (+0.0 where softplus(-x) underflows, as PyTorch's), with PyTorch's
    # rules (NOTE [Activation primitives])
    _log_sigmoid_float_only(input)
    return bind(LogSigmoid, (input,), {})


def _log_sigmoid_float_only(input):
    """PyTorch's log_sigmoid kernel takes floating tensors only (softplus would promote)."""
    if not input.is_floating_point():
        name = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char"}.get(
            str(input.dtype).split(".")[-1], "Bool" if input.dtype is D.bool else "Byte"
        )
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{name}'")


def softsign(input):
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.softsign(numbagrad.tensor([-1.0, 3.0]))
    tensor([-0.5000,  0.7500])
    """
    return input / (1.0 + _ops.abs(input))


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.mish(numbagrad.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    _floating_only(input, "mish_cpu")
    return _maybe_inplace(input, inplace, lambda x: bind(Mish, (x,), {}))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.leaky_relu(numbagrad.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return _maybe_inplace(input, inplace, lambda x: _ops.where(x > 0, x, x * negative_slope))


def _softmax_dim(name, ndim):
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call "
        "to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (computed in ``dtype`` when given).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.softmax(numbagrad.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return _ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (computed in ``dtype`` when given).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.log_softmax(numbagrad.tensor([0.0, 0.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return _ops.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)`` along ``dim``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.softmin(numbagrad.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return _ops.softmax(-input, dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (the identity when not ``training``). On the CPU the mask is PyTorch's for the same
    seed (``bernoulli_(1 - p)``).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.ones(1000)
    >>> y = numbagrad.nn.functional.dropout(x, 0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> numbagrad.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0)
    # PyTorch's CPU dropout: ``empty_like(input).bernoulli_(1 - p).div_(1 - p)``
    keep = _random_like(input, "bernoulli", 1.0 - p, "dropout")
    if keep is None:  # a CUDA tensor
        keep = (rand_like(input) < 1.0 - p).to(input.dtype)
    keep = keep / (1.0 - p)
    return _maybe_inplace(input, inplace, lambda x: x * keep)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then scale
    by ``weight`` and shift by ``bias``.

    Examples
    --------
    >>> import numbagrad
    >>> y = numbagrad.nn.functional.layer_norm(numbagrad.tensor([[1.0, 3.0]]), (2,))
    >>> [round(v, 3) for v in y[0].tolist()]
    [-1.0, 1.0]
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    nd = len(normalized_shape)
    if nd == 0 or input.ndim < nd or tuple(input.shape[input.ndim - nd :]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input "
            f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
            f"input of size{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but "
                f"got {name} of shape {list(t.shape)} and normalized_shape = "
                f"{list(normalized_shape)}"
            )
    _check_layer_norm_dtypes(input, weight, bias)
    # a primitive with PyTorch's backward formula (NOTE [Activation primitives]); its
    # two-pass mean centres a constant row to exactly 0 (PyTorch's Welford moments), so the
    # row's output is exactly the bias
    operands = (input, 1.0 if weight is None else weight, 0.0 if bias is None else bias)
    return bind(LayerNorm, operands, {"nd": nd, "eps": float(eps)})


def _check_layer_norm_dtypes(input, weight, bias):
    """PyTorch's CPU check: float32/float64 inputs take parameters of their own dtype."""
    params = [t for t in (weight, bias) if t is not None]
    if input.dtype not in (D.float32, D.float64) or all(p.dtype is input.dtype for p in params):
        return
    if any(p.dtype is not D.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.normalize(numbagrad.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    denom = _ops.norm(input, p, dim, keepdim=True).clamp_min(eps)
    return input / denom


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the trailing dims.

    ``pad`` lists ``(left, right)`` amounts starting from the LAST dim:
    ``(last_left, last_right, second_last_left, ...)``.

    Parameters
    ----------
    input : Tensor
    pad : sequence of int
        An even number of amounts, at most twice ``input.ndim``.
    mode : {'constant', 'reflect', 'replicate', 'circular'}
        ``constant`` fills with ``value`` (default 0); ``reflect`` mirrors without
        repeating the edge; ``replicate`` repeats the edge; ``circular`` wraps around.
        The other modes pad the last 1, 2 or 3 dims of an input with one or two more dims.
    value : float, optional
        Fill value of ``constant`` mode.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> x = numbagrad.tensor([[1.0, 2.0, 3.0]])
    >>> F.pad(x, (1, 2))
    tensor([[0., 1., 2., 3., 0., 0.]])
    >>> F.pad(x, (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    >>> F.pad(x, (1, 1), mode="replicate")
    tensor([[1., 1., 2., 3., 3.]])
    """
    pad = [int(v) for v in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the "
            f"input dimension but got padding length {len(pad)} and input of "
            f"dimension {input.ndim}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        k = len(pad) // 2
        if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
            )
        # only a leading batch dim may be empty (PyTorch's reflection/replication check)
        if mode != "circular" and 0 in input.shape[1 if input.ndim == k + 2 else 0 :]:
            raise RuntimeError(
                f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch "
                "size and other non-zero dimensions for input, but got: "
                f"{list(input.shape)}"
            )
    out = input
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = out.shape[d]
        if mode == "constant":
            if left < 0:
                out = out.narrow(d, -left, n + left)
                left = 0
            if right < 0:
                out = out.narrow(d, 0, out.shape[d] + right)
                right = 0
            if out.shape[d] < 0:
                raise RuntimeError(
                    f"The input size {n}, plus negative padding {pad[2 * i]} "
                    f"and {pad[2 * i + 1]} resulted in a negative output size"
                )
            out = _pad_constant(out, d, left, right, 0.0 if value is None else value)
            continue
        if left < 0 or right < 0:
            raise NotImplementedError(
                f"negative padding is not supported in mode '{mode}' "
                "(use mode='constant', or narrow the tensor first)"
            )
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the "
                f"corresponding input dimension, but got: padding ({left}, "
                f"{right}) at dimension {d} of input {list(input.shape)}"
            )
        if mode == "circular" and (left > n or right > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and n == 0 and (left or right):
            raise RuntimeError(f"padding of an empty dimension {d} in mode 'replicate'")
        parts = []
        if left:
            if mode == "reflect":
                parts.append(out.narrow(d, 1, left).flip(d))
            elif mode == "replicate":
                parts.append(_repeat_edge(out, d, 0, left))
            else:
                parts.append(out.narrow(d, n - left, left))
        parts.append(out)
        if right:
            if mode == "reflect":
                parts.append(out.narrow(d, n - 1 - right, right).flip(d))
            elif mode == "replicate":
                parts.append(_repeat_edge(out, d, n - 1, right))
            else:
                parts.append(out.narrow(d, 0, right))
        out = _ops.cat(parts, d) if len(parts) > 1 else out
    return out


def _pad_constant(x, d, left, right, value):
    if not left and not right:
        return x
    parts = []
    for amount in (left, right):
        if amount:
            shape = list(x.shape)
            shape[d] = amount
            parts.append(full(shape, value, dtype=x.dtype, device=x.device))
        else:
            parts.append(None)
    seq = [p for p in (parts[0], x, parts[1]) if p is not None]
    return _ops.cat(seq, d)


def _repeat_edge(x, d, index, amount):
    shape = list(x.shape)
    shape[d] = amount
    return x.narrow(d, index, 1).expand(*shape)


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """The rows of ``weight`` at the int indices ``input``: a tensor of shape
    ``input.shape + (weight.shape[1],)`` (PyTorch's ``nn.functional.embedding``).

    ``padding_idx``'s row gets no gradient; ``max_norm`` first rescales, in place, the
    referenced rows whose ``norm_type``-norm exceeds it; ``scale_grad_by_freq`` divides
    each row's gradient by its index's count in ``input``. numbagrad's gradients are dense:
    ``sparse=True`` raises.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> numbagrad.nn.functional.embedding(numbagrad.tensor([[2, 1]]), w)
    tensor([[[3., 4.],
             [1., 2.]]])
    """
    if not isinstance(input, Tensor) or input.dtype not in (D.int64, D.int32):
        got = f"a {input.dtype} tensor" if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {got} instead (while checking arguments for embedding)"
        )
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n, dim = weight.shape
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): numbagrad has no sparse gradients; pass sparse=False "
            "(the dense gradient has the same values)"
        )
    idx = _ops.reshape(input.to(D.int64), (-1,))
    if max_norm is not None:
        _embedding_renorm_(weight, idx, max_norm, norm_type)
    try:
        out = _ops.index_select(weight, 0, idx)
    except IndexError:
        raise IndexError("index out of range in self") from None
    if padding_idx is not None or scale_grad_by_freq:
        with no_grad():
            s = _ones_like(idx, dtype=weight.dtype)
            if scale_grad_by_freq:
                s = s / _ops.index_select(_ops.bincount(idx, minlength=n), 0, idx).to(weight.dtype)
            if padding_idx is not None:
                s = _ops.where(idx == padding_idx, 0.0, s)
        out = bind(EmbeddingGradScale, (out, _ops.reshape(s, (-1, 1))))
    return _ops.reshape(out, (*input.shape, dim))


def _embedding_renorm_(weight, idx, max_norm, norm_type):
    """Rescale in place the rows of ``weight`` at ``idx`` whose ``norm_type``-norm exceeds
    ``max_norm`` to norm ``max_norm`` (PyTorch's ``embedding_renorm_``, also with its
    ``1e-7``), outside autograd."""
    with no_grad():
        rows = _ops.unique(idx)
        w = _ops.index_select(weight, 0, rows)
        norms = _ops.norm(w, norm_type, dim=1)
        scale = _ops.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = w * _ops.unsqueeze(scale, 1).to(weight.dtype)


def one_hot(tensor, num_classes=-1):
    """One-hot encoding of int64 class indices: shape ``(*, num_classes)``, int64.

    ``num_classes=-1`` uses the largest index plus one.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.functional.one_hot(numbagrad.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if _concrete(tensor):
        data = tensor._data
        if data.size and data.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            if data.size == 0:
                raise RuntimeError("Can not infer total number of classes from empty tensor.")
            num_classes = int(data.max()) + 1
        elif data.size and data.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError(
            "one_hot(num_classes=-1) reads the data to count the classes, "
            "which a numbagrad.func transform cannot; pass num_classes"
        )
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim`` (broadcasting).

    ``sum(x1 * x2, dim) / (max(||x1||, eps) * max(||x2||, eps))``.

    Examples
    --------
    >>> import numbagrad
    >>> a = numbagrad.tensor([[1.0, 0.0]]); b = numbagrad.tensor([[1.0, 1.0]])
    >>> round(float(numbagrad.nn.functional.cosine_similarity(a, b)), 4)
    0.7071
    """
    if tuple(x1.shape) != tuple(x2.shape):  # as PyTorch: the norms of the broadcast operands
        x1, x2 = _ops.broadcast_tensors(x1, x2)
    n1 = _clamp_min_straight_through(_ops.norm(x1, 2, dim, keepdim=True), eps)
    n2 = _clamp_min_straight_through(_ops.norm(x2, 2, dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim.

    Examples
    --------
    >>> import numbagrad
    >>> d = numbagrad.nn.functional.pairwise_distance(numbagrad.zeros(1, 2),
    ...                                               numbagrad.tensor([[3.0, 4.0]]))
    >>> round(float(d), 4)
    5.0
    """
    return _ops.norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


# -- losses ------------------------------------------------------------------------------
def _weighted(loss, weight, input, reduction, mean_by_weight):
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target)^2``, reduced; with ``weight`` the mean is
    ``sum(w * err) / sum(w)``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.mse_loss(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([0.0, 0.0]))
    tensor(2.5000)
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _promoted(input, target)
    d = input - target
    return _weighted(d * d, weight, input, reduction, True)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced; with ``weight`` the mean is
    ``sum(w * err) / sum(w)``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.l1_loss(numbagrad.tensor([1.0, -2.0]), numbagrad.tensor([0.0, 0.0]))
    tensor(1.5000)
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _promoted(input, target)
    return _weighted(_ops.abs(input - target), weight, input, reduction, True)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input -
    target``); ``beta = 0`` is the L1 loss.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.smooth_l1_loss(numbagrad.tensor([0.5, 3.0]), numbagrad.zeros(2), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _promoted(input, target)
    if beta == 0.0:
        return _reduce(_ops.abs(input - target), reduction)
    # a primitive: PyTorch's rules (NOTE [Activation primitives])
    loss = bind(SmoothL1, (input, target), {"beta": float(beta), "huber": False})
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``; with
    ``weight`` the mean is the plain mean of ``w * loss`` (as PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> F.huber_loss(numbagrad.tensor([0.5, 3.0]), numbagrad.zeros(2), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _warn_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if (
        isinstance(target, Tensor) and isinstance(input, Tensor) and target.dtype is not input.dtype
    ):  # PyTorch's result has input's dtype
        target = target.to(input.dtype)
    loss = bind(SmoothL1, (input, target), {"beta": float(delta), "huber": True})
    return _weighted(loss, weight, input, reduction, False)


def _promoted(input, target):
    """``input`` and ``target`` in their promoted dtype as tensors of one shape (PyTorch
    broadcasts the two before the loss, so a 0-d operand promotes like any other)."""
    if isinstance(input, Tensor) and isinstance(target, Tensor) and input.dtype is not target.dtype:
        dt = D.promote_types(input.dtype, target.dtype)
        input, target = input.to(dt), target.to(dt)
    return input, target


def _safe_log(x):
    """``log(x)`` clamped below at -100 (PyTorch's BCE); the gradient at ``x = 0`` is 0,
    not NaN."""
    pos = x > 0
    return _ops.where(pos, _ops.clamp_min(_ops.log(_ops.where(pos, x, 1.0)), -100.0), -100.0)


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """``-w (t log(x) + (1 - t) log(1 - x))`` with the logs clamped at -100.

    Raises
    ------
    ValueError
        If ``target`` and ``input`` differ in size.
    RuntimeError
        If an input lies outside ``[0, 1]``.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> l = F.binary_cross_entropy(numbagrad.tensor([0.5]), numbagrad.tensor([1.0]))
    >>> round(float(l), 4)
    0.6931
    """
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size(target)}) that is different to the "
            f"input size ({_size(input)}) is deprecated. Please ensure they have "
            "the same size."
        )
    if _concrete(input):
        data = input._data
        if data.size and not ((data >= 0) & (data <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
    if _concrete(target):
        data = target._data
        if data.size and not ((data >= 0) & (data <= 1)).all():
            raise RuntimeError("all elements of target should be between 0 and 1")
    loss = -(target * _safe_log(input) + (1.0 - target) * _safe_log(1.0 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably:
    ``(1 - t) x + (1 + (p - 1) t) softplus(-x)``, ``p`` the ``pos_weight`` (broadcast
    along the last dim).

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> l = F.binary_cross_entropy_with_logits(numbagrad.tensor([0.0]), numbagrad.tensor([1.0]))
    >>> round(float(l), 4)
    0.6931
    """
    _log_sigmoid_float_only(input)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({_size(target)}) must be the same as input size ({_size(input)})"
        )
    sp = _stable_softplus(-input)  # log(1 + exp(-x)), stable for any x
    if pos_weight is not None:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input + log_weight * sp
    else:
        loss = (1.0 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_nll(input, target, weight, ignore_index):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if target.dtype is not D.int64:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got "
            f"{_TYPE_NAMES.get(target.dtype, str(target.dtype))}"
        )
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        if target.ndim == 0 or input.shape[0] != target.shape[0]:
            tb = target.shape[0] if target.ndim else 0
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({tb})."
            )
        want = (input.shape[0], *input.shape[2:])
        if tuple(target.shape) != want:
            if input.ndim == 2:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            raise RuntimeError(f"Expected target size {list(want)}, got {list(target.shape)}")
    n_classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} "
            f"classes or no classes but got weight tensor of shape: "
            f"{list(weight.shape)}"
        )
    if _concrete(target):
        t = target._data
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    return n_classes


_TYPE_NAMES = {D.int32: "Int", D.float32: "Float", D.float64: "Double", D.bool: "Bool"}


def _class_weights(input, target, weight, ignore_index):
    """``(valid, safe_target, w)``: the mask of non-ignored targets, the targets with
    ignored entries set to class 0, and each target's weight (0 where ignored)."""
    valid = target != ignore_index
    safe = _ops.where(valid, target, 0)
    if weight is None:
        w = valid.to(input.dtype)
    else:
        w = _ops.index_select(weight, 0, safe.reshape(-1)).reshape(tuple(safe.shape)) * valid
    return valid, safe, w


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """Negative log likelihood ``-w[t] * input[t]`` of log-probabilities ``input`` (shape
    ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``) at class indices ``target``.

    The mean divides by the sum of the targets' weights; targets equal to
    ``ignore_index`` contribute nothing.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> logp = numbagrad.tensor([[-0.1, -2.0], [-3.0, -0.5]])
    >>> F.nll_loss(logp, numbagrad.tensor([0, 1]))
    tensor(0.3000)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_nll(input, target, weight, ignore_index)
    cdim = 0 if input.ndim == 1 else 1
    valid, safe, w = _class_weights(input, target, weight, ignore_index)
    picked = _ops.gather(input, cdim, safe.unsqueeze(cdim)).squeeze(cdim)
    loss = _ops.where(valid, -picked * w, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Cross entropy of logits ``input`` (``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``)
    against class indices or class probabilities ``target``.

    With indices it is ``nll_loss(log_softmax(input, class_dim), target, ...)``; with
    probabilities (a floating ``target`` of ``input``'s shape) it is
    ``-sum(w * target * log_softmax(input))`` per sample, the mean dividing by the number
    of samples. ``label_smoothing`` mixes the target with the uniform distribution.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> logits = numbagrad.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(float(F.cross_entropy(logits, numbagrad.tensor([0, 1]))), 4)
    0.1269
    >>> round(float(F.cross_entropy(logits, numbagrad.tensor([[1.0, 0.0], [0.0, 1.0]]))), 4)
    0.1269
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    cdim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[cdim]
    logp = _ops.log_softmax(input, cdim)
    wshape = [1] * input.ndim
    wshape[cdim] = n_classes
    if target.is_floating_point():
        if tuple(target.shape) != tuple(input.shape):
            if target.ndim <= 1 and input.ndim == 2:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            raise RuntimeError(
                f"Expected target size {list(input.shape)}, got {list(target.shape)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if label_smoothing > 0:
            target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        if reduction == "none":
            return -prod.sum(cdim)
        if reduction == "sum":
            return -prod.sum()
        return -prod.sum() / (input.numel() / n_classes)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return nll
    valid, _, w = _class_weights(input, target, weight, ignore_index)
    if weight is not None:
        smooth = -(logp * weight.reshape(wshape)).sum(cdim)
    else:
        smooth = -logp.sum(cdim)
    smooth = _ops.where(valid, smooth, 0.0)
    if reduction == "mean":
        smooth = smooth.sum() / (w.sum() if weight is not None else valid.sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1.0 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``target * (log(target) - input)`` of log-probabilities
    ``input`` (``exp(target) * (target - input)`` with ``log_target``).

    ``reduction='batchmean'`` divides the sum by the batch size (the KL divergence);
    ``'mean'`` divides by the number of elements, with PyTorch's warning.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> p = numbagrad.tensor([[0.5, 0.5]])
    >>> q = numbagrad.tensor([[0.25, 0.75]])
    >>> round(float(F.kl_div(q.log(), p, reduction="batchmean")), 4)
    0.1438
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, "mean")
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the "
            "support size.'batchmean' divides only by the batch size, and aligns "
            "with the KL div math definition.'mean' will be changed to behave the "
            "same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = _ops.exp(target) * (target - input)
    else:
        # PyTorch's formula: NaN for a negative target, and a NaN gradient at target 0
        loss = _ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``0.5 (log(var) + (input - target)^2 / var)``
    (plus ``0.5 log(2 pi)`` with ``full``), ``var`` clamped below at ``eps`` with the
    gradient passed through the clamp, as PyTorch.

    ``var`` may have ``input``'s shape, lack its last dim, have one dim of size 1 where
    ``input``'s differs, or be a float.

    Examples
    --------
    >>> import numbagrad
    >>> import numbagrad.nn.functional as F
    >>> l = F.gaussian_nll_loss(numbagrad.tensor([1.0]), numbagrad.tensor([0.0]),
    ...                         numbagrad.tensor([1.0]))
    >>> round(float(l), 4)
    0.5
    """
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = full(tuple(input.shape), float(var), dtype=input.dtype)
    elif _concrete(var) and bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif (
            input.ndim == var.ndim
            and sum(y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1
        ):
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _clamp_min_straight_through(var, eps)
    d = input - target
    loss = 0.5 * (_ops.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
