"""``functional_call``: run a module with some parameters and buffers replaced (PyTorch's
``torch.func.functional_call``), the bridge between ``nn.Module`` and the transforms."""

from __future__ import annotations

from numbagrad import ops as F

__all__ = ["functional_call", "stack_module_state"]


def _merge(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    if isinstance(dicts, (list, tuple)) and all(isinstance(d, dict) for d in dicts):
        seen, repeated = {}, []
        for d in dicts:
            for k, v in d.items():
                if k in seen:
                    repeated.append(k)
                seen[k] = v
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of "
                "functional call is ambiguous"
            )
        return seen
    raise ValueError(
        "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
        f"dicts, but got {type(dicts)}"
    )


def _slots(module):
    """``name -> (store, key, current)`` for every parameter and buffer slot, shared ones
    under each of their names."""
    out = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for store_name in ("_parameters", "_buffers"):
            store = sub.__dict__[store_name]
            for k, v in store.items():
                out[(prefix + "." if prefix else "") + k] = (store, k, v)
    return out


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """Call ``module(*args, **kwargs)`` with the named parameters and buffers replaced by
    the given tensors for the duration of the call.

    Parameters
    ----------
    module : numbagrad.nn.Module
    parameter_and_buffer_dicts : dict or sequence of dict
        Dotted names (as ``named_parameters``/``named_buffers`` give) to tensors; several
        dicts are merged (a key in two of them is an error).
    args : tuple or single value, optional
        Positional arguments of the call.
    kwargs : dict, optional
        Keyword arguments of the call.
    tie_weights : bool, default True
        A parameter registered under several names (shared) takes the replacement given
        for any of them.
    strict : bool, default False
        Require the dicts to name exactly the module's parameters and buffers.

    Returns
    -------
    The module's output.

    Raises
    ------
    ValueError
        For a key in several dicts, or different values for tied names.
    RuntimeError
        With ``strict``, for missing or unexpected keys.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import functional_call, grad
    >>> lin = numbagrad.nn.Linear(2, 1)
    >>> params = {"weight": numbagrad.ones(1, 2), "bias": numbagrad.zeros(1)}
    >>> functional_call(lin, params, (numbagrad.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    >>> def loss(p, x):
    ...     return functional_call(lin, p, (x,)).sum()
    >>> grad(loss)(params, numbagrad.tensor([[1.0, 2.0]]))["weight"]
    tensor([[1., 2.]])
    """
    values = _merge(parameter_and_buffer_dicts)
    slots = _slots(module)
    if tie_weights:
        tied = {}
        for name, (_, _, v) in slots.items():
            if v is not None:
                tied.setdefault(id(v), []).append(name)
        for names in tied.values():
            given = [n for n in names if n in values]
            if not given:
                continue
            first = values[given[0]]
            if any(values[n] is not first for n in given[1:]):
                raise ValueError(
                    f"functional_call got multiple values for keys {given}, "
                    "which are tied. Consider using tie_weights=False"
                )
            for n in names:
                values.setdefault(n, first)
    if strict:
        unexpected = [k for k in values if k not in slots]
        missing = [k for k in slots if k not in values]
        if unexpected or missing:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): {}.".format(", ".join(repr(k) for k in unexpected)))
            if missing:
                msgs.append("Missing key(s): {}.".format(", ".join(repr(k) for k in missing)))
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msgs)
            )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    restore = []
    try:
        for name, value in values.items():
            if name in slots:
                store, key, old = slots[name]
                restore.append((store, key, old, True))
                store[key] = value
            else:  # not a parameter or buffer: a plain attribute during the call, as PyTorch
                path, _, attr = name.rpartition(".")
                owner = module.get_submodule(path).__dict__
                restore.append((owner, attr, owner.get(attr), attr in owner))
                owner[attr] = value
        return module(*args, **kwargs)
    finally:
        for store, key, old, existed in reversed(restore):
            if existed:
                store[key] = old
            else:
                store.pop(key, None)


def _stacked_leaf(tensors, name):
    grads = {bool(t.requires_grad) for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = F.stack(tuple(t.detach() for t in tensors))
    return result.requires_grad_() if grads == {True} else result


def stack_module_state(models):
    """Stack the parameters and buffers of several same-class modules along a new leading
    dimension, for running an ensemble with ``vmap`` over ``functional_call``.

    Parameters
    ----------
    models : sequence of numbagrad.nn.Module
        Modules of the same class, all in training or all in eval mode.

    Returns
    -------
    (dict, dict)
        ``name -> stacked parameter`` (new leaves that require grad when the originals do)
        and ``name -> stacked buffer``.

    Raises
    ------
    RuntimeError
        For no models, mixed classes, mixed training modes, or parameters that disagree
        on ``requires_grad``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import functional_call, stack_module_state, vmap
    >>> models = [numbagrad.nn.Linear(2, 1) for _ in range(3)]
    >>> params, buffers = stack_module_state(models)
    >>> params["weight"].shape
    numbagrad.Size([3, 1, 2])
    >>> out = vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)),
    ...            in_dims=(0, 0, None))(params, buffers, numbagrad.ones(4, 2))
    >>> out.shape
    numbagrad.Size([3, 4, 1])
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({bool(m.training) for m in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
