"""The op library: one declaration per primitive (NOTE [Primitive declaration] in
``ops/_op.py``) and the composites built on them.

This module is also the one late-bound namespace through which rules and composites call
other ops (``from numbagrad import ops as F``; ``F.where(...)``): names are looked up when
a rule runs, so op files need not import each other. ``ops._methods`` gives ``Tensor`` its
methods and operators.
"""

from __future__ import annotations

from numbagrad.ops import (
    _op,
    _public,
    binary,
    cplx,
    extras,
    gather_scatter,
    inplace,
    join,
    linalg,
    math,
    random_gamma,
    reduce,
    reorder,
    scan,
    searching,
    shape,
    sorting,
    special,
    unary,
)
from numbagrad.ops._op import PRIMITIVES, Primitive, bind
from numbagrad.ops._public import EXPORTS
from numbagrad.ops.shape import getitem

# the op files, each importing what it needs of the others; a new op file joins here (its
# ``@public`` ops, or an older-style ``ALL`` list: NOTE [Public ops] in ``ops/_public.py``)
FAMILIES = (
    unary,
    binary,
    reduce,
    scan,
    shape,
    gather_scatter,
    join,
    sorting,
    reorder,
    linalg,
    math,
    searching,
    special,
    cplx,
    inplace,
    extras,
)
for _family in FAMILIES:
    _public.adopt(_family)
# every public op, by name: this namespace (``F.<name>`` in rules), ``numbagrad``'s (``from
# numbagrad.ops import *``) and Tensor's methods (``_methods``) are derived from ``EXPORTS``
for _name in EXPORTS:
    if type(globals().get(_name)) is type(_public):  # (an op file: ``sort`` is ``sorting.py``)
        raise TypeError(f"the public op {_name!r} would hide the module numbagrad.ops.{_name}")
globals().update({_e.name: _e.obj for _e in EXPORTS.values()})
__all__ = list(EXPORTS)
_internal = ["PRIMITIVES", "Primitive", "bind", "getitem"]
# the reparameterised gamma draws of the distributions (``ops/random_gamma.py``)
standard_gamma = random_gamma.standard_gamma
standard_gamma_grad = random_gamma.standard_gamma_grad
standard_gamma_icdf = random_gamma.standard_gamma_icdf

from numbagrad.ops import _methods  # noqa: E402  (attaches Tensor's methods: needs the above)

del _internal

# ``numbagrad.ops.<namespace>``: the custom ops of ``numbagrad.library.custom_op``, by
# namespace (NOTE [Custom ops] in ``numbagrad/library.py``), as ``torch.ops``
_NAMESPACES: dict = {}


def register_namespace(name, space):
    """Make ``space`` reachable as ``numbagrad.ops.<name>`` (``numbagrad.library``);
    ValueError where ``name`` is already a name of this module."""
    if name in globals():
        raise ValueError(
            f"the namespace {name!r} is a name of numbagrad.ops; choose another namespace"
        )
    _NAMESPACES.setdefault(name, space)
    return _NAMESPACES[name]


def __getattr__(name):
    try:
        return _NAMESPACES[name]
    except KeyError:
        raise AttributeError(f"module 'numbagrad.ops' has no attribute {name!r}") from None
