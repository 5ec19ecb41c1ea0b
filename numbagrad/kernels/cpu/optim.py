"""Fused optimizer steps: one pass over a parameter and its state instead of the five to ten
NumPy passes the same update takes op by op (``numbagrad.optim`` calls these above
``numbagrad.optim._functional.FUSED_MIN`` elements).

NOTE [Fused optimizer kernels]
Each kernel restates, per element, PyTorch's single-tensor update (``_single_tensor_adam``,
``_single_tensor_sgd``, ...) with the same operation order, so that the fused path, the
NumPy path of ``numbagrad.optim`` and PyTorch agree to rounding (the NumPy and fused paths
bit for bit; ``fastmath`` stays off, so LLVM fuses no multiply-add). The order of each
ATen op is kept: ``a.add(b, alpha=c)`` is ``a + c * b``, ``addcmul(t1, t2, value=c)`` is
``a + (c * t1) * t2``, ``addcdiv(t1, t2, value=c)`` is ``a + (c * t1) / t2`` and
``lerp(end, w)`` is ``a + w * (end - a)`` for ``|w| < 0.5``, else
``end - (end - a) * (1 - w)``.

Arrays are flat (1-D), contiguous, of one length and one float dtype; the scalars are
cast to that dtype by the caller (so float32 parameters are updated in float32 as in
PyTorch). None of this is checked here: the caller (``numbagrad/optim/_functional.py``)
validates it first (NOTE [Bounds-check mode] in ``_jit.py``). A state array that an
option does not use (``max_exp_avg_sq`` without ``amsgrad``) is passed as a length-0
array and never read. Each formula is one scalar function (scalars in, the new values
out) called by the kernel's loop, which does all loads and stores itself: an inlined
helper taking the arrays and an index compiled to a scalar loop 7x slower (measured: Adam
over 16,384 float64, 68 us against 9.5 us) because LLVM no longer vectorised it.
``error_model="numpy"`` makes a division by zero give inf/nan as in PyTorch (``eps=0``)
instead of raising.

The kernels are serial: an optimizer step is memory-bound (Adam reads four arrays and
writes three), and a ``prange`` twin measured slower at every size on the 2-core
development machine (Adam, float64: 200,000 elements 8.0 ms against 0.13 ms serial,
10,000,000 elements 16 ms against 9.5 ms; the machine was shared, see docs/developer.rst,
design decisions, 5, on OpenMP start costs), so none is kept.
"""

import math

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "adadelta_step",
    "adagrad_step",
    "adam_step",
    "adamax_step",
    "asgd_step",
    "nadam_step",
    "radam_step",
    "rmsprop_step",
    "rprop_step",
    "sgd_step",
]


_OPTS = {"cache": True, "error_model": "numpy"}
_INLINE = {"cache": True, "error_model": "numpy", "inline": "always"}


@njit(**_INLINE)
def _lerp(a, end, w, small):
    """ATen's ``lerp``: exact at both ends; ``small`` is ``|w| < 0.5``."""
    if small:
        return a + w * (end - a)
    return end - (end - a) * (1 - w)


@njit(**_INLINE)
def _decayed(gi, x, wd, maximize):
    """The gradient negated when maximizing, plus ``wd * x`` (L2 weight decay)."""
    d = -gi if maximize else gi
    if wd != 0:
        d = d + wd * x
    return d


# -- SGD -------------------------------------------------------------------------------------
@njit(**_INLINE)
def _sgd_scalar(gi, x, b, lr, wd, momentum, damp1, nesterov, maximize, first):
    """One element of ``_single_tensor_sgd``: the new parameter and momentum buffer;
    ``damp1`` is ``1 - dampening``."""
    d = _decayed(gi, x, wd, maximize)
    if momentum != 0:
        if first:
            b = d  # the buffer starts as a copy of the (decayed) gradient
        else:
            b = b * momentum + damp1 * d
        if nesterov:
            d = d + momentum * b
        else:
            d = b
    return x + (-lr) * d, b


@njit(**_OPTS)
def sgd_step(p, g, buf, lr, wd, momentum, damp1, nesterov, maximize, first):
    """SGD step in place on ``p`` (and on ``buf`` when ``momentum != 0``; ``first``: the
    step that creates the buffer)."""
    if momentum != 0:
        for i in range(p.size):
            p[i], buf[i] = _sgd_scalar(
                g[i], p[i], buf[i], lr, wd, momentum, damp1, nesterov, maximize, first
            )
    else:
        for i in range(p.size):
            p[i], _ = _sgd_scalar(
                g[i], p[i], p[i], lr, wd, momentum, damp1, nesterov, maximize, first
            )


