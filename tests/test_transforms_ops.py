"""Op-database suites for the transforms: every entry's JVP rule and batching rule.

* JVP against central differences, and against the VJP by the dot-product identity
  ``<J t, g> == <t, J^T g>``;
* forward-over-reverse equals reverse-over-reverse (Hessian-vector products) on the small
  samples of second-order entries;
* ``vmap`` against loop-and-stack, with the batch dimension first, last, in the middle, on
  one operand alone, and through negative ``in_dims``/``out_dims``; no loop fallback
  (its warning is an error here) for entries with a batching rule.
"""

# The lambdas below are called inside the loop iteration that defines them.
# ruff: noqa: B023

import warnings

import numpy as np
import pytest
from _opdb import op_db
from test_ops import Call, _small_samples, as_tuple, to_numpy

import numbagrad
from numbagrad import func
from numbagrad._transforms import batching

jvp_ops = [i for i in op_db if i.supports_grad and i.supports_jvp]
vmap_ops = [i for i in op_db if i.supports_vmap]

# A batched value written in place into an unbatched tensor (setitem with in_dims=(None, 0)):
# refused with a RuntimeError, as PyTorch's vmap does.
VMAP_REFUSED = {"setitem"}


def _refused(infos):
    return [
        pytest.param(
            i,
            marks=pytest.mark.xfail(
                strict=True,
                raises=RuntimeError,
                reason="in-place write of a batched value into an unbatched tensor is refused",
            ),
        )
        if i.name in VMAP_REFUSED
        else i
        for i in infos
    ]


def _id(info):
    return info.name


def _rand_like(rng, t):
    return numbagrad.tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype)


def _floats(call, leaves):
    return call.float_outputs(*leaves)


@pytest.mark.parametrize("info", jvp_ops, ids=_id)
def test_jvp_matches_central_differences_and_vjp(info):
    rng = np.random.default_rng(1)
    rtol, atol = info.grad_tol
    for sample in info.sample_inputs():
        call = Call(numbagrad, info, sample, "float64")
        leaves = tuple(call.leaves)
        if not leaves:
            continue
        tangents = tuple(_rand_like(rng, x) for x in leaves)
        out, tan = func.jvp(lambda *xs: _floats(call, xs), leaves, tangents)
        if not out:
            continue
        eps = 1e-6
        plus = _floats(call, [x + eps * t for x, t in zip(leaves, tangents)])
        minus = _floats(call, [x - eps * t for x, t in zip(leaves, tangents)])
        for k, (tk, p, q) in enumerate(zip(tan, plus, minus)):
            fd = (to_numpy(p) - to_numpy(q)) / (2 * eps)
            np.testing.assert_allclose(
                to_numpy(tk),
                fd,
                rtol=rtol,
                atol=max(atol, 1e-6),
                err_msg=f"{sample} output {k}: jvp vs differences",
            )
        # dot-product identity against the reverse-mode rule
        cts = tuple(_rand_like(rng, o) for o in out)
        _, vjp_fn = func.vjp(lambda *xs: _floats(call, xs), *leaves)
        grads = vjp_fn(cts)
        lhs = sum(float((to_numpy(t) * to_numpy(c)).sum()) for t, c in zip(tan, cts))
        rhs = sum(float((to_numpy(t) * to_numpy(g)).sum()) for t, g in zip(tangents, grads))
        np.testing.assert_allclose(
            lhs, rhs, rtol=1e-8, atol=1e-10, err_msg=f"{sample}: <J t, g> != <t, J^T g>"
        )


