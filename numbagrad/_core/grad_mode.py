"""Grad modes: whether ops record the graph.

The flag lives in a ``ContextVar``, so it is local to each thread and each asyncio task,
and reading it on the per-op hot path is one ``ContextVar.get``.
"""

from __future__ import annotations

import functools
import inspect
from contextvars import ContextVar

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

_GRAD_ENABLED: ContextVar[bool] = ContextVar("numbagrad_grad_enabled", default=True)
_INFERENCE: ContextVar[bool] = ContextVar("numbagrad_inference_mode", default=False)

is_grad_enabled_fast = _GRAD_ENABLED.get  # the hot-path accessor used by ops


def is_grad_enabled() -> bool:
    """Return True if ops currently record the autograd graph.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.is_grad_enabled()
    True
    >>> with numbagrad.no_grad():
    ...     print(numbagrad.is_grad_enabled())
    False
    """
    return _GRAD_ENABLED.get()


def is_inference_mode_enabled() -> bool:
    """Return True inside ``inference_mode``."""
    return _INFERENCE.get()


class _Mode:
    """Base of the grad-mode context managers; each is also a decorator, with or without
    parentheses (``@no_grad()`` and ``@no_grad``)."""

    _grad: bool = True
    _inference: bool | None = None

    def __new__(cls, *args, **kwargs):
        if cls in (no_grad, enable_grad) and len(args) == 1 and callable(args[0]) and not kwargs:
            return object.__new__(cls)(args[0])
        return object.__new__(cls)

    def __enter__(self):
        self._tokens = (
            _GRAD_ENABLED.set(self._grad),
            None if self._inference is None else _INFERENCE.set(self._inference),
        )
        return None

    def __exit__(self, *exc):
        grad_token, inf_token = self._tokens
        _GRAD_ENABLED.reset(grad_token)
        if inf_token is not None:
            _INFERENCE.reset(inf_token)
        return False

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    sent = yield value
                    with self.clone():
                        try:
                            value = gen.send(sent)
                        except StopIteration as stop:
                            return stop.value

            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_Mode):
    """Context manager and decorator that turns graph recording off.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.ones(2, requires_grad=True)
    >>> with numbagrad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _grad = False


class enable_grad(_Mode):
    """Context manager and decorator that turns graph recording on (inside ``no_grad``).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.ones(2, requires_grad=True)
    >>> with numbagrad.no_grad():
    ...     with numbagrad.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    _grad = True


class set_grad_enabled(_Mode):
    """Turn graph recording on or off; a plain call, a context manager or a decorator.

    Parameters
    ----------
    mode : bool
        Whether to record.

    Examples
    --------
    >>> import numbagrad
    >>> with numbagrad.set_grad_enabled(False):
    ...     print(numbagrad.is_grad_enabled())
    False
    """

    def __init__(self, mode: bool):
        self._grad = bool(mode)
        # like torch, the plain call takes effect at once; __exit__ restores
        self._prev = _GRAD_ENABLED.get()
        _GRAD_ENABLED.set(self._grad)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _GRAD_ENABLED.set(self._prev)
        return False

    def clone(self):
        # used by the decorator form: re-entering must not disturb the caller's mode
        mode = self._grad
        prev = _GRAD_ENABLED.get()
        new = set_grad_enabled(mode)
        new._prev = prev
        return new

    def __call__(self, func):
        _GRAD_ENABLED.set(self._prev)  # decorating must not change the mode now
        return super().__call__(func)


class inference_mode(_Mode):
    """Like ``no_grad`` (numbagrad has no separate inference tensors).

    Parameters
    ----------
    mode : bool, default True
        False makes it a no-op, as in PyTorch.
    """

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)
        self._grad = not self._mode if self._mode else _GRAD_ENABLED.get()
        self._inference = self._mode

    def __enter__(self):
        if not self._mode:
            self._tokens = (_GRAD_ENABLED.set(_GRAD_ENABLED.get()), _INFERENCE.set(False))
            return None
        return super().__enter__()

    def clone(self):
        return inference_mode(self._mode)
