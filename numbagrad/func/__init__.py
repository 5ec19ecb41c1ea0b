"""Composable function transforms: ``grad``, ``vjp``, ``jvp``, ``vmap``, ``jacrev``,
``jacfwd``, ``hessian`` (PyTorch's ``torch.func``).

Each transform pushes one interpreter (NOTE [Interpreters], NOTE [Tracers]) for the
duration of the call, so they nest in any order: ``jacrev`` is ``vmap`` of ``vjp``,
``jacfwd`` is ``vmap`` of ``jvp``, ``hessian`` is ``jacfwd`` of ``jacrev``.

Examples
--------
>>> import numbagrad
>>> from numbagrad.func import grad, vmap
>>> x = numbagrad.tensor([0.0, 1.0, 2.0], dtype=numbagrad.float64)
>>> grad(lambda x: (x ** 3).sum())(x)
tensor([ 0.,  3., 12.], dtype=numbagrad.float64)
>>> vmap(grad(lambda x: x.sin()))(x)
tensor([ 1.0000,  0.5403, -0.4161], dtype=numbagrad.float64)
"""

from __future__ import annotations

import functools

import numpy as np

from numbagrad import _creation
from numbagrad import ops as F
from numbagrad._core.grad_mode import _GRAD_ENABLED, is_grad_enabled
from numbagrad._core.interpreter import _CURRENT, current_interpreter
from numbagrad._tensor import Tensor
from numbagrad._transforms.batching import (
    BatchInterpreter,
    BatchTracer,
    _batch_levels,
    move_to_front,
)
from numbagrad._transforms.forward import DualTracer, JvpInterpreter, checked_tangent
from numbagrad._transforms.pytree import (
    LEAF,
    broadcast_prefix,
    spec_str,
    tree_flatten,
    tree_map,
    tree_unflatten,
)
from numbagrad._transforms.reverse import (
    GradInterpreter,
    GradTracer,
    LeafNode,
    backward,
    hide_outer_grads,
    unhide_outer_grads,
)
from numbagrad._transforms.tracer import Tracer, np_dtype_of, shape_of
from numbagrad._transforms.tracer import mark_born as _mark_born
from numbagrad.func._functional_call import functional_call, stack_module_state
from numbagrad.func._rearrange import rearrange
from numbagrad.kernels.cpu import alloc as _alloc

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]


# -- helpers -------------------------------------------------------------------------------
def _fname(func):
    return getattr(func, "__name__", type(func).__name__)


def _check_tensors(leaves, api, what):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(
                f"{api}: Expected {what} to be a Tensor (or a nested "
                f"tuple/list/dict of Tensors), got {type(x).__name__}"
            )


def _check_differentiable(leaves):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _normalize_argnums(argnums, nargs, api):
    if type(argnums) is int and -nargs <= argnums < nargs:  # the common case
        return [argnums % nargs]
    if isinstance(argnums, int):  # (a bool too: PyTorch's check is isinstance int)
        nums = (int(argnums),)
    elif isinstance(argnums, tuple) and argnums and all(isinstance(a, int) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"{api}: argnums must be int or Tuple[int, ...], got: {argnums!r}")
    out = []
    for a in map(int, nums):
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{api}: Got argnums={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{api}: argnums must be unique, got {argnums!r}")
    return out


def _unwrap_grad(x, interp):
    if type(x) is GradTracer and x._interp is interp:
        return x._val
    return x


def _unwrap_aux(aux, interp, unwrap):
    def one(t):
        if not isinstance(t, Tensor):  # (PyTorch's check: aux is tensors only)
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
        return unwrap(t, interp)

    return tree_map(one, aux)


def _split_aux(out, api):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{api}(f, ...): output of function f should be a tuple: "
            "(output, aux) if has_aux is True"
        )
    return out