# -- Adam / AdamW ------------------------------------------------------------------------------
@njit(**_INLINE)
def _adam_scalar(
    gi,
    x,
    mi,
    vi,
    vmx,
    w1,
    small1,
    beta2,
    c2,
    eps,
    neg_step,
    bc2_sqrt,
    wd,
    decoupled,
    decay_mul,
    amsgrad,
    maximize,
):
    """One element of ``_single_tensor_adam`` (not capturable): the new parameter, exp_avg,
    exp_avg_sq and max_exp_avg_sq. ``w1 = 1 - beta1``, ``c2 = 1 - beta2``, ``neg_step =
    -lr / (1 - beta1**t)``, ``bc2_sqrt = (1 - beta2**t) ** 0.5``; with ``decoupled``
    (AdamW) the parameter is first multiplied by ``decay_mul = 1 - lr * wd``, else ``wd``
    is added to the gradient."""
    if wd != 0 and decoupled:
        x = x * decay_mul
        d = -gi if maximize else gi
    else:
        d = _decayed(gi, x, wd, maximize)
    mi = _lerp(mi, d, w1, small1)
    vi = vi * beta2 + (c2 * d) * d
    den = vi
    if amsgrad:
        if vmx > vi or vmx != vmx:  # torch.maximum: NaN wins
            den = vmx
    denom = math.sqrt(den) / bc2_sqrt + eps
    return x + (neg_step * mi) / denom, mi, vi, den


@njit(**_OPTS)
def adam_step(
    p,
    g,
    m,
    v,
    vmax,
    w1,
    small1,
    beta2,
    c2,
    eps,
    neg_step,
    bc2_sqrt,
    wd,
    decoupled,
    decay_mul,
    amsgrad,
    maximize,
):
    """Adam/AdamW step in place on ``p``, ``m`` (exp_avg), ``v`` (exp_avg_sq) and ``vmax``
    (max_exp_avg_sq, with ``amsgrad``)."""
    if amsgrad:
        for i in range(p.size):
            p[i], m[i], v[i], vmax[i] = _adam_scalar(
                g[i],
                p[i],
                m[i],
                v[i],
                vmax[i],
                w1,
                small1,
                beta2,
                c2,
                eps,
                neg_step,
                bc2_sqrt,
                wd,
                decoupled,
                decay_mul,
                amsgrad,
                maximize,
            )
    else:
        for i in range(p.size):
            p[i], m[i], v[i], _ = _adam_scalar(
                g[i],
                p[i],
                m[i],
                v[i],
                v[i],
                w1,
                small1,
                beta2,
                c2,
                eps,
                neg_step,
                bc2_sqrt,
                wd,
                decoupled,
                decay_mul,
                amsgrad,
                maximize,
            )


# -- RMSprop -----------------------------------------------------------------------------------
@njit(**_INLINE)
def _rmsprop_scalar(gi, x, s, a, b, alpha, c, small, eps, neg_lr, wd, momentum, centered, maximize):
    """One element of ``_single_tensor_rmsprop``: the new parameter, square_avg, grad_avg
    and momentum buffer; ``c = 1 - alpha`` (also the lerp weight of the centred average,
    ``small`` is ``|c| < 0.5``)."""
    d = _decayed(gi, x, wd, maximize)
    s = s * alpha + (c * d) * d
    if centered:
        a = _lerp(a, d, c, small)
        avg = math.sqrt(s + (-a) * a)
    else:
        avg = math.sqrt(s)
    avg = avg + eps
    if momentum > 0:
        b = b * momentum + d / avg
        return x + neg_lr * b, s, a, b
    return x + (neg_lr * d) / avg, s, a, b


@njit(**_OPTS)
def rmsprop_step(
    p, g, sq, gavg, buf, alpha, c, small, eps, neg_lr, wd, momentum, centered, maximize
):
    """RMSprop step in place on ``p``, ``sq`` (square_avg), ``gavg`` (grad_avg, when
    ``centered``) and ``buf`` (momentum_buffer, when ``momentum > 0``)."""
    n = p.size
    if centered and momentum > 0:
        for i in range(n):
            p[i], sq[i], gavg[i], buf[i] = _rmsprop_scalar(
                g[i],
                p[i],
                sq[i],
                gavg[i],
                buf[i],
                alpha,
                c,
                small,
                eps,
                neg_lr,
                wd,
                momentum,
                centered,
                maximize,
            )
    elif centered:
        for i in range(n):
            p[i], sq[i], gavg[i], _ = _rmsprop_scalar(
                g[i],
                p[i],
                sq[i],
                gavg[i],
                p[i],
                alpha,
                c,
                small,
                eps,
                neg_lr,
                wd,
                momentum,
                centered,
                maximize,
            )
    elif momentum > 0:
        for i in range(n):
            p[i], sq[i], _, buf[i] = _rmsprop_scalar(
                g[i],
                p[i],
                sq[i],
                p[i],
                buf[i],
                alpha,
                c,
                small,
                eps,
                neg_lr,
                wd,
                momentum,
                centered,
                maximize,
            )
    else:
        for i in range(n):
            p[i], sq[i], _, _ = _rmsprop_scalar(
                g[i],
                p[i],
                sq[i],
                p[i],
                p[i],
                alpha,
                c,
                small,
                eps,
                neg_lr,
                wd,
                momentum,
                centered,
                maximize,
            )


