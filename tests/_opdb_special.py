"""Op database entries for numbagrad.special (special functions) (joined into ``_opdb.op_db``).

Entries are named ``special.<name>`` (the torch.special spelling, which both libraries
have); the top-level spellings and Tensor methods PyTorch also has are variants. The
references are written here from textbook series with NumPy and ``math`` only (no SciPy):
power series for the Bessel functions and the incomplete gamma function, Euler-Maclaurin
for the Hurwitz zeta function, recurrence plus asymptotic series for digamma, Newton's
method for the inverses; the kernels use different algorithms (Chebyshev and rational
approximations), so agreement checks both.
"""

import math

import numpy as np
from _opdb import UNARY_SHAPES, OpInfo, SampleInput, nonzero, positive, real

_s = SampleInput


def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


# -- references ------------------------------------------------------------------------------
_erf = _vec(math.erf)
_erfc = _vec(math.erfc)
_lgamma = _vec(math.lgamma)


def _erfinv1(y):
    x = 0.0
    for _ in range(60):  # Newton from 0 (erf is concave for x > 0: monotone convergence)
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _digamma1(x):
    r = 0.0
    while x < 20:
        r -= 1 / x
        x += 1
    z = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z / 240)))


def _hurwitz1(s, q):
    # direct sum to N, then Euler-Maclaurin for the tail
    n = 40
    total = sum((q + k) ** -s for k in range(n))
    a = q + n
    tail = a ** (1 - s) / (s - 1) + 0.5 * a**-s
    fact = s * a ** (-s - 1)
    for b2k, k2 in ((1 / 6, 2), (-1 / 30, 4), (1 / 42, 6), (-1 / 30, 8)):
        tail += b2k / math.factorial(k2) * fact
        fact *= (s + k2 - 1) * (s + k2) / (a * a)
    return total + tail


def _polygamma1(n, x):
    if n == 0:
        return _digamma1(x)
    return (-1) ** (n + 1) * math.factorial(n) * _hurwitz1(n + 1, x)


def _bessel_series(x, nu, sign):
    """``sum_k sign^k (x/2)^(2k+nu) / (k! (k+nu)!)``: I_nu for sign=1, J_nu for sign=-1."""
    t = (x / 2) ** nu / math.factorial(nu)
    total = t
    for k in range(1, 80):
        t *= sign * (x / 2) ** 2 / (k * (k + nu))
        total += t
    return total


def _gammainc1(a, x):
    # P(a, x) = x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a+1)...(a+k))
    term = 1.0
    total = 1.0
    for k in range(1, 300):
        term *= x / (a + k)
        total += term
    return math.exp(a * math.log(x) - x - math.lgamma(a + 1)) * total


def _ndtr(x):
    return 0.5 * _erfc(-x / math.sqrt(2))


def _ndtri1(y):
    x = 0.0
    for _ in range(60):
        x -= (0.5 * math.erfc(-x / math.sqrt(2)) - y) / (
            math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        )
    return x


def ref_xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, x * np.log(y))


def ref_xlog1py(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, x * np.log1p(y))


