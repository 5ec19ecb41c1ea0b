"""PyTorch's ``torch.profiler`` API over numbagrad's op profiler (CPU op times).

``profile(activities=[ProfilerActivity.CPU], record_shapes=...)`` is
:class:`numbagrad.autograd.profiler.profile` under the newer name; ``record_function``
labels ranges. See :doc:`/guide/profiling` for the recipe.
"""

from __future__ import annotations

import enum

from numbagrad.autograd import profiler as _legacy
from numbagrad.autograd.profiler import record_function

__all__ = ["ProfilerActivity", "profile", "record_function"]


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` (op times) is the one numbagrad records."""

    CPU = "cpu"
    CUDA = "cuda"


class profile(_legacy.profile):
    """Record per-op forward and backward times (PyTorch's ``torch.profiler.profile``).

    Parameters
    ----------
    activities : iterable of ProfilerActivity, optional
        ``[ProfilerActivity.CPU]`` (the default); ``CUDA`` raises NotImplementedError.
    record_shapes : bool, default False
        Keep the forward events' input shapes.
    schedule, on_trace_ready : optional
        Accepted only as None (no step schedule: the whole ``with`` block is recorded).
    profile_memory, with_stack, with_flops, with_modules : bool
        Accepted only as False.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.profiler import ProfilerActivity, profile
    >>> w = numbagrad.ones(4, requires_grad=True)
    >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
    ...     (w * 3).sum().backward()
    >>> [e.count for e in prof.key_averages() if e.key == "MulBackward0"]
    [1]
    """

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
    ):
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if ProfilerActivity.CUDA in acts:
            raise NotImplementedError("ProfilerActivity.CUDA: numbagrad profiles CPU op times only")
        if schedule is not None or on_trace_ready is not None:
            raise NotImplementedError(
                "profile(schedule=..., on_trace_ready=...) is not "
                "supported: the whole with-block is recorded"
            )
        super().__init__(
            enabled=ProfilerActivity.CPU in acts,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
        )

    def step(self):
        """A no-op without a schedule (PyTorch's step marks schedule boundaries)."""
