"""Data types and PyTorch's type-promotion rules.

NOTE [Type promotion]
PyTorch promotes in three priority groups: tensors with one or more dimensions, zero-dim
tensors, and Python scalars ("wrapped numbers"). A lower group only changes the result when
it belongs to a higher *category* (bool < integer < floating), so ``float32_tensor * 2.5``
stays float32 while ``int64_tensor * 2.5`` becomes the default float dtype. Python floats
take the default dtype, Python ints int64. ``result_type`` below implements exactly that.
Complex is a fourth category above floating: a Python complex takes the default complex
dtype (``complex64`` when the default dtype is float32, ``complex128`` for float64), and a
complex lower group over a floating higher one keeps the higher one's precision
(``float32_tensor * complex128_0d`` is complex64), as PyTorch's ``combine_categories``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "bool",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "dtype",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "int32",
    "int64",
    "promote_types",
    "set_default_dtype",
]

_builtin_bool = bool


class dtype:
    """A tensor element type (``numbagrad.float16``, ``float32``, ``float64``, ``complex64``,
    ``complex128``, ``int32``, ``int64``, ``bool``; no ``bfloat16`` or ``complex32``: NumPy
    has no such types).

    Attributes
    ----------
    is_floating_point : bool
        True for ``float16``, ``float32`` and ``float64`` (False for the complex dtypes).
    is_complex : bool
        True for ``complex64`` and ``complex128``.
    itemsize : int
        Bytes per element.
    """

    __slots__ = ("_category", "_name", "is_floating_point", "is_signed", "itemsize", "np")

    def __init__(self, name: str, np_dtype, category: int):
        self._name = name
        self.np = np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_signed = name != "bool"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"numbagrad.{self._name}"

    def __reduce__(self):
        return (_by_name, (self._name,))

    @property
    def is_complex(self) -> _builtin_bool:
        return self._category == 3

    def to_complex(self) -> dtype:
        """The complex dtype of this floating dtype (``float32`` -> ``complex64``); a
        complex dtype is returned as it is."""
        if self._category == 3:
            return self
        if self is float64:
            return complex128
        if self is float32:
            return complex64
        if self is float16:
            raise TypeError(
                "numbagrad has no complex32 (ComplexHalf) dtype: NumPy has no such type; "
                "use complex64"
            )
        raise TypeError(f"to_complex is only supported for floating point dtypes, got {self}")

    def to_real(self) -> dtype:
        """The real dtype of this complex dtype (``complex64`` -> ``float32``); a real
        dtype is returned as it is."""
        if self is complex128:
            return float64
        if self is complex64:
            return float32
        return self


float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
bool = dtype("bool", np.bool_, 0)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
cfloat = complex64
cdouble = complex128

_ALL = (float16, float32, float64, int32, int64, bool, complex64, complex128)
_FROM_NP = {d.np: d for d in _ALL}
_BY_NAME = {d._name: d for d in _ALL}
# aliases PyTorch also accepts
_BY_NAME.update(
    {
        "float": float32,
        "double": float64,
        "long": int64,
        "int": int32,
        "half": float16,
        "cfloat": complex64,
        "cdouble": complex128,
    }
)

_NO_COMPLEX32 = (
    "numbagrad has no complex32 (chalf, ComplexHalf) dtype: NumPy has no such type; "
    "use complex64 (cfloat) or complex128 (cdouble)"
)


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


_default = [float32]


def get_default_dtype() -> dtype:
    """Return the default floating dtype (``float32`` unless changed).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.get_default_dtype()
    numbagrad.float32
    """
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype used for Python floats and new float tensors.

    Parameters
    ----------
    d : dtype
        ``numbagrad.float32``, ``numbagrad.float64`` or ``numbagrad.float16``.

    Raises
    ------
    TypeError
        If ``d`` is not a floating dtype.
    """
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def as_dtype(d) -> dtype:
    """Convert a numbagrad dtype, NumPy dtype, type or name to a numbagrad ``dtype``."""
    if isinstance(d, dtype):
        return d
    if d is _builtin_bool:
        return bool
    if d is float:
        return float64
    if d is int:
        return int64
    if d is complex:
        return complex128
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    if isinstance(d, str) and d in ("complex32", "chalf"):
        raise TypeError(_NO_COMPLEX32)
    try:
        npd = np.dtype(d)
    except TypeError:
        raise TypeError(f"cannot interpret {d!r} as a numbagrad dtype") from None
    try:
        return _FROM_NP[npd]
    except KeyError:
        raise TypeError(
            f"unsupported dtype {npd}; numbagrad supports float16, float32, float64, complex64, "
            "complex128, int32, int64 and bool"
        ) from None


