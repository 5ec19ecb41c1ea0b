"""The traced program: ``Var``, ``Eqn``, ``Graph``, and their readable listing.

NOTE [Compiled graphs]
A trace (``_compile/trace.py``) turns one call of a function into a straight-line
program of primitive applications. A ``Var`` is one array of that program: an input of
the function (``in``), a tensor the function read from outside (``ext``: a parameter, a
global, a closure cell; read by reference on every call), a tensor it made with a
creation function (``const``), a gradient fed to the backward (``cot``), or the output of
an ``Eqn``. An ``Eqn`` is one application: the primitive, its operands (``Var`` or a
Python literal), its params and its output vars. The listing (``Graph.format``) reads like
a jaxpr::

    graph(a0: f64[16], a1: f64[16]) {
      v2: f64[16] = Mul(a0, a1)
      v3: f64[16] = Tanh(v2)
      v4: f64[] = Sum(v3; dims=None, keepdim=False, dtype=None)
      return (v4)
    }
"""

from __future__ import annotations

import numpy as np

__all__ = ["Eqn", "Graph", "Var", "format_dtype"]

_SHORT = {
    "float64": "f64",
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
}


def format_dtype(dtype) -> str:
    return _SHORT.get(np.dtype(dtype).name, np.dtype(dtype).name)


class Var:
    """One array of a traced program (NOTE [Compiled graphs])."""

    __slots__ = ("dtype", "index", "kind", "name", "root", "shape")

    def __init__(self, index, shape, dtype, kind, root=None):
        self.index = index
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.kind = kind  # "in", "ext", "const", "cot" or "eqn"
        prefix = {"in": "a", "ext": "c", "const": "k", "cot": "g"}.get(kind, "v")
        self.name = f"{prefix}{index}"
        # the input/ext var whose memory this one shares (through views), or None
        self.root = root

    def type_str(self) -> str:
        return f"{format_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return f"{self.name}: {self.type_str()}"


class Eqn:
    """One primitive application of a traced program."""

    __slots__ = ("ins", "outs", "params", "prim")

    def __init__(self, prim, ins, params, outs):
        self.prim = prim
        self.ins = tuple(ins)
        self.params = params
        self.outs = tuple(outs)

    def format(self) -> str:
        lhs = ", ".join(f"{v.name}: {v.type_str()}" for v in self.outs)
        args = ", ".join(a.name if type(a) is Var else repr(a) for a in self.ins)
        if self.params:
            ps = ", ".join(f"{k}={_short_repr(v)}" for k, v in self.params.items())
            args = f"{args}; {ps}"
        return f"{lhs} = {self.prim.__name__}({args})"


def _short_repr(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


class Graph:
    """A straight-line program: input vars, equations in order, output atoms."""

    __slots__ = ("eqns", "inputs", "outputs")

    def __init__(self, inputs=(), eqns=(), outputs=()):
        self.inputs = list(inputs)
        self.eqns = list(eqns)
        self.outputs = list(outputs)

    def format(self, name="graph") -> str:
        head = ", ".join(repr(v) for v in self.inputs)
        lines = [f"{name}({head}) {{"]
        lines += ["  " + e.format() for e in self.eqns]
        outs = ", ".join(a.name if type(a) is Var else repr(a) for a in self.outputs)
        lines.append(f"  return ({outs})")
        lines.append("}")
        return "\n".join(lines)

    __str__ = format

    def prune(self):
        """Drop the equations no output depends on (in place); returns self."""
        live = {id(a) for a in self.outputs if type(a) is Var}
        kept = []
        for e in reversed(self.eqns):
            if any(id(o) in live for o in e.outs):
                kept.append(e)
                live.update(id(a) for a in e.ins if type(a) is Var)
        kept.reverse()
        self.eqns = kept
        return self
