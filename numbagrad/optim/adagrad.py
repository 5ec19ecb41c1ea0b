"""Adagrad (``torch.optim.Adagrad``)."""

from __future__ import annotations

from numbagrad.optim import _functional as _fn
from numbagrad.optim.optimizer import Optimizer, _check_lr, _step_tensor, _zero_state

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (PyTorch's ``torch.optim.Adagrad``), Duchi et al., 2011.

    With gradient :math:`g` (negated when ``maximize``, plus :math:`\lambda\theta` with
    weight decay) at step :math:`t`: :math:`s \leftarrow s + g^2` and
    :math:`\theta \leftarrow \theta - \frac{\gamma}{1 + (t-1)\eta} \frac{g}{\sqrt{s} +
    \epsilon}`, :math:`\eta` being ``lr_decay``. The state is created for every parameter
    at construction, as in PyTorch.

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    lr_decay : float, default 0
        Learning-rate decay :math:`\eta`.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    initial_accumulator_value : float, default 0
        Starting value of the accumulated squares :math:`s`.
    eps : float, default 1e-10
        Added to the denominator for numerical stability.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``lr_decay``, ``weight_decay``, ``initial_accumulator_value``
        or ``eps``.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = numbagrad.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "maximize": maximize,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        """Step 0 and the accumulator filled with ``initial_accumulator_value``."""
        state = self.state[p]
        state["step"] = _step_tensor()
        state["sum"] = _zero_state(p)  # on p's device
        state["sum"]._data.fill(group["initial_accumulator_value"])

    def _update(self, p, state, group, lr):
        if len(state) == 0:  # a parameter of a group added after construction
            self._init_state(p, group)
        step_t = state["step"]
        step_t._data += 1
        _fn.adagrad_update(
            p._data,
            p.grad._data,
            state["sum"]._data,
            float(step_t._data),
            lr=lr,
            lr_decay=group["lr_decay"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )
