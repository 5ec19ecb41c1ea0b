"""Activation modules (PyTorch's ``torch.nn.modules.activation``): the ones defined here
(``PReLU``, ``RReLU``, ``CELU``, ``GLU``, ``Hardswish``, ``Hardsigmoid``, ``Hardshrink``,
``Softshrink``, ``Tanhshrink``, ``Threshold``, ``Softmax2d``, :class:`MultiheadAttention`) and
the ones living in ``layers.py``, re-exported so ``torch.nn.modules.activation`` imports
port unchanged."""

from __future__ import annotations

from numbagrad._creation import empty
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn.modules.layers import (
    ELU,
    GELU,
    SELU,
    Hardtanh,
    LeakyReLU,
    Linear,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    _factory,
)
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "MultiheadAttention",
    "PReLU",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value`` (see
    :func:`numbagrad.nn.functional.threshold`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Threshold(0.5, 0.0)(numbagrad.tensor([0.2, 0.8]))
    tensor([0.0000, 0.8000])
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        s = f"threshold={self.threshold}, value={self.value}"
        return s + (", inplace=True" if self.inplace else "")


class CELU(Module):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.CELU()
    CELU(alpha=1.0)
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """The gated linear unit over ``dim`` (see :func:`numbagrad.nn.functional.glu`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.GLU()(numbagrad.zeros(3, 4)).shape
    numbagrad.Size([3, 2])
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _Shrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Hardshrink()
    Hardshrink(0.5)
    """

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """Shrink towards 0 by ``lambd``, 0 inside ``[-lambd, lambd]``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Softshrink(0.25)
    Softshrink(0.25)
    """

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Tanhshrink()(numbagrad.zeros(2))
    tensor([0., 0.])
    """

    def forward(self, input):
        return F.tanhshrink(input)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Hardsigmoid()(numbagrad.zeros(1))
    tensor([0.5000])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Hardswish(Hardsigmoid):
    """``x * relu6(x + 3) / 6``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Hardswish()(numbagrad.tensor([4.0]))
    tensor([4.])
    """

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class RReLU(Module):
    """Randomized leaky ReLU: a slope drawn from ``U(lower, upper)`` per element in
    training, ``(lower + upper) / 2`` in eval.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.RReLU()
    RReLU(lower=0.125, upper=0.3333333333333333)
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        s = f"lower={self.lower}, upper={self.upper}"
        return s + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``x`` where positive, else ``weight * x`` with a learnable ``weight`` (one value or
    ``num_parameters`` channels, starting at ``init``).

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.nn.PReLU()
    >>> m(numbagrad.tensor([-4.0, 1.0]))
    tensor([-1.,  1.], grad_fn=<WhereBackward0>)
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=_factory(device, dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        """Fill ``weight`` with ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Softmax2d()(numbagrad.zeros(2, 4, 3, 3))[0, :, 0, 0]
    tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under PyTorch's name for ``MultiheadAttention.out_proj`` (the same layer;
    the name only shows in the ``repr``)."""


class MultiheadAttention(Module):
    """Multi-head attention (PyTorch's ``nn.MultiheadAttention``): ``in_proj_weight``
    (``3E x E``) or, with ``kdim``/``vdim`` other than ``embed_dim``, ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight``; ``in_proj_bias``, ``out_proj``, optional ``bias_k``,
    ``bias_v``. ``forward`` returns ``(attn_output, attn_weights)``.

    Examples
    --------
    >>> import numbagrad
    >>> mha = numbagrad.nn.MultiheadAttention(16, 4, batch_first=True)
    >>> x = numbagrad.randn(2, 5, 16)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (numbagrad.Size([2, 5, 16]), numbagrad.Size([2, 5, 5]))
    """

    __constants__ = ("batch_first",)

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        super().__init__()
        dt = _factory(device, dtype)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dt))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dt))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dt))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dt))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dt))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dt)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dt))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dt))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        is_batched = query.ndim == 3
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(0, 1)
                else:
                    query, key = query.transpose(0, 1), key.transpose(0, 1)
                    value = key
            else:
                query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            out = out.transpose(0, 1)
        return out, weights
