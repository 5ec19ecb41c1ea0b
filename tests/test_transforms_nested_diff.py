"""Differential tests of NESTED function transforms: ``numbagrad.func`` against ``torch.func``.

Each case is a function of the module (``numbagrad`` or ``torch``) that builds its float64
inputs from a seeded NumPy generator and returns a tree of tensors; both modules run it and
the results must agree to ``rtol=1e-10, atol=1e-12``. Where PyTorch raises, numbagrad must
raise an exception of the same builtin type. The families covered:

* closures capturing values of an outer transform level (grad, jvp, vjp, vmap tracers) used
  inside inner transforms, in every nesting order, including inner outputs that depend on
  the outer level only (which must be constants to the inner level: NOTE [Tracers]);
* has_aux outputs that are outer-level values, argnums tuples, constant outputs;
* mixed ops (elementwise, matmul, reductions with dims, indexing, reshapes, where, cat,
  softmax, norm), in_dims/out_dims with None and negative dims;
* custom ``autograd.Function`` (setup_context, backward, jvp, vmap or generate_vmap_rule);
* a small deterministic random generator of nested programs (``test_random_nesting``).

Cases where PyTorch itself is wrong (it returns zeros, NaN or garbage) are checked against a
reference computed without the construct that PyTorch gets wrong (``test_where_torch_is_wrong``).
"""

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _diff import Cases, assert_same, check, to_np  # noqa: E402
from _diff import t as _t  # noqa: E402

import numbagrad  # noqa: E402

pytestmark = pytest.mark.transforms

CASES = Cases()
_case = CASES.case


# -- custom Functions, one set per module ----------------------------------------------------
_FUNCTIONS: dict = {}


def _fns(mod):
    """``MySin`` (generated vmap rule), ``MyExp`` (saves its output), ``MyMulAdd`` (two
    inputs and outputs, a vmap staticmethod), ``MyScale`` (a non-tensor input), ``MyCube``
    (vmap keeping the input's batch dim), ``MyMax`` (a non-differentiable int output)."""
    if mod.__name__ in _FUNCTIONS:
        return _FUNCTIONS[mod.__name__]
    Fn = mod.autograd.Function

    class MySin(Fn):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * x.cos()

    class MyExp(Fn):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y

    class MyMulAdd(Fn):
        @staticmethod
        def forward(x, y):
            return x * y, x + 2 * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + 2 * g2

        @staticmethod
        def jvp(ctx, tx, ty):
            x, y = ctx.saved_tensors
            return tx * y + x * ty, tx + 2 * ty

        @staticmethod
        def vmap(info, in_dims, x, y):
            def front(v, d):
                if d is None:
                    return v.unsqueeze(0).expand(info.batch_size, *v.shape)
                return v.movedim(d, 0)

            return MyMulAdd.apply(front(x, in_dims[0]), front(y, in_dims[1])), (0, 0)

    class MyScale(Fn):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

        @staticmethod
        def jvp(ctx, t, _):
            return t * ctx.k

    class MyCube(Fn):
        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * t * x * x

        @staticmethod
        def vmap(info, in_dims, x):
            return MyCube.apply(x), in_dims[0]

    class MyMax(Fn):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.amax(-1), x.argmax(-1)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])
            ctx.save_for_forward(inputs[0], output[1])
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, gi):
            x, i = ctx.saved_tensors
            onehot = (mod.arange(x.shape[-1]) == i.unsqueeze(-1)).to(x.dtype)
            return g.unsqueeze(-1) * onehot

        @staticmethod
        def jvp(ctx, t):
            _, i = ctx.saved_tensors
            return t.gather(-1, i.unsqueeze(-1)).squeeze(-1), None

    out = {
        "MySin": MySin,
        "MyExp": MyExp,
        "MyMulAdd": MyMulAdd,
        "MyScale": MyScale,
        "MyCube": MyCube,
        "MyMax": MyMax,
    }
    _FUNCTIONS[mod.__name__] = out
    return out


def _f_all(mod, x, c, scale=False):
    """A mix of the custom Functions, of ``x`` and ``c`` (shape (3,))."""
    S = _fns(mod)
    a = S["MySin"].apply(x) * S["MyExp"].apply(c * 0.3)
    p, q = S["MyMulAdd"].apply(a, c)
    p = S["MyScale"].apply(p, 1.5) if scale else p * 1.5
    return p + S["MyCube"].apply(q * 0.5)


# == 1. closures over outer levels, outputs depending on the outer level only =================
@_case()
def grad_grad_outer_only(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    return F.grad(lambda x: (F.grad(lambda y: (x * x).sum())(y0) * x).sum())(x0)


@_case()
def grad_grad_mixed(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    return F.grad(lambda x: (F.grad(lambda y: (x * y.sin()).sum())(y0) * x).sum())(x0)


@_case()
def grad_grad_same_outer_value_as_input(m):
    F, x0 = m.func, _t(m, 3)
    return F.grad(lambda x: (F.grad(lambda y: (x * y**3).sum())(x) * x).sum())(x0)


@_case()
def grad_jvp_outer_only(m):
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        p, t = F.jvp(lambda y: x.exp() * 2, (y0,), (v,))
        return (t * x).sum() + (p * x).sum()

    return F.grad(f)(x0)


@_case()
def jvp_grad_outer_only(m):
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        g = F.grad(lambda y: x.exp().sum())(y0)
        return g * x + g.sum()

    return F.jvp(f, (x0,), (v,))


@_case()
def jvp_jvp_outer_only(m):
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        p, t = F.jvp(lambda y: x.exp(), (y0,), (v,))
        return t * x + p

    return F.jvp(f, (x0,), (v,))


@_case()
def jvp_jvp_closure_tangent_is_outer(m):
    F, x0, v = m.func, _t(m, 3), _t(m, 3, k=1)
    return F.jvp(lambda x: F.jvp(lambda y: y * y * x, (x,), (x,))[1], (x0,), (v,))


@_case()
def vmap_grad_outer_only(m):
    F, xs, y0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)
    return F.vmap(lambda x: F.grad(lambda y: (x * x).sum())(y0))(xs)


@_case()
def vmap_grad_capture(m):
    F, xs, y0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)
    return F.vmap(lambda x: F.grad(lambda y: (x * y * y).sum())(y0))(xs)


@_case()
def grad_vmap_outer_only(m):
    F, x0, ys = m.func, _t(m, 3), _t(m, 4, 3, k=1)
    return F.grad(lambda x: F.vmap(lambda y: (x * x).sum())(ys).sum())(x0)


@_case()
def vmap_vmap_outer_only(m):
    F, xs, ys = m.func, _t(m, 4, 3), _t(m, 5, 3, k=1)
    return F.vmap(lambda x: F.vmap(lambda y: x.sum())(ys))(xs)


@_case()
def vmap_jacrev_jacfwd_hessian_outer_only(m):
    F, xs, y0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)
    return (
        F.vmap(lambda x: F.jacrev(lambda y: x.exp())(y0))(xs),
        F.vmap(lambda x: F.jacfwd(lambda y: x.exp())(y0))(xs),
        F.vmap(lambda x: F.hessian(lambda y: x.exp().sum())(y0))(xs),
        F.vmap(lambda x: F.jacrev(lambda y: x.sum())(y0))(xs),
    )


