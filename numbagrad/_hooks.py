"""``RemovableHandle``: what every ``register_*hook`` returns (bottom layer: no imports)."""

from __future__ import annotations

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by ``register_hook``/``register_prehook``; ``remove()`` unregisters the hook.

    Also a context manager: the hook is removed on exit.
    """

    __slots__ = ("_fn", "_list")

    def __init__(self, lst, fn):
        self._list = lst
        self._fn = fn

    def remove(self):
        """Unregister the hook (a second call does nothing)."""
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
