"""Linear algebra: ``matmul`` (the primitive, NumPy's BLAS underneath) and ``einsum``;
``mm``, ``bmm``, ``dot``, ``outer`` are checked composites of ``matmul``."""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._core.grad_mode import is_grad_enabled_fast
from numbagrad._creation import eye, zeros
from numbagrad._tensor import Tensor
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import align_batched, both_ways, conj_all, front
from numbagrad.ops._util import as_tensor_arg, wrap_dim
from numbagrad.ops.binary import _check_shapes, _prep
from numbagrad.ops.reduce import _torch_name
from numbagrad.ops.shape import diagonal

__all__: list = []


def _rows(shape):
    """``shape`` as the 2-D ``(rows, last)`` its leading dims fold into (not ``(-1, last)``,
    which cannot be inferred when ``last`` is 0)."""
    return (math.prod(shape[:-1]), shape[-1])


def _matmul_rule(m, ctx, saved, g, mat2_t=False):
    a, b = conj_all(saved)  # (complex: g @ b^H, a^H @ g)
    ga = m.matmul(g, m.swapaxes(b, -1, -2)) if ctx.needs_input_grad(0) else None
    gb = None
    if ctx.needs_input_grad(1):
        if len(ctx.input_shape(1)) == 2 and a.ndim > 2:  # a's batch dims fold into rows
            a = m.reshape(a, _rows(a.shape))
            g = m.reshape(g, _rows(g.shape))
        if mat2_t and a.ndim == 2:
            # b was laid out column by column (``W.t()`` in ``linear``): its gradient is
            # made in that layout, as PyTorch's ``mm`` backward does, so ``W``'s is row-major
            gb = m.swapaxes(m.matmul(m.swapaxes(g, 0, 1), a), 0, 1)
        else:
            gb = m.matmul(m.swapaxes(a, -1, -2), g)
    return ga, gb  # batch dims broadcast: the engine sums them back


def _column_major(x):
    """Whether ``x`` is a 2-d tensor laid out as the transpose of a row-major matrix (a
    host tensor's strides, or the value's a ``grad``/``jvp`` tracer holds; device arrays
    and batched values do not say)."""
    if x._is_tracer:
        x = x._layout_value()
        if x is None:
            return False
    d = x._data
    if type(d) is not np.ndarray or d.ndim != 2:
        return False
    return d.flags.f_contiguous and not d.flags.c_contiguous


_MAT2_T = {"mat2_t": True}


class Matmul(Primitive):
    """Matrix product of operands with at least 2 dims (batch dims broadcast)."""

    linearity = "bilinear"
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's
    vjp, fused_vjp = both_ways(_matmul_rule)

    @staticmethod
    def impl(be, a, b, mat2_t=False):
        return be.math.matmul(a, b)  # (CPU float16: in float32, NOTE [Half precision])

    @staticmethod
    def batch(args, bdims, mat2_t=False):
        """One matmul for the whole batch. Against an unbatched matrix the batch (and any
        per-example batch dims) folds into the rows, so vector-matrix, matrix-vector and
        dot products (1-D operands arrive as ``(1, k)`` / ``(k, 1)``) are one BLAS call."""
        a, b = args
        da, db = bdims
        if db is None and b.ndim == 2:  # batched @ matrix: rows of a
            a = front(a, da)
            out = bind(Matmul, (F.reshape(a, _rows(a.shape)), b), NO_PARAMS)
            return F.reshape(out, (*a.shape[:-1], b.shape[-1])), 0
        if da is None and a.ndim == 2:  # matrix @ batched: (b^T @ a^T)^T, rows of b^T
            b = front(b, db)
            if b.shape[-1] == 1:  # matrix @ vectors: the vectors are the rows already
                out = bind(
                    Matmul, (F.reshape(b, _rows(b.shape[:-1])), F.swapaxes(a, 0, 1)), NO_PARAMS
                )
                return F.reshape(out, (*b.shape[:-2], a.shape[0], 1)), 0
            bt = F.swapaxes(b, -1, -2)
            out = bind(Matmul, (F.reshape(bt, _rows(bt.shape)), F.swapaxes(a, 0, 1)), NO_PARAMS)
            out = F.swapaxes(F.reshape(out, (*bt.shape[:-1], a.shape[0])), -1, -2)
            # (row-major per example, as PyTorch's: per-example gradients are flattened
            # with ``.view(batch, -1)``)
            return out.contiguous(), 0
        a, b = align_batched(args, bdims)
        if a.shape[-1] == 1:  # a contraction of length 1 is a broadcast product
            return a * b, 0
        return bind(Matmul, (a, b), NO_PARAMS), 0


