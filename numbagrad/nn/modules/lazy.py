"""Lazy modules (PyTorch's ``torch.nn.modules.lazy`` and the ``Lazy*`` layers): layers
whose input size is inferred from the first input.

A lazy layer holds :class:`~numbagrad.nn.UninitializedParameter` (and, for the norms,
:class:`~numbagrad.nn.UninitializedBuffer`) objects until its first call; a forward
pre-hook then runs ``initialize_parameters(input)``, which materializes them in place (the
same objects: an optimizer made before keeps them) with the inferred sizes and draws the
layer's default initialisation, and the module becomes its ``cls_to_become`` (``LazyLinear``
becomes ``Linear``). Loading a ``state_dict`` into a lazy module materializes its
parameters with the loaded shapes; ``.to()``/``.double()`` before the first call set the
dtype the parameters will have (NOTE [Uninitialized parameters] in ``nn/parameter.py``).
"""

from __future__ import annotations

import itertools
from typing import Any

from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import tensor
from numbagrad._dtype import int64
from numbagrad._tensor import Tensor
from numbagrad.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from numbagrad.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from numbagrad.nn.modules.layers import Linear
from numbagrad.nn.modules.normalization import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _InstanceNorm,
)
from numbagrad.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LazyModuleMixin",
]


class LazyModuleMixin:
    """The lazy-initialisation machinery (PyTorch's ``torch.nn.modules.lazy.LazyModuleMixin``).

    Put it first among the bases of a module whose parameters start as
    :class:`~numbagrad.nn.UninitializedParameter`; define ``initialize_parameters(*args,
    **kwargs)`` (called with the first forward's arguments) and, optionally,
    ``cls_to_become`` (the class the module becomes once initialised).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.modules.lazy import LazyModuleMixin
    >>> lin = numbagrad.nn.LazyLinear(2)
    >>> isinstance(lin, LazyModuleMixin), lin.has_uninitialized_params()
    (True, True)
    >>> lin(numbagrad.ones(1, 3)).shape, type(lin).__name__
    (numbagrad.Size([1, 2]), 'Linear')
    """

    cls_to_become: Any = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def _lazy_entries(self):
        return itertools.chain(self._parameters.items(), self._buffers.items())

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module (not its children) is still
        uninitialized."""
        return any(is_lazy(t) for _, t in self._lazy_entries())

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the parameters from the first forward's arguments (each lazy layer
        defines it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            object.__setattr__(module, "__class__", module.cls_to_become)

    # -- the Module paths that see uninitialized tensors ------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if (keep_vars or is_lazy(p)) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if (keep_vars or is_lazy(b)) else b.detach()

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # as PyTorch's ``_lazy_load_hook``: an uninitialized entry takes the loaded shape
        for name, t in self._lazy_entries():
            key = prefix + name
            if t is not None and is_lazy(t) and key in state_dict:
                value = state_dict[key]
                if isinstance(value, Tensor) and not is_lazy(value):
                    with no_grad():
                        t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _apply(self, fn, params_too=True):
        # an uninitialized tensor takes the dtype and device ``fn`` gives its placeholder
        stores = (self._parameters, self._buffers)
        lazy = {(i, k): t for i, s in enumerate(stores) for k, t in s.items() if is_lazy(t)}
        for t in lazy.values():
            with no_grad():
                t._set_placeholder(fn(Tensor._make(t._empty_data())))
        for i, k in lazy:
            stores[i][k] = None
        try:
            super()._apply(fn, params_too)
        finally:
            for (i, k), t in lazy.items():
                stores[i][k] = t
        return self


# -- Linear --------------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`~numbagrad.nn.Linear` whose ``in_features`` is the last dim of its first
    input (PyTorch's ``nn.LazyLinear``); it becomes a ``Linear`` then.

    Examples
    --------
    >>> import numbagrad
    >>> lin = numbagrad.nn.LazyLinear(4)
    >>> lin
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> _ = lin(numbagrad.randn(2, 3))
    >>> lin
    Linear(in_features=3, out_features=4, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


# -- convolutions --------------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    _k = 0
    # (set by the layer classes)
    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple
    weight: Any
    bias: Any

    def _lazy_setup(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._k + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups)
                else:
                    shape = (self.out_channels, self.in_channels // self.groups)
                self.weight.materialize((*shape, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(conv, k):
    class LazyConv(_LazyConvXdMixin, conv):
        _k = k
        cls_to_become = conv

        def __init__(
            self,
            out_channels,
            kernel_size,
            stride=1,
            padding=0,
            dilation=1,
            groups=1,
            bias=True,
            padding_mode="zeros",
            device=None,
            dtype=None,
        ):
            super().__init__(
                0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                device, dtype,
            )  # fmt: skip
            self._lazy_setup(out_channels, bias, device, dtype)

    return LazyConv


def _lazy_conv_transpose(conv, k):
    class LazyConvTranspose(_LazyConvXdMixin, conv):
        _k = k
        cls_to_become = conv

        def __init__(
            self,
            out_channels,
            kernel_size,
            stride=1,
            padding=0,
            output_padding=0,
            groups=1,
            bias=True,
            dilation=1,
            padding_mode="zeros",
            device=None,
            dtype=None,
        ):
            super().__init__(
                0, 0, kernel_size, stride, padding, output_padding, groups, False,
                dilation, padding_mode, device, dtype,
            )  # fmt: skip
            self._lazy_setup(out_channels, bias, device, dtype)

    return LazyConvTranspose


def _named(cls, name, doc):
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = __name__
    cls.__doc__ = doc
    return cls


_CONV_DOC = """A :class:`~numbagrad.nn.{base}` whose ``in_channels`` is inferred from the
    first input (dim 1, or dim 0 unbatched; PyTorch's ``nn.{name}``); it becomes a
    ``{base}`` then. Arguments as ``{base}`` without ``in_channels``.

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.nn.{name}(4, 3)
    >>> m.has_uninitialized_params()
    True
    >>> _ = m(numbagrad.randn(1, 2{sizes}))
    >>> type(m).__name__, tuple(m.weight.shape)
    ('{base}', {shape})
    """

LazyConv1d = _named(
    _lazy_conv(Conv1d, 1),
    "LazyConv1d",
    _CONV_DOC.format(base="Conv1d", name="LazyConv1d", sizes=", 5", shape="(4, 2, 3)"),
)
LazyConv2d = _named(
    _lazy_conv(Conv2d, 2),
    "LazyConv2d",
    _CONV_DOC.format(base="Conv2d", name="LazyConv2d", sizes=", 5, 5", shape="(4, 2, 3, 3)"),
)
LazyConv3d = _named(
    _lazy_conv(Conv3d, 3),
    "LazyConv3d",
    _CONV_DOC.format(base="Conv3d", name="LazyConv3d", sizes=", 4, 4, 4", shape="(4, 2, 3, 3, 3)"),
)
LazyConvTranspose1d = _named(
    _lazy_conv_transpose(ConvTranspose1d, 1),
    "LazyConvTranspose1d",
    _CONV_DOC.format(
        base="ConvTranspose1d", name="LazyConvTranspose1d", sizes=", 5", shape="(2, 4, 3)"
    ),
)
LazyConvTranspose2d = _named(
    _lazy_conv_transpose(ConvTranspose2d, 2),
    "LazyConvTranspose2d",
    _CONV_DOC.format(
        base="ConvTranspose2d", name="LazyConvTranspose2d", sizes=", 5, 5", shape="(2, 4, 3, 3)"
    ),
)
LazyConvTranspose3d = _named(
    _lazy_conv_transpose(ConvTranspose3d, 3),
    "LazyConvTranspose3d",
    _CONV_DOC.format(
        base="ConvTranspose3d",
        name="LazyConvTranspose3d",
        sizes=", 4, 4, 4",
        shape="(2, 4, 3, 3, 3)",
    ),
)


# -- normalisation -------------------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin):
    num_features: int
    affine: bool
    track_running_stats: bool
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any

    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        # affine, bias and running statistics off here: made uninitialized below
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]  # (dim 1, as PyTorch's, unbatched or not)
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


_NORM_DOC = """A :class:`~numbagrad.nn.{base}` whose ``num_features`` is the size of dim 1
    of its first input (PyTorch's ``nn.{name}``); it becomes a ``{base}`` then. Arguments as
    ``{base}`` without ``num_features`` (``affine`` and ``track_running_stats`` default to
    True, as PyTorch's).

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.nn.{name}()
    >>> _ = m(numbagrad.randn(2, 3{sizes}))
    >>> type(m).__name__, tuple(m.weight.shape)
    ('{base}', (3,))
    """


def _lazy_norm(base, family, name, sizes):
    cls = type(name, (_LazyNormBase, family), {"cls_to_become": base})
    cls._check_input_dim = base._check_input_dim
    if hasattr(base, "_k"):
        cls._k = base._k
    return _named(cls, name, _NORM_DOC.format(base=base.__name__, name=name, sizes=sizes))


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, _BatchNorm, "LazyBatchNorm1d", ", 4")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, _BatchNorm, "LazyBatchNorm2d", ", 4, 4")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, _BatchNorm, "LazyBatchNorm3d", ", 2, 2, 2")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, _InstanceNorm, "LazyInstanceNorm1d", ", 4")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, _InstanceNorm, "LazyInstanceNorm2d", ", 4, 4")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, _InstanceNorm, "LazyInstanceNorm3d", ", 2, 2, 2")