# -- Adagrad -----------------------------------------------------------------------------------
@njit(**_INLINE)
def _adagrad_scalar(gi, x, s, neg_clr, eps, wd, maximize):
    """One element of ``_single_tensor_adagrad`` (dense): the new parameter and sum;
    ``neg_clr = -lr / (1 + (t - 1) * lr_decay)``."""
    d = _decayed(gi, x, wd, maximize)
    s = s + d * d
    return x + (neg_clr * d) / (math.sqrt(s) + eps), s


@njit(**_OPTS)
def adagrad_step(p, g, acc, neg_clr, eps, wd, maximize):
    """Adagrad step in place on ``p`` and ``acc`` (the ``sum`` state)."""
    for i in range(p.size):
        p[i], acc[i] = _adagrad_scalar(g[i], p[i], acc[i], neg_clr, eps, wd, maximize)


# -- Adadelta ----------------------------------------------------------------------------------
@njit(**_INLINE)
def _adadelta_scalar(gi, x, s, a, rho, c, eps, neg_lr, wd, maximize):
    """One element of ``_single_tensor_adadelta``: the new parameter, square_avg and
    acc_delta; ``c = 1 - rho``."""
    d = _decayed(gi, x, wd, maximize)
    s = s * rho + (c * d) * d
    std = math.sqrt(s + eps)
    delta = math.sqrt(a + eps) / std * d
    a = a * rho + (c * delta) * delta
    return x + neg_lr * delta, s, a


@njit(**_OPTS)
def adadelta_step(p, g, sq, acc, rho, c, eps, neg_lr, wd, maximize):
    """Adadelta step in place on ``p``, ``sq`` (square_avg) and ``acc`` (acc_delta)."""
    for i in range(p.size):
        p[i], sq[i], acc[i] = _adadelta_scalar(
            g[i], p[i], sq[i], acc[i], rho, c, eps, neg_lr, wd, maximize
        )


# -- Adamax ------------------------------------------------------------------------------------
@njit(**_INLINE)
def _adamax_scalar(gi, x, mi, ui, w1, small1, beta2, eps, neg_clr, wd, maximize):
    """One element of ``_single_tensor_adamax`` (not capturable): the new parameter,
    exp_avg and exp_inf; ``neg_clr = -lr / (1 - beta1**t)``."""
    d = _decayed(gi, x, wd, maximize)
    mi = _lerp(mi, d, w1, small1)
    ui = ui * beta2
    a = abs(d) + eps
    if a > ui or a != a:  # torch.maximum: NaN wins
        ui = a
    return x + (neg_clr * mi) / ui, mi, ui


@njit(**_OPTS)
def adamax_step(p, g, m, u, w1, small1, beta2, eps, neg_clr, wd, maximize):
    """Adamax step in place on ``p``, ``m`` (exp_avg) and ``u`` (exp_inf)."""
    for i in range(p.size):
        p[i], m[i], u[i] = _adamax_scalar(
            g[i], p[i], m[i], u[i], w1, small1, beta2, eps, neg_clr, wd, maximize
        )


# -- NAdam -------------------------------------------------------------------------------------
@njit(**_INLINE)
def _nadam_scalar(
    gi,
    x,
    mi,
    vi,
    w1,
    small1,
    beta2,
    c2,
    bc2,
    eps,
    c_grad,
    c_avg,
    wd,
    decoupled,
    decay_mul,
    maximize,
):
    """One element of ``_single_tensor_nadam`` (not capturable): the new parameter, exp_avg
    and exp_avg_sq. ``c_grad = -lr (1 - mu_t) / (1 - prod mu)`` and ``c_avg = -lr mu_{t+1}
    / (1 - prod mu * mu_{t+1})``; with ``decoupled`` the parameter is first multiplied by
    ``decay_mul``."""
    if wd != 0 and decoupled:
        x = x * decay_mul
        d = -gi if maximize else gi
    else:
        d = _decayed(gi, x, wd, maximize)
    mi = _lerp(mi, d, w1, small1)
    vi = vi * beta2 + (c2 * d) * d
    denom = math.sqrt(vi / bc2) + eps
    x = x + (c_grad * d) / denom
    return x + (c_avg * mi) / denom, mi, vi


