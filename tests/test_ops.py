"""Generic op tests driven by the op database, plus promotion, in-place and view tests.

For every entry of :data:`_opdb.op_db`:

* forward against the NumPy reference in float64 and float32 (values, shapes, dtypes),
  also on non-contiguous inputs, and through every variant (method, operator, alias);
* float64 ``gradcheck`` on every sample and ``gradgradcheck`` on the small ones;
* the backward with and without ``create_graph`` agree (fused vs composite rule);
* outputs and gradients equal PyTorch's when torch is importable.
"""

import numpy as np
import pytest
from _opdb import op_db

import numbagrad

IS_TORCH = numbagrad.__name__ == "torch"

# Second-order checks are quadratic in the input size: keep them to small samples.
GRADGRAD_MAX_ELEMENTS = 16
GRADGRAD_MAX_SAMPLES = 3

# torch 2.13's take_along_dim(dim=None) calls view() on a non-contiguous input and raises.
TORCH_NONCONTIG_BUGS = {("take_along_dim", "flat")}

grad_ops = [info for info in op_db if info.supports_grad]
nograd_ops = [info for info in op_db if not info.supports_grad]
variant_params = [
    pytest.param(info, vname, id=f"{info.name}-{vname}")
    for info in op_db
    for vname in info.variants
]


def _id(info):
    return info.name


# ---------------------------------------------------------------------------
# Helpers: NumPy sample structures -> tensors of module m.
# ---------------------------------------------------------------------------


