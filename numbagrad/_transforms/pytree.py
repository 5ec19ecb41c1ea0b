"""Flattening nested containers (tuples, lists, dicts, namedtuples) of inputs and outputs."""

from __future__ import annotations

__all__ = ["broadcast_prefix", "tree_flatten", "tree_map", "tree_unflatten"]


class _Leaf:
    __slots__ = ()

    def __repr__(self):
        return "*"


LEAF = _Leaf()


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


_CONTAINERS = (list, tuple, dict)


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order, and how to rebuild it."""
    # the common cases first: one leaf, or a flat tuple/list of leaves
    if not isinstance(tree, _CONTAINERS):
        return [tree], LEAF
    kind = type(tree)
    if kind is tuple or kind is list:
        for c in tree:
            if isinstance(c, _CONTAINERS):
                break
        else:
            return list(tree), (kind, [LEAF] * len(tree))
    leaves: list = []

    def rec(t):
        if isinstance(t, (list, tuple)):
            kind = type(t) if _is_namedtuple(t) else (tuple if isinstance(t, tuple) else list)
            return (kind, [rec(c) for c in t])
        if isinstance(t, dict):
            keys = list(t)
            return (dict, keys, [rec(t[k]) for k in keys])
        leaves.append(t)
        return LEAF

    spec = rec(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    """Rebuild the tree described by ``spec`` from ``leaves``."""
    it = iter(leaves)

    def rec(s):
        if s is LEAF:
            return next(it)
        if s[0] is dict:
            return {k: rec(c) for k, c in zip(s[1], s[2])}
        kind, children = s
        vals = [rec(c) for c in children]
        if kind is tuple or kind is list:
            return kind(vals)
        return kind(*vals)  # namedtuple

    return rec(spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, what="in_dims"):
    """Expand ``prefix`` (a tree that is a prefix of ``tree``, leaves applying to whole
    subtrees) to one entry per leaf of ``tree``."""
    out: list = []

    def rec(p, t):
        if (isinstance(p, (list, tuple)) and not _is_namedtuple(p)) or _is_namedtuple(p):
            if not isinstance(t, (list, tuple)) or len(p) != len(t):
                raise ValueError(
                    f"{what} is not compatible with the structure of the inputs: got "
                    f"{what}={prefix!r} for an input of structure {_describe(tree)}"
                )
            for pc, tc in zip(p, t):
                rec(pc, tc)
        elif isinstance(p, dict):
            if not isinstance(t, dict) or set(p) != set(t):
                raise ValueError(
                    f"{what} is not compatible with the structure of the inputs: got "
                    f"{what}={prefix!r} for an input of structure {_describe(tree)}"
                )
            for k in t:
                rec(p[k], t[k])
        else:
            n = len(tree_flatten(t)[0])
            out.extend([p] * n)

    rec(prefix, tree)
    return out


def _describe(tree):
    return repr(tree_flatten(tree)[1])
