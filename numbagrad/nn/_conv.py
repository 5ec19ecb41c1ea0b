"""The sliding-window primitives behind convolutions and max pooling.

NOTE [Convolution design]
A convolution is ``im2col`` followed by one matrix product, and both halves are ops with
rules of their own:

- ``Im2Col`` (PyTorch's ``unfold``) takes ``x`` of shape ``(*lead, C, *spatial)`` (1 to 3
  spatial dims) to its columns ``(C * prod(kernel), *lead, L)``, ``L`` the output
  positions; zero padding, stride and dilation are its params. It is linear, and its VJP
  is ``Col2Im`` (PyTorch's ``fold``), the adjoint, whose VJP is ``Im2Col`` again.
- ``conv`` is then ``weight.view(G, O/G, C/G * K) @ cols.view(G, C/G * K, N * L)`` (``G``
  the groups; one GEMM per group over the whole batch, the batch being inside the
  columns), plus the bias, moved to ``(N, O, *out)``: its input gradient is
  ``Col2Im(W^T @ g)`` (the transposed convolution), its weight gradient ``g @ cols^T``
  (the convolution of the input with the gradient), each a product of ops, so double
  backward, JVP (the ops are linear and bilinear) and ``vmap`` (leading dims are a batch:
  a ``vmap`` dim folds into them) come from the ops' own rules. ``conv_transpose`` is the
  same two ops the other way round: ``Col2Im(W^T @ x)``.

The columns are saved by the product for the weight gradient, so the backward does not
recompute them. Measured on the shared 2-core machine (float32, the MNIST CNN's second
layer, 32 -> 64 channels 3x3 on 64 x 26 x 26, one thread, best of 9): ``im2col`` and the
GEMM took 30 ms for the forward, a direct ``@njit`` loop nest (``prange`` over images and
output channels, a vectorised inner loop over output columns) 56 ms; for the first layer
(1 -> 32 channels) 0.9 against 1.3 ms. Of the layouts, the columns as ``(C * K, N, L)``
(the kernel's inner loop a straight copy of an input row) beat patches as rows ``(N * L, C
* K)`` (a 3-tap inner loop, 4 to 5 times slower to build) in the MNIST training step
(``asv_bench/benchmarks/bench_conv.py``), and a transposed product ``cols^T @ W^T``
(which needs a transposing copy before ``Col2Im``) was no faster there. The products run
with BLAS at one thread, the large ones cut into pieces on numbagrad's threads (NOTE [BLAS
threads] in ``numbagrad/kernels/cpu/blas.py``): OpenBLAS's own two threads ran the weight
gradient 2-13 times slower on the loaded 2-core machine. ``im2col``/``col2im`` find each
output row's in-bounds span once per kernel tap and copy it without a test per element
(2-3x faster than testing each one: 15 against 30-35 ms for the 32 -> 64 layer's columns,
one thread, loaded machine).

Max pooling is ``MaxPoolIndices`` (the argmax of each window, a kernel; no gradient, as
PyTorch's ``indices`` output) followed by ``WindowGather`` of the input at those indices,
whose gradient is ``WindowScatter`` (a scatter-add) and whose second derivative is the
gather again: linear primitives with rules, row-parallel kernels.
``AdaptiveMaxIndices`` does the same for adaptive windows, and ``max_unpool`` writes values
back at such indices with ``WindowPut``. The kernels are in
``numbagrad/kernels/cpu/conv.py``; CUDA arrays raise ``NotImplementedError`` naming the
op (docs/gpu.rst).
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import ops as F
from numbagrad.kernels import module as kernel_module
from numbagrad.ops._op import Primitive, bind
from numbagrad.ops._rules import front

__all__ = [
    "AdaptiveMaxIndices",
    "Col2Im",
    "Im2Col",
    "MaxPoolIndices",
    "WindowGather",
    "WindowPut",
    "WindowScatter",
]


_CONV_KERNELS = kernel_module("conv")  # imported on first use (NOTE [Lazy kernels])


def _kernels():
    """The im2col/col2im and pooling kernels (``numbagrad.kernels.cpu.conv``)."""
    return _CONV_KERNELS


def _cpu_only(name, *arrays):
    for a in arrays:
        if not isinstance(a, np.ndarray):
            raise NotImplementedError(
                f"{name} is not implemented for CUDA tensors yet; move the tensor to the CPU "
                "with .cpu()"
            )


def _three(v, fill):
    """A 1- to 3-tuple as 3 entries, ``fill`` in front."""
    return (fill,) * (3 - len(v)) + tuple(v)


def out_size(n, k, s, p, d):
    """Output length of a window ``k`` (dilation ``d``) at stride ``s`` over ``n`` padded by
    ``p`` on each side."""
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _blocks(size, kernel, stride, padding, dilation):
    return tuple(
        out_size(n, kk, s, p, d) for n, kk, s, p, d in zip(size, kernel, stride, padding, dilation)
    )


def _work_dtype(dt):
    # the kernels run in float32 or float64 (float16: in float32, as PyTorch's CPU)
    return np.dtype(np.float32) if dt == np.float16 else dt


class Im2Col(Primitive):
    """The columns of a convolution (PyTorch's ``unfold`` for any of 1 to 3 spatial dims,
    with the leading dims moved after the column index): ``x`` of shape ``(*lead, C,
    *spatial)`` to ``(C * prod(kernel), *lead, L)``, channel major then kernel offsets,
    ``L`` the output positions in C order; positions in the zero ``padding`` read 0. With
    the batch inside, a convolution is one GEMM over ``N * L``. ``blocks`` (None: as many
    as fit) sets the number of windows per dim, for a transposed convolution whose output
    padding reaches past the last window. Linear; its adjoint is ``Col2Im``."""

    linearity = "linear"
    grad_fn = "Im2ColBackward0"

    @staticmethod
    def impl(be, x, *, kernel, stride, padding, dilation, blocks=None):
        _cpu_only("im2col (unfold/conv)", x)
        k = len(kernel)
        sp = x.shape[x.ndim - k :]
        c = x.shape[x.ndim - k - 1]
        lead = x.shape[: x.ndim - k - 1]
        osz = blocks or _blocks(sp, kernel, stride, padding, dilation)
        b = math.prod(lead)
        dt = _work_dtype(x.dtype)
        x5 = np.ascontiguousarray(x.reshape((b, c, *_three(sp, 1))), dtype=dt)
        kk = _three(kernel, 1)
        cols = be.empty((c, *kk, b, math.prod(osz)), dt)
        if cols.size:
            _kernels().im2col(
                x5,
                *kk,
                *_three(stride, 1),
                *_three(padding, 0),
                *_three(dilation, 1),
                *_three(osz, 1),
                cols,
            )
        out = cols.reshape((c * math.prod(kernel), *lead, math.prod(osz)))
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def vjp(ctx, g, *, kernel, stride, padding, dilation, blocks=None):
        shape = ctx.input_shape(0)
        p = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
        size = tuple(shape[len(shape) - len(kernel) :])
        return (bind(Col2Im, (g,), dict(p, size=size, blocks=blocks)),)

    @staticmethod
    def batch(args, dims, **params):
        (x,), (d,) = args, dims
        return bind(Im2Col, (front(x, d),), params), 1


class Col2Im(Primitive):
    """The adjoint of ``Im2Col`` (PyTorch's ``fold``): columns ``(C * prod(kernel), *lead,
    L)`` summed into an image ``(*lead, C, *size)``; entries in the padding are dropped."""

    linearity = "linear"
    grad_fn = "Col2ImBackward0"

    @staticmethod
    def impl(be, cols, *, kernel, stride, padding, dilation, size, blocks=None):
        _cpu_only("col2im (fold/conv_transpose)", cols)
        kprod = math.prod(kernel)
        lead = cols.shape[1:-1]
        c = cols.shape[0] // kprod
        osz = blocks or _blocks(size, kernel, stride, padding, dilation)
        b = math.prod(lead)
        dt = _work_dtype(cols.dtype)
        kk = _three(kernel, 1)
        c6 = np.ascontiguousarray(cols.reshape((c, *kk, b, math.prod(osz))), dtype=dt)
        out = _zeros(be, (b, c, *_three(size, 1)), dt)
        if c6.size and out.size:
            _kernels().col2im(
                c6,
                *kk,
                *_three(stride, 1),
                *_three(padding, 0),
                *_three(dilation, 1),
                *_three(osz, 1),
                out,
            )
        return out.reshape((*lead, c, *tuple(size))).astype(cols.dtype, copy=False)

    @staticmethod
    def vjp(ctx, g, *, kernel, stride, padding, dilation, size, blocks=None):
        p = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
        return (bind(Im2Col, (g,), dict(p, blocks=blocks)),)

    @staticmethod
    def batch(args, dims, **params):
        (x,), (d,) = args, dims
        return bind(Col2Im, (F.movedim(x, d, 1) if d != 1 else x,), params), 0


class MaxPoolIndices(Primitive):
    """For ``x`` of shape ``(*lead, *spatial)`` (1 to 3 spatial dims), the flat index into
    each unpadded ``spatial`` plane of the maximum of every pooling window (PyTorch's
    ``indices``: int64, the first maximum, NaN wins; ``-inf`` padding is never chosen).
    Data, with no gradient: ``max_pool`` gathers ``x`` at these indices."""

    differentiable = False

    @staticmethod
    def impl(be, x, *, kernel, stride, padding, dilation, out):
        _cpu_only("max_pool", x)
        k = len(kernel)
        sp = x.shape[x.ndim - k :]
        lead = x.shape[: x.ndim - k]
        b = math.prod(lead)
        x4 = np.ascontiguousarray(x.reshape((b, *_three(sp, 1))), dtype=_work_dtype(x.dtype))
        res = be.empty((b, *_three(out, 1)), np.int64)
        k3, s3, d3, o3 = (_three(v, 1) for v in (kernel, stride, dilation, out))
        if (
            res.size
            and x4.shape[1] == 1
            and k3[0] == 1
            and not any(padding)
            and all(
                (o - 1) * st + (kk - 1) * d < n
                for o, st, kk, d, n in zip(o3[1:], s3[1:], k3[1:], d3[1:], x4.shape[2:])
            )
        ):
            # 1-D and 2-D windows all inside the planes (no padding, no ceil_mode window
            # past the end): the kernel without bounds tests, 1.4x faster (MNIST's 2x2 pool
            # of 64 x 64 x 24 x 24, one thread: 10.4 against 14.4 ms)
            _kernels().max_pool_indices_inside(
                x4.reshape(x4.shape[0], *x4.shape[2:]),
                *k3[1:],
                *s3[1:],
                *d3[1:],
                res.reshape(res.shape[0], *res.shape[2:]),
            )
        elif res.size:
            _kernels().max_pool_indices(
                x4,
                *_three(kernel, 1),
                *_three(stride, 1),
                *_three(padding, 0),
                *_three(dilation, 1),
                res,
            )
        return res.reshape(lead + tuple(out))

    @staticmethod
    def batch(args, dims, **params):
        (x,), (d,) = args, dims
        return bind(MaxPoolIndices, (front(x, d),), params), 0


class AdaptiveMaxIndices(Primitive):
    """For ``x`` of shape ``(*lead, *spatial)``, the flat index of the maximum of each
    adaptive window (``[floor(i n / out), ceil((i + 1) n / out))`` per dim) of
    ``adaptive_max_pool``: int64 data, no gradient."""

    differentiable = False

    @staticmethod
    def impl(be, x, *, out):
        _cpu_only("adaptive_max_pool", x)
        k = len(out)
        sp = x.shape[x.ndim - k :]
        lead = x.shape[: x.ndim - k]
        b = math.prod(lead)
        x4 = np.ascontiguousarray(x.reshape((b, *_three(sp, 1))), dtype=_work_dtype(x.dtype))
        res = be.empty((b, *_three(out, 1)), np.int64)
        if res.size:
            _kernels().adaptive_max_indices(x4, res)
        return res.reshape(lead + tuple(out))

    @staticmethod
    def batch(args, dims, **params):
        (x,), (d,) = args, dims
        return bind(AdaptiveMaxIndices, (front(x, d),), params), 0


def _zeros(be, shape, dtype):
    """A zero-filled array from the backend's buffer cache (a fresh large array costs a
    page fault per page: NOTE [Buffer cache])."""
    out = be.empty(shape, dtype)
    out.fill(0)
    return out


def _rows(be, a, dtype=None):
    """``a`` as a C-contiguous ``(rows, last)`` array."""
    return np.ascontiguousarray(a.reshape(-1, a.shape[-1]), dtype=dtype)


def _both_front(args, dims):
    """Both operands with the batch in front (an unbatched one expanded to it)."""
    x, idx = args
    dx, di = dims
    b = x.shape[dx] if dx is not None else idx.shape[di]
    x = front(x, dx) if dx is not None else F.expand(F.unsqueeze(x, 0), (b, *x.shape))
    idx = front(idx, di) if di is not None else F.expand(F.unsqueeze(idx, 0), (b, *idx.shape))
    return x, idx


class WindowGather(Primitive):
    """``out[..., q] = x[..., idx[..., q]]``: each row of ``x`` (``(*lead, P)``, a
    flattened pooling plane) at the row's indices ``idx`` (``(*lead, Q)``, data from
    ``MaxPoolIndices``, in range by construction). Linear in ``x``; its adjoint is
    ``WindowScatter``."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, x, idx):
        _cpu_only("max_pool", x)
        dt = _work_dtype(x.dtype)
        xr = _rows(be, x, dt)
        ir = _rows(be, idx, np.int64)
        out = be.empty(ir.shape, dt)
        if out.size:
            _kernels().gather_rows(xr, ir, out)
        return out.reshape(idx.shape).astype(x.dtype, copy=False)

    @staticmethod
    def vjp(ctx, g):
        (idx,) = ctx.saved()
        return bind(WindowScatter, (g, idx), {"size": ctx.input_shape(0)[-1]}), None

    @staticmethod
    def batch(args, dims):
        return bind(WindowGather, _both_front(args, dims), {}), 0


