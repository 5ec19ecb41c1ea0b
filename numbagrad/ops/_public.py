"""The public names of the op library, declared where each op is defined.

NOTE [Public ops]
An op is made public by marking its function where it is defined, in the file of its
family::

    @public(aliases=("clip",), inplace=True)
    def clamp(input, min=None, max=None): ...

    exp = public(_unary(Exp, "Elementwise exponential."), inplace=True)

``public`` records the function in ``EXPORTS`` (its name, then each alias, in definition
order) with where it is exposed, and returns it unchanged. Everything else is derived
from ``EXPORTS``, so that an op is named once:

- ``numbagrad.ops.__all__`` and so ``numbagrad.__all__`` (``from numbagrad.ops import *``);
- Tensor's methods (``method``, default True), its in-place ``<name>_`` variants
  (``inplace``) and the NumPy keyword spellings ``axis``/``keepdims`` of reductions
  (``numpy_keywords``), attached by ``ops/_methods.py``;
- the type stubs (``numbagrad._stubgen``) and the documentation check
  (``tests/test_docs_coverage.py``), which read ``numbagrad.__all__``.

A new op file joins by being imported in ``ops/__init__.py`` (its ``FAMILIES``). A file
written in the older style, a module-level ``ALL`` list of names, still works: the names
of its ``ALL`` are adopted as plain public ops (Tensor methods, nothing in place).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["EXPORTS", "Export", "adopt", "public"]


class Export(NamedTuple):
    """One public name: the object and where it is exposed."""

    name: str
    obj: Any
    method: bool  # also a Tensor method ``t.<name>(...)``
    inplace: bool  # also an in-place Tensor method ``t.<name>_(...)``
    numpy_keywords: bool  # takes ``axis``/``keepdims`` for ``dim``/``keepdim`` (reductions)


EXPORTS: dict[str, Export] = {}  # public name -> Export, in definition order


def _add(entry):
    other = EXPORTS.get(entry.name)
    if other is None:
        EXPORTS[entry.name] = entry
    elif other != entry:
        raise TypeError(
            f"two public ops are named {entry.name!r}: {other} and {entry} (NOTE [Public ops])"
        )


def public(
    fn=None,
    /,
    *,
    name=None,
    aliases=(),
    method=True,
    inplace=False,
    numpy_keywords=False,
):
    """Mark ``fn`` as a public op (NOTE [Public ops]); usable as ``@public``,
    ``@public(...)`` or ``f = public(g, ...)``. ``name`` defaults to ``fn.__name__``;
    ``aliases`` are further public names of the same function (``clip`` for ``clamp``)."""

    def mark(f):
        for n in (name or f.__name__, *aliases):
            _add(Export(n, f, method, inplace, numpy_keywords))
        return f

    return mark if fn is None else mark(fn)


def adopt(module):
    """Register the names of an older-style op file's ``ALL`` list (NOTE [Public ops]):
    plain public ops, unless ``public`` marked them already."""
    for n in getattr(module, "ALL", ()):
        obj = getattr(module, n)
        if n not in EXPORTS or EXPORTS[n].obj is not obj:
            _add(Export(n, obj, True, False, False))
