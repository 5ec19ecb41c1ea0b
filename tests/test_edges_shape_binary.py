"""Silent differences from PyTorch 2.13 in the shape and binary ops (issue 9): dtypes,
PyTorch's advanced-indexing order, index shapes of gather/scatter_add/take_along_dim/
index_select, 0-d and empty shapes, ties in sorting, integer division by zero, gradients at
special values, ``copy_``, and what each op saves for backward (version counters).

Each differential scenario is a function of the library module ``T`` (``torch`` or
``numbagrad``) returning what it observed; the test runs it on both and compares (values,
dtypes, shapes, gradients; the exception type where PyTorch raises). Tests that need no
oracle (vmap of the new indexing rules, gradgradcheck) run without torch.
"""

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.func import grad, vmap

nan, inf = math.nan, math.inf

pytestmark = pytest.mark.skipif(
    ng.__name__ == "torch", reason="differential tests need the real numbagrad"
)


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


# -- harness ---------------------------------------------------------------------------------
def _norm(v):
    """A library-neutral form of an observation: tensors become (dtype, shape, values)."""
    if hasattr(v, "detach") and hasattr(v, "dtype"):
        a = np.asarray(
            v.detach().tolist(),
            dtype=np.float64
            if v.dtype.is_floating_point
            else np.int64
            if str(v.dtype).split(".")[-1] != "bool"
            else bool,
        )
        return ("T", str(v.dtype).split(".")[-1], tuple(v.shape), a)
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if hasattr(v, "shape") and not isinstance(v, np.ndarray):  # a torch.Size
        return tuple(v)
    if hasattr(v, "is_floating_point"):  # a dtype
        return str(v).split(".")[-1]
    if isinstance(v, str):  # a node name (PyTorch's C++ ones are namespaced)
        return v.split("::")[-1]
    return v


def _same(a, b, signed_zeros=False):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
        ):
            return False
        if a.dtype.kind != "f":
            return bool(np.array_equal(a, b))
        ok = np.allclose(a, b, rtol=1e-6, atol=1e-12, equal_nan=True)
        both_inf = np.isinf(a) | np.isinf(b)
        ok = ok and np.array_equal(a[both_inf], b[both_inf])
        if signed_zeros:
            zero = (a == 0) | (b == 0)
            ok = ok and np.array_equal(np.signbit(a[zero]), np.signbit(b[zero]))
        return bool(ok)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, signed_zeros) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, equal_nan=True))
    return a == b