class _Leaf:
    """Placeholder for the i-th floating input inside an argument template."""

    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _template(m, obj, floats):
    """Replace float arrays by :class:`_Leaf` and other arrays by tensors of ``m``."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            floats.append(obj)
            return _Leaf(len(floats) - 1)
        return m.tensor(obj)
    if isinstance(obj, list):
        return [_template(m, o, floats) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_template(m, o, floats) for o in obj)
    if isinstance(obj, dict):
        return {k: _template(m, v, floats) for k, v in obj.items()}
    return obj


def _fill(obj, leaves):
    """Put the tensors ``leaves`` back in place of the :class:`_Leaf` placeholders."""
    if isinstance(obj, _Leaf):
        return leaves[obj.i]
    if isinstance(obj, list):
        return [_fill(o, leaves) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_fill(o, leaves) for o in obj)
    if isinstance(obj, dict):
        return {k: _fill(v, leaves) for k, v in obj.items()}
    return obj


def make_leaf(m, a, dtype, requires_grad=False, noncontig=False):
    """A tensor of module ``m`` holding ``a`` cast to ``dtype`` (NumPy dtype name).

    With ``noncontig`` the tensor is a strided view (transposed, or every other element)
    holding the same values, to exercise the non-contiguous kernel paths.
    """
    a = a.astype(dtype)
    if noncontig and a.ndim >= 2:
        t = m.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    elif noncontig and a.ndim == 1 and a.size > 1:
        t = m.tensor(np.repeat(a, 2))[::2]
    else:
        t = m.tensor(a)
    if requires_grad:
        t = t.detach().requires_grad_(True)
    return t


class Call:
    """A sample bound to module ``m``: ``call(leaves)`` runs the op on given leaves."""

    def __init__(
        self, m, info, sample, dtype="float64", requires_grad=False, noncontig=False, fn=None
    ):
        self.m = m
        self.floats = []
        self.args = _template(m, sample.args, self.floats)
        self.kwargs = _template(m, sample.kwargs, self.floats)
        self.fn = fn or info.op
        self.leaves = [make_leaf(m, a, dtype, requires_grad, noncontig) for a in self.floats]

    def __call__(self, *leaves):
        leaves = leaves or self.leaves
        return self.fn(self.m, *_fill(self.args, leaves), **_fill(self.kwargs, leaves))

    def float_outputs(self, *leaves):
        """The floating outputs only (integer indices are not differentiable)."""
        return tuple(o for o in as_tuple(self(*leaves)) if is_float(self.m, o))


def as_tuple(out):
    """Outputs as a tuple (namedtuples from max/sort/topk are tuples)."""
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def is_float(m, t):
    """True for float32/float64 tensors."""
    return t.dtype in (m.float32, m.float64)


def to_numpy(t):
    """Detached copy of a tensor as a NumPy array."""
    return np.array(t.detach().numpy())


def ref_args(obj, dtype):
    """Sample structure for the NumPy reference: float arrays rounded through ``dtype``."""
    if isinstance(obj, np.ndarray):
        return obj.astype(dtype).astype(np.float64) if obj.dtype.kind == "f" else obj
    if isinstance(obj, list):
        return [ref_args(o, dtype) for o in obj]
    if isinstance(obj, tuple):
        return tuple(ref_args(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: ref_args(v, dtype) for k, v in obj.items()}
    return obj


def expected_dtype(m, tag, dtype):
    """Map an OpInfo dtype tag to a dtype of module ``m``."""
    return {"same": getattr(m, dtype), "bool": m.bool, "int64": m.int64}[tag]


def check_against_ref(info, sample, out, dtype):
    """Compare an op output with the NumPy reference: count, shape, dtype and values."""
    ref = info.ref(*ref_args(sample.args, dtype), **ref_args(sample.kwargs, dtype))
    outs, refs = as_tuple(out), as_tuple(ref)
    assert len(outs) == len(refs), f"{sample}: {len(outs)} outputs, expected {len(refs)}"
    tags = info.out_dtypes(sample)
    tags = tags * len(refs) if len(tags) == 1 else tags
    rtol, atol = info.tol64 if dtype == "float64" else info.tol32
    for k, (o, r, tag) in enumerate(zip(outs, refs, tags, strict=True)):
        r = np.asarray(r)
        where = f"{sample}, output {k}"
        assert tuple(o.shape) == r.shape, f"{where}: shape {tuple(o.shape)} != {r.shape}"
        want = expected_dtype(numbagrad, tag, dtype)
        assert o.dtype == want, f"{where}: dtype {o.dtype} != {want}"
        got = to_numpy(o)
        if tag == "same":
            np.testing.assert_allclose(got, r, rtol=rtol, atol=atol, err_msg=where)
        else:
            np.testing.assert_array_equal(got, r.astype(got.dtype), err_msg=where)


# ---------------------------------------------------------------------------
# Generic op tests.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("info", op_db, ids=_id)
def test_forward(info, dtype):
    for sample in info.sample_inputs():
        call = Call(numbagrad, info, sample, dtype)
        check_against_ref(info, sample, call(), dtype)


@pytest.mark.parametrize("info", op_db, ids=_id)
def test_forward_noncontiguous(info):
    # Same values, but every float input is a strided view: exercises the strided path.
    if info.name == "view":
        pytest.skip("view of a non-contiguous tensor is an error (tested in test_errors)")
    samples = [
        s
        for s in info.sample_inputs()
        if any(a.ndim >= 1 and a.size > 1 for a in _floats_of(s))
        and not (IS_TORCH and (info.name, s.name) in TORCH_NONCONTIG_BUGS)
    ]
    if not samples:
        pytest.skip("no sample with a non-trivial float input")
    for sample in samples:
        call = Call(numbagrad, info, sample, "float64", noncontig=True)
        check_against_ref(info, sample, call(), "float64")


@pytest.mark.parametrize("info, vname", variant_params)
def test_variant(info, vname):
    fn = info.variants[vname]
    for sample in info.sample_inputs():
        call = Call(numbagrad, info, sample, "float64", fn=fn)
        check_against_ref(info, sample, call(), "float64")


def _floats_of(sample):
    floats = []
    _template(numbagrad, (sample.args, sample.kwargs), floats)
    return floats


@pytest.mark.parametrize("info", grad_ops, ids=_id)
def test_gradcheck(info):
    rtol, atol = info.grad_tol
    for sample in info.sample_inputs():
        call = Call(numbagrad, info, sample, "float64", requires_grad=True)
        assert numbagrad.autograd.gradcheck(
            call.float_outputs, tuple(call.leaves), eps=1e-6, atol=atol, rtol=rtol
        ), sample


def _small_samples(info):
    small = [
        s
        for s in info.sample_inputs()
        if sum(a.size for a in _floats_of(s)) <= GRADGRAD_MAX_ELEMENTS
    ]
    return small[:GRADGRAD_MAX_SAMPLES]


@pytest.mark.parametrize("info", [i for i in grad_ops if i.supports_gradgrad], ids=_id)
def test_gradgradcheck(info):
    samples = _small_samples(info)
    assert samples, "every differentiable op needs a small sample"
    rtol, atol = info.grad_tol
    for sample in samples:
        call = Call(numbagrad, info, sample, "float64", requires_grad=True)
        assert numbagrad.autograd.gradgradcheck(
            call.float_outputs, tuple(call.leaves), eps=1e-6, atol=atol, rtol=rtol
        ), sample


def _vjp(m, call, seed, create_graph=False):
    """Outputs and input gradients for seeded random cotangents (None -> zeros)."""
    outs = call.float_outputs()
    rng = np.random.default_rng(seed)
    cots = [m.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
    grads = m.autograd.grad(
        outs, call.leaves, grad_outputs=cots, allow_unused=True, create_graph=create_graph
    )
    grads = [
        np.zeros(leaf.shape) if g is None else to_numpy(g)
        for g, leaf in zip(grads, call.leaves, strict=True)
    ]
    return outs, grads


@pytest.mark.parametrize("info", grad_ops, ids=_id)
def test_backward_fused_matches_composite(info):
    # create_graph=True runs the differentiable (composite) rules; without it an op may
    # use a fused one-pass kernel. Both must give the same gradients.
    for sample in info.sample_inputs()[:3]:
        call = Call(numbagrad, info, sample, "float64", requires_grad=True)
        _, fast = _vjp(numbagrad, call, 0)
        _, composite = _vjp(numbagrad, call, 0, create_graph=True)
        for k, (a, b) in enumerate(zip(fast, composite, strict=True)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"{sample}, input {k}")


@pytest.mark.parametrize("info", grad_ops, ids=_id)
def test_backward_noncontiguous_leaves(info):
    # Strided leaves must get the same gradients (and dense-shaped .grad) as dense ones.
    if info.name == "view":
        pytest.skip("view of a non-contiguous tensor is an error")
    for n, sample in enumerate(info.sample_inputs()):
        if IS_TORCH and (info.name, sample.name) in TORCH_NONCONTIG_BUGS:
            continue
        dense = Call(numbagrad, info, sample, "float64", requires_grad=True)
        strided = Call(numbagrad, info, sample, "float64", requires_grad=True, noncontig=True)
        _, g_dense = _vjp(numbagrad, dense, n)
        _, g_strided = _vjp(numbagrad, strided, n)
        for k, (a, b) in enumerate(zip(g_dense, g_strided, strict=True)):
            np.testing.assert_allclose(
                b, a, rtol=1e-12, atol=1e-14, err_msg=f"{sample}, grad of input {k}"
            )


@pytest.mark.parametrize("info", grad_ops, ids=_id)
def test_backward_float32(info):
    # float32 inputs get float32 gradients, close to the float64 ones.
    for n, sample in enumerate(info.sample_inputs()):
        c32 = Call(numbagrad, info, sample, "float32", requires_grad=True)
        outs = c32.float_outputs()
        rng = np.random.default_rng(n)
        cots = [rng.standard_normal(tuple(o.shape)) for o in outs]
        grads = numbagrad.autograd.grad(
            outs,
            c32.leaves,
            allow_unused=True,
            grad_outputs=[numbagrad.tensor(c.astype(np.float32)) for c in cots],
        )
        # Reference: the same computation in float64 on the float32-rounded inputs.
        c64 = Call(numbagrad, info, sample, "float64", requires_grad=True)
        for leaf, leaf32 in zip(c64.leaves, c32.leaves, strict=True):
            with numbagrad.no_grad():
                leaf.copy_(leaf32.double())
        outs64 = c64.float_outputs()
        grads64 = numbagrad.autograd.grad(
            outs64,
            c64.leaves,
            allow_unused=True,
            grad_outputs=[numbagrad.tensor(c.astype(np.float32).astype(np.float64)) for c in cots],
        )
        for k, (g, g64) in enumerate(zip(grads, grads64, strict=True)):
            if g is None:
                assert g64 is None or not np.any(to_numpy(g64)), f"{sample}, input {k}"
                continue
            assert g.dtype == numbagrad.float32, f"{sample}, grad of input {k}: {g.dtype}"
            np.testing.assert_allclose(
                to_numpy(g),
                to_numpy(g64),
                rtol=2e-4,
                atol=2e-5,
                err_msg=f"{sample}, grad of input {k}",
            )


@pytest.mark.parametrize("info", nograd_ops, ids=_id)
def test_nondifferentiable_outputs_do_not_require_grad(info):
    for sample in info.sample_inputs():
        call = Call(numbagrad, info, sample, "float64", requires_grad=True)
        for k, out in enumerate(as_tuple(call())):
            assert not out.requires_grad, f"{sample}, output {k}"
            assert out.grad_fn is None, f"{sample}, output {k}"


@pytest.mark.parametrize("info", op_db, ids=_id)
def test_against_torch(info):
    torch_ = pytest.importorskip("torch")
    for n, sample in enumerate(info.sample_inputs()):
        ours = Call(numbagrad, info, sample, "float64", requires_grad=info.supports_grad)
        theirs = Call(torch_, info, sample, "float64", requires_grad=info.supports_grad)
        out_ng, out_t = as_tuple(ours()), as_tuple(theirs())
        assert len(out_ng) == len(out_t), sample
        for k, (a, b) in enumerate(zip(out_ng, out_t, strict=True)):
            where = f"{sample}, output {k}"
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], where
            assert tuple(a.shape) == tuple(b.shape), where
            assert a.requires_grad == b.requires_grad, where
            np.testing.assert_allclose(
                to_numpy(a), to_numpy(b), rtol=1e-7, atol=1e-9, err_msg=where
            )
        if not info.supports_grad:
            continue
        _, g_ng = _vjp(numbagrad, ours, n)
        _, g_t = _vjp(torch_, theirs, n)
        for k, (a, b) in enumerate(zip(g_ng, g_t, strict=True)):
            np.testing.assert_allclose(
                a, b, rtol=1e-7, atol=1e-9, err_msg=f"{sample}, grad of input {k}"
            )


@pytest.mark.parametrize("info", [i for i in grad_ops if i.supports_gradgrad], ids=_id)
def test_gradgrad_directional(info):
    # Independent of gradgradcheck (which this suite also runs): see _gradgrad_directional.
    for n, sample in enumerate(_small_samples(info)):
        _gradgrad_directional(info, sample, n)


def _gradgrad_directional(info, sample, seed, eps=1e-6):
    """Check the derivative of the first-order VJP ``G(x) = J(x)^T v`` along a random
    direction ``u``, paired with a random ``w``, against a central difference of ``G``
    computed by the first-order backward."""
    call = Call(numbagrad, info, sample, "float64", requires_grad=True)
    rng = np.random.default_rng(seed)
    outs = call.float_outputs()
    cots = [numbagrad.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
    ws = [rng.standard_normal(tuple(leaf.shape)) for leaf in call.leaves]
    us = [rng.standard_normal(tuple(leaf.shape)) for leaf in call.leaves]

    def vjp(leaves, create_graph):
        return numbagrad.autograd.grad(
            call.float_outputs(*leaves),
            leaves,
            grad_outputs=cots,
            allow_unused=True,
            create_graph=create_graph,
        )

    terms = [
        (g * numbagrad.tensor(w)).sum()
        for g, w in zip(vjp(call.leaves, True), ws, strict=True)
        if g is not None and g.requires_grad
    ]
    analytic = 0.0
    if terms:
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        hs = numbagrad.autograd.grad(total, call.leaves, allow_unused=True)
        analytic = sum(float(np.sum(_dense(h, u.shape) * u)) for h, u in zip(hs, us, strict=True))

    def shifted(sign):
        leaves = [
            numbagrad.tensor(np.asarray(a + sign * eps * u)).requires_grad_(True)
            for a, u in zip(call.floats, us, strict=True)
        ]
        return sum(
            float(np.sum(to_numpy(g) * w))
            for g, w in zip(vjp(leaves, False), ws, strict=True)
            if g is not None
        )

    numeric = (shifted(1.0) - shifted(-1.0)) / (2 * eps)
    np.testing.assert_allclose(
        analytic,
        numeric,
        rtol=1e-4,
        atol=1e-5,
        err_msg=f"{sample}: second derivative along a direction",
    )


def _dense(h, shape):
    """A gradient as an array: None and torch's storage-less ZeroTensor become zeros."""
    if h is None or (hasattr(h, "_is_zerotensor") and h._is_zerotensor()):
        return np.zeros(tuple(shape))
    return to_numpy(h)