class Mv(Primitive):
    """Matrix-vector product: ``a`` of shape ``(m, k)`` times ``b`` of shape ``(k,)``, or
    times each vector of a stack ``b`` of shape ``(..., k)``: ``out[..., i] = sum_j a[i, j]
    b[..., j]`` (``b @ a.T``, one BLAS call, no copy of ``a``).

    NOTE: its own primitive rather than ``Matmul`` of ``b`` as a ``(k, 1)`` column: that
    costs an unsqueeze and a squeeze around every ``W @ x``, each one more op for every
    transform to process (``vmap(grad(...))`` of a linear model pays them per call), and
    PyTorch names this node ``MvBackward0``. The public ``mv`` takes a vector; stacks come
    from the batching rule, where a batch of vectors against one matrix is then this one op
    (not a transpose of ``a`` and a ``Matmul``)."""

    linearity = "bilinear"
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's

    @staticmethod
    def impl(be, a, b):
        m = be.math
        return m.matmul(a, b) if b.ndim == 1 else m.matmul(b, m.swapaxes(a, 0, 1))

    @staticmethod
    def vjp(ctx, g):
        a, b = conj_all(ctx.saved())
        ga = gb = None
        if ctx.needs_input_grad(0):
            if b.ndim == 1:
                ga = bind(Outer, (g, b), NO_PARAMS)
            else:  # the outer products of the stack, summed: one matrix product
                g2 = F.reshape(g, _rows(g.shape))
                ga = F.matmul(F.swapaxes(g2, 0, 1), F.reshape(b, _rows(b.shape)))
        if ctx.needs_input_grad(1):
            gb = bind(Mv, (F.swapaxes(a, 0, 1), g), NO_PARAMS)
        return ga, gb

    # by hand (NOTE [Hand-written fused rules]): one matrix product on reshaped views; the tensor
    # form binds ``Outer``
    @staticmethod
    def fused_vjp(ctx, g):
        a, b = conj_all(ctx.saved_arrays())
        m = ctx.be.math
        ga = gb = None
        if ctx.needs_input_grad(0):
            if b.ndim == 1:
                ga = g[:, None] * b
            else:
                g2 = g.reshape(_rows(g.shape))
                ga = m.matmul(m.swapaxes(g2, 0, 1), b.reshape(_rows(b.shape)))
        if ctx.needs_input_grad(1):
            gb = m.matmul(g, a)
        return ga, gb

    @staticmethod
    def batch(args, bdims):
        """One product for the whole batch: vectors against one matrix join its stack of
        vectors; matrices against one vector stack their rows."""
        a, b = args
        da, db = bdims
        if da is None:
            return bind(Mv, (a, front(b, db)), NO_PARAMS), 0
        a = front(a, da)
        n, m, k = a.shape
        if db is None and b.ndim == 1:  # the n*m rows of the stacked matrices @ b
            out = bind(Mv, (F.reshape(a, (n * m, k)), b), NO_PARAMS)
            return F.reshape(out, (n, m)), 0
        if db is None:  # every matrix against the one stack: (1, P, k) @ (n, k, m)
            lead = tuple(b.shape[:-1])
            b = F.reshape(b, (1, *_rows(b.shape)))
        else:
            b = front(b, db)
            lead = tuple(b.shape[1:-1])
            if not lead:  # a vector per matrix: (n, m, k) @ (n, k, 1)
                out = bind(Matmul, (a, F.unsqueeze(b, -1)), NO_PARAMS)
                return F.squeeze(out, -1), 0
            b = F.reshape(b, (n, *_rows(b.shape[1:])))
        out = bind(Matmul, (b, F.swapaxes(a, 1, 2)), NO_PARAMS)  # (n, P, m)
        return F.reshape(out, (n, *lead, m)), 0


class Outer(Primitive):
    """Outer product over the last dimension: ``out[..., i, j] = a[..., i] * b[..., j]``,
    the leading dimensions broadcasting.

    NOTE: its own primitive rather than ``unsqueeze(a, -1) * unsqueeze(b, -2)``: it is the
    weight gradient of every ``W @ x`` (``Mv``'s VJP), and as one op ``vmap(grad(...))`` of a
    linear model runs it as one kernel on the whole batch, where the composite costs two
    reshapes, an alignment and a broadcast product, each through every active transform."""

    linearity = "bilinear"
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's

    @staticmethod
    def impl(be, a, b):
        if not (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype):
            a, b, _ = _prep(a, b)
        try:
            return be.outer(a, b)
        except ValueError:
            _check_shapes("mul", a.reshape((*a.shape, 1)), b.reshape((*b.shape[:-1], 1, -1)))
            raise

    @staticmethod
    def vjp(ctx, g):
        a, b = conj_all(ctx.saved())
        # matmul takes one dtype: a bool or integer operand (outer promotes) in g's
        a, b = (v if v is None or v.dtype == g.dtype else v.to(g.dtype) for v in (a, b))
        ga = gb = None
        if ctx.needs_input_grad(0):  # sum_j g[..., i, j] b[..., j]
            ga = F.matmul(g, b) if b.ndim == 1 else F.squeeze(F.matmul(g, F.unsqueeze(b, -1)), -1)
        if ctx.needs_input_grad(1):  # sum_i a[..., i] g[..., i, j]
            gb = F.matmul(a, g) if a.ndim == 1 else F.squeeze(F.matmul(F.unsqueeze(a, -2), g), -2)
        return ga, gb  # leading dims broadcast: the engine sums them back

    # by hand (NOTE [Hand-written fused rules]): matrix products on reshaped views, no
    # squeeze/unsqueeze nodes
    @staticmethod
    def fused_vjp(ctx, g):
        a, b = conj_all(ctx.saved_arrays())
        m = ctx.be.math
        ga = gb = None
        if ctx.needs_input_grad(0):
            ga = m.matmul(g, b.reshape((*b.shape, 1)))
            ga = ga.reshape(ga.shape[:-1])
        if ctx.needs_input_grad(1):
            gb = m.matmul(a.reshape((*a.shape[:-1], 1, a.shape[-1])), g)
            gb = gb.reshape(gb.shape[:-2] + gb.shape[-1:])
        return ga, gb

    @staticmethod
    def batch(args, bdims):
        """The batch in front, batched operands padded to a common rank: the leading
        dimensions then broadcast with the batch first."""
        return bind(Outer, align_batched(args, bdims), NO_PARAMS), 0


def _promote_pair(name, a, b):
    a = as_tensor_arg(a, "input")
    b = as_tensor_arg(b, "other")
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"{name}: expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
        )
    return a, b


@public
def matmul(input, other):
    """Matrix product with NumPy/PyTorch semantics for 1-D, 2-D and batched operands.

    1-D operands are treated as a row (left) or column (right) vector and the added dim is
    removed from the result; batch dims broadcast.

    Raises
    ------
    RuntimeError
        When the inner dimensions differ (the message gives both shapes).

    Examples
    --------
    >>> import numbagrad
    >>> a = numbagrad.ones(2, 3)
    >>> (a @ numbagrad.ones(3)).tolist()
    [3.0, 3.0]
    """
    a, b = _promote_pair("matmul", input, other)
    sa, sb = a.shape, b.shape
    na, nb = len(sa), len(sb)
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D"
        )
    if sa[-1] != (sb[-2] if nb > 1 else sb[0]):
        ma = "x".join(map(str, sa[-2:] if na > 1 else (1, *sa)))
        mb = "x".join(map(str, sb[-2:] if nb > 1 else (*sb, 1)))
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({ma} and {mb}); "
            f"full shapes {list(sa)} and {list(sb)}"
        )
    if na > 2 or nb > 2:
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2] if nb > 1 else ())
        except ValueError:
            raise RuntimeError(
                f"matmul: batch dimensions of {list(sa)} and {list(sb)} are not broadcastable"
            ) from None
    if nb == 1 and na == 2:
        return bind(Mv, (a, b), NO_PARAMS)
    squeeze_a = na == 1
    squeeze_b = nb == 1
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(-1)
    # (``mat2_t``: the layout of ``b``'s gradient, ``_matmul_rule``; a hint only, looked
    # for where that gradient may be taken)
    hint = nb == 2 and (b._requires_grad or b._is_tracer) and _column_major(b)
    out = bind(Matmul, (a, b), _MAT2_T if hint else NO_PARAMS)
    if squeeze_a and squeeze_b:
        return out.reshape(())
    if squeeze_a:
        return out.squeeze(-2)
    if squeeze_b:
        return out.squeeze(-1)
    return out


@public
def mm(input, mat2):
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    return matmul(input, mat2)


@public
def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch size."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {input.ndim}D and {mat2.ndim}D")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input.shape[0]} and {mat2.shape[0]}")
    return matmul(input, mat2)


@public
def mv(input, vec):
    """Product of a matrix ``input`` of shape ``(m, k)`` and a vector ``vec`` of shape
    ``(k,)``: a tensor of shape ``(m,)``.

    Raises
    ------
    RuntimeError
        When ``input`` is not 2-D or ``vec`` not 1-D, or their sizes or dtypes differ.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.mv(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]), numbagrad.tensor([1.0, 1.0]))
    tensor([3., 7.])
    """
    a, b = _promote_pair("mv", input, vec)
    if a.ndim != 2 or b.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {b.ndim}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
            f"vec ({b.shape[0]})"
        )
    return bind(Mv, (a, b), NO_PARAMS)


@public(aliases=("vdot",))
def dot(input, other):
    """Inner product of two 1-D tensors of equal length."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
            f"src [{other.shape[0]}] to have the same number of elements, but "
            "got different numbers of elements"
        )
    return matmul(input, other)


@public
def inner(input, other):
    """Inner product over the last dimension: ``out[i..., j...] = sum_k input[i..., k] *
    other[j..., k]`` (of 1-D tensors, :func:`dot`; a 0-d operand multiplies).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.inner(numbagrad.ones(2, 3), numbagrad.ones(4, 3)).shape
    numbagrad.Size([2, 4])
    """
    if input.ndim == 0 or other.ndim == 0:
        return F.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    if input.ndim == 1 and other.ndim == 1:
        return dot(input, other)
    return F.tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


vdot = dot


@public(aliases=("ger",))
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.outer(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([3.0, 4.0, 5.0]))
    tensor([[ 3.,  4.,  5.],
            [ 6.,  8., 10.]])
    """
    input = as_tensor_arg(input, "input")
    vec2 = as_tensor_arg(vec2, "vec2")
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"outer: expected 1D tensors, got {input.ndim}D and {vec2.ndim}D: flatten them "
            "first, or use unsqueeze and * for outer products over other dimensions"
        )
    return bind(Outer, (input, vec2), NO_PARAMS)


ger = outer


def _all_operands(n):
    return tuple(range(n))


