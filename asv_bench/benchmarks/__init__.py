"""asv benchmarks for numbagrad, measured side by side with NumPy-by-hand and PyTorch.

Every workload class takes a ``backend`` parameter (``'numbagrad'``, ``'numpy'``,
``'torch'``) so that one ``asv run`` yields the ratios the issues ask for. Backends that
cannot be imported are skipped (``NotImplementedError`` in ``setup``, asv's convention).
``asv_bench/run_ratios.py`` runs the same classes without asv and prints the ratio table.
"""
