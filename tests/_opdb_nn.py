"""Op database entries for numbagrad.nn.functional (joined into ``_opdb.op_db``).

Entries are named ``nn.functional.<name>``; both libraries spell the call
``m.nn.functional.<name>``. Samples keep away from kinks (activations at 0, the Huber and
smooth-L1 switch points, softplus's threshold) so that central differences hold. Class
weights of the losses (and BCE-with-logits' ``pos_weight``) would be float inputs here,
which PyTorch does not differentiate, and a bias makes ``linear``/``bilinear`` affine (the
linearity check in ``test_primitives.py`` wants them linear): those options are checked
against PyTorch in ``test_nn.py`` instead.
"""

import math

import numpy as np
from _opdb import UNARY_SHAPES, OpInfo, SampleInput, nonzero, positive, real

_s = SampleInput
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _nnf(name):
    def op(m, *args, **kwargs):
        return getattr(m.nn.functional, name)(*args, **kwargs)

    return op


def _reduce(loss, reduction="mean"):
    if reduction == "mean":
        return np.asarray(loss.mean())
    if reduction == "sum":
        return np.asarray(loss.sum())
    return loss


def _away(rng, shape, points, gap=0.2, low=-3.0, high=3.0):
    """Uniform in ``[low, high)`` but at least ``gap`` from each of ``points``."""
    x = rng.uniform(low, high, shape)
    for p in points:
        near = np.abs(x - p) < gap
        x = np.where(near, p + np.where(x >= p, gap, -gap) * 1.5, x)
    return np.asarray(x, dtype=np.float64)


# -- references ------------------------------------------------------------
def ref_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def ref_silu(x):
    return x / (1 + np.exp(-x))


def ref_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def ref_leaky_relu(x, negative_slope=0.01):
    return np.where(x > 0, x, x * negative_slope)


def ref_relu6(x):
    return np.clip(x, 0, 6)


def ref_hardtanh(x, min_val=-1.0, max_val=1.0):
    return np.clip(x, min_val, max_val)


def ref_selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * ref_elu(x, alpha)


def ref_logsigmoid(x):
    return -np.logaddexp(0, -x)


def ref_softsign(x):
    return x / (1 + np.abs(x))


def ref_mish(x):
    return x * np.tanh(np.logaddexp(0, x))


def ref_softmin(x, dim):
    e = np.exp(-x - np.max(-x, axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def ref_kl_div(x, t, reduction="mean", log_target=False):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0) - t * x
    if reduction == "batchmean":
        return np.asarray(loss.sum() / x.shape[0])
    return _reduce(loss, reduction)


def ref_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0, x * beta) / beta)


def ref_mse(x, t, reduction="mean"):
    return _reduce((x - t) ** 2, reduction)


def ref_l1(x, t, reduction="mean"):
    return _reduce(np.abs(x - t), reduction)


def ref_smooth_l1(x, t, reduction="mean", beta=1.0):
    d = np.abs(x - t)
    return _reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def ref_huber(x, t, reduction="mean", delta=1.0):
    d = np.abs(x - t)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def ref_bce(x, t, reduction="mean"):
    loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    return _reduce(loss, reduction)


