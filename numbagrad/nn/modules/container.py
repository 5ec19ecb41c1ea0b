"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict``."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from numbagrad._tensor import Tensor
from numbagrad.nn.modules.module import Module, _addindent
from numbagrad.nn.parameter import Parameter

__all__ = [
    "Container",
    "ModuleDict",
    "ModuleList",
    "ParameterDict",
    "ParameterList",
    "Sequential",
]


def _index(idx, n, what):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


class Sequential(Module):
    """Modules applied in order, each to the previous one's output.

    Built from modules (named ``"0"``, ``"1"``, ...) or from an ``OrderedDict`` of named
    modules; supports indexing, slicing (a new Sequential), ``len``, iteration,
    ``append``, ``extend``, ``insert`` and ``pop``.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad import nn
    >>> net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> net
    Sequential(
      (0): Linear(in_features=3, out_features=4, bias=True)
      (1): ReLU()
      (2): Linear(in_features=4, out_features=1, bias=True)
    )
    >>> len(net), net[:2][-1]
    (3, ReLU())
    >>> net(numbagrad.zeros(2, 3)).shape
    numbagrad.Size([2, 1])
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx, module):
        keys = list(self._modules)
        setattr(self, keys[_index(idx, len(keys), "Sequential")], module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(keys), "Sequential")])
        # keep the numbering contiguous, as PyTorch does
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        out = Sequential()
        for m in self:
            out.append(m)
        for m in other:
            out.append(m)
        return out

    def append(self, module):
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        """Append every module of ``sequential``; returns ``self``."""
        for m in sequential:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``; returns ``self``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def pop(self, key):
        """Remove and return the module at position ``key``."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules whose parameters the owning module registers.

    Examples
    --------
    >>> from numbagrad import nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    >>> layers
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
    )
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_index(idx, len(self), "ModuleList")))
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        out = ModuleList()
        for m in self:
            out.append(m)
        for m in other:
            out.append(m)
        return out

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def append(self, module):
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at position ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Append the modules of an iterable; returns ``self``."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        offset = len(self)
        for i, m in enumerate(modules):
            self.add_module(str(offset + i), m)
        return self

    def __repr__(self):
        # as PyTorch: runs of modules with the same repr print once, as "(i-j): n x repr"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        groups = [[0, 0]]
        for i in range(1, len(reprs)):
            if reprs[i] == reprs[groups[-1][0]]:
                groups[-1][1] = i
            else:
                groups.append([i, i])
        lines = []
        for start, end in groups:
            body = _addindent(reprs[start], 2)
            if start == end:
                lines.append(f"({start}): {body}")
            else:
                lines.append(f"({start}-{end}): {end - start + 1} x {body}")
        main = self._get_name() + "("
        main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


class ModuleDict(Module):
    """An ordered dict of modules whose parameters the owning module registers.

    Examples
    --------
    >>> from numbagrad import nn
    >>> heads = nn.ModuleDict({"mean": nn.Linear(2, 1), "logvar": nn.Linear(2, 1)})
    >>> list(heads.keys())
    ['mean', 'logvar']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove and return the module under ``key``."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys."""
        return self._modules.keys()

    def items(self):
        """The ``(key, module)`` pairs."""
        return self._modules.items()

    def values(self):
        """The modules."""
        return self._modules.values()

    def update(self, modules):
        """Add the modules of a mapping or an iterable of ``(key, module)`` pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value "
                "pairs, but got " + type(modules).__name__
            )
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if not isinstance(m, Iterable) or len(m) != 2:
                    raise ValueError(
                        f"ModuleDict update sequence element #{j} should be an iterable of length 2"
                    )
                self[m[0]] = m[1]


_TYPENAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "bool": "BoolTensor",
}


def _param_line(key, p, typename=False):
    # PyTorch names the dtype in a ParameterList and the tensor type in a ParameterDict
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        what = p.dtype
        if typename:
            what = "numbagrad." + _TYPENAMES.get(str(p.dtype).split(".")[-1], "Tensor")
        return f"  ({key}): {kind} containing: [{what} of size {size}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters (Tensors appended are wrapped as :class:`Parameter`).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad import nn
    >>> ps = nn.ParameterList([numbagrad.zeros(2), numbagrad.zeros(3, 1)])
    >>> ps
    ParameterList(
        (0): Parameter containing: [numbagrad.float32 of size 2]
        (1): Parameter containing: [numbagrad.float32 of size 3x1]
    )
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, self._size, "ParameterList")))

    def __setitem__(self, idx, param):
        idx = _index(idx, self._size, "ParameterList")
        setattr(self, str(idx), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        """Add ``value`` at the end; returns ``self``."""
        new_idx = len(self)
        self._size += 1
        setattr(self, str(new_idx), _as_parameter(value))
        return self

    def extend(self, values):
        """Append every value of an iterable; returns ``self``."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(_param_line(k, p) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (Tensors are wrapped as :class:`Parameter`).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad import nn
    >>> pd = nn.ParameterDict({"scale": numbagrad.ones(1)})
    >>> pd["scale"].requires_grad, list(pd.keys())
    (True, ['scale'])
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        """The keys."""
        return self._keys.keys()

    def items(self):
        """The ``(key, parameter)`` pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The parameters."""
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        """The parameter under ``key``, or ``default``."""
        return self[key] if key in self else default

    def pop(self, key):
        """Remove and return the parameter under ``key``."""
        v = self[key]
        del self[key]
        return v

    def clear(self):
        """Remove every parameter."""
        for k in list(self._keys):
            del self[k]

    def update(self, values):
        """Add the entries of a mapping or an iterable of ``(key, value)`` pairs."""
        if not isinstance(values, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of "
                "key/value pairs, but got " + type(values).__name__
            )
        if isinstance(values, (Mapping, ParameterDict)):
            for key, v in values.items():
                self[key] = v
        else:
            for j, p in enumerate(values):
                if not isinstance(p, Iterable) or len(p) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} should be Iterable of length 2"
                    )
                self[p[0]] = p[1]

    def extra_repr(self):
        return "\n".join(_param_line(k, p, typename=True) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")


class Container(Module):
    """Deprecated (PyTorch's ``nn.Container``, which warns the same): a :class:`Module` whose
    keyword arguments become its submodules. Subclass :class:`Module` instead.

    Examples
    --------
    >>> import warnings
    >>> import numbagrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     c = numbagrad.nn.Container(fc=numbagrad.nn.Linear(2, 2))
    >>> [name for name, _ in c.named_children()]
    ['fc']
    """

    def __init__(self, **kwargs):
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
