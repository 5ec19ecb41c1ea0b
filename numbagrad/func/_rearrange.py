"""``rearrange``: einops-style axis reordering, reshaping, squeezing and stacking (PyTorch's
``torch.func.rearrange``).

A pattern such as ``"b (h1 h) w c -> (b h1) h w c"`` names the *elementary axes* of the input
on the left and says how to lay them out on the right. Parenthesised groups are flattened
axes, ``...`` stands for any number of axes, and ``1`` (or ``()``) is an axis of length 1.
Every rearrangement is done as at most three public tensor ops: a ``reshape`` that splits
the input's dims into the elementary axes, a ``permute`` that orders them as the right side
does, and a ``reshape`` that merges them into the output's dims. The result is therefore
differentiable, runs under every ``numbagrad.func`` transform, and works on any device.

Parsing a pattern is plain Python; the parsed pattern, and the plan derived from it for a
given number of input dims and given axis lengths, are cached, so a repeated call costs a
few dictionary look-ups besides the ops themselves.
"""

from __future__ import annotations

import functools
import keyword
import math
import warnings

from numbagrad._tensor import Tensor
from numbagrad.ops.join import stack

__all__ = ["DimensionBindError", "rearrange"]

_ELLIPSIS = "\u2026"  # "..." once the pattern is parsed: a single character, a single token


class DimensionBindError(Exception):
    """An input dim does not fit the lengths of the axes the pattern splits it into.

    PyTorch raises ``functorch.dim.DimensionBindError`` (an ``Exception`` subclass, not a
    ``ValueError``) for these cases, so this class keeps that name and base.
    """


class _Side:
    """One side of a pattern: its groups (a tuple of axis names, or ``_ELLIPSIS``)."""

    __slots__ = ("ellipsis_in_parens", "groups", "has_ellipsis", "names", "non_unit_anon")

    def __init__(self):
        self.groups = []  # tuple of names per dim, () for a length-1 dim, _ELLIPSIS
        self.names = set()  # axis names, _ELLIPSIS included
        self.has_ellipsis = False
        self.ellipsis_in_parens = False
        self.non_unit_anon = False  # an anonymous axis of length > 1 ("2"): rejected later


def _check_axis_name(name):
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name[0] == "_" or name[-1] == "_":
        raise ValueError(
            f"Invalid axis identifier: {name}\naxis name should not start or end with underscore"
        )
    # stacklevel: _check_axis_name < add < _parse_side < _parse_pattern < rearrange < caller
    if keyword.iskeyword(name):
        warnings.warn(
            f"It is discouraged to use axes names that are keywords: {name}",
            RuntimeWarning,
            stacklevel=6,
        )
    if name == "axis":
        warnings.warn(
            "It is discouraged to use 'axis' as an axis name and will raise an error in future",
            FutureWarning,
            stacklevel=6,
        )


def _parse_side(expr):
    side = _Side()
    if _ELLIPSIS in expr:
        raise ValueError(f"Unknown character '{_ELLIPSIS}' (write an ellipsis as '...')")
    if "." in expr:
        if "..." not in expr:
            raise ValueError("Expression may contain dots only inside ellipsis (...)")
        if expr.count("...") != 1 or expr.count(".") != 3:
            raise ValueError(
                "Expression may contain dots only inside ellipsis (...); "
                "only one ellipsis for tensor "
            )
        expr = expr.replace("...", _ELLIPSIS)
        side.has_ellipsis = True

    group = None  # the names of the open parenthesised group, None outside parentheses

    def add(token):
        if token in side.names:
            raise ValueError(f"Indexing expression contains duplicate dimension '{token}'")
        if token == _ELLIPSIS:
            side.names.add(token)
            if group is None:
                side.groups.append(_ELLIPSIS)
            else:
                group.append(_ELLIPSIS)
                side.ellipsis_in_parens = True
            return
        if token.isdecimal():
            value = int(token)
            if value == 1:  # a length-1 axis: a dim of its own, nothing inside a group
                if group is None:
                    side.groups.append(())
                return
            if value < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {value}")
            side.non_unit_anon = True
            return
        _check_axis_name(token)
        side.names.add(token)
        if group is None:
            side.groups.append((token,))
        else:
            group.append(token)

    token = ""
    for char in expr:
        if char in "() ":
            if token:
                add(token)
            token = ""
            if char == "(":
                if group is not None:
                    raise ValueError(
                        "Axis composition is one-level (brackets inside brackets not allowed)"
                    )
                group = []
            elif char == ")":
                if group is None:
                    raise ValueError("Brackets are not balanced")
                side.groups.append(tuple(group))
                group = None
        elif char.isalnum() or char in ("_", _ELLIPSIS):
            token += char
        else:
            raise ValueError(f"Unknown character '{char}'")
    if group is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{expr}'")
    if token:
        add(token)
    side.groups = tuple(side.groups)
    side.names = frozenset(side.names)
    return side


