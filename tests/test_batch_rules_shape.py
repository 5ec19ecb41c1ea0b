"""Batching and JVP rules of the shape and indexing primitives (``ops/shape.py``): batched
indices (``gather``, ``take_along_dim``, ``index_select``, advanced ``__getitem__``) with
and without a batched source, ``cat`` of batched and unbatched operands, the backward-only
primitives under ``jacrev``, and the data-dependent ``nonzero`` (against loop-and-stack,
and a few against ``torch.vmap``)."""

import warnings

import numpy as np
import pytest
from _batching import B, arr, loop, t, vmapped

import numbagrad
from numbagrad import func
from numbagrad._transforms import batching
from numbagrad.ops import PRIMITIVES, gather_scatter, join, reorder, sorting
from numbagrad.ops import shape as shape_mod
from numbagrad.ops.shape import index_put  # (the key-based one: ``x[key] = value``)

S = slice(None)


def check_vmap(fn, args, in_dims):
    got = vmapped(fn, args, in_dims)
    want = loop(fn, args, in_dims)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(arr(got), want, rtol=1e-12, atol=1e-12)
    return got


def batched(rng, shape, d, high=None):
    """A batch (``B`` along ``d``) of normals, or of ints in ``[0, high)``."""
    full = list(shape)
    full.insert(d if d >= 0 else len(shape) + 1 + d, B)
    if high is None:
        return t(rng.standard_normal(full))
    return t(rng.integers(0, high, full), np.int64)


def test_every_shape_primitive_has_a_batching_rule():
    homes = {shape_mod.__name__, *(m.__name__ for m in (gather_scatter, join, reorder, sorting))}
    mine = [p for p in PRIMITIVES.values() if p.__module__ in homes]
    assert {p.__name__ for p in mine} >= {
        "Index",
        "IndexBackward",
        "IndexPut",
        "Gather",
        "ScatterAdd",
        "Cat",
        "SumTo",
        "Zeros",
        "Argsort",
    }
    for p in mine:
        assert p.batch is not None, p.__name__
        if p.differentiable:
            assert p.jvp is not None, p.__name__


# -- gather / take_along_dim / index_select with batched indices ---------------------------
@pytest.mark.parametrize("xd,idim", [(None, 0), (None, 2), (0, 0), (2, 1), (1, None)])
def test_vmap_gather(rng, xd, idim):
    x = batched(rng, (3, 4), xd) if xd is not None else t(rng.standard_normal((3, 4)))
    idx = (
        batched(rng, (3, 5), idim, 4)
        if idim is not None
        else t(rng.integers(0, 4, (3, 5)), np.int64)
    )
    check_vmap(lambda a, i: numbagrad.gather(a, 1, i), (x, idx), (xd, idim))
    check_vmap(lambda a, i: numbagrad.gather(a, -1, i[:2, :2]), (x, idx), (xd, idim))


@pytest.mark.parametrize("xd,idim", [(None, 0), (None, 1), (0, 2), (1, None)])
def test_vmap_take_along_dim(rng, xd, idim):
    x = batched(rng, (3, 4), xd) if xd is not None else t(rng.standard_normal((3, 4)))
    idx = (
        batched(rng, (2, 1), idim, 3)
        if idim is not None
        else t(rng.integers(0, 3, (2, 1)), np.int64)
    )
    check_vmap(lambda a, i: numbagrad.take_along_dim(a, i, 0), (x, idx), (xd, idim))
    check_vmap(lambda a, i: numbagrad.take_along_dim(a, i), (x, idx), (xd, idim))


@pytest.mark.parametrize("xd,idim", [(None, 0), (None, 1), (1, 0), (2, None)])
def test_vmap_index_select(rng, xd, idim):
    x = batched(rng, (3, 4), xd) if xd is not None else t(rng.standard_normal((3, 4)))
    idx = batched(rng, (5,), idim, 4) if idim is not None else t([3, 0, 0, 1], np.int64)
    check_vmap(lambda a, i: numbagrad.index_select(a, 1, i), (x, idx), (xd, idim))
    check_vmap(lambda a, i: a.index_select(0, i % 3), (x, idx), (xd, idim))


@pytest.mark.parametrize("xd,idim", [(None, 0), (0, 1), (1, 0), (1, None)])
def test_vmap_scatter_add_with_batched_index(rng, xd, idim):
    x = batched(rng, (3, 4), xd) if xd is not None else t(rng.standard_normal((3, 4)))
    idx = (
        batched(rng, (3, 5), idim, 4)
        if idim is not None
        else t(rng.integers(0, 4, (3, 5)), np.int64)
    )
    src = t(rng.standard_normal((3, 5)))
    check_vmap(lambda a, i: numbagrad.scatter_add(a, 1, i, src), (x, idx), (xd, idim))


