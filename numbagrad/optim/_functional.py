"""Per-parameter updates of the optimizers on raw arrays: a NumPy path op by op for small
parameters, the fused kernels of ``numbagrad/kernels/cpu/optim.py`` for large ones.

Both paths restate PyTorch's ``_single_tensor_<name>`` updates in the same operation order
(NOTE [Fused optimizer kernels]), so they give the same bits; ``tests/test_optim.py``
checks that, and checks both against PyTorch. Arrays: ``p`` is the parameter's own memory
(written in place), ``g`` its gradient (read only), the state arrays are the optimizer's
own contiguous arrays of ``p``'s shape and dtype.
"""

from __future__ import annotations

import numpy as np

from numbagrad.kernels import lazy

# imported (with numba) on the first fused step, not at ``import numbagrad``
# (NOTE [Lazy kernels] in ``numbagrad/kernels/__init__.py``)
K = lazy("numbagrad.kernels.cpu.optim")

__all__ = [
    "FUSED_MIN",
    "adadelta_update",
    "adagrad_update",
    "adam_update",
    "adamax_update",
    "asgd_update",
    "nadam_update",
    "radam_update",
    "rmsprop_update",
    "rprop_update",
    "sgd_update",
]

# Elements from which the fused kernel replaces the NumPy ops. Measured on the 2-core
# development machine (float64, best of 5x2000 calls, the call through this module
# included): Adam, NumPy path 6.2 us at 16 elements, 9.6 us at 1,024, 49 us at 16,384,
# 1.8 ms at 200,000 (temporaries); fused 3.4 us, 4.1 us, 12 us, 0.22 ms. SGD with
# momentum: 2.8, 3.7, 9.6 us against 2.1, 2.4, 4.6 us. Once compiled the kernel is the
# cheaper path at every size; below the threshold the NumPy path is kept anyway so that a
# model of only scalars and tiny tensors never compiles a kernel (0.5 s per kernel and
# dtype with a cold disk cache), at a cost of at most ~3 us per parameter and step.
FUSED_MIN = 64

_EMPTY = {
    np.dtype(np.float32): np.empty(0, np.float32),
    np.dtype(np.float64): np.empty(0, np.float64),
}


def _fused_ok(p: np.ndarray, g: np.ndarray) -> bool:
    """Whether the fused kernel may run: large enough, both arrays contiguous, one float
    dtype (NOTE [Fused optimizer kernels] lists what the kernels assume)."""
    return (
        type(p) is np.ndarray  # a CUDA parameter takes the array path (on the device)
        and p.size >= FUSED_MIN
        and p.flags.c_contiguous
        and g.flags.c_contiguous
        and p.dtype == g.dtype
        and p.dtype in _EMPTY
        and p.shape == g.shape
    )


def _flat(a: np.ndarray) -> np.ndarray:
    """A flat view (never a copy) of a contiguous array, or the length-0 placeholder."""
    if a is None:
        return None
    return a.reshape(-1)


def _check(p: np.ndarray, g: np.ndarray, *states) -> None:
    """Everything the update assumes about its arrays, checked once per parameter."""
    if g.shape != p.shape or g.dtype != p.dtype:
        raise RuntimeError(
            f"the gradient of a parameter of shape {list(p.shape)} and dtype "
            f"{p.dtype} has shape {list(g.shape)} and dtype {g.dtype}; assign "
            ".grad a tensor like the parameter"
        )
    for s in states:
        if s is not None and (s.shape != p.shape or s.dtype != p.dtype or not s.flags.c_contiguous):
            raise RuntimeError(
                f"optimizer state of shape {list(s.shape)} and dtype {s.dtype} "
                f"does not match its parameter ({list(p.shape)}, {p.dtype}); "
                "was a state_dict of other parameters loaded?"
            )


def _lerp_(a: np.ndarray, end: np.ndarray, w, small: bool) -> None:
    """ATen's ``a.lerp_(end, w)`` in place, op for op."""
    if small:
        t = end - a
        t *= w
        a += t
    else:
        t = end - a
        t *= type(w)(1) - w
        np.subtract(end, t, out=a)


