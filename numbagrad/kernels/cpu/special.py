"""Special-function kernels: the forward maps of ``numbagrad.special`` that NumPy has no
ufunc for (error-function family, gamma family, Bessel functions, normal distribution,
incomplete gamma, Hurwitz zeta).

NOTE [Special-function kernels]
Every scalar formula here takes and returns a float64 (float32 inputs are computed in
float64 by the caller and rounded once on the way out, so float32 results are correctly
rounded up to the last bit of the float64 formula). The map kernels loop over flat,
contiguous float64 arrays and pick the formula by an integer code (one compiled kernel
for all unary maps rather than one per function: the branch costs nothing next to the
transcendental calls, and one specialisation compiles and caches once). Kernels use NumPy's
error model (``error_model="numpy"``): a division by zero at a pole gives inf or NaN, as
in C, instead of raising ``ZeroDivisionError``. What each kernel
assumes is in its docstring; nothing of it is checked here (Numba does no bounds
checks), so ``numbagrad/ops/special.py`` validates and flattens before calling.

Algorithms (accuracy measured against PyTorch 2.13 in float64 on dense grids in
``tests/test_special.py``):

- ``i0``/``i0e``/``i1``/``i1e``: Cephes' Chebyshev expansions on [0, 8] and (8, inf).
- ``bessel_j0``/``bessel_j1``: Cephes' rational approximations (|x| <= 5) and Hankel
  asymptotic forms (|x| > 5).
- ``ndtri``: Cephes' three rational approximations in ``y`` and in ``sqrt(-2 log y)``.
- ``erfinv``: a rational first guess refined by Newton steps on ``erf`` (``erfc`` when
  ``|y| > 0.5``, so that ``1 - |y|`` keeps its relative accuracy).
- ``erfcx``: ``exp(x*x) * erfc(x)`` with ``x*x`` split exactly (Dekker) so the large
  factor carries no rounding of ``x*x``, then Laplace's continued fraction from x = 25
  (where ``erfc`` underflows).
- ``digamma``: reflection for x < 0, recurrence up to x >= 10, asymptotic series.
- ``polygamma(n >= 1)``: ``(-1)^(n+1) n! zeta(n+1, x)``; trigamma uses the reflection
  ``pi^2 / sin^2(pi x) - psi1(1 - x)`` below 1/2, with ``sin(pi x)`` of the unreduced ``x``
  in the input's precision as PyTorch's (large finite values at the poles, not inf).
- ``zeta``: the Hurwitz zeta function by Euler-Maclaurin summation (Cephes).
- ``gammainc``/``gammaincc``: the power series (DLMF 8.11.4), the complementary series
  (8.7.3) for small ``x``, and the continued fraction (Cephes ``igamc``), chosen as SciPy
  does, with the prefactor ``x^a e^-x / Gamma(a)`` from a Lanczos sum when ``a ~ x``. There
  is no uniform asymptotic (Temme) expansion: near ``x ~ a`` the series and the fraction
  take ~sqrt(a) terms (slow for ``a`` beyond ~1e8), and beyond ``a ~ 1e3`` their
  rounding costs ~1e-11 relative.
"""

import math

import numpy as np

from numbagrad.kernels.cpu._jit import njit

__all__ = [
    "BINARY_CODES",
    "UNARY_CODES",
    "polygamma_forward",
    "special_binary",
    "special_unary",
]

# codes of ``special_unary`` and ``special_binary`` (the op layer names them)
UNARY_CODES = {
    name: i
    for i, name in enumerate(
        (
            "erfc",
            "erfcx",
            "erfinv",
            "lgamma",
            "digamma",
            "i0",
            "i0e",
            "i1",
            "i1e",
            "bessel_j0",
            "bessel_j1",
            "ndtri",
            "log_ndtr",
            "ndtr",
            "entr",
        )
    )
}
BINARY_CODES = {"gammainc": 0, "gammaincc": 1, "zeta": 2}

_INF = math.inf
_NAN = math.nan
_MACHEP = 1.11022302462515654042e-16
_SQRT_PI = math.sqrt(math.pi)
_INV_SQRT_PI = 1 / math.sqrt(math.pi)
_SQRT1_2 = math.sqrt(0.5)