@functools.lru_cache(maxsize=256)
def _parse_pattern(pattern):
    parts = pattern.split("->")
    if len(parts) != 2:
        raise ValueError("Pattern must contain a single '->' separator")
    left, right = _parse_side(parts[0]), _parse_side(parts[1])
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.ellipsis_in_parens:
        raise ValueError(f"Ellipsis inside parenthesis in the left side is not allowed: {pattern}")
    return left, right


def _names_str(names):
    return "{" + ", ".join(repr("..." if n == _ELLIPSIS else n) for n in sorted(names)) + "}"


class _Plan:
    """What ``rearrange`` does to a tensor of a given ndim, up to the input's dim sizes."""

    __slots__ = ("in_groups", "lengths", "out_groups", "perm")

    def __init__(self, in_groups, out_groups, perm, lengths):
        self.in_groups = in_groups  # per input dim, the tuple of its elementary axes
        self.out_groups = out_groups  # per output dim, the tuple of its elementary axes
        self.perm = perm  # the permutation of the elementary axes, None for the identity
        self.lengths = lengths  # the lengths given by the caller, as a dict


@functools.lru_cache(maxsize=256)
def _plan(pattern, ndim, lengths_items):
    left, right = _parse_pattern(pattern)
    lengths = dict(lengths_items)
    if left.non_unit_anon or right.non_unit_anon:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.names ^ right.names
    if difference:
        raise ValueError(
            "Identifiers only on one side of rearrange expression (should be on both): "
            + _names_str(difference)
        )
    unmatched = lengths.keys() - left.names
    if unmatched:
        raise ValueError("Identifiers not found in rearrange expression: " + _names_str(unmatched))

    n_pattern = len(left.groups)
    if left.has_ellipsis:
        n_pattern -= 1
        if n_pattern > ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({n_pattern}) must be less than or equal to "
                f"the number of dimensions in the tensor ({ndim})"
            )
    elif n_pattern != ndim:
        raise ValueError(
            f"Number of dimensions in pattern ({n_pattern}) must be equal to the number of "
            f"dimensions in the tensor ({ndim})"
        )
    ellipsis_axes = tuple((_ELLIPSIS, i) for i in range(ndim - n_pattern))

    in_groups = []
    for g in left.groups:
        if g == _ELLIPSIS:
            in_groups.extend((a,) for a in ellipsis_axes)
        else:
            in_groups.append(g)
    out_groups = []
    for g in right.groups:
        if g == _ELLIPSIS:
            out_groups.extend((a,) for a in ellipsis_axes)
        else:  # "(...)": the ellipsis axes merged, in order, where the ellipsis stands
            out_groups.append(
                tuple(a for name in g for a in (ellipsis_axes if name == _ELLIPSIS else (name,)))
            )
    in_axes = [a for g in in_groups for a in g]
    position = {a: i for i, a in enumerate(in_axes)}
    perm = tuple(position[a] for g in out_groups for a in g)
    if perm == tuple(range(len(perm))):
        perm = None
    return _Plan(tuple(in_groups), tuple(out_groups), perm, lengths)


def _axis_str(axis):
    return "..." if isinstance(axis, tuple) else axis


def _group_str(group):
    return "(" + " ".join(_axis_str(a) for a in group) + ")"


