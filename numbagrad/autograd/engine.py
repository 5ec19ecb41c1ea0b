"""The backward engine: dependency counting, then a queue of ready nodes.

NOTE [Engine]
1. Walk the graph from the roots iteratively (no recursion: 100,000-op chains are fine),
   counting for every node how many edges point at it, in post-order so that, when only
   some inputs' gradients are wanted (``autograd.grad``, ``backward(inputs=)``), nodes
   that cannot reach them are pruned.
2. Pop ready nodes from a heap, latest sequence number first (PyTorch's order), sum the
   gradients that arrived in the node's buffer, run tensor hooks and pre-hooks, the node's
   rule, then reduce each gradient to its input's shape (``_validate``), run post-hooks
   and send each gradient along its edge. Saved tensors are freed unless ``retain_graph``.
   What a hook returns is checked as PyTorch checks it (``_hook_grads``,
   ``_check_hook_value``: a tuple of the right length for node hooks, Tensors or None,
   the same dtype, device and shape, no value where there was None) before anything uses
   it: the fused kernels the rules call do no bounds checks.
3. Leaves: ``AccumulateGrad`` adds into ``.grad`` with the in-place JIT kernel, holding the
   node's lock (one per leaf, as PyTorch's mutex per AccumulateGrad), so concurrent
   backward calls lose no update. A gradient array is stored in ``.grad`` without copying
   only when nothing else can hold it (a fresh, contiguous array that is not in
   ``stored``, point 6), and not also sent to another node (another thread's in-place
   accumulation into that ``.grad`` would change what the node reads). With
   ``create_graph`` a first gradient is cloned, later ones are added out of place
   (PyTorch's AccumulateGrad under grad mode). Non-leaf ``.grad`` updates (``retain_grad``,
   ``backward(inputs=[non_leaf])``) hold ``_NONLEAF_GRAD_LOCK``.
4. Buffers: when a second gradient reaches a slot, it is added *in place* into the first
   only if the engine knows that array is held by that slot alone: a fresh array (no
   ``base``) made by a built-in op's rule (``Node._fresh_grads``; custom Functions may
   return arrays they keep), not its own incoming gradient and not sent to two edges.
   Otherwise the sum is a new array, which the slot then owns.
``create_graph=True`` runs the rules with grad mode on, so the gradients have history.
5. Under a transform's interpreter (``vmap`` over ``autograd.grad``, which is what
   ``is_grads_batched=True`` is, or a ``forward_ad`` level) gradients may be tracers, which
   have no array: the engine then runs every rule on tensors (never the fused array rules),
   adds with ``+`` and validates shapes from tracer metadata (``_Traced``). The choice is
   made once per backward, from the current interpreter; the eager path does no per-node
   work for it.
6. ``.grad`` never aliases an array user code holds. ``stored`` collects, by id, the arrays
   that must not become a ``.grad`` uncopied: the caller's ``grad_tensors``, arrays already
   stored, and every array user code has seen or made in this run: what a custom
   Function's backward returns (it may be a saved input or an attribute of ctx), what
   tensor hooks (other than ``retain_grad``'s), pre-hooks and post-hooks saw or returned,
   and captured gradients. A node with post-hooks also gives up point 4's ownership (a
   post-hook may keep a gradient it returns unchanged). Built-in rules' fresh arrays, the
   common case, are stored and summed into without a copy.
7. ``backward()`` of a graph that is one node over leaves, with no hook anywhere and on
   the eager interpreter (``_shallow``: a compiled call's loss, whose whole graph is one
   ``CompiledFunctionBackward``, or one op on parameters) skips points 1 and 2's
   bookkeeping: the rule runs, is validated (unless its node says its gradients already
   have the inputs' shapes and dtypes, ``Node._exact_grads``), and its gradients are
   stored into the leaves' ``.grad`` as point 3 stores them (``_execute_shallow``). It is the same
   computation; the queue, the dependency counts and the buffers have nothing to do there.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Mapping

import numpy as np

from numbagrad import _tensor as _tensor_module
from numbagrad._core import extension
from numbagrad._core.grad_mode import _GRAD_ENABLED
from numbagrad._core.graph import AccumulateGrad, accumulator_of, edge_of
from numbagrad._core.interpreter import EVAL, current_interpreter
from numbagrad._tensor import Size, Tensor, _RetainGrad
from numbagrad._transforms.batching import BatchInterpreter
from numbagrad._transforms.reverse import GradTracer, grad_inside
from numbagrad._transforms.tracer import EscapedTracerError, np_dtype_of, shape_of
from numbagrad.autograd._function_transforms import legacy_vmap as _vmap
from numbagrad.autograd.anomaly_mode import checked_path
from numbagrad.kernels import backend_of
from numbagrad.kernels.cpu.backend import quiet_numpy
from numbagrad.ops import cplx
from numbagrad.ops.shape import is_expandable_to, sum_to, sum_to_array

__all__ = ["backward", "grad"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_edge(t, i):
    if not isinstance(t, Tensor):
        raise TypeError(f"element {i} of tensors is not a Tensor (got {type(t).__name__})")
    if not t._requires_grad:
        raise RuntimeError(
            f"element {i} of tensors does not require grad and does not have a grad_fn"
        )
    if t._grad_fn is None:
        return (accumulator_of(t), 0)
    return edge_of(t)


def _implicit_seed(out):
    """The array of ones ``backward()`` starts from when no gradient is given (scalar
    real outputs only)."""
    d = out._data
    if d.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if d.dtype.kind != "f":
        raise RuntimeError(
            f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
        )
    if type(d) is np.ndarray:
        return np.ones(d.shape, d.dtype) if d.ndim else np.array(1, d.dtype)
    # the seed filled on the output's device (a fill kernel: no host copy)
    return backend_of(d).xp.ones(d.shape, d.dtype)


def _make_grads(outputs, grad_outputs, create_graph):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            g = Tensor._make(_implicit_seed(out))
        else:
            if not isinstance(g, Tensor):
                if isinstance(g, (int, float)):
                    g = Tensor._make(np.full(out._data.shape, g, out._data.dtype))
                else:
                    raise TypeError(
                        f"gradients can be either Tensors or None, but got {type(g).__name__}"
                    )
            if g._is_tracer:  # a cotangent a transform owns (vmap over autograd.grad)
                gshape, gdtype = g._shape, g._np_dtype
            else:
                gshape, gdtype = g._data.shape, g._data.dtype
            if gshape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{g.shape} and output[{i}] has a shape of {out.shape}."
                )
            if gdtype.kind != out._data.dtype.kind:
                raise RuntimeError(
                    f"For complex/float mismatch: grad_output[{i}] has dtype "
                    f"{g.dtype} and output[{i}] has dtype {out.dtype}."
                )
        grads.append(g)
    return grads


def _make_batched_grads(outputs, grad_outputs):
    """``_make_grads`` for ``is_grads_batched``: the first dimension of each gradient is the
    batch; the rest must match the output (PyTorch's checks and messages)."""
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            # as PyTorch: an implicit gradient (a scalar output) is not batched; the vmap
            # below then refuses it (or takes its one element as a batch of one)
            grads.append(_make_grads((out,), (None,), False)[0])
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        gshape = shape_of(g)
        if not gshape:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                "to convert a 0-dim tensor to a number"
            )
        if gshape[0] == 0:
            raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
        if gshape[1:] != out._data.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions "
                "are expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {Size(gshape[1:])} and "
                f"output[{i}] has a shape of {out.shape}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap."
            )
        if np_dtype_of(g).kind != out._data.dtype.kind:
            raise RuntimeError(
                f"For complex/float mismatch: grad_output[{i}] has dtype "
                f"{g.dtype} and output[{i}] has dtype {out.dtype}."
            )
        grads.append(g)
    return grads


