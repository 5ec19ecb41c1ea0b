"""Finite-difference checks of gradients: ``gradcheck`` and ``gradgradcheck``.

Reverse mode is checked through ``autograd.grad``, forward mode through
``autograd.forward_ad`` (``make_dual``/``unpack_dual``), and the batched checks run both
under vmap against a loop, modelled on PyTorch's ``torch.autograd.gradcheck`` (its checks,
order and messages; no complex or sparse inputs). As PyTorch's, the batched checks batch
only the cotangents and tangents, under its legacy vmap (``legacy_vmap``, NOTE [Functions
under transforms]): a custom Function's staticmethods run as they are on them, whatever its
style, and its ``vmap`` rule is never called. Forward over reverse (``gradgradcheck``)
differentiates ``autograd.grad(..., create_graph=True)`` on dual inputs made to require
grad, as PyTorch's does (the eager nodes save the duals, NOTE [Forward-over-reverse in a
dual level]).
"""

from __future__ import annotations

import warnings

import numpy as np

from numbagrad._tensor import Tensor
from numbagrad._transforms.forward import DualTracer
from numbagrad._transforms.tracer import np_dtype_of
from numbagrad.autograd import forward_ad as fwAD
from numbagrad.autograd._function_transforms import legacy_vmap as _vmap
from numbagrad.autograd.engine import _execute, _root_edge
from numbagrad.autograd.engine import grad as _grad
from numbagrad.ops import cplx

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
            plus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            x[idx] = orig - eps
            minus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
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
            gs = _grad(
                o, wrt, Tensor._make(e.reshape(o._data.shape)), retain_graph=True, allow_unused=True
            )
            for col, g in enumerate(gs):
                if g is not None:
                    if g._data.shape != inputs[diff[col]]._data.shape:
                        raise GradcheckError(
                            f"gradient with respect to input {diff[col]} has shape "
                            f"{list(g.shape)}, expected {list(inputs[diff[col]].shape)}"
                        )
                    jac[k][col][r, :] = g._data.astype(np.float64).reshape(-1)
    return jac


