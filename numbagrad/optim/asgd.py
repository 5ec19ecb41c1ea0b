"""Averaged stochastic gradient descent (``torch.optim.ASGD``)."""

from __future__ import annotations

import numpy as np

from numbagrad._dtype import get_default_dtype
from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import Optimizer, _check_lr, _step_tensor, _zero_state

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent (PyTorch's ``torch.optim.ASGD``), Polyak and
    Juditsky, 1992.

    With gradient :math:`g` (negated when ``maximize``, plus :math:`\lambda_w\theta` with
    weight decay) at step :math:`t`, using the step size :math:`\eta` and averaging weight
    :math:`\mu` of the previous step (:math:`\eta_0 = \gamma`, :math:`\mu_0 = 1`):
    :math:`\theta \leftarrow \theta (1 - \lambda\eta) - \eta g`, the average
    :math:`a \leftarrow a + \mu (\theta - a)` (a copy of :math:`\theta` while
    :math:`\mu = 1`), then :math:`\eta \leftarrow \gamma / (1 + \lambda\gamma t)^\alpha`
    and :math:`\mu \leftarrow 1 / \max(1, t - t_0)`. The average is the ``ax`` state;
    ``eta`` and ``mu`` are 0-d state tensors, as in PyTorch. Parameters from
    ``numbagrad.optim._functional.FUSED_MIN`` elements are updated by one fused kernel pass.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    lambd : float, default 1e-4
        Decay term :math:`\lambda`.
    alpha : float, default 0.75
        Power :math:`\alpha` of the step-size schedule.
    t0 : float, default 1e6
        Step :math:`t_0` from which the parameters are averaged.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda_w`.
    maximize : bool, default False
        Maximize the objective instead of minimizing it (keyword-only here: PyTorch's
        positional ``foreach`` before it is not accepted).

    Raises
    ------
    ValueError
        For a negative ``lr`` or ``weight_decay``.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["eta"] = _step_tensor(lr)
            state["mu"] = _step_tensor(1.0)
            state["ax"] = _zero_state(p)
        step_t, eta_t, mu_t = state["step"], state["eta"], state["mu"]
        step_t._data += 1
        lambd = group["lambd"]
        _fn.asgd_update(
            p._data,
            p.grad._data,
            state["ax"]._data,
            float(eta_t._data),
            float(mu_t._data),
            lambd=lambd,
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )
        # PyTorch copies ``torch.as_tensor(value)``: rounded to the default dtype first,
        # even where a loaded state made ``eta`` and ``mu`` of the parameter's dtype
        step = float(step_t._data)
        rounded = np.dtype(get_default_dtype().np).type
        eta_t._data.fill(rounded(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        mu_t._data.fill(rounded(1 / max(1, step - group["t0"])))