def _execute_batched(roots, grads, retain_graph, create_graph, targets):
    """``autograd.grad(..., is_grads_batched=True)``: one backward under ``func.vmap``
    over the leading dimension of ``grads`` (the rules get batched cotangents; NOTE
    [Engine], the traced path). Returns one batched gradient (or None) per target."""
    unused = []

    def vjp(*gs):
        res = _execute(roots, list(gs), retain_graph, create_graph, targets, accumulate=False)
        unused[:] = [g is None for g in res]
        return tuple(g for g in res if g is not None)

    found = iter(_vmap(vjp)(*grads))
    return [None if u else next(found) for u in unused]


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
):
    """Compute the gradient of ``tensors`` and accumulate it into the leaves' ``.grad``.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Outputs to differentiate.
    grad_tensors : Tensor or sequence, optional
        The vector in the vector-Jacobian product; may be omitted for scalar outputs.
    retain_graph : bool, optional
        Keep saved tensors so the graph can be differentiated again (default:
        ``create_graph``).
    create_graph : bool, default False
        Record the backward itself, for higher-order derivatives.
    inputs : Tensor, sequence or dict of Tensor, optional
        Only accumulate into these tensors (a dict's values, ``dict(m.named_parameters())``).

    Raises
    ------
    RuntimeError
        For outputs that do not require grad, non-scalar outputs without a gradient,
        gradients of the wrong shape, or a graph whose saved tensors were freed.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor(3.0, requires_grad=True)
    >>> numbagrad.autograd.backward(x * x)
    >>> x.grad
    tensor(6.)
    """
    outputs = _as_tuple(tensors)
    if _tensor_module.COMPILE_TRACE and outputs and isinstance(outputs[0], Tensor):
        # (NOTE [Compile traces]: accumulating into .grad is a side effect no graph replays)
        _tensor_module.COMPILE_TRACE[-1].data_read(outputs[0], "backward() (it writes .grad)")
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outputs)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    if inputs is None and not create_graph and _shallow(roots):
        # point 7: the rule reads arrays, so the implicit seed needs no Tensor around it
        g = grads[0]
        if g is None:
            seed = _implicit_seed(outputs[0])
        else:
            g = _make_grads(outputs, grads, False)[0]
            seed = None if g is None else g._data
        _execute_shallow(roots[0][0], seed, retain_graph)
        return
    grads = _make_grads(outputs, grads, create_graph)
    targets = None
    if inputs is not None:
        inputs = _as_tuple(_dict_values(inputs, "backward"))
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = []
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.append(_root_edge(t, 0))
    _execute(
        roots, grads, retain_graph, create_graph, targets, accumulate=True, input_tensors=inputs
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """Return the gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` change).

    Parameters
    ----------
    outputs, inputs : Tensor or sequence of Tensor
        ``inputs`` may also be a dict of tensors (``dict(model.named_parameters())``): the
        gradients then come back as a dict with the same keys.
    grad_outputs : Tensor or sequence, optional
        The vector in the vector-Jacobian product (omit for scalar outputs).
    retain_graph, create_graph : bool
        As in :func:`backward`.
    allow_unused : bool, optional
        Return None for inputs that do not reach the outputs instead of raising.
    is_grads_batched : bool, default False
        Read the first dimension of every ``grad_outputs`` tensor as a batch dimension and
        return a batch of vector-Jacobian products (each result gets that leading
        dimension): the backward runs once, under :func:`numbagrad.func.vmap`, with the
        cotangents batched. The rules of every node on the way must be vmappable (a custom
        ``Function``'s ``backward`` is called with batched gradients).
    materialize_grads : bool, default False
        Return zeros instead of None for unused inputs (implies ``allow_unused``). With
        ``is_grads_batched`` the zeros have the input's shape, without the batch dimension
        (as in PyTorch).

    Returns
    -------
    tuple of Tensor, or dict of Tensor for a dict of ``inputs``

    Raises
    ------
    RuntimeError
        For outputs or inputs that do not require grad, unused inputs (unless
        ``allow_unused``), or ``grad_outputs`` whose shape (after the batch dimension, with
        ``is_grads_batched``) differs from their output's.
    ValueError
        With ``is_grads_batched``, when the ``grad_outputs`` have different batch sizes.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor(2.0, requires_grad=True)
    >>> (g,) = numbagrad.autograd.grad(x ** 3, x, create_graph=True)
    >>> g, numbagrad.autograd.grad(g, x)[0]
    (tensor(12., grad_fn=<MulBackward0>), tensor(12.))

    A batch of vector-Jacobian products in one call:

    >>> x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    >>> numbagrad.autograd.grad(x * x, x, numbagrad.eye(2), is_grads_batched=True)
    (tensor([[2., 0.],
            [0., 4.]]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when "
            "materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    keys = list(inputs) if type(inputs) is dict else None
    inputs = _as_tuple(_dict_values(inputs, "grad"))
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    gos = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(gos) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(gos)} "
            f"grad_outputs for {len(outputs)} outputs"
        )
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs[{i}] is not a Tensor")
    grad_level = False
    if inputs[0]._is_tracer:  # values of a live func.grad level: the gradient at that level
        grad_level = type(inputs[0]) is GradTracer and inputs[0]._interp.alive
    if grad_level:
        if is_grads_batched:
            raise NotImplementedError("autograd.grad(is_grads_batched=True) inside func.grad")
        captured = grad_inside(outputs, inputs, gos, create_graph)
    else:
        roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
        if is_grads_batched:
            gos = _make_batched_grads(outputs, gos)
        else:
            gos = _make_grads(outputs, gos, create_graph)
        targets = []
        for i, t in enumerate(inputs):
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.append(_root_edge(t, i))
        if is_grads_batched:
            captured = _execute_batched(roots, gos, retain_graph, create_graph, targets)
        else:
            captured = _execute(roots, gos, retain_graph, create_graph, targets, accumulate=False)
    result = []
    for t, g in zip(inputs, captured):
        if g is None:
            if materialize_grads:
                g = Tensor._make(np.zeros(tuple(t.shape), t.dtype.np))
                g._requires_grad = bool(create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been "
                    "used in the graph. Set allow_unused=True if this is the "
                    "desired behavior."
                )
        elif not g._is_tracer and type(g._data) is np.ndarray and not g._data.flags.c_contiguous:
            # NOTE: PyTorch hands back gradients in their input's row-major layout (mm's
            # backward computes a transposed operand's gradient transposed), and scripts
            # flatten them with ``g.view(-1)``; a rule's transposed view is copied once here
            g = g.contiguous()
        result.append(g)
    return tuple(result) if keys is None else dict(zip(keys, result))


def _dict_values(inputs, api):
    """The tensors of ``inputs`` given as a dict (``dict(model.named_parameters())``), as
    PyTorch's ``grad``/``backward`` take them; other mappings are refused as there."""
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{api}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return inputs


def _discover(roots, targets):
    """Dependency counts, and (when ``targets`` is given) the set of nodes worth running."""
    deps = {}
    seen = {node for node, _ in roots}
    stack = list(seen)
    if targets is None:
        # count edges only: no order needed
        while stack:
            for edge in stack.pop()._next:
                if edge is not None:
                    child = edge[0]
                    d = deps.get(child)
                    if d is None:
                        deps[child] = 1
                        if child not in seen:
                            seen.add(child)
                            stack.append(child)
                    else:
                        deps[child] = d + 1
        return deps, None
    order = []  # post-order: children before parents
    seen = set()
    for root, _ in roots:
        # one depth-first pass per root, run to completion: marking every root seen up front
        # would put a root that is upstream of another (grad([y, y.exp()], x)) after it in
        # the order, and the downstream root's gradient would be dropped as "not needed"
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root._next))]
        while stack:
            node, it = stack[-1]
            for edge in it:
                if edge is not None and edge[0] not in seen:
                    child = edge[0]
                    seen.add(child)
                    stack.append((child, iter(child._next)))
                    break
            else:
                stack.pop()
                order.append(node)
    tset = {n for n, _ in targets}
    needed = set()
    for node in order:
        if node in tset or any(e is not None and e[0] in needed for e in node._next):
            needed.add(node)
    # only edges from needed parents count
    for node in needed:
        for e in node._next:
            if e is not None and e[0] in needed:
                deps[e[0]] = deps.get(e[0], 0) + 1
    return deps, needed


