"""The CUDA suite: run under the CUDA simulator in its own process (``tests/test_cuda.py``
starts it with ``NUMBA_ENABLE_CUDASIM=1``), or as is on a machine with a GPU. Elsewhere (the
main ``make test`` process without a GPU, or without numba-cuda) it is not collected."""

import importlib.util

collect_ignore_glob: list = []
if importlib.util.find_spec("numba_cuda") is None:
    collect_ignore_glob = ["test_*.py"]  # numba-cuda is not installed
else:
    import numbagrad

    if not numbagrad.cuda.is_available():
        collect_ignore_glob = ["test_*.py"]  # no GPU and no simulator: see tests/test_cuda.py
