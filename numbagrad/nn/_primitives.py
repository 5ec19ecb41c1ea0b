"""The activations and losses of ``nn.functional`` whose PyTorch derivatives are formulas of
their own.

NOTE [Activation primitives]
``hardtanh``/``relu6``, ``elu``/``selu``, ``silu``, ``mish`` and the smooth L1 and Huber
losses are primitives (NOTE [Primitive declaration] in ``ops/_op.py``) rather than
composites, so that their rules are PyTorch's formulas from ``derivatives.yaml`` and
``FunctionsManual.cpp`` and give PyTorch's values where a composite's chain rule would not:
``silu``'s ``g * s * (1 + x * (1 - s))`` is ``-inf`` for a ``-inf`` gradient at ``x = 0``,
where the product rule of ``x * sigmoid(x)`` gives ``-inf + 0 * -inf = NaN``; ``elu``'s and
the losses' double backward multiply by a mask (``x < 0``, ``|d| < beta``), so the second
derivative of ``elu`` at ``x = 0`` is 0 and a NaN incoming gradient stays NaN. Every rule is
written with numbagrad ops (or the ``EluBackward``/``SmoothL1Backward`` primitives, whose own
rules are PyTorch's double-backward formulas), so it is differentiable again; forwards go
through the backend's maps (``be.map``/``be.binary``), so CPU and CUDA arrays both work.
"""

from __future__ import annotations

import numpy as np

from numbagrad import ops as F
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import front
from numbagrad.ops.binary import broadcast_batch
from numbagrad.ops.unary import unary_batch

__all__ = [
    "Elu",
    "EluBackward",
    "Hardtanh",
    "LayerNorm",
    "Mish",
    "Silu",
    "SmoothL1",
    "SmoothL1Backward",
]


