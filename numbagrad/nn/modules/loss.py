"""Loss modules: thin wrappers over the functional losses that hold their options."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.module import Module

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "GaussianNLLLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "SmoothL1Loss",
]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = F._reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error (see :func:`numbagrad.nn.functional.mse_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MSELoss(reduction="sum")(numbagrad.ones(2), numbagrad.zeros(2))
    tensor(2.)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (see :func:`numbagrad.nn.functional.l1_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.L1Loss()(numbagrad.ones(2), numbagrad.zeros(2))
    tensor(1.)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss with threshold ``beta`` (see
    :func:`numbagrad.nn.functional.smooth_l1_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.SmoothL1Loss(beta=0.5)(numbagrad.ones(2), numbagrad.zeros(2))
    tensor(0.7500)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss with threshold ``delta`` (see
    :func:`numbagrad.nn.functional.huber_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.HuberLoss(delta=0.5)(numbagrad.ones(2), numbagrad.zeros(2))
    tensor(0.3750)
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities (see
    :func:`numbagrad.nn.functional.kl_div`).

    Examples
    --------
    >>> import numbagrad
    >>> loss = numbagrad.nn.KLDivLoss(reduction="batchmean", log_target=True)
    >>> float(loss(numbagrad.zeros(1, 2), numbagrad.zeros(1, 2)))
    0.0
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        if reduction == "batchmean" and size_average is None and reduce is None:
            super().__init__()
            self.reduction = "batchmean"
        else:
            super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (see
    :func:`numbagrad.nn.functional.binary_cross_entropy`).

    Examples
    --------
    >>> import numbagrad
    >>> l = numbagrad.nn.BCELoss()(numbagrad.tensor([0.5]), numbagrad.tensor([0.0]))
    >>> round(float(l), 4)
    0.6931
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, computed stably (see
    :func:`numbagrad.nn.functional.binary_cross_entropy_with_logits`).

    Examples
    --------
    >>> import numbagrad
    >>> loss = numbagrad.nn.BCEWithLogitsLoss(pos_weight=numbagrad.tensor([2.0]))
    >>> round(float(loss(numbagrad.tensor([0.0]), numbagrad.tensor([1.0]))), 4)
    1.3863
    """

    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
    ):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities (see
    :func:`numbagrad.nn.functional.nll_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.NLLLoss()(numbagrad.tensor([[-1.0, -2.0]]), numbagrad.tensor([1]))
    tensor(2.)
    """

    def __init__(
        self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or probabilities (see
    :func:`numbagrad.nn.functional.cross_entropy`).

    Examples
    --------
    >>> import numbagrad
    >>> loss = numbagrad.nn.CrossEntropyLoss(label_smoothing=0.1)
    >>> round(float(loss(numbagrad.tensor([[0.0, 0.0]]), numbagrad.tensor([0]))), 4)
    0.6931
    """

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index=-100,
        reduce=None,
        reduction="mean",
        label_smoothing=0.0,
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with predicted variance (see
    :func:`numbagrad.nn.functional.gaussian_nll_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> loss = numbagrad.nn.GaussianNLLLoss()
    >>> float(loss(numbagrad.zeros(2), numbagrad.zeros(2), numbagrad.ones(2)))
    0.0
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )
