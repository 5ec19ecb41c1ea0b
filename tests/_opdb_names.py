"""Op database entries for the small PyTorch names of issue 27 (``numbagrad/ops/extras.py``):
flips and splits along fixed dims, ``diagflat``, ``rsub``, ``addbmm``, ``ldexp``, the
``*_scatter`` ops and ``index_put`` (joined into ``_opdb.op_db``)."""

import numpy as np
from _opdb import OpInfo, SampleInput, real


def _s(*args, name, **kwargs):
    return SampleInput(*args, name=name, **kwargs)


def ref_diagflat(x, offset=0):
    return np.diagflat(x, offset)


def ref_addbmm(x, b1, b2, beta=1, alpha=1):
    return beta * x + alpha * np.einsum("bij,bjk->ik", b1, b2)


def ref_slice_scatter(x, src, dim=0, start=None, end=None, step=1):
    out = x.copy()
    key = (slice(None),) * dim + (slice(start, end, step),)
    out[key] = src
    return out


def ref_select_scatter(x, src, dim, index):
    out = x.copy()
    out[(slice(None),) * dim + (index,)] = src
    return out


def ref_diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    out = x.copy()
    v = np.diagonal(out, offset, dim1, dim2)  # (a read-only view: write through indices)
    n = v.shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))
    moved[..., rows, cols] = src
    return out


def ref_index_put(x, indices, values, accumulate=False):
    out = x.copy()
    key = tuple(indices)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def ref_split(fn):
    def ref(x, sections):
        return tuple(fn(x, sections))

    return ref


i64 = np.int64

