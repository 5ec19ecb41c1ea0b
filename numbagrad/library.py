"""``numbagrad.library``: custom ops, as ``torch.library.custom_op``, whose implementation
may be a ``@numba.njit`` function of arrays.

NOTE [Custom ops]
``custom_op("ns::name", mutates_args=())`` turns a function into an op. Its kernel runs as
a primitive (``CustomOpKernel``, one subclass per op) whose array implementation calls the
user's function: an ``@njit`` function (a Numba dispatcher) receives the arrays themselves
and returns an array or a tuple of arrays; a Python function receives tensors and returns
tensors. Every result is checked (type, dtype kind, and against ``register_fake`` where
one is registered) before anything else reads it.

Its autograd is a custom ``autograd.Function`` around that primitive, built from
``register_autograd(backward, setup_context=...)``, and its batching rule is
``register_vmap``'s (without one, vmap runs the kernel per example and warns once). So the
op works eagerly, under every ``numbagrad.func`` transform, with ``gradcheck``, and in
``numbagrad.compile``d code, where the kernel is one array call in the generated program
(no Tensor, no node) and a backward written with numbagrad ops is traced with the rest.

Registered ops are also reachable as ``numbagrad.ops.<ns>.<name>`` (``torch.ops``).
``mutates_args`` must be empty: an op that writes into its inputs is not supported yet
(it raises at definition, naming the op).
"""

from __future__ import annotations

import functools
import inspect
import re
import types as pytypes
import typing

import numpy as np

from numbagrad._core.interpreter import bind
from numbagrad._tensor import Tensor
from numbagrad.autograd.function import Function
from numbagrad.kernels.cpu.backend import CPU
from numbagrad.ops import register_namespace
from numbagrad.ops._op import Primitive

__all__ = [
    "CustomOpDef",
    "custom_op",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_vmap",
]

_OPS: dict = {}  # "ns::name" -> CustomOpDef


def _is_numba(fn) -> bool:
    """Whether ``fn`` is a Numba dispatcher (``@njit``), without importing Numba (NOTE
    [Lazy kernels])."""
    return type(fn).__module__.startswith("numba.") and hasattr(fn, "py_func")


def _count_outputs(fn, schema):
    """How many tensors the op returns, from ``schema`` or the return annotation."""
    if schema is not None:
        ret = schema.split("->", 1)[-1].strip()
        if ret.startswith("("):
            return len([p for p in ret.strip("()").split(",") if p.strip()])
        return 1
    target = fn.py_func if _is_numba(fn) else fn
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: read them as text
        hints = dict(getattr(target, "__annotations__", {}))
    ret = hints.get("return", None)
    if ret is None:
        return 1
    args = typing.get_args(ret)
    origin = typing.get_origin(ret)
    if origin in (tuple, typing.Tuple) and args:  # noqa: UP006
        return len(args)
    text = str(ret)
    m = re.match(r"(?:typing\.)?[Tt]uple\[(.*)\]", text)
    return len(m.group(1).split(",")) if m else 1


class CustomOpKernel(Primitive, register=False):
    """Base of the primitive that runs one custom op's kernel (NOTE [Custom ops])."""

    differentiable = False  # its gradient is the Function's around it
    op = None  # the CustomOpDef
    # the outputs' shapes and dtypes come from running user code: compiled code checks them
    # before a fused kernel reads them (NOTE [User code in compiled calls])
    shape_from_values = True

    @classmethod
    def direct_call(cls, params):
        """``(kernel, unwrap)`` where compiled CPU code may call the op's ``@njit`` kernel on
        its arrays itself, without ``impl`` in between: one output, every argument an
        array. Otherwise None."""
        op = cls.op
        if params.get("consts") or op._n_out != 1:
            return None
        kernel = op._kernels.get("cpu", op._kernels.get(None))
        if kernel is None or not _is_numba(kernel):
            return None
        return kernel, functools.partial(_unwrap, op)

    @classmethod
    def impl(cls, be, *arrays, consts=(), n_args=0):
        op = cls.op
        args = _merge(arrays, consts, n_args)
        meta = any(getattr(a, "_numbagrad_meta", False) for a in arrays)
        if meta:
            if op._fake is None:
                raise NotImplementedError(
                    f"{op.name}: no fake implementation for meta tensors; register one with "
                    f"@{op._fn_name}.register_fake"
                )
            out = op._fake(*[_as_tensor(a) for a in args])
            return _unwrap(op, out, meta=True)
        device = "cpu" if be is CPU else "cuda"
        kernel = op._kernels.get(device, op._kernels.get(None))
        if kernel is None:
            raise NotImplementedError(
                f"{op.name}: no kernel for device {device!r}; register one with "
                f"{op._fn_name}.register_kernel({device!r})"
            )
        if _is_numba(kernel):
            out = kernel(*args)
        else:
            out = kernel(*[_as_tensor(a) for a in args])
        return _unwrap(op, out)


