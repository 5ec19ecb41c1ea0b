"""``torch.backends.mps``: Apple's Metal backend, which numbagrad does not have.

Examples
--------
>>> import numbagrad
>>> numbagrad.backends.mps.is_available(), numbagrad.backends.mps.is_built()
(False, False)
"""

__all__ = ["is_available", "is_built"]


def is_available():
    """False: numbagrad has no MPS device.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.backends.mps.is_available()
    False
    """
    return False


def is_built():
    """False: numbagrad is not built with MPS.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.backends.mps.is_built()
    False
    """
    return False
