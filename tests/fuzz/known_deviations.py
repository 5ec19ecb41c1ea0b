"""What the fuzz suite accepts: intended deviations from PyTorch 2.13, and open bugs.

An entry matches a mismatch when its ``op`` (a name of ``tests/_opdb.py``, or a tuple of
them) and ``kind`` are the mismatch's (``kind`` as
in ``fuzz_program.KINDS``: ``value``, ``grad_value``, ``raises_only_numbagrad``, ...) and
every condition of ``when`` holds: a name of ``fuzz_program.FEATURES`` (the guilty step's
inputs have it; for the gradient stages, the program's) or ``!name`` (they do not), and
the mismatch's detail contains the regex ``match`` when one is given.

``KNOWN_DEVIATIONS`` are decisions, each with its reason; docs/guide/deviations.rst shows
them as a table (keep the two in step). ``OPEN_BUGS`` are numbagrad bugs the fuzzer found
and nobody has fixed yet: ``tests/fuzz/test_fuzz.py`` replays each one's minimal program
and reports it as an expected failure (XPASS once fixed: then move the entry to
``FIXED_BUGS``, whose programs the test replays as regression tests that must agree with
PyTorch), and the campaign counts matching mismatches apart from unexplained ones. Any
other mismatch fails the test.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "FIXED_BUGS",
    "KNOWN_DEVIATIONS",
    "OPEN_BUGS",
    "Deviation",
    "OpenBug",
    "classify",
    "matches",
]


class Deviation(NamedTuple):
    id: str
    op: str | tuple
    kind: str
    when: tuple = ()
    reason: str = ""
    match: str = ""  # a regex the mismatch's detail (error message, ...) must contain


class OpenBug(NamedTuple):
    id: str
    op: str | tuple
    kind: str
    when: tuple = ()
    note: str = ""
    program: dict | None = None  # the minimal reproducer (fuzz_program data)
    match: str = ""


nan, inf = float("nan"), float("inf")  # as written in the programs below


def _p(program):
    return program


# Ops whose CPU kernels PyTorch 2.13 lacks for some dtypes (NotImplementedError).
_TORCH_KERNEL_GAPS = (
    "abs",
    "ceil",
    "floor",
    "round",
    "softplus",
    "matmul",
    "mm",
    "bmm",
    "dot",
    "einsum",
    "fmod",
    "remainder",
    "softmax",
    "log_softmax",
    "nn.functional.gelu",
    "nn.functional.leaky_relu",
    "special.round",
    "special.gammainc",
    "special.gammaincc",
)
# Ops whose zeros are sums, or maxima/minima of +0 and -0: their sign depends on the order.
_ORDER_SIGNED_ZERO = (
    "cumsum",
    "einsum",
    "matmul",
    "mm",
    "amax",
    "amin",
    "maximum",
    "minimum",
    "sort",
    "topk",
    "clamp",
    "logcumsumexp",
    "fmax",
    "fmin",
    "median",
    "nanmedian",
    "msort",
    "aminmax",
    "tensordot",
    "unique",
    "unique_consecutive",
    "scatter_reduce_amax",
    "scatter_reduce_amin",
    # quantile takes its values from a sort: PyTorch's default sort orders equal +0/-0
    # otherwise than its own stable=True sort (seen: a 65-element float32 row), and
    # numbagrad's sort is stable, so which zero lands at a rank differs (fuzz seed 801244)
    "quantile",
    "nanquantile",
    # the zero imaginary part of a complex Cholesky factor's real diagonal: +0 or -0 from
    # LAPACK's complex arithmetic in PyTorch, from numbagrad's in its kernel (seed 1001823)
    "complex.linalg.cholesky",
    "complex.linalg.cholesky_ex",
)
# Ops PyTorch gives outputs that require grad although it has no derivative for them (the
# backward raises "the derivative for ... is not implemented").
_TORCH_UNDIFFERENTIABLE = ("nextafter", "heaviside", "unique", "unique_consecutive")

# the FFTs of the op database (``tests/_opdb_complex.py``)
_FFT_OPS = tuple("fft." + n for n in ("fft ifft fftn rfft irfft rfftn irfftn hfft ihfft").split())

KNOWN_DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "torch-cpu-kernel-gaps",
        _TORCH_KERNEL_GAPS,
        "raises_only_torch",
        ("torch_not_implemented",),
        reason="PyTorch 2.13 has no CPU kernel for these ops on bool (some: int64) tensors "
        "and raises NotImplementedError; numbagrad computes them, promoting as "
        "for other dtypes.",
    ),
    Deviation(
        "sort-ties",
        ("sort", "topk"),
        "value",
        ("ties",),
        match=r"^output 1:",
        reason="The order of the indices of equal values is unspecified in PyTorch "
        "(sort without stable=True, topk); numbagrad sorts stably. Values agree.",
    ),
    Deviation(
        "argsort-ties",
        "argsort",
        "value",
        ("ties",),
        reason="As sort-ties: argsort of equal values.",
    ),
    Deviation(
        "signed-zero-order",
        _ORDER_SIGNED_ZERO,
        "signed_zero",
        reason="The sign of a zero that is a sum, or the max/min of +0 and -0, depends "
        "on the order of the operations, which differs; the values agree.",
    ),
    Deviation(
        "float32-prod-overflow",
        "prod",
        "value",
        ("float32",),
        match="non-finite",
        reason="Whether a float32 product close to the overflow threshold overflows "
        "depends on the order of the multiplications, which differs.",
    ),
    Deviation(
        "float32-prod-grad-overflow",
        "prod",
        "grad_value",
        ("float32",),
        match="non-finite",
        reason="As float32-prod-overflow, in prod's gradient.",
    ),
    Deviation(
        "var-of-equal-values",
        ("var", "std", "var_mean", "std_mean"),
        "grad_value",
        ("ties",),
        reason="The variance of equal values is 0 in exact arithmetic and rounding noise "
        "in floating point, different in each library; a function that amplifies "
        "it (1 / var) then has unrelated gradients.",
    ),
    Deviation(
        "std-gradgrad-zero-spread",
        "std",
        "gradgrad_nan_pattern",
        ("!nonfinite",),
        reason="Where std is 0, PyTorch's gradient masks 0/0 to 0 but its second order "
        "is nan; numbagrad differentiates the masked 0.",
    ),
    Deviation(
        "empty-matmul-dtype",
        ("bmm", "mm", "matmul"),
        "raises_only_numbagrad",
        ("empty", "mixed_dtypes"),
        match="expected m1 and m2 to have the same dtype",
        reason="PyTorch skips its same-dtype check when a product has no elements; "
        "numbagrad checks dtypes whatever the sizes, as PyTorch does for every "
        "non-empty product.",
    ),
    Deviation(
        "view-strides",
        "view",
        "raises_only_numbagrad",
        match="view size is not compatible",
        reason="view() depends on its input's strides, and results of ops on "
        "non-contiguous tensors can have other strides than PyTorch's (NumPy's "
        "layout rules), so view() can refuse what PyTorch views. reshape() works "
        "in both.",
    ),
    Deviation(
        "view-strides-torch",
        "view",
        "raises_only_torch",
        match="view size is not compatible",
        reason="As view-strides, the other way round: numbagrad's result has strides "
        "that view() accepts where PyTorch's has not.",
    ),
    Deviation(
        "torch-sgn-zero-tensor",
        "sgn",
        "grad_nan_pattern",
        ("nan",),
        reason="PyTorch's sgn gives a real input's gradient as a ZeroTensor, which the "
        "rules before it treat as an exact zero (0 * nan = 0); numbagrad's zero "
        "gradient is an array of zeros, so a NaN local derivative upstream "
        "(sqrt of a negative number) gives NaN, as sign() does in both.",
    ),
    Deviation(
        "torch-sgn-zero-tensor-immutable",
        "sgn",
        "grad_raises_only_torch",
        match="ZeroTensors are immutable",
        reason="As torch-sgn-zero-tensor: PyTorch's ZeroTensor gradient of sgn raises "
        "when a later rule writes into it; numbagrad's zeros are an array.",
    ),
    Deviation(
        "torch-clamp-backward-broadcast",
        "clamp",
        "grad_raises_only_torch",
        match="doesn't match the broadcast shape",
        reason="PyTorch 2.13 bug: clamp's backward raises when tensor min/max broadcast "
        "the input to a larger shape; numbagrad returns the reduced gradients.",
    ),
    Deviation(
        "torch-scatter-add-backward",
        "scatter_add",
        "grad_raises_only_torch",
        match="ScatterAddBackward0 returned an invalid gradient",
        reason="PyTorch 2.13 bug: with src larger than index, scatter_add's backward "
        "gives src a gradient of index's shape and raises; numbagrad returns "
        "src's shape (zeros outside index).",
    ),
    Deviation(
        "torch-take-along-dim-view",
        "take_along_dim",
        "raises_only_torch",
        ("noncontig",),
        match="view size is not compatible",
        reason="PyTorch 2.13 bug: take_along_dim(dim=None) calls view() on a "
        "non-contiguous input and raises (also in tests/test_ops.py).",
    ),
    Deviation(
        "torch-take-along-dim-unchecked",
        "take_along_dim",
        "raises_only_numbagrad",
        match="out of bounds",
        reason="PyTorch 2.13's take_along_dim with a dim takes its indices modulo the "
        "size (indices % size: meant to wrap negative indices, it also wraps an index "
        "past the end or below -size, silently returning another element); numbagrad "
        "wraps [-size, 0) as PyTorch does and raises IndexError outside [-size, size).",
    ),
    Deviation(
        "mixed-precision-gradient",
        ("div", "mul", "atan2", "add", "sub", "pow"),
        "grad_value",
        ("mixed_dtypes",),
        reason="With float operands of different precisions (a float64 0-d tensor and a "
        "float32 tensor), PyTorch computes the float64 operand's gradient in the "
        "output's float32 and casts it up; numbagrad computes it in float64. "
        "They differ at float32 rounding level.",
    ),
    Deviation(
        "torch-undifferentiable-outputs",
        _TORCH_UNDIFFERENTIABLE,
        "requires_grad",
        reason="PyTorch 2.13 marks these ops' outputs as requiring grad although it has "
        "no derivative for them (backward raises 'the derivative for ... is not "
        "implemented'); numbagrad's outputs do not require grad, so the same "
        "backward raises 'does not require grad' instead.",
    ),
    Deviation(
        "torch-no-double-backward",
        "cdist",
        "gradgrad_raises_only_torch",
        match="derivative for '_cdist_backward' is not implemented",
        reason="PyTorch 2.13 has no second derivative for cdist; numbagrad's first "
        "derivative is made of differentiable ops, so it has one.",
    ),
    Deviation(
        "torch-median-expanded",
        ("median", "nanmedian"),
        "value",
        ("noncontig",),
        reason="PyTorch 2.13 bug: median/nanmedian with a dim over an expanded "
        "(stride 0) input return uninitialised memory (5e-210 where every "
        "element is 0.5977); numbagrad returns the median.",
    ),
    Deviation(
        "index-of-ties",
        ("kthvalue", "median", "nanmedian", "msort", "cummax", "cummin"),
        "value",
        ("ties",),
        match=r"^output 1:",
        reason="As sort-ties: which of equal values' indices kthvalue/median/cummax/"
        "cummin return is unspecified in PyTorch (its CPU kernels are not "
        "stable); the values agree.",
    ),
    Deviation(
        "sort-ties-bool",
        ("sort", "topk", "argsort", "kthvalue", "median", "msort"),
        "value",
        ("bool_input",),
        reason="As sort-ties: a bool (or bool-derived) input is all ties.",
    ),
    Deviation(
        "torch-var-mean-welford",
        ("var_mean", "std_mean"),
        "nan_pattern",
        ("inf",),
        reason="PyTorch 2.13's var_mean/std_mean compute the mean with Welford's "
        "update, which gives NaN where an entry is infinite (torch.mean gives "
        "inf); numbagrad's mean output is mean()'s.",
    ),
    Deviation(
        "torch-hardtanh-nan-grad",
        ("nn.functional.hardtanh", "nn.functional.relu6"),
        "grad_value",
        ("nan",),
        reason="PyTorch 2.13's hardtanh/relu6 gradient at a NaN input depends on which "
        "CPU loop runs: 0 in its vectorised loop, the gradient passed through in "
        "its scalar loop (short tails, strided tensors); numbagrad gives the "
        "vectorised loop's 0 everywhere.",
    ),
    Deviation(
        "torch-hardtanh-nan-grad-pattern",
        ("nn.functional.hardtanh", "nn.functional.relu6"),
        "grad_nan_pattern",
        ("nan",),
        reason="As torch-hardtanh-nan-grad, with a NaN cotangent at the NaN input: "
        "PyTorch's scalar loop passes the NaN, numbagrad gives 0 there.",
    ),
    Deviation(
        "torch-hardtanh-nan-gradgrad-pattern",
        ("nn.functional.hardtanh", "nn.functional.relu6"),
        "gradgrad_nan_pattern",
        ("nan",),
        reason="As torch-hardtanh-nan-grad, in the second order: PyTorch's backward "
        "applied to the incoming second-order gradient at a NaN input passes it "
        "through (scalar loop) or gives 0 (vectorised loop); numbagrad gives 0.",
    ),
    Deviation(
        "torch-hardtanh-nan-gradgrad",
        ("nn.functional.hardtanh", "nn.functional.relu6"),
        "gradgrad_value",
        ("nan",),
        reason="As torch-hardtanh-nan-grad, for the second order's gradient of the "
        "cotangent at a NaN input (PyTorch's scalar loop passes it, numbagrad gives 0).",
    ),
    Deviation(
        "torch-embedding-scale-double-backward",
        ("nn.functional.embedding", "nn.functional.embedding_padding"),
        "gradgrad_value",
        ("ties",),
        reason="PyTorch 2.13's double backward of embedding ignores scale_grad_by_freq: "
        "the weight's gradient is scaled by 1 / (count of each index) but its derivative "
        "with respect to the cotangent is not (index 3 three times: first order [1, 1], "
        "second order the unscaled [6, 7] where finite differences give [2, 2.33]); "
        "numbagrad differentiates the scaled gradient.",
    ),
    Deviation(
        "torch-elu-nan-grad",
        ("nn.functional.elu", "nn.functional.selu"),
        "grad_nan_pattern",
        ("nan",),
        reason="PyTorch 2.13's elu/selu gradient at a NaN input depends on which CPU "
        "loop runs: NaN in its vectorised loop, the gradient times scale in its "
        "scalar loop (short tails, strided tensors: a 16-element float64 tensor "
        "gives NaN, a 5-element one the gradient); numbagrad gives the vectorised "
        "loop's NaN everywhere.",
    ),
    Deviation(
        "torch-int-setitem-requires-grad",
        "setitem",
        "requires_grad",
        reason="Writing a value that requires grad into an int64 or bool tensor "
        "(x[...] = v) makes PyTorch's integer result require grad (it records "
        "CopySlices on a tensor that cannot have a gradient); numbagrad's integer "
        "result does not require grad, as a float-only gradient would be cast "
        "away anyway.",
    ),
    Deviation(
        "torch-overflowing-intermediate",
        ("sinh", "cosh", "special.i0", "special.i1"),
        "value",
        match="non-finite",
        reason="Within a factor 2 of the float overflow threshold PyTorch's kernels "
        "overflow an intermediate (exp(x)) and return inf where the result is "
        "finite (cosh(710) = 1.117e308); numbagrad returns the finite value.",
    ),
    Deviation(
        "torch-block-diag-backward-empty",
        "block_diag",
        "grad_value",
        ("empty",),
        reason="PyTorch 2.13 bug: block_diag's backward does not advance past the row "
        "an empty 1-D block takes in the forward, so the gradients of the "
        "blocks after it are read from the wrong rows; numbagrad's are the "
        "forward's rows.",
    ),
    Deviation(
        "torch-kron-view",
        "kron",
        "raises_only_torch",
        match="view size is not compatible",
        reason="PyTorch 2.13 bug: kron calls view() on a non-contiguous operand (a view, "
        "or a result with column-major strides such as solve_triangular's) and raises; "
        "numbagrad computes it.",
    ),
    Deviation(
        "torch-prod-gradgrad",
        "prod",
        "gradgrad_value",
        ("!nonfinite",),
        reason="PyTorch 2.13 gives 0 for some second derivatives of prod where finite "
        "differences, and numbagrad, give the product of the other entries "
        "(seen next to an entry of 1e-30).",
    ),
    Deviation(
        "torch-gelu-float32-inf",
        "nn.functional.gelu",
        "nan_pattern",
        ("float32", "inf"),
        reason="PyTorch 2.13's float32 vectorised gelu (approximate='none') gives "
        "gelu(+inf) = NaN; its float64 kernel, and a one-element or strided float32 "
        "tensor, give inf, the limit. numbagrad gives inf.",
    ),
    Deviation(
        "layer-norm-float32-grad-noise",
        "nn.functional.layer_norm",
        "grad_value",
        ("float32", "ties"),
        reason="The gradient with respect to a constant (expanded) normalised row is 0 "
        "in exact arithmetic; in float32 both libraries return rounding noise of "
        "size eps * rstd * |g| (PyTorch 6e-5, numbagrad 1e-4 or 0).",
    ),
    Deviation(
        "log-softmax-shift-grad-noise",
        "special.log_softmax",
        "grad_value",
        ("float32", "mixed_dtypes"),
        reason="The gradient of a float32 log_softmax with respect to a float64 0-d "
        "tensor added to all its entries (a uniform shift) is 0 in exact "
        "arithmetic: PyTorch's is 0, numbagrad's one float32 ulp, compared at "
        "float64 tolerance.",
    ),
    Deviation(
        "torch-mish-gradgrad-overflow",
        "nn.functional.mish",
        "gradgrad_nan_pattern",
        match=r"np\.float64\(0\.0\) vs np\.float64\(nan\)",
        reason="At x >= 709.8 PyTorch's mish second derivative overflows an "
        "intermediate exp(x) and gives NaN; numbagrad gives 0, the limit.",
    ),
    Deviation(
        "torch-lerp-bool-weight-backward",
        "lerp",
        "grad_raises_only_torch",
        ("bool", "zero_dim"),
        match="with two bool tensors is not supported",
        reason="PyTorch 2.13 accepts a 0-d bool weight in lerp's forward but its "
        "backward computes 1 - weight on the bool tensor and raises; numbagrad "
        "differentiates it as the 0/1 weight.",
    ),
    Deviation(
        "torch-pad-gradgrad-zeros",
        "nn.functional.pad",
        "gradgrad_nan_pattern",
        ("nan",),
        reason="The second order of PyTorch's replicate/reflect pad sends "
        "zeros_like(input) (not an absent gradient) into the rule of the op before "
        "it, which multiplies it by a NaN local derivative (0 * NaN); numbagrad's "
        "pad gradient does not depend on the input, so that term is absent.",
    ),
    Deviation(
        "torch-leaky-relu-gradgrad-zeros",
        "nn.functional.leaky_relu",
        "gradgrad_nan_pattern",
        ("nonfinite",),
        match=r"vs np\.float64\(nan\)$",
        reason="As torch-pad-gradgrad-zeros: PyTorch's leaky_relu_backward has the "
        "derivative zeros_like(grad) for its input, which the rule of the op before it "
        "multiplies by a non-finite local derivative (0 * inf = NaN); numbagrad's "
        "leaky_relu gradient does not depend on the input's value, so that term is "
        "absent.",
    ),
    Deviation(
        "torch-cdist-p1-nan-grad",
        "cdist",
        "grad_nan_pattern",
        ("nan",),
        match=r"vs np\.float(32|64)\(nan\)$",
        reason="PyTorch 2.13's cdist backward kernel for p=1 gives NaN where a "
        "difference is NaN (its vectorised sign(NaN) is NaN), while its own "
        "vector_norm(x1 - x2, 1) gives 0 there (sgn(NaN) = 0); numbagrad's cdist is "
        "the norm of the differences and gives the norm's 0.",
    ),
    Deviation(
        "torch-huber-mixed-dtype-backward",
        "nn.functional.huber_loss",
        "grad_raises_only_torch",
        ("mixed_dtypes",),
        match="Found dtype (Float|Double) but expected",
        reason="PyTorch 2.13 accepts float32 and float64 operands in huber_loss's "
        "forward, but its backward kernel does not promote and raises 'Found dtype "
        "Float but expected Double' (smooth_l1_loss, mse_loss and l1_loss "
        "differentiate the same operands); numbagrad differentiates them.",
    ),
    Deviation(
        "torch-elu-nan-gradgrad",
        ("nn.functional.elu", "nn.functional.selu"),
        "gradgrad_nan_pattern",
        ("nan",),
        match=r"np\.float64\(nan\) vs",
        reason="As torch-elu-nan-grad, in the second order: elu_backward applied to the "
        "second-order gradient at a NaN input is NaN in PyTorch's vectorised loop and "
        "the gradient times the scale in its scalar loop (a 3-element tensor); "
        "numbagrad gives NaN everywhere.",
    ),
    Deviation(
        "layer-norm-float64-grad-noise",
        "nn.functional.layer_norm",
        "grad_value",
        ("float64", "ties"),
        match=r"worst np\.float64\(-?\d\.\d+e-(0[7-9]|[1-9]\d)\) "
        r"vs np\.float64\(-?\d\.\d+e-(0[7-9]|[1-9]\d)\)",
        reason="As layer-norm-float32-grad-noise in float64: the gradient with respect "
        "to a value shared by a whole normalised row (an expanded input) is 0 in exact "
        "arithmetic; with large cotangents and weights (|g w| rstd = 3e8) both "
        "libraries return rounding noise of about 1e-7, which differ.",
    ),
    Deviation(
        "torch-mse-gradgrad-inf-terms",
        "nn.functional.mse_loss",
        "gradgrad_nan_pattern",
        ("inf",),
        match=r"np\.float64\(-?inf\) vs np\.float64\(nan\)$",
        reason="PyTorch differentiates mse_loss's input and target gradients as two "
        "nodes, so the cotangent's second-order gradient adds 2 d w_input and "
        "-2 d w_target apart (inf - inf = NaN at an infinite difference d); numbagrad's "
        "is one term of the shared difference, 2 d (w_input - w_target), the limit.",
    ),
    Deviation(
        "layer-norm-float32-cancellation",
        "nn.functional.layer_norm",
        "value",
        ("float32",),
        reason="For a row of close values (4.36 to 4.98) PyTorch's float32 layer_norm is "
        "1.6e-6 off (0.0104663 where float64 gives 0.0104679), the size of a float32 "
        "rounding of x * rstd (about 19: its kernel scales x, then adds -mean * rstd); "
        "numbagrad centres first, (x - mean) * rstd, and agrees with float64 to 5e-8.",
    ),
    Deviation(
        "gelu-float32-lower-tail",
        "nn.functional.gelu",
        "value",
        ("float32",),
        match=r"worst np\.float64\(-(0\.00|\d\.\d+e-0[5-9])",
        reason="Near x = -3.5, where 1 + erf(x / sqrt 2) cancels, PyTorch's float32 gelu "
        "is 0.1% off (-0.00082913 where float64 gives -0.00082814 at x = -3.4950988); "
        "numbagrad's float32 erf is accurate there (-0.00082809).",
    ),
    Deviation(
        "torch-bilinear-gradgrad-order",
        "nn.functional.bilinear",
        "gradgrad_nan_pattern",
        ("inf",),
        reason="With infinite operands, the second order depends on the contraction "
        "order (inf - inf = NaN or not), which differs between PyTorch's _trilinear "
        "backward and numbagrad's: NaN against +-inf.",
    ),
    Deviation(
        "sort-ties-grad",
        ("msort", "nanquantile", "quantile"),
        "grad_value",
        ("ties", "large"),
        reason="PyTorch's default CPU sort is not stable on large inputs (4,098 of 4,100 "
        "indices differ from stable=True on a reproducer); numbagrad sorts stably, "
        "so among equal values the gradient goes to other, equally valid, positions.",
    ),
    Deviation(
        "logsumexp-grad-absorbed",
        ("logsumexp", "special.logsumexp"),
        "grad_value",
        ("ties",),
        reason="Where max + log(sum) rounds to max (several equal large maxima), "
        "PyTorch's exp(x - result) gives 1 to each maximum; numbagrad gives the "
        "softmax, 1/k each, the exact derivative. Where the result is not finite "
        "both use exp(x - result).",
    ),
    Deviation(
        "pinverse-float32-rank-deficient",
        "pinverse",
        "value",
        ("float32", "ties"),
        reason="PyTorch's float32 SVD of a rank-deficient matrix keeps a rounding-level "
        "singular value (2e-7 relative) above rcond = 1e-15 and returns entries of "
        "2e6; numbagrad's is 1e-16 and dropped, giving the exact pseudo-inverse "
        "(np.linalg.pinv's in float64).",
    ),
    Deviation(
        "matrix-exp-grad-float32-accuracy",
        "matrix_exp",
        "grad_value",
        ("float32",),
        reason="With large cotangent entries (7e5), PyTorch's float32 matrix_exp "
        "backward is 1% off its own float64 result; numbagrad's float32 result "
        "agrees with float64 to 1e-7.",
    ),
    Deviation(
        "torch-matrix-exp-grad-large-cotangent",
        ("matrix_exp", "linalg.matrix_exp"),
        "grad_value",
        match=r"worst np\.float(32|64)\(-?(\d{4,}|\d\.\d+e\+\d+)",
        reason="PyTorch's matrix_exp backward is exp([[A^T, G], [0, A^T]]) with as many "
        "squarings as the norm of the cotangent G asks for, which loses the digits of "
        "exp(A) when G is large against A (float64: 7e-7 off at |G| = 1e10, 30% at 1.5e33; "
        "float32: 1% at 1e6); numbagrad picks the squarings as Al-Mohy & Higham 2009 and "
        "agrees with mpmath to 1e-13 (float64) and 1e-7 (float32).",
    ),
    Deviation(
        "eigvals-order-unspecified",
        ("complex.linalg.eigvals", "complex.linalg.eig_real_input"),
        "value",
        ("ties",),
        reason="PyTorch documents that linalg.eig/eigvals return the eigenvalues in no "
        "specific order. At a rank-deficient matrix (an expanded input with repeated "
        "rows: eigenvalues a+b and a rounding-level 0) PyTorch's LAPACK and NumPy's "
        "OpenBLAS LAPACK, which numbagrad calls, list the two in different orders for "
        "some strided inputs (seed 1001056); the sets agree to rounding.",
    ),
    Deviation(
        "lapack-singular-slogdet",
        ("linalg.slogdet", "complex.linalg.slogdet", "linalg.det", "complex.linalg.det"),
        "value",
        ("ties",),
        reason="At an exactly singular matrix (an expanded input with repeated rows) the "
        "last LU pivot is 0 in exact arithmetic and a rounding-level number in floating "
        "point, which differs between LAPACKs: PyTorch's float32 gives logabsdet -13.3 "
        "or -inf, NumPy's (numbagrad's) -33.4 or -34.1 for the same matrices (seed "
        "1001050); neither is a value either library defines.",
    ),
    Deviation(
        "gamma-icdf-u0-reference",
        "ops.standard_gamma_icdf",
        "grad_nan_pattern",
        ("zero",),
        reason="At u = 0 the inverse CDF is the clamp (the smallest normal float) for every "
        "concentration, so its derivative in the concentration is 0, which numbagrad "
        "returns. The fuzzer's torch side for this entry is not PyTorch but the bisection "
        "reference of tests/_opdb_special.py, whose implicit-function gradient "
        "-(dP/da)/pdf divides a rounding-level difference by a pdf that underflows to 0 "
        "there (NaN; seed 1001070).",
    ),
    Deviation(
        "lapack-exact-singular-pivot",
        ("linalg.solve", "linalg.tensorsolve", "linalg.inv", "linalg.tensorinv", "inverse"),
        "raises_only_torch",
        ("ties",),
        match="singular",
        reason="At an exactly rank-deficient matrix (repeated rows: an expanded input) "
        "PyTorch's LAPACK (MKL getrf) reaches a pivot of exactly 0.0 and raises; NumPy's "
        "bundled OpenBLAS getrf, which numbagrad calls, ends with a rounding-level pivot "
        "(det 2e-32, seed 1000195) and returns entries of order 1e16, as "
        "numpy.linalg.solve does on the same matrix. Whether a rounding-level pivot "
        "comes out as exactly zero is the LAPACK's arithmetic, not a rule either library "
        "states.",
    ),
    Deviation(
        "rank-deficient-svd-gradgrad",
        ("linalg.norm", "linalg.matrix_norm", "linalg.svdvals", "complex.linalg.svdvals"),
        "gradgrad_value",
        ("ties",),
        reason="At a rank-deficient matrix (repeated rows: an expanded input) a singular "
        "value is 0 in exact arithmetic and 1e-16 in floating point; the nuclear norm "
        "has no second derivative there, and the SVD's double backward divides by that "
        "singular value, so both libraries return rounding noise amplified by 1e15 (the "
        "same formula, entry for entry, on an exactly singular or a well-conditioned "
        "matrix).",
    ),
    Deviation(
        "rank-deficient-svd-gradgrad-nan",
        ("linalg.norm", "linalg.matrix_norm", "linalg.svdvals", "complex.linalg.svdvals"),
        "gradgrad_nan_pattern",
        ("ties",),
        reason="As rank-deficient-svd-gradgrad: at a matrix of rank 1 (an expanded input) "
        "PyTorch's LAPACK returns the two other singular values as exactly 0.0 and its "
        "double backward divides 0 by 0 (NaN); NumPy's returns 1e-17 and 5e-34 and "
        "numbagrad's the rounding noise they amplify (seed 801917). Neither is a second "
        "derivative: the nuclear norm has none there.",
    ),
    Deviation(
        "lapack-svd-nonfinite-convergence",
        ("linalg.svd", "linalg.svdvals", "linalg.matrix_norm", "linalg.norm", "linalg.pinv"),
        "raises_only_torch",
        ("nonfinite",),
        match="failed to converge",
        reason="Whether the SVD of a matrix with infinite or NaN entries fails to converge "
        "depends on the LAPACK build and the entries: PyTorch's MKL raises on some matrices "
        "where NumPy's LAPACK returns, and numbagrad then gives NaN (PyTorch's result "
        "wherever its SVD of a non-finite matrix returns).",
    ),
    Deviation(
        "decomposition-infinite-cotangent",
        ("linalg.qr", "linalg.eigh", "linalg.svd"),
        "grad_nan_pattern",
        match=r"np\.float(32|64)\(nan\) vs np\.float(32|64)\(-?inf\)$",
        reason="An infinite cotangent reaching a decomposition's backward (a pole of a "
        "later op) meets inf - inf in the products of its formula; which entries come "
        "out NaN and which inf depends on the order of those products, and PyTorch's "
        "and numbagrad's orders differ (both are all-NaN on most inputs).",
    ),
    Deviation(
        "torch-norm-sgn-zero-tensor-gradgrad",
        ("linalg.vector_norm", "linalg.norm", "norm", "linalg.matrix_norm"),
        "gradgrad_nan_pattern",
        ("nonfinite",),
        match=r"vs np\.float(32|64)\(nan\)$",
        reason="As torch-abs-sgn-zero-tensor-gradgrad: the 1- and inf-norms' gradient is "
        "sgn(x) times the cotangent, and PyTorch's sgn has a ZeroTensor derivative that "
        "some rules after it materialise (mm), so 0 * inf = NaN further up (cross); in "
        "numbagrad's norm rules sgn is a constant of the graph, as in abs, and that term "
        "is absent.",
    ),
    Deviation(
        "qr-structural-zero-gradient",
        "special.entr",
        "gradgrad_nan_pattern",
        ("zero",),
        match=r"\(nan\) vs np\.float64\(-?inf\)",
        reason="The R-gradient of the structurally zero entry of linalg.qr is rounding "
        "noise in PyTorch (1.1e-16) and exactly 0 in numbagrad; multiplied by "
        "entr'(0) = inf that gives inf in PyTorch and NaN in numbagrad.",
    ),
    Deviation(
        "bessel-j-torch-inaccurate",
        ("special.bessel_j0", "special.bessel_j1"),
        "value",
        ("float64",),
        reason="PyTorch 2.13's float64 J0/J1 err by up to ~1e-8 relative "
        "(j0(8.212836137161739): mpmath 0.11889621350638617, numbagrad "
        "0.1188962135063862, PyTorch 0.11889621512644317); numbagrad's agree with "
        "mpmath.",
    ),
    Deviation(
        "bessel-j-torch-float32-large-x",
        ("special.bessel_j0", "special.bessel_j1"),
        "value",
        ("!float64",),
        reason="PyTorch 2.13's float32 J0/J1 (also for int inputs, computed in float32) "
        "err by up to 3e-5 absolute at arguments above 1e3 (j0(99728): mpmath "
        "0.00222041048, numbagrad 0.00222041039, PyTorch 0.00222481322); "
        "numbagrad's agree with mpmath to float32 rounding.",
    ),
    Deviation(
        "log-ndtr-float32-tail",
        "special.log_ndtr",
        "grad_value",
        ("float32",),
        reason="PyTorch derives log_ndtr's float32 gradient from its float32 output, "
        "and exp(-(y + x^2 / 2)) cancels deep in the lower tail (0.4% off at x = "
        "-300, 6% at -2085); numbagrad computes it in float64 and rounds once.",
    ),
    Deviation(
        "i0e-float32-ulp",
        "special.i0e",
        "grad_value",
        ("float32",),
        reason="PyTorch's float32 i0e(1.0) = 0.46575963 is one ulp off (numbagrad's "
        "0.4657596 is correctly rounded); programs whose gradient cancels two "
        "terms amplify that ulp.",
    ),
    Deviation(
        "torch-abs-sgn-zero-tensor-gradgrad",
        "abs",
        "gradgrad_nan_pattern",
        ("nonfinite",),
        match=r"vs np\.float64\(nan\)$",
        reason="As torch-sgn-zero-tensor: the second order of PyTorch's abs sends sgn's "
        "ZeroTensor gradient into the rules of the ops before it, and one that does not "
        "keep it an exact zero makes NaN of it (logit's where(0 <= x <= 1, ..., nan) at "
        "x < 0; CopySlices materialises it and sinh's rule multiplies it by cosh = inf); "
        "numbagrad's sgn is a constant of the graph, so that term is absent.",
    ),
    Deviation(
        "erfcx-float32-grad-cancellation",
        "special.erfcx",
        "grad_value",
        ("float32",),
        reason="PyTorch computes erfcx's float32 gradient 2 x erfcx(x) - 2 / sqrt(pi) in "
        "float32, which cancels for large x (0 at x = 3.3e5, where the derivative is "
        "-5.3e-12); numbagrad computes it in float64 and rounds once.",
    ),
    Deviation(
        "erfcx-gradgrad-cancellation",
        "special.erfcx",
        "gradgrad_value",
        reason="Both libraries differentiate erfcx' = 2 x erfcx(x) - 2 / sqrt(pi), whose "
        "derivative 2 erfcx(x) + 2 x erfcx'(x) cancels to 2 / (sqrt(pi) x^3) for large x: "
        "both return rounding noise there, summed in another order (at x = 5650: mpmath "
        "0.0308, numbagrad 0.0350, PyTorch 0.0060).",
    ),
    Deviation(
        "torch-lerp-loop-signed-zero",
        "lerp",
        "signed_zero",
        reason="PyTorch 2.13's lerp computes weight >= 0.5 as end - (end - self) * (1 - "
        "weight) in its scalar loop and as fma(weight - 1, end - self, end) in its "
        "vectorised loop, which give zeros of opposite signs (self = 1, end = -0, "
        "weight = 1: +0 and -0); numbagrad uses the scalar loop's formula everywhere.",
    ),
    Deviation(
        "torch-logit-loop-grad-signed-zero",
        "special.logit",
        "grad_value",
        ("signed_zero",),
        match=r"non-finite mismatch: np\.float(32|64)\(-?inf\) vs np\.float(32|64)\(-?inf\)",
        reason="PyTorch 2.13's logit gradient at x = -0.0 depends on which CPU loop "
        "runs: grad / (x (1 - x)) in its vectorised loop, grad * inf in its scalar loop "
        "(short tensors, tails), infinities of opposite signs; numbagrad gives the "
        "vectorised loop's, which is also PyTorch's under create_graph=True.",
    ),
    Deviation(
        "torch-logit-loop-grad-nan",
        "special.logit",
        "grad_nan_pattern",
        ("nan",),
        match=r"np\.float(32|64)\(0\.0\) vs np\.float(32|64)\(nan\)$",
        reason="As torch-logit-loop-grad-signed-zero, at a NaN input with eps: 0 in "
        "PyTorch's vectorised loop (and under create_graph=True), NaN in its scalar "
        "loop (the tail of a large tensor); numbagrad gives 0.",
    ),
    Deviation(
        "torch-zeta-int-grad-float32",
        "special.zeta_int_s",
        "gradgrad_value",
        ("int_input", "zero_dim"),
        reason="PyTorch's zeta gradient with respect to q, -x * zeta(x + 1., q), computes "
        "zeta in float32 when x is an int64 tensor and q a float64 0-d tensor (x + 1. is "
        "float32, and a 0-d tensor does not promote it), so it is float32-accurate; "
        "numbagrad's is float64 (mpmath's to 1e-16).",
    ),
    Deviation(
        "torch-zeta-int-grad-float32-first",
        "special.zeta_int_s",
        "grad_value",
        ("int_input", "zero_dim"),
        reason="As torch-zeta-int-grad-float32, in the first order.",
    ),
    Deviation(
        "bessel-e-float32-grad-cancellation",
        ("special.i0e", "special.i1e"),
        "grad_value",
        ("float32",),
        reason="PyTorch computes the float32 gradients i1e(x) - sgn(x) i0e(x) and i0e(x) - "
        "i1e(x) (sgn(x) + 1/x) in float32, where they cancel for large |x| (i1e' at 1.57e6: "
        "mpmath -1.016e-10, PyTorch -1.16e-10); numbagrad computes them in float64 and "
        "rounds once.",
    ),
    Deviation(
        "multigammaln-infinite-cotangent",
        "special.multigammaln",
        "grad_nan_pattern",
        ("inf",),
        match=r"np\.float(32|64)\(nan\) vs np\.float(32|64)\(-?inf\)$",
        reason="numbagrad's multigammaln is a sum of lgamma terms, so its gradient is a sum "
        "of products g digamma(x - j/2); PyTorch's multiplies g by the sum of the digammas. "
        "With an infinite g and an infinite digamma (x = 0), the sum of products is "
        "inf - inf = NaN where PyTorch's one product is +-inf.",
    ),
    Deviation(
        "float32-operand-float64-gradient",
        "float_power",
        "grad_value",
        ("mixed_dtypes", "float32"),
        reason="float_power computes in float64, so a float64 operand's gradient carries "
        "the float32 rounding differences of the float32 operand's upstream ops "
        "(float32 matrix_exp: 1e-6 relative, an ulp after logaddexp2) and is compared at "
        "float64 tolerance; on identical operands the two libraries agree.",
    ),
    *(
        Deviation(
            f"fft-operation-order-{kind}",
            _FFT_OPS,
            kind,
            reason="NumPy's pocketfft and PyTorch's FFT order their butterflies "
            "differently: the sign of a zero that is a sum, and where inf - inf becomes NaN "
            "(an infinite input, a NaN cotangent), differ; finite values agree to rounding.",
        )
        for kind in ("signed_zero", "nan_pattern", "grad_nan_pattern", "gradgrad_nan_pattern")
    ),
    *(
        Deviation(
            f"complex-operation-order-{kind}",
            ("complex.sigmoid", "complex.sum_mean"),
            kind,
            reason="Complex arithmetic spelled out in real operations (the parts of a "
            "quotient, a sum) in another order than PyTorch's: signed zeros and where "
            "inf - inf becomes NaN differ; finite values agree.",
        )
        for kind in ("signed_zero", "nan_pattern")
    ),
    *(
        Deviation(
            f"torch-complex-vectorised-loop-{kind}",
            ("complex.neg", "complex.acos", "complex.sgn"),
            kind,
            reason="PyTorch's complex neg, acos and sgn give other signed zeros and NaNs "
            "in their vectorised loop than in their scalar one, so its answer depends on "
            "the tensor's length (torch 2.13, complex128: -(0.9+0j) has imaginary part "
            "-0.0 for 1 to 4 elements, +0.0 from 8 (0 - z); sgn(inf+0j) is nan+nanj for 1 "
            "to 4 elements, nan+0j from 8); acos(0.9+0j) has +0.0 where C99's cacos and "
            "NumPy give -0.0. numbagrad gives NumPy's (C99's) answer at every length.",
        )
        for kind in ("signed_zero", "nan_pattern")
    ),
    Deviation(
        "complex-operation-order-grad_nan_pattern",
        "complex.sigmoid",
        "grad_nan_pattern",
        match=r"np\.float(32|64)\(nan\) vs np\.float(32|64)\(-?inf\)$",
        reason="As complex-operation-order: with an infinite (or overflowing) cotangent "
        "the complex product g * conj(s (1 - s)) spelled out in real operations meets "
        "inf - inf (NaN) where PyTorch's order gives +-inf (seed 702375).",
    ),
    Deviation(
        "eig-repeated-eigenvalue-vectors",
        "complex.linalg.eig_real_input",
        "value",
        ("ties",),
        reason="The eigenvectors of a repeated eigenvalue (an expanded, rank-deficient "
        "input: seed 1001144) are any basis of its eigenspace; which one LAPACK's geev "
        "returns depends on rounding, differently in PyTorch's LAPACK and NumPy's. The "
        "eigenvalues agree.",
    ),
    Deviation(
        "lapack-nonfinite-slogdet",
        ("complex.linalg.slogdet", "linalg.slogdet"),
        "nan_pattern",
        ("nonfinite",),
        reason="The LU factorisation of a matrix with NaN or infinite entries is undefined "
        "past the first non-finite pivot: whether the sign comes out 0 or NaN and the "
        "log|det| NaN or inf depends on the pivoting of each LAPACK (seed 1000815).",
    ),
    Deviation(
        "torch-polar-sgn-of-infinite-result",
        "polar",
        "grad_nan_pattern",
        ("nonfinite",),
        match=r"vs np\.float(32|64)\(nan\)$",
        reason="polar's gradient in abs is Re(conj(g) e^(i angle)), finite for an infinite "
        "abs; PyTorch computes e^(i angle) as sgn(result), NaN when the result is infinite "
        "(seed 1000927). numbagrad uses cos and sin of the angle.",
    ),
    Deviation(
        "torch-empty-complex-backward-strides",
        (
            *(
                "complex." + n
                for n in (
                    "acos acosh asin asinh atan atanh cos cosh exp exp2 expm1 log log10 "
                    "log1p log2 neg reciprocal rsqrt sgn sigmoid sin sinh sqrt square tan tanh"
                ).split()
            ),
            "complex",  # (torch.complex's backward too: seed 1000067)
            "polar",  # (seed 901733)
        ),
        "grad_raises_only_torch",
        ("empty",),
        match="last dimension with stride 1",
        reason="On an empty tensor PyTorch's backward through view_as_real/view_as_complex "
        "raises 'Tensor must have a last dimension with stride 1' (the empty gradient of "
        "an elementwise backward such as gelu's has strides view_as_complex refuses; "
        "seed 703661); there is nothing to compute, numbagrad returns the empty "
        "gradient.",
    ),
    Deviation(
        "grid-sample-gradgrad-nan-times-zero",
        "nn.functional.grid_sample",
        "gradgrad_nan_pattern",
        ("nan",),
        match=r"np\.float(32|64)\(0\.0\) vs np\.float(32|64)\(nan\)$",
        reason="A second derivative whose coefficient is 0 (a coordinate the bilinear "
        "weights do not couple, or one clipped by the padding) at a grid point whose taps "
        "read a NaN input: PyTorch's double backward multiplies the NaN by the 0 (NaN), "
        "numbagrad's rule gives 0. Seed 700219 with its NaN inputs replaced by finite "
        "values agrees to 1e-15 (those entries are 0 in both).",
    ),
    Deviation(
        "torch-mkl-fft-empty-batch",
        _FFT_OPS,
        "raises_only_torch",
        ("empty",),
        match="MKL FFT error",
        reason="PyTorch's MKL FFT raises 'Inconsistent configuration parameters' on an "
        "empty batch (torch.fft.rfft(torch.zeros(5, 0, 2, 5)) and fft, ihfft, hfft, irfft "
        "alike, torch 2.13 CPU; seed 800972); numbagrad returns the empty result, as "
        "NumPy's FFT does.",
    ),
    Deviation(
        "torch-complex-cumprod-starts-at-one",
        "complex.cumprod",
        "nan_pattern",
        ("inf",),
        reason="PyTorch's complex cumprod multiplies its first element by 1 + 0j, and the "
        "complex product meets 0 * inf: torch.cumprod of [-inf - 3j] is [-inf + nanj] "
        "(seed 802855). numbagrad's first element is the input itself, as NumPy's.",
    ),
    Deviation(
        "polar-negative-abs",
        "polar",
        "grad_value",
        reason="torch.polar is undefined for a negative abs (its documentation says so): "
        "PyTorch's backward divides the result by its modulus, which flips the sign of the "
        "abs gradient there; numbagrad's is the derivative of abs * e^(i angle).",
    ),
    Deviation(
        "torch-complex-cumprod-starts-at-one-signed_zero",
        "complex.cumprod",
        "signed_zero",
        reason="As torch-complex-cumprod-starts-at-one: PyTorch's first element is "
        "(1 + 0j) * z, whose imaginary part is -0.0 + 0 * Re(z): +0.0 for z = 0.58 - 0j "
        "(seed 704063). numbagrad's first element is z itself, -0.0 there.",
    ),
    Deviation(
        "polar-negative-abs-gradgrad",
        "polar",
        "gradgrad_value",
        reason="As polar-negative-abs, in the second order: the entries that differ are "
        "those of the negative abs (seed 800949: abs -0.533, its two cotangent entries).",
    ),
    Deviation(
        "torch-scatter-reduce-prod-zeros-double-backward",
        "scatter_reduce_prod",
        "gradgrad_raises_only_torch",
        match=r">1 zeros in src",
        reason="PyTorch's scatter_reduce(prod) has no double backward where two or more "
        "zeros of src go to one position (its backward raises through a DelayedError; "
        "seed 801668); numbagrad's gradient there is differentiable and its second "
        "derivative, the product of the group's other elements, passes gradgradcheck.",
    ),
    Deviation(
        "torch-complex-matrix-exp-nonfinite",
        "complex.linalg.matrix_exp",
        "nan_pattern",
        ("nonfinite",),
        reason="PyTorch's complex matrix_exp of a matrix with a NaN or infinite entry is "
        "NaN with an imaginary part that depends on its code path: nan+0j for one 3x3 "
        "matrix with a NaN (seed 701488), nan+nanj for the same matrix in a batch of three, "
        "and for an infinite entry (seed 704084). numbagrad gives nan+nanj throughout.",
    ),
    Deviation(
        "torch-empty-view-as-complex-strides",
        "complex.real_imag",
        "raises_only_torch",
        ("empty",),
        match="last dimension with stride 1",
        reason="As torch-empty-complex-backward-strides, in the forward: PyTorch's "
        "view_as_complex refuses the strides of some empty tensors ('Tensor must have a "
        "last dimension with stride 1', seed 900978); numbagrad returns the empty view.",
    ),
    Deviation(
        "lapack-svd-nonfinite-gradient",
        ("linalg.norm", "linalg.matrix_norm", "linalg.svdvals"),
        "grad_nan_pattern",
        ("nonfinite",),
        reason="The SVD of a matrix with an infinite entry is NaN (both libraries' "
        "singular values are NaN); PyTorch's backward of those NaN factors still returns "
        "some finite entries (the cotangent, 0.0: seed 900830), numbagrad's is NaN.",
    ),
    Deviation(
        "torch-complex-add-alpha",
        ("complex.pow", "complex.div", "complex.scalar"),
        "nan_pattern",
        ("nonfinite",),
        match=r"np\.float(32|64)\(-?inf\) vs np\.float(32|64)\(nan\)$",
        reason="PyTorch's add and sub compute self + alpha * other with alpha a complex "
        "1 + 0j (aten/src/ATen/native/ufunc/add.h), so an infinite or NaN part of the "
        "second operand meets 0 * inf in the complex product and makes the other part NaN: "
        "torch (1+0j) + (1+infj) is nan+infj, (-0j) + (inf+nanj) is nan+nanj (seed "
        "801267: z**w + z**3 at z = -3 - infj). numbagrad adds the parts, as NumPy and C99: "
        "2+infj, inf+nanj.",
    ),
    Deviation(
        "blas-complex-gemm-nonfinite",
        ("complex.matmul", "complex.einsum"),
        "nan_pattern",
        ("nonfinite",),
        reason="Which entries of a complex matrix product with infinite parts come out NaN "
        "depends on the BLAS kernel (how it applies the complex alpha = 1 + 0j and orders "
        "the partial products): NumPy's OpenBLAS zgemm gives nan+nanj where the sum of the "
        "complex products is -inf-infj and PyTorch's MKL gives -inf-infj (seed 702918), and "
        "on other inputs MKL gives NaN where that sum is +-inf; neither library follows "
        "the sums of the products in general.",
    ),
    Deviation(
        "lapack-nonfinite-cholesky-ex",
        "complex.linalg.cholesky_ex",
        "nan_pattern",
        ("nonfinite",),
        reason="cholesky_ex of a matrix with NaN or infinite entries stops at the first "
        "pivot that is not positive (info > 0); what is left in that column depends on "
        "each implementation's order (inf - inf or -inf): PyTorch's MKL potrf leaves inf "
        "where numbagrad's potf2 leaves NaN (seed 703470).",
    ),
    Deviation(
        "torch-complex-pinv-float32",
        "complex.linalg.pinv",
        "value",
        ("float32",),
        reason="PyTorch's float32 complex pinv is off by up to 3e-5 relative (seed 701653: "
        "an entry 3.2e-6 off the exact pseudo-inverse, np.linalg.pinv in float64, of a "
        "matrix of condition 48), past the float32 tolerance; numbagrad's is 1.8e-7 off.",
    ),
    Deviation(
        "fft-rounding-zero-base",
        "float_power",
        "grad_nan_pattern",
        ("zero",),
        match=r"np\.float(32|64)\(0\.0\) vs np\.float(32|64)\(nan\)$",
        reason="The exponent's gradient is g * result * log(base), 0 at a zero base; a base "
        "that an earlier op computes as exactly 0 in numbagrad is a rounding-level "
        "negative in PyTorch (an FFT of repeated values: 0.0 in NumPy's pocketfft, "
        "-2e-8 in PyTorch's MKL, seed 800885), whose log is NaN.",
    ),
    Deviation(
        "div-self-rounding-residue",
        "div",
        "gradgrad_value",
        match=r"worst np\.float64\(-?\d\.\d+e-(0[6-9]|[1-9]\d)\) "
        r"vs np\.float64\(-?\d\.\d+e-(0[6-9]|[1-9]\d)\)",
        reason="div(x, x) of one tensor is 1, so its derivatives are exactly 0; both "
        "libraries return the rounding residue of 1/x - x/x^2 (seed 700702: -1e-8 and "
        "-2e-8 against terms of 1e8), which depends on the order of the products. Only "
        "residues below 1e-5 match.",
    ),
    Deviation(
        "lstm-layer-unbatched",
        ("nn._lstm", "nn._gru", "nn._rnn_tanh", "nn._rnn_relu"),
        "raises_only_numbagrad",
        match="the input projections must be",
        reason="The internal layer entries take (T, B, G*H) input projections; torch's "
        "_VF.lstm/gru/rnn_* also take an unbatched 2-D input there (and even a 1-D one, "
        "seed 701677, which nn.RNN refuses). nn.LSTM/GRU/RNN accept unbatched input in "
        "both libraries (they add the batch dimension).",
    ),
    Deviation(
        "max-unpool-noncontiguous-indices",
        ("nn.functional.max_unpool2d", "nn.functional.max_unpool3d"),
        "grad_raises_only_torch",
        match="view size is not compatible",
        reason="PyTorch's max_unpool2d/3d backward views non-contiguous indices and raises; "
        "numbagrad computes the gradient.",
    ),
    Deviation(
        "gamma-icdf-no-double-backward",
        "ops.standard_gamma_icdf",
        "gradgrad_raises_only_numbagrad",
        match="derivative for '_standard_gamma_grad' is not implemented",
        reason="PyTorch's _standard_gamma has no double backward (grad of the grad of "
        "torch._standard_gamma raises this same NotImplementedError), and numbagrad's "
        "raises as PyTorch's; the fuzzer's torch side for this entry is the "
        "differentiable bisection reference of tests/_opdb_special.py, which only it "
        "differentiates twice (the OpInfo says supports_gradgrad=False).",
    ),
    Deviation(
        "max-unpool-repeated-indices",
        ("nn.functional.max_unpool1d", "nn.functional.max_unpool2d", "nn.functional.max_unpool3d"),
        "value",
        ("noncontig",),
        reason="With repeated indices (an expanded index tensor) PyTorch's max_unpool is "
        "nondeterministic, as its documentation notes (pytorch/pytorch#80827): seed 704205 "
        "gave either written value in repeated runs of the same program; numbagrad's "
        "kernel writes in order, the last of the repeated indices wins.",
    ),
)

# Found by the fuzzer, not fixed yet; the programs are minimal reproducers (render one with
# fuzz_program.render, or see the xfail reasons of test_fuzz.py::test_open_bug).
OPEN_BUGS: tuple[OpenBug, ...] = ()


# Open bugs that were fixed: each program is replayed by tests/fuzz/test_fuzz.py and must
# now agree with PyTorch (a regression test; the notes say what the bug was).
FIXED_BUGS: tuple[OpenBug, ...] = (
    OpenBug(
        "softplus-gradgrad-nan",
        "nn.functional.softplus",
        "gradgrad_nan_pattern",
        (),
        note=(
            "second order of nn.functional.softplus (beta/threshold) above its "
            "threshold with a NaN cotangent: 0 where torch has nan (PyTorch's "
            "softplus_double_backward multiplies by the mask beta * x < threshold, "
            "nan * 0; numbagrad selects)"
        ),
        program=_p(
            {
                "seed": 22039,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 1410496},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.softplus",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"beta": 2.0, "threshold": 3.0},
                    }
                ],
                "cotangent": {"data": [nan, -2.4005187659930534, nan]},
            }
        ),
    ),
    OpenBug(
        "lerp-gradgrad-nan",
        "lerp",
        "gradgrad_nan_pattern",
        (),
        note="second order of lerp with infinite operands: nan where torch has inf",
        program=_p(
            {
                "seed": 11961,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 1, 4],
                        "grad": True,
                        "view": ["T", 1, 0],
                        "values": {"kind": "ints", "seed": 765504},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 1, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 765505},
                    },
                ],
                "steps": [
                    {
                        "op": "mul",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                    {"op": "rtruediv", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                    {
                        "op": "lerp",
                        "variant": None,
                        "args": [{"ref": "s1"}, {"ref": "s0"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "logit-eps-grad",
        "special.logit",
        "grad_nan_pattern",
        (),
        note=(
            "logit's gradient outside [eps, 1 - eps] (or [0, 1] without eps): a value where"
            " torch has nan (or 0)"
        ),
        program=_p(
            {
                "seed": 5000394,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 320025216},
                    }
                ],
                "steps": [
                    {
                        "op": "special.logit",
                        "variant": "toplevel",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "logit-gradgrad-value",
        "special.logit",
        "gradgrad_value",
        (),
        note="second order of logit with eps at the eps boundary differs from torch's",
        program=_p(
            {
                "seed": 20937,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [14.402997108070323]},
                    }
                ],
                "steps": [
                    {"op": "special.logit", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {"data": [inf]},
            }
        ),
    ),
    OpenBug(
        "vecdot-broadcast-check",
        "linalg.vecdot",
        "raises_only_torch",
        (),
        note=(
            "linalg.vecdot of operands whose sizes do not match along dim (one of size 1) "
            "broadcasts where torch raises"
        ),
        program=_p(
            {
                "seed": 1327,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "positive", "seed": 84928},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [4],
                        "grad": True,
                        "view": ["offset"],
                        "values": {
                            "data": [
                                -0.7878101545746996,
                                1.9146167658776387,
                                -0.4613643633300728,
                                -0.452964863061903,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "linalg.vecdot",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "repeat-interleave-dim-check",
        "repeat_interleave",
        "raises_only_torch",
        (),
        note=(
            "repeat_interleave with dim out of range for a 1-D input is accepted (torch: "
            "IndexError)"
        ),
        program=_p(
            {
                "seed": 20095,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [2.0]},
                    }
                ],
                "steps": [
                    {
                        "op": "repeat_interleave",
                        "variant": None,
                        "args": [{"ref": "x0"}, 2],
                        "kwargs": {"dim": 0},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "l1-loss-dtype",
        "nn.functional.l1_loss",
        "dtype",
        (),
        note=(
            "l1_loss with a 0-d float64 target and a float32 input: float32 (torch broadcasts"
            " the operands first, so float64)"
        ),
        program=_p(
            {
                "seed": 7000034,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4, 0, 1, 3],
                        "grad": False,
                        "view": None,
                        "values": {"data": []},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"data": [-0.10772364935367884]},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.l1_loss",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "mean"},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "huber-dtype",
        "nn.functional.huber_loss",
        "dtype",
        (),
        note="huber_loss of a float32 input and a 0-d float64 target: float64 (torch: float32)",
        program=_p(
            {
                "seed": 29831,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"data": [1.31326162815094]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "special", "seed": 1909185},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.huber_loss",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "mean", "delta": 0.8},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "smooth-l1-dtype",
        "nn.functional.smooth_l1_loss",
        "dtype",
        (),
        note=(
            "smooth_l1_loss of a float32 input and a 0-d float64 target: float32 (torch "
            "broadcasts first: float64)"
        ),
        program=_p(
            {
                "seed": 39736,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [6],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                1.5574077367782593,
                                -2.185039758682251,
                                -0.14254654943943024,
                                1.1578212976455688,
                                -3.3805148601531982,
                                -0.2910062074661255,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"data": [1.3789766311159495]},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.smooth_l1_loss",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "mean", "beta": 0.5},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "tensordot-broadcast",
        "tensordot",
        "raises_only_numbagrad",
        (),
        note=(
            "tensordot with a contracted dimension of size 1 against size 3: torch broadcasts"
            " it, numbagrad raises"
        ),
        program=_p(
            {
                "seed": 6000663,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 1],
                        "grad": True,
                        "view": None,
                        "values": {"data": [0.7717509865760803, -100.0]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [3, 2],
                        "grad": False,
                        "view": ["step", 1],
                        "values": {
                            "data": [
                                0.7135396599769592,
                                1.7322659492492676,
                                0.1079159751534462,
                                1.1256051063537598,
                                1.732033371925354,
                                -0.9228455424308777,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "tensordot",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, 1],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "addmv-dtype-check",
        "addmv",
        "raises_only_torch",
        (),
        note=(
            "addmv with operands of different float dtypes promotes (torch: 'addmv input "
            "tensors must have the same dtype')"
        ),
        program=_p(
            {
                "seed": 712,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2],
                        "grad": False,
                        "view": None,
                        "values": {"data": [0.0, 2.0]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [2, 3],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                -1.9629122252884845,
                                -0.052055346633608224,
                                -0.9571608189321714,
                                1.573860541876667,
                                -0.9279699844328282,
                                0.4931167538318042,
                            ]
                        },
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [3],
                        "grad": True,
                        "view": ["offset"],
                        "values": {
                            "data": [-0.491655781207192, 1.6646181282901127, -1.890766609677669]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "addmv",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {"beta": 2.0},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "tensordot-dim-check",
        "tensordot",
        "raises_only_torch",
        (),
        note="tensordot with dims out of range is accepted (torch: IndexError)",
        program=_p(
            {
                "seed": 2374,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 151936},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [4, 2, 3],
                        "grad": True,
                        "view": ["expand", [0, 1, 2]],
                        "values": {
                            "data": [
                                -0.4933616816997528,
                                -0.7401862144470215,
                                -0.11811001598834991,
                                -1.8375842571258545,
                                -1.8388352394104004,
                                -0.3852561414241791,
                                -0.44940343499183655,
                                1.195796012878418,
                                0.8316885828971863,
                                1.725885272026062,
                                -0.6236713528633118,
                                -0.8001747131347656,
                                1.4111840724945068,
                                -1.0833033323287964,
                                1.3138830661773682,
                                -0.17666597664356232,
                                -1.06599760055542,
                                -1.5763163566589355,
                                -0.022646591067314148,
                                -1.8905831575393677,
                                -1.3419342041015625,
                                1.3644402027130127,
                                -1.2256053686141968,
                                -0.0027775070630013943,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "tensordot",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, {"tuple": [[1, 2], [2, 0]]}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "var-grad-inf",
        "var",
        "grad_nan_pattern",
        ("inf",),
        note=(
            "var backward with an infinite entry: nan everywhere (torch: -inf/inf, nan "
            "only at the inf)"
        ),
        program=_p(
            {
                "seed": 1003200,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 4, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 64204800},
                    }
                ],
                "steps": [
                    {
                        "op": "var",
                        "variant": "method",
                        "args": [{"ref": "x0"}, 1],
                        "kwargs": {"keepdim": True},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "multigammaln-bool",
        "special.multigammaln",
        "raises_only_torch",
        (),
        note=(
            "multigammaln of a bool tensor computes (torch: RuntimeError 'The input tensor "
            "may not be a boolean tensor')"
        ),
        program=_p(
            {
                "seed": 8000571,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "bool",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "int", "seed": 512036544},
                    }
                ],
                "steps": [
                    {
                        "op": "special.multigammaln",
                        "variant": None,
                        "args": [{"ref": "x0"}, 1],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "linalg-norm-dim-check",
        "linalg.norm",
        "raises_only_torch",
        (),
        note=("linalg.norm with a dim out of range for the input is accepted (torch: IndexError)"),
        program=_p(
            {
                "seed": 8000557,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 2],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                2.3876682333397317,
                                -0.7999613794023017,
                                0.0,
                                1.621988315943729,
                            ]
                        },
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.norm",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"dim": {"tuple": [1, 2]}},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "vecdot-dtype-check",
        "linalg.vecdot",
        "raises_only_torch",
        (),
        note=(
            "linalg.vecdot of float32 and float64 promotes (torch: RuntimeError 'Expected x"
            " and y to have the same dtype')"
        ),
        program=_p(
            {
                "seed": 8002242,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [3, 3, 1],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                0.0,
                                -0.9502129554748535,
                                1.718281865119934,
                                -0.9816843867301941,
                                53.598148345947266,
                                -0.9502129554748535,
                                1.718281865119934,
                                0.0,
                                -0.8646647334098816,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -0.9579308735580527,
                                1.725138105317451,
                                -1.3449020678040395,
                                -0.2724049304134679,
                                1.9330416950582707,
                                1.490383241686168,
                                1.693203794657173,
                                0.4667462634880528,
                                -1.7441843215436568,
                                1.0828965577146046,
                                0.5223363740112341,
                                -0.8655471440197648,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "linalg.vecdot",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"dim": -2},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "cat-empty-grad",
        "cat",
        "grad_none",
        ("empty",),
        note=("an empty input of cat gets grad None (torch: an empty tensor)"),
        program=_p(
            {
                "seed": 1004914,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 4, 5],
                        "grad": True,
                        "view": ["T", 2, 1],
                        "values": {"kind": "ints", "seed": 64314496},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [0],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "positive", "seed": 64314497},
                    },
                    {
                        "name": "x2",
                        "dtype": "float32",
                        "shape": [2, 2, 5],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "special", "seed": 64314498},
                    },
                ],
                "steps": [
                    {
                        "op": "cat",
                        "variant": None,
                        "args": [[{"ref": "x2"}, {"ref": "x0"}, {"ref": "x1"}]],
                        "kwargs": {"dim": -2},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "cat-empty-requires-grad",
        "cat",
        "requires_grad",
        ("empty",),
        note=(
            "cat of bool/int tensors with an empty float one requiring grad: "
            "requires_grad False (torch: True)"
        ),
        program=_p(
            {
                "seed": 1003032,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "int64",
                        "shape": [1, 4, 2],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "int", "seed": 64194048},
                    },
                    {
                        "name": "x1",
                        "dtype": "int64",
                        "shape": [1, 3, 2],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "int", "seed": 64194049},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [0],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "special", "seed": 64194050},
                    },
                ],
                "steps": [
                    {
                        "op": "cat",
                        "variant": "tuple",
                        "args": [[{"ref": "x2"}, {"ref": "x1"}, {"ref": "x0"}]],
                        "kwargs": {"dim": 1},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "einsum-bool-sum",
        "einsum",
        "dtype",
        ("bool_input",),
        note=("einsum summing bool operands returns bool (torch: int64)"),
        program=_p(
            {
                "seed": 1000870,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "bool",
                        "shape": [0],
                        "grad": False,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {"op": "einsum", "variant": None, "args": ["i->", {"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "einsum-empty-bool",
        "einsum",
        "raises_only_torch",
        ("empty",),
        match="Autograd not support",
        note=(
            "einsum of an empty float operand requiring grad and a bool one: torch "
            "raises, numbagrad computes"
        ),
        program=_p(
            {
                "seed": 1612,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0, 1, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 103168},
                    },
                    {
                        "name": "x1",
                        "dtype": "bool",
                        "shape": [0, 3, 2],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "int", "seed": 103169},
                    },
                ],
                "steps": [
                    {
                        "op": "einsum",
                        "variant": None,
                        "args": ["bij,bjk->bik", {"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "mean-gradgrad-empty",
        "mean",
        "gradgrad_nan_pattern",
        ("empty",),
        note=("second order of mean over an empty dim: nan (torch: 0)"),
        program=_p(
            {
                "seed": 1001683,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0, 5, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 64107712},
                    }
                ],
                "steps": [
                    {
                        "op": "mean",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {"dim": 0, "keepdim": True},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "logsumexp-gradgrad-empty",
        "logsumexp",
        "gradgrad_nan_pattern",
        ("empty",),
        note=("second order of logsumexp over an empty dim: nan (torch: 0)"),
        program=_p(
            {
                "seed": 4600,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0, 3, 2, 2],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {
                        "op": "logsumexp",
                        "variant": "method",
                        "args": [{"ref": "x0"}, 0],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.13842190861527712,
                        0.8468520894985153,
                        0.5585128215524565,
                        0.601640284349375,
                        -1.2939881036117082,
                        1.092985124072068,
                        1.0704545305893536,
                        1.212852935592746,
                        -0.4236384159234053,
                        -0.1558702784217923,
                        0.17437008449482327,
                        -0.2544922781620616,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "clamp-grad-nan",
        "clamp",
        "grad_nan_pattern",
        ("nonfinite",),
        note=("clamp backward is g * mask: nan where torch's where(mask, g, 0) is 0"),
        program=_p(
            {
                "seed": 445,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4, 1],
                        "grad": True,
                        "view": None,
                        "values": {"data": [-inf, 0.6931471824645996, 1.3862943649291992, nan]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "positive", "seed": 28481},
                    },
                    {
                        "name": "x2",
                        "dtype": "float32",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 28482},
                    },
                ],
                "steps": [
                    {
                        "op": "clamp",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"min": {"ref": "x1"}, "max": {"ref": "x2"}},
                    }
                ],
                "cotangent": {
                    "data": [-0.03369880095124245, 0.11167480796575546, 0.4117780923843384, nan]
                },
            }
        ),
    ),
    OpenBug(
        "clamp-grad-bounds",
        "clamp",
        "grad_value",
        ("nan",),
        note=("gradients of tensor min/max when a bound is nan or min > max differ from torch's"),
        program=_p(
            {
                "seed": 1000187,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [nan]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 64011970},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 64011971},
                    },
                ],
                "steps": [
                    {
                        "op": "clamp",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"min": {"ref": "x1"}, "max": {"ref": "x2"}},
                    }
                ],
                "cotangent": {"data": [0.6331003929891551]},
            }
        ),
    ),
    OpenBug(
        "nan-to-num-grad-nonfinite",
        "nan_to_num",
        "grad_nan_pattern",
        ("nonfinite",),
        note=(
            "nan_to_num backward uses where(): 0 where torch's g * isfinite(x) is nan "
            "(inf gradient at a nan)"
        ),
        program=_p(
            {
                "seed": 1299,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 83136},
                    }
                ],
                "steps": [
                    {
                        "op": "nan_to_num",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"posinf": 0.0},
                    }
                ],
                "cotangent": {
                    "data": [
                        -0.6267597053110185,
                        0.5104440859280355,
                        0.17893978079276918,
                        -0.12666774885630905,
                        6.268656482149547,
                        inf,
                        -3.2596783916787535,
                        -0.13176292973791312,
                        -7.19145405175533e-07,
                        -2.1544774996602025,
                        0.4426931392064373,
                        -5.006049968981542,
                        0.00028263635668430087,
                        -0.0562783401969469,
                        -0.1612665173857974,
                        5.125196489696766,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "nan-to-num-gradgrad-nonfinite",
        "nan_to_num",
        "gradgrad_nan_pattern",
        ("nonfinite",),
        note=("second order through nan_to_num with non-finite values: 0 where torch has nan"),
        program=_p(
            {
                "seed": 821,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 52544},
                    }
                ],
                "steps": [
                    {
                        "op": "mean",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {"dim": 1, "keepdim": True},
                    },
                    {
                        "op": "log_softmax",
                        "variant": "method",
                        "args": [{"ref": "s0"}, 0],
                        "kwargs": {},
                    },
                    {"op": "nan_to_num", "variant": None, "args": [{"ref": "s1"}], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "einsum-mixed-float",
        "einsum",
        "raises_only_torch",
        ("mixed_dtypes",),
        match="expected scalar type",
        note=(
            "einsum of float32 and float64 operands is accepted and promoted (torch: RuntimeError)"
        ),
        program=_p(
            {
                "seed": 3369,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 1, 1400],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 215616},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [3, 1400, 2],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 215617},
                    },
                ],
                "steps": [
                    {
                        "op": "einsum",
                        "variant": "list",
                        "args": ["bij,bjk->bik", {"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "var-gradgrad-empty",
        "var",
        "gradgrad_nan_pattern",
        ("empty",),
        note=("second order of var over an empty tensor: nan (torch: 0)"),
        program=_p(
            {
                "seed": 1783,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0, 3, 4, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 114112},
                    }
                ],
                "steps": [
                    {"op": "var", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "prod-grad-nonfinite",
        "prod",
        "grad_nan_pattern",
        ("nonfinite",),
        note=("prod backward with inf/nan entries differs from torch's (nan vs 0 / -inf)"),
        program=_p(
            {
                "seed": 1003624,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "special", "seed": 64231936},
                    }
                ],
                "steps": [{"op": "prod", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}],
            }
        ),
    ),
    OpenBug(
        "cumprod-gradgrad-nonfinite",
        "cumprod",
        "gradgrad_nan_pattern",
        ("inf",),
        note=("second order of cumprod with inf entries: nan (torch: finite / None)"),
        program=_p(
            {
                "seed": 1002988,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                0.0,
                                0.0,
                                0.0,
                                -1.3171636519176368,
                                0.0,
                                0.0,
                                -0.3332284837685151,
                                inf,
                                0.0,
                                2.5022910726518113,
                                -0.0,
                                -2.184895777155364,
                                2.518692188938733,
                                -1.8332110427822759,
                                -0.6861003651710336,
                                0.0,
                                0.0,
                                0.0,
                                -1e-30,
                                0.0,
                                0.0,
                                -0.20436722367141247,
                                2.6814975327642,
                                0.0,
                                1.4075421573684936,
                                -2.0136639004315784,
                                -0.5270049229732696,
                                -0.6660926321007556,
                                1.1001246344362237,
                                100.0,
                                0.0,
                                0.0,
                                0.0,
                                0.6909717824436568,
                                0.0,
                                0.0,
                                2.599183013625357,
                                -2.274717545758376,
                                0.0,
                                -1.5247927345588612,
                                -1.4539031048519206,
                                0.5,
                                1.2745927746509516,
                                -2.1508214742029335,
                                1.2699812012611034,
                                0.0,
                                0.0,
                                0.0,
                                1.0,
                                0.0,
                                0.0,
                                0.49816288819942756,
                                2.5474088481825943,
                                0.0,
                                -1.3506401002115545,
                                1.3246708505772782,
                                -1.1324150983863737,
                                -0.5700643752047427,
                                0.3353673658477563,
                                1e-30,
                                0.0,
                                0.0,
                                0.0,
                                -1.5974133369254646,
                                0.0,
                                0.0,
                                2.65353571876185,
                                -1.698272625949996,
                                0.0,
                                1.467913906191213,
                                2.3838346167538953,
                                1.6835258654264331,
                                -0.7406994388411778,
                                -89.0,
                                -2.7361686524907074,
                            ]
                        },
                    }
                ],
                "steps": [
                    {"op": "cumprod", "variant": None, "args": [{"ref": "x0"}, 0], "kwargs": {}}
                ],
                "cotangent": {
                    "data": [
                        0.1688136260617983,
                        0.08967405127905004,
                        -0.7532456117074225,
                        0.11860359921204847,
                        -1.2015688363262584,
                        1.3837392346239135,
                        -1.1195908288764942,
                        0.2926075946863219,
                        0.18080029632503164,
                        1.1460986939613838,
                        -0.8830017493211685,
                        -0.7012456163067653,
                        0.07192629766781665,
                        0.2676440180383189,
                        -1.02219698462205,
                        0.6976032279203058,
                        0.6876739811855305,
                        0.16719054337542927,
                        -0.8680077375269278,
                        -1.10332471246321,
                        -2.5551872890516094,
                        -0.17763147344655225,
                        -1.353227709032989,
                        1.1059113483353908,
                        -1.2789950851814968,
                        0.18457820051025742,
                        -0.35663280191805324,
                        -0.6590752191290238,
                        1.1284717039652012,
                        -2.0899051119200736,
                        -0.5256434019151346,
                        1.7849067636681761,
                        0.35857893080120956,
                        -0.6583146346004586,
                        0.5928951135886895,
                        -0.5335070445393589,
                        -0.669478114664844,
                        -1.5085629329169734,
                        -2.0786318304584808,
                        0.1956001532561472,
                        1.2345580171009032,
                        -0.6550958779653296,
                        -0.5260267469624336,
                        1.0575849965953645,
                        1.2446835819956115,
                        -0.253417561393037,
                        -0.8132787977360048,
                        -0.3416576167190212,
                        0.835222291990683,
                        0.3600813185414788,
                        0.019379726372963917,
                        -1.5692965492007007,
                        -0.022768752820693808,
                        -1.0258204024920123,
                        0.509210735459801,
                        0.9768605868809105,
                        -0.28477215513229265,
                        -0.12769650030950758,
                        0.31182801012106776,
                        0.7653261671973487,
                        0.38946551564564,
                        0.06999365385847087,
                        -0.45233064652806915,
                        0.6175901530825815,
                        -1.1520165196120935,
                        -0.16750325660302784,
                        0.5511962707302298,
                        0.4113359488197377,
                        -0.9074250112123414,
                        -0.012810557687840063,
                        -0.820483640793525,
                        -0.7137143728853443,
                        -0.6560063209262856,
                        -0.0448374781008417,
                        0.8166618905980338,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "cumprod-grad-nonfinite",
        "cumprod",
        "grad_nan_pattern",
        ("inf",),
        note=("float32 cumprod backward with inf (and 0) entries: nan where torch has inf"),
        program=_p(
            {
                "seed": 1006,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 33, 64],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 64384},
                    }
                ],
                "steps": [
                    {"op": "rpow", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
                    {
                        "op": "cumprod",
                        "variant": "method",
                        "args": [{"ref": "s0"}, 1],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "kl-div-nonfinite",
        "nn.functional.kl_div",
        "nan_pattern",
        (),
        note=(
            "kl_div with a non-positive or non-finite target/input: inf or a value where "
            "torch has nan"
        ),
        program=_p(
            {
                "seed": 7000071,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [1.0]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [4, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 448004546},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.kl_div",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "batchmean"},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "relu6-signed-zero",
        "nn.functional.relu6",
        "signed_zero",
        (),
        note="relu6/hardtanh of -0.0 at the lower bound 0 give +0.0 (torch keeps -0.0)",
        program=_p(
            {
                "seed": 7001828,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 5, 5],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "ints", "seed": 448116992},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.relu6",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "logsigmoid-signed-zero",
        "nn.functional.logsigmoid",
        "signed_zero",
        (),
        note="logsigmoid of large inputs is -0.0 (torch: +0.0)",
        program=_p(
            {
                "seed": 8004457,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5, 1],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "special", "seed": 512285248},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.logsigmoid",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "smooth-l1-grad-nan",
        "nn.functional.smooth_l1_loss",
        "grad_nan_pattern",
        (),
        note="smooth_l1_loss's gradient with non-finite operands: nan where torch has a value",
        program=_p(
            {
                "seed": 8001875,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 3],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "special", "seed": 512120003},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [2, 3],
                        "grad": True,
                        "view": ["expand", [1]],
                        "values": {
                            "data": [
                                -0.7517547607421875,
                                1.4846155643463135,
                                0.385215699672699,
                                -0.9015843272209167,
                                -1.5036745071411133,
                                -0.049453284591436386,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.smooth_l1_loss",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "none", "beta": 0.5},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.35150209069252014,
                        -0.19624513387680054,
                        0.2142106145620346,
                        0.5262576341629028,
                        0.37398961186408997,
                        -0.3890082538127899,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "huber-grad-nan",
        "nn.functional.huber_loss",
        "grad_nan_pattern",
        (),
        note="huber_loss's gradient with non-finite operands: nan where torch has a value",
        program=_p(
            {
                "seed": 8004123,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4, 3],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                -1.3234504461288452,
                                1.1520670652389526,
                                -1.4358633756637573,
                                3.6668591499328613,
                                0.8053178191184998,
                                2.4088997840881348,
                                -3.024104356765747,
                                -2.418325901031494,
                                -1.4531925916671753,
                                0.9614661335945129,
                                -2.2735719680786133,
                                -0.38350987434387207,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [4, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 512263874},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.huber_loss",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "mean", "delta": 0.8},
                    }
                ],
                "cotangent": {"data": [-0.6133843064308167]},
            }
        ),
    ),
    OpenBug(
        "selu-gradgrad-nan",
        "nn.functional.selu",
        "gradgrad_nan_pattern",
        (),
        note="second order of selu with non-finite inputs: 0 where torch has nan",
        program=_p(
            {
                "seed": 8000839,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 2, 5, 2],
                        "grad": True,
                        "view": ["T", 3, 1],
                        "values": {"kind": "special", "seed": 512053696},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.selu",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        nan,
                        nan,
                        86.26871440879587,
                        -2.70814867201363,
                        nan,
                        nan,
                        nan,
                        0.28661748113209007,
                        nan,
                        nan,
                        nan,
                        nan,
                        0.8083410508718081,
                        nan,
                        nan,
                        nan,
                        0.2358606329200521,
                        nan,
                        21.814521168209975,
                        nan,
                        1.5583358328199333,
                        3.29109838858625,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        0.47668059655991435,
                        1.8342497809169025,
                        1.1253970953216248,
                        nan,
                        nan,
                        nan,
                        nan,
                        -1.92761005793347,
                        nan,
                        0.5694466445360373,
                        nan,
                        nan,
                        nan,
                        nan,
                        0.5070507454526413,
                        0.9109560798004617,
                        nan,
                        nan,
                        nan,
                        nan,
                        4.858688432869007,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        -0.05080266232656737,
                        nan,
                        nan,
                        nan,
                        0.21820525762612605,
                        2.572921859032853,
                        -0.3042784761748997,
                        0.1353474876498673,
                        -0.8147770444207945,
                        0.2961648927380882,
                        nan,
                        0.6487820223601547,
                        nan,
                        nan,
                        nan,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "elu-grad-float32",
        "nn.functional.elu",
        "grad_nan_pattern",
        (),
        note="elu's gradient with non-finite values: a value where torch has nan",
        program=_p(
            {
                "seed": 8004753,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 4, 4, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 512304192},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.elu",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"alpha": 0.5},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "renorm-gradgrad",
        "renorm",
        "gradgrad_nan_pattern",
        (),
        note="second order of renorm at a zero-norm slice: 0 where torch has nan",
        program=_p(
            {
                "seed": 8001181,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {
                            "data": [
                                -0.007947227802541645,
                                0.0002277281912597129,
                                -0.11967755210143496,
                                0.11276679231440818,
                                0.029085515251939677,
                                0.13414838569435475,
                                -0.08357631137232047,
                                0.04164425911683738,
                                -0.1853475388381527,
                                0.06293061959907945,
                                0.14529754551982488,
                                -0.19001124889910526,
                            ]
                        },
                    }
                ],
                "steps": [
                    {
                        "op": "renorm",
                        "variant": None,
                        "args": [{"ref": "x0"}, 3, 1, 5.0],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.0,
                        0.0,
                        nan,
                        24.502987086210343,
                        6.473628016636745,
                        19.37127620873863,
                        nan,
                        17.81822344031713,
                        nan,
                        6.945737909652201,
                        2.0052622721471467,
                        nan,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "cummax-dim-check",
        "cummax",
        "raises_only_numbagrad",
        (),
        note=(
            "cummax of a 0-d tensor with dim -3 (wrapped by torch's 0-d rule?) raises only "
            "in numbagrad"
        ),
        program=_p(
            {
                "seed": 8003019,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {"op": "cummax", "variant": None, "args": [{"ref": "x0"}, -3], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "lerp-weight-dtype",
        "lerp",
        "raises_only_numbagrad",
        (),
        note="lerp with an integer weight tensor raises where torch computes",
        program=_p(
            {
                "seed": 8004092,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [6],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.7364176819055217,
                                -1.7364176819055217,
                                -1.7364176819055217,
                                -1.7364176819055217,
                                -1.7364176819055217,
                                -1.7364176819055217,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [6],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 512261890},
                    },
                    {
                        "name": "x2",
                        "dtype": "int64",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "int", "seed": 512261891},
                    },
                ],
                "steps": [
                    {
                        "op": "lerp",
                        "variant": "method",
                        "args": [{"ref": "x0"}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "lerp-grad-inf",
        "lerp",
        "grad_nan_pattern",
        (),
        note="lerp's gradient with infinite operands: nan where torch has inf",
        program=_p(
            {
                "seed": 8002838,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 5, 1],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                0.21029492038229372,
                                -0.2011459260760188,
                                -0.21754488175821537,
                                0.2141093199264004,
                                -0.20467020528043664,
                                0.21839227677243603,
                                -0.07296278189395516,
                                -0.05019748596112586,
                                -0.2176016115993942,
                                -0.20200096845820728,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [2, 5, 1],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "ints", "seed": 512181633},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [3, 1, 2, 5, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 512181634},
                    },
                ],
                "steps": [
                    {
                        "op": "lerp",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        -0.7792851722546325,
                        0.29094963483942526,
                        0.95769563890194,
                        1.5213124618142182,
                        2.4184845009652487,
                        -1.6485704878866725,
                        0.015905691186840685,
                        -2.1780866971002806,
                        -0.6892314384596742,
                        -0.16537687089479883,
                        0.8202990087548883,
                        -0.34876913618577166,
                        -1.2635682550686633,
                        -0.15263767234283507,
                        -0.6606196841619807,
                        -0.8673932405239805,
                        0.14436172280316503,
                        1.3029334192029036,
                        0.6055189754922418,
                        -1.2592626963761477,
                        1.0960122385550564,
                        -0.2438617910843836,
                        0.6327545579664321,
                        0.925242427812956,
                        0.08851903999444082,
                        0.10346359765507271,
                        -0.9272230737949168,
                        -1.602327283220186,
                        -0.07834992172029322,
                        -0.03489370086402675,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "cholesky-not-pd",
        "cholesky",
        "raises_only_torch",
        (),
        note=(
            "cholesky of a matrix that is not positive-definite (a non-finite or zero pivot) "
            "computes where torch raises"
        ),
        program=_p(
            {
                "seed": 8004543,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 2],
                        "grad": True,
                        "view": None,
                        "values": {"data": [nan, nan, inf, nan]},
                    }
                ],
                "steps": [
                    {
                        "op": "cholesky",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {"upper": True},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "cholesky-grad-nan",
        "cholesky",
        "grad_nan_pattern",
        (),
        note="cholesky's gradient at a near-singular input: nan where torch has values",
        program=_p(
            {
                "seed": 8004818,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 3, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                3.894118678763393,
                                0.32426596507633665,
                                -1.5776659217406712,
                                0.32426596507633665,
                                3.0440374287561873,
                                0.684537076922273,
                                -1.5776659217406712,
                                0.684537076922273,
                                3.4547625370394224,
                                2.720897152236934,
                                -0.6531106704295305,
                                0.8187433725087986,
                                -0.6531106704295305,
                                1.9435893898021468,
                                -0.45023925231305306,
                                0.8187433725087986,
                                -0.45023925231305306,
                                3.723945536189748,
                            ]
                        },
                    }
                ],
                "steps": [
                    {"op": "cholesky", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {
                    "data": [
                        -0.0966687018836349,
                        -0.0,
                        -0.0,
                        0.4513919266405628,
                        0.0023293560668318867,
                        -0.0,
                        nan,
                        -0.3018386623593337,
                        -0.10174644613858685,
                        -0.21991973687909305,
                        -0.0,
                        0.0,
                        nan,
                        0.06603620428144238,
                        0.0,
                        -0.8620622261091054,
                        nan,
                        0.009643235924785729,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "nanmedian-grad-ties",
        "nanmedian",
        "grad_value",
        (),
        note=(
            "nanmedian's gradient with ties over a dim differs from torch's (which gives it"
            " to one index)"
        ),
        program=_p(
            {
                "seed": 8001811,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 2],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "ints", "seed": 512115904},
                    }
                ],
                "steps": [
                    {"op": "nanmedian", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "trapezoid-broadcast-x",
        "trapezoid",
        "shape",
        (),
        note=(
            "trapezoid with a sample-points tensor x broadcast against y: shape differs "
            "from torch's"
        ),
        program=_p(
            {
                "seed": 8002307,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2],
                        "grad": True,
                        "view": None,
                        "values": {"data": [3.0398350235011526, 4.055993103526505]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "special", "seed": 512147654},
                    },
                ],
                "steps": [
                    {
                        "op": "trapezoid",
                        "variant": "trapz",
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "trapezoid-broadcast-x-raise",
        "trapezoid",
        "raises_only_numbagrad",
        (),
        note="trapezoid with x of another shape than y raises where torch broadcasts",
        program=_p(
            {
                "seed": 5000371,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                0.0037262151017785072,
                                -0.20578858256340027,
                                -0.2189086228609085,
                                -0.012274576351046562,
                                -0.2051222175359726,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [3, 4],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.850919485092163,
                                -1.7864599227905273,
                                -0.16608268022537231,
                                -0.1084689274430275,
                                -1.9016492366790771,
                                -1.3043522834777832,
                                0.1780412644147873,
                                0.4571654796600342,
                                -0.5767406821250916,
                                1.20423424243927,
                                1.258769154548645,
                                1.437268853187561,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "trapezoid",
                        "variant": "trapz",
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "layer-norm-signed-zero",
        "nn.functional.layer_norm",
        "signed_zero",
        (),
        note="layer_norm of constant rows gives -0.0 where torch gives +0.0",
        program=_p(
            {
                "seed": 8000934,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [5],
                        "grad": True,
                        "view": ["expand", [0]],
                        "values": {"kind": "normal", "seed": 512059777},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 512059778},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.layer_norm",
                        "variant": None,
                        "args": [{"ref": "x1"}, {"tuple": [5]}, {"ref": "x2"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "solve-triangular-grad-nan",
        "linalg.solve_triangular",
        "grad_nan_pattern",
        (),
        note="solve_triangular's gradient with a singular triangle: nan where torch has values",
        program=_p(
            {
                "seed": 6000885,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 2],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                1.8021546339249286,
                                0.0,
                                0.25921245515696917,
                                1.2328778511005245,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 2],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -0.29655510963609455,
                                -0.28475562789846887,
                                1.4297319045974084,
                                1.7111227663909836,
                                0.3081755321055937,
                                -1.0272808071911097,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "linalg.solve_triangular",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"upper": False, "left": False},
                    }
                ],
                "cotangent": {
                    "data": [
                        nan,
                        nan,
                        0.47971695148996585,
                        -0.08714821886838815,
                        0.006336093854756166,
                        nan,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "median-gradgrad-nan",
        "median",
        "gradgrad_nan_pattern",
        (),
        note="second order through median: 0 where torch has nan",
        program=_p(
            {
                "seed": 6000162,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0, 1],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [{"op": "median", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}],
                "cotangent": {"data": [0.6796029119814783]},
            }
        ),
    ),
    OpenBug(
        "nanmedian-gradgrad-nan",
        "nanmedian",
        "gradgrad_nan_pattern",
        (),
        note="second order through nanmedian: 0 where torch has nan",
        program=_p(
            {
                "seed": 6000896,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0, 3, 4, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "positive", "seed": 384057344},
                    }
                ],
                "steps": [
                    {"op": "nanmedian", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "norm-gradgrad-nan",
        "norm",
        "gradgrad_nan_pattern",
        (),
        note="second order of norm at a zero vector: 0 where torch has nan",
        program=_p(
            {
                "seed": 6001398,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 1, 1, 1, 4],
                        "grad": True,
                        "view": None,
                        "values": {"data": [nan, 0.0, 0.0, 0.0]},
                    }
                ],
                "steps": [
                    {
                        "op": "norm",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {"dim": 0},
                    }
                ],
                "cotangent": {
                    "data": [
                        -0.9788180704251015,
                        0.22712293142208895,
                        0.11774699525227175,
                        -1.1451086408574291,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "cholesky-grad-nonfinite",
        "linalg.cholesky",
        "grad_nan_pattern",
        (),
        note="linalg.cholesky's gradient with a NaN or zero pivot: nan where torch has 0",
        program=_p(
            {
                "seed": 1000758,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 3, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                3.536831855773926,
                                1.8768433332443237,
                                -0.2214328497648239,
                                1.8768433332443237,
                                5.064438819885254,
                                -1.858933448791504,
                                -0.2214328497648239,
                                -1.858933448791504,
                                4.182698726654053,
                                4.13751745223999,
                                -1.521325945854187,
                                -3.003146171569824,
                                -1.521325945854187,
                                3.173405885696411,
                                1.3306070566177368,
                                -3.003146171569824,
                                1.3306070566177368,
                                5.308809280395508,
                            ]
                        },
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.cholesky",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        nan,
                        0.0,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "bilinear-nonfinite",
        "nn.functional.bilinear",
        "nan_pattern",
        (),
        note=(
            "bilinear with infinite operands: nan where torch has -inf (another summation order)"
        ),
        program=_p(
            {
                "seed": 1000900,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [5, 2],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                -0.3131921058382998,
                                0.37593480613076613,
                                -1.878999552359499,
                                1.994019167116463,
                                1.363647918864237,
                                0.08144130855530252,
                                -1.758485658902627,
                                -0.9830623528305766,
                                -1.9620395668291741,
                                -1.991705695863145,
                            ]
                        },
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [5, 3],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "special", "seed": 64057602},
                    },
                    {
                        "name": "x3",
                        "dtype": "float64",
                        "shape": [4, 2, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.1416669889797633,
                                1.019573776403425,
                                -0.22514952779176012,
                                1.2705337568186525,
                                -1.854335865142212,
                                1.721649011024656,
                                1.4229570769729882,
                                1.5471893007082378,
                                -1.6633029314831687,
                                -1.759336501997228,
                                -0.8932620193054635,
                                0.35574640366118704,
                                -1.2193337362742298,
                                1.1501238849406241,
                                -1.5331346668915975,
                                0.470248680496538,
                                1.9435896125993808,
                                -0.89372329471888,
                                -0.539290525093747,
                                -1.0213089891077,
                                -0.67391977230159,
                                -0.06563861038511387,
                                -1.5142547382421205,
                                -1.614501255030825,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.bilinear",
                        "variant": None,
                        "args": [{"ref": "x1"}, {"ref": "x2"}, {"ref": "x3"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "renorm-grad-nan",
        "renorm",
        "grad_nan_pattern",
        (),
        note="renorm's gradient at a zero-norm or non-finite slice: nan where torch has values",
        program=_p(
            {
                "seed": 43,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 5, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 2752},
                    }
                ],
                "steps": [
                    {
                        "op": "renorm",
                        "variant": "method",
                        "args": [{"ref": "x0"}, 2, 0, 1.5],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "cummin-dim-check",
        "cummin",
        "raises_only_numbagrad",
        (),
        note="cummin of a 0-d tensor with dim 1 raises only in numbagrad",
        program=_p(
            {
                "seed": 8186,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [0],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {"op": "cummin", "variant": "method", "args": [{"ref": "x0"}, 1], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "cumulative-trapezoid-x-check",
        "cumulative_trapezoid",
        "raises_only_torch",
        (),
        note=(
            "cumulative_trapezoid with an x of another length than y along dim computes "
            "(torch raises)"
        ),
        program=_p(
            {
                "seed": 8933,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 3, 0],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [4],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                -1.5247104765352644,
                                -1.0062803526813546,
                                1.1389178502098822,
                                1.5282819141336903,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "cumulative_trapezoid",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "matrix-norm-grad-nan",
        "linalg.matrix_norm",
        "grad_nan_pattern",
        (),
        note=("matrix_norm's gradient at a zero or non-finite matrix: a value where torch has nan"),
        program=_p(
            {
                "seed": 3770,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 2],
                        "grad": True,
                        "view": ["T", 0, 1],
                        "values": {"kind": "special", "seed": 241283},
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.matrix_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"ord": "nuc"},
                    }
                ],
                "cotangent": {"data": [0.4968534403846179]},
            }
        ),
    ),
    OpenBug(
        "nansum-gradgrad-nan",
        "nansum",
        "gradgrad_nan_pattern",
        (),
        note="second order through nansum: a value where torch has nan",
        program=_p(
            {
                "seed": 1701,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 3],
                        "grad": False,
                        "view": ["expand", [0]],
                        "values": {"kind": "special", "seed": 108864},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 108865},
                    },
                ],
                "steps": [
                    {
                        "op": "kthvalue",
                        "variant": None,
                        "args": [{"ref": "x0"}, 1, 0],
                        "kwargs": {"keepdim": True},
                    },
                    {
                        "op": "log2",
                        "variant": "method",
                        "args": [{"ref": "s0", "i": 0}],
                        "kwargs": {},
                    },
                    {
                        "op": "div",
                        "variant": "operator",
                        "args": [{"ref": "s1"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                    {"op": "nansum", "variant": None, "args": [{"ref": "s2"}, 1], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "huber-gradgrad-nan",
        "nn.functional.huber_loss",
        "gradgrad_nan_pattern",
        (),
        note="second order of huber_loss with non-finite operands: a value where torch has nan",
        program=_p(
            {
                "seed": 6805,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "normal", "seed": 435520},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [-0.026379496847405814]},
                    },
                ],
                "steps": [
                    {"op": "log2", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}},
                    {"op": "acos", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                    {
                        "op": "nn.functional.huber_loss",
                        "variant": None,
                        "args": [{"ref": "s1"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "mean", "delta": 0.8},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "kl-div-grad-nan",
        "nn.functional.kl_div",
        "grad_nan_pattern",
        (),
        note="kl_div's gradient (target) at a non-positive target: a value where torch has nan",
        program=_p(
            {
                "seed": 142,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.6320272336200117,
                                0.7726546286780076,
                                0.6928829207401401,
                                -0.7253016064519566,
                                -0.22855591819448584,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [5],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "special", "seed": 9091},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.kl_div",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "sum"},
                    }
                ],
                "cotangent": {"data": [-0.3114454063461359]},
            }
        ),
    ),
    OpenBug(
        "layer-norm-mixed-dtype",
        "nn.functional.layer_norm",
        "raises_only_torch",
        (),
        note=(
            "layer_norm with a float64 weight on a float32 input promotes (torch: 'mixed "
            "dtype (CPU)')"
        ),
        program=_p(
            {
                "seed": 9350,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [3, 4],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                -0.0,
                                -0.3333333432674408,
                                -0.3333333432674408,
                                -0.3333333432674408,
                                -0.0,
                                -0.0,
                                -0.0,
                                -0.0,
                                -0.0,
                                -0.3333333432674408,
                                -0.6666666865348816,
                                -0.6666666865348816,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": False,
                        "view": ["T", 0, 1],
                        "values": {"kind": "normal", "seed": 598403},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": False,
                        "view": ["T", 1, 0],
                        "values": {
                            "data": [
                                1.7999712636075937,
                                -1.6609488211364156,
                                -0.6548467193194059,
                                1.887141119062722,
                                -1.259292641644436,
                                -1.3243428381635445,
                                -0.7598091994084513,
                                1.2581363761163038,
                                1.5891408750065317,
                                0.0021598960424715763,
                                -0.32943350865477417,
                                -1.8821882209864977,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.layer_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"tuple": [3, 4]}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {"eps": 0.001},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "selu-grad-nan",
        "nn.functional.selu",
        "grad_nan_pattern",
        (),
        note="selu's gradient with non-finite values: a value where torch has nan",
        program=_p(
            {
                "seed": 5480,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 33, 64],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 350720},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.selu",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "silu-grad-nonfinite",
        "nn.functional.silu",
        "grad_nan_pattern",
        (),
        note="silu's gradient at -inf: nan where torch has -inf",
        program=_p(
            {
                "seed": 1123,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 2, 1, 2],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 71872},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.silu",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [-inf, -1.6045964565746036, 0.17789164363170173, -2.6870644114292728]
                },
            }
        ),
    ),
    OpenBug(
        "setitem-grad-shape",
        "setitem",
        "grad_shape",
        (),
        note=(
            "setitem of a 0-d value through a broadcast: the value's gradient has shape "
            "(1,) (torch: ())"
        ),
        program=_p(
            {
                "seed": 9224,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [1.8476781845092773]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 590340},
                    },
                ],
                "steps": [
                    {
                        "op": "setitem",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, {"tuple": [None, {"ellipsis": 1}]}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {"data": [-0.4527299702167511]},
            }
        ),
    ),
    OpenBug(
        "unique-empty-raises",
        "unique",
        "raises_only_numbagrad",
        (),
        note=(
            "unique(dim=...) of an empty tensor raises a NumPy ValueError (torch: an empty result)"
        ),
        program=_p(
            {
                "seed": 7385,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 2, 2, 0],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 472640},
                    }
                ],
                "steps": [
                    {
                        "op": "unique",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"return_inverse": True, "dim": 3},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "unique-empty-dim",
        "unique",
        "raises_only_torch",
        (),
        note=(
            "unique with dim over a tensor with a 0-sized other dim computes (torch: RuntimeError)"
        ),
        program=_p(
            {
                "seed": 5019,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [0, 3],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {
                        "op": "unique",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"return_inverse": True, "dim": -1},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "matmul-grad-nan",
        "matmul",
        "grad_nan_pattern",
        (),
        note="a gradient through matmul with non-finite entries: nan where torch has 0",
        program=_p(
            {
                "seed": 14946,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [2, 4],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.4044040427524282,
                                1.97536680076146,
                                0.3623767791380388,
                                1.0886244324443872,
                                1.4030687938898332,
                                -0.28236789058536393,
                                1.101224841469834,
                                1.6791277088184855,
                            ]
                        },
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [2],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "special", "seed": 956546},
                    },
                ],
                "steps": [
                    {"op": "linalg.qr", "variant": None, "args": [{"ref": "x1"}], "kwargs": {}},
                    {
                        "op": "special.psi",
                        "variant": None,
                        "args": [{"ref": "s0", "i": 0}],
                        "kwargs": {},
                    },
                    {
                        "op": "matmul",
                        "variant": None,
                        "args": [{"ref": "s1"}, {"ref": "x2"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "hardtanh-gradgrad-nan",
        "nn.functional.hardtanh",
        "gradgrad_nan_pattern",
        (),
        note="second order through hardtanh with non-finite values: nan where torch has 0",
        program=_p(
            {
                "seed": 11100,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5, 5, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 710400},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.silu",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    },
                    {
                        "op": "nn.functional.hardtanh",
                        "variant": None,
                        "args": [{"ref": "s0"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "relu6-gradgrad-nan",
        "nn.functional.relu6",
        "gradgrad_nan_pattern",
        (),
        note="second order through relu6 with non-finite values: nan where torch has 0",
        program=_p(
            {
                "seed": 20740,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [2, 3],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                1.8033051186147522,
                                -0.9937607485088535,
                                -0.16894406139293583,
                                1.2432167328010943,
                                -1.860994450356158,
                                1.9193092052757477,
                            ]
                        },
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [1, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1327362},
                    },
                    {
                        "name": "x3",
                        "dtype": "bool",
                        "shape": [3, 4],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "bool", "seed": 1327363},
                    },
                ],
                "steps": [
                    {
                        "op": "block_diag",
                        "variant": None,
                        "args": [{"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {},
                    },
                    {
                        "op": "where",
                        "variant": "method",
                        "args": [{"ref": "x3"}, {"ref": "s0"}, -1.0],
                        "kwargs": {},
                    },
                    {
                        "op": "special.erfinv",
                        "variant": "method",
                        "args": [{"ref": "s1"}],
                        "kwargs": {},
                    },
                    {
                        "op": "flip",
                        "variant": None,
                        "args": [{"ref": "s2"}, {"tuple": [1, 0]}],
                        "kwargs": {},
                    },
                    {
                        "op": "nn.functional.relu6",
                        "variant": None,
                        "args": [{"ref": "s3"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "layer-norm-float32",
        "nn.functional.layer_norm",
        "value",
        (),
        note=(
            "float32 layer_norm is less accurate than torch's (which accumulates in float64 on CPU)"
        ),
        program=_p(
            {
                "seed": 13560,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 3, 4],
                        "grad": True,
                        "view": ["expand", [1, 2]],
                        "values": {"kind": "normal", "seed": 867845},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [3, 4],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                0.43733781576156616,
                                -0.9452024102210999,
                                1.4672563076019287,
                                -1.2823410034179688,
                                -0.7801815867424011,
                                -1.8604927062988281,
                                -1.707128643989563,
                                1.2484067678451538,
                                -1.7044599056243896,
                                1.1149793863296509,
                                -1.9246469736099243,
                                1.43346107006073,
                            ]
                        },
                    },
                    {
                        "name": "x2",
                        "dtype": "float32",
                        "shape": [3, 4],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "normal", "seed": 867847},
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.layer_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"tuple": [3, 4]}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {"eps": 0.001},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "mish-grad-nonfinite",
        "nn.functional.mish",
        "grad_nan_pattern",
        (),
        note="mish's gradient at +-inf: nan where torch has inf/-inf",
        program=_p(
            {
                "seed": 33245,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 2127680},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.mish",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.17973245680332184,
                        inf,
                        -0.28492704033851624,
                        nan,
                        nan,
                        nan,
                        nan,
                        nan,
                        0.061655957251787186,
                        -0.2963290810585022,
                        0.36032864451408386,
                        0.036773961037397385,
                        inf,
                        -0.0071461135521531105,
                        nan,
                        nan,
                        -0.27214673161506653,
                        -inf,
                        -0.9271161556243896,
                        nan,
                        nan,
                        nan,
                        inf,
                        nan,
                        nan,
                        nan,
                        nan,
                        -0.1658237725496292,
                        -0.5076761841773987,
                        0.9550448060035706,
                        nan,
                        nan,
                        0.6053061485290527,
                        -0.14619913697242737,
                        nan,
                        0.08226624131202698,
                        0.6553602814674377,
                        0.2690969407558441,
                        -0.05084840580821037,
                        nan,
                        nan,
                        0.11952219903469086,
                        nan,
                        -0.24358104169368744,
                        -inf,
                        nan,
                        nan,
                        nan,
                        nan,
                        -0.10578855872154236,
                        -0.6710538268089294,
                        nan,
                        -0.38743478059768677,
                        -0.08487096428871155,
                        -0.061190586537122726,
                        0.1992049664258957,
                        nan,
                        0.006294415798038244,
                        nan,
                        0.248886376619339,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "normalize-grad-nan",
        "nn.functional.normalize",
        "grad_nan_pattern",
        (),
        note="normalize's gradient at a tiny or non-finite norm: nan where torch has a value",
        program=_p(
            {
                "seed": 17916,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 5, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 1146624},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.normalize",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"p": 3.0, "dim": -1},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "matrix-norm-empty",
        "linalg.matrix_norm",
        "raises_only_numbagrad",
        (),
        note="matrix_norm (ord inf/-inf/1/-1) of an empty matrix raises where torch returns 0",
        program=_p(
            {
                "seed": 24618,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 2, 0],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.matrix_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"ord": 1, "dim": {"tuple": [0, 2]}, "keepdim": True},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "norm-grad-nan",
        "linalg.norm",
        "grad_nan_pattern",
        (),
        note="linalg.norm's gradient at a zero or non-finite vector: nan where torch has -0.0",
        program=_p(
            {
                "seed": 26014,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 1664896},
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.norm",
                        "variant": None,
                        "args": [{"ref": "x0"}, 3],
                        "kwargs": {"dim": -1},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "norm-gradgrad",
        "linalg.norm",
        "gradgrad_value",
        (),
        note="second order of linalg.norm next to 0 differs from torch's",
        program=_p(
            {
                "seed": 26749,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 1, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1711936},
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.norm",
                        "variant": None,
                        "args": [{"ref": "x0"}, 3],
                        "kwargs": {"dim": -2},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "vector-norm-grad-nan",
        "linalg.vector_norm",
        "grad_nan_pattern",
        (),
        note="vector_norm's gradient at a zero or non-finite vector: nan where torch has -0.0",
        program=_p(
            {
                "seed": 29772,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {"data": [nan, nan, 0.4227842092514038, nan, nan]},
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.vector_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"ord": inf},
                    }
                ],
                "cotangent": {"data": [-0.7718726992607117]},
            }
        ),
    ),
    OpenBug(
        "elu-gradgrad-nan",
        "nn.functional.elu",
        "gradgrad_nan_pattern",
        (),
        note="second order of elu with non-finite values: 0 where torch has nan",
        program=_p(
            {
                "seed": 20142,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [64, 65],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1289088},
                    }
                ],
                "steps": [
                    {"op": "t", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
                    {
                        "op": "nn.functional.elu",
                        "variant": None,
                        "args": [{"ref": "s0"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "smooth-l1-gradgrad-nan",
        "nn.functional.smooth_l1_loss",
        "gradgrad_nan_pattern",
        (),
        note="second order of smooth_l1_loss with non-finite operands: 0 where torch has nan",
        program=_p(
            {
                "seed": 29382,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5, 1, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 1880448},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.87317554965687,
                                0.2721237170913664,
                                1.8195572884720894,
                                -1.5593300757794366,
                                -0.8415132166475119,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.smooth_l1_loss",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {"reduction": "sum", "beta": 0.5},
                    }
                ],
                "cotangent": {"data": [nan]},
            }
        ),
    ),
    OpenBug(
        "norm-overflow",
        "norm",
        "value",
        (),
        note="norm of values near the float64 limit overflows to inf (torch scales: 1.117e308)",
        program=_p(
            {
                "seed": 29066,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"data": [1.1169973830808557e308]},
                    }
                ],
                "steps": [
                    {"op": "norm", "variant": None, "args": [{"ref": "x0"}], "kwargs": {"p": 3}}
                ],
            }
        ),
    ),
    OpenBug(
        "special-logsumexp-grad-nan",
        "special.logsumexp",
        "grad_nan_pattern",
        (),
        note="special.logsumexp's gradient over a slice of -inf: nan where torch has 0",
        program=_p(
            {
                "seed": 20460,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [70, 60, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1309440},
                    }
                ],
                "steps": [
                    {
                        "op": "special.logsumexp",
                        "variant": None,
                        "args": [{"ref": "x0"}, 1],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "tensordot-nonfinite",
        "tensordot",
        "nan_pattern",
        (),
        note=(
            "tensordot with infinite entries: nan where torch has -inf (another summation order)"
        ),
        program=_p(
            {
                "seed": 28223,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 5, 3, 1],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                0.2462504658686969,
                                nan,
                                16.161879141032696,
                                1.3506144963780278,
                                31.122297429026794,
                                2.115875026795754,
                                inf,
                                0.7387104767355023,
                                4.577807098246385e114,
                                0.06565105578031444,
                                0.0387873976210614,
                                3.1914575748246506e-09,
                                0.03222284064743674,
                                0.5768038859888965,
                                2951.3575788670587,
                                nan,
                                nan,
                                nan,
                                0.2057847278064559,
                                inf,
                                nan,
                                0.024984901010902446,
                                1.1141383663085784,
                                0.04157643751836602,
                                inf,
                                0.024984901010902446,
                                0.09569098082015967,
                                0.611411692733462,
                                nan,
                                inf,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 2],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 1806273},
                    },
                ],
                "steps": [
                    {
                        "op": "tensordot",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, 1],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "trapezoid-shape-check",
        "trapezoid",
        "raises_only_torch",
        (),
        note="trapezoid with x and y of non-broadcastable shapes computes where torch raises",
        program=_p(
            {
                "seed": 25785,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "normal", "seed": 1650240},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                -1.8509194444187549,
                                -1.7864599554731893,
                                -0.16608268115485458,
                                -0.10846892820374388,
                                -1.9016492481212057,
                                -1.3043522791242594,
                                0.17804126087497352,
                                0.45716548666765355,
                                -0.5767406824203261,
                                1.2042342034496625,
                                1.2587691337468563,
                                1.4372688149924056,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "trapezoid",
                        "variant": "trapz",
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "prod-gradgrad-nonfinite",
        "prod",
        "gradgrad_nan_pattern",
        (),
        note="second order of prod with an infinite entry: nan where torch has inf",
        program=_p(
            {
                "seed": 32893,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [200001],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 2105152},
                    }
                ],
                "steps": [
                    {
                        "op": "prod",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {"dim": 0, "keepdim": True},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "layer-norm-grad-nonfinite",
        "nn.functional.layer_norm",
        "grad_nan_pattern",
        (),
        note="layer_norm's gradient with infinite entries: nan where torch has inf",
        program=_p(
            {
                "seed": 33075,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 3, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 2116802},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": ["T", 1, 0],
                        "values": {"kind": "special", "seed": 2116803},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {
                            "data": [
                                1.7999712636075937,
                                -1.6609488211364156,
                                -0.6548467193194059,
                                1.887141119062722,
                                -1.259292641644436,
                                -1.3243428381635445,
                                -0.7598091994084513,
                                1.2581363761163038,
                                1.5891408750065317,
                                0.0021598960424715763,
                                -0.32943350865477417,
                                -1.8821882209864977,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.layer_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"tuple": [3, 4]}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {"eps": 0.001},
                    }
                ],
                "cotangent": {
                    "data": [
                        1.2605128684145281,
                        0.1663135472054123,
                        -1.064962759771005,
                        -1.3880625448687898,
                        0.9693557152540715,
                        1.2490942663094593,
                        -1.488391467530089,
                        1.5004784532232327,
                        1.8042772809760803,
                        0.8130900436176041,
                        0.2952314257445928,
                        -0.6817893237492564,
                        -0.9561861028725005,
                        -0.730792280290609,
                        -1.2360798407974594,
                        0.45308595159949416,
                        0.008859024162434868,
                        1.8295532963064542,
                        -0.35935548581489324,
                        0.5754213171013782,
                        -0.187384123040515,
                        0.6737082809783747,
                        -0.907845948986163,
                        0.10476908339726912,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "cumprod-gradgrad-value",
        "cumprod",
        "gradgrad_value",
        (),
        note="second order of cumprod with zeros differs from torch's",
        program=_p(
            {
                "seed": 33768,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "ints", "seed": 2161152},
                    }
                ],
                "steps": [
                    {"op": "special.sinc", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
                    {
                        "op": "cumprod",
                        "variant": "method",
                        "args": [{"ref": "s0"}, -1],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "logdet-grad",
        "logdet",
        "grad_value",
        (),
        note=(
            "logdet's gradient at a matrix with a negative determinant (nan result) differs"
            " from torch's"
        ),
        program=_p(
            {
                "seed": 36289,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                0.18397099128777145,
                                0.7424536266725292,
                                0.6441407350924202,
                                0.9594288443575854,
                                0.006809831863770932,
                                0.28186861975866573,
                                0.21366086908758675,
                                0.669862850463284,
                                0.7110786135090417,
                            ]
                        },
                    }
                ],
                "steps": [{"op": "logdet", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}],
                "cotangent": {"data": [-0.6949708353167255]},
            }
        ),
    ),
    OpenBug(
        "pad-dims-check",
        "nn.functional.pad",
        "raises_only_torch",
        (),
        note=(
            "pad in reflect/replicate mode of an input of the wrong rank computes where "
            "torch raises"
        ),
        program=_p(
            {
                "seed": 38456,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [0, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 2461184},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.pad",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"tuple": [2, 1]}],
                        "kwargs": {"mode": "reflect"},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "linalg-norm-empty",
        "linalg.norm",
        "raises_only_numbagrad",
        (),
        note="linalg.norm (matrix ord) of an empty matrix raises where torch returns 0",
        program=_p(
            {
                "seed": 38880,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 0],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {"op": "linalg.norm", "variant": None, "args": [{"ref": "x0"}, 1], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "cumprod-grad-nan",
        "cumprod",
        "grad_nan_pattern",
        (),
        note=(
            "cumprod's float32 gradient with zeros and tiny entries: nan where torch has a value"
        ),
        program=_p(
            {
                "seed": 39953,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4100],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 2556992},
                    }
                ],
                "steps": [
                    {"op": "special.i0e", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
                    {"op": "cumprod", "variant": None, "args": [{"ref": "s0"}, -1], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "sigmoid-grad-nonfinite",
        "sigmoid",
        "grad_nan_pattern",
        ("nonfinite",),
        note=("sigmoid backward with an infinite gradient: -inf where torch has nan"),
        program=_p(
            {
                "seed": 1000029,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5, 5, 5],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "special", "seed": 64001856},
                    }
                ],
                "steps": [
                    {"op": "sigmoid", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {
                    "data": [
                        -42.413719177246094,
                        16.314889907836914,
                        -inf,
                        3.1175358295440674,
                        nan,
                        1187.29638671875,
                        -0.29696616530418396,
                        -7.008823871612549,
                        0.18425984680652618,
                        -9.19942855834961,
                        -2.2281103134155273,
                        28.416635513305664,
                        0.05829082429409027,
                        0.23528651893138885,
                        -2.7755587100982666,
                        15.172805786132812,
                        -1.1179566383361816,
                        -289.16119384765625,
                        2.6009628772735596,
                        -4.890817165374756,
                        0.9333032965660095,
                        1.7690006494522095,
                        4.593859672546387,
                        -631.70361328125,
                        -50.11455535888672,
                        2.910283088684082,
                        -5.622671127319336,
                        -1.7101744413375854,
                        9.808138847351074,
                        12.57913875579834,
                        -32.575374603271484,
                        0.11275714635848999,
                        40.118858337402344,
                        -5.153079509735107,
                        -14.53612232208252,
                        -4.789742946624756,
                        38.633243560791016,
                        -0.060614436864852905,
                        205.42779541015625,
                        3.8404653072357178,
                        -0.01810028776526451,
                        1195.40478515625,
                        inf,
                        -1.4079291820526123,
                        62.522010803222656,
                        -29.802406311035156,
                        -1.1471861600875854,
                        2.6118996143341064,
                        -2.169982433319092,
                        44.16775894165039,
                        244.59263610839844,
                        1.075345516204834,
                        2.6903586387634277,
                        1.871756672859192,
                        -1.104521632194519,
                        17.92675018310547,
                        -3.4686291217803955,
                        -0.4205237925052643,
                        0.620891273021698,
                        -303.6448974609375,
                        -16.065223693847656,
                        -527.34375,
                        5.432419776916504,
                        0.004290006123483181,
                        -2063.082275390625,
                        -21.242048263549805,
                        -2.7552073001861572,
                        -inf,
                        41.62982177734375,
                        22.261363983154297,
                        4.302774906158447,
                        -5.001302242279053,
                        -0.16109107434749603,
                        -0.7688179016113281,
                        -1.9476103782653809,
                        -12.193729400634766,
                        -2.484914779663086,
                        938.716064453125,
                        262.2960205078125,
                        -30.91861343383789,
                        8.483528137207031,
                        nan,
                        177.40843200683594,
                        11.225581169128418,
                        3.2280426025390625,
                        nan,
                        0.13033518195152283,
                        -30.873863220214844,
                        7.361781597137451,
                        3.443023920059204,
                        107.92733764648438,
                        9.153980255126953,
                        -96.3787841796875,
                        -9.317403793334961,
                        -106.29688262939453,
                        54.51377487182617,
                        5.874668121337891,
                        nan,
                        -0.4421647787094116,
                        0.8638334274291992,
                        -3.665468454360962,
                        19.807514190673828,
                        -3.2823803424835205,
                        -5.330366611480713,
                        52.57866668701172,
                        402.5682373046875,
                        0.0985066145658493,
                        nan,
                        -2.460066795349121,
                        -3.4240758419036865,
                        -43.94296646118164,
                        43.65534973144531,
                        -4.326776504516602,
                        -28.655414581298828,
                        -18.648681640625,
                        20.688034057617188,
                        0.43724995851516724,
                        -1.5139986276626587,
                        -1.261275053024292,
                        -0.34270381927490234,
                        32.17256546020508,
                        12.295427322387695,
                        695.0230712890625,
                        15.815957069396973,
                        4.784117221832275,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "logit-eps-gradgrad",
        "special.logit",
        "gradgrad_nan_pattern",
        (),
        note="second order of logit at and outside its domain differs from torch's nan pattern",
        program=_p(
            {
                "seed": 5000272,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 3, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 320017408},
                    }
                ],
                "steps": [
                    {
                        "op": "special.logit",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {"eps": 0.2},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "bessel-j1-signed-zero",
        "special.bessel_j1",
        "signed_zero",
        (),
        note="bessel_j1(-0.0) is +0.0 (torch: -0.0; j1 is odd)",
        program=_p(
            {
                "seed": 7001050,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2, 2, 3],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "ints", "seed": 448067200},
                    }
                ],
                "steps": [
                    {
                        "op": "special.bessel_j1",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "polygamma-poles",
        "special.polygamma",
        "value",
        (),
        note="polygamma next to a pole: inf where torch gives a large finite value",
        program=_p(
            {
                "seed": 7002010,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 448128640},
                    }
                ],
                "steps": [
                    {
                        "op": "special.polygamma",
                        "variant": None,
                        "args": [1, {"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "psi-poles-grad",
        "special.psi",
        "grad_value",
        (),
        note=(
            "digamma's gradient (trigamma) next to a pole: inf where torch gives a large "
            "finite value"
        ),
        program=_p(
            {
                "seed": 8004814,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 512308096},
                    }
                ],
                "steps": [
                    {"op": "special.psi", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "digamma-poles-grad",
        "special.digamma",
        "grad_value",
        (),
        note="as psi-poles-grad, for digamma",
        program=_p(
            {
                "seed": 8002289,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 2, 2, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 512146496},
                    }
                ],
                "steps": [
                    {
                        "op": "special.digamma",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "multigammaln-poles-gradgrad",
        "special.multigammaln",
        "gradgrad_value",
        (),
        note="second order of multigammaln next to a pole: inf vs torch's large finite value",
        program=_p(
            {
                "seed": 8003932,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 4, 2],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 512251648},
                    }
                ],
                "steps": [
                    {
                        "op": "special.multigammaln",
                        "variant": None,
                        "args": [{"ref": "x0"}, 3],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "i1-grad-nonfinite",
        "special.i1",
        "grad_nan_pattern",
        (),
        note="i1's gradient at large or non-finite inputs: nan where torch has a value",
        program=_p(
            {
                "seed": 8000297,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                nan,
                                0.422784335098467,
                                0.422784335098467,
                                nan,
                                inf,
                                0.922784335098467,
                                0.922784335098467,
                                0.922784335098467,
                                nan,
                                0.422784335098467,
                                nan,
                                -0.5772156649015328,
                                nan,
                                -0.5772156649015328,
                                nan,
                            ]
                        },
                    }
                ],
                "steps": [
                    {"op": "special.i1", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {
                    "data": [
                        -1.1056797392825157,
                        -0.1853470594830969,
                        -0.15463669742345135,
                        0.6224821914637026,
                        -0.4943477888862932,
                        -0.662121932544224,
                        -1.0799209058098331,
                        -0.7349881493664366,
                        2.1632981893080485,
                        -0.7714716558415952,
                        -0.6348288475545637,
                        1.5088956630005868,
                        -0.07832080379963935,
                        -1.2507131605886879,
                        -0.15084456832622814,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "i1-gradgrad",
        "special.i1",
        "gradgrad_value",
        (),
        note="second order of i1 at large inputs differs from torch's",
        program=_p(
            {
                "seed": 8002853,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 512182592},
                    }
                ],
                "steps": [
                    {"op": "special.i1", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "i1e-grad-nonfinite",
        "special.i1e",
        "grad_nan_pattern",
        (),
        note="i1e's gradient at large or non-finite inputs: nan where torch has a value",
        program=_p(
            {
                "seed": 7001762,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": True,
                        "view": ["expand", [0]],
                        "values": {"kind": "special", "seed": 448112768},
                    }
                ],
                "steps": [
                    {"op": "special.i1e", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "sinc-gradgrad-zero",
        "special.sinc",
        "gradgrad_nan_pattern",
        (),
        note="second order of sinc at 0: 0 where torch has nan (or the reverse)",
        program=_p(
            {
                "seed": 7002009,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 3, 2],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 448128576},
                    }
                ],
                "steps": [
                    {
                        "op": "special.sinc",
                        "variant": "toplevel",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "sigmoid-gradgrad-nonfinite",
        "sigmoid",
        "gradgrad_nan_pattern",
        (),
        note="second order of sigmoid with infinite cotangents: nan where torch has -inf",
        program=_p(
            {
                "seed": 7000243,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 4, 4],
                        "grad": True,
                        "view": ["T", 0, 1],
                        "values": {"kind": "normal", "seed": 448015552},
                    }
                ],
                "steps": [
                    {"op": "sigmoid", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {
                    "data": [
                        4.30766291988723,
                        -0.48569317857970934,
                        3.1996024756421453,
                        -3.014796278830784,
                        0.35514982753834806,
                        -0.12964634189489954,
                        4.522242874230282,
                        0.03734745220833504,
                        -1.1465410278257848,
                        0.05955526291404602,
                        -169.28143226654444,
                        -0.0281295941681654,
                        0.0542938522508568,
                        0.011628520404592065,
                        -2.198559628145885,
                        -0.025600581100873963,
                        0.3017840176516096,
                        -inf,
                        0.2970810199973702,
                        0.23882703614696796,
                        0.3210449961110745,
                        inf,
                        -0.18872888676036212,
                        -0.2524115721606803,
                        -0.34692459346626897,
                        inf,
                        0.0661503227032261,
                        11.105105477520267,
                        0.22692384866334508,
                        -inf,
                        0.27306696603893227,
                        10.491664768089478,
                        nan,
                        nan,
                        -0.018184247776021047,
                        0.3164308769293004,
                        nan,
                        nan,
                        0.02606492601000499,
                        0.013548746483199781,
                        nan,
                        nan,
                        -0.027893194473305637,
                        0.06941889016584316,
                        nan,
                        nan,
                        0.13424600202917658,
                        0.005388949538971761,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "psi-grad-nan",
        "special.psi",
        "grad_nan_pattern",
        (),
        note="psi's gradient at a pole: nan where torch has a large finite value",
        program=_p(
            {
                "seed": 7003652,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 2, 5],
                        "grad": True,
                        "view": ["expand", [0]],
                        "values": {"kind": "ints", "seed": 448233728},
                    }
                ],
                "steps": [
                    {"op": "special.psi", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "gammaln-gradgrad-poles",
        "special.gammaln",
        "gradgrad_value",
        (),
        note="second order of gammaln next to a pole: -inf vs torch's large finite value",
        program=_p(
            {
                "seed": 5000214,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 2],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "ints", "seed": 320013696},
                    }
                ],
                "steps": [
                    {
                        "op": "special.gammaln",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "log10-gradgrad",
        "log10",
        "gradgrad_value",
        (),
        note="second order of log10 at tiny inputs differs from torch's",
        program=_p(
            {
                "seed": 7003006,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 448192384},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [1, 4, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 448192385},
                    },
                ],
                "steps": [
                    {
                        "op": "special.xlogy",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                    {"op": "log10", "variant": "method", "args": [{"ref": "s0"}], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "float-power-gradgrad-nan",
        "float_power",
        "gradgrad_nan_pattern",
        (),
        note="second order of float_power at a zero base: nan where torch has a value",
        program=_p(
            {
                "seed": 1000604,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 64038656},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 64038657},
                    },
                ],
                "steps": [
                    {
                        "op": "view",
                        "variant": "varargs",
                        "args": [{"ref": "x0"}, {"tuple": [-1]}],
                        "kwargs": {},
                    },
                    {
                        "op": "cumprod",
                        "variant": "method",
                        "args": [{"ref": "s0"}, -1],
                        "kwargs": {},
                    },
                    {"op": "diag", "variant": None, "args": [{"ref": "s1"}], "kwargs": {}},
                    {
                        "op": "float_power",
                        "variant": None,
                        "args": [{"ref": "s2"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "digamma-grad-nan",
        "special.digamma",
        "grad_nan_pattern",
        (),
        note=(
            "digamma's gradient (trigamma) at a pole in float32: nan where torch has a "
            "large finite value"
        ),
        program=_p(
            {
                "seed": 1001392,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5],
                        "grad": True,
                        "view": ["expand", [0]],
                        "values": {"kind": "ints", "seed": 64089088},
                    }
                ],
                "steps": [
                    {
                        "op": "special.digamma",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "copysign-gradgrad",
        "copysign",
        "gradgrad_nan_pattern",
        (),
        note="second order of copysign: 0 where torch has nan",
        program=_p(
            {
                "seed": 4449,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 284736},
                    }
                ],
                "steps": [
                    {
                        "op": "copysign",
                        "variant": "method",
                        "args": [{"ref": "x0"}, {"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "multigammaln-gradgrad-nan",
        "special.multigammaln",
        "gradgrad_nan_pattern",
        (),
        note="second order of multigammaln at a pole: nan where torch has -0.0",
        program=_p(
            {
                "seed": 6560,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 3, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 419840},
                    }
                ],
                "steps": [
                    {
                        "op": "special.multigammaln",
                        "variant": None,
                        "args": [{"ref": "x0"}, 1],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.0,
                        -0.21371381156293798,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.21389939600496205,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        -0.1618190916213986,
                        0.11633672168615876,
                        0.0,
                        0.0,
                        0.0,
                        -0.3047320426055309,
                        0.16803275148026545,
                        0.07400074258716906,
                        1.4070313769932232,
                        0.0,
                        0.0,
                        -0.2585950394160134,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "polygamma-grad-poles",
        "special.polygamma",
        "grad_value",
        (),
        note="polygamma's gradient next to a pole: -inf where torch gives a large finite value",
        program=_p(
            {
                "seed": 874,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [4100],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "ints", "seed": 55936},
                    }
                ],
                "steps": [
                    {
                        "op": "special.polygamma",
                        "variant": None,
                        "args": [0, {"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "float-power-grad-nan",
        "float_power",
        "grad_nan_pattern",
        (),
        note=(
            "float_power's gradient at a zero base with a negative exponent: -0.0 where "
            "torch has nan"
        ),
        program=_p(
            {
                "seed": 4464,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 285696},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 285697},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 285698},
                    },
                ],
                "steps": [
                    {
                        "op": "float_power",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                    {
                        "op": "pow",
                        "variant": None,
                        "args": [{"ref": "s0"}, {"ref": "x2"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "pow-grad-inf",
        "pow",
        "grad_nan_pattern",
        (),
        note="pow's gradient at a large base or exponent: -inf where torch has nan",
        program=_p(
            {
                "seed": 484,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [450, 450],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "positive", "seed": 30976},
                    },
                    {
                        "name": "x1",
                        "dtype": "float32",
                        "shape": [3, 3, 450, 450],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 30977},
                    },
                ],
                "steps": [
                    {
                        "op": "pow",
                        "variant": "method",
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "gammaln-gradgrad-nan",
        "special.gammaln",
        "gradgrad_nan_pattern",
        (),
        note="second order of gammaln at a pole: nan where torch has 0",
        program=_p(
            {
                "seed": 2024,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 5, 3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 129536},
                    }
                ],
                "steps": [
                    {
                        "op": "special.gammaln",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        -1.3928000963768683,
                        0.0,
                        0.0,
                        0.0,
                        1.8102855742952833,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.8115201169815576,
                        -1.3764228399745688,
                        0.0,
                        -1.2910916333479945,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.16378857220098098,
                        0.0,
                        -0.25228975964635664,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        1.6576840551979304,
                        0.0,
                        1.1991871656162354,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        -2.0981967905109227,
                        0.6343009414440183,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        -1.1266151030496365,
                        0.0,
                        0.761728470454166,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "multigammaln-grad-poles",
        "special.multigammaln",
        "grad_value",
        (),
        note="multigammaln's gradient next to a pole: -inf where torch has inf",
        program=_p(
            {
                "seed": 2125,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 3, 2],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 136000},
                    }
                ],
                "steps": [
                    {
                        "op": "special.multigammaln",
                        "variant": None,
                        "args": [{"ref": "x0"}, 2],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "i0-gradgrad-nan",
        "special.i0",
        "gradgrad_nan_pattern",
        (),
        note="second order of i0 at large inputs: nan where torch has a value",
        program=_p(
            {
                "seed": 32418,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 5, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 2074752},
                    }
                ],
                "steps": [
                    {
                        "op": "special.i0",
                        "variant": "toplevel",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "sinc-grad",
        "special.sinc",
        "grad_value",
        (),
        note="sinc's gradient next to 0 (cancellation): a large value where torch has -0.0",
        program=_p(
            {
                "seed": 10480,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5, 2],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                1e-30,
                                0.9259633405545298,
                                -0.8900610516638916,
                                -2.4495774130534613,
                                3.0,
                                -2.4243764635242053,
                                -inf,
                                -1.5229396121696803,
                                -1.1212829009781071,
                                -2.1701907890924694,
                            ]
                        },
                    }
                ],
                "steps": [
                    {
                        "op": "special.sinc",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        -0.027577196466913534,
                        1.944964140612601,
                        -0.5501687555027858,
                        -1.6614673818787402,
                        0.3555152892697115,
                        -0.9486751073853544,
                        0.3962798874753361,
                        0.3086442265624952,
                        -2.0628284343050067,
                        -0.7333859569966568,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "i1e-gradgrad",
        "special.i1e",
        "gradgrad_value",
        (),
        note="second order of i1e at large inputs differs from torch's (cancellation)",
        program=_p(
            {
                "seed": 12032,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 1],
                        "grad": True,
                        "view": ["T", 0, 1],
                        "values": {"kind": "special", "seed": 770048},
                    }
                ],
                "steps": [
                    {"op": "special.i1e", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "atan-gradgrad-nan",
        "atan",
        "gradgrad_nan_pattern",
        (),
        note="second order of atan at an infinite input: 0 where torch has nan",
        program=_p(
            {
                "seed": 23696,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1516544},
                    }
                ],
                "steps": [
                    {
                        "op": "std_mean",
                        "variant": None,
                        "args": [{"ref": "x0"}, 0],
                        "kwargs": {"keepdim": True, "correction": 0},
                    },
                    {
                        "op": "atan",
                        "variant": "arctan",
                        "args": [{"ref": "s0", "i": 0}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "psi-gradgrad-nan",
        "special.psi",
        "gradgrad_nan_pattern",
        (),
        note="second order of psi at a pole: nan where torch has 0",
        program=_p(
            {
                "seed": 24706,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2],
                        "grad": True,
                        "view": ["offset"],
                        "values": {"kind": "ints", "seed": 1581184},
                    }
                ],
                "steps": [
                    {
                        "op": "clamp",
                        "variant": "method",
                        "args": [{"ref": "x0"}, -1.0, 3],
                        "kwargs": {},
                    },
                    {"op": "special.psi", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "absolute-gradgrad-nan",
        "absolute",
        "gradgrad_nan_pattern",
        (),
        note="second order through absolute with infinite values: nan where torch has inf",
        program=_p(
            {
                "seed": 32428,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 3, 3, 4],
                        "grad": True,
                        "view": ["T", 0, 3],
                        "values": {"kind": "special", "seed": 2075392},
                    }
                ],
                "steps": [
                    {"op": "log2", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}},
                    {"op": "absolute", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "erfcx-grad-accuracy",
        "special.erfcx",
        "grad_value",
        (),
        note="erfcx's gradient is less accurate than torch's at moderate negative inputs",
        program=_p(
            {
                "seed": 37190,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 2380160},
                    }
                ],
                "steps": [
                    {
                        "op": "special.i0",
                        "variant": "toplevel",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    },
                    {"op": "rpow", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                    {"op": "special.erfcx", "variant": None, "args": [{"ref": "s1"}], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "i1e-gradgrad-nonfinite-2",
        "special.i1e",
        "gradgrad_nan_pattern",
        (),
        note=(
            "second order of i1e with non-finite values: nan where torch has 0 (an earlier "
            "reproducer of this now agrees)"
        ),
        program=_p(
            {
                "seed": 25371,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 1, 4, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1623744},
                    }
                ],
                "steps": [
                    {"op": "special.i1e", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {
                    "data": [
                        -3.3063373875927526,
                        -inf,
                        3.2520435985970804,
                        2.8368940424978835,
                        3.049068521132839,
                        -0.7666523340610408,
                        -5.211510433261246,
                        1.370027777973661,
                        -6.267346557545165,
                        14.157692563419307,
                        10.439665237065313,
                        -0.46668421767230645,
                        -1.4239440471675424,
                        nan,
                        2.7059701585874087,
                        -3.2682700105760416,
                        -2.195062403615635,
                        6.778778076111775,
                        -6.7045585908053695,
                        -9.846537360459491,
                        -2.98102437039296,
                        2.4552936055479635,
                        2.1920766012735147,
                        -5.270939110679322,
                        -7.332740950175408,
                        -1.2008344791694388,
                        nan,
                        nan,
                        -2.216232241096423,
                        -1.2998259619044334,
                        1.8599093132864841,
                        inf,
                        -2.735939350598348,
                        2.409593334557208,
                        0.6162830068316519,
                        23.506605537647882,
                        -3.5685988584377095,
                        -inf,
                        -4.432379993862506,
                        4.487160420184752,
                        6.406197459025901,
                        2.4836795874275204,
                        0.9246956892707071,
                        6.605980478807902,
                        5.361855843453253,
                        -5.5807281611912485,
                        nan,
                        0.03302470523047471,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "logit-grad-neg-zero",
        "special.logit",
        "grad_value",
        (),
        note=(
            "logit's gradient at -0.0: -inf vs torch's +inf (torch itself gives -inf under "
            "create_graph)"
        ),
        program=_p(
            {
                "seed": 1529,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5, 4, 5],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 97856},
                    }
                ],
                "steps": [
                    {
                        "op": "special.logit",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "logit-grad-nan-large",
        "special.logit",
        "grad_nan_pattern",
        (),
        note=(
            "logit's gradient at NaN or out-of-range entries of a large tensor: nan where "
            "torch's vectorised kernel gives 0"
        ),
        program=_p(
            {
                "seed": 4590,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 293760},
                    }
                ],
                "steps": [
                    {
                        "op": "special.logit",
                        "variant": "toplevel",
                        "args": [{"ref": "x0"}],
                        "kwargs": {"eps": 0.2},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "gelu-grad-inf-cotangent",
        "nn.functional.gelu",
        "grad_nan_pattern",
        (),
        note=(
            "gradient of gelu with an infinite cotangent at x = -0.0: nan where torch has "
            "inf (the composite 0.5 x (1 + erf(x / sqrt 2))'s product rule adds "
            "inf * 0.5 and inf * x * pdf(x) = nan; fixed: the Gelu primitive's rule is "
            "PyTorch's gelu_backward g * (cdf + x * pdf))"
        ),
        program=_p(
            {
                "seed": 25992,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 5, 2],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                0.9999779095030014,
                                -0.9999779095030014,
                                -0.9999779095030014,
                                -0.9999779095030014,
                                -0.8427007929497149,
                                -0.0,
                                -0.9999779095030014,
                                -0.9999779095030014,
                                0.8427007929497149,
                                -0.9999779095030014,
                                0.9999779095030014,
                                0.9999779095030014,
                                0.8427007929497149,
                                -0.9999779095030014,
                                -0.9953222650189527,
                                0.9999779095030014,
                                -0.9953222650189527,
                                -0.8427007929497149,
                                -0.9953222650189527,
                                -0.9999779095030014,
                            ]
                        },
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.gelu",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        0.5065504766515756,
                        nan,
                        nan,
                        nan,
                        nan,
                        inf,
                        nan,
                        nan,
                        -0.18305937758737004,
                        nan,
                        -1.4445028797887105,
                        -1.013501965066345,
                        0.287187746272057,
                        nan,
                        nan,
                        0.0646040973528606,
                        nan,
                        nan,
                        nan,
                        nan,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "logsigmoid-gradgrad-underflow",
        "nn.functional.logsigmoid",
        "gradgrad_value",
        (),
        note=(
            "second order of logsigmoid: the chain rule through y = sigmoid(-x) gave "
            "(1 - y) y, 0 below x = -38 where torch's (z - 1) z, z = sigmoid(x), is not, "
            "and nonzero at large x where torch's is 0; fixed: the LogSigmoid primitive's "
            "rules are PyTorch's log_sigmoid_backward and log_sigmoid_double_backward"
        ),
        program=_p(
            {
                "seed": 26555,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [5, 3, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1699520},
                    }
                ],
                "steps": [
                    {
                        "op": "nn.functional.logsigmoid",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        63.119331248088045,
                        0.0,
                        0.0,
                        1.4112800469738416,
                        -0.21257001197192982,
                        0.0,
                        -0.8318318106383047,
                        18.620769128988428,
                        -1287.6456309301016,
                        -23.60316664184046,
                        0.32385591677858067,
                        -1.0320787501269884,
                        0.0,
                        1.5072016533290449,
                        -0.009959040194206173,
                        0.0,
                        -24.771744286646978,
                        -109.045213214797,
                        -0.9481662539720837,
                        -inf,
                        262.6716230839982,
                        -0.0015700870837915101,
                        0.0,
                        0.06505751626581785,
                        -0.02854979178235173,
                        -2.5267024448393642,
                        0.0,
                        0.0,
                        -9.645130710728732e86,
                        -0.0731986307317166,
                        -25.69259071057927,
                        -2.817736186906769,
                        1.2671117686337847,
                        0.1514140802799896,
                        1.264483891304625,
                        -0.006213475988233816,
                        0.0,
                        0.022325952853511855,
                        -0.08236618951820386,
                        -0.0005175920927151738,
                        0.0011738778179367594,
                        0.0,
                        -1.4757749930906677e-08,
                        -7.596498321997156,
                        2.3140269376527764,
                        -0.20725885322073817,
                        2.372885196010633e155,
                        -0.04319849876617546,
                        34.83525512482414,
                        0.0,
                        -2081.86966409701,
                        0.08860933455754444,
                        0.13871213498551724,
                        -0.6215431606311346,
                        25.552493441529574,
                        -6.245915236044635,
                        -1.8893619564372233,
                        0.45828229782492985,
                        -63.04947189123393,
                        -0.01653737114838164,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "pow-gradgrad-nan",
        "pow",
        "gradgrad_nan_pattern",
        ("nan",),
        note=(
            "second order of pow after a setitem, with a negative base: nan where torch "
            "has -0.0 (IndexPut's VJP returned IndexPut(g, 0.0), linear in g, so the "
            "double backward sent 0 * (y * log a) = nan for a < 0 into the cotangent; a "
            "key writing all of x is fill_/copy_ in PyTorch, whose gradient for x is "
            "zeros_like(grad): IndexPut's VJP now returns that)"
        ),
        program=_p(
            {
                "seed": 734,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 1],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {"kind": "normal", "seed": 46976},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [1, 1],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "positive", "seed": 46977},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [3],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 46978},
                    },
                ],
                "steps": [
                    {
                        "op": "pow",
                        "variant": "method",
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    },
                    {"op": "sqrt", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                    {
                        "op": "reshape",
                        "variant": "method_varargs",
                        "args": [{"ref": "s1"}, {"tuple": [3]}],
                        "kwargs": {},
                    },
                    {
                        "op": "setitem",
                        "variant": None,
                        "args": [{"ref": "s2"}, 0.0, {"slice": [None, None, None]}],
                        "kwargs": {},
                    },
                    {
                        "op": "pow",
                        "variant": "method",
                        "args": [{"ref": "x2"}, {"ref": "s3"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "setitem-whole-gradgrad-nan",
        "special.gammaincc",
        "gradgrad_nan_pattern",
        (),
        note=(
            "second order through x[:] = v (a key writing all of x): nan where torch has 0 "
            "(as pow-gradgrad-nan: x's gradient is zeros_like(grad) in PyTorch, not a "
            "function of grad)"
        ),
        program=_p(
            {
                "seed": 21593,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 1381952},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [1, 4099],
                        "grad": False,
                        "view": ["T", 1, 0],
                        "values": {"kind": "special", "seed": 1381953},
                    },
                ],
                "steps": [
                    {
                        "op": "setitem",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}, {"slice": [None, None, None]}],
                        "kwargs": {},
                    },
                    {
                        "op": "special.gammaincc",
                        "variant": None,
                        "args": [1.973677751561274, {"ref": "s0"}],
                        "kwargs": {},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "atanh-gradgrad-rounding",
        "atanh",
        "gradgrad_value",
        (),
        note=(
            "second order of atanh(psi(-x)) next to psi's pole: two terms of 1e30 cancel, "
            "and numbagrad's g * (1 / (1 - x^2)) rounded otherwise than PyTorch's "
            "g / (1 - x^2) (5.6e14 vs 0); atanh's rule is now PyTorch's division"
        ),
        program=_p(
            {
                "seed": 13141,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [70, 60, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "special", "seed": 841024},
                    }
                ],
                "steps": [
                    {"op": "neg", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
                    {"op": "special.psi", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                    {"op": "atanh", "variant": None, "args": [{"ref": "s1"}], "kwargs": {}},
                ],
            }
        ),
    ),
    OpenBug(
        "layer-norm-gradgrad-nonfinite",
        "nn.functional.layer_norm",
        "gradgrad_nan_pattern",
        ("inf",),
        note=(
            "second order of layer_norm with an infinite weight: nan where torch has "
            "-inf (the cotangent's term: the chain rule through dx = a g w + b x + c "
            "adds inf - inf); fixed: the LayerNormBackward primitive's VJP is PyTorch's "
            "layer_norm_double_backward, the weight outside the sums"
        ),
        program=_p(
            {
                "seed": 33075,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [2, 3, 4],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "ints", "seed": 2116802},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": ["T", 1, 0],
                        "values": {"kind": "special", "seed": 2116803},
                    },
                    {
                        "name": "x2",
                        "dtype": "float64",
                        "shape": [3, 4],
                        "grad": True,
                        "view": ["step", 0],
                        "values": {
                            "data": [
                                1.7999712636075937,
                                -1.6609488211364156,
                                -0.6548467193194059,
                                1.887141119062722,
                                -1.259292641644436,
                                -1.3243428381635445,
                                -0.7598091994084513,
                                1.2581363761163038,
                                1.5891408750065317,
                                0.0021598960424715763,
                                -0.32943350865477417,
                                -1.8821882209864977,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "nn.functional.layer_norm",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"tuple": [3, 4]}, {"ref": "x1"}, {"ref": "x2"}],
                        "kwargs": {"eps": 0.001},
                    }
                ],
                "cotangent": {
                    "data": [
                        1.2605128684145281,
                        0.1663135472054123,
                        -1.064962759771005,
                        -1.3880625448687898,
                        0.9693557152540715,
                        1.2490942663094593,
                        -1.488391467530089,
                        1.5004784532232327,
                        1.8042772809760803,
                        0.8130900436176041,
                        0.2952314257445928,
                        -0.6817893237492564,
                        -0.9561861028725005,
                        -0.730792280290609,
                        -1.2360798407974594,
                        0.45308595159949416,
                        0.008859024162434868,
                        1.8295532963064542,
                        -0.35935548581489324,
                        0.5754213171013782,
                        -0.187384123040515,
                        0.6737082809783747,
                        -0.907845948986163,
                        0.10476908339726912,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "einsum-bool-empty-contraction",
        "einsum",
        "raises_only_numbagrad",
        ("bool",),
        note=(
            'einsum of bool operands contracting an index raised "bmm" not implemented for '
            "'Bool' even where the contraction has no elements, which PyTorch computes (its bmm "
            "returns before dispatching on the dtype); einsum now follows PyTorch's pairwise "
            "contraction order and raises only where a non-empty bmm would"
        ),
        program=_p(
            {
                "seed": 5362,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "bool",
                        "shape": [4, 1, 0],
                        "grad": False,
                        "view": None,
                        "values": {"data": []},
                    },
                    {
                        "name": "x1",
                        "dtype": "bool",
                        "shape": [4, 0, 1],
                        "grad": False,
                        "view": None,
                        "values": {"kind": "int", "seed": 343169},
                    },
                ],
                "steps": [
                    {
                        "op": "einsum",
                        "variant": None,
                        "args": ["bij,bjk->bik", {"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "squeeze-zero-dim-range",
        "squeeze",
        "raises_only_torch",
        ("zero_dim",),
        note=(
            "squeeze of a 0-d tensor accepted any dim; PyTorch wraps dims in [-1, 0] and raises "
            "IndexError otherwise"
        ),
        program=_p(
            {
                "seed": 6052,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "int64",
                        "shape": [],
                        "grad": False,
                        "view": None,
                        "values": {"data": [0]},
                    }
                ],
                "steps": [
                    {"op": "squeeze", "variant": None, "args": [{"ref": "x0"}, 2], "kwargs": {}}
                ],
            }
        ),
    ),
    OpenBug(
        "split-size-zero",
        "split",
        "raises_only_numbagrad",
        ("empty",),
        note=(
            "split_size=0 raised for every input; PyTorch accepts it along an empty dim (one "
            "empty piece) and raises 'split_size can only be 0 if dimension size is 0' "
            "otherwise"
        ),
        program=_p(
            {
                "seed": 15444,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [0],
                        "grad": True,
                        "view": None,
                        "values": {"data": []},
                    }
                ],
                "steps": [
                    {
                        "op": "split",
                        "variant": None,
                        "args": [{"ref": "x0"}, 0],
                        "kwargs": {"dim": 0},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "cross-mixed-dtypes",
        "linalg.cross",
        "raises_only_torch",
        ("mixed_dtypes",),
        note=(
            "linalg.cross promoted float32 with float64; PyTorch's kernel raises 'expected "
            "scalar type Float but found Double' (and NotImplementedError for bool)"
        ),
        program=_p(
            {
                "seed": 22798,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [1, 3],
                        "grad": False,
                        "view": None,
                        "values": {"data": [0.15925005078315735, 1.0, 0.2333558052778244]},
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [1, 3],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [-0.4742110171628231, -1.3885415592144428, -0.20944513792010433]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "linalg.cross",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "vector-norm-inf-gradgrad-sgn",
        "linalg.vector_norm",
        "gradgrad_nan_pattern",
        ("inf",),
        note=(
            "second order of the inf-norm after special.entr at a negative input: nan where "
            "torch has a finite value (the norm's backward multiplied by sgn(x), whose zero "
            "derivative met entr's NaN derivative as 0 * NaN; sgn is now a constant of the "
            "rule, as PyTorch's ZeroTensor)"
        ),
        program=_p(
            {
                "seed": 26750,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [4, 1],
                        "grad": True,
                        "view": None,
                        "values": {"kind": "normal", "seed": 1712000},
                    }
                ],
                "steps": [
                    {"op": "ravel", "variant": None, "args": [{"ref": "x0"}], "kwargs": {}},
                    {"op": "special.entr", "variant": None, "args": [{"ref": "s0"}], "kwargs": {}},
                    {
                        "op": "linalg.vector_norm",
                        "variant": None,
                        "args": [{"ref": "s1"}],
                        "kwargs": {"ord": inf},
                    },
                ],
            }
        ),
    ),
    OpenBug(
        "matrix-exp-gradgrad-overscaled",
        "linalg.matrix_exp",
        "gradgrad_value",
        (),
        note=(
            "second order of matrix_exp with large cotangent entries (7e7): 13% off (the block "
            "matrix of the double backward holds the cotangent, and the 2005 scaling rule took "
            "25 squarings, each doubling the error of the small entries); the squarings now "
            "follow Al-Mohy & Higham 2009 (NOTE [matrix_exp scaling])"
        ),
        program=_p(
            {
                "seed": 33860,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float64",
                        "shape": [3, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                -1.3283422027610037,
                                -0.5781145109471706,
                                1.6489742189325853,
                                1.2198692780750848,
                                -0.6034919859265631,
                                0.458729227150382,
                                -0.5230785990515745,
                                -1.8208680961511865,
                                0.22170513208216303,
                            ]
                        },
                    }
                ],
                "steps": [
                    {
                        "op": "linalg.matrix_exp",
                        "variant": None,
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {
                    "data": [
                        635.6064730831357,
                        -8416.154688614819,
                        8473.410569843352,
                        -5136796.5009236215,
                        68017042.35310006,
                        -68479788.39481969,
                        -88.21519370814529,
                        1168.0692410331517,
                        -1176.020119082251,
                    ]
                },
            }
        ),
    ),
    OpenBug(
        "tensordot-mixed-dtypes",
        "tensordot",
        "raises_only_torch",
        ("mixed_dtypes",),
        note=(
            "tensordot promoted mixed dtypes where PyTorch raises 'both inputs should have same "
            "dtype' (and NotImplementedError for bool in a non-empty product)"
        ),
        program=_p(
            {
                "seed": 37732,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [5, 1, 1],
                        "grad": False,
                        "view": None,
                        "values": {
                            "data": [
                                0.1787508726119995,
                                -0.2152692824602127,
                                0.0,
                                -0.2152692824602127,
                                0.1968267261981964,
                            ]
                        },
                    },
                    {
                        "name": "x1",
                        "dtype": "float64",
                        "shape": [3, 4, 2],
                        "grad": False,
                        "view": ["T", 1, 2],
                        "values": {
                            "data": [
                                -0.09515750509407805,
                                -0.3005551065173626,
                                1.1700907162840286,
                                1.0998110792244726,
                                -0.00927552638727791,
                                -1.8042096498389104,
                                1.259270204236643,
                                0.9747961134427712,
                                1.290758757114737,
                                1.4979058276742494,
                                1.4617338353238463,
                                -1.5063038493425003,
                                -1.2841057146133013,
                                -0.687208337047664,
                                -1.0062387643998676,
                                -0.7734474036880679,
                                1.1741797219060244,
                                1.5530713041553788,
                                -0.37230489843286074,
                                -0.8281099341613665,
                                1.1019585660626285,
                                -0.9168095363908284,
                                1.696755718767955,
                                -1.5642636298167125,
                            ]
                        },
                    },
                ],
                "steps": [
                    {
                        "op": "tensordot",
                        "variant": None,
                        "args": [{"ref": "x0"}, {"ref": "x1"}],
                        "kwargs": {},
                    }
                ],
            }
        ),
    ),
    OpenBug(
        "det-grad-nan",
        "det",
        "grad_nan_pattern",
        (),
        note=(
            "det's gradient with an infinite cotangent: nan everywhere where torch has inf/nan "
            "(the rule built diag(g det A) as (g det A) * I, whose off-diagonal inf * 0 is nan; "
            "now a diagonal embedding, as PyTorch's diag_embed)"
        ),
        program=_p(
            {
                "seed": 7002294,
                "grad_mode": "grad",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [3, 3],
                        "grad": True,
                        "view": None,
                        "values": {
                            "data": [
                                1.0145838260650635,
                                1.5506058931350708,
                                1.145166277885437,
                                -0.5466928482055664,
                                1.8947160243988037,
                                1.336955189704895,
                                1.7450823783874512,
                                -1.8896733522415161,
                                4.115630626678467,
                            ]
                        },
                    }
                ],
                "steps": [
                    {"op": "det", "variant": "method", "args": [{"ref": "x0"}], "kwargs": {}}
                ],
                "cotangent": {"data": [-inf]},
            }
        ),
    ),
    OpenBug(
        "sinc-float32-grad-overflow",
        "special.sinc",
        "grad_value",
        (),
        note=(
            "sinc's float32 gradient with a cotangent of 3e37 at x = 100: inf where torch has "
            "3e35 (numbagrad multiplied grad by the numerator before dividing; PyTorch's "
            "sinc_backward is grad * (derivative))"
        ),
        program=_p(
            {
                "seed": 701224,
                "grad_mode": "backward",
                "inputs": [
                    {
                        "name": "x0",
                        "dtype": "float32",
                        "shape": [2],
                        "grad": True,
                        "view": None,
                        "values": {"data": [100.0, 0.3]},
                    }
                ],
                "steps": [
                    {
                        "op": "special.sinc",
                        "variant": "method",
                        "args": [{"ref": "x0"}],
                        "kwargs": {},
                    }
                ],
                "cotangent": {"data": [3.1084113609521623e37, 1.0]},
            }
        ),
    ),
)


def matches(entry, result) -> bool:
    """Does ``entry`` (Deviation or OpenBug) cover mismatch ``result``?"""
    ops = (entry.op,) if isinstance(entry.op, str) else entry.op
    if result.get("op") not in ops or entry.kind != result.get("kind"):
        return False
    if entry.match and not re.search(entry.match, result.get("detail") or ""):
        return False
    features = set(result.get("features", ()))
    for cond in entry.when:
        if cond.startswith("!"):
            if cond[1:] in features:
                return False
        elif cond not in features:
            return False
    return True


def classify(result):
    """('known', id), ('open_bug', id) or ('unexplained', None) for a mismatch."""
    for d in KNOWN_DEVIATIONS:
        if matches(d, result):
            return "known", d.id
    for b in OPEN_BUGS:
        if matches(b, result):
            return "open_bug", b.id
    return "unexplained", None
