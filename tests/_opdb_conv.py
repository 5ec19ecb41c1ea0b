"""Op database entries for the convolution, pooling and ``unfold``/``fold`` functionals
(``numbagrad/nn/_conv.py``, ``nn/_conv_functional.py``; joined into ``_opdb.op_db``).

References are NumPy sliding windows (``sliding_window_view``) and, for the transposed
convolution and ``fold``, the scatter of each kernel tap, written independently of the
``im2col`` kernels. Max-pooling samples are random, so no window has a tie and central
differences hold. Samples have no bias: it makes the op affine (the linearity check of
``test_primitives.py`` wants it linear); ``test_nn_conv.py`` checks biases against
PyTorch."""

import itertools
import math

import numpy as np
from _opdb import OpInfo, SampleInput, real

_s = SampleInput


def _nnf(name):
    def op(m, *args, **kwargs):
        return getattr(m.nn.functional, name)(*args, **kwargs)

    return op


def _t(v, k):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * k


def _windows(xp, kernel, stride, dilation):
    """``(N, C, *out, *kernel)`` windows of the padded ``xp``."""
    k = len(kernel)
    span = tuple(d * (kk - 1) + 1 for kk, d in zip(kernel, dilation))
    win = np.lib.stride_tricks.sliding_window_view(xp, span, axis=tuple(range(2, 2 + k)))
    sl = (slice(None), slice(None), *tuple(slice(None, None, s) for s in stride))
    sl += tuple(slice(None, None, d) for d in dilation)
    return win[sl]


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    k = w.ndim - 2
    unbatched = x.ndim == k + 1
    if unbatched:
        x = x[None]
    stride, dilation = _t(stride, k), _t(dilation, k)
    if padding == "same":
        pads = [
            (d * (kk - 1) // 2, d * (kk - 1) - d * (kk - 1) // 2)
            for kk, d in zip(w.shape[2:], dilation)
        ]
    elif padding == "valid":
        pads = [(0, 0)] * k
    else:
        pads = [(p, p) for p in _t(padding, k)]
    xp = np.pad(x, [(0, 0), (0, 0), *pads])
    win = _windows(xp, w.shape[2:], stride, dilation)  # (N, C, *out, *kernel)
    n, c = x.shape[:2]
    o = w.shape[0]
    win = win.reshape((n, groups, c // groups, *win.shape[2:]))
    wg = w.reshape((groups, o // groups, *w.shape[1:]))
    letters = "xyz"[:k]
    kl = "pqr"[:k]
    out = np.einsum(f"ngc{letters}{kl},goc{kl}->ngo{letters}", win, wg)
    out = out.reshape((n, o, *out.shape[3:]))
    if b is not None:
        out = out + b.reshape((o,) + (1,) * k)
    return out[0] if unbatched else out


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    k = w.ndim - 2
    unbatched = x.ndim == k + 1
    if unbatched:
        x = x[None]
    stride, padding = _t(stride, k), _t(padding, k)
    output_padding, dilation = _t(output_padding, k), _t(dilation, k)
    n, cin = x.shape[:2]
    opg = w.shape[1]
    sp = x.shape[2:]
    full = tuple(
        (i - 1) * s + d * (kk - 1) + 1 + op
        for i, s, d, kk, op in zip(sp, stride, dilation, w.shape[2:], output_padding)
    )
    out = np.zeros((n, opg * groups, *full))
    xg = x.reshape((n, groups, cin // groups, *sp))
    wg = w.reshape((groups, cin // groups, opg, *w.shape[2:]))
    letters = "xyz"[:k]
    for tap in itertools.product(*[range(kk) for kk in w.shape[2:]]):
        contrib = np.einsum(f"ngc{letters},gco->ngo{letters}", xg, wg[(Ellipsis, *tap)])
        contrib = contrib.reshape((n, opg * groups, *sp))
        sl = tuple(
            slice(t * d, t * d + (i - 1) * s + 1, s)
            for t, d, i, s in zip(tap, dilation, sp, stride)
        )
        out[(slice(None), slice(None), *sl)] += contrib
    crop = tuple(slice(p, f - p) for p, f in zip(padding, full))
    out = out[(slice(None), slice(None), *crop)]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * k)
    return out[0] if unbatched else out


def _pool_out(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def ref_max_pool(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, k=2):
    kernel = _t(kernel_size, k)
    stride = kernel if stride is None else _t(stride, k)
    padding, dilation = _t(padding, k), _t(dilation, k)
    lead = x.shape[:-k]
    x2 = x.reshape((-1, 1, *x.shape[-k:]))
    sp = x.shape[-k:]
    outs = [
        _pool_out(n, kk, s, p, d, ceil_mode)
        for n, kk, s, p, d in zip(sp, kernel, stride, padding, dilation)
    ]
    need = [(o - 1) * s + d * (kk - 1) + 1 for o, s, d, kk in zip(outs, stride, dilation, kernel)]
    pads = [(p, max(nd - n - p, 0)) for p, nd, n in zip(padding, need, sp)]
    xp = np.pad(x2, [(0, 0), (0, 0), *pads], constant_values=-np.inf)
    win = _windows(xp, kernel, stride, dilation)
    win = win[(slice(None), slice(None), *tuple(slice(0, o) for o in outs))]
    out = win.max(axis=tuple(range(-k, 0)))
    return out.reshape(lead + tuple(outs))


def ref_avg_pool(
    x,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
    k=2,
):
    kernel = _t(kernel_size, k)
    stride = kernel if stride is None else _t(stride, k)
    padding = _t(padding, k)
    sp = x.shape[-k:]
    outs = [
        _pool_out(n, kk, s, p, 1, ceil_mode) for n, kk, s, p in zip(sp, kernel, stride, padding)
    ]
    out = np.zeros(x.shape[:-k] + tuple(outs))
    for pos in itertools.product(*[range(o) for o in outs]):
        starts = [i * s - p for i, s, p in zip(pos, stride, padding)]
        ends = [min(st + kk, n + p) for st, kk, n, p in zip(starts, kernel, sp, padding)]
        size = np.prod([e - st for st, e in zip(starts, ends)])
        lo = [max(st, 0) for st in starts]
        hi = [min(e, n) for e, n in zip(ends, sp)]
        box = x[(Ellipsis, *tuple(slice(a, b) for a, b in zip(lo, hi)))]
        total = box.sum(axis=tuple(range(-k, 0)))
        if divisor_override is not None:
            div = divisor_override
        elif count_include_pad:
            div = size
        else:
            div = np.prod([b - a for a, b in zip(lo, hi)])
        out[(Ellipsis, *pos)] = total / div
    return out


def _adaptive(x, output_size, k, reduce):
    sp = x.shape[-k:]
    outs = _t(output_size, k)
    outs = tuple(n if o is None else o for o, n in zip(outs, sp))
    out = np.zeros(x.shape[:-k] + outs)
    for pos in itertools.product(*[range(o) for o in outs]):
        sl = tuple(slice((i * n) // o, -((-(i + 1) * n) // o)) for i, n, o in zip(pos, sp, outs))
        out[(Ellipsis, *pos)] = reduce(x[(Ellipsis, *sl)], axis=tuple(range(-k, 0)))
    return out


def ref_unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    kernel, dilation, padding, stride = (_t(v, 2) for v in (kernel_size, dilation, padding, stride))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    win = _windows(xp, kernel, stride, dilation)  # (N, C, oh, ow, kh, kw)
    n, c, oh, ow, kh, kw = win.shape
    out = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    return out[0] if unbatched else out


def ref_fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    unbatched = x.ndim == 2
    if unbatched:
        x = x[None]
    size, kernel, dilation, padding, stride = (
        _t(v, 2) for v in (output_size, kernel_size, dilation, padding, stride)
    )
    n = x.shape[0]
    c = x.shape[1] // (kernel[0] * kernel[1])
    blocks = [
        (s + 2 * p - d * (kk - 1) - 1) // st + 1
        for s, p, d, kk, st in zip(size, padding, dilation, kernel, stride)
    ]
    cols = x.reshape(n, c, kernel[0], kernel[1], blocks[0], blocks[1])
    out = np.zeros((n, c, size[0] + 2 * padding[0], size[1] + 2 * padding[1]))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            ys = slice(
                i * dilation[0], i * dilation[0] + (blocks[0] - 1) * stride[0] + 1, stride[0]
            )
            xs = slice(
                j * dilation[1], j * dilation[1] + (blocks[1] - 1) * stride[1] + 1, stride[1]
            )
            out[:, :, ys, xs] += cols[:, :, i, j]
    out = out[:, :, padding[0] : padding[0] + size[0], padding[1] : padding[1] + size[1]]
    return out[0] if unbatched else out


def ref_max_unpool(x, idx, kernel_size, stride=None, padding=0, output_size=None, k=2):
    kernel = _t(kernel_size, k)
    stride = kernel if stride is None else _t(stride, k)
    padding = _t(padding, k)
    if output_size is None:
        size = tuple(
            (n - 1) * s + kk - 2 * p for n, s, kk, p in zip(x.shape[-k:], stride, kernel, padding)
        )
    else:
        size = tuple(output_size)[-k:]
    lead = x.shape[:-k]
    out = np.zeros((int(np.prod(lead)), int(np.prod(size))))
    xf, fi = x.reshape(out.shape[0], -1), idx.reshape(out.shape[0], -1)
    for r in range(out.shape[0]):
        out[r, fi[r]] = xf[r]
    return out.reshape(lead + size)


def _unpool_sample(rng, shape, size, name, **kw):
    """Values ``shape`` and distinct random flat indices into planes of ``size`` (distinct:
    the gradient is defined)."""
    k = len(size)
    lead, q = shape[:-k], int(np.prod(shape[-k:]))
    total = int(np.prod(size))
    idx = np.stack([rng.permutation(total)[:q] for _ in range(int(np.prod(lead)))])
    return _s(real(rng, shape), idx.reshape(shape).astype(np.int64), name=name, **kw)


def max_unpool1d_samples(rng):
    return [
        _unpool_sample(rng, (1, 2, 3), (6,), "small", kernel_size=2),
        _unpool_sample(
            rng, (2, 3, 3), (9,), "padded", kernel_size=3, stride=3, padding=1, output_size=(9,)
        ),
    ]


def max_unpool2d_samples(rng):
    return [
        _unpool_sample(rng, (1, 1, 2, 2), (4, 4), "small", kernel_size=2),
        _unpool_sample(rng, (2, 3, 3), (7, 7), "sized", kernel_size=2, output_size=(7, 7)),
    ]


def max_unpool3d_samples(rng):
    return [_unpool_sample(rng, (1, 2, 1, 2), (4, 2, 4), "small", kernel_size=2)]


# -- samples -------------------------------------------------------------------------------
def conv1d_samples(rng):
    return [
        _s(real(rng, (1, 1, 5)), real(rng, (1, 1, 3)), padding=1, name="small"),
        _s(real(rng, (2, 3, 7)), real(rng, (4, 3, 3)), name="plain"),
        _s(real(rng, (3, 6)), real(rng, (2, 3, 2)), stride=2, padding=1, name="unbatched"),
        _s(
            real(rng, (2, 4, 8)),
            real(rng, (6, 2, 3)),
            groups=2,
            dilation=2,
            padding="same",
            name="groups",
        ),
    ]


def conv2d_samples(rng):
    return [
        _s(real(rng, (1, 1, 3, 3)), real(rng, (1, 1, 2, 2)), stride=(1, 2), name="small"),
        _s(real(rng, (2, 2, 5, 4)), real(rng, (3, 2, 3, 2)), name="plain"),
        _s(
            real(rng, (1, 2, 6, 5)),
            real(rng, (2, 2, 3, 3)),
            stride=(2, 1),
            padding=(1, 0),
            dilation=(1, 2),
            name="strided",
        ),
        _s(
            real(rng, (2, 3, 4, 4)),
            real(rng, (3, 1, 2, 2)),
            groups=3,
            padding="same",
            name="depthwise",
        ),
    ]


def conv3d_samples(rng):
    return [
        _s(real(rng, (1, 1, 2, 2, 2)), real(rng, (1, 1, 2, 1, 2)), padding=(0, 1, 0), name="small"),
        _s(real(rng, (1, 2, 4, 3, 4)), real(rng, (2, 2, 2, 2, 3)), padding=1, name="plain"),
        _s(real(rng, (2, 3, 3, 3)), real(rng, (1, 2, 2, 1, 2)), stride=2, name="unbatched"),
    ]


def conv_transpose1d_samples(rng):
    return [
        _s(real(rng, (1, 2, 3)), real(rng, (2, 1, 2)), stride=2, output_padding=1, name="small"),
        _s(real(rng, (2, 3, 5)), real(rng, (3, 2, 3)), name="plain"),
        _s(
            real(rng, (2, 4, 4)),
            real(rng, (4, 1, 3)),
            stride=2,
            padding=1,
            output_padding=1,
            groups=2,
            name="strided",
        ),
        _s(real(rng, (2, 4)), real(rng, (2, 3, 2)), dilation=2, name="unbatched"),
    ]


def conv_transpose2d_samples(rng):
    return [
        _s(
            real(rng, (1, 1, 2, 2)),
            real(rng, (1, 2, 2, 2)),
            stride=(1, 2),
            padding=(1, 0),
            name="small",
        ),
        _s(real(rng, (1, 2, 3, 4)), real(rng, (2, 3, 2, 3)), stride=(2, 1), name="plain"),
        _s(
            real(rng, (2, 2, 3, 3)),
            real(rng, (2, 2, 3, 3)),
            stride=2,
            padding=1,
            output_padding=(1, 0),
            dilation=(1, 2),
            groups=2,
            name="strided",
        ),
    ]


def conv_transpose3d_samples(rng):
    return [
        _s(real(rng, (1, 1, 2, 1, 2)), real(rng, (1, 1, 2, 2, 2)), name="small"),
        _s(
            real(rng, (1, 2, 2, 3, 2)),
            real(rng, (2, 1, 2, 2, 2)),
            stride=2,
            padding=(0, 1, 0),
            name="plain",
        ),
    ]


def max_pool1d_samples(rng):
    return [
        _s(real(rng, (1, 1, 6)), 3, 2, 1, name="small"),
        _s(real(rng, (2, 3, 7)), 2, name="plain"),
        _s(real(rng, (3, 8)), 3, 2, 1, ceil_mode=True, name="ceil"),
        _s(real(rng, (1, 2, 9)), 2, 1, dilation=3, name="dilated"),
    ]


def max_pool2d_samples(rng):
    return [
        _s(real(rng, (1, 3, 4)), 2, (1, 2), name="small"),
        _s(real(rng, (2, 2, 6, 5)), 2, name="plain"),
        _s(real(rng, (1, 3, 7, 7)), 3, 2, 1, ceil_mode=True, name="ceil"),
        _s(real(rng, (2, 5, 6)), (2, 3), (1, 2), (1, 1), dilation=(2, 1), name="unbatched"),
    ]


def max_pool3d_samples(rng):
    return [
        _s(real(rng, (1, 2, 2, 4)), 2, name="small"),
        _s(real(rng, (1, 2, 4, 5, 4)), 2, stride=(1, 2, 2), padding=1, name="plain"),
    ]


def avg_pool1d_samples(rng):
    return [
        _s(real(rng, (1, 1, 6)), 3, 2, 1, name="small"),
        _s(real(rng, (2, 3, 7)), 2, name="plain"),
        _s(real(rng, (3, 8)), 3, 2, 1, ceil_mode=True, count_include_pad=False, name="ceil"),
    ]


def avg_pool2d_samples(rng):
    return [
        _s(real(rng, (1, 3, 4)), 2, (1, 2), name="small"),
        _s(real(rng, (2, 2, 6, 5)), 2, name="plain"),
        _s(real(rng, (1, 3, 7, 7)), 3, 2, 1, ceil_mode=True, name="ceil"),
        _s(real(rng, (2, 5, 6)), (2, 3), 1, (1, 1), count_include_pad=False, name="nopad"),
        _s(real(rng, (1, 2, 4, 4)), 3, 1, 1, divisor_override=4, name="divisor"),
    ]


def avg_pool3d_samples(rng):
    return [
        _s(real(rng, (1, 2, 2, 4)), 2, name="small"),
        _s(real(rng, (1, 2, 4, 5, 4)), 2, stride=(1, 2, 2), padding=1, name="plain"),
    ]


def adaptive1d_samples(rng):
    return [
        _s(real(rng, (1, 7)), 3, name="small"),
        _s(real(rng, (2, 3, 7)), 3, name="shrink"),
        _s(real(rng, (3, 4)), 6, name="grow"),
    ]


def adaptive2d_samples(rng):
    return [
        _s(real(rng, (1, 3, 4)), (2, 3), name="small"),
        _s(real(rng, (2, 2, 7, 5)), (3, 2), name="shrink"),
        _s(real(rng, (3, 4, 5)), (None, 3), name="none"),
    ]


def adaptive3d_samples(rng):
    return [
        _s(real(rng, (1, 2, 2, 3)), (1, 2, 2), name="small"),
        _s(real(rng, (1, 2, 4, 5, 3)), (2, 3, 2), name="plain"),
    ]


def unfold_samples(rng):
    return [
        _s(real(rng, (1, 3, 4)), 2, padding=(0, 1), name="small"),
        _s(real(rng, (2, 3, 5, 4)), (2, 3), name="plain"),
        _s(real(rng, (2, 6, 5)), 2, dilation=(2, 1), padding=1, stride=2, name="unbatched"),
    ]


def fold_samples(rng):
    return [
        _s(real(rng, (4, 4)), (3, 3), 2, name="small"),
        _s(real(rng, (2, 12, 12)), (4, 5), 2, name="plain"),
        _s(real(rng, (8, 9)), (5, 5), 2, dilation=(2, 1), padding=1, stride=2, name="unbatched"),
    ]


def _conv_entry(name, ref, samples, prims):
    return OpInfo(
        f"nn.functional.{name}",
        ref,
        samples,
        op=_nnf(name),
        tol32=(1e-4, 1e-4),
        primitives=prims,
    )


def _pool(name, ref, samples, k, **kw):
    def r(x, *args, **kwargs):
        return ref(x, *args, k=k, **kwargs)

    kw.setdefault("op", _nnf(name))
    return OpInfo(f"nn.functional.{name}", r, samples, **kw)


def _max_pool_op(name, k):
    """``F.<name>``, refusing (in both libraries) a window with every tap in the padding
    (possible with dilation): PyTorch returns -inf with an out-of-range index there and its
    backward then writes outside the gradient (heap corruption, fuzz seed 1001443), so the
    fuzzer must not reach it; numbagrad's -inf is tested in tests/test_nn_conv.py."""
    f = _nnf(name)

    def op(m, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, **kw):
        ks = _t(kernel_size, k)
        st = _t(stride if stride not in (None, ()) else kernel_size, k)
        pd, dl = _t(padding, k), _t(dilation, k)
        for n, kk, s, p, d in zip(tuple(x.shape)[-k:], ks, st, pd, dl):
            for i in range(max(_pool_out(n, kk, s, p, d, ceil_mode), 0)):
                if not any(0 <= i * s - p + j * d < n for j in range(kk)):
                    raise RuntimeError(f"{name}: a window lies wholly in the padding")
        return f(m, x, kernel_size, stride, padding, dilation, ceil_mode, **kw)

    return op


def _adaptive_entry(name, k, reduce, prims):
    def r(x, output_size):
        return _adaptive(x, output_size, k, reduce)

    adaptive_samples = {1: adaptive1d_samples, 2: adaptive2d_samples, 3: adaptive3d_samples}[k]
    return OpInfo(f"nn.functional.{name}", r, adaptive_samples, op=_nnf(name), primitives=prims)


_MAX = ("MaxPoolIndices", "Reshape", "WindowGather")
# with dilation a window can lie wholly in the padding: -inf there (Lt, Where)
_MAX_DILATED = ("Lt", "MaxPoolIndices", "Reshape", "Where", "WindowGather")
_UNPOOL = ("Reshape", "WindowPut")
_AVG = ("Add", "Cat", "Index", "Mul", "Reshape", "Sum")
_AVG_WIN = ("Add", "Cat", "Index", "Mul")  # avg_pool: strided slices of the padded input

op_db = [
    # (Clone: the output made contiguous; Cat: the asymmetric 'same' padding)
    _conv_entry(
        "conv1d", ref_conv, conv1d_samples, ("Clone", "Im2Col", "Matmul", "Permute", "Reshape")
    ),
    _conv_entry(
        "conv2d",
        ref_conv,
        conv2d_samples,
        ("Cat", "Clone", "Im2Col", "Matmul", "Permute", "Reshape"),
    ),
    _conv_entry("conv3d", ref_conv, conv3d_samples, ("Im2Col", "Matmul", "Permute", "Reshape")),
    OpInfo(
        "nn.functional.conv_transpose1d",
        ref_conv_transpose,
        conv_transpose1d_samples,
        op=_nnf("conv_transpose1d"),
        tol32=(1e-4, 1e-4),
        primitives=("Col2Im", "Matmul", "Permute", "Reshape"),
    ),
    OpInfo(
        "nn.functional.conv_transpose2d",
        ref_conv_transpose,
        conv_transpose2d_samples,
        op=_nnf("conv_transpose2d"),
        tol32=(1e-4, 1e-4),
        primitives=("Col2Im", "Matmul", "Permute", "Reshape"),
    ),
    OpInfo(
        "nn.functional.conv_transpose3d",
        ref_conv_transpose,
        conv_transpose3d_samples,
        op=_nnf("conv_transpose3d"),
        tol32=(1e-4, 1e-4),
        primitives=("Col2Im", "Matmul", "Permute", "Reshape"),
    ),
    OpInfo(
        "nn.functional.unfold",
        ref_unfold,
        unfold_samples,
        op=_nnf("unfold"),
        primitives=("Im2Col", "Permute"),
    ),
    OpInfo(
        "nn.functional.fold",
        ref_fold,
        fold_samples,
        op=_nnf("fold"),
        primitives=("Col2Im", "Permute"),
    ),
    _pool(
        "max_pool1d",
        ref_max_pool,
        max_pool1d_samples,
        1,
        primitives=_MAX_DILATED,
        op=_max_pool_op("max_pool1d", 1),
    ),
    _pool(
        "max_pool2d",
        ref_max_pool,
        max_pool2d_samples,
        2,
        primitives=_MAX_DILATED,
        op=_max_pool_op("max_pool2d", 2),
    ),
    _pool(
        "max_pool3d",
        ref_max_pool,
        max_pool3d_samples,
        3,
        primitives=_MAX,
        op=_max_pool_op("max_pool3d", 3),
    ),
    _pool("max_unpool1d", ref_max_unpool, max_unpool1d_samples, 1, primitives=_UNPOOL),
    _pool("max_unpool2d", ref_max_unpool, max_unpool2d_samples, 2, primitives=_UNPOOL),
    _pool("max_unpool3d", ref_max_unpool, max_unpool3d_samples, 3, primitives=_UNPOOL),
    _pool("avg_pool1d", ref_avg_pool, avg_pool1d_samples, 1, primitives=_AVG_WIN),
    _pool("avg_pool2d", ref_avg_pool, avg_pool2d_samples, 2, primitives=_AVG_WIN),
    _pool("avg_pool3d", ref_avg_pool, avg_pool3d_samples, 3, primitives=_AVG_WIN),
    _adaptive_entry("adaptive_avg_pool1d", 1, np.mean, _AVG),
    _adaptive_entry("adaptive_avg_pool2d", 2, np.mean, _AVG),
    _adaptive_entry("adaptive_avg_pool3d", 3, np.mean, _AVG),
    _adaptive_entry(
        "adaptive_max_pool1d", 1, np.max, ("AdaptiveMaxIndices", "Reshape", "WindowGather")
    ),
    _adaptive_entry(
        "adaptive_max_pool2d", 2, np.max, ("AdaptiveMaxIndices", "Reshape", "WindowGather")
    ),
    _adaptive_entry(
        "adaptive_max_pool3d", 3, np.max, ("AdaptiveMaxIndices", "Reshape", "WindowGather")
    ),
]


# -- interpolate (numbagrad/nn/_resample.py) ------------------------------------------------------
def _ref_resample_axis(mode, n_in, n_out, align, scale):
    """The dense ``(n_out, n_in)`` matrix of one axis, written per output from PyTorch's
    formulas (``UpSample.h``) in float64, except the nearest index, which PyTorch takes in
    float32 for every dtype."""
    m = np.zeros((n_out, n_in))
    if align:
        r = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        r = 1.0 / scale if scale else n_in / n_out
    for o in range(n_out):
        if mode in ("nearest", "nearest-exact"):
            s32 = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
            if mode == "nearest" and n_out == n_in:
                i = o
            elif mode == "nearest" and n_out == 2 * n_in:
                i = o // 2
            elif mode == "nearest":
                i = min(math.floor(np.float32(o) * s32), n_in - 1)
            else:
                i = min(math.floor(np.float32((o + 0.5) * float(s32))), n_in - 1)
            m[o, i] += 1.0
        elif mode in ("linear", "bilinear", "trilinear"):
            if n_out == n_in:
                m[o, o] += 1.0
                continue
            src = r * o if align else max(r * (o + 0.5) - 0.5, 0.0)
            i0 = min(math.floor(src), n_in - 1)
            lam = min(max(src - i0, 0.0), 1.0)
            m[o, i0] += 1.0 - lam
            m[o, min(i0 + 1, n_in - 1)] += lam
        else:  # bicubic
            src = r * o if align else r * (o + 0.5) - 0.5
            i0 = math.floor(src)
            for j, w in enumerate(_ref_cubic(src - i0)):
                m[o, min(max(i0 - 1 + j, 0), n_in - 1)] += w
    return m


def ref_interpolate(
    x, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None
):
    k = x.ndim - 2
    spatial = x.shape[2:]
    if size is not None:
        out = _t(size, k)
        scales = (None,) * k
    else:
        scales = _t(scale_factor, k)
        out = tuple(math.floor(n * s) for n, s in zip(spatial, scales))
        if recompute_scale_factor:
            scales = (None,) * k
    y = x
    for j in range(k):
        m = _ref_resample_axis(mode, spatial[j], out[j], bool(align_corners), scales[j])
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, 2 + j, 0), axes=1), 0, 2 + j)
    return y


def interpolate_nearest_samples(rng):
    return [
        _s(real(rng, (1, 2, 3)), scale_factor=2, name="small"),
        _s(real(rng, (2, 1, 5)), size=3, mode="nearest-exact", name="exact_1d"),
        _s(real(rng, (1, 2, 4, 5)), scale_factor=1.7, name="scale"),
        _s(real(rng, (1, 1, 3, 5)), size=(7, 5), mode="nearest-exact", name="exact_2d"),
        _s(real(rng, (1, 2, 2, 3, 2)), scale_factor=(2, 0.7, 1.5), name="3d"),
    ]


def interpolate_linear_samples(rng):
    return [
        _s(real(rng, (1, 2, 3)), scale_factor=2, mode="linear", name="small"),
        _s(real(rng, (2, 1, 5)), size=3, mode="linear", align_corners=True, name="aligned_1d"),
        _s(real(rng, (1, 2, 4, 5)), size=(4, 8), mode="bilinear", name="same_height"),
        _s(
            real(rng, (2, 1, 3, 4)),
            scale_factor=(1.5, 0.6),
            mode="bilinear",
            align_corners=True,
            name="aligned_2d",
        ),
        _s(
            real(rng, (1, 2, 3, 4)),
            scale_factor=1.7,
            mode="bilinear",
            recompute_scale_factor=True,
            name="recompute",
        ),
        _s(real(rng, (1, 1, 2, 3, 2)), scale_factor=(2, 0.7, 1.5), mode="trilinear", name="3d"),
        _s(
            real(rng, (1, 2, 2, 2, 3)),
            size=(3, 1, 4),
            mode="trilinear",
            align_corners=True,
            name="aligned_3d",
        ),
    ]


def interpolate_bicubic_samples(rng):
    return [
        _s(real(rng, (1, 1, 2, 3)), scale_factor=2, mode="bicubic", name="small"),
        _s(
            real(rng, (1, 2, 4, 5)), size=(3, 7), mode="bicubic", align_corners=True, name="aligned"
        ),
        _s(real(rng, (2, 1, 5, 3)), scale_factor=(0.6, 1.7), mode="bicubic", name="scale"),
        _s(real(rng, (1, 2, 3, 3)), size=(1, 3), mode="bicubic", name="one_row"),
    ]


# -- grid_sample / affine_grid (numbagrad/nn/_grid.py) ------------------------------------------
def _ref_unnormalize(g, size, align):
    return (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2


def _ref_pad(x, size, padding, align):
    """A coordinate under PyTorch's padding mode: clip (border), reflect then clip."""
    if padding == "reflection":
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            return 0.0
        d = abs(x - lo)
        flips, extra = divmod(d, span)
        x = lo + (extra if flips % 2 == 0 else span - extra)
    if padding in ("border", "reflection"):
        x = min(max(x, 0.0), size - 1.0)
    return x


def _ref_cubic(t, a=-0.75):
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def ref_grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    """Each output point by its own loop over the taps (PyTorch's formulas, 2-D and 3-D)."""
    nd = x.ndim - 2
    sizes = x.shape[2:][::-1]  # (W, H[, D]): the grid's coordinate order
    pts = grid.reshape(grid.shape[0], -1, nd)
    out = np.zeros((x.shape[0], x.shape[1], pts.shape[1]))

    def read(n, coords):
        if all(0 <= c < s for c, s in zip(coords, sizes)):
            return x[(n, slice(None), *[int(c) for c in coords[::-1]])]
        return 0.0

    for n in range(pts.shape[0]):
        for p in range(pts.shape[1]):
            u = [_ref_unnormalize(pts[n, p, j], sizes[j], align_corners) for j in range(nd)]
            if mode == "bicubic":
                f = [math.floor(v) for v in u]
                ws = [_ref_cubic(v - fv) for v, fv in zip(u, f)]
                for taps in itertools.product(range(4), repeat=nd):
                    c = [
                        _ref_pad(f[j] - 1 + taps[j], sizes[j], padding_mode, align_corners)
                        for j in range(nd)
                    ]
                    w = math.prod(ws[j][taps[j]] for j in range(nd))
                    out[n, :, p] += w * read(n, c)
                continue
            u = [_ref_pad(v, sizes[j], padding_mode, align_corners) for j, v in enumerate(u)]
            if mode == "nearest":
                out[n, :, p] = read(n, [float(np.rint(v)) for v in u])
                continue
            f = [math.floor(v) for v in u]
            for corner in itertools.product((0, 1), repeat=nd):
                w = math.prod((u[j] - f[j]) if corner[j] else 1 - (u[j] - f[j]) for j in range(nd))
                out[n, :, p] += w * read(n, [f[j] + corner[j] for j in range(nd)])
    return out.reshape(x.shape[:2] + grid.shape[1:-1])


def grid_sample_samples(rng):
    def g(*shape):
        return real(rng, shape, -1.2, 1.2)

    return [
        _s(real(rng, (2, 2, 3, 4)), g(2, 2, 3, 2), align_corners=False, name="bilinear"),
        _s(
            real(rng, (1, 2, 3, 3)),
            g(1, 3, 2, 2),
            mode="bicubic",
            padding_mode="reflection",
            align_corners=True,
            name="bicubic_reflection",
        ),
        _s(
            real(rng, (2, 1, 3, 4)),
            g(2, 2, 2, 2),
            mode="nearest",
            padding_mode="border",
            align_corners=True,
            name="nearest_border",
        ),
        _s(
            real(rng, (1, 2, 2, 3, 3)),
            g(1, 2, 2, 2, 3),
            padding_mode="reflection",
            align_corners=False,
            name="trilinear_reflection",
        ),
        _s(
            real(rng, (2, 1, 2, 2, 3)),
            g(2, 1, 2, 2, 3),
            padding_mode="border",
            align_corners=True,
            name="trilinear_border",
        ),
        # small ones (gradgradcheck)
        _s(real(rng, (1, 1, 2, 3)), g(1, 1, 2, 2), align_corners=False, name="small"),
        _s(
            real(rng, (1, 1, 2, 2)),
            g(1, 1, 2, 2),
            mode="bicubic",
            padding_mode="border",
            align_corners=False,
            name="small_bicubic",
        ),
        _s(
            real(rng, (1, 1, 2, 2, 2)),
            g(1, 1, 1, 2, 3),
            padding_mode="reflection",
            align_corners=True,
            name="small_3d",
        ),
    ]


def ref_affine_grid(theta, size, align_corners=False):
    spatial = size[2:]

    def base(n):
        if n <= 1:
            return np.zeros(1)
        r = np.linspace(-1.0, 1.0, n)
        return r if align_corners else r * (n - 1) / n

    axes = np.meshgrid(*[base(s) for s in spatial], indexing="ij")  # (D,) H, W order
    pts = np.stack([*axes[::-1], np.ones(spatial)], -1)  # (x, y[, z], 1)
    return np.einsum("...k,njk->n...j", pts, theta)


def affine_grid_samples(rng):
    return [
        _s(real(rng, (2, 2, 3)), (2, 3, 4, 5), align_corners=False, name="2d"),
        _s(real(rng, (1, 2, 3)), (1, 1, 1, 3), align_corners=False, name="unit"),
        _s(real(rng, (2, 3, 4)), (2, 1, 2, 3, 4), align_corners=True, name="3d"),
    ]


op_db += [
    OpInfo(
        "nn.functional.grid_sample",
        ref_grid_sample,
        grid_sample_samples,
        op=_nnf("grid_sample"),
        tol32=(1e-4, 1e-5),
        primitives=("GridSample",),
    ),
    OpInfo(
        "nn.functional.affine_grid",
        ref_affine_grid,
        affine_grid_samples,
        op=_nnf("affine_grid"),
        primitives=("Cat", "Expand", "Matmul", "Mul", "Permute", "Reshape"),
    ),
]
op_db += [
    # the modes of ``interpolate`` without antialiasing: one Upsample primitive, whose
    # backward (UpsampleBackward) and that one's backward (Upsample) the gradgradchecks reach
    OpInfo(
        f"nn.functional.interpolate.{name}",
        ref_interpolate,
        samples,
        op=_nnf("interpolate"),
        primitives=("Upsample",),
    )
    for name, samples in (
        ("nearest", interpolate_nearest_samples),
        ("linear", interpolate_linear_samples),
        ("bicubic", interpolate_bicubic_samples),
    )
]
