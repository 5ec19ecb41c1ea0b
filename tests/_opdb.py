"""Op database for the generic op tests (after PyTorch's ``OpInfo``).

Every op of the core issue has one :class:`OpInfo` entry here: how to call it, a NumPy
reference, a generator of sample inputs that stay inside the op's domain, capability
flags and tolerances.  The generic suites in ``test_ops.py`` iterate :data:`op_db`.

Conventions
-----------
* ``op(m, *args, **kwargs)`` and every variant take the *module* ``m`` first (numbagrad,
  or torch for the differential tests), so that one definition serves both libraries.
* Sample arguments are NumPy arrays (always float64 for floating inputs; the tests cast
  to float32 where needed), Python scalars, strings, ``None``, slices or
  lists/tuples of these.  The tests turn every array into a tensor; floating arrays are
  the differentiable inputs.
* ``ref(*args, **kwargs)`` receives the same structure with arrays left as NumPy arrays
  and returns an array or a tuple of arrays.
* ``dtypes`` names the dtype of each output: ``'same'`` (the floating input dtype),
  ``'bool'`` or ``'int64'``.  A sample may override the op's default.
"""

import math
import zlib

import numpy as np

__all__ = ["OpInfo", "SampleInput", "op_db", "ops_by_name"]


class SampleInput:
    """One call of an op: positional args, keyword args and a short name for messages."""

    __slots__ = ("args", "dtypes", "kwargs", "name")

    def __init__(self, *args, name="", dtypes=None, **kwargs):
        self.args = args
        self.kwargs = kwargs
        self.name = name
        self.dtypes = dtypes

    def __repr__(self):
        def describe(a):
            if isinstance(a, np.ndarray):
                return f"array{a.shape}:{a.dtype}"
            if isinstance(a, (list, tuple)):
                inner = ", ".join(describe(b) for b in a)
                return f"[{inner}]" if isinstance(a, list) else f"({inner})"
            return repr(a)

        parts = [describe(a) for a in self.args]
        parts += [f"{k}={describe(v)}" for k, v in self.kwargs.items()]
        return f"SampleInput[{self.name}]({', '.join(parts)})"


class OpInfo:
    """Description of one op for the generic tests.

    Parameters
    ----------
    name : str
        Op name, also the pytest id.
    ref : callable
        NumPy reference.
    sample_inputs : callable
        ``sample_inputs(rng)`` returns a list of :class:`SampleInput` (float64 arrays).
    op : callable, optional
        ``op(m, *args, **kwargs)``; defaults to ``getattr(m, name)(*args, **kwargs)``.
    variants : dict, optional
        Other spellings (method, operator, alias), same signature as ``op``.
    method : bool
        Add the Tensor method ``args[0].<name>(*args[1:], **kwargs)`` as a variant.
    supports_grad : bool
        Differentiable op: gradcheck and torch gradient comparison run.
    supports_gradgrad : bool
        Second order: gradgradcheck runs on the small samples.
    dtypes : str or tuple of str
        Default output dtypes (see module docstring).
    tol64, tol32 : tuple of float
        ``(rtol, atol)`` for the forward comparison in float64 / float32.
    grad_tol : tuple of float
        ``(rtol, atol)`` for gradcheck and for gradients compared with torch.
    torch_op : callable, optional
        Spelling used when ``m`` is torch and torch names the op differently.
    primitives : tuple of str
        The primitives (``numbagrad.ops.PRIMITIVES`` names) the op's forward binds over
        its samples; ``test_primitives.py`` checks it against a trace, and that every
        registered primitive is exercised by some entry (forward or backward).
    supports_jvp, supports_vmap : bool
        Forward mode (JVP checks) and vmap (against loop-and-stack) run on the entry;
        set False only with a comment saying why.
    supports_cuda : bool
        The CUDA suite runs on the entry (False until the CUDA backend lands).
    """

    def __init__(
        self,
        name,
        ref,
        sample_inputs,
        op=None,
        variants=None,
        method=False,
        supports_grad=True,
        supports_gradgrad=True,
        dtypes="same",
        tol64=(1e-7, 1e-9),
        tol32=(1e-5, 1e-5),
        grad_tol=(1e-3, 1e-5),
        torch_op=None,
        primitives=(),
        supports_jvp=True,
        supports_vmap=True,
        supports_cuda=False,
    ):
        self.name = name
        self.primitives = tuple(primitives)
        self.supports_jvp = supports_jvp
        self.supports_vmap = supports_vmap
        self.supports_cuda = supports_cuda
        self.ref = ref
        self._sample_inputs = sample_inputs
        if op is None:

            def op(m, *args, **kwargs):
                return getattr(m, name)(*args, **kwargs)

        self._op = op
        self.torch_op = torch_op
        self.variants = dict(variants or {})
        if method:

            def method_variant(m, x, *args, **kwargs):
                return getattr(x, name)(*args, **kwargs)

            self.variants.setdefault("method", method_variant)
        self.supports_grad = supports_grad
        self.supports_gradgrad = supports_grad and supports_gradgrad
        self.dtypes = dtypes
        self.tol64 = tol64
        self.tol32 = tol32
        self.grad_tol = grad_tol

    def __repr__(self):
        return f"OpInfo({self.name})"

    def op(self, m, *args, **kwargs):
        """Call the op on module ``m`` (numbagrad or torch)."""
        if self.torch_op is not None and m.__name__ == "torch":
            return self.torch_op(m, *args, **kwargs)
        return self._op(m, *args, **kwargs)

    def sample_inputs(self):
        """The samples, generated from a seed fixed per op so that runs are reproducible."""
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return self._sample_inputs(rng)

    def out_dtypes(self, sample):
        """Tuple of expected dtype tags for ``sample``'s outputs."""
        d = sample.dtypes if sample.dtypes is not None else self.dtypes
        return (d,) if isinstance(d, str) else tuple(d)


# ---------------------------------------------------------------------------
# Domains: each returns a float64 array of the given shape.
# ---------------------------------------------------------------------------


def _arr(x):
    return np.asarray(x, dtype=np.float64)


def real(rng, shape, low=-2.0, high=2.0):
    """Uniform in ``[low, high)``."""
    return _arr(rng.uniform(low, high, shape))


def nonzero(rng, shape, low=0.3, high=2.0):
    """Random sign times a magnitude in ``[low, high)``: keeps away from kinks at 0."""
    sign = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    return _arr(sign * rng.uniform(low, high, shape))


def positive(rng, shape, low=0.3, high=2.0):
    """Uniform in ``[low, high)`` with ``low > 0``."""
    return _arr(rng.uniform(low, high, shape))


def off_integer(rng, shape):
    """Values whose fractional part is far from 0 and 0.5 (floor/ceil/round jumps)."""
    frac = rng.choice([0.15, 0.3, 0.7, 0.85], size=shape) + rng.uniform(-0.05, 0.05, shape)
    return _arr(rng.integers(-3, 3, shape) + frac)


def integer_valued(rng, shape):
    """Integer-valued floats in [-2, 2]: comparisons then see ties."""
    return _arr(rng.integers(-2, 3, shape))


def distinct(rng, shape):
    """Shuffled values with gaps of at least 0.25: no ties for max/sort/topk."""
    n = int(np.prod(shape, dtype=np.int64))
    vals = rng.permutation(n) * 0.5 - 0.25 * n + rng.uniform(-0.1, 0.1, n)
    return _arr(vals.reshape(shape))


def clamp_safe(rng, shape):
    """Values at least 0.1 away from the clamp bounds used below (+-0.5 and [0.3, 1])."""
    pools = [(-2.0, -1.2), (-0.1, 0.1), (1.2, 2.0)]
    which = rng.integers(0, 3, shape)
    out = np.empty(shape)
    for i, (lo, hi) in enumerate(pools):
        out = np.where(which == i, rng.uniform(lo, hi, shape), out)
    return _arr(out)


UNARY_SHAPES = [(), (5,), (3, 4)]
BINARY_SHAPES = [
    ((), ()),
    ((5,), (5,)),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((3, 4), ()),
]


def unary_samples(domain, shapes=UNARY_SHAPES, **kwargs):
    """Samples generator for an elementwise unary op over ``domain``."""

    def gen(rng):
        return [SampleInput(domain(rng, s), name=str(s), **kwargs) for s in shapes]

    return gen


def binary_samples(dom_a, dom_b=None, scalar=None, shapes=BINARY_SHAPES):
    """Samples for a broadcasting binary op; ``scalar`` adds a Python-scalar operand."""
    dom_b = dom_b or dom_a

    def gen(rng):
        out = [SampleInput(dom_a(rng, sa), dom_b(rng, sb), name=f"{sa}x{sb}") for sa, sb in shapes]
        if scalar is not None:
            out.append(SampleInput(dom_a(rng, (3, 4)), scalar, name="python_scalar"))
        return out

    return gen