def _run(T, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", _norm(fn(T))
        except Exception as e:  # the exception type is the observation
            return "raise", type(e).__name__, str(e)


def _check(torch, fn, signed_zeros=False):
    want = _run(torch, fn)
    got = _run(ng, fn)
    if want[0] == "raise":
        assert got[0] == "raise", f"PyTorch raised {want[1]}: {want[2]}; numbagrad gave {got}"
        # numbagrad's out-of-range error is both an IndexError and a RuntimeError
        assert got[1] == want[1] or (
            got[1] == "IndexOutOfRangeError" and want[1] in ("IndexError", "RuntimeError")
        ), (want, got)
        return
    assert got[0] == "ok", f"numbagrad raised {got[1]}: {got[2]}"
    assert _same(want[1], got[1], signed_zeros), f"\ntorch:     {want[1]}\nnumbagrad: {got[1]}"


def _cases(table):
    return pytest.mark.parametrize("fn", list(table.values()), ids=list(table))


# -- dtypes ----------------------------------------------------------------------------------
DTYPES = {
    "masked_fill_int_half": lambda T: T.tensor([1, 2, 3]).masked_fill(
        T.tensor([True, False, True]), 0.5
    ),
    "masked_fill_int_neg": lambda T: T.tensor([1, 2, 3]).masked_fill(
        T.tensor([True, False, True]), -2.7
    ),
    "masked_fill_bool": lambda T: T.tensor([True, False]).masked_fill(T.tensor([False, True]), 0.5),
    "masked_fill_int_tensor_value": lambda T: T.tensor([1, 2]).masked_fill(
        T.tensor([True, False]), T.tensor(2.5)
    ),
    "masked_fill_float": lambda T: T.tensor([1.0, 2.0]).masked_fill(T.tensor([True, False]), 3),
    "masked_fill_broadcast": lambda T: T.zeros(3).masked_fill(T.ones(2, 3, dtype=T.bool), 1),
    "masked_fill_long_mask": lambda T: T.zeros(3).masked_fill(T.ones(3, dtype=T.int64), 1),
    "masked_fill_1d_value": lambda T: T.zeros(3).masked_fill(T.ones(3, dtype=T.bool), T.ones(1)),
    "masked_fill_inf_into_int": lambda T: T.zeros(3, dtype=T.int64).masked_fill(
        T.ones(3, dtype=T.bool), inf
    ),
    "masked_fill_inplace_int": lambda T: T.tensor([1, 2, 3]).masked_fill_(
        T.tensor([True, False, True]), 0.5
    ),
    "clamp_int_float_bounds": lambda T: T.tensor([1, 2, 3]).clamp(0.5, 2.5),
    "clamp_int_float_min": lambda T: T.tensor([1, 2, 3]).clamp(min=0.5),
    "clip_int_float_max": lambda T: T.tensor([1, 2, 3]).clip(max=1.5),
    "clamp_int_min_above_max_float": lambda T: T.tensor([1, 2, 3]).clamp(3.5, 1),
    "clamp_int_min_above_max_int": lambda T: T.tensor([1, 2, 3]).clamp(3, 1),
    "clamp_min_above_max_nan": lambda T: T.tensor([nan, -2.5, 2.0]).clamp(1.5, -0.5),
    "clamp_scalar_nan": lambda T: T.tensor([nan, -2.5, 2.0]).clamp(-1.0, 1.0),
    "clamp_int_int": lambda T: T.tensor([1, 2, 3], dtype=T.int32).clamp(1, 2),
    "clamp_bool": lambda T: T.tensor([True, False]).clamp(0, 1),
    "clamp_f64": lambda T: T.tensor([1.0, 2.0], dtype=T.float64).clamp(0.5, 1),
    "clamp_int_tensor_float_bounds": lambda T: T.tensor([1, 5, 3]).clamp(
        T.tensor([2.0, 2.0, 2.0]), T.tensor([4, 4, 4])
    ),
    "clamp_0d_f64_bound": lambda T: T.tensor([1.0, 2.0, 3.0]).clamp(
        T.tensor(0.0, dtype=T.float64), T.tensor(2.0)
    ),
    "clamp_1d_f64_bound": lambda T: T.tensor([1.0, 2.0, 3.0]).clamp(T.zeros(3, dtype=T.float64)),
    "clamp_tensor_nan": lambda T: T.clamp(
        T.tensor([0.0, 1.0, 2.0, nan]),
        T.tensor([1.0, nan, 1.0, 1.0]),
        T.tensor([2.0, 2.0, nan, 2.0]),
    ),
    "pow_bool_int": lambda T: T.tensor([True, False]) ** 2,
    "pow_bool_float": lambda T: T.tensor([True, False]) ** 2.0,
    "pow_bool_true": lambda T: T.tensor([True, False]) ** True,
    "pow_bool_false": lambda T: T.tensor([True, False]) ** False,
    "pow_bool_zero": lambda T: T.tensor([True, False]) ** 0,
    "pow_bool_bool": lambda T: T.tensor([True]) ** T.tensor([True]),
    "pow_bool_int_tensor": lambda T: T.tensor([True, False]) ** T.tensor([2, 3]),
    "pow_int_negative_tensor": lambda T: (
        T.tensor([2, 1, -1, 0, 3, -1]) ** T.tensor([-1, -2, -3, -1, 0, -2])
    ),
    "pow_bool_negative_tensor": lambda T: T.tensor([True, False]) ** T.tensor([-1, -1]),
    "pow_int_negative_scalar": lambda T: T.tensor([2]) ** -1,
    "rpow_int_negative": lambda T: 2 ** T.tensor([-1, 2]),
    "pow_special_exponents": lambda T: [
        T.pow(T.tensor([-inf, -0.0, 4.0, -4.0, 0.0]), e) for e in (0.5, -0.5, 2, 3, -1, -2, 1.5)
    ],
    "logical_not_int": lambda T: T.logical_not(T.tensor([0, 1, 5])),
    "logical_not_float": lambda T: T.logical_not(T.tensor([0.0, 1.5, nan, -0.0])),
    "logical_not_bool": lambda T: T.logical_not(T.tensor([True, False])),
    "logical_not_0d": lambda T: T.logical_not(T.tensor(3)),
    "bitwise_not_int": lambda T: T.bitwise_not(T.tensor([0, 1, 5])),
    "invert_int": lambda T: ~T.tensor([0, 1, 5]),
    "invert_bool": lambda T: ~T.tensor([True, False]),
    "invert_float": lambda T: ~T.tensor([1.0]),
    "bitwise_not_float": lambda T: T.bitwise_not(T.tensor([1.0])),
}


@_cases(DTYPES)
def test_dtypes(torch, fn):
    _check(torch, fn, signed_zeros=True)


# -- alpha (add, sub, their in-place forms, index_add, addmm/addmv/baddbmm) ---------------------
def _bools(T):
    return T.tensor([True, False, True]), T.tensor([True, True, False])


def _alpha_grads(T):
    a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    b = T.tensor([3.0, -1.0], dtype=T.float64, requires_grad=True)
    (T.sub(a, b, alpha=-1.5) * T.tensor([1.0, 2.0], dtype=T.float64)).sum().backward()
    return a.grad, b.grad


_M = [[1, 2], [3, 1]]
ALPHA = {
    # bool results stay bool: alpha * other is True * other (False for alpha 0)
    "add_bool_alpha_2": lambda T: T.add(*_bools(T), alpha=2),
    "add_bool_alpha_0": lambda T: T.add(*_bools(T), alpha=0),
    "add_bool_alpha_true": lambda T: T.add(*_bools(T), alpha=True),
    "add_bool_scalar_alpha_2": lambda T: T.add(_bools(T)[0], True, alpha=2),
    "add_bool_scalar_alpha_0": lambda T: T.add(_bools(T)[0], True, alpha=0),
    "add_inplace_bool_alpha_2": lambda T: _bools(T)[0].add_(_bools(T)[1], alpha=2),
    "add_inplace_bool_alpha_true": lambda T: _bools(T)[0].add_(_bools(T)[1], alpha=True),
    "add_bool_int_alpha": lambda T: T.add(_bools(T)[0], T.tensor([1, 2, 3]), alpha=2),
    # PyTorch's alpha checks against the result dtype
    "add_bool_float_alpha": lambda T: T.add(*_bools(T), alpha=2.0),
    "add_int_float_alpha": lambda T: T.add(T.tensor([1, 2]), T.tensor([3, 4]), alpha=2.5),
    "add_int_scalar_float_alpha": lambda T: T.add(T.tensor([1, 2]), 3, alpha=0.5),
    "sub_int_float_alpha": lambda T: T.sub(T.tensor([1, 2]), T.tensor([3, 4]), alpha=2.0),
    "add_int_bool_alpha": lambda T: T.add(T.tensor([1, 2]), T.tensor([3, 4]), alpha=True),
    "add_float_bool_alpha": lambda T: T.add(T.tensor([1.0]), T.tensor([3.0]), alpha=False),
    "add_inplace_float_bool_alpha": lambda T: T.tensor([1.0]).add_(T.tensor([3.0]), alpha=True),
    "sub_inplace_int_float_alpha": lambda T: T.tensor([1]).sub_(T.tensor([3]), alpha=0.5),
    "add_int_int_alpha": lambda T: T.add(T.tensor([1, 2]), T.tensor([3, 4]), alpha=-3),
    "add_float_int_float_alpha": lambda T: T.add(T.tensor([1.0]), T.tensor([3]), alpha=2.5),
    # sub refuses a bool operand before it looks at alpha
    "sub_float_bool_alpha": lambda T: T.sub(T.tensor([1.0]), T.tensor([True]), alpha=2),
    "sub_int_pybool_alpha": lambda T: T.sub(T.tensor([1]), True, alpha=2),
    "sub_inplace_float_bool_alpha": lambda T: T.tensor([1.0]).sub_(T.tensor([True]), alpha=2),
    # alpha * other in the result dtype: an int64 other is not rounded to float32 first
    "add_float64_int64_float_alpha": lambda T: T.add(
        T.tensor([-8388608.0], dtype=T.float64), T.tensor([2**24 + 1]), alpha=0.5
    ),
    "sub_alpha_gradients": _alpha_grads,
    # index_add and the addmm family cast alpha/beta to the dtype (2.5 is 2 for int64)
    "index_add_int_float_alpha": lambda T: T.zeros(3, dtype=T.int64).index_add(
        0, T.tensor([0, 1, 1]), T.tensor([1, 2, 3]), alpha=2.5
    ),
    "index_add_bool_alpha": lambda T: T.zeros(3, dtype=T.bool).index_add(
        0, T.tensor([0, 1]), T.tensor([True, True]), alpha=2
    ),
    "addmm_int_float_alpha_beta": lambda T: T.addmm(
        T.tensor(_M), T.tensor(_M), T.tensor(_M), alpha=2.5, beta=1.5
    ),
    "addmv_int_float_beta": lambda T: T.addmv(
        T.tensor([1, 2]), T.tensor(_M), T.tensor([1, 2]), beta=2.5
    ),
    "baddbmm_int_float_alpha": lambda T: T.baddbmm(
        T.tensor([_M]), T.tensor([_M]), T.tensor([_M]), alpha=-1.5
    ),
}


@_cases(ALPHA)
def test_alpha(torch, fn):
    _check(torch, fn)


# -- integer division ------------------------------------------------------------------------
BIG = [2**60 + 1, -(2**60) - 1, 2**62 + 3, -7, 7, 0]
DIVISION = {
    "floordiv_scalar_zero": lambda T: T.tensor([5, 3]) // 0,
    "floordiv_tensor_zero": lambda T: T.tensor([5, 3]) // T.tensor([0, 1]),
    "remainder_scalar_zero": lambda T: T.tensor([5, 3]) % 0,
    "remainder_tensor_zero": lambda T: T.remainder(T.tensor([5, 3]), T.tensor([0, 1])),
    "remainder_int32_zero": lambda T: (
        T.tensor([5, 3], dtype=T.int32) % T.tensor([0, 1], dtype=T.int32)
    ),
    "fmod_zero": lambda T: T.fmod(T.tensor([5, 3]), 0),
    "div_trunc_zero": lambda T: T.div(T.tensor([5, 3]), 0, rounding_mode="trunc"),
    "div_floor_zero": lambda T: T.div(T.tensor([5, 3]), 0, rounding_mode="floor"),
    "rfloordiv_zero": lambda T: 7 // T.tensor([1, 0]),
    "true_div_int_zero": lambda T: T.div(T.tensor([5, 3]), 0),
    "float_floordiv_zero": lambda T: T.tensor([5.0, -3.0, 0.0]) // 0,
    "float_remainder_zero": lambda T: T.tensor([5.0, 3.0]) % 0,
    "fmod_float_zero": lambda T: T.fmod(T.tensor([4]), 0.0),
    "div_trunc_big": lambda T: T.div(T.tensor(BIG), 3, rounding_mode="trunc"),
    "div_floor_big": lambda T: T.div(T.tensor(BIG), 3, rounding_mode="floor"),
    "div_trunc_big_tensor": lambda T: T.div(
        T.tensor(BIG), T.tensor([7, -7, 3, 2, -2, 5]), rounding_mode="trunc"
    ),
    "div_floor_big_tensor": lambda T: T.div(
        T.tensor(BIG), T.tensor([7, -7, 3, 2, -2, 5]), rounding_mode="floor"
    ),
    "div_trunc_scalar_numerator": lambda T: T.div(-7, T.tensor([2, -2, 3]), rounding_mode="trunc"),
    "div_trunc_int_by_float": lambda T: T.div(T.tensor([-7, 7]), 2.5, rounding_mode="trunc"),
    "div_floor_bool": lambda T: T.div(T.tensor([True]), T.tensor([True]), rounding_mode="floor"),
    "div_bad_mode": lambda T: T.div(T.tensor([1.0]), 2, rounding_mode="round"),
    "fmod_bool": lambda T: T.fmod(T.tensor([True]), T.tensor([True])),
    "remainder_signed_zeros": lambda T: T.remainder(
        T.tensor([-2.0, 2.0, -3.0, 3.0, 5.0, -5.0, 5.0, -5.0, -0.0]),
        T.tensor([1.0, 1.0, -1.0, -1.0, inf, inf, -inf, -inf, 2.0]),
    ),
    "remainder_scalars": lambda T: [
        T.remainder(T.tensor([-2.0, 2.5, -0.0]), 1.0),
        T.remainder(-2.0, T.tensor([1.0, -1.0, 0.5])),
    ],
    # an empty integer result divides nothing: no ZeroDivisionError (fuzz seed 902096)
    "empty_int_by_zero": lambda T: [
        T.remainder(T.zeros(0, dtype=T.int64), 0),
        T.fmod(T.zeros(0, 3, dtype=T.int64), T.zeros(3, dtype=T.int64)),
        T.floor_divide(T.zeros(0, dtype=T.int64), T.zeros(2, 1, dtype=T.int64)),
        T.div(T.zeros(0, dtype=T.int64), 0, rounding_mode="trunc"),
    ],
    "int_by_zero": lambda T: T.remainder(T.ones(2, dtype=T.int64), 0),
}


@_cases(DIVISION)
def test_integer_division(torch, fn):
    _check(torch, fn, signed_zeros=True)


# -- advanced indexing in PyTorch's order ----------------------------------------------------
def _I(*v):
    return np.array(v, dtype=np.int64)


def _B(*v):
    return np.array(v, dtype=bool)


KEYS = {
    "int_slice_tensor": (0, slice(None), _I(1, 2)),
    "slice_int_tensor": (slice(None), 0, _I(1, 2)),
    "tensor_slice_tensor": (_I(0), slice(None), _I(1, 2)),
    "int_tensor_tensor": (0, _I(0, 1), _I(1, 2)),
    "tensor_int_tensor": (_I(0, 1), 0, _I(1, 2)),
    "slice_tensor_int": (slice(None), _I(0, 1), 0),
    "none_int_slice_tensor": (None, 0, slice(None), _I(1, 2)),
    "int_none_tensor": (0, None, _I(1, 2)),
    "tensor_none_tensor": (_I(0, 1), None, _I(1, 2)),
    "tensor_slice_int": (_I(0, 1), slice(None), 0),
    "int_ellipsis_tensor": (0, Ellipsis, _I(1, 2)),
    "tensor_ellipsis_int": (_I(1), Ellipsis, 0),
    "ellipsis_int_tensor": (Ellipsis, 0, _I(1)),
    "ellipsis_tensor": (Ellipsis, _I(3, 0)),
    "tensor_ellipsis": (_I(1, 0), Ellipsis),
    "broadcast_2d": (np.array([[0, 1]]), slice(None), np.array([[1], [2]])),
    "int_2d_slice": (0, np.array([[0, 1]]), slice(None)),
    "bool_true": (True,),
    "bool_false": (False,),
    "int_bool": (0, True),
    "bool_int_tensor": (True, 0, _I(1, 2)),
    "mask_slice_tensor": (_B(True, False), slice(None), _I(1, 2)),
    "mask_int_tensor": (_B(True, False), 0, _I(1, 2)),
    "slice_mask_int": (slice(None), _B(True, False, True), 1),
    "int_mask_tensor": (0, _B(True, False, True), _I(0, 3)),
    "mask_2d": (np.ones((2, 3), bool),),
    "mask_2d_int": (np.ones((2, 3), bool), 0),
    "int_mask_2d": (0, np.eye(3, 4, dtype=bool)),
    "slice_mask_2d": (slice(None), np.eye(3, 4, dtype=bool)),
    "tensor_slices_none": (_I(0, 1), slice(None), slice(None), None),
    "none_tensor_none_tensor": (None, _I(0, 1), None, _I(1, 2)),
    "step_tensor_slice": (slice(None, None, 2), _I(0, 2), slice(1, 3)),
    "negative_tensors": (_I(-1), slice(None), _I(-1)),
    "0d_int_tensor_select": (np.array(1), slice(None), _I(1, 2)),
    "0d_bool_true": (np.array(True), 0),
    "0d_bool_false": (np.array(False),),
    "int_0d_bool_tensor": (0, np.array(True), _I(0, 1)),
    "lists": ([0, 1], 0, [1, 2]),
    "list_first": ([0, 1],),
    "int_list_int": (0, [1, 2], 0),
    "nested_list": ([[0, 1], [1, 0]], slice(None), 0),
    "ellipsis_none_tensor": (Ellipsis, None, _I(1, 2)),
    "tensor_ellipsis_tensor": (_I(0, 1), Ellipsis, _I(1, 2)),
    "tensors_ellipsis_none": (_I(0, 1), _I(1, 2), Ellipsis, None),
    "ints_tensor": (1, -1, _I(0, 3)),
    "slices_tensor_last": (slice(None), slice(None), slice(None), _I(0)),
    "empty_tensors": (np.zeros(0, np.int64), slice(None), _I(1)),
    "duplicates": (_I(0, 1, 1),),
    "duplicates_last": (slice(None), _I(0, 0, 2)),
    "two_ellipses": (0, Ellipsis, 0, Ellipsis),
    "numpy_int": (np.int64(1), _I(0)),
    "empty_list": ([],),
    # errors
    "negative_step": (slice(None, None, -1),),
    "negative_step_2": (slice(None), slice(None, None, -2)),
    "zero_step": (slice(None, None, 0),),
    "out_of_range_tensor": (_I(2),),
    "out_of_range_after_int": (0, _I(3)),
    "out_of_range_after_ellipsis": (Ellipsis, _I(4)),
    "out_of_range_int": (slice(None), 5),
    "too_many": (0, 0, 0, 0),
    "float": (1.0,),
    "float_tensor": (np.array([0.0]),),
    "mask_wrong_shape": (_B(True, False, True),),
    "numpy_bool": (np.bool_(True),),
}


def _key(T, key):
    if isinstance(key, tuple):
        return tuple(_key(T, k) for k in key)
    if isinstance(key, np.ndarray):
        return T.tensor(key)
    return key


def _x(T, shape=(2, 3, 4)):
    data = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 1.5 - 3
    return T.tensor(data, requires_grad=True)


def _weights(T, shape):
    n = int(np.prod(shape))
    return T.tensor(np.cos(np.arange(n, dtype=np.float64)).reshape(tuple(shape)))


@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
def test_getitem_matches_torch(torch, key):
    def fn(T):
        x = _x(T)
        y = x[_key(T, key)]
        (y * _weights(T, y.shape)).sum().backward()
        return y, x.grad

    _check(torch, fn)


@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
def test_setitem_matches_torch(torch, key):
    def fn(T):
        x = _x(T)
        z = x * 1
        shape = tuple(z.detach()[_key(T, key)].shape)
        v = T.tensor(
            np.sin(np.arange(int(np.prod(shape)), dtype=np.float64) + 1).reshape(shape),
            requires_grad=True,
        )
        z[_key(T, key)] = v
        (z * _weights(T, z.shape)).sum().backward()
        return z, x.grad, v.grad

    _check(torch, fn)


SETITEM = {
    "scalar_through_tensors": lambda T: _set(T, (0, _I(1, 2), slice(None)), 7.0),
    "broadcast_value": lambda T: _set(T, (0, slice(None), _I(1, 2)), T.tensor([1.0, 2.0])),
    "leading_unit_dims": lambda T: _set(T, (0, 0), T.ones(1, 1, 4)),
    "int_into_float_basic": lambda T: _set(T, (0, 0), T.tensor([1, 2, 3, 4])),
    "dtype_mismatch_tensor_index": lambda T: _set(
        T.zeros(3, dtype=T.int64), _I(0), T.tensor([1.5], dtype=T.float64)
    ),
    "dtype_mismatch_0d_value": lambda T: _set(T.zeros(3, dtype=T.int64), _I(0), T.tensor(1.5)),
    "dtype_mismatch_mask_0d": lambda T: _set(
        T.zeros(2, 3, dtype=T.int64), _B(True, False), T.tensor(1.5)
    ),
    "dtype_mismatch_int_mask_0d": lambda T: _set(
        T.zeros(2, 3, dtype=T.int64), (0, _B(True, False, True)), T.tensor(1.5)
    ),
    "dtype_mismatch_mask_many": lambda T: _set(
        T.zeros(2, 3, dtype=T.int64), np.ones((2, 3), bool), T.ones(6)
    ),
    "dtype_mismatch_basic": lambda T: _set(
        T.zeros(3, dtype=T.int64), slice(0, 2), T.tensor([1.5, 2.5])
    ),
    "python_scalar_into_int": lambda T: _set(T.zeros(3, dtype=T.int64), _I(0, 2), 2.7),
    "bool_true_value": lambda T: _set(T.zeros(2, 3, dtype=T.int64), True, T.ones(3)),
}


def _set(T, x, key, value=None):
    if value is None:  # _set(T, key, value) on the default tensor
        x, key, value = _x(T).detach().clone(), x, key
    x[_key(T, key)] = value
    return x


@_cases(SETITEM)
def test_setitem_values_and_dtypes(torch, fn):
    _check(torch, fn)


def test_list_key_of_sequences_is_a_tuple(torch):
    # PyTorch (deprecated, with a warning) reads x[[[0, 1], [1, 2]]] as x[[0, 1], [1, 2]]
    _check(torch, lambda T: _x(T)[[[0, 1], [1, 2]]])
    _check(torch, lambda T: _x(T)[[0, slice(None)]])
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        ng.zeros(2, 3)[[[0, 1], [1, 2]]]


def test_ellipsis_index_is_checked_against_its_dim(torch):
    _check(torch, lambda T: T.arange(6.0).reshape(1, 6)[..., T.tensor([5])])
    _check(torch, lambda T: T.arange(6.0).reshape(1, 6)[..., T.tensor([6])])


def test_grad_fn_names(torch):
    def names(T):
        x = _x(T)
        return [
            y.grad_fn.name()
            for y in (x[0, :, T.tensor([1, 2])], x[T.tensor(1)], x[True], x[..., 0], x[0, 1:])
        ]

    _check(torch, names)


# -- indexing under vmap (PyTorch's order in the batching rules) -----------------------------
VMAP_KEYS = {
    k: KEYS[k]
    for k in (
        "int_slice_tensor",
        "slice_int_tensor",
        "tensor_slice_tensor",
        "tensor_int_tensor",
        "none_int_slice_tensor",
        "int_none_tensor",
        "bool_int_tensor",
        "int_bool",
        "bool_false",
        "tensor_ellipsis_int",
        "mask_slice_tensor",
        "int_mask_2d",
        "ellipsis_tensor",
        "slice_mask_int",
        "tensor_slices_none",
        "none_tensor_none_tensor",
        "ints_tensor",
    )
}


def _loop(f, *args, in_dims=0):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    n = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    return ng.stack(
        [f(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)]) for i in range(n)]
    )


