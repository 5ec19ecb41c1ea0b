"""The deterministic-algorithms switch (``torch.use_deterministic_algorithms``), kept at the
lowest layer so that the backends can consult it.

NOTE [Deterministic algorithms]
numbagrad's CPU kernels give the same bits run after run for a given thread count: their
threaded loops (``prange``) write disjoint elements, and accumulation into repeated
indices (``np.add.at``, the backward of indexing and ``gather``, ``scatter_add``,
``index_add``, ``index_put`` with ``accumulate``) runs on one thread in index order. The
one nondeterministic path is the CUDA backend's ``add_at`` into a float array, which adds
with ``cuda.atomic.add`` in whatever order the threads arrive: with the switch on it calls
``alert``, which raises PyTorch's error (or, with ``warn_only``, warns) before launching.
Integer atomics are exact in any order, and the CUDA ``min``/``max``/``prod`` reductions
over repeated indices are ordered (NOTE [CUDA multiply.at, maximum.at, minimum.at]).
"""

from __future__ import annotations

import warnings

__all__ = ["alert", "enabled", "set_mode", "warn_only"]

_STATE = {"on": False, "warn_only": False}


def set_mode(mode: bool, warn_only: bool = False) -> None:
    _STATE["on"] = bool(mode)
    _STATE["warn_only"] = bool(warn_only)


def enabled() -> bool:
    return _STATE["on"]


def warn_only() -> bool:
    return _STATE["warn_only"]


def alert(caller: str) -> None:
    """Raise (or warn, with ``warn_only``) that ``caller`` is nondeterministic, when the
    switch is on (PyTorch's ``alertNotDeterministic``)."""
    if not _STATE["on"]:
        return
    msg = (
        f"{caller} does not have a deterministic implementation, but you set "
        "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for "
        "this operation, or you can use the 'warn_only=True' option, if that's acceptable "
        "for your application."
    )
    if _STATE["warn_only"]:
        warnings.warn(msg, UserWarning, stacklevel=3)
        return
    raise RuntimeError(msg)