# -- reverse mode ---------------------------------------------------------------------------
def _trace_grad(func, args, kwargs, argnums, api):
    """Run ``func`` with the leaves of the ``argnums`` arguments traced on a new tape;
    returns ``(interp, diff_leaves, diff_spec, out)``."""
    interp = GradInterpreter(current_interpreter(), f"numbagrad.func.{api}")
    nums = argnums
    diff = (args[nums[0]],) if len(nums) == 1 else tuple([args[i] for i in nums])
    leaves, spec = tree_flatten(diff)
    _check_differentiable(leaves)
    for x in leaves:
        if np_dtype_of(x).kind not in "fc":
            raise RuntimeError(
                f"{api}: only Tensors of floating point dtype can require "
                f"gradients, got an input of dtype {x.dtype}"
            )
    # as PyTorch's func.grad: an outer no_grad does not apply inside, an inner one does
    # (the two context variables are set by hand: a context manager costs more per call)
    outer = hide_outer_grads(interp)
    token = _CURRENT.set(interp)
    grad_token = _GRAD_ENABLED.set(True)
    try:
        wrapped = [GradTracer._new(interp, x, LeafNode(i), 0) for i, x in enumerate(leaves)]
        new_diff = tree_unflatten(wrapped, spec)
        new_args = list(args)
        for k, i in enumerate(nums):
            new_args[i] = new_diff[k]
        out = func(*new_args, **kwargs)
    finally:
        interp.alive = False
        unhide_outer_grads(outer)
        _GRAD_ENABLED.reset(grad_token)
        _CURRENT.reset(token)
    for x, w in zip(leaves, wrapped):
        if w._storage[1]:  # changed in place (under no_grad): so is the caller's tensor
            _write_back(x, w._val)
    return interp, leaves, spec, out


def _write_back(x, v):
    """Write ``v``, the value a transform's input took in place, into the caller's tensor
    ``x`` (PyTorch's wrapped tensors share its memory). A value made with nothing recorded
    (under ``no_grad``) changes the data only: ``x``'s history stays, as PyTorch's does."""
    if x.requires_grad and not v.requires_grad:
        token = _GRAD_ENABLED.set(False)
        try:
            x.copy_(v)
        finally:
            _GRAD_ENABLED.reset(token)
    else:
        x.copy_(v)


def _grads_or_zeros(grads, leaves):
    return [g if g is not None else _creation.const_zeros_like(x) for g, x in zip(grads, leaves)]


def _scalar_one(value):
    """The cotangent 1 of the scalar output ``value``: a NumPy scalar array straight away
    where ``const_ones_like`` would build the same (a tracer's ones are host ones, as a
    plain CPU tensor's): the seed of every ``grad`` call, kept off its creation path."""
    if value._is_tracer or type(value._data) is np.ndarray:
        t = Tensor._make(np.array(1, np_dtype_of(value)))
        _mark_born(t)
        return t
    return _creation.const_ones_like(value)


