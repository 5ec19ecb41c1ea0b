"""Complex tensors and numbagrad.fft are CPU-only: every way onto the device raises
NotImplementedError naming the reason (docs/gpu.rst), never a silent wrong answer."""

import pytest

import numbagrad

CALLS = [
    lambda: numbagrad.zeros(2, dtype=numbagrad.cfloat, device="cuda"),
    lambda: numbagrad.empty(2, dtype=numbagrad.cdouble, device="cuda"),
    lambda: numbagrad.tensor([1j], device="cuda"),
    lambda: numbagrad.full((2,), 1j, device="cuda"),
    lambda: numbagrad.ones(2, dtype=numbagrad.cfloat).cuda(),
    lambda: numbagrad.ones(2, device="cuda").to(numbagrad.cfloat),
    lambda: numbagrad.ones(2, device="cuda") * 1j,
    lambda: numbagrad.ones(2, device="cuda") + numbagrad.tensor(1j),
    lambda: numbagrad.randn(3, dtype=numbagrad.cfloat, device="cuda"),
    lambda: numbagrad.rand(3, dtype=numbagrad.cfloat, device="cuda"),
]


@pytest.mark.parametrize("k", range(len(CALLS)))
def test_complex_on_cuda_raises(k):
    with pytest.raises(NotImplementedError, match="complex tensors on CUDA"):
        CALLS[k]()


@pytest.mark.parametrize("name", ["fft", "rfft", "ihfft", "fftn", "rfft2"])
def test_fft_on_cuda_raises_naming_it(name):
    x = numbagrad.ones(4, 4, device="cuda")
    with pytest.raises(NotImplementedError, match=rf"numbagrad\.fft\.{name}: FFTs on CUDA"):
        getattr(numbagrad.fft, name)(x)


def test_real_ops_still_run():
    x = numbagrad.ones(3, device="cuda") * 2.0
    assert x.cpu().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("name", ["eig", "eigvals"])
def test_general_eig_on_cuda_raises_naming_it(name):
    x = numbagrad.eye(3, device="cuda") * 2.0  # real input, complex results: CPU-only
    with pytest.raises(NotImplementedError, match=r"linalg\.eig: not implemented for CUDA"):
        getattr(numbagrad.linalg, name)(x)
