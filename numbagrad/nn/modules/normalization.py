"""Normalisation layers other than batch norm (PyTorch's
``torch.nn.modules.normalization`` and ``instancenorm``): ``GroupNorm``,
``InstanceNorm1d/2d/3d``, ``LocalResponseNorm``, ``RMSNorm`` (and ``LayerNorm``, defined
with the other layers)."""

from __future__ import annotations

import warnings

from numbagrad._creation import empty, ones
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn.modules.batchnorm import _NormBase
from numbagrad.nn.modules.layers import LayerNorm, _factory
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter

__all__ = [
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LayerNorm",
    "LocalResponseNorm",
    "RMSNorm",
]


class GroupNorm(Module):
    """Group normalisation (PyTorch's ``nn.GroupNorm``; see
    :func:`numbagrad.nn.functional.group_norm`): ``weight`` starts at 1, ``bias`` at 0.

    Examples
    --------
    >>> import numbagrad
    >>> gn = numbagrad.nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> gn(numbagrad.randn(3, 4, 5)).shape
    numbagrad.Size([3, 4, 5])
    """

    def __init__(
        self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True
    ):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        dt = _factory(device, dtype)
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty(num_channels, dtype=dt))
            if bias:
                self.bias = Parameter(empty(num_channels, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Set the weight to 1 and the bias to 0."""
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(_NormBase):
    _k = 1

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def forward(self, input):
        k = self._k
        if input.ndim not in (k + 1, k + 2):
            raise ValueError(f"expected {k + 1}D or {k + 2}D input (got {input.ndim}D input)")
        feature_dim = input.ndim - k - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        unbatched = input.ndim == k + 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over ``(N, C, L)`` or ``(C, L)`` (PyTorch's
    ``nn.InstanceNorm1d``): no affine map and no running statistics by default.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.InstanceNorm1d(3)
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _k = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over ``(N, C, H, W)`` or ``(C, H, W)`` (PyTorch's
    ``nn.InstanceNorm2d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.InstanceNorm2d(2, affine=True)(numbagrad.randn(1, 2, 3, 3)).shape
    numbagrad.Size([1, 2, 3, 3])
    """

    _k = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (PyTorch's
    ``nn.InstanceNorm3d``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.InstanceNorm3d(2)(numbagrad.randn(1, 2, 2, 2, 2)).shape
    numbagrad.Size([1, 2, 2, 2, 2])
    """

    _k = 3


class LocalResponseNorm(Module):
    """Local response normalisation across channels (PyTorch's ``nn.LocalResponseNorm``;
    see :func:`numbagrad.nn.functional.local_response_norm`).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` (PyTorch's
    ``nn.RMSNorm``; see :func:`numbagrad.nn.functional.rms_norm`): ``weight`` starts at 1.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        """Set the weight to 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
