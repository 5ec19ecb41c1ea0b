"""Property tests: binary ops over broadcastable shapes, reductions over axis tuples.

Values come from bounded grids that keep every op inside its domain and away from its
kinks, so that a central difference in a random direction is an exact enough oracle
for the gradient (a float64 directional derivative, as HIPS autograd's ``check_grads``).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import (
    array_shapes,
    arrays,
    mutually_broadcastable_shapes,
    valid_tuple_axes,
)

import numbagrad

EPS = 1e-6


def _grid(lo, hi, step, nonzero=False):
    """Multiples of ``step`` in [lo, hi] (finite, no subnormals, optional no zero)."""
    ks = st.integers(round(lo / step), round(hi / step))
    if nonzero:
        ks = ks.filter(lambda k: k != 0)
    return ks.map(lambda k: k * step)


def _offset_grid(frac_lo, frac_hi):
    """Integer plus a fraction in [frac_lo, frac_hi]: two such grids never tie."""
    return st.builds(
        lambda k, f: k + f,
        st.integers(-2, 2),
        st.floats(frac_lo, frac_hi, allow_nan=False, allow_infinity=False),
    )


REAL = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)
POSITIVE = st.floats(0.3, 3.0, allow_nan=False, allow_infinity=False)
NONZERO = st.one_of(st.floats(0.3, 3.0), st.floats(-3.0, -0.3))

# name -> (numbagrad call, NumPy reference, elements of a, elements of b)
BINARY = {
    "add": (lambda a, b: a + b, np.add, REAL, REAL),
    "sub": (lambda a, b: numbagrad.sub(a, b), np.subtract, REAL, REAL),
    "mul": (lambda a, b: a * b, np.multiply, REAL, REAL),
    "div": (lambda a, b: a / b, np.divide, REAL, NONZERO),
    "pow": (lambda a, b: a**b, np.power, POSITIVE, REAL),
    "maximum": (
        lambda a, b: numbagrad.maximum(a, b),
        np.maximum,
        _offset_grid(0.0, 0.3),
        _offset_grid(0.5, 0.8),
    ),
    "minimum": (
        lambda a, b: numbagrad.minimum(a, b),
        np.minimum,
        _offset_grid(0.0, 0.3),
        _offset_grid(0.5, 0.8),
    ),
    "atan2": (lambda a, b: numbagrad.atan2(a, b), np.arctan2, NONZERO, REAL),
}


def _directional_fd(ref, arrays_, directions, cot):
    """Central difference of ``sum(cot * ref(*arrays))`` along ``directions``."""

    def f(s):
        return np.sum(cot * ref(*[a + s * d for a, d in zip(arrays_, directions, strict=True)]))

    return (f(EPS) - f(-EPS)) / (2 * EPS)


def _check_grads(ref, arrays_, grads, cot, rng):
    for a, g in zip(arrays_, grads, strict=True):
        assert g is not None
        assert tuple(g.shape) == a.shape, "gradient shape must equal the input shape"
    directions = [rng.standard_normal(a.shape) for a in arrays_]
    expected = _directional_fd(ref, arrays_, directions, cot)
    got = sum(np.sum(g.numpy() * d) for g, d in zip(grads, directions, strict=True))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(BINARY))
@given(data=st.data())
def test_binary_broadcasting(name, data):
    call, ref, elem_a, elem_b = BINARY[name]
    shapes = data.draw(
        mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
    )
    sa, sb = shapes.input_shapes
    a = data.draw(arrays(np.float64, sa, elements=elem_a))
    b = data.draw(arrays(np.float64, sb, elements=elem_b))
    ta = numbagrad.tensor(a, requires_grad=True)
    tb = numbagrad.tensor(b, requires_grad=True)
    out = call(ta, tb)
    assert tuple(out.shape) == shapes.result_shape
    assert out.dtype == numbagrad.float64
    np.testing.assert_allclose(out.detach().numpy(), ref(a, b), rtol=1e-12, atol=1e-12)

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cot = rng.standard_normal(shapes.result_shape)
    grads = numbagrad.autograd.grad(out, (ta, tb), grad_outputs=numbagrad.tensor(cot))
    _check_grads(ref, (a, b), grads, cot, rng)


def _ref_logsumexp(x, axis, keepdims):
    mx = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - mx), axis=axis, keepdims=True)) + mx
    return out if keepdims else np.squeeze(out, axis=axis)


def _ref_norm(x, axis, keepdims):
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))


# name -> (numbagrad call (x, dim, keepdim), NumPy reference (x, axis, keepdims), tuple dims)
REDUCTIONS = {
    "sum": (lambda x, d, k: x.sum(dim=d, keepdim=k), np.sum, True),
    "mean": (lambda x, d, k: x.mean(dim=d, keepdim=k), np.mean, True),
    "amax": (lambda x, d, k: numbagrad.amax(x, dim=d, keepdim=k), np.max, True),
    "amin": (lambda x, d, k: x.amin(dim=d, keepdim=k), np.min, True),
    "logsumexp": (lambda x, d, k: numbagrad.logsumexp(x, dim=d, keepdim=k), _ref_logsumexp, True),
    "var": (
        lambda x, d, k: x.var(dim=d, correction=0, keepdim=k),
        lambda x, axis, keepdims: np.var(x, axis=axis, keepdims=keepdims),
        True,
    ),
    "norm": (lambda x, d, k: x.norm(p=2, dim=d, keepdim=k), _ref_norm, True),
    # torch's prod takes a single int dim
    "prod": (lambda x, d, k: x.prod(dim=d, keepdim=k), np.prod, False),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@given(data=st.data())
def test_reduction_axes(name, data):
    call, ref, tuple_dims = REDUCTIONS[name]
    shape = data.draw(array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    # Distinct values on a 0.25 grid: no ties for amax/amin, no zeros for prod/norm.
    x = data.draw(
        arrays(np.float64, shape, elements=_grid(-4.0, 4.0, 0.25, nonzero=True), unique=True)
    )
    axes = data.draw(valid_tuple_axes(len(shape), min_size=1))
    keepdim = data.draw(st.booleans())
    dim = axes if tuple_dims else axes[0]
    axis = tuple(axes) if tuple_dims else axes[0]

    tx = numbagrad.tensor(x, requires_grad=True)
    out = call(tx, dim, keepdim)
    expected = np.asarray(ref(x, axis=axis, keepdims=keepdim))
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cot = rng.standard_normal(expected.shape)
    (grad,) = numbagrad.autograd.grad(out, (tx,), grad_outputs=numbagrad.tensor(cot))
    _check_grads(lambda v: ref(v, axis=axis, keepdims=keepdim), (x,), (grad,), cot, rng)


@given(data=st.data())
def test_softmax_rows_sum_to_one_and_grad(data):
    shape = data.draw(array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(arrays(np.float64, shape, elements=REAL))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    tx = numbagrad.tensor(x, requires_grad=True)
    out = numbagrad.softmax(tx, dim)
    np.testing.assert_allclose(out.detach().numpy().sum(axis=dim), 1.0, rtol=1e-12)

    def ref(v):
        e = np.exp(v - v.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    np.testing.assert_allclose(out.detach().numpy(), ref(x), rtol=1e-12, atol=1e-15)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cot = rng.standard_normal(shape)
    (grad,) = numbagrad.autograd.grad(out, (tx,), grad_outputs=numbagrad.tensor(cot))
    _check_grads(ref, (x,), (grad,), cot, rng)
