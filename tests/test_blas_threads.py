"""NOTE [BLAS threads] (``numbagrad/kernels/cpu/blas.py``): products above OpenBLAS's
one-thread limit run with BLAS at one thread, large ones cut into pieces on numbagrad's
threads; the results are NumPy's, and BLAS's thread count is restored afterwards."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.kernels.cpu import blas, threads

rng = np.random.default_rng(11)

needs_openblas = pytest.mark.skipif(
    not blas.blas_threads_governed(),
    reason="NumPy's BLAS is not an OpenBLAS numbagrad can find, or OPENBLAS_NUM_THREADS is set",
)


def _m(*shape, dtype=np.float32):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.fixture
def two_threads(monkeypatch):
    """numbagrad's thread count at 2 (the split path) whatever the machine, with a spy on
    the pieces run and the BLAS thread count they ran under."""
    seen = []
    run_dynamic = threads.run_dynamic

    def spy(fn, count):
        api = blas._blas()
        seen.append((count, api[1]() if api else None))
        return run_dynamic(fn, count)

    monkeypatch.setattr(threads, "N_THREADS", 2)
    monkeypatch.setattr(threads, "run_dynamic", spy)
    return seen


SHAPES = [
    ((64, 288), (288, 2048)),  # wide: cut along n
    ((2048, 300), (300, 40)),  # tall: cut along m
    ((512, 4000), (4000, 50)),  # a long reduction (a weight gradient)
]


@needs_openblas
@pytest.mark.parametrize(("sa", "sb"), SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_split_products_match_numpy(two_threads, sa, sb, dtype):
    a, b = _m(*sa, dtype=dtype), _m(*sb, dtype=dtype)
    before = blas._blas()[1]()
    out = blas.matmul(a, b)
    assert blas._blas()[1]() == before  # BLAS's own setting back
    assert out.shape == (sa[0], sb[1]) and out.dtype == a.dtype
    tol = 1e-5 if np.dtype(dtype).itemsize <= 8 and dtype != np.float64 else 1e-12
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=tol, atol=tol * sa[1])
    assert two_threads and two_threads[0][0] >= 2  # it was cut into pieces
    assert two_threads[0][1] == 1  # ...each run with BLAS at one thread


@needs_openblas
def test_transposed_operands_and_batches(two_threads):
    a = _m(300, 64).T  # F-ordered views, as a weight gradient's operands
    b = _m(36 * 64, 300).T
    np.testing.assert_allclose(blas.matmul(a, b), a @ b, rtol=1e-5, atol=1e-3)
    a3, b3 = _m(8, 200, 300, dtype=np.float64), _m(8, 300, 200, dtype=np.float64)
    np.testing.assert_allclose(blas.matmul(a3, b3), a3 @ b3, rtol=1e-12)
    assert len(two_threads) == 2
    # broadcast batch dims: one call at one BLAS thread, not cut
    a4, b4 = _m(4, 1, 100, 300), _m(3, 300, 100)
    np.testing.assert_allclose(blas.matmul(a4, b4), a4 @ b4, rtol=1e-5, atol=1e-3)
    assert len(two_threads) == 2


def test_small_mixed_and_bad_products_are_numpys():
    a, b = _m(4, 5), _m(5, 3)
    np.testing.assert_array_equal(blas.matmul(a, b), a @ b)
    ai = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(blas.matmul(ai, ai.T), ai @ ai.T)
    v = _m(5)
    np.testing.assert_array_equal(blas.matmul(a, v), a @ v)
    with pytest.raises(ValueError):
        blas.matmul(_m(700, 600), _m(500, 700))
    with pytest.raises(ValueError):
        blas.matmul(_m(2, 700, 600), _m(3, 600, 700))


@needs_openblas
def test_products_from_several_threads_restore_blas(two_threads):
    before = blas._blas()[1]()
    a, b = _m(64, 288), _m(288, 4096)
    want = a @ b
    bad = []

    def work():
        for _ in range(5):
            if not np.allclose(blas.matmul(a, b), want, rtol=1e-5, atol=1e-3):
                bad.append(1)

    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad
    assert blas._blas()[1]() == before and blas._active[0] == 0


def test_run_dynamic_runs_each_piece_once_and_raises():
    done = []
    lock = threading.Lock()

    def fn(i):
        with lock:
            done.append(i)

    threads.run_dynamic(fn, 37)
    assert sorted(done) == list(range(37))

    def boom(i):
        if i == 3:
            raise ZeroDivisionError("piece 3")

    with pytest.raises(ZeroDivisionError, match="piece 3"):
        threads.run_dynamic(boom, 10)


def test_training_products_use_the_policy(two_threads):
    if not blas.blas_threads_governed():
        pytest.skip("BLAS not governed here")
    lin = ng.nn.Linear(4096, 256)
    x = ng.tensor(_m(64, 4096))
    lin(x).sum().backward()
    assert len(two_threads) >= 2  # forward and the weight gradient at least
    w = lin.weight.detach().numpy()
    gw = np.ones((64, 256), np.float32).T @ x.numpy()
    np.testing.assert_allclose(lin.weight.grad.numpy(), gw, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        lin(x).detach().numpy(), x.numpy() @ w.T + lin.bias.detach().numpy(), rtol=1e-4, atol=1e-4
    )


def _child(code, **env):
    full = dict(os.environ)
    for k in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS"):
        full.pop(k, None)
    full.update(env)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )


def test_user_blas_setting_wins_until_set_num_threads():
    code = (
        "import numbagrad as ng; from numbagrad.kernels.cpu import blas; "
        "found = blas._blas() is not None; "
        "print(found, blas.blas_threads_governed()); ng.set_num_threads(1); "
        "print(found, blas.blas_threads_governed())"
    )
    r = _child(code, OPENBLAS_NUM_THREADS="2")
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.split("\n")[:2]
    found = first.split()[0] == "True"
    assert first.split()[1] == "False"  # the user's OPENBLAS_NUM_THREADS: BLAS left alone
    assert second.split()[1] == str(found)  # an explicit set_num_threads takes over
    r = _child("from numbagrad.kernels.cpu import blas; print(blas.blas_threads_governed())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(blas._blas() is not None)  # no setting: numbagrad chooses


@needs_openblas
def test_batches_with_one_matrix_and_unfoldable_batches(two_threads):
    w = _m(64, 96)
    x = _m(16, 96, 700)  # a 1x1 convolution: one matrix against every item
    np.testing.assert_allclose(blas.matmul(w, x), w @ x, rtol=1e-5, atol=1e-3)
    xt = _m(700, 16, 96).transpose(1, 2, 0)  # items that are not C-contiguous
    np.testing.assert_allclose(
        blas.matmul(xt.transpose(0, 2, 1), w.T), xt.transpose(0, 2, 1) @ w.T, rtol=1e-5, atol=1e-3
    )
    assert len(two_threads) == 2
    a4, b4 = _m(2, 3, 100, 300), _m(2, 3, 300, 120)  # two batch dims fold into one
    np.testing.assert_allclose(blas.matmul(a4, b4), a4 @ b4, rtol=1e-5, atol=1e-3)
    assert len(two_threads) == 3
    a5 = _m(3, 300, 2, 100).transpose(2, 0, 3, 1)  # batch dims that cannot fold: one call
    b5 = _m(2, 3, 300, 120)
    np.testing.assert_allclose(blas.matmul(a5, b5), a5 @ b5, rtol=1e-5, atol=1e-3)
    assert len(two_threads) == 3
