"""``@cuda.jit`` reordering kernels: ``roll``.

``cat``/``stack`` need no kernel of their own: the backend allocates the result and copies
each operand into its slice (a strided view of the result) with the elementwise
``copy_kernel``, one launch per operand; ``flip`` is a negative-stride view copied the same
way. ``roll`` gathers each output element from its shifted source position, so it reads a
non-contiguous input through its strides with no intermediate copy.
"""

from __future__ import annotations

from numbagrad.kernels.cuda._driver import cuda as _cuda

cuda = _cuda()

__all__ = ["roll_kernel"]


@cuda.jit
def roll_kernel(n, x, xoff, shape, st, shifts, out):
    """``out[c] = x[(c - shifts) mod shape]`` per dim over the contiguous ``out``;
    ``shifts[k]`` is already reduced to ``0 .. shape[k] - 1``."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        rem = i
        off = xoff
        for k in range(len(shape) - 1, -1, -1):
            s = shape[k]
            c = rem % s - shifts[k]
            rem //= s
            if c < 0:
                c += s
            off += c * st[k]
        out[i] = x[off]
