"""Every public name of every public namespace is documented in docs/ (issue: API docs).

A name counts as documented when a page lists it in an ``autosummary`` table with a
``:toctree:`` option (Sphinx then generates its page into ``docs/generated/``), names it in
an ``auto*`` directive (``autofunction``, ``autoclass``, ``autodata``, ``automethod``,
``autoattribute``, ``automodule`` with its ``:members:``), in a
``.. data::``/``.. function::``/``.. class::`` directive, or when the same
function or class object is documented under another name (``numbagrad.special.expit`` and
``numbagrad.sigmoid`` may be one object documented once). Names resolve against the page's
``.. currentmodule::``/``.. module::``, as Sphinx resolves them.
"""

import importlib
import inspect
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"

# the public namespaces; the ones not importable in this checkout are skipped
NAMESPACES = [
    "numbagrad",
    "numbagrad.autograd",
    "numbagrad.autograd.forward_ad",
    "numbagrad.autograd.functional",
    "numbagrad.autograd.graph",
    "numbagrad.func",
    "numbagrad.nn",
    "numbagrad.nn.functional",
    "numbagrad.nn.grad",
    "numbagrad.nn.init",
    "numbagrad.nn.utils",
    "numbagrad.nn.utils.rnn",
    "numbagrad.nn.utils.parametrize",
    "numbagrad.nn.utils.parametrizations",
    "numbagrad.nn.parallel",
    "numbagrad.optim",
    "numbagrad.optim.lr_scheduler",
    "numbagrad.optim.swa_utils",
    "numbagrad.linalg",
    "numbagrad.fft",
    "numbagrad.special",
    "numbagrad.distributed",
    "numbagrad.hub",
    "numbagrad.utils.checkpoint",
    "numbagrad.utils.data",
    "numbagrad.utils.data.dataloader",
    "numbagrad.utils.data.dataset",
    "numbagrad.utils.data.distributed",
    "numbagrad.utils.data.sampler",
    "numbagrad.utils.model_zoo",
    "numbagrad.distributions",
    "numbagrad.distributions.bernoulli",
    "numbagrad.distributions.beta",
    "numbagrad.distributions.binomial",
    "numbagrad.distributions.categorical",
    "numbagrad.distributions.cauchy",
    "numbagrad.distributions.chi2",
    "numbagrad.distributions.constraint_registry",
    "numbagrad.distributions.constraints",
    "numbagrad.distributions.continuous_bernoulli",
    "numbagrad.distributions.dirichlet",
    "numbagrad.distributions.distribution",
    "numbagrad.distributions.exp_family",
    "numbagrad.distributions.exponential",
    "numbagrad.distributions.fishersnedecor",
    "numbagrad.distributions.gamma",
    "numbagrad.distributions.generalized_pareto",
    "numbagrad.distributions.geometric",
    "numbagrad.distributions.gumbel",
    "numbagrad.distributions.half_cauchy",
    "numbagrad.distributions.half_normal",
    "numbagrad.distributions.independent",
    "numbagrad.distributions.inverse_gamma",
    "numbagrad.distributions.kl",
    "numbagrad.distributions.kumaraswamy",
    "numbagrad.distributions.kumaraswamy",
    "numbagrad.distributions.laplace",
    "numbagrad.distributions.lkj_cholesky",
    "numbagrad.distributions.log_normal",
    "numbagrad.distributions.logistic_normal",
    "numbagrad.distributions.lowrank_multivariate_normal",
    "numbagrad.distributions.mixture_same_family",
    "numbagrad.distributions.multinomial",
    "numbagrad.distributions.multivariate_normal",
    "numbagrad.distributions.negative_binomial",
    "numbagrad.distributions.normal",
    "numbagrad.distributions.one_hot_categorical",
    "numbagrad.distributions.pareto",
    "numbagrad.distributions.poisson",
    "numbagrad.distributions.relaxed_bernoulli",
    "numbagrad.distributions.relaxed_categorical",
    "numbagrad.distributions.studentT",
    "numbagrad.distributions.transformed_distribution",
    "numbagrad.distributions.transforms",
    "numbagrad.distributions.uniform",
    "numbagrad.distributions.utils",
    "numbagrad.distributions.von_mises",
    "numbagrad.distributions.weibull",
    "numbagrad.distributions.wishart",
    "numbagrad.backends.cudnn",
    "numbagrad.backends.mps",
    "numbagrad.cuda",
    "numbagrad.accelerator",
    "numbagrad.functional",
    "numbagrad.testing",
    "numbagrad.profiler",
    "numbagrad.compiler",
    "numbagrad.library",
    "numbagrad.autograd.profiler",
]

_DIRECTIVE = re.compile(
    r"^\.\. (auto(?:function|class|data|method|attribute|exception|module)|"
    r"(?:py:)?(?:data|function|class|currentmodule|module))::\s*(\S+)",
    re.M,
)
_CONTINUATION = re.compile(r"^ {10}(\S+)\s*$")  # further names of a ``.. data::`` block
_AUTOSUMMARY = re.compile(r"^\.\. autosummary::\s*$")


def _pages():
    for page in sorted(DOCS.rglob("*.rst")):
        if {"_build", "auto_examples", "generated", "_templates"} & set(page.parts):
            continue
        yield page


def _autosummary_entries(lines, i):
    """(has_toctree, entries) of the ``.. autosummary::`` table starting at line i: its
    entries as written (a leading ``~`` removed), up to the end of the indented block."""
    toctree = False
    entries = []
    for line in lines[i + 1 :]:
        if line.strip() and not line.startswith("   "):
            break
        text = line.strip()
        if not text:
            continue
        if text.startswith(":"):
            toctree = toctree or text.startswith(":toctree:")
            continue
        entries.append(text.lstrip("~").split()[0])
    return toctree, entries


def _documented_names():
    names = set()
    for page in _pages():
        lines = page.read_text().splitlines()
        module = "numbagrad"
        for i, line in enumerate(lines):
            if _AUTOSUMMARY.match(line):
                toctree, entries = _autosummary_entries(lines, i)
                if toctree:  # a table without :toctree: only links to entries elsewhere
                    names.update(
                        e if e.startswith("numbagrad.") else f"{module}.{e}" for e in entries
                    )
                continue
            m = _DIRECTIVE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            kind = kind.removeprefix("py:")
            if kind in ("currentmodule", "module"):
                module = target
                continue
            full = target if target.startswith("numbagrad") else f"{module}.{target}"
            if kind == "automodule":
                members = _members_option(lines, i)
                if members is None:
                    names.add(full)
                    continue
                mod = importlib.import_module(full)
                if not members:  # ``:members:`` alone: everything public
                    members = getattr(
                        mod, "__all__", [n for n in vars(mod) if not n.startswith("_")]
                    )
                names.update(f"{full}.{n}" for n in members)
                continue
            names.add(full)
            if kind == "data":
                for follow in lines[i + 1 :]:
                    c = _CONTINUATION.match(follow)
                    if not c:
                        break
                    names.add(f"{module}.{c.group(1)}")
    return names


def _members_option(lines, i):
    """The names of an automodule's ``:members:`` option (continued lines included); None
    when the option is absent."""
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if not line.startswith("   ") or not line.strip():
            return None
        if line.strip().startswith(":members:"):
            text = line.strip()[len(":members:") :]
            k = j + 1
            while k < len(lines) and lines[k].startswith("             "):
                text += " " + lines[k].strip()
                k += 1
            return [n.strip() for n in text.split(",") if n.strip()]
    return None


def _resolve(full):
    module, _, attr = full.rpartition(".")
    while module:
        try:
            obj = importlib.import_module(module)
        except ImportError:
            module, _, head = module.rpartition(".")
            attr = f"{head}.{attr}"
            continue
        for part in attr.split("."):
            obj = getattr(obj, part, None)
        return obj
    return None


def _public(ns):
    mod = importlib.import_module(ns)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [
            n
            for n, v in vars(mod).items()
            if not n.startswith("_") and getattr(v, "__module__", "").startswith("numbagrad")
        ]
    return [(n, getattr(mod, n)) for n in names if not inspect.ismodule(getattr(mod, n, None))]


