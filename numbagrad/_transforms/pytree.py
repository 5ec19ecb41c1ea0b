"""Flattening nested containers (tuples, lists, dicts, namedtuples) of inputs and outputs."""

from __future__ import annotations

__all__ = ["LEAF", "broadcast_prefix", "spec_str", "tree_flatten", "tree_map", "tree_unflatten"]


class _Leaf:
    __slots__ = ()

    def __repr__(self):
        return "*"


LEAF = _Leaf()


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


_CONTAINERS = (list, tuple, dict)


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order, and how to rebuild it. The
    spec is made of tuples only, so it is hashable (``vmap`` caches ``in_dims`` by it)."""
    # the common cases first: one leaf, or a flat tuple/list of leaves
    if not isinstance(tree, _CONTAINERS):
        return [tree], LEAF
    kind = type(tree)
    if kind is tuple or kind is list:
        for c in tree:
            if isinstance(c, _CONTAINERS):
                break
        else:
            return list(tree), (kind, (LEAF,) * len(tree))
    leaves: list = []
    spec = _flatten(tree, leaves)
    return leaves, spec


# NOTE: the recursive helpers are module-level functions taking their accumulator, not
# closures: a closure that calls itself is a reference cycle (function -> cell -> function)
# holding everything it captured, here the user's tensors, until the cyclic GC runs.
def _flatten(t, leaves):
    if isinstance(t, dict):
        keys = tuple(t)
        return (dict, keys, tuple([_flatten(t[k], leaves) for k in keys]))
    if not isinstance(t, (list, tuple)):
        leaves.append(t)
        return LEAF
    kind = type(t)
    if kind is not tuple and kind is not list and not _is_namedtuple(t):
        kind = tuple if isinstance(t, tuple) else list  # other subclasses: the base
    children = []
    for c in t:
        if isinstance(c, _CONTAINERS):
            children.append(_flatten(c, leaves))
        else:
            leaves.append(c)
            children.append(LEAF)
    return (kind, tuple(children))


def tree_unflatten(leaves, spec):
    """Rebuild the tree described by ``spec`` from ``leaves``."""
    if spec is not LEAF and (spec[0] is tuple or spec[0] is list):
        children = spec[1]
        if children.count(LEAF) == len(children):  # a flat tuple or list
            return spec[0](leaves)
    return _unflatten(spec, iter(leaves))


def _unflatten(s, it):
    if s is LEAF:
        return next(it)
    if s[0] is dict:
        return {k: _unflatten(c, it) for k, c in zip(s[1], s[2])}
    kind, children = s
    vals = []  # (a loop, not a comprehension: one frame less per container)
    for c in children:
        vals.append(next(it) if c is LEAF else _unflatten(c, it))
    if kind is tuple or kind is list:
        return kind(vals)
    return kind(*vals)  # namedtuple


def spec_str(spec):
    """A spec as PyTorch's ``treespec_pprint`` writes it: ``*`` a leaf, ``(*, [*])``..."""
    if spec is LEAF:
        return "*"
    if spec[0] is dict:
        return "{" + ", ".join(f"{k!r}: {spec_str(c)}" for k, c in zip(spec[1], spec[2])) + "}"
    kind, children = spec
    inner = ", ".join(spec_str(c) for c in children)
    if kind is list:
        return f"[{inner}]"
    if kind is tuple:
        return f"({inner},)" if len(children) == 1 else f"({inner})"
    return f"{kind.__name__}({inner})"


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, what="in_dims"):
    """Expand ``prefix`` (a tree that is a prefix of ``tree``, leaves applying to whole
    subtrees) to one entry per leaf of ``tree``."""
    out: list = []
    _broadcast(prefix, tree, out, prefix, tree, what)
    return out


def _broadcast(p, t, out, prefix, tree, what):
    if isinstance(p, (list, tuple)):  # namedtuples included
        # the same container type, as PyTorch's trees (a tuple of dims for a list input,
        # or for a namedtuple, does not match)
        if type(t) is not type(p) or len(p) != len(t):
            raise ValueError(
                f"{what} is not compatible with the structure of the inputs: got "
                f"{what}={prefix!r} for an input of structure {_describe(tree)}"
            )
        for pc, tc in zip(p, t):
            _broadcast(pc, tc, out, prefix, tree, what)
    elif isinstance(p, dict):
        if not isinstance(t, dict) or set(p) != set(t):
            raise ValueError(
                f"{what} is not compatible with the structure of the inputs: got "
                f"{what}={prefix!r} for an input of structure {_describe(tree)}"
            )
        for k in t:
            _broadcast(p[k], t[k], out, prefix, tree, what)
    else:
        out.extend([p] * len(tree_flatten(t)[0]))


def _describe(tree):
    return repr(tree_flatten(tree)[1])