# -- Chebyshev coefficients (Cephes), highest order first ------------------------------------
# exp(-x) I0(x) on [0, 8]
_I0_A = np.array(
    [
        -4.41534164647933937950e-18,
        3.33079451882223809783e-17,
        -2.43127984654795469359e-16,
        1.71539128555513303061e-15,
        -1.16853328779934516808e-14,
        7.67618549860493561688e-14,
        -4.85644678311192946090e-13,
        2.95505266312963983461e-12,
        -1.72682629144155570723e-11,
        9.67580903537323691224e-11,
        -5.18979560163526290666e-10,
        2.65982372468238665035e-09,
        -1.30002500998624804212e-08,
        6.04699502254191894932e-08,
        -2.67079385394061173391e-07,
        1.11738753912010371815e-06,
        -4.41673835845875056359e-06,
        1.64484480707288970893e-05,
        -5.75419501008210370398e-05,
        1.88502885095841655729e-04,
        -5.76375574538582365885e-04,
        1.63947561694133579842e-03,
        -4.32430999505057594430e-03,
        1.05464603945949983183e-02,
        -2.37374148058994688156e-02,
        4.93052842396707084878e-02,
        -9.49010970480476444210e-02,
        1.71620901522208775349e-01,
        -3.04682672343198398683e-01,
        6.76795274409476084995e-01,
    ]
)
# exp(-x) sqrt(x) I0(x) on (8, inf), in 32/x - 2
_I0_B = np.array(
    [
        -7.23318048787475395456e-18,
        -4.83050448594418207126e-18,
        4.46562142029675999901e-17,
        3.46122286769746109310e-17,
        -2.82762398051658348494e-16,
        -3.42548561967721913462e-16,
        1.77256013305652638360e-15,
        3.81168066935262242075e-15,
        -9.55484669882830764870e-15,
        -4.15056934728722208663e-14,
        1.54008621752140982691e-14,
        3.85277838274214270114e-13,
        7.18012445138366623367e-13,
        -1.79417853150680611778e-12,
        -1.32158118404477131188e-11,
        -3.14991652796324136454e-11,
        1.18891471078464383424e-11,
        4.94060238822496958910e-10,
        3.39623202570838634515e-09,
        2.26666899049817806459e-08,
        2.04891858946906374183e-07,
        2.89137052083475648297e-06,
        6.88975834691682398426e-05,
        3.36911647825569408990e-03,
        8.04490411014108831608e-01,
    ]
)
# exp(-x) I1(x) / x on [0, 8]
_I1_A = np.array(
    [
        2.77791411276104639959e-18,
        -2.11142121435816608115e-17,
        1.55363195773620046921e-16,
        -1.10559694773538630805e-15,
        7.60068429473540693410e-15,
        -5.04218550472791168711e-14,
        3.22379336594557470981e-13,
        -1.98397439776494371520e-12,
        1.17361862988909016308e-11,
        -6.66348972350202774223e-11,
        3.62559028155211703701e-10,
        -1.88724975172282928790e-09,
        9.38153738649577178388e-09,
        -4.44505912879632808065e-08,
        2.00329475355213526229e-07,
        -8.56872026469545474066e-07,
        3.47025130813767847674e-06,
        -1.32731636560394358279e-05,
        4.78156510755005422638e-05,
        -1.61760815825896745588e-04,
        5.12285956168575772895e-04,
        -1.51357245063125314899e-03,
        4.15642294431288815669e-03,
        -1.05640848946261981558e-02,
        2.47264490306265168283e-02,
        -5.29459812080949914269e-02,
        1.02643658689847095384e-01,
        -1.76416518357834055153e-01,
        2.52587186443633654823e-01,
    ]
)
# exp(-x) sqrt(x) I1(x) on (8, inf), in 32/x - 2
_I1_B = np.array(
    [
        7.51729631084210481353e-18,
        4.41434832307170791151e-18,
        -4.65030536848935832153e-17,
        -3.20952592199342395980e-17,
        2.96262899764595013876e-16,
        3.30820231092092828324e-16,
        -1.88035477551078244854e-15,
        -3.81440307243700780478e-15,
        1.04202769841288027642e-14,
        4.27244001671195135429e-14,
        -2.10154184277266431302e-14,
        -4.08355111109219731823e-13,
        -7.19855177624590851209e-13,
        2.03562854414708950722e-12,
        1.41258074366137813316e-11,
        3.25260358301548823856e-11,
        -1.89749581235054123450e-11,
        -5.58974346219658380687e-10,
        -3.83538038596423702205e-09,
        -2.63146884688951950684e-08,
        -2.51223623787020892529e-07,
        -3.88256480887769039346e-06,
        -1.10588938762623716291e-04,
        -9.76109749136146840777e-03,
        7.78576235018280120474e-01,
    ]
)

# -- rational coefficients (Cephes), highest order first --------------------------------------
_J0_PP = np.array(
    [
        7.96936729297347051624e-04,
        8.28352392107440799803e-02,
        1.23953371646414299388e00,
        5.44725003058768775090e00,
        8.74716500199817011941e00,
        5.30324038235394892183e00,
        9.99999999999999997821e-01,
    ]
)
_J0_PQ = np.array(
    [
        9.24408810558863637013e-04,
        8.56288474354474431428e-02,
        1.25352743901058953537e00,
        5.47097740330417105182e00,
        8.76190883237069594232e00,
        5.30605288235394617618e00,
        1.00000000000000000218e00,
    ]
)
_J0_QP = np.array(
    [
        -1.13663838898469149931e-02,
        -1.28252718670509318512e00,
        -1.95539544257735972385e01,
        -9.32060152123768231369e01,
        -1.77681167980488050595e02,
        -1.47077505154951170175e02,
        -5.14105326766599330220e01,
        -6.05014350600728481186e00,
    ]
)
_J0_QQ = np.array(
    [
        1.0,
        6.43178256118178023184e01,
        8.56430025976980587198e02,
        3.88240183605401609683e03,
        7.24046774195652478189e03,
        5.93072701187316984827e03,
        2.06209331660327847417e03,
        2.42005740240291393179e02,
    ]
)
_J0_RP = np.array(
    [
        -4.79443220978201773821e09,
        1.95617491946556577543e12,
        -2.49248344360967716204e14,
        9.70862251047306323952e15,
    ]
)
_J0_RQ = np.array(
    [
        1.0,
        4.99563147152651017219e02,
        1.73785401676374683123e05,
        4.84409658339962045305e07,
        1.11855537045356834862e10,
        2.11277520115489217587e12,
        3.10518229857422583814e14,
        3.18121955943204943306e16,
        1.71086294081043136091e18,
    ]
)
_J1_PP = np.array(
    [
        7.62125616208173112003e-04,
        7.31397056940917570436e-02,
        1.12719608129684925192e00,
        5.11207951146807644818e00,
        8.42404590141772420927e00,
        5.21451598682361504063e00,
        1.00000000000000000254e00,
    ]
)
_J1_PQ = np.array(
    [
        5.71323128072548699714e-04,
        6.88455908754495404082e-02,
        1.10514232634061696926e00,
        5.07386386128601488557e00,
        8.39985554327604159757e00,
        5.20982848682361821619e00,
        9.99999999999999997461e-01,
    ]
)
_J1_QP = np.array(
    [
        5.10862594750176621635e-02,
        4.98213872951233449420e00,
        7.58238284132545283818e01,
        3.66779609360150777800e02,
        7.10856304998926107277e02,
        5.97489612400613639965e02,
        2.11688757100572135698e02,
        2.52070205858023719784e01,
    ]
)
_J1_QQ = np.array(
    [
        1.0,
        7.42373277035675149943e01,
        1.05644886038262816351e03,
        4.98641058337653607651e03,
        9.56231892404756170795e03,
        7.99704160447350683650e03,
        2.82619278517639096600e03,
        3.36093607810698293419e02,
    ]
)
_J1_RP = np.array(
    [
        -8.99971225705559398224e08,
        4.52228297998194034323e11,
        -7.27494245221818276015e13,
        3.68295732863852883286e15,
    ]
)
_J1_RQ = np.array(
    [
        1.0,
        6.20836478118054335476e02,
        2.56987256757748830383e05,
        8.35146791431949253037e07,
        2.21511595479792499675e10,
        4.74914122079991414898e12,
        7.84369607876235854894e14,
        8.95222336184627338078e16,
        5.32278620332680085395e18,
    ]
)

# ndtri: |y - 1/2| <= 3/8; then z = sqrt(-2 log y) in [2, 8) and [8, 64)
_NDTRI_P0 = np.array(
    [
        -5.99633501014107895267e1,
        9.80010754185999661536e1,
        -5.66762857469070293439e1,
        1.39312609387279679503e1,
        -1.23916583867381258016e0,
    ]
)
_NDTRI_Q0 = np.array(
    [
        1.0,
        1.95448858338141759834e0,
        4.67627912898881538453e0,
        8.63602421390890590575e1,
        -2.25462687854119370527e2,
        2.00260212380060660359e2,
        -8.20372256168333339912e1,
        1.59056225126211695515e1,
        -1.18331621121330003142e0,
    ]
)
_NDTRI_P1 = np.array(
    [
        4.05544892305962419923e0,
        3.15251094599893866154e1,
        5.71628192246421288162e1,
        4.40805073893200834700e1,
        1.46849561928858024014e1,
        2.18663306850790267539e0,
        -1.40256079171354495875e-1,
        -3.50424626827848203418e-2,
        -8.57456785154685413611e-4,
    ]
)
_NDTRI_Q1 = np.array(
    [
        1.0,
        1.57799883256466749731e1,
        4.53907635128879210584e1,
        4.13172038254672030440e1,
        1.50425385692907503408e1,
        2.50464946208309415979e0,
        -1.42182922854787788574e-1,
        -3.80806407691578277194e-2,
        -9.33259480895457427372e-4,
    ]
)
_NDTRI_P2 = np.array(
    [
        3.23774891776946035970e0,
        6.91522889068984211695e0,
        3.93881025292474443415e0,
        1.33303460815807542389e0,
        2.01485389549179081538e-1,
        1.23716634817820021358e-2,
        3.01581553508235416007e-4,
        2.65806974686737550832e-6,
        6.23974539184983293730e-9,
    ]
)
_NDTRI_Q2 = np.array(
    [
        1.0,
        6.02427039364742014255e0,
        3.67983563856160859403e0,
        1.37702099489081330271e0,
        2.16236993594496635890e-1,
        1.34204006088543189037e-2,
        3.28014464682127739104e-4,
        2.89247864745380683936e-6,
        6.79019408009981274425e-9,
    ]
)

