"""``use_deterministic_algorithms`` on CUDA (NOTE [Deterministic algorithms] in
``numbagrad/kernels/determinism.py``): the float atomic accumulation into repeated indices
raises PyTorch's error with the switch on, warns with ``warn_only``, and runs otherwise;
integer accumulation (exact in any order) always runs."""

import pytest

import numbagrad


def _accumulate(dtype):
    x = numbagrad.zeros(3, dtype=dtype, device="cuda")
    i = numbagrad.tensor([0, 0, 2], device="cuda")
    return x.index_put((i,), numbagrad.ones(3, dtype=dtype, device="cuda"), accumulate=True)


def test_float_atomic_accumulation_alerts():
    assert _accumulate(numbagrad.float32).cpu().tolist() == [2.0, 0.0, 1.0]
    try:
        numbagrad.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
            _accumulate(numbagrad.float32)
        assert _accumulate(numbagrad.int64).cpu().tolist() == [2, 0, 1]
        numbagrad.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="does not have a deterministic implementation"):
            out = _accumulate(numbagrad.float64)
        assert out.cpu().tolist() == [2.0, 0.0, 1.0]
    finally:
        numbagrad.use_deterministic_algorithms(False)
