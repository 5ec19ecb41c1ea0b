"""Tensor creation: from data, filled, ranges and random (PyTorch's CPU generator: NOTE
[PyTorch's CPU random stream] in ``numbagrad/kernels/cpu/random.py``)."""

from __future__ import annotations

import math
import warnings
from typing import cast

import numpy as np

from numbagrad import _dtype as D
from numbagrad._core.extension import HOOKS
from numbagrad._device import (
    _DEFAULT_DEVICE,
    CPU,
    empty_on,
    from_device_array,
    is_device_array,
    on_device,
)
from numbagrad._device import device as _device
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend, backend_of, module
from numbagrad.kernels.cpu.backend import quiet_numpy
from numbagrad.kernels.meta import MetaArray

__all__ = [
    "Generator",
    "arange",
    "as_tensor",
    "bernoulli",
    "default_generator",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "get_rng_state",
    "initial_seed",
    "linspace",
    "logspace",
    "manual_seed",
    "multinomial",
    "normal",
    "ones",
    "ones_like",
    "poisson",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "scalar_tensor",
    "seed",
    "set_rng_state",
    "tensor",
    "zeros",
    "zeros_like",
]


def _finish(arr, requires_grad, device):
    quiet_numpy()  # NOTE [Quiet NumPy]: the filter back if a catch_warnings block lost it
    if device is not None or _DEFAULT_DEVICE[0] is not CPU:
        dev = _DEFAULT_DEVICE[0] if device is None else _device(device)
        if dev.type == "meta":  # its shape and dtype (NOTE [Meta tensors])
            arr = MetaArray(np.shape(arr), arr.dtype)
        elif not getattr(arr, "_numbagrad_device", False):
            arr = on_device(arr, dev)  # NOTE [CUDA tensors]: made on the host, copied once
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    birth = HOOKS.birth  # NOTE [In-place writes under transforms] (ops/inplace.py)
    if birth is not None:
        birth(t)
    return t


def _infer_np_dtype(data, to_float=False):
    """The dtype PyTorch infers for nested Python data: bool, int64 or the default float.
    Python ints beyond int64 are an error unless a float is among them or ``to_float`` (the
    tensor asked for is floating)."""
    a = np.asarray(data)
    k = a.dtype.kind
    # NumPy makes Python ints beyond int64 uint64, float64 (with smaller ints) or objects
    if k in "uO" or (k == "f" and a.size and not np.all(np.abs(a) < 2.0**63)):
        a = _big_ints(data, a, to_float)
        k = a.dtype.kind
    if k == "b":
        return a, np.bool_
    if k in "iu":
        return a, np.int64
    if k == "c":
        # as PyTorch: the default complex dtype, or complex128 when a NumPy complex128
        # scalar is among the values
        default = D.default_complex().np
        if (
            default != np.complex128
            and not isinstance(data, complex)
            and any(isinstance(v, np.generic) and v.dtype == np.complex128 for v in _scalars(data))
        ):
            return a, np.complex128
        return a, default
    if k == "f":
        default = D.get_default_dtype().np
        if default != np.float64 and not isinstance(data, (int, float)) and _has_np_float64(data):
            # as PyTorch: a NumPy float64 scalar among the values keeps its dtype (the
            # promotion of every value's own type, Python floats taking the default)
            return a, np.float64
        return a, default
    raise TypeError(f"could not convert data of type {a.dtype} to a tensor")


def _has_np_float64(data):
    for v in _scalars(data):
        if isinstance(v, np.generic) and v.dtype == np.float64:
            return True
    return False


def _scalars(data):
    if isinstance(data, (list, tuple)):
        for x in data:
            yield from _scalars(x)
    else:
        yield data


