"""Complex numbers: the parts of a complex tensor and the maps between real and complex.

NOTE [Complex autograd]
numbagrad follows PyTorch's convention ("Autograd for Complex Numbers" in PyTorch's
notes): the gradient of a real loss ``L`` with respect to ``z = x + iy`` is
``dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative ``dL/dz*``), so a step
along ``-grad`` decreases ``L``. A rule receives ``g``, that gradient for the output
``s = f(z)``, and returns ``g * conj(ds/dz) + conj(g) * ds/dz*``: for a holomorphic ``f``
(``exp``, ``sin``, products) the second term is zero and the rule is the real one with
its local derivative conjugated, ``g * conj(f'(z))`` (the ``Unary`` family,
``ops/unary.py``; ``mul``'s ``g * conj(b)``, ``matmul``'s ``g @ b^H``). The JVP is never
conjugated: ``t * f'(z)``. Functions from complex to real (``abs``, ``angle``, ``real``,
``imag``) and back (``complex``, ``polar``) have their own rules here; a real input of
an op whose output is complex gets the real part of its gradient (the engine's
``_fix``, PyTorch's ``handle_r_to_c``).

``conj`` is a copy (numbagrad has no lazy conjugate bit): ``is_conj()`` is always
False and ``resolve_conj`` returns its input. ``real`` and ``imag`` are views that share
the complex tensor's memory, so writing into them writes the complex tensor; with a graph
recorded, such a write becomes the base's ``AsStridedPut`` over its real and imaginary
parts (``real=True``, ``ops/inplace.py``), as for any other view.
"""

from __future__ import annotations

import math

import numpy as np

from numbagrad import _dtype as D
from numbagrad import ops as F
from numbagrad._creation import const_zeros_like as zeros_like
from numbagrad._tensor import Tensor
from numbagrad.ops._op import NO_PARAMS, Primitive, bind
from numbagrad.ops._public import public
from numbagrad.ops._rules import bound_both_ways, elementwise_batch, unary_batch
from numbagrad.ops.inplace import ToCopy

__all__ = ["sgn_complex"]

_builtin_complex = complex


def _check_tensor(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )


def _to(g, np_dtype):
    return bind(ToCopy, (g,), {"dtype": np_dtype})


def _real_rule(cls, ctx, saved, g):
    return ToCopy, (g,), {"dtype": ctx.input_dtype(0)}  # the real gradient, made complex


class Real(Primitive):
    """The real part of a complex tensor, a view of its memory."""

    complex_ok = True
    view = True
    linearity = "linear"
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return x.real

    vjp, fused_vjp = bound_both_ways(_real_rule)


class Imag(Primitive):
    """The imaginary part of a complex tensor, a view of its memory."""

    complex_ok = True
    view = True
    linearity = "linear"
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return x.imag

    @staticmethod
    def vjp(ctx, g):
        return _to(g, ctx.input_dtype(0)) * 1j

    # by hand (NOTE [Hand-written fused rules]): two steps (the cast, then ``* 1j``)
    @staticmethod
    def fused_vjp(ctx, g):
        return g.astype(ctx.input_dtype(0)) * 1j


def _conj_rule(cls, ctx, saved, g):
    return cls, (g,), NO_PARAMS  # conjugation is its own adjoint


class Conj(Primitive):
    """The complex conjugate (a copy: no lazy conjugate bit)."""

    complex_ok = True
    linearity = "linear"  # over the reals, which is what the JVP needs
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        return be.xp.conjugate(x)

    vjp, fused_vjp = bound_both_ways(_conj_rule)


class ConjPhysical(Conj):
    """``conj_physical``: the conjugate, always materialised (as ``conj`` is here)."""