def _reduce_error(node, i, got, shape):
    return RuntimeError(
        f"Function {node.name()} returned an invalid gradient at index {i} - got "
        f"{list(got)} but expected shape compatible with {list(shape)}"
    )


class _Arrays:
    """First-order backward under the eager interpreter: raw arrays travel between nodes
    (no Tensor, no graph), rules run their fused array form where they have one."""

    arrays = True

    @staticmethod
    def wrap(g):
        return Tensor._make(g)

    @staticmethod
    def unwrap(t):
        return t._data

    @staticmethod
    def run(node, buf):
        return node._backward_arrays(buf)

    @staticmethod
    def add(a, b, owned):
        return backend_of(a).add_grads(a, b, owned)

    @staticmethod
    def reduce(g, shape):
        return sum_to_array(g, shape, backend_of(g).xp)

    @staticmethod
    def cast(g, dtype):
        return g.astype(dtype)


class _Tensors:
    """Backward on tensors: with ``create_graph`` (rules record their own graph) or under
    a transform's interpreter."""

    arrays = False

    @staticmethod
    def wrap(g):
        return g

    @staticmethod
    def unwrap(t):
        return t

    @staticmethod
    def run(node, buf):
        return node._backward(buf, True)

    @staticmethod
    def add(a, b, owned):
        return a + b

    @staticmethod
    def reduce(g, shape):
        return sum_to(g, shape)

    @staticmethod
    def cast(g, dtype):
        return g.to(dtype)


