"""Custom Functions as PyTorch 2.13 runs them (issue 27, "Custom Functions"): outputs that
are not tensors, and one ctx per application in every mode (Functions under gradcheck's
batched checks are in ``test_gradcheck_transforms.py``).

Each case is written once against a library (``lib``: numbagrad or torch). The numbagrad
half checks known values and runs without PyTorch; the comparison with PyTorch skips when
it is not installed."""

import numpy as np
import pytest

import numbagrad

X = np.array([0.5, -1.25, 2.0])
T = np.array([1.0, 0.5, -2.0])


def _torch():
    return pytest.importorskip("torch")


def _arr(t):
    return np.array(t.detach().numpy()) if t is not None else None


def _err(f):
    """``(type name, message)`` of what ``f()`` raises (None if it returns)."""
    try:
        f()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


# -- 1. outputs that are not tensors --------------------------------------------------------
def pass_through_fn(lib, seen, jvp_result=None):
    """``x * 2`` returned with a NumPy array, an int and a string; records what
    setup_context and backward see."""

    class PassThrough(lib.autograd.Function):
        @staticmethod
        def forward(x):
            seen["array"] = x.detach().numpy() * 2
            return x * 2, seen["array"], 3, "s"

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["setup"] = [type(o).__name__ for o in output]
            seen["same"] = output[1] is seen["array"]
            ctx.n = output[2]

        @staticmethod
        def backward(ctx, g, g_array, g_int, g_str):
            seen["grads"] = [type(v).__name__ for v in (g, g_array, g_int, g_str)]
            return g * ctx.n

        @staticmethod
        def jvp(ctx, t):
            return jvp_result(t) if jvp_result else (t * 2, None, None, None)

    return PassThrough


def test_non_tensor_outputs_pass_through_eagerly():
    def run(lib):
        seen = {}
        fn = pass_through_fn(lib, seen)
        x = lib.tensor(X, requires_grad=True)
        out = fn.apply(x)
        assert out[1] is seen["array"] and out[2:] == (3, "s")
        (out[0] * lib.tensor(T)).sum().backward()
        return seen["setup"], seen["same"], seen["grads"], _arr(x.grad)

    ours = run(numbagrad)
    assert ours[:3] == (
        ["Tensor", "ndarray", "int", "str"],
        True,
        ["Tensor", "NoneType", "NoneType", "NoneType"],  # None even with materialized grads
    )
    np.testing.assert_allclose(ours[3], 3 * T)
    theirs = run(_torch())
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3])


def numpy_intermediate_fn(lib):
    """A once-differentiable Function whose forward returns its NumPy intermediate (the
    derivative) for setup_context to keep."""

    class NpSin(lib.autograd.Function):
        @staticmethod
        def forward(x):
            a = x.detach().numpy()
            return lib.tensor(np.sin(a)), np.cos(a)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.cos = output[1]

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g, g_cos):
            assert g_cos is None
            return g * lib.tensor(ctx.cos)

    return NpSin


def test_once_differentiable_numpy_intermediate_under_func():
    def run(lib):
        fn = numpy_intermediate_fn(lib)
        x = lib.tensor(X)
        out, pullback = lib.func.vjp(lambda x: fn.apply(x)[0], x)
        (g_vjp,) = pullback(lib.tensor(T))
        g_grad = lib.func.grad(lambda x: fn.apply(x)[0].sum())(x)
        jac = lib.func.jacrev(lambda x: fn.apply(x)[0])(x)  # (vmap over the backward)
        leaf = lib.tensor(X, requires_grad=True)
        fn.apply(leaf)[0].sum().backward()
        return [_arr(v) for v in (out, g_vjp, g_grad, jac, leaf.grad)]

    ours = run(numbagrad)
    for got, want in zip(ours, [np.sin(X), T * np.cos(X), np.cos(X), np.diag(np.cos(X))]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for a, b in zip(ours, run(_torch())):
        np.testing.assert_allclose(a, b, rtol=1e-12)


JVP_RESULTS = {
    "one_per_output": lambda t: (t * 2, None, None, None),
    "tangent_for_array_ignored": lambda t: (t * 2, t, None, t[:1]),
    "int_tangent": lambda t: (t * 2, None, 5, None),
    "too_few": lambda t: (t * 2,),
    "bare_tensor": lambda t: t * 2,
    "list": lambda t: [t * 2, None, None, None],
}


@pytest.mark.parametrize("name", list(JVP_RESULTS))
def test_non_tensor_outputs_in_forward_mode(name):
    def run(lib):
        fn = pass_through_fn(lib, {}, JVP_RESULTS[name])
        fwAD = lib.autograd.forward_ad
        x, t = lib.tensor(X), lib.tensor(T)

        def dual_level():
            with fwAD.dual_level():
                out = fn.apply(fwAD.make_dual(x, t))
                return _arr(fwAD.unpack_dual(out[0]).tangent), type(out[1]).__name__, out[2:]

        def func_jvp():
            _, tangent = lib.func.jvp(lambda x: fn.apply(x)[0], (x,), (t,))
            return _arr(tangent)

        return [(_err(f) or f()) for f in (dual_level, func_jvp)]

    ours = run(numbagrad)
    if name in ("one_per_output", "tangent_for_array_ignored"):
        np.testing.assert_allclose(ours[0][0], 2 * T)
        assert ours[0][1:] == ("ndarray", (3, "s"))
        np.testing.assert_allclose(ours[1], 2 * T)
    else:
        assert ours[0][0] == ours[1][0] == "RuntimeError"
    theirs = run(_torch())
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray) or isinstance(a[0], np.ndarray):
            continue  # (the values were checked above)
        assert a == b  # PyTorch's errors, word for word


def vmap_rule_fn(lib, out_dims=None):
    """A Function with an int output and either a vmap staticmethod returning ``out_dims``
    for its outputs, or ``generate_vmap_rule`` (``out_dims=None``)."""

    class Twice(lib.autograd.Function):
        generate_vmap_rule = out_dims is None

        @staticmethod
        def forward(x):
            return x * 2, 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.n = output[1]

        @staticmethod
        def backward(ctx, g, g_int):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2, None

        if out_dims is not None:

            @staticmethod
            def vmap(info, in_dims, x):
                return (x * 2, 3), out_dims

    return Twice


@pytest.mark.parametrize("out_dims", [None, (0, None), (0, 0), 0])
def test_non_tensor_outputs_under_vmap(out_dims):
    def run(lib):
        fn = vmap_rule_fn(lib, out_dims)
        xb = lib.tensor(np.stack([X, T]))
        x, t = lib.tensor(X), lib.tensor(T)
        first = lambda x: fn.apply(x)[0]  # noqa: E731
        res = {
            "vmap": lambda: lib.func.vmap(first)(xb),
            "vmap_out_dims": lambda: lib.func.vmap(fn.apply, out_dims=(0, None))(xb),
            "jacrev": lambda: lib.func.jacrev(first)(x),
            "jacfwd": lambda: lib.func.jacfwd(first)(x),
            "vmap_grad": lambda: lib.func.vmap(lib.func.grad(lambda x: first(x).sum()))(xb),
            "vmap_jvp": lambda: lib.func.vmap(lambda x: lib.func.jvp(first, (x,), (t,))[1])(xb),
        }
        out = {}
        for k, f in res.items():
            e = _err(f)
            r = f() if e is None else None
            out[k] = e if e else ([_arr(r[0]), r[1]] if isinstance(r, tuple) else _arr(r))
        out["vmap_all"] = _err(lambda: lib.func.vmap(fn.apply)(xb))
        return out

    ours = run(numbagrad)
    xb = np.stack([X, T])
    np.testing.assert_allclose(ours["vmap"], 2 * xb)
    np.testing.assert_allclose(ours["vmap_out_dims"][0], 2 * xb)
    assert ours["vmap_out_dims"][1] == 3
    np.testing.assert_allclose(ours["jacrev"], 2 * np.eye(3))
    np.testing.assert_allclose(ours["vmap_grad"], np.full((2, 3), 2.0))
    np.testing.assert_allclose(ours["vmap_jvp"], np.stack([2 * T, 2 * T]))
    assert ours["vmap_all"][0] == "ValueError"  # an int cannot be batched at out_dim 0
    theirs = run(_torch())
    for k in ours:
        if isinstance(ours[k], tuple) or isinstance(theirs[k], tuple):
            assert ours[k][0] == theirs[k][0], (k, ours[k], theirs[k])  # the same error type
        elif isinstance(ours[k], list):
            np.testing.assert_allclose(ours[k][0], theirs[k][0])
            assert ours[k][1] == theirs[k][1]
        else:
            np.testing.assert_allclose(ours[k], theirs[k])


def test_vmap_without_a_rule_raises_as_pytorch():
    def run(lib):
        class NoRule(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2, 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

        class Both(NoRule):
            generate_vmap_rule = True

            @staticmethod
            def vmap(info, in_dims, x):
                return (x * 2, 3), (0, None)

        xb = lib.tensor(np.stack([X, T]))
        return [
            _err(lambda f=f: lib.func.vmap(lambda x: f.apply(x)[0])(xb)) for f in (NoRule, Both)
        ]

    ours = run(numbagrad)
    assert ours[0][1].startswith("You tried to vmap over NoRule, but it does not have vmap support")
    assert ours == run(_torch())


# -- 2. one ctx per application ---------------------------------------------------------------
def tutorial_fn(lib):
    """PyTorch's forward-AD tutorial: ``ctx.result`` kept by forward, read and deleted by
    jvp; the backward saves it properly."""

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

        @staticmethod
        def backward(ctx, g):
            (result,) = ctx.saved_tensors
            assert not hasattr(ctx, "result")  # the jvp freed it
            return g * result

    return Fn


@pytest.mark.parametrize("requires_grad", [False, True])
def test_forward_ad_tutorial_ctx_result(requires_grad):
    def run(lib):
        fn = tutorial_fn(lib)
        fwAD = lib.autograd.forward_ad
        primal = lib.tensor(X, requires_grad=requires_grad)
        with fwAD.dual_level():
            out = fn.apply(fwAD.make_dual(primal, lib.tensor(T)))
            tangent = _arr(fwAD.unpack_dual(out).tangent)
            if requires_grad:
                out.sum().backward()
        checked = lib.autograd.gradcheck(
            fn.apply,
            (lib.tensor(X, requires_grad=True),),
            check_forward_ad=True,
            check_backward_ad=False,
            check_undefined_grad=False,
            check_batched_grad=False,
        )
        return tangent, _arr(primal.grad) if requires_grad else None, checked

    ours = run(numbagrad)
    np.testing.assert_allclose(ours[0], T * np.exp(X))
    if requires_grad:
        np.testing.assert_allclose(ours[1], np.exp(X))
    assert ours[2] is True
    theirs = run(_torch())
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1] if requires_grad else 0, theirs[1] if requires_grad else 0)