class Angle(Primitive):
    """The argument of each element (a real tensor): ``atan2(imag, real)``; for real
    inputs 0 or pi (NaN stays NaN), as PyTorch's."""

    complex_ok = True
    saves_inputs = (0,)
    batch = classmethod(unary_batch)

    @staticmethod
    def impl(be, x):
        xp = be.xp
        if x.dtype.kind == "c":
            return xp.angle(x)
        if x.dtype.kind != "f":
            x = x.astype(D.get_default_dtype().np)
        out = xp.where(x < 0, xp.asarray(math.pi, x.dtype), xp.zeros((), x.dtype))
        return xp.where(xp.isnan(x), x, out)

    @staticmethod
    def vjp(ctx, g):
        (z,) = ctx.saved()
        if not z.is_complex():
            return zeros_like(z) if z.is_floating_point() else None
        # d angle = (x dy - y dx) / |z|^2: the gradient is g * i z / |z|^2 (0 at z = 0)
        r2 = _abs2(z)
        safe = F.where(r2 == 0, 1, r2)
        return F.where(r2 == 0, 0, (g / safe) * (z * 1j))

    @staticmethod
    def jvp(primals, tangents, out):
        (z,), (t,) = primals, tangents
        if not z.is_complex():
            return None
        r2 = _abs2(z)
        safe = F.where(r2 == 0, 1, r2)
        return F.where(r2 == 0, 0, imag(conj(z) * t) / safe)


def _abs2(z):
    """``|z|^2`` as a real tensor, differentiably."""
    return real(z) * real(z) + imag(z) * imag(z)


class Sgn(Primitive):
    """``z / |z|`` (0 at 0) of a complex tensor; its rule, for VJP and JVP alike, is
    ``(v - s^2 conj(v)) / (2 |z|)`` (0 at 0), as PyTorch's ``sgn_backward``."""

    complex_ok = True
    saves_inputs = (0,)
    saves_output = True
    batch = classmethod(unary_batch)
    grad_fn = "SgnBackward0"

    @staticmethod
    def impl(be, x):
        xp = be.xp
        a = xp.abs(x)
        zero = a == 0
        return xp.where(zero, xp.zeros((), x.dtype), x / xp.where(zero, 1, a))

    @staticmethod
    def _rule(z, s, v):
        a = F.abs(z)
        zero = a == 0
        return F.where(zero, 0, (v - s * s * conj(v)) / (F.where(zero, 1, a) * 2))

    @classmethod
    def vjp(cls, ctx, g):
        z, s = ctx.saved()
        return cls._rule(z, s, g)

    @classmethod
    def jvp(cls, primals, tangents, out):
        return cls._rule(primals[0], out, tangents[0])


class Complex(Primitive):
    """``real + i imag`` from two real tensors of one floating dtype (broadcast)."""

    complex_ok = True
    linearity = "linear"

    @staticmethod
    def impl(be, re, im):
        out = be.xp.empty(
            np.broadcast_shapes(re.shape, im.shape), D._FROM_NP[re.dtype].to_complex().np
        )
        out.real = re
        out.imag = im
        return out

    @staticmethod
    def vjp(ctx, g):
        return (
            real(g) if ctx.needs_input_grad(0) else None,
            imag(g) if ctx.needs_input_grad(1) else None,
        )

    # by hand (NOTE [Hand-written fused rules]): two gradients, the real and imaginary parts
    @staticmethod
    def fused_vjp(ctx, g):
        return (
            g.real.copy() if ctx.needs_input_grad(0) else None,
            g.imag.copy() if ctx.needs_input_grad(1) else None,
        )

    @staticmethod
    def batch(args, dims):
        return elementwise_batch(Complex, args, dims)


