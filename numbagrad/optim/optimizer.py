"""The ``Optimizer`` base class: parameter groups, per-parameter state, ``zero_grad`` and
``state_dict``/``load_state_dict`` in PyTorch's format.

NOTE [Optimizer steps]
A step updates each parameter's memory in place (its ``.numpy()`` views and identity are
kept) under ``no_grad`` and bumps its version counter, as PyTorch's in-place ops do, so a
graph that saved the old value refuses to backward through it. The update itself is in
``_functional.py``: the NumPy path for small parameters, a fused one-pass ``@njit``
kernel (``numbagrad/kernels/cpu/optim.py``) from ``FUSED_MIN`` elements; both follow
PyTorch's single-tensor update op by op, so they agree with each other bit for bit and
with PyTorch to rounding (NOTE [Fused optimizer kernels]).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import numpy as np

from numbagrad import _tensor as _tensor_module
from numbagrad._core.grad_mode import enable_grad, no_grad
from numbagrad._dtype import get_default_dtype
from numbagrad._tensor import Tensor
from numbagrad.kernels import backend_of
from numbagrad.kernels.cpu.backend import quiet_numpy

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton marking a hyper-parameter that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj) -> str:
    """``torch.typename``'s style: ``module.Class`` of an object."""
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _lr_value(lr) -> float:
    """A learning rate (a number or a one-element Tensor) as a Python float."""
    return float(lr.item()) if isinstance(lr, Tensor) else float(lr)


def _check_lr(lr) -> None:
    """PyTorch's check of ``lr``: a non-negative number or a one-element Tensor."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= _lr_value(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas(betas) -> None:
    """PyTorch's check of Adam-like ``betas``: both in [0, 1)."""
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _zero_state(p: Tensor) -> Tensor:
    """A zero-filled contiguous state tensor shaped like parameter ``p``, on its device."""
    d = p._data
    if type(d) is not np.ndarray:  # a CUDA parameter: its state lives on the device
        return Tensor._make(backend_of(d).zeros(d.shape, d.dtype))
    return Tensor._make(np.zeros(d.shape, d.dtype))


# NOTE [Complex parameters]
# As PyTorch's optimizers, a complex parameter is updated as its ``view_as_real`` (each
# complex number as two real ones): ``_update`` receives a real view of the parameter and
# of its gradient, and a view of its state in which complex tensors appear as their real
# views, so that the state itself stays complex (``exp_avg`` of a complex parameter is
# complex in ``state_dict``, as in PyTorch) and every update rule and kernel runs unchanged.
def _as_real(a: np.ndarray) -> np.ndarray:
    if a.ndim and a.shape[-1] > 1 and a.strides[-1] != a.itemsize:
        raise NotImplementedError(
            "optimizing a complex parameter whose last dimension is not contiguous"
        )
    return (a.reshape(1) if a.ndim == 0 else a).view(a.real.dtype).reshape((*a.shape, 2))


def _real_param(p: Tensor) -> Tensor:
    """A real view of complex parameter ``p`` with the real view of its gradient."""
    r = Tensor._make(_as_real(p._data))
    g = p.grad
    assert g is not None  # (the optimizers skip parameters without a gradient)
    r._grad = Tensor._make(_as_real(g._data))  # type: ignore[assignment]
    return r


class _RealState(dict):
    """The state of a complex parameter seen through ``view_as_real`` (NOTE [Complex
    parameters]): complex tensors read as real views, real ``(..., 2)`` tensors written
    are stored as complex views of the same memory."""

    def __init__(self, state):
        super().__init__()
        self._state = state

    @staticmethod
    def _out(v):
        if isinstance(v, Tensor) and v._data.dtype.kind == "c":
            return Tensor._make(_as_real(v._data))
        return v

    def __getitem__(self, key):
        return self._out(self._state[key])

    def get(self, key, default=None):
        return self._out(self._state[key]) if key in self._state else default

    def __setitem__(self, key, value):
        d = getattr(value, "_data", None)
        if d is not None and d.ndim and d.shape[-1] == 2 and d.dtype.kind == "f" and key != "step":
            value = Tensor._make(
                np.ascontiguousarray(d).view(np.result_type(d.dtype, np.complex64))[..., 0]
            )
        self._state[key] = value

    def setdefault(self, key, default=None):
        if key not in self._state:
            self[key] = default
        return self[key]

    def __contains__(self, key):
        return key in self._state

    def __len__(self):
        return len(self._state)

    def __iter__(self):
        return iter(self._state)

    def keys(self):
        return self._state.keys()

    def items(self):
        return [(k, self._out(v)) for k, v in self._state.items()]

    def values(self):
        return [self._out(v) for v in self._state.values()]


def _step_tensor(value: float = 0.0) -> Tensor:
    """The ``step`` counter as PyTorch keeps it: a 0-d tensor, float64 when that is the
    default dtype, else float32."""
    dt = np.float64 if get_default_dtype().np == np.float64 else np.float32
    return Tensor._make(np.array(value, dtype=dt))


