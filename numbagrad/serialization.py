"""``save`` and ``load``: tensors and containers of them, in a documented zip format.

NOTE [Serialization format]
A file written by :func:`save` is a zip archive (stored, not compressed) holding:

``manifest.json``
    ``{"format": "numbagrad", "version": 1, "root": <object>, "storages": [...]}``.
    ``storages[k]`` is ``{"file": "storages/<k>.npy", "dtype": "float32", "numel": n}``.
``storages/<k>.npy``
    One flat array per storage (NumPy's ``.npy`` format, loaded with
    ``allow_pickle=False``). Views of one tensor share one storage entry, so they are
    written once and come back sharing memory (and a version counter).
``pickles/<k>.pkl`` (only with objects outside the allow-list)
    Python's pickle of one object; :func:`load` reads these only with
    ``weights_only=False``.

``<object>`` in the manifest is JSON: ``null``, ``true``/``false``, integers, strings as
themselves; a float as ``{"float": repr}`` (so inf and nan survive); a tensor as
``{"tensor": {"storage": k, "offset": o, "shape": [...], "stride": [...],
"requires_grad": b}}`` (offset and strides in elements; a ``"parameter": true`` entry for an
``nn.Parameter``); ``{"list": [...]}``, ``{"tuple": [...]}``, ``{"dict": [[key, value], ...],
"ordered": b}`` (keys are objects too, so int keys survive), ``{"dtype": name}``,
``{"size": [...]}``, ``{"device": "cpu"}``, ``{"pickle": k}``. Loading checks every offset and
stride against its storage before making a view, so a damaged or hostile file cannot make a
tensor that reads outside its memory.

NOTE [Safe globals]
``load(weights_only=True)`` never runs an unrestricted unpickler. A ``pickles/<k>.pkl`` entry
is read by ``_WeightsOnlyUnpickler``, whose ``find_class`` resolves only the allowed globals:
PyTorch's defaults for containers and builtins (``collections.OrderedDict``,
``collections.Counter``, ``set``, ``complex``, ``bytearray``, ``_codecs.encode`` for bytes),
the functions a pickled numbagrad tensor, parameter, dtype, device or Size names, the NumPy
array reconstruction they rely on, and the user's :func:`add_safe_globals` /
:class:`safe_globals` entries (``{module}.{qualname}`` of each object, or the name given
with it). Any other global refuses the file with :class:`pickle.UnpicklingError` naming it.

NOTE [PyTorch checkpoints]
:func:`load` also reads what ``torch.save`` writes, without PyTorch installed:

* the zip format (PyTorch 1.6 and later, the default): ``<name>/data.pkl`` is a pickle whose
  tensors are ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
  requires_grad, hooks)`` calls and whose storages are persistent ids ``("storage",
  torch.FloatStorage, key, location, numel)``; the bytes of storage ``key`` are the entry
  ``<name>/data/<key>``, in the byte order of ``<name>/byteorder`` (little when absent);
* the legacy format (``_use_new_zipfile_serialization=False``, PyTorch before 1.6): the
  pickles of a magic number, a protocol version and a system-info dict, the object's pickle
  (persistent ids as above, with a view entry that must be None), the pickle of the list of
  storage keys, then for each key an int64 element count and the bytes, little-endian.

``_TorchUnpickler`` resolves the ``torch`` globals such a pickle names with
``_torch_global`` (never importing torch): the rebuild functions of tensors and
``nn.Parameter`` (``_rebuild_tensor``, ``_rebuild_tensor_v2``, ``_rebuild_parameter``,
``_rebuild_parameter_with_state``, ``_rebuild_from_type_v2``), the storage classes, dtypes,
``torch.device``, ``torch.Size`` and ``torch.Tensor``. Any other ``torch`` global (a pickled
module, an optimizer, a quantized or sparse tensor) is refused with
:class:`pickle.UnpicklingError`, whatever ``weights_only`` says, since only PyTorch could
build it. Other globals follow NOTE [Safe globals] with ``weights_only=True`` and are
imported as pickle does with ``weights_only=False``. Each storage becomes one flat NumPy
array (one numbagrad storage), so views of one storage come back sharing memory; offsets and
strides are checked against it as for numbagrad's files. numbagrad has no int8, int16 or
uint8 dtype: such storages load widened to int64 (values exact); bfloat16, complex32, float8
and quantized storages are refused naming the dtype. The tar format of PyTorch before 0.4
and TorchScript archives (``torch.jit.save``) are refused with a message saying what to do.

``map_location`` is applied per storage with the location tag the file gives (``'cpu'``,
``'cuda:0'``): a dict maps tags, a string or device replaces them, a callable is called as
``map_location(storage, location)`` with the storage as a 1-D CPU tensor and returns None
(the default for that tag), that tensor, or another CPU tensor of the same size and dtype
whose values are used. A tag that resolves to CUDA raises PyTorch's RuntimeError when CUDA is
not available, and NotImplementedError otherwise (numbagrad loads on the CPU only).
"""

