"""Reorderings and masks that keep a tensor's shape: the primitives ``Flip``, ``Roll``,
``Tril`` and ``Triu`` (each linear, its own adjoint up to its params) and ``flip``,
``roll``, ``tril`` and ``triu``.
"""

from __future__ import annotations

from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import both_ways, bound_both_ways, front
from numbagrad.ops._util import norm_dims, wrap_dim
from numbagrad.ops.shape import _dims_up

__all__: list = []


def _flip_rule(m, ctx, saved, g, dims):
    return m.flip(g, dims)  # flipping is its own adjoint


class Flip(Primitive):
    linearity = "linear"
    vjp, fused_vjp = both_ways(_flip_rule)

    @staticmethod
    def impl(be, x, dims):
        return be.xp.flip(x, dims).copy()  # PyTorch's flip copies

    @staticmethod
    def batch(args, bdims, dims):
        # ``bdims``: the batch dims (the op's own param is ``dims``)
        x = front(args[0], bdims[0])
        return bind(Flip, (x,), {"dims": _dims_up(dims)}), 0


@public
def flip(input, dims):
    """Reverse the order of elements along ``dims`` (of a 0-d tensor, a copy)."""
    if isinstance(dims, int):
        dims = (dims,)
    dims = norm_dims(dims, input.ndim)
    return bind(Flip, (input,), {"dims": dims if input.ndim else ()})


class Roll(Primitive):
    linearity = "linear"

    @staticmethod
    def impl(be, x, shifts, dims):
        return be.xp.roll(x, shifts, dims)

    @staticmethod
    def batch(args, bdims, shifts, dims):
        # ``bdims``: the batch dims (the op's own param is ``dims``)
        x = front(args[0], bdims[0])
        return bind(Roll, (x,), {"shifts": shifts, "dims": _dims_up(dims)}), 0

    @staticmethod
    def vjp(ctx, g, shifts, dims):
        return bind(Roll, (g,), {"shifts": tuple(-s for s in shifts), "dims": dims})


@public
def roll(input, shifts, dims=None):
    """Roll elements along ``dims`` by ``shifts`` (flattened when ``dims`` is None)."""
    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    if isinstance(shifts, int):
        shifts = (shifts,)
    if isinstance(dims, int):
        dims = (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    return bind(Roll, (input,), {"shifts": tuple(shifts), "dims": dims})


def _tril_rule(cls, ctx, saved, g, diagonal):
    return cls, (g,), {"diagonal": diagonal}  # masking is its own adjoint


class Tril(Primitive):
    linearity = "linear"
    fn = "tril"

    @classmethod
    def impl(cls, be, x, diagonal):
        if x.ndim < 2:
            raise RuntimeError(f"{cls.fn}: input tensor must have at least 2 dimensions")
        return getattr(be.xp, cls.fn)(x, diagonal)

    vjp, fused_vjp = bound_both_ways(_tril_rule)

    @classmethod
    def batch(cls, args, dims, diagonal):
        """The batch dimension first: the op acts on the last two dims."""
        x = front(args[0], dims[0])
        if x.ndim < 3:  # as each example would
            raise RuntimeError(f"{cls.fn}: input tensor must have at least 2 dimensions")
        return bind(cls, (x,), {"diagonal": diagonal}), 0


class Triu(Tril):
    fn = "triu"


@public(inplace=True)
def tril(input, diagonal=0):
    """Lower triangle of the last two dims (elements above ``diagonal`` zeroed)."""
    return bind(Tril, (input,), {"diagonal": diagonal})


@public(inplace=True)
def triu(input, diagonal=0):
    """Upper triangle of the last two dims (elements below ``diagonal`` zeroed)."""
    return bind(Triu, (input,), {"diagonal": diagonal})
