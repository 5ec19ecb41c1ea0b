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
"""

from __future__ import annotations

import collections
import io
import os
import pickle

import numpy as np

from numbagrad import _dtype as D
from numbagrad._device import device as _device
from numbagrad._tensor import Size, Tensor

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
    def __init__(self, zf, manifest, weights_only):
        self.zf = zf
        self.weights_only = weights_only
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
        return s

    def tensor(self, enc):
        s = self.storage(enc["storage"])
        flat = s[0]
        shape = tuple(int(n) for n in enc["shape"])
        strides = tuple(int(n) for n in enc["stride"])
        off = int(enc["offset"])
        if len(shape) != len(strides) or any(n < 0 for n in shape):
            raise RuntimeError("load(): a tensor's shape and strides do not match")
        if all(n > 0 for n in shape):
            lo = off + sum(min(0, (n - 1) * st) for n, st in zip(shape, strides))
            hi = off + sum(max(0, (n - 1) * st) for n, st in zip(shape, strides))
            if lo < 0 or hi >= flat.size:
                raise RuntimeError(
                    "load(): a tensor's offset and strides reach outside its "
                    "storage (the file is damaged)"
                )
        item = flat.itemsize
        if all(n > 0 for n in shape):
            start = flat[off:]
        else:
            start = flat[:0]
        data = np.lib.stride_tricks.as_strided(
            start, shape, tuple(st * item for st in strides), writeable=True
        )
        if enc.get("parameter"):
            try:
                from numbagrad import nn
            except ImportError:
                nn = None
            if nn is not None:
                return nn.Parameter(Tensor._make(data, s), requires_grad=enc["requires_grad"])
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

    from numbagrad import _dtype, _tensor

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
        "numpy._core.multiarray._reconstruct": np._core.multiarray._reconstruct,
        "numpy.core.multiarray._reconstruct": np._core.multiarray._reconstruct,
    }
    try:
        from numbagrad.nn import parameter
    except ImportError:
        pass
    else:
        allowed["numbagrad.nn.parameter._rebuild_parameter"] = parameter._rebuild_parameter
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


def _check_map_location(map_location):
    if map_location is None:
        return
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        raise NotImplementedError(
            "load(): a callable map_location is not supported; every "
            "tensor loads on 'cpu' (pass map_location='cpu' or None)"
        )
    locs = map_location.values() if isinstance(map_location, dict) else [map_location]
    for loc in locs:
        d = _device(loc)  # an unknown device type raises here, naming it
        if d.type == "cuda":
            from numbagrad.kernels.cuda import _driver

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
                f"load(): map_location={loc!r}: numbagrad loads tensors on 'cpu' only; "
                f"move them after loading (tensor.to({str(d)!r}), module.to({str(d)!r}))"
            )


def load(
    f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args
):
    """Load an object saved by :func:`save` from ``f`` (a path or a readable file object).

    Parameters
    ----------
    f : str, os.PathLike or file object
    map_location : str, device or dict, optional
        Where tensors go: ``'cpu'`` (the only device; anything else raises).
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
        For a file that is not in numbagrad's format (e.g. one written by ``torch.save``)
        or is damaged.
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
    if weights_only is None:
        weights_only = True
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, weights_only)
    if not hasattr(f, "read"):
        raise TypeError(
            f"load(): f must be a path or a readable file object, got {type(f).__name__}"
        )
    return _load(f, weights_only)


def _load(fh, weights_only):
    import json
    import zipfile

    try:
        zf = zipfile.ZipFile(fh, "r")
    except zipfile.BadZipFile:
        raise RuntimeError(
            "load(): not a numbagrad file (expected a zip archive written by numbagrad.save)"
        ) from None
    with zf:
        try:
            manifest = json.loads(zf.read("manifest.json"))
        except KeyError:
            raise RuntimeError(
                "load(): not a numbagrad file (no manifest.json; files written "
                "by torch.save cannot be read)"
            ) from None
        if manifest.get("format") != _FORMAT:
            raise RuntimeError("load(): not a numbagrad file (unknown format)")
        if manifest.get("version", 0) > _VERSION:
            raise RuntimeError(
                f"load(): the file has format version {manifest['version']}; "
                f"this numbagrad reads up to version {_VERSION}"
            )
        return _Reader(zf, manifest, weights_only).decode(manifest["root"])