# digamma's asymptotic series in 1/x^2 (Bernoulli numbers B_2k / 2k), highest order first
_PSI_A = np.array(
    [
        8.33333333333333333333e-2,
        -2.10927960927960927961e-2,
        7.57575757575757575758e-3,
        -4.16666666666666666667e-3,
        3.96825396825396825397e-3,
        -8.33333333333333333333e-3,
        8.33333333333333333333e-2,
    ]
)
_PSI_10 = 2.25175258906672110764  # digamma(10)

# Euler-Maclaurin coefficients of the Hurwitz zeta function: (2k)! / B_2k
_ZETA_A = np.array(
    [
        12.0,
        -720.0,
        30240.0,
        -1209600.0,
        47900160.0,
        -1.8924375803183791606e9,
        7.47242496e10,
        -2.950130727918164224e12,
        1.1646782814350067249e14,
        -4.5979787224074726105e15,
        1.8152105401943546773e17,
        -7.1661652561756670113e18,
    ]
)

# Lanczos sum (Boost's g = 6.0247..., 13 terms) for the incomplete gamma prefactor
_LANCZOS_NUM = np.array(
    [
        0.006061842346248906525783753964555936883222,
        0.5098416655656676188125178644804694509993,
        19.51992788247617482847860966235652136208,
        449.9445569063168119446858607650988409623,
        6955.999602515376140356310115515198987526,
        75999.29304014542649875303443598909137092,
        601859.6171681098786670226533699352302507,
        3481712.15498064590882071018964774556468,
        14605578.08768506808414169982791359218571,
        43338889.32467613834773723740590533316085,
        86363131.28813859145546927288977868422342,
        103794043.1163445451906271053616070238554,
        56906521.91347156388090791033559122686859,
    ]
)
_LANCZOS_DEN = np.array(
    [
        1.0,
        66.0,
        1925.0,
        32670.0,
        357423.0,
        2637558.0,
        13339535.0,
        45995730.0,
        105258076.0,
        150917976.0,
        120543840.0,
        39916800.0,
        0.0,
    ]
)
_LANCZOS_NUM_REV = _LANCZOS_NUM[::-1].copy()
_LANCZOS_DEN_REV = _LANCZOS_DEN[::-1].copy()
_LANCZOS_G = 6.024680040776729583740234375
# the series and the continued fraction need ~sqrt(a) terms near x ~ a (27k at a = 1e7):
# a cap that only stops a runaway loop
_IGAM_MAXITER = 100_000_000


# -- helpers ------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _chbevl(x, c):
    """The Chebyshev series with coefficients ``c`` (highest first) at ``x`` (Clenshaw)."""
    b0 = c[0]
    b1 = 0.0
    b2 = 0.0
    for i in range(1, c.size):
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c[i]
    return 0.5 * (b0 - b2)


@njit(cache=True, error_model="numpy")
def _polevl(x, c):
    """The polynomial with coefficients ``c`` (highest first) at ``x`` (Horner)."""
    r = 0.0
    for i in range(c.size):
        r = r * x + c[i]
    return r


@njit(cache=True, error_model="numpy")
def _exp_sq(x):
    """``exp(x*x)`` without the rounding of ``x*x`` (Dekker split: ``hi*hi`` is exact)."""
    c = 134217729.0 * x  # 2^27 + 1
    hi = c - (c - x)
    lo = x - hi
    return math.exp(hi * hi) * math.exp(lo * (2 * hi + lo))


# -- error function family --------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _erfcx_nonneg(x):
    """``exp(x^2) erfc(x)`` for ``x >= 0``."""
    if x < 25.0:
        return _exp_sq(x) * math.erfc(x)
    # erfc underflows: Laplace's continued fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x + ...)))
    if x > 1e150:
        return _INV_SQRT_PI / x
    t = x
    for k in range(40, 0, -1):
        t = x + 0.5 * k / t
    return _INV_SQRT_PI / t


