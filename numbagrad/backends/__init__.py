"""``torch.backends`` as scripts touch it: the cuDNN and MPS switches.

numbagrad never calls cuDNN or Apple's MPS, so these flags change nothing here: they exist
so that the usual reproducibility boilerplate (``torch.backends.cudnn.deterministic = True``,
``torch.backends.cudnn.benchmark = False``) and device probes
(``torch.backends.mps.is_available()``) run, exactly as they run, without effect, on a
CPU-only PyTorch build.

Examples
--------
>>> import numbagrad
>>> numbagrad.backends.cudnn.deterministic = True
>>> numbagrad.backends.cudnn.is_available(), numbagrad.backends.mps.is_available()
(False, False)
"""

from numbagrad.backends import cudnn, mps

__all__ = ["cudnn", "mps"]
