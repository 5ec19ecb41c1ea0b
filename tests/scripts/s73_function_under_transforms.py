"""Custom ``torch.autograd.Function``s under ``torch.func`` transforms, following the
"Extending torch.func with autograd.Function" docs, together with the
``torch.autograd.functional`` options transform-heavy code passes: a ``setup_context``-style
Function with a differentiable ``backward``, a ``jvp`` (``save_for_forward``) and a
hand-written ``vmap`` staticmethod (batch dims moved and returned as ``out_dims``), taken
through ``grad``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap(jacrev)`` and
``grad(grad)``; a two-output Function whose integer output is ``mark_non_differentiable``,
batched by ``generate_vmap_rule``; a Function with ``set_materialize_grads(False)`` whose
backward receives ``None`` for an unused output (``ctx.needs_input_grad`` checked); a
``once_differentiable`` backward under ``jacrev`` and ``vmap(grad)``; then
``autograd.functional.jacobian``/``hessian``/``hvp``/``vhp`` with ``vectorize=True``,
``create_graph=True`` (gradients flowing on to parameters), ``strategy='forward-mode'`` and
``strict=True`` (which must reject an output independent of the input)."""

import numpy as np
import torch
from torch.autograd.function import once_differentiable
from torch.func import grad, hessian, jacfwd, jacrev, vmap

torch.set_default_dtype(torch.float64)


class ScaledSoftplus(torch.autograd.Function):
    """y = log(1 + exp(a * x)) / a with explicit backward, jvp and vmap rules."""

    @staticmethod
    def forward(x, a):
        return torch.nn.functional.softplus(a * x) / a

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, a = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        ctx.a = a

    @staticmethod
    def backward(ctx, gy):
        (x,) = ctx.saved_tensors
        return gy * torch.sigmoid(ctx.a * x), None

    @staticmethod
    def jvp(ctx, x_t, a_t):
        (x,) = ctx.saved_tensors
        return x_t * torch.sigmoid(ctx.a * x)

    @staticmethod
    def vmap(info, in_dims, x, a):
        x_bdim, _ = in_dims
        x = x.movedim(x_bdim, 0)
        return ScaledSoftplus.apply(x, a), 0