def _refuse_masked(fname, masked):
    if masked:
        raise NotImplementedError(
            f"{fname}(masked=True) is for sparse tensors, which numbagrad does not have"
        )


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
        return sum(
            float(np.sum(o._data.astype(np.float64) * v))
            for o, v in zip(_outputs(func, inputs), vs)
        )

    try:
        numerical = (shifted(eps) - shifted(-eps)) / (2 * eps)
    finally:
        for i, x0 in zip(diff, saved):
            inputs[i]._data[...] = x0

    def analytical():
        pairs = [(o, v) for o, v in zip(_outputs(func, inputs), vs) if o.requires_grad]
        if not pairs:
            return 0.0
        gs = _grad(
            [o for o, _ in pairs],
            [inputs[i] for i in diff],
            [Tensor._make(v.astype(o._data.dtype)) for o, v in pairs],
            allow_unused=True,
        )
        return sum(
            float(np.sum(g._data.astype(np.float64) * u)) for g, u in zip(gs, us) if g is not None
        )

    a = analytical()
    if nondet_tol is not None and abs(analytical() - a) > nondet_tol:
        raise GradcheckError(
            "Backward is not reentrant: two runs of the backward gave "
            "different results (raise nondet_tol to accept this)"
        )
    if abs(a - numerical) > atol + rtol * abs(numerical):
        raise GradcheckError(
            "Jacobian mismatch in a random direction (fast_mode=True): "
            f"numerical v^T J u = {numerical!r}, analytical = {a!r}. Run with "
            "fast_mode=False to see the full Jacobians."
        )


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_batched_forward_grad=False,
    check_forward_ad=False,
    check_backward_ad=True,
    fast_mode=False,
    masked=None,
):
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
        None or zeros; with ``check_forward_ad``, also that an input without a tangent
        gives the same output tangents as one with a zero tangent.
    check_grad_dtypes : bool, default False
        Also check that each gradient has its input's dtype.
    check_batched_grad : bool, default False
        Check that the backward can be vmapped: ``autograd.grad`` of each output under
        vmap over a batch of two random cotangents must equal the two separate calls
        (needs ``check_backward_ad``). As in PyTorch (its legacy vmap), only the
        cotangents are batched: a custom Function's ``backward`` runs as it is on them (it
        must be written with vmappable ops), and its ``vmap`` rule is not used.
    check_batched_forward_grad : bool, default False
        The same for forward mode: the output tangents under vmap over a batch of two
        random input tangents must equal the two separate forward passes (needs
        ``check_forward_ad``). Only the tangents are batched: a custom Function's
        ``forward`` runs on the unbatched inputs and its ``jvp`` on the batched tangents,
        in either style (``setup_context`` or ``forward(ctx, ...)``), as in PyTorch.
    check_forward_ad : bool, default False
        Check the Jacobian computed by forward mode (``forward_ad.make_dual`` with one
        basis tangent per input element, ``unpack_dual`` of the outputs) against the
        numerical one.
    check_backward_ad : bool, default True
        Check the Jacobian computed by reverse mode (``autograd.grad`` with one basis
        cotangent per output element) against the numerical one. ``False`` also skips
        ``check_batched_grad`` and the backward's undefined-gradient check.
    fast_mode : bool, default False
        Compare Jacobian-vector products in one random direction instead of whole
        Jacobians: ``v^T J u`` for reverse mode, ``J u`` per input for forward mode.
    masked : bool, optional
        For sparse tensors, which numbagrad does not have: ``True`` raises
        ``NotImplementedError``.

    Returns
    -------
    bool
        True when all checks pass (False on a mismatch when ``raise_exception`` is False).

    Raises
    ------
    GradcheckError
        On a mismatch, when ``raise_exception`` is True.
    AssertionError
        When neither ``check_forward_ad`` nor ``check_backward_ad`` is set, or a batched
        check is asked for without its mode (as in PyTorch).
    ValueError
        When no input requires grad.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.rand(3, dtype=numbagrad.float64, requires_grad=True)
    >>> numbagrad.autograd.gradcheck(numbagrad.sin, (x,))
    True
    >>> numbagrad.autograd.gradcheck(numbagrad.sin, (x,), check_forward_ad=True,
    ...                              check_batched_grad=True, check_batched_forward_grad=True)
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    _refuse_masked("gradcheck", masked)
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True."
        )
    for i in diff:
        if inputs[i].dtype.np not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point. This check will likely fail if all the inputs are not of "
                "double precision floating point.",
                stacklevel=2,
            )
    func, inputs = _realified(func, inputs, diff)
    try:
        _gradcheck_helper(
            func,
            inputs,
            diff,
            eps,
            atol,
            rtol,
            nondet_tol,
            check_undefined_grad,
            check_grad_dtypes,
            check_batched_grad,
            check_batched_forward_grad,
            check_forward_ad,
            check_backward_ad,
            fast_mode,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _realified(func, inputs, diff):
    """``func`` and ``inputs`` as a function of real tensors when a differentiable input or
    an output is complex: each complex input becomes its ``view_as_real`` (a new float leaf
    whose ``view_as_complex`` is what ``func`` receives) and each complex output its
    ``view_as_real``. The Jacobians of that real function are the complex function's
    derivatives with respect to the real and imaginary parts, i.e. both of its Wirtinger
    derivatives, so checking them checks PyTorch's complex gradients (and forward
    tangents) as PyTorch's complex gradcheck does."""
    cx = [i for i in diff if inputs[i].is_complex()]
    if not cx:
        outs = _as_tuple(func(*inputs))
        if not any(isinstance(o, Tensor) and o.is_complex() for o in outs):
            return func, inputs
    new_inputs = list(inputs)
    for i in cx:
        z = inputs[i]
        new_inputs[i] = cplx.view_as_real(z.detach().contiguous()).clone().requires_grad_(True)

    def real_func(*args):
        args = list(args)
        for i in cx:
            args[i] = cplx.view_as_complex(args[i])
        out = func(*args)
        outs = [
            cplx.view_as_real(o.contiguous()) if isinstance(o, Tensor) and o.is_complex() else o
            for o in _as_tuple(out)
        ]
        return tuple(outs) if isinstance(out, (tuple, list)) else outs[0]

    return real_func, tuple(new_inputs)


def _gradcheck_helper(
    func,
    inputs,
    diff,
    eps,
    atol,
    rtol,
    nondet_tol,
    check_undefined_grad,
    check_grad_dtypes,
    check_batched_grad,
    check_batched_forward_grad,
    check_forward_ad,
    check_backward_ad,
    fast_mode,
):
    """The checks in PyTorch's order: reverse-mode Jacobian, forward-mode Jacobian (and its
    undefined-tangent check), batched forward grad, batched grad, the rest of reverse mode."""
    num = None
    if not fast_mode:
        num = _numerical_jacobian(func, inputs, diff, eps)  # shared by both modes
    if check_backward_ad:
        if fast_mode:
            _directional_check(func, inputs, diff, eps, atol, rtol, nondet_tol)
        else:
            _full_check(func, inputs, diff, atol, rtol, nondet_tol, num)
    if check_forward_ad:
        if fast_mode:
            _fast_forward_check(func, inputs, diff, eps, atol, rtol, check_grad_dtypes)
        else:
            _forward_check(func, inputs, diff, atol, rtol, num, check_grad_dtypes)
        if check_undefined_grad:
            _check_undefined_forward(func, inputs, diff)
    if check_batched_forward_grad:
        _check_batched_forward_grad(func, inputs, diff)
    if not check_backward_ad:
        return
    if check_batched_grad:
        _check_batched_grad(func, inputs, diff)
    if check_grad_dtypes:
        _check_grad_dtypes(func, inputs, diff)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs, diff)