def _add_terms(terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


class Elu(Primitive):
    """``scale * x`` for ``x > 0``, else ``alpha * scale * expm1(input_scale * x)``
    (PyTorch's ``elu``, which ``selu`` calls with its constants)."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, *, alpha, scale, input_scale):
        # both branches everywhere, as PyTorch's SIMD path (an overflow is not selected)
        neg = be.map("expm1", be.binary("multiply", x, input_scale))
        neg = be.binary("multiply", neg, alpha * scale)
        return be.xp.where(be.binary("greater", x, 0), be.binary("multiply", x, scale), neg)

    @staticmethod
    def vjp(ctx, g, *, alpha, scale, input_scale):
        (x,) = ctx.saved()
        params = {"alpha": alpha, "scale": scale, "input_scale": input_scale}
        return (bind(EluBackward, (g, x), params),)

    @staticmethod
    def jvp(primals, tangents, out, *, alpha, scale, input_scale):
        """``elu_backward(t, x)``."""
        t = tangents[0]
        if t is None:
            return None
        params = {"alpha": alpha, "scale": scale, "input_scale": input_scale}
        return bind(EluBackward, (t, primals[0]), params)


class EluBackward(Primitive):
    """PyTorch's ``elu_backward(g, x)``: ``g * scale`` for ``x > 0``, else ``g * input_scale
    * alpha * scale * exp(input_scale * x)`` (a NaN ``x`` takes the second branch, as on
    PyTorch's SIMD path)."""

    saves_inputs = (0, 1)
    saved_for = ((1,), (0, 1))  # g only for x's gradient; x for both
    batch = classmethod(broadcast_batch)

    @staticmethod
    def impl(be, g, x, *, alpha, scale, input_scale):
        e = be.map("exp", be.binary("multiply", x, input_scale))
        neg = be.binary("multiply", be.binary("multiply", g, input_scale), alpha * scale)
        neg = be.binary("multiply", neg, e)
        return be.xp.where(be.binary("greater", x, 0), be.binary("multiply", g, scale), neg)

    @staticmethod
    def vjp(ctx, gg, *, alpha, scale, input_scale):
        """``elu_backward(gg, x)`` and PyTorch's ``elu_double_backward``:
        ``elu_backward(gg * g * input_scale, x) * (x < 0)``."""
        g, x = ctx.saved()
        params = {"alpha": alpha, "scale": scale, "input_scale": input_scale}
        dg = bind(EluBackward, (gg, x), params) if ctx.needs_input_grad(0) else None
        dx = None
        if ctx.needs_input_grad(1):
            dx = bind(EluBackward, (gg * g * input_scale, x), params) * (x < 0).to(x.dtype)
        return dg, dx

    @staticmethod
    def jvp(primals, tangents, out, *, alpha, scale, input_scale):
        g, x = primals
        tg, tx = tangents
        params = {"alpha": alpha, "scale": scale, "input_scale": input_scale}
        return _add_terms(
            [
                None if tg is None else bind(EluBackward, (tg, x), params),
                None
                if tx is None
                else bind(EluBackward, (tx * g * input_scale, x), params) * (x < 0).to(x.dtype),
            ]
        )


def _hardtanh_inside(x, min_val, max_val):
    return (x > min_val) & (x < max_val)


class Hardtanh(Primitive):
    """``x`` clamped to ``[min_val, max_val]`` (PyTorch's ``clamp``: ``-0.0`` at a bound of
    0 stays ``-0.0``, NaN stays NaN). The gradient passes strictly inside the bounds only,
    and is 0 at a NaN input, as PyTorch's ``hardtanh_backward`` on its SIMD path; the
    second derivative is 0 (no rule reaches ``x``)."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, *, min_val, max_val):
        if type(x) is np.ndarray:
            return np.asarray(np.clip(x, min_val, max_val))  # keeps x where x == a bound
        low = be.xp.where(be.binary("less", x, min_val), min_val, x)
        return be.xp.where(be.binary("greater", x, max_val), max_val, low)

    @staticmethod
    def vjp(ctx, g, *, min_val, max_val):
        (x,) = ctx.saved()
        return (F.where(_hardtanh_inside(x, min_val, max_val), g, 0.0),)

    @staticmethod
    def jvp(primals, tangents, out, *, min_val, max_val):
        t = tangents[0]
        if t is None:
            return None
        return F.where(_hardtanh_inside(primals[0], min_val, max_val), t, 0.0)


def _silu_derivative(x):
    s = F.sigmoid(x)
    return s, 1.0 + x * (1.0 - s)


class Silu(Primitive):
    """``x * sigmoid(x)``; the rule is PyTorch's ``g * s * (1 + x * (1 - s))``."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return be.binary("multiply", x, be.map("sigmoid", x))

    @staticmethod
    def vjp(ctx, g):
        (x,) = ctx.saved()
        s, d = _silu_derivative(x)
        return (g * s * d,)

    @staticmethod
    def jvp(primals, tangents, out):
        t = tangents[0]
        if t is None:
            return None
        s, d = _silu_derivative(primals[0])
        return t * s * d


def _mish_parts(x):
    tsp = F.tanh(F.softplus(x, 1.0, 20.0))
    return tsp, x * F.sigmoid(x) * (1.0 - tsp * tsp)


class Mish(Primitive):
    """``x * tanh(softplus(x))``; the rule is PyTorch's
    ``g * (tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2))``."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return be.binary("multiply", x, be.map("tanh", be.map("softplus", x)))

    @staticmethod
    def vjp(ctx, g):
        (x,) = ctx.saved()
        tsp, rest = _mish_parts(x)
        return (g * (tsp + rest),)

    @staticmethod
    def jvp(primals, tangents, out):
        t = tangents[0]
        if t is None:
            return None
        tsp, rest = _mish_parts(primals[0])
        return t * (tsp + rest)


def _smooth_l1_params(beta, huber):
    return {"beta": beta, "huber": huber}


class SmoothL1(Primitive):
    """The elementwise smooth L1 loss of ``d = x - t`` (PyTorch's ``smooth_l1_loss`` with
    ``reduction='none'``): ``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``;
    with ``huber`` the Huber loss ``0.5 d^2``, else ``beta (|d| - 0.5 beta)`` (``beta`` the
    ``delta``). The rules are PyTorch's ``smooth_l1_loss_backward``/``huber_loss_backward``
    (``SmoothL1Backward``), the target's with the operands swapped."""

    saves_inputs = (0, 1)
    batch = classmethod(broadcast_batch)

    @classmethod
    def node_name(cls, params) -> str:
        """PyTorch's names: ``SmoothL1LossBackward0``, ``HuberLossBackward0``."""
        return "HuberLossBackward0" if params["huber"] else "SmoothL1LossBackward0"

    @staticmethod
    def impl(be, x, t, *, beta, huber):
        z = be.map("abs", be.binary("subtract", x, t))
        if huber:
            quad = be.binary("multiply", be.binary("multiply", z, 0.5), z)
            lin = be.binary("multiply", be.binary("subtract", z, 0.5 * beta), beta)
        else:
            quad = be.binary(
                "true_divide", be.binary("multiply", be.binary("multiply", z, 0.5), z), beta
            )
            lin = be.binary("subtract", z, 0.5 * beta)
        return be.xp.where(be.binary("less", z, beta), quad, lin)

    @staticmethod
    def vjp(ctx, g, *, beta, huber):
        x, t = ctx.saved()
        p = _smooth_l1_params(beta, huber)
        return (
            bind(SmoothL1Backward, (g, x, t), p) if ctx.needs_input_grad(0) else None,
            bind(SmoothL1Backward, (g, t, x), p) if ctx.needs_input_grad(1) else None,
        )

    @staticmethod
    def jvp(primals, tangents, out, *, beta, huber):
        x, t = primals
        tx, tt = tangents
        p = _smooth_l1_params(beta, huber)
        return _add_terms(
            [
                None if tx is None else bind(SmoothL1Backward, (tx, x, t), p),
                None if tt is None else bind(SmoothL1Backward, (tt, t, x), p),
            ]
        )


def _smooth_l1_double(gg, x, t, beta, huber):
    """PyTorch's ``smooth_l1_loss_double_backward``/``huber_loss_double_backward`` of the
    product ``gg`` of the two incoming gradients: a multiplied mask (NaN stays NaN)."""
    mask = (F.abs(x - t) < beta).to(gg.dtype)
    return gg * mask if huber else gg * mask / beta


class SmoothL1Backward(Primitive):
    """PyTorch's ``smooth_l1_loss_backward(g, x, t)``: ``-g``, ``g`` or ``d g / beta`` for
    ``d = x - t`` below ``-beta``, above ``beta`` or between (``huber_loss_backward``:
    ``-g beta``, ``g beta`` or ``d g``); a NaN ``d`` gives NaN."""

    saves_inputs = (0, 1, 2)
    saved_for = ((1, 2), (0, 1, 2), (0, 1, 2))  # g only for x's and t's gradients
    batch = classmethod(broadcast_batch)

    @classmethod
    def node_name(cls, params) -> str:
        """PyTorch's names: ``SmoothL1LossBackwardBackward0``, ``HuberLossBackwardBackward0``."""
        return "HuberLossBackwardBackward0" if params["huber"] else "SmoothL1LossBackwardBackward0"

    @staticmethod
    def impl(be, g, x, t, *, beta, huber):
        d = be.binary("subtract", x, t)
        if huber:
            mid = be.binary("multiply", d, g)
            pos = be.binary("multiply", g, beta)
        else:
            mid = be.binary("true_divide", be.binary("multiply", d, g), beta)
            pos = g
        neg = be.binary("multiply", pos, -1.0)
        out = be.xp.where(be.binary("greater", d, beta), pos, mid)
        return be.xp.where(be.binary("less", d, -beta), neg, out)

    @staticmethod
    def vjp(ctx, gg, *, beta, huber):
        g, x, t = ctx.saved()
        p = _smooth_l1_params(beta, huber)
        dg = bind(SmoothL1Backward, (gg, x, t), p) if ctx.needs_input_grad(0) else None
        dx = dt = None
        if ctx.needs_input_grad(1) or ctx.needs_input_grad(2):
            dx = _smooth_l1_double(gg * g, x, t, beta, huber)
            dt = -dx if ctx.needs_input_grad(2) else None
            dx = dx if ctx.needs_input_grad(1) else None
        return dg, dx, dt

    @staticmethod
    def jvp(primals, tangents, out, *, beta, huber):
        g, x, t = primals
        tg, tx, tt = tangents
        p = _smooth_l1_params(beta, huber)
        dd = tx if tt is None else (-tt if tx is None else tx - tt)
        return _add_terms(
            [
                None if tg is None else bind(SmoothL1Backward, (tg, x, t), p),
                None if dd is None else _smooth_l1_double(g * dd, x, t, beta, huber),
            ]
        )


def _ln_dims(ndim, nd):
    return tuple(range(ndim - nd, ndim))


def _ln_moments(x, nd, eps):
    """``(mean, centred, rstd)`` of ``x`` over its last ``nd`` dims, in numbagrad ops: a
    two-pass mean (a constant row centres to exactly 0, as PyTorch's Welford moments)."""
    dims = _ln_dims(x.ndim, nd)
    m1 = x.mean(dims, keepdim=True)
    c0 = x - m1
    m2 = c0.mean(dims, keepdim=True)
    c = c0 - m2
    var = (c * c).mean(dims, keepdim=True)
    return m1 + m2, c, F.rsqrt(var + eps)


def _layer_norm_batch(prim, args, dims, *, nd, eps):
    """Batch at the front of ``x``; a batched weight or bias is applied after the
    normalisation, broadcast over ``x``'s other dims."""
    x, w, b = args
    dx, dw, db = dims
    xf = x if dx is None else front(x, dx)
    if dw is None and db is None:
        return bind(LayerNorm, (xf, w, b), {"nd": nd, "eps": eps}), (None if dx is None else 0)
    out = bind(LayerNorm, (xf, 1.0, 0.0), {"nd": nd, "eps": eps})
    lead = (x.ndim - (dx is not None)) - nd  # x's unbatched dims before the normalised ones

    def spread(t, d):
        if d is None:
            return t
        t = front(t, d)
        return F.reshape(t, (t.shape[0],) + (1,) * lead + tuple(t.shape[1:]))

    if isinstance(w, Tensor):
        out = out * spread(w, dw)
    if isinstance(b, Tensor):
        out = out + spread(b, db)
    elif isinstance(w, Tensor):
        out = out + 0.0
    return out, 0


class LayerNorm(Primitive):
    """PyTorch's ``native_layer_norm``: ``x`` normalised over its last ``nd`` dims (biased
    variance, two-pass mean), times ``weight``, plus ``bias`` (the floats 1.0 and 0.0 stand
    for a missing weight and bias: operands are tensors or Python scalars).

    The rule is PyTorch's ``native_layer_norm_backward`` (its CPU kernel's and its
    infinitely differentiable version's formula): ``dx = a g w + b x + c`` with ``a =
    rstd``, ``b = (sum(g w) mean - sum(g w x)) rstd^3 / N``, ``c = -b mean - sum(g w) rstd /
    N``; ``dweight = g (x - mean) rstd``, ``dbias = g`` (summed to their shapes by the
    engine). Without a bias a zero is added after the weight, as PyTorch's kernel does
    (``-0.0 * weight`` comes out ``+0.0``)."""

    grad_fn = "NativeLayerNormBackward0"
    saves_inputs = (0, 1)
    saved_for = ((0, 1, 2), (0,))  # x for every gradient, weight for x's only
    batch = classmethod(_layer_norm_batch)

    @staticmethod
    def impl(be, x, w, b, *, nd, eps):
        if x.dtype == np.float16:  # in float32, as PyTorch (NOTE [Half precision])
            out = LayerNorm.impl(be, be.xp.asarray(x, dtype=np.float32), w, b, nd=nd, eps=eps)
            return be.xp.asarray(out, dtype=np.float16)
        dims = _ln_dims(x.ndim, nd)
        n = 1
        for d in dims:
            n *= x.shape[d]
        c = be.binary("subtract", x, be.binary("true_divide", be.sum(x, dims, True, None), n))
        c = be.binary("subtract", c, be.binary("true_divide", be.sum(c, dims, True, None), n))
        var = be.binary("true_divide", be.sum(be.binary("multiply", c, c), dims, True, None), n)
        out = be.binary("multiply", c, be.map("rsqrt", be.binary("add", var, eps)))
        if not isinstance(w, float):
            out = be.binary("multiply", out, w)
        if not isinstance(b, float) or not isinstance(w, float):
            out = be.binary("add", out, b)  # (a zero bias too, after a weight)
        return out

    @staticmethod
    def vjp(ctx, g, *, nd, eps):
        x, w = ctx.saved()
        dims = _ln_dims(x.ndim, nd)
        n = 1
        for d in dims:
            n *= x.shape[d]
        mean, c, rstd = _ln_moments(x, nd, eps)
        dx = dw = None
        if ctx.needs_input_grad(0):
            gw = g * w if isinstance(w, Tensor) else g
            ds = (gw * x).sum(dims, keepdim=True)
            db = gw.sum(dims, keepdim=True)
            bcoef = (db * mean - ds) * rstd * rstd * rstd * (1.0 / n)
            ccoef = -bcoef * mean - db * rstd * (1.0 / n)
            ag = rstd * g * w if isinstance(w, Tensor) else rstd * g
            dx = ag + bcoef * x + ccoef
        if ctx.needs_input_grad(1):
            dw = g * c * rstd
        return dx, dw, (g if ctx.needs_input_grad(2) else None)

    @staticmethod
    def jvp(primals, tangents, out, *, nd, eps):
        """The linearisation: ``d(xhat) w + xhat dw + db`` with ``d(xhat) = tc rstd + c
        d(rstd)``, ``tc`` the centred tangent and ``d(rstd) = -rstd^3 mean(c tc)``."""
        x, w, _ = primals
        tx, tw, tb = tangents
        dims = _ln_dims(x.ndim, nd)
        _, c, rstd = _ln_moments(x, nd, eps)
        terms = []
        if tx is not None:
            tc = tx - tx.mean(dims, keepdim=True)
            drstd = -(rstd * rstd * rstd) * (c * tc).mean(dims, keepdim=True)
            dxhat = tc * rstd + c * drstd
            terms.append(dxhat * w if isinstance(w, Tensor) else dxhat)
        if tw is not None:
            terms.append(c * rstd * tw)
        if tb is not None:
            terms.append(tb)
        return _add_terms(terms)
