"""Graph nodes (``Node``, a tensor's ``grad_fn``), leaf accumulators, and a graph viewer.

The nodes live in the core layer (``numbagrad._core.graph``, see NOTE [Graph layout]); this
module is their public home, as ``torch.autograd.graph`` is. :func:`to_dot` draws the
backward graph behind tensors as Graphviz DOT (and SVG, where Graphviz is installed).
"""

from __future__ import annotations

import shutil
import subprocess

from numbagrad._core.graph import AccumulateGrad, Node, OpNode, SavedOutput, accumulator_of
from numbagrad._tensor import Tensor

__all__ = ["AccumulateGrad", "DotGraph", "Node", "OpNode", "to_dot"]


class DotGraph(str):
    """Graphviz DOT source (a ``str``) that renders itself to SVG.

    ``to_svg()`` uses the ``graphviz`` Python package when it is installed, else the
    ``dot`` program on ``PATH``; Jupyter shows the SVG (``_repr_svg_``).
    """

    def to_svg(self) -> str:
        try:
            import graphviz
        except ImportError:
            graphviz = None
        if graphviz is not None:
            return graphviz.Source(str(self)).pipe(format="svg").decode()
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("rendering needs Graphviz: `pip install graphviz` and the "
                               "Graphviz programs (`apt install graphviz`, `conda install "
                               "graphviz`), or paste the DOT source into any Graphviz viewer")
        out = subprocess.run([dot, "-Tsvg"], input=str(self).encode(), capture_output=True,
                             check=True)
        return out.stdout.decode()

    def _repr_svg_(self):
        try:
            return self.to_svg()
        except (RuntimeError, OSError, subprocess.CalledProcessError):
            return None  # let Jupyter fall back to the text


def _shape(shape) -> str:
    return str(tuple(int(s) for s in shape))


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _saved_lines(node):
    """One line per tensor the node saved for its backward."""
    saved = node._saved
    if not isinstance(saved, (list, tuple)):
        return []
    lines = []
    for item in saved:
        if isinstance(item, SavedOutput):
            lines.append("saved: its output")
        elif isinstance(item, tuple) and item and isinstance(item[0], Tensor):
            t = item[0]
            lines.append(f"saved: {_shape(t._data.shape)} {t._data.dtype}")
        elif isinstance(item, Tensor) and not item._is_tracer:
            lines.append(f"saved: {_shape(item._data.shape)} {item._data.dtype}")
    return lines


def to_dot(tensors, params=None, show_saved=True) -> DotGraph:
    """The backward graph behind ``tensors`` as Graphviz DOT.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        The outputs whose history to draw (drawn as boxes, with their shapes).
    params : dict of str to Tensor, optional
        Names for leaf tensors (``dict(model.named_parameters())`` or ``{"x": x}``); their
        ``AccumulateGrad`` nodes are labelled with the name.
    show_saved : bool, default True
        List the tensors each node saved for its backward (shape and dtype).

    Returns
    -------
    DotGraph
        The DOT source (a ``str``); ``.to_svg()`` renders it where Graphviz is installed,
        and Jupyter displays it.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.graph import to_dot
    >>> x = numbagrad.ones(3, requires_grad=True)
    >>> dot = to_dot((x.exp() * 2).sum(), params={"x": x})
    >>> "ExpBackward0" in dot and "x\\\\n(3,)" in dot
    True
    """
    outs = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    names = {id(t): n for n, t in (params or {}).items()}
    lines = ["digraph backward {", '  node [shape=box, fontname="monospace", fontsize=10];']
    ids: dict = {}
    stack = []

    def node_id(node):
        key = id(node)
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            stack.append(node)
        return ids[key]

    for k, t in enumerate(outs):
        if not isinstance(t, Tensor):
            raise TypeError(f"to_dot expects tensors, got {type(t).__name__}")
        label = f"output {k}\n{_shape(t._data.shape)} {t._data.dtype}"
        lines.append(f"  o{k} [label={_quote(label)}, style=filled, fillcolor=darkolivegreen1];")
        if t.grad_fn is not None:
            lines.append(f"  {node_id(t.grad_fn)} -> o{k};")
        elif t.requires_grad:
            lines.append(f"  {node_id(accumulator_of(t))} -> o{k};")
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nid = ids[id(node)]
        if isinstance(node, AccumulateGrad):
            v = node.variable
            name = names.get(id(v))
            label = (f"{name}\n" if name else "") + f"{_shape(v._data.shape)} {v._data.dtype}"
            lines.append(f"  {nid} [label={_quote(label)}, style=filled, fillcolor=lightblue];")
            continue
        label = node.name()
        if isinstance(node, OpNode):
            label += f"\n-> {_shape(node._out_shape)} {node._out_dtype}"
        if show_saved:
            label += "".join("\n" + s for s in _saved_lines(node))
        lines.append(f"  {nid} [label={_quote(label)}];")
        for nxt, _ in node.next_functions:
            if nxt is not None:
                lines.append(f"  {node_id(nxt)} -> {nid};")
    lines.append("}")
    return DotGraph("\n".join(lines) + "\n")

