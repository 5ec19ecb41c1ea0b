"""numbagrad.autograd.functional against torch.autograd.functional: values, shapes, dtypes,
tuple structure, ``requires_grad``/``grad_fn`` of the results, strict-mode and bad-``v``
errors, over a matrix of functions (single/tuple inputs and outputs, unused inputs,
constant outputs, a combined-style custom Function, a function filling a buffer in place),
both ``vectorize`` settings and both strategies."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)
X3 = RNG.normal(size=3)
Y2 = RNG.normal(size=2)
M23 = RNG.normal(size=(2, 3))
ROB = np.array([0.9, 1e-5, 0.1])


# -- the same functions, written once against either library ----------------------------
def _cube_function(lib):
    """A combined-style custom Function (forward(ctx, x) + backward, no setup_context)."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    return Cube


def _robertson(lib):
    """Robertson's stiff ODE right-hand side, filling a buffer it created in place."""

    def rhs(y):
        dy = lib.empty(3, dtype=y.dtype)
        dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2]
        dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2
        dy[2] = 3e7 * y[1] ** 2
        return dy

    return rhs


# name -> (inputs (numpy arrays; a tuple means a tuple of inputs), builder(lib) -> func)
FUNCS = {
    "single": (X3, lambda lib: lambda x: x.sin() * x.sum()),
    "matrix": (M23, lambda lib: lambda x: (x @ x.T).tanh()),
    "tuple_in": ((X3, Y2), lambda lib: lambda x, y: x.exp() * y.sum()),
    "tuple_out": (X3, lambda lib: lambda x: (x**2, x.prod())),
    "tuple_both": ((X3, Y2), lambda lib: lambda x, y: (x * y.sum(), y.cos(), (x * x).sum())),
    "unused_input": ((X3, Y2), lambda lib: lambda x, y: (x**2).sin()),
    "const_output": (X3, lambda lib: lambda x: (x * 2.0, lib.ones(2, dtype=x.dtype))),
    "cube_function": (X3, lambda lib: _cube_function(lib).apply),
    "buffer_fill": (ROB, _robertson),
    "zero_dim": ((np.array(0.7), X3), lambda lib: lambda s, x: (s.sin() * s, (s * x).sum())),
}

# scalar functions for hessian / vhp / hvp
SCALAR_FUNCS = {
    "single": (X3, lambda lib: lambda x: (x.sin() * x.sum()).sum()),
    "matrix": (M23, lambda lib: lambda x: (x @ x.T).tanh().sum()),
    "tuple_in": ((X3, Y2), lambda lib: lambda x, y: (x.exp() * y.sum()).sum() + (y**3).sum()),
    "unused_input": ((X3, Y2), lambda lib: lambda x, y: (x**3).sum()),
    "cube_function": (X3, lambda lib: lambda x: _cube_function(lib).apply(x).sum()),
    "buffer_fill": (ROB, lambda lib: lambda y: (_robertson(lib)(y) ** 2).sum()),
    "zero_dim": ((np.array(0.7), X3), lambda lib: lambda s, x: s.exp() * (s * x).sum()),
}


def _inputs(lib, arrays, requires_grad=False):
    if isinstance(arrays, tuple):
        return tuple(_inputs(lib, a, requires_grad) for a in arrays)
    return lib.tensor(arrays.copy(), requires_grad=requires_grad)


def _like(lib, arrays, scale=1.0):
    """A ``v`` shaped like ``arrays`` (deterministic, not all ones)."""
    if isinstance(arrays, tuple):
        return tuple(_like(lib, a, scale) for a in arrays)
    return lib.tensor(np.linspace(-1.0, 1.5, arrays.size).reshape(arrays.shape) * scale)


def _out_like(lib, func_np, arrays):
    """A ``v`` shaped like the outputs of the function (run once in torch for shapes)."""
    out = func_np(*[torch.tensor(a) for a in (arrays if isinstance(arrays, tuple) else (arrays,))])
    if isinstance(out, tuple):
        return tuple(_like(lib, o.detach().numpy()) for o in out)
    return _like(lib, out.detach().numpy())