from __future__ import annotations

import collections
import io
import operator
import os
import pickle

import numpy as np

from numbagrad import _dtype, _tensor
from numbagrad import _dtype as D
from numbagrad._device import device as _device
from numbagrad._tensor import Size, Tensor
from numbagrad.kernels.cuda import _driver
from numbagrad.nn import Parameter as _Parameter
from numbagrad.nn import parameter as _parameter

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

_FORMAT = "numbagrad"
_VERSION = 1


class _Writer:
    def __init__(self, zf, pickle_protocol):
        self.zf = zf
        self.protocol = pickle_protocol
        self.storages = []  # manifest entries
        self.by_storage = {}  # id(storage list) -> key
        self.keep = []  # keeps the storage lists alive while ids are in use
        self.n_pickles = 0
        self.seen = set()  # ids of containers on the current path (cycles)

    def storage_of(self, t):
        s = t._storage
        base = s[0]
        data = t._data
        item = data.itemsize
        if base.flags.c_contiguous and base.dtype == data.dtype:
            key = self.by_storage.get(id(s))
            flat = base.reshape(-1)
            if key is None:
                key = self._add(flat)
                self.by_storage[id(s)] = key
                self.keep.append(s)
            off = (
                data.__array_interface__["data"][0] - base.__array_interface__["data"][0]
            ) // item
            strides = [st // item for st in data.strides]
            return key, off, strides
        # storage of an odd layout (``from_numpy`` of a strided array): this tensor alone
        arr = np.ascontiguousarray(data)
        key = self._add(arr.reshape(-1))
        return key, 0, [st // item for st in arr.strides]

    def _add(self, flat):
        key = len(self.storages)
        name = f"storages/{key}.npy"
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(flat), allow_pickle=False)
        self.zf.writestr(name, buf.getvalue())
        self.storages.append({"file": name, "dtype": flat.dtype.name, "numel": int(flat.size)})
        return key

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and type(obj) is int:
            return obj
        if type(obj) is float:
            return {"float": repr(obj)}
        if isinstance(obj, Tensor):
            if obj._is_tracer:
                raise RuntimeError(
                    "save(): cannot save a value inside a transform "
                    "(numbagrad.func / vmap); return it from the transform first"
                )
            key, off, strides = self.storage_of(obj)
            enc = {
                "storage": key,
                "offset": int(off),
                "shape": list(obj._data.shape),
                "stride": strides,
                "requires_grad": bool(obj._requires_grad),
            }
            if type(obj).__name__ == "Parameter":
                enc["parameter"] = True
            return {"tensor": enc}
        if isinstance(obj, D.dtype):
            return {"dtype": obj._name}
        if isinstance(obj, _device):
            return {"device": str(obj)}
        if type(obj) is Size:
            return {"size": [int(n) for n in obj]}
        if type(obj) in (list, tuple, dict, collections.OrderedDict):
            if id(obj) in self.seen:
                raise ValueError("save(): the object contains a reference cycle")
            self.seen.add(id(obj))
            try:
                if type(obj) is list:
                    return {"list": [self.encode(v) for v in obj]}
                if type(obj) is tuple:
                    return {"tuple": [self.encode(v) for v in obj]}
                return {
                    "dict": [[self.encode(k), self.encode(v)] for k, v in obj.items()],
                    "ordered": type(obj) is collections.OrderedDict,
                }
            finally:
                self.seen.discard(id(obj))
        # anything else: pickled (read back only with weights_only=False)
        key = self.n_pickles
        self.n_pickles += 1
        self.zf.writestr(f"pickles/{key}.pkl", pickle.dumps(obj, protocol=self.protocol))
        return {"pickle": key, "type": f"{type(obj).__module__}.{type(obj).__qualname__}"}


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Save ``obj`` to ``f`` (a path or a writable binary file object).

    Tensors, lists, tuples, dicts (``OrderedDict`` too: ``state_dict()``), ``None``, bools,
    ints, floats, strings, dtypes, devices and ``Size`` are stored in the documented format
    of NOTE [Serialization format] (a zip with a JSON manifest and ``.npy`` storages); views
    sharing memory are stored once and loaded sharing memory. Other objects are pickled and
    can be loaded only with ``weights_only=False``.

    Parameters
    ----------
    obj : object
    f : str, os.PathLike or file object
    pickle_module : module, optional
        Used for the objects outside the allow-list (default :mod:`pickle`).
    pickle_protocol : int, default 2

    Examples
    --------
    >>> import io, numbagrad
    >>> buf = io.BytesIO()
    >>> x = numbagrad.arange(6.0)
    >>> numbagrad.save({"x": x, "view": x[2:4], "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> d = numbagrad.load(buf)
    >>> d["view"], d["step"]
    (tensor([2., 3.]), 3)
    >>> d["view"][0] = 7.0  # views come back sharing memory
    >>> d["x"]
    tensor([0., 1., 7., 3., 4., 5.])
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(
            "save(): only the standard pickle module is supported for "
            "objects outside the tensor allow-list"
        )
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "save(): numbagrad has one file format (a zip); "
            "_use_new_zipfile_serialization=False is not supported"
        )
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _save(obj, fh, pickle_protocol)
    else:
        if not hasattr(f, "write"):
            raise TypeError(
                f"save(): f must be a path or a writable file object, got {type(f).__name__}"
            )
        _save(obj, f, pickle_protocol)


def _save(obj, fh, protocol):
    import json  # here, not at import: ``import numbagrad`` stays lean
    import zipfile

    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        w = _Writer(zf, protocol)
        root = w.encode(obj)
        manifest = {"format": _FORMAT, "version": _VERSION, "root": root, "storages": w.storages}
        zf.writestr("manifest.json", json.dumps(manifest))


class _Reader:
    def __init__(self, zf, manifest, weights_only, restore):
        self.zf = zf
        self.weights_only = weights_only
        self.restore = restore
        self.entries = manifest["storages"]
        self.storages = {}

    def storage(self, key):
        s = self.storages.get(key)
        if s is None:
            if not isinstance(key, int) or not 0 <= key < len(self.entries):
                raise RuntimeError(
                    f"load(): the file refers to storage {key!r}, which it does not hold"
                )
            e = self.entries[key]
            with self.zf.open(e["file"]) as fh:
                arr = np.load(io.BytesIO(fh.read()), allow_pickle=False)
            D.from_numpy_dtype(arr.dtype)
            if arr.ndim != 1 or arr.size != e["numel"] or arr.dtype.name != e["dtype"]:
                raise RuntimeError(f"load(): storage {key} does not match its manifest entry")
            s = self.storages[key] = [arr, 0]
            _restore_storage(self.restore, s, "cpu")
        return s

    def tensor(self, enc):
        s = self.storage(enc["storage"])
        data = _strided(s[0], enc["offset"], enc["shape"], enc["stride"])
        if enc.get("parameter"):
            return _Parameter(Tensor._make(data, s), requires_grad=enc["requires_grad"])
        t = Tensor._make(data, s)
        if enc["requires_grad"]:
            t.requires_grad = True
        return t

    def decode(self, enc):
        if enc is None or isinstance(enc, (bool, int, str)):
            return enc
        if not isinstance(enc, dict) or len(enc) == 0:
            raise RuntimeError(f"load(): unknown manifest entry {enc!r}")
        if "float" in enc:
            return float(enc["float"])
        if "tensor" in enc:
            return self.tensor(enc["tensor"])
        if "list" in enc:
            return [self.decode(v) for v in enc["list"]]
        if "tuple" in enc:
            return tuple(self.decode(v) for v in enc["tuple"])
        if "dict" in enc:
            cls = collections.OrderedDict if enc.get("ordered") else dict
            return cls((self.decode(k), self.decode(v)) for k, v in enc["dict"])
        if "dtype" in enc:
            return D.as_dtype(enc["dtype"])
        if "device" in enc:
            return _device(enc["device"])
        if "size" in enc:
            return Size(int(n) for n in enc["size"])
        if "pickle" in enc:
            with self.zf.open(f"pickles/{int(enc['pickle'])}.pkl") as fh:
                data = fh.read()
            if self.weights_only:  # NOTE [Safe globals]
                return _WeightsOnlyUnpickler(io.BytesIO(data)).load()
            return pickle.loads(data)
        raise RuntimeError(f"load(): unknown manifest entry {sorted(enc)}")


_SAFE_GLOBALS: set = set()  # the user's: objects or (object, "module.qualname") pairs


def add_safe_globals(safe_globals) -> None:
    """Mark globals (classes, functions) as safe for ``load(weights_only=True)``: pickled
    objects of these classes load, and these functions may be called while unpickling.

    Parameters
    ----------
    safe_globals : list
        Objects, or ``(object, "module.qualname")`` pairs naming them as the file does
        (by default an object is named ``{obj.__module__}.{obj.__qualname__}``).

    Examples
    --------
    >>> import argparse, io, numbagrad
    >>> buf = io.BytesIO()
    >>> numbagrad.save({"args": argparse.Namespace(lr=0.1)}, buf)
    >>> numbagrad.serialization.add_safe_globals([argparse.Namespace])
    >>> _ = buf.seek(0)
    >>> numbagrad.load(buf, weights_only=True)["args"].lr
    0.1
    >>> numbagrad.serialization.clear_safe_globals()
    """
    global _SAFE_GLOBALS
    _SAFE_GLOBALS = _SAFE_GLOBALS | set(safe_globals)


def get_safe_globals() -> list:
    """The globals the user marked safe for ``weights_only`` loading
    (:func:`add_safe_globals`, :class:`safe_globals`)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Forget every global marked safe with :func:`add_safe_globals`."""
    global _SAFE_GLOBALS
    _SAFE_GLOBALS = set()


class safe_globals:
    """A context in which ``safe_globals`` (as for :func:`add_safe_globals`) are safe for
    ``load(weights_only=True)``; they are removed again on exit.

    Examples
    --------
    >>> import argparse, io, numbagrad
    >>> buf = io.BytesIO()
    >>> numbagrad.save(argparse.Namespace(epochs=3), buf)
    >>> _ = buf.seek(0)
    >>> with numbagrad.serialization.safe_globals([argparse.Namespace]):
    ...     numbagrad.load(buf).epochs
    3
    >>> numbagrad.serialization.get_safe_globals()
    []
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc_info):
        global _SAFE_GLOBALS
        _SAFE_GLOBALS = _SAFE_GLOBALS - set(self.safe_globals)


def _default_globals() -> dict:
    """The globals ``weights_only`` loading allows without being told (NOTE [Safe globals])."""
    import _codecs

    allowed = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "builtins.set": set,
        "builtins.complex": complex,
        "builtins.bytearray": bytearray,
        "_codecs.encode": _codecs.encode,  # bytes, in protocol 2
        "numbagrad._tensor._rebuild": _tensor._rebuild,
        "numbagrad._tensor.Size": Size,
        "numbagrad._dtype._by_name": _dtype._by_name,
        "numbagrad._device.device": _device,
        "numpy.ndarray": np.ndarray,
        "numpy.dtype": np.dtype,
        # (NumPy 2's ``np._core``: public in effect, absent from its stubs)
        "numpy._core.multiarray._reconstruct": np._core.multiarray._reconstruct,  # type: ignore[attr-defined]
        "numpy.core.multiarray._reconstruct": np._core.multiarray._reconstruct,  # type: ignore[attr-defined]
    }
    allowed["numbagrad.nn.parameter._rebuild_parameter"] = _parameter._rebuild_parameter
    return allowed


def _user_globals() -> dict:
    out = {}
    for entry in _SAFE_GLOBALS:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(
                    "Expected tuple of length 2 (global, str of callable full path), but got "
                    f"tuple of length: {len(entry)}"
                )
            if type(entry[1]) is not str:
                raise TypeError(
                    "Expected second item in tuple to be str of callable full path, but got: "
                    f"{type(entry[1])}"
                )
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out


def _strided(flat, offset, shape, stride) -> np.ndarray:
    """The view of the flat storage array ``flat`` that a file describes, after checking that
    it stays inside the storage (a damaged or hostile file cannot reach other memory)."""
    try:
        shape = tuple(operator.index(n) for n in shape)
        strides = tuple(operator.index(n) for n in stride)
        off = operator.index(offset)
    except TypeError:
        raise RuntimeError("load(): a tensor's offset, shape or strides are not integers") from None
    if len(shape) != len(strides) or any(n < 0 for n in shape) or off < 0:
        raise RuntimeError("load(): a tensor's shape and strides do not match")
    if all(n > 0 for n in shape):
        lo = off + sum(min(0, (n - 1) * st) for n, st in zip(shape, strides))
        hi = off + sum(max(0, (n - 1) * st) for n, st in zip(shape, strides))
        if lo < 0 or hi >= flat.size:
            raise RuntimeError(
                "load(): a tensor's offset and strides reach outside its "
                "storage (the file is damaged)"
            )
        start = flat[off:]
    else:
        start = flat[:0]
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        start, shape, tuple(st * item for st in strides), writeable=True
    )


class _WeightsOnlyUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the allowed globals (NOTE [Safe globals])."""

    def __init__(self, file):
        super().__init__(file)
        self._allowed = {**_default_globals(), **_user_globals()}

    def find_class(self, module, name):
        import _compat_pickle  # protocol 2 names builtins as Python 2 did (``__builtin__``)

        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[module, name]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        obj = self._allowed.get(full)
        if obj is None:
            short = name.rpartition(".")[2]
            raise pickle.UnpicklingError(
                f"Weights only load failed: Unsupported global: GLOBAL {full} was not an "
                "allowed global by default. Please use "
                f"`numbagrad.serialization.add_safe_globals([{short}])` or the "
                f"`numbagrad.serialization.safe_globals([{short}])` context manager to "
                "allowlist this global if you trust this class/function. If you trust the "
                "file's source, load(..., weights_only=False) loads it with pickle, which "
                "can execute arbitrary code."
            )
        return obj


def _check_location(loc, what="map_location"):
    d = _device(loc.decode() if isinstance(loc, bytes) else loc)  # an unknown type raises
    if d.type == "cuda":
        if not _driver.is_available():  # PyTorch's words, on a machine without CUDA
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "numbagrad.cuda.is_available() is False (CUDA is not available). If "
                "you are running on a "
                "CPU-only machine, please use numbagrad.load with "
                "map_location=numbagrad.device('cpu') to map your storages to the CPU."
            )
    if d.type != "cpu":
        raise NotImplementedError(
            f"load(): {what}={loc!r}: numbagrad loads tensors on 'cpu' only; "
            f"move them after loading (tensor.to({str(d)!r}), module.to({str(d)!r}))"
        )


def _check_map_location(map_location):
    if map_location is None or _is_location_callable(map_location):
        return
    locs = map_location.values() if isinstance(map_location, dict) else [map_location]
    for loc in locs:
        _check_location(loc)


def _is_location_callable(map_location):
    return callable(map_location) and not isinstance(map_location, (str, bytes, _device, dict))


def _restorer(map_location):
    """``restore(storage, location)`` for ``map_location`` (NOTE [PyTorch checkpoints]):
    the storage (a 1-D tensor) to use, after checking where the location sends it."""

    def default(storage, location):
        _check_location(location, "location")
        return storage

    if map_location is None:
        return default
    if isinstance(map_location, dict):
        return lambda storage, location: default(storage, map_location.get(location, location))
    if not _is_location_callable(map_location):
        return lambda storage, location: default(storage, str(map_location))

    def call(storage, location):
        out = map_location(storage, location)
        return default(storage, location) if out is None else out

    return call


def _restore_storage(restore, s, location):
    """Apply ``restore`` to the numbagrad storage ``s``: a tensor the map_location callable
    returns in its place gives its values (views already made keep sharing ``s``)."""
    t = Tensor._make(s[0].reshape(-1), s)
    out = restore(t, location)
    if out is t:
        return
    if not isinstance(out, Tensor):
        raise TypeError(
            f"load(): map_location returned {type(out).__name__}; it should return None or "
            "a storage (a CPU tensor)"
        )
    if out.device.type != "cpu":
        raise NotImplementedError(
            f"load(): map_location returned a storage on {out.device}; numbagrad loads "
            "tensors on 'cpu' only (move them after loading)"
        )
    src = out._data.reshape(-1)
    if src.shape != s[0].shape or src.dtype != s[0].dtype:
        raise RuntimeError(
            f"load(): map_location returned a storage of {src.size} elements of "
            f"{src.dtype}; the file's holds {s[0].size} of {s[0].dtype}"
        )
    if not np.shares_memory(src, s[0]):
        s[0][...] = src


def load(
    f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args
):
    """Load an object saved by :func:`save` or by ``torch.save`` from ``f`` (a path or a
    readable file object).

    Parameters
    ----------
    f : str, os.PathLike or file object
    map_location : str, device, dict or callable, optional
        Where tensors go: ``'cpu'`` (the only device), a dict mapping the file's location
        tags, or ``map_location(storage, location)`` returning None or a CPU tensor (NOTE
        [PyTorch checkpoints]); a location that ends on another device raises.
    weights_only : bool, default True
        Load only the allow-listed types (tensors, containers, numbers, strings, None,
        dtypes, devices, ``Size``, sets, complex numbers, ``bytearray``, ``Counter``) and the
        classes marked safe with :func:`add_safe_globals` or :class:`safe_globals`, never
        running an unrestricted unpickler; a file holding other objects raises
        :class:`pickle.UnpicklingError` naming the class. ``False`` also unpickles those
        (which can run arbitrary code: only for files you trust).
    mmap : bool, optional
        Not supported (storages are read into memory); True raises.

    Returns
    -------
    object

    Raises
    ------
    pickle.UnpicklingError
        With ``weights_only=True`` for a file holding objects outside the allow-list
        (NOTE [Safe globals] in ``numbagrad/serialization.py``).
    RuntimeError
        For a file that is neither numbagrad's nor PyTorch's, is damaged, or holds what
        numbagrad cannot represent (a bfloat16 tensor of a PyTorch checkpoint).

    Notes
    -----
    Files written by ``torch.save`` (its zip format and its legacy format) load without
    PyTorch: their tensors become numbagrad tensors (NOTE [PyTorch checkpoints] in
    ``numbagrad/serialization.py``).
    """
    if mmap:
        raise NotImplementedError(
            "load(): mmap=True is not supported; storages are read into memory"
        )
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("load(): only the standard pickle module is supported")
    if pickle_load_args:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(pickle_load_args)}")
    _check_map_location(map_location)
    restore = _restorer(map_location)
    if weights_only is None:
        weights_only = True
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, weights_only, restore)
    if not hasattr(f, "read"):
        raise TypeError(
            f"load(): f must be a path or a readable file object, got {type(f).__name__}"
        )
    return _load(f, weights_only, restore)


_NOT_A_CHECKPOINT = (
    "load(): not a numbagrad file nor a PyTorch checkpoint (expected a zip archive "
    "written by numbagrad.save or torch.save, or PyTorch's legacy format)"
)


def _load(fh, weights_only, restore):
    import json
    import zipfile

    start = fh.tell()
    try:
        zf = zipfile.ZipFile(fh, "r")
    except zipfile.BadZipFile:
        fh.seek(start)
        return _load_torch_legacy(fh, weights_only, restore)
    with zf:
        names = zf.namelist()
        if "manifest.json" not in names:
            return _load_torch_zip(zf, names, weights_only, restore)
        manifest = json.loads(zf.read("manifest.json"))
        if manifest.get("format") != _FORMAT:
            raise RuntimeError("load(): not a numbagrad file (unknown format)")
        if manifest.get("version", 0) > _VERSION:
            raise RuntimeError(
                f"load(): the file has format version {manifest['version']}; "
                f"this numbagrad reads up to version {_VERSION}"
            )
        return _Reader(zf, manifest, weights_only, restore).decode(manifest["root"])


# -- PyTorch's formats (NOTE [PyTorch checkpoints]) -----------------------------------------

_TORCH_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_TORCH_PROTOCOL_VERSION = 1001
_WIDENED = ("int8", "int16", "uint8")  # numbagrad has no such dtype: loaded as int64


