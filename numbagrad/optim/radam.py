"""RAdam, Adam with a rectified adaptive learning rate (``torch.optim.RAdam``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import (
    Optimizer,
    _check_betas,
    _check_lr,
    _step_tensor,
    _zero_state,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam (PyTorch's ``torch.optim.RAdam``), Liu et al., 2019: Adam whose adaptive
    step is switched on only once the variance of its estimate is bounded.

    With gradient :math:`g` (negated when ``maximize``; weight decay adds
    :math:`\lambda\theta` to it, or with ``decoupled_weight_decay`` multiplies
    :math:`\theta` by :math:`1 - \gamma\lambda` first) at step :math:`t`:
    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`, :math:`\hat m = m / (1-\beta_1^t)`,
    :math:`\rho_\infty = 2/(1-\beta_2) - 1` and
    :math:`\rho_t = \rho_\infty - 2t\beta_2^t/(1-\beta_2^t)`. When :math:`\rho_t > 5`,

    .. math::

        \theta \leftarrow \theta - \gamma \hat m \frac{\sqrt{1-\beta_2^t}}{\sqrt{v} +
        \epsilon} \sqrt{\frac{(\rho_t-4)(\rho_t-2)\rho_\infty}
        {(\rho_\infty-4)(\rho_\infty-2)\rho_t}},

    else :math:`\theta \leftarrow \theta - \gamma \hat m` (SGD with momentum). Parameters
    from ``numbagrad.optim._functional.FUSED_MIN`` elements are updated by one fused kernel
    pass.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2` of the running averages.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`.
    decoupled_weight_decay : bool, default False
        Decay the parameter directly (as AdamW) instead of adding to the gradient.
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
    >>> opt = numbagrad.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
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
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        beta1, beta2 = group["betas"]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _zero_state(p)
            state["exp_avg_sq"] = _zero_state(p)
        step_t = state["step"]
        step_t._data += 1
        _fn.radam_update(
            p._data,
            p.grad._data,
            state["exp_avg"]._data,
            state["exp_avg_sq"]._data,
            float(step_t._data),
            lr=lr,
            beta1=float(beta1),
            beta2=float(beta2),
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled=group["decoupled_weight_decay"],
            maximize=group["maximize"],
        )
