"""Layers: linear maps, activations, dropout, layer normalisation, reshaping."""

from __future__ import annotations

import math
from typing import Any

from numbagrad import _dtype as D
from numbagrad._core.grad_mode import no_grad
from numbagrad._creation import empty, ones, zeros
from numbagrad._device import device as _device
from numbagrad.nn import functional as F
from numbagrad.nn import init
from numbagrad.nn.modules.module import Module
from numbagrad.nn.parameter import Parameter

__all__ = [
    "ELU",
    "GELU",
    "SELU",
    "Bilinear",
    "Dropout",
    "Embedding",
    "Flatten",
    "Hardtanh",
    "Identity",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmin",
    "Softplus",
    "Softsign",
    "Tanh",
    "Unflatten",
]


def _factory(device, dtype):
    if device is not None:
        if _device(device).type != "cpu":
            raise RuntimeError("numbagrad modules live on 'cpu' only")
    return D.get_default_dtype() if dtype is None else D.as_dtype(dtype)


class Identity(Module):
    """Returns its input (arguments to the constructor are accepted and unused, as in
    PyTorch).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Identity(54, unused="x")(numbagrad.tensor([1.0]))
    tensor([1.])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b`` (PyTorch's ``nn.Linear``).

    ``weight`` (``(out_features, in_features)``) starts as ``kaiming_uniform_(a=sqrt(5))``,
    i.e. ``U(-1/sqrt(in_features), 1/sqrt(in_features))``, and ``bias`` as the same uniform.

    Parameters
    ----------
    in_features, out_features : int
    bias : bool, default True
    device, dtype : optional
        ``dtype`` defaults to the default floating dtype.

    Examples
    --------
    >>> import numbagrad
    >>> lin = numbagrad.nn.Linear(3, 2)
    >>> lin
    Linear(in_features=3, out_features=2, bias=True)
    >>> lin(numbagrad.zeros(5, 3)).shape
    numbagrad.Size([5, 2])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        dt = _factory(device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dt))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the default initialisation again."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim`` (PyTorch's
    ``nn.Embedding``): ``forward(input)`` is :func:`numbagrad.nn.functional.embedding` of
    the int ``input`` with ``weight``.

    ``weight`` starts ``N(0, 1)``, with the ``padding_idx`` row zero (it gets no gradient
    either). ``_weight`` gives the initial table; ``_freeze=True`` makes it not require
    gradients. ``sparse=True`` raises: numbagrad's gradients are dense.

    Examples
    --------
    >>> import numbagrad
    >>> emb = numbagrad.nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(numbagrad.tensor([[0, 2], [4, 9]])).shape
    numbagrad.Size([2, 2, 3])
    """

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        dt = _factory(device, dtype)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        if sparse:
            raise NotImplementedError(
                "Embedding(sparse=True): numbagrad has no sparse gradients; pass sparse=False "
                "(the dense gradient has the same values)"
            )
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(
                empty(num_embeddings, embedding_dim, dtype=dt), requires_grad=not _freeze
            )
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        """Draw ``N(0, 1)`` again, the padding row zero."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        """An ``Embedding`` whose table is the 2-D ``embeddings`` (not copied); ``freeze``
        keeps it from training."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b`` (PyTorch's ``nn.Bilinear``); parameters start uniform in
    ``+-1/sqrt(in1_features)``.

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.nn.Bilinear(2, 3, 4)
    >>> m(numbagrad.ones(5, 2), numbagrad.ones(5, 3)).shape
    numbagrad.Size([5, 4])
    """

    def __init__(
        self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None
    ):
        super().__init__()
        dt = _factory(device, dtype)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dt))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the default initialisation again."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


def _inplace_str(inplace, lead=""):
    return f"{lead}inplace=True" if inplace else ""


class ReLU(Module):
    """Elementwise ``max(x, 0)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReLU()(numbagrad.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class ReLU6(Module):
    """Elementwise ``min(max(x, 0), 6)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ReLU6()(numbagrad.tensor([7.0]))
    tensor([6.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Hardtanh(Module):
    """Elementwise clamp to ``[min_val, max_val]``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Hardtanh(-2, 3)
    Hardtanh(min_val=-2, max_val=3)
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_str(self.inplace, ", ")


class SELU(Module):
    """Elementwise scaled ELU with PyTorch's constants.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.SELU()(numbagrad.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class LogSigmoid(Module):
    """Elementwise ``log(sigmoid(x))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LogSigmoid()(numbagrad.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """Elementwise ``x / (1 + |x|)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Softsign()(numbagrad.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.softsign(input)


class Mish(Module):
    """Elementwise ``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Mish()(numbagrad.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Tanh(Module):
    """Elementwise hyperbolic tangent.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Tanh()(numbagrad.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Elementwise logistic sigmoid.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Sigmoid()(numbagrad.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.sigmoid(input)


class Softplus(Module):
    """Elementwise ``log(1 + exp(beta x)) / beta``, linear above ``threshold``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Softplus(beta=2.0)
    Softplus(beta=2.0, threshold=20.0)
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class GELU(Module):
    """Gaussian error linear unit (``approximate='none'`` or ``'tanh'``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """Elementwise ``x * sigmoid(x)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.SiLU()(numbagrad.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class ELU(Module):
    """Elementwise ``x`` for ``x > 0``, else ``alpha (exp(x) - 1)``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_str(self.inplace, ", ")


class LeakyReLU(Module):
    """Elementwise ``x`` for ``x > 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace_str(self.inplace, ", ")


class _AlongDim(Module):
    """A normalisation along one dimension (``Softmax``, ``Softmin``, ``LogSoftmax``):
    ``_fn(input, dim)`` of the ``nn.functional`` function the subclass names."""

    _fn: Any = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self)._fn(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """Softmax along ``dim``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Softmax(dim=-1)(numbagrad.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    _fn = staticmethod(F.softmax)


class Softmin(_AlongDim):
    """Softmin (softmax of ``-x``) along ``dim``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Softmin(dim=0)
    Softmin(dim=0)
    """

    _fn = staticmethod(F.softmin)


class LogSoftmax(_AlongDim):
    """Log-softmax along ``dim``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.LogSoftmax(dim=1)
    LogSoftmax(dim=1)
    """

    _fn = staticmethod(F.log_softmax)


class Dropout(Module):
    """Zero elements with probability ``p`` in training mode (scaling the rest by
    ``1 / (1 - p)``); the identity in eval mode.

    Examples
    --------
    >>> import numbagrad
    >>> d = numbagrad.nn.Dropout(0.5)
    >>> d
    Dropout(p=0.5, inplace=False)
    >>> x = numbagrad.ones(4)
    >>> d.eval()(x) is x
    True
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` dims, with a learnable
    elementwise ``weight`` (ones) and ``bias`` (zeros) when ``elementwise_affine``.

    Examples
    --------
    >>> import numbagrad
    >>> ln = numbagrad.nn.LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> ln(numbagrad.randn(2, 4)).shape
    numbagrad.Size([2, 4])
    """

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        dt = _factory(device, dtype)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dt))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Reset ``weight`` to ones and ``bias`` to zeros."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` (default: all but the batch dim).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Flatten()(numbagrad.zeros(2, 3, 4)).shape
    numbagrad.Size([2, 12])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.nn.Unflatten(1, (2, 5))(numbagrad.zeros(3, 10)).shape
    numbagrad.Size([3, 2, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError(
                f"invalid argument type for dim parameter: {type(dim).__name__} (int expected)"
            )
        if not isinstance(unflattened_size, (tuple, list)) or not all(
            isinstance(s, int) for s in unflattened_size
        ):
            raise TypeError(
                "unflattened_size must be tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
