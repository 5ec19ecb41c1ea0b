"""The Tensor: flat NumPy storage, a view onto it, and autograd metadata. No math here.

NOTE [Storage and views]
Every tensor owns a storage: one flat, contiguous NumPy array plus the version counter
that all views of it share, kept as a two-item list ``[array, version]`` (a list because
one is made with every tensor, and a list costs a fifth of a class instance). ``_data``
is the NumPy view (shape, strides, offset) that this tensor reads; views made by
``reshape``/``transpose``/``__getitem__`` are NumPy views of the same storage and share
``_storage``. ``.numpy()`` returns ``_data`` itself
(zero copy) and ``from_numpy`` wraps an array without copying, so user kernels (``@njit``
loops) read and write tensor memory directly. Every in-place op bumps ``_storage[1]``;
a tensor saved for backward records the version it saw (NOTE [Graph layout]).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from numbagrad import _dtype as D
from numbagrad._core.extension import HOOKS, OPS
from numbagrad._core.grad_mode import is_grad_enabled
from numbagrad._device import CPU, META, cuda_device
from numbagrad._device import device as _dev
from numbagrad._hooks import RemovableHandle
from numbagrad.kernels.dlpack import device_of, export

__all__ = ["Size", "Tensor", "set_printoptions"]


# The op namespace (``OPS``, filled by ``ops._methods``) and the other calls up
# (``HOOKS.backward``, ``HOOKS.func_transform``): NOTE [Extension points]. This layer holds
# no math.
_F = OPS

# NOTE [Compile traces] (``numbagrad/_compile/trace.py``): while ``numbagrad.compile``
# traces a call, its recorder is pushed here; reading a tensor's values into Python
# (``item``, ``tolist``, ``numpy``, ``bool``) and in-place writes first ask it
# (``data_read(tensor, what)``), which stops the trace where the result would depend on
# the values. Empty (one falsy check) otherwise.
COMPILE_TRACE: list = []

if TYPE_CHECKING:  # the methods ops/_methods.py attaches, for type checkers (NOTE [Type stubs])
    from numbagrad._tensor_methods import _TensorMethods as _AttachedMethods
else:
    _AttachedMethods = object


def laid_out_as(shape, strides, memory_format) -> bool:
    """Whether ``strides`` (in elements) lay out ``shape`` in ``memory_format``'s order
    without gaps (``Tensor.is_contiguous``); size-1 dims may have any stride."""
    order: Sequence[int] | None = {
        D.channels_last: (1, 3, 2, 0),
        D.channels_last_3d: (1, 4, 3, 2, 0),
    }.get(memory_format)
    if order is None:
        D.check_memory_format(memory_format, "is_contiguous")  # (a non-format: TypeError)
        order = range(len(shape) - 1, -1, -1)  # (preserve_format: row-major, as PyTorch)
    elif len(shape) != len(order):
        return False
    expected = 1
    for d in order:  # the fastest-varying dim first
        if shape[d] != 1 and strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _legacy_size(args):
    """The size PyTorch's legacy ``Tensor(*sizes)``/``x.new(*sizes)`` reads from ``args``
    (ints, one ``Size``, or nothing: ``(0,)``), or None when ``args`` is data."""
    if args and not (
        all(isinstance(a, int) and not isinstance(a, bool) for a in args)
        or (len(args) == 1 and isinstance(args[0], Size))
    ):
        return None
    size = tuple(args[0]) if args and isinstance(args[0], Size) else (args or (0,))
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    return size


class Tensor(_AttachedMethods):
    """A multi-dimensional array with autograd support (``numbagrad.Tensor``).

    Create tensors with :func:`numbagrad.tensor`, :func:`numbagrad.zeros`,
    :func:`numbagrad.from_numpy` and friends. As PyTorch's legacy constructor,
    ``Tensor(data)`` copies ``data`` into a tensor of the default dtype (``float32``, so
    ``Tensor([1, 2])`` is float) and ``Tensor(2, 3)`` makes an uninitialised one of that size.

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.])
    """

    # NOTE [Tensor attributes]: the attributes read on every op are slots; rarely set ones
    # live in the instance dict (made only when first set) with class-level defaults, so
    # making a tensor costs five attribute stores.
    # The tracers' fields (``_interp`` ... ``_tangent``, ``_transforms/tracer.py``) are
    # declared here, unset on plain tensors, so that a plain tensor written with a traced
    # value in place can become a tracer (NOTE [In-place writes under transforms]).
    __slots__ = (
        "__dict__",
        "__weakref__",
        "_bdim",
        "_data",
        "_grad_fn",
        "_interp",
        "_node",
        "_np_dtype",
        "_out_nr",
        "_primal",
        "_requires_grad",
        "_shape",
        "_storage",
        "_tangent",
        "_val",
        "_view_of",
    )
    _grad = None
    _output_nr = 0
    _hooks = None
    _post_acc_hooks = None  # register_post_accumulate_grad_hook (leaves)
    _retains_grad = False
    _accumulator = None
    _hist_version = 0
    _is_tracer = False  # True on the values transforms own (``_transforms/tracer.py``)

    __array_priority__ = 1000  # make ``ndarray * Tensor`` defer to Tensor.__rmul__

    def __init__(self, *args, device=None):
        # PyTorch's legacy constructor: ``Tensor(2, 3)`` (or a ``Size``) is an uninitialised
        # tensor of that size, ``Tensor(data)`` copies data; both of the default dtype
        dt = D.get_default_dtype()
        if device is not None:
            if _dev(device).type != "cpu":  # NOTE [CUDA tensors]
                raise NotImplementedError(
                    "Tensor(..., device='cuda') is not supported; use "
                    "numbagrad.tensor(data, device='cuda')"
                )
        if len(args) == 1 and isinstance(args[0], Tensor):
            src = args[0]
            if src._data.dtype != dt.np:
                raise TypeError(
                    f"expected {dt} (got {src.dtype}): Tensor(tensor) shares "
                    "memory and takes a tensor of the default dtype only; use "
                    "tensor.to(dtype) to convert"
                )
            Tensor._init_from(self, src._data, src._storage)
            return
        size = _legacy_size(args)
        if size is not None:
            a = np.empty(size, dt.np)
            Tensor._init_from(self, a, [a, 0])
            return
        if len(args) != 1:
            raise TypeError(
                "Tensor() takes sizes (ints) or one sequence of data, got "
                f"{len(args)} arguments of types "
                f"{[type(a).__name__ for a in args]}"
            )
        src = _F.tensor(args[0], dtype=dt)
        Tensor._init_from(self, src._data, src._storage)

    # -- construction (internal) ---------------------------------------------------------
    def _init_from(self, data, storage):
        self._data = data
        self._storage = storage
        self._requires_grad = False
        self._grad_fn = None
        self._view_of = None

    def _become(self, tracer):
        """Turn this plain tensor into ``tracer`` in place: the same object takes the
        tracer's class and fields (a new version, so that what saved the old value notices;
        NOTE [In-place writes under transforms] in ``ops/inplace.py``)."""
        version = self._storage[1]
        self.__class__ = type(tracer)
        if not self._is_tracer:
            Tensor.__dict__["_data"].__delete__(self)  # a tracer has no array
        self._take_fields(tracer)  # (a Tracer method: self is one now)
        self._storage = [None, version + 1]
        self._requires_grad = tracer._requires_grad
        self._grad_fn = tracer._grad_fn
        self._view_of = None
        d = self.__dict__
        d.pop("_born_in", None)
        d.update(tracer.__dict__)

    @classmethod
    def _make(cls, data: np.ndarray, storage: list | None = None) -> Tensor:
        """Wrap an ndarray (no copy); ``storage`` is given for views of an existing tensor."""
        t = object.__new__(cls)
        t._data = data
        t._storage = [data, 0] if storage is None else storage
        t._requires_grad = False
        t._grad_fn = None
        t._view_of = None
        return t

    # -- metadata --------------------------------------------------------------------------
    @property
    def shape(self):
        """The tensor's shape, a tuple of ints (PyTorch's ``torch.Size``)."""
        return Size(self._data.shape)

    @property
    def dtype(self) -> D.dtype:
        """The element type."""
        return D._FROM_NP[self._data.dtype]

    @property
    def device(self):
        """Where the storage lives (``device(type='cpu')``, ``device(type='cuda', index=0)``)."""
        d = self._data
        if type(d) is np.ndarray:
            return CPU
        if getattr(d, "_numbagrad_meta", False):  # NOTE [Meta tensors]
            return META
        return _cuda_device_of(d)  # NOTE [CUDA tensors]

    @property
    def is_meta(self) -> bool:
        """Whether this is a ``meta`` tensor (a shape and a dtype, no data)."""
        return getattr(self._data, "_numbagrad_meta", False)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    @property
    def is_cuda(self) -> bool:
        """Whether the storage is on a CUDA device."""
        return type(self._data) is not np.ndarray and self.device.type == "cuda"

    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's memory, detached from the graph and, as in PyTorch,
        with a version counter of its own: in-place changes through ``.data`` are not seen
        by autograd's checks."""
        return Tensor._make(self._data, [self._storage[0], 0])

    @data.setter
    def data(self, value: Tensor):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self._storage = value._storage

    def size(self, dim: int | None = None):
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        """Number of dimensions."""
        return self._data.ndim

    def numel(self) -> int:
        """Number of elements."""
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    def stride(self, dim: int | None = None):
        """Strides in elements (of the flat storage), as PyTorch reports them."""
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self) -> int:
        """Offset of the first element in the flat storage, in elements."""
        base = self._storage[0]
        if type(base) is not np.ndarray:  # a CUDA storage (NOTE [CUDA storage])
            return self._data._off
        return (
            self._data.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        ) // self._data.itemsize

    def is_contiguous(self, *, memory_format=None) -> bool:
        """Whether the elements are laid out in ``memory_format``'s order (row-major by
        default; ``channels_last``: NHWC for a 4-d tensor, NDHWC for 5-d) without gaps."""
        if memory_format is None or memory_format is D.contiguous_format:
            return self._data.flags.c_contiguous
        return laid_out_as(self.shape, self.stride(), memory_format)

    def ndimension(self) -> int:
        """Number of dimensions (an alias of :meth:`dim`)."""
        return self._data.ndim

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes taken by the elements (``numel() * itemsize``; views count their own)."""
        return self._data.size * self._data.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (views of one storage differ by their offset).

        Examples
        --------
        >>> import numbagrad
        >>> x = numbagrad.zeros(4)
        >>> x[1:].data_ptr() - x.data_ptr()
        4
        """
        return self._data.__array_interface__["data"][0]

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The type name (``'torch.FloatTensor'``, PyTorch's string, so scripts comparing it
        keep working), or, given a dtype or such a name, this tensor converted to it.

        Examples
        --------
        >>> import numbagrad
        >>> x = numbagrad.ones(2)
        >>> x.type()
        'torch.FloatTensor'
        >>> x.type('torch.DoubleTensor').dtype
        numbagrad.float64
        """
        if dtype is None:
            prefix = "torch.cuda." if self.is_cuda else "torch."
            return prefix + _TYPE_NAMES[self._data.dtype.name]
        cuda = None  # where a type name or legacy type puts the result (a dtype: unchanged)
        if isinstance(dtype, str):
            name = dtype
            cuda = name.startswith("torch.cuda.")
            short = name.rpartition(".")[2] if name.startswith("torch.") else name
            found = [k for k, v in _TYPE_NAMES.items() if v == short]
            if not found or name.count(".") > (2 if cuda else 1):
                raise ValueError(
                    f"invalid type: {name!r}; expected one of "
                    f"{sorted('torch.' + v for v in _TYPE_NAMES.values())} or their "
                    "torch.cuda. forms"
                )
            dtype = found[0]
        elif isinstance(dtype, type) and issubclass(dtype, Tensor):
            dtype = D.get_default_dtype()
        elif isinstance(getattr(dtype, "dtype", None), D.dtype):  # numbagrad.DoubleTensor ...
            cuda = bool(getattr(dtype, "is_cuda", False))
            dtype = dtype.dtype
        dt = D.as_dtype(dtype)
        if cuda is not None and cuda is not self.is_cuda:  # torch.cuda.X moves to CUDA
            return _F.to(self, "cuda" if cuda else "cpu", dt)
        if dt is self.dtype:
            return self
        return _F.to(self, dt)

    def new(self, *args, device=None):
        """PyTorch's legacy ``x.new(...)``: ``x.new(data)`` a tensor of ``data`` with this
        tensor's dtype, ``x.new(*sizes)`` an uninitialised one of that size, ``x.new()`` an
        empty one.

        Examples
        --------
        >>> import numbagrad
        >>> x = numbagrad.ones(2, dtype=numbagrad.float64)
        >>> x.new([1, 2])
        tensor([1., 2.], dtype=numbagrad.float64)
        >>> x.new(2, 3).shape
        numbagrad.Size([2, 3])
        """
        npd = self._data.dtype
        size = _legacy_size(args)
        if size is not None:
            return Tensor._make(np.empty(size, npd))
        if len(args) != 1:
            raise TypeError("new() takes sizes (ints) or one sequence of data")
        data = args[0]
        if isinstance(data, Tensor):
            if data._data.dtype != npd:
                raise TypeError(f"expected {self.dtype} (got {data.dtype})")
            return data.detach()
        return _F.tensor(data, dtype=self.dtype)

    def equal(self, other) -> bool:
        """True when both tensors have the same shape and elements (``torch.equal``)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
        return bool(
            self._data.shape == other._data.shape and np.array_equal(self._data, other._data)
        )

    def __format__(self, spec: str) -> str:
        # as PyTorch: a 0-d tensor formats as its Python number (``f"{loss:.4f}"``)
        if not self._is_tracer and self._data.ndim == 0:  # (a tracer has no _data)
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        """Whether the dtype is complex (``complex64`` or ``complex128``).

        Examples
        --------
        >>> import numbagrad
        >>> numbagrad.zeros(2).is_complex()
        False
        >>> numbagrad.zeros(2, dtype=numbagrad.cfloat).is_complex()
        True
        """
        return self._data.dtype.kind == "c"

    def untyped_storage(self) -> np.ndarray:
        """The flat NumPy array that holds this tensor's elements (shared with its views)."""
        return self._storage[0].reshape(-1)

    @property
    def _version(self) -> int:
        return self._storage[1]

    # -- autograd metadata -----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool):
        value = bool(value)
        if self._grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return ``self``."""
        hook = HOOKS.func_transform
        active = hook() if hook is not None else None
        if active is not None:  # (PyTorch's refusal, word for word but the name)
            raise RuntimeError(
                "You are attempting to call Tensor.requires_grad_() (or perhaps using "
                "torch.autograd.functional.* APIs) inside of a function being transformed by "
                f"a functorch transform ({active}). This is unsupported, please attempt to use "
                "the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
                "requires_grad_() outside of a function being transformed instead."
            )
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaf tensors, or after ``retain_grad``)."""
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad must be a Tensor or None, got {type(value)}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: expected "
                    f"{list(self._data.shape)}, got {list(value._data.shape)}"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: expected {self.dtype}, "
                    f"got {value.dtype}"
                )
        self._grad = value

    @property
    def grad_fn(self):
        """The graph node that produced this tensor, or None for leaves."""
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op."""
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor during backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and not self._retains_grad:
            self._retains_grad = True
            self._node_hooks().append(_RetainGrad(weakref.ref(self)))

    def _node_hooks(self):
        """The list of tensor hooks kept on ``grad_fn`` for this output (non-leaf tensors)."""
        fn = self._grad_fn
        if fn._tensor_hooks is None:
            fn._tensor_hooks = {}
            fn._any_hooks = True
        return fn._tensor_hooks.setdefault(self._output_nr, [])

    def register_hook(self, hook):
        """Register ``hook(grad)`` run when this tensor's gradient is computed.

        The hook may return a new gradient to use in its place. Returns a handle whose
        ``remove()`` unregisters it.

        Examples
        --------
        >>> import numbagrad
        >>> x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 10)
        >>> (x * 3).sum().backward()
        >>> x.grad
        tensor([30., 30.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            hooks = self._node_hooks()
            # tensor hooks run before the retain_grad capture, as in PyTorch
            pos = next((i for i, h in enumerate(hooks) if isinstance(h, _RetainGrad)), len(hooks))
            hooks.insert(pos, hook)
            return RemovableHandle(hooks, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)`` run after this leaf's ``.grad`` was accumulated.

        The hook runs once per backward that accumulates into ``.grad`` (not for
        :func:`numbagrad.autograd.grad`, which accumulates nothing), after the
        accumulation; it must return None. Optimizers fused into backward and gradient
        bucketing (``DistributedDataParallel``) use it. Returns a handle whose ``remove()``
        unregisters it.

        Raises
        ------
        RuntimeError
            On a tensor that does not require grad, or on a non-leaf tensor.

        Examples
        --------
        >>> import numbagrad
        >>> w = numbagrad.tensor([1.0, 2.0], requires_grad=True)
        >>> h = w.register_post_accumulate_grad_hook(lambda p: print(p.grad))
        >>> (w * 3).sum().backward()
        tensor([3., 3.])
        >>> h.remove()
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return RemovableHandle(self._post_acc_hooks, hook)

    def detach(self) -> Tensor:
        """A tensor sharing storage (and version counter) with this one, without history."""
        return Tensor._make(self._data, self._storage)

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place."""
        self._grad_fn = None
        self._requires_grad = False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the leaves' ``.grad``.

        See :func:`numbagrad.autograd.backward`.
        """
        HOOKS.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def cpu(self) -> Tensor:
        """This tensor if its storage is in host memory, else a copy there (differentiable,
        as ``.to('cpu')``)."""
        if type(self._data) is np.ndarray:
            return self
        return _F.to(self, "cpu")

    def cuda(self, device=None, non_blocking=False):
        """This tensor on a CUDA device (``'cuda'``: the current one); a differentiable
        copy unless it is already there.

        Raises
        ------
        RuntimeError
            Where CUDA is not available (the message says whether numba-cuda or a GPU is
            missing, and how to install ``numbagrad[cuda]``).
        """
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return _F.to(self, device)

    # -- interop ---------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The tensor's memory as a NumPy array (no copy: writes show in the tensor).

        Raises
        ------
        RuntimeError
            If the tensor requires grad while grad mode is on: use ``.detach().numpy()``.
        """
        if COMPILE_TRACE:
            COMPILE_TRACE[-1].data_read(self, ".numpy()")
        if type(self._data) is not np.ndarray:  # as PyTorch (NOTE [CUDA tensors])
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use "
                "Tensor.cpu() to copy the tensor to host memory first."
            )
        if self._requires_grad and not force:
            if is_grad_enabled():
                raise RuntimeError(
                    "Can't call numpy() on Tensor that requires grad. "
                    "Use tensor.detach().numpy() instead."
                )
        return self._data

    @property
    def __cuda_array_interface__(self):
        """The CUDA Array Interface of a CUDA tensor on a GPU (zero-copy interop with
        ``numba.cuda.as_cuda_array``, CuPy, ...); AttributeError for CPU tensors, and
        under the CUDA simulator, whose arrays have none (use
        ``numbagrad.cuda.as_cuda_array`` there)."""
        d = self._data
        if type(d) is np.ndarray:
            raise AttributeError(
                "a CPU tensor has no __cuda_array_interface__; move it with .cuda() first"
            )
        if self._requires_grad:
            raise RuntimeError(
                "Can't get __cuda_array_interface__ on a Variable that requires "
                "grad. If gradients aren't required, use var.detach() to get "
                "Variable that doesn't require grad."
            )
        return d.__cuda_array_interface__

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (see ``numbagrad.from_dlpack``)."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return export(self._data, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """``(device type, index)`` as DLPack counts them: ``(1, 0)`` CPU, ``(2, i)`` CUDA."""
        return device_of(self._data)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if COMPILE_TRACE:
            COMPILE_TRACE[-1].data_read(self, ".item()")
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        """The elements as (nested) Python lists."""
        if COMPILE_TRACE:
            COMPILE_TRACE[-1].data_read(self, ".tolist()")
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if COMPILE_TRACE:
            COMPILE_TRACE[-1].data_read(self, "bool()")
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return _format(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        t = Tensor._make(self._data.copy())
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = Tensor._make(self._grad._data.copy())
        memo[id(self)] = t
        return t


_TYPE_NAMES = {
    "float16": "HalfTensor",
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int32": "IntTensor",
    "int64": "LongTensor",
    "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


class _RetainGrad:
    """The tensor hook behind ``retain_grad``: stores (a copy of) the gradient in ``.grad``."""

    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def __call__(self, g):
        t = self.ref()
        if t is not None:
            if t._grad is None:
                t._grad = g if g._requires_grad else Tensor._make(g._data.copy())
            else:
                t._grad = t._grad + g
        return None


def _cuda_device_of(data):
    """The ``device`` of a CUDA array (NOTE [CUDA tensors])."""
    return cuda_device(data.device_index)


def _rebuild(data, requires_grad):
    t = Tensor._make(data)
    t._requires_grad = requires_grad
    return t


class Size(tuple):
    """A tensor's shape (a tuple), printed like ``numbagrad.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"numbagrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative ``dim``; IndexError (as PyTorch) when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


_PRINT: dict[str, Any] = {
    "precision": 4,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 80,
    "sci_mode": None,
}
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": float("inf"), "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Set how tensors print (``torch.set_printoptions``).

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point (default 4).
    threshold : int, optional
        Above this many elements, print a summary (default 1000).
    edgeitems : int, optional
        Items at each end of every dimension in a summary (default 3).
    linewidth : int, optional
        Characters per line (default 80).
    profile : {'default', 'short', 'full'}, optional
        Presets: 'short' has precision 2 and 2 edge items, 'full' never summarises; the
        other arguments given override the profile's values.
    sci_mode : bool or None, optional
        True forces scientific notation, False disables it, None (the default) chooses as
        PyTorch does. As PyTorch, it is always set (None when not given).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.set_printoptions(precision=2)
    >>> numbagrad.tensor([1.23456, 2.0])
    tensor([1.23, 2.00])
    >>> numbagrad.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _PRINT.update(_PROFILES[profile])
    for name, v in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if v is not None:
            _PRINT[name] = v
    _PRINT["sci_mode"] = sci_mode


def _float_formatter(a):
    """PyTorch's element format for the floats ``a``: integral values as ``1.``, else
    ``precision`` decimals, in scientific notation for a wide range of magnitudes."""
    finite = a[np.isfinite(a)]
    integral = finite.size == 0 or bool(np.all(finite == np.round(finite)))
    amax = float(np.abs(finite).max()) if finite.size else 0.0
    amin = float(np.abs(finite[finite != 0]).min()) if np.any(finite != 0) else 0.0
    sci = amax >= 1e8 or ((amin and (amin < 1e-4 or amax / amin > 1000)) and not integral)
    prec = _PRINT["precision"]
    forced = _PRINT["sci_mode"]
    if forced is not None:
        sci = forced
    if integral and amax < 1e8 and forced is None:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    if sci:
        return lambda v: f"{v:.{prec}e}"
    return lambda v: f"{v:.{prec}f}"


def _format(t: Tensor) -> str:
    """A repr close to PyTorch's: 4 decimals, integral floats as ``1.``, extra fields after."""
    a = t._data
    on_device = type(a) is not np.ndarray
    if getattr(a, "_numbagrad_meta", False):  # no values to print (NOTE [Meta tensors])
        extra = "" if a.dtype == D.get_default_dtype().np else f", dtype={t.dtype}"
        return f"tensor(..., device='meta', size={tuple(a.shape)}{extra})"
    if on_device:  # a CUDA tensor prints a host copy of its values (NOTE [CUDA tensors])
        a = a.to_host()
    kind = a.dtype.kind
    thr = _PRINT["threshold"]
    thr = sys.maxsize if thr == float("inf") else int(thr)
    edge = _PRINT["edgeitems"]
    width_max = _PRINT["linewidth"] - 1
    if a.size == 0:
        body = "[]" if a.ndim <= 1 else np.array2string(a, separator=", ")
    elif kind == "f":
        fmt = _float_formatter(a)
        # PyTorch right-aligns every element to the widest one
        width = max(len(fmt(v)) for v in a.reshape(-1)[:2000])
        body = np.array2string(
            a,
            separator=", ",
            formatter={"float_kind": lambda v: fmt(v).rjust(width)},
            prefix="tensor(",
            threshold=thr,
            edgeitems=edge,
            max_line_width=width_max,
        )
    elif kind == "c":
        # as PyTorch: the real and the imaginary parts each get their own format
        fre, fim = _float_formatter(a.real), _float_formatter(np.abs(a.imag))
        wre = max(len(fre(v)) for v in a.reshape(-1)[:2000].real)

        def cfmt(v):  # (the real parts right-aligned, the imaginary ones not, as PyTorch)
            im = v.imag
            sign = "-" if (im < 0 or (im == 0 and np.signbit(im))) else "+"
            return fre(v.real).rjust(wre) + sign + fim(abs(im)) + "j"

        body = np.array2string(
            a,
            separator=", ",
            formatter={"complex_kind": cfmt},
            prefix="tensor(",
            threshold=thr,
            edgeitems=edge,
            max_line_width=width_max,
        )
    else:
        body = np.array2string(
            a,
            separator=", ",
            prefix="tensor(",
            threshold=thr,
            edgeitems=edge,
            max_line_width=width_max,
        )
        if kind == "b":
            body = body.replace("True", "True").replace("False", "False")
    extras = [f"device='{t.device}'"] if on_device else []
    default = D.get_default_dtype()
    dt = t.dtype
    if a.size == 0 and a.ndim != 1:
        extras.append(f"size={tuple(a.shape)}")
    if (
        dt is not default
        and dt is not D.int64
        and dt is not D.bool
        and dt is not D.default_complex()
    ):
        extras.append(f"dtype={dt!r}")
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    # as PyTorch's ``_str_intern``: a suffix that would overflow the line goes on its own
    text = "tensor(" + body
    last = len(text) - text.rfind("\n") + 1
    for suffix in extras:
        if last + len(suffix) + 2 > _PRINT["linewidth"]:
            text += ",\n" + " " * len("tensor(") + suffix
            last = len("tensor(") + len(suffix)
        else:
            text += ", " + suffix
            last += len(suffix) + 2
    return text + ")"