class WindowScatter(Primitive):
    """The adjoint of ``WindowGather``: ``g`` (``(*lead, Q)``) added into zero rows of
    length ``size`` at ``idx``."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, g, idx, *, size):
        _cpu_only("max_pool backward", g)
        dt = _work_dtype(g.dtype)
        gr = _rows(be, g, dt)
        ir = _rows(be, idx, np.int64)
        out = _zeros(be, (gr.shape[0], size), dt)
        if gr.size:
            _kernels().scatter_add_rows(gr, ir, out)
        return out.reshape((*g.shape[:-1], size)).astype(g.dtype, copy=False)

    @staticmethod
    def vjp(ctx, gg, *, size):
        (idx,) = ctx.saved()
        return bind(WindowGather, (gg, idx), {}), None

    @staticmethod
    def batch(args, dims, *, size):
        return bind(WindowScatter, _both_front(args, dims), {"size": size}), 0


class WindowPut(Primitive):
    """``max_unpool``'s scatter: ``g`` (``(*lead, Q)``) written into zero rows of length
    ``size`` at ``idx`` (the last of repeated indices wins, as PyTorch's CPU loop). Linear;
    its VJP is ``WindowGather`` at every index, PyTorch's ``max_unpool`` backward."""

    linearity = "linear"
    data_operands = (1,)
    saves_inputs = (1,)

    @staticmethod
    def impl(be, g, idx, *, size):
        _cpu_only("max_unpool", g)
        dt = _work_dtype(g.dtype)
        gr = _rows(be, g, dt)
        ir = _rows(be, idx, np.int64)
        if ir.size and (ir.min() < 0 or ir.max() >= size):  # (the kernel checks nothing)
            bad = ir.min() if ir.min() < 0 else ir.max()
            raise RuntimeError(f"Found an invalid max index: {bad} (output planes of size {size})")
        out = _zeros(be, (gr.shape[0], size), dt)
        if gr.size:
            _kernels().put_rows(gr, ir, out)
        return out.reshape((*g.shape[:-1], size)).astype(g.dtype, copy=False)

    @staticmethod
    def vjp(ctx, gg, *, size):
        (idx,) = ctx.saved()
        return bind(WindowGather, (gg, idx), {}), None

    @staticmethod
    def batch(args, dims, *, size):
        return bind(WindowPut, _both_front(args, dims), {"size": size}), 0


def gather_windows(x, idx, k):
    """``x`` (``(*lead, *spatial)``, ``k`` spatial dims) at the flat per-plane indices
    ``idx`` (``(*lead, *out)``): the pooled values, differentiable through
    ``WindowGather``/``WindowScatter``."""
    lead = tuple(x.shape[: x.ndim - k])
    # explicit sizes: a -1 cannot be inferred when a lead dim is 0 (an empty batch)
    flat = F.reshape(x, (*lead, math.prod(x.shape[x.ndim - k :])))
    fi = F.reshape(idx, (*lead, math.prod(idx.shape[len(lead) :])))
    return F.reshape(bind(WindowGather, (flat, fi), {}), tuple(idx.shape))
