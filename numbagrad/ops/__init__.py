"""The op library: one declaration per primitive (NOTE [Primitive declaration] in
``ops/_op.py``) and the composites built on them.

This module is also the one late-bound namespace through which rules and composites call
other ops (``from numbagrad import ops as F``; ``F.where(...)``): names are looked up when
a rule runs, so op files need not import each other. ``ops._methods`` gives ``Tensor`` its
methods and operators.
"""

from __future__ import annotations

from numbagrad.ops import (
    _op,
    binary,
    cplx,
    inplace,
    linalg,
    math,
    random_gamma,
    reduce,
    shape,
    special,
    unary,
)
from numbagrad.ops._op import PRIMITIVES, Primitive, bind
from numbagrad.ops.binary import (
    add,
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    div,
    divide,
    eq,
    floor_divide,
    fmod,
    ge,
    greater,
    greater_equal,
    gt,
    le,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    not_equal,
    pow,
    remainder,
    sub,
    subtract,
    true_divide,
    where,
)
from numbagrad.ops.cplx import (
    angle,
    complex,
    conj,
    conj_physical,
    imag,
    is_conj,
    is_neg,
    isreal,
    polar,
    real,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from numbagrad.ops.inplace import clone, contiguous, to
from numbagrad.ops.linalg import (
    addmm,
    addmv,
    baddbmm,
    bmm,
    cdist,
    cholesky,
    cholesky_solve,
    cross,
    det,
    diag,
    diag_embed,
    dist,
    dot,
    einsum,
    ger,
    inner,
    inverse,
    kron,
    logdet,
    matmul,
    matrix_exp,
    matrix_power,
    mm,
    mv,
    outer,
    pinverse,
    slogdet,
    svd,
    tensordot,
    trace,
    vdot,
)
from numbagrad.ops.math import *  # noqa: F403  (the extra top-level math: math.ALL)
from numbagrad.ops.reduce import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    softmax,
    std,
    sum,
    var,
)
from numbagrad.ops.shape import (
    adjoint,
    argsort,
    broadcast_to,
    cat,
    chunk,
    concat,
    concatenate,
    diagonal,
    expand,
    expand_as,
    flatten,
    flip,
    gather,
    getitem,
    index_put,
    index_select,
    masked_fill,
    masked_select,
    moveaxis,
    movedim,
    narrow,
    nonzero,
    permute,
    reshape,
    roll,
    scatter_add,
    select,
    sort,
    split,
    squeeze,
    stack,
    sum_to,
    swapaxes,
    swapdims,
    t,
    take,
    take_along_dim,
    topk,
    transpose,
    tril,
    triu,
    unbind,
    unflatten,
    unsqueeze,
    view,
)
from numbagrad.ops.special import *  # noqa: F403  (the top-level special functions)
from numbagrad.ops.unary import (
    abs,
    ceil,
    cos,
    erf,
    exp,
    expm1,
    floor,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log2,
    nan_to_num,
    neg,
    reciprocal,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softplus,
    sqrt,
    square,
    tan,
    tanh,
)

__all__ = [
    *unary.ALL,
    *binary.ALL,
    *reduce.ALL,
    *shape.ALL,
    *linalg.ALL,
    *math.ALL,
    "clone",
    "contiguous",
    "to",
    *special.ALL,
    *cplx.ALL,
]
_internal = ["PRIMITIVES", "Primitive", "bind", "getitem", "index_put"]
# the reparameterised gamma draws of the distributions (``ops/random_gamma.py``)
standard_gamma = random_gamma.standard_gamma
standard_gamma_grad = random_gamma.standard_gamma_grad
standard_gamma_icdf = random_gamma.standard_gamma_icdf

from numbagrad.ops import _methods  # noqa: E402  (attaches Tensor's methods: needs the above)

del _internal

# ``numbagrad.ops.<namespace>``: the custom ops of ``numbagrad.library.custom_op``, by
# namespace (NOTE [Custom ops] in ``numbagrad/library.py``), as ``torch.ops``
_NAMESPACES: dict = {}


def register_namespace(name, space):
    """Make ``space`` reachable as ``numbagrad.ops.<name>`` (``numbagrad.library``);
    ValueError where ``name`` is already a name of this module."""
    if name in globals():
        raise ValueError(
            f"the namespace {name!r} is a name of numbagrad.ops; choose another namespace"
        )
    _NAMESPACES.setdefault(name, space)
    return _NAMESPACES[name]


def __getattr__(name):
    try:
        return _NAMESPACES[name]
    except KeyError:
        raise AttributeError(f"module 'numbagrad.ops' has no attribute {name!r}") from None
