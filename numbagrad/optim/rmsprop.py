"""RMSprop, plain, centred and with momentum (``torch.optim.RMSprop``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import (
    Optimizer,
    _check_lr,
    _step_tensor,
    _zero_state,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop (PyTorch's ``torch.optim.RMSprop``), Hinton's lecture 6e.

    With gradient :math:`g` (negated when ``maximize``, plus :math:`\lambda\theta` with
    weight decay): :math:`v \leftarrow \alpha v + (1-\alpha) g^2`; centred, also
    :math:`\bar g \leftarrow \alpha\bar g + (1-\alpha) g` and :math:`v - \bar g^2` replaces
    :math:`v` below; then :math:`\theta \leftarrow \theta - \gamma g / (\sqrt{v} +
    \epsilon)`, or with momentum :math:`b \leftarrow \mu b + g / (\sqrt{v} + \epsilon)`,
    :math:`\theta \leftarrow \theta - \gamma b`.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    alpha : float, default 0.99
        Smoothing constant :math:`\alpha`.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    centered : bool, default False
        Normalize by an estimate of the gradient's variance.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps``, ``momentum``, ``weight_decay`` or ``alpha``.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        momentum, centered = group["momentum"], group["centered"]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _zero_state(p)
            if momentum > 0:
                state["momentum_buffer"] = _zero_state(p)
            if centered:
                state["grad_avg"] = _zero_state(p)
        state["step"]._data += 1
        gavg = state["grad_avg"]._data if centered else None
        buf = state["momentum_buffer"]._data if momentum > 0 else None
        _fn.rmsprop_update(
            p._data,
            p.grad._data,
            state["square_avg"]._data,
            gavg,
            buf,
            lr=lr,
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum=momentum,
            centered=centered,
            maximize=group["maximize"],
        )
