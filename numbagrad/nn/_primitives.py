"""The activations and losses of ``nn.functional`` whose PyTorch derivatives are formulas of
their own.

NOTE [Activation primitives]
``hardtanh``/``relu6``, ``elu``/``selu``, ``gelu``, ``silu``, ``mish``, ``logsigmoid`` and the
smooth L1 and Huber losses are primitives (NOTE [Primitive declaration] in ``ops/_op.py``)
rather than composites, so that their rules are PyTorch's formulas from ``derivatives.yaml``
and ``FunctionsManual.cpp`` and give PyTorch's values where a composite's chain rule would
not: ``silu``'s ``g * s * (1 + x * (1 - s))`` is ``-inf`` for a ``-inf`` gradient at ``x =
0``, where the product rule of ``x * sigmoid(x)`` gives ``-inf + 0 * -inf = NaN`` (``gelu``'s
``g * (cdf + x * pdf)`` likewise); ``logsigmoid``'s second derivative is PyTorch's ``(z - 1)
z`` with ``z = sigmoid(x)``, where the chain rule through ``y = sigmoid(-x)`` gives ``(1 - y)
y``, 0 below ``x = -38`` (float64); ``elu``'s and the losses' double backward multiply by a
mask (``x < 0``, ``|d| < beta``), so the second derivative of ``elu`` at ``x = 0`` is 0 and a
NaN incoming gradient stays NaN. Every rule is written with numbagrad ops (or the
``*Backward`` primitives of this module, whose own rules are PyTorch's double-backward
formulas), so it is differentiable again; forwards go through the backend's maps
(``be.map``/``be.binary``), so CPU and CUDA arrays both work.
"""

from __future__ import annotations

import numpy as np

from numbagrad import ops as F
from numbagrad._tensor import Tensor
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import align_batched, broadcast_batch, front
from numbagrad.ops.unary import unary_batch

__all__ = [
    "Elu",
    "EluBackward",
    "EmbeddingGradScale",
    "Gelu",
    "GeluBackward",
    "Hardtanh",
    "LayerNorm",
    "LayerNormBackward",
    "LogSigmoid",
    "LogSigmoidBackward",
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


_GELU_ALPHA = 0.7071067811865476  # M_SQRT1_2
_GELU_PDF = 0.3989422804014327  # M_2_SQRTPI * M_SQRT1_2 * 0.5: the normal density at 0
_GELU_BETA = 0.7978845608028654  # M_SQRT2 * M_2_SQRTPI * 0.5 = sqrt(2 / pi)
_GELU_KAPPA = 0.044715


class Gelu(Primitive):
    """PyTorch's ``gelu``: ``x * 0.5 * (1 + erf(x / sqrt(2)))``, or with ``approximate=
    'tanh'`` ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))``, in PyTorch's
    order of operations; the rule is ``gelu_backward`` (``GeluBackward``)."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x, *, approximate):
        # the backend's fused maps (the CPU: one kernel pass, float32 in float32, NOTE
        # [Float32 GELU] in kernels/cpu/gelu.py)
        return be.map("gelu_tanh" if approximate == "tanh" else "gelu", x)

    @staticmethod
    def vjp(ctx, g, *, approximate):
        (x,) = ctx.saved()
        return (bind(GeluBackward, (g, x), {"approximate": approximate}),)

    @staticmethod
    def jvp(primals, tangents, out, *, approximate):
        """``gelu_backward(t, x)``."""
        t = tangents[0]
        if t is None:
            return None
        return bind(GeluBackward, (t, primals[0]), {"approximate": approximate})


def _gelu_second(x, approximate):
    """PyTorch's ``gelu_double_backward`` factor: the second derivative of ``gelu`` at
    ``x``, written as PyTorch writes it (numbagrad ops, so differentiable again)."""
    if approximate == "tanh":
        inner = (x + x * x * x * _GELU_KAPPA) * _GELU_BETA
        tanh_inner = F.tanh(inner)
        sech_inner = 1.0 / F.cosh(inner)
        f = x * 0.5
        gt = 1.0 - tanh_inner * tanh_inner
        h = (x * x * (3.0 * _GELU_KAPPA) + 1.0) * _GELU_BETA
        f_prime_gh = gt * h * 0.5
        g_prime = (sech_inner * 2.0) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime
        h_prime_fg = f * gt * (x * (6.0 * _GELU_KAPPA * _GELU_BETA))
        return f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg
    sq = x * x
    pdf = F.exp(sq * -0.5) * _GELU_PDF
    return pdf * 2.0 - sq * pdf


def _gelu_derivative(be, x, approximate):
    """``gelu'(x)`` on arrays, term by term as PyTorch's ``gelu_backward``."""
    mul, add = (lambda a, b: be.binary("multiply", a, b)), (lambda a, b: be.binary("add", a, b))
    if approximate == "tanh":
        sq = mul(x, x)
        inner = mul(add(x, mul(mul(sq, x), _GELU_KAPPA)), _GELU_BETA)
        t = be.map("tanh", inner)
        left = mul(x, 0.5)
        left_d = mul(add(t, 1.0), 0.5)
        tanh_d = be.binary("subtract", 1.0, mul(t, t))
        inner_d = mul(add(mul(sq, 3.0 * _GELU_KAPPA), 1.0), _GELU_BETA)
        return add(left_d, mul(mul(left, tanh_d), inner_d))
    cdf = mul(add(be.map("erf", mul(x, _GELU_ALPHA)), 1.0), 0.5)
    pdf = mul(be.map("exp", mul(mul(x, x), -0.5)), _GELU_PDF)
    return add(cdf, mul(x, pdf))


class GeluBackward(Primitive):
    """PyTorch's ``gelu_backward(g, x)``: ``g * (cdf + x * pdf)`` (the tanh form: ``g * (0.5
    (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) u')``), a single product with ``g``, so an
    infinite ``g`` at ``x = 0`` gives ``+-inf`` where the product rule of the composite
    ``0.5 x (1 + erf(x / sqrt 2))`` adds ``inf * 0 = NaN``. Its VJP is PyTorch's:
    ``gelu_backward(gg, x)`` for ``g`` and ``gelu_double_backward`` ``gg * g * gelu''(x)``
    for ``x``."""

    saves_inputs = (0, 1)
    saved_for = ((1,), (0, 1))  # g only for x's gradient; x for both
    batch = classmethod(broadcast_batch)

    @staticmethod
    def impl(be, g, x, *, approximate):
        if type(g) is type(x) and (g.shape == x.shape or (g.size == 1 and g.ndim <= x.ndim)):
            # the backend's fused "gelu_backward"/"gelu_tanh_backward" where it has one (the
            # CPU: one pass from KERNEL_MIN elements, float32 in float32 with vectorised
            # polynomials, NOTE [Float32 GELU]; float64's exact form with libm's erf and
            # exp, 1.7x faster than the array formula on 131k elements; float64's tanh form
            # stays on the formula, NumPy's SIMD tanh beating a scalar-tanh kernel)
            kernel = "gelu_tanh_backward" if approximate == "tanh" else "gelu_backward"
            return be.unary_backward(
                kernel, g, x, lambda m, s: _gelu_derivative(be, s, approximate)
            )
        return be.binary("multiply", g, _gelu_derivative(be, x, approximate))

    @staticmethod
    def vjp(ctx, gg, *, approximate):
        g, x = ctx.saved()
        p = {"approximate": approximate}
        dg = bind(GeluBackward, (gg, x), p) if ctx.needs_input_grad(0) else None
        dx = gg * g * _gelu_second(x, approximate) if ctx.needs_input_grad(1) else None
        return dg, dx

    @staticmethod
    def jvp(primals, tangents, out, *, approximate):
        g, x = primals
        tg, tx = tangents
        p = {"approximate": approximate}
        return _add_terms(
            [
                None if tg is None else bind(GeluBackward, (tg, x), p),
                None if tx is None else tx * g * _gelu_second(x, approximate),
            ]
        )


class LogSigmoid(Primitive):
    """``log(sigmoid(x))``, computed as ``0 - softplus(-x)`` (stable; ``+0.0`` where
    ``softplus(-x)`` underflows, as PyTorch's ``min(x, 0) - log1p(exp(-|x|))``); the rule
    is PyTorch's ``log_sigmoid_backward`` (``LogSigmoidBackward``)."""

    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return be.binary("subtract", 0.0, be.map("softplus", be.map("negative", x)))

    @staticmethod
    def vjp(ctx, g):
        (x,) = ctx.saved()
        return (bind(LogSigmoidBackward, (g, x), {}),)

    @staticmethod
    def jvp(primals, tangents, out):
        """``log_sigmoid_backward(t, x)``."""
        t = tangents[0]
        if t is None:
            return None
        return bind(LogSigmoidBackward, (t, primals[0]), {})


class LogSigmoidBackward(Primitive):
    """PyTorch's ``log_sigmoid_backward(g, x)`` as its CPU kernel writes it: ``g * (1 -
    z / (1 + z))`` for ``x < 0``, else ``g * z / (1 + z)``, with ``z = exp(-|x|)`` (NaN at
    a NaN ``x``). Its VJP is PyTorch's: ``log_sigmoid_backward(gg, x)`` for ``g`` and
    ``log_sigmoid_double_backward`` ``gg * g * (s - 1) * s``, ``s = sigmoid(x)``, for
    ``x`` (accurate for negative ``x``, where ``sigmoid(-x)`` rounds to 1)."""

    saves_inputs = (0, 1)
    saved_for = ((1,), (0, 1))  # g only for x's gradient; x for both
    batch = classmethod(broadcast_batch)

    @staticmethod
    def impl(be, g, x):
        z = be.map("exp", be.map("negative", be.map("abs", x)))
        r = be.binary("true_divide", z, be.binary("add", z, 1.0))
        d = be.xp.where(be.binary("less", x, 0), be.binary("subtract", 1.0, r), r)
        return be.binary("multiply", d, g)

    @staticmethod
    def vjp(ctx, gg):
        g, x = ctx.saved()
        dg = bind(LogSigmoidBackward, (gg, x), {}) if ctx.needs_input_grad(0) else None
        dx = None
        if ctx.needs_input_grad(1):
            s = F.sigmoid(x)
            dx = gg * g * (s - 1.0) * s
        return dg, dx

    @staticmethod
    def jvp(primals, tangents, out):
        g, x = primals
        tg, tx = tangents
        terms = [None if tg is None else bind(LogSigmoidBackward, (tg, x), {})]
        if tx is not None:
            s = F.sigmoid(x)
            terms.append(tx * g * (s - 1.0) * s)
        return _add_terms(terms)


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


def _ln_last(nd):
    """The last ``nd`` dims, counted from the end: the normalised dims of every operand of
    the rules, whatever its rank (a cotangent or tangent can have more leading dims than
    ``x`` under ``jacrev``/``jacfwd``, where dims counted from ``x``'s rank sum the wrong
    axes)."""
    return tuple(range(-nd, 0))


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


def _ln_count(x, nd):
    n = 1
    for d in _ln_dims(x.ndim, nd):
        n *= x.shape[d]
    return n


def _ln_array_moments(be, x, nd, eps):
    """``_ln_moments`` on a backend array: ``(mean, centred, rstd)``."""
    dims = _ln_dims(x.ndim, nd)
    n = _ln_count(x, nd)
    m1 = be.binary("true_divide", be.sum(x, dims, True, None), n)
    c0 = be.binary("subtract", x, m1)
    m2 = be.binary("true_divide", be.sum(c0, dims, True, None), n)
    c = be.binary("subtract", c0, m2)
    var = be.binary("true_divide", be.sum(be.binary("multiply", c, c), dims, True, None), n)
    return be.binary("add", m1, m2), c, be.map("rsqrt", be.binary("add", var, eps))


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

    The rule is PyTorch's ``native_layer_norm_backward``: the input's gradient is the
    ``LayerNormBackward`` primitive (whose VJP is PyTorch's double backward), ``dweight = g
    (x - mean) rstd``, ``dbias = g`` (summed to their shapes by the engine). Without a bias
    a zero is added, as PyTorch's kernel does (a ``-0.0`` comes out ``+0.0``)."""

    grad_fn = "NativeLayerNormBackward0"
    saves_inputs = (0, 1)
    saved_for = ((0, 1, 2), (0,))  # x for every gradient, weight for x's only
    batch = classmethod(_layer_norm_batch)

    @staticmethod
    def impl(be, x, w, b, *, nd, eps):
        if x.dtype == np.float16:  # in float32, as PyTorch (NOTE [Half precision])
            out = LayerNorm.impl(be, be.xp.asarray(x, dtype=np.float32), w, b, nd=nd, eps=eps)
            return be.xp.asarray(out, dtype=np.float16)
        _, c, rstd = _ln_array_moments(be, x, nd, eps)
        out = be.binary("multiply", c, rstd)
        if not isinstance(w, float):
            out = be.binary("multiply", out, w)
        # a zero bias too: -0.0 comes out +0.0, as from PyTorch's kernel (x * rstd + bias)
        return be.binary("add", out, b)

    @staticmethod
    def vjp(ctx, g, *, nd, eps):
        x, w = ctx.saved()
        dx = dw = None
        if ctx.needs_input_grad(0):
            dx = bind(LayerNormBackward, (g, x, w), {"nd": nd, "eps": eps})
        if ctx.needs_input_grad(1):
            _, c, rstd = _ln_moments(x, nd, eps)
            dw = g * c * rstd
        return dx, dw, (g if ctx.needs_input_grad(2) else None)

    @staticmethod
    def jvp(primals, tangents, out, *, nd, eps):
        """The linearisation: ``d(xhat) w + xhat dw + db`` with ``d(xhat) = tc rstd + c
        d(rstd)``, ``tc`` the centred tangent and ``d(rstd) = -rstd^3 mean(c tc)``."""
        x, w, _ = primals
        tx, tw, tb = tangents
        dims = _ln_last(nd)
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


def _ln_first_backward(h, gamma, c, rstd, dims, n):
    """PyTorch's ``first_bwd_fn_grad_input(h, gamma)`` of ``layer_norm_double_backward``:
    ``gamma rstd / N (N h - sum(h) - c rstd^2 sum(h c))``, the adjoint of the input
    gradient's map ``g -> dx``, with ``gamma`` outside the sums."""
    inner = h * n - h.sum(dims, keepdim=True) - c * (rstd * rstd) * (h * c).sum(dims, keepdim=True)
    scale = rstd * (1.0 / n) if gamma is None else gamma * rstd * (1.0 / n)
    return scale * inner


def _ln_double_x(h, gxhat, c, rstd, dims, n):
    """PyTorch's ``gI`` of ``layer_norm_double_backward`` for the incoming ``h`` (``ggI``):
    the input gradient differentiated in ``x`` (a symmetric map: the JVP uses it too)."""
    r3 = rstd * rstd * rstd
    gx_mu = (gxhat * c).sum(dims, keepdim=True)
    gx_sum = gxhat.sum(dims, keepdim=True)
    h_sum = h.sum(dims, keepdim=True)
    h_mu = (h * c).sum(dims, keepdim=True)
    all_sub = (
        h_sum * gx_sum * (1.0 / n)
        - (h * gxhat).sum(dims, keepdim=True)
        + rstd * rstd * gx_mu * h_mu * (3.0 / n)
    )
    t0 = c * r3 * all_sub * (1.0 / n)
    t1 = h_mu * r3 * (1.0 / n) * (gx_sum * (1.0 / n) - gxhat)
    t2 = gx_mu * r3 * (1.0 / n) * (h_sum * (1.0 / n) - h)
    return t0 + t1 + t2


def _ln_backward_batch(prim, args, dims, *, nd, eps):
    """The batch at the front of each batched operand, padded with ones to the largest
    per-example rank (``align_batched``): ``g`` may have more leading dims than ``x`` (the
    basis of a ``jacrev`` under ``vmap``), which must not line up with ``x``'s batch."""
    return bind(LayerNormBackward, tuple(align_batched(args, dims)), {"nd": nd, "eps": eps}), 0


class LayerNormBackward(Primitive):
    """``layer_norm``'s input gradient (PyTorch's ``native_layer_norm_backward``, its CPU
    kernel's formula): ``dx = a g w + b x + c`` with ``a = rstd``, ``b = (sum(g w) mean -
    sum(g w x)) rstd^3 / N``, ``c = -b mean - sum(g w) rstd / N`` (``w`` the float 1.0
    without a weight). A primitive so that its VJP is PyTorch's
    ``layer_norm_double_backward`` (the weight outside the sums in ``g``'s term, so an
    infinite weight gives ``+-inf`` where the chain rule through the formula gives ``inf -
    inf``); ``x``'s term is the Hessian of ``<g w, xhat>``, symmetric, so the JVP reuses
    it."""

    grad_fn = "NativeLayerNormBackwardBackward0"
    saves_inputs = (0, 1, 2)
    saved_for = ((1, 2), (0, 1, 2), (0, 1, 2))
    batch = classmethod(_ln_backward_batch)

    @staticmethod
    def impl(be, g, x, w, *, nd, eps):
        if x.dtype == np.float16:  # in float32, as the forward
            f32 = [
                a if isinstance(a, float) else be.xp.asarray(a, dtype=np.float32) for a in (g, x, w)
            ]
            out = LayerNormBackward.impl(be, *f32, nd=nd, eps=eps)
            return be.xp.asarray(out, dtype=np.float16)
        mean, _, rstd = _ln_array_moments(be, x, nd, eps)
        gw = g if isinstance(w, float) else be.binary("multiply", g, w)
        n = _ln_count(x, nd)
        gwx = be.binary("multiply", gw, x)  # (g and x differ in rank under vmap)
        ds = be.sum(gwx, _ln_dims(gwx.ndim, nd), True, None)
        db = be.sum(gw, _ln_dims(gw.ndim, nd), True, None)
        r3n = be.binary(
            "multiply", be.binary("multiply", be.binary("multiply", rstd, rstd), rstd), 1.0 / n
        )
        bcoef = be.binary(
            "multiply", be.binary("subtract", be.binary("multiply", db, mean), ds), r3n
        )
        ccoef = be.binary(
            "subtract",
            be.binary("multiply", be.binary("multiply", bcoef, mean), -1.0),
            be.binary("multiply", be.binary("multiply", db, rstd), 1.0 / n),
        )
        ag = be.binary("multiply", rstd, gw)
        return be.binary("add", be.binary("add", ag, be.binary("multiply", bcoef, x)), ccoef)

    @staticmethod
    def vjp(ctx, gg, *, nd, eps):
        g, x, w = ctx.saved()
        dims = _ln_last(nd)
        n = _ln_count(x, nd)
        _, c, rstd = _ln_moments(x, nd, eps)
        weight = w if isinstance(w, Tensor) else None
        dg = dx = dw = None
        if ctx.needs_input_grad(0):
            dg = _ln_first_backward(gg, weight, c, rstd, dims, n)
        if ctx.needs_input_grad(1):
            dx = _ln_double_x(gg, g if weight is None else g * weight, c, rstd, dims, n)
        if ctx.needs_input_grad(2):
            dw = g * _ln_first_backward(gg, None, c, rstd, dims, n)
        return dg, dx, dw

    @staticmethod
    def jvp(primals, tangents, out, *, nd, eps):
        """Linear in ``g``; ``w`` enters through ``g w`` only; ``x``'s term is the
        symmetric ``_ln_double_x``."""
        g, x, w = primals
        tg, tx, tw = tangents
        p = {"nd": nd, "eps": eps}
        terms = [None if tg is None else bind(LayerNormBackward, (tg, x, w), p)]
        if tw is not None:
            terms.append(bind(LayerNormBackward, (g * tw, x, 1.0), p))
        if tx is not None:
            _, c, rstd = _ln_moments(x, nd, eps)
            gxhat = g * w if isinstance(w, Tensor) else g
            terms.append(_ln_double_x(tx, gxhat, c, rstd, _ln_last(nd), _ln_count(x, nd)))
        return _add_terms(terms)


class EmbeddingGradScale(Primitive):
    """``x`` itself (a copy) whose gradient is ``g * s``, ``s`` a data operand: how
    ``embedding`` gives the padding row no gradient (``s`` = 0 there) and scales it by the
    inverse frequency of each index (``scale_grad_by_freq``), as PyTorch's
    ``embedding_backward`` does. Values and forward-mode tangents are the identity's
    (PyTorch scales the backward only)."""

    data_operands = (1,)
    saves_inputs = (1,)
    batch = classmethod(broadcast_batch)

    @staticmethod
    def impl(be, x, s):
        return x.copy()

    @staticmethod
    def vjp(ctx, g):
        (s,) = ctx.saved()
        return g * s, None

    @staticmethod
    def jvp(primals, tangents, out):
        return tangents[0]
