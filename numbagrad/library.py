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

NOTE [Mutating custom ops]
``mutates_args=("out",)`` names the arguments the kernel writes into (an ``@njit`` kernel
writes into the arrays it is given; it may return nothing, ``-> None``). Eagerly the kernel
runs on the caller's arrays and each mutated tensor's version goes up by one, after eager
mode's in-place checks (a leaf that requires grad is refused; so is a mutated tensor that
requires grad, whose history would not see the write). Inside ``numbagrad.compile`` the op
is recorded in its functional form (``MutatingKernel``: the kernel writes into copies of
the mutated arrays, which are extra outputs) followed by an in-place write of each copy
into its tensor (``ops.inplace.commit``), so the trace treats it as any in-place op (NOTE
[In-place writes in compiled graphs]): the compiled call writes the new values into the
caller's buffers and bumps the versions as the eager call does. ``mutates_args="unknown"``
is not supported (it raises at definition).
"""

from __future__ import annotations

import functools
import inspect
import re
import types as pytypes
import typing

import numpy as np

from numbagrad import _tensor as _tensor_module
from numbagrad._core.grad_mode import is_grad_enabled
from numbagrad._core.interpreter import bind
from numbagrad._tensor import Tensor
from numbagrad.autograd.function import Function
from numbagrad.kernels import backend_of
from numbagrad.kernels.cpu.backend import CPU
from numbagrad.ops import register_namespace
from numbagrad.ops._op import Primitive
from numbagrad.ops.inplace import check_inplace, commit
from numbagrad.ops.shape import OVERLAP_ERROR

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
    if "return" in hints and hints["return"] in (None, type(None)):
        return 0  # (a mutating op that returns nothing)
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


class MutatingKernel(Primitive, register=False):
    """The functional form of a mutating custom op's kernel (NOTE [Mutating custom ops]):
    the kernel runs on copies of the mutated arrays (``mutated``: their positions among
    the tensor operands), returned after the op's outputs."""

    differentiable = False
    op = None
    shape_from_values = True

    @classmethod
    def impl(cls, be, *arrays, consts=(), n_args=0, mutated=()):
        arrays = list(arrays)
        copies = []
        for i in mutated:
            arrays[i] = arrays[i].copy()
            copies.append(arrays[i])
        out = cls.op._kernel_prim.impl(be, *arrays, consts=consts, n_args=n_args)
        outs = () if cls.op._n_out == 0 else out if cls.op._n_out > 1 else (out,)
        res = (*outs, *copies)
        return res if len(res) > 1 else res[0]


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
    if op._n_out == 0:
        if out is not None:
            raise RuntimeError(
                f"{op.name}: the implementation returned a {type(out).__name__}; the op "
                "declares no outputs (-> None)"
            )
        return None
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
        if mutates_args == "unknown" or isinstance(mutates_args, str):
            raise NotImplementedError(
                f"custom_op {name!r}: mutates_args={mutates_args!r}: name the arguments the "
                "op writes into (a tuple of names); 'unknown' is not supported"
            )
        sig = inspect.signature(fn.py_func if _is_numba(fn) else fn)
        params = list(sig.parameters)
        missing = set(mutates_args) - set(params)
        if missing:
            raise ValueError(
                f"custom_op {name!r}: {missing} in mutates_args were not found in the custom "
                f"op's signature {sig}; mutates_args names the arguments the op writes into"
            )
        if name in _OPS:
            raise RuntimeError(f"custom_op: {name!r} is already defined")
        self.name = name
        self.namespace, self._opname = ns, opname
        self._fn = fn
        self._fn_name = getattr(fn, "__name__", opname)
        self._n_out = _count_outputs(fn, schema)
        # the positions of the arguments the kernel writes into (NOTE [Mutating custom ops])
        self._mutates = tuple(sorted(params.index(a) for a in set(mutates_args)))
        if self._n_out == 0 and not self._mutates:
            raise ValueError(f"custom_op {name!r}: an op that returns nothing must mutate")
        self._kernels = {}
        types = (device_types,) if isinstance(device_types, str) else device_types
        for d in types or (None,):
            self._kernels[d] = fn
        self._fake = None
        self._backward = None
        self._setup_context = None
        self._vmap = None
        self._signature = sig
        self._signature_names = params
        # (a user's op is not one of numbagrad's primitives: not in the registry)
        self._kernel_prim = pytypes.new_class(
            f"{ns}_{opname}",
            (CustomOpKernel,),
            {"register": False},
            lambda body: body.update(op=self, grad_fn=f"{opname}Backward", __module__=__name__),
        )
        self._mut_prim = pytypes.new_class(
            f"{ns}_{opname}_functional",
            (MutatingKernel,),
            {"register": False},
            lambda body: body.update(
                op=self, n_out=max(1, self._n_out + len(self._mutates)), __module__=__name__
            ),
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
        params = {"consts": consts, "n_args": len(args)}
        if not self._mutates:
            return bind(self._kernel_prim, tuple(tensors), params)
        mutated = [args[i] for i in self._mutates if isinstance(args[i], Tensor)]
        if _tensor_module.COMPILE_TRACE:  # the functional form (NOTE [Mutating custom ops])
            tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            mk = tuple(tpos.index(i) for i in self._mutates if isinstance(args[i], Tensor))
            for k in mk:
                t = tensors[k]
                for j, u in enumerate(tensors):
                    if j != k and (
                        u._storage is t._storage or np.may_share_memory(u._data, t._data)
                    ):
                        _tensor_module.COMPILE_TRACE[-1].graph_break(
                            f"{self.name} mutates an argument that shares memory with another"
                        )
                check_inplace(t)
            res = bind(self._mut_prim, tuple(tensors), {**params, "mutated": mk})
            res = res if type(res) is tuple else (res,)
            for t, new in zip(mutated, res[self._n_out :]):
                commit(t, new)
            outs = res[: self._n_out]
            return None if not outs else outs[0] if len(outs) == 1 else outs
        # eagerly: the kernel on the caller's arrays, then one version per mutated tensor
        if self._n_out == 0:
            arrays = [t._data for t in tensors]
            d = arrays[0]
            be = CPU if type(d) is np.ndarray else backend_of(d)
            out = self._kernel_prim.impl(be, *arrays, **params)
        else:
            out = bind(self._kernel_prim, tuple(tensors), params)
        for t in mutated:
            t._storage[1] += 1
        return out

    def _check_mutated(self, args):
        """Eager mode's in-place checks for the tensors the op writes into."""
        for i in self._mutates:
            t = args[i]
            if t is None:
                continue
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"{self.name}: argument {self._signature_names[i]!r} is mutated and must "
                    f"be a tensor, got {type(t).__name__}"
                )
            if t._is_tracer:
                raise NotImplementedError(
                    f"{self.name} mutates {self._signature_names[i]!r}: mutating custom ops "
                    "under numbagrad.func transforms are not supported"
                )
            if type(t._data) is np.ndarray and not t._data.flags.writeable:
                raise RuntimeError(OVERLAP_ERROR)
            if t._requires_grad and is_grad_enabled():
                if t._grad_fn is None:
                    raise RuntimeError(
                        "a leaf Variable that requires grad is being used in an in-place "
                        f"operation ({self.name} mutates {self._signature_names[i]!r})."
                    )
                raise RuntimeError(
                    f"{self.name} mutates {self._signature_names[i]!r}, which requires grad: "
                    "its history would not see the write. Mutate a tensor that does not "
                    "require grad (detach() it, or write under no_grad)."
                )

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
        if kwargs or (self._mutates and len(args) < len(self._signature_names)):
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
        if self._mutates:
            self._check_mutated(args)
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
        Names of the arguments the op writes into (NOTE [Mutating custom ops]): the kernel
        writes into their arrays, and their versions go up as an in-place op's.
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
