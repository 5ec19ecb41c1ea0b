"""Public ``torch.func`` / functorch example scripts and documentation examples, ported as
differential tests: ``numbagrad`` against ``torch``.

Each case is written once as a function of the module ``m`` (``torch`` or ``numbagrad``),
the way a user runs it with ``import numbagrad as torch``, and returns a tree of tensors and
plain values; both modules run it and the results must agree (``_diff.check``). Where PyTorch
raises, numbagrad must raise an exception of the same builtin type. The sources (code
written anew, modelled on them, with tiny shapes and a few training steps):

* the "UX Limitations" page of the torch.func docs: global intermediates, ``torch.autograd``
  inside transforms, side effects under vmap, in-place ops on unbatched tensors,
  ``new_zeros`` vs ``zeros``, ``out=``, data-dependent control flow, ``.item()``, dynamic
  shapes, the ``randomness`` flag, functions returning non-tensors;
* the "Migrating from functorch to torch.func" page (``functional_call``,
  ``stack_module_state`` with a meta-device base model, ``torch.autograd.functional``
  equivalents);
* the examples in the docstrings of ``torch.func.{vmap, grad, grad_and_value, vjp, jvp,
  jacrev, jacfwd, hessian, linearize, functionalize, functional_call, stack_module_state}``;
* functorch's ``examples/``: ``lennard_jones``, ``maml_regression`` (evjang, evjang_transforms,
  evjang_transforms_module), ``ensembling/parallel_train``, ``dp_cifar10/cifar10_transforms``
  and ``maml_omniglot/maml-omniglot-transforms`` (their CNNs replaced by MLPs: numbagrad has
  no conv, pool or batch-norm layers).

Random values (the ``randomness`` flag) differ between the two generators: those cases
compare the pattern (which entries are equal), not the values.
"""

import copy
import functools
import itertools
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _diff import Cases, check  # noqa: E402
from _diff import t as _t  # noqa: E402

import numbagrad  # noqa: E402

pytestmark = pytest.mark.transforms

CASES = Cases()
_case = CASES.case
F32 = {"rtol": 1e-4, "atol": 1e-5}  # float32 scripts (a few optimizer steps)
TRAIN = {"rtol": 1e-8, "atol": 1e-10}  # float64 scripts (a few optimizer steps)


def t(m, *shape, k=0, seed=0, dtype=None):
    return _t(m, *shape, k=k, seed=seed, dtype=dtype)


