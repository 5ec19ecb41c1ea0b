"""The transforms composed with each other, with custom Functions and with eager autograd;
forward_ad's API; PyTorch's errors."""

import numpy as np
import pytest

import numbagrad
import numbagrad.autograd.forward_ad as fwAD
from numbagrad.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

f64 = numbagrad.float64


def t(values):
    return numbagrad.tensor(np.asarray(values, dtype=np.float64))


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(
        np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), rtol=tol, atol=tol
    )


def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


# -- composition ---------------------------------------------------------------------------
def test_grad_of_grad_and_jvp_of_grad_agree():
    x = t([0.3, -1.2, 2.0])
    v = t([1.0, 0.5, -2.0])
    g = grad(lambda x: (x.sin() * x).sum())
    _, fwd_rev = jvp(g, (x,), (v,))
    h = hessian(lambda x: (x.sin() * x).sum())(x)
    close(fwd_rev, h @ v)
    rev_rev = grad(lambda x: (g(x) * v).sum())(x)
    close(fwd_rev, rev_rev)


def test_inner_grad_of_an_outer_value_is_zero():
    # the inner grad's output depends on y only through the outer level: to the inner
    # level it is a constant, so its gradient is 0 (PyTorch: tensor([0., 0.])), and the
    # outer derivative of 0 * x is 0; walking the outer tape from the inner backward gave 2x
    x0, y0 = t([1.0, 2.0]), t([3.0, 4.0])
    inner = grad(lambda y: (numbagrad.ones_like(y) * 0).sum() + (x0 * x0).sum())
    close(inner(y0), t([0.0, 0.0]))
    out = grad(lambda x: (grad(lambda y: (x * x).sum())(y0) * x).sum())(x0)
    close(out, t([0.0, 0.0]))
    _, fn = vjp(lambda y: (y * 0).sum() + (x0 * x0).sum(), y0)
    close(fn(t(1.0))[0], t([0.0, 0.0]))


def test_grad_of_jvp_vmap_of_vmap_vmap_of_jvp():
    x = t([0.3, -1.2, 2.0])
    # d/dx of the directional derivative along ones of sum(x^3) = 6x
    close(grad(lambda x: jvp(lambda y: (y**3).sum(), (x,), (numbagrad.ones_like(x),))[1])(x), 6 * x)
    m = t(np.arange(6.0).reshape(2, 3))
    close(vmap(vmap(lambda a: a.exp()))(m), m.exp())
    close(vmap(lambda a: jvp(lambda y: y.sin(), (a,), (numbagrad.ones_like(a),))[1])(m), m.cos())


def test_jacrev_equals_jacfwd_and_hessian_equals_jacfwd_jacrev():
    x = t(np.linspace(-1, 1, 6))
    f = rosen
    close(jacrev(f)(x), jacfwd(f)(x))
    close(hessian(f)(x), jacfwd(jacrev(f))(x))
    close(hessian(f)(x), jacrev(jacrev(f))(x), 1e-8)


def test_per_example_gradients_and_grad_of_vmap():
    rng = np.random.default_rng(0)
    w = t(rng.standard_normal(3))
    xs = t(rng.standard_normal((5, 3)))
    ys = t(rng.standard_normal(5))

    def loss(w, x, y):
        return ((x * w).sum() - y) ** 2

    per = vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    for i in range(5):
        close(per[i], grad(loss)(w, xs[i], ys[i]))
    total = grad(lambda w: vmap(loss, in_dims=(None, 0, 0))(w, xs, ys).sum())(w)
    close(total, per.sum(0))


def test_no_perturbation_confusion():
    c = t(3.0)
    x = t(2.0)
    # d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x
    close(grad(lambda x: x * grad(lambda y: x * y)(c))(x), 2 * x)
    _, tan = jvp(lambda x: x * jvp(lambda y: x * y, (c,), (t(1.0),))[1], (x,), (t(1.0),))
    close(tan, 2 * x)


def test_eager_leaf_captured_by_transform_still_backwards():
    w = numbagrad.tensor([1.0, 2.0], dtype=f64, requires_grad=True)
    x = t([3.0, 4.0])
    g = grad(lambda x: (w * x * x).sum())(x)  # 2 w x, still a function of w
    close(g, 2 * w.detach() * x)
    g.sum().backward()
    close(w.grad, 2 * x)


def test_escaped_values():
    """A grad value kept past the transform is a constant with its value (as PyTorch's,
    the UX limitations page's global intermediate); a batched one, or one whose value
    belongs to a live outer transform, raises naming the transform."""
    leak = []

    def f(x):
        leak.append(x * 2)
        return x.sum()

    grad(f)(t([1.0, 2.0]))
    close(leak[0] + 1, t([3.0, 5.0]))
    assert not leak[0].requires_grad and repr(leak[0]) == repr(t([2.0, 4.0]))
    vmap(lambda x: leak.append(x) or x)(t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"numbagrad\.vmap"):
        leak[1].exp()

    def outer(x):
        grad(lambda y: leak.append(x * y) or (x * y).sum())(x)
        return (leak[2] * x).sum()

    with pytest.raises(RuntimeError, match=r"numbagrad\.func\.grad"):
        grad(outer)(t([1.0, 2.0]))
    kept = {}

    def g(x):
        kept["y"] = y = x.exp()
        kept["v"] = y[1:]
        return y.sum()

    grad(g)(t([0.0, 1.0]))
    with pytest.raises(NotImplementedError, match="clone"):
        kept["y"].add_(1)  # (its view could not follow: refused before anything changes)
    close(kept["y"], t([0.0, 1.0]).exp())


def test_data_dependent_python_under_grad_but_not_vmap():
    def f(x):
        return x.sin() if x.sum() > 0 else x.cos()

    close(grad(lambda x: f(x).sum())(t([0.5])), t([0.5]).cos())
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(f)(t([0.5, 1.0]))
    with pytest.raises(RuntimeError, match=r"\.item\(\)"):
        vmap(lambda x: x.item())(t([0.5, 1.0]))