def _full_check(func, inputs, diff, atol, rtol, nondet_tol, num):
    ana = _analytical_jacobian(func, inputs, diff)
    if nondet_tol is not None:
        again = _analytical_jacobian(func, inputs, diff)
        for k in range(len(ana)):
            for col, i in enumerate(diff):
                if np.max(np.abs(ana[k][col] - again[k][col]), initial=0.0) > nondet_tol:
                    raise GradcheckError(
                        f"Backward is not reentrant, i.e., running backward with the same "
                        f"input and grad_output multiple times gives different values for "
                        f"input {i} (raise nondet_tol to accept this)"
                    )
    for k in range(len(num)):
        for col, i in enumerate(diff):
            n, a = num[k][col], ana[k][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )


def _check_grad_dtypes(func, inputs, diff):
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if not outs:
        return
    gs = _grad(
        outs,
        [inputs[i] for i in diff],
        [Tensor._make(np.ones(o._data.shape, o._data.dtype)) for o in outs],
        allow_unused=True,
    )
    for i, g in zip(diff, gs):
        if g is not None and g.dtype != inputs[i].dtype:
            raise GradcheckError(
                f"Gradient has dtype mismatch: input {i} has dtype "
                f"{inputs[i].dtype} but its gradient has dtype {g.dtype}"
            )


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
        raise GradcheckError(
            "Expected backward function to handle undefined output "
            f"grads, but it raised {type(e).__name__}: {e}. Consider "
            "check_undefined_grad=False if this is expected."
        ) from e
    for i, g in zip(diff, gs):
        if g is not None and np.any(g._data != 0):
            raise GradcheckError(
                f"Expected all input grads to be undefined or zero when all "
                f"output grads are undefined, but input {i}'s is not "
                "(check_undefined_grad=False disables this check)"
            )