class ViewAsReal(Primitive):
    """A complex tensor as a real one with a last dimension of 2 (real, imaginary), a view
    of the same memory."""

    complex_ok = True
    view = True
    linearity = "linear"

    @staticmethod
    def impl(be, x):
        # a trailing axis of length 1 is contiguous whatever the strides, so any view
        # (a strided last dimension too, as PyTorch's) reinterprets without a copy
        return x[..., None].view(x.real.dtype)

    @staticmethod
    def vjp(ctx, g):
        return view_as_complex(F.contiguous(g))

    # by hand (NOTE [Hand-written fused rules]): ``ascontiguousarray`` copies only when needed, then
    # a view
    @staticmethod
    def fused_vjp(ctx, g):
        g = np.ascontiguousarray(g)
        return g.view(np.result_type(g.dtype, np.complex64))[..., 0]

    @staticmethod
    def jvp(primals, tangents, out):
        return bind(ViewAsReal, (F.contiguous(tangents[0]),), NO_PARAMS)

    @staticmethod
    def batch(args, dims):
        (x,), (d,) = args, dims
        return bind(ViewAsReal, (F.contiguous(x),), NO_PARAMS), d


class ViewAsComplex(Primitive):
    """A real tensor whose last dimension is 2 as a complex tensor, a view of the same
    memory."""

    complex_ok = True
    view = True
    linearity = "linear"

    @staticmethod
    def impl(be, x):
        cdt = D._FROM_NP[x.dtype].to_complex().np
        if x.size == 0:  # (nothing to reinterpret; NumPy's empty arrays may have 0 strides)
            return be.empty(x.shape[:-1], cdt)
        return x.view(cdt)[..., 0]

    @staticmethod
    def vjp(ctx, g):
        return view_as_real(F.contiguous(g))

    # by hand (NOTE [Hand-written fused rules]): ``ascontiguousarray`` copies only when needed, then
    # a view
    @staticmethod
    def fused_vjp(ctx, g):
        return ViewAsReal.impl(None, np.ascontiguousarray(g))

    @staticmethod
    def jvp(primals, tangents, out):
        return bind(ViewAsComplex, (F.contiguous(tangents[0]),), NO_PARAMS)

    @staticmethod
    def batch(args, dims):
        (x,), (d,) = args, dims
        if d == x.ndim - 1:  # the batch dimension may not be the (real, imag) pair
            x, d = F.movedim(x, d, 0), 0
        return bind(ViewAsComplex, (F.contiguous(x),), NO_PARAMS), d


# -- public functions ----------------------------------------------------------------------
@public
def real(input):
    """The real part of ``input``: a view for complex tensors (writing into it writes
    ``input``), ``input`` itself for real ones.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.real(numbagrad.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    _check_tensor("real", input)
    if not input.dtype.is_complex:
        return input
    return bind(Real, (input,), NO_PARAMS)


@public
def imag(input):
    """The imaginary part of a complex tensor, a view of its memory.

    Raises
    ------
    RuntimeError
        For a real tensor, as PyTorch.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.imag(numbagrad.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    _check_tensor("imag", input)
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return bind(Imag, (input,), NO_PARAMS)


@public
def conj(input):
    """The complex conjugate; ``input`` itself for real tensors.

    numbagrad has no lazy conjugate bit: the result is a new tensor, ``is_conj()`` is
    False and :func:`resolve_conj` returns its input (PyTorch returns a lazy view whose
    values are the same).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.conj(numbagrad.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    _check_tensor("conj", input)
    if not input.dtype.is_complex:
        return input
    return bind(Conj, (input,), NO_PARAMS)


@public
def conj_physical(input):
    """The complex conjugate, materialised (as :func:`conj` here); ``input`` itself for
    real tensors."""
    _check_tensor("conj_physical", input)
    if not input.dtype.is_complex:
        return input
    return bind(ConjPhysical, (input,), NO_PARAMS)


@public
def resolve_conj(input):
    """``input`` itself: numbagrad's conjugates are materialised (see :func:`conj`)."""
    _check_tensor("resolve_conj", input)
    return input


@public
def resolve_neg(input):
    """``input`` itself: numbagrad has no lazy negation bit."""
    _check_tensor("resolve_neg", input)
    return input


@public
def is_conj(input):
    """False: numbagrad has no lazy conjugate bit (see :func:`conj`)."""
    _check_tensor("is_conj", input)
    return False


@public
def is_neg(input):
    """False: numbagrad has no lazy negation bit."""
    _check_tensor("is_neg", input)
    return False


@public
def isreal(input):
    """Elementwise: whether each element is real (a zero imaginary part; always True for
    real tensors).

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.isreal(numbagrad.tensor([1 + 0j, 1j]))
    tensor([ True, False])
    """
    _check_tensor("isreal", input)
    if not input.dtype.is_complex:
        return F.ones_like(input, dtype=D.bool)
    return imag(input) == 0


@public
def angle(input):
    """The argument of each element, ``atan2(imag, real)`` (a real tensor); for a real
    tensor 0 where it is non-negative and pi where negative.

    Its gradient for a complex ``z`` is ``g * i z / |z|^2`` (0 at 0), PyTorch's.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.angle(numbagrad.tensor([1j, -1.0 + 0j]))
    tensor([1.5708, 3.1416])
    """
    _check_tensor("angle", input)
    return bind(Angle, (input,), NO_PARAMS)


def sgn_complex(input):
    """``z / |z|`` (0 at 0) of a complex tensor (``numbagrad.sgn`` for complex inputs)."""
    return bind(Sgn, (input,), NO_PARAMS)


@public(method=False)
def complex(real, imag):
    """A complex tensor from its real and imaginary parts, two floating tensors of one
    dtype (float32 gives complex64, float64 complex128), broadcast together.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.complex(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([3.0, -4.0]))
    tensor([1.+3.j, 2.-4.j])
    """
    for name, x in (("real", real), ("imag", imag)):
        if not isinstance(x, Tensor):
            raise TypeError(f"complex(): argument '{name}' must be Tensor, not {type(x).__name__}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {real.dtype} but got scalar type {imag.dtype} "
            "for second argument"
        )
    if real.dtype not in (D.float32, D.float64):
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got {real.dtype} "
            f"and {imag.dtype}"
            + (" (numbagrad has no complex32)" if real.dtype is D.float16 else "")
        )
    return bind(Complex, (real, imag), NO_PARAMS)