def test_no_grad_inside_grad_stops_recording_outer_does_not():
    x = t([1.0, 2.0])

    def f(x):
        with numbagrad.no_grad():
            c = x * 3
        return (c * x).sum()

    close(grad(f)(x), 3 * x)
    with numbagrad.no_grad():
        close(grad(lambda x: (x * x).sum())(x), 2 * x)


# -- errors ----------------------------------------------------------------------------------
def test_grad_errors_match_pytorch():
    with pytest.raises(RuntimeError, match=r"Expected f\(\*args\) to return a scalar Tensor"):
        grad(lambda x: x * 2)(t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"Got argnums=2, but only 2 positional inputs"):
        grad(lambda a, b: a.sum(), argnums=2)(t([1.0]), t([1.0]))
    with pytest.raises(RuntimeError, match=r"only Tensors of floating point dtype"):
        grad(lambda a: a.sum())(numbagrad.tensor([1, 2]))


def test_vmap_errors_match_pytorch():
    x = t([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda a, b: a + b)(x, t([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="in_dim=3"):
        vmap(lambda a: a, in_dims=3)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 1)(x)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor"):
        vmap(lambda a, n: a, in_dims=(0, 0))(x, 3)
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        vmap(lambda a, b: a, in_dims=(0,))(x, x)


def test_vmap_in_out_dims_and_structures():
    x = t(np.arange(6.0).reshape(2, 3))
    close(vmap(lambda a: a * 2, in_dims=1)(x), (x * 2).T)
    close(vmap(lambda a: a * 2, in_dims=-1, out_dims=1)(x), x * 2)
    out = vmap(lambda d: {"s": d["a"] + d["b"], "p": (d["a"] * 2,)})({"a": x, "b": x})
    close(out["s"], 2 * x)
    close(out["p"][0], 2 * x)
    y = vmap(lambda a, c: a * c, in_dims=(0, None))(x, t([1.0, 2.0, 3.0]))
    close(y, x * t([1.0, 2.0, 3.0]))
    close(vmap(lambda a: t(1.0) + 0 * a.sum(), out_dims=0)(x), t([1.0, 1.0]))
    close(vmap(lambda a: a.exp(), chunk_size=1)(x), x.exp())


def test_jvp_and_vjp_structures():
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    _, tan = jvp(lambda a, b: (a * b, a + b), (x, y), (t([1.0, 0.0]), t([0.0, 1.0])))
    close(tan[0], t([3.0, 2.0]))
    close(tan[1], t([1.0, 1.0]))
    _out, fn = vjp(lambda a, b: a * b, x, y)
    gx, gy = fn(t([1.0, 1.0]))
    close(gx, y)
    close(gy, x)
    with pytest.raises(RuntimeError, match="same python structure"):
        jvp(lambda a: a, (x,), (x, y))


def test_jvp_checks_tangents_as_pytorch():
    x = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64)
    # a float tangent of another precision is accepted (PyTorch's too), cast to the primal's
    _out, tan = jvp(numbagrad.sin, (x,), (numbagrad.tensor([1.0, 0.5], dtype=numbagrad.float32),))
    assert tan.dtype is numbagrad.float64
    close(tan, numbagrad.cos(x) * numbagrad.tensor([1.0, 0.5], dtype=numbagrad.float64))
    with pytest.raises(ValueError, match="Expected tangent to be floating point"):
        jvp(numbagrad.sin, (x,), (numbagrad.tensor([1, 1]),))
    with pytest.raises(ValueError, match="Expected primal to be floating point"):
        jvp(lambda a: a * 2, (numbagrad.tensor([1, 2]),), (t([1.0, 1.0]),))
    with pytest.raises(RuntimeError, match="same shape"):
        jvp(numbagrad.sin, (x,), (numbagrad.ones(3, dtype=numbagrad.float64),))


# -- forward_ad ------------------------------------------------------------------------------
def test_forward_ad_api():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t([1.0, 0.0]))
        y = (d * d).sin()
        p, tg = fwAD.unpack_dual(y)
        close(p, (x * x).sin())
        close(tg, (x * x).cos() * 2 * x * t([1.0, 0.0]))
        assert fwAD.unpack_dual(x).tangent is None
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, t([1.0]))
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()
    assert fwAD.unpack_dual(y).tangent is None
    close(y + 0, (x * x).sin())  # a dual is a plain tensor once its level closed


