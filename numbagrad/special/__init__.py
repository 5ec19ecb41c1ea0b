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

__all__ = [
    "bessel_j0",
    "bessel_j1",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
]

erf = _unary.erf
exp2 = _unary.exp2
expm1 = _unary.expm1
log1p = _unary.log1p
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma


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
