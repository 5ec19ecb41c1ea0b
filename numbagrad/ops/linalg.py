"""Linear algebra: ``matmul`` (the primitive, NumPy's BLAS underneath) and ``einsum``;
``mm``, ``bmm``, ``dot``, ``outer`` are checked composites of ``matmul``."""

from __future__ import annotations

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._rules import align_batched, both_ways, front
from numbagrad.ops._util import as_tensor_arg
from numbagrad.ops.shape import diagonal

__all__ = ["ALL", "bmm", "dot", "einsum", "ger", "inner", "matmul", "mm", "outer", "vdot"]


def _matmul_rule(m, ctx, saved, g):
    a, b = saved
    ga = m.matmul(g, m.swapaxes(b, -1, -2)) if ctx.needs_input_grad(0) else None
    gb = m.matmul(m.swapaxes(a, -1, -2), g) if ctx.needs_input_grad(1) else None
    return ga, gb  # batch dims broadcast: the engine sums them back


class Matmul(Primitive):
    """Matrix product of operands with at least 2 dims (batch dims broadcast)."""

    linearity = "bilinear"
    saves_inputs = (0, 1)
    saved_for = ((1,), (0,))  # a is needed only for b's gradient, b for a's
    vjp, fused_vjp = both_ways(_matmul_rule)

    @staticmethod
    def impl(be, a, b):
        return be.xp.matmul(a, b)

    @staticmethod
    def batch(args, bdims):
        """One matmul for the whole batch. Against an unbatched matrix the batch (and any
        per-example batch dims) folds into the rows, so vector-matrix, matrix-vector and
        dot products (1-D operands arrive as ``(1, k)`` / ``(k, 1)``) are one BLAS call."""
        a, b = args
        da, db = bdims
        if db is None and b.ndim == 2:  # batched @ matrix: rows of a
            a = front(a, da)
            out = bind(Matmul, (F.reshape(a, (-1, a.shape[-1])), b), NO_PARAMS)
            return F.reshape(out, (*a.shape[:-1], b.shape[-1])), 0
        if da is None and a.ndim == 2:  # matrix @ batched: (b^T @ a^T)^T, rows of b^T
            bt = F.swapaxes(front(b, db), -1, -2)
            out = bind(Matmul, (F.reshape(bt, (-1, bt.shape[-1])), F.swapaxes(a, 0, 1)),
                       NO_PARAMS)
            return F.swapaxes(F.reshape(out, (*bt.shape[:-1], a.shape[0])), -1, -2), 0
        a, b = align_batched(args, bdims)
        if a.shape[-1] == 1:  # a contraction of length 1 is a broadcast product
            return a * b, 0
        return bind(Matmul, (a, b), NO_PARAMS), 0


def _promote_pair(name, a, b):
    a = as_tensor_arg(a, "input")
    b = as_tensor_arg(b, "other")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{name}: expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype} != {b.dtype}")
    return a, b


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
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        sa = "x".join(map(str, a.shape[-2:] if a.ndim > 1 else (1, *a.shape)))
        sb = "x".join(map(str, b.shape[-2:] if b.ndim > 1 else (*b.shape, 1)))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}); "
                           f"full shapes {list(a.shape)} and {list(b.shape)}")
    if a.ndim > 2 or b.ndim > 2:
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2] if b.ndim > 1 else ())
        except ValueError:
            raise RuntimeError(f"matmul: batch dimensions of {list(a.shape)} and "
                               f"{list(b.shape)} are not broadcastable") from None
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(-1)
    out = bind(Matmul, (a, b), NO_PARAMS)
    if squeeze_a and squeeze_b:
        return out.reshape(())
    if squeeze_a:
        return out.squeeze(-2)
    if squeeze_b:
        return out.squeeze(-1)
    return out


def mm(input, mat2):
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    return matmul(input, mat2)


def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch size."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {input.ndim}D and {mat2.ndim}D")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input.shape[0]} and {mat2.shape[0]}")
    return matmul(input, mat2)


def dot(input, other):
    """Inner product of two 1-D tensors of equal length."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           "got different numbers of elements")
    return matmul(input, other)


inner = dot
vdot = dot


def outer(input, vec2):
    """Outer product of two 1-D tensors."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError("outer: expected 1D tensors")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


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
        operands = ctx.saved()
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
            gi = einsum(",".join([out] + [s for s, _ in others]) + "->" + target,
                        g, *[op for _, op in others])
            if target != sub:  # indices summed in this operand only: broadcast back
                shape = tuple(sizes[c] if c in target else 1 for c in sub)
                gi = gi.reshape(shape).expand(tuple(sizes[c] for c in sub))
            grads.append(gi)
        return tuple(grads)


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
                raise RuntimeError(f"einsum(): operand {sub!r} has fewer dimensions than "
                                   "subscripts")
            n_ell = max(n_ell, n)
            letters = "".join(spare[len(spare) - n:]) if n else ""
            sub = sub.replace("...", letters)
        new_ins.append(sub)
    ell = "".join(spare[len(spare) - n_ell:]) if n_ell else ""
    if has_arrow:
        out = out.replace("...", ell)
    else:
        counts = {}
        for c in "".join(new_ins):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return new_ins, out


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
        raise RuntimeError(f"einsum(): {len(ins)} operands in the equation but "
                           f"{len(operands)} given")
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
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(sub)}) does not match the number of dimensions "
                               f"({op.ndim}) for operand {k}")
        while len(set(sub)) != len(sub):  # a repeated index: take that diagonal first
            c = next(ch for ch in sub if sub.count(ch) > 1)
            p = sub.index(c)
            q = sub.index(c, p + 1)
            if op.shape[p] != op.shape[q]:
                raise RuntimeError(f"einsum(): subscript {c!r} is repeated for operand {k} "
                                   f"but the sizes don't match, {op.shape[p]} != "
                                   f"{op.shape[q]}")
            op = diagonal(op, 0, p, q)
            sub = sub[:p] + sub[p + 1:q] + sub[q + 1:] + c
        ins[k], ops[k] = sub, op
    sizes = {}
    for sub, op in zip(ins, ops):
        for c, n in zip(sub, op.shape):
            if sizes.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): operands do not broadcast: subscript {c!r} has "
                                   f"sizes {sizes[c]} and {n}")
    for c in out:
        if c not in sizes:
            raise RuntimeError(f"einsum(): output subscript {c!r} does not appear in the "
                               "equation for any input operand")
    dt = ops[0].dtype
    for o in ops[1:]:
        dt = D.promote_types(dt, o.dtype)
    ops = tuple(o if o.dtype is dt else o.to(dt) for o in ops)
    return bind(Einsum, ops, {"ins": tuple(ins), "out": out})


ALL = "matmul mm bmm dot inner vdot outer ger einsum".split()
