"""The op database on CUDA: every ``op_db`` entry with ``supports_cuda=True`` runs on CUDA
tensors and on CPU tensors, and the two agree.

For each entry, on its first sample input with at most ``MAX_ELEMENTS`` elements in every
array (the simulator runs each GPU thread as a Python thread, so larger samples and more
samples only cost time; ``MAX_SAMPLES`` is kept at 1 so the whole file stays well under
90 s under the simulator):

* every output is on the CUDA device with the CPU output's shape and dtype, and the same
  values (NaNs in the same places);
* for differentiable entries, in float64: the gradients of ``sum(out * w)`` (summed over the
  floating outputs, ``w`` a fixed random tensor per output) with respect to every floating
  input are on the device and equal the CPU's; an input the CPU gives no gradient gets none.

Integer and boolean arrays in a sample (indices, masks) become CUDA tensors too; Python
scalars, shapes and dims stay as they are.
"""

import pathlib
import sys

import numpy as np
import pytest

import numbagrad

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))  # tests/: the op database

from _opdb import op_db

MAX_ELEMENTS = 64
MAX_SAMPLES = 1
if not numbagrad.cuda.is_available() or numbagrad.cuda.get_device_name() != "CUDA simulator":
    # on a real GPU every sample runs, at its full size (a launch costs microseconds there)
    MAX_ELEMENTS = MAX_SAMPLES = None
RTOL, ATOL = 1e-6, 1e-8

cuda_ops = [info for info in op_db if info.supports_cuda]


def _arrays(obj):
    """Every NumPy array inside a sample's (nested) arguments."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for o in obj for a in _arrays(o)]
    if isinstance(obj, dict):
        return [a for o in obj.values() for a in _arrays(o)]
    return []


def _samples(info):
    """The first ``MAX_SAMPLES`` samples whose arrays all have at most ``MAX_ELEMENTS``."""
    small = [
        s
        for s in info.sample_inputs()
        if MAX_ELEMENTS is None or all(a.size <= MAX_ELEMENTS for a in _arrays((s.args, s.kwargs)))
    ]
    return small[:MAX_SAMPLES]


def _bind(obj, device, leaves, requires_grad):
    """The sample structure with float arrays as (leaf) tensors on ``device`` appended to
    ``leaves`` and other arrays as tensors on ``device``."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            leaves.append(numbagrad.tensor(obj, device=device, requires_grad=requires_grad))
            return leaves[-1]
        return numbagrad.tensor(obj, device=device)
    if isinstance(obj, list):
        return [_bind(o, device, leaves, requires_grad) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_bind(o, device, leaves, requires_grad) for o in obj)
    if isinstance(obj, dict):
        return {k: _bind(v, device, leaves, requires_grad) for k, v in obj.items()}
    return obj


def _run(info, sample, device):
    """Outputs and input gradients of one sample on ``device``."""
    leaves = []
    grad = info.supports_grad
    args, kwargs = _bind((sample.args, sample.kwargs), device, leaves, grad)
    out = info.op(numbagrad, *args, **kwargs)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    floats = [o for o in outs if o.dtype in (numbagrad.float32, numbagrad.float64)]
    grads = []
    if grad and any(o.requires_grad for o in floats):
        rng = np.random.default_rng(0)
        total = 0
        for o in floats:
            w = numbagrad.tensor(rng.standard_normal(tuple(o.shape)), device=device)
            total = total + (o * w).sum()
        grads = numbagrad.autograd.grad(total, leaves, allow_unused=True)
    return outs, grads


@pytest.mark.parametrize("info", cuda_ops, ids=lambda info: info.name)
def test_op_on_cuda_matches_cpu(info):
    samples = _samples(info)
    assert samples, f"{info.name}: no sample with at most {MAX_ELEMENTS} elements per array"
    for sample in samples:
        outs_c, grads_c = _run(info, sample, "cpu")
        outs_g, grads_g = _run(info, sample, "cuda")
        assert len(outs_g) == len(outs_c), sample
        for k, (c, g) in enumerate(zip(outs_c, outs_g, strict=True)):
            where = f"{sample}, output {k}"
            assert g.is_cuda, where
            assert g.shape == c.shape and g.dtype == c.dtype, (where, g.shape, g.dtype)
            np.testing.assert_allclose(
                g.detach().cpu().numpy(),
                c.detach().numpy(),
                rtol=RTOL,
                atol=ATOL,
                equal_nan=True,
                err_msg=where,
            )
        assert len(grads_g) == len(grads_c), sample
        for k, (c, g) in enumerate(zip(grads_c, grads_g, strict=True)):
            where = f"{sample}, gradient of input {k}"
            assert (c is None) == (g is None), where
            if c is not None:
                assert g.is_cuda and g.shape == c.shape and g.dtype == c.dtype, where
                np.testing.assert_allclose(
                    g.cpu().numpy(), c.numpy(), rtol=RTOL, atol=ATOL, err_msg=where
                )


def test_every_cuda_entry_has_a_small_sample():
    assert len(cuda_ops) > 0
    missing = [info.name for info in cuda_ops if not _samples(info)]
    assert not missing, f"supports_cuda entries without a small sample: {missing}"