def test_vmap_out_of_range_batched_index_still_raises(rng):
    x = t(rng.standard_normal((3, 4)))
    idx = t([[[0, 1]] * 3, [[0, 4]] * 3], np.int64)
    with pytest.raises(IndexError, match="out of bounds"):
        vmapped(lambda i: numbagrad.gather(x, 1, i), (idx,), (0,))
    with pytest.raises(IndexError, match="out of bounds"):
        vmapped(lambda i: numbagrad.index_select(x, 1, i), (idx[:, 0],), (0,))


# -- advanced __getitem__ --------------------------------------------------------------------
# (key builder from the index ``i``, shape of ``i``, its bound) on a (3, 4, 5) tensor: each
# spelling of NumPy's placement rule (advanced entries adjacent: in place, separated by a
# slice, None or ``...``: first; ints count as advanced entries alongside index tensors)
KEYS = {
    "i": (lambda i: (i,), (2,), 3),
    "slice_i": (lambda i: (S, i), (2,), 4),
    "i_slice": (lambda i: (i, S), (2,), 3),
    "slice_slice_i2d": (lambda i: (S, S, i), (2, 2), 5),
    "paired": (lambda i: (S, i, t([0, 4, 1], np.int64)), (3,), 4),
    "separated": (lambda i: (i, S, t([0, 4], np.int64)), (2,), 3),
    "int_separated": (lambda i: (0, S, i), (6,), 5),
    "int_adjacent": (lambda i: (S, i, 0), (6,), 4),
    "none_between": (lambda i: (S, i, None, t([1], np.int64)), (2,), 4),
    "ellipsis_between": (lambda i: (i, Ellipsis, t([1, 2], np.int64)), (2,), 3),
    "none_first": (lambda i: (None, i), (2, 2), 3),
    "ellipsis_first": (lambda i: (Ellipsis, i), (2,), 5),
    "mask_and_i": (lambda i: (t([True, False, True], np.bool_), i), (2,), 4),
    "bool0d": (lambda i: (t(True, np.bool_), S, i), (2,), 4),
    "broadcast_2d": (lambda i: (S, i, t([[0], [1]], np.int64)), (2,), 4),
}


def _key_args(rng, name, xd, idim):
    mk, ishape, high = KEYS[name]
    x = batched(rng, (3, 4, 5), xd) if xd is not None else t(rng.standard_normal((3, 4, 5)))
    idx = (
        batched(rng, ishape, idim, high)
        if idim is not None
        else t(rng.integers(0, high, ishape), np.int64)
    )
    return mk, x, idx


PLACES = [(None, 0), (0, 0), (2, 1), (1, None), (None, -1)]


@pytest.mark.parametrize("xd,idim", PLACES)
@pytest.mark.parametrize("name", sorted(KEYS))
def test_vmap_getitem_advanced(rng, name, xd, idim):
    mk, x, idx = _key_args(rng, name, xd, idim)
    if idim == -1:
        idim = idx.ndim - 1
    check_vmap(lambda a, i: a[mk(i)], (x, idx), (xd, idim))


@pytest.mark.parametrize("xd,idim", PLACES)
@pytest.mark.parametrize("name", sorted(KEYS))
def test_vmap_getitem_backward_and_index_put(rng, name, xd, idim):
    """``IndexBackward`` (batched or unbatched gradient) and ``IndexPut`` on the same keys."""
    mk, x, idx = _key_args(rng, name, xd, idim)
    if idim == -1:
        idim = idx.ndim - 1
    args, dims = (x, idx), (xd, idim)
    check_vmap(lambda a, i: func.grad(lambda a: (a[mk(i)] ** 2).sum())(a), args, dims)
    check_vmap(lambda a, i: func.grad(lambda a: a[mk(i)].sum())(a * 1), args, dims)
    check_vmap(lambda a, i: index_put(a, mk(i), 1.5), args, dims)
    check_vmap(lambda a, i: index_put(a * 0, mk(i), a[mk(i)] * 2 + 1), args, dims)
    check_vmap(
        lambda a, i: index_put(a * 0, mk(i), numbagrad.ones(a[mk(i)].shape[-1:])), args, dims
    )
    check_vmap(lambda a, i: func.jvp(lambda a: a[mk(i)], (a,), (a * 2,))[1], args, dims)


