"""PyTorch's top-level in-place functions: ``numbagrad.exp_(t)`` is
``t.exp_()``. Kept out of ``numbagrad.ops``, whose names ending in ``_`` would read as
in-place ops of that namespace."""

from __future__ import annotations

from numbagrad._tensor import Tensor


def _torch_inplace(name):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "numbagrad"
    fn.__doc__ = f"``input.{name}(...)``: :meth:`Tensor.{name}`, in place on ``input``."
    return fn


# (the ones PyTorch has at the top level; each is a Tensor method here)
TORCH_INPLACE = (
    "abs_",
    "acos_",
    "acosh_",
    "addmv_",
    "arccos_",
    "arccosh_",
    "arcsin_",
    "arcsinh_",
    "arctan_",
    "arctanh_",
    "asin_",
    "asinh_",
    "atan_",
    "atanh_",
    "ceil_",
    "clamp_",
    "clamp_max_",
    "clamp_min_",
    "clip_",
    "cos_",
    "cosh_",
    "deg2rad_",
    "detach_",
    "erf_",
    "erfc_",
    "exp2_",
    "exp_",
    "expm1_",
    "fill_",
    "fix_",
    "floor_",
    "frac_",
    "i0_",
    "index_put_",
    "ldexp_",
    "log10_",
    "log1p_",
    "log2_",
    "log_",
    "logit_",
    "nan_to_num_",
    "neg_",
    "negative_",
    "rad2deg_",
    "reciprocal_",
    "relu_",
    "round_",
    "rsqrt_",
    "sigmoid_",
    "sin_",
    "sinc_",
    "sinh_",
    "sqrt_",
    "square_",
    "tan_",
    "tanh_",
    "trunc_",
    "xlogy_",
    "zero_",
)
globals().update({_name: _torch_inplace(_name) for _name in TORCH_INPLACE})
__all__ = list(TORCH_INPLACE)
