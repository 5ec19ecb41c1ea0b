"""Single kernels by size: where the eager overhead ends and throughput begins.

These pick the per-op, per-size paths that asv decides (NumPy ufunc vs ``@njit`` loop,
serial vs ``parallel=True`` threshold: docs/developer.rst, design decisions, 5). Sizes are
total elements; reductions run on a ``(size // 100, 100)`` matrix, and so do the
broadcasts: ``add_row`` adds a 100-vector to each of its rows, ``mul_outer`` is the outer
product of a ``(size // 100, 1)`` column and a ``(1, 100)`` row. Inputs do not require grad
except for ``tanh_backward``, which times ``y.backward(g, retain_graph=True)`` of ``y = tanh(x)``:
the engine plus the fused ``g * (1 - y*y)`` kernel plus leaf accumulation.
"""

from ._common import BACKENDS, cached, const, leaf, load_backend, rng

SIZES = [100, 10_000, 1_000_000]
OPS = (
    "tanh_forward",
    "exp_forward",
    "mul_forward",
    "add_row",
    "mul_outer",
    "tanh_backward",
    "sum_dim0",
    "sum_dim1",
)


def kernel_inputs(size):
    """a, b (vectors in [-2, 2]), m (matrix view of a) and g (cotangent) for ``size``."""
    r = rng(4)
    a = r.uniform(-2.0, 2.0, size)
    b = r.uniform(-2.0, 2.0, size)
    g = r.uniform(-1.0, 1.0, size)
    return a, b, a.reshape(size // 100, 100), g


def broadcast_inputs(a, b):
    """The row (100,) and column (size // 100, 1) the broadcast ops take, from a and b."""
    return b[:100].copy(), a[: a.size // 100].reshape(-1, 1).copy()


def build_tensor_ops(mod, size):
    """One callable per op on numbagrad or torch tensors."""
    a_np, b_np, m_np, g_np = kernel_inputs(size)
    a, b, m, g = const(mod, a_np), const(mod, b_np), const(mod, m_np), const(mod, g_np)
    row, col = (const(mod, v) for v in broadcast_inputs(a_np, b_np))
    x = leaf(mod, a_np)
    y = mod.tanh(x)

    def tanh_backward():
        x.grad = None
        y.backward(g, retain_graph=True)
        return x.grad

    return {
        "tanh_forward": lambda: mod.tanh(a),
        "exp_forward": lambda: mod.exp(a),
        "mul_forward": lambda: a * b,
        "add_row": lambda: m + row,
        "mul_outer": lambda: col * row,
        "tanh_backward": tanh_backward,
        "sum_dim0": lambda: m.sum(0),
        "sum_dim1": lambda: m.sum(1),
    }


def build_numpy_ops(np_, size):
    """One callable per op with NumPy (the backward is the three-pass ufunc version)."""
    a, b, m, g = kernel_inputs(size)
    row, col = broadcast_inputs(a, b)
    y = np_.tanh(a)
    return {
        "tanh_forward": lambda: np_.tanh(a),
        "exp_forward": lambda: np_.exp(a),
        "mul_forward": lambda: a * b,
        "add_row": lambda: m + row,
        "mul_outer": lambda: col * row,
        "tanh_backward": lambda: g * (1.0 - y * y),
        "sum_dim0": lambda: m.sum(0),
        "sum_dim1": lambda: m.sum(1),
    }


def _failing(exc):
    """A stand-in op that raises ``exc`` again, so one broken op fails only its own row."""

    def fn():
        raise exc

    return fn


def _prepare(backend, size):
    mod = load_backend(backend)
    build = build_numpy_ops if backend == "numpy" else build_tensor_ops
    ops = build(mod, size)
    for name, fn in ops.items():
        try:
            fn()  # warm-up: compile each kernel for this dtype and layout
        except Exception as exc:
            ops[name] = _failing(exc)
    return ops


class Kernels:
    """Elementwise, fused-backward and reduction kernels at 1e2, 1e4 and 1e6 elements."""

    params = [BACKENDS, SIZES]
    param_names = ["backend", "size"]
    # asv-runner >= 0.3 times calls one by one when setup exists; 20 per sample steadies
    # the microsecond-sized ones.
    number = 20
    repeat = (5, 20, 10.0)

    def setup(self, backend, size):
        self.ops = cached(("Kernels", backend, size), lambda: _prepare(backend, size))

    def time_tanh_forward(self, backend, size):
        """``tanh(a)``."""
        return self.ops["tanh_forward"]()

    def time_exp_forward(self, backend, size):
        """``exp(a)``."""
        return self.ops["exp_forward"]()

    def time_mul_forward(self, backend, size):
        """``a * b``, same shapes."""
        return self.ops["mul_forward"]()

    def time_add_row(self, backend, size):
        """``m + row``: a 100-vector added to each row of a ``(size // 100, 100)`` matrix."""
        return self.ops["add_row"]()

    def time_mul_outer(self, backend, size):
        """``col * row``: the ``(size // 100, 100)`` outer product of a column and a row."""
        return self.ops["mul_outer"]()

    def time_tanh_backward(self, backend, size):
        """Backward of ``y = tanh(x)`` with cotangent ``g`` (NumPy: ``g * (1 - y*y)``)."""
        return self.ops["tanh_backward"]()

    def time_sum_dim0(self, backend, size):
        """``m.sum(0)`` on a ``(size // 100, 100)`` matrix (strided reduction)."""
        return self.ops["sum_dim0"]()

    def time_sum_dim1(self, backend, size):
        """``m.sum(1)`` on a ``(size // 100, 100)`` matrix (contiguous rows)."""
        return self.ops["sum_dim1"]()
