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
    "ELU", "GELU", "SELU", "BCELoss", "BCEWithLogitsLoss", "Bilinear", "CrossEntropyLoss",
    "Dropout", "Flatten", "GaussianNLLLoss", "Hardtanh", "HuberLoss", "Identity", "KLDivLoss",
    "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "Mish",
    "Module", "ModuleDict", "ModuleList", "NLLLoss", "ParameterDict", "ParameterList", "ReLU",
    "ReLU6", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softmin", "Softplus",
    "Softsign", "Tanh", "Unflatten",
]
