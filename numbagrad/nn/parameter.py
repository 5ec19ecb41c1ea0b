"""``Parameter``: a Tensor that a :class:`~numbagrad.nn.Module` registers as a parameter."""

from __future__ import annotations

from numbagrad._creation import empty
from numbagrad._tensor import Tensor

__all__ = ["Buffer", "Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module parameter (PyTorch's ``torch.nn.Parameter``).

    Assigning a Parameter as a :class:`~numbagrad.nn.Module` attribute registers it, so it
    appears in :meth:`~numbagrad.nn.Module.parameters` and the ``state_dict``. It shares
    memory with ``data``; results of ops on it are plain Tensors.

    Parameters
    ----------
    data : Tensor, optional
        The initial value (an empty tensor when omitted); memory is shared, not copied.
    requires_grad : bool, default True
        Whether the parameter requires gradient.

    Examples
    --------
    >>> import numbagrad
    >>> p = numbagrad.nn.Parameter(numbagrad.tensor([1.0, 2.0]))
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    >>> isinstance(p * 2, numbagrad.nn.Parameter)
    False
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        if data._is_tracer:
            raise TypeError(
                "Parameter(): cannot make a Parameter from a value inside a "
                "numbagrad.func transform; create parameters outside it"
            )
        p = cls._make(data._data, data._storage)
        p.requires_grad = requires_grad
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ would copy the data)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(Tensor._make(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            p._grad = Tensor._make(self._grad._data.copy())
        memo[id(self)] = p
        return p


def _rebuild_parameter(data, requires_grad):
    return Parameter(Tensor._make(data), requires_grad)


class Buffer(Tensor):
    """Marks a Tensor as a buffer when assigned to a Module (PyTorch's ``nn.Buffer``).

    ``module.name = Buffer(t, persistent=True)`` is ``module.register_buffer(name, t,
    persistent)``; the module stores ``t`` itself (a plain Tensor).

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.nn.Module()
    >>> m.running = numbagrad.nn.Buffer(numbagrad.zeros(2))
    >>> [name for name, _ in m.named_buffers()]
    ['running']
    """

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, got {type(data).__name__}")
        b = cls._make(data._data, data._storage)
        b._requires_grad = data._requires_grad
        b.__dict__["persistent"] = bool(persistent)
        b.__dict__["_source"] = data
        return b

    def __init__(self, data=None, *, persistent=True):
        pass
