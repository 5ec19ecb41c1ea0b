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
and reports it as an expected failure (XPASS once fixed: then delete the entry), and the
campaign counts matching mismatches apart from unexplained ones. Any other mismatch fails
the test.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["KNOWN_DEVIATIONS", "OPEN_BUGS", "Deviation", "OpenBug", "classify", "matches"]


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
_TORCH_KERNEL_GAPS = ("abs", "ceil", "floor", "round", "softplus", "matmul", "mm", "bmm", "dot",
                      "einsum", "fmod", "remainder", "softmax", "log_softmax")
# Ops whose zeros are sums, or maxima/minima of +0 and -0: their sign depends on the order.
_ORDER_SIGNED_ZERO = ("cumsum", "einsum", "matmul", "mm", "amax", "maximum", "minimum", "sort",
                      "topk")

KNOWN_DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("torch-cpu-kernel-gaps", _TORCH_KERNEL_GAPS, "raises_only_torch",
              ("torch_not_implemented",),
              reason="PyTorch 2.13 has no CPU kernel for these ops on bool (some: int64) tensors "
                     "and raises NotImplementedError; numbagrad computes them, promoting as "
                     "for other dtypes."),
    Deviation("sort-ties", ("sort", "topk"), "value", ("ties",), match=r"^output 1:",
              reason="The order of the indices of equal values is unspecified in PyTorch "
                     "(sort without stable=True, topk); numbagrad sorts stably. Values agree."),
    Deviation("argsort-ties", "argsort", "value", ("ties",),
              reason="As sort-ties: argsort of equal values."),
    Deviation("signed-zero-order", _ORDER_SIGNED_ZERO, "signed_zero",
              reason="The sign of a zero that is a sum, or the max/min of +0 and -0, depends "
                     "on the order of the operations, which differs; the values agree."),
    Deviation("float32-prod-overflow", "prod", "value", ("float32",), match="non-finite",
              reason="Whether a float32 product close to the overflow threshold overflows "
                     "depends on the order of the multiplications, which differs."),
    Deviation("float32-prod-grad-overflow", "prod", "grad_value", ("float32",),
              match="non-finite", reason="As float32-prod-overflow, in prod's gradient."),
    Deviation("var-of-equal-values", "var", "grad_value", ("ties",),
              reason="The variance of equal values is 0 in exact arithmetic and rounding noise "
                     "in floating point, different in each library; a function that amplifies "
                     "it (1 / var) then has unrelated gradients."),
    Deviation("std-gradgrad-zero-spread", "std", "gradgrad_nan_pattern", ("!nonfinite",),
              reason="Where std is 0, PyTorch's gradient masks 0/0 to 0 but its second order "
                     "is nan; numbagrad differentiates the masked 0."),
    Deviation("view-strides", "view", "raises_only_numbagrad",
              match="view size is not compatible",
              reason="view() depends on its input's strides, and results of ops on "
                     "non-contiguous tensors can have other strides than PyTorch's (NumPy's "
                     "layout rules), so view() can refuse what PyTorch views. reshape() works "
                     "in both."),
    Deviation("torch-clamp-backward-broadcast", "clamp", "grad_raises_only_torch",
              match="doesn't match the broadcast shape",
              reason="PyTorch 2.13 bug: clamp's backward raises when tensor min/max broadcast "
                     "the input to a larger shape; numbagrad returns the reduced gradients."),
    Deviation("torch-scatter-add-backward", "scatter_add", "grad_raises_only_torch",
              match="ScatterAddBackward0 returned an invalid gradient",
              reason="PyTorch 2.13 bug: with src larger than index, scatter_add's backward "
                     "gives src a gradient of index's shape and raises; numbagrad returns "
                     "src's shape (zeros outside index)."),
    Deviation("torch-take-along-dim-view", "take_along_dim", "raises_only_torch",
              ("noncontig",), match="view size is not compatible",
              reason="PyTorch 2.13 bug: take_along_dim(dim=None) calls view() on a "
                     "non-contiguous input and raises (also in tests/test_ops.py)."),
    Deviation("torch-take-along-dim-unchecked", "take_along_dim", "raises_only_numbagrad",
              match="out of bounds",
              reason="PyTorch 2.13 does not check broadcast indices of take_along_dim (an "
                     "index past the end returns another element); numbagrad raises "
                     "IndexError."),
    Deviation("mixed-precision-gradient", ("div", "mul", "atan2", "add", "sub", "pow"),
              "grad_value", ("mixed_dtypes",),
              reason="With float operands of different precisions (a float64 0-d tensor and a "
                     "float32 tensor), PyTorch computes the float64 operand's gradient in the "
                     "output's float32 and casts it up; numbagrad computes it in float64. "
                     "They differ at float32 rounding level."),
    Deviation("torch-prod-gradgrad", "prod", "gradgrad_value", ("!nonfinite",),
              reason="PyTorch 2.13 gives 0 for some second derivatives of prod where finite "
                     "differences, and numbagrad, give the product of the other entries "
                     "(seen next to an entry of 1e-30)."),
)