@pytest.mark.parametrize("info", [i for i in jvp_ops if i.supports_gradgrad], ids=_id)
def test_forward_over_reverse_equals_reverse_over_reverse(info):
    rng = np.random.default_rng(2)
    for sample in _small_samples(info):
        call = Call(numbagrad, info, sample, "float64")
        leaves = tuple(call.leaves)
        if not leaves:
            continue
        out = _floats(call, leaves)
        if not out:
            continue
        cts = tuple(_rand_like(rng, o) for o in out)
        v = tuple(_rand_like(rng, x) for x in leaves)

        def scalar(*xs):
            return sum((o * c).sum() for o, c in zip(_floats(call, xs), cts))

        argnums = tuple(range(len(leaves)))
        g = func.grad(scalar, argnums=argnums)
        _, fwd = func.jvp(lambda *xs: g(*xs), leaves, v)
        rev = func.grad(lambda *xs: sum((a * b).sum() for a, b in zip(g(*xs), v)), argnums=argnums)(
            *leaves
        )
        for a, b in zip(fwd, rev):
            np.testing.assert_allclose(
                to_numpy(a),
                to_numpy(b),
                rtol=1e-7,
                atol=1e-9,
                err_msg=f"{sample}: forward-over-reverse",
            )


# -- vmap -------------------------------------------------------------------------------------
B = 3


def _batched(rng, x, bdim):
    """A batch of ``B`` perturbed copies of ``x`` stacked along ``bdim``, and the copies."""
    copies = [x + 0.1 * k * _rand_like(rng, x) if x.is_floating_point() else x for k in range(B)]
    return numbagrad.stack(copies, dim=bdim), copies


def _placements(n, ndims):
    """in_dims tuples to try for ``n`` float leaves of ranks ``ndims``."""
    out = [(0,) * n]
    out.append(tuple(-1 for _ in range(n)))  # last dimension, negative
    out.append(tuple(min(1, d) for d in ndims))  # a middle dimension where there is one
    if n > 1:
        for i in range(n):
            out.append(tuple(0 if j == i else None for j in range(n)))
    return list(dict.fromkeys(out))


@pytest.mark.parametrize("info", _refused(vmap_ops), ids=_id)
def test_vmap_matches_loop_and_stack(info):
    rng = np.random.default_rng(3)
    for sample in info.sample_inputs():
        call = Call(numbagrad, info, sample, "float64")
        leaves = list(call.leaves)
        if not leaves:
            continue
        for dims in _placements(len(leaves), [x.ndim for x in leaves]):
            batched, per = [], []
            for x, d in zip(leaves, dims):
                if d is None:
                    batched.append(x)
                    per.append([x] * B)
                else:
                    nd = d if d >= 0 else x.ndim + 1 + d
                    bx, copies = _batched(rng, x, nd)
                    batched.append(bx)
                    per.append(copies)
            expected = [as_tuple(call(*[p[b] for p in per])) for b in range(B)]
            batching._WARNED.clear()  # the fallback warns once per op and process
            with warnings.catch_warnings():
                warnings.filterwarnings("error", message="There is a performance drop")
                got = as_tuple(func.vmap(lambda *xs: call(*xs), in_dims=dims)(*batched))
            assert len(got) == len(expected[0]), sample
            for k, g in enumerate(got):
                want = np.stack([to_numpy(e[k]) for e in expected])
                np.testing.assert_allclose(
                    to_numpy(g),
                    want,
                    rtol=1e-10,
                    atol=1e-12,
                    err_msg=f"{sample} in_dims={dims} output {k}",
                )
                assert g.dtype == expected[0][k].dtype, (sample, dims, k)


@pytest.mark.parametrize("info", vmap_ops[:20], ids=_id)
def test_vmap_negative_out_dims(info):
    rng = np.random.default_rng(4)
    sample = info.sample_inputs()[0]
    call = Call(numbagrad, info, sample, "float64")
    leaves = list(call.leaves)
    if not leaves:
        pytest.skip("no float operand")
    batched = [_batched(rng, x, 0)[0] for x in leaves]
    a = as_tuple(func.vmap(lambda *xs: call(*xs))(*batched))
    b = as_tuple(func.vmap(lambda *xs: call(*xs), out_dims=-1)(*batched))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(to_numpy(numbagrad.movedim(x, 0, -1)), to_numpy(y))