class Optimizer:
    """Base class of all optimizers (PyTorch's ``torch.optim.Optimizer``).

    Parameters
    ----------
    params : iterable
        Tensors (leaves, usually with ``requires_grad=True``), ``(name, tensor)`` pairs, or
        dicts with a ``"params"`` entry defining parameter groups with their own options.
    defaults : dict
        The default value of each option, used for the groups that do not give it.

    Attributes
    ----------
    param_groups : list of dict
        One dict per group: ``"params"`` (a list of tensors) and every option.
    state : collections.defaultdict
        Per-parameter state (a dict for each parameter, keyed by the tensor).
    defaults : dict
        The options given at construction.

    Raises
    ------
    TypeError
        If ``params`` is a single Tensor or holds something that is not a Tensor.
    ValueError
        If ``params`` is empty, holds a non-leaf tensor, or a tensor appears in two groups.

    Examples
    --------
    >>> import numbagrad
    >>> w = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = numbagrad.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    >>> opt.zero_grad()
    >>> print(w.grad)
    None
    """

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got " + _typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # -- pickling and repr ----------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- groups ---------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a parameter group (a dict with ``"params"`` and any options) to
        ``param_groups``; options it does not give take the optimizer's defaults.

        Parameters
        ----------
        param_group : dict
            ``{"params": tensors, **options}``.

        Raises
        ------
        TypeError
            If ``param_group`` is not a dict, its params are a set or not Tensors.
        ValueError
            If a parameter is not a leaf, a required option is missing, or a parameter is
            already in another group.

        Examples
        --------
        >>> import numbagrad
        >>> a = numbagrad.zeros(2, requires_grad=True)
        >>> b = numbagrad.zeros(3, requires_grad=True)
        >>> opt = numbagrad.optim.SGD([a], lr=0.1)
        >>> opt.add_param_group({"params": [b], "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            params = list(params)
        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some "
                    "param names are missing"
                )
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; see "
                "github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps --------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters.

        Parameters
        ----------
        set_to_none : bool, default True
            Set ``.grad`` to None (the default); with False, fill the existing gradients
            with zeros in place (detached from any graph).

        Examples
        --------
        >>> import numbagrad
        >>> w = numbagrad.ones(2, requires_grad=True)
        >>> opt = numbagrad.optim.SGD([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> w.grad
        tensor([0., 0.])
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Perform one optimization step.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss; called under ``enable_grad``.

        Returns
        -------
        The closure's loss, or None.
        """
        if type(self)._update is Optimizer._update:
            raise NotImplementedError(f"{type(self).__name__} does not define step()")
        if _tensor_module.COMPILE_TRACE:  # NOTE [In-place writes in compiled graphs]
            for group in self.param_groups:  # (the update writes outside numbagrad's ops)
                for p in group["params"]:
                    _tensor_module.COMPILE_TRACE[-1].data_read(
                        p, f"{type(self).__name__}.step() (a parameter update)"
                    )
        loss = self._closure_loss(closure)
        quiet_numpy()  # no NumPy warning on an inf/NaN update (NOTE [Quiet NumPy])
        with no_grad():
            for group in self.param_groups:
                lr = _lr_value(group["lr"])
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p._data.dtype.kind == "c":  # as PyTorch: on the real view
                        self._update(_real_param(p), _RealState(self.state[p]), group, lr)
                    else:
                        self._update(p, self.state[p], group, lr)
                    p._storage[1] += 1  # an in-place update of the parameter
        return loss

    def _update(self, p, state, group, lr):
        """Update parameter ``p`` in place from its ``.grad`` (``state``: its state;
        ``lr``: the group's learning rate as a float); what each optimizer defines."""
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        """Call ``closure`` (if any) with grad mode on; its loss, or None."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- checkpoints ----------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The optimizer's state, in PyTorch's format.

        Returns
        -------
        dict
            ``"state"``: per-parameter state keyed by integer ids (the parameters' positions
            over all groups, in order); ``"param_groups"``: each group's options with its
            ``"params"`` replaced by those ids. The state tensors are the optimizer's own
            (not copies), as in PyTorch: deep-copy the dict to keep a snapshot.

        Examples
        --------
        >>> import numbagrad
        >>> w = numbagrad.ones(2, requires_grad=True)
        >>> opt = numbagrad.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.sum().backward()
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["param_groups"][0]["params"], list(sd["state"][0])
        ([0], ['momentum_buffer'])
        """
        mapping: dict[int, int] = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state saved by :meth:`state_dict` (of this class, with groups of the same
        sizes). The tensors in it are copied (cast to each parameter's dtype), so the loaded
        optimizer shares no memory with the dict.

        Parameters
        ----------
        state_dict : dict
            As returned by :meth:`state_dict`.

        Raises
        ------
        ValueError
            If the number of groups or of parameters in a group differs.

        Examples
        --------
        >>> import numbagrad
        >>> w = numbagrad.ones(2, requires_grad=True)
        >>> opt = numbagrad.optim.Adam([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> opt2 = numbagrad.optim.Adam([w], lr=0.5)
        >>> opt2.load_state_dict(opt.state_dict())
        >>> opt2.param_groups[0]["lr"], float(opt2.state[w]["step"])
        (0.1, 1.0)
        """
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if param.is_cuda or value.is_cuda:  # as PyTorch: state moves to param's device
                    v = value.detach().to("cpu" if key == "step" else param.device)
                    if key != "step" and param._data.dtype.kind == "f":
                        v = v.to(param.dtype)
                    return v.clone()
                data = value._data
                if key != "step" and param._data.dtype.kind == "f":
                    data = data.astype(param._data.dtype)
                return Tensor._make(np.array(data, copy=True))
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
