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

# -- convolution, pooling, padding and normalisation layers --------------------------------
from numbagrad.nn.modules import batchnorm as _batchnorm
from numbagrad.nn.modules import conv as _conv
from numbagrad.nn.modules import normalization as _normalization
from numbagrad.nn.modules import padding as _padding
from numbagrad.nn.modules import pixelshuffle as _pixelshuffle
from numbagrad.nn.modules import pooling as _pooling
from numbagrad.nn.modules import upsampling as _upsampling
from numbagrad.nn.modules.batchnorm import *  # noqa: F403
from numbagrad.nn.modules.conv import *  # noqa: F403
from numbagrad.nn.modules.normalization import *  # noqa: F403
from numbagrad.nn.modules.padding import *  # noqa: F403
from numbagrad.nn.modules.pixelshuffle import *  # noqa: F403
from numbagrad.nn.modules.pooling import *  # noqa: F403
from numbagrad.nn.modules.upsampling import *  # noqa: F403

__all__ += [
    n
    for m in (_batchnorm, _conv, _normalization, _padding, _pixelshuffle, _pooling, _upsampling)
    for n in m.__all__
    if n not in __all__
]