def _close(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("key", list(VMAP_KEYS.values()), ids=list(VMAP_KEYS))
def test_indexing_under_vmap(key):
    rng = np.random.default_rng(0)
    X = ng.tensor(rng.standard_normal((5, 2, 3, 4)))
    k = _key(ng, key)

    def get(x):
        return x[k]

    _close(vmap(get)(X), _loop(get, X))
    _close(vmap(get, in_dims=2)(X.movedim(0, 2)), _loop(get, X))

    def loss(x):
        y = x[k]
        return (y * _weights(ng, y.shape)).sum()

    _close(vmap(grad(loss))(X), _loop(grad(loss), X))

    def put(x, v):
        y = x * 1
        y[k] = v
        return y

    V = ng.tensor(rng.standard_normal((5, *X[0][k].shape)))
    _close(vmap(put)(X, V), _loop(put, X, V))
    _close(vmap(put, in_dims=(0, None))(X, V[0]), _loop(put, X, V[0], in_dims=(0, None)))


@pytest.mark.parametrize(
    "f",
    [
        lambda x, i: x[0, :, i],
        lambda x, i: x[:, 0, i],
        lambda x, i: x[0, None, i.clamp(max=2)],
        lambda x, i: x[i.clamp(max=1), :, i],
        lambda x, i: x[True, :, 1, i],
        lambda x, i: x[..., i],
        lambda x, i: x[i.clamp(max=1), ..., 0],
    ],
    ids=[
        "int_slice_idx",
        "slice_int_idx",
        "int_none_idx",
        "idx_slice_idx",
        "bool_slice_int",
        "ellipsis_idx",
        "idx_ellipsis_int",
    ],
)
def test_batched_index_under_vmap(f):
    rng = np.random.default_rng(1)
    X = ng.tensor(rng.standard_normal((5, 2, 3, 4)))
    idx = ng.tensor(rng.integers(0, 4, (5, 2)))
    _close(vmap(f)(X, idx), _loop(f, X, idx))
    _close(vmap(f, in_dims=(None, 0))(X[0], idx), _loop(f, X[0], idx, in_dims=(None, 0)))

    def loss(x, i):
        return f(x, i).sum()

    _close(vmap(grad(loss))(X, idx), _loop(grad(loss), X, idx))


# -- gather / scatter_add / take_along_dim / index_select index shapes -----------------------
def _a(T):
    return T.arange(6.0).reshape(2, 3)


def _L(T, *shape_or_values):
    return T.tensor(np.array(shape_or_values, dtype=np.int64))


INDEX_SHAPES = {
    "gather_smaller_index": lambda T: T.gather(_a(T), 1, T.tensor([[0]])),
    "gather_smaller_dim0": lambda T: T.gather(_a(T), 0, T.tensor([[1, 0]])),
    "gather_empty_same_rank": lambda T: T.gather(_a(T), 1, T.zeros(0, 3, dtype=T.int64)),
    "gather_empty_1d_on_2d": lambda T: T.gather(_a(T), 1, T.zeros(0, dtype=T.int64)),
    "gather_0d_on_2d": lambda T: T.gather(_a(T), 1, T.zeros((), dtype=T.int64)),
    "gather_0d_on_1d": lambda T: T.gather(T.arange(3.0), 0, T.tensor(2)),
    "gather_1d_on_0d": lambda T: T.gather(T.tensor(5.0), 0, T.tensor([0, 0])),
    "gather_empty_on_0d": lambda T: T.gather(T.tensor(5.0), 0, T.zeros(0, dtype=T.int64)),
    "gather_0d_on_0d": lambda T: T.gather(T.tensor(5.0), 0, T.tensor(0)),
    "gather_larger_index": lambda T: T.gather(_a(T), 1, T.tensor([[0], [1], [2]])),
    "gather_int32_index": lambda T: T.gather(_a(T), 1, T.tensor([[1]], dtype=T.int32)),
    "gather_out_of_range": lambda T: T.gather(_a(T), 1, T.tensor([[3]])),
    "scatter_add_smaller": lambda T: T.zeros(2, 3).scatter_add(1, T.tensor([[0]]), T.ones(2, 3)),
    "scatter_add_src_larger": lambda T: T.zeros(2, 3).scatter_add(
        0, T.tensor([[1, 0]]), T.arange(6.0).reshape(2, 3)
    ),
    "scatter_add_src_larger_dim": lambda T: T.zeros(3).scatter_add(
        0, T.tensor([0, 2, 2]), T.arange(5.0)
    ),
    "scatter_add_empty_1d_on_2d": lambda T: T.zeros(2, 3).scatter_add(
        1, T.zeros(0, dtype=T.int64), T.ones(2, 3)
    ),
    "scatter_add_0d_index": lambda T: T.zeros(3).scatter_add(0, T.tensor(2), T.ones(3)),
    "scatter_add_0d_index_src": lambda T: T.zeros(3).scatter_add(0, T.tensor(2), T.tensor(5.0)),
    "scatter_add_0d_self": lambda T: T.tensor(1.0).scatter_add(
        0, T.tensor([0, 0]), T.tensor([5.0, 6.0])
    ),
    "scatter_add_0d_all": lambda T: T.tensor(1.0).scatter_add(0, T.tensor(0), T.tensor(5.0)),
    "scatter_add_dtype_mismatch": lambda T: T.zeros(3).scatter_add(
        0, T.tensor([0, 0]), T.tensor([1, 2])
    ),
    "scatter_add_too_large": lambda T: T.zeros(2, 3).scatter_add(
        1, T.tensor([[0, 1, 2, 0]]), T.ones(2, 3)
    ),
    "take_along_dim_broadcast": lambda T: T.take_along_dim(_a(T), T.tensor([[0, 2]]), 1),
    "take_along_dim_flat": lambda T: T.take_along_dim(_a(T), T.tensor([5, 0])),
    "take_along_dim_flat_0d": lambda T: T.take_along_dim(_a(T), T.tensor(5)),
    "take_along_dim_empty": lambda T: T.take_along_dim(_a(T), T.zeros(2, 0, dtype=T.int64), 1),
    "take_along_dim_0d_input": lambda T: T.take_along_dim(T.tensor(3.0), T.tensor(0)),
    "take_along_dim_0d_dim": lambda T: T.take_along_dim(T.tensor(3.0), T.tensor(0), 0),
    "take_along_dim_int32": lambda T: T.take_along_dim(
        T.arange(3.0), T.tensor([1], dtype=T.int32), 0
    ),
    "take_along_dim_not_broadcastable": lambda T: T.take_along_dim(
        _a(T), T.zeros(0, 1, dtype=T.int64), 1
    ),
    "index_select_0d_index": lambda T: T.index_select(_a(T), 1, T.tensor(2)),
    "index_select_empty": lambda T: T.index_select(_a(T), 1, T.zeros(0, dtype=T.int64)),
    "index_select_0d_input": lambda T: T.index_select(T.tensor(3.0), 0, T.tensor(0)),
    "index_select_0d_input_1d": lambda T: T.index_select(T.tensor(3.0), 0, T.tensor([0])),
    "index_select_0d_input_two": lambda T: T.index_select(T.tensor(3.0), 0, T.tensor([0, 0])),
    "index_select_2d_index": lambda T: T.index_select(_a(T), 0, T.tensor([[1]])),
    "index_select_int32": lambda T: T.index_select(T.arange(3.0), 0, T.tensor([1], dtype=T.int32)),
    # take_along_dim wraps negative indices along dim; gather and the flat form refuse them
    "take_along_dim_negative": lambda T: T.take_along_dim(_a(T), T.tensor([[-1], [-3]]), 1),
    "take_along_dim_negative_dim0": lambda T: T.take_along_dim(_a(T), T.tensor([[-2, -1, 0]]), 0),
    "take_along_dim_negative_broadcast": lambda T: T.take_along_dim(
        T.arange(24.0).reshape(2, 3, 4), T.tensor([[[-1, -4]]]), 2
    ),
    "take_along_dim_negative_flat": lambda T: T.take_along_dim(_a(T), T.tensor([-1])),
    "gather_negative": lambda T: T.gather(_a(T), 1, T.tensor([[-1], [0]])),
}


@_cases(INDEX_SHAPES)
def test_index_shapes(torch, fn):
    _check(torch, fn)


def _grads_of(make):
    """A scenario returning the output and the gradients of its float leaves."""

    def fn(T):
        leaves = []

        def leaf(data, dtype=None):
            t = T.tensor(data, dtype=dtype or T.float64, requires_grad=True)
            leaves.append(t)
            return t

        y = make(T, leaf)
        (y * _weights(T, y.shape)).sum().backward()
        return [y] + [t.grad for t in leaves]

    return fn


INDEX_GRADS = {
    "gather_smaller": lambda T, L: T.gather(L(np.arange(6.0).reshape(2, 3)), 1, T.tensor([[0, 0]])),
    "gather_0d_on_1d": lambda T, L: T.gather(L(np.arange(3.0)), 0, T.tensor(2)).reshape(1),
    "gather_1d_on_0d": lambda T, L: T.gather(L(5.0), 0, T.tensor([0, 0])),
    "scatter_add_smaller": lambda T, L: L(np.zeros((2, 3))).scatter_add(
        1, T.tensor([[0, 0]]), L(np.ones((1, 2)))
    ),
    "scatter_add_0d_index": lambda T, L: L(np.zeros(3)).scatter_add(0, T.tensor(2), L(np.ones(()))),
    "take_along_dim_broadcast": lambda T, L: T.take_along_dim(
        L(np.arange(6.0).reshape(2, 3)), T.tensor([[0, 2, 2]]), 1
    ),
    "index_select_0d_input": lambda T, L: T.index_select(L(3.0), 0, T.tensor(0)).reshape(1),
    "take_along_dim_negative": lambda T, L: T.take_along_dim(
        L(np.arange(6.0).reshape(2, 3)), T.tensor([[-1, 0, -3], [-2, -2, 2]]), 1
    ),
}


@_cases({k: _grads_of(v) for k, v in INDEX_GRADS.items()})
def test_index_shape_gradients(torch, fn):
    _check(torch, fn)


def test_take_along_dim_refuses_indices_outside_minus_size_size():
    # PyTorch 2.13 takes them modulo the size (of 4 entries, -5 picks the last, 4 the first);
    # numbagrad raises (known_deviations.py: torch-take-along-dim-unchecked)
    x = ng.arange(8.0).reshape(2, 4)
    for bad in (-5, 4):
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
            ng.take_along_dim(x, ng.tensor([[bad], [-1]]), 1)
    assert ng.take_along_dim(x, ng.tensor([[-4], [-1]]), 1).tolist() == [[0.0], [7.0]]
    # a transform's index is wrapped when its values arrive
    out = vmap(lambda r, i: ng.take_along_dim(r, i, 0))(x, ng.tensor([[-1], [-4]]))
    assert out.tolist() == [[3.0], [4.0]]
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        vmap(lambda r, i: ng.take_along_dim(r, i, 0))(x, ng.tensor([[-1], [-5]]))


def test_scatter_add_gradient_of_a_larger_src():
    # PyTorch's backward fails here ("invalid gradient"): src's gradient is the gathered
    # gradient padded with zeros where the index does not reach
    x = ng.zeros(2, 3, dtype=ng.float64, requires_grad=True)
    src = ng.arange(6.0, dtype=ng.float64).reshape(2, 3).requires_grad_()
    y = x.scatter_add(1, ng.tensor([[0, 0]]), src)
    assert y.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    g = ng.arange(1.0, 7.0, dtype=ng.float64).reshape(2, 3)
    y.backward(g)
    assert x.grad.tolist() == g.tolist()
    assert src.grad.tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    src2 = ng.ones(5, dtype=ng.float64, requires_grad=True)
    ng.zeros(3, dtype=ng.float64).scatter_add(0, ng.tensor([2, 0]), src2).backward(
        ng.tensor([1.0, 2.0, 3.0], dtype=ng.float64)
    )
    assert src2.grad.tolist() == [3.0, 1.0, 0.0, 0.0, 0.0]
    src3 = ng.ones(2, 3, dtype=ng.float64, requires_grad=True)
    ng.zeros(2, 3, dtype=ng.float64).scatter_add(
        1, ng.zeros(2, 0, dtype=ng.int64), src3
    ).sum().backward()
    assert src3.grad.tolist() == [[0.0] * 3, [0.0] * 3]
    assert ng.autograd.gradcheck(
        lambda s: ng.zeros(2, 3, dtype=ng.float64).scatter_add(1, ng.tensor([[2, 0]]), s),
        (ng.rand(2, 3, dtype=ng.float64, requires_grad=True),),
    )


# -- 0-d, empty shapes, ties -----------------------------------------------------------------
SHAPES = {
    "sort_0d": lambda T: T.sort(T.tensor(3.0)),
    "sort_0d_descending": lambda T: T.sort(T.tensor(3.0), descending=True),
    "argsort_0d": lambda T: T.argsort(T.tensor(3.0), descending=True),
    "topk_0d_1": lambda T: T.topk(T.tensor(3.0), 1),
    "topk_0d_0": lambda T: T.topk(T.tensor(3.0), 0),
    "topk_0d_2": lambda T: T.topk(T.tensor(3.0), 2),
    "topk_bool": lambda T: T.topk(T.tensor([True, False]), 1),
    "sort_bool": lambda T: T.sort(T.tensor([True, False, True])),
    "movedim_0d": lambda T: T.movedim(T.zeros(()), 0, 0),
    "movedim_0d_negative": lambda T: T.movedim(T.zeros(()), -1, -1),
    "movedim_0d_out_of_range": lambda T: T.movedim(T.zeros(()), 1, 0),
    "movedim_repeated": lambda T: T.movedim(T.zeros(2, 3), (0, 0), (1, 0)),
    "movedim_tuple": lambda T: T.movedim(T.zeros(2, 3, 4), (0, 1), (2, 0)),
    "flatten_0x3": lambda T: T.flatten(T.zeros(0, 3)),
    "flatten_0x3_from_1": lambda T: T.zeros(0, 3).flatten(1),
    "flatten_2x0x3": lambda T: T.flatten(T.zeros(2, 0, 3), 1),
    "flatten_0x3x2_middle": lambda T: T.zeros(0, 3, 2).flatten(0, 1),
    "chunk_empty_dim": lambda T: T.chunk(T.zeros(0, 3), 2),
    "chunk_empty_dim1": lambda T: T.chunk(T.zeros(3, 0), 3, 1),
    "chunk_uneven": lambda T: T.chunk(T.zeros(5, 3), 3),
    "chunk_fewer": lambda T: T.chunk(T.zeros(6), 4),
    "split_empty": lambda T: T.split(T.zeros(0, 3), 2),
    "flip_0d": lambda T: T.tensor(3.0).flip(0),
    "flip_0d_repeated": lambda T: T.tensor(3.0).flip((0, 0)),
    "unflatten_0d": lambda T: T.tensor(2.0).unflatten(0, (1,)),
    "permute_no_dims": lambda T: T.zeros(2).permute(),
    "expand_no_sizes": lambda T: T.tensor(1.0).expand(),
    "reshape_no_shape": lambda T: T.zeros(2).reshape(),
    "cat_promotes_all": lambda T: T.cat([T.zeros(0, dtype=T.float64), T.ones(2, 3, dtype=T.int64)]),
    "cat_empty_requires_grad": lambda T: (
        T.cat([T.tensor([True]), T.tensor([4.0]), T.zeros(0, requires_grad=True)]).requires_grad
    ),
    # matrix transposes of 0-d (the tensor itself) and 1-D tensors
    "mT_0d": lambda T: T.tensor(2.0).mT,
    "mH_0d": lambda T: T.tensor(2.0).mH,
    "H_0d": lambda T: T.tensor(2.0).H,
    "T_0d": lambda T: T.tensor(2.0).T,
    "adjoint_0d": lambda T: T.tensor(2.0).adjoint(),
    "adjoint_function_0d": lambda T: T.adjoint(T.tensor(2.0)),
    "mT_1d": lambda T: T.tensor([1.0, 2.0]).mT,
    "mH_1d": lambda T: T.tensor([1.0, 2.0]).mH,
    "H_1d": lambda T: T.tensor([1.0, 2.0]).H,
    "T_1d": lambda T: T.tensor([1.0, 2.0]).T,
    "adjoint_1d": lambda T: T.tensor([1.0, 2.0]).adjoint(),
    "adjoint_3d": lambda T: T.arange(24.0).reshape(2, 3, 4).adjoint(),
    "T_3d": lambda T: T.arange(24.0).reshape(2, 3, 4).T,
    "matrix_transposes_of_0d_are_itself": lambda T: (
        [
            f(x) is x
            for x in [T.tensor(2.0)]
            for f in (lambda t: t.mT, lambda t: t.mH, lambda t: t.H)
        ]
        + [T.tensor(2.0).T.shape, T.adjoint(T.tensor(2.0)).shape]
    ),
    "mT_0d_gradient": lambda T: _mT_0d_gradient(T),
}


def _mT_0d_gradient(T):
    x = T.tensor(3.0, dtype=T.float64, requires_grad=True)
    (x.mT * x.mH * x.adjoint()).backward()
    return x.grad


@_cases(SHAPES)
def test_shapes(torch, fn):
    _check(torch, fn)


_T_ND = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor."
)
_IDENTITY = "is deprecated on 0-D tensors. This function is the identity in these cases."
TRANSPOSE_WARNINGS = {
    "mT_0d": (lambda T: T.tensor(2.0).mT, f"Tensor.mT {_IDENTITY}"),
    "mH_0d": (
        lambda T: T.tensor(2.0).mH,
        "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
    ),
    "H_0d": (
        lambda T: T.tensor(2.0).H,
        "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
    ),
    "T_0d": (lambda T: T.tensor(2.0).T, f"Tensor.T {_IDENTITY}"),
    "adjoint_0d": (
        lambda T: T.adjoint(T.tensor(2.0)),
        "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
    ),
    "T_1d": (lambda T: T.ones(3).T, _T_ND),
    "T_3d": (lambda T: T.ones(2, 3, 4).T, _T_ND),
    "T_2d": (lambda T: T.ones(2, 3).T, None),
    "mT_3d": (lambda T: T.ones(2, 3, 4).mT, None),
}