def sgd_update(p, g, buf, first, *, lr, weight_decay, momentum, dampening, nesterov, maximize):
    """``_single_tensor_sgd`` for one parameter. ``buf``: the momentum buffer (required
    when ``momentum != 0``), ``first``: whether this step creates it."""
    _check(p, g, buf)
    dt = p.dtype.type
    lr, wd, mom, damp1 = dt(lr), dt(weight_decay), dt(momentum), dt(1 - dampening)
    if _fused_ok(p, g):
        b = _flat(buf) if momentum != 0 else _EMPTY[p.dtype]
        K.sgd_step(
            _flat(p), _flat(g), b, lr, wd, mom, damp1, bool(nesterov), bool(maximize), bool(first)
        )
        return
    d = -g if maximize else g
    if weight_decay != 0:
        d = d + wd * p
    if momentum != 0:
        if first:
            buf[...] = d
        else:
            buf *= mom
            buf += damp1 * d
        d = d + mom * buf if nesterov else buf
    p += (-lr) * d


def _adam_moments(p, g, m, v, w1, small1, b2, c2, wd, decay_mul, decoupled, maximize):
    """The NumPy path's shared start of Adam, AdamW, NAdam and RAdam: the (signed) gradient
    with L2 or decoupled weight decay applied, and both moments updated in place (in
    PyTorch's operation order, so the results match its bit for bit); returns the
    gradient used."""
    d = -g if maximize else g
    if wd != 0:
        if decoupled:
            p *= decay_mul
        else:
            d = d + wd * p
    _lerp_(m, d, w1, small1)
    v *= b2
    v += (c2 * d) * d
    return d


def adam_update(
    p, g, m, v, vmax, step, *, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled
):
    """``_single_tensor_adam`` (not capturable) for one parameter at step ``step`` (the
    counter after its increment). ``vmax`` is required with ``amsgrad``; ``decoupled``
    is AdamW's weight decay."""
    _check(p, g, m, v, vmax)
    dt = p.dtype.type
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bc2_sqrt = dt(bias_correction2**0.5)
    w1 = 1 - beta1
    small1 = abs(w1) < 0.5
    w1, b2, c2, eps_ = dt(w1), dt(beta2), dt(1 - beta2), dt(eps)
    neg_step = dt(-step_size)
    wd, decay_mul = dt(weight_decay), dt(1 - lr * weight_decay)
    if _fused_ok(p, g):
        vm = _flat(vmax) if amsgrad else _EMPTY[p.dtype]
        K.adam_step(
            _flat(p),
            _flat(g),
            _flat(m),
            _flat(v),
            vm,
            w1,
            small1,
            b2,
            c2,
            eps_,
            neg_step,
            bc2_sqrt,
            wd,
            bool(decoupled),
            decay_mul,
            bool(amsgrad),
            bool(maximize),
        )
        return
    _adam_moments(p, g, m, v, w1, small1, b2, c2, wd, decay_mul, decoupled, maximize)
    if amsgrad:
        np.maximum(vmax, v, out=vmax)
        denom = np.sqrt(vmax)
    else:
        denom = np.sqrt(v)
    denom /= bc2_sqrt
    denom += eps_
    p += (neg_step * m) / denom


def rmsprop_update(
    p, g, sq, gavg, buf, *, lr, alpha, eps, weight_decay, momentum, centered, maximize
):
    """``_single_tensor_rmsprop`` for one parameter; ``gavg`` is required when
    ``centered``, ``buf`` when ``momentum > 0``."""
    _check(p, g, sq, gavg, buf)
    dt = p.dtype.type
    c = 1 - alpha
    small = abs(c) < 0.5
    alpha_, c, eps_, neg_lr = dt(alpha), dt(c), dt(eps), dt(-lr)
    wd, mom = dt(weight_decay), dt(momentum)
    if _fused_ok(p, g):
        empty = _EMPTY[p.dtype]
        K.rmsprop_step(
            _flat(p),
            _flat(g),
            _flat(sq),
            _flat(gavg) if centered else empty,
            _flat(buf) if momentum > 0 else empty,
            alpha_,
            c,
            small,
            eps_,
            neg_lr,
            wd,
            mom,
            bool(centered),
            bool(maximize),
        )
        return
    d = -g if maximize else g
    if weight_decay != 0:
        d = d + wd * p
    sq *= alpha_
    sq += (c * d) * d
    if centered:
        _lerp_(gavg, d, c, small)
        avg = sq + (-gavg) * gavg
        np.sqrt(avg, out=avg)
    else:
        avg = np.sqrt(sq)
    avg += eps_
    if momentum > 0:
        buf *= mom
        buf += d / avg
        p += neg_lr * buf
    else:
        p += (neg_lr * d) / avg


