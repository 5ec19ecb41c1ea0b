"""The extension points: every call from a lower layer up into a higher one, in one place.

NOTE [Extension points]
A lower layer sometimes has to call code that lives above it: ``Tensor.exp()`` runs an op,
``Tensor.backward()`` runs the engine, a factory under ``vmap`` makes a batched tensor. The
lower layer cannot import the upper one (NOTE [Layers]), so it reads the callable from this
module, which sits at the bottom of the import graph and imports nothing of numbagrad. Each
upper layer fills its entries with one call when it is imported:

    ==================  =======================  ===========================================
    entry               filled by                read by (what for)
    ==================  =======================  ===========================================
    ``OPS.<name>``      ``ops._methods``         ``_tensor`` (``Tensor``'s methods, ``tensor``)
    ``HOOKS.backward``  ``autograd.engine``      ``Tensor.backward``
    ``HOOKS.birth``     ``_transforms.tracer``   ``_creation`` (a factory's tensor made under
                                                 a transform, NOTE [In-place writes under
                                                 transforms] in ``ops/inplace.py``)
    ``HOOKS.func_transform``  ``_transforms.tracer``  ``Tensor.requires_grad_`` (the
                                                 innermost ``func`` transform, or None)
    ``HOOKS.random``,   ``_transforms.batching``  ``_creation`` (NOTE [Randomness under
    ``HOOKS.random_op``                           vmap])
    ``HOOKS.batched_like``  ``_transforms.batching``  ``_creation.like_new`` (``*_like``
                                                 under ``vmap``)
    ``HOOKS.refresh_view``  ``ops.inplace``      ``_core.graph.edge_of`` (a stale view's
                                                 history)
    ==================  =======================  ===========================================

``register(**entries)`` and ``register_ops(namespace)`` are the only writers; a name that is
not declared here, or a value that is not callable, is a TypeError, so a new upward arrow
has to be declared (and documented) here first. ``tests/test_layers.py`` fails on any
other assignment to another module's attributes.

The autograd recording options (saved-tensor hooks, anomaly mode) are not upward calls but
switches that ``autograd.graph`` and ``autograd.anomaly_mode`` turn and that the core and
the engine read: they live in ``RECORDING`` (NOTE [Recording options]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["HOOKS", "OPS", "RECORDING", "Hooks", "RecordingOptions", "register", "register_ops"]


class _LateNamespace:
    """The op namespace the Tensor layer calls (``_tensor._F``), filled by ``register_ops``.
    A name asked for before it is registered is an import-order bug, reported as such."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # introspection (doctest, copy) is not an op lookup
            raise AttributeError(name)
        raise RuntimeError(
            f"numbagrad internal error: {name!r} was used before the module "
            "that provides it was imported (import numbagrad first)"
        )


class Hooks:
    """The declared upward calls (the table in NOTE [Extension points]); None until the
    module that provides one is imported."""

    __slots__ = (
        "backward",
        "batched_like",
        "birth",
        "func_transform",
        "random",
        "random_op",
        "refresh_view",
    )

    backward: Callable[..., None] | None
    batched_like: Callable[..., Any] | None
    birth: Callable[[Any], None] | None
    func_transform: Callable[[], str | None] | None
    random: Callable[..., Any] | None
    random_op: Callable[..., Any] | None
    refresh_view: Callable[[Any], None] | None

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, None)


class RecordingOptions:
    """NOTE [Recording options]: what the eager tape does beyond recording, switched by
    ``autograd.graph.saved_tensors_hooks`` (``saved_hooks``, a stack of ``(pack, unpack)``
    pairs, NOTE [Saved-tensor hooks] in ``_core/graph.py``) and ``autograd.anomaly_mode``
    (``anomaly``, ``check_nan``, NOTE [Anomaly mode]). ``active`` is True while either is
    on: the one flag ``Primitive._eval`` reads after recording a node, so the eager path
    pays one attribute test when both are off. The engine reads ``anomaly`` once per
    backward to choose its checked path. Process-wide, as PyTorch's anomaly mode."""

    __slots__ = ("active", "anomaly", "check_nan", "saved_hooks")

    def __init__(self) -> None:
        self.active = False
        self.anomaly = False
        self.check_nan = True
        self.saved_hooks: list = []

    def push_saved_hooks(self, pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> None:
        """Enter a ``saved_tensors_hooks`` context: its pair becomes the innermost."""
        self.saved_hooks.append((pack, unpack))
        self.active = True

    def pop_saved_hooks(self) -> None:
        """Leave the innermost ``saved_tensors_hooks`` context."""
        self.saved_hooks.pop()
        self.active = bool(self.saved_hooks) or self.anomaly

    def set_anomaly(self, mode: bool, check_nan: bool) -> None:
        """Turn anomaly mode on or off (``autograd.set_detect_anomaly``)."""
        self.anomaly = bool(mode)
        self.check_nan = bool(check_nan)
        self.active = bool(self.saved_hooks) or self.anomaly


HOOKS = Hooks()
OPS: Any = _LateNamespace()
RECORDING = RecordingOptions()


def register(**entries: Callable[..., Any]) -> None:
    """Fill the named ``HOOKS`` entries (each a callable); unknown names are a TypeError."""
    for name, fn in entries.items():
        if name not in Hooks.__slots__:
            raise TypeError(
                f"{name!r} is not a declared extension point (numbagrad._core.extension: "
                f"one of {', '.join(Hooks.__slots__)})"
            )
        if not callable(fn):
            raise TypeError(f"extension point {name!r} takes a callable, got {type(fn).__name__}")
        setattr(HOOKS, name, fn)


def register_ops(namespace: dict[str, Callable[..., Any]]) -> None:
    """Fill the op namespace the Tensor layer calls (``OPS``)."""
    for name, fn in namespace.items():
        if not callable(fn):
            raise TypeError(f"op {name!r} is not callable ({type(fn).__name__})")
        setattr(OPS, name, fn)