class Einsum(Primitive):
    """``einsum`` over explicit, distinct subscripts per operand (``einsum`` reduces the
    general case to this). Its VJP for operand ``i`` is the einsum of ``g`` with the other
    operands, summed over the indices only operand ``i`` has (then broadcast back)."""

    linearity = "bilinear"
    saves_inputs = staticmethod(_all_operands)

    @staticmethod
    def impl(be, *xs, ins, out):
        if len(xs) == 2 and xs[0].dtype == xs[1].dtype and xs[0].dtype.kind in "fc":
            res = _pair_einsum(be, xs[0], xs[1], ins[0], ins[1], out)
            if res is not None:
                return res
        with np.errstate(all="ignore"):  # inf * 0 is NaN, silently (NOTE [Quiet NumPy])
            return be.xp.einsum(",".join(ins) + "->" + out, *xs, optimize=len(xs) > 2)

    @staticmethod
    def jvp(primals, tangents, y, ins, out):
        # the product rule (``bilinear_jvp``, spelled out: ``out`` is a param here)
        params = {"ins": ins, "out": out}
        acc = None
        for i, t in enumerate(tangents):
            if t is not None:
                args = list(primals)
                args[i] = t
                term = bind(Einsum, args, params)
                acc = term if acc is None else acc + term
        return acc

    @staticmethod
    def batch(args, bdims, ins, out):
        """A new subscript for the batch dimension, at its place in each batched operand
        and first in the output."""
        used = set("".join(ins) + out)
        c = next(ch for ch in _LETTERS if ch not in used)
        ins = tuple(s if d is None else s[:d] + c + s[d:] for s, d in zip(ins, bdims))
        return bind(Einsum, args, {"ins": ins, "out": c + out}), 0

    @staticmethod
    def vjp(ctx, g, ins, out):
        operands = conj_all(ctx.saved())
        sizes = {}
        for i, sub in enumerate(ins):
            sizes.update(zip(sub, ctx.input_shape(i)))
        grads = []
        for i, sub in enumerate(ins):
            if not ctx.needs_input_grad(i):
                grads.append(None)
                continue
            others = [(s, op) for j, (s, op) in enumerate(zip(ins, operands)) if j != i]
            avail = set(out).union(*[set(s) for s, _ in others])
            target = "".join(c for c in sub if c in avail)
            gi = einsum(
                ",".join([out] + [s for s, _ in others]) + "->" + target,
                g,
                *[op for _, op in others],
            )
            if target != sub:  # indices summed in this operand only: broadcast back
                shape = tuple(sizes[c] if c in target else 1 for c in sub)
                gi = gi.reshape(shape).expand(tuple(sizes[c] for c in sub))
            grads.append(gi)
        return tuple(grads)


# NOTE [Einsum as a batched matmul]
# NumPy's ``einsum`` of two operands runs its own C loops (``c_einsum``) unless no index is
# shared by both operands and the output; ``optimize=True`` does not change that, so an
# FNO's spectral product ``bix,iox->box`` (a batch index ``x``) and its two VJPs took
# 2.6 ms each on (20, 32, 16) x (32, 32, 16) complex64, PyTorch's bmm ~0.1 ms. Two
# floating-point operands of one dtype therefore run as PyTorch's ``sumproduct_pair``
# does: the indices only one operand has and the output lacks are summed first; the shared
# indices the output keeps are the batch, the other shared ones the contraction; the
# operands are arranged as ``(batch, kept, contracted)`` and ``(batch, contracted, kept)``
# for one ``matmul`` (BLAS per batch entry) whose result is arranged as ``out``. A shared
# index whose sizes differ (a size-1 broadcast) goes to the backend's ``einsum``.
def _pair_einsum(be, a, b, sa, sb, out):
    """``einsum(sa + ',' + sb + '->' + out, a, b)`` as one batched ``matmul`` (NOTE [Einsum
    as a batched matmul]), C-contiguous; None where an index's sizes differ."""
    size_a, size_b = dict(zip(sa, a.shape)), dict(zip(sb, b.shape))
    if any(size_a[c] != size_b[c] for c in size_a if c in size_b):
        return None
    sizes = {**size_a, **size_b}

    def drop(sub, x, other):  # sum the indices that neither the other operand nor out has
        gone = tuple(i for i, c in enumerate(sub) if c not in other and c not in out)
        if not gone:
            return sub, x
        return "".join(c for i, c in enumerate(sub) if i not in gone), be.sum(x, gone, False, None)

    sa, a = drop(sa, a, sb)
    sb, b = drop(sb, b, sa)
    batch = [c for c in sa if c in sb and c in out]
    inner = [c for c in sa if c in sb and c not in out]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]
    nb, nl, ni, nr = (math.prod(sizes[c] for c in g) for g in (batch, left, inner, right))

    def arrange(sub, x, order, shape):
        x = be.xp.transpose(x, tuple(sub.index(c) for c in order))
        return be.xp.reshape(be.xp.ascontiguousarray(x), shape)

    if nb == 1:  # one matrix product (2-D: the backend's plain GEMM)
        p = be.math.matmul(
            arrange(sa, a, batch + left + inner, (nl, ni)),
            arrange(sb, b, batch + inner + right, (ni, nr)),
        )
    else:
        p = be.math.matmul(
            arrange(sa, a, batch + left + inner, (nb, nl, ni)),
            arrange(sb, b, batch + inner + right, (nb, ni, nr)),
        )
    order = batch + left + right
    p = be.xp.reshape(p, tuple(sizes[c] for c in order))
    p = be.xp.ascontiguousarray(be.xp.transpose(p, tuple(order.index(c) for c in out)))
    return be.xp.reshape(p, tuple(sizes[c] for c in out))  # (NumPy's makes a 0-d array 1-d)


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _expand_ellipsis(ins, out, operands, has_arrow):
    """Spell ``...`` out with letters unused elsewhere (equal sizes, right-aligned)."""
    used = set("".join(ins) + (out or ""))
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    new_ins = []
    for sub, op in zip(ins, operands):
        if "..." in sub:
            n = op.ndim - (len(sub) - 3)
            if n < 0:
                raise RuntimeError(
                    f"einsum(): operand {sub!r} has fewer dimensions than subscripts"
                )
            n_ell = max(n_ell, n)
            letters = "".join(spare[len(spare) - n :]) if n else ""
            sub = sub.replace("...", letters)
        new_ins.append(sub)
    ell = "".join(spare[len(spare) - n_ell :]) if n_ell else ""
    if has_arrow:
        out = out.replace("...", ell)
    else:
        counts = {}
        for c in "".join(new_ins):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return new_ins, out


