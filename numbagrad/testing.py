"""Testing helpers (``numbagrad.testing.assert_close``)."""

from __future__ import annotations

import numpy as np

from numbagrad._tensor import Tensor

__all__ = ["assert_close"]

_TOL = {
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}


def _arr(x):
    if isinstance(x, Tensor):
        return x._data
    return np.asarray(x)


def assert_close(
    actual,
    expected,
    *,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_dtype=True,
    check_device=True,
    msg=None,
):
    """Raise AssertionError unless ``actual`` and ``expected`` are close (PyTorch's rules).

    Default tolerances come from the dtype (float32: rtol 1.3e-6, atol 1e-5; float64:
    rtol 1e-7, atol 1e-7; exact for integers). Shapes must match; dtypes too unless
    ``check_dtype=False``. Sequences and mappings are compared element by element.

    Examples
    --------
    >>> import numbagrad
    >>> numbagrad.testing.assert_close(numbagrad.tensor([1.0]), numbagrad.tensor([1.0]))
    """
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
            )
        for a, e in zip(actual, expected):
            assert_close(
                a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg
            )
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            raise AssertionError("The keys of the mappings do not match")
        for k in actual:
            assert_close(
                actual[k],
                expected[k],
                rtol=rtol,
                atol=atol,
                equal_nan=equal_nan,
                check_dtype=check_dtype,
                msg=msg,
            )
        return
    a, e = _arr(actual), _arr(expected)
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted")
    if a.shape != e.shape:
        raise AssertionError(
            msg or f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}."
        )
    if (
        check_dtype
        and isinstance(actual, Tensor)
        and isinstance(expected, Tensor)
        and a.dtype != e.dtype
    ):
        raise AssertionError(
            msg
            or f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}."
        )
    if rtol is None:
        rtol, atol = _TOL.get(a.dtype, (0.0, 0.0))
        if a.dtype != e.dtype:
            r2, a2 = _TOL.get(e.dtype, (0.0, 0.0))
            rtol, atol = max(rtol, r2), max(atol, a2)
    af = ef = None
    if a.dtype.kind == "b" or e.dtype.kind == "b":
        ok = np.array_equal(a, e)
        bad = ~np.equal(a, e)
    else:
        wide = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
        af, ef = a.astype(wide), e.astype(wide)  # (complex: |a - e| of the complex values)
        close = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=equal_nan)
        ok = bool(close.all())
        bad = ~close
    if not ok:
        n_bad = int(np.count_nonzero(bad))
        diff = np.abs(af - ef) if af is not None else bad.astype(float)
        idx = (
            np.unravel_index(int(np.nanargmax(np.where(bad, diff, -1))), a.shape) if a.ndim else ()
        )
        raise AssertionError(
            msg
            or (
                f"Tensor-likes are not close!\n\nMismatched elements: {n_bad} / {a.size} "
                f"({100 * n_bad / max(a.size, 1):.1f}%)\nGreatest absolute difference: "
                f"{float(np.nanmax(np.where(bad, diff, 0)))} at index {tuple(int(i) for i in idx)} "
                f"(up to {atol} allowed)\nTolerances: rtol={rtol}, atol={atol}"
            )
        )