@pytest.mark.parametrize("info", [i for i in grad_ops if i.supports_gradgrad], ids=_id)
def test_gradgrad_against_torch(info):
    # Second-order VJPs compared with PyTorch's, independently of gradgradcheck: the
    # gradient of <grad(f, x, v), w> with respect to the inputs x and the cotangents v.
    torch_ = pytest.importorskip("torch")
    for n, sample in enumerate(_small_samples(info)):
        results = []
        for m in (numbagrad, torch_):
            call = Call(m, info, sample, "float64", requires_grad=True)
            outs = call.float_outputs()
            rng = np.random.default_rng(n)
            cots = [
                m.tensor(rng.standard_normal(tuple(o.shape))).requires_grad_(True) for o in outs
            ]
            gs = m.autograd.grad(
                outs, call.leaves, grad_outputs=cots, create_graph=True, allow_unused=True
            )
            ws = [m.tensor(rng.standard_normal(tuple(leaf.shape))) for leaf in call.leaves]
            terms = [
                (g * w).sum()
                for g, w in zip(gs, ws, strict=True)
                if g is not None and g.requires_grad
            ]
            wrt = list(call.leaves) + cots
            if not terms:  # second derivative identically zero (linear op)
                results.append([np.zeros(tuple(t.shape)) for t in wrt])
                continue
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            hs = m.autograd.grad(total, wrt, allow_unused=True)
            results.append([_dense(h, t.shape) for h, t in zip(hs, wrt, strict=True)])
        for k, (a, b) in enumerate(zip(*results, strict=True)):
            np.testing.assert_allclose(
                a, b, rtol=1e-7, atol=1e-9, err_msg=f"{sample}, second-order term {k}"
            )


