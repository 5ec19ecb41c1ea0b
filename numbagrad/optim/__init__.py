"""Optimizers and learning-rate schedulers (PyTorch's ``torch.optim``).

Optimizers take any iterable of leaf tensors (or of parameter-group dicts) and update them
in place under ``no_grad``; large parameters go through fused one-pass Numba kernels
(NOTE [Optimizer steps] in ``optimizer.py``). Sparse gradients and complex parameters are
not supported (numbagrad has neither).
"""

from numbagrad.optim import lr_scheduler, swa_utils
from numbagrad.optim.adadelta import Adadelta
from numbagrad.optim.adagrad import Adagrad
from numbagrad.optim.adam import Adam
from numbagrad.optim.adamax import Adamax
from numbagrad.optim.adamw import AdamW
from numbagrad.optim.asgd import ASGD
from numbagrad.optim.lbfgs import LBFGS
from numbagrad.optim.nadam import NAdam
from numbagrad.optim.optimizer import Optimizer
from numbagrad.optim.radam import RAdam
from numbagrad.optim.rmsprop import RMSprop
from numbagrad.optim.rprop import Rprop
from numbagrad.optim.sgd import SGD

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
    "swa_utils",
]
