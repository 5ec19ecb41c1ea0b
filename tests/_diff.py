"""The harness of the differential tests against PyTorch (``test_*_diff.py``).

A *case* is a function of the module (``numbagrad`` or ``torch``): it builds its inputs
from a seeded NumPy generator (``t``), runs the code under test the way a user would with
``import numbagrad as torch``, and returns a tree (lists, tuples, dicts) of tensors and
plain values. ``check`` runs it in both modules; the results must be the same tree with the
same shapes and dtypes and close values. Where PyTorch raises, numbagrad must raise an
exception of the same builtin type (an escaped tracer never counts: it is an internal
failure, not the error PyTorch raises).

A test module keeps its cases in a ``Cases`` registry; a known discrepancy is registered
with a one-line ``xfail`` reason and runs as ``xfail(strict=True)``, so that fixing it
turns the test red until the mark is removed.

Import this module after ``pytest.importorskip("torch")``. Without PyTorch, importing it
skips (doctest collection imports every module under ``tests/``).
"""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-10, 1e-12  # float64
RTOL32, ATOL32 = 1e-5, 1e-6  # float32


def t(mod, *shape, k=0, seed=0, dtype=None):
    """A tensor of ``mod`` with standard normal entries, the same for both modules
    (float64 unless ``dtype`` is given)."""
    rng = np.random.default_rng(1000 * seed + k)
    return mod.tensor(rng.standard_normal(shape), dtype=dtype or mod.float64)


def dtype_name(d):
    """A dtype as a module-independent string (``'float64'``)."""
    return str(d).rsplit(".", 1)[-1]


def to_np(x):
    """The tree ``x`` with tensors as NumPy arrays, tuples as lists and dtypes as names."""
    if isinstance(x, dict):
        return {key: to_np(v) for key, v in x.items()}
    if isinstance(x, (tuple, list)):
        return [to_np(v) for v in x]
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():  # (a tangent torch knows to be zero has no storage)
            return np.zeros(x.shape, dtype=torch.empty((), dtype=x.dtype).numpy().dtype)
        return x.detach().numpy().copy()
    if isinstance(x, numbagrad.Tensor):
        return np.array(x.detach().numpy())
    if isinstance(x, (torch.dtype, numbagrad.dtype)):
        return dtype_name(x)
    return x


def assert_same(a, b, path="out", rtol=RTOL, atol=ATOL):
    """``a`` (numbagrad's ``to_np`` tree) equals ``b`` (torch's): the same structure,
    arrays of the same shape and dtype with close values, Python floats close, and every
    other leaf of the same type and equal."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), f"{path}: keys {a!r} vs {b!r}"
        for key in b:
            assert_same(a[key], b[key], f"{path}[{key!r}]", rtol, atol)
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), f"{path}: structure {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]", rtol, atol)
    elif isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray), f"{path}: {type(a).__name__} vs an array"
        assert a.shape == b.shape, f"{path}: shape {a.shape} vs {b.shape}"
        assert a.dtype == b.dtype, f"{path}: dtype {a.dtype} vs {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(b, float):
        assert type(a) is float, f"{path}: {a!r} vs {b!r}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)
    else:
        assert type(a) is type(b) and a == b, f"{path}: {a!r} vs {b!r}"


def builtin_base(exc_type):
    """The first builtin class in ``exc_type``'s MRO (what the two modules must share)."""
    for cls in exc_type.__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def raises(fn):
    """The name of the builtin base of what ``fn()`` raises, or None: for cases that check
    that a raise happens at a particular point (when a ``vjp_fn`` is called, say)."""
    try:
        fn()
    except Exception as e:
        return builtin_base(type(e)).__name__
    return None


def check(case, rtol=RTOL, atol=ATOL):
    """Run ``case`` in torch and numbagrad and compare (see the module docstring)."""
    try:
        want, t_err = to_np(case(torch)), None
    except Exception as e:  # compared below
        t_err = e
    if t_err is not None:
        with pytest.raises(builtin_base(type(t_err))) as info:
            case(numbagrad)
        assert type(info.value).__name__ != "EscapedTracerError", info.value
        return
    got = to_np(case(numbagrad))  # an exception here is the failure itself
    assert_same(got, want, rtol=rtol, atol=atol)


class Cases:
    """A registry of cases by name, each with its ``xfail`` reason (or None) and the
    tolerances ``check`` compares it at."""

    def __init__(self):
        self._cases = {}

    def __getitem__(self, name):
        return self._cases[name][0]

    def __len__(self):
        return len(self._cases)

    def register(self, name, fn, xfail=None, rtol=RTOL, atol=ATOL):
        assert name not in self._cases, f"two cases named {name!r}"
        self._cases[name] = (fn, xfail, (rtol, atol))
        return fn

    def case(self, xfail=None, rtol=RTOL, atol=ATOL):
        """A decorator registering a case under its function's name."""
        return lambda fn: self.register(fn.__name__, fn, xfail, rtol, atol)

    def params(self):
        """``pytest.param(case, (rtol, atol))`` for each case, xfail ones marked."""
        out = []
        for name, (fn, reason, tol) in self._cases.items():
            marks = () if reason is None else pytest.mark.xfail(strict=True, reason=reason)
            out.append(pytest.param(fn, tol, id=name, marks=marks))
        return out