def ref_mvlgamma(x, p):
    return sum(_lgamma(x - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(math.pi)


def ref_logit(x, eps=None):
    if eps is not None:
        x = np.where(x < eps, eps, np.where(x > 1 - eps, 1 - eps, x))
    return np.log(x / (1 - x))


def ref_logsumexp(x, dim, keepdim=False):
    m = np.max(x, axis=dim, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def ref_softmax(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


# -- domains -----------------------------------------------------------------------------------
def _interval(low, high):
    def dom(rng, shape):
        return real(rng, shape, low, high)

    return dom


def _pools(*intervals):
    """Uniform over a union of intervals (keeps samples off kinks between them)."""

    def dom(rng, shape):
        which = rng.integers(0, len(intervals), shape)
        out = np.empty(shape)
        for i, (lo, hi) in enumerate(intervals):
            out = np.where(which == i, rng.uniform(lo, hi, shape), out)
        return np.asarray(out, dtype=np.float64)

    return dom


def _unary_samples(domain):
    def gen(rng):
        return [_s(domain(rng, s), name=str(s)) for s in UNARY_SHAPES]

    return gen


def _special(name, ref, domain=real, top=None, method=False, primitives=None, **kw):
    """An entry for ``special.<name>``; ``top`` is the top-level name (also a variant, and a
    method when ``method``)."""
    variants = {}
    if top is not None:
        variants["toplevel"] = lambda m, x: getattr(m, top)(x)
        if method:
            variants["method"] = lambda m, x: getattr(x, top)()
    if primitives is None:
        primitives = ("".join(p.capitalize() for p in name.split("_")),)
    return OpInfo(
        f"special.{name}",
        ref,
        _unary_samples(domain),
        op=lambda m, x: getattr(m.special, name)(x),
        variants=variants,
        primitives=primitives,
        **kw,
    )


def _polygamma_samples(rng):
    return [
        _s(n, positive(rng, s, 0.5, 3.0), name=f"n={n}:{s}")
        for n, s in ((0, (5,)), (1, ()), (1, (3, 4)), (2, (5,)), (3, (5,)))
    ]


def _mvlgamma_samples(rng):
    return [
        _s(real(rng, s, 1.3, 3.0), p, name=f"p={p}:{s}")
        for p, s in ((1, (5,)), (2, ()), (3, (3, 4)))
    ]


def _logit_samples(rng):
    dom = _pools((0.02, 0.15), (0.3, 0.7), (0.85, 0.98))
    return [
        _s(real(rng, (5,), 0.1, 0.9), name="plain"),
        _s(real(rng, (3, 4), 0.1, 0.9), name="2d"),
        _s(dom(rng, (3, 4)), eps=0.2, name="eps"),
    ]


def _xlogy_samples(low):
    def gen(rng):
        x = real(rng, (3, 4))
        x[0, 0] = 0.0  # the x == 0 branch (its gradient in x is log(y), unmasked for y > 0)
        return [
            _s(x, real(rng, (3, 4), low, 2.0), name="same"),
            _s(real(rng, (3, 1)), real(rng, (4,), low, 2.0), name="broadcast"),
            _s(real(rng, ()), real(rng, (5,), low, 2.0), name="0d"),
            _s(2.5, real(rng, (5,), low, 2.0), name="scalar_x"),
            _s(real(rng, (5,)), 1.5, name="scalar_y"),
        ]

    return gen


def _second_arg_samples(a_low, a_high, x_low, x_high):
    """Samples for gammainc/gammaincc/zeta, differentiable in the second argument only: the
    first is a float (made a tensor without grad by the op variant)."""

    def gen(rng):
        return [
            _s(float(rng.uniform(a_low, a_high)), real(rng, s, x_low, x_high), name=str(s))
            for s in ((), (5,), (3, 4))
        ]

    return gen


def _tensor_first(fn):
    """``fn(full_like(x, a), x)``: the first argument a tensor that needs no gradient."""

    def op(m, a, x):
        return getattr(m.special, fn)(m.full_like(x, a), x)

    return op


def _int_first_samples(a_values, x_low, x_high):
    """Both operands tensors, broadcasting; the first integer-valued (an int64 tensor, so
    the tests give it no gradient: PyTorch has none for it, see test_special.py)."""

    def gen(rng):
        return [
            _s(
                rng.choice(a_values, (3, 1)).astype(np.int64),
                real(rng, (4,), x_low, x_high),
                name="broadcast",
            ),
            _s(
                rng.choice(a_values, (5,)).astype(np.int64),
                real(rng, (5,), x_low, x_high),
                name="same",
            ),
        ]

    return gen


def _gamma_icdf1(a, u):
    # bisection on log x of the series P(a, x) = u (P increases with x)
    lo, hi = math.log(1e-12), math.log(60.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _gammainc1(a, math.exp(mid)) < u:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


_TINY64 = float(np.finfo(np.float64).tiny)


def _torch_gamma_icdf(m, a, u):
    """The same inverse in torch: bisection on ``torch.special.gammainc``; its gradient
    ``-(dP/da) / pdf`` (dP/da by a central difference) and ``1 / pdf``, independent of
    torch's approximate ``_standard_gamma_grad``; computed in float64 and rounded to the
    inputs' dtype (float16 runs too)."""

    class Icdf(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, u):
            a_, u_ = m.broadcast_tensors(a.double(), u.double())
            # the bracket spans the float64 range: from the smallest normal float (where
            # numbagrad clamps the draws, as PyTorch's sampler) to 1e300
            lo = m.full_like(a_, math.log(_TINY64))
            hi = m.full_like(a_, math.log(1e300))
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                below = m.special.gammainc(a_, mid.exp()) < u_
                lo, hi = m.where(below, mid, lo), m.where(below, hi, mid)
            x = (0.5 * (lo + hi)).exp()
            # outside the domain the bisection would stop at a bracket end: P^-1(a, 1) is
            # inf, P^-1(a, 0) the clamp, and u outside [0, 1], a <= 0 or a NaN are NaN
            x = m.where(u_ == 0, m.full_like(x, _TINY64), m.where(u_ == 1, math.inf, x))
            x = m.where(m.isinf(a_) & (u_ > 0), math.inf, x)  # (the limit a -> inf)
            bad = (u_ < 0) | (u_ > 1) | ~(a_ > 0) | m.isnan(u_)
            x = m.where(bad, math.nan, x)
            ctx.save_for_backward(a_, x)
            ctx.dtypes = (a.dtype, u.dtype)
            return x.to(m.promote_types(a.dtype, u.dtype))

        @staticmethod
        def backward(ctx, g):
            a, x = ctx.saved_tensors
            g = g.double()
            pdf = ((a - 1) * x.log() - x - m.lgamma(a)).exp()
            h = 1e-5 * a
            dp = (m.special.gammainc(a + h, x) - m.special.gammainc(a - h, x)) / (2 * h)
            return (-g * dp / pdf).to(ctx.dtypes[0]), (g / pdf).to(ctx.dtypes[1])

    return Icdf.apply(a, u)


_gammainc = _vec(_gammainc1)

op_db = [
    _special("erf", _erf, primitives=("Erf",), supports_cuda=True),
    _special("erfc", _erfc, top="erfc", method=True, supports_cuda=True),
    _special("erfcx", lambda x: np.exp(x * x) * _erfc(x), _interval(-1.5, 3.0), supports_cuda=True),
    _special(
        "erfinv",
        _vec(_erfinv1),
        _interval(-0.9, 0.9),
        top="erfinv",
        method=True,
        supports_cuda=True,
    ),
    _special("expit", lambda x: 1 / (1 + np.exp(-x)), primitives=("Sigmoid",), supports_cuda=True),
    _special("exp2", lambda x: 2.0**x, primitives=("Exp2",), supports_cuda=True),
    _special("expm1", np.expm1, primitives=("Expm1",), supports_cuda=True),
    _special("log1p", np.log1p, _interval(-0.5, 2.0), primitives=("Log1p",), supports_cuda=True),
    _special(
        "gammaln",
        _lgamma,
        lambda r, s: positive(r, s, 0.3, 4.0),
        top="lgamma",
        method=True,
        primitives=("Lgamma",),
        supports_cuda=True,
    ),
    _special(
        "digamma",
        _vec(_digamma1),
        lambda r, s: positive(r, s, 0.3, 4.0),
        top="digamma",
        method=True,
        supports_cuda=True,
    ),
    _special(
        "psi",
        _vec(_digamma1),
        lambda r, s: positive(r, s, 0.3, 4.0),
        primitives=("Digamma",),
        supports_cuda=True,
    ),
    _special(
        "i0",
        _vec(lambda x: _bessel_series(x, 0, 1)),
        top="i0",
        method=True,
        primitives=("I0",),
        supports_cuda=True,
    ),
    _special(
        "i0e",
        _vec(lambda x: math.exp(-abs(x)) * _bessel_series(x, 0, 1)),
        nonzero,
        primitives=("I0e",),
        supports_cuda=True,
    ),
    _special("i1", _vec(lambda x: _bessel_series(x, 1, 1)), primitives=("I1",), supports_cuda=True),
    _special(
        "i1e",
        _vec(lambda x: math.exp(-abs(x)) * _bessel_series(x, 1, 1)),
        nonzero,
        primitives=("I1e",),
        supports_cuda=True,
    ),
    # not differentiable in PyTorch either (NOTE [Special-function gradients]); |x| < 5:
    # beyond, torch 2.13's J0/J1 are off by up to 2e-7 (test_special.py checks ours there)
    _special(
        "bessel_j0",
        _vec(lambda x: _bessel_series(x, 0, -1)),
        _interval(-4.9, 4.9),
        supports_grad=False,
        supports_jvp=False,
        primitives=("BesselJ0",),
        supports_cuda=True,
    ),
    _special(
        "bessel_j1",
        _vec(lambda x: _bessel_series(x, 1, -1)),
        _interval(-4.9, 4.9),
        supports_grad=False,
        supports_jvp=False,
        primitives=("BesselJ1",),
        supports_cuda=True,
    ),
    _special("ndtr", _ndtr, _interval(-3.0, 3.0), supports_cuda=True),
    _special("ndtri", _vec(_ndtri1), _interval(0.05, 0.95), supports_cuda=True),
    _special(
        "log_ndtr",
        lambda x: np.log(_ndtr(x)),
        _interval(-4.0, 3.0),
        primitives=("LogNdtr",),
        supports_cuda=True,
    ),
    _special("entr", lambda x: -x * np.log(x), positive, supports_cuda=True),
    _special("sinc", np.sinc, top="sinc", method=True, primitives=("Sinc",), supports_cuda=True),
    OpInfo(
        "special.polygamma",
        _vec(_polygamma1),
        _polygamma_samples,
        op=lambda m, n, x: m.special.polygamma(n, x),
        variants={
            "toplevel": lambda m, n, x: m.polygamma(n, x),
            "method": lambda m, n, x: x.polygamma(n),
        },
        primitives=("Polygamma",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.multigammaln",
        ref_mvlgamma,
        _mvlgamma_samples,
        op=lambda m, x, p: m.special.multigammaln(x, p),
        variants={
            "toplevel": lambda m, x, p: m.mvlgamma(x, p),
            "method": lambda m, x, p: x.mvlgamma(p),
        },
        primitives=("Add", "Lgamma", "Reshape", "Sum"),
        supports_cuda=True,
    ),
    OpInfo(
        "special.logit",
        ref_logit,
        _logit_samples,
        op=lambda m, x, **kw: m.special.logit(x, **kw),
        variants={
            "toplevel": lambda m, x, **kw: m.logit(x, **kw),
            "method": lambda m, x, **kw: x.logit(**kw),
        },
        tol32=(1e-5, 1e-4),
        primitives=("Logit",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.xlogy",
        ref_xlogy,
        _xlogy_samples(0.3),
        op=lambda m, x, y: m.special.xlogy(x, y),
        variants={"toplevel": lambda m, x, y: m.xlogy(x, y)},
        primitives=("Xlogy",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.xlog1py",
        ref_xlog1py,
        _xlogy_samples(-0.7),
        op=lambda m, x, y: m.special.xlog1py(x, y),
        primitives=("Xlog1py",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.gammainc",
        _gammainc,
        _second_arg_samples(0.5, 3.0, 0.2, 4.0),
        op=_tensor_first("gammainc"),
        primitives=("Gammainc",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.gammaincc",
        lambda a, x: 1 - _gammainc(a, x),
        _second_arg_samples(0.5, 3.0, 0.2, 4.0),
        op=_tensor_first("gammaincc"),
        primitives=("Gammaincc",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.zeta",
        _vec(_hurwitz1),
        _second_arg_samples(1.5, 4.0, 0.3, 3.0),
        op=lambda m, s, q: m.special.zeta(s, q),
        primitives=("Zeta",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.gammainc_int_a",
        _gammainc,
        _int_first_samples((1, 2, 3), 0.2, 4.0),
        op=lambda m, a, x: m.special.gammainc(a, x),
        primitives=("Gammainc",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.zeta_int_s",
        _vec(_hurwitz1),
        _int_first_samples((2, 3, 4), 0.3, 3.0),
        op=lambda m, s, q: m.special.zeta(s, q),
        primitives=("Zeta",),
        supports_cuda=True,
    ),
    OpInfo(
        "ops.standard_gamma_icdf",
        _vec(_gamma_icdf1),
        lambda rng: (
            [
                _s(positive(rng, s, 0.5, 3.0), real(rng, s, 0.1, 0.9), name=str(s))
                for s in ((), (5,), (3, 4))
            ]
            + [_s(positive(rng, (3, 1), 0.5, 3.0), real(rng, (4,), 0.1, 0.9), name="broadcast")]
        ),
        op=lambda m, a, u: m.ops.standard_gamma_icdf(a, u),
        torch_op=_torch_gamma_icdf,
        primitives=("StandardGammaIcdf",),
        # the gradient's own derivative is not implemented (PyTorch's _standard_gamma_grad
        # has none either); not on CUDA: the kernels are CPU-only (docs/gpu.rst)
        supports_gradgrad=False,
    ),
    OpInfo(
        "special.round",
        lambda x, decimals=0: np.round(x, decimals),
        lambda rng: [
            _s(real(rng, (3, 4), -3.0, 3.0) + 0.0013, decimals=2, name="d2"),
            _s(real(rng, (5,), -300.0, 300.0) + 13.0, decimals=-1, name="d-1"),
        ],
        op=lambda m, x, **kw: m.special.round(x, **kw),
        primitives=("Div", "Mul", "Round"),
        supports_cuda=True,
    ),
    OpInfo(
        "special.logsumexp",
        ref_logsumexp,
        lambda rng: [
            _s(real(rng, (3, 4)), 1, name="dim1"),
            _s(real(rng, (3, 4)), 0, keepdim=True, name="keepdim"),
        ],
        op=lambda m, x, dim, **kw: m.special.logsumexp(x, dim, **kw),
        primitives=("Logsumexp", "Reshape"),
        supports_cuda=True,
    ),
    OpInfo(
        "special.softmax",
        ref_softmax,
        lambda rng: [_s(real(rng, (3, 4)), 1, name="dim1")],
        op=lambda m, x, dim: m.special.softmax(x, dim),
        primitives=("Softmax",),
        supports_cuda=True,
    ),
    OpInfo(
        "special.log_softmax",
        lambda x, dim: np.log(ref_softmax(x, dim)),
        lambda rng: [_s(real(rng, (3, 4)), 0, name="dim0")],
        op=lambda m, x, dim: m.special.log_softmax(x, dim),
        primitives=("LogSoftmax",),
        supports_cuda=True,
    ),
]
