"""``Module``: the base class of every layer (PyTorch's ``torch.nn.Module``).

NOTE [Module attributes]
A module keeps its parameters, buffers and submodules in three ordered dicts
(``_parameters``, ``_buffers``, ``_modules``) rather than in its ``__dict__``:
``__setattr__`` routes a :class:`Parameter`, a :class:`Module`, or a Tensor assigned to a
registered buffer name into the right dict, and ``__getattr__`` (called only when normal
lookup fails) reads them back. Traversals (``named_parameters``, ``state_dict``, ``to``)
walk these dicts, so their order is registration order, as in PyTorch.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple

from numbagrad import _dtype as D
from numbagrad._compile import CompiledFunction, compile_module_call
from numbagrad._core.grad_mode import no_grad
from numbagrad._device import device as _device
from numbagrad._tensor import Tensor
from numbagrad.nn.parameter import Buffer, Parameter

__all__ = ["Module", "OptimizedModule", "RemovableHandle"]


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return "numbagrad." + type(value).__name__
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys missing from and unexpected in the dict."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by the module ``register_*_hook`` methods; ``remove()`` unregisters the hook.

    Also a context manager that removes the hook on exit.

    Examples
    --------
    >>> import numbagrad
    >>> m = numbagrad.nn.Identity()
    >>> h = m.register_forward_hook(lambda mod, args, out: out * 2)
    >>> m(numbagrad.tensor([1.0]))
    tensor([2.])
    >>> h.remove()
    >>> m(numbagrad.tensor([1.0]))
    tensor([1.])
    """

    _next_id = itertools.count()

    def __init__(self, *dicts):
        self.id = next(RemovableHandle._next_id)
        self._dicts = dicts

    def remove(self):
        """Unregister the hook (a second call does nothing)."""
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _check_name(module, name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


class Module:
    """Base class for all neural network modules (PyTorch's ``torch.nn.Module``).

    Subclasses call ``super().__init__()`` first, assign parameters and submodules as
    attributes and define ``forward``; calling the module runs the forward pre-hooks,
    ``forward`` and the forward hooks.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(3, 2)
    ...         self.scale = nn.Parameter(numbagrad.ones(1))
    ...     def forward(self, x):
    ...         return self.fc(x) * self.scale
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['scale', 'fc.weight', 'fc.bias']
    >>> net(numbagrad.zeros(4, 3)).shape
    numbagrad.Size([4, 2])
    >>> net
    Net(
      (fc): Linear(in_features=3, out_features=2, bias=True)
    )
    """

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword "
                f"argument '{next(iter(kwargs))}'"
            )
        if not self.call_super_init and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        """Define the computation of the module; subclasses must override it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- registration --------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Register a Tensor (or None) as a buffer: saved in ``state_dict`` when
        ``persistent``, moved by ``to``, not a parameter.

        Examples
        --------
        >>> import numbagrad
        >>> m = numbagrad.nn.Module()
        >>> m.register_buffer("running_mean", numbagrad.zeros(3))
        >>> list(m.state_dict())
        ['running_mean']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(numbagrad Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Register ``param`` (a :class:`Parameter` or None) under ``name``.

        Examples
        --------
        >>> import numbagrad
        >>> m = numbagrad.nn.Module()
        >>> m.register_parameter("w", numbagrad.nn.Parameter(numbagrad.ones(2)))
        >>> m.w.shape
        numbagrad.Size([2])
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(numbagrad.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def add_module(self, name, module):
        """Register ``module`` (a :class:`Module` or None) as a child named ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name(self, name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    # -- attribute routing (NOTE [Module attributes]) -------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*stores):
            for s in stores:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(numbagrad.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module "
                        f"'{name}' (numbagrad.nn.Module or None expected)"
                    )
                modules[name] = value
            elif isinstance(value, Buffer):
                if d.get("_buffers") is None:
                    raise AttributeError("cannot assign buffer before Module.__init__() call")
                remove_from(d, self._parameters, self._modules)
                self.register_buffer(name, value.__dict__["_source"], value.__dict__["persistent"])
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer "
                            f"'{name}' (numbagrad.Tensor or None expected)"
                        )
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del self._parameters[name]
        elif name in d.get("_buffers", ()):
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in d.get("_modules", ()):
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._buffers)
        keys += list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- traversal -----------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        """Iterator over the parameters (of submodules too when ``recurse``), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(name, parameter)``, names dotted from this module, each
        parameter once unless ``remove_duplicate=False``."""
        yield from self._named_members(
            lambda m: m._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse=True):
        """Iterator over the buffers (of submodules too when ``recurse``)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(name, buffer)``."""
        yield from self._named_members(
            lambda m: m._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self):
        """Iterator over the immediate submodules."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """Iterator over ``(name, module)`` of the immediate submodules, each once."""
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        """Iterator over this module and all its submodules, each once."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over ``(name, module)`` for this module (name ``prefix``) and every
        submodule, depth first."""
        if memo is None:
            memo = set()
        if id(self) in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at dotted path ``target`` (e.g. ``"fc.weight"``)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # -- modes, gradients ------------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on this module and its
        submodules; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """``train(False)``: evaluation mode (dropout off); returns ``self``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter; returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the parameters' gradients: to None (default) or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # -- conversion ----------------------------------------------------------------------
    def _apply(self, fn, params_too=True):
        for m in self.children():
            m._apply(fn, params_too)
        for p in self._parameters.values():
            if p is None:
                continue
            # as PyTorch does by default: the Parameter object stays, its data changes
            with no_grad():
                new = fn(p)
            if new is not p:
                p.data = new
            if p.grad is not None:
                with no_grad():
                    g = fn(p.grad)
                if g is not p.grad:  # as PyTorch: the .grad object stays too
                    p.grad.data = g.detach()
        for k, b in self._buffers.items():
            if b is not None:
                self._buffers[k] = fn(b)
        return self

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first) and on this module;
        returns ``self``.

        Examples
        --------
        >>> import numbagrad
        >>> from numbagrad import nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        >>> def init(m):
        ...     if isinstance(m, nn.Linear):
        ...         nn.init.zeros_(m.bias)
        >>> _ = net.apply(init)
        >>> net[1].bias
        Parameter containing:
        tensor([0.], requires_grad=True)
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Move parameters and buffers to ``device`` and convert the floating ones to
        ``dtype`` (``to(dtype)``, ``to(device)``, ``to(tensor)``: its dtype and device,
        ``to(device, dtype)``, keywords ``dtype=`` and ``device=``), in place as PyTorch's
        ``_apply``: parameters and their ``.grad`` stay the same objects (their ``.data``
        is replaced); returns ``self``.

        Raises
        ------
        RuntimeError
            For ``'cuda'`` where CUDA is not available (the message says what is missing).
        TypeError
            For a non-floating ``dtype``.

        Examples
        --------
        >>> import numbagrad
        >>> lin = numbagrad.nn.Linear(2, 1)
        >>> w = lin.weight
        >>> lin.to(numbagrad.float64).weight is w, w.dtype
        (True, numbagrad.float64)
        >>> lin.to("cpu").weight.device
        device(type='cpu')
        """
        dtype = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype, dev = a.dtype, a.device
            elif isinstance(a, (str, _device, int)) and not isinstance(a, bool):
                dev = a
            elif isinstance(a, bool):
                continue  # non_blocking given positionally
            elif a is not None:
                dtype = a
        if dev is not None:
            dev = _device(f"cuda:{dev}" if isinstance(dev, int) else dev)
        if dtype is not None:
            dtype = D.as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex dtypes, "
                    f"but got desired dtype={dtype}"
                )

        def convert(t):
            if dev is not None:
                t = t.to(dev)
            if dtype is not None and t.is_floating_point():
                return t.to(dtype)
            return t

        return self._apply(convert)

    def _cast_float(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def double(self):
        """Cast floating parameters and buffers to float64 in place; returns ``self``."""
        return self._cast_float(D.float64)

    def float(self):
        """Cast floating parameters and buffers to float32 in place; returns ``self``."""
        return self._cast_float(D.float32)

    def half(self):
        """Cast floating parameters and buffers to float16 in place; returns ``self``."""
        return self._cast_float(D.float16)

    def type(self, dst_type):
        """Cast every parameter and buffer to ``dst_type``; returns ``self``."""
        return self._apply(lambda t: t.to(dst_type))

    def cpu(self):
        """Move every parameter and buffer to host memory in place (as :meth:`to`);
        returns ``self``.

        Examples
        --------
        >>> import numbagrad
        >>> numbagrad.nn.Linear(2, 1).cpu().weight.is_cuda
        False
        """
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move every parameter and buffer to the CUDA device ``device`` (an index or a
        device; the current one by default) in place (as :meth:`to`); returns ``self``.

        Raises
        ------
        RuntimeError
            Where CUDA is not available (the message says whether numba-cuda or a GPU is
            missing).
        """
        return self._apply(lambda t: t.cuda(device))

    # -- state dict ----------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by dotted name
        (detached tensors sharing memory, or the tensors themselves with ``keep_vars``).

        Examples
        --------
        >>> import numbagrad
        >>> net = numbagrad.nn.Sequential(numbagrad.nn.Linear(2, 3))
        >>> list(net.state_dict())
        ['0.weight', '0.bias']
        """
        if args:  # PyTorch's deprecated positional form (destination, prefix, keep_vars)
            names = ("destination", "prefix", "keep_vars")
            if len(args) > 3:
                raise TypeError(
                    f"state_dict() takes at most 3 positional arguments, got {len(args)}"
                )
            given = dict(zip(names, args, strict=False))
            destination = given.get("destination", destination)
            prefix = given.get("prefix", prefix)
            keep_vars = given.get("keep_vars", keep_vars)
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs, assign
    ):
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update(
            (k, v)
            for k, v in self._buffers.items()
            if v is not None and k not in self._non_persistent_buffers_set
        )
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected '
                    "numbagrad.Tensor or Tensor-like object from checkpoint "
                    f"but received {type(value)}"
                )
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size(value)} from checkpoint, the shape in current model "
                    f"is {_size(param)}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            new = Parameter(value, requires_grad=param.requires_grad)
                            self._parameters[name] = new
                        else:
                            self._buffers[name] = value
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose '
                    f"dimensions in the model are {_size(param)} and whose "
                    f"dimensions in the checkpoint are {_size(value)}, an "
                    f"exception occurred : {ex.args}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    first = key[len(prefix) :].split(".", 1)[0]
                    if first not in self._modules and first not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module.

        Parameters
        ----------
        state_dict : dict
            Dotted names to tensors, as :meth:`state_dict` makes.
        strict : bool, default True
            Raise when keys are missing or unexpected.
        assign : bool, default False
            Use the dict's tensors themselves (wrapped as Parameters) instead of copying.

        Returns
        -------
        namedtuple
            ``(missing_keys, unexpected_keys)``.

        Raises
        ------
        RuntimeError
            On a shape mismatch, or on missing/unexpected keys when ``strict``.

        Examples
        --------
        >>> import numbagrad
        >>> a, b = numbagrad.nn.Linear(2, 2), numbagrad.nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        # every path to a shared submodule loads it, as PyTorch's recursion does
        for name, module in self.named_modules(remove_duplicate=False):
            prefix = name + "." if name else ""
            module._load_from_state_dict(
                state_dict, prefix, True, missing, unexpected, errors, assign
            )
        # a submodule's unexpected-key check above also sees keys of its children; keep
        # only keys nothing consumed
        known = set(self.state_dict(keep_vars=True))
        unexpected = [k for k in dict.fromkeys(unexpected) if k not in known]
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- hooks and calling -----------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Register ``hook(module, args)`` (or ``hook(module, args, kwargs)`` with
        ``with_kwargs``) run before ``forward``; a non-None result replaces the arguments.
        Returns a handle whose ``remove()`` unregisters it."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Register ``hook(module, args, output)`` (or ``hook(module, args, kwargs,
        output)`` with ``with_kwargs``) run after ``forward``; a non-None result replaces
        the output. With ``always_call`` it runs even when ``forward`` raises. Returns a
        handle whose ``remove()`` unregisters it."""
        handle = RemovableHandle(
            self._forward_hooks, self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:  # ``Module.compile()``
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def compile(self, *args, **kwargs):
        """Compile this module's calls in place with :func:`numbagrad.compile` (same
        arguments); ``self(...)`` then runs the compiled code."""
        self.__dict__["_compiled_call_impl"] = compile_module_call(self, *args, **kwargs)

    def _optimized_module(self, fullgraph, dynamic=None):
        """What ``numbagrad.compile(self)`` returns: an ``OptimizedModule``."""
        return OptimizedModule(self, fullgraph, dynamic)

    def _call_impl(self, *args, **kwargs):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {res}."
                        )
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        called = set()
        try:
            result = self.forward(*args, **kwargs)
            for hid, hook in list(self._forward_hooks.items()):
                called.add(hid)
                if hid in self._forward_hooks_with_kwargs:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
        except Exception:
            for hid, hook in list(self._forward_hooks.items()):
                if hid in self._forward_hooks_always_called and hid not in called:
                    try:
                        if hid in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception as e:
                        warnings.warn(
                            "global module forward hook with ``always_call=True`` "
                            f"raised an exception that was silenced as another "
                            f"error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise
        return result

    # -- printing ------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module's own settings for its repr (subclasses override it)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _size(t):
    return f"numbagrad.Size({list(t.shape)})"


class OptimizedModule(Module):
    """A module whose calls are compiled (what ``numbagrad.compile(module)`` returns, as
    PyTorch's): attributes are the original module's (``_orig_mod``), and its
    ``state_dict`` keys start with ``_orig_mod.``, as PyTorch's."""

    def __init__(self, mod, fullgraph=False, dynamic=None):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = CompiledFunction(
            mod._call_impl, fullgraph, module=mod, name=type(mod).__name__, dynamic=dynamic
        )

    def __call__(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def explain(self) -> str:
        """The compiled graphs and generated code (``CompiledFunction.explain``)."""
        return self.__dict__["_compiled"].explain()

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"
