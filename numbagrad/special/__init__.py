"""``numbagrad.special``: PyTorch's ``torch.special`` namespace.

The special functions themselves live in ``numbagrad/ops/special.py`` (primitives over the
``@njit`` kernels of ``numbagrad/kernels/cpu/special.py``, and composites); the ones PyTorch
also has at the top level (``erfc``, ``erfinv``, ``lgamma``, ``digamma``, ``polygamma``,
``i0``, ``sinc``, ``logit``, ``xlogy``, ``mvlgamma``) are ``numbagrad.<name>`` and Tensor
methods too. The rest of this namespace are PyTorch's ``special`` spellings of existing ops
(``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``, ...).
"""

from __future__ import annotations

from numbagrad.ops import reduce as _reduce
from numbagrad.ops import unary as _unary
from numbagrad.ops._public import namespace_all as _namespace_all
from numbagrad.ops._public import public as _public

# re-exported (marked ``@public(namespace="special")`` or ``also=("special",)`` there: F401
# is off for this file as for the other re-exporting ``__init__`` modules)
from numbagrad.ops.special import (
    _as_float,
    _tensor_arg,
    bessel_j0,
    bessel_j1,
    digamma,
    entr,
    erfc,
    erfcx,
    erfinv,
    gammainc,
    gammaincc,
    i0,
    i0e,
    i1,
    i1e,
    lgamma,
    log_ndtr,
    logit,
    mvlgamma,
    ndtr,
    ndtri,
    polygamma,
    sinc,
    xlog1py,
    xlogy,
    zeta,
)

# PyTorch's ``special`` spellings of existing ops (the ops of ``ops/special.py`` imported
# above are marked there: NOTE [Public ops])
erf = _public(_unary.erf, namespace="special")
exp2 = _public(_unary.exp2, namespace="special")
expm1 = _public(_unary.expm1, namespace="special")
log1p = _public(_unary.log1p, namespace="special")
gammaln = _public(lgamma, name="gammaln", namespace="special")
psi = _public(digamma, name="psi", namespace="special")
multigammaln = _public(mvlgamma, name="multigammaln", namespace="special")


@_public(namespace="special")
def expit(input):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` (``numbagrad.sigmoid``).

    Parameters
    ----------
    input : Tensor

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> print(float(torch.special.expit(torch.tensor(0.0))))
    0.5
    """
    return _unary.sigmoid(_tensor_arg(input, "special_expit"))


@_public(namespace="special")
def round(input, *, decimals=0):
    """Round half to even, to ``decimals`` decimal places (negative: to tens, hundreds...).

    As PyTorch, ``decimals != 0`` computes ``round(x * 10**d) / 10**d`` (``round(x / 10**-d)
    * 10**-d`` for negative ``d``), so the result carries that product's rounding. The
    gradient is zero.

    Parameters
    ----------
    input : Tensor
    decimals : int, default 0

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor([1.2345, 2.5], dtype=torch.float64)
    >>> print(torch.special.round(x, decimals=2).tolist())
    [1.23, 2.5]
    """
    _tensor_arg(input, "special_round")
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(
            f"special_round(): argument 'decimals' must be int, not {type(decimals).__name__}"
        )
    if decimals == 0:
        return _unary.round(input)
    if decimals > 0:
        scale = 10.0**decimals
        return _unary.round(input * scale) / scale
    scale = 10.0**-decimals
    return _unary.round(input / scale) * scale


@_public(namespace="special")
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably; integer inputs give the default float
    dtype.

    Parameters
    ----------
    input : Tensor
    dim : int or tuple of int
    keepdim : bool, default False

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> print(f"{float(torch.special.logsumexp(x, 0)):.6f}")
    2.313262
    """
    return _reduce.logsumexp(_as_float(_tensor_arg(input, "special_logsumexp")), dim, keepdim)


@_public(namespace="special")
def softmax(input, dim, *, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (``numbagrad.softmax``).

    Parameters
    ----------
    input : Tensor
    dim : int
    dtype : numbagrad.dtype, optional
        Cast the input to it first (integer inputs need it, as in PyTorch).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor([0.0, 0.0])
    >>> print(torch.special.softmax(x, 0).tolist())
    [0.5, 0.5]
    """
    return _reduce.softmax(_tensor_arg(input, "special_softmax"), dim, dtype=dtype)


@_public(namespace="special")
def log_softmax(input, dim, *, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (``numbagrad.log_softmax``).

    Parameters
    ----------
    input : Tensor
    dim : int
    dtype : numbagrad.dtype, optional
        Cast the input to it first.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numbagrad as torch
    >>> x = torch.tensor([0.0, 0.0], dtype=torch.float64)
    >>> print(f"{torch.special.log_softmax(x, 0).tolist()[0]:.6f}")
    -0.693147
    """
    return _reduce.log_softmax(_tensor_arg(input, "special_log_softmax"), dim, dtype=dtype)


# the names marked public in ``numbagrad.special`` (NOTE [Public ops])
__all__ = _namespace_all("special", globals())
