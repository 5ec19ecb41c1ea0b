"""Tensor creation: from data, filled, ranges and random (NumPy's generator underneath)."""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad._device import device as _device
from numbagrad._tensor import Tensor

__all__ = [
    "arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like",
    "linspace", "manual_seed", "ones", "ones_like", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "scalar_tensor", "tensor", "zeros",
    "zeros_like",
]


def _finish(arr, requires_grad, device):
    if device is not None:
        _device(device)  # validates: only 'cpu' for now
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _infer_np_dtype(data, to_float=False):
    """The dtype PyTorch infers for nested Python data: bool, int64 or the default float.
    Python ints beyond int64 are an error unless a float is among them or ``to_float`` (the
    tensor asked for is floating)."""
    a = np.asarray(data)
    k = a.dtype.kind
    # NumPy makes Python ints beyond int64 uint64, float64 (with smaller ints) or objects
    if k in "uO" or (k == "f" and a.size and not np.all(np.abs(a) < 2.0 ** 63)):
        a = _big_ints(data, a, to_float)
        k = a.dtype.kind
    if k == "b":
        return a, np.bool_
    if k in "iu":
        return a, np.int64
    if k == "f":
        return a, D.get_default_dtype().np
    raise TypeError(f"could not convert data of type {a.dtype} to a tensor")


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
        raise TypeError("could not build a tensor: ragged or mixed nested sequences "
                        "(all rows must have the same length)")
    big = any(isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 63
              for v in vals)
    if big and not to_float and not any(isinstance(v, (float, np.floating)) for v in vals):
        raise ValueError("Overflow when unpacking long long")
    return a.astype(np.float64) if a.dtype.kind == "O" else a


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple))
                                                for x in data):
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
        arr = data._data
        npd = arr.dtype if dtype is None else D.as_dtype(dtype).np
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        npd = D.from_numpy_dtype(arr.dtype).np if dtype is None else D.as_dtype(dtype).np
    else:
        data = _unwrap_nested(data)
        arr, inferred = _infer_np_dtype(
            data, dtype is not None and D.as_dtype(dtype).is_floating_point)
        npd = inferred if dtype is None else D.as_dtype(dtype).np
    return _finish(np.array(arr, dtype=npd, copy=True, order="C"), requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor` but shares memory with a NumPy array (or tensor) when possible."""
    if isinstance(data, Tensor):
        return data if dtype is None or D.as_dtype(dtype) is data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or D.as_dtype(dtype).np == data.dtype):
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
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return Tensor._make(ndarray)


def scalar_tensor(value, *, dtype=None, requires_grad=False):
    """A 0-d tensor holding ``value``."""
    return tensor(value, dtype=dtype or D.get_default_dtype(), requires_grad=requires_grad)


_INT64_MAX = 2 ** 63 - 1


def _size(size, name="empty"):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for i, s in enumerate(size):
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a tuple of ints, but got an element of type "
                            f"{type(s).__name__}")
        if not -_INT64_MAX - 1 <= s <= _INT64_MAX:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long\"")
    for s in size:
        if s < 0:
            if name == "zeros":  # PyTorch's zeros checks first, in its own words
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(int(s) for s in size)


def _check_size(shape, np_dtype):
    """PyTorch's checks before it allocates a contiguous ``shape``: the byte count and the
    strides must fit in int64 (RuntimeError naming the sizes, not NumPy's ValueError)."""
    n, overflow = 1, False
    for s in shape:  # the running product in uint64, as c10::safe_multiplies_u64
        n *= s
        overflow = overflow or n > 2 ** 64 - 1
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
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to "
                           f"allocate {nbytes} bytes. Error code 12 (Cannot allocate "
                           "memory)") from None


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "int32": "int",
                 "int64": "int64_t", "bool": "bool"}


def _fill_value(value, np_dtype):
    """``value`` checked as PyTorch checks a fill value for ``np_dtype``: Python ints from
    -2**63 to 2**64 - 1, and a value the dtype cannot hold (an integer out of range, inf or
    nan for an integer dtype, a finite float beyond float32's range) raises."""
    if isinstance(value, np.generic):
        value = value.item()
    if np_dtype.kind == "b" and isinstance(value, (int, float)):
        return bool(value)  # anything converts to bool
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value  # bools always fit; tensors and others: as NumPy does
    if isinstance(value, int):
        if value < -_INT64_MAX - 1:
            raise OverflowError("can't convert negative int to unsigned")
        if value > 2 ** 64 - 1:
            raise OverflowError("int too big to convert")
    kind = np_dtype.kind
    if kind in "iu":
        info = np.iinfo(np_dtype)
        if isinstance(value, float):  # compared as doubles, as c10::overflows
            bad = not math.isfinite(value) or value > float(info.max) \
                or value < float(info.min)
        else:
            bad = not info.min <= value <= info.max
    elif kind == "f":
        v = float(value)
        bad = math.isfinite(v) and abs(v) > float(np.finfo(np_dtype).max)
    else:
        bad = False
    if bad:
        raise RuntimeError(f"value cannot be converted to type "
                           f"{_C_TYPE_NAMES.get(np_dtype.name, np_dtype.name)} without "
                           "overflow")
    return value


def _dt(dtype):
    return (D.get_default_dtype() if dtype is None else D.as_dtype(dtype)).np


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of the given size (default float dtype)."""
    shape, dt = _size(size, "zeros"), _dt(dtype)
    return _finish(_alloc(lambda: np.zeros(shape, dt), shape, dt), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of the given size (default float dtype)."""
    shape, dt = _size(size, "ones"), _dt(dtype)
    return _finish(_alloc(lambda: np.ones(shape, dt), shape, dt), requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of the given size."""
    shape, dt = _size(size, "empty"), _dt(dtype)
    return _finish(_alloc(lambda: np.empty(shape, dt), shape, dt), requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor filled with ``fill_value``; its dtype is inferred from the value."""
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
    shape, dt = _size((size,), "full"), _dt(dtype)
    value = _fill_value(fill_value, dt)
    return _finish(_alloc(lambda: np.full(shape, value, dt), shape, dt), requires_grad,
                   device)


def _like(t, dtype):
    if t._is_tracer:  # a transform's tracer has metadata but no array
        return tuple(t.shape), D.as_dtype(t.dtype if dtype is None else dtype).np
    return t._data.shape, (t._data.dtype if dtype is None else D.as_dtype(dtype).np)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    """Zeros with ``input``'s shape and dtype."""
    shape, dt = _like(input, dtype)
    return _finish(_alloc(lambda: np.zeros(shape, dt), shape, dt), requires_grad, device)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    """Ones with ``input``'s shape and dtype."""
    shape, dt = _like(input, dtype)
    return _finish(_alloc(lambda: np.ones(shape, dt), shape, dt), requires_grad, device)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    """Uninitialised, with ``input``'s shape and dtype."""
    shape, dt = _like(input, dtype)
    return _finish(_alloc(lambda: np.empty(shape, dt), shape, dt), requires_grad, device)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    """Filled with ``fill_value``, with ``input``'s shape and dtype."""
    shape, dt = _like(input, dtype)
    value = _fill_value(fill_value, dt)
    return _finish(_alloc(lambda: np.full(shape, value, dt), shape, dt), requires_grad,
                   device)


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
    return _finish(_alloc(lambda: np.linspace(start, end, steps, dtype=dt), (steps,), dt),
                   requires_grad, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n x m`` identity matrix."""
    dt = _dt(dtype)
    shape = (n, n if m is None else m)
    if shape[0] * shape[1] > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    return _finish(_alloc(lambda: np.eye(n, m, dtype=dt), shape, dt), requires_grad, device)


# -- random -------------------------------------------------------------------------------
class _RNG:
    """The global generator: NumPy's PCG64, reseeded by :func:`manual_seed`."""

    gen = np.random.default_rng()


def manual_seed(seed: int):
    """Seed the global random generator; the same seed gives the same stream.

    Examples
    --------
    >>> import numbagrad
    >>> _ = numbagrad.manual_seed(0); a = numbagrad.rand(3)
    >>> _ = numbagrad.manual_seed(0); b = numbagrad.rand(3)
    >>> bool((a == b).all())
    True
    """
    _RNG.gen = np.random.default_rng(int(seed))
    return _RNG


def seed() -> int:
    """Seed the generator from OS entropy; returns the seed used."""
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


# NOTE [Randomness under vmap]: set by ``numbagrad._transforms.batching`` when it is
# imported (a late-bound hook, like ``_tensor._F``): called by each random function, it
# returns None outside vmap, raises under ``randomness='error'``, returns None for
# ``'same'`` and ``wrap(array_maker)`` for ``'different'`` (one draw per batch element).
RANDOM_HOOK = None


def _random(make, size, requires_grad, device, what, np_dtype=None):
    if RANDOM_HOOK is not None:
        batched = RANDOM_HOOK(make, size, what)
        if batched is not None:
            return batched
    if np_dtype is None:
        return _finish(make(size), requires_grad, device)
    return _finish(_alloc(lambda: make(size), size, np_dtype), requires_grad, device)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard normal samples of the given size."""
    g = (generator or _RNG).gen
    dt = _dt(dtype)
    return _random(lambda s: g.standard_normal(s, dtype=np.float64).astype(dt, copy=False),
                   _size(size, "randn"), requires_grad, device, "randn", dt)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform samples on ``[0, 1)`` of the given size."""
    g = (generator or _RNG).gen
    dt = _dt(dtype)
    return _random(lambda s: g.random(s, dtype=np.float64).astype(dt, copy=False),
                   _size(size, "rand"), requires_grad, device, "rand", dt)


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False,
            generator=None):
    """Uniform integers in ``[low, high)``; ``randint(high, size)`` is accepted too."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    g = (generator or _RNG).gen
    dt = np.int64 if dtype is None else D.as_dtype(dtype).np
    return _random(lambda s: g.integers(low, high, s).astype(dt), _size((size,), "randint"),
                   requires_grad, device, "randint", dt)


def randperm(n, *, dtype=None, device=None, generator=None):
    """A random permutation of ``0 .. n-1``."""
    g = (generator or _RNG).gen
    dt = np.int64 if dtype is None else D.as_dtype(dtype).np
    if RANDOM_HOOK is not None:
        RANDOM_HOOK(None, (n,), "randperm")
    return _finish(g.permutation(n).astype(dt), False, device)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return randn(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return rand(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None):
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)