def test_vmap_getitem_batched_index_unbatched_source(rng):
    x = t(rng.standard_normal((5, 4)))
    idx = t(rng.integers(0, 5, (B, 2, 3)), np.int64)
    got = check_vmap(lambda i: x[i], (idx,), (0,))
    np.testing.assert_array_equal(arr(got), arr(x)[arr(idx)])
    check_vmap(lambda i: x[i, i % 4], (idx,), (0,))
    check_vmap(lambda i: x[1:, i % 4], (idx,), (0,))


def test_vmap_getitem_unbatched_bool_mask(rng):
    x = batched(rng, (3, 4), 1)
    mask = t(rng.uniform(size=(3, 4)) < 0.5, np.bool_)
    check_vmap(lambda a: a[mask], (x,), (1,))
    rows = t([True, False, True], np.bool_)
    check_vmap(lambda a: a[rows, 1:], (x,), (1,))


def test_vmap_getitem_batched_bool_mask_raises(rng):
    x = batched(rng, (3, 4), 0)
    with pytest.raises(RuntimeError, match="batched boolean mask"):
        vmapped(lambda a: a[a > 0], (x,), (0,))


def test_nested_vmap_of_advanced_indexing(rng):
    x = t(rng.standard_normal((2, 3, 4, 5)))
    idx = t(rng.integers(0, 5, (3, 2, 6)), np.int64)

    def f(a, i):
        return a[:, i]

    got = func.vmap(func.vmap(f), in_dims=(0, 1))(x, idx)
    want = np.stack([np.stack([arr(f(x[a, b], idx[b, a])) for b in range(3)]) for a in range(2)])
    np.testing.assert_array_equal(arr(got), want)


# -- cat / views / the rest ------------------------------------------------------------------
@pytest.mark.parametrize("dims", [(0, None), (None, 1), (1, 0, None), (None, None, 2)])
def test_vmap_cat_batched_and_unbatched(rng, dims):
    shapes = [(2, 3), (1, 3), (4, 3)][: len(dims)]
    xs = [
        batched(rng, s, d) if d is not None else t(rng.standard_normal(s))
        for s, d in zip(shapes, dims)
    ]
    check_vmap(lambda *a: numbagrad.cat(a), xs, dims)
    check_vmap(lambda *a: numbagrad.cat([u.t() for u in a], 1), xs, dims)
    if len(dims) == 2:
        check_vmap(lambda a, b: numbagrad.stack([a[:1], b[:1]], 1), xs, dims)


@pytest.mark.parametrize("d", [0, 1, 2])
def test_vmap_views(rng, d):
    x = batched(rng, (2, 3), d)
    for fn in [
        lambda a: a.reshape(6),
        lambda a: a.view(2, 3, 1),
        lambda a: a.reshape(3, -1),
        lambda a: a.view(-1, 1, 3),
        lambda a: a.t().reshape(6),
        lambda a: a.flatten(),
        lambda a: a.unsqueeze(1).expand(2, 4, 3),
        lambda a: a.expand(5, 2, 3),
        lambda a: a.permute(1, 0),
        lambda a: a.movedim(0, 1)[None],
        lambda a: a.squeeze(),
        lambda a: a[:, None].squeeze(1),
    ]:
        check_vmap(fn, (x,), (d,))


def test_vmap_view_keeps_the_batch_dim_in_place():
    x = t(np.arange(2 * B * 12).reshape(2, B, 12))  # examples: rows of a (2, B, 12) array
    got = vmapped(lambda a: a.view(2, 3, 4), (x,), (1,))
    np.testing.assert_array_equal(arr(got), loop(lambda a: a.view(2, 3, 4), (x,), (1,)))


@pytest.mark.parametrize("d", [0, 2])
def test_vmap_reorder_and_triangles(rng, d):
    x = batched(rng, (3, 4), d)
    for fn in [
        lambda a: a.flip(0),
        lambda a: a.roll((1, -1), (0, 1)),
        lambda a: a.roll(5),
        lambda a: a.diagonal(1),
        lambda a: a.diagonal(0, 1, 0),
        lambda a: a.tril(-1),
        lambda a: a.triu(1),
        lambda a: a.sort(0)[0],
        lambda a: a.sort(descending=True)[1],
        lambda a: a.argsort(0),
        lambda a: a.topk(2)[0],
        lambda a: a.split(2, 1)[1],
        lambda a: a.chunk(2)[0],
        lambda a: a.narrow(1, 1, 2),
    ]:
        check_vmap(fn, (x,), (d,))


def test_vmap_zero_dim_examples(rng):
    x = t(rng.standard_normal(B))
    check_vmap(lambda a: a.argsort(), (x,), (0,))
    check_vmap(lambda a: numbagrad.gather(a, 0, t(0, np.int64)), (x,), (0,))
    check_vmap(lambda a: a.sort()[0], (x,), (0,))


