"""Loss modules: thin wrappers over the functional losses that hold their options."""

from __future__ import annotations

from numbagrad.nn import functional as F
from numbagrad.nn.modules.layers import Linear
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


# -- margin, embedding, Poisson and multi-label losses (issue 28) --
class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)`` (see
    :func:`numbagrad.nn.functional.margin_ranking_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MarginRankingLoss(margin=0.5)
    MarginRankingLoss()
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` for ``y = 1``, ``max(0, margin - x)`` for ``y = -1``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.HingeEmbeddingLoss()(numbagrad.tensor([0.3]), numbagrad.tensor([-1.0]))
    tensor(0.7000)
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y x))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.SoftMarginLoss()(numbagrad.tensor([0.0]), numbagrad.tensor([1.0]))
    tensor(0.6931)
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos`` for ``y = 1``, ``max(0, cos - margin)`` for ``y = -1``.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[1.0, 0.0]])
    >>> numbagrad.nn.CosineEmbeddingLoss()(x, x, numbagrad.tensor([1.0]))
    tensor(0.)
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(
            input1, input2, target, self.margin, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the ``p``-norm distance.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.TripletMarginLoss(margin=0.5)
    TripletMarginLoss()
    """

    def __init__(
        self,
        margin=1.0,
        p=2.0,
        eps=1e-6,
        swap=False,
        size_average=None,
        reduce=None,
        reduction="mean",
    ):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Loss):
    """:class:`TripletMarginLoss` with any ``distance_function`` (default: the pairwise
    Euclidean distance).

    Examples
    --------
    >>> import numbagrad
    >>> a = numbagrad.zeros(2, 3)
    >>> numbagrad.nn.TripletMarginWithDistanceLoss()(a, a, a + 1)
    tensor(0.)
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function = (
            distance_function if distance_function is not None else F.pairwise_distance
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (see :func:`numbagrad.nn.functional.poisson_nll_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.PoissonNLLLoss()(numbagrad.zeros(2), numbagrad.ones(2))
    tensor(1.)
    """

    def __init__(
        self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"
    ):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.MultiLabelSoftMarginLoss()(numbagrad.zeros(1, 2), numbagrad.ones(1, 2))
    tensor(0.6931)
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (see :func:`numbagrad.nn.functional.multi_margin_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> numbagrad.nn.MultiMarginLoss()(x, numbagrad.tensor([3]))
    tensor(0.3250)
    """

    def __init__(
        self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"
    ):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                "MultiMarginLoss: expected weight to be None or 1D tensor, got "
                f"{weight.ndim}D instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(
            input,
            target,
            p=self.p,
            margin=self.margin,
            weight=self.weight,
            reduction=self.reduction,
        )


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss; ``target`` lists class indices, ended by -1.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> numbagrad.nn.MultiLabelMarginLoss()(x, numbagrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


__all__ += [
    "CosineEmbeddingLoss",
    "HingeEmbeddingLoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "PoissonNLLLoss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (see
    :func:`numbagrad.nn.functional.ctc_loss`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.CTCLoss(blank=0, zero_infinity=True)
    CTCLoss()
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(None, None, reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )


__all__ += ["CTCLoss"]


class NLLLoss2d(NLLLoss):
    """:class:`NLLLoss` under its deprecated name (PyTorch keeps it for old scripts).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.NLLLoss2d()
    NLLLoss2d()
    """


__all__ += ["NLLLoss2d"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """A linear layer followed by cross entropy (PyTorch's ``nn.LinearCrossEntropyLoss``; see
    :func:`numbagrad.nn.functional.linear_cross_entropy`).

    The projection is ``self.linear``, a :class:`~numbagrad.nn.Linear` from ``in_features``
    to ``num_classes * prod(out_features)`` (its weight reshaped to ``(num_classes,
    *out_features, in_features)`` in ``forward``), so ``state_dict`` keys are PyTorch's
    (``linear.weight``, ``linear.bias``). ``options`` (PyTorch's chunked implementation)
    must be None.

    Examples
    --------
    >>> import numbagrad
    >>> loss = numbagrad.nn.LinearCrossEntropyLoss(3, 4)
    >>> loss(numbagrad.randn(2, 3), numbagrad.tensor([1, 2])).shape
    numbagrad.Size([])
    """

    def __init__(
        self,
        in_features,
        num_classes,
        *,
        out_features=(),
        bias=False,
        device=None,
        dtype=None,
        reduction="mean",
        weight=None,
        ignore_index=None,
        label_smoothing=0.0,
        options=None,
    ):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if options is not None:
            raise NotImplementedError(
                "LinearCrossEntropyLoss: the chunked implementation (options=...) is not "
                "available in numbagrad; pass options=None"
            )
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        rows = num_classes
        for d in self.out_features:
            rows *= d
        self.linear = Linear(in_features, rows, bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        lin = self.linear
        weight = lin.weight.reshape((self.num_classes, *self.out_features, lin.in_features))
        bias = None
        if lin.bias is not None:
            bias = lin.bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(
            input,
            weight,
            target,
            linear_bias=bias,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self):
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )


__all__ += ["LinearCrossEntropyLoss"]