class _StorageType:
    """A PyTorch storage class named in a checkpoint (``torch.FloatStorage``): the element
    type of the saved bytes."""

    __slots__ = ("name", "np")

    def __init__(self, name, np_name):
        self.name = name
        self.np = np.dtype(np_name)

    def __repr__(self):
        return f"torch.{self.name}"


_TORCH_STORAGES = {
    name: _StorageType(name, np_name)
    for name, np_name in [
        ("DoubleStorage", "float64"),
        ("FloatStorage", "float32"),
        ("HalfStorage", "float16"),
        ("LongStorage", "int64"),
        ("IntStorage", "int32"),
        ("ShortStorage", "int16"),
        ("CharStorage", "int8"),
        ("ByteStorage", "uint8"),
        ("BoolStorage", "bool"),
        ("ComplexFloatStorage", "complex64"),
        ("ComplexDoubleStorage", "complex128"),
    ]
}


class _TorchStorage:
    """One storage of a PyTorch checkpoint: ``s`` is the numbagrad storage (``[flat array,
    version]``) its tensors view; ``raw`` holds the file's elements until :meth:`finish`."""

    __slots__ = ("location", "raw", "s", "type")

    def __init__(self, stype, raw, location):
        self.type = stype
        self.raw = raw
        self.location = location
        flat = raw if stype.np.name not in _WIDENED else np.empty(raw.size, np.int64)
        self.s = [flat, 0]

    def finish(self, restore, swap=False):
        """The bytes are in ``raw``: fix their byte order, widen, apply map_location."""
        if swap:
            self.raw.byteswap(inplace=True)
        if self.s[0] is not self.raw:
            self.s[0][...] = self.raw
        self.raw = None
        _restore_storage(restore, self.s, self.location)


