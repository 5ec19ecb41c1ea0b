"""Finite-difference checks of gradients: ``gradcheck`` and ``gradgradcheck``."""

from __future__ import annotations

import numpy as np

from numbagrad._tensor import Tensor
from numbagrad.autograd.engine import _execute, _root_edge
from numbagrad.autograd.engine import grad as _grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, inputs):
    out = _as_tuple(func(*inputs))
    return [o for o in out if isinstance(o, Tensor) and o.is_floating_point()]


def _numerical_jacobian(func, inputs, diff, eps):
    """Central differences: one column per element of each differentiable input.

    ``func`` runs with grad mode as the caller has it: for ``gradgradcheck`` it calls
    ``autograd.grad`` itself."""
    base = _outputs(func, inputs)
    jac = [[np.zeros((o.numel(), inputs[i].numel())) for i in diff] for o in base]
    for col, i in enumerate(diff):
        x = inputs[i]._data  # perturbed in place, element by element in C order
        for j, idx in enumerate(np.ndindex(x.shape)):
            orig = x[idx]
            x[idx] = orig + eps
            plus = [o._data.astype(np.float64).reshape(-1).copy()
                    for o in _outputs(func, inputs)]
            x[idx] = orig - eps
            minus = [o._data.astype(np.float64).reshape(-1).copy()
                     for o in _outputs(func, inputs)]
            x[idx] = orig
            for k in range(len(base)):
                jac[k][col][:, j] = (plus[k] - minus[k]) / (2 * eps)
    return jac


def _analytical_jacobian(func, inputs, diff):
    outs = _outputs(func, inputs)
    jac = [[np.zeros((o.numel(), inputs[i].numel())) for i in diff] for o in outs]
    wrt = [inputs[i] for i in diff]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            e = np.zeros(o.numel(), o._data.dtype)
            e[r] = 1
            gs = _grad(o, wrt, Tensor._make(e.reshape(o._data.shape)), retain_graph=True,
                       allow_unused=True)
            for col, g in enumerate(gs):
                if g is not None:
                    if g._data.shape != inputs[diff[col]]._data.shape:
                        raise GradcheckError(
                            f"gradient with respect to input {diff[col]} has shape "
                            f"{list(g.shape)}, expected {list(inputs[diff[col]].shape)}")
                    jac[k][col][r, :] = g._data.astype(np.float64).reshape(-1)
    return jac


_NEEDS_TRANSFORMS = ("check_forward_ad", "check_batched_grad", "check_batched_forward_grad",
                     "check_fwd_over_rev")


def _refuse_transform_checks(fname, **flags):
    """Checks that need forward mode or vmap raise until those transforms exist."""
    for name in _NEEDS_TRANSFORMS:
        if flags.get(name):
            raise NotImplementedError(
                f"{fname}({name}=True) needs forward-mode AD / vmap, which numbagrad does not "
                f"implement yet; call {fname} without {name}")
    if flags.get("masked"):
        raise NotImplementedError(f"{fname}(masked=True) is for sparse tensors, which numbagrad "
                                  "does not have")