class _Traced(_Tensors):
    """Backward under a transform's interpreter (``vmap`` over ``autograd.grad``,
    ``is_grads_batched``, ``forward_ad``): gradients may be tracers, which have no array,
    so the engine reads their metadata (``shape_of``) and never their ``_data``. The rules
    get ``create_graph=True`` (their ops may be differentiated by the transform) unless
    only ``vmap`` is above the eager interpreter (``_Batched``)."""

    @staticmethod
    def run(node, buf):
        return node._backward(buf, True)


class _Batched(_Traced):
    """``_Traced`` under ``vmap`` only: nothing differentiates the rules, so a custom
    Function's backward may read the tensors stored on its ctx (first order)."""

    @staticmethod
    def run(node, buf):
        return node._backward(buf, False)


def _traced_path(interp, create_graph):
    if create_graph:
        return _Traced

    while interp is not EVAL and interp is not None:
        if type(interp) is not BatchInterpreter:
            return _Traced
        interp = interp.parent
    return _Batched


def _validate_traced(node, grads, path):
    """``_validate`` on the traced path: the same checks on tracer metadata."""
    meta, edges = node._in_meta, node._next
    out = grads
    for i, g in enumerate(grads):
        if g is None or edges[i] is None or meta[i] is None:
            continue
        shape, dtype = meta[i]
        gshape = shape_of(g)
        gdtype = np_dtype_of(g)
        if gshape != shape:
            if not is_expandable_to(shape, gshape):
                raise _reduce_error(node, i, gshape, shape)
            g = sum_to(g, shape)
        if gdtype.kind == "c" and dtype.kind == "f":
            g = _real_part(g)  # (as ``_fix``)
            gdtype = np_dtype_of(g)
        if gdtype != dtype:
            if gdtype.kind != dtype.kind and not (gdtype.kind == "f" and dtype.kind == "c"):
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - "
                    f"expected dtype {dtype} but got {gdtype}"
                )
            g = g.to(dtype)
        if g is not grads[i]:
            out = list(out) if out is grads else out
            out[i] = g
    return out


