"""Parametrizations of module tensors (PyTorch's ``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (``original0``, ``original1``, ... when ``P``'s
``right_inverse`` returns several tensors) and makes ``module.weight`` a property computing
``P(original)`` on every access, as PyTorch does: the module's class becomes a subclass named
``Parametrized<Class>`` and ``state_dict`` keys are PyTorch's, so state dicts move between
the two libraries. Assigning ``module.weight = value`` stores ``P.right_inverse(value)``.
"""

from __future__ import annotations

import contextlib

from numbagrad._core.grad_mode import no_grad
from numbagrad._tensor import Tensor
from numbagrad.nn.modules.container import ModuleDict, ModuleList
from numbagrad.nn.parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]

_cache = {"enabled": 0, "values": {}}


@contextlib.contextmanager
def cached():
    """Within this context a parametrized tensor is computed once per access site and
    reused (PyTorch's ``parametrize.cached``)."""
    _cache["enabled"] += 1
    try:
        yield
    finally:
        _cache["enabled"] -= 1
        if not _cache["enabled"]:
            _cache["values"] = {}


def _as_param(value, like):
    if isinstance(like, Parameter):
        return Parameter(value.detach(), like.requires_grad)
    return value.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its unparametrized
    ``original`` (``original0``, ``original1``, ... for several)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # as PyTorch: a right_inverse that cannot is the identity
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype and not unsafe:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            self._register("original", _as_param(new, original))
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {i} of type {type(t).__name__}"
                    )
                self._register(f"original{i}", _as_param(t, original))
        if not unsafe:
            with no_grad():
                z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if tuple(z.shape) != tuple(original.shape) or z.dtype != original.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the shape or the dtype of "
                    f"the tensor, unless `unsafe` flag is enabled.\nunparametrized dtype: "
                    f"{original.dtype}\nparametrized dtype: {z.dtype}\nunparametrized shape: "
                    f"{tuple(original.shape)}\nparametrized shape: {tuple(z.shape)}"
                )

    def _register(self, name, value):
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def right_inverse(self, value):
        """Store ``value`` (in the parametrized space) as the original tensor(s)."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict()."
        )

    new_cls = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})
    new_cls._numbagrad_original_class = cls
    module.__class__ = new_cls


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache["enabled"]:
            key = (id(self), tensor_name)
            value = _cache["values"].get(key)
            if value is None:
                value = _cache["values"][key] = parametrization()
            return value
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrization (on ``tensor_name`` when given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__._numbagrad_original_class
    return type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the
    stored original (PyTorch's function; see the module docstring).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad import nn
    >>> class Symmetric(nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).transpose(-1, -2)
    >>> m = nn.Linear(3, 3)
    >>> _ = nn.utils.parametrize.register_parametrization(m, "weight", Symmetric())
    >>> bool((m.weight == m.weight.T).all())
    True
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original']
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            with no_grad():
                x = parametrization(y)
            if tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the shape or the dtype of "
                    "the tensor, unless the `unsafe` flag is enabled."
                )
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
            f"element with name '{tensor_name}'"
        )
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo :func:`register_parametrization` on ``tensor_name``: the tensor becomes a plain
    parameter (or buffer) again, holding its current parametrized value when
    ``leave_parametrized`` (else the original)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            if t.dtype != original.dtype or tuple(t.shape) != tuple(original.shape):
                original = _as_param(t, original)
            else:
                with no_grad():
                    original.copy_(t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        with no_grad():
            t = getattr(module, tensor_name)
        original = (
            Parameter(t.detach(), t.requires_grad) if plist.original0.requires_grad else t.detach()
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations._modules[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__._numbagrad_original_class
    return module