# -- forward mode ------------------------------------------------------------------------
def _dual_outputs(func, inputs, diff, tangents, check_grad_dtypes=False):
    """Run ``func`` under a forward AD level with ``inputs[i]`` (``i`` in ``diff``) made dual
    with ``tangents`` (arrays; None leaves that input a plain tensor); return each float
    output's tangent as a flat float64 array (zeros where it has none)."""
    with fwAD.dual_level():
        args = list(inputs)
        for i, t in zip(diff, tangents):
            x = inputs[i].detach()
            args[i] = x if t is None else fwAD.make_dual(x, Tensor._make(t))
        res = []
        for o in _outputs(func, args):
            val, tan = fwAD.unpack_dual(o)
            if tan is None:
                res.append(np.zeros(val.numel()))
                continue
            if check_grad_dtypes and np_dtype_of(tan).kind != np_dtype_of(val).kind:
                raise GradcheckError("Forward AD gradient has dtype mismatch.")
            res.append(np.asarray(tan._data, np.float64).reshape(-1))
    return res


def _zero_tangents(inputs, diff):
    return [np.zeros(inputs[i]._data.shape, inputs[i]._data.dtype) for i in diff]


def _forward_jacobian(func, inputs, diff, check_grad_dtypes=False):
    """The Jacobian by forward mode, one column per input element: every differentiable
    input is dual, with a zero tangent except the one basis element (as PyTorch)."""
    n_out = [o.numel() for o in _outputs(func, inputs)]
    jac = [[np.zeros((m, inputs[i].numel())) for i in diff] for m in n_out]
    for col, i in enumerate(diff):
        shape = inputs[i]._data.shape
        for j, idx in enumerate(np.ndindex(shape)):
            tangents = _zero_tangents(inputs, diff)
            tangents[col][idx] = 1
            tans = _dual_outputs(func, inputs, diff, tangents, check_grad_dtypes)
            if len(tans) != len(jac):
                raise GradcheckError(
                    f"func returned {len(tans)} floating point outputs under "
                    f"forward AD but {len(jac)} without it"
                )
            for k, t in enumerate(tans):
                jac[k][col][:, j] = t
    return jac


def _forward_check(func, inputs, diff, atol, rtol, num, check_grad_dtypes):
    ana = _forward_jacobian(func, inputs, diff, check_grad_dtypes)
    for k in range(len(num)):
        for col, i in enumerate(diff):
            n, a = num[k][col], ana[k][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {k} with respect "
                    f"to input {i},\nnumerical:{n}\nanalytical:{a}\n"
                )


def _numerical_jvp(func, inputs, i, u, eps):
    """Central differences of every float output along direction ``u`` of input ``i``."""
    x = inputs[i]._data
    x0 = x.copy()
    try:
        x[...] = x0 + eps * u
        plus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
        x[...] = x0 - eps * u
        minus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
    finally:
        x[...] = x0
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _random_directions(inputs, diff):
    """PyTorch's fast-mode ``u``: one uniform random unit vector per input."""
    rng = np.random.default_rng(0)
    us = []
    for i in diff:
        u = rng.random(inputs[i]._data.shape)
        norm = np.linalg.norm(u)
        us.append(u / norm if norm else u)
    return us


