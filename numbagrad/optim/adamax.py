"""Adamax, Adam with the infinity norm (``torch.optim.Adamax``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import (
    Optimizer,
    _check_betas,
    _check_lr,
    _step_tensor,
    _zero_state,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (PyTorch's ``torch.optim.Adamax``), the infinity-norm variant of Adam
    (Kingma and Ba, 2014).

    With gradient :math:`g` (negated when ``maximize``, plus :math:`\lambda\theta` with
    weight decay) at step :math:`t`: :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`u \leftarrow \max(\beta_2 u, |g| + \epsilon)` and
    :math:`\theta \leftarrow \theta - \frac{\gamma}{1-\beta_1^t} \frac{m}{u}` (:math:`m`
    is the ``exp_avg`` state, :math:`u` the ``exp_inf`` state). Parameters from
    ``numbagrad.optim._functional.FUSED_MIN`` elements are updated by one fused kernel pass.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 2e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2` of the first moment and of the infinity norm.
    eps : float, default 1e-8
        Added to :math:`|g|` for numerical stability.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside [0, 1).

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        beta1, beta2 = group["betas"]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _zero_state(p)
            state["exp_inf"] = _zero_state(p)
        step_t = state["step"]
        step_t._data += 1
        _fn.adamax_update(
            p._data,
            p.grad._data,
            state["exp_avg"]._data,
            state["exp_inf"]._data,
            float(step_t._data),
            lr=lr,
            beta1=float(beta1),
            beta2=float(beta2),
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )
