"""NAdam, Adam with Nesterov momentum (``torch.optim.NAdam``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import (
    Optimizer,
    _check_betas,
    _check_lr,
    _step_tensor,
    _zero_state,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam (PyTorch's ``torch.optim.NAdam``), Dozat, 2016: Adam with Nesterov momentum.

    With gradient :math:`g` (negated when ``maximize``; weight decay adds
    :math:`\lambda\theta` to it, or with ``decoupled_weight_decay`` multiplies
    :math:`\theta` by :math:`1 - \gamma\lambda` first, as AdamW) at step :math:`t`: the
    momentum schedule :math:`\mu_t = \beta_1 (1 - \frac12 0.96^{t\psi})` (:math:`\psi` is
    ``momentum_decay``), its running product :math:`\Pi_t = \prod_{i \le t} \mu_i` (the
    ``mu_product`` state), :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`, :math:`d = \sqrt{v / (1-\beta_2^t)}
    + \epsilon` and

    .. math::

        \theta \leftarrow \theta - \gamma \frac{1-\mu_t}{1-\Pi_t} \frac{g}{d}
        - \gamma \frac{\mu_{t+1}}{1-\Pi_t\mu_{t+1}} \frac{m}{d}.

    Parameters from ``numbagrad.optim._functional.FUSED_MIN`` elements are updated by one
    fused kernel pass.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 2e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2` of the running averages.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`.
    momentum_decay : float, default 4e-3
        :math:`\psi` of the momentum schedule.
    decoupled_weight_decay : bool, default False
        Decay the parameter directly (NAdamW) instead of adding to the gradient.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps``, ``weight_decay`` or ``momentum_decay``, or a beta
        outside [0, 1).

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
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
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        beta1, beta2 = group["betas"]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["mu_product"] = _step_tensor(1.0)
            state["exp_avg"] = _zero_state(p)
            state["exp_avg_sq"] = _zero_state(p)
        step_t = state["step"]
        step_t._data += 1
        _fn.nadam_update(
            p._data,
            p.grad._data,
            state["exp_avg"]._data,
            state["exp_avg_sq"]._data,
            state["mu_product"]._data,
            float(step_t._data),
            lr=lr,
            beta1=float(beta1),
            beta2=float(beta2),
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum_decay=group["momentum_decay"],
            decoupled=group["decoupled_weight_decay"],
            maximize=group["maximize"],
        )