# Modules that hold the implementation (and any module with a private part in its name):
# their public names are re-exported by the namespaces above (numbagrad.optim.adam.Adam is
# numbagrad.optim.Adam), or they only gather submodules (numbagrad.utils, .backends).
_INTERNAL = re.compile(
    r"numbagrad\.(_|kernels\b|ops\b|serialization$|backends$|utils$|warmup$|(\w+\.)*conftest$"
    r"|autograd\.(engine|function|grad_mode|anomaly_mode|variable)$"
    r"|nn\.(modules\b|parameter$|parallel\.distributed$)"
    r"|optim\.(adadelta|adagrad|adam|adamax|adamw|asgd|lbfgs|nadam|optimizer|radam|rmsprop"
    r"|rprop|sgd)$)"
)


def _reachable_modules(module, seen):
    for value in vars(module).values():
        if (
            inspect.ismodule(value)
            and value.__name__.startswith("numbagrad.")
            and value.__name__ not in seen
        ):
            seen.add(value.__name__)
            _reachable_modules(value, seen)
    return seen


def test_namespace_list_is_complete():
    """A new public namespace (numbagrad.profiler, numbagrad.utils.data, ...) is checked
    by the test below as soon as it is importable: it must be in NAMESPACES."""
    import numbagrad

    modules = _reachable_modules(numbagrad, set())
    unlisted = sorted(
        m
        for m in modules
        if m not in NAMESPACES
        and not _INTERNAL.match(m)
        and not any(part.startswith("_") for part in m.split("."))
    )
    assert not unlisted, f"add these public namespaces to NAMESPACES: {unlisted}"


def test_every_public_name_is_documented():
    documented = _documented_names()
    objects = {
        id(o)
        for o in map(_resolve, documented)
        if o is not None and (inspect.isroutine(o) or inspect.isclass(o))
    }
    missing = []
    for ns in NAMESPACES:
        try:
            public = _public(ns)
        except ImportError:
            continue
        for name, obj in public:
            if f"{ns}.{name}" in documented:
                continue
            if (inspect.isroutine(obj) or inspect.isclass(obj)) and id(obj) in objects:
                continue
            missing.append(f"{ns}.{name}")
    assert not missing, (
        f"{len(missing)} public names are not documented in docs/ (add them "
        f"to docs/api.rst or their namespace's page): {missing}"
    )


@pytest.mark.parametrize("page", sorted(str(p.relative_to(DOCS)) for p in _pages()))
def test_pages_name_only_existing_objects(page):
    """A documented name that no longer exists would make the Sphinx build fail late."""
    text = (DOCS / page).read_text().splitlines()
    module = "numbagrad"
    for i, line in enumerate(text):
        if _AUTOSUMMARY.match(line):
            for e in _autosummary_entries(text, i)[1]:
                full = e if e.startswith("numbagrad.") else f"{module}.{e}"
                assert _resolve(full) is not None, f"{page} lists {full}, which does not exist"
            continue
        m = _DIRECTIVE.match(line)
        if not m:
            continue
        kind, target = m.groups()
        kind = kind.removeprefix("py:")
        if kind in ("currentmodule", "module"):
            module = target
            continue
        if kind in ("data", "function", "class"):
            continue
        full = target if target.startswith("numbagrad") else f"{module}.{target}"
        assert _resolve(full) is not None, f"{page} documents {full}, which does not exist"


def test_no_name_is_given_two_pages():
    """Two ``:toctree:`` entries for one name write one generated page twice (Sphinx warns,
    and ``-W`` fails the build); a second mention should link (``:func:``) instead."""
    seen = {}
    for page in _pages():
        lines = page.read_text().splitlines()
        module = "numbagrad"
        for i, line in enumerate(lines):
            m = _DIRECTIVE.match(line)
            if m and m.group(1).removeprefix("py:") in ("currentmodule", "module"):
                module = m.group(2)
            if _AUTOSUMMARY.match(line):
                toctree, entries = _autosummary_entries(lines, i)
                for e in entries if toctree else ():
                    full = e if e.startswith("numbagrad.") else f"{module}.{e}"
                    where = str(page.relative_to(DOCS))
                    assert full not in seen, f"{full} has a page from {seen[full]} and {where}"
                    seen[full] = where
    assert "numbagrad.Tensor" in seen, "the autosummary tables were not found"