def _compare(ours, theirs, rtol=1e-7, atol=1e-9, path="result"):
    """Same nesting, and per leaf: shape, dtype, values, requires_grad, grad_fn presence."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple), f"{path}: expected a tuple, got {type(ours).__name__}"
        assert len(ours) == len(theirs), f"{path}: length {len(ours)} != {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, rtol, atol, f"{path}[{i}]")
        return
    assert isinstance(ours, numbagrad.Tensor), f"{path}: got {type(ours).__name__}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape} vs {theirs.shape}"
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], path
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol, err_msg=path
    )
    assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad"
    assert (ours.grad_fn is None) == (theirs.grad_fn is None), f"{path}: grad_fn presence"


def _detached(res):
    """torch's forward-mode results may keep a grad_fn although create_graph is False (its
    ``_jacfwd`` never detaches; the tangents' formulas used inputs requiring grad):
    numbagrad detaches them as documented, so compare against torch's detached values. Its
    forward mode also returns lists where the docs (and its reverse mode) give tuples."""
    if isinstance(res, (tuple, list)):
        return tuple(_detached(r) for r in res)
    return res.detach()


def _both(api, name, table, *, requires_grad=False, v=None, **kwargs):
    """Call ``api`` in both libraries on function ``name`` of ``table``."""
    arrays, build = table[name]
    res = []
    for lib in (numbagrad, torch):
        inputs = _inputs(lib, arrays, requires_grad)
        fn = getattr(lib.autograd.functional, api)
        extra = {} if v is None else {"v": v(lib)}
        res.append(fn(build(lib), inputs, **extra, **kwargs))
    return res


# -- jacobian --------------------------------------------------------------------------------
# forward mode needs a custom Function's jvp: torch fails on the combined-style Function,
# which has none, too; see test_forward_mode_needs_a_transformable_function
@pytest.mark.parametrize(
    ("name", "mode"),
    [
        (name, mode)
        for name in FUNCS
        for mode in ("loop", "loop_create_graph", "vectorize", "vectorize_create_graph", "forward")
        if not (mode == "forward" and name == "cube_function")
    ],
)
def test_jacobian_matches_torch(name, mode):
    kwargs = {
        "loop": {},
        "loop_create_graph": {"create_graph": True},
        "vectorize": {"vectorize": True},
        "vectorize_create_graph": {"vectorize": True, "create_graph": True},
        "forward": {"vectorize": True, "strategy": "forward-mode"},
    }[mode]
    for requires_grad in (False, True):
        ours, theirs = _both("jacobian", name, FUNCS, requires_grad=requires_grad, **kwargs)
        if mode == "forward":
            theirs = _detached(theirs)
        _compare(ours, theirs)


def test_forward_mode_needs_a_transformable_function():
    x = numbagrad.tensor(X3)
    F = numbagrad.autograd.functional
    # as PyTorch (its legacy vmap): a combined-style Function is applied as it is, and
    # forward mode needs its jvp
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        F.jacobian(_cube_function(numbagrad).apply, x, vectorize=True, strategy="forward-mode")
    # numbagrad's forward-over-reverse Hessian goes through func.vjp: setup_context needed
    with pytest.raises(RuntimeError, match="setup_context"):
        F.hessian(
            SCALAR_FUNCS["cube_function"][1](numbagrad),
            x,
            vectorize=True,
            outer_jacobian_strategy="forward-mode",
        )

    # a Function with a jvp works in forward mode
    class Cube(numbagrad.autograd.Function):
        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * t

    jac = F.jacobian(Cube.apply, x, vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(jac.numpy(), np.diag(3 * X3**2), rtol=1e-12)


def test_jacobian_of_the_in_place_buffer_function_every_way():
    """Repro 2: eager autograd records the CopySlices, so the Jacobian is exact."""
    jac = torch.autograd.functional.jacobian(_robertson(torch), torch.tensor(ROB))
    for kw in ({}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}):
        ours = numbagrad.autograd.functional.jacobian(
            _robertson(numbagrad), numbagrad.tensor(ROB), **kw
        )
        np.testing.assert_allclose(ours.numpy(), jac.numpy(), rtol=1e-12)


def test_jacobian_uses_fresh_inputs_not_captured_ones():
    # the function also uses the caller's tensor as a constant: only the argument counts
    for lib in (numbagrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        jac = lib.autograd.functional.jacobian(lambda a, x=x: a * x, x)
        np.testing.assert_allclose(jac.detach().numpy(), np.diag([1.0, 2.0]))
        assert x.grad is None


def test_jacobian_of_empty_output_is_empty():
    # PyTorch raises an internal error here (stack of an empty list / a batch of size 0)
    x = numbagrad.tensor(X3)
    for vectorize in (False, True):
        jac = numbagrad.autograd.functional.jacobian(lambda a: a[:0], x, vectorize=vectorize)
        assert tuple(jac.shape) == (0, 3)


def test_jacobian_float32_and_grad_mode():
    # results keep the input dtype, and a surrounding no_grad does not stop the computation
    for lib in (numbagrad, torch):
        x = lib.tensor(X3.astype(np.float32))
        with lib.no_grad():
            jac = lib.autograd.functional.jacobian(lambda a: a.exp(), x)
        assert str(jac.dtype).endswith("float32")
        np.testing.assert_allclose(jac.numpy(), np.diag(np.exp(X3)), rtol=1e-6)


# -- hessian ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "mode"),
    [
        (name, mode)
        for name in SCALAR_FUNCS
        for mode in ("loop", "loop_create_graph", "vectorize", "forward")
        if not (mode == "forward" and name == "cube_function")
    ],
)
def test_hessian_matches_torch(name, mode):
    kwargs = {
        "loop": {},
        "loop_create_graph": {"create_graph": True},
        "vectorize": {"vectorize": True},
        "forward": {"vectorize": True, "outer_jacobian_strategy": "forward-mode"},
    }[mode]
    for requires_grad in (False, True):
        ours, theirs = _both("hessian", name, SCALAR_FUNCS, requires_grad=requires_grad, **kwargs)
        if mode == "forward":
            theirs = _detached(theirs)
        _compare(ours, theirs, rtol=1e-6)


def test_hessian_create_graph_is_differentiable_again():
    """A hessian entry differentiated once more, against torch, and gradcheck'd."""
    f = SCALAR_FUNCS["single"][1]
    grads = []
    for lib in (numbagrad, torch):
        x = lib.tensor(X3.copy(), requires_grad=True)
        h = lib.autograd.functional.hessian(f(lib), x, create_graph=True)
        assert h.grad_fn is not None
        grads.append(lib.autograd.grad(h[0, 1] + h[2, 2], x)[0].numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)
    x = numbagrad.tensor(X3.copy(), requires_grad=True)
    for vectorize in (False, True):
        assert numbagrad.autograd.gradcheck(
            lambda a, v=vectorize: numbagrad.autograd.functional.hessian(
                f(numbagrad), a, create_graph=True, vectorize=v
            ),
            (x,),
        )