def test_forward_ad_and_backward_on_the_same_graph():
    a = numbagrad.tensor([1.0, 2.0], dtype=f64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(a, t([1.0, 1.0]))
        y = (d.exp() * 2).sum()
        close(fwAD.unpack_dual(y).tangent, (a.detach().exp() * 2).sum())
        y.backward()
    close(a.grad, 2 * a.detach().exp())


def test_forward_over_reverse_in_a_dual_level_gives_the_hvp():
    # PyTorch's eager Hessian-vector product: the gradient of a dual input, taken with
    # create_graph=True inside the level, carries H @ v as its tangent
    rng = np.random.default_rng(3)
    W = t(rng.standard_normal((3, 4)))
    x, v = t(rng.standard_normal(4)), t(rng.standard_normal(4))

    def f(z):
        return (numbagrad.tanh(W @ z).softmax(0) * z[:3]).sum() + (z**3).sum() + z.exp().prod()

    with fwAD.dual_level():
        xd = fwAD.make_dual(x.clone().requires_grad_(True), v)
        (g,) = numbagrad.autograd.grad(f(xd), xd, create_graph=True)
        gp, hvp = fwAD.unpack_dual(g)
        (g1,) = numbagrad.autograd.grad(f(xd), xd)  # first order: no tangent needed
    close(gp, grad(f)(x))
    close(g1, grad(f)(x))
    close(hvp, hessian(f)(x) @ v)
    # the graph built inside outlives the level: its saved duals are their primals again
    xr = x.clone().requires_grad_(True)
    with fwAD.dual_level():
        xd = fwAD.make_dual(xr, v)
        y = f(xd)
    (g2,) = numbagrad.autograd.grad(y, xr, create_graph=True)
    assert fwAD.unpack_dual(g2).tangent is None
    close(g2, grad(f)(x))
    (h2,) = numbagrad.autograd.grad((g2 * v).sum(), xr)
    close(h2, hessian(f)(x) @ v)


# -- custom Functions ------------------------------------------------------------------------
class Cube(numbagrad.autograd.Function):
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
        return 3 * x**2 * g

    @staticmethod
    def jvp(ctx, tx):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * tx

    @staticmethod
    def vmap(info, in_dims, x):
        return Cube.apply(x), in_dims[0]


class Combined(numbagrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_function_under_every_transform():
    x = t([0.5, -1.0, 2.0])
    close(grad(lambda x: Cube.apply(x).sum())(x), 3 * x**2)
    close(
        grad(grad(lambda x: Cube.apply(x).sum()))(t(0.7))
        if False
        else grad(lambda y: grad(lambda x: Cube.apply(x))(y))(t(0.7)),
        t(6 * 0.7),
    )
    close(jvp(Cube.apply, (x,), (numbagrad.ones_like(x),))[1], 3 * x**2)
    close(vmap(Cube.apply)(x), x**3)
    close(
        jacrev(Cube.apply)(x),
        numbagrad.diag(3 * x**2) if hasattr(numbagrad, "diag") else jacfwd(Cube.apply)(x),
    )
    close(jacfwd(Cube.apply)(x), jacrev(Cube.apply)(x))
    close(hessian(lambda x: Cube.apply(x).sum())(x), jacfwd(jacrev(lambda x: (x**3).sum()))(x))


def test_combined_style_needs_setup_context_under_func():
    with pytest.raises(RuntimeError, match="setup_context"):
        grad(lambda x: Combined.apply(x).sum())(t([1.0]))
    with pytest.raises(RuntimeError, match="setup_context"):
        vjp(Combined.apply, t([1.0]))


def test_function_vmap_rules_checked():
    class Both(Cube):
        generate_vmap_rule = True

    class Neither(numbagrad.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

    class Bad(Cube):
        @staticmethod
        def vmap(info, in_dims, x):
            return Cube.apply(x)

    x = t([[1.0, 2.0]])
    with pytest.raises(RuntimeError, match="has both generate_vmap_rule=True and an overridden"):
        vmap(Both.apply)(x)
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        vmap(Neither.apply)(x)
    with pytest.raises(RuntimeError, match="tuple \\(output, out_dims\\)"):
        vmap(Bad.apply)(x)
    calls = []

    class Spy(Cube):
        @staticmethod
        def vmap(info, in_dims, x):
            calls.append(info.batch_size)
            return Cube.apply(x), in_dims[0]

    vmap(lambda a, b: Spy.apply(b) + a, in_dims=(0, None))(x, t([1.0, 2.0]))
    assert calls == []  # not called when no input of the Function is batched


def test_function_jvp_checks():
    class NoJvp(numbagrad.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class WrongShape(NoJvp):
        @staticmethod
        def jvp(ctx, tx):
            return tx.sum()

    x = t([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="jvp"):
        jvp(NoJvp.apply, (x,), (x,))
    with pytest.raises(RuntimeError, match="shape"):
        jvp(WrongShape.apply, (x,), (x,))


def test_once_differentiable_under_func_grad():
    from numbagrad.autograd.function import once_differentiable

    class Sq(numbagrad.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = t(1.5)
    close(grad(Sq.apply)(x), 2 * x)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        grad(grad(Sq.apply))(x)


def test_vmap_randomness():
    x = numbagrad.ones(4, 2)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + numbagrad.randn(2))(x)
    same = vmap(lambda a: a + numbagrad.randn(2), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0])
    diff = vmap(lambda a: a + numbagrad.rand(2), randomness="different")(x)
    assert not np.allclose(diff.numpy(), diff.numpy()[0])
    assert tuple(diff.shape) == (4, 2)


def test_vmap_randomness_per_level_and_of_tensors():
    x = numbagrad.zeros(3, 4)
    # nested 'different': every (outer, inner) element draws its own
    both = vmap(
        vmap(lambda a: a + numbagrad.rand(()), randomness="different"), randomness="different"
    )
    r = both(x).numpy()
    assert len(np.unique(r)) == r.size
    # outer 'same': the rows repeat, the inner elements still differ
    r = vmap(vmap(lambda a: a + numbagrad.rand(()), randomness="different"), randomness="same")(x)
    r = r.numpy()
    assert np.array_equal(r, np.broadcast_to(r[0], r.shape)) and len(np.unique(r[0])) == 4
    with pytest.raises(RuntimeError, match="randomness error mode"):  # any level's 'error'
        vmap(vmap(lambda a: a + numbagrad.rand(()), randomness="same"))(x)
    # ops of tensors: a batched probability, an unbatched one drawn per element
    p = numbagrad.full((6, 200), 0.5)
    r = vmap(numbagrad.bernoulli, randomness="different")(p).numpy()
    assert r.shape == (6, 200) and not np.array_equal(r[0], r[1])
    r = vmap(lambda a: a + numbagrad.bernoulli(p[0]), randomness="different")(
        numbagrad.zeros(6, 200)
    )
    assert not np.array_equal(r.numpy()[0], r.numpy()[1])
    with pytest.raises(RuntimeError, match="same randomness with a batched tensor input"):
        vmap(numbagrad.bernoulli, randomness="same")(p)
    w = numbagrad.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    idx = vmap(lambda v: numbagrad.multinomial(v, 2, replacement=True), randomness="different")
    assert idx(numbagrad.stack([w, w.flip(0)])).tolist() == [[[1, 1], [0, 0]], [[0, 0], [1, 1]]]
    # in-place fills: 'different' needs the filled tensor batched
    r = vmap(lambda a: a.clone().normal_(), randomness="different")(x).numpy()
    assert not np.allclose(r[0], r[1])
    r = vmap(lambda a: a.clone().uniform_(), randomness="same")(x).numpy()
    assert np.array_equal(r, np.broadcast_to(r[0], r.shape))
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        vmap(lambda a: numbagrad.zeros(4).normal_() + a, randomness="different")(x)
    # the draws are constants to the other transforms
    g = grad(lambda v: (v * numbagrad.bernoulli(numbagrad.full((3,), 0.5))).sum())(t([1.0] * 3))
    assert set(g.tolist()) <= {0.0, 1.0}


def test_vmap_inplace_on_an_input_writes_through():
    x = numbagrad.arange(12.0).reshape(4, 3)
    out = vmap(lambda a: a.mul_(2))(x)
    _near(x, np.arange(12.0).reshape(4, 3) * 2)
    _near(out, x.numpy())
    y = numbagrad.arange(12.0).reshape(4, 3)
    vmap(lambda a: a[0].add_(100), in_dims=1, chunk_size=2)(y)  # a column per element
    want = np.arange(12.0).reshape(4, 3)
    want[0] += 100
    _near(y, want)


def test_vjp_fn_retain_and_create_graph():
    x = t([1.0, 2.0]).requires_grad_()
    _out, fn = numbagrad.func.vjp(lambda v: (v**3).sum(), x)
    (g,) = fn(t(1.0))
    assert g.requires_grad  # create_graph defaults to grad mode: differentiable further
    (g2,) = fn(t(1.0), create_graph=False)
    assert not g2.requires_grad
    _near(g2, 3 * x.detach().numpy() ** 2)
    fn(None, retain_graph=False)  # None: the implicit 1 of a scalar output
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        fn(t(1.0))
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        numbagrad.func.vjp(lambda v: v * 2, x)[1]((x,))
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        numbagrad.func.vjp(lambda v: v * 2, x)[1](None)


def test_inplace_under_transforms():
    x = t([1.0, 2.0, 3.0])

    def f(x):
        y = x.clone()
        y.mul_(x)
        y[0] = 5.0
        return y.sum()

    close(grad(f)(x), t([0.0, 4.0, 6.0]))

    def through_t(a):
        b = a.clone()
        b.T.add_(numbagrad.arange(3.0))
        return b

    a = numbagrad.tensor(np.arange(18.0).reshape(2, 3, 3))
    close(vmap(through_t)(a), numbagrad.stack([through_t(e) for e in a]))
    # a reshape is a view or a copy by the memory layout, which a batched value has not
    with pytest.raises(NotImplementedError, match=r"view \(reshape\) .* not supported"):
        vmap(lambda a: a.clone().reshape(9).add_(1))(numbagrad.ones(2, 3, 3))
    buf = numbagrad.zeros(3)
    with pytest.raises(RuntimeError, match="batched value into a tensor that is not batched"):
        vmap(lambda a: buf.add_(a))(numbagrad.ones(2, 3))


def _near(a, b):
    np.testing.assert_allclose(a.detach().numpy(), np.asarray(b), rtol=1e-10, atol=1e-12)


def _robertson(y):
    """An ODE right-hand side that fills a buffer it creates (NOTE [In-place writes under
    transforms])."""
    dy = numbagrad.empty(3, dtype=y.dtype)
    dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2]
    dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2
    dy[2] = 3e7 * y[1] ** 2
    return dy


def _robertson_jacobian(y):
    _, b, c = (float(v) for v in y)
    return np.array(
        [[-0.04, 1e4 * c, 1e4 * b], [0.04, -1e4 * c - 6e7 * b, -1e4 * b], [0.0, 6e7 * b, 0.0]]
    )


def test_filling_a_tensor_made_inside_the_function():
    y = t([1.0, 1e-4, 1e-3])
    want = _robertson_jacobian(y)
    for jac in (jacrev, jacfwd):
        _near(jac(_robertson)(y), want)
    _near(numbagrad.autograd.functional.jacobian(_robertson, y), want)
    # second order: d2(dy1)/dy2 through the filled buffer
    _near(hessian(lambda v: _robertson(v)[1])(y), [[0, 0, 0], [0, -6e7, -1e4], [0, -1e4, 0]])
    # under a vmap around the transform, each example's Jacobian
    ys = numbagrad.stack([y, 2 * y])
    _near(vmap(jacrev(_robertson))(ys), np.stack([want, _robertson_jacobian(2 * y)]))
    # a clone of a captured tensor is made inside: it may be filled; the captured one is not
    # touched
    c = t([1.0, 2.0, 3.0])

    def f(x):
        b = c.clone()
        b.mul_(x)
        b[0] = b[0] * x[1]
        return b

    _near(jacrev(f)(y), [[1e-4, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    _near(c, [1.0, 2.0, 3.0])
    # the values the ops recorded keep the old contents (mul_ saved b before it changed)
    _near(grad(lambda x: f(x).sum())(y), [1e-4 + 0.0, 1.0 + 2.0, 3.0])


def test_filling_tensors_the_transform_may_not_take():
    y = t([1.0, 2.0, 3.0])
    c = t([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
        jacrev(lambda x: c.mul_(x))(y)
    _near(c, [1.0, 2.0, 3.0])

    def into_view(x):
        b = numbagrad.zeros(2, 3, dtype=x.dtype)
        b[0][1] = x[0]  # b[0] is a view
        return b

    def with_view(x):
        b = numbagrad.zeros(3, dtype=x.dtype)
        v = b[:2]
        b[0] = x[0]
        return b + v.sum()

    want = np.zeros((2, 3, 3))
    want[0, 1, 0] = 1.0
    _near(jacrev(into_view)(y), want)  # b[0] (a slice made inside) writes through to b
    with pytest.raises(NotImplementedError, match="shares its memory"):
        jacrev(with_view)(y)

    def leaf(x):
        b = numbagrad.zeros(3, dtype=x.dtype, requires_grad=True)
        b[0] = x[0]
        return b

    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        jacrev(leaf)(y)
    w = t([1.0, 1.0, 1.0]).requires_grad_()

    def in_eager_graph(x):
        b = w * 2
        b[0] = x[0]
        return b

    with pytest.raises(NotImplementedError, match="eager autograd graph"):
        jacrev(in_eager_graph)(y)


def test_forward_ad_writes_a_dual_into_a_plain_tensor():
    with fwAD.dual_level():
        z = fwAD.make_dual(t([1.0, 2.0]), t([1.0, 1.0]))
        buf = numbagrad.zeros(2, dtype=numbagrad.float64)
        buf.add_(z * 2)
        buf.mul_(z)
        p, tan = fwAD.unpack_dual(buf)
        _near(p, [2.0, 8.0])
        _near(tan, [4.0, 8.0])  # d(2 z^2) = 4 z dz
    assert fwAD.unpack_dual(buf).tangent is None  # a plain tensor once the level closed
    _near(buf, [2.0, 8.0])
    assert repr(buf) == repr(t([2.0, 8.0]))


def test_functional_strict_mode_raises_for_independent_inputs():
    F = numbagrad.autograd.functional
    x, y = t([1.0, 2.0]), t([3.0, 4.0])

    def f(a, b):
        return (a * a).sum()

    for call in (
        lambda s: F.hessian(f, (x, y), strict=s),
        lambda s: F.hvp(f, (x, y), (x, y), strict=s),
        lambda s: F.vhp(f, (x, y), (x, y), strict=s),
        lambda s: F.vjp(f, (x, y), strict=s),
        lambda s: F.jacobian(f, (x, y), strict=s),
    ):
        call(False)
        with pytest.raises(RuntimeError, match=r"independent of input 1|input 1 is independent"):
            call(True)


_INDEX_OPS = {
    "index_select": lambda x, i: numbagrad.index_select(x, 0, i),
    "gather": lambda x, i: numbagrad.gather(x, 0, i),
    "take_along_dim": lambda x, i: numbagrad.take_along_dim(x, i, 0),
    "scatter_add": lambda x, i: numbagrad.scatter_add(x, 0, i, numbagrad.ones(1, dtype=x.dtype)),
}


@pytest.mark.parametrize("name", list(_INDEX_OPS))
@pytest.mark.parametrize("bad", [-1, 5])
def test_vmap_over_batched_indices_checks_their_bounds(name, bad):
    # a batched index has no values when the op is called: the check runs when vmap's
    # rule reaches the arrays, and a negative index is refused as in eager mode (PyTorch);
    # take_along_dim wraps [-size, 0), as PyTorch's, so its bad negative index is below
    op = _INDEX_OPS[name]
    if name == "take_along_dim" and bad < 0:
        bad = -6
    x = numbagrad.arange(5.0)
    idx = numbagrad.tensor([[0], [bad]])
    with pytest.raises(IndexError, match="out of bounds"):
        numbagrad.vmap(lambda i: op(x, i))(idx)
    with pytest.raises(RuntimeError, match="out of bounds"):  # PyTorch raises RuntimeError
        numbagrad.vmap(lambda i: op(x, i))(idx)
    good = numbagrad.tensor([[0], [4]])
    loop = numbagrad.stack([op(x, i) for i in good])
    assert numbagrad.equal(numbagrad.vmap(lambda i: op(x, i))(good), loop)


# -- memory ----------------------------------------------------------------------------------
def test_grad_frees_what_no_output_reaches():
    # the tape does not keep a dead branch alive: its values go as soon as the function
    # drops them, as PyTorch's graph frees an unused subgraph
    import weakref

    freed = []

    def f(x):
        junk = (x * 2).exp()  # never used by the output
        ref = weakref.ref(junk._val)
        del junk
        freed.append(ref() is None)
        return (x * x).sum()

    close(grad(f)(t([1.0, 2.0])), t([2.0, 4.0]))
    assert freed == [True]


class _ExpVmap(numbagrad.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved_tensors[0]

    @staticmethod
    def jvp(ctx, t):
        return t * ctx.saved_tensors[0]


_W = numbagrad.randn(3, dtype=f64)
_X = numbagrad.randn(5, 3, dtype=f64)


def _loss(w, x):
    return (x @ w).tanh().sum()


@pytest.mark.parametrize(
    "run",
    [
        lambda: grad(_loss)(_W, _X),
        lambda: vmap(grad(_loss), in_dims=(None, 0))(_W, {"a": _X}["a"]),
        lambda: vmap(lambda d: d["x"] * 2, in_dims=({"x": 0},))({"x": _X}),
        lambda: jacrev(lambda w: (_X @ w).tanh())(_W),
        lambda: jacfwd(lambda w: (_X @ w).tanh())(_W),
        lambda: hessian(_loss)(_W, _X),
        lambda: vmap(_ExpVmap.apply)(_X),
        lambda: vmap(grad(lambda x: _ExpVmap.apply(x).sum()))(_X),
        lambda: jvp(vmap(_ExpVmap.apply), (_X,), (_X,)),
    ],
    ids=[
        "grad",
        "vmap-grad",
        "vmap-dict",
        "jacrev",
        "jacfwd",
        "hessian",
        "fn-vmap",
        "vmap-grad-fn",
        "jvp-vmap-fn",
    ],
)
def test_transforms_leave_no_reference_cycles(run):
    # values held in a cycle (a self-calling closure, a class made per call) live until
    # the cyclic GC runs: memory held past the call, and slower calls with GC off
    import gc

    run()
    run()
    gc.collect()
    gc.disable()
    try:
        run()
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_generated_vmap_rule_does_not_keep_a_function_class_alive():
    # the generated rule is kept on the user's class, not in a module-level table that
    # would hold every class ever vmapped; a subclass gets its own rule
    import gc
    import weakref

    def make():
        class Triple(_ExpVmap):
            @staticmethod
            def forward(x):
                return x * 3

        assert vmap(Triple.apply)(_X)[0, 0].item() == pytest.approx(3 * _X[0, 0].item())
        assert vmap(_ExpVmap.apply)(_X)[0, 0].item() == pytest.approx(_X[0, 0].exp().item())
        return weakref.ref(Triple)

    ref = make()
    gc.collect()
    assert ref() is None


def test_operands_changed_in_place_after_use_raise_at_the_backward():
    # as PyTorch's version counters: a value an op read, changed in place before the
    # backward needs it, raises instead of giving a gradient from the new value
    x = numbagrad.ones(2, 3, dtype=numbagrad.float64)
    c = numbagrad.arange(6, dtype=numbagrad.float64).reshape(2, 3)

    def batched_constant(x, c):  # c is batched, not differentiated: _assign changes it
        y = (x * c).sum()
        c.add_(1)
        return y

    def eager_constant(x):  # a constant written eagerly (its memory)
        buf = numbagrad.arange(3, dtype=x.dtype)
        y = (x * buf).sum()
        buf.add_(1)
        return y

    def becomes_traced(x):  # a constant that becomes a tracer
        buf = numbagrad.arange(3, dtype=x.dtype)
        y = (x * buf).sum()
        buf[0] = x[0]
        return y

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        vmap(grad(batched_constant))(x, c.clone())
    for f in (eager_constant, becomes_traced):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            grad(f)(x[0])

    # changed before use, it is fine
    def before(x):
        buf = numbagrad.arange(3, dtype=x.dtype)
        buf.add_(1)
        buf[0] = x[0]
        return (x * buf).sum()

    _near(grad(before)(x[0]), [2.0, 2.0, 3.0])


class _SqBoth(numbagrad.autograd.Function):
    """Saves different tensors for jvp (the input) and for backward (the output)."""

    @staticmethod
    def forward(a):
        return a * a

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
        ctx.save_for_backward(output)

    @staticmethod
    def jvp(ctx, ta):
        (a,) = ctx.saved_tensors
        return 2 * a * ta

    @staticmethod
    def backward(ctx, g):
        (o,) = ctx.saved_tensors
        return 2 * o.sqrt() * g


class _SqForwardOnly(numbagrad.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_forward(a)
        return a * a

    @staticmethod
    def jvp(ctx, ta):
        (a,) = ctx.saved_tensors
        return 2 * a * ta


def test_forward_ad_jvp_reads_what_save_for_forward_saved():
    # in a dual_level over eager autograd, ctx.saved_tensors in jvp is save_for_forward's
    # (it was save_for_backward's: the output, a silently wrong tangent)
    p = t([0.5, 2.0, 3.0])
    with fwAD.dual_level():
        x = fwAD.make_dual(p, t([1.0, 1.0, 1.0]))
        for fn in (_SqBoth, _SqForwardOnly):
            _near(fwAD.unpack_dual(fn.apply(x)).tangent, [1.0, 4.0, 6.0])
    _near(jvp(_SqBoth.apply, (p,), (t([1.0, 1.0, 1.0]),))[1], [1.0, 4.0, 6.0])
    x = p.clone().requires_grad_()
    _SqBoth.apply(x).sum().backward()
    _near(x.grad, [1.0, 4.0, 6.0])


def test_views_of_traced_values_follow_in_place_changes():
    # a tracer's value is not shared memory: a live view is re-derived when its base changes
    # in place, and an in-place change of a slice writes through to its base (as PyTorch's
    # views of shared memory behave)
    x = t([1.0, 2.0, 3.0])

    def stale(x):
        y = x.clone()
        v = y[1:]
        y.mul_(2)
        return (v * 3).sum()

    _near(grad(stale)(x), [0.0, 6.0, 6.0])
    _near(vmap(stale)(numbagrad.stack([x, x])), [30.0, 30.0])

    def through(v):
        y = numbagrad.zeros(3, dtype=v.dtype)
        y[0] = v[1] * v[2]
        y[1:] += v[:2] ** 2
        return y

    _near(jacrev(through)(x), [[0.0, 3.0, 2.0], [2.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    _near(jacfwd(through)(x), [[0.0, 3.0, 2.0], [2.0, 0.0, 0.0], [0.0, 4.0, 0.0]])

    def chain(v):  # a view of a view, written; the base and both views see it
        y = v.clone()
        s = y[1:]
        s[0:1].mul_(3)
        return numbagrad.cat([y, s])

    _near(vmap(chain)(numbagrad.stack([x, 2 * x])), [[1, 6, 3, 6, 3], [2, 12, 6, 12, 6]])
    with pytest.raises(NotImplementedError, match="advanced indexing"):
        grad(lambda v: v.clone()[numbagrad.tensor([0, 1])].mul_(2).sum())(x)

    def plain_first(v):  # the first write goes through a slice of a plain tensor
        y = numbagrad.zeros(3, dtype=v.dtype)
        y[1:] += v[:2] ** 2
        y[0] = v[2]
        return y

    want = [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0], [0.0, 4.0, 0.0]]
    _near(jacrev(plain_first)(x), want)
    _near(jacfwd(plain_first)(x), want)

    def other_view_alive(v):
        y = numbagrad.zeros(3, dtype=v.dtype)
        u = y[:1]  # noqa: F841  (alive: it would not see the write)
        y[1:].add_(v[:2])
        return y

    with pytest.raises(NotImplementedError, match="shares its memory"):
        jacrev(other_view_alive)(x)


def test_like_and_new_factories_are_batched_under_vmap():
    # as PyTorch's: zeros_like/ones_like/empty_like/full_like and new_zeros/new_ones/
    # new_empty/new_full of a batched value are batched, so in-place writes into them work
    x = numbagrad.arange(6.0).reshape(2, 3)

    def f(r):
        a = r.new_zeros(2)
        a.add_(r[0])
        b = r.new_full((2,), 1.0)
        b.mul_(r[1])
        c = r.new_ones(2)
        c.mul_(r[2])
        e = r.new_empty(2).fill_(0)
        e.add_(r[0])
        d = numbagrad.full_like(r, 2.0)
        d.mul_(r)
        z = numbagrad.zeros_like(r).add_(r)
        o = numbagrad.empty_like(r).copy_(r)
        return a, b, c, e, d, z, o

    a, b, c, e, d, z, o = vmap(f)(x)
    np.testing.assert_array_equal(a.numpy(), [[0, 0], [3, 3]])
    np.testing.assert_array_equal(b.numpy(), [[1, 1], [4, 4]])
    np.testing.assert_array_equal(c.numpy(), [[2, 2], [5, 5]])
    np.testing.assert_array_equal(e.numpy(), [[0, 0], [3, 3]])
    np.testing.assert_array_equal(d.numpy(), 2 * x.numpy())
    np.testing.assert_array_equal(z.numpy(), x.numpy())
    np.testing.assert_array_equal(o.numpy(), x.numpy())
    # nested vmaps, and an inner transform writing its values into the batched buffer
    assert tuple(vmap(vmap(lambda v: numbagrad.zeros_like(v) + v))(x.reshape(2, 3, 1)).shape) == (
        2,
        3,
        1,
    )
    xs = t([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    jac = vmap(jacrev(lambda v: numbagrad.zeros_like(v).add_(v * v)))(xs)
    _near(jac, np.stack([np.diag(2 * xs[i].numpy()) for i in range(2)]))
    # new_tensor stays a constant (unbatched), as in PyTorch
    assert vmap(lambda r: r.new_tensor([1.0, 2.0]) + r[0])(x).shape == (2, 2)


def test_copy_of_a_traced_value():
    x = numbagrad.tensor([0.3, -0.7, 1.1], dtype=numbagrad.float64)

    def f(v):
        y = numbagrad.empty(3, dtype=v.dtype)
        y.copy_(v.sin())
        return (y * v).sum()

    _near(grad(f)(x), (np.sin(x.numpy()) + x.numpy() * np.cos(x.numpy())))
    c = numbagrad.zeros(3, dtype=numbagrad.float64)
    with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
        grad(lambda v: c.copy_(v).sum())(x)


def test_vmap_of_jacobians_through_layer_norm():
    # LayerNormBackward's batching rule: g (the jacrev basis) has more leading dims than x
    X = t([[0.3, -0.7, 1.1, 0.2], [1.5, 0.1, -0.4, -2.0], [0.0, 0.6, 0.9, -0.3]])
    w = t([1.0, 2.0, 0.5, -1.0])

    def f(v):
        return numbagrad.nn.functional.layer_norm(v, (4,), weight=w)

    want = np.stack([jacfwd(f)(X[i]).numpy() for i in range(3)])
    _near(vmap(jacrev(f))(X), want)
    h = vmap(hessian(lambda v: f(v).pow(2).sum()))(X)
    _near(h, np.stack([hessian(lambda v: f(v).pow(2).sum())(X[i]).numpy() for i in range(3)]))


def test_tracked_values_inside_grad_require_grad_and_take_hooks():
    # as PyTorch's tensors inside func.grad: requires_grad, is_leaf, register_hook
    x = t([1.0, 2.0, 3.0])
    seen = {}

    def f(v):
        y = v * 2
        seen["flags"] = (v.requires_grad, y.requires_grad, v.is_leaf, y.is_leaf)
        v.register_hook(lambda g: g + 1)  # on the input: after everything flowed in
        y.register_hook(lambda g: g * 10)
        return (y * y).sum()

    _near(grad(f)(x), 2 * 10 * 2 * 2 * x.numpy() + 1)  # dL/dy = 2y = 4v, *10, *2 (dy/dv), +1
    assert seen["flags"] == (True, True, True, False)
    c = t([1.0])
    grad(lambda v: (v * c).sum() + 0 * (seen.setdefault("c", c.requires_grad)))(x)
    assert seen["c"] is False  # a constant does not require grad
    with pytest.raises(RuntimeError, match="where a gradient of shape"):
        grad(lambda v: (lambda y: (y.register_hook(lambda g: g[:1]), y.sum())[1])(v * 2))(x)
    per = vmap(grad(lambda v: (lambda y: (y.register_hook(lambda g: g * 10), y.sum())[1])(v * 2)))
    _near(per(numbagrad.ones(2, 3, dtype=numbagrad.float64)), np.full((2, 3), 20.0))


def test_functionalize_debug_unwrap_and_batch_norm_replacement():
    from numbagrad.func import debug_unwrap, functionalize, replace_all_batch_norm_modules_

    def f(x):
        y = x.clone()
        y.mul_(2)
        x.add_(1)  # an input mutation: applied, as PyTorch's functionalize applies it
        return y

    x = t([1.0, 2.0])
    _near(functionalize(f)(x), [2.0, 4.0])
    _near(x, [2.0, 3.0])
    _near(
        vmap(functionalize(lambda v: v.clone().mul_(3), remove="mutations_and_views"))(x),
        [6.0, 9.0],
    )
    with pytest.raises(RuntimeError, match="invalid argument for remove"):
        functionalize(f, remove="views")
    seen = []
    vmap(lambda v: (seen.append(debug_unwrap(v)), v)[1], in_dims=1)(numbagrad.ones(3, 4))
    assert type(seen[0]) is numbagrad.Tensor and tuple(seen[0].shape) == (3, 4)  # batch dim in
    grad(lambda v: (seen.append(debug_unwrap(vmap(lambda u: u)(v))), v.sum())[1])(x)
    assert type(seen[-1]) is numbagrad.Tensor
    plain = t([1.0])
    assert debug_unwrap(plain) is plain

    class Stats(numbagrad.nn.Module):  # the attributes of a batch-norm module
        def __init__(self):
            super().__init__()
            self.track_running_stats = True
            self.register_buffer("running_mean", numbagrad.zeros(3))
            self.register_buffer("running_var", numbagrad.ones(3))
            self.register_buffer("num_batches_tracked", numbagrad.tensor(0))

    net = numbagrad.nn.Sequential(numbagrad.nn.Linear(3, 3), Stats())
    assert replace_all_batch_norm_modules_(net) is net
    assert net[1].running_mean is None and net[1].track_running_stats is False
    assert dict(net.named_buffers()) == {}


def test_tracer_constructors_set_what_init_tracer_sets():
    # BatchTracer._new and GradTracer._new inline Tracer._init_tracer on their hot paths
    from numbagrad._core.interpreter import EVAL
    from numbagrad._transforms.batching import BatchInterpreter, BatchTracer
    from numbagrad._transforms.reverse import GradInterpreter, GradTracer, LeafNode
    from numbagrad._transforms.tracer import Tracer

    def fields(tr):
        return {
            "interp": tr._interp,
            "shape": tr._shape,
            "dtype": tr._np_dtype,
            "storage": tr._storage,
            "flags": (tr._requires_grad, tr._grad_fn, tr._view_of),
        }

    b = BatchInterpreter(EVAL, 4)
    g = GradInterpreter(b)
    fast_b = BatchTracer._new(b, numbagrad.ones(4, 3), 0)
    slow_b = object.__new__(BatchTracer)
    Tracer._init_tracer(slow_b, b, (3,), np.dtype(np.float32))
    assert fields(fast_b) == fields(slow_b)
    fast_g = GradTracer._new(g, fast_b, LeafNode(0))
    slow_g = object.__new__(GradTracer)
    Tracer._init_tracer(slow_g, g, (3,), np.dtype(np.float32))
    assert fields(fast_g) == fields(slow_g)


def test_inplace_under_no_grad_inside_transforms_changes_data_not_history():
    # vmap: the caller's tensor gets the data, its history stays (PyTorch: a.grad == 2)
    a = numbagrad.ones(3, 2, requires_grad=True)
    x = a * 2

    def g(y):
        with numbagrad.no_grad():
            y.add_(1)
        return y * 1

    vmap(g)(x)
    x.sum().backward()
    _near(x, np.full((3, 2), 3.0))
    _near(a.grad, np.full((3, 2), 2.0))
    leaf = numbagrad.ones(3, 2, requires_grad=True)
    vmap(g)(leaf)  # a leaf may change under no_grad, as in PyTorch
    _near(leaf, np.full((3, 2), 2.0))

    # grad: the input stays the input (its gradient at the new value), the caller's changes
    def f(v):
        with numbagrad.no_grad():
            v.add_(1)
        return (v * v).sum()

    x0 = t([1.0, 2.0, 3.0])
    _near(grad(f)(x0), [4.0, 6.0, 8.0])
    _near(x0, [2.0, 3.0, 4.0])


def test_variable_inside_transforms_and_chunked_same_randomness():
    out = vmap(lambda v: v + numbagrad.autograd.Variable(numbagrad.ones(3)))(numbagrad.ones(2, 3))
    _near(out, np.full((2, 3), 2.0))
    r = vmap(lambda p: numbagrad.randn(5) + p, chunk_size=2, randomness="same")(
        numbagrad.zeros(6, 5)
    )
    assert np.array_equal(r.numpy(), np.broadcast_to(r.numpy()[0], (6, 5)))  # every chunk


def test_forward_over_reverse_through_a_function_keeping_its_output_on_ctx():
    fw = numbagrad.autograd.forward_ad

    class Exp(numbagrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.out = y
            return y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.out

        @staticmethod
        def jvp(ctx, tangent):
            return tangent * ctx.out

    x = t([0.0, 1.0]).requires_grad_()
    with fw.dual_level():
        d = fw.make_dual(x, numbagrad.ones(2, dtype=numbagrad.float64))
        (g,) = numbagrad.autograd.grad(Exp.apply(d).sum(), d, create_graph=True)
        _near(fw.unpack_dual(g).tangent, np.exp([0.0, 1.0]))  # H v of sum(exp(x))


def test_inplace_on_a_vmap_input_in_a_graph_keeps_what_the_backward_reads():
    # sin_ on the input saves the original for its derivative (PyTorch: a copy of it), and
    # the caller's tensor takes the new value with the history through it
    a = numbagrad.full((3, 2), 2.0, dtype=numbagrad.float64, requires_grad=True)
    x = a * 2
    vmap(lambda y: y.sin_())(x)
    x.sum().backward()
    _near(x, np.full((3, 2), np.sin(4.0)))
    _near(a.grad, np.full((3, 2), 2 * np.cos(4.0)))


def test_a_draw_from_duals_has_a_zero_tangent():
    fw = numbagrad.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(numbagrad.full((3,), 0.5), numbagrad.ones(3))
        assert fw.unpack_dual(numbagrad.bernoulli(d)).tangent.tolist() == [0.0, 0.0, 0.0]
        assert fw.unpack_dual(numbagrad.normal(d, 1.0)).tangent.tolist() == [0.0, 0.0, 0.0]


def test_autograd_grad_inside_func_grad():
    """autograd.grad on values of a func.grad level gives their gradient there, a constant
    to the level; create_graph=True is refused with the way out (nested func.grad)."""
    x = t([0.5, 1.0])
    g = grad(lambda x: numbagrad.autograd.grad(x.sin().sum(), x)[0].sum() * x.sum())(x)
    close(g, t([1.0, 1.0]) * float(x.cos().sum()))
    with pytest.raises(NotImplementedError, match=r"nest numbagrad\.func\.grad"):
        grad(lambda x: numbagrad.autograd.grad(x.sin().sum(), x, create_graph=True)[0].sum())(x)