def _array_ids(grads):
    """The ids of the gradients' arrays, skipping tracers that have none."""
    ids = set()
    for g in grads:
        if g is not None:
            try:
                ids.add(id(g._data))
            except EscapedTracerError:
                pass
    return ids


def _validate(node, grads, path):
    """Check a rule's (or hook's) gradients against each input's shape and dtype, reducing
    broadcast gradients to the input's shape (the one reduction point: docs/developer.rst,
    design decisions, 2);
    refuse what cannot be fixed."""
    meta, edges = node._in_meta, node._next
    out = grads
    i = 0
    for g in grads:
        if g is not None and edges[i] is not None:
            m = meta[i]
            data = g if path.arrays else g._data
            if m is None:  # the input has the output's shape and dtype (OpNode._record)
                if (
                    path.arrays
                    and type(g) is not np.ndarray
                    and not getattr(g, "_numbagrad_device", False)
                ):  # a NumPy scalar (0-d result)
                    out = list(out) if out is grads else out
                    out[i] = g = data = np.asarray(g)
                if data.dtype is not node._out_dtype and data.dtype != node._out_dtype:
                    # NumPy promoted where PyTorch would not (int64 array * float32 array
                    # is float64 in NumPy): the input's dtype, as PyTorch gives
                    out = list(out) if out is grads else out
                    out[i] = _fix(node, i, g, data, node._out_shape, node._out_dtype, path)
            elif (
                type(data) is not np.ndarray
                or data.shape != m[0]
                or (data.dtype is not m[1] and data.dtype != m[1])
            ):
                out = list(out) if out is grads else out
                out[i] = _fix(node, i, g, data, m[0], m[1], path)
        i += 1
    return out


def _real_part(g):
    return cplx.real(g)


def _fix(node, i, g, data, shape, dtype, path):
    if (
        path.arrays
        and type(data) is not np.ndarray
        and not getattr(data, "_numbagrad_device", False)
    ):  # (CUDA arrays stay: NOTE [CUDA tensors])
        g = data = np.asarray(data)
    if data.shape != shape:
        if not is_expandable_to(shape, data.shape):
            raise _reduce_error(node, i, data.shape, shape)
        g = path.reduce(g, shape)
    gdt = g.dtype if path.arrays else g._data.dtype
    if gdt != dtype:
        if gdt.kind == "c" and dtype.kind == "f":
            # a real input of a complex-valued op gets the real part (PyTorch's
            # handle_r_to_c), NOTE [Complex autograd] in ops/complex.py
            g = g.real.copy() if path.arrays else _real_part(g)
            gdt = g.dtype if path.arrays else g._data.dtype
        elif gdt.kind == "f" and dtype.kind == "c":
            g = path.cast(g, dtype)
            gdt = dtype
    if gdt != dtype:
        if gdt.kind != dtype.kind:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - "
                f"expected dtype {dtype} but got {gdt}"
            )
        g = path.cast(g, dtype)
    return g


def _store_leaf_grad(node, g, create_graph, stored):
    """Accumulate ``g`` (a Tensor, or an array on the array path) into the ``.grad`` of
    ``node``'s leaf, holding the node's lock (see NOTE [Engine], points 3 and 6)."""
    leaf = node.variable
    with node._lock:
        old = leaf._grad
        if create_graph or (old is not None and old._requires_grad):
            # as PyTorch's AccumulateGrad under grad mode: a first gradient is cloned (it
            # may be the caller's, another leaf's, or a pass-through of either), later ones
            # are added out of place
            leaf._grad = g.clone() if old is None else old + g
            return
        arr = g._data if isinstance(g, Tensor) else g
        if old is None:
            flags = arr.flags  # (a new object per access: read once)
            if (
                arr.base is not None
                or not flags.c_contiguous
                or not flags.writeable
                or id(arr) in stored
                or arr.dtype != leaf._data.dtype
            ):
                arr = (
                    np.array(arr, dtype=leaf._data.dtype, order="C")
                    if type(arr) is np.ndarray
                    else arr.astype(leaf._data.dtype)
                )
            stored.add(id(arr))
            leaf._grad = Tensor._make(arr)
            return
        od = old._data
        backend_of(od).accumulate(od, arr)
        old._storage[1] += 1


def _run_post_accumulate_hooks(leaf):
    """Run ``leaf``'s post-accumulate-grad hooks (after ``.grad`` was updated)."""
    for h in list(leaf._post_acc_hooks):
        r = h(leaf)
        if r is not None:
            raise TypeError(
                f"expected None, but post accumulate grad hook returned "
                f"'{_type_name(r)}' (hook '{_hook_name(h)}' must return None)"
            )


