"""Adadelta (``torch.optim.Adadelta``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import Optimizer, _check_lr, _step_tensor, _zero_state

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (PyTorch's ``torch.optim.Adadelta``), Zeiler, 2012.

    With gradient :math:`g` (negated when ``maximize``, plus :math:`\lambda\theta` with
    weight decay): :math:`v \leftarrow \rho v + (1-\rho) g^2`,
    :math:`\Delta \leftarrow \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}} g`,
    :math:`u \leftarrow \rho u + (1-\rho) \Delta^2` and
    :math:`\theta \leftarrow \theta - \gamma \Delta` (:math:`v` is the ``square_avg``
    state, :math:`u` the ``acc_delta`` state). Parameters from
    ``numbagrad.optim._functional.FUSED_MIN`` elements are updated by one fused kernel pass.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1.0
        Coefficient :math:`\gamma` that scales the delta before it is applied.
    rho : float, default 0.9
        Decay rate :math:`\rho` of the running averages, in [0, 1].
    eps : float, default 1e-6
        Added inside the square roots for numerical stability.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps`` or ``weight_decay``, or ``rho`` outside [0, 1].

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.Adadelta([w], lr=1.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9968, -1.9968], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _zero_state(p)
            state["acc_delta"] = _zero_state(p)
        state["step"]._data += 1
        _fn.adadelta_update(
            p._data,
            p.grad._data,
            state["square_avg"]._data,
            state["acc_delta"]._data,
            lr=lr,
            rho=group["rho"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )
