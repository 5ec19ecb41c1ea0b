"""Reparameterised gamma samples (PyTorch's ``_standard_gamma`` and ``_standard_gamma_grad``),
for the ``Gamma``, ``Beta``, ``Dirichlet``, ``Chi2``... distributions' ``rsample``.

A sample is the inverse CDF of the standard gamma at a uniform draw (NOTE [Reparameterised
gamma samples] in ``kernels/cpu/gamma.py``): the primitive ``StandardGammaIcdf(alpha, u)``
is deterministic, so gradcheck, forward mode and vmap apply to it, and the randomness is the
uniform ``u`` from numbagrad's generator (:func:`standard_gamma` draws it with
``numbagrad.rand``). Its VJP with respect to ``alpha`` is the implicit reparameterisation
gradient ``dx/dalpha = -(dP/dalpha) / pdf(x)`` (the primitive ``StandardGammaGrad``, which,
as PyTorch's ``_standard_gamma_grad``, has no derivative of its own), and with respect to
``u`` it is ``1 / pdf(x)``.
"""

from __future__ import annotations

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._rules import broadcast_batch

__all__ = ["standard_gamma", "standard_gamma_grad", "standard_gamma_icdf"]


def _pdf(alpha, x):
    return F.exp((alpha - 1) * F.log(x) - x - F.lgamma(alpha))


class StandardGammaGrad(Primitive):
    """``dx/dalpha`` of a standard gamma sample ``x`` at fixed CDF (no VJP, as PyTorch's
    ``_standard_gamma_grad``: asking for its derivative raises)."""

    batch = classmethod(broadcast_batch)

    @staticmethod
    def impl(be, alpha, x):
        return be.standard_gamma("_standard_gamma_grad", alpha, x)

    @staticmethod
    def vjp(ctx, g):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")

    @staticmethod
    def jvp(primals, tangents, out):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


class StandardGammaIcdf(Primitive):
    """The standard gamma inverse CDF ``x = P^-1(alpha, u)``."""

    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(broadcast_batch)

    @staticmethod
    def impl(be, alpha, u):
        return be.standard_gamma("_standard_gamma", alpha, u)

    @staticmethod
    def vjp(ctx, g):
        alpha, x = ctx.saved()
        ga = g * standard_gamma_grad(alpha, x) if ctx.needs_input_grad(0) else None
        gu = g / _pdf(alpha, x) if ctx.needs_input_grad(1) else None
        return ga, gu

    @staticmethod
    def jvp(primals, tangents, out):
        alpha = primals[0]
        ta, tu = tangents
        t = None
        if ta is not None:
            t = ta * standard_gamma_grad(alpha, out)
        if tu is not None:
            tx = tu / _pdf(alpha, out)
            t = tx if t is None else t + tx
        return t


def _check(name, t):
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{name}: expected a floating point tensor, got {t.dtype}")


def standard_gamma_icdf(alpha, u):
    """``x`` with ``P(alpha, x) = u`` (the regularized lower incomplete gamma function),
    differentiable in both; draws at ``u == 0`` are clamped to the smallest normal float."""
    _check("standard_gamma_icdf", alpha)
    return bind(StandardGammaIcdf, (alpha, u), NO_PARAMS)


def standard_gamma_grad(alpha, x):
    """``dx/dalpha`` of standard gamma samples ``x`` (PyTorch's ``_standard_gamma_grad``)."""
    _check("standard_gamma_grad", alpha)
    return bind(StandardGammaGrad, (alpha, x), NO_PARAMS)


def standard_gamma(alpha):
    """Standard gamma samples of concentrations ``alpha`` (PyTorch's ``_standard_gamma``),
    reparameterised: gradients reach ``alpha``. The uniform behind each draw comes from
    numbagrad's generator."""
    _check("standard_gamma", alpha)
    dev = _creation._like_device(alpha, None)
    u = _creation.rand(tuple(alpha.shape), dtype=alpha.dtype, device=dev)
    return standard_gamma_icdf(alpha, u)
