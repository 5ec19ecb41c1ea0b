"""The module classes of :mod:`numbagrad.nn`."""

from numbagrad.nn.modules.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from numbagrad.nn.modules.layers import (
    ELU,
    GELU,
    SELU,
    Bilinear,
    Dropout,
    Embedding,
    Flatten,
    Hardtanh,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Unflatten,
)
from numbagrad.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from numbagrad.nn.modules.module import Module

__all__ = [
    "ELU",
    "GELU",
    "SELU",
    "BCELoss",
    "BCEWithLogitsLoss",
    "Bilinear",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "GaussianNLLLoss",
    "Hardtanh",
    "HuberLoss",
    "Identity",
    "KLDivLoss",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSigmoid",
    "LogSoftmax",
    "MSELoss",
    "Mish",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "ParameterDict",
    "ParameterList",
    "ReLU",
    "ReLU6",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Softmin",
    "Softplus",
    "Softsign",
    "Tanh",
    "Unflatten",
]

# -- recurrent layers, attention, the remaining activations (issue 28) --
from numbagrad.nn.modules.rnn import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)

__all__ += [
    "GRU",
    "LSTM",
    "RNN",
    "GRUCell",
    "LSTMCell",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
]
from numbagrad.nn.modules.activation import (
    CELU,
    GLU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    MultiheadAttention,
    PReLU,
    RReLU,
    Softmax2d,
    Softshrink,
    Tanhshrink,
    Threshold,
)
from numbagrad.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ += [
    "CELU",
    "GLU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "MultiheadAttention",
    "PReLU",
    "RReLU",
    "Softmax2d",
    "Softshrink",
    "Tanhshrink",
    "Threshold",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]
from numbagrad.nn.modules.dropout import (
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from numbagrad.nn.modules.loss import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)

__all__ += [
    "AlphaDropout",
    "CosineEmbeddingLoss",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "FeatureAlphaDropout",
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
from numbagrad.nn.modules.sparse import EmbeddingBag

__all__ += ["EmbeddingBag"]
from numbagrad.nn.modules.distance import CosineSimilarity, PairwiseDistance

__all__ += ["CosineSimilarity", "PairwiseDistance"]
from numbagrad.nn.modules.loss import CTCLoss

__all__ += ["CTCLoss"]
from numbagrad.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
from numbagrad.nn.modules.channelshuffle import ChannelShuffle
from numbagrad.nn.modules.container import Container
from numbagrad.nn.modules.loss import LinearCrossEntropyLoss, NLLLoss2d

__all__ += [
    "AdaptiveLogSoftmaxWithLoss",
    "ChannelShuffle",
    "Container",
    "LinearCrossEntropyLoss",
    "NLLLoss2d",
]
# -- convolution, pooling, padding and normalisation layers --------------------------------
# ruff: noqa: E402
from numbagrad.nn.modules import batchnorm as _batchnorm
from numbagrad.nn.modules import conv as _conv
from numbagrad.nn.modules import lazy as _lazy
from numbagrad.nn.modules import normalization as _normalization
from numbagrad.nn.modules import padding as _padding
from numbagrad.nn.modules import pixelshuffle as _pixelshuffle
from numbagrad.nn.modules import pooling as _pooling
from numbagrad.nn.modules import upsampling as _upsampling
from numbagrad.nn.modules.batchnorm import *  # noqa: F403
from numbagrad.nn.modules.conv import *  # noqa: F403
from numbagrad.nn.modules.lazy import *  # noqa: F403
from numbagrad.nn.modules.normalization import *  # noqa: F403
from numbagrad.nn.modules.padding import *  # noqa: F403
from numbagrad.nn.modules.pixelshuffle import *  # noqa: F403
from numbagrad.nn.modules.pooling import *  # noqa: F403
from numbagrad.nn.modules.upsampling import *  # noqa: F403

__all__ += [
    n
    for m in (
        _batchnorm,
        _conv,
        _lazy,
        _normalization,
        _padding,
        _pixelshuffle,
        _pooling,
        _upsampling,
    )
    for n in m.__all__
    if n not in __all__ and n != "LazyModuleMixin"  # (torch.nn.modules.lazy's, not torch.nn's)
]
