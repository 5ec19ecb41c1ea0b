"""Shared pytest configuration: Hypothesis profile, seeding, small fixtures."""

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
