"""``torch.backends.cudnn``: numbagrad has no cuDNN path, so :func:`is_available` is False
and the module flags (``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``) are plain
attributes that scripts may set and read; nothing in numbagrad consults them (as on a
CPU-only PyTorch build).

Examples
--------
>>> import numbagrad.backends.cudnn as cudnn
>>> cudnn.benchmark = False
>>> cudnn.is_available(), cudnn.version()
(False, None)
"""

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: numbagrad does not use cuDNN.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.backends.cudnn.is_available()
    False
    """
    return False


def version():
    """None, as PyTorch returns when cuDNN is not available.

    Examples
    --------
    >>> import numbagrad
    >>> print(numbagrad.backends.cudnn.version())
    None
    """
    return None