class TopValue(torch.autograd.Function):
    """(max value, argmax) along the last dim; the index output is non-differentiable."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        v, i = x.max(dim=-1)
        return v, i

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        _, i = output
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(i)
        ctx.save_for_forward(i)
        ctx.shape = x.shape

    @staticmethod
    def backward(ctx, gv, gi):
        (i,) = ctx.saved_tensors
        gx = torch.zeros(ctx.shape, dtype=gv.dtype)
        return gx.scatter(-1, i.unsqueeze(-1), gv.unsqueeze(-1))

    @staticmethod
    def jvp(ctx, x_t):
        (i,) = ctx.saved_tensors
        return x_t.gather(-1, i.unsqueeze(-1)).squeeze(-1), None


class SinCos(torch.autograd.Function):
    """Two outputs; gradients are not materialised, so an unused output's grad is None."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, gs, gc):
        (x,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None
        out = None
        if gs is not None:
            out = gs * torch.cos(x)
        if gc is not None:
            out = -gc * torch.sin(x) if out is None else out - gc * torch.sin(x)
        return out

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t * torch.cos(x), -x_t * torch.sin(x)


class Cubed(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x**2


def main():
    rng = np.random.default_rng(73)
    out = {}
    x = torch.from_numpy(rng.normal(size=5))
    W = torch.from_numpy(rng.normal(size=(4, 5)))

    def f(x):
        return ScaledSoftplus.apply(W @ x, 2.0).sum()

    def f_ref(x):
        return (torch.nn.functional.softplus(2.0 * (W @ x)) / 2.0).sum()

    out["grad"] = grad(f)(x)
    out["grad_ref_diff"] = (grad(f)(x) - grad(f_ref)(x)).abs().max()
    out["jacrev"] = jacrev(lambda v: ScaledSoftplus.apply(W @ v, 2.0))(x)
    out["jacfwd_minus_jacrev"] = (
        (jacfwd(lambda v: ScaledSoftplus.apply(W @ v, 2.0))(x) - out["jacrev"]).abs().max()
    )
    out["hessian"] = hessian(f)(x)
    out["hessian_ref_diff"] = (out["hessian"] - hessian(f_ref)(x)).abs().max()
    out["hessian_revrev"] = jacrev(jacrev(f))(x)
    out["grad_grad_diag"] = vmap(lambda e: grad(lambda s: grad(f)(x + s * e) @ e)(0.0 * e[0]))(
        torch.eye(5)
    )
    xs = torch.from_numpy(rng.normal(size=(3, 5)))
    out["vmap_jacrev"] = vmap(jacrev(lambda v: ScaledSoftplus.apply(W @ v, 2.0)))(xs)
    out["vmap_in_dim1"] = vmap(lambda v: ScaledSoftplus.apply(v, 0.5), in_dims=1)(xs)
    # eager autograd with create_graph through the Function's differentiable backward
    xr = x.clone().requires_grad_(True)
    (g1,) = torch.autograd.grad(f(xr), xr, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), xr)
    out["eager_double"] = g2

    # mark_non_differentiable index output, under vmap / jacrev / jacfwd
    M = torch.from_numpy(rng.normal(size=(4, 6)))

    def top_sum(m):
        v, i = TopValue.apply(m)
        return v.sum() + 0.0 * i.sum()

    out["top_grad"] = grad(top_sum)(M)
    vals, idx = vmap(TopValue.apply)(M)
    out["top_vmap_vals"] = vals
    out["top_vmap_idx"] = idx
    out["top_jacrev"] = jacrev(lambda m: TopValue.apply(m)[0])(M)
    out["top_jacfwd"] = jacfwd(lambda m: TopValue.apply(m)[0])(M)
    Mr = M.clone().requires_grad_(True)
    v_e, i_e = TopValue.apply(Mr)
    out["top_idx_requires_grad"] = i_e.requires_grad
    (v_e * torch.arange(4.0)).sum().backward()
    out["top_eager_grad"] = Mr.grad

    # set_materialize_grads(False): only one output used
    z = torch.from_numpy(rng.normal(size=4))
    out["sincos_jacrev_sin"] = jacrev(lambda t: SinCos.apply(t)[0])(z)
    out["sincos_jacrev_both"] = jacrev(lambda t: torch.stack(SinCos.apply(t)))(z)
    out["sincos_hessian"] = hessian(lambda t: SinCos.apply(t)[1].sum())(z)
    out["sincos_vmap_grad"] = vmap(grad(lambda t: SinCos.apply(t)[0] * 2.0))(z)
    zr = z.clone().requires_grad_(True)
    s, _c = SinCos.apply(zr)
    s.sum().backward()
    out["sincos_eager_grad"] = zr.grad

    # once_differentiable: first order works under transforms
    out["cubed_jacrev"] = jacrev(Cubed.apply)(z)
    out["cubed_vmap_grad"] = vmap(grad(lambda t: Cubed.apply(t) * 2.0))(z)
    zr2 = z.clone().requires_grad_(True)
    (gc,) = torch.autograd.grad(Cubed.apply(zr2).sum(), zr2, create_graph=True)
    try:
        gc.sum().backward()
        out["cubed_double_backward_raises"] = False
    except RuntimeError:
        out["cubed_double_backward_raises"] = True

    # torch.autograd.functional with create_graph / vectorize / strategy / strict
    A = torch.from_numpy(rng.normal(size=(3, 3))).requires_grad_(True)
    y0 = torch.from_numpy(rng.normal(size=3))

    def field(y):
        return torch.tanh(A @ y) * y

    Jc = torch.autograd.functional.jacobian(field, y0, create_graph=True, vectorize=True)
    (gA,) = torch.autograd.grad(torch.linalg.det(Jc), A)
    out["af_jac_create_graph"] = Jc
    out["af_jac_grad_A"] = gA
    Jfm = torch.autograd.functional.jacobian(field, y0, vectorize=True, strategy="forward-mode")
    out["af_jac_fwd_vs_rev"] = (Jfm - Jc).abs().max()

    def energy(y):
        return (field(y) ** 2).sum() + torch.logsumexp(A @ y, 0)

    Hc = torch.autograd.functional.hessian(energy, y0, create_graph=True, vectorize=True)
    (gH,) = torch.autograd.grad(torch.trace(Hc), A)
    out["af_hessian_cg"] = Hc
    out["af_hessian_trace_grad_A"] = gH
    v = torch.from_numpy(rng.normal(size=3))
    _, hv = torch.autograd.functional.hvp(energy, y0, v, create_graph=True, strict=True)
    _, vh = torch.autograd.functional.vhp(energy, y0, v, create_graph=True)
    (ghv,) = torch.autograd.grad(hv @ v, A)
    out["af_hvp"] = hv
    out["af_hvp_vs_vhp"] = (hv - vh).abs().max()
    out["af_hvp_grad_A"] = ghv

    try:
        torch.autograd.functional.jacobian(
            lambda y: torch.ones(3) + 0 * y.detach(), y0, strict=True
        )
        out["strict_raises"] = False
    except RuntimeError:
        out["strict_raises"] = True
    Jz = torch.autograd.functional.jacobian(lambda y: torch.ones(3) + 0 * y.detach(), y0)
    out["nonstrict_zero_jac"] = Jz
    return out


TOLERANCE = {
    "grad_ref_diff": (1e-6, 1e-12),
    "jacfwd_minus_jacrev": (1e-6, 1e-12),
    "hessian_ref_diff": (1e-6, 1e-12),
    "af_jac_fwd_vs_rev": (1e-6, 1e-12),
    "af_hvp_vs_vhp": (1e-6, 1e-12),
}