def _fast_forward_check(func, inputs, diff, eps, atol, rtol, check_grad_dtypes):
    """``fast_mode`` for forward AD: ``J u`` for a random ``u`` per input, by one forward
    pass with tangent ``u`` and by central differences along ``u``; the tolerance ``atol``
    is scaled by ``sum(u)`` (PyTorch's ``_adjusted_atol``)."""
    us = _random_directions(inputs, diff)
    for col, (i, u) in enumerate(zip(diff, us)):
        numerical = _numerical_jvp(func, inputs, i, u, eps)
        tangents = _zero_tangents(inputs, diff)
        tangents[col] = u.astype(inputs[i]._data.dtype)
        analytical = _dual_outputs(func, inputs, diff, tangents, check_grad_dtypes)
        for k, (n, a) in enumerate(zip(numerical, analytical)):
            if np.allclose(a, n, rtol=rtol, atol=atol * float(u.sum()), equal_nan=False):
                continue
            slow_n = _numerical_jacobian(func, inputs, diff, eps)[k][col]
            slow_a = _forward_jacobian(func, inputs, diff)[k][col]
            slow_ok = np.allclose(slow_a, slow_n, rtol=rtol, atol=atol)
            raise GradcheckError(
                f"Jacobian computed with forward mode mismatch for output {k} with respect to "
                f"input {i},\nnumerical:{n}\nanalytical:{a}\n\nThe above quantities are J u "
                f"for a random direction u (fast_mode=True). The full Jacobians (slow mode):"
                f"\n\nNumerical:\n {slow_n}\nAnalytical:\n{slow_a}\n\nThe max per-element "
                f"difference (slow mode) is: {np.max(np.abs(slow_n - slow_a), initial=0.0)}.\n"
                + (
                    "Fast gradcheck failed but element-wise differences are small: the check "
                    "passes with fast_mode=False."
                    if slow_ok
                    else ""
                )
            )


def _check_undefined_forward(func, inputs, diff):
    """PyTorch's ``_test_undefined_forward_mode``: with the other inputs dual (random
    tangents), an input with no tangent at all must give the same output tangents as the
    same input with a materialized zero tangent."""
    us = [u.astype(inputs[i]._data.dtype) for i, u in zip(diff, _random_directions(inputs, diff))]
    for col, i in enumerate(diff):
        zero = list(us)
        zero[col] = np.zeros_like(us[col])
        absent = list(us)
        absent[col] = None
        with_zero = _dual_outputs(func, inputs, diff, zero)
        without = _dual_outputs(func, inputs, diff, absent)
        for k, (r1, r2) in enumerate(zip(with_zero, without)):
            if not np.allclose(r1, r2, rtol=1e-5, atol=1e-8):
                raise GradcheckError(
                    f"Mismatch in tangent values for output with index: {k} when input {i} has "
                    f"an undefined tangent value. Got: {r1} but expected: {r2} (the output "
                    "tangents with a zero tangent for that input). check_undefined_grad=False "
                    "disables this check."
                )


# -- batched gradients (vmap) ------------------------------------------------------------
_FAILED_BATCHED_GRAD_MSG = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation: "
    "autograd.grad under vmap (over a batch of two cotangents) disagrees with "
    "two separate calls, or raised. To compute batched gradients (jacobians, hessians) "
    "numbagrad vmaps the backward: every VJP rule on the way (a custom Function's backward "
    "included) must be written with numbagrad ops that vmap supports, without NumPy "
    "arrays, .item() or data-dependent Python control flow. Call gradcheck/gradgradcheck "
    "with check_batched_grad=False to skip this check."
)

_FAILED_BATCHED_GRAD_MSG_FWD_AD = (
    "gradcheck failed while testing batched gradient computation with forward-mode AD: the "
    "output tangents under vmap (over a batch of two input tangents) disagree with two "
    "separate forward passes, or raised. Every JVP rule on the way (a custom Function's jvp "
    "included) must be written with numbagrad ops that vmap supports, without NumPy arrays, "
    ".item() or data-dependent Python control flow. Call gradcheck with "
    "check_batched_forward_grad=False to skip this check."
)


def _failed_batched_msg(output_idx, input_idx, res, exp, fwd):
    return (
        f"For output {output_idx} and input {input_idx}:\n\n"
        f"{_FAILED_BATCHED_GRAD_MSG_FWD_AD if fwd else _FAILED_BATCHED_GRAD_MSG}\n\n"
        f"Got:\n{res}\n\nExpected:\n{exp}"
    )


