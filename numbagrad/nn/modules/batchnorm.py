"""Batch normalisation layers (PyTorch's ``torch.nn.modules.batchnorm``)."""

from __future__ import annotations

from numbagrad import _dtype as D
from numbagrad import distributed as _dist
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import empty, ones, tensor, zeros
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn.modules.layers import _factory
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Parameters and running statistics shared by batch and instance norm."""

    _version = 2

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        dt = _factory(device, dtype)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dt))
            if bias:
                self.bias = Parameter(empty(num_features, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dt))
            self.register_buffer("running_var", ones(num_features, dtype=dt))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=D.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Zero the running mean and the batch count, and set the running variance to 1."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Reset the running statistics, the weight to 1 and the bias to 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        if self.momentum is None:
            eaf = 0.0
        else:
            eaf = self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                eaf = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        return F.batch_norm(
            input,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight,
            self.bias,
            bn_training,
            eaf,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)`` (PyTorch's ``nn.BatchNorm1d``).

    In training the batch's statistics normalise and the running mean and (unbiased)
    variance are updated with ``momentum`` (``None``: a cumulative average over
    ``num_batches_tracked``); in eval mode the running statistics normalise.
    ``state_dict`` keys are PyTorch's: ``weight``, ``bias``, ``running_mean``,
    ``running_var``, ``num_batches_tracked``.

    Examples
    --------
    >>> import numbagrad
    >>> bn = numbagrad.nn.BatchNorm1d(3)
    >>> bn
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> bn(numbagrad.randn(8, 3, 5)).shape
    numbagrad.Size([8, 3, 5])
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)`` (PyTorch's ``nn.BatchNorm2d``; as
    :class:`BatchNorm1d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.BatchNorm2d(4)(numbagrad.randn(2, 4, 3, 3)).shape
    numbagrad.Size([2, 4, 3, 3])
    """

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)`` (PyTorch's ``nn.BatchNorm3d``; as
    :class:`BatchNorm1d`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.BatchNorm3d(2)(numbagrad.randn(2, 2, 2, 2, 2)).shape
    numbagrad.Size([2, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over ``(N, C, *)`` whose training statistics are meant to be
    synchronised across processes (PyTorch's ``nn.SyncBatchNorm``).

    In one process (no initialised process group, a group of one, or eval mode) it is
    :class:`BatchNorm1d`/``2d``/``3d`` for any input of at least 2 dims, as PyTorch's. In
    training across several processes PyTorch requires accelerator tensors (CPU input raises
    ``ValueError``, as here); numbagrad does not synchronise the statistics, so CUDA input then
    raises ``NotImplementedError``. :meth:`convert_sync_batchnorm` swaps a model's batch
    norms for these, sharing their parameters and buffers.

    Examples
    --------
    >>> import numbagrad
    >>> net = numbagrad.nn.Sequential(numbagrad.nn.Linear(3, 4), numbagrad.nn.BatchNorm1d(4))
    >>> net = numbagrad.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    >>> net[1]
    SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> net(numbagrad.randn(5, 3)).shape
    numbagrad.Size([5, 4])
    """

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training and _dist.is_initialized():
            if input.device.type == "cpu":
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU")
            if _dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError(
                    "SyncBatchNorm: synchronising the batch statistics across processes is not "
                    "implemented in numbagrad"
                )
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` replaced by a :class:`SyncBatchNorm` holding
        the same parameters and buffers (a batch norm itself is returned converted)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
