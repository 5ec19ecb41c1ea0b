"""The registry of public ops (NOTE [Public ops] in numbagrad/ops/_public.py): one marker per
op, from which the namespaces, Tensor's methods, the stubs and the docs check derive; and
``addr``, the first op added through it, against PyTorch."""

import types

import pytest

import numbagrad
from numbagrad.ops import _public
from numbagrad.ops._public import EXPORTS, public


def test_the_namespaces_are_the_registry():
    assert numbagrad.ops.__all__ == list(EXPORTS)
    for name, e in EXPORTS.items():
        assert getattr(numbagrad.ops, name) is e.obj, name
        assert name in numbagrad.__all__, name
        if e.method:  # (the op itself, its ``axis``/``keepdims`` wrapper, or a property)
            assert hasattr(numbagrad.Tensor, name), name
        if e.numpy_keywords:
            assert getattr(numbagrad.Tensor, name).__wrapped__ is e.obj, name
        if e.inplace:
            assert callable(getattr(numbagrad.Tensor, name + "_")), name
    assert not hasattr(numbagrad.Tensor, "stack")  # method=False
    assert numbagrad.clip is numbagrad.clamp  # an alias
    x = numbagrad.tensor([[1.0, 2.0]])
    assert numbagrad.sum(x, axis=1, keepdims=True).tolist() == [[3.0]]


# the hand-written ``__all__`` lists these namespaces had before the registry (PyTorch's
# ``torch.linalg`` and ``torch.special`` names that numbagrad provided then): none may go
LINALG_NAMES = (
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
)
SPECIAL_NAMES = (
    "bessel_j0",
    "bessel_j1",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
)


def test_linalg_and_special_are_the_registry():
    import numbagrad.linalg
    import numbagrad.special

    for mod, names in ((numbagrad.linalg, LINALG_NAMES), (numbagrad.special, SPECIAL_NAMES)):
        space = mod.__name__.rpartition(".")[2]
        assert mod.__all__ == sorted(_public.NAMESPACES[space])
        assert set(names) <= set(mod.__all__)
        for n in names:
            assert getattr(mod, n) is _public.NAMESPACES[space][n], n
    assert numbagrad.special.psi is numbagrad.digamma  # an alias in the namespace only
    assert "psi" not in EXPORTS and "digamma" in EXPORTS  # (``also=``: both)
    assert numbagrad.special.erfcx is not None and "erfcx" not in EXPORTS


def test_a_namespace_op_the_module_does_not_bind_is_refused():
    def _h2_namespace_op(input):
        return input

    public(_h2_namespace_op, namespace="_h2_test")
    try:
        with pytest.raises(ImportError, match=r"numbagrad\._h2_test\._h2_namespace_op"):
            _public.namespace_all("_h2_test", {})
        assert _public.namespace_all("_h2_test", {"_h2_namespace_op": _h2_namespace_op}) == [
            "_h2_namespace_op"
        ]
        with pytest.raises(TypeError, match="two objects are public"):
            public(numbagrad.exp, name="_h2_namespace_op", namespace="_h2_test")
        with pytest.raises(TypeError, match="namespace"):
            public(numbagrad.exp, namespace="_h2_test", inplace=True)
    finally:
        _public.NAMESPACES.pop("_h2_test", None)


def test_two_ops_of_one_name_are_refused():
    def exp(input):
        return input

    with pytest.raises(TypeError, match="two public ops are named 'exp'"):
        public(exp)
    assert EXPORTS["exp"].obj is numbagrad.exp
    public(numbagrad.exp, inplace=True)  # the same declaration again is no conflict
    with pytest.raises(TypeError, match="two public ops"):
        public(numbagrad.exp)  # (the same function with other flags is one)


def test_an_older_style_all_list_is_adopted():
    mod = types.ModuleType("numbagrad.ops._test_old_style")

    def _h2_old_style_op(input):
        return input

    mod._h2_old_style_op = _h2_old_style_op
    mod.ALL = ["_h2_old_style_op", "exp"]
    try:
        mod.exp = numbagrad.exp
        _public.adopt(mod)
        e = EXPORTS["_h2_old_style_op"]
        assert e.obj is _h2_old_style_op and e.method and not e.inplace
        assert EXPORTS["exp"].inplace  # marked already: the marker's flags are kept
    finally:
        EXPORTS.pop("_h2_old_style_op", None)


def _both(fn):
    torch = pytest.importorskip("torch")  # (the registry tests above need no oracle)
    out = []
    for m in (torch, numbagrad):
        try:
            r = fn(m)
        except Exception as e:  # (compared by type and message)
            out.append((type(e).__name__, str(e)))
        else:
            out.append((str(r.dtype).split(".")[-1], r.tolist()) if hasattr(r, "dtype") else r)
    return out


_ADDR_CASES = {
    "promotes": lambda m: m.addr(m.ones(2, 3, dtype=m.float64), m.ones(2), m.arange(3.0)),
    "int": lambda m: m.addr(
        m.ones(2, 3, dtype=m.int64),
        m.ones(2, dtype=m.int64),
        m.ones(3, dtype=m.int64),
        beta=3,
        alpha=2,
    ),
    "int_float_alpha": lambda m: m.addr(
        m.ones(2, 3, dtype=m.int64), m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64), alpha=2.5
    ),
    "int_vectors_float_input": lambda m: m.addr(
        m.ones(2, 3), m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64)
    ),
    "beta_zero_ignores_nan": lambda m: m.addr(
        m.full((2, 3), float("nan")), m.ones(2), m.ones(3), beta=0
    ),
    "bool": lambda m: m.addr(
        m.zeros(2, 3, dtype=m.bool), m.tensor([True, False]), m.ones(3, dtype=m.bool)
    ),
    "bool_beta_false": lambda m: m.addr(
        m.ones(2, 3, dtype=m.bool), m.ones(2, dtype=m.bool), m.zeros(3, dtype=m.bool), beta=False
    ),
    "bool_float_beta": lambda m: m.addr(
        m.ones(2, 3, dtype=m.bool), m.ones(2, dtype=m.bool), m.ones(3, dtype=m.bool), beta=1.5
    ),
    "scalar_input": lambda m: m.addr(m.tensor(1.0), m.ones(2), m.ones(3)),
    "2d_vector": lambda m: m.addr(m.ones(2, 3), m.ones(2), m.ones(3, 2)),
    "bad_input_shape": lambda m: m.addr(m.ones(4, 3), m.ones(2), m.ones(3)),
    "list_operand": lambda m: m.addr(m.ones(2, 3), [1.0, 2.0], m.ones(3)),
    "method": lambda m: m.ones(2, 3).addr(m.ones(2), m.ones(3), beta=2),
    "in_place": lambda m: m.ones(2, 3).addr_(m.ones(2), m.arange(3.0), alpha=0.5),
}


@pytest.mark.parametrize("case", sorted(_ADDR_CASES))
def test_addr_matches_torch(case):
    expected, got = _both(_ADDR_CASES[case])
    assert got == expected


def test_addr_gradients():
    g = numbagrad.Generator().manual_seed(0)
    args = [
        numbagrad.randn(*s, dtype=numbagrad.float64, generator=g, requires_grad=True)
        for s in ((2, 1), (2,), (3,))
    ]

    def f(x, a, b):
        return numbagrad.addr(x, a, b, beta=0.5, alpha=2.0)

    assert numbagrad.autograd.gradcheck(f, args)
    assert numbagrad.autograd.gradgradcheck(f, args)
