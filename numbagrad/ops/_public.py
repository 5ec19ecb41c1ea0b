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

The sub-namespaces that mirror PyTorch's (``numbagrad.linalg``, ``numbagrad.special``)
use the same marker with ``namespace="linalg"``: the object is recorded in
``NAMESPACES[namespace]`` only (not a top-level op, not a Tensor method), and that
module's ``__all__`` is ``namespace_all(namespace, globals())``, which also checks each
marked name is bound in the module to the marked object. An op that is both a top-level
op and in a namespace (``torch.digamma`` and ``torch.special.digamma``) says so with
``also=("special",)``::

    @public(also=("special",))
    def digamma(input): ...

    @public(namespace="special")
    def erfcx(input): ...

    gammaln = public(lgamma, name="gammaln", namespace="special")
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["EXPORTS", "NAMESPACES", "Export", "adopt", "namespace_all", "public"]


class Export(NamedTuple):
    """One public name: the object and where it is exposed."""

    name: str
    obj: Any
    method: bool  # also a Tensor method ``t.<name>(...)``
    inplace: bool  # also an in-place Tensor method ``t.<name>_(...)``
    numpy_keywords: bool  # takes ``axis``/``keepdims`` for ``dim``/``keepdim`` (reductions)


EXPORTS: dict[str, Export] = {}  # public name -> Export, in definition order
# sub-namespace ("linalg", "special") -> public name -> object, in definition order
NAMESPACES: dict[str, dict[str, Any]] = {}


def _add(entry):
    other = EXPORTS.get(entry.name)
    if other is None:
        EXPORTS[entry.name] = entry
    elif other != entry:
        raise TypeError(
            f"two public ops are named {entry.name!r}: {other} and {entry} (NOTE [Public ops])"
        )


def _add_to(namespace, name, obj):
    space = NAMESPACES.setdefault(namespace, {})
    other = space.get(name, obj)
    if other is not obj:
        raise TypeError(
            f"two objects are public as numbagrad.{namespace}.{name}: {other} and {obj} "
            "(NOTE [Public ops])"
        )
    space[name] = obj


def public(
    fn=None,
    /,
    *,
    name=None,
    aliases=(),
    method=True,
    inplace=False,
    numpy_keywords=False,
    namespace=None,
    also=(),
):
    """Mark ``fn`` as a public op (NOTE [Public ops]); usable as ``@public``,
    ``@public(...)`` or ``f = public(g, ...)``. ``name`` defaults to ``fn.__name__``;
    ``aliases`` are further public names of the same function (``clip`` for ``clamp``).
    ``namespace="linalg"`` makes it public in ``numbagrad.linalg`` instead of at the top
    level; ``also=("special",)`` makes a top-level op public in those namespaces too."""
    if namespace is not None and (
        also or not method or inplace or numpy_keywords or not isinstance(namespace, str)
    ):
        raise TypeError(
            "public(namespace=...): a namespace name (str) only; Tensor methods, in-place "
            "variants, NumPy keywords and also= belong to top-level ops"
        )

    def mark(f):
        names = (name or f.__name__, *aliases)
        for n in names:
            if namespace is not None:
                _add_to(namespace, n, f)
                continue
            _add(Export(n, f, method, inplace, numpy_keywords))
            for space in also:
                _add_to(space, n, f)
        return f

    return mark if fn is None else mark(fn)


def namespace_all(namespace, scope):
    """The sorted public names of ``numbagrad.<namespace>`` (NOTE [Public ops]): its
    module's ``__all__``; ``scope`` is that module's ``globals()``, which must bind each
    name to its marked object (ImportError otherwise: a marked op the module forgot)."""
    space = NAMESPACES.get(namespace, {})
    for n, obj in space.items():
        if scope.get(n) is not obj:
            raise ImportError(
                f"numbagrad.{namespace}.{n} is marked public but the module binds "
                f"{scope.get(n)!r} to that name, not {obj!r} (NOTE [Public ops])"
            )
    return sorted(space)


def adopt(module):
    """Register the names of an older-style op file's ``ALL`` list (NOTE [Public ops]):
    plain public ops, unless ``public`` marked them already."""
    for n in getattr(module, "ALL", ()):
        obj = getattr(module, n)
        if n not in EXPORTS or EXPORTS[n].obj is not obj:
            _add(Export(n, obj, True, False, False))
