"""NOTE [Backend protocol] (``numbagrad/kernels/interface.py``): the primitives that used to
branch on the backend's name (linalg, special functions, FFTs) run on any object with the
protocol's methods. ``Reference`` is a third backend, the CPU's methods under another name:
each primitive's ``impl`` gives the CPU's answer on it, through the protocol's methods."""

import numpy as np
import pytest

from numbagrad.kernels import backend
from numbagrad.kernels.interface import Backend
from numbagrad.ops import linalg_decomp as L
from numbagrad.ops import special as S
from numbagrad.ops import spectral as SP

CPU = backend("cpu")
RNG = np.random.default_rng(0)


class Reference:
    """A backend named "reference" that forwards every protocol member to the CPU's and
    records the methods called."""

    name = "reference"

    def __init__(self):
        self.calls = []

    def __getattr__(self, attr):
        if attr not in Backend.__dict__:  # only the protocol's members
            raise AttributeError(attr)
        value = getattr(CPU, attr)
        if not callable(value) or isinstance(value, type):
            return value  # xp, math, fft, the thresholds

        def method(*args, **kwargs):
            self.calls.append(attr)
            return value(*args, **kwargs)

        return method


def _spd(n=4, batch=(2,)):
    a = RNG.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


A = RNG.standard_normal((2, 4, 4))
B = RNG.standard_normal((2, 4, 3))
X = RNG.uniform(0.5, 3.0, (3, 5))

CASES = [
    ("inv", L.LinalgInv, (A,), {}),
    ("solve", L.LinalgSolve, (A, B), {}),
    ("solve_triangular", L.LinalgSolveTriangular, (A, B), {"upper": True, "unitriangular": False}),
    ("cholesky", L.LinalgCholesky, (_spd(),), {}),
    ("det", L.LinalgDet, (A,), {}),
    ("slogdet", L.LinalgSlogdet, (A,), {}),
    ("eigh", L.LinalgEigh, (_spd(),), {"uplo": "L"}),
    ("svd", L.LinalgSvd, (A,), {"full_matrices": False}),
    ("qr", L.LinalgQr, (A,), {"mode": "reduced"}),
    ("qr", L.LinalgQr, (A,), {"mode": "r"}),
    ("matrix_exp", L.LinalgMatrixExp, (0.3 * A,), {}),
    ("eigh", L.LinalgPinv, (_spd(),), {"atol": 0.0, "rtol": 1e-7, "hermitian": True}),
    ("svd", L.LinalgPinv, (A,), {"atol": 0.0, "rtol": 1e-7, "hermitian": False}),
    ("special_unary", S.Digamma, (X,), {}),
    ("special_unary", S.Polygamma, (X,), {"n": 2}),
    ("special_binary", S.Gammainc, (X, X[::-1]), {}),
    ("special_binary", S.Zeta, (X + 1.0, X), {}),
    ("special_binary", S.Xlogy, (X, X[::-1]), {}),
    ("special_binary", S.Xlog1py, (X, X[::-1]), {}),
]


@pytest.mark.parametrize(("method", "prim", "args", "params"), CASES)
def test_primitives_run_on_a_third_backend(method, prim, args, params):
    ref = Reference()
    got = prim.impl(ref, *args, **params)
    want = prim.impl(CPU, *args, **params)
    assert method in ref.calls
    got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_fft_runs_on_the_backends_fft_namespace():
    x = RNG.standard_normal(8).astype(np.complex128)
    got = SP.FftC2C.impl(Reference(), x, dims=(0,), norm="backward", forward=True)
    np.testing.assert_allclose(got, np.fft.fft(x))


def test_a_backend_without_ffts_names_the_op():
    class NoFft(Reference):
        name = "npu"
        fft = None

    x = np.zeros(4, np.complex64)
    with pytest.raises(NotImplementedError, match=r"numbagrad\.fft\.fft: FFTs on NPU"):
        SP.FftC2C.impl(NoFft(), x, dims=(0,), norm="backward", forward=True)


def test_det_fused_vjp_is_the_backends():
    import numbagrad

    class Ctx:
        be = Reference()

        @staticmethod
        def saved_arrays():
            return A, np.linalg.det(A)

    got = L.LinalgDet.fused_vjp(Ctx, np.ones(2))
    assert Ctx.be.calls == ["det_backward"]
    a = numbagrad.tensor(A, requires_grad=True)
    numbagrad.linalg.det(a).sum().backward()
    np.testing.assert_allclose(got, a.grad.numpy(), rtol=1e-10)
