"""``autograd.grad(..., is_grads_batched=True)`` and gradcheck's forward-mode and batched
checks (``check_forward_ad``, ``check_batched_grad``, ``check_batched_forward_grad``,
gradgradcheck's ``check_fwd_over_rev`` and ``check_batched_grad``): right functions pass,
wrong ``jvp``/``vmap``/``backward`` rules fail, and both agree with PyTorch where it is
installed (the cases are written once, against either library)."""

import warnings

import numpy as np
import pytest

import numbagrad
import numbagrad.autograd.forward_ad as fwAD
from numbagrad.autograd.gradcheck import GradcheckError

f64 = numbagrad.float64


def _torch():
    return pytest.importorskip("torch")


def _arr(t):
    return np.asarray(t.detach().numpy())


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_arr(a), _arr(b), rtol=tol, atol=tol)


def _leaf(lib, values):
    return lib.tensor(np.asarray(values, dtype=np.float64)).requires_grad_()


# -- custom Functions, written once for numbagrad and for torch ---------------------------
def cube_fn(lib, jvp_scale=1.0, generate=False):
    """``x ** 3`` with a backward, a jvp (wrong when ``jvp_scale != 1``) and a vmap rule
    (or ``generate_vmap_rule``)."""

    class Cube(lib.autograd.Function):
        generate_vmap_rule = generate

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
            return g * 3 * x**2

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * 3 * x**2 * jvp_scale

        if not generate:

            @staticmethod
            def vmap(info, in_dims, x):
                return x**3, in_dims[0]

    return Cube


def scale_fn(lib, vmap_factor=2.0):
    """The linear map ``x * 2``, whose backward and jvp are the Function itself, so its
    vmap rule (wrong when ``vmap_factor != 2``) runs on batched cotangents and tangents."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return Scale.apply(g)

        @staticmethod
        def jvp(ctx, t):
            return Scale.apply(t)

        @staticmethod
        def vmap(info, in_dims, x):
            return x * vmap_factor, in_dims[0]

    return Scale


def square_fn(lib, jvp_scale=1.0, numpy_backward=False):
    """``3 * x ** 2`` (the derivative of ``x ** 3``) with a jvp that may be wrong and a
    backward that may leave the library (through NumPy: not vmappable)."""

    class Deriv(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if numpy_backward:
                return lib.tensor(6 * g.detach().numpy() * x.detach().numpy())
            return g * 6 * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * 6 * x * jvp_scale

        @staticmethod
        def vmap(info, in_dims, x):
            return 3 * x**2, in_dims[0]

    return Deriv


def cube_via_fn(lib, deriv):
    """``x ** 3`` whose backward multiplies by ``deriv.apply(x)`` (= ``3 x ** 2``): its
    second derivatives go through ``deriv``'s rules."""

    class CubeVia(lib.autograd.Function):
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
            return g * deriv.apply(x)

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * deriv.apply(x)

        @staticmethod
        def vmap(info, in_dims, x):
            return x**3, in_dims[0]

    return CubeVia


