"""Shared pytest configuration: Hypothesis profile, seeding, small fixtures, and the one
line that says how to get the PyTorch oracle when it is missing."""

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# First calls of an op compile its kernels: no per-example deadline. A small example count
# keeps the whole suite inside its time budget on a 2-core machine.
settings.register_profile(
    "ci", deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _seed_numpy():
    """Seed NumPy's global generator before every test so failures reproduce."""
    np.random.seed(0)  # noqa: NPY002 (tests or examples may use the legacy global API)


@pytest.fixture
def rng():
    """A fresh, seeded NumPy generator."""
    return np.random.default_rng(0)


@pytest.fixture
def restore_default_dtype():
    """Restore numbagrad's default dtype after a test that changes it."""
    import numbagrad

    old = numbagrad.get_default_dtype()
    yield
    numbagrad.set_default_dtype(old)


# PyTorch is only the oracle of the differential tests: without it they skip (each module
# or test with its own reason), and the run says once, in its header and at the end of its
# summary, how to get the full suite.
HAVE_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH_HINT = (
    "PyTorch is not installed: the comparisons against it skip; for the full suite run "
    "`.venv/bin/pip install torch==2.13.0`, then `make test`"
)


def pytest_report_header(config):
    return None if HAVE_TORCH else NO_TORCH_HINT


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    # outside the terminal reporter's own wrapper, so the line comes after the short test
    # summary (the skip reasons), just above the final counts
    result = yield
    if not HAVE_TORCH:
        terminalreporter.write_sep("-", NO_TORCH_HINT, yellow=True)
    return result
