"""Activation checkpointing (``torch.utils.checkpoint``): trade compute for memory.

:func:`checkpoint` runs a function's forward without keeping the tensors its backward
needs and recomputes them, with the same random state, when backward reaches them.

Two variants, as PyTorch's:

* ``use_reentrant=False`` (the default here and PyTorch's recommendation): the forward
  records its graph as usual under :class:`numbagrad.autograd.graph.saved_tensors_hooks`
  whose pack hook keeps only a counter, not the tensor; the first unpack in backward
  re-runs the function (grad mode on, the saved random state restored) under hooks that
  collect the recomputed saved tensors in the same order. Works with ``backward`` and
  ``autograd.grad``, with parameters the function closes over and with keyword arguments.
* ``use_reentrant=True``: a custom ``Function`` whose forward runs under ``no_grad`` and
  whose backward re-runs the function and calls ``autograd.backward`` inside it (so
  gradients of closed-over parameters accumulate into ``.grad``; ``autograd.grad`` is not
  supported, as in PyTorch).
"""

from __future__ import annotations

import contextlib

from numbagrad import _creation
from numbagrad._core.grad_mode import enable_grad, no_grad
from numbagrad._tensor import Tensor
from numbagrad.autograd.engine import backward as _backward
from numbagrad.autograd.function import Function
from numbagrad.autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "detach_variable"]


def detach_variable(inputs):
    """Detach every tensor of the tuple ``inputs``, keeping its ``requires_grad``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.checkpoint import detach_variable
    >>> x = numbagrad.ones(2, requires_grad=True) * 2
    >>> (d, n) = detach_variable((x, 3))
    >>> d.requires_grad, d.grad_fn is None, n
    (True, True, 3)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


@contextlib.contextmanager
def _rng_state(state):
    """Run the body with the global generator at ``state``, then put it back."""
    if state is None:
        yield
        return
    now = _creation.get_rng_state()
    _creation.set_rng_state(state)
    try:
        yield
    finally:
        _creation.set_rng_state(now)


class _CheckpointFunction(Function):
    """The reentrant variant (``use_reentrant=True``)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _creation.get_rng_state() if preserve_rng_state else None
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with _rng_state(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, Tensor) and o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward(outs, gs)
        return (None, None, *(d.grad if isinstance(d, Tensor) else None for d in detached))


class _Frame:
    """The state of one non-reentrant checkpoint: what to re-run, and what it gave."""

    def __init__(self, fn, args, kwargs, rng_state):
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.count = 0
        self.recomputed = None

    def pack(self, t):
        i = self.count
        self.count += 1
        return i

    def unpack(self, i):
        if self.recomputed is None:
            self.recompute()
        if i >= len(self.recomputed):
            raise RuntimeError(
                "checkpoint: the recomputation saved fewer tensors than the original forward "
                f"({len(self.recomputed)} < {self.count}); the function must run the same "
                "ops on recomputation (no data-dependent control flow on random or global "
                "state)"
            )
        return self.recomputed[i]

    def recompute(self):
        got = []

        def pack(t):
            got.append(t.detach())
            return None

        detached = detach_variable(tuple(self.args))
        with _rng_state(self.rng_state), enable_grad(), saved_tensors_hooks(pack, _never):
            self.fn(*detached, **self.kwargs)
        self.recomputed = got


def _never(_):
    raise RuntimeError("checkpoint: a tensor saved during recomputation was unpacked")


def checkpoint(
    function,
    *args,
    use_reentrant=False,
    preserve_rng_state=True,
    context_fn=None,
    determinism_check="default",
    debug=False,
    **kwargs,
):
    """Run ``function(*args, **kwargs)`` without keeping its saved tensors; recompute them
    in backward (``torch.utils.checkpoint.checkpoint``).

    Gradients equal those of calling ``function`` directly, provided it runs the same ops
    when re-run (randomness is replayed: the global generator's state is saved and
    restored around the recomputation unless ``preserve_rng_state=False``).

    Parameters
    ----------
    function : callable
    *args
        Its positional arguments (tensors or other values).
    use_reentrant : bool, default False
        Which variant (see the module docstring). PyTorch warns when it is not passed and
        then uses True; numbagrad uses False, PyTorch's recommendation.
    preserve_rng_state : bool, default True
    context_fn, determinism_check, debug
        Only their defaults are supported (NotImplementedError otherwise).
    **kwargs
        Keyword arguments of ``function`` (``use_reentrant=False`` only, as PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.checkpoint import checkpoint
    >>> x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [1.3818, 0.077]
    """
    if context_fn is not None or determinism_check != "default" or debug:
        raise NotImplementedError(
            "checkpoint(): context_fn, determinism_check and debug "
            "are not supported; leave them at their defaults"
        )
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _CheckpointFunction.apply(function, preserve_rng_state, *args)
    frame = _Frame(
        function, args, kwargs, _creation.get_rng_state() if preserve_rng_state else None
    )
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=False, **kwargs):
    """Run a sequence of modules or functions in ``segments`` checkpointed chunks
    (``torch.utils.checkpoint.checkpoint_sequential``); the last chunk runs normally.

    Parameters
    ----------
    functions : sequence of callables or a ``Sequential``
    segments : int
        How many chunks.
    input : Tensor
    use_reentrant : bool, default False
    preserve_rng_state : bool, default True (keyword)

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.utils.checkpoint import checkpoint_sequential
    >>> fs = [lambda t: t * 2, lambda t: t.exp(), lambda t: t.sum()]
    >>> x = numbagrad.tensor([0.0, 1.0], requires_grad=True)
    >>> checkpoint_sequential(fs, 2, x).backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [2.0, 14.7781]
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be >= 1, got {segments}")
    size = max(len(functions) // segments, 1)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