op_db = [
    OpInfo(
        "fliplr",
        np.fliplr,
        lambda rng: [_s(real(rng, (2, 3)), name="2d"), _s(real(rng, (2, 3, 2)), name="3d")],
        method=True,
        primitives=("Flip",),
        supports_cuda=True,
    ),
    OpInfo(
        "flipud",
        np.flipud,
        lambda rng: [_s(real(rng, (3,)), name="1d"), _s(real(rng, (3, 2)), name="2d")],
        method=True,
        primitives=("Flip",),
        supports_cuda=True,
    ),
    OpInfo(
        "hsplit",
        ref_split(np.hsplit),
        lambda rng: [
            _s(real(rng, (2, 4)), 2, name="sections"),
            _s(real(rng, (6,)), [1, 4], name="1d_indices"),
        ],
        method=True,
        primitives=("Index",),
        supports_cuda=True,
    ),
    OpInfo(
        "vsplit",
        ref_split(np.vsplit),
        lambda rng: [
            _s(real(rng, (4, 2)), 2, name="sections"),
            _s(real(rng, (4, 2)), [1, 3], name="indices"),
        ],
        method=True,
        primitives=("Index",),
        supports_cuda=True,
    ),
    OpInfo(
        "dsplit",
        ref_split(np.dsplit),
        lambda rng: [_s(real(rng, (1, 2, 4)), 2, name="sections")],
        method=True,
        primitives=("Index",),
        supports_cuda=True,
    ),
    OpInfo(
        "diagflat",
        ref_diagflat,
        lambda rng: [
            _s(real(rng, (3,)), name="1d"),
            _s(real(rng, (2, 2)), 1, name="2d_offset"),
            _s(real(rng, (3,)), -2, name="negative_offset"),
        ],
        method=True,
        primitives=("Reshape", "DiagonalBackward"),
        supports_cuda=True,
    ),
    OpInfo(
        "rsub_fn",
        lambda x, other, alpha=1: other - alpha * x,
        lambda rng: [
            _s(real(rng, (3,)), real(rng, (2, 3)), name="tensor"),
            _s(real(rng, (3,)), real(rng, (3,)), alpha=2.0, name="alpha"),
        ],
        op=lambda m, *a, **k: m.rsub(*a, **k),
        primitives=("Sub", "Mul"),
        supports_cuda=True,
    ),
    OpInfo(
        "addbmm",
        ref_addbmm,
        lambda rng: [
            _s(real(rng, (2, 3)), real(rng, (4, 2, 5)), real(rng, (4, 5, 3)), name="plain"),
            _s(
                real(rng, (2,)),
                real(rng, (2, 1, 2)),
                real(rng, (2, 2, 2)),
                beta=0.5,
                alpha=2.0,
                name="broadcast_beta_alpha",
            ),
        ],
        method=True,
        primitives=("Add", "Matmul", "Mul", "Permute", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "ldexp",
        lambda x, e: x * np.exp2(e),
        lambda rng: [_s(real(rng, (3,)), real(rng, (2, 3)), name="tensor")],
        method=True,
        primitives=("Mul", "Pow"),
        supports_cuda=True,
    ),
    OpInfo(
        "slice_scatter",
        ref_slice_scatter,
        lambda rng: [
            _s(real(rng, (4, 2)), real(rng, (2, 2)), 0, 1, 3, name="dim0"),
            _s(real(rng, (2, 6)), real(rng, (2, 3)), 1, None, None, 2, name="step"),
        ],
        method=True,
        primitives=("IndexPut",),
        supports_cuda=True,
    ),
    OpInfo(
        "select_scatter",
        ref_select_scatter,
        lambda rng: [
            _s(real(rng, (3, 4)), real(rng, (4,)), 0, 1, name="dim0"),
            _s(real(rng, (3, 4)), real(rng, (3,)), 1, -1, name="dim1_negative"),
        ],
        method=True,
        primitives=("IndexPut",),
        supports_cuda=True,
    ),
    OpInfo(
        "diagonal_scatter",
        ref_diagonal_scatter,
        lambda rng: [
            _s(real(rng, (3, 3)), real(rng, (3,)), name="square"),
            _s(real(rng, (3, 4)), real(rng, (3,)), 1, name="offset"),
            _s(real(rng, (4, 3)), real(rng, (2,)), -2, name="negative_offset"),
            _s(real(rng, (2, 3, 3)), real(rng, (2, 3)), 0, 1, 2, name="batched"),
            _s(real(rng, (3, 2, 3)), real(rng, (2, 3)), 0, 0, 2, name="apart"),
        ],
        method=True,
        primitives=("Add", "Permute", "IndexPut"),
        supports_cuda=True,
    ),
    OpInfo(
        "index_put",
        ref_index_put,
        lambda rng: [
            _s(real(rng, (5,)), (np.array([0, 3], dtype=i64),), real(rng, (2,)), name="1d"),
            _s(
                real(rng, (5,)),
                (np.array([0, 3, 0], dtype=i64),),
                real(rng, (3,)),
                True,
                name="accumulate",
            ),
            _s(
                real(rng, (3, 4)),
                (np.array([2, 0], dtype=i64), np.array([1, 1], dtype=i64)),
                real(rng, ()),
                accumulate=True,
                name="2d_accumulate_broadcast",
            ),
        ],
        method=True,
        primitives=("IndexPut", "Index", "Expand", "IndexBackward", "Add", "Ne", "Where"),
        supports_cuda=True,
    ),
]


def _quiet(name):
    """Call the deprecated ``m.<name>`` without its deprecation warning."""

    def op(m, *args, **kwargs):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return getattr(m, name)(*args, **kwargs)

    return op


op_db += [
    OpInfo(
        "frobenius_norm",
        lambda x, dim, keepdim=False: np.sqrt((x * x).sum(axis=dim, keepdims=keepdim)),
        lambda rng: [
            _s(real(rng, (2, 3)), (0, 1), name="both"),
            _s(real(rng, (2, 3)), (1,), True, name="keepdim"),
        ],
        op=_quiet("frobenius_norm"),
        primitives=("Norm2",),
        supports_cuda=True,
    ),
    OpInfo(
        "nuclear_norm",
        lambda x, dim=(-2, -1), keepdim=False: (
            np.linalg.svd(np.moveaxis(x, dim, (-2, -1)), compute_uv=False).sum(-1, keepdims=False)
            if not keepdim
            else np.expand_dims(
                np.linalg.svd(np.moveaxis(x, dim, (-2, -1)), compute_uv=False).sum(-1), dim
            )
        ),
        lambda rng: [
            _s(real(rng, (3, 2)), name="matrix"),
            _s(real(rng, (2, 3, 2)), (0, 2), True, name="dims_keepdim"),
        ],
        op=_quiet("nuclear_norm"),
        primitives=("LinalgSvd", "Permute", "Reshape", "Sum"),
        supports_cuda=True,
    ),
]


def ref_gradient(x, spacing=1, dim=None, edge_order=1):
    dims = list(range(x.ndim)) if dim is None else ([dim] if isinstance(dim, int) else dim)
    sp = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    out = np.gradient(x, *sp, axis=tuple(dims), edge_order=edge_order)
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)


op_db += [
    OpInfo(
        "gradient",
        ref_gradient,
        lambda rng: [
            _s(real(rng, (3, 4)), name="all_dims"),
            _s(real(rng, (5,)), spacing=2.0, edge_order=2, name="scalar_order2"),
            _s(real(rng, (2, 4)), spacing=[0.5], dim=1, name="list_dim"),
            _s(
                real(rng, (4, 2)),
                spacing=(np.array([0.0, 0.3, 1.1, 1.5]),),
                dim=0,
                edge_order=2,
                name="coordinates_order2",
            ),
            _s(real(rng, (2, 3)), spacing=(np.array([0.0, 0.5, 2.0]),), dim=-1, name="coords"),
        ],
        primitives=("Add", "Cat", "Div", "Index", "Mul", "Neg", "Reshape", "Sub"),
        supports_cuda=True,
    ),
]
