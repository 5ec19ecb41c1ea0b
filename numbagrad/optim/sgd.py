"""Stochastic gradient descent, with momentum and Nesterov momentum (``torch.optim.SGD``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import Optimizer, _check_lr, _zero_state

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (PyTorch's ``torch.optim.SGD``).

    With gradient :math:`g` (negated when ``maximize``) each step computes
    :math:`g \leftarrow g + \lambda\theta` (weight decay), then with momentum
    :math:`b \leftarrow \mu b + (1 - \tau) g` (:math:`b = g` at the first step) and
    :math:`g \leftarrow g + \mu b` (Nesterov) or :math:`g \leftarrow b`, and finally
    :math:`\theta \leftarrow \theta - \gamma g`.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    dampening : float, default 0
        Dampening :math:`\tau` of the momentum.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    nesterov : bool, default False
        Use Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``momentum`` or ``weight_decay``, or Nesterov without
        momentum or with dampening.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.4600, -0.9200], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        momentum = group["momentum"]
        buf, first = None, False
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf, first = _zero_state(p), True
                state["momentum_buffer"] = buf
            buf = buf._data
        _fn.sgd_update(
            p._data,
            p.grad._data,
            buf,
            first,
            lr=lr,
            weight_decay=group["weight_decay"],
            momentum=momentum,
            dampening=group["dampening"],
            nesterov=group["nesterov"],
            maximize=group["maximize"],
        )
