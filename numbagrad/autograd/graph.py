"""Graph nodes (``Node``, a tensor's ``grad_fn``), leaf accumulators, and a graph viewer.

The nodes live in the core layer (``numbagrad._core.graph``, see NOTE [Graph layout]); this
module is their public home, as ``torch.autograd.graph`` is. :func:`to_dot` draws the
backward graph behind tensors as Graphviz DOT (and SVG, where Graphviz is installed).
"""

from __future__ import annotations

import shutil
import subprocess
import threading

from numbagrad._core.extension import RECORDING
from numbagrad._core.graph import AccumulateGrad, Node, OpNode, SavedOutput, accumulator_of
from numbagrad._tensor import Tensor
from numbagrad.autograd import engine as _engine

__all__ = [
    "AccumulateGrad",
    "DotGraph",
    "Node",
    "OpNode",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
    "to_dot",
]


class saved_tensors_hooks:
    """Context manager: every tensor saved for backward while it is active goes through
    ``pack_hook`` at save time and ``unpack_hook`` when backward reads it
    (``torch.autograd.graph.saved_tensors_hooks``).

    Built-in ops and ``ctx.save_for_backward`` in custom Functions both use it. Contexts
    nest: the innermost pair is used, and the pair active when a tensor was saved unpacks
    it. ``unpack_hook`` must return a Tensor (TypeError otherwise); the tensor backward
    then uses has the saved tensor's history. See NOTE [Saved-tensor hooks].

    Parameters
    ----------
    pack_hook : callable
        ``pack_hook(tensor) -> object``; must not modify ``tensor`` in place.
    unpack_hook : callable
        ``unpack_hook(object) -> Tensor``, the value to use in place of the saved tensor.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.graph import saved_tensors_hooks
    >>> x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    >>> seen = []
    >>> with saved_tensors_hooks(lambda t: seen.append(t.shape) or t, lambda t: t):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> len(seen), x.grad
    (2, tensor([2., 4.]))
    """

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks expects two callables (pack_hook, unpack_hook)")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        RECORDING.push_saved_hooks(self.pack_hook, self.unpack_hook)  # NOTE [Recording options]
        return self

    def __exit__(self, *exc):
        RECORDING.pop_saved_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved-tensor hooks that keep a CPU copy of each saved tensor
    (``torch.autograd.graph.save_on_cpu``).

    numbagrad runs on the CPU only, so, as in a CPU-only build of PyTorch, this packs each
    saved tensor into a copy in host memory and unpacks that copy: values and gradients
    are unchanged, and the copy decouples the saved value from later in-place changes.
    ``pin_memory=True`` is accepted and has nothing to pin without CUDA (PyTorch's CPU
    build also ignores it there).

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.graph import save_on_cpu
    >>> x = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x.exp() * x).sum()
    >>> y.backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [5.4366, 22.1672]
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        self.pin_memory = bool(pin_memory)

        def pack(t):
            return Tensor._make(t._data.copy())

        def unpack(packed):
            return packed

        super().__init__(pack, unpack)


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Run ``fn`` once the gradients of ``tensors`` are computed in a backward
    (``torch.autograd.graph.register_multi_grad_hook``).

    With ``mode='all'``, ``fn(grads)`` runs once per backward, after every tensor of
    ``tensors`` that takes part in it got its gradient; ``grads`` has one entry per tensor
    (None for those that got none). With ``mode='any'``, ``fn(grad)`` runs once per
    backward, on the first gradient computed among them. Returns a handle whose
    ``remove()`` unregisters it.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd.graph import register_multi_grad_hook
    >>> a = numbagrad.tensor(1.0, requires_grad=True)
    >>> b = numbagrad.tensor(2.0, requires_grad=True)
    >>> h = register_multi_grad_hook((a, b), lambda gs: print(gs))
    >>> (a * b).backward()
    (tensor(2.), tensor(1.))
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"register_multi_grad_hook expects tensors, got {type(t).__name__}")
    state = {"grads": {}, "count": 0, "fired": False, "expected": None, "run": None}
    lock = threading.Lock()

    def expected_count():
        # the tensors whose gradient this backward will compute: their node is pending

        run = _engine.current_run()
        if run is None:
            return None, None
        n = 0
        for t in tensors:
            if t._requires_grad and run.will_compute(t):
                n += 1
        return n, run

    def make_hook(i):
        def hook(g):
            with lock:
                run = _engine.current_run()
                if state["run"] is not run:  # a new backward: start over
                    state.update(
                        grads={}, count=0, fired=False, run=run, expected=expected_count()[0]
                    )
                if mode == "any":
                    if state["fired"]:
                        return None
                    state["fired"] = True
                    call = True
                else:
                    state["grads"][i] = g
                    state["count"] += 1
                    call = state["count"] == state["expected"]
            if call:
                if mode == "any":
                    fn(g)
                else:
                    fn(tuple(state["grads"].get(k) for k in range(len(tensors))))
            return None

        return hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t._requires_grad]
    return _MultiHandle(handles)


class _MultiHandle:
    """The handle of :func:`register_multi_grad_hook`: ``remove()`` removes every hook."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


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
            raise RuntimeError(
                "rendering needs Graphviz: `pip install graphviz` and the "
                "Graphviz programs (`apt install graphviz`, `conda install "
                "graphviz`), or paste the DOT source into any Graphviz viewer"
            )
        out = subprocess.run(
            [dot, "-Tsvg"], input=str(self).encode(), capture_output=True, check=True
        )
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