def test_del_ctx_attribute_after_rebinding():
    class Fn(numbagrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.kept = x.exp()  # a float tensor on ctx: stored aside (NOTE in function.py)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            ctx.kept = g  # rebound, then deleted: neither value may come back
            del ctx.kept
            assert not hasattr(ctx, "kept")
            with pytest.raises(AttributeError, match="kept"):
                del ctx.kept
            return g * 2

    x = numbagrad.tensor(X, requires_grad=True)
    Fn.apply(x).sum().backward()
    np.testing.assert_allclose(_arr(x.grad), 2.0)


def ctx_fns(lib, log):
    """The same ``exp`` in both styles, logging which ctx each staticmethod sees."""

    class Combined(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            log.append(("f", id(ctx)))
            r = x.exp()
            ctx.result = r
            ctx.save_for_backward(r)
            ctx.tag = "t"
            return r

        @staticmethod
        def jvp(ctx, t):
            log.append(("j", id(ctx)))
            assert ctx.tag == "t"
            return t * ctx.result

        @staticmethod
        def backward(ctx, g):
            log.append(("b", id(ctx)))
            return g * ctx.saved_tensors[0]

    class Separate(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            log.append(("s", id(ctx)))
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)
            ctx.tag = "t"

        @staticmethod
        def jvp(ctx, t):
            log.append(("j", id(ctx)))
            assert ctx.tag == "t"
            return t * ctx.saved_tensors[0]

        @staticmethod
        def backward(ctx, g):
            log.append(("b", id(ctx)))
            assert ctx.tag == "t"
            return g * ctx.saved_tensors[0]

    return Combined, Separate


def _modes(lib, fn):
    fwAD, func = lib.autograd.forward_ad, lib.func
    x, t = lib.tensor(X), lib.tensor(T)
    xb = lib.tensor(np.stack([X, T]))

    def dual(requires_grad, backward_in_level=False):
        def run():
            p = lib.tensor(X, requires_grad=requires_grad)
            with fwAD.dual_level():
                d = fwAD.make_dual(p, t)
                o = fn.apply(d)
                assert fwAD.unpack_dual(o).tangent is not None
                if backward_in_level:
                    lib.autograd.grad(o.sum(), d, create_graph=True)
                elif requires_grad:
                    o.sum().backward()

        return run

    def backward():
        p = lib.tensor(X, requires_grad=True)
        fn.apply(p).sum().backward()

    return {
        "dual": dual(False),
        "dual_requires_grad": dual(True),
        "dual_grad_in_level": dual(True, True),
        "backward": backward,
        "func.jvp": lambda: func.jvp(fn.apply, (x,), (t,)),
        "jacfwd": lambda: func.jacfwd(fn.apply)(x),
        "grad": lambda: func.grad(lambda x: fn.apply(x).sum())(x),
        "jacrev": lambda: func.jacrev(fn.apply)(x),
        "vmap(jvp)": lambda: func.vmap(lambda x, t: func.jvp(fn.apply, (x,), (t,)))(xb, xb),
        "grad(jvp)": lambda: func.grad(lambda x: func.jvp(fn.apply, (x,), (t,))[1].sum())(x),
        "jvp(grad)": lambda: func.jvp(func.grad(lambda x: fn.apply(x).sum()), (x,), (t,)),
    }


def _pattern(log):
    """The log with each ctx named by its order of appearance: ``f0 j0 b0``."""
    names = {}
    return " ".join(f"{m}{names.setdefault(i, len(names))}" for m, i in log)


def _ctx_runs(lib):
    log = []
    res = {}
    for fn in ctx_fns(lib, log):
        for mode, run in _modes(lib, fn).items():
            log.clear()
            e = _err(run)
            res[fn.__name__, mode] = (e[0] if e else None), list(log)
    return res


def test_one_ctx_per_application():
    ours = _ctx_runs(numbagrad)
    for (style, mode), (err, log) in ours.items():
        if (
            style == "Combined"
            and mode not in ("dual", "dual_requires_grad", "backward")
            and (mode != "dual_grad_in_level")
        ):
            assert err == "RuntimeError", (style, mode)  # func transforms need setup_context
            continue
        assert err is None, (style, mode, err)
        assert any(m in "jb" for m, _ in log), (style, mode)
        # every jvp and backward sees a ctx its forward (combined) or a setup_context filled
        filled = {i for m, i in log if m in "fs"}
        assert all(i in filled for m, i in log if m in "jb"), (style, mode, log)
    theirs = _ctx_runs(_torch())
    for key, (err, log) in ours.items():
        assert err == theirs[key][0], key
        if key[1] != "vmap(jvp)":  # (PyTorch runs setup_context once more per vmap level)
            assert _pattern(log) == _pattern(theirs[key][1]), (key, log, theirs[key][1])