def from_numpy_dtype(npd) -> dtype:
    """The numbagrad dtype of a NumPy dtype, or TypeError naming the supported ones."""
    try:
        return _FROM_NP[npd]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type {npd}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32 and bool."
        ) from None


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to safely (``torch.promote_types``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.promote_types(numbagrad.int64, numbagrad.float32)
    numbagrad.float32
    """
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca == 3 or cb == 3:  # complex: the wider of the two precisions
        if ca == cb:
            return a if a.itemsize >= b.itemsize else b
        c, other = (a, b) if ca == 3 else (b, a)
        if other is float64:
            return complex128
        return c
    if ca != cb:
        return a if ca > cb else b
    return a if a.itemsize >= b.itemsize else b


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # torch's combine_categories: a lower priority group only wins a higher category
    if higher is None:
        return lower
    if lower is None or higher._category == 3:
        return higher
    if lower._category == 3:
        # a complex lower group keeps a floating higher group's precision
        return higher.to_complex() if higher._category == 2 else lower
    if higher._category == 2:
        return higher
    if higher is bool or lower._category == 2:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar taking part in an op."""
    if isinstance(value, _builtin_bool):
        return bool
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return default_complex()
    return _default[0]


def default_complex() -> dtype:
    """The default complex dtype: the complex dtype of the default float dtype (complex64
    for float32 and float16, as PyTorch, complex128 for float64)."""
    return complex128 if _default[0] is float64 else complex64


def result_type(*operands) -> dtype:
    """Promote tensors and Python scalars as PyTorch does (see NOTE [Type promotion])."""
    dim = zero = scalar = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        elif isinstance(x, (int, float, complex, np.number, np.bool_)):
            s = scalar_dtype(x.item() if isinstance(x, (np.number, np.bool_)) else x)
            scalar = s if scalar is None else promote_types(scalar, s)
        else:
            raise TypeError(f"unsupported operand type {type(x).__name__}")
    # (not None: each operand sets one of the three or raises, and callers pass operands)
    return _combine(dim, _combine(zero, scalar))  # type: ignore[return-value]


class finfo:
    """Machine limits of a floating dtype (``torch.finfo``).

    Parameters
    ----------
    type : dtype, optional
        A floating dtype; the default dtype when omitted.

    Attributes
    ----------
    bits, eps, max, min, tiny, smallest_normal, resolution : int or float
        As NumPy's ``finfo`` (``tiny`` is ``smallest_normal``; ``resolution`` is
        ``10 ** -precision``).
    dtype : str
        The dtype's name, e.g. ``'float32'``.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.finfo(numbagrad.float32).eps
    1.1920928955078125e-07
    >>> numbagrad.finfo(numbagrad.float64).bits
    64
    """

    def __init__(self, type=None):
        d = _default[0] if type is None else as_dtype(type)
        if not d.is_floating_point:
            raise TypeError(
                f"numbagrad.finfo() requires a floating point input type, got "
                f"{d}. Use numbagrad.iinfo to handle it"
            )
        f = np.finfo(d.np)
        self.bits = int(f.bits)
        self.eps = float(f.eps)
        self.max = float(f.max)
        self.min = float(f.min)
        self.tiny = self.smallest_normal = float(f.smallest_normal)
        self.resolution = 10.0 ** -int(f.precision)  # as PyTorch: exact decimal power
        self.dtype = d._name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Machine limits of an integer dtype (``torch.iinfo``): ``bits``, ``max``, ``min``,
    ``dtype`` (its name).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.iinfo(numbagrad.int32).max
    2147483647
    """

    def __init__(self, type):
        d = as_dtype(type)
        if d.is_floating_point:
            raise TypeError(
                f"numbagrad.iinfo() requires an integer input type, got {d}. Use "
                "numbagrad.finfo to handle it"
            )
        if d is bool:
            raise TypeError("numbagrad.bool is not supported by numbagrad.iinfo")
        i = np.iinfo(d.np)
        self.bits = int(i.bits)
        self.max = int(i.max)
        self.min = int(i.min)
        self.dtype = d._name

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


# -- memory formats (``torch.memory_format``): layout tags, re-exported by numbagrad ---------
class memory_format:
    """A memory layout tag (``torch.memory_format``).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.preserve_format
    torch.preserve_format
    >>> numbagrad.zeros_like(numbagrad.ones(2), memory_format=numbagrad.preserve_format)
    tensor([0., 0.])
    """

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def check_memory_format(fmt, api):
    """Accept ``None`` or a format numbagrad's row-major storage satisfies; refuse the
    channels-last layouts, which it cannot hold."""
    if fmt is None or fmt is preserve_format or fmt is contiguous_format:
        return
    if fmt is channels_last or fmt is channels_last_3d:
        raise NotImplementedError(
            f"{api}: memory_format={fmt!r} is not supported: numbagrad "
            "stores tensors row-major (contiguous_format) only"
        )
    raise TypeError(
        f"{api}(): argument 'memory_format' must be numbagrad.memory_format, not "
        f"{type(fmt).__name__}"
    )