# ---------------------------------------------------------------------------
# Type promotion (PyTorch rules).
# ---------------------------------------------------------------------------


def _t(values, dtype):
    return numbagrad.tensor(values, dtype=getattr(numbagrad, dtype))


PROMOTION_CASES = [
    # (description, fn, expected dtype name)
    ("f32 * python float", lambda: _t([1.0, 2.0], "float32") * 2.5, "float32"),
    ("python float * f32", lambda: 2.5 * _t([1.0, 2.0], "float32"), "float32"),
    ("f32 + python int", lambda: _t([1.0, 2.0], "float32") + 2, "float32"),
    ("f32 + f64", lambda: _t([1.0], "float32") + _t([1.0], "float64"), "float64"),
    ("i64 + f32", lambda: _t([1, 2], "int64") + _t([1.0, 2.0], "float32"), "float32"),
    ("i64 * python float", lambda: _t([1, 2], "int64") * 2.5, "float32"),
    ("i64 + python int", lambda: _t([1, 2], "int64") + 3, "int64"),
    ("bool + i64", lambda: _t([True, False], "bool") + _t([1, 2], "int64"), "int64"),
    ("bool + python int", lambda: _t([True, False], "bool") + 1, "int64"),
    ("bool + bool", lambda: _t([True, False], "bool") + _t([True, True], "bool"), "bool"),
    ("bool * f32", lambda: _t([True, False], "bool") * _t([2.0, 3.0], "float32"), "float32"),
    ("i64 / i64", lambda: _t([1, 2], "int64") / _t([2, 2], "int64"), "float32"),
    ("i64 / python int", lambda: _t([1, 2], "int64") / 2, "float32"),
    ("f32 (n,) + f64 0-d", lambda: _t([1.0, 2.0], "float32") + _t(1.0, "float64"), "float32"),
    ("i64 (n,) + f64 0-d", lambda: _t([1, 2], "int64") + _t(1.0, "float64"), "float64"),
    ("f32 0-d + f64 0-d", lambda: _t(1.0, "float32") + _t(1.0, "float64"), "float64"),
    ("i64 ** python int", lambda: _t([1, 2], "int64") ** 2, "int64"),
    ("python float ** i64", lambda: 2.5 ** _t([1, 2], "int64"), "float32"),
    ("f32 < python float", lambda: _t([1.0, 2.0], "float32") < 1.5, "bool"),
    ("i64 == i64", lambda: _t([1, 2], "int64") == _t([1, 3], "int64"), "bool"),
    (
        "where f32/f64",
        lambda: numbagrad.where(
            _t([True, False], "bool"), _t([1.0, 2.0], "float32"), _t([1.0, 2.0], "float64")
        ),
        "float64",
    ),
    (
        "where f32/python float",
        lambda: numbagrad.where(_t([True, False], "bool"), _t([1.0, 2.0], "float32"), 0.0),
        "float32",
    ),
    ("sum i64", lambda: _t([1, 2], "int64").sum(), "int64"),
    ("sum bool", lambda: _t([True, True, False], "bool").sum(), "int64"),
    ("neg i64", lambda: -_t([1, 2], "int64"), "int64"),
    ("abs i64", lambda: _t([-1, 2], "int64").abs(), "int64"),
    ("exp i64", lambda: _t([0, 1], "int64").exp(), "float32"),
    (
        "maximum i64 f32",
        lambda: numbagrad.maximum(_t([1, 5], "int64"), _t([2.0, 3.0], "float32")),
        "float32",
    ),
    (
        "matmul f32 f32",
        lambda: _t([[1.0, 2.0]], "float32") @ _t([[1.0], [2.0]], "float32"),
        "float32",
    ),
    ("cat f32 f64", lambda: numbagrad.cat([_t([1.0], "float32"), _t([2.0], "float64")]), "float64"),
]