@njit(cache=True, error_model="numpy")
def erfcx_scalar(x):
    """``exp(x^2) erfc(x)`` without overflow or underflow."""
    if x != x:
        return x
    if x < 0:
        if x < -26.7:
            return _INF  # 2 exp(x^2) overflows
        return 2 * _exp_sq(x) - _erfcx_nonneg(-x)
    return _erfcx_nonneg(x)


@njit(cache=True, error_model="numpy")
def erfinv_scalar(y):
    """The inverse error function: NaN outside [-1, 1], +-inf at +-1."""
    a = abs(y)
    if not a <= 1.0:
        return _NAN
    if a == 1.0:
        return math.copysign(_INF, y)
    if y == 0.0:
        return y  # keeps the sign of zero
    # a first guess to ~1e-7 (rational approximations of Blair/Pavlis) ...
    if a <= 0.7:
        z = y * y
        num = ((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899
        den = (((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1
        x = a * num / den
    else:
        z = math.sqrt(-math.log((1.0 - a) / 2.0))
        num = ((1.641345311 * z + 3.429567803) * z - 1.624906493) * z - 1.970840454
        den = (1.637067800 * z + 3.543889200) * z + 1.0
        x = num / den
    # ... then Newton steps on erf(x) = a; near 1 on erfc(x) = 1 - a, exact for a >= 1/2,
    # so the residual keeps its relative accuracy in the tail
    c = 1.0 - a
    for _ in range(3):
        d = 2 * _INV_SQRT_PI * math.exp(-x * x)
        if d == 0.0:
            break
        if a > 0.5:
            x = x + (math.erfc(x) - c) / d
        else:
            x = x - (math.erf(x) - a) / d
    return x if y > 0 else -x


@njit(cache=True, error_model="numpy")
def ndtr_scalar(x):
    """The standard normal CDF ``erfc(-x / sqrt 2) / 2`` (accurate in the left tail)."""
    return 0.5 * math.erfc(-x * _SQRT1_2)


@njit(cache=True, error_model="numpy")
def log_ndtr_scalar(x):
    """``log(ndtr(x))``: through ``erfcx`` in the left tail, where ``ndtr`` underflows."""
    t = x * _SQRT1_2
    if x < -1.0:
        return math.log(erfcx_scalar(-t) / 2) - t * t
    return math.log1p(-math.erfc(t) / 2)


@njit(cache=True, error_model="numpy")
def ndtri_scalar(y0):
    """The inverse of the standard normal CDF: -inf at 0, inf at 1, NaN outside."""
    if y0 == 0.0:
        return -_INF
    if y0 == 1.0:
        return _INF
    if not (0.0 < y0 < 1.0):
        return _NAN
    negate = True
    y = y0
    if y > 1.0 - 0.13533528323661269189:  # exp(-2)
        y = 1.0 - y
        negate = False
    if y > 0.13533528323661269189:
        y = y - 0.5
        y2 = y * y
        x = y + y * (y2 * _polevl(y2, _NDTRI_P0) / _polevl(y2, _NDTRI_Q0))
        return x * 2.50662827463100050242  # sqrt(2 pi)
    x = math.sqrt(-2.0 * math.log(y))
    x0 = x - math.log(x) / x
    z = 1.0 / x
    if x < 8.0:
        x1 = z * _polevl(z, _NDTRI_P1) / _polevl(z, _NDTRI_Q1)
    else:
        x1 = z * _polevl(z, _NDTRI_P2) / _polevl(z, _NDTRI_Q2)
    x = x0 - x1
    return -x if negate else x


# -- gamma family -------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _digamma_pos(x):
    """digamma for ``x > 0``: recurrence up to 10, then the asymptotic series."""
    r = 0.0
    while x < 10.0:
        r -= 1.0 / x
        x += 1.0
    if x == 10.0:
        return r + _PSI_10
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        y = z * _polevl(z, _PSI_A)
    return r + math.log(x) - 0.5 / x - y


@njit(cache=True, error_model="numpy")
def digamma_scalar(x):
    """digamma: -inf at +0 and inf at -0 (PyTorch), NaN at negative integers and -inf."""
    if x == 0.0:
        return math.copysign(_INF, -x)
    if x < 0.0:
        if x == math.floor(x):
            return _NAN
        # reflection psi(x) = psi(1 - x) - pi / tan(pi x), with tan of the fractional part
        # (pi * x rounds badly for large |x|)
        r = x - math.trunc(x)
        return _digamma_pos(1.0 - x) - math.pi / math.tan(math.pi * r)
    if x != x:
        return x
    return _digamma_pos(x)


@njit(cache=True, error_model="numpy")
def zeta_scalar(x, q):
    """The Hurwitz zeta function ``sum_k (k + q)^-x`` (Cephes): inf at x = 1, NaN for
    x < 1, inf at non-positive integer q, NaN for q < 0 with non-integer x."""
    if x == 1.0:
        return _INF
    if x < 1.0:
        return _NAN
    if q <= 0.0:
        if q == math.floor(q):
            return _INF
        if x != math.floor(x):
            return _NAN
    if q == _INF:
        return _NAN  # what Cephes' summation (and so PyTorch) gives, not the limit 0
    if q > 1e8:
        # far out the sum underflows term by term; Euler-Maclaurin's leading terms are exact
        # to rounding there (the next is x^3 q^-(x+3) / 720)
        return q ** (1.0 - x) / (x - 1.0) + 0.5 * q**-x + x / 12.0 * q ** (-x - 1.0)
    s = q**-x
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a**-x
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_A[j]
        s = s + t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


@njit(cache=True, error_model="numpy")
def _trigamma(x, single):
    """``polygamma(1, x)``: reflection below 1/2, then ``zeta(2, x)``; ``single``: the
    input is float32, whose reflection term is computed in float32 (see below)."""
    if x == _INF:
        return 0.0
    if x < 0.5:
        # psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x), with sin(pi * x) of the unreduced x in
        # the input's precision, as PyTorch's calc_trigamma: at the poles (non-positive
        # integers) pi * x rounds, so the result is PyTorch's large finite value (about
        # 1 / (pi ulp(pi x))^2; inf only at 0), which keeps ``0 * trigamma`` at a pole 0, as
        # in PyTorch (a masked-out gradient of digamma or lgamma), rather than NaN
        if single:
            pi32 = np.float32(math.pi)
            s32 = math.sin(pi32 * np.float32(x))
            refl = float((pi32 * pi32) / (s32 * s32))
        else:
            s = math.sin(math.pi * x)
            refl = math.pi * math.pi / (s * s)
        return refl - zeta_scalar(2.0, 1.0 - x)
    return zeta_scalar(2.0, x)


@njit(cache=True, error_model="numpy")
def polygamma_scalar(n, x, single):
    """``polygamma(n, x)``, the n-th derivative of digamma (``n >= 0``); ``single``: the
    input is float32 (``_trigamma``)."""
    if n == 0:
        return digamma_scalar(x)
    if n == 1:
        return _trigamma(x, single)
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * math.gamma(n + 1.0) * zeta_scalar(n + 1.0, x)


# -- modified Bessel functions and Bessel functions of the first kind ----------------------
@njit(cache=True, error_model="numpy")
def i0e_scalar(x):
    """``exp(-|x|) I0(x)``."""
    x = abs(x)
    if x <= 8.0:
        return _chbevl(x / 2.0 - 2.0, _I0_A)
    return _chbevl(32.0 / x - 2.0, _I0_B) / math.sqrt(x)


@njit(cache=True, error_model="numpy")
def i0_scalar(x):
    """The modified Bessel function ``I0(x)``."""
    x = abs(x)
    if x <= 8.0:
        return math.exp(x) * _chbevl(x / 2.0 - 2.0, _I0_A)
    return math.exp(x) * _chbevl(32.0 / x - 2.0, _I0_B) / math.sqrt(x)


@njit(cache=True, error_model="numpy")
def i1e_scalar(x):
    """``exp(-|x|) I1(x)`` (odd)."""
    z = abs(x)
    if z <= 8.0:
        out = _chbevl(z / 2.0 - 2.0, _I1_A) * z
    else:
        out = _chbevl(32.0 / z - 2.0, _I1_B) / math.sqrt(z)
    return -out if x < 0 else out


@njit(cache=True, error_model="numpy")
def i1_scalar(x):
    """The modified Bessel function ``I1(x)`` (odd)."""
    z = abs(x)
    if z <= 8.0:
        out = math.exp(z) * z * _chbevl(z / 2.0 - 2.0, _I1_A)
    else:
        out = math.exp(z) * _chbevl(32.0 / z - 2.0, _I1_B) / math.sqrt(z)
    return -out if x < 0 else out


@njit(cache=True, error_model="numpy")
def bessel_j0_scalar(x):
    """The Bessel function of the first kind ``J0(x)`` (even)."""
    x = abs(x)
    if x <= 5.0:
        if x < 1e-5:
            return 1.0 - x * x / 4.0
        z = x * x
        return (
            (z - 5.78318596294678452118e00)
            * (z - 3.04712623436620863991e01)
            * _polevl(z, _J0_RP)
            / _polevl(z, _J0_RQ)
        )
    w = 25.0 / (x * x)
    p = _polevl(w, _J0_PP) / _polevl(w, _J0_PQ)
    q = _polevl(w, _J0_QP) / _polevl(w, _J0_QQ)
    xn = x - 0.785398163397448309615660845819875721  # x - pi/4
    # 0.7978... = sqrt(2 / pi)
    return (p * math.cos(xn) - 5.0 / x * q * math.sin(xn)) * (
        0.797884560802865355879892119868763737 / math.sqrt(x)
    )


@njit(cache=True, error_model="numpy")
def bessel_j1_scalar(x):
    """The Bessel function of the first kind ``J1(x)`` (odd: -0.0 at -0.0, as PyTorch)."""
    if x == 0.0:
        return x
    z = abs(x)
    if z <= 5.0:
        w = z * z
        out = (
            _polevl(w, _J1_RP)
            / _polevl(w, _J1_RQ)
            * z
            * (w - 1.46819706421238932572e01)
            * (w - 4.92184563216946036703e01)
        )
    else:
        w = 25.0 / (z * z)
        p = _polevl(w, _J1_PP) / _polevl(w, _J1_PQ)
        q = _polevl(w, _J1_QP) / _polevl(w, _J1_QQ)
        xn = z - 2.356194490192344928846982537459627163  # x - 3 pi/4
        out = (
            (p * math.cos(xn) - 5.0 / z * q * math.sin(xn))
            * 0.797884560802865355879892119868763737
            / math.sqrt(z)
        )
    return -out if x < 0 else out


# -- regularized incomplete gamma functions --------------------------------------------------
@njit(cache=True, error_model="numpy")
def _lanczos_sum_expg_scaled(x):
    """Boost's Lanczos sum ``sum_expg_scaled(x)`` as a rational function of ``x``."""
    # both coefficient lists have the same length, so the form in 1/x needs no power of x
    if abs(x) <= 1.0:
        return _polevl(x, _LANCZOS_NUM) / _polevl(x, _LANCZOS_DEN)
    y = 1.0 / x
    return _polevl(y, _LANCZOS_NUM_REV) / _polevl(y, _LANCZOS_DEN_REV)


@njit(cache=True, error_model="numpy")
def _igam_fac(a, x):
    """``x^a e^-x / Gamma(a)``; a Lanczos form where ``a ~ x`` (no cancellation)."""
    if abs(a - x) > 0.4 * abs(a):
        ax = a * math.log(x) - x - math.lgamma(a)
        if ax < -709.782712893384:
            return 0.0
        return math.exp(ax)
    fac = a + _LANCZOS_G - 0.5
    res = math.sqrt(fac / math.e) / _lanczos_sum_expg_scaled(a)
    if a < 200.0 and x < 200.0:
        res *= math.exp(a - x) * (x / fac) ** a
    else:
        num = x - a - _LANCZOS_G + 0.5
        numfac = num / fac
        res *= math.exp(a * (math.log1p(numfac) - numfac) + x * (0.5 - _LANCZOS_G) / fac)
    return res


@njit(cache=True, error_model="numpy")
def _igam_series(a, x):
    """``P(a, x)`` by its power series (DLMF 8.11.4)."""
    ax = _igam_fac(a, x)
    if ax == 0.0:
        return 0.0
    r = a
    c = 1.0
    ans = 1.0
    for _ in range(_IGAM_MAXITER):
        r += 1.0
        c *= x / r
        ans += c
        if c <= _MACHEP * ans:
            break
    return ans * ax / a


@njit(cache=True, error_model="numpy")
def _igamc_series(a, x):
    """``Q(a, x)`` for small ``x`` (DLMF 8.7.3), free of the cancellation of ``1 - P``."""
    fac = 1.0
    s = 0.0
    for n in range(1, 2000):
        fac *= -x / n
        term = fac / (a + n)
        s += term
        if abs(term) <= _MACHEP * abs(s):
            break
    logx = math.log(x)
    term = -math.expm1(a * logx - math.lgamma(1.0 + a))
    return term - math.exp(a * logx - math.lgamma(a)) * s


@njit(cache=True, error_model="numpy")
def _igamc_fraction(a, x):
    """``Q(a, x)`` by its continued fraction (Cephes ``igamc``), for ``x > max(a, 1)``."""
    ax = _igam_fac(a, x)
    if ax == 0.0:
        return 0.0
    big = 4.503599627370496e15
    biginv = 2.22044604925031308085e-16
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2 = 1.0
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    for _ in range(_IGAM_MAXITER):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        if qk != 0.0:
            r = pk / qk
            t = abs((ans - r) / r)
            ans = r
        else:
            t = 1.0
        pkm2 = pkm1
        pkm1 = pk
        qkm2 = qkm1
        qkm1 = qk
        if abs(pk) > big:
            pkm2 *= biginv
            pkm1 *= biginv
            qkm2 *= biginv
            qkm1 *= biginv
        if t <= _MACHEP:
            break
    return ans * ax


@njit(cache=True, error_model="numpy")
def gammaincc_scalar(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x)``."""
    # special values in SciPy's (and PyTorch's) order: Q(nan, 0) = 1, Q(nan, inf) = 0
    if a < 0.0 or x < 0.0:
        return _NAN
    if a == 0.0:
        return 0.0 if x > 0.0 else _NAN
    if x == 0.0:
        return 1.0
    if a == _INF:
        return _NAN if x == _INF else 1.0
    if x == _INF:
        return 0.0
    if a != a or x != x:
        return _NAN
    if x > 1.1:
        if x < a:
            return 1.0 - _igam_series(a, x)
        return _igamc_fraction(a, x)
    if x <= 0.5:
        if -0.4 / math.log(x) < a:
            return 1.0 - _igam_series(a, x)
        return _igamc_series(a, x)
    if x * 1.1 < a:
        return 1.0 - _igam_series(a, x)
    return _igamc_series(a, x)


@njit(cache=True, error_model="numpy")
def gammainc_scalar(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    # special values in SciPy's (and PyTorch's) order: P(nan, 0) = 0, P(nan, inf) = 1
    if a < 0.0 or x < 0.0:
        return _NAN
    if a == 0.0:
        return 1.0 if x > 0.0 else _NAN
    if x == 0.0:
        return 0.0
    if a == _INF:
        return _NAN if x == _INF else 0.0
    if x == _INF:
        return 1.0
    if a != a or x != x:
        return _NAN
    if x > 1.0 and x > a:
        return 1.0 - gammaincc_scalar(a, x)
    return _igam_series(a, x)


# -- other ------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def entr_scalar(x):
    """``-x log x``: 0 at 0, -inf for x < 0, NaN at NaN."""
    if x > 0.0:
        return -x * math.log(x)
    if x == 0.0:
        return 0.0
    if x < 0.0:
        return -_INF
    return x


@njit(cache=True, error_model="numpy")
def _unary_scalar(code, v):
    """The unary formula number ``code`` (``UNARY_CODES``) at ``v``."""
    if code == 0:
        return math.erfc(v)
    if code == 1:
        return erfcx_scalar(v)
    if code == 2:
        return erfinv_scalar(v)
    if code == 3:
        return math.lgamma(v)
    if code == 4:
        return digamma_scalar(v)
    if code == 5:
        return i0_scalar(v)
    if code == 6:
        return i0e_scalar(v)
    if code == 7:
        return i1_scalar(v)
    if code == 8:
        return i1e_scalar(v)
    if code == 9:
        return bessel_j0_scalar(v)
    if code == 10:
        return bessel_j1_scalar(v)
    if code == 11:
        return ndtri_scalar(v)
    if code == 12:
        return log_ndtr_scalar(v)
    if code == 13:
        return ndtr_scalar(v)
    return entr_scalar(v)


# -- map kernels --------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def special_unary(code, x, out):
    """``out[i] = f(x[i])`` for the formula ``code`` of ``UNARY_CODES``.

    Assumes: ``x`` and ``out`` 1-D float64 of one length, contiguous; ``code`` one of
    ``UNARY_CODES``' values (any other computes ``entr``)."""
    for i in range(x.size):
        out[i] = _unary_scalar(code, x[i])


@njit(cache=True, error_model="numpy")
def polygamma_forward(n, single, x, out):
    """``out[i] = polygamma(n, x[i])``; ``single``: the values came from a float32 input
    (trigamma's reflection term is then computed in float32, as PyTorch's).

    Assumes: ``n >= 0``; ``x`` and ``out`` 1-D float64 of one length, contiguous."""
    for i in range(x.size):
        out[i] = polygamma_scalar(n, x[i], single)


@njit(cache=True, error_model="numpy")
def special_binary(code, a, b, out):
    """``out[i] = f(a[i], b[i])`` for ``code`` in ``BINARY_CODES`` (0: gammainc,
    1: gammaincc, 2: zeta).

    Assumes: ``a``, ``b`` and ``out`` 1-D float64 of one length (already broadcast),
    contiguous."""
    for i in range(out.size):
        if code == 0:
            out[i] = gammainc_scalar(a[i], b[i])
        elif code == 1:
            out[i] = gammaincc_scalar(a[i], b[i])
        else:
            out[i] = zeta_scalar(a[i], b[i])
