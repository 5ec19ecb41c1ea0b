"""``NestedIOFunction`` (legacy) and the ``DeprecationWarning`` of autograd Function instances.

Covers the reference page ``nested-io-function.txt``: its two code examples (the
``save_for_forward`` and ``set_materialize_grads`` examples, run as printed with
``import numbagrad as torch``), and the whole surface it documents for
``NestedIOFunction``: ``forward_extended``, ``backward_extended``, ``forward``,
``backward``, ``save_for_backward``, ``saved_tensors``, ``save_for_forward``,
``mark_dirty``, ``mark_non_differentiable``, ``set_materialize_grads``,
``setup_context``, ``jvp``, ``vjp`` and ``vmap``.

PyTorch 2.13's own ``NestedIOFunction`` cannot be called (its ``__call__`` reaches a
method removed from ``torch._C._FunctionBase``: ``AttributeError``), so the differential
checks against PyTorch compare what can be compared: the class surface, which hooks raise
``NotImplementedError``, the deprecation warning, the nesting errors, and the numbers of a
numbagrad ``NestedIOFunction`` against the same computation written as a PyTorch
``Function``. They import PyTorch with ``pytest.importorskip`` and skip without it.
"""

import inspect
import warnings
from collections import namedtuple

import numpy as np
import pytest

import numbagrad as torch
import numbagrad.autograd.forward_ad as fwAD
from numbagrad.autograd.function import (
    Function,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)

INSTANTIATED = "should not be instantiated"
SURFACE = (
    "forward_extended",
    "backward_extended",
    "forward",
    "backward",
    "save_for_backward",
    "saved_tensors",
    "save_for_forward",
    "mark_dirty",
    "mark_non_differentiable",
    "set_materialize_grads",
    "setup_context",
    "jvp",
    "vjp",
    "vmap",
)
# hooks a NestedIOFunction does not implement: (name, arguments after the instance)
UNIMPLEMENTED = (
    ("setup_context", ("ctx", (), None)),
    ("jvp", ("ctx", None)),
    ("vjp", ("ctx", None)),
    ("vmap", (None, (0,), None)),
)


def make(cls, *args, **kwargs):
    """An instance of ``cls``: instantiating any autograd Function warns, as in PyTorch."""
    with pytest.warns(DeprecationWarning, match=INSTANTIATED):
        return cls(*args, **kwargs)


def f64(values, requires_grad=False):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def to_np(t):
    return np.array(t.detach().numpy())


# ---------------------------------------------------------------------------
# The two examples of the reference page, as printed. The page renders them with
# ``>>>`` prompts, and its save_for_forward example lost its blank line: the lines after
# ``vjp`` are indented into the class body there (where ``Func`` is not defined yet and
# ``fwAD`` is never imported), so they are dedented here and ``fwAD`` is imported.
# Each example is a function of the library module, so the differential test runs the
# same code with PyTorch.
# ---------------------------------------------------------------------------


def page_example_save_for_forward(torch, fwAD):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x: torch.Tensor, y: torch.Tensor, z: int):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            return x * y * z

        @staticmethod
        def jvp(ctx, x_t, y_t, _):
            x, y = ctx.saved_tensors
            z = ctx.z
            return z * (y * x_t + x * y_t)

        @staticmethod
        def vjp(ctx, grad_out):
            x, y = ctx.saved_tensors
            z = ctx.z
            return z * grad_out * y, z * grad_out * x, None

    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double)
    t = torch.tensor(1.0, dtype=torch.double)
    b = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    c = 4

    with fwAD.dual_level():
        a_dual = fwAD.make_dual(a, t)
        d = Func.apply(a_dual, b, c)
        # (checks, not on the page)
        primal, tangent = fwAD.unpack_dual(d)
    d.backward()
    return [float(v.detach()) for v in (primal, tangent, a.grad, b.grad)]


def page_example_set_materialize_grads(torch):
    Function = torch.autograd.Function
    once_differentiable = torch.autograd.function.once_differentiable

    class SimpleFunc(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):
            return g1 + g2  # No check for None necessary

    # We modify SimpleFunc to handle non-materialized grad outputs
    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            if g1 is not None:  # We must check for None now
                grad_input += g1
            if g2 is not None:
                grad_input += g2
            return grad_input

    a = torch.tensor(1.0, requires_grad=True)
    b, _ = Func.apply(a)  # induces g2 to be undefined
    # (checks, not on the page)
    b.backward()
    simple_a = torch.tensor(1.0, requires_grad=True)
    simple_b, _ = SimpleFunc.apply(simple_a)  # g2 materialized as zeros
    simple_b.backward()
    both_a = torch.tensor(1.0, requires_grad=True)
    b1, b2 = Func.apply(both_a)
    (b1 + 2 * b2).backward()
    return [float(v.detach()) for v in (b, a.grad, simple_b, simple_a.grad, both_a.grad)]