def _axis_sizes(plan, shape):
    """The length of every elementary axis for an input of this shape."""
    sizes = {}
    lengths = plan.lengths
    for size, group in zip(shape, plan.in_groups):
        if len(group) == 1 and group[0] not in lengths:
            sizes[group[0]] = size
            continue
        known = 1
        unknown = []
        for axis in group:
            if axis in lengths:
                known *= lengths[axis]
            else:
                unknown.append(axis)
        if len(unknown) > 1:
            raise DimensionBindError(
                f"cannot infer the sizes of two axes at once: {_axis_str(unknown[0])} and "
                f"{_axis_str(unknown[1])} in {_group_str(group)} (pass one as a keyword argument)"
            )
        if unknown:
            if known == 0:
                raise ZeroDivisionError(
                    f"cannot infer the size of axis {_axis_str(unknown[0])} in "
                    f"{_group_str(group)}: the other axes have total length 0"
                )
            if size % known:
                raise DimensionBindError(
                    f"a dim of size {size} cannot be split as {_group_str(group)}: {size} is "
                    f"not divisible by {known}"
                )
            sizes[unknown[0]] = size // known
        elif size != known:
            raise DimensionBindError(
                f"dim sizes do not match ({size} != {known}) for the dim written "
                f"{_group_str(group) if group else '1'} in the pattern"
            )
        for axis in group:
            if axis in lengths:
                sizes[axis] = lengths[axis]
    for axis, size in sizes.items():
        if size < 0:
            raise RuntimeError(f"rearrange: axis {_axis_str(axis)} has negative length {size}")
    return sizes


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder, split, merge, squeeze and unsqueeze axes as an einops pattern says (PyTorch's
    ``torch.func.rearrange``).

    Parameters
    ----------
    tensor : Tensor, or list or tuple of Tensor
        The input. A sequence of tensors is first stacked along a new leading axis
        (``numbagrad.stack``), as einops and PyTorch do.
    pattern : str
        ``"left -> right"``: each side lists the dims of a tensor, a dim being an axis name
        (a Python identifier not starting or ending with ``_``), a parenthesised group of
        names (a dim that is their flattening, first name outermost), ``1`` or ``()`` (a
        dim of length 1), or ``...`` (any number of dims; once per side, and on the left not
        inside parentheses). Both sides must name the same axes, each once.
    **axes_lengths : int
        Lengths of axes that cannot be read off the input (all but one axis of each group on
        the left), or that should be checked.

    Returns
    -------
    Tensor
        The rearranged tensor (a view of the input where ``reshape`` gives one). Gradients
        flow through it, and it works under ``vmap``, ``grad``, ``jvp`` and the rest.

    Raises
    ------
    ValueError
        For a malformed pattern: no single ``->``, unbalanced or nested parentheses, a bad
        axis name or character, a repeated axis, an axis on one side only, an anonymous axis
        longer than 1, an ellipsis on the right only or in parentheses on the left, an
        ``axes_lengths`` name the pattern does not have, or a number of dims that does not
        match the input's.
    TypeError
        For an axis length that is not an ``int``, a pattern that is not a ``str``, or an
        input that is not a tensor or a list/tuple of tensors.
    DimensionBindError
        When a dim cannot be split as the pattern says: two axes of a group with no given
        length, a size not divisible by the given lengths, a given length that does not
        match, or a ``1`` on the left for a dim whose size is not 1. (Its base class is
        ``Exception``, as that of PyTorch's ``functorch.dim.DimensionBindError``.)
    ZeroDivisionError
        When the length of an axis is to be inferred next to given lengths whose product is 0.
    RuntimeError
        When a length, given or inferred, is negative; from ``stack`` for an empty list or
        tensors of different shapes.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import rearrange
    >>> x = numbagrad.arange(12).reshape(2, 3, 2)
    >>> rearrange(x, "b h w -> b w h").shape
    numbagrad.Size([2, 2, 3])
    >>> rearrange(x, "b h w -> (b h) w")
    tensor([[ 0,  1],
            [ 2,  3],
            [ 4,  5],
            [ 6,  7],
            [ 8,  9],
            [10, 11]])
    >>> rearrange(x, "b h w -> w (b h)")
    tensor([[ 0,  2,  4,  6,  8, 10],
            [ 1,  3,  5,  7,  9, 11]])
    >>> rearrange(numbagrad.arange(6), "(a b) -> b a", a=2)
    tensor([[0, 3],
            [1, 4],
            [2, 5]])
    >>> rearrange(x, "b ... -> ... b 1").shape
    numbagrad.Size([3, 2, 2, 1])
    >>> rearrange([numbagrad.zeros(2), numbagrad.ones(2)], "n c -> c n")
    tensor([[0., 1.],
            [0., 1.]])
    >>> rearrange(x, "b h w -> b (h w) c")
    Traceback (most recent call last):
        ...
    ValueError: Identifiers only on one side of rearrange expression (should be on both): {'c'}
    """
    if not isinstance(pattern, str):
        raise TypeError(f"rearrange(): pattern must be a str, got {type(pattern).__name__}")
    if not isinstance(tensor, Tensor):
        if not isinstance(tensor, (list, tuple)):
            raise TypeError(
                "rearrange(): expected a Tensor or a list/tuple of Tensors, got "
                f"{type(tensor).__name__}"
            )
        for i, t in enumerate(tensor):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"rearrange(): expected a list/tuple of Tensors, got {type(t).__name__} "
                    f"at index {i}"
                )
        tensor = stack(tensor)
    _parse_pattern(pattern)  # syntax errors first, before the checks on the lengths
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    for length in axes_lengths.values():
        if type(length) is not int:  # bool and NumPy ints included, as in PyTorch
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    plan = _plan(pattern, tensor.ndim, tuple(sorted(axes_lengths.items())))

    sizes = _axis_sizes(plan, tensor.shape)
    out = tensor
    split_shape = tuple(sizes[a] for g in plan.in_groups for a in g)
    if split_shape != tuple(out.shape):
        out = out.reshape(split_shape)
    if plan.perm is not None:
        out = out.permute(plan.perm)
    out_shape = tuple(math.prod(sizes[a] for a in g) for g in plan.out_groups)
    # always a new tensor (a view when the layout allows), never the input itself
    return out.reshape(out_shape) if out is tensor or out_shape != tuple(out.shape) else out