@public(method=False)
def einsum(equation, *operands):
    """Einstein summation, e.g. ``einsum('ij,jk->ik', a, b)``.

    Supports implicit or explicit output, ``...`` (the ellipsis dims must have equal
    sizes across operands) and repeated subscripts within an operand (traces and
    diagonals, taken with :func:`diagonal` first, so every case is differentiable).

    Examples
    --------
    >>> import numbagrad
    >>> a = numbagrad.eye(3)
    >>> numbagrad.einsum('ii', a).item()
    3.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = tuple(as_tensor_arg(o, "operands") for o in operands)
    eq = equation.replace(" ", "")
    has_arrow = "->" in eq
    lhs, out = eq.split("->") if has_arrow else (eq, None)
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise RuntimeError(
            f"einsum(): {len(ins)} operands in the equation but {len(operands)} given"
        )
    if "..." in eq:
        ins, out = _expand_ellipsis(ins, out, operands, has_arrow)
    elif not has_arrow:
        counts = {}
        for c in lhs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    ops = list(operands)
    for k, (sub, op) in enumerate(zip(ins, ops)):
        if len(sub) != op.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation "
                f"({len(sub)}) does not match the number of dimensions "
                f"({op.ndim}) for operand {k}"
            )
        while len(set(sub)) != len(sub):  # a repeated index: take that diagonal first
            c = next(ch for ch in sub if sub.count(ch) > 1)
            p = sub.index(c)
            q = sub.index(c, p + 1)
            if op.shape[p] != op.shape[q]:
                raise RuntimeError(
                    f"einsum(): subscript {c!r} is repeated for operand {k} "
                    f"but the sizes don't match, {op.shape[p]} != "
                    f"{op.shape[q]}"
                )
            op = diagonal(op, 0, p, q)
            sub = sub[:p] + sub[p + 1 : q] + sub[q + 1 :] + c
        ins[k], ops[k] = sub, op
    sizes = {}
    for sub, op in zip(ins, ops):
        for c, n in zip(sub, op.shape):
            m = sizes.setdefault(c, n)
            if m != n and 1 not in (m, n):
                raise RuntimeError(
                    f"einsum(): operands do not broadcast: subscript {c!r} has sizes {m} and {n}"
                )
            sizes[c] = n if m == 1 else m
    # a subscript of size 1 in one operand broadcasts against the others, as in PyTorch
    for k, (sub, op) in enumerate(zip(ins, ops)):
        full = tuple(sizes[c] for c in sub)
        if tuple(op.shape) != full:
            ops[k] = op.expand(full)
    for c in out:
        if c not in sizes:
            raise RuntimeError(
                f"einsum(): output subscript {c!r} does not appear in the "
                "equation for any input operand"
            )
    grads = [o.requires_grad for o in ops] if is_grad_enabled_fast() else [False] * len(ops)
    dt = _einsum_dtype(ins, out, sizes, [o.dtype for o in ops], grads)
    ops = tuple(o if o.dtype is dt else o.to(dt) for o in ops)
    return bind(Einsum, ops, {"ins": tuple(ins), "out": out})


def _sum_dtype(dt):
    """The dtype of ``sum`` over ``dt``: bool and integers sum in int64."""
    return dt if dt.is_floating_point or dt.is_complex else D.int64


def _einsum_dtype(ins, out, sizes, dtypes, grads):
    """The dtype of PyTorch's einsum of operands of ``dtypes``, raising where it raises
    (``grads``: which operands require grad).

    PyTorch contracts the operands left to right, the result first. An index to sum that
    only one of the pair still has is summed in it first (bool and integers to int64). A
    pair that shares indices to sum goes through bmm: one dtype for both and no bool,
    unchecked when the product has no elements (the result has mat2's dtype then, and a
    bool or integer result that would require grad raises); other pairs are multiplied
    (promotion)."""
    first = dtypes[0]
    if first.is_floating_point or first.is_complex or first is D.int64:
        if all(d is first for d in dtypes):
            return first
    summed = set("".join(ins)) - set(out)
    # the indices each operand has with a size other than 1 (size-1 ones broadcast)
    live = [{c for c in sub if sizes[c] != 1} for sub in ins]
    if len(ins) == 1:
        return _sum_dtype(first) if summed else first
    counts = {c: sum(c in term for term in live) for c in summed}
    pending = list(zip(live, dtypes, grads))
    while len(pending) > 1:
        (a, da, ga), (b, db, gb) = pending[0], pending[1]
        del pending[:2]
        bmm_dims = set()
        for c in summed:
            if c in a and c in b:
                counts[c] -= 1
                if counts[c] == 1:
                    bmm_dims.add(c)
                    counts[c] = 0
            elif counts[c] == 1 and (c in a or c in b):
                counts[c] = 0
                if c in a:
                    a, da = a - {c}, _sum_dtype(da)
                else:
                    b, db = b - {c}, _sum_dtype(db)
        kept = (a | b) - bmm_dims
        if not bmm_dims:
            dt = D.promote_types(da, db)
        elif math.prod(sizes[c] for c in kept) and math.prod(sizes[c] for c in bmm_dims):
            if da is D.bool:
                raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
            if db is not da:
                raise RuntimeError(
                    f"expected scalar type {_scalar_name(da)} but found {_scalar_name(db)}"
                )
            dt = da
        else:
            dt = db
            if (ga or gb) and not dt.is_floating_point:
                raise RuntimeError(f"Autograd not support dtype: {_scalar_name(dt)}")
        pending.insert(0, (kept, dt, ga or gb))
    return pending[0][1]


def _scalar_name(dt):
    return _torch_name(dt)


# -- the top-level linear-algebra functions (``torch.<name>``) over ``numbagrad.linalg``'s
# primitives (``ops/linalg_decomp.py``) ----------------------------------------------------------
from numbagrad.ops import linalg_decomp as _L  # noqa: E402


def _check_2d(name, x, what="matrix"):
    if x.ndim != 2:
        raise RuntimeError(f"{name}: expected a {what}, but got tensor with dim {x.ndim}")


@public
def svd(input, some=True, compute_uv=True):
    """Singular value decomposition in ``torch.svd``'s convention: ``(U, S, V)`` with
    ``input = U diag(S) V^T`` (``V``, not ``Vh`` as :func:`numbagrad.linalg.svd` returns).

    ``some=True`` gives the reduced factors; ``compute_uv=False`` returns zero-filled ``U``
    and ``V`` of the full shapes (as PyTorch does). Batched over leading dims. See
    :func:`numbagrad.linalg.svd` for the gradient caveats at repeated singular values.

    Examples
    --------
    >>> import numbagrad
    >>> U, S, V = numbagrad.svd(numbagrad.tensor([[3.0, 0.0], [0.0, -2.0]]))
    >>> S.tolist()
    [3.0, 2.0]
    """
    _L.check_matrix(input, "linalg.svd")
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        s = _L.svdvals(input)
        batch = tuple(input.shape[:-2])

        return _L.TorchSvdResult(
            zeros(*batch, m, m, dtype=input.dtype), s, zeros(*batch, n, n, dtype=input.dtype)
        )
    u, s, vh = _L.svd(input, full_matrices=not some)
    return _L.TorchSvdResult(u, s, vh.mH)  # (V = Vh^H: conjugated for complex input)


@public
def det(input):
    """Determinant of a (batch of) square matrices, :func:`numbagrad.linalg.det`.

    Examples
    --------
    >>> import numbagrad
    >>> print(round(float(numbagrad.det(numbagrad.tensor([[2.0, 1.0], [1.0, 3.0]]))), 4))
    5.0
    """
    return _L.det(input)


@public
def slogdet(input):
    """``(sign, logabsdet)`` of the determinant, :func:`numbagrad.linalg.slogdet`.

    Examples
    --------
    >>> import numbagrad
    >>> sign, logabsdet = numbagrad.slogdet(numbagrad.tensor([[-2.0, 0.0], [0.0, 1.0]]))
    >>> print(float(sign), round(float(logabsdet), 4))
    -1.0 0.6931
    """
    return _L.slogdet(input)


@public
def logdet(input):
    """``log(det(input))``: nan for a negative determinant, ``-inf`` for a singular matrix.

    Examples
    --------
    >>> import numbagrad
    >>> print(round(float(numbagrad.logdet(numbagrad.eye(3) * 2.0)), 4))
    2.0794
    """
    sign, logabs = _L.slogdet(input)
    if sign.dtype.is_complex:  # as PyTorch's composite: log(sign) + logabsdet
        return F.log(sign) + logabs
    # as PyTorch's composite: NaN (a constant, so no gradient) where the sign is -1
    return F.where(sign == -1, float("nan"), logabs)


@public
def inverse(input):
    """Inverse of a (batch of) square matrices, :func:`numbagrad.linalg.inv`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.inverse(numbagrad.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _L.inv(input)


@public
def cholesky(input, upper=False):
    """Cholesky factor of a symmetric positive-definite matrix (``torch.cholesky``; the
    lower factor, or the upper one with ``upper=True``), :func:`numbagrad.linalg.cholesky`.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.cholesky(numbagrad.tensor([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    return _L.cholesky(input, upper=upper)


@public
def cholesky_solve(input, input2, upper=False):
    """Solve ``A X = input`` given the Cholesky factor ``input2`` of ``A`` (lower, or upper
    with ``upper=True``): two triangular solves, differentiable in both arguments.

    Examples
    --------
    >>> import numbagrad
    >>> L = numbagrad.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> numbagrad.cholesky_solve(numbagrad.tensor([[4.0], [2.0]]), L).tolist()
    [[1.0], [0.0]]
    """
    _L.check_matrix(input, "cholesky_solve", name="B")
    _L.check_matrix(input2, "cholesky_solve", square=True)
    low = input2.mH if upper else input2  # A = L L^H (complex: conjugate transposes)
    y = _L.solve(low, input)
    return _L.solve(low.mH, y)


@public
def cholesky_inverse(input, upper=False):
    """The inverse of ``A`` from its Cholesky factor ``input`` (``A = L L^H``, or
    ``U^H U`` with ``upper=True``), batched: ``cholesky_solve`` of the identity, so
    differentiable in the factor.

    Examples
    --------
    >>> import numbagrad
    >>> L = numbagrad.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> numbagrad.cholesky_inverse(L).tolist()
    [[0.5, -0.5], [-0.5, 1.0]]
    """
    _L.check_matrix(input, "cholesky_inverse", square=True)
    n = input.shape[-1]
    ident = eye(n, dtype=input.dtype, device=input.device)
    if input.ndim > 2:
        ident = F.expand(ident, (*input.shape[:-2], n, n))
    return cholesky_solve(ident, input, upper)


@public
def matrix_exp(input):
    """Matrix exponential, :func:`numbagrad.linalg.matrix_exp`.

    Examples
    --------
    >>> import numbagrad
    >>> print(round(float(numbagrad.matrix_exp(numbagrad.zeros(2, 2))[0, 0]), 4))
    1.0
    """
    return _L.matrix_exp(input)


@public
def pinverse(input, rcond=1e-15):
    """Pseudo-inverse with singular values below ``rcond * s_max`` dropped
    (:func:`numbagrad.linalg.pinv` with ``rtol=rcond``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.pinverse(numbagrad.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return _L.pinv(input, rtol=rcond)


@public
def matrix_power(input, n):
    """``input`` multiplied by itself ``n`` times (the identity for ``n = 0``, powers of the
    inverse for ``n < 0``), by repeated squaring.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.matrix_power(numbagrad.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    _L.check_matrix(input, "linalg.matrix_power", square=True)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        return F.expand(eye(input.shape[-1], dtype=input.dtype), tuple(input.shape)).clone()
    x = _L.inv(input) if n < 0 else input
    n = abs(int(n))
    result = None
    while True:
        if n & 1:
            result = x if result is None else matmul(result, x)
        n >>= 1
        if not n:
            return result
        x = matmul(x, x)


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensors whose diagonals (``offset`` of dims ``dim1``, ``dim2`` of the result) are
    filled by the last dimension of ``input``; zeros elsewhere.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.diag_embed(numbagrad.tensor([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    input = as_tensor_arg(input, "input")
    nd = input.ndim + 1
    d1 = dim1 + nd if dim1 < 0 else dim1
    d2 = dim2 + nd if dim2 < 0 else dim2
    if not (0 <= d1 < nd and 0 <= d2 < nd):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, "
            f"{nd - 1}], but got {dim1 if not 0 <= d1 < nd else dim2})"
        )
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if input.ndim == 0:
        input = input.reshape(1)
    k = input.shape[-1] + abs(offset)
    lead = list(input.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(k if i in (d1, d2) else lead.pop(0))
    return bind(
        _L.DiagonalBackward,
        (input,),
        {"shape": tuple(shape), "offset": offset, "dim1": d1, "dim2": d2},
    )


@public
def diag(input, diagonal=0):
    """A 1-D input as the ``diagonal``-th diagonal of a square matrix; a 2-D input's
    ``diagonal``-th diagonal (a copy).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.diag(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 4.0]
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return F.diagonal(input, diagonal, 0, 1).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")


@public
def trace(input):
    """Sum of the main diagonal of a 2-D tensor.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.trace(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    _check_2d("trace", input)
    return F.diagonal(input, 0, 0, 1).sum()


@public
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.dist(numbagrad.tensor([3.0, 0.0]), numbagrad.tensor([0.0, 4.0])).item()
    5.0
    """
    return F.norm(input - other, p)


@public
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise ``p``-norm distances between the rows of ``x1`` ``(..., P, M)`` and
    ``x2`` ``(..., R, M)``: ``(..., P, R)``, batch dims broadcast.

    Computed from the differences (exact, including for ``p=2``, where PyTorch may use a
    matrix product for large inputs); the gradient at zero distance is 0 for ``p=2``, as
    in PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> a = numbagrad.tensor([[0.0, 0.0], [3.0, 4.0]])
    >>> numbagrad.cdist(a, a).tolist()
    [[0.0, 5.0], [5.0, 0.0]]
    """
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in (
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    ):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:  # PyTorch's count min(ceil(|d|), 1): NaN stays NaN; a zero gradient
        return F.minimum(F.ceil(F.abs(diff)), 1.0).sum(-1)
    return F.norm(diff, p, -1)


@public
def tensordot(a, b, dims=2):
    """Contract ``dims`` trailing dims of ``a`` with leading dims of ``b`` (an int), or the
    listed dims (a pair of lists).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensordot(numbagrad.ones(2, 3), numbagrad.ones(3, 4), dims=1).shape
    numbagrad.Size([2, 4])
    """
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:  # no type promotion (PyTorch checks before the dims)
        raise RuntimeError("both inputs should have same dtype")
    if a.dtype is D.bool and a.numel() and b.numel():  # PyTorch's mm, which has no bool
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")

    da = [wrap_dim(d, a.ndim) for d in da]  # PyTorch's IndexError out of range
    db = [wrap_dim(d, b.ndim) for d in db]
    for x, y in zip(da, db):
        # as PyTorch, a size-1 contracted dim broadcasts, by summing the other operand over
        # that dim first (so inf * (sum of the others), where products then a sum give NaN)
        if b.shape[y] == 1:
            a = a.sum(x, keepdim=True)
        elif a.shape[x] == 1:
            b = b.sum(y, keepdim=True)
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size "
                f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                f"dim {y}"
            )
    sa = list(_LETTERS[: a.ndim])
    sb = list(_LETTERS[a.ndim : a.ndim + b.ndim])
    for x, y in zip(da, db):
        sb[y] = sa[x]
    out = "".join(c for i, c in enumerate(sa) if i not in da) + "".join(
        c for i, c in enumerate(sb) if i not in db
    )
    return einsum("".join(sa) + "," + "".join(sb) + "->" + out, a, b)


@public
def kron(input, other):
    """Kronecker product (dims aligned from the right, the shorter padded with ones).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.kron(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([1.0, 10.0])).tolist()
    [1.0, 10.0, 2.0, 20.0]
    """
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    sa, sb = [], []
    for x, y in zip(a.shape, b.shape):
        sa += [x, 1]
        sb += [1, y]
    out = a.reshape(tuple(sa)) * b.reshape(tuple(sb))
    return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


def _cross(input, other, dim, name):
    shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    a = F.expand(input, shape) if tuple(input.shape) != shape else input
    b = F.expand(other, shape) if tuple(other.shape) != shape else other
    return F.roll(a, -1, dim) * F.roll(b, -2, dim) - F.roll(a, -2, dim) * F.roll(b, -1, dim)


@public
def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (``torch.cross``: with ``dim=None``, the
    first dim of size 3; :func:`numbagrad.linalg.cross` defaults to ``dim=-1``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.cross(numbagrad.tensor([1.0, 0.0, 0.0]),
    ...                 numbagrad.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    if dim is None:
        import warnings

        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross."
            "\nThe default value of dim will change to agree with that of "
            "linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        if input.ndim != other.ndim:
            raise RuntimeError(
                f"Expected input and other to have the same number of "
                f"dimensions, but got {input.ndim} and {other.ndim}"
            )
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


def linalg_cross(input, other, *, dim=-1):
    """``numbagrad.linalg.cross`` (kept here so the top-level ``cross`` can share it)."""
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions. "
            f"Got {input.ndim} and {other.ndim}"
        )
    d = dim + input.ndim if dim < 0 else dim
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[d]} and {other.shape[d]}"
        )
    # as PyTorch's kernel: dispatched on input's dtype (no bool), other must have the same
    if input.dtype is D.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if other.dtype is not input.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input.dtype)} but found "
            f"{_scalar_name(other.dtype)}"
        )
    return _cross(input, other, d, "linalg.cross")


def _scaled_sum(input, prod, beta, alpha):
    if not prod.dtype.is_floating_point:
        # alpha and beta in the product's dtype, as PyTorch's alpha.to<scalar_t>(): an
        # int64 addmm with alpha=2.5 scales by 2 and stays int64
        cast = bool if prod.dtype.np.kind == "b" else int
        alpha, beta = cast(alpha), cast(beta)
    out = prod if alpha == 1 else prod * alpha
    if tuple(input.shape) != tuple(prod.shape) and (
        input.ndim > prod.ndim
        or any(a not in (1, b) for a, b in zip(input.shape[::-1], prod.shape[::-1]))
    ):
        input.expand(*prod.shape)  # PyTorch's error: input must expand to the product's shape
    if beta == 0:
        return out
    return out + (input if beta == 1 else input * beta)


@public(inplace=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcast; ignored when
    ``beta == 0``, so its nan/inf do not propagate).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.addmm(numbagrad.ones(2, 2), numbagrad.eye(2), numbagrad.eye(2)).tolist()
    [[2.0, 1.0], [1.0, 2.0]]
    """
    if hasattr(input, "dtype") and input.dtype is not mat2.dtype:  # no promotion
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got "
            f"{_scalar_name(input.dtype)} and {_scalar_name(mat2.dtype)}"
        )
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{_scalar_name(mat1.dtype)} and {_scalar_name(mat2.dtype)}"
        )
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


@public(inplace=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.baddbmm(numbagrad.zeros(1, 2, 2), numbagrad.ones(1, 2, 3),
    ...                   numbagrad.ones(1, 3, 2)).tolist()
    [[[3.0, 3.0], [3.0, 3.0]]]
    """
    if hasattr(input, "dtype") and not (input.dtype is batch1.dtype is batch2.dtype):
        n = {"Float": "float", "Double": "double", "Long": "long int"}
        a, b, c = (
            n.get(_scalar_name(t.dtype), _scalar_name(t.dtype).lower())
            for t in (input, batch1, batch2)
        )
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {a}, batch1: {b}, batch2: {c}"
        )
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


@public(inplace=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.addmv(numbagrad.ones(2), numbagrad.eye(2), numbagrad.ones(2)).tolist()
    [2.0, 2.0]
    """
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}"
        )
    if hasattr(input, "dtype") and not (input.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            + ", ".join(_scalar_name(t.dtype) for t in (input, mat))
            + f", and {_scalar_name(vec.dtype)}"
        )
    return _scaled_sum(input, matmul(mat, vec), beta, alpha)


