"""The scripts here are programs, not test modules: ``tests/test_scripts.py`` runs each in a
subprocess. Importing them (``pytest --doctest-modules`` imports every module) would run
their top-level code, ``torch.set_default_dtype(torch.float64)`` included, inside the test
process and change what every later torch comparison sees."""

collect_ignore_glob = ["*.py"]