def numpy_backward_fn(lib):
    """A correct Function whose backward goes through NumPy (so it cannot be vmapped)."""

    class NpSin(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return lib.tensor(g.detach().numpy() * np.cos(x.detach().numpy()))

    return NpSin


def combined_fn(lib, jvp_scale=1.0, numpy_in=None):
    """``sin`` in the combined style (``forward(ctx, x)``, ``save_for_forward``, no
    setup_context, no vmap rule), as PyTorch's forward-AD tutorial writes Functions; its
    jvp may be wrong, and its backward or jvp may go through NumPy (``numpy_in``)."""

    class CombinedSin(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if numpy_in == "backward":
                return lib.tensor(g.detach().numpy() * np.cos(x.detach().numpy()))
            return g * x.cos()

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            if numpy_in == "jvp":
                return lib.tensor(t.detach().numpy() * np.cos(x.detach().numpy()))
            return t * x.cos() * jvp_scale

    return CombinedSin


def combined_linear_fn(lib):
    """``x * 2`` in the combined style whose backward and jvp apply it again: under the
    batched checks it runs on batched cotangents and tangents (it has no vmap rule)."""

    class CombinedScale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return CombinedScale.apply(g)

        @staticmethod
        def jvp(ctx, t):
            return CombinedScale.apply(t)

    return CombinedScale


def separate_no_rule_fn(lib):
    """``cube_fn`` without a vmap rule: PyTorch's batched checks never need one."""
    base = cube_fn(lib)

    class CubeNoRule(base):
        vmap = lib.autograd.Function.vmap

    return CubeNoRule


# -- the functions checked -----------------------------------------------------------------
def _inputs(lib, name):
    rng = np.random.default_rng(3)
    x = _leaf(lib, rng.uniform(0.5, 1.5, 4))
    if name in ("matmul", "several"):
        return (_leaf(lib, rng.standard_normal((3, 4))), x)
    return (x,)


CASES = {
    "elementwise": lambda lib: lambda x: (x.sin() * x).exp(),
    "matmul": lambda lib: lambda a, x: a @ x,
    "reductions": lambda lib: lambda x: (x.sum(), (x * x).prod(), x.amax(), x.norm()),
    "indexing": lambda lib: lambda x: (x[1:3] * x[::2], x[lib.tensor([0, 3, 3])]),
    "several": lambda lib: lambda a, x: ((a * a).sum(1) + x[:3], (a.tanh() @ x).sin()),
    "function": lambda lib: cube_fn(lib).apply,
    "function_generated": lambda lib: cube_fn(lib, generate=True).apply,
    "function_linear": lambda lib: scale_fn(lib).apply,
}

FLAGS = dict(check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_transform_flags_pass(name, fast_mode):
    fn = CASES[name](numbagrad)
    assert numbagrad.autograd.gradcheck(fn, _inputs(numbagrad, name), fast_mode=fast_mode, **FLAGS)


@pytest.mark.parametrize("name", ["elementwise", "matmul", "several", "function"])
def test_gradgradcheck_transform_flags_pass(name):
    fn = CASES[name](numbagrad)
    assert numbagrad.autograd.gradgradcheck(
        fn, _inputs(numbagrad, name), check_fwd_over_rev=True, check_batched_grad=True
    )


def test_gradgradcheck_fwd_over_rev_fast_mode_and_unused_inputs():
    x, w = _inputs(numbagrad, "elementwise")[0], _leaf(numbagrad, [1.0, 2.0])
    # w gets no gradient: the vector-Jacobian product leaves it out, as PyTorch's does
    assert numbagrad.autograd.gradgradcheck(
        lambda x, w: x.tanh() * 2, (x, w), check_fwd_over_rev=True, fast_mode=True
    )
    assert numbagrad.autograd.gradgradcheck(
        lambda x, w: x.tanh() * 2,
        (x, w),
        check_fwd_over_rev=True,
        check_rev_over_rev=False,
        check_undefined_grad=False,
    )


# -- wrong rules are caught ---------------------------------------------------------------
def _fails(fn, inputs, check=numbagrad.autograd.gradcheck, match=None, **kw):
    """The check raises GradcheckError, and returns False with raise_exception=False."""
    with pytest.raises(GradcheckError, match=match):
        check(fn, inputs, **kw)
    assert check(fn, inputs, raise_exception=False, **kw) is False


@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_jvp_fails_check_forward_ad(fast_mode):
    x = _inputs(numbagrad, "function")
    wrong = cube_fn(numbagrad, jvp_scale=1.5).apply
    # the reverse mode is right: only the forward check sees it
    assert numbagrad.autograd.gradcheck(wrong, x, fast_mode=fast_mode)
    _fails(
        wrong,
        x,
        check_forward_ad=True,
        fast_mode=fast_mode,
        match="Jacobian computed with forward mode mismatch for output 0",
    )
    _fails(wrong, x, check_forward_ad=True, check_backward_ad=False, fast_mode=fast_mode)


def test_batched_checks_run_functions_as_they_are():
    # As PyTorch's (its legacy vmap): the batched checks batch the cotangents and tangents
    # only, and a Function's staticmethods run as they are on them; its vmap rule is never
    # called, so a wrong one passes there. numbagrad.func.vmap does call it.
    x = _inputs(numbagrad, "function_linear")
    wrong = scale_fn(numbagrad, vmap_factor=3.0).apply
    assert numbagrad.autograd.gradcheck(wrong, x, **FLAGS)
    assert numbagrad.autograd.gradgradcheck(wrong, x, check_batched_grad=True)
    batch = numbagrad.stack([x[0].detach(), 2 * x[0].detach()])
    _close(numbagrad.func.vmap(wrong)(batch), 3 * batch)


def test_unvmappable_backward_fails_check_batched_grad():
    x = _inputs(numbagrad, "function")
    fn = numpy_backward_fn(numbagrad).apply
    assert numbagrad.autograd.gradcheck(fn, x)
    _fails(fn, x, check_batched_grad=True, match="While computing batched gradients")


def test_fwd_over_rev_catches_a_wrong_jvp_in_the_backward():
    x = _inputs(numbagrad, "function")
    fn = cube_via_fn(numbagrad, square_fn(numbagrad, jvp_scale=1.5)).apply
    # first derivatives and reverse-over-reverse are right
    assert numbagrad.autograd.gradcheck(fn, x)
    assert numbagrad.autograd.gradgradcheck(fn, x)
    _fails(
        fn,
        x,
        numbagrad.autograd.gradgradcheck,
        check_fwd_over_rev=True,
        match="forward mode mismatch",
    )


def test_gradgradcheck_batched_grad_catches_an_unvmappable_double_backward():
    x = _inputs(numbagrad, "function")
    fn = cube_via_fn(numbagrad, square_fn(numbagrad, numpy_backward=True)).apply
    assert numbagrad.autograd.gradgradcheck(fn, x)
    _fails(
        fn, x, numbagrad.autograd.gradgradcheck, check_batched_grad=True, match="batched gradients"
    )


def test_undefined_tangent_check():
    def f(x, y):
        # behaves differently when y has no tangent at all: the check must see it
        out = x * y
        if fwAD.unpack_dual(y).tangent is None and fwAD.unpack_dual(x).tangent is not None:
            out = out + x
        return out

    x, y = _leaf(numbagrad, [1.0, 2.0]), _leaf(numbagrad, [0.5, -1.0])
    assert numbagrad.autograd.gradcheck(
        f, (x, y), check_forward_ad=True, check_undefined_grad=False
    )
    _fails(f, (x, y), check_forward_ad=True, match="undefined tangent")
    # a function that does not care passes
    assert numbagrad.autograd.gradcheck(lambda x, y: x * y, (x, y), check_forward_ad=True)


def test_flag_combinations_refused_as_pytorch():
    x = _inputs(numbagrad, "elementwise")
    gc, ggc = numbagrad.autograd.gradcheck, numbagrad.autograd.gradgradcheck
    with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
        gc(numbagrad.sin, x, check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires"):
        gc(
            numbagrad.sin,
            x,
            check_forward_ad=True,
            check_backward_ad=False,
            check_batched_grad=True,
        )
    with pytest.raises(AssertionError, match="check_batched_forward_grad=True requires"):
        gc(numbagrad.sin, x, check_batched_forward_grad=True)
    with pytest.raises(AssertionError, match="check_undefined_grad=True requires"):
        ggc(numbagrad.sin, x, check_rev_over_rev=False, check_fwd_over_rev=True)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires"):
        ggc(
            numbagrad.sin,
            x,
            check_rev_over_rev=False,
            check_fwd_over_rev=True,
            check_undefined_grad=False,
            check_batched_grad=True,
        )
    with pytest.raises(NotImplementedError, match="sparse"):
        gc(numbagrad.sin, x, check_forward_ad=True, masked=True)


def test_batched_checks_take_functions_of_any_style():
    # PyTorch passes these: its batched checks batch only the cotangents and tangents
    x = _inputs(numbagrad, "function")
    gc, ggc = numbagrad.autograd.gradcheck, numbagrad.autograd.gradgradcheck
    for make in (combined_fn, combined_linear_fn, separate_no_rule_fn):
        fn = make(numbagrad).apply
        assert gc(fn, x, **FLAGS)
        assert gc(fn, x, fast_mode=True, **FLAGS)
        assert ggc(fn, x, check_fwd_over_rev=True, check_batched_grad=True)
    # and they still catch what they check
    _fails(combined_fn(numbagrad, 1.5).apply, x, match="forward mode mismatch", **FLAGS)
    _fails(
        combined_fn(numbagrad, numpy_in="backward").apply,
        x,
        check_batched_grad=True,
        match="While computing batched gradients",
    )
    _fails(
        combined_fn(numbagrad, numpy_in="jvp").apply,
        x,
        check_forward_ad=True,
        check_batched_forward_grad=True,
        match="While computing batched gradients",
    )


def test_real_vmap_still_needs_setup_context_and_a_rule():
    # what PyTorch's functorch vmap refuses, numbagrad.func.vmap refuses with its words
    xb = numbagrad.tensor(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        numbagrad.func.vmap(combined_fn(numbagrad).apply)(xb)
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        numbagrad.func.vmap(separate_no_rule_fn(numbagrad).apply)(xb)
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        numbagrad.func.jacrev(combined_fn(numbagrad).apply)(xb[0])


@pytest.mark.parametrize(
    "make", [combined_fn, combined_linear_fn, separate_no_rule_fn], ids=lambda f: f.__name__
)
@pytest.mark.parametrize(
    "how",
    ["reverse", "reverse_create_graph", "forward", "is_grads_batched", "is_grads_batched_cg"],
)
def test_vectorized_jacobians_of_functions_of_any_style(make, how):
    def run(lib):
        fn = make(lib).apply
        x = lib.tensor(np.array([0.5, 1.0, 1.5]), requires_grad=True)
        jac = lib.autograd.functional.jacobian
        if how == "reverse":
            return jac(fn, x.detach(), vectorize=True)
        if how == "reverse_create_graph":
            return jac(fn, x.detach(), vectorize=True, create_graph=True)
        if how == "forward":
            return jac(fn, x.detach(), vectorize=True, strategy="forward-mode")
        (g,) = lib.autograd.grad(
            fn(x),
            x,
            lib.eye(3, dtype=lib.float64),
            is_grads_batched=True,
            create_graph=how.endswith("_cg"),
        )
        return g

    ours = run(numbagrad)
    xs = np.array([0.5, 1.0, 1.5])
    want = {
        "combined_fn": np.cos(xs),
        "combined_linear_fn": 2.0 + 0 * xs,
        "separate_no_rule_fn": 3 * xs**2,
    }[make.__name__]
    np.testing.assert_allclose(_arr(ours), np.diag(want), rtol=1e-12)
    _close(ours, run(_torch()), 1e-12)


def test_batched_function_needing_a_graph_refuses_without_a_rule():
    # autograd.grad(is_grads_batched=True, create_graph=True) with cotangents that require
    # grad: the backward applies a combined Function to batched values that require grad,
    # which numbagrad can only batch through a vmap rule; it refuses, never a wrong answer
    fn = combined_linear_fn(numbagrad).apply
    x = _leaf(numbagrad, [0.5, 1.0, 1.5])
    v = numbagrad.eye(3, dtype=f64).requires_grad_()
    with pytest.raises(RuntimeError, match="numbagrad cannot batch this custom Function"):
        numbagrad.autograd.grad(fn(x), x, v, is_grads_batched=True, create_graph=True)
    # with a vmap rule it is batched through the rule
    (g,) = numbagrad.autograd.grad(
        scale_fn(numbagrad).apply(x), x, v, is_grads_batched=True, create_graph=True
    )
    _close(g, 2 * numbagrad.eye(3, dtype=f64))
    assert g.requires_grad


# -- the same verdicts as PyTorch ------------------------------------------------------------
VERDICTS = {
    "right_function": (lambda lib: cube_fn(lib).apply, "function", {}, FLAGS),
    "wrong_jvp": (
        lambda lib: cube_fn(lib, jvp_scale=1.5).apply,
        "function",
        {},
        dict(check_forward_ad=True),
    ),
    "wrong_jvp_fast": (
        lambda lib: cube_fn(lib, jvp_scale=1.5).apply,
        "function",
        {},
        dict(check_forward_ad=True, fast_mode=True),
    ),
    # the batched checks use PyTorch's legacy vmap (torch._vmap_internals), which runs a
    # Function's staticmethods on the batch and never calls its vmap staticmethod: a wrong
    # vmap rule passes, in both
    "wrong_vmap_backward": (
        lambda lib: scale_fn(lib, 3.0).apply,
        "function_linear",
        {},
        dict(check_batched_grad=True),
    ),
    "wrong_vmap_forward": (
        lambda lib: scale_fn(lib, 3.0).apply,
        "function_linear",
        {},
        dict(check_forward_ad=True, check_batched_forward_grad=True),
    ),
    "numpy_backward_batched": (
        lambda lib: numpy_backward_fn(lib).apply,
        "function",
        {},
        dict(check_batched_grad=True),
    ),
    "fwd_over_rev_wrong": (
        lambda lib: cube_via_fn(lib, square_fn(lib, 1.5)).apply,
        "function",
        {"gg": True},
        dict(check_fwd_over_rev=True),
    ),
    "fwd_over_rev_right": (
        lambda lib: cube_via_fn(lib, square_fn(lib)).apply,
        "function",
        {"gg": True},
        dict(check_fwd_over_rev=True, check_batched_grad=True),
    ),
    "gradgrad_batched_numpy": (
        lambda lib: cube_via_fn(lib, square_fn(lib, numpy_backward=True)).apply,
        "function",
        {"gg": True},
        dict(check_batched_grad=True),
    ),
    # Functions of any style under the batched checks (PyTorch's legacy vmap)
    "combined_all": (lambda lib: combined_fn(lib).apply, "function", {}, FLAGS),
    "combined_all_fast": (
        lambda lib: combined_fn(lib).apply,
        "function",
        {},
        dict(FLAGS, fast_mode=True),
    ),
    "combined_wrong_jvp": (lambda lib: combined_fn(lib, 1.5).apply, "function", {}, FLAGS),
    "combined_numpy_backward": (
        lambda lib: combined_fn(lib, numpy_in="backward").apply,
        "function",
        {},
        dict(check_batched_grad=True),
    ),
    "combined_numpy_jvp": (
        lambda lib: combined_fn(lib, numpy_in="jvp").apply,
        "function",
        {},
        dict(check_forward_ad=True, check_batched_forward_grad=True),
    ),
    "combined_numpy_jvp_unbatched": (
        lambda lib: combined_fn(lib, numpy_in="jvp").apply,
        "function",
        {},
        dict(check_forward_ad=True),
    ),
    "combined_linear_all": (lambda lib: combined_linear_fn(lib).apply, "function", {}, FLAGS),
    "combined_gradgrad": (
        lambda lib: combined_fn(lib).apply,
        "function",
        {"gg": True},
        dict(check_fwd_over_rev=True, check_batched_grad=True),
    ),
    "combined_linear_gradgrad": (
        lambda lib: combined_linear_fn(lib).apply,
        "function",
        {"gg": True},
        dict(check_fwd_over_rev=True, check_batched_grad=True),
    ),
    "separate_no_vmap_rule_all": (
        lambda lib: separate_no_rule_fn(lib).apply,
        "function",
        {},
        FLAGS,
    ),
    "elementwise_all": (CASES["elementwise"], "elementwise", {}, FLAGS),
    "several_gradgrad": (
        CASES["several"],
        "several",
        {"gg": True},
        dict(check_fwd_over_rev=True, check_batched_grad=True),
    ),
}


@pytest.mark.parametrize("name", list(VERDICTS))
def test_same_verdict_as_pytorch(name):
    torch = _torch()
    make, inputs, opts, flags = VERDICTS[name]
    verdicts = []
    for lib in (numbagrad, torch):
        check = lib.autograd.gradgradcheck if opts.get("gg") else lib.autograd.gradcheck
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdicts.append(check(make(lib), _inputs(lib, inputs), raise_exception=False, **flags))
    assert verdicts[0] == verdicts[1], verdicts


# -- autograd.grad(..., is_grads_batched=True) ----------------------------------------------
def _graph(lib, name):
    """``(outputs, inputs, unused)`` of a small graph; ``unused`` reaches no output."""
    rng = np.random.default_rng(5)
    x = _leaf(lib, rng.uniform(0.5, 1.5, 3))
    a = _leaf(lib, rng.standard_normal((2, 3)))
    unused = _leaf(lib, [1.0, 2.0])
    if name == "elementwise":
        outs = [(x.sin() * x).exp(), a.tanh()]
    elif name == "matmul":
        outs = [a @ x, (a * a).sum()]
    elif name == "reductions":
        outs = [x.sum(), (x * a).amax(1), a.mean(0)]
    elif name == "indexing":
        outs = [x[lib.tensor([2, 0, 2])] * a[1], a[:, 1:]]
    elif name == "broadcast":
        outs = [x + a, (x * a).sum(0, keepdim=True)]
    elif name == "function":
        outs = [cube_fn(lib).apply(x) * a, scale_fn(lib).apply(a)]
    elif name == "function_generated":
        outs = [cube_fn(lib, generate=True).apply(a) * x]
    else:
        raise KeyError(name)
    return outs, [x, a], unused


def _batched_cotangents(lib, outs, batch=3, seed=7):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal((batch, *o.shape))) for o in outs]


GRAPHS = [
    "elementwise",
    "matmul",
    "reductions",
    "indexing",
    "broadcast",
    "function",
    "function_generated",
]


@pytest.mark.parametrize("name", GRAPHS)
def test_is_grads_batched_matches_a_loop(name):
    outs, ins, _ = _graph(numbagrad, name)
    cts = _batched_cotangents(numbagrad, outs)
    got = numbagrad.autograd.grad(outs, ins, cts, retain_graph=True, is_grads_batched=True)
    for b in range(3):
        one = numbagrad.autograd.grad(outs, ins, [c[b] for c in cts], retain_graph=True)
        for g, e in zip(got, one):
            assert not g.requires_grad
            _close(g[b], e)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", GRAPHS)
def test_is_grads_batched_matches_pytorch(name, create_graph):
    torch = _torch()
    res = []
    for lib in (numbagrad, torch):
        outs, ins, unused = _graph(lib, name)
        cts = _batched_cotangents(lib, outs)
        gs = lib.autograd.grad(
            outs,
            [*ins, unused],
            cts,
            create_graph=create_graph,
            allow_unused=True,
            is_grads_batched=True,
        )
        assert gs[-1] is None
        assert all(g.requires_grad == create_graph for g in gs[:-1])
        row = list(gs[:-1])
        if create_graph:  # differentiate the batched gradients again
            row += lib.autograd.grad(
                sum((g * g).sum() for g in gs[:-1]), ins, allow_unused=True, materialize_grads=True
            )
        res.append(row)
    for a, b in zip(*res):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, 1e-9)


def test_is_grads_batched_unused_inputs_and_materialize_as_pytorch():
    torch = _torch()
    res = []
    for lib in (numbagrad, torch):
        outs, ins, unused = _graph(lib, "matmul")
        cts = _batched_cotangents(lib, outs)
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            lib.autograd.grad(outs, [unused, *ins], cts, retain_graph=True, is_grads_batched=True)
        gs = lib.autograd.grad(
            outs, [unused, *ins], cts, is_grads_batched=True, materialize_grads=True
        )
        # PyTorch materializes unused gradients unbatched: shape of the input
        res.append([tuple(g.shape) for g in gs] + [_arr(g) for g in gs[1:]])
    assert res[0][:3] == res[1][:3] == [(2,), (3, 3), (3, 2, 3)]
    for a, b in zip(res[0][3:], res[1][3:]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_is_grads_batched_frees_the_graph_unless_retained():
    x = _leaf(numbagrad, [1.0, 2.0])
    y = x.exp() * x
    numbagrad.autograd.grad(y, x, numbagrad.eye(2, dtype=f64), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="second time"):
        numbagrad.autograd.grad(y, x, numbagrad.eye(2, dtype=f64), is_grads_batched=True)


def test_is_grads_batched_runs_hooks_and_ctx_attributes():
    torch = _torch()
    res = []
    for lib in (numbagrad, torch):

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]  # a tensor on ctx, read by the (first-order) backward

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = _leaf(lib, [1.0, -2.0, 0.5])
        h = x.sin()
        h.register_hook(lambda g: g * 2)
        y = Mul.apply(h, lib.tensor([3.0, 4.0, 5.0], dtype=lib.float64))
        (g,) = lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
        res.append(g)
    _close(res[0], res[1])


def test_vmap_over_autograd_grad():
    x = _leaf(numbagrad, [0.3, 1.2])
    y = x.tanh() * x
    vs = numbagrad.tensor([[1.0, 0.0], [0.5, 2.0], [0.0, 1.0]], dtype=f64)
    got = numbagrad.func.vmap(lambda v: numbagrad.autograd.grad(y, x, v, retain_graph=True)[0])(vs)
    for b in range(3):
        _close(got[b], numbagrad.autograd.grad(y, x, vs[b], retain_graph=True)[0])


def test_is_grads_batched_errors_as_pytorch():
    torch = _torch()
    for lib in (numbagrad, torch):
        x = _leaf(lib, [1.0, 2.0, 3.0])
        y = x.sin()
        ones = lib.ones

        def g(*a, lib=lib, **k):
            return lib.autograd.grad(*a, retain_graph=True, is_grads_batched=True, **k)

        with pytest.raises(
            RuntimeError,
            match="If `is_grads_batched=True`, we interpret the "
            "first dimension of each grad_output",
        ):
            g(y, x, ones(2, 4, dtype=lib.float64))
        with pytest.raises(ValueError, match="same size in the mapped dimension"):
            g([y, y * 2], x, [ones(2, 3, dtype=lib.float64), ones(4, 3, dtype=lib.float64)])
        with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
            g([y, y * 2], x, [ones(2, 3, dtype=lib.float64), None])
        with pytest.raises(ValueError, match="dimensionality 0"):
            g(y.sum(), x, None)
        with pytest.raises(IndexError):
            g(y.sum(), x, ones((), dtype=lib.float64))
        with pytest.raises(IndexError):
            g(y, x, ones(0, 3, dtype=lib.float64))


def test_eager_grad_unchanged_after_batched_grad():
    x = _leaf(numbagrad, [1.0, 2.0])
    y = (x * x).sum()
    numbagrad.autograd.grad(
        y, x, numbagrad.ones(4, dtype=f64), retain_graph=True, is_grads_batched=True
    )
    (g,) = numbagrad.autograd.grad(y, x)
    _close(g, numbagrad.tensor([2.0, 4.0], dtype=f64))
    y2 = (x * 3).sum()
    y2.backward()
    _close(x.grad, numbagrad.tensor([3.0, 3.0], dtype=f64))
