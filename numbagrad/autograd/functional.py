"""Higher-level differentiation API (PyTorch's ``torch.autograd.functional``), built on the
eager autograd engine as PyTorch builds it.

``inputs`` is a tensor or a tuple of tensors and the results mirror it (and the function's
outputs): a tensor for a single input, tuples for several. Everything reverse-mode is plain
eager autograd: the function runs once on fresh inputs that require grad (NOTE [Input
preprocessing]) and the results are :func:`numbagrad.autograd.grad` calls on the recorded
graph, so whatever eager autograd differentiates works here too: a custom
``autograd.Function`` written in the combined style (``forward(ctx, ...)`` without
``setup_context``), a function that fills a buffer it created in place (``dy[0] = ...``).

- :func:`vjp` is one backward; :func:`jvp` uses the double-backward trick (the backward is
  linear in the output gradient, so differentiating it with respect to that gradient gives
  ``J v``); :func:`vhp` differentiates the ``create_graph`` gradient once more and
  :func:`hvp` applies the double-backward trick to it.
- :func:`jacobian` with ``vectorize=False`` calls ``autograd.grad`` once per output element;
  ``vectorize=True`` makes one ``autograd.grad(..., is_grads_batched=True)`` call (a backward
  under :func:`numbagrad.func.vmap`) with the standard basis as the output gradients.
  ``strategy="forward-mode"`` (which requires ``vectorize=True``, as in PyTorch) pushes the
  basis through the function as ``forward_ad`` dual tangents, under ``vmap``.
- :func:`hessian` is the Jacobian of the ``create_graph`` gradient.

Results are detached unless ``create_graph=True``; ``strict=True`` raises PyTorch's errors
when an output or a derivative does not depend on an input, and with ``strict=False`` such
entries are zeros.

Examples
--------
>>> import numbagrad
>>> from numbagrad.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, numbagrad.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""

from __future__ import annotations

from numbagrad import ops as F
from numbagrad._core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from numbagrad._creation import ones_like, zeros_like
from numbagrad._tensor import Tensor
from numbagrad._transforms.forward import DualTracer
from numbagrad.autograd import forward_ad as fwAD
from numbagrad.autograd._function_transforms import legacy_vmap as _vmap
from numbagrad.autograd.engine import grad as _grad
from numbagrad.func import vjp as _func_vjp

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# -- tuple handling ---------------------------------------------------------------------------
def _as_tuple(x, name, fn):
    """``(was_tuple, x as a tuple of Tensors)``, with PyTorch's TypeError otherwise."""
    is_tuple = isinstance(x, tuple)
    t = x if is_tuple else (x,)
    for i, e in enumerate(t):
        if not isinstance(e, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {name} given to {fn} must be either a Tensor or a tuple "
                    f"of Tensors but the value at index {i} has type {type(e)}."
                )
            raise TypeError(
                f"The {name} given to {fn} must be either a Tensor or a tuple of "
                f"Tensors but the given {name} has type {type(e)}."
            )
    return is_tuple, t


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag, or (outer, inner) flags for nested
    results (``jacobian[i][j]``)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


# NOTE [Input preprocessing]
# Every call differentiates with respect to *new* tensor objects, never the caller's: a
# function may also capture the caller's tensor as a constant (PyTorch issue #32576), and
# the gradient must not flow into that use. With ``create_graph`` and an input that
# requires grad, the new object is a view that keeps the graph (so the results can be
# differentiated with respect to the caller's input); otherwise it is a detached copy of the
# reference with ``requires_grad`` set as needed. ``v`` vectors get the same treatment with
# ``need_graph=False``.
def _check_untraced(tensors):
    """Refuse values a ``numbagrad.func`` transform owns, as PyTorch does: the eager tape
    cannot see through them (under ``func.grad`` the result would silently be a constant).
    ``forward_ad`` duals are allowed (their primals are used, as in PyTorch)."""
    for t in tensors:
        if t._is_tracer and not (type(t) is DualTracer and t._interp.level is not None):
            raise RuntimeError(
                "You are attempting to call Tensor.requires_grad_() (or perhaps using "
                "torch.autograd.functional.* APIs) inside of a function being transformed by "
                f"a functorch transform ({t._interp.name}). This is unsupported, please "
                "attempt to use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, "
                "hessian) or call requires_grad_() outside of a function being transformed "
                "instead."
            )


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensor objects for ``inputs`` (NOTE [Input preprocessing])."""
    _check_untraced(inputs)
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(res, create_graph):
    """Detach (possibly nested tuples of) results unless ``create_graph``."""
    if isinstance(res[0], Tensor):
        return res if create_graph else tuple(r.detach() for r in res)
    return tuple(_grad_postprocess(r, create_graph) for r in res)


def _validate_v(v, other, is_other_tuple):
    """``v`` must match ``other`` (both tuples of Tensors) in length and shapes."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.shape} but got {el_v.shape}."
            )