def test_page_example_save_for_forward():
    primal, tangent, ga, gb = page_example_save_for_forward(torch, fwAD)
    # d = x * y * z with x = 1 (tangent 1), y = 2, z = 4
    assert primal == 8.0
    assert tangent == 8.0  # z * (y * x_t + x * y_t) = 4 * (2 * 1 + 1 * 0)
    assert (ga, gb) == (8.0, 4.0)  # vjp: z * y, z * x


def test_page_example_set_materialize_grads():
    assert page_example_set_materialize_grads(torch) == [1.0, 1.0, 1.0, 1.0, 3.0]


def test_page_examples_match_torch():
    pt = pytest.importorskip("torch")
    import torch.autograd.forward_ad as pt_fwad

    assert page_example_save_for_forward(torch, fwAD) == page_example_save_for_forward(pt, pt_fwad)
    assert page_example_set_materialize_grads(torch) == page_example_set_materialize_grads(pt)


# ---------------------------------------------------------------------------
# NestedIOFunction: class and surface
# ---------------------------------------------------------------------------


class SumAndProduct(NestedIOFunction):
    """``(x, (y, z)) -> (x + y, [x * z])`` with a nested saved structure."""

    def forward_extended(self, x, pair):
        y, z = pair
        self.save_for_backward(x, (y, z))
        return x + y, [x * z]

    def backward_extended(self, g_sum, g_list):
        x, (_y, z) = self.saved_tensors
        (g_prod,) = g_list
        return g_sum + g_prod * z, (g_sum, g_prod * x)


class Cube(NestedIOFunction):
    """``x ** 3`` with a differentiable backward (double backward works)."""

    def forward_extended(self, x):
        self.save_for_backward(x)
        return x**3

    def backward_extended(self, g):
        (x,) = self.saved_tensors
        return 3 * x**2 * g


def test_is_a_function_subclass():
    assert issubclass(NestedIOFunction, Function)
    fn = make(SumAndProduct)
    assert isinstance(fn, Function)
    assert isinstance(fn, torch.autograd.Function)
    assert isinstance(fn, torch.autograd.function.FunctionCtx)
    assert torch.autograd.NestedIOFunction is NestedIOFunction


@pytest.mark.parametrize("name", SURFACE)
def test_documented_surface_exists(name):
    assert hasattr(NestedIOFunction, name)
    assert name in dir(make(SumAndProduct))


def test_instance_methods_are_not_static():
    # forward/backward and the *_extended hooks take self, unlike Function's staticmethods
    for name in ("forward", "backward", "forward_extended", "backward_extended"):
        assert not isinstance(inspect.getattr_static(NestedIOFunction, name), staticmethod)


def test_nested_call_structure_and_grads(rng):
    xv, yv, zv = (rng.normal(size=3) for _ in range(3))
    x, y, z = (f64(v, requires_grad=True) for v in (xv, yv, zv))
    fn = make(SumAndProduct)
    total, [prod] = fn(x, (y, z))
    np.testing.assert_allclose(to_np(total), xv + yv)
    np.testing.assert_allclose(to_np(prod), xv * zv)
    assert total.grad_fn is fn and prod.grad_fn is fn
    assert fn.name() == "SumAndProduct"
    assert fn.needs_input_grad == (True, True, True)
    gs, gp = rng.normal(size=3), rng.normal(size=3)
    torch.autograd.backward([total, prod], [f64(gs), f64(gp)])
    np.testing.assert_allclose(to_np(x.grad), gs + gp * zv)
    np.testing.assert_allclose(to_np(y.grad), gs)
    np.testing.assert_allclose(to_np(z.grad), gp * xv)


def test_docs_example_runs():
    # the example of the docs guide (custom_function.rst) and of the class docstring
    x, y, z = (f64([v], requires_grad=True) for v in (1.0, 2.0, 3.0))
    total, [prod] = make(SumAndProduct)(x, (y, z))
    (total + prod).sum().backward()
    assert (to_np(x.grad), to_np(y.grad), to_np(z.grad)) == ([4.0], [1.0], [1.0])