def _per_example(grads, value):
    """``grads`` of the output ``value``, each batched wherever ``value`` is (under
    ``vmap``). PyTorch seeds a batched output with batched ones, so every gradient is a
    tensor of its own per example (``vmap(grad(f))``'s bias gradient can be clipped in
    place); the seed here is one unbatched 1, cheaper for the gradients that depend on the
    example anyway, and the few that do not are materialised per example at the end."""
    if type(value) is BatchTracer and type(value._val) is Tensor:  # one vmap level:
        interp = value._interp  # (the common case, checked without walking the levels)
        if all(g is None or (type(g) is BatchTracer and g._interp is interp) for g in grads):
            return grads
    levels = _batch_levels(value)[0]
    if not levels:
        return grads
    ones = {}
    out = []
    for g in grads:
        if g is not None and len(_batch_levels(g)[0]) < len(levels):
            dt = g.dtype  # (batched at all of value's levels; g * 1 keeps -0.0 and nan)
            if dt not in ones:
                ones[dt] = _creation.ones_like(value, dtype=dt)
            g = g * ones[dt]
        out.append(g)
    return out


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    api = "grad_and_value"  # (PyTorch's grad is its grad_and_value: the messages say so)
    nums = _normalize_argnums(argnums, len(args), api)
    interp, leaves, spec, out = _trace_grad(func, args, kwargs, nums, api)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, api)
    if not isinstance(out, Tensor):
        raise RuntimeError(
            f"{api}(f)(*args): Expected f(*args) to return a Tensor, got {type(out).__name__}"
        )
    if len(shape_of(out)) != 0:
        raise RuntimeError(
            f"{api}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
            f"with {len(shape_of(out))} dims. Maybe you wanted to use the vjp or jacrev "
            "APIs instead?"
        )
    if np_dtype_of(out).kind == "c":
        raise RuntimeError(
            f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
        )
    value = _unwrap_grad(out, interp)
    grads = backward(interp, [out], [_scalar_one(value)], len(leaves))
    if value._is_tracer:
        grads = _per_example(grads, value)
    g = tree_unflatten(_grads_or_zeros(grads, leaves), spec)
    g = g[0] if isinstance(argnums, int) else g
    if has_aux:
        return g, (value, _unwrap_aux(aux, interp, _unwrap_grad))
    return g, value


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, returning ``(gradient, output)`` (``(gradient, (output, aux))``
    with ``has_aux``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar-valued ``func`` with respect to argument(s) ``argnums``.

    ``grad(f)(x)`` equals ``vjp(f, x)[1](ones)``; it composes with every other transform:
    ``grad(grad(f))`` is the second derivative, ``vmap(grad(f))`` gives per-example
    gradients.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import grad
    >>> grad(lambda x: (x * x).sum())(numbagrad.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents, retain_graph=True,
    create_graph=None)`` returns one gradient per primal (a tuple), ``cotangents`` having
    exactly the structure of the output (one tree, as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import vjp
    >>> out, vjp_fn = vjp(lambda x: x.exp(), numbagrad.tensor([0.0, 1.0]))
    >>> vjp_fn(numbagrad.ones(2))
    (tensor([1.0000, 2.7183]),)
    """
    api = "vjp"
    interp, leaves, spec, out = _trace_grad(func, primals, {}, list(range(len(primals))), api)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, api)
    out_leaves, out_spec = tree_flatten(out)
    _check_tensors(out_leaves, api, "outputs of func")
    for o in out_leaves:
        if np_dtype_of(o).kind not in "fc":
            raise RuntimeError(
                f"{api}(f, ...): All outputs of f must be floating-point or complex Tensors, "
                f"got Tensor with dtype {o.dtype}"
            )
    primal_out = tree_unflatten([_unwrap_grad(o, interp) for o in out_leaves], out_spec)
    freed = []

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        """The gradients for ``cotangents`` (the outputs' structure; a None leaf is the
        implicit cotangent 1 of a scalar output, as in ``autograd.grad``).
        ``retain_graph=False`` frees the recording: a later call raises.
        ``create_graph`` (default: whether grad mode is on) False returns gradients with
        no eager autograd history."""
        if freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Specify "
                "retain_graph=True if you need to call vjp_fn a second time."
            )
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as "
                f"pytree structure of outputs to the function. cotangents: "
                f"{spec_str(ct_spec)}, primal output: {spec_str(out_spec)}"
            )
        ct_leaves = list(ct_leaves)
        for i, (o, c) in enumerate(zip(out_leaves, ct_leaves)):
            if c is None:
                if shape_of(o) != ():
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                ct_leaves[i] = _scalar_one(_unwrap_grad(o, interp))
                continue
            if not isinstance(c, Tensor):
                raise TypeError(
                    f"gradients can be either Tensors or None, but got {type(c).__name__}"
                )
            if shape_of(o) != shape_of(c):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{list(shape_of(c))} and output[{i}] has a shape of "
                    f"{list(shape_of(o))}."
                )
        grads = backward(interp, out_leaves, ct_leaves, len(leaves))
        if not retain_graph:  # the outputs hold the recording: drop them
            freed.append(True)
            out_leaves.clear()
        if create_graph is None:
            create_graph = is_grad_enabled()
        grads = _grads_or_zeros(grads, leaves)
        if not create_graph:
            grads = [g.detach() if type(g) is Tensor else g for g in grads]
        return tree_unflatten(grads, spec)

    if has_aux:
        return primal_out, vjp_fn, _unwrap_aux(aux, interp, _unwrap_grad)
    return primal_out, vjp_fn


# -- forward mode ---------------------------------------------------------------------------
def _unwrap_dual(x, interp):
    if type(x) is DualTracer and x._interp is interp:
        return x._primal
    return x


def _tangent_for(p, t, api):
    """Tangent ``t`` of primal ``p``, checked as PyTorch's ``jvp`` checks it; a floating
    tangent of another precision is cast to the primal's dtype (PyTorch accepts it too)."""
    return checked_tangent(
        p,
        t,
        f"{api}(f, primals, tangents): Expected primals and tangents to have the same "
        f"shape, got {list(shape_of(p))} and {list(shape_of(t))}",
        f"{api}(f, primals, tangents): a {t.dtype} tangent for a {p.dtype} primal: pass a "
        "tangent of the primal's kind (real or complex)",
    )


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product by forward mode.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import jvp
    >>> x = numbagrad.tensor([1.0, 2.0])
    >>> jvp(lambda x: x ** 2, (x,), (numbagrad.ones(2),))[1]
    tensor([2., 4.])
    """
    api = "jvp"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}(f, primals, tangents): Expected primals to be a tuple. "
            "E.g. it should be valid to call f(*primals)."
        )
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{api}(f, primals, tangents): Expected tangents to be a tuple.")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}(f, primals, tangents): Expected primals and tangents to "
            f"have the same python structure. For example, if primals is a "
            f"tuple of 3 tensors, tangents also must be. Got primals with "
            f"structure {p_spec} and tangents with structure {t_spec}"
        )
    _check_tensors(p_leaves, api, "primals")
    _check_tensors(t_leaves, api, "tangents")
    t_leaves = [_tangent_for(p, t, api) for p, t in zip(p_leaves, t_leaves)]
    interp = JvpInterpreter(current_interpreter(), f"numbagrad.func.{api}")
    outer = hide_outer_grads(interp)
    token = _CURRENT.set(interp)
    try:
        duals = [interp.dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        out = func(*tree_unflatten(duals, p_spec))
    finally:
        interp.alive = False
        unhide_outer_grads(outer)
        _CURRENT.reset(token)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, api)
    o_leaves, o_spec = tree_flatten(out)
    _check_tensors(o_leaves, api, "outputs of func")
    prim_out = []
    tan_out = []
    for o in o_leaves:
        if type(o) is DualTracer and o._interp is interp:
            prim_out.append(o._primal)
            tan_out.append(o._tangent)
        else:
            prim_out.append(o)
            tan_out.append(_zeros_for(o))
    res = (tree_unflatten(prim_out, o_spec), tree_unflatten(tan_out, o_spec))
    if has_aux:
        return (*res, _unwrap_aux(aux, interp, _unwrap_dual))
    return res


def _zeros_for(x):
    return _creation.const_zeros_like(x)


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``.

    NOTE: ``jvp_fn`` re-runs ``func`` under forward mode on each call (PyTorch traces the
    linear function once with ``make_fx``; numbagrad has no graph capture).
    """
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn


# -- vmap -----------------------------------------------------------------------------------
def _dims_ok(d):
    if d is None or (isinstance(d, int) and not isinstance(d, bool)):
        return True
    if isinstance(d, (tuple, list)):
        return all(_dims_ok(c) for c in d)
    if isinstance(d, dict):
        return all(_dims_ok(c) for c in d.values())
    return False


def _check_dims_type(dims, name, fname):
    if not _dims_ok(dims):
        raise ValueError(
            f"vmap({fname}, {name}={dims!r}, ...): expected `{name}` to be int "
            f"or a (potentially nested) tuple matching the structure of "
            f"{'inputs' if name == 'in_dims' else 'outputs'}, got: "
            f"{type(dims)}."
        )


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a dimension of its inputs (PyTorch's ``torch.vmap``).

    ``in_dims`` (an int, None, or a tree matching the positional inputs) says which
    dimension of each input is mapped; ``out_dims`` where the mapped dimension goes in each
    output. Ops run once on the whole batch through their batching rules.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or "
            f"'same'. Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    fname = _fname(func)
    _check_dims_type(in_dims, "in_dims", fname)
    _check_dims_type(out_dims, "out_dims", fname)
    prefix_cache = {}  # input spec -> in_dims per leaf (a spec fixes the structure)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if isinstance(in_dims, int) or in_dims is None:
            dims_tree = in_dims
        elif isinstance(in_dims, tuple):
            if len(in_dims) != len(args):
                raise ValueError(
                    f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not "
                    f"compatible with the structure of `inputs`. in_dims has structure "
                    f"{tree_flatten(in_dims)[1]} but inputs has structure "
                    f"{tree_flatten(args)[1]}."
                )
            dims_tree = in_dims
        else:
            raise ValueError(
                f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): expected "
                f"`in_dims` to be int or a (potentially nested) tuple matching "
                f"the structure of inputs, got: {type(in_dims)}."
            )
        leaves, spec = tree_flatten(args)
        if isinstance(dims_tree, tuple):
            dims = prefix_cache.get(spec)
            if dims is None:
                dims = tuple(broadcast_prefix(dims_tree, args, "in_dims"))
                if len(prefix_cache) < 64:
                    prefix_cache[spec] = dims
        else:
            dims = [dims_tree] * len(leaves)
        size = None
        norm = []
        for x, d in zip(leaves, dims):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(
                    f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for "
                    f"an input but the input is of type {type(x)}. We cannot vmap over "
                    "non-Tensor arguments, please use None as the respective in_dim"
                )
            shape = shape_of(x)
            nd = len(shape)
            if not -nd <= d < nd:
                raise ValueError(
                    f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for "
                    f"some input, but that input is a Tensor of dimensionality {nd} so "
                    f"expected in_dim to satisfy -{nd} <= in_dim < {nd}."
                )
            d %= nd
            n = shape[d]
            if size is None:
                size = n
            elif n != size:
                sizes = [
                    shape_of(x)[dd % len(shape_of(x))]
                    for x, dd in zip(leaves, dims)
                    if dd is not None
                ]
                raise ValueError(
                    f"vmap: Expected all tensors to have the same size in the mapped "
                    f"dimension, got sizes {sizes} for the mapped dimension"
                )
            norm.append(d)
        if size is None:
            raise ValueError(
                f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): at least "
                "one input must be mapped over (got in_dims=None for every "
                "input)"
            )
        if chunk_size is not None and chunk_size < size:
            return _chunked(func, leaves, spec, norm, size, kwargs, chunk_size)
        return _vmap_call(func, leaves, spec, norm, size, kwargs)

    def _vmap_call(func_, leaves, spec, norm, size, kwargs):
        interp = BatchInterpreter(current_interpreter(), size, randomness)
        token = _CURRENT.set(interp)
        try:
            wrapped = [interp.wrap(x, d) for x, d in zip(leaves, norm)]
            for x, w in zip(leaves, wrapped):
                if w is not x and x._requires_grad:  # (BatchTracer._check_inplace)
                    w.__dict__["_input_of_graph"] = True
            out = func_(*tree_unflatten(wrapped, spec), **kwargs)
        finally:
            interp.alive = False
            _CURRENT.reset(token)
        for x, w, d in zip(leaves, wrapped, norm):
            if d is not None and w._storage[1]:  # changed in place: so is the caller's
                _write_back(x, w._val if w._bdim == d else F.movedim(w._val, w._bdim, d))
        return _unwrap_outputs(out, interp, size)

    def _chunked(func_, leaves, spec, norm, size, kwargs, chunk):
        pieces = []
        # under 'same' every chunk draws what the first drew, as PyTorch's chunks do
        rng_state = _creation.get_rng_state() if randomness == "same" else None
        for start in range(0, size, chunk):
            n = min(chunk, size - start)
            part = [F.narrow(x, d, start, n) if d is not None else x for x, d in zip(leaves, norm)]
            if rng_state is not None:
                _creation.set_rng_state(rng_state)
            pieces.append(_vmap_call(func_, part, spec, norm, n, kwargs))
        flat = [tree_flatten(p) for p in pieces]
        o_spec = flat[0][1]
        odims = _out_dims_list(o_spec, len(flat[0][0]))
        res = []
        for k in range(len(flat[0][0])):
            d = odims[k]
            if d is None:
                res.append(flat[0][0][k])
            else:
                res.append(F.cat([f[0][k] for f in flat], dim=d))
        return tree_unflatten(res, o_spec)

    def _out_dims_list(o_spec, n):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims] * n
        if o_spec is LEAF and type(out_dims) is tuple and len(out_dims) == 1:
            return [out_dims[0]]  # (1,) for one Tensor output: PyTorch accepts it too
        return broadcast_prefix(out_dims, tree_unflatten([0] * n, o_spec), "out_dims")

    def _unwrap_outputs(out, interp, size):
        o_leaves, o_spec = tree_flatten(out)
        odims = _out_dims_list(o_spec, len(o_leaves))
        res = []
        for o, d in zip(o_leaves, odims):
            batched = type(o) is BatchTracer and o._interp is interp
            if d is None:
                if batched:
                    raise ValueError(
                        f"vmap({fname}, ...): `{fname}` can not return a BatchedTensor when "
                        "out_dim is None"
                    )
                res.append(o)
                continue
            if not isinstance(o, Tensor):
                raise ValueError(
                    f"vmap({fname}, ...): `{fname}` must only return Tensors, got type "
                    f"{type(o)}. Did you mean to set out_dims= to None for output?"
                )
            if batched:
                v = move_to_front(o._val, o._bdim)
            else:
                v = F.expand(F.unsqueeze(o, 0), (size, *shape_of(o)))
            nd = len(shape_of(v))
            if not -nd <= d < nd:
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                    f"but got {d}): vmap's out_dims for an output of {nd - 1} dimensions"
                )
            d %= nd
            res.append(F.movedim(v, 0, d) if d != 0 else v)
        return tree_unflatten(res, o_spec)

    return wrapper


