"""Call signatures of the transform API against PyTorch 2.13's, with ``inspect.signature``.

Scope: ``torch.func`` (its ``__all__``) and ``torch.vmap``; ``torch.autograd.forward_ad``;
``torch.autograd.functional``; ``torch.autograd.grad``/``backward``/``gradcheck``/
``gradgradcheck``; ``torch.autograd.Function`` with its ctx methods,
``torch.autograd.function.once_differentiable`` and ``NestedIOFunction``.

Each callable must exist in numbagrad at the same path, and its parameters must agree
with PyTorch's in name, order, kind (positional-only, keyword-only, ``*args``,
``**kwargs``) and default; annotations are ignored. A private parameter (leading
underscore) that PyTorch has and numbagrad lacks is noted in ``PRIVATE_ONLY_IN_TORCH``
and not compared. Where PyTorch's signature is a ``(*args, **kwargs)`` wrapper
(``Function.apply``, ``Function.forward``, ``Function``/``NestedIOFunction``
construction) the behaviour is compared instead, and the documented keywords of every
transform are passed on a tiny example to both libraries and the results compared
(``KEYWORD_CASES``). Known mismatches are strict ``xfail`` params.
"""

import inspect
import warnings

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.transforms

# -------------------------------------------------------------------------------------
# the callables, by path from the top-level module (``torch`` / ``numbagrad``)
# -------------------------------------------------------------------------------------

FUNC = [
    "func.grad",
    "func.grad_and_value",
    "func.vjp",
    "func.jvp",
    "func.linearize",
    "func.vmap",
    "func.jacrev",
    "func.jacfwd",
    "func.hessian",
    "func.functional_call",
    "func.stack_module_state",
    "func.functionalize",
    "func.replace_all_batch_norm_modules_",
    "func.debug_unwrap",
    "vmap",
]
FORWARD_AD = [
    "autograd.forward_ad.dual_level",
    "autograd.forward_ad.enter_dual_level",
    "autograd.forward_ad.exit_dual_level",
    "autograd.forward_ad.make_dual",
    "autograd.forward_ad.unpack_dual",
    "autograd.forward_ad.UnpackedDualTensor",
]
FUNCTIONAL = [
    "autograd.functional.jacobian",
    "autograd.functional.hessian",
    "autograd.functional.vjp",
    "autograd.functional.jvp",
    "autograd.functional.hvp",
    "autograd.functional.vhp",
]
AUTOGRAD = [
    "autograd.grad",
    "autograd.backward",
    "autograd.gradcheck",
    "autograd.gradgradcheck",
]
CTX_METHODS = [
    "mark_dirty",
    "mark_non_differentiable",
    "save_for_backward",
    "save_for_forward",
    "set_materialize_grads",
]
FUNCTION = [
    "autograd.Function",
    "autograd.function.Function",
    "autograd.Function.apply",
    "autograd.Function.forward",
    "autograd.Function.backward",
    "autograd.Function.setup_context",
    "autograd.Function.jvp",
    "autograd.Function.vjp",
    "autograd.Function.vmap",
    *(f"autograd.Function.{m}" for m in CTX_METHODS),
    *(f"autograd.function.FunctionCtx.{m}" for m in CTX_METHODS),
    "autograd.function.FunctionCtx",
    "autograd.function.InplaceFunction.__init__",
    "autograd.function.once_differentiable",
    "autograd.function.NestedIOFunction",
    "autograd.function.NestedIOFunction.__call__",
    "autograd.function.NestedIOFunction.forward",
    "autograd.function.NestedIOFunction.backward",
    "autograd.function.NestedIOFunction.forward_extended",
    "autograd.function.NestedIOFunction.backward_extended",
    "autograd.function.NestedIOFunction.setup_context",
    "autograd.function.NestedIOFunction.jvp",
    "autograd.function.NestedIOFunction.vjp",
    "autograd.function.NestedIOFunction.vmap",
    *(f"autograd.function.NestedIOFunction.{m}" for m in CTX_METHODS),
]

MISSING_NEEDS_INPUT_GRAD = (
    "Function.needs_input_grad: a class-level descriptor in torch, absent from numbagrad's "
    "Function class (ctx.needs_input_grad works)"
)
# (path, reason) for the known signature mismatches
SIGNATURE_XFAIL: dict = {}
EXISTENCE_XFAIL = {
    "autograd.Function.needs_input_grad": MISSING_NEEDS_INPUT_GRAD,
}
# private PyTorch parameters numbagrad does not take: noted here, dropped from the
# comparison (test_signature_matches_torch skips any torch-only underscore parameter)
PRIVATE_ONLY_IN_TORCH = {"func.jacrev": ("_preallocate_and_copy",)}

