"""Resilient backpropagation (``torch.optim.Rprop``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import Optimizer, _check_lr, _step_tensor, _zero_state

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Resilient backpropagation (PyTorch's ``torch.optim.Rprop``), Riedmiller and Braun,
    1993: a per-element step size adapted from the signs of the gradients only.

    With gradient :math:`g` (negated when ``maximize``) and the previous one :math:`g'`
    (the ``prev`` state), each element's step size :math:`s` (the ``step_size`` state,
    starting at ``lr``) is multiplied by :math:`\eta_+` where :math:`g g' > 0`, by
    :math:`\eta_-` where :math:`g g' < 0` (and :math:`g` is then taken as 0), by 1
    elsewhere, and clamped to ``step_sizes``; then
    :math:`\theta \leftarrow \theta - \operatorname{sign}(g) s` and :math:`g' \leftarrow
    g`. Rprop takes no weight decay. Parameters from
    ``numbagrad.optim._functional.FUSED_MIN`` elements are updated by one fused kernel pass.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-2
        The initial step size.
    etas : tuple of float, default (0.5, 1.2)
        :math:`(\eta_-, \eta_+)`, with :math:`0 < \eta_- < 1 < \eta_+`.
    step_sizes : tuple of float, default (1e-6, 50)
        The smallest and the largest step size.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr`` or ``etas`` out of order.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.7800, -1.7800], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, p, state, group, lr):
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["prev"] = _zero_state(p)
            state["step_size"] = _zero_state(p)
            state["step_size"]._data.fill(lr)
        state["step"]._data += 1
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        _fn.rprop_update(
            p._data,
            p.grad._data,
            state["prev"]._data,
            state["step_size"]._data,
            etaminus=etaminus,
            etaplus=etaplus,
            step_size_min=step_size_min,
            step_size_max=step_size_max,
            maximize=group["maximize"],
        )
