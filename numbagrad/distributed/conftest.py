"""Doctests of numbagrad.distributed need mpi4py: skip them, saying so, where it is missing."""

import importlib.util

import pytest


@pytest.fixture(autouse=True)
def _needs_mpi4py():
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("numbagrad.distributed examples need mpi4py (pip install mpi4py mpich)")