# -- vjp / jvp / vhp / hvp -------------------------------------------------------------------
@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize("api", ["vjp", "jvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_match_torch(name, api, create_graph):
    arrays, build = FUNCS[name]
    if api == "vjp":

        def v(lib):
            return _out_like(lib, build(torch), arrays)

    else:

        def v(lib):
            return _like(lib, arrays, 0.5)

    for requires_grad in (False, True):
        ours, theirs = _both(
            api, name, FUNCS, requires_grad=requires_grad, v=v, create_graph=create_graph
        )
        _compare(ours, theirs)


@pytest.mark.parametrize("name", list(SCALAR_FUNCS))
@pytest.mark.parametrize("api", ["vhp", "hvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp_match_torch(name, api, create_graph):
    arrays = SCALAR_FUNCS[name][0]
    for requires_grad in (False, True):
        ours, theirs = _both(
            api,
            name,
            SCALAR_FUNCS,
            requires_grad=requires_grad,
            v=lambda lib: _like(lib, arrays, 0.5),
            create_graph=create_graph,
        )
        _compare(ours, theirs, rtol=1e-6)


def test_products_with_v_omitted_and_v_requiring_grad():
    for lib in (numbagrad, torch):
        F = lib.autograd.functional
        x = lib.tensor([0.7], dtype=lib.float64)
        assert float(F.vjp(lambda a: (a**3).sum(), x)[1][0]) == pytest.approx(3 * 0.49)
        assert float(F.jvp(lambda a: a**3, x)[1][0]) == pytest.approx(3 * 0.49)
        assert float(F.hvp(lambda a: (a**3).sum(), x)[1][0]) == pytest.approx(6 * 0.7)
        assert float(F.vhp(lambda a: (a**3).sum(), x)[1][0]) == pytest.approx(6 * 0.7)
    # a v that requires grad: with create_graph the product is differentiable in v
    res = []
    for lib in (numbagrad, torch):
        x = lib.tensor(X3.copy())
        v = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        _, jv = lib.autograd.functional.jvp(lambda a: a.sin() * a.sum(), x, v, create_graph=True)
        res.append(lib.autograd.grad(jv.sum(), v)[0].numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


# -- errors ----------------------------------------------------------------------------------
def _error(lib, call):
    try:
        call(lib)
    except Exception as e:
        return type(e).__name__, str(e).replace("torch.", "").replace("numbagrad.", "")
    return None


def _f2(a, b):
    return (a * a).sum()


ERROR_CASES = {
    # strict mode
    "vjp_independent_input": lambda lib: lib.autograd.functional.vjp(
        _f2, (lib.ones(2), lib.ones(2)), strict=True
    ),
    "jacobian_independent_input": lambda lib: lib.autograd.functional.jacobian(
        _f2, (lib.ones(2), lib.ones(2)), strict=True
    ),
    "jacobian_constant_output": lambda lib: lib.autograd.functional.jacobian(
        lambda a: lib.ones(2), lib.ones(2), strict=True
    ),
    "jacobian_linear_create_graph": lambda lib: lib.autograd.functional.jacobian(
        lambda a: 2 * a, lib.ones(2), strict=True, create_graph=True
    ),
    "vjp_linear_create_graph": lambda lib: lib.autograd.functional.vjp(
        lambda a: 2 * a, lib.ones(2), lib.ones(2), strict=True, create_graph=True
    ),
    "jvp_independent_input": lambda lib: lib.autograd.functional.jvp(
        lambda a, b: 2 * a, (lib.ones(2), lib.ones(2)), (lib.ones(2), lib.ones(2)), strict=True
    ),
    "jvp_linear_create_graph": lambda lib: lib.autograd.functional.jvp(
        lambda a: 2 * a, lib.ones(2), lib.ones(2), strict=True, create_graph=True
    ),
    "hessian_independent_input": lambda lib: lib.autograd.functional.hessian(
        _f2, (lib.ones(2), lib.ones(2)), strict=True
    ),
    "hessian_quadratic_create_graph": lambda lib: lib.autograd.functional.hessian(
        lambda a: (a * a).sum(), lib.ones(2), strict=True, create_graph=True
    ),
    "hvp_linear": lambda lib: lib.autograd.functional.hvp(
        lambda a: (2 * a).sum(), lib.ones(2), lib.ones(2), strict=True
    ),
    "vhp_linear": lambda lib: lib.autograd.functional.vhp(
        lambda a: (2 * a).sum(), lib.ones(2), lib.ones(2), strict=True
    ),
    "hvp_independent_input": lambda lib: lib.autograd.functional.hvp(
        _f2, (lib.ones(2), lib.ones(2)), (lib.ones(2), lib.ones(2)), strict=True
    ),
    "vhp_quadratic_create_graph": lambda lib: lib.autograd.functional.vhp(
        lambda a: (a * a).sum(), lib.ones(2), lib.ones(2), strict=True, create_graph=True
    ),
    "hvp_quadratic_create_graph": lambda lib: lib.autograd.functional.hvp(
        lambda a: (a * a).sum(), lib.ones(2), lib.ones(2), strict=True, create_graph=True
    ),
    "strict_and_vectorize": lambda lib: lib.autograd.functional.jacobian(
        lambda a: a * a, lib.ones(2), strict=True, vectorize=True
    ),
    "strict_and_forward": lambda lib: lib.autograd.functional.jacobian(
        lambda a: a * a, lib.ones(2), strict=True, vectorize=True, strategy="forward-mode"
    ),
    # options
    "forward_without_vectorize": lambda lib: lib.autograd.functional.jacobian(
        lambda a: a * a, lib.ones(2), strategy="forward-mode"
    ),
    "forward_create_graph": lambda lib: lib.autograd.functional.jacobian(
        lambda a: a * a, lib.ones(2), vectorize=True, create_graph=True, strategy="forward-mode"
    ),
    "bad_strategy": lambda lib: lib.autograd.functional.jacobian(
        lambda a: a, lib.ones(2), strategy="sideways"
    ),
    "hessian_bad_strategy": lambda lib: lib.autograd.functional.hessian(
        lambda a: a.sum(), lib.ones(2), outer_jacobian_strategy="sideways"
    ),
    "hessian_forward_without_vectorize": lambda lib: lib.autograd.functional.hessian(
        lambda a: (a**3).sum(), lib.ones(2), outer_jacobian_strategy="forward-mode"
    ),
    "hessian_not_scalar": lambda lib: lib.autograd.functional.hessian(lambda a: a**3, lib.ones(2)),
    "hessian_tuple_output": lambda lib: lib.autograd.functional.hessian(
        lambda a: (a.sum(),), lib.ones(2)
    ),
    "vhp_not_scalar": lambda lib: lib.autograd.functional.vhp(
        lambda a: a * a, lib.ones(2), lib.ones(2)
    ),
    "hvp_tuple_output": lambda lib: lib.autograd.functional.hvp(
        lambda a: (a.sum(),), lib.ones(2), lib.ones(2)
    ),
    # bad v
    "vjp_v_shape": lambda lib: lib.autograd.functional.vjp(
        lambda a: a * a, lib.ones(3), lib.ones(2)
    ),
    "vjp_v_tuple_length": lambda lib: lib.autograd.functional.vjp(
        lambda a: (a * a, a), lib.ones(3), (lib.ones(3),)
    ),
    "vjp_v_entry_shape": lambda lib: lib.autograd.functional.vjp(
        lambda a: (a * a, a), lib.ones(3), (lib.ones(3), lib.ones(2))
    ),
    "vjp_v_single_for_tuple": lambda lib: lib.autograd.functional.vjp(
        lambda a: a * a, lib.ones(3), (lib.ones(3), lib.ones(3))
    ),
    "vjp_v_missing": lambda lib: lib.autograd.functional.vjp(lambda a: a * a, lib.ones(3)),
    "jvp_v_missing": lambda lib: lib.autograd.functional.jvp(lambda a: a * a, lib.ones(3)),
    "jvp_v_shape": lambda lib: lib.autograd.functional.jvp(
        lambda a: a * a, lib.ones(3), lib.ones(2)
    ),
    "jvp_v_tuple_length": lambda lib: lib.autograd.functional.jvp(
        lambda a, b: a * b, (lib.ones(3), lib.ones(3)), (lib.ones(3),)
    ),
    "hvp_v_missing": lambda lib: lib.autograd.functional.hvp(lambda a: a.sum(), lib.ones(3)),
    "vhp_v_entry_shape": lambda lib: lib.autograd.functional.vhp(
        _f2, (lib.ones(2), lib.ones(2)), (lib.ones(2), lib.ones(3))
    ),
    "v_not_a_tensor": lambda lib: lib.autograd.functional.vjp(
        lambda a: a * a, lib.ones(2), [1.0, 2.0]
    ),
    # types
    "inputs_list": lambda lib: lib.autograd.functional.vjp(lambda a: a, [lib.ones(2)]),
    "inputs_tuple_with_number": lambda lib: lib.autograd.functional.jacobian(
        lambda a, b: a, (lib.ones(2), 3.0)
    ),
    "output_not_a_tensor": lambda lib: lib.autograd.functional.jacobian(lambda a: 3, lib.ones(2)),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_match_torch(case):
    ours = _error(numbagrad, ERROR_CASES[case])
    theirs = _error(torch, ERROR_CASES[case])
    assert theirs is not None
    assert ours is not None, f"numbagrad raised nothing; torch: {theirs}"
    if case == "forward_without_vectorize" or case == "hessian_forward_without_vectorize":
        # torch's message misses a space ("Hessian isonly implemented")
        theirs = (theirs[0], theirs[1].replace("isonly", "is only"))
    assert ours == theirs


def test_non_strict_zeros_and_strict_ok_cases_match_torch():
    for lib in (numbagrad, torch):
        F = lib.autograd.functional
        x = lib.tensor(X3.copy())
        _, (jv0, jv1) = F.jvp(lambda a, b, lib=lib: (a * 2.0, lib.ones(1)), (x, x), (x, x))
        np.testing.assert_allclose(jv0.numpy(), 2 * X3)
        assert jv1.tolist() == [0.0]
        # a linear function is fine in strict mode without create_graph
        _, jv = F.jvp(lambda a: 2 * a, x, x, strict=True)
        np.testing.assert_allclose(jv.numpy(), 2 * X3)


@pytest.mark.parametrize("transform", ["vmap", "grad"])
def test_refused_inside_func_transforms_as_in_torch(transform):
    # the eager tape cannot see through a transform's values: under func.grad the result
    # would silently be a constant, so both libraries refuse
    for lib in (numbagrad, torch):
        F = lib.autograd.functional

        def call(x, F=F):
            return F.jacobian(lambda a: a**3, x).sum()

        wrapped = lib.func.vmap(call) if transform == "vmap" else lib.func.grad(call)
        with pytest.raises(RuntimeError, match="inside of a function being transformed"):
            wrapped(lib.ones(2) if transform == "grad" else lib.ones(2, 2))


def test_forward_ad_dual_inputs_use_their_primals_as_in_torch():
    res = []
    for lib in (numbagrad, torch):
        with lib.autograd.forward_ad.dual_level():
            d = lib.autograd.forward_ad.make_dual(lib.tensor(X3.copy()), lib.ones(3))
            out, g = lib.autograd.functional.vjp(lambda a: a**3, d, lib.ones(3))
            res.append((out.numpy().copy(), g.numpy().copy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])
