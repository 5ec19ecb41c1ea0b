"""``numbagrad._dynamo``: the ``torch._dynamo`` names scripts use, for
:func:`numbagrad.compile` (``reset``, ``explain``, ``config.cache_size_limit``,
``disable``, ``is_compiling``)."""

from __future__ import annotations

from numbagrad._compile import config, disable, explain, is_compiling, reset

__all__ = ["config", "disable", "explain", "is_compiling", "reset"]
