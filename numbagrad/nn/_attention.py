"""Attention as compositions of numbagrad ops: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (PyTorch's ``torch.nn.functional`` functions of these names;
re-exported there). Every step is a differentiable op (``matmul``, ``softmax``, ``where``), so
reverse mode, forward mode, double backward and ``vmap`` come from the ops' rules.
"""

from __future__ import annotations

import math

from numbagrad import _dtype as D
from numbagrad import ops as _ops
from numbagrad._creation import ones, zeros
from numbagrad._tensor import Tensor
from numbagrad.nn._functional_core import dropout, linear, pad

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _masked_softmax(scores, may_mask_rows):
    """Softmax over the last dim; with ``may_mask_rows`` a row that is all ``-inf`` gives
    zeros (PyTorch's ``_safe_softmax``), with zero gradients rather than NaN."""
    if not may_mask_rows:
        return _ops.softmax(scores, -1)
    full = (scores == _NEG_INF).all(-1, keepdim=True)
    p = _ops.softmax(_ops.where(full, 0.0, scores), -1)
    return _ops.where(full, 0.0, p)


def _dropout(x, p, training=True):
    return dropout(x, p, training)


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    """``softmax(q k^T * scale + bias) v`` over the last two dims (PyTorch's).

    ``attn_mask`` is boolean (True: may attend) or float (added to the scores), broadcast to
    ``(..., L, S)``; ``is_causal`` masks the upper triangle (not together with ``attn_mask``);
    ``scale`` defaults to ``1/sqrt(E)``; ``enable_gqa`` repeats the key and value heads (dim
    -3) to the query's count. Rows with nothing to attend to give zeros, as PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.functional import scaled_dot_product_attention
    >>> q = numbagrad.randn(2, 4, 5, 8)
    >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
    numbagrad.Size([2, 4, 5, 8])
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): {name} must be a Tensor")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: query, key and value must be at least 2-D"
        )
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"scaled_dot_product_attention: the query's and the key's last dims differ "
            f"({query.shape[-1]} and {key.shape[-1]})"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: key and value sequence lengths differ "
            f"({key.shape[-2]} and {value.shape[-2]})"
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    L, S = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in query"
            )
        if hk != hq:
            key = _ops.repeat_interleave(key, hq // hk, -3)
        if hv != hq:
            value = _ops.repeat_interleave(value, hq // hv, -3)
    scores = _ops.matmul(query, key.transpose(-2, -1)) * sc
    may_mask = False
    if is_causal:
        causal = ones(L, S, dtype=D.bool).tril()
        scores = _ops.masked_fill(scores, ~causal, _NEG_INF)
    if attn_mask is not None:
        if attn_mask.dtype == D.bool:
            scores = _ops.masked_fill(scores, ~attn_mask, _NEG_INF)
        else:
            scores = scores + attn_mask
        may_mask = True
    attn = _masked_softmax(scores, may_mask)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p)
    return _ops.matmul(attn, value)


def _canonical_mask(mask, name, target_dtype):
    """A boolean mask (True: masked out, the MultiheadAttention convention) as a float one
    with ``-inf``; a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype == D.bool:
        return zeros(tuple(mask.shape), dtype=target_dtype).masked_fill(mask, _NEG_INF)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """PyTorch's ``F.multi_head_attention_forward``: inputs ``(L, N, E)`` (or unbatched
    ``(L, E)``); returns ``(attn_output, attn_weights)`` (weights None unless
    ``need_weights``, averaged over heads with ``average_attn_weights``)."""
    is_batched = query.ndim == 3
    if query.ndim not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
            "query tensor"
        )
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(
            f"For {'batched (3-D)' if is_batched else 'unbatched (2-D)'} `query`, expected "
            f"`key` and `value` to be {query.ndim}-D but found {key.ndim}-D and {value.ndim}-D "
            "tensors respectively"
        )
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
        )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:
            q, k, v = _ops.chunk(linear(query, in_proj_weight, in_proj_bias), 3, -1)
        else:
            w_q, w_k, w_v = _ops.chunk(in_proj_weight, 3, 0)
            b_q = b_k = b_v = None
            if in_proj_bias is not None:
                b_q, b_k, b_v = _ops.chunk(in_proj_bias, 3, 0)
            if key is value:
                q = linear(query, w_q, b_q)
                k, v = _ops.chunk(
                    linear(
                        key,
                        _ops.cat([w_k, w_v], 0),
                        None if b_k is None else _ops.cat([b_k, b_v], 0),
                    ),
                    2,
                    -1,
                )
            else:
                q, k, v = _in_projection(query, key, value, w_q, w_k, w_v, b_q, b_k, b_v)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q/k/v_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = _ops.chunk(in_proj_bias, 3, 0)
        q, k, v = _in_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v
        )

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = _ops.cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = _ops.cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = static_v
    if add_zero_attn:
        z = zeros(bsz * num_heads, 1, head_dim, dtype=q.dtype)
        k = _ops.cat([k, z], 1)
        v = _ops.cat([v, z], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = (
            key_padding_mask.reshape(bsz, 1, 1, src_len)
            .expand(bsz, num_heads, 1, src_len)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0
    scores = _ops.matmul(q * (1.0 / math.sqrt(head_dim)), k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    if need_weights:
        weights = _ops.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
    else:
        weights = _masked_softmax(scores, attn_mask is not None)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
    out = _ops.matmul(weights, v)  # (N * H, L, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights
