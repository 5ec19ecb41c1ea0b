"""The linear-algebra decompositions and solvers on CUDA (``kernels/cuda/linalg.py``, NOTE
[CUDA decompositions]) against the CPU result: values, dtypes, shapes and gradients, batch
dims, float32 and float64, non-contiguous inputs, empty batches, the errors, and one case
per kernel larger than a simulator block (8 threads, 2 blocks: a batch of 3 matrices of
4 x 4 or more).

Eigenvectors and singular vectors are unique only up to sign (and LAPACK's signs are not
Jacobi's), so they are compared up to the sign of each vector.
"""

import numpy as np
import pytest

import numbagrad
from numbagrad.kernels.cuda.array import CudaArray
from numbagrad.kernels.cuda.backend import CUDA

RNG = np.random.default_rng(7)


def _well(shape):
    """Well-conditioned square matrices ``(..., n, n)``."""
    n = shape[-1]
    return RNG.uniform(-1, 1, shape) + 3 * np.eye(n)


def _spd(shape):
    a = RNG.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _both(x, dtype=np.float64, grad=True):
    x = np.asarray(x, dtype)
    return (
        numbagrad.tensor(x, requires_grad=grad),
        numbagrad.tensor(x, device="cuda", requires_grad=grad),
    )


def _close(g, c, rtol, atol):
    assert g.is_cuda and g.shape == c.shape and g.dtype == c.dtype, (g.shape, c.shape, g.dtype)
    np.testing.assert_allclose(g.detach().cpu().numpy(), c.detach().numpy(), rtol=rtol, atol=atol)


def _check(fn, *arrays, dtype=np.float64, grad=True, rtol=1e-9, atol=1e-10):
    """``fn`` on CPU and CUDA tensors of ``arrays``: the same outputs, and the same
    gradients of ``sum(out * w)`` (every output, a fixed random ``w``)."""
    pairs = [_both(a, dtype, grad) for a in arrays]
    out_c = fn(*(p[0] for p in pairs))
    out_g = fn(*(p[1] for p in pairs))
    outs_c = out_c if isinstance(out_c, tuple) else (out_c,)
    outs_g = out_g if isinstance(out_g, tuple) else (out_g,)
    for c, g in zip(outs_c, outs_g, strict=True):
        _close(g, c, rtol, atol)
    if not grad:
        return
    ws = [RNG.standard_normal(tuple(c.shape)) for c in outs_c]
    sum((c * numbagrad.tensor(w, dtype=c.dtype)).sum() for c, w in zip(outs_c, ws)).backward()
    sum(
        (g * numbagrad.tensor(w, dtype=g.dtype, device="cuda")).sum() for g, w in zip(outs_g, ws)
    ).backward()
    for c, g in pairs:
        assert g.grad.is_cuda
        _close(g.grad, c.grad, rtol, atol)


def _same_up_to_sign(g, c, axis, atol=1e-9):
    """Columns (``axis=-2`` reduces rows) or rows of ``g`` equal those of ``c`` up to sign."""
    g = g.detach().cpu().numpy()
    c = c.detach().numpy()
    dots = np.sum(g * c, axis=axis, keepdims=True)
    np.testing.assert_allclose(g * np.sign(dots), c, atol=atol)


# -- LU: solve, inv, det, slogdet --------------------------------------------------------------
def test_inv_and_solve_values_and_gradients():
    _check(numbagrad.linalg.inv, _well((2, 3, 3)))
    # broadcast batch dims both ways, and a vector right-hand side
    _check(numbagrad.linalg.solve, _well((3, 3)), RNG.standard_normal((2, 3, 2)))


def test_inv_solve_float32_noncontiguous_larger_than_a_block():
    a = _well((3, 4, 4))  # 16 entries per matrix, 3 matrices: more than 8 threads, 2 blocks
    _check(lambda x: numbagrad.linalg.inv(x.mT), a, dtype=np.float32, rtol=1e-5, atol=1e-6)
    c, g = _both(a, grad=False)
    b = _both(RNG.standard_normal((3, 2, 4)), grad=False)
    _close(numbagrad.linalg.solve(g.mT, b[1].mT), numbagrad.linalg.solve(c.mT, b[0].mT), 1e-9, 1e-9)


