# Doctest collection (``pytest --doctest-modules numbagrad``) imports every module: the
# kernel modules here import numba.cuda, so without numba-cuda they are not collected.
import importlib.util

collect_ignore_glob = (
    []
    if importlib.util.find_spec("numba_cuda")
    else [
        "elementwise.py",
        "reduce.py",
        "linalg.py",
        "backend.py",
        "backend_*.py",
        "array.py",
        "index.py",
        "sort.py",
        "scan.py",
        "join.py",
        "special.py",
        "random.py",
    ]
)