def _hook_name(h):
    """A hook's name as PyTorch prints it in errors."""
    name = getattr(h, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _type_name(v):
    t = type(v)
    return f"numpy.{t.__name__}" if t.__module__ == "numpy" else t.__name__


def _check_hook_value(h, orig, r):
    """A non-None value hook ``h`` returned in place of gradient ``orig``: a Tensor of the
    same dtype, device and shape (PyTorch's ``check_single_result``), checked before any
    kernel reads it (fused kernels do no bounds checks)."""
    if not isinstance(r, Tensor):
        raise TypeError(
            f"expected Variable, but hook returned '{_type_name(r)}' (hook "
            f"'{_hook_name(h)}'; a gradient must be a Tensor or None)"
        )
    if np_dtype_of(r) != np_dtype_of(orig):
        raise RuntimeError(
            f"hook '{_hook_name(h)}' has changed the type of value (was {orig.dtype} got {r.dtype})"
        )
    if r.device != orig.device:
        raise RuntimeError(
            f"hook '{_hook_name(h)}' has changed the type of value (was a "
            f"tensor on {orig.device} got one on {r.device})"
        )
    if shape_of(r) != shape_of(orig):
        raise RuntimeError(
            f"hook '{_hook_name(h)}' has changed the size of value: "
            f"{list(shape_of(orig))} -> {list(shape_of(r))}"
        )


def _hook_grads(h, before, r, path):
    """The gradients a node pre- or post-hook returned in place of ``before`` (a tuple of
    tensors or None), checked as PyTorch's ``check_result`` does, as the path's values."""
    if not isinstance(r, tuple):
        raise TypeError(
            f"expected tuple, but hook returned '{_type_name(r)}' (hook '{_hook_name(h)}')"
        )
    if len(r) != len(before):
        raise RuntimeError(
            f"hook '{_hook_name(h)}' has returned an incorrect number of values "
            f"(got {len(r)}, but expected {len(before)})"
        )
    out = []
    for b, v in zip(before, r):
        if v is not None:
            if b is None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            _check_hook_value(h, b, v)
            v = path.unwrap(v)
        out.append(v)
    return out


def _run_tensor_hooks(hooks, g, path, stored):
    """Run tensor hooks on gradient ``g``; each may replace it (checked first)."""
    t = path.wrap(g)
    user = False
    for h in list(hooks):
        if type(h) is not _RetainGrad:  # retain_grad's hook keeps a copy, not ``g``
            user = True
        r = h(t)
        if r is not None:
            _check_hook_value(h, t, r)
            t = r
    g = path.unwrap(t)
    if user and path.arrays:
        stored.add(id(g))  # the user's code has seen or made it (NOTE [Engine], point 6)
    return g


def _expose(grads, stored):
    """Mark arrays user code has seen or made: never stored in ``.grad`` uncopied."""
    for g in grads:
        if g is not None:
            stored.add(id(g))


def _exclusive(g, buf, out):
    """Whether array ``g`` is not one of the node's incoming gradients and appears once in
    its outputs (by identity): then the slot it is sent to is its only holder."""
    for b in buf:
        if b is g:
            return False
    n = 0
    for o in out:
        if o is g:
            n += 1
    return n == 1


def _all_none(buf):
    for g in buf:
        if g is not None:
            return False
    return True


def _wrap_all(grads, path):
    return tuple(None if g is None else path.wrap(g) for g in grads)


def _run_post_hooks(node, out, buf, path):
    """Run ``node``'s post-hooks on its gradients ``out`` (None where an input takes no
    gradient, as PyTorch shows them); each may replace them (checked first)."""
    out = [None if e is None else g for e, g in zip(node._next, out)]
    for h in list(node._hooks):
        before = _wrap_all(out, path)
        r = h(before, _wrap_all(buf, path))
        if r is not None:
            out = _hook_grads(h, before, r, path)
    return out


def _choose_path(create_graph):
    """NOTE [Engine], point 5: how gradients travel in this backward, chosen once. The eager
    interpreter's first-order backward passes raw arrays between nodes (``_Arrays``);
    ``create_graph`` runs the rules on tensors (``_Tensors``); under a transform's
    interpreter gradients may be tracers (``_traced_path``). Anomaly mode checks every
    rule's result (``checked_path``, NOTE [Anomaly mode]). Returns ``(path, validate)``."""
    interp = current_interpreter()
    if interp is EVAL:
        path = _Tensors if create_graph else _Arrays
        validate = _validate
    else:
        path = _traced_path(interp, create_graph)
        validate = _validate_traced
    if extension.RECORDING.anomaly:
        path = checked_path(path)
    return path, validate


def _seed(roots, grads, deps, path):
    """Point 2's start: the roots' buffers filled with the caller's gradients, and the heap
    of the nodes that are ready (nothing else points at them)."""
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
        if g is None:  # an undefined output gradient (gradcheck's check_undefined_grad)
            continue
        g = path.unwrap(g)
        buf[nr] = g if buf[nr] is None else path.add(buf[nr], g, False)
    ready = []
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, node))
    return buffers, ready


def _capture_plan(targets):
    """For ``autograd.grad``: ``{node: [(output_nr, result index)]}`` of the gradients to
    capture, and the list they are captured into."""
    capture = {}
    for i, (node, nr) in enumerate(targets):
        capture.setdefault(node, []).append((nr, i))
    return capture, [None] * len(targets)