@pytest.mark.parametrize("name", list(TRANSPOSE_WARNINGS))
def test_matrix_transpose_deprecation_warnings_as_torch(torch, name):
    fn, message = TRANSPOSE_WARNINGS[name]

    def warned(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(T)
        # (PyTorch's messages end with where in its C++ sources they were raised)
        return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]

    want = [] if message is None else [(UserWarning, message)]
    assert warned(ng) == want
    # PyTorch warns once per process (TORCH_WARN_ONCE): its message, if it has not yet
    assert warned(torch) in (want, [])


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
def test_sort_ties_and_nan_match_torch(torch, descending, stable):
    # PyTorch documents stable=True; its CPU sort is also stable without it at these sizes
    rng = np.random.default_rng(5)
    for trial in range(40):
        shape = tuple(rng.integers(1, 6, size=rng.integers(1, 4)))
        a = rng.integers(0, 3, size=shape).astype(np.float32)
        if trial % 2:
            a[rng.random(shape) < 0.2] = np.nan
        dim = int(rng.integers(-len(shape), len(shape)))
        tv, ti = torch.sort(torch.from_numpy(a), dim=dim, descending=descending, stable=stable)
        nv, ni = ng.sort(ng.tensor(a), dim=dim, descending=descending, stable=stable)
        np.testing.assert_array_equal(ni.numpy(), ti.numpy())
        np.testing.assert_array_equal(nv.numpy(), tv.numpy())
        ta = torch.argsort(torch.from_numpy(a), dim=dim, descending=descending, stable=stable)
        na = ng.argsort(ng.tensor(a), dim=dim, descending=descending, stable=stable)
        np.testing.assert_array_equal(na.numpy(), ta.numpy())


