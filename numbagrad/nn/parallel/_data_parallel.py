"""``DataParallel`` (PyTorch's ``torch.nn.DataParallel``) on a machine whose modules live on
the CPU: as PyTorch's without a GPU, it holds the module and calls it unchanged."""

from __future__ import annotations

from numbagrad.nn.modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Run ``module`` on the CPU (PyTorch's ``DataParallel`` when no GPU is available:
    ``device_ids`` empty, ``forward`` calls the module). ``state_dict`` keys carry the
    ``module.`` prefix, as in PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> dp = numbagrad.nn.DataParallel(numbagrad.nn.Linear(2, 2))
    >>> dp(numbagrad.zeros(3, 2)).shape
    numbagrad.Size([3, 2])
    >>> list(dp.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if device_ids:
            raise RuntimeError(
                "DataParallel: numbagrad modules live on the CPU; device_ids must be None or empty"
            )
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