def test_forward_and_backward_shared_utilities():
    fn = make(SumAndProduct)
    x, y, z = f64([1.0]), f64([2.0]), f64([3.0])
    # called directly, forward passes its arguments to forward_extended and flattens
    flat = fn.forward(x, (y, z))
    assert isinstance(flat, tuple) and len(flat) == 2
    assert [to_np(t).tolist() for t in flat] == [[3.0], [3.0]]
    # backward gives the gradients the outputs' nesting, flattens the result
    grads = fn.backward(f64([1.0]), f64([10.0]))
    assert isinstance(grads, tuple) and len(grads) == 3
    assert [to_np(g).tolist() for g in grads] == [[31.0], [1.0], [10.0]]


def test_forward_extended_and_backward_extended_receive_nesting():
    seen = {}
    Pair = namedtuple("Pair", "a b")

    class Nest(NestedIOFunction):
        def forward_extended(self, d, k, pair):
            seen["inputs"] = (type(d), k, type(pair))
            return {"s": d["x"] * k, "none": None}, Pair(pair.a * 2, pair.b * 3), "tag"

        def backward_extended(self, g_dict, g_pair, g_tag):
            seen["grads"] = (type(g_dict), g_dict["none"], type(g_pair), g_tag)
            return {"x": g_dict["s"] * 5}, None, Pair(g_pair.a * 2, g_pair.b * 3)

    x, a, b = (f64([1.0, 2.0], requires_grad=True) for _ in range(3))
    out, pair, tag = make(Nest)({"x": x}, 5.0, Pair(a, b))
    assert seen["inputs"] == (dict, 5.0, Pair)
    assert tag == "tag" and out["none"] is None and type(pair) is Pair
    (out["s"].sum() + pair.a.sum() + pair.b.sum()).backward()
    # non-tensor outputs get None as their gradient
    assert seen["grads"] == (dict, None, Pair, None)
    assert to_np(x.grad).tolist() == [5.0, 5.0]
    assert to_np(a.grad).tolist() == [2.0, 2.0]
    assert to_np(b.grad).tolist() == [3.0, 3.0]


def test_single_output_gets_one_gradient_not_its_rows():
    x = f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    Cube_ = make(Cube)
    Cube_(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 3 * to_np(x) ** 2)


def test_none_for_a_whole_nested_input():
    class FirstOnly(NestedIOFunction):
        def forward_extended(self, x, rest):
            return x * 2 + rest[0] * 0

        def backward_extended(self, g):
            return g * 2, None  # None stands for both tensors of ``rest``

    x, y, z = (f64([1.0], requires_grad=True) for _ in range(3))
    make(FirstOnly)(x, (y, z)).sum().backward()
    assert to_np(x.grad).tolist() == [2.0]
    assert y.grad is None and z.grad is None


def test_save_for_backward_nested_and_saved_tensors():
    class Saver(NestedIOFunction):
        def forward_extended(self, x, y):
            self.save_for_backward([x, (y,)], None, {"k": x})
            self.inside = self.saved_tensors
            return x * y

        def backward_extended(self, g):
            [x, (y,)], nothing, d = self.saved_tensors
            assert nothing is None and d["k"] is not None
            return g * y, g * x

    x, y = f64([2.0], requires_grad=True), f64([3.0], requires_grad=True)
    fn = make(Saver)
    fn(x, y).sum().backward()
    assert (to_np(x.grad), to_np(y.grad)) == ([3.0], [2.0])
    # during forward, saved_tensors gives back what was saved, with its nesting
    [sx, (sy,)], nothing, d = fn.inside
    assert sx is x and sy is y and nothing is None and d["k"] is x