def test_stable_sort_of_large_inputs_matches_torch(torch):
    # beyond 16 elements PyTorch's default sort is not stable: compare with stable=True
    rng = np.random.default_rng(6)
    a = np.round(rng.standard_normal((3, 1400))).astype(np.float32)
    a[0, ::7] = -0.0
    for descending in (False, True):
        ti = torch.sort(torch.from_numpy(a), descending=descending, stable=True)[1]
        ni = ng.sort(ng.tensor(a), descending=descending, stable=True)[1]
        np.testing.assert_array_equal(ni.numpy(), ti.numpy())
        ti = torch.argsort(torch.from_numpy(a), descending=descending, stable=True)
        np.testing.assert_array_equal(
            ng.argsort(ng.tensor(a), descending=descending, stable=True).numpy(), ti.numpy()
        )


def test_sort_accepts_stable_keyword():
    x = ng.tensor([2.0, 1.0, 2.0, 1.0])
    _, i = ng.sort(x, stable=True)
    assert i.tolist() == [1, 3, 0, 2]
    assert x.sort(stable=True, descending=True).indices.tolist() == [0, 2, 1, 3]
    assert x.argsort(stable=True).tolist() == [1, 3, 0, 2]


# -- gradients at special values -------------------------------------------------------------
def _grads(T, f, *values, cot=None):
    leaves = [T.tensor(v, dtype=T.float64, requires_grad=True) for v in values]
    y = f(T, *leaves)
    if cot is not None:
        cot = T.tensor(cot, dtype=T.float64)
    gs = T.autograd.grad(y, leaves, cot if cot is not None else T.ones_like(y), allow_unused=True)
    return [y, *gs]