@public(inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``: ``input`` broadcast to the ``(n, m)``
    outer product of the vectors, the three operands promoted to one dtype (ignored when
    ``beta == 0``, so its nan/inf do not propagate).

    Parameters
    ----------
    input : Tensor
        Broadcastable to ``(len(vec1), len(vec2))``.
    vec1, vec2 : Tensor
        1-D.
    beta, alpha : number, optional
        Factors of ``input`` and of the outer product; integral and bool operands take
        no floating-point factors (as PyTorch).

    Returns
    -------
    Tensor
        The ``(n, m)`` result; differentiable in all three operands.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.addr(numbagrad.zeros(3, 2), numbagrad.arange(1.0, 4.0),
    ...                numbagrad.arange(1.0, 3.0)).tolist()
    [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]
    """
    for pos, (name, t) in enumerate((("input", input), ("vec1", vec1), ("vec2", vec2)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"addr(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}"
            )
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    dt = D.promote_types(D.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, complex) and not dt.is_complex:
            raise RuntimeError(f"addr: {name}={s!r} is complex, but the operands are {dt}")
        if isinstance(s, float) and not dt.is_floating_point and not dt.is_complex:
            raise RuntimeError(  # (bool operands too: PyTorch's words)
                f"For integral input tensors, argument {name} must not be a floating point number."
            )
    a, b = vec1.to(dt), vec2.to(dt)
    if dt is D.bool:  # logical, as PyTorch: (beta and input) or (alpha and vec1 x vec2)
        prod = F.logical_and(F.unsqueeze(a, -1), b)
        if not alpha:
            prod = F.logical_and(prod, False)
        return prod if not beta else F.logical_or(prod, F.broadcast_to(input, prod.shape))
    return _scaled_sum(input.to(dt), F.mul(F.unsqueeze(a, -1), b), beta, alpha)