def _big_ints(data, a, to_float):
    """``a`` (NumPy's array of nested ``data``) checked for Python ints beyond int64: with a
    float among the values, or ``to_float``, they make a float tensor; otherwise PyTorch's
    overflow error. An object array of anything else is ragged or mixed data."""
    vals = list(_scalars(data))
    numbers = all(isinstance(v, (int, float, np.number)) for v in vals)
    if a.dtype.kind == "O" and not (numbers and vals):
        raise TypeError(
            "could not build a tensor: ragged or mixed nested sequences "
            "(all rows must have the same length)"
        )
    big = any(
        isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63 for v in vals
    )
    if big and not to_float and not any(isinstance(v, (float, np.floating)) for v in vals):
        raise ValueError("Overflow when unpacking long long")
    return a.astype(np.float64) if a.dtype.kind == "O" else a


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) for x in data):
        return [_unwrap_nested(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """Build a tensor from data (nested lists, numbers, arrays or tensors), always copying.

    Parameters
    ----------
    data : array_like
    dtype : dtype, optional
        Inferred like PyTorch when omitted: floats give the default dtype, ints int64.
    requires_grad : bool, default False

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    """
    if isinstance(data, Tensor):
        if data._is_tracer:  # a copy of its value, a constant (vmap has none: it raises)
            data = data._concrete("numbagrad.tensor()")
        arr = data._data
        npd = arr.dtype if dtype is None else D.as_dtype(dtype).np
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        npd = D.from_numpy_dtype(arr.dtype).np if dtype is None else D.as_dtype(dtype).np
    else:
        data = _unwrap_nested(data)
        arr, inferred = _infer_np_dtype(
            data, dtype is not None and D.as_dtype(dtype)._category >= 2
        )
        npd = inferred if dtype is None else D.as_dtype(dtype).np
    if npd == np.float16:  # beyond 65504 is inf, silently as in PyTorch
        with np.errstate(over="ignore"):
            arr = np.array(arr, dtype=npd, copy=True, order="C")
        return _finish(arr, requires_grad, device)
    return _finish(np.array(arr, dtype=npd, copy=True, order="C"), requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor` but shares memory with a NumPy array (or tensor) when possible."""
    if isinstance(data, Tensor):
        if device is not None and _device(device) != data.device:
            data = data.to(device)
        return data if dtype is None or D.as_dtype(dtype) is data.dtype else data.to(dtype)
    if not isinstance(data, (np.ndarray, list, tuple, int, float, bool)):
        if is_device_array(data):  # zero copy (NOTE [CUDA tensors])
            npd = None if dtype is None else D.as_dtype(dtype).np
            return Tensor._make(from_device_array(data, npd, device))
    if (
        isinstance(data, np.ndarray)
        and (dtype is None or D.as_dtype(dtype).np == data.dtype)
        and (device is None or _device(device) == CPU)
    ):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """Wrap a NumPy array as a tensor **without copying**: writes show on both sides.

    Examples
    --------
    >>> import numpy as np, numbagrad
    >>> a = np.zeros(3)
    >>> t = numbagrad.from_numpy(a)
    >>> t += 1
    >>> a.tolist()
    [1.0, 1.0, 1.0]
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(ndarray.dtype)
    if not ndarray.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte "
            "order. Conversion between byte orders is currently not supported."
        )
    return Tensor._make(ndarray)


def scalar_tensor(value, *, dtype=None, requires_grad=False):
    """A 0-d tensor holding ``value``."""
    return tensor(value, dtype=dtype or D.get_default_dtype(), requires_grad=requires_grad)


_INT64_MAX = 2**63 - 1


def _sizes(name, sizes, size):
    """The size of a factory call, given as ``*sizes`` (ints, or one sequence) or as the
    ``size=`` keyword (a sequence), as PyTorch takes it: not both, and not an int keyword."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):  # (Size is a tuple)
        raise TypeError(
            f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}"
        )
    return (tuple(size),)


def _size(size, name="empty"):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for i, s in enumerate(size):
        if not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"size must be a tuple of ints, but got an element of type {type(s).__name__}"
            )
        if not -_INT64_MAX - 1 <= s <= _INT64_MAX:
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos "
                f'{i + 1} with error "Overflow when unpacking long long"'
            )
    for s in size:
        if s < 0:
            if name == "zeros":  # PyTorch's zeros checks first, in its own words
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _check_size(shape, np_dtype):
    """PyTorch's checks before it allocates a contiguous ``shape``: the byte count and the
    strides must fit in int64 (RuntimeError naming the sizes, not NumPy's ValueError)."""
    n, overflow = 1, False
    for s in shape:  # the running product in uint64, as c10::safe_multiplies_u64
        n *= s
        overflow = overflow or n > 2**64 - 1
    if overflow or n * np.dtype(np_dtype).itemsize > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    stride = 1
    for s in reversed(shape[1:]):
        stride *= max(s, 1)
        if stride > _INT64_MAX:
            raise RuntimeError("Stride calculation overflowed")


def _alloc(make, shape, np_dtype):
    """``make()`` (a NumPy array of ``shape``) after PyTorch's size checks, an allocation
    failure reported as PyTorch's CPU allocator does (RuntimeError, not MemoryError)."""
    _check_size(shape, np_dtype)
    try:
        return make()
    except MemoryError:
        nbytes = math.prod(shape) * np.dtype(np_dtype).itemsize
        raise RuntimeError(
            f"DefaultCPUAllocator: can't allocate memory: you tried to "
            f"allocate {nbytes} bytes. Error code 12 (Cannot allocate "
            "memory)"
        ) from None


_C_TYPE_NAMES = {
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "int32": "int",
    "int64": "int64_t",
    "bool": "bool",
}


def _fill_value(value, np_dtype):
    """``value`` checked as PyTorch checks a fill value for ``np_dtype``: Python ints from
    -2**63 to 2**64 - 1, and a value the dtype cannot hold (an integer out of range, inf or
    nan for an integer dtype, a finite float beyond float32's range) raises."""
    if isinstance(value, np.generic):
        value = value.item()
    if np_dtype.kind == "b" and isinstance(value, (int, float)):
        return bool(value)  # anything converts to bool
    if isinstance(value, complex) and np_dtype.kind != "c":
        raise RuntimeError(
            f"value cannot be converted to type {_C_TYPE_NAMES.get(np_dtype.name, np_dtype.name)} "
            "without overflow"
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value  # bools always fit; tensors and others: as NumPy does
    if isinstance(value, int):
        if value < -_INT64_MAX - 1:
            raise OverflowError("can't convert negative int to unsigned")
        if value > 2**64 - 1:
            raise OverflowError("int too big to convert")
    kind = np_dtype.kind
    if kind in "iu":
        info = np.iinfo(np_dtype)
        if isinstance(value, float):  # compared as doubles, as c10::overflows
            bad = not math.isfinite(value) or value > float(info.max) or value < float(info.min)
        else:
            bad = not info.min <= value <= info.max
    elif kind == "f":
        v = float(value)
        bad = math.isfinite(v) and abs(v) > float(np.finfo(np_dtype).max)
    else:
        bad = False
    if bad:
        raise RuntimeError(
            f"value cannot be converted to type "
            f"{_C_TYPE_NAMES.get(np_dtype.name, np_dtype.name)} without "
            "overflow"
        )
    return value


def _dt(dtype):
    return (D.get_default_dtype() if dtype is None else D.as_dtype(dtype)).np


def _device_target(device):
    """The device with a backend of its own that a creation call makes its tensor on
    (``device``, else the default device), or None for the CPU (and ``meta``, whose
    tensors are made on the host first)."""
    if device is None:
        if _DEFAULT_DEVICE[0] is CPU:
            return None
        device = _DEFAULT_DEVICE[0]
    dev = _device(device)
    return None if dev == CPU or dev.type == "meta" else dev


def _device_empty(shape, dt, dev):
    """An uninitialised array on device ``dev`` (the current one, as ``on_device``
    requires), after PyTorch's size checks."""
    _check_size(shape, dt)
    return empty_on(shape, dt, dev)


_DEVICE_FILL = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.bool_)}


def _filled(value, shape, dt, requires_grad, device, make):
    """``make()`` (a NumPy array of ``shape``) as a tensor on ``device``; on a CUDA device
    the tensor is filled with the number ``value`` (None: left uninitialised) by the device
    fill kernel instead, with no host copy."""
    dev = _device_target(device)
    if dev is None or not (
        value is None
        or (isinstance(value, (bool, int, float, np.generic)) and np.dtype(dt) in _DEVICE_FILL)
    ):  # (float16 fills stay on the host, as before: numba-cuda's float16 is partial)
        return _finish(_alloc(make, shape, dt), requires_grad, device)
    out = _device_empty(shape, dt, dev)
    if value is not None:
        backend_of(out).copy_into(out, value)
    return _finish(out, requires_grad, dev)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of the given size (default float dtype).

    The size is given as ints (``zeros(2, 3)``), as one sequence (``zeros((2, 3))``) or
    as the keyword ``size=`` (``zeros(size=(2, 3))``), as in PyTorch; likewise for
    :func:`ones`, :func:`empty`, :func:`rand`, :func:`randn` and ``Tensor.new_zeros`` and
    its kin.

    Raises
    ------
    TypeError
        When the size is given both positionally and as ``size=``, or ``size=`` is not a
        sequence of ints.
    RuntimeError
        For a negative size.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.zeros(size=(2, 3)).shape
    numbagrad.Size([2, 3])
    """
    shape, dt = _size(_sizes("zeros", sizes, size), "zeros"), _dt(dtype)
    return _filled(0, shape, dt, requires_grad, device, lambda: np.zeros(shape, dt))


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of the given size (default float dtype)."""
    shape, dt = _size(_sizes("ones", sizes, size), "ones"), _dt(dtype)
    return _filled(1, shape, dt, requires_grad, device, lambda: np.ones(shape, dt))


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of the given size."""
    shape, dt = _size(_sizes("empty", sizes, size), "empty"), _dt(dtype)
    return _filled(None, shape, dt, requires_grad, device, lambda: np.empty(shape, dt))


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor filled with ``fill_value``; its dtype is inferred from the value."""
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
    shape, dt = _size((size,), "full"), _dt(dtype)
    value = _fill_value(fill_value, dt)
    return _filled(value, shape, dt, requires_grad, device, lambda: np.full(shape, value, dt))


def _like_device(t, device):
    """The device of a ``*_like`` result: ``device``, else ``t``'s (as PyTorch)."""
    if device is not None or t._is_tracer or type(t._data) is np.ndarray:
        return device
    return t.device


def _like(t, dtype):
    if t._is_tracer:  # a transform's tracer has metadata but no array
        return tuple(t.shape), D.as_dtype(t.dtype if dtype is None else dtype).np
    return t._data.shape, (t._data.dtype if dtype is None else D.as_dtype(dtype).np)


# ``HOOKS.batched_like`` (filled by ``numbagrad._transforms.batching``, NOTE [Extension
# points]): the ``*_like``/``new_*`` tensor of a value ``vmap`` batches is batched, as
# PyTorch's. ``batched_like(t, shape, make)`` returns the batched tensor built from
# ``make(full_shape, base)`` (``base``: the innermost value, for its device), or None when
# ``t`` is not batched.


def like_new(t, shape, make):
    """``make(shape, t)`` (a new tensor for ``t``), batched where ``t`` is."""
    if t._is_tracer and HOOKS.batched_like is not None:
        out = HOOKS.batched_like(t, shape, make)
        if out is not None:
            return out
    return make(shape, t)


def _like_filled(input, dtype, device, requires_grad, value, make_np, batched=True):
    shape, dt = _like(input, dtype)

    def make(s, base):
        dev = _like_device(base, device)
        return _filled(value, s, dt, requires_grad, dev, lambda: make_np(s, dt))

    return like_new(input, shape, make) if batched else make(shape, input)


def const_zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    """Zeros with ``input``'s shape and dtype, never batched: the constant the library's own
    rules use (it broadcasts against a batched value; the public ``zeros_like`` of a batched
    value is batched, as PyTorch's, at the cost of materialising the batch)."""
    return _like_filled(input, dtype, device, requires_grad, 0, np.zeros, batched=False)


def const_ones_like(input, *, dtype=None, device=None, requires_grad=False):
    """Ones with ``input``'s shape and dtype, never batched (see ``const_zeros_like``)."""
    return _like_filled(input, dtype, device, requires_grad, 1, np.ones, batched=False)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Zeros with ``input``'s shape and dtype."""
    D.check_memory_format(memory_format, "zeros_like")
    return _like_filled(input, dtype, device, requires_grad, 0, np.zeros)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Ones with ``input``'s shape and dtype."""
    D.check_memory_format(memory_format, "ones_like")
    return _like_filled(input, dtype, device, requires_grad, 1, np.ones)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Uninitialised, with ``input``'s shape and dtype."""
    D.check_memory_format(memory_format, "empty_like")
    return _like_filled(input, dtype, device, requires_grad, None, np.empty)


def full_like(
    input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None
):
    """Filled with ``fill_value``, with ``input``'s shape and dtype."""
    D.check_memory_format(memory_format, "full_like")
    _, dt = _like(input, dtype)
    value = _fill_value(fill_value, dt)
    return _like_filled(
        input, dtype, device, requires_grad, value, lambda s, d: np.full(s, value, d)
    )


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for integer args."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        isint = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = D.int64 if isint else D.get_default_dtype()
    n = max(math.ceil((end - start) / step), 0)
    dt = _dt(dtype)
    if dt.kind not in "iu":

        def make():
            return (start + step * np.arange(n, dtype=np.float64)).astype(dt)
    else:

        def make():
            return np.arange(start, end, step, dt)

    return _finish(_alloc(make, (n,), dt), requires_grad, device)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    return _finish(
        _alloc(lambda: np.linspace(start, end, steps, dtype=dt), (steps,), dt),
        requires_grad,
        device,
    )


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    return _finish(
        _alloc(lambda: np.logspace(start, end, steps, base=base).astype(dt), (steps,), dt),
        requires_grad,
        device,
    )


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n x m`` identity matrix."""
    dt = _dt(dtype)
    shape = (n, n if m is None else m)
    if shape[0] * shape[1] > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    return _finish(_alloc(lambda: np.eye(n, m, dtype=dt), shape, dt), requires_grad, device)


# -- random -------------------------------------------------------------------------------
# NOTE [PyTorch's CPU random stream] (numbagrad/kernels/cpu/random.py): a CPU Generator is
# PyTorch's CPUGeneratorImpl, its state PyTorch's 5056-byte CPUGeneratorImplState.
_DEFAULT_SEED = 67280421310721  # ``default_rng_seed_val``: a new Generator's seed, as PyTorch
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState) on a 64-bit platform
_MT_N = 624


def _mt_words(seed):
    """``init_genrand`` of the low 32 bits of ``seed``: the 624 state words (pure Python,
    so that seeding at ``import numbagrad`` needs no compiled kernel: NOTE [Lazy kernels])."""
    words = [seed & 0xFFFFFFFF]
    for j in range(1, _MT_N):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.array(words, dtype=np.uint32)


def _entropy_seed():
    return int(cast(int, np.random.SeedSequence().entropy) % (2**63))


class Generator:
    """A random number generator (``torch.Generator``).

    A CPU generator is PyTorch's: the same mt19937 engine, seeded the same way, with the
    same transformations, so that after ``manual_seed(s)`` the CPU functions listed under
    "Random sampling" in docs/api.rst give PyTorch's numbers bit for bit (NOTE [PyTorch's
    CPU random stream] in ``numbagrad/kernels/cpu/random.py``). Pass it as ``generator=`` to
    :func:`rand`, :func:`randn`, :func:`randint`, :func:`randperm`, :func:`normal`,
    :func:`bernoulli`, :func:`multinomial`, :func:`poisson` and the in-place
    ``Tensor.uniform_`` family. The global one is :data:`default_generator` (what
    :func:`manual_seed` seeds). A new CPU generator starts from PyTorch's default seed,
    67280421310721.

    Its state (:meth:`get_state`) is PyTorch's ``CPUGeneratorImplState``, 5056 bytes,
    held as an int64 tensor of 632 words (numbagrad has no uint8 dtype):
    ``state.numpy().view(numpy.uint8)`` is the byte tensor ``torch.get_rng_state()``
    returns, and :meth:`set_state` takes either form, so states move between numbagrad and
    PyTorch in both directions.

    A CUDA generator (``device='cuda'``) is a counter-based Philox4x32-10 generator whose
    state is ``(seed, offset)``: CUDA tensors are drawn on the device with it (NOTE [CUDA
    random numbers] in ``numbagrad/kernels/cuda/random.py``); its state is an int64 tensor
    of the seed (its uint64 bits) and the offset (PyTorch's holds the same two numbers as 16
    bytes). Its numbers are not PyTorch's CUDA numbers.

    Parameters
    ----------
    device : str or device, default 'cpu'
        ``'cpu'``, or a CUDA device for a generator of CUDA tensors.

    Examples
    --------
    >>> import numbagrad
    >>> g = numbagrad.Generator().manual_seed(7)
    >>> a = numbagrad.rand(3, generator=g)
    >>> state = g.get_state()
    >>> b = numbagrad.rand(3, generator=g)
    >>> _ = g.set_state(state)
    >>> bool((numbagrad.rand(3, generator=g) == b).all()), g.initial_seed()
    (True, 7)
    >>> numbagrad.manual_seed(0)  # doctest: +ELLIPSIS
    <numbagrad.Generator object at ...>
    >>> numbagrad.rand(2)  # torch.manual_seed(0); torch.rand(2)
    tensor([0.4963, 0.7682])
    """

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._offset = 0  # a CUDA generator's Philox offset (NOTE [CUDA random numbers])
        if self.device.type == "cuda":  # no mt19937 state: its draws run on the device
            self._mt = None
            self._seed = _entropy_seed()
            return
        self._mt = np.empty(_MT_N, np.uint32)  # the engine's words
        self._pos = np.empty(2, np.int64)  # its ``left`` and ``next``
        self._normal = np.zeros(2)  # the cached double normal sample: [valid, value]
        self._float_normal = np.zeros(2, np.float32)  # the float one (state only)
        self.manual_seed(_DEFAULT_SEED)

    @property
    def _is_cuda(self) -> bool:
        return self._mt is None

    def manual_seed(self, seed):
        """Seed the generator; returns it."""
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise RuntimeError(
                f"Overflow when unpacking long long: seed {seed} is out of range "
                "[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]"
            )
        self._seed = seed % 2**64  # PyTorch reads a negative seed as its uint64 pattern
        if self._mt is None:  # a CUDA generator: a new seed starts its stream over
            self._offset = 0
        else:
            # reseeded in place: draws recorded by a compiled function keep reading it
            self._mt[:] = _mt_words(self._seed)
            self._pos[:] = (1, 0)
            self._normal[:] = 0.0
            self._float_normal[:] = 0.0
        return self

    def seed(self) -> int:
        """Seed from OS entropy; returns the seed used."""
        s = _entropy_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator's state: for a CPU generator PyTorch's 5056-byte
        ``CPUGeneratorImplState`` as an int64 tensor of 632 words (``.numpy().view(
        numpy.uint8)`` is PyTorch's byte tensor); for a CUDA generator an int64 tensor of 2
        values, the seed (its uint64 bits) and the Philox offset. Give it to
        :meth:`set_state`."""
        if self._mt is None:
            return Tensor._make(np.array([self._seed, self._offset], np.uint64).view(np.int64))
        raw = np.zeros(_STATE_BYTES, np.uint8)
        raw[0:8].view(np.uint64)[0] = self._seed
        raw[8:16].view(np.int32)[:] = (int(self._pos[0]), 1)  # left, seeded
        raw[16:24].view(np.uint64)[0] = int(self._pos[1])  # next
        raw[24:5016].view(np.uint64)[:] = self._mt
        if self._normal[0]:
            raw[5024:5032].view(np.float64)[0] = self._normal[1]  # normal_y
            raw[5040:5044].view(np.int32)[0] = 1  # normal_is_valid
        if self._float_normal[0]:
            raw[5048:5052].view(np.float32)[0] = self._float_normal[1]
            raw[5052] = 1
        return Tensor._make(raw.view(np.int64))

    def set_state(self, new_state):
        """Restore a state from :meth:`get_state` (or, for a CPU generator, PyTorch's:
        ``torch.get_rng_state().numpy()``, a uint8 array of 5056 bytes); returns the
        generator."""
        if self._mt is None:
            return self._set_cuda_state(new_state)
        raw = _state_bytes(new_state)
        left = int(raw[8:12].view(np.int32)[0])
        seeded = int(raw[12:16].view(np.int32)[0])
        nxt = int(raw[16:24].view(np.uint64)[0])
        if not (seeded and 0 < left <= _MT_N and nxt <= _MT_N):
            raise RuntimeError("Invalid mt19937 state")
        self._seed = int(raw[0:8].view(np.uint64)[0])
        self._mt[:] = raw[24:5016].view(np.uint64).astype(np.uint32)  # (PyTorch's copy)
        self._pos[:] = (left, nxt)
        valid = bool(raw[5040:5044].view(np.int32)[0])
        self._normal[:] = (1.0, raw[5024:5032].view(np.float64)[0]) if valid else (0.0, 0.0)
        fvalid = bool(raw[5052])
        fval = raw[5048:5052].view(np.float32)[0]
        self._float_normal[:] = (1.0, fval) if fvalid else (0.0, 0.0)
        return self

    def _set_cuda_state(self, new_state):
        """A CUDA generator's :meth:`set_state` (PyTorch's checks and messages)."""
        if (
            not isinstance(new_state, Tensor)
            or new_state.dtype is not D.int64
            or new_state.is_cuda
            or tuple(new_state.shape) != (2,)
        ):
            raise RuntimeError(
                "set_state of a CUDA generator expects the int64 CPU tensor of 2 values "
                "(seed, offset) that its get_state() returns"
            )
        seed, offset = (int(v) for v in np.ascontiguousarray(new_state._data).view(np.uint64))
        if offset % 4 or offset >= 2**63:
            raise RuntimeError("offset must be a multiple of 4")
        self._seed, self._offset = seed, offset
        return self

    def __repr__(self) -> str:
        return f"<numbagrad.Generator object at {id(self):#x}>"


def _state_bytes(new_state):
    """The 5056 bytes of a CPU generator state: numbagrad's int64 tensor of 632 words, or
    PyTorch's byte tensor as a NumPy uint8 array (``bytes`` too)."""
    if isinstance(new_state, Tensor):
        if new_state.is_cuda:
            raise RuntimeError("RNG state must be a CPU tensor")
        arr = np.ascontiguousarray(new_state._data)
        if arr.dtype != np.int64:
            raise TypeError(
                "RNG state must be the int64 tensor Generator.get_state() returns (or "
                f"PyTorch's uint8 state as a NumPy array), got a {new_state.dtype} tensor"
            )
        raw = arr.reshape(-1).view(np.uint8)
    elif isinstance(new_state, (bytes, bytearray, memoryview)):
        raw = np.frombuffer(bytes(new_state), np.uint8)
    elif isinstance(new_state, np.ndarray) and new_state.dtype == np.uint8:
        raw = np.ascontiguousarray(new_state).reshape(-1)
    else:
        raise TypeError(
            "RNG state must be the int64 tensor Generator.get_state() returns or PyTorch's "
            f"5056-byte state as a NumPy uint8 array, got {type(new_state).__name__}"
        )
    if raw.size != _STATE_BYTES:
        raise RuntimeError(
            f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input "
            f"RNG state size to be {raw.size}"
        )
    return raw


default_generator = Generator()
default_generator.manual_seed(_entropy_seed())
_RNG = default_generator  # the global generator


def _gen(generator):
    """The CPU generator a draw advances: ``generator`` or the global one."""
    if generator is None:
        return _RNG
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a numbagrad.Generator, not {type(generator).__name__}")
    if generator._mt is None:
        raise RuntimeError("Expected a 'cpu' device type for generator but found 'cuda'")
    return generator


# -- draws from a CPU generator (NOTE [PyTorch's CPU random stream]) ------------------------
# Each returns a new C-contiguous array of ``shape`` drawn as PyTorch draws a fresh
# contiguous tensor of that shape and dtype; ``flat`` draws as ATen's element-by-element
# path, which a strided in-place fill takes (``normal`` then uses the scalar Box-Muller).
_RK = module("random")  # the kernels, loaded on the first draw (NOTE [Lazy kernels])


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64))


def _draw_uniform(g, shape, dt, lo=0.0, hi=1.0):
    dt = np.dtype(dt)
    if dt.kind == "c":  # PyTorch fills the real view: interleaved real and imaginary parts
        real = _draw_uniform(g, (*shape, 2), dt.type(0).real.dtype, lo, hi)
        return np.ascontiguousarray(real).view(dt).reshape(shape)
    n = _numel(shape)
    if dt == np.float64:
        out = np.empty(n, np.float64)
        _RK.uniform_f64(g._mt, g._pos, out, float(lo), float(hi))
    else:  # float32; float16 from float32 draws, a rounding up to ``hi`` sent to ``lo``
        out = np.empty(n, np.float32)
        _RK.uniform_f32(g._mt, g._pos, out, np.float32(lo), np.float32(hi))
        if dt != np.float32:
            out = out.astype(dt)
            out[out == dt.type(hi)] = dt.type(lo)
    return out.reshape(shape)


def _draw_normal(g, shape, dt, mean=0.0, std=1.0, flat=False):
    dt = np.dtype(dt)
    if dt.kind == "c":  # the real view, each part with std / sqrt(2)
        real = _draw_normal(g, (*shape, 2), dt.type(0).real.dtype, mean, std / math.sqrt(2), flat)
        return np.ascontiguousarray(real).view(dt).reshape(shape)
    n = _numel(shape)
    if n < 16 or flat:
        out = np.empty(n, np.float64)
        _RK.normal_scalar(g._mt, g._pos, g._normal, out, float(mean), float(std))
        return out.astype(dt, copy=False).reshape(shape)
    if dt == np.float64:
        out = np.empty(n, np.float64)
        _RK.normal_fill_f64(g._mt, g._pos, out, float(mean), float(std))
        return out.reshape(shape)
    m, s = np.float32(mean), np.float32(std)
    if dt == np.float32:
        out = np.empty(n, np.float32)
        _RK.normal_fill_f32(g._mt, g._pos, out, m, s, _RK.VECTOR_NORMAL)
        return out.reshape(shape)
    # float16: ATen draws and transforms 16 float32 uniforms per chunk, then the tail's 16
    out = np.empty(n, dt)
    buf = np.empty(16, np.float32)
    starts = [*range(0, n - 15, 16), *([n - 16] if n % 16 else [])]
    for i in starts:
        _RK.normal_fill_f32(g._mt, g._pos, buf, m, s, _RK.VECTOR_NORMAL)
        out[i : i + 16] = buf
    return out.reshape(shape)


def _draw_int(g, shape, dt, low, high):
    """``random_(low, high)``: ``[low, high)`` (checked by ``_check_int_range``)."""
    out = np.empty(_numel(shape), np.int64)
    _RK.random_from_to(g._mt, g._pos, out, np.uint64(high - low), np.int64(low))
    return out.astype(dt, copy=False).reshape(shape)


def _draw_int_default(g, shape, dt):
    """``random_()``: ``[0, 2**mantissa]`` for floats, ``[0, max]`` for integers."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        modulus, wide = 2 ** (np.finfo(dt).nmant + 1) + 1, dt == np.float64
    elif dt.kind == "b":
        modulus, wide = 2, False
    else:
        modulus, wide = int(np.iinfo(dt).max) + 1, dt == np.int64
    out = np.empty(_numel(shape), np.uint64)
    _RK.random_default(g._mt, g._pos, out, np.uint64(modulus), wide)
    return out.astype(dt).reshape(shape)


def _draw_bernoulli(g, shape, dt, p):
    """0/1 of dtype ``dt``: 1 where a uniform is below ``p`` (a number: double uniforms; an
    array broadcast to ``shape``: uniforms of its dtype, float64 or else float32)."""
    out = np.empty(_numel(shape), np.bool_)
    if isinstance(p, np.ndarray) and p.ndim:
        double = p.dtype == np.float64
        pdt = np.float64 if double else np.float32
        probs = np.ascontiguousarray(np.broadcast_to(p, shape), pdt)
        _RK.bernoulli_tensor(g._mt, g._pos, out, probs.reshape(-1), double)
    else:
        pa = np.asarray(p)
        if pa.dtype == np.float64 or pa.dtype.kind != "f":
            _RK.bernoulli_scalar(g._mt, g._pos, out, float(pa))
        else:  # a 0-d float32 probability tensor
            probs = np.full(out.size, pa, np.float32)
            _RK.bernoulli_tensor(g._mt, g._pos, out, probs, False)
    return out.astype(dt).reshape(shape)


def _draw_exponential(g, shape, dt, lambd):
    out = np.empty(_numel(shape), np.float64)
    _RK.exponential(g._mt, g._pos, out, float(lambd))
    return out.astype(dt, copy=False).reshape(shape)


def _draw_randperm(g, n, dt, rows=1):
    out = np.empty((rows, n), np.int64)
    for r in range(rows):
        _RK.randperm(g._mt, g._pos, out[r])
    return out.astype(dt, copy=False)


def _in_memory_order(values, like):
    """``values`` (drawn in order) placed into an array shaped as ``like`` in ``like``'s
    memory order: the order ATen's TensorIterator visits a strided tensor in."""
    offsets = np.zeros(like.shape, np.int64)
    for d, (size, stride) in enumerate(zip(like.shape, like.strides)):
        idx = [None] * like.ndim
        idx[d] = slice(None)
        offsets = offsets + (np.arange(size, dtype=np.int64) * stride)[tuple(idx)]
    order = np.argsort(offsets.reshape(-1), kind="stable")
    out = np.empty(values.size, values.dtype)
    out[order] = values.reshape(-1)
    return out.reshape(like.shape)


# The default CUDA generators, one per device index, made on first use (naming a CUDA
# device imports numba.cuda, which ``import numbagrad`` must not); ``_CUDA_SEED[0]`` is the
# seed a new one starts from: the last global seed (NOTE [CUDA random numbers]).
_CUDA_RNGS: dict = {}
_CUDA_SEED = [int(cast(int, np.random.SeedSequence().entropy) % (2**63))]


def _cuda_default_generator(index):
    """The default CUDA generator of device ``index``."""
    g = _CUDA_RNGS.get(index)
    if g is None:
        g = _CUDA_RNGS[index] = Generator(f"cuda:{index}").manual_seed(_CUDA_SEED[0])
    return g


def _cuda_gen(generator, index):
    """The CUDA generator a draw on device ``index`` advances: ``generator`` or the
    device's default one."""
    if generator is None:
        return _cuda_default_generator(index)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a numbagrad.Generator, not {type(generator).__name__}")
    if generator._mt is not None:
        raise RuntimeError("Expected a 'cuda' device type for generator but found 'cpu'")
    return generator


def _cuda_draw(out, kind, generator, a=0.0, b=1.0):
    """Fill the ``CudaArray`` ``out`` with ``kind`` samples (``"randint"`` on ``[a, b)``, or
    a kind of ``CudaBackend.random_fill``) on the device, advancing the generator's offset
    by 4 words per element (NOTE [CUDA random numbers]); returns ``out``."""
    cuda = backend("cuda")  # loaded on first use (NOTE [Optional engines])
    g = _cuda_gen(generator, out.device_index)
    if kind == "randint":
        cuda.randint_fill(out, g._seed, g._offset, a, b)
    else:
        cuda.random_fill(out, kind, g._seed, g._offset, a, b)
    g._offset += 4 * out.size
    return out


_C_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool"}


def _cuda_float(dt, kernel):
    """PyTorch's error for a floating draw (its ``kernel``) into a non-floating dtype."""
    if np.dtype(dt).kind == "c":
        raise NotImplementedError(
            f"{kernel}: complex tensors on CUDA are not supported by numbagrad (docs/gpu.rst)"
        )
    if np.dtype(dt).kind != "f":
        name = _C_NAMES.get(np.dtype(dt).name, np.dtype(dt).name)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def manual_seed(seed: int):
    """Seed the global random generator; the same seed gives the same stream. Returns
    :data:`default_generator`.

    Examples
    --------
    >>> import numbagrad
    >>> _ = numbagrad.manual_seed(0); a = numbagrad.rand(3)
    >>> _ = numbagrad.manual_seed(0); b = numbagrad.rand(3)
    >>> bool((a == b).all())
    True
    """
    g = _RNG.manual_seed(seed)
    _seed_cuda(g.initial_seed())
    return g


def _seed_cuda(seed):
    """Seed every CUDA generator with ``seed``, as ``torch.manual_seed`` does (no import of
    numba.cuda: the generators not made yet start from ``_CUDA_SEED``)."""
    _CUDA_SEED[0] = seed
    for g in _CUDA_RNGS.values():
        g.manual_seed(seed)


def seed() -> int:
    """Seed the global generator (and the CUDA ones) from OS entropy; returns the seed used."""
    s = _RNG.seed()
    _seed_cuda(s)
    return s


def initial_seed() -> int:
    """The seed the global generator was last seeded with."""
    return _RNG.initial_seed()


def get_rng_state():
    """The global generator's state (see :meth:`Generator.get_state`)."""
    return _RNG.get_state()


def set_rng_state(new_state) -> None:
    """Restore the global generator's state from :func:`get_rng_state`."""
    _RNG.set_state(new_state)


# NOTE [Randomness under vmap]: ``HOOKS.random`` and ``HOOKS.random_op``, filled by
# ``numbagrad._transforms.batching`` (NOTE [Extension points]), with PyTorch's rules, each live vmap
# deciding for its own level: ``'error'`` raises, ``'same'`` draws once for the whole batch,
# ``'different'`` draws per batch element. ``random(make, size, what, fill=None)``
# is called by each random factory (and in-place fill, ``fill`` the tensor filled) and
# returns None outside vmap or where every level is ``'same'``, else the batched draw made
# by ``make(full_shape)``. ``random_op(fn, tensors, what)`` is called by the random
# ops of tensors (``bernoulli(p)``, ``poisson``, ``normal(mean, std)``, ``multinomial``):
# None with no transform current, else ``fn`` applied level by level (a batched operand
# under ``'same'`` raises; other transforms' values are constants to a draw).


def _random_of_tensors(fn, tensors, what):
    """``fn(*tensors)`` through the active transforms (NOTE [Randomness under vmap]), or
    None with none active: the caller draws on the tensors' data."""
    if HOOKS.random_op is None:
        return None
    return HOOKS.random_op(fn, tensors, what)


def _random(make, size, requires_grad, device, what, np_dtype=None):
    if HOOKS.random is not None:
        batched = HOOKS.random(make, size, what)
        if batched is not None:
            if requires_grad and type(batched) is Tensor:  # (a draw a compile trace recorded)
                batched.requires_grad = True
            return batched
    if np_dtype is None:
        return _finish(make(size), requires_grad, device)
    return _finish(_alloc(lambda: make(size), size, np_dtype), requires_grad, device)


def _cuda_random(kind, size, dt, dev, generator, a, b, requires_grad, what):
    """``_random`` drawing on the CUDA device ``dev`` (NOTE [CUDA random numbers]): under
    ``vmap(randomness='different')`` the batch is one device draw too."""
    return _random(
        lambda s: _cuda_draw(_device_empty(s, dt, dev), kind, generator, a, b),
        size,
        requires_grad,
        dev,
        what,
    )


def randn(*sizes, size=None, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard normal samples of the given size."""
    dt = _dt(dtype)
    dev = _device_target(device)
    if dev is not None:
        _cuda_float(dt, "normal_kernel_cuda")
        shape = _size(_sizes("randn", sizes, size), "randn")
        return _cuda_random("normal", shape, dt, dev, generator, 0.0, 1.0, requires_grad, "randn")
    g = _gen(generator)
    return _random(  # (complex: real and imaginary parts each N(0, 1/2), as PyTorch)
        lambda s: _draw_normal(g, s, dt),
        _size(_sizes("randn", sizes, size), "randn"),
        requires_grad,
        device,
        "randn",
        dt,
    )


def rand(*sizes, size=None, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform samples on ``[0, 1)`` of the given size."""
    dt = _dt(dtype)
    dev = _device_target(device)
    if dev is not None:
        _cuda_float(dt, "check_uniform_bounds")
        shape = _size(_sizes("rand", sizes, size), "rand")
        return _cuda_random("uniform", shape, dt, dev, generator, 0.0, 1.0, requires_grad, "rand")
    g = _gen(generator)
    return _random(  # (complex: real and imaginary parts each uniform on [0, 1))
        lambda s: _draw_uniform(g, s, dt),
        _size(_sizes("rand", sizes, size), "rand"),
        requires_grad,
        device,
        "rand",
        dt,
    )


def randint(
    low, high=None, size=None, *, dtype=None, device=None, requires_grad=False, generator=None
):
    """Uniform integers in ``[low, high)``; ``randint(high, size)`` is accepted too."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    dt = np.int64 if dtype is None else D.as_dtype(dtype).np
    dev = _device_target(device)
    if dev is not None:
        lo, hi = _check_int_range(low, high, dt)
        shape = _size((size,), "randint")
        return _cuda_random("randint", shape, dt, dev, generator, lo, hi, requires_grad, "randint")
    g = _gen(generator)
    lo, hi = _check_int_range(low, high, dt)
    return _random(
        lambda s: _draw_int(g, s, dt, lo, hi),
        _size((size,), "randint"),
        requires_grad,
        device,
        "randint",
        dt,
    )


def _float_bounds(low, high, dt, digits):
    """PyTorch's ``update_from``/``update_to``: a bound whose neighbour inward rounds
    outward in the float dtype ``dt`` (``digits`` significant bits) moves inward to the
    next representable integer."""
    up = int(np.dtype(dt).type(low + 1))
    if up < low:
        low = up + (1 << (abs(low + 1).bit_length() - 1 - digits + 1))
    down = int(np.dtype(dt).type(high - 1))
    if down >= high:
        high = down - (1 << (abs(high - 1).bit_length() - 1 - digits + 1))
    return low, high


def _check_int_range(low, high, dt):
    """``[low, high)`` as ints, checked as PyTorch's ``random_`` checks it for dtype ``dt``."""
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    kind = np.dtype(dt).kind
    if kind == "b":
        lo_ok, hi_ok = low >= 0, high - 1 <= 1
    elif kind in "iu":
        info = np.iinfo(dt)
        lo_ok, hi_ok = low >= info.min, high - 1 <= info.max
    else:  # a float dtype: every integer up to 2**mantissa is exact (PyTorch warns)
        digits = np.finfo(dt).nmant + 1
        lim = 2**digits
        for name, ok in (("from", low >= -lim), ("to - 1", high - 1 <= lim)):
            if not ok:
                warnings.warn(
                    f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {np.dtype(dt).name} can support discrete uniform "
                    "distribution only within this range.",
                    UserWarning,
                    stacklevel=3,
                )
        lo_ok = hi_ok = True
        low, high = _float_bounds(low, high, dt, digits)
    if not lo_ok:
        raise RuntimeError(f"from is out of bounds for {np.dtype(dt).name}")
    if not hi_ok:
        raise RuntimeError(f"to - 1 is out of bounds for {np.dtype(dt).name}")
    if low < -(2**63) or high - low > 2**64 - 1:
        raise RuntimeError(f"random_: the range [{low}, {high}) does not fit in 64 bits")
    return low, high


def randperm(n, *, dtype=None, device=None, generator=None):
    """A random permutation of the integers ``0`` to ``n - 1``.

    On a CUDA device it is drawn there: ``n`` random 62-bit keys (one Philox block each,
    NOTE [CUDA random numbers]) sorted by the stable device ``argsort``; a tie (chance below
    ``n**2 / 2**63``) keeps index order.
    """
    dt = np.int64 if dtype is None else D.as_dtype(dtype).np
    n = int(n)
    dev = _device_target(device)
    _size((n,))  # (a negative ``n``: PyTorch's "negative dimension" error)
    if dev is None:
        g = _gen(generator)
    if HOOKS.random is not None:  # under vmap: one permutation per example ('different')

        def make(shape):  # (rows drawn one after another; on CUDA not supported there)
            rows = _numel(shape[:-1])
            return _draw_randperm(g, n, dt, rows).reshape(shape)

        batched = HOOKS.random(make if dev is None else None, (n,), "randperm")
        if batched is not None:
            return batched
    if dev is not None:
        cuda = backend("cuda")  # loaded on first use (NOTE [Optional engines])
        keys = _cuda_draw(_device_empty(_size((n,)), np.int64, dev), "randint", generator, 0, 2**62)
        perm = cuda.argsort(keys, 0)
        return _finish(perm if perm.dtype == dt else perm.astype(dt), False, dev)
    return _finish(_draw_randperm(g, n, dt)[0], False, device)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    D.check_memory_format(memory_format, "randn_like")
    return randn(
        input.shape,
        dtype=dtype or input.dtype,
        requires_grad=requires_grad,
        device=_like_device(input, device),
    )


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    D.check_memory_format(memory_format, "rand_like")
    return rand(
        input.shape,
        dtype=dtype or input.dtype,
        requires_grad=requires_grad,
        device=_like_device(input, device),
    )


def _random_like(input, kind, param, what):
    """A CPU draw of ``input``'s shape and dtype as a random factory (recorded by
    ``numbagrad.compile``, batched by vmap, NOTE [Randomness under vmap]):
    ``empty_like(input).bernoulli_(param)`` (``kind='bernoulli'``) or
    ``.exponential_(param)`` (``'exponential'``); None for a CUDA ``input`` (the caller
    draws with ``rand_like`` there)."""
    device = _like_device(input, None)
    if _device_target(device) is not None:
        return None
    g = _gen(None)
    dt = input.dtype.np
    if kind == "bernoulli":
        make = lambda s: _draw_bernoulli(g, s, dt, float(param))  # noqa: E731
    else:
        make = lambda s: _draw_exponential(g, s, dt, float(param))  # noqa: E731
    return _random(make, tuple(input.shape), False, device, what, dt)


def _rrelu_noise(input, lower, upper):
    """PyTorch's CPU ``rrelu`` slopes for a plain CPU float ``input``: a double uniform on
    ``[lower, upper)`` (rounded to ``input``'s dtype) for each element ``<= 0`` in order, 1
    elsewhere; None for any other tensor (a transform's value, a CUDA tensor), whose
    slopes the caller draws with ``rand_like``."""
    x = input._data
    if input._is_tracer or type(x) is not np.ndarray or x.dtype.kind != "f":
        return None
    g = _gen(None)
    flat = np.ascontiguousarray(x).reshape(-1)
    hit = flat <= 0
    units = np.empty(int(hit.sum()), np.float64)
    _RK.uniform_f64(g._mt, g._pos, units, 0.0, 1.0)
    # (ATen's rrelu is compiled without FMA: ``x * (upper - lower) + lower`` rounds twice)
    # (the bounds in ``input``'s dtype, as ATen's ``opmath`` bounds)
    lo, hi = float(x.dtype.type(lower)), float(x.dtype.type(upper))
    slopes = units * (hi - lo) + lo
    noise = np.ones(flat.size, x.dtype)
    noise[hit] = slopes.astype(x.dtype)
    return Tensor._make(noise.reshape(x.shape))


def randint_like(input, low, high=None, *, dtype=None, device=None, memory_format=None):
    D.check_memory_format(memory_format, "randint_like")
    return randint(
        low,
        high,
        tuple(input.shape),
        dtype=dtype or input.dtype,
        device=_like_device(input, device),
    )


def _data_of(x):
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def normal(
    mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False
):
    """Normal samples with the given ``mean`` and ``std`` (``torch.normal``).

    ``normal(mean, std)`` with a tensor among them broadcasts them (the result takes the
    tensors' dtype); ``normal(mean, std, size)`` with two numbers draws ``size`` samples.
    Samples are not differentiable with respect to ``mean``/``std`` (PyTorch's are not
    either: reparameterise as ``mean + std * randn(...)`` for that).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.normal(2.0, 0.0, (2,))
    tensor([2., 2.])
    """
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if tensors:
        out = _random_of_tensors(
            lambda *ts: normal(
                *_substitute((mean, std), ts),
                size,
                generator=generator,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
            ),
            tensors,
            "normal",
        )
        if out is not None:
            return out
    on_cuda = [t for t in tensors if _is_cuda(t)]
    if on_cuda:  # drawn on the device (NOTE [CUDA random numbers])
        if size is not None:
            raise RuntimeError("normal(): size= is only accepted with a float mean and std")
        return _normal_cuda(mean, std, tensors, on_cuda[0], generator, dtype, requires_grad)
    g = _gen(generator) if tensors or _device_target(device) is None else None
    if tensors:
        if size is not None:
            raise RuntimeError("normal(): size= is only accepted with a float mean and std")
        m, s = _data_of(mean), _data_of(std)
        if np.any(s < 0):
            raise RuntimeError(f"normal expects all elements of std >= 0.0, got {s.min()}")
        npd = D.result_type(*tensors).np if dtype is None else D.as_dtype(dtype).np
        if np.dtype(npd).kind != "f":
            raise RuntimeError("normal(): mean and std must be floating point tensors")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        # PyTorch, in the result's dtype: ``out.normal_(0, 1).mul_(std).add_(mean)``, or
        # ``out.normal_(0, std).add_(mean)`` for a number ``std``
        if isinstance(std, Tensor):
            z = _draw_normal(g, shape, npd)
            out = np.multiply(z, np.asarray(s, dtype=npd), dtype=npd)
        else:
            out = _draw_normal(g, shape, npd, 0.0, float(std))
        out = np.add(out, np.asarray(m, dtype=npd), dtype=npd)
        return _finish(np.asarray(out, dtype=npd, order="C"), requires_grad, device)
    if size is None:
        raise TypeError("normal() with a float mean and std needs size=")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dt = _dt(dtype)
    dev = _device_target(device)
    if dev is not None:
        _cuda_float(dt, "normal_kernel_cuda")
        shape = _size((size,), "normal")
        return _cuda_random("normal", shape, dt, dev, generator, mean, std, requires_grad, "normal")
    return _random(
        lambda sz: _draw_normal(g, sz, dt, mean, std),
        _size((size,), "normal"),
        requires_grad,
        device,
        "normal",
        dt,
    )


def _is_cuda(t):
    if t._is_tracer and t._interp.level is None:
        return False  # (a func transform's value: its device is its base value's, not here)
    return getattr(t._data, "_numbagrad_device", False)  # (a forward_ad dual: its primal's)


def _substitute(values, tensors):
    """``values`` with its tensors replaced, in order, by ``tensors``."""
    it = iter(tensors)
    return tuple(next(it) if isinstance(v, Tensor) else v for v in values)


def _normal_cuda(mean, std, tensors, like, generator, dtype, requires_grad):
    """``normal(mean, std)`` with a CUDA tensor among them: ``mean + std * z`` for ``z``
    drawn on the device; the check of ``std`` reads one bool to the host (as PyTorch's
    ``std.min() >= 0`` check does)."""
    m, s = _data_of(mean), _data_of(std)
    if _is_cuda_array(s):
        if bool((s < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif np.any(np.asarray(s) < 0):
        raise RuntimeError(f"normal expects all elements of std >= 0.0, got {np.min(s)}")
    npd = D.result_type(*tensors).np if dtype is None else D.as_dtype(dtype).np
    if np.dtype(npd).kind != "f":
        raise RuntimeError("normal(): mean and std must be floating point tensors")
    shape = tuple(np.broadcast_shapes(np.shape(m), np.shape(s)))
    dev = like.device
    z = _cuda_draw(_device_empty(shape, np.float64, dev), "normal", generator)
    out = (z * s) + m
    out = out.astype(npd) if out.dtype != npd else out
    return _finish(out, requires_grad, dev)


def _is_cuda_array(a):
    return getattr(a, "_numbagrad_device", False)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``input`` elementwise (or ``p`` when given), with
    ``input``'s shape and dtype (``torch.bernoulli``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.bernoulli(numbagrad.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    out = _random_of_tensors(
        lambda *ts: bernoulli(*_substitute((input, p), ts), generator=generator),
        [x for x in (input, p) if isinstance(x, Tensor)],
        "bernoulli",
    )
    if out is not None:
        return out
    if _is_cuda(input):
        return _bernoulli_cuda(input, p, generator)
    g = _gen(generator)
    if p is not None and not isinstance(p, Tensor):  # ``empty_like(input).bernoulli_(p)``
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        out = _draw_bernoulli(g, tuple(input.shape), input._data.dtype, float(p))
        return Tensor._make(np.asarray(out, order="C"))
    probs = _data_of(input) if p is None else np.broadcast_to(_data_of(p), input.shape)
    if np.any((probs < 0) | (probs > 1)) or np.any(np.isnan(probs)):
        raise RuntimeError("bernoulli(): all elements of the probability must be in [0, 1]")
    out = _draw_bernoulli(g, tuple(input.shape), input._data.dtype, np.asarray(probs))
    return Tensor._make(np.asarray(out, order="C"))  # (ascontiguousarray makes 0-d 1-D)


def _bernoulli_cuda(input, p, generator):
    """``bernoulli`` of a CUDA tensor, drawn on the device (NOTE [CUDA random numbers]): a
    number ``p`` in one kernel; probabilities in a tensor as ``uniform < p``, after a check
    that reads one bool to the host (PyTorch's CUDA kernel asserts on the device instead)."""
    data = input._data
    out = type(data).empty(data.shape, data.dtype, data.device_index)
    if p is not None and not isinstance(p, Tensor):
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        return Tensor._make(_cuda_draw(out, "bernoulli", generator, float(p)))
    probs = data if p is None else p._data
    if not _is_cuda_array(probs):  # a 0-d CPU tensor may join (a number)
        return _bernoulli_cuda(input, float(probs), generator)
    if bool(((probs < 0) | (probs > 1) | ~(probs == probs)).any()):
        raise RuntimeError("bernoulli(): all elements of the probability must be in [0, 1]")
    u = _cuda_draw(
        type(data).empty(data.shape, np.float64, data.device_index), "uniform", generator
    )
    cuda = backend("cuda")  # loaded on first use (NOTE [Optional engines])
    cuda.copy_into(out, u < probs)
    return Tensor._make(out)


def poisson(input, generator=None):
    """Poisson samples with rate ``input`` elementwise (``torch.poisson``), in its dtype.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.poisson(numbagrad.zeros(3))
    tensor([0., 0., 0.])
    """
    out = _random_of_tensors(lambda t: poisson(t, generator), [input], "poisson")
    if out is not None:
        return out
    if _is_cuda(input):
        return _poisson_cuda(input, generator)
    lam = _data_of(input)
    if np.any(lam < 0) or np.any(np.isnan(lam)):
        raise RuntimeError("poisson(): invalid Poisson rate, expected rate to be non-negative")
    g = _gen(generator)
    draws = np.empty(lam.size, np.float64)
    _RK.poisson(g._mt, g._pos, np.ascontiguousarray(lam, np.float64).reshape(-1), draws)
    out = np.asarray(draws.reshape(lam.shape), dtype=input._data.dtype, order="C")
    return Tensor._make(out)  # (a 0-d rate: a 0-d result, not ascontiguousarray's 1-D)


def _poisson_cuda(input, generator):
    """``poisson`` of a CUDA tensor, drawn on the device (NOTE [CUDA random numbers]); the
    check of the rates reads one bool to the host."""
    lam = input._data
    if lam.dtype.kind != "f":
        raise NotImplementedError(
            f"\"poisson_cuda\" not implemented for '{_C_NAMES.get(lam.dtype.name, lam.dtype.name)}'"
        )
    if lam.size and bool(((lam < 0) | ~(lam == lam)).any()):
        raise RuntimeError("poisson(): invalid Poisson rate, expected rate to be non-negative")
    cuda = backend("cuda")  # loaded on first use (NOTE [Optional engines])
    out = type(lam).empty(lam.shape, lam.dtype, lam.device_index)
    g = _cuda_gen(generator, lam.device_index)
    cuda.poisson_fill(out, lam, g._seed, g._offset)
    g._offset += 4 * out.size
    return Tensor._make(out)


def _multinomial_cuda(w, num_samples, replacement, generator):
    """``multinomial`` of CUDA weights ``w`` (checked 1-d or 2-d floating), drawn on the
    device (NOTE [CUDA random numbers]): with replacement by inverse CDF (a running sum per
    row and a binary search per sample); without, by the exponential race (PyTorch's
    algorithm): the ``num_samples`` smallest of ``E / w`` per row, ``E`` exponential, as
    ``topk(w / E)``. The checks of the weights read three flags to the host at once (PyTorch
    checks them on the host too)."""
    cuda = backend("cuda")  # loaded on first use (NOTE [Optional engines])
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    nrow, ncat = rows.shape
    bad = cuda.reduce("any", (rows < 0) | ~cuda.map("isfinite", rows), None, False)
    total = cuda.sum(rows, 1, False, None)
    empty = cuda.reduce("any", total <= 0, None, False)
    few = cuda.full((), False, np.bool_)
    if not replacement:
        few = cuda.reduce("any", cuda.sum(rows > 0, 1, False, None) < num_samples, None, False)
    flags = cuda.stack([bad, empty, few], 0).to_host()
    if flags[0]:
        raise RuntimeError(
            "multinomial(): probability tensor contains either `inf`, `nan` or element < 0"
        )
    if flags[1]:
        raise RuntimeError(
            "multinomial(): invalid multinomial distribution (sum of probabilities <= 0)"
        )
    if flags[2]:
        raise RuntimeError(
            "multinomial(): invalid multinomial distribution (with replacement=False, not "
            "enough non-negative category to sample)"
        )
    dev_index = w.device_index
    if replacement:
        cdf = cuda.scan("cumsum", rows, 1)
        u = _cuda_draw(
            type(w).empty((nrow, num_samples), np.float64, dev_index), "uniform", generator
        )
        out = cuda.categorical(cdf, u)
    else:
        e = _cuda_draw(
            type(w).empty((nrow, ncat), np.float64, dev_index), "exponential", generator, 1.0
        )
        keys = cuda.binary("true_divide", e, rows)  # weight 0: inf (or NaN): sorted last
        out = cuda.argsort(keys, 1)[:, :num_samples].copy()
    return out.reshape((*w.shape[:-1], num_samples))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categorical distributions in the rows of ``input`` (non-negative
    weights, not necessarily normalised), ``num_samples`` per row (``torch.multinomial``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.multinomial(numbagrad.tensor([0.0, 0.0, 1.0]), 2, replacement=True)
    tensor([2, 2])
    """
    if input.ndim not in (1, 2):
        raise RuntimeError("multinomial(): prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError("multinomial(): expected a floating point probability tensor")
    if num_samples <= 0:
        raise RuntimeError("multinomial(): cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError(
            "multinomial(): cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    out = _random_of_tensors(  # (under vmap the rows of every example: any leading dims)
        lambda t: Tensor._make(_multinomial_rows(t._data, num_samples, replacement, generator)),
        [input],
        "multinomial",
    )
    if out is not None:
        return out
    return Tensor._make(_multinomial_rows(input._data, num_samples, replacement, generator))


def _multinomial_rows(w, num_samples, replacement, generator):
    """``multinomial`` of the rows of array ``w`` (any leading dims, checked floating)."""
    if _is_cuda_array(w):
        return _multinomial_cuda(w, num_samples, replacement, generator)
    dt = w.dtype if w.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    rows = np.ascontiguousarray(w.reshape(-1, w.shape[-1]), dt)
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError(
            "multinomial(): probability tensor contains either `inf`, `nan` or element < 0"
        )
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError(
            "multinomial(): invalid multinomial distribution (sum of probabilities <= 0)"
        )
    g = _gen(generator)
    if not replacement or num_samples == 1:
        # PyTorch's CPU path: the largest ``w / q`` per row, ``q`` exponential draws in
        # ``w``'s dtype (a zero weight can be drawn once the positive ones are exhausted)
        q = _draw_exponential(g, rows.shape, dt, 1.0)
        keys = np.divide(rows, q, dtype=dt)
        if num_samples == 1:
            out = np.argmax(keys, axis=1)[:, None]
        else:
            out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
        out = np.ascontiguousarray(out, np.int64)
    else:
        out = np.empty((rows.shape[0], num_samples), np.int64)
        _RK.multinomial_with_replacement(g._mt, g._pos, rows, out, np.empty(rows.shape[1], dt))
    return out.reshape(*w.shape[:-1], num_samples)


# -- in-place random fills (Tensor.uniform_ and friends) ------------------------------------
def _fill_random(t, make, kind=None, generator=None, a=0.0, b=1.0, flat_make=None):
    """Overwrite ``t`` with ``make(shape)`` (an array) through ``copy_``: the version bumps and
    an old value in a graph gets a zero gradient, as PyTorch's random fills. A CUDA tensor
    gets ``kind`` samples (``_cuda_draw``) drawn on the device instead. A strided
    (non-contiguous) ``t`` is filled in its memory order, as ATen's TensorIterator
    visits it, from ``flat_make`` (default ``make``) of its element count."""
    if kind is not None and _is_cuda(t):
        data = t._data
        out = type(data).empty(data.shape, data.dtype, data.device_index)
        return t.copy_(Tensor._make(_cuda_draw(out, kind, generator, a, b)))
    npd = t.dtype.np

    def draw(shape):
        return np.asarray(make(shape), dtype=npd, order="C")

    if HOOKS.random is not None:  # under vmap (NOTE [Randomness under vmap])
        batched = HOOKS.random(draw, tuple(t.shape), "an in-place random fill", fill=t)
        if batched is not None:
            return t.copy_(batched)
    data = None if t._is_tracer else t._data
    if type(data) is np.ndarray and not data.flags.c_contiguous:
        values = np.asarray((flat_make or make)((data.size,)), dtype=npd)
        return t.copy_(Tensor._make(_in_memory_order(values, data)))
    return t.copy_(Tensor._make(draw(tuple(t.shape))))


def _check_float(t, name):
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{name} is implemented for floating point tensors only, got {t.dtype}")


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fill with uniform samples on ``[from, to)`` in place (``from`` may be passed by name).

    Examples
    --------
    >>> import numbagrad
    >>> x = numbagrad.empty(4).uniform_(2.0, 2.0)
    >>> x
    tensor([2., 2., 2., 2.])
    """
    lo = kw.pop("from", from_)
    if kw:
        raise TypeError(f"uniform_() got unexpected keyword arguments {sorted(kw)}")
    _check_float(self, "uniform_")
    if lo > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={lo} > to={to}"
        )
    npd = self.dtype.np
    return _fill_random(
        self, lambda s: _draw_uniform(_gen(generator), s, npd, lo, to), "uniform", generator, lo, to
    )


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples of ``mean`` and ``std`` in place."""
    _check_float(self, "normal_")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    npd = self.dtype.np
    return _fill_random(
        self,
        lambda s: _draw_normal(_gen(generator), s, npd, mean, std),
        "normal",
        generator,
        mean,
        std,
        flat_make=lambda s: _draw_normal(_gen(generator), s, npd, mean, std, flat=True),
    )


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a tensor) in place."""
    if _is_cuda(self):  # drawn on the device (NOTE [CUDA random numbers])
        return self.copy_(_bernoulli_cuda(self, p, generator))
    if isinstance(p, Tensor) and (self._is_tracer or p._is_tracer):
        # a transform's probabilities: bernoulli's rule (NOTE [Randomness under vmap])
        return self.copy_(bernoulli(p.to(self.dtype).expand(self.shape), generator=generator))
    probs = _data_of(p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    g = _gen(generator)
    npd = self.dtype.np
    if isinstance(p, Tensor):  # probabilities of their own dtype, broadcast to self
        if not p.dtype.is_floating_point:
            raise RuntimeError(f"bernoulli_ expects a floating point p, got {p.dtype}")
        return _fill_random(self, lambda s: _draw_bernoulli(g, s, npd, np.asarray(probs)))
    return _fill_random(self, lambda s: _draw_bernoulli(g, s, npd, float(probs)))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate ``lambd`` in place."""
    _check_float(self, "exponential_")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill_random(
        self,
        lambda s: _draw_exponential(_gen(generator), s, self.dtype.np, lambd),
        "exponential",
        generator,
        lambd,
    )


def random_(self, from_=None, to=None, *, generator=None, **kw):
    """Fill with integers: ``random_(to)`` from ``[0, to)``, ``random_(from, to)`` from
    ``[from, to)``, ``random_()`` from ``[0, 2**mantissa]`` for floats (every integer the
    dtype holds exactly) or ``[0, max]`` for integer dtypes."""
    lo = kw.pop("from", from_)
    if kw:
        raise TypeError(f"random_() got unexpected keyword arguments {sorted(kw)}")
    npd = self.dtype.np
    if to is None and lo is not None:
        lo, to = 0, lo
    if lo is None and not _is_cuda(self):  # ATen's ``random_()``: a draw modulo the range
        return _fill_random(self, lambda s: _draw_int_default(_gen(generator), s, npd))
    if lo is None:
        lo = 0
        if npd.kind == "f":
            to = 2 ** (np.finfo(npd).nmant + 1) + 1
        elif npd.kind == "b":
            to = 2
        else:
            to = int(np.iinfo(npd).max)
    if lo >= to:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={to}"
        )
    lo, to = _check_int_range(lo, to, npd)
    return _fill_random(
        self, lambda s: _draw_int(_gen(generator), s, npd, lo, to), "randint", generator, lo, to
    )


for _fn in (uniform_, normal_, bernoulli_, exponential_, random_):
    setattr(Tensor, _fn.__name__, _fn)
# (Tensor's method table, declared in _tensor_methods.pyi: NOTE [Type stubs])
Tensor.bernoulli = lambda self, p=None, *, generator=None: bernoulli(  # type: ignore[method-assign]
    self, p, generator=generator
)
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: multinomial(  # type: ignore[method-assign]
    self, num_samples, replacement, generator=generator
)