@pytest.mark.parametrize("fn, expected", [pytest.param(f, e, id=d) for d, f, e in PROMOTION_CASES])
def test_promotion(fn, expected):
    out = fn()
    assert out.dtype == getattr(numbagrad, expected)


def test_promotion_values():
    # The promoted results must also be computed in the promoted type.
    np.testing.assert_array_equal((_t([1, 2], "int64") * 3).numpy(), [3, 6])
    np.testing.assert_allclose((_t([1, 3], "int64") / 2).numpy(), [0.5, 1.5])
    np.testing.assert_array_equal((_t([True, True, False], "bool").sum()).item(), 2)
    x = _t([1.0, 2.0], "float32") * 0.1
    # 0.1 is applied in float32 (as PyTorch does), not in float64 and then rounded twice.
    np.testing.assert_array_equal(x.numpy(), np.float32([1.0, 2.0]) * np.float32(0.1))


def test_true_divide_follows_default_dtype():
    old = numbagrad.get_default_dtype()
    numbagrad.set_default_dtype(numbagrad.float64)
    try:
        out = _t([1, 2], "int64") / _t([2, 2], "int64")
        assert out.dtype == numbagrad.float64
        assert (_t([1, 2], "int64") * 0.5).dtype == numbagrad.float64
    finally:
        numbagrad.set_default_dtype(old)