# -- Jacobians ------------------------------------------------------------------------------
def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _blocks(leaves):
    """One tensor per leaf, ``(N, *leaf.shape)`` with ``N`` the total number of elements:
    together the standard basis of all the leaves, block by block.

    The blocks come from the CPU buffer cache: a fresh N x N basis costs more in page
    faults than the vmapped VJP costs in arithmetic (NOTE [Buffer cache])."""
    sizes = [_numel(shape_of(x)) for x in leaves]
    total = sum(sizes)
    out = []
    off = 0
    for x, n in zip(leaves, sizes):
        b = _alloc.empty((total, n), np_dtype_of(x))
        b.fill(0)
        b[off : off + n].reshape(-1)[:: n + 1] = 1  # the identity block
        out.append(Tensor._make(b.reshape((total, *shape_of(x)))))
        off += n
    return out, sizes


def _diff_fn(func, args, kwargs, nums):
    def f_diff(*d):
        new_args = list(args)
        for k, i in enumerate(nums):
            new_args[i] = d[k]
        return func(*new_args, **kwargs)

    return f_diff


def _assemble(rows, row_leaves, row_sizes, col_leaves, rows_are_outputs):
    """Cut ``rows`` (per column leaf, ``(N, *col_shape)`` over the N basis rows of the row
    leaves) into one block per (output, input) pair, shaped ``out_shape + in_shape``."""
    blocks: list = [[] for _ in row_leaves]  # blocks[r][c]
    for col, t in zip(col_leaves, rows):
        off = 0
        for r, (r_leaf, n) in enumerate(zip(row_leaves, row_sizes)):
            part = F.narrow(t, 0, off, n) if len(row_leaves) > 1 else t
            off += n
            if rows_are_outputs:  # jacrev: rows index outputs, part is (n_out, *in)
                blk = F.reshape(part, shape_of(r_leaf) + shape_of(col))
            else:  # jacfwd: rows index inputs, part is (n_in, *out) -> out + in
                part = F.movedim(part, 0, -1) if len(shape_of(part)) > 1 else part
                blk = F.reshape(part, shape_of(col) + shape_of(r_leaf))
            blocks[r].append(blk)
    return blocks


