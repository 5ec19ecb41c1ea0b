"""Higher-level differentiation API (PyTorch's ``torch.autograd.functional``), built on
the ``numbagrad.func`` transforms.

``inputs`` is a tensor or a tuple of tensors and the results mirror it: a tensor for a
single input, tuples for several. Results are detached unless ``create_graph=True``;
``strict=True`` raises when an output does not depend on an input (PyTorch's check).
``vectorize`` is accepted for compatibility: the Jacobians are always computed with
``vmap`` over the basis (what ``vectorize=True`` asks for).

Examples
--------
>>> import numbagrad
>>> from numbagrad.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, numbagrad.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""

from __future__ import annotations

from numbagrad._creation import ones_like
from numbagrad._tensor import Tensor
from numbagrad.func import jacfwd, jacrev
from numbagrad.func import jvp as _jvp
from numbagrad.func import vjp as _vjp

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(x, name, fn):
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


def _finish(x, create_graph):
    if isinstance(x, tuple):
        return tuple(_finish(e, create_graph) for e in x)
    return x if create_graph or not isinstance(x, Tensor) else x.detach()


def _check_v(v, outs, fn, what):
    if v is None:
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if the {what} to the user-"
                "provided function is a single Tensor with a single element."
            )
        return (ones_like(outs[0]),)
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(outs):
        raise RuntimeError(f"v has invalid size: should be {len(outs)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, outs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"Entry {i} in v has invalid size: should be {list(b.shape)} "
                f"but got {list(a.shape)}."
            )
    return vs


def _strict_check(fn, func, inputs):
    """PyTorch's strict mode: every output depends on every input."""
    from numbagrad._transforms.reverse import backward as tape_backward
    from numbagrad.func import _trace_grad

    _, leaves, _, out = _trace_grad(func, inputs, {}, list(range(len(inputs))), fn)
    outs = out if isinstance(out, tuple) else (out,)
    for i, o in enumerate(outs):
        grads = tape_backward([o], [ones_like(o)], len(leaves))
        for j, g in enumerate(grads):
            if g is None:
                raise RuntimeError(
                    f"Output {i} of the user-provided function is independent "
                    f"of input {j}. This is not allowed in strict mode."
                )


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``."""
    is_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
    out, fn = _vjp(lambda *xs: func(*xs) if is_tuple else func(xs[0]), *ins)
    o_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "vjp")
    vs = _check_v(v, outs, "vjp", "output")
    if strict:
        _strict_check("vjp", func, ins)
    grads = fn(vs if o_tuple else vs[0])
    res = grads if is_tuple else grads[0]
    return _finish(out, create_graph), _finish(res, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``."""
    is_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
    vs = _check_v(v, ins, "jvp", "input")
    if strict:
        _strict_check("jvp", func, ins)
    out, tan = _jvp(lambda *xs: func(*xs) if is_tuple else func(xs[0]), ins, tuple(vs))
    _as_tuple(out, "outputs of the user-provided function", "jvp")
    return _finish(out, create_graph), _finish(tan, create_graph)


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """The Jacobian of ``func`` at ``inputs`` (``out.shape + in.shape`` per pair)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". '
            "Hint: If your function has more outputs than inputs, "
            '"forward-mode" tends to be more performant. Otherwise, prefer to '
            'use "reverse-mode".'
        )
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError(
            'torch.autograd.functional.jacobian: `strategy="forward-'
            'mode"` requires `vectorize=True`.'
        )
    is_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    if strict:
        _strict_check("jacobian", func, ins)
    argnums = tuple(range(len(ins))) if is_tuple else 0
    jac = (jacrev if strategy == "reverse-mode" else jacfwd)(func, argnums=argnums)(*ins)
    return _finish(jac, create_graph)


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a scalar ``func`` at ``inputs`` (nested tuples for several)."""
    is_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if strict:
        _strict_check("hessian", func, ins)
    out = func(*ins)
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise RuntimeError(
            "The function given to hessian should return a single Tensor with a single element"
        )
    argnums = tuple(range(len(ins))) if is_tuple else 0

    def scalar(*xs):
        return func(*xs).reshape(())

    outer = jacfwd if outer_jacobian_strategy == "forward-mode" else jacrev
    h = outer(jacrev(scalar, argnums=argnums), argnums=argnums)(*ins)
    return _finish(h, create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``."""
    return _hv("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func`` (equal to ``vhp`` for the symmetric
    Hessians of twice continuously differentiable functions)."""
    return _hv("hvp", func, inputs, v, create_graph, strict)


def _hv(fn, func, inputs, v, create_graph, strict):
    from numbagrad.func import grad

    is_tuple, ins = _as_tuple(inputs, "inputs", fn)
    if strict:
        _strict_check(fn, func, ins)
    out = func(*ins)
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise RuntimeError(
            f"The function given to {fn} should return a single Tensor with a single element"
        )
    vs = _check_v(v, ins, fn, "input")
    argnums = tuple(range(len(ins)))

    def g(*xs):
        return grad(lambda *ys: func(*ys).reshape(()), argnums=argnums)(*xs)

    # forward-over-reverse: H v in one pass
    _, hv = _jvp(g, ins, tuple(vs))
    res = hv if is_tuple else hv[0]
    return _finish(out, create_graph), _finish(res, create_graph)