def test_mean_of_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="dtype"):
        _t([1, 2], "int64").mean()


def test_gradient_dtype_follows_input_dtype():
    # A float32 leaf multiplied by a float64 tensor: its gradient is still float32.
    x = numbagrad.ones(3, dtype=numbagrad.float32, requires_grad=True)
    w = numbagrad.ones(3, dtype=numbagrad.float64)
    (x * w).sum().backward()
    assert x.grad.dtype == numbagrad.float32
    assert (x * w).dtype == numbagrad.float64


# ---------------------------------------------------------------------------
# In-place ops.
# ---------------------------------------------------------------------------

INPLACE_CASES = [
    # (name, method call on a tensor, NumPy equivalent)
    ("add_", lambda t: t.add_(2.0), lambda a: a + 2.0),
    (
        "add_tensor",
        lambda t: t.add_(_t([1.0, 2.0, 3.0], "float64")),
        lambda a: a + np.array([1.0, 2.0, 3.0]),
    ),
    (
        "add_alpha",
        lambda t: t.add_(_t([1.0, 2.0, 3.0], "float64"), alpha=2.0),
        lambda a: a + 2.0 * np.array([1.0, 2.0, 3.0]),
    ),
    ("sub_", lambda t: t.sub_(0.5), lambda a: a - 0.5),
    ("mul_", lambda t: t.mul_(3.0), lambda a: a * 3.0),
    (
        "mul_tensor",
        lambda t: t.mul_(_t([1.0, -1.0, 2.0], "float64")),
        lambda a: a * np.array([1.0, -1.0, 2.0]),
    ),
    ("div_", lambda t: t.div_(4.0), lambda a: a / 4.0),
    ("zero_", lambda t: t.zero_(), lambda a: a * 0.0),
    ("fill_", lambda t: t.fill_(7.0), lambda a: np.full_like(a, 7.0)),
    (
        "copy_",
        lambda t: t.copy_(_t([9.0, 8.0, 7.0], "float64")),
        lambda a: np.array([9.0, 8.0, 7.0]),
    ),
    ("copy_broadcast", lambda t: t.copy_(_t(5.0, "float64")), lambda a: np.full_like(a, 5.0)),
    ("clamp_", lambda t: t.clamp_(-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    ("neg_", lambda t: t.neg_(), lambda a: -a),
    ("exp_", lambda t: t.exp_(), np.exp),
    ("iadd", lambda t: t.__iadd__(1.0), lambda a: a + 1.0),
    ("imul", lambda t: t.__imul__(_t([2.0, 2.0, 2.0], "float64")), lambda a: a * 2.0),
    ("isub", lambda t: t.__isub__(1.0), lambda a: a - 1.0),
    ("itruediv", lambda t: t.__itruediv__(2.0), lambda a: a / 2.0),
]


@pytest.mark.parametrize("fn, ref", [pytest.param(f, r, id=n) for n, f, r in INPLACE_CASES])
def test_inplace_values_identity_and_version(fn, ref):
    a = np.array([-1.0, 0.25, 2.0])
    t = numbagrad.tensor(a.copy())
    v0 = t._version
    out = fn(t)
    assert out is t, "in-place ops return self"
    assert t._version > v0, "in-place ops bump the version counter"
    np.testing.assert_allclose(t.numpy(), ref(a), rtol=1e-12)


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f, _ in INPLACE_CASES])
def test_inplace_on_leaf_requiring_grad_raises(fn):
    t = numbagrad.tensor([-1.0, 0.25, 2.0], dtype=numbagrad.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        fn(t)


def test_inplace_on_leaf_allowed_under_no_grad():
    # What optimizers do: update parameters in place inside no_grad.
    w = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with numbagrad.no_grad():
        w.sub_(0.25 * w.grad)
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), [0.5, 1.0])