def _preprocess_v(v, refs, is_refs_tuple, create_graph, fn, what):
    """Check ``v`` against ``refs`` (``None`` only for one single-element reference)."""
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if the {what} a single Tensor with a single "
                "element."
            )
        return None
    _, v = _as_tuple(v, "v", fn)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, refs, is_refs_tuple)
    return v


# -- strict mode ----------------------------------------------------------------------------
def _check_requires_grad(tensors, kind, strict):
    """Strict mode's checks on ``tensors`` (outputs, or gradients that must carry a graph),
    with PyTorch's messages."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:  # only gradients can be None
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}."
                " This is not allowed in strict mode."
            )
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i}"
                " is independent of the input. This is not allowed in strict mode."
                " You should ensure that your function is thrice differentiable and that"
                " the hessian depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided"
                f" function with respect to input {i} is independent of the input. This is not"
                " allowed in strict mode. You should ensure that your function is twice"
                " differentiable and that the jacobian depends on the inputs (this would be"
                " violated by a linear function for example)."
            )
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the"
                " user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients."
            " The outputs must be computed in a differentiable manner from the input"
            " when running in strict mode."
        )


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros shaped like ``refs[i]`` for missing gradients, or strict mode's errors."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


# -- the engine calls -----------------------------------------------------------------------
def _autograd_grad(
    outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, batched=False
):
    """``autograd.grad`` that skips outputs which are None or do not require grad (their
    gradients are then None), with ``allow_unused=True``."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    keep = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not keep:
        return (None,) * len(inputs)
    return _grad(
        tuple(o for o, _ in keep),
        inputs,
        tuple(g for _, g in keep),
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
        is_grads_batched=batched,
    )


def _standard_basis(tensors, numels):
    """The ``N x N`` identity (``N = sum(numels)``) split by columns into one ``N x numel``
    block per tensor, each with that tensor's dtype and device."""
    total = sum(numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, numels))
    start = 0
    for chunk, n in zip(chunks, numels):
        if n:
            chunk.diagonal(start).fill_(1)
        start -= n
    return chunks