def _stack(ts):
    return Tensor._make(np.stack([t._data for t in ts]))


def _close(res, exp):
    """``torch.allclose`` with its default tolerances."""
    return res.shape == exp.shape and np.allclose(res._data, exp._data, rtol=1e-5, atol=1e-8)


def _check_batched_forward_grad(func, inputs, diff):
    """PyTorch's ``_test_batched_grad_forward_ad``: for each differentiable input, the
    output tangents of ``vmap`` over two random tangents against two forward passes."""
    rng = np.random.default_rng(1)
    for i in diff:
        x = inputs[i]
        if x._data.dtype.kind != "f":
            continue

        def jvp(tangent, i=i):
            with fwAD.dual_level():
                args = [a.detach() if isinstance(a, Tensor) else a for a in inputs]
                args[i] = fwAD.make_dual(inputs[i].detach(), tangent)
                res = []
                for o in _as_tuple(func(*args)):
                    if not isinstance(o, Tensor):
                        continue
                    primal, tan = fwAD.unpack_dual(o)
                    res.append(
                        tan
                        if tan is not None
                        else Tensor._make(np.zeros((), np_dtype_of(primal))).expand(primal.shape)
                    )
                return tuple(res)

        tangents = [
            Tensor._make(rng.standard_normal(x._data.shape).astype(x._data.dtype)) for _ in range(2)
        ]
        expected = [_stack(shards) for shards in zip(*[jvp(t) for t in tangents])]
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="There is a performance drop")
                result = _vmap(jvp)(_stack(tangents))
        except RuntimeError as ex:
            raise GradcheckError(
                f"While computing batched gradients, got: {ex}\n\n{_FAILED_BATCHED_GRAD_MSG_FWD_AD}"
            ) from ex
        for k, (res, exp) in enumerate(zip(result, expected)):
            if not _close(res, exp):
                raise GradcheckError(_failed_batched_msg(k, i, res, exp, True))