SIGNATURE_PATHS = [*FUNC, "func.rearrange", *FORWARD_AD, *FUNCTIONAL, *AUTOGRAD, *FUNCTION]
EXTRA_NAMES = [
    "autograd.Function.needs_input_grad",
    "autograd.function.BackwardCFunction",
    "autograd.function.FunctionMeta",
    "autograd.function.InplaceFunction",
]
EXISTENCE_PATHS = [*SIGNATURE_PATHS, *EXTRA_NAMES]


def _params(paths, xfail):
    return [
        pytest.param(p, id=p, marks=pytest.mark.xfail(strict=True, reason=xfail[p]))
        if p in xfail
        else pytest.param(p, id=p)
        for p in paths
    ]


def _resolve(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _default_key(value):
    if value is inspect.Parameter.empty:
        return "<no default>"
    return (type(value).__name__, repr(value))


def _shape(sig):
    """(name, kind, default) for each parameter; annotations ignored."""
    return [(p.name, p.kind.name, _default_key(p.default)) for p in sig.parameters.values()]


# -------------------------------------------------------------------------------------
# coverage, existence, signatures
# -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "prefix"),
    [
        ("func", "func."),
        ("autograd.forward_ad", "autograd.forward_ad."),
        ("autograd.functional", "autograd.functional."),
        ("autograd.function", "autograd.function."),
    ],
)
def test_every_public_torch_name_is_covered(module, prefix):
    covered = {
        p.replace("autograd.Function", "autograd.function.Function") for p in EXISTENCE_PATHS
    }
    names = _resolve(torch, module).__all__
    assert sorted(n for n in names if prefix + n not in covered) == []


@pytest.mark.parametrize("path", _params(EXISTENCE_PATHS, EXISTENCE_XFAIL))
def test_exists_at_same_path(path):
    theirs = _resolve(torch, path)
    ours = _resolve(numbagrad, path)
    if callable(theirs):
        assert callable(ours)


@pytest.mark.parametrize("path", _params(SIGNATURE_PATHS, SIGNATURE_XFAIL))
def test_signature_matches_torch(path):
    theirs = inspect.signature(_resolve(torch, path))
    ours = inspect.signature(_resolve(numbagrad, path))
    ours_names = set(ours.parameters)
    private = tuple(
        name for name in theirs.parameters if name.startswith("_") and name not in ours_names
    )
    # noted in PRIVATE_ONLY_IN_TORCH, not a failure
    expected = [p for p in _shape(theirs) if p[0] not in private]
    assert _shape(ours) == expected


def test_vmap_is_func_vmap():
    assert inspect.signature(numbagrad.vmap) == inspect.signature(numbagrad.func.vmap)


@pytest.mark.parametrize(
    "name", ["apply", "forward", "backward", "setup_context", "jvp", "vjp", "vmap", *CTX_METHODS]
)
def test_function_member_kind(name):
    """staticmethod / classmethod / plain method, as in torch."""

    def kind(lib):
        return type(inspect.getattr_static(lib.autograd.Function, name)).__name__

    assert kind(numbagrad) == kind(torch)


def test_function_vjp_is_backward_alias():
    for lib in (torch, numbagrad):
        assert lib.autograd.Function.vjp is lib.autograd.Function.backward


def test_generate_vmap_rule_default():
    assert (
        numbagrad.autograd.Function.generate_vmap_rule is torch.autograd.Function.generate_vmap_rule
    )


def test_unpacked_dual_tensor_fields():
    ours, theirs = (lib.autograd.forward_ad.UnpackedDualTensor for lib in (numbagrad, torch))
    assert ours._fields == theirs._fields == ("primal", "tangent")
    assert issubclass(ours, tuple)


@pytest.mark.parametrize("method", ["__enter__", "__exit__"])
def test_dual_level_is_a_context_manager(method):
    assert callable(getattr(numbagrad.autograd.forward_ad.dual_level(), method))


# -------------------------------------------------------------------------------------
# behaviour: documented keywords on a tiny example, both libraries
# -------------------------------------------------------------------------------------


def _t(lib, values=(1.0, 2.0, 3.0), requires_grad=False):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=requires_grad)


def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