def test_saved_tensors_checks_versions_and_freeing():
    x = f64([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = make(Cube)(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y = make(Cube)(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_save_for_backward_rejects_non_tensors():
    fn = make(SumAndProduct)
    with pytest.raises(ValueError, match="Auto nesting"):
        fn.save_for_backward(f64([1.0]), (3,))


def test_save_for_forward_is_accepted():
    class F(NestedIOFunction):
        def forward_extended(self, x):
            self.save_for_forward(x, None)
            return x * 2

        def backward_extended(self, g):
            return g * 2

    x = f64([1.0], requires_grad=True)
    make(F)(x).sum().backward()
    assert to_np(x.grad).tolist() == [2.0]
    with pytest.raises(TypeError, match="save_for_forward"):
        make(F).save_for_forward((x,))


def test_mark_dirty_nested():
    class DoubleBoth_(NestedIOFunction):
        def forward_extended(self, pair):
            a, b = pair
            a.mul_(2)
            b.mul_(2)
            self.mark_dirty((a, [b]))
            return a, b

        def backward_extended(self, ga, gb):
            return (ga * 2, gb * 2)

    la, lb = f64([1.0, 2.0], requires_grad=True), f64([3.0], requires_grad=True)
    a, b = la * 1, lb * 1
    oa, ob = make(DoubleBoth_)((a, b))
    assert oa is a and ob is b
    assert to_np(a).tolist() == [2.0, 4.0]
    (oa.sum() + ob.sum()).backward()
    assert to_np(la.grad).tolist() == [2.0, 2.0] and to_np(lb.grad).tolist() == [2.0]


def test_mark_dirty_of_a_leaf_requiring_grad_raises():
    class Bad_(NestedIOFunction):
        def forward_extended(self, x):
            x.mul_(2)
            self.mark_dirty(x)
            return x

    with pytest.raises(RuntimeError, match="leaf Variable"):
        make(Bad_)(f64([1.0], requires_grad=True))


def test_mark_non_differentiable_nested_and_set_materialize_grads():
    seen = {}

    class Split(NestedIOFunction):
        def forward_extended(self, x):
            self.set_materialize_grads(False)
            idx = x * 0
            self.mark_non_differentiable([idx], extra=None)
            return x * 2, (x * 3, idx)

        def backward_extended(self, g_double, g_pair):
            seen["grads"] = (g_double, g_pair)
            return g_double * 2

    x = f64([1.0, 2.0], requires_grad=True)
    double, (triple, idx) = make(Split)(x)
    assert double.requires_grad and triple.requires_grad and not idx.requires_grad
    double.sum().backward()
    g_double, g_pair = seen["grads"]
    assert to_np(g_double).tolist() == [1.0, 1.0]
    assert g_pair == (None, None)  # not materialized
    assert to_np(x.grad).tolist() == [2.0, 2.0]


def test_materialized_grads_by_default():
    seen = {}

    class Two(NestedIOFunction):
        def forward_extended(self, x):
            return x * 2, x * 3

        def backward_extended(self, g2, g3):
            seen["g3"] = g3
            return g2 * 2 + g3 * 3

    x = f64([1.0], requires_grad=True)
    a, _ = make(Two)(x)
    a.sum().backward()
    assert to_np(seen["g3"]).tolist() == [0.0]


def test_non_tensor_inputs_and_needs_input_grad():
    class Scale(NestedIOFunction):
        def forward_extended(self, x, k, y):
            self.k = k
            self.needs = self.needs_input_grad
            return x * k + y

        def backward_extended(self, g):
            return g * self.k, None, None

    x, y = f64([1.0], requires_grad=True), f64([1.0])
    fn = make(Scale)
    fn(x, 3.0, y).sum().backward()
    assert fn.needs == (True, False)  # one flag per input *tensor*
    assert to_np(x.grad).tolist() == [3.0]


def test_user_init_without_super_and_parameters():
    class Scaled(NestedIOFunction):
        def __init__(self, scale):  # legacy code often skips super().__init__()
            self.scale = scale

        def forward_extended(self, x):
            return x * self.scale

        def backward_extended(self, g):
            return g * self.scale

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn = Scaled(4.0)  # no Function.__init__, no warning (as PyTorch)
    x = f64([1.0], requires_grad=True)
    fn(x).sum().backward()
    assert to_np(x.grad).tolist() == [4.0]


def test_instances_are_one_shot():
    fn = make(Cube)
    fn(f64([1.0]))
    with pytest.raises(RuntimeError, match="only once"):
        fn(f64([1.0]))


def test_apply_on_the_class_raises():
    with pytest.raises(RuntimeError, match=r"calling an instance, Cube\(\)\(\*inputs\)"):
        Cube.apply(f64([1.0], requires_grad=True))


def test_grad_fn_hooks_and_next_functions():
    x = f64([1.0, 2.0], requires_grad=True)
    y = make(Cube)(x)
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
    assert y.grad_fn.next_functions[0][0] is not None
    y.sum().backward()
    assert len(seen) == 1
    assert to_np(seen[0][0][0]).tolist() == [3.0, 12.0]


# ---------------------------------------------------------------------------
# higher order, gradcheck, once_differentiable
# ---------------------------------------------------------------------------


def test_double_backward(rng):
    xv = rng.normal(size=4)
    x = f64(xv, requires_grad=True)
    y = make(Cube)(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(to_np(g), 3 * xv**2)
    assert g.requires_grad
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_np(gg), 6 * xv)


def test_double_backward_nested_outputs(rng):
    xv, yv, zv = (rng.normal(size=3) for _ in range(3))
    x, y, z = (f64(v, requires_grad=True) for v in (xv, yv, zv))
    total, [prod] = make(SumAndProduct)(x, (y, z))
    (gx,) = torch.autograd.grad((total + prod * prod).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_np(gx), 1 + 2 * xv * zv**2)
    (gz,) = torch.autograd.grad(gx.sum(), z)
    np.testing.assert_allclose(to_np(gz), 4 * xv * zv)


def test_gradcheck_and_gradgradcheck(rng):
    def fn(x, y, z):
        with pytest.warns(DeprecationWarning, match=INSTANTIATED):
            total, [prod] = SumAndProduct()(x, (y, z))
        return total, prod

    args = tuple(f64(rng.normal(size=3), requires_grad=True) for _ in range(3))
    assert torch.autograd.gradcheck(fn, args)
    assert torch.autograd.gradgradcheck(fn, args)


def test_once_differentiable_backward_extended_refuses_double_backward():
    class Once(NestedIOFunction):
        def forward_extended(self, x):
            self.save_for_backward(x)
            return x**2

        @once_differentiable
        def backward_extended(self, g):
            (x,) = self.saved_tensors
            return [2 * x * g]  # nested results are guarded too

    x = f64([1.0, 2.0], requires_grad=True)
    v = f64([1.0, 1.0], requires_grad=True)  # (an incoming gradient that requires grad)
    (g,) = torch.autograd.grad(make(Once)(x), x, v, create_graph=True)
    assert to_np(g).tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()
    # with a plain incoming gradient the result is plain, as PyTorch's
    (g,) = torch.autograd.grad(make(Once)(x).sum(), x, create_graph=True)
    assert not g.requires_grad


# ---------------------------------------------------------------------------
# errors: unimplemented hooks, wrong results
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "args"), UNIMPLEMENTED)
def test_unimplemented_hooks_raise_naming_the_class(name, args):
    fn = make(SumAndProduct)
    with pytest.raises(NotImplementedError, match="SumAndProduct") as on_instance:
        getattr(fn, name)(*args)
    with pytest.raises(NotImplementedError, match="SumAndProduct") as on_class:
        getattr(SumAndProduct, name)(*args)
    assert str(on_instance.value) == str(on_class.value)


def test_unimplemented_hook_messages_say_what_to_define():
    fn = make(SumAndProduct)
    with pytest.raises(NotImplementedError, match="backward_extended"):
        fn.vjp("ctx", None)
    with pytest.raises(NotImplementedError, match="forward_extended"):
        fn.setup_context("ctx", (), None)
    with pytest.raises(NotImplementedError, match="jvp staticmethod"):
        fn.jvp("ctx", None)
    with pytest.raises(NotImplementedError, match="vmap staticmethod"):
        fn.vmap(None, (0,), None)


def test_vjp_is_not_the_shared_backward():
    # as in PyTorch, vjp stays the base Function's unimplemented hook
    assert NestedIOFunction.vjp is not NestedIOFunction.backward
    with pytest.raises(NotImplementedError):
        make(SumAndProduct).vjp(None, f64([1.0]))


def test_missing_forward_extended():
    class NoForward(NestedIOFunction):
        pass

    with pytest.raises(NotImplementedError, match="NoForward must define forward_extended"):
        make(NoForward)(f64([1.0], requires_grad=True))


def test_missing_backward_extended():
    class NoBackward(NestedIOFunction):
        def forward_extended(self, x):
            return x * 2

    y = make(NoBackward)(f64([1.0], requires_grad=True))
    with pytest.raises(NotImplementedError, match="NoBackward must define backward_extended"):
        y.sum().backward()


def test_defining_vjp_clashes_with_the_shared_backward():
    class WithVjp(NestedIOFunction):
        def forward_extended(self, x):
            return x * 2

        def vjp(self, g):
            return g * 2

    y = make(WithVjp)(f64([1.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="both 'backward' and 'vjp'"):
        y.sum().backward()


def test_backward_extended_wrong_results():
    class Count(NestedIOFunction):
        def forward_extended(self, x, y):
            return x * y

        def backward_extended(self, g):
            return (g,)  # one gradient for two inputs

    class Kind(NestedIOFunction):
        def forward_extended(self, x):
            return x * 2

        def backward_extended(self, g):
            return 3

    x, y = f64([1.0], requires_grad=True), f64([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        make(Count)(x, y).sum().backward()
    with pytest.raises(TypeError, match="backward_extended must return"):
        make(Kind)(x).sum().backward()


# ---------------------------------------------------------------------------
# transforms: eager only, as PyTorch's Functions without jvp / setup_context
# ---------------------------------------------------------------------------


def test_forward_ad_dual_input_raises():
    with fwAD.dual_level():
        dual = fwAD.make_dual(f64([1.0, 2.0]), f64([1.0, 1.0]))
        with pytest.raises(
            NotImplementedError,
            match=r"Cube is a legacy NestedIOFunction.*"
            r"forward-mode AD",
        ):
            make(Cube)(dual)
    # after its level, a dual is its primal: the call runs eagerly
    assert to_np(make(Cube)(dual)).tolist() == [1.0, 8.0]


def test_forward_ad_level_with_plain_inputs_runs():
    x = f64([2.0], requires_grad=True)
    with fwAD.dual_level():
        y = make(Cube)(x)
    y.sum().backward()
    assert to_np(x.grad).tolist() == [12.0]


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "vmap", "jacrev", "jacfwd"])
def test_func_transforms_raise(transform):
    func = torch.func
    x = f64([1.0, 2.0])

    def f(a):
        with pytest.warns(DeprecationWarning, match=INSTANTIATED):
            fn = Cube()
        out = fn(a)
        return out.sum() if transform == "grad" else out

    run = {
        "grad": lambda: func.grad(f)(x),
        "vjp": lambda: func.vjp(f, x),
        "jvp": lambda: func.jvp(f, (x,), (f64([1.0, 1.0]),)),
        "vmap": lambda: func.vmap(f)(x),
        "jacrev": lambda: func.jacrev(f)(x),
        "jacfwd": lambda: func.jacfwd(f)(x),
    }[transform]
    with pytest.raises(
        RuntimeError,
        match="Cube is a legacy NestedIOFunction, which cannot be used under numbagrad",
    ):
        run()


def test_constant_inputs_under_a_transform_run_eagerly():
    def f(a):
        with pytest.warns(DeprecationWarning, match=INSTANTIATED):
            fn = Cube()
        return (a * fn(f64([1.0, 2.0]))).sum()

    assert to_np(torch.func.grad(f)(f64([3.0, 4.0]))).tolist() == [1.0, 8.0]


# ---------------------------------------------------------------------------
# the DeprecationWarning of Function instances
# ---------------------------------------------------------------------------


class Double(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class DoubleSeparate(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def jvp(ctx, t):
        return t * 2


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, DeprecationWarning)]


def test_instantiating_a_function_warns_at_the_users_line():
    line = inspect.currentframe().f_lineno + 1
    caught = _record(lambda: Double())
    assert len(caught) == 1
    w = caught[0]
    assert str(w.message) == (
        f"{Double} should not be instantiated. Methods on autograd functions are all static, "
        "so you should invoke them on the class itself. Instantiating an autograd function "
        "will raise an error in a future version of PyTorch."
    )
    assert w.filename == __file__ and w.lineno == line


def test_instantiating_a_nested_io_function_warns_at_the_users_line():
    line = inspect.currentframe().f_lineno + 1
    caught = _record(lambda: SumAndProduct())
    assert len(caught) == 1
    assert str(caught[0].message).startswith(f"{SumAndProduct} should not be instantiated.")
    assert caught[0].filename == __file__ and caught[0].lineno == line


def test_subclass_init_calling_super_warns_at_the_super_line():
    class WithInit(Function):
        def __init__(self, k):
            super().__init__()  # the warning points here (as in PyTorch)
            self.k = k

    line = inspect.getsourcelines(WithInit.__init__)[1] + 1
    caught = _record(lambda: WithInit(1))
    assert len(caught) == 1
    assert caught[0].filename == __file__ and caught[0].lineno == line


def test_inplace_function_warns_at_the_users_line():
    # PyTorch's stacklevel points inside torch here; numbagrad skips its own frames
    line = inspect.currentframe().f_lineno + 1
    caught = _record(lambda: InplaceFunction(True))
    assert len(caught) == 1
    assert caught[0].filename == __file__ and caught[0].lineno == line


def test_instance_call_still_refused():
    fn = make(Double)
    with pytest.raises(RuntimeError, match="apply"):
        fn(f64([1.0]))


def test_no_warning_in_normal_use(rng):
    # numbagrad never instantiates a Function itself: ctx objects are graph nodes
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        x = f64(rng.normal(size=3), requires_grad=True)
        y = Double.apply(x) + DoubleSeparate.apply(x)
        (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        assert to_np(g).tolist() == [4.0] * 3
        assert torch.autograd.gradcheck(Double.apply, (x,))
        v = f64(rng.normal(size=3))
        torch.func.grad(lambda a: DoubleSeparate.apply(a).sum())(v)
        torch.func.jvp(DoubleSeparate.apply, (v,), (v,))
        torch.func.vmap(DoubleSeparate.apply)(f64(rng.normal(size=(2, 3))))
        torch.func.jacrev(DoubleSeparate.apply)(v)
        with fwAD.dual_level():
            fwAD.unpack_dual(DoubleSeparate.apply(fwAD.make_dual(v, v)))


def test_ctx_is_not_a_function_instance():
    seen = {}

    class Peek(Function):
        @staticmethod
        def forward(ctx, x):
            seen["ctx"] = ctx
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    Peek.apply(f64([1.0], requires_grad=True))
    assert not isinstance(seen["ctx"], Function)
    assert isinstance(seen["ctx"], torch.autograd.function.FunctionCtx)


# ---------------------------------------------------------------------------
# differential checks against PyTorch
# ---------------------------------------------------------------------------


def _torch_function_module():
    pytest.importorskip("torch")
    import torch.autograd.function as pt_function

    return pt_function


@pytest.mark.parametrize("name", SURFACE)
def test_surface_matches_torch(name):
    pt_function = _torch_function_module()
    assert hasattr(pt_function.NestedIOFunction, name)
    assert hasattr(NestedIOFunction, name)
    # instance methods in both where PyTorch overrides Function's staticmethods
    pt_static = isinstance(inspect.getattr_static(pt_function.NestedIOFunction, name), staticmethod)
    if not pt_static:
        assert not isinstance(inspect.getattr_static(NestedIOFunction, name), staticmethod)


def test_class_relations_match_torch():
    pt_function = _torch_function_module()
    for mod in (pt_function, torch.autograd.function):
        assert issubclass(mod.NestedIOFunction, mod.Function)
        assert issubclass(mod.NestedIOFunction, mod.FunctionCtx)
        assert mod.NestedIOFunction.generate_vmap_rule is False


@pytest.mark.parametrize(
    ("name", "args"),
    (*UNIMPLEMENTED, ("forward_extended", (None,)), ("backward_extended", (None,))),
)
def test_unimplemented_hooks_match_torch(name, args):
    pt_function = _torch_function_module()
    for mod in (pt_function, torch.autograd.function):
        cls = type("Legacy", (mod.NestedIOFunction,), {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            fn = cls()
        with pytest.raises(NotImplementedError):
            getattr(fn, name)(*args)


def test_deprecation_warning_matches_torch():
    pt_function = _torch_function_module()
    import torch as pt

    results = []
    for lib, mod in ((pt, pt_function), (torch, torch.autograd.function)):
        plain = type("Plain", (lib.autograd.Function,), {})
        nested = type("Nested", (mod.NestedIOFunction,), {})

        def apply_plain(lib=lib):
            class Id(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 1

                @staticmethod
                def backward(ctx, g):
                    return g

            Id.apply(lib.ones(1, requires_grad=True)).sum().backward()

        line = inspect.currentframe().f_lineno + 1
        cases = [_record(lambda c=plain: c()), _record(lambda c=nested: c()), _record(apply_plain)]
        results.append(
            [
                [
                    (
                        str(w.message).replace(str(c), "<cls>"),
                        w.filename == __file__,
                        w.lineno == line,
                    )
                    for w in ws
                ]
                for ws, c in zip(cases, (plain, nested, None))
            ]
        )
    assert results[0] == results[1]
    assert [len(ws) for ws in results[1]] == [1, 1, 0]


def test_nesting_errors_match_torch():
    pt_function = _torch_function_module()
    import torch as pt

    for lib, mod in ((pt, pt_function), (torch, torch.autograd.function)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            fn = type("Legacy", (mod.NestedIOFunction,), {})()
        t = lib.ones(1)
        for method, args in (
            ("save_for_backward", (t, (1,))),
            ("mark_dirty", ([t, "a"],)),
            ("mark_non_differentiable", (2.0,)),
        ):
            with pytest.raises(ValueError, match="Auto nesting doesn't know how to process"):
                getattr(fn, method)(*args)
        # tensors, None and nesting are accepted
        fn.save_for_backward(t, (t, None), [t])
        fn.mark_dirty(t, k=[t])
        fn.mark_non_differentiable((t,))
        fn.set_materialize_grads(False)
        fn.save_for_forward(t, None)


def test_apply_on_the_class_raises_in_torch_too():
    pt_function = _torch_function_module()
    import torch as pt

    legacy = type("Legacy", (pt_function.NestedIOFunction,), {})
    with pytest.raises(AttributeError):  # PyTorch: '_nested_input' (numbagrad: RuntimeError)
        legacy.apply(pt.ones(1, requires_grad=True))
    with pytest.raises(RuntimeError):
        type("Legacy", (NestedIOFunction,), {}).apply(torch.ones(1, requires_grad=True))


def test_torch_nested_io_function_cannot_be_called():
    # why the numbers below are compared with a PyTorch Function: PyTorch's own
    # NestedIOFunction fails when called, eagerly and under its transforms alike
    pt_function = _torch_function_module()
    import torch as pt

    class PtCube(pt_function.NestedIOFunction):
        def forward_extended(self, x):
            return x**3

    def call(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return PtCube()(x)

    x = pt.ones(2, dtype=pt.float64)
    with pytest.raises(AttributeError):
        call(x)
    with pytest.raises(AttributeError):
        pt.func.grad(lambda a: call(a).sum())(x)
    import torch.autograd.forward_ad as pt_fwad

    with pt_fwad.dual_level(), pytest.raises(AttributeError):
        call(pt_fwad.make_dual(x, x))


def test_numbers_match_a_torch_function(rng):
    pytest.importorskip("torch")
    import torch as pt

    class PtSumAndProduct(pt.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y, z)
            return x + y, x * z

        @staticmethod
        def backward(ctx, g_sum, g_prod):
            x, _y, z = ctx.saved_tensors
            return g_sum + g_prod * z, g_sum, g_prod * x

    vals = [rng.normal(size=4) for _ in range(3)]
    gs, gp = rng.normal(size=4), rng.normal(size=4)

    ng_args = [f64(v, requires_grad=True) for v in vals]
    total, [prod] = make(SumAndProduct)(ng_args[0], (ng_args[1], ng_args[2]))
    ng_first = torch.autograd.grad(
        (total * f64(gs) + prod * prod * f64(gp)).sum(), ng_args, create_graph=True
    )
    ng_second = torch.autograd.grad(sum(g.sum() for g in ng_first), ng_args)

    pt_args = [pt.tensor(v, requires_grad=True) for v in vals]
    pt_total, pt_prod = PtSumAndProduct.apply(*pt_args)
    pt_first = pt.autograd.grad(
        (pt_total * pt.tensor(gs) + pt_prod * pt_prod * pt.tensor(gp)).sum(),
        pt_args,
        create_graph=True,
    )
    pt_second = pt.autograd.grad(sum(g.sum() for g in pt_first), pt_args)

    np.testing.assert_allclose(to_np(total), pt_total.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(to_np(prod), pt_prod.detach().numpy(), rtol=1e-14)
    for a, b in zip(ng_first + ng_second, pt_first + pt_second):
        np.testing.assert_allclose(to_np(a), b.detach().numpy(), rtol=1e-13, atol=1e-15)


def test_materialize_grads_match_a_torch_function():
    pytest.importorskip("torch")
    import torch as pt

    def run(lib, legacy):
        seen = []
        state = {}
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        if legacy:

            class Two(NestedIOFunction):
                def forward_extended(self, x):
                    self.set_materialize_grads(state["materialize"])
                    return x * 2, x * 3

                def backward_extended(self, g2, g3):
                    seen.append(g3 is None)
                    return g2 * 2 + (0 if g3 is None else g3 * 3)
        else:

            class Two(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.set_materialize_grads(state["materialize"])
                    return x * 2, x * 3

                @staticmethod
                def backward(ctx, g2, g3):
                    seen.append(g3 is None)
                    return g2 * 2 + (0 if g3 is None else g3 * 3)

        for materialize in (True, False):
            state["materialize"] = materialize
            fn = make(Two) if legacy else Two.apply
            a, _ = fn(x)
            a.sum().backward()
        return seen, x.grad.tolist()

    assert run(torch, True) == run(pt, False) == ([False, True], [4.0, 4.0])
