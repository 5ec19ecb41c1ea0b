"""float16 (``numbagrad.half``) tensors: storage and compute through NumPy, compared with
PyTorch's CPU build (values to float16 tolerance, dtypes, promotion, autograd).

Numba has no float16 arithmetic, so every path that would hand a float16 array to an
``@njit`` kernel takes the NumPy path instead (NOTE [Half precision] in
``numbagrad/kernels/cpu/backend.py``); the large-tensor tests cross ``KERNEL_MIN`` (4096)
and ``PARALLEL_MIN`` (200,000) so each of those branches runs.
"""

import io
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from _opdb import op_db
from test_ops import Call, as_tuple, ref_args

import numbagrad
from numbagrad.autograd.gradcheck import GradcheckError
from numbagrad.kernels import KERNEL_MIN, PARALLEL_MIN

torch = pytest.importorskip("torch")

F16_TOL = dict(rtol=1e-2, atol=1e-2)


def _np(t):
    return np.array(t.detach().numpy())


def _name(d):
    return str(d).split(".")[-1]


# -- the dtype itself ------------------------------------------------------------------------
def test_names_and_attributes():
    assert numbagrad.half is numbagrad.float16
    assert numbagrad.float16.is_floating_point
    assert numbagrad.float16.itemsize == 2
    assert repr(numbagrad.float16) == "numbagrad.float16"
    assert not hasattr(numbagrad, "bfloat16")  # NumPy has no bfloat16: left out
    x = numbagrad.tensor([1.5, -2.25], dtype=numbagrad.half)
    assert x.dtype is numbagrad.float16
    assert x.type() == "torch.HalfTensor"
    assert x.is_floating_point()
    assert repr(x) == "tensor([ 1.5000, -2.2500], dtype=numbagrad.float16)"
    assert x.element_size() == 2
    assert numbagrad.ones(2).type("torch.HalfTensor").dtype is numbagrad.float16


def test_finfo_matches_torch():
    ours, theirs = numbagrad.finfo(numbagrad.float16), torch.finfo(torch.float16)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.dtype == "float16"


_DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


@pytest.mark.parametrize("a", _DTYPES)
@pytest.mark.parametrize("b", _DTYPES)
def test_promotion_matrix(a, b):
    da, db = getattr(numbagrad, a), getattr(numbagrad, b)
    ta, tb = getattr(torch, a), getattr(torch, b)
    assert _name(numbagrad.promote_types(da, db)) == _name(torch.promote_types(ta, tb))
    assert numbagrad.can_cast(da, db) == torch.can_cast(ta, tb)
    # tensors (1-d and 0-d) and Python scalars, through result_type and a real op
    x = numbagrad.ones(2, dtype=da)
    tx = torch.ones(2, dtype=ta)
    for y, ty in (
        (numbagrad.ones(2, dtype=db), torch.ones(2, dtype=tb)),
        (numbagrad.ones((), dtype=db), torch.ones((), dtype=tb)),
        (2.5, 2.5),
        (3, 3),
        (True, True),
    ):
        want = torch.result_type(tx, ty)
        assert _name(numbagrad.result_type(x, y)) == _name(want)
        if a != "bool" or (b != "bool" and not isinstance(y, bool)):
            assert _name((x + y).dtype) == _name((tx + ty).dtype)


def test_default_dtype_half():
    prev = numbagrad.get_default_dtype()
    numbagrad.set_default_dtype(numbagrad.float16)
    try:
        assert numbagrad.tensor([1.5]).dtype is numbagrad.float16
        assert numbagrad.ones(2).dtype is numbagrad.float16
        assert (numbagrad.ones(2, dtype=numbagrad.int64) * 2.5).dtype is numbagrad.float16
    finally:
        numbagrad.set_default_dtype(prev)


# -- creation, conversion, NumPy, serialization ----------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.zeros(2, 3, dtype=m.float16),
        lambda m: m.ones(4, dtype=m.half),
        lambda m: m.full((2,), 1.7, dtype=m.float16),
        lambda m: m.arange(5, dtype=m.float16),
        lambda m: m.arange(0, 1, 0.25, dtype=m.float16),
        lambda m: m.linspace(-1, 1, 7, dtype=m.float16),
        lambda m: m.eye(3, dtype=m.float16),
        lambda m: m.empty(2, dtype=m.float16).fill_(0.1),
        lambda m: m.tensor([[1.1, 2.2], [3.3, 70000.0]], dtype=m.half),
        lambda m: m.tensor([1, 2, 3], dtype=m.float16),
        lambda m: m.tensor(np.float16(1.5)),
        lambda m: m.zeros_like(m.ones(3), dtype=m.float16),
        lambda m: m.ones(3).half(),
        lambda m: m.ones(3, dtype=m.float64).to(m.float16),
        lambda m: m.tensor([1e6, -1e6, 3.0]).half(),
        lambda m: m.ones(2, dtype=m.float16).float(),
        lambda m: m.tensor([1.5, 2.5], dtype=m.half).long(),
    ],
    ids=lambda f: "",
)
def test_creation_matches_torch(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # overflow to inf is silent, as in PyTorch
        ours = make(numbagrad)
    theirs = make(torch)
    assert _name(ours.dtype) == _name(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    # linspace: torch steps in half arithmetic, we round the exact value (1 ulp apart)
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-3, atol=0)


def test_random_creation_dtypes():
    assert numbagrad.randn(3, dtype=numbagrad.float16).dtype is numbagrad.float16
    assert numbagrad.rand(3, dtype=numbagrad.float16).dtype is numbagrad.float16
    assert numbagrad.randn_like(numbagrad.ones(2, dtype=numbagrad.half)).dtype is numbagrad.float16


def test_fill_value_overflow_raises_as_torch():
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        torch.full((2,), 70000.0, dtype=torch.half)
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        numbagrad.full((2,), 70000.0, dtype=numbagrad.half)


def test_numpy_round_trip_and_save_load():
    a = np.array([0.1, -2.5, 65504.0, np.inf], dtype=np.float16)
    x = numbagrad.from_numpy(a)
    assert x.dtype is numbagrad.float16
    assert x.numpy().dtype == np.float16
    assert np.shares_memory(x.numpy(), a)  # from_numpy shares memory, as in PyTorch
    buf = io.BytesIO()
    numbagrad.save({"w": x, "d": numbagrad.half}, buf)
    buf.seek(0)
    back = numbagrad.load(buf)
    assert back["d"] is numbagrad.float16
    assert back["w"].dtype is numbagrad.float16
    np.testing.assert_array_equal(back["w"].numpy(), a)


# -- the op database in float16, against torch ----------------------------------------------
def _torch_half_error(info, sample):
    """torch's error when its CPU build does not run the op in half on ``sample``, or None."""
    try:
        Call(torch, info, sample, "float16")()
    except (RuntimeError, NotImplementedError) as e:
        return e
    return None


def _close(ours, theirs, where, tol):
    a = _np(ours).astype(np.float64)
    b = theirs.detach().numpy().astype(np.float64)
    # float16 keeps ~3 decimal digits: scale the absolute tolerance by the output's size
    scale = max(1.0, float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0)))
    np.testing.assert_allclose(
        a, b, rtol=tol["rtol"], atol=tol["atol"] * scale, equal_nan=True, err_msg=where
    )


# Ops whose half results in torch are less accurate than a float32 computation on the same
# (float16) inputs, which is what we compare with here instead:
# - logsumexp: torch's backward is g * exp(x - out) with ``out`` rounded to half, so with
#   inputs near 800 the gradient is off by ~30 %; ours differentiates the composite;
# - matrix_exp: torch's half scaling-and-squaring overflows to inf/nan on 3x3 inputs of
#   norm ~3; ours computes in float32 and rounds.
F32_REFERENCE = {"logsumexp", "linalg.matrix_exp", "matrix_exp"}
# torch's CPU build has the forward in half but no backward ("i1_backward" not implemented)
NO_TORCH_HALF_GRAD = {"special.i1", "special.i1e"}


def _rounded(sample):
    """The sample with its float arrays rounded through float16 (still float64)."""
    return SimpleNamespace(
        args=ref_args(sample.args, "float16"), kwargs=ref_args(sample.kwargs, "float16")
    )


