"""Op database entries for the extra elementwise, scan and utility functions at the top level
(joined into ``_opdb.op_db``)."""

import numpy as np
from _opdb import (
    OpInfo,
    SampleInput,
    binary_samples,
    distinct,
    nonzero,
    off_integer,
    positive,
    real,
    unary_samples,
)


def _s(*args, name, **kwargs):
    return SampleInput(*args, name=name, **kwargs)


def within(low, high):
    """A domain uniform in ``[low, high)``."""

    def dom(rng, shape):
        return real(rng, shape, low, high)

    return dom


def _unary(name, ref, domain=real, **kw):
    kw.setdefault("primitives", (name.capitalize(),))
    return OpInfo(name, ref, unary_samples(domain), method=True, **kw)


def _alias(name):
    return {name: lambda m, *a, **k: getattr(m, name)(*a, **k)}


# -- references -------------------------------------------------------------------------------
def ref_lower_median(x, dim=None, keepdim=False):
    if dim is None:
        s = np.sort(x.reshape(-1))
        return np.asarray(s[(s.size - 1) // 2])
    s = np.sort(x, axis=dim)
    idx = np.argsort(x, axis=dim, kind="stable")
    k = (x.shape[dim] - 1) // 2
    v, i = np.take(s, [k], axis=dim), np.take(idx, [k], axis=dim)
    if not keepdim:
        v, i = np.squeeze(v, dim), np.squeeze(i, dim)
    return v, i


def ref_kthvalue(x, k, dim=-1, keepdim=False):
    s = np.sort(x, axis=dim)
    idx = np.argsort(x, axis=dim, kind="stable")
    v, i = np.take(s, [k - 1], axis=dim), np.take(idx, [k - 1], axis=dim)
    if not keepdim:
        v, i = np.squeeze(v, dim), np.squeeze(i, dim)
    return v, i


def ref_quantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    return np.asarray(np.quantile(x, q, axis=dim, keepdims=keepdim, method=interpolation))


def ref_cumext(fn):
    def ref(x, dim):
        if x.ndim == 0:
            return x, np.asarray(0)
        v = fn.accumulate(x, axis=dim)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        pos = np.arange(x.shape[dim]).reshape(shape)
        return v, np.maximum.accumulate(np.where(x == v, pos, 0), axis=dim)

    return ref


def ref_lerp(a, b, w):
    return a + w * (b - a)


def ref_aminmax(x, *, dim=None, keepdim=False):
    return (
        np.asarray(np.min(x, axis=dim, keepdims=keepdim)),
        np.asarray(np.max(x, axis=dim, keepdims=keepdim)),
    )


def ref_var_mean(fn):
    def ref(x, dim=None, *, correction=1, keepdim=False):
        axis = tuple(dim) if isinstance(dim, (list, tuple)) else dim
        return (
            np.asarray(fn(x, axis=axis, ddof=correction, keepdims=keepdim)),
            np.asarray(np.mean(x, axis=axis, keepdims=keepdim)),
        )

    return ref


def ref_meshgrid(*xs, indexing="ij"):
    return tuple(np.meshgrid(*xs, indexing=indexing))


def ref_block_diag(*xs):
    xs = [np.atleast_2d(x) for x in xs]
    out = np.zeros((sum(x.shape[0] for x in xs), sum(x.shape[1] for x in xs)))
    r = c = 0
    for x in xs:
        out[r : r + x.shape[0], c : c + x.shape[1]] = x
        r, c = r + x.shape[0], c + x.shape[1]
    return out


def ref_cartesian_prod(*xs):
    grids = np.meshgrid(*xs, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], 1)


def ref_trapezoid(y, x=None, *, dx=None, dim=-1):
    if x is not None:
        return np.asarray(np.trapezoid(y, x, axis=dim))
    return np.asarray(np.trapezoid(y, dx=1.0 if dx is None else dx, axis=dim))


def ref_cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    n = y.shape[dim]
    pair = np.take(y, range(1, n), axis=dim) + np.take(y, range(n - 1), axis=dim)
    if x is not None:
        d = np.diff(x)
        shape = [1] * y.ndim
        shape[dim] = d.shape[0]
        return np.cumsum(pair * d.reshape(shape), axis=dim) / 2
    return np.cumsum(pair * ((1.0 if dx is None else dx) / 2), axis=dim)


def ref_renorm(x, p, dim, maxnorm):
    axes = tuple(i for i in range(x.ndim) if i != dim % x.ndim)
    norm = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1 / p)
    return x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def ref_repeat_interleave(x, repeats, dim=None):
    return np.repeat(x, repeats, axis=dim)


