"""Custom Functions as PyTorch 2.13 runs them (issue 27, "Custom Functions"): outputs that
are not tensors.

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
