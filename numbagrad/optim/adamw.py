"""Adam with decoupled weight decay (``torch.optim.AdamW``)."""

from __future__ import annotations

from numbagrad.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW (PyTorch's ``torch.optim.AdamW``), Loshchilov and Hutter, 2019.

    Adam whose weight decay shrinks the parameter directly,
    :math:`\theta \leftarrow \theta (1 - \gamma\lambda)`, before the Adam update, instead
    of being added to the gradient (so it does not pass through the moment estimates).

    Parameters
    ----------
    params : iterable
        Tensors to optimize or dicts defining parameter groups.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        Decay rates of the running averages.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 1e-2
        Decoupled weight decay :math:`\lambda`.
    amsgrad : bool, default False
        Use the maximum of the past second moments.
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
    >>> opt = numbagrad.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8500, -1.8000], requires_grad=True)
    """

    _decoupled = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