# Found by the fuzzer, not fixed yet; the programs are minimal reproducers (render one with
# fuzz_program.render, or see the xfail reasons of test_fuzz.py::test_open_bug).
OPEN_BUGS: tuple[OpenBug, ...] = (
    OpenBug("einsum-bool-sum", "einsum", "dtype", ('bool_input',),
            note=('einsum summing bool operands returns bool (torch: int64)'),
            program=_p(
        {'seed': 1000870, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'bool', 'shape': [0], 'grad': False, 'view': None, 'values': {'data': []}}],
         'steps': [{'op': 'einsum', 'variant': None, 'args': ['i->', {'ref': 'x0'}],
         'kwargs': {}}]})),
    OpenBug("einsum-empty-bool", "einsum", "raises_only_torch", ('empty',),
            match='Autograd not support',
            note=('einsum of an empty float operand requiring grad and a bool one: torch '
                  'raises, numbagrad computes'),
            program=_p(
        {'seed': 1612, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [0, 1, 3], 'grad': True, 'view': None, 'values': {'kind':
         'normal', 'seed': 103168}}, {'name': 'x1', 'dtype': 'bool', 'shape': [0, 3, 2],
         'grad': False, 'view': None, 'values': {'kind': 'int', 'seed': 103169}}],
         'steps': [{'op': 'einsum', 'variant': None, 'args': ['bij,bjk->bik', {'ref':
         'x0'}, {'ref': 'x1'}], 'kwargs': {}}]})),
    OpenBug("cat-empty-grad", "cat", "grad_none", ('empty',),
            note=('an empty input of cat gets grad None (torch: an empty tensor)'),
            program=_p(
        {'seed': 1004914, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [2, 4, 5], 'grad': True, 'view': ['T', 2, 1], 'values':
         {'kind': 'ints', 'seed': 64314496}}, {'name': 'x1', 'dtype': 'float64',
         'shape': [0], 'grad': True, 'view': None, 'values': {'kind': 'positive',
         'seed': 64314497}}, {'name': 'x2', 'dtype': 'float32', 'shape': [2, 2, 5],
         'grad': False, 'view': None, 'values': {'kind': 'special', 'seed': 64314498}}],
         'steps': [{'op': 'cat', 'variant': None, 'args': [[{'ref': 'x2'}, {'ref':
         'x0'}, {'ref': 'x1'}]], 'kwargs': {'dim': -2}}]})),
    OpenBug("cat-empty-requires-grad", "cat", "requires_grad", ('empty',),
            note=('cat of bool/int tensors with an empty float one requiring grad: '
                  'requires_grad False (torch: True)'),
            program=_p(
        {'seed': 1003032, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'int64', 'shape': [1, 4, 2], 'grad': False, 'view': None, 'values': {'kind':
         'int', 'seed': 64194048}}, {'name': 'x1', 'dtype': 'int64', 'shape': [1, 3, 2],
         'grad': False, 'view': None, 'values': {'kind': 'int', 'seed': 64194049}},
         {'name': 'x2', 'dtype': 'float64', 'shape': [0], 'grad': True, 'view':
         ['offset'], 'values': {'kind': 'special', 'seed': 64194050}}], 'steps': [{'op':
         'cat', 'variant': 'tuple', 'args': [[{'ref': 'x2'}, {'ref': 'x1'}, {'ref':
         'x0'}]], 'kwargs': {'dim': 1}}]})),
    OpenBug("prod-grad-nonfinite", "prod", "grad_nan_pattern", ('nonfinite',),
            note=("prod backward with inf/nan entries differs from torch's (nan vs 0 / -inf)"),
            program=_p(
        {'seed': 1003624, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [3], 'grad': True, 'view': ['step', 0], 'values': {'kind':
         'special', 'seed': 64231936}}], 'steps': [{'op': 'prod', 'variant': None,
         'args': [{'ref': 'x0'}], 'kwargs': {}}]})),
    OpenBug("var-grad-inf", "var", "grad_nan_pattern", ('inf',),
            note=('var backward with an infinite entry: nan everywhere (torch: -inf/inf, nan '
                  'only at the inf)'),
            program=_p(
        {'seed': 1003200, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [3, 4, 5], 'grad': True, 'view': None, 'values': {'kind':
         'special', 'seed': 64204800}}], 'steps': [{'op': 'var', 'variant': 'method',
         'args': [{'ref': 'x0'}, 1], 'kwargs': {'keepdim': True}}]})),
    OpenBug("mean-gradgrad-empty", "mean", "gradgrad_nan_pattern", ('empty',),
            note=('second order of mean over an empty dim: nan (torch: 0)'),
            program=_p(
        {'seed': 1001683, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [0, 5, 4], 'grad': True, 'view': None, 'values': {'kind':
         'normal', 'seed': 64107712}}], 'steps': [{'op': 'mean', 'variant': 'method',
         'args': [{'ref': 'x0'}], 'kwargs': {'dim': 0, 'keepdim': True}}]})),
    OpenBug("logsumexp-gradgrad-empty", "logsumexp", "gradgrad_nan_pattern", ('empty',),
            note=('second order of logsumexp over an empty dim: nan (torch: 0)'),
            program=_p(
        {'seed': 4600, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [0, 3, 2, 2], 'grad': True, 'view': None, 'values':
         {'data': []}}], 'steps': [{'op': 'logsumexp', 'variant': 'method', 'args':
         [{'ref': 'x0'}, 0], 'kwargs': {}}], 'cotangent': {'data': [0.13842190861527712,
         0.8468520894985153, 0.5585128215524565, 0.601640284349375, -1.2939881036117082,
         1.092985124072068, 1.0704545305893536, 1.212852935592746, -0.4236384159234053,
         -0.1558702784217923, 0.17437008449482327, -0.2544922781620616]}})),
    OpenBug("cumprod-gradgrad-nonfinite", "cumprod", "gradgrad_nan_pattern", ('inf',),
            note=('second order of cumprod with inf entries: nan (torch: finite / None)'),
            program=_p(
        {'seed': 1002988, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [5, 5, 3], 'grad': True, 'view': None, 'values': {'data':
         [0.0, 0.0, 0.0, -1.3171636519176368, 0.0, 0.0, -0.3332284837685151, inf, 0.0,
         2.5022910726518113, -0.0, -2.184895777155364, 2.518692188938733,
         -1.8332110427822759, -0.6861003651710336, 0.0, 0.0, 0.0, -1e-30, 0.0, 0.0,
         -0.20436722367141247, 2.6814975327642, 0.0, 1.4075421573684936,
         -2.0136639004315784, -0.5270049229732696, -0.6660926321007556,
         1.1001246344362237, 100.0, 0.0, 0.0, 0.0, 0.6909717824436568, 0.0, 0.0,
         2.599183013625357, -2.274717545758376, 0.0, -1.5247927345588612,
         -1.4539031048519206, 0.5, 1.2745927746509516, -2.1508214742029335,
         1.2699812012611034, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.49816288819942756,
         2.5474088481825943, 0.0, -1.3506401002115545, 1.3246708505772782,
         -1.1324150983863737, -0.5700643752047427, 0.3353673658477563, 1e-30, 0.0, 0.0,
         0.0, -1.5974133369254646, 0.0, 0.0, 2.65353571876185, -1.698272625949996, 0.0,
         1.467913906191213, 2.3838346167538953, 1.6835258654264331, -0.7406994388411778,
         -89.0, -2.7361686524907074]}}], 'steps': [{'op': 'cumprod', 'variant': None,
         'args': [{'ref': 'x0'}, 0], 'kwargs': {}}], 'cotangent': {'data':
         [0.1688136260617983, 0.08967405127905004, -0.7532456117074225,
         0.11860359921204847, -1.2015688363262584, 1.3837392346239135,
         -1.1195908288764942, 0.2926075946863219, 0.18080029632503164,
         1.1460986939613838, -0.8830017493211685, -0.7012456163067653,
         0.07192629766781665, 0.2676440180383189, -1.02219698462205, 0.6976032279203058,
         0.6876739811855305, 0.16719054337542927, -0.8680077375269278,
         -1.10332471246321, -2.5551872890516094, -0.17763147344655225,
         -1.353227709032989, 1.1059113483353908, -1.2789950851814968,
         0.18457820051025742, -0.35663280191805324, -0.6590752191290238,
         1.1284717039652012, -2.0899051119200736, -0.5256434019151346,
         1.7849067636681761, 0.35857893080120956, -0.6583146346004586,
         0.5928951135886895, -0.5335070445393589, -0.669478114664844,
         -1.5085629329169734, -2.0786318304584808, 0.1956001532561472,
         1.2345580171009032, -0.6550958779653296, -0.5260267469624336,
         1.0575849965953645, 1.2446835819956115, -0.253417561393037,
         -0.8132787977360048, -0.3416576167190212, 0.835222291990683,
         0.3600813185414788, 0.019379726372963917, -1.5692965492007007,
         -0.022768752820693808, -1.0258204024920123, 0.509210735459801,
         0.9768605868809105, -0.28477215513229265, -0.12769650030950758,
         0.31182801012106776, 0.7653261671973487, 0.38946551564564, 0.06999365385847087,
         -0.45233064652806915, 0.6175901530825815, -1.1520165196120935,
         -0.16750325660302784, 0.5511962707302298, 0.4113359488197377,
         -0.9074250112123414, -0.012810557687840063, -0.820483640793525,
         -0.7137143728853443, -0.6560063209262856, -0.0448374781008417,
         0.8166618905980338]}})),
    OpenBug("clamp-grad-nan", "clamp", "grad_nan_pattern", ('nonfinite',),
            note=("clamp backward is g * mask: nan where torch's where(mask, g, 0) is 0"),
            program=_p(
        {'seed': 445, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype': 'float32',
         'shape': [4, 1], 'grad': True, 'view': None, 'values': {'data': [-inf,
         0.6931471824645996, 1.3862943649291992, nan]}}, {'name': 'x1', 'dtype':
         'float32', 'shape': [], 'grad': False, 'view': None, 'values': {'kind':
         'positive', 'seed': 28481}}, {'name': 'x2', 'dtype': 'float32', 'shape': [],
         'grad': True, 'view': None, 'values': {'kind': 'special', 'seed': 28482}}],
         'steps': [{'op': 'clamp', 'variant': None, 'args': [{'ref': 'x0'}], 'kwargs':
         {'min': {'ref': 'x1'}, 'max': {'ref': 'x2'}}}], 'cotangent': {'data':
         [-0.03369880095124245, 0.11167480796575546, 0.4117780923843384, nan]}})),
    OpenBug("clamp-grad-bounds", "clamp", "grad_value", ('nan',),
            note=('gradients of tensor min/max when a bound is nan or min > max differ from '
                  "torch's"),
            program=_p(
        {'seed': 1000187, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [], 'grad': True, 'view': None, 'values': {'data': [nan]}},
         {'name': 'x1', 'dtype': 'float64', 'shape': [], 'grad': True, 'view': None,
         'values': {'kind': 'normal', 'seed': 64011970}}, {'name': 'x2', 'dtype':
         'float64', 'shape': [], 'grad': True, 'view': None, 'values': {'kind':
         'normal', 'seed': 64011971}}], 'steps': [{'op': 'clamp', 'variant': None,
         'args': [{'ref': 'x0'}], 'kwargs': {'min': {'ref': 'x1'}, 'max': {'ref':
         'x2'}}}], 'cotangent': {'data': [0.6331003929891551]}})),
    OpenBug("nan-to-num-grad-nonfinite", "nan_to_num", "grad_nan_pattern", ('nonfinite',),
            note=("nan_to_num backward uses where(): 0 where torch's g * isfinite(x) is nan "
                  '(inf gradient at a nan)'),
            program=_p(
        {'seed': 1299, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [4, 4], 'grad': True, 'view': None, 'values': {'kind':
         'special', 'seed': 83136}}], 'steps': [{'op': 'nan_to_num', 'variant': None,
         'args': [{'ref': 'x0'}], 'kwargs': {'posinf': 0.0}}], 'cotangent': {'data':
         [-0.6267597053110185, 0.5104440859280355, 0.17893978079276918,
         -0.12666774885630905, 6.268656482149547, inf, -3.2596783916787535,
         -0.13176292973791312, -7.19145405175533e-07, -2.1544774996602025,
         0.4426931392064373, -5.006049968981542, 0.00028263635668430087,
         -0.0562783401969469, -0.1612665173857974, 5.125196489696766]}})),
    OpenBug("nan-to-num-gradgrad-nonfinite", "nan_to_num", "gradgrad_nan_pattern", ('nonfinite',),
            note=('second order through nan_to_num with non-finite values: 0 where torch has '
                  'nan'),
            program=_p(
        {'seed': 821, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [2, 5], 'grad': True, 'view': None, 'values': {'kind':
         'special', 'seed': 52544}}], 'steps': [{'op': 'mean', 'variant': 'method',
         'args': [{'ref': 'x0'}], 'kwargs': {'dim': 1, 'keepdim': True}}, {'op':
         'log_softmax', 'variant': 'method', 'args': [{'ref': 's0'}, 0], 'kwargs': {}},
         {'op': 'nan_to_num', 'variant': None, 'args': [{'ref': 's1'}], 'kwargs': {}}]})),
    OpenBug("sigmoid-grad-nonfinite", "sigmoid", "grad_nan_pattern", ('nonfinite',),
            note=('sigmoid backward with an infinite gradient: -inf where torch has nan'),
            program=_p(
        {'seed': 1000029, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float32', 'shape': [5, 5, 5], 'grad': True, 'view': ['step', 0], 'values':
         {'kind': 'special', 'seed': 64001856}}], 'steps': [{'op': 'sigmoid', 'variant':
         'method', 'args': [{'ref': 'x0'}], 'kwargs': {}}], 'cotangent': {'data':
         [-42.413719177246094, 16.314889907836914, -inf, 3.1175358295440674, nan,
         1187.29638671875, -0.29696616530418396, -7.008823871612549,
         0.18425984680652618, -9.19942855834961, -2.2281103134155273,
         28.416635513305664, 0.05829082429409027, 0.23528651893138885,
         -2.7755587100982666, 15.172805786132812, -1.1179566383361816,
         -289.16119384765625, 2.6009628772735596, -4.890817165374756,
         0.9333032965660095, 1.7690006494522095, 4.593859672546387, -631.70361328125,
         -50.11455535888672, 2.910283088684082, -5.622671127319336, -1.7101744413375854,
         9.808138847351074, 12.57913875579834, -32.575374603271484, 0.11275714635848999,
         40.118858337402344, -5.153079509735107, -14.53612232208252, -4.789742946624756,
         38.633243560791016, -0.060614436864852905, 205.42779541015625,
         3.8404653072357178, -0.01810028776526451, 1195.40478515625, inf,
         -1.4079291820526123, 62.522010803222656, -29.802406311035156,
         -1.1471861600875854, 2.6118996143341064, -2.169982433319092, 44.16775894165039,
         244.59263610839844, 1.075345516204834, 2.6903586387634277, 1.871756672859192,
         -1.104521632194519, 17.92675018310547, -3.4686291217803955,
         -0.4205237925052643, 0.620891273021698, -303.6448974609375,
         -16.065223693847656, -527.34375, 5.432419776916504, 0.004290006123483181,
         -2063.082275390625, -21.242048263549805, -2.7552073001861572, -inf,
         41.62982177734375, 22.261363983154297, 4.302774906158447, -5.001302242279053,
         -0.16109107434749603, -0.7688179016113281, -1.9476103782653809,
         -12.193729400634766, -2.484914779663086, 938.716064453125, 262.2960205078125,
         -30.91861343383789, 8.483528137207031, nan, 177.40843200683594,
         11.225581169128418, 3.2280426025390625, nan, 0.13033518195152283,
         -30.873863220214844, 7.361781597137451, 3.443023920059204, 107.92733764648438,
         9.153980255126953, -96.3787841796875, -9.317403793334961, -106.29688262939453,
         54.51377487182617, 5.874668121337891, nan, -0.4421647787094116,
         0.8638334274291992, -3.665468454360962, 19.807514190673828,
         -3.2823803424835205, -5.330366611480713, 52.57866668701172, 402.5682373046875,
         0.0985066145658493, nan, -2.460066795349121, -3.4240758419036865,
         -43.94296646118164, 43.65534973144531, -4.326776504516602, -28.655414581298828,
         -18.648681640625, 20.688034057617188, 0.43724995851516724, -1.5139986276626587,
         -1.261275053024292, -0.34270381927490234, 32.17256546020508,
         12.295427322387695, 695.0230712890625, 15.815957069396973, 4.784117221832275]}})),
    OpenBug("pow-gradgrad-nan", "pow", "gradgrad_nan_pattern", ('nan',),
            note=('second order of pow with a nan exponent/base: nan where torch has -0.0'),
            program=_p(
        {'seed': 734, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype': 'float64',
         'shape': [3, 1], 'grad': True, 'view': ['step', 0], 'values': {'kind':
         'normal', 'seed': 46976}}, {'name': 'x1', 'dtype': 'float64', 'shape': [1, 1],
         'grad': False, 'view': None, 'values': {'kind': 'positive', 'seed': 46977}},
         {'name': 'x2', 'dtype': 'float64', 'shape': [3], 'grad': True, 'view': None,
         'values': {'kind': 'ints', 'seed': 46978}}], 'steps': [{'op': 'pow', 'variant':
         'method', 'args': [{'ref': 'x0'}, {'ref': 'x1'}], 'kwargs': {}}, {'op': 'sqrt',
         'variant': None, 'args': [{'ref': 's0'}], 'kwargs': {}}, {'op': 'reshape',
         'variant': 'method_varargs', 'args': [{'ref': 's1'}, {'tuple': [3]}], 'kwargs':
         {}}, {'op': 'setitem', 'variant': None, 'args': [{'ref': 's2'}, 0.0, {'slice':
         [None, None, None]}], 'kwargs': {}}, {'op': 'pow', 'variant': 'method', 'args':
         [{'ref': 'x2'}, {'ref': 's3'}], 'kwargs': {}}]})),
    OpenBug("setitem-requires-grad", "setitem", "requires_grad", (),
            note=('setitem of a value requiring grad into an int/bool tensor: result '
                  'requires_grad False (torch: True)'),
            program=_p(
        {'seed': 1003160, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'int64', 'shape': [3], 'grad': False, 'view': None, 'values': {'kind': 'int',
         'seed': 64202240}}, {'name': 'x1', 'dtype': 'float64', 'shape': [], 'grad':
         True, 'view': None, 'values': {'kind': 'positive', 'seed': 64202241}}],
         'steps': [{'op': 'setitem', 'variant': None, 'args': [{'ref': 'x0'}, {'ref':
         'x1'}, {'slice': [None, None, None]}], 'kwargs': {}}]})),
    OpenBug("einsum-mixed-float", "einsum", "raises_only_torch", ('mixed_dtypes',),
            match='expected scalar type',
            note=('einsum of float32 and float64 operands is accepted and promoted (torch: '
                  'RuntimeError)'),
            program=_p(
        {'seed': 3369, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [3, 1, 1400], 'grad': True, 'view': None, 'values':
         {'kind': 'ints', 'seed': 215616}}, {'name': 'x1', 'dtype': 'float32', 'shape':
         [3, 1400, 2], 'grad': True, 'view': None, 'values': {'kind': 'normal', 'seed':
         215617}}], 'steps': [{'op': 'einsum', 'variant': 'list', 'args':
         ['bij,bjk->bik', {'ref': 'x0'}, {'ref': 'x1'}], 'kwargs': {}}]})),
    OpenBug("cumprod-grad-nonfinite", "cumprod", "grad_nan_pattern", ('inf',),
            note=('float32 cumprod backward with inf (and 0) entries: nan where torch has inf'),
            program=_p(
        {'seed': 1006, 'grad_mode': 'grad', 'inputs': [{'name': 'x0', 'dtype':
         'float32', 'shape': [2, 33, 64], 'grad': True, 'view': None, 'values': {'kind':
         'special', 'seed': 64384}}], 'steps': [{'op': 'rpow', 'variant': None, 'args':
         [{'ref': 'x0'}], 'kwargs': {}}, {'op': 'cumprod', 'variant': 'method', 'args':
         [{'ref': 's0'}, 1], 'kwargs': {}}]})),
    OpenBug("var-gradgrad-empty", "var", "gradgrad_nan_pattern", ('empty',),
            note=('second order of var over an empty tensor: nan (torch: 0)'),
            program=_p(
        {'seed': 1783, 'grad_mode': 'backward', 'inputs': [{'name': 'x0', 'dtype':
         'float64', 'shape': [0, 3, 4, 4], 'grad': True, 'view': None, 'values':
         {'kind': 'normal', 'seed': 114112}}], 'steps': [{'op': 'var', 'variant':
         'method', 'args': [{'ref': 'x0'}], 'kwargs': {}}]})),
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