def ref_histc(x, bins=100, min=0, max=0):
    return np.histogram(x, bins, range=(min, max))[0].astype(x.dtype)


def ref_unique(x, return_inverse=False, return_counts=False, dim=None):
    out = np.unique(x, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if isinstance(out, tuple):
        out = list(out)
        if return_inverse:
            out[1] = out[1].reshape(x.shape if dim is None else -1)
        return tuple(out)
    return out


def ref_unique_consecutive(x, return_counts=False):
    flat = x.reshape(-1)
    new = np.ones(flat.size, bool)
    new[1:] = flat[1:] != flat[:-1]
    starts = np.flatnonzero(new)
    vals = flat[starts]
    if return_counts:
        return vals, np.diff(np.append(starts, flat.size))
    return vals


def ref_nansum(x, dim=None, keepdim=False):
    return np.asarray(np.nansum(x, axis=dim, keepdims=keepdim))


def ref_nanmean(x, dim=None, keepdim=False):
    return np.asarray(np.nanmean(x, axis=dim, keepdims=keepdim))


# -- samples ------------------------------------------------------------------------------------
def lerp_samples(rng):
    return [
        _s(real(rng, (3, 4)), real(rng, (3, 4)), 0.3, name="scalar_low"),
        _s(real(rng, (3, 4)), real(rng, (4,)), 0.8, name="scalar_high_bcast"),
        _s(
            real(rng, (3, 4)), real(rng, (3, 4)), real(rng, (3, 4), -0.5, 1.5), name="tensor_weight"
        ),
        _s(real(rng, ()), real(rng, (5,)), real(rng, (5,)), name="0d_bcast"),
    ]


def scan_samples(rng):
    return [
        _s(distinct(rng, (6,)), 0, name="1d"),
        _s(distinct(rng, (3, 4)), 1, name="dim1"),
        _s(distinct(rng, (2, 3, 4)), -3, name="dim-3"),
        _s(distinct(rng, ()), 0, name="0d"),
    ]


def logcumsumexp_samples(rng):
    return [
        _s(real(rng, (6,)), 0, name="1d"),
        _s(real(rng, (3, 4)), 1, name="dim1"),
        _s(real(rng, (2, 3, 4), -20, 20), 0, name="spread"),
    ]


def median_samples(rng):
    return [
        _s(distinct(rng, (3, 4)), name="full_even"),
        _s(distinct(rng, (5,)), name="full_odd"),
        _s(distinct(rng, (3, 4)), 1, name="dim1", dtypes=("same", "int64")),
        _s(
            distinct(rng, (2, 3, 5)), 0, keepdim=True, name="dim0_keepdim", dtypes=("same", "int64")
        ),
    ]


def kthvalue_samples(rng):
    return [
        _s(distinct(rng, (5,)), 2, name="1d"),
        _s(distinct(rng, (3, 4)), 4, 1, name="dim1"),
        _s(distinct(rng, (3, 4)), 1, 0, keepdim=True, name="dim0_keepdim"),
    ]


def quantile_samples(rng):
    return [
        # (a tuple q is passed as a constant tensor, see op_quantile; ranks q * (n - 1) kept
        # off the integers, where the interpolation weight jumps)
        _s(distinct(rng, (7,)), 0.3, name="scalar_q"),
        _s(distinct(rng, (3, 5)), (0.35, 0.55), dim=1, name="tensor_q_dim1"),
        _s(distinct(rng, (3, 5)), 0.6, dim=0, keepdim=True, name="dim0_keepdim"),
        _s(distinct(rng, (4, 5)), (0.4, 0.6), dim=1, keepdim=True, name="tensor_q_keepdim"),
        _s(distinct(rng, (2, 6)), 0.35, dim=1, interpolation="lower", name="lower"),
        _s(distinct(rng, (2, 6)), 0.35, dim=1, interpolation="higher", name="higher"),
        _s(distinct(rng, (2, 6)), 0.35, dim=1, interpolation="midpoint", name="midpoint"),
        _s(distinct(rng, (2, 6)), 0.35, dim=1, interpolation="nearest", name="nearest"),
    ]


def quantile_op(name):
    """``quantile``/``nanquantile`` with a tuple ``q`` as a constant 1-D tensor of the
    input's dtype (a q leaf would be perturbed out of [0, 1] by the vmap checks; its
    gradient is tested in test_math_ops.py)."""

    def op(m, x, q, *args, **kwargs):
        if isinstance(q, tuple):
            q = m.tensor(q, dtype=x.dtype, device=x.device)
        return getattr(m, name)(x, q, *args, **kwargs)

    return op


def reduce_samples(rng):
    return [
        _s(real(rng, (3, 4)), name="full"),
        _s(real(rng, (3, 4)), 1, name="dim1"),
        _s(real(rng, (2, 3, 4)), (0, 2), keepdim=True, name="dims_keepdim"),
    ]


def var_mean_samples(rng):
    return [
        _s(real(rng, (3, 4)), name="full"),
        _s(real(rng, (3, 4)), 1, name="dim1"),
        _s(real(rng, (2, 3, 4)), 0, keepdim=True, correction=0, name="dim0_correction0"),
    ]


def aminmax_samples(rng):
    return [
        _s(distinct(rng, (3, 4)), name="full"),
        _s(distinct(rng, (3, 4)), dim=1, name="dim1"),
        _s(distinct(rng, (2, 3)), dim=0, keepdim=True, name="dim0_keepdim"),
    ]


def stack_samples(rng):
    return [
        _s([real(rng, (3,)), real(rng, (3,))], name="1d"),
        _s([real(rng, (2, 3)), real(rng, (1, 3))], name="2d"),
        _s([real(rng, ()), real(rng, ())], name="0d"),
    ]


def hstack_samples(rng):
    return [
        _s([real(rng, (3,)), real(rng, (2,))], name="1d"),
        _s([real(rng, (2, 3)), real(rng, (2, 1))], name="2d"),
    ]


def dstack_samples(rng):
    return [
        _s([real(rng, (3,)), real(rng, (3,))], name="1d"),
        _s([real(rng, (2, 3)), real(rng, (2, 3, 2))], name="2d_3d"),
    ]


def column_stack_samples(rng):
    return [
        _s([real(rng, (3,)), real(rng, (3, 2))], name="1d_2d"),
        _s([real(rng, ()), real(rng, (1,))], name="0d"),
    ]


def meshgrid_samples(rng):
    return [
        _s(real(rng, (3,)), real(rng, (4,)), indexing="ij", name="ij"),
        _s(real(rng, (3,)), real(rng, (4,)), real(rng, (2,)), indexing="xy", name="xy3"),
        _s(real(rng, (3,)), real(rng, (2,)), indexing="xy", name="xy"),
    ]


def tile_samples(rng):
    return [
        _s(real(rng, (3,)), (2,), name="1d"),
        _s(real(rng, (2, 3)), (2, 1, 2), name="more_reps"),
        _s(real(rng, (2, 1, 3)), (2,), name="fewer_reps"),
    ]


def repeat_interleave_samples(rng):
    return [
        _s(real(rng, (3,)), 2, name="int"),
        _s(real(rng, (2, 3)), 2, dim=1, name="int_dim1"),
        _s(real(rng, (3, 2)), np.array([1, 0, 2]), dim=0, name="tensor"),
        _s(real(rng, (2, 2)), 3, name="flat"),
    ]


def rot90_samples(rng):
    return [
        _s(real(rng, (2, 3)), name="k1"),
        _s(real(rng, (2, 3)), 2, name="k2"),
        _s(real(rng, (2, 3, 4)), -1, (2, 0), name="k3_dims"),
    ]


def broadcast_samples(rng):
    return [
        _s(real(rng, (3, 1)), real(rng, (4,)), name="2"),
        _s(real(rng, (2, 1, 3)), real(rng, ()), real(rng, (4, 1)), name="3"),
    ]


def atleast_samples(rng):
    return [
        _s(real(rng, ()), name="0d"),
        _s(real(rng, (3,)), name="1d"),
        _s(real(rng, (2, 3)), name="2d"),
        _s(real(rng, (2, 1, 2)), name="3d"),
    ]


def block_diag_samples(rng):
    return [
        _s(real(rng, (2, 3)), real(rng, (1, 1)), name="2d"),
        _s(real(rng, ()), real(rng, (2,)), real(rng, (2, 2)), name="mixed"),
    ]


def cartesian_prod_samples(rng):
    return [
        _s(real(rng, (2,)), real(rng, (3,)), name="2"),
        _s(real(rng, (2,)), real(rng, (2,)), real(rng, (3,)), name="3"),
    ]


def diff_samples(rng):
    return [
        _s(real(rng, (5,)), name="1d"),
        _s(real(rng, (3, 4)), 2, 0, name="n2_dim0"),
        _s(
            real(rng, (3, 4)),
            prepend=real(rng, (3, 1)),
            append=real(rng, (3, 2)),
            name="prepend_append",
        ),
    ]


def trapezoid_samples(rng):
    return [
        _s(real(rng, (5,)), name="1d"),
        _s(real(rng, (3, 4)), dx=0.5, dim=0, name="dx"),
        _s(real(rng, (3, 4)), np.sort(real(rng, (4,))), name="x_1d"),
        _s(real(rng, (3, 4)), np.sort(real(rng, (3, 4)), axis=1), name="x_nd"),
    ]


def cumulative_trapezoid_samples(rng):
    return [
        _s(real(rng, (5,)), name="1d"),
        _s(real(rng, (3, 4)), dx=0.5, dim=0, name="dx"),
        _s(real(rng, (3, 4)), np.sort(real(rng, (4,))), name="x_1d"),
    ]


def searchsorted_samples(rng):
    seq = np.sort(real(rng, (6,)))
    return [
        _s(seq, real(rng, (3, 4)), name="1d_seq"),
        _s(seq, np.concatenate([seq[:3], real(rng, (2,))]), right=True, name="right"),
        _s(seq, seq, side="right", name="side_right_ties"),
        _s(np.sort(real(rng, (2, 5)), axis=1), real(rng, (2, 3)), name="nd_seq"),
    ]


def bucketize_samples(rng):
    b = np.sort(real(rng, (5,)))
    return [
        _s(real(rng, (3, 4)), b, name="2d"),
        _s(np.concatenate([b, real(rng, (3,))]), b, right=True, name="right_ties"),
    ]


def histc_samples(rng):
    return [
        _s(real(rng, (20,)), bins=5, min=-2, max=2, name="range"),
        _s(real(rng, (4, 5)), bins=7, min=-1, max=1, name="clipped"),
    ]


def unique_samples(rng):
    ints = np.floor(real(rng, (12,), -3, 3))
    return [
        _s(ints, name="plain", dtypes="same"),
        _s(ints.reshape(3, 4), return_inverse=True, return_counts=True, name="inv_counts"),
        _s(
            np.floor(real(rng, (5, 2), 0, 2)),
            return_inverse=True,
            dim=0,
            name="dim0",
            dtypes=("same", "int64"),
        ),
    ]


def unique_consecutive_samples(rng):
    ints = np.floor(real(rng, (12,), -2, 2))
    return [_s(ints, name="plain", dtypes="same"), _s(ints, return_counts=True, name="counts")]


def isclose_samples(rng):
    a = real(rng, (3, 4))
    return [
        _s(a, a + 1e-9, name="close"),
        _s(a, a + real(rng, (3, 4), -1e-4, 1e-4), rtol=1e-4, atol=1e-6, name="mixed"),
    ]


def heaviside_samples(rng):
    a = np.where(rng.uniform(size=(3, 4)) < 0.3, 0.0, real(rng, (3, 4)))
    return [_s(a, real(rng, (3, 4)), name="same"), _s(a, real(rng, ()), name="bcast")]


_I64 = ("same", "int64")


op_db = [
    # ---- elementwise unary ----
    _unary("acos", np.arccos, within(-0.9, 0.9), variants=_alias("arccos"), supports_cuda=True),
    _unary("asin", np.arcsin, within(-0.9, 0.9), variants=_alias("arcsin"), supports_cuda=True),
    _unary("atan", np.arctan, variants=_alias("arctan"), supports_cuda=True),
    _unary("sinh", np.sinh, supports_cuda=True),
    _unary("cosh", np.cosh, supports_cuda=True),
    _unary("asinh", np.arcsinh, variants=_alias("arcsinh"), supports_cuda=True),
    _unary("acosh", np.arccosh, within(1.2, 3.0), variants=_alias("arccosh"), supports_cuda=True),
    _unary("atanh", np.arctanh, within(-0.9, 0.9), variants=_alias("arctanh"), supports_cuda=True),
    _unary("log10", np.log10, positive, supports_cuda=True),
    _unary("exp2", np.exp2, supports_cuda=True),
    _unary("trunc", np.trunc, off_integer, variants=_alias("fix"), supports_cuda=True),
    _unary(
        "frac",
        lambda x: x - np.trunc(x),
        off_integer,
        primitives=("Sub", "Trunc"),
        supports_cuda=True,
    ),
    _unary("deg2rad", np.deg2rad, primitives=("Mul",), supports_cuda=True),
    _unary("rad2deg", np.rad2deg, primitives=("Mul",), supports_cuda=True),
    # (torch.sgn's gradient of a real tensor is a ZeroTensor the comparison cannot read:
    # compare with torch.sign, its value and gradient on real tensors)
    _unary(
        "sgn",
        np.sign,
        nonzero,
        primitives=("Sign",),
        torch_op=lambda m, x: m.sign(x),
        supports_cuda=True,
    ),
    _unary("absolute", np.abs, nonzero, primitives=("Abs",), supports_cuda=True),
    _unary("negative", np.negative, primitives=("Neg",), supports_cuda=True),
    _unary("positive", lambda x: x, primitives=(), supports_cuda=True),
    _unary("signbit", np.signbit, supports_grad=False, dtypes="bool", supports_cuda=True),
    # ---- elementwise binary ----
    OpInfo(
        "hypot",
        np.hypot,
        binary_samples(nonzero),
        method=True,
        primitives=("Hypot",),
        supports_cuda=True,
    ),
    OpInfo(
        "logaddexp",
        np.logaddexp,
        binary_samples(real),
        method=True,
        primitives=("Logaddexp",),
        supports_cuda=True,
    ),
    OpInfo(
        "logaddexp2",
        np.logaddexp2,
        binary_samples(real),
        method=True,
        primitives=("Logaddexp2",),
        supports_cuda=True,
    ),
    OpInfo(
        "copysign",
        np.copysign,
        binary_samples(nonzero, real, scalar=-1.5),
        method=True,
        primitives=("Copysign",),
        supports_cuda=True,
    ),
    OpInfo(
        "fmax", np.fmax, binary_samples(real), method=True, primitives=("Fmax",), supports_cuda=True
    ),
    OpInfo(
        "fmin", np.fmin, binary_samples(real), method=True, primitives=("Fmin",), supports_cuda=True
    ),
    OpInfo(
        "nextafter",
        np.nextafter,
        binary_samples(real),
        method=True,
        supports_grad=False,
        primitives=("Nextafter",),
        supports_cuda=True,
    ),
    OpInfo(
        "heaviside",
        np.heaviside,
        heaviside_samples,
        method=True,
        supports_grad=False,
        primitives=("Heaviside",),
        supports_cuda=True,
    ),
    # float_power always computes in float64: cast back so the generic dtype checks apply
    OpInfo(
        "float_power",
        np.power,
        binary_samples(positive, real),
        op=lambda m, a, b: m.float_power(a, b).to(a.dtype),
        primitives=("Pow",),
        supports_cuda=True,
    ),
    OpInfo(
        "lerp",
        ref_lerp,
        lerp_samples,
        method=True,
        primitives=("Lerp",),
        supports_cuda=True,
    ),
    # ---- scans ----
    OpInfo(
        "cummax",
        ref_cumext(np.maximum),
        scan_samples,
        method=True,
        dtypes=_I64,
        primitives=("Clone", "Cumargmax", "Gather"),
        supports_cuda=True,
    ),
    OpInfo(
        "cummin",
        ref_cumext(np.minimum),
        scan_samples,
        method=True,
        dtypes=_I64,
        primitives=("Clone", "Cumargmin", "Gather"),
        supports_cuda=True,
    ),
    OpInfo(
        "logcumsumexp",
        lambda x, dim: np.logaddexp.accumulate(x, axis=dim),
        logcumsumexp_samples,
        method=True,
        primitives=("Logcumsumexp",),
        supports_cuda=True,
    ),
    # ---- reductions ----
    OpInfo(
        "median",
        ref_lower_median,
        median_samples,
        method=True,
        primitives=(
            "Any",
            "Argmax",
            "Argsort",
            "Gather",
            "Index",
            "IsNan",
            "Median",
            "Reshape",
            "ToCopy",
            "Where",
        ),
        supports_cuda=True,
    ),
    OpInfo(
        "nanmedian",
        ref_lower_median,
        median_samples,
        method=True,
        primitives=(
            "Argsort",
            "Clamp",
            "Div",
            "Gather",
            "IsNan",
            "LogicalNot",
            "Nanmedian",
            "Reshape",
            "Sub",
            "Sum",
        ),
        supports_cuda=True,
    ),
    OpInfo(
        "kthvalue",
        ref_kthvalue,
        kthvalue_samples,
        method=True,
        dtypes=_I64,
        primitives=("Argsort", "Gather", "Index", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "quantile",
        ref_quantile,
        quantile_samples,
        op=quantile_op("quantile"),
        supports_cuda=True,
        primitives=(
            "Any",
            "Argsort",
            "Ceil",
            "Floor",
            "Gather",
            "IsNan",
            "Lerp",
            "Mul",
            "Permute",
            "Reshape",
            "Round",
            "Sub",
            "ToCopy",
            "Where",
        ),
    ),
    OpInfo(
        "nanquantile",
        ref_quantile,
        quantile_samples,
        op=quantile_op("nanquantile"),
        supports_cuda=True,
        primitives=(
            "Argsort",
            "Ceil",
            "Floor",
            "Gather",
            "IsNan",
            "Lerp",
            "LogicalNot",
            "Lt",
            "Mul",
            "Permute",
            "Reshape",
            "Round",
            "Sub",
            "Sum",
            "ToCopy",
            "Where",
        ),
    ),
    OpInfo(
        "nansum",
        ref_nansum,
        reduce_samples,
        method=True,
        primitives=("Nansum",),
        supports_cuda=True,
    ),
    OpInfo(
        "nanmean",
        ref_nanmean,
        reduce_samples,
        method=True,
        primitives=("Div", "IsNan", "LogicalNot", "Nansum", "Sum", "ToCopy"),
        supports_cuda=True,
    ),
    OpInfo(
        "var_mean",
        ref_var_mean(np.var),
        var_mean_samples,
        primitives=("Div", "Sum", "Var"),
        supports_cuda=True,
    ),
    OpInfo(
        "std_mean",
        ref_var_mean(np.std),
        var_mean_samples,
        primitives=("Div", "SafeSqrt", "Sum", "Var"),
        supports_cuda=True,
    ),
    OpInfo(
        "aminmax",
        ref_aminmax,
        aminmax_samples,
        method=True,
        primitives=("Amax", "Amin"),
        supports_cuda=True,
    ),
    OpInfo(
        "msort",
        lambda x: np.sort(x, axis=0),
        lambda rng: [_s(distinct(rng, (4, 3)), name="2d"), _s(distinct(rng, (5,)), name="1d")],
        method=True,
        primitives=("Argsort", "Gather"),
        supports_cuda=True,
    ),
    OpInfo(
        "count_nonzero",
        lambda x, dim=None: np.asarray(np.count_nonzero(x, axis=dim)),
        lambda rng: [
            _s(np.floor(real(rng, (3, 4))), name="full"),
            _s(np.floor(real(rng, (3, 4))), dim=1, name="dim1"),
            _s(np.floor(real(rng, (2, 3, 4))), dim=(0, 2), name="dims"),
        ],
        method=True,
        supports_grad=False,
        dtypes="int64",
        primitives=("Ne", "Sum"),
        supports_cuda=True,
    ),
    # ---- stacking, grids and shapes ----
    OpInfo(
        "vstack",
        lambda ts: np.vstack(ts),
        stack_samples,
        variants=_alias("row_stack"),
        primitives=("Cat", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "hstack", lambda ts: np.hstack(ts), hstack_samples, primitives=("Cat",), supports_cuda=True
    ),
    OpInfo(
        "dstack",
        lambda ts: np.dstack(ts),
        dstack_samples,
        primitives=("Cat", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "column_stack",
        lambda ts: np.column_stack(ts),
        column_stack_samples,
        primitives=("Cat", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "meshgrid",
        ref_meshgrid,
        meshgrid_samples,
        primitives=("Expand", "Permute", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "broadcast_tensors",
        lambda *xs: tuple(np.broadcast_arrays(*xs)),
        broadcast_samples,
        primitives=("Expand",),
        supports_cuda=True,
    ),
    OpInfo(
        "atleast_1d", np.atleast_1d, atleast_samples, primitives=("Reshape",), supports_cuda=True
    ),
    OpInfo(
        "atleast_2d", np.atleast_2d, atleast_samples, primitives=("Reshape",), supports_cuda=True
    ),
    OpInfo(
        "atleast_3d", np.atleast_3d, atleast_samples, primitives=("Reshape",), supports_cuda=True
    ),
    OpInfo(
        "tile",
        np.tile,
        tile_samples,
        method=True,
        primitives=("Expand", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "repeat_interleave",
        ref_repeat_interleave,
        repeat_interleave_samples,
        method=True,
        primitives=("Expand", "Index", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "rot90",
        lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims),
        rot90_samples,
        method=True,
        primitives=("Flip", "Permute"),
        supports_cuda=True,
    ),
    OpInfo(
        "block_diag",
        ref_block_diag,
        block_diag_samples,
        primitives=("Cat", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "cartesian_prod",
        ref_cartesian_prod,
        cartesian_prod_samples,
        primitives=("Cat", "Expand", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "renorm",
        ref_renorm,
        lambda rng: [
            _s(real(rng, (3, 4)), 2, 0, 1.5, name="p2_dim0"),
            _s(real(rng, (2, 3, 2)), 1, -1, 1.0, name="p1_dim-1"),
            _s(real(rng, (3, 4)) * 0.1, 3, 1, 5.0, name="below"),
        ],
        method=True,
        primitives=("Renorm",),
        supports_cuda=True,
    ),
    OpInfo(
        "ravel", np.ravel, atleast_samples, method=True, primitives=("Reshape",), supports_cuda=True
    ),
    OpInfo(
        "argwhere",
        np.argwhere,
        lambda rng: [
            _s(np.floor(real(rng, (3, 4), -1, 1)), name="2d"),
            _s(np.floor(real(rng, (5,), -1, 1)), name="1d"),
        ],
        method=True,
        supports_grad=False,
        dtypes="int64",
        primitives=("Nonzero",),
        # the output shape depends on the data, as nonzero's: no batching rule
        supports_vmap=False,
        supports_cuda=True,
    ),
    # ---- differences and integrals ----
    OpInfo(
        "diff",
        np.diff,
        diff_samples,
        method=True,
        primitives=("Cat", "Index", "Sub"),
        supports_cuda=True,
    ),
    OpInfo(
        "trapezoid",
        ref_trapezoid,
        trapezoid_samples,
        variants=_alias("trapz"),
        primitives=("Add", "Div", "Index", "Mul", "Reshape", "Sub", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "cumulative_trapezoid",
        ref_cumulative_trapezoid,
        cumulative_trapezoid_samples,
        primitives=("Add", "Cumsum", "Div", "Index", "Mul", "Reshape", "Sub"),
        supports_cuda=True,
    ),
    # ---- searching, counting and sets ----
    OpInfo(
        "searchsorted",
        lambda s, v, right=False, side=None, out_int32=False: (
            np.asarray(np.searchsorted(s, v, side="right" if right or side == "right" else "left"))
            if s.ndim == 1
            else np.stack([np.searchsorted(a, b) for a, b in zip(s, v)])
        ),
        searchsorted_samples,
        supports_grad=False,
        dtypes="int64",
        primitives=("Searchsorted",),
        supports_cuda=True,
    ),
    OpInfo(
        "bucketize",
        lambda x, b, right=False: np.searchsorted(b, x, side="right" if right else "left"),
        bucketize_samples,
        supports_grad=False,
        dtypes="int64",
        primitives=("Searchsorted",),
        supports_cuda=True,
    ),
    OpInfo(
        "histc",
        ref_histc,
        histc_samples,
        method=True,
        supports_grad=False,
        primitives=("Histc",),
        supports_cuda=True,
    ),
    OpInfo(
        "unique",
        ref_unique,
        unique_samples,
        method=True,
        supports_grad=False,
        dtypes=("same", "int64", "int64"),
        primitives=("Unique",),
        # the output size depends on the data: no batching rule (nor in PyTorch)
        supports_vmap=False,
        supports_cuda=True,
    ),
    OpInfo(
        "unique_consecutive",
        ref_unique_consecutive,
        unique_consecutive_samples,
        method=True,
        supports_grad=False,
        dtypes=("same", "int64"),
        primitives=("Unique",),
        supports_vmap=False,
        supports_cuda=True,
    ),
    OpInfo(
        "isclose",
        np.isclose,
        isclose_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("Abs", "Add", "BitwiseAnd", "BitwiseOr", "Eq", "IsFinite", "Le", "Mul", "Sub"),
        supports_cuda=True,
    ),
]
