"""``Parameter``: a Tensor that a :class:`~numbagrad.nn.Module` registers as a parameter."""

from __future__ import annotations

from numbagrad import _dtype as D
from numbagrad._creation import empty
from numbagrad._tensor import Tensor

__all__ = [
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
]


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


# NOTE [Uninitialized parameters]
# A lazy module's parameters and buffers start as ``UninitializedParameter`` /
# ``UninitializedBuffer`` (PyTorch's ``torch.nn.parameter``): tensors with no shape yet whose
# ``materialize(shape)`` gives them storage in place (the same object, so an optimizer made
# before the first forward keeps working) and turns them into a ``Parameter`` / plain
# ``Tensor``. Until then every use of their data raises, as PyTorch's ``__torch_function__``
# does: the mixin's ``_data`` property shadows the Tensor slot (numbagrad's ops and methods all
# read it), and only the dtype, device, ``requires_grad``, ``repr`` and copying work; the
# lazy modules (``nn/modules/lazy.py``) handle them in ``state_dict``, ``load_state_dict``
# and ``.to()``.
_DATA = Tensor.__dict__["_data"]  # the Tensor slot's own descriptor


class UninitializedTensorMixin:
    """The shared behaviour of :class:`UninitializedParameter` and
    :class:`UninitializedBuffer` (NOTE [Uninitialized parameters])."""

    __slots__ = ()
    cls_to_become: type = Tensor

    @property
    def _data(self):
        raise ValueError(
            "Attempted to use an uninitialized parameter. This error happens when you are "
            "using a `LazyModule` or explicitly manipulating "
            f"`numbagrad.nn.parameter.{type(self).__name__}` objects. When using LazyModules "
            "Call `forward` with a dummy batch to initialize the parameters before calling "
            "numbagrad functions"
        )

    @_data.setter
    def _data(self, value):
        _DATA.__set__(self, value)

    def _empty_data(self):
        """The placeholder array (size 0) that holds the dtype and device."""
        return _DATA.__get__(self)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes."
        )

    @property
    def dtype(self):
        return D._FROM_NP[self._empty_data().dtype]

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value and self._empty_data().dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self._requires_grad = bool(value)

    @property
    def device(self):
        return Tensor.device.fget(Tensor._make(self._empty_data()))

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor storage of ``shape`` (uninitialised values) on its device and
        dtype (or ``device``/``dtype``), in place, and make it a ``cls_to_become``."""
        new = empty(
            tuple(shape),
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
        )
        self._data = new._data
        self._storage = new._storage
        object.__setattr__(self, "__class__", self.cls_to_become)

    def _set_placeholder(self, t):
        """Take the dtype and device of ``t`` (a module's ``.to()`` before materializing)."""
        self._data = t._data
        self._storage = t._storage

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self.requires_grad, device=self.device, dtype=self.dtype)
        memo[id(self)] = out
        return out


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter with no shape yet (PyTorch's ``torch.nn.parameter.UninitializedParameter``).

    The lazy modules (:class:`~numbagrad.nn.LazyLinear` and the others) hold these until their
    first forward; ``materialize(shape)`` then makes it a :class:`Parameter` in place. Any
    other use of its data raises ``ValueError`` (its ``shape``: ``RuntimeError``).

    Examples
    --------
    >>> import numbagrad
    >>> p = numbagrad.nn.UninitializedParameter(dtype=numbagrad.float64)
    >>> p, p.dtype
    (<UninitializedParameter>, numbagrad.float64)
    >>> p.materialize((2,))
    >>> type(p).__name__, p.shape
    ('Parameter', numbagrad.Size([2]))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = empty(0, dtype=dtype, device=device)
        p = cls._make(data._data, data._storage)
        p.requires_grad = requires_grad
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass  # everything happens in __new__


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer with no shape yet (PyTorch's ``torch.nn.parameter.UninitializedBuffer``);
    ``materialize(shape)`` makes it a plain Tensor in place.

    Examples
    --------
    >>> import numbagrad
    >>> b = numbagrad.nn.UninitializedBuffer()
    >>> b.materialize((3,))
    >>> type(b).__name__, b.shape
    ('Tensor', numbagrad.Size([3]))
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = empty(0, dtype=dtype, device=device)
        b = cls._make(data._data, data._storage)
        b._requires_grad = bool(requires_grad)
        b.__dict__["persistent"] = bool(persistent)
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass  # everything happens in __new__


def is_lazy(param):
    """Whether ``param`` is an :class:`UninitializedParameter` or
    :class:`UninitializedBuffer` (PyTorch's ``torch.nn.parameter.is_lazy``).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.nn.parameter import is_lazy
    >>> is_lazy(numbagrad.nn.LazyLinear(2).weight), is_lazy(numbagrad.nn.Linear(1, 2).weight)
    (True, False)
    """
    return isinstance(param, UninitializedTensorMixin)