@_case()
def vmap_jacrev_jacfwd_hessian_capture(m):
    F, xs, y0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)
    return (
        F.vmap(lambda x: F.jacrev(lambda y: x * y.sin())(y0))(xs),
        F.vmap(lambda x: F.jacfwd(lambda y: x * y.sin())(y0))(xs),
        F.vmap(lambda x: F.hessian(lambda y: (x * y.sin()).sum())(y0))(xs),
    )


@_case()
def grad_of_jacobians_outer_only(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    return (
        F.grad(lambda x: (F.jacrev(lambda y: x.exp())(y0) * x).sum())(x0),
        F.grad(lambda x: (F.jacfwd(lambda y: x.exp())(y0) * x).sum())(x0),
        F.grad(lambda x: (F.hessian(lambda y: (x.exp() * x).sum())(y0) * x).sum())(x0),
    )


@_case()
def grad_of_jacobians_mixed(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    return (
        F.grad(lambda x: (F.jacrev(lambda y: x.exp() * y * y)(y0) * x).sum())(x0),
        F.grad(lambda x: (F.jacfwd(lambda y: x.exp() * y * y)(y0) * x).sum())(x0),
        F.grad(lambda x: (F.hessian(lambda y: (x.exp() * y**3).sum())(y0) * x).sum())(x0),
    )


@_case()
def jacfwd_of_jacrev_outer_only(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 2, k=1)
    return F.jacfwd(lambda x: F.jacrev(lambda y: x.sin() * 3)(y0))(x0)


@_case()
def jacrev_of_jacfwd_closure(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    return F.jacrev(lambda x: F.jacfwd(lambda y: x * y.sin() * y.sum())(y0).sum(0))(x0)


@_case()
def three_levels_middle_only(m):
    F, a, b, c = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def outer(x):
        def mid(y):
            g = F.grad(lambda z: (y * y * x).sum())(c)
            return (g * y + y * y * x).sum()

        return (F.grad(mid)(b) * x).sum()

    return F.grad(outer)(a)


@_case()
def three_levels_outer_only(m):
    F, a, b, c = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def outer(x):
        def mid(y):
            g = F.grad(lambda z: x.exp().sum())(c)
            return (g * y + y * y * x).sum()

        return (F.grad(mid)(b) * x).sum()

    return F.grad(outer)(a)


@_case()
def vmap_grad_grad_closures(m):
    F, xs, b, c = m.func, _t(m, 4, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        return F.grad(lambda y: (F.grad(lambda z: (x * z * z * y).sum())(c) * x).sum())(b)

    return F.vmap(f)(xs)


@_case()
def grad_vmap_grad_closure(m):
    F, x0, ys = m.func, _t(m, 3), _t(m, 4, 3, k=1)

    def f(x):
        per = F.vmap(F.grad(lambda y: (x.sin() * x).sum() + (x * y * y).sum()))(ys)
        return (per * x).sum() + per.pow(2).sum()

    return F.grad(f)(x0)


@_case()
def jvp_vmap_grad_closure(m):
    F, x0, ys, v = m.func, _t(m, 3), _t(m, 4, 3, k=1), _t(m, 3, k=2)
    return F.jvp(lambda x: F.vmap(F.grad(lambda y: (x.sin() * y**3).sum()))(ys), (x0,), (v,))


# == 2. vjp / vjp_fn / linearize across levels ================================================
@_case()
def vjp_fn_called_inside_grad(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    _, fn = F.vjp(lambda y: y.sin() * y, y0)
    return F.grad(lambda x: (fn(x)[0] * fn(x * x)[0]).sum())(x0)


@_case()
def vjp_fn_called_inside_vmap_and_jvp(m):
    F, xs, y0, v = m.func, _t(m, 4, 3), _t(m, 3, k=1), _t(m, 3, k=2)
    _, fn = F.vjp(lambda y: y.sin() * y.sum(), y0)
    return F.vmap(fn)(xs), F.jvp(lambda x: fn(x * x)[0], (xs[0],), (v,))


@_case()
def vjp_fn_in_vmap_in_grad(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    _, fn = F.vjp(lambda y: y.exp() * y, y0)

    def f(x):
        return F.vmap(lambda c: fn(c)[0])(x[None].expand(2, 3) * 2).pow(2).sum()

    return F.grad(f)(x0)


@_case()
def vjp_inside_grad_outer_only(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        out, fn = F.vjp(lambda y: x.sin() * x, y0)
        return (fn(x)[0] * out).sum() + out.sum()

    return F.grad(f)(x0)


@_case()
def vjp_fn_of_grad_level_used_in_inner_grad_and_jvp(m):
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        _, fn = F.vjp(lambda y: y.exp() * x, x)
        g = F.grad(lambda c: (fn(c)[0] * c).sum())(y0)
        p, t = F.jvp(lambda c: fn(c * c)[0], (y0,), (v,))
        return (g * x).sum() + (t * x).sum() + p.sum()

    return F.grad(f)(x0)


@_case()
def vjp_fn_of_vmap_level_used_in_inner_vmap(m):
    F, xs, ys = m.func, _t(m, 4, 3), _t(m, 5, 3, k=1)

    def f(x):
        _, fn = F.vjp(lambda y: y.exp() * x, x)
        return F.vmap(lambda c: fn(c)[0])(ys)

    return F.vmap(f)(xs)


@_case()
def vjp_of_vjp(m):
    F, x0, ct, ct2 = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)
    out, fn = F.vjp(lambda x: F.vjp(lambda y: y.sin() * y * x, x)[1](ct)[0], x0)
    return out, fn(ct2)


@_case()
def vmap_vjp_outer_only_output(m):
    F, xs, y0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)

    def f(x):
        out, fn = F.vjp(lambda y: x.sin(), y0)
        return fn(x)[0], out

    return F.vmap(f)(xs)


@_case()
def vmap_vjp_pytree_cotangents(m):
    F, xs, cts = m.func, _t(m, 4, 3), _t(m, 4, 3, k=1)

    def f(x, ct):
        _, fn = F.vjp(lambda a: (a.sin(), {"q": a.cumsum(0)}), x)
        return fn((ct, {"q": ct * 2}))

    return F.vmap(f)(xs, cts)


@_case()
def vjp_aliased_outputs_in_grad(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        out, fn = F.vjp(lambda y: (y, x, y * x, y), y0)
        return sum((g * x).sum() for g in fn((x, x, x, x * 2))) + out[1].sum()

    return F.grad(f)(x0)


@_case()
def linearize_jvp_fn_under_vmap_and_grad(m):
    F, y0, v, vs = m.func, _t(m, 3, k=1), _t(m, 3, k=2), _t(m, 4, 3, k=3)
    _, jfn = F.linearize(lambda y: y.sin() * y, y0)
    return F.vmap(jfn)(vs), F.grad(lambda v: (jfn(v) ** 2).sum())(v)


# == 3. has_aux, argnums, constant outputs ====================================================
@_case()
def grad_aux_is_outer_value(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        g, aux = F.grad(lambda y: ((x * y).sum(), x * 2), has_aux=True)(y0)
        g2, aux2 = F.grad(lambda y: ((y * y).sum(), x.exp()), has_aux=True)(y0)
        return (g * aux).sum() + (aux2 * x).sum() + (g2 * x).sum()

    return F.grad(f)(x0)


@_case()
def grad_and_value_outer_only_value(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        g, v = F.grad_and_value(lambda y: (x * x).sum())(y0)
        g2, v2 = F.grad_and_value(lambda y: (x * y).sum())(y0)
        return v * 3 + g.sum() + v2 + (g2 * g2).sum()

    return F.grad(f)(x0)


@_case()
def jvp_vjp_aux_are_outer_values(m):
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        p, t, aux = F.jvp(lambda y: (y * x, x.cos()), (y0,), (v,), has_aux=True)
        out, fn, aux2 = F.vjp(lambda y: (y * x, x.sin()), y0, has_aux=True)
        return (t * aux + p).sum() + (fn(aux2)[0] * out).sum()

    return F.grad(f)(x0)


@_case()
def vmap_jacobians_aux_outer(m):
    F, xs, y0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)
    return (
        F.vmap(lambda x: F.grad(lambda y: ((x * y).sum(), x * 2), has_aux=True)(y0))(xs),
        F.vmap(lambda x: F.jacrev(lambda y: (x * y, x * 2), has_aux=True)(y0))(xs),
        F.vmap(lambda x: F.jacfwd(lambda y: (x * y, x * 2), has_aux=True)(y0))(xs),
    )


@_case()
def grad_of_jacobians_aux_outer(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        j1, a1 = F.jacfwd(lambda y: (x * y, x.exp()), has_aux=True)(y0)
        j2, a2 = F.jacrev(lambda y: (x * y, x.exp()), has_aux=True)(y0)
        return (j1.sum(0) * a1).sum() + (j2.sum(0) * a2).sum()

    return F.grad(f)(x0)


@_case()
def constant_outputs(m):
    F, x0 = m.func, _t(m, 3)
    ones = m.ones(2, dtype=m.float64)
    out, fn = F.vjp(lambda x: m.ones(2, dtype=m.float64), x0)
    return (
        F.grad(lambda x: m.tensor(3.0, dtype=m.float64))(x0),
        F.jvp(lambda x: m.ones(2, dtype=m.float64), (x0,), (x0,)),
        out,
        fn(ones),
        F.jacrev(lambda x: m.ones(2, dtype=m.float64))(x0),
        F.jacfwd(lambda x: m.ones(2, dtype=m.float64))(x0),
        F.hessian(lambda x: m.tensor(2.0, dtype=m.float64))(x0),
        F.hessian(lambda x: x.sum())(x0),
        F.vmap(lambda x: m.ones(2, dtype=m.float64))(x0),
    )


@_case()
def argnums_variants(m):
    F, a, b, c = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)
    return (
        F.grad(lambda a, b, c: (a * b.exp() * c).sum(), argnums=(0, 2))(a, b, c),
        F.grad(lambda a, b: (a * b.exp()).sum(), argnums=-1)(a, b),
        F.grad(lambda a, b: (a * b.exp()).sum(), argnums=(1,))(a, b),
        F.grad(lambda a, b: (a * a).sum(), argnums=(0, 1))(a, b),
        F.jacrev(lambda a, b: a[:2] * b[:2].exp(), argnums=(0, 1))(a, b),
        F.jacfwd(lambda a, b: a[:2] * b[:2].exp(), argnums=(0, 1))(a, b),
        F.hessian(lambda a, b: (a[:2] * b[:2].exp()).sum(), argnums=(0, 1))(a, b),
    )


@_case()
def grad_of_grad_argnums(m):
    F, a, b = m.func, _t(m), _t(m, k=1)

    def f(a, b):
        return a.sin() * b.exp() * a

    return (
        F.grad(F.grad(f, argnums=1), argnums=0)(a, b),
        F.grad(lambda a, b: sum(F.grad(f, argnums=(0, 1))(a, b)), argnums=(0, 1))(a, b),
    )


@_case()
def grad_argnums_same_outer_value_twice(m):
    F, x0 = m.func, _t(m, 3)

    def f(x):
        ga, gb = F.grad(lambda a, b: (a.sin() * b * b).sum(), argnums=(0, 1))(x, x)
        return (ga * gb).sum()

    return F.grad(f)(x0)


@_case()
def jvp_same_outer_primal_twice(m):
    F, x0, v, w = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)
    return F.jvp(lambda x: F.jvp(lambda a, b: a.sin() * b, (x, x), (v, w))[1], (x0,), (v,))


@_case()
def integer_outputs_and_aux(m):
    F, x0, xs = m.func, _t(m, 3), _t(m, 4, 3, k=1)
    return (
        F.grad(lambda x: ((x * x).sum(), x.argmax()), has_aux=True)(x0),
        F.vmap(lambda x: (x.argmax(), (x > 0).sum(), x.sin()))(xs),
        F.jvp(lambda x: (x.argmax(), x.sin()), (x0,), (x0,)),
        F.grad(lambda xs: F.vmap(lambda x: x[x.argmax()] * x.sum())(xs).sum())(xs),
    )


# == 4. in_dims / out_dims ====================================================================
@_case()
def vmap_vmap_out_dims_negative_and_positive(m):
    F, xs, ys = m.func, _t(m, 4, 3), _t(m, 5, 3, k=1)

    def f(x):
        return F.vmap(lambda y: (x * 2 + y, y * x), out_dims=(-1, -2))(ys)

    return F.vmap(f, out_dims=(1, -1))(xs)


@_case()
def vmap_inner_in_dims_on_outer_value(m):
    F, xs, zs = m.func, _t(m, 4, 3, 5), _t(m, 3, 4, 5, k=1)

    def g(x):
        return F.vmap(lambda y: y.cumsum(0) * y.norm(), in_dims=-1, out_dims=-1)(x)

    return (
        F.vmap(lambda x: F.vmap(lambda y: y.softmax(-1), in_dims=1)(x))(xs),
        F.vmap(g, in_dims=1, out_dims=-1)(zs),
    )


@_case()
def vmap_pytree_in_out_dims(m):
    F, a, b, c, d = m.func, _t(m, 4, 3), _t(m, 3, k=1), _t(m, 3, 4, k=2), _t(m, 4, 2, k=3)

    def f(p, c):
        return {"o": p["a"] * p["b"] + c, "p": p["a"] @ p["b"]}

    return (
        F.vmap(f, in_dims=({"a": 0, "b": None}, 1))({"a": a, "b": b}, c),
        F.vmap(lambda p: (p[0].sum(), [p[1] * 2, p[0][:2] * p[1]]), out_dims=(0, [1, 0]))([a, d]),
    )


@_case()
def per_example_grads_and_grad_of_vmap_pytrees(m):
    F, W, bias, X, Y = m.func, _t(m, 3, 2), _t(m, 2, k=1), _t(m, 5, 3, k=2), _t(m, 5, 2, k=3)

    def loss(params, x, y):
        w, b = params
        return ((x @ w + b - y) ** 2).mean()

    def total(p):
        return F.vmap(loss, in_dims=(None, 0, 0))(p, X, Y).sum()

    return F.vmap(F.grad(loss), in_dims=(None, 0, 0))((W, bias), X, Y), F.grad(total)((W, bias))


@_case()
def vmap_same_tensor_twice_different_dims(m):
    F, x0 = m.func, _t(m, 3, 3)

    def f(x):
        return F.vmap(lambda a, b: a * b.sin(), in_dims=(0, 1))(x, x)

    return f(x0), F.grad(lambda x: f(x).pow(2).sum())(x0)


@_case()
def hessians_under_vmap_in_dims_none(m):
    F, xs, w = m.func, _t(m, 4, 3), _t(m, 3, k=1)

    def f(w, x):
        return ((w * x * x).sum().tanh()) ** 2

    return (
        F.vmap(F.hessian(f), in_dims=(None, 0))(w, xs),
        F.vmap(F.hessian(f, argnums=1), in_dims=(None, 0))(w, xs),
        F.vmap(F.jacrev(lambda x, y: x * y.exp(), argnums=(0, 1)), in_dims=(1, None))(xs.t(), w),
    )


@_case()
def chunked_vmap_and_jacrev_under_transforms(m):
    F, x0, xs, ys = m.func, _t(m, 3), _t(m, 4, 3, k=1), _t(m, 5, 3, k=2)

    def f(x):
        return F.vmap(lambda y: (x * y).exp().sum(), chunk_size=2)(ys).sum()

    return (
        F.grad(f)(x0),
        F.vmap(lambda x: F.vmap(lambda y: (x * y).exp(), chunk_size=2)(ys))(xs),
        F.vmap(F.jacrev(lambda x: x.sin() * x.sum(), chunk_size=2))(xs),
    )


# == 5. mixed ops in nested transforms ========================================================
def _mixed(m, x, c):
    """Elementwise, matmul, reductions with dims, indexing, reshapes, where, cat, softmax."""
    a = (x[:, None] * c[None, :]) @ x.cos()
    b = m.softmax(a * c, dim=-1) + m.where(x > 0, x * c, c.exp())
    s = m.cat([a[:1] * b[1:2], a[1:] * b[:2]], dim=0)
    r = (s.reshape(3, 1).expand(3, 2) * c[:2]).t().reshape(-1)[:3]
    q = m.stack([r, b.flip(0)], dim=1).prod(dim=1) - r.mean(-1, keepdim=True)
    return q * x.norm() + m.logsumexp(q[None, :] * c[:, None], dim=1) + q[m.tensor([2, 0, 1])]


@_case()
def mixed_ops_all_nestings(m):
    F, x0, c0, xs, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 4, 3, k=2), _t(m, 3, k=3)

    def scalar(x, c):
        return _mixed(m, x, c).sum()

    return (
        F.grad(lambda c: (F.grad(scalar)(x0, c) * c).sum())(c0),
        F.jvp(F.grad(scalar), (x0, c0), (v, v)),
        F.vmap(F.grad(scalar), in_dims=(0, None))(xs, c0),
        F.vmap(lambda x: F.jacfwd(lambda c: _mixed(m, x, c))(c0))(xs),
        F.hessian(scalar, argnums=(0, 1))(x0, c0),
        F.grad(lambda c: F.vmap(lambda x: _mixed(m, x, c))(xs).pow(2).sum())(c0),
    )


@_case()
def reductions_and_sorts_under_grad_of_vmap(m):
    F, xs = m.func, _t(m, 2, 3, 4)

    def one(x):
        return (
            x.amax(1)
            + x.max(1)[0]
            + x.min(-1).values
            + x.median(1).values
            + x.sort(1).values[:, 1]
            + x.topk(2, 1).values.sum(1)
            + x.cummax(1).values[:, -1]
            + x.std(1)
            + x.norm(p=3, dim=1)
            + x.logsumexp(1)
            + m.linalg.vector_norm(x, dim=1)
        )

    return F.grad(lambda X: F.vmap(one)(X).pow(2).sum())(xs), F.vmap(F.jacrev(one))(xs)


@_case()
def linalg_under_nested_transforms(m):
    F, xs = m.func, _t(m, 2, 3, 3)
    eye = m.eye(3, dtype=m.float64)

    def one(x):
        a = x @ x.t() + eye
        return m.linalg.solve(a, x[:, 0]) + m.linalg.inv(a)[0] + m.linalg.slogdet(a)[1]

    # (vmap of jacfwd of these: torch is wrong, test_where_torch_is_wrong_vmap_of_jacfwd_det)
    return F.grad(lambda X: F.vmap(one)(X).pow(2).sum())(xs), F.vmap(F.jacrev(one))(xs)


# == 6. detach, no_grad, in-place, creation ops ===============================================
@_case()
def detach_across_levels(m):
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)
    B = _t(m, 2, 3, k=3)
    return (
        F.grad(lambda x: (F.grad(lambda y: (y.detach() * y).sum())(x * x) * x).sum())(x0),
        F.grad(lambda x: (F.grad(lambda y: (x.detach() * y * y).sum())(y0) * x).sum())(x0),
        F.jvp(lambda x: F.grad(lambda y: (y.detach() * y * y).sum())(x * 2), (x0,), (v,)),
        F.grad(lambda x: F.vmap(lambda b: (b.detach() * b).sum())(B * x).sum())(x0),
    )


@_case()
def no_grad_inside_nested(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def inner_ng(x):
        def inner(y):
            with m.no_grad():
                c = (x * y).sum()
            return c * (y * y).sum()

        return (F.grad(inner)(x * 2) * x).sum()

    def outer_ng(x):
        with m.no_grad():
            g = F.grad(lambda y: (x * y * y).sum())(y0)
        return (g * x).sum()

    return F.grad(inner_ng)(x0), F.grad(outer_ng)(x0)


@_case()
def inplace_on_tensors_made_inside(m):
    F, x0, xs, y0, v = m.func, _t(m, 3), _t(m, 4, 3, k=1), _t(m, 3, k=2), _t(m, 3, k=3)

    def made_in_inner(x):
        def inner(y):
            z = m.zeros(3, dtype=m.float64)
            z[0] = x[0] * y[1]
            z[1] = x[1] * x[2]
            return (z * y).sum()

        return (F.grad(inner)(y0) * x).sum()

    def zeros_like_outer(x):
        def inner(y):
            z = m.zeros_like(x)
            z[0] = x[0] * y[1]
            z[1] = y[1] * y[2]
            return (z * x).sum()

        return F.grad(inner)(y0)

    def rhs_in_jvp(x):
        def rhs(y):
            dy = m.empty(3, dtype=m.float64)
            dy[0] = -x[0] * y[1]
            dy[1] = y[0] * y[2]
            dy[2] = x[2]
            return dy

        p, t = F.jvp(rhs, (x * 0.5,), (v,))
        return (p * t).sum()

    def slice_add(x):
        def inner(y):
            z = y * 1.0
            z[1:] += x[1:] * y[:2]
            return (z * z).sum()

        return F.grad(inner)(y0)

    return (
        F.grad(made_in_inner)(x0),
        F.vmap(zeros_like_outer)(xs),
        F.grad(rhs_in_jvp)(x0),
        F.jvp(slice_add, (x0,), (v,)),
    )


@_case()
def inplace_on_captured_refused(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        x = x * 1.0

        def inner(y):
            x.add_(y)
            return (x * y).sum()

        return (F.grad(inner)(y0) * x).sum()

    return F.grad(f)(x0)


@_case()
def register_hook_with_outer_value(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        def inner(y):
            y.register_hook(lambda g: g * x)
            return (y * y).sum()

        return (F.grad(inner)(y0) * x).sum()

    return F.grad(f)(x0)


# == 7. eager autograd and forward_ad around/inside func transforms ===========================
@_case()
def eager_backward_through_closures(m):
    F = m.func
    w = _t(m, 3).requires_grad_()
    y0, ys, v = _t(m, 3, k=1), _t(m, 4, 3, k=2), _t(m, 3, k=3)
    g = F.grad(lambda y: (w.sin() * y * y).sum())(y0)
    b = F.vmap(lambda y: (w.sin() * y * y).sum())(ys)
    p, t = F.jvp(lambda y: w.sin() * y * y, (y0,), (v,))
    g2, val = F.grad_and_value(lambda y: (w.sin() * w).sum())(y0)
    ((g * g).sum() + (b * b).sum() + (t * p).sum() + val + g2.sum()).backward()
    return g, b, t, val, w.grad


@_case()
def autograd_grad_batched_and_under_vmap(m):
    F = m.func
    w = _t(m, 3).requires_grad_()
    y = w.sin() * w
    cts, xs = _t(m, 4, 3, k=1), _t(m, 4, 3, k=2)
    return (
        m.autograd.grad(y, w, cts, is_grads_batched=True, retain_graph=True)[0],
        F.vmap(lambda c: m.autograd.grad(y, w, c, retain_graph=True)[0])(cts),
        F.vmap(lambda x: m.autograd.grad((w.sin() * x).sum(), w)[0])(xs),
    )


@_case()
def forward_ad_with_func_transforms(m):
    F, fw = m.func, m.autograd.forward_ad
    x0, v, y0, ys = _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2), _t(m, 4, 3, k=3)

    def in_grad(x):
        with fw.dual_level():
            d = fw.make_dual(x, v)
            return fw.unpack_dual((d.sin() * x).sum()).tangent

    with fw.dual_level():
        d = fw.make_dual(x0, v)
        out_v = fw.unpack_dual(F.vmap(lambda y: (d.sin() * y).sum())(ys))
        out_g = fw.unpack_dual(F.grad(lambda y: (d.sin() * y * y).sum())(y0))
        g, val = F.grad_and_value(lambda y: d.sin().sum())(y0)
        out_c = fw.unpack_dual(g), fw.unpack_dual(val)
        out_d = fw.unpack_dual(F.grad(lambda y: (y.sin() * y).sum())(d))
        res = [tuple(u) for u in (out_v, out_g, *out_c, out_d)]
    return F.grad(in_grad)(x0), res


@_case()
def functional_call_nested(m):
    F = m.func
    lin = m.nn.Linear(3, 2).double()
    with m.no_grad():
        lin.weight.copy_(_t(m, 2, 3))
        lin.bias.copy_(_t(m, 2, k=1))
    params = {k: v.detach() for k, v in lin.named_parameters()}
    X = _t(m, 5, 3, k=2)

    def loss(p, x):
        return F.functional_call(lin, p, (x,)).tanh().sum()

    def loss_x(x, p):
        return loss(p, x)

    return (
        F.vmap(F.grad(loss), in_dims=(None, 0))(params, X),
        F.vmap(F.hessian(loss_x), in_dims=(0, None))(X, params),
    )


# == 8. custom autograd.Function under nested transforms ======================================
@_case()
def function_reverse_nestings(m):
    F, x0, c0, xs, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 4, 3, k=2), _t(m, 3, k=3)
    return (
        F.grad(lambda c: (F.grad(lambda x: _f_all(m, x, c).sum())(x0) * c).sum())(c0),
        F.grad(lambda x: F.grad(lambda y: _f_all(m, y, x).sum())(x).sum())(x0),
        F.jvp(F.grad(lambda x: _f_all(m, x, c0).sum()), (x0,), (v,)),
        F.grad(lambda c: F.jvp(lambda x: _f_all(m, x, c), (x0,), (v,))[1].pow(2).sum())(c0),
        F.jacrev(lambda x, c: _f_all(m, x, c), argnums=(0, 1))(x0, c0),
        F.hessian(lambda x, c: _f_all(m, x, c).sum(), argnums=(0, 1))(x0, c0),
        F.grad(lambda c: F.vmap(lambda x: _f_all(m, x, c))(xs).sum())(c0),
        F.grad(lambda X: F.vmap(lambda x: _f_all(m, x, c0))(X).pow(2).sum())(xs),
    )


@_case()
def function_vmap_nestings(m):
    F, xs, c0, cs, v = m.func, _t(m, 4, 3), _t(m, 3, k=1), _t(m, 5, 3, k=2), _t(m, 3, k=3)

    def g(x):
        return F.vmap(lambda c: _f_all(m, x, c), in_dims=0, out_dims=-1)(cs)

    return (
        F.vmap(lambda x: _f_all(m, x, c0))(xs),
        F.vmap(lambda x, c: _f_all(m, x, c), in_dims=(0, 1))(xs, xs.t()),
        F.vmap(g, in_dims=-1, out_dims=1)(xs.t()),
        F.vmap(F.grad(lambda x: _f_all(m, x, c0).sum()))(xs),
        F.vmap(lambda c: F.grad(lambda x: _f_all(m, x, c).sum())(c0))(xs),
        F.vmap(lambda c: F.jvp(lambda x: _f_all(m, x, c), (c0,), (v,)))(xs),
        F.jvp(lambda c: F.vmap(lambda x: _f_all(m, x, c))(xs), (c0,), (v,)),
        F.vmap(lambda c: F.jacrev(lambda x: _f_all(m, x, c))(c0))(xs),
        F.vmap(lambda c: F.jacfwd(lambda x: _f_all(m, x, c))(c0))(xs),
        F.vmap(lambda c: F.hessian(lambda x: _f_all(m, x, c).sum())(c0))(xs),
    )


@_case()
def function_outer_only_inside_inner(m):
    F, x0, c0 = m.func, _t(m, 3), _t(m, 3, k=1)
    S = _fns(m)
    return (
        F.grad(lambda c: F.jacrev(lambda x: S["MySin"].apply(c) * 2)(x0).sum() + c.sum())(c0),
        F.grad(lambda c: (F.grad(lambda x: S["MyExp"].apply(c).sum())(x0) * c).sum())(c0),
    )


@_case()
def function_nondifferentiable_output(m):
    F, xs, vs, x0 = m.func, _t(m, 4, 3), _t(m, 4, 3, k=1), _t(m, 2, 3, k=2)
    S = _fns(m)
    return (
        F.vmap(F.grad(lambda x: S["MyMax"].apply(x)[0]))(xs),
        F.vmap(lambda x, v: F.jvp(S["MyMax"].apply, (x,), (v,)))(xs, vs),
        F.grad(lambda X: F.vmap(lambda x: S["MyMax"].apply(x)[0])(X).pow(2).sum())(xs),
        F.jacfwd(lambda x: S["MyMax"].apply(x)[0])(x0),
        F.jacrev(lambda x: S["MyMax"].apply(x)[0])(x0),
    )


@_case()
def function_vmap_rule_dims(m):
    F, xs, xss, c0, ks = m.func, _t(m, 3, 4), _t(m, 2, 3, 4, k=1), _t(m, 3, k=2), _t(m, 4, k=3)
    S = _fns(m)
    return (
        F.vmap(S["MyCube"].apply, in_dims=1)(xs),
        F.vmap(F.vmap(F.grad(lambda x: S["MyCube"].apply(x).sum()), in_dims=1))(xss),
        F.vmap(S["MyMulAdd"].apply, in_dims=(0, None))(xs.t(), c0),
        F.vmap(F.grad(F.grad(lambda x: S["MyScale"].apply(x.sin(), 3.0))))(ks),
        F.jvp(F.vmap(lambda x: S["MyScale"].apply(x, 1.5)), (xs,), (xs,)),
        F.vmap(F.vmap(F.grad(lambda x: S["MySin"].apply(x))))(xss),
        F.jvp(F.vmap(F.vmap(S["MySin"].apply)), (xss,), (xss,)),
    )


# == 9. error types ===========================================================================
@_case()
def err_grad_nonscalar_in_vmap(m):
    return m.func.vmap(m.func.grad(lambda x: x.sin()))(_t(m, 4, 3))


@_case()
def err_vjp_cotangent_shape_in_vmap(m):
    F = m.func
    return F.vmap(lambda c: F.vjp(lambda x: x.sin(), _t(m, 3))[1](c))(_t(m, 4, 2))


@_case()
def err_inner_vmap_out_dims_none_inner_batched(m):
    F = m.func
    return F.vmap(lambda x: F.vmap(lambda y: y * x, out_dims=None)(_t(m, 5, 3)))(_t(m, 4, 3))


@_case()
def err_item_under_vmap_in_grad(m):
    F = m.func
    return F.grad(lambda x: F.vmap(lambda a: a * a.sum().item())(_t(m, 3, 2)).sum() * x)(_t(m))


@_case()
def err_backward_inside_grad(m):
    return m.func.grad(lambda x: x.sum().backward())(_t(m, 3))


@_case()
def err_jvp_tangent_shape(m):
    return m.func.jvp(lambda x: x, (_t(m, 3),), (_t(m, 2),))


@_case()
def err_vmap_size_mismatch_nested(m):
    F = m.func
    return F.vmap(lambda x: F.vmap(lambda a, b: a + b)(_t(m, 3, 2), _t(m, 4, 2)) * x)(_t(m, 2))


# == 10. discrepancies found by this file, fixed (regression tests) =======================
@_case()
def fixed_grad_of_vmap_full_max(m):
    F, B, y0 = m.func, _t(m, 2, 3), _t(m, 3, k=1)
    return F.grad(lambda y: F.vmap(lambda z: (z * y).max())(B).sum())(y0)


@_case()
def fixed_grad_of_vmap_full_min(m):
    F, B = m.func, _t(m, 2, 3, 4)
    return F.grad(lambda X: F.vmap(lambda z: z.min())(X).pow(2).sum())(B)


@_case()
def fixed_vjp_of_vmap_full_median(m):
    F, B, ct = m.func, _t(m, 2, 3, 4), _t(m, 2, k=1)
    _, fn = F.vjp(F.vmap(lambda z: z.median() + z.nanmedian()), B)
    return fn(ct)


@_case()
def fixed_function_generated_rule_nontensor_arg_grad_of_vmap(m):
    F, xs = m.func, _t(m, 4, 3)
    S = _fns(m)
    return F.grad(lambda X: F.vmap(lambda x: S["MyScale"].apply(x, 1.5))(X).sum())(xs)


@_case()
def fixed_function_generated_rule_grad_of_vmap_vmap(m):
    F, xss = m.func, _t(m, 2, 3, 4)
    S = _fns(m)
    return F.grad(lambda X: F.vmap(F.vmap(S["MySin"].apply))(X).sum())(xss)


@_case()
def fixed_function_mix_with_scale_grad_of_vmap(m):
    F, xs, c0 = m.func, _t(m, 4, 3), _t(m, 3, k=1)
    return F.grad(lambda c: F.vmap(lambda x: _f_all(m, x, c, scale=True))(xs).sum())(c0)


@_case()
def fixed_contiguous_view_under_vmap(m):
    return m.func.vmap(lambda x: x.t().contiguous().view(-1))(_t(m, 2, 3, 4))


@_case()
def fixed_contiguous_view_under_grad_jvp(m):
    F, x0, v = m.func, _t(m, 3, 4), _t(m, 3, 4, k=1)
    return (
        F.grad(lambda x: x.transpose(0, 1).contiguous().view(2, 6).sum(0)[1])(x0),
        F.jvp(lambda x: x.t().contiguous().view(-1), (x0,), (v,)),
    )


@_case()
def fixed_err_vmap_out_dims_out_of_range(m):
    return m.func.vmap(lambda a: a, out_dims=3)(_t(m, 3, 2))


# == 11. known discrepancies (numbagrad lenient where PyTorch raises, metadata) ==
@_case(xfail="inner vmap returning an outer-level value with out_dims=None: torch ValueError")
def xf_err_inner_vmap_out_dims_none_outer_batched(m):
    F, xs, ys = m.func, _t(m, 4, 3), _t(m, 5, 3, k=1)
    return F.vmap(lambda x: F.vmap(lambda y: (x * 2, y * x), out_dims=(None, 1))(ys))(xs)


@_case(xfail="mutating an outer value with an outer value inside an inner grad: torch refuses")
def xf_err_inplace_outer_in_inner_grad(m):
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        z = x * 1.0

        def inner(y):
            z.mul_(x)
            return (z * y).sum()

        return (F.grad(inner)(y0) * z).sum()

    return F.grad(f)(x0)


@_case()
def err_requires_grad_inside_grad(m):
    def f(x):
        y = m.ones(3, dtype=m.float64).requires_grad_()
        return (x * y).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def err_jacfwd_aux_non_tensor(m):
    return m.func.jacfwd(lambda y: (y.sin(), (2, y.cos())), has_aux=True)(_t(m, 3))


@_case()
def err_jacrev_integer_output(m):
    return m.func.jacrev(lambda x: x.argmax())(_t(m, 3))


def _outer_value_metadata_in_inner(m, kind):
    """An outer grad's value made inside an inner grad/vjp/jvp reports requires_grad False
    and no grad_fn while the inner transform runs; returned from it, made before, after, or
    inside a vmap, it is tracked as usual. The gradient is the same either way."""
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)
    seen, keep = [], []

    def meta(name, v):
        seen.append([name, v.requires_grad, v.grad_fn is None, v.is_leaf])

    def f(x):
        def inner(y):
            z = x * 2
            keep.append(z)
            meta("z", z)
            meta("x", x)
            return (y * z).sum(), z

        if kind == "grad":
            r, z = F.grad(inner, has_aux=True)(y0)
        elif kind == "vjp":
            (r, z), _ = F.vjp(inner, y0)
        elif kind == "jvp":
            (r, z), _ = F.jvp(inner, (y0,), (y0,))
        else:
            r, z = F.vmap(inner, out_dims=(0, None))(y0[:, None].expand(3, 3).clone())
        meta("returned", z)
        meta("after", x * 2)
        return (r * x).sum() + z.sum()

    g = F.grad(f)(x0)
    return [g, seen]


@_case()
def inner_jvp_output_tracked_by_outer_grad_takes_hooks(m):
    F, seen = m.func, []

    def outer(x):
        out, t = F.jvp(lambda y: (y * x).sin(), (x,), (m.ones(2, dtype=m.float64),))
        seen.append([out.requires_grad, out.grad_fn is None])
        out.register_hook(lambda g: g * 100)
        return (out * t).sum()

    return [F.grad(outer)(_t(m, 2)), seen]


for _kind in ["grad", "vjp", "jvp", "vmap"]:
    CASES.register(
        f"metadata_of_outer_value_in_inner_{_kind}",
        lambda m, k=_kind: _outer_value_metadata_in_inner(m, k),
    )


@_case()
def grad_fn_inside_grad(m):
    seen = []

    def f(x):
        z = x * 2
        seen.append(z.grad_fn is None)
        return z.sum()

    m.func.grad(f)(_t(m, 3))
    return seen


@pytest.mark.parametrize(("case", "tol"), CASES.params())
def test_nested_matches_torch(case, tol):
    check(case, *tol)


# == where PyTorch is wrong: numbagrad against a reference ====================================
def _sin_jvp_jvp(m, via_function):
    F, x0, v = m.func, _t(m, 3), _t(m, 3, k=2)
    sin = _fns(m)["MySin"].apply if via_function else (lambda x: x.sin())
    return F.jvp(lambda x: F.jvp(sin, (x,), (v,))[1], (x0,), (v,))


def test_where_torch_is_wrong_function_jvp_of_jvp():
    # torch.func returns a zero second-order tangent through an autograd.Function's jvp
    want = to_np(_sin_jvp_jvp(torch, via_function=False))
    assert_same(to_np(_sin_jvp_jvp(numbagrad, via_function=True)), want)


def test_where_torch_is_wrong_linearize_inside_grad():
    # torch.func.linearize inside torch.func.grad returns uninitialised memory
    m = numbagrad
    F, x0, y0, v = m.func, _t(m, 3), _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        out, jfn = F.linearize(lambda y: y.sin() * x, y0)
        return (jfn(v) * out).sum()

    want = 2 * y0.cos() * y0.sin() * v * x0
    assert_same(to_np(F.grad(f)(x0)), to_np(want))


def test_where_torch_is_wrong_negative_out_dims_unbatched_output():
    # torch.vmap(out_dims=-1) of an output that does not depend on the mapped input returns
    # a (34359738369, 3) tensor; under grad, a gradient of 6.9e10
    m = numbagrad
    F, c, bs = m.func, _t(m, 3), _t(m, 3, 2, k=1)
    out = F.vmap(lambda y: c * 2, in_dims=-1, out_dims=-1)(bs)
    assert_same(to_np(out), to_np(2 * c[:, None].expand(3, 2)))
    g = F.grad(lambda x: F.vmap(lambda y: x * 2, in_dims=-1, out_dims=-1)(bs).sum())(c)
    assert_same(to_np(g), np.full(3, 4.0))


def test_where_torch_is_wrong_grad_of_hessian_through_prod_of_zeros():
    # torch gives NaN; f is identically 0 in x, so the gradient is 0
    m = numbagrad
    F, x0, y0 = m.func, _t(m, 3), _t(m, 3, k=1)

    def f(x):
        h = F.hessian(lambda y: m.stack([x - x, y.sin()], 1).prod(1).sum())(y0)
        return (h @ y0 * x).sum()

    assert_same(to_np(F.grad(f)(x0)), np.zeros(3))


def test_where_torch_is_wrong_vmap_of_jacfwd_det():
    # torch.vmap(torch.func.jacfwd(torch.linalg.det)) is wrong past the first batch element
    m = numbagrad
    F, As = m.func, _t(m, 2, 3, 3) + 3 * m.eye(3, dtype=m.float64)
    eye = m.eye(3, dtype=m.float64)
    loop = m.stack([F.jacfwd(m.linalg.det)(a) for a in As])
    assert_same(to_np(F.vmap(F.jacfwd(m.linalg.det))(As)), to_np(loop))
    loop = m.stack([F.jacfwd(lambda a: m.linalg.solve(a @ a.t() + eye, a[:, 0]))(a) for a in As])
    got = F.vmap(F.jacfwd(lambda a: m.linalg.solve(a @ a.t() + eye, a[:, 0])))(As)
    assert_same(to_np(got), to_np(loop))


# == a small deterministic generator of nested programs =======================================
_OPS = (
    lambda m, a, b: a * b,
    lambda m, a, b: a.sin() + b,
    lambda m, a, b: (a * 0.3).exp() * b,
    lambda m, a, b: m.tanh(a - b),
    lambda m, a, b: (a[:, None] * b[None, :]) @ a.cos(),
    lambda m, a, b: m.softmax(a * b, dim=-1),
    lambda m, a, b: a * b.norm(),
    lambda m, a, b: (a[:, None] * b[None, :]).sum(dim=0),
    lambda m, a, b: a - (a * b).mean(dim=-1, keepdim=True),
    lambda m, a, b: m.cat([a[:1] * b[1:2], a[1:] * b[:2]], dim=0),
    lambda m, a, b: m.stack([a, b.sin()], dim=1).prod(dim=1),
    lambda m, a, b: m.where(a > 0, a * b, b.exp()),
    lambda m, a, b: a.flip(0) * b,
    lambda m, a, b: (a.reshape(3, 1).expand(3, 2) * b[:2]).t().reshape(-1)[:3],
    lambda m, a, b: a[m.tensor([2, 0, 1])] * b,
    lambda m, a, b: m.cumsum(a * b, dim=0),
    lambda m, a, b: (a * a + 1.0).sqrt() * b,
    lambda m, a, b: a + m.logsumexp(b[None, :] * a[:, None], dim=1),
    lambda m, a, b: a / (b * b + 1.0),
    lambda m, a, b: (a * a + 0.5) ** b.tanh(),
    lambda m, a, b: m.clamp(a, min=-0.5, max=0.7) * b,
    lambda m, a, b: m.diagonal(m.outer(a, b) + m.outer(b, a)),
    lambda m, a, b: m.einsum("i,j,j->i", a, b, a),
    lambda m, a, b: a * (a[:, None] * b[None, :]).amax(0),
    lambda m, a, b: (a[:, None] * b[None, :] + 1.0).std(1),
    lambda m, a, b: (a * b).sort().values,
    lambda m, a, b: a.gather(0, m.tensor([1, 1, 0])) * b,
    lambda m, a, b: a * b.var(),
)
_KINDS = ("grad", "gv_aux", "jvp", "vjp", "vmap", "vmap_neg", "vmap_none", "jacrev", "jacfwd")


def _program(levels, seed):
    """A nest of ``levels`` transforms; each level's function mixes its own input with
    values captured from the outer levels (or only those), as ``_OPS`` picked by ``seed``."""
    rng = random.Random(seed)
    plan = [
        ([(rng.randrange(len(_OPS)), rng.random(), rng.random()) for _ in range(3)], rng.random())
        for _ in range(len(levels) + 1)
    ]
    picks = [[rng.random() for _ in range(3)] for _ in range(len(levels))]

    def run(m):
        F = m.func
        consts = [_t(m, 3, seed=seed, k=10 + i) for i in range(4)]
        tans = [_t(m, 3, seed=seed, k=20 + i) for i in range(4)]
        batch = [_t(m, 2, 3, seed=seed, k=30 + i) for i in range(4)]

        def body(depth, env):
            if depth == len(levels):
                acc = None
                for op, ra, rb in plan[depth][0][: 1 + int(plan[depth][1] * 3)]:
                    a = env[int(ra * len(env))] if acc is None else acc
                    acc = _OPS[op](m, a, env[int(rb * len(env))])
                return acc
            r1, r2, r3 = picks[depth]
            kind = levels[depth]
            inp = consts[depth] if r1 < 0.4 or not env else env[-1] * 0.5 + consts[depth]
            other = env[int(r2 * len(env))] if env and r2 >= 0.5 else tans[depth]

            def inner(y):
                return body(depth + 1, [*env, y])

            if kind == "grad":
                res = F.grad(lambda y: inner(y).sum())(inp)
            elif kind == "gv_aux":
                scale = env[0] if env else 1.0
                fa = lambda y: (inner(y).sum(), inner(y) * scale)  # noqa: E731
                g, (v, aux) = F.grad_and_value(fa, has_aux=True)(inp)
                res = g * v + aux
            elif kind == "jvp":
                p, t = F.jvp(inner, (inp,), (other,))
                res = p * t if r3 < 0.5 else t
            elif kind == "vjp":
                out, fn = F.vjp(inner, inp)
                res = fn(other)[0] + (out if r3 < 0.5 else 0.0)
            elif kind == "vmap":
                res = F.vmap(inner)(batch[depth] + (inp if r2 < 0.5 else 0.0)).sum(0)
            elif kind == "vmap_neg":
                # (+ 0 * y: torch mishandles out_dims=-1 of unbatched outputs, tested above)
                neg = F.vmap(lambda y: inner(y) + 0 * y, in_dims=-1, out_dims=-1)
                res = neg((batch[depth] + inp).t()).sum(-1)
            elif kind == "vmap_none":
                res = F.vmap(lambda b, y: inner(y * b), in_dims=(0, None))(batch[depth], inp)
                res = res.mean(0)
            elif kind == "jacrev":
                res = F.jacrev(inner)(inp) @ tans[depth]
            else:
                res = tans[depth] @ F.jacfwd(inner)(inp)
            if env and r3 < 0.7:
                res = res * env[int(r3 * 10) % len(env)]
            return res

        return body(0, [])

    return run


# programs on which torch.func itself fails ("modified by an inplace operation" in its own
# backward of a masked_fill under vjp(jacfwd(grad)))
_TORCH_FAILS = {123}


def _programs(n):
    out = []
    for seed in range(n):
        if seed in _TORCH_FAILS:
            continue
        rng = random.Random(7 * seed + 1)
        levels = tuple(rng.choice(_KINDS) for _ in range(rng.randint(1, 3)))
        if sum(k in ("jacrev", "jacfwd") for k in levels) > 2:
            continue
        out.append(pytest.param(levels, seed, id=f"{seed}-{'-'.join(levels)}"))
    return out


@pytest.mark.parametrize(("levels", "seed"), _programs(150))
def test_random_nesting(levels, seed):
    check(_program(levels, seed))


# -- in-place ops under no_grad inside vmap inside grad (the history stays at every level) --
_NO_GRAD_INPLACE = {
    "mul_": lambda v, m: v.mul_(1.5),
    "add_": lambda v, m: v.add_(0.3),
    "copy_ of a constant": lambda v, m: v.copy_(m.tensor(2.0, dtype=m.float64)),
    "fill_": lambda v, m: v.fill_(2.0),
    "clamp_": lambda v, m: v.clamp_(-0.5, 0.5),
    "setitem": lambda v, m: v.__setitem__(0, 3.0),
}


def _no_grad_inplace(m, op, vmaps):
    def f(x):
        v = x.clone()
        with m.no_grad():
            op(v, m)
        return v * x * x

    for _ in range(vmaps):
        f = m.func.vmap(f)
    return f


@pytest.mark.parametrize("name", list(_NO_GRAD_INPLACE))
def test_no_grad_inplace_under_vmap_keeps_the_outer_history(name):
    """``v = x.clone(); with no_grad(): v.mul_(1.5)`` inside ``vmap`` inside ``grad``:
    ``v`` keeps its history at the ``grad`` level (it was a silent zero gradient), to
    second order and through two vmaps."""
    op = _NO_GRAD_INPLACE[name]
    xa = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    shape = (2, 3)
    for vmaps in (1,) if name == "setitem" else (1, 2):  # (two: 0-d examples, no index)
        res = []
        for m in (numbagrad, torch):
            f = _no_grad_inplace(m, op, vmaps)
            g1 = m.func.grad(lambda x, f=f: f(x).sum())(m.tensor(xa.reshape(shape)))

            def scalar(s, m=m, f=f):
                return f(s * m.tensor(xa.reshape(shape))).pow(2).sum()

            g2 = m.func.grad(m.func.grad(scalar))(m.tensor(0.7, dtype=m.float64))
            res.append((to_np(g1), to_np(g2)))
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- layer_norm's second derivatives in every composition -------------------------------------
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,nd", [((3,), 1), ((2, 3), 1), ((2, 2, 3), 2)])
def test_layer_norm_second_derivatives_agree_in_every_composition(affine, shape, nd):
    """``jacfwd``/``jacrev`` of ``jacfwd``/``jacrev`` of ``layer_norm``: the rules summed
    the cotangent's and tangent's dims counted from ``x``'s rank, wrong when they have the
    basis's extra leading dims (18 of 27 entries were zero). Reference: PyTorch's
    ``jacrev(jacrev)``; its forward-over-forward of ``layer_norm`` is itself wrong (not
    symmetric in the two derivatives), so each of numbagrad's four compositions is checked
    against the reverse-over-reverse one and for symmetry."""
    rng = np.random.default_rng(7)
    xv = rng.standard_normal(shape)
    norm = shape[-nd:]
    w = rng.standard_normal(norm) if affine else None
    b = rng.standard_normal(norm) if affine else None

    def ln(m):
        wt = None if w is None else m.tensor(w)
        bt = None if b is None else m.tensor(b)
        return lambda x: m.nn.functional.layer_norm(x, norm, wt, bt)

    ref = to_np(torch.func.jacrev(torch.func.jacrev(ln(torch)))(torch.tensor(xv)))
    n = xv.size
    sym = ref.reshape(-1, n, n)
    np.testing.assert_allclose(sym, sym.transpose(0, 2, 1), atol=1e-12)
    for outer in ("jacfwd", "jacrev"):
        for inner in ("jacfwd", "jacrev"):
            got = getattr(numbagrad.func, outer)(getattr(numbagrad.func, inner)(ln(numbagrad)))
            np.testing.assert_allclose(
                to_np(got(numbagrad.tensor(xv))), ref, rtol=1e-10, atol=1e-12, err_msg=outer + inner
            )