def test_inv_empty_batch_and_singular_error():
    c, g = _both(np.zeros((0, 3, 3)), grad=False)
    _close(numbagrad.linalg.inv(g), numbagrad.linalg.inv(c), 0, 0)
    a = _well((3, 3, 3))
    a[1] = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]  # singular: second pivot 0
    c, g = _both(a, grad=False)
    for fn in (numbagrad.linalg.inv, lambda x: numbagrad.linalg.solve(x, x)):
        with pytest.raises(numbagrad.linalg.LinAlgError) as err_c:
            fn(c)
        with pytest.raises(numbagrad.linalg.LinAlgError) as err_g:
            fn(g)
        assert str(err_g.value) == str(err_c.value)
        assert "(Batch element 1)" in str(err_g.value)


def test_inv_of_a_non_finite_matrix_is_nan():
    a = _well((2, 3, 3))
    a[0, 1, 2] = np.nan
    out = numbagrad.linalg.inv(numbagrad.tensor(a, device="cuda")).cpu().numpy()
    assert np.isnan(out[0]).all()
    np.testing.assert_allclose(out[1], np.linalg.inv(a[1]), rtol=1e-12)


def test_det_slogdet_kernels_at_the_array_level():
    a = np.concatenate([_well((1, 4, 4)), -_well((1, 4, 4)), _well((1, 4, 4))])
    a[2, :, 0] = 0.0  # a singular matrix: det 0, sign 0, log -inf
    det = np.linalg.det(CUDA.from_host(a))  # CudaNDArray.__array_function__: device LU
    assert isinstance(det, CudaArray) and det.dtype == np.float64
    np.testing.assert_allclose(det.to_host(), np.linalg.det(a), rtol=1e-12, atol=1e-12)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        x = a.astype(dtype)
        sign, logabs = np.linalg.slogdet(CUDA.from_host(x))
        assert sign.dtype == logabs.dtype == dtype
        ref_sign, ref_log = np.linalg.slogdet(x)
        np.testing.assert_array_equal(sign.to_host(), ref_sign)
        np.testing.assert_allclose(logabs.to_host(), ref_log, rtol=tol)
    empty = CUDA.from_host(np.zeros((2, 0, 0)))
    np.testing.assert_array_equal(np.linalg.det(empty).to_host(), [1.0, 1.0])


def test_det_slogdet_ops():
    _check(numbagrad.linalg.det, _well((2, 3, 3)))
    _check(lambda x: numbagrad.linalg.slogdet(x)[1], _well((2, 3, 3)))


def test_factor_gradients():
    # each call stops at its first failure while the ops are unchanged (a strict xfail)
    _check(numbagrad.linalg.cholesky, _spd((2, 3, 3)))
    _check(lambda x: tuple(numbagrad.linalg.qr(x)), RNG.standard_normal((2, 4, 3)))
    _check(lambda x: numbagrad.linalg.eigh(x + x.mT)[1].abs(), RNG.standard_normal((2, 3, 3)))
    _check(
        lambda x: tuple(t.abs() for t in numbagrad.linalg.svd(x, full_matrices=False)),
        RNG.standard_normal((2, 3, 3)),
    )


# -- triangular solves -------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_kernel_at_the_array_level(upper, unit):
    a = _well((3, 5, 5))
    b = RNG.standard_normal((2, 1, 5, 3))  # broadcast against a's batch
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri[..., np.arange(5), np.arange(5)] = 1.0
    ref = np.linalg.solve(tri, b)
    # a transposed view of the other triangle: read through its strides
    at = CUDA.from_host(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(0, 2, 1)
    out = CUDA.solve_triangular(at, CUDA.from_host(b), upper, unit)
    assert out.shape == ref.shape and out.dtype == np.float64
    np.testing.assert_allclose(out.to_host(), ref, rtol=1e-10, atol=1e-12)


def test_solve_triangular_op():
    a = np.triu(_well((2, 3, 3)))
    _check(
        lambda x, y: numbagrad.linalg.solve_triangular(x, y, upper=True),
        a,
        RNG.standard_normal((2, 3, 2)),
    )


# -- Cholesky ---------------------------------------------------------------------------------
def test_cholesky_values_float32_upper_noncontiguous():
    c, g = _both(_spd((3, 4, 4)), grad=False)  # larger than a simulator block
    _close(numbagrad.linalg.cholesky(g), numbagrad.linalg.cholesky(c), 1e-12, 1e-12)
    c, g = _both(_spd((2, 3, 3)), np.float32, grad=False)
    up_c, up_g = (numbagrad.linalg.cholesky(x.mT, upper=True) for x in (c, g))
    _close(up_g, up_c, 1e-5, 1e-5)


def test_cholesky_ex_info_and_gradient():
    a = _spd((3, 3, 3))
    a[2, 1, 1] = -5.0  # the leading minor of order 2 of batch element 2
    c, g = _both(a, grad=False)
    rc, rg = numbagrad.linalg.cholesky_ex(c), numbagrad.linalg.cholesky_ex(g)
    assert rg.info.is_cuda and rg.info.dtype is numbagrad.int32
    assert rg.info.cpu().tolist() == rc.info.tolist() == [0, 0, 2]
    _close(rg.L[:2], rc.L[:2], 1e-12, 1e-12)  # (a failed factor is implementation-defined)
    with pytest.raises(numbagrad.linalg.LinAlgError, match=r"\(Batch element 2\).*order 2"):
        numbagrad.linalg.cholesky_ex(g, check_errors=True)
    c, g = _both(_spd((2, 3, 3)))
    for x in (c, g):
        numbagrad.linalg.cholesky_ex(x, upper=True).L.sum().backward()
    _close(g.grad, c.grad, 1e-10, 1e-10)


def test_cholesky_not_positive_definite_error():
    a = _spd((3, 3, 3))
    a[2, 1, 1] = -5.0  # the leading minor of order 2 of batch element 2
    c, g = _both(a, grad=False)
    with pytest.raises(numbagrad.linalg.LinAlgError) as err_c:
        numbagrad.linalg.cholesky(c)
    with pytest.raises(numbagrad.linalg.LinAlgError) as err_g:
        numbagrad.linalg.cholesky(g)
    assert str(err_g.value) == str(err_c.value)
    assert "(Batch element 2)" in str(err_g.value) and "order 2" in str(err_g.value)
    a = _spd((2, 3, 3))
    a[1, 2, 2] = np.nan  # a non-finite matrix: the CPU op's column-by-column path
    c, g = _both(a, grad=False)
    with pytest.raises(numbagrad.linalg.LinAlgError) as err_c:
        numbagrad.linalg.cholesky(c)
    with pytest.raises(numbagrad.linalg.LinAlgError) as err_g:
        numbagrad.linalg.cholesky(g)
    assert str(err_g.value) == str(err_c.value)


# -- QR ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, mode, dtype",
    [
        ((3, 9, 4), "reduced", np.float64),  # 9 rows: more than a simulator block
        ((2, 3, 3), "complete", np.float32),
        ((2, 2, 4), "complete", np.float64),
        ((2, 5, 2), "complete", np.float64),
        ((2, 2, 4), "reduced", np.float32),
    ],
)
def test_qr_values(shape, mode, dtype):
    # Householder as LAPACK's: the same signs, so Q and R equal the CPU's
    tol = 1e-12 if dtype == np.float64 else 1e-5
    c, g = _both(RNG.standard_normal(shape), dtype, grad=False)
    for x, y in zip(numbagrad.linalg.qr(g, mode=mode), numbagrad.linalg.qr(c, mode=mode)):
        _close(x, y, tol, tol)


def test_qr_mode_r_and_noncontiguous():
    c, g = _both(RNG.standard_normal((2, 4, 3)), grad=False)
    _close(numbagrad.linalg.qr(g.mT, mode="r")[1], numbagrad.linalg.qr(c.mT, mode="r")[1], 0, 1e-12)


