"""Differential tests of the ``numbagrad.func`` API EDGES against ``torch.func``, at a single
transform level or shallow nesting (deep nesting: ``test_transforms_nested_diff.py``).

Each case is a function of the module (``numbagrad`` or ``torch``) that builds its inputs
from a seeded NumPy generator and returns a tree of tensors (and plain Python values); both
modules run it and the results must agree (float64 to ``rtol=1e-10, atol=1e-12``, float32 to
``rtol=1e-5``). Where PyTorch raises, numbagrad must raise an exception of the same builtin
type. The families covered:

* argument validation of ``grad``/``grad_and_value``: ``argnums`` (int, tuple, negative,
  out of range, duplicate, non-int), ``has_aux`` with aux trees of tensors and non-tensor
  leaves, outputs that are not scalars, not tensors, integer, or tuples without has_aux;
* ``vmap``: ``in_dims``/``out_dims`` trees (ints, None, negative, dicts, lists), mismatched
  and zero batch sizes, ``chunk_size``, ``randomness``, non-tensor inputs and outputs,
  kwargs, bool/int tensors, Python-scalar outputs;
* 0-d, empty and float32 inputs, integer inputs to ``grad``;
* tensor metadata (shape, dim, dtype, size, len, numel) read inside transforms;
* in-place ops and index assignment inside transforms, mutation of captured tensors;
* ``jacrev``/``jacfwd``/``hessian`` argnums/has_aux/output trees/chunk_size/randomness;
* ``vjp`` cotangent checks, ``jvp`` tangent checks, ``linearize``;
* ``functional_call`` and ``stack_module_state`` with ``nn.Linear``.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _diff import ATOL32, RTOL32, Cases, assert_same, check, raises, to_np  # noqa: E402
from _diff import t as _t  # noqa: E402

import numbagrad  # noqa: E402

pytestmark = pytest.mark.transforms

CASES = Cases()
_case = CASES.case
_f32 = CASES.case(rtol=RTOL32, atol=ATOL32)  # a case compared at float32 tolerance


X_KW = "torch's jacrev/jacfwd wrappers take no **kwargs (TypeError); numbagrad forwards them"


def _f2(m):
    """f(x, y) -> scalar, used by the argnums cases."""
    return lambda x, y: (x.sin() * y + y * y).sum()


# == grad / grad_and_value: argnums ===========================================================
@_case()
def grad_argnums_int1(m):
    return m.func.grad(_f2(m), argnums=1)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_tuple(m):
    return m.func.grad(_f2(m), argnums=(0, 1))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_tuple_reversed(m):
    return m.func.grad(_f2(m), argnums=(1, 0))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_single_tuple(m):
    return m.func.grad(_f2(m), argnums=(1,))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_negative(m):
    return m.func.grad(_f2(m), argnums=-1)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_negative_tuple(m):
    return m.func.grad(_f2(m), argnums=(-1, -2))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_out_of_range(m):
    return m.func.grad(_f2(m), argnums=2)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_negative_out_of_range(m):
    return m.func.grad(_f2(m), argnums=-3)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_tuple_out_of_range(m):
    return m.func.grad(_f2(m), argnums=(0, 5))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_duplicate(m):
    return m.func.grad(_f2(m), argnums=(0, 0))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_duplicate_via_negative(m):
    return m.func.grad(_f2(m), argnums=(1, -1))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_float(m):
    return m.func.grad(_f2(m), argnums=0.0)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_list(m):
    return m.func.grad(_f2(m), argnums=[0, 1])(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_empty_tuple(m):
    return m.func.grad(_f2(m), argnums=())(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_nested_tuple(m):
    return m.func.grad(_f2(m), argnums=((0, 1),))(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_bool(m):
    return m.func.grad(_f2(m), argnums=True)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_string(m):
    return m.func.grad(_f2(m), argnums="0")(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_argnums_no_positional_args(m):
    return m.func.grad(lambda x=None: x.sum())(x=_t(m, 3))


@_case()
def grad_argnums_to_python_float(m):
    return m.func.grad(lambda x, s: (x * s).sum(), argnums=1)(_t(m, 3), 2.0)


@_case()
def grad_argnums_to_none(m):
    return m.func.grad(lambda x, s: x.sum(), argnums=1)(_t(m, 3), None)


@_case()
def grad_non_diff_python_arg(m):
    return m.func.grad(lambda x, n, s: (x**n * s).sum())(_t(m, 3), 3, 0.5)


@_case()
def grad_kwargs_not_differentiated(m):
    f = lambda x, *, w: (x * w).sum()  # noqa: E731
    return m.func.grad(f)(_t(m, 3), w=_t(m, 3, k=1))


@_case()
def grad_pytree_dict_arg(m):
    f = lambda d: (d["a"].sin() * d["b"]).sum()  # noqa: E731
    return m.func.grad(f)({"a": _t(m, 3), "b": _t(m, 3, k=1)})


@_case()
def grad_pytree_list_arg(m):
    f = lambda xs: (xs[0] * xs[1] * xs[2]).sum()  # noqa: E731
    return m.func.grad(f)([_t(m, 2), _t(m, 2, k=1), _t(m, 2, k=2)])


@_case()
def grad_pytree_nested_tuple_arg(m):
    f = lambda t: (t[0] * t[1][0] + t[1][1]["z"]).sum()  # noqa: E731
    return m.func.grad(f)((_t(m, 2), (_t(m, 2, k=1), {"z": _t(m, 2, k=2)})))


@_case()
def grad_pytree_arg_with_non_tensor_leaf(m):
    f = lambda d: (d["a"] * d["s"]).sum()  # noqa: E731
    return m.func.grad(f)({"a": _t(m, 3), "s": 2.0})


# == grad: inputs ==============================================================================
@_case()
def grad_int_input(m):
    return m.func.grad(lambda x: (x * 2).sum())(m.tensor([1, 2, 3]))


@_case()
def grad_bool_input(m):
    return m.func.grad(lambda x: x.sum())(m.tensor([True, False]))


@_case()
def grad_python_float_input(m):
    return m.func.grad(lambda x: x * 2)(1.5)


@_case()
def grad_0d_input(m):
    return m.func.grad(lambda x: x.sin() * x)(_t(m))


@_case()
def grad_empty_input(m):
    return m.func.grad(lambda x: (x * 2).sum())(_t(m, 0))


@_case()
def grad_empty_3x0_input(m):
    return m.func.grad(lambda x: x.exp().sum())(_t(m, 3, 0))


@_f32
def grad_float32_input(m):
    x = _t(m, 4, dtype=m.float32)
    return m.func.grad(lambda x: (x.sin() * x.exp()).sum())(x)


@_f32
def grad_float32_input_float64_capture(m):
    x, c = _t(m, 4, dtype=m.float32), _t(m, 4, k=1)
    return m.func.grad(lambda x: (x * c).sum())(x)


@_case()
def grad_input_requires_grad_already(m):
    x = _t(m, 3).requires_grad_()
    return m.func.grad(lambda x: (x**3).sum())(x)


@_case()
def grad_input_is_view(m):
    base = _t(m, 2, 3)
    return m.func.grad(lambda x: (x**2).sum())(base[:, 1])


# == grad: outputs =============================================================================
@_case()
def grad_output_vector(m):
    return m.func.grad(lambda x: x * 2)(_t(m, 3))


@_case()
def grad_output_shape_1(m):
    return m.func.grad(lambda x: x.sum(0, keepdim=True))(_t(m, 3))


@_case()
def grad_output_python_float(m):
    return m.func.grad(lambda x: 1.0)(_t(m, 3))


@_case()
def grad_output_none(m):
    return m.func.grad(lambda x: None)(_t(m, 3))


@_case()
def grad_output_tuple_without_aux(m):
    return m.func.grad(lambda x: (x.sum(), x.sum()))(_t(m, 3))


@_case()
def grad_output_list_without_aux(m):
    return m.func.grad(lambda x: [x.sum()])(_t(m, 3))


@_case()
def grad_output_independent_of_input(m):
    c = _t(m, 3, k=1)
    return m.func.grad(lambda x: c.sum())(_t(m, 3))


@_case()
def grad_output_new_constant(m):
    return m.func.grad(lambda x: m.tensor(2.0, dtype=m.float64))(_t(m, 3))


@_case()
def grad_output_integer_dtype(m):
    return m.func.grad(lambda x: (x > 0).sum())(_t(m, 3))


@_case()
def grad_output_bool(m):
    return m.func.grad(lambda x: (x > 0).all())(_t(m, 3))


@_case()
def grad_output_detached(m):
    return m.func.grad(lambda x: (x * 2).sum().detach())(_t(m, 3))


@_case()
def grad_output_is_input_0d(m):
    return m.func.grad(lambda x: x)(_t(m))


@_f32
def grad_output_float32_of_float64_input(m):
    return m.func.grad(lambda x: (x * 3).float().sum())(_t(m, 3))


# == grad: has_aux =============================================================================
def _aux_case(m, aux_of):
    def f(x):
        return (x.sin()).sum(), aux_of(m, x)

    return m.func.grad(f, has_aux=True)(_t(m, 3))


@_case()
def grad_aux_tensor(m):
    return _aux_case(m, lambda m, x: x.cos())


@_case()
def grad_aux_input_itself(m):
    return _aux_case(m, lambda m, x: x)


@_case()
def grad_aux_tuple_of_tensors(m):
    return _aux_case(m, lambda m, x: (x * 2, x.sum()))


@_case()
def grad_aux_dict_of_tensors(m):
    return _aux_case(m, lambda m, x: {"a": x.exp(), "b": [x[0], (x[1],)]})


@_case()
def grad_aux_python_float(m):
    return _aux_case(m, lambda m, x: 1.5)


@_case()
def grad_aux_python_int(m):
    return _aux_case(m, lambda m, x: 7)


@_case()
def grad_aux_none(m):
    return _aux_case(m, lambda m, x: None)


@_case()
def grad_aux_string(m):
    return _aux_case(m, lambda m, x: "tag")


@_case()
def grad_aux_mixed_tree(m):
    return _aux_case(m, lambda m, x: {"t": x * 3, "n": 4, "s": "s", "f": 0.5})


@_case()
def grad_aux_int_tensor(m):
    return _aux_case(m, lambda m, x: (x > 0).sum())


@_case()
def grad_aux_not_a_tuple(m):
    return m.func.grad(lambda x: x.sum(), has_aux=True)(_t(m, 3))


@_case()
def grad_aux_tuple_of_three(m):
    return m.func.grad(lambda x: (x.sum(), x, x), has_aux=True)(_t(m, 3))


@_case()
def grad_aux_list_pair(m):
    return m.func.grad(lambda x: [x.sum(), x], has_aux=True)(_t(m, 3))


@_case()
def grad_aux_output_not_scalar(m):
    return m.func.grad(lambda x: (x * 2, x), has_aux=True)(_t(m, 3))


@_case()
def grad_and_value_basic(m):
    return m.func.grad_and_value(lambda x: (x**3).sum())(_t(m, 3))


@_case()
def grad_and_value_aux(m):
    f = lambda x, y: ((x * y).sum(), {"p": x + y})  # noqa: E731
    return m.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(_t(m, 3), _t(m, 3, k=1))


@_case()
def grad_and_value_output_not_scalar(m):
    return m.func.grad_and_value(lambda x: x * 2)(_t(m, 3))


@_case()
def grad_and_value_argnums_out_of_range(m):
    return m.func.grad_and_value(lambda x: x.sum(), argnums=1)(_t(m, 3))


# == grad: grad mode, metadata, in-place =======================================================
@_case()
def grad_under_outer_no_grad(m):
    with m.no_grad():
        return m.func.grad(lambda x: (x**2).sum())(_t(m, 3))


@_case()
def grad_inner_no_grad_cuts(m):
    def f(x):
        with m.no_grad():
            c = x * 2
        return (c * x).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def grad_inner_detach_cuts(m):
    return m.func.grad(lambda x: (x.detach() * x).sum())(_t(m, 3))


@_case()
def grad_metadata(m):
    seen = {}

    def f(x):
        seen.update(
            shape=tuple(x.shape),
            dim=x.dim(),
            ndim=x.ndim,
            dtype=x.dtype,
            size=tuple(x.size()),
            size1=x.size(1),
            size_neg=x.size(-1),
            len=len(x),
            numel=x.numel(),
            floating=x.is_floating_point(),
        )
        return x.sum()

    m.func.grad(f)(_t(m, 2, 3))
    return seen


@_case()
def grad_metadata_requires_grad(m):
    seen = {}

    def f(x):
        y = x * 2
        seen.update(
            x=x.requires_grad, x_leaf=x.is_leaf, x_fn=x.grad_fn is None, x_grad=x.grad is None
        )
        seen.update(y=y.requires_grad, y_leaf=y.is_leaf)
        return y.sum()

    m.func.grad(f)(_t(m, 3))
    return seen


@_case()
def grad_inplace_on_clone(m):
    def f(x):
        y = x.clone()
        y.mul_(x).add_(1.0)
        return y.sin().sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def grad_inplace_on_intermediate(m):
    def f(x):
        y = x * 2
        y.sin_()
        return (y * x).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def grad_intermediate_has_grad_fn(m):
    seen = {}

    def f(x):
        y = x * 2
        seen.update(y_fn=y.grad_fn is None)
        return y.sum()

    m.func.grad(f)(_t(m, 3))
    return seen


@_case()
def grad_inplace_on_input(m):
    def f(x):
        x.add_(1.0)
        return (x * x).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def grad_index_assign_into_zeros(m):
    def f(x):
        y = m.zeros(3, dtype=m.float64)
        y[0] = x[1] * 2
        y[2] = x.sum()
        return (y * y).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def grad_slice_assign_on_clone(m):
    def f(x):
        y = x.clone()
        y[1:] = x[1:] * x[:2]
        y[0] += x[2]
        return (y**2).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def grad_inplace_into_captured(m):
    c = _t(m, 3, k=1)

    def f(x):
        c.add_(x)
        return c.sum()

    g = m.func.grad(f)(_t(m, 3))
    return g, c


@_case()
def grad_out_of_place_copy_of_captured(m):
    c = _t(m, 3, k=1)

    def f(x):
        d = c.clone()
        d = d + x
        return (d * d).sum()

    return m.func.grad(f)(_t(m, 3)), c


@_case()
def grad_result_differentiable_by_outer_autograd(m):
    x = _t(m, 3).requires_grad_()
    g = m.func.grad(lambda x: (x**3).sum())(x)
    rg = g.requires_grad
    g.sum().backward()
    return rg, x.grad


@_case()
def vmap_result_differentiable_by_outer_autograd(m):
    x = _t(m, 4, 3).requires_grad_()
    y = m.func.vmap(lambda r: r.sin() * r.sum())(x)
    y.sum().backward()
    return y.requires_grad, x.grad


@_case()
def jvp_result_differentiable_by_outer_autograd(m):
    x = _t(m, 3).requires_grad_()
    p, t = m.func.jvp(lambda r: r.sin(), (x,), (_t(m, 3, k=1),))
    (t.sum() + p.sum()).backward()
    return t.requires_grad, x.grad


# == vmap: in_dims =============================================================================
def _vf(m):
    return lambda x, y: x.sin() * y + x.sum()


@_case()
def vmap_in_dims_int1(m):
    return m.func.vmap(lambda x: x * x.sum(), in_dims=1)(_t(m, 3, 4))


@_case()
def vmap_in_dims_negative(m):
    return m.func.vmap(lambda x: x.cumsum(0), in_dims=-1)(_t(m, 3, 4))


@_case()
def vmap_in_dims_negative_2(m):
    return m.func.vmap(lambda x: x.sum(-1), in_dims=-2)(_t(m, 2, 3, 4))


@_case()
def vmap_in_dims_tuple_none(m):
    return m.func.vmap(_vf(m), in_dims=(0, None))(_t(m, 4, 3), _t(m, 3, k=1))


@_case()
def vmap_in_dims_tuple_mixed(m):
    return m.func.vmap(_vf(m), in_dims=(1, 0))(_t(m, 3, 4), _t(m, 4, 3, k=1))


@_case()
def vmap_in_dims_all_none(m):
    return m.func.vmap(_vf(m), in_dims=None)(_t(m, 3), _t(m, 3, k=1))


@_case()
def vmap_in_dims_tuple_all_none(m):
    return m.func.vmap(_vf(m), in_dims=(None, None))(_t(m, 3), _t(m, 3, k=1))


@_case()
def vmap_in_dims_list_top(m):
    return m.func.vmap(_vf(m), in_dims=[0, 0])(_t(m, 4, 3), _t(m, 4, 3, k=1))


@_case()
def vmap_in_dims_too_long(m):
    return m.func.vmap(lambda x: x * 2, in_dims=(0, 0))(_t(m, 4, 3))


@_case()
def vmap_in_dims_too_short(m):
    return m.func.vmap(_vf(m), in_dims=(0,))(_t(m, 4, 3), _t(m, 4, 3, k=1))


@_case()
def vmap_in_dims_out_of_range(m):
    return m.func.vmap(lambda x: x * 2, in_dims=2)(_t(m, 4, 3))


@_case()
def vmap_in_dims_negative_out_of_range(m):
    return m.func.vmap(lambda x: x * 2, in_dims=-3)(_t(m, 4, 3))


@_case()
def vmap_in_dims_float(m):
    return m.func.vmap(lambda x: x * 2, in_dims=0.0)(_t(m, 4, 3))


@_case()
def vmap_in_dims_string(m):
    return m.func.vmap(lambda x: x * 2, in_dims="0")(_t(m, 4, 3))


@_case()
def vmap_in_dims_dict_top_level(m):
    return m.func.vmap(lambda d: d["a"], in_dims={"a": 0})({"a": _t(m, 4, 3)})


@_case()
def vmap_returns_shape(m):
    return m.func.vmap(lambda x: x.shape)(_t(m, 4, 3))


@_case()
def vmap_in_dims_dict_arg(m):
    f = lambda d: d["a"] * d["b"].sum()  # noqa: E731
    d = {"a": _t(m, 4, 3), "b": _t(m, 2, 4, k=1)}
    return m.func.vmap(f, in_dims=({"a": 0, "b": 1},))(d)


@_case()
def vmap_in_dims_dict_arg_with_none(m):
    f = lambda d: d["a"] * d["b"]  # noqa: E731
    d = {"a": _t(m, 4, 3), "b": _t(m, 3, k=1)}
    return m.func.vmap(f, in_dims=({"a": 0, "b": None},))(d)


@_case()
def vmap_in_dims_prefix_for_dict(m):
    f = lambda d: d["a"] + d["b"]  # noqa: E731
    return m.func.vmap(f, in_dims=(1,))({"a": _t(m, 3, 4), "b": _t(m, 3, 4, k=1)})


@_case()
def vmap_in_dims_dict_wrong_keys(m):
    f = lambda d: d["a"] + d["b"]  # noqa: E731
    d = {"a": _t(m, 4, 3), "b": _t(m, 4, 3, k=1)}
    return m.func.vmap(f, in_dims=({"a": 0, "c": 0},))(d)


@_case()
def vmap_in_dims_list_for_list_arg(m):
    f = lambda xs: xs[0] * xs[1]  # noqa: E731
    return m.func.vmap(f, in_dims=([0, 1],))([_t(m, 4, 3), _t(m, 3, 4, k=1)])


@_case()
def vmap_in_dims_tuple_for_list_arg(m):
    f = lambda xs: xs[0] * xs[1]  # noqa: E731
    return m.func.vmap(f, in_dims=((0, 1),))([_t(m, 4, 3), _t(m, 3, 4, k=1)])


@_case()
def vmap_in_dims_nested_tuple_arg(m):
    f = lambda p: p[0] * p[1][0] - p[1][1]  # noqa: E731
    x = (_t(m, 4, 3), (_t(m, 3, k=1), _t(m, 3, 4, k=2)))
    return m.func.vmap(f, in_dims=((0, (None, 1)),))(x)


@_case()
def vmap_in_dims_zero_for_python_int(m):
    return m.func.vmap(lambda x, n: x * n, in_dims=(0, 0))(_t(m, 4, 3), 3)


@_case()
def vmap_int_in_dims_with_python_int_arg(m):
    return m.func.vmap(lambda x, n: x * n)(_t(m, 4, 3), 3)


@_case()
def vmap_non_tensor_args_pass_through(m):
    def f(x, n, s, flag, tag):
        assert isinstance(tag, str)
        return x * n + s if flag else x

    return m.func.vmap(f, in_dims=(0, None, None, None, None))(_t(m, 4, 3), 3, 0.5, True, "t")


@_case()
def vmap_none_arg(m):
    f = lambda x, y: x * 2 if y is None else x  # noqa: E731
    return m.func.vmap(f, in_dims=(0, None))(_t(m, 4), None)


@_case()
def vmap_mismatched_batch_sizes(m):
    return m.func.vmap(_vf(m))(_t(m, 4, 3), _t(m, 5, 3, k=1))


@_case()
def vmap_mismatched_batch_sizes_in_dict(m):
    f = lambda d: d["a"] + d["b"]  # noqa: E731
    return m.func.vmap(f)({"a": _t(m, 4, 3), "b": _t(m, 3, 3, k=1)})


@_case()
def vmap_zero_size_batch(m):
    return m.func.vmap(lambda x: x * 2)(_t(m, 0, 3))


@_case()
def vmap_zero_size_batch_reduce(m):
    return m.func.vmap(lambda x: x.sum())(_t(m, 0, 3))


@_case()
def vmap_zero_size_batch_in_dim1(m):
    return m.func.vmap(lambda x: x.sum(), in_dims=1)(_t(m, 3, 0))


@_case()
def vmap_empty_examples(m):
    return m.func.vmap(lambda x: x.sum() + x.mean(dim=0, keepdim=True).sum())(_t(m, 4, 0))


@_case()
def vmap_0d_examples(m):
    return m.func.vmap(lambda x: x * x.exp())(_t(m, 5))


@_case()
def vmap_0d_input_in_dims0(m):
    return m.func.vmap(lambda x: x * 2)(_t(m))


@_case()
def vmap_no_args(m):
    return m.func.vmap(lambda: m.ones(3))()


@_case()
def vmap_kwargs_passed_unbatched(m):
    f = lambda x, *, w: x * w  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 3), w=_t(m, 3, k=1))


@_case()
def vmap_kwargs_python_scalar(m):
    f = lambda x, scale=1.0: x * scale  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 3), scale=3.0)


@_case()
def vmap_kwarg_with_batch_dim_is_not_mapped(m):
    f = lambda x, w=None: (x * w).sum(-1)  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 3), w=_t(m, 4, 3, k=1))


@_case()
def vmap_top_level_alias(m):
    return m.vmap(_vf(m), in_dims=(1, None))(_t(m, 3, 4), _t(m, 3, k=1))


# == vmap: out_dims ============================================================================
@_case()
def vmap_out_dims_1(m):
    return m.func.vmap(lambda x: x.exp(), out_dims=1)(_t(m, 4, 3))


@_case()
def vmap_out_dims_negative(m):
    return m.func.vmap(lambda x: x.exp(), out_dims=-1)(_t(m, 4, 2, 3))


@_case()
def vmap_out_dims_out_of_range(m):
    return m.func.vmap(lambda x: x.exp(), out_dims=3)(_t(m, 4, 3))


@_case()
def vmap_out_dims_tuple(m):
    f = lambda x: (x * 2, x.sum())  # noqa: E731
    return m.func.vmap(f, out_dims=(1, 0))(_t(m, 4, 3))


@_case()
def vmap_out_dims_tuple_wrong_length(m):
    f = lambda x: (x * 2, x.sum())  # noqa: E731
    return m.func.vmap(f, out_dims=(1, 0, 0))(_t(m, 4, 3))


@_case()
def vmap_out_dims_tuple_for_single_output(m):
    return m.func.vmap(lambda x: x * 2, out_dims=(1,))(_t(m, 4, 3))


@_case()
def vmap_out_dims_none_unbatched(m):
    c = _t(m, 3, k=1)
    return m.func.vmap(lambda x: c * 2, out_dims=None)(_t(m, 4, 3))


@_case()
def vmap_out_dims_none_batched(m):
    return m.func.vmap(lambda x: x * 2, out_dims=None)(_t(m, 4, 3))


@_case()
def vmap_out_dims_tuple_with_none(m):
    c = _t(m, 3, k=1)
    f = lambda x: (x * c, c.sum())  # noqa: E731
    return m.func.vmap(f, out_dims=(0, None))(_t(m, 4, 3))


@_case()
def vmap_out_dims_dict(m):
    f = lambda x: {"a": x * 2, "b": x.sum()}  # noqa: E731
    return m.func.vmap(f, out_dims=({"a": 1, "b": 0},))(_t(m, 4, 3))


@_case()
def vmap_out_dims_float(m):
    return m.func.vmap(lambda x: x * 2, out_dims=1.0)(_t(m, 4, 3))


@_case()
def vmap_out_dims_list(m):
    f = lambda x: (x * 2, x.sum())  # noqa: E731
    return m.func.vmap(f, out_dims=[1, 0])(_t(m, 4, 3))


@_case()
def vmap_returns_unbatched_input(m):
    f = lambda x, c: c  # noqa: E731
    return m.func.vmap(f, in_dims=(0, None))(_t(m, 4, 3), _t(m, 2, k=1))


@_case()
def vmap_returns_captured(m):
    c = _t(m, 2, k=1)
    return m.func.vmap(lambda x: c)(_t(m, 4, 3))


@_case()
def vmap_returns_input_itself_out_dims1(m):
    return m.func.vmap(lambda x: x, in_dims=0, out_dims=1)(_t(m, 4, 3))


@_case()
def vmap_returns_python_float(m):
    return m.func.vmap(lambda x: 1.0)(_t(m, 4, 3))


@_case()
def vmap_returns_python_float_out_dims_none(m):
    return m.func.vmap(lambda x: (x * 2, 1.0), out_dims=(0, None))(_t(m, 4, 3))


@_case()
def vmap_returns_none(m):
    return m.func.vmap(lambda x: None)(_t(m, 4, 3))


@_case()
def vmap_returns_string_in_tuple(m):
    return m.func.vmap(lambda x: (x, "s"))(_t(m, 4, 3))


@_case()
def vmap_returns_list(m):
    return m.func.vmap(lambda x: [x * 2, x.sum()])(_t(m, 4, 3))


@_case()
def vmap_returns_nested_dict(m):
    f = lambda x: {"a": {"b": x.exp()}, "c": (x[0],)}  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_returns_empty_tuple(m):
    return m.func.vmap(lambda x: ())(_t(m, 4, 3))


# == vmap: chunk_size ==========================================================================
def _chunk(m, cs, **kw):
    f = lambda x, y: (x.sin() * y, x.sum())  # noqa: E731
    return m.func.vmap(f, chunk_size=cs, **kw)(_t(m, 5, 3), _t(m, 5, 3, k=1))


@_case()
def vmap_chunk_none(m):
    return _chunk(m, None)


@_case()
def vmap_chunk_1(m):
    return _chunk(m, 1)


@_case()
def vmap_chunk_3(m):
    return _chunk(m, 3)


@_case()
def vmap_chunk_larger_than_batch(m):
    return _chunk(m, 10)


@_case()
def vmap_chunk_0(m):
    return _chunk(m, 0)


@_case()
def vmap_chunk_negative(m):
    return _chunk(m, -1)


@_case()
def vmap_chunk_with_out_dims(m):
    return _chunk(m, 2, out_dims=(1, 0))


@_case()
def vmap_chunk_with_in_dims_none(m):
    f = lambda x, c: x * c  # noqa: E731
    return m.func.vmap(f, in_dims=(1, None), chunk_size=2)(_t(m, 3, 5), _t(m, 3, k=1))


# == vmap: randomness ==========================================================================
def _rows(out):
    """Whether the rows of a batched random output are all equal, and its shape."""
    return bool((out == out[0]).all()), tuple(out.shape)


@_case()
def vmap_rand_error(m):
    return m.func.vmap(lambda x: x + m.rand(3, dtype=m.float64))(_t(m, 4, 3))


@_case()
def vmap_randn_like_error(m):
    return m.func.vmap(lambda x: m.randn_like(x))(_t(m, 4, 3))


@_case()
def vmap_dropout_error(m):
    return m.func.vmap(lambda x: m.nn.functional.dropout(x, 0.5, training=True))(_t(m, 4, 3))


@_case()
def vmap_dropout_eval_no_randomness(m):
    return m.func.vmap(lambda x: m.nn.functional.dropout(x, 0.5, training=False))(_t(m, 4, 3))


@_case()
def vmap_bernoulli_error(m):
    return m.func.vmap(lambda x: m.bernoulli(x.sigmoid()))(_t(m, 4, 3))


@_case()
def vmap_randomness_invalid(m):
    return m.func.vmap(lambda x: x, randomness="foo")(_t(m, 4, 3))


@_case()
def vmap_no_random_ops_error_mode(m):
    return m.func.vmap(lambda x: x * 2, randomness="error")(_t(m, 4, 3))


@_case()
def vmap_rand_same(m):
    return _rows(m.func.vmap(lambda x: m.rand(3) + 0 * x, randomness="same")(_t(m, 6, 3)))


@_case()
def vmap_rand_different(m):
    return _rows(m.func.vmap(lambda x: m.rand(3) + 0 * x, randomness="different")(_t(m, 6, 3)))


@_case()
def vmap_rand_same_alone(m):
    out = m.func.vmap(lambda x: m.rand(3), randomness="same")(_t(m, 6, 3))
    return _rows(out)


@_case()
def vmap_rand_different_alone(m):
    out = m.func.vmap(lambda x: m.rand(3), randomness="different")(_t(m, 6, 3))
    return _rows(out)


@_case()
def vmap_randn_like_same(m):
    return _rows(m.func.vmap(lambda x: m.randn_like(x), randomness="same")(_t(m, 6, 3)))


@_case()
def vmap_randn_like_different(m):
    return _rows(m.func.vmap(lambda x: m.randn_like(x), randomness="different")(_t(m, 6, 3)))


@_case()
def vmap_dropout_same(m):
    x = m.ones(6, 50, dtype=m.float64)
    f = lambda x: m.nn.functional.dropout(x, 0.5, training=True)  # noqa: E731
    out = m.func.vmap(f, randomness="same")(x)
    return _rows(out), bool(((out == 0) | (out == 2)).all())


@_case()
def vmap_dropout_different(m):
    x = m.ones(6, 50, dtype=m.float64)
    f = lambda x: m.nn.functional.dropout(x, 0.5, training=True)  # noqa: E731
    out = m.func.vmap(f, randomness="different")(x)
    return _rows(out), bool(((out == 0) | (out == 2)).all())


@_case()
def vmap_bernoulli_same(m):
    p = m.full((6, 50), 0.5, dtype=m.float64)
    return _rows(m.func.vmap(lambda p: m.bernoulli(p), randomness="same")(p))


@_case()
def vmap_bernoulli_different(m):
    p = m.full((6, 50), 0.5, dtype=m.float64)
    return _rows(m.func.vmap(lambda p: m.bernoulli(p), randomness="different")(p))


@_case()
def vmap_bernoulli_unbatched_p_same(m):
    p = m.full((50,), 0.5, dtype=m.float64)
    out = m.func.vmap(lambda x: m.bernoulli(p) + 0 * x, randomness="same")(_t(m, 6, 50))
    return _rows(out)


@_case()
def vmap_bernoulli_unbatched_p_different(m):
    p = m.full((50,), 0.5, dtype=m.float64)
    out = m.func.vmap(lambda x: m.bernoulli(p) + 0 * x, randomness="different")(_t(m, 6, 50))
    return _rows(out)


@_case()
def vmap_normal_inplace_batched_different(m):
    out = m.func.vmap(lambda x: x.clone().normal_(), randomness="different")(_t(m, 6, 3))
    return _rows(out)


@_case()
def vmap_normal_inplace_batched_same(m):
    out = m.func.vmap(lambda x: x.clone().normal_(), randomness="same")(_t(m, 6, 3))
    return _rows(out)


@_case()
def vmap_normal_inplace_unbatched_same(m):
    f = lambda x: m.zeros(3, dtype=m.float64).normal_() + 0 * x  # noqa: E731
    return _rows(m.func.vmap(f, randomness="same")(_t(m, 6, 3)))


@_case()
def vmap_normal_inplace_unbatched_different(m):
    f = lambda x: m.zeros(3, dtype=m.float64).normal_() + 0 * x  # noqa: E731
    return _rows(m.func.vmap(f, randomness="different")(_t(m, 6, 3)))


@_case()
def vmap_normal_fn_unbatched_mean_different(m):
    mean = m.zeros(50, dtype=m.float64)
    out = m.func.vmap(lambda x: m.normal(mean, 1.0) + 0 * x, randomness="different")(_t(m, 6, 50))
    return _rows(out)


@_case()
def vmap_poisson_unbatched_rate_different(m):
    rate = m.full((50,), 5.0, dtype=m.float64)
    out = m.func.vmap(lambda x: m.poisson(rate) + 0 * x, randomness="different")(_t(m, 6, 50))
    return _rows(out)


@_case()
def vmap_rand_like_unbatched_different(m):
    c = m.zeros(50, dtype=m.float64)
    out = m.func.vmap(lambda x: m.rand_like(c) + 0 * x, randomness="different")(_t(m, 6, 50))
    return _rows(out)


@_case()
def vmap_dropout_unbatched_different(m):
    c = m.ones(50, dtype=m.float64)
    f = lambda x: m.nn.functional.dropout(c, 0.5, training=True) + 0 * x  # noqa: E731
    return _rows(m.func.vmap(f, randomness="different")(_t(m, 6, 50)))


@_case()
def vmap_normal_fn_batched_mean_different(m):
    out = m.func.vmap(lambda x: m.normal(x, 1.0), randomness="different")(m.zeros(6, 50))
    return _rows(out)


@_case()
def vmap_multinomial_different(m):
    f = lambda x: m.multinomial(x.exp(), 2)  # noqa: E731
    return tuple(m.func.vmap(f, randomness="different")(_t(m, 6, 3)).shape)


@_case()
def vmap_randint_different(m):
    f = lambda x: m.randint(0, 1000, (20,)) + 0 * x  # noqa: E731
    out = m.func.vmap(f, randomness="different")(_t(m, 6, 20))
    return _rows(out)


@_case()
def vmap_randperm_same(m):
    f = lambda x: x[m.randperm(20)]  # noqa: E731
    x = m.arange(20, dtype=m.float64).expand(4, 20)
    return _rows(m.func.vmap(f, randomness="same")(x))


@_case()
def vmap_randomness_same_in_chunks(m):
    f = lambda x: m.rand(20) + 0 * x  # noqa: E731
    out = m.func.vmap(f, randomness="same", chunk_size=2, in_dims=0)(_t(m, 4, 20))
    return tuple(out.shape), bool((out[0] == out[1]).all())


# == vmap: dtypes, metadata, data dependence ===================================================
@_case()
def vmap_bool_input(m):
    f = lambda mask, x: m.where(mask, x, -x)  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 3) > 0, _t(m, 4, 3, k=1))


@_case()
def vmap_bool_output(m):
    return m.func.vmap(lambda x: x > 0)(_t(m, 4, 3))


@_case()
def vmap_bool_any_all(m):
    return m.func.vmap(lambda b: (b.any(), b.all()))(_t(m, 4, 3) > 0)


@_case()
def vmap_int_input(m):
    return m.func.vmap(lambda x: x.sum() * 2)(m.arange(12).reshape(4, 3))


@_f32
def vmap_float32_input(m):
    return m.func.vmap(lambda x: x.exp() / x.exp().sum())(_t(m, 4, 3, dtype=m.float32))


@_case()
def vmap_metadata(m):
    seen = {}

    def f(x):
        seen.update(
            shape=tuple(x.shape),
            dim=x.dim(),
            ndim=x.ndim,
            dtype=x.dtype,
            size=tuple(x.size()),
            size0=x.size(0),
            size_neg=x.size(-1),
            len=len(x),
            numel=x.numel(),
        )
        return x

    m.func.vmap(f, in_dims=1)(_t(m, 2, 5, 3))
    return seen


@_case()
def vmap_metadata_autograd(m):
    seen = {}

    def f(x):
        seen.update(rg=x.requires_grad, leaf=x.is_leaf, fn=x.grad_fn is None)
        return x

    m.func.vmap(f)(_t(m, 4, 3).requires_grad_())
    return seen


@_case()
def vmap_metadata_0d(m):
    seen = {}

    def f(x):
        seen.update(shape=tuple(x.shape), dim=x.dim(), numel=x.numel())
        return x

    m.func.vmap(f)(_t(m, 5))
    return seen


@_case()
def vmap_len_of_0d(m):
    return m.func.vmap(lambda x: x * len(x))(_t(m, 5))


@_case()
def vmap_shape_driven_code(m):
    f = lambda x: x.reshape(x.shape[0] * x.shape[1]) * x.numel()  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 2, 3))


@_case()
def vmap_item(m):
    return m.func.vmap(lambda x: x.sum().item())(_t(m, 4, 3))


@_case()
def vmap_data_dependent_if(m):
    return m.func.vmap(lambda x: x if x.sum() > 0 else -x)(_t(m, 4, 3))


@_case()
def vmap_float_of_tensor(m):
    return m.func.vmap(lambda x: x * float(x[0]))(_t(m, 4, 3))


@_case()
def vmap_tolist(m):
    return m.func.vmap(lambda x: m.tensor(x.tolist()))(_t(m, 4, 3))


@_case()
def vmap_unbatched_item_ok(m):
    c = _t(m, 3, k=1)
    return m.func.vmap(lambda x: x * c.sum().item())(_t(m, 4, 3))


@_case()
def vmap_new_tensor_factories(m):
    f = lambda x: x + m.zeros_like(x) + x.new_ones(x.shape) + m.ones(3, dtype=m.float64)  # noqa: E731
    return m.func.vmap(f)(_t(m, 4, 3))


# == vmap: in-place and mutation ===============================================================
@_case()
def vmap_inplace_on_clone(m):
    def f(x):
        y = x.clone()
        y.mul_(2).add_(x)
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_inplace_on_input(m):
    def f(x):
        x.mul_(2)
        return x

    x = _t(m, 4, 3)
    out = m.func.vmap(f)(x)
    return out, x


@_case()
def vmap_inplace_batched_plus_unbatched(m):
    c = _t(m, 3, k=1)

    def f(x):
        y = x * 1.0
        y.add_(c)
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_inplace_captured_with_batched(m):
    c = _t(m, 3, k=1)

    def f(x):
        c.add_(x)
        return c

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_inplace_captured_with_unbatched(m):
    c, d = _t(m, 3, k=1), _t(m, 3, k=2)

    def f(x):
        c.add_(d)
        return x * c

    out = m.func.vmap(f)(_t(m, 4, 3))
    return out, c


@_case()
def vmap_index_assign_into_unbatched(m):
    def f(x):
        y = m.zeros(3, dtype=m.float64)
        y[0] = x.sum()
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_index_assign_into_batched(m):
    def f(x):
        y = x.clone()
        y[0] = 5.0
        y[1:] = y[1:] * 2
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_index_assign_batched_value(m):
    def f(x):
        y = x * 0
        y[1] = x.sum()
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_zero_on_unbatched_zeros_like(m):
    def f(x):
        y = m.zeros_like(x)
        y.copy_(x * 2)
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


@_case()
def vmap_copy_into_new_zeros(m):
    def f(x):
        y = m.zeros(3, dtype=m.float64)
        y.copy_(x)
        return y

    return m.func.vmap(f)(_t(m, 4, 3))


# == autograd.grad inside func.grad (a constant gradient at the level, as PyTorch's) =========
@_case()
def autograd_grad_inside_grad_is_a_constant(m):
    f = lambda x: m.autograd.grad(x.sin().sum(), x)[0].sum() * x.sum()  # noqa: E731
    return m.func.grad(f)(_t(m, 3))


@_case()
def autograd_grad_inside_grad_of_an_intermediate(m):
    def f(x):
        z = x * x
        (gz,) = m.autograd.grad(z.sin().sum(), z)
        return (gz * x).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def autograd_grad_inside_grad_grad_outputs_and_unused(m):
    def f(x):
        y = x.exp()
        g, u = m.autograd.grad(y, (x, x * 1), m.ones(3, dtype=m.float64), allow_unused=True)
        return g.sum() * x.sum() + (0.0 if u is None else u.sum())

    return m.func.grad(f)(_t(m, 3))


@_case()
def autograd_grad_inside_grad_materialize(m):
    def f(x):
        g = m.autograd.grad(x.sin().sum(), (x, x * 1), materialize_grads=True)
        return [g[1], (g[0] * x).sum()]

    return m.func.grad(lambda x: f(x)[1], has_aux=False)(_t(m, 3))


@_case()
def autograd_grad_inside_grad_non_scalar_raises(m):
    return m.func.grad(lambda x: m.autograd.grad(x.sin(), x)[0].sum())(_t(m, 3))


# == gradients in PyTorch's layouts (scripts flatten them with .view, clip them in place) ====
@_case()
def per_example_grads_view_and_clip_in_place(m):
    w, b = _t(m, 3, 4), _t(m, 3, k=1)

    def loss(p, x):
        return m.nn.functional.linear(x.unsqueeze(0), p[0], p[1]).sum()

    gw, gb = m.vmap(m.func.grad(loss), in_dims=(None, 0))((w, b), _t(m, 5, 4, k=2))
    flat = gw.view(5, -1)
    gb.mul_(0.5)
    return [flat, gb, list(gw.stride()), list(gb.stride())]


@_case()
def per_example_grads_keep_their_dtype(m):
    f = lambda w, x: w.double().sum() + x.double().sum()  # noqa: E731
    return m.func.vmap(m.func.grad(f), (None, 0))(m.ones(3), m.zeros(2, 3)).dtype


@_case()
def grad_of_linear_weight_is_row_major(m):
    w = _t(m, 3, 4)
    x = _t(m, 2, 5, 4, k=1)
    g = m.func.grad(lambda w: m.nn.functional.linear(x, w).sin().sum())(w)
    (g2,) = m.autograd.grad(m.nn.functional.linear(x, w.requires_grad_()).sum(), w)
    return [g.view(-1), list(g.stride()), list(g2.stride())]


# == in-place ops through views (transposes, view, squeeze, unflatten, diagonal) ==============
@_case()
def vmap_inplace_through_transpose(m):
    def f(x):
        y = x.clone()
        y.t().mul_(m.arange(3, dtype=m.float64))
        return y

    return m.vmap(f)(_t(m, 2, 3, 4))


@_case()
def vmap_inplace_through_view_slice(m):
    def f(x):
        y = x.clone()
        y.view(12)[3:5].add_(1.0)
        return y

    return m.vmap(f)(_t(m, 2, 3, 4))


@_case()
def vmap_inplace_through_diagonal(m):
    def f(x):
        y = x.clone()
        y.diagonal().add_(x[0, :3])
        return y

    return m.vmap(f)(_t(m, 2, 3, 4))


@_case()
def vmap_inplace_through_expand_repeating_raises(m):
    return m.vmap(lambda a: a.clone().expand(2, 3, 3).add_(1))(_t(m, 2, 3, 3))


@_case()
def vmap_inplace_through_expand_of_new_dim(m):
    def f(a):
        b = a.clone()
        b.expand(1, 3, 3).mul_(a)
        return b

    return m.vmap(f)(_t(m, 2, 3, 3))


@_case()
def grad_inplace_through_diagonal(m):
    def f(x):
        y = x * 1.0
        y.diagonal(1).mul_(3.0)
        return y.sin().sum()

    return m.func.grad(f)(_t(m, 3, 4))


@_case()
def grad_inplace_through_transposed_row(m):
    def f(x):
        y = x * 2
        y.t()[1].add_(x[0, :3] ** 2)
        return (y * y).sum()

    return m.func.grad(f)(_t(m, 3, 4))


@_case()
def grad_inplace_through_squeeze_view_unflatten(m):
    def f(x):
        y = x * 1.0
        y.unsqueeze(0).squeeze(0)[1].zero_()
        y.view(-1)[0:2].mul_(5)
        y.unflatten(1, (2, 2))[0].add_(1.0)
        return (y**2).sum()

    return m.func.grad(f)(_t(m, 3, 4))


@_case()
def grad_writes_into_views_of_a_tensor_made_inside(m):
    def f(x):
        dy = m.zeros(3, 2, dtype=m.float64)
        dy.t()[0] = x * 2
        r = m.zeros(6, dtype=m.float64)
        r.view(2, 3)[1] = x.sin()
        return dy.sum() + (r * r).sum()

    return m.func.grad(f)(_t(m, 3))


@_case()
def jvp_inplace_through_permute(m):
    def f(x):
        y = x.exp()
        y.permute(2, 0, 1).mul_(2.0)
        return y

    return m.func.jvp(f, (_t(m, 2, 3, 4),), (_t(m, 2, 3, 4, k=1),))


# == grad / vmap shallow compositions ==========================================================
@_case()
def vmap_of_grad_per_example(m):
    w = _t(m, 3, k=1)
    f = lambda x, y: ((x * w).sum() - y) ** 2  # noqa: E731
    return m.func.vmap(m.func.grad(f), in_dims=(0, 0))(_t(m, 4, 3), _t(m, 4, k=2))


@_case()
def vmap_of_grad_wrt_weights(m):
    f = lambda w, x: ((x @ w).tanh()).sum()  # noqa: E731
    return m.func.vmap(m.func.grad(f), in_dims=(None, 0))(_t(m, 3, 2), _t(m, 5, 3, k=1))


@_case()
def vmap_of_grad_has_aux(m):
    f = lambda x: ((x**2).sum(), x.mean())  # noqa: E731
    return m.func.vmap(m.func.grad(f, has_aux=True))(_t(m, 4, 3))


@_case()
def vmap_of_grad_argnums_tuple_out_dims(m):
    f = lambda x, y: (x * y).sum()  # noqa: E731
    return m.func.vmap(m.func.grad(f, argnums=(0, 1)), out_dims=1)(_t(m, 4, 3), _t(m, 4, 3, k=1))


@_case()
def grad_of_vmap_sum(m):
    f = lambda x: m.func.vmap(lambda r: r.sin() * r.sum())(x).sum()  # noqa: E731
    return m.func.grad(f)(_t(m, 4, 3))


@_case()
def vmap_of_grad_output_not_scalar(m):
    return m.func.vmap(m.func.grad(lambda x: x * 2))(_t(m, 4, 3))


@_case()
def vmap_of_grad_metadata(m):
    seen = {}

    def f(x):
        seen.update(shape=tuple(x.shape), dim=x.dim(), len=len(x))
        return x.sum()

    m.func.vmap(m.func.grad(f))(_t(m, 4, 3))
    return seen


# == jvp =======================================================================================
@_case()
def jvp_basic(m):
    return m.func.jvp(lambda x: x.sin() * x, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_two_primals(m):
    f = lambda x, y: x * y.exp()  # noqa: E731
    return m.func.jvp(f, (_t(m, 3), _t(m, 3, k=1)), (_t(m, 3, k=2), _t(m, 3, k=3)))


@_case()
def jvp_primals_not_tuple(m):
    return m.func.jvp(lambda x: x * 2, _t(m, 3), (_t(m, 3, k=1),))


@_case()
def jvp_primals_list(m):
    return m.func.jvp(lambda x: x * 2, [_t(m, 3)], [_t(m, 3, k=1)])


@_case()
def jvp_tangents_not_tuple(m):
    return m.func.jvp(lambda x: x * 2, (_t(m, 3),), _t(m, 3, k=1))


@_case()
def jvp_tangent_count_mismatch(m):
    return m.func.jvp(lambda x: x * 2, (_t(m, 3),), (_t(m, 3, k=1), _t(m, 3, k=2)))


@_case()
def jvp_tangent_shape_mismatch(m):
    return m.func.jvp(lambda x: x * 2, (_t(m, 3),), (_t(m, 4, k=1),))


@_case()
def jvp_tangent_broadcastable_shape(m):
    return m.func.jvp(lambda x: x * 2, (_t(m, 2, 3),), (_t(m, 3, k=1),))


@_f32
def jvp_tangent_float32_for_float64(m):
    return m.func.jvp(lambda x: x * x, (_t(m, 3),), (_t(m, 3, k=1, dtype=m.float32),))


@_case()
def jvp_tangent_int_for_float(m):
    return m.func.jvp(lambda x: x * x, (_t(m, 3),), (m.tensor([1, 2, 3]),))


@_case()
def jvp_int_primal(m):
    return m.func.jvp(lambda x: x * 2, (m.tensor([1, 2, 3]),), (m.tensor([1, 1, 1]),))


@_case()
def jvp_primal_python_float(m):
    return m.func.jvp(lambda x: x * 2, (1.0,), (1.0,))


@_case()
def jvp_tangent_none(m):
    return m.func.jvp(lambda x: x * 2, (_t(m, 3),), (None,))


@_case()
def jvp_pytree_primals(m):
    f = lambda d: d["a"] * d["b"][0]  # noqa: E731
    p = ({"a": _t(m, 3), "b": [_t(m, 3, k=1)]},)
    t = ({"a": _t(m, 3, k=2), "b": [_t(m, 3, k=3)]},)
    return m.func.jvp(f, p, t)


@_case()
def jvp_pytree_structure_mismatch(m):
    f = lambda d: d["a"] * d["b"]  # noqa: E731
    p = ({"a": _t(m, 3), "b": _t(m, 3, k=1)},)
    t = ({"a": _t(m, 3, k=2), "c": _t(m, 3, k=3)},)
    return m.func.jvp(f, p, t)


@_case()
def jvp_tuple_output(m):
    return m.func.jvp(lambda x: (x.sin(), {"c": x.cos()}), (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_output_independent(m):
    c = _t(m, 3, k=2)
    return m.func.jvp(lambda x: c * 2, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_output_is_input(m):
    return m.func.jvp(lambda x: x, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_output_python_float(m):
    return m.func.jvp(lambda x: 1.0, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_output_int_tensor(m):
    return m.func.jvp(lambda x: (x > 0).long(), (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_has_aux(m):
    f = lambda x: (x.exp(), {"s": x.sum(), "c": [x * 2]})  # noqa: E731
    return m.func.jvp(f, (_t(m, 3),), (_t(m, 3, k=1),), has_aux=True)


@_case()
def jvp_has_aux_non_tensor(m):
    f = lambda x: (x.exp(), {"s": x.sum(), "n": 3})  # noqa: E731
    return m.func.jvp(f, (_t(m, 3),), (_t(m, 3, k=1),), has_aux=True)


@_case()
def jvp_strict_true(m):
    return m.func.jvp(lambda x: x * 2, (_t(m, 3),), (_t(m, 3, k=1),), strict=True)


@_case()
def jvp_has_aux_not_tuple(m):
    return m.func.jvp(lambda x: x.exp(), (_t(m, 3),), (_t(m, 3, k=1),), has_aux=True)


@_case()
def jvp_0d(m):
    return m.func.jvp(lambda x: x**3, (_t(m),), (_t(m, k=1),))


@_case()
def jvp_empty(m):
    return m.func.jvp(lambda x: x.exp() * 2, (_t(m, 3, 0),), (_t(m, 3, 0, k=1),))


@_case()
def jvp_metadata(m):
    seen = {}

    def f(x):
        seen.update(shape=tuple(x.shape), dim=x.dim(), dtype=x.dtype, len=len(x), n=x.numel())
        seen.update(rg=x.requires_grad, leaf=x.is_leaf, fn=x.grad_fn is None)
        return x

    m.func.jvp(f, (_t(m, 2, 3),), (_t(m, 2, 3, k=1),))
    return seen


@_case()
def jvp_inplace_on_clone(m):
    def f(x):
        y = x.clone()
        y.mul_(x)
        y[0] = y[0] * 3
        return y

    return m.func.jvp(f, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_index_assign_into_zeros(m):
    def f(x):
        y = m.zeros(3, dtype=m.float64)
        y[1] = x.sum()
        return y

    return m.func.jvp(f, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def jvp_with_kwargs_function(m):
    f = lambda x, scale=2.0: x * scale  # noqa: E731
    return m.func.jvp(f, (_t(m, 3),), (_t(m, 3, k=1),))


@_case()
def vmap_of_jvp(m):
    f = lambda x: x.sin().sum()  # noqa: E731
    x = _t(m, 3)
    return m.func.vmap(lambda t: m.func.jvp(f, (x,), (t,))[1])(_t(m, 4, 3, k=1))


# == vjp =======================================================================================
@_case()
def vjp_basic(m):
    out, fn = m.func.vjp(lambda x: x.sin() * x, _t(m, 3))
    return out, fn(_t(m, 3, k=1))


@_case()
def vjp_fn_called_twice(m):
    _out, fn = m.func.vjp(lambda x: x.exp() * x, _t(m, 3))
    return fn(_t(m, 3, k=1)), fn(_t(m, 3, k=2))


@_case()
def vjp_two_primals(m):
    out, fn = m.func.vjp(lambda x, y: x * y.exp(), _t(m, 3), _t(m, 3, k=1))
    return out, fn(_t(m, 3, k=2))


@_case()
def vjp_tuple_output(m):
    out, fn = m.func.vjp(lambda x: (x.sin(), x.sum()), _t(m, 3))
    return out, fn((_t(m, 3, k=1), _t(m, k=2)))


@_case()
def vjp_tuple_output_cotangent_list(m):
    _out, fn = m.func.vjp(lambda x: (x.sin(), x.sum()), _t(m, 3))
    return fn([_t(m, 3, k=1), _t(m, k=2)])


@_case()
def vjp_tuple_output_cotangents_as_varargs(m):
    _out, fn = m.func.vjp(lambda x: (x.sin(), x.cos()), _t(m, 3))
    return fn(_t(m, 3, k=1), _t(m, 3, k=2))


@_case()
def vjp_dict_output(m):
    out, fn = m.func.vjp(lambda x: {"a": x.sin(), "b": x * 2}, _t(m, 3))
    return out, fn({"a": _t(m, 3, k=1), "b": _t(m, 3, k=2)})


@_case()
def vjp_dict_output_wrong_keys(m):
    _out, fn = m.func.vjp(lambda x: {"a": x.sin(), "b": x * 2}, _t(m, 3))
    return fn({"a": _t(m, 3, k=1), "c": _t(m, 3, k=2)})


@_case()
def vjp_cotangent_structure_mismatch(m):
    _out, fn = m.func.vjp(lambda x: (x.sin(), x.cos()), _t(m, 3))
    return fn(_t(m, 3, k=1))


@_case()
def vjp_cotangent_single_in_tuple(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3))
    return fn((_t(m, 3, k=1),))


@_case()
def vjp_cotangent_wrong_shape(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3))
    return fn(_t(m, 4, k=1))


@_case()
def vjp_cotangent_broadcastable_shape(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 2, 3))
    return fn(_t(m, 3, k=1))


@_case()
def vjp_cotangent_scalar_for_vector(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3))
    return fn(_t(m, k=1))


@_f32
def vjp_float32_primal_float64_cotangent(m):
    out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3, dtype=m.float32))
    return out, fn(_t(m, 3, k=1))


@_f32
def vjp_cotangent_float32(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3))
    return fn(_t(m, 3, k=1, dtype=m.float32))


@_case()
def vjp_cotangent_int(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3))
    return fn(m.tensor([1, 2, 3]))


@_case()
def vjp_cotangent_python_float(m):
    _out, fn = m.func.vjp(lambda x: x.sin().sum(), _t(m, 3))
    return fn(1.0)


@_case()
def vjp_cotangent_none(m):
    _out, fn = m.func.vjp(lambda x: x.sin(), _t(m, 3))
    return fn(None)


@_case()
def vjp_has_aux(m):
    out, fn, aux = m.func.vjp(lambda x: (x.exp(), (x.sum(), {"a": x})), _t(m, 3), has_aux=True)
    return out, fn(_t(m, 3, k=1)), aux


@_case()
def vjp_has_aux_non_tensor(m):
    out, fn, aux = m.func.vjp(lambda x: (x.exp(), (x.sum(), 2, "s")), _t(m, 3), has_aux=True)
    return out, fn(_t(m, 3, k=1)), aux


@_case()
def vjp_has_aux_not_tuple(m):
    return m.func.vjp(lambda x: x.exp(), _t(m, 3), has_aux=True)


@_case()
def vjp_output_python_float(m):
    return m.func.vjp(lambda x: 1.0, _t(m, 3))


@_case()
def vjp_output_independent(m):
    c = _t(m, 3, k=2)
    out, fn = m.func.vjp(lambda x: c * 2, _t(m, 3))
    return out, fn(_t(m, 3, k=1))


@_case()
def vjp_output_int_tensor(m):
    out, fn = m.func.vjp(lambda x: (x > 0).long(), _t(m, 3))
    return out, fn(m.tensor([1, 1, 1]))


@_case()
def vjp_int_primal(m):
    out, fn = m.func.vjp(lambda x: x * 2, m.tensor([1, 2, 3]))
    return out, fn(m.tensor([1, 1, 1]))


@_case()
def vjp_no_primals(m):
    out, fn = m.func.vjp(lambda: m.ones(2, dtype=m.float64))
    return out, fn(m.ones(2, dtype=m.float64))


@_case()
def vjp_dict_primal(m):
    _out, fn = m.func.vjp(lambda d: d["a"] * d["b"], {"a": _t(m, 3), "b": _t(m, 3, k=1)})
    return fn(_t(m, 3, k=2))


@_case()
def vjp_0d(m):
    out, fn = m.func.vjp(lambda x: x.exp() * x, _t(m))
    return out, fn(_t(m, k=1))


@_case()
def vjp_empty(m):
    out, fn = m.func.vjp(lambda x: x * 2, _t(m, 0))
    return out, fn(_t(m, 0, k=1))


@_case()
def vjp_inplace_on_intermediate(m):
    def f(x):
        y = x * 2
        y.add_(1.0)
        y[0] = x[0] * x[1]
        y.mul_(x)
        return y

    out, fn = m.func.vjp(f, _t(m, 3))
    return out, fn(_t(m, 3, k=1))


@_case()
def vmap_of_vjp_fn(m):
    _out, fn = m.func.vjp(lambda x: x.sin() * x.sum(), _t(m, 3))
    return m.func.vmap(fn)(_t(m, 4, 3, k=1))


@_case()
def vjp_fn_after_outer_vmap_exit(m):
    x = _t(m, 3)
    fns = []

    def f(y):
        out, fn = m.func.vjp(lambda x: x * y, x)
        fns.append(fn)
        return out

    m.func.vmap(f)(_t(m, 4, 3, k=1))
    return raises(lambda: fns[0](_t(m, 3, k=2)))


# == linearize =================================================================================
@_case()
def linearize_basic(m):
    out, fn = m.func.linearize(lambda x: x.sin() * x, _t(m, 3))
    return out, fn(_t(m, 3, k=1)), fn(_t(m, 3, k=2))


@_case()
def linearize_two_primals(m):
    out, fn = m.func.linearize(lambda x, y: x * y.exp(), _t(m, 3), _t(m, 3, k=1))
    return out, fn(_t(m, 3, k=2), _t(m, 3, k=3))


@_case()
def linearize_tuple_output(m):
    out, fn = m.func.linearize(lambda x: (x.sin(), x.sum()), _t(m, 3))
    return out, fn(_t(m, 3, k=1))


@_case()
def linearize_tangent_wrong_shape(m):
    _out, fn = m.func.linearize(lambda x: x.sin(), _t(m, 3))
    return fn(_t(m, 4, k=1))


@_case()
def linearize_tangent_wrong_count(m):
    _out, fn = m.func.linearize(lambda x: x.sin(), _t(m, 3))
    return fn(_t(m, 3, k=1), _t(m, 3, k=2))


@_case()
def linearize_0d(m):
    out, fn = m.func.linearize(lambda x: x**3, _t(m))
    return out, fn(_t(m, k=1))


# == jacrev / jacfwd / hessian =================================================================
_JACS = ("jacrev", "jacfwd")


def _jac(m, kind):
    return getattr(m.func, kind)


def _jac_cases(name, body, xfail=None):
    for kind in _JACS:

        def case(m, kind=kind):
            return body(m, _jac(m, kind))

        case.__name__ = f"{kind}_{name}"
        _case(xfail=(xfail or {}).get(kind))(case)


_jac_cases("basic", lambda m, J: J(lambda x: x.sin() * x.sum())(_t(m, 3)))
_jac_cases("matrix_in", lambda m, J: J(lambda x: (x @ x.t()).sum(0))(_t(m, 2, 3)))
_jac_cases("0d_in", lambda m, J: J(lambda x: m.stack([x, x**2]))(_t(m)))
_jac_cases("0d_out", lambda m, J: J(lambda x: (x**2).sum())(_t(m, 3)))
_jac_cases("0d_in_0d_out", lambda m, J: J(lambda x: x.exp())(_t(m)))


@_case()
def jacrev_empty_in(m):
    return m.func.jacrev(lambda x: x.sum() + m.ones(2, dtype=m.float64))(_t(m, 0))


_jac_cases("empty_out", lambda m, J: J(lambda x: x[:0] * 2)(_t(m, 3)))
_jac_cases(
    "argnums_tuple",
    lambda m, J: J(lambda x, y: x * y.sum(), argnums=(0, 1))(_t(m, 3), _t(m, 2, k=1)),
)
_jac_cases(
    "argnums_single_tuple",
    lambda m, J: J(lambda x, y: x * y.sum(), argnums=(1,))(_t(m, 3), _t(m, 2, k=1)),
)


@_case()
def jacrev_argnums_negative(m):
    return m.func.jacrev(lambda x, y: x * y.sum(), argnums=-1)(_t(m, 3), _t(m, 2, k=1))


_jac_cases(
    "argnums_out_of_range",
    lambda m, J: J(lambda x, y: x * y.sum(), argnums=2)(_t(m, 3), _t(m, 2, k=1)),
)
_jac_cases(
    "argnums_duplicate",
    lambda m, J: J(lambda x, y: x * y.sum(), argnums=(0, 0))(_t(m, 3), _t(m, 2, k=1)),
)
_jac_cases(
    "argnums_list",
    lambda m, J: J(lambda x, y: x * y.sum(), argnums=[0, 1])(_t(m, 3), _t(m, 2, k=1)),
)
_jac_cases(
    "tuple_output",
    lambda m, J: J(lambda x: (x.sin(), x.sum()))(_t(m, 3)),
)
_jac_cases(
    "dict_output_argnums_tuple",
    lambda m, J: J(lambda x, y: {"a": x * y, "b": (x.sum() * y)[:1]}, argnums=(0, 1))(
        _t(m, 3), _t(m, 3, k=1)
    ),
)
_jac_cases(
    "has_aux",
    lambda m, J: J(lambda x: (x.exp(), {"s": x.sum(), "c": (x * 2,)}), has_aux=True)(_t(m, 3)),
)
_jac_cases(
    "has_aux_non_tensor",
    lambda m, J: J(lambda x: (x.exp(), {"s": x.sum(), "n": 2}), has_aux=True)(_t(m, 3)),
)
_jac_cases(
    "has_aux_not_tuple",
    lambda m, J: J(lambda x: x.exp(), has_aux=True)(_t(m, 3)),
)
_jac_cases("dict_input", lambda m, J: J(lambda d: d["a"] * d["b"])({"a": _t(m, 2), "b": _t(m, 2)}))
_jac_cases(
    "kwargs",
    lambda m, J: J(lambda x, *, w: x * w)(_t(m, 3), w=_t(m, 3, k=1)),
    xfail={"jacrev": X_KW, "jacfwd": X_KW},
)
_jac_cases("int_input", lambda m, J: J(lambda x: x * 2)(m.tensor([1, 2, 3])))
_jac_cases("int_output", lambda m, J: J(lambda x: (x > 0).long())(_t(m, 3)))
_jac_cases("bool_output", lambda m, J: J(lambda x: x > 0)(_t(m, 3)))
_jac_cases("python_float_output", lambda m, J: J(lambda x: 1.0)(_t(m, 3)))
_jac_cases("constant_output", lambda m, J: J(lambda x: m.ones(2, dtype=m.float64))(_t(m, 3)))
_jac_cases("output_is_input", lambda m, J: J(lambda x: x)(_t(m, 2, 2)))
_jac_cases(
    "float32",
    lambda m, J: J(lambda x: x.sin() * x)(_t(m, 3, dtype=m.float32)),
)


def _index_assign(m, x):
    y = m.zeros(3, dtype=m.float64)
    y[1] = x.sum()
    y[2:] = x[:1] * 2
    return y


_jac_cases("index_assign_into_zeros", lambda m, J: J(lambda x: _index_assign(m, x))(_t(m, 3)))


@_case()
def jacrev_chunk_size_1(m):
    return m.func.jacrev(lambda x: x.sin() * x.sum(), chunk_size=1)(_t(m, 4))


@_case()
def jacrev_chunk_size_3(m):
    return m.func.jacrev(lambda x: (x.sin() * x.sum(), x[:2]), chunk_size=3)(_t(m, 4))


@_case()
def jacrev_chunk_size_large(m):
    return m.func.jacrev(lambda x: x.sin() * x.sum(), chunk_size=100)(_t(m, 4))


@_case()
def jacrev_chunk_size_0(m):
    return m.func.jacrev(lambda x: x.sin() * x.sum(), chunk_size=0)(_t(m, 4))


@_case()
def jacrev_chunk_size_negative(m):
    return m.func.jacrev(lambda x: x.sin() * x.sum(), chunk_size=-2)(_t(m, 4))


@_case()
def jacfwd_randomness_error(m):
    return m.func.jacfwd(lambda x: x * m.rand(3, dtype=m.float64))(_t(m, 3))


@_case()
def jacfwd_randomness_same(m):
    # the same noise for every basis vector: a diagonal Jacobian of the noise
    j = m.func.jacfwd(lambda x: x * m.rand(3, dtype=m.float64), randomness="same")(_t(m, 3))
    return tuple(j.shape), bool((j - m.diag(m.diagonal(j)) == 0).all())


@_case()
def jacfwd_randomness_different(m):
    j = m.func.jacfwd(lambda x: x * m.rand(3, dtype=m.float64), randomness="different")(_t(m, 3))
    return tuple(j.shape)


@_case()
def jacfwd_randomness_invalid(m):
    return m.func.jacfwd(lambda x: x * 2, randomness="bad")(_t(m, 3))


@_case()
def jacrev_of_grad(m):
    return m.func.jacrev(m.func.grad(lambda x: (x.sin() * x).sum()))(_t(m, 3))


@_case()
def vmap_of_jacrev(m):
    return m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()))(_t(m, 4, 3))


@_case()
def hessian_basic(m):
    return m.func.hessian(lambda x: (x.sin() * x.sum()).sum())(_t(m, 3))


@_case()
def hessian_0d(m):
    return m.func.hessian(lambda x: x.exp() * x)(_t(m))


@_case()
def hessian_matrix_in(m):
    return m.func.hessian(lambda x: (x @ x.t()).sin().sum())(_t(m, 2, 2))


@_case()
def hessian_argnums_tuple(m):
    f = lambda x, y: (x.sin() * y.sum() ** 2).sum()  # noqa: E731
    return m.func.hessian(f, argnums=(0, 1))(_t(m, 3), _t(m, 2, k=1))


@_case()
def hessian_argnums_1(m):
    f = lambda x, y: (x.sin() * y.exp()).sum()  # noqa: E731
    return m.func.hessian(f, argnums=1)(_t(m, 3), _t(m, 3, k=1))


@_case()
def hessian_vector_output(m):
    return m.func.hessian(lambda x: x.sin() * x)(_t(m, 2))


@_case()
def hessian_tuple_output(m):
    return m.func.hessian(lambda x: ((x**3).sum(), x.prod()))(_t(m, 2))


@_case()
def hessian_dict_input(m):
    f = lambda d: (d["a"] * d["b"].exp()).sum()  # noqa: E731
    return m.func.hessian(f)({"a": _t(m, 2), "b": _t(m, 2, k=1)})


@_case()
def hessian_linear_function(m):
    return m.func.hessian(lambda x: (x * 3).sum())(_t(m, 3))


@_case()
def vmap_of_hessian(m):
    return m.func.vmap(m.func.hessian(lambda x: (x**3).sum()))(_t(m, 4, 2))


# == functional_call / stack_module_state ======================================================
def _lin_params(m, k=0):
    return {"weight": _t(m, 2, 3, k=k), "bias": _t(m, 2, k=k + 1)}


def _lin(m):
    return m.nn.Linear(3, 2).double()


@_case()
def functional_call_basic(m):
    return m.func.functional_call(_lin(m), _lin_params(m), (_t(m, 4, 3, k=5),))


@_case()
def functional_call_single_arg_not_tuple(m):
    return m.func.functional_call(_lin(m), _lin_params(m), _t(m, 4, 3, k=5))


@_case()
def functional_call_restores_params(m):
    lin = _lin(m)
    before = lin.weight.detach().clone()
    m.func.functional_call(lin, _lin_params(m), (_t(m, 4, 3, k=5),))
    return bool((lin.weight == before).all())


@_case()
def functional_call_partial_dict(m):
    lin = _lin(m)
    with m.no_grad():
        lin.bias.copy_(_t(m, 2, k=9))
    return m.func.functional_call(lin, {"weight": _t(m, 2, 3)}, (_t(m, 4, 3, k=5),))


@_case()
def functional_call_two_dicts(m):
    p = _lin_params(m)
    dicts = ({"weight": p["weight"]}, {"bias": p["bias"]})
    return m.func.functional_call(_lin(m), dicts, (_t(m, 4, 3, k=5),))


@_case()
def functional_call_repeated_key(m):
    p = _lin_params(m)
    return m.func.functional_call(_lin(m), (p, {"bias": p["bias"]}), (_t(m, 4, 3, k=5),))


@_case()
def functional_call_strict_missing(m):
    p = {"weight": _t(m, 2, 3)}
    return m.func.functional_call(_lin(m), p, (_t(m, 4, 3, k=5),), strict=True)


@_case()
def functional_call_strict_unexpected(m):
    p = {**_lin_params(m), "extra": _t(m, 2)}
    return m.func.functional_call(_lin(m), p, (_t(m, 4, 3, k=5),), strict=True)


@_case()
def functional_call_kwargs(m):
    class M(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = m.nn.Linear(3, 2).double()

        def forward(self, x, *, scale=1.0):
            return self.lin(x) * scale

    p = {"lin.weight": _t(m, 2, 3), "lin.bias": _t(m, 2, k=1)}
    return m.func.functional_call(M(), p, (_t(m, 4, 3, k=5),), {"scale": 3.0})


@_case()
def functional_call_grad_wrt_params(m):
    lin = _lin(m)
    x = _t(m, 4, 3, k=5)

    def loss(p):
        return (m.func.functional_call(lin, p, (x,)) ** 2).sum()

    return m.func.grad(loss)(_lin_params(m))


@_case()
def functional_call_vmap_per_example_grads(m):
    lin = _lin(m)

    def loss(p, x, y):
        return ((m.func.functional_call(lin, p, (x[None],)) - y) ** 2).sum()

    g = m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))
    return g(_lin_params(m), _t(m, 5, 3, k=5), _t(m, 5, 2, k=6))


@_case()
def functional_call_jacrev_wrt_params(m):
    lin = _lin(m)
    x = _t(m, 3, k=5)
    return m.func.jacrev(lambda p: m.func.functional_call(lin, p, (x,)))(_lin_params(m))


def _ensemble(m, n=3):
    models = [_lin(m) for _ in range(n)]
    with m.no_grad():
        for i, mod in enumerate(models):
            mod.weight.copy_(_t(m, 2, 3, k=10 + i))
            mod.bias.copy_(_t(m, 2, k=20 + i))
    return models


@_case()
def stack_module_state_values(m):
    params, buffers = m.func.stack_module_state(_ensemble(m))
    return params, buffers, {k: v.requires_grad for k, v in params.items()}


@_case()
def stack_module_state_vmap_ensemble(m):
    models = _ensemble(m)
    params, buffers = m.func.stack_module_state(models)

    def run(p, b, x):
        return m.func.functional_call(models[0], (p, b), (x,))

    return m.func.vmap(run, in_dims=(0, 0, None))(params, buffers, _t(m, 4, 3, k=5))


@_case()
def stack_module_state_empty(m):
    return m.func.stack_module_state([])


# == where PyTorch raises or crashes but numbagrad is right: against a reference ===============
def test_where_torch_raises_version_check_slice_assign():
    # torch: "modified by an inplace operation" (y[1:] is saved by the mul, then overwritten)
    m = numbagrad

    def f(x):
        y = x.clone()
        y[1:] = y[1:] * x[:2]
        return (y**2).sum()

    x = np.random.default_rng(0).standard_normal(3)
    x0, x1, x2 = x
    want = [2 * x0 + 2 * x1**2 * x0, 2 * x1 * x0**2 + 2 * x2**2 * x1, 2 * x2 * x1**2]
    got = m.func.grad(f)(m.tensor(x, dtype=m.float64))
    assert_same(to_np(got), np.array(want))


def test_where_torch_raises_version_check_exp_then_assign():
    # torch: "modified by an inplace operation" (exp_ saves its output, y[0] overwrites it)
    m = numbagrad

    def f(x):
        y = x * 2
        y.exp_()
        y[0] = y[0] * x[1]
        return y

    x = np.random.default_rng(0).standard_normal(3)
    c = np.random.default_rng(1).standard_normal(3)
    e = np.exp(2 * x)
    out, fn = m.func.vjp(f, m.tensor(x, dtype=m.float64))
    assert_same(to_np(out), np.array([e[0] * x[1], e[1], e[2]]))
    want = [c[0] * 2 * e[0] * x[1], c[0] * e[0] + c[1] * 2 * e[1], c[2] * 2 * e[2]]
    assert_same(to_np(fn(m.tensor(c, dtype=m.float64))[0]), np.array(want))


def test_where_torch_crashes_chunked_out_dims_none():
    # torch: TypeError from cat(dim=None) when chunk_size splits the batch
    m = numbagrad
    c = _t(m, 3, k=1)
    f = lambda x: (x * 2, c)  # noqa: E731
    got = m.func.vmap(f, out_dims=(0, None), chunk_size=2)(_t(m, 5, 3))
    want = m.func.vmap(f, out_dims=(0, None))(_t(m, 5, 3))
    assert_same(to_np(got), to_np(want))
    assert_same(to_np(got[1]), to_np(c))


def test_where_torch_crashes_zero_batch():
    # torch: AssertionError (chunked) / IndexError (x * 2 + x.sum()) for a batch of size 0
    m = numbagrad
    out = m.func.vmap(lambda x: x * 2, chunk_size=2)(_t(m, 0, 3))
    assert_same(to_np(out), np.zeros((0, 3)))
    out = m.func.vmap(lambda x: x * 2 + x.sum())(_t(m, 0, 3))
    assert_same(to_np(out), np.zeros((0, 3)))


def test_where_torch_crashes_jacfwd_empty_input():
    # torch.func.jacfwd raises IndexError for an input with no elements; jacrev gives (2, 0)
    m = numbagrad
    f = lambda x: x.sum() + m.ones(2, dtype=m.float64)  # noqa: E731
    want = to_np(
        torch.func.jacrev(lambda x: x.sum() + torch.ones(2, dtype=torch.float64))(
            torch.zeros(0, dtype=torch.float64)
        )
    )
    assert_same(to_np(m.func.jacfwd(f)(_t(m, 0))), want)


def test_where_torch_is_wrong_jacfwd_negative_argnums():
    # torch.func.jacfwd(f, argnums=-1) returns zeros; jacrev and argnums=1 give the Jacobian
    m = numbagrad
    f = lambda x, y: x * y.sum()  # noqa: E731
    want = to_np(
        torch.func.jacfwd(lambda x, y: x * y.sum(), argnums=1)(_t(torch, 3), _t(torch, 2, k=1))
    )
    assert_same(to_np(m.func.jacfwd(f, argnums=-1)(_t(m, 3), _t(m, 2, k=1))), want)
    assert_same(to_np(m.func.jacfwd(f, argnums=(-1, 0))(_t(m, 3), _t(m, 2, k=1))[0]), want)


# ==============================================================================================
@pytest.mark.parametrize(("case", "tol"), CASES.params())
def test_api_matches_torch(case, tol):
    check(case, *tol)
