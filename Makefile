# numbagrad developer commands (GNU make).
#
#   make demo    create/reuse .venv, install numbagrad, run examples/quickstart.py
#   make test    create/reuse .venv, install numbagrad[test], run the test suite
#   make docs    build the HTML docs with warnings as errors (docs/_build/html)
#   make doctest run the examples in the docs pages and in numbagrad's docstrings
#   make bench   run the asv benchmarks against .venv and record them for this commit
#   make bench-quick    one fast asv pass, nothing recorded
#   make bench-smoke    check the asv suites and run the small ones once (CI)
#   make bench-compare  BASE=<rev>: benchmark BASE and HEAD, print asv compare's table
#   make bench-publish  render the recorded benchmark history as HTML (asv_bench/html)
#   make lint    ruff check, ruff format --check and mypy numbagrad (the `dev` extra, pinned)
#   make dist    build the wheel and sdist into dist/ and check them with twine --strict
#   make test-oldest  the suite against the oldest NumPy and Numba pyproject.toml allows
#   make test-notorch  the suite without PyTorch (.venv-notorch): all collects, a subset runs
#   make fuzz    differential fuzz campaign against PyTorch: make fuzz N=40000 (default 5000)
#   make clean   remove build, docs and asv outputs (keeps .venv and numba caches)
#
# Everything runs inside .venv, created with `python3 -m venv` when missing, so a fresh
# machine needs only Python 3.10+ with pip and venv. Extra pytest arguments:
#   make test PYTEST_ARGS="-x tests/test_engine.py"

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PYTEST_ARGS ?=
SPHINXOPTS ?=

# Numba's threading layer may be OpenMP; its default busy-wait policy stalled ~7 ms per
# parallel kernel call when the other core of a 2-core machine was busy (docs/developer.rst,
# design decisions, 5); passive waiting costs a few µs instead. Override on the command line.
OMP_WAIT_POLICY ?= passive
export OMP_WAIT_POLICY

# pip must never wait for input (CI has no stdin) and need not check its own version.
export PIP_NO_INPUT := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# The numba compile cache is deliberately left at its default (__pycache__ next to the
# sources, `cache=True` kernels), so the caches users and CI already have are reused.

.DEFAULT_GOAL := help
.PHONY: help venv install demo test test-oldest test-notorch docs doctest bench bench-quick \
	bench-smoke bench-compare bench-publish lint dist fuzz clean distclean

help:
	@sed -n 's/^#   make /  make /p' $(firstword $(MAKEFILE_LIST))

# --- environment -------------------------------------------------------------------------
# The interpreter is the target, so an existing .venv is reused as it is.
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip || echo "warning: could not upgrade pip; using the bundled one"

venv: $(PY)

# Stamp files record that an install step ran against the current pyproject.toml; they
# live inside .venv, so deleting .venv resets them. The install is editable, so edits to
# numbagrad/ need no reinstall. Force one with `make install`.
$(VENV)/.installed-%: pyproject.toml | $(PY)
	$(PIP) install -q -e ".[$*]"
	@touch $@

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -q -e .
	@touch $@

install: | $(PY)
	$(PIP) install -q -e ".[test]"
	@touch $(VENV)/.installed $(VENV)/.installed-test

# --- the two commands --------------------------------------------------------------------
demo: venv $(VENV)/.installed
	$(PY) examples/quickstart.py

# The suite in tests/ plus the `>>>` examples of the docs pages and public docstrings.
DOCTEST_ARGS := --doctest-glob='*.rst' --doctest-modules --ignore=docs/conf.py \
	--ignore=docs/_build --ignore=docs/auto_examples \
	--ignore=docs/generated

test: venv $(VENV)/.installed-test
	$(PY) -m pytest -q tests docs numbagrad $(DOCTEST_ARGS) $(PYTEST_ARGS)

# The floors in pyproject.toml's dependencies, installed exactly, in a venv of their own
# (with its own Numba cache, so the two environments do not recompile each other's
# kernels). PyTorch is not installed there: its comparisons skip.
OLDEST_DEPS := numpy==2.1.0 numba==0.61.0
OLDEST := .venv-oldest

