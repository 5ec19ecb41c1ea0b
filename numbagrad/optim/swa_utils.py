"""Stochastic weight averaging and exponential moving averages of a model
(``torch.optim.swa_utils``): :class:`AveragedModel`, the :class:`SWALR` schedule,
:func:`update_bn` and the averaging functions.

The averages follow PyTorch's formulas operation by operation: the default SWA running
mean ``avg + (p - avg) / (n + 1)`` (PyTorch's CPU path; a CUDA parameter takes its
``lerp`` path with the weight ``1 / (n + 1)`` in the default dtype), and the ``multi``
functions ``lerp`` every floating tensor in place as ``torch._foreach_lerp_`` does.
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import tensor
from numbagrad._dtype import int64
from numbagrad.nn import Module
from numbagrad.optim.lr_scheduler import LRScheduler, _format_param

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay=0.999):
    """An exponential moving average over lists of tensors, updated in place:
    ``ema.lerp_(p, 1 - decay)`` for floating tensors.

    Parameters
    ----------
    decay : float, default 0.999
        In [0, 1].

    Returns
    -------
    callable
        ``fn(ema_list, param_list, num_averaged)``, for ``AveragedModel(multi_avg_fn=)``.

    Raises
    ------
    ValueError
        For a decay outside [0, 1].

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import get_ema_multi_avg_fn
    >>> ema, p = [numbagrad.zeros(2)], [numbagrad.ones(2)]
    >>> get_ema_multi_avg_fn(0.75)(ema, p, 1)
    >>> ema[0]
    tensor([0.2500, 0.2500])
    """
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point():
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The SWA running mean over lists of tensors, updated in place:
    ``avg.lerp_(p, 1 / (n + 1))`` for floating tensors.

    Returns
    -------
    callable
        ``fn(averaged_list, param_list, num_averaged)``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import get_swa_multi_avg_fn
    >>> avg, p = [numbagrad.zeros(2)], [numbagrad.ones(2)]
    >>> get_swa_multi_avg_fn()(avg, p, 3)
    >>> avg[0]
    tensor([0.2500, 0.2500])
    """

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                weight = 1 / (num_averaged + 1)
                if hasattr(weight, "item"):  # a tensor count: its default-dtype quotient
                    weight = weight.item()
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    diff = p_model - p_avg
                    if hasattr(num_averaged, "item"):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An exponential moving average of one tensor: ``decay * ema + (1 - decay) * p``.

    Parameters
    ----------
    decay : float, default 0.999
        In [0, 1].

    Returns
    -------
    callable
        ``fn(ema, param, num_averaged)`` returning the new average, for
        ``AveragedModel(avg_fn=)``.

    Raises
    ------
    ValueError
        For a decay outside [0, 1].

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import get_ema_avg_fn
    >>> get_ema_avg_fn(0.5)(numbagrad.zeros(2), numbagrad.ones(2), 1)
    tensor([0.5000, 0.5000])
    """
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The SWA running mean of one tensor: ``avg + (p - avg) / (n + 1)``.

    Returns
    -------
    callable
        ``fn(averaged, param, num_averaged)`` returning the new average.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import get_swa_avg_fn
    >>> get_swa_avg_fn()(numbagrad.zeros(2), numbagrad.ones(2), 1)
    tensor([0.5000, 0.5000])
    """

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of a model whose parameters are the running average of the model's (SWA by
    default, or an EMA with ``get_ema_multi_avg_fn``), as PyTorch's ``AveragedModel``.

    Parameters
    ----------
    model : Module
        The model to average (deep-copied).
    device : str or device, optional
        Where the copy lives.
    avg_fn : callable, optional
        ``fn(averaged, param, num_averaged)`` returning the new average of one tensor.
    multi_avg_fn : callable, optional
        ``fn(averaged_list, param_list, num_averaged)`` updating lists in place.
    use_buffers : bool, default False
        Average the buffers too (else they are copied from ``model``).

    Attributes
    ----------
    module : Module
        The averaged copy.
    n_averaged : Tensor
        The number of models averaged so far (an int64 buffer).

    Raises
    ------
    AssertionError
        If both ``avg_fn`` and ``multi_avg_fn`` are given (as PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import AveragedModel
    >>> model = numbagrad.nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(model)
    >>> for v in (1.0, 2.0, 6.0):
    ...     with numbagrad.no_grad():
    ...         _ = model.weight.fill_(v)
    ...     swa.update_parameters(model)
    >>> swa.module.weight
    Parameter containing:
    tensor([[3.]], requires_grad=True)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Call the averaged copy."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers with ``use_buffers``) into the
        average; the first call copies them.

        Parameters
        ----------
        model : Module
            A model of the same structure as the averaged one.
        """
        with no_grad():
            if self.use_buffers:
                self_param = itertools.chain(self.module.parameters(), self.module.buffers())
                model_param = itertools.chain(model.parameters(), model.buffers())
            else:
                self_param, model_param = self.parameters(), model.parameters()
            averaged, current = [], []
            copy_param = bool(self.n_averaged == 0)
            for p_avg, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_model_)
                if copy_param:
                    p_avg.detach().copy_(p_model_)
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None:
                    self._grouped(averaged, current, self.multi_avg_fn)
                elif self.avg_fn is None:  # PyTorch: lerp on CUDA, the running mean on CPU
                    self._grouped(averaged, current, None)
                else:
                    for p_avg, p_model in zip(averaged, current):
                        n = self.n_averaged.to(p_avg.device)
                        p_avg.detach().copy_(self.avg_fn(p_avg.detach(), p_model, n))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1

    def _grouped(self, averaged, current, multi_avg_fn):
        """Apply ``multi_avg_fn`` (or the default SWA mean) per device and dtype group, as
        PyTorch's ``_group_tensors_by_device_and_dtype``."""
        groups: dict = {}
        for a, c in zip(averaged, current):
            key = (str(a.device), a.dtype)
            groups.setdefault(key, ([], []))
            groups[key][0].append(a)
            groups[key][1].append(c)
        for (device, _), (avgs, curs) in groups.items():
            n = self.n_averaged.to(device)
            if multi_avg_fn is not None:
                multi_avg_fn(avgs, curs, n)
            elif device.startswith("cuda"):
                get_swa_multi_avg_fn()(avgs, curs, n)
            else:
                fn = get_swa_avg_fn()
                for a, c in zip(avgs, curs):
                    a.copy_(fn(a, c, n))


def update_bn(loader, model, device=None):
    """Recompute the running statistics of ``model``'s batch-norm layers with one pass
    over ``loader`` (PyTorch's ``update_bn``, after SWA).

    A layer counts as batch norm when it has ``running_mean``, ``running_var``,
    ``momentum`` and ``reset_running_stats`` (numbagrad.nn has no ``BatchNorm`` classes of
    its own; a model without such layers is left as it is, as in PyTorch).

    Parameters
    ----------
    loader : iterable
        Batches (a tensor, or a list/tuple whose first item is the input).
    model : Module
    device : str or device, optional
        Where each input is moved first.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import update_bn
    >>> update_bn([numbagrad.ones(2, 1)], numbagrad.nn.Linear(1, 1))  # no batch norm
    """
    with no_grad():
        momenta = {}
        for module in model.modules():
            if all(
                hasattr(module, a)
                for a in ("running_mean", "running_var", "momentum", "reset_running_stats")
            ):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for inp in loader:
            if isinstance(inp, (list, tuple)):
                inp = inp[0]
            if device is not None:
                inp = inp.to(device)
            model(inp)
        for module in momenta:
            module.momentum = momenta[module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs and
    keep it there (PyTorch's ``SWALR``), by cosine or linear annealing.

    Parameters
    ----------
    optimizer : Optimizer
    swa_lr : float or list of float
        The target rate (per group with a list).
    anneal_epochs : int, default 10
        Non-negative.
    anneal_strategy : {'cos', 'linear'}, default 'cos'
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        For an unknown strategy or a negative or non-integer ``anneal_epochs``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.swa_utils import SWALR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [1.0, 0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """The rates of the current step of the annealing."""
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, "
                "please use `get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs)
        ]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """The state, without the optimizer and the annealing function.

        Returns
        -------
        dict
        """
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