A_NAN = [1.0, nan, 2.0, nan, 3.0, -0.0]
B_NAN = [1.0, 1.0, nan, nan, 2.0, 0.0]
SPECIAL = {
    "maximum_nan_ties": lambda T: _grads(T, lambda T, a, b: T.maximum(a, b), A_NAN, B_NAN),
    "minimum_nan_ties": lambda T: _grads(T, lambda T, a, b: T.minimum(a, b), A_NAN, B_NAN),
    "maximum_inf_upstream": lambda T: _grads(
        T, lambda T, a, b: T.maximum(a, b), [1.0, 2.0, 3.0], [2.0, 2.0, 1.0], cot=[inf, inf, nan]
    ),
    "max_binary_nan": lambda T: _grads(T, lambda T, a, b: T.max(a, b), A_NAN, B_NAN),
    "pow_tensor_tensor_zero_base": lambda T: _grads(
        T,
        lambda T, a, b: T.pow(a, b),
        [0.0, 0.0, 0.0, 0.0, 2.0, -1.0],
        [0.0, 1.0, -1.0, 2.0, 0.0, 0.5],
    ),
    "pow_zero_zero_inf_upstream": lambda T: _grads(
        T, lambda T, a, b: T.pow(a, b), [0.0, 0.0], [0.0, 1.0], cot=[inf, 1.0]
    ),
    "pow_python_zero_exponent": lambda T: _grads(T, lambda T, a: a**0, [0.0, 2.0], cot=[inf, 1.0]),
    "pow_python_zero_float_exponent": lambda T: _grads(T, lambda T, a: T.pow(a, 0.0), [0.0, 2.0]),
    "pow_negative_exponent_at_zero": lambda T: _grads(T, lambda T, a: a**-1.0, [0.0, 1.0, -0.0]),
    "pow_half": lambda T: _grads(T, lambda T, a: a**0.5, [0.0, 4.0, -inf, inf]),
    "pow_scalar_base_zero": lambda T: _grads(T, lambda T, b: T.pow(0.0, b), [0.0, 1.0, -1.0, 2.0]),
    "pow_scalar_base_negative": lambda T: _grads(T, lambda T, b: T.pow(-2.0, b), [0.0, 1.0, 2.0]),
    "atan2_origin": lambda T: _grads(
        T,
        lambda T, a, b: T.atan2(a, b),
        [0.0, 0.0, 1.0, 0.0, 1e-200],
        [0.0, 1.0, 0.0, -0.0, 1e-200],
    ),
    "atan2_origin_inf_upstream": lambda T: _grads(
        T, lambda T, a, b: T.atan2(a, b), [0.0, 0.0], [0.0, 1.0], cot=[inf, 1.0]
    ),
    "clamp_boundaries": lambda T: _grads(
        T, lambda T, a: T.clamp(a, 1, 2), [0.0, 1.0, 2.0, 3.0, nan]
    ),
    "clamp_inf_upstream": lambda T: _grads(
        T, lambda T, a: T.clamp(a, 1, 2), [0.0, 1.0, 2.0, 3.0], cot=[inf, nan, 1.0, inf]
    ),
    "clamp_min_only": lambda T: _grads(
        T, lambda T, a: T.clamp(a, min=1), [0.0, 1.0, 2.0], cot=[inf, 1.0, 1.0]
    ),
    "clamp_tensor_bounds": lambda T: _grads(
        T,
        lambda T, a, lo, hi: T.clamp(a, lo, hi),
        [0.0, 1.0, 2.0, 3.0, 0.0, 3.0, nan],
        [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0],
        [2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 2.0],
        cot=[inf, 1.0, 1.0, inf, 1.0, 1.0, 1.0],
    ),
    "clamp_tensor_min_only": lambda T: _grads(
        T, lambda T, a, lo: T.clamp(a, min=lo), [0.0, 1.0, 2.0, nan, 0.0], [1.0, 1.0, 1.0, 1.0, nan]
    ),
    "clamp_tensor_max_only": lambda T: _grads(
        T, lambda T, a, hi: T.clamp(a, max=hi), [0.0, 1.0, 2.0, nan, 0.0], [1.0, 1.0, 1.0, 1.0, nan]
    ),
    "where_inf_upstream": lambda T: _grads(
        T,
        lambda T, a, b: T.where(T.tensor([True, False, True, False]), a, b),
        [0.0, 1.0, 2.0, 3.0],
        [5.0, 5.0, 5.0, 5.0],
        cot=[inf, nan, 1.0, inf],
    ),
    "where_log_nan_branch": lambda T: _grads(
        T, lambda T, a: T.where(a > 0, T.log(a), a), [1.0, -1.0, 0.0, 3.0]
    ),
    "div_floor_inf_upstream": lambda T: _grads(
        T,
        lambda T, a, b: T.div(a, b, rounding_mode="floor"),
        [1.0, 2.0],
        [1.0, 3.0],
        cot=[inf, 1.0],
    ),
    "div_at_zero": lambda T: _grads(T, lambda T, a, b: a / b, [1.0, 0.0, -1.0], [0.0, 0.0, 2.0]),
    "rdiv": lambda T: _grads(T, lambda T, b: 2.5 / b, [0.5, -2.0, 4.0]),
    "masked_fill_value_grad": lambda T: _grads(
        T,
        lambda T, a, v: a.masked_fill(T.tensor([True, False, True]), v),
        [1.0, 2.0, 3.0],
        2.0,
        cot=[1.0, inf, 2.0],
    ),
    "masked_fill_value_cast": lambda T: _grads(
        T, lambda T, v: T.zeros(3).masked_fill(T.tensor([True, False, True]), v), 2.0
    ),
}