def _model(m, build, seed=0, dtype="float64"):
    """``build(m)``: built (seeded) by torch; for numbagrad, torch's state copied in."""
    torch.manual_seed(seed)
    tm = build(torch).to(getattr(torch, dtype))
    if m is torch:
        return tm
    nm = build(numbagrad).to(getattr(numbagrad, dtype))
    sd = {k: numbagrad.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    nm.load_state_dict(sd)
    return nm


def _mlp(sizes, act="ReLU"):
    """``build`` for an MLP ``Linear, act, Linear, ...`` of the given sizes."""

    def build(m):
        layers = []
        for i, (a, b) in enumerate(itertools.pairwise(sizes)):
            if i:
                layers.append(getattr(m.nn, act)())
            layers.append(m.nn.Linear(a, b))
        return m.nn.Sequential(*layers)

    return build


def _pattern(x):
    """Which entries of a 1-d (or row-flattened) tensor are equal to which: module-free."""
    rows = [tuple(r) for r in np.asarray(x.detach().numpy()).reshape(x.shape[0], -1).tolist()]
    first = {}
    return [first.setdefault(r, len(first)) for r in rows]


# ============================================================================================
# UX Limitations: general limitations
# ============================================================================================
@_case()
def ux_intermediate_returned_with_has_aux(m):
    def f(x):
        intermediate = x.sin()
        z = intermediate.sin()
        return z, intermediate

    grad_x, intermediate = m.func.grad(f, has_aux=True)(t(m))
    return grad_x, intermediate


@_case()
def ux_intermediate_assigned_to_global(m):
    # "Don't do this": the grad is still right, and torch lets one read the escaped value.
    box = {}

    def f(x):
        box["intermediate"] = x.sin()
        z = box["intermediate"].sin()
        return z

    x = t(m)
    grad_x = m.func.grad(f)(x)
    leaked = box["intermediate"]
    return grad_x, isinstance(leaked, m.Tensor), float(leaked)


@_case()
def ux_intermediate_assigned_to_global_then_used(m):
    box = {}

    def f(x):
        box["intermediate"] = x.sin()
        return box["intermediate"].sin()

    m.func.grad(f)(t(m))
    return float(box["intermediate"] + 1), float(box["intermediate"].cos())


@_case()
def ux_autograd_grad_inside_func_grad(m):
    # torch.autograd.grad on a grad-level tensor: torch computes d sin / dx at that level
    return m.func.grad(lambda x: m.autograd.grad(x.sin(), x)[0])(t(m))


@_case()
def ux_autograd_grad_inside_vmap_raises(m):
    x = t(m, 3).requires_grad_()
    return m.func.vmap(lambda x: m.autograd.grad(x.sin(), x)[0])(x)


@_case()
def ux_backward_inside_vmap_raises(m):
    x = t(m, 3).requires_grad_()
    return m.func.vmap(lambda x: x.sin().backward())(x)


@_case()
def ux_backward_inside_grad_raises(m):
    def f(x):
        (x * 2).sum().backward()
        return x.sin().sum()

    return m.func.grad(f)(t(m, 3))


@_case()
def ux_autograd_functional_equivalents(m):
    # the table: torch.autograd.functional.X -> torch.func.Y give the same values
    def f(x):
        return x.sin() * x.sum()

    x, v = t(m, 3), t(m, 3, k=1)
    AF = m.autograd.functional
    return [
        AF.jacobian(f, x),
        m.func.jacrev(f)(x),
        m.func.jacfwd(f)(x),
        AF.hessian(lambda x: f(x).sum(), x),
        m.func.hessian(lambda x: f(x).sum())(x),
        AF.jvp(f, x, v),
        m.func.jvp(f, (x,), (v,)),
        AF.vjp(f, x, v),
        m.func.vjp(f, x)[1](v),
    ]


# ============================================================================================
# UX Limitations: vmap limitations
# ============================================================================================
@_case()
def ux_vmap_is_a_for_loop(m):
    def f(x):
        return x.sin() @ x.cos()

    x = t(m, 4, 3)
    return m.func.vmap(f)(x), m.stack([f(xi) for xi in x.unbind(0)])


@_case()
def ux_side_effects_happen_once(m):
    printed = []

    def f(x, lst):
        lst.pop()
        printed.append("hello!")
        return x.sum(0)

    lst = [0, 1, 2, 3]
    result = m.func.vmap(f, in_dims=(0, None))(t(m, 3, 1), lst)
    return result, lst, printed


@_case()
def ux_inplace_into_unbatched_raises(m):
    def f(x, y):
        x.add_(y)
        return x

    return m.func.vmap(f, in_dims=(None, 0))(t(m, 1), t(m, 3, 1, k=1))


@_case()
def ux_inplace_into_unbatched_leaves_it_unchanged(m):
    def f(x, y):
        x.add_(y)
        return x

    x = t(m, 1)
    try:
        m.func.vmap(f, in_dims=(None, 0))(x, t(m, 3, 1, k=1))
    except RuntimeError:
        pass
    return x


@_case()
def ux_inplace_into_batched_ok(m):
    def f(x, y):
        x.add_(y)
        return x

    x, y = t(m, 3, 1), t(m, 3, 1, k=1)
    expected = x + y
    out = m.func.vmap(f, in_dims=(0, 0))(x, y)
    return out, x, expected, bool(m.allclose(x, expected))


@_case()
def ux_inplace_batched_self_unbatched_other(m):
    def f(x, y):
        x.mul_(y)
        return x

    x, y = t(m, 3, 2), t(m, 2, k=1)
    out = m.func.vmap(f, in_dims=(0, None))(x, y)
    return out, x


@_case()
def ux_diag_embed_with_torch_zeros_raises(m):
    def diag_embed(vec):
        assert vec.dim() == 1
        result = m.zeros(vec.shape[0], vec.shape[0])
        result.diagonal().copy_(vec)
        return result

    vecs = m.tensor([[0.0, 1, 2], [3.0, 4, 5]])
    return m.func.vmap(diag_embed)(vecs)


@_case()
def ux_diag_embed_with_new_zeros(m):
    def diag_embed(vec):
        assert vec.dim() == 1
        result = vec.new_zeros(vec.shape[0], vec.shape[0])
        result.diagonal().copy_(vec)
        return result

    vecs = m.tensor([[0.0, 1, 2], [3.0, 4, 5]])
    return m.func.vmap(diag_embed)(vecs)


@_case()
def ux_new_empty_then_fill_under_vmap(m):
    def f(vec):
        result = vec.new_empty(2, vec.shape[0])
        result.zero_()
        result[0].copy_(vec)
        result[1] = vec * 2
        return result

    return m.func.vmap(f)(t(m, 4, 3))


@_case(xfail="no out= keyword: TypeError where torch raises RuntimeError under vmap")
def ux_out_kwarg_under_vmap_raises(m):
    return m.func.vmap(lambda x: m.mul(x, 2, out=x))(t(m, 3))


@_case(xfail="no out= keyword: TypeError where torch raises RuntimeError under vmap")
def ux_out_kwarg_into_fresh_tensor_under_vmap_raises(m):
    return m.func.vmap(lambda x: m.add(x, 1, out=m.empty(())))(t(m, 3))


@_case()
def ux_data_dependent_if_raises(m):
    def relu(x):
        if x > 0:
            return x
        return 0

    return m.func.vmap(relu)(t(m, 3))


@_case()
def ux_data_dependent_while_raises(m):
    def f(x):
        while x < 10:
            x = x * 2
        return x

    return m.func.vmap(f)(t(m, 3).abs() + 0.1)


@_case()
def ux_bool_under_vmap_raises(m):
    return m.func.vmap(lambda x: x * 2 if bool(x) else x)(t(m, 3))


@_case()
def ux_control_flow_on_dim_is_fine(m):
    def custom_dot(x):
        if x.dim() == 1:
            return m.dot(x, x)
        return (x * x).sum()

    return m.func.vmap(custom_dot)(t(m, 3)), m.func.vmap(custom_dot)(t(m, 2, 3))


@_case()
def ux_control_flow_on_shape_loop_is_fine(m):
    def f(x):
        acc = x[0]
        for i in range(1, x.shape[0]):
            acc = acc * 0.5 + x[i]
        return acc

    return m.func.vmap(f)(t(m, 4, 3))


@_case()
def ux_where_replaces_if(m):
    def relu(x):
        return m.where(x > 0, x, m.zeros_like(x))

    x = t(m, 5)
    return m.func.vmap(relu)(x), m.func.vmap(m.func.grad(relu))(x)


@_case()
def ux_grad_allows_data_dependent_if(m):
    # the grad-related transforms do not have vmap's limitations
    def relu(x):
        if x > 0:
            return x
        return x * 0

    return [m.func.grad(relu)(m.tensor(v, dtype=m.float64)) for v in (2.0, -1.5)]


@_case()
def ux_item_under_vmap_raises(m):
    return m.func.vmap(lambda x: x.item())(t(m, 3))


@_case()
def ux_float_under_vmap_raises(m):
    return m.func.vmap(lambda x: x * float(x))(t(m, 3))


@_case()
def ux_tolist_under_vmap_raises(m):
    return m.func.vmap(lambda x: m.tensor(x.tolist()))(t(m, 3, 2))


@_case()
def ux_item_under_grad_is_a_constant(m):
    return m.func.grad(lambda x: x * x.item())(m.tensor(3.0, dtype=m.float64))


@_case()
def ux_nonzero_under_vmap_raises(m):
    xs = m.tensor([[0, 1, 2], [0, 0, 3]])
    return m.func.vmap(m.nonzero)(xs)


@_case()
def ux_boolean_mask_under_vmap_raises(m):
    return m.func.vmap(lambda x: x[x > 0])(t(m, 3, 4))


@_case()
def ux_masked_select_under_vmap_raises(m):
    return m.func.vmap(lambda x: m.masked_select(x, x > 0))(t(m, 3, 4))


@_case()
def ux_unique_under_vmap_raises(m):
    return m.func.vmap(m.unique)(m.tensor([[1, 1, 2], [3, 4, 5]]))


@_case()
def ux_nonzero_of_unbatched_tensor_is_fine(m):
    c = m.tensor([0.0, 2.0, 0.0, 3.0], dtype=m.float64)
    return m.func.vmap(lambda x: x * m.nonzero(c).sum())(t(m, 3))


# ============================================================================================
# UX Limitations: randomness
# ============================================================================================
@_case()
def rand_error_mode_is_default_raises(m):
    def add_noise(x):
        return x + m.randn(())

    return m.func.vmap(add_noise)(m.ones(3))


@_case()
def rand_different(m):
    def add_noise(x):
        y = m.randn(())
        return x + y

    result = m.func.vmap(add_noise, randomness="different")(m.ones(3))
    return result.shape, _pattern(result)


@_case()
def rand_same(m):
    def add_noise(x):
        y = m.randn(())
        return x + y

    result = m.func.vmap(add_noise, randomness="same")(m.ones(3))
    return result.shape, _pattern(result)


@_case()
def rand_same_keeps_batched_input_differences(m):
    x = m.tensor([[0, 0], [1, 1], [0, 0]])
    result = m.func.vmap(lambda x: x + m.randint(0, 1000, (2,)), randomness="same")(x)
    return result.shape, _pattern(result), _pattern(result - x)


@_case()
def rand_different_rows_of_rand_like(m):
    out = m.func.vmap(lambda x: m.rand_like(x), randomness="different")(m.zeros(4, 3))
    return out.shape, out.dtype, _pattern(out), bool(((out >= 0) & (out < 1)).all())


@_case()
def rand_inplace_normal_on_batched_same(m):
    out = m.func.vmap(lambda x: x.normal_(), randomness="same")(m.zeros(3))
    return out.shape, _pattern(out)


@_case()
def rand_inplace_normal_on_batched_different(m):
    out = m.func.vmap(lambda x: x.normal_(), randomness="different")(m.zeros(3))
    return out.shape, _pattern(out)


@_case()
def rand_inplace_on_unbatched_different_raises(m):
    def f(x):
        return m.ones(3).normal_() + x

    return m.func.vmap(f, randomness="different")(m.zeros(3))


@_case()
def rand_inplace_on_unbatched_same(m):
    def f(x):
        return m.ones(3).normal_() + x

    out = m.func.vmap(f, randomness="same")(m.zeros(4))
    return out.shape, _pattern(out)


@_case()
def rand_dropout_error_mode_raises(m):
    return m.func.vmap(lambda x: m.nn.functional.dropout(x, 0.5, training=True))(m.ones(3, 4))


@_case()
def rand_dropout_eval_mode_is_not_random(m):
    x = t(m, 3, 4)
    return m.func.vmap(lambda x: m.nn.functional.dropout(x, 0.5, training=False))(x)


@_case()
def rand_manual_seed_reproduces(m):
    f = m.func.vmap(lambda x: x + m.randn(2), randomness="different")
    m.manual_seed(3)
    a = f(m.zeros(3, 2))
    m.manual_seed(3)
    b = f(m.zeros(3, 2))
    c = f(m.zeros(3, 2))
    return bool(m.equal(a, b)), bool(m.equal(a, c))


@_case()
def rand_jacfwd_error_mode_raises(m):
    return m.func.jacfwd(lambda x: x * m.randn(3))(m.ones(3))


@_case()
def rand_jacfwd_randomness_same(m):
    jac = m.func.jacfwd(lambda x: x * m.randn(3), randomness="same")(m.ones(3))
    return jac.shape, bool((jac - m.diag(m.diagonal(jac)) == 0).all())


@_case()
def rand_randomness_bad_value_raises(m):
    return m.func.vmap(lambda x: x, randomness="sometimes")(m.ones(3))


@_case()
def rand_ops_different(m):
    def f(x):
        return (
            m.randint(0, 1000, (8,)) + x[:8].long(),
            m.bernoulli(m.full((32,), 0.5)) + x,
            m.normal(x, 1.0),
            m.randn_like(x),
            x.clone().uniform_(),
        )

    outs = m.func.vmap(f, randomness="different")(m.zeros(4, 32))
    return [(o.shape, o.dtype, _pattern(o)) for o in outs]


@_case()
def rand_ops_same(m):
    def f(x):
        return (
            m.randint(0, 1000, (8,)) + x.long(),
            m.multinomial(m.ones(6), 3) + x[:3].long(),
            m.normal(0.0, 1.0, (8,)) + x,
            x.clone().bernoulli_(0.5),
            m.nn.functional.dropout(m.ones(8) + x, 0.5),
            m.rand(8, generator=m.Generator().manual_seed(0)) + x,
        )

    outs = m.func.vmap(f, randomness="same")(m.zeros(4, 8))
    return [(o.shape, o.dtype, _pattern(o)) for o in outs]


@_case()
def rand_dropout_module_different(m):
    drop = m.nn.Dropout(0.5)
    out = m.func.vmap(drop, randomness="different")(m.ones(4, 32, dtype=m.float64))
    return out.shape, _pattern(out), sorted(set(out.flatten().tolist()))


@_case()
def rand_multinomial_different(m):
    out = m.func.vmap(lambda p: m.multinomial(p, 2), randomness="different")(m.ones(3, 4))
    return out.shape, out.dtype, bool(((out >= 0) & (out < 4)).all())


@_case()
def rand_bernoulli_error_mode_raises(m):
    return m.func.vmap(m.bernoulli)(m.full((3, 4), 0.5))


@_case()
def rand_randperm_same(m):
    out = m.func.vmap(lambda x: m.randperm(6) + x, randomness="same")(m.zeros(4, 1, dtype=m.long))
    return out.shape, _pattern(out), out.sort(dim=1).values


@_case()
def rand_randperm_different(m):
    out = m.func.vmap(lambda x: m.randperm(6) + x, randomness="different")(
        m.zeros(4, 1, dtype=m.long)
    )
    return out.shape, _pattern(out), out.sort(dim=1).values


# ============================================================================================
# vmap of functions returning non-tensors, odd inputs
# ============================================================================================
@_case()
def out_int_raises(m):
    return m.func.vmap(lambda x: 1)(t(m, 3))


@_case()
def out_none_raises(m):
    return m.func.vmap(lambda x: None)(t(m, 3))


@_case()
def out_tuple_with_int_raises(m):
    return m.func.vmap(lambda x: (x, 1))(t(m, 3))


@_case()
def out_float_raises(m):
    return m.func.vmap(lambda x: x.sum().item() if False else 2.5)(t(m, 3))


@_case()
def out_non_tensor_with_out_dims_none(m):
    x = t(m, 3)
    return (
        m.func.vmap(lambda x: (x * 2, 3), out_dims=(0, None))(x),
        m.func.vmap(lambda x: 3, out_dims=None)(x),
        m.func.vmap(lambda x: (x * 2, None), out_dims=(0, None))(x),
    )


@_case()
def out_dict_and_list(m):
    x = t(m, 3, 2)
    return m.func.vmap(lambda x: {"s": x.sum(), "l": [x.sin(), (x.cos(),)]})(x)


@_case()
def in_no_inputs_raises(m):
    return m.func.vmap(lambda: m.ones(3))()


@_case()
def in_float_with_in_dim_raises(m):
    return m.func.vmap(lambda x: x)(1.0)


@_case()
def in_float_with_in_dim_none(m):
    return m.func.vmap(lambda x, s: x * s, in_dims=(0, None))(t(m, 3), 2.0)


@_case()
def in_size_mismatch_raises(m):
    return m.func.vmap(m.add)(t(m, 3), t(m, 4, k=1))


@_case()
def in_dim_out_of_range_raises(m):
    return m.func.vmap(m.sin, in_dims=2)(t(m, 3, 2))


@_case()
def in_dims_list_raises(m):
    return m.func.vmap(lambda x, y: x * y, in_dims=[0, None])(t(m, 3), t(m, 1))


@_case()
def in_dims_negative_and_out_dims_negative(m):
    x = t(m, 2, 3)
    return m.vmap(lambda x: x.sum(), in_dims=-1)(x), m.vmap(lambda x: x * 2, out_dims=-1)(x)


@_case()
def in_kwargs_tensor_not_batched(m):
    return m.vmap(lambda x, *, y: x * y)(t(m, 3), y=t(m, 2, 1, k=1))


@_case()
def in_empty_batch(m):
    return m.vmap(lambda x: x * 2)(t(m, 0, 3))


@_case()
def in_zero_dim_raises(m):
    return m.vmap(lambda x: x)(t(m))


# ============================================================================================
# more of "vmap limitations" / "torch.autograd APIs", as users hit them
# ============================================================================================
@_case()
def ux_numpy_under_vmap_raises(m):
    return m.vmap(lambda x: m.tensor(x.numpy()))(t(m, 3))


@_case()
def ux_tensor_ctor_of_batched_under_vmap_raises(m):
    return m.vmap(lambda x: m.tensor(x))(t(m, 2, 1))


@_case()
def ux_tensor_ctor_under_grad_is_a_constant_copy(m):
    return m.func.grad(lambda x: (m.tensor(x) * x.sin()).sum())(t(m, 3))


@_case()
def ux_as_tensor_of_batched_under_vmap(m):
    return m.vmap(lambda x: m.as_tensor(x) + 1)(t(m, 2, 1))


@_case()
def ux_tensor_ctor_and_shape_under_vmap(m):
    x = t(m, 2, 3)
    return (
        m.vmap(lambda x: m.tensor([1.0, 2.0], dtype=m.float64) * x[:2])(x),
        m.vmap(lambda x: m.tensor(x.shape))(x),
        m.vmap(lambda x: x.new_ones(x.size(0)) * x.numel())(x),
    )


@_case()
def ux_item_of_unbatched_closure_under_vmap(m):
    c = t(m, 1, k=1)
    return m.vmap(lambda x: x * c.sum().item())(t(m, 3))


@_case()
def ux_grad_of_item_under_vmap_raises(m):
    return m.vmap(m.func.grad(lambda x: x * x.item()))(t(m, 3))


@_case()
def ux_inplace_batched_into_captured_raises(m):
    buf = m.zeros(3, dtype=m.float64)
    return m.vmap(lambda x: buf.add_(x))(t(m, 2, 3))


@_case()
def ux_inplace_unbatched_into_captured(m):
    buf = m.zeros(3, dtype=m.float64)
    out = m.vmap(lambda x: buf.add_(1.0) * x)(t(m, 2, 3))
    return out, buf


@_case()
def ux_inplace_on_batched_view(m):
    x = t(m, 2, 3)
    out = m.vmap(lambda x: x[0].add_(1))(x)
    return out, x


@_case()
def ux_requires_grad_inside_grad_raises(m):
    return m.func.grad(lambda x: (x * m.ones(3).requires_grad_()).sum())(m.ones(3))


@_case()
def ux_grad_mutating_its_input_raises(m):
    return m.func.grad(lambda x: x.mul_(2).sum())(t(m, 3))


@_case()
def ux_jvp_with_inplace_on_clone(m):
    x = t(m, 3)
    return m.func.jvp(lambda x: x.clone().mul_(x), (x,), (m.ones_like(x),))


@_case()
def ux_detach_inside_grad(m):
    return m.func.grad(lambda x: (x.detach() * x).sum())(t(m, 3))


@_case()
def ux_attributes_inside_transforms(m):
    seen = []

    def f(x):
        seen.append((x.requires_grad, x.dim(), str(x.dtype).rsplit(".", 1)[-1], tuple(x.shape)))
        return x.sum()

    x = t(m, 2, 3)
    m.func.grad(f)(x)
    m.vmap(f)(x.requires_grad_())
    return seen


@_case()
def ux_one_hot_without_num_classes_under_vmap_raises(m):
    return m.vmap(lambda x: m.nn.functional.one_hot(x))(m.tensor([[0, 1], [1, 2]]))


@_case()
def ux_one_hot_with_num_classes_under_vmap(m):
    return m.vmap(lambda x: m.nn.functional.one_hot(x, 3))(m.tensor([[0, 1], [1, 2]]))


@_case()
def ux_data_dependent_if_under_jacrev_jacfwd_hessian(m):
    def relu(x):
        if x > 0:
            return x**3
        return x * 0

    x = m.tensor(1.5, dtype=m.float64)
    return (
        m.func.jacrev(relu)(x),
        m.func.jacfwd(relu)(x),
        m.func.hessian(relu)(x),
        m.func.vjp(relu, x)[1](m.tensor(1.0, dtype=m.float64)),
        m.func.jvp(relu, (x,), (m.tensor(1.0, dtype=m.float64),)),
    )


# ============================================================================================
# transforms compose with regular autograd (what lennard_jones relies on)
# ============================================================================================
@_case()
def autograd_through_func_transforms(m):
    def f(x):
        return x.sin() * x.sum()

    out = []
    for make in (
        lambda x: m.func.grad(lambda x: (x**3).sum())(x),
        lambda x: m.func.jacrev(f)(x),
        lambda x: m.func.jacfwd(f)(x),
        lambda x: m.func.hessian(lambda x: f(x).sum())(x),
        lambda x: m.func.vjp(f, x)[1](m.ones_like(x))[0],
        lambda x: m.func.jvp(f, (x,), (m.ones_like(x),))[1],
        lambda x: m.vmap(f)(x.reshape(3, 1)),
    ):
        x = t(m, 3).requires_grad_()
        y = make(x)
        y.sum().backward()
        out.append((y, y.requires_grad, x.grad))
    return out


@_case()
def autograd_create_graph_through_vmap_grad(m):
    w = t(m, 3).requires_grad_()
    xs = t(m, 4, 3, k=1)
    g = m.vmap(m.func.grad(lambda w, x: (w * x).sin().sum()), in_dims=(None, 0))(w, xs)
    (gw,) = m.autograd.grad(g.pow(2).sum(), w, create_graph=True)
    (ggw,) = m.autograd.grad(gw.sum(), w)
    return g, gw, ggw


# ============================================================================================
# results of the transforms are ordinary tensors (views, in-place, contiguity)
# ============================================================================================
@_case()
def result_grad_of_linear_weight_view(m):
    model = _model(m, lambda m: m.nn.Linear(4, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = t(m, 5, 4)
    g = m.func.grad(lambda p: m.func.functional_call(model, p, (x,)).sum())(params)
    return g["weight"].view(-1), g["bias"].view(-1)


@_case()
def result_per_sample_grads_inplace_clip(m):
    model = _model(m, lambda m: m.nn.Linear(4, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x):
        return m.func.functional_call(model, p, (x.unsqueeze(0),)).sum()

    g = m.vmap(m.func.grad(loss), in_dims=(None, 0))(params, t(m, 5, 4))
    factor = t(m, 5, k=1).abs()
    g["bias"].mul_(factor.unsqueeze(1))
    g["weight"].mul_(factor.view(5, 1, 1))
    g["bias"][0, 0] = 100.0
    return g


@_case()
def result_per_sample_grads_reshape_and_clone(m):
    model = _model(m, lambda m: m.nn.Linear(4, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x):
        return m.func.functional_call(model, p, (x.unsqueeze(0),)).sum()

    g = m.vmap(m.func.grad(loss), in_dims=(None, 0))(params, t(m, 5, 4))
    flat = m.cat([v.reshape(5, -1) for v in g.values()], dim=1)
    b = g["bias"].clone()
    b[0, 0] = 100.0
    return flat, b, g["bias"]


@_case()
def result_vjp_twice(m):
    _, vf = m.func.vjp(lambda x: x.sin(), t(m, 3))
    return vf(m.ones(3, dtype=m.float64)), vf(2 * m.ones(3, dtype=m.float64))


# ============================================================================================
# Migrating from functorch
# ============================================================================================
@_case()
def migrate_functional_call_grad(m):
    inputs, targets = t(m, 8, 3), t(m, 8, 3, k=1)
    model = _model(m, lambda m: m.nn.Linear(3, 3))
    params = dict(model.named_parameters())

    def compute_loss(params, inputs, targets):
        prediction = m.func.functional_call(model, params, (inputs,))
        return m.nn.functional.mse_loss(prediction, targets)

    grads = m.func.grad(compute_loss)(params, inputs, targets)
    return grads, [p.grad is None for p in model.parameters()]


@_case()
def migrate_jacrev_of_partial_functional_call(m):
    inputs = t(m, 4, 3)
    model = _model(m, lambda m: m.nn.Linear(3, 3))
    params = dict(model.named_parameters())
    jac = m.func.jacrev(functools.partial(m.func.functional_call, model), argnums=0)
    return jac(params, (inputs,))


@_case()
def migrate_stack_module_state_ensemble(m):
    num_models, batch_size, in_features, out_features = 3, 4, 3, 2
    models = [
        _model(m, lambda m: m.nn.Linear(in_features, out_features), seed=i)
        for i in range(num_models)
    ]
    data = t(m, batch_size, in_features)
    base_model = copy.deepcopy(models[0])
    base_model.to("meta")
    params, buffers = m.func.stack_module_state(models)

    def call_single_model(params, buffers, data):
        return m.func.functional_call(base_model, (params, buffers), (data,))

    output = m.vmap(call_single_model, (0, 0, None))(params, buffers, data)
    loop = m.stack([mod(data) for mod in models])
    return output, loop, output.shape == (num_models, batch_size, out_features)


@_case()
def migrate_model_to_meta_keeps_working_with_dict(m):
    model = _model(m, _mlp([3, 4, 2]))
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    model.to("meta")
    x = t(m, 5, 3)

    def loss(params, x):
        return m.func.functional_call(model, params, (x,)).pow(2).sum()

    for _ in range(2):
        g = m.func.grad(loss)(params, x)
        params = {k: params[k] - 0.1 * g[k] for k in params}
    return params, loss(params, x), next(model.parameters()).device.type


# ============================================================================================
# API reference docstrings: vmap
# ============================================================================================
@_case()
def api_vmap_batched_dot(m):
    x, y = t(m, 2, 5), t(m, 2, 5, k=1)
    return m.func.vmap(m.dot)(x, y)


@_case()
def api_vmap_model_with_closure(m):
    weights = t(m, 5)

    def model(feature_vec):
        return feature_vec.dot(weights).relu()

    examples = t(m, 4, 5, k=1)
    return m.vmap(model)(examples)


@_case()
def api_vmap_jacobian_rows_via_vjp(m):
    x = t(m, 4)
    y, vjp_fn = m.func.vjp(m.sin, x)
    (jac,) = m.vmap(vjp_fn)(m.eye(4, dtype=m.float64))
    return y, jac


@_case()
def api_vmap_nested(m):
    x, y = t(m, 2, 3, 5), t(m, 2, 3, 5, k=1)
    return m.vmap(m.vmap(m.dot))(x, y)


@_case()
def api_vmap_in_dims_1(m):
    x, y = t(m, 5, 2), t(m, 5, 2, k=1)
    return m.vmap(m.dot, in_dims=1)(x, y)


@_case()
def api_vmap_in_dims_none(m):
    x, y = t(m, 2, 5), t(m, 5, k=1)
    return m.vmap(m.dot, in_dims=(0, None))(x, y)


@_case()
def api_vmap_in_dims_pytree(m):
    def f(d):
        return m.dot(d["x"], d["y"])

    x, y = t(m, 2, 5), t(m, 5, k=1)
    return m.vmap(f, in_dims=({"x": 0, "y": None},))({"x": x, "y": y})


@_case()
def api_vmap_in_dims_tuple_input(m):
    def f(pair, z):
        a, b = pair
        return a * b + z

    a, b, z = t(m, 3, 2), t(m, 2, 3, k=1), t(m, 2, k=2)
    return m.vmap(f, in_dims=((0, 1), None))((a, b), z)


@_case()
def api_vmap_out_dims_1(m):
    x = t(m, 2, 5)
    return m.vmap(lambda x: x**2, out_dims=1)(x)


@_case()
def api_vmap_kwargs_not_vmapped(m):
    def fn(x, scale=4.0):
        return x * scale

    x = t(m, 2, 5)
    batched_pow = m.vmap(fn)
    return batched_pow(x), batched_pow(x, scale=x)


@_case()
def api_vmap_chunk_size(m):
    x = t(m, 7, 3)
    f = lambda x: x.sin() @ x  # noqa: E731
    return m.vmap(f, chunk_size=2)(x), m.vmap(f, chunk_size=1)(x), m.vmap(f)(x)


@_case()
def api_vmap_chunk_size_zero_raises(m):
    return m.vmap(m.sin, chunk_size=0)(t(m, 3))


@_case()
def api_vmap_no_grad_inside(m):
    def f(x):
        with m.no_grad():
            c = x**2
        return x - c

    x = t(m, 3)
    return m.vmap(m.func.grad(f))(x)


@_case()
def api_vmap_of_module_call(m):
    model = _model(m, _mlp([3, 4, 2], "Tanh"))
    x = t(m, 5, 3)
    return m.vmap(model)(x), model(x)


# ============================================================================================
# API reference docstrings: grad, grad_and_value
# ============================================================================================
@_case()
def api_grad_sin_and_nested(m):
    x = t(m)
    cos_x = m.func.grad(lambda x: m.sin(x))(x)
    neg_sin_x = m.func.grad(m.func.grad(lambda x: m.sin(x)))(x)
    return cos_x, m.cos(x), neg_sin_x, -m.sin(x)


@_case()
def api_grad_vmap_per_sample(m):
    batch_size, feature_size = 3, 5

    def model(weights, feature_vec):
        assert feature_vec.dim() == 1
        return feature_vec.dot(weights).relu()

    def compute_loss(weights, example, target):
        y = model(weights, example)
        return ((y - target) ** 2).mean()

    weights = t(m, feature_size)
    examples = t(m, batch_size, feature_size, k=1)
    targets = t(m, batch_size, k=2)
    inputs = (weights, examples, targets)
    return m.func.vmap(m.func.grad(compute_loss), in_dims=(None, 0, 0))(*inputs)


@_case()
def api_grad_argnums_and_has_aux(m):
    def my_loss_func(y, y_pred):
        loss_per_sample = (0.5 * y_pred - y) ** 2
        loss = loss_per_sample.mean()
        return loss, (y_pred, loss_per_sample)

    fn = m.func.grad(my_loss_func, argnums=(0, 1), has_aux=True)
    y_true = t(m, 4)
    y_preds = t(m, 4, k=1).requires_grad_()
    out = fn(y_true, y_preds)
    return out, out[1][0].requires_grad, y_preds.grad is None


@_case()
def api_grad_argnums_int_and_negative(m):
    def f(x, y):
        return (x**2 + y**3).sum()

    x, y = t(m, 3), t(m, 3, k=1)
    return m.func.grad(f, argnums=1)(x, y), m.func.grad(f, argnums=-1)(x, y)


@_case()
def api_grad_no_grad_inside_and_outside(m):
    def f(x):
        with m.no_grad():
            c = x**2
        return x - c

    x = t(m)
    inside = m.func.grad(f)(x)
    with m.no_grad():
        outside = m.func.grad(f)(x)
        outer_sin = m.func.grad(m.sin)(x)
    return inside, outside, outer_sin


@_case()
def api_grad_non_scalar_output_raises(m):
    return m.func.grad(m.sin)(t(m, 3))


@_case()
def api_grad_non_tensor_output_raises(m):
    return m.func.grad(lambda x: 1.0)(t(m))


@_case()
def api_grad_integer_input_raises(m):
    return m.func.grad(lambda x: (x * 2).sum())(m.tensor([1, 2, 3]))


@_case()
def api_grad_argnums_out_of_range_raises(m):
    return m.func.grad(lambda x, y: (x * y).sum(), argnums=2)(t(m, 2), t(m, 2, k=1))


@_case()
def api_grad_has_aux_not_tuple_raises(m):
    return m.func.grad(lambda x: x.sum(), has_aux=True)(t(m, 2))


@_case()
def api_grad_and_value(m):
    def f(x, y):
        z = (x * y).sin().sum()
        return z, {"xy": x * y}

    x, y = t(m, 3), t(m, 3, k=1)
    return (
        m.func.grad_and_value(lambda x: (x**2).sum())(x),
        m.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(x, y),
    )


@_case()
def api_grad_of_dict_input(m):
    def f(p):
        return (p["a"] * p["b"].sum()).sum() + p["c"][0].pow(2).sum()

    p = {"a": t(m, 2), "b": t(m, 3, k=1), "c": [t(m, 2, k=2)]}
    return m.func.grad(f)(p)


# ============================================================================================
# API reference docstrings: vjp, jvp, linearize
# ============================================================================================
@_case()
def api_vjp_basic(m):
    x = t(m, 5)
    f = lambda x: x.sin().sum()  # noqa: E731
    _, vjpfunc = m.func.vjp(f, x)
    grad = vjpfunc(m.tensor(1.0, dtype=m.float64))[0]
    return grad, m.cos(x)


@_case()
def api_vjp_with_vmap(m):
    x = t(m, 4, 5)
    f = lambda x: x.sin() * 2  # noqa: E731
    _, vjpfunc = m.func.vjp(f, x)
    vjps = m.vmap(vjpfunc)(m.ones(3, 4, 5, dtype=m.float64))
    return vjps


@_case()
def api_vjp_multiple_primals_and_outputs(m):
    def f(x, y):
        return x * y, (x + y).sum()

    x, y = t(m, 3), t(m, 3, k=1)
    out, vjpfunc = m.func.vjp(f, x, y)
    return out, vjpfunc((t(m, 3, k=2), m.tensor(2.0, dtype=m.float64)))


@_case()
def api_vjp_has_aux(m):
    def f(x):
        return x.sin(), {"cos": x.cos()}

    x = t(m, 3)
    out, vjpfunc, aux = m.func.vjp(f, x, has_aux=True)
    return out, vjpfunc(m.ones_like(x)), aux


@_case()
def api_vjp_no_grad_inside_and_outside(m):
    def f(x):
        with m.no_grad():
            c = x**2
        return x - c

    x = t(m, 3)
    _, vjp_fn = m.func.vjp(f, x)
    inside = vjp_fn(m.ones_like(x))
    with m.no_grad():
        _, vjp_fn = m.func.vjp(f, x)
        outside = vjp_fn(m.ones_like(x))
    return inside, outside


@_case()
def api_vjp_wrong_cotangent_shape_raises(m):
    _, vjp_fn = m.func.vjp(m.sin, t(m, 3))
    return vjp_fn(t(m, 4))


@_case()
def api_jvp_sin(m):
    x = t(m)
    jvp_out = m.func.jvp(m.sin, (x,), (m.tensor(1.0, dtype=m.float64),))
    return jvp_out, m.cos(x)


@_case()
def api_jvp_two_primals(m):
    def f(x, y):
        return x * y

    x, y = t(m, 5), t(m, 5, k=1)
    ones = m.ones(5, dtype=m.float64)
    return m.func.jvp(f, (x, y), (ones, ones)), x + y


@_case()
def api_jvp_has_aux_and_no_grad(m):
    def f(x):
        with m.no_grad():
            c = x**2
        return x - c, {"c": c}

    x = t(m, 3)
    return m.func.jvp(f, (x,), (m.ones_like(x),), has_aux=True)


@_case()
def api_jvp_primals_not_tuple_raises(m):
    x = t(m, 3)
    return m.func.jvp(m.sin, x, m.ones_like(x))


@_case()
def api_jvp_tangent_shape_mismatch_raises(m):
    return m.func.jvp(m.sin, (t(m, 3),), (t(m, 4),))


@_case()
def api_linearize(m):
    def fn(x):
        return x.sin()

    x = t(m, 3, 3)
    output, jvp_fn = m.func.linearize(fn, x)
    return output, jvp_fn(m.ones(3, 3, dtype=m.float64)), jvp_fn(x), m.func.jvp(fn, (x,), (x,))


@_case()
def api_linearize_bad_tangent_shape_raises(m):
    _, jvp_fn = m.func.linearize(m.sin, t(m, 3))
    return jvp_fn(t(m, 4))


@_case()
def api_grad_kwargs_not_differentiated(m):
    x, s = t(m, 3), t(m, 3, k=1)
    return m.func.grad(lambda x, scale=1.0: (x * scale).sin().sum())(x, scale=s)


@_case()
def api_grad_with_non_tensor_arg(m):
    f = lambda x, n: (x**n).sum()  # noqa: E731
    return m.func.grad(f)(t(m, 3), 3)


@_case()
def api_grad_wrt_non_tensor_arg_raises(m):
    return m.func.grad(lambda x, n: (x**n).sum(), argnums=1)(t(m, 3), 3)


@_case()
def api_jacrev_non_tensor_output_raises(m):
    return m.func.jacrev(lambda x: 1.0)(t(m, 3))


@_case()
def api_hessian_has_aux_raises(m):
    return m.func.hessian(lambda x: x.sum(), has_aux=True)(t(m, 3))


# ============================================================================================
# API reference docstrings: jacrev, jacfwd, hessian
# ============================================================================================
def _jac_api_cases(name):
    J = name  # "jacrev" / "jacfwd"

    def jacobian_of_sin(m):
        x = t(m, 5)
        jac = getattr(m.func, J)(m.sin)(x)
        return jac, m.diag(m.cos(x))

    def with_vmap(m):
        x = t(m, 6, 5)
        return m.vmap(getattr(m.func, J)(m.sin))(x)

    def has_aux(m):
        def f(x):
            x_sin = x.sin()
            return x_sin, x_sin

        x = t(m, 5)
        return getattr(m.func, J)(f, has_aux=True)(x)

    def nested_is_hessian(m):
        f = lambda x: x.sin().sum()  # noqa: E731
        x = t(m, 5)
        jac = getattr(m.func, J)
        return jac(jac(f))(x), m.diag(-x.sin())

    def argnums(m):
        def f(x, y):
            return x + y**2

        x, y = t(m, 5), t(m, 5, k=1)
        jac = getattr(m.func, J)
        return jac(f, argnums=1)(x, y), jac(f, argnums=(0, 1))(x, y)

    def no_grad_inside_and_outside(m):
        def f(x):
            with m.no_grad():
                c = x**2
            return x - c

        x = t(m, 3)
        jac = getattr(m.func, J)
        inside = jac(f)(x)
        with m.no_grad():
            outside = jac(f)(x)
        return inside, outside

    def dict_input_and_output(m):
        def f(d):
            return {"s": d["a"].sin() * d["b"], "p": (d["a"] * d["b"]).sum()}

        d = {"a": t(m, 3), "b": t(m, 3, k=1)}
        return getattr(m.func, J)(f)(d)

    out = {
        "jacobian_of_sin": jacobian_of_sin,
        "with_vmap": with_vmap,
        "has_aux": has_aux,
        "nested_is_hessian": nested_is_hessian,
        "argnums": argnums,
        "no_grad_inside_and_outside": no_grad_inside_and_outside,
        "dict_input_and_output": dict_input_and_output,
    }
    for key, fn in out.items():
        CASES.register(f"api_{name}_{key}", fn)


_jac_api_cases("jacrev")
_jac_api_cases("jacfwd")


@_case()
def api_jacrev_chunk_size(m):
    f = lambda x: x.sin() * x.sum()  # noqa: E731
    x = t(m, 5)
    J = m.func.jacrev
    return J(f, chunk_size=1)(x), J(f, chunk_size=2)(x), J(f, chunk_size=10)(x), J(f)(x)


@_case()
def api_jacrev_chunk_size_zero_raises(m):
    return m.func.jacrev(m.sin, chunk_size=0)(t(m, 3))


@_case()
def api_hessian(m):
    def f(x):
        return x.sin().sum()

    x = t(m, 5)
    return m.func.hessian(f)(x), m.diag(-x.sin())


@_case()
def api_hessian_argnums(m):
    def f(x, y):
        return (x**2 * y).sum() + (y**3).sum()

    x, y = t(m, 3), t(m, 3, k=1)
    return m.func.hessian(f, argnums=1)(x, y), m.func.hessian(f, argnums=(0, 1))(x, y)


@_case()
def api_hessian_of_model_params(m):
    model = _model(m, _mlp([2, 3, 1], "Tanh"))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = t(m, 4, 2)

    def loss(p):
        return m.func.functional_call(model, p, (x,)).pow(2).mean()

    h = m.func.hessian(loss)(params)
    return {k: h[k]["0.weight"] for k in h}


# ============================================================================================
# API reference docstrings: functionalize
# ============================================================================================
@_case()
def api_functionalize_view_mutation(m):
    def f(a):
        b = a + 1
        c = b.view(-1)
        c.add_(1)
        return b

    x = t(m, 2, 3)
    g = m.func.functionalize(f, remove="mutations_and_views")
    return f(x), m.func.functionalize(f)(x), g(x)


@_case()
def api_functionalize_input_mutation_is_kept(m):
    def f(x):
        x.mul_(2)
        return x.sum()

    x = t(m, 3)
    out = m.func.functionalize(f)(x)
    return out, x


@_case()
def api_functionalize_under_jacrev_and_vmap(m):
    # (torch's jacrev of functionalize fails on a mutated slice view: not tested)
    def f(x):
        y = x.clone()
        y.add_(x.sin())
        y.mul_(x)
        return y

    def f2(a):
        b = a + 1
        c = b.view(-1)
        c.add_(1)
        return b

    x = t(m, 3)
    g, g2 = m.func.functionalize(f), m.func.functionalize(f2)
    return [
        m.func.jacrev(g)(x),
        m.func.jacfwd(g)(x),
        m.vmap(g)(t(m, 2, 3, k=1)),
        m.func.jacrev(g2)(x),
        m.func.jacfwd(g2)(x),
    ]


@_case()
def api_functionalize_setitem_under_vmap(m):
    # (torch's jacrev/jacfwd of this functionalized f fail: no derivative for aten::copy)
    def f(x):
        y = x.clone()
        y[0] = y[0] * 3
        y.add_(x.sin())
        return y

    return m.vmap(m.func.functionalize(f))(t(m, 2, 3, k=1)), m.func.jacrev(f)(t(m, 3))


@_case()
def api_functionalize_bad_remove_raises(m):
    return m.func.functionalize(m.sin, remove="everything")(t(m, 3))


# ============================================================================================
# API reference docstrings: functional_call, stack_module_state
# ============================================================================================
def _tied_class(m):
    class Foo(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.foo = m.nn.Parameter(m.tensor([1.0, 2.0], dtype=m.float64))
            self.bar = self.foo
            self.register_buffer("buf", m.tensor([10.0, 20.0], dtype=m.float64))

        def forward(self, x):
            return x * self.foo + x * self.bar + self.buf

    return Foo


@_case()
def api_functional_call_tied_weights(m):
    foo = _tied_class(m)()
    x = t(m, 2)
    new_foo = m.tensor([3.0, 4.0], dtype=m.float64)
    tied = m.func.functional_call(foo, {"foo": new_foo}, (x,))
    untied = m.func.functional_call(foo, {"foo": new_foo}, (x,), tie_weights=False)
    return tied, untied, foo(x), [k for k, _ in foo.named_parameters()]


@_case()
def api_functional_call_tied_conflict_raises(m):
    foo = _tied_class(m)()
    d = {"foo": m.ones(2, dtype=m.float64), "bar": m.zeros(2, dtype=m.float64)}
    return m.func.functional_call(foo, d, (t(m, 2),))


@_case()
def api_functional_call_params_and_buffers_tuple(m):
    foo = _tied_class(m)()
    x = t(m, 2)
    p = {"foo": t(m, 2, k=1)}
    b = {"buf": t(m, 2, k=2)}
    return m.func.functional_call(foo, (p, b), (x,)), foo.buf


@_case()
def api_functional_call_duplicate_key_raises(m):
    foo = _tied_class(m)()
    p = {"foo": t(m, 2, k=1)}
    return m.func.functional_call(foo, (p, dict(p)), (t(m, 2),))


@_case()
def api_functional_call_strict_missing_raises(m):
    model = _model(m, lambda m: m.nn.Linear(2, 2))
    return m.func.functional_call(model, {"weight": t(m, 2, 2)}, (t(m, 2),), strict=True)


@_case()
def api_functional_call_strict_unexpected_raises(m):
    model = _model(m, lambda m: m.nn.Linear(2, 2))
    p = dict(model.named_parameters())
    p["extra"] = t(m, 1)
    return m.func.functional_call(model, p, (t(m, 2),), strict=True)


@_case()
def api_functional_call_partial_and_kwargs(m):
    def build(m):
        class Scaled(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(2, 2)

            def forward(self, x, scale=1.0, shift=None):
                y = self.lin(x) * scale
                return y if shift is None else y + shift

        return Scaled()

    model = _model(m, build)
    x = t(m, 3, 2)
    w = t(m, 2, 2, k=1)
    return (
        m.func.functional_call(model, {"lin.weight": w}, (x,), {"scale": 2.0}),
        m.func.functional_call(model, {"lin.weight": w}, x, {"shift": t(m, 2, k=2)}),
        model.lin.weight,
    )


@_case()
def api_functional_call_restores_module_on_error(m):
    model = _model(m, lambda m: m.nn.Linear(2, 2))
    before = model.weight.detach().clone()

    def boom(x):
        raise ValueError("boom")

    model.register_forward_hook(lambda mod, inp, out: boom(out))
    try:
        m.func.functional_call(model, {"weight": t(m, 2, 2, k=3)}, (t(m, 2),))
    except ValueError:
        pass
    return model.weight, before, type(model.weight).__name__


@_case()
def api_stack_module_state(m):
    models = [_model(m, lambda m: m.nn.Linear(1, 1), seed=i) for i in range(4)]
    data = t(m, 5, 1)
    stacked_params, stacked_buffers = m.func.stack_module_state(models)

    def wrapper(params, buffers, data):
        return m.func.functional_call(models[0], (params, buffers), data)

    out = m.vmap(wrapper, in_dims=(0, 0, None))(stacked_params, stacked_buffers, data)
    meta = {
        k: (v.shape, v.requires_grad, v.is_leaf, v.grad_fn is None)
        for k, v in stacked_params.items()
    }
    return out, stacked_buffers, meta, m.stack([mod(data) for mod in models])


@_case()
def api_stack_module_state_buffers(m):
    @functools.cache
    def with_buf(m):
        class WithBuf(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(2, 2)
                self.register_buffer("center", m.zeros(2, dtype=m.float64))

            def forward(self, x):
                return self.lin(x - self.center)

        return WithBuf

    models = [_model(m, lambda m: with_buf(m)(), seed=i) for i in range(3)]
    for i, mod in enumerate(models):
        mod.center.fill_(float(i))
    params, buffers = m.func.stack_module_state(models)
    x = t(m, 4, 2)
    out = m.vmap(lambda p, b, x: m.func.functional_call(models[0], (p, b), (x,)), (0, 0, None))(
        params, buffers, x
    )
    return out, buffers, m.stack([mod(x) for mod in models])


@_case()
def api_stack_module_state_mismatch_raises(m):
    a = _model(m, lambda m: m.nn.Linear(2, 2))
    b = _model(m, lambda m: m.nn.Linear(2, 3))
    return m.func.stack_module_state([a, b])


@_case()
def api_stack_module_state_empty_raises(m):
    return m.func.stack_module_state([])


# ============================================================================================
# "Extending torch.func with autograd.Function" (docs/source/notes/extending.func.rst)
# ============================================================================================
@functools.cache
def _ext_fns(m):
    """``NumpySort``/``NumpyTake`` (numpy inside, vmap staticmethods) and ``MyCube`` (an
    extra output, ``generate_vmap_rule``), as on that page."""

    def to_numpy(tensor):
        return tensor.cpu().numpy()

    class NumpySort(m.autograd.Function):
        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (
                m.tensor(result, device=device),
                m.tensor(ind, device=device),
                m.tensor(ind_inv, device=device),
            )

        @staticmethod
        def setup_context(ctx, inputs, output):
            _x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

        @staticmethod
        def vmap(info, in_dims, x, dim):
            x_bdim, _ = in_dims
            x = x.movedim(x_bdim, 0)
            dim = dim if dim >= 0 else dim + x.dim() - 1
            return NumpySort.apply(x, dim + 1), (0, 0, 0)

    class NumpyTake(m.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x = to_numpy(x)
            ind = to_numpy(ind)
            return m.tensor(np.take_along_axis(x, ind, dim), device=device)

        @staticmethod
        def setup_context(ctx, inputs, output):
            _x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
            return result, None, None, None

        @staticmethod
        def vmap(info, in_dims, x, ind, ind_inv, dim):
            x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
            logical_dim = x.dim() if x_bdim is None else x_bdim - 1
            dim = dim if dim >= 0 else dim + logical_dim

            def maybe_expand_bdim_at_front(x, x_bdim):
                if x_bdim is None:
                    return x.expand(info.batch_size, *x.shape)
                return x.movedim(x_bdim, 0)

            x = maybe_expand_bdim_at_front(x, x_bdim)
            ind = maybe_expand_bdim_at_front(ind, ind_bdim)
            ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)
            return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0

    def numpy_sort(x, dim=-1):
        result, _, _ = NumpySort.apply(x, dim)
        return result

    class MyCube(m.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            result = x**3
            dx = 3 * x**2
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            _result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    def my_cube(x):
        result, _ = MyCube.apply(x)
        return result

    return numpy_sort, my_cube


@_case()
def ext_numpy_sort_grad(m):
    numpy_sort, _ = _ext_fns(m)
    x = t(m, 2, 3)
    grad_x = m.func.grad(lambda x: numpy_sort(x).sum())(x)
    w = t(m, 2, 3, k=1)
    return grad_x, m.func.grad(lambda x: (numpy_sort(x) * w).sum())(x)


@_case()
def ext_numpy_sort_vmap(m):
    numpy_sort, _ = _ext_fns(m)
    x = t(m, 2, 3)
    result = m.vmap(numpy_sort)(x)
    return result, numpy_sort(result, 1), m.vmap(numpy_sort, in_dims=1)(x)


@_case()
def ext_numpy_sort_jacrev_and_vmap_grad(m):
    numpy_sort, _ = _ext_fns(m)
    x = t(m, 4)
    w = t(m, 3, 4, k=1)
    return (
        m.func.jacrev(numpy_sort)(x),
        m.vmap(m.func.grad(lambda x, w: (numpy_sort(x) * w).sum()), in_dims=(None, 0))(x, w),
        m.func.jacrev(m.func.grad(lambda x: (numpy_sort(x) ** 3).sum()))(x),
    )


@_case()
def ext_my_cube(m):
    _, my_cube = _ext_fns(m)
    x = t(m)
    ggx = m.func.grad(m.func.grad(my_cube))(x)
    xs = t(m, 3, k=1)
    return (
        ggx,
        6 * x,
        m.vmap(my_cube)(xs),
        xs**3,
        m.func.jacrev(my_cube)(xs),
        m.func.jacrev(m.func.jacrev(lambda x: my_cube(x).sum()))(xs),
        m.vmap(m.func.grad(m.func.grad(my_cube)))(xs),
    )


@_case()
def ext_my_cube_without_jvp_under_hessian_raises(m):
    _, my_cube = _ext_fns(m)
    return m.func.hessian(lambda x: my_cube(x).sum())(t(m, 3))


# ============================================================================================
# functorch/examples/lennard_jones
# ============================================================================================
SIGMA, EPSILON = 0.5, 4.0


def _lj(r):
    return EPSILON * ((SIGMA / r) ** 12 - (SIGMA / r) ** 6)


def _lj_force(r):
    return -EPSILON * ((-12 * SIGMA**12 / r**13) + (6 * SIGMA**6 / r**7))


@_case(**F32)
def script_lennard_jones(m):
    mse_loss = m.nn.functional.mse_loss
    r = m.linspace(0.5, 2 * SIGMA, steps=6, requires_grad=True)
    drs = m.outer(r, m.tensor([1.0, 0, 0]))
    norms = m.norm(drs, dim=1).reshape(-1, 1)
    training_energies = m.stack(list(map(_lj, norms))).reshape(-1, 1)
    training_forces = m.stack([force * dr for force, dr in zip(map(_lj_force, norms), drs)])

    model = _model(
        m,
        lambda m: m.nn.Sequential(
            m.nn.Linear(1, 8), m.nn.Tanh(), m.nn.Linear(8, 8), m.nn.Tanh(), m.nn.Linear(8, 1)
        ),
        dtype="float32",
    )

    def make_prediction(model, drs):
        norms = m.norm(drs, dim=1).reshape(-1, 1)
        energies = model(norms)
        network_derivs = m.func.vmap(m.func.jacrev(model))(norms).squeeze(-1)
        forces = -network_derivs * drs / norms
        return energies, forces

    def loss_fn(energies, forces, predicted_energies, predicted_forces):
        return (
            mse_loss(energies, predicted_energies) + 0.01 * mse_loss(forces, predicted_forces) / 3
        )

    optimiser = m.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        optimiser.zero_grad()
        energies, forces = make_prediction(model, drs)
        loss = loss_fn(training_energies, training_forces, energies, forces)
        loss.backward(retain_graph=True)
        optimiser.step()
        losses.append(loss.cpu().item())
    return losses, dict(model.state_dict()), r.grad


@_case(**TRAIN)
def script_lennard_jones_forces_double_backward(m):
    # the forces come from vmap(jacrev(model)): their loss must differentiate w.r.t. params
    model = _model(m, _mlp([1, 5, 5, 1], "Tanh"))
    norms = m.linspace(0.6, 1.0, 4, dtype=m.float64).reshape(-1, 1)
    derivs = m.func.vmap(m.func.jacrev(model))(norms).squeeze(-1)
    loss = (derivs**2).sum() + model(norms).sum()
    grads = m.autograd.grad(loss, list(model.parameters()))
    return derivs, grads


# ============================================================================================
# functorch/examples/maml_regression
# ============================================================================================
def _maml_tasks(m, seed, outer_batch_size, inner_batch_size):
    rng = np.random.default_rng(seed)
    As = rng.uniform(0.1, 0.5, outer_batch_size)
    phases = rng.uniform(0.0, np.pi, outer_batch_size)

    def get_batch():
        xs, ys = [], []
        for A, phase in zip(As, phases):
            x = rng.uniform(-5.0, 5.0, size=(inner_batch_size, 1))
            xs.append(x)
            ys.append(A * np.sin(x + phase))
        return m.tensor(np.array(xs), dtype=m.float), m.tensor(np.array(ys), dtype=m.float)

    x1, y1 = get_batch()
    x2, y2 = get_batch()
    return x1, y1, x2, y2


def _maml_params(m, hidden=8):
    F = m.nn.functional
    params = [
        (t(m, hidden, 1, k=0, dtype=m.float) * 0.5).requires_grad_(),
        m.Tensor(hidden).zero_().requires_grad_(),
        (t(m, hidden, hidden, k=1, dtype=m.float) / math.sqrt(hidden)).requires_grad_(),
        m.Tensor(hidden).zero_().requires_grad_(),
        (t(m, 1, hidden, k=2, dtype=m.float) / math.sqrt(hidden)).requires_grad_(),
        m.Tensor(1).zero_().requires_grad_(),
    ]

    def net(params, x):
        x = F.relu(F.linear(x, params[0], params[1]))
        x = F.relu(F.linear(x, params[2], params[3]))
        return F.linear(x, params[4], params[5])

    return params, net


def _mse(m):
    return lambda x, y: m.mean((x - y) ** 2)


@_case(**F32)
def script_maml_regression_transforms(m):
    params, net = _maml_params(m)
    mse_loss = _mse(m)
    opt = m.optim.Adam(params, lr=1e-3)
    alpha = 0.1
    losses = []
    for it in range(2):
        opt.zero_grad()

        def get_loss_for_task(x1, y1, x2, y2):
            def inner_loss(params, x1, y1):
                return mse_loss(net(params, x1), y1)

            grads = m.func.grad(inner_loss)(tuple(params), x1, y1)
            new_params = [(params[i] - alpha * grads[i]) for i in range(len(params))]
            return mse_loss(net(new_params, x2), y2)

        task = _maml_tasks(m, it, 3, 5)
        inner_losses = m.func.vmap(get_loss_for_task)(task[0], task[1], task[2], task[3])
        loss2 = sum(inner_losses) / len(inner_losses)
        loss2.backward()
        opt.step()
        losses.append(loss2.detach())
    return losses, params


@_case(**F32)
def script_maml_regression_test_time_finetune(m):
    # the end of evjang_transforms.py: fine-tune with autograd.grad(create_graph=True), l1 loss
    params, net = _maml_params(m)
    F = m.nn.functional
    alpha = 0.1
    t_A, t_b = 0.3, 1.0
    t_x = m.linspace(-5, 5, 4).unsqueeze(1)
    t_y = t_A * m.sin(t_x + t_b)
    t_params = params
    for _ in range(3):
        t_loss = F.l1_loss(net(t_params, t_x), t_y)
        grads = m.autograd.grad(t_loss, t_params, create_graph=True)
        t_params = [(t_params[i] - alpha * grads[i]) for i in range(len(params))]
    test_x = m.arange(-2 * math.pi, 2 * math.pi, step=0.5).unsqueeze(1)
    test_f = net(t_params, test_x)
    test_f.sum().backward()
    return test_f.data.numpy(), [p.grad for p in params], [p.requires_grad for p in t_params]


@_case(**F32)
def script_maml_regression_plain_autograd(m):
    # evjang.py: the same meta-loss with a Python loop over tasks and autograd.grad
    params, net = _maml_params(m)
    mse_loss = _mse(m)
    opt = m.optim.Adam(params, lr=1e-3)
    alpha = 0.1
    losses = []
    for it in range(2):
        opt.zero_grad()
        x1, y1, x2, y2 = _maml_tasks(m, it, 3, 5)
        loss2 = 0.0
        for i in range(3):
            f = net(params, x1[i])
            loss = mse_loss(f, y1[i])
            grads = m.autograd.grad(loss, params, create_graph=True)
            new_params = [(params[j] - alpha * grads[j]) for j in range(len(params))]
            loss2 = loss2 + mse_loss(net(new_params, x2[i]), y2[i])
        loss2 = loss2 / 3
        loss2.backward()
        opt.step()
        losses.append(loss2.item())
    return losses, params


def _three_layer_net(m):
    class ThreeLayerNet(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = m.nn.Linear(1, 8)
            self.relu1 = m.nn.ReLU()
            self.fc2 = m.nn.Linear(8, 8)
            self.relu2 = m.nn.ReLU()
            self.fc3 = m.nn.Linear(8, 1)

        def forward(self, x):
            x = self.relu1(self.fc1(x))
            x = self.relu2(self.fc2(x))
            return self.fc3(x)

    return ThreeLayerNet()


@_case(**F32)
def script_maml_regression_transforms_module(m):
    # evjang_transforms_module.py with make_functional replaced by functional_call
    net = _model(m, _three_layer_net, dtype="float32")
    names = [k for k, _ in net.named_parameters()]
    params = [p for _, p in net.named_parameters()]

    def fnet(params, x):
        return m.func.functional_call(net, dict(zip(names, params)), (x,))

    mse_loss = _mse(m)
    opt = m.optim.Adam(params, lr=1e-3)
    alpha = 0.1
    losses = []
    for it in range(2):
        opt.zero_grad()

        def get_loss_for_task(x1, y1, x2, y2):
            def inner_loss(params, x1, y1):
                return mse_loss(fnet(params, x1), y1)

            grads = m.func.grad(inner_loss)(params, x1, y1)
            new_params = [(params[i] - alpha * grads[i]) for i in range(len(params))]
            return mse_loss(fnet(new_params, x2), y2)

        task = _maml_tasks(m, 10 + it, 3, 5)
        inner_losses = m.func.vmap(get_loss_for_task)(*task)
        loss2 = sum(inner_losses) / len(inner_losses)
        loss2.backward()
        opt.step()
        losses.append(loss2.detach())
    return losses, dict(net.state_dict())


# ============================================================================================
# functorch/examples/ensembling/parallel_train.py
# ============================================================================================
def _spirals(m, n_samples, noise_std=0.05, rotations=1.0):
    ts = m.linspace(0, 1, n_samples, dtype=m.float64)
    rs = ts**0.5
    thetas = rs * rotations * 2 * math.pi
    signs = m.tensor(np.random.default_rng(5).integers(0, 2, n_samples)) * 2 - 1
    labels = (signs > 0).to(m.long)
    xs = rs * signs * m.cos(thetas) + t(m, n_samples, k=1) * noise_std
    ys = rs * signs * m.sin(thetas) + t(m, n_samples, k=2) * noise_std
    return m.stack([xs, ys], dim=1), labels


@functools.cache
def _mlp_classifier_cls(m):
    class MLPClassifier(m.nn.Module):
        def __init__(self, hidden_dim=8, n_classes=2):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.n_classes = n_classes
            self.fc1 = m.nn.Linear(2, self.hidden_dim)
            self.fc2 = m.nn.Linear(self.hidden_dim, self.n_classes)

        def forward(self, x):
            x = self.fc1(x)
            x = m.nn.functional.relu(x)
            x = self.fc2(x)
            return m.nn.functional.log_softmax(x, -1)

    return MLPClassifier


def _mlp_classifier(m):
    return _mlp_classifier_cls(m)()


def _train_step_fn(m, model):
    loss_fn = m.nn.NLLLoss()

    def train_step_fn(weights, batch, targets, lr=0.2):
        def compute_loss(weights, batch, targets):
            output = m.func.functional_call(model, weights, batch)
            return loss_fn(output, targets)

        grad_weights, loss = m.func.grad_and_value(compute_loss)(weights, batch, targets)
        new_weights = {}
        with m.no_grad():
            for key in grad_weights:
                new_weights[key] = weights[key] - grad_weights[key] * lr
        return loss, new_weights

    return train_step_fn


@_case(**TRAIN)
def script_parallel_train_single_model(m):
    points, labels = _spirals(m, 12)
    model = _model(m, _mlp_classifier)
    train_step_fn = _train_step_fn(m, model)
    weights = dict(model.named_parameters())
    losses = []
    for _ in range(3):
        loss, weights = train_step_fn(weights, points, labels)
        losses.append(loss)
    return losses, weights, [w.requires_grad for w in weights.values()]


@_case(**TRAIN)
def script_parallel_train_vmapped_models(m):
    points, labels = _spirals(m, 12)
    models = [_model(m, _mlp_classifier, seed=i) for i in range(2)]
    train_step_fn = _train_step_fn(m, models[0])
    batched_weights, _ = m.func.stack_module_state(models)
    parallel_train_step_fn = m.func.vmap(train_step_fn, in_dims=(0, None, None))
    losses = []
    for _ in range(3):
        loss, batched_weights = parallel_train_step_fn(batched_weights, points, labels)
        losses.append(loss)
    return losses, batched_weights


# ============================================================================================
# functorch/examples/dp_cifar10/cifar10_transforms.py (CNN -> MLP)
# ============================================================================================
@_case(**TRAIN)
def script_dp_per_sample_clip_and_noise(m):
    model = _model(m, _mlp([6, 8, 3]))
    criterion = m.nn.CrossEntropyLoss()
    optimizer = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = t(m, 5, 6, k=1)
    target = m.tensor([0, 2, 1, 1, 0])
    outputs = []
    for step in range(2):

        def compute_loss_and_output(weights, image, target):
            images = image.unsqueeze(0)
            targets = target.unsqueeze(0)
            output = m.func.functional_call(model, weights, images)
            loss = criterion(output, targets)
            return loss, output.squeeze(0)

        grads_loss_output = m.func.grad_and_value(compute_loss_and_output, has_aux=True)
        weights = {k: v.detach() for k, v in model.named_parameters()}
        sample_grads, (sample_loss, output) = m.func.vmap(grads_loss_output, (None, 0, 0))(
            weights, images, target
        )
        loss = sample_loss.mean()
        for name, param in model.named_parameters():
            param.grad_sample = sample_grads[name].detach()

        # clip_and_accumulate_and_add_noise
        max_norm, noise_multiplier = 0.5, 0.1
        sample_grads_t = tuple(param.grad_sample for param in model.parameters())
        batch_size = sample_grads_t[0].shape[0]
        norms = [g.view(batch_size, -1).norm(2, dim=-1) for g in sample_grads_t]
        sample_norms = m.stack(norms, dim=0).norm(2, dim=0)
        clip_factor = (max_norm / (sample_norms + 1e-6)).clamp(max=1.0)
        grads = tuple(m.einsum("i,i...", clip_factor, g) for g in sample_grads_t)
        stddev = max_norm * noise_multiplier
        noises = tuple(t(m, *g.shape, k=10 + i, seed=step) * stddev for i, g in enumerate(grads))
        grads = tuple(noise + g for noise, g in zip(noises, grads))
        for param, g in zip(model.parameters(), grads):
            param.grad = g / batch_size
            del param.grad_sample
        optimizer.step()
        optimizer.zero_grad()
        preds = np.argmax(output.detach().cpu().numpy(), axis=1)
        outputs.append((loss, sample_norms, preds, [hasattr(p, "grad_sample") for p in weights]))
    return outputs, dict(model.state_dict())


# ============================================================================================
# functorch/examples/maml_omniglot/maml-omniglot-transforms.py (CNN -> MLP)
# ============================================================================================
@_case(**TRAIN)
def script_maml_omniglot_transforms(m):
    F = m.nn.functional
    n_way, k_spt, k_qry, dim, task_num, n_inner_iter = 3, 2, 2, 5, 2, 2
    net = _model(m, _mlp([dim, 8, n_way]))
    m.func.replace_all_batch_norm_modules_(net)
    meta_opt = m.optim.Adam(net.parameters(), lr=1e-3)

    def loss_for_task(net, n_inner_iter, x_spt, y_spt, x_qry, y_qry):
        params = dict(net.named_parameters())
        buffers = dict(net.named_buffers())
        querysz = x_qry.size(0)

        def compute_loss(new_params, buffers, x, y):
            logits = m.func.functional_call(net, (new_params, buffers), x)
            return F.cross_entropy(logits, y)

        new_params = params
        for _ in range(n_inner_iter):
            grads = m.func.grad(compute_loss)(new_params, buffers, x_spt, y_spt)
            new_params = {k: new_params[k] - g * 1e-1 for k, g in grads.items()}

        qry_logits = m.func.functional_call(net, (new_params, buffers), x_qry)
        qry_loss = F.cross_entropy(qry_logits, y_qry)
        qry_acc = (qry_logits.argmax(dim=1) == y_qry).sum() / querysz
        return qry_loss, qry_acc

    history = []
    for step in range(2):
        x_spt = t(m, task_num, n_way * k_spt, dim, k=1, seed=step)
        x_qry = t(m, task_num, n_way * k_qry, dim, k=2, seed=step)
        y = np.random.default_rng(step).integers(0, n_way, (2, task_num, n_way * k_spt))
        y_spt, y_qry = m.tensor(y[0]), m.tensor(y[1])
        meta_opt.zero_grad()
        compute_loss_for_task = functools.partial(loss_for_task, net, n_inner_iter)
        qry_losses, qry_accs = m.func.vmap(compute_loss_for_task)(x_spt, y_spt, x_qry, y_qry)
        qry_losses.sum().backward()
        meta_opt.step()
        history.append((qry_losses.detach(), qry_accs, 100.0 * qry_accs.sum().item() / task_num))
    return history, dict(net.state_dict())


# ============================================================================================
# the test
# ============================================================================================
@pytest.mark.parametrize(("case", "tol"), CASES.params())
def test_func_scripts_match_torch(case, tol):
    check(case, *tol)


def test_case_count():
    assert len(CASES) >= 100