# ---------------------------------------------------------------------------
# References for what NumPy lacks.
# ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_erf(x):
    """Error function through ``math.erf``."""
    return _erf(x)


def ref_sigmoid(x):
    """Logistic function."""
    return 1.0 / (1.0 + np.exp(-x))


def ref_softplus(x):
    """``log(1 + exp(x))`` computed stably."""
    return np.logaddexp(0.0, x)


def ref_relu(x):
    """Rectifier."""
    return np.maximum(x, 0.0)


def _axis(dim):
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def ref_reduce(fn):
    """Wrap a NumPy reduction ``fn(x, axis, keepdims)`` with torch's ``dim``/``keepdim``."""

    def ref(x, dim=None, keepdim=False):
        return np.asarray(fn(x, axis=_axis(dim), keepdims=keepdim))

    return ref


def ref_logsumexp(x, dim, keepdim=False):
    """Max-shifted log-sum-exp."""
    axis = _axis(dim)
    mx = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - mx), axis=axis, keepdims=True)) + mx
    return out if keepdim else np.squeeze(out, axis=axis)


def ref_softmax(x, dim):
    """Max-shifted softmax."""
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def ref_log_softmax(x, dim):
    """Log of the softmax."""
    return x - ref_logsumexp(x, dim, keepdim=True)


def ref_norm(x, p="fro", dim=None, keepdim=False):
    """p-norm over ``dim`` (all elements when ``dim`` is None)."""
    p = 2.0 if p == "fro" else float(p)
    if p == 0:  # the number of nonzero entries
        return np.asarray(np.sum(x != 0, axis=_axis(dim), keepdims=keepdim), x.dtype)
    s = np.sum(np.abs(x) ** p, axis=_axis(dim), keepdims=keepdim)
    return np.asarray(s ** (1.0 / p))