INPLACE_GRAD_CASES = [
    # (name, in-place step applied to y = x * 1, d(sum(y_after))/dx as a function of x)
    ("add_", lambda y: y.add_(3.0), lambda x: np.ones_like(x)),
    ("sub_", lambda y: y.sub_(3.0), lambda x: np.ones_like(x)),
    ("mul_", lambda y: y.mul_(3.0), lambda x: np.full_like(x, 3.0)),
    ("div_", lambda y: y.div_(4.0), lambda x: np.full_like(x, 0.25)),
    ("neg_", lambda y: y.neg_(), lambda x: -np.ones_like(x)),
    ("exp_", lambda y: y.exp_(), np.exp),
    ("clamp_", lambda y: y.clamp_(-0.5, 0.5), lambda x: (np.abs(x) < 0.5).astype(float)),
    ("zero_", lambda y: y.zero_(), np.zeros_like),
    ("fill_", lambda y: y.fill_(2.0), np.zeros_like),
]


@pytest.mark.parametrize("step, dref", [pytest.param(s, d, id=n) for n, s, d in INPLACE_GRAD_CASES])
def test_inplace_on_non_leaf_is_differentiable(step, dref):
    xa = np.array([-1.0, 0.25, 2.0])
    x = numbagrad.tensor(xa, requires_grad=True)
    y = x * 1.0
    step(y)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), dref(xa), rtol=1e-12)