test-oldest:
	test -x $(OLDEST)/bin/python || $(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install -q $(OLDEST_DEPS) "pytest>=7" "hypothesis>=6.80" \
		"mypy>=1.8"
	$(OLDEST)/bin/python -m pip install -q --no-deps -e .
	$(OLDEST)/bin/python -c "import numpy, numba; print('numpy', numpy.__version__, \
		'numba', numba.__version__)"
	NUMBA_CACHE_DIR=$(abspath $(OLDEST))/numba-cache $(OLDEST)/bin/python -m pytest -q \
		-p no:cacheprovider tests $(PYTEST_ARGS)

# A fresh machine has no PyTorch: there `make test` must still pass, the comparisons
# against it skipping. This checks that path in a venv of its own without torch: everything
# `make test` collects must collect (a module importing torch unguarded is a collection
# error), and a fast subset that needs no oracle, with the doctests, must pass (about 20 s
# on 2 cores, warm numba cache or cold, after about 30 s creating the venv on first use;
# NOTORCH_TESTS=tests runs the whole suite, 2 to 3.5 minutes). The numba cache is the
# default one, shared with .venv: both install the same numba, so the kernels compiled here
# are not compiled again by `make test`.
NOTORCH := .venv-notorch
NOTORCH_TESTS ?= tests/test_tensor.py tests/test_engine.py tests/test_function.py \
	tests/test_reference_examples.py

$(NOTORCH)/.installed-test: pyproject.toml
	test -x $(NOTORCH)/bin/python || $(PYTHON) -m venv $(NOTORCH)
	$(NOTORCH)/bin/python -m pip install -q -e ".[test]"
	@touch $@

test-notorch: $(NOTORCH)/.installed-test
	@if $(NOTORCH)/bin/python -c "import torch" 2>/dev/null; then echo "$(NOTORCH) has" \
		"PyTorch; this target checks the suite without it: rm -rf $(NOTORCH)" >&2; exit 1; fi
	$(NOTORCH)/bin/python -m pytest --collect-only -q -p no:cacheprovider \
		tests docs numbagrad $(DOCTEST_ARGS) >$(NOTORCH)/collect.log 2>&1 \
		|| { grep -v '::' $(NOTORCH)/collect.log; exit 1; }
	@tail -n 1 $(NOTORCH)/collect.log
	$(NOTORCH)/bin/python -m pytest -q -p no:cacheprovider $(NOTORCH_TESTS) docs numbagrad \
		$(DOCTEST_ARGS) $(PYTEST_ARGS)

# --- docs, benchmarks, lint --------------------------------------------------------------
docs: venv $(VENV)/.installed-docs
	$(PY) -m sphinx -W --keep-going -b html $(SPHINXOPTS) docs docs/_build/html
	@echo "docs built: docs/_build/html/index.html"

# The `>>>` examples of the docs pages and of the public docstrings, run as doctests.
doctest: venv $(VENV)/.installed-test
	$(PY) -m pytest -q $(DOCTEST_ARGS) docs numbagrad $(PYTEST_ARGS)

# Benchmarks run the .venv interpreter with numbagrad as installed there (and PyTorch, when
# present, in the same run). `bench` records the results under the current commit's hash in
# asv_bench/results (an uncommitted change is recorded as HEAD: commit first to keep history
# honest); `bench-compare` measures BASE from a temporary git worktree through the same
# interpreter (ASV_PYTHONPATH puts that tree first) and then HEAD, and prints the table
# `asv compare` makes; `bench-publish` renders every recorded result as a static site.
# BENCH_ARGS passes options to `asv run`, e.g. BENCH_ARGS="-b Ratios" for one suite.
ASV = $(abspath $(VENV))/bin/asv
BASE ?= HEAD~1
BENCH_ARGS ?=
BENCH_BASE_TREE := $(abspath build/bench-base)

bench: venv $(VENV)/.installed-bench
	cd asv_bench && $(ASV) machine --yes \
		&& $(ASV) run --python=same --set-commit-hash $$(git rev-parse HEAD) --show-stderr \
		$(BENCH_ARGS)

# one fast pass (`asv run --quick`): nothing is saved, and figures at small sizes are rough
bench-quick: venv $(VENV)/.installed-bench
	cd asv_bench && $(ASV) machine --yes \
		&& $(ASV) run --python=same --quick --show-stderr $(BENCH_ARGS)

# CI's smoke run: the small and medium suites once each, nothing recorded; a benchmark that
# raises fails it (asv exits 2), so the suite cannot rot unnoticed
BENCH_SMOKE ?= bench_(eager|function|optim|ratios|transforms)

bench-smoke: venv $(VENV)/.installed-bench
	cd asv_bench && $(ASV) machine --yes >/dev/null \
		&& $(ASV) check --python=same \
		&& $(ASV) run --python=same --quick --dry-run --show-stderr -b '$(BENCH_SMOKE)'

bench-compare: venv $(VENV)/.installed-bench
	rm -rf $(BENCH_BASE_TREE) && git worktree prune
	git worktree add --detach $(BENCH_BASE_TREE) $(BASE)
	cd asv_bench && $(ASV) machine --yes \
		&& ASV_PYTHONPATH=$(BENCH_BASE_TREE) $(ASV) run --python=same \
			--set-commit-hash $$(git rev-parse $(BASE)) $(BENCH_ARGS); \
		status=$$?; git worktree remove --force $(BENCH_BASE_TREE); test $$status -le 2
	cd asv_bench && $(ASV) run --python=same --set-commit-hash $$(git rev-parse HEAD) \
		$(BENCH_ARGS) || test $$? -le 2
	cd asv_bench && $(ASV) compare --split --factor 1.1 $$(git rev-parse $(BASE)) \
		$$(git rev-parse HEAD)

bench-publish: venv $(VENV)/.installed-bench
	cd asv_bench && $(ASV) publish
	@echo "dashboard: asv_bench/html/index.html; serve it with" \
		"python3 -m http.server --directory asv_bench/html --bind 127.0.0.1 8080"

# ruff is pinned so that a new release's rules cannot turn CI red on an unchanged tree
RUFF_VERSION ?= 0.17.6

$(VENV)/bin/ruff: | $(PY)
	$(PIP) install -q ruff==$(RUFF_VERSION)

# mypy too (the `dev` extra of pyproject.toml, pinned like ruff), at the strictness
# [tool.mypy] states: the code, and the generated stubs against it, type-check
lint: $(VENV)/bin/ruff $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m mypy

# the wheel and the sdist, built as `pip install` would build them, checked by twine --strict
# (metadata and the README rendering PyPI would show)
dist: venv
	$(PIP) install -q build twine
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# --- differential fuzzing ----------------------------------------------------------------
# N random programs (seeds FUZZ_SEED..) run under numbagrad and PyTorch 2.13 in worker
# batches, with a progress line; the report goes to tests/fuzz/report.json and report.txt
# (docs/guide/deviations.rst). FUZZ_ARGS passes more options: FUZZ_ARGS="--jobs 4".
N ?= 5000
FUZZ_SEED ?= 0
FUZZ_ARGS ?=

fuzz: venv $(VENV)/.installed-test
	@$(PY) -c "import torch" 2>/dev/null || { echo "make fuzz needs PyTorch in $(VENV):" \
		"$(PIP) install torch==2.13.0" >&2; exit 1; }
	$(PY) tests/fuzz/fuzz_campaign.py -n $(N) --seed $(FUZZ_SEED) $(FUZZ_ARGS)

# --- cleaning ----------------------------------------------------------------------------
# `clean` keeps __pycache__: numba stores its compiled kernels there, and a cold cache
# costs seconds of compilation on the next run. `distclean` removes those too.
clean:
	rm -rf build dist *.egg-info .pytest_cache
	rm -rf docs/_build docs/auto_examples docs/gen_modules docs/generated
	rm -rf asv_bench/env asv_bench/html

distclean: clean
	rm -rf $(VENV) .hypothesis asv_bench/results
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