def ref_var(x, dim=None, *, correction=1, unbiased=None, keepdim=False):
    """Variance with torch's ``correction``/``unbiased`` spelling."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return np.asarray(np.var(x, axis=_axis(dim), ddof=correction, keepdims=keepdim))


def ref_std(x, dim=None, *, correction=1, unbiased=None, keepdim=False):
    """Standard deviation, see :func:`ref_var`."""
    return np.sqrt(ref_var(x, dim, correction=correction, unbiased=unbiased, keepdim=keepdim))


def ref_max_dim(fn_val, fn_idx):
    """Reference for ``max``/``min``: full reduction, or (values, indices) with ``dim``."""

    def ref(x, dim=None, keepdim=False):
        if dim is None:
            return np.asarray(fn_val(x))
        idx = fn_idx(x, axis=dim, keepdims=keepdim)
        return (np.asarray(fn_val(x, axis=dim, keepdims=keepdim)), np.asarray(idx))

    return ref


def ref_arg(fn):
    """Reference for ``argmax``/``argmin``."""

    def ref(x, dim=None, keepdim=False):
        if dim is None:
            out = np.asarray(fn(x))
            return out.reshape((1,) * x.ndim) if keepdim else out
        return np.asarray(fn(x, axis=dim, keepdims=keepdim))

    return ref


def ref_gather(x, dim, index):
    """``out[i][j] = x[i][index[i][j]]`` (dim=1); index may be smaller than x off ``dim``."""
    sl = tuple(slice(0, n) if d != dim % x.ndim else slice(None) for d, n in enumerate(index.shape))
    return np.take_along_axis(x[sl], index, axis=dim)


def ref_scatter_add(x, dim, index, src):
    """Out-of-place scatter-add with repeated indices accumulating."""
    out = x.copy()
    pos = list(np.indices(index.shape))
    pos[dim % x.ndim] = index
    sl = tuple(slice(0, n) for n in index.shape)
    np.add.at(out, tuple(pos), src[sl])
    return out


def ref_scatter_reduce(reduce):
    """Out-of-place ``scatter_reduce`` with ``reduce`` in prod / amax / amin."""
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    start = {"prod": 1.0, "amax": -np.inf, "amin": np.inf}[reduce]

    def ref(x, dim, index, src, include_self=True):
        out = x.copy()
        pos = list(np.indices(index.shape))
        pos[dim % x.ndim] = index
        if not include_self:
            out[tuple(pos)] = start
        ufunc.at(out, tuple(pos), src[tuple(slice(0, n) for n in index.shape)])
        return out

    return ref


def scatter_reduce_samples(rng):
    """scatter_reduce with repeated indices, with and without ``input`` (src shaped as the
    index: PyTorch's backward needs it)."""
    return [
        SampleInput(real(rng, (3, 4)), 1, _index(rng, 4, (3, 5)), real(rng, (3, 5)), name="dim1"),
        SampleInput(
            real(rng, (3, 4)),
            0,
            _index(rng, 3, (4, 4)),
            real(rng, (4, 4)),
            include_self=False,
            name="dim0_excl",
        ),
        SampleInput(
            real(rng, (5,)),
            0,
            np.array([1, 1, 1, 3], dtype=np.int64),
            real(rng, (4,)),
            name="1d_dup",
        ),
    ]


def _op_scatter_reduce(reduce):
    def op(m, x, dim, index, src, **kwargs):
        return m.scatter_reduce(x, dim, index, src, reduce, **kwargs)

    return op


def ref_take_along_dim(x, indices, dim=None):
    """``take_along_dim``: flattened when ``dim`` is None, else broadcasting gather."""
    if dim is None:
        return x.reshape(-1)[indices.reshape(-1)]
    return np.take_along_axis(x, indices, axis=dim)


def ref_split(x, split_size_or_sections, dim=0):
    """torch.split: equal chunks of a size (last smaller) or explicit section sizes."""
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        cuts = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        cuts = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(np.split(x, cuts, axis=dim))


def ref_chunk(x, chunks, dim=0):
    """torch.chunk: chunks of size ``ceil(n / chunks)``."""
    return ref_split(x, -(-x.shape[dim] // chunks), dim)


def ref_sort(x, dim=-1, descending=False):
    """(values, indices) of a stable sort along ``dim``."""
    idx = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(x, idx, axis=dim), idx


def ref_argsort(x, dim=-1, descending=False):
    """Indices of :func:`ref_sort`."""
    return ref_sort(x, dim, descending)[1]


def ref_topk(x, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the ``k`` largest (or smallest) along ``dim``."""
    vals, idx = ref_sort(x, dim, descending=largest)
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(0, k)
    return vals[tuple(sl)], idx[tuple(sl)]


def ref_expand(x, *sizes):
    """Expand with torch's ``-1`` (keep) entries."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - x.ndim
    shape = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return np.broadcast_to(x, shape)


def ref_squeeze(x, dim=None):
    """torch.squeeze: dims of size != 1 are left alone instead of raising."""
    if dim is None:
        return np.squeeze(x)
    dims = dim if isinstance(dim, tuple) else (dim,)
    dims = tuple(d % x.ndim for d in dims if x.shape[d] == 1)
    return np.squeeze(x, axis=dims)


def ref_unflatten(x, dim, sizes):
    """Split dimension ``dim`` into ``sizes``."""
    dim %= x.ndim
    return x.reshape((*x.shape[:dim], *sizes, *x.shape[dim + 1 :]))


def ref_flatten(x, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim``; a 0-d input becomes 1-d."""
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape((*x.shape[:s], -1, *x.shape[e + 1 :]))


def ref_roll(x, shifts, dims=None):
    """torch.roll: without ``dims`` the flattened tensor is rolled and reshaped back."""
    if dims is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, axis=dims)


def ref_narrow(x, dim, start, length):
    """Slice ``start:start+length`` along ``dim``."""
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(start, start + length)
    return x[tuple(sl)]


def ref_clamp(x, min=None, max=None):
    """Clamp with optional (array or scalar) bounds."""
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def ref_where(cond, x, y):
    """``np.where``."""
    return np.where(cond, x, y)


def ref_getitem(x, key):
    """NumPy indexing has the same semantics for these keys."""
    return np.asarray(x[key])


def ref_setitem(x, v, key):
    """Copy, then assign."""
    y = x.copy()
    y[key] = v
    return y


def op_setitem(m, x, v, key):
    """Functional ``__setitem__`` on a clone, so the input leaf is not written."""
    y = x.clone()
    y[key] = v
    return y


def ref_remainder(a, b):
    """Python-style modulus (sign of the divisor), as torch.remainder."""
    return a - b * np.floor(a / b)


# ---------------------------------------------------------------------------
# Sample generators for the structured ops.
# ---------------------------------------------------------------------------


def reduction_samples(domain=real, full=True, dims=True, tuples=True):
    """Reductions: full, single dim, negative dim + keepdim, tuple of dims, 0-d input."""

    def gen(rng):
        out = []
        if full:
            out.append(SampleInput(domain(rng, (3, 4)), name="full"))
            out.append(SampleInput(domain(rng, ()), name="0d"))
        if dims:
            out.append(SampleInput(domain(rng, (3, 4)), dim=0, name="dim0"))
            out.append(
                SampleInput(domain(rng, (2, 3, 4)), dim=-1, keepdim=True, name="dim-1_keepdim")
            )
            out.append(SampleInput(domain(rng, (5,)), dim=0, name="1d"))
        if tuples:
            out.append(SampleInput(domain(rng, (2, 3, 4)), dim=(0, 2), name="dim_tuple"))
            out.append(
                SampleInput(
                    domain(rng, (2, 3, 4)), dim=(-1, 1), keepdim=True, name="dim_tuple_keepdim"
                )
            )
        return out

    return gen


def with_zeros(rng, shape, *positions):
    """Magnitudes in [0.5, 1.5) with random signs, exact zeros at ``positions``."""
    x = nonzero(rng, shape, 0.5, 1.5)
    for p in positions:
        x[p] = 0.0
    return x


def prod_samples(rng):
    """prod: single dims only (torch), plus inputs with one and two exact zeros."""
    one_zero = with_zeros(rng, (3, 4), (1, 2))
    two_zeros = with_zeros(rng, (3, 4), (0, 1), (0, 3))
    return [
        SampleInput(nonzero(rng, (3, 4), 0.5, 1.5), name="full"),
        SampleInput(nonzero(rng, (), 0.5, 1.5), name="0d"),
        SampleInput(nonzero(rng, (3, 4), 0.5, 1.5), dim=0, name="dim0"),
        SampleInput(nonzero(rng, (2, 3, 4), 0.5, 1.5), dim=-1, keepdim=True, name="dim-1_keepdim"),
        SampleInput(one_zero, name="one_zero_full"),
        SampleInput(one_zero.copy(), dim=1, name="one_zero_dim1"),
        SampleInput(two_zeros, dim=1, name="two_zeros_dim1"),
    ]


def max_min_samples(rng):
    """max/min: full reduction (one output) and with dim (values, indices)."""
    return [
        SampleInput(distinct(rng, (3, 4)), name="full"),
        SampleInput(distinct(rng, (3, 4)), dim=1, name="dim1", dtypes=("same", "int64")),
        SampleInput(
            distinct(rng, (2, 3, 4)),
            dim=0,
            keepdim=True,
            name="dim0_keepdim",
            dtypes=("same", "int64"),
        ),
        SampleInput(distinct(rng, (5,)), dim=-1, name="1d", dtypes=("same", "int64")),
    ]


def arg_samples(rng):
    """argmax/argmin samples."""
    return [
        SampleInput(distinct(rng, (3, 4)), name="full"),
        SampleInput(distinct(rng, (3, 4)), dim=1, name="dim1"),
        SampleInput(distinct(rng, (2, 3, 4)), dim=-1, keepdim=True, name="keepdim"),
        SampleInput(distinct(rng, (5,)), dim=0, name="1d"),
    ]


def logsumexp_samples(rng):
    """logsumexp: dim is required; includes large values that overflow a naive exp."""
    return [
        SampleInput(real(rng, (3, 4)), 1, name="dim1"),
        SampleInput(real(rng, (2, 3, 4)), -1, keepdim=True, name="keepdim"),
        SampleInput(real(rng, (2, 3, 4)), (0, 2), name="dim_tuple"),
        SampleInput(real(rng, (3, 4)) + 800.0, 1, name="large_values"),
        SampleInput(real(rng, (5,)), 0, name="1d"),
    ]


def softmax_samples(rng):
    """softmax/log_softmax over several dims, plus a large-value sample."""
    return [
        SampleInput(real(rng, (3, 4)), -1, name="last"),
        SampleInput(real(rng, (3, 4)), 0, name="first"),
        SampleInput(real(rng, (2, 3, 4)), 1, name="middle"),
        SampleInput(real(rng, (5,)), 0, name="1d"),
        SampleInput(real(rng, (2, 3)) * 10.0 + 700.0, 1, name="large_values"),
    ]


def norm_samples(rng):
    """norm: default Frobenius, p=1 over a dim, p=3, p=2 with keepdim, p=0 (no gradient)."""
    return [
        SampleInput(nonzero(rng, (3, 4)), name="fro"),
        SampleInput(nonzero(rng, (3, 4)), p=0, dim=1, name="p0_dim1"),
        SampleInput(nonzero(rng, (3, 4)), p=1, dim=1, name="p1_dim1"),
        SampleInput(nonzero(rng, (5,)), p=3, name="p3"),
        SampleInput(nonzero(rng, (2, 3, 4)), p=2, dim=0, keepdim=True, name="p2_keepdim"),
    ]


def var_samples(rng):
    """var/std: default correction, dims, correction=0 and the legacy ``unbiased``."""
    return [
        SampleInput(real(rng, (3, 4)), name="full"),
        SampleInput(real(rng, (3, 4)), 1, name="dim1"),
        SampleInput(real(rng, (2, 3, 4)), 0, keepdim=True, name="dim0_keepdim"),
        SampleInput(real(rng, (3, 4)), 1, correction=0, name="correction0"),
        SampleInput(real(rng, (2, 3, 4)), (0, 2), name="dim_tuple"),
        SampleInput(real(rng, (6,)), unbiased=False, name="unbiased_false"),
    ]


def all_any_samples(rng):
    """all/any over bool and float inputs."""
    b = rng.uniform(size=(3, 4)) < 0.7
    b[0] = True
    b[1] = False
    f = integer_valued(rng, (3, 4))
    return [
        SampleInput(b, name="bool_full"),
        SampleInput(b, dim=1, name="bool_dim1"),
        SampleInput(b, dim=0, keepdim=True, name="bool_keepdim"),
        SampleInput(f, name="float_full"),
        SampleInput(f, dim=1, name="float_dim1"),
        SampleInput(np.ones((3, 4), dtype=bool), name="all_true"),
    ]


def cumsum_samples(rng):
    """cumsum along several dims."""
    return [
        SampleInput(real(rng, (5,)), 0, name="1d"),
        SampleInput(real(rng, (3, 4)), 1, name="dim1"),
        SampleInput(real(rng, (2, 3, 4)), -3, name="dim-3"),
    ]


def pow_samples(rng):
    """pow with tensor exponents (positive base) and Python scalar exponents."""
    return [
        SampleInput(positive(rng, (3, 4)), real(rng, (3, 4)), name="tensor_exp"),
        SampleInput(positive(rng, (3, 1)), real(rng, (4,)), name="tensor_exp_broadcast"),
        SampleInput(positive(rng, ()), real(rng, ()), name="0d"),
        SampleInput(real(rng, (3, 4)), 2, name="square"),
        SampleInput(real(rng, (5,)), 3, name="cube"),
        SampleInput(positive(rng, (3, 4)), 0.5, name="sqrt"),
        SampleInput(positive(rng, (5,)), -1.5, name="neg_frac"),
    ]


def minmax_samples(rng):
    """maximum/minimum operands whose differences are never near 0 (no ties)."""

    def a(shape):
        return _arr(rng.integers(-2, 3, shape) + rng.uniform(0.0, 0.3, shape))

    def b(shape):
        return _arr(rng.integers(-2, 3, shape) + rng.uniform(0.5, 0.8, shape))

    return [SampleInput(a(sa), b(sb), name=f"{sa}x{sb}") for sa, sb in BINARY_SHAPES]


def atan2_samples(rng):
    """atan2(y, x) away from the branch cut y = 0, x < 0."""
    return [
        SampleInput(nonzero(rng, sa), real(rng, sb), name=f"{sa}x{sb}") for sa, sb in BINARY_SHAPES
    ]


def mod_samples(rng):
    """fmod/remainder operands with a/b far from integers (the jumps)."""

    def b(shape):
        base = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], size=shape)
        return _arr(base * rng.uniform(0.995, 1.005, shape))

    def a(shape):
        return _arr(rng.integers(-3, 4, shape) + rng.uniform(0.2, 0.4, shape))

    out = [SampleInput(a(sa), b(sb), name=f"{sa}x{sb}") for sa, sb in BINARY_SHAPES]
    out.append(SampleInput(a((3, 4)), 1.5, name="python_scalar"))
    return out


def comparison_samples(rng):
    """Integer-valued operands so that ties occur; a Python scalar as well."""
    out = [
        SampleInput(integer_valued(rng, sa), integer_valued(rng, sb), name=f"{sa}x{sb}")
        for sa, sb in BINARY_SHAPES
    ]
    out.append(SampleInput(integer_valued(rng, (3, 4)), 1.0, name="python_scalar"))
    return out


def where_samples(rng):
    """where(cond, x, y) with broadcasting and a scalar branch."""
    return [
        SampleInput(
            rng.uniform(size=(3, 4)) < 0.5, real(rng, (3, 4)), real(rng, (3, 4)), name="same_shape"
        ),
        SampleInput(
            rng.uniform(size=(3, 1)) < 0.5, real(rng, (1, 4)), real(rng, (4,)), name="broadcast"
        ),
        SampleInput(rng.uniform(size=(5,)) < 0.5, real(rng, (5,)), 0.0, name="scalar_other"),
        SampleInput(np.array(True), real(rng, ()), real(rng, ()), name="0d"),
    ]


def clamp_samples(rng):
    """clamp with both, only min, only max, and tensor bounds."""
    return [
        SampleInput(clamp_safe(rng, (3, 4)), -0.5, 0.5, name="both"),
        SampleInput(clamp_safe(rng, (5,)), min=-0.5, name="min_only"),
        SampleInput(clamp_safe(rng, (5,)), max=0.5, name="max_only"),
        SampleInput(clamp_safe(rng, ()), -0.5, 0.5, name="0d"),
        SampleInput(
            clamp_safe(rng, (3, 4)),
            min=real(rng, (3, 1), -1.0, -0.3),
            max=real(rng, (4,), 0.3, 1.0),
            name="tensor_bounds",
        ),
    ]


def getitem_samples(rng):
    """Keys: ints, slices with steps, None, Ellipsis, bool masks, int tensors, mixtures."""
    i64 = np.int64
    mask = rng.uniform(size=(3, 4)) < 0.5
    mask[0, 0] = True
    return [
        SampleInput(real(rng, (5,)), 2, name="int"),
        SampleInput(real(rng, (5,)), -1, name="neg_int"),
        SampleInput(real(rng, (3, 4)), 1, name="row"),
        SampleInput(real(rng, (3, 4)), (slice(None), 2), name="column"),
        SampleInput(real(rng, (7,)), slice(1, 6, 2), name="slice_step"),
        SampleInput(real(rng, (4, 5)), (slice(None, None, 2), slice(1, None, 3)), name="slices_2d"),
        SampleInput(real(rng, (3, 4)), (None, slice(None), None), name="none"),
        SampleInput(real(rng, (2, 3, 4)), (Ellipsis, 1), name="ellipsis"),
        SampleInput(real(rng, (2, 3, 4)), (0, Ellipsis, None), name="int_ellipsis_none"),
        SampleInput(real(rng, ()), Ellipsis, name="0d_ellipsis"),
        SampleInput(real(rng, ()), None, name="0d_none"),
        SampleInput(real(rng, (3, 4)), mask, name="bool_mask"),
        SampleInput(real(rng, (3, 4)), np.array([True, False, True]), name="bool_rows"),
        SampleInput(real(rng, (5,)), np.array([0, 2, 2, 4], dtype=i64), name="int_tensor_dup"),
        SampleInput(real(rng, (5,)), np.array([-1, 0], dtype=i64), name="int_tensor_neg"),
        SampleInput(real(rng, (3, 4)), np.array([[0, 1], [2, 2]], dtype=i64), name="int_tensor_2d"),
        SampleInput(
            real(rng, (3, 4)), (np.array([0, 2], dtype=i64), slice(1, 3)), name="int_tensor_slice"
        ),
        SampleInput(
            real(rng, (3, 4)),
            (np.array([0, 2, 2], dtype=i64), np.array([1, 3, 3], dtype=i64)),
            name="paired",
        ),
        SampleInput(
            real(rng, (3, 4)),
            (slice(None), np.array([3, 0, 0], dtype=i64)),
            name="slice_int_tensor",
        ),
    ]


def setitem_samples(rng):
    """Assignments of tensors (broadcast) and scalars through several key kinds."""
    i64 = np.int64
    mask = rng.uniform(size=(3, 4)) < 0.5
    mask[0, 0] = True
    return [
        SampleInput(real(rng, (5,)), real(rng, ()), 2, name="int"),
        SampleInput(real(rng, (3, 4)), real(rng, (4,)), 1, name="row_broadcast"),
        SampleInput(real(rng, (3, 4)), real(rng, (3, 2)), (slice(None), slice(1, 3)), name="block"),
        SampleInput(real(rng, (7,)), real(rng, (3,)), slice(0, 6, 2), name="slice_step"),
        SampleInput(real(rng, (3, 4)), 1.5, mask, name="bool_mask_scalar"),
        SampleInput(
            real(rng, (5,)), real(rng, (3,)), np.array([0, 2, 4], dtype=i64), name="int_tensor"
        ),
        SampleInput(real(rng, (3, 4)), real(rng, (3,)), (Ellipsis, 0), name="ellipsis"),
    ]


def _index(rng, high, shape):
    return rng.integers(0, high, shape).astype(np.int64)


def index_select_samples(rng):
    """index_select with duplicate indices."""
    return [
        SampleInput(real(rng, (5,)), 0, np.array([4, 0, 0, 2], dtype=np.int64), name="1d"),
        SampleInput(real(rng, (3, 4)), 1, np.array([3, 1, 3], dtype=np.int64), name="dim1"),
        SampleInput(real(rng, (3, 4)), 0, np.array([2], dtype=np.int64), name="dim0"),
        SampleInput(real(rng, (2, 3, 4)), -2, _index(rng, 3, (5,)), name="dim-2"),
    ]


def gather_samples(rng):
    """gather with duplicates, and an index smaller than the input off ``dim``."""
    return [
        SampleInput(real(rng, (3, 4)), 1, _index(rng, 4, (3, 5)), name="dim1"),
        SampleInput(real(rng, (3, 4)), 0, _index(rng, 3, (2, 4)), name="dim0"),
        SampleInput(real(rng, (3, 4)), 1, _index(rng, 4, (2, 2)), name="smaller_index"),
        SampleInput(real(rng, (5,)), 0, _index(rng, 5, (7,)), name="1d"),
        SampleInput(real(rng, (2, 3, 4)), -1, _index(rng, 4, (2, 3, 2)), name="3d"),
    ]


def scatter_add_samples(rng):
    """scatter_add with repeated indices (updates must accumulate)."""
    return [
        SampleInput(real(rng, (3, 4)), 1, _index(rng, 4, (3, 5)), real(rng, (3, 5)), name="dim1"),
        SampleInput(real(rng, (3, 4)), 0, _index(rng, 3, (4, 4)), real(rng, (4, 4)), name="dim0"),
        SampleInput(
            real(rng, (5,)),
            0,
            np.array([1, 1, 1, 3], dtype=np.int64),
            real(rng, (4,)),
            name="1d_dup",
        ),
        SampleInput(
            real(rng, (3, 4)), 1, _index(rng, 4, (2, 2)), real(rng, (2, 2)), name="smaller_index"
        ),
    ]


def take_along_dim_samples(rng):
    """take_along_dim with dim, broadcasting indices, and dim=None (flattened)."""
    return [
        SampleInput(real(rng, (3, 4)), _index(rng, 4, (3, 2)), 1, name="dim1"),
        SampleInput(real(rng, (3, 4)), _index(rng, 3, (2, 4)), 0, name="dim0"),
        SampleInput(real(rng, (3, 4)), _index(rng, 4, (1, 2)), 1, name="broadcast"),
        SampleInput(real(rng, (3, 4)), _index(rng, 12, (5,)), name="flat"),
    ]


def cat_samples(rng):
    """cat of 2 and 3 tensors along several dims."""
    return [
        SampleInput([real(rng, (2, 3)), real(rng, (1, 3))], name="dim0_default"),
        SampleInput([real(rng, (2, 3)), real(rng, (2, 2))], 1, name="dim1"),
        SampleInput([real(rng, (3,)), real(rng, (2,)), real(rng, (4,))], 0, name="three_1d"),
        SampleInput([real(rng, (2, 3, 2)), real(rng, (2, 1, 2))], dim=-2, name="dim-2"),
    ]


def stack_samples(rng):
    """stack along new leading, middle and trailing dims, and of 0-d tensors."""
    return [
        SampleInput([real(rng, (2, 3)), real(rng, (2, 3))], name="dim0_default"),
        SampleInput([real(rng, (2, 3)), real(rng, (2, 3)), real(rng, (2, 3))], 1, name="dim1"),
        SampleInput([real(rng, (4,)), real(rng, (4,))], dim=-1, name="dim-1"),
        SampleInput([real(rng, ()), real(rng, ())], name="0d"),
    ]


def split_samples(rng):
    """split by a size (uneven tail) and by explicit sections."""
    return [
        SampleInput(real(rng, (5, 3)), 2, name="size2"),
        SampleInput(real(rng, (5, 3)), [1, 3, 1], name="sections"),
        SampleInput(real(rng, (2, 5)), 3, dim=1, name="dim1"),
        SampleInput(real(rng, (2, 5)), [4, 1], dim=-1, name="sections_dim-1"),
    ]


def chunk_samples(rng):
    """chunk into equal and uneven pieces."""
    return [
        SampleInput(real(rng, (5, 3)), 3, name="uneven"),
        SampleInput(real(rng, (4, 2)), 2, name="even"),
        SampleInput(real(rng, (2, 5)), 2, dim=1, name="dim1"),
    ]


def sort_samples(rng):
    """sort along dims, ascending and descending (distinct values)."""
    return [
        SampleInput(distinct(rng, (5,)), name="1d"),
        SampleInput(distinct(rng, (3, 4)), dim=0, name="dim0"),
        SampleInput(distinct(rng, (3, 4)), descending=True, name="descending"),
        SampleInput(distinct(rng, (2, 3, 4)), dim=1, descending=True, name="3d"),
    ]


def topk_samples(rng):
    """topk: largest and smallest, several dims."""
    return [
        SampleInput(distinct(rng, (6,)), 3, name="1d"),
        SampleInput(distinct(rng, (3, 4)), 2, name="dim-1"),
        SampleInput(distinct(rng, (3, 4)), 1, dim=0, largest=False, name="smallest_dim0"),
        SampleInput(distinct(rng, (2, 3, 4)), 2, dim=1, name="3d"),
    ]


def matmul_samples(rng):
    """matmul: 1-D/2-D combinations and batched with broadcasting."""
    shapes = [
        ((4,), (4,)),
        ((3, 4), (4,)),
        ((4,), (4, 5)),
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (3, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
    ]
    return [SampleInput(real(rng, sa), real(rng, sb), name=f"{sa}@{sb}") for sa, sb in shapes]


def einsum_samples(rng):
    """Common contractions."""
    cases = [
        ("ij,jk->ik", (3, 4), (4, 5)),
        ("bij,bjk->bik", (2, 3, 4), (2, 4, 3)),
        ("i,i->", (4,), (4,)),
        ("i,j->ij", (3,), (4,)),
        ("bi,bi->b", (2, 3), (2, 3)),
        ("ij->ji", (3, 4)),
        ("ij->j", (3, 4)),
        ("ii->", (3, 3)),
        ("ij->", (3, 4)),
    ]
    out = []
    for eq, *shapes in cases:
        out.append(SampleInput(eq, *[real(rng, s) for s in shapes], name=eq))
    return out


def view_samples(rng):
    """Shapes for reshape/view (tuple spelling; the variants add varargs)."""
    return [
        SampleInput(real(rng, (3, 4)), (4, 3), name="2d"),
        SampleInput(real(rng, (3, 4)), (-1,), name="flat"),
        SampleInput(real(rng, (2, 3, 4)), (6, -1), name="infer"),
        SampleInput(real(rng, ()), (1,), name="0d"),
        SampleInput(real(rng, (6,)), (2, 1, 3), name="unit_dim"),
        SampleInput(real(rng, (1,)), (), name="to_0d"),
    ]


def logical_samples(rng):
    """Float operands with ties and zeros (torch's logical ops take no Python scalar)."""
    return [
        SampleInput(integer_valued(rng, sa), integer_valued(rng, sb), name=f"{sa}x{sb}")
        for sa, sb in BINARY_SHAPES
    ]


def bool_pair_samples(rng):
    """Bool operands (integer and bool ops), broadcasting."""
    return [
        SampleInput(rng.uniform(size=sa) < 0.5, rng.uniform(size=sb) < 0.5, name=f"{sa}x{sb}")
        for sa, sb in [((5,), (5,)), ((3, 1), (1, 4)), ((3, 4), (1,))]
    ]


def special_values_samples(rng):
    """Floats with nan, +inf and -inf among ordinary values."""
    x = real(rng, (3, 4))
    x[0, 1], x[1, 2], x[2, 3] = np.nan, np.inf, -np.inf
    return [
        SampleInput(x, name="special"),
        SampleInput(real(rng, (5,)), name="finite"),
        SampleInput(_arr(np.nan), name="0d_nan"),
    ]


def nan_to_num_samples(rng):
    """Explicit replacements (the defaults, the dtype's extremes, differ between the
    float32 op and its float64 reference; test_autograd_edge_cases covers them)."""
    x = real(rng, (3, 4))
    x[0, 1], x[1, 2], x[2, 3] = np.nan, np.inf, -np.inf
    only_nan = real(rng, (5,))
    only_nan[2] = np.nan
    return [
        SampleInput(x, nan=0.5, posinf=9.0, neginf=-9.0, name="special"),
        SampleInput(only_nan, name="nan_default"),
        SampleInput(real(rng, (5,)), name="finite"),
    ]


def ref_nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NumPy's nan_to_num keeps the dtype's extremes for inf, as torch's."""
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def ref_nonzero(x):
    """``(n, ndim)`` indices; a 0-d input gives one empty row when non-zero."""
    if x.ndim == 0:
        return np.zeros((int(x != 0), 0), np.int64)
    return np.stack(np.nonzero(x), axis=1).astype(np.int64)


def nonzero_samples(rng):
    x = real(rng, (3, 4))
    x[x < 0] = 0.0
    return [
        SampleInput(x, name="2d"),
        SampleInput(_arr([0.0, 1.5, 0.0]), name="1d"),
        SampleInput(_arr(2.0), name="0d"),
        SampleInput(_arr([0.0, 0.0]), name="none"),
    ]


def cumprod_samples(rng):
    """cumprod along several dims, with zeros (one, two) in the scanned slices."""
    two_zeros = with_zeros(rng, (3, 5), (0, 1), (0, 3))
    return [
        SampleInput(nonzero(rng, (5,), 0.5, 1.5), 0, name="1d"),
        SampleInput(nonzero(rng, (3, 4), 0.5, 1.5), 1, name="dim1"),
        SampleInput(nonzero(rng, (2, 3, 4), 0.5, 1.5), -3, name="dim-3"),
        SampleInput(with_zeros(rng, (3, 4), (1, 2)), 1, name="one_zero"),
        SampleInput(two_zeros, 1, name="two_zeros"),
        SampleInput(two_zeros, 0, name="zeros_other_dim"),
    ]


def op_fill(m, x, value):
    """``fill_`` on a clone: the old values get a zero gradient."""
    return x.clone().fill_(value)


def op_write_through_view(m, x):
    """Write through one view of an intermediate, then use another, older view of it:
    the base's history becomes CopySlices and the stale view is re-derived."""
    y = (x * 1).contiguous()
    row = y[0]
    y[:, 1].mul_(2.0)
    return row * 1 + y.sum(0)


def ref_write_through_view(x):
    y = x.copy()
    y[:, 1] *= 2.0
    return y[0] + y.sum(0)


_FUNCTIONS = {}


def op_function(m, x):
    """A custom ``autograd.Function`` (x * exp(x)) in the setup_context style."""
    fn = _FUNCTIONS.get(m.__name__)
    if fn is None:

        class XExp(m.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return x * x.exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return t * (1 + x) * x.exp()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * (1 + x) * x.exp()

        fn = _FUNCTIONS[m.__name__] = XExp
    return fn.apply(x)


def _s(*args, name, **kwargs):
    return SampleInput(*args, name=name, **kwargs)


# ---------------------------------------------------------------------------
# The database.
# ---------------------------------------------------------------------------


def _unary(name, ref, domain=real, method=True, variants=None, **kw):
    """An elementwise unary entry; its primitive is the op's name capitalised."""
    kw.setdefault("primitives", (name.capitalize(),))
    return OpInfo(name, ref, unary_samples(domain), method=method, variants=variants, **kw)


def _torch_softplus(m, x):
    return m.nn.functional.softplus(x)


op_db = [
    # ---- unary ----
    _unary("neg", np.negative, variants={"operator": lambda m, x: -x}, supports_cuda=True),
    _unary("abs", np.abs, nonzero, variants={"builtin": lambda m, x: abs(x)}, supports_cuda=True),
    _unary("sign", np.sign, nonzero, supports_cuda=True),
    _unary("exp", np.exp, supports_cuda=True),
    _unary("expm1", np.expm1, supports_cuda=True),
    _unary("log", np.log, positive, supports_cuda=True),
    _unary("log1p", np.log1p, lambda r, s: real(r, s, -0.5, 2.0), supports_cuda=True),
    _unary("log2", np.log2, positive, supports_cuda=True),
    _unary("sqrt", np.sqrt, positive, supports_cuda=True),
    _unary("rsqrt", lambda x: 1.0 / np.sqrt(x), positive, supports_cuda=True),
    _unary("square", np.square, supports_cuda=True),
    _unary("reciprocal", np.reciprocal, nonzero, supports_cuda=True),
    _unary("sin", np.sin, supports_cuda=True),
    _unary("cos", np.cos, supports_cuda=True),
    _unary("tan", np.tan, lambda r, s: real(r, s, -1.2, 1.2), supports_cuda=True),
    _unary("tanh", np.tanh, supports_cuda=True),
    _unary("sigmoid", ref_sigmoid, supports_cuda=True),
    _unary("relu", ref_relu, nonzero, supports_cuda=True),
    OpInfo(
        "softplus",
        ref_softplus,
        unary_samples(lambda r, s: real(r, s, -4.0, 4.0)),
        torch_op=_torch_softplus,
        primitives=("Softplus",),
        supports_cuda=True,
    ),
    _unary("erf", ref_erf, supports_cuda=True),
    _unary("floor", np.floor, off_integer, supports_cuda=True),
    _unary("ceil", np.ceil, off_integer, supports_cuda=True),
    _unary("round", np.round, off_integer, supports_cuda=True),
    # reflected operators with a Python scalar on the left
    OpInfo(
        "radd",
        lambda x: 2.5 + x,
        unary_samples(real),
        op=lambda m, x: 2.5 + x,
        primitives=("Add",),
        supports_cuda=True,
    ),
    OpInfo(
        "rsub",
        lambda x: 2.5 - x,
        unary_samples(real),
        op=lambda m, x: 2.5 - x,
        primitives=("Sub",),
        supports_cuda=True,
    ),
    OpInfo(
        "rmul",
        lambda x: 2.5 * x,
        unary_samples(real),
        op=lambda m, x: 2.5 * x,
        primitives=("Mul",),
        supports_cuda=True,
    ),
    OpInfo(
        "rtruediv",
        lambda x: 2.5 / x,
        unary_samples(nonzero),
        op=lambda m, x: 2.5 / x,
        primitives=("Mul", "Reciprocal"),
        supports_cuda=True,
    ),
    OpInfo(
        "rpow",
        lambda x: 2.5**x,
        unary_samples(real),
        op=lambda m, x: 2.5**x,
        primitives=("Pow",),
        supports_cuda=True,
    ),
    # ---- binary ----
    OpInfo(
        "add",
        np.add,
        binary_samples(real, scalar=2.5),
        method=True,
        variants={"operator": lambda m, a, b: a + b},
        primitives=("Add",),
        supports_cuda=True,
    ),
    OpInfo(
        "sub",
        np.subtract,
        binary_samples(real, scalar=2.5),
        method=True,
        variants={"operator": lambda m, a, b: a - b},
        primitives=("Sub",),
        supports_cuda=True,
    ),
    OpInfo(
        "mul",
        np.multiply,
        binary_samples(real, scalar=2.5),
        method=True,
        variants={"operator": lambda m, a, b: a * b},
        primitives=("Mul",),
        supports_cuda=True,
    ),
    OpInfo(
        "div",
        np.divide,
        binary_samples(real, nonzero, scalar=2.5),
        method=True,
        variants={"operator": lambda m, a, b: a / b},
        primitives=("Div",),
        supports_cuda=True,
    ),
    OpInfo(
        "pow",
        np.power,
        pow_samples,
        method=True,
        variants={"operator": lambda m, a, b: a**b},
        primitives=("Pow",),
        supports_cuda=True,
    ),
    OpInfo(
        "maximum",
        np.maximum,
        minmax_samples,
        method=True,
        variants={"max_binary": lambda m, a, b: m.max(a, b)},
        primitives=("Maximum",),
        supports_cuda=True,
    ),
    OpInfo(
        "minimum",
        np.minimum,
        minmax_samples,
        method=True,
        variants={"min_binary": lambda m, a, b: m.min(a, b)},
        primitives=("Minimum",),
        supports_cuda=True,
    ),
    OpInfo(
        "atan2", np.arctan2, atan2_samples, method=True, primitives=("Atan2",), supports_cuda=True
    ),
    OpInfo("fmod", np.fmod, mod_samples, method=True, primitives=("Fmod",), supports_cuda=True),
    OpInfo(
        "remainder",
        ref_remainder,
        mod_samples,
        method=True,
        variants={"operator": lambda m, a, b: a % b},
        primitives=("Remainder",),
        supports_cuda=True,
    ),
    OpInfo(
        "eq",
        np.equal,
        comparison_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a == b},
        primitives=("Eq",),
        supports_cuda=True,
    ),
    OpInfo(
        "ne",
        np.not_equal,
        comparison_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a != b},
        primitives=("Ne",),
        supports_cuda=True,
    ),
    OpInfo(
        "lt",
        np.less,
        comparison_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a < b},
        primitives=("Lt",),
        supports_cuda=True,
    ),
    OpInfo(
        "le",
        np.less_equal,
        comparison_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a <= b},
        primitives=("Le",),
        supports_cuda=True,
    ),
    OpInfo(
        "gt",
        np.greater,
        comparison_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a > b},
        primitives=("Gt",),
        supports_cuda=True,
    ),
    OpInfo(
        "ge",
        np.greater_equal,
        comparison_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a >= b},
        primitives=("Ge",),
        supports_cuda=True,
    ),
    OpInfo(
        "logical_and",
        np.logical_and,
        logical_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("LogicalAnd",),
        supports_cuda=True,
    ),
    OpInfo(
        "logical_or",
        np.logical_or,
        logical_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("LogicalOr",),
        supports_cuda=True,
    ),
    OpInfo(
        "logical_xor",
        np.logical_xor,
        logical_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("LogicalXor",),
        supports_cuda=True,
    ),
    OpInfo(
        "bitwise_or",
        np.bitwise_or,
        bool_pair_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a | b},
        primitives=("BitwiseOr",),
        supports_cuda=True,
    ),
    OpInfo(
        "bitwise_xor",
        np.bitwise_xor,
        bool_pair_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        variants={"operator": lambda m, a, b: a ^ b},
        primitives=("BitwiseXor",),
        supports_cuda=True,
    ),
    OpInfo(
        "isnan",
        np.isnan,
        special_values_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("IsNan",),
        supports_cuda=True,
    ),
    OpInfo(
        "isinf",
        np.isinf,
        special_values_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("IsInf",),
        supports_cuda=True,
    ),
    OpInfo(
        "nan_to_num",
        ref_nan_to_num,
        nan_to_num_samples,
        method=True,
        primitives=("NanToNum",),
        supports_cuda=True,
    ),
    OpInfo(
        "where",
        ref_where,
        where_samples,
        variants={"method": lambda m, c, x, y: x.where(c, y)},
        primitives=("Where",),
        supports_cuda=True,
    ),
    OpInfo(
        "clamp",
        ref_clamp,
        clamp_samples,
        method=True,
        variants={"clip": lambda m, *a, **k: m.clip(*a, **k)},
        primitives=("Clamp", "ClampTensor"),
        supports_cuda=True,
    ),
    # ---- reductions ----
    OpInfo(
        "sum",
        ref_reduce(np.sum),
        reduction_samples(),
        method=True,
        primitives=("Sum",),
        supports_cuda=True,
    ),
    OpInfo(
        "mean",
        ref_reduce(np.mean),
        reduction_samples(),
        method=True,
        primitives=("Div", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "prod",
        lambda x, dim=None, keepdim=False: ref_reduce(np.prod)(x, dim, keepdim),
        prod_samples,
        method=True,
        primitives=("Prod",),
        supports_cuda=True,
    ),
    OpInfo(
        "amax",
        ref_reduce(np.max),
        reduction_samples(distinct),
        method=True,
        primitives=("Amax",),
        supports_cuda=True,
    ),
    OpInfo(
        "amin",
        ref_reduce(np.min),
        reduction_samples(distinct),
        method=True,
        primitives=("Amin",),
        supports_cuda=True,
    ),
    OpInfo(
        "max",
        ref_max_dim(np.max, np.argmax),
        max_min_samples,
        method=True,
        primitives=("Amax", "Argmax", "Gather", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "min",
        ref_max_dim(np.min, np.argmin),
        max_min_samples,
        method=True,
        primitives=("Amin", "Argmin", "Gather", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "argmax",
        ref_arg(np.argmax),
        arg_samples,
        method=True,
        supports_grad=False,
        dtypes="int64",
        primitives=("Argmax",),
        supports_cuda=True,
    ),
    OpInfo(
        "argmin",
        ref_arg(np.argmin),
        arg_samples,
        method=True,
        supports_grad=False,
        dtypes="int64",
        primitives=("Argmin",),
        supports_cuda=True,
    ),
    OpInfo(
        "logsumexp",
        ref_logsumexp,
        logsumexp_samples,
        method=True,
        primitives=("Logsumexp", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "norm",
        ref_norm,
        norm_samples,
        method=True,
        primitives=("Norm0", "Norm2", "NormP"),
        supports_cuda=True,
    ),
    OpInfo(
        "var",
        ref_var,
        var_samples,
        method=True,
        tol32=(1e-4, 1e-5),
        primitives=("Var",),
        supports_cuda=True,
    ),
    OpInfo(
        "std",
        ref_std,
        var_samples,
        method=True,
        tol32=(1e-4, 1e-5),
        primitives=("SafeSqrt", "Var"),
        supports_cuda=True,
    ),
    OpInfo(
        "all",
        ref_reduce(np.all),
        all_any_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("All",),
        supports_cuda=True,
    ),
    OpInfo(
        "any",
        ref_reduce(np.any),
        all_any_samples,
        method=True,
        supports_grad=False,
        dtypes="bool",
        primitives=("Any",),
        supports_cuda=True,
    ),
    OpInfo(
        "softmax",
        ref_softmax,
        softmax_samples,
        method=True,
        primitives=("Softmax",),
        supports_cuda=True,
    ),
    OpInfo(
        "log_softmax",
        ref_log_softmax,
        softmax_samples,
        method=True,
        primitives=("LogSoftmax",),
        supports_cuda=True,
    ),
    OpInfo(
        "cumsum",
        lambda x, dim: np.cumsum(x, axis=dim),
        cumsum_samples,
        method=True,
        primitives=("Cumsum",),
        supports_cuda=True,
    ),
    OpInfo(
        "cumprod",
        lambda x, dim: np.cumprod(x, axis=dim),
        cumprod_samples,
        method=True,
        primitives=("Cumprod",),
        supports_cuda=True,
    ),
    OpInfo(
        "nonzero",
        ref_nonzero,
        nonzero_samples,
        method=True,
        supports_grad=False,
        dtypes="int64",
        primitives=("Nonzero",),
        # the output shape depends on the data: no batching rule can exist, and vmap
        # raises (as PyTorch's); tests/test_batch_rules_shape.py checks the error
        supports_vmap=False,
        supports_cuda=True,
    ),
    OpInfo(
        "fill_",
        lambda x, value: np.full_like(x, value),
        lambda rng: [
            _s(real(rng, (3, 4)), 2.5, name="2d"),
            _s(real(rng, ()), -1.0, name="0d"),
        ],
        op=op_fill,
        primitives=("Clone", "Fill"),
        supports_cuda=True,
    ),
    OpInfo(
        "write_through_view",
        ref_write_through_view,
        lambda rng: [
            _s(real(rng, (3, 4)), name="2d"),
        ],
        op=op_write_through_view,
        primitives=("Add", "Index", "Mul", "Sum"),
        # in-place writes through a view of a transformed value raise NotImplementedError
        # under the transforms (tests/test_transforms.py checks the error)
        supports_jvp=False,
        supports_vmap=False,
        supports_cuda=True,
    ),
    OpInfo(
        "function_apply",
        lambda x: x * np.exp(x),
        unary_samples(real),
        op=op_function,
        primitives=("Exp", "Mul", "_FunctionApply"),
        supports_cuda=True,
    ),
    # ---- shape ----
    OpInfo(
        "reshape",
        lambda x, shape: x.reshape(shape),
        view_samples,
        method=True,
        variants={"method_varargs": lambda m, x, shape: x.reshape(*shape or ((),))},
        primitives=("Reshape",),
        supports_cuda=True,
    ),
    OpInfo(
        "view",
        lambda x, shape: x.reshape(shape),
        view_samples,
        op=lambda m, x, shape: x.view(shape),
        variants={"varargs": lambda m, x, shape: x.view(*shape or ((),))},
        primitives=("Reshape",),
        supports_cuda=True,
    ),
    OpInfo(
        "flatten",
        ref_flatten,
        lambda rng: [
            _s(real(rng, (3, 4)), name="2d"),
            _s(real(rng, (2, 3, 4)), start_dim=1, name="start1"),
            _s(real(rng, (2, 3, 4)), 0, 1, name="0to1"),
            _s(real(rng, ()), name="0d"),
        ],
        method=True,
        primitives=("Reshape",),
        supports_cuda=True,
    ),
    OpInfo(
        "unflatten",
        ref_unflatten,
        lambda rng: [
            _s(real(rng, (2, 12)), 1, (3, 4), name="dim1"),
            _s(real(rng, (12,)), 0, (3, -1), name="infer"),
            _s(real(rng, (6, 2)), -2, (2, 1, 3), name="neg_dim"),
        ],
        method=True,
        primitives=("Reshape",),
        supports_cuda=True,
    ),
    OpInfo(
        "transpose",
        lambda x, d0, d1: np.swapaxes(x, d0, d1),
        lambda rng: [
            _s(real(rng, (3, 4)), 0, 1, name="2d"),
            _s(real(rng, (2, 3, 4)), -1, 0, name="3d"),
            _s(real(rng, (2, 3, 4)), 1, 1, name="same_dim"),
        ],
        method=True,
        primitives=("Permute",),
        supports_cuda=True,
    ),
    OpInfo(
        "t",
        lambda x: x.T,
        lambda rng: [
            _s(real(rng, (3, 4)), name="2d"),
            _s(real(rng, (5,)), name="1d"),
            _s(real(rng, ()), name="0d"),
        ],
        method=True,
        primitives=("Permute",),
        supports_cuda=True,
    ),
    OpInfo(
        "permute",
        np.transpose,
        lambda rng: [
            _s(real(rng, (2, 3, 4)), (2, 0, 1), name="3d"),
            _s(real(rng, (3, 4)), (1, 0), name="2d"),
            _s(real(rng, (2, 3, 4)), (-1, -3, -2), name="negative"),
        ],
        variants={"method_varargs": lambda m, x, dims: x.permute(*dims)},
        primitives=("Permute",),
        supports_cuda=True,
    ),
    OpInfo(
        "movedim",
        np.moveaxis,
        lambda rng: [
            _s(real(rng, (2, 3, 4)), 0, -1, name="int"),
            _s(real(rng, (2, 3, 4)), (0, 1), (2, 0), name="tuple"),
            _s(real(rng, (2, 3)), 1, 0, name="small"),
        ],
        method=True,
        primitives=("Permute",),
        supports_cuda=True,
    ),
    OpInfo(
        "expand",
        ref_expand,
        lambda rng: [
            _s(real(rng, (3, 1)), 3, 4, name="2d"),
            _s(real(rng, (3, 1)), 2, 3, 4, name="new_leading"),
            _s(real(rng, (3, 1)), -1, 4, name="minus_one"),
            _s(real(rng, ()), 2, 3, name="0d"),
            _s(real(rng, (1, 4)), (3, 4), name="tuple"),
        ],
        op=lambda m, x, *sizes: x.expand(*sizes),
        primitives=("Expand",),
        supports_cuda=True,
    ),
    OpInfo(
        "expand_as",
        lambda x, other: np.broadcast_to(x, other.shape),
        lambda rng: [
            _s(real(rng, (3, 1)), np.zeros((2, 3, 4), dtype=np.int64), name="3d"),
            _s(real(rng, ()), np.zeros((2,), dtype=np.int64), name="0d"),
        ],
        op=lambda m, x, other: x.expand_as(other),
        primitives=("Expand",),
        supports_cuda=True,
    ),
    OpInfo(
        "broadcast_to",
        np.broadcast_to,
        lambda rng: [
            _s(real(rng, (3, 1)), (2, 3, 4), name="3d"),
            _s(real(rng, (4,)), (3, 4), name="leading"),
            _s(real(rng, ()), (2,), name="0d"),
        ],
        method=True,
        primitives=("Expand",),
        supports_cuda=True,
    ),
    OpInfo(
        "squeeze",
        ref_squeeze,
        lambda rng: [
            _s(real(rng, (3, 1, 4, 1)), name="all"),
            _s(real(rng, (3, 1, 4, 1)), 1, name="dim1"),
            _s(real(rng, (3, 1, 4, 1)), 0, name="non_unit_dim"),
            _s(real(rng, (3, 1, 4, 1)), (1, -1), name="tuple"),
            _s(real(rng, (1,)), name="to_0d"),
        ],
        method=True,
        primitives=("Reshape",),
        supports_cuda=True,
    ),
    OpInfo(
        "unsqueeze",
        np.expand_dims,
        lambda rng: [
            _s(real(rng, (3, 4)), 0, name="dim0"),
            _s(real(rng, (3, 4)), -1, name="dim-1"),
            _s(real(rng, (3, 4)), 1, name="dim1"),
            _s(real(rng, ()), 0, name="0d"),
        ],
        method=True,
        primitives=("Reshape",),
        supports_cuda=True,
    ),
    # ---- indexing ----
    OpInfo(
        "getitem",
        ref_getitem,
        getitem_samples,
        op=lambda m, x, key: x[key],
        primitives=("Index",),
        supports_cuda=True,
    ),
    OpInfo(
        "setitem",
        ref_setitem,
        setitem_samples,
        op=op_setitem,
        primitives=("Clone", "IndexPut"),
        supports_cuda=True,
    ),
    OpInfo(
        "index_select",
        lambda x, dim, idx: np.take(x, idx, axis=dim),
        index_select_samples,
        method=True,
        primitives=("Index", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "gather",
        ref_gather,
        gather_samples,
        method=True,
        primitives=("Gather",),
        supports_cuda=True,
    ),
    OpInfo(
        "scatter_add",
        ref_scatter_add,
        scatter_add_samples,
        method=True,
        primitives=("ScatterAdd",),
        supports_cuda=True,
    ),
    *(
        OpInfo(
            f"scatter_reduce_{r}",
            ref_scatter_reduce(r),
            scatter_reduce_samples,
            op=_op_scatter_reduce(r),
            primitives=("ScatterReduce",),
            supports_cuda=True,
        )
        for r in ("prod", "amax", "amin")
    ),
    OpInfo(
        "take_along_dim",
        ref_take_along_dim,
        take_along_dim_samples,
        method=True,
        primitives=("Expand", "Gather", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "cat",
        lambda xs, dim=0: np.concatenate(xs, axis=dim),
        cat_samples,
        variants={"tuple": lambda m, xs, *a, **k: m.cat(tuple(xs), *a, **k)},
        primitives=("Cat",),
        supports_cuda=True,
    ),
    OpInfo(
        "stack",
        lambda xs, dim=0: np.stack(xs, axis=dim),
        stack_samples,
        primitives=("Cat", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "split", ref_split, split_samples, method=True, primitives=("Index",), supports_cuda=True
    ),
    OpInfo(
        "chunk", ref_chunk, chunk_samples, method=True, primitives=("Index",), supports_cuda=True
    ),
    OpInfo(
        "flip",
        lambda x, dims: np.flip(x, axis=dims),
        lambda rng: [
            _s(real(rng, (5,)), (0,), name="1d"),
            _s(real(rng, (3, 4)), (0, 1), name="both"),
            _s(real(rng, (2, 3, 4)), (-1,), name="last"),
        ],
        method=True,
        primitives=("Flip",),
        supports_cuda=True,
    ),
    OpInfo(
        "roll",
        ref_roll,
        lambda rng: [
            _s(real(rng, (5,)), 2, name="1d"),
            _s(real(rng, (3, 4)), 1, 0, name="dim0"),
            _s(real(rng, (3, 4)), (1, -2), (0, 1), name="tuple"),
            _s(real(rng, (3, 4)), 5, name="flattened"),
        ],
        method=True,
        primitives=("Reshape", "Roll"),
        supports_cuda=True,
    ),
    OpInfo(
        "narrow",
        ref_narrow,
        lambda rng: [
            _s(real(rng, (5,)), 0, 1, 3, name="1d"),
            _s(real(rng, (3, 4)), 1, 2, 2, name="dim1"),
            _s(real(rng, (3, 4)), -2, 0, 1, name="neg_dim"),
        ],
        method=True,
        primitives=("Index",),
        supports_cuda=True,
    ),
    OpInfo(
        "diagonal",
        lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2),
        lambda rng: [
            _s(real(rng, (3, 4)), name="main"),
            _s(real(rng, (3, 4)), 1, name="offset1"),
            _s(real(rng, (3, 4)), offset=-1, name="offset-1"),
            _s(real(rng, (2, 3, 3)), 0, 1, 2, name="batched"),
        ],
        method=True,
        primitives=("Diagonal",),
        supports_cuda=True,
    ),
    OpInfo(
        "tril",
        lambda x, diagonal=0: np.tril(x, diagonal),
        lambda rng: [
            _s(real(rng, (3, 4)), name="2d"),
            _s(real(rng, (3, 4)), 1, name="k1"),
            _s(real(rng, (2, 3, 3)), diagonal=-1, name="batched"),
        ],
        method=True,
        primitives=("Tril",),
        supports_cuda=True,
    ),
    OpInfo(
        "triu",
        lambda x, diagonal=0: np.triu(x, diagonal),
        lambda rng: [
            _s(real(rng, (3, 4)), name="2d"),
            _s(real(rng, (3, 4)), -1, name="k-1"),
            _s(real(rng, (2, 3, 3)), diagonal=1, name="batched"),
        ],
        method=True,
        primitives=("Triu",),
        supports_cuda=True,
    ),
    OpInfo(
        "sort",
        ref_sort,
        sort_samples,
        method=True,
        dtypes=("same", "int64"),
        primitives=("Argsort", "Gather"),
        supports_cuda=True,
    ),
    OpInfo(
        "argsort",
        ref_argsort,
        sort_samples,
        method=True,
        supports_grad=False,
        dtypes="int64",
        primitives=("Argsort",),
        supports_cuda=True,
    ),
    OpInfo(
        "topk",
        ref_topk,
        topk_samples,
        method=True,
        dtypes=("same", "int64"),
        primitives=("Argsort", "Gather", "Index"),
        supports_cuda=True,
    ),
    # ---- linear algebra ----
    OpInfo(
        "matmul",
        np.matmul,
        matmul_samples,
        method=True,
        variants={"operator": lambda m, a, b: a @ b},
        primitives=("Matmul", "Mv", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "mv",
        np.matmul,
        lambda rng: [
            _s(real(rng, (3, 4)), real(rng, (4,)), name="2d"),
            _s(real(rng, (1, 1)), real(rng, (1,)), name="unit"),
            _s(real(rng, (0, 3)), real(rng, (3,)), name="empty-rows"),
        ],
        method=True,
        primitives=("Mv",),
        supports_cuda=True,
    ),
    OpInfo(
        "mm",
        np.matmul,
        lambda rng: [
            _s(real(rng, (3, 4)), real(rng, (4, 5)), name="2d"),
            _s(real(rng, (1, 4)), real(rng, (4, 1)), name="unit"),
        ],
        method=True,
        primitives=("Matmul",),
        supports_cuda=True,
    ),
    OpInfo(
        "bmm",
        np.matmul,
        lambda rng: [
            _s(real(rng, (2, 3, 4)), real(rng, (2, 4, 5)), name="3d"),
            _s(real(rng, (2, 1, 2)), real(rng, (2, 2, 3)), name="small"),
        ],
        method=True,
        primitives=("Matmul",),
        supports_cuda=True,
    ),
    OpInfo(
        "dot",
        np.dot,
        lambda rng: [
            _s(real(rng, (4,)), real(rng, (4,)), name="1d"),
        ],
        method=True,
        primitives=("Matmul", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "outer",
        np.outer,
        lambda rng: [
            _s(real(rng, (3,)), real(rng, (4,)), name="1d"),
            _s(real(rng, (1,)), real(rng, (5,)), name="unit"),
            _s(real(rng, (0,)), real(rng, (2,)), name="empty"),
        ],
        method=True,
        primitives=("Outer",),
        supports_cuda=True,
    ),
    OpInfo(
        "einsum",
        np.einsum,
        einsum_samples,
        variants={"list": lambda m, eq, *ops: m.einsum(eq, list(ops))},
        primitives=("Diagonal", "Einsum"),
        supports_cuda=True,
    ),
]

# Entries of the wider surface (numbagrad.special, numbagrad.linalg, the extra top-level
# math and nn.functional) live in their own modules, one per namespace, and join here.
from _opdb_complex import op_db as _complex_db  # noqa: E402
from _opdb_linalg import op_db as _linalg_db  # noqa: E402
from _opdb_math import op_db as _math_db  # noqa: E402
from _opdb_nn import op_db as _nn_db  # noqa: E402
from _opdb_rnn import op_db as _rnn_db  # noqa: E402
from _opdb_special import op_db as _special_db  # noqa: E402

op_db += _math_db + _special_db + _linalg_db + _nn_db + _complex_db
op_db += _rnn_db

from _opdb_conv import op_db as _conv_db  # noqa: E402

op_db += _conv_db

from _opdb_names import op_db as _names_db  # noqa: E402

op_db += _names_db

ops_by_name = {info.name: info for info in op_db}
assert len(ops_by_name) == len(op_db), "duplicate OpInfo names"
