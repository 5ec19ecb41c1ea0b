"""Learning-rate schedulers (``torch.optim.lr_scheduler``).

Each scheduler sets ``group["lr"]`` of its optimizer's parameter groups. ``step()`` (called
once per epoch, after ``optimizer.step()``) advances ``last_epoch`` and computes the new
rates with PyTorch's formulas: the recursive ("chainable") form from the current rates,
so that schedulers can be stacked, and the closed form when an explicit epoch is passed.
The sequences match PyTorch's to rounding (``tests/test_optim.py`` compares 30 epochs).
"""

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from functools import partial, wraps

from numbagrad._tensor import Tensor
from numbagrad.optim.optimizer import Optimizer

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available."
)


def _group_values(optimizer, key):
    """``group[key]`` of every group (Tensors copied, so they never alias the group's)."""
    return [
        g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups
    ]


def _set_group_value(group, key, value):
    """Set ``group[key]``; a Tensor entry is filled in place."""
    if isinstance(group[key], Tensor):
        group[key].fill_(float(value))
    else:
        group[key] = value


class LRScheduler:
    """Base class of the learning-rate schedulers (PyTorch's ``LRScheduler``).

    Subclasses define ``get_lr()`` (the rates for ``last_epoch``, from the current ones)
    and optionally ``_get_closed_form_lr()`` (from ``base_lrs``, used by
    ``step(epoch)``). Construction records each group's ``initial_lr`` and takes the first
    step (``last_epoch`` becomes 0).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates are scheduled.
    last_epoch : int, default -1
        The index of the last epoch; leave at -1 unless resuming (then every group needs
        ``initial_lr``).

    Attributes
    ----------
    base_lrs : list of float
        The groups' ``initial_lr``.
    last_epoch : int
        Epochs stepped so far (0 after construction).

    Raises
    ------
    TypeError
        If ``optimizer`` is not a numbagrad Optimizer.
    KeyError
        When resuming (``last_epoch >= 0``) without ``initial_lr`` in the groups.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import StepLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] "
                        "when resuming scheduler with last_epoch >= 0 (load the "
                        "optimizer's state_dict first)"
                    )
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._mark_optimizer_steps()
        self._initial_step()

    def _mark_optimizer_steps(self):
        """Wrap ``optimizer.step`` to record that it ran (for the order warning)."""
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        func = opt.step.__func__
        opt_ref = weakref.ref(opt)

        @wraps(func)
        def wrapper(*args, **kwargs):
            o = opt_ref()
            o._opt_called = True
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """The scheduler's state: every attribute except the optimizer.

        Returns
        -------
        dict
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates set by the last ``step`` (one per parameter group).

        Returns
        -------
        list of float
        """
        return self._last_lr

    def get_lr(self):
        """The learning rates for ``last_epoch`` (defined by each scheduler)."""
        raise NotImplementedError

    def _warn_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please "
                "use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def step(self, epoch=None):
        """Advance one epoch and set the new learning rates.

        Parameters
        ----------
        epoch : int, optional
            Deprecated in PyTorch: jump to this epoch (closed form where available).
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after "
                    "learning rate scheduler initialization. Please, make sure to "
                    "call `optimizer.step()` before `lr_scheduler.step()`.",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before "
                    "`optimizer.step()`. You should call them in the opposite "
                    "order: `optimizer.step()` before `lr_scheduler.step()`. Failure "
                    "to do this will result in skipping the first value of the "
                    "learning rate schedule.",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Advance ``last_epoch`` (or set it to ``epoch``, closed form) and set the rates;
        what ``step`` does after its checks (``SequentialLR`` calls it to restart a
        scheduler at its milestone without a warning)."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """PyTorch's older name of :class:`LRScheduler` (a subclass of it, as in PyTorch)."""