@pytest.mark.parametrize("info", op_db, ids=lambda i: i.name)
def test_opdb_forward_and_grad_against_torch(info):
    if info.name.startswith(("complex", "fft.")) or info.name == "polar":
        # the complex dtype of float16 is complex32, which numbagrad does not have (NumPy
        # has no such type): its entries raise TypeError naming it (test_complex.py)
        pytest.skip("float16 complex values are complex32, which numbagrad does not have")
    refused = []
    for sample in info.sample_inputs():
        err = _torch_half_error(info, sample)
        if err is not None:
            refused.append(err)
            continue
        grad = info.supports_grad
        ours = Call(numbagrad, info, sample, "float16", requires_grad=grad)
        theirs = Call(torch, info, sample, "float16", requires_grad=grad)
        outs, touts = as_tuple(ours()), as_tuple(theirs())
        refs = touts
        if info.name in F32_REFERENCE:
            ref = Call(torch, info, _rounded(sample), "float32", requires_grad=grad)
            refs = as_tuple(ref())
        assert len(outs) == len(touts), sample
        for k, (a, b, r) in enumerate(zip(outs, touts, refs, strict=True)):
            where = f"{info.name} {sample}, output {k}"
            assert _name(a.dtype) == _name(b.dtype), where
            assert tuple(a.shape) == tuple(b.shape), where
            _close(a, r, where, F16_TOL)
        if not grad or info.name in NO_TORCH_HALF_GRAD:
            continue
        pairs = [
            (a, r)
            for a, b, r in zip(outs, touts, refs, strict=True)
            if b.dtype == torch.float16 and b.requires_grad
        ]
        if not pairs:
            continue
        rng = np.random.default_rng(0)
        cots = [rng.standard_normal(tuple(r.shape)).astype(np.float16) for _, r in pairs]
        g_ours = numbagrad.autograd.grad(
            [a for a, _ in pairs],
            ours.leaves,
            [numbagrad.tensor(c) for c in cots],
            allow_unused=True,
        )
        leaves = ref.leaves if info.name in F32_REFERENCE else theirs.leaves
        g_ref = torch.autograd.grad(
            [r for _, r in pairs],
            leaves,
            [torch.tensor(c).to(r.dtype) for c, (_, r) in zip(cots, pairs, strict=True)],
            allow_unused=True,
        )
        for k, (a, b) in enumerate(zip(g_ours, g_ref, strict=True)):
            where = f"{info.name} {sample}, grad of input {k}"
            if b is None:
                assert a is None or not np.any(_np(a)), where
                continue
            assert a is not None, where
            assert a.dtype is numbagrad.float16, where
            _close(a, b, where, F16_TOL)
    if len(refused) == len(info.sample_inputs()):
        pytest.skip(f"torch's CPU build refuses float16 {info.name}: {refused[0]}")


@pytest.mark.parametrize(
    "name",
    ["inv", "det", "slogdet", "solve", "cholesky", "eigh", "svd", "svdvals", "qr", "pinv", "lstsq"],
)
def test_lapack_ops_refuse_half_as_torch(name):
    a = np.eye(3) + 0.1 * np.arange(9.0).reshape(3, 3)
    args = (a, a) if name in ("solve", "lstsq") else (a,)
    with pytest.raises((RuntimeError, NotImplementedError)):
        getattr(torch.linalg, name)(*(torch.tensor(x, dtype=torch.half) for x in args))
    with pytest.raises(NotImplementedError, match="float16"):
        getattr(numbagrad.linalg, name)(*(numbagrad.tensor(x, dtype=numbagrad.half) for x in args))


def test_gradcheck_refuses_half_as_before():
    x = numbagrad.tensor([0.5, 1.5], dtype=numbagrad.half, requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"), pytest.raises(GradcheckError):
        numbagrad.autograd.gradcheck(lambda a: a * 2, (x,))


# -- large tensors: every kernel threshold (NOTE [Half precision]) ---------------------------
_SIZES = [KERNEL_MIN + 904, PARALLEL_MIN + 50_000]
_UNARY = {  # op -> input range; every op here has a fused kernel or a kernel-only forward
    "tanh": 3,
    "sigmoid": 14,
    "sin": 3,
    "cos": 3,
    "tan": 1,
    "relu": 3,
    "exp": 3,
    "erf": 3,
    "rsqrt": None,
    "softplus": 14,
}


def _pair(values, grad=True):
    a = values.astype(np.float16)
    return (numbagrad.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad))


def _op(m, name):
    return getattr(m, name, None) or getattr(m.nn.functional, name)


@pytest.mark.parametrize("n", _SIZES)
@pytest.mark.parametrize("name", sorted(_UNARY))
def test_large_unary_forward_backward(name, n):
    rng = np.random.default_rng(n)
    r = _UNARY[name]
    x = rng.uniform(0.1, 4.0, n) if r is None else rng.uniform(-r, r, n)
    (a, ta), g = _pair(x), rng.standard_normal(n).astype(np.float16)
    out, tout = _op(numbagrad, name)(a), _op(torch, name)(ta)
    assert out.dtype is numbagrad.float16
    _close(out, tout, name, F16_TOL)
    out.backward(numbagrad.tensor(g))
    tout.backward(torch.tensor(g))
    assert a.grad.dtype is numbagrad.float16
    _close(a.grad, ta.grad, f"grad of {name}", F16_TOL)


@pytest.mark.parametrize("n", _SIZES)
def test_large_product_sums_and_accumulation(n):
    rng = np.random.default_rng(1)
    (a, ta), (b, tb) = _pair(rng.uniform(-2, 2, n)), _pair(rng.uniform(-2, 2, n))
    for x, y in ((a, b), (ta, tb)):
        # mul's two-sided backward, a gradient sum (x used twice), then a second backward
        # accumulating into the leaves' .grad
        ((x * y + x).sum() * 1e-3).backward()
        (x * y).mean().backward()
    for ours, theirs in ((a, ta), (b, tb)):
        assert ours.grad.dtype is numbagrad.float16
        _close(ours.grad, theirs.grad, "accumulated grad", F16_TOL)


def test_reductions_accumulate_in_float32():
    n = PARALLEL_MIN + 50_000
    x, tx = _pair(np.full(n, 1.0), grad=False)
    # the sum passes 65504 (inf in half) but the mean is 1, as in torch
    assert float(x.mean()) == float(tx.mean()) == 1.0
    assert float(x.sum()) == float(tx.sum()) == float("inf")
    y, ty = _pair(np.random.default_rng(2).uniform(0, 1e-3, n), grad=False)
    _close(y.sum(), ty.sum(), "sum", dict(rtol=1e-3, atol=0))
    _close(y.cumsum(0)[-1], ty.cumsum(0)[-1], "cumsum", dict(rtol=1e-3, atol=0))
    z, tz = _pair(np.random.default_rng(3).uniform(-5, 5, (3, 70_000)), grad=False)
    _close(z.softmax(1), tz.softmax(1), "softmax", F16_TOL)
    _close(z.log_softmax(1), tz.log_softmax(1), "log_softmax", F16_TOL)


def test_matmul_in_float32_and_backward():
    rng = np.random.default_rng(4)
    (a, ta), (b, tb) = _pair(rng.standard_normal((64, 300))), _pair(rng.standard_normal((300, 32)))
    out, tout = a @ b, ta @ tb
    assert out.dtype is numbagrad.float16
    _close(out, tout, "matmul", F16_TOL)
    out.sum().backward()
    tout.sum().backward()
    _close(a.grad, ta.grad, "grad a", F16_TOL)
    _close(b.grad, tb.grad, "grad b", F16_TOL)
    assert a.grad.dtype is b.grad.dtype is numbagrad.float16


def test_mixed_precision_graph():
    # a float16 leaf feeding float32 math: its gradient comes back in float16
    x, tx = _pair(np.linspace(-1, 1, 5))
    w, tw = numbagrad.ones(5, requires_grad=True), torch.ones(5, requires_grad=True)
    (x * w).sum().backward()
    (tx * tw).sum().backward()
    assert (x * w).dtype is numbagrad.float32
    assert x.grad.dtype is numbagrad.float16 and w.grad.dtype is numbagrad.float32
    _close(x.grad, tx.grad, "x.grad", F16_TOL)
    _close(w.grad, tw.grad, "w.grad", F16_TOL)
    # .half() of a float32 leaf: the gradient comes back through the cast in float32
    v, tv = (
        numbagrad.tensor([0.1, 2.0], requires_grad=True),
        torch.tensor([0.1, 2.0], requires_grad=True),
    )
    (v.half() * 3).sum().backward()
    (tv.half() * 3).sum().backward()
    assert v.grad.dtype is numbagrad.float32
    _close(v.grad, tv.grad, "v.grad", F16_TOL)


_BIG_REDUCTIONS = {  # squares of these inputs (200..300) overflow float16; results do not
    "norm": lambda m, a: a.norm(dim=1),
    "norm_all": lambda m, a: a.norm(),
    "vector_norm_3": lambda m, a: m.linalg.vector_norm(a, ord=3, dim=1),
    "var": lambda m, a: a.var(1),
    "std": lambda m, a: a.std(1),
    "var_mean": lambda m, a: m.var_mean(a, 1, correction=0)[0],
    "std_mean": lambda m, a: m.std_mean(a, 1)[0],
    "mean": lambda m, a: a.mean(1),
    "dist": lambda m, a: m.dist(a, a * 0),
    "normalize": lambda m, a: m.nn.functional.normalize(a, dim=1),
    "cosine_similarity": lambda m, a: m.nn.functional.cosine_similarity(a, a + 1),
    "layer_norm": lambda m, a: m.nn.functional.layer_norm(a, (300,)),
}


@pytest.mark.parametrize("name", sorted(_BIG_REDUCTIONS))
def test_reductions_of_large_values(name):
    f = _BIG_REDUCTIONS[name]
    x = np.random.default_rng(5).uniform(200, 300, (4, 300))
    (a, ta) = _pair(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no intermediate overflow
        out = f(numbagrad, a)
    tout = f(torch, ta)
    assert out.dtype is numbagrad.float16
    _close(out, tout, name, F16_TOL)
    rng = np.random.default_rng(6)
    g = rng.standard_normal(tuple(tout.shape)).astype(np.float16)
    out.backward(numbagrad.tensor(g))
    if name in TORCH_HALF_GRAD_OVERFLOWS:  # compare with float32 on the same inputs
        ta = torch.tensor(x.astype(np.float16).astype(np.float32), requires_grad=True)
        tout = f(torch, ta)
    tout.backward(torch.tensor(g).to(tout.dtype))
    assert a.grad.dtype is numbagrad.float16
    _close(a.grad, ta.grad, f"grad of {name}", F16_TOL)


# torch's half backward of the 3-norm computes |x|**2 * x / norm**2 in half: nan here
TORCH_HALF_GRAD_OVERFLOWS = {"vector_norm_3"}


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_optimizers_on_half_parameters(name):
    # 100 elements: past the fused optimizer kernels' FUSED_MIN, which skip float16
    def run(m):
        p = m.nn.Parameter(m.tensor(np.linspace(-1, 1, 100).astype(np.float16)))
        opt = getattr(m.optim, name)([p], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
        return p

    ours, theirs = run(numbagrad), run(torch)
    assert ours.dtype is numbagrad.float16
    _close(ours, theirs, name, dict(rtol=2e-3, atol=2e-3))


def test_transforms_in_half():
    x = np.linspace(-1, 1, 6).astype(np.float16).reshape(2, 3)
    results = []
    for m in (numbagrad, torch):

        def f(a):
            return (a.tanh() * a).sum()

        t = m.tensor(x)
        g = m.func.grad(f)(t)
        v = m.func.vmap(m.func.grad(f))(t)
        _, jv = m.func.jvp(f, (t,), (m.ones_like(t) * 0.5,))
        h = m.func.hessian(lambda a: (a.sin() * a).sum())(t[0])
        results.append((g, v, jv, h))
    for k, (a, b) in enumerate(zip(*results, strict=True)):
        assert a.dtype is numbagrad.float16, k
        _close(a, b, f"transform result {k}", F16_TOL)


def _kernel_spy(monkeypatch):
    """Record the dtypes of every array handed to the CPU backend's ``@njit`` kernels."""
    from numbagrad.kernels.cpu import accumulate, backend, elementwise

    seen = []
    for mod, real_mod in ((backend.K, elementwise), (backend.KA, accumulate)):
        for name in [n for n in real_mod.__all__ if not n.endswith("_scalar")]:
            real = getattr(mod, name)

            def spy(*args, _real=real):
                seen.extend(a.dtype for a in args if isinstance(a, np.ndarray))
                return _real(*args)

            monkeypatch.setattr(mod, name, spy)
    return seen


def test_no_float16_array_reaches_a_kernel(monkeypatch):
    seen = _kernel_spy(monkeypatch)
    n = PARALLEL_MIN + 1000

    def workload(dtype):
        x = numbagrad.linspace(-2, 2, n, dtype=dtype).requires_grad_(True)
        y = (
            x.tanh()
            + x.sigmoid() * x
            + numbagrad.erf(x)
            + x.sin()
            + numbagrad.nn.functional.softplus(x)
            + x.relu()
        )
        y.sum().backward(retain_graph=True)
        y.sum().backward()  # accumulates into x.grad
        return x.grad

    workload(numbagrad.float32)
    assert np.dtype(np.float32) in seen  # the spy sees the kernels float32 uses
    seen.clear()
    g = workload(numbagrad.float16)
    assert g.dtype is numbagrad.float16
    assert np.dtype(np.float16) not in seen
