"""numbagrad.compile's generated CUDA kernels compile to PTX for sm_90 without a GPU
(``cuda.compile_ptx``: the simulator, which runs them in tests/cuda/test_compile_cuda.py,
does no type checking). The graphs come from a CPU trace: a CUDA call traces the same
primitives, and the kernels' source depends only on ranks, dtypes and broadcasting."""

import pytest
from test_cuda import _run, needs_numba_cuda

PTX_SCRIPT = r"""
import os, sys, tempfile
os.environ["NUMBAGRAD_CACHE_DIR"] = tempfile.mkdtemp()
import numba.cuda.dispatcher as dispatcher
import numpy as np
from numba import float64, from_dtype, int64
from numba import cuda

class _SM90:  # device functions ask the driver for the current device's CC; no GPU here
    compute_capability = (9, 0)
dispatcher.get_current_device = lambda: _SM90()

import numbagrad as ng
from numbagrad._compile import codegen, codegen_cuda
from numbagrad._compile.lower import SCALAR
from numbagrad._compile.trace import trace

def f(x, w, b):
    # broadcasting (a row, a column), full and partial sums, every math family of the
    # scalar namespace, comparisons and bools, whole and fractional powers
    z = x * w + b
    y = (ng.tanh(z) * ng.sigmoid(x) + ng.exp(-z * z) + ng.log1p(ng.abs(z)) + ng.sin(x)
         * ng.cos(w) + ng.sqrt(ng.relu(z) + 1) + ng.rsqrt(x * x + 1) + ng.erf(z)
         + ng.softplus(z) + ng.maximum(z, x) - ng.minimum(z, w) + z ** 3 + ng.abs(z) ** 0.5
         + ng.where(z > 0, z, 0.5 * z) + ng.floor(z) + ng.atan2(z, x) + ng.expm1(-ng.abs(z))
         + ng.log(ng.abs(z) + 1) + ng.sign(z) + ng.hypot(z, x))
    m = ((z > 0) & (x < 1)) | (w == 0)
    return y.sum() + (y * m).sum(0).pow(2).sum() + y.mean(1, keepdim=True).sum()

n = 0
for dtype in (np.float64, np.float32):
    rng = np.random.default_rng(0)
    args = [ng.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
            for s in ((3, 4), (4,), (3, 1))]
    tr = trace(f, args, {}, [0, 1, 2])
    for g in (tr.fwd, tr.bwd):
        glue, ns, text, sigs = codegen_cuda.generate(g.inputs, g.eqns, g.outputs)
        mod, path = codegen._load(codegen_cuda.module_source(text))
        assert sigs, "no fused kernel"
        for name, sig in sigs.items():
            types = [
                int64 if s == "i64" else float64 if s == "f64" else from_dtype(np.dtype(s))[::1]
                for s in sig
            ]
            ptx, _ = cuda.compile_ptx(getattr(mod, name).py_func, tuple(types), cc=(9, 0))
            assert ".target sm_90" in ptx, name
            n += 1
print("compiled", n)
"""


@needs_numba_cuda
def test_generated_cuda_kernels_compile_to_ptx_for_sm90():
    probe = _run(
        "from numba import cuda, float64\n"
        "def k(a):\n"
        "    a[0] = 1\n"
        "cuda.compile_ptx(k, (float64[::1],), cc=(9, 0))\n"
    )
    if probe.returncode != 0:
        pytest.skip("NVVM is not available: " + probe.stderr.strip().splitlines()[-1])
    r = _run(PTX_SCRIPT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("compiled") and int(r.stdout.split()[1]) >= 4, r.stdout