@njit(**_OPTS)
def nadam_step(
    p,
    g,
    m,
    v,
    w1,
    small1,
    beta2,
    c2,
    bc2,
    eps,
    c_grad,
    c_avg,
    wd,
    decoupled,
    decay_mul,
    maximize,
):
    """NAdam step in place on ``p``, ``m`` (exp_avg) and ``v`` (exp_avg_sq)."""
    for i in range(p.size):
        p[i], m[i], v[i] = _nadam_scalar(
            g[i],
            p[i],
            m[i],
            v[i],
            w1,
            small1,
            beta2,
            c2,
            bc2,
            eps,
            c_grad,
            c_avg,
            wd,
            decoupled,
            decay_mul,
            maximize,
        )


# -- RAdam -------------------------------------------------------------------------------------
@njit(**_INLINE)
def _radam_scalar(
    gi,
    x,
    mi,
    vi,
    w1,
    small1,
    beta2,
    c2,
    eps,
    bc1,
    bc2_sqrt,
    lr,
    rectify,
    rect,
    wd,
    decoupled,
    decay_mul,
    maximize,
):
    """One element of ``_single_tensor_radam`` (not capturable): the new parameter, exp_avg
    and exp_avg_sq; ``rectify`` is ``rho_t > 5`` and ``rect`` the rectification term."""
    if wd != 0 and decoupled:
        x = x * decay_mul
        d = -gi if maximize else gi
    else:
        d = _decayed(gi, x, wd, maximize)
    mi = _lerp(mi, d, w1, small1)
    vi = vi * beta2 + (c2 * d) * d
    upd = (mi / bc1) * lr
    if rectify:
        upd = (upd * (bc2_sqrt / (math.sqrt(vi) + eps))) * rect
    return x - upd, mi, vi


@njit(**_OPTS)
def radam_step(
    p,
    g,
    m,
    v,
    w1,
    small1,
    beta2,
    c2,
    eps,
    bc1,
    bc2_sqrt,
    lr,
    rectify,
    rect,
    wd,
    decoupled,
    decay_mul,
    maximize,
):
    """RAdam step in place on ``p``, ``m`` (exp_avg) and ``v`` (exp_avg_sq)."""
    for i in range(p.size):
        p[i], m[i], v[i] = _radam_scalar(
            g[i],
            p[i],
            m[i],
            v[i],
            w1,
            small1,
            beta2,
            c2,
            eps,
            bc1,
            bc2_sqrt,
            lr,
            rectify,
            rect,
            wd,
            decoupled,
            decay_mul,
            maximize,
        )


# -- ASGD --------------------------------------------------------------------------------------
@njit(**_INLINE)
def _asgd_scalar(gi, x, a, decay_mul, neg_eta, average, mu, wd, maximize):
    """One element of ``_single_tensor_asgd`` (not capturable): the new parameter and ax;
    ``decay_mul = 1 - lambd * eta``; ``average`` is ``mu != 1`` (else ax copies the
    parameter)."""
    d = _decayed(gi, x, wd, maximize)
    x = x * decay_mul
    x = x + neg_eta * d
    if average:
        a = a + (x - a) * mu
    else:
        a = x
    return x, a


@njit(**_OPTS)
def asgd_step(p, g, ax, decay_mul, neg_eta, average, mu, wd, maximize):
    """ASGD step in place on ``p`` and ``ax``."""
    for i in range(p.size):
        p[i], ax[i] = _asgd_scalar(g[i], p[i], ax[i], decay_mul, neg_eta, average, mu, wd, maximize)


# -- Rprop -------------------------------------------------------------------------------------
@njit(**_INLINE)
def _rprop_scalar(gi, x, pv, ss, etaminus, etaplus, lo, hi, one, zero, maximize):
    """One element of ``_single_tensor_rprop``: the new parameter, prev and step_size. The
    step size is multiplied by ``etaplus`` where the gradient kept its sign, by
    ``etaminus`` where it flipped (the gradient is then taken as 0), by 1 elsewhere (a zero
    or NaN product: ``torch.sign`` is 0 for NaN), and clamped to ``[lo, hi]`` (NaN stays);
    ``one`` and ``zero`` are typed constants."""
    d = -gi if maximize else gi
    s = d * pv
    if s > 0:
        factor = etaplus
    elif s < 0:
        factor = etaminus
        d = zero
    else:
        factor = one
    ss = ss * factor
    if ss < lo:
        ss = lo
    if ss > hi:
        ss = hi
    if d > 0:
        sign = one
    elif d < 0:
        sign = -one
    else:
        sign = zero
    return x + (-sign) * ss, d, ss


@njit(**_OPTS)
def rprop_step(p, g, prev, step_size, etaminus, etaplus, lo, hi, one, zero, maximize):
    """Rprop step in place on ``p``, ``prev`` and ``step_size``."""
    for i in range(p.size):
        p[i], prev[i], step_size[i] = _rprop_scalar(
            g[i], p[i], prev[i], step_size[i], etaminus, etaplus, lo, hi, one, zero, maximize
        )