def adagrad_update(p, g, acc, step, *, lr, lr_decay, eps, weight_decay, maximize):
    """``_single_tensor_adagrad`` (dense) for one parameter at step ``step`` (after its
    increment); ``acc`` is the ``sum`` state."""
    _check(p, g, acc)
    dt = p.dtype.type
    clr = lr / (1 + (step - 1) * lr_decay)
    neg_clr, eps_, wd = dt(-clr), dt(eps), dt(weight_decay)
    if _fused_ok(p, g):
        K.adagrad_step(_flat(p), _flat(g), _flat(acc), neg_clr, eps_, wd, bool(maximize))
        return
    d = -g if maximize else g
    if weight_decay != 0:
        d = d + wd * p
    acc += d * d
    std = np.sqrt(acc)
    std += eps_
    p += (neg_clr * d) / std


def _decayed(p, g, wd, maximize):
    """The gradient negated when maximizing, plus ``wd * p`` (L2 weight decay), as a new
    array or ``g`` itself (never written)."""
    d = -g if maximize else g
    if wd != 0:
        d = d + wd * p
    return d


def adadelta_update(p, g, sq, acc, *, lr, rho, eps, weight_decay, maximize):
    """``_single_tensor_adadelta`` for one parameter; ``sq`` is ``square_avg``, ``acc``
    ``acc_delta``."""
    _check(p, g, sq, acc)
    dt = p.dtype.type
    rho_, c, eps_, neg_lr, wd = dt(rho), dt(1 - rho), dt(eps), dt(-lr), dt(weight_decay)
    if _fused_ok(p, g):
        K.adadelta_step(
            _flat(p), _flat(g), _flat(sq), _flat(acc), rho_, c, eps_, neg_lr, wd, bool(maximize)
        )
        return
    d = _decayed(p, g, wd, maximize)
    sq *= rho_
    sq += (c * d) * d
    std = np.sqrt(sq + eps_)
    delta = np.sqrt(acc + eps_)
    delta /= std
    delta *= d
    acc *= rho_
    acc += (c * delta) * delta
    p += neg_lr * delta


def adamax_update(p, g, m, u, step, *, lr, beta1, beta2, eps, weight_decay, maximize):
    """``_single_tensor_adamax`` (not capturable) for one parameter at step ``step`` (after
    its increment); ``m`` is ``exp_avg``, ``u`` ``exp_inf``."""
    _check(p, g, m, u)
    dt = p.dtype.type
    w1 = 1 - beta1
    small1 = abs(w1) < 0.5
    clr = lr / (1 - beta1**step)
    w1, b2, eps_, neg_clr, wd = dt(w1), dt(beta2), dt(eps), dt(-clr), dt(weight_decay)
    if _fused_ok(p, g):
        K.adamax_step(
            _flat(p),
            _flat(g),
            _flat(m),
            _flat(u),
            w1,
            small1,
            b2,
            eps_,
            neg_clr,
            wd,
            bool(maximize),
        )
        return
    d = _decayed(p, g, wd, maximize)
    _lerp_(m, d, w1, small1)
    u *= b2
    a = np.maximum(d, -d)  # |d| (NaN stays); a ufunc CUDA arrays have
    a += eps_
    np.maximum(u, a, out=u)  # torch.maximum: NaN wins, as np.maximum
    p += (neg_clr * m) / u


def nadam_update(
    p,
    g,
    m,
    v,
    mu_product,
    step,
    *,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    momentum_decay,
    decoupled,
    maximize,
):
    """``_single_tensor_nadam`` (not capturable) for one parameter at step ``step`` (after
    its increment). ``mu_product`` is the 0-d ``mu_product`` state array, multiplied in its
    own dtype as PyTorch's scalar tensor is."""
    _check(p, g, m, v)
    dt = p.dtype.type
    bias_correction2 = 1 - beta2**step
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    st = mu_product.dtype.type
    mu_product.fill(st(float(mu_product)) * st(mu))
    mp = float(mu_product)
    mu_product_next = mp * mu_next
    c_grad = -lr * (1.0 - mu) / (1.0 - mp)
    c_avg = (-lr * mu_next) / (1.0 - mu_product_next)
    w1 = 1 - beta1
    small1 = abs(w1) < 0.5
    w1, b2, c2, bc2, eps_ = dt(w1), dt(beta2), dt(1 - beta2), dt(bias_correction2), dt(eps)
    wd, decay_mul, c_grad, c_avg = (
        dt(weight_decay),
        dt(1 - lr * weight_decay),
        dt(c_grad),
        dt(c_avg),
    )
    if _fused_ok(p, g):
        K.nadam_step(
            _flat(p),
            _flat(g),
            _flat(m),
            _flat(v),
            w1,
            small1,
            b2,
            c2,
            bc2,
            eps_,
            c_grad,
            c_avg,
            wd,
            bool(decoupled),
            decay_mul,
            bool(maximize),
        )
        return
    d = _adam_moments(p, g, m, v, w1, small1, b2, c2, wd, decay_mul, decoupled, maximize)
    denom = np.sqrt(v / bc2)
    denom += eps_
    p += (c_grad * d) / denom
    p += (c_avg * m) / denom


