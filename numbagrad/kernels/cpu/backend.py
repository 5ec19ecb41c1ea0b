"""The CPU backend: the whole CPU speed policy in one place (NOTE [Backends]).

What runs where, by size (figures in docs/guide/kernels.rst and asv_bench/):

- single elementwise maps: NumPy's SIMD ufuncs, split across cores from ``THREAD_MIN``
  elements (NOTE [Threaded ufuncs]); the few maps NumPy has no ufunc for (``softplus``,
  ``erf``, ``rsqrt``) run an ``@njit`` kernel from ``KERNEL_MIN`` elements;
- fused backward formulas (``g * derivative``): NumPy below ``KERNEL_MIN`` elements (as fast,
  and numba is never imported for small work), one-pass ``@njit`` kernels above, their
  ``prange`` twins from ``PARALLEL_MIN``;
- large results come from the buffer cache (NOTE [Buffer cache]);
- gradient sums and leaf accumulation: in place with ``@njit`` kernels for large arrays.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from numbagrad.kernels import KERNEL_MIN, PARALLEL_MIN, module, register_backend
from numbagrad.kernels.cpu import alloc, blas, threads
from numbagrad.kernels.cpu.backend_linalg import LinalgMethods
from numbagrad.kernels.cpu.backend_special import SpecialMethods
from numbagrad.kernels.cpu.fft import FFT
from numbagrad.kernels.cpu.threads import THREAD_MIN

if TYPE_CHECKING:
    from numbagrad.kernels.interface import Backend

# Elements from which a float64 result comes from the buffer cache (NOTE [Buffer cache]).
CACHE_MIN = alloc.MIN_BYTES // 8

# NOTE [Quiet NumPy]: PyTorch never warns when a result is inf or nan (overflow, 0/0,
# inf - inf, log(0)): the IEEE value is the answer. NumPy warns (a RuntimeWarning issued
# from the Python frame that called the ufunc). An ``np.errstate`` block around every ufunc
# call would cost about 2.4 us each, a fifth of a small op's whole time, so instead one
# warnings filter, installed here once, drops exactly those floating-point warnings when
# they are raised from numbagrad's own modules; the user's NumPy code still warns as it
# always did, and nothing is paid while no warning occurs. The ufunc worker threads start
# with errors ignored (``threads._quiet``: their warnings would be attributed to the pool).
# A filter added later in front of this one (``warnings.simplefilter("error")``, ``python
# -W error``) takes precedence, as the warnings module intends.
# ``warnings.catch_warnings()`` swaps ``warnings.filters`` for a copy and puts the original
# list back on exit, so a filter installed while numbagrad was first imported inside such a
# block (pytest collects tests inside one) would be lost with the copy. ``quiet_numpy`` puts
# it back: tensor creation (``_creation._finish``) and every backward call it, and it
# costs one identity test while the list is the one it last saw.
_QUIET_MESSAGE = r"(divide by zero|overflow|invalid value|underflow) encountered"
_QUIET_MODULE = r"numbagrad(\.|$)"
_quiet_filters = None  # the ``warnings.filters`` list the filter was last checked in


def _is_quiet_filter(f):
    action, message, category, module, _ = f
    return (
        action == "ignore"
        and category is RuntimeWarning
        and getattr(message, "pattern", None) == _QUIET_MESSAGE
        and getattr(module, "pattern", None) == _QUIET_MODULE
    )


def quiet_numpy():
    """Install the NOTE [Quiet NumPy] filter in the current ``warnings.filters`` list if
    it is not there (a ``catch_warnings`` block replaced the list since)."""
    global _quiet_filters
    if warnings.filters is _quiet_filters:
        return
    if not any(_is_quiet_filter(f) for f in warnings.filters):
        warnings.filterwarnings(
            "ignore", message=_QUIET_MESSAGE, category=RuntimeWarning, module=_QUIET_MODULE
        )
    _quiet_filters = warnings.filters


quiet_numpy()

# NOTE [Half precision]
# Numba has no float16 arithmetic: no ``@njit`` kernel may receive a float16 array. Where
# the backend picks a kernel (maps without a NumPy ufunc, fused backward formulas, ``prange``
# products, gradient sums and leaf accumulation) a float16 operand takes the NumPy path
# instead: NumPy's float16 ufuncs convert each element to float32, compute and round, which
# is what PyTorch's CPU kernels do. Where one rounding per step would cost accuracy or
# overflow (sums, matrix products, the kernel-only maps), the work runs in float32 and is
# rounded once, as PyTorch accumulates half in float (its ``acc_type``). The dtype is
# checked once, where a path is chosen (large arrays only on the kernel branches), so
# float32 and float64 pay one comparison at most. Ops outside the backend that need
# float32 for half (``softmax``, ``mean``, ``var``, ``norm``, ``cumsum``) point here.
_F16 = np.dtype(np.float16)


# NOTE [Broadcast kernels]: below ``_ROW_KERNEL_MIN`` result elements, a broadcast against
# a full-size operand takes the kernel only where NumPy's cost per row dominates: a row
# broadcast (``(512, 8) + (8,)``) with rows of at most ``_SHORT_ROW_MAX`` elements. NumPy
# is the faster for longer rows, and for a column broadcast (``(512, 8) + (512, 1)``, one
# value per row: its fast case) at these sizes (measured on the 2-core machine).
_ROW_KERNEL_MIN = 4 * KERNEL_MIN
_SHORT_ROW_MAX = 16


def broadcast_view(x, shape):
    """``np.broadcast_to(x, shape)``: a read-only view of ``x`` with zero strides where it
    broadcasts. A C-contiguous ``x`` (every gradient seed and most reductions' results) is
    viewed through the ndarray constructor, at half ``np.broadcast_to``'s cost; a shape ``x``
    does not broadcast to raises NumPy's ValueError from ``np.broadcast_to``."""
    lead = len(shape) - x.ndim
    if lead >= 0 and x.size and x.flags.c_contiguous:
        strides = [0] * lead
        for n, st, want in zip(x.shape, x.strides, shape[lead:]):
            if n == want:
                strides.append(st)
            elif n == 1:
                strides.append(0)
            else:
                break
        else:
            out = np.ndarray(shape, x.dtype, x, 0, strides)
            out.flags.writeable = False
            return out
    return np.broadcast_to(x, shape)


def _broadcast_size(sa, sb):
    """The number of elements of the broadcast of shapes ``sa`` and ``sb``."""
    n = 1
    la, lb = len(sa), len(sb)
    for i in range(1, max(la, lb) + 1):
        da = sa[-i] if i <= la else 1
        n *= sb[-i] if da == 1 and i <= lb else da
    return n


__all__ = ["CPU", "CpuBackend"]

K = module("elementwise")
KG = module("gelu")
KA = module("accumulate")
KB = module("broadcast")
KR = module("reduce")
KI = module("index")

_C_ERF = 2 / math.sqrt(math.pi)


def _np_sigmoid(x):
    """A numerically stable logistic function on arrays."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _sigmoid_block(out, x):
    # 1 / (1 + e^-x): for x << 0, e^-x overflows to inf and the result is 0, correctly
    np.negative(x, out=out)
    with np.errstate(over="ignore"):  # per thread: errstate is thread-local
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _sigmoid(x):
    if x.dtype == _F16:  # (float16: e^-x overflows from x < -11)
        return _np_sigmoid(x)
    if x.size < KERNEL_MIN:
        # 1 / (1 + e^-x) as PyTorch's kernel and the large path: 0 where e^-x overflows
        # (the stable two-branch form would give subnormals there); the overflow warning
        # is dropped by the NOTE [Quiet NumPy] filter
        out = np.negative(x, out=np.empty_like(x))
        np.exp(out, out=out)
        out += 1
        return np.reciprocal(out, out=out)
    # NumPy's SIMD exp on cache-sized blocks, on every core: about twice as fast as a
    # scalar-exp njit loop on two threads (measured on 10M float64)
    x = np.ascontiguousarray(x)
    return threads.blocked(_sigmoid_block, alloc.empty(x.shape, x.dtype), x)


def _softplus_np(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _relu(x):
    return np.maximum(x, x.dtype.type(0))  # one SIMD pass; NaN propagates as in torch


# NOTE [Diagonal matmul operands]
# ``jacrev`` pulls back the rows of an identity matrix in one batched backward, and ``jacfwd``
# pushes forward its columns: through an elementwise op the basis becomes a diagonal matrix
# ``D``, and through a linear map the next product is ``D @ W`` (or ``W @ D``), a full GEMM
# (n^3 multiply-adds) for n^2 useful products. ``_matmul`` notices a square 2-D operand whose
# off-diagonal entries are all zero and scales the other operand's rows (columns) instead.
# The result is what the GEMM computes: each entry is one product plus exact zeros (the
# ``+ 0.0`` turns a lone -0.0 into the +0.0 the zero terms sum to), so the other operand
# must be finite (``0 * inf`` is NaN in the GEMM): its sum being finite proves that, and
# anything else takes the GEMM. A dense operand is rejected by its first off-diagonal
# entry; a sparse non-diagonal one costs one ``count_nonzero`` pass, small beside the GEMM.
_DIAG_MIN = 32  # below this the GEMM is cheap and the check is not worth its Python


def _diagonal_of(m):
    """``m``'s diagonal when ``m`` is a square matrix (n >= _DIAG_MIN) with zero off-diagonal
    entries (NaN is not zero); otherwise None."""
    n = m.shape[0]
    if n < _DIAG_MIN or m.shape[1] != n or m[0, 1] != 0 or m[1, 0] != 0:
        return None
    d = np.diagonal(m)
    if np.count_nonzero(m) != np.count_nonzero(d):
        return None
    return d


def _matmul(a, b):
    """``a @ b``; float16 in float32, rounded once (NOTE [Half precision]); a diagonal 2-D
    operand scales the other (NOTE [Diagonal matmul operands]); BLAS's threads chosen by
    NOTE [BLAS threads] (``blas.matmul``)."""
    if a.dtype == _F16 and b.dtype == _F16:
        out = blas.matmul(a.astype(np.float32), b.astype(np.float32))
        with np.errstate(over="ignore"):  # NOTE [Quiet NumPy]
            return out.astype(_F16)
    if a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype and a.dtype.kind == "f":
        d = _diagonal_of(a)
        if d is not None and a.shape[1] == b.shape[0] and np.isfinite(b.sum()):
            out = d[:, None] * b
            out += 0.0
            return out
        d = _diagonal_of(b)
        if d is not None and a.shape[1] == b.shape[0] and np.isfinite(a.sum()):
            out = a * d
            out += 0.0
            return out
    if (
        b.ndim == 2
        and b.shape[0] == 1
        and a.ndim >= 2
        and a.shape[-1] == 1
        and a.dtype == b.dtype
        and a.dtype.kind in "fc"
    ):
        # an inner dimension of 1 (a Linear layer's input gradient with one output
        # feature): each entry is one product, which the broadcast multiply computes at
        # 3.6x the GEMM's speed ((5120, 1) @ (1, 128) float32: 0.72 ms against 0.20 ms),
        # with PyTorch's signed zeros (its GEMM's -0.0 products; OpenBLAS's give +0.0)
        return CpuBackend.binary("multiply", a, b)
    if a.ndim > 2 and b.ndim == 2 and a.shape[-1] == b.shape[0] and a.size:
        # a stack times one matrix is one GEMM over the stacked rows: NumPy's batched loop
        # runs a product per matrix of the stack, and with a transposed operand (a
        # ``linear`` weight) it leaves BLAS altogether, measured 10-500x slower for
        # (16, 32, 2048) @ (2048, 64) in float32
        rows = a.reshape(-1, a.shape[-1])
        return blas.matmul(rows, b).reshape(*a.shape[:-1], b.shape[1])
    return blas.matmul(a, b)  # inf * 0 in a product is NaN, silently (NOTE [Quiet NumPy])


class ArrayMath:
    """The array twins of the ops that derivative formulas use (NOTE [Backends])."""

    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    exp = staticmethod(np.exp)
    sign = staticmethod(np.sign)
    reciprocal = staticmethod(np.reciprocal)
    conj = staticmethod(np.conjugate)
    where = staticmethod(np.where)
    sigmoid = staticmethod(_np_sigmoid)

    matmul = staticmethod(_matmul)
    swapaxes = staticmethod(np.swapaxes)
    reshape = staticmethod(np.reshape)

    @staticmethod
    def sum(x, dim=None, keepdim=False):
        return np.sum(x, axis=dim, keepdims=keepdim)

    @staticmethod
    def flip(x, dims):
        return np.flip(x, dims)

    @staticmethod
    def cumsum(x, dim):
        return np.cumsum(x, axis=dim)

    # (the derivatives of the inverse trigonometric and hyperbolic maps, ``ops/unary.py``)
    sqrt = staticmethod(np.sqrt)
    sinh = staticmethod(np.sinh)
    cosh = staticmethod(np.cosh)


# name -> (NumPy function, njit kernel name or None, NumPy formula for small arrays)
def _reciprocal(x):
    # complex: 1 / z by complex division, as PyTorch's (np.reciprocal gives -0.0 for the
    # real part of 1 / (-0.0 + 1j), the division +0.0)
    if x.dtype.kind == "c":
        return np.divide(x.dtype.type(1), x)
    if x.size >= THREAD_MIN:
        return threads.call(np.reciprocal, x)  # NOTE [Threaded ufuncs]
    return np.reciprocal(x)


_GELU_BETA = 0.7978845608028654  # sqrt(2 / pi)
_GELU_KAPPA = 0.044715


def _gelu_kernel_input(name, x):
    """``x`` as the GELU kernels take it (float32 or float64, flat, contiguous)."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f'"{name}" is not implemented for complex tensors')
    if x.dtype not in _BROADCAST_DTYPES:  # (``F.gelu`` converts integers first)
        raise NotImplementedError(f'"{name}" is not implemented for {x.dtype} arrays')
    return np.ascontiguousarray(x).reshape(-1)


def _gelu(x):
    """PyTorch's exact ``gelu``, ``x * 0.5 * (1 + erf(x / sqrt 2))``: one kernel pass
    (NOTE [Float32 GELU] in ``kernels/cpu/gelu.py``), on all threads from ``PARALLEL_MIN``."""
    if x.dtype == _F16:  # no float16 in Numba (NOTE [Half precision])
        with np.errstate(over="ignore"):
            return _gelu(x.astype(np.float32)).astype(_F16)
    flat = _gelu_kernel_input("gelu", x)
    out = alloc.empty(x.shape, x.dtype)
    par = x.size >= PARALLEL_MIN
    if x.dtype == np.float32:
        (KG.gelu_forward_f32_par if par else KG.gelu_forward_f32)(flat, out.reshape(-1))
    else:
        (KG.gelu_forward_par if par else KG.gelu_forward)(flat, out.reshape(-1))
    return out


def _gelu_tanh(x):
    """PyTorch's ``gelu(x, approximate='tanh')``: a float32 kernel pass (NOTE [Float32
    GELU]); float64 and small arrays with NumPy's SIMD ``tanh`` in PyTorch's order
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    if x.dtype == _F16:
        with np.errstate(over="ignore"):
            return _gelu_tanh(x.astype(np.float32)).astype(_F16)
    flat = _gelu_kernel_input("gelu", x)
    if x.dtype == np.float32 and x.size >= KERNEL_MIN:
        out = alloc.empty(x.shape, x.dtype)
        par = x.size >= PARALLEL_MIN
        (KG.gelu_tanh_forward_f32_par if par else KG.gelu_tanh_forward_f32)(flat, out.reshape(-1))
        return out
    mul, add = (
        functools.partial(CpuBackend.binary, "multiply"),
        functools.partial(CpuBackend.binary, "add"),
    )
    inner = mul(add(x, mul(mul(mul(x, x), x), _GELU_KAPPA)), _GELU_BETA)
    return mul(mul(x, 0.5), add(CpuBackend.map("tanh", inner), 1.0))


_MAPS = {
    "negative": (np.negative, None, None),
    "abs": (np.abs, None, None),
    "sign": (np.sign, None, None),
    "floor": (np.floor, None, None),
    "ceil": (np.ceil, None, None),
    "round": (np.round, None, None),
    "relu": (_relu, None, None),
    "exp": (np.exp, None, None),
    "expm1": (np.expm1, None, None),
    "log": (np.log, None, None),
    "log1p": (np.log1p, None, None),
    "log2": (np.log2, None, None),
    "sqrt": (np.sqrt, None, None),
    "square": (np.square, None, None),
    "reciprocal": (_reciprocal, None, None),
    "sin": (np.sin, None, None),
    "cos": (np.cos, None, None),
    "tan": (np.tan, None, None),
    "tanh": (np.tanh, None, None),
    "sigmoid": (_sigmoid, None, None),
    "softplus": (None, "softplus_forward", _softplus_np),
    "erf": (None, "erf_forward", None),
    "gelu": (_gelu, None, None),
    "gelu_tanh": (_gelu_tanh, None, None),
    "rsqrt": (None, "rsqrt_forward", lambda x: 1 / np.sqrt(x)),
    "isfinite": (np.isfinite, None, None),
    "isnan": (np.isnan, None, None),
    "isinf": (np.isinf, None, None),
    "logical_not": (np.logical_not, None, None),
    "invert": (np.invert, None, None),
}
# the inverse trigonometric and hyperbolic maps, base-10 log, 2**x, trunc, signbit
_MAPS.update(
    {
        name: (getattr(np, name), None, None)
        for name in (
            "arccos arcsin arctan sinh cosh arcsinh arccosh arctanh log10 exp2 trunc signbit"
        ).split()
    }
)

_UFUNCS = {
    name: getattr(np, name)
    for name in (
        "add subtract multiply true_divide power maximum minimum arctan2 fmod remainder equal "
        "not_equal less less_equal greater greater_equal logical_and logical_or logical_xor "
        "bitwise_and bitwise_or bitwise_xor"
    ).split()
}
_UFUNCS.update(
    {
        name: getattr(np, name)
        for name in ("hypot logaddexp logaddexp2 copysign fmax fmin nextafter").split()
    }
)

# NOTE [Broadcast kernels] (kernels/cpu/broadcast.py): ufuncs with a broadcasting kernel,
# the float dtypes it runs for, and the plans computed so far (by operand shapes)
_BROADCAST_KERNELS = frozenset(("add", "subtract", "multiply", "true_divide"))
_BROADCAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_PLANS: dict = {}  # (shape of a, shape of b) -> (result size, kernel plan or None)
_MAX_PLANS = 1024
_BROADCAST_FNS: dict = {}  # ufunc name -> its kernel (looked up once: the module is lazy)


def _make_plan(sa, sb):
    """The kernel plan of broadcasting C-contiguous operands of shapes ``sa`` and ``sb``:
    ``(rows, n1, n2, sa0, sa1, sa2, sb0, sb1, sb2, shape)`` (NOTE [Broadcast kernels]), or
    None when they do not broadcast (NumPy then raises), are empty, or need more than
    three coalesced dimensions."""
    nd = max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + tuple(sa)
    sb = (1,) * (nd - len(sb)) + tuple(sb)
    groups = []  # (n, stride of a, stride of b), innermost first
    shape = []
    xa = xb = 1  # contiguous strides of a and b at the current dimension
    for na, nb in zip(reversed(sa), reversed(sb)):
        if na == nb:
            n, ta, tb = na, xa, xb
        elif na == 1:
            n, ta, tb = nb, 0, xb
        elif nb == 1:
            n, ta, tb = na, xa, 0
        else:
            return None
        xa *= na
        xb *= nb
        shape.append(n)
        if n == 0:
            return None
        if n == 1:
            continue
        if groups:
            gn, ga, gb = groups[-1]
            if ta == ga * gn and tb == gb * gn:  # continues the group's strides: merge
                groups[-1] = (gn * n, ga, gb)
                continue
        groups.append((n, ta, tb))
    if len(groups) > 3:
        return None
    groups += [(1, 0, 0)] * (3 - len(groups))
    (n2, a2, b2), (n1, a1, b1), (n0, a0, b0) = groups
    return (n0 * n1, n1, n2, a0, a1, a2, b0, b1, b2, tuple(reversed(shape)))


def _shape_info(sa, sb):
    """``(m, plan)`` for operands of shapes ``sa`` and ``sb`` (different): the result's
    size, and the broadcast kernel's plan, or None where NumPy's loop is to run (fewer than
    ``KERNEL_MIN`` elements, no plan, or a small broadcast against a full-size operand
    that NumPy does faster). Computed once per pair of shapes (``_PLANS``)."""
    key = (sa, sb)
    info = _PLANS.get(key)
    if info is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        m = _broadcast_size(sa, sb)
        plan = _make_plan(sa, sb) if m >= KERNEL_MIN else None
        if plan is not None:
            rows, _, n2, _, _, a2, _, _, b2, _ = plan
            full = m == math.prod(sa) or m == math.prod(sb)
            if full and rows * n2 < _ROW_KERNEL_MIN and (n2 > _SHORT_ROW_MAX or a2 == 0 or b2 == 0):
                plan = None
        info = _PLANS[key] = (m, plan)
    return info


def _broadcast_kernel(name, a, b, plan):
    """``name(a, b)`` by the broadcast kernel of ``plan`` (same-dtype float32/float64,
    C-contiguous operands, the caller checked)."""
    rows, n1, n2, a0, a1, a2, b0, b1, b2, shape = plan
    n = rows * n2
    dt = a.dtype
    # (small results straight from NumPy: ``alloc.empty`` would say the same, later)
    out = np.empty(shape, dt) if n * dt.itemsize < alloc.MIN_BYTES else alloc.empty(shape, dt)
    fa, fb, fo = a.reshape(-1), b.reshape(-1), out.reshape(-1)
    kernel = _BROADCAST_FNS.get(name)
    if kernel is None:
        kernel = _BROADCAST_FNS[name] = getattr(KB, name)
    parts = threads.N_THREADS
    if n < threads.CHEAP_THREAD_MIN or parts == 1 or rows < parts:
        kernel(fa, fb, fo, n1, n2, a0, a1, a2, b0, b1, b2, 0, rows)
        return out
    threads.run_parts(  # NOTE [Threaded ufuncs]: the kernels release the GIL
        [
            functools.partial(kernel, fa, fb, fo, n1, n2, a0, a1, a2, b0, b1, b2, r0, r1)
            for r0, r1 in threads._slabs(rows, parts)
        ]
    )
    return out


def _sum_plan(shape, dims, keepdim):
    """``(a_len, b_len, c_len, out_shape)`` of the sum kernel reducing ``dims`` of a
    C-contiguous array of ``shape`` (as ``(a_len, b_len, c_len)`` with ``b`` reduced), or
    None where NumPy's own loop is as fast or the reduced axes are not one block."""
    if not dims:
        return None
    d0, d1 = min(dims), max(dims)
    if d1 - d0 + 1 != len(dims):
        return None
    a_len = math.prod(shape[:d0])
    b_len = math.prod(shape[d0 : d1 + 1])
    c_len = math.prod(shape[d1 + 1 :])
    if b_len < 2 or a_len * c_len == 0 or c_len > _SHORT_ROW:
        return None
    if c_len == 1 and b_len > _SHORT_ROW:  # (rows: NumPy's pairwise sums are as fast)
        return None
    if keepdim:
        out_shape = tuple(1 if d0 <= i <= d1 else n for i, n in enumerate(shape))
    else:
        out_shape = shape[:d0] + shape[d1 + 1 :]
    return a_len, b_len, c_len, out_shape


_SUM_PLANS: dict = {}  # (shape, dims, keepdim) -> _sum_plan's answer


def _sum_kernel(x, dims, keepdim):
    """``x.sum(dims)`` by a sum kernel (NOTE [Sum kernels] in kernels/cpu/reduce.py) for a
    C-contiguous float32/float64 ``x`` (the caller checked), or None where NumPy's own loop
    is the one to run; the plan is computed once per shape (``_SUM_PLANS``)."""
    key = (x.shape, dims if type(dims) is tuple else tuple(dims), keepdim)
    plan = _SUM_PLANS.get(key, False)
    if plan is False:
        if len(_SUM_PLANS) >= _MAX_PLANS:
            _SUM_PLANS.clear()
        plan = _SUM_PLANS[key] = _sum_plan(x.shape, key[1], keepdim)
    if plan is None:
        return None
    a_len, b_len, c_len, out_shape = plan
    if c_len == 1:  # the contiguous last axes: NumPy's pairwise rows
        out = np.zeros(a_len, x.dtype)
        KR.sum_rows(x.reshape(-1), b_len, out)
    else:
        out = np.zeros(a_len * c_len, x.dtype)
        KR.sum_middle(x.reshape(-1), a_len, b_len, c_len, out)
    return out.reshape(out_shape)


# The longest row a sum kernel takes: NumPy's pairwise block (PW_BLOCKSIZE; longer rows it
# splits recursively, and sum_rows does not), and past which NumPy's per-row cost is small
_SHORT_ROW = 128


# fused backward kernels with a ``prange`` twin
_PARALLEL_TWINS = frozenset(("tanh_backward", "sigmoid_backward"))


def _backward_kernel(kernel, g, s):
    """The fused kernel ``unary_backward`` runs for ``kernel`` on these arrays, or None
    (then the op's formula): from ``KERNEL_MIN`` elements of float32/float64, the
    ``prange`` twin from ``PARALLEL_MIN``; GELU's float32 kernels where both arrays are
    float32, and the tanh form's formula in float64 (NOTE [Float32 GELU])."""
    if (
        kernel is None
        or s.size < KERNEL_MIN
        or s.dtype not in _BROADCAST_DTYPES
        or g.dtype not in _BROADCAST_DTYPES
    ):
        return None
    par = s.size >= PARALLEL_MIN
    if kernel in ("gelu_backward", "gelu_tanh_backward"):
        if s.dtype == g.dtype == np.float32:
            return getattr(KG, kernel + ("_f32_par" if par else "_f32"))
        return K.gelu_backward if kernel == "gelu_backward" else None
    if par and kernel in _PARALLEL_TWINS:
        kernel += "_par"
    return getattr(K, kernel)


def _host_index(device_index):
    if device_index not in (None, 0):
        raise RuntimeError(f"the CPU has one device, not cpu:{device_index}")


class CpuBackend(SpecialMethods, LinalgMethods):
    """NumPy arrays in host memory (NOTE [Backends])."""

    name = "cpu"
    xp = np
    fft = FFT  # np.fft, large 1-D batches threaded (NOTE [Threaded FFTs])
    math = ArrayMath
    KERNEL_MIN = KERNEL_MIN
    PARALLEL_MIN = PARALLEL_MIN
    THREAD_MIN = THREAD_MIN

    @staticmethod
    def owns(array) -> bool:
        return isinstance(array, (np.ndarray, np.generic))

    # -- allocation ---------------------------------------------------------------------------
    @staticmethod
    def empty(shape, dtype):
        """An uninitialised array; large ones may come from the buffer cache."""
        return alloc.empty(shape, dtype)

    @staticmethod
    def zeros(shape, dtype):
        return np.zeros(shape, dtype)

    @staticmethod
    def from_host(host, device_index=None):
        """``host`` itself: the CPU's arrays are NumPy's (the factories' ``on_device``)."""
        _host_index(device_index)
        return host

    @staticmethod
    def empty_on(shape, dtype, device_index=None):
        """``empty`` for a factory (the CPU has one device)."""
        _host_index(device_index)
        return alloc.empty(shape, dtype)

    # -- elementwise ---------------------------------------------------------------------------
    @staticmethod
    def map(name, x):
        """The elementwise map ``name`` of array ``x`` (e.g. ``"exp"``, ``"softplus"``)."""
        fn, kernel, small = _MAPS[name]
        if kernel is not None and x.dtype.kind == "c":  # (the kernels are typed for floats)
            if small is None:
                raise NotImplementedError(f'"{name}" is not implemented for complex tensors')
            return small(x)
        if kernel is not None:
            if x.dtype == _F16:  # no float16 in Numba (NOTE [Half precision])
                out = CpuBackend.map(name, x.astype(np.float32))
                with np.errstate(over="ignore"):
                    return out.astype(_F16)
            if x.size < KERNEL_MIN and small is not None:
                return small(x)
            out = alloc.empty(x.shape, x.dtype)
            getattr(K, kernel)(np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
            return out
        if x.size >= THREAD_MIN and type(fn) is np.ufunc:
            return threads.call(fn, x)  # NOTE [Threaded ufuncs]
        return fn(x)  # (NOTE [Quiet NumPy]: no warning on inf/nan)

    @staticmethod
    def binary(name, a, b):
        """The broadcasting NumPy ufunc ``name`` (``"add"``, ``"power"``, ...) of arrays or
        scalars ``a``, ``b``."""
        fn = _UFUNCS[name]
        if type(a) is np.ndarray:
            if type(b) is np.ndarray:
                n = a.size * b.size  # a bound on the result's size: small work stops here
                if n >= KERNEL_MIN:
                    if a.shape == b.shape:
                        if a.size >= CACHE_MIN:
                            return threads.call(fn, a, b)  # NOTE [Threaded ufuncs]
                        return fn(a, b)
                    m, plan = _PLANS.get((a.shape, b.shape)) or _shape_info(a.shape, b.shape)
                    if (
                        plan is not None
                        and name in _BROADCAST_KERNELS
                        and a.dtype is b.dtype
                        and a.dtype in _BROADCAST_DTYPES
                        and a.flags.c_contiguous
                        and b.flags.c_contiguous
                    ):
                        return _broadcast_kernel(name, a, b, plan)  # NOTE [Broadcast kernels]
                    if m >= CACHE_MIN:
                        return threads.call(fn, a, b)  # NOTE [Threaded ufuncs], [Buffer cache]
            elif a.size >= CACHE_MIN:
                return threads.call(fn, a, b)
        elif type(b) is np.ndarray and b.size >= CACHE_MIN:
            return threads.call(fn, a, b)
        return fn(a, b)

    @staticmethod
    def binary_into(name, dst, other):
        """``dst = name(dst, other)`` in place (an in-place op with no graph to record),
        casting like PyTorch's in-place ops: same kind or safer."""
        if dst.dtype == _F16:  # beyond 65504 is inf, silently (NOTE [Quiet NumPy])
            with np.errstate(over="ignore"):
                _UFUNCS[name](dst, other, out=dst, casting="same_kind")
            return
        _UFUNCS[name](dst, other, out=dst, casting="same_kind")

    @staticmethod
    def copy_into(dst, src):
        """Copy ``src`` into ``dst`` (broadcast, cast as ``copy_`` does)."""
        if dst.dtype == _F16:  # beyond 65504 is inf, silently (NOTE [Quiet NumPy])
            with np.errstate(over="ignore"):
                np.copyto(dst, src, casting="unsafe")
            return
        np.copyto(dst, src, casting="unsafe")

    @staticmethod
    def multiply(a, b):
        """``a * b`` for gradient formulas (threaded for large arrays)."""
        return CpuBackend.binary("multiply", a, b)

    @staticmethod
    def divide(a, b):
        return CpuBackend.binary("true_divide", a, b)

    @staticmethod
    def outer(a, b):
        """``out[..., i, j] = a[..., i] * b[..., j]`` (``Outer``), the leading dimensions
        broadcasting: one kernel pass where they are equal (same float dtype, C-contiguous),
        else NumPy's broadcasting product."""
        sa, sb = a.shape, b.shape
        if (
            sa[:-1] == sb[:-1]
            and a.dtype is b.dtype
            and a.dtype in _BROADCAST_DTYPES
            and a.flags.c_contiguous
            and b.flags.c_contiguous
        ):
            m, k = sa[-1], sb[-1]
            n = math.prod(sa[:-1])
            size = n * m * k
            if size >= KERNEL_MIN:
                out = alloc.empty((*sa, k), a.dtype)
                a2, b2, o3 = a.reshape(n, m), b.reshape(n, k), out.reshape(n, m, k)
                if size < threads.CHEAP_THREAD_MIN or threads.N_THREADS == 1 or n < 2:
                    KB.outer(a2, b2, o3, 0, n)
                else:
                    threads.run_parts(
                        [
                            functools.partial(KB.outer, a2, b2, o3, r0, r1)
                            for r0, r1 in threads._slabs(n, threads.N_THREADS)
                        ]
                    )
                return out
        return CpuBackend.binary("multiply", a.reshape((*sa, 1)), b.reshape((*sb[:-1], 1, sb[-1])))

    @staticmethod
    def unary_backward(kernel, g, s, derivative):
        """``g * derivative(s)`` for a unary op: the fused ``kernel`` (``"<op>_backward"``,
        or None) from ``KERNEL_MIN`` elements, else the op's own formula on arrays."""
        fn = _backward_kernel(kernel, g, s)
        if fn is None:
            d = derivative(ArrayMath, s)
            return threads.call(np.multiply, g, d) if s.size >= THREAD_MIN else g * d
        out = alloc.empty(s.shape, s.dtype if g.dtype is s.dtype else np.result_type(g, s))
        fn(flat_g(g), np.ascontiguousarray(s).reshape(-1), out.reshape(-1))
        return out

    @staticmethod
    def mul_backward(g, a, b, need_a, need_b):
        """Both products of ``mul``'s VJP; large same-shape operands in one parallel pass."""
        if (
            need_a
            and need_b
            and type(a) is np.ndarray
            and a.size >= PARALLEL_MIN
            and type(b) is np.ndarray
            and a.shape == b.shape == g.shape
            and a.dtype == b.dtype == g.dtype
            and a.dtype in _BROADCAST_DTYPES
            and a.flags.c_contiguous
            and b.flags.c_contiguous
        ):
            ga = alloc.empty(a.shape, a.dtype)
            gb = alloc.empty(a.shape, a.dtype)
            K.mul_backward_par(
                flat_g(g), a.reshape(-1), b.reshape(-1), ga.reshape(-1), gb.reshape(-1)
            )
            return ga, gb
        mul = CpuBackend.multiply
        return (mul(g, b) if need_a else None), (mul(g, a) if need_b else None)

    # -- reductions ------------------------------------------------------------------------------
    @staticmethod
    def sum(x, dims, keepdim, dtype):
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64  # PyTorch sums integers and bools in int64
        elif (x.dtype if dtype is None else dtype) == _F16:  # NOTE [Half precision]
            s = np.add.reduce(x, axis=dims, keepdims=keepdim, dtype=np.float32)
            with np.errstate(over="ignore"):  # beyond 65504 is inf, silently as in PyTorch
                return s.astype(_F16)
        elif (
            x.size >= KERNEL_MIN
            and (dtype is None or dtype == x.dtype)
            and x.dtype in _BROADCAST_DTYPES
            and x.flags.c_contiguous
            and dims is not None
        ):
            out = _sum_kernel(x, dims, keepdim)  # NOTE [Sum kernels]
            if out is not None:
                return out
        # the ufunc itself, not ``x.sum``: a warning (inf - inf) is then raised from this
        # module, where the NOTE [Quiet NumPy] filter drops it, not from NumPy's _methods
        return np.add.reduce(x, axis=dims, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def expand_back(g, shape, dims, keepdim):
        """Broadcast a reduced array ``g`` back to ``shape`` (the adjoint of a reduction)."""
        if not keepdim and dims:
            g = g.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
        if g.size == 1 and math.prod(shape) < KERNEL_MIN:
            out = np.empty(shape, g.dtype)  # small: filling is cheaper than broadcast_to
            out.fill(g.reshape(()))
            return out
        return broadcast_view(g, shape)  # large: a zero-copy view

    # -- indices ---------------------------------------------------------------------------------
    @staticmethod
    def first_out_of_range(idx, size):
        """Position of the first entry of int array ``idx`` outside ``[0, size)``, or -1."""
        if not idx.size:
            return -1
        flat = np.ascontiguousarray(idx).reshape(-1)
        return int(KI.first_out_of_range(flat.astype(np.int64, copy=False), size))

    # -- the engine's gradient buffers -------------------------------------------------------------
    @staticmethod
    def add_grads(a, b, owned):
        """``a + b`` for two gradient arrays of one slot; in place into ``a`` only when the
        engine says it owns it (NOTE [Engine], point 4)."""
        if (
            owned
            and a.dtype == b.dtype
            and a.flags.writeable
            and (a.shape == b.shape or a.shape == np.broadcast_shapes(a.shape, b.shape))
        ):
            # the flat kernel only for two C-contiguous arrays: ``reshape(-1)`` of any other
            # layout is a copy, and the sum would go into the copy
            if (
                a.size >= PARALLEL_MIN
                and a.shape == b.shape
                and a.flags.c_contiguous
                and b.flags.c_contiguous
                and a.dtype in _BROADCAST_DTYPES
            ):
                KA.accumulate_par(a.reshape(-1), b.reshape(-1))
            else:
                np.add(a, b, out=a)
            return a
        if (
            a.shape == b.shape
            and a.dtype == b.dtype
            and a.flags.c_contiguous
            and b.flags.c_contiguous
            and a.size >= PARALLEL_MIN
            and a.dtype in _BROADCAST_DTYPES
        ):
            out = alloc.empty(a.shape, a.dtype)
            KA.add_into_new_par(a.reshape(-1), b.reshape(-1), out.reshape(-1))
            return out
        out = np.add(a, b)
        return out if type(out) is np.ndarray else np.asarray(out)

    @staticmethod
    def accumulate(dst, src):
        """``dst += src`` in place (a leaf's ``.grad``), casting ``src`` to ``dst``'s dtype."""
        if (
            dst.size >= KERNEL_MIN
            and dst.flags.c_contiguous
            and dst.flags.writeable
            and (
                src.dtype == dst.dtype
                and dst.dtype in _BROADCAST_DTYPES
                and src.shape == dst.shape
                and src.flags.c_contiguous
            )
        ):
            k = KA.accumulate_par if dst.size >= PARALLEL_MIN else KA.accumulate
            k(dst.reshape(-1), src.reshape(-1))
        else:
            np.add(dst, src, out=dst, casting="unsafe")


def flat_g(g):
    """A gradient as the kernels take it: flat, or length 1 when it is a broadcast scalar
    (what ``sum().backward()`` sends; see NOTE [Elementwise kernel conventions])."""
    st = g.strides
    if st and not any(st) and g.size > 1:
        return np.array([g.flat[0]], dtype=g.dtype)
    return np.ascontiguousarray(g).reshape(-1)


CPU = CpuBackend()
register_backend("cpu", CPU)

if TYPE_CHECKING:  # mypy checks the CPU backend against the protocol (NOTE [Backend protocol])
    _CHECK: Backend = CPU