def _torch_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _TorchStorage):
        raise pickle.UnpicklingError(
            f"load(): a tensor of the checkpoint is built on {type(storage).__name__}, "
            "not on a storage of the file"
        )
    return Tensor._make(_strided(storage.s[0], storage_offset, size, stride), storage.s)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _torch_tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    t = _torch_tensor(storage, storage_offset, size, stride)
    if metadata:
        raise pickle.UnpicklingError(
            f"load(): tensor metadata {metadata!r} in the checkpoint is not supported"
        )
    if requires_grad:
        t.requires_grad = True
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("load(): a Parameter of the checkpoint holds no tensor")
    return _Parameter(data, requires_grad)


def _set_obj_state(obj, state):
    """PyTorch's ``_set_obj_state``: Python attributes saved with a tensor; attributes the
    tensor class defines (``_data``, ``grad``, ...) are refused."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise pickle.UnpicklingError(f"load(): invalid tensor state {state!r}")
        parts = state
    else:
        parts = (state,)
    for part in parts:
        if not part:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"load(): invalid tensor state {state!r}")
        for k, v in part.items():
            if not isinstance(k, str) or hasattr(type(obj), k):
                raise pickle.UnpicklingError(
                    f"load(): the checkpoint sets the tensor attribute {k!r}, which a "
                    "numbagrad tensor defines itself"
                )
            setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in _TORCH_REBUILDS:
        raise pickle.UnpicklingError(f"load(): {func!r} does not rebuild a tensor")
    ret = func(*args)
    if new_type is _Parameter and type(ret) is not _Parameter:
        ret = _Parameter(ret, ret.requires_grad)
    elif new_type is not Tensor and type(ret) is not new_type:
        raise pickle.UnpicklingError(
            f"load(): tensor subclass {new_type!r} in the checkpoint is not supported"
        )
    return _set_obj_state(ret, state)


_TORCH_REBUILDS = (
    _rebuild_tensor,
    _rebuild_tensor_v2,
    _rebuild_parameter,
    _rebuild_parameter_with_state,
)


def _torch_global(module, name):
    """What the ``torch`` global ``module.name`` of a checkpoint means in numbagrad
    (NOTE [PyTorch checkpoints]); anything else raises."""
    if module == "torch.tensor":  # renamed in PyTorch 1.8 (PyTorch maps it the same way)
        module = "torch._tensor"
    full = f"{module}.{name}"
    if module in ("torch", "torch.cuda") and name in _TORCH_STORAGES:
        return _TORCH_STORAGES[name]
    if module == "torch":
        if name in D._BY_NAME and D._BY_NAME[name]._name == name:
            return D._BY_NAME[name]
        simple = {"device": _device, "Size": Size, "Tensor": Tensor}
        if name in simple:
            return simple[name]
        if name.endswith("Storage") or name in _TORCH_DTYPE_NAMES:
            what = name.removesuffix("Storage") if name.endswith("Storage") else name
            raise RuntimeError(
                f"load(): the checkpoint holds {full} ({what} tensors), which numbagrad "
                "cannot represent (its dtypes are float16, float32, float64, complex64, "
                "complex128, int32, int64 and bool; int8, int16 and uint8 load as int64). "
                "Convert them with PyTorch before "
                "saving, e.g. {k: v.float() for k, v in state_dict.items()}."
            )
    if module == "torch._utils":
        for f in _TORCH_REBUILDS:
            if f.__name__ == name:
                return f
    if full == "torch._tensor._rebuild_from_type_v2":
        return _rebuild_from_type_v2
    if full == "torch.nn.parameter.Parameter":
        return _Parameter
    raise pickle.UnpicklingError(
        f"load(): the PyTorch checkpoint holds {full}, which numbagrad cannot load: it "
        "reads tensors, nn.Parameter, dtypes, devices and Size saved by torch.save, in "
        "dicts, lists and tuples (a state_dict). Save model.state_dict() rather than the "
        "model or other PyTorch objects."
    )


_TORCH_DTYPE_NAMES = {
    "bfloat16",
    "complex32",
    "complex64",
    "complex128",
    "int8",
    "int16",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "qint8",
    "quint8",
    "qint32",
    "quint4x2",
    "quint2x4",
}


class _TorchUnpickler(_WeightsOnlyUnpickler):
    """The unpickler of PyTorch checkpoints (NOTE [PyTorch checkpoints])."""

    def __init__(self, file, weights_only, storage):
        super().__init__(file)
        self._weights_only = weights_only
        self._storage = storage

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError(f"load(): unknown persistent id {pid!r}")
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind == "module":  # legacy format: a whole nn.Module was pickled
            raise pickle.UnpicklingError(
                "load(): the PyTorch checkpoint holds a pickled nn.Module, which numbagrad "
                "cannot load; save model.state_dict() instead"
            )
        if kind != "storage":
            raise pickle.UnpicklingError(f"load(): unknown persistent id type {kind!r}")
        return self._storage(pid[1:])

    def find_class(self, module, name):
        if module == "torch" or module.startswith("torch."):
            return _torch_global(module, name)
        if self._weights_only:
            return super().find_class(module, name)
        return pickle.Unpickler.find_class(self, module, name)


def _storage_id(stype, key, location, numel):
    if not isinstance(stype, _StorageType):
        raise pickle.UnpicklingError(f"load(): {stype!r} is not a storage type")
    key = key.decode("ascii") if isinstance(key, bytes) else key
    location = location.decode("ascii") if isinstance(location, bytes) else location
    if not isinstance(key, str) or not isinstance(location, str):
        raise pickle.UnpicklingError("load(): a storage of the checkpoint has an invalid key")
    try:
        numel = operator.index(numel)
    except TypeError:
        raise pickle.UnpicklingError("load(): a storage size is not an integer") from None
    if numel < 0:
        raise pickle.UnpicklingError("load(): a storage size is negative")
    return key, location, numel


def _load_torch_zip(zf, names, weights_only, restore):
    prefix = next((n[: -len("data.pkl")] for n in names if n.endswith("/data.pkl")), None)
    if prefix is None or prefix.count("/") != 1:
        raise RuntimeError(_NOT_A_CHECKPOINT)
    if prefix + "constants.pkl" in names:
        raise RuntimeError(
            "load(): this is a TorchScript archive (torch.jit.save), which numbagrad cannot "
            "load; save the module's state_dict() with torch.save instead"
        )
    order = b"little"
    if prefix + "byteorder" in names:
        order = zf.read(prefix + "byteorder")
        if order not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + order.decode(errors="replace"))
    import sys

    swap = order.decode() != sys.byteorder
    storages = {}

    def storage(pid):
        if len(pid) != 4:
            raise pickle.UnpicklingError(f"load(): unknown storage id {pid!r}")
        stype = pid[0]
        key, location, numel = _storage_id(*pid)
        st = storages.get(key)
        if st is None:
            try:
                data = zf.read(f"{prefix}data/{key}")
            except KeyError:
                raise RuntimeError(
                    f"load(): the checkpoint refers to storage {key!r}, which it does not hold"
                ) from None
            if len(data) != numel * stype.np.itemsize:
                raise RuntimeError(
                    f"load(): storage {key!r} holds {len(data)} bytes, not the "
                    f"{numel * stype.np.itemsize} its {stype!r} of {numel} elements needs "
                    "(the file is damaged)"
                )
            raw = np.frombuffer(data, stype.np).copy()
            st = storages[key] = _TorchStorage(stype, raw, location)
            st.finish(restore, swap)
        elif st.type is not stype:
            raise RuntimeError(f"load(): storage {key!r} is read as two different types")
        return st

    return _TorchUnpickler(io.BytesIO(zf.read(prefix + "data.pkl")), weights_only, storage).load()


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"load(): unexpected global {module}.{name}")


def _load_torch_legacy(fh, weights_only, restore):
    import struct
    import tarfile

    start = fh.tell()
    try:
        is_tar = tarfile.is_tarfile(fh)
    except (OSError, ValueError):
        is_tar = False
    fh.seek(start)
    if is_tar:
        raise RuntimeError(
            "load(): this is a PyTorch checkpoint in the tar format of PyTorch before 0.4, "
            "which numbagrad cannot read; load it with PyTorch and save it again: "
            "torch.save(torch.load(f, weights_only=False), f2)"
        )
    try:
        magic = _NoGlobals(fh).load()
        protocol = _NoGlobals(fh).load() if magic == _TORCH_MAGIC_NUMBER else None
        _NoGlobals(fh).load()  # sys_info
    except Exception:
        raise RuntimeError(_NOT_A_CHECKPOINT) from None
    if magic != _TORCH_MAGIC_NUMBER or protocol != _TORCH_PROTOCOL_VERSION:
        raise RuntimeError(_NOT_A_CHECKPOINT)
    storages = {}

    def storage(pid):
        if len(pid) != 5:
            raise pickle.UnpicklingError(f"load(): unknown storage id {pid!r}")
        if pid[4] is not None:
            raise RuntimeError(
                "load(): storage views of PyTorch before 0.4 are not supported; load the "
                "file with PyTorch and save it again"
            )
        stype = pid[0]
        key, location, numel = _storage_id(*pid[:4])
        st = storages.get(key)
        if st is None:  # the bytes follow the pickle: filled in below
            st = storages[key] = _TorchStorage(stype, np.empty(numel, stype.np), location)
        elif st.type is not stype:
            raise RuntimeError(f"load(): storage {key!r} is read as two different types")
        return st

    result = _TorchUnpickler(fh, weights_only, storage).load()
    keys = _NoGlobals(fh).load()
    if not isinstance(keys, list) or sorted(keys) != sorted(storages):
        raise RuntimeError("load(): the checkpoint's storage list does not match its tensors")
    for key in keys:
        st = storages[key]
        head = fh.read(8)
        raw = st.raw
        nbytes = raw.size * raw.itemsize
        data = fh.read(nbytes) if len(head) == 8 else b""
        if len(head) != 8 or struct.unpack("<q", head)[0] != raw.size or len(data) != nbytes:
            raise RuntimeError(f"load(): storage {key!r} is truncated (the file is damaged)")
        raw[...] = np.frombuffer(data, raw.dtype.newbyteorder("<"))  # little-endian on disk
        st.finish(restore)
    return result