@public(method=False)
def polar(abs, angle):
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``.

    Examples
    --------
    >>> import numbagrad, math
    >>> numbagrad.polar(numbagrad.tensor([2.0]), numbagrad.tensor([math.pi / 2])).imag
    tensor([2.])
    """
    for name, x in (("abs", abs), ("angle", angle)):
        if not isinstance(x, Tensor):
            raise TypeError(f"polar(): argument '{name}' must be Tensor, not {type(x).__name__}")
    if abs.dtype is not angle.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {abs.dtype} but got scalar type {angle.dtype} "
            "for second argument"
        )
    return complex(abs * F.cos(angle), abs * F.sin(angle))


@public(method=False)
def view_as_real(input):
    """A complex tensor as a real tensor with a trailing dimension of size 2 (real and
    imaginary parts), sharing its memory.

    Raises
    ------
    RuntimeError
        For a real tensor.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.view_as_real(numbagrad.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    _check_tensor("view_as_real", input)
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return bind(ViewAsReal, (input,), NO_PARAMS)


@public(method=False)
def view_as_complex(input):
    """A float32/float64 tensor whose last dimension is 2 as a complex tensor (the pairs
    are real and imaginary parts), sharing its memory.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.view_as_complex(numbagrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1.+2.j, 3.+4.j])
    """
    _check_tensor("view_as_complex", input)
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(
            "view_as_complex is only supported for float and double tensors, but got a "
            f"tensor of scalar type: {input.dtype}"
        )
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if not input._is_tracer and input.numel():  # (an empty tensor has nothing to misread)
        d = input._data
        item = d.itemsize
        if d.strides[-1] != item:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % (2 * item) for s, n in zip(d.strides[:-1], d.shape[:-1]) if n > 1):
            raise RuntimeError(
                "Tensor must have a stride divisible by 2 for all but last dimension"
            )
        base = input._storage[0]
        off = d.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        if off % (2 * item):
            raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return bind(ViewAsComplex, (input,), NO_PARAMS)
