"""``Variable``: the pre-0.4 PyTorch wrapper, kept (as PyTorch keeps it) so that older
research scripts (``Variable(x, requires_grad=True)``, ``isinstance(t, Variable)``) run."""

from __future__ import annotations

from numbagrad._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated alias of a tensor, as in PyTorch: ``Variable(data, requires_grad=False)``
    returns a new leaf tensor sharing ``data``'s storage (detached from its graph) whose
    ``requires_grad`` is the argument; every Tensor is an instance of ``Variable``.

    Parameters
    ----------
    data : Tensor
    requires_grad : bool, default False
    volatile : bool, default False
        Removed in PyTorch 0.4 (use ``no_grad``); only ``False`` is accepted.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd import Variable
    >>> x = Variable(numbagrad.ones(2), requires_grad=True)
    >>> (x * 3).sum().backward()
    >>> x.grad
    tensor([3., 3.])
    >>> isinstance(x, Variable)
    True
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            raise RuntimeError(
                "Variable(volatile=True) was removed in PyTorch 0.4 and is not "
                "supported: wrap the code in `with numbagrad.no_grad():` instead"
            )
        if data is None:
            raise TypeError("Variable() needs a tensor: pass Variable(tensor)")
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad = bool(requires_grad)  # (not requires_grad_(): allowed in transforms)
        return out