def _run_pre_hooks(node, buf, path, stored):
    """Point 2: a node's tensor hooks (``retain_grad``, ``register_hook``), then its
    pre-hooks, on its summed incoming gradients; each may replace them (checked first)."""
    th = node._tensor_hooks
    if th:
        with _NONLEAF_GRAD_LOCK:  # retain_grad's read-add-store of .grad
            for nr, hooks in th.items():
                if buf[nr] is not None:
                    buf[nr] = _run_tensor_hooks(hooks, buf[nr], path, stored)
    if node._pre_hooks:
        for h in list(node._pre_hooks):
            before = _wrap_all(buf, path)
            r = h(before)
            if r is not None:
                buf = _hook_grads(h, before, r, path)
        if path.arrays:
            _expose(buf, stored)
    return buf


def _capture(node, buf, is_leaf, capture, captured, path, stored, accumulate, input_tensors):
    """``autograd.grad``'s outputs (and ``backward(inputs=[non_leaf])``'s ``.grad``): the
    gradients reaching a target node, taken as they arrive."""
    if is_leaf and buf[0] is not None and node.variable._hooks:
        # once, for the capture and the accumulation below
        buf[0] = _run_tensor_hooks(node.variable._hooks, buf[0], path, stored)
    for nr, i in capture[node]:
        g = buf[nr]
        if g is not None:
            if path.arrays:
                stored.add(id(g))  # returned to the caller
            g = path.wrap(g)
        captured[i] = g
        t = input_tensors[i] if accumulate and not is_leaf else None
        if g is not None and t is not None and not t._retains_grad:
            # (a retained tensor's hook above already stored it, once)
            with _NONLEAF_GRAD_LOCK:
                t._grad = g.detach() if t._grad is None else t._grad + g.detach()


def _accumulate_leaf(node, g, create_graph, path, stored, hooks_ran):
    """Point 3: a leaf's gradient into its ``.grad`` (after its tensor hooks, unless they
    ran at capture), then its post-accumulate hooks and its node's post-hooks."""
    leaf = node.variable
    if leaf._hooks and not hooks_ran:
        g = _run_tensor_hooks(leaf._hooks, g, path, stored)
    _store_leaf_grad(node, g, create_graph, stored)
    if leaf._post_acc_hooks:
        _run_post_accumulate_hooks(leaf)
    if node._hooks:
        # as PyTorch: AccumulateGrad has no grad_inputs, so a post-hook may return only
        # None or ()
        for h in list(node._hooks):
            r = h((), _wrap_all([g], path))
            if r is not None:
                _hook_grads(h, (), r, path)


def _trim_outputs(node, out, n):
    """A rule returned more gradients than the node has inputs: the extra ones must be None."""
    if len(out) < n or any(g is not None for g in out[n:]):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {n}, got {len(out)})"
        )
    return out[:n]


def _execute(roots, grads, retain_graph, create_graph, targets, accumulate, input_tensors=None):
    """Run one backward (NOTE [Engine]): discover and count (point 1), then pop ready nodes,
    latest first, and for each: hooks, capture, leaf accumulation or the rule, validation,
    post-hooks, freeing what it saved, sending its gradients on (points 2 to 6)."""
    quiet_numpy()  # no NumPy warning on an inf/NaN gradient (NOTE [Quiet NumPy])
    path, validate = _choose_path(create_graph)
    arrays = path.arrays
    deps, needed = _discover(roots, targets)
    capture, captured = (None, []) if targets is None else _capture_plan(targets)
    buffers, ready = _seed(roots, grads, deps, path)
    owned = set()  # the buffer slots that alone hold their array (point 4)
    # never store the caller's grads (point 6)
    stored = (
        {id(g._data) for g in grads if g is not None}
        if validate is _validate
        else _array_ids(grads)
    )

    prev_run = getattr(_LOCAL, "run", None)
    _LOCAL.run = _Run(deps, needed, roots)
    token = _GRAD_ENABLED.set(bool(create_graph))
    try:
        while ready:
            node = heapq.heappop(ready)[1]
            buf = buffers.pop(node, None) or [None] * node._n_out
            is_leaf = type(node) is AccumulateGrad
            if node._any_hooks:
                buf = _run_pre_hooks(node, buf, path, stored)
            if capture is not None and node in capture:
                _capture(
                    node, buf, is_leaf, capture, captured, path, stored, accumulate, input_tensors
                )
            if is_leaf:
                g = buf[0]
                if accumulate and g is not None and (capture is None or node in capture):
                    leaf = node.variable
                    if leaf._hooks or leaf._post_acc_hooks or node._hooks:
                        _accumulate_leaf(node, g, create_graph, path, stored, capture is not None)
                    else:  # (the common case, without a call)
                        _store_leaf_grad(node, g, create_graph, stored)
                continue
            if needed is not None and node not in needed:
                continue
            # the rule (point 2), its gradients reduced to the inputs' shapes
            nxt = node._next
            if buf[0] is None if len(buf) == 1 else _all_none(buf):
                out = [None] * len(nxt)
            else:
                out = path.run(node, buf)
                if len(out) != len(nxt):
                    out = _trim_outputs(node, out, len(nxt))
                out = validate(node, out, path)
            fresh = arrays and node._fresh_grads
            if node._any_hooks and node._hooks:
                out = _run_post_hooks(node, out, buf, path)
                fresh = False
            if arrays and not fresh:
                # a custom backward's or a post-hook's arrays: the user may hold them
                _expose(out, stored)
            if not retain_graph and node._saved:
                node._saved = None  # free saved tensors (a node that saved none stays usable)
            # send each gradient along its edge: stored in the child's buffer, or added to
            # what is there (in place where the slot owns its array, point 4)
            for edge, g in zip(nxt, out):
                if edge is None:
                    continue
                child, nr = edge
                if needed is not None and child not in needed:
                    continue
                if g is not None:
                    cbuf = buffers.get(child)
                    if cbuf is None:
                        cbuf = buffers[child] = [None] * child._n_out
                    if cbuf[nr] is None:
                        cbuf[nr] = g
                        if (
                            fresh
                            and deps[child] > 1
                            and g.base is None
                            and g.flags.writeable
                            and _exclusive(g, buf, out)
                        ):
                            owned.add((child, nr))  # only this slot holds g: sum into it
                        elif (
                            arrays and type(child) is AccumulateGrad and not _exclusive(g, buf, out)
                        ):
                            # also sent on to another node: stored in .grad uncopied,
                            # another thread's accumulation would change it (point 3)
                            stored.add(id(g))
                    else:
                        key = (child, nr)
                        cbuf[nr] = path.add(cbuf[nr], g, key in owned)
                        if arrays:
                            owned.add(key)
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    heapq.heappush(ready, (-child._seq, child))
    finally:
        _GRAD_ENABLED.reset(token)
        _LOCAL.run = prev_run
    return captured


