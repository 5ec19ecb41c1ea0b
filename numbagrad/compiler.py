"""``numbagrad.compiler``: the names of ``torch.compiler`` (see :func:`numbagrad.compile`)."""

from __future__ import annotations

from numbagrad._compile import compile, disable, is_compiling, reset

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "reset"]


def is_dynamo_compiling() -> bool:
    """True while numbagrad traces a function for compilation (``is_compiling``)."""
    return is_compiling()
