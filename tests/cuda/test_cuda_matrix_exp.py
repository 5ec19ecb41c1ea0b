"""``linalg.matrix_exp`` on CUDA (NOTE [CUDA matrix_exp]) against the CPU result: values,
dtypes, shapes and gradients through ``backward``, float32/float64, batches whose matrices
take different squaring counts, non-contiguous inputs, non-finite matrices, empty inputs,
the errors, the device-to-host copies per call, and the fused Pade kernel on more entries
than a simulated launch has threads (2 blocks of 16). Then ``hermitian=True`` on CUDA
(``pinv``, ``matrix_rank``, NumPy's ``svd`` of a CUDA array), on the Jacobi ``eigh``."""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels import PADE13
from numbagrad.kernels.cpu import backend_linalg
from numbagrad.kernels.cuda import _driver
from numbagrad.kernels.cuda.backend import CUDA

RNG = np.random.default_rng(3)


def _copies(before):
    return {k: _driver.COPIES[k] - before[k] for k in before}


def _check(fn, a, dtype=np.float64, rtol=1e-12, atol=1e-13, grad=True):
    """``fn`` on a CPU and a CUDA tensor of ``a``: the same values, dtype and shape, and
    the same gradient of ``sum(out * w)`` for a fixed random ``w``."""
    a = np.asarray(a, dtype)
    c = numbagrad.tensor(a, requires_grad=grad)
    g = numbagrad.tensor(a, device="cuda", requires_grad=grad)
    out_c, out_g = fn(c), fn(g)
    assert out_g.is_cuda and out_g.shape == out_c.shape and out_g.dtype == out_c.dtype
    np.testing.assert_allclose(
        out_g.detach().cpu().numpy(), out_c.detach().numpy(), rtol=rtol, atol=atol
    )
    if not grad:
        return out_g
    w = RNG.standard_normal(tuple(out_c.shape))
    (out_c * numbagrad.tensor(w, dtype=out_c.dtype)).sum().backward()
    (out_g * numbagrad.tensor(w, dtype=out_g.dtype, device="cuda")).sum().backward()
    assert g.grad.is_cuda and g.grad.shape == c.grad.shape and g.grad.dtype == c.grad.dtype
    np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol)
    return out_g


def test_forward_and_backward_float64_with_copy_counts():
    """One matrix below theta_13 (no squaring): 2 device-to-host copies (the 1-norms and
    the LU status); its backward, a matrix_exp of a 2n x 2n block matrix above theta_13,
    3 (plus the 11 values per matrix the squaring rule reads); no host-to-device copy (one
    matrix: its scale is a Python float); no copy proportional to n * n."""
    a = 0.5 * RNG.standard_normal((3, 3))
    w = 4.0 * np.eye(3)  # [[A^T, W], [0, A^T]] has 1-norm > theta_13
    x = numbagrad.tensor(a, device="cuda", requires_grad=True)
    before = dict(_driver.COPIES)
    y = numbagrad.linalg.matrix_exp(x)
    assert _copies(before) == {"h2d": 0, "d2h": 2}
    loss = (y * numbagrad.tensor(w, device="cuda")).sum()
    before = dict(_driver.COPIES)
    loss.backward()
    assert _copies(before) == {"h2d": 0, "d2h": 3}
    xc = numbagrad.tensor(a, requires_grad=True)
    yc = numbagrad.linalg.matrix_exp(xc)
    (yc * numbagrad.tensor(w)).sum().backward()
    assert y.is_cuda and y.dtype == numbagrad.float64 and x.grad.is_cuda
    np.testing.assert_allclose(y.detach().cpu().numpy(), yc.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(x.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-12, atol=1e-13)


def test_batch_of_mixed_squaring_counts_float32_noncontiguous(monkeypatch):
    """A batch (given as a transposed view, so read through strides) whose matrices take
    different squaring counts (0 and several: the same as the CPU's, from the shared rule),
    in float32 (computed in float64, rounded once, as on the CPU)."""
    a = RNG.standard_normal((2, 3, 3))
    a[1] *= 6.0  # above theta_13: scaled and squared
    counts = []
    rule = backend_linalg.squarings_rule

    def recorded(*args):
        counts.append(rule(*args))
        return counts[-1]

    monkeypatch.setattr(backend_linalg, "squarings_rule", recorded)
    t = numbagrad.tensor(a, dtype=numbagrad.float32, device="cuda")
    tc = numbagrad.tensor(a, dtype=numbagrad.float32)
    before = dict(_driver.COPIES)
    out = numbagrad.linalg.matrix_exp(t.mT)
    # the per-matrix divisors (of the norms, of the scaling) and squaring counts go up once
    assert _copies(before) == {"h2d": 3, "d2h": 3}
    ref = numbagrad.linalg.matrix_exp(tc.mT)
    assert len(counts) == 2 and counts[0] == counts[1] > 0  # matrix 1 on CUDA, on the CPU
    assert out.is_cuda and out.dtype == numbagrad.float32 and out.shape == (2, 3, 3)
    np.testing.assert_allclose(out.cpu().numpy(), ref.numpy(), rtol=2e-6, atol=1e-6)


def test_large_nilpotent_block_as_the_cpu():
    """NOTE [matrix_exp scaling]: ``[[A, E], [0, A]]`` with ``||E|| ~ 1e12``: the squaring
    count comes from ``||M^k||^(1/k)`` (and the backward-error correction), as on the CPU
    (a few squarings, not the 2005 rule's ~40), so ``exp(A)`` in the diagonal blocks keeps
    its digits."""
    a = 0.5 * RNG.standard_normal((2, 2))
    m = np.block([[a, 1e12 * RNG.standard_normal((2, 2))], [np.zeros((2, 2)), a]])
    assert 0 < backend_linalg.expm_squarings(m) < 8
    out = _check(numbagrad.linalg.matrix_exp, m, rtol=1e-11, atol=0.0, grad=False)
    ea = numbagrad.linalg.matrix_exp(numbagrad.tensor(a)).numpy()
    np.testing.assert_allclose(out.cpu().numpy()[:2, :2], ea, rtol=1e-12)


def test_method_4d_batch_with_a_nonfinite_matrix():
    """The method form on a 4-d batch (two leading dims) holding a non-finite matrix: that
    matrix gives all NaN, the others their exponentials, as on the CPU."""
    a = 0.3 * RNG.standard_normal((2, 1, 2, 2))
    a[1, 0, 0, 1] = np.inf
    out = _check(lambda x: x.matrix_exp().mT, a, rtol=1e-12, atol=1e-13, grad=False)
    got = out.cpu().numpy()
    assert np.isnan(got[1]).all() and np.isfinite(got[0]).all()


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0), (0, 0)])
def test_empty(shape):
    """Empty batches and 0 x 0 matrices: an empty result of the same shape and dtype, and
    an empty gradient, with no kernel launched."""
    _check(numbagrad.linalg.matrix_exp, np.zeros(shape))


def test_errors_as_the_cpu():
    """A non-square or 1-d input raises the CPU's error before anything runs; an integer
    tensor is refused as on the CPU."""
    for bad, match in [
        (numbagrad.ones(2, 3, device="cuda"), "must be batches of square matrices"),
        (numbagrad.ones(3, device="cuda"), "must have at least 2 dimensions"),
        (numbagrad.ones(2, 2, dtype=numbagrad.int64, device="cuda"), "floating point"),
    ]:
        with pytest.raises(RuntimeError, match=match):
            numbagrad.linalg.matrix_exp(bad)
    with pytest.raises(ValueError, match="contiguous float64"):
        CUDA.expm_pade(*(CUDA.from_host(np.ones((1, 2, 2), np.float32)),) * 3)
    with pytest.raises(ValueError, match="square"):
        CUDA.expm_pade(*(CUDA.from_host(np.ones((1, 2, 3))),) * 3)