def _check_batched_grad(func, inputs, diff):
    """PyTorch's ``_test_batched_grad``: for each output that requires grad, ``vmap`` of
    ``autograd.grad`` over two random cotangents against two separate calls."""
    rng = np.random.default_rng(2)
    wrt = [inputs[i] for i in diff]
    outs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
    for k, out in enumerate(outs):

        def vjp(v, out=out):
            gs = _grad(out, wrt, v, retain_graph=True, allow_unused=True)
            return tuple(
                g if g is not None else Tensor._make(np.zeros((), x._data.dtype)).expand(x.shape)
                for g, x in zip(gs, wrt)
            )

        gos = [
            Tensor._make(rng.standard_normal(out._data.shape).astype(out._data.dtype))
            for _ in range(2)
        ]
        expected = [_stack(shards) for shards in zip(*[vjp(g) for g in gos])]
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="There is a performance drop")
                result = _vmap(vjp)(_stack(gos))
        except RuntimeError as ex:
            raise GradcheckError(
                f"While computing batched gradients, got: {ex}\n\n{_FAILED_BATCHED_GRAD_MSG}"
            ) from ex
        for col, (res, exp) in enumerate(zip(result, expected)):
            if not _close(res, exp):
                raise GradcheckError(_failed_batched_msg(k, diff[col], res, exp, False))


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_fwd_over_rev=False,
    check_rev_over_rev=True,
    fast_mode=False,
    masked=False,
):
    """Check second derivatives: :func:`gradcheck` applied to the vector-Jacobian product.

    The function checked is ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs,
    grad_outputs, create_graph=True)``; ``grad_outputs`` default to random float64
    tensors that require grad, so the check covers the derivative with respect to them too.

    Parameters
    ----------
    func : callable
        Takes the inputs, returns a tensor or a tuple of tensors.
    inputs : Tensor or tuple
    grad_outputs : Tensor or tuple, optional
        The cotangents of ``func``'s outputs that require grad.
    gen_non_contig_grad_outputs : bool, default False
        Make the generated ``grad_outputs`` non-contiguous.
    eps, atol, rtol, raise_exception, nondet_tol, check_grad_dtypes, fast_mode
        Passed to :func:`gradcheck`.
    check_undefined_grad : bool, default True
        Passed to :func:`gradcheck`; needs ``check_rev_over_rev``.
    check_batched_grad : bool, default False
        :func:`gradcheck`'s ``check_batched_grad`` on the vector-Jacobian product: the double
        backward under ``vmap`` (needs ``check_rev_over_rev``).
    check_fwd_over_rev : bool, default False
        Check the forward-mode derivative of the vector-Jacobian product (forward over
        reverse: :func:`gradcheck` with ``check_forward_ad``) against finite differences:
        the product is ``autograd.grad(..., create_graph=True)`` on the dual inputs, so a
        custom ``Function``'s ``backward`` is differentiated by forward mode (its ops' and
        the ``jvp`` of Functions it applies), in either style, as in PyTorch.
    check_rev_over_rev : bool, default True
        Check the reverse-mode derivative of the vector-Jacobian product (double backward).
    masked : bool, default False
        ``True`` raises ``NotImplementedError`` (sparse tensors).

    Returns
    -------
    bool

    Raises
    ------
    GradcheckError
        On a mismatch, when ``raise_exception`` is True.
    AssertionError
        For flag combinations PyTorch refuses (no mode; ``check_undefined_grad`` or
        ``check_batched_grad`` without ``check_rev_over_rev``).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.rand(3, dtype=numbagrad.float64, requires_grad=True)
    >>> numbagrad.autograd.gradgradcheck(numbagrad.tanh, (x,))
    True
    >>> numbagrad.autograd.gradgradcheck(numbagrad.tanh, (x,), check_fwd_over_rev=True,
    ...                                  check_batched_grad=True)
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    _refuse_masked("gradgradcheck", masked)
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    # which of func's outputs are differentiated (the forward-AD path cannot ask a traced
    # output whether it requires grad)
    outs = _as_tuple(func(*inputs))
    out_idx = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _random_grad_output(rng, outs[k], gen_non_contig_grad_outputs) for k in out_idx
        )
    del outs
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def eager_vjp(ins, gos):
        ins = tuple(
            x
            if i not in diff or x.requires_grad
            else (x.requires_grad_() if _has_dual((x,)) else x.detach().requires_grad_())
            for i, x in enumerate(ins)
        )
        out = _as_tuple(func(*ins))
        if not out_idx:
            raise GradcheckError("gradgradcheck: no output of func requires grad")
        return _grad(
            [out[k] for k in out_idx],
            [ins[i] for i in diff],
            list(gos),
            create_graph=True,
            allow_unused=True,
        )

    used = [g is not None for g in eager_vjp(inputs, grad_outputs)]

    def vjp_fn(*args):
        ins, gos = args[:n_in], args[n_in:]
        gs = eager_vjp(ins, gos)
        return tuple(g for g, u in zip(gs, used) if u)

    return gradcheck(
        vjp_fn,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )


def _has_dual(args):
    """Whether ``args`` hold a live forward-AD dual (gradcheck's forward-mode Jacobian)."""
    for a in args:
        if type(a) is DualTracer and a._interp.alive:
            return True
    return False


def _random_grad_output(rng, out, non_contiguous):
    """A random float tensor shaped like ``out`` that requires grad; with ``non_contiguous``
    a strided view (every other element of a buffer twice as long)."""
    values = rng.standard_normal(out._data.shape).astype(out._data.dtype)
    if values.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(out._data.shape).astype(out._data.dtype)
    if non_contiguous and values.size > 1:
        buf = np.zeros((*values.shape[:-1], 2 * values.shape[-1]), values.dtype)
        buf[..., ::2] = values
        values = buf[..., ::2]
    return Tensor._make(values).requires_grad_(True)
