"""Per-op time of the forward and the backward, from the dispatcher and the engine
(PyTorch's ``torch.autograd.profiler``).

NOTE [Profiler]
A profile must cost nothing while none is active, so no check sits on the eager path.
Entering :class:`profile` swaps timing wrappers in, and leaving it swaps the originals
back, at the three places every eager op and every backward rule goes through:

- ``Primitive._eval`` (and the custom-Function op's ``_eval``): one event per primitive
  application, named after the primitive (``Mul``, ``Exp``, ``Matmul``; a custom Function
  by its class name), its time covering the kernel, the output Tensor and the graph node;
- the engine's ``run`` of each backward path: one event per backward rule, named after
  the node (``MulBackward0``, ``MyFunctionBackward``);
- the engine's leaf accumulation (``AccumulateGrad``), and the whole backward pass
  (``autograd::engine::backward``: its self time is the engine's own bookkeeping).

Events nest (a custom Function's forward contains the primitives it applies): an event's
*self* time excludes the events inside it, as PyTorch's ``self_cpu_time_total``. Events
are kept per thread and merged in the order they finish. Only the eager interpreter is
timed: under ``numbagrad.func`` transforms an op's time appears at the bottom, where its
rules reach the kernels.
"""

from __future__ import annotations

import json
import threading
import time

from numbagrad.autograd import engine
from numbagrad.autograd.function import _FunctionApply
from numbagrad.ops._op import Primitive

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]

_lock = threading.Lock()
_active: list = []  # the profiles collecting now (nesting is allowed, as in PyTorch)
_local = threading.local()  # .stack: the events open in this thread
_originals: dict = {}


class FunctionEvent:
    """One timed range: an op's forward, a backward rule or a :class:`record_function`."""

    __slots__ = ("child_time", "end", "input_shapes", "name", "start", "thread")

    def __init__(self, name, start, input_shapes=None):
        self.name = name
        self.start = start
        self.end = start
        self.child_time = 0.0
        self.input_shapes = input_shapes
        self.thread = threading.get_ident()

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        """Microseconds from start to end."""
        return (self.end - self.start) * 1e6

    @property
    def self_cpu_time_total(self):
        """Microseconds not spent in events inside this one."""
        return (self.end - self.start - self.child_time) * 1e6

    def __repr__(self):
        return (
            f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.1f}us "
            f"self_cpu_time_total={self.self_cpu_time_total:.1f}us>"
        )