def test_pade_kernel_more_entries_than_threads():
    """``expm_pade_kernel`` over 2 x 5 x 5 = 50 entries (a simulated launch has 32 threads,
    so the grid-stride loop runs twice), against the CPU's sums (both take their
    coefficients from ``numbagrad.kernels.PADE13``)."""
    b = PADE13
    a2, a4, a6 = (RNG.standard_normal((2, 5, 5)) for _ in range(3))
    eye = np.eye(5)
    want = (
        b[13] * a6 + b[11] * a4 + b[9] * a2,
        b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye,
        b[12] * a6 + b[10] * a4 + b[8] * a2,
        b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye,
    )
    got = CUDA.expm_pade(*(CUDA.from_host(x) for x in (a2, a4, a6)))
    for g, ref in zip(got, want, strict=True):
        np.testing.assert_allclose(g.to_host(), ref, rtol=1e-15)


# -- hermitian=True on CUDA: pinv, matrix_rank, NumPy's svd (the Jacobi eigh) ---------------
def _sym(shape, rank=None):
    """Symmetric matrices ``(..., n, n)``, of ``rank`` (eigenvalues zeroed) when given."""
    a = RNG.standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)
    if rank is None:
        return a
    w, v = np.linalg.eigh(a)
    w[..., : shape[-1] - rank] = 0.0
    return (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)


def test_pinv_hermitian_forward_and_backward():
    """``pinv(hermitian=True)`` on CUDA equals the CPU's, values and gradients, for a batch
    with a rank-deficient matrix (its zero eigenvalue dropped by the cutoff) read through a
    transposed (non-contiguous) view, in float64 and float32."""
    a = _sym((2, 3, 3))
    a[1] = _sym((3, 3), rank=2)
    _check(lambda x: numbagrad.linalg.pinv(x.mT, hermitian=True), a, rtol=1e-9, atol=1e-10)
    _check(
        lambda x: numbagrad.linalg.pinv(x, hermitian=True, rtol=0.1),
        a[0],
        dtype=np.float32,
        rtol=1e-4,
        atol=1e-5,
        grad=False,
    )


def test_pinv_hermitian_empty_nonfinite_and_errors():
    for shape in [(0, 2, 2), (2, 0, 0)]:
        _check(lambda x: numbagrad.linalg.pinv(x, hermitian=True), np.zeros(shape), grad=False)
    nan = numbagrad.tensor([[1.0, np.nan], [np.nan, 2.0]], device="cuda")
    assert np.isnan(numbagrad.linalg.pinv(nan, hermitian=True).cpu().numpy()).all()
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        numbagrad.linalg.pinv(numbagrad.ones(2, 3, device="cuda"), hermitian=True)


def test_matrix_rank_hermitian():
    a = np.stack([_sym((3, 3), rank=1), _sym((3, 3))])
    g = numbagrad.linalg.matrix_rank(numbagrad.tensor(a, device="cuda"), hermitian=True)
    c = numbagrad.linalg.matrix_rank(numbagrad.tensor(a), hermitian=True)
    assert g.is_cuda and g.dtype == c.dtype and g.tolist() == c.tolist() == [1, 3]


def test_numpy_svd_hermitian_of_a_cuda_array():
    """``np.linalg.svd(cuda_array, hermitian=True)``: NumPy's values, and its vectors up
    to the sign of each (Jacobi's signs are not LAPACK's), the factors reproducing ``a``."""
    a = _sym((2, 3, 3))
    u, s, vh = np.linalg.svd(CUDA.from_host(a), hermitian=True)
    ur, sr, vhr = np.linalg.svd(a, hermitian=True)
    u, s, vh = u.to_host(), s.to_host(), vh.to_host()
    np.testing.assert_allclose(s, sr, rtol=1e-12)
    sign = np.sign(np.sum(u * ur, axis=-2, keepdims=True))
    np.testing.assert_allclose(u * sign, ur, atol=1e-12)
    np.testing.assert_allclose(vh * np.swapaxes(sign, -1, -2), vhr, atol=1e-12)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=1e-12)
    only = np.linalg.svd(CUDA.from_host(a), compute_uv=False, hermitian=True)
    np.testing.assert_allclose(only.to_host(), sr, rtol=1e-12)
