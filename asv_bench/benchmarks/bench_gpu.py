"""The GPU workload: ``sum(tanh(x*w+b) * sigmoid(x))`` on CUDA (skipped without a GPU).

``bench_large.TanhSigmoid`` on the device: 10,000,000 float64, x, w and b requiring grad,
forward + backward, synchronised before the clock stops.

- ``TanhSigmoidCuda.time_forward_backward``: numbagrad, and PyTorch CUDA when a CUDA build
  of torch is installed (each backend skips, asv's ``NotImplementedError``, where it has no
  GPU).
- ``TanhSigmoidCuda.track_bandwidth_fraction``: numbagrad's achieved bandwidth over the
  device's peak (target: at least 0.6). The bytes are those one fused pass must move: x, w
  and b read once and their three gradients written once, 6 x 8 bytes per element; the
  peak is twice the memory clock times the bus width, from the device's attributes.
"""

import os
import time

from ._common import cached, load_backend
from .bench_large import tanh_sigmoid_inputs

N = 10_000_000
FUSED_BYTES = 6 * 8 * N


def _cuda_module(name):
    """``numbagrad`` or ``torch``, or ``NotImplementedError`` (asv's skip) without a GPU."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        raise NotImplementedError("the CUDA simulator is on: these sizes need a real GPU")
    mod = load_backend(name)
    if not mod.cuda.is_available():
        raise NotImplementedError(f"{name}.cuda.is_available() is False: no GPU to run on")
    return mod


def _build(mod):
    x, w, b = (mod.tensor(a, device="cuda", requires_grad=True) for a in tanh_sigmoid_inputs(N))

    def run():
        x.grad = w.grad = b.grad = None
        (mod.tanh(x * w + b) * mod.sigmoid(x)).sum().backward()
        mod.cuda.synchronize()
        return x.grad, w.grad, b.grad

    run()  # compile and warm up
    return run


def peak_bandwidth():
    """The current device's peak memory bandwidth in bytes per second (DDR: two transfers
    per memory clock, over the bus width)."""
    from numba import cuda  # (the benchmark's own query; numbagrad keeps numba.cuda private)

    dev = cuda.get_current_device()
    try:
        clock_khz, bus_bits = dev.MEMORY_CLOCK_RATE, dev.GLOBAL_MEMORY_BUS_WIDTH
    except AttributeError as exc:  # a driver that no longer reports them
        raise NotImplementedError(f"the device does not report its memory clock: {exc}") from exc
    return 2.0 * clock_khz * 1e3 * bus_bits / 8.0


class TanhSigmoidCuda:
    """Forward + backward over 10M float64 on the GPU."""

    params = [["numbagrad", "torch"]]
    param_names = ["backend"]
    number = 1
    repeat = (3, 10, 60.0)
    timeout = 600.0

    def setup(self, backend):
        self.run = cached(("TanhSigmoidCuda", backend), lambda: _build(_cuda_module(backend)))

    def time_forward_backward(self, backend):
        """Forward + backward over 10M float64 on the device."""
        return self.run()

    def track_bandwidth_fraction(self, backend):
        """Achieved bandwidth (fused-pass bytes / best of 5 times) over the device's peak."""
        if backend != "numbagrad":
            raise NotImplementedError("the bandwidth target is numbagrad's")
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            self.run()
            best = min(best, time.perf_counter() - t0)
        return FUSED_BYTES / best / peak_bandwidth()

    track_bandwidth_fraction.unit = "fraction of peak"