# -- vjp / jvp ------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes the Tensor inputs, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        Where to differentiate ``func``.
    v : Tensor or tuple of Tensor, optional
        Shaped like the outputs of ``func``; may be omitted when ``func`` returns a single
        Tensor with a single element (it is then a one).
    create_graph : bool, default False
        Compute the output and the product in a differentiable way (their graphs reach the
        caller's ``inputs`` that require grad).
    strict : bool, default False
        Raise when an output does not require grad or some input does not reach any output;
        otherwise the product is zeros for such an input.

    Returns
    -------
    func_output : Tensor or tuple of Tensor
        ``func(inputs)``.
    vjp : Tensor or tuple of Tensor
        Shaped like ``inputs``.

    Raises
    ------
    TypeError
        For inputs or outputs that are not Tensors or tuples of Tensors.
    RuntimeError
        For a ``v`` of the wrong length or shapes, a missing ``v`` for a non-scalar output,
        and in strict mode (see ``strict``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.functional import vjp
    >>> out, g = vjp(lambda x: x ** 2, numbagrad.tensor([1.0, 2.0]), numbagrad.ones(2))
    >>> out, g
    (tensor([1., 4.]), tensor([2., 4.]))
    >>> xy = (numbagrad.ones(2), numbagrad.ones(2))
    >>> vjp(lambda x, y: 2 * x + 3 * y, xy, numbagrad.ones(2))[1]
    (tensor([2., 2.]), tensor([3., 3.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        v = _preprocess_v(
            v, outputs, is_outputs_tuple, create_graph, "vjp", "user-provided function returns"
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``, by the double-backward
    trick (as PyTorch computes it).

    The backward of ``func`` is linear in the output gradient ``u``: ``g(u) = J^T u``.
    Differentiating ``g`` with respect to ``u`` in the direction ``v`` gives ``J v``, so two
    reverse passes replace forward mode. :func:`numbagrad.func.jvp` and
    :mod:`numbagrad.autograd.forward_ad` compute it in one forward pass instead.

    Parameters
    ----------
    func : callable
        Takes the Tensor inputs, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        Where to differentiate ``func``.
    v : Tensor or tuple of Tensor, optional
        Shaped like ``inputs``; may be omitted when the input is a single Tensor with a
        single element.
    create_graph : bool, default False
        Compute the output and the product in a differentiable way.
    strict : bool, default False
        Raise when an output does not require grad or does not depend on the inputs;
        otherwise the product is zeros for such an output.

    Returns
    -------
    func_output : Tensor or tuple of Tensor
        ``func(inputs)``.
    jvp : Tensor or tuple of Tensor
        Shaped like the outputs.

    Raises
    ------
    TypeError
        For inputs or outputs that are not Tensors or tuples of Tensors.
    RuntimeError
        For a ``v`` of the wrong length or shapes, and in strict mode.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([1.0, 0.5]))
    (tensor([1., 4.]), tensor([2., 2.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _preprocess_v(
            v,
            inputs,
            is_inputs_tuple,
            create_graph,
            "jvp",
            "input to the user-provided function is",
        )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        # the backward is linear in these, so their value does not matter (zeros: no inf or
        # nan can leak into the double-backward graph)
        grad_outputs = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_outputs_tuple)


# -- jacobian -------------------------------------------------------------------------------
def _jacfwd(func, inputs, strict, vectorize):
    """Forward-mode Jacobian: the input basis as ``forward_ad`` tangents, under ``vmap``."""
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    _check_untraced(inputs)
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is "
            "only implemented for `vectorize=True`."
        )
    numels = tuple(inp.numel() for inp in inputs)
    tangents = _standard_basis(inputs, numels)
    info = []  # (is the output a tuple, the output shapes), recorded by the traced call

    def push_forward(*ts):
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(i, t.view_as(i)) for i, t in zip(inputs, ts))
            is_outputs_tuple, outs = _as_tuple(
                func(*duals), "outputs of the user-provided function", "jacobian"
            )
            jv = []
            for out in outs:
                primal, tangent = fwAD.unpack_dual(out)
                jv.append(zeros_like(primal) if tangent is None else tangent)
            info[:] = [is_outputs_tuple, tuple(o.shape for o in outs)]
            return tuple(jv)

    if sum(numels) == 0:  # nothing to push forward: run the function once for its shapes
        push_forward(*(i.new_zeros(0) for i in inputs))
        jac = tuple(tuple(i.new_zeros((*shape, *i.shape)) for i in inputs) for shape in info[1])
        return _tuple_postprocess(jac, (info[0], is_inputs_tuple))
    batched = _vmap(push_forward)(*tangents)
    is_outputs_tuple, shapes = info
    jac = []
    for jac_out, shape in zip(batched, shapes):
        # the batch (first) dimension runs over the inputs' elements: move it last
        row = []
        for block, inp in zip(jac_out.split(numels, dim=0), inputs):
            block = block.permute(*range(1, block.ndim), 0).reshape((*shape, *inp.shape))
            row.append(block.detach())
        jac.append(tuple(row))
    return _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    r"""The Jacobian of ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes the Tensor inputs, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        Where to differentiate ``func``.
    create_graph : bool, default False
        Compute the Jacobian in a differentiable way (reverse mode only).
    strict : bool, default False
        Raise when an output does not require grad or does not depend on some input;
        otherwise those blocks are zeros. Not supported with ``vectorize=True`` nor with
        ``strategy="forward-mode"`` (as in PyTorch).
    vectorize : bool, default False
        ``False``: one ``autograd.grad`` call per output element. ``True``: one
        ``autograd.grad(..., is_grads_batched=True)`` call with the standard basis as the
        output gradients (a single backward under :func:`numbagrad.func.vmap`; every rule
        and custom ``backward`` on the way must be vmappable).
    strategy : {"reverse-mode", "forward-mode"}
        ``"forward-mode"`` pushes the input basis forward as ``forward_ad`` tangents under
        ``vmap`` (requires ``vectorize=True``; custom Functions need ``setup_context`` and a
        ``jvp``). It tends to win when ``func`` has more outputs than inputs.

    Returns
    -------
    Tensor or tuple of Tensor or tuple of tuple of Tensor
        ``jacobian[i][j]`` (indices dropped where the outputs or the inputs are a single
        Tensor) has shape ``outputs[i].shape + inputs[j].shape``; its dtype is the input's
        in reverse mode, the output's in forward mode.

    Raises
    ------
    AssertionError
        For an unknown ``strategy`` (PyTorch's type).
    NotImplementedError
        For ``strategy="forward-mode"`` with ``vectorize=False`` or ``create_graph=True``.
    RuntimeError
        In strict mode (see ``strict``), and with ``strict`` combined with ``vectorize`` or
        forward mode.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.functional import jacobian
    >>> x = numbagrad.tensor([1.0, 2.0])
    >>> jacobian(lambda x: x.exp().sum(), x, vectorize=True)
    tensor([2.7183, 7.3891])
    >>> jacobian(lambda x, y: 2 * x + 3 * y, (x, x))
    (tensor([[2., 0.],
            [0., 2.]]), tensor([[3., 0.],
            [0., 3.]]))

    A function that fills a buffer in place, as eager autograd records it:

    >>> def f(y):
    ...     dy = numbagrad.empty(2)
    ...     dy[0] = y[0] * y[1]
    ...     dy[1] = y[1] ** 2
    ...     return dy
    >>> jacobian(f, x)
    tensor([[2., 1.],
            [0., 4.]])
    """
    if strategy not in _STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). '
                "Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` "
                    "and `vectorized=True` are not supported together. "
                    "Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            jac = _jacobian_vectorized(outputs, inputs, create_graph)
        else:
            jac = _jacobian_loop(outputs, inputs, create_graph, strict)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_vectorized(outputs, inputs, create_graph):
    """All rows at once: the output basis as a batch of gradients, one backward."""
    numels = tuple(o.numel() for o in outputs)
    total = sum(numels)
    if total == 0:
        return tuple(tuple(i.new_zeros((*o.shape, *i.shape)) for i in inputs) for o in outputs)
    basis = _standard_basis(outputs, numels)
    flat = tuple(o.reshape(-1) for o in outputs)
    grads = _autograd_grad(flat, inputs, basis, create_graph=create_graph, batched=True)
    # grads[j]: (total, *inputs[j].shape), rows ordered as the flattened outputs
    cols = []
    for g, inp in zip(grads, inputs):
        if g is None:
            g = zeros_like(inp).expand((total, *inp.shape))
        cols.append(
            [b.view((*o.shape, *inp.shape)) for b, o in zip(g.split(numels, dim=0), outputs)]
        )
    return tuple(zip(*cols))


def _jacobian_loop(outputs, inputs, create_graph, strict):
    """One ``autograd.grad`` call per output element (row of the Jacobian)."""
    jac = []
    for i, out in enumerate(outputs):
        rows = tuple([] for _ in inputs)
        # row k is the gradient of out.reshape(-1)[k], taken as out's gradient against the
        # one-hot ``e_k`` (the same numbers as PyTorch's indexing, without recording and
        # back-propagating an index op per row: half the cost of a row)
        n = out.numel()
        one_hot = _standard_basis((out,), (n,))[0].view((n, *out.shape)).unbind(0) if n else ()
        for e_k in one_hot:
            vj = _autograd_grad(
                (out,), inputs, (e_k,), retain_graph=True, create_graph=create_graph
            )
            for j, (g, inp) in enumerate(zip(vj, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {j}. This is not allowed in strict mode."
                        )
                    g = zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of "
                        f"input {j}. This is not allowed in strict mode when "
                        "create_graph=True."
                    )
                rows[j].append(g)
        jac.append(
            tuple(
                F.stack(r, 0).view((*out.shape, *inp.shape))
                if r
                else inp.new_zeros((*out.shape, *inp.shape))
                for r, inp in zip(rows, inputs)
            )
        )
    return tuple(jac)


# -- second order ---------------------------------------------------------------------------
def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    r"""The Hessian of a scalar ``func`` at ``inputs``: the Jacobian of its gradient.

    Parameters
    ----------
    func : callable
        Takes the Tensor inputs, returns a Tensor with a single element.
    inputs : Tensor or tuple of Tensor
        Where to differentiate ``func``.
    create_graph : bool, default False
        Compute the Hessian in a differentiable way.
    strict : bool, default False
        Raise when the output, the gradient or the Hessian does not depend on an input;
        otherwise those blocks are zeros.
    vectorize : bool, default False
        Compute the outer Jacobian with one batched backward (see :func:`jacobian`).
    outer_jacobian_strategy : {"reverse-mode", "forward-mode"}
        How the outer Jacobian is computed (the gradient is always reverse mode).
        ``"forward-mode"`` requires ``vectorize=True``; it differentiates the gradient of
        :func:`numbagrad.func.vjp` (which composes with forward-mode tangents), so custom
        Functions need ``setup_context`` and a ``jvp`` there.

    Returns
    -------
    Tensor or tuple of tuple of Tensor
        ``hessian[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.

    Raises
    ------
    AssertionError
        For an unknown ``outer_jacobian_strategy``.
    RuntimeError
        When ``func`` does not return a single Tensor with one element, and in strict mode.
    NotImplementedError
        For ``outer_jacobian_strategy="forward-mode"`` with ``vectorize=False`` or
        ``create_graph=True``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), numbagrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    >>> h = hessian(lambda x, y: (x * y).sum(), (numbagrad.ones(1), numbagrad.ones(1)))
    >>> h[0][1], h[1][1]
    (tensor([[1.]]), tensor([[0.]]))
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    if outer_jacobian_strategy == "forward-mode":
        # NOTE: PyTorch runs its reverse-mode jacobian on dual inputs here. numbagrad's eager
        # engine differentiates the primals only (a gradient taken with respect to a dual
        # input has no tangent), so the inner gradient is func.vjp's, which does compose
        # with forward_ad tangents

        def jac_func(*inp):
            out, pullback = _func_vjp(scalar_func, *inp)
            return pullback(ones_like(out))

    else:

        def jac_func(*inp):
            jac = jacobian(scalar_func, inp, create_graph=True)
            _check_requires_grad(jac, "jacobian", strict)
            return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func, inputs, strict, fn):
    """``func(*inputs)`` as a one-tuple, checked to be a single one-element Tensor."""
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn} should contain a single element"
        )
    return outputs


def _gradient_of_scalar(fn, func, inputs, v, create_graph, strict):
    """The common start of ``vhp``/``hvp`` (grad mode on): the preprocessed inputs and
    ``v``, the scalar output and its ``create_graph`` gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _preprocess_v(
        v, inputs, is_inputs_tuple, create_graph, fn, "input to the user-provided function is"
    )
    outputs = _scalar_output(func, inputs, strict, fn)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``v^T H`` of a scalar ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes the Tensor inputs, returns a Tensor with a single element.
    inputs : Tensor or tuple of Tensor
        Where to differentiate ``func``.
    v : Tensor or tuple of Tensor, optional
        Shaped like ``inputs``; may be omitted when the input is a single Tensor with a
        single element.
    create_graph : bool, default False
        Compute the output and the product in a differentiable way.
    strict : bool, default False
        Raise when the output, the gradient or the product does not depend on an input;
        otherwise the product is zeros for such an input.

    Returns
    -------
    func_output : Tensor
        ``func(inputs)``.
    vhp : Tensor or tuple of Tensor
        Shaped like ``inputs``.

    Raises
    ------
    RuntimeError
        For a bad ``v``, a ``func`` that does not return one single-element Tensor, and in
        strict mode.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), numbagrad.tensor([1.0, 2.0]), numbagrad.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(
            "vhp", func, inputs, v, create_graph, strict
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return outputs[0], _tuple_postprocess(res, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of a scalar ``func`` at ``inputs``, by the
    double-backward trick on the gradient (as PyTorch computes it).

    Equal to :func:`vhp` for twice continuously differentiable functions (symmetric
    Hessians), which is one backward cheaper.

    Parameters
    ----------
    func : callable
        Takes the Tensor inputs, returns a Tensor with a single element.
    inputs : Tensor or tuple of Tensor
        Where to differentiate ``func``.
    v : Tensor or tuple of Tensor, optional
        Shaped like ``inputs``; may be omitted when the input is a single Tensor with a
        single element.
    create_graph : bool, default False
        Compute the output and the product in a differentiable way.
    strict : bool, default False
        Raise when the output, the gradient or the product does not depend on an input;
        otherwise the product is zeros for such an input.

    Returns
    -------
    func_output : Tensor
        ``func(inputs)``.
    hvp : Tensor or tuple of Tensor
        Shaped like ``inputs``.

    Raises
    ------
    RuntimeError
        For a bad ``v``, a ``func`` that does not return one single-element Tensor, and in
        strict mode.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), numbagrad.tensor([1.0, 2.0]), numbagrad.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(
            "hvp", func, inputs, v, create_graph, strict
        )
        # the gradient's backward is linear in these (zeros: see jvp)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return outputs[0], _tuple_postprocess(res, is_inputs_tuple)