# -- eigh ------------------------------------------------------------------------------------
@pytest.mark.parametrize("uplo, dtype", [("L", np.float64), ("U", np.float32)])
def test_eigh_values_and_vectors(uplo, dtype):
    a = RNG.standard_normal((3, 4, 4))  # larger than a simulator block; only one triangle read
    tol = 1e-10 if dtype == np.float64 else 1e-4
    c, g = _both(a, dtype, grad=False)
    wc, vc = numbagrad.linalg.eigh(c, UPLO=uplo)
    wg, vg = numbagrad.linalg.eigh(g, UPLO=uplo)
    _close(wg, wc, tol, tol)
    assert vg.is_cuda and vg.dtype == vc.dtype
    _same_up_to_sign(vg, vc, -2, atol=tol)


def test_eigvalsh_repeated_eigenvalues():
    # (eigvalsh's values and gradients are checked by the op database)
    w = numbagrad.linalg.eigvalsh(numbagrad.eye(4, device="cuda") * 2.0)
    np.testing.assert_array_equal(w.cpu().numpy(), [2.0] * 4)


def test_eigh_non_finite_gives_nan():
    a = np.eye(3)
    a[0, 1] = a[1, 0] = np.nan
    w, v = numbagrad.linalg.eigh(numbagrad.tensor(a, device="cuda"))
    assert np.isnan(w.cpu().numpy()).all() and np.isnan(v.cpu().numpy()).all()


# -- SVD -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, full", [((3, 9, 2), False), ((2, 3, 3), True), ((2, 2, 5), True)])
def test_svd_values_and_orthonormal_factors(shape, full):
    a = RNG.standard_normal(shape)
    c, g = _both(a, grad=False)
    uc, sc, vhc = numbagrad.linalg.svd(c, full_matrices=full)
    ug, sg, vhg = numbagrad.linalg.svd(g, full_matrices=full)
    _close(sg, sc, 1e-10, 1e-12)
    assert ug.shape == uc.shape and vhg.shape == vhc.shape and ug.is_cuda and vhg.is_cuda
    k = sc.shape[-1]
    _same_up_to_sign(ug[..., :k], uc[..., :k], -2)
    _same_up_to_sign(vhg[..., :k, :], vhc[..., :k, :], -1)
    u, vh = ug.cpu().numpy(), vhg.cpu().numpy()  # the completed factors are orthonormal
    eye_u = np.broadcast_to(np.eye(u.shape[-1]), (shape[0], u.shape[-1], u.shape[-1]))
    eye_v = np.broadcast_to(np.eye(vh.shape[-2]), (shape[0], vh.shape[-2], vh.shape[-2]))
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye_u, atol=1e-12)
    np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), eye_v, atol=1e-12)


def test_svd_rank_deficient_float32_noncontiguous():
    a = RNG.standard_normal((2, 4, 2)) @ RNG.standard_normal((2, 2, 3))  # rank 2 of 3
    c, g = _both(a, np.float32, grad=False)
    _, sc, _ = numbagrad.linalg.svd(c.mT, full_matrices=False)
    ug, sg, vhg = numbagrad.linalg.svd(g.mT, full_matrices=False)
    _close(sg, sc, 1e-5, 1e-5)
    u = ug.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(
        np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-6
    )
    rec = (u * sg.cpu().numpy()[..., None, :]) @ vhg.cpu().numpy()
    np.testing.assert_allclose(rec, np.swapaxes(a, -1, -2), atol=1e-5)


def test_nuclear_norm_gradient():
    # (svdvals itself is checked by the op database, tests/cuda/test_cuda_opdb.py)
    _check(lambda x: numbagrad.linalg.matrix_norm(x, ord="nuc"), RNG.standard_normal((3, 2)))


def test_svd_non_finite_error():
    a = RNG.standard_normal((2, 3, 3))
    a[1, 0, 0] = np.inf
    with pytest.raises(numbagrad.linalg.LinAlgError, match=r"\(Batch element 1\).*non-finite"):
        numbagrad.linalg.svd(numbagrad.tensor(a, device="cuda"))


def test_backward_of_inv_and_eigvalsh_makes_no_host_copy():
    from numbagrad.kernels.cuda import _driver

    a = numbagrad.tensor(_well((2, 3, 3)), device="cuda", requires_grad=True)
    out = numbagrad.linalg.inv(a).sum() + numbagrad.linalg.eigvalsh(a + a.mT).sum()
    before = _driver.COPIES["d2h"]
    out.backward()
    assert _driver.COPIES["d2h"] == before and a.grad.is_cuda
