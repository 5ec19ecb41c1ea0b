"""``numbagrad.compile``: trace a function once, run its forward and backward as generated
Numba code (NOTE [Compile traces], [Lowering], [Compiled code cache], [Compiled calls]).
"""

from __future__ import annotations

import functools

from numbagrad._compile.runtime import CompiledFunction, config, disable, is_compiling, reset

__all__ = [
    "CompiledFunction",
    "compile",
    "compile_module_call",
    "config",
    "disable",
    "explain",
    "is_compiling",
    "reset",
]

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("numba", "inductor", "eager", "aot_eager")


def _check_args(fullgraph, dynamic, backend, mode, options):
    if not isinstance(fullgraph, bool):
        raise TypeError(f"compile(): fullgraph must be a bool, got {type(fullgraph).__name__}")
    if dynamic not in (None, True, False):
        raise TypeError(f"compile(): dynamic must be None, True or False, got {dynamic!r}")
    if mode not in _MODES:
        raise RuntimeError(
            f"Unrecognized mode={mode!r}, should be one of: "
            + ", ".join(repr(m) for m in _MODES[1:])
        )
    if callable(backend) or backend not in _BACKENDS:
        raise NotImplementedError(
            f"compile(): backend={backend!r} is not available: numbagrad compiles with its own "
            "Numba code generator ('numba'; 'inductor', PyTorch's default, names the same "
            "compiler) or runs eagerly ('eager', 'aot_eager'). Custom backend callables "
            "receive PyTorch FX graphs, which numbagrad does not build."
        )
    if options:
        raise NotImplementedError(
            f"compile(): options {sorted(options)} are inductor settings; numbagrad's code "
            "generator has none. Pass options=None."
        )
    if mode is not None and options:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified")


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend="numba",
    mode=None,
    options=None,
    disable: bool = False,
):
    """Compile a function or module: trace it into a graph of primitives once per kind of
    call, and run the forward and the backward as generated Numba code.

    The same signature as ``torch.compile``; a decorator with or without arguments.

    Parameters
    ----------
    model : callable or Module, optional
        What to compile. Without it, a decorator is returned.
    fullgraph : bool, default False
        Raise where the function cannot be traced into one graph (a graph break) instead
        of running it eagerly with a warning.
    dynamic : bool or None
        ``None`` or ``True`` (size-generic): sizes are not part of the cache key's
        structure; a new size of a known structure is traced again (about a millisecond)
        and reuses the compiled loop kernels, which take their sizes as arguments, and the
        sizes of one structure do not count toward ``config.cache_size_limit`` (up to 64
        are kept per structure, least recently used dropped). ``False`` specialises on
        sizes as ``torch.compile(dynamic=False)``: every size is its own entry counted
        toward the limit, and the CPU loop kernels are compiled with the sizes as
        constants (a Numba compilation per size; faster loops for tiny arrays).
    backend : str, default "numba"
        ``"numba"`` (``"inductor"``, PyTorch's default, is the same compiler here);
        ``"eager"``/``"aot_eager"`` run the function eagerly, unchanged.
    mode : str or None
        One of PyTorch's mode names; numbagrad has one code generation strategy, which
        every mode gets.
    options : dict or None
        Inductor settings; numbagrad has none, so only None or an empty dict is accepted.
    disable : bool, default False
        Return ``model`` unchanged (a no-op, as ``torch.compile(disable=True)``).

    Returns
    -------
    callable or Module
        A ``CompiledFunction`` (it has ``explain()``), or for a module an
        ``OptimizedModule`` wrapping it (``_orig_mod``).

    Examples
    --------
    >>> import numbagrad as torch
    >>> @torch.compile
    ... def loss(w, x):
    ...     return (torch.tanh(x * w) * torch.sigmoid(x)).sum()
    >>> w = torch.ones(4, requires_grad=True)
    >>> loss(w, torch.linspace(-1, 1, 4)).backward()
    >>> w.grad.shape
    numbagrad.Size([4])
    """
    _check_args(fullgraph, dynamic, backend, mode, options)
    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if not callable(model):
        raise TypeError(f"compile(): expected a callable or a Module, got {type(model).__name__}")
    if disable or backend in ("eager", "aot_eager"):
        return model
    make = getattr(model, "_optimized_module", None)
    if make is not None:  # an nn.Module: it wraps itself (``nn.modules.module``)
        return make(fullgraph, dynamic)
    cf = CompiledFunction(model, fullgraph, dynamic=dynamic)
    functools.update_wrapper(cf, model, updated=())
    return cf


def compile_module_call(module, *args, **kwargs):
    """The compiled call of ``module`` (hooks included), for ``Module.compile()``."""
    if args:
        raise TypeError("Module.compile() takes keyword arguments only (as numbagrad.compile)")
    fullgraph = kwargs.pop("fullgraph", False)
    dynamic = kwargs.pop("dynamic", None)
    _check_args(
        fullgraph,
        dynamic,
        kwargs.pop("backend", "numba"),
        kwargs.pop("mode", None),
        kwargs.pop("options", None),
    )
    if kwargs.pop("disable", False):
        return None
    if kwargs:
        raise TypeError(f"Module.compile() got unexpected arguments {sorted(kwargs)}")
    return CompiledFunction(
        module._call_impl, fullgraph, module=module, name=type(module).__name__, dynamic=dynamic
    )


def explain(fn, *args, **kwargs) -> str:
    """Compile ``fn`` (if it is not compiled yet), call it with ``args`` and return what
    was compiled: graphs, generated code, guards and graph breaks, as text."""
    cf = fn if isinstance(fn, CompiledFunction) else CompiledFunction(fn)
    if args or kwargs:
        cf(*args, **kwargs)
    return cf.explain()
