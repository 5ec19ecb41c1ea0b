"""Ratios kept in asv's history: numbagrad's time over PyTorch's and over NumPy-by-hand's.

The ``time_*`` benchmarks of the other modules give each backend's absolute time, but asv
runs them at different moments, so on a shared machine their quotient drifts with the load.
Here each ``track_`` benchmark times numbagrad and the reference in one process, interleaved
round-robin (as ``run_ratios.py`` does), and records the quotient of the medians: the figure
the performance targets are stated in (below 1 means numbagrad is faster). ``asv compare``
and the published dashboard then follow the ratio from commit to commit.
"""

import gc
import statistics
import time

from . import bench_conv, bench_eager, bench_fft, bench_function, bench_nn_rnn, bench_transforms
from ._common import load_backend

# name -> (workload class, its timed method); the small and medium workloads only: the large
# ones take seconds per sample and their ratios are in run_ratios.py --large
WORKLOADS = {
    "chain20": (bench_eager.ChainSmall, "time_chain"),
    "function16": (bench_function.FunctionCall, "time_apply_backward"),
    "jacrev256": (bench_transforms.JacrevTanh, "time_jacrev"),
    "per_example512": (bench_transforms.PerExampleGrads, "time_per_example"),
    "hessian64": (bench_transforms.HessianRosenbrock, "time_hessian"),
    "gru_train": (bench_nn_rnn.GRUTrainStep, "time_train_step"),
    "lstm_train": (bench_nn_rnn.LSTMTrainStep, "time_train_step"),
    "encoder_layer_train": (bench_nn_rnn.EncoderLayerTrainStep, "time_train_step"),
    "mnist_cnn_step": (bench_conv.MnistStep, "time_step"),
    "conv1d_bn_step": (bench_conv.Conv1dBNStep, "time_step"),
    "fno_step": (bench_fft.FNOStep, "time_step"),
}

REPEATS = 7  # interleaved samples per backend
MIN_SAMPLE = 0.02  # seconds: calls per sample are raised until one sample lasts this long


def _calls_per_sample(fn):
    """As timeit's autorange: the number of calls that lasts at least ``MIN_SAMPLE``."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= MIN_SAMPLE or n >= 1 << 16:
            return n
        n *= 2


def interleaved_ratio(workload, reference):
    """Median time of numbagrad over that of ``reference`` for one workload, one process."""
    cls, method = WORKLOADS[workload]
    runs = {}
    for backend in ("numbagrad", reference):
        load_backend(backend)  # NotImplementedError (asv's skip) when not importable
        inst = cls()
        inst.setup(backend)  # builds the inputs and warms the JIT once per process
        fn = getattr(inst, method)
        runs[backend] = lambda fn=fn, b=backend: fn(b)
    numbers = {b: _calls_per_sample(fn) for b, fn in runs.items()}
    samples = {b: [] for b in runs}
    order = list(runs)
    for r in range(REPEATS):
        for b in order[r % 2 :] + order[: r % 2]:
            fn, n = runs[b], numbers[b]
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                samples[b].append((time.perf_counter() - t0) / n)
            finally:
                gc.enable()
    return statistics.median(samples["numbagrad"]) / statistics.median(samples[reference])


class Ratios:
    """numbagrad / reference, medians of interleaved samples in one process."""

    params = [list(WORKLOADS), ["torch", "numpy"]]
    param_names = ["workload", "reference"]
    unit = "ratio"
    timeout = 300.0

    def setup(self, workload, reference):
        # a workload with no version for ``reference`` (no NumPy-by-hand recurrent layer)
        # raises NotImplementedError here, in setup, which asv reports as a skip
        cls, _ = WORKLOADS[workload]
        load_backend(reference)
        cls().setup(reference)

    def track_ratio(self, workload, reference):
        """numbagrad's median time divided by the reference's (below 1: numbagrad faster)."""
        return interleaved_ratio(workload, reference)