class FunctionEventAvg:
    """The events of one key summed (``count`` of them), as a row of :meth:`EventList.table`."""

    __slots__ = ("count", "cpu_time_total", "input_shapes", "key", "self_cpu_time_total")

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    @property
    def cpu_time(self):
        """Average microseconds per call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key} count={self.count} "
            f"cpu_time_total={self.cpu_time_total:.1f}us "
            f"self_cpu_time_total={self.self_cpu_time_total:.1f}us>"
        )


_COLUMNS = {
    "cpu_time_total": "cpu_time_total",
    "self_cpu_time_total": "self_cpu_time_total",
    "cpu_time": "cpu_time",
    "count": "count",
}


class EventList(list):
    """A list of events or of averages, printable as a table."""

    def key_averages(self, group_by_input_shape=False):
        """One :class:`FunctionEventAvg` per name (and input shapes, when asked)."""
        rows = {}
        for ev in self:
            shapes = ev.input_shapes if group_by_input_shape else None
            k = (ev.key, str(shapes) if shapes is not None else None)
            row = rows.get(k)
            if row is None:
                row = rows[k] = FunctionEventAvg(ev.key, shapes)
            row.count += 1
            row.cpu_time_total += ev.cpu_time_total
            row.self_cpu_time_total += ev.self_cpu_time_total
        return EventList(rows.values())

    @property
    def self_cpu_time_total(self):
        """Microseconds in all the events, each counted once (the sum of self times)."""
        return sum(ev.self_cpu_time_total for ev in self)

    def table(
        self, sort_by="self_cpu_time_total", row_limit=100, header=None, top_level_events_only=False
    ):
        """The events (or their averages) as a text table, most expensive first.

        Parameters
        ----------
        sort_by : {'self_cpu_time_total', 'cpu_time_total', 'cpu_time', 'count'}
            The column to sort by, descending.
        row_limit : int
            At most this many rows (-1: all).
        header : str, optional
            A line printed above the table.
        top_level_events_only : bool
            Accepted for PyTorch compatibility only when False.
        """
        if sort_by not in _COLUMNS:
            raise ValueError(f"sort_by must be one of {sorted(_COLUMNS)}, got {sort_by!r}")
        if top_level_events_only:
            raise NotImplementedError("top_level_events_only=True is not supported")
        rows = self if all(isinstance(r, FunctionEventAvg) for r in self) else self.key_averages()
        rows = sorted(rows, key=lambda r: getattr(r, _COLUMNS[sort_by]), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total = sum(r.self_cpu_time_total for r in rows) or 1.0
        shapes = any(r.input_shapes is not None for r in rows)
        head = ["Name", "Self CPU %", "Self CPU", "CPU total", "CPU time avg", "# of Calls"]
        if shapes:
            head.append("Input Shapes")
        body = []
        for r in rows:
            line = [
                r.key,
                f"{100 * r.self_cpu_time_total / total:.2f}%",
                _fmt(r.self_cpu_time_total),
                _fmt(r.cpu_time_total),
                _fmt(r.cpu_time),
                str(r.count),
            ]
            if shapes:
                line.append(str(r.input_shapes) if r.input_shapes is not None else "")
            body.append(line)
        widths = [
            max(len(head[i]), *(len(b[i]) for b in body)) if body else len(head[i])
            for i in range(len(head))
        ]
        rule = "-" * (sum(widths) + 2 * (len(widths) - 1))
        fmt_row = lambda cells: "  ".join(  # noqa: E731
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )
        lines = ([header] if header else []) + [rule, fmt_row(head), rule]
        lines += [fmt_row(b) for b in body]
        lines += [rule, f"Self CPU time total: {_fmt(self.self_cpu_time_total)}"]
        return "\n".join(lines)


def _fmt(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


# -- timing ----------------------------------------------------------------------------------
def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _open(name, shapes=None):
    ev = FunctionEvent(name, time.perf_counter(), shapes)
    _stack().append(ev)
    return ev


def _close(ev):
    ev.end = time.perf_counter()
    stack = _stack()
    stack.pop()
    if stack:
        stack[-1].child_time += ev.end - ev.start
    for prof in _active:
        prof._events.append(ev)


def _shapes(args):
    return [list(a.shape) if hasattr(a, "shape") else [] for a in args]


def _timed_eval(original, name_of):
    def _eval(cls, args, params):
        ev = _open(name_of(cls, params), _shapes(args) if _record_shapes() else None)
        try:
            return original(cls, args, params)
        finally:
            _close(ev)

    return classmethod(_eval)


def _timed_run(original):
    def run(node, buf):
        ev = _open(node.name())
        try:
            return original(node, buf)
        finally:
            _close(ev)

    return staticmethod(run)


def _timed_store(original):
    def _store_leaf_grad(node, g, create_graph, stored):
        ev = _open("AccumulateGrad")
        try:
            return original(node, g, create_graph, stored)
        finally:
            _close(ev)

    return _store_leaf_grad


def _timed_execute(original):
    def _execute(*args, **kwargs):
        ev = _open("autograd::engine::backward")
        try:
            return original(*args, **kwargs)
        finally:
            _close(ev)

    return _execute


def _record_shapes():
    return any(p.record_shapes for p in _active)


def _install():
    """Swap the timing wrappers in (NOTE [Profiler]); the caller holds ``_lock``."""
    _originals["prim"] = Primitive.__dict__["_eval"]
    _originals["fn"] = _FunctionApply.__dict__["_eval"]
    Primitive._eval = _timed_eval(_originals["prim"].__func__, lambda cls, p: cls.__name__)
    _FunctionApply._eval = _timed_eval(_originals["fn"].__func__, lambda cls, p: p["fn"].__name__)
    for path in (engine._Arrays, engine._Tensors, engine._Traced, engine._Batched):
        _originals[path] = path.__dict__["run"]
        path.run = _timed_run(_originals[path].__func__)
    _originals["store"] = engine._store_leaf_grad
    engine._store_leaf_grad = _timed_store(_originals["store"])
    _originals["execute"] = engine._execute
    engine._execute = _timed_execute(_originals["execute"])


def _uninstall():
    Primitive._eval = _originals.pop("prim")
    _FunctionApply._eval = _originals.pop("fn")
    for path in (engine._Arrays, engine._Tensors, engine._Traced, engine._Batched):
        path.run = _originals.pop(path)
    engine._store_leaf_grad = _originals.pop("store")
    engine._execute = _originals.pop("execute")


class profile:
    """Record the time of every op in the forward and of every backward rule.

    A context manager (PyTorch's ``torch.autograd.profiler.profile``). While it is active,
    each eager primitive application, each custom ``Function`` forward, each backward rule
    and each leaf accumulation becomes an event; outside it nothing is timed and nothing is
    paid (NOTE [Profiler]).

    Parameters
    ----------
    enabled : bool, default True
        False makes the context manager do nothing.
    record_shapes : bool, default False
        Keep the input shapes of forward events (``key_averages(group_by_input_shape=True)``).
    use_cuda, use_device, profile_memory, with_stack, with_flops, with_modules : optional
        Accepted only at their "off" values; numbagrad has no device or memory profiler.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd import profiler
    >>> x = numbagrad.randn(1000, dtype=numbagrad.float64, requires_grad=True)
    >>> with profiler.profile() as prof:
    ...     (x.exp() * x).sum().backward()
    >>> sorted({e.key for e in prof.key_averages()})  # doctest: +NORMALIZE_WHITESPACE
    ['AccumulateGrad', 'Exp', 'ExpBackward0', 'Mul', 'MulBackward0', 'Sum',
     'SumBackward0', 'autograd::engine::backward']
    >>> print(prof.key_averages().table(sort_by="cpu_time_total"))  # doctest: +SKIP
    """

    def __init__(
        self,
        enabled=True,
        *,
        record_shapes=False,
        use_cuda=False,
        use_device=None,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
    ):
        for flag, value in (
            ("use_cuda", use_cuda),
            ("profile_memory", profile_memory),
            ("with_stack", with_stack),
            ("with_flops", with_flops),
            ("with_modules", with_modules),
        ):
            if value:
                raise NotImplementedError(
                    f"profile({flag}=True) is not supported by "
                    "numbagrad's profiler (CPU op times only)"
                )
        if use_device not in (None, "cpu"):
            raise NotImplementedError(
                f"profile(use_device={use_device!r}): only the CPU is profiled"
            )
        self.enabled = enabled
        self.record_shapes = record_shapes
        self._events = EventList()
        self._entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self._entered:
            raise RuntimeError("this profiler is already active; make a new profile()")
        with _lock:
            if not _active:
                _install()
            _active.append(self)
        self._entered = True
        return self

    def __exit__(self, *exc):
        if not self.enabled or not self._entered:
            return False
        with _lock:
            _active.remove(self)
            if not _active:
                _uninstall()
        return False

    def events(self):
        """Every recorded event, in the order they finished."""
        return self._events

    @property
    def function_events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False):
        """The events summed per name (see :meth:`EventList.key_averages`)."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError(
                "key_averages(group_by_input_shape=True) needs profile(record_shapes=True)"
            )
        return self._events.key_averages(group_by_input_shape)

    @property
    def self_cpu_time_total(self):
        return self._events.self_cpu_time_total

    def table(self, *args, **kwargs):
        """:meth:`EventList.table` of the averaged events."""
        return self.key_averages().table(*args, **kwargs)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto) to ``path``."""
        t0 = min((e.start for e in self._events), default=0.0)
        trace = [
            {
                "name": e.name,
                "ph": "X",
                "cat": "cpu_op",
                "pid": 0,
                "tid": e.thread,
                "ts": (e.start - t0) * 1e6,
                "dur": e.cpu_time_total,
            }
            for e in self._events
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def __str__(self):
        return self.table()


class record_function:
    """Label a range of code in the profile (PyTorch's ``record_function``).

    A context manager and a decorator; costs one ``perf_counter`` pair when a profile is
    active and nothing else otherwise.

    Examples
    --------
    >>> import numbagrad
    >>> from numbagrad.autograd import profiler
    >>> x = numbagrad.ones(3)
    >>> with profiler.profile() as prof:
    ...     with profiler.record_function("my_step"):
    ...         y = x * 2
    >>> [(e.key, e.count) for e in prof.key_averages() if e.key == "my_step"]
    [('my_step', 1)]
    """

    def __init__(self, name, args=None):
        self.name = name
        self._ev = None

    def __enter__(self):
        if _active:
            self._ev = _open(self.name)
        return self

    def __exit__(self, *exc):
        if self._ev is not None:
            _close(self._ev)
            self._ev = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapper
