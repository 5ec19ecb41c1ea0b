"""Finite-difference checks of gradients: ``gradcheck`` and ``gradgradcheck``."""

from __future__ import annotations

import numpy as np

from numbagrad._tensor import Tensor
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
        x = inputs[i]._data
        flat = x.reshape(-1) if x.flags.c_contiguous else None
        if flat is None:
            raise GradcheckError(f"gradcheck needs contiguous inputs (input {i} is not)")
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            plus = [o._data.astype(np.float64).reshape(-1).copy()
                    for o in _outputs(func, inputs)]
            flat[j] = orig - eps
            minus = [o._data.astype(np.float64).reshape(-1).copy()
                     for o in _outputs(func, inputs)]
            flat[j] = orig
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

    Returns
    -------
    bool
        True when all Jacobians match.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.rand(3, dtype=numbagrad.float64, requires_grad=True)
    >>> numbagrad.autograd.gradcheck(numbagrad.sin, (x,))
    True
    """
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
    num = _numerical_jacobian(func, inputs, diff, eps)
    ana = _analytical_jacobian(func, inputs, diff)
    for k in range(len(num)):
        for col, i in enumerate(diff):
            n, a = num[k][col], ana[k][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: :func:`gradcheck` applied to the vector-Jacobian product.

    ``grad_outputs`` default to random float64 tensors that require grad, so the check
    covers the derivative with respect to them too.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.rand(3, dtype=numbagrad.float64, requires_grad=True)
    >>> numbagrad.autograd.gradgradcheck(numbagrad.tanh, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype))
            .requires_grad_(True) for o in outs)
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
                     raise_exception=raise_exception)