def radam_update(p, g, m, v, step, *, lr, beta1, beta2, eps, weight_decay, decoupled, maximize):
    """``_single_tensor_radam`` (not capturable) for one parameter at step ``step`` (after
    its increment)."""
    _check(p, g, m, v)
    dt = p.dtype.type
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    rectify = rho_t > 5.0
    rect = (
        ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        if rectify
        else 1.0
    )
    w1 = 1 - beta1
    small1 = abs(w1) < 0.5
    w1, b2, c2, eps_ = dt(w1), dt(beta2), dt(1 - beta2), dt(eps)
    bc1, bc2_sqrt, lr_, rect = dt(bias_correction1), dt(bias_correction2**0.5), dt(lr), dt(rect)
    wd, decay_mul = dt(weight_decay), dt(1 - lr * weight_decay)
    if _fused_ok(p, g):
        K.radam_step(
            _flat(p),
            _flat(g),
            _flat(m),
            _flat(v),
            w1,
            small1,
            b2,
            c2,
            eps_,
            bc1,
            bc2_sqrt,
            lr_,
            bool(rectify),
            rect,
            wd,
            bool(decoupled),
            decay_mul,
            bool(maximize),
        )
        return
    _adam_moments(p, g, m, v, w1, small1, b2, c2, wd, decay_mul, decoupled, maximize)
    upd = (m / bc1) * lr_
    if rectify:
        sqrt_v = np.sqrt(v)
        sqrt_v += eps_
        upd = (upd * (bc2_sqrt / sqrt_v)) * rect
    p += dt(-1) * upd


def asgd_update(p, g, ax, eta, mu, *, lambd, weight_decay, maximize):
    """``_single_tensor_asgd`` (not capturable) for one parameter, up to the update of the
    scalar ``eta`` and ``mu`` (the caller's): ``eta`` and ``mu`` are their current values
    (floats read from the state)."""
    _check(p, g, ax)
    dt = p.dtype.type
    decay_mul, neg_eta, mu_, wd = dt(1 - lambd * eta), dt(-eta), dt(mu), dt(weight_decay)
    average = mu != 1
    if _fused_ok(p, g):
        K.asgd_step(
            _flat(p), _flat(g), _flat(ax), decay_mul, neg_eta, average, mu_, wd, bool(maximize)
        )
        return
    d = _decayed(p, g, wd, maximize)
    p *= decay_mul
    p += neg_eta * d
    if average:
        ax += (p - ax) * mu_
    else:
        ax[...] = p


def rprop_update(
    p, g, prev, step_size, *, etaminus, etaplus, step_size_min, step_size_max, maximize
):
    """``_single_tensor_rprop`` for one parameter: ``prev`` is the previous (masked)
    gradient, ``step_size`` the per-element step. ``torch.sign`` is 0 for NaN, so a NaN
    product of the gradients leaves the step size alone and a NaN gradient moves the
    parameter by ``-0 * step_size`` (nothing, for a finite step size)."""
    _check(p, g, prev, step_size)
    dt = p.dtype.type
    em, ep, lo, hi = dt(etaminus), dt(etaplus), dt(step_size_min), dt(step_size_max)
    one, zero = dt(1), dt(0)
    if _fused_ok(p, g):
        K.rprop_step(
            _flat(p),
            _flat(g),
            _flat(prev),
            _flat(step_size),
            em,
            ep,
            lo,
            hi,
            one,
            zero,
            bool(maximize),
        )
        return
    d = -g if maximize else g
    s = d * prev
    factor = np.where(s > zero, ep, np.where(s < zero, em, one))
    step_size *= factor
    np.maximum(step_size, lo, out=step_size)
    np.minimum(step_size, hi, out=step_size)
    d = np.where(s < zero, zero, d)  # PyTorch: grad[sign == etaminus] = 0
    sign = np.where(d > zero, one, np.where(d < zero, -one, zero))
    p += (-sign) * step_size
    prev[...] = d