def test_vmap_tril_of_a_vector_raises(rng):
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        vmapped(lambda a: a.tril(), (batched(rng, (3,), 0),), (0,))


def test_vmap_nonzero_raises_dynamic_shape(rng):
    with pytest.raises(RuntimeError, match="dynamic output shape"):
        vmapped(lambda a: a.nonzero(), (batched(rng, (3, 4), 0),), (0,))


# -- the backward-only primitives under jacrev (vmap of their VJPs) --------------------------
@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.diagonal(),
        lambda x: x + numbagrad.ones(2, 3, 3, dtype=numbagrad.float64),  # SumTo
        lambda x: x[t([0, 2, 2], np.int64)],  # IndexBackward
        lambda x: x[1:, ::2],
        lambda x: numbagrad.gather(x, 1, t([[0, 0], [1, 2], [2, 1]], np.int64)),
        lambda x: numbagrad.scatter_add(x, 1, t([[0, 0], [1, 2], [2, 1]], np.int64), x[:, :2]),
        lambda x: numbagrad.cat([x, 2 * x.t()], 1).roll(1, 1).flip(0).tril(),
        lambda x: x.sort(1)[0] * x.topk(1)[0],
        lambda x: x.t().reshape(9).expand(2, 9),
    ],
    ids=[
        "diagonal",
        "sum_to",
        "index",
        "slice",
        "gather",
        "scatter_add",
        "cat_roll",
        "sort_topk",
        "reshape_expand",
    ],
)
def test_jacrev_equals_jacfwd(rng, fn):
    x = t(rng.standard_normal((3, 3)))
    batching._WARNED.clear()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        jr = func.jacrev(fn)(x)
        jf = func.jacfwd(fn)(x)
        func.hessian(lambda x: (fn(x) ** 3).sum())(x)
    np.testing.assert_allclose(arr(jr), arr(jf), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    e = np.zeros((3, 3))
    e[1, 2] = eps
    fd = (arr(fn(x + t(e))) - arr(fn(x - t(e)))) / (2 * eps)
    np.testing.assert_allclose(arr(jf)[..., 1, 2], fd, rtol=1e-6, atol=1e-8)


def test_index_checks_skip_only_the_values_of_tracers(rng):
    x = t(rng.standard_normal((3, 4)))
    with pytest.raises(RuntimeError, match="Expected dtype int64"):
        vmapped(lambda i: numbagrad.gather(x, 1, i), (t(np.zeros((B, 3, 1))),), (0,))
    with pytest.raises(IndexError, match="out of bounds"):
        x[..., t([4], np.int64)]
    np.testing.assert_array_equal(arr(x[..., t([3], np.int64)]), arr(x)[..., [3]])


# -- against torch.vmap ----------------------------------------------------------------------
def _torch_cases(torch):
    return [
        ("gather", lambda m, a, i: m.gather(a, 1, i), (3, 4), (3, 5), 4, (None, 0)),
        ("gather_both", lambda m, a, i: m.gather(a, 0, i), (3, 4), (2, 4), 3, (1, 0)),
        ("take_along_dim", lambda m, a, i: m.take_along_dim(a, i, 1), (3, 4), (1, 2), 4, (None, 1)),
        ("index_select", lambda m, a, i: m.index_select(a, 1, i), (3, 4), (5,), 4, (2, 0)),
        ("getitem", lambda m, a, i: a[:, i], (3, 4), (2, 2), 4, (None, 0)),
        ("getitem_paired", lambda m, a, i: a[i, i], (3, 3), (4,), 3, (0, 0)),
        ("getitem_rows", lambda m, a, i: a[i], (3, 4), (5,), 3, (1, None)),
        ("cat", lambda m, a, i: m.cat([a, a[:1] * 2], 0), (3, 4), (1,), 1, (0, None)),
    ]


@pytest.mark.parametrize("case", range(8))
def test_matches_torch_vmap(rng, case):
    torch = pytest.importorskip("torch")
    name, fn, xshape, ishape, high, dims = _torch_cases(torch)[case]
    xd, idim = dims
    x = batched(rng, xshape, xd) if xd is not None else t(rng.standard_normal(xshape))
    idx = (
        batched(rng, ishape, idim, high)
        if idim is not None
        else t(rng.integers(0, high, ishape), np.int64)
    )
    got = vmapped(lambda a, i: fn(numbagrad, a, i), (x, idx), dims)
    want = torch.vmap(lambda a, i: fn(torch, a, i), in_dims=dims)(
        torch.from_numpy(arr(x).copy()), torch.from_numpy(arr(idx).copy())
    )
    np.testing.assert_allclose(arr(got), want.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