@_cases(SPECIAL)
def test_gradients_at_special_values(torch, fn):
    _check(torch, fn)


def _double(T, f, *values):
    leaves = [T.tensor(v, dtype=T.float64, requires_grad=True) for v in values]
    y = f(T, *leaves)
    gs = T.autograd.grad(y.sum(), leaves, create_graph=True)
    out = [y, *gs]
    for g in gs:
        if g.requires_grad:
            out += list(T.autograd.grad(g.sum(), leaves, retain_graph=True, allow_unused=True))
    return out


DOUBLE = {
    "pow_tensor_tensor_zero_base": lambda T: _double(
        T, lambda T, a, b: a**b, [0.0, 0.0, 0.0, 2.0], [0.0, 0.5, 2.0, 3.0]
    ),
    "pow_python_exponent": lambda T: _double(T, lambda T, a: a**3, [0.0, 2.0, -1.0]),
    "maximum_ties": lambda T: _double(
        T, lambda T, a, b: T.maximum(a, b) * a, [1.0, 2.0, nan], [1.0, 1.0, 1.0]
    ),
    "atan2": lambda T: _double(T, lambda T, a, b: T.atan2(a, b), [0.5, 1.0], [1.0, -2.0]),
    "div": lambda T: _double(T, lambda T, a, b: a / b, [0.5, 1.0], [1.0, -2.0]),
    "clamp_where": lambda T: _double(T, lambda T, a: T.clamp(a, 0.5, 1.5) * a, [0.0, 1.0, 2.0]),
}


@_cases(DOUBLE)
def test_double_backward(torch, fn):
    _check(torch, fn)


def _jvp(T, f, primals, tangents):
    fw = T.autograd.forward_ad
    with fw.dual_level():
        duals = [
            fw.make_dual(T.tensor(p, dtype=T.float64), T.tensor(t, dtype=T.float64))
            for p, t in zip(primals, tangents)
        ]
        out = fw.unpack_dual(f(T, *duals))
        return [out.primal, out.tangent]


JVP = {
    "maximum": lambda T: _jvp(
        T, lambda T, a, b: T.maximum(a, b), [A_NAN, B_NAN], [[1.0] * 6, [10.0] * 6]
    ),
    "minimum": lambda T: _jvp(
        T, lambda T, a, b: T.minimum(a, b), [A_NAN, B_NAN], [[1.0] * 6, [10.0] * 6]
    ),
    "pow_zero_base": lambda T: _jvp(
        T,
        lambda T, a, b: T.pow(a, b),
        [[0.0, 0.0, 0.0, 2.0], [0.0, 1.0, 2.0, 0.5]],
        [[1.0] * 4, [10.0] * 4],
    ),
    # (not at a NaN input: PyTorch's forward mode gives it the input's tangent, its reverse
    # mode no gradient; numbagrad's clamp follows the reverse mode in both)
    "clamp_tensor_bounds": lambda T: _jvp(
        T,
        lambda T, x, lo, hi: T.clamp(x, lo, hi),
        [
            [0.0, 1.0, 2.0, 3.0, 0.0, 3.0],
            [1.0, 1.0, 1.0, 1.0, 2.0, 2.0],
            [2.0, 2.0, 2.0, 2.0, 1.0, 1.0],
        ],
        [[1.0] * 6, [10.0] * 6, [100.0] * 6],
    ),
    "div": lambda T: _jvp(
        T, lambda T, a, b: a / b, [[1.0, 2.0], [4.0, -0.5]], [[1.0, 1.0], [10.0, 10.0]]
    ),
}