def _check_real(leaves, api, what, one):
    """PyTorch's refusal of complex values where a Jacobian transform needs real ones."""
    for k, x in enumerate(leaves):
        if isinstance(x, Tensor) and np_dtype_of(x).kind == "c":
            raise RuntimeError(
                f"{api}: Expected all {what} to be real but received complex tensor at "
                f"flattened {one} idx: {k}"
            )


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` by reverse mode: ``vmap`` of ``vjp`` over the standard basis
    of the outputs.

    With several outputs (a tuple or dict) the result has the outputs' structure; with
    several ``argnums`` each entry is a tuple, one Jacobian per argument, each shaped
    ``output.shape + input.shape``.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _normalize_argnums(argnums, len(args), "jacrev")
        diff = tuple(args[i] for i in nums)
        _check_real(tree_flatten(diff)[0], "jacrev", "inputs", "input")
        res = vjp(_diff_fn(func, args, kwargs, nums), *diff, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        o_leaves, o_spec = tree_flatten(out)
        _check_real(o_leaves, "jacrev", "outputs", "output")
        in_leaves, in_spec = tree_flatten(diff)
        basis, sizes = _blocks(o_leaves)

        def one(*cts):
            return tuple(tree_flatten(vjp_fn(tree_unflatten(list(cts), o_spec)))[0])

        if sum(sizes) == 1:
            # one output element (a scalar loss, the inner half of ``hessian``): a vmap
            # over a batch of one is the call itself, minus a whole level of dispatch
            rows = tuple(F.unsqueeze(r, 0) for r in one(*(F.squeeze(b, 0) for b in basis)))
        else:
            rows = vmap(one, chunk_size=chunk_size)(*basis)
        blocks = _assemble(rows, o_leaves, sizes, in_leaves, True)
        per_out = [tree_unflatten(b, in_spec) for b in blocks]
        if isinstance(argnums, int):
            per_out = [p[0] for p in per_out]
        jac = tree_unflatten(per_out, o_spec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` by forward mode: ``vmap`` of ``jvp`` over the standard
    basis of the inputs (same result structure as :func:`jacrev`)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _normalize_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        in_leaves, in_spec = tree_flatten(diff)
        _check_differentiable(in_leaves)
        _check_real(in_leaves, "jacfwd", "inputs", "input")
        f_diff = _diff_fn(func, args, kwargs, nums)
        basis, sizes = _blocks(in_leaves)

        def one(*ts):
            r = jvp(f_diff, diff, tree_unflatten(list(ts), in_spec), has_aux=has_aux)
            t_leaves = tuple(tree_flatten(r[1])[0])
            return (r[0], t_leaves, r[2]) if has_aux else (r[0], t_leaves)

        # under randomness='different' the output (and aux) may differ per basis row, as
        # in PyTorch: they come back batched and the first row is the function's value
        per_row = randomness == "different"
        d = 0 if per_row else None
        r = vmap(one, out_dims=(d, 0, d) if has_aux else (d, 0), randomness=randomness)(*basis)
        if per_row:
            r = tuple(tree_map(lambda v: v[0], x) if k != 1 else x for k, x in enumerate(r))
        out, cols = r[0], r[1]
        o_leaves, o_spec = tree_flatten(out)
        # cols[k]: (N, *out_k.shape); blocks by input
        blocks = _assemble(cols, in_leaves, sizes, o_leaves, False)  # blocks[input][output]
        per_out = [
            tree_unflatten([blocks[j][k] for j in range(len(in_leaves))], in_spec)
            for k in range(len(o_leaves))
        ]
        if isinstance(argnums, int):
            per_out = [p[0] for p in per_out]
        jac = tree_unflatten(per_out, o_spec)
        return (jac, r[2]) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(numbagrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# -- utilities --------------------------------------------------------------------------------
def functionalize(func, *, remove="mutations"):
    """``func`` with PyTorch's ``functionalize`` contract: the same outputs, and the same
    in-place changes to its inputs, with mutations (``remove='mutations_and_views'``: and
    views) removed from the program that runs.

    NOTE: numbagrad has no graph capture to hand the functional program to; it runs ops
    eagerly, and under its transforms an in-place op is already functional (the value takes
    the op's out-of-place result, NOTE [In-place writes under transforms]). So the function
    returned calls ``func`` as it is, which is what ``functionalize(func)(*args)`` computes
    in PyTorch too; ``remove`` is checked as PyTorch checks it.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.func import functionalize
    >>> def f(x):
    ...     y = x.clone()
    ...     y.add_(1)
    ...     return y
    >>> functionalize(f)(numbagrad.zeros(2))
    tensor([1., 1.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from "
            "the program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing "
            "operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def debug_unwrap(tensor, *, recurse=True):
    """The value under a ``numbagrad.func`` transform's wrapping of ``tensor`` (a batched
    value comes with its batch dimension), for debugging only; with ``recurse`` through
    every level. A tensor no transform wraps (a ``forward_ad`` dual included, as in
    PyTorch) is returned as it is."""
    while isinstance(tensor, Tracer) and tensor._interp.level is None:
        tensor = tensor._parent_value()
        if not recurse:
            break
    return tensor


def replace_all_batch_norm_modules_(root):
    """In place, make every batch-norm module in ``root`` use batch statistics only: its
    ``running_mean``/``running_var`` (and ``num_batches_tracked``) become None and
    ``track_running_stats`` False, so that ``vmap`` over it does not write batched values
    into unbatched buffers. A module counts as batch norm by those attributes; returns
    ``root``."""
    for module in root.modules():
        if hasattr(module, "track_running_stats") and hasattr(module, "running_mean"):
            module.running_mean = None
            module.running_var = None
            if hasattr(module, "num_batches_tracked"):
                module.num_batches_tracked = None
            module.track_running_stats = False
    return root