def ref_bce_logits(x, t, weight=None, reduction="mean", pos_weight=None):
    lw = 1.0 if pos_weight is None else (pos_weight - 1) * t + 1
    loss = (1 - t) * x + lw * np.logaddexp(0, -x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _log_softmax(x, axis):
    mx = x.max(axis=axis, keepdims=True)
    return x - mx - np.log(np.exp(x - mx).sum(axis=axis, keepdims=True))


def ref_nll(x, t, reduction="mean", ignore_index=-100):
    cdim = 0 if x.ndim == 1 else 1
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    picked = np.squeeze(np.take_along_axis(x, np.expand_dims(safe, cdim), cdim), cdim)
    loss = np.where(valid, -picked, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum())
    return np.asarray(loss.sum() / valid.sum())


def ref_cross_entropy(x, t, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    logp = _log_softmax(x, cdim)
    if t.dtype.kind == "f":
        t = t * (1 - label_smoothing) + label_smoothing / c
        loss = -(logp * t).sum(axis=cdim)
        if reduction == "mean":
            return np.asarray(loss.sum() / (x.size / c))
        return _reduce(loss, reduction)
    nll = ref_nll(logp, t, reduction, ignore_index)
    if not label_smoothing:
        return nll
    valid = t != ignore_index
    smooth = np.where(valid, -logp.sum(axis=cdim), 0.0)
    if reduction == "mean":
        smooth = smooth.sum() / valid.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return np.asarray((1 - label_smoothing) * nll + smooth * label_smoothing / c)


def ref_gaussian_nll(x, t, var, full=False, eps=1e-6, reduction="mean"):
    if var.shape != x.shape and var.shape == x.shape[:-1]:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - t) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def ref_layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def ref_normalize(x, p=2.0, dim=1, eps=1e-12):
    n = (np.abs(x) ** p).sum(axis=dim, keepdims=True) ** (1 / p)
    return x / np.maximum(n, eps)


def ref_cosine_similarity(x1, x2, dim=1, eps=1e-8):
    n1 = np.maximum(np.sqrt((x1 * x1).sum(axis=dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((x2 * x2).sum(axis=dim, keepdims=True)), eps)
    return ((x1 / n1) * (x2 / n2)).sum(axis=dim)


def ref_pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = np.abs(x1 - x2 + eps)
    return (d**p).sum(axis=-1, keepdims=keepdim) ** (1 / p)


_NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def ref_pad(x, pad, mode="constant", value=None):
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        widths[d] = (max(left, 0), max(right, 0))
        crop[d] = slice(max(-left, 0), x.shape[d] - max(-right, 0))
    x = x[tuple(crop)]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value or 0.0)
    return np.pad(x, widths, mode=_NP_MODES[mode])


def ref_linear(x, w, b=None):
    out = x @ w.T
    return out if b is None else out + b


def ref_bilinear(x1, x2, w, b=None):
    out = np.einsum("...i,oij,...j->...o", x1, w, x2)
    return out if b is None else out + b


def ref_one_hot(t, num_classes=-1):
    n = t.max() + 1 if num_classes == -1 else num_classes
    return (t[..., None] == np.arange(n)).astype(np.int64)


# -- samples ------------------------------------------------------------
def _unary_with(domain, kwargs_list):
    def gen(rng):
        return [
            _s(domain(rng, s), name=f"{s}{kw}", **kw) for s in UNARY_SHAPES for kw in kwargs_list
        ]

    return gen


def _pair(rng, shape, gap_points=()):
    """(input, target) whose difference keeps ``gap`` away from ``gap_points``."""
    t = real(rng, shape)
    d = _away(rng, shape, gap_points) if gap_points else nonzero(rng, shape)
    return np.asarray(t + d), np.asarray(t)


def _regression_samples(gap_points=(), extra=None):
    def gen(rng):
        out = []
        for shape, red in [((4, 3), "mean"), ((5,), "sum"), ((2, 3), "none"), ((), "mean")]:
            x, t = _pair(rng, shape, gap_points)
            out.append(_s(x, t, reduction=red, name=f"{shape}-{red}", **(extra or {})))
        return out

    return gen


def kl_div_samples(rng):
    return [
        _s(
            real(rng, (4, 3)),
            rng.uniform(0.05, 1.0, (4, 3)),
            reduction="batchmean",
            name="batchmean",
        ),
        _s(real(rng, (5,)), rng.uniform(0.05, 1.0, (5,)), reduction="sum", name="sum"),
        _s(
            real(rng, (2, 3)),
            real(rng, (2, 3)),
            reduction="none",
            log_target=True,
            name="log-target",
        ),
    ]


def bce_samples(rng):
    return [
        _s(rng.uniform(0.05, 0.95, s), rng.uniform(0, 1, s), reduction=r, name=f"{s}-{r}")
        for s, r in [((4, 3), "mean"), ((5,), "sum"), ((2, 3), "none")]
    ]


def bce_logits_samples(rng):
    return [
        _s(real(rng, (4, 3)), rng.uniform(0, 1, (4, 3)), name="plain"),
        _s(real(rng, (4, 3)), rng.uniform(0, 1, (4, 3)), reduction="sum", name="sum"),
        _s(real(rng, (5,)), rng.uniform(0, 1, (5,)), reduction="none", name="none"),
    ]


def cross_entropy_samples(rng):
    def idx(shape, c):
        return rng.integers(0, c, shape)

    def probs(shape, axis):
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(axis=axis, keepdims=True)

    return [
        _s(real(rng, (5, 4)), idx((5,), 4), name="2d"),
        _s(real(rng, (4,)), idx((), 4), name="1d"),
        _s(real(rng, (3, 4, 2)), idx((3, 2), 4), reduction="sum", name="3d-sum"),
        _s(real(rng, (6, 3)), np.array([0, 1, 2, 1, 0, 2]), ignore_index=1, name="ignore"),
        _s(real(rng, (5, 4)), idx((5,), 4), label_smoothing=0.2, name="smooth"),
        _s(
            real(rng, (3, 4, 2)),
            idx((3, 2), 4),
            label_smoothing=0.1,
            reduction="none",
            name="smooth-none",
        ),
        _s(real(rng, (5, 4)), probs((5, 4), 1), name="probs"),
        _s(real(rng, (3, 4, 2)), probs((3, 4, 2), 1), label_smoothing=0.3, name="probs-3d"),
    ]


def nll_samples(rng):
    return [
        _s(real(rng, (5, 4)), rng.integers(0, 4, (5,)), name="2d"),
        _s(real(rng, (4,)), rng.integers(0, 4, ()), reduction="sum", name="1d"),
        _s(real(rng, (3, 4, 2)), rng.integers(0, 4, (3, 2)), reduction="none", name="3d"),
        _s(real(rng, (6, 3)), np.array([0, 2, 2, 1, 0, 2]), ignore_index=2, name="ignore"),
    ]


def gaussian_nll_samples(rng):
    return [
        _s(real(rng, (4, 3)), real(rng, (4, 3)), positive(rng, (4, 3)), name="hetero"),
        _s(
            real(rng, (4, 3)),
            real(rng, (4, 3)),
            positive(rng, (4,)),
            full=True,
            reduction="sum",
            name="homo",
        ),
        _s(
            real(rng, (4, 3)),
            real(rng, (4, 3)),
            positive(rng, (4, 1)),
            reduction="none",
            name="bcast",
        ),
        _s(real(rng, (2, 2)), real(rng, (2, 2)), positive(rng, (2, 2)), name="small"),
    ]


def layer_norm_samples(rng):
    return [
        _s(real(rng, (3, 4)), (4,), name="plain"),
        _s(
            real(rng, (2, 3, 4)),
            (3, 4),
            real(rng, (3, 4)),
            real(rng, (3, 4)),
            eps=1e-3,
            name="affine",
        ),
        _s(real(rng, (5,)), (5,), positive(rng, (5,)), name="weight-only"),
    ]


def normalize_samples(rng):
    return [
        _s(nonzero(rng, (3, 4)), name="default"),
        _s(nonzero(rng, (3, 4)), p=1.0, dim=0, name="p1"),
        _s(nonzero(rng, (2, 3, 4)), p=3.0, dim=-1, name="p3"),
    ]


def cosine_samples(rng):
    return [
        _s(nonzero(rng, (2, 3)), nonzero(rng, (2, 3)), name="small"),
        _s(nonzero(rng, (4, 3)), nonzero(rng, (4, 3)), name="2d"),
        _s(nonzero(rng, (2, 3, 4)), nonzero(rng, (3, 4)), dim=-1, name="bcast"),
    ]


def pairwise_samples(rng):
    return [
        _s(real(rng, (2, 3)), real(rng, (2, 3)), name="small"),
        _s(real(rng, (4, 3)), real(rng, (4, 3)), name="p2"),
        _s(real(rng, (4, 3)), real(rng, (4, 3)), p=3.0, keepdim=True, name="p3"),
    ]


def pad_samples(rng):
    return [
        _s(real(rng, (2, 3, 4)), (1, 2, 0, 1), name="constant"),
        _s(real(rng, (3, 4)), (-1, 2, 1, -1), value=0.5, name="constant-negative"),
        _s(real(rng, (2, 3, 4)), (2, 1), mode="reflect", name="reflect"),
        _s(real(rng, (2, 3, 4)), (1, 2, 2, 1), mode="reflect", name="reflect-2d"),
        _s(real(rng, (1, 2, 3, 4)), (2, 3, 1, 0), mode="replicate", name="replicate"),
        _s(real(rng, (2, 3, 4)), (1, 2), mode="circular", name="circular"),
    ]


def linear_samples(rng):
    return [
        _s(real(rng, (5, 3)), real(rng, (4, 3)), name="2d"),
        _s(real(rng, (2, 5, 3)), real(rng, (4, 3)), name="3d"),
        _s(real(rng, (3,)), real(rng, (2, 3)), name="1d"),
    ]


def bilinear_samples(rng):
    return [
        _s(real(rng, (2, 2)), real(rng, (2, 2)), real(rng, (2, 2, 2)), name="small"),
        _s(real(rng, (5, 2)), real(rng, (5, 3)), real(rng, (4, 2, 3)), name="2d"),
        _s(real(rng, (2, 3, 2)), real(rng, (2, 3, 3)), real(rng, (1, 2, 3)), name="nd"),
    ]


def one_hot_samples(rng):
    return [
        _s(rng.integers(0, 4, (5,)), name="infer"),
        _s(rng.integers(0, 3, (2, 3)), 5, name="given"),
    ]


def ref_embedding(idx, weight, padding_idx=None, scale_grad_by_freq=False):
    return weight[idx]


def embedding_samples(rng):
    """Rows with repeats (their gradients add up), and a 0-d index."""
    return [
        _s(rng.integers(0, 5, (2, 3)).astype(np.int64), real(rng, (5, 4)), name="2d"),
        _s(np.array([4, 0, 4, 1], dtype=np.int64), real(rng, (6, 2)), name="1d"),
        _s(np.array(3, dtype=np.int64), real(rng, (4, 3)), name="0d"),
    ]


def embedding_scaled_samples(rng):
    """``padding_idx`` and ``scale_grad_by_freq`` scale the backward only (PyTorch's
    ``embedding_backward``), which no central difference could confirm: here the padding
    row is not looked up and no index repeats, so the scale is 1 and the checks hold; the
    scaled gradients are compared with PyTorch's in ``test_embedding_unfold_take.py``."""
    return [
        _s(np.array([[0, 4, 2], [3, 5, 6]], dtype=np.int64), real(rng, (7, 4)), padding_idx=1),
        _s(
            np.array([3, 0, 1], dtype=np.int64),
            real(rng, (6, 2)),
            padding_idx=-2,
            scale_grad_by_freq=True,
        ),
    ]


def _kinks(*points):
    return lambda rng, shape: _away(rng, shape, points)


op_db = [
    OpInfo(
        "nn.functional.gelu",
        ref_gelu,
        _unary_with(real, [{}, {"approximate": "tanh"}]),
        op=_nnf("gelu"),
        primitives=("Gelu",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.silu",
        ref_silu,
        _unary_with(real, [{}]),
        op=_nnf("silu"),
        primitives=("Silu",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.elu",
        ref_elu,
        _unary_with(_kinks(0.0), [{}, {"alpha": 0.5}]),
        op=_nnf("elu"),
        primitives=("Elu",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.leaky_relu",
        ref_leaky_relu,
        _unary_with(_kinks(0.0), [{}, {"negative_slope": 0.2}]),
        op=_nnf("leaky_relu"),
        primitives=("Gt", "Mul", "Where"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.relu6",
        ref_relu6,
        _unary_with(lambda rng, s: _away(rng, s, (0.0, 6.0), low=-2.0, high=8.0), [{}]),
        op=_nnf("relu6"),
        primitives=("Hardtanh",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.softplus",
        ref_softplus,
        _unary_with(_kinks(1.5), [{"beta": 2.0, "threshold": 3.0}]),
        op=_nnf("softplus"),
        primitives=("Softplus",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.hardtanh",
        ref_hardtanh,
        _unary_with(lambda rng, s: _away(rng, s, (-1.0, 1.0)), [{}]),
        op=_nnf("hardtanh"),
        primitives=("Hardtanh",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.selu",
        ref_selu,
        _unary_with(_kinks(0.0), [{}]),
        op=_nnf("selu"),
        primitives=("Elu",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.logsigmoid",
        ref_logsigmoid,
        _unary_with(real, [{}]),
        op=_nnf("logsigmoid"),
        primitives=("LogSigmoid",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.softsign",
        ref_softsign,
        _unary_with(_kinks(0.0), [{}]),
        op=_nnf("softsign"),
        primitives=("Abs", "Add", "Div"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.mish",
        ref_mish,
        _unary_with(real, [{}]),
        op=_nnf("mish"),
        primitives=("Mish",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.softmin",
        ref_softmin,
        lambda rng: [_s(real(rng, (3, 4)), 1, name="dim1"), _s(real(rng, (5,)), 0, name="1d")],
        op=_nnf("softmin"),
        primitives=("Neg", "Softmax"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.kl_div",
        ref_kl_div,
        kl_div_samples,
        op=_nnf("kl_div"),
        primitives=("Div", "Exp", "Mul", "Sub", "Sum", "Xlogy"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.mse_loss",
        ref_mse,
        _regression_samples(),
        op=_nnf("mse_loss"),
        primitives=("Div", "Mul", "Sub", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.l1_loss",
        ref_l1,
        _regression_samples(),
        op=_nnf("l1_loss"),
        primitives=("Abs", "Div", "Sub", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.smooth_l1_loss",
        ref_smooth_l1,
        _regression_samples((-0.5, 0.0, 0.5), {"beta": 0.5}),
        op=_nnf("smooth_l1_loss"),
        primitives=("Div", "SmoothL1", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.huber_loss",
        ref_huber,
        _regression_samples((-0.8, 0.0, 0.8), {"delta": 0.8}),
        op=_nnf("huber_loss"),
        primitives=("Div", "SmoothL1", "Sum"),
        supports_cuda=True,
    ),
    # supports_vmap=False: the vmap suite perturbs inputs by Gaussian noise, which leaves
    # [0, 1], where the op (as PyTorch's) refuses inputs; test_nn.py checks vmap of it
    OpInfo(
        "nn.functional.binary_cross_entropy",
        ref_bce,
        bce_samples,
        op=_nnf("binary_cross_entropy"),
        supports_vmap=False,
        primitives=("Add", "Clamp", "Div", "Gt", "Log", "Mul", "Neg", "Sub", "Sum", "Where"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.binary_cross_entropy_with_logits",
        ref_bce_logits,
        bce_logits_samples,
        op=_nnf("binary_cross_entropy_with_logits"),
        primitives=("Add", "Div", "Mul", "Neg", "StableSoftplus", "Sub", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.cross_entropy",
        ref_cross_entropy,
        cross_entropy_samples,
        op=_nnf("cross_entropy"),
        primitives=(
            "Add",
            "Div",
            "Gather",
            "LogSoftmax",
            "Mul",
            "Ne",
            "Neg",
            "Reshape",
            "Sum",
            "ToCopy",
            "Where",
        ),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.nll_loss",
        ref_nll,
        nll_samples,
        op=_nnf("nll_loss"),
        primitives=("Div", "Gather", "Mul", "Ne", "Neg", "Reshape", "Sum", "ToCopy", "Where"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.gaussian_nll_loss",
        ref_gaussian_nll,
        gaussian_nll_samples,
        op=_nnf("gaussian_nll_loss"),
        primitives=("Add", "Div", "Log", "Lt", "Mul", "Reshape", "Sub", "Sum", "Where"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.layer_norm",
        ref_layer_norm,
        layer_norm_samples,
        op=_nnf("layer_norm"),
        primitives=("LayerNorm",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.normalize",
        ref_normalize,
        normalize_samples,
        op=_nnf("normalize"),
        primitives=("Clamp", "Div", "Norm2", "NormP"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.cosine_similarity",
        ref_cosine_similarity,
        cosine_samples,
        op=_nnf("cosine_similarity"),
        primitives=("Add", "Div", "Expand", "Lt", "Mul", "Norm2", "Sub", "Sum", "Where"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.pairwise_distance",
        ref_pairwise_distance,
        pairwise_samples,
        op=_nnf("pairwise_distance"),
        primitives=("Add", "Norm2", "NormP", "Sub"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.pad",
        ref_pad,
        pad_samples,
        op=_nnf("pad"),
        primitives=("Cat", "Expand", "Flip", "Index"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.linear",
        ref_linear,
        linear_samples,
        op=_nnf("linear"),
        primitives=("Matmul", "Permute", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.bilinear",
        ref_bilinear,
        bilinear_samples,
        op=_nnf("bilinear"),
        primitives=("Einsum",),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.embedding",
        ref_embedding,
        embedding_samples,
        op=_nnf("embedding"),
        primitives=("Index", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.embedding_padding",
        ref_embedding,
        embedding_scaled_samples,
        op=_nnf("embedding"),
        # (the scale: bincount's ScatterAdd and bounds, Div, Eq, Where, all under no_grad)
        primitives=(
            "Amax",
            "Amin",
            "Div",
            "EmbeddingGradScale",
            "Eq",
            "Index",
            "Reshape",
            "ScatterAdd",
            "ToCopy",
            "Where",
        ),
        supports_cuda=True,
    ),
    OpInfo(
        "nn.functional.one_hot",
        ref_one_hot,
        one_hot_samples,
        op=_nnf("one_hot"),
        supports_grad=False,
        dtypes="int64",
        primitives=("Eq", "Reshape", "ToCopy"),
        supports_cuda=True,
    ),
]
