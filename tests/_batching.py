"""Helpers shared by the per-family batching-rule tests (``test_batch_rules_*.py``)."""

import warnings

import numpy as np

import numbagrad
from numbagrad import func
from numbagrad._transforms import batching

B = 3


def t(values, dtype=np.float64):
    return numbagrad.tensor(np.asarray(values, dtype=dtype))


def arr(x):
    return np.asarray(x.detach().numpy())


def loop(fn, args, in_dims):
    """``fn`` per batch element, stacked along 0 (what ``vmap`` must equal)."""
    outs = []
    for i in range(B):
        outs.append(arr(fn(*[a if d is None else a.select(d, i) for a, d in zip(args, in_dims)])))
    return np.stack(outs)


def vmapped(fn, args, in_dims, ops=None):
    """``vmap(fn)``, failing if a primitive (one of ``ops``, a regex alternation, when
    given) falls back to the per-element loop."""
    batching._WARNED.clear()  # the loop fallback warns once per op and process
    pattern = "There is a performance drop" if ops is None else f".*batching rule for ({ops}):"
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=pattern)
        return func.vmap(fn, in_dims=in_dims)(*args)
