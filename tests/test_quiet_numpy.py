"""NOTE [Quiet NumPy] (numbagrad/kernels/cpu/backend.py): no NumPy floating-point warning
from numbagrad's own ops, as PyTorch gives none, while the user's NumPy code still warns;
also when numbagrad was first imported inside ``warnings.catch_warnings()`` (as pytest's
collection does), which drops the filter installed at import."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import warnings
    import numpy as np
    with warnings.catch_warnings():  # the filter installed at import is lost at exit
        import numbagrad
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = numbagrad.tensor([0.0, 1.0, -1.0], requires_grad=True)
        y = numbagrad.log(x) + numbagrad.sqrt(x) + 1 / x
        (y * 0).sum().backward()
        inf = numbagrad.tensor([[np.inf, -np.inf]])
        inf.sum(), inf.sum(1), inf.mean(), inf.float().sum()  # inf - inf in a reduction
        ours = [str(w.message) for w in caught]
        np.log(np.zeros(1))  # the user's own NumPy call still warns
        theirs = [str(w.message) for w in caught[len(ours):]]
    print(len(ours), len(theirs))
    """
)


def test_no_numpy_warning_from_ops_after_import_inside_catch_warnings():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["0", "1"], out.stdout + out.stderr
