"""Neural-network building blocks (PyTorch's ``torch.nn``): :class:`Module`,
:class:`Parameter`, layers, losses, :mod:`~numbagrad.nn.init`,
:mod:`~numbagrad.nn.functional` and :mod:`~numbagrad.nn.utils`.

Examples
--------
>>> import numbagrad
>>> from numbagrad import nn
>>> _ = numbagrad.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
>>> loss = nn.MSELoss()(model(numbagrad.randn(4, 2)), numbagrad.zeros(4, 1))
>>> loss.backward()
>>> model[0].weight.grad.shape
numbagrad.Size([8, 2])
"""

from numbagrad.nn import functional, grad, init, modules, parallel, parameter, utils
from numbagrad.nn.modules import *  # noqa: F403
from numbagrad.nn.modules import __all__ as _modules_all
from numbagrad.nn.parameter import (
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)

__all__ = [
    *_modules_all,
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "functional",
    "grad",
    "init",
    "modules",
    "parallel",
    "parameter",
    "utils",
]

# -- issue 28: PyTorch's nn.DataParallel (on the CPU, a pass-through as PyTorch's without GPUs)
from numbagrad.nn.parallel import DataParallel

__all__ += ["DataParallel"]