class LambdaLR(LRScheduler):
    """Learning rate ``base_lr * lr_lambda(epoch)`` (PyTorch's ``LambdaLR``).

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable or list of callable
        A factor of the epoch, or one function per parameter group.
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        If a list of functions does not have one per group.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import LambdaLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """The state; a lambda is saved only if it is a callable object (its ``__dict__``),
        not a plain function, as in PyTorch.

        Returns
        -------
        dict
        """
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
        """
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self):
        """``base_lr * lr_lambda(last_epoch)`` per group."""
        self._warn_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs (PyTorch's
    ``StepLR``).

    Parameters
    ----------
    optimizer : Optimizer
    step_size : int
        Period of the decay, in epochs.
    gamma : float, default 0.1
        Decay factor.
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import StepLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = StepLR(opt, step_size=1, gamma=0.5)
    >>> opt.step(); sched.step()
    >>> opt.param_groups[0]["lr"]
    0.5
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates, times ``gamma`` at each non-zero multiple of ``step_size``."""
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each milestone epoch (PyTorch's
    ``MultiStepLR``; a milestone listed n times multiplies by ``gamma ** n``).

    Parameters
    ----------
    optimizer : Optimizer
    milestones : iterable of int
        Epoch indices, increasing.
    gamma : float, default 0.1
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import MultiStepLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiStepLR(opt, milestones=[2, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates, times ``gamma ** count`` at a milestone."""
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [
            g["lr"] * self.gamma ** self.milestones[self.last_epoch]
            for g in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [
            base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch (PyTorch's ``ExponentialLR``).

    Parameters
    ----------
    optimizer : Optimizer
    gamma : float
        Decay factor.
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import ExponentialLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates times ``gamma`` (unchanged at construction)."""
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Cosine annealing from ``base_lr`` to ``eta_min`` over ``T_max`` epochs, then back
    up (PyTorch's ``CosineAnnealingLR``, without restarts):
    :math:`\eta_t = \eta_{min} + \frac12(\eta_{base} - \eta_{min})(1 + \cos(\pi t / T_{max}))`,
    computed recursively from the current rate as PyTorch does.

    Parameters
    ----------
    optimizer : Optimizer
    T_max : int
        Half-period, in epochs.
    eta_min : float, default 0.0
        Minimum learning rate.
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import CosineAnnealingLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingLR(opt, T_max=2)
    >>> opt.step(); sched.step()
    >>> round(sched.get_last_lr()[0], 6)
    0.5
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):  # noqa: N803
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The next rates by PyTorch's recursive cosine formula."""
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:  # resumed: closed form
            return [
                self.eta_min
                + (base - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                for base in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # at the bottom of the cosine the ratio below would divide by zero
            return [
                g["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base, g in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (g["lr"] - self.eta_min)
            + self.eta_min
            for g in groups
        ]

    def _get_closed_form_lr(self):
        return [
            self.eta_min
            + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` when a metric stops improving for
    ``patience`` epochs (PyTorch's ``ReduceLROnPlateau``); ``step(metric)``.

    Parameters
    ----------
    optimizer : Optimizer
    mode : {'min', 'max'}, default 'min'
        Whether the metric should decrease or increase.
    factor : float, default 0.1
        Reduction factor, below 1.
    patience : int, default 10
        Epochs without improvement tolerated before a reduction.
    threshold : float, default 1e-4
        Minimum change counted as an improvement.
    threshold_mode : {'rel', 'abs'}, default 'rel'
        Relative (``best * (1 -+ threshold)``) or absolute (``best -+ threshold``).
    cooldown : int, default 0
        Epochs after a reduction during which bad epochs are not counted.
    min_lr : float or list of float, default 0
        Lower bound of the learning rate (per group with a list).
    eps : float, default 1e-8
        Reductions smaller than this are skipped.

    Raises
    ------
    ValueError
        For ``factor >= 1``, an unknown mode, or a ``min_lr`` list of the wrong length.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import ReduceLROnPlateau
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for metric in [1.0, 1.0, 1.0, 1.0]:
    ...     sched.step(metric)
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record this epoch's metric and reduce the rates if it has plateaued.

        Parameters
        ----------
        metrics : float or one-element Tensor
            The monitored quantity.
        epoch : int, optional
            Deprecated in PyTorch.
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` "
                    f"({len(groups)}) differs from when `ReduceLROnPlateau` was "
                    f"initialized ({len(self.min_lrs)}); set `min_lrs` to one "
                    "value per group."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, group in enumerate(groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self):
        """Whether a reduction happened less than ``cooldown`` epochs ago."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
        """
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class LinearLR(LRScheduler):
    """Multiply the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs (PyTorch's ``LinearLR``, the usual warm-up).

    Parameters
    ----------
    optimizer : Optimizer
    start_factor : float, default 1/3
        In ``(0, 1]``.
    end_factor : float, default 1.0
        In ``[0, 1]``.
    total_iters : int, default 5
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import LinearLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        d = self.end_factor - self.start_factor
        return [
            lr * (1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d))
            for lr in lrs
        ]

    def _get_closed_form_lr(self):
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor)
                * min(self.total_iters, self.last_epoch)
                / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` until epoch ``total_iters`` (PyTorch's
    ``ConstantLR``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import ConstantLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.factor for lr in lrs]
        if self.last_epoch != self.total_iters:
            return lrs
        return [lr * (1.0 / self.factor) for lr in lrs]

    def _get_closed_form_lr(self):
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the epochs in ``milestones``
    (PyTorch's ``SequentialLR``, e.g. a ``LinearLR`` warm-up then a cosine decay).

    Parameters
    ----------
    optimizer : Optimizer
    schedulers : list of LRScheduler
        Built on ``optimizer``; not ``ReduceLROnPlateau``.
    milestones : list of int
        One fewer than ``schedulers``.
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim import lr_scheduler as S
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.1, total_iters=2),
    ...                              S.ExponentialLR(opt, gamma=0.5)], milestones=[2])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> [round(v, 4) for v in lrs]
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler, but got no scheduler."
            )
        for i, s in enumerate(schedulers):
            if not hasattr(s, "optimizer"):
                raise TypeError(
                    f"{type(self).__name__} at index {i} should have `optimizer` as its attribute."
                )
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    f"{type(self).__name__} does not support `ReduceLROnPlateau` "
                    f"scheduler as it requires additional kwargs to be specified "
                    f"when calling `step`, but got one at index {i} in the given "
                    "schedulers sequence."
                )
            if optimizer != s.optimizer:
                raise ValueError(
                    f"{type(self).__name__} expects all schedulers to belong to "
                    f"the same optimizer, but got scheduler {type(s).__name__} at "
                    f"index {i} has {s.optimizer}, which is different from "
                    f"{type(optimizer).__name__}."
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be "
                "one more than the number of milestone points, but got number of "
                f"schedulers {len(schedulers)} and the number of milestones to be "
                f"equal to {len(milestones)}"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in self.optimizer.param_groups:  # back to the initial rates
            _set_group_value(group, "lr", group["initial_lr"])
        self._undo(self)  # the construction steps of the schedulers given
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def _undo(self, sched):
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self):
        """Advance one epoch: step the scheduler in charge (restarted at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)  # restarted at its closed form, without a warning
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """The state, the inner schedulers' states included."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`."""
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, inner):
            s.load_state_dict(sd)


def _format_param(name, optimizer, param):
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (PyTorch's ``OneCycleLR``): the rate rises from
    ``max_lr / div_factor`` to ``max_lr`` over ``pct_start`` of ``total_steps``, then
    anneals to ``initial_lr / final_div_factor``; momentum (or Adam's beta1) cycles the
    other way when ``cycle_momentum``. Stepped once per batch.

    Parameters
    ----------
    optimizer : Optimizer
    max_lr : float or list of float
    total_steps : int, optional
        Else ``epochs * steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
    pct_start : float, default 0.3
    anneal_strategy : {'cos', 'linear'}, default 'cos'
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.85, 0.95
    div_factor, final_div_factor : float, default 25, 1e4
    three_phase : bool, default False
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import OneCycleLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=0.1,
    ...                           momentum=0.9)
    >>> sched = OneCycleLR(opt, max_lr=1.0, total_steps=4, pct_start=0.5)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> [round(v, 6) for v in lrs]
    [0.04, 1.0, 0.500002, 4e-06]
    """

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        up = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                {
                    "end_step": up,
                    "start_lr": "initial_lr",
                    "end_lr": "max_lr",
                    "start_momentum": "max_momentum",
                    "end_momentum": "base_momentum",
                },
                {
                    "end_step": float(2 * pct_start * self.total_steps) - 2,
                    "start_lr": "max_lr",
                    "end_lr": "initial_lr",
                    "start_momentum": "base_momentum",
                    "end_momentum": "max_momentum",
                },
                {
                    "end_step": self.total_steps - 1,
                    "start_lr": "initial_lr",
                    "end_lr": "min_lr",
                    "start_momentum": "max_momentum",
                    "end_momentum": "max_momentum",
                },
            ]
        else:
            self._schedule_phases = [
                {
                    "end_step": up,
                    "start_lr": "initial_lr",
                    "end_lr": "max_lr",
                    "start_momentum": "max_momentum",
                    "end_momentum": "base_momentum",
                },
                {
                    "end_step": self.total_steps - 1,
                    "start_lr": "max_lr",
                    "end_lr": "min_lr",
                    "start_momentum": "base_momentum",
                    "end_momentum": "max_momentum",
                },
            ]
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            maxs = _format_param("max_momentum", optimizer, max_momentum)
            bases = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m, b, group in zip(maxs, bases, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m, *group["betas"][1:])
                    else:
                        group["momentum"] = m
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        self._warn_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total "
                f"steps is {self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (mom, *group["betas"][1:])
                else:
                    group["momentum"] = mom
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts (SGDR; PyTorch's
    ``CosineAnnealingWarmRestarts``): periods ``T_0, T_0 * T_mult, ...``; ``step(epoch)``
    takes fractional epochs (stepping per batch).

    Parameters
    ----------
    optimizer : Optimizer
    T_0 : int
        The first period (positive).
    T_mult : int, default 1
        The period's growth factor (at least 1).
    eta_min : float, default 0.0
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import CosineAnnealingWarmRestarts
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [1.0, 0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):  # noqa: N803
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch=None):
        """Advance one epoch, or jump to the (possibly fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class MultiplicativeLR(LRScheduler):
    """Multiply the learning rate by ``lr_lambda(epoch)`` every epoch (PyTorch's
    ``MultiplicativeLR``; the rate at construction is left as it is).

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable or list of callable
        The factor of an epoch, or one function per parameter group.
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        If a list of functions does not have one per group.
    TypeError
        If a factor is not callable.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import MultiplicativeLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self):
        """The current rates times ``lr_lambda(last_epoch)`` (unchanged at construction)."""
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [
            g["lr"] * fn(self.last_epoch)
            for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class PolynomialLR(LRScheduler):
    r"""Decay the learning rate polynomially to 0 over ``total_iters`` epochs (PyTorch's
    ``PolynomialLR``): :math:`\eta_t = \eta_{base} (1 - \min(t, T)/T)^p`, computed
    recursively from the current rate.

    Parameters
    ----------
    optimizer : Optimizer
    total_iters : int, default 5
        :math:`T`, the epochs until the rate reaches 0.
    power : float, default 1.0
        :math:`p`.
    last_epoch : int, default -1

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import PolynomialLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(5):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates times the ratio of consecutive polynomial factors."""
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        decay_factor = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [g["lr"] * decay_factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [
            base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base in self.base_lrs
        ]


def _check_schedulers(owner, schedulers, optimizer):
    """PyTorch's checks of the schedulers given to ``SequentialLR``/``ChainedScheduler``."""
    name = type(owner).__name__
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                "requires additional kwargs to be specified when calling `step`, "
                f"but got one at index {i} in the given schedulers sequence."
            )
        if optimizer != s.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but "
                f"got scheduler {type(s).__name__} at index {i} has {s.optimizer}, "
                f"which is different from {type(optimizer).__name__}."
            )


class ChainedScheduler(LRScheduler):
    """Step several schedulers together, each from the rates the previous one set
    (PyTorch's ``ChainedScheduler``; their chainable forms compose, e.g. a
    ``ConstantLR`` warm-up times an ``ExponentialLR`` decay).

    Parameters
    ----------
    schedulers : sequence of LRScheduler
        Built on one optimizer; not ``ReduceLROnPlateau``.
    optimizer : Optimizer, optional
        Their optimizer (by default the first scheduler's).

    Raises
    ------
    ValueError
        For no scheduler, a ``ReduceLROnPlateau``, or schedulers of different optimizers.
    TypeError
        For an entry without an ``optimizer``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim import lr_scheduler as S
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = S.ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=2),
    ...                             S.ExponentialLR(opt, gamma=0.5)])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> [round(v, 4) for v in lrs]
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler to be chained, "
                "but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self):
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def state_dict(self):
        """The state, the inner schedulers' states included."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`."""
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, inner):
            s.load_state_dict(sd)


class CyclicLR(LRScheduler):
    """Cyclical learning rate (PyTorch's ``CyclicLR``, Smith, 2017): the rate goes from
    ``base_lr`` up to ``max_lr`` over ``step_size_up`` steps and back over
    ``step_size_down``, the amplitude scaled per cycle or per step by the policy; with
    ``cycle_momentum`` the momentum (or Adam's beta1) cycles the other way between
    ``max_momentum`` and ``base_momentum``. Stepped once per batch.

    Parameters
    ----------
    optimizer : Optimizer
    base_lr, max_lr : float or list of float
        The bounds of the cycle (per group with lists); ``base_lr`` is set at
        construction.
    step_size_up : int, default 2000
        Steps of the rising half.
    step_size_down : int, optional
        Steps of the falling half (``step_size_up`` if None).
    mode : {'triangular', 'triangular2', 'exp_range'}, default 'triangular'
        Constant amplitude, halved every cycle, or times ``gamma ** step``.
    gamma : float, default 1.0
        Of ``exp_range``.
    scale_fn : callable, optional
        A custom amplitude of the cycle or step number (replaces ``mode``).
    scale_mode : {'cycle', 'iterations'}, default 'cycle'
        What ``scale_fn`` is given.
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.8, 0.9
    last_epoch : int, default -1

    Raises
    ------
    ValueError
        For an unknown ``mode`` without ``scale_fn``, lists of the wrong length, or
        ``cycle_momentum`` with an optimizer that has neither ``momentum`` nor ``betas``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.optim.lr_scheduler import CyclicLR
    >>> opt = numbagrad.optim.SGD([numbagrad.zeros(1, requires_grad=True)], lr=0.1,
    ...                           momentum=0.9)
    >>> sched = CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.1, 0.55, 1.0, 0.55, 0.1]
    """

    def __init__(
        self,
        optimizer,
        base_lr,
        max_lr,
        step_size_up=2000,
        step_size_down=None,
        mode="triangular",
        gamma=1.0,
        scale_fn=None,
        scale_mode="cycle",
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch=-1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in self.optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, b, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    if self.use_beta1:
                        group["betas"] = (m, *group["betas"][1:])
                    else:
                        group["momentum"] = m
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = _triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(_exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude factor of cycle (or step) ``x``: ``scale_fn``'s or the mode's.

        Parameters
        ----------
        x : int
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self):
        """The rates at ``last_epoch`` (sets the momenta too with ``cycle_momentum``)."""
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(arg)
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                momentum = max_m - (max_m - base_m) * scale_factor * self.scale_fn(arg)
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self):
        """The state; a custom ``scale_fn`` is saved only if it is a callable object (its
        ``__dict__``), as in PyTorch.

        Returns
        -------
        dict
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Restore a state returned by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
        """
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _triangular_scale_fn(x):
    return 1.0


def _triangular2_scale_fn(x):
    return 1 / (2.0 ** (x - 1))


def _exp_range_scale_fn(gamma, x):
    return gamma**x