def _merge(arrays, consts, n_args):
    args = [None] * n_args
    it = iter(arrays)
    cpos = dict(consts)
    for i in range(n_args):
        args[i] = cpos[i] if i in cpos else next(it)
    return args


def _as_tensor(a):
    return (
        Tensor._make(a)
        if isinstance(a, np.ndarray)
        or getattr(a, "_numbagrad_device", False)
        or getattr(a, "_numbagrad_meta", False)
        else a
    )


def _unwrap(op, out, meta=False):
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != op._n_out:
        raise RuntimeError(
            f"{op.name}: the implementation returned {len(outs)} values; the op declares "
            f"{op._n_out} outputs"
        )
    res = []
    for k, o in enumerate(outs):
        if isinstance(o, Tensor):
            o = o._data
        if not (
            isinstance(o, np.ndarray)
            or getattr(o, "_numbagrad_device", False)
            or getattr(o, "_numbagrad_meta", False)
        ):
            raise TypeError(
                f"{op.name}: output {k} of the implementation is a {type(o).__name__}; it must "
                "be a tensor (an array for an @njit implementation)"
            )
        res.append(o)
    return tuple(res) if op._n_out > 1 else res[0]


class CustomOpDef:
    """A custom op made by :func:`custom_op`; calling it applies the op."""

    def __init__(self, name, fn, mutates_args, device_types, schema):
        if not isinstance(name, str) or name.count("::") != 1:
            raise ValueError(f"custom_op: name must be 'namespace::opname', got {name!r}")
        ns, opname = name.split("::")
        if not ns.isidentifier() or not opname.isidentifier():
            raise ValueError(f"custom_op: {name!r}: namespace and name must be identifiers")
        if mutates_args == "unknown" or (mutates_args and len(tuple(mutates_args))):
            raise NotImplementedError(
                f"custom_op {name!r}: ops that mutate their inputs (mutates_args="
                f"{mutates_args!r}) are not supported yet; return new tensors instead"
            )
        if name in _OPS:
            raise RuntimeError(f"custom_op: {name!r} is already defined")
        self.name = name
        self.namespace, self._opname = ns, opname
        self._fn = fn
        self._fn_name = getattr(fn, "__name__", opname)
        self._n_out = _count_outputs(fn, schema)
        self._kernels = {}
        types = (device_types,) if isinstance(device_types, str) else device_types
        for d in types or (None,):
            self._kernels[d] = fn
        self._fake = None
        self._backward = None
        self._setup_context = None
        self._vmap = None
        self._signature = inspect.signature(fn.py_func if _is_numba(fn) else fn)
        # (a user's op is not one of numbagrad's primitives: not in the registry)
        self._kernel_prim = pytypes.new_class(
            f"{ns}_{opname}",
            (CustomOpKernel,),
            {"register": False},
            lambda body: body.update(op=self, grad_fn=f"{opname}Backward", __module__=__name__),
        )
        self._function = None
        _OPS[name] = self
        _register_namespace(self)
        self.__name__ = opname
        self.__doc__ = getattr(fn, "__doc__", None)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self.name})>"

    # -- registration --------------------------------------------------------------------------
    def register_fake(self, fn):
        """Register the shape/dtype function used for meta tensors (``torch.library``)."""
        self._fake = fn
        return fn

    def register_kernel(self, device_types, fn=None):
        """Register the implementation for ``device_types`` (``"cpu"``, ``"cuda"``)."""

        def reg(f):
            for d in (device_types,) if isinstance(device_types, str) else device_types:
                if d not in ("cpu", "cuda"):
                    raise ValueError(f"{self.name}: unknown device type {d!r}")
                self._kernels[d] = f
            return f

        return reg if fn is None else reg(fn)

    def register_autograd(self, backward, *, setup_context=None):
        """Register ``backward(ctx, *grads)`` (one gradient per input, None for
        non-tensors) and ``setup_context(ctx, inputs, output)``, as ``torch.library``."""
        if not callable(backward):
            raise TypeError(f"{self.name}: register_autograd: backward must be callable")
        self._backward = backward
        self._setup_context = setup_context
        self._function = None

    def register_vmap(self, fn):
        """Register ``fn(info, in_dims, *args) -> (output, out_dims)``, the batching rule."""
        self._vmap = fn
        self._function = None
        return fn

    # -- application ------------------------------------------------------------------------------
    def _apply_kernel(self, *args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        consts = tuple((i, a) for i, a in enumerate(args) if not isinstance(a, Tensor))
        return bind(self._kernel_prim, tuple(tensors), {"consts": consts, "n_args": len(args)})

    def _make_function(self):
        op = self

        def forward(*args):
            return op._apply_kernel(*args)

        def setup_context(ctx, inputs, output):
            if op._setup_context is not None:
                op._setup_context(ctx, inputs, output)

        def backward(ctx, *grads):
            if op._backward is None:
                raise RuntimeError(
                    f"Trying to backward through {op.name} but no autograd formula was "
                    f"registered. Please use register_autograd to add one."
                )
            res = op._backward(ctx, *grads)
            return res

        body = {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
            "__module__": __name__,
        }
        if self._vmap is not None:
            vm = self._vmap

            def vmap(info, in_dims, *args):
                return vm(info, in_dims, *args)

            body["vmap"] = staticmethod(vmap)
        else:
            body["generate_vmap_rule"] = True
        return type(self._opname, (Function,), body)

    def __call__(self, *args, **kwargs):
        if kwargs:
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
        needs_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if (
            not needs_grad
            and self._vmap is None
            and all(not (isinstance(a, Tensor) and a._is_tracer) for a in args)
        ):
            return self._apply_kernel(*args)
        if self._function is None:
            self._function = self._make_function()
        return self._function.apply(*args)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Define a custom op (``torch.library.custom_op``); a decorator without ``fn``.

    Parameters
    ----------
    name : str
        ``"namespace::opname"``; the op is also ``numbagrad.ops.namespace.opname``.
    fn : callable
        The implementation: a function of tensors returning tensors, or an
        ``@numba.njit`` function of arrays returning arrays (called directly by compiled
        code).
    mutates_args : tuple
        Names of the arguments the op writes into; must be empty (``()``).
    device_types : str or sequence of str, optional
        The devices ``fn`` implements (all when None).
    schema : str, optional
        ``"(Tensor x) -> Tensor"``; only its return part is read (the number of outputs).
        Without it the return annotation of ``fn`` decides (one tensor by default).

    Examples
    --------
    >>> import numba, numpy as np, numbagrad as torch
    >>> @torch.library.custom_op("demo::cube", mutates_args=())
    ... @numba.njit
    ... def cube(x):
    ...     return x * x * x
    >>> cube.register_autograd(
    ...     lambda ctx, g: g * 3 * ctx.saved_tensors[0] ** 2,
    ...     setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> cube(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """

    def make(f):
        return CustomOpDef(name, f, mutates_args, device_types, schema)

    return make if fn is None else make(fn)


def _op_of(op):
    if isinstance(op, CustomOpDef):
        return op
    if op in _OPS:
        return _OPS[op]
    raise ValueError(f"no custom op named {op!r} (define it with numbagrad.library.custom_op)")


def register_fake(op, fn=None):
    """``torch.library.register_fake``: ``op`` is a name or a :class:`CustomOpDef`."""
    o = _op_of(op)
    return o.register_fake if fn is None else o.register_fake(fn)


def register_autograd(op, backward, *, setup_context=None):
    """``torch.library.register_autograd``."""
    _op_of(op).register_autograd(backward, setup_context=setup_context)


def register_vmap(op, fn=None):
    """``torch.library.register_vmap``."""
    o = _op_of(op)
    return o.register_vmap if fn is None else o.register_vmap(fn)


def register_kernel(op, device_types, fn=None):
    """``torch.library.register_kernel``."""
    return _op_of(op).register_kernel(device_types, fn)


class _OpNamespace:
    """``numbagrad.ops.<namespace>``: the custom ops of one namespace."""

    def __init__(self, name):
        self._name = name

    def __repr__(self) -> str:
        return f"<numbagrad.ops.{self._name}>"


def _register_namespace(op):
    try:
        space = register_namespace(op.namespace, _OpNamespace(op.namespace))
    except ValueError as e:
        del _OPS[op.name]
        raise ValueError(f"custom_op {op.name!r}: {e}") from None
    setattr(space, op._opname, op)