def _norm(value):
    """Library-independent form of a result: tensors to rounded lists, recursively."""
    if isinstance(value, (torch.Tensor, numbagrad.Tensor)):
        return ("tensor", tuple(value.shape), np.round(value.detach().numpy(), 6).tolist())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, tuple(_norm(v) for v in value))
    if isinstance(value, (list, tuple)):
        return tuple(_norm(v) for v in value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def _run(case, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _norm(case(lib))
    except Exception as e:
        return ("raises", type(e).__name__)


def _case_vmap(lib):
    f = lib.vmap(lambda x, y: x * y, in_dims=(0, None), out_dims=1, chunk_size=1)
    return f(_ones(lib, 3, 2), _t(lib, (1.0, 2.0)))


def _case_func_vmap_randomness_same(lib):
    out = lib.func.vmap(lambda x: x + lib.rand(()), randomness="same")(lib.zeros(3))
    return out.std()


def _case_func_vmap_randomness_error(lib):
    return lib.func.vmap(lambda x: x + lib.rand(()), randomness="error")(lib.zeros(3))


def _case_grad(lib):
    f = lib.func.grad(lambda x, y: ((x * y).sum(), y), argnums=1, has_aux=True)
    return f(_t(lib), _t(lib, (4.0, 5.0, 6.0)))


def _case_grad_and_value(lib):
    f = lib.func.grad_and_value(lambda x: ((x * x).sum(), x.sin()), argnums=(0,), has_aux=True)
    return f(_t(lib))


def _case_vjp(lib):
    out, fn, aux = lib.func.vjp(lambda x: (x.sin(), x), _t(lib), has_aux=True)
    return out, fn(_ones(lib, 3)), aux


def _case_jvp(lib):
    f = lambda x: (x.sin(), x)  # noqa: E731
    return lib.func.jvp(f, (_t(lib),), (_ones(lib, 3),), strict=True, has_aux=True)


def _case_linearize(lib):
    out, fn = lib.func.linearize(lambda x, y: x.sin() * y, _t(lib), _t(lib))
    return out, fn(_ones(lib, 3), _ones(lib, 3))


def _case_jacrev(lib):
    f = lambda x, y: ((x * y).sin(), x)  # noqa: E731
    return lib.func.jacrev(f, argnums=(0, 1), has_aux=True, chunk_size=1)(
        _t(lib), _t(lib, (4.0, 5.0, 6.0))
    )


def _case_jacfwd(lib):
    f = lambda x: (x * x, x.sum())  # noqa: E731
    return lib.func.jacfwd(f, argnums=0, has_aux=True, randomness="same")(_t(lib))


def _case_jacfwd_randomness_error(lib):
    return lib.func.jacfwd(lambda x: x + lib.rand(3, dtype=lib.float64))(_t(lib))


def _case_hessian(lib):
    return lib.func.hessian(lambda x, y: (x * x * y**3).sum(), argnums=1)(_t(lib), _t(lib))


def _linear(lib):
    return lib.nn.Linear(2, 1)


def _case_functional_call(lib):
    params = {"weight": _ones(lib, 1, 2), "bias": lib.zeros(1, dtype=lib.float64)}
    return lib.func.functional_call(
        _linear(lib), params, args=(_ones(lib, 1, 2),), kwargs=None, tie_weights=False, strict=True
    )


def _case_functional_call_strict_missing(lib):
    return lib.func.functional_call(
        _linear(lib), {"weight": _ones(lib, 1, 2)}, (_ones(lib, 1, 2),), strict=True
    )


def _case_functional_call_kwargs(lib):
    class M(lib.nn.Module):
        def forward(self, x, *, k=1.0):
            return x * k

    return lib.func.functional_call(M(), {}, _ones(lib, 2), {"k": 3.0})


def _case_functional_call_dicts(lib):
    dicts = ({"weight": _ones(lib, 1, 2)}, {"bias": lib.zeros(1, dtype=lib.float64)})
    return lib.func.functional_call(_linear(lib), dicts, (_ones(lib, 1, 2),))


def _case_stack_module_state(lib):
    params, buffers = lib.func.stack_module_state(models=[_linear(lib), _linear(lib)])
    return sorted((k, tuple(v.shape)) for k, v in params.items()), buffers


def _case_functionalize(lib):
    def f(x):
        y = x.clone()
        y.add_(1)
        return y

    return lib.func.functionalize(f, remove="mutations_and_views")(_t(lib))


def _case_functionalize_bad_remove(lib):
    return lib.func.functionalize(lambda x: x, remove="bogus")


def _case_debug_unwrap(lib):
    shapes = []

    def f(x):
        shapes.append(tuple(lib.func.debug_unwrap(x, recurse=False).shape))
        shapes.append(tuple(lib.func.debug_unwrap(x, recurse=True).shape))
        return x

    lib.func.vmap(lib.func.vmap(f))(lib.ones(2, 3))
    return shapes


def _case_replace_all_batch_norm_modules_(lib):
    root = lib.nn.Sequential(lib.nn.Linear(2, 2))
    return lib.func.replace_all_batch_norm_modules_(root=root) is root


def _case_forward_ad_level_keyword(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(_t(lib), _ones(lib, 3), level=None)
        return fw.unpack_dual(dual.sin(), level=None)


def _case_forward_ad_enter_exit(lib):
    fw = lib.autograd.forward_ad
    level = fw.enter_dual_level()
    try:
        tangent = fw.unpack_dual(fw.make_dual(_t(lib), _ones(lib, 3), level=level)).tangent
    finally:
        fw.exit_dual_level(level=level)
    return level, tangent


def _case_forward_ad_dual_level_value(lib):
    with lib.autograd.forward_ad.dual_level() as level:
        return level


def _case_forward_ad_dual_level_decorator(lib):
    fw = lib.autograd.forward_ad

    @fw.dual_level()
    def f(x):
        return fw.unpack_dual(fw.make_dual(x, x * 2).cos()).tangent

    return f(_t(lib))


def _case_unpack_dual_outside_level(lib):
    return lib.autograd.forward_ad.unpack_dual(_t(lib))


def _af(lib):
    return lib.autograd.functional


def _case_af_jacobian(lib):
    return _af(lib).jacobian(
        lambda x: x.sin(), _t(lib), create_graph=False, strict=False, vectorize=True,
        strategy="forward-mode",
    )  # fmt: skip


def _case_af_jacobian_strict_forward(lib):
    return _af(lib).jacobian(lambda x: x, _t(lib), strict=True, strategy="forward-mode")


def _case_af_jacobian_forward_unvectorized(lib):
    return _af(lib).jacobian(lambda x: x.sin(), _t(lib), strategy="forward-mode")


def _case_af_jacobian_strict(lib):
    return _af(lib).jacobian(lambda x: _ones(lib, 3), _t(lib), strict=True)


def _case_af_jacobian_create_graph(lib):
    return _af(lib).jacobian(lambda x: x**3, _t(lib), create_graph=True).requires_grad


def _case_af_hessian(lib):
    return _af(lib).hessian(
        lambda x: (x**3).sum(), _t(lib), create_graph=False, strict=False, vectorize=True,
        outer_jacobian_strategy="forward-mode",
    )  # fmt: skip


def _case_af_vjp(lib):
    out, v = _af(lib).vjp(lambda x: x**2, _t(lib), v=_ones(lib, 3), create_graph=True, strict=True)
    return out, v, v.requires_grad


def _case_af_jvp(lib):
    out, v = _af(lib).jvp(lambda x: x**2, _t(lib), v=_ones(lib, 3), create_graph=False, strict=True)
    return out, v, v.requires_grad


def _case_af_jvp_v_none(lib):
    return _af(lib).jvp(lambda x: x**2, _t(lib))


def _case_af_hvp_vhp(lib):
    f = lambda x: (x**3).sum()  # noqa: E731
    out, hv = _af(lib).hvp(f, _t(lib), v=_ones(lib, 3), create_graph=False, strict=True)
    out2, vh = _af(lib).vhp(f, _t(lib), v=_ones(lib, 3), create_graph=True, strict=False)
    return out, hv, out2, vh, vh.requires_grad


def _case_grad_keywords(lib):
    x, y = _t(lib, requires_grad=True), _t(lib, requires_grad=True)
    g = lib.autograd.grad(
        outputs=(x**2).sum(), inputs=[x, y], grad_outputs=lib.tensor(2.0, dtype=lib.float64),
        retain_graph=True, create_graph=True, only_inputs=True, allow_unused=True,
        is_grads_batched=False, materialize_grads=True,
    )  # fmt: skip
    return g, g[0].requires_grad


def _case_grad_batched(lib):
    x = _t(lib, requires_grad=True)
    return lib.autograd.grad(
        x**2, x, grad_outputs=lib.eye(3, dtype=lib.float64), is_grads_batched=True
    )


def _case_grad_unused(lib):
    x, y = _t(lib, requires_grad=True), _t(lib, requires_grad=True)
    return lib.autograd.grad((x**2).sum(), [x, y])


def _case_grad_dict_inputs(lib):
    x, y = _t(lib, requires_grad=True), _t(lib, requires_grad=True)
    return lib.autograd.grad((x**2).sum(), {"x": x, "y": y}, allow_unused=True)


def _case_backward_keywords(lib):
    x, y = _t(lib, requires_grad=True), _t(lib, requires_grad=True)
    lib.autograd.backward(
        tensors=(x * y).sum(), grad_tensors=lib.tensor(3.0, dtype=lib.float64),
        retain_graph=True, create_graph=False, inputs=[x],
    )  # fmt: skip
    return x.grad, y.grad


def _case_backward_grad_variables(lib):
    x = _t(lib, requires_grad=True)
    lib.autograd.backward(x * 2, grad_variables=_ones(lib, 3))
    return x.grad


def _case_backward_dict_inputs(lib):
    x, y = _t(lib, requires_grad=True), _t(lib, requires_grad=True)
    lib.autograd.backward((x * y).sum(), inputs={"x": x})
    return x.grad, y.grad


def _case_gradcheck_keywords(lib):
    x = _t(lib, requires_grad=True)
    return lib.autograd.gradcheck(
        lambda x: x.sin(), (x,), eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
        nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=True,
        check_batched_grad=True, check_batched_forward_grad=True, check_forward_ad=True,
        check_backward_ad=True, fast_mode=True, masked=None,
    )  # fmt: skip


def _case_gradgradcheck_keywords(lib):
    x = _t(lib, requires_grad=True)
    return lib.autograd.gradgradcheck(
        lambda x: x.sin(), (x,), grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
        gen_non_contig_grad_outputs=True, raise_exception=True, nondet_tol=0.0,
        check_undefined_grad=True, check_grad_dtypes=True, check_batched_grad=True,
        check_fwd_over_rev=True, check_rev_over_rev=True, fast_mode=True, masked=False,
    )  # fmt: skip


def _off_by_a_little(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2.1

    return F.apply


def _case_gradcheck_tolerances(lib):
    x = _t(lib, requires_grad=True)
    f = _off_by_a_little(lib)
    return (
        lib.autograd.gradcheck(f, (x,), atol=0.5, rtol=0.0),
        lib.autograd.gradcheck(f, (x,), raise_exception=False),
        lib.autograd.gradgradcheck(lambda x: (x**2).detach() + x, (x,), raise_exception=False),
    )


def _case_gradcheck_raises(lib):
    return lib.autograd.gradcheck(_off_by_a_little(lib), (_t(lib, requires_grad=True),))


KEYWORD_CASES = [
    _case_vmap,
    _case_func_vmap_randomness_same,
    _case_func_vmap_randomness_error,
    _case_grad,
    _case_grad_and_value,
    _case_vjp,
    _case_jvp,
    _case_linearize,
    _case_jacrev,
    _case_jacfwd,
    _case_jacfwd_randomness_error,
    _case_hessian,
    _case_functional_call,
    _case_functional_call_strict_missing,
    _case_functional_call_kwargs,
    _case_functional_call_dicts,
    _case_stack_module_state,
    _case_functionalize,
    _case_functionalize_bad_remove,
    _case_debug_unwrap,
    _case_replace_all_batch_norm_modules_,
    _case_forward_ad_level_keyword,
    _case_forward_ad_enter_exit,
    _case_forward_ad_dual_level_value,
    _case_forward_ad_dual_level_decorator,
    _case_unpack_dual_outside_level,
    _case_af_jacobian,
    _case_af_jacobian_strict_forward,
    _case_af_jacobian_forward_unvectorized,
    _case_af_jacobian_strict,
    _case_af_jacobian_create_graph,
    _case_af_hessian,
    _case_af_vjp,
    _case_af_jvp,
    _case_af_jvp_v_none,
    _case_af_hvp_vhp,
    _case_grad_keywords,
    _case_grad_batched,
    _case_grad_unused,
    _case_grad_dict_inputs,
    _case_backward_keywords,
    _case_backward_grad_variables,
    _case_backward_dict_inputs,
    _case_gradcheck_keywords,
    _case_gradgradcheck_keywords,
    _case_gradcheck_tolerances,
    _case_gradcheck_raises,
]


def _case_id(case):
    fn = case.values[0] if hasattr(case, "values") else case
    return fn.__name__.removeprefix("_case_")


@pytest.mark.parametrize("case", KEYWORD_CASES, ids=_case_id)
def test_documented_keywords_like_torch(case):
    theirs = _run(case, torch)
    assert _run(case, numbagrad) == theirs


# -------------------------------------------------------------------------------------
# behaviour of the (*args, **kwargs) wrappers: Function.apply/forward, construction
# -------------------------------------------------------------------------------------


def _scale_function(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, scale=2.0):
            return x * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.scale = inputs[1]
            ctx.flags = ctx.needs_input_grad

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None

    return Scale


def _ctx_style_function(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=2.0):
            ctx.scale = scale
            ctx.flags = ctx.needs_input_grad
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None

    return Scale


@pytest.mark.parametrize("make", [_scale_function, _ctx_style_function], ids=["setup", "ctx"])
def test_function_apply_binds_defaults_and_keywords(make):
    def case(lib):
        fn = make(lib)
        x = _t(lib, requires_grad=True)
        by_keyword = fn.apply(x, scale=5.0)
        by_default = fn.apply(x)
        by_position = fn.apply(x, 3.0)
        by_keyword.sum().backward()
        return by_keyword, by_default, by_position, x.grad

    assert _run(case, numbagrad) == _run(case, torch)


@pytest.mark.parametrize(
    ("make", "call"),
    [
        pytest.param(_scale_function, "keyword", id="setup-keyword"),
        pytest.param(_scale_function, "default", id="setup-default"),
        pytest.param(_scale_function, "positional", id="setup-positional"),
        pytest.param(_ctx_style_function, "keyword", id="ctx-keyword"),
        pytest.param(_ctx_style_function, "default", id="ctx-default"),
        pytest.param(_ctx_style_function, "positional", id="ctx-positional"),
    ],
)
def test_function_apply_needs_input_grad_counts_bound_arguments(make, call):
    def case(lib):
        x = _t(lib, requires_grad=True)
        args, kwargs = {"keyword": ((x,), {"scale": 5.0}), "default": ((x,), {})}.get(
            call, ((x, 5.0), {})
        )
        return make(lib).apply(*args, **kwargs).grad_fn.flags

    assert _run(case, numbagrad) == _run(case, torch)


def test_function_base_forward_raises_like_torch():
    def case(lib):
        return lib.autograd.Function.forward(None, _t(lib))

    assert _run(case, numbagrad) == _run(case, torch) == ("raises", "NotImplementedError")


def test_function_instantiation_warns_like_torch():
    def warned(lib, cls):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cls(lib)()
        return [w.category.__name__ for w in caught]

    for cls in (
        lambda lib: lib.autograd.Function,
        lambda lib: lib.autograd.function.NestedIOFunction,
    ):
        assert warned(numbagrad, cls) == warned(torch, cls)


def test_ctx_set_materialize_grads_value_keyword():
    def case(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(value=False)
                return x.clone(), x.clone()

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 if g2 is None else g1 + g2

        x = _t(lib, requires_grad=True)
        Two.apply(x)[0].sum().backward()
        return x.grad

    assert _run(case, numbagrad) == _run(case, torch)


def _once_square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    return Square


def test_once_differentiable_double_backward_raises_like_torch():
    def case(lib):
        x = _t(lib, requires_grad=True)
        go = _ones(lib, 3).requires_grad_()
        (g,) = lib.autograd.grad(_once_square(lib).apply(x), x, go, create_graph=True)
        first = (g, g.requires_grad)
        g.sum().backward()
        return first

    assert _run(case, numbagrad) == _run(case, torch) == ("raises", "RuntimeError")


def test_once_differentiable_result_requires_grad_like_torch():
    def case(lib):
        x = _t(lib, requires_grad=True)
        (g,) = lib.autograd.grad(_once_square(lib).apply(x).sum(), x, create_graph=True)
        return g, g.requires_grad

    assert _run(case, numbagrad) == _run(case, torch)


def test_function_apply_keyword_argument_needs_a_gradient_like_torch():
    def case(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale=2.0):
                ctx.scale = scale
                return x * scale

            @staticmethod
            def backward(ctx, g):
                return g * ctx.scale

        x = _t(lib, requires_grad=True)
        Scale.apply(x, scale=3.0).sum().backward()
        return x.grad

    assert _run(case, numbagrad) == _run(case, torch)