@_cases(JVP)
def test_forward_mode(torch, fn):
    _check(torch, fn)


# -- copy_ -----------------------------------------------------------------------------------
COPY = {
    "constant_cuts_old_value": lambda T: _copy(T, lambda T: T.tensor([5.0, 6.0, 7.0])),
    "broadcast_source": lambda T: _copy(
        T, lambda T: T.tensor([1.0], dtype=T.float64, requires_grad=True)
    ),
    "broadcast_source_2d": lambda T: _copy(
        T, lambda T: T.tensor([[1.0, 2.0, 3.0]], requires_grad=True), shape=(2, 3)
    ),
    "int_source": lambda T: _copy(T, lambda T: T.tensor([1, 2, 3])),
    "bad_shape": lambda T: T.zeros(2, 3).copy_(T.zeros(2)),
}


def _copy(T, make_src, shape=(3,)):
    x = T.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
    src = make_src(T)
    y = x.clone()
    y.copy_(src)
    (y * _weights(T, y.shape)).sum().backward()
    return [
        y,
        x.grad,
        src.grad if src.requires_grad else None,
        y.grad_fn.name(),
        src.grad.dtype if src.requires_grad else None,
    ]


@_cases(COPY)
def test_copy_(torch, fn):
    _check(torch, fn)


def test_copy_into_a_plain_tensor_gets_history(torch):
    def fn(T):
        src = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = T.zeros(2, 3)
        y.copy_(src)
        (y * T.arange(6.0).reshape(2, 3)).sum().backward()
        return [y, src.grad, y.requires_grad]

    _check(torch, fn)


# -- what each op saves: version counters ----------------------------------------------------
def _version_case(f, modify):
    """``f(a, idx)`` on a non-leaf ``a``; then the output, ``a`` or the index is modified in
    place and backward runs. PyTorch raises where the op saved what was modified."""

    def fn(T):
        x = T.tensor([0.5, 1.5, 2.5, 3.5], dtype=T.float64, requires_grad=True)
        a = x.clone()
        idx = T.tensor([0, 2, 2])
        y = f(T, a, idx)
        {"out": y, "input": a, "index": idx}[modify].add_(1)
        y.sum().backward()
        return x.grad

    return fn


VERSION_OPS = {
    "div_scalar": lambda T, a, i: a / 2,
    "div_tensor": lambda T, a, i: a / T.ones(4, dtype=T.float64),
    "div_tensor_by_leaf": lambda T, a, i: T.ones(4, dtype=T.float64) / (a * 1),
    "floor_div": lambda T, a, i: T.div(a, T.ones(4, dtype=T.float64) * 2, rounding_mode="floor"),
    "pow_scalar": lambda T, a, i: a**3,
    "pow_half": lambda T, a, i: a**0.5,
    "pow_tensor": lambda T, a, i: a ** T.ones(4, dtype=T.float64),
    "rpow": lambda T, a, i: 2**a,
    "mul": lambda T, a, i: a * T.ones(4, dtype=T.float64),
    "fmod_scalar": lambda T, a, i: T.fmod(a, 1.5),
    "remainder_scalar": lambda T, a, i: a % 1.5,
    "fmod_tensor": lambda T, a, i: T.fmod(a, T.ones(4, dtype=T.float64) * 1.5),
    "maximum": lambda T, a, i: T.maximum(a, T.tensor(1.0, dtype=T.float64)),
    "atan2": lambda T, a, i: T.atan2(a, T.ones(4, dtype=T.float64)),
    "clamp": lambda T, a, i: a.clamp(1, 3),
    "where": lambda T, a, i: T.where(a > 1, a, 0.0),
    "masked_fill": lambda T, a, i: a.masked_fill(a > 1, 0.0),
    "getitem_index": lambda T, a, i: a[i],
    "getitem_slice": lambda T, a, i: a[1:3],
    "index_select": lambda T, a, i: a.index_select(0, i),
    "scatter_add": lambda T, a, i: a.scatter_add(0, i, T.ones(3, dtype=T.float64)),
    "sort": lambda T, a, i: a.sort()[0],
    "topk": lambda T, a, i: a.topk(2)[0],
    "cat": lambda T, a, i: T.cat([a, a]),
    "flip": lambda T, a, i: a.flip(0),
    "roll": lambda T, a, i: a.roll(1),
    "permute": lambda T, a, i: a.reshape(2, 2).permute(1, 0),
    "diagonal": lambda T, a, i: a.reshape(2, 2).diagonal(),
    "tril": lambda T, a, i: a.reshape(2, 2).tril(),
    "to": lambda T, a, i: a.to(T.float32),
    "copy_": lambda T, a, i: T.zeros(4, dtype=T.float64).copy_(a),
    "setitem_value": lambda T, a, i: _put(T.zeros(4, dtype=T.float64), i, a[:3] * 1),
    "setitem_target": lambda T, a, i: _put(a * 1, i, 5.0),
}


def _put(x, key, value):
    x[key] = value
    return x


@pytest.mark.parametrize("modify", ["out", "input", "index"])
@pytest.mark.parametrize("op", list(VERSION_OPS.values()), ids=list(VERSION_OPS))
def test_saved_tensors_match_torch(torch, op, modify):
    _check(torch, _version_case(op, modify))


def test_div_then_inplace_add():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x / 2
    y += 1
    y.sum().backward()
    assert x.grad.tolist() == [0.5, 0.5]


def test_sinh_tutorial_gradgradcheck():
    """PyTorch's "Double Backward with Custom Functions" tutorial: backward adds in place to
    the output of a division (``grad_out * (...) / 2``) under gradgradcheck."""

    class Sinh(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = ng.exp(x)
            expnegx = ng.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    x = ng.rand(3, 3, requires_grad=True, dtype=ng.float64)
    assert ng.autograd.gradcheck(sinh, x)
    assert ng.autograd.gradgradcheck(sinh, x)


@pytest.mark.parametrize(
    "key",
    [
        KEYS[k]
        for k in (
            "int_slice_tensor",
            "tensor_none_tensor",
            "bool_int_tensor",
            "mask_int_tensor",
            "two_ellipses",
            "int_mask_2d",
            "duplicates_last",
            "0d_bool_false",
        )
    ],
    ids=[
        "int_slice_tensor",
        "tensor_none_tensor",
        "bool_int_tensor",
        "mask_int_tensor",
        "two_ellipses",
        "int_mask_2d",
        "duplicates_last",
        "0d_bool_false",
    ],
)
def test_setitem_without_graph_matches_torch(torch, key):
    def fn(T):
        x = T.tensor(np.arange(24.0).reshape(2, 3, 4))
        shape = tuple(x[_key(T, key)].shape)
        x[_key(T, key)] = T.tensor(-np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape))
        y = T.zeros(2, 3, 4, dtype=T.int64)
        y[_key(T, key)] = 7
        return x, y

    _check(torch, fn)


def test_zero_dim_dims_unflatten_inference_and_fill_gradient_at_inf():
    import numbagrad as ng

    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 2"):
        ng.tensor(-4).transpose(-1, 2)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 2"):
        ng.tensor(0.5).flatten(2)
    assert ng.tensor(0.5).transpose(0, -1).shape == ()
    assert ng.unflatten(ng.zeros((1, 0)), 0, (-1,)).shape == (1, 0)
    assert ng.unflatten(ng.zeros(6), 0, (2, -1)).shape == (2, 3)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        ng.unflatten(ng.zeros(6), 0, (-1, -1))
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone().fill_(3.0)
    (g,) = ng.autograd.grad(y, x, ng.tensor([float("inf"), float("nan")]))
    assert g.tolist() == [0.0, 0.0]  # zeros, not inf * 0