def _directional_check(func, inputs, diff, eps, atol, rtol, nondet_tol):
    """``fast_mode``: compare ``v^T J u`` for random ``u``, ``v`` (one backward and two
    forward evaluations instead of a full Jacobian), as PyTorch's fast gradcheck does."""
    rng = np.random.default_rng(0)
    outs = _outputs(func, inputs)
    us = [rng.standard_normal(inputs[i]._data.shape) for i in diff]
    vs = [rng.standard_normal(o._data.shape) for o in outs]
    # numerical: d/dh <v, f(x + h u)> by central differences
    saved = [inputs[i]._data.copy() for i in diff]

    def shifted(h):
        for i, u, x0 in zip(diff, us, saved):
            inputs[i]._data[...] = x0 + h * u
        return sum(float(np.sum(o._data.astype(np.float64) * v))
                   for o, v in zip(_outputs(func, inputs), vs))
    try:
        numerical = (shifted(eps) - shifted(-eps)) / (2 * eps)
    finally:
        for i, x0 in zip(diff, saved):
            inputs[i]._data[...] = x0

    def analytical():
        pairs = [(o, v) for o, v in zip(_outputs(func, inputs), vs) if o.requires_grad]
        if not pairs:
            return 0.0
        gs = _grad([o for o, _ in pairs], [inputs[i] for i in diff],
                   [Tensor._make(v.astype(o._data.dtype)) for o, v in pairs],
                   allow_unused=True)
        return sum(float(np.sum(g._data.astype(np.float64) * u))
                   for g, u in zip(gs, us) if g is not None)
    a = analytical()
    if nondet_tol is not None and abs(analytical() - a) > nondet_tol:
        raise GradcheckError("Backward is not reentrant: two runs of the backward gave "
                             "different results (raise nondet_tol to accept this)")
    if abs(a - numerical) > atol + rtol * abs(numerical):
        raise GradcheckError(
            "Jacobian mismatch in a random direction (fast_mode=True): "
            f"numerical v^T J u = {numerical!r}, analytical = {a!r}. Run with "
            "fast_mode=False to see the full Jacobians.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    Inputs that require grad are perturbed one element at a time by ``eps``; each
    analytical Jacobian entry ``a`` must satisfy ``|a - n| <= atol + rtol * |n|``. Use
    float64 inputs: float32 differences are too coarse.

    Parameters
    ----------
    func : callable
        Takes the inputs, returns a tensor or a tuple of tensors.
    inputs : Tensor or tuple
    eps, atol, rtol : float
    raise_exception : bool, default True
        Raise :class:`GradcheckError` on mismatch instead of returning False.
    nondet_tol : float, default 0.0
        How far two runs of the backward may differ (the backward is run twice).
    check_undefined_grad : bool, default True
        Also check that the backward accepts undefined (None) output gradients, giving
        None or zeros.
    check_grad_dtypes : bool, default False
        Also check that each gradient has its input's dtype.
    check_backward_ad : bool, default True
        Check the reverse-mode Jacobian (the only mode numbagrad has so far).
    fast_mode : bool, default False
        Compare ``v^T J u`` in one random direction instead of whole Jacobians.
    check_forward_ad, check_batched_grad, check_batched_forward_grad : bool
        Need forward-mode AD and vmap: ``True`` raises ``NotImplementedError`` for now.

    Returns
    -------
    bool
        True when all checks pass.

    Raises
    ------
    GradcheckError
        On a mismatch, when ``raise_exception`` is True.
    NotImplementedError
        For the forward-mode and batched checks.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.rand(3, dtype=numbagrad.float64, requires_grad=True)
    >>> numbagrad.autograd.gradcheck(numbagrad.sin, (x,))
    True
    """
    _refuse_transform_checks("gradcheck", check_forward_ad=check_forward_ad,
                             check_batched_grad=check_batched_grad,
                             check_batched_forward_grad=check_batched_forward_grad,
                             masked=masked)
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in diff:
        if inputs[i].dtype.np != np.float64:
            import warnings

            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point.", stacklevel=2)
    if not check_backward_ad:
        return True
    try:
        if fast_mode:
            _directional_check(func, inputs, diff, eps, atol, rtol, nondet_tol)
        else:
            _full_check(func, inputs, diff, eps, atol, rtol, nondet_tol)
        if check_grad_dtypes:
            _check_grad_dtypes(func, inputs, diff)
        if check_undefined_grad:
            _check_undefined_grad(func, inputs, diff)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _full_check(func, inputs, diff, eps, atol, rtol, nondet_tol):
    num = _numerical_jacobian(func, inputs, diff, eps)
    ana = _analytical_jacobian(func, inputs, diff)
    if nondet_tol is not None:
        again = _analytical_jacobian(func, inputs, diff)
        for k in range(len(ana)):
            for col, i in enumerate(diff):
                if np.max(np.abs(ana[k][col] - again[k][col]), initial=0.0) > nondet_tol:
                    raise GradcheckError(
                        f"Backward is not reentrant, i.e., running backward with the same "
                        f"input and grad_output multiple times gives different values for "
                        f"input {i} (raise nondet_tol to accept this)")
    for k in range(len(num)):
        for col, i in enumerate(diff):
            n, a = num[k][col], ana[k][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n")


def _check_grad_dtypes(func, inputs, diff):
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if not outs:
        return
    gs = _grad(outs, [inputs[i] for i in diff],
               [Tensor._make(np.ones(o._data.shape, o._data.dtype)) for o in outs],
               allow_unused=True)
    for i, g in zip(diff, gs):
        if g is not None and g.dtype != inputs[i].dtype:
            raise GradcheckError(f"Gradient has dtype mismatch: input {i} has dtype "
                                 f"{inputs[i].dtype} but its gradient has dtype {g.dtype}")


def _check_undefined_grad(func, inputs, diff):
    """Undefined (None) output gradients must give None or zero input gradients: the
    backward is run with every output's gradient left out."""
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if not outs:
        return
    roots = [_root_edge(o, k) for k, o in enumerate(outs)]
    targets = [_root_edge(inputs[i], col) for col, i in enumerate(diff)]
    try:
        gs = _execute(roots, [None] * len(outs), False, False, targets, accumulate=False)
    except Exception as e:
        raise GradcheckError("Expected backward function to handle undefined output "
                             f"grads, but it raised {type(e).__name__}: {e}. Consider "
                             "check_undefined_grad=False if this is expected.") from e
    for i, g in zip(diff, gs):
        if g is not None and np.any(g._data != 0):
            raise GradcheckError(f"Expected all input grads to be undefined or zero when all "
                                 f"output grads are undefined, but input {i}'s is not "
                                 "(check_undefined_grad=False disables this check)")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: :func:`gradcheck` applied to the vector-Jacobian product.

    ``grad_outputs`` default to random float64 tensors that require grad, so the check
    covers the derivative with respect to them too.

    ``gen_non_contig_grad_outputs`` makes the generated ``grad_outputs`` non-contiguous;
    ``nondet_tol``, ``check_undefined_grad``, ``check_grad_dtypes``, ``fast_mode`` and
    ``raise_exception`` are passed to :func:`gradcheck`. ``check_rev_over_rev=False``
    skips the (reverse-over-reverse) check; ``check_fwd_over_rev`` and
    ``check_batched_grad`` need forward-mode AD and vmap and raise
    ``NotImplementedError`` for now.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.rand(3, dtype=numbagrad.float64, requires_grad=True)
    >>> numbagrad.autograd.gradgradcheck(numbagrad.tanh, (x,))
    True
    """
    _refuse_transform_checks("gradgradcheck", check_fwd_over_rev=check_fwd_over_rev,
                             check_batched_grad=check_batched_grad, masked=masked)
    if not check_rev_over_rev:
        return True
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_random_grad_output(rng, o, gen_non_contig_grad_outputs)
                             for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def vjp_fn(*args):
        ins, gos = args[:n_in], args[n_in:]
        out = _outputs(func, ins)
        wrt = [ins[i] for i in diff]
        pairs = [(o, g) for o, g in zip(out, gos) if o.requires_grad]
        if not pairs:
            raise GradcheckError("gradgradcheck: no output of func requires grad")
        gs = _grad([o for o, _ in pairs], wrt, [g for _, g in pairs], create_graph=True,
                   allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp_fn, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)


def _random_grad_output(rng, out, non_contiguous):
    """A random float tensor shaped like ``out`` that requires grad; with ``non_contiguous``
    a strided view (every other element of a buffer twice as long)."""
    values = rng.standard_normal(out._data.shape).astype(out._data.dtype)
    if non_contiguous and values.size > 1:
        buf = np.zeros((*values.shape[:-1], 2 * values.shape[-1]), values.dtype)
        buf[..., ::2] = values
        values = buf[..., ::2]
    return Tensor._make(values).requires_grad_(True)