def _shallow(roots):
    """Point 7's test: one root, a node with no hooks, whose edges all lead to distinct
    leaves without hooks, on the eager interpreter and outside anomaly mode."""
    if len(roots) != 1 or extension.RECORDING.anomaly or current_interpreter() is not EVAL:
        return False
    node = roots[0][0]
    if type(node) is AccumulateGrad or node._any_hooks or node._n_out != 1:
        return False
    seen = []
    for edge in node._next:
        if edge is not None:
            child = edge[0]
            if type(child) is not AccumulateGrad or child._any_hooks or child._hooks:
                return False
            leaf = child.variable
            if leaf._hooks or leaf._post_acc_hooks or child in seen:
                return False
            seen.append(child)
    return True


def _execute_shallow(node, g, retain_graph):
    """Point 7: ``backward()`` of a graph of one node over leaves (a compiled call's loss,
    one op on parameters): the rule runs and its gradients go straight into ``.grad``,
    with what ``_execute`` does for that graph and none of its queue bookkeeping. ``g`` is
    the output's gradient array (None: undefined)."""
    quiet_numpy()
    if g is not None:  # (None: an undefined output gradient, nothing to store)
        stored = {id(g)}
        token = _GRAD_ENABLED.set(False)
        try:
            out = node._backward_arrays([g])
            nxt = node._next
            if len(out) != len(nxt):
                out = _trim_outputs(node, out, len(nxt))
            if not node._exact_grads:
                out = _validate(node, out, _Arrays)
            if not node._fresh_grads:
                _expose(out, stored)
            for edge, gi in zip(nxt, out):
                if edge is not None and gi is not None:
                    _store_leaf_grad(edge[0], gi, False, stored)
        finally:
            _GRAD_ENABLED.reset(token)
    if not retain_graph and node._saved:
        node._saved = None


_LOCAL = threading.local()
# Serialises the updates of non-leaf tensors' ``.grad`` (``retain_grad``'s hook, and
# ``backward(inputs=[non_leaf])``) across threads (NOTE [Engine], point 3); reentrant: a
# hook may itself call backward.
_NONLEAF_GRAD_LOCK = threading.RLock()


class _Run:
    """The backward running in this thread (``current_run``): which nodes it reaches."""

    __slots__ = ("deps", "needed", "roots")

    def __init__(self, deps, needed, roots):
        self.deps = deps
        self.needed = needed
        self.roots = roots

    def will_compute(self, t):
        """Whether this backward computes a gradient for ``t`` (its node is reached)."""
        if t._grad_fn is not None:
            node = t._grad_fn
        else:
            ref = t._accumulator
            node = ref() if ref is not None else None
            if node is None:
                return False
        if node not in self.deps and all(node is not n for n, _ in self.roots):
            return False
        return self.needed is None or node in self.needed


def current_run():
    """The backward running in this thread, or None (``register_multi_grad_hook``)."""
    return getattr(_LOCAL, "run", None)


extension.register(backward=backward)  # Tensor.backward calls up (NOTE [Extension points])