def test_inplace_with_tensor_operand_gradients():
    x = numbagrad.tensor([1.0, 2.0], dtype=numbagrad.float64, requires_grad=True)
    w = numbagrad.tensor([3.0, -1.0], dtype=numbagrad.float64, requires_grad=True)
    y = x * 2.0
    y.mul_(w)
    y.add_(w)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, -2.0])
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 5.0])


def test_inplace_through_view_of_non_leaf():
    # Writing through a view updates the base's history (PyTorch's CopySlices).
    x = numbagrad.tensor([1.0, 2.0, 3.0], dtype=numbagrad.float64, requires_grad=True)
    y = x * 2.0
    y[1:].mul_(3.0)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [2.0, 12.0, 18.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 6.0, 6.0])


def test_setitem_on_non_leaf_gradients():
    x = numbagrad.tensor([1.0, 2.0, 3.0], dtype=numbagrad.float64, requires_grad=True)
    v = numbagrad.tensor(5.0, dtype=numbagrad.float64, requires_grad=True)
    y = x * 1.0
    y[0] = v * 2.0
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 4.0, 6.0])
    np.testing.assert_allclose(v.grad.item(), 2.0 * 2.0 * 10.0)


def test_setitem_on_leaf_requiring_grad_raises():
    x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 3.0


def test_inplace_bumps_version_once_per_op():
    t = numbagrad.zeros(3)
    assert t._version == 0
    t.add_(1.0)
    t.mul_(2.0)
    assert t._version == 2
    t[0] = 5.0
    assert t._version == 3


# ---------------------------------------------------------------------------
# Views share memory (and the version counter) with their base.
# ---------------------------------------------------------------------------

VIEW_CASES = [
    ("view", lambda x: x.view(4, 3)),
    ("reshape_contiguous", lambda x: x.reshape(2, 6)),
    ("flatten", lambda x: x.flatten()),
    ("unflatten", lambda x: x.unflatten(1, (2, 2))),
    ("transpose", lambda x: x.transpose(0, 1)),
    ("t", lambda x: x.t()),
    ("permute", lambda x: x.permute(1, 0)),
    ("movedim", lambda x: x.movedim(0, 1)),
    ("unsqueeze", lambda x: x.unsqueeze(1)),
    ("squeeze", lambda x: x.unsqueeze(0).squeeze(0)),
    ("getitem_int", lambda x: x[1]),
    ("getitem_slice_step", lambda x: x[:, ::2]),
    ("getitem_none_ellipsis", lambda x: x[None, ..., 1]),
    ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("diagonal", lambda x: x.diagonal()),
    ("split", lambda x: x.split(2, dim=1)[1]),
    ("chunk", lambda x: x.chunk(3, dim=0)[2]),
    ("expand", lambda x: x[:, :1].expand(3, 5)),
    ("detach", lambda x: x.detach()),
]


@pytest.mark.parametrize("make_view", [pytest.param(f, id=n) for n, f in VIEW_CASES])
def test_view_sees_base_writes(make_view):
    base = numbagrad.tensor(np.arange(12.0).reshape(3, 4))
    view = make_view(base)
    before = to_numpy(view)
    base.add_(100.0)
    np.testing.assert_array_equal(to_numpy(view), before + 100.0)
    # One version counter for base and all its views.
    assert view._version == base._version


@pytest.mark.parametrize(
    "make_view", [pytest.param(f, id=n) for n, f in VIEW_CASES if n != "expand"]
)
def test_base_sees_view_writes(make_view):
    base = numbagrad.tensor(np.arange(12.0).reshape(3, 4))
    view = make_view(base)
    expected = to_numpy(base)
    view.mul_(-1.0)
    # Recompute what the base must now hold: the viewed elements negated.
    marker = numbagrad.tensor(np.arange(12.0).reshape(3, 4))
    make_view(marker).fill_(-1.0)
    touched = to_numpy(marker) == -1.0
    expected[touched] *= -1.0
    np.testing.assert_array_equal(to_numpy(base), expected)
    assert base._version == view._version


def test_getitem_advanced_index_copies():
    base = numbagrad.tensor([1.0, 2.0, 3.0])
    picked = base[numbagrad.tensor([0, 2])]
    base.add_(1.0)
    np.testing.assert_array_equal(picked.numpy(), [1.0, 3.0])
